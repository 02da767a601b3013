//! Multiplication throughput kernels `bench_mul_{fq,fr}_{asm,portable}`: each thread runs a dependent chain of
//! Montgomery multiplications, so the kernel time measures multiply latency hidden by occupancy, i.e. the
//! IMAD throughput the arithmetic reaches. G mul/s = n * iters / seconds.
//!
//! Besides `asm` (the default `Field::mul`; for Fr it reads the reduction factor -r^-1 mod 2^32 = 2^32 - 1
//! from the constant bank, so ptxas cannot rewrite m = -E[0] and split the m·r products) and `portable`, Fr has
//! tuning variants (see docs/log/kernels-notes.md, "Fr tuning"): `constinv_lazy` (the default without the final
//! subtraction inside the chain; canonical once at the end) and `modreg` (also the modulus limbs in registers),
//! and `fp64`, the products on the FP64 pipe (`field::fr_f64`, docs/log/kernels-notes.md "Fr on the FP64 pipe"), and
//! `hybrid`, both pipes at once (even warps `constinv_lazy`, odd warps `fp64`).
use crate::device::global_thread_index;
use crate::field::fr_f64::FrF64;
use crate::field::{fr, Field, Fq, Fr};

/// Fr's modulus, read with a volatile load so neither LLVM nor ptxas knows the values (opaque registers).
static FR_MODULUS_OPAQUE: [u32; 8] = Fr::MODULUS;

/// The Fr modulus in registers, loaded once per thread from memory.
#[inline(always)]
fn opaque_fr_modulus() -> [u32; 8] {
    // SAFETY: reading an immutable static of plain integers.
    unsafe { core::ptr::read_volatile(&FR_MODULUS_OPAQUE) }
}

macro_rules! bench_kernel {
    ($symbol:literal, $fn_name:ident, $t:ty, $mul:expr) => {
        #[doc = concat!("Kernel `", $symbol, "`: thread `i < n` does `x[i] = x[i] * y[i]` `iters` times.")]
        ///
        /// # Safety
        /// One thread per element; threads with `i >= n` return at once. `x` must be valid for `n` reads and
        /// writes, `y` for `n` reads; they must not overlap. Values must be canonical (< p).
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $fn_name(x: *mut $t, y: *const $t, iters: u32, n: u32) {
            let i = global_thread_index();
            if i < n as usize {
                let mul: fn(&$t, &$t) -> $t = $mul;
                // SAFETY: i < n; the caller guarantees n valid elements and no overlap.
                let (mut acc, factor) = unsafe { (*x.add(i), *y.add(i)) };
                for _ in 0..iters {
                    acc = mul(&acc, &factor);
                }
                // SAFETY: as above.
                unsafe { *x.add(i) = acc };
            }
        }
    };
}

bench_kernel!("bench_mul_fq_asm", bench_mul_fq_asm, Fq, |a, b| a.mul(b));
bench_kernel!("bench_mul_fq_portable", bench_mul_fq_portable, Fq, |a, b| a.mul_portable(b));
bench_kernel!("bench_mul_fr_asm", bench_mul_fr_asm, Fr, |a, b| a.mul(b));
bench_kernel!("bench_mul_fr_portable", bench_mul_fr_portable, Fr, |a, b| a.mul_portable(b));

/// Kernel `bench_mul_fr_modreg`: as `bench_mul_fr_asm`, with the modulus in registers (`fr::ptx::mul_modreg`).
///
/// # Safety
/// One thread per element; threads with `i >= n` return at once. `x` must be valid for `n` reads and writes,
/// `y` for `n` reads; they must not overlap. Values must be canonical (< r).
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn bench_mul_fr_modreg(x: *mut Fr, y: *const Fr, iters: u32, n: u32) {
    let i = global_thread_index();
    if i < n as usize {
        let p = opaque_fr_modulus();
        // SAFETY: i < n; the caller guarantees n valid elements and no overlap.
        let (mut acc, factor) = unsafe { ((*x.add(i)).limbs(), (*y.add(i)).limbs()) };
        for _ in 0..iters {
            acc = fr::ptx::mul_modreg(&acc, &factor, &p);
        }
        // SAFETY: as above.
        unsafe { *x.add(i) = Fr::from_limbs(acc) };
    }
}

/// The `constinv_lazy` chain: `x·y^iters` with the IMAD multiplication without its final subtraction (the
/// value stays < 2r because y < r and 2r < 2^256), canonical once at the end (`+ 0`).
#[inline(always)]
fn chain_constinv_lazy(x: &Fr, y: &Fr, iters: u32) -> Fr {
    let (mut acc, factor) = (x.limbs(), y.limbs());
    for _ in 0..iters {
        acc = fr::ptx::mul_constinv_lazy(&acc, &factor);
    }
    Fr::from_limbs(acc).add(&Fr::ZERO)
}

/// The `fp64` chain: `x·y^iters` with the products on the FP64 pipe ([`FrF64::mul`] by `16·y`, the value in
/// radix-2^52 digits below 2r), canonical once at the end.
#[inline(always)]
fn chain_fp64(x: &Fr, y: &Fr, iters: u32) -> Fr {
    let (mut acc, factor) = (FrF64::from_fr(x), FrF64::factor(y));
    for _ in 0..iters {
        acc = acc.mul(&factor);
    }
    acc.to_fr()
}

macro_rules! bench_chain_kernel {
    ($(#[$doc:meta])* $fn_name:ident, |$i:ident, $x:ident, $y:ident, $iters:ident| $chain:expr) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// As `bench_mul_fr_modreg`.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $fn_name(x: *mut Fr, y: *const Fr, iters: u32, n: u32) {
            let $i = global_thread_index();
            if $i < n as usize {
                let $iters = iters;
                // SAFETY: i < n; the caller guarantees n valid elements and no overlap.
                let ($x, $y) = unsafe { (*x.add($i), *y.add($i)) };
                let out = $chain;
                // SAFETY: as above.
                unsafe { *x.add($i) = out };
            }
        }
    };
}

bench_chain_kernel!(
    /// Kernel `bench_mul_fr_constinv_lazy`: as `bench_mul_fr_asm` without the final subtraction in the chain.
    bench_mul_fr_constinv_lazy, |i, x, y, iters| chain_constinv_lazy(&x, &y, iters)
);
bench_chain_kernel!(
    /// Kernel `bench_mul_fr_fp64`: the products on the FP64 pipe ([`FrF64::mul`]); same results.
    bench_mul_fr_fp64, |i, x, y, iters| chain_fp64(&x, &y, iters)
);
bench_chain_kernel!(
    /// Kernel `bench_mul_fr_hybrid`: even warps run the `constinv_lazy` chain (IMAD pipe), odd warps the
    /// `fp64` chain (FP64 pipe), so each scheduler can feed both pipes at once; same results.
    bench_mul_fr_hybrid,
    |i, x, y, iters| if (i / 32) % 2 == 0 { chain_constinv_lazy(&x, &y, iters) } else { chain_fp64(&x, &y, iters) }
);
