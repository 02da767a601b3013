//! A trivial kernel that proves the toolchain, module loading and launch path work end to end.
use crate::device::global_thread_index;

/// `out[i] = a[i] + b[i]` (wrapping) for `i < n`.
///
/// # Safety
/// One thread per element; threads with `i >= n` do nothing. `a` and `b` must be valid for `n` reads,
/// `out` for `n` writes, and `out` must not alias `a` or `b`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn smoke_add_u32(a: *const u32, b: *const u32, out: *mut u32, n: u32) {
    let i = global_thread_index();
    if i < n as usize {
        // SAFETY: i < n and the caller guarantees n valid elements.
        unsafe { *out.add(i) = (*a.add(i)).wrapping_add(*b.add(i)) };
    }
}
