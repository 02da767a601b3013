//! Batch-addition kernels (algorithm and thread mapping: [`crate::batch_add`]).
//!
//! Per curve `C` in {g1, g2} (points `blstrs::G1Affine` / `G2Affine` bytes, results `G1Projective` /
//! `G2Projective` bytes):
//! - `batch_add_{C}_accumulate(points, set_offsets, bitmap, lane_sums)`: grid `(blocks_per_set, sets)`; one
//!   XYZZ sum per thread (no general additions here, so the kernel keeps the mixed add's register count);
//! - `batch_add_{C}_reduce(input, in_per_set, output)`: grid `(out_per_set, sets)`, shared memory
//!   `quad_shared_bytes(blockDim.x, size_of(F))`; groups of four threads share each general addition
//!   (`quad_add_step`): strided sums per group, then a tree over the groups, one XYZZ partial per block;
//! - `batch_add_{C}_finish(input, in_per_set, out)`: the same with grid `(1, sets)`, writing `out[set]` as
//!   Jacobian;
//! - `batch_add_{C}_affine_level(input, count, shift, output)`: one affine halving level over
//!   `n = ceil(*count / 2^shift)` points (the count lives on the device); warp `w` of `W` takes blocks of
//!   32 pairs `w, w + W, …` (lane `l` pair `32k + l`), staged through shared memory, and each lane shares one
//!   inversion over its pairs;
//! - `batch_add_{C}_affine_level_gather(points, indices, count, output)`: the same level over the points a
//!   bitmap selects (`points[indices[k]]`), the first level of the affine method under a bitmap.
//!
//! Compaction of a bitmap (the scalar split for provers, and the affine method's selected points):
//! `batch_add_classify_scalars`, `batch_add_count_chunks`, `batch_add_selected_totals`,
//! `batch_add_compact_indices`.
use crate::batch_add::{
    CHUNK_BYTES, LEVEL_BLOCK_PAIRS, LevelLane, QUAD, QUAD_COPY_STEP, QuadFlow, ScalarClass, WINDOW, accumulate_lane,
    affine_level_lane, classify_scalar, level_blocks_of_warp, level_input_len, quad_add_step, quad_slot, selection_word,
    stage_stride, window_range,
};
use crate::curve::{Affine, Jacobian, Xyzz};
use crate::device::{
    FULL_MASK, SharedArena, atomic::atomic_add_u32, ballot, block_dim_x, block_idx, grid_dim,
    WARP_SIZE, copy16_shared_to_global, cp_async16, cp_async_wait_all, lane_id, shfl_xor_u32, sync_threads, sync_warp,
    shfl_idx_u32, shfl_up_u32, thread_idx_x, warp_id_in_block,
};
use crate::field::{Field, Fq, Fq2, Fr};
use core::marker::PhantomData;
use core::mem::{MaybeUninit, size_of};

use super::shared_or_trap;

/// Words of the "other" bitmap per chunk of the compaction kernels (256 threads × 4 words).
pub const CHUNK_WORDS: u32 = 1024;
/// Threads per block of the compaction kernels.
pub const COMPACT_BLOCK: u32 = 256;
const WORDS_PER_THREAD: u32 = CHUNK_WORDS / COMPACT_BLOCK;

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

/// `ws`'s `P1 ← P1 + P2` by the four lanes of this thread's group ([`quad_add_step`]), a group barrier after
/// every step.
///
/// # Safety
/// Called by all four lanes of the group (`mask` = their bits) with the same `ws`: [`quad_slot::COUNT`] field
/// elements of shared memory that no other thread touches meanwhile, `P1` and `P2` written before a barrier.
#[inline(always)]
unsafe fn quad_add<F: Field>(ws: *mut F, lane: u32, mask: u32) {
    let mut step = 0;
    loop {
        // SAFETY: slots < quad_slot::COUNT; a step's reads and writes are disjoint (quad_add_step), and the
        // barrier below orders them against the next step.
        let flow = quad_add_step(step, lane, |i| unsafe { ws.add(i).read() }, |i, v| unsafe { ws.add(i).write(v) });
        // SAFETY: the flow is the same for the group's four lanes (it depends on slots they all read after the
        // same barrier), so all of them reach this barrier as often.
        unsafe { sync_warp(mask) };
        match flow {
            QuadFlow::Next => step += 1,
            QuadFlow::Copy => step = QUAD_COPY_STEP,
            QuadFlow::Done => return,
        }
    }
}

/// The block's sum of its share of set `s` (thread 0 gets it): group `g` of `G` (four threads, one quad
/// workspace in shared memory) sums entries `k ≡ b·G + g (mod out_per_set·G)` of the set's `in_per_set`
/// inputs, then the groups' sums go through a tree (`g ← g + (g + stride)`, a block barrier per level).
///
/// # Safety
/// See the kernels' docs; `blockDim.x` a power of two and a multiple of 4, dynamic shared memory at least
/// `quad_shared_bytes(blockDim.x, size_of::<F>())`.
#[inline(always)]
unsafe fn block_partial<F: Field>(input: *const Xyzz<F>, in_per_set: u32) -> Xyzz<F> {
    let (block, grid) = (block_idx(), grid_dim());
    let set = block.y as usize;
    let t = thread_idx_x();
    let (group, lane, groups) = (t / QUAD, t % QUAD, block_dim_x() / QUAD);
    let mask = 0xf << (t % WARP_SIZE / QUAD * QUAD);
    if groups == 0 || block_dim_x() % QUAD != 0 {
        // SAFETY: trap ends the kernel (a launch error); nothing is written. Uniform over the block.
        unsafe { core::arch::nvptx::trap() }
    }
    let mut arena = SharedArena::dynamic();
    let all = shared_or_trap::<F>(&mut arena, groups * quad_slot::COUNT as u32).as_ptr();
    let ws = |g: u32| all.wrapping_add(g as usize * quad_slot::COUNT);
    let mine = ws(group);
    // SAFETY (this function's shared accesses): lane `lane` writes coordinate `lane` of P1 or P2 of its own
    // group's workspace between the group's steps; barriers as commented.
    unsafe {
        mine.add(quad_slot::X1 + lane as usize).write(F::ZERO);
        let stride = grid.x * groups;
        let mut k = block.x * groups + group;
        while k < in_per_set {
            // Coordinate `lane` of input k (Xyzz is four F's, repr(C)); k < in_per_set.
            let src = input.add(set * in_per_set as usize + k as usize).cast::<F>();
            mine.add(quad_slot::X2 + lane as usize).write(src.add(lane as usize).read());
            sync_warp(mask);
            quad_add(mine, lane, mask);
            k += stride;
        }
        let mut half = groups / 2;
        while half > 0 {
            // Every thread reaches the barrier (the loop bound is block-uniform): the groups' previous sums
            // are complete before another group reads them.
            sync_threads();
            if group < half {
                // Group g + half wrote its sum before the barrier and does not write in this level.
                mine.add(quad_slot::X2 + lane as usize).write(ws(group + half).add(lane as usize).read());
                sync_warp(mask);
                quad_add(mine, lane, mask);
            }
            half /= 2;
        }
        sync_threads();
        let sum = ws(0);
        Xyzz { x: sum.read(), y: sum.add(1).read(), zz: sum.add(2).read(), zzz: sum.add(3).read() }
    }
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

/// 16 bytes, the unit of the affine levels' staged copies (`ld/st .v4.b32`, 16-byte aligned).
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Chunk([u32; 4]);

const _: () = assert!(size_of::<Chunk>() == CHUNK_BYTES);
const _: () = assert!(size_of::<Affine<Fq>>() % CHUNK_BYTES == 0 && size_of::<Affine<Fq2>>() % CHUNK_BYTES == 0);

/// A `T` read from chunk `src`, `src + step`, … (`size_of::<T>()` a multiple of 16).
///
/// # Safety
/// The chunks are readable and 16-byte aligned.
#[inline(always)]
unsafe fn read_chunks<T: Copy>(src: *const Chunk, step: usize) -> T {
    let mut value = MaybeUninit::<T>::uninit();
    let dst = value.as_mut_ptr().cast::<Chunk>();
    let mut c = 0;
    while c < size_of::<T>() / CHUNK_BYTES {
        // SAFETY: c < the chunks of T (the local is written unaligned); the source is the caller's.
        unsafe { dst.add(c).write_unaligned(src.add(c * step).read()) };
        c += 1;
    }
    // SAFETY: every byte was written (T is plain data: field limbs).
    unsafe { value.assume_init() }
}

/// Writes `value` to chunk `dst`, `dst + step`, ….
///
/// # Safety
/// The chunks are writable and 16-byte aligned.
#[inline(always)]
unsafe fn write_chunks<T: Copy>(dst: *mut Chunk, step: usize, value: &T) {
    let src = (value as *const T).cast::<Chunk>();
    let mut c = 0;
    while c < size_of::<T>() / CHUNK_BYTES {
        // SAFETY: c < the chunks of T; the destination is the caller's.
        unsafe { dst.add(c * step).write(src.add(c).read_unaligned()) };
        c += 1;
    }
}

/// One lane of `batch_add_{C}_affine_level`. Its warp's blocks go through the warp's two staging areas in
/// shared memory (one slot of [`stage_stride`] chunks per lane), so that global memory sees whole-warp runs,
/// and the copy of the next block (`cp.async`) is in flight while the lanes compute on the current one.
///
/// The staged sequence has `2 · blocks` steps: the forward pass's blocks `0, 1, …` (x coordinates only), then
/// the backward pass's `blocks − 1, …, 0` (whole pairs); step `s` lives in area `s % 2`.
///
/// With `GATHER` the level's list is `input[indices[0]], input[indices[1]], …` (the points a bitmap selects):
/// the copies read each point's 16-byte chunks from where its index says; without, point `k` is `input[k]`.
struct StagedLane<F, const GATHER: bool> {
    input: *const Chunk,
    /// The list's point indices into `input` (`GATHER` only).
    indices: *const u32,
    output: *mut Chunk,
    /// The warp's first staging area; the second follows it.
    areas: *mut Chunk,
    /// The next step to be used.
    step: u32,
    /// This warp's blocks.
    blocks: u32,
    pairs: u32,
    warp: u32,
    warps: u32,
    lane: u32,
    field: PhantomData<F>,
}

impl<F: Field, const GATHER: bool> StagedLane<F, GATHER> {
    /// Chunks of one point and of one coordinate.
    const POINT: usize = size_of::<Affine<F>>() / CHUNK_BYTES;
    const COORD: usize = Self::POINT / 2;
    /// Staging slot strides of a pair (inputs) and of a point (outputs).
    const PAIR_SLOT: usize = stage_stride(2 * size_of::<Affine<F>>());
    const POINT_SLOT: usize = stage_stride(size_of::<Affine<F>>());

    fn block(&self, j: u32) -> u32 {
        self.warp + j * self.warps
    }

    /// The list's point `k`.
    ///
    /// # Safety
    /// `k` is below the list's length (with `GATHER`, `indices[k]` names a point of `input`).
    #[inline(always)]
    unsafe fn point(&self, k: usize) -> *const Affine<F> {
        // SAFETY: the caller's bounds.
        unsafe { self.input.cast::<Affine<F>>().add(if GATHER { *self.indices.add(k) as usize } else { k }) }
    }

    /// Pairs of block `j` that exist (32 except in the level's last block).
    fn block_pairs(&self, j: u32) -> u32 {
        (self.pairs - self.block(j) * LEVEL_BLOCK_PAIRS).min(LEVEL_BLOCK_PAIRS)
    }

    fn active(&self, j: u32) -> bool {
        self.lane < self.block_pairs(j)
    }

    /// First chunk of block `j`'s outputs (`32·block` points in).
    fn region(&self, j: u32) -> *mut Chunk {
        // SAFETY: block(j) < ceil(pairs / 32), so the region starts inside the output.
        unsafe { self.output.add(self.block(j) as usize * LEVEL_BLOCK_PAIRS as usize * Self::POINT) }
    }

    /// Where the lane's prefix product of block `j` lives, and the step between its chunks: word-interleaved
    /// across the lanes in a full block (coalesced), in the lane's own output x in the last, partial one.
    fn prefix_at(&self, j: u32) -> (*mut Chunk, usize) {
        let lane = self.lane as usize;
        // SAFETY: a full block's region holds 32 points = 32·POINT chunks >= COORD·32; in a partial block an
        // active lane's output point is in the output.
        unsafe {
            if self.block_pairs(j) == LEVEL_BLOCK_PAIRS {
                (self.region(j).add(lane), LEVEL_BLOCK_PAIRS as usize)
            } else {
                (self.region(j).add(lane * Self::POINT), 1)
            }
        }
    }

    /// Chunks of one staging area (32 pair slots).
    const AREA: usize = LEVEL_BLOCK_PAIRS as usize * Self::PAIR_SLOT;

    /// The area of staged step `s`.
    fn area(&self, s: u32) -> *mut Chunk {
        // SAFETY: the warp owns two consecutive areas.
        unsafe { self.areas.add((s % 2) as usize * Self::AREA) }
    }

    /// Block and x-only flag of staged step `s`.
    fn step_block(&self, s: u32) -> (u32, bool) {
        if s < self.blocks { (s, true) } else { (2 * self.blocks - 1 - s, false) }
    }

    /// Starts the copy of step `s`'s pairs (only their x for a forward step) into its area, the warp's lanes
    /// taking consecutive chunks.
    ///
    /// # Safety
    /// Called by all 32 lanes (a gathered copy shuffles); every lane of the warp has finished reading that
    /// area (it last held step `s − 2`).
    #[inline(always)]
    unsafe fn issue(&self, s: u32) {
        let (j, x_only) = self.step_block(s);
        let area = self.area(s);
        // SAFETY: forwarded (all lanes are here).
        unsafe {
            // Each branch passes a constant, so the inlined divisions below are by constants.
            if x_only { self.issue_chunks(j, area, Self::COORD as u32) } else { self.issue_chunks(j, area, Self::POINT as u32) }
        }
    }

    /// [`Self::issue`] of block `j` into `area`, copying the first `take` chunks of each point (`COORD`: x,
    /// `POINT`: all). The block's copied chunks are numbered `u = 2·take·slot + c` and lane `l` takes
    /// `u = l, l + 32, …`, in 32-bit arithmetic with constant divisors (the 64-bit `/ 12` and `% 12` over all
    /// of a pair's chunks, half of them skipped in a forward step, were 14% of a level's stall samples, ncu at
    /// 2^24). Gathered, each lane loads the two indices of its own pair once and every chunk's copy takes its
    /// point's index from that lane by shuffle, so the copies wait for one round of index loads instead of
    /// one per chunk (each a dependent load before its `cp.async`).
    ///
    /// # Safety
    /// As [`Self::issue`].
    #[inline(always)]
    unsafe fn issue_chunks(&self, j: u32, area: *mut Chunk, take: u32) {
        let per_pair = 2 * take;
        let count = self.block_pairs(j) * per_pair;
        let block_pair = self.block(j) * LEVEL_BLOCK_PAIRS;
        let (first, second) = if GATHER && self.active(j) {
            let pair = (block_pair + self.lane) as usize;
            // SAFETY: an active lane's pair is below `pairs`, so both its points are in the list (indices).
            unsafe { (*self.indices.add(2 * pair), *self.indices.add(2 * pair + 1)) }
        } else {
            (0, 0)
        };
        // Whole-warp rounds (a gathered copy's shuffles need every lane); lanes past `count` copy nothing.
        let mut u = self.lane;
        while u < count.next_multiple_of(WARP_SIZE) {
            let (slot, c) = (u / per_pair, u % per_pair);
            let (half, within) = (c / take, c % take);
            let point = if GATHER {
                // SAFETY: all 32 lanes run the same rounds (the bound is warp-uniform).
                let (a, b) = unsafe { (shfl_idx_u32(FULL_MASK, first, slot), shfl_idx_u32(FULL_MASK, second, slot)) };
                if half == 0 { a } else { b }
            } else {
                2 * (block_pair + slot) + half
            };
            if u < count {
                // SAFETY: u < count, so slot < block_pairs names a pair below `pairs`, whose points are in the list
                // (gathered: the indices lane `slot` loaded); inputs are 16-byte aligned whole chunks; slot < 32
                // and the chunk is inside the slot; the area is free (caller).
                unsafe {
                    let src = self.input.add(point as usize * Self::POINT + within as usize);
                    let dst = area.add(slot as usize * Self::PAIR_SLOT + (half as usize) * Self::POINT + within as usize);
                    cp_async16(dst.cast(), src.cast())
                };
            }
            u += WARP_SIZE;
        }
    }

    /// Waits for the next step's block, starts the copy of the step after it into the other area, and returns
    /// the lane's slot in the area.
    ///
    /// # Safety
    /// Called by all 32 lanes, once per step, in step order (it synchronizes the warp).
    #[inline(always)]
    unsafe fn stage(&mut self) -> *const Chunk {
        let s = self.step;
        cp_async_wait_all();
        // SAFETY: all lanes are here: their copies of step s have landed, and they have finished with step
        // s − 1 (its reads, and in the backward pass its stores through the area).
        unsafe { sync_warp(FULL_MASK) };
        if s + 1 < 2 * self.blocks {
            // SAFETY: step s + 1's area last held step s − 1, which every lane has finished with (above).
            unsafe { self.issue(s + 1) };
        }
        self.step = s + 1;
        // SAFETY: lane < 32 slots.
        unsafe { self.area(s).add(self.lane as usize * Self::PAIR_SLOT) }
    }
}

impl<F: Field, const GATHER: bool> LevelLane<F> for StagedLane<F, GATHER> {
    fn xs(&mut self, j: u32) -> Option<(F, F)> {
        // SAFETY: every lane of the warp makes the same calls in step order (affine_level_lane's loops are
        // warp-uniform, one xs per forward block, one pair per backward block).
        let slot = unsafe { self.stage() };
        // SAFETY: the slot holds the pair's x chunks (read only for an active lane).
        self.active(j).then(|| unsafe { (read_chunks(slot, 1), read_chunks(slot.add(Self::POINT), 1)) })
    }

    fn ys(&self, j: u32) -> (F, F) {
        let i = (self.block(j) * LEVEL_BLOCK_PAIRS + self.lane) as usize;
        // SAFETY: asked only for an active lane, whose pair i < pairs has both points in the list.
        unsafe { ((*self.point(2 * i)).y, (*self.point(2 * i + 1)).y) }
    }

    fn store_prefix(&mut self, j: u32, prefix: F) {
        let (at, step) = self.prefix_at(j);
        // SAFETY: see prefix_at; only this lane uses these chunks until the block's sums are stored.
        unsafe { write_chunks(at, step, &prefix) }
    }

    fn pair(&mut self, j: u32) -> Option<(Affine<F>, Affine<F>)> {
        // SAFETY: as in xs.
        let slot = unsafe { self.stage() };
        // SAFETY: the slot holds the lane's pair.
        self.active(j).then(|| unsafe { (read_chunks(slot, 1), read_chunks(slot.add(Self::POINT), 1)) })
    }

    fn prefix(&self, j: u32) -> F {
        let (at, step) = self.prefix_at(j);
        // SAFETY: written by store_prefix(j) of this lane.
        unsafe { read_chunks(at, step) }
    }

    fn store(&mut self, j: u32, sum: Option<Affine<F>>) {
        let region = self.region(j);
        if self.block_pairs(j) < LEVEL_BLOCK_PAIRS {
            if let Some(sum) = sum {
                // SAFETY: the lane's own output point (its prefix, read already, was its x).
                unsafe { write_chunks(region.add(self.lane as usize * Self::POINT), 1, &sum) };
            }
            return;
        }
        // A full block: the sums go through the area that held its pairs (the other one is being filled) and
        // out as 32 consecutive points.
        let area = self.area(self.step - 1);
        // SAFETY: all lanes are here (warp-uniform branch); every lane has read its pair slot and its
        // prefix, so the area and the region may be overwritten.
        unsafe { sync_warp(FULL_MASK) };
        if let Some(sum) = sum {
            // SAFETY: lane < 32 point slots (POINT_SLOT <= PAIR_SLOT), inside the area.
            unsafe { write_chunks(area.add(self.lane as usize * Self::POINT_SLOT), 1, &sum) };
        }
        // SAFETY: as above.
        unsafe { sync_warp(FULL_MASK) };
        let mut v = self.lane;
        while v < LEVEL_BLOCK_PAIRS * Self::POINT as u32 {
            let (point, chunk) = ((v / Self::POINT as u32) as usize, (v % Self::POINT as u32) as usize);
            // SAFETY: v < 32 points of the region; the slot of point v / POINT holds that sum.
            unsafe { copy16_shared_to_global(region.add(v as usize).cast(), area.add(point * Self::POINT_SLOT + chunk).cast()) };
            v += WARP_SIZE;
        }
    }
}

/// Body of `batch_add_{C}_affine_level` (`GATHER = false`: the list is `input[0..n]`) and of
/// `batch_add_{C}_affine_level_gather` (the list is `input[indices[k]]`, `k < n`); `n = ceil(*count / 2^shift)`.
///
/// # Safety
/// See the kernels' docs.
#[inline(always)]
unsafe fn affine_level<F: Field, const GATHER: bool>(
    input: *const Affine<F>,
    indices: *const u32,
    count: *const u32,
    shift: u32,
    output: *mut Affine<F>,
) {
    let lane = lane_id();
    let warp = (block_idx().x * block_dim_x() + thread_idx_x()) / WARP_SIZE;
    let warps = grid_dim().x * block_dim_x() / WARP_SIZE;
    // SAFETY: count is one readable word (caller).
    let n = level_input_len(unsafe { *count }, shift);
    let pairs = n / 2;
    let mut arena = SharedArena::dynamic();
    let warp_chunks = 2 * StagedLane::<F, GATHER>::AREA as u32;
    let all = shared_or_trap::<Chunk>(&mut arena, block_dim_x() / WARP_SIZE * warp_chunks);
    // SAFETY: warp_id_in_block() < blockDim.x / 32 pairs of areas.
    let areas = unsafe { all.as_ptr().add((warp_id_in_block() * warp_chunks) as usize) };
    let mut lane_io = StagedLane::<F, GATHER> {
        input: input.cast(),
        indices,
        output: output.cast(),
        areas,
        step: 0,
        blocks: level_blocks_of_warp(pairs, warp, warps),
        pairs,
        warp,
        warps,
        lane,
        field: PhantomData,
    };
    if warp == 0 && lane == 0 && n % 2 == 1 {
        // SAFETY: the lone last point of the list goes to output[pairs] (output holds ceil(n/2) = pairs + 1
        // entries); no block's region reaches it (a full block ends at or before `pairs`, a partial one writes
        // only its pairs' outputs).
        unsafe { output.add(pairs as usize).write(*lane_io.point(n as usize - 1)) };
    }
    if lane_io.blocks == 0 {
        return;
    }
    // SAFETY: nothing has used the areas yet (the stages then keep one step in flight).
    unsafe { lane_io.issue(0) };
    affine_level_lane(lane_io.blocks, &mut lane_io);
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
    ($field:ty, $accumulate:ident, $reduce:ident, $finish:ident, $affine_level:ident, $affine_level_gather:ident, $expand:ident, $curve:literal) => {
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
        /// Grid `(out_per_set, sets)`, 1-D blocks of a power-of-two number (>= 4) of threads, four per
        /// addition, dynamic shared memory >= `quad_shared_bytes(blockDim.x, size_of::<F>())` (less traps). `input` holds `in_per_set · sets` entries, `output`
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
        /// Grid `(1, sets)`, 1-D blocks of a power-of-two number (>= 4) of threads, four per addition,
        /// dynamic shared memory >= `quad_shared_bytes(blockDim.x, size_of::<F>())` (less traps). `input` holds `in_per_set · sets` entries, `out`
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
        /// One-dimensional grid, blocks of a multiple of 32 threads, dynamic shared memory >=
        /// `batch_add::affine_level_shared_bytes(size_of::<Affine>())` (less traps). The list has
        /// `n = ceil(*count / 2^shift)` points (`count`: one readable word). Warp `w` of `W` takes the 32-pair
        /// blocks `k = w, w + W, …` below `ceil((n / 2) / 32)`; lane `l` adds pair `i = 32k + l` (if `i < n / 2`),
        /// reading `input[2i], input[2i+1]` and writing `output[i]`, and shares one inversion over its pairs. A
        /// warp's copies go through its own two shared-memory areas; a full block's prefix products and sums are
        /// written to `output[32k .. 32k + 32]` only (a partial block's lane only to its `output[i]`). Warp 0's
        /// lane 0 copies the lone last point of an odd `n` to `output[n / 2]`. `input` holds `n` points, `output`
        /// `ceil(n / 2)`, both 16-byte aligned; they must not overlap; `n <= 2^31`.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $affine_level(
            input: *const Affine<$field>,
            count: *const u32,
            shift: u32,
            output: *mut Affine<$field>,
        ) {
            // SAFETY: forwarded to the caller.
            unsafe { affine_level::<$field, false>(input, core::ptr::null(), count, shift, output) }
        }

        #[doc = concat!("The first affine level over the ", $curve, " points a bitmap selects: `output[i] = ")]
        #[doc = "points[indices[2i]] + points[indices[2i+1]]` for the `n = *count` indices."]
        ///
        /// # Safety
        /// As the plain level (with `shift = 0`), where the list's point `k` is `points[indices[k]]`: `indices`
        /// holds `n` entries, each naming a point of `points` (16-byte aligned); `output` holds `ceil(n / 2)`
        /// points and overlaps neither.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $affine_level_gather(
            points: *const Affine<$field>,
            indices: *const u32,
            count: *const u32,
            output: *mut Affine<$field>,
        ) {
            // SAFETY: forwarded to the caller.
            unsafe { affine_level::<$field, true>(points, indices, count, 0, output) }
        }
    };
}

batch_add_kernels!(Fq, batch_add_g1_accumulate, set_sum_g1_reduce, set_sum_g1_finish, batch_add_g1_affine_level, batch_add_g1_affine_level_gather, bench_batch_add_g1_expand, "G1");
batch_add_kernels!(Fq2, batch_add_g2_accumulate, set_sum_g2_reduce, set_sum_g2_finish, batch_add_g2_affine_level, batch_add_g2_affine_level_gather, bench_batch_add_g2_expand, "G2");

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

/// Word `w` of a bitmap of `len` bits, its bits at `len` and past cleared (0 for a word past the end).
///
/// # Safety
/// `ceil(len / 32)` words of `bits` are readable.
#[inline(always)]
unsafe fn bitmap_word(bits: *const u32, len: u32, w: u32) -> u32 {
    let start = w as u64 * 32;
    if start >= len as u64 {
        return 0;
    }
    let valid = len as u64 - start;
    // SAFETY: w < ceil(len / 32).
    let word = unsafe { *bits.add(w as usize) };
    if valid >= 32 { word } else { word & ((1u32 << valid) - 1) }
}

/// The set bits of this thread's [`WORDS_PER_THREAD`] words of chunk `chunk`.
///
/// # Safety
/// As [`bitmap_word`].
#[inline(always)]
unsafe fn thread_popcount(bits: *const u32, len: u32, chunk: u32) -> u32 {
    let first = chunk * CHUNK_WORDS + thread_idx_x() * WORDS_PER_THREAD;
    let mut count = 0;
    for k in 0..WORDS_PER_THREAD {
        // SAFETY: forwarded.
        count += unsafe { bitmap_word(bits, len, first + k) }.count_ones();
    }
    count
}

/// `chunk_counts[c]` += set bits of words `[c · CHUNK_WORDS, (c + 1) · CHUNK_WORDS)` of the `len`-bit bitmap
/// `bits` (bits at `len` and past are ignored).
///
/// # Safety
/// Grid `(ceil(ceil(len / 32) / CHUNK_WORDS))`, blocks of [`COMPACT_BLOCK`] threads; `bits` holds
/// `ceil(len / 32)` words, `chunk_counts` one zero-initialised counter per block (lane 0 of each warp adds
/// atomically).
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn batch_add_count_chunks(bits: *const u32, len: u32, chunk_counts: *mut u32) {
    let chunk = block_idx().x;
    // SAFETY: forwarded bounds; all lanes take part in warp_sum.
    let total = unsafe { warp_sum(thread_popcount(bits, len, chunk)) };
    if lane_id() == 0 && total != 0 {
        // SAFETY: chunk < number of counters; only atomic accesses meanwhile.
        unsafe { atomic_add_u32(chunk_counts.add(chunk as usize), total) };
    }
}

/// Totals of the chunk counts for the affine levels over a selection: `totals[0]` = the selected points `m`
/// (the gathered level's count), `totals[1] = 0` and `totals[2] = ceil(m / 2^shift)`, which is the set the XYZZ
/// stage sums after `shift` levels (`totals[1..3]` are its set offsets).
///
/// # Safety
/// One block of [`COMPACT_BLOCK`] threads (dynamic shared memory >= `COMPACT_BLOCK · 4` bytes); `chunk_counts`
/// holds `chunks` counts; `totals` three words. Thread 0 writes `totals`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn batch_add_selected_totals(chunk_counts: *const u32, chunks: u32, shift: u32, totals: *mut u32) {
    let t = thread_idx_x();
    let mut own = 0u32;
    let mut k = t;
    while k < chunks {
        // SAFETY: k < chunks.
        own = own.wrapping_add(unsafe { *chunk_counts.add(k as usize) });
        k += COMPACT_BLOCK;
    }
    let mut arena = SharedArena::dynamic();
    let warps = shared_or_trap::<u32>(&mut arena, COMPACT_BLOCK);
    // SAFETY: all threads take part in the warp sum and the barrier; one slot per warp.
    unsafe {
        let sum = warp_sum(own);
        if lane_id() == 0 {
            warps.set_unchecked(warp_id_in_block() as usize, sum);
        }
        sync_threads();
    }
    if t == 0 {
        let mut m = 0u32;
        for w in 0..COMPACT_BLOCK / WINDOW {
            // SAFETY: w < the block's warps, each wrote its slot before the barrier.
            m = m.wrapping_add(unsafe { warps.get_unchecked(w as usize) });
        }
        // SAFETY: totals holds three words; only thread 0 writes.
        unsafe {
            totals.write(m);
            totals.add(1).write(0);
            totals.add(2).write(level_input_len(m, shift));
        }
    }
}

/// Writes the indices of the set bits of the `len`-bit bitmap `bits`, in increasing order, to `indices`
/// (deterministic).
///
/// Block `c` takes its chunk's words in rounds of [`COMPACT_BLOCK`] consecutive words (one per thread); a
/// block scan of the words' bit counts gives each word's place, and each warp then writes its 32 words one at
/// a time, lane `l` storing bit `l`, so a store instruction writes one word's indices side by side.
///
/// # Safety
/// Grid `(chunks)` with `chunks = ceil(ceil(len / 32) / CHUNK_WORDS)`, blocks of [`COMPACT_BLOCK`] threads,
/// dynamic shared memory >= `COMPACT_BLOCK · 4` bytes. `chunk_counts` holds the `chunks` totals of
/// `batch_add_count_chunks`; `indices` holds at least their sum. Block `c` writes the indices of its chunk's
/// bits at `sum(chunk_counts[..c])` on. No aliasing.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn batch_add_compact_indices(
    bits: *const u32,
    len: u32,
    chunk_counts: *const u32,
    indices: *mut u32,
) {
    let (chunk, t, lane, warp) = (block_idx().x, thread_idx_x(), lane_id(), warp_id_in_block());
    let warps = COMPACT_BLOCK / WINDOW;
    let mut arena = SharedArena::dynamic();
    let totals = shared_or_trap::<u32>(&mut arena, COMPACT_BLOCK);
    // Base of the chunk: the counts of all earlier chunks (strided, then warp sums, then the block's).
    let mut earlier = 0u32;
    let mut k = t;
    while k < chunk {
        // SAFETY: k < chunk < chunks.
        earlier = earlier.wrapping_add(unsafe { *chunk_counts.add(k as usize) });
        k += COMPACT_BLOCK;
    }
    // SAFETY: all threads take part in the warp sums and barriers; warp < warps <= totals.len().
    let mut base = unsafe {
        let sum = warp_sum(earlier);
        if lane == 0 {
            totals.set_unchecked(warp as usize, sum);
        }
        sync_threads();
        let mut base = 0u32;
        for w in 0..warps {
            base = base.wrapping_add(totals.get_unchecked(w as usize));
        }
        sync_threads();
        base
    };
    for round in 0..WORDS_PER_THREAD {
        let w = chunk * CHUNK_WORDS + round * COMPACT_BLOCK + t;
        // SAFETY: bitmap_word reads only words below ceil(len / 32).
        let word = unsafe { bitmap_word(bits, len, w) };
        let own = word.count_ones();
        // SAFETY: all threads take part in the shuffles and barriers (the loops are block-uniform).
        unsafe {
            let mut inclusive = own;
            let mut d = 1;
            while d < WINDOW {
                let up = shfl_up_u32(FULL_MASK, inclusive, d);
                if lane >= d {
                    inclusive += up;
                }
                d *= 2;
            }
            if lane == WINDOW - 1 {
                totals.set_unchecked(warp as usize, inclusive);
            }
            sync_threads();
            let (mut before, mut round_total) = (0u32, 0u32);
            for v in 0..warps {
                let count = totals.get_unchecked(v as usize);
                if v < warp {
                    before += count;
                }
                round_total += count;
            }
            sync_threads();
            let exclusive = base + before + inclusive - own;
            let below = (1u32 << lane) - 1;
            for src in 0..WINDOW {
                let (bits_of, at) = (shfl_idx_u32(FULL_MASK, word, src), shfl_idx_u32(FULL_MASK, exclusive, src));
                if (bits_of >> lane) & 1 == 1 {
                    // at + (bits below this one) < the chunk's base + its count <= the room in `indices`.
                    indices.add((at + (bits_of & below).count_ones()) as usize).write((w - lane + src) * 32 + lane);
                }
            }
            base += round_total;
        }
    }
}
