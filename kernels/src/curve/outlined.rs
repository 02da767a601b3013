//! Out-of-line (`#[inline(never)]`) point operations, for code off the hot path.
//!
//! Every curve operation is `#[inline(always)]`, so each call site becomes its whole chain of field-arithmetic
//! asm: a G2 general addition is thousands of PTX lines. The cold stages (trees, bucket reductions, window
//! combination) and the rare doubling inside a general addition call these instead: one `.func` per operation
//! and field in the module, shared by every kernel. That keeps the module small enough to JIT quickly; a call
//! costs little next to the 10+ field multiplications inside. The hot loops (mixed additions in the
//! accumulate kernels, [`Xyzz::add_affine`] with its doubling branch) keep their inlined code: a call there
//! makes ptxas reserve a stack frame and more registers for the whole loop.
//!
//! Loops call the in-place forms ([`add_assign`], [`double_assign`]) and move points with
//! [`Outlined::assign`]. A point passed by reference lives in local memory, and a whole-point copy between
//! memory locations is a `memcpy` of 144 to 384 bytes, which LLVM's NVPTX backend expands into a
//! byte-by-byte loop above 128 bytes. Seen in the PTX: 192-iteration `ld/st.b8` loops around every call, and
//! byte stores to global memory. Copying one coordinate at a time (48 or 96 bytes) gives wide loads and stores.
use super::{Jacobian, Xyzz};
use crate::field::Field;

/// Operations with an out-of-line form.
pub trait Outlined: Copy {
    /// `2P`.
    fn double_impl(&self) -> Self;
    /// `P + Q`.
    fn add_impl(&self, q: &Self) -> Self;
    /// `self ← src`, one coordinate at a time (see the module docs).
    fn assign(&mut self, src: &Self);
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
    #[inline(always)]
    fn assign(&mut self, src: &Self) {
        self.x = src.x;
        self.y = src.y;
        self.zz = src.zz;
        self.zzz = src.zzz;
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
    #[inline(always)]
    fn assign(&mut self, src: &Self) {
        self.x = src.x;
        self.y = src.y;
        self.z = src.z;
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

/// `acc ← acc + q`, not inlined.
#[inline(never)]
pub fn add_assign<P: Outlined>(acc: &mut P, q: &P) {
    let sum = acc.add_impl(q);
    acc.assign(&sum);
}

/// `acc ← 2·acc`, not inlined.
#[inline(never)]
pub fn double_assign<P: Outlined>(acc: &mut P) {
    let twice = acc.double_impl();
    acc.assign(&twice);
}

/// `acc ← acc + q`: out of line when `OUT`, inlined otherwise (for call sites that choose per curve).
#[inline(always)]
pub fn add_assign_if<const OUT: bool, P: Outlined>(acc: &mut P, q: &P) {
    if OUT {
        add_assign(acc, q)
    } else {
        let sum = acc.add_impl(q);
        acc.assign(&sum);
    }
}

/// `acc ← 2·acc`: out of line when `OUT`, inlined otherwise.
#[inline(always)]
pub fn double_assign_if<const OUT: bool, P: Outlined>(acc: &mut P) {
    if OUT {
        double_assign(acc)
    } else {
        let twice = acc.double_impl();
        acc.assign(&twice);
    }
}
