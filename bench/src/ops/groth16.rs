//! `groth16_prove`: Groth16 proofs of bellperson circuits, synthesis included, with bellperson's own prover
//! as the peer in the same run. Every proof is checked with bellperson's `verify_proof` against public
//! inputs recorded independently of the prover (`groth16::circuits::public_inputs`); a proof that does not
//! verify fails the case.
//!
//! Circuits (`zkgpu::groth16::circuits`), sized by the domain `2^log_n`: SHA-256 compression chains (the
//! peers' circuit: 2^15 = 1 block, 2^16 = 2, 2^20 = 38 blocks = 1.0M constraints, 2^22 = 157, other sizes
//! the most blocks that fit; witnesses almost all 0/1) and, for variants ending in `-x5`, x⁵ rounds (dense
//! witnesses: the tail MSMs are full). Parameters come from bellperson's `generate_random_parameters` (about
//! 50 s per 2^20 constraints on 16 cores), cached in bellperson's file format under `$ZKGPU_PARAMS_DIR`
//! (default `target/zkgpu-params`; the supraseal peer harness reads the same files).
//!
//! Variants: `zkgpu` (one circuit per run: its synthesis, then the GPU), `zkgpu-pipelined` (`prove_batch`
//! of 8: the 8 syntheses in parallel while the GPU proves; `median_ms` = batch wall / 8), `zkgpu-stream`
//! (`prove_batch` of 32: every core synthesizing, the steady state of a proving queue; `zkgpu-stream-2gpu`: 64
//! over the first two GPUs, field `gpus`), `bellperson-cpu`
//! (`create_proof`), `bellperson-cpu-batch` (`create_proof_batch` of 8), each with `-x5`; on the CPU target
//! `zkgpu-cpu` (the CPU reference: `synthesize`, timed, then `prove_witness_cpu`) and the bellperson ones. The zkgpu GPU variants with
//! `-cached` synthesize into cached pinned memory instead of write-combined (an A/B of the synthesis writes).
//! Extra JSON fields: `proofs_per_s`, `synthesis_ms` (zkgpu's synthesis, or bellperson's as it logs it),
//! `post_synthesis_ms` (end of synthesis to finished proof), `constraints`, `verified`, `gpu_busy` (per GPU), and
//! for zkgpu the GPU phases `ntt_ms`, `msm_ms`, `h2d_ms` (per proof); `key_read_ms` (reading the parameter
//! file with `ProvingKey::read`, or `read_pinned` for the GPU prover: `key_pinned`), `first_run_ms` (the
//! warm-up run, which for the GPU prover also loads the kernels and uploads the key).
use super::{BenchOp, Case, CaseOptions, Target};
use crate::Result;
use bellperson::Circuit;
use bellperson::groth16::{self, Parameters, PreparedVerifyingKey, Proof};
use blstrs::{Bls12, Scalar};
use ff::Field;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Instant;
use zkgpu::groth16::circuits::{PowerRounds, Sha256Chain, public_inputs};
use zkgpu::groth16::{Groth16Prover, ProofReport, ProverConfig, ProvingKey, prove_witness_cpu, synthesize};
use zkgpu::profile::PhaseKind;
use zkgpu::{Gpu, PinnedMode};

const GPU_VARIANTS: &[&str] = &[
    "zkgpu",
    "zkgpu-pipelined",
    "zkgpu-stream",
    "zkgpu-stream-2gpu",
    "zkgpu-cached",
    "zkgpu-pipelined-cached",
    "zkgpu-stream-cached",
    "bellperson-cpu",
    "bellperson-cpu-batch",
    "zkgpu-x5",
    "zkgpu-pipelined-x5",
    "zkgpu-stream-x5",
    "bellperson-cpu-x5",
    "bellperson-cpu-batch-x5",
];
const GPU_DEFAULTS: &[&str] = &["zkgpu", "zkgpu-pipelined", "bellperson-cpu", "zkgpu-x5", "zkgpu-pipelined-x5"];
const CPU_VARIANTS: &[&str] = &["zkgpu-cpu", "bellperson-cpu", "zkgpu-cpu-x5", "bellperson-cpu-x5"];
/// Proofs per batch run (`-pipelined`, `-batch`).
const BATCH: usize = 8;
/// Proofs per stream run and GPU (`zkgpu-stream`, `-2gpu`): enough circuits to keep every core synthesizing.
const STREAM: usize = 32;

pub struct Groth16Op;

impl BenchOp for Groth16Op {
    fn name(&self) -> &'static str {
        "groth16_prove"
    }
    fn about(&self) -> &'static str {
        "Groth16 proofs of SHA-256 chains (or x^5 rounds, -x5), synthesis included, verified; bellperson as the peer"
    }
    fn variants(&self, target: Target) -> &'static [&'static str] {
        match target {
            Target::Gpu => GPU_VARIANTS,
            Target::Cpu => CPU_VARIANTS,
        }
    }
    fn default_variants(&self, target: Target) -> &'static [&'static str] {
        match target {
            Target::Gpu => GPU_DEFAULTS,
            Target::Cpu => CPU_VARIANTS,
        }
    }
    fn in_default_sweep(&self) -> bool {
        false
    }
    fn default_sizes(&self, target: Target) -> &'static [u32] {
        match target {
            Target::Gpu => &[20],
            Target::Cpu => zkgpu_bench::bench_args::cpu_default_sizes(self.name()),
        }
    }
    fn prepare<'g>(
        &self,
        gpu: Option<&'g Gpu>,
        variant: &str,
        log_n: u32,
        opts: &CaseOptions,
    ) -> Result<Box<dyn Case + 'g>> {
        let known = self.variants(if gpu.is_some() { Target::Gpu } else { Target::Cpu });
        if !known.contains(&variant) {
            return Err(format!("{}: no variant {variant:?} here (known: {})", self.name(), known.join(", ")).into());
        }
        let (prover, x5, cached) = parse_variant(variant);
        // The GPU prover's key is read into pinned memory, the CPU provers' into the heap.
        let pinned_key = match prover {
            Prover::Zkgpu { .. } => gpu,
            _ => None,
        };
        let workload = Workload::new(log_n, x5, pinned_key)?;
        let engine = match (prover, gpu) {
            (Prover::Zkgpu { gpus, .. }, Some(gpu)) => {
                let pinned_mode = if cached { PinnedMode::ReadBack } else { PinnedMode::WriteCombined };
                let config = ProverConfig { pinned_mode, ..ProverConfig::default() };
                let gpus = if gpus == 1 { std::slice::from_ref(gpu) } else { super::first_gpus(gpus)? };
                Some(Groth16Prover::with_config(gpus, workload.key.clone(), config)?)
            }
            (Prover::Zkgpu { .. }, None) => return Err(format!("{variant} needs a CUDA GPU").into()),
            _ => None,
        };
        Ok(Box::new(Groth16Case {
            prover,
            workload,
            engine,
            rng: ChaCha20Rng::seed_from_u64(opts.seed),
            proved: Vec::new(),
            last: Default::default(),
            first_run_ms: None,
        }))
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Prover {
    /// zkgpu's GPU prover on the first `gpus` GPUs, `proofs` circuits per run through `prove_batch`.
    Zkgpu {
        proofs: usize,
        gpus: usize,
    },
    ZkgpuCpu,
    Bellperson {
        proofs: usize,
    },
}

impl Prover {
    /// Proofs per timed run.
    fn proofs(self) -> usize {
        match self {
            Prover::Zkgpu { proofs, .. } | Prover::Bellperson { proofs } => proofs,
            Prover::ZkgpuCpu => 1,
        }
    }

    /// GPUs it proves on (0 for the CPU provers).
    fn gpus(self) -> usize {
        match self {
            Prover::Zkgpu { gpus, .. } => gpus,
            _ => 0,
        }
    }
}

/// A known variant's prover, whether it proves x⁵ rounds (`-x5`) and whether its pinned memory is cached
/// (`-cached`).
fn parse_variant(variant: &str) -> (Prover, bool, bool) {
    let x5 = variant.ends_with("-x5");
    let cached = variant.trim_end_matches("-x5").ends_with("-cached");
    let zkgpu = |proofs| Prover::Zkgpu { proofs, gpus: 1 };
    let prover = match variant.trim_end_matches("-x5").trim_end_matches("-cached") {
        "zkgpu" => zkgpu(1),
        "zkgpu-pipelined" => zkgpu(BATCH),
        "zkgpu-stream" => zkgpu(STREAM),
        // As many proofs per GPU as on one, so that the throughputs compare.
        "zkgpu-stream-2gpu" => Prover::Zkgpu { proofs: 2 * STREAM, gpus: 2 },
        "zkgpu-cpu" => Prover::ZkgpuCpu,
        "bellperson-cpu" => Prover::Bellperson { proofs: 1 },
        _ => Prover::Bellperson { proofs: BATCH },
    };
    (prover, x5, cached)
}

/// A circuit family at one size with its parameters.
struct Workload {
    x5: bool,
    blocks: usize,
    constants: Vec<Scalar>,
    pvk: PreparedVerifyingKey<Bls12>,
    key: ProvingKey,
    /// Reading the key from its file (`ProvingKey::read`, or `read_pinned` for the GPU prover).
    key_read_ms: f64,
    constraints: usize,
}

/// A circuit of either family (one type, so the provers' batch calls take a `Vec`).
#[derive(Clone)]
enum BenchCircuit {
    Sha(Sha256Chain),
    Power(PowerRounds),
}

impl Circuit<Scalar> for BenchCircuit {
    fn synthesize<CS: bellperson::ConstraintSystem<Scalar>>(
        self,
        cs: &mut CS,
    ) -> std::result::Result<(), bellperson::SynthesisError> {
        match self {
            BenchCircuit::Sha(c) => c.synthesize(cs),
            BenchCircuit::Power(c) => c.synthesize(cs),
        }
    }
}

/// SHA-256 blocks for a domain: the peers' counts where they were measured, else the most that fit.
fn sha_blocks(log_n: u32) -> Result<usize> {
    let n = 1usize << log_n;
    let blocks = match log_n {
        20 => 38,
        22 => 157,
        _ if n >= 26_357 => 1 + (n - 26_357) / 26_704,
        _ => return Err(format!("groth16_prove: 2^{log_n} is too small for one SHA-256 block (2^15 and up)").into()),
    };
    Ok(blocks)
}

/// x⁵ rounds for a domain: 4 constraints each, 2 more for "one" and the result's input constraint.
fn power_rounds(log_n: u32) -> usize {
    ((1usize << log_n) - 2) / 4
}

/// Parameters are cached in bellperson's format under `$ZKGPU_PARAMS_DIR` (default `target/zkgpu-params`).
fn params_dir() -> PathBuf {
    std::env::var_os("ZKGPU_PARAMS_DIR").map_or_else(|| PathBuf::from("target/zkgpu-params"), PathBuf::from)
}

impl Workload {
    /// The circuit family's parameters for `2^log_n` (the rounds' constants and the parameters come from a
    /// fixed seed per size, so cached files stay valid), read from the cache file into pinned memory of
    /// `pinned` if given, else into the heap.
    fn new(log_n: u32, x5: bool, pinned: Option<&Gpu>) -> Result<Workload> {
        let mut rng = ChaCha20Rng::seed_from_u64(0x6167_1600 ^ u64::from(log_n));
        let (blocks, constants, blank, name) = if x5 {
            let template = PowerRounds::random(power_rounds(log_n), &mut rng);
            let name = format!("x5-{}.params", template.constants.len());
            (0, template.constants.clone(), BenchCircuit::Power(template.blank()), name)
        } else {
            let blocks = sha_blocks(log_n)?;
            (
                blocks,
                Vec::new(),
                BenchCircuit::Sha(Sha256Chain { blocks, data: None }),
                format!("sha256-{blocks}.params"),
            )
        };
        let path = params_dir().join(name);
        if !path.exists() {
            eprintln!("groth16_prove: generating parameters for 2^{log_n} (once; cached at {})", path.display());
            let started = Instant::now();
            let params: Parameters<Bls12> =
                groth16::generate_random_parameters::<Bls12, _, _>(blank, &mut rng).map_err(|e| e.to_string())?;
            eprintln!("groth16_prove: parameters in {:.1} s", started.elapsed().as_secs_f64());
            std::fs::create_dir_all(params_dir()).map_err(|e| format!("{}: {e}", params_dir().display()))?;
            let part = path.with_extension("part");
            let file = std::fs::File::create(&part).map_err(|e| format!("{}: {e}", part.display()))?;
            params.write(std::io::BufWriter::new(file)).map_err(|e| format!("{}: {e}", part.display()))?;
            std::fs::rename(&part, &path).map_err(|e| format!("{}: {e}", path.display()))?;
        }
        let started = Instant::now();
        let key = match pinned {
            Some(gpu) => ProvingKey::read_pinned(gpu, &path, false)?,
            None => ProvingKey::read(&path, false)?,
        };
        let key_read_ms = started.elapsed().as_secs_f64() * 1e3;
        eprintln!("groth16_prove: read {} in {key_read_ms:.0} ms (pinned: {})", path.display(), key.is_pinned());
        if key.domain() != 1 << log_n {
            return Err(format!("groth16_prove: the circuit's domain is {}, not 2^{log_n}", key.domain()).into());
        }
        let pvk = groth16::prepare_verifying_key(key.verifying_key());
        let constraints = if x5 { 4 * constants.len() + 2 } else { 26_354 + 26_704 * (blocks - 1) + 3 };
        Ok(Workload { x5, blocks, constants, pvk, key, key_read_ms, constraints })
    }

    fn circuit(&self, rng: &mut ChaCha20Rng) -> BenchCircuit {
        if self.x5 {
            BenchCircuit::Power(PowerRounds { x: Some(Scalar::random(&mut *rng)), constants: self.constants.clone() })
        } else {
            BenchCircuit::Sha(Sha256Chain::random(self.blocks, rng))
        }
    }
}

/// Per-run measurements beyond the time.
#[derive(Default, Clone)]
struct RunStats {
    synthesis_ms: Vec<f64>,
    post_synthesis_ms: Vec<f64>,
    gpu_busy: Vec<f64>,
    ntt_ms: Vec<f64>,
    msm_ms: Vec<f64>,
    h2d_ms: Vec<f64>,
    proofs_per_s: Vec<f64>,
}

struct Groth16Case<'g> {
    prover: Prover,
    workload: Workload,
    engine: Option<Groth16Prover<'g>>,
    rng: ChaCha20Rng,
    /// Every proof made, with its public inputs, verified in `verify`.
    proved: Vec<(Proof<Bls12>, Vec<Scalar>)>,
    last: RunStats,
    /// Wall time of the first run (the warm-up): for the GPU prover it also builds the engine (kernel
    /// modules, the key's upload), what a freshly started prover pays once.
    first_run_ms: Option<f64>,
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    if v.is_empty() { 0.0 } else { v[v.len() / 2] }
}

impl Groth16Case<'_> {
    fn record_report(&mut self, report: &ProofReport) {
        self.last.synthesis_ms.push(report.synthesis_ms);
        self.last.post_synthesis_ms.push(report.post_synthesis_ms);
        if let Some(gpu) = &report.gpu {
            // Kernel phases only: a streamed MSM's span includes waits (its steps, `chunk.*` and `add.*`, count).
            let phase_ms = |pred: &dyn Fn(&str) -> bool| {
                gpu.phases.iter().filter(|p| p.kind == PhaseKind::Kernel && pred(&p.name)).map(|p| p.ms()).sum::<f64>()
            };
            self.last.ntt_ms.push(phase_ms(&|n| n.starts_with("ntt.")));
            let msm = ["msm.", "batch_add.", "chunk.", "add."];
            self.last.msm_ms.push(phase_ms(&|n| msm.iter().any(|m| n.starts_with(m))));
            self.last.h2d_ms.push(gpu.phases.iter().filter(|p| p.kind == PhaseKind::H2d).map(|p| p.ms()).sum());
        }
    }
}

impl Case for Groth16Case<'_> {
    fn inputs(&self) -> &'static str {
        "host"
    }

    fn run(&mut self) -> Result<f64> {
        let count = self.prover.proofs();
        let circuits: Vec<BenchCircuit> = (0..count).map(|_| self.workload.circuit(&mut self.rng)).collect();
        let inputs: Vec<Vec<Scalar>> =
            circuits.iter().map(|c| public_inputs(c.clone())).collect::<zkgpu::Result<_>>()?;
        let r: Vec<Scalar> = (0..count).map(|_| Scalar::random(&mut self.rng)).collect();
        let s: Vec<Scalar> = (0..count).map(|_| Scalar::random(&mut self.rng)).collect();
        let started = Instant::now();
        let (proofs, reports) = match (self.prover, self.engine.as_mut()) {
            (Prover::Zkgpu { .. }, Some(engine)) => {
                let out = engine.prove_batch_reports(circuits, &r, &s)?;
                out.into_iter().unzip()
            }
            (Prover::ZkgpuCpu, _) => {
                // `prove_cpu` in its two steps, so that the synthesis is timed as bellperson's is.
                let domain = self.workload.key.domain();
                let mut proofs = Vec::with_capacity(count);
                for (c, (r, s)) in circuits.into_iter().zip(r.iter().zip(&s)) {
                    let zeros = || vec![Scalar::ZERO; domain];
                    let synthesis = Instant::now();
                    let w = synthesize(c, zeros(), zeros(), zeros())?;
                    self.last.synthesis_ms.push(synthesis.elapsed().as_secs_f64() * 1e3);
                    proofs.push(prove_witness_cpu(&self.workload.key, &w, *r, *s)?);
                }
                (proofs, Vec::new())
            }
            (Prover::Bellperson { .. }, _) => {
                let synthesis = capture_synthesis_log();
                let params = self.workload.key.to_parameters(); // shares the heap key's points
                let proofs = groth16::create_proof_batch(circuits, &params, r, s).map_err(|e| e.to_string())?;
                self.last.synthesis_ms.extend(synthesis.take());
                (proofs, Vec::new())
            }
            (Prover::Zkgpu { .. }, None) => return Err("zkgpu prover without a GPU".into()),
        };
        let ms = started.elapsed().as_secs_f64() * 1e3;
        self.first_run_ms.get_or_insert(ms);
        for report in &reports {
            self.record_report(report);
        }
        if count > 1 {
            let kernel_ms: f64 = reports.iter().filter_map(|r| r.gpu.as_ref()).map(|g| g.kernel_ms).sum();
            if !reports.is_empty() {
                self.last.gpu_busy.push((kernel_ms / (ms * self.prover.gpus().max(1) as f64)).min(1.0));
            }
        } else if let Some(gpu) = reports.first().and_then(|r| r.gpu.as_ref()) {
            self.last.gpu_busy.push(gpu.kernel_ms / ms);
        }
        self.last.proofs_per_s.push(count as f64 * 1e3 / ms);
        self.proved.extend(proofs.into_iter().zip(inputs));
        Ok(ms / count as f64)
    }

    fn verify(&mut self, runs: u32) -> Result<()> {
        let expected = runs as usize * self.prover.proofs();
        if self.proved.len() != expected {
            return Err(format!("groth16_prove: {} proofs made, {expected} expected", self.proved.len()).into());
        }
        for (i, (proof, inputs)) in self.proved.iter().enumerate() {
            if !groth16::verify_proof(&self.workload.pvk, proof, inputs).map_err(|e| e.to_string())? {
                return Err(format!("groth16_prove: proof {i} does not verify").into());
            }
        }
        Ok(())
    }

    fn extra(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        let mut put = |k: &str, v: serde_json::Value| {
            m.insert(k.to_string(), v);
        };
        put("constraints", self.workload.constraints.into());
        put("verified", (!self.proved.is_empty()).into());
        put(
            "circuit",
            if self.workload.x5 { "x5-rounds".into() } else { format!("sha256-{}", self.workload.blocks).into() },
        );
        put("proofs_per_s", median(&self.last.proofs_per_s).into());
        if self.prover.gpus() > 0 {
            put("gpus", self.prover.gpus().into());
        }
        put("key_read_ms", self.workload.key_read_ms.into());
        put("key_pinned", self.workload.key.is_pinned().into());
        if let Some(ms) = self.first_run_ms {
            put("first_run_ms", ms.into());
        }
        let s = &self.last;
        for (k, v) in [
            ("synthesis_ms", &s.synthesis_ms),
            ("post_synthesis_ms", &s.post_synthesis_ms),
            ("gpu_busy", &s.gpu_busy),
            ("ntt_ms", &s.ntt_ms),
            ("msm_ms", &s.msm_ms),
            ("h2d_ms", &s.h2d_ms),
        ] {
            if !v.is_empty() {
                put(k, median(v).into());
            }
        }
        m
    }
}

// ---------------------------------------------------------------------------------------------------------
// bellperson's own synthesis time, from its log ("synthesis time: {:?}" at info level)

static SYNTHESIS_LOG: Mutex<Vec<f64>> = Mutex::new(Vec::new());

struct SynthesisLogger;

impl log::Log for SynthesisLogger {
    fn enabled(&self, meta: &log::Metadata<'_>) -> bool {
        meta.target().starts_with("bellperson")
    }
    fn log(&self, record: &log::Record<'_>) {
        let text = record.args().to_string();
        if let Some(ms) = text.strip_prefix("synthesis time: ").and_then(parse_debug_duration_ms) {
            SYNTHESIS_LOG.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(ms);
        }
    }
    fn flush(&self) {}
}

/// `Duration`'s `Debug` text ("1.02s", "850.3ms", "12µs") in milliseconds.
fn parse_debug_duration_ms(text: &str) -> Option<f64> {
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let (value, unit) = text.split_at(split);
    let value: f64 = value.parse().ok()?;
    let scale = match unit {
        "s" => 1e3,
        "ms" => 1.0,
        "µs" | "us" => 1e-3,
        "ns" => 1e-6,
        _ => return None,
    };
    Some(value * scale)
}

/// The synthesis times bellperson logs from now until `take`.
struct SynthesisCapture;

fn capture_synthesis_log() -> SynthesisCapture {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        if log::set_logger(&SynthesisLogger).is_ok() {
            log::set_max_level(log::LevelFilter::Info);
        }
    });
    SYNTHESIS_LOG.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clear();
    SynthesisCapture
}

impl SynthesisCapture {
    fn take(self) -> Vec<f64> {
        std::mem::take(&mut *SYNTHESIS_LOG.lock().unwrap_or_else(std::sync::PoisonError::into_inner))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_map_to_circuits_that_fit() {
        for log_n in [15, 16, 17, 20, 22] {
            let blocks = sha_blocks(log_n).unwrap();
            assert!(26_354 + 26_704 * (blocks - 1) + 3 <= 1 << log_n, "2^{log_n}: {blocks} blocks");
            assert!(26_354 + 26_704 * blocks + 3 > 1 << (log_n - 1), "2^{log_n}: {blocks} blocks fit half the domain");
            assert!(4 * power_rounds(log_n) + 2 <= 1 << log_n);
        }
        assert!(sha_blocks(14).is_err());
    }

    /// Every listed variant names its prover; the two-GPU one proves as many circuits per GPU as one GPU's.
    #[test]
    fn variants_name_their_provers() {
        for v in GPU_VARIANTS.iter().chain(CPU_VARIANTS) {
            let (prover, x5, cached) = parse_variant(v);
            assert_eq!(x5, v.ends_with("-x5"), "{v}");
            assert_eq!(cached, v.contains("-cached"), "{v}");
            assert_eq!(v.starts_with("zkgpu") && !v.starts_with("zkgpu-cpu"), prover.gpus() > 0, "{v}");
        }
        let (one, _, _) = parse_variant("zkgpu-stream");
        let (two, _, _) = parse_variant("zkgpu-stream-2gpu");
        assert_eq!((one.gpus(), two.gpus()), (1, 2));
        assert_eq!(two.proofs(), 2 * one.proofs());
        assert_eq!(parse_variant("bellperson-cpu-batch-x5"), (Prover::Bellperson { proofs: BATCH }, true, false));
    }

    #[test]
    fn bellperson_durations_parse() {
        assert_eq!(parse_debug_duration_ms("1.5s"), Some(1500.0));
        assert_eq!(parse_debug_duration_ms("850.25ms"), Some(850.25));
        assert_eq!(parse_debug_duration_ms("12µs"), Some(0.012));
        assert_eq!(parse_debug_duration_ms("soon"), None);
    }
}
