//! Jacobian points: `x = X/Z²`, `y = Y/Z³`; `Z = 0` is the identity.
use super::{Affine, CurveField, Xyzz};
use crate::field::Field;

/// A point in Jacobian coordinates. `#[repr(C)]` `{x, y, z}`: exactly blst's `blst_p1` / `blst_p2`, which
/// `blstrs::G1Projective` / `G2Projective` wrap transparently, so kernels hand results back in this form.
///
/// [`Jacobian::IDENTITY`] is all-zero (what `blstrs::G1Projective::identity()` holds); any `Z = 0` is the
/// identity. Coordinates are not unique, so there is deliberately no `PartialEq`: convert to affine to compare.
/// The MSM accumulates in [`Xyzz`]; these operations are here for completeness and comparison.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Jacobian<F> {
    pub x: F,
    pub y: F,
    pub z: F,
}

impl<F: Field> Jacobian<F> {
    /// The point at infinity (all-zero).
    pub const IDENTITY: Self = Self { x: F::ZERO, y: F::ZERO, z: F::ZERO };

    /// Is this the identity (`Z = 0`)?
    #[inline(always)]
    pub fn is_identity(&self) -> bool {
        self.z.is_zero()
    }

    /// Lift an affine point: `(x, y, 1)`, or the identity.
    #[inline(always)]
    pub fn from_affine(p: &Affine<F>) -> Self {
        if p.is_identity() { Self::IDENTITY } else { Self { x: p.x, y: p.y, z: F::ONE } }
    }

    /// Lift an affine point with `Z = λ`: `(λ²x, λ³y, λ)`. `λ` must be non-zero; `λ = 0` yields the identity.
    /// Cost: 3M + 1S.
    #[inline(always)]
    pub fn from_affine_scaled(p: &Affine<F>, lambda: &F) -> Self {
        if p.is_identity() {
            return Self::IDENTITY;
        }
        let zz = lambda.square();
        Self { x: p.x.mul(&zz), y: p.y.mul(&zz.mul(lambda)), z: *lambda }
    }

    /// To XYZZ: `(X, Y, Z², Z³)`. Cost: 1M + 1S.
    #[inline(always)]
    pub fn to_xyzz(&self) -> Xyzz<F> {
        Xyzz::from_jacobian(self)
    }

    /// To affine with one inversion: `x = X·Z⁻², y = Y·Z⁻³`. Cost: 1I + 3M + 1S. The identity maps to `(0, 0)`
    /// because `inverse(0) = 0`.
    #[inline(always)]
    pub fn to_affine(&self) -> Affine<F> {
        let z_inv = self.z.inverse();
        let z_inv2 = z_inv.square();
        Affine { x: self.x.mul(&z_inv2), y: self.y.mul(&z_inv2.mul(&z_inv)) }
    }

    /// `-P = (X, -Y, Z)`; the identity stays all-zero.
    #[inline(always)]
    pub fn neg(&self) -> Self {
        let y = if self.y.is_zero() { self.y } else { self.y.neg() };
        Self { y, ..*self }
    }

    /// `2P`, dbl-2009-l (`a = 0`). Cost: 2M + 5S.
    ///
    /// `A = X², B = Y², C = B², D = 2((X + B)² − A − C), E = 3A, F = E², X3 = F − 2D, Y3 = E(D − X3) − 8C,
    /// Z3 = 2Y·Z`. The identity needs no branch: `Z = 0` gives `Z3 = 0`.
    #[inline(always)]
    pub fn double(&self) -> Self {
        let a = self.x.square();
        let b = self.y.square();
        let c = b.square();
        let d = self.x.add(&b).square().sub(&a).sub(&c).double();
        let e = a.double().add(&a);
        let f = e.square();
        let x3 = f.sub(&d.double());
        let c8 = c.double().double().double();
        let y3 = e.mul(&d.sub(&x3)).sub(&c8);
        let z3 = self.y.mul(&self.z).double();
        Self { x: x3, y: y3, z: z3 }
    }

    /// `P + Q` with `Q` affine (mixed addition), madd-2007-bl. Cost: 7M + 4S.
    ///
    /// `Z1Z1 = Z1², U2 = x2·Z1Z1, S2 = y2·Z1·Z1Z1, H = U2 − X1, HH = H², I = 4HH, J = H·I, r = 2(S2 − Y1),
    /// V = X1·I, X3 = r² − J − 2V, Y3 = r(V − X3) − 2Y1·J, Z3 = (Z1 + H)² − Z1Z1 − HH`.
    /// Edge cases as in [`Xyzz::add_affine`]: identities, `H = 0, r = 0` (doubling), `H = 0, r != 0` (identity).
    #[inline(always)]
    pub fn add_affine(&self, q: &Affine<F>) -> Self {
        if q.is_identity() {
            return *self;
        }
        if self.is_identity() {
            return Self::from_affine(q);
        }
        let z1z1 = self.z.square();
        let u2 = q.x.mul(&z1z1);
        let s2 = q.y.mul(&self.z).mul(&z1z1);
        let h = u2.sub(&self.x);
        let r = s2.sub(&self.y).double();
        if h.is_zero() {
            return if r.is_zero() { super::outlined::double(self) } else { Self::IDENTITY };
        }
        let hh = h.square();
        // Z3 first: Z1 and Z1Z1 die here (lower register pressure).
        let z3 = self.z.add(&h).square().sub(&z1z1).sub(&hh);
        let i = hh.double().double();
        let j = h.mul(&i);
        let v = self.x.mul(&i);
        let y1_j = self.y.mul(&j);
        let x3 = r.square().sub(&j).sub(&v.double());
        let y3 = r.mul(&v.sub(&x3)).sub(&y1_j.double());
        Self { x: x3, y: y3, z: z3 }
    }

    /// `P + Q`, both Jacobian (general addition), add-2007-bl. Cost: 11M + 5S.
    ///
    /// `Z1Z1 = Z1², Z2Z2 = Z2², U1 = X1·Z2Z2, U2 = X2·Z1Z1, S1 = Y1·Z2·Z2Z2, S2 = Y2·Z1·Z1Z1, H = U2 − U1,
    /// I = (2H)², J = H·I, r = 2(S2 − S1), V = U1·I, X3 = r² − J − 2V, Y3 = r(V − X3) − 2S1·J,
    /// Z3 = ((Z1 + Z2)² − Z1Z1 − Z2Z2)·H`. Same edge cases as [`Jacobian::add_affine`].
    #[inline(always)]
    pub fn add(&self, q: &Self) -> Self {
        if q.is_identity() {
            return *self;
        }
        if self.is_identity() {
            return *q;
        }
        let z1z1 = self.z.square();
        let z2z2 = q.z.square();
        let u1 = self.x.mul(&z2z2);
        let u2 = q.x.mul(&z1z1);
        let s1 = self.y.mul(&q.z).mul(&z2z2);
        let s2 = q.y.mul(&self.z).mul(&z1z1);
        let two_z1z2 = self.z.add(&q.z).square().sub(&z1z1).sub(&z2z2);
        // From here on neither input is live: (4U1, 8S1, 2·Z1·Z2) is P in other coordinates
        // (4U1/(2Z1Z2)² = X1/Z1², 8S1/(2Z1Z2)³ = Y1/Z1³), which is what the doubling case doubles.
        let h = u2.sub(&u1);
        let r = s2.sub(&s1).double();
        if h.is_zero() {
            let p_again = Self { x: u1.double().double(), y: s1.double().double().double(), z: two_z1z2 };
            return if r.is_zero() { super::outlined::double(&p_again) } else { Self::IDENTITY };
        }
        let z3 = two_z1z2.mul(&h);
        let i = h.double().square();
        let j = h.mul(&i);
        let v = u1.mul(&i);
        let s1_j = s1.mul(&j);
        let x3 = r.square().sub(&j).sub(&v.double());
        let y3 = r.mul(&v.sub(&x3)).sub(&s1_j.double());
        Self { x: x3, y: y3, z: z3 }
    }

    /// Does the point satisfy `Y² = X³ + b·Z⁶` (or is it the identity)? Cost: 3M + 3S. For tests.
    #[inline(always)]
    pub fn is_on_curve(&self) -> bool
    where
        F: CurveField,
    {
        let z2 = self.z.square();
        let z6 = z2.square().mul(&z2);
        let lhs = self.y.square();
        let rhs = self.x.square().mul(&self.x).add(&F::coeff_b().mul(&z6));
        self.is_identity() | (lhs == rhs)
    }
}
