//! G2: the curve `y^2 = x^3 + 4(1 + u)` over Fq2 = Fq[u]/(u^2 + 1) (the sextic twist of G1's curve).
use super::{Affine, CurveField, Jacobian, Xyzz};
use crate::field::{Field, Fq, Fq2};

/// A G2 point in affine coordinates; bit-identical to `blstrs::G2Affine` (192 bytes).
pub type G2Affine = Affine<Fq2>;
/// A G2 point in Jacobian coordinates; bit-identical to `blstrs::G2Projective` (288 bytes).
pub type G2Jacobian = Jacobian<Fq2>;
/// A G2 point in XYZZ coordinates (the MSM accumulator; 384 bytes).
pub type G2Xyzz = Xyzz<Fq2>;

impl CurveField for Fq2 {
    /// `b = 4 + 4u`.
    #[inline(always)]
    fn coeff_b() -> Self {
        let four = Fq::ONE.double().double();
        Fq2 { c0: four, c1: four }
    }
}
