//! MSM kernels (algorithm, stages and thread mapping: [`crate::msm`]).
//!
//! Curve-independent (scalars are `blstrs::Scalar` bytes):
//! - `msm_count(scalars, indices, len, c, windows, q, first, limit, counts, digits, bad)`: grid ⌈len / block⌉;
//!   bucket histograms and every window's digit;
//! - `msm_scan_sums(counts, buckets, sums)` then `msm_scan(counts, buckets, sums, offsets, cursors)`: grid
//!   `(⌈buckets / SCAN_SPAN⌉, q)`, [`SCAN_BLOCK`] threads, shared memory `SCAN_BLOCK · 4` bytes; exclusive
//!   prefix sums per virtual window, each window cut into parts of [`SCAN_SPAN`] buckets;
//! - `msm_scatter(digits, indices, len, c, windows, q, stride, first, limit, cursors, sorted, per_window,
//!   bucket_lo, bucket_hi)`: grid `(⌈len / block⌉, windows)`; the counting sort's scatter for the buckets
//!   `[bucket_lo, bucket_hi)`, window by window (`indices` null for dense scalars).
//!
//! Per curve `C` in {g1, g2} (bases `blstrs::G1Affine` / `G2Affine` bytes; sums XYZZ; the window sums,
//! which the host combines, Jacobian, i.e. `G1Projective` / `G2Projective` bytes):
//! - `msm_{C}_accumulate(bases, sorted, per_window, offsets, buckets, seg, slots, partials)`: grid
//!   `(⌈⌈per_window / seg⌉ / block⌉, q)`; one segment of sorted entries per thread;
//! - `msm_{C}_accumulate_affine(bases, sorted, per_window, offsets, buckets, seg, slots, partials, rounds,
//!   first_window, scratch)`: grid `(⌈⌈per_window / seg⌉ / block⌉, windows of this launch)`; the same with
//!   affine additions (variant `affine`);
//! - `msm_{C}_fold(offsets, buckets, seg, partials, slots)`: grid `(⌈⌈segments / FOLD_RUNS⌉ / block⌉, q)`;
//! - `msm_{C}_fixup(offsets, buckets, seg, partials, slots, bucket_sums, first)`: grid `(⌈buckets / block⌉, q)`;
//!   `msm_{C}_fixup_spanning(..)` (same arguments): grid `(⌈(segments − 1) / block⌉, q)`, the buckets spanning
//!   segments;
//! - `msm_{C}_reduce(bucket_sums, buckets, run, shares)`: grid `(⌈⌈buckets / run⌉ / block⌉, q)`;
//! - `msm_{C}_precompute(table, n, shift, copies)`: grid ⌈n / block⌉; shifted copies of the bases.
//!
//! `OUT` (a const parameter of the bodies) picks out-of-line point operations for the cold kernels (G1) or
//! inlined ones (G2).
//!
//! The per-window sums of the reduce shares are made by `set_sum_{C}_reduce` / `_finish`.
use crate::curve::outlined::{self, Outlined};
use crate::curve::{Affine, Xyzz};
use crate::device::{block_dim_x, block_idx, global_thread_index, grid_dim, sync_threads, thread_idx_x};
use crate::device::atomic::atomic_add_u32;
use crate::field::{Field, Fq, Fq2, Fr};
use crate::msm::{
    AffineScratch, BaseNaming, DigitLayout, NEG_FLAG, SCAN_BLOCK, SCAN_PER_THREAD, SCAN_SPAN, accumulate_segment, accumulate_segment_affine, entry_point, bucket_runs_sum, canonical, digit_of_word, digit_word, rank_overflow,
    fold_group, for_each_digit, in_one_segment, spanning_bucket, weighted_bucket_sum, WindowWidths,
};

use super::shared_or_trap;

/// Thread `i < len` adds one to `counts[v · buckets + b]` for each entry `(v, b)` of chunk scalar `i` (unless
/// `counts` is null: the radix sort needs only the digits) and stores the signed digit of every window `w`
/// with the counter's old value, the entry's rank in its bucket, at `digits[w · len + i]` ([`digit_word`], 0
/// for none), so the scatter can go window by window and needs no atomic for ranks below
/// [`rank_overflow`]. With `indices` given (sparse scalars), a base index `indices[i] − first` (wrapping)
/// `>= limit` is counted in `*bad` (once per scalar; [`BaseNaming`]).
///
/// # Safety
/// One thread per scalar (threads `>= len` return); `scalars` holds `len` scalars and `indices` (unless null)
/// `len` indices; `counts` (unless null) holds `q · 2^(c−1)` counters and `bad` one, only accessed atomically during the
/// launch; `digits` holds `windows · len` words; `1 <= c <= 24`, `windows = ⌈256 / c⌉`, `1 <= q <= windows`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn msm_count(
    scalars: *const Fr,
    indices: *const u32,
    len: u32,
    c: u32,
    windows: u32,
    q: u32,
    first: u32,
    limit: u32,
    counts: *mut u32,
    digits: *mut u32,
    bad: *mut u32,
) {
    let i = global_thread_index();
    if i >= len as usize {
        return;
    }
    let layout = DigitLayout { c, windows, virtual_windows: q, stride: 0 };
    let buckets = layout.buckets();
    // SAFETY: i < len, and indices (when given) holds len entries.
    let s = unsafe { *scalars.add(i) };
    if !indices.is_null() && unsafe { BaseNaming { first, limit, indices }.named_index(i as u32) } >= limit {
        // SAFETY: the counter exists and is only accessed atomically.
        unsafe { atomic_add_u32(bad, 1) };
    }
    let store = |w: u32, word: u32| {
        // SAFETY: w < windows and i < len, so the word is inside digits; only this thread writes it.
        unsafe { digits.add(w as usize * len as usize + i).write(word) };
    };
    let mut next = 0;
    for_each_digit(&canonical(&s), layout.widths(), windows, |w, magnitude, negative| {
        while next < w {
            store(next, 0);
            next += 1;
        }
        let rank = if counts.is_null() {
            0
        } else {
            let (v, b, _) = layout.entry(w, magnitude, negative, 0);
            // SAFETY: v < q and b < buckets, so the counter exists; only atomic accesses meanwhile.
            unsafe { atomic_add_u32(counts.add((v * buckets + b) as usize), 1) }
        };
        store(w, digit_word(magnitude, negative, rank, c));
        next = w + 1;
    });
    while next < windows {
        store(next, 0);
        next += 1;
    }
}

/// Block `(p, v)` writes `sums[v · parts + p]`, the sum of part `p` of window `v`'s counts: buckets
/// `[p · SCAN_SPAN, (p + 1) · SCAN_SPAN)` (`parts = ⌈buckets / SCAN_SPAN⌉`), the first of [`msm_scan`]'s inputs.
///
/// # Safety
/// Grid `(parts, q)`, [`SCAN_BLOCK`] threads, at least `SCAN_BLOCK · 4` bytes of dynamic shared memory.
/// `counts` holds `q · buckets` entries, `sums` `q · parts`; no aliasing. Thread `t` reads buckets
/// `[t·k, (t+1)·k)` of its part (`k` = [`SCAN_PER_THREAD`]); totals fit u32.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn msm_scan_sums(counts: *const u32, buckets: u32, sums: *mut u32) {
    let (p, v) = (block_idx().x, block_idx().y);
    let own = scan_part_own(counts, buckets, p, v);
    let mut arena = crate::device::SharedArena::dynamic();
    let scan = shared_or_trap::<u32>(&mut arena, SCAN_BLOCK);
    // SAFETY: every thread reaches every barrier; slots < SCAN_BLOCK.
    let total = unsafe { block_sum(&scan, own) };
    if thread_idx_x() == 0 {
        // SAFETY: p < parts and v < q: the slot exists; only this block writes it.
        unsafe { sums.add((v * grid_dim().x + p) as usize).write(total) };
    }
}

/// Block `(p, v)` turns part `p` of window `v`'s counts into `offsets[v · (buckets + 1) ..]` (exclusive prefix
/// sums over the window, the window's total at `offsets[v][buckets]`) and the same values in `cursors`
/// (`cursors[v · buckets + b]`), starting from the sum of the parts before it (`sums`, from
/// [`msm_scan_sums`]). Many blocks per window: a window of 2^21 buckets is 256 blocks, not one.
///
/// # Safety
/// Grid `(parts, q)` with `parts = ⌈buckets / SCAN_SPAN⌉ <= SCAN_BLOCK`, [`SCAN_BLOCK`] threads, at least
/// `SCAN_BLOCK · 4` bytes of dynamic shared memory. `counts` and `cursors` hold `q · buckets` entries,
/// `offsets` `q · (buckets + 1)`, `sums` the `q · parts` part sums of these counts; totals fit u32; no
/// aliasing. Thread `t` writes buckets `[t·k, (t+1)·k)` of its part only.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn msm_scan(counts: *const u32, buckets: u32, sums: *const u32, offsets: *mut u32, cursors: *mut u32) {
    let (p, v) = (block_idx().x, block_idx().y);
    let parts = grid_dim().x;
    let t = thread_idx_x();
    let mut arena = crate::device::SharedArena::dynamic();
    let scan = shared_or_trap::<u32>(&mut arena, SCAN_BLOCK);
    // The parts before this one (parts <= SCAN_BLOCK: one per thread at most).
    // SAFETY: t < p <= parts: the part sum exists.
    let earlier = if t < p { unsafe { *sums.add((v * parts + t) as usize) } } else { 0 };
    // SAFETY: every thread reaches every barrier; slots < SCAN_BLOCK.
    let base = unsafe { block_sum(&scan, earlier) };
    let own = scan_part_own(counts, buckets, p, v);
    // Inclusive Hillis–Steele scan of `own` over the block; every thread reaches every barrier.
    // SAFETY: t < SCAN_BLOCK = scan.len(); barriers order each step's reads before its writes.
    let inclusive = unsafe {
        sync_threads();
        scan.set_unchecked(t as usize, own);
        let mut d = 1;
        while d < SCAN_BLOCK {
            sync_threads();
            let add = if t >= d { scan.get_unchecked((t - d) as usize) } else { 0 };
            sync_threads();
            scan.set_unchecked(t as usize, scan.get_unchecked(t as usize) + add);
            d *= 2;
        }
        scan.get_unchecked(t as usize)
    };
    let (lo, hi) = scan_thread_range(buckets, p, t);
    let window_counts = counts.wrapping_add(v as usize * buckets as usize);
    let offsets = offsets.wrapping_add(v as usize * (buckets as usize + 1));
    let cursors = cursors.wrapping_add(v as usize * buckets as usize);
    let mut running = base + inclusive - own;
    for b in lo..hi {
        // SAFETY: b < buckets; this thread owns [lo, hi) of the window.
        unsafe {
            offsets.add(b as usize).write(running);
            cursors.add(b as usize).write(running);
            running += *window_counts.add(b as usize);
        }
    }
    if p + 1 == parts && t == SCAN_BLOCK - 1 {
        // SAFETY: slot `buckets` of the window's offsets: the last part's last inclusive sum is the total.
        unsafe { offsets.add(buckets as usize).write(base + inclusive) };
    }
}

/// Buckets `[lo, hi)` thread `t` of part `p` takes in the scan kernels (clipped to the window).
#[inline(always)]
fn scan_thread_range(buckets: u32, p: u32, t: u32) -> (u32, u32) {
    let lo = (p * SCAN_SPAN + t * SCAN_PER_THREAD).min(buckets);
    (lo, (lo + SCAN_PER_THREAD).min(buckets))
}

/// The sum of this thread's buckets of part `p` of window `v` (see [`scan_thread_range`]).
#[inline(always)]
fn scan_part_own(counts: *const u32, buckets: u32, p: u32, v: u32) -> u32 {
    let (lo, hi) = scan_thread_range(buckets, p, thread_idx_x());
    let window_counts = counts.wrapping_add(v as usize * buckets as usize);
    let mut own = 0u32;
    for b in lo..hi {
        // SAFETY: b < buckets (the callers' grids name existing windows).
        own += unsafe { *window_counts.add(b as usize) };
    }
    own
}

/// The sum of `value` over the block, returned to every thread (tree in `scan`, [`SCAN_BLOCK`] threads).
///
/// # Safety
/// Every thread of the block calls it (it has barriers); `scan` holds `SCAN_BLOCK` words.
#[inline(always)]
unsafe fn block_sum(scan: &crate::device::SharedSlice<u32>, value: u32) -> u32 {
    let t = thread_idx_x();
    // SAFETY: slots < SCAN_BLOCK; the barriers order each level's writes before the next level's reads.
    unsafe {
        scan.set_unchecked(t as usize, value);
        let mut half = SCAN_BLOCK / 2;
        while half > 0 {
            sync_threads();
            if t < half {
                scan.set_unchecked(t as usize, scan.get_unchecked(t as usize) + scan.get_unchecked((t + half) as usize));
            }
            half /= 2;
        }
        sync_threads();
        let total = scan.get_unchecked(0);
        sync_threads();
        total
    }
}

/// Thread `(i < len, w = blockIdx.y)` writes the entry `(v, b, e)` of window `w` of chunk scalar `i` (its
/// digit and rank `r` from [`msm_count`]) to `sorted[v · per_window + offsets[v][b] + r]` if `bucket_lo <= b <
/// bucket_hi`; a saturated rank (`r = rank_overflow(c)`: the bucket's entries past the first `r`) takes slot
/// `atomic_add(cursors[v · buckets + b], 1) + r` instead. The count's ranks are distinct per bucket, and the
/// cursors start at `offsets[v][b]`, so every slot is claimed once. Scalar `i` multiplies base `indices[i] − first` (sparse scalars) or, with `indices`
/// null, base `first + i`; a base index `>= limit` (counted by the count kernel) is replaced by 0, so every
/// entry stays inside the table ([`BaseNaming::base_index`]).
///
/// Why window by window and bucket range by bucket range: blocks start in order of their linear index, so
/// the random 4-byte writes of the blocks in flight fall into one window's part of `sorted`, and with the
/// host's passes over bucket ranges into one range of it, small enough for L2 to hold while its 32-byte
/// sectors fill (otherwise most writes cost a partial-sector write-back).
///
/// # Safety
/// Grid `(⌈len / block⌉, windows)`. `digits` as written by [`msm_count`] for the same scalars, `len`, `c` and
/// `windows`; `offsets` (`q · (buckets + 1)` words) and `cursors` the scan's offsets and cursors for those
/// counts (so every slot is inside the window's `offsets[v][b]..offsets[v][b + 1] <= per_window`); `sorted` holds `q · per_window` entries; `indices` null
/// or holding `len` indices; `(w / q) · stride + index < 2^31` for every window `w` and `index < limit`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn msm_scatter(
    digits: *const u32,
    indices: *const u32,
    len: u32,
    c: u32,
    windows: u32,
    q: u32,
    stride: u32,
    first: u32,
    limit: u32,
    offsets: *const u32,
    cursors: *mut u32,
    sorted: *mut u32,
    per_window: u32,
    bucket_lo: u32,
    bucket_hi: u32,
) {
    let i = global_thread_index();
    let w = block_idx().y;
    if i >= len as usize || w >= windows {
        return;
    }
    // SAFETY: w < windows and i < len: the word exists.
    let word = unsafe { *digits.add(w as usize * len as usize + i) };
    // Bucket `magnitude − 1`; word 0 (no digit) wraps to u32::MAX and is skipped as well.
    let (magnitude, negative, rank) = digit_of_word(word, c);
    let bucket = magnitude.wrapping_sub(1);
    if bucket < bucket_lo || bucket >= bucket_hi {
        return;
    }
    // SAFETY: i < len, and indices (when given) holds len entries.
    let index = unsafe { BaseNaming { first, limit, indices }.base_index(i as u32) };
    let layout = DigitLayout { c, windows, virtual_windows: q, stride };
    let (v, b, e) = layout.entry(w, magnitude, negative, index);
    let overflow = rank_overflow(c);
    // SAFETY: the offset and the cursor exist (v < q, b < buckets); the cursor is only accessed atomically; the
    // slot is claimed by this thread alone and lies inside the window (see above).
    unsafe {
        let slot = if rank < overflow {
            *offsets.add(v as usize * (layout.buckets() as usize + 1) + b as usize) + rank
        } else {
            atomic_add_u32(cursors.add((v * layout.buckets() + b) as usize), 1) + overflow
        };
        sorted.add(v as usize * per_window as usize + slot as usize).write(e);
    }
}

/// Segment `t`'s entries `[t·seg, (t+1)·seg)` clipped to a window of `total` entries (in u64: `t·seg` may pass
/// 2^32 on threads past the window's segments).
#[inline(always)]
fn segment_range(t: u32, seg: u32, total: u32) -> (u32, u32) {
    let start = (t as u64 * seg as u64).min(total as u64) as u32;
    (start, (start as u64 + seg as u64).min(total as u64) as u32)
}

/// Body of `msm_{C}_accumulate`.
///
/// # Safety
/// See the kernels' docs.
#[inline(always)]
unsafe fn accumulate<const OUT: bool, F: Field>(
    bases: *const Affine<F>,
    sorted: *const u32,
    per_window: u32,
    offsets: *const u32,
    buckets: u32,
    seg: u32,
    slots: u32,
    partials: *mut Xyzz<F>,
) {
    let (block, v) = (block_idx().x, block_idx().y as usize);
    let t = block * block_dim_x() + thread_idx_x();
    let offsets = offsets.wrapping_add(v * (buckets as usize + 1));
    // SAFETY (all closures): offsets has buckets + 1 entries per window and accumulate_segment only asks for
    // b + 1 <= buckets; positions are < offsets[buckets] <= per_window; entries name points of the table;
    // slot b + t < slots (see crate::msm) and belongs to this thread's run alone.
    let offset = |b: u32| unsafe { *offsets.add(b as usize) };
    let total = offset(buckets);
    let range = segment_range(t, seg, total);
    let sorted = sorted.wrapping_add(v * per_window as usize);
    let partials = partials.wrapping_add(v * slots as usize);
    accumulate_segment::<OUT, F>(
        t,
        range,
        buckets,
        offset,
        |pos| entry_point(unsafe { *sorted.add(pos as usize) }, |p| unsafe { *bases.add(p as usize) }),
        |slot, sum| unsafe { partials.add(slot as usize).write(sum) },
    );
}

/// One affine thread's column of a launch's scratch: list element `i` of thread `u` at `list[i · threads + u]`,
/// prefix product `k` at `prefix[k · threads + u]`, so a warp's accesses to one element are contiguous.
struct ScratchColumn<F> {
    list: *mut Affine<F>,
    prefix: *mut F,
    threads: usize,
}

impl<F: Field> ScratchColumn<F> {
    /// Thread `u`'s column of `threads` columns of `len` list points each, the prefix products after the lists
    /// (`scratch` holds `threads · len · 5/4` points).
    #[inline(always)]
    fn new(scratch: *mut Affine<F>, u: usize, threads: usize, len: u32) -> Self {
        let prefix = scratch.wrapping_add(threads * len as usize).cast::<F>();
        ScratchColumn { list: scratch.wrapping_add(u), prefix: prefix.wrapping_add(u), threads }
    }
}

// SAFETY (all methods): the kernels' contract: list indices are below `len` and prefix indices below `len / 2`
// (what `accumulate_segment_affine` asks for with segments of at most `len` entries), in this thread's column,
// which no other thread touches.
impl<F: Field> AffineScratch<F> for ScratchColumn<F> {
    #[inline(always)]
    fn list(&self, i: u32) -> Affine<F> {
        unsafe { *self.list.add(i as usize * self.threads) }
    }
    #[inline(always)]
    fn list_x(&self, i: u32) -> F {
        unsafe { (*self.list.add(i as usize * self.threads)).x }
    }
    #[inline(always)]
    fn set_list(&mut self, i: u32, p: &Affine<F>) {
        unsafe { self.list.add(i as usize * self.threads).write(*p) }
    }
    #[inline(always)]
    fn prefix(&self, k: u32) -> F {
        unsafe { *self.prefix.add(k as usize * self.threads) }
    }
    #[inline(always)]
    fn set_prefix(&mut self, k: u32, v: &F) {
        unsafe { self.prefix.add(k as usize * self.threads).write(*v) }
    }
}

/// Body of `msm_{C}_accumulate_affine`.
///
/// # Safety
/// See the kernels' docs.
#[inline(always)]
unsafe fn accumulate_affine<F: Field>(
    bases: *const Affine<F>,
    sorted: *const u32,
    per_window: u32,
    offsets: *const u32,
    buckets: u32,
    seg: u32,
    slots: u32,
    partials: *mut Xyzz<F>,
    rounds: u32,
    first_window: u32,
    scratch: *mut Affine<F>,
) {
    let (block, y) = (block_idx().x, block_idx().y);
    let per_launch_window = (grid_dim().x * block_dim_x()) as usize;
    let t = block * block_dim_x() + thread_idx_x();
    let threads = per_launch_window * grid_dim().y as usize;
    let u = y as usize * per_launch_window + t as usize;
    let v = (first_window + y) as usize;
    let offsets = offsets.wrapping_add(v * (buckets as usize + 1));
    // SAFETY: offsets has buckets + 1 entries per window; accumulate_segment_affine asks for b + 1 <= buckets.
    let offset = |b: u32| unsafe { *offsets.add(b as usize) };
    let total = offset(buckets);
    let range = segment_range(t, seg, total);
    let partials = partials.wrapping_add(v * slots as usize);
    let sorted = sorted.wrapping_add(v * per_window as usize);
    let mut scratch = ScratchColumn::new(scratch, u, threads, seg);
    // SAFETY (closures): positions are below the window's entry count, entries name bases inside the table;
    // slot b + t < slots (see crate::msm) belongs to this thread's run alone.
    let entry = |pos: u32| unsafe { *sorted.add(pos as usize) };
    let point = |pos: u32| entry_point(entry(pos), |p| unsafe { *bases.add(p as usize) });
    let point_x = |pos: u32| unsafe { (*bases.add((entry(pos) & !NEG_FLAG) as usize)).x };
    let store = |slot: u32, sum: Xyzz<F>| unsafe { partials.add(slot as usize).write(sum) };
    accumulate_segment_affine(t, range, buckets, offset, point, point_x, rounds, &mut scratch, store);
}

/// Body of `msm_{C}_fold`.
///
/// # Safety
/// See the kernels' docs.
#[inline(always)]
unsafe fn fold<const OUT: bool, F: Field>(offsets: *const u32, buckets: u32, seg: u32, partials: *mut Xyzz<F>, slots: u32) {
    let (g, v) = (block_idx().x * block_dim_x() + thread_idx_x(), block_idx().y as usize);
    let offsets = offsets.wrapping_add(v * (buckets as usize + 1));
    let partials = partials.wrapping_add(v * slots as usize);
    // SAFETY (all closures): fold_group asks for offsets b + 1 <= buckets and for the slots of one bucket's
    // runs in this thread's group, written by the accumulate launch; no other fold thread reads or writes them.
    let offset = |b: u32| unsafe { *offsets.add(b as usize) };
    let total = offset(buckets);
    let partial = |s: u32| unsafe { &*partials.add(s as usize) };
    // SAFETY: as above; slot < slots, and the group's reads are done when store runs.
    let store = |slot: u32, sum: &Xyzz<F>| unsafe { (*partials.add(slot as usize)).assign(sum) };
    fold_group::<OUT, F>(g, total, buckets, seg, offset, partial, store);
}

/// Virtual window `v = blockIdx.y` of the fixup kernels' arguments: its `buckets + 1` offsets, its `slots` run
/// partials and its `buckets` bucket sums, so the two fixups share the window arithmetic and the final add.
#[derive(Clone, Copy)]
struct FixupWindow<F> {
    offsets: *const u32,
    buckets: u32,
    seg: u32,
    partials: *const Xyzz<F>,
    bucket_sums: *mut Xyzz<F>,
    /// Nonzero on the bucket sums' first chunk: store, do not add (the old values are not read).
    first: u32,
}

impl<F: Field> FixupWindow<F> {
    /// This block's window of the fixup kernels' arguments (addresses only: nothing is read).
    #[inline(always)]
    fn of_block(
        offsets: *const u32,
        buckets: u32,
        seg: u32,
        partials: *const Xyzz<F>,
        slots: u32,
        bucket_sums: *mut Xyzz<F>,
        first: u32,
    ) -> Self {
        let v = block_idx().y as usize;
        FixupWindow {
            offsets: offsets.wrapping_add(v * (buckets as usize + 1)),
            buckets,
            seg,
            partials: partials.wrapping_add(v * slots as usize),
            bucket_sums: bucket_sums.wrapping_add(v * buckets as usize),
            first,
        }
    }

    /// The window's first entry of bucket `b` (`b = buckets`: the window's entry count).
    ///
    /// # Safety
    /// `b <= buckets`, and the kernel's `offsets` holds this window's `buckets + 1` words.
    #[inline(always)]
    unsafe fn offset(self, b: u32) -> u32 {
        // SAFETY: forwarded to the caller.
        unsafe { *self.offsets.add(b as usize) }
    }

    /// An empty bucket `b`: on the first chunk its sum becomes the identity; later chunks leave it alone.
    ///
    /// # Safety
    /// `b < buckets`; bucket `b`'s sum belongs to the calling thread alone.
    #[inline(always)]
    unsafe fn empty_bucket(self, b: u32) {
        if self.first != 0 {
            // SAFETY: forwarded to the caller.
            unsafe { (*self.bucket_sums.add(b as usize)).assign(&Xyzz::IDENTITY) };
        }
    }

    /// Bucket `b`'s run partials (entries `[lo, hi)`) summed and added into its bucket sum, or stored there on
    /// the first chunk.
    ///
    /// # Safety
    /// `b < buckets`; the partials hold the bucket's runs, written by this chunk's accumulate and fold launches
    /// (crate::msm); bucket `b`'s sum belongs to the calling thread alone.
    #[inline(always)]
    unsafe fn add_bucket_runs<const OUT: bool>(self, b: u32, (lo, hi): (u32, u32)) {
        let mut sum = Xyzz::<F>::IDENTITY;
        // SAFETY: the caller's contract.
        bucket_runs_sum::<OUT, F>(b, (lo, hi), self.seg, |s| unsafe { &*self.partials.add(s as usize) }, &mut sum);
        // SAFETY: the caller's contract.
        let slot = unsafe { &mut *self.bucket_sums.add(b as usize) };
        if self.first != 0 {
            slot.assign(&sum);
        } else {
            outlined::add_assign_if::<OUT, _>(slot, &sum);
        }
    }
}

/// Body of `msm_{C}_fixup`: thread `b` of the window.
///
/// # Safety
/// See the kernels' docs.
#[inline(always)]
unsafe fn fixup<const OUT: bool, F: Field>(window: FixupWindow<F>) {
    let b = block_idx().x * block_dim_x() + thread_idx_x();
    if b >= window.buckets {
        return;
    }
    // SAFETY: b + 1 <= buckets.
    let (lo, hi) = unsafe { (window.offset(b), window.offset(b + 1)) };
    if lo >= hi {
        // SAFETY: b < buckets; bucket b of the window belongs to this thread alone.
        unsafe { window.empty_bucket(b) };
        return;
    }
    if !in_one_segment(lo, hi, window.seg) {
        // Summed by the spanning fixup's thread of the bucket's first segment boundary.
        return;
    }
    // SAFETY: as above; the partials as the kernels' contract gives them.
    unsafe { window.add_bucket_runs::<OUT>(b, (lo, hi)) };
}

/// Body of `msm_{C}_fixup_spanning`: thread `k` of the window, for segment boundary `k + 1`.
///
/// # Safety
/// See the kernels' docs.
#[inline(always)]
unsafe fn fixup_spanning<const OUT: bool, F: Field>(window: FixupWindow<F>) {
    let k = block_idx().x * block_dim_x() + thread_idx_x();
    // SAFETY: spanning_bucket asks for offsets b + 1 <= buckets.
    let offset = |b: u32| unsafe { window.offset(b) };
    let total = offset(window.buckets);
    let Some((b, lo, hi)) = spanning_bucket(k + 1, total, window.buckets, window.seg, offset) else { return };
    // SAFETY: b < buckets; bucket b spans segments, so this thread (its first boundary's) alone writes it; the
    // partials as the kernels' contract gives them.
    unsafe { window.add_bucket_runs::<OUT>(b, (lo, hi)) };
}

/// Body of `msm_{C}_reduce`.
///
/// # Safety
/// See the kernels' docs.
#[inline(always)]
unsafe fn reduce<const OUT: bool, F: Field>(bucket_sums: *const Xyzz<F>, buckets: u32, run: u32, shares: *mut Xyzz<F>) {
    let (k, v) = (block_idx().x * block_dim_x() + thread_idx_x(), block_idx().y as usize);
    let per_window = buckets.div_ceil(run);
    if k >= per_window {
        return;
    }
    let lo = k * run;
    let hi = (lo + run).min(buckets);
    let window = bucket_sums.wrapping_add(v * buckets as usize);
    let mut share = Xyzz::<F>::IDENTITY;
    // SAFETY: b < hi <= buckets.
    weighted_bucket_sum::<OUT, F>((lo, hi), |b| unsafe { &*window.add(b as usize) }, &mut share);
    // SAFETY: share k of window v belongs to this thread.
    unsafe { (*shares.add(v * per_window as usize + k as usize)).assign(&share) };
}

/// Body of `msm_{C}_precompute`.
///
/// # Safety
/// See the kernels' docs.
#[inline(always)]
unsafe fn precompute<const OUT: bool, F: Field>(table: *mut Affine<F>, n: u32, shift: u32, copies: u32) {
    let i = global_thread_index();
    if i >= n as usize {
        return;
    }
    let mut k = 1;
    while k < copies {
        // SAFETY: (k − 1)·n + i and k·n + i < copies·n; this thread alone reads and writes column i.
        unsafe {
            let mut x = Xyzz::IDENTITY;
            x.assign(&Xyzz::from_affine(&*table.add((k - 1) as usize * n as usize + i)));
            let mut d = 0;
            while d < shift {
                outlined::double_assign_if::<OUT, _>(&mut x);
                d += 1;
            }
            table.add(k as usize * n as usize + i).write(x.to_affine());
        }
        k += 1;
    }
}

macro_rules! msm_curve_kernels {
    ($field:ty, $out:literal, $products_out:literal, $accumulate:ident, $accumulate_affine:ident, $fold:ident, $fixup:ident, $fixup_spanning:ident, $reduce:ident, $precompute:ident) => {
        /// One thread per segment `t` of virtual window `blockIdx.y`'s sorted entries
        /// (`[t·seg, (t+1)·seg) ∩ [0, offsets[v][buckets])`): stores the XYZZ sum of each bucket run at
        /// `partials[v · slots + b + t]`.
        ///
        /// # Safety
        /// Grid `(x, q)` with `x · blockDim.x >= ⌈per_window / seg⌉`, `seg >= 1`. `offsets` holds the scan's
        /// `q · (buckets + 1)` offsets and `sorted` the scatter's `q · per_window` entries for them; every
        /// entry's point index (flag cleared) is inside `bases`; `partials` holds `q · slots` points with
        /// `slots >= buckets + ⌈per_window / seg⌉`. Runs own distinct slots; nothing aliases.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $accumulate(
            bases: *const Affine<$field>,
            sorted: *const u32,
            per_window: u32,
            offsets: *const u32,
            buckets: u32,
            seg: u32,
            slots: u32,
            partials: *mut Xyzz<$field>,
        ) {
            // SAFETY: forwarded.
            unsafe { accumulate::<$products_out, $field>(bases, sorted, per_window, offsets, buckets, seg, slots, partials) }
        }

        /// The affine variant of the accumulate kernel (`crate::msm::accumulate_segment_affine`): one thread
        /// per segment `t` of virtual window `v = first_window + blockIdx.y`, the same run sums at the same
        /// slots, added as trees of affine additions for up to `rounds` rounds (one batch inversion per round).
        ///
        /// # Safety
        /// As for the accumulate kernel, for the windows `first_window .. first_window + gridDim.y` (`< q`).
        /// `scratch` holds `threads · seg · 5/4` points (`threads = gridDim.x · gridDim.y · blockDim.x`; the
        /// first `threads · seg` are the lists, the rest `threads · seg / 2` field elements of prefix products),
        /// used only by this launch: thread `u` owns column `u` of both.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $accumulate_affine(
            bases: *const Affine<$field>,
            sorted: *const u32,
            per_window: u32,
            offsets: *const u32,
            buckets: u32,
            seg: u32,
            slots: u32,
            partials: *mut Xyzz<$field>,
            rounds: u32,
            first_window: u32,
            scratch: *mut Affine<$field>,
        ) {
            // SAFETY: forwarded.
            unsafe {
                accumulate_affine(
                    bases, sorted, per_window, offsets, buckets, seg, slots, partials, rounds, first_window, scratch,
                )
            }
        }

        /// One thread per group `g` of `FOLD_RUNS` segments of virtual window `blockIdx.y`: if segment
        /// `g · FOLD_RUNS` starts inside a bucket that began earlier, sums that bucket's runs in the group into
        /// the group's first slot (`crate::msm::fold_group`).
        ///
        /// # Safety
        /// Runs after the accumulate launch, before the fixup, with the same `offsets`, `seg`, `partials` and
        /// `slots`; any grid `(x, q)` (groups past the window's segments return). Groups own disjoint slots.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $fold(
            offsets: *const u32,
            buckets: u32,
            seg: u32,
            partials: *mut Xyzz<$field>,
            slots: u32,
        ) {
            // SAFETY: forwarded.
            unsafe { fold::<$out, _>(offsets, buckets, seg, partials, slots) }
        }

        /// One thread per bucket `b` of virtual window `blockIdx.y`: adds the partials of its runs (this
        /// chunk's accumulate and fold launches, same `seg`) into `bucket_sums[v · buckets + b]`, or, on the
        /// first chunk (`first != 0`), stores their sum there (the identity for an empty bucket), so the
        /// buckets need no zeroing and the first chunk reads none of them. Buckets spanning segments are left
        /// to the spanning fixup.
        ///
        /// # Safety
        /// Grid `(x, q)` with `x · blockDim.x >= buckets`; `offsets` and `partials` as for the accumulate
        /// launch that wrote them; `bucket_sums` holds `q · buckets` XYZZ points, written by the first chunk's
        /// fixup before any later chunk's; no aliasing.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $fixup(
            offsets: *const u32,
            buckets: u32,
            seg: u32,
            partials: *const Xyzz<$field>,
            slots: u32,
            bucket_sums: *mut Xyzz<$field>,
            first: u32,
        ) {
            let window = FixupWindow::of_block(offsets, buckets, seg, partials, slots, bucket_sums, first);
            // SAFETY: forwarded.
            unsafe { fixup::<$out, _>(window) }
        }

        /// The fixup of the buckets spanning segments: thread `k` of virtual window `blockIdx.y` takes segment
        /// boundary `k + 1` and, if it is the first boundary of the bucket holding entry `(k + 1)·seg`
        /// (`crate::msm::spanning_bucket`), adds or (`first != 0`) stores that bucket's runs as the fixup does.
        ///
        /// # Safety
        /// As the fixup, same arguments, any grid `(x, q)` (boundaries past the window's entries return); each
        /// spanning bucket has one first boundary, so one thread, and the fixup leaves it alone.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $fixup_spanning(
            offsets: *const u32,
            buckets: u32,
            seg: u32,
            partials: *const Xyzz<$field>,
            slots: u32,
            bucket_sums: *mut Xyzz<$field>,
            first: u32,
        ) {
            let window = FixupWindow::of_block(offsets, buckets, seg, partials, slots, bucket_sums, first);
            // SAFETY: forwarded.
            unsafe { fixup_spanning::<$out, _>(window) }
        }

        /// One thread per share `k < ⌈buckets / run⌉` of virtual window `blockIdx.y`: writes
        /// `Σ_{b ∈ [k·run, (k+1)·run)} (b + 1)·bucket_sums[v · buckets + b]` to `shares[v · ⌈buckets / run⌉ + k]`.
        ///
        /// # Safety
        /// Grid `(x, q)` with `x · blockDim.x >= ⌈buckets / run⌉`, `run >= 1`; `bucket_sums` holds
        /// `q · buckets` points and `shares` `q · ⌈buckets / run⌉`; no aliasing.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $reduce(
            bucket_sums: *const Xyzz<$field>,
            buckets: u32,
            run: u32,
            shares: *mut Xyzz<$field>,
        ) {
            // SAFETY: forwarded.
            unsafe { reduce::<$out, _>(bucket_sums, buckets, run, shares) }
        }

        /// Thread `i < n` fills column `i` of the table: `table[k·n + i] = 2^shift · table[(k−1)·n + i]` for
        /// `k = 1..copies` (row 0 holds the bases).
        ///
        /// # Safety
        /// One thread per point (threads `>= n` return); `table` holds `copies · n` points, row 0 written.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $precompute(table: *mut Affine<$field>, n: u32, shift: u32, copies: u32) {
            // SAFETY: forwarded.
            unsafe { precompute::<$out, _>(table, n, shift, copies) }
        }
    };
}

// The second flag: the accumulate's mixed additions call their products out of line (crate::field::outlined).
// For G1 that is 8% faster (the inlined loop stalled on instruction fetch; docs/log/kernels-notes.md, MSM, "Out-of-line
// products"; its register cap is in crate::launch_bounds).
msm_curve_kernels!(Fq, true, true, msm_g1_accumulate, msm_g1_accumulate_affine, msm_g1_fold, msm_g1_fixup, msm_g1_fixup_spanning, msm_g1_reduce, msm_g1_precompute);
// G1's cold kernels call the out-of-line point operations (a small module; inlining the fixup's and reduce's
// additions was measured: within 2%, +2.2 MB of PTX, docs/log/kernels-notes.md "MSM"); G2's inline them: out of line
// they are 5-14% slower on the H200 for 9 MB less PTX per arch (docs/log/kernels-notes.md, "MSM", open problem 4).
msm_curve_kernels!(Fq2, false, false, msm_g2_accumulate, msm_g2_accumulate_affine, msm_g2_fold, msm_g2_fixup, msm_g2_fixup_spanning, msm_g2_reduce, msm_g2_precompute);
