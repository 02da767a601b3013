//! Out-of-line (`#[inline(never)]`) point operations, for code off the hot path.
//!
//! Every curve operation is `#[inline(always)]`, so each call site becomes its whole chain of field-arithmetic
//! asm: a G2 general addition is thousands of PTX lines. The cold stages (trees, bucket reductions, window
//! combination) and the rare doubling inside a general addition call these instead: one `.func` per operation
//! and field in the module, shared by every kernel. That keeps the module small enough to JIT quickly; a call
//! costs little next to the 10+ field multiplications inside. The hot loops (mixed additions in the
//! accumulate kernels, [`Xyzz::add_affine`] with its doubling branch) keep their inlined code: a call there
//! makes ptxas reserve a stack frame and more registers for the whole loop.
use super::{Jacobian, Xyzz};
use crate::field::Field;

/// Operations with an out-of-line form.
pub trait Outlined: Copy {
    /// `2P`.
    fn double_impl(&self) -> Self;
    /// `P + Q`.
    fn add_impl(&self, q: &Self) -> Self;
}

impl<F: Field> Outlined for Xyzz<F> {
    #[inline(always)]
    fn double_impl(&self) -> Self {
        Xyzz::double(self)
    }
    #[inline(always)]
    fn add_impl(&self, q: &Self) -> Self {
        Xyzz::add(self, q)
    }
}

impl<F: Field> Outlined for Jacobian<F> {
    #[inline(always)]
    fn double_impl(&self) -> Self {
        Jacobian::double(self)
    }
    #[inline(always)]
    fn add_impl(&self, q: &Self) -> Self {
        Jacobian::add(self, q)
    }
}

/// `2P`, not inlined.
#[inline(never)]
pub fn double<P: Outlined>(p: &P) -> P {
    p.double_impl()
}

/// `P + Q`, not inlined.
#[inline(never)]
pub fn add<P: Outlined>(p: &P, q: &P) -> P {
    p.add_impl(q)
}

/// `P + Q`: out of line when `OUT`, inlined otherwise (for call sites that choose per curve).
#[inline(always)]
pub fn add_if<const OUT: bool, P: Outlined>(p: &P, q: &P) -> P {
    if OUT { add(p, q) } else { p.add_impl(q) }
}

/// `2P`: out of line when `OUT`, inlined otherwise.
#[inline(always)]
pub fn double_if<const OUT: bool, P: Outlined>(p: &P) -> P {
    if OUT { double(p) } else { p.double_impl() }
}
