//! Barriers and fences.

use core::arch::asm;
use core::arch::nvptx;

unsafe extern "C" {
    // Convergent intrinsic (LLVM will not duplicate it into divergent paths, unlike inline asm).
    #[link_name = "llvm.nvvm.bar.warp.sync"]
    fn bar_warp_sync(mask: u32);
}

/// `__syncthreads()`: waits until every thread of the block has reached this point, and makes their earlier
/// shared- and global-memory writes visible to the block.
///
/// # Safety
/// Every thread of the block must reach the same barrier (not inside a branch that some threads skip, and
/// not after some threads have returned); otherwise the block deadlocks or behaves undefinedly.
#[inline(always)]
pub unsafe fn sync_threads() {
    // SAFETY: forwarded to the caller.
    unsafe { nvptx::_syncthreads() }
}

/// `__syncwarp(mask)`: waits until every lane named in `mask` has reached this point (memory ordering among
/// them as for `sync_threads`).
///
/// # Safety
/// Every lane in `mask` must execute a `sync_warp` with the same mask, and the calling lane must be in it.
#[inline(always)]
pub unsafe fn sync_warp(mask: u32) {
    // SAFETY: forwarded to the caller.
    unsafe { bar_warp_sync(mask) }
}

/// `__threadfence()`: orders this thread's earlier memory writes before its later ones for every observer
/// on the device (`fence.acq_rel.gpu`).
#[inline(always)]
pub fn thread_fence() {
    // SAFETY: a fence has no preconditions.
    unsafe { asm!("fence.acq_rel.gpu;", options(nostack)) }
}

/// `__threadfence_block()`: as [`thread_fence`], for observers in the same block (`fence.acq_rel.cta`).
#[inline(always)]
pub fn thread_fence_block() {
    // SAFETY: a fence has no preconditions.
    unsafe { asm!("fence.acq_rel.cta;", options(nostack)) }
}
