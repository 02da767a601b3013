//! Groth16 proofs of bellperson circuits on the GPU (feature `bellperson`).
//!
//! A prover built on zkgpu's partition pipeline ([`crate::pipeline`]): [`synthesize`] runs a
//! `bellperson::Circuit` into the evaluation buffers (pinned, for the GPU prover), the
//! [`crate::PartitionEngine`] computes `h` and every query sum over the aux assignment on the GPU, the few
//! public inputs' terms are summed on the CPU meanwhile, and the proof is assembled with the blinding factors.
//! Proofs equal bellperson's `create_proof` with the same `r`, `s` byte for byte (the tests check it).
//!
//! - [`ProvingKey`]: bellperson's `Parameters<Bls12>`, from memory or its file format (read on every core,
//!   into the heap or pinned memory).
//! - [`Groth16Prover`]: `prove` (random `r`, `s`), `prove_with` (given), `prove_batch` (synthesis of many
//!   circuits on all cores, overlapped with the GPU), `start` / `finish` (a proof in flight while the caller
//!   synthesizes the next).
//! - [`prove_cpu`]: the CPU reference, the same computation on blstrs.
//!
//! The proof, with the query sums A (inputs and the aux A uses), B (G1 and G2, the variables B uses), L (all
//! aux) and H (`h`'s `n − 1` coefficients):
//! `A = α + ΣA + r·δ`, `B = β + ΣB + s·δ`, `C = s·ΣA + r·ΣB₁ + r·s·δ + s·α + r·β + ΣH + ΣL`
//! (`= s·A + r·B₁ − r·s·δ + ΣH + ΣL` in terms of the proof's own A and B₁).
pub mod circuits;
mod cpu;
mod key;
mod key_file;
mod prover;
mod synthesis;

use bellperson::groth16::{Proof, VerifyingKey};
use blstrs::{Bls12, G1Projective, G2Projective, Scalar};
use group::Curve as _;

pub use cpu::{prove_cpu, prove_witness_cpu};
pub use key::ProvingKey;
pub use prover::{Groth16Prover, PinnedWitness, ProofReport, ProofTicket, ProverConfig};
pub use synthesis::{Density, Witness, synthesize};

/// The query sums a proof is assembled from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct QuerySums {
    pub h: G1Projective,
    pub l: G1Projective,
    pub a: G1Projective,
    pub b_g1: G1Projective,
    pub b_g2: G2Projective,
}

/// The proof from the query sums and the blinding factors `r`, `s`.
pub(crate) fn assemble(vk: &VerifyingKey<Bls12>, q: &QuerySums, r: Scalar, s: Scalar) -> Proof<Bls12> {
    let (alpha, beta, delta) =
        (G1Projective::from(vk.alpha_g1), G1Projective::from(vk.beta_g1), G1Projective::from(vk.delta_g1));
    let g_a = delta * r + alpha + q.a;
    let g_b = G2Projective::from(vk.delta_g2) * s + G2Projective::from(vk.beta_g2) + q.b_g2;
    let g_c = q.a * s + q.b_g1 * r + delta * (r * s) + alpha * s + beta * r + q.h + q.l;
    Proof { a: g_a.to_affine(), b: g_b.to_affine(), c: g_c.to_affine() }
}
