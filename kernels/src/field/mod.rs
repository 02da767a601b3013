//! BLS12-381 fields: [`Fr`] (scalar field, 255 bits), [`Fq`] (base field, 381 bits) and [`Fq2`] = `Fq[u]`/(u²+1).
//!
//! Elements are kept in Montgomery form with 32-bit little-endian limbs (R = 2^256 for Fr, 2^384 for Fq) and are
//! always fully reduced (< p). That is exactly blst's representation (64-bit little-endian limbs; on a
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
/// All elements are canonical (fully reduced), so the derived equality is field equality.
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
    /// Multiplicative inverse; `inverse(0) = 0` so callers need no branch (batch inversion, identity points).
    fn inverse(&self) -> Self;
    fn is_zero(&self) -> bool;
}
