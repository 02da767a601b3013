//! The partition pipeline on the GPU against the CPU reference (`zkgpu::pipeline::cpu`): whole jobs at
//! 2^10..2^16 from pinned buffers (results, `h`, the phase report), several jobs in flight (more than the
//! slots, finished out of order, one and two streams, one slot), bad input (typed errors, buffers and engine
//! unchanged), pinned-pool exhaustion, device OOM at engine creation, the split MSM over two GPUs (or two
//! handles of one GPU) against one GPU, a pool of engines, a soak of 200 jobs with device memory and the
//! pinned pool flat, and device-memory budgets (the H query streamed from pinned memory; assignment queries
//! streamed window by window; one slot where two do not fit, the driver's peak within the budget; a budget
//! too small). Seeds are printed. Needs a CUDA GPU:
//! `cargo xtask test --gpu`.
mod common;

use blstrs::{G1Affine, G2Affine, Scalar};
use common::gpu::gpu;
use common::msm_cases::random_scalars;
use common::pipeline_cases::{JobData, job_data};
use common::points::distinct_points;
use common::seeded_rng;
use ff::Field;
use rand_chacha::ChaCha20Rng;
use zkgpu::curve::{G1, G2};
use zkgpu::msm::cpu::msm_cpu;
use zkgpu::msm::{MsmConfig, msm};
use zkgpu::pipeline::cpu::{AssignmentQueries, partition_cpu};
use zkgpu::pipeline::{
    AssignmentInput, BUDGET_RESERVE, PartitionConfig, PartitionEngine, PartitionJob, PartitionResults, PartitionSrs,
    ProverPool, SplitMsm, StreamMode, msm_multi_gpu,
};
use zkgpu::profile::PhaseKind;
use zkgpu::{Error, Gpu, MemoryWatch, PinnedBuffer, PinnedMode, PinnedPool};

/// Tests run on parallel threads. The two that compare the device's free memory before and after (the soak
/// and the OOM test) hold this lock exclusively and every other test holds it shared, so no other test's
/// allocations can move their numbers.
static DEVICE_MEMORY: std::sync::RwLock<()> = std::sync::RwLock::new(());

fn shared_device_memory() -> std::sync::RwLockReadGuard<'static, ()> {
    DEVICE_MEMORY.read().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn exclusive_device_memory() -> std::sync::RwLockWriteGuard<'static, ()> {
    DEVICE_MEMORY.write().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A partition's proving key on the host: H query, three G1 queries on assignment 0, one G2 query on
/// assignment 1 (when `g2`).
struct HostSrs {
    h: Vec<G1Affine>,
    g1: Vec<Vec<G1Affine>>,
    g2: Vec<Vec<G2Affine>>,
    lens: Vec<usize>,
}

/// Assignment 0 is `n + 37` long (not a multiple of 32), assignment 1 (G2) `n / 4 + 5`.
fn host_srs(rng: &mut ChaCha20Rng, n: usize, g2: bool) -> HostSrs {
    let mut lens = vec![n + 37];
    let h = distinct_points::<G1>(rng, n);
    let g1 = (0..3).map(|_| distinct_points::<G1>(rng, lens[0])).collect();
    let g2 = if g2 {
        lens.push(n / 4 + 5);
        vec![distinct_points::<G2>(rng, lens[1])]
    } else {
        Vec::new()
    };
    HostSrs { h, g1, g2, lens }
}

impl HostSrs {
    fn upload(&self, gpu: &Gpu) -> PartitionSrs {
        self.with_queries(gpu, PartitionSrs::upload(gpu, &self.h).unwrap())
    }

    /// The H query in pinned memory from `pool` (the engine places it within its budget), the others uploaded.
    fn pinned(&self, gpu: &Gpu, pool: &PinnedPool) -> PartitionSrs {
        let mut h = pool.take::<G1Affine>(self.h.len()).unwrap();
        h.copy_from_slice(&self.h);
        self.with_queries(gpu, PartitionSrs::pinned(gpu, h).unwrap())
    }

    /// Every assignment's queries in pinned memory from `pool` (they stream in every job unless the budget
    /// has room), H too where `h_pinned` (else uploaded).
    fn streamed_queries(&self, gpu: &Gpu, pool: &PinnedPool, h_pinned: bool) -> PartitionSrs {
        fn pinned<T: zkgpu::DeviceSafe + Copy>(pool: &PinnedPool, points: &[T]) -> PinnedBuffer<T> {
            let mut p = pool.take::<T>(points.len()).unwrap();
            p.copy_from_slice(points);
            p
        }
        let mut srs = match h_pinned {
            true => PartitionSrs::pinned(gpu, pinned(pool, &self.h)).unwrap(),
            false => PartitionSrs::upload(gpu, &self.h).unwrap(),
        };
        srs.add_assignment_pinned(self.g1.iter().map(|q| pinned(pool, q)).collect(), Vec::new()).unwrap();
        if !self.g2.is_empty() {
            srs.add_assignment_pinned(Vec::new(), self.g2.iter().map(|q| pinned(pool, q)).collect()).unwrap();
        }
        srs
    }

    fn with_queries(&self, gpu: &Gpu, mut srs: PartitionSrs) -> PartitionSrs {
        let g1: Vec<&[G1Affine]> = self.g1.iter().map(Vec::as_slice).collect();
        srs.add_assignment_host(gpu, &g1, &[]).unwrap();
        if !self.g2.is_empty() {
            let g2: Vec<&[G2Affine]> = self.g2.iter().map(Vec::as_slice).collect();
            srs.add_assignment_host(gpu, &[], &g2).unwrap();
        }
        srs
    }

    fn reference(&self, data: &JobData) -> (PartitionResults, Vec<Scalar>) {
        let g1: Vec<&[G1Affine]> = self.g1.iter().map(Vec::as_slice).collect();
        let g2: Vec<&[G2Affine]> = self.g2.iter().map(Vec::as_slice).collect();
        let mut queries = vec![AssignmentQueries { len: self.lens[0], g1: &g1, g2: &[] }];
        if !self.g2.is_empty() {
            queries.push(AssignmentQueries { len: self.lens[1], g1: &[], g2: &g2 });
        }
        partition_cpu(&self.h, &queries, &data.job()).unwrap()
    }
}

/// A job's inputs copied into pinned buffers from `pool`.
struct PinnedJob {
    a: PinnedBuffer<Scalar>,
    b: PinnedBuffer<Scalar>,
    c: PinnedBuffer<Scalar>,
    tails: Vec<PinnedBuffer<Scalar>>,
    tail_index: Vec<PinnedBuffer<u32>>,
    ones: Vec<PinnedBuffer<u32>>,
}

fn pin(pool: &PinnedPool, data: &JobData) -> zkgpu::Result<PinnedJob> {
    let scalars = |v: &[Scalar]| -> zkgpu::Result<PinnedBuffer<Scalar>> {
        let mut p = pool.take::<Scalar>(v.len())?;
        p.copy_from_slice(v);
        Ok(p)
    };
    let words = |v: &[u32]| -> zkgpu::Result<PinnedBuffer<u32>> {
        let mut p = pool.take::<u32>(v.len())?;
        p.copy_from_slice(v);
        Ok(p)
    };
    Ok(PinnedJob {
        a: scalars(&data.a)?,
        b: scalars(&data.b)?,
        c: scalars(&data.c)?,
        tails: data.assignments.iter().map(|d| scalars(&d.tail)).collect::<zkgpu::Result<_>>()?,
        tail_index: data.assignments.iter().map(|d| words(&d.tail_index)).collect::<zkgpu::Result<_>>()?,
        ones: data.assignments.iter().map(|d| words(&d.ones)).collect::<zkgpu::Result<_>>()?,
    })
}

impl PinnedJob {
    fn job<'a>(&'a self, h_out: Option<&'a mut PinnedBuffer<Scalar>>) -> PartitionJob<'a> {
        PartitionJob {
            a: &self.a,
            b: &self.b,
            c: &self.c,
            assignments: (0..self.tails.len())
                .map(|i| AssignmentInput { tail: &self.tails[i], tail_index: &self.tail_index[i], ones: &self.ones[i] })
                .collect(),
            h_out,
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn job_matches_the_reference() {
    let _memory = shared_device_memory();
    let gpu = gpu();
    let mut rng = seeded_rng("job_matches_the_reference");
    let pool = PinnedPool::new(&gpu, PinnedMode::ReadBack, None);
    for (log_n, g2) in [(10u32, true), (13, false), (16, true)] {
        let n = 1usize << log_n;
        let host = host_srs(&mut rng, n, g2);
        let mut engine = PartitionEngine::new(&gpu, host.upload(&gpu), PartitionConfig::default()).unwrap();
        let data = job_data(&mut rng, n, &host.lens, false);
        let (expected, expected_h) = host.reference(&data);
        let pinned = pin(&pool, &data).unwrap();
        let mut h_out = pool.take::<Scalar>(n).unwrap();
        let ticket = engine.start(pinned.job(Some(&mut h_out))).unwrap();
        let out = engine.finish(ticket).unwrap();
        assert_eq!(out.results, expected, "results at 2^{log_n}");
        assert!(h_out[..] == expected_h[..], "h at 2^{log_n}");

        let r = &out.report;
        let uploaded = 3 * n * 32
            + data.assignments.iter().map(|d| d.tail.len() * 36 + d.values.len().div_ceil(32) * 4).sum::<usize>();
        assert_eq!(r.h2d_bytes, uploaded, "every upload is a phase");
        assert!(r.d2h_bytes >= n * 32, "h and the results are downloads");
        assert!(r.wall_ms > 0.0 && r.kernel_ms > 0.0 && r.gpu_busy > 0.0 && r.gpu_busy <= 1.0, "{r:?}");
        assert!(r.h2d_gbps > 0.0);
        for name in [
            "h2d.a",
            "h2d.b",
            "h2d.c",
            "h2d.tail0",
            "h2d.tail_index0",
            "h2d.ones0",
            "ntt.h.a",
            "ntt.h.b",
            "ntt.h.c",
            "ntt.h.interpolate",
            "ntt.h.subtract",
            "msm.h",
            "batch_add.0.g1",
            "msm.tail.0.g1",
            "d2h.h",
        ] {
            assert!(r.phases.iter().any(|p| p.name == name), "phase {name} missing: {:?}", r.phases);
        }
        assert!(r.phases.iter().all(|p| p.end_ms >= p.start_ms));
        let phase = |name: &str| r.phases.iter().find(|p| p.name == name).unwrap();
        // Each vector's transforms start after its own upload; the combine step after all three transforms.
        for v in ["a", "b", "c"] {
            let (ntt, up) = (phase(&format!("ntt.h.{v}")), phase(&format!("h2d.{v}")));
            assert!(ntt.start_ms >= up.end_ms - 1e-3, "the NTTs of {v} start after {v} is uploaded");
            assert_eq!(ntt.kind, PhaseKind::Kernel);
            assert!(ntt.ms() > 0.0, "ntt.h.{v} takes time: {ntt:?}");
        }
        let (interpolate, combine) = (phase("ntt.h.interpolate"), phase("ntt.h.subtract"));
        for p in [interpolate, combine] {
            assert_eq!(p.kind, PhaseKind::Kernel);
            assert!(p.ms() > 0.0, "{} takes time: {p:?}", p.name);
        }
        // B's transforms first, then A's with B's product, A's interpolation, C's transforms, the subtraction.
        assert!(phase("ntt.h.a").start_ms >= phase("ntt.h.b").end_ms - 1e-3);
        assert!(interpolate.start_ms >= phase("ntt.h.a").end_ms - 1e-3);
        assert!(phase("ntt.h.c").start_ms >= interpolate.end_ms - 1e-3);
        assert!(combine.start_ms >= phase("ntt.h.c").end_ms - 1e-3, "the subtraction runs after the three transforms");
        assert!(phase("d2h.h").start_ms >= combine.end_ms - 1e-3, "h is downloaded after it is computed");
        let (tail, msm) = (phase("h2d.tail0"), phase("msm.h"));
        assert!(msm.start_ms >= tail.end_ms - 1e-3, "the MSM stage starts after the tails are uploaded");
        assert!(msm.start_ms >= combine.end_ms - 1e-3, "the H MSM starts after h is computed");
        let ntt_sum: f64 = ["ntt.h.a", "ntt.h.b", "ntt.h.c", "ntt.h.interpolate", "ntt.h.subtract"]
            .iter()
            .map(|n| phase(n).ms())
            .sum();
        assert!((r.kernel_ms_of("ntt.") - ntt_sum).abs() < 1e-9, "the NTT phases are all under ntt.");
        println!("2^{log_n}: {:.2} ms wall, busy {:.2}, H2D {:.1} GB/s", r.wall_ms, r.gpu_busy, r.h2d_gbps);
    }
}

/// Four jobs started before any is finished (more than the slots), finished out of order.
fn jobs_in_flight(config: PartitionConfig, name: &str) {
    let gpu = gpu();
    let mut rng = seeded_rng(name);
    let n = 1 << 11;
    let host = host_srs(&mut rng, n, true);
    let mut engine = PartitionEngine::new(&gpu, host.upload(&gpu), config).unwrap();
    let pool = PinnedPool::new(&gpu, PinnedMode::WriteCombined, None);
    let data: Vec<JobData> = (0..4).map(|_| job_data(&mut rng, n, &host.lens, true)).collect();
    let mut tickets = Vec::new();
    for d in &data {
        // The pinned buffers go back to the pool as soon as start returns: the next job reuses them.
        let pinned = pin(&pool, d).unwrap();
        tickets.push(Some(engine.start(pinned.job(None)).unwrap()));
    }
    assert_eq!(engine.in_flight(), 4);
    for k in [2usize, 0, 3, 1] {
        let out = engine.finish(tickets[k].take().unwrap()).unwrap();
        assert_eq!(out.results, host.reference(&data[k]).0, "{name}: job {k}");
        // Whatever the streams, each vector's transforms are one phase that starts after its own upload.
        let phase = |p: &str| {
            out.report.phases.iter().find(|q| q.name == p).unwrap_or_else(|| panic!("{name}: job {k}: no {p}"))
        };
        for v in ["a", "b", "c"] {
            assert!(
                phase(&format!("ntt.h.{v}")).start_ms >= phase(&format!("h2d.{v}")).end_ms - 1e-3,
                "{name}: job {k}: ntt.h.{v}"
            );
        }
        assert!(phase("ntt.h.subtract").start_ms >= phase("ntt.h.c").end_ms - 1e-3, "{name}: job {k}");
    }
    assert_eq!(engine.in_flight(), 0);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn several_jobs_in_flight_two_streams() {
    let _memory = shared_device_memory();
    jobs_in_flight(PartitionConfig::default(), "several_jobs_in_flight_two_streams");
}

/// Tickets: `max_in_flight` bounds the jobs an engine holds (starting one more is a typed error that changes
/// nothing); a cancelled job and a job whose ticket was dropped free their places; the jobs around them still
/// give the reference results.
#[test]
#[ignore = "needs a CUDA GPU"]
fn cancelled_jobs_free_their_place_and_the_bound_holds() {
    let _memory = shared_device_memory();
    let gpu = gpu();
    let mut rng = seeded_rng("cancelled_jobs_free_their_place_and_the_bound_holds");
    let n = 1 << 11;
    let host = host_srs(&mut rng, n, true);
    let config = PartitionConfig { max_in_flight: 3, ..Default::default() };
    let mut engine = PartitionEngine::new(&gpu, host.upload(&gpu), config).unwrap();
    let pool = PinnedPool::new(&gpu, PinnedMode::WriteCombined, None);
    let data: Vec<JobData> = (0..5).map(|_| job_data(&mut rng, n, &host.lens, true)).collect();
    let start = |engine: &mut PartitionEngine<'_>, d: &JobData| engine.start(pin(&pool, d).unwrap().job(None));
    let t0 = start(&mut engine, &data[0]).unwrap();
    let t1 = start(&mut engine, &data[1]).unwrap();
    let t2 = start(&mut engine, &data[2]).unwrap();
    match start(&mut engine, &data[3]) {
        Err(zkgpu::Error::Pipeline(why)) => assert!(why.contains("max_in_flight"), "{why}"),
        other => panic!("a fourth job over max_in_flight = 3 gave {:?}", other.map(|t| t.id())),
    }
    assert_eq!(engine.in_flight(), 3);
    engine.cancel(t1).unwrap();
    assert_eq!(engine.in_flight(), 2);
    drop(t2);
    assert_eq!(engine.in_flight(), 1, "a dropped ticket's job does not count");
    // Both places are free again: the next start collects the abandoned job.
    let t3 = start(&mut engine, &data[3]).unwrap();
    let t4 = start(&mut engine, &data[4]).unwrap();
    assert_eq!(engine.in_flight(), 3);
    for (ticket, k) in [(t0, 0), (t3, 3), (t4, 4)] {
        assert_eq!(engine.finish(ticket).unwrap().results, host.reference(&data[k]).0, "job {k}");
    }
    assert_eq!(engine.in_flight(), 0);
}

/// A job allocates no device memory: everything it uses (results of every query included) is allocated by
/// `PartitionEngine::new`, so a job cannot run out of memory after the engine was built. Free device memory,
/// read from the driver, is the same before and after three jobs.
#[test]
#[ignore = "needs a CUDA GPU"]
fn jobs_allocate_no_device_memory() {
    // Exclusive: it reads the device's free memory, which a test running beside it would change.
    let _memory = exclusive_device_memory();
    let gpu = gpu();
    let mut rng = seeded_rng("jobs_allocate_no_device_memory");
    let n = 1 << 12;
    let host = host_srs(&mut rng, n, true);
    let mut engine = PartitionEngine::new(&gpu, host.upload(&gpu), PartitionConfig::default()).unwrap();
    let pool = PinnedPool::new(&gpu, PinnedMode::WriteCombined, None);
    let data: Vec<JobData> = (0..3).map(|_| job_data(&mut rng, n, &host.lens, true)).collect();
    gpu.synchronize().unwrap();
    let (free_before, _) = gpu.memory_info().unwrap();
    let engine_before = engine.device_bytes();
    for d in &data {
        let ticket = engine.start(pin(&pool, d).unwrap().job(None)).unwrap();
        assert_eq!(engine.finish(ticket).unwrap().results, host.reference(d).0);
    }
    gpu.synchronize().unwrap();
    let (free_after, _) = gpu.memory_info().unwrap();
    assert_eq!(free_before, free_after, "jobs allocated {} bytes", free_before as i64 - free_after as i64);
    // The engine's own count too: the driver pools small allocations, which its free memory does not show.
    assert_eq!(engine.device_bytes(), engine_before, "a job grew the engine");
}

/// A budget one byte short of the resident working set: the H query (given in pinned memory) streams through
/// the H MSM, the engine holds at most the budget, and its jobs (three in flight) equal the resident engine's
/// and the CPU reference. With the resident set's budget the same pinned H is uploaded.
#[test]
#[ignore = "needs a CUDA GPU"]
fn h_query_streams_within_a_budget() {
    let _memory = shared_device_memory();
    let gpu = gpu();
    let mut rng = seeded_rng("h_query_streams_within_a_budget");
    // Large enough that streaming H saves memory: its staging (chunks of 2^16 points) is much smaller than H.
    // At 2^12 and 2^15 the smallest streamed set exceeded the resident one (H200 run of 5eb35ea).
    let n = 1 << 20;
    let host = host_srs(&mut rng, n, false);
    let mut resident = PartitionEngine::new(&gpu, host.upload(&gpu), PartitionConfig::default()).unwrap();
    let full = resident.device_bytes();
    assert!(!resident.memory().h_streamed);
    let pool = PinnedPool::new(&gpu, PinnedMode::WriteCombined, None);

    let roomy = PartitionConfig { max_device_bytes: Some(full + BUDGET_RESERVE), ..Default::default() };
    let uploaded = PartitionEngine::new(&gpu, host.pinned(&gpu, &pool), roomy).unwrap();
    assert_eq!(
        uploaded.memory(),
        zkgpu::pipeline::EngineMemory {
            budget: full + BUDGET_RESERVE,
            device_bytes: full,
            h_streamed: false,
            streamed_assignments: 0,
            streamed_bytes_per_job: 0,
            slots: 2,
            c_shares_b: false,
            query_window: None,
        }
    );
    drop(uploaded);

    let tight = PartitionConfig { max_device_bytes: Some(full + BUDGET_RESERVE - 1), ..Default::default() };
    let mut streamed = PartitionEngine::new(&gpu, host.pinned(&gpu, &pool), tight).unwrap();
    let memory = streamed.memory();
    println!("resident {full} bytes; streamed {memory:?}");
    assert!(memory.h_streamed && !memory.c_shares_b && memory.device_bytes < full, "{memory:?}");
    assert_eq!(memory.streamed_bytes_per_job, n * size_of::<G1Affine>());

    let data: Vec<JobData> = (0..3).map(|_| job_data(&mut rng, n, &host.lens, true)).collect();
    let mut tickets = Vec::new();
    for d in &data {
        let pinned = pin(&pool, d).unwrap();
        tickets.push((streamed.start(pinned.job(None)).unwrap(), resident.start(pinned.job(None)).unwrap()));
    }
    for ((s, r), d) in tickets.into_iter().zip(&data) {
        let (s, r) = (streamed.finish(s).unwrap(), resident.finish(r).unwrap().results);
        // Every streamed chunk is an H2D phase of the job (h2d.h.0, h2d.h.1, ...), counted in its H2D rate.
        let chunks: Vec<_> = s.report.phases.iter().filter(|p| p.name.starts_with("h2d.h.")).collect();
        let bytes: usize = chunks.iter().map(|p| p.bytes).sum();
        assert!(!chunks.is_empty() && chunks.iter().all(|p| p.kind == PhaseKind::H2d && p.ms() > 0.0), "{chunks:?}");
        assert_eq!(bytes, memory.streamed_bytes_per_job, "{chunks:?}");
        assert!(s.report.h2d_bytes >= bytes && s.report.h2d_gbps > 0.0, "{:?}", s.report);
        println!("{} streamed chunks, H2D {:.1} GB/s over the job", chunks.len(), s.report.h2d_gbps);
        assert_eq!(s.results, r, "streamed H against resident");
        assert_eq!(s.results, host.reference(d).0, "streamed H against the CPU");
    }
    assert!(streamed.device_bytes() < full, "a job grew the streamed engine");
}

/// Assignment queries given in pinned memory: uploaded where the budget has room (the default); within the
/// least budget the engine states (one slot) and within that plus a slot (two slots), both assignments stream
/// window by window through every job (G1 and G2; windows of 64 and 4096 positions and one window for a whole
/// assignment). Results equal the resident engine's and the CPU's, with garbage bits past the assignment's
/// length in the last bitmap word, with windows holding no tail entry, with windows whose every scalar is a
/// tail entry (sorted in parts), and every window of every query
/// uploaded once as an H2D phase. A tail that is not ascending fails its job with `IndexOutOfRange` (an entry
/// outside the window it falls in), and the next job is right.
#[test]
#[ignore = "needs a CUDA GPU"]
fn assignment_queries_stream_from_pinned_memory() {
    let _memory = shared_device_memory();
    let gpu = gpu();
    let mut rng = seeded_rng("assignment_queries_stream_from_pinned_memory");
    let n = 1 << 16;
    let host = host_srs(&mut rng, n, true);
    let pool = PinnedPool::new(&gpu, PinnedMode::WriteCombined, None);
    let mut resident = PartitionEngine::new(&gpu, host.upload(&gpu), PartitionConfig::default()).unwrap();
    let mut data: Vec<JobData> = (0..2).map(|_| job_data(&mut rng, n, &host.lens, true)).collect();
    // Tail entries only in the assignment's last 100 positions (every other window has none), and garbage
    // bits past its length in the last bitmap word (never read).
    let mut sparse = job_data(&mut rng, n, &host.lens, true);
    for d in &mut sparse.assignments {
        let len = d.values.len();
        for (i, v) in d.values.iter_mut().enumerate() {
            if i < len - 100 && *v != Scalar::ZERO && *v != Scalar::ONE {
                *v = Scalar::ONE;
            }
        }
        d.tail.resize(len, Scalar::ZERO);
        d.tail_index.resize(len, 0);
        let k = zkgpu::pipeline::split_assignment(&d.values, &mut d.ones, &mut d.tail, &mut d.tail_index).unwrap();
        d.tail.truncate(k);
        d.tail_index.truncate(k);
        assert!(k > 0 && d.tail_index[0] as usize >= len - 100);
        if let (Some(last), true) = (d.ones.last_mut(), len % 32 != 0) {
            *last |= !0u32 << (len % 32);
        }
    }
    data.push(sparse);
    // Every scalar a tail entry: each window holds more entries than a streamed window's tail plan sorts at
    // once (four times the expected share of a window), so each is sorted in parts.
    let mut dense = job_data(&mut rng, n, &host.lens, true);
    for d in &mut dense.assignments {
        let len = d.values.len();
        d.values = (0..len).map(|_| Scalar::random(&mut rng)).collect();
        d.tail.resize(len, Scalar::ZERO);
        d.tail_index.resize(len, 0);
        let k = zkgpu::pipeline::split_assignment(&d.values, &mut d.ones, &mut d.tail, &mut d.tail_index).unwrap();
        assert_eq!(k, len, "random scalars are neither 0 nor 1");
    }
    data.push(dense);
    let run = |engine: &mut PartitionEngine, resident: &mut PartitionEngine, d: &JobData, what: &str| {
        let pinned = pin(&pool, d).unwrap();
        let (s, r) = (engine.start(pinned.job(None)).unwrap(), resident.start(pinned.job(None)).unwrap());
        let (s, r) = (engine.finish(s).unwrap(), resident.finish(r).unwrap().results);
        assert_eq!(s.results, r, "{what}: against the resident engine");
        assert_eq!(s.results, host.reference(d).0, "{what}: against the CPU");
        s.report
    };

    let mut uploaded =
        PartitionEngine::new(&gpu, host.streamed_queries(&gpu, &pool, false), PartitionConfig::default()).unwrap();
    assert_eq!(uploaded.memory().streamed_assignments, 0, "pinned queries that fit are uploaded");
    assert_eq!(uploaded.device_bytes(), resident.device_bytes());
    run(&mut uploaded, &mut resident, &data[0], "uploaded pinned queries");
    drop(uploaded);

    let query_bytes = host.lens[0] * 3 * size_of::<G1Affine>() + host.lens[1] * size_of::<G2Affine>();
    // With H in pinned memory too, the least budget streams it as well: its chunks interleave with the
    // query windows. Staging three windows deep (`window_staging`) needs more room and gives the same results.
    let mut least_double_buffered = 0;
    for (window, h_pinned, depth) in
        [(64, false, 2), (4096, false, 2), (4096, true, 2), (4096, true, 3), (1 << 22, false, 2)]
    {
        let config = |budget| PartitionConfig {
            query_window: Some(window),
            max_device_bytes: Some(budget),
            window_staging: depth,
            ..Default::default()
        };
        let needed =
            |budget| match PartitionEngine::new(&gpu, host.streamed_queries(&gpu, &pool, h_pinned), config(budget)) {
                Err(Error::DeviceBudget { needed, .. }) => needed,
                other => panic!("window {window}, budget {budget}: {:?}", other.map(|e| e.memory())),
            };
        let least = needed(needed(0));
        match (window, h_pinned, depth) {
            (4096, true, 2) => least_double_buffered = least,
            (4096, true, 3) => assert!(least > least_double_buffered, "{least} against {least_double_buffered}"),
            _ => {}
        }
        // A slot: a, b, c, the tails with their positions, and the bitmaps padded to whole windows.
        let slot = 3 * n * 32
            + host
                .lens
                .iter()
                .map(|&m| {
                    m * 36 + m.div_ceil(window.min(m.next_multiple_of(32))) * window.min(m.next_multiple_of(32)) / 8
                })
                .sum::<usize>();
        // The least: one slot whose C shares B's buffer; then two such; then two whole slots.
        let vector = n * 32;
        let budgets = [
            (least, 1, true),
            (least + slot - vector + (512 << 10), 2, true),
            (least + slot + vector + (512 << 10), 2, false),
        ];
        for (budget, slots, c_shares_b) in budgets {
            let mut engine =
                PartitionEngine::new(&gpu, host.streamed_queries(&gpu, &pool, h_pinned), config(budget)).unwrap();
            let memory = engine.memory();
            println!("window {window}, H pinned {h_pinned}, staging {depth}, budget {budget}: {memory:?}");
            assert_eq!((memory.slots, memory.streamed_assignments, memory.c_shares_b), (slots, 2, c_shares_b));
            assert!(memory.h_streamed || !(h_pinned && budget == least), "{memory:?}");
            let h_bytes = if memory.h_streamed { n * size_of::<G1Affine>() } else { 0 };
            assert_eq!(memory.streamed_bytes_per_job, query_bytes + h_bytes);
            assert!(memory.device_bytes <= budget && memory.device_bytes < resident.device_bytes(), "{memory:?}");
            for (j, d) in data.iter().enumerate() {
                let r = run(&mut engine, &mut resident, d, &format!("window {window}, {slots} slots, job {j}"));
                let copies: Vec<_> = r
                    .phases
                    .iter()
                    .filter(|p| p.name.starts_with("h2d.0.g1.") || p.name.starts_with("h2d.1.g2."))
                    .collect();
                assert!(copies.iter().all(|p| p.kind == PhaseKind::H2d && p.bytes > 0), "{copies:?}");
                assert_eq!(copies.iter().map(|p| p.bytes).sum::<usize>(), query_bytes, "each window once");
                let h_copies: usize = r.phases.iter().filter(|p| p.name.starts_with("h2d.h.")).map(|p| p.bytes).sum();
                assert_eq!(h_copies, h_bytes, "each chunk of a streamed H once");
                // Per step: its kernels (a query window's batch addition, every step's MSM chunk) start once its
                // copy is done.
                let steps: Vec<_> =
                    r.phases.iter().filter(|p| p.name.starts_with("add.") || p.name.starts_with("chunk.")).collect();
                let all_steps = copies.len() + r.phases.iter().filter(|p| p.name.starts_with("h2d.h.")).count();
                assert_eq!(steps.len(), copies.len() + all_steps, "an addition per window, a chunk per step");
                for p in steps {
                    let step = p.name.split_once('.').map_or("", |(_, rest)| rest);
                    let copy = r.phases.iter().find(|c| c.name == format!("h2d.{step}")).expect("the step's copy");
                    assert!(
                        p.kind == PhaseKind::Kernel && p.start_ms >= copy.end_ms - 1e-3,
                        "{} after its copy",
                        p.name
                    );
                }
                for name in ["msm.stream.0.g1", "msm.stream.1.g2"] {
                    assert!(r.phases.iter().any(|p| p.name == name), "phase {name} missing");
                }
            }
            // Reversed tails: with several windows an entry falls outside its window and the job fails.
            if window < host.lens[1] {
                let mut reversed = job_data(&mut rng, n, &host.lens, true);
                for d in &mut reversed.assignments {
                    d.tail.reverse();
                    d.tail_index.reverse();
                }
                let pinned = pin(&pool, &reversed).unwrap();
                let ticket = engine.start(pinned.job(None)).unwrap();
                match engine.finish(ticket) {
                    Err(Error::IndexOutOfRange { .. }) => {}
                    other => panic!("window {window}: reversed tails gave {:?}", other.map(|o| o.results)),
                }
                run(&mut engine, &mut resident, &data[0], &format!("window {window}, after a failed job"));
            }
        }
    }
}

/// Budgets below the resident two-slot set, with H on the device (nothing to stream): a byte short, the
/// engine keeps two slots whose C shares B's buffer; two vectors and a byte short, it makes one whole slot.
/// By the driver's own count (sampled while it is made and runs its jobs) it never holds more than the
/// budget. Its jobs, G1 and G2, three started back to back (each start then waits for the previous job's
/// MSM stage or B's transforms), equal the two-slot engine's.
#[test]
#[ignore = "needs a CUDA GPU"]
fn shared_buffers_then_one_slot_where_two_do_not_fit() {
    let _memory = exclusive_device_memory();
    let gpu = gpu();
    let mut rng = seeded_rng("shared_buffers_then_one_slot_where_two_do_not_fit");
    // Large enough that a slot (~150 MB) dwarfs the allocator's rounding of the engine's allocations.
    let n = 1 << 20;
    let host = host_srs(&mut rng, n, true);
    let pool = PinnedPool::new(&gpu, PinnedMode::WriteCombined, None);
    let data: Vec<JobData> = (0..3).map(|_| job_data(&mut rng, n, &host.lens, true)).collect();
    let pinned: Vec<PinnedJob> = data.iter().map(|d| pin(&pool, d).unwrap()).collect();
    // The two-slot engine runs first, so every kernel is loaded (and its local memory reserved) before the watch.
    let mut two = PartitionEngine::new(&gpu, host.upload(&gpu), PartitionConfig::default()).unwrap();
    assert_eq!(two.memory().slots, 2);
    let expected: Vec<PartitionResults> = pinned
        .iter()
        .map(|p| {
            let ticket = two.start(p.job(None)).unwrap();
            two.finish(ticket).unwrap().results
        })
        .collect();
    let full = two.device_bytes();
    gpu.synchronize().unwrap();

    let budget = full + BUDGET_RESERVE;
    for (budget, slots, c_shares_b) in [(budget - 1, 2, true), (budget - 2 * n * 32 - 1, 1, false)] {
        // The previous engine's memory back first (the driver returns freed memory at a synchronization), so
        // that the watch's start counts none of it.
        gpu.synchronize().unwrap();
        let watch = MemoryWatch::start(&gpu, std::time::Duration::from_micros(100)).unwrap();
        let config = PartitionConfig { max_device_bytes: Some(budget), ..Default::default() };
        let mut engine = PartitionEngine::new(&gpu, host.upload(&gpu), config).unwrap();
        let memory = engine.memory();
        assert_eq!(
            (memory.slots, memory.c_shares_b, memory.h_streamed, memory.budget),
            (slots, c_shares_b, false, budget),
            "{memory:?}"
        );
        assert!(memory.device_bytes + BUDGET_RESERVE <= budget, "{memory:?}");
        let tickets: Vec<_> = pinned.iter().map(|p| engine.start(p.job(None)).unwrap()).collect();
        for (ticket, expected) in tickets.into_iter().zip(&expected) {
            assert_eq!(&engine.finish(ticket).unwrap().results, expected, "{memory:?} against two whole slots");
        }
        gpu.synchronize().unwrap();
        let peak = watch.stop().unwrap();
        println!("budget {budget} bytes, engine {} bytes, driver's peak {peak} bytes", memory.device_bytes);
        assert!(peak <= budget, "the driver counted {peak} bytes in use for a budget of {budget}");
    }
}

/// A budget below the smallest working set is `Err(DeviceBudget)` naming it, and leaves nothing allocated:
/// far below (the SRS and one slot, refused before allocating) and just above that floor (refused once the
/// tables and scratch are sized). The minimum the refusal states is enough, and the GPU runs a job as before.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_budget_below_the_working_set_is_refused() {
    let _memory = exclusive_device_memory();
    let gpu = gpu();
    let mut rng = seeded_rng("a_budget_below_the_working_set_is_refused");
    let n = 1 << 16;
    let host = host_srs(&mut rng, n, false);
    let pool = PinnedPool::new(&gpu, PinnedMode::WriteCombined, None);
    // Loads the kernels and has the driver reserve their local memory first, so free memory compares.
    drop(PartitionEngine::new(&gpu, host.upload(&gpu), PartitionConfig::default()).unwrap());
    let refused = |budget: usize| {
        let srs = host.pinned(&gpu, &pool);
        gpu.synchronize().unwrap();
        let (free_before, _) = gpu.memory_info().unwrap();
        let result =
            PartitionEngine::new(&gpu, srs, PartitionConfig { max_device_bytes: Some(budget), ..Default::default() });
        let needed = match &result {
            Err(e @ Error::DeviceBudget { budget: b, needed, .. }) => {
                println!("{e}");
                assert_eq!(*b, budget);
                assert!(*needed > budget, "needs {needed}");
                *needed
            }
            other => panic!("budget {budget}: expected DeviceBudget, got {:?}", other.as_ref().err()),
        };
        drop(result);
        gpu.synchronize().unwrap();
        let (free_after, _) = gpu.memory_info().unwrap();
        // The refused engine (with the SRS given to it) held up to tens of megabytes: all of it is back.
        assert!(free_after + (2 << 20) >= free_before, "{free_before} bytes free before, {free_after} after");
        needed
    };
    let floor = refused(1 << 20);
    let minimum = refused(floor);
    assert!(minimum > floor, "the working set ({minimum}) is more than the SRS and one slot ({floor})");
    let config = PartitionConfig { max_device_bytes: Some(minimum), ..Default::default() };
    let mut engine = PartitionEngine::new(&gpu, host.pinned(&gpu, &pool), config).unwrap();
    let memory = engine.memory();
    println!("at the stated minimum: {memory:?}");
    assert!(memory.device_bytes <= minimum && memory.slots == 1 && memory.c_shares_b, "{memory:?}");
    let data = job_data(&mut rng, n, &host.lens, true);
    let t = engine.start(data.job()).unwrap();
    assert_eq!(engine.finish(t).unwrap().results, host.reference(&data).0);
}

/// Without a configured `query_window` the engine streams in the largest of `QUERY_WINDOWS`, up to a quarter
/// of the assignment, that fits the budget: at each budget below, engines configured with each such window,
/// largest first, are refused until the first that fits, and that one is placed as the chosen one. The least
/// budget stated without a window is the least over those windows, and a job within it (the first slot's
/// bitmaps cut to the chosen window) equals the CPU's.
#[test]
#[ignore = "needs a CUDA GPU"]
fn the_query_window_is_the_largest_that_fits() {
    let _memory = shared_device_memory();
    let gpu = gpu();
    let mut rng = seeded_rng("the_query_window_is_the_largest_that_fits");
    // One assignment (three G1 queries) longer than the smaller windows, so that the windows differ in what
    // they take; a quarter of it is 2^18 positions.
    let n = 1 << 20;
    let host = host_srs(&mut rng, n, false);
    let quarter = 1 << 18;
    let windows: Vec<usize> = zkgpu::pipeline::QUERY_WINDOWS.into_iter().filter(|&w| w <= quarter).collect();
    let pool = PinnedPool::new(&gpu, PinnedMode::WriteCombined, None);
    let engine = |budget: usize, window: Option<usize>| {
        let config = PartitionConfig { max_device_bytes: Some(budget), query_window: window, ..Default::default() };
        PartitionEngine::new(&gpu, host.streamed_queries(&gpu, &pool, false), config)
    };
    let least = |window: Option<usize>| {
        let needed = |budget| match engine(budget, window) {
            Err(Error::DeviceBudget { needed, .. }) => needed,
            other => panic!("window {window:?}, budget {budget}: {:?}", other.map(|e| e.memory())),
        };
        needed(needed(0))
    };
    let least_auto = least(None);
    let least_each: Vec<usize> = windows.iter().map(|&w| least(Some(w))).collect();
    println!("least budget: {least_auto} without a window; per window {windows:?}: {least_each:?}");
    assert_eq!(Some(&least_auto), least_each.iter().min());
    for budget in [least_auto, least_each[2], least_each[0], usize::MAX / 2] {
        let chosen = engine(budget, None).unwrap().memory();
        let first_fit = windows
            .iter()
            .find_map(|&w| match engine(budget, Some(w)) {
                Ok(e) => Some((w, e.memory())),
                Err(Error::DeviceBudget { .. }) => None,
                Err(e) => panic!("window {w}, budget {budget}: {e}"),
            })
            .expect("a window fits");
        println!("budget {budget}: window {} chosen, {chosen:?}", first_fit.0);
        assert_eq!(chosen, first_fit.1, "budget {budget}: the largest window that fits is 2^{}", first_fit.0.ilog2());
        assert!(chosen.device_bytes + BUDGET_RESERVE <= budget, "{chosen:?}");
        assert!(chosen.query_window.is_none_or(|w| w <= quarter), "{chosen:?}");
    }
    // Within the least budget the window is the smallest that fits, below the first slot's (largest) layout.
    let mut tight = engine(least_auto, None).unwrap();
    let memory = tight.memory();
    assert!(memory.query_window.is_some_and(|w| w < quarter), "{memory:?}");
    let data = job_data(&mut rng, n, &host.lens, true);
    let t = tight.start(data.job()).unwrap();
    assert_eq!(tight.finish(t).unwrap().results, host.reference(&data).0, "{memory:?}");
}

/// `max_tail_fraction` sizes the slots' tails: the engine holds `slots · Σ (len − ⌈f·len⌉) · 36` bytes less
/// than with whole-length tails, its jobs (tails ~10%) equal the CPU's, and a job whose tail is longer than
/// the room is refused by `start` before anything is queued (the next job is right).
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_tail_capacity_shrinks_the_slots() {
    let _memory = shared_device_memory();
    let gpu = gpu();
    let mut rng = seeded_rng("a_tail_capacity_shrinks_the_slots");
    let n = 1 << 12;
    let host = host_srs(&mut rng, n, true);
    let whole = PartitionEngine::new(&gpu, host.upload(&gpu), PartitionConfig::default()).unwrap();
    let config = PartitionConfig { max_tail_fraction: 0.25, ..Default::default() };
    let mut engine = PartitionEngine::new(&gpu, host.upload(&gpu), config).unwrap();
    let room: Vec<usize> = host.lens.iter().map(|&m| m.div_ceil(4)).collect();
    let saved: usize = host.lens.iter().zip(&room).map(|(&m, &r)| (m - r) * 36).sum();
    assert_eq!(whole.device_bytes() - engine.device_bytes(), engine.memory().slots * saved);
    drop(whole);
    let data = job_data(&mut rng, n, &host.lens, true);
    assert!(data.assignments.iter().zip(&room).all(|(d, &r)| d.tail.len() <= r), "tails within the room");
    let t = engine.start(data.job()).unwrap();
    assert_eq!(engine.finish(t).unwrap().results, host.reference(&data).0);
    // Every value of the first assignment neither 0 nor 1: its tail is the whole assignment.
    let mut dense = job_data(&mut rng, n, &host.lens, true);
    let d = &mut dense.assignments[0];
    d.values = random_scalars(&mut rng, d.values.len());
    (d.tail, d.tail_index) = (vec![Scalar::ZERO; d.values.len()], vec![0; d.values.len()]);
    let k = zkgpu::pipeline::split_assignment(&d.values, &mut d.ones, &mut d.tail, &mut d.tail_index).unwrap();
    assert_eq!(k, d.values.len());
    match engine.start(dense.job()) {
        Err(Error::LengthMismatch { expected, actual, .. }) => assert_eq!((expected, actual), (room[0], k)),
        other => panic!("a tail past the room: {:?}", other.map(|t| t.id())),
    }
    assert_eq!(engine.in_flight(), 0, "the refused job was not started");
    let t = engine.start(data.job()).unwrap();
    assert_eq!(engine.finish(t).unwrap().results, host.reference(&data).0, "after the refused job");
}

/// Affine accumulation in every MSM gives the same results.
#[test]
#[ignore = "needs a CUDA GPU"]
fn several_jobs_in_flight_affine_msms() {
    let _memory = shared_device_memory();
    let affine =
        zkgpu::msm::MsmConfig { accumulation: zkgpu::msm::Accumulation::Affine { rounds: None }, ..Default::default() };
    let config = PartitionConfig { h_msm: affine, tail_msm: affine, ..Default::default() };
    jobs_in_flight(config, "several_jobs_in_flight_affine_msms");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn several_jobs_in_flight_one_stream_one_slot() {
    let _memory = shared_device_memory();
    jobs_in_flight(PartitionConfig { streams: StreamMode::One, slots: 1, ..Default::default() }, "one_stream_one_slot");
    jobs_in_flight(PartitionConfig { slots: 3, ..Default::default() }, "two_streams_three_slots");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn bad_input_is_a_typed_error_and_changes_nothing() {
    let _memory = shared_device_memory();
    let gpu = gpu();
    let mut rng = seeded_rng("bad_input_is_a_typed_error_and_changes_nothing");
    let n = 1 << 10;
    let host = host_srs(&mut rng, n, false);
    let mut engine = PartitionEngine::new(&gpu, host.upload(&gpu), PartitionConfig::default()).unwrap();
    let data = job_data(&mut rng, n, &host.lens, false);
    let before = (
        data.a.clone(),
        data.b.clone(),
        data.c.clone(),
        data.assignments[0].tail.clone(),
        data.assignments[0].ones.clone(),
    );
    // A job in flight while the bad ones are refused.
    let running = engine.start(data.job()).unwrap();

    let mut job = data.job();
    job.b = &data.b[..n / 2];
    assert!(matches!(engine.start(job), Err(Error::LengthMismatch { what: "partition b", .. })));
    let mut job = data.job();
    job.c = &data.c[..n - 1];
    assert!(matches!(engine.start(job), Err(Error::NttSize { .. })));
    let mut job = data.job();
    job.assignments[0].tail = &data.assignments[0].tail[1..];
    assert!(matches!(engine.start(job), Err(Error::LengthMismatch { what: "partition assignment tail_index", .. })));
    let mut job = data.job();
    job.assignments[0].ones = &data.assignments[0].ones[1..];
    assert!(matches!(engine.start(job), Err(Error::BitmapTooShort { .. })));
    let mut job = data.job();
    job.assignments.clear();
    assert!(matches!(engine.start(job), Err(Error::LengthMismatch { what: "partition assignments", .. })));
    let mut short_h = gpu.alloc_pinned::<Scalar>(n / 2, PinnedMode::ReadBack).unwrap();
    let mut job = data.job();
    job.h_out = Some(&mut short_h);
    assert!(matches!(engine.start(job), Err(Error::LengthMismatch { what: "partition h_out", .. })));
    assert!(short_h.iter().all(|x| *x == Scalar::ZERO), "h_out untouched");

    // A ticket of another engine is refused, and its job is cancelled at its own engine (which keeps working).
    let mut other = PartitionEngine::new(&gpu, host.upload(&gpu), PartitionConfig::default()).unwrap();
    let foreign = other.start(data.job()).unwrap();
    assert!(matches!(engine.finish(foreign), Err(Error::Pipeline(_))));
    assert_eq!(other.in_flight(), 0, "the refused ticket's job is abandoned");
    let again = other.start(data.job()).unwrap();
    assert_eq!(other.finish(again).unwrap().results, host.reference(&data).0);

    assert_eq!(
        before,
        (
            data.a.clone(),
            data.b.clone(),
            data.c.clone(),
            data.assignments[0].tail.clone(),
            data.assignments[0].ones.clone()
        )
    );
    assert_eq!(engine.in_flight(), 1, "refused jobs are not in flight");
    let expected = host.reference(&data).0;
    assert_eq!(engine.finish(running).unwrap().results, expected);
    // A tail position past the assignment passes the shape check (the host does not read the indices) and
    // fails its own job at finish; the next job is unaffected.
    let mut index = data.assignments[0].tail_index.clone();
    index.push(host.lens[0] as u32);
    let mut tail = data.assignments[0].tail.clone();
    tail.push(Scalar::from(3u64));
    let mut job = data.job();
    job.assignments[0].tail = &tail;
    job.assignments[0].tail_index = &index;
    let bad = engine.start(job).unwrap();
    let next = engine.start(data.job()).unwrap();
    let r = engine.finish(bad);
    assert!(matches!(r, Err(Error::IndexOutOfRange { count: 1, .. })), "{:?}", r.map(|o| o.results));
    assert_eq!(engine.finish(next).unwrap().results, expected);
    // And the engine still works.
    let again = engine.start(data.job()).unwrap();
    assert_eq!(engine.finish(again).unwrap().results, expected);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn pinned_pool_exhaustion_is_typed_and_recovers() {
    let _memory = shared_device_memory();
    let gpu = gpu();
    let mut rng = seeded_rng("pinned_pool_exhaustion_is_typed_and_recovers");
    let n = 1 << 10;
    let host = host_srs(&mut rng, n, false);
    let mut engine = PartitionEngine::new(&gpu, host.upload(&gpu), PartitionConfig::default()).unwrap();
    let data = job_data(&mut rng, n, &host.lens, false);
    // Room for exactly one job's inputs.
    let pool = PinnedPool::new(&gpu, PinnedMode::WriteCombined, Some(engine.shape().upload_bytes()));
    let first = pin(&pool, &data).unwrap();
    assert!(matches!(pin(&pool, &data), Err(Error::PinnedPoolExhausted { .. })), "a second job's buffers do not fit");
    let ticket = engine.start(first.job(None)).unwrap();
    drop(first);
    let second = pin(&pool, &data).expect("buffers are reusable once the first job's are back");
    let t2 = engine.start(second.job(None)).unwrap();
    let expected = host.reference(&data).0;
    assert_eq!(engine.finish(ticket).unwrap().results, expected);
    assert_eq!(engine.finish(t2).unwrap().results, expected);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn device_oom_is_typed_and_frees_everything() {
    let _memory = exclusive_device_memory();
    let gpu = gpu();
    let mut rng = seeded_rng("device_oom_is_typed_and_frees_everything");
    let n = 1 << 16;
    let host = host_srs(&mut rng, n, false);
    gpu.synchronize().unwrap();
    let (free_before, total) = gpu.memory_info().unwrap();
    // Enough slots to exceed the device twice over: each slot holds ~4n scalars (a, b, c, the tail). Within a
    // budget the device cannot hold, the placement fits them and the allocations run out.
    let slots = total / (64 * n) + 2;
    let config = PartitionConfig { slots, max_device_bytes: Some(2 * total), ..Default::default() };
    let result = PartitionEngine::new(&gpu, host.upload(&gpu), config);
    assert!(matches!(result, Err(Error::OutOfMemory { .. })), "{:?}", result.as_ref().err());
    drop(result);
    gpu.synchronize().unwrap();
    let (free_after, _) = gpu.memory_info().unwrap();
    // The failed engine held most of the device; a leak would be gigabytes, the slack is the driver's.
    assert!(
        free_after + (64 << 20) >= free_before,
        "device memory leaked: {free_before} free before, {free_after} after"
    );
    // The context is still usable; within the default budget (the memory free) the engine makes the slots
    // that fit, leaving the reserve.
    let mut engine =
        PartitionEngine::new(&gpu, host.upload(&gpu), PartitionConfig { slots, ..Default::default() }).unwrap();
    let memory = engine.memory();
    println!("{slots} slots asked for within the memory free: {memory:?}");
    assert!(memory.slots > 2 && memory.slots < slots, "{memory:?}");
    assert!(memory.device_bytes + BUDGET_RESERVE <= memory.budget, "{memory:?}");
    let data = job_data(&mut rng, n, &host.lens, true);
    let t = engine.start(data.job()).unwrap();
    assert_eq!(engine.finish(t).unwrap().results, host.reference(&data).0);
}

/// `SplitMsm` over `gpus` equals one GPU's MSM and blstrs, for G1 and G2, sizes that do not split evenly.
fn split_equals_one_gpu(gpus: &[Gpu], name: &str) {
    let mut rng = seeded_rng(name);
    for n in [1usize, 3, 1000, (1 << 16) + 3] {
        let bases = distinct_points::<G1>(&mut rng, n);
        let scalars = random_scalars(&mut rng, n);
        let expected = msm_cpu::<G1>(&bases, &scalars).unwrap();
        assert_eq!(msm::<G1>(&gpus[0], &bases, &scalars).unwrap(), expected, "{name}: one GPU, n = {n}");
        let mut split = SplitMsm::<G1>::new(gpus, &bases, &MsmConfig::default()).unwrap();
        assert_eq!(split.ranges().len(), gpus.len().min(n));
        assert_eq!(split.run(&scalars).unwrap(), expected, "{name}: split, n = {n}");
        assert_eq!(split.run(&scalars).unwrap(), expected, "{name}: split reused, n = {n}");
        assert!(matches!(split.run(&scalars[1..]), Err(Error::LengthMismatch { .. })));
        assert_eq!(msm_multi_gpu::<G1>(gpus, &bases, &scalars).unwrap(), expected);
    }
    let n = 5000;
    let bases = distinct_points::<G2>(&mut rng, n);
    let scalars = random_scalars(&mut rng, n);
    assert_eq!(
        msm_multi_gpu::<G2>(gpus, &bases, &scalars).unwrap(),
        msm_cpu::<G2>(&bases, &scalars).unwrap(),
        "{name}: G2"
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn split_msm_over_two_handles_of_one_gpu() {
    let _memory = shared_device_memory();
    // Exercises the split and the host-side sum on any machine (both parts on GPU 0).
    let gpus = vec![gpu(), gpu()];
    split_equals_one_gpu(&gpus, "split_msm_over_two_handles_of_one_gpu");
}

/// Needs two GPUs: fails on fewer (the test runners skip `two_gpus_*` tests on one-GPU hosts and say so).
#[test]
#[ignore = "needs two CUDA GPUs"]
fn two_gpus_split_msm_equals_one_gpu() {
    let _memory = shared_device_memory();
    let count = Gpu::count().unwrap_or(0);
    assert!(count >= 2, "two_gpus_split_msm_equals_one_gpu needs 2 GPUs, {count} visible");
    let gpus = Gpu::all().unwrap();
    split_equals_one_gpu(&gpus, "two_gpus_split_msm_equals_one_gpu");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn prover_pool_spreads_jobs() {
    let _memory = shared_device_memory();
    // All visible GPUs; with one GPU, two engines on it (the spreading logic is the same).
    let gpus = match Gpu::all().unwrap() {
        g if g.len() >= 2 => g,
        _ => vec![gpu(), gpu()],
    };
    let mut rng = seeded_rng("prover_pool_spreads_jobs");
    let n = 1 << 11;
    let host = host_srs(&mut rng, n, true);
    let engines =
        gpus.iter().map(|g| PartitionEngine::new(g, host.upload(g), PartitionConfig::default()).unwrap()).collect();
    let mut pool = ProverPool::new(engines).unwrap();
    let data: Vec<JobData> = (0..6).map(|_| job_data(&mut rng, n, &host.lens, false)).collect();
    let mut tickets = Vec::new();
    for d in &data {
        tickets.push(pool.start(d.job()).unwrap());
    }
    let used: Vec<usize> = tickets.iter().map(|t| t.engine()).collect();
    for e in 0..gpus.len() {
        assert!(used.iter().filter(|&&u| u == e).count() >= 6 / gpus.len(), "engines used: {used:?}");
    }
    for (t, d) in tickets.into_iter().zip(&data) {
        assert_eq!(pool.finish(t).unwrap().results, host.reference(d).0);
    }
    assert!(matches!(ProverPool::new(Vec::new()), Err(Error::NoDevice)));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn soak_200_jobs_memory_flat() {
    let _memory = exclusive_device_memory();
    let gpu = gpu();
    let mut rng = seeded_rng("soak_200_jobs_memory_flat");
    let n = 1 << 10;
    let host = host_srs(&mut rng, n, true);
    let mut engine = PartitionEngine::new(&gpu, host.upload(&gpu), PartitionConfig::default()).unwrap();
    let pool = PinnedPool::new(&gpu, PinnedMode::WriteCombined, Some(4 * engine.shape().upload_bytes()));
    let data: Vec<JobData> = (0..4).map(|_| job_data(&mut rng, n, &host.lens, false)).collect();
    let expected: Vec<PartitionResults> = data.iter().map(|d| host.reference(d).0).collect();
    let mut in_flight = std::collections::VecDeque::new();
    let mut marks = Vec::new();
    for k in 0..200usize {
        let pinned = pin(&pool, &data[k % 4]).unwrap();
        in_flight.push_back((k, engine.start(pinned.job(None)).unwrap()));
        if in_flight.len() == 2 {
            let (j, t) = in_flight.pop_front().unwrap();
            let out = engine.finish(t).unwrap();
            assert_eq!(out.results, expected[j % 4], "job {j}");
        }
        if k == 10 || k == 199 {
            gpu.synchronize().unwrap();
            marks.push((gpu.memory_info().unwrap().0, pool.stats().pinned_bytes));
        }
    }
    while let Some((j, t)) = in_flight.pop_front() {
        assert_eq!(engine.finish(t).unwrap().results, expected[j % 4], "job {j}");
    }
    let ((free10, pinned10), (free199, pinned199)) = (marks[0], marks[1]);
    assert_eq!(pinned10, pinned199, "pinned pool grew");
    assert!(free199 + (8 << 20) >= free10, "device memory went from {free10} to {free199} bytes free over 190 jobs");
}
