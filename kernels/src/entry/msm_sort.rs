//! The MSM's radix sort kernels (algorithm and layout: [`crate::msm_sort`]). Curve-independent. Each pass is
//! `msm_sort_upsweep`, the spine (`msm_scan_sums` + `msm_scan` over the histogram) and `msm_sort_downsweep`;
//! `msm_sort_offsets` turns the sorted keys into the accumulate stage's bucket offsets.
//!
//! Grids are `(blocks, group)`: `blockIdx.y` is the virtual window `v0 + y` of a group of windows sorted
//! together. Per-window arrays are indexed by `y` (`y · per_window` items, `y · (buckets + 1)` offsets,
//! `hist[y · L]` with `L = 2^bits · blocks`), so the host passes `sorted` and `offsets` from window `v0` on;
//! the digits are indexed by absolute window.
use crate::device::atomic::atomic_add_u32;
use crate::device::{FULL_MASK, SharedArena, block_idx, lane_id, match_any, shfl_idx_u32, shfl_up_u32, sync_threads, sync_warp, thread_idx_x};
use crate::msm::{BaseNaming, DigitLayout, digit_of_word};
use crate::msm_sort::{SORT_BLOCK, SORT_ITEMS, SORT_WARPS, block_items, lower_bound, radix_digit, windows_in};

use super::shared_or_trap;

/// No digit, no rank: a lane without an item.
const NONE: u32 = u32::MAX;

/// [`SORT_ITEMS`] as the bound of `unrolled!`.
const SORT_ITEMS_USIZE: usize = SORT_ITEMS as usize;

/// Calls `f(d)` for thread `t`'s digits of a block-stride loop (`d = t, t + SORT_BLOCK, .. < digit_count`):
/// the block's threads share out a per-digit table of any `2^bits` entries, each digit to one thread.
#[inline(always)]
fn for_each_digit_of_thread(t: u32, digit_count: u32, mut f: impl FnMut(u32)) {
    let mut d = t;
    while d < digit_count {
        f(d);
        d += SORT_BLOCK;
    }
}

/// Where a pass's items come from: the first pass reads the count kernel's digit words (and makes each
/// entry's key and value), later passes the previous pass's keys and values.
#[derive(Clone, Copy)]
struct Source {
    digits: *const u32,
    len: u32,
    layout: DigitLayout,
    /// The bases of the first pass's entries.
    naming: BaseNaming,
    /// Virtual window (absolute).
    v: u32,
    /// Keys and values of the previous pass (this window's part), or null in the first pass.
    keys: *const u32,
    vals: *const u32,
    items: u32,
    /// The virtual window has one window (item `j` is scalar `j`).
    single: bool,
}

impl Source {
    /// The source of pass `pass` for virtual window `v = v0 + y`; `counts[y]` holds the items of later passes.
    ///
    /// # Safety
    /// As the kernels: `counts` holds a word per window of the group, written by the first pass's downsweep.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    unsafe fn new(
        digits: *const u32,
        len: u32,
        layout: DigitLayout,
        naming: BaseNaming,
        v: u32,
        y: u32,
        pass: u32,
        keys: *const u32,
        vals: *const u32,
        per_window: u32,
        counts: *const u32,
    ) -> Source {
        let at = y as usize * per_window as usize;
        let copies = windows_in(v, layout.windows, layout.virtual_windows);
        let (keys, vals, items) = if pass == 0 {
            (core::ptr::null(), core::ptr::null(), copies * len)
        } else {
            // SAFETY: the group's count words exist (caller).
            (keys.wrapping_add(at), vals.wrapping_add(at), unsafe { *counts.add(y as usize) })
        };
        Source { digits, len, layout, naming, v, keys, vals, items, single: copies == 1 }
    }

    /// The first pass's digit word of item `j < items` (0: no entry), its copy `k` (window `k·q + v`) and
    /// its scalar `i`.
    ///
    /// # Safety
    /// `j < self.items` in the first pass; the digits hold `windows · len` words.
    #[inline(always)]
    unsafe fn word(&self, j: u32) -> (u32, u32, u32) {
        // One window per virtual window (no precomputation) needs no division; len >= 1 (the kernels'
        // contract), and checked_div keeps a panic path out of the kernel.
        let k = if self.single { 0 } else { j.checked_div(self.len).unwrap_or(0) };
        let i = j - k * self.len;
        let w = k * self.layout.virtual_windows + self.v;
        // SAFETY: w < windows (j < windows_in · len) and i < len.
        (unsafe { *self.digits.add(w as usize * self.len as usize + i as usize) }, k, i)
    }

    /// The key of item `j < items`, `None` for a zero digit (first pass only).
    ///
    /// # Safety
    /// `j < self.items`; the arrays as in [`Source::new`].
    #[inline(always)]
    unsafe fn key(&self, j: u32) -> Option<u32> {
        if self.keys.is_null() {
            // SAFETY: forwarded.
            let (word, _, _) = unsafe { self.word(j) };
            // Bucket `magnitude − 1`; word 0 (no digit) has no entry.
            if word == 0 { None } else { Some(digit_of_word(word, self.layout.c).0 - 1) }
        } else {
            // SAFETY: j < items <= per_window, inside this window's part.
            Some(unsafe { *self.keys.add(j as usize) })
        }
    }

    /// The key and value of item `j < items`, `None` for a zero digit (first pass only). The first pass makes
    /// the entry word as the counting sort's scatter does ([`BaseNaming::base_index`]).
    ///
    /// # Safety
    /// As [`Source::key`]; the naming's `indices` null or holding `len` words.
    #[inline(always)]
    unsafe fn item(&self, j: u32) -> Option<(u32, u32)> {
        if self.keys.is_null() {
            // SAFETY: forwarded.
            let (word, k, i) = unsafe { self.word(j) };
            if word == 0 {
                return None;
            }
            let (magnitude, negative, _) = digit_of_word(word, self.layout.c);
            // SAFETY: i < len.
            let index = unsafe { self.naming.base_index(i) };
            // DigitLayout::entry for window k·q + v: copy k of the table.
            Some((magnitude - 1, self.layout.copy_entry(k, negative, index)))
        } else {
            // SAFETY: j < items <= per_window, inside this window's part.
            Some(unsafe { (*self.keys.add(j as usize), *self.vals.add(j as usize)) })
        }
    }
}

/// Block `(g, y)` counts the digits (of pass `pass`, `bits` bits) of its items `block_items(g, ..)` of virtual
/// window `v0 + y` into `hist[y · L + d · blocks + g]`, `L = 2^bits · blocks` (every counter written, zero
/// included, so the spine needs no zeroing).
///
/// # Safety
/// Grid `(blocks, group)` with `v0 + group <= q`, [`SORT_BLOCK`] threads, at least `2^bits · 4` bytes of
/// dynamic shared memory. First pass (`pass == 0`): `digits` as [`crate::msm`]'s count kernel wrote them for
/// `len`, `c`, `windows`, `q` (`len >= 1`). Later passes: `keys` holds `group · per_window` words, the
/// previous pass's output, and `counts[y]` the items (`<= per_window`). `hist` holds `group · L` words.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn msm_sort_upsweep(
    digits: *const u32,
    len: u32,
    c: u32,
    windows: u32,
    q: u32,
    v0: u32,
    per_window: u32,
    tiles_per_block: u32,
    pass: u32,
    bits: u32,
    keys: *const u32,
    counts: *const u32,
    hist: *mut u32,
) {
    let (g, y, t) = (block_idx().x, block_idx().y, thread_idx_x());
    let blocks = crate::device::grid_dim().x;
    let layout = DigitLayout { c, windows, virtual_windows: q, stride: 0 };
    // The upsweep counts keys only and makes no entry words: no bases to name.
    let naming = BaseNaming { first: 0, limit: 0, indices: core::ptr::null() };
    // SAFETY: the kernel's contract.
    let source = unsafe { Source::new(digits, len, layout, naming, v0 + y, y, pass, keys, keys, per_window, counts) };
    let digit_count = 1u32 << bits;
    let mut arena = SharedArena::dynamic();
    let counters = shared_or_trap::<u32>(&mut arena, digit_count);
    // SAFETY (shared accesses): indices < digit_count; the barriers separate zeroing, counting and reading,
    // and the counting is atomic.
    for_each_digit_of_thread(t, digit_count, |d| {
        unsafe { counters.set_unchecked(d as usize, 0) };
    });
    unsafe { sync_threads() };
    let (lo, hi) = block_items(g, tiles_per_block, source.items);
    let mut j = lo + t;
    while j < hi {
        // SAFETY: j < items.
        if let Some(key) = unsafe { source.key(j) } {
            unsafe { atomic_add_u32(counters.as_ptr().add(radix_digit(key, pass, bits) as usize), 1) };
        }
        j += SORT_BLOCK;
    }
    unsafe { sync_threads() };
    let hist = hist.wrapping_add(y as usize * digit_count as usize * blocks as usize);
    for_each_digit_of_thread(t, digit_count, |d| {
        // SAFETY: d · blocks + g < L; this block alone writes its column.
        unsafe { hist.add((d * blocks + g) as usize).write(counters.get_unchecked(d as usize)) };
    });
}

/// Block `(g, y)` writes its items of virtual window `v0 + y`, in order, to the positions the spine gives
/// their digit: `out_keys/out_vals[y · per_window + spine[y · (L + 1) + d · blocks + g] + rank]`, `rank` the
/// item's rank among this block's items of digit `d`. Stable. The first pass also stores the window's
/// item count for the later passes (`counts[y] = spine[y · (L + 1) + L]`).
///
/// # Safety
/// Grid and block as [`msm_sort_upsweep`] for the same arguments, at least
/// [`crate::msm_sort::downsweep_shared_bytes`]`(bits)` bytes of dynamic shared memory; `spine` holds the
/// exclusive scan (`L + 1` words per window) of that upsweep's histogram; `indices` null or `len` words;
/// `vals` like `keys`; `out_keys`, `out_vals` hold `group · per_window` words and alias no input; base indices
/// `(w / q) · stride + index < 2^31` (as the counting sort's scatter).
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn msm_sort_downsweep(
    digits: *const u32,
    indices: *const u32,
    len: u32,
    c: u32,
    windows: u32,
    q: u32,
    stride: u32,
    first: u32,
    limit: u32,
    v0: u32,
    per_window: u32,
    tiles_per_block: u32,
    pass: u32,
    bits: u32,
    keys: *const u32,
    vals: *const u32,
    counts: *mut u32,
    spine: *const u32,
    out_keys: *mut u32,
    out_vals: *mut u32,
) {
    let (g, y, t) = (block_idx().x, block_idx().y, thread_idx_x());
    let (lane, warp) = (lane_id(), t / 32);
    let blocks = crate::device::grid_dim().x;
    let digit_count = 1u32 << bits;
    let spine_len = digit_count * blocks;
    let spine = spine.wrapping_add(y as usize * (spine_len as usize + 1));
    if pass == 0 && g == 0 && t == 0 {
        // SAFETY: spine[L] is the window's total; counts has a word per window of the group.
        unsafe { counts.add(y as usize).write(*spine.add(spine_len as usize)) };
    }
    let layout = DigitLayout { c, windows, virtual_windows: q, stride };
    let naming = BaseNaming { first, limit, indices };
    // SAFETY: the kernel's contract (later passes read counts[y], written by the first pass's launch).
    let source = unsafe { Source::new(digits, len, layout, naming, v0 + y, y, pass, keys, vals, per_window, counts) };
    let out_keys = out_keys.wrapping_add(y as usize * per_window as usize);
    let out_vals = out_vals.wrapping_add(y as usize * per_window as usize);

    let mut arena = SharedArena::dynamic();
    // counters[warp · digits + d]: first this warp's items of digit d in the tile, then (after the cross-warp
    // scan) the items of digit d in earlier warps of the tile.
    let counters = shared_or_trap::<u32>(&mut arena, SORT_WARPS * digit_count);
    let totals = shared_or_trap::<u32>(&mut arena, digit_count);
    let starts = shared_or_trap::<u32>(&mut arena, digit_count);
    let cursor = shared_or_trap::<u32>(&mut arena, digit_count);
    let warp_sums = shared_or_trap::<u32>(&mut arena, SORT_WARPS);
    let tile_keys = shared_or_trap::<u32>(&mut arena, SORT_BLOCK * SORT_ITEMS);
    let tile_vals = shared_or_trap::<u32>(&mut arena, SORT_BLOCK * SORT_ITEMS);

    // SAFETY (shared accesses below): every index is < its slice's length (digits < digit_count, warps <
    // SORT_WARPS, tile positions < the tile's valid items <= SORT_TILE); while ranking, a warp touches only its
    // own counter row (atomically), and block barriers separate the phases that read what other threads wrote.
    for_each_digit_of_thread(t, digit_count, |d| {
        unsafe { cursor.set_unchecked(d as usize, *spine.add((d * blocks + g) as usize)) };
    });
    let row = warp * digit_count;
    let (lo, hi) = block_items(g, tiles_per_block, source.items);
    let mut tile = lo;
    while tile < hi {
        let mut d = lane;
        while d < digit_count {
            unsafe { counters.set_unchecked((row + d) as usize, 0) };
            d += 32;
        }
        unsafe { sync_warp(FULL_MASK) };
        // Per item: key, value, and rank among the warp's earlier items of its digit (NONE: no item).
        let mut keys = [0u32; SORT_ITEMS as usize];
        let mut values = [0u32; SORT_ITEMS as usize];
        let mut rank = [NONE; SORT_ITEMS as usize];
        let below = (1u32 << lane) - 1;
        unrolled!(i in 0..SORT_ITEMS_USIZE, {
            let j = tile + (warp * SORT_ITEMS + i as u32) * 32 + lane;
            // SAFETY: j < hi <= items.
            let item = if j < hi { unsafe { source.item(j) } } else { None };
            // Lanes without an item match only each other (NONE is no digit) and count nothing.
            let digit = match item {
                Some((key, value)) => {
                    keys[i] = key;
                    values[i] = value;
                    radix_digit(key, pass, bits)
                }
                None => NONE,
            };
            // The lowest lane of each group of equal digits claims the group's ranks with one shared atomic
            // on this warp's counter and hands the old count to its peers. The shuffle also orders this
            // item's atomics before the next item's.
            // SAFETY: the whole warp executes the match and the shuffle (no early exits in the loop).
            let peers = unsafe { match_any(FULL_MASK, digit) };
            let leader = peers.trailing_zeros();
            let mut seen = 0;
            if digit != NONE && lane == leader {
                seen = unsafe { atomic_add_u32(counters.as_ptr().add((row + digit) as usize), peers.count_ones()) };
            }
            let seen = unsafe { shfl_idx_u32(FULL_MASK, seen, leader) };
            if digit != NONE {
                rank[i] = seen + (peers & below).count_ones();
            }
        });
        unsafe { sync_threads() };
        // Per digit: exclusive sums over the warps, and the tile's total.
        for_each_digit_of_thread(t, digit_count, |d| {
            let mut run = 0u32;
            for w in 0..SORT_WARPS {
                let at = (w * digit_count + d) as usize;
                let count = unsafe { counters.get_unchecked(at) };
                unsafe { counters.set_unchecked(at, run) };
                run += count;
            }
            unsafe { totals.set_unchecked(d as usize, run) };
        });
        unsafe { sync_threads() };
        // starts[d]: the tile's items of digits below d (a block scan; each thread sums a few digits).
        let per = digit_count.div_ceil(SORT_BLOCK);
        let (d_lo, d_hi) = ((t * per).min(digit_count), ((t + 1) * per).min(digit_count));
        let mut own = 0u32;
        for d in d_lo..d_hi {
            own += unsafe { totals.get_unchecked(d as usize) };
        }
        let mut inclusive = own;
        let mut offset = 1;
        while offset < 32 {
            // SAFETY: the whole warp executes it.
            let up = unsafe { shfl_up_u32(FULL_MASK, inclusive, offset) };
            if lane >= offset {
                inclusive += up;
            }
            offset *= 2;
        }
        if lane == 31 {
            unsafe { warp_sums.set_unchecked(warp as usize, inclusive) };
        }
        unsafe { sync_threads() };
        let mut run = inclusive - own;
        for w in 0..warp {
            run += unsafe { warp_sums.get_unchecked(w as usize) };
        }
        // cursor[d] becomes the output position of tile position 0 of digit d (so the write-out needs one
        // lookup per item); it is moved past the tile's items of d after the write-out.
        for d in d_lo..d_hi {
            unsafe {
                starts.set_unchecked(d as usize, run);
                cursor.set_unchecked(d as usize, cursor.get_unchecked(d as usize).wrapping_sub(run));
                run += totals.get_unchecked(d as usize);
            }
        }
        unsafe { sync_threads() };
        // The tile reordered by digit in shared memory.
        unrolled!(i in 0..SORT_ITEMS_USIZE, {
            if rank[i] != NONE {
                let d = radix_digit(keys[i], pass, bits);
                let at = unsafe { starts.get_unchecked(d as usize) + counters.get_unchecked((row + d) as usize) } + rank[i];
                unsafe {
                    tile_keys.set_unchecked(at as usize, keys[i]);
                    tile_vals.set_unchecked(at as usize, values[i]);
                }
            }
        });
        unsafe { sync_threads() };
        let last = digit_count - 1;
        let valid = unsafe { starts.get_unchecked(last as usize) + totals.get_unchecked(last as usize) };
        let mut at = t;
        while at < valid {
            let key = unsafe { tile_keys.get_unchecked(at as usize) };
            let d = radix_digit(key, pass, bits) as usize;
            let position = unsafe { cursor.get_unchecked(d).wrapping_add(at) };
            // SAFETY: the spine gives this block's items of digit d positions [cursor, cursor + its count) of
            // the window's items (< per_window); each position is written by one thread of one block.
            unsafe {
                out_keys.add(position as usize).write(key);
                out_vals.add(position as usize).write(tile_vals.get_unchecked(at as usize));
            }
            at += SORT_BLOCK;
        }
        unsafe { sync_threads() };
        for_each_digit_of_thread(t, digit_count, |d| {
            let next = unsafe { starts.get_unchecked(d as usize) + totals.get_unchecked(d as usize) };
            unsafe { cursor.set_unchecked(d as usize, cursor.get_unchecked(d as usize).wrapping_add(next)) };
        });
        tile += SORT_BLOCK * SORT_ITEMS;
    }
}

/// Thread `b <= buckets` of window `y` writes `offsets[y · (buckets + 1) + b]`: the first position of the
/// window's sorted keys holding bucket `b` or more (`counts[y]` keys in all, so `offsets[.. + buckets]` is the
/// window's entries).
///
/// # Safety
/// Grid `(⌈(buckets + 1) / block⌉, group)`; `keys` holds `group · per_window` words, the last pass's keys
/// (ascending in each window's first `counts[y] <= per_window`); `offsets` `group · (buckets + 1)` words.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn msm_sort_offsets(keys: *const u32, counts: *const u32, per_window: u32, buckets: u32, offsets: *mut u32) {
    let y = block_idx().y as usize;
    let b = block_idx().x * crate::device::block_dim_x() + thread_idx_x();
    if b > buckets {
        return;
    }
    // SAFETY: counts has a word per window; positions < counts[y] lie inside the window's keys.
    let n = unsafe { *counts.add(y) };
    let keys = keys.wrapping_add(y * per_window as usize);
    let first = lower_bound(n, b, |at| unsafe { *keys.add(at as usize) });
    // SAFETY: b <= buckets: inside this window's offsets, written by this thread alone.
    unsafe { offsets.add(y * (buckets as usize + 1) + b as usize).write(first) };
}
