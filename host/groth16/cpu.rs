//! The CPU reference prover: the same synthesis and key handling as the GPU prover, with `h` from the CPU
//! NTT ([`crate::pipeline::cpu::h_coefficients`]) and every query sum from blstrs' `multi_exp`. Tests compare
//! it with bellperson's `create_proof` byte for byte and the GPU prover with it; a prover without a GPU can
//! use it (it is single-threaded in the NTT, so meant for small circuits).
use std::ops::DerefMut;

use bellperson::Circuit;
use bellperson::groth16::Proof;
use blstrs::{Bls12, G1Projective, G2Projective, Scalar};

use super::key::{ProvingKey, Queries};
use super::synthesis::{Witness, synthesize};
use super::{QuerySums, assemble};
use crate::curve::{G1, G2};
use crate::error::Result;
use crate::msm::cpu::msm_cpu;
use crate::pipeline::cpu::h_coefficients;

/// Proves `circuit` on the CPU with the blinding factors `r` and `s`: the proof bellperson's
/// `create_proof(circuit, params, r, s)` makes.
pub fn prove_cpu<C: Circuit<Scalar>>(key: &ProvingKey, circuit: C, r: Scalar, s: Scalar) -> Result<Proof<Bls12>> {
    let n = key.domain();
    let zeros = || vec![Scalar::from(0u64); n];
    let w = synthesize(circuit, zeros(), zeros(), zeros())?;
    prove_witness_cpu(key, &w, r, s)
}

/// [`prove_cpu`] from a synthesized witness.
pub fn prove_witness_cpu<S: DerefMut<Target = [Scalar]>>(
    key: &ProvingKey,
    w: &Witness<S>,
    r: Scalar,
    s: Scalar,
) -> Result<Proof<Bls12>> {
    let q = key.queries(w)?;
    let h = h_coefficients(&w.a, &w.b, &w.c)?;
    let (a_in, b_g1_in, b_g2_in) = input_sums(&q, w)?;
    let sums = QuerySums {
        h: msm_cpu::<G1>(q.h, &h[..q.h.len()])?,
        l: msm_cpu::<G1>(q.l, &w.aux)?,
        a: a_in + msm_cpu::<G1>(q.a_aux, &w.a_aux_density.select(&w.aux))?,
        b_g1: b_g1_in + msm_cpu::<G1>(q.b_g1_aux, &w.b_aux_density.select(&w.aux))?,
        b_g2: b_g2_in + msm_cpu::<G2>(q.b_g2_aux, &w.b_aux_density.select(&w.aux))?,
    };
    Ok(assemble(&key.vk, &sums, r, s))
}

/// The public inputs' part of the A, B_G1 and B_G2 sums (a few hundred points at most: the GPU prover also
/// computes it here, while the GPU works on the aux queries).
pub(crate) fn input_sums<S: DerefMut<Target = [Scalar]>>(
    q: &Queries<'_>,
    w: &Witness<S>,
) -> Result<(G1Projective, G1Projective, G2Projective)> {
    let b_inputs = w.b_input_density.select(&w.input);
    Ok((
        msm_cpu::<G1>(q.a_inputs, &w.input)?,
        msm_cpu::<G1>(q.b_g1_inputs, &b_inputs)?,
        msm_cpu::<G2>(q.b_g2_inputs, &b_inputs)?,
    ))
}
