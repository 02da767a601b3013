//! Several GPUs: [`ProverPool`] (jobs to the least-loaded engine) and [`SplitMsm`] (one MSM split by point
//! ranges).
use super::*;

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

/// A ticket of a [`ProverPool`] job (dropping it cancels the job, as for [`JobTicket`]).
#[derive(Debug)]
#[must_use = "a started job's results are only returned by finish (dropping the ticket cancels the job)"]
pub struct PoolTicket {
    pub(super) engine: usize,
    pub(super) ticket: JobTicket,
}

impl PoolTicket {
    /// The engine (index in the pool) running the job.
    pub fn engine(&self) -> usize {
        self.engine
    }
}

/// Partition engines on several GPUs, jobs spread over them, from one thread. [`PartitionEngine::start`] returns
/// once its job's inputs are uploaded and may first collect the engine's previous MSM stage, so one thread
/// feeding several GPUs makes each wait for the others' waits; for the most throughput, give each engine its
/// own thread (an engine is `Send`), as `cargo xtask bench pipeline` does.
pub struct ProverPool<'g> {
    pub(super) engines: Vec<PartitionEngine<'g>>,
    pub(super) next: usize,
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

    /// Drops a job without its results ([`PartitionEngine::cancel`]).
    pub fn cancel(&mut self, ticket: PoolTicket) -> Result<()> {
        let count = self.engines.len();
        let e = self.engines.get_mut(ticket.engine).ok_or(Error::DeviceIndex { ordinal: ticket.engine, count })?;
        e.cancel(ticket.ticket)
    }
}

/// One MSM split over several GPUs: GPU `k` holds bases `ranges[k]` and computes that part of the sum.
pub struct SplitMsm<'g, C: Curve> {
    pub(super) n: usize,
    pub(super) parts: Vec<(Range<usize>, MsmBases<C>, Msm<'g, C>)>,
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
        let _span =
            tracing::info_span!("zkgpu.pipeline.split_msm", curve = C::NAME, n = self.n, gpus = self.parts.len())
                .entered();
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
pub fn msm_multi_gpu<C: Curve + Send + Sync>(
    gpus: &[Gpu],
    bases: &[C::Affine],
    scalars: &[Scalar],
) -> Result<C::Projective> {
    if bases.len() != scalars.len() {
        return Err(Error::LengthMismatch { what: "msm bases", expected: scalars.len(), actual: bases.len() });
    }
    SplitMsm::<C>::new(gpus, bases, &MsmConfig::default())?.run(scalars)
}

/// One report over several GPUs' reports (each on its own GPU's time axis): wall time the longest, kernel,
/// transfer and active times and bytes summed, busy fraction = summed kernel time / (GPUs × wall), H2D GB/s = bytes /
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
        out.active_ms += r.active_ms;
        out.phases.extend(r.phases.iter().cloned());
    }
    let k = reports.len().max(1) as f64;
    out.gpu_busy = if out.wall_ms > 0.0 { (out.kernel_ms / (k * out.wall_ms)).clamp(0.0, 1.0) } else { 0.0 };
    out.h2d_gbps = crate::profile::gbps(out.h2d_bytes, out.h2d_ms);
    out.d2h_gbps = crate::profile::gbps(out.d2h_bytes, out.d2h_ms);
    out
}
