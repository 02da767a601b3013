//! Out-of-line (`#[inline(never)]`) lazy products, for hot loops whose inlined body outgrows the instruction
//! cache.
//!
//! Every field operation is `#[inline(always)]`: an Fq product is ~390 SASS instructions, so a G1 mixed
//! addition with its nine products inlined is ~4000 (65 KB), and the MSM's accumulate loop stalled on
//! instruction fetch (ncu `no_instruction`, 13% of its stall cycles). Called instead, each product is one
//! `.func` the loop shares: the loop shrinks to the additions, subtractions and calls. The functions use the C
//! ABI, which passes and returns the elements by value in `.param` space; ptxas keeps them in registers (no
//! stack frame or local memory in the SASS). Where a call pays is
//! measured per kernel (docs/log/kernels-notes.md, MSM, "Out-of-line products"): the MSM's G1 accumulate gains 8%,
//! batch addition's lanes lose 3.5%.
use super::Field;

/// `a·b`, lazy ([`Field::mul_lazy`]), not inlined.
#[inline(never)]
pub extern "C" fn mul_lazy<F: Field>(a: F, b: F) -> F {
    a.mul_lazy(&b)
}

/// `a²`, lazy ([`Field::square_lazy`]), not inlined.
#[inline(never)]
pub extern "C" fn square_lazy<F: Field>(a: F) -> F {
    a.square_lazy()
}

/// `a·b − c·d`, lazy ([`Field::mul_sub_mul_lazy`]), not inlined.
#[inline(never)]
pub extern "C" fn mul_sub_mul_lazy<F: Field>(a: F, b: F, c: F, d: F) -> F {
    a.mul_sub_mul_lazy(&b, &c, &d)
}

/// `a·b`, lazy: out of line when `OUT`, inlined otherwise (for call sites that choose per kernel).
#[inline(always)]
pub fn mul_lazy_if<const OUT: bool, F: Field>(a: &F, b: &F) -> F {
    if OUT { mul_lazy(*a, *b) } else { a.mul_lazy(b) }
}

/// `a²`, lazy: out of line when `OUT`, inlined otherwise.
#[inline(always)]
pub fn square_lazy_if<const OUT: bool, F: Field>(a: &F) -> F {
    if OUT { square_lazy(*a) } else { a.square_lazy() }
}

/// `a·b − c·d`, lazy: out of line when `OUT`, inlined otherwise.
#[inline(always)]
pub fn mul_sub_mul_lazy_if<const OUT: bool, F: Field>(a: &F, b: &F, c: &F, d: &F) -> F {
    if OUT { mul_sub_mul_lazy(*a, *b, *c, *d) } else { a.mul_sub_mul_lazy(b, c, d) }
}
