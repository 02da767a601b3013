//! The host build of the kernels' field arithmetic against blstrs: every op on edge cases and seeded random
//! values, for the default path, the portable path and the PTX chains run by the host interpreter; then the
//! algebraic laws, and proptest properties per op.
mod common;

use common::field_props::{
    check_laws, check_ops_match_reference, default_op, reference_op, test_inputs, CpuEvaluator, CpuPath,
    FieldUnderTest, Op,
};
use ff::Field as _;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};
use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};
use zkgpu_kernels::field::{Fq, Fq2, Fr};

/// Random (seeded) pairs per batch on top of the edge-case cross product.
const RANDOM_PAIRS: usize = 500;

fn check_against_reference<F: FieldUnderTest>(test: &str, path: CpuPath) {
    let mut rng = common::seeded_rng(test);
    let (a, b) = test_inputs::<F>(&mut rng, RANDOM_PAIRS);
    check_ops_match_reference::<F>(&CpuEvaluator(path), &a, &b);
}

fn check_field_laws<F: FieldUnderTest>(test: &str, path: CpuPath) {
    let mut rng = common::seeded_rng(test);
    let (a, b) = test_inputs::<F>(&mut rng, 300);
    let c: Vec<F::Ref> = (0..a.len()).map(|_| F::Ref::random(&mut rng)).collect();
    check_laws::<F>(&CpuEvaluator(path), &a, &b, &c);
}

/// proptest config whose RNG seed comes from the test's printed seed.
fn proptest_config(test: &str) -> Config {
    let seed = common::seeded_rng(test).next_u64();
    Config { cases: 256, rng_seed: RngSeed::Fixed(seed), ..Config::default() }
}

/// Every op of one element pair, drawn from a proptest-chosen seed, on the default and the portable path.
fn check_one_pair<F: FieldUnderTest>(seed: u64) -> Result<(), TestCaseError> {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let (x, y) = (F::Ref::random(&mut rng), F::Ref::random(&mut rng));
    let (a, b) = (F::from_ref(&x), F::from_ref(&y));
    for op in Op::BINARY.into_iter().chain(Op::UNARY) {
        let want = reference_op(op, &x, &y);
        prop_assert_eq!(default_op(op, &a, &b).to_ref(), want, "{} default {:?}", F::NAME, op);
        prop_assert_eq!(F::portable(op, &a, &b).to_ref(), want, "{} portable {:?}", F::NAME, op);
    }
    Ok(())
}

macro_rules! field_cpu_tests {
    ($field:ident, $t:ty, [$($path:ident),*]) => {
        mod $field {
            use super::*;
            $(
                #[allow(non_snake_case)]
                mod $path {
                    use super::*;
                    #[test]
                    fn ops_match_blstrs() {
                        check_against_reference::<$t>(concat!(stringify!($field), "::", stringify!($path), "::ops"), CpuPath::$path);
                    }
                    #[test]
                    fn algebraic_laws() {
                        check_field_laws::<$t>(concat!(stringify!($field), "::", stringify!($path), "::laws"), CpuPath::$path);
                    }
                }
            )*
            #[test]
            fn proptest_ops_match_blstrs() {
                let config = proptest_config(concat!(stringify!($field), "::proptest"));
                proptest!(config, |(seed in any::<u64>())| { check_one_pair::<$t>(seed)?; });
            }
        }
    };
}

field_cpu_tests!(fr, Fr, [Default, Portable, PtxEmulated]);
field_cpu_tests!(fq, Fq, [Default, Portable, PtxEmulated]);
field_cpu_tests!(fq2, Fq2, [Default, Portable]);

/// The constants are blstrs's: ONE, ZERO and the moduli.
#[test]
fn constants_match_blstrs() {
    use ff::PrimeField;
    use zkgpu_kernels::field::Field;
    assert_eq!(Fr::ONE.to_ref(), blstrs::Scalar::ONE);
    assert_eq!(Fq::ONE.to_ref(), blstrs::Fp::ONE);
    assert_eq!(Fq2::ONE.to_ref(), blstrs::Fp2::ONE);
    assert_eq!(Fr::ZERO.to_ref(), blstrs::Scalar::ZERO);
    assert_eq!(Fq2::ZERO.to_ref(), blstrs::Fp2::ZERO);
    // Modulus: p - 1 in Fr is -1, and the modulus string of ff matches our limbs.
    let minus_one = Fr::from_canonical_limbs(zkgpu_kernels::field::mont::sub_small(Fr::MODULUS, 1));
    assert_eq!(minus_one.to_ref(), -blstrs::Scalar::ONE);
    let hex: String = Fr::MODULUS.iter().rev().map(|l| format!("{l:08x}")).collect();
    assert_eq!(format!("0x{hex}"), blstrs::Scalar::MODULUS);
    let minus_one = Fq::from_canonical_limbs(zkgpu_kernels::field::mont::sub_small(Fq::MODULUS, 1));
    assert_eq!(minus_one.to_ref(), -blstrs::Fp::ONE);
    // R^2 is right: from_limbs(R2) means R2 / R = R = 2^(32N) as a field value.
    assert_eq!(Fr::from_limbs(Fr::R2).to_ref(), blstrs::Scalar::from(2u64).pow_vartime([256]));
    assert_eq!(Fq::from_limbs(Fq::R2).to_ref(), blstrs::Fp::from(2u64).pow_vartime([384]));
    // -p^-1: p * INV = -1 mod 2^32.
    assert_eq!(Fr::MODULUS[0].wrapping_mul(Fr::INV), u32::MAX);
    assert_eq!(Fq::MODULUS[0].wrapping_mul(Fq::INV), u32::MAX);
}

