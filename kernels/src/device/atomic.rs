//! Relaxed atomic read-modify-write on device memory: thin, typed wrappers over `core::sync::atomic`
//! (`AtomicU32::from_ptr(p).fetch_add(..)` compiles to `atom.add.u32`, `atom.global.add.u32` when the
//! pointer is known to be global). They return the previous value, like CUDA's `atomicAdd` & co.
//!
//! Relaxed ordering is what CUDA's `atomicAdd` gives; use `super::sync`'s fences or barriers to order other
//! memory accesses around them. Target-independent (they also run in host tests).

use core::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

macro_rules! atomic_op {
    ($(#[$doc:meta])* $name:ident, $atomic:ident, $int:ty, $method:ident) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// `ptr` must be valid for reads and writes of one aligned value, and while any thread may access it
        /// atomically, no thread may access it non-atomically.
        #[inline(always)]
        pub unsafe fn $name(ptr: *mut $int, value: $int) -> $int {
            // SAFETY: forwarded to the caller (valid, aligned, only accessed atomically meanwhile).
            unsafe { $atomic::from_ptr(ptr) }.$method(value, Relaxed)
        }
    };
}

atomic_op!(/// `*ptr = *ptr + value` (wrapping); returns the old value.
    atomic_add_u32, AtomicU32, u32, fetch_add);
atomic_op!(/// `*ptr = *ptr + value` (wrapping); returns the old value.
    atomic_add_u64, AtomicU64, u64, fetch_add);
atomic_op!(/// `*ptr = *ptr - value` (wrapping); returns the old value.
    atomic_sub_u32, AtomicU32, u32, fetch_sub);
atomic_op!(/// `*ptr = max(*ptr, value)`; returns the old value.
    atomic_max_u32, AtomicU32, u32, fetch_max);
atomic_op!(/// `*ptr = min(*ptr, value)`; returns the old value.
    atomic_min_u32, AtomicU32, u32, fetch_min);
atomic_op!(/// `*ptr = max(*ptr, value)`; returns the old value.
    atomic_max_u64, AtomicU64, u64, fetch_max);
atomic_op!(/// `*ptr |= value`; returns the old value.
    atomic_or_u32, AtomicU32, u32, fetch_or);
atomic_op!(/// `*ptr &= value`; returns the old value.
    atomic_and_u32, AtomicU32, u32, fetch_and);
atomic_op!(/// `*ptr ^= value`; returns the old value.
    atomic_xor_u32, AtomicU32, u32, fetch_xor);
atomic_op!(/// `*ptr = value`; returns the old value.
    atomic_exchange_u32, AtomicU32, u32, swap);
atomic_op!(/// `*ptr = value`; returns the old value.
    atomic_exchange_u64, AtomicU64, u64, swap);

/// `atomicCAS`: if `*ptr == current`, store `new`; returns the value found (equal to `current` on success).
///
/// # Safety
/// As [`atomic_add_u32`].
#[inline(always)]
pub unsafe fn atomic_cas_u32(ptr: *mut u32, current: u32, new: u32) -> u32 {
    // SAFETY: forwarded to the caller.
    match unsafe { AtomicU32::from_ptr(ptr) }.compare_exchange(current, new, Relaxed, Relaxed) {
        Ok(found) | Err(found) => found,
    }
}

/// `atomicCAS` on 64 bits; see [`atomic_cas_u32`].
///
/// # Safety
/// As [`atomic_add_u32`].
#[inline(always)]
pub unsafe fn atomic_cas_u64(ptr: *mut u64, current: u64, new: u64) -> u64 {
    // SAFETY: forwarded to the caller.
    match unsafe { AtomicU64::from_ptr(ptr) }.compare_exchange(current, new, Relaxed, Relaxed) {
        Ok(found) | Err(found) => found,
    }
}
