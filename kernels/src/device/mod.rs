//! The device API: a small cuda_std-like layer over `core::arch::nvptx`, LLVM NVVM intrinsics and inline PTX.
//! (Owned by the device-API work; placeholder.)
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub fn global_thread_index() -> usize {
    use core::arch::nvptx::*;
    // SAFETY: reading special registers has no preconditions.
    unsafe { (_block_idx_x() as usize) * (_block_dim_x() as usize) + (_thread_idx_x() as usize) }
}
