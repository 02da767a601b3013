//! `soak_pipeline`: a long run of partition jobs as a 24/7 prover would run them, checking that nothing drifts:
//! results, device memory, host memory, the engines' state after errors.
//!
//! Three partition sizes (2^n, 2^(n+1), 2^(n+2)) rotate through one engine each, every job's inputs taken from
//! one uncapped `PinnedPool` (and its `h` downloaded into another), two jobs in flight. Each size has a G1
//! assignment with three queries and a G2 assignment with one. Every job's results and `h` must equal the
//! reference: the results of a second engine per size (same GPU, separate buffers), themselves checked
//! against the closed forms and the quotient identity (as in `pipeline_partition`); every 10th job is checked
//! against those closed forms too. Every 10th ticket is dropped unredeemed (the engine must collect its job)
//! and every 25th job cancelled. Every 50th job is
//! preceded by a malformed one (a shorter than the engine's size), which must fail with a typed error and
//! leave the engine working. Halfway, a memory hog takes the device's free memory for 50 jobs: they must go on
//! (jobs allocate nothing), and an engine made under it must fail with a typed error. Device free memory and the process's resident set are read after the first
//! rotation and at the end: growth beyond 8 MiB (device) or 64 MiB (host) fails the run.
//!
//! One timed run is the whole soak (`--reps 1 --warmup 0`); `--iters` sets the job count (default 1,000).
//! Extra JSON fields: `jobs`, `dropped`, `cancelled`, `failures_injected`, `wrong_results` (always 0 in a recorded row:
//! a wrong result fails the run), `device_growth_mib`, `rss_growth_mib`, `ms_per_job`.
use super::batch_add::generate_on_gpu;
use super::pipeline::{Generators, HostData, check, host_data};
use super::{BenchOp, Case, CaseOptions, Prepared, Target};
use crate::Result;
use blstrs::{G1Affine, Scalar};
use std::collections::VecDeque;
use std::time::Instant;
use zkgpu::pipeline::{
    AssignmentInput, JobTicket, PartitionConfig, PartitionEngine, PartitionJob, PartitionResults, PartitionSrs,
};
use zkgpu::{DeviceBuffer, Gpu, PinnedBuffer, PinnedMode, PinnedPool};

/// Jobs when `--iters` is not given.
const DEFAULT_JOBS: u32 = 1000;
/// Allowed growth of the device's used memory and of the host's resident set over the soak.
const DEVICE_SLACK_MIB: f64 = 8.0;
const RSS_SLACK_MIB: f64 = 64.0;
/// Device memory the soak's memory hog leaves free (the driver's own needs), and the jobs run under it.
const HOG_SPARE: usize = 256 << 20;
const HOG_JOBS: usize = 50;

pub struct SoakOp;

impl BenchOp for SoakOp {
    fn name(&self) -> &'static str {
        "soak_pipeline"
    }
    fn about(&self) -> &'static str {
        "1,000 partition jobs of three sizes through one pinned pool: results, device memory and RSS must not drift"
    }
    fn variants(&self, target: Target) -> &'static [&'static str] {
        target.pick(&["rotating"], &[])
    }
    fn in_default_sweep(&self) -> bool {
        false
    }
    fn default_sizes(&self, target: Target) -> &'static [u32] {
        target.pick(&[20], &[])
    }
    fn prepare<'g>(&self, gpu: Option<&'g Gpu>, _variant: &str, log_n: u32, opts: &CaseOptions) -> Prepared<'g> {
        let gpu = gpu.ok_or("the soak runs on a GPU only")?;
        let jobs = opts.iters.unwrap_or(DEFAULT_JOBS) as usize;
        let seed = opts.seed ^ 0x50a4_0000;
        let started = Instant::now();
        let sizes = (0..3)
            .map(|k| {
                let size = Size::prepare(gpu, 1 << (log_n + k), seed ^ u64::from(k));
                eprintln!("soak: 2^{} prepared at {:.1} s", log_n + k, started.elapsed().as_secs_f64());
                size
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Box::new(SoakCase {
            gpu,
            sizes,
            jobs,
            inputs: PinnedPool::new(gpu, PinnedMode::WriteCombined, None),
            outputs: PinnedPool::new(gpu, PinnedMode::ReadBack, None),
            stats: None,
        }))
    }
}

/// One partition size: its data, its soak engine, and the reference results of a second engine.
struct Size<'g> {
    n: usize,
    data: HostData,
    engine: PartitionEngine<'g>,
    expected: PartitionResults,
    expected_h: Vec<Scalar>,
    gens: Generators,
    seed: u64,
}

impl<'g> Size<'g> {
    fn prepare(gpu: &'g Gpu, n: usize, seed: u64) -> Result<Size<'g>> {
        let g2_len = n / 4;
        let gens = Generators::new(n, Some(g2_len), seed);
        let data = host_data(n, &[n, g2_len], seed)?;
        let engine = || make_engine(gpu, &gens, n);
        // The reference: a second engine's results, checked against the closed forms and the quotient identity.
        let mut reference = engine()?;
        let mut h = gpu.alloc_pinned::<Scalar>(n, PinnedMode::ReadBack)?;
        let ticket = reference.start(host_job(&data, Some(&mut h)))?;
        let expected = reference.finish(ticket)?.results;
        check(&gens, &data, &expected, &h, seed)?;
        let expected_h = h.to_vec();
        drop(reference);
        Ok(Size { n, data, engine: engine()?, expected, expected_h, gens, seed })
    }
}

/// An engine for size `n` (its SRS generated on the GPU from `gens`).
fn make_engine<'g>(gpu: &'g Gpu, gens: &Generators, n: usize) -> Result<PartitionEngine<'g>> {
    let mut srs = PartitionSrs::new(gpu, generate_on_gpu(gpu, &gens.h, n)?)?;
    let g1 = gens.g1.iter().map(|inp| generate_on_gpu(gpu, inp, n)).collect::<Result<Vec<DeviceBuffer<G1Affine>>>>()?;
    srs.add_assignment(gpu, g1, Vec::new())?;
    let g2 = gens.g2.as_ref().ok_or("the soak's sizes have a G2 query")?;
    srs.add_assignment(gpu, Vec::new(), vec![generate_on_gpu(gpu, g2, n / 4)?])?;
    Ok(PartitionEngine::new(gpu, srs, PartitionConfig::default())?)
}

/// A job over `data` in host memory, `h` downloaded into `h_out` when given.
fn host_job<'a>(data: &'a HostData, h_out: Option<&'a mut PinnedBuffer<Scalar>>) -> PartitionJob<'a> {
    PartitionJob {
        a: &data.a,
        b: &data.b,
        c: &data.c,
        assignments: data
            .assignments
            .iter()
            .map(|d| AssignmentInput { tail: &d.tail, tail_index: &d.tail_index, ones: &d.ones })
            .collect(),
        h_out,
    }
}

/// A job over pinned copies of the inputs.
fn pinned_job<'a>(p: &'a PinnedInputs, h_out: &'a mut PinnedBuffer<Scalar>) -> PartitionJob<'a> {
    PartitionJob {
        a: &p.a,
        b: &p.b,
        c: &p.c,
        assignments: p
            .assignments
            .iter()
            .map(|(tail, tail_index, ones)| AssignmentInput { tail, tail_index, ones })
            .collect(),
        h_out: Some(h_out),
    }
}

/// One job's inputs copied into buffers of the pool.
struct PinnedInputs {
    a: PinnedBuffer<Scalar>,
    b: PinnedBuffer<Scalar>,
    c: PinnedBuffer<Scalar>,
    assignments: Vec<(PinnedBuffer<Scalar>, PinnedBuffer<u32>, PinnedBuffer<u32>)>,
}

fn pooled<T: zkgpu::DeviceSafe>(pool: &PinnedPool, values: &[T]) -> Result<PinnedBuffer<T>> {
    let mut buffer = pool.take::<T>(values.len())?;
    buffer.copy_from_slice(values);
    Ok(buffer)
}

fn pin_inputs(pool: &PinnedPool, data: &HostData) -> Result<PinnedInputs> {
    Ok(PinnedInputs {
        a: pooled(pool, &data.a)?,
        b: pooled(pool, &data.b)?,
        c: pooled(pool, &data.c)?,
        assignments: data
            .assignments
            .iter()
            .map(|d| Ok((pooled(pool, &d.tail)?, pooled(pool, &d.tail_index)?, pooled(pool, &d.ones)?)))
            .collect::<Result<Vec<_>>>()?,
    })
}

/// What one soak counted.
#[derive(Clone, Copy, Default)]
struct Stats {
    jobs: usize,
    dropped: usize,
    cancelled: usize,
    failures_injected: usize,
    wrong_results: usize,
    device_growth_mib: f64,
    rss_growth_mib: f64,
    ms: f64,
}

struct SoakCase<'g> {
    gpu: &'g Gpu,
    sizes: Vec<Size<'g>>,
    jobs: usize,
    inputs: PinnedPool,
    outputs: PinnedPool,
    stats: Option<Stats>,
}

/// The process's resident set in bytes (Linux `/proc/self/statm`; 0 where there is none).
fn rss_bytes() -> f64 {
    let pages = std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1).and_then(|p| p.parse::<f64>().ok()))
        .unwrap_or(0.0);
    pages * 4096.0
}

/// What the soak does with a started job.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fate {
    Check,
    /// Also against the closed forms and the quotient identity.
    FullCheck,
    Cancel,
    /// Its ticket is dropped unredeemed.
    Drop,
}

/// A started job: which size, its ticket, its `h` buffer, and what becomes of it.
struct InFlight {
    size: usize,
    ticket: JobTicket,
    h: PinnedBuffer<Scalar>,
    fate: Fate,
}

impl SoakCase<'_> {
    fn used_device_bytes(&self) -> Result<f64> {
        self.gpu.synchronize()?;
        let (free, total) = self.gpu.memory_info()?;
        Ok((total - free) as f64)
    }

    /// Takes all but [`HOG_SPARE`] of the device's free memory. Jobs allocate nothing, so the next
    /// [`HOG_JOBS`] jobs must go on as before; a new engine cannot be made, and must say so with a typed error.
    fn memory_hog(&self, stats: &mut Stats) -> Result<DeviceBuffer<u8>> {
        let (free, _) = self.gpu.memory_info()?;
        let hog = self.gpu.alloc_zeroed::<u8>(free.saturating_sub(HOG_SPARE))?;
        let smallest = &self.sizes[0];
        match make_engine(self.gpu, &smallest.gens, smallest.n) {
            Err(e)
                if matches!(
                    e.downcast_ref::<zkgpu::Error>(),
                    Some(zkgpu::Error::OutOfMemory { .. } | zkgpu::Error::DeviceBudget { .. })
                ) =>
            {
                stats.failures_injected += 1
            }
            Err(e) => return Err(format!("soak: an engine made under a memory hog failed with {e}").into()),
            Ok(_) => return Err("soak: an engine was made with the device's memory taken".into()),
        }
        Ok(hog)
    }

    /// Finishes one job and checks it (a wrong result is counted; a failed closed-form check is an error), or
    /// cancels it, or drops its ticket.
    fn settle(&mut self, job: InFlight, stats: &mut Stats) -> Result<()> {
        let size = &mut self.sizes[job.size];
        match job.fate {
            Fate::Drop => {
                drop(job.ticket);
                stats.dropped += 1;
                return Ok(());
            }
            Fate::Cancel => {
                size.engine.cancel(job.ticket)?;
                stats.cancelled += 1;
                return Ok(());
            }
            Fate::Check | Fate::FullCheck => {}
        }
        let out = size.engine.finish(job.ticket)?;
        let right = out.results == size.expected && job.h[..] == size.expected_h[..];
        if !right {
            stats.wrong_results += 1;
        }
        if job.fate == Fate::FullCheck {
            check(&size.gens, &size.data, &out.results, &job.h, size.seed ^ stats.jobs as u64)?;
        }
        Ok(())
    }
}

impl Case for SoakCase<'_> {
    fn inputs(&self) -> &'static str {
        "pinned"
    }

    fn run(&mut self) -> Result<f64> {
        let mut stats = Stats::default();
        let mut pending: VecDeque<InFlight> = VecDeque::new();
        let mut baseline = None;
        let started = Instant::now();
        let mut hog = None;
        for k in 0..self.jobs {
            if k == self.jobs / 2 {
                hog = Some(self.memory_hog(&mut stats)?);
            } else if k == self.jobs / 2 + HOG_JOBS {
                hog = None;
            }
            let s = k % self.sizes.len();
            if k % 50 == 49 {
                // A malformed job: typed error, nothing started, the engine keeps working.
                let Size { n, data, engine, .. } = &mut self.sizes[s];
                let mut bad = host_job(data, None);
                bad.a = &data.a[..*n / 2];
                match engine.start(bad) {
                    Err(zkgpu::Error::LengthMismatch { .. }) => stats.failures_injected += 1,
                    Err(e) => return Err(format!("soak job {k}: a short input gave {e}, not LengthMismatch").into()),
                    Ok(_) => return Err(format!("soak job {k}: a short input was accepted").into()),
                }
            }
            let size = &mut self.sizes[s];
            let pinned = pin_inputs(&self.inputs, &size.data)?;
            let mut h = self.outputs.take::<Scalar>(size.n)?;
            let ticket = size.engine.start(pinned_job(&pinned, &mut h))?;
            drop(pinned); // back to the pool: start has finished reading it
            let fate = if k % 10 == 9 {
                Fate::Drop
            } else if k % 25 == 24 {
                Fate::Cancel
            } else if k % 10 == 0 {
                Fate::FullCheck
            } else {
                Fate::Check
            };
            pending.push_back(InFlight { size: s, ticket, h, fate });
            if pending.len() > 2
                && let Some(done) = pending.pop_front()
            {
                self.settle(done, &mut stats)?;
            }
            stats.jobs += 1;
            if stats.jobs % 100 == 0 {
                eprintln!("soak: {} jobs at {:.1} s", stats.jobs, started.elapsed().as_secs_f64());
            }
            if k + 1 == self.sizes.len() {
                baseline = Some((self.used_device_bytes()?, rss_bytes()));
            }
        }
        while let Some(done) = pending.pop_front() {
            self.settle(done, &mut stats)?;
        }
        drop(hog);
        stats.ms = started.elapsed().as_secs_f64() * 1e3;
        let (device0, rss0) = baseline.ok_or("the soak needs at least one job per size")?;
        stats.device_growth_mib = (self.used_device_bytes()? - device0) / (1u64 << 20) as f64;
        stats.rss_growth_mib = (rss_bytes() - rss0) / (1u64 << 20) as f64;
        self.stats = Some(stats);
        Ok(stats.ms)
    }

    fn verify(&mut self, _runs: u32) -> Result<()> {
        let s = self.stats.ok_or("the soak did not run")?;
        println!(
            "soak: {} jobs ({} dropped, {} cancelled, {} failures injected and refused with typed errors), {} wrong; device {:+.1} MiB, RSS {:+.1} MiB",
            s.jobs, s.dropped, s.cancelled, s.failures_injected, s.wrong_results, s.device_growth_mib, s.rss_growth_mib
        );
        if s.wrong_results > 0 {
            return Err(format!("soak: {} jobs returned wrong results", s.wrong_results).into());
        }
        if s.device_growth_mib > DEVICE_SLACK_MIB || s.rss_growth_mib > RSS_SLACK_MIB {
            return Err(format!(
                "soak: memory grew: device {:+.1} MiB (allowed {DEVICE_SLACK_MIB}), RSS {:+.1} MiB (allowed {RSS_SLACK_MIB})",
                s.device_growth_mib, s.rss_growth_mib
            )
            .into());
        }
        Ok(())
    }

    fn extra(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        if let Some(s) = self.stats {
            m.insert("jobs".into(), s.jobs.into());
            m.insert("dropped".into(), s.dropped.into());
            m.insert("cancelled".into(), s.cancelled.into());
            m.insert("failures_injected".into(), s.failures_injected.into());
            m.insert("wrong_results".into(), s.wrong_results.into());
            m.insert("device_growth_mib".into(), s.device_growth_mib.into());
            m.insert("rss_growth_mib".into(), s.rss_growth_mib.into());
            m.insert("ms_per_job".into(), (s.ms / s.jobs.max(1) as f64).into());
            m.insert("sizes_log2".into(), self.sizes.iter().map(|z| z.n.trailing_zeros()).collect::<Vec<_>>().into());
        }
        m
    }
}
