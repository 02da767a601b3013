//! Fq2 = `Fq[u]`/(u² + 1), the field of G2's coordinates. Bit-identical to `blstrs::Fp2` (c0 then c1).

use super::{Field, Fq};

/// Fq addition/subtraction through the portable path (`PORTABLE`) or the default one, so the `*_portable`
/// variants of Fq2 never touch inline asm.
#[inline(always)]
fn fq_add<const PORTABLE: bool>(a: &Fq, b: &Fq) -> Fq {
    if PORTABLE { a.add_portable(b) } else { a.add(b) }
}
#[inline(always)]
fn fq_sub<const PORTABLE: bool>(a: &Fq, b: &Fq) -> Fq {
    if PORTABLE { a.sub_portable(b) } else { a.sub(b) }
}
#[inline(always)]
fn fq_mul<const PORTABLE: bool>(a: &Fq, b: &Fq) -> Fq {
    if PORTABLE { a.mul_portable(b) } else { a.mul(b) }
}
#[inline(always)]
fn fq_neg<const PORTABLE: bool>(a: &Fq) -> Fq {
    if PORTABLE { a.neg_portable() } else { a.neg() }
}
#[inline(always)]
fn fq_inverse<const PORTABLE: bool>(a: &Fq) -> Fq {
    if PORTABLE { a.inverse_portable() } else { a.inverse() }
}

/// `c0 + c1·u` with u² = -1.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Debug)]
#[repr(C)]
pub struct Fq2 {
    pub c0: Fq,
    pub c1: Fq,
}

impl Fq2 {
    #[inline(always)]
    pub const fn new(c0: Fq, c1: Fq) -> Self {
        Self { c0, c1 }
    }

    /// Karatsuba product (3 Fq multiplications); `P` picks the portable Fq operations.
    #[inline(always)]
    fn mul_with<const P: bool>(&self, rhs: &Self) -> Self {
        let a0b0 = fq_mul::<P>(&self.c0, &rhs.c0);
        let a1b1 = fq_mul::<P>(&self.c1, &rhs.c1);
        let cross = fq_mul::<P>(&fq_add::<P>(&self.c0, &self.c1), &fq_add::<P>(&rhs.c0, &rhs.c1));
        Self { c0: fq_sub::<P>(&a0b0, &a1b1), c1: fq_sub::<P>(&fq_sub::<P>(&cross, &a0b0), &a1b1) }
    }

    /// Karatsuba product with a0b0 and a1b1 folded into c0 and their sum before the cross product, so two Fq
    /// values (not the three products) are live across it. Same IMAD count as `mul`; ptxas (sm_90) gives
    /// 120 instead of 128 registers in a multiplication chain, but in the G2 batch-add kernels at the
    /// 255-register cap the effect is mixed (accumulate: 988 -> 752 B spill stores, affine_level: 16 -> 0,
    /// reduce: 1436 -> 1680), so it is an opt-in per call site, not the default (docs/log/kernels-notes.md "Fr tuning").
    #[inline(always)]
    pub fn mul_lowreg(&self, rhs: &Self) -> Self {
        let a0b0 = self.c0.mul(&rhs.c0);
        let a1b1 = self.c1.mul(&rhs.c1);
        let c0 = a0b0.sub(&a1b1);
        let sum = a0b0.add(&a1b1);
        let cross = self.c0.add(&self.c1).mul(&rhs.c0.add(&rhs.c1));
        Self { c0, c1: cross.sub(&sum) }
    }

    /// (a0 + a1 u)² = (a0 + a1)(a0 - a1) + 2 a0 a1 u: two Fq multiplications.
    #[inline(always)]
    fn square_with<const P: bool>(&self) -> Self {
        let c0 = fq_mul::<P>(&fq_add::<P>(&self.c0, &self.c1), &fq_sub::<P>(&self.c0, &self.c1));
        let prod = fq_mul::<P>(&self.c0, &self.c1);
        Self { c0, c1: fq_add::<P>(&prod, &prod) }
    }

    /// 1 / (a0 + a1 u) = (a0 - a1 u) / (a0² + a1²); the norm is 0 only for 0, and Fq's inverse(0) = 0.
    #[inline(always)]
    fn inverse_with<const P: bool>(&self) -> Self {
        let norm = fq_add::<P>(&fq_mul::<P>(&self.c0, &self.c0), &fq_mul::<P>(&self.c1, &self.c1));
        let inv = fq_inverse::<P>(&norm);
        Self { c0: fq_mul::<P>(&self.c0, &inv), c1: fq_neg::<P>(&fq_mul::<P>(&self.c1, &inv)) }
    }

    #[inline(always)]
    pub fn add_portable(&self, rhs: &Self) -> Self {
        Self { c0: self.c0.add_portable(&rhs.c0), c1: self.c1.add_portable(&rhs.c1) }
    }
    #[inline(always)]
    pub fn sub_portable(&self, rhs: &Self) -> Self {
        Self { c0: self.c0.sub_portable(&rhs.c0), c1: self.c1.sub_portable(&rhs.c1) }
    }
    #[inline(always)]
    pub fn neg_portable(&self) -> Self {
        Self { c0: self.c0.neg_portable(), c1: self.c1.neg_portable() }
    }
    #[inline(always)]
    pub fn double_portable(&self) -> Self {
        self.add_portable(self)
    }
    /// Karatsuba over the portable Fq operations.
    #[inline(always)]
    pub fn mul_portable(&self, rhs: &Self) -> Self {
        self.mul_with::<true>(rhs)
    }
    #[inline(always)]
    pub fn square_portable(&self) -> Self {
        self.square_with::<true>()
    }
    #[inline(always)]
    pub fn inverse_portable(&self) -> Self {
        self.inverse_with::<true>()
    }

    /// Multiplication by an Fq scalar (2 Fq multiplications).
    #[inline(always)]
    pub fn mul_by_fq(&self, k: &Fq) -> Self {
        Self { c0: self.c0.mul(k), c1: self.c1.mul(k) }
    }

    /// Complex conjugate `c0 - c1·u` (the Frobenius map of Fq2).
    #[inline(always)]
    pub fn conjugate(&self) -> Self {
        Self { c0: self.c0, c1: self.c1.neg() }
    }
}

impl Field for Fq2 {
    const ZERO: Self = Self { c0: Fq::ZERO, c1: Fq::ZERO };
    const ONE: Self = Self { c0: Fq::ONE, c1: Fq::ZERO };

    #[inline(always)]
    fn add(&self, rhs: &Self) -> Self {
        Self { c0: self.c0.add(&rhs.c0), c1: self.c1.add(&rhs.c1) }
    }
    #[inline(always)]
    fn sub(&self, rhs: &Self) -> Self {
        Self { c0: self.c0.sub(&rhs.c0), c1: self.c1.sub(&rhs.c1) }
    }
    #[inline(always)]
    fn mul(&self, rhs: &Self) -> Self {
        self.mul_with::<false>(rhs)
    }
    #[inline(always)]
    fn neg(&self) -> Self {
        Self { c0: self.c0.neg(), c1: self.c1.neg() }
    }
    #[inline(always)]
    fn double(&self) -> Self {
        Self { c0: self.c0.double(), c1: self.c1.double() }
    }
    #[inline(always)]
    fn square(&self) -> Self {
        self.square_with::<false>()
    }
    #[inline(always)]
    fn inverse(&self) -> Self {
        self.inverse_with::<false>()
    }
    #[inline(always)]
    fn is_zero(&self) -> bool {
        self.c0.is_zero() && self.c1.is_zero()
    }
}
