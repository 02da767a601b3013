//! Groth16 without a GPU (CI): zkgpu's synthesis and CPU reference prover against bellperson's own prover.
//! Proofs must be byte-identical to `bellperson::groth16::create_proof` with the same `r`, `s`, verify, and
//! fail to verify with a wrong public input; synthesis must record what bellperson's evaluation gives.
mod common;

use bellperson::groth16::{self, Parameters, Proof, prepare_verifying_key, verify_proof};
use bellperson::{Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::{Bls12, Scalar};
use common::circuits::{
    BadVariable, Blake2sHash, Empty, ManyInputs, OneConstraint, Sparse, parameter_file, parameters, public_inputs,
};
use common::seeded_rng;
use ff::Field;
use rand_chacha::ChaCha20Rng;
use rand_core::RngCore;
use zkgpu::Error;
use zkgpu::groth16::circuits::{PowerRounds, Sha256Chain};
use zkgpu::groth16::{ProvingKey, prove_cpu, synthesize};

fn proof_bytes(p: &Proof<Bls12>) -> Vec<u8> {
    let mut out = Vec::new();
    p.write(&mut out).expect("writing to a Vec");
    out
}

/// zkgpu's CPU proof equals bellperson's byte for byte, verifies, and a changed public input fails.
fn check_against_bellperson<C: Circuit<Scalar> + Clone + Send>(
    name: &str,
    circuit: C,
    params: &Parameters<Bls12>,
    rng: &mut ChaCha20Rng,
) {
    let key = ProvingKey::from_parameters(params).expect("key");
    let (r, s) = (Scalar::random(&mut *rng), Scalar::random(&mut *rng));
    let ours = prove_cpu(&key, circuit.clone(), r, s).unwrap_or_else(|e| panic!("{name}: {e}"));
    let theirs = groth16::create_proof(circuit.clone(), params, r, s).expect("bellperson proves");
    assert_eq!(proof_bytes(&ours), proof_bytes(&theirs), "{name}: proof differs from bellperson's");
    let pvk = prepare_verifying_key(&params.vk);
    let inputs = public_inputs(circuit);
    assert!(verify_proof(&pvk, &ours, &inputs).expect("verify"), "{name}: proof does not verify");
    if let Some(first) = inputs.first() {
        let mut wrong = inputs.clone();
        wrong[0] = *first + Scalar::ONE;
        assert!(!verify_proof(&pvk, &ours, &wrong).expect("verify"), "{name}: a wrong public input verifies");
    }
}

#[test]
fn sha256_one_block_matches_bellperson() {
    let mut rng = seeded_rng("sha256_one_block_matches_bellperson");
    let params = parameters(Sha256Chain { blocks: 1, data: None }, &mut rng);
    let circuit = Sha256Chain::random(1, &mut rng);
    check_against_bellperson("sha256 x1", circuit, &params, &mut rng);
}

#[test]
fn sha256_two_blocks_matches_bellperson() {
    let mut rng = seeded_rng("sha256_two_blocks_matches_bellperson");
    let params = parameters(Sha256Chain { blocks: 2, data: None }, &mut rng);
    let circuit = Sha256Chain::random(2, &mut rng);
    check_against_bellperson("sha256 x2", circuit, &params, &mut rng);
}

#[test]
fn blake2s_matches_bellperson() {
    let mut rng = seeded_rng("blake2s_matches_bellperson");
    let params = parameters(Blake2sHash { bytes: 64, data: None }, &mut rng);
    let circuit = Blake2sHash::random(64, &mut rng);
    check_against_bellperson("blake2s 64 bytes", circuit, &params, &mut rng);
}

#[test]
fn dense_power_rounds_match_bellperson() {
    let mut rng = seeded_rng("dense_power_rounds_match_bellperson");
    let circuit = PowerRounds::random(3000, &mut rng);
    let params = parameters(circuit.blank(), &mut rng);
    check_against_bellperson("x^5 rounds", circuit, &params, &mut rng);
}

#[test]
fn porep_input_count_matches_bellperson() {
    let mut rng = seeded_rng("porep_input_count_matches_bellperson");
    let params = parameters(ManyInputs::blank(328), &mut rng);
    let circuit = ManyInputs::random(328, &mut rng);
    check_against_bellperson("328 public inputs", circuit, &params, &mut rng);
}

#[test]
fn sparse_densities_match_bellperson() {
    let mut rng = seeded_rng("sparse_densities_match_bellperson");
    // A and B densities partial and different; A and B equal and partial; empty; each kind alone.
    for (both, a_only, b_only, c_only) in
        [(40, 13, 17, 9), (40, 0, 0, 9), (0, 5, 0, 0), (0, 0, 5, 3), (0, 0, 0, 4), (3, 0, 0, 0)]
    {
        let circuit = Sparse::new(both, a_only, b_only, c_only, &mut rng);
        let params = parameters(circuit.blank(), &mut rng);
        let name = format!("sparse both {both} a {a_only} b {b_only} c {c_only}");
        check_against_bellperson(&name, circuit, &params, &mut rng);
    }
}

#[test]
fn one_constraint_and_empty_circuits_match_bellperson() {
    let mut rng = seeded_rng("one_constraint_and_empty_circuits_match_bellperson");
    let params = parameters(OneConstraint { xy: None, wrong: false }, &mut rng);
    let circuit = OneConstraint { xy: Some((Scalar::random(&mut rng), Scalar::random(&mut rng))), wrong: false };
    check_against_bellperson("one constraint", circuit, &params, &mut rng);
    let params = parameters(Empty, &mut rng);
    assert_eq!(params.h.len() + 1, 1, "an empty circuit has a domain of 1");
    check_against_bellperson("empty", Empty, &params, &mut rng);
}

#[test]
fn key_read_from_a_parameter_file_proves_the_same() {
    let mut rng = seeded_rng("key_read_from_a_parameter_file_proves_the_same");
    let circuit = PowerRounds::random(200, &mut rng);
    let params = parameters(circuit.blank(), &mut rng);
    let (dir, path) = parameter_file(&params, "groth16");
    let (r, s) = (Scalar::random(&mut rng), Scalar::random(&mut rng));
    let from_memory =
        prove_cpu(&ProvingKey::from_parameters(&params).expect("key"), circuit.clone(), r, s).expect("prove");
    for checked in [false, true] {
        let key = ProvingKey::read(&path, checked).expect("read key");
        assert_eq!(proof_bytes(&prove_cpu(&key, circuit.clone(), r, s).expect("prove")), proof_bytes(&from_memory));
    }
    // A truncated file and a missing one are typed errors.
    let bytes = std::fs::read(&path).expect("read back");
    std::fs::write(&path, &bytes[..bytes.len() / 2]).expect("truncate");
    assert!(matches!(ProvingKey::read(&path, false), Err(Error::InvalidKey(_))));
    std::fs::remove_dir_all(&dir).ok();
    assert!(matches!(ProvingKey::read(dir.join("missing.bin"), false), Err(Error::InvalidKey(_))));
}

/// A parameter file of `h_len` H points and a few points in every other query (multiples of the generators:
/// any valid points will do, the reader does not know which circuit they belong to), written by bellperson.
fn synthetic_parameter_file(path: &std::path::Path, h_len: usize, rng: &mut ChaCha20Rng) -> Parameters<Bls12> {
    use group::{Curve, Group};
    fn points<G: Group + Curve>(len: usize, step: G) -> Vec<G::AffineRepr>
    where
        G::AffineRepr: Default + Copy,
    {
        let mut proj = Vec::with_capacity(len);
        let mut p = step;
        for _ in 0..len {
            proj.push(p);
            p += step;
        }
        let mut affine = vec![G::AffineRepr::default(); len];
        G::batch_normalize(&proj, &mut affine);
        affine
    }
    let vk = parameters(OneConstraint { xy: None, wrong: false }, rng).vk;
    let g1 = blstrs::G1Projective::generator() * Scalar::random(&mut *rng);
    let g2 = blstrs::G2Projective::generator() * Scalar::random(&mut *rng);
    let params = Parameters {
        vk,
        h: std::sync::Arc::new(points(h_len, g1)),
        l: std::sync::Arc::new(points(300, g1.double())),
        a: std::sync::Arc::new(points(301, g1 + g1.double())),
        b_g1: std::sync::Arc::new(points(299, g1.double().double())),
        b_g2: std::sync::Arc::new(points(299, g2)),
    };
    params.write(std::io::BufWriter::new(std::fs::File::create(path).expect("create"))).expect("write params");
    params
}

/// The parallel reader accepts what bellperson's `Parameters::read` accepts, with the same points, and
/// rejects what it rejects: on an intact file, on files with random bytes changed, on truncations, and on a
/// length prefix past the end. A file with several bad points reports the first in file order.
#[test]
fn key_reader_agrees_with_bellperson_on_intact_and_damaged_files() {
    let mut rng = seeded_rng("key_reader_agrees_with_bellperson_on_intact_and_damaged_files");
    let dir = std::env::temp_dir().join(format!("zkgpu-key-reader-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("params.bin");
    // 2^15 − 1 H points: more than one of the reader's chunks, so chunks are decoded in parallel.
    let params = synthetic_parameter_file(&path, (1 << 15) - 1, &mut rng);
    let intact = std::fs::read(&path).expect("read back");
    let theirs = |bytes: &[u8], checked: bool| Parameters::<Bls12>::read(bytes, checked);
    for checked in [false, true] {
        let key = ProvingKey::read(&path, checked).expect("an intact file reads");
        assert!(key.to_parameters() == params, "the points read differ from those written (checked {checked})");
    }

    // Random damage: where bellperson rejects, zkgpu must too; where zkgpu accepts, bellperson must have
    // accepted the same points (zkgpu may reject more: it also checks the domain and δ).
    let damaged = dir.join("damaged.bin");
    let mut rejected = 0;
    for round in 0..40 {
        let mut bytes = intact.clone();
        let at = (rng.next_u64() % bytes.len() as u64) as usize;
        bytes[at] ^= 1 << (rng.next_u32() % 8);
        std::fs::write(&damaged, &bytes).expect("write damaged");
        let checked = round % 4 == 0;
        let (ours, theirs) = (ProvingKey::read(&damaged, checked), theirs(&bytes, checked));
        match (&ours, &theirs) {
            (Ok(key), Ok(p)) => assert!(key.to_parameters() == *p, "byte {at}: accepted with other points"),
            (Ok(_), Err(e)) => panic!("byte {at}: bellperson rejects ({e}) but zkgpu accepts"),
            (Err(Error::InvalidKey(_)), _) => rejected += 1,
            (Err(e), _) => panic!("byte {at}: not an InvalidKey error: {e}"),
        }
    }
    println!("{rejected} of 40 damaged files rejected");

    // Truncated anywhere (inside the verifying key, a length prefix, a point): rejected.
    for cut in [10, 900, intact.len() / 3, intact.len() - 200, intact.len() - 1] {
        std::fs::write(&damaged, &intact[..cut]).expect("truncate");
        assert!(theirs(&intact[..cut], false).is_err());
        assert!(matches!(ProvingKey::read(&damaged, false), Err(Error::InvalidKey(_))), "cut at {cut}");
    }

    // A length prefix far past the end is refused before any memory is taken for it.
    let h_len_at = 3 * 96 + 3 * 192 + 4 + 96 * params.vk.ic.len();
    let mut bytes = intact.clone();
    bytes[h_len_at..h_len_at + 4].copy_from_slice(&u32::MAX.to_be_bytes());
    std::fs::write(&damaged, &bytes).expect("write");
    match ProvingKey::read(&damaged, false) {
        Err(Error::InvalidKey(m)) => assert!(m.contains("truncated"), "{m}"),
        other => panic!("a length past the end: {other:?}"),
    }

    // Two bad points in different chunks (one the point at infinity): the earlier one is reported, every
    // time, whichever thread finds its own first.
    let point = |i: usize| h_len_at + 4 + 96 * i;
    let mut bytes = intact.clone();
    let (first, second) = (20_000, 30_000);
    bytes[point(second)..point(second + 1)].fill(0);
    bytes[point(second)] = 0x40; // the uncompressed encoding of the point at infinity
    bytes[point(first) + 50] ^= 0x01; // off the curve
    std::fs::write(&damaged, &bytes).expect("write");
    for _ in 0..3 {
        match ProvingKey::read(&damaged, false) {
            Err(Error::InvalidKey(m)) => assert!(m.contains(&format!("H query point {first}:")), "{m}"),
            other => panic!("two bad points: {other:?}"),
        }
    }
    bytes[point(first) + 50] ^= 0x01;
    std::fs::write(&damaged, &bytes).expect("write");
    match ProvingKey::read(&damaged, false) {
        Err(Error::InvalidKey(m)) => {
            assert!(m.contains(&format!("H query point {second}: the point at infinity")), "{m}")
        }
        other => panic!("the point at infinity: {other:?}"),
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_circuits_and_mismatched_keys_are_typed_errors() {
    let mut rng = seeded_rng("bad_circuits_and_mismatched_keys_are_typed_errors");
    let small = PowerRounds::random(10, &mut rng);
    let key_small = ProvingKey::from_parameters(&parameters(small.blank(), &mut rng)).expect("key");
    let big = PowerRounds::random(100, &mut rng);
    let key_big = ProvingKey::from_parameters(&parameters(big.blank(), &mut rng)).expect("key");
    let (r, s) = (Scalar::random(&mut rng), Scalar::random(&mut rng));
    // More constraints than the domain holds; fewer aux than the key expects; another input count.
    assert!(matches!(prove_cpu(&key_small, big.clone(), r, s), Err(Error::KeyMismatch(_))));
    assert!(matches!(prove_cpu(&key_big, small.clone(), r, s), Err(Error::KeyMismatch(_))));
    let key_inputs = ProvingKey::from_parameters(&parameters(ManyInputs::blank(4), &mut rng)).expect("key");
    assert!(matches!(prove_cpu(&key_inputs, ManyInputs::random(3, &mut rng), r, s), Err(Error::KeyMismatch(_))));
    // The circuit's own failure (no witness), an unallocated variable, an unsatisfied constraint.
    assert!(matches!(prove_cpu(&key_small, small.blank(), r, s), Err(Error::Synthesis(_))));
    let key_one =
        ProvingKey::from_parameters(&parameters(OneConstraint { xy: None, wrong: false }, &mut rng)).expect("key");
    assert!(matches!(prove_cpu(&key_one, BadVariable, r, s), Err(Error::Synthesis(_))));
    let wrong = OneConstraint { xy: Some((Scalar::random(&mut rng), Scalar::random(&mut rng))), wrong: true };
    match prove_cpu(&key_one, wrong, r, s) {
        Err(Error::Unsatisfied { constraint, annotation }) => {
            assert_eq!((constraint, annotation.as_str()), (0, "x*y=z"));
        }
        other => panic!("expected Unsatisfied, got {other:?}"),
    }
    // The keys still prove their own circuits.
    let pvk = prepare_verifying_key(key_small.verifying_key());
    let proof = prove_cpu(&key_small, small.clone(), r, s).expect("prove");
    assert!(verify_proof(&pvk, &proof, &public_inputs(small)).expect("verify"));
}

/// What bellperson's prover records, evaluated independently: every constraint's combinations kept and
/// evaluated with bellpepper's own `LinearCombination::eval`, densities from the combinations' terms.
#[derive(Default)]
struct Recorder {
    input: Vec<Scalar>,
    aux: Vec<Scalar>,
    constraints: Vec<[LinearCombination<Scalar>; 3]>,
}

impl ConstraintSystem<Scalar> for Recorder {
    type Root = Self;
    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux.push(f()?);
        Ok(Variable::new_unchecked(Index::Aux(self.aux.len() - 1)))
    }
    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.input.push(f()?);
        Ok(Variable::new_unchecked(Index::Input(self.input.len() - 1)))
    }
    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        let zero = LinearCombination::zero;
        self.constraints.push([a(zero()), b(zero()), c(zero())]);
    }
    fn push_namespace<NR: Into<String>, N: FnOnce() -> NR>(&mut self, _: N) {}
    fn pop_namespace(&mut self) {}
    fn get_root(&mut self) -> &mut Self {
        self
    }
}

fn used(lcs: impl Iterator<Item = (usize, bool)>, len: usize) -> Vec<bool> {
    let mut out = vec![false; len];
    for (i, nonzero) in lcs {
        out[i] |= nonzero;
    }
    out
}

fn check_synthesis<C: Circuit<Scalar> + Clone>(name: &str, circuit: C) {
    let mut rec = Recorder::default();
    rec.alloc_input(|| "one", || Ok(Scalar::ONE)).expect("one");
    circuit.clone().synthesize(&mut rec).expect("synthesizes");
    for i in 0..rec.input.len() {
        rec.enforce(|| "", |lc| lc + Variable::new_unchecked(Index::Input(i)), |lc| lc, |lc| lc);
    }
    let n = rec.constraints.len().next_power_of_two();
    let zeros = || vec![Scalar::ZERO; n];
    let w = synthesize(circuit, zeros(), zeros(), zeros()).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(w.constraints(), rec.constraints.len(), "{name}: constraints");
    assert_eq!((w.input(), w.aux()), (&rec.input[..], &rec.aux[..]), "{name}: assignments");
    for (k, v) in [w.a(), w.b(), w.c()].into_iter().enumerate() {
        let expected: Vec<Scalar> = rec
            .constraints
            .iter()
            .map(|lcs| lcs[k].eval(&rec.input, &rec.aux))
            .chain(std::iter::repeat(Scalar::ZERO))
            .take(n)
            .collect();
        assert_eq!(v[..], expected[..], "{name}: evaluations of {}", ["a", "b", "c"][k]);
    }
    let aux_terms =
        |k: usize| rec.constraints.iter().flat_map(move |c| c[k].iter_aux().map(|(i, v)| (*i, !v.is_zero_vartime())));
    let input_terms = |k: usize| {
        rec.constraints.iter().flat_map(move |c| c[k].iter_inputs().map(|(i, v)| (*i, !v.is_zero_vartime())))
    };
    let bits = |d: &zkgpu::groth16::Density| (0..d.len()).map(|i| d.contains(i)).collect::<Vec<_>>();
    assert_eq!(bits(w.a_aux_density()), used(aux_terms(0), rec.aux.len()), "{name}: A aux density");
    assert_eq!(bits(w.b_aux_density()), used(aux_terms(1), rec.aux.len()), "{name}: B aux density");
    assert_eq!(bits(w.b_input_density()), used(input_terms(1), rec.input.len()), "{name}: B input density");
}

#[test]
fn synthesis_records_what_bellperson_evaluates() {
    let mut rng = seeded_rng("synthesis_records_what_bellperson_evaluates");
    check_synthesis("sha256 x1", Sha256Chain::random(1, &mut rng));
    check_synthesis("blake2s", Blake2sHash::random(32, &mut rng));
    check_synthesis("x^5 rounds", PowerRounds::random(500, &mut rng));
    check_synthesis("328 inputs", ManyInputs::random(328, &mut rng));
    check_synthesis("sparse", Sparse::new(40, 13, 17, 9, &mut rng));
    check_synthesis(
        "one constraint",
        OneConstraint { xy: Some((Scalar::random(&mut rng), Scalar::ONE)), wrong: false },
    );
    check_synthesis("empty", Empty);
}
