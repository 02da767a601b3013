//! G1/G2 test kernels: one point operation per thread, for property tests against blstrs.
//!
//! Every kernel is `arith_{g1,g2}_{op}`; inputs are affine points (`blstrs::G1Affine` / `G2Affine` bytes) and
//! outputs Jacobian points (`blstrs::G1Projective` / `G2Projective` bytes), except the `*_to_affine` round trips,
//! which output affine. The bodies are [`crate::curve::ops`], shared with the host build.
use crate::curve::{Affine, Jacobian, ops};
use crate::device::global_thread_index;
use crate::field::{Fq, Fq2};

/// `out[i] = op(p[i], q[i])` for `i < n`, one thread per element.
macro_rules! binary_point_kernel {
    ($name:ident, $field:ty, $op:path, $what:literal) => {
        #[doc = concat!("`out[i] = ", $what, "` for `i < n` (see [`", stringify!($op), "`]).")]
        ///
        /// # Safety
        /// One thread per element: thread `i` (global x index) reads `p[i]` and `q[i]` and writes `out[i]`;
        /// threads with `i >= n` do nothing. `p` and `q` must be valid for `n` reads and `out` for `n` writes,
        /// all aligned for their types; `out` must not alias `p` or `q`.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(
            p: *const Affine<$field>,
            q: *const Affine<$field>,
            out: *mut Jacobian<$field>,
            n: u32,
        ) {
            let i = global_thread_index();
            if i < n as usize {
                // SAFETY: i < n, and the caller guarantees n valid, non-aliasing elements behind each pointer.
                unsafe { out.add(i).write($op(&*p.add(i), &*q.add(i))) };
            }
        }
    };
}

/// `out[i] = op(p[i])` for `i < n`, one thread per element; `$out` is the output point type.
macro_rules! unary_point_kernel {
    ($name:ident, $field:ty, $out:ident, $op:path, $what:literal) => {
        #[doc = concat!("`out[i] = ", $what, "` for `i < n` (see [`", stringify!($op), "`]).")]
        ///
        /// # Safety
        /// One thread per element: thread `i` (global x index) reads `p[i]` and writes `out[i]`; threads with
        /// `i >= n` do nothing. `p` must be valid for `n` reads and `out` for `n` writes, both aligned for their
        /// types; `out` must not alias `p`.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(p: *const Affine<$field>, out: *mut $out<$field>, n: u32) {
            let i = global_thread_index();
            if i < n as usize {
                // SAFETY: i < n, and the caller guarantees n valid, non-aliasing elements behind each pointer.
                unsafe { out.add(i).write($op(&*p.add(i))) };
            }
        }
    };
}

/// Stamp out the full set of point kernels for one curve.
macro_rules! curve_kernels {
    (
        $field:ty;
        $add_mixed:ident, $add_xyzz:ident, $add_jacobian:ident, $add_mixed_jacobian:ident,
        $double:ident, $double_jacobian:ident, $neg:ident, $xyzz_to_affine:ident, $jacobian_to_affine:ident
    ) => {
        binary_point_kernel!($add_mixed, $field, ops::add_mixed, "p[i] + q[i]");
        binary_point_kernel!($add_xyzz, $field, ops::add_xyzz, "p[i] + q[i]");
        binary_point_kernel!($add_jacobian, $field, ops::add_jacobian, "p[i] + q[i]");
        binary_point_kernel!($add_mixed_jacobian, $field, ops::add_mixed_jacobian, "p[i] + q[i]");
        unary_point_kernel!($double, $field, Jacobian, ops::double, "2 p[i]");
        unary_point_kernel!($double_jacobian, $field, Jacobian, ops::double_jacobian, "2 p[i]");
        unary_point_kernel!($neg, $field, Jacobian, ops::neg, "-p[i]");
        unary_point_kernel!($xyzz_to_affine, $field, Affine, ops::xyzz_to_affine, "p[i]");
        unary_point_kernel!($jacobian_to_affine, $field, Affine, ops::jacobian_to_affine, "p[i]");
    };
}

curve_kernels!(Fq;
    arith_g1_add_mixed, arith_g1_add_xyzz, arith_g1_add_jacobian, arith_g1_add_mixed_jacobian,
    arith_g1_double, arith_g1_double_jacobian, arith_g1_neg, arith_g1_xyzz_to_affine, arith_g1_jacobian_to_affine
);
curve_kernels!(Fq2;
    arith_g2_add_mixed, arith_g2_add_xyzz, arith_g2_add_jacobian, arith_g2_add_mixed_jacobian,
    arith_g2_double, arith_g2_double_jacobian, arith_g2_neg, arith_g2_xyzz_to_affine, arith_g2_jacobian_to_affine
);
