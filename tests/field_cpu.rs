//! The host build of the kernels' field arithmetic against blstrs: every op on edge cases and seeded random
//! values, for the default path, the portable path and the PTX chains run by the host interpreter; then the
//! algebraic laws, and proptest properties per op.
mod common;

use common::field_props::{
    CpuEvaluator, CpuPath, FieldUnderTest, Op, check_laws, check_ops_match_reference, default_op, reference_op,
    sub_limbs, test_inputs,
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

/// Limb helpers for the lazily reduced (< 2p) values of the `*_lazy` tuning variants.
fn add_limbs<const N: usize>(a: &[u32; N], b: &[u32; N]) -> ([u32; N], u32) {
    let mut out = [0u32; N];
    let mut carry = 0u64;
    for k in 0..N {
        let s = a[k] as u64 + b[k] as u64 + carry;
        out[k] = s as u32;
        carry = s >> 32;
    }
    (out, carry as u32)
}

fn less_limbs<const N: usize>(a: &[u32; N], b: &[u32; N]) -> bool {
    a.iter().rev().cmp(b.iter().rev()) == std::cmp::Ordering::Less
}

/// `x mod p` for `x < 2p`.
fn reduce_once<const N: usize>(x: &[u32; N], p: &[u32; N]) -> [u32; N] {
    if less_limbs(x, p) { *x } else { sub_limbs(*x, *p) }
}

/// Asserts that a lazy product `got` (of `what`) is below 2p and returns it reduced mod p.
fn lazy_to_canonical<const N: usize>(got: &[u32; N], p: &[u32; N], what: &str) -> [u32; N] {
    let (two_p, carry) = add_limbs(p, p);
    assert_eq!(carry, 0, "2p < 2^(32N) is what the lazy products rely on");
    assert!(less_limbs(got, &two_p), "lazy output {got:?} >= 2p for {what}");
    reduce_once(got, p)
}

/// The Fr/Fq multiplication tuning variants (`MUL_CONSTINV_LAZY`, `MUL_MODREG` texts, see
/// docs/log/kernels-notes.md "Fr tuning") run by the host interpreter against blstrs: edge cases x edge cases plus
/// seeded random pairs; the lazy variant also with one input in [p, 2p) and as a 64-step chain.
macro_rules! mul_variant_tests {
    ($field:ident, $t:ty) => {
        mod $field {
            use super::*;
            use zkgpu_kernels::field::$field::ptx;

            fn inputs(test: &str) -> (Vec<$t>, Vec<$t>) {
                let mut rng = common::seeded_rng(test);
                let (a, b) = test_inputs::<$t>(&mut rng, RANDOM_PAIRS);
                (a.iter().map(<$t>::from_ref).collect(), b.iter().map(<$t>::from_ref).collect())
            }

            #[test]
            fn modreg_matches_blstrs() {
                let (a, b) = inputs(concat!(stringify!($field), "::variants::canonical"));
                for (x, y) in a.iter().zip(&b) {
                    let want = x.to_ref() * y.to_ref();
                    let got = ptx::mul_modreg_emulated(&x.limbs(), &y.limbs()).unwrap();
                    assert_eq!(<$t>::from_limbs(got).to_ref(), want, "modreg {x:?} * {y:?}");
                }
            }

            #[test]
            fn constinv_lazy_is_below_2p_and_congruent() {
                let p = <$t>::MODULUS;
                let (a, b) = inputs(concat!(stringify!($field), "::variants::lazy"));
                for (x, y) in a.iter().zip(&b) {
                    let want = x.to_ref() * y.to_ref();
                    // x as is and as x + p (the other representative below 2p), in both operand positions.
                    let (x_high, c) = add_limbs(&x.limbs(), &p);
                    assert_eq!(c, 0);
                    for lhs in [x.limbs(), x_high] {
                        for (u, v) in [(lhs, y.limbs()), (y.limbs(), lhs)] {
                            let what = format!("{u:?} * {v:?}");
                            let got = ptx::mul_constinv_lazy_emulated(&u, &v).unwrap();
                            let canonical = <$t>::from_limbs(lazy_to_canonical(&got, &p, &what));
                            assert_eq!(canonical.to_ref(), want, "lazy {what}");
                        }
                    }
                }
                // A dependent chain as in bench_mul_*_constinv_lazy: acc stays < 2p, canonical at the end.
                for (x, y) in a.iter().zip(&b).take(64) {
                    let (mut acc, mut want) = (x.limbs(), x.to_ref());
                    for _ in 0..64 {
                        acc = ptx::mul_constinv_lazy_emulated(&acc, &y.limbs()).unwrap();
                        lazy_to_canonical(&acc, &p, "a chain step");
                        want *= y.to_ref();
                    }
                    assert_eq!(<$t>::from_limbs(lazy_to_canonical(&acc, &p, "the chain")).to_ref(), want);
                }
            }
        }
    };
}

/// The default multiplication and squaring take -p^-1 from the constant bank for Fr (inv = 2^32 - 1, which
/// ptxas would otherwise specialise, see DESIGN.md "Fr tuning") and as an immediate for Fq, and Fr's
/// add m·r_0 as m (r_0 = 1); so the `PtxEmulated` tests above run Fr's constant-bank, r_0 = 1 text.
#[test]
fn default_texts_take_inv_and_r0_as_chosen() {
    use zkgpu_kernels::field::{fq, fr};
    // The lines computing m = E[0] * inv: one per round, each with the expected last operand.
    let m_factors = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| l.starts_with("mul.lo.u32 %m,"))
            .map(|l| l.rsplit(", ").next().unwrap_or_default().to_string())
            .collect()
    };
    let fr_load = format!("ld.const.u32 %inv, [zkgpu_inv_{:#010x}];", Fr::INV);
    for (name, text) in [("Fr MUL", fr::ptx::MUL), ("Fr SQR", fr::ptx::SQR)] {
        assert_eq!(text.matches(fr_load.as_str()).count(), 1, "{name} must load inv once from the constant bank");
        assert_eq!(m_factors(text), vec!["%inv;".to_string(); Fr::LIMBS], "{name}");
    }
    // r_0 = 1: Fr's reductions add m·r_0 = m (one `add.cc` per round), Fq's multiply by p_0 (a lo/hi pair).
    let m_times_p0 = |text: &str| text.lines().filter(|l| l.contains(", %p0, %m,")).count();
    for (name, text) in [("Fr MUL", fr::ptx::MUL), ("Fr SQR", fr::ptx::SQR)] {
        assert_eq!(m_times_p0(text), 0, "{name}");
        assert_eq!(
            text.lines().filter(|l| l.starts_with("add.cc.u32 %") && l.ends_with("0, %m;")).count(),
            Fr::LIMBS,
            "{name}"
        );
    }
    for (name, text) in [("Fq MUL", fq::ptx::MUL), ("Fq SQR", fq::ptx::SQR)] {
        assert_eq!(m_times_p0(text), 2 * Fq::LIMBS, "{name}");
    }
    let fq_inv = format!("{};", Fq::INV); // `concat!` writes the integer literal in decimal
    for (name, text) in [("Fq MUL", fq::ptx::MUL), ("Fq SQR", fq::ptx::SQR)] {
        assert!(!text.contains("ld.const"), "{name} keeps inv as an immediate");
        assert_eq!(m_factors(text), vec![fq_inv.clone(); Fq::LIMBS], "{name}");
    }
}

mod mul_variants {
    use super::*;
    mul_variant_tests!(fr, Fr);
    mul_variant_tests!(fq, Fq);
}

/// Fq's lazily reduced operations (`fq::ptx::*_LAZY`, `CANONICAL`; the `Field::*_lazy` methods on the GPU)
/// run by the host interpreter on operands anywhere in `[0, 2p)`: seeded random values as they are and lifted
/// by p, plus 0, 1, p − 1, p and the extreme 2p − 1 (and 2p, the largest negation, as a product's second
/// operand). Every product stays below 2p, is congruent to the blstrs product and is the very integer the
/// portable `mont::mul_lazy` computes (the Montgomery quotient is unique, so they must agree); the subtraction,
/// `2p − a` and the reduction are checked against their definitions. The bounds are `4p < R` and `8p < R`
/// (p < 2^381, R = 2^384; DESIGN.md, MSM, "lazy reduction"); Fr has no such room, so only Fq is checked.
#[test]
fn fq_lazy_operations_stay_below_2p_and_congruent() {
    use zkgpu_kernels::field::{fq::ptx, mont};
    type Limbs = [u32; 12];
    let p = Fq::MODULUS;
    let two_p = ptx::TWO_P;
    assert_eq!(add_limbs(&p, &p), (two_p, 0));
    // The field value of a representative below 2p + 1 (2p itself is 0).
    let value = |x: &Limbs| Fq::from_limbs(reduce_once(&reduce_once(x, &p), &p)).to_ref();
    let small = |v: u32| -> Limbs { std::array::from_fn(|k| if k == 0 { v } else { 0 }) };
    let mut rng = common::seeded_rng("fq::lazy_operations");
    let (a, _) = test_inputs::<Fq>(&mut rng, 40);
    let mut operands: Vec<Limbs> = vec![small(0), small(1), sub_limbs(p, small(1)), p, sub_limbs(two_p, small(1))];
    // test_inputs puts the edge-case cross product first: the last 40 are the seeded random values.
    for x in a.iter().skip(a.len() - 40) {
        let x = Fq::from_ref(x).limbs();
        operands.extend([x, add_limbs(&x, &p).0]);
    }
    let mut second = operands.clone();
    second.push(two_p);
    for u in &operands {
        let what = format!("{u:?}");
        let sq = ptx::square_lazy_emulated(u).unwrap();
        assert_eq!(sq, mont::mul_lazy(u, u, &p, Fq::INV), "square_lazy {what}");
        assert_eq!(value(&lazy_to_canonical(&sq, &p, &what)), value(u).square(), "square_lazy {what}");
        assert_eq!(ptx::neg_lazy_emulated(u).unwrap(), sub_limbs(two_p, *u), "2p − {what}");
        assert_eq!(ptx::canonical_emulated(u).unwrap(), reduce_once(u, &p), "canonical {what}");
        for v in &second {
            let what = format!("{u:?}, {v:?}");
            let want = value(u) * value(v);
            for (text, got) in [
                ("MUL_LAZY", ptx::mul_lazy_emulated(u, v).unwrap()),
                ("MUL_CONSTINV_LAZY", ptx::mul_constinv_lazy_emulated(u, v).unwrap()),
            ] {
                assert_eq!(got, mont::mul_lazy(u, v, &p, Fq::INV), "{text} {what}");
                assert_eq!(value(&lazy_to_canonical(&got, &p, &what)), want, "{text} {what}");
            }
            if less_limbs(v, &two_p) {
                let diff = ptx::sub_lazy_emulated(u, v).unwrap();
                assert_eq!(diff, mont::sub(u, v, &two_p), "sub_lazy {what}");
                assert_eq!(value(&lazy_to_canonical(&diff, &p, &what)), value(u) - value(v), "sub_lazy {what}");
            }
        }
    }
    // a·b + c·d with one reduction: seeded quadruples, then every operand at its largest.
    let n = operands.len();
    let mut quads: Vec<[Limbs; 4]> = (0..400)
        .map(|i| {
            [operands[i % n], second[(7 * i + 3) % (n + 1)], operands[(11 * i + 1) % n], second[(13 * i + 5) % (n + 1)]]
        })
        .collect();
    let top = sub_limbs(two_p, small(1));
    quads.extend([[top, two_p, top, two_p], [top, top, top, top], [top, two_p, top, small(0)]]);
    for [w, x, y, z] in quads {
        let what = format!("{w:?}·{x:?} + {y:?}·{z:?}");
        let got = ptx::mul_add_mul_lazy_emulated(&w, &x, &y, &z).unwrap();
        assert_eq!(value(&lazy_to_canonical(&got, &p, &what)), value(&w) * value(&x) + value(&y) * value(&z), "{what}");
    }
}

/// `fq::ptx::MUL_ADD_MUL` (`a·b + c·d` with one Montgomery reduction, behind `Fq::mul_sub_mul` on the GPU) run
/// by the host interpreter against blstrs: the edge-case cross product and seeded random values regrouped into
/// quadruples, plus every operand at the raw limbs `p − 1` (the largest running value the bounds allow).
#[test]
fn fq_mul_add_mul_matches_blstrs() {
    use zkgpu_kernels::field::Field as _;
    use zkgpu_kernels::field::fq::ptx;
    let mut rng = common::seeded_rng("fq::mul_add_mul");
    let (a, b) = test_inputs::<Fq>(&mut rng, RANDOM_PAIRS);
    let (a, b): (Vec<Fq>, Vec<Fq>) = (a.iter().map(Fq::from_ref).collect(), b.iter().map(Fq::from_ref).collect());
    let mut p_minus_1 = Fq::MODULUS;
    p_minus_1[0] -= 1;
    let top = Fq::from_limbs(p_minus_1);
    let n = a.len();
    let mut quads: Vec<[Fq; 4]> = (0..n).map(|i| [a[i], b[i], a[(7 * i + 3) % n], b[(13 * i + 5) % n]]).collect();
    quads.push([top; 4]);
    quads.push([top, top, top, Fq::ZERO]);
    for [w, x, y, z] in quads {
        let want = w.to_ref() * x.to_ref() + y.to_ref() * z.to_ref();
        let got = ptx::mul_add_mul_emulated(&w.limbs(), &x.limbs(), &y.limbs(), &z.limbs()).unwrap();
        assert_eq!(Fq::from_limbs(got).to_ref(), want, "{w:?}·{x:?} + {y:?}·{z:?}");
        assert!(less_limbs(&got, &Fq::MODULUS), "canonical output");
        assert_eq!(w.mul_sub_mul(&x, &y, &z).to_ref(), w.to_ref() * x.to_ref() - y.to_ref() * z.to_ref());
    }
}

/// `Fq2::mul_lowreg` (the reordered Karatsuba) against blstrs on edge cases and seeded random pairs.
#[test]
fn fq2_mul_lowreg_matches_blstrs() {
    let mut rng = common::seeded_rng("fq2::mul_lowreg");
    let (a, b) = test_inputs::<Fq2>(&mut rng, RANDOM_PAIRS);
    for (x, y) in a.iter().zip(&b) {
        let got = Fq2::from_ref(x).mul_lowreg(&Fq2::from_ref(y));
        assert_eq!(got.to_ref(), *x * *y, "{x:?} * {y:?}");
    }
}

/// Inputs that stress the divstep inversion: small integers, powers of two, p − 2^k, 2^k − 1, all-ones words
/// (as raw Montgomery limbs, i.e. the integers the divsteps see), then seeded random elements.
fn inversion_inputs<const N: usize>(p: [u32; N], rng: &mut ChaCha20Rng, random: usize) -> Vec<[u32; N]> {
    let sub = sub_limbs::<N>;
    let bits = 32 * N as u32 - p[N - 1].leading_zeros();
    let mut out = Vec::new();
    for v in [0u32, 1, 2, 3, 5, 7, u32::MAX] {
        let mut l = [0u32; N];
        l[0] = v;
        out.push(l);
        out.push(sub(p, l));
    }
    for k in 0..bits - 1 {
        let mut pow = [0u32; N];
        pow[(k / 32) as usize] = 1 << (k % 32);
        out.push(pow);
        out.push(sub(p, pow));
        let mut one = [0u32; N];
        one[0] = 1;
        out.push(sub(pow, one)); // 2^k − 1
    }
    for _ in 0..random {
        let mut l = [0u32; N];
        for w in l.iter_mut() {
            *w = rng.next_u32();
        }
        if !bits.is_multiple_of(32) {
            l[N - 1] &= (1u32 << (bits % 32)) - 1; // below 2^bits
        }
        if !less_limbs(&l, &p) {
            l = sub(l, p);
        }
        out.push(l);
    }
    out.retain(|l| less_limbs(l, &p));
    out
}

/// The divstep inversion (`Field::inverse`) against Fermat (`inverse_fermat`) and `a · a⁻¹ = 1`, on the
/// stress inputs above, for Fr and Fq; and the step bound it relies on (Bernstein–Yang, Theorem 11.2).
#[test]
fn divstep_inverse_matches_fermat() {
    use zkgpu_kernels::field::{Field, inverse::divstep_bound};
    assert_eq!((divstep_bound(255), divstep_bound(381)), (738, 1101));
    let mut rng = common::seeded_rng("divstep_inverse_matches_fermat");
    macro_rules! check {
        ($f:ty) => {
            let inputs = inversion_inputs(<$f>::MODULUS, &mut rng, 4000);
            assert!(inputs.len() > 4000);
            for l in inputs {
                let a = <$f>::from_limbs(l);
                let inv = a.inverse();
                assert_eq!(inv, a.inverse_fermat(), "{} limbs {l:08x?}", stringify!($f));
                let want = if a.is_zero() { <$f as Field>::ZERO } else { <$f as Field>::ONE };
                assert_eq!(a.mul(&inv), want, "{} limbs {l:08x?}", stringify!($f));
            }
        };
    }
    check!(Fr);
    check!(Fq);
}

/// Fr on the FP64 pipe (`field::fr_f64`, the `fp64` bench variant): `FrF64::mul` by `FrF64::factor(y)` is
/// `Fr::mul` by `y` for the edge cases and seeded random pairs, with x as is and as x + r (the other
/// representative below 2r), outputs below 2r; a dependent chain of 256 products equals the `Fr` chain. The
/// host build computes the FMA split with exact integers; the GPU runs the FMAs (`tests/field_gpu.rs`,
/// `bench_mul_fr_fp64`).
#[test]
fn fr_f64_products_equal_fr_mul() {
    use common::field_props::FieldUnderTest as _;
    use zkgpu_kernels::field::Field as _;
    use zkgpu_kernels::field::fr_f64::{DIGITS, FrF64};
    /// The 256-bit integer of 32-bit limbs in 52-bit digits, and back (digits hold up to 260 bits; the bits
    /// past 256 must be zero).
    fn to_digits(limbs: &[u32; 8]) -> FrF64 {
        let bit = |pos: usize| pos < 256 && (limbs[pos / 32] >> (pos % 32)) & 1 == 1;
        FrF64(core::array::from_fn(|k| (0..52).filter(|&b| bit(52 * k + b)).map(|b| (1u64 << b) as f64).sum()))
    }
    fn to_limbs(x: &FrF64) -> [u32; 8] {
        let mut out = [0u32; 8];
        for (k, d) in x.0.iter().enumerate() {
            assert!(*d >= 0.0 && *d < 2f64.powi(52) && d.fract() == 0.0, "digit {d}");
            for b in (0..52).filter(|b| (*d as u64 >> b) & 1 == 1) {
                let pos = 52 * k + b;
                assert!(pos < 256, "digits past 2^256: {x:?}");
                out[pos / 32] |= 1 << (pos % 32);
            }
        }
        out
    }
    let mut rng = common::seeded_rng("fr_f64_products_equal_fr_mul");
    let (a, b) = test_inputs::<Fr>(&mut rng, RANDOM_PAIRS);
    let (a, b): (Vec<Fr>, Vec<Fr>) = (a.iter().map(Fr::from_ref).collect(), b.iter().map(Fr::from_ref).collect());
    let r = Fr::MODULUS;
    // r < 2^255, so 2r and every x + r fit 256 bits.
    let (two_r, carry) = add_limbs(&r, &r);
    assert_eq!(carry, 0);
    let below_2r = |x: &FrF64| less_limbs(&to_limbs(x), &two_r);
    assert_eq!(DIGITS, 5);
    for (x, y) in a.iter().zip(&b) {
        let want = x.mul(y);
        let f = FrF64::factor(y);
        let (high, carry) = add_limbs(&x.limbs(), &r);
        assert_eq!(carry, 0, "x + r < 2^256");
        for (what, lhs) in [("x", FrF64::from_fr(x)), ("x + r", to_digits(&high))] {
            let got = lhs.mul(&f);
            assert!(below_2r(&got), "{what}: {x:?} * {y:?} not below 2r");
            assert_eq!(got.to_fr(), want, "{what}: {x:?} * {y:?}");
        }
    }
    for (x, y) in a.iter().zip(&b).take(64) {
        let (mut acc, mut want, f) = (FrF64::from_fr(x), *x, FrF64::factor(y));
        for _ in 0..256 {
            acc = acc.mul(&f);
            assert!(below_2r(&acc));
            want = want.mul(y);
        }
        assert_eq!(acc.to_fr(), want, "chain of {x:?} * {y:?}");
    }
}
