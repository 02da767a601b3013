//! The kernels' field types are bit-identical to blstrs's, so host slices of blstrs values go to the device as
//! bytes: same size and alignment, and random values keep their meaning when reinterpreted both ways.
mod common;

use std::mem::{align_of, size_of};

use common::field_props::{FieldUnderTest, reinterpret};
use ff::Field as _;
use zkgpu_kernels::field::{Field, Fq, Fq2, Fr};

fn check_layout<F: FieldUnderTest>(test: &str) {
    assert_eq!(size_of::<F>(), size_of::<F::Ref>(), "{} size", F::NAME);
    assert_eq!(align_of::<F>(), align_of::<F::Ref>(), "{} alignment", F::NAME);
    assert_eq!(F::ONE.to_ref(), F::Ref::ONE, "{} ONE", F::NAME);
    assert_eq!(F::ZERO.to_ref(), F::Ref::ZERO, "{} ZERO", F::NAME);
    let mut rng = common::seeded_rng(test);
    for _ in 0..1000 {
        let (x, y) = (F::Ref::random(&mut rng), F::Ref::random(&mut rng));
        // Round trip keeps the bytes, and arithmetic on the reinterpreted values agrees with blstrs.
        let a: F = reinterpret(&x);
        let back: F::Ref = reinterpret(&a);
        assert_eq!(back, x, "{} round trip", F::NAME);
        let b: F = reinterpret(&y);
        assert_eq!(reinterpret::<F, F::Ref>(&a.mul(&b)), x * y, "{} product through reinterpretation", F::NAME);
    }
    // A slice reinterpreted in place (what the host does with &[blstrs::Scalar]) sees the same elements.
    let refs: Vec<F::Ref> = (0..64).map(|_| F::Ref::random(&mut rng)).collect();
    // SAFETY: same size and alignment (asserted above), every bit pattern of the limbs is a valid F.
    let ours: &[F] = unsafe { std::slice::from_raw_parts(refs.as_ptr().cast::<F>(), refs.len()) };
    for (x, a) in refs.iter().zip(ours) {
        assert_eq!(a.to_ref(), *x);
    }
}

#[test]
fn fr_is_blstrs_scalar() {
    check_layout::<Fr>("layout::fr");
}

#[test]
fn fq_is_blstrs_fp() {
    check_layout::<Fq>("layout::fq");
}

#[test]
fn fq2_is_blstrs_fp2() {
    check_layout::<Fq2>("layout::fq2");
    // c0 then c1, each an Fp.
    let x = blstrs::Fp2::new(blstrs::Fp::from(3u64), blstrs::Fp::from(5u64));
    let a: Fq2 = reinterpret(&x);
    assert_eq!(a.c0.to_ref(), blstrs::Fp::from(3u64));
    assert_eq!(a.c1.to_ref(), blstrs::Fp::from(5u64));
}

/// Limbs are little-endian 32-bit words of blst's little-endian 64-bit limbs.
#[test]
fn limbs_are_little_endian_words_of_blst_limbs() {
    let one_bytes = blstrs::Scalar::ONE;
    let words: [u64; 4] = reinterpret(&one_bytes);
    let ours = Fr::ONE.limbs();
    for k in 0..4 {
        assert_eq!(words[k], ours[2 * k] as u64 | (ours[2 * k + 1] as u64) << 32);
    }
    // blstrs's canonical little-endian bytes equal our canonical limbs.
    let x = blstrs::Fp::from(0x1234_5678_9abc_def0u64);
    let canon = <Fq as FieldUnderTest>::from_ref(&x).to_canonical_limbs();
    let bytes = x.to_bytes_le();
    for k in 0..12 {
        assert_eq!(canon[k], u32::from_le_bytes([bytes[4 * k], bytes[4 * k + 1], bytes[4 * k + 2], bytes[4 * k + 3]]));
    }
}
