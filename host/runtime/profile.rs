//! Phase timing with CUDA events, for any API that queues work on a [`Gpu`]'s streams and wants to say where
//! the time went: which transfer or kernel stage ran when, on which stream, and what that adds up to (GPU busy
//! fraction, achieved transfer bandwidth).
//!
//! [`PhaseRecorder`] records a pair of timing events around each phase *as it is queued* (no waiting), and
//! [`PhaseRecorder::resolve`] turns them into [`Phase`]s once the work is done. Times are milliseconds since
//! an epoch event the caller owns ([`Epoch`]), so phases of several jobs on one GPU share one time axis and
//! their union can be taken. [`PhaseReport`] is the summary: wall time, kernel time with overlapping phases
//! counted once, busy fraction, H2D/D2H bytes and GB/s. It is pure arithmetic over the phases (tested on the
//! CPU in `tests/pipeline_cpu.rs`).
//!
//! Why events and not host clocks: the host returns from a launch long before the GPU runs it, so host
//! timestamps measure queueing, not execution. An event records when the *stream* reached it. Caveat: a
//! stream that waits for another stream (an event wait, or cudarc's automatic cross-stream ordering of a
//! buffer) reaches a start event before it can start the phase; callers that want busy intervals without that
//! idle time make the stream wait explicitly *before* recording the start (the pipeline does).
//!
//! Precision: `cuEventElapsedTime` has ~0.5 µs resolution and returns an `f32`; phases are resolved against
//! their job's first event (precise) plus that event's offset from the epoch (an `f32` of the time since the
//! epoch: below 0.01 ms error for an epoch a few minutes old, ~0.25 ms after an hour).
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use cudarc::driver::{CudaEvent, CudaStream};

use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::timing::timing_event;

/// What a phase is, for the report's sums.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PhaseKind {
    /// A host-to-device copy (counted in H2D bytes and time).
    H2d,
    /// A device-to-host copy.
    D2h,
    /// Kernels (counted in kernel time and the busy fraction).
    Kernel,
    /// A span of interleaved work on a stream, e.g. a streamed MSM from its first step to its last: it
    /// includes waits for other streams, so it is reported but counted in neither kernel nor transfer time
    /// (its steps' own phases are).
    Span,
}

impl PhaseKind {
    /// Short name for logs: "h2d", "d2h", "kernel", "span".
    pub fn as_str(self) -> &'static str {
        match self {
            PhaseKind::H2d => "h2d",
            PhaseKind::D2h => "d2h",
            PhaseKind::Kernel => "kernel",
            PhaseKind::Span => "span",
        }
    }
}

/// One resolved phase: `[start_ms, end_ms)` since the epoch.
#[derive(Clone, Debug, PartialEq)]
pub struct Phase {
    /// What ran, e.g. "h2d.a", "ntt.h.a", "msm.h".
    pub name: String,
    pub kind: PhaseKind,
    /// Milliseconds since the epoch when the stream reached the phase's start.
    pub start_ms: f64,
    /// Milliseconds since the epoch when the stream passed the phase's end.
    pub end_ms: f64,
    /// Bytes moved (transfers; 0 for kernels).
    pub bytes: usize,
}

impl Phase {
    /// Duration in milliseconds (never negative).
    pub fn ms(&self) -> f64 {
        (self.end_ms - self.start_ms).max(0.0)
    }
}

/// A timing event recorded once on a GPU: the zero of a time axis that several recorders share.
#[derive(Debug)]
pub struct Epoch {
    event: CudaEvent,
}

impl Epoch {
    /// Records the epoch on `gpu`'s compute stream (after the work already queued there).
    pub fn new(gpu: &Gpu) -> Result<Epoch> {
        Ok(Epoch { event: timing_event(gpu.stream())? })
    }
}

/// One phase as queued: its events (the end is recorded later).
#[derive(Debug)]
struct Mark {
    name: String,
    kind: PhaseKind,
    bytes: usize,
    start: CudaEvent,
    end: Option<CudaEvent>,
}

/// Handle of a phase begun with [`PhaseRecorder::begin`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PhaseId(usize);

/// Records phases as they are queued; resolves them once the GPU has run them.
#[derive(Debug, Default)]
pub struct PhaseRecorder {
    marks: Vec<Mark>,
}

impl PhaseRecorder {
    /// An empty recorder.
    pub fn new() -> PhaseRecorder {
        PhaseRecorder::default()
    }

    /// Records the start of phase `name` on `stream` (after the work already queued there).
    pub fn begin(
        &mut self,
        name: impl Into<String>,
        kind: PhaseKind,
        bytes: usize,
        stream: &Arc<CudaStream>,
    ) -> Result<PhaseId> {
        let start = timing_event(stream)?;
        self.marks.push(Mark { name: name.into(), kind, bytes, start, end: None });
        Ok(PhaseId(self.marks.len() - 1))
    }

    /// Records the end of phase `id` on `stream` (the stream that ran it). Ending an unknown or ended phase
    /// does nothing.
    pub fn end(&mut self, id: PhaseId, stream: &Arc<CudaStream>) -> Result<()> {
        if let Some(mark) = self.marks.get_mut(id.0).filter(|m| m.end.is_none()) {
            mark.end = Some(timing_event(stream)?);
        }
        Ok(())
    }

    /// `work` queued on `stream` as one phase: begin, `work(stream)`, end. On an error from `work` the phase
    /// is still ended (so it resolves), and the error is returned.
    pub fn phase<R>(
        &mut self,
        name: impl Into<String>,
        kind: PhaseKind,
        bytes: usize,
        stream: &Arc<CudaStream>,
        work: impl FnOnce(&Arc<CudaStream>) -> Result<R>,
    ) -> Result<R> {
        let id = self.begin(name, kind, bytes, stream)?;
        let out = work(stream);
        self.end(id, stream)?;
        out
    }

    /// Number of phases recorded.
    pub fn len(&self) -> usize {
        self.marks.len()
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.marks.is_empty()
    }

    /// Waits for every recorded event and returns the phases on `epoch`'s time axis, in recording order.
    /// A phase whose end was never recorded gets a zero duration.
    pub fn resolve(&self, epoch: &Epoch) -> Result<Vec<Phase>> {
        let Some(first) = self.marks.first() else {
            return Ok(Vec::new());
        };
        // Offsets inside the job are measured from its first event (small, precise); the job is placed on the
        // epoch's axis once.
        let offset = f64::from(epoch.event.elapsed_ms(&first.start)?);
        let mut out = Vec::with_capacity(self.marks.len());
        for mark in &self.marks {
            let start = f64::from(first.start.elapsed_ms(&mark.start)?);
            let end = match &mark.end {
                Some(e) => f64::from(first.start.elapsed_ms(e)?),
                None => start,
            };
            out.push(Phase {
                name: mark.name.clone(),
                kind: mark.kind,
                start_ms: offset + start,
                end_ms: offset + end,
                bytes: mark.bytes,
            });
        }
        Ok(out)
    }
}

/// The length of the union of `[start, end)` intervals, in the intervals' unit: overlapping time counts once.
/// Empty or reversed intervals count nothing.
pub fn union_ms(intervals: impl IntoIterator<Item = (f64, f64)>) -> f64 {
    let mut v: Vec<(f64, f64)> = intervals.into_iter().filter(|(s, e)| e > s).collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut total = 0.0;
    let mut current: Option<(f64, f64)> = None;
    for (s, e) in v {
        current = match current {
            Some((cs, ce)) if s <= ce => Some((cs, ce.max(e))),
            Some((cs, ce)) => {
                total += ce - cs;
                Some((s, e))
            }
            None => Some((s, e)),
        };
    }
    if let Some((cs, ce)) = current {
        total += ce - cs;
    }
    total
}

/// Where the time of one or more jobs went.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PhaseReport {
    /// The phases, on one time axis.
    pub phases: Vec<Phase>,
    /// Wall time on the device: first phase start to last phase end (or the caller's wall time, see
    /// [`PhaseReport::with_wall_ms`]).
    pub wall_ms: f64,
    /// Kernel time with overlapping kernel phases counted once (the compute stream's busy time).
    pub kernel_ms: f64,
    /// Kernel phase durations summed (equals `kernel_ms` when kernel phases never overlap).
    pub kernel_sum_ms: f64,
    /// `kernel_ms / wall_ms`, in 0..=1 (0 for a zero wall time).
    pub gpu_busy: f64,
    /// Bytes copied host to device.
    pub h2d_bytes: usize,
    /// Time with an H2D copy running (union).
    pub h2d_ms: f64,
    /// `h2d_bytes / h2d_ms`, GB/s (10^9 bytes per second); 0 without copies.
    pub h2d_gbps: f64,
    /// Bytes copied device to host.
    pub d2h_bytes: usize,
    /// Time with a D2H copy running (union).
    pub d2h_ms: f64,
    /// `d2h_bytes / d2h_ms`, GB/s; 0 without copies.
    pub d2h_gbps: f64,
    /// Time with any transfer running (union of H2D and D2H).
    pub transfer_ms: f64,
    /// Time with kernels or transfers running (their union): `wall_ms − active_ms` is time the GPU did
    /// neither, e.g. a copy waiting for kernels that free its buffer while the kernels wait for that copy.
    pub active_ms: f64,
}

/// `bytes / ms` in GB/s (10^9 B/s), 0 when `ms` is not positive.
pub fn gbps(bytes: usize, ms: f64) -> f64 {
    if ms > 0.0 { bytes as f64 / (ms * 1e-3) / 1e9 } else { 0.0 }
}

impl PhaseReport {
    /// The summary of `phases` (all on one time axis), wall time from the first start to the last end.
    pub fn from_phases(phases: Vec<Phase>) -> PhaseReport {
        let first = phases.iter().map(|p| p.start_ms).fold(f64::INFINITY, f64::min);
        let last = phases.iter().map(|p| p.end_ms).fold(f64::NEG_INFINITY, f64::max);
        let wall_ms = if phases.is_empty() { 0.0 } else { (last - first).max(0.0) };
        let of = |kind: PhaseKind| phases.iter().filter(move |p| p.kind == kind);
        let kernel_ms = union_ms(of(PhaseKind::Kernel).map(|p| (p.start_ms, p.end_ms)));
        let kernel_sum_ms = of(PhaseKind::Kernel).map(Phase::ms).sum();
        let h2d_bytes = of(PhaseKind::H2d).map(|p| p.bytes).sum();
        let h2d_ms = union_ms(of(PhaseKind::H2d).map(|p| (p.start_ms, p.end_ms)));
        let d2h_bytes = of(PhaseKind::D2h).map(|p| p.bytes).sum();
        let d2h_ms = union_ms(of(PhaseKind::D2h).map(|p| (p.start_ms, p.end_ms)));
        let transfer_ms = union_ms(of(PhaseKind::H2d).chain(of(PhaseKind::D2h)).map(|p| (p.start_ms, p.end_ms)));
        let active_ms = union_ms(phases.iter().filter(|p| p.kind != PhaseKind::Span).map(|p| (p.start_ms, p.end_ms)));
        let mut report = PhaseReport {
            phases,
            wall_ms,
            kernel_ms,
            kernel_sum_ms,
            gpu_busy: 0.0,
            h2d_bytes,
            h2d_ms,
            h2d_gbps: gbps(h2d_bytes, h2d_ms),
            d2h_bytes,
            d2h_ms,
            d2h_gbps: gbps(d2h_bytes, d2h_ms),
            transfer_ms,
            active_ms,
        };
        report.gpu_busy = busy(kernel_ms, wall_ms);
        report
    }

    /// The same report over a wall time measured by the caller (e.g. host wall clock around a batch of
    /// jobs, which includes host-side gaps the device timeline does not see).
    pub fn with_wall_ms(mut self, wall_ms: f64) -> PhaseReport {
        self.wall_ms = wall_ms.max(0.0);
        self.gpu_busy = busy(self.kernel_ms, self.wall_ms);
        self
    }

    /// One report over the phases of several reports that share a time axis (jobs of one GPU).
    pub fn merge<'a>(reports: impl IntoIterator<Item = &'a PhaseReport>) -> PhaseReport {
        PhaseReport::from_phases(reports.into_iter().flat_map(|r| r.phases.iter().cloned()).collect())
    }

    /// Summed kernel time of the phases whose name starts with `prefix` (e.g. "msm.").
    pub fn kernel_ms_of(&self, prefix: &str) -> f64 {
        self.phases.iter().filter(|p| p.kind == PhaseKind::Kernel && p.name.starts_with(prefix)).map(Phase::ms).sum()
    }

    /// Emits one `tracing` event per phase and one for the summary, under target `zkgpu.profile`, tagged with
    /// `what` (e.g. "pipeline job 3").
    pub fn emit(&self, what: &str) {
        for p in &self.phases {
            tracing::info!(
                target: "zkgpu.profile",
                what,
                phase = %p.name,
                kind = p.kind.as_str(),
                start_ms = p.start_ms,
                ms = p.ms(),
                bytes = p.bytes,
                "phase"
            );
        }
        tracing::info!(
            target: "zkgpu.profile",
            what,
            wall_ms = self.wall_ms,
            kernel_ms = self.kernel_ms,
            gpu_busy = self.gpu_busy,
            h2d_gbps = self.h2d_gbps,
            h2d_ms = self.h2d_ms,
            d2h_ms = self.d2h_ms,
            active_ms = self.active_ms,
            "report"
        );
    }
}

/// `kernel / wall`, clamped to 0..=1 (0 when the wall time is not positive).
fn busy(kernel_ms: f64, wall_ms: f64) -> f64 {
    if wall_ms > 0.0 { (kernel_ms / wall_ms).clamp(0.0, 1.0) } else { 0.0 }
}

/// The driver's own count of the device memory in use (total less free), sampled on a thread of its own while
/// the watch runs: [`MemoryWatch::peak`] is the highest level above the one at [`MemoryWatch::start`]. It
/// checks a device-memory budget against what the driver saw, not against an engine's own byte counts (which
/// leave out the allocator's rounding). Everything else on the device in that time counts too, the driver's
/// own reservations included (take the start after the kernels are loaded: [`Gpu::warm_up`],
/// [`Gpu::preload_kernels`]).
pub struct MemoryWatch {
    stop: Arc<AtomicBool>,
    peak: Arc<AtomicUsize>,
    thread: Option<JoinHandle<Result<()>>>,
    baseline: usize,
}

impl MemoryWatch {
    /// Starts sampling `gpu` every `period`.
    pub fn start(gpu: &Gpu, period: Duration) -> Result<MemoryWatch> {
        let baseline = used_bytes(gpu)?;
        let stop = Arc::new(AtomicBool::new(false));
        let peak = Arc::new(AtomicUsize::new(baseline));
        let (gpu, stopping, highest) = (gpu.clone(), stop.clone(), peak.clone());
        let thread = std::thread::Builder::new()
            .name("zkgpu-memory-watch".into())
            .spawn(move || {
                loop {
                    // One more sample after the stop: the last level counts too.
                    let last = stopping.load(Ordering::Acquire);
                    highest.fetch_max(used_bytes(&gpu)?, Ordering::AcqRel);
                    if last {
                        return Ok(());
                    }
                    std::thread::sleep(period);
                }
            })
            .map_err(|e| Error::Pipeline(format!("cannot start the memory watch thread: {e}")))?;
        Ok(MemoryWatch { stop, peak, thread: Some(thread), baseline })
    }

    /// The highest level of device memory in use so far above the level at the start, in bytes.
    pub fn peak(&self) -> usize {
        self.peak.load(Ordering::Acquire).saturating_sub(self.baseline)
    }

    /// Stops sampling after one last sample: [`MemoryWatch::peak`], or the driver's error if a sample failed.
    pub fn stop(mut self) -> Result<usize> {
        self.stop.store(true, Ordering::Release);
        let thread = self.thread.take().ok_or_else(|| Error::Pipeline("memory watch already stopped".into()))?;
        thread.join().map_err(|_| Error::Pipeline("the memory watch thread panicked".into()))??;
        Ok(self.peak())
    }
}

impl Drop for MemoryWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Device memory in use now, by the driver's count.
fn used_bytes(gpu: &Gpu) -> Result<usize> {
    let (free, total) = gpu.memory_info()?;
    Ok(total.saturating_sub(free))
}
