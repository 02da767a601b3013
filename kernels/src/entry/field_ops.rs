//! Element-wise field kernels `arith_{fr,fq,fq2}_{op}` (default path: inline-PTX chains) and
//! `arith_{fr,fq,fq2}_{op}_portable` (portable Rust on the GPU), used by the GPU tests to compare both
//! implementations against blstrs. One macro stamps out every kernel so the fields cannot drift apart.
use crate::device::global_thread_index;
use crate::field::{Field, Fq, Fq2, Fr};

/// `out[i] = op(a[i], b[i])` for `i < n`.
macro_rules! binary_kernel {
    ($symbol:expr, $fn_name:ident, $t:ty, $op:expr) => {
        #[doc = concat!("Kernel `", $symbol, "`: `out[i] = op(a[i], b[i])` for every `i < n`.")]
        ///
        /// # Safety
        /// One thread per element; threads with `i >= n` return at once. `a` and `b` must be valid for `n` reads
        /// and `out` for `n` writes of the element type; `out` must not alias `a` or `b`. Inputs must be
        /// canonical (< p), as blstrs values always are.
        #[unsafe(export_name = $symbol)]
        pub unsafe extern "ptx-kernel" fn $fn_name(a: *const $t, b: *const $t, out: *mut $t, n: u32) {
            let i = global_thread_index();
            if i < n as usize {
                let op: fn(&$t, &$t) -> $t = $op;
                // SAFETY: i < n and the caller guarantees n valid, non-aliasing elements behind each pointer.
                unsafe { *out.add(i) = op(&*a.add(i), &*b.add(i)) };
            }
        }
    };
}

/// `out[i] = op(a[i])` for `i < n`.
macro_rules! unary_kernel {
    ($symbol:expr, $fn_name:ident, $t:ty, $op:expr) => {
        #[doc = concat!("Kernel `", $symbol, "`: `out[i] = op(a[i])` for every `i < n`.")]
        ///
        /// # Safety
        /// One thread per element; threads with `i >= n` return at once. `a` must be valid for `n` reads and
        /// `out` for `n` writes of the element type; `out` must not alias `a`. Inputs must be canonical (< p).
        #[unsafe(export_name = $symbol)]
        pub unsafe extern "ptx-kernel" fn $fn_name(a: *const $t, out: *mut $t, n: u32) {
            let i = global_thread_index();
            if i < n as usize {
                let op: fn(&$t) -> $t = $op;
                // SAFETY: i < n and the caller guarantees n valid, non-aliasing elements behind each pointer.
                unsafe { *out.add(i) = op(&*a.add(i)) };
            }
        }
    };
}

/// Every kernel of one field, in a module named after it (the exported symbol carries the full name).
macro_rules! field_kernels {
    ($field:ident, $t:ty) => {
        pub mod $field {
            use super::*;
            binary_kernel!(concat!("arith_", stringify!($field), "_add"), add, $t, |a, b| a.add(b));
            binary_kernel!(concat!("arith_", stringify!($field), "_sub"), sub, $t, |a, b| a.sub(b));
            binary_kernel!(concat!("arith_", stringify!($field), "_mul"), mul, $t, |a, b| a.mul(b));
            unary_kernel!(concat!("arith_", stringify!($field), "_neg"), neg, $t, |a| a.neg());
            unary_kernel!(concat!("arith_", stringify!($field), "_double"), double, $t, |a| a.double());
            unary_kernel!(concat!("arith_", stringify!($field), "_sqr"), sqr, $t, |a| a.square());
            unary_kernel!(concat!("arith_", stringify!($field), "_inv"), inv, $t, |a| a.inverse());

            binary_kernel!(concat!("arith_", stringify!($field), "_add_portable"), add_portable, $t, |a, b| a.add_portable(b));
            binary_kernel!(concat!("arith_", stringify!($field), "_sub_portable"), sub_portable, $t, |a, b| a.sub_portable(b));
            binary_kernel!(concat!("arith_", stringify!($field), "_mul_portable"), mul_portable, $t, |a, b| a.mul_portable(b));
            unary_kernel!(concat!("arith_", stringify!($field), "_neg_portable"), neg_portable, $t, |a| a.neg_portable());
            unary_kernel!(concat!("arith_", stringify!($field), "_double_portable"), double_portable, $t, |a| a.double_portable());
            unary_kernel!(concat!("arith_", stringify!($field), "_sqr_portable"), sqr_portable, $t, |a| a.square_portable());
            unary_kernel!(concat!("arith_", stringify!($field), "_inv_portable"), inv_portable, $t, |a| a.inverse_portable());
        }
    };
}

field_kernels!(fr, Fr);
field_kernels!(fq, Fq);
field_kernels!(fq2, Fq2);
