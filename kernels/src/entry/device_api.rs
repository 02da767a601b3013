//! Kernels that exercise the device API (`crate::device`) so the GPU tests can check each primitive against
//! a CPU model: warp shuffles, votes, lane ids, atomics, and the dynamic shared-memory arena (with more than
//! 48 KiB). Launched with 1-D blocks whose size is a multiple of 32 (the tests use 256).
use crate::device::atomic::{atomic_add_u32, atomic_add_u64, atomic_max_u32};
use crate::device::{
    FULL_MASK, SharedArena, ballot, block_dim_x, global_thread_index, lane_id, shfl_down_u32, shfl_idx_u32, shfl_up_u32,
    shfl_xor_u32, shfl_xor_u64, sync_threads, thread_idx_x, vote_all, vote_any,
};

/// Value of element `i`, or 0 for the idle threads past `n` (which still take part in warp operations).
///
/// # Safety
/// `a` is valid for `n` reads.
#[inline(always)]
unsafe fn load_or_zero(a: *const u32, i: usize, n: u32) -> u32 {
    // SAFETY: read only when i < n.
    if i < n as usize { unsafe { *a.add(i) } } else { 0 }
}

/// `out[i]` = sum (wrapping) of the inputs of i's warp, computed with a butterfly of `shfl_xor` (every lane
/// ends with the total). Idle lanes (i >= n) contribute 0.
///
/// # Safety
/// One thread per element, block size a multiple of 32; every lane of every warp runs the shuffles (no
/// early return). `a` valid for `n` reads, `out` for `n` writes, not aliasing.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn device_api_warp_sum_xor(a: *const u32, out: *mut u32, n: u32) {
    let i = global_thread_index();
    // SAFETY: bounds checked inside.
    let mut sum = unsafe { load_or_zero(a, i, n) };
    let mut step = 16;
    while step > 0 {
        // SAFETY: the whole warp executes this loop in lockstep with the full mask.
        sum = sum.wrapping_add(unsafe { shfl_xor_u32(FULL_MASK, sum, step) });
        step /= 2;
    }
    if i < n as usize {
        // SAFETY: i < n.
        unsafe { *out.add(i) = sum };
    }
}

/// `out[i]` = the warp's sum as in [`device_api_warp_sum_xor`], but reduced towards lane 0 with `shfl_down`
/// and broadcast back with `shfl_idx(.., 0)`.
///
/// # Safety
/// As [`device_api_warp_sum_xor`].
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn device_api_warp_sum_down(a: *const u32, out: *mut u32, n: u32) {
    let i = global_thread_index();
    // SAFETY: bounds checked inside.
    let mut sum = unsafe { load_or_zero(a, i, n) };
    let mut step = 16;
    while step > 0 {
        // SAFETY: full warp, full mask.
        sum = sum.wrapping_add(unsafe { shfl_down_u32(FULL_MASK, sum, step) });
        step /= 2;
    }
    // SAFETY: full warp, full mask; lane 0 is in the mask.
    let total = unsafe { shfl_idx_u32(FULL_MASK, sum, 0) };
    if i < n as usize {
        // SAFETY: i < n.
        unsafe { *out.add(i) = total };
    }
}

/// `out[i]` = inclusive prefix sum (wrapping) of the inputs of i's warp up to lane i, with `shfl_up`
/// (Hillis-Steele scan).
///
/// # Safety
/// As [`device_api_warp_sum_xor`].
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn device_api_warp_scan_up(a: *const u32, out: *mut u32, n: u32) {
    let i = global_thread_index();
    let lane = lane_id();
    // SAFETY: bounds checked inside.
    let mut prefix = unsafe { load_or_zero(a, i, n) };
    let mut step = 1;
    while step < 32 {
        // SAFETY: full warp, full mask.
        let below = unsafe { shfl_up_u32(FULL_MASK, prefix, step) };
        if lane >= step {
            prefix = prefix.wrapping_add(below);
        }
        step *= 2;
    }
    if i < n as usize {
        // SAFETY: i < n.
        unsafe { *out.add(i) = prefix };
    }
}

/// `out[i]` = the input of the lane mirrored in the warp (lane 31 - lane), via `shfl_idx`; 0 when that
/// lane is idle. Also checks `lane_id() == threadIdx.x % 32`: a mismatch writes `0xdead_beef`.
///
/// # Safety
/// As [`device_api_warp_sum_xor`].
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn device_api_warp_reverse(a: *const u32, out: *mut u32, n: u32) {
    let i = global_thread_index();
    let lane = lane_id();
    // SAFETY: bounds checked inside.
    let value = unsafe { load_or_zero(a, i, n) };
    // SAFETY: full warp, full mask.
    let mirrored = unsafe { shfl_idx_u32(FULL_MASK, value, 31 - lane) };
    let result = if lane == thread_idx_x() % 32 { mirrored } else { 0xdead_beef };
    if i < n as usize {
        // SAFETY: i < n.
        unsafe { *out.add(i) = result };
    }
}

/// `out[i]` = the warp's 64-bit sum of `a[j] * 2^32 + a[j]` reduced with `shfl_xor_u64`, folded to 32 bits
/// as `lo ^ hi` (checks that both halves travel).
///
/// # Safety
/// As [`device_api_warp_sum_xor`].
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn device_api_warp_sum_u64(a: *const u32, out: *mut u32, n: u32) {
    let i = global_thread_index();
    // SAFETY: bounds checked inside.
    let x = unsafe { load_or_zero(a, i, n) } as u64;
    let mut sum = (x << 32) | x;
    let mut step = 16;
    while step > 0 {
        // SAFETY: full warp, full mask.
        sum = sum.wrapping_add(unsafe { shfl_xor_u64(FULL_MASK, sum, step) });
        step /= 2;
    }
    if i < n as usize {
        // SAFETY: i < n.
        unsafe { *out.add(i) = (sum as u32) ^ ((sum >> 32) as u32) };
    }
}

/// Votes on "the input is odd" (idle lanes vote false): `out[i]` = popcount(ballot) in bits 0..6,
/// `all` in bit 8, `any` in bit 9, and bit 10 set when this lane's own ballot bit equals its vote.
///
/// # Safety
/// As [`device_api_warp_sum_xor`].
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn device_api_votes(a: *const u32, out: *mut u32, n: u32) {
    let i = global_thread_index();
    let lane = lane_id();
    // SAFETY: bounds checked inside (idle lanes read 0: even).
    let odd = unsafe { load_or_zero(a, i, n) } & 1 == 1;
    // SAFETY: every lane of the warp executes the three votes with the full mask.
    let (bits, all, any) = unsafe { (ballot(FULL_MASK, odd), vote_all(FULL_MASK, odd), vote_any(FULL_MASK, odd)) };
    let own = ((bits >> lane) & 1 == 1) == odd;
    let word = bits.count_ones() | (all as u32) << 8 | (any as u32) << 9 | (own as u32) << 10;
    if i < n as usize {
        // SAFETY: i < n.
        unsafe { *out.add(i) = word };
    }
}

/// Histogram with atomics: `bins[a[i] % 256] += 1` for i < n (`bins`: 256 u32s, zeroed by the host);
/// `total[0] += a[i]` as u64 (`total`: one u64); `total[1] = max(a[i])` kept in the low 32 bits through
/// `atomic_max_u32` on a u32 view (`total` as 4 u32s: index 2 is the low half of total[1]).
///
/// # Safety
/// One thread per element; `a` valid for `n` reads; `bins` for 256 u32s; `total` for 2 u64s, 8-aligned,
/// zeroed. Concurrent threads touch `bins` and `total` only atomically.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn device_api_atomics(a: *const u32, bins: *mut u32, total: *mut u64, n: u32) {
    let i = global_thread_index();
    if i < n as usize {
        // SAFETY: i < n; bins has 256 entries and the index is < 256; total is valid, only accessed atomically.
        unsafe {
            let x = *a.add(i);
            atomic_add_u32(bins.add((x % 256) as usize), 1);
            atomic_add_u64(total, x as u64);
            atomic_max_u32(total.add(1).cast::<u32>(), x);
        }
    }
}

/// Per block, values kept in [`device_api_shared_arena`]'s large shared region per thread.
pub const ARENA_SLOTS_PER_THREAD: usize = 64;

/// Shared-memory arena round trip through the launch's dynamic shared memory. Each block carves, in order:
/// 3 `u8`s, `blockDim` `u64`s, `blockDim * 64` `u32`s (64 KiB at 256 threads, so the launch needs the
/// >48 KiB opt-in). Thread t of the block stores its input v (0 when idle) as `words[t] = v << 32 | t` and
/// `slots[t + k * blockDim] = v + k` for k < 64; thread 0 stores bytes 1, 2, 3. After a barrier, thread t reads
/// the partner p = blockDim - 1 - t's values and writes
/// `out[i] = sum_k slots[p + k*blockDim] + (words[p] >> 32) + bytes[0] + bytes[1] + bytes[2]` (wrapping)
/// = 65 * v_p + 2016 + 6, or 0xdead_beef when the launch gave too little shared memory (or `words[p]`'s low
/// half is not p).
///
/// # Safety
/// One thread per element, 1-D blocks; every thread reaches the barrier (no early return). `a` valid for
/// `n` reads, `out` for `n` writes, not aliasing. Threads write only their own shared slots before the
/// barrier and only read after it.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn device_api_shared_arena(a: *const u32, out: *mut u32, n: u32) {
    const FAILED: u32 = 0xdead_beef;
    let i = global_thread_index();
    let t = thread_idx_x() as usize;
    let block = block_dim_x() as usize;
    let mut arena = SharedArena::dynamic();
    let regions = match (arena.alloc::<u8>(3), arena.alloc::<u64>(block)) {
        (Some(bytes), Some(words)) => arena.alloc::<u32>(block * ARENA_SLOTS_PER_THREAD).map(|slots| (bytes, words, slots)),
        _ => None,
    };
    // Every thread computes the same `regions` (same size, same allocation sequence), so either all or none
    // of the block reach the barrier below.
    let Some((bytes, words, slots)) = regions else {
        if i < n as usize {
            // SAFETY: i < n.
            unsafe { *out.add(i) = FAILED };
        }
        return;
    };
    // SAFETY: bounds checked inside.
    let v = unsafe { load_or_zero(a, i, n) };
    // SAFETY: thread t writes only words[t] and slots[t + k*block] (disjoint between threads); thread 0 alone
    // writes the bytes. All indices are in bounds (set also checks).
    unsafe {
        words.set(t, ((v as u64) << 32) | t as u64);
        for k in 0..ARENA_SLOTS_PER_THREAD {
            slots.set(t + k * block, v.wrapping_add(k as u32));
        }
        if t == 0 {
            bytes.set(0, 1);
            bytes.set(1, 2);
            bytes.set(2, 3);
        }
        sync_threads();
    }
    let p = block - 1 - t;
    let mut sum: u32 = 0;
    let mut ok = true;
    // SAFETY: after the barrier nobody writes; every read index was written before it.
    unsafe {
        for k in 0..ARENA_SLOTS_PER_THREAD {
            match slots.get(p + k * block) {
                Some(x) => sum = sum.wrapping_add(x),
                None => ok = false,
            }
        }
        match words.get(p) {
            Some(w) if w as u32 as usize == p => sum = sum.wrapping_add((w >> 32) as u32),
            _ => ok = false,
        }
        for b in 0..3 {
            match bytes.get(b) {
                Some(x) => sum = sum.wrapping_add(x as u32),
                None => ok = false,
            }
        }
    }
    if i < n as usize {
        // SAFETY: i < n.
        unsafe { *out.add(i) = if ok { sum } else { FAILED } };
    }
}

/// Traps at once: how the fault tests put a context into the sticky error state a faulting kernel leaves
/// (every later call in that context fails), to check that the host reports it as `Error::ContextLost`.
///
/// # Safety
/// Touches no memory; any launch shape. It does fault, by design: launch it only in a process that can be
/// discarded (the tests run it in a child process).
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn device_api_trap() {
    // SAFETY: trap ends the kernel with a fault; nothing is read or written.
    unsafe { core::arch::nvptx::trap() }
}
