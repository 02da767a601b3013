//! Multiplication throughput kernels `bench_mul_{fq,fr}_{asm,portable}`: each thread runs a dependent chain of
//! Montgomery multiplications, so the kernel time measures multiply latency hidden by occupancy, i.e. the
//! IMAD throughput the arithmetic reaches. G mul/s = n * iters / seconds.
use crate::device::global_thread_index;
use crate::field::{Field, Fq, Fr};

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
