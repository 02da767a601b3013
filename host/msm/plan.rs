//! The MSM plan: window size, chunking, accumulation and sort choices, and the cost model that picks them
//! for a size and a device.
use super::*;

/// Threads per block of the per-scalar kernels (count, scatter).
pub(super) const SCALAR_BLOCK: u32 = 256;
/// Entries carry the point index in 31 bits (bit 31 is the sign), so a base table holds fewer than 2^31 points.
pub(super) const MAX_TABLE_POINTS: usize = 1 << 31;
/// Points per chunk with device inputs, unless configured: bounds the scratch (8 bytes per entry for the
/// digits and the sort, the run partials). Every chunk adds a general addition per bucket (the fixup), so
/// fewer chunks are faster (measured at 2^26: 2 chunks against 4, docs/log/kernels-notes.md), and 2^25 still
/// fits the 16 GB bound with the inputs (tests/msm_cpu.rs). The affine accumulation's extra scratch
/// (`AFFINE_SCRATCH_BYTES`) keeps it at 2^24 ([`AFFINE_DEVICE_CHUNK`]).
pub(super) const DEVICE_CHUNK: usize = 1 << 25;
/// Points per chunk with device inputs and affine accumulation, unless configured.
pub(super) const AFFINE_DEVICE_CHUNK: usize = 1 << 24;
/// Largest chunk with host inputs (the staging holds two chunks).
pub(super) const HOST_CHUNK_MAX: usize = 1 << 24;
/// Chunks with host inputs: the plan's chunk is about `n` over this many (it sizes the double-buffered
/// staging); the run queues a ramp of smaller chunks before the whole ones ([`ramped_chunks`]).
pub(super) const HOST_CHUNKS: usize = 4;
/// Smallest chunk with host inputs (the largest is `HOST_CHUNK_MAX`).
pub(super) const HOST_CHUNK_MIN: usize = 1 << 20;
/// Threads the accumulate stage aims for (a few waves of the ~400 resident G1 threads per SM on 132 SMs).
pub(super) const ACCUMULATE_THREADS: usize = 1 << 17;
/// Fewest entries per accumulate thread the plans choose (shorter segments cost more partial sums than they
/// gain in parallelism).
pub(super) const MIN_ACCUMULATE_SEG: usize = 16;
/// Most entries per accumulate thread the plans choose (longer ones leave the GPU idle).
pub(super) const MAX_ACCUMULATE_SEG: usize = 512;
/// Threads one affine-accumulate launch aims for (its threads hold more registers: about two waves).
pub(super) const AFFINE_THREADS: usize = 1 << 16;
/// Scratch an affine-accumulate launch aims to stay within: windows are launched in groups that fit (at least
/// one window per launch, whatever its size).
pub(super) const AFFINE_SCRATCH_BYTES: usize = 2 << 30;
/// Cost of one inversion in field multiplications (Bernstein–Yang divsteps, docs/log/kernels-notes.md "Inversion"),
/// and what an affine addition saves against a mixed XYZZ one (10 products against 6): an affine round pays
/// when its pairs save more than the inversion costs.
pub(super) const INVERSION_COST: u32 = 46;
pub(super) const AFFINE_SAVING: u32 = 4;
/// Threads the reduce stage aims for.
pub(super) const REDUCE_THREADS: usize = 1 << 16;
/// SMs of the device the thread targets above were tuned on (H200); other devices scale them.
pub(super) const REFERENCE_SMS: u32 = 132;
/// Device memory [`DeviceLimits::of`] leaves free.
pub(super) const MEMORY_RESERVE: usize = 256 << 20;
/// Smallest chunk [`MsmPlan::within`] shrinks to when the default chunk's scratch does not fit.
pub(super) const MIN_FITTING_CHUNK: usize = 1 << 16;
/// Window sizes the automatic choice considers.
pub(super) const AUTO_WINDOW_BITS: std::ops::RangeInclusive<u32> = 2..=22;
/// Bucket work per bucket and chunk (the fixup's general addition ≈ 1.6 mixed additions) and per bucket once
/// (the reduce's two general additions and its share of `lo·R`), in mixed additions: the cost model's weights.
pub(super) const FIXUP_COST: f64 = 1.6;
pub(super) const REDUCE_COST: f64 = 5.0;
/// Sorted entries (4 bytes each) one scatter pass may write: the scatter makes one pass per range of buckets,
/// so the part of `sorted` it writes into at random stays small enough for L2 (50 MB on an H100/H200) to
/// merge most writes into full sectors; every pass reads all the chunk's digits again. Passes paid from 2^25
/// points per chunk (128 MiB per window) and not at 2^24 (the figures: docs/log/kernels-notes.md).
pub(super) const SCATTER_REGION_BYTES: usize = 64 << 20;
/// Most scatter passes the automatic choice makes (each pass reads every digit of the chunk again).
pub(super) const MAX_SCATTER_PASSES: u32 = 8;
/// Largest per-thread segment [`MsmPlan::validate`] accepts (the automatic choice stays within 16..=512).
pub(super) const MAX_SEG: u32 = 1 << 12;
/// Largest reduce run [`MsmPlan::validate`] accepts (the automatic choice stays within 2..=64).
pub(super) const MAX_REDUCE_RUN: u32 = 1 << 10;
/// Scratch the radix sort aims to stay within: virtual windows are sorted in groups, each window of a group
/// needing 12 bytes per entry slot (two key buffers and a value buffer); at least one window per group.
pub(super) const SORT_SCRATCH_BYTES: usize = 768 << 20;

/// Choices for an MSM; `Default` picks everything.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MsmConfig {
    /// Window bits `c` (1..=24); `None`: the cost model's choice for the size (see [`choose_window_bits`]).
    pub window_bits: Option<u32>,
    /// Points per chunk; `None`: all at once up to 2^25 with device inputs (2^24 with affine accumulation),
    /// about a quarter (at most 2^24) with host inputs. Host inputs longer than a chunk run a ramp of smaller
    /// chunks before the whole ones, so that each upload overlaps the previous chunk's kernels.
    pub chunk: Option<usize>,
    /// Precomputed copies of the bases (fixed-base precomputation); 0 or 1: none. Device bases made with
    /// [`MsmBases::precompute`] for the same plan must be used.
    pub precompute: u32,
    /// How buckets are accumulated.
    pub accumulation: Accumulation,
    /// Passes of the scatter, each over one range of buckets; `None`: enough that a pass writes at most
    /// 64 MiB of sorted entries per virtual window, at most 8. Only [`Sort::Counting`] scatters.
    pub scatter_passes: Option<u32>,
    /// How each window's entries are grouped by bucket.
    pub sort: Sort,
}

/// How the entries of a window are grouped by bucket before the accumulation. Both give the same result.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Sort {
    /// Counting sort with global atomics: a counter per bucket, a scan, one atomic and a random write per
    /// entry (the scatter, in [`MsmConfig::scatter_passes`] passes). The order inside a bucket varies. The
    /// default: faster than the radix sort on the H200 (DESIGN.md, section 3).
    #[default]
    Counting,
    /// Stable LSD radix sort of (bucket, entry) (`zkgpu_kernels::msm_sort`): block-local histograms, a short
    /// scan, tiles reordered in shared memory and written in runs. Deterministic order inside a bucket;
    /// slower today (its downsweep is latency-bound, docs/log/kernels-notes.md "Radix sort").
    Radix,
}

/// How the accumulate stage adds a bucket's points (kernels/src/msm.rs; both give the same result).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Accumulation {
    /// One XYZZ accumulator per run of a bucket, mixed additions (8M + 2S each).
    #[default]
    Xyzz,
    /// Trees of affine additions, one level per round, each round's additions sharing one inversion (about
    /// 6M each plus the inversion's share), then XYZZ for what the rounds left. Needs scratch of 120 bytes
    /// (G1; 240 for G2) per sorted entry of the windows in one launch ([`MsmPlan::scratch_bytes`]).
    Affine {
        /// Rounds of affine halving (at least 1); `None`: as many as pay for their inversion.
        rounds: Option<u32>,
    },
}

/// The shape of an MSM run: window size, virtual windows, chunking and per-thread work. Made by
/// [`MsmPlan::new`]; the scratch memory follows from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MsmPlan {
    /// Most points per call.
    pub n: usize,
    /// Window bits `c`.
    pub window_bits: u32,
    /// Windows `W = ⌈256 / c⌉`.
    pub windows: u32,
    /// Precomputed copies of the bases (1: none).
    pub copies: u32,
    /// Virtual windows (bucket sets) `q = ⌈W / copies⌉`.
    pub virtual_windows: u32,
    /// Points per chunk.
    pub chunk: usize,
    /// Sorted entries per accumulate thread.
    pub seg: u32,
    /// Buckets per reduce thread.
    pub reduce_run: u32,
    /// Affine accumulation rounds; 0: XYZZ accumulation.
    pub affine_rounds: u32,
    /// Virtual windows per affine-accumulate launch (their scratch is allocated once).
    pub affine_windows: u32,
    /// Scatter passes, each over one range of `⌈buckets / passes⌉` buckets (counting sort).
    pub scatter_passes: u32,
    /// The sort.
    pub sort: Sort,
    /// Virtual windows the radix sort handles per launch (its scratch holds that many).
    pub sort_group: u32,
}

/// The window size with the least modelled work for `n` points in `chunks` chunks with `copies` precomputed
/// copies ([`window_cost`]) among those with at least `copies` windows. The empty upper halves of narrow
/// windows ([`zkgpu_kernels::msm::WindowWidths`]) count as full: the fixup initializes them and the reduce
/// walks them; on the H200 the choices counting only the buckets in use were slower at 2^20 and 2^22
/// (docs/log/kernels-notes.md).
pub fn choose_window_bits(n: usize, copies: u32, chunks: usize) -> u32 {
    auto_windows(copies)
        .min_by(|&a, &b| window_cost(n, copies, chunks, a).total_cmp(&window_cost(n, copies, chunks, b)))
        .unwrap_or(16)
}

/// The window sizes an automatic choice considers with `copies` precomputed copies: those with at least as
/// many windows as copies (each copy serves whole windows).
pub(super) fn auto_windows(copies: u32) -> impl Iterator<Item = u32> {
    AUTO_WINDOW_BITS.filter(move |&c| window_count(c) >= copies)
}

/// The cost model, in mixed additions: `n·W` for the points plus bucket work `q·2^(c−1)·(1.6·chunks + 5)`
/// (the fixup's general addition per bucket and chunk, the reduce once per bucket).
pub fn window_cost(n: usize, copies: u32, chunks: usize, c: u32) -> f64 {
    let w = window_count(c) as f64;
    let q = window_count(c).div_ceil(copies.max(1)) as f64;
    n as f64 * w + q * (1u64 << (c - 1)) as f64 * (FIXUP_COST * chunks as f64 + REDUCE_COST)
}

/// The chunks of `n` staged points with chunks of at most `chunk`: consecutive non-empty ranges covering
/// `0..n`. With several chunks, chunk `k + 1` uploads while chunk `k` computes, so only the first upload is
/// exposed: the first range is `chunk / 8` (at least 1) and each next one at most twice the one before, up
/// to `chunk`, then whole chunks (the last range takes what is left, however short). A point uploads in well
/// under half the time it takes to compute, so a range twice the one before still uploads behind it. `n` up
/// to `chunk` is one range (nothing would overlap a ramp); `n = 0` none.
pub(super) fn ramped_chunks(n: usize, chunk: usize) -> Vec<Range<usize>> {
    let chunk = chunk.max(1);
    let mut ranges = Vec::new();
    let (mut first, mut len) = (0, if n <= chunk { n } else { (chunk / 8).max(1) });
    while first < n {
        let end = first + len.min(n - first);
        ranges.push(first..end);
        first = end;
        len = len.saturating_mul(2).min(chunk);
    }
    ranges
}

/// The chunks of `n` points with chunks of `chunk` (at least 1): consecutive ranges covering `0..n`, the
/// last one shorter where `chunk` does not divide `n`; `n = 0` none.
pub(super) fn whole_chunks(n: usize, chunk: usize) -> impl Iterator<Item = Range<usize>> {
    let chunk = chunk.max(1);
    (0..n).step_by(chunk).map(move |first| first..(first + chunk).min(n))
}

/// Staging buffers for host inputs of `n` points uploaded `span` at a time: two (one uploads while the other
/// is read) where there are several spans, else one.
pub(super) fn staging_buffer_count(n: usize, span: usize) -> usize {
    if n > span { 2 } else { 1 }
}

/// Staging buffers for windows of `window` host bases over `n` points: one where a window covers them all,
/// else `depth`, at least two.
pub(super) fn window_staging_count(n: usize, window: usize, depth: usize) -> usize {
    if staging_buffer_count(n, window) > 1 { depth.max(2) } else { 1 }
}

/// What a plan's automatic choices take from the device it will run on ([`MsmPlan::within`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceLimits {
    /// Device memory the plan's scratch and host-input staging may take, in bytes.
    pub memory_bytes: usize,
    /// The device's memory in total (reported in [`Error::OutOfMemory`]).
    pub total_bytes: usize,
    /// Streaming multiprocessors: the accumulate, affine-accumulate and reduce stages size their per-thread
    /// work so that their threads fill this many (the thread targets were tuned on the H200's 132).
    pub sm_count: u32,
}

impl DeviceLimits {
    /// The H200 the thread targets were tuned on, with no memory bound: [`MsmPlan::new`]'s choices.
    pub const UNBOUNDED: DeviceLimits =
        DeviceLimits { memory_bytes: usize::MAX, total_bytes: usize::MAX, sm_count: REFERENCE_SMS };

    /// `gpu` as it is now: its SMs, and its free memory less a reserve of 256 MiB for the context and the
    /// small allocations around a run.
    pub fn of(gpu: &Gpu) -> Result<DeviceLimits> {
        let (free, total) = gpu.memory_info()?;
        Ok(DeviceLimits {
            memory_bytes: free.saturating_sub(MEMORY_RESERVE),
            total_bytes: total,
            sm_count: gpu.info().sm_count,
        })
    }

    /// These limits within a device-memory budget of `max_device_bytes` for the MSM's own allocations: a
    /// plan fitted to them ([`MsmPlan::within`]) never makes [`crate::msm::Msm`] hold more.
    pub fn capped(self, max_device_bytes: usize) -> DeviceLimits {
        DeviceLimits { memory_bytes: self.memory_bytes.min(max_device_bytes), ..self }
    }

    /// These limits with `bytes` less memory: inputs that will be allocated after the plan is made (device
    /// bases, a precomputed table, device scalars).
    pub fn less(self, bytes: usize) -> DeviceLimits {
        DeviceLimits { memory_bytes: self.memory_bytes.saturating_sub(bytes), ..self }
    }

    /// `threads` (a target for [`REFERENCE_SMS`] SMs) scaled to this device's SMs.
    pub(super) fn threads(&self, threads: usize) -> usize {
        (threads * self.sm_count.max(1) as usize / REFERENCE_SMS as usize).max(1)
    }
}

/// Affine halving rounds worth running over segments of `seg` entries (runs of at least `seg` entries): round
/// `k` has about `seg / 2^k` pairs and pays while they save more than its one inversion.
pub(crate) fn paying_affine_rounds(seg: u32) -> u32 {
    (1..=seg.max(1).ilog2()).take_while(|k| (seg >> k) * AFFINE_SAVING > INVERSION_COST).count() as u32
}

/// The largest power of two `<= x` (1 for `x <= 1`), clamped to `[lo, hi]`.
pub(super) fn pow2_clamped(x: usize, lo: usize, hi: usize) -> usize {
    let p = if x <= 1 { 1 } else { 1usize << (usize::BITS - 1 - x.leading_zeros()) };
    p.clamp(lo, hi)
}

/// Bytes one point's host inputs take in staging: its base when `bases`, its scalar when `scalars`.
pub(super) fn staged_point_bytes<C: Curve>(bases: bool, scalars: bool) -> usize {
    (if bases { size_of::<C::Affine>() } else { 0 }) + if scalars { size_of::<Scalar>() } else { 0 }
}

impl MsmPlan {
    /// A plan for up to `n` points, made for the H200 without regard to memory ([`DeviceLimits::UNBOUNDED`];
    /// [`MsmPlan::within`] fits a plan to a device). `host_inputs`: bases or scalars come from host memory
    /// (smaller chunks, so uploads overlap compute). `Err(MsmConfig)` for window bits outside 1..=24, a zero
    /// chunk, zero scatter passes or more precomputed copies than windows.
    pub fn new(n: usize, config: &MsmConfig, host_inputs: bool) -> Result<MsmPlan> {
        Self::build(n, config, host_inputs, &DeviceLimits::UNBOUNDED)
    }

    /// A plan for up to `n` points of curve `C` whose scratch and staging ([`MsmPlan::device_bytes`]) fit
    /// `limits`: the least modelled work ([`window_cost`]) over the window sizes (unless configured) and the
    /// chunks from the default down to 2^16 by halves (unless configured), per-thread work scaled to the SMs.
    /// Where the default plan fits it is the plan. `Err(OutOfMemory)` when nothing fits (`requested`: the
    /// smallest plan's bytes); configuration errors as [`MsmPlan::new`].
    pub fn within<C: Curve>(n: usize, config: &MsmConfig, host_inputs: bool, limits: &DeviceLimits) -> Result<MsmPlan> {
        let first = Self::build(n, config, host_inputs, limits)?;
        let bytes = |plan: &MsmPlan| plan.device_bytes::<C>(host_inputs);
        // The default chunk has the fewest chunks, so where the default plan fits it is also the model's best.
        if bytes(&first) <= limits.memory_bytes {
            return Ok(first);
        }
        Self::cheapest_fit(n, config, limits, first.chunk, bytes)
    }

    /// A plan for `n` bases streamed from host memory against device scalars (a pipeline's streamed query):
    /// the least modelled work whose scratch and bases staging ([`MsmPlan::staging_bytes`]) fit `limits`,
    /// over chunks from `largest` points (at most `n`) down to 2^16 by halves (unless configured). Unlike
    /// [`MsmPlan::within`]'s host-input default it prefers few chunks (every chunk costs a fixup): the caller
    /// hides the first chunk's upload by queueing the MSM behind other work. Errors as [`MsmPlan::within`].
    pub fn within_streamed_bases<C: Curve>(
        n: usize,
        config: &MsmConfig,
        largest: usize,
        limits: &DeviceLimits,
    ) -> Result<MsmPlan> {
        let bytes = |plan: &MsmPlan| plan.scratch_bytes::<C>() + plan.staging_bytes::<C>(true, false);
        let first = config.chunk.unwrap_or(largest.min(n)).clamp(1, n.max(1));
        Self::cheapest_fit(n, config, limits, first, bytes)
    }

    /// The plan of least modelled work ([`window_cost`]) whose `bytes` fit `limits`, over the window sizes
    /// (unless configured) and the chunks from `first` down to 2^16 by halves (only `first` when configured).
    /// Every candidate names its chunk, so where the inputs live does not change the plans, only `bytes`.
    fn cheapest_fit(
        n: usize,
        config: &MsmConfig,
        limits: &DeviceLimits,
        first: usize,
        bytes: impl Fn(&MsmPlan) -> usize,
    ) -> Result<MsmPlan> {
        let copies = config.precompute.max(1);
        let chunks = std::iter::successors(Some(first), |&chunk| (chunk / 2 >= MIN_FITTING_CHUNK).then_some(chunk / 2));
        let chunks: Vec<usize> = if config.chunk.is_some() { vec![first] } else { chunks.collect() };
        let windows: Vec<u32> = match config.window_bits {
            Some(c) => vec![c],
            None => auto_windows(copies).collect(),
        };
        let mut best: Option<(f64, MsmPlan)> = None;
        let mut least = usize::MAX;
        for &chunk in &chunks {
            for &c in &windows {
                let config = MsmConfig { window_bits: Some(c), chunk: Some(chunk), ..*config };
                let plan = match Self::build(n, &config, false, limits) {
                    Ok(plan) => plan,
                    // Narrow windows with a large chunk: more entries than the kernels count.
                    Err(Error::MsmConfig(_)) => continue,
                    Err(e) => return Err(e),
                };
                let bytes = bytes(&plan);
                least = least.min(bytes);
                let cost = window_cost(n, copies, n.div_ceil(plan.chunk).max(1), c);
                if bytes <= limits.memory_bytes && best.as_ref().is_none_or(|(best_cost, _)| cost < *best_cost) {
                    best = Some((cost, plan));
                }
            }
        }
        best.map(|(_, plan)| plan).ok_or(Error::OutOfMemory {
            requested: least,
            free: limits.memory_bytes,
            total: limits.total_bytes,
        })
    }

    /// [`MsmPlan::within`] on `gpu` within a device-memory budget: an engine of the plan
    /// ([`crate::msm::Msm`]) holds at most `max_device_bytes` (scratch, and with `host_inputs` the chunk
    /// staging), and no more than the device has free. `Err(DeviceBudget)` stating the smallest plan's bytes
    /// when the budget is below them; `Err(OutOfMemory)` when the budget would do but the device has less free.
    pub fn within_budget<C: Curve>(
        gpu: &Gpu,
        n: usize,
        config: &MsmConfig,
        host_inputs: bool,
        max_device_bytes: usize,
    ) -> Result<MsmPlan> {
        let limits = DeviceLimits::of(gpu)?.capped(max_device_bytes);
        match Self::within::<C>(n, config, host_inputs, &limits) {
            Err(Error::OutOfMemory { requested, .. }) if requested > max_device_bytes => Err(Error::DeviceBudget {
                budget: max_device_bytes,
                needed: requested,
                what: format!("an MSM of {n} points"),
            }),
            other => other,
        }
    }

    /// This plan with the accumulate stage's work per thread (`seg`) sized for about `entries` entries per
    /// chunk rather than for every point of the chunk: sparse scalars (a tail MSM's, a streamed window's) fill
    /// a fraction of it, and segments sized for all of it would leave most of the GPU idle. Shorter segments
    /// take more run-partial slots ([`MsmPlan::scratch_bytes`]) for every point of the chunk, where only the
    /// expected entries use them, so this aims at half the dense plan's threads (still about two waves);
    /// `seg` never grows. XYZZ accumulation only (the affine stage sizes its launches by window groups and
    /// scratch). `limits` as in [`MsmPlan::within`].
    pub fn for_entries(mut self, entries: usize, limits: &DeviceLimits) -> MsmPlan {
        if self.affine_rounds == 0 {
            let load = entries.clamp(1, self.chunk) * self.windows as usize;
            let threads = limits.threads(ACCUMULATE_THREADS / 2);
            let seg = pow2_clamped(load / threads, MIN_ACCUMULATE_SEG, MAX_ACCUMULATE_SEG) as u32;
            self.seg = self.seg.min(seg);
        }
        self
    }

    /// [`MsmPlan::new`] with the per-thread work scaled to `limits`' SMs (memory is [`MsmPlan::within`]'s).
    pub(super) fn build(n: usize, config: &MsmConfig, host_inputs: bool, limits: &DeviceLimits) -> Result<MsmPlan> {
        if u32::try_from(n).is_err() {
            return Err(Error::MsmConfig(format!("{n} points do not fit the kernels' u32 counts")));
        }
        let copies = config.precompute.max(1);
        let chunk = match config.chunk {
            Some(0) => return Err(Error::MsmConfig("a chunk of 0 points".into())),
            Some(chunk) => chunk,
            None if host_inputs && n > HOST_CHUNK_MIN => n.div_ceil(HOST_CHUNKS).clamp(HOST_CHUNK_MIN, HOST_CHUNK_MAX),
            None if matches!(config.accumulation, Accumulation::Affine { .. }) => n.min(AFFINE_DEVICE_CHUNK),
            None => n.min(DEVICE_CHUNK),
        }
        .clamp(1, n.max(1));
        let chunks = n.div_ceil(chunk).max(1);
        let c = match config.window_bits {
            Some(c) if (1..=MAX_WINDOW_BITS).contains(&c) => c,
            Some(c) => return Err(Error::MsmConfig(format!("window bits {c} not in 1..={MAX_WINDOW_BITS}"))),
            None => choose_window_bits(n, copies, chunks),
        };
        let windows = window_count(c);
        if copies > windows {
            return Err(Error::MsmConfig(format!("{copies} precomputed copies for {windows} windows")));
        }
        // A chunk's entries (`chunk·W`) are counted in u32 by the kernels: narrow windows need smaller chunks.
        let max_chunk = u32::MAX as usize / windows as usize;
        let chunk = match config.chunk {
            Some(_) if chunk > max_chunk => {
                return Err(Error::MsmConfig(format!(
                    "a chunk of {chunk} points with {windows} windows makes more than 2^32 entries"
                )));
            }
            Some(_) => chunk,
            None => chunk.min(pow2_clamped(max_chunk, 1, max_chunk)),
        };
        let q = windows.div_ceil(copies);
        let entries = chunk.saturating_mul(windows as usize);
        let buckets = 1usize << (c - 1);
        let per_window = chunk * windows.div_ceil(q) as usize;
        let scatter_passes = match config.scatter_passes {
            Some(0) => return Err(Error::MsmConfig("0 scatter passes".into())),
            Some(passes) => passes,
            None => (per_window * 4).div_ceil(SCATTER_REGION_BYTES).clamp(1, MAX_SCATTER_PASSES as usize) as u32,
        }
        .min(buckets as u32);
        let reduce_run = pow2_clamped(q as usize * buckets / limits.threads(REDUCE_THREADS), 2, 64) as u32;
        let (seg, affine_rounds, affine_windows) = match config.accumulation {
            Accumulation::Xyzz => (
                pow2_clamped(entries / limits.threads(ACCUMULATE_THREADS), MIN_ACCUMULATE_SEG, MAX_ACCUMULATE_SEG)
                    as u32,
                0,
                0,
            ),
            Accumulation::Affine { rounds } => {
                // Scratch per window ≈ 120 B (G1) per entry: group windows up to the budget.
                let group = (AFFINE_SCRATCH_BYTES / (per_window * 120).max(1)).clamp(1, q as usize);
                let seg = pow2_clamped(
                    per_window * group / limits.threads(AFFINE_THREADS),
                    MIN_ACCUMULATE_SEG,
                    MAX_ACCUMULATE_SEG,
                ) as u32;
                let rounds = rounds.unwrap_or(paying_affine_rounds(seg)).max(1);
                (seg, rounds, group as u32)
            }
        };
        let sort_group = (SORT_SCRATCH_BYTES / (12 * per_window).max(1)).clamp(1, q as usize) as u32;
        Ok(MsmPlan {
            n,
            window_bits: c,
            windows,
            copies,
            virtual_windows: q,
            chunk,
            seg,
            reduce_run,
            affine_rounds,
            affine_windows,
            scatter_passes,
            sort: config.sort,
            sort_group,
        })
    }

    /// Checks what the kernels' bounds rely on (the fields are public, so a plan may be edited by hand):
    /// window bits in 1..=24 with their window count, 1..=W copies and exactly `⌈W / copies⌉` virtual windows
    /// (fewer would let an entry name a point past `copies·n`), a chunk in 1..=n with `chunk·W` entries
    /// countable in u32, non-zero per-thread work (`seg`, `reduce_run`, bounded), scatter passes in
    /// 1..=min(8, buckets), sort and affine groups of 1..=q windows, and `n` within u32. Then every size
    /// derived from the plan fits a `usize`. A plan from [`MsmPlan::new`] or [`MsmPlan::within`] passes;
    /// [`crate::msm::Msm::new`] and the CPU models check every plan they get. `Err(MsmConfig)` naming the field.
    pub fn validate(&self) -> Result<()> {
        let fail = |what: String| Err(Error::MsmConfig(format!("invalid plan: {what}")));
        let in_range = |v: u32, lo: u32, hi: u32| (lo..=hi).contains(&v);
        if u32::try_from(self.n).is_err() {
            return fail(format!("n = {} does not fit the kernels' u32 counts", self.n));
        }
        if !in_range(self.window_bits, 1, MAX_WINDOW_BITS) {
            return fail(format!("window_bits = {} not in 1..={MAX_WINDOW_BITS}", self.window_bits));
        }
        let w = window_count(self.window_bits);
        if self.windows != w {
            return fail(format!("windows = {}, {} bits make {w}", self.windows, self.window_bits));
        }
        if !in_range(self.copies, 1, w) {
            return fail(format!("copies = {} not in 1..={w}", self.copies));
        }
        let q = w.div_ceil(self.copies);
        if self.virtual_windows != q {
            return fail(format!(
                "virtual_windows = {}, {w} windows over {} copies need {q}",
                self.virtual_windows, self.copies
            ));
        }
        if !(1..=self.n.max(1)).contains(&self.chunk) {
            return fail(format!("chunk = {} not in 1..={}", self.chunk, self.n.max(1)));
        }
        if u32::try_from(self.chunk * w as usize).is_err() {
            return fail(format!("a chunk of {} points makes {w} times as many entries, past u32", self.chunk));
        }
        if !in_range(self.seg, 1, MAX_SEG) {
            return fail(format!("seg = {} not in 1..={MAX_SEG}", self.seg));
        }
        if !in_range(self.reduce_run, 1, MAX_REDUCE_RUN) {
            return fail(format!("reduce_run = {} not in 1..={MAX_REDUCE_RUN}", self.reduce_run));
        }
        let buckets = 1u32 << (self.window_bits - 1);
        if !in_range(self.scatter_passes, 1, MAX_SCATTER_PASSES.min(buckets)) {
            return fail(format!(
                "scatter_passes = {} not in 1..={}",
                self.scatter_passes,
                MAX_SCATTER_PASSES.min(buckets)
            ));
        }
        if !in_range(self.sort_group, 1, q) {
            return fail(format!("sort_group = {} not in 1..={q}", self.sort_group));
        }
        if self.affine_rounds > 0 && !in_range(self.affine_windows, 1, q) {
            return fail(format!("affine_windows = {} not in 1..={q}", self.affine_windows));
        }
        Ok(())
    }

    /// Buckets per virtual window, `2^(c−1)`.
    pub fn buckets(&self) -> usize {
        1 << (self.window_bits - 1)
    }

    /// Entry slots per virtual window and chunk: every window served by the virtual window can put one
    /// entry per point there.
    pub(super) fn per_window(&self) -> usize {
        self.chunk * self.windows.div_ceil(self.virtual_windows) as usize
    }

    /// Run-partial slots per virtual window (see `zkgpu_kernels::msm`).
    pub(super) fn slots(&self) -> usize {
        self.buckets() + self.per_window().div_ceil(self.seg as usize)
    }

    /// Threads per virtual window of an accumulate launch (whole blocks).
    pub(super) fn accumulate_threads<C: Curve>(&self) -> usize {
        let block = point_block::<C>() as usize;
        self.per_window().div_ceil(self.seg as usize).div_ceil(block) * block
    }

    /// Affine-accumulate scratch, in affine points: per thread of a launch `seg` list points plus `seg / 2`
    /// prefix products (`seg / 4` points); none for XYZZ accumulation.
    pub(super) fn affine_scratch_points<C: Curve>(&self) -> usize {
        let threads = self.accumulate_threads::<C>() * self.affine_windows as usize;
        threads * (self.seg as usize + self.seg as usize / 4)
    }

    /// Parts of a window the scan kernels cut its buckets into.
    pub(super) fn scan_parts(&self) -> usize {
        self.buckets().div_ceil(SCAN_SPAN as usize)
    }

    /// Reduce shares per virtual window.
    pub(super) fn shares(&self) -> usize {
        self.buckets().div_ceil(self.reduce_run as usize)
    }

    /// The radix sort's histogram per virtual window: `2^bits` digits times the blocks of a pass.
    pub(super) fn sort_spine_len(&self) -> usize {
        (1usize << radix_bits(self.window_bits)) * SORT_GRID as usize
    }

    /// Words of the sort's scratch: the counting sort's counters, cursors and part sums, or the radix sort's
    /// key and value buffers, item counts and spine (histogram, its scan, cursors, part sums) per group.
    pub(super) fn sort_words(&self) -> usize {
        let q = self.virtual_windows as usize;
        match self.sort {
            Sort::Counting => q * (2 * self.buckets() + self.scan_parts()),
            Sort::Radix => {
                let group = self.sort_group as usize;
                let spine = self.sort_spine_len();
                group * (3 * self.per_window() + 1 + 3 * spine + 1 + spine.div_ceil(SCAN_SPAN as usize))
            }
        }
    }

    /// Device memory an engine of this plan takes for curve `C`: the scratch, and with `host_inputs` the
    /// staging of bases and scalars (device-resident inputs not included).
    pub fn device_bytes<C: Curve>(&self, host_inputs: bool) -> usize {
        self.scratch_bytes::<C>() + self.staging_bytes::<C>(host_inputs, host_inputs)
    }

    /// Device memory of the staging for host `bases` and host `scalars`: a chunk of each, twice (double
    /// buffered) when the plan has more than one chunk.
    pub fn staging_bytes<C: Curve>(&self, bases: bool, scalars: bool) -> usize {
        self.staging_buffers() * self.chunk.min(self.n) * staged_point_bytes::<C>(bases, scalars)
    }

    /// Staging buffers per host input: two (double buffered) where the plan has more than one chunk.
    pub(super) fn staging_buffers(&self) -> usize {
        staging_buffer_count(self.n, self.chunk)
    }

    /// Device memory of the window sums of `tables` tables ([`Msm::reserve_tables`]).
    pub fn results_bytes<C: Curve>(&self, tables: usize) -> usize {
        tables * self.virtual_windows as usize * size_of::<C::Projective>()
    }

    /// Device memory the run's scratch takes for curve `C` (inputs and staging not included; one table's
    /// results).
    pub fn scratch_bytes<C: Curve>(&self) -> usize {
        let q = self.virtual_windows as usize;
        let words =
            q * (self.buckets() + 1) + q * self.per_window() + self.windows as usize * self.chunk + self.sort_words();
        let points = q * (self.slots() + self.buckets() + self.shares() + reduce_scratch_len(self.shares()));
        words * 4
            + points * C::XYZZ_BYTES
            + self.results_bytes::<C>(1)
            + self.affine_scratch_points::<C>() * size_of::<C::Affine>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msm::cpu::{msm_cpu, msm_model};
    use group::{Curve as _, Group as _};
    use proptest::prelude::*;
    use rand_chacha::ChaCha20Rng;
    use rand_core::{RngCore, SeedableRng};

    fn is_plan_error<T: std::fmt::Debug>(r: Result<T>) -> bool {
        matches!(r, Err(Error::MsmConfig(_)))
    }

    /// Window staging: one buffer where a window covers every point, else the configured depth, at least two.
    #[test]
    fn window_staging_takes_the_depth_where_windows_alternate() {
        assert_eq!(window_staging_count(1 << 20, 1 << 20, 3), 1);
        assert_eq!(window_staging_count(1 << 20, 1 << 22, 3), 1);
        for (depth, buffers) in [(0, 2), (1, 2), (2, 2), (3, 3), (5, 5)] {
            assert_eq!(window_staging_count((1 << 20) + 1, 1 << 20, depth), buffers, "depth {depth}");
        }
    }

    /// The fields the issue found reachable from safe code, each alone on an otherwise valid plan.
    #[test]
    fn hand_edited_plans_are_typed_errors() {
        let p = MsmPlan::new(1000, &MsmConfig { precompute: 2, ..MsmConfig::default() }, false).unwrap();
        p.validate().unwrap();
        let edits: [(&str, MsmPlan); 9] = [
            ("seg 0", MsmPlan { seg: 0, ..p }),
            ("window_bits 0", MsmPlan { window_bits: 0, ..p }),
            ("window_bits 25", MsmPlan { window_bits: 25, ..p }),
            ("scatter_passes 0", MsmPlan { scatter_passes: 0, ..p }),
            ("virtual windows below W / copies", MsmPlan { virtual_windows: p.virtual_windows - 1, ..p }),
            ("copies 0", MsmPlan { copies: 0, ..p }),
            ("chunk past n", MsmPlan { chunk: p.n + 1, ..p }),
            ("reduce_run 0", MsmPlan { reduce_run: 0, ..p }),
            ("sort_group 0", MsmPlan { sort_group: 0, ..p }),
        ];
        for (what, plan) in edits {
            assert!(is_plan_error(plan.validate()), "{what}: {plan:?} accepted");
        }
        // Sizes past the kernels' u32 counts: an error, not an overflow.
        assert!(is_plan_error(MsmPlan::new(usize::MAX, &MsmConfig::default(), false)));
        assert!(is_plan_error(MsmPlan::new(
            1 << 40,
            &MsmConfig { chunk: Some(1 << 39), ..MsmConfig::default() },
            true
        )));
    }

    /// `ramped_chunks(n, chunk)`'s lengths, checked: consecutive non-empty ranges covering `0..n`, each at
    /// most `chunk`; one range for `n <= chunk`; otherwise the first `chunk / 8` (at least 1, at most `n`)
    /// and each later one at most twice the one before.
    fn checked_ramp(n: usize, chunk: usize) -> Vec<usize> {
        let ranges = ramped_chunks(n, chunk);
        let what = format!("n {n}, chunk {chunk}: {ranges:?}");
        let mut end = 0;
        for r in &ranges {
            assert_eq!(r.start, end, "{what}: not consecutive");
            assert!(!r.is_empty() && r.len() <= chunk.max(1), "{what}: {r:?} empty or past the chunk");
            end = r.end;
        }
        assert_eq!(end, n, "{what}: does not cover 0..n");
        let lens: Vec<usize> = ranges.iter().map(|r| r.len()).collect();
        if n == 0 {
            assert!(lens.is_empty(), "{what}");
        } else if n <= chunk {
            assert_eq!(lens, [n], "{what}: one range");
        } else {
            assert_eq!(lens[0], n.min((chunk / 8).max(1)), "{what}: first range");
            for w in lens.windows(2) {
                assert!(w[1] <= 2 * w[0], "{what}: {} after {} grows past twice", w[1], w[0]);
            }
            // Whole chunks once the ramp reaches one (all but the last range).
            if let Some(full) = lens.iter().position(|&l| l == chunk) {
                assert!(
                    lens[full..lens.len() - 1].iter().all(|&l| l == chunk),
                    "{what}: short chunk after a whole one"
                );
            }
        }
        lens
    }

    #[test]
    fn ramped_chunks_cover_and_double() {
        let (c22, c18, c20) = (1 << 22, 1 << 18, 1 << 20);
        assert_eq!(checked_ramp(1 << 24, c22), [c22 / 8, c22 / 4, c22 / 2, c22, c22, c22, c22 / 8]);
        assert_eq!(checked_ramp(1 << 20, c18), [c18 / 8, c18 / 4, c18 / 2, c18, c18, c18, c18 / 8]);
        // The default host plan of 2^20 + 13 points (chunk 2^20).
        let n = (1 << 20) + 13;
        assert_eq!(MsmPlan::new(n, &MsmConfig::default(), true).unwrap().chunk, c20);
        assert_eq!(checked_ramp(n, c20), [c20 / 8, c20 / 4, c20 / 2, c20 / 8 + 13]);
        assert!(checked_ramp(0, 8).is_empty());
        assert_eq!(checked_ramp(1, 1), [1]);
        assert_eq!(checked_ramp(1, 1 << 10), [1]);
        assert_eq!(checked_ramp(1 << 10, 1 << 10), [1 << 10]);
        assert_eq!(checked_ramp((1 << 10) + 1, 1 << 10), [128, 256, 512, 129]);
        assert_eq!(checked_ramp(5, 1), [1; 5]);
        assert_eq!(checked_ramp(9, 7), [1, 2, 4, 2]);
        assert_eq!(checked_ramp(250, 100), [12, 24, 48, 96, 70]);
        // n between chunk/8 and chunk, and past chunk but under the first range plus the second.
        assert_eq!(checked_ramp(100, 1000), [100]);
        assert_eq!(checked_ramp(1001, 1000), [125, 250, 500, 126]);
        for chunk in 1..=40 {
            for n in 0..=5 * chunk + 3 {
                checked_ramp(n, chunk);
            }
        }
        let seed = std::env::var("ZKGPU_TEST_SEED").ok().and_then(|s| s.parse::<u64>().ok()).unwrap_or_else(|| {
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0x5eed, |d| d.as_nanos() as u64)
        });
        println!("ramped_chunks_cover_and_double: seed {seed} (replay with ZKGPU_TEST_SEED={seed})");
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        for _ in 0..2000 {
            let chunk = 1 + (rng.next_u64() % (1 << (1 + rng.next_u64() % 24))) as usize;
            let n = (rng.next_u64() % (9 * chunk as u64 + 2)) as usize;
            let lens = checked_ramp(n, chunk);
            assert!(lens.len() <= n.div_ceil(chunk) + 4, "seed {seed}: n {n}, chunk {chunk}: {lens:?}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

        /// Whatever `validate` accepts, the CPU model of the kernels (bounds-checked indexing) runs and sums
        /// correctly; whatever it rejects is `MsmConfig`, and the models refuse it too. The fields are drawn
        /// around the valid values so that both outcomes are common.
        #[test]
        fn validated_plans_run_in_bounds(
            n in 1usize..48,
            c in 0u32..=11,
            copies in 0u32..6,
            q_off in -1i64..=1,
            chunk in 0usize..56,
            seg in 0u32..6,
            reduce_run in 0u32..5,
            passes in 0u32..4,
            sort_group in 0u32..3,
            affine in prop::option::of(0u32..4),
            seed in any::<u64>(),
        ) {
            let windows = window_count(c.max(1));
            let q = u32::try_from(i64::from(windows.div_ceil(copies.max(1))) + q_off).unwrap_or(0);
            let plan = MsmPlan {
                n,
                window_bits: c,
                windows,
                copies,
                virtual_windows: q,
                chunk,
                seg,
                reduce_run,
                affine_rounds: affine.unwrap_or(0),
                affine_windows: u32::from(affine.is_some()),
                scatter_passes: passes,
                sort: Sort::Counting,
                sort_group,
            };
            let mut rng = ChaCha20Rng::seed_from_u64(seed);
            let bases: Vec<blstrs::G1Affine> =
                (0..n).map(|_| blstrs::G1Projective::random(&mut rng).to_affine()).collect();
            let scalars: Vec<Scalar> = (0..n).map(|_| <Scalar as ff::Field>::random(&mut rng)).collect();
            match plan.validate() {
                Ok(()) => {
                    prop_assert!(plan.scratch_bytes::<G2>() >= plan.scratch_bytes::<G1>());
                    let got = msm_model::<G1>(&bases, &scalars, &plan);
                    prop_assert_eq!(got.ok(), msm_cpu::<G1>(&bases, &scalars).ok(), "plan {:?}", plan);
                }
                Err(e) => {
                    prop_assert!(matches!(e, Error::MsmConfig(_)), "{:?}", e);
                    prop_assert!(is_plan_error(msm_model::<G1>(&bases, &scalars, &plan)));
                }
            }
        }

        /// Every plan the constructors make passes `validate`.
        #[test]
        fn constructed_plans_validate(
            n in 0usize..(1 << 28),
            c in prop::option::of(1u32..=MAX_WINDOW_BITS),
            chunk in prop::option::of(1usize..(1 << 26)),
            precompute in 0u32..4,
            affine in any::<bool>(),
            host in any::<bool>(),
        ) {
            let config = MsmConfig {
                window_bits: c,
                chunk,
                precompute,
                accumulation: if affine { Accumulation::Affine { rounds: None } } else { Accumulation::Xyzz },
                ..MsmConfig::default()
            };
            if let Ok(plan) = MsmPlan::new(n, &config, host) {
                prop_assert!(plan.validate().is_ok(), "{:?}", plan);
            }
        }
    }
}
