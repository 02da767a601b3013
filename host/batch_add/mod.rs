//! Batch addition of affine points on the GPU: the sum of a point set, optionally under a selection bitmap,
//! many independent sets in one launch; G1 and G2; results as blstrs projective points. Plus the scalar split
//! a Groth16 prover needs before it: which points go nowhere (scalar 0), to batch addition (1) or to the MSM.
//! [`BatchAdder::enqueue_tables`] sums several point tables of one shape under one bitmap (a Groth16
//! assignment's queries), compacting the bitmap once for all of them.
//!
//! The algorithm and kernels are described in `zkgpu_kernels::batch_add` and DESIGN.md ("Batch
//! addition"). The CPU reference is [`crate::batch_add::cpu`].
//!
//! ```no_run
//! # fn main() -> zkgpu::Result<()> {
//! use group::{Curve, Group};
//! use zkgpu::batch_add::{G1, Method, batch_add};
//! let gpu = zkgpu::Gpu::new(0)?;
//! let g = blstrs::G1Projective::generator();
//! let points = [g, g.double(), g.double() + g].map(|p| p.to_affine());
//! let points = gpu.upload(&points)?;
//! let bitmap = gpu.upload(&[0b101u32])?; // points 0 and 2
//! let sum: blstrs::G1Projective = batch_add::<G1>(&gpu, &points, Some(&bitmap), Method::Xyzz)?;
//! # Ok(())
//! # }
//! ```
/// The CPU reference (tests compare the GPU against it).
pub mod cpu;

use std::marker::PhantomData;

use cudarc::driver::LaunchConfig;
use zkgpu_kernels::batch_add::{
    AFFINE_LEVEL_BLOCK, FINISH_BLOCK, QUAD, WINDOW, affine_level_shared_bytes, quad_shared_bytes,
};
use zkgpu_kernels::interface::{self, Entry, Signature, sig};

pub use crate::curve::{Curve, G1, G2};
use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::kernel_args::{self as args, KernelFn, Ptr, read, read_or_null, write};
use crate::memory::DeviceBuffer;

/// Threads per block of the accumulate kernels: one warp, so the occupancy query can fill every SM to the
/// register limit (the kernels use no shared memory and no barrier).
const ACCUMULATE_BLOCK: u32 = WINDOW;
/// Threads per block of the reduce kernels (four per addition: `QUAD`).
const REDUCE_BLOCK: u32 = 64;
/// Partials each group of four reduce threads sums before the block tree.
const REDUCE_FAN_IN: u32 = 8;
/// Additions in flight per reduce and finish block.
const REDUCE_GROUPS: u32 = REDUCE_BLOCK / QUAD;
const FINISH_GROUPS: u32 = FINISH_BLOCK / QUAD;
/// Largest total point count: the kernels index points with `u32` and round up to whole 32-point windows.
const MAX_POINTS: usize = 1 << 31;
/// CUDA's limit on `gridDim.y` (one set per grid row).
const MAX_SETS: usize = 65_535;
/// Affine levels run while every thread gets at least this many pairs (one inversion per run).
const AFFINE_MIN_RUN: usize = 16;

/// Words of the bitmap per compaction chunk, threads per compaction block (as in the kernels).
const CHUNK_WORDS: usize = 1024;
const COMPACT_BLOCK: u32 = 256;

/// How the sum is computed (the bench variants `xyzz` and `affine`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Method {
    /// Every lane accumulates its points in XYZZ with mixed additions (8M + 2S each).
    #[default]
    Xyzz,
    /// Affine pairwise levels with one inversion per thread run (Montgomery's trick, ~5M + 1S per pair) while
    /// the list is large, then XYZZ on what is left. Only for single sets; under a bitmap the selected points
    /// are first compacted into an index list on the GPU (no round trip to the host), which needs the set to
    /// start at a multiple of 32 points. Other calls, and lists too short for a level, use [`Method::Xyzz`].
    Affine,
}

/// Checks a bitmap of `words` 32-bit words covers `points` points.
pub(crate) fn check_bitmap(words: usize, points: usize) -> Result<()> {
    let needed = points.div_ceil(32);
    if words < needed {
        return Err(Error::BitmapTooShort { words, needed, points });
    }
    Ok(())
}

/// Checks set offsets (`sets + 1` non-decreasing entries starting anywhere, ending at most at `points`).
pub(crate) fn check_offsets(offsets: &[usize], points: usize) -> Result<()> {
    if offsets.is_empty() {
        return Err(Error::InvalidSets("set offsets need at least one entry (sets + 1 in all)".into()));
    }
    if offsets.len() - 1 > MAX_SETS {
        return Err(Error::InvalidSets(format!("{} sets, at most {MAX_SETS} per call", offsets.len() - 1)));
    }
    if let Some(w) = offsets.windows(2).position(|w| w[0] > w[1]) {
        return Err(Error::InvalidSets(format!("offsets decrease at set {w}: {} > {}", offsets[w], offsets[w + 1])));
    }
    let last = offsets[offsets.len() - 1];
    if last > points {
        return Err(Error::InvalidSets(format!("the last set ends at {last}, past the {points} points")));
    }
    Ok(())
}

/// Kernel handles and scratch for repeated batch additions of one shape (the bench reuses one; the free
/// functions build one per call). All work is queued on the GPU's compute stream.
pub struct BatchAdder<'g, C: Curve> {
    gpu: &'g Gpu,
    method: Method,
    accumulate: KernelFn<sig::BatchAddAccumulate>,
    affine_level: KernelFn<sig::BatchAddAffineLevel>,
    affine_level_gather: KernelFn<sig::BatchAddAffineLevelGather>,
    /// Per-thread XYZZ sums.
    lane_sums: DeviceBuffer<u8>,
    /// Reduces the lane sums to one point per set.
    sums: XyzzSetSum<C>,
    /// Affine levels (ping-pong), empty unless [`Method::Affine`].
    levels: [DeviceBuffer<C::Affine>; 2],
    offsets: DeviceBuffer<u32>,
    /// `[0, points left after the affine levels]`: the one set the XYZZ stage sums (affine method).
    affine_offsets: DeviceBuffer<u32>,
    /// `[set length]`: the count word the levels read (affine method without a bitmap).
    affine_count: DeviceBuffer<u32>,
    /// Compaction of a bitmap for the affine method, allocated by the first call with one.
    selection: Option<Selection>,
    host_offsets: Vec<usize>,
    /// One result buffer (a point per set) per table, grown by [`BatchAdder::enqueue_tables`].
    outs: Vec<DeviceBuffer<C::Projective>>,
    /// Tables of the last queued call (what [`BatchAdder::sums`] returns).
    queued_tables: usize,
    blocks_per_set: u32,
    /// Threads of one affine level launch (one wave).
    affine_threads: usize,
    _curve: PhantomData<C>,
}

impl<'g, C: Curve> BatchAdder<'g, C> {
    /// Prepares sums over `set_offsets` (`sets + 1` entries; set `s` is points `offsets[s]..offsets[s + 1]`)
    /// of a point buffer holding `points` points.
    pub fn new(gpu: &'g Gpu, points: usize, set_offsets: &[usize], method: Method) -> Result<Self> {
        Self::build(gpu, points, set_offsets, method, None)
    }

    /// [`BatchAdder::new`] within a device-memory budget: the adder holds at most `max_device_bytes`, the
    /// affine method's bitmap compaction included (allocated here, so calls allocate nothing). Where the
    /// affine levels (3/4 of the points, affine) do not fit it sums in XYZZ ([`BatchAdder::method`] says
    /// so); below the XYZZ scratch `Err(DeviceBudget)` stating it, with nothing allocated.
    pub fn with_budget(
        gpu: &'g Gpu,
        points: usize,
        set_offsets: &[usize],
        method: Method,
        max_device_bytes: usize,
    ) -> Result<Self> {
        Self::build(gpu, points, set_offsets, method, Some(max_device_bytes))
    }

    /// Device memory [`BatchAdder::new`] allocates for this shape and method on `gpu`, the bitmap compaction
    /// ([`BatchAdder::reserve_selection`]) and `tables` results ([`BatchAdder::reserve_tables`]) included:
    /// known before allocating (it loads the kernels, whose occupancy sizes the lane sums).
    pub fn bytes(gpu: &Gpu, points: usize, set_offsets: &[usize], method: Method, tables: usize) -> Result<usize> {
        check_offsets(set_offsets, points)?;
        let kernels = AdderKernels::<C>::load(gpu)?;
        let sizing = Sizing::new(gpu, &kernels, points, set_offsets)?;
        let sets = set_offsets.len() - 1;
        let affine = method == Method::Affine && sets == 1;
        Ok(sizing.layout::<C>(affine).bytes + tables.saturating_sub(1) * sets * size_of::<C::Projective>())
    }

    fn build(
        gpu: &'g Gpu,
        points: usize,
        set_offsets: &[usize],
        method: Method,
        budget: Option<usize>,
    ) -> Result<Self> {
        check_offsets(set_offsets, points)?;
        if points > MAX_POINTS {
            return Err(Error::InvalidSets(format!("{points} points, at most {MAX_POINTS} per call")));
        }
        let sets = set_offsets.len() - 1;
        let kernels = AdderKernels::<C>::load(gpu)?;
        let sizing = Sizing::new(gpu, &kernels, points, set_offsets)?;
        let AdderKernels { accumulate, affine_level, affine_level_gather, .. } = kernels;
        let (longest, left, affine_threads) = (sizing.longest, sizing.left, sizing.affine_threads);
        let layout = |affine: bool| sizing.layout::<C>(affine);
        let mut affine = method == Method::Affine && sets == 1;
        if let Some(budget) = budget {
            affine &= layout(true).bytes <= budget;
            let needed = layout(affine).bytes;
            if needed > budget {
                return Err(Error::DeviceBudget {
                    budget,
                    needed,
                    what: format!("a batch addition of {points} points"),
                });
            }
        }
        let Layout { blocks_per_set, per_set, levels, .. } = layout(affine);
        let blocks_per_set = u32::try_from(blocks_per_set).map_err(|_| Error::SizeOverflow("grid".into()))?;
        let lane_sums = gpu.alloc_zeroed::<u8>(per_set * sets.max(1) * C::XYZZ_BYTES)?;
        let sums = XyzzSetSum::new(gpu, per_set, sets.max(1))?;
        let first_level = points.div_ceil(2).min(levels);
        let levels =
            [gpu.alloc_zeroed::<C::Affine>(first_level)?, gpu.alloc_zeroed::<C::Affine>(levels - first_level)?];
        let offsets_u32: Vec<u32> = set_offsets.iter().map(|&o| o as u32).collect();
        let mut adder = BatchAdder {
            gpu,
            method: if affine { Method::Affine } else { Method::Xyzz },
            accumulate,
            affine_level,
            affine_level_gather,
            lane_sums,
            sums,
            levels,
            offsets: gpu.upload(&offsets_u32)?,
            affine_offsets: gpu.upload(&[0u32, left as u32])?,
            affine_count: gpu.upload(&[longest as u32])?,
            selection: None,
            affine_threads,
            host_offsets: set_offsets.to_vec(),
            outs: vec![gpu.alloc_zeroed::<C::Projective>(sets)?],
            queued_tables: 1,
            blocks_per_set,
            _curve: PhantomData,
        };
        if budget.is_some() {
            adder.reserve_selection()?;
        }
        Ok(adder)
    }

    /// The method in use ([`Method::Affine`] falls back to XYZZ for several sets).
    pub fn method(&self) -> Method {
        self.method
    }

    /// Device memory this adder holds now: lane sums, reduction levels, affine levels, the bitmap compaction
    /// (once a bitmap call allocated it) and the result buffers.
    pub fn device_bytes(&self) -> usize {
        let selection = self
            .selection
            .as_ref()
            .map_or(0, |s| s.chunk_counts.byte_len() + s.totals.byte_len() + s.indices.byte_len());
        self.lane_sums.byte_len()
            + self.sums.device_bytes()
            + self.levels.iter().map(DeviceBuffer::byte_len).sum::<usize>()
            + self.offsets.byte_len()
            + self.affine_offsets.byte_len()
            + self.affine_count.byte_len()
            + selection
            + self.outs.iter().map(DeviceBuffer::byte_len).sum::<usize>()
    }

    /// How many affine levels a call runs before the XYZZ stage, with or without a bitmap: 0 for
    /// [`Method::Xyzz`], for a set too short for one, and under a bitmap for a set that does not start at a
    /// multiple of 32 points (those calls are plain XYZZ sums).
    pub fn affine_levels(&self, with_bitmap: bool) -> usize {
        let (first, last) = (self.host_offsets[0], self.host_offsets[self.host_offsets.len() - 1]);
        if self.method != Method::Affine || (with_bitmap && first % 32 != 0) {
            return 0;
        }
        affine_levels(planned_points(last - first, with_bitmap), self.affine_threads).0.len()
    }

    /// Allocates the sums of `tables` tables now, so that queueing that many ([`BatchAdder::enqueue_tables`])
    /// allocates nothing.
    pub fn reserve_tables(&mut self, tables: usize) -> Result<()> {
        let sets = self.host_offsets.len() - 1;
        while self.outs.len() < tables {
            self.outs.push(self.gpu.alloc_zeroed::<C::Projective>(sets)?);
        }
        Ok(())
    }

    /// Queues the sums of `points` (selected by `bitmap` when given) on the compute stream; read them with
    /// [`BatchAdder::sums`]. `points` must hold the point count given to [`BatchAdder::new`].
    pub fn enqueue(&mut self, points: &DeviceBuffer<C::Affine>, bitmap: Option<&DeviceBuffer<u32>>) -> Result<()> {
        self.enqueue_tables(&[points], bitmap)
    }

    /// Queues the sums of each table in `tables` (each holding the point count given to [`BatchAdder::new`],
    /// all under the same `bitmap` when given); [`BatchAdder::sums`] returns them table after table. Under a
    /// bitmap the affine method compacts it once for all tables. Checks every table before queueing anything.
    pub fn enqueue_tables(
        &mut self,
        tables: &[&DeviceBuffer<C::Affine>],
        bitmap: Option<&DeviceBuffer<u32>>,
    ) -> Result<()> {
        for table in tables {
            self.gpu.owns("batch_add points", table)?;
        }
        if let Some(b) = bitmap {
            self.gpu.owns("batch_add bitmap", b)?;
        }
        let total = self.host_offsets[self.host_offsets.len() - 1];
        if let Some(short) = tables.iter().find(|t| t.len() < total) {
            return Err(Error::LengthMismatch { what: "batch_add points", expected: total, actual: short.len() });
        }
        if let Some(b) = bitmap {
            check_bitmap(b.len(), total)?;
        }
        self.reserve_tables(tables.len())?;
        self.queued_tables = tables.len();
        self.enqueue_into(tables, bitmap.map(|b| (b, 0)), 0)
    }

    /// Queues the sums of `points` (the point count given to [`BatchAdder::new`]) selected by the bitmap
    /// words `bitmap[word_first..]` (enough for every point) into result `out`, reserved before
    /// ([`BatchAdder::reserve_tables`]); [`BatchAdder::window_sums`] reads them. For an assignment streamed in
    /// windows: one call per window and query, each into its own result.
    pub(crate) fn enqueue_window(
        &mut self,
        points: &DeviceBuffer<C::Affine>,
        bitmap: &DeviceBuffer<u32>,
        word_first: usize,
        out: usize,
    ) -> Result<()> {
        self.gpu.owns("batch_add points", points)?;
        self.gpu.owns("batch_add bitmap", bitmap)?;
        let total = self.host_offsets[self.host_offsets.len() - 1];
        if points.len() < total {
            return Err(Error::LengthMismatch { what: "batch_add points", expected: total, actual: points.len() });
        }
        check_bitmap(bitmap.len().saturating_sub(word_first), total)?;
        if out >= self.outs.len() {
            return Err(Error::LengthMismatch {
                what: "batch_add results (reserved)",
                expected: out + 1,
                actual: self.outs.len(),
            });
        }
        self.enqueue_into(&[points], Some((bitmap, word_first)), out)
    }

    /// The sums of each table into results `out..`, under the bitmap words from the given one (all checked).
    fn enqueue_into(
        &mut self,
        tables: &[&DeviceBuffer<C::Affine>],
        bitmap: Option<(&DeviceBuffer<u32>, usize)>,
        out: usize,
    ) -> Result<()> {
        let sets = self.host_offsets.len() - 1;
        if sets == 0 {
            return Ok(());
        }
        let total = self.host_offsets[sets];
        let bits = match bitmap {
            Some((b, word_first)) => Some(b.raw_range(word_first..word_first + total.div_ceil(32))?),
            None => None,
        };
        if self.method == Method::Affine && (bits.is_none() || self.affine_levels(true) > 0) {
            if let Some(bits) = &bits {
                let (first, set_len) = (self.host_offsets[0], self.host_offsets[1] - self.host_offsets[0]);
                self.compact(bits, first, set_len, self.affine_levels(true) as u32)?;
            }
            for (k, points) in tables.iter().enumerate() {
                self.enqueue_affine(points, bits.is_some(), out + k)?;
            }
            return Ok(());
        }
        for (k, points) in tables.iter().enumerate() {
            self.enqueue_xyzz(points, bits.as_ref(), out + k)?;
        }
        Ok(())
    }

    /// Per-thread XYZZ sums of every set of `points` (under `bitmap`), reduced into `outs[table]`.
    fn enqueue_xyzz(
        &mut self,
        points: &DeviceBuffer<C::Affine>,
        bitmap: Option<&cudarc::driver::CudaView<'_, u8>>,
        table: usize,
    ) -> Result<()> {
        let stream = self.gpu.stream().clone();
        let sets = (self.host_offsets.len() - 1) as u32;
        let cfg = LaunchConfig {
            grid_dim: (self.blocks_per_set, sets, 1),
            block_dim: (ACCUMULATE_BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        let accumulate = args::BatchAddAccumulate {
            points: read(points.raw()),
            set_offsets: read(self.offsets.raw()),
            bitmap: read_or_null(bitmap),
            lane_sums: write(self.lane_sums.raw_mut()),
        };
        // SAFETY: batch_add_{C}_accumulate: grid (blocks_per_set, sets) of 32-thread blocks; offsets holds
        // sets + 1 checked entries within the point buffer (< 2^31 points); the bitmap covers every point
        // (checked) or is null; lane_sums holds blocks_per_set · 32 · sets XYZZ points; nothing aliases.
        unsafe { self.accumulate.launch(&stream, cfg, accumulate) }?;
        let per_set = self.blocks_per_set * ACCUMULATE_BLOCK;
        self.sums.enqueue(&self.lane_sums, per_set, &mut self.outs[table])
    }

    /// Affine levels, then XYZZ accumulation of what is left (single set), into `outs[table]`. With
    /// `selected` the bitmap was compacted into `selection.indices` (set start a multiple of 32) and the first
    /// level gathers them; their count stays on the device, where every level and the XYZZ stage read it.
    fn enqueue_affine(&mut self, points: &DeviceBuffer<C::Affine>, selected: bool, table: usize) -> Result<()> {
        let stream = self.gpu.stream().clone();
        let (first, last) = (self.host_offsets[0], self.host_offsets[1]);
        let set_len = last - first;
        let (plan, left) = affine_levels(planned_points(set_len, selected), self.affine_threads);
        let selection = match (selected, self.selection.as_ref()) {
            (true, Some(sel)) => Some(sel),
            (true, None) => return Err(Error::InvalidSets("affine sum under a bitmap without its compaction".into())),
            (false, _) => None,
        };
        let count = match selection {
            Some(sel) => sel.totals.raw_range(0..1)?,
            None => self.affine_count.raw_range(0..1)?,
        };
        // `n` bounds each level's input (the selected points are at most the set's); `planned` is what the
        // plan assumed, which sizes the grids.
        let (mut n, mut planned) = (set_len, planned_points(set_len, selected));
        let mut src = 2; // 2 = the caller's points, 0/1 = levels[0/1]
        for (shift, &run) in plan.iter().enumerate() {
            let cfg = affine_level_cfg::<C>((planned / 2).div_ceil(run));
            let shift32 = shift as u32;
            let dst = if src == 0 { 1 } else { 0 };
            let [l0, l1] = &mut self.levels;
            let (input, output) = match (src, dst) {
                (2, _) => (points.raw_range(first..last)?, l0.raw_mut()),
                (0, _) => (l0.raw_range(0..n)?, l1.raw_mut()),
                _ => (l1.raw_range(0..n)?, l0.raw_mut()),
            };
            match selection.filter(|_| src == 2) {
                Some(sel) => {
                    let gather = args::BatchAddAffineLevelGather {
                        points: read(&input),
                        indices: read(sel.indices.raw()),
                        count: read(&count),
                        output: write(output),
                    };
                    // SAFETY: batch_add_{C}_affine_level_gather: `count` is the selected-point count m <= n
                    // (written by the compaction queued before), `indices` holds m indices below n into the
                    // set's points; the output holds ceil(n / 2) >= ceil(m / 2) points; distinct buffers,
                    // 16-byte aligned (allocations are, points are whole chunks, the set starts at a multiple
                    // of 32 points); blocks of 64 threads with the staging shared memory.
                    unsafe { self.affine_level_gather.launch(&stream, cfg, gather) }?;
                }
                None => {
                    let level = args::BatchAddAffineLevel {
                        input: read(&input),
                        count: read(&count),
                        shift: shift32,
                        output: write(output),
                    };
                    // SAFETY: batch_add_{C}_affine_level: the list has ceil(count / 2^shift) <= n points (count
                    // is the set length, or the selected count m <= set length), n < 2^31 of them in the input;
                    // the output holds at least ceil(n / 2) (levels were sized for the first level, later ones
                    // shrink); distinct buffers, 16-byte aligned; blocks of 64 threads with the staging shared
                    // memory (about ceil((n/2)/run) threads, so each shares an inversion over about run pairs).
                    unsafe { self.affine_level.launch(&stream, cfg, level) }?;
                }
            }
            n = n.div_ceil(2);
            planned = planned.div_ceil(2);
            src = dst;
        }
        if planned != left {
            return Err(Error::InvalidSets(format!("affine levels left {planned} points, planned {left}")));
        }
        let cfg = LaunchConfig {
            grid_dim: (self.blocks_per_set, 1, 1),
            block_dim: (ACCUMULATE_BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        let input = match src {
            2 => points.raw_range(first..first + n)?,
            0 => self.levels[0].raw_range(0..n)?,
            _ => self.levels[1].raw_range(0..n)?,
        };
        let offsets = match selection {
            Some(sel) => sel.totals.raw_range(1..3)?,
            None => self.affine_offsets.raw_range(0..2)?,
        };
        let accumulate = args::BatchAddAccumulate {
            points: read(&input),
            set_offsets: read(&offsets),
            bitmap: Ptr::Null,
            lane_sums: write(self.lane_sums.raw_mut()),
        };
        // SAFETY: as in `enqueue`, with one set [0, k) of the level buffer and no bitmap, k <= n (the set's
        // points left after the levels, or ceil(m / 2^levels) for m selected ones).
        unsafe { self.accumulate.launch(&stream, cfg, accumulate) }?;
        let per_set = self.blocks_per_set * ACCUMULATE_BLOCK;
        self.sums.enqueue(&self.lane_sums, per_set, &mut self.outs[table])
    }

    /// Allocates the bitmap compaction of the affine method now (the first call with a bitmap does otherwise),
    /// so that calls with a bitmap allocate nothing; nothing when no call would compact (XYZZ, or a set too
    /// short for an affine level under a bitmap).
    pub fn reserve_selection(&mut self) -> Result<()> {
        if let [first, end, ..] = self.host_offsets[..]
            && self.method == Method::Affine
            && self.affine_levels(true) > 0
            && self.selection.is_none()
        {
            self.selection = Some(Selection::new(self.gpu, end - first)?);
        }
        Ok(())
    }

    /// Queues the compaction of the bits `first..first + len` of `bitmap` (`first` a multiple of 32) into
    /// the selection (allocated by the first call).
    fn compact(
        &mut self,
        bitmap: &cudarc::driver::CudaView<'_, u8>,
        first: usize,
        len: usize,
        levels: u32,
    ) -> Result<()> {
        let sel = match self.selection.take() {
            Some(sel) => sel,
            None => Selection::new(self.gpu, len)?,
        };
        let words = size_of::<u32>();
        let bits = bitmap
            .try_slice(first / 32 * words..(first / 32 + len.div_ceil(32)) * words)
            .ok_or_else(|| Error::InvalidSets(format!("bitmap too short for bits {first}..{}", first + len)))?;
        self.selection.insert(sel).enqueue(self.gpu, &bits, len, levels)
    }

    /// Waits for the sums of results `0..count` ([`BatchAdder::enqueue_window`]), one per set, result after
    /// result.
    pub(crate) fn window_sums(&self, count: usize) -> Result<Vec<C::Projective>> {
        let mut sums = Vec::new();
        for out in self
            .outs
            .get(..count)
            .ok_or_else(|| Error::InvalidSets(format!("{count} results, {} reserved", self.outs.len())))?
        {
            sums.extend(self.gpu.download(out)?);
        }
        Ok(sums)
    }

    /// Waits for the queued sums and returns them, one per set, table after table for
    /// [`BatchAdder::enqueue_tables`].
    pub fn sums(&self) -> Result<Vec<C::Projective>> {
        self.window_sums(self.queued_tables)
    }
}

/// The kernels an adder launches.
struct AdderKernels<C: Curve> {
    accumulate: KernelFn<sig::BatchAddAccumulate>,
    affine_level: KernelFn<sig::BatchAddAffineLevel>,
    affine_level_gather: KernelFn<sig::BatchAddAffineLevelGather>,
    _curve: PhantomData<C>,
}

impl<C: Curve> AdderKernels<C> {
    fn load(gpu: &Gpu) -> Result<Self> {
        Ok(AdderKernels {
            accumulate: gpu.kernel(&C::KERNELS.batch_add_accumulate)?,
            affine_level: affine_level_function::<C, _>(gpu, &C::KERNELS.batch_add_affine_level)?,
            affine_level_gather: affine_level_function::<C, _>(gpu, &C::KERNELS.batch_add_affine_level_gather)?,
            _curve: PhantomData,
        })
    }
}

/// What sizes an adder's scratch: the shape and the device's occupancy of its kernels.
struct Sizing {
    points: usize,
    sets: usize,
    first_point: usize,
    /// The longest set, and what is left of it after the affine levels.
    longest: usize,
    left: usize,
    /// Accumulate blocks resident on the device at once.
    resident: usize,
    /// Threads of one affine level launch (one wave).
    affine_threads: usize,
}

/// What an adder allocates for one method.
struct Layout {
    blocks_per_set: usize,
    per_set: usize,
    levels: usize,
    bytes: usize,
}

impl Sizing {
    fn new<C: Curve>(gpu: &Gpu, kernels: &AdderKernels<C>, points: usize, set_offsets: &[usize]) -> Result<Self> {
        // One wave of warps over all sets, but no more warps per set than the longest set has windows.
        let per_sm = kernels
            .accumulate
            .function()
            .occupancy_max_active_blocks_per_multiprocessor(ACCUMULATE_BLOCK, 0, None)?
            .max(1);
        let resident = gpu.info().sm_count.max(1) as usize * per_sm as usize;
        let longest = set_offsets.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0);
        // The affine levels run one wave: as many threads as fit (registers and staging shared memory); the
        // prefix products are a dependent chain per lane, so the more lanes, the more latency is hidden.
        let level_per_sm = kernels
            .affine_level
            .function()
            .occupancy_max_active_blocks_per_multiprocessor(AFFINE_LEVEL_BLOCK, affine_level_shared::<C>(), None)?
            .max(1);
        let affine_threads = gpu.info().sm_count.max(1) as usize * level_per_sm as usize * AFFINE_LEVEL_BLOCK as usize;
        Ok(Sizing {
            points,
            sets: set_offsets.len() - 1,
            first_point: set_offsets[0],
            longest,
            left: affine_levels(longest, affine_threads).1,
            resident,
            affine_threads,
        })
    }

    /// What the adder allocates with the affine method or without it (the budget is checked against this
    /// before anything is allocated).
    fn layout<C: Curve>(&self, affine: bool) -> Layout {
        let (sets, longest, points) = (self.sets, self.longest, self.points);
        let accumulated = if affine { self.left } else { longest };
        let blocks_per_set = self.resident.div_ceil(sets.max(1)).min(accumulated.div_ceil(WINDOW as usize)).max(1);
        let per_set = blocks_per_set * ACCUMULATE_BLOCK as usize;
        let levels = if affine { points.div_ceil(2) + points.div_ceil(2).div_ceil(2) } else { 0 };
        let compacts = affine
            && self.first_point.is_multiple_of(32)
            && !affine_levels(planned_points(longest, true), self.affine_threads).0.is_empty();
        let bytes = per_set * sets.max(1) * C::XYZZ_BYTES
            + XyzzSetSum::<C>::bytes(per_set, sets)
            + levels * size_of::<C::Affine>()
            + (sets + 1 + 3) * size_of::<u32>()
            + sets * size_of::<C::Projective>()
            + if compacts { Selection::bytes(longest) } else { 0 };
        Layout { blocks_per_set, per_set, levels, bytes }
    }
}

/// The affine method's compaction of a bitmap: kernels and scratch for a set of up to `indices.len()` points.
struct Selection {
    count: KernelFn<sig::BatchAddCountChunks>,
    totals_fn: KernelFn<sig::BatchAddSelectedTotals>,
    compact: KernelFn<sig::BatchAddCompactIndices>,
    /// Set bits per chunk of [`CHUNK_WORDS`] bitmap words.
    chunk_counts: DeviceBuffer<u32>,
    /// `[m, 0, points left after the levels]`: the selected count and the XYZZ stage's set offsets.
    totals: DeviceBuffer<u32>,
    /// The selected points' indices, increasing; the first `m` are written.
    indices: DeviceBuffer<u32>,
}

impl Selection {
    /// Device memory of a selection for `len` bits (what [`Selection::new`] allocates).
    fn bytes(len: usize) -> usize {
        (len.div_ceil(32).div_ceil(CHUNK_WORDS).max(1) + 3 + len) * size_of::<u32>()
    }

    fn new(gpu: &Gpu, len: usize) -> Result<Self> {
        Ok(Selection {
            count: gpu.kernel(&interface::BATCH_ADD_COUNT_CHUNKS)?,
            totals_fn: gpu.kernel(&interface::BATCH_ADD_SELECTED_TOTALS)?,
            compact: gpu.kernel(&interface::BATCH_ADD_COMPACT_INDICES)?,
            chunk_counts: gpu.alloc_zeroed(len.div_ceil(32).div_ceil(CHUNK_WORDS).max(1))?,
            totals: gpu.alloc_zeroed(3)?,
            indices: gpu.alloc_zeroed(len)?,
        })
    }

    /// Queues on the compute stream the compaction of the `len` bits of `bits` (at most the `len` given to
    /// [`Selection::new`]; `bits` holds `ceil(len / 32)` words): the indices of the set bits into `indices`,
    /// their count `m` and `[0, ceil(m / 2^levels)]` into `totals`.
    fn enqueue(&mut self, gpu: &Gpu, bits: &cudarc::driver::CudaView<'_, u8>, len: usize, levels: u32) -> Result<()> {
        if len > self.indices.len() {
            return Err(Error::LengthMismatch {
                what: "bitmap compaction (bits)",
                expected: self.indices.len(),
                actual: len,
            });
        }
        let stream = gpu.stream().clone();
        let len32 = len as u32;
        let chunks = len.div_ceil(32).div_ceil(CHUNK_WORDS).max(1) as u32;
        stream.memset_zeros(self.chunk_counts.raw_mut())?;
        let chunk_cfg =
            LaunchConfig { grid_dim: (chunks, 1, 1), block_dim: (COMPACT_BLOCK, 1, 1), shared_mem_bytes: 0 };
        let count = args::BatchAddCountChunks {
            bits: read(bits),
            len: len32,
            chunk_counts: write(self.chunk_counts.raw_mut()),
        };
        // SAFETY: batch_add_count_chunks: one block per chunk of 1024 words of the len-bit bitmap view (it
        // holds ceil(len / 32) words, checked by the callers), 256 threads; the counters (at least `chunks`,
        // as len is at most the allocation's) were zeroed above.
        unsafe { self.count.launch(&stream, chunk_cfg, count) }?;
        let totals = args::BatchAddSelectedTotals {
            chunk_counts: read(self.chunk_counts.raw()),
            chunks,
            shift: levels,
            totals: write(self.totals.raw_mut()),
        };
        let totals_cfg = LaunchConfig { grid_dim: (1, 1, 1), shared_mem_bytes: COMPACT_BLOCK * 4, ..chunk_cfg };
        // SAFETY: batch_add_selected_totals: one block of 256 threads with 256 u32 of shared memory;
        // chunk_counts holds `chunks` counts, totals three words.
        unsafe { self.totals_fn.launch(&stream, totals_cfg, totals) }?;
        let compact = args::BatchAddCompactIndices {
            bits: read(bits),
            len: len32,
            chunk_counts: read(self.chunk_counts.raw()),
            indices: write(self.indices.raw_mut()),
        };
        // SAFETY: batch_add_compact_indices: the count's grid; chunk_counts holds its totals, whose sum is at
        // most len <= the room in `indices`; 256 u32 of shared memory.
        unsafe {
            self.compact.launch(&stream, LaunchConfig { shared_mem_bytes: COMPACT_BLOCK * 4, ..chunk_cfg }, compact)
        }
    }
}

/// XYZZ points per set of [`XyzzSetSum`]'s level buffers for `per_set` inputs per set (both levels).
pub(crate) fn reduce_scratch_len(per_set: usize) -> usize {
    2 * per_set.div_ceil((REDUCE_GROUPS * REDUCE_FAN_IN) as usize).max(1)
}

/// Sums `sets` groups of `per_set` XYZZ points (laid out set after set) into one Jacobian point per set: reduce
/// levels (each cuts a set's count by `REDUCE_GROUPS · REDUCE_FAN_IN`) until one block's worth is left, then the
/// finish kernel. Used by batch addition (per-thread sums) and the MSM (per-window bucket shares).
pub(crate) struct XyzzSetSum<C: Curve> {
    gpu_stream: std::sync::Arc<cudarc::driver::CudaStream>,
    reduce: KernelFn<sig::SetSum>,
    finish: KernelFn<sig::SetSum>,
    /// Level outputs (ping-pong), each sized for the first level.
    levels: [DeviceBuffer<u8>; 2],
    max_per_set: usize,
    sets: usize,
    _curve: PhantomData<C>,
}

impl<C: Curve> XyzzSetSum<C> {
    /// Kernels and level buffers for up to `max_per_set` inputs per set and `sets` sets.
    pub(crate) fn new(gpu: &Gpu, max_per_set: usize, sets: usize) -> Result<Self> {
        let (reduce, finish) = (gpu.kernel(&C::KERNELS.set_sum_reduce)?, gpu.kernel(&C::KERNELS.set_sum_finish)?);
        gpu.allow_dynamic_shared(reduce.function(), quad_shared_bytes(REDUCE_BLOCK, C::XYZZ_BYTES / 4))?;
        gpu.allow_dynamic_shared(finish.function(), quad_shared_bytes(FINISH_BLOCK, C::XYZZ_BYTES / 4))?;
        let level = Self::bytes(max_per_set, sets) / 2;
        Ok(XyzzSetSum {
            gpu_stream: gpu.stream().clone(),
            reduce,
            finish,
            levels: [gpu.alloc_zeroed::<u8>(level)?, gpu.alloc_zeroed::<u8>(level)?],
            max_per_set,
            sets,
            _curve: PhantomData,
        })
    }

    /// Device memory [`XyzzSetSum::new`] allocates for `max_per_set` inputs per set and `sets` sets (two
    /// level buffers).
    pub(crate) fn bytes(max_per_set: usize, sets: usize) -> usize {
        reduce_scratch_len(max_per_set) * sets.max(1) * C::XYZZ_BYTES
    }

    /// Device memory of the level buffers.
    pub(crate) fn device_bytes(&self) -> usize {
        self.levels.iter().map(DeviceBuffer::byte_len).sum()
    }

    /// Queues the sums of `input` (`per_set · out.len()` XYZZ points, `per_set <= max_per_set`) into `out`.
    pub(crate) fn enqueue(
        &mut self,
        input: &DeviceBuffer<u8>,
        per_set: u32,
        out: &mut DeviceBuffer<C::Projective>,
    ) -> Result<()> {
        let sets = out.len();
        if sets > self.sets
            || per_set as usize > self.max_per_set
            || input.len() < per_set as usize * sets * C::XYZZ_BYTES
        {
            return Err(Error::InvalidSets(format!("{sets} sets of {per_set} points exceed the prepared sums")));
        }
        if sets == 0 {
            return Ok(());
        }
        let stream = self.gpu_stream.clone();
        let (reduce_shared, finish_shared) = (
            quad_shared_bytes(REDUCE_BLOCK, C::XYZZ_BYTES / 4) as u32,
            quad_shared_bytes(FINISH_BLOCK, C::XYZZ_BYTES / 4) as u32,
        );
        let sets32 = sets as u32;
        let mut per_set = per_set;
        let mut from: Option<usize> = None; // None: the input; Some(i): levels[i]
        while per_set > FINISH_GROUPS * REDUCE_FAN_IN {
            let out_per_set = per_set.div_ceil(REDUCE_GROUPS * REDUCE_FAN_IN);
            let cfg = LaunchConfig {
                grid_dim: (out_per_set, sets32, 1),
                block_dim: (REDUCE_BLOCK, 1, 1),
                shared_mem_bytes: reduce_shared,
            };
            let [l0, l1] = &mut self.levels;
            let (src, dst, to) = match from {
                None => (input.raw(), l0.raw_mut(), 0),
                Some(0) => (l0.raw(), l1.raw_mut(), 1),
                _ => (l1.raw(), l0.raw_mut(), 0),
            };
            let reduce = args::SetSum { input: read(src), in_per_set: per_set, output: write(dst) };
            // SAFETY: set_sum_{C}_reduce: the source holds per_set · sets XYZZ points, the destination at
            // least out_per_set · sets (sized for the first level; later ones shrink); the block's shared
            // memory holds one quad workspace per group of four threads; source and destination are distinct buffers.
            unsafe { self.reduce.launch(&stream, cfg, reduce) }?;
            per_set = out_per_set;
            from = Some(to);
        }
        let cfg =
            LaunchConfig { grid_dim: (1, sets32, 1), block_dim: (FINISH_BLOCK, 1, 1), shared_mem_bytes: finish_shared };
        let src = match from {
            None => input.raw(),
            Some(i) => self.levels[i].raw(),
        };
        let finish = args::SetSum { input: read(src), in_per_set: per_set, output: write(out.raw_mut()) };
        // SAFETY: set_sum_{C}_finish: the source holds per_set · sets XYZZ points, out holds sets
        // projective points, shared memory one quad workspace per group of four threads; no aliasing.
        unsafe { self.finish.launch(&stream, cfg, finish) }
    }
}

/// The affine level plan for `n` points over launches of `threads` threads: runs (pairs per thread) of each
/// level, and the points left after.
fn affine_levels(n: usize, threads: usize) -> (Vec<usize>, usize) {
    let threads = threads.max(1);
    let mut plan = Vec::new();
    let mut n = n;
    while n / 2 >= threads * AFFINE_MIN_RUN {
        plan.push((n / 2).div_ceil(threads).max(AFFINE_MIN_RUN));
        n = n.div_ceil(2);
    }
    (plan, n)
}

/// The list length the affine levels are planned for: the set's, or under a bitmap half of it. The selected
/// count stays on the GPU (reading it back would stall the stream), so the plan assumes the typical share
/// (a Groth16 query's scalars equal to 1 are about half); more selected points give the levels longer runs,
/// fewer give shorter ones.
fn planned_points(set_len: usize, with_bitmap: bool) -> usize {
    if with_bitmap { set_len / 2 } else { set_len }
}

/// Dynamic shared memory of one affine level block (the warps' staging areas).
fn affine_level_shared<C: Curve>() -> usize {
    affine_level_shared_bytes(std::mem::size_of::<C::Affine>())
}

/// `kernel` (`batch_add_{C}_affine_level` or `..._gather`), allowed its staging shared memory (G2's 50 KiB is past the
/// default 48) and the full shared carveout (8 G1 blocks per SM need 221 KiB; the level reads nothing through
/// L1 twice).
fn affine_level_function<C: Curve, S: Signature>(gpu: &Gpu, kernel: &Entry<S>) -> Result<KernelFn<S>> {
    let function = gpu.kernel(kernel)?;
    gpu.allow_dynamic_shared(function.function(), affine_level_shared::<C>())?;
    gpu.prefer_max_shared(function.function())?;
    Ok(function)
}

/// Launch shape of `batch_add_{C}_affine_level` for about `threads` threads: blocks of [`AFFINE_LEVEL_BLOCK`]
/// with the staging shared memory.
fn affine_level_cfg<C: Curve>(threads: usize) -> LaunchConfig {
    LaunchConfig { shared_mem_bytes: affine_level_shared::<C>() as u32, ..zkgpu_cfg(threads, AFFINE_LEVEL_BLOCK) }
}

fn zkgpu_cfg(threads: usize, block: u32) -> LaunchConfig {
    crate::launch::launch_config_1d(threads.max(1), block)
}

/// The sum of the points in `points` (selected by `bitmap` when given: bit `i` of word `i / 32` selects
/// point `i`). Points and bitmap stay on the device.
pub fn batch_add<C: Curve>(
    gpu: &Gpu,
    points: &DeviceBuffer<C::Affine>,
    bitmap: Option<&DeviceBuffer<u32>>,
    method: Method,
) -> Result<C::Projective> {
    let sums = batch_add_sets::<C>(gpu, points, &[0, points.len()], bitmap, method)?;
    sums.into_iter().next().ok_or_else(|| Error::InvalidSets("no result for the one set".into()))
}

/// Independent sums in one launch: set `s` is `points[set_offsets[s]..set_offsets[s + 1]]` (under `bitmap`,
/// indexed by position in `points`, when given).
pub fn batch_add_sets<C: Curve>(
    gpu: &Gpu,
    points: &DeviceBuffer<C::Affine>,
    set_offsets: &[usize],
    bitmap: Option<&DeviceBuffer<u32>>,
    method: Method,
) -> Result<Vec<C::Projective>> {
    // Before the adder allocates anything.
    gpu.owns("batch_add points", points)?;
    if let Some(b) = bitmap {
        gpu.owns("batch_add bitmap", b)?;
        check_bitmap(b.len(), points.len())?;
    }
    let mut adder = BatchAdder::<C>::new(gpu, points.len(), set_offsets, method)?;
    adder.enqueue(points, bitmap)?;
    adder.sums()
}

/// [`batch_add`] for points (and bitmap) in host memory: checks, uploads, sums.
pub fn batch_add_host<C: Curve>(
    gpu: &Gpu,
    points: &[C::Affine],
    bitmap: Option<&[u32]>,
    method: Method,
) -> Result<C::Projective> {
    if let Some(b) = bitmap {
        check_bitmap(b.len(), points.len())?;
    }
    let points = gpu.upload(points)?;
    let bitmap = bitmap.map(|b| gpu.upload(b)).transpose()?;
    batch_add::<C>(gpu, &points, bitmap.as_ref(), method)
}

/// Where each scalar's point goes, computed on the GPU. Bitmaps: bit `i` of word `i / 32` is scalar `i`.
pub struct ScalarSplit {
    /// Scalars equal to 1: their points go to batch addition (pass this as the bitmap).
    pub ones: DeviceBuffer<u32>,
    /// Scalars neither 0 nor 1.
    pub others: DeviceBuffer<u32>,
    /// Indices of the `others` scalars, increasing; only the first `other_count` entries are meaningful.
    pub other_indices: DeviceBuffer<u32>,
    /// How many scalars are neither 0 nor 1.
    pub other_count: usize,
}

/// Classifies `scalars` (0: skipped, 1: batch addition, others: MSM) and lists the MSM indices in order
/// (the compaction of the `others` bitmap that the affine batch addition uses).
pub fn split_scalars(gpu: &Gpu, scalars: &DeviceBuffer<blstrs::Scalar>) -> Result<ScalarSplit> {
    gpu.owns("split_scalars scalars", scalars)?;
    let n = scalars.len();
    let n32 = u32::try_from(n).map_err(|_| Error::SizeOverflow(format!("{n} scalars do not fit u32")))?;
    let words = n.div_ceil(32);
    let mut ones = gpu.alloc_zeroed::<u32>(words)?;
    let mut others = gpu.alloc_zeroed::<u32>(words)?;
    if n == 0 {
        let other_indices = gpu.alloc_zeroed::<u32>(0)?;
        return Ok(ScalarSplit { ones, others, other_indices, other_count: 0 });
    }
    let stream = gpu.stream().clone();
    let classify = gpu.kernel(&interface::BATCH_ADD_CLASSIFY_SCALARS)?;
    let split = args::BatchAddClassifyScalars {
        scalars: read(scalars.raw()),
        n: n32,
        ones: write(ones.raw_mut()),
        others: write(others.raw_mut()),
    };
    // SAFETY: one thread per scalar in 256-thread blocks (multiples of 32); ones/others hold ceil(n/32) words.
    unsafe { classify.launch(&stream, crate::launch::launch_config_1d(n, 256), split) }?;
    let mut selection = Selection::new(gpu, n)?;
    selection.enqueue(gpu, &others.raw_range(0..words)?, n, 0)?;
    let other_count = gpu.download(&selection.totals)?.first().copied().unwrap_or(0) as usize;
    Ok(ScalarSplit { ones, others, other_indices: selection.indices, other_count })
}

/// One affine halving level on the GPU (`out[i] = list[2i] + list[2i + 1]`, the last point passed through
/// for an odd count), about `run` pairs per thread sharing one inversion. The list is `input` or, with
/// `indices`, `input[indices[0]], input[indices[1]], …` (the gathered first level of a bitmap sum). Exposed
/// for tests and experiments; the sums use it through [`Method::Affine`].
pub fn affine_level<C: Curve>(
    gpu: &Gpu,
    input: &DeviceBuffer<C::Affine>,
    indices: Option<&DeviceBuffer<u32>>,
    run: usize,
) -> Result<DeviceBuffer<C::Affine>> {
    gpu.owns("affine_level input", input)?;
    if let Some(indices) = indices {
        gpu.owns("affine_level indices", indices)?;
    }
    let n = indices.map_or(input.len(), DeviceBuffer::len);
    if n > MAX_POINTS || input.len() > MAX_POINTS {
        return Err(Error::InvalidSets(format!("{n} points, at most {MAX_POINTS} per call")));
    }
    if let Some(ix) = indices {
        let ix = gpu.download(ix)?;
        let count = ix.iter().filter(|&&i| i as usize >= input.len()).count();
        if count > 0 {
            return Err(Error::IndexOutOfRange { what: "affine level indices", count, limit: input.len() });
        }
    }
    let run = run.clamp(1, u32::MAX as usize);
    let mut output = gpu.alloc_zeroed::<C::Affine>(n.div_ceil(2))?;
    if n == 0 {
        return Ok(output);
    }
    let count = gpu.upload(&[n as u32])?;
    let cfg = affine_level_cfg::<C>((n / 2).div_ceil(run));
    let stream = gpu.stream().clone();
    match indices {
        Some(ix) => {
            let function = affine_level_function::<C, _>(gpu, &C::KERNELS.batch_add_affine_level_gather)?;
            let gather = args::BatchAddAffineLevelGather {
                points: read(input.raw()),
                indices: read(ix.raw()),
                count: read(count.raw()),
                output: write(output.raw_mut()),
            };
            // SAFETY: n = the index count <= 2^31, every index below input's length (checked above); output
            // holds ceil(n / 2); ceil((n / 2) / run) threads (at least one, for the pass-through of n = 1) in
            // blocks of 64 with the staging shared memory; distinct whole allocations (16-byte aligned).
            unsafe { function.launch(&stream, cfg, gather) }?;
        }
        None => {
            let function = affine_level_function::<C, _>(gpu, &C::KERNELS.batch_add_affine_level)?;
            let level = args::BatchAddAffineLevel {
                input: read(input.raw()),
                count: read(count.raw()),
                shift: 0,
                output: write(output.raw_mut()),
            };
            // SAFETY: as above, the list being input[0..n].
            unsafe { function.launch(&stream, cfg, level) }?;
        }
    }
    gpu.synchronize()?;
    Ok(output)
}
