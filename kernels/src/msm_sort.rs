//! The MSM's radix sort (`Sort::Radix`, opt-in): a virtual window's entries grouped by bucket with a stable
//! least-significant-digit radix sort, instead of the counting sort's global atomics (`Sort::Counting`, the
//! default: `msm_count` + `msm_scan` + `msm_scatter` in [`crate::msm`]).
//!
//! Why: the counting sort spends one global atomic per entry to count and one atomic plus one random 4-byte
//! write per entry to scatter (13.3 ms of a 122 ms MSM at 2^24 on the H200). A radix pass only reads and writes
//! whole tiles: block-local histograms, one small scan, and writes grouped into runs of equal digits. Measured,
//! it is slower so far (16–18 ms at 2^24): the downsweep is latency-bound at two blocks per SM
//! (docs/log/kernels-notes.md, "Radix sort").
//!
//! # Keys, passes and order
//! An entry's key is its bucket (`c − 1` bits), its value the entry word the accumulate stage reads (point
//! index and sign, [`crate::msm::NEG_FLAG`]). Zero digits have no entry: the first pass drops them, so later
//! passes sort fewer items (their count is kept on the device). `P = ⌈(c − 1) / RADIX_BITS⌉` passes (at least
//! one, which for `c = 1` only drops zero digits) of `⌈(c − 1) / P⌉` bits each, low digit first.
//!
//! Item `j` of virtual window `v`'s first pass is chunk scalar `j mod len` of window `w = (j / len)·q + v`:
//! windows in order, scalars in order inside each. Every pass is stable, so inside a bucket the entries stay in
//! that order, which is also the order [`crate::msm::model`] uses: unlike the counting sort, the GPU's sorted
//! entries are deterministic and equal the model's.
//!
//! # One pass (per virtual window; kernels in `entry/msm_sort.rs`)
//! The items are cut into tiles of [`SORT_TILE`]; block `g` of a window's `G` blocks takes `tiles_per_block`
//! consecutive tiles ([`block_items`]).
//! 1. **upsweep**: block `g` counts its items per digit (shared-memory atomics) into `hist[d · G + g]`;
//! 2. **spine**: an exclusive scan of `hist` (the counting sort's scan kernels, reused): the first output
//!    position of digit `d`'s items of block `g`; its total is the item count of the next pass;
//! 3. **downsweep**: block `g` goes through its tiles in order. For each item, its rank among the tile's items of
//!    the same digit that come before it (per warp with `match.any` and one shared atomic per group of equal
//!    digits on a warp-private counter, then across warps); the tile is reordered
//!    by digit in shared memory and written out, so consecutive threads write consecutive positions of a run.
//!
//! After the last pass, `offsets[v][b]` (the first position of bucket `b`, `offsets[v][B]` the entries) comes
//! from a binary search of the sorted keys, one thread per bucket ([`lower_bound`]).

/// Threads per block of the sort kernels.
pub const SORT_BLOCK: u32 = 256;
/// Warps per sort block.
pub const SORT_WARPS: u32 = SORT_BLOCK / 32;
/// Items per thread and tile: a tile is [`SORT_TILE`] items.
pub const SORT_ITEMS: u32 = 8;
/// Items per tile (one downsweep step of a block).
pub const SORT_TILE: u32 = SORT_BLOCK * SORT_ITEMS;
/// Most key bits one pass sorts: `2^RADIX_BITS` digits, whose per-warp counters and per-digit words fit the
/// downsweep's shared memory ([`downsweep_shared_bytes`]) next to a tile.
pub const RADIX_BITS: u32 = 11;
/// Most blocks per virtual window and pass (each takes `tiles_per_block` tiles): enough to fill the GPU,
/// few enough that the spine scans a short histogram.
pub const SORT_GRID: u32 = 256;

/// Radix passes for window bits `c` (keys are buckets, `c − 1` bits): at least one.
#[inline(always)]
pub const fn radix_passes(c: u32) -> u32 {
    let key_bits = c - 1;
    if key_bits == 0 { 1 } else { key_bits.div_ceil(RADIX_BITS) }
}

/// Key bits per pass for window bits `c` (0 for `c = 1`: one digit, the pass only drops zero digits).
#[inline(always)]
pub const fn radix_bits(c: u32) -> u32 {
    (c - 1).div_ceil(radix_passes(c))
}

/// The digit of `key` that pass `pass` sorts by (passes of `bits` bits, low digit first).
#[inline(always)]
pub const fn radix_digit(key: u32, pass: u32, bits: u32) -> u32 {
    (key >> (pass * bits)) & ((1u32 << bits) - 1)
}

/// Blocks and tiles per block of one pass over at most `items` items per virtual window:
/// `(blocks, tiles_per_block)`, `blocks <= SORT_GRID`, `blocks · tiles_per_block · SORT_TILE >= items`.
#[inline(always)]
pub const fn sort_grid(items: u32) -> (u32, u32) {
    let tiles = if items == 0 { 1 } else { items.div_ceil(SORT_TILE) };
    let per_block = tiles.div_ceil(SORT_GRID);
    // per_block >= 1 since tiles >= 1.
    (tiles.div_ceil(if per_block == 0 { 1 } else { per_block }), per_block)
}

/// The items `[lo, hi)` block `block` of a pass takes, of `items` in all (empty past the end).
#[inline(always)]
pub const fn block_items(block: u32, tiles_per_block: u32, items: u32) -> (u32, u32) {
    let span = tiles_per_block as u64 * SORT_TILE as u64;
    let lo = block as u64 * span;
    let hi = lo + span;
    let lo = if lo < items as u64 { lo as u32 } else { items };
    let hi = if hi < items as u64 { hi as u32 } else { items };
    (lo, hi)
}

/// Windows that share virtual window `v` (`w = k·q + v < windows`): its first pass has that many times `len`
/// items.
#[inline(always)]
pub const fn windows_in(v: u32, windows: u32, q: u32) -> u32 {
    // q >= 1 always; the checked form keeps a panic path out of the kernels.
    match windows.saturating_sub(v).checked_add(q.saturating_sub(1)) {
        Some(top) => match top.checked_div(q) {
            Some(k) => k,
            None => 0,
        },
        None => 0,
    }
}

/// Shared memory of a downsweep block for passes of `bits` bits: a counter per warp and digit, three words
/// per digit (tile totals, tile offsets, the block's running output positions), a word per warp, and the
/// reordered tile (key and value per item).
pub const fn downsweep_shared_bytes(bits: u32) -> usize {
    let digits = 1usize << bits;
    (SORT_WARPS as usize * digits + 3 * digits + SORT_WARPS as usize + 2 * SORT_TILE as usize) * 4
}

/// Shared memory of an upsweep block: a counter per digit.
pub const fn upsweep_shared_bytes(bits: u32) -> usize {
    (1usize << bits) * 4
}

/// The first position of `sorted[0..len]` (ascending) holding a key `>= key`; `len` if none.
#[inline(always)]
pub fn lower_bound(len: u32, key: u32, sorted: impl Fn(u32) -> u32) -> u32 {
    let (mut lo, mut hi) = (0u32, len);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if sorted(mid) < key {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// A CPU replay of the sort's passes with the GPU's geometry (blocks, tiles, histogram layout, spine), so the
/// tests check the index arithmetic the kernels use, and the sorted order the GPU must produce.
#[cfg(not(target_arch = "nvptx64"))]
pub mod model {
    use super::*;

    /// One pass over `items` (key, value) with the kernels' block split: the histogram `hist[d · G + g]`, its
    /// exclusive scan, then every block's items placed in order. Returns the reordered items.
    pub fn radix_pass(items: &[(u32, u32)], pass: u32, bits: u32, max_items: u32) -> Vec<(u32, u32)> {
        let n = items.len() as u32;
        let (blocks, per_block) = sort_grid(max_items);
        let digits = 1usize << bits;
        let mut hist = vec![0u32; digits * blocks as usize];
        for g in 0..blocks {
            let (lo, hi) = block_items(g, per_block, n);
            for &(key, _) in &items[lo as usize..hi as usize] {
                hist[radix_digit(key, pass, bits) as usize * blocks as usize + g as usize] += 1;
            }
        }
        let mut next = 0u32;
        let spine: Vec<u32> = hist
            .iter()
            .map(|&count| {
                let at = next;
                next += count;
                at
            })
            .collect();
        let mut out = vec![(0u32, 0u32); n as usize];
        for g in 0..blocks {
            let (lo, hi) = block_items(g, per_block, n);
            let mut cursor: Vec<u32> = (0..digits).map(|d| spine[d * blocks as usize + g as usize]).collect();
            for &item in &items[lo as usize..hi as usize] {
                let d = radix_digit(item.0, pass, bits) as usize;
                out[cursor[d] as usize] = item;
                cursor[d] += 1;
            }
        }
        out
    }

    /// All passes for window bits `c` over one virtual window's first-pass items (zero digits already
    /// dropped), as the kernels run them; `max_items` sizes the grid as the host does.
    pub fn radix_sort(items: Vec<(u32, u32)>, c: u32, max_items: u32) -> Vec<(u32, u32)> {
        let bits = radix_bits(c);
        (0..radix_passes(c)).fold(items, |items, pass| radix_pass(&items, pass, bits, max_items))
    }
}
