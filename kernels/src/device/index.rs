//! Thread, block and grid coordinates (PTX special registers). All are safe: reading a special register
//! has no preconditions.

use core::arch::asm;
use core::arch::nvptx;

/// Threads in a warp.
pub const WARP_SIZE: u32 = 32;

/// A 3-D extent or coordinate, as CUDA's `dim3`/`uint3`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dim3 {
    /// x component.
    pub x: u32,
    /// y component.
    pub y: u32,
    /// z component.
    pub z: u32,
}

/// `threadIdx.x`: this thread's index in its block.
#[inline(always)]
pub fn thread_idx_x() -> u32 {
    // SAFETY: reads %tid.x.
    unsafe { nvptx::_thread_idx_x() as u32 }
}

/// `blockIdx.x`: this block's index in the grid.
#[inline(always)]
pub fn block_idx_x() -> u32 {
    // SAFETY: reads %ctaid.x.
    unsafe { nvptx::_block_idx_x() as u32 }
}

/// `blockDim.x`: threads per block along x.
#[inline(always)]
pub fn block_dim_x() -> u32 {
    // SAFETY: reads %ntid.x.
    unsafe { nvptx::_block_dim_x() as u32 }
}

/// `gridDim.x`: blocks in the grid along x.
#[inline(always)]
pub fn grid_dim_x() -> u32 {
    // SAFETY: reads %nctaid.x.
    unsafe { nvptx::_grid_dim_x() as u32 }
}

/// `threadIdx` in all three dimensions.
#[inline(always)]
pub fn thread_idx() -> Dim3 {
    // SAFETY: reads %tid.{x,y,z}.
    unsafe { Dim3 { x: nvptx::_thread_idx_x() as u32, y: nvptx::_thread_idx_y() as u32, z: nvptx::_thread_idx_z() as u32 } }
}

/// `blockIdx` in all three dimensions.
#[inline(always)]
pub fn block_idx() -> Dim3 {
    // SAFETY: reads %ctaid.{x,y,z}.
    unsafe { Dim3 { x: nvptx::_block_idx_x() as u32, y: nvptx::_block_idx_y() as u32, z: nvptx::_block_idx_z() as u32 } }
}

/// `blockDim` in all three dimensions.
#[inline(always)]
pub fn block_dim() -> Dim3 {
    // SAFETY: reads %ntid.{x,y,z}.
    unsafe { Dim3 { x: nvptx::_block_dim_x() as u32, y: nvptx::_block_dim_y() as u32, z: nvptx::_block_dim_z() as u32 } }
}

/// `gridDim` in all three dimensions.
#[inline(always)]
pub fn grid_dim() -> Dim3 {
    // SAFETY: reads %nctaid.{x,y,z}.
    unsafe { Dim3 { x: nvptx::_grid_dim_x() as u32, y: nvptx::_grid_dim_y() as u32, z: nvptx::_grid_dim_z() as u32 } }
}

/// This thread's index in a 1-D grid: `blockIdx.x * blockDim.x + threadIdx.x`.
#[inline(always)]
pub fn global_thread_index() -> usize {
    (block_idx_x() as usize) * (block_dim_x() as usize) + (thread_idx_x() as usize)
}

/// Threads in a 1-D grid: `gridDim.x * blockDim.x` (the stride of a grid-stride loop).
#[inline(always)]
pub fn global_thread_count() -> usize {
    (grid_dim_x() as usize) * (block_dim_x() as usize)
}

/// Calls `f(i)` for this thread's indices `i < count` of a grid-stride loop: `global_thread_index()`, then
/// steps of `global_thread_count()`. Any 1-D grid covers any `count`, each index by exactly one thread, so
/// element-wise kernels need no grid sized to their input.
#[inline(always)]
pub fn for_each_index(count: u64, mut f: impl FnMut(u64)) {
    let mut i = global_thread_index() as u64;
    let stride = global_thread_count() as u64;
    while i < count {
        f(i);
        i += stride;
    }
}

/// This thread's lane in its warp (0..32), from `%laneid`.
#[inline(always)]
pub fn lane_id() -> u32 {
    let lane: u32;
    // SAFETY: reads a special register; no memory access.
    unsafe { asm!("mov.u32 {0}, %laneid;", out(reg32) lane, options(pure, nomem, nostack)) };
    lane
}

/// This thread's warp within its block, for 1-D blocks: `threadIdx.x / 32`.
#[inline(always)]
pub fn warp_id_in_block() -> u32 {
    thread_idx_x() / WARP_SIZE
}

/// Bytes of dynamic shared memory this launch was given (`%dynamic_smem_size`, the `shared_mem_bytes` of
/// the launch configuration).
#[inline(always)]
pub fn dynamic_shared_size() -> u32 {
    let bytes: u32;
    // SAFETY: reads a special register; no memory access.
    unsafe { asm!("mov.u32 {0}, %dynamic_smem_size;", out(reg32) bytes, options(pure, nomem, nostack)) };
    bytes
}
