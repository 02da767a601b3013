//! Warp-level primitives: shuffles, votes and matches (`shfl.sync`, `vote.sync`, `match.sync`), all with an explicit lane mask.
//!
//! A lane mask names the lanes that take part (bit i = lane i); [`FULL_MASK`] is the whole warp. Every
//! named lane must execute the same primitive with the same mask (convergence), which is why these are
//! `unsafe`.
//!
//! All of them are LLVM NVVM intrinsics rather than inline asm on purpose: LLVM knows the intrinsics are
//! *convergent* and will not duplicate them into divergent branches, which it may do with an inline-asm
//! `vote.sync` (seen in our PTX) since rustc does not mark asm convergent.

/// All 32 lanes.
pub const FULL_MASK: u32 = 0xffff_ffff;

unsafe extern "C" {
    #[link_name = "llvm.nvvm.shfl.sync.idx.i32"]
    fn shfl_sync_idx_i32(mask: u32, value: u32, lane: u32, clamp: u32) -> u32;
    #[link_name = "llvm.nvvm.shfl.sync.up.i32"]
    fn shfl_sync_up_i32(mask: u32, value: u32, delta: u32, clamp: u32) -> u32;
    #[link_name = "llvm.nvvm.shfl.sync.down.i32"]
    fn shfl_sync_down_i32(mask: u32, value: u32, delta: u32, clamp: u32) -> u32;
    #[link_name = "llvm.nvvm.shfl.sync.bfly.i32"]
    fn shfl_sync_bfly_i32(mask: u32, value: u32, lane_mask: u32, clamp: u32) -> u32;
    #[link_name = "llvm.nvvm.vote.ballot.sync"]
    fn vote_ballot_sync(mask: u32, predicate: bool) -> u32;
    #[link_name = "llvm.nvvm.vote.all.sync"]
    fn vote_all_sync(mask: u32, predicate: bool) -> bool;
    #[link_name = "llvm.nvvm.vote.any.sync"]
    fn vote_any_sync(mask: u32, predicate: bool) -> bool;
    #[link_name = "llvm.nvvm.activemask"]
    fn activemask() -> u32;
    #[link_name = "llvm.nvvm.match.any.sync.i32"]
    fn match_any_sync_i32(mask: u32, value: u32) -> u32;
}

/// The shuffles' `c` operand for a whole-warp segment: lanes may read up to lane 31 (idx/down/xor) and
/// no lower than lane 0 (up).
const CLAMP_TOP: u32 = 0x1f;
const CLAMP_BOTTOM: u32 = 0;

/// `__shfl_sync(mask, value, lane)`: `value` as held by lane `src_lane % 32`.
///
/// # Safety
/// Every lane in `mask` executes this call with the same `mask`; the source lane must be in `mask`
/// (otherwise the result is undefined).
#[inline(always)]
pub unsafe fn shfl_idx_u32(mask: u32, value: u32, src_lane: u32) -> u32 {
    // SAFETY: forwarded to the caller.
    unsafe { shfl_sync_idx_i32(mask, value, src_lane, CLAMP_TOP) }
}

/// `__shfl_up_sync`: `value` as held by lane `lane_id - delta`; lanes below `delta` get their own value.
///
/// # Safety
/// As [`shfl_idx_u32`].
#[inline(always)]
pub unsafe fn shfl_up_u32(mask: u32, value: u32, delta: u32) -> u32 {
    // SAFETY: forwarded to the caller.
    unsafe { shfl_sync_up_i32(mask, value, delta, CLAMP_BOTTOM) }
}

/// `__shfl_down_sync`: `value` as held by lane `lane_id + delta`; lanes above `31 - delta` get their own.
///
/// # Safety
/// As [`shfl_idx_u32`].
#[inline(always)]
pub unsafe fn shfl_down_u32(mask: u32, value: u32, delta: u32) -> u32 {
    // SAFETY: forwarded to the caller.
    unsafe { shfl_sync_down_i32(mask, value, delta, CLAMP_TOP) }
}

/// `__shfl_xor_sync`: `value` as held by lane `lane_id ^ lane_mask` (butterfly exchange).
///
/// # Safety
/// As [`shfl_idx_u32`].
#[inline(always)]
pub unsafe fn shfl_xor_u32(mask: u32, value: u32, lane_mask: u32) -> u32 {
    // SAFETY: forwarded to the caller.
    unsafe { shfl_sync_bfly_i32(mask, value, lane_mask, CLAMP_TOP) }
}

/// [`shfl_idx_u32`] for a `u64` (two 32-bit shuffles).
///
/// # Safety
/// As [`shfl_idx_u32`].
#[inline(always)]
pub unsafe fn shfl_idx_u64(mask: u32, value: u64, src_lane: u32) -> u64 {
    // SAFETY: forwarded to the caller.
    unsafe {
        let lo = shfl_idx_u32(mask, value as u32, src_lane);
        let hi = shfl_idx_u32(mask, (value >> 32) as u32, src_lane);
        ((hi as u64) << 32) | lo as u64
    }
}

/// [`shfl_xor_u32`] for a `u64` (two 32-bit shuffles).
///
/// # Safety
/// As [`shfl_idx_u32`].
#[inline(always)]
pub unsafe fn shfl_xor_u64(mask: u32, value: u64, lane_mask: u32) -> u64 {
    // SAFETY: forwarded to the caller.
    unsafe {
        let lo = shfl_xor_u32(mask, value as u32, lane_mask);
        let hi = shfl_xor_u32(mask, (value >> 32) as u32, lane_mask);
        ((hi as u64) << 32) | lo as u64
    }
}

/// `__ballot_sync`: bit i is set when lane i (in `mask`) has `predicate` true.
///
/// # Safety
/// Every lane in `mask` executes this call with the same `mask`, and the calling lane is in `mask`.
#[inline(always)]
pub unsafe fn ballot(mask: u32, predicate: bool) -> u32 {
    // SAFETY: forwarded to the caller.
    unsafe { vote_ballot_sync(mask, predicate) }
}

/// `__all_sync`: whether `predicate` is true on every lane in `mask`.
///
/// # Safety
/// As [`ballot`].
#[inline(always)]
pub unsafe fn vote_all(mask: u32, predicate: bool) -> bool {
    // SAFETY: forwarded to the caller.
    unsafe { vote_all_sync(mask, predicate) }
}

/// `__any_sync`: whether `predicate` is true on at least one lane in `mask`.
///
/// # Safety
/// As [`ballot`].
#[inline(always)]
pub unsafe fn vote_any(mask: u32, predicate: bool) -> bool {
    // SAFETY: forwarded to the caller.
    unsafe { vote_any_sync(mask, predicate) }
}

/// `__match_any_sync`: the lanes in `mask` whose `value` equals this lane's (`match.any.sync.b32`, sm_70+).
///
/// # Safety
/// As [`ballot`].
#[inline(always)]
pub unsafe fn match_any(mask: u32, value: u32) -> u32 {
    // SAFETY: forwarded to the caller.
    unsafe { match_any_sync_i32(mask, value) }
}

/// `__activemask()`: the lanes executing this instruction together right now (no synchronisation implied).
#[inline(always)]
pub fn active_mask() -> u32 {
    // SAFETY: no preconditions.
    unsafe { activemask() }
}
