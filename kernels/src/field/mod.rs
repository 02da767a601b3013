//! BLS12-381 fields: [`Fr`] (scalar field, 255 bits), [`Fq`] (base field, 381 bits) and [`Fq2`] = `Fq[u]`/(u²+1).
//!
//! Elements are kept in Montgomery form with 32-bit little-endian limbs (R = 2^256 for Fr, 2^384 for Fq) and are
//! fully reduced (< p) outside the lazily reduced operations of [`Field`] (< 2p, Fq only). That is exactly blst's representation (64-bit little-endian limbs; on a
//! little-endian machine two 32-bit limbs are one 64-bit limb), so `&[blstrs::Scalar]` can be reinterpreted as
//! `&[Fr]`, `&[blstrs::Fp]` as `&[Fq]` and `&[blstrs::Fp2]` as `&[Fq2]` (tests/layout.rs proves it).
//!
//! Every operation exists in two implementations:
//! - portable Rust ([`mont`]), used on the host and by the `*_portable` methods everywhere;
//! - on nvptx64, inline-PTX carry chains ([`asm`]) that the plain methods (`mul`, `add`, ...) use there.
//!
//! The PTX text of the chains is also available on the host, where [`ptx_emu`] interprets it, so the CPU tests
//! check the very instructions the GPU runs.

pub mod asm;
pub mod inverse;
pub mod mont;
pub mod outlined;
#[cfg(not(target_arch = "nvptx64"))]
pub mod ptx_emu;

pub mod fq;
mod fq2;
pub mod fr;
pub mod fr_f64;
mod prime;

pub use fq::Fq;
pub use fq2::Fq2;
pub use fr::Fr;

/// A field element type usable by generic code (curves over Fq and Fq2 share one implementation).
///
/// Elements are canonical (fully reduced), so the derived equality is field equality; the one exception is
/// the lazily reduced values of the `*_lazy` operations, which must go through [`Field::canonical`] first.
pub trait Field: Copy + Clone + PartialEq + Eq + core::fmt::Debug + Sized + 'static {
    /// Additive identity (all-zero bits).
    const ZERO: Self;
    /// Multiplicative identity, in Montgomery form (R mod p).
    const ONE: Self;
    fn add(&self, rhs: &Self) -> Self;
    fn sub(&self, rhs: &Self) -> Self;
    fn mul(&self, rhs: &Self) -> Self;
    fn neg(&self) -> Self;
    fn double(&self) -> Self;
    fn square(&self) -> Self;
    /// `self·b − c·d`. Fq overrides it with one Montgomery reduction for both products on the GPU (the `Y3`
    /// of every XYZZ addition and doubling has this shape).
    #[inline(always)]
    fn mul_sub_mul(&self, b: &Self, c: &Self, d: &Self) -> Self {
        self.mul(b).sub(&c.mul(d))
    }

    // Lazy reduction: a value may be any representative in `[0, 2p)`, not only the canonical one, so the
    // products skip their final subtraction. Fq overrides these (`prime_field!`'s `lazy`, texts in
    // `asm::ptx_lazy`); elsewhere they are the canonical operations (a canonical value is a lazy one too).
    // Their inputs may be lazy, their outputs are; `canonical` brings a lazy value back to `[0, p)`.

    /// `self·rhs`, lazy.
    #[inline(always)]
    fn mul_lazy(&self, rhs: &Self) -> Self {
        self.mul(rhs)
    }
    /// `self²`, lazy.
    #[inline(always)]
    fn square_lazy(&self) -> Self {
        self.square()
    }
    /// `self − rhs`, lazy.
    #[inline(always)]
    fn sub_lazy(&self, rhs: &Self) -> Self {
        self.sub(rhs)
    }
    /// `self·b − c·d`, lazy (one reduction over Fq, as [`Field::mul_sub_mul`]).
    #[inline(always)]
    fn mul_sub_mul_lazy(&self, b: &Self, c: &Self, d: &Self) -> Self {
        self.mul_sub_mul(b, c, d)
    }
    /// Is the lazy value ≡ 0 (0 or p)?
    #[inline(always)]
    fn is_zero_lazy(&self) -> bool {
        self.is_zero()
    }
    /// The canonical representative of a lazy value.
    #[inline(always)]
    fn canonical(&self) -> Self {
        *self
    }

    /// Multiplicative inverse; `inverse(0) = 0` so callers need no branch (batch inversion, identity points).
    fn inverse(&self) -> Self;
    fn is_zero(&self) -> bool;
}
