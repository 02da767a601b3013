//! Extended Jacobian ("XYZZ") points: `x = X/ZZ`, `y = Y/ZZZ`, `ZZ^3 = ZZZ^2`; `ZZ = 0` is the identity.
use super::{Affine, CurveField, Jacobian};
use crate::field::Field;

/// A point in XYZZ coordinates (Cohen–Miyaji–Ono's modified Jacobian with `ZZ = Z^2`, `ZZZ = Z^3` kept
/// instead of `Z`). Mixed addition costs 8M + 2S, the least of the inversion-free systems for `a = 0`, which is
/// why the MSM accumulates buckets in it.
///
/// The identity has `ZZ = ZZZ = 0`; [`Xyzz::IDENTITY`] is all-zero. Coordinates are not unique (any `λ != 0`
/// gives `(λ²X, λ³Y, λ²ZZ, λ³ZZZ)`), so there is deliberately no `PartialEq`: convert to affine to compare.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Xyzz<F> {
    pub x: F,
    pub y: F,
    pub zz: F,
    pub zzz: F,
}

impl<F: Field> Xyzz<F> {
    /// The point at infinity (all-zero).
    pub const IDENTITY: Self = Self { x: F::ZERO, y: F::ZERO, zz: F::ZERO, zzz: F::ZERO };

    /// Is this the identity (`ZZ = 0`)?
    #[inline(always)]
    pub fn is_identity(&self) -> bool {
        self.zz.is_zero()
    }

    /// Lift an affine point: `(x, y, 1, 1)`, or the identity.
    #[inline(always)]
    pub fn from_affine(p: &Affine<F>) -> Self {
        if p.is_identity() {
            Self::IDENTITY
        } else {
            Self { x: p.x, y: p.y, zz: F::ONE, zzz: F::ONE }
        }
    }

    /// Lift an affine point with scale `λ`: `(λ²x, λ³y, λ², λ³)`, the same point with other coordinates
    /// (tests use it to leave `ZZ = 1`). `λ` must be non-zero; `λ = 0` yields the identity. Cost: 3M + 1S.
    #[inline(always)]
    pub fn from_affine_scaled(p: &Affine<F>, lambda: &F) -> Self {
        if p.is_identity() {
            return Self::IDENTITY;
        }
        let zz = lambda.square();
        let zzz = zz.mul(lambda);
        Self { x: p.x.mul(&zz), y: p.y.mul(&zzz), zz, zzz }
    }

    /// From Jacobian `(X, Y, Z)`: `(X, Y, Z², Z³)`. Cost: 1M + 1S.
    #[inline(always)]
    pub fn from_jacobian(p: &Jacobian<F>) -> Self {
        let zz = p.z.square();
        Self { x: p.x, y: p.y, zz, zzz: zz.mul(&p.z) }
    }

    /// To Jacobian without an inversion: `(X·ZZ, Y·ZZZ, ZZ)`. Cost: 2M.
    ///
    /// Why it is right: with `Z' = ZZ`, `X'/Z'^2 = X·ZZ/ZZ^2 = X/ZZ = x`, and
    /// `Y'/Z'^3 = Y·ZZZ/ZZ^3 = Y·ZZZ/ZZZ^2 = Y/ZZZ = y` (using `ZZ^3 = ZZZ^2`). The identity (`ZZ = 0`) maps
    /// to `Z' = 0`, Jacobian's identity.
    #[inline(always)]
    pub fn to_jacobian(&self) -> Jacobian<F> {
        Jacobian { x: self.x.mul(&self.zz), y: self.y.mul(&self.zzz), z: self.zz }
    }

    /// To affine with one inversion: `t = ZZZ⁻¹`, `s = ZZ·t` (`= 1/Z`), `x = X·s²` (`s² = ZZ²/ZZZ² = 1/ZZ`),
    /// `y = Y·t`. Cost: 1I + 3M + 1S. The identity maps to `(0, 0)` because `inverse(0) = 0`.
    #[inline(always)]
    pub fn to_affine(&self) -> Affine<F> {
        let zzz_inv = self.zzz.inverse();
        let z_inv = self.zz.mul(&zzz_inv);
        Affine { x: self.x.mul(&z_inv.square()), y: self.y.mul(&zzz_inv) }
    }

    /// `-P = (X, -Y, ZZ, ZZZ)`; the identity stays all-zero.
    #[inline(always)]
    pub fn neg(&self) -> Self {
        let y = if self.y.is_zero() { self.y } else { self.y.neg() };
        Self { y, ..*self }
    }

    /// `2P`, dbl-2008-s-1 with `a = 0`. Cost: 6M + 3S.
    ///
    /// `U = 2Y, V = U², W = U·V, S = X·V, M = 3X², X3 = M² − 2S, Y3 = M(S − X3) − W·Y, ZZ3 = V·ZZ,
    /// ZZZ3 = W·ZZZ`. The identity needs no branch: `ZZ = 0` gives `ZZ3 = 0`. A point with `y = 0` (order 2; not
    /// in G1 or G2) gives `V = 0`, hence the identity, which is also right.
    #[inline(always)]
    pub fn double(&self) -> Self {
        let u = self.y.double();
        let v = u.square();
        let w = u.mul(&v);
        // ZZ and ZZZ die as soon as possible (lower register pressure); Y3's two products share one
        // Montgomery reduction over Fq (`mul_sub_mul`).
        let zz3 = v.mul(&self.zz);
        let zzz3 = w.mul(&self.zzz);
        let s = self.x.mul(&v);
        let x_sq = self.x.square();
        let m = x_sq.double().add(&x_sq);
        let x3 = m.square().sub(&s.double());
        let y3 = m.mul_sub_mul(&s.sub(&x3), &w, &self.y);
        Self { x: x3, y: y3, zz: zz3, zzz: zzz3 }
    }

    /// `2Q` of an affine point, lifted: mdbl-2008-s-1 (dbl-2008-s-1 with `ZZ = ZZZ = 1`). Cost: 4M + 3S.
    #[inline(always)]
    pub fn double_affine(q: &Affine<F>) -> Self {
        if q.is_identity() {
            return Self::IDENTITY;
        }
        let u = q.y.double();
        let v = u.square();
        let w = u.mul(&v);
        let s = q.x.mul(&v);
        let x_sq = q.x.square();
        let m = x_sq.double().add(&x_sq);
        let x3 = m.square().sub(&s.double());
        let y3 = m.mul_sub_mul(&s.sub(&x3), &w, &q.y);
        Self { x: x3, y: y3, zz: v, zzz: w }
    }

    /// `P + Q` with `Q` affine (mixed addition), madd-2008-s: [`Xyzz::add_affine_lazy`] made canonical.
    #[inline(always)]
    pub fn add_affine(&self, q: &Affine<F>) -> Self {
        self.add_affine_with::<false>(q)
    }

    /// [`Xyzz::add_affine`] with its products out of line when `OUT` ([`crate::field::outlined`]: the MSM's
    /// accumulate loop, whose inlined body outgrew the instruction cache).
    #[inline(always)]
    pub fn add_affine_with<const OUT: bool>(&self, q: &Affine<F>) -> Self {
        self.add_affine_lazy_with::<OUT>(q).canonical()
    }

    /// `P + Q` with `Q` affine (mixed addition), madd-2008-s, on lazily reduced coordinates: `P`'s may be any
    /// representatives in `[0, 2p)` ([`Field`]'s `*_lazy`), `Q`'s canonical, the result's lazy. Over Fq that
    /// drops the final subtraction of all nine products (the sum of two is one). A running sum may stay lazy
    /// across additions and be made canonical once ([`Xyzz::canonical`]; batch addition's lanes, 4% faster), or
    /// be made canonical after each (the MSM's buckets, where that measured faster; docs/log/kernels-notes.md, MSM, "lazy
    /// reduction"). Cost: 8M + 2S (over Fq, `Y3`'s two products share one reduction).
    ///
    /// `U2 = x2·ZZ1, S2 = y2·ZZZ1, P = U2 − X1, R = S2 − Y1, PP = P², PPP = P·PP, Q = X1·PP,
    /// X3 = R² − PPP − 2Q, Y3 = R(Q − X3) − Y1·PPP, ZZ3 = ZZ1·PP, ZZZ3 = ZZZ1·PPP`.
    /// Edge cases: either operand the identity; `P = 0, R = 0` (same point: doubling, on the canonical form);
    /// `P = 0, R != 0` (opposite points: identity). They are rare in an MSM, so they branch. The identity test
    /// of `P` stays exact (`ZZ = 0`, not `≡ 0`): a lazy `ZZ` is a product `ZZ1·PP` of non-zero values (or 1,
    /// or a doubling's), never `≡ 0`, so never `p`.
    ///
    /// The products are ordered so each input dies as early as possible (`Q` after `S2`, `ZZ1`/`ZZZ1` right
    /// after their last use), and the doubling case doubles `P` rather than `Q` so `Q` need not stay live:
    /// register pressure, not multiplications, limits the G2 kernels.
    #[inline(always)]
    pub fn add_affine_lazy(&self, q: &Affine<F>) -> Self {
        self.add_affine_lazy_with::<false>(q)
    }

    /// [`Xyzz::add_affine_lazy`] with its products out of line when `OUT` (see [`Xyzz::add_affine_with`]).
    #[inline(always)]
    pub fn add_affine_lazy_with<const OUT: bool>(&self, q: &Affine<F>) -> Self {
        use crate::field::outlined::{mul_lazy_if as mul, mul_sub_mul_lazy_if as mul_sub_mul, square_lazy_if as square};
        if q.is_identity() {
            return *self;
        }
        if self.is_identity() {
            return Self::from_affine(q);
        }
        let u2 = mul::<OUT, F>(&q.x, &self.zz);
        let s2 = mul::<OUT, F>(&q.y, &self.zzz);
        let p = u2.sub_lazy(&self.x);
        let r = s2.sub_lazy(&self.y);
        if p.is_zero_lazy() {
            return if r.is_zero_lazy() { self.canonical().double() } else { Self::IDENTITY };
        }
        let pp = square::<OUT, F>(&p);
        let ppp = mul::<OUT, F>(&p, &pp);
        let zz3 = mul::<OUT, F>(&self.zz, &pp);
        let zzz3 = mul::<OUT, F>(&self.zzz, &ppp);
        let q1 = mul::<OUT, F>(&self.x, &pp);
        // 2Q as two subtractions: a lazy sum Q + Q could reach 4p.
        let x3 = square::<OUT, F>(&r).sub_lazy(&ppp).sub_lazy(&q1).sub_lazy(&q1);
        let y3 = mul_sub_mul::<OUT, F>(&r, &q1.sub_lazy(&x3), &self.y, &ppp);
        Self { x: x3, y: y3, zz: zz3, zzz: zzz3 }
    }

    /// The same point with canonical coordinates (from lazy ones, see [`Xyzz::add_affine_lazy`]).
    #[inline(always)]
    pub fn canonical(&self) -> Self {
        Self { x: self.x.canonical(), y: self.y.canonical(), zz: self.zz.canonical(), zzz: self.zzz.canonical() }
    }

    /// `P + Q`, both XYZZ (general addition), add-2008-s. Cost: 12M + 2S.
    ///
    /// `U1 = X1·ZZ2, U2 = X2·ZZ1, S1 = Y1·ZZZ2, S2 = Y2·ZZZ1, P = U2 − U1, R = S2 − S1, PP = P², PPP = P·PP,
    /// Q = U1·PP, X3 = R² − PPP − 2Q, Y3 = R(Q − X3) − S1·PPP, ZZ3 = ZZ1·ZZ2·PP, ZZZ3 = ZZZ1·ZZZ2·PPP`.
    /// Same edge cases as [`Xyzz::add_affine`].
    #[inline(always)]
    pub fn add(&self, q: &Self) -> Self {
        if q.is_identity() {
            return *self;
        }
        if self.is_identity() {
            return *q;
        }
        let u1 = self.x.mul(&q.zz);
        let u2 = q.x.mul(&self.zz);
        let s1 = self.y.mul(&q.zzz);
        let s2 = q.y.mul(&self.zzz);
        let zz12 = self.zz.mul(&q.zz);
        let zzz12 = self.zzz.mul(&q.zzz);
        // From here on neither input is live: (U1, S1, ZZ1·ZZ2, ZZZ1·ZZZ2) is P in other coordinates
        // (U1/(ZZ1·ZZ2) = X1/ZZ1, S1/(ZZZ1·ZZZ2) = Y1/ZZZ1), which is what the doubling case doubles.
        let p = u2.sub(&u1);
        let r = s2.sub(&s1);
        if p.is_zero() {
            let p_again = Self { x: u1, y: s1, zz: zz12, zzz: zzz12 };
            return if r.is_zero() { super::outlined::double(&p_again) } else { Self::IDENTITY };
        }
        let pp = p.square();
        let ppp = p.mul(&pp);
        let zz3 = zz12.mul(&pp);
        let zzz3 = zzz12.mul(&ppp);
        let q1 = u1.mul(&pp);
        let x3 = r.square().sub(&ppp).sub(&q1.double());
        let y3 = r.mul_sub_mul(&q1.sub(&x3), &s1, &ppp);
        Self { x: x3, y: y3, zz: zz3, zzz: zzz3 }
    }

    /// Does the point satisfy the curve equation in XYZZ form, `Y² = X³ + b·ZZ³`, with consistent
    /// `ZZ³ = ZZZ²` (or is it the identity)? Cost: 4M + 3S. For tests and debugging.
    #[inline(always)]
    pub fn is_on_curve(&self) -> bool
    where
        F: CurveField,
    {
        let zz_cubed = self.zz.square().mul(&self.zz);
        let consistent = zz_cubed == self.zzz.square();
        let lhs = self.y.square();
        let rhs = self.x.square().mul(&self.x).add(&F::coeff_b().mul(&zz_cubed));
        self.is_identity() | (consistent & (lhs == rhs))
    }
}
