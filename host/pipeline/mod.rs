//! The Groth16 partition job: everything a prover's GPU does for one partition, queued as one job, with its
//! inputs streamed from page-locked memory on a second stream and every phase timed.
//!
//! # What a job computes
//! Given the synthesis vectors `a`, `b`, `c` (evaluations on the domain of size `n = 2^k`) and, per
//! *assignment* (a scalar vector that several queries share: e.g. the aux assignment used by the A, B_G1 and L
//! queries), its split into the points with scalar 1 (`ones`, a bitmap) and the rest (`tail`: the scalars
//! that are neither 0 nor 1, with their positions `tail_index`):
//! - `h = (A·B − C) / Z` on the coset (the steps of [`crate::Ntt::groth16_h`]: for A and B an inverse NTT and
//!   a coset NTT, [`crate::Ntt::groth16_h_prepare`], and B's product into A, [`crate::Ntt::groth16_h_multiply`];
//!   for C an inverse NTT, [`crate::Ntt::groth16_h_prepare_c`]; then 1 coset inverse NTT,
//!   [`crate::Ntt::groth16_h_interpolate`], and C's subtraction, [`crate::Ntt::groth16_h_subtract`]) and
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
//! - [`PartitionEngine::start`] queues the uploads on the **copy stream** (one copy per vector, in order b, a,
//!   c, tails, bitmaps; with one slot on a stream of their own, beside the previous job's streamed bases,
//!   since they wait for that job's MSM stage) and the NTT chain on the compute stream: the transforms of
//!   `b` wait for the upload of `b` only, those of `a` for `a`, those of `c` for `c` (explicit event waits),
//!   so the NTTs of b overlap the upload of a, and so on; B comes first because its buffer is free once the
//!   previous job's NTT chain is done, A's only once that job's H MSM is. It returns when the uploads are
//!   done: the caller may then refill its pinned buffers. It does not wait for compute.
//! - The MSM stage (the H MSM, batch additions and tail MSMs: work on device bases first, then the streamed
//!   MSMs interleaved step by step, so one's uploads run beside another's kernels) of job `k` is queued as
//!   soon as the engines are free, i.e. once job `k − 1`'s results are collected ([`Msm`] holds one queued
//!   MSM at a time), which happens in whichever of `start`/`finish` comes first. [`PartitionEngine::finish`] waits for the job's results.
//! - The rule: the uploads of job `k + slots` overwrite slot `k mod slots`, so before queueing them `start`
//!   makes sure job `k`'s MSM stage is queued (collecting earlier jobs if need be, which blocks on the GPU).
//!   Once everything that reads a slot is queued, the streams order the rest: cudarc's per-buffer events make
//!   uploads wait for the kernels that read the slot, and the kernels wait for the copies.
//! - With 2 slots, job `k + 1`'s uploads (copy stream) overlap job `k`'s compute (compute stream), so in
//!   steady state the transfers are hidden: wall time per job ≈ max(transfer, compute). With
//!   [`StreamMode::One`] the uploads go on the compute stream and serialize with compute (the benchmark's
//!   `1stream` baseline). Any number of jobs may be in flight; more than `slots` makes `start` block.
//!
//! # Device-memory budget
//! [`PartitionConfig::max_device_bytes`] bounds what the engine holds ([`PartitionEngine::device_bytes`]: SRS,
//! slots, NTT tables, scratch); jobs allocate nothing. What does not fit gives way in this order: an H query in
//! pinned host memory ([`PartitionSrs::pinned`]) streams through the H MSM chunk by chunk in every job; the slots
//! hold two vectors of `n` instead of three (C is uploaded into B's buffer once B is multiplied into A, so a job's
//! uploads end only after B's transforms); assignment queries in pinned memory stream (below); the engine makes
//! fewer slots than configured. [`PartitionConfig::max_tail_fraction`] bounds the tails a job may have, so that the
//! slots hold less. [`PartitionEngine::memory`] says what it chose; a budget below the smallest working set is
//! [`Error::DeviceBudget`] at [`PartitionEngine::new`], with nothing left allocated. An assignment whose queries
//! are given in pinned host memory ([`PartitionSrs::add_assignment_pinned`]) streams them in every job, window by
//! window of [`PartitionConfig::query_window`] positions: each window of each query is uploaded once (on the copy
//! stream, [`PartitionConfig::window_staging`] windows deep, double-buffered by default) and serves both its batch
//! addition (the window's slice of the `ones` bitmap, one result per window, summed at collection) and its chunk of
//! the tail MSM (the tail entries whose positions fall in the window: a contiguous range when `tail_index` ascends,
//! found by binary search in `start`; an entry outside its window fails the job with [`Error::IndexOutOfRange`]).
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
//! Phase names: `h2d.b`, `h2d.a`, `h2d.c`, `h2d.tail{i}`, `h2d.tail_index{i}`, `h2d.ones{i}`; `ntt.h.b` (b's
//! inverse + coset NTT), `ntt.h.a` (a's, and b's product into a), `ntt.h.interpolate` (a's coset inverse NTT),
//! `ntt.h.c` (c's inverse NTT) and `ntt.h.subtract` (c's subtraction, the permutation); `msm.h`;
//! `batch_add.{i}.g1`, `msm.tail.{i}.g1` (all G1 queries of assignment `i`; and `g2`), or for streamed queries
//! `msm.stream.{i}.g1` (both); `d2h.h`, `d2h.results`. A streamed MSM (H, or an assignment's queries: `name` =
//! `h`, `{i}.g1`) also has per step `k` (a chunk of H, a window of one query) the copy `h2d.{name}.{k}` (timed
//! from when its staging is free) and, timed from when the copy is done, `add.{name}.{k}` (the window's batch
//! addition) and `chunk.{name}.{k}` (the MSM's kernels); interleaved, the whole-MSM phases overlap, the step
//! phases do not.
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
//! (ties in turn). Pinned blocks are portable (pinned for every context), so a job's buffers may come from
//! any GPU's [`crate::PinnedPool`]; [`ProverPool::pick`] names the engine the next job goes to. [`SplitMsm`] / [`msm_multi_gpu`] split one
//! large MSM into contiguous ranges of points, one per GPU (bases resident per GPU), and add the partial sums
//! on the host.
//!
//! # What limits it
//! A 2^27 job is compute bound: with two streams the copies hide behind compute (GPU busy ~98%), and the H
//! MSM is the largest part. DESIGN.md (section 5) has the analysis with the commands that measure it; the
//! current figures are in `benches/results/h200.json`, the dated history in `docs/log/pipeline-notes.md`.
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
use std::sync::{Arc, Mutex};
use std::time::Instant;

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use cudarc::driver::{CudaEvent, CudaStream};
use ff::Field;

use crate::batch_add::{BatchAdder, Method};
use crate::curve::{Curve, G1, G2};
use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::memory::{DeviceBuffer, DeviceSafe, as_bytes};
use crate::msm::{
    Accumulation, Bases, DeviceLimits, Msm, MsmBases, MsmConfig, MsmPlan, Scalars, StepPhases, Streamed,
    choose_window_bits,
};
use crate::ntt::{Ntt, checked_log_n};
use crate::pinned::PinnedBuffer;
use crate::profile::{Epoch, PhaseId, PhaseKind, PhaseRecorder, PhaseReport};

mod engine;
mod job;
mod multi_gpu;
mod srs;

pub use engine::*;
pub use job::*;
pub use multi_gpu::*;
pub use srs::*;
