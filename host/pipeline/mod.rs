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

mod engine;
mod job;
mod multi_gpu;
mod srs;

pub use engine::*;
pub use job::*;
pub use multi_gpu::*;
pub use srs::*;
