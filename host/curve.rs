//! The two groups the kernels work on, [`G1`] and [`G2`], as one sealed trait: kernel name stems, the blstrs
//! types that cross to the device, and the few blstrs operations the host needs around the kernels
//! (normalizing results, the CPU references).
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use group::Curve as _;
use zkgpu_kernels::curve::{Affine, G1Xyzz, G2Xyzz, Jacobian};
use zkgpu_kernels::field::{Fq, Fq2};
use zkgpu_kernels::interface::{self, CurveKernels};

use crate::memory::DeviceSafe;

mod sealed {
    pub trait Sealed {}
}

/// A group the GPU algorithms work on: [`G1`] or [`G2`].
pub trait Curve: sealed::Sealed + 'static {
    /// Kernel name stem, "g1" or "g2".
    const NAME: &'static str;
    /// This curve's instances of the curve-generic kernels ([`zkgpu_kernels::interface::G1`] or `G2`).
    const KERNELS: CurveKernels;
    /// Input points (bit-identical to the kernels' affine type).
    type Affine: DeviceSafe + PartialEq + std::fmt::Debug;
    /// Results (bit-identical to the kernels' Jacobian type).
    type Projective: DeviceSafe + PartialEq + std::fmt::Debug;
    /// Bytes of one device XYZZ point (scratch).
    const XYZZ_BYTES: usize;
    /// The kernels' base field (Fq or Fq2), for running the kernels' code on the host.
    type Field: zkgpu_kernels::field::Field;

    /// The identity.
    fn identity() -> Self::Projective;
    /// `acc += p` (mixed addition, blstrs).
    fn add_assign(acc: &mut Self::Projective, p: &Self::Affine);
    /// The same point with `Z = 1` (or the identity), so equal points have equal bytes.
    fn normalize(p: &Self::Projective) -> Self::Projective;
    /// `Σ scalars[i]·bases[i]` with blstrs' own MSM (`multi_exp`); lengths must agree.
    fn multi_exp(bases: &[Self::Affine], scalars: &[Scalar]) -> Self::Projective;
    /// `a + b` (blstrs).
    fn add_projective(a: &Self::Projective, b: &Self::Projective) -> Self::Projective;
    /// `2·p` (blstrs).
    fn double(p: &Self::Projective) -> Self::Projective;
    /// The same points as the kernels' affine type (a reinterpretation: the layouts are identical).
    fn as_kernel_affine(points: &[Self::Affine]) -> &[Affine<Self::Field>];
    /// A kernels' Jacobian point as blstrs' (a reinterpretation).
    fn from_kernel_jacobian(p: Jacobian<Self::Field>) -> Self::Projective;
    /// `s·p` (blstrs).
    fn mul_scalar(p: &Self::Affine, s: &Scalar) -> Self::Projective;
}

/// G1 over Fq: `blstrs::G1Affine` in, `blstrs::G1Projective` out.
pub enum G1 {}
/// G2 over Fq2: `blstrs::G2Affine` in, `blstrs::G2Projective` out.
pub enum G2 {}
impl sealed::Sealed for G1 {}
impl sealed::Sealed for G2 {}

macro_rules! curve_impl {
    ($curve:ty, $name:literal, $kernels:expr, $affine:ty, $projective:ty, $xyzz:ty, $field:ty) => {
        const _: () = assert!(size_of::<$affine>() == size_of::<Affine<$field>>());
        const _: () = assert!(align_of::<$affine>() >= align_of::<Affine<$field>>());
        const _: () = assert!(size_of::<$projective>() == size_of::<Jacobian<$field>>());
        impl Curve for $curve {
            const NAME: &'static str = $name;
            const KERNELS: CurveKernels = $kernels;
            type Affine = $affine;
            type Projective = $projective;
            const XYZZ_BYTES: usize = size_of::<$xyzz>();
            type Field = $field;

            fn identity() -> $projective {
                <$projective as group::Group>::identity()
            }
            fn add_assign(acc: &mut $projective, p: &$affine) {
                *acc += p;
            }
            fn normalize(p: &$projective) -> $projective {
                p.to_affine().into()
            }
            fn multi_exp(bases: &[$affine], scalars: &[Scalar]) -> $projective {
                let points: Vec<$projective> = bases.iter().map(|&p| p.into()).collect();
                <$projective>::multi_exp(&points, scalars)
            }
            fn add_projective(a: &$projective, b: &$projective) -> $projective {
                a + b
            }
            fn double(p: &$projective) -> $projective {
                <$projective as group::Group>::double(p)
            }
            fn as_kernel_affine(points: &[$affine]) -> &[Affine<$field>] {
                // SAFETY: blst's affine point is {x, y} of canonical Montgomery limbs, exactly Affine<F>
                // (sizes and alignment asserted above; tests/layout.rs checks values both ways).
                unsafe { std::slice::from_raw_parts(points.as_ptr().cast(), points.len()) }
            }
            fn from_kernel_jacobian(p: Jacobian<$field>) -> $projective {
                // SAFETY: blst's projective point is Jacobian {x, y, z}, exactly Jacobian<F> (size asserted
                // above; every bit pattern of limbs is a value blst accepts as a point representation).
                unsafe { std::mem::transmute_copy(&p) }
            }
            fn mul_scalar(p: &$affine, s: &Scalar) -> $projective {
                *p * s
            }
        }
    };
}

curve_impl!(G1, "g1", interface::G1, G1Affine, G1Projective, G1Xyzz, Fq);
curve_impl!(G2, "g2", interface::G2, G2Affine, G2Projective, G2Xyzz, Fq2);
