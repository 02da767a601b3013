//! Affine points `(x, y)`; the all-zero pair is the identity.
use super::CurveField;
use crate::field::Field;

/// A point in affine coordinates. `#[repr(C)]` `{x, y}` with the identity all-zero: exactly blst's
/// `blst_p1_affine` / `blst_p2_affine`, which `blstrs::G1Affine` / `G2Affine` wrap transparently.
///
/// `(0, 0)` is not on either curve (`0 != b`), so it is free to stand for the identity. Coordinates are
/// canonical (fully reduced), so the derived equality is equality of points.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Affine<F> {
    pub x: F,
    pub y: F,
}

impl<F: Field> Affine<F> {
    /// The point at infinity, `(0, 0)`.
    pub const IDENTITY: Self = Self { x: F::ZERO, y: F::ZERO };

    /// Is this the identity? Both coordinates must be zero: `(0, y)` with `y^2 = b` would be a real point.
    #[inline(always)]
    pub fn is_identity(&self) -> bool {
        self.x.is_zero() & self.y.is_zero()
    }

    /// `-P = (x, -y)`; the identity maps to itself (`y = 0` is left as is, so the result stays all-zero
    /// whatever the field's `neg(0)` returns).
    #[inline(always)]
    pub fn neg(&self) -> Self {
        let y = if self.y.is_zero() { self.y } else { self.y.neg() };
        Self { x: self.x, y }
    }

    /// Does the point satisfy `y^2 = x^3 + b` (or is it the identity)? Does not check the subgroup.
    /// Cost: 1M + 2S.
    #[inline(always)]
    pub fn is_on_curve(&self) -> bool
    where
        F: CurveField,
    {
        let lhs = self.y.square();
        let rhs = self.x.square().mul(&self.x).add(&F::coeff_b());
        self.is_identity() | (lhs == rhs)
    }
}
