//! Multi-scalar multiplication `Σ sᵢ·Pᵢ` over G1 and G2 on the GPU (Pippenger's bucket method, signed
//! digits, every stage on the device, window combination included). The CPU reference is
//! [`crate::msm::cpu`].
//!
//! The algorithm, its stages and thread mapping are described in `zkgpu_kernels::msm`; measured numbers and
//! what limits them are in DESIGN.md ("MSM").
//!
//! - **Bases** come from the host ([`Bases::Host`], pinned or pageable) or stay on the device
//!   ([`MsmBases`], uploaded once: a Groth16 SRS is the same for every proof). Device bases may carry
//!   fixed-base precomputation ([`MsmBases::precompute`]): `copies` shifted copies of the table cut the
//!   bucket sets (and doublings) from `W` to `⌈W / copies⌉`, which makes larger windows pay; the cost is
//!   `copies ×` the table's memory.
//! - **Scalars** come from the host ([`Scalars::Host`]) or the device ([`Scalars::Device`]).
//! - **Chunks**: points are processed in chunks (buckets persist across them). With host inputs, the next
//!   chunk's upload runs on the copy stream while the current chunk computes; device inputs use chunks only
//!   to bound the scratch memory (2^25 points per chunk by default, 2^24 with affine accumulation).
//! - **Several tables, one scalar vector** ([`Msm::enqueue_tables`]): the MSMs of one scalar vector over
//!   several base tables (a Groth16 assignment's A, B and L queries) share the sort when the scalars fit one
//!   chunk; only the bucket stages run per table.
//! - **Determinism**: the result is normalized to `Z = 1` on the host (with the default counting sort the
//!   order inside a bucket varies from run to run, the point does not; [`Sort::Radix`] is stable), so results
//!   are bit-identical run to run.
//!
//! ```no_run
//! # fn main() -> zkgpu::Result<()> {
//! use group::{Curve, Group};
//! use zkgpu::msm::{Bases, DeviceLimits, G1, Msm, MsmBases, MsmConfig, MsmPlan, Scalars};
//! let gpu = zkgpu::Gpu::new(0)?;
//! let g = blstrs::G1Projective::generator();
//! let bases: Vec<blstrs::G1Affine> = (1..=4u64).map(|k| (g * blstrs::Scalar::from(k)).to_affine()).collect();
//! let scalars: Vec<blstrs::Scalar> = (1..=4u64).map(blstrs::Scalar::from).collect();
//! // One-shot:
//! let sum = zkgpu::msm::msm::<G1>(&gpu, &bases, &scalars)?;
//! // Bases resident on the device, many MSMs with new scalars:
//! let srs = MsmBases::<G1>::upload(&gpu, &bases)?;
//! // A plan fitted to the memory the device has left beside the bases:
//! let plan = MsmPlan::within::<G1>(bases.len(), &MsmConfig::default(), false, &DeviceLimits::of(&gpu)?)?;
//! let mut msm = Msm::<G1>::new(&gpu, plan)?;
//! let again = msm.run(Bases::Device(&srs), Scalars::Host(&scalars))?;
//! assert_eq!(sum, again);
//! # Ok(())
//! # }
//! ```
/// The CPU reference (tests compare the GPU against it).
pub mod cpu;

use blstrs::Scalar;
use cudarc::driver::{CudaFunction, LaunchConfig, PushKernelArg};
use zkgpu_kernels::msm::{FOLD_RUNS, MAX_WINDOW_BITS, SCAN_BLOCK, SCAN_SPAN, window_count};
use zkgpu_kernels::msm_sort::{
    RADIX_BITS, SORT_BLOCK, SORT_GRID, downsweep_shared_bytes, radix_bits, radix_passes, sort_grid, upsweep_shared_bytes,
};

pub use crate::curve::{Curve, G1, G2};
use crate::batch_add::{XyzzSetSum, reduce_scratch_len};
use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::launch::{launch_config_1d, launched};
use crate::memory::{DeviceBuffer, as_bytes};

/// Threads per block of the per-scalar kernels (count, scatter).
const SCALAR_BLOCK: u32 = 256;
/// Entries carry the point index in 31 bits (bit 31 is the sign), so a base table holds fewer than 2^31 points.
const MAX_TABLE_POINTS: usize = 1 << 31;
/// Points per chunk with device inputs, unless configured: bounds the scratch (8 bytes per entry for the
/// digits and the sort, the run partials). Every chunk adds a general addition per bucket (the fixup), so
/// fewer chunks are faster: 2^26 points in 2 chunks took 423 ms on the H200 against 445 ms in 4 (2^24) and
/// still fit the 16 GB bound with the inputs (tests/msm_cpu.rs). The affine accumulation's extra scratch
/// (`AFFINE_SCRATCH_BYTES`) keeps it at 2^24 ([`AFFINE_DEVICE_CHUNK`]).
const DEVICE_CHUNK: usize = 1 << 25;
/// Points per chunk with device inputs and affine accumulation, unless configured.
const AFFINE_DEVICE_CHUNK: usize = 1 << 24;
/// Largest chunk with host inputs (uploads of about a quarter of the points overlap compute).
const HOST_CHUNK_MAX: usize = 1 << 24;
/// Chunks with host inputs: about this many, so the first chunk's upload (not overlapped) is a quarter of it.
const HOST_CHUNKS: usize = 4;
/// Smallest chunk with host inputs (the largest is `HOST_CHUNK_MAX`).
const HOST_CHUNK_MIN: usize = 1 << 20;
/// Threads the accumulate stage aims for (a few waves of the ~400 resident G1 threads per SM on 132 SMs).
const ACCUMULATE_THREADS: usize = 1 << 17;
/// Threads one affine-accumulate launch aims for (its threads hold more registers: about two waves).
const AFFINE_THREADS: usize = 1 << 16;
/// Scratch an affine-accumulate launch aims to stay within: windows are launched in groups that fit (at least
/// one window per launch, whatever its size).
const AFFINE_SCRATCH_BYTES: usize = 2 << 30;
/// Cost of one inversion in field multiplications (Bernstein–Yang divsteps, docs/log/kernels-notes.md "Inversion"),
/// and what an affine addition saves against a mixed XYZZ one (10 products against 6): an affine round pays
/// when its pairs save more than the inversion costs.
const INVERSION_COST: u32 = 46;
const AFFINE_SAVING: u32 = 4;
/// Threads the reduce stage aims for.
const REDUCE_THREADS: usize = 1 << 16;
/// SMs of the device the thread targets above were tuned on (H200); other devices scale them.
const REFERENCE_SMS: u32 = 132;
/// Device memory [`DeviceLimits::of`] leaves free.
const MEMORY_RESERVE: usize = 256 << 20;
/// Smallest chunk [`MsmPlan::within`] shrinks to when the default chunk's scratch does not fit.
const MIN_FITTING_CHUNK: usize = 1 << 16;
/// Window sizes the automatic choice considers.
const AUTO_WINDOW_BITS: std::ops::RangeInclusive<u32> = 2..=22;
/// Bucket work per bucket and chunk (the fixup's general addition ≈ 1.6 mixed additions) and per bucket once
/// (the reduce's two general additions and its share of `lo·R`), in mixed additions: the cost model's weights.
const FIXUP_COST: f64 = 1.6;
const REDUCE_COST: f64 = 5.0;
/// Sorted entries (4 bytes each) one scatter pass may write: the scatter makes one pass per range of buckets,
/// so the part of `sorted` it writes into at random stays small enough for L2 (50 MB on an H100/H200) to
/// merge most writes into full sectors; every pass reads all the chunk's digits again. On the H200 a 2^25
/// chunk (128 MiB per window) scattered in 31.7 ms with 6 passes against 39.0 in one, and 2 passes were
/// faster still (2^26: 412 ms against 424 in one, 417 in six); a 2^24 chunk gained nothing from 3.
const SCATTER_REGION_BYTES: usize = 64 << 20;
/// Most scatter passes the automatic choice makes (each pass reads every digit of the chunk again).
const MAX_SCATTER_PASSES: u32 = 8;
/// Scratch the radix sort aims to stay within: virtual windows are sorted in groups, each window of a group
/// needing 12 bytes per entry slot (two key buffers and a value buffer); at least one window per group.
const SORT_SCRATCH_BYTES: usize = 768 << 20;

/// Choices for an MSM; `Default` picks everything.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MsmConfig {
    /// Window bits `c` (1..=24); `None`: the cost model's choice for the size (see [`choose_window_bits`]).
    pub window_bits: Option<u32>,
    /// Points per chunk; `None`: all at once up to 2^25 with device inputs (2^24 with affine accumulation),
    /// about a quarter (at most 2^24) with host inputs.
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
    /// default: on the H200 it sorts 2^24 points' entries in 13.3 ms against the radix sort's 16–18.
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
/// walks them, and on the H200 the choices counting only the buckets in use were slower (2^20: c = 15
/// 12.48 ms against c = 16 12.30; 2^22: c = 18 35.19 against 34.93) or untried bets (c = 22 at 2^27).
pub fn choose_window_bits(n: usize, copies: u32, chunks: usize) -> u32 {
    auto_windows(copies)
        .min_by(|&a, &b| window_cost(n, copies, chunks, a).total_cmp(&window_cost(n, copies, chunks, b)))
        .unwrap_or(16)
}

/// The window sizes an automatic choice considers with `copies` precomputed copies: those with at least as
/// many windows as copies (each copy serves whole windows).
fn auto_windows(copies: u32) -> impl Iterator<Item = u32> {
    AUTO_WINDOW_BITS.filter(move |&c| window_count(c) >= copies)
}

/// The cost model, in mixed additions: `n·W` for the points plus bucket work `q·2^(c−1)·(1.6·chunks + 5)`
/// (the fixup's general addition per bucket and chunk, the reduce once per bucket).
pub fn window_cost(n: usize, copies: u32, chunks: usize, c: u32) -> f64 {
    let w = window_count(c) as f64;
    let q = window_count(c).div_ceil(copies.max(1)) as f64;
    n as f64 * w + q * (1u64 << (c - 1)) as f64 * (FIXUP_COST * chunks as f64 + REDUCE_COST)
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
    pub const UNBOUNDED: DeviceLimits = DeviceLimits { memory_bytes: usize::MAX, total_bytes: usize::MAX, sm_count: REFERENCE_SMS };

    /// `gpu` as it is now: its SMs, and its free memory less a reserve of 256 MiB for the context and the
    /// small allocations around a run.
    pub fn of(gpu: &Gpu) -> Result<DeviceLimits> {
        let (free, total) = gpu.memory_info()?;
        Ok(DeviceLimits { memory_bytes: free.saturating_sub(MEMORY_RESERVE), total_bytes: total, sm_count: gpu.info().sm_count })
    }

    /// These limits with `bytes` less memory: inputs that will be allocated after the plan is made (device
    /// bases, a precomputed table, device scalars).
    pub fn less(self, bytes: usize) -> DeviceLimits {
        DeviceLimits { memory_bytes: self.memory_bytes.saturating_sub(bytes), ..self }
    }

    /// `threads` (a target for [`REFERENCE_SMS`] SMs) scaled to this device's SMs.
    fn threads(&self, threads: usize) -> usize {
        (threads * self.sm_count.max(1) as usize / REFERENCE_SMS as usize).max(1)
    }
}

/// Affine halving rounds worth running over segments of `seg` entries (runs of at least `seg` entries): round
/// `k` has about `seg / 2^k` pairs and pays while they save more than its one inversion.
pub(crate) fn paying_affine_rounds(seg: u32) -> u32 {
    (1..=seg.max(1).ilog2()).take_while(|k| (seg >> k) * AFFINE_SAVING > INVERSION_COST).count() as u32
}

/// The largest power of two `<= x` (1 for `x <= 1`), clamped to `[lo, hi]`.
fn pow2_clamped(x: usize, lo: usize, hi: usize) -> usize {
    let p = if x <= 1 { 1 } else { 1usize << (usize::BITS - 1 - x.leading_zeros()) };
    p.clamp(lo, hi)
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
        // The default chunk has the fewest chunks, so where the default plan fits it is also the model's best.
        if first.device_bytes::<C>(host_inputs) <= limits.memory_bytes {
            return Ok(first);
        }
        let copies = first.copies;
        let chunks = std::iter::successors(Some(first.chunk), |&chunk| (chunk / 2 >= MIN_FITTING_CHUNK).then_some(chunk / 2));
        let chunks: Vec<usize> = if config.chunk.is_some() { vec![first.chunk] } else { chunks.collect() };
        let windows: Vec<u32> = match config.window_bits {
            Some(c) => vec![c],
            None => auto_windows(copies).collect(),
        };
        let mut best: Option<(f64, MsmPlan)> = None;
        let mut least = usize::MAX;
        for &chunk in &chunks {
            for &c in &windows {
                let plan = Self::build(n, &MsmConfig { window_bits: Some(c), chunk: Some(chunk), ..*config }, host_inputs, limits)?;
                let bytes = plan.device_bytes::<C>(host_inputs);
                least = least.min(bytes);
                let cost = window_cost(n, copies, n.div_ceil(plan.chunk).max(1), c);
                if bytes <= limits.memory_bytes && best.as_ref().is_none_or(|(best_cost, _)| cost < *best_cost) {
                    best = Some((cost, plan));
                }
            }
        }
        best.map(|(_, plan)| plan).ok_or(Error::OutOfMemory { requested: least, free: limits.memory_bytes, total: limits.total_bytes })
    }

    /// [`MsmPlan::new`] with the per-thread work scaled to `limits`' SMs (memory is [`MsmPlan::within`]'s).
    fn build(n: usize, config: &MsmConfig, host_inputs: bool, limits: &DeviceLimits) -> Result<MsmPlan> {
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
            Accumulation::Xyzz => (pow2_clamped(entries / limits.threads(ACCUMULATE_THREADS), 16, 512) as u32, 0, 0),
            Accumulation::Affine { rounds } => {
                // Scratch per window ≈ 120 B (G1) per entry: group windows up to the budget.
                let group = (AFFINE_SCRATCH_BYTES / (per_window * 120).max(1)).clamp(1, q as usize);
                let seg = pow2_clamped(per_window * group / limits.threads(AFFINE_THREADS), 16, 512) as u32;
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

    /// Buckets per virtual window, `2^(c−1)`.
    pub fn buckets(&self) -> usize {
        1 << (self.window_bits - 1)
    }

    /// Entry slots per virtual window and chunk: every window served by the virtual window can put one
    /// entry per point there.
    fn per_window(&self) -> usize {
        self.chunk * self.windows.div_ceil(self.virtual_windows) as usize
    }

    /// Run-partial slots per virtual window (see `zkgpu_kernels::msm`).
    fn slots(&self) -> usize {
        self.buckets() + self.per_window().div_ceil(self.seg as usize)
    }

    /// Threads per virtual window of an accumulate launch (whole blocks).
    fn accumulate_threads<C: Curve>(&self) -> usize {
        let block = point_block::<C>() as usize;
        self.per_window().div_ceil(self.seg as usize).div_ceil(block) * block
    }

    /// Affine-accumulate scratch, in affine points: per thread of a launch `seg` list points plus `seg / 2`
    /// prefix products (`seg / 4` points); none for XYZZ accumulation.
    fn affine_scratch_points<C: Curve>(&self) -> usize {
        let threads = self.accumulate_threads::<C>() * self.affine_windows as usize;
        threads * (self.seg as usize + self.seg as usize / 4)
    }

    /// Parts of a window the scan kernels cut its buckets into.
    fn scan_parts(&self) -> usize {
        self.buckets().div_ceil(SCAN_SPAN as usize)
    }

    /// Reduce shares per virtual window.
    fn shares(&self) -> usize {
        self.buckets().div_ceil(self.reduce_run as usize)
    }

    /// The radix sort's histogram per virtual window: `2^bits` digits times the blocks of a pass.
    fn sort_spine_len(&self) -> usize {
        (1usize << radix_bits(self.window_bits)) * SORT_GRID as usize
    }

    /// Words of the sort's scratch: the counting sort's counters, cursors and part sums, or the radix sort's
    /// key and value buffers, item counts and spine (histogram, its scan, cursors, part sums) per group.
    fn sort_words(&self) -> usize {
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
    /// staging of two chunks of bases and scalars (device-resident inputs not included).
    pub fn device_bytes<C: Curve>(&self, host_inputs: bool) -> usize {
        let staging = if host_inputs { 2 * self.chunk * (size_of::<C::Affine>() + size_of::<Scalar>()) } else { 0 };
        self.scratch_bytes::<C>() + staging
    }

    /// Device memory the run's scratch takes for curve `C` (inputs and staging not included).
    pub fn scratch_bytes<C: Curve>(&self) -> usize {
        let q = self.virtual_windows as usize;
        let words = q * (self.buckets() + 1) + q * self.per_window() + self.windows as usize * self.chunk + self.sort_words();
        let points = q * (self.slots() + self.buckets() + self.shares() + reduce_scratch_len(self.shares()));
        words * 4
            + points * C::XYZZ_BYTES
            + (q + 1) * size_of::<C::Projective>()
            + self.affine_scratch_points::<C>() * size_of::<C::Affine>()
    }
}

/// Bases resident on one GPU: uploaded once, used by many MSMs (optionally with precomputed copies).
pub struct MsmBases<C: Curve> {
    /// `copies` rows of `n` points: row `k` holds `2^(c·q·k)·Pᵢ`.
    table: DeviceBuffer<C::Affine>,
    n: usize,
    copies: u32,
    /// The window bits the copies were made for (0 without precomputation).
    window_bits: u32,
}

impl<C: Curve> MsmBases<C> {
    /// Uploads `bases` (no precomputation).
    pub fn upload(gpu: &Gpu, bases: &[C::Affine]) -> Result<Self> {
        check_table(bases.len(), 1)?;
        Ok(MsmBases { table: gpu.upload(bases)?, n: bases.len(), copies: 1, window_bits: 0 })
    }

    /// Takes bases already on the device.
    pub fn from_buffer(table: DeviceBuffer<C::Affine>) -> Result<Self> {
        check_table(table.len(), 1)?;
        Ok(MsmBases { n: table.len(), table, copies: 1, window_bits: 0 })
    }

    /// Uploads `bases` and builds `plan.copies` shifted copies on the GPU (`copies · n` points of device
    /// memory): row `k` is `2^(c·q·k)·Pᵢ` for the plan's window bits `c` and virtual windows `q`. Runs with this
    /// plan then need `q` bucket sets instead of `W`.
    pub fn precompute(gpu: &Gpu, bases: &[C::Affine], plan: &MsmPlan) -> Result<Self> {
        check_table(bases.len(), plan.copies.max(1))?;
        Self::precompute_from_buffer(gpu, &gpu.upload(bases)?, plan)
    }

    /// [`MsmBases::precompute`] for bases already on the device (copied into the table's first row).
    pub fn precompute_from_buffer(gpu: &Gpu, bases: &DeviceBuffer<C::Affine>, plan: &MsmPlan) -> Result<Self> {
        let (n, copies) = (bases.len(), plan.copies.max(1));
        check_table(n, copies)?;
        let span = tracing::info_span!("zkgpu.msm.precompute", curve = C::NAME, n, copies);
        let _entered = span.enter();
        let mut table = gpu.alloc_zeroed::<C::Affine>(n * copies as usize)?;
        if n > 0 {
            gpu.stream().memcpy_dtod(bases.raw(), &mut table.raw_range_mut(0..n)?)?;
        }
        if n > 0 && copies > 1 {
            let f = gpu.function(&format!("msm_{}_precompute", C::NAME))?;
            let (n32, shift) = (n as u32, plan.window_bits * plan.virtual_windows);
            let mut launch = gpu.stream().launch_builder(&f);
            launch.arg(table.raw_mut()).arg(&n32).arg(&shift).arg(&copies);
            // SAFETY: msm_{C}_precompute: one thread per point (n < 2^31), the table holds copies · n points
            // with row 0 written above; each thread reads and writes only its own column.
            unsafe { launch.launch(launch_config_1d(n, point_block::<C>())) }?;
        }
        gpu.synchronize()?;
        let window_bits = if copies > 1 { plan.window_bits } else { 0 };
        Ok(MsmBases { table, n, copies, window_bits })
    }

    /// Number of bases.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether there are no bases.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The bases themselves when there is no precomputation (`copies == 1`), e.g. for batch additions over
    /// the same query; `None` for a precomputed table (its rows are shifted copies).
    pub fn points(&self) -> Option<&DeviceBuffer<C::Affine>> {
        (self.copies == 1).then_some(&self.table)
    }

    /// Precomputed copies (1: none).
    pub fn copies(&self) -> u32 {
        self.copies
    }

    /// Device memory the table takes.
    pub fn device_bytes(&self) -> usize {
        self.table.byte_len()
    }
}

fn check_table(n: usize, copies: u32) -> Result<()> {
    if n.saturating_mul(copies as usize) >= MAX_TABLE_POINTS {
        return Err(Error::SizeOverflow(format!("{n} bases × {copies} copies: a table holds fewer than 2^31 points")));
    }
    Ok(())
}

/// Where the bases are.
pub enum Bases<'a, C: Curve> {
    /// Resident on the device (possibly precomputed); the scalars use the first `scalars.len()` bases.
    Device(&'a MsmBases<C>),
    /// In host memory (pinned memory uploads at line rate; pageable memory is staged by the driver).
    /// Must hold exactly one base per scalar.
    Host(&'a [C::Affine]),
}

/// Where the scalars are.
pub enum Scalars<'a> {
    /// On the device.
    Device(&'a DeviceBuffer<Scalar>),
    /// In host memory.
    Host(&'a [Scalar]),
    /// Sparse, on the device: scalar `j < len` multiplies base `indices[j]` of [`Bases::Device`] (any of
    /// them, in any order, repeats allowed). For MSMs whose scalars are mostly zero: only the `len` others
    /// are sorted and added. An index past the bases is reported by [`Msm::finish`]
    /// ([`Error::IndexOutOfRange`]); the GPU only ever reads bases inside the table.
    DeviceIndexed {
        /// At least `len` scalars (the first `len` are used).
        scalars: &'a DeviceBuffer<Scalar>,
        /// At least `len` base indices.
        indices: &'a DeviceBuffer<u32>,
        len: usize,
    },
}

impl Scalars<'_> {
    /// Number of scalars.
    pub fn len(&self) -> usize {
        match self {
            Scalars::Device(s) => s.len(),
            Scalars::Host(s) => s.len(),
            Scalars::DeviceIndexed { len, .. } => *len,
        }
    }

    /// Whether there are no scalars.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Threads per block of the per-point kernels (G2's 255 registers allow fewer).
fn point_block<C: Curve>() -> u32 {
    if C::XYZZ_BYTES > 192 { 64 } else { 128 }
}

/// How a chunk's entries name their points (the count's and sorts' common arguments).
struct PointArgs<'a> {
    /// Sparse scalars' base indices for the chunk, or `None`.
    index_view: Option<&'a cudarc::driver::CudaView<'a, u8>>,
    len: u32,
    /// Points per precomputed copy (table row), and the chunk's first base.
    stride: u32,
    first: u32,
    /// Base indices must be below this (larger ones become 0 and are counted).
    limit: u32,
}

/// Kernel handles of one curve.
struct Kernels {
    count: CudaFunction,
    scan_sums: CudaFunction,
    scan: CudaFunction,
    scatter: CudaFunction,
    sort_upsweep: CudaFunction,
    sort_downsweep: CudaFunction,
    sort_offsets: CudaFunction,
    accumulate: CudaFunction,
    accumulate_affine: CudaFunction,
    fold: CudaFunction,
    fixup: CudaFunction,
    fixup_spanning: CudaFunction,
    reduce: CudaFunction,
    combine: CudaFunction,
}

/// An MSM engine: kernels and scratch for one [`MsmPlan`], reused across calls (allocate once per size).
pub struct Msm<'g, C: Curve> {
    gpu: &'g Gpu,
    plan: MsmPlan,
    kernels: Kernels,
    sums: XyzzSetSum<C>,
    /// The counting sort's scratch (empty buffers with the radix sort).
    counting: CountingScratch,
    /// The radix sort's scratch (empty buffers with the counting sort).
    radix: RadixScratch,
    offsets: DeviceBuffer<u32>,
    sorted: DeviceBuffer<u32>,
    partials: DeviceBuffer<u8>,
    buckets: DeviceBuffer<u8>,
    shares: DeviceBuffer<u8>,
    window_sums: DeviceBuffer<C::Projective>,
    /// One result per table of the queued call (grown by [`Msm::enqueue_tables`]).
    out: DeviceBuffer<C::Projective>,
    /// Double-buffered chunk staging for host inputs, allocated on first use.
    staged_bases: Vec<DeviceBuffer<C::Affine>>,
    staged_scalars: Vec<DeviceBuffer<Scalar>>,
    /// Every window's signed digit of the chunk's scalars (count → scatter), `windows · chunk` words.
    digits: DeviceBuffer<u32>,
    /// Out-of-range base indices the count found (sparse scalars).
    bad_indices: DeviceBuffer<u32>,
    /// The affine accumulation's lists and prefix products (empty for XYZZ accumulation).
    affine_scratch: DeviceBuffer<C::Affine>,
    /// What [`Msm::enqueue`] queued and [`Msm::finish`] collects.
    pending: Option<Queued>,
}

/// The counting sort's buffers (count → scan → scatter).
struct CountingScratch {
    /// Entries per bucket, `q · buckets` words.
    counts: DeviceBuffer<u32>,
    /// The scan's part sums, `q · ⌈buckets / SCAN_SPAN⌉` words.
    scan_sums: DeviceBuffer<u32>,
    /// The scatter's cursors for entries past the ranks the count keeps, `q · buckets` words.
    cursors: DeviceBuffer<u32>,
}

impl CountingScratch {
    fn new(gpu: &Gpu, plan: &MsmPlan) -> Result<Self> {
        let q = if plan.sort == Sort::Counting { plan.virtual_windows as usize } else { 0 };
        Ok(CountingScratch {
            counts: gpu.alloc_zeroed(q * plan.buckets())?,
            scan_sums: gpu.alloc_zeroed(q * plan.scan_parts())?,
            cursors: gpu.alloc_zeroed(q * plan.buckets())?,
        })
    }
}

/// The radix sort's buffers for one group of `sort_group` virtual windows (`zkgpu_kernels::msm_sort`).
struct RadixScratch {
    /// Keys of alternate passes, `group · per_window` words each.
    keys: [DeviceBuffer<u32>; 2],
    /// Values of the passes that do not write `sorted`, `group · per_window` words.
    vals: DeviceBuffer<u32>,
    /// Items per window after the first pass (zero digits dropped), a word per window.
    counts: DeviceBuffer<u32>,
    /// Histogram `[window][digit][block]`, its exclusive scan (`L + 1` words per window), the scan's cursors and
    /// part sums.
    hist: DeviceBuffer<u32>,
    spine: DeviceBuffer<u32>,
    cursors: DeviceBuffer<u32>,
    sums: DeviceBuffer<u32>,
}

impl RadixScratch {
    fn new(gpu: &Gpu, plan: &MsmPlan) -> Result<Self> {
        let (group, per_window, spine) = match plan.sort {
            Sort::Radix => (plan.sort_group as usize, plan.per_window(), plan.sort_spine_len()),
            Sort::Counting => (0, 0, 0),
        };
        Ok(RadixScratch {
            keys: [gpu.alloc_zeroed(group * per_window)?, gpu.alloc_zeroed(group * per_window)?],
            vals: gpu.alloc_zeroed(group * per_window)?,
            counts: gpu.alloc_zeroed(group)?,
            hist: gpu.alloc_zeroed(group * spine)?,
            spine: gpu.alloc_zeroed(group * (spine + 1))?,
            cursors: gpu.alloc_zeroed(group * spine)?,
            sums: gpu.alloc_zeroed(group * spine.div_ceil(SCAN_SPAN as usize))?,
        })
    }
}

/// An MSM [`Msm::enqueue`] queued.
#[derive(Clone, Copy)]
enum Queued {
    /// No scalars: the identity per table, nothing on the GPU.
    Empty { tables: usize },
    /// Kernels queued for `tables` tables; `index_limit`: the bases sparse scalars may index (their check is
    /// collected too).
    Run { index_limit: Option<usize>, tables: usize },
}

impl<'g, C: Curve> Msm<'g, C> {
    /// Loads the kernels and allocates the plan's scratch ([`MsmPlan::scratch_bytes`]).
    pub fn new(gpu: &'g Gpu, plan: MsmPlan) -> Result<Self> {
        let name = |what: &str| format!("msm_{}_{what}", C::NAME);
        let kernels = Kernels {
            count: gpu.function("msm_count")?,
            scan_sums: gpu.function("msm_scan_sums")?,
            scan: gpu.function("msm_scan")?,
            scatter: gpu.function("msm_scatter")?,
            sort_upsweep: gpu.function("msm_sort_upsweep")?,
            sort_downsweep: gpu.function("msm_sort_downsweep")?,
            sort_offsets: gpu.function("msm_sort_offsets")?,
            accumulate: gpu.function(&name("accumulate"))?,
            accumulate_affine: gpu.function(&name("accumulate_affine"))?,
            fold: gpu.function(&name("fold"))?,
            fixup: gpu.function(&name("fixup"))?,
            fixup_spanning: gpu.function(&name("fixup_spanning"))?,
            reduce: gpu.function(&name("reduce"))?,
            combine: gpu.function(&name("combine"))?,
        };
        gpu.allow_dynamic_shared(&kernels.sort_upsweep, upsweep_shared_bytes(RADIX_BITS))?;
        gpu.allow_dynamic_shared(&kernels.sort_downsweep, downsweep_shared_bytes(RADIX_BITS))?;
        let q = plan.virtual_windows as usize;
        let b = plan.buckets();
        let xyzz = C::XYZZ_BYTES;
        Ok(Msm {
            gpu,
            kernels,
            sums: XyzzSetSum::new(gpu, plan.shares(), q)?,
            counting: CountingScratch::new(gpu, &plan)?,
            radix: RadixScratch::new(gpu, &plan)?,
            offsets: gpu.alloc_zeroed(q * (b + 1))?,
            sorted: gpu.alloc_zeroed(q * plan.per_window())?,
            partials: gpu.alloc_zeroed(q * plan.slots() * xyzz)?,
            buckets: gpu.alloc_zeroed(q * b * xyzz)?,
            shares: gpu.alloc_zeroed(q * plan.shares() * xyzz)?,
            window_sums: gpu.alloc_zeroed(q)?,
            out: gpu.alloc_zeroed(1)?,
            staged_bases: Vec::new(),
            staged_scalars: Vec::new(),
            digits: gpu.alloc_zeroed(plan.windows as usize * plan.chunk)?,
            bad_indices: gpu.alloc_zeroed(1)?,
            affine_scratch: gpu.alloc_zeroed(plan.affine_scratch_points::<C>())?,
            pending: None,
            plan,
        })
    }

    /// The plan in use.
    pub fn plan(&self) -> &MsmPlan {
        &self.plan
    }

    /// Device memory this engine holds now: scratch plus any host-input staging.
    pub fn device_bytes(&self) -> usize {
        let staged: usize = self.staged_bases.iter().map(|b| b.byte_len()).sum::<usize>()
            + self.staged_scalars.iter().map(|s| s.byte_len()).sum::<usize>();
        self.plan.scratch_bytes::<C>() + staged
    }

    /// `Σ scalars[i]·bases[i]`, normalized (`Z = 1`, or the identity): [`Msm::enqueue`] then
    /// [`Msm::finish`]. Errors: more scalars than the plan's `n` or than the bases (`LengthMismatch`; host
    /// bases must match the scalars exactly), device bases precomputed for another plan (`MsmConfig`), device
    /// memory for the host-input staging (`OutOfMemory`). Nothing the caller passed is modified.
    pub fn run(&mut self, bases: Bases<'_, C>, scalars: Scalars<'_>) -> Result<C::Projective> {
        self.enqueue(bases, scalars)?;
        self.finish()
    }

    /// Queues the whole MSM on the GPU's streams; [`Msm::finish`] waits and returns the result. Lets a
    /// pipeline queue more work behind the MSM (the next job's uploads, an NTT) before it blocks. Same checks
    /// and errors as [`Msm::run`].
    ///
    /// Returns once the device no longer needs the caller's memory: at once for device inputs (the streams
    /// order them), after the last chunk's upload for [`Bases::Host`] / [`Scalars::Host`] (the copy stream is
    /// waited for; with double-buffered chunks that is about when the second-to-last chunk's compute ends).
    /// On an error nothing queued reads the caller's memory afterwards (the GPU is synchronized).
    pub fn enqueue(&mut self, bases: Bases<'_, C>, scalars: Scalars<'_>) -> Result<()> {
        self.enqueue_on(&[bases], scalars)
    }

    /// Queues the MSMs of one scalar vector over several device tables (`Σ scalars[i]·tables[k][i]` for every
    /// `k`); [`Msm::finish_tables`] returns them in order. When the scalars fit one chunk of the plan the
    /// count and sort run once and only the bucket stages (accumulate to combine) run per table; otherwise
    /// each table is a whole MSM. The tables must have the same length and precomputation (the sorted entries
    /// name points by position); errors as [`Msm::run`], plus `LengthMismatch` for tables of different
    /// lengths.
    pub fn enqueue_tables(&mut self, tables: &[&MsmBases<C>], scalars: Scalars<'_>) -> Result<()> {
        if let Some(t) = tables.iter().find(|t| t.n != tables[0].n) {
            return Err(Error::LengthMismatch { what: "msm tables (all the same length)", expected: tables[0].n, actual: t.n });
        }
        let bases: Vec<Bases<'_, C>> = tables.iter().map(|t| Bases::Device(t)).collect();
        self.enqueue_on(&bases, scalars)
    }

    /// [`Msm::enqueue`] over the tables `bases` (host bases only alone: their chunks are staged one table at
    /// a time).
    fn enqueue_on(&mut self, bases: &[Bases<'_, C>], scalars: Scalars<'_>) -> Result<()> {
        let n = scalars.len();
        let span = tracing::info_span!("zkgpu.msm.enqueue", curve = C::NAME, n, c = self.plan.window_bits, tables = bases.len());
        let _entered = span.enter();
        if self.pending.is_some() {
            return Err(Error::MsmConfig("Msm::enqueue while an MSM is queued (call finish first)".into()));
        }
        for b in bases {
            self.check_inputs(b, &scalars)?;
        }
        let tables = bases.len();
        if n == 0 || tables == 0 {
            self.pending = Some(Queued::Empty { tables });
            return Ok(());
        }
        if self.out.len() < tables {
            self.out = self.gpu.alloc_zeroed(tables)?;
        }
        let index_limit = match (&bases[0], &scalars) {
            (Bases::Device(b), Scalars::DeviceIndexed { .. }) => Some(b.n),
            _ => None,
        };
        self.pending = Some(Queued::Run { index_limit, tables });
        let host_inputs = matches!(bases[0], Bases::Host(_)) || matches!(scalars, Scalars::Host(_));
        let queued = self.enqueue_all(bases, &scalars).and_then(|()| {
            // The copies read the caller's memory: they must be done before its borrow ends.
            if host_inputs { Ok(self.gpu.copy_stream().synchronize()?) } else { Ok(()) }
        });
        if queued.is_err() {
            self.pending = None;
            let _ = self.gpu.synchronize();
        }
        queued
    }

    /// Waits for the MSM queued by [`Msm::enqueue`] and returns it normalized (`Z = 1`, or the identity).
    /// `Err(MsmConfig)` when nothing is queued, or when [`Msm::enqueue_tables`] queued other than one table
    /// (use [`Msm::finish_tables`]; the engine is free again either way).
    pub fn finish(&mut self) -> Result<C::Projective> {
        let mut sums = self.finish_tables()?;
        match (sums.pop(), sums.is_empty()) {
            (Some(sum), true) => Ok(sum),
            _ => Err(Error::MsmConfig("Msm::finish after enqueue_tables of other than one table (use finish_tables)".into())),
        }
    }

    /// Waits for the MSMs queued by [`Msm::enqueue`] or [`Msm::enqueue_tables`] and returns them normalized,
    /// one per table. `Err(MsmConfig)` when nothing is queued.
    pub fn finish_tables(&mut self) -> Result<Vec<C::Projective>> {
        let span = tracing::info_span!("zkgpu.msm.finish", curve = C::NAME);
        let _entered = span.enter();
        match self.pending.take() {
            None => Err(Error::MsmConfig("Msm::finish without a queued MSM (call enqueue first)".into())),
            Some(Queued::Empty { tables }) => Ok(vec![C::identity(); tables]),
            Some(Queued::Run { index_limit, tables }) => {
                let out = self.gpu.download(&self.out)?;
                if let Some(limit) = index_limit {
                    let bad = self.gpu.download(&self.bad_indices)?.first().copied().unwrap_or(0);
                    if bad > 0 {
                        return Err(Error::IndexOutOfRange { what: "msm base indices", count: bad as usize, limit });
                    }
                }
                let sums = out.get(..tables).ok_or_else(|| Error::MsmConfig("no result".into()))?;
                Ok(sums.iter().map(C::normalize).collect())
            }
        }
    }

    /// The first chunk's sort as the accumulate stage sees it: per virtual window, the bucket offsets
    /// (`buckets + 1` words) and the sorted entries (`point | NEG_FLAG` for a negated point). Runs only the
    /// count and the sort; for tests and diagnostics (`zkgpu_kernels::msm::model::sorted_windows` is the
    /// reference). Same input checks as [`Msm::run`].
    pub fn sorted_chunk(&mut self, bases: Bases<'_, C>, scalars: Scalars<'_>) -> Result<Vec<(Vec<u32>, Vec<u32>)>> {
        if self.pending.is_some() {
            return Err(Error::MsmConfig("Msm::sorted_chunk while an MSM is queued (call finish first)".into()));
        }
        self.check_inputs(&bases, &scalars)?;
        let (q, b) = (self.plan.virtual_windows as usize, self.plan.buckets());
        let len = scalars.len().min(self.plan.chunk);
        if len == 0 {
            return Ok(vec![(vec![0; b + 1], Vec::new()); q]);
        }
        self.prepare_staging(&bases, &scalars)?;
        let queued = self.stage(0, &bases, &scalars, 0, len).and_then(|()| self.enqueue_sort(0, &bases, &scalars, 0, len));
        if let Err(e) = queued {
            let _ = self.gpu.synchronize();
            return Err(e);
        }
        let offsets = self.gpu.download(&self.offsets)?;
        let sorted = self.gpu.download(&self.sorted)?;
        let per_window = self.plan.per_window();
        Ok((0..q)
            .map(|v| {
                let offsets = offsets[v * (b + 1)..(v + 1) * (b + 1)].to_vec();
                let end = (offsets[b] as usize).min(per_window);
                let entries = sorted[v * per_window..v * per_window + end].to_vec();
                (offsets, entries)
            })
            .collect())
    }

    /// The checks [`Msm::enqueue`] makes before queueing anything.
    fn check_inputs(&self, bases: &Bases<'_, C>, scalars: &Scalars<'_>) -> Result<()> {
        let n = scalars.len();
        if n > self.plan.n {
            return Err(Error::LengthMismatch { what: "msm scalars (plan size)", expected: self.plan.n, actual: n });
        }
        if let Scalars::DeviceIndexed { scalars: s, indices, len } = scalars {
            if !matches!(bases, Bases::Device(_)) {
                return Err(Error::MsmConfig("sparse (indexed) scalars need device bases".into()));
            }
            if s.len() < *len {
                return Err(Error::LengthMismatch { what: "msm indexed scalars", expected: *len, actual: s.len() });
            }
            if indices.len() < *len {
                return Err(Error::LengthMismatch { what: "msm base indices", expected: *len, actual: indices.len() });
            }
        }
        let indexed = matches!(scalars, Scalars::DeviceIndexed { .. });
        match bases {
            Bases::Host(b) if b.len() != n => {
                Err(Error::LengthMismatch { what: "msm bases", expected: n, actual: b.len() })
            }
            Bases::Device(b) if !indexed && b.len() < n => {
                Err(Error::LengthMismatch { what: "msm device bases", expected: n, actual: b.len() })
            }
            Bases::Device(b) if b.copies != self.plan.copies || (b.copies > 1 && b.window_bits != self.plan.window_bits) => {
                Err(Error::MsmConfig(format!(
                    "bases precomputed with {} copies for c = {}, plan has {} copies and c = {}",
                    b.copies, b.window_bits, self.plan.copies, self.plan.window_bits
                )))
            }
            Bases::Host(_) if self.plan.copies > 1 => {
                Err(Error::MsmConfig("precomputed plans need device bases (MsmBases::precompute)".into()))
            }
            _ => Ok(()),
        }
    }

    /// Queues every chunk and the final stages of each table into `out[k]` (inputs checked by
    /// [`Msm::enqueue_on`]). Scalars that fit one chunk are sorted once for all tables; longer ones are sorted
    /// chunk by chunk per table (the buckets hold one table's sums at a time).
    fn enqueue_all(&mut self, bases: &[Bases<'_, C>], scalars: &Scalars<'_>) -> Result<()> {
        let n = scalars.len();
        self.prepare_staging(&bases[0], scalars)?;
        let stream = self.gpu.stream().clone();
        let chunk = self.plan.chunk;
        let one_chunk = n <= chunk;
        if one_chunk {
            stream.memset_zeros(self.bad_indices.raw_mut())?;
            self.stage(0, &bases[0], scalars, 0, n)?;
            self.enqueue_sort(0, &bases[0], scalars, 0, n)?;
        }
        for (table, b) in bases.iter().enumerate() {
            if one_chunk {
                self.enqueue_buckets(0, b, n, true)?;
            } else {
                // Each table's pass counts the same out-of-range indices again: keep one pass's count.
                stream.memset_zeros(self.bad_indices.raw_mut())?;
                let (mut first, mut k) = (0, 0);
                while first < n {
                    let len = chunk.min(n - first);
                    self.stage(k % 2, b, scalars, first, len)?;
                    self.enqueue_chunk(k % 2, b, scalars, first, len, k == 0)?;
                    first += len;
                    k += 1;
                }
            }
            self.enqueue_finish(table)?;
        }
        Ok(())
    }

    /// Allocates the chunk staging host inputs need (twice the chunk, for double buffering).
    fn prepare_staging(&mut self, bases: &Bases<'_, C>, scalars: &Scalars<'_>) -> Result<()> {
        let chunk = self.plan.chunk.min(self.plan.n);
        if matches!(bases, Bases::Host(_)) && self.staged_bases.is_empty() {
            self.staged_bases = vec![self.gpu.alloc_zeroed(chunk)?, self.gpu.alloc_zeroed(chunk)?];
        }
        if matches!(scalars, Scalars::Host(_)) && self.staged_scalars.is_empty() {
            self.staged_scalars = vec![self.gpu.alloc_zeroed(chunk)?, self.gpu.alloc_zeroed(chunk)?];
        }
        Ok(())
    }

    /// Queues the upload of chunk `[first, first + len)` of the host inputs into staging slot `slot`, on the
    /// copy stream (cudarc's buffer events order it after the kernels that read the slot two chunks ago, and
    /// the kernels of this chunk after it). Device inputs need nothing.
    fn stage(&mut self, slot: usize, bases: &Bases<'_, C>, scalars: &Scalars<'_>, first: usize, len: usize) -> Result<()> {
        let copy = self.gpu.copy_stream().clone();
        let span = tracing::debug_span!("zkgpu.msm.h2d", first, len);
        let _entered = span.enter();
        if let Bases::Host(b) = bases {
            let dst = &mut self.staged_bases[slot];
            copy.memcpy_htod(as_bytes(&b[first..first + len]), &mut dst.raw_range_mut(0..len)?)?;
        }
        if let Scalars::Host(s) = scalars {
            let dst = &mut self.staged_scalars[slot];
            copy.memcpy_htod(as_bytes(&s[first..first + len]), &mut dst.raw_range_mut(0..len)?)?;
        }
        Ok(())
    }

    /// Queues count, sort, accumulate, fold and fixup for one chunk on the compute stream.
    /// `first_chunk`: the fixup stores the buckets instead of adding to them (they are not zeroed).
    fn enqueue_chunk(&mut self, slot: usize, bases: &Bases<'_, C>, scalars: &Scalars<'_>, first: usize, len: usize, first_chunk: bool) -> Result<()> {
        self.enqueue_sort(slot, bases, scalars, first, len)?;
        self.enqueue_buckets(slot, bases, len, first_chunk)
    }

    /// Queues the count and the sort of one chunk: `sorted` and `offsets` for every virtual window.
    fn enqueue_sort(&mut self, slot: usize, bases: &Bases<'_, C>, scalars: &Scalars<'_>, first: usize, len: usize) -> Result<()> {
        let stream = self.gpu.stream().clone();
        let plan = self.plan;
        let (c, windows, q) = (plan.window_bits, plan.windows, plan.virtual_windows);
        let len32 = len as u32;
        // Point indices: device bases index the whole table (stride n, chunk offset first, or the sparse
        // scalars' indices); staged host bases index the chunk (no copies).
        let (stride, first32) = match bases {
            Bases::Device(b) => (b.n as u32, first as u32),
            Bases::Host(_) => (len32, 0),
        };
        let scalar_view = match scalars {
            Scalars::Device(s) | Scalars::DeviceIndexed { scalars: s, .. } => s.raw_range(first..first + len)?,
            Scalars::Host(_) => self.staged_scalars[slot].raw_range(0..len)?,
        };
        let index_view = match scalars {
            Scalars::DeviceIndexed { indices, .. } => Some(indices.raw_range(first..first + len)?),
            _ => None,
        };
        // Base indices must be below the row length (sparse scalars are checked against it); null: no indices.
        let (limit, null) = (stride, 0u64);
        let counting = plan.sort == Sort::Counting;
        if counting {
            stream.memset_zeros(self.counting.counts.raw_mut())?;
        }

        let mut launch = stream.launch_builder(&self.kernels.count);
        launch.arg(&scalar_view);
        match &index_view {
            Some(view) => launch.arg(view),
            None => launch.arg(&null),
        };
        launch.arg(&len32).arg(&c).arg(&windows).arg(&q).arg(&limit);
        if counting {
            launch.arg(self.counting.counts.raw_mut());
        } else {
            launch.arg(&null);
        }
        launch.arg(self.digits.raw_mut()).arg(self.bad_indices.raw_mut());
        // SAFETY: msm_count: one thread per scalar of the chunk (len of them in the view, and in the index view
        // if any); counts null (radix sort) or holding q · 2^(c−1) zeroed counters, bad_indices one; digits
        // holds windows · chunk >= windows · len words; c in 1..=24, windows = ⌈256/c⌉, 1 <= q <= windows (plan
        // invariants).
        launched("msm_count", unsafe { launch.launch(launch_config_1d(len, SCALAR_BLOCK)) })?;
        drop(launch);

        let point_args = PointArgs { index_view: index_view.as_ref(), len: len32, stride, first: first32, limit };
        if counting { self.enqueue_counting_sort(&point_args) } else { self.enqueue_radix_sort(&point_args) }
    }

    /// Queues accumulate, fold and fixup for one sorted chunk. `first_chunk`: the fixup stores the buckets
    /// instead of adding to them (they are not zeroed).
    fn enqueue_buckets(&mut self, slot: usize, bases: &Bases<'_, C>, len: usize, first_chunk: bool) -> Result<()> {
        let stream = self.gpu.stream().clone();
        let plan = self.plan;
        let q = plan.virtual_windows;
        let buckets = plan.buckets() as u32;
        let per_window = plan.per_window() as u32;
        let base_view = match bases {
            Bases::Device(b) => b.table.raw_range(0..b.table.len())?,
            Bases::Host(_) => self.staged_bases[slot].raw_range(0..len)?,
        };
        let block = point_block::<C>();
        let segs = plan.per_window().div_ceil(plan.seg as usize);
        let (seg, slots) = (plan.seg, plan.slots() as u32);
        let blocks = (plan.accumulate_threads::<C>() / block as usize) as u32;
        if plan.affine_rounds == 0 {
            let cfg = LaunchConfig { grid_dim: (blocks, q, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 };
            let mut launch = stream.launch_builder(&self.kernels.accumulate);
            launch.arg(&base_view).arg(self.sorted.raw()).arg(&per_window).arg(self.offsets.raw()).arg(&buckets);
            launch.arg(&seg).arg(&slots).arg(self.partials.raw_mut());
            // SAFETY: msm_{C}_accumulate: grid covers ⌈per_window / seg⌉ segments per virtual window; offsets
            // and sorted come from this chunk's scan and scatter; every entry names a point of the base view (see
            // the scatter); partials holds q · slots points, slots = buckets + ⌈per_window / seg⌉.
            launched("msm_accumulate", unsafe { launch.launch(cfg) })?;
        }
        let mut first_window = 0;
        while plan.affine_rounds > 0 && first_window < q {
            let group = plan.affine_windows.min(q - first_window);
            let cfg = LaunchConfig { grid_dim: (blocks, group, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 };
            let mut launch = stream.launch_builder(&self.kernels.accumulate_affine);
            launch.arg(&base_view).arg(self.sorted.raw()).arg(&per_window).arg(self.offsets.raw()).arg(&buckets);
            launch.arg(&seg).arg(&slots).arg(self.partials.raw_mut()).arg(&plan.affine_rounds).arg(&first_window);
            launch.arg(self.affine_scratch.raw_mut());
            // SAFETY: msm_{C}_accumulate_affine: as the XYZZ launch above, for virtual windows first_window ..
            // first_window + group <= q; affine_scratch holds affine_windows · blocks · block · seg · 5/4 >=
            // (threads of this launch) · seg · 5/4 points; launches on one stream never share it.
            launched("msm_accumulate_affine", unsafe { launch.launch(cfg) })?;
            first_window += group;
        }

        // Buckets spanning more than FOLD_RUNS segments get their runs summed in groups first.
        let groups = segs.div_ceil(FOLD_RUNS as usize);
        if groups > 1 {
            let cfg = LaunchConfig {
                grid_dim: (groups.div_ceil(block as usize) as u32, q, 1),
                block_dim: (block, 1, 1),
                shared_mem_bytes: 0,
            };
            let mut launch = stream.launch_builder(&self.kernels.fold);
            launch.arg(self.offsets.raw()).arg(&buckets).arg(&seg).arg(self.partials.raw_mut()).arg(&slots);
            // SAFETY: msm_{C}_fold: after this chunk's accumulate, same offsets, seg and slots; the grid covers
            // every group of FOLD_RUNS segments of each virtual window; groups own disjoint slots.
            launched("msm_fold", unsafe { launch.launch(cfg) })?;
        }

        let cfg = LaunchConfig {
            grid_dim: ((buckets as usize).div_ceil(block as usize) as u32, q, 1),
            block_dim: (block, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut launch = stream.launch_builder(&self.kernels.fixup);
        launch.arg(self.offsets.raw()).arg(&buckets).arg(&seg).arg(self.partials.raw()).arg(&slots);
        let first_flag = u32::from(first_chunk);
        launch.arg(self.buckets.raw_mut()).arg(&first_flag);
        // SAFETY: msm_{C}_fixup: one thread per bucket of each virtual window; offsets/partials as written by
        // the accumulate launch above (same seg and slots); buckets holds q · buckets XYZZ points, all written
        // by the first chunk's fixups (first_flag = 1) before later chunks add to them.
        launched("msm_fixup", unsafe { launch.launch(cfg) })?;
        drop(launch);
        if segs > 1 {
            let cfg = LaunchConfig {
                grid_dim: ((segs - 1).div_ceil(block as usize) as u32, q, 1),
                block_dim: (block, 1, 1),
                shared_mem_bytes: 0,
            };
            let mut launch = stream.launch_builder(&self.kernels.fixup_spanning);
            launch.arg(self.offsets.raw()).arg(&buckets).arg(&seg).arg(self.partials.raw()).arg(&slots);
            launch.arg(self.buckets.raw_mut()).arg(&first_flag);
            // SAFETY: msm_{C}_fixup_spanning: the fixup's arguments, a thread per segment boundary of each
            // virtual window; it writes only buckets spanning segments, which the fixup left alone.
            launched("msm_fixup_spanning", unsafe { launch.launch(cfg) })?;
        }
        Ok(())
    }

    /// The counting sort of the chunk's digits into `sorted` and `offsets`: scan of the count kernel's
    /// counters, then the scatter in the plan's passes over bucket ranges.
    fn enqueue_counting_sort(&mut self, at: &PointArgs<'_>) -> Result<()> {
        let stream = self.gpu.stream().clone();
        let plan = self.plan;
        let (c, windows, q) = (plan.window_bits, plan.windows, plan.virtual_windows);
        let buckets = plan.buckets() as u32;
        let per_window = plan.per_window() as u32;
        let null = 0u64;
        let parts = plan.scan_parts() as u32;
        let cfg = LaunchConfig { grid_dim: (parts, q, 1), block_dim: (SCAN_BLOCK, 1, 1), shared_mem_bytes: SCAN_BLOCK * 4 };
        let mut launch = stream.launch_builder(&self.kernels.scan_sums);
        let scratch = &mut self.counting;
        launch.arg(scratch.counts.raw()).arg(&buckets).arg(scratch.scan_sums.raw_mut());
        // SAFETY: msm_scan_sums: grid (⌈buckets / SCAN_SPAN⌉, q) of SCAN_BLOCK threads with SCAN_BLOCK u32 of
        // shared memory; counts holds q · buckets entries, scan_sums q · parts.
        launched("msm_scan_sums", unsafe { launch.launch(cfg) })?;
        let mut launch = stream.launch_builder(&self.kernels.scan);
        launch.arg(scratch.counts.raw()).arg(&buckets).arg(scratch.scan_sums.raw()).arg(self.offsets.raw_mut()).arg(scratch.cursors.raw_mut());
        // SAFETY: msm_scan: the same grid (parts <= SCAN_BLOCK since buckets <= 2^23); counts and cursors hold
        // q · buckets entries, offsets q · (buckets + 1), scan_sums the part sums just written; totals <= len ·
        // copies < 2^32.
        launched("msm_scan", unsafe { launch.launch(cfg) })?;
        drop(launch);

        let cfg = LaunchConfig {
            grid_dim: ((at.len as usize).div_ceil(SCALAR_BLOCK as usize) as u32, windows, 1),
            block_dim: (SCALAR_BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        let range = buckets.div_ceil(plan.scatter_passes);
        for pass in 0..plan.scatter_passes {
            let (bucket_lo, bucket_hi) = (pass * range, ((pass + 1) * range).min(buckets));
            let mut launch = stream.launch_builder(&self.kernels.scatter);
            launch.arg(self.digits.raw());
            match at.index_view {
                Some(view) => launch.arg(view),
                None => launch.arg(&null),
            };
            launch.arg(&at.len).arg(&c).arg(&windows).arg(&q).arg(&at.stride).arg(&at.first).arg(&at.limit);
            launch.arg(self.offsets.raw()).arg(scratch.cursors.raw_mut()).arg(self.sorted.raw_mut());
            launch.arg(&per_window).arg(&bucket_lo).arg(&bucket_hi);
            // SAFETY: msm_scatter: grid (⌈len / block⌉, windows); the count's digits and ranks for the same
            // chunk and layout and the scan's offsets and cursors of its counts, so every slot stays inside its
            // bucket's range of the window (<= per_window entries);
            // the passes' bucket ranges are disjoint, so each entry is written once; sorted holds q · per_window
            // entries; the index view (if any) holds len indices; base indices are below limit (n rows of the
            // table, or len staged bases; larger ones were counted by the count and become 0), so point indices
            // (w / q)·stride + index are < copies · n < 2^31 (check_table).
            launched("msm_scatter", unsafe { launch.launch(cfg) })?;
        }
        Ok(())
    }

    /// The radix sort of the chunk's digits into `sorted` and `offsets` (`zkgpu_kernels::msm_sort`), group by
    /// group of virtual windows: per pass upsweep, spine (the scan kernels over the histogram) and downsweep,
    /// then the offsets from the sorted keys.
    fn enqueue_radix_sort(&mut self, at: &PointArgs<'_>) -> Result<()> {
        let stream = self.gpu.stream().clone();
        let plan = self.plan;
        let (c, windows, q) = (plan.window_bits, plan.windows, plan.virtual_windows);
        let buckets = plan.buckets();
        let per_window = plan.per_window();
        let pw32 = per_window as u32;
        let null = 0u64;
        let (bits, passes) = (radix_bits(c), radix_passes(c));
        let (blocks, tiles_per_block) = sort_grid(windows.div_ceil(q) * at.len);
        let spine_len = (1u32 << bits) * blocks;
        let parts = spine_len.div_ceil(SCAN_SPAN);
        let up_shared = upsweep_shared_bytes(bits) as u32;
        let down_shared = downsweep_shared_bytes(bits) as u32;
        let scratch = &mut self.radix;
        let mut v0 = 0u32;
        while v0 < q {
            let group = plan.sort_group.min(q - v0);
            let (lo, hi) = (v0 as usize * per_window, (v0 + group) as usize * per_window);
            let grid = |x: u32, shared: u32, block: u32| LaunchConfig {
                grid_dim: (x, group, 1),
                block_dim: (block, 1, 1),
                shared_mem_bytes: shared,
            };
            for pass in 0..passes {
                // Keys alternate between the two key buffers; values end in `sorted` after the last pass.
                let vals_to_sorted = (passes - 1 - pass) % 2 == 0;
                let [keys0, keys1] = &mut scratch.keys;
                let (keys_in, keys_out) = if pass % 2 == 0 { (&*keys1, keys0) } else { (&*keys0, keys1) };
                let mut launch = stream.launch_builder(&self.kernels.sort_upsweep);
                launch.arg(self.digits.raw()).arg(&at.len).arg(&c).arg(&windows).arg(&q).arg(&v0).arg(&pw32);
                launch.arg(&tiles_per_block).arg(&pass).arg(&bits);
                if pass == 0 {
                    launch.arg(&null);
                } else {
                    launch.arg(keys_in.raw());
                }
                launch.arg(scratch.counts.raw()).arg(scratch.hist.raw_mut());
                // SAFETY: msm_sort_upsweep: grid (blocks, group), v0 + group <= q, SORT_BLOCK threads with
                // 2^bits counters of shared memory; digits from this chunk's count kernel (len >= 1); later
                // passes read the previous pass's keys (group · per_window words) and the first pass's counts;
                // hist holds group · 2^bits · SORT_GRID >= group · spine_len words.
                launched("msm_sort_upsweep", unsafe { launch.launch(grid(blocks, up_shared, SORT_BLOCK)) })?;
                let scan_cfg = grid(parts, SCAN_BLOCK * 4, SCAN_BLOCK);
                let mut launch = stream.launch_builder(&self.kernels.scan_sums);
                launch.arg(scratch.hist.raw()).arg(&spine_len).arg(scratch.sums.raw_mut());
                // SAFETY: msm_scan_sums over group windows of spine_len counters (parts <= SCAN_BLOCK);
                // sums holds group · parts words.
                launched("msm_scan_sums", unsafe { launch.launch(scan_cfg) })?;
                let mut launch = stream.launch_builder(&self.kernels.scan);
                launch.arg(scratch.hist.raw()).arg(&spine_len).arg(scratch.sums.raw()).arg(scratch.spine.raw_mut());
                launch.arg(scratch.cursors.raw_mut());
                // SAFETY: msm_scan: same grid; spine holds group · (spine_len + 1) words, cursors group ·
                // spine_len; totals <= per_window < 2^32.
                launched("msm_scan", unsafe { launch.launch(scan_cfg) })?;
                let mut launch = stream.launch_builder(&self.kernels.sort_downsweep);
                launch.arg(self.digits.raw());
                match at.index_view {
                    Some(view) => launch.arg(view),
                    None => launch.arg(&null),
                };
                launch.arg(&at.len).arg(&c).arg(&windows).arg(&q).arg(&at.stride).arg(&at.first).arg(&at.limit);
                launch.arg(&v0).arg(&pw32).arg(&tiles_per_block).arg(&pass).arg(&bits);
                let sorted = &mut self.sorted;
                let vals = &mut scratch.vals;
                let (vals_in, mut vals_out) = if vals_to_sorted {
                    (vals.raw_range(0..vals.len())?, sorted.raw_range_mut(lo..hi)?)
                } else {
                    (sorted.raw_range(lo..hi)?, vals.raw_range_mut(0..vals.len())?)
                };
                if pass == 0 {
                    launch.arg(&null).arg(&null);
                } else {
                    launch.arg(keys_in.raw()).arg(&vals_in);
                }
                launch.arg(scratch.counts.raw_mut()).arg(scratch.spine.raw());
                launch.arg(keys_out.raw_mut()).arg(&mut vals_out);
                // SAFETY: msm_sort_downsweep: the upsweep's grid and arguments, downsweep_shared_bytes(bits) of
                // shared memory (allowed at Msm::new for RADIX_BITS >= bits); spine is the scan of that
                // upsweep's histogram; inputs (the digits and index view, or the previous pass's keys and
                // values) never alias the outputs (the other key buffer, and `sorted` or `vals` by the rule
                // above); outputs hold group · per_window words; point indices < 2^31 as for the scatter.
                launched("msm_sort_downsweep", unsafe { launch.launch(grid(blocks, down_shared, SORT_BLOCK)) })?;
            }
            let final_keys = &scratch.keys[((passes - 1) % 2) as usize];
            let b32 = buckets as u32;
            let mut offsets = self.offsets.raw_range_mut(v0 as usize * (buckets + 1)..(v0 + group) as usize * (buckets + 1))?;
            let mut launch = stream.launch_builder(&self.kernels.sort_offsets);
            launch.arg(final_keys.raw()).arg(scratch.counts.raw()).arg(&pw32).arg(&b32).arg(&mut offsets);
            // SAFETY: msm_sort_offsets: grid (⌈(buckets + 1) / block⌉, group); the last pass's keys (ascending
            // in each window's first counts[y] words); offsets is the group's group · (buckets + 1) words.
            let x = (buckets + 1).div_ceil(SORT_BLOCK as usize) as u32;
            launched("msm_sort_offsets", unsafe { launch.launch(grid(x, 0, SORT_BLOCK)) })?;
            v0 += group;
        }
        Ok(())
    }

    /// Queues the bucket reduction, the per-window sums and the window combination into `out[table]`.
    fn enqueue_finish(&mut self, table: usize) -> Result<()> {
        let stream = self.gpu.stream().clone();
        let plan = self.plan;
        let (c, q) = (plan.window_bits, plan.virtual_windows);
        let buckets = plan.buckets() as u32;
        let (run, shares) = (plan.reduce_run, plan.shares());
        let block = point_block::<C>();
        let cfg = LaunchConfig {
            grid_dim: (shares.div_ceil(block as usize) as u32, q, 1),
            block_dim: (block, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut launch = stream.launch_builder(&self.kernels.reduce);
        launch.arg(self.buckets.raw()).arg(&buckets).arg(&run).arg(self.shares.raw_mut());
        // SAFETY: msm_{C}_reduce: one thread per share (⌈buckets / run⌉ per virtual window); buckets holds
        // q · buckets points, shares q · ⌈buckets / run⌉.
        launched("msm_reduce", unsafe { launch.launch(cfg) })?;
        drop(launch);
        self.sums.enqueue(&self.shares, shares as u32, &mut self.window_sums)?;
        let mut launch = stream.launch_builder(&self.kernels.combine);
        let mut out = self.out.raw_range_mut(table..table + 1)?;
        launch.arg(self.window_sums.raw()).arg(&q).arg(&c).arg(&mut out);
        // SAFETY: msm_{C}_combine: one thread; window_sums holds q Jacobian points, the out view one.
        let one = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1, 1, 1), shared_mem_bytes: 0 };
        launched("msm_combine", unsafe { launch.launch(one) })?;
        Ok(())
    }
}

/// `Σ scalars[i]·bases[i]` with everything in host memory: a one-shot plan fitted to the device's free memory
/// ([`MsmPlan::within`]) and engine (use [`Msm`] to reuse scratch across calls). `Err(LengthMismatch)` when
/// the lengths differ, `Err(OutOfMemory)` when no plan fits.
pub fn msm<C: Curve>(gpu: &Gpu, bases: &[C::Affine], scalars: &[Scalar]) -> Result<C::Projective> {
    if bases.len() != scalars.len() {
        return Err(Error::LengthMismatch { what: "msm bases", expected: scalars.len(), actual: bases.len() });
    }
    let plan = MsmPlan::within::<C>(scalars.len(), &MsmConfig::default(), true, &DeviceLimits::of(gpu)?)?;
    Msm::<C>::new(gpu, plan)?.run(Bases::Host(bases), Scalars::Host(scalars))
}

/// `Σ scalars[i]·bases[i]` with device-resident bases and scalars (one-shot plan fitted to the memory left
/// beside them, and engine).
pub fn msm_device<C: Curve>(gpu: &Gpu, bases: &MsmBases<C>, scalars: &DeviceBuffer<Scalar>) -> Result<C::Projective> {
    let plan = MsmPlan::within::<C>(scalars.len(), &MsmConfig::default(), false, &DeviceLimits::of(gpu)?)?;
    Msm::<C>::new(gpu, plan)?.run(Bases::Device(bases), Scalars::Device(scalars))
}
