//! Batch-addition kernels (algorithm and thread mapping: [`crate::batch_add`]).
//!
//! Per curve `C` in {g1, g2} (points `blstrs::G1Affine` / `G2Affine` bytes, results `G1Projective` /
//! `G2Projective` bytes):
//! - `batch_add_{C}_accumulate(points, set_offsets, bitmap, lane_sums)`: grid `(blocks_per_set, sets)`; one
//!   XYZZ sum per thread (no general additions here, so the kernel keeps the mixed add's register count);
//! - `batch_add_{C}_reduce(input, in_per_set, output)`: grid `(out_per_set, sets)`, shared memory
//!   `blockDim.x · size_of(Xyzz)`; strided sums then a block tree, one XYZZ partial per block;
//! - `batch_add_{C}_finish(input, in_per_set, out)`: the same with grid `(1, sets)`, writing `out[set]` as
//!   Jacobian;
//! - `batch_add_{C}_affine_level(input, n, output)`: one affine halving level; thread `t` of `T` takes pairs
//!   `t, t + T, …` (coalesced) and shares one inversion over them.
//!
//! Scalar split (for provers; `blstrs::Scalar` bytes): `batch_add_classify_scalars`,
//! `batch_add_count_chunks`, `batch_add_compact_indices`.
use crate::batch_add::{
    ScalarClass, WINDOW, accumulate_lane, affine_level_run, classify_scalar, combine, selection_word, window_range,
};
use crate::curve::{Affine, Jacobian, Xyzz, outlined};
use crate::device::{
    FULL_MASK, SharedArena, SharedSlice, atomic::atomic_add_u32, ballot, block_dim_x, block_idx, grid_dim,
    lane_id, shfl_xor_u32, sync_threads, thread_idx_x, warp_id_in_block,
};
use crate::field::{Field, Fq, Fq2, Fr};

use super::shared_or_trap;

/// Words of the "other" bitmap per chunk of the compaction kernels (256 threads × 4 words).
pub const CHUNK_WORDS: u32 = 1024;
/// Threads per block of the compaction kernels.
pub const COMPACT_BLOCK: u32 = 256;
const WORDS_PER_THREAD: u32 = CHUNK_WORDS / COMPACT_BLOCK;

/// Every thread of the block contributes `value`; thread 0 gets the tree sum of the block (others get
/// garbage). `slots` holds one point per thread.
///
/// # Safety
/// Called by every thread of the block (it contains barriers); `slots.len() >= blockDim.x`, a power of two.
#[inline(always)]
unsafe fn block_sum<F: Field>(slots: &SharedSlice<Xyzz<F>>, value: Xyzz<F>) -> Xyzz<F> {
    let t = thread_idx_x();
    // SAFETY: t < blockDim.x <= slots.len(); each thread writes only its own slot before the barrier.
    unsafe { slots.set_unchecked(t as usize, value) };
    let mut stride = block_dim_x() / 2;
    while stride > 0 {
        // SAFETY: all threads reach the barrier (the loop bound is block-uniform).
        unsafe { sync_threads() };
        if t < stride {
            // SAFETY: t + stride < blockDim.x; slot t is written only by thread t and slot t + stride is not
            // written in this step (t + stride >= stride), barriers separate the steps.
            unsafe {
                let sum = combine(&slots.get_unchecked(t as usize), &slots.get_unchecked((t + stride) as usize));
                slots.set_unchecked(t as usize, sum);
            }
        }
        stride /= 2;
    }
    // SAFETY: as above; the final barrier makes slot 0 visible (only thread 0 uses the result).
    unsafe {
        sync_threads();
        slots.get_unchecked(0)
    }
}

/// Body of `batch_add_{C}_accumulate`.
///
/// # Safety
/// See the kernels' docs.
#[inline(always)]
unsafe fn accumulate<F: Field>(
    points: *const Affine<F>,
    set_offsets: *const u32,
    bitmap: *const u32,
    lane_sums: *mut Xyzz<F>,
) {
    let (block, grid) = (block_idx(), grid_dim());
    let set = block.y as usize;
    // SAFETY: set < sets, and set_offsets holds sets + 1 entries.
    let (first, last) = unsafe { (*set_offsets.add(set), *set_offsets.add(set + 1)) };
    let set_len = last.saturating_sub(first);
    let warps_per_block = block_dim_x() / WINDOW;
    let warp = block.x * warps_per_block + warp_id_in_block();
    let range = window_range(set_len.div_ceil(WINDOW), warp, grid.x * warps_per_block);
    // SAFETY (closures): selection_word only asks for bitmap words holding bits of [first, last), which the
    // caller guarantees exist; point_at only gets indices < set_len (selected bits are masked to the set).
    let word_at = |k: usize| unsafe { *bitmap.add(k) };
    let bitmap_words = if bitmap.is_null() { None } else { Some(word_at) };
    let acc = accumulate_lane(
        lane_id(),
        range,
        |w| selection_word(bitmap_words, first, set_len, w),
        |i| unsafe { *points.add(first as usize + i as usize) },
    );
    let per_set = grid.x as usize * block_dim_x() as usize;
    let thread = block.x as usize * block_dim_x() as usize + thread_idx_x() as usize;
    // SAFETY: lane_sums holds per_set entries per set; this thread owns entry set * per_set + thread.
    unsafe { lane_sums.add(set * per_set + thread).write(acc) };
}

/// Block `b` of set `s` sums entries `k ≡ b·B + t (mod out_per_set·B)` of the set's `in_per_set` inputs.
///
/// # Safety
/// See the kernels' docs.
#[inline(always)]
unsafe fn block_partial<F: Field>(input: *const Xyzz<F>, in_per_set: u32) -> Xyzz<F> {
    let (block, grid) = (block_idx(), grid_dim());
    let set = block.y as usize;
    let stride = grid.x * block_dim_x();
    let mut acc = Xyzz::<F>::IDENTITY;
    let mut k = block.x * block_dim_x() + thread_idx_x();
    while k < in_per_set {
        // SAFETY: input holds in_per_set entries per set; k < in_per_set.
        outlined::add_assign(&mut acc, unsafe { &*input.add(set * in_per_set as usize + k as usize) });
        k += stride;
    }
    let mut arena = SharedArena::dynamic();
    let slots = shared_or_trap::<Xyzz<F>>(&mut arena, block_dim_x());
    // SAFETY: every thread of the block calls block_sum; slots has blockDim.x entries.
    unsafe { block_sum(&slots, acc) }
}

/// Body of `batch_add_{C}_reduce`.
///
/// # Safety
/// See the kernels' docs.
#[inline(always)]
unsafe fn reduce<F: Field>(input: *const Xyzz<F>, in_per_set: u32, output: *mut Xyzz<F>) {
    // SAFETY: forwarded to the caller.
    let sum = unsafe { block_partial(input, in_per_set) };
    if thread_idx_x() == 0 {
        let (block, grid) = (block_idx(), grid_dim());
        // SAFETY: output holds grid.x entries per set; this block owns one.
        unsafe { output.add(block.y as usize * grid.x as usize + block.x as usize).write(sum) };
    }
}

/// Body of `batch_add_{C}_finish`.
///
/// # Safety
/// See the kernels' docs.
#[inline(always)]
unsafe fn finish<F: Field>(input: *const Xyzz<F>, in_per_set: u32, out: *mut Jacobian<F>) {
    // SAFETY: forwarded to the caller.
    let sum = unsafe { block_partial(input, in_per_set) };
    if thread_idx_x() == 0 {
        // SAFETY: out holds one entry per set (grid (1, sets)).
        unsafe { out.add(block_idx().y as usize).write(sum.to_jacobian()) };
    }
}

/// Body of `batch_add_{C}_affine_level`.
///
/// # Safety
/// See the kernels' docs.
#[inline(always)]
unsafe fn affine_level<F: Field>(input: *const Affine<F>, n: u32, output: *mut Affine<F>) {
    let thread = block_idx().x * block_dim_x() + thread_idx_x();
    let threads = grid_dim().x * block_dim_x();
    let pairs = n / 2;
    if thread == 0 && n % 2 == 1 {
        // SAFETY: the lone last point goes to output[pairs] (output holds ceil(n/2) = pairs + 1 entries).
        unsafe { output.add(pairs as usize).write(*input.add(n as usize - 1)) };
    }
    // Pairs thread, thread + threads, …: a warp's loads and stores of one step are contiguous.
    let count = if thread < pairs { (pairs - 1 - thread) / threads + 1 } else { 0 };
    let pair = |j: u32| (thread + j * threads) as usize;
    // SAFETY (closures): j < count, so pair(j) < pairs, 2·pair(j) + 1 < n and pair(j) < ceil(n/2); each output
    // entry belongs to exactly one thread, whose prefix value sits in that entry's x until the final write
    // replaces it.
    affine_level_run(
        (0, count),
        |j| unsafe { (*input.add(2 * pair(j)), *input.add(2 * pair(j) + 1)) },
        |j, v| unsafe { (&raw mut (*output.add(pair(j))).x).write(v) },
        |j| unsafe { (&raw const (*output.add(pair(j))).x).read() },
        |j, p| unsafe { output.add(pair(j)).write(p) },
    );
}

/// Body of `batch_add_{C}_expand`.
///
/// # Safety
/// See the kernels' docs.
#[inline(always)]
unsafe fn expand<F: Field>(seeds: *const Jacobian<F>, step: *const Affine<F>, run: u32, n: u32, out: *mut Affine<F>) {
    let thread = block_idx().x as u64 * block_dim_x() as u64 + thread_idx_x() as u64;
    let start = thread * run as u64;
    if start >= n as u64 {
        return;
    }
    // SAFETY: thread < ceil(n / run) <= seeds' length; step is one point.
    let (seed, step) = unsafe { (*seeds.add(thread as usize), *step) };
    let mut acc = Xyzz::from_jacobian(&seed);
    let end = (start + run as u64).min(n as u64);
    let mut i = start;
    while i < end {
        // SAFETY: i < n; this thread owns out[start..end].
        unsafe { out.add(i as usize).write(acc.to_affine()) };
        acc = acc.add_affine(&step);
        i += 1;
    }
}

macro_rules! batch_add_kernels {
    ($field:ty, $accumulate:ident, $reduce:ident, $finish:ident, $affine_level:ident, $expand:ident, $curve:literal) => {
        #[doc = concat!("Benchmark inputs: `out[t·run + j] = seeds[t] + j·step` (", $curve, "; seeds Jacobian, rest affine).")]
        ///
        /// # Safety
        /// Thread `t` (global x index) with `t·run < n` reads `seeds[t]` and `*step` and writes
        /// `out[t·run .. min((t+1)·run, n)]`; `seeds` holds `ceil(n / run)` points, `out` `n`. No aliasing.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $expand(
            seeds: *const Jacobian<$field>,
            step: *const Affine<$field>,
            run: u32,
            n: u32,
            out: *mut Affine<$field>,
        ) {
            // SAFETY: forwarded to the caller.
            unsafe { expand(seeds, step, run, n, out) }
        }

        #[doc = concat!("Per-thread XYZZ sums of the ", $curve, " point sets (see [`crate::batch_add`]).")]
        ///
        /// # Safety
        /// Grid `(blocks_per_set, sets)`, 1-D blocks of a multiple of 32 threads. Set `s` is
        /// `points[set_offsets[s] .. set_offsets[s + 1]]` (`set_offsets`: `sets + 1` non-decreasing entries, the
        /// last <= the point count, which is < 2^31). `bitmap` is null (all points) or holds a bit for every
        /// point index below `set_offsets[sets]`, rounded up to a whole word (bit `i` of word `i / 32` selects
        /// point `i`). Each warp reads its windows' points and bitmap words; thread `t` of block `(b, s)` writes
        /// `lane_sums[s · T + b · blockDim.x + t]` with `T = blocks_per_set · blockDim.x`, so `lane_sums` holds
        /// `T · sets` entries. No aliasing.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $accumulate(
            points: *const Affine<$field>,
            set_offsets: *const u32,
            bitmap: *const u32,
            lane_sums: *mut Xyzz<$field>,
        ) {
            // SAFETY: forwarded to the caller.
            unsafe { accumulate(points, set_offsets, bitmap, lane_sums) }
        }

        #[doc = concat!("Shrinks each set's ", $curve, " XYZZ partials: `in_per_set` -> `gridDim.x` per set.")]
        ///
        /// # Safety
        /// Grid `(out_per_set, sets)`, 1-D blocks of a power-of-two number of threads, dynamic shared memory
        /// >= `blockDim.x · size_of::<Xyzz>()` (less traps). `input` holds `in_per_set · sets` entries, `output`
        /// `out_per_set · sets`; thread 0 of block `(b, s)` writes `output[s · out_per_set + b]`. No aliasing.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $reduce(
            input: *const Xyzz<$field>,
            in_per_set: u32,
            output: *mut Xyzz<$field>,
        ) {
            // SAFETY: forwarded to the caller.
            unsafe { reduce(input, in_per_set, output) }
        }

        #[doc = concat!("Sums each set's ", $curve, " partials; `out[s]` is Jacobian (blstrs projective).")]
        ///
        /// # Safety
        /// Grid `(1, sets)`, 1-D blocks of a power-of-two number of threads, dynamic shared memory
        /// >= `blockDim.x · size_of::<Xyzz>()` (less traps). `input` holds `in_per_set · sets` entries, `out`
        /// holds `sets`; thread 0 of block `(0, s)` writes `out[s]`. No aliasing.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $finish(
            input: *const Xyzz<$field>,
            in_per_set: u32,
            out: *mut Jacobian<$field>,
        ) {
            // SAFETY: forwarded to the caller.
            unsafe { finish(input, in_per_set, out) }
        }

        #[doc = concat!("One affine halving level over ", $curve, " points: `output[i] = input[2i] + input[2i+1]`.")]
        ///
        /// # Safety
        /// One-dimensional grid of `T` threads (any number: each shares one inversion over its pairs, about
        /// `(n / 2) / T` of them). Thread `t` handles pairs `i = t, t + T, t + 2T, …` below `n / 2`, reading
        /// `input[2i], input[2i+1]` and writing `output[i]` (also used as scratch); thread 0 copies the lone
        /// last point of an odd `n` to `output[n / 2]`. `input` holds `n` points, `output` `ceil(n / 2)`;
        /// they must not overlap; `n <= 2^31`.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $affine_level(input: *const Affine<$field>, n: u32, output: *mut Affine<$field>) {
            // SAFETY: forwarded to the caller.
            unsafe { affine_level(input, n, output) }
        }
    };
}

batch_add_kernels!(Fq, batch_add_g1_accumulate, batch_add_g1_reduce, batch_add_g1_finish, batch_add_g1_affine_level, batch_add_g1_expand, "G1");
batch_add_kernels!(Fq2, batch_add_g2_accumulate, batch_add_g2_reduce, batch_add_g2_finish, batch_add_g2_affine_level, batch_add_g2_expand, "G2");

/// Classifies scalars for a prover: bit `i` of `ones` is set when `scalars[i] == 1`, of `others` when it is
/// neither 0 nor 1 (its point goes to the MSM).
///
/// # Safety
/// One thread per scalar, 1-D blocks of a multiple of 32 threads covering `n` (threads past `n` vote false).
/// Lane 0 of each warp writes word `i / 32` of `ones` and `others` when that word holds bits below `n`:
/// both must hold `ceil(n / 32)` words. `scalars` holds `n` values. No aliasing.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn batch_add_classify_scalars(
    scalars: *const Fr,
    n: u32,
    ones: *mut u32,
    others: *mut u32,
) {
    let i = block_idx().x as u64 * block_dim_x() as u64 + thread_idx_x() as u64;
    let class = if i < n as u64 {
        // SAFETY: i < n.
        classify_scalar(unsafe { &*scalars.add(i as usize) })
    } else {
        ScalarClass::Zero
    };
    // SAFETY: the whole warp reaches the votes (no thread returned before).
    let (one_bits, other_bits) =
        unsafe { (ballot(FULL_MASK, class == ScalarClass::One), ballot(FULL_MASK, class == ScalarClass::Other)) };
    let word = (i / 32) as usize;
    if lane_id() == 0 && (word as u64) * 32 < n as u64 {
        // SAFETY: word < ceil(n / 32); lane 0 of this warp is the only writer of this word.
        unsafe {
            ones.add(word).write(one_bits);
            others.add(word).write(other_bits);
        }
    }
}

/// Sum of `value` over the warp (butterfly; every lane gets it).
///
/// # Safety
/// Called by all 32 lanes together.
#[inline(always)]
unsafe fn warp_sum(mut value: u32) -> u32 {
    let mut d = 16;
    while d > 0 {
        // SAFETY: forwarded to the caller (all lanes).
        value = value.wrapping_add(unsafe { shfl_xor_u32(FULL_MASK, value, d) });
        d /= 2;
    }
    value
}

/// The set bits of this thread's [`WORDS_PER_THREAD`] words of chunk `chunk`.
///
/// # Safety
/// `words` entries of `bits` are readable.
#[inline(always)]
unsafe fn thread_popcount(bits: *const u32, words: u32, chunk: u32) -> u32 {
    let first = chunk * CHUNK_WORDS + thread_idx_x() * WORDS_PER_THREAD;
    let mut count = 0;
    for k in 0..WORDS_PER_THREAD {
        if first + k < words {
            // SAFETY: first + k < words.
            count += unsafe { *bits.add((first + k) as usize) }.count_ones();
        }
    }
    count
}

/// `chunk_counts[c]` += set bits of words `[c · CHUNK_WORDS, (c + 1) · CHUNK_WORDS)` of `bits`.
///
/// # Safety
/// Grid `(ceil(words / CHUNK_WORDS))`, blocks of [`COMPACT_BLOCK`] threads; `bits` holds `words` words,
/// `chunk_counts` one zero-initialised counter per block (lane 0 of each warp adds atomically).
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn batch_add_count_chunks(bits: *const u32, words: u32, chunk_counts: *mut u32) {
    let chunk = block_idx().x;
    // SAFETY: forwarded bounds; all lanes take part in warp_sum.
    let total = unsafe { warp_sum(thread_popcount(bits, words, chunk)) };
    if lane_id() == 0 && total != 0 {
        // SAFETY: chunk < number of counters; only atomic accesses meanwhile.
        unsafe { atomic_add_u32(chunk_counts.add(chunk as usize), total) };
    }
}

/// Writes the indices of the set bits of `bits`, in increasing order, to `indices` (deterministic).
///
/// # Safety
/// Grid `(chunks)` with `chunks = ceil(words / CHUNK_WORDS)`, blocks of [`COMPACT_BLOCK`] threads, dynamic
/// shared memory >= `COMPACT_BLOCK · 4` bytes. `chunk_counts` holds the `chunks` totals of
/// `batch_add_count_chunks`; `indices` holds at least their sum. Thread `t` of block `c` writes the indices of
/// its words' bits at `sum(chunk_counts[..c]) + (bits of earlier threads of the chunk)`. No aliasing.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn batch_add_compact_indices(
    bits: *const u32,
    words: u32,
    chunk_counts: *const u32,
    indices: *mut u32,
) {
    let (chunk, t) = (block_idx().x, thread_idx_x());
    let mut arena = SharedArena::dynamic();
    let scan = shared_or_trap::<u32>(&mut arena, COMPACT_BLOCK);
    // Base of the chunk: the counts of all earlier chunks (strided, then a block sum).
    let mut base = 0u32;
    let mut k = t;
    while k < chunk {
        // SAFETY: k < chunk < chunks.
        base = base.wrapping_add(unsafe { *chunk_counts.add(k as usize) });
        k += COMPACT_BLOCK;
    }
    // SAFETY: all threads take part in the warp sums and barriers; t < COMPACT_BLOCK = scan.len().
    let own = unsafe { thread_popcount(bits, words, chunk) };
    unsafe {
        let warp_base = warp_sum(base);
        if lane_id() == 0 {
            scan.set_unchecked(warp_id_in_block() as usize, warp_base);
        }
        sync_threads();
        let mut chunk_base = 0u32;
        for w in 0..COMPACT_BLOCK / WINDOW {
            chunk_base = chunk_base.wrapping_add(scan.get_unchecked(w as usize));
        }
        sync_threads();
        // Inclusive scan of `own` over the block (Hillis–Steele).
        scan.set_unchecked(t as usize, own);
        let mut d = 1;
        while d < COMPACT_BLOCK {
            sync_threads();
            let add = if t >= d { scan.get_unchecked((t - d) as usize) } else { 0 };
            sync_threads();
            scan.set_unchecked(t as usize, scan.get_unchecked(t as usize) + add);
            d *= 2;
        }
        let mut out = chunk_base + scan.get_unchecked(t as usize) - own;
        let first = chunk * CHUNK_WORDS + t * WORDS_PER_THREAD;
        for k in 0..WORDS_PER_THREAD {
            if first + k < words {
                let mut word = *bits.add((first + k) as usize);
                while word != 0 {
                    indices.add(out as usize).write((first + k) * 32 + word.trailing_zeros());
                    word &= word - 1;
                    out += 1;
                }
            }
        }
    }
}
