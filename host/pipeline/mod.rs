//! The Groth16 partition job: everything a prover's GPU does for one partition, queued as one job, with its
//! inputs streamed from page-locked memory on a second stream and every phase timed.
//!
//! # What a job computes
//! Given the synthesis vectors `a`, `b`, `c` (evaluations on the domain of size `n = 2^k`) and, per
//! *assignment* (a scalar vector that several queries share: e.g. the aux assignment used by the A, B_G1 and L
//! queries), its split into the points with scalar 1 (`ones`, a bitmap) and the rest (`tail`: the scalars
//! that are neither 0 nor 1, with their positions `tail_index`):
//! - `h = (A·B − C) / Z` on the coset (the steps of [`crate::Ntt::groth16_h`]: for A and B an inverse NTT and
//!   a coset NTT, [`crate::Ntt::groth16_h_prepare`]; for C an inverse NTT, [`crate::Ntt::groth16_h_prepare_c`];
//!   then the pointwise step, 1 coset inverse NTT and C's subtraction, [`crate::Ntt::groth16_h_combine`]) and
//!   `Σ hᵢ·Hᵢ` over the H query (device-resident bases);
//! - for every query of every assignment: the batch addition of the bases selected by `ones` plus the MSM of
//!   `tail` over the bases at `tail_index` (a "tail MSM", sparse: [`Scalars::DeviceIndexed`]), i.e. `Σ sᵢ·Pᵢ`
//!   over the whole assignment. G1 and G2 queries (B_G2) alike.
//!
//! [`split_assignment`] makes `ones`, `tail` and `tail_index` from an assignment (a prover's synthesis can
//! write them directly). The CPU reference is [`crate::pipeline::cpu`].
//!
//! # Streams, slots and the rule for jobs in flight
//! A [`PartitionEngine`] owns one GPU's working set, allocated once: the SRS ([`PartitionSrs`]), an
//! [`Ntt`], the H [`Msm`], per assignment and curve one [`BatchAdder`] and one tail [`Msm`] shared by its
//! queries (one compaction of `ones` and one sort of the tail serve them all), and `slots` (default 2) sets of
//! device input buffers (a, b, c, tails, bitmaps). Job `k` uses slot `k mod slots`.
//! - [`PartitionEngine::start`] queues the uploads on the **copy stream** (one copy per vector, in order a,
//!   b, c, tails, bitmaps) and the NTT chain on the compute stream: the transforms of `a` wait for the upload
//!   of `a` only, those of `b` for `b`, those of `c` for `c` (explicit event waits), so the NTTs of a overlap
//!   the upload of b, and so on; the final step waits for all three. It returns when the uploads are done:
//!   the caller may then refill its pinned buffers. It does not wait for compute.
//! - The MSM stage (H MSM, batch additions, tail MSMs) of job `k` is queued as soon as the engines are free,
//!   i.e. once job `k − 1`'s results are collected ([`Msm`] holds one queued MSM at a time), which happens in
//!   whichever of `start`/`finish` comes first. [`PartitionEngine::finish`] waits for the job's results.
//! - The rule: the uploads of job `k + slots` overwrite slot `k mod slots`, so before queueing them `start`
//!   makes sure job `k`'s MSM stage is queued (collecting earlier jobs if need be, which blocks on the GPU).
//!   Once everything that reads a slot is queued, the streams order the rest: cudarc's per-buffer events make
//!   the copy stream wait for the kernels that read the slot, and the kernels wait for the copies.
//! - With 2 slots, job `k + 1`'s uploads (copy stream) overlap job `k`'s compute (compute stream), so in
//!   steady state the transfers are hidden: wall time per job ≈ max(transfer, compute). With
//!   [`StreamMode::One`] the uploads go on the compute stream and serialize with compute (the benchmark's
//!   `1stream` baseline). Any number of jobs may be in flight; more than `slots` makes `start` block.
//!
//! Uploads are not chunked: a DMA from pinned memory needs no staging, and the first NTT pass needs the whole
//! vector, so overlap is per vector (a 2^27 vector is 4 GiB, ~78 ms at PCIe Gen5). A pageable source is staged
//! by the driver through its bounce buffer, at a fraction of the rate (the `pageable` bench variant).
//!
//! # Timing
//! Every phase (each upload, each part of the NTT chain, each MSM and batch addition, the result downloads) is
//! bracketed by timing events ([`crate::profile`]) and resolved in `finish` into a [`PhaseReport`]: wall
//! time, kernel time (compute-stream busy time, overlaps counted once), GPU busy fraction and achieved H2D
//! GB/s. Phases are emitted as `tracing` events (target `zkgpu.profile`); host-side waits are
//! `zkgpu.pipeline.*` spans.
//! Phase names: `h2d.a`, `h2d.b`, `h2d.c`, `h2d.tail{i}`, `h2d.tail_index{i}`, `h2d.ones{i}`; `ntt.h.a`, `ntt.h.b` (one
//! vector's inverse + coset NTT each), `ntt.h.c` (c's inverse NTT) and `ntt.h.combine` (pointwise, coset
//! inverse NTT, c's subtraction); `msm.h`,
//! `batch_add.{i}.g1`, `msm.tail.{i}.g1` (all G1 queries of assignment `i`; and `g2`); `d2h.h`, `d2h.results`.
//! Before each phase the compute stream waits explicitly for the copies it needs first (`a` before `ntt.h.a`,
//! `b` before `ntt.h.b`, `c` before `ntt.h.c`, every input before the MSM stage), so a phase's start event is
//! not reached while the stream still waits for a copy: the wait shows as a gap between phases, not as busy
//! time.
//!
//! # Errors
//! Shapes are checked before anything is queued ([`PartitionShape::check`]): lengths of a, b, c (the engine's
//! `n`; not a power of two: [`Error::NttSize`]), assignments and bitmaps ([`Error::LengthMismatch`],
//! [`Error::BitmapTooShort`]). On such an error nothing is queued and the caller's buffers are untouched. A job
//! whose GPU work fails later is reported by its own `finish` (the error is kept with the job), and the other
//! jobs go on; so is a tail position past the assignment ([`Error::IndexOutOfRange`], found on the GPU: the
//! host never reads the caller's write-combined buffers). A pinned pool that is full answers [`Error::PinnedPoolExhausted`] at `take`, before any job.
//!
//! # Multi-GPU
//! [`ProverPool`] holds one engine per GPU and gives each new job to the engine with the fewest jobs in flight
//! (ties in turn). Pinned buffers belong to one GPU's context ([`crate::PinnedPool`] is per GPU): take a job's
//! buffers from the pool of the engine [`ProverPool::pick`] names. [`SplitMsm`] / [`msm_multi_gpu`] split one
//! large MSM into contiguous ranges of points, one per GPU (bases resident per GPU), and add the partial sums
//! on the host.
//!
//! # Expected numbers on an H200 (written before the first run, kept for comparison)
//! - A 2^27 job moved a, b, c and one full-length tail (4 × 4 GiB ≈ 17.2 GB): ~0.32 s of copies. Since the
//!   tails are compacted (3cec81d) a job moves a, b, c plus ~10% of the tail with its positions: ~13.4 GB.
//! - Compute at 2^27: the NTT chain (7 transforms + pointwise) ~0.33 s (7 × ~45 ms), H MSM ~1.1 s (the MSM
//!   bench: 1126 ms), three G1 batch additions over 2^27 points with ~45% selected ~3 × 35 ms, three tail
//!   MSMs over ~10% dense scalars ~3 × 0.15 s: ≈ 2.0 s per partition, so compute bound; two streams should
//!   give wall ≈ compute + the first job's a/b/c upload, busy ≥ 95% in steady state, one stream ≈ compute +
//!   transfers (~15% more). At 2^24: ~0.27 s compute (H MSM 0.15 s) against ~40 ms of copies.
//!   The issue's 1.3 s per partition is not reachable on one GPU with today's H MSM (1.0 s alone).
//! - Device memory of the bench's 2^27 shape (H query + A, B_G1, L of 2^27 points each): bases 12.9 GB (H)
//!   plus 3 × 12.9 GB (A, B_G1, L; batch additions and tail MSMs share them through `MsmBases::points`),
//!   2 slots of inputs, H MSM scratch ~6.4 GB (c = 21), tail MSM scratch, NTT twiddles 4.3 GB. Measured peak:
//!   98.2 GB of the H200's ~140 GiB.
//!
//! # Measured (2 × H200 host, driver 580.159.04)
//! Command: `zkgpu-bench pipeline_partition --sizes 24 --reps 3` (`cargo xtask bench pipeline --sizes 24`) and
//! `zkgpu-bench pipeline_partition --variants pinned-2stream,pinned-2stream-2gpu --sizes 27 --reps 1`. Each
//! run is 4 jobs, two in flight; medians. 2^24 one-GPU variants ran on a one-H200 host.
//!
//! | n | variant | wall / 4 jobs | per job | GPU busy | H2D GB/s | wall / max(compute, copies) |
//! |---|---|---:|---:|---:|---:|---:|
//! | 2^24 | pinned-2stream | 1016 ms | 254 ms | 98.8% | 55.3 | 1.01 |
//! | 2^24 | pinned-1stream | 1122 ms | 281 ms | 89.2% | 55.5 | 1.12 |
//! | 2^24 | pageable-2stream | 1218 ms | 304 ms | 77.6% | 6.9 | 1.29 |
//! | 2^24 | pinned-2stream-2gpu | 542 ms | 136 ms | 93.2% | 55.4 | 1.07 |
//! | 2^27 | pinned-2stream | 7002 ms | 1750 ms | 98.9% | 55.4 | 1.01 |
//! | 2^27 | pinned-2stream-2gpu | 3784 ms | 946 ms | 91.5% | 55.4 | 1.09 |
//!
//! Per 2^27 job: H MSM 1004 ms, the NTT chain 299 ms, tail MSMs with batch additions 427 ms; copies 242 ms.
//! (Table at 3cec81d.) With the window-by-window scatter (bf30291, one H200, same command): pinned-2stream
//! 6695 ms / 4 jobs = 1674 ms per job (H MSM 942 ms, tails 412 ms, busy 98.8%, 55.5 GB/s, ratio 1.01),
//! pageable-2stream 9188 ms = 2299 ms per job (busy 72%, 7.7 GB/s: the copies, 6.9 s, now exceed compute).
//! Peak device memory 101.9 GB. Two GPUs (5329676, 2 × H200 host, `--variants pinned-2stream-2gpu`): 3628 ms
//! / 4 jobs = 907 ms per partition, busy 91.2%, ratio 1.10. With one reduction for every XYZZ `Y3` (f111913,
//! one H200): pinned-2stream 6411 ms / 4 jobs = 1603 ms per job (H MSM 893 ms, NTT chain 299 ms, tails
//! 391 ms, busy 98.8%, 55.4 GB/s, ratio 1.01).
//! With the NTT's conflict-free tiles and the MSM's device chunks of 2^25 (eb6e183, one H200, `--variants
//! pinned-2stream --sizes 27 --reps 1`): 6095 ms / 4 jobs = **1524 ms per job** (H MSM 837 ms, NTT chain 280 ms,
//! tails 387 ms, busy 98.7%, 55.4 GB/s, ratio 1.01, peak 109.6 GB). With the MSM's scatter in passes over
//! bucket ranges (d972fc5, same command): 5999.7 ms / 4 jobs = **1500 ms per job** (H MSM 812.7 ms, NTT chain
//! 280.0 ms, tails 387.6 ms, busy 98.7%, 55.2 GB/s, ratio 1.01, peak 109.6 GB). The H term in six NTT sweeps
//! and the rank scatter (bda34cd): 1435 ms per job (NTT chain 244.6 ms, H MSM 786 ms, tails 384 ms). One
//! compaction and one tail sort per assignment for its three G1 queries, and the affine batch additions
//! (2026-12-02, same command): **1396 ms per job** (tails 344 ms, busy 98.5%, 54.3 GB/s, ratio 1.02); with
//! XYZZ additions (`pinned-2stream-xyzz`) 1410 ms (tails 360 ms), so the shared sort saved 24 ms and the
//! affine additions 15 ms (predicted ~21 and ~14). 2^24 (`--reps 3`): 223.6 ms per job (was 228), XYZZ
//! additions 224.8. A rerun with the adders in `device_bytes` (earlier peaks left them out; XYZZ adders are
//! a few MB): 1399 ms per job, peak 112.6 GB (113.3 before: two tail MSM engines fewer, one ~10 GB affine
//! adder more). With the MSM's narrow top windows (48ece5c, same command): **1380 ms per job** (H MSM 784 ms,
//! tails 329 ms, NTT chain 244 ms, busy 98.4%, 53.4 GB/s, ratio 1.02, peak 112.6 GB); 2^24 218.2 ms per job.
//! - The issue's transfer goals hold at 2^24 and 2^27: pinned H2D ≥ 52 GB/s, two-stream wall ≤ 1.1 × the
//!   larger of compute and copies, busy ≥ 90%. Two GPUs run 1.85× (2^27) and 1.87× (2^24) faster than one.
//! - 1.3 s per partition: met as throughput on two GPUs (907 ms per partition at 5329676), not on one
//!   (1380 ms; the H MSM alone is 0.78 s). At the accumulation's measured 2.45 G mixed additions/s
//!   the job's additions (H MSM 2^27 × 13 windows, three tail MSMs of ~1.3·10^7 points × 14, three batch
//!   additions of ~6·10^7 points) and the NTT chain's 280 ms already come to ~1.3 s, before any sort, fixup
//!   or reduction: one GPU needs cheaper additions (affine ones), not a better schedule.
//!
//! History: at c99f61e the tails were dense MSMs over all 2^27 scalars (zeros skipped, in 2^22-point
//! chunks); they took 1340 ms per job and a job 2667 ms (GPU busy 99.3%; pageable 3128 ms). The accumulation
//! was sized for dense chunks, so ~13 k threads ran chains of up to 512 additions. Compacting the tails
//! (only the non-0/1 scalars and their positions are uploaded; [`Scalars::DeviceIndexed`]) made them dense
//! MSMs of ~0.1·n points in one chunk: 1340 → 427 ms (predicted ~0.36 s of additions plus the batch
//! additions). At 2^24 the job went from 355 to 254 ms.
//!
//! # Example
//! ```no_run
//! # fn main() -> zkgpu::Result<()> {
//! use blstrs::{G1Affine, Scalar};
//! use zkgpu::pipeline::{AssignmentInput, PartitionConfig, PartitionEngine, PartitionJob, PartitionSrs, split_assignment};
//! use zkgpu::{Gpu, PinnedMode, PinnedPool};
//! # let (h_query, a_query, l_query): (Vec<G1Affine>, Vec<G1Affine>, Vec<G1Affine>) = (vec![], vec![], vec![]);
//! # let aux: Vec<Scalar> = vec![];
//! let gpu = Gpu::new(0)?;
//! let mut srs = PartitionSrs::upload(&gpu, &h_query)?; // n = 2^k bases
//! srs.add_assignment_host(&gpu, &[&a_query, &l_query], &[])?; // queries over the aux assignment
//! let mut engine = PartitionEngine::new(&gpu, srs, PartitionConfig::default())?;
//! let n = engine.shape().n;
//! // Pin the working set once (capped), reuse it for every partition.
//! let pool = PinnedPool::new(&gpu, PinnedMode::WriteCombined, Some(64 << 30));
//! let (a, b, c) = (pool.take::<Scalar>(n)?, pool.take::<Scalar>(n)?, pool.take::<Scalar>(n)?);
//! let mut ones = pool.take::<u32>(aux.len().div_ceil(32))?;
//! let (mut tail, mut tail_index) = (pool.take::<Scalar>(aux.len())?, pool.take::<u32>(aux.len())?);
//! // ... synthesis writes a, b, c (through DerefMut) and the assignment here ...
//! let k = split_assignment(&aux, &mut ones, &mut tail, &mut tail_index)?;
//! let assignments = vec![AssignmentInput { tail: &tail[..k], tail_index: &tail_index[..k], ones: &ones }];
//! let ticket = engine.start(PartitionJob { a: &a, b: &b, c: &c, assignments, h_out: None })?;
//! // The buffers are free again: synthesize and start the next partition before finishing this one.
//! let out = engine.finish(ticket)?;
//! println!("{:?}, GPU busy {:.0}%", out.results.h, 100.0 * out.report.gpu_busy);
//! # Ok(())
//! # }
//! ```
/// The CPU reference (tests compare the GPU against it).
pub mod cpu;

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use cudarc::driver::{CudaEvent, CudaStream};
use ff::Field;

use crate::batch_add::{BatchAdder, Method};
use crate::curve::{Curve, G1, G2};
use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::memory::{DeviceBuffer, DeviceSafe, as_bytes};
use crate::msm::{Accumulation, Bases, Msm, MsmBases, MsmConfig, MsmPlan, Scalars, choose_window_bits};
use crate::ntt::{Ntt, checked_log_n};
use crate::pinned::PinnedBuffer;
use crate::profile::{Epoch, PhaseKind, PhaseRecorder, PhaseReport};

// ---------------------------------------------------------------------------------------------------------
// Shapes and inputs

/// Which streams carry the uploads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum StreamMode {
    /// Uploads on the copy stream, overlapping compute (the default).
    #[default]
    Two,
    /// Uploads on the compute stream, serialized with compute (a baseline for measuring the overlap).
    One,
}

/// Points per chunk of the H MSM unless configured. An engine holds the whole partition's working set anyway
/// (~100 GB at 2^27), so it can afford larger chunks than a standalone MSM's default (2^25, sized for the
/// 16 GB bound at 2^26): on the H200 a 2^27 MSM took 787 ms in chunks of 2^26 against 805 ms in chunks of 2^25
/// and 835 ms in one (the bucket work per chunk against the sort's larger windows).
pub const H_MSM_CHUNK: usize = 1 << 26;

/// Engine choices; `Default` is the production setting.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PartitionConfig {
    /// Where the uploads run.
    pub streams: StreamMode,
    /// Device input slots (at least 1): 2 lets one job's uploads overlap the previous job's compute.
    pub slots: usize,
    /// The H MSM's plan choices; without an explicit chunk, XYZZ accumulation runs chunks of [`H_MSM_CHUNK`]
    /// points.
    pub h_msm: MsmConfig,
    /// The tail MSMs' plan choices; without explicit window bits the window is chosen for
    /// `tail_fraction · len` non-zero scalars.
    pub tail_msm: MsmConfig,
    /// Expected fraction of an assignment's scalars that are neither 0 nor 1 (sizes the tail MSMs' window;
    /// any fraction up to 1 works).
    pub tail_fraction: f64,
    /// The batch additions' method ([`Method::Affine`] holds ~10 GB of level scratch per curve group at
    /// 2^27, shared by the group's queries).
    pub batch_add: Method,
}

impl Default for PartitionConfig {
    fn default() -> Self {
        PartitionConfig {
            streams: StreamMode::Two,
            slots: 2,
            h_msm: MsmConfig::default(),
            tail_msm: MsmConfig::default(),
            tail_fraction: 0.1,
            batch_add: Method::Affine,
        }
    }
}

/// The sizes a job must have: `n` for a, b, c (a power of two) and one length per assignment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartitionShape {
    pub n: usize,
    pub assignments: Vec<usize>,
}

/// One assignment of a job, split as [`split_assignment`] does: the points with scalar 1 (a bitmap) and the
/// other non-zero scalars with their positions (the tail MSM's sparse input).
#[derive(Clone, Copy, Debug)]
pub struct AssignmentInput<'a> {
    /// The scalars that are neither 0 nor 1 (at most the assignment's length).
    pub tail: &'a [Scalar],
    /// `tail_index[j]`: the position of `tail[j]` in the assignment, below its length (a position past it
    /// fails the job at `finish` with [`Error::IndexOutOfRange`]). As many as `tail`.
    pub tail_index: &'a [u32],
    /// Bit `i` of word `i / 32` set where scalar `i` is 1 (batch addition); at least `⌈len / 32⌉` words
    /// (only those are read).
    pub ones: &'a [u32],
}

/// One partition's inputs. Host slices: pass [`PinnedBuffer`]s (they deref to slices) for DMA at line rate;
/// ordinary memory works and is staged by the driver.
#[derive(Debug)]
pub struct PartitionJob<'a> {
    pub a: &'a [Scalar],
    pub b: &'a [Scalar],
    pub c: &'a [Scalar],
    /// One per assignment of the engine's SRS, in order.
    pub assignments: Vec<AssignmentInput<'a>>,
    /// Where to download `h`'s coefficients (natural order), if wanted: copied on the copy stream after the
    /// NTTs, overlapping the MSMs; the buffer's own `Deref` waits for the copy.
    pub h_out: Option<&'a mut PinnedBuffer<Scalar>>,
}

impl PartitionShape {
    /// Checks a job against the shape. Every error leaves everything as it was (nothing is queued yet).
    pub fn check(&self, job: &PartitionJob<'_>) -> Result<()> {
        for (what, v) in [("partition a", job.a), ("partition b", job.b), ("partition c", job.c)] {
            if !v.len().is_power_of_two() {
                return Err(Error::NttSize { n: v.len() });
            }
            if v.len() != self.n {
                return Err(Error::LengthMismatch { what, expected: self.n, actual: v.len() });
            }
        }
        if job.assignments.len() != self.assignments.len() {
            return Err(Error::LengthMismatch {
                what: "partition assignments",
                expected: self.assignments.len(),
                actual: job.assignments.len(),
            });
        }
        for (input, &len) in job.assignments.iter().zip(&self.assignments) {
            if input.tail.len() > len {
                return Err(Error::LengthMismatch { what: "partition assignment tail (at most its length)", expected: len, actual: input.tail.len() });
            }
            if input.tail_index.len() != input.tail.len() {
                return Err(Error::LengthMismatch { what: "partition assignment tail_index", expected: input.tail.len(), actual: input.tail_index.len() });
            }
            crate::batch_add::check_bitmap(input.ones.len(), len)?;
        }
        if let Some(h) = &job.h_out {
            if h.len() != self.n {
                return Err(Error::LengthMismatch { what: "partition h_out", expected: self.n, actual: h.len() });
            }
        }
        Ok(())
    }

    /// Most bytes a job uploads: a, b, c, full-length tails with their indices, and the bitmaps.
    pub fn upload_bytes(&self) -> usize {
        let scalar = size_of::<Scalar>();
        3 * self.n * scalar + self.assignments.iter().map(|&m| m * (scalar + 4) + m.div_ceil(32) * 4).sum::<usize>()
    }
}

/// Splits an assignment for a job: sets bit `i` of `ones` where `values[i] == 1`, and writes the values that
/// are neither 0 nor 1 to `tail` and their positions to `tail_index`, in order. Returns how many there are
/// (`k`: pass `&tail[..k]` and `&tail_index[..k]` to [`AssignmentInput`]). `ones` must have `⌈len / 32⌉` words
/// (all overwritten); `tail` and `tail_index` need room for `k` (the assignment's length always suffices); on
/// a length error nothing is written. Runs on all cores for large inputs; writes each output once without
/// reading it, so all three may be write-combined [`PinnedBuffer`]s.
pub fn split_assignment(values: &[Scalar], ones: &mut [u32], tail: &mut [Scalar], tail_index: &mut [u32]) -> Result<usize> {
    let n = values.len();
    if ones.len() != n.div_ceil(32) {
        return Err(Error::LengthMismatch { what: "split_assignment ones", expected: n.div_ceil(32), actual: ones.len() });
    }
    if n > u32::MAX as usize {
        return Err(Error::SizeOverflow(format!("an assignment of {n} values: positions are u32")));
    }
    let is_tail = |v: &Scalar| *v != Scalar::ZERO && *v != Scalar::ONE;
    // Chunks of whole bitmap words, one per thread: count each chunk's tail first, so every thread knows
    // where its part of the compacted tail starts.
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    let words_per = ones.len().div_ceil(threads).max(1024);
    let chunks: Vec<&[Scalar]> = values.chunks(words_per * 32).collect();
    let counts: Vec<usize> = if chunks.len() <= 1 {
        chunks.iter().map(|c| c.iter().filter(|v| is_tail(v)).count()).collect()
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = chunks.iter().map(|c| scope.spawn(move || c.iter().filter(|v| is_tail(v)).count())).collect();
            handles.into_iter().map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
        })
    };
    let k: usize = counts.iter().sum();
    for (what, room) in [("split_assignment tail", tail.len()), ("split_assignment tail_index", tail_index.len())] {
        if room < k {
            return Err(Error::LengthMismatch { what, expected: k, actual: room });
        }
    }
    // Each output is written once and never read, which write-combined pinned memory needs to be fast.
    let work = |first: usize, values: &[Scalar], ones: &mut [u32], tail: &mut [Scalar], tail_index: &mut [u32]| {
        let mut out = tail.iter_mut().zip(tail_index.iter_mut());
        for (w, (vs, word)) in values.chunks(32).zip(ones.iter_mut()).enumerate() {
            let mut bits = 0u32;
            for (b, v) in vs.iter().enumerate() {
                if *v == Scalar::ONE {
                    bits |= 1 << b;
                } else if *v != Scalar::ZERO {
                    if let Some((t, ix)) = out.next() {
                        *t = *v;
                        *ix = (first + 32 * w + b) as u32;
                    }
                }
            }
            *word = bits;
        }
    };
    let (mut tail, mut tail_index, mut ones) = (&mut tail[..k], &mut tail_index[..k], ones);
    std::thread::scope(|scope| {
        for (c, (v, &count)) in chunks.iter().zip(&counts).enumerate() {
            let (t, rest) = std::mem::take(&mut tail).split_at_mut(count);
            tail = rest;
            let (ix, rest) = std::mem::take(&mut tail_index).split_at_mut(count);
            tail_index = rest;
            let (o, rest) = std::mem::take(&mut ones).split_at_mut(v.len().div_ceil(32));
            ones = rest;
            let first = c * words_per * 32;
            if chunks.len() == 1 {
                work(first, v, o, t, ix);
            } else {
                scope.spawn(move || work(first, v, o, t, ix));
            }
        }
    });
    Ok(k)
}

// ---------------------------------------------------------------------------------------------------------
// SRS on the device

/// A query's points for batch addition: the table of its MSM bases (never precomputed here).
fn query_points<C: Curve>(bases: &MsmBases<C>) -> Result<&DeviceBuffer<C::Affine>> {
    bases.points().ok_or_else(|| Error::Pipeline("query bases are a precomputed table".into()))
}

/// The bases of one assignment's queries.
struct AssignmentBases {
    len: usize,
    g1: Vec<MsmBases<G1>>,
    g2: Vec<MsmBases<G2>>,
}

/// A partition's proving key on one GPU: the H query (`n` bases, `n` a power of two) and, per assignment, its
/// G1 and G2 queries (each exactly as long as the assignment). Uploaded once, used by every job.
pub struct PartitionSrs {
    ordinal: usize,
    n: usize,
    h: MsmBases<G1>,
    assignments: Vec<AssignmentBases>,
}

impl PartitionSrs {
    /// The H query already on `gpu` (`n` a power of two).
    pub fn new(gpu: &Gpu, h: DeviceBuffer<G1Affine>) -> Result<Self> {
        let n = h.len();
        checked_log_n(n)?;
        Ok(PartitionSrs { ordinal: gpu.info().ordinal, n, h: MsmBases::from_buffer(h)?, assignments: Vec::new() })
    }

    /// Uploads the H query.
    pub fn upload(gpu: &Gpu, h: &[G1Affine]) -> Result<Self> {
        checked_log_n(h.len())?;
        PartitionSrs::new(gpu, gpu.upload(h)?)
    }

    /// Adds an assignment whose queries are already on `gpu`: all of them as long as the assignment (at
    /// least one point, at least one query). Returns its index (the job's `assignments` order).
    pub fn add_assignment(&mut self, gpu: &Gpu, g1: Vec<DeviceBuffer<G1Affine>>, g2: Vec<DeviceBuffer<G2Affine>>) -> Result<usize> {
        if gpu.info().ordinal != self.ordinal {
            return Err(Error::Pipeline(format!("SRS of GPU {} given bases on GPU {}", self.ordinal, gpu.info().ordinal)));
        }
        let len = g1.first().map(DeviceBuffer::len).or_else(|| g2.first().map(DeviceBuffer::len)).unwrap_or(0);
        if len == 0 {
            return Err(Error::LengthMismatch { what: "partition assignment queries (none, or empty)", expected: 1, actual: 0 });
        }
        for l in g1.iter().map(DeviceBuffer::len).chain(g2.iter().map(DeviceBuffer::len)) {
            if l != len {
                return Err(Error::LengthMismatch { what: "partition query length", expected: len, actual: l });
            }
        }
        let g1 = g1.into_iter().map(MsmBases::from_buffer).collect::<Result<Vec<_>>>()?;
        let g2 = g2.into_iter().map(MsmBases::from_buffer).collect::<Result<Vec<_>>>()?;
        self.assignments.push(AssignmentBases { len, g1, g2 });
        Ok(self.assignments.len() - 1)
    }

    /// [`PartitionSrs::add_assignment`] from host slices.
    pub fn add_assignment_host(&mut self, gpu: &Gpu, g1: &[&[G1Affine]], g2: &[&[G2Affine]]) -> Result<usize> {
        let g1 = g1.iter().map(|q| gpu.upload(q)).collect::<Result<Vec<_>>>()?;
        let g2 = g2.iter().map(|q| gpu.upload(q)).collect::<Result<Vec<_>>>()?;
        self.add_assignment(gpu, g1, g2)
    }

    /// The shape jobs must have.
    pub fn shape(&self) -> PartitionShape {
        PartitionShape { n: self.n, assignments: self.assignments.iter().map(|a| a.len).collect() }
    }

    /// (G1 queries, G2 queries) per assignment.
    pub fn query_counts(&self) -> Vec<(usize, usize)> {
        self.assignments.iter().map(|a| (a.g1.len(), a.g2.len())).collect()
    }

    /// Device memory the bases take.
    pub fn device_bytes(&self) -> usize {
        let q1: usize = self.assignments.iter().flat_map(|a| &a.g1).map(|q| q.device_bytes()).sum();
        let q2: usize = self.assignments.iter().flat_map(|a| &a.g2).map(|q| q.device_bytes()).sum();
        self.h.device_bytes() + q1 + q2
    }
}

// ---------------------------------------------------------------------------------------------------------
// Results

/// One assignment's results: per query, `Σ sᵢ·Pᵢ` over the whole assignment (normalized).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AssignmentOutput {
    pub g1: Vec<G1Projective>,
    pub g2: Vec<G2Projective>,
}

/// A partition's results (normalized points: equal results have equal bytes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartitionResults {
    /// `Σ hᵢ·Hᵢ`.
    pub h: G1Projective,
    pub assignments: Vec<AssignmentOutput>,
}

/// What [`PartitionEngine::finish`] returns.
#[derive(Clone, Debug)]
pub struct PartitionOutput {
    pub results: PartitionResults,
    /// The job's phases and their summary (device timeline of this job alone).
    pub report: PhaseReport,
    /// Host time from the `start` call to the end of `finish`, ms.
    pub latency_ms: f64,
    /// Host time `start` spent waiting for the uploads, ms.
    pub start_wait_ms: f64,
}

/// A started job; redeem it with [`PartitionEngine::finish`] (or [`ProverPool::finish`]). Cloneable so that a
/// ticket handed to the wrong engine (an error) can still be redeemed at the right one; redeeming it twice is
/// [`Error::Pipeline`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use = "a started job's results and GPU resources are only released by finish"]
pub struct JobTicket {
    engine: u64,
    id: u64,
}

impl JobTicket {
    /// The job's number on its engine (0, 1, ...).
    pub fn id(&self) -> u64 {
        self.id
    }
}

// ---------------------------------------------------------------------------------------------------------
// The engine

/// Device inputs of one job.
struct Slot {
    a: DeviceBuffer<Scalar>,
    b: DeviceBuffer<Scalar>,
    c: DeviceBuffer<Scalar>,
    /// Per assignment: the tail scalars, their positions, how many the job has, and the ones bitmap.
    tails: Vec<DeviceBuffer<Scalar>>,
    tail_index: Vec<DeviceBuffer<u32>>,
    tail_len: Vec<usize>,
    ones: Vec<DeviceBuffer<u32>>,
}

impl Slot {
    fn new(gpu: &Gpu, shape: &PartitionShape) -> Result<Slot> {
        let n = shape.n;
        Ok(Slot {
            a: gpu.alloc_zeroed(n)?,
            b: gpu.alloc_zeroed(n)?,
            c: gpu.alloc_zeroed(n)?,
            tails: shape.assignments.iter().map(|&m| gpu.alloc_zeroed(m)).collect::<Result<_>>()?,
            tail_index: shape.assignments.iter().map(|&m| gpu.alloc_zeroed(m)).collect::<Result<_>>()?,
            tail_len: vec![0; shape.assignments.len()],
            ones: shape.assignments.iter().map(|&m| gpu.alloc_zeroed(m.div_ceil(32))).collect::<Result<_>>()?,
        })
    }

    /// Assignment `i`'s tail as the sparse scalars of its MSMs.
    fn tail(&self, i: usize) -> Scalars<'_> {
        Scalars::DeviceIndexed { scalars: &self.tails[i], indices: &self.tail_index[i], len: self.tail_len[i] }
    }

    fn device_bytes(&self) -> usize {
        self.a.byte_len() * 3
            + self.tails.iter().map(DeviceBuffer::byte_len).sum::<usize>()
            + self.tail_index.iter().map(DeviceBuffer::byte_len).sum::<usize>()
            + self.ones.iter().map(DeviceBuffer::byte_len).sum::<usize>()
    }
}

/// The batch adder and the tail MSM of one assignment's queries on one curve: the queries share the
/// assignment's scalars, so the adder compacts the `ones` bitmap once and the MSM sorts the tail once
/// ([`BatchAdder::enqueue_tables`], [`Msm::enqueue_tables`]); only the additions run per query.
struct QueryGroup<'g, C: Curve> {
    adder: BatchAdder<'g, C>,
    msm: Msm<'g, C>,
}

impl<'g, C: Curve> QueryGroup<'g, C> {
    /// `None` for an assignment without queries on this curve.
    fn new(gpu: &'g Gpu, queries: usize, len: usize, config: &PartitionConfig) -> Result<Option<Self>> {
        if queries == 0 {
            return Ok(None);
        }
        let plan = tail_plan(len, config)?;
        Ok(Some(QueryGroup { adder: BatchAdder::new(gpu, len, &[0, len], config.batch_add)?, msm: Msm::new(gpu, plan)? }))
    }

    /// Device memory of the adder and the tail MSM.
    fn device_bytes(&self) -> usize {
        self.adder.device_bytes() + self.msm.device_bytes()
    }

    /// Queues the batch additions and the tail MSMs of every query (two phases).
    fn enqueue(&mut self, bases: &[MsmBases<C>], tail: Scalars<'_>, slot_ones: &DeviceBuffer<u32>, rec: &mut PhaseRecorder, stream: &std::sync::Arc<CudaStream>, name: &str) -> Result<()> {
        let (adder, msm) = (&mut self.adder, &mut self.msm);
        let points = bases.iter().map(query_points).collect::<Result<Vec<_>>>()?;
        rec.phase(format!("batch_add.{name}"), PhaseKind::Kernel, 0, stream, |_| adder.enqueue_tables(&points, Some(slot_ones)))?;
        let tables: Vec<&MsmBases<C>> = bases.iter().collect();
        rec.phase(format!("msm.tail.{name}"), PhaseKind::Kernel, 0, stream, |_| msm.enqueue_tables(&tables, tail))
    }

    /// Waits and returns batch sum + tail MSM per query, normalized. Always calls the MSM's finish (so the
    /// engine is free afterwards, whatever failed).
    fn collect(&mut self) -> Result<Vec<C::Projective>> {
        let ones = self.adder.sums();
        let tails = self.msm.finish_tables();
        let (ones, tails) = (ones?, tails?);
        if ones.len() != tails.len() {
            return Err(Error::Pipeline(format!("{} batch sums for {} tail MSMs", ones.len(), tails.len())));
        }
        Ok(ones.iter().zip(&tails).map(|(o, t)| C::normalize(&C::add_projective(o, t))).collect())
    }
}

/// Per assignment: the group of its G1 and of its G2 queries (`None` where it has none).
type AssignmentEngines<'g> = (Option<QueryGroup<'g, G1>>, Option<QueryGroup<'g, G2>>);

/// The tail MSM's plan for an assignment of `len` scalars: up to `len` sparse scalars, the window chosen for
/// about `tail_fraction · len` of them.
pub fn tail_plan(len: usize, config: &PartitionConfig) -> Result<MsmPlan> {
    let plan = MsmPlan::new(len, &config.tail_msm, false)?;
    if config.tail_msm.window_bits.is_some() {
        return Ok(plan);
    }
    let nonzero = ((len as f64 * config.tail_fraction.clamp(0.0, 1.0)) as usize).max(1);
    let chunks = nonzero.div_ceil(plan.chunk).max(1);
    let c = choose_window_bits(nonzero, config.tail_msm.precompute.max(1), chunks);
    MsmPlan::new(len, &MsmConfig { window_bits: Some(c), ..config.tail_msm }, false)
}

/// Where a job is.
enum Stage {
    /// Uploads and NTTs queued; `inputs` marks the end of all its uploads on the transfer stream.
    Ntt { inputs: CudaEvent },
    /// MSM stage queued on the engines.
    Msm,
    /// Results collected (or the error that ended the job).
    Done(Result<PartitionResults>),
}

struct JobState {
    id: u64,
    slot: usize,
    stage: Stage,
    rec: PhaseRecorder,
    started: Instant,
    start_wait_ms: f64,
}

/// Distinguishes engines, so a ticket cannot be redeemed at the wrong one.
static NEXT_ENGINE: AtomicU64 = AtomicU64::new(1);

/// One GPU's partition pipeline: see the module documentation.
pub struct PartitionEngine<'g> {
    gpu: &'g Gpu,
    id: u64,
    config: PartitionConfig,
    srs: PartitionSrs,
    ntt: Ntt,
    h_msm: Msm<'g, G1>,
    queries: Vec<AssignmentEngines<'g>>,
    slots: Vec<Slot>,
    next_slot: usize,
    jobs: VecDeque<JobState>,
    /// The job whose MSM stage is queued on the engines.
    msm_owner: Option<u64>,
    next_job: u64,
    epoch: Epoch,
}

impl<'g> PartitionEngine<'g> {
    /// Allocates the working set on `gpu` for `srs` (which must live on `gpu`): the NTT tables (built here
    /// with one transform chain over the zeroed slot), MSM engines, batch adders and `config.slots` input
    /// slots. `Err(OutOfMemory)` when it does not fit.
    pub fn new(gpu: &'g Gpu, srs: PartitionSrs, config: PartitionConfig) -> Result<Self> {
        let span = tracing::info_span!("zkgpu.pipeline.engine_new", gpu = gpu.info().ordinal, n = srs.n);
        let _entered = span.enter();
        if srs.ordinal != gpu.info().ordinal {
            return Err(Error::Pipeline(format!("SRS made for GPU {} given to an engine on GPU {}", srs.ordinal, gpu.info().ordinal)));
        }
        let shape = srs.shape();
        let ntt = Ntt::new(gpu)?;
        let xyzz = config.h_msm.accumulation == Accumulation::Xyzz;
        let h_config = MsmConfig { chunk: config.h_msm.chunk.or(xyzz.then_some(H_MSM_CHUNK)), ..config.h_msm };
        let h_msm = Msm::new(gpu, MsmPlan::new(srs.n, &h_config, false)?)?;
        let queries = srs
            .assignments
            .iter()
            .map(|a| {
                Ok((QueryGroup::new(gpu, a.g1.len(), a.len, &config)?, QueryGroup::new(gpu, a.g2.len(), a.len, &config)?))
            })
            .collect::<Result<Vec<_>>>()?;
        let mut slots = (0..config.slots.max(1)).map(|_| Slot::new(gpu, &shape)).collect::<Result<Vec<_>>>()?;
        // Build the NTT tables now, so that jobs allocate nothing.
        if let Some(s) = slots.first_mut() {
            ntt.groth16_h(&mut s.a, &mut s.b, &mut s.c)?;
        }
        gpu.synchronize()?;
        let epoch = Epoch::new(gpu)?;
        Ok(PartitionEngine {
            gpu,
            id: NEXT_ENGINE.fetch_add(1, Ordering::Relaxed),
            config,
            srs,
            ntt,
            h_msm,
            queries,
            slots,
            next_slot: 0,
            jobs: VecDeque::new(),
            msm_owner: None,
            next_job: 0,
            epoch,
        })
    }

    /// The GPU it runs on.
    pub fn gpu(&self) -> &'g Gpu {
        self.gpu
    }

    /// The shape its jobs must have.
    pub fn shape(&self) -> PartitionShape {
        self.srs.shape()
    }

    /// The configuration it was made with.
    pub fn config(&self) -> &PartitionConfig {
        &self.config
    }

    /// Jobs started and not yet finished.
    pub fn in_flight(&self) -> usize {
        self.jobs.len()
    }

    /// Device memory held by the engine: SRS, input slots, MSM and batch-addition scratch (NTT tables not
    /// counted).
    pub fn device_bytes(&self) -> usize {
        let scratch: usize = self
            .queries
            .iter()
            .map(|(g1, g2)| g1.as_ref().map_or(0, QueryGroup::device_bytes) + g2.as_ref().map_or(0, QueryGroup::device_bytes))
            .sum();
        self.srs.device_bytes() + self.slots.iter().map(Slot::device_bytes).sum::<usize>() + self.h_msm.device_bytes() + scratch
    }

    /// The stream the uploads run on.
    fn transfer_stream(&self) -> std::sync::Arc<CudaStream> {
        match self.config.streams {
            StreamMode::Two => self.gpu.copy_stream().clone(),
            StreamMode::One => self.gpu.stream().clone(),
        }
    }

    /// Checks `job`, uploads its inputs into the next slot and queues its NTTs (and its MSM stage when the
    /// engines are free); returns once the uploads are done, so the caller may reuse its buffers. On any error
    /// nothing that reads the caller's memory is left running and the job is not started.
    pub fn start(&mut self, job: PartitionJob<'_>) -> Result<JobTicket> {
        let span = tracing::info_span!("zkgpu.pipeline.start", gpu = self.gpu.info().ordinal, n = self.srs.n, job = self.next_job);
        let _entered = span.enter();
        let started = Instant::now();
        self.srs.shape().check(&job)?;
        let slot = self.next_slot;
        // The rule: the slot's previous job must have its MSM stage queued before its inputs are overwritten.
        while self.jobs.iter().any(|j| j.slot == slot && matches!(j.stage, Stage::Ntt { .. })) {
            self.advance();
        }
        let mut rec = PhaseRecorder::new();
        let transfer = self.transfer_stream();
        let queued = self.queue_job(slot, job, &mut rec, &transfer);
        let wait_start = Instant::now();
        let waited = {
            let _w = tracing::info_span!("zkgpu.pipeline.wait_uploads").entered();
            match &queued {
                Ok(inputs) => inputs.synchronize().map_err(Error::from),
                // The caller's memory must not be read after we return.
                Err(_) => transfer.synchronize().map_err(Error::from),
            }
        };
        let inputs = queued?;
        waited?;
        let id = self.next_job;
        self.next_job += 1;
        self.next_slot = (slot + 1) % self.slots.len();
        let start_wait_ms = wait_start.elapsed().as_secs_f64() * 1e3;
        self.jobs.push_back(JobState { id, slot, stage: Stage::Ntt { inputs }, rec, started, start_wait_ms });
        if self.msm_owner.is_none() {
            self.advance();
        }
        Ok(JobTicket { engine: self.id, id })
    }

    /// Queues the uploads, the NTT chain and the optional h download of one job into `slot`. Returns the event
    /// that marks the end of the uploads.
    fn queue_job(&mut self, slot: usize, job: PartitionJob<'_>, rec: &mut PhaseRecorder, transfer: &std::sync::Arc<CudaStream>) -> Result<CudaEvent> {
        let gpu = self.gpu;
        let compute = gpu.stream().clone();
        let s = &mut self.slots[slot];
        // One event after each of a, b, c: each vector's transforms wait for its own upload only.
        upload(rec, transfer, "h2d.a", job.a, &mut s.a)?;
        let a_done = transfer.record_event(None)?;
        upload(rec, transfer, "h2d.b", job.b, &mut s.b)?;
        let b_done = transfer.record_event(None)?;
        upload(rec, transfer, "h2d.c", job.c, &mut s.c)?;
        let c_done = transfer.record_event(None)?;
        for (i, input) in job.assignments.iter().enumerate() {
            upload(rec, transfer, &format!("h2d.tail{i}"), input.tail, &mut s.tails[i])?;
            upload(rec, transfer, &format!("h2d.tail_index{i}"), input.tail_index, &mut s.tail_index[i])?;
            s.tail_len[i] = input.tail.len();
            let words = s.ones[i].len();
            upload(rec, transfer, &format!("h2d.ones{i}"), &input.ones[..words], &mut s.ones[i])?;
        }
        let inputs = transfer.record_event(None)?;
        // Ntt::groth16_h in its parts, one phase each. The compute stream waits for a vector's upload before
        // the phase's start event (the explicit form of what cudarc's buffer events would also enforce), so
        // the NTTs of a overlap the upload of b (and so on) and no phase counts a wait for a copy as busy. The
        // combine step runs after all three transforms, so after all three uploads.
        let ntt = &self.ntt;
        for (name, v, done) in [("ntt.h.a", &mut s.a, &a_done), ("ntt.h.b", &mut s.b, &b_done)] {
            compute.wait(done)?;
            rec.phase(name, PhaseKind::Kernel, 0, &compute, |_| ntt.groth16_h_prepare(v))?;
        }
        compute.wait(&c_done)?;
        rec.phase("ntt.h.c", PhaseKind::Kernel, 0, &compute, |_| ntt.groth16_h_prepare_c(&mut s.c))?;
        rec.phase("ntt.h.combine", PhaseKind::Kernel, 0, &compute, |_| ntt.groth16_h_combine(&mut s.a, &s.b, &s.c))?;
        if let Some(h_out) = job.h_out {
            let copy = gpu.copy_stream().clone();
            copy.wait(&compute.record_event(None)?)?;
            let id = rec.begin("d2h.h", PhaseKind::D2h, s.a.byte_len(), &copy)?;
            gpu.download_async(&s.a, h_out)?;
            rec.end(id, &copy)?;
        }
        Ok(inputs)
    }

    /// Collects the job whose MSM stage is queued (if any), then queues the MSM stage of the oldest job that
    /// waits for it. Errors end the job they belong to (kept for its `finish`), not the engine.
    fn advance(&mut self) {
        if let Some(owner) = self.msm_owner.take() {
            let result = self.collect(owner);
            if let Some(job) = self.jobs.iter_mut().find(|j| j.id == owner) {
                job.stage = Stage::Done(result);
            }
        }
        let Some(index) = self.jobs.iter().position(|j| matches!(j.stage, Stage::Ntt { .. })) else {
            return;
        };
        let mut rec = std::mem::take(&mut self.jobs[index].rec);
        let (slot, id) = (self.jobs[index].slot, self.jobs[index].id);
        // The stage is replaced below in every case; take the upload event out to queue behind it.
        let stage = std::mem::replace(&mut self.jobs[index].stage, Stage::Msm);
        let queued = match &stage {
            Stage::Ntt { inputs } => self.queue_msm_stage(slot, inputs, &mut rec),
            _ => Ok(()),
        };
        let job = &mut self.jobs[index];
        job.rec = rec;
        match queued {
            Ok(()) => {
                job.stage = Stage::Msm;
                self.msm_owner = Some(id);
            }
            Err(e) => {
                tracing::warn!(job = id, error = %e, "pipeline job failed while queueing its MSM stage");
                job.stage = Stage::Done(Err(e));
                // Free every engine the failed stage may have queued on.
                let _ = self.collect_raw();
            }
        }
    }

    /// Queues the H MSM, batch additions and tail MSMs of the job in `slot`.
    fn queue_msm_stage(&mut self, slot: usize, inputs: &CudaEvent, rec: &mut PhaseRecorder) -> Result<()> {
        let compute = self.gpu.stream().clone();
        compute.wait(inputs)?;
        let s = &self.slots[slot];
        let (h_msm, srs) = (&mut self.h_msm, &self.srs);
        rec.phase("msm.h", PhaseKind::Kernel, 0, &compute, |_| h_msm.enqueue(Bases::Device(&srs.h), Scalars::Device(&s.a)))?;
        for (i, ((g1, g2), bases)) in self.queries.iter_mut().zip(&srs.assignments).enumerate() {
            if let Some(group) = g1 {
                group.enqueue(&bases.g1, s.tail(i), &s.ones[i], rec, &compute, &format!("{i}.g1"))?;
            }
            if let Some(group) = g2 {
                group.enqueue(&bases.g2, s.tail(i), &s.ones[i], rec, &compute, &format!("{i}.g2"))?;
            }
        }
        Ok(())
    }

    /// Waits for the queued MSM stage and returns its results (every engine is finished, whatever fails).
    fn collect_raw(&mut self) -> Result<PartitionResults> {
        let h = self.h_msm.finish();
        let assignments: Vec<Result<AssignmentOutput>> = self
            .queries
            .iter_mut()
            .map(|(g1, g2)| {
                let g1 = g1.as_mut().map_or(Ok(Vec::new()), QueryGroup::collect);
                let g2 = g2.as_mut().map_or(Ok(Vec::new()), QueryGroup::collect);
                Ok(AssignmentOutput { g1: g1?, g2: g2? })
            })
            .collect();
        Ok(PartitionResults { h: h?, assignments: assignments.into_iter().collect::<Result<_>>()? })
    }

    /// [`PartitionEngine::collect_raw`] for job `id`, with the result downloads as a phase.
    fn collect(&mut self, id: u64) -> Result<PartitionResults> {
        let _span = tracing::info_span!("zkgpu.pipeline.collect", job = id).entered();
        let compute = self.gpu.stream().clone();
        let mut rec = match self.jobs.iter_mut().find(|j| j.id == id) {
            Some(job) => std::mem::take(&mut job.rec),
            None => PhaseRecorder::new(),
        };
        let phase = rec.begin("d2h.results", PhaseKind::D2h, self.result_bytes(), &compute);
        let result = self.collect_raw();
        if let Ok(p) = phase {
            let _ = rec.end(p, &compute);
        }
        if let Some(job) = self.jobs.iter_mut().find(|j| j.id == id) {
            job.rec = rec;
        }
        result
    }

    /// Bytes of the downloaded results (one point per MSM and per batch addition).
    fn result_bytes(&self) -> usize {
        let (p1, p2) = (size_of::<G1Projective>(), size_of::<G2Projective>());
        p1 + self.srs.assignments.iter().map(|a| 2 * (a.g1.len() * p1 + a.g2.len() * p2)).sum::<usize>()
    }

    /// Waits for job `ticket` and returns its results and phase report. Earlier jobs of this engine are
    /// collected on the way (their results wait for their own `finish`). `Err(Pipeline)` for a ticket of
    /// another engine; the job's own error if its GPU work failed.
    pub fn finish(&mut self, ticket: JobTicket) -> Result<PartitionOutput> {
        let span = tracing::info_span!("zkgpu.pipeline.finish", gpu = self.gpu.info().ordinal, job = ticket.id);
        let _entered = span.enter();
        if ticket.engine != self.id {
            return Err(Error::Pipeline(format!("job {} was started on another engine", ticket.id)));
        }
        let index = loop {
            let Some(i) = self.jobs.iter().position(|j| j.id == ticket.id) else {
                return Err(Error::Pipeline(format!("job {} is not in flight on this engine", ticket.id)));
            };
            if matches!(self.jobs[i].stage, Stage::Done(_)) {
                break i;
            }
            self.advance();
        };
        let job = self.jobs.remove(index).ok_or_else(|| Error::Pipeline("job vanished".into()))?;
        // Keep the engines busy with the next job before the host resolves this one's timings.
        if self.msm_owner.is_none() {
            self.advance();
        }
        let Stage::Done(results) = job.stage else {
            return Err(Error::Pipeline(format!("job {} finished in an unexpected stage", job.id)));
        };
        let results = results?;
        let report = PhaseReport::from_phases(job.rec.resolve(&self.epoch)?);
        report.emit(&format!("pipeline gpu {} job {}", self.gpu.info().ordinal, job.id));
        Ok(PartitionOutput { results, report, latency_ms: job.started.elapsed().as_secs_f64() * 1e3, start_wait_ms: job.start_wait_ms })
    }
}

/// Queues one upload as a phase.
/// Copies `src` into the first `src.len()` elements of `dst` on `stream`, as phase `name`.
fn upload<T: DeviceSafe>(rec: &mut PhaseRecorder, stream: &std::sync::Arc<CudaStream>, name: &str, src: &[T], dst: &mut DeviceBuffer<T>) -> Result<()> {
    if src.len() > dst.len() {
        return Err(Error::LengthMismatch { what: "pipeline upload", expected: dst.len(), actual: src.len() });
    }
    if src.is_empty() {
        return Ok(());
    }
    rec.phase(name, PhaseKind::H2d, size_of_val(src), stream, |st| Ok(st.memcpy_htod(as_bytes(src), &mut dst.raw_range_mut(0..src.len())?)?))
}

// ---------------------------------------------------------------------------------------------------------
// Multi-GPU

/// The engine for the next job: the fewest jobs in flight, ties broken in turn starting at `next`.
/// `loads` must not be empty (0 is returned for an empty slice).
pub fn pick_engine(loads: &[usize], next: usize) -> usize {
    let k = loads.len();
    if k == 0 {
        return 0;
    }
    (0..k).map(|d| (next + d) % k).min_by_key(|&i| loads[i]).unwrap_or(0)
}

/// Contiguous ranges covering `0..n`, `parts` of them (at least 1, at most `n` when `n > 0`), sizes
/// differing by at most one, larger ones first.
pub fn split_ranges(n: usize, parts: usize) -> Vec<Range<usize>> {
    let parts = parts.clamp(1, n.max(1));
    let (base, extra) = (n / parts, n % parts);
    let mut out = Vec::with_capacity(parts);
    let mut start = 0;
    for i in 0..parts {
        let len = base + usize::from(i < extra);
        out.push(start..start + len);
        start += len;
    }
    out
}

/// A ticket of a [`ProverPool`] job.
#[derive(Clone, Debug, PartialEq, Eq)]
#[must_use = "a started job's results and GPU resources are only released by finish"]
pub struct PoolTicket {
    engine: usize,
    ticket: JobTicket,
}

impl PoolTicket {
    /// The engine (index in the pool) running the job.
    pub fn engine(&self) -> usize {
        self.engine
    }
}

/// Partition engines on several GPUs, jobs spread over them.
pub struct ProverPool<'g> {
    engines: Vec<PartitionEngine<'g>>,
    next: usize,
}

impl<'g> ProverPool<'g> {
    /// A pool over `engines` (one per GPU, usually from [`Gpu::all`]). `Err(NoDevice)` when empty.
    pub fn new(engines: Vec<PartitionEngine<'g>>) -> Result<Self> {
        if engines.is_empty() {
            return Err(Error::NoDevice);
        }
        Ok(ProverPool { engines, next: 0 })
    }

    /// The engines.
    pub fn engines(&self) -> &[PartitionEngine<'g>] {
        &self.engines
    }

    /// The engine the next [`ProverPool::start`] will use (fill its pinned buffers from that GPU's pool).
    pub fn pick(&self) -> usize {
        let loads: Vec<usize> = self.engines.iter().map(PartitionEngine::in_flight).collect();
        pick_engine(&loads, self.next)
    }

    /// Starts `job` on engine `engine`.
    pub fn start_on(&mut self, engine: usize, job: PartitionJob<'_>) -> Result<PoolTicket> {
        let count = self.engines.len();
        let e = self.engines.get_mut(engine).ok_or(Error::DeviceIndex { ordinal: engine, count })?;
        let ticket = e.start(job)?;
        self.next = (engine + 1) % count;
        Ok(PoolTicket { engine, ticket })
    }

    /// Starts `job` on the engine [`ProverPool::pick`] names.
    pub fn start(&mut self, job: PartitionJob<'_>) -> Result<PoolTicket> {
        self.start_on(self.pick(), job)
    }

    /// Waits for a job and returns its results.
    pub fn finish(&mut self, ticket: PoolTicket) -> Result<PartitionOutput> {
        let count = self.engines.len();
        let e = self.engines.get_mut(ticket.engine).ok_or(Error::DeviceIndex { ordinal: ticket.engine, count })?;
        e.finish(ticket.ticket)
    }
}

/// One MSM split over several GPUs: GPU `k` holds bases `ranges[k]` and computes that part of the sum.
pub struct SplitMsm<'g, C: Curve> {
    n: usize,
    parts: Vec<(Range<usize>, MsmBases<C>, Msm<'g, C>)>,
}

impl<'g, C: Curve + Send + Sync> SplitMsm<'g, C> {
    /// Uploads contiguous ranges of `bases` to the GPUs ([`split_ranges`]) and makes an engine on each for
    /// host scalars with `config`. `Err(NoDevice)` for no GPU.
    pub fn new(gpus: &'g [Gpu], bases: &[C::Affine], config: &MsmConfig) -> Result<Self> {
        if gpus.is_empty() {
            return Err(Error::NoDevice);
        }
        let n = bases.len();
        let parts = split_ranges(n, gpus.len())
            .into_iter()
            .zip(gpus)
            .map(|(range, gpu)| {
                let table = MsmBases::upload(gpu, &bases[range.clone()])?;
                let msm = Msm::new(gpu, MsmPlan::new(range.len(), config, true)?)?;
                Ok((range, table, msm))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(SplitMsm { n, parts })
    }

    /// The range of points each GPU holds.
    pub fn ranges(&self) -> Vec<Range<usize>> {
        self.parts.iter().map(|p| p.0.clone()).collect()
    }

    /// `Σ scalars[i]·bases[i]` (normalized): every GPU's part runs at once, from its own host thread, with its
    /// scalars' chunks uploaded on its copy stream; the partial sums are added on the host.
    /// `Err(LengthMismatch)` unless there is one scalar per base.
    pub fn run(&mut self, scalars: &[Scalar]) -> Result<C::Projective> {
        if scalars.len() != self.n {
            return Err(Error::LengthMismatch { what: "split msm scalars", expected: self.n, actual: scalars.len() });
        }
        let _span = tracing::info_span!("zkgpu.pipeline.split_msm", curve = C::NAME, n = self.n, gpus = self.parts.len()).entered();
        // One host thread per GPU: `Msm::enqueue` with host scalars returns only after its last chunk's upload,
        // so queueing the parts one after another from one thread would start each GPU late.
        let sums: Vec<Result<C::Projective>> = std::thread::scope(|scope| {
            let handles: Vec<_> = self
                .parts
                .iter_mut()
                .map(|(range, table, msm)| {
                    let part = &scalars[range.clone()];
                    scope.spawn(move || {
                        msm.enqueue(Bases::Device(table), Scalars::Host(part))?;
                        msm.finish()
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err(Error::Pipeline("a split MSM worker panicked".into()))))
                .collect()
        });
        let mut total = C::identity();
        for s in sums {
            total = C::add_projective(&total, &s?);
        }
        Ok(C::normalize(&total))
    }
}

/// `Σ scalars[i]·bases[i]` over all `gpus` (one-shot [`SplitMsm`]).
pub fn msm_multi_gpu<C: Curve + Send + Sync>(gpus: &[Gpu], bases: &[C::Affine], scalars: &[Scalar]) -> Result<C::Projective> {
    if bases.len() != scalars.len() {
        return Err(Error::LengthMismatch { what: "msm bases", expected: scalars.len(), actual: bases.len() });
    }
    SplitMsm::<C>::new(gpus, bases, &MsmConfig::default())?.run(scalars)
}

/// One report over several GPUs' reports (each on its own GPU's time axis): wall time the longest, kernel and
/// transfer times and bytes summed, busy fraction = summed kernel time / (GPUs × wall), H2D GB/s = bytes /
/// summed H2D time (the mean per-link rate).
pub fn combine_gpus(reports: &[PhaseReport]) -> PhaseReport {
    let mut out = PhaseReport::default();
    for r in reports {
        out.wall_ms = out.wall_ms.max(r.wall_ms);
        out.kernel_ms += r.kernel_ms;
        out.kernel_sum_ms += r.kernel_sum_ms;
        out.h2d_bytes += r.h2d_bytes;
        out.h2d_ms += r.h2d_ms;
        out.d2h_bytes += r.d2h_bytes;
        out.d2h_ms += r.d2h_ms;
        out.transfer_ms += r.transfer_ms;
        out.phases.extend(r.phases.iter().cloned());
    }
    let k = reports.len().max(1) as f64;
    out.gpu_busy = if out.wall_ms > 0.0 { (out.kernel_ms / (k * out.wall_ms)).clamp(0.0, 1.0) } else { 0.0 };
    out.h2d_gbps = crate::profile::gbps(out.h2d_bytes, out.h2d_ms);
    out.d2h_gbps = crate::profile::gbps(out.d2h_bytes, out.d2h_ms);
    out
}
