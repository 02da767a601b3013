//! Inversion throughput kernels `bench_inv_{fq,fr}_{divsteps,fermat}`: each thread runs a dependent chain
//! `acc = (acc + y).inverse()`, so the kernel time measures inversion latency hidden by occupancy.
//! G inv/s = n * iters / seconds.
//!
//! `divsteps` is `Field::inverse` (Bernstein–Yang, field/inverse.rs); `fermat` is `inverse_fermat`
//! (`a^(p−2)` with the asm multiplication), the implementation it replaced. Adding `y` before each inversion
//! keeps the chain from collapsing (`inv(inv(x)) = x`) and makes every step depend on the previous one.
use crate::device::global_thread_index;
use crate::field::{Field, Fq, Fr};

macro_rules! bench_kernel {
    ($fn_name:ident, $t:ty, $inv:expr) => {
        #[doc = concat!("Kernel `", stringify!($fn_name), "`: thread `i < n` does `x[i] = (x[i] + y[i])⁻¹` `iters` times.")]
        ///
        /// # Safety
        /// One thread per element; threads with `i >= n` return at once. `x` must be valid for `n` reads and
        /// writes, `y` for `n` reads; they must not overlap. Values must be canonical (< p).
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $fn_name(x: *mut $t, y: *const $t, iters: u32, n: u32) {
            let i = global_thread_index();
            if i < n as usize {
                let inv: fn(&$t) -> $t = $inv;
                // SAFETY: i < n; the caller guarantees n valid elements and no overlap.
                let (mut acc, shift) = unsafe { (*x.add(i), *y.add(i)) };
                for _ in 0..iters {
                    acc = inv(&acc.add(&shift));
                }
                // SAFETY: as above.
                unsafe { *x.add(i) = acc };
            }
        }
    };
}

bench_kernel!(bench_inv_fq_divsteps, Fq, |a| Field::inverse(a));
bench_kernel!(bench_inv_fq_fermat, Fq, |a| a.inverse_fermat());
bench_kernel!(bench_inv_fr_divsteps, Fr, |a| Field::inverse(a));
bench_kernel!(bench_inv_fr_fermat, Fr, |a| a.inverse_fermat());
