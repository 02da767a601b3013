//! Multi-scalar multiplication (Pippenger's bucket method) over G1 and G2: `Σ sᵢ·Pᵢ` for affine bases `Pᵢ`
//! and scalars `sᵢ` in Fr, every stage on the GPU.
//!
//! The per-thread programs are written here once, target-independent, with memory reached through closures, so
//! the host build runs exactly what a GPU thread runs; [`model`] replays whole launches on the CPU for the
//! tests. Kernels are in `entry/msm.rs`; the host driver is `host/msm/`.
//!
//! # Digits
//! A scalar (canonical, < r < 2²⁵⁵) is cut into `W = ⌈256 / c⌉` windows of `c` bits and recoded into signed
//! digits `d ∈ (−2^(c−1), 2^(c−1)]`: a window value above `2^(c−1)` becomes `value − 2^c` and carries 1 into the
//! next window. `c·W ≥ 256` leaves the top window below `2^(c−1)` before its carry, so no carry leaves the
//! scalar. A digit `±m` puts `±P` into bucket `m − 1` of its window: `B = 2^(c−1)` buckets, half of what
//! unsigned digits need. Zero digits go nowhere. Without precomputed copies the top windows are one bit
//! narrower where `c·W` exceeds 256 ([`WindowWidths`]): the same windows, fewer buckets in use.
//!
//! # Virtual windows (fixed-base precomputation)
//! With `copies` precomputed tables `Pᵢ·2^(c·q·k)` (`k < copies`, `q = ⌈W / copies⌉`), window `w` is served
//! by copy `k = w / q` in *virtual window* `v = w mod q`: `q` bucket sets instead of `W`, and `c·(q − 1)`
//! doublings to combine them instead of `c·(W − 1)`. Without precomputation `copies = 1`, `q = W`.
//!
//! # Stages (per chunk of points; buckets persist across chunks)
//! 1. **count**: one thread per scalar; stores every window's signed digit (and, for the counting sort,
//!    `counts[v][m − 1] += 1` with atomics for each non-zero digit, the counter's old value, the entry's rank
//!    in its bucket, stored beside the digit: [`digit_word`]).
//! 2. **sort**: the window's entries `point | NEG·[d < 0]` grouped by bucket, with `offsets[v][0..=B]`
//!    (`offsets[v][B]` = entries of the window). By default a counting sort: the counts are scanned into
//!    offsets and cursors (a window cut into parts of `SCAN_SPAN` buckets, one block each), then one thread
//!    per scalar and window writes its entry at `offsets[v][b] + rank`, or, past the [`rank_overflow`] ranks
//!    a digit word holds, at a slot claimed with an atomic on the bucket's cursor (the order inside a bucket
//!    is whatever the atomics gave). `Sort::Radix` is a stable radix sort instead ([`crate::msm_sort`]).
//! 3. **accumulate**: the window's sorted entries are cut into segments of `T` entries, one thread each, so
//!    work is balanced whatever the bucket sizes are (one bucket may hold every point). A thread adds its
//!    entries into an XYZZ accumulator (mixed additions, 8M + 2S) and, at each bucket boundary and at the
//!    segment's end, stores the accumulator as the partial of run `(bucket b, segment t)` at slot `b + t`.
//!    Along the sorted order either `b` or `t` grows at each new run, so `b + t` is unique: `B + ⌈len / T⌉`
//!    slots per window suffice, and the runs of one bucket are consecutive slots.
//! 4. **fold**: a bucket with many runs (a big bucket spans many segments) would make its fixup thread a
//!    long serial chain; one thread per group of [`FOLD_RUNS`] segments first sums such a bucket's runs in
//!    its group into the group's first slot.
//! 5. **fixup**: the sum of a bucket's runs' partials (slots `b + t₀ ..= b + t₁`, `t₀`/`t₁` the segments of
//!    its first/last entry; folded groups count once) is added into the persistent bucket; the first chunk
//!    stores it instead (the identity for an empty bucket), so buckets need no zeroing. One thread per bucket
//!    handles the empty buckets and those inside one segment (a copy on the first chunk); a bucket spanning
//!    segments is summed by a second launch, one thread per segment boundary ([`spanning_bucket`]), so the
//!    general additions are not spread over every warp of the first launch. Only these stages touch
//!    buckets, each bucket in exactly one thread, so no two threads ever write one point.
//! 6. **reduce** (after the last chunk): `Σ_b (b + 1)·bucket_b` per window. Thread `k` takes buckets
//!    `[lo, hi)` and runs the usual sums from the top (`R += bucket_b; A += R`), which gives
//!    `A = Σ (b − lo + 1)·bucket_b`; adding `lo·R` (double-and-add, `lo < 2^(c−1)`) makes its share exact.
//!    The shares are summed per window by the batch-addition reduce/finish kernels.
//! 7. **combine**: one thread, Horner over the windows: `acc ← 2^c·acc + S_v` (Jacobian doublings, 2M + 5S).
//!
//! # Determinism
//! The counting sort's atomics order the entries inside a bucket differently from run to run, so the XYZZ
//! coordinates of a bucket (and of the result) differ by a factor `λ`; the point does not (the radix sort is
//! stable and repeats its order). The host normalizes the result to affine, which is unique, so results are
//! bit-identical run to run.
use crate::batch_add;
use crate::curve::outlined::{self, Outlined};
use crate::curve::{Affine, Jacobian, Xyzz};
use crate::field::{Field, Fr};

/// Flag in an entry: the point enters its bucket negated.
pub const NEG_FLAG: u32 = 1 << 31;
/// Largest window size: `B = 2^(c−1)` buckets per window must fit the bucket memory and `u32` offsets.
pub const MAX_WINDOW_BITS: u32 = 24;
/// Bits of a scalar the windows must cover (scalars are < r < 2²⁵⁵; one more bit absorbs the last carry).
pub const SCALAR_BITS: u32 = 256;

/// Threads per block of the scan kernels.
pub const SCAN_BLOCK: u32 = 1024;
/// Consecutive buckets one scan thread sums.
pub const SCAN_PER_THREAD: u32 = 8;
/// Buckets per scan block (a window's part): windows of up to `SCAN_BLOCK · SCAN_SPAN` = 2^23 buckets
/// (`c <= 24`) have at most `SCAN_BLOCK` parts.
pub const SCAN_SPAN: u32 = SCAN_BLOCK * SCAN_PER_THREAD;

/// Windows of `c` bits needed for signed digits: `⌈256 / c⌉`.
#[inline(always)]
pub const fn window_count(c: u32) -> u32 {
    SCALAR_BITS.div_ceil(c)
}

/// The `c` bits of `limbs` (little-endian u32 limbs, 8 of them) starting at bit `bit`; bits past 256 are 0.
/// `c <= 24`, so a window spans at most two limbs.
#[inline(always)]
pub fn window_value(limbs: &[u32; 8], bit: u32, c: u32) -> u32 {
    let limb = (bit / 32) as usize;
    let shift = bit % 32;
    if limb >= 8 {
        return 0;
    }
    let mut v = limbs[limb] >> shift;
    if shift + c > 32 && limb + 1 < 8 {
        v |= limbs[limb + 1] << (32 - shift);
    }
    v & ((1u32 << c) - 1)
}

/// The widths of the windows: the first `wide` are `c` bits, the rest (the top ones) `c − 1`.
///
/// `⌈256 / c⌉` windows of `c` bits often cover more than the 256 bits signed digits need (c = 19: 266). Without
/// precomputed copies the top `min(W·c − 256, W)` windows are one bit narrower, half their buckets in use
/// (c = 19: 4 × 19 + 10 × 18 bits, 2.36 M buckets in use instead of 3.67 M; the old 8-bit top window put every
/// scalar into one of 257 buckets). With copies every window is `c` bits: copy `k` is the bases shifted by
/// `c·q·k` bits. The bucket memory keeps `2^(c−1)` buckets per window; a narrow window's upper half stays empty.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowWidths {
    /// The widest window's bits.
    pub c: u32,
    /// Windows of `c` bits (the rest are `c − 1`).
    pub wide: u32,
}

impl WindowWidths {
    /// The widths for `c`-bit windows over `q` bucket sets (`q = ⌈256 / c⌉` without precomputed copies).
    #[inline(always)]
    pub const fn new(c: u32, q: u32) -> Self {
        let windows = window_count(c);
        let narrow = if q == windows && c >= 2 {
            let spare = windows * c - SCALAR_BITS;
            if spare < windows { spare } else { windows }
        } else {
            0
        };
        WindowWidths { c, wide: windows - narrow }
    }

    /// Bits of window `w`.
    #[inline(always)]
    pub const fn bits(&self, w: u32) -> u32 {
        if w < self.wide { self.c } else { self.c - 1 }
    }

    /// The first bit of window `w`.
    #[inline(always)]
    pub const fn start(&self, w: u32) -> u32 {
        w * self.c - w.saturating_sub(self.wide)
    }
}

/// Calls `emit(window, magnitude, negative)` for every non-zero signed digit of the canonical scalar `limbs`
/// (windows `0..windows` of `widths.bits(w)` bits, see the module docs). `magnitude` is in
/// `1..=2^(bits(w)−1)`.
#[inline(always)]
pub fn for_each_digit(limbs: &[u32; 8], widths: WindowWidths, windows: u32, mut emit: impl FnMut(u32, u32, bool)) {
    let mut carry = 0u32;
    let mut w = 0;
    while w < windows {
        let bits = widths.bits(w);
        let half = 1u32 << (bits - 1);
        let d = window_value(limbs, widths.start(w), bits) + carry;
        let (magnitude, negative) = if d > half { ((1u32 << bits) - d, true) } else { (d, false) };
        carry = (d > half) as u32;
        if magnitude != 0 {
            emit(w, magnitude, negative);
        }
        w += 1;
    }
}

/// The saturated rank of a [`digit_word`] for window bits `c` (`31 − c` bits, all set): an entry whose rank
/// in its bucket is at least this takes its slot from the scatter's cursor instead.
#[inline(always)]
pub const fn rank_overflow(c: u32) -> u32 {
    (1 << (31 - c)) - 1
}

/// A signed digit as the count kernel stores it for the scatter: `magnitude` in the low `c` bits (it is at most
/// `2^(c−1)`), the entry's rank among its bucket's entries (the count's counter before its increment, saturated
/// at [`rank_overflow`]) in the next `31 − c`, `negative` in bit 31; 0 is no digit. `c <= 24`.
#[inline(always)]
pub fn digit_word(magnitude: u32, negative: bool, rank: u32, c: u32) -> u32 {
    magnitude | rank.min(rank_overflow(c)) << c | (negative as u32) << 31
}

/// `(magnitude, negative, rank)` of a non-zero [`digit_word`] for window bits `c`.
#[inline(always)]
pub fn digit_of_word(word: u32, c: u32) -> (u32, bool, u32) {
    (word & ((1 << c) - 1), word >> 31 != 0, (word >> c) & rank_overflow(c))
}

/// The canonical limbs of a Montgomery-form scalar (as blstrs stores them).
#[inline(always)]
pub fn canonical(s: &Fr) -> [u32; 8] {
    let mut one = [0u32; 8];
    one[0] = 1;
    s.mul(&Fr::from_limbs(one)).limbs()
}

/// Where the digits of one chunk go: window size, windows, virtual windows, and how point indices are formed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DigitLayout {
    /// Window bits `c`.
    pub c: u32,
    /// Windows `W = ⌈256 / c⌉`.
    pub windows: u32,
    /// Virtual windows `q` (bucket sets); `W` without precomputation.
    pub virtual_windows: u32,
    /// Points per precomputed copy (the table's stride); the entries of window `w` for base `index` point at
    /// `(w / q)·stride + index`.
    pub stride: u32,
}

impl DigitLayout {
    /// Buckets per virtual window, `2^(c−1)`.
    #[inline(always)]
    pub fn buckets(&self) -> u32 {
        1 << (self.c - 1)
    }

    /// The windows' widths ([`WindowWidths::new`]).
    #[inline(always)]
    pub fn widths(&self) -> WindowWidths {
        WindowWidths::new(self.c, self.virtual_windows)
    }

    /// The entry `(virtual window, bucket, entry)` of window `w`'s digit `(magnitude >= 1, negative)` for base
    /// `index` (row 0 of the table).
    #[inline(always)]
    pub fn entry(&self, w: u32, magnitude: u32, negative: bool, index: u32) -> (u32, u32, u32) {
        let q = self.virtual_windows;
        (w % q, magnitude - 1, self.copy_entry(w / q, negative, index))
    }

    /// The entry word for base `index` of precomputed copy `copy` (table row `copy`), negated or not.
    #[inline(always)]
    pub fn copy_entry(&self, copy: u32, negative: bool, index: u32) -> u32 {
        (copy * self.stride + index) | if negative { NEG_FLAG } else { 0 }
    }
}

/// How a chunk's scalars name their bases on the device: scalar `i` multiplies base `indices[i] − first`
/// (sparse scalars; `first` is the first position the bases hold, 0 for a whole table, a chunk's start for
/// staged bases) or, with `indices` null, base `first + i`. An index below `first` wraps past `limit` and is
/// bad like one past the end. One rule for the count's check, the counting sort's scatter and the radix
/// sort's first pass, so all make the same entry words.
#[derive(Clone, Copy)]
pub struct BaseNaming {
    /// Base of scalar 0 without indices (the chunk's first scalar); the position of base 0 with them.
    pub first: u32,
    /// Bases in a table row; indices from `limit` on are bad (counted by the count kernel).
    pub limit: u32,
    /// The chunk's base indices, or null.
    pub indices: *const u32,
}

impl BaseNaming {
    /// The base index scalar `i` names, bad or not.
    ///
    /// # Safety
    /// `indices` is null or valid for a read of entry `i`.
    #[inline(always)]
    pub unsafe fn named_index(&self, i: u32) -> u32 {
        if self.indices.is_null() {
            self.first + i
        } else {
            // SAFETY: forwarded to the caller.
            unsafe { *self.indices.add(i as usize) }.wrapping_sub(self.first)
        }
    }

    /// The base index of scalar `i`; a bad index (`>= limit`) becomes 0, so every entry stays inside the table.
    ///
    /// # Safety
    /// `indices` is null or valid for a read of entry `i`.
    #[inline(always)]
    pub unsafe fn base_index(&self, i: u32) -> u32 {
        // SAFETY: forwarded to the caller.
        let index = unsafe { self.named_index(i) };
        if index < self.limit { index } else { 0 }
    }
}

/// The bucket `b` of a window with `offsets[0..=buckets]` such that `offsets[b] <= pos < offsets[b + 1]`
/// (binary search; `pos < offsets[buckets]`).
#[inline(always)]
pub fn bucket_of(pos: u32, buckets: u32, offset: impl Fn(u32) -> u32) -> u32 {
    // Invariant: offset(lo) <= pos < offset(hi).
    let (mut lo, mut hi) = (0u32, buckets);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if offset(mid) <= pos {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The point sorted entry `e` names: base `e` (flag cleared) read by `base`, negated when flagged.
#[inline(always)]
pub fn entry_point<F: Field>(e: u32, base: impl FnOnce(u32) -> Affine<F>) -> Affine<F> {
    let p = base(e & !NEG_FLAG);
    if e & NEG_FLAG != 0 { p.neg() } else { p }
}

/// One accumulate thread: segment `[start, end)` (`end <= offsets[buckets]`) of a window's sorted entries.
/// For every run of one bucket inside the segment, stores its XYZZ sum with `store(b + segment, sum)`.
/// `point(pos)` is the point of sorted entry `pos` ([`entry_point`]). `OUT`: the addition's products out of
/// line ([`Xyzz::add_affine_with`]; chosen per curve by the kernels).
#[inline(always)]
pub fn accumulate_segment<const OUT: bool, F: Field>(
    segment: u32,
    (start, end): (u32, u32),
    buckets: u32,
    offset: impl Fn(u32) -> u32,
    point: impl Fn(u32) -> Affine<F>,
    mut store: impl FnMut(u32, Xyzz<F>),
) {
    if start >= end {
        return;
    }
    let mut b = bucket_of(start, buckets, &offset);
    let mut run_end = offset(b + 1).min(end);
    let mut acc = Xyzz::<F>::IDENTITY;
    let mut pos = start;
    while pos < end {
        // Lazily reduced inside each addition, canonical between them: a bucket kept lazy from one addition
        // to the next (as batch addition's lanes are) measured 2.3% slower here (docs/log/kernels-notes.md, MSM,
        // "lazy reduction").
        acc = acc.add_affine_with::<OUT>(&point(pos));
        pos += 1;
        if pos == run_end {
            store(b + segment, acc);
            acc = Xyzz::IDENTITY;
            // Next non-empty bucket (offsets are non-decreasing; b + 1 < buckets while pos < end).
            while pos < end && offset(b + 1) <= pos {
                b += 1;
            }
            run_end = offset(b + 1).min(end);
        }
    }
}

/// Calls `f(bucket, lo, hi)` for each run (the entries `[lo, hi)` of one bucket) of segment `[start, end)`,
/// in order (`start < end <= offsets[buckets]`).
#[inline(always)]
pub fn for_each_run(
    (start, end): (u32, u32),
    buckets: u32,
    offset: impl Fn(u32) -> u32,
    mut f: impl FnMut(u32, u32, u32),
) {
    let mut b = bucket_of(start, buckets, &offset);
    let mut pos = start;
    while pos < end {
        let hi = offset(b + 1).min(end);
        f(b, pos, hi);
        pos = hi;
        // Next non-empty bucket (b + 1 < buckets while pos < end).
        while pos < end && offset(b + 1) <= pos {
            b += 1;
        }
    }
}

/// [`for_each_run`] from the last run to the first.
#[inline(always)]
pub fn for_each_run_rev(
    (start, end): (u32, u32),
    buckets: u32,
    offset: impl Fn(u32) -> u32,
    mut f: impl FnMut(u32, u32, u32),
) {
    let mut b = bucket_of(end - 1, buckets, &offset);
    let mut pos = end;
    while pos > start {
        let lo = offset(b).max(start);
        f(b, lo, pos);
        pos = lo;
        // The bucket holding entry pos − 1 (offsets[0] = 0 <= pos − 1, so b stays >= 0).
        while pos > start && offset(b) >= pos {
            b -= 1;
        }
    }
}

/// One thread's scratch for [`accumulate_segment_affine`]: a list of up to `seg` points and `seg / 2` prefix
/// products.
pub trait AffineScratch<F: Field> {
    /// Scratch list element `i`.
    fn list(&self, i: u32) -> Affine<F>;
    /// Its x coordinate.
    fn list_x(&self, i: u32) -> F;
    /// Writes scratch list element `i`.
    fn set_list(&mut self, i: u32, p: &Affine<F>);
    /// Prefix product `k` of the current round.
    fn prefix(&self, k: u32) -> F;
    /// Writes prefix product `k`.
    fn set_prefix(&mut self, k: u32, v: &F);
}

/// `⌈len / 2^k⌉`: a run's live points after `k` halving rounds.
#[inline(always)]
fn halved(len: u32, k: u32) -> u32 {
    (len + (1 << k) - 1) >> k
}

/// One thread of the affine accumulation (variant `affine`): the same segment, runs and stores as
/// [`accumulate_segment`], but each run is summed as a tree of affine additions, one level per *round*, the
/// round's additions over all runs of the segment sharing one inversion (Montgomery's trick: 3M per pair,
/// plus 2M + 1S for the addition, against 8M + 2S for a mixed XYZZ add).
///
/// Round 1 adds entries `2j, 2j + 1` of each run (points read through the sorted entries) into scratch list
/// slot `base + j`, `base` the run's first slot (runs get `⌈len / 2⌉` slots each, in order; an odd run's last
/// point is copied). Round `k >= 2` works in place on the list: a run's live points sit at stride
/// `2^(k−2)` from its base, pair `j` is written over its first operand, an odd last point stays where it is.
/// After `rounds` rounds (fewer when every run is down to one point) each run's live points are summed into
/// an XYZZ accumulator by mixed additions and stored at slot `b + segment`, as [`accumulate_segment`] does;
/// with `rounds = 0`, or a segment whose runs are single entries, that is all it does.
///
/// `point(pos)` is the point of sorted entry `pos` ([`entry_point`]) and `point_x(pos)` its x alone (the
/// forward passes read only x).
#[inline(always)]
pub fn accumulate_segment_affine<F: Field, S: AffineScratch<F>>(
    segment: u32,
    (start, end): (u32, u32),
    buckets: u32,
    offset: impl Fn(u32) -> u32,
    point: impl Fn(u32) -> Affine<F>,
    point_x: impl Fn(u32) -> F,
    rounds: u32,
    mem: &mut S,
    mut store: impl FnMut(u32, Xyzz<F>),
) {
    if start >= end {
        return;
    }
    let (mut longest, mut list_len) = (0u32, 0u32);
    for_each_run((start, end), buckets, &offset, |_, lo, hi| {
        longest = longest.max(hi - lo);
        list_len += halved(hi - lo, 1);
    });
    // Rounds that still pair points: ⌈log2(longest)⌉, at most `rounds`.
    let rounds = rounds.min(32 - (longest - 1).leading_zeros());
    let mut k = 1;
    while k <= rounds {
        // Live point i of a run (entries [lo, hi), list slots from base) before round k, and the slot pair j
        // goes to.
        let point_at = |mem: &S, lo: u32, base: u32, i: u32| if k == 1 { point(lo + i) } else { mem.list(base + (i << (k - 2))) };
        let x_at = |mem: &S, lo: u32, base: u32, i: u32| if k == 1 { point_x(lo + i) } else { mem.list_x(base + (i << (k - 2))) };
        let out_slot = |base: u32, j: u32| if k == 1 { base + j } else { base + (j << (k - 1)) };
        // Forward: prefix products of the denominators; round 1 also copies odd runs' last points.
        let (mut running, mut pairs, mut base) = (F::ONE, 0u32, 0u32);
        for_each_run((start, end), buckets, &offset, |_, lo, hi| {
            let live = halved(hi - lo, k - 1);
            let mut i = 0;
            while i + 1 < live {
                let (px, qx) = (x_at(mem, lo, base, i), x_at(mem, lo, base, i + 1));
                let d = batch_add::pair_denominator_lazy(&px, &qx, || {
                    (point_at(mem, lo, base, i).y, point_at(mem, lo, base, i + 1).y)
                });
                mem.set_prefix(pairs, &running);
                running = running.mul(&d);
                pairs += 1;
                i += 2;
            }
            if k == 1 && live % 2 == 1 {
                mem.set_list(base + live / 2, &point(lo + live - 1));
            }
            base += halved(hi - lo, 1);
        });
        if pairs > 0 {
            // Backward: 1/d = inv · prefix, inv ← inv · d; pair j is written after it is read, over slots
            // no earlier pair reads.
            let mut inv = running.inverse();
            let mut base = list_len;
            for_each_run_rev((start, end), buckets, &offset, |_, lo, hi| {
                base -= halved(hi - lo, 1);
                let mut j = halved(hi - lo, k - 1) / 2;
                while j > 0 {
                    j -= 1;
                    pairs -= 1;
                    let (p, q) = (point_at(mem, lo, base, 2 * j), point_at(mem, lo, base, 2 * j + 1));
                    let d = batch_add::pair_denominator(&p, &q);
                    let inv_d = inv.mul(&mem.prefix(pairs));
                    inv = inv.mul(&d);
                    mem.set_list(out_slot(base, j), &batch_add::pair_sum(&p, &q, &inv_d));
                }
            });
        }
        k += 1;
    }
    // The runs' remaining points (stride 2^(rounds−1) from their base; the entries themselves when no round
    // ran) into XYZZ. One XYZZ addition site for both cases keeps the kernel small.
    let mut base = 0u32;
    for_each_run((start, end), buckets, &offset, |b, lo, hi| {
        let mut acc = Xyzz::<F>::IDENTITY;
        let mut i = 0;
        while i < halved(hi - lo, rounds) {
            let p = if rounds == 0 { point(lo + i) } else { mem.list(base + (i << (rounds - 1))) };
            acc = acc.add_affine(&p);
            i += 1;
        }
        store(b + segment, acc);
        base += halved(hi - lo, 1);
    });
}

/// Slots of run partials per virtual window: `buckets + ⌈entries / seg⌉`.
#[inline(always)]
pub fn partial_slots(buckets: u32, entries: u32, seg: u32) -> u32 {
    buckets + entries.div_ceil(seg)
}

/// Runs per fold group (see [`fold_group`]): a bucket's fixup thread adds at most `FOLD_RUNS − 1` single runs
/// plus one folded group per `FOLD_RUNS` segments, so a bucket holding most of a window's entries (the top
/// window of 255-bit scalars has only a few buckets; equal scalars make one) is summed by many threads.
pub const FOLD_RUNS: u32 = 32;

/// One fold thread, group `g >= 1` of a window with `total` sorted entries: the segment `t = g·FOLD_RUNS`
/// starts inside bucket `b`; if `b` began in an earlier segment, its runs in segments `t .. t + FOLD_RUNS`
/// (slots `b + t ..`) are summed and handed to `store(b + t, sum)` (the group's first slot). Nothing happens
/// when the segment is past the entries or starts a bucket (that bucket's fixup begins there).
#[inline(always)]
pub fn fold_group<'a, const OUT: bool, F: Field + 'a>(
    g: u32,
    total: u32,
    buckets: u32,
    seg: u32,
    offset: impl Fn(u32) -> u32,
    partial: impl Fn(u32) -> &'a Xyzz<F>,
    store: impl FnOnce(u32, &Xyzz<F>),
) {
    let t = g * FOLD_RUNS;
    let Some(pos) = t.checked_mul(seg) else { return };
    if g == 0 || pos >= total {
        return;
    }
    let b = bucket_of(pos, buckets, &offset);
    let (lo, hi) = (offset(b), offset(b + 1));
    if lo / seg == t {
        return;
    }
    let last = ((hi - 1) / seg).min(t + FOLD_RUNS - 1);
    let mut acc = Xyzz::<F>::IDENTITY;
    acc.assign(partial(b + t));
    let mut u = t + 1;
    while u <= last {
        outlined::add_assign_if::<OUT, _>(&mut acc, partial(b + u));
        u += 1;
    }
    store(b + t, &acc);
}

/// Whether a bucket's entries `[lo, hi)` (`lo < hi`) lie in one segment of `seg` entries (one run). The fixup
/// thread of the bucket handles only such buckets; a bucket spanning segments is summed by the thread of its
/// first segment boundary ([`spanning_bucket`]), so that a warp of fixup threads never waits on the few lanes
/// whose bucket needs general additions.
#[inline(always)]
pub fn in_one_segment(lo: u32, hi: u32, seg: u32) -> bool {
    lo / seg == (hi - 1) / seg
}

/// The bucket boundary thread `t >= 1` sums: `(b, lo, hi)` for the bucket `b` holding entry `t·seg` (of
/// `total`) if it began in segment `t − 1`, i.e. `t·seg` is its first segment boundary; `None` otherwise
/// (past the entries, a bucket starting at the boundary, or one that began earlier). Every bucket spanning
/// segments has exactly one first boundary, so exactly one thread.
#[inline(always)]
pub fn spanning_bucket(t: u32, total: u32, buckets: u32, seg: u32, offset: impl Fn(u32) -> u32) -> Option<(u32, u32, u32)> {
    let pos = t.checked_mul(seg)?;
    if t == 0 || pos >= total {
        return None;
    }
    let b = bucket_of(pos, buckets, &offset);
    let lo = offset(b);
    (lo / seg + 1 == t).then(|| (b, lo, offset(b + 1)))
}

/// One fixup thread: `acc ←` the sum of bucket `b`'s run partials (entries `[lo, hi)` of the window,
/// `lo < hi`, segments of `seg` entries), `partial(slot)` reading slot `b + t`, after the fold: a slot at a
/// segment `t > t₀` that is a multiple of [`FOLD_RUNS`] holds the sum of the group `t .. t + FOLD_RUNS`.
#[inline(always)]
pub fn bucket_runs_sum<'a, const OUT: bool, F: Field + 'a>(
    b: u32,
    (lo, hi): (u32, u32),
    seg: u32,
    partial: impl Fn(u32) -> &'a Xyzz<F>,
    acc: &mut Xyzz<F>,
) {
    let (t0, t1) = (lo / seg, (hi - 1) / seg);
    acc.assign(partial(b + t0));
    let mut t = t0 + 1;
    while t <= t1 {
        outlined::add_assign_if::<OUT, _>(acc, partial(b + t));
        t += if t % FOLD_RUNS == 0 { FOLD_RUNS } else { 1 };
    }
}

/// `out ← k·p` for a small `k` (double-and-add from the top bit).
#[inline(always)]
pub fn mul_small<const OUT: bool, F: Field>(p: &Xyzz<F>, k: u32, out: &mut Xyzz<F>) {
    // The identity (a narrow window's empty upper buckets) would still pay every doubling.
    if k == 0 || p.is_identity() {
        out.assign(&Xyzz::IDENTITY);
        return;
    }
    let mut bit = 31 - k.leading_zeros();
    out.assign(p);
    while bit > 0 {
        bit -= 1;
        outlined::double_assign_if::<OUT, _>(out);
        if (k >> bit) & 1 == 1 {
            outlined::add_assign_if::<OUT, _>(out, p);
        }
    }
}

/// One reduce thread: `acc ← Σ_{b ∈ [lo, hi)} (b + 1)·bucket(b)`.
#[inline(always)]
pub fn weighted_bucket_sum<'a, const OUT: bool, F: Field + 'a>(
    (lo, hi): (u32, u32),
    bucket: impl Fn(u32) -> &'a Xyzz<F>,
    acc: &mut Xyzz<F>,
) {
    let mut running = Xyzz::<F>::IDENTITY;
    acc.assign(&Xyzz::IDENTITY);
    let mut b = hi;
    while b > lo {
        b -= 1;
        outlined::add_assign_if::<OUT, _>(&mut running, bucket(b));
        outlined::add_assign_if::<OUT, _>(acc, &running);
    }
    // acc = Σ (b − lo + 1)·bucket_b; the missing lo·Σ bucket_b:
    let mut tail = Xyzz::<F>::IDENTITY;
    mul_small::<OUT, F>(&running, lo, &mut tail);
    outlined::add_assign_if::<OUT, _>(acc, &tail);
}

/// A CPU replay of the launches, stage by stage, with the same per-thread programs (bucket entries in the radix
/// sort's order, [`model::sorted_windows`], also one outcome of the counting sort's atomics).
#[cfg(not(target_arch = "nvptx64"))]
pub mod model {
    use super::*;
    use core::cell::RefCell;

    /// Tunables of one run, as the host picks them.
    #[derive(Clone, Copy, Debug)]
    pub struct Plan {
        /// Window bits.
        pub c: u32,
        /// Precomputed copies of the bases (1: none).
        pub copies: u32,
        /// Entries per accumulate thread.
        pub seg: u32,
        /// Buckets per reduce thread.
        pub reduce_run: u32,
        /// Points per chunk.
        pub chunk: u32,
        /// Affine accumulation rounds ([`accumulate_segment_affine`]); 0: XYZZ accumulation.
        pub affine_rounds: u32,
    }

    /// One affine thread's scratch on the CPU.
    pub struct Scratch<F: Field> {
        list: Vec<Affine<F>>,
        prefix: Vec<F>,
    }

    impl<F: Field> Scratch<F> {
        /// Scratch for segments of up to `seg` entries.
        pub fn new(seg: u32) -> Self {
            Scratch { list: vec![Affine::IDENTITY; seg as usize], prefix: vec![F::ZERO; seg as usize / 2] }
        }
    }

    impl<F: Field> AffineScratch<F> for Scratch<F> {
        fn list(&self, i: u32) -> Affine<F> {
            self.list[i as usize]
        }
        fn list_x(&self, i: u32) -> F {
            self.list[i as usize].x
        }
        fn set_list(&mut self, i: u32, p: &Affine<F>) {
            self.list[i as usize] = *p;
        }
        fn prefix(&self, k: u32) -> F {
            self.prefix[k as usize]
        }
        fn set_prefix(&mut self, k: u32, v: &F) {
            self.prefix[k as usize] = *v;
        }
    }

    /// The virtual windows `q` for `copies` copies: `⌈W / copies⌉`.
    pub fn virtual_windows(c: u32, copies: u32) -> u32 {
        window_count(c).div_ceil(copies.max(1))
    }

    /// `table[k·n + i] = 2^(c·q·k)·bases[i]` for `k < copies`, as the precompute kernel builds it.
    pub fn precompute<F: Field>(bases: &[Affine<F>], c: u32, copies: u32) -> Vec<Affine<F>> {
        let shift = c * virtual_windows(c, copies);
        let mut table = bases.to_vec();
        let mut current = bases.to_vec();
        for _ in 1..copies {
            current = current
                .iter()
                .map(|p| {
                    let mut x = Xyzz::from_affine(p);
                    for _ in 0..shift {
                        x = x.double();
                    }
                    x.to_affine()
                })
                .collect();
            table.extend_from_slice(&current);
        }
        table
    }

    /// The count, scan and sort of one chunk (`scalars`, base `first + i` or `indices[i] − first`): per virtual window
    /// the bucket offsets (`buckets + 1`) and the sorted entries. Inside a bucket, entries are in the radix
    /// sort's order (windows `v, v + q, ...` in turn, scalars in order inside each), which is exactly what the
    /// GPU's radix sort produces and one of the orders the counting sort's atomics may give.
    pub fn sorted_windows(scalars: &[Fr], indices: Option<&[u32]>, first: u32, layout: DigitLayout) -> Vec<(Vec<u32>, Vec<u32>)> {
        let q = layout.virtual_windows;
        let mut per_window = vec![Vec::<(u32, u32)>::new(); layout.windows as usize];
        for (i, s) in scalars.iter().enumerate() {
            let index = indices.map_or(first + i as u32, |ix| ix[i].wrapping_sub(first));
            let limbs = canonical(s);
            for_each_digit(&limbs, layout.widths(), layout.windows, |w, magnitude, negative| {
                let (_, b, e) = layout.entry(w, magnitude, negative, index);
                per_window[w as usize].push((b, e));
            });
        }
        (0..q)
            .map(|v| {
                let mut entries: Vec<(u32, u32)> =
                    (v..layout.windows).step_by(q as usize).flat_map(|w| per_window[w as usize].iter().copied()).collect();
                entries.sort_by_key(|&(b, _)| b);
                let mut offsets = vec![0u32; layout.buckets() as usize + 1];
                for &(b, _) in &entries {
                    offsets[b as usize + 1] += 1;
                }
                for b in 0..layout.buckets() as usize {
                    offsets[b + 1] += offsets[b];
                }
                (offsets, entries.into_iter().map(|(_, e)| e).collect())
            })
            .collect()
    }

    /// The window sums of the MSM of `scalars` (Montgomery form) over `table` (`plan.copies` rows of bases:
    /// the bases, or their precomputed copies), one per virtual window, as the device leaves them for the
    /// host's combine. Scalar `j` multiplies base `indices[j]` (indices below the row length), or base `j`
    /// without indices.
    pub fn window_sums<F: Field>(table: &[Affine<F>], scalars: &[Fr], indices: Option<&[u32]>, plan: Plan) -> Vec<Jacobian<F>> {
        let n = scalars.len() as u32;
        let rows = table.len() as u32 / plan.copies.max(1);
        let q = virtual_windows(plan.c, plan.copies);
        let buckets_per = 1u32 << (plan.c - 1);
        let mut buckets = vec![Xyzz::<F>::IDENTITY; (q * buckets_per) as usize];
        let mut first = 0u32;
        while first < n {
            let len = plan.chunk.min(n - first);
            let layout = DigitLayout { c: plan.c, windows: window_count(plan.c), virtual_windows: q, stride: rows };
            let chunk_indices = indices.map(|ix| &ix[first as usize..(first + len) as usize]);
            let base_first = if indices.is_some() { 0 } else { first };
            let sorted = sorted_windows(&scalars[first as usize..(first + len) as usize], chunk_indices, base_first, layout);
            for (v, (offsets, entries)) in sorted.iter().enumerate() {
                let total = entries.len() as u32;
                let slots = partial_slots(buckets_per, total, plan.seg);
                let partials = RefCell::new(vec![Xyzz::<F>::IDENTITY; slots as usize]);
                for t in 0..total.div_ceil(plan.seg) {
                    let range = (t * plan.seg, ((t + 1) * plan.seg).min(total));
                    let store = |slot: u32, sum| partials.borrow_mut()[slot as usize] = sum;
                    let offset = |b: u32| offsets[b as usize];
                    let point = |pos: u32| entry_point(entries[pos as usize], |p| table[p as usize]);
                    if plan.affine_rounds > 0 {
                        let point_x = |pos: u32| table[(entries[pos as usize] & !NEG_FLAG) as usize].x;
                        let mut scratch = Scratch::new(plan.seg);
                        let rounds = plan.affine_rounds;
                        accumulate_segment_affine(t, range, buckets_per, offset, point, point_x, rounds, &mut scratch, store);
                    } else {
                        accumulate_segment::<false, F>(t, range, buckets_per, offset, point, store);
                    }
                }
                let mut partials = partials.into_inner();
                for g in 1..total.div_ceil(plan.seg).div_ceil(FOLD_RUNS) {
                    let mut folded = None;
                    fold_group::<true, F>(
                        g,
                        total,
                        buckets_per,
                        plan.seg,
                        |b| offsets[b as usize],
                        |s| &partials[s as usize],
                        |slot, sum| folded = Some((slot, *sum)),
                    );
                    if let Some((slot, sum)) = folded {
                        partials[slot as usize] = sum;
                    }
                }
                // The fixup (buckets inside one segment) and the spanning fixup (one thread per segment
                // boundary) between them add every non-empty bucket once.
                let mut add_bucket = |b: u32, lo: u32, hi: u32| {
                    let mut sum = Xyzz::<F>::IDENTITY;
                    bucket_runs_sum::<true, F>(b, (lo, hi), plan.seg, |s| &partials[s as usize], &mut sum);
                    outlined::add_assign(&mut buckets[(v as u32 * buckets_per + b) as usize], &sum);
                };
                for b in 0..buckets_per {
                    let (lo, hi) = (offsets[b as usize], offsets[b as usize + 1]);
                    if lo < hi && in_one_segment(lo, hi, plan.seg) {
                        add_bucket(b, lo, hi);
                    }
                }
                for t in 1..total.div_ceil(plan.seg) {
                    if let Some((b, lo, hi)) = spanning_bucket(t, total, buckets_per, plan.seg, |b| offsets[b as usize]) {
                        add_bucket(b, lo, hi);
                    }
                }
            }
            first += len;
        }
        (0..q)
            .map(|v| {
                let window = &buckets[(v * buckets_per) as usize..((v + 1) * buckets_per) as usize];
                let mut total = Xyzz::<F>::IDENTITY;
                let mut lo = 0;
                while lo < buckets_per {
                    let hi = (lo + plan.reduce_run).min(buckets_per);
                    let mut share = Xyzz::<F>::IDENTITY;
                    weighted_bucket_sum::<true, F>((lo, hi), |b| &window[b as usize], &mut share);
                    outlined::add_assign(&mut total, &share);
                    lo = hi;
                }
                total.to_jacobian()
            })
            .collect()
    }
}
