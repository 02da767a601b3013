//! 16-byte copies between global and shared memory with explicit state spaces:
//! - [`cp_async16`] / [`cp_async_wait_all`]: global -> shared without registers (`cp.async.cg`, sm_80+), so a
//!   warp can have a whole block of copies in flight while it computes on another;
//! - [`copy16_shared_to_global`]: one `ld.shared.v4` + `st.global.v4` (LLVM splits a plain 16-byte aggregate
//!   copy into two 8-byte ones).

use core::arch::asm;

/// Starts copying 16 bytes from global `src` to shared `dst` (completes at [`cp_async_wait_all`]).
///
/// # Safety
/// `src` is 16 readable bytes of global memory and `dst` 16 writable bytes of shared memory, both 16-byte
/// aligned; nothing reads `dst` before this thread's `cp_async_wait_all` (and, for other threads, a barrier
/// after it), and `src` does not change meanwhile.
#[inline(always)]
pub unsafe fn cp_async16(dst: *mut [u32; 4], src: *const [u32; 4]) {
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!(
            "{{ .reg .b64 %g, %s;",
            "cvta.to.global.u64 %g, {src}; cvta.to.shared.u64 %s, {dst};",
            "cp.async.cg.shared.global [%s], [%g], 16; }}",
            src = in(reg64) src,
            dst = in(reg64) dst,
            options(nostack, preserves_flags),
        )
    }
}

/// Waits until every [`cp_async16`] of this thread has landed (`cp.async.wait_all`). Other threads see the
/// data after a barrier that follows their own wait.
#[inline(always)]
pub fn cp_async_wait_all() {
    // SAFETY: waiting has no preconditions.
    unsafe { asm!("cp.async.wait_all;", options(nostack, preserves_flags)) }
}

/// Copies 16 bytes from shared `src` to global `dst`.
///
/// # Safety
/// `src` is 16 readable bytes of shared memory, `dst` 16 writable bytes of global memory, both 16-byte
/// aligned.
#[inline(always)]
pub unsafe fn copy16_shared_to_global(dst: *mut [u32; 4], src: *const [u32; 4]) {
    // SAFETY: forwarded to the caller.
    unsafe {
        asm!(
            "{{ .reg .b64 %g, %s; .reg .b32 %v<4>;",
            "cvta.to.shared.u64 %s, {src}; cvta.to.global.u64 %g, {dst};",
            "ld.shared.v4.b32 {{%v0, %v1, %v2, %v3}}, [%s];",
            "st.global.v4.b32 [%g], {{%v0, %v1, %v2, %v3}}; }}",
            src = in(reg64) src,
            dst = in(reg64) dst,
            options(nostack, preserves_flags),
        )
    }
}
