//! Circuits for benchmarks and tests, built from bellperson's gadgets the way a bellperson user builds
//! them: SHA-256 compression chains (witnesses almost all 0 or 1: the batch-addition path) and x⁵ rounds
//! (witnesses that are neither: the MSM path). Each synthesizes with its witness or, for parameter
//! generation, without it (`None`).
use bellperson::gadgets::boolean::{AllocatedBit, Boolean};
use bellperson::gadgets::num::AllocatedNum;
use bellperson::gadgets::{multipack, sha256::sha256_compression_function, uint32::UInt32};
use bellperson::{Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;
use rand_core::RngCore;

fn missing<T>() -> Result<T, SynthesisError> {
    Err(SynthesisError::AssignmentMissing)
}

/// SHA-256 compressions chained over `blocks` blocks of 512 bits (`data`: `512·blocks` bits, fewer is
/// `AssignmentMissing`); the final state is packed into public
/// inputs (26,354 constraints for one block, +26,704 per further block, plus 3 input constraints).
#[derive(Clone)]
pub struct Sha256Chain {
    pub blocks: usize,
    pub data: Option<Vec<bool>>,
}

impl Sha256Chain {
    pub fn random(blocks: usize, rng: &mut impl RngCore) -> Self {
        Sha256Chain { blocks, data: Some((0..blocks * 512).map(|_| rng.next_u32() & 1 == 1).collect()) }
    }
}

impl Circuit<Scalar> for Sha256Chain {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        const IV: [u32; 8] =
            [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
        let mut state: Vec<UInt32> = IV.iter().map(|&v| UInt32::constant(v)).collect();
        for block in 0..self.blocks {
            let bits = (0..512)
                .map(|i| {
                    let bit = match &self.data {
                        Some(d) => Some(*d.get(block * 512 + i).ok_or(SynthesisError::AssignmentMissing)?),
                        None => None,
                    };
                    Ok(Boolean::from(AllocatedBit::alloc(cs.namespace(|| format!("block {block} bit {i}")), bit)?))
                })
                .collect::<Result<Vec<_>, SynthesisError>>()?;
            state = sha256_compression_function(cs.namespace(|| format!("compression {block}")), &bits, &state)?;
        }
        let out: Vec<Boolean> = state.into_iter().flat_map(|w| w.into_bits_be()).collect();
        multipack::pack_into_inputs(cs.namespace(|| "pack"), &out)
    }
}

/// `x ← x⁵ + cᵢ` for `rounds` rounds (4 constraints each) from a random `x`: witnesses that are neither 0
/// nor 1, so the aux assignment is almost all "tail" (the MSM path, not the batch additions). The result is
/// the public input.
#[derive(Clone)]
pub struct PowerRounds {
    pub x: Option<Scalar>,
    pub constants: Vec<Scalar>,
}

impl PowerRounds {
    pub fn random(rounds: usize, rng: &mut impl RngCore) -> Self {
        PowerRounds {
            x: Some(Scalar::random(&mut *rng)),
            constants: (0..rounds).map(|_| Scalar::random(&mut *rng)).collect(),
        }
    }
    /// The same rounds without the witness.
    pub fn blank(&self) -> Self {
        PowerRounds { x: None, constants: self.constants.clone() }
    }
}

impl Circuit<Scalar> for PowerRounds {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        let mut x = AllocatedNum::alloc(cs.namespace(|| "x"), || self.x.map_or_else(missing, Ok))?;
        for (i, c) in self.constants.iter().enumerate() {
            let x2 = x.square(cs.namespace(|| format!("round {i} x^2")))?;
            let x4 = x2.square(cs.namespace(|| format!("round {i} x^4")))?;
            let x5 = x4.mul(cs.namespace(|| format!("round {i} x^5")), &x)?;
            let next = AllocatedNum::alloc(cs.namespace(|| format!("round {i} out")), || {
                x5.get_value().map_or_else(missing, |v| Ok(v + c))
            })?;
            cs.enforce(
                || format!("round {i} add"),
                |lc| lc + x5.get_variable() + (*c, CS::one()),
                |lc| lc + CS::one(),
                |lc| lc + next.get_variable(),
            );
            x = next;
        }
        x.inputize(cs.namespace(|| "result"))
    }
}

/// The public inputs (without "one") of a circuit: what a verifier is given. Recorded by a constraint system
/// that keeps nothing else, independent of the prover's synthesis (tests and benchmarks check proofs
/// against it).
pub fn public_inputs<C: Circuit<Scalar>>(circuit: C) -> crate::Result<Vec<Scalar>> {
    struct Inputs(Vec<Scalar>, usize);
    impl ConstraintSystem<Scalar> for Inputs {
        type Root = Self;
        fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
        where
            F: FnOnce() -> Result<Scalar, SynthesisError>,
            A: FnOnce() -> AR,
            AR: Into<String>,
        {
            f()?; // gadgets keep the values their closures compute
            self.1 += 1;
            Ok(Variable::new_unchecked(Index::Aux(self.1 - 1)))
        }
        fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
        where
            F: FnOnce() -> Result<Scalar, SynthesisError>,
            A: FnOnce() -> AR,
            AR: Into<String>,
        {
            self.0.push(f()?);
            Ok(Variable::new_unchecked(Index::Input(self.0.len())))
        }
        fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, _: LA, _: LB, _: LC)
        where
            A: FnOnce() -> AR,
            AR: Into<String>,
            LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
            LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
            LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        {
        }
        fn push_namespace<NR: Into<String>, N: FnOnce() -> NR>(&mut self, _: N) {}
        fn pop_namespace(&mut self) {}
        fn get_root(&mut self) -> &mut Self {
            self
        }
    }
    let mut cs = Inputs(Vec::new(), 0);
    circuit.synthesize(&mut cs).map_err(|e| crate::Error::Synthesis(e.to_string()))?;
    Ok(cs.0)
}
