//! Circuits for the Groth16 tests: bellperson's own gadgets (SHA-256, Blake2s) and small circuits made for
//! the prover's edge cases. Each synthesizes with its witness (`Some`) or without (`None`: parameter
//! generation). The benchmark circuits (SHA-256 chains, x⁵ rounds) are the library's own
//! (`zkgpu::groth16::circuits`).
use bellperson::gadgets::boolean::{AllocatedBit, Boolean};
use bellperson::gadgets::num::AllocatedNum;
use bellperson::gadgets::{blake2s::blake2s, multipack};
use bellperson::groth16::{self, Parameters};
use bellperson::{Circuit, ConstraintSystem, Index, SynthesisError, Variable};
use blstrs::{Bls12, Scalar};
use ff::Field;
use rand_core::RngCore;

fn missing<T>() -> Result<T, SynthesisError> {
    Err(SynthesisError::AssignmentMissing)
}

/// Blake2s of `bytes` bytes, the digest packed into public inputs.
#[derive(Clone)]
pub struct Blake2sHash {
    pub bytes: usize,
    pub data: Option<Vec<bool>>,
}

impl Blake2sHash {
    pub fn random(bytes: usize, rng: &mut impl RngCore) -> Self {
        Blake2sHash { bytes, data: Some((0..bytes * 8).map(|_| rng.next_u32() & 1 == 1).collect()) }
    }
}

impl Circuit<Scalar> for Blake2sHash {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let bits = (0..self.bytes * 8)
            .map(|i| {
                let bit = self.data.as_ref().map(|d| d[i]);
                Ok(Boolean::from(AllocatedBit::alloc(cs.namespace(|| format!("bit {i}")), bit)?))
            })
            .collect::<Result<Vec<_>, SynthesisError>>()?;
        let digest = blake2s(cs.namespace(|| "blake2s"), &bits, b"zkgpu-t0")?;
        multipack::pack_into_inputs(cs.namespace(|| "pack"), &digest)
    }
}

/// `inputs` public inputs `yᵢ` and one aux `w`: `zᵢ = yᵢ·w` for every input (inputs in A only), plus
/// `y₀·y₁ = v` (y₁ in B): B's input density is partial. 328 is Filecoin PoRep's input count.
#[derive(Clone)]
pub struct ManyInputs {
    pub ys: Vec<Option<Scalar>>,
    pub w: Option<Scalar>,
}

impl ManyInputs {
    pub fn random(inputs: usize, rng: &mut impl RngCore) -> Self {
        ManyInputs {
            ys: (0..inputs).map(|_| Some(Scalar::random(&mut *rng))).collect(),
            w: Some(Scalar::random(&mut *rng)),
        }
    }
    pub fn blank(inputs: usize) -> Self {
        ManyInputs { ys: vec![None; inputs], w: None }
    }
}

impl Circuit<Scalar> for ManyInputs {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let w = AllocatedNum::alloc(cs.namespace(|| "w"), || self.w.map_or_else(missing, Ok))?;
        let ys = self
            .ys
            .iter()
            .enumerate()
            .map(|(i, y)| AllocatedNum::alloc_input(cs.namespace(|| format!("y{i}")), || y.map_or_else(missing, Ok)))
            .collect::<Result<Vec<_>, _>>()?;
        for (i, y) in ys.iter().enumerate() {
            y.mul(cs.namespace(|| format!("z{i}")), &w)?;
        }
        if ys.len() >= 2 {
            ys[0].mul(cs.namespace(|| "v"), &ys[1])?;
        }
        Ok(())
    }
}

/// Aux variables by the queries that use them: `both` in A and B (`v·v = sq`), `a_only` (`v·1 = v`),
/// `b_only` (`1·v = v`) and `c_only` (`1·1 = v`, so `v = 1`: in C only, no A or B density), in a shuffled
/// order: partial densities that differ between A and B unless `a_only == b_only == 0`, and empty ones when
/// only `c_only` is set. (bellperson's parameter generator rejects variables in no constraint at all.)
#[derive(Clone)]
pub struct Sparse {
    pub both: usize,
    pub a_only: usize,
    pub b_only: usize,
    pub c_only: usize,
    pub values: Option<Vec<Scalar>>,
}

impl Sparse {
    pub fn new(both: usize, a_only: usize, b_only: usize, c_only: usize, rng: &mut impl RngCore) -> Self {
        let count = both + a_only + b_only + c_only;
        Sparse { both, a_only, b_only, c_only, values: Some((0..count).map(|_| Scalar::random(&mut *rng)).collect()) }
    }
    pub fn blank(&self) -> Self {
        Sparse { values: None, ..self.clone() }
    }
}

impl Circuit<Scalar> for Sparse {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let count = self.both + self.a_only + self.b_only + self.c_only;
        let ends = [self.both, self.both + self.a_only, self.both + self.a_only + self.b_only];
        let kind = |i: usize| ends.iter().filter(|&&end| i >= end).count();
        // Interleave the kinds, so one-sided variables sit between used ones.
        let mut order: Vec<usize> = (0..count).collect();
        order.sort_by_key(|&i| (i * 7919) % count.max(1));
        let one = CS::one();
        for (j, &i) in order.iter().enumerate() {
            let k = kind(i);
            let value = if k == 3 { Some(Scalar::ONE) } else { self.values.as_ref().map(|v| v[i]) };
            let v = cs.alloc(|| format!("v{i}"), || value.map_or_else(missing, Ok))?;
            match k {
                0 => {
                    let sq = cs.alloc(|| format!("sq{j}"), || value.map_or_else(missing, |x| Ok(x.square())))?;
                    cs.enforce(|| format!("both {j}"), |lc| lc + v, |lc| lc + v, |lc| lc + sq);
                }
                1 => cs.enforce(|| format!("a-only {j}"), |lc| lc + v, |lc| lc + one, |lc| lc + v),
                2 => cs.enforce(|| format!("b-only {j}"), |lc| lc + one, |lc| lc + v, |lc| lc + v),
                _ => cs.enforce(|| format!("c-only {j}"), |lc| lc + one, |lc| lc + one, |lc| lc + v),
            }
        }
        Ok(())
    }
}

/// One constraint: `x·y = z` (and no public input but "one"). `wrong` makes `z` off by one: unsatisfied.
#[derive(Clone)]
pub struct OneConstraint {
    pub xy: Option<(Scalar, Scalar)>,
    pub wrong: bool,
}

impl Circuit<Scalar> for OneConstraint {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let x = cs.alloc(|| "x", || self.xy.map_or_else(missing, |v| Ok(v.0)))?;
        let y = cs.alloc(|| "y", || self.xy.map_or_else(missing, |v| Ok(v.1)))?;
        let wrong = if self.wrong { Scalar::ONE } else { Scalar::ZERO };
        let z = cs.alloc(|| "z", || self.xy.map_or_else(missing, |v| Ok(v.0 * v.1 + wrong)))?;
        cs.enforce(|| "x*y=z", |lc| lc + x, |lc| lc + y, |lc| lc + z);
        Ok(())
    }
}

/// No constraint and no variable: the domain is 1 (only "one"'s input constraint).
#[derive(Clone)]
pub struct Empty;

impl Circuit<Scalar> for Empty {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, _: &mut CS) -> Result<(), SynthesisError> {
        Ok(())
    }
}

/// A constraint that names an aux variable that was never allocated.
#[derive(Clone)]
pub struct BadVariable;

impl Circuit<Scalar> for BadVariable {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let x = cs.alloc(|| "x", || Ok(Scalar::ONE))?;
        let ghost = Variable::new_unchecked(Index::Aux(1000));
        cs.enforce(|| "ghost", |lc| lc + x, |lc| lc + ghost, |lc| lc + x);
        Ok(())
    }
}

/// The public inputs of a test circuit (independent of the prover's synthesis).
pub fn public_inputs<C: Circuit<Scalar>>(circuit: C) -> Vec<Scalar> {
    zkgpu::groth16::circuits::public_inputs(circuit).expect("the test circuit synthesizes")
}

/// Random parameters for `blank` (its witness-free form).
pub fn parameters<C: Circuit<Scalar>>(blank: C, rng: &mut impl RngCore) -> Parameters<Bls12> {
    groth16::generate_random_parameters::<Bls12, _, _>(blank, rng).expect("parameter generation")
}

/// `params` written with bellperson's `Parameters::write` into a fresh temporary folder `zkgpu-<name>-<pid>`:
/// (the folder, for the caller to remove, and the file).
pub fn parameter_file(params: &Parameters<Bls12>, name: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let dir = std::env::temp_dir().join(format!("zkgpu-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("params.bin");
    params.write(std::io::BufWriter::new(std::fs::File::create(&path).expect("create"))).expect("write params");
    (dir, path)
}
