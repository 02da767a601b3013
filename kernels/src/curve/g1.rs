//! G1: the curve `y^2 = x^3 + 4` over Fq.
use super::{Affine, CurveField, Jacobian, Xyzz};
use crate::field::{Field, Fq};

/// A G1 point in affine coordinates; bit-identical to `blstrs::G1Affine` (96 bytes).
pub type G1Affine = Affine<Fq>;
/// A G1 point in Jacobian coordinates; bit-identical to `blstrs::G1Projective` (144 bytes).
pub type G1Jacobian = Jacobian<Fq>;
/// A G1 point in XYZZ coordinates (the MSM accumulator; 192 bytes).
pub type G1Xyzz = Xyzz<Fq>;

impl CurveField for Fq {
    /// `b = 4`.
    #[inline(always)]
    fn coeff_b() -> Self {
        Fq::ONE.double().double()
    }
}
