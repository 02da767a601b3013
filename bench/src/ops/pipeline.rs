//! `pipeline_partition`: Groth16 partition jobs through `zkgpu::pipeline::PartitionEngine`, end to end from
//! host memory: upload a, b, c and the assignment split, the H polynomial in 6 NTT sweeps + pointwise (the
//! steps of `Ntt::groth16_h`: `groth16_h_prepare` for a and b and `groth16_h_prepare_c` for c as soon as each
//! is uploaded, then `groth16_h_combine`; the 7 NTTs less c's coset round trip, which cancels), the H
//! MSM, and per
//! G1 query (A, B_G1, L) a batch addition of the scalar-1 points plus a tail MSM of the rest.
//!
//! Shape at 2^k: a, b, c of 2^k; H query 2^k bases; one assignment of 2^k scalars with a Filecoin-like mix
//! (~45 % zeros, ~45 % ones → batch addition, ~10 % random → tail MSM) shared by three G1 queries of 2^k
//! points. The `-g2` variant adds a B_G2 query over a second assignment of 2^(k−2) scalars (G2 MSM + batch
//! addition). Bases are distinct points generated on the GPU (`batch_add_{g1,g2}_expand`, as in the MSM
//! bench) and uploaded once (not timed: a prover's SRS is resident).
//!
//! One run = 4 jobs per GPU with two in flight per engine (start k+1 before finishing k), each engine driven
//! from its own host thread, timed with the wall clock from the first `start` to the last `finish`. Variants:
//! - `pinned-2stream` (baseline): inputs in page-locked memory, uploads on the copy stream;
//! - `pinned-1stream`: the same with uploads on the compute stream (no overlap);
//! - `pageable-2stream`: inputs in ordinary `Vec`s (the driver stages them);
//! - `pinned-2stream-2gpu`: two engines on GPUs 0 and 1, jobs alternating (in the default sweep only when
//!   two GPUs are visible);
//! - `pinned-2stream-g2`: the baseline plus the B_G2 query;
//! - `pinned-2stream-xyzz`: the baseline with the batch additions in XYZZ (the engine's default is the
//!   affine method);
//! - `pinned-2stream-budget16`, `-budget24`: the baseline within a device-memory budget of 16 / 24 GiB
//!   (`PartitionConfig::max_device_bytes`), the H query in pinned memory so that the engine may stream it.
//!   A size whose smallest working set exceeds the budget is skipped with the engine's `DeviceBudget` error,
//!   which states that working set. `-hchunkK` after a variant: the H MSM in chunks of 2^K points (its
//!   `PartitionConfig::h_msm` chunk), for the streamed H's A/B (also before `-qpinned`: the engine's cap
//!   beside streamed queries, half a window, against a chunk it would not choose).
//! - `-qpinned` after a variant: the assignment queries in pinned memory (`PartitionSrs::add_assignment_pinned`):
//!   uploaded where the budget has room, else streamed window by window through every job (after H); `-qwK` after
//!   that: windows of 2^K positions (`PartitionConfig::query_window`; without it the engine chooses for the
//!   budget, the field `query_window`). `-budget8` and `-budget12` exist for these (at 2^24 the queries stream
//!   only below ~17 GB). `-serial` last: the streamed MSMs queued one after the other rather than interleaved step
//!   by step (`PartitionConfig::interleave_streamed`), for the A/B. `-tailK` before it: the slots' tails sized for
//!   K % of the assignment (`PartitionConfig::max_tail_fraction`; the bench's tails are ~10%). `-qsK` between
//!   `-qpinned` (or `-qwK`) and `-tailK`: K staging windows per streamed query group
//!   (`PartitionConfig::window_staging`, 2 by default). `-hwK` after those (before `-serial`): the H MSM's window
//!   bits (`PartitionConfig::h_msm`), for the A/B of the cost model's choice.
//!
//! Extra JSON fields: `gpu_busy` (compute-stream busy time / (GPUs × wall), 0..1), `h2d_gbps` (H2D bytes / time
//! with an H2D copy running), `compute_ms` and `transfer_ms` (per GPU and run: kernel busy time, time with an H2D
//! copy running), `bound_ratio` (wall / max(compute_ms, transfer_ms): the goal is <= 1.1), `ms_per_job`,
//! `jobs`, `ntt_ms` (the `ntt.h.*` phases), `msm_h_ms` and `tail_ms` (batch additions and tail MSMs), of these
//! `stream_add_ms` and `stream_tail_ms` (streamed queries' steps), `idle_ms` (wall time with neither kernels nor
//! copies running on a GPU, the mean over GPUs; all per job), `peak_bytes` (the driver's count: the most device
//! memory in use above the level before the SRS was made, sampled every millisecond through every run, kernels
//! loaded beforehand), `engine_bytes` (what the engine counts it holds), `streamed_bytes` (bases copied
//! host-to-device per job, counted in `h2d_gbps` and `transfer_ms`), `h_chunks` (the streamed H's chunks per job, 0
//! when resident), `slots`, `c_shares_b` (two-vector slots: C uploaded into B's buffer) and `budget_bytes` for a
//! budget; `compute_waits_ms` and `copy_waits_ms`: the largest gaps before kernel and H2D phases per phase family
//! (where a stream waited), also printed on stderr. With `ZKGPU_BENCH_TIMELINE=DIR` each GPU case also writes its
//! median run's phases, in order of start, to `DIR/pipeline-{variant}-{log_n}.csv` (when each stream waited, not
//! only where).
//!
//! Verification, never against stored numbers: every job of every run returns the same results; each query
//! result equals the closed form `Σ sᵢ·Pᵢ = (Σ sᵢ)·A + (Σ sᵢ·tᵢ)·B + (Σ sᵢ·jᵢ)·Q` over the assignment (bases
//! `Pᵢ = A + t·B + j·Q`, `i = t·1024 + j`); and one more job downloads `h`, which must (1) give the H result
//! by the same closed form and (2) be the exact quotient: c = a·b on the domain, so `h(x)·(xⁿ − 1) =
//! A(x)·B(x) − C(x)` at a random x, with A, B, C evaluated from their values on the domain (barycentric
//! formula, one batch inversion). O(n) host work at any size. CPU variant (no GPU): `blstrs`
//! (`zkgpu::pipeline::cpu::partition_cpu`) at 2^10 and 2^12, checked the same way.
use super::batch_add::{BenchCurve, Inputs, RUN, closed_form, coefficient_sums, generate_on_gpu, inputs};
use super::ntt::random_scalars;
use super::{BenchOp, Case, CaseOptions, Prepared, Target};
use crate::Result;
use blstrs::{G1Affine, G1Projective, Scalar};
use rayon::prelude::*;
use std::collections::VecDeque;
use std::time::Instant;
use zkgpu::batch_add::{G1, G2, Method};
use zkgpu::msm::MsmConfig;
use zkgpu::pipeline::cpu::{AssignmentQueries, partition_cpu};
use zkgpu::pipeline::{
    AssignmentInput, PartitionConfig, PartitionEngine, PartitionJob, PartitionResults, PartitionSrs, StreamMode,
    combine_gpus, split_assignment,
};
use zkgpu::profile::{PhaseKind, PhaseReport};
use zkgpu::{DeviceBuffer, Gpu, MemoryWatch, PinnedBuffer, PinnedMode};

const GPU_VARIANTS: &[&str] = &[
    "pinned-2stream",
    "pinned-1stream",
    "pageable-2stream",
    "pinned-2stream-2gpu",
    "pinned-2stream-g2",
    "pinned-2stream-xyzz",
    "pinned-2stream-budget16",
    "pinned-2stream-budget24",
    "pinned-2stream-budget16-hchunk22",
    "pinned-2stream-budget16-hchunk23",
    "pinned-2stream-budget16-hchunk24",
    "pinned-2stream-qpinned",
    "pinned-2stream-budget12-qpinned",
    "pinned-2stream-budget8-qpinned",
    "pinned-2stream-budget8-hchunk21-qpinned",
    "pinned-2stream-budget8-hchunk22-qpinned",
    "pinned-2stream-budget12-qpinned-qw20",
    "pinned-2stream-budget12-qpinned-qw24",
    "pinned-2stream-budget8-qpinned-serial",
    "pinned-2stream-budget16-qpinned",
    "pinned-2stream-budget16-qpinned-serial",
    "pinned-2stream-budget24-qpinned",
    "pinned-2stream-budget16-qpinned-qw21",
    "pinned-2stream-budget16-qpinned-tail20",
    "pinned-2stream-budget16-hchunk21-qpinned-tail20",
    "pinned-2stream-budget16-hchunk22-qpinned-tail20",
    "pinned-2stream-budget16-qpinned-tail20-serial",
    "pinned-2stream-budget24-qpinned-tail20",
    "pinned-2stream-budget12-qpinned-tail20",
    "pinned-2stream-budget8-qpinned-hw15",
    "pinned-2stream-budget8-qpinned-hw17",
    "pinned-2stream-budget8-qpinned-hw18",
    "pinned-2stream-budget16-qpinned-tail20-hw18",
    "pinned-2stream-budget8-qpinned-qs3",
    "pinned-2stream-budget16-qpinned-qs3-tail20",
    "pinned-2stream-budget16-qpinned-qs4-tail20",
    "pinned-2stream-budget24-qpinned-qw23-tail20",
    "pinned-2stream-budget24-qpinned-qw24-tail20",
    "pinned-2stream-budget16-qpinned-qw23-tail20",
];
const ONE_GPU_DEFAULTS: &[&str] = &["pinned-2stream", "pinned-1stream", "pageable-2stream"];
const TWO_GPU_DEFAULTS: &[&str] = &["pinned-2stream", "pinned-1stream", "pageable-2stream", "pinned-2stream-2gpu"];
/// Jobs per GPU per timed run: every GPU count runs as many jobs per GPU, so that a run's fill and drain
/// (the first job's uploads, the last job's MSMs) weigh the same in one GPU's throughput and in several's.
const JOBS_PER_GPU: usize = 4;
/// G1 queries on the main assignment (A, B_G1, L).
const G1_QUERIES: usize = 3;

/// What a variant names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Variant {
    pinned: bool,
    streams: StreamMode,
    gpus: usize,
    g2: bool,
    batch_add: Method,
    /// `PartitionConfig::max_device_bytes` (the `-budgetN` suffix: N GiB), with the H query given in pinned
    /// host memory so that the engine may stream it.
    budget: Option<usize>,
    /// The H MSM's points per chunk (the `-hchunkK` suffix: 2^K), else the engine's choice.
    h_chunk: Option<usize>,
    /// The H MSM's window bits (the `-hwK` suffix, after every other but `-serial`), else the cost model's.
    h_window_bits: Option<u32>,
    /// The assignment queries are given in pinned host memory (`-qpinned`), streamed (when the budget needs
    /// it) in windows of this many positions (`-qwK`: 2^K) or the engine's choice.
    queries_pinned: bool,
    query_window: Option<usize>,
    /// Staging buffers per streamed query group (`-qsK`, after `-qpinned` and `-qwK`), else the engine's 2.
    window_staging: Option<usize>,
    /// Streamed MSMs queued one after the other (`-serial`), not interleaved (the engine's default).
    serial: bool,
    /// `PartitionConfig::max_tail_fraction` (`-tailK`: K %), else whole-length tails.
    max_tail: Option<u32>,
}

fn parse_variant(v: &str) -> Option<Variant> {
    if let Some(base) = v.strip_suffix("-serial") {
        let base = parse_variant(base).filter(|b| !b.serial && (b.budget.is_some() || b.queries_pinned))?;
        return Some(Variant { serial: true, ..base });
    }
    if let Some((base, bits)) = v.rsplit_once("-hw") {
        let bits: u32 = bits.parse().ok().filter(|b| (10..=22).contains(b))?;
        let base = parse_variant(base).filter(|b| b.h_window_bits.is_none() && !b.serial)?;
        return Some(Variant { h_window_bits: Some(bits), ..base });
    }
    if let Some((base, percent)) = v.rsplit_once("-tail") {
        let percent: u32 = percent.parse().ok().filter(|p| (1..=100).contains(p))?;
        let base = parse_variant(base).filter(|b| b.gpus == 1 && b.max_tail.is_none())?;
        return Some(Variant { max_tail: Some(percent), ..base });
    }
    if let Some((base, depth)) = v.rsplit_once("-qs") {
        let depth: usize = depth.parse().ok().filter(|d| (2..=8).contains(d))?;
        let base = parse_variant(base).filter(|b| b.queries_pinned && b.window_staging.is_none())?;
        return Some(Variant { window_staging: Some(depth), ..base });
    }
    if let Some((base, bits)) = v.rsplit_once("-qw") {
        let bits: u32 = bits.parse().ok().filter(|b| (16..=26).contains(b))?;
        let base = parse_variant(base).filter(|b| b.queries_pinned && b.query_window.is_none())?;
        return Some(Variant { query_window: Some(1 << bits), ..base });
    }
    if let Some(base) = v.strip_suffix("-qpinned") {
        let base = parse_variant(base).filter(|b| b.gpus == 1 && !b.queries_pinned)?;
        return Some(Variant { queries_pinned: true, ..base });
    }
    if let Some((base, bits)) = v.rsplit_once("-hchunk") {
        let bits: u32 = bits.parse().ok().filter(|b| (16..=27).contains(b))?;
        let base = parse_variant(base).filter(|b| b.h_chunk.is_none())?;
        return Some(Variant { h_chunk: Some(1 << bits), ..base });
    }
    if let Some((base, gib)) = v.rsplit_once("-budget") {
        let gib: usize = gib.parse().ok().filter(|g| [8, 12, 16, 24].contains(g))?;
        let base = parse_variant(base).filter(|b| b.gpus == 1 && b.budget.is_none())?;
        return Some(Variant { budget: Some(gib << 30), ..base });
    }
    let base = Variant {
        pinned: true,
        streams: StreamMode::Two,
        gpus: 1,
        g2: false,
        batch_add: PartitionConfig::default().batch_add,
        budget: None,
        h_chunk: None,
        h_window_bits: None,
        queries_pinned: false,
        query_window: None,
        window_staging: None,
        serial: false,
        max_tail: None,
    };
    Some(match v {
        "pinned-2stream" => base,
        "pinned-1stream" => Variant { streams: StreamMode::One, ..base },
        "pageable-2stream" => Variant { pinned: false, ..base },
        "pinned-2stream-2gpu" => Variant { gpus: 2, ..base },
        "pinned-2stream-g2" => Variant { g2: true, ..base },
        "pinned-2stream-xyzz" => Variant { batch_add: Method::Xyzz, ..base },
        _ => return None,
    })
}

pub struct PipelineOp;

impl BenchOp for PipelineOp {
    fn name(&self) -> &'static str {
        "pipeline_partition"
    }
    fn about(&self) -> &'static str {
        "Groth16 partition jobs (upload, H polynomial (6 NTT sweeps), H MSM, batch adds + tail MSMs), 4 per GPU and run, wall clock"
    }
    fn variants(&self, target: Target) -> &'static [&'static str] {
        target.pick(GPU_VARIANTS, &["blstrs"])
    }
    fn default_variants(&self, target: Target) -> &'static [&'static str] {
        match target {
            Target::Gpu if Gpu::count().unwrap_or(0) >= 2 => TWO_GPU_DEFAULTS,
            Target::Gpu => ONE_GPU_DEFAULTS,
            Target::Cpu => &["blstrs"],
        }
    }
    fn in_default_sweep(&self) -> bool {
        false
    }
    fn default_sizes(&self, target: Target) -> &'static [u32] {
        target.pick(&[24, 27], zkgpu_bench::bench_args::cpu_default_sizes(self.name()))
    }
    fn kernels(&self, variant: &str) -> Vec<String> {
        let mut names: Vec<String> = [
            "ntt_pass_dif_inv",
            "ntt_pass_dit",
            "ntt_h_pointwise",
            "ntt_h_subtract",
            "ntt_bit_reverse_tiled",
            "msm_count",
            "msm_scan_sums",
            "msm_scan",
            "msm_scatter",
            "batch_add_count_chunks",
            "batch_add_selected_totals",
            "batch_add_compact_indices",
        ]
        .map(String::from)
        .to_vec();
        let curves: &[&str] = if variant.ends_with("-g2") { &["g1", "g2"] } else { &["g1"] };
        for s in curves {
            names.extend(["accumulate", "fold", "fixup", "reduce"].map(|k| format!("msm_{s}_{k}")));
            names.extend(["accumulate", "affine_level", "affine_level_gather"].map(|k| format!("batch_add_{s}_{k}")));
            names.extend(["reduce", "finish"].map(|k| format!("set_sum_{s}_{k}")));
        }
        names
    }
    fn prepare<'g>(&self, gpu: Option<&'g Gpu>, variant: &str, log_n: u32, opts: &CaseOptions) -> Prepared<'g> {
        let n = 1usize << log_n;
        let seed = opts.seed ^ 0x9199_0000 ^ u64::from(log_n);
        match (gpu, variant) {
            (Some(gpu), v) => {
                let variant = parse_variant(v).ok_or_else(|| format!("{}: no GPU variant {v:?}", self.name()))?;
                let mut case = GpuCase::prepare(gpu, variant, n, seed)?;
                case.timeline = std::env::var_os(TIMELINE_DIR)
                    .map(|dir| std::path::Path::new(&dir).join(format!("pipeline-{v}-{log_n}.csv")));
                Ok(Box::new(case))
            }
            (None, "blstrs") => Ok(Box::new(CpuCase::prepare(n, seed))),
            (None, v) => Err(format!("{}: no CPU variant {v:?} (GPU variants need a CUDA device)", self.name()).into()),
        }
    }
}

// ---------------------------------------------------------------------------------------------------------
// Inputs and the closed-form checks

/// Host data of a job: a, b, c = a·b (a satisfied witness), the assignment(s) and their split.
pub(super) struct HostData {
    pub(super) a: Vec<Scalar>,
    pub(super) b: Vec<Scalar>,
    pub(super) c: Vec<Scalar>,
    pub(super) assignments: Vec<Split>,
}

/// One assignment's values and their split (`tail` and `tail_index` exactly as long as the tail).
pub(super) struct Split {
    pub(super) values: Vec<Scalar>,
    pub(super) ones: Vec<u32>,
    pub(super) tail: Vec<Scalar>,
    pub(super) tail_index: Vec<u32>,
}

/// splitmix64.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `m` scalars, ~45 % zeros, ~45 % ones, ~10 % random.
fn assignment(m: usize, seed: u64) -> Vec<Scalar> {
    let random = random_scalars(m, seed, 0xa55);
    let (zero, one) = (Scalar::from(0u64), Scalar::from(1u64));
    random
        .into_par_iter()
        .enumerate()
        .map(|(i, s)| match mix(seed ^ i as u64) % 20 {
            0..=8 => zero,
            9..=17 => one,
            _ => s,
        })
        .collect()
}

pub(super) fn host_data(n: usize, lens: &[usize], seed: u64) -> Result<HostData> {
    let a = random_scalars(n, seed, 1);
    let b = random_scalars(n, seed, 2);
    let c: Vec<Scalar> = a.par_iter().zip(&b).map(|(x, y)| x * y).collect();
    let mut assignments = Vec::new();
    for (k, &m) in lens.iter().enumerate() {
        let values = assignment(m, seed ^ (0x100 + k as u64));
        let (mut ones, mut tail, mut tail_index) =
            (vec![0u32; m.div_ceil(32)], vec![Scalar::from(0u64); m], vec![0u32; m]);
        let k = split_assignment(&values, &mut ones, &mut tail, &mut tail_index)?;
        tail.truncate(k);
        tail_index.truncate(k);
        assignments.push(Split { values, ones, tail, tail_index });
    }
    Ok(HostData { a, b, c, assignments })
}

/// `x^e` for a little-endian exponent.
fn pow(x: Scalar, e: [u64; 4]) -> Scalar {
    let mut acc = Scalar::from(1u64);
    for limb in e.iter().rev() {
        for bit in (0..64).rev() {
            acc = acc * acc;
            if (limb >> bit) & 1 == 1 {
                acc *= x;
            }
        }
    }
    acc
}

/// `x^-1 = x^(r−2)` (0 for 0). The bench has no `ff` dependency, so Fermat by hand.
fn invert(x: Scalar) -> Scalar {
    const R_MINUS_2: [u64; 4] =
        [0xffff_fffe_ffff_ffff, 0x53bd_a402_fffe_5bfe, 0x3339_d808_09a1_d805, 0x73ed_a753_299d_7d48];
    pow(x, R_MINUS_2)
}

/// `(A(x), B(x), C(x))` for the polynomials with values `vs` on the domain of size n = 2^log_n (ω from
/// `ntt_cpu::root_of_unity`): barycentric `V(x) = (xⁿ − 1)/n · Σ vᵢ ωⁱ / (x − ωⁱ)`, one batch inversion per chunk.
fn evaluate_from_domain(vs: [&[Scalar]; 3], log_n: u32, x: Scalar) -> [Scalar; 3] {
    const CHUNK: usize = 1 << 16;
    let n = vs[0].len();
    let w = zkgpu::ntt::cpu::root_of_unity(log_n);
    let zero = Scalar::from(0u64);
    let sums = (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .map(|k| {
            let lo = k * CHUNK;
            let hi = (lo + CHUNK).min(n);
            let mut wi = pow(w, [lo as u64, 0, 0, 0]);
            let mut powers = Vec::with_capacity(hi - lo);
            let mut prefix = Vec::with_capacity(hi - lo);
            let mut acc = Scalar::from(1u64);
            for _ in lo..hi {
                powers.push(wi);
                acc *= x - wi;
                prefix.push(acc);
                wi *= w;
            }
            // Walk back: inv holds (Π_{j<=i} d_j)^-1; d_i^-1 = inv · prefix[i−1].
            let mut inv = invert(acc);
            let mut out = [zero; 3];
            for i in (0..hi - lo).rev() {
                let d_inv = if i == 0 { inv } else { inv * prefix[i - 1] };
                inv *= x - powers[i];
                let t = powers[i] * d_inv;
                for (o, v) in out.iter_mut().zip(vs) {
                    *o += v[lo + i] * t;
                }
            }
            out
        })
        .reduce(|| [zero; 3], |a, b| [a[0] + b[0], a[1] + b[1], a[2] + b[2]]);
    let scale = (pow(x, [n as u64, 0, 0, 0]) - Scalar::from(1u64)) * invert(Scalar::from(n as u64));
    sums.map(|s| s * scale)
}

/// `Σ hᵢ xⁱ` (chunks on all cores).
fn horner(h: &[Scalar], x: Scalar) -> Scalar {
    const CHUNK: usize = 1 << 16;
    let zero = Scalar::from(0u64);
    h.par_chunks(CHUNK)
        .enumerate()
        .map(|(k, c)| c.iter().rev().fold(zero, |acc, v| acc * x + v) * pow(x, [(k * CHUNK) as u64, 0, 0, 0]))
        .reduce(|| zero, |a, b| a + b)
}

/// The generated bases' parameters of one partition (H, the G1 queries, the optional G2 query).
pub(super) struct Generators {
    pub(super) h: Inputs<G1>,
    pub(super) g1: Vec<Inputs<G1>>,
    pub(super) g2: Option<Inputs<G2>>,
}

impl Generators {
    pub(super) fn new(n: usize, g2_len: Option<usize>, seed: u64) -> Generators {
        Generators {
            h: inputs::<G1>(n, seed ^ 0x4800),
            g1: (0..G1_QUERIES).map(|q| inputs::<G1>(n, seed ^ (0x4100 + q as u64))).collect(),
            g2: g2_len.map(|m| inputs::<G2>(m, seed ^ 0x4200)),
        }
    }

    /// The query results the closed form predicts (h not included).
    fn expected_queries(&self, data: &HostData) -> (Vec<G1Projective>, Vec<blstrs::G2Projective>) {
        // Assignment 1 exists only with a G2 query.
        let sums = |k: usize| coefficient_sums(&data.assignments[k].values);
        let g1 = self.g1.iter().map(|inp| closed_form::<G1>(inp, &sums(0))).collect();
        let g2 = self.g2.iter().map(|inp| closed_form::<G2>(inp, &sums(1))).collect();
        (g1, g2)
    }
}

/// Checks `results` against the closed forms and `h` (downloaded) against the quotient identity.
pub(super) fn check(
    gens: &Generators,
    data: &HostData,
    results: &PartitionResults,
    h: &[Scalar],
    seed: u64,
) -> Result<()> {
    let (g1, g2) = gens.expected_queries(data);
    if results.assignments[0].g1 != g1 {
        return Err("pipeline: a G1 query result differs from the closed-form sum over the assignment".into());
    }
    let got_g2: Vec<_> = results.assignments.get(1).map(|a| a.g2.clone()).unwrap_or_default();
    if got_g2 != g2 {
        return Err("pipeline: the G2 query result differs from the closed-form sum".into());
    }
    if results.h != closed_form::<G1>(&gens.h, &coefficient_sums(h)) {
        return Err("pipeline: the H MSM differs from the closed-form sum over the downloaded h".into());
    }
    let log_n = h.len().trailing_zeros();
    let x = Scalar::from(mix(seed) | 1) * Scalar::from(mix(seed ^ 1) | 1);
    let [ax, bx, cx] = evaluate_from_domain([&data.a, &data.b, &data.c], log_n, x);
    let z = pow(x, [h.len() as u64, 0, 0, 0]) - Scalar::from(1u64);
    if horner(h, x) * z != ax * bx - cx {
        return Err("pipeline: h(x)·(xⁿ − 1) != A(x)·B(x) − C(x) at a random x".into());
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------------------
// GPU

/// One engine's pinned inputs: a, b, c, then (tail, tail_index, ones) per assignment.
type PinnedInputs = (
    PinnedBuffer<Scalar>,
    PinnedBuffer<Scalar>,
    PinnedBuffer<Scalar>,
    Vec<(PinnedBuffer<Scalar>, PinnedBuffer<u32>, PinnedBuffer<u32>)>,
);

/// Job inputs where the variant puts them.
enum Place {
    Pageable,
    /// Per engine.
    Pinned(Vec<PinnedInputs>),
}

struct GpuCase<'g> {
    engines: Vec<PartitionEngine<'g>>,
    /// The driver's count of device memory in use, per GPU, from before the SRS is made to the last job.
    watches: Vec<MemoryWatch>,
    place: Place,
    data: HostData,
    gens: Generators,
    variant: Variant,
    seed: u64,
    /// Where the median run's phases go as CSV (`$ZKGPU_BENCH_TIMELINE/pipeline-{variant}-{log_n}.csv`).
    timeline: Option<std::path::PathBuf>,
    /// (wall ms, combined report) per run.
    runs: Vec<(f64, PhaseReport)>,
    first: Option<PartitionResults>,
    differ: bool,
}

fn pin_copy<T: zkgpu::DeviceSafe>(gpu: &Gpu, v: &[T]) -> Result<PinnedBuffer<T>> {
    let mut p = gpu.alloc_pinned::<T>(v.len(), PinnedMode::WriteCombined)?;
    p.par_chunks_mut(1 << 16).zip(v.par_chunks(1 << 16)).for_each(|(d, s)| d.copy_from_slice(s));
    Ok(p)
}

/// A device buffer's copy in pinned memory (where a budget's engine may stream it from).
fn pinned_copy<T: zkgpu::DeviceSafe>(gpu: &Gpu, v: &DeviceBuffer<T>) -> Result<PinnedBuffer<T>> {
    let mut p = gpu.alloc_pinned::<T>(v.len(), PinnedMode::WriteCombined)?;
    gpu.download_into(v, &mut p)?;
    Ok(p)
}

impl<'g> GpuCase<'g> {
    fn prepare(gpu: &'g Gpu, variant: Variant, n: usize, seed: u64) -> Result<GpuCase<'g>> {
        let gpus: Vec<&'g Gpu> =
            if variant.gpus == 1 { vec![gpu] } else { super::first_gpus(variant.gpus)?.iter().collect() };
        let g2_len = variant.g2.then_some((n / 4).max(1));
        let gens = Generators::new(n, g2_len, seed);
        let mut lens = vec![n];
        lens.extend(g2_len);
        let data = host_data(n, &lens, seed)?;
        let config = PartitionConfig {
            streams: variant.streams,
            batch_add: variant.batch_add,
            max_device_bytes: variant.budget,
            h_msm: MsmConfig {
                chunk: variant.h_chunk,
                window_bits: variant.h_window_bits,
                ..PartitionConfig::default().h_msm
            },
            query_window: variant.query_window,
            window_staging: variant.window_staging.unwrap_or(PartitionConfig::default().window_staging),
            interleave_streamed: !variant.serial,
            max_tail_fraction: variant.max_tail.map_or(1.0, |p| f64::from(p) / 100.0),
            ..PartitionConfig::default()
        };
        let mut engines = Vec::new();
        let mut watches = Vec::new();
        for g in &gpus {
            // A budget's H query comes from pinned memory, made before the watch starts (its device copy is
            // only the generator's).
            let pinned_h = match variant.budget {
                Some(_) => Some(pinned_copy(g, &generate_on_gpu(g, &gens.h, n)?)?),
                None => None,
            };
            // Streamed queries likewise.
            let pinned_queries = if variant.queries_pinned {
                let g1 = gens
                    .g1
                    .iter()
                    .map(|inp| pinned_copy(g, &generate_on_gpu(g, inp, n)?))
                    .collect::<Result<Vec<_>>>()?;
                let g2 = match (&gens.g2, g2_len) {
                    (Some(inp), Some(m)) => Some(pinned_copy(g, &generate_on_gpu(g, inp, m)?)?),
                    _ => None,
                };
                Some((g1, g2))
            } else {
                None
            };
            // Kernels loaded and their local memory reserved first: the watch counts the engine's memory.
            g.warm_up()?;
            g.preload_kernels()?;
            g.synchronize()?;
            watches.push(MemoryWatch::start(g, std::time::Duration::from_millis(1))?);
            let mut srs = match pinned_h {
                Some(h) => PartitionSrs::pinned(g, h)?,
                None => PartitionSrs::new(g, generate_on_gpu(g, &gens.h, n)?)?,
            };
            match pinned_queries {
                Some((g1, g2)) => {
                    srs.add_assignment_pinned(g1, Vec::new())?;
                    if let Some(q) = g2 {
                        srs.add_assignment_pinned(Vec::new(), vec![q])?;
                    }
                }
                None => {
                    let g1 = gens
                        .g1
                        .iter()
                        .map(|inp| generate_on_gpu(g, inp, n))
                        .collect::<Result<Vec<DeviceBuffer<G1Affine>>>>()?;
                    srs.add_assignment(g, g1, Vec::new())?;
                    if let (Some(inp), Some(m)) = (&gens.g2, g2_len) {
                        srs.add_assignment(g, Vec::new(), vec![generate_on_gpu(g, inp, m)?])?;
                    }
                }
            }
            engines.push(PartitionEngine::new(g, srs, config)?);
        }
        let place = if variant.pinned {
            let mut per = Vec::new();
            for g in &gpus {
                let asg = data
                    .assignments
                    .iter()
                    .map(|d| Ok((pin_copy(g, &d.tail)?, pin_copy(g, &d.tail_index)?, pin_copy(g, &d.ones)?)))
                    .collect::<Result<Vec<_>>>()?;
                per.push((pin_copy(g, &data.a)?, pin_copy(g, &data.b)?, pin_copy(g, &data.c)?, asg));
            }
            Place::Pinned(per)
        } else {
            Place::Pageable
        };
        Ok(GpuCase {
            engines,
            watches,
            place,
            data,
            gens,
            variant,
            seed,
            timeline: None,
            runs: Vec::new(),
            first: None,
            differ: false,
        })
    }

    fn job<'a>(
        place: &'a Place,
        data: &'a HostData,
        engine: usize,
        h_out: Option<&'a mut PinnedBuffer<Scalar>>,
    ) -> PartitionJob<'a> {
        match place {
            Place::Pinned(per) => {
                let (a, b, c, asg) = &per[engine];
                let assignments =
                    asg.iter().map(|(t, i, o)| AssignmentInput { tail: t, tail_index: i, ones: o }).collect();
                PartitionJob { a, b, c, assignments, h_out }
            }
            Place::Pageable => PartitionJob {
                a: &data.a,
                b: &data.b,
                c: &data.c,
                assignments: data
                    .assignments
                    .iter()
                    .map(|d| AssignmentInput { tail: &d.tail, tail_index: &d.tail_index, ones: &d.ones })
                    .collect(),
                h_out,
            },
        }
    }

    fn record(&mut self, results: PartitionResults) {
        match &self.first {
            None => self.first = Some(results),
            Some(f) => self.differ |= *f != results,
        }
    }

    /// The run whose wall time is the median.
    fn median_run(&self) -> Option<&(f64, PhaseReport)> {
        let mut order: Vec<&(f64, PhaseReport)> = self.runs.iter().collect();
        order.sort_by(|a, b| a.0.total_cmp(&b.0));
        order.get(order.len() / 2).copied()
    }
}

/// One run's jobs on `engine` ([`JOBS_PER_GPU`], two in flight): their reports and results, in order.
fn run_engine(
    engine: &mut PartitionEngine<'_>,
    place: &Place,
    data: &HostData,
    e: usize,
) -> Result<(Vec<PhaseReport>, Vec<PartitionResults>)> {
    let (mut reports, mut results) = (Vec::new(), Vec::new());
    let mut pending = VecDeque::new();
    for _ in 0..JOBS_PER_GPU {
        pending.push_back(engine.start(GpuCase::job(place, data, e, None))?);
        if pending.len() == 2
            && let Some(t) = pending.pop_front()
        {
            let out = engine.finish(t)?;
            reports.push(out.report);
            results.push(out.results);
        }
    }
    while let Some(t) = pending.pop_front() {
        let out = engine.finish(t)?;
        reports.push(out.report);
        results.push(out.results);
    }
    Ok((reports, results))
}

impl Case for GpuCase<'_> {
    fn inputs(&self) -> &'static str {
        if self.variant.pinned { "pinned" } else { "pageable" }
    }

    fn run(&mut self) -> Result<f64> {
        let (place, data) = (&self.place, &self.data);
        let start = Instant::now();
        // One host thread per engine, as a multi-GPU prover drives them: `start` waits for its job's uploads
        // and for the engine's previous MSM stage, which must not hold up the other GPUs.
        let per_engine: Vec<Result<(Vec<PhaseReport>, Vec<PartitionResults>)>> = std::thread::scope(|scope| {
            let handles: Vec<_> = self
                .engines
                .iter_mut()
                .enumerate()
                .map(|(e, engine)| scope.spawn(move || run_engine(engine, place, data, e)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err("an engine's thread panicked".into())))
                .collect()
        });
        let wall = start.elapsed().as_secs_f64() * 1e3;
        let mut per_gpu = Vec::with_capacity(per_engine.len());
        for outcome in per_engine {
            let (reports, results) = outcome?;
            per_gpu.push(PhaseReport::merge(&reports).with_wall_ms(wall));
            for r in results {
                self.record(r);
            }
        }
        self.runs.push((wall, combine_gpus(&per_gpu)));
        Ok(wall)
    }

    fn verify(&mut self, runs: u32) -> Result<()> {
        if self.differ {
            return Err(format!("pipeline: the jobs of {runs} runs did not all return the same results").into());
        }
        // One more job, downloading h.
        let n = self.data.a.len();
        let gpu = self.engines[0].gpu();
        let mut h = gpu.alloc_pinned::<Scalar>(n, PinnedMode::ReadBack)?;
        let job = Self::job(&self.place, &self.data, 0, Some(&mut h));
        let t = self.engines[0].start(job)?;
        let out = self.engines[0].finish(t)?;
        if self.first.as_ref().is_some_and(|f| *f != out.results) {
            return Err("pipeline: the verification job's results differ from the timed runs'".into());
        }
        check(&self.gens, &self.data, &out.results, &h, self.seed)
    }

    fn extra(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        let Some((wall, r)) = self.median_run() else {
            return m;
        };
        let gpus = self.engines.len() as f64;
        let compute = r.kernel_ms / gpus;
        let transfer = r.h2d_ms / gpus;
        let jobs = (JOBS_PER_GPU * self.engines.len()) as f64;
        let bound = compute.max(transfer);
        let (streamed_h, streamed_adds) = (r.kernel_ms_of("chunk.h."), r.kernel_ms_of("add."));
        let streamed_tails = r.kernel_ms_of("chunk.") - streamed_h;
        let fields = [
            ("gpu_busy", r.gpu_busy),
            ("h2d_gbps", r.h2d_gbps),
            ("compute_ms", compute),
            ("transfer_ms", transfer),
            ("bound_ratio", if bound > 0.0 { wall / bound } else { 0.0 }),
            ("ms_per_job", wall / jobs),
            ("ntt_ms", r.kernel_ms_of("ntt.") / jobs),
            // A streamed MSM's own phases overlap the others' (interleaved): count its steps' kernels instead.
            ("msm_h_ms", if streamed_h > 0.0 { streamed_h } else { r.kernel_ms_of("msm.h") } / jobs),
            (
                "tail_ms",
                (r.kernel_ms_of("msm.tail") + r.kernel_ms_of("batch_add") + streamed_adds + streamed_tails) / jobs,
            ),
            ("stream_add_ms", streamed_adds / jobs),
            ("stream_tail_ms", streamed_tails / jobs),
            ("idle_ms", (wall - r.active_ms / gpus).max(0.0) / jobs),
            ("h_chunks", r.phases.iter().filter(|p| p.name.starts_with("h2d.h.")).count() as f64 / jobs),
        ];
        for (k, v) in fields {
            m.insert(k.to_string(), v.into());
        }
        if let Some(path) = &self.timeline
            && let Err(e) = std::fs::write(path, timeline_csv(r))
        {
            eprintln!("pipeline: could not write the timeline {}: {e}", path.display());
        }
        // The largest waits per job, as a JSON object and one line on stderr (where the overlap is lost).
        for (field, kind) in [("compute_waits_ms", PhaseKind::Kernel), ("copy_waits_ms", PhaseKind::H2d)] {
            let top: Vec<(String, f64)> = waits(r, kind).into_iter().take(6).map(|(f, ms)| (f, ms / jobs)).collect();
            eprintln!(
                "{field} per job: {}",
                top.iter().map(|(f, ms)| format!("{f} {ms:.1}")).collect::<Vec<_>>().join(", ")
            );
            m.insert(
                field.to_string(),
                top.into_iter().map(|(f, ms)| (f, ms.into())).collect::<serde_json::Map<_, _>>().into(),
            );
        }
        m.insert("jobs".to_string(), (JOBS_PER_GPU * self.engines.len()).into());
        m.insert("gpus".to_string(), self.engines.len().into());
        m.insert("peak_bytes".to_string(), self.watches.iter().map(MemoryWatch::peak).max().unwrap_or(0).into());
        m.insert(
            "engine_bytes".to_string(),
            self.engines.iter().map(PartitionEngine::device_bytes).max().unwrap_or(0).into(),
        );
        if let Some(engine) = self.engines.first() {
            let memory = engine.memory();
            m.insert("streamed_bytes".to_string(), memory.streamed_bytes_per_job.into());
            m.insert("streamed_assignments".to_string(), memory.streamed_assignments.into());
            m.insert("slots".to_string(), memory.slots.into());
            m.insert("c_shares_b".to_string(), memory.c_shares_b.into());
            if let Some(w) = memory.query_window {
                m.insert("query_window".to_string(), w.into());
            }
            if self.variant.budget.is_some() {
                m.insert("budget_bytes".to_string(), memory.budget.into());
            }
        }
        m
    }
}

/// The directory named by this variable receives each case's timeline: the median run's phases.
const TIMELINE_DIR: &str = "ZKGPU_BENCH_TIMELINE";

/// A report's phases as CSV, `start_ms,end_ms,kind,name,bytes` in order of start, times from the first start.
fn timeline_csv(report: &PhaseReport) -> String {
    let mut phases: Vec<_> = report.phases.iter().collect();
    phases.sort_by(|a, b| a.start_ms.total_cmp(&b.start_ms));
    let origin = phases.first().map_or(0.0, |p| p.start_ms);
    let mut csv = String::from("start_ms,end_ms,kind,name,bytes\n");
    for p in phases {
        let (start, end) = (p.start_ms - origin, p.end_ms - origin);
        csv += &format!("{start:.3},{end:.3},{},{},{}\n", p.kind.as_str(), p.name, p.bytes);
    }
    csv
}

/// Where a stream waited: for the phases of `kind` in time order, the gap between the end of everything of
/// that kind before a phase and its start, summed per phase family (the name without its step number, e.g.
/// `chunk.h` for `chunk.h.17`), largest first. For kernels this is compute waiting (for a copy, or for the
/// host to queue work); for H2D copies, the copy streams waiting (for a buffer's readers, or with nothing
/// queued).
fn waits(report: &PhaseReport, kind: PhaseKind) -> Vec<(String, f64)> {
    let mut phases: Vec<_> = report.phases.iter().filter(|p| p.kind == kind).collect();
    phases.sort_by(|a, b| a.start_ms.total_cmp(&b.start_ms));
    let mut by_family: Vec<(String, f64)> = Vec::new();
    let mut busy_until = f64::NEG_INFINITY;
    for p in phases {
        let gap = if busy_until.is_finite() { (p.start_ms - busy_until).max(0.0) } else { 0.0 };
        busy_until = busy_until.max(p.end_ms);
        let family = match p.name.rsplit_once('.') {
            Some((head, step)) if step.bytes().all(|b| b.is_ascii_digit()) => head,
            _ => p.name.as_str(),
        };
        match by_family.iter_mut().find(|(f, _)| f == family) {
            Some((_, ms)) => *ms += gap,
            None => by_family.push((family.to_string(), gap)),
        }
    }
    by_family.sort_by(|a, b| b.1.total_cmp(&a.1));
    by_family
}

// ---------------------------------------------------------------------------------------------------------
// CPU reference

struct CpuCase {
    gens: Generators,
    data: HostData,
    h_bases: Vec<G1Affine>,
    g1: Vec<Vec<G1Affine>>,
    seed: u64,
    last: Option<(PartitionResults, Vec<Scalar>)>,
}

/// The generated points on the CPU.
fn expand<C: BenchCurve>(inp: &Inputs<C>, n: usize) -> Vec<C::Affine> {
    (0..n).map(|i| C::to_affine(&C::add(&inp.seeds[i / RUN], &C::mul(&inp.q, (i % RUN) as u64)))).collect()
}

impl CpuCase {
    fn prepare(n: usize, seed: u64) -> CpuCase {
        let gens = Generators::new(n, None, seed);
        let data = host_data(n, &[n], seed).unwrap_or_else(|_| HostData {
            a: Vec::new(),
            b: Vec::new(),
            c: Vec::new(),
            assignments: Vec::new(),
        });
        let h_bases = expand(&gens.h, n);
        let g1 = gens.g1.iter().map(|inp| expand(inp, n)).collect();
        CpuCase { gens, data, h_bases, g1, seed, last: None }
    }
}

impl Case for CpuCase {
    fn inputs(&self) -> &'static str {
        "host"
    }

    fn run(&mut self) -> Result<f64> {
        let g1: Vec<&[G1Affine]> = self.g1.iter().map(Vec::as_slice).collect();
        let queries =
            [AssignmentQueries { len: self.data.assignments.first().map_or(0, |d| d.values.len()), g1: &g1, g2: &[] }];
        let job = GpuCase::job(&Place::Pageable, &self.data, 0, None);
        let start = Instant::now();
        let out = partition_cpu(&self.h_bases, &queries, &job)?;
        let ms = start.elapsed().as_secs_f64() * 1e3;
        self.last = Some(out);
        Ok(ms)
    }

    fn verify(&mut self, _runs: u32) -> Result<()> {
        let (results, h) = self.last.as_ref().ok_or("pipeline: no run to verify")?;
        check(&self.gens, &self.data, results, h, self.seed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variants_parse() {
        for v in GPU_VARIANTS {
            assert!(parse_variant(v).is_some(), "{v}");
        }
        assert_eq!(parse_variant("pinned-2stream-2gpu").map(|v| v.gpus), Some(2));
        assert_eq!(parse_variant("pinned-1stream").map(|v| v.streams), Some(StreamMode::One));
        assert_eq!(parse_variant("pinned-2stream-budget16").and_then(|v| v.budget), Some(16 << 30));
        assert_eq!(
            parse_variant("pinned-1stream-budget24").map(|v| (v.budget, v.streams)),
            Some((Some(24 << 30), StreamMode::One))
        );
        assert_eq!(
            parse_variant("pinned-2stream-budget16-hchunk23").map(|v| (v.budget, v.h_chunk)),
            Some((Some(16 << 30), Some(1 << 23)))
        );
        assert_eq!(
            parse_variant("pinned-2stream-budget16-hchunk22-qpinned-tail20").map(|v| (
                v.budget,
                v.h_chunk,
                v.queries_pinned,
                v.max_tail
            )),
            Some((Some(16 << 30), Some(1 << 22), true, Some(20)))
        );
        assert_eq!(
            parse_variant("pinned-2stream-budget16-qpinned-qw20").map(|v| (v.budget, v.queries_pinned, v.query_window)),
            Some((Some(16 << 30), true, Some(1 << 20)))
        );
        assert_eq!(
            parse_variant("pinned-2stream-budget8-qpinned-serial").map(|v| (v.budget, v.queries_pinned, v.serial)),
            Some((Some(8 << 30), true, true))
        );
        assert_eq!(
            parse_variant("pinned-2stream-budget16-qpinned-tail20-serial").map(|v| (v.max_tail, v.serial)),
            Some((Some(20), true))
        );
        assert_eq!(
            parse_variant("pinned-2stream-budget16-hchunk22-qpinned-tail20-hw18-serial").map(|v| (
                v.h_chunk,
                v.max_tail,
                v.h_window_bits,
                v.serial
            )),
            Some((Some(1 << 22), Some(20), Some(18), true))
        );
        assert_eq!(
            parse_variant("pinned-2stream-budget16-qpinned-qw21-qs3-tail20").map(|v| (
                v.query_window,
                v.window_staging,
                v.max_tail
            )),
            Some((Some(1 << 21), Some(3), Some(20)))
        );
        for bad in [
            "pinned-2stream-serial",
            "pinned-2stream-tail0",
            "pinned-2stream-tail101",
            "pinned-2stream-tail20-tail30",
            "pinned-2stream-budget16-serial-serial",
            "pinned-2stream-budget10",
            "pinned-2stream-2gpu-budget16",
            "pinned-2stream-budget16-budget24",
            "nothing-budget16",
            "pinned-2stream-hchunk15",
            "pinned-2stream-hchunk23-hchunk24",
            "pinned-2stream-qw20",
            "pinned-2stream-qpinned-qpinned",
            "pinned-2stream-2gpu-qpinned",
            "pinned-2stream-qpinned-qw12",
            "pinned-2stream-hw9",
            "pinned-2stream-qs3",
            "pinned-2stream-qpinned-qs1",
            "pinned-2stream-qpinned-qs3-qs3",
            "pinned-2stream-qpinned-qs3-qw20",
            "pinned-2stream-hw23",
            "pinned-2stream-hw16-hw17",
            "pinned-2stream-budget16-serial-hw16",
        ] {
            assert!(parse_variant(bad).is_none(), "{bad}");
        }
        assert!(parse_variant("blstrs").is_none());
    }

    #[test]
    fn waits_per_phase_family_and_the_timeline() {
        let phase = |name: &str, kind, start_ms, end_ms| zkgpu::profile::Phase {
            name: name.into(),
            kind,
            start_ms,
            end_ms,
            bytes: 0,
        };
        let report = PhaseReport::from_phases(vec![
            phase("h2d.h.0", PhaseKind::H2d, 0.0, 4.0),
            phase("chunk.h.0", PhaseKind::Kernel, 4.0, 10.0),
            phase("h2d.h.1", PhaseKind::H2d, 4.0, 8.0),
            phase("h2d.0.g1.0", PhaseKind::H2d, 12.0, 14.0),
            phase("chunk.0.g1.0", PhaseKind::Kernel, 14.0, 15.0),
            phase("chunk.h.1", PhaseKind::Kernel, 15.0, 20.0),
            phase("msm.h", PhaseKind::Span, 0.0, 20.0),
            phase("ntt.h.a", PhaseKind::Kernel, 23.0, 24.0),
        ]);
        let kernels = waits(&report, PhaseKind::Kernel);
        assert_eq!(
            kernels,
            vec![("chunk.0.g1".to_string(), 4.0), ("ntt.h.a".to_string(), 3.0), ("chunk.h".to_string(), 0.0)]
        );
        let copies = waits(&report, PhaseKind::H2d);
        assert_eq!(copies, vec![("h2d.0.g1".to_string(), 4.0), ("h2d.h".to_string(), 0.0)]);
        assert!(waits(&report, PhaseKind::D2h).is_empty());

        let csv = timeline_csv(&report);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 9, "a header and one line per phase");
        assert_eq!(lines[0], "start_ms,end_ms,kind,name,bytes");
        assert_eq!(lines[1], "0.000,4.000,h2d,h2d.h.0,0");
        assert_eq!(lines[8], "23.000,24.000,kernel,ntt.h.a,0");
        let starts: Vec<f64> = lines[1..].iter().map(|l| l.split(',').next().unwrap().parse().unwrap()).collect();
        assert!(starts.windows(2).all(|w| w[0] <= w[1]), "in order of start: {starts:?}");
    }

    #[test]
    fn inversion_and_barycentric_evaluation() {
        let x = Scalar::from(123_456_789u64);
        assert_eq!(invert(x) * x, Scalar::from(1u64));
        // Values of V(X) = 3 + 5X on the domain of size 8, evaluated at a point off the domain.
        let log_n = 3;
        let w = zkgpu::ntt::cpu::root_of_unity(log_n);
        let v: Vec<Scalar> = (0..8).map(|i| Scalar::from(3u64) + Scalar::from(5u64) * pow(w, [i, 0, 0, 0])).collect();
        let y = Scalar::from(11u64);
        let [got, _, _] = evaluate_from_domain([&v, &v, &v], log_n, y);
        assert_eq!(got, Scalar::from(3u64 + 5 * 11));
        assert_eq!(horner(&[Scalar::from(3u64), Scalar::from(5u64)], y), Scalar::from(58u64));
    }

    #[test]
    fn cpu_case_verifies_and_catches_a_wrong_result() {
        let op = PipelineOp;
        let opts = CaseOptions { seed: 5, iters: None };
        let mut case = op.prepare(None, "blstrs", 10, &opts).unwrap();
        case.run().unwrap();
        case.verify(1).unwrap();
        assert!(op.prepare(None, "pinned-2stream", 10, &opts).is_err());

        let mut cpu = CpuCase::prepare(1 << 10, 9);
        cpu.run().unwrap();
        if let Some((r, _)) = cpu.last.as_mut() {
            r.assignments[0].g1.swap(0, 1);
        }
        assert!(cpu.verify(1).is_err(), "swapped query results");
        let mut cpu = CpuCase::prepare(1 << 10, 9);
        cpu.run().unwrap();
        if let Some((_, h)) = cpu.last.as_mut() {
            h[3] += Scalar::from(1u64);
        }
        assert!(cpu.verify(1).is_err(), "a wrong h");
    }
}
