//! BLS12-381 point arithmetic for G1 (over Fq) and G2 (over Fq2), written once, generic over the base field.
//!
//! Both groups live on a short Weierstrass curve with `a = 0`: `y^2 = x^3 + b`, `b = 4` for G1 and `b = 4(1 + u)`
//! for G2. Three representations:
//! - [`Affine`]: `(x, y)`, the all-zero pair is the identity (blst's convention); bit-identical to
//!   `blstrs::G1Affine` / `G2Affine`, so host slices go to the device unchanged.
//! - [`Jacobian`]: `(X, Y, Z)` with `x = X/Z^2`, `y = Y/Z^3`, `Z = 0` the identity; bit-identical to
//!   `blstrs::G1Projective` / `G2Projective` (blst's `blst_p1` / `blst_p2`). The results we hand back.
//! - [`Xyzz`]: `(X, Y, ZZ, ZZZ)` with `x = X/ZZ`, `y = Y/ZZZ`, `ZZ^3 = ZZZ^2`, `ZZ = 0` the identity. The MSM's
//!   accumulator: its mixed addition (8M + 2S) is the cheapest inversion-free one for `a = 0`.
//!
//! Formulas follow the Explicit-Formulas Database (hyperelliptic.org/EFD, "g1p/auto-shortw-*"): the names in
//! the doc comments (`madd-2008-s`, `dbl-2009-l`, ...) point there. Every operation handles the identity and
//! the `P == Q` / `P == -Q` cases, never panics, and is `#[inline(always)]` so kernels get straight-line code.
//! Costs are counted in base-field multiplications (M) and squarings (S); additions are not counted.
//!
//! [`ops`] holds the per-element bodies of the `arith_g1_*` / `arith_g2_*` test kernels, so the host build
//! runs exactly what the GPU runs.

mod affine;
mod g1;
mod g2;
mod jacobian;
pub mod outlined;
pub mod ops;
mod xyzz;

pub use affine::Affine;
pub use g1::{G1Affine, G1Jacobian, G1Xyzz};
pub use g2::{G2Affine, G2Jacobian, G2Xyzz};
pub use jacobian::Jacobian;
pub use xyzz::Xyzz;

use crate::field::Field;

/// A base field with its curve's constant `b` (`y^2 = x^3 + b`): [`crate::field::Fq`] for G1,
/// [`crate::field::Fq2`] for G2. Only the on-curve checks need `b`; the group law for `a = 0` does not.
pub trait CurveField: Field {
    /// The constant `b` of `y^2 = x^3 + b`, in Montgomery form.
    fn coeff_b() -> Self;
}
