//! `startup`: how long a new process takes to its first GPU result, the cost a prover pays at every start
//! before the kernels' speed matters (module loading: the driver's JIT, or zkgpu's module cache).
//!
//! Each timed run starts this runner again as a child process (`--startup-child VARIANT`) with the driver's
//! JIT cache disabled (`CUDA_CACHE_DISABLE=1`) and no prebuilt cubins (`ZKGPU_CUBIN_DIR` removed). The child
//! makes its inputs on the CPU first (not timed), then opens the GPU, runs one operation of size 2^n from host
//! memory and waits for its result; the time is from the child's start (the parent's spawn) to that result,
//! less the input preparation the child reports. The child checks its result against a closed form or the CPU
//! reference after timing and fails the run on a mismatch.
//!
//! Variants: `cold_first_{ntt,msm_g1,batch_add,msm_g2}` (an empty zkgpu module cache: the first op of each
//! family compiles its modules), `cold_warm_up` (`zkgpu::warm_up`, every production module, from an empty
//! cache) and `warm_first_op` (an NTT with the cache filled by an untimed warm-up first). All of these ignore
//! SASS embedded at build time (`ZKGPU_EMBEDDED_SASS=off`): they time the JIT and the module cache, what a
//! build without ptxas gets. `embedded_first_msm_g1` and `embedded_warm_up` time the same from an empty cache
//! with the embedded SASS in use (a runner built with `ZKGPU_SASS` naming the device's architecture).
use super::batch_add::BenchCurve;
use super::{BenchOp, Case, CaseOptions, Prepared, Target};
use crate::Result;
use blstrs::Scalar;
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Instant, SystemTime, UNIX_EPOCH};
use zkgpu::curve::{Curve, G1, G2};
use zkgpu::module_cache::CACHE_DIR_ENV;
use zkgpu::{Gpu, Ntt, NttConfig};

const VARIANTS: &[&str] = &[
    "cold_first_ntt",
    "cold_first_msm_g1",
    "cold_first_batch_add",
    "cold_first_msm_g2",
    "cold_warm_up",
    "warm_first_op",
    "embedded_first_msm_g1",
    "embedded_warm_up",
];

/// The line a child prints: `zkgpu-startup <result epoch µs> <inputs ms>`.
const REPORT: &str = "zkgpu-startup";

pub struct StartupOp;

impl BenchOp for StartupOp {
    fn name(&self) -> &'static str {
        "startup"
    }
    fn about(&self) -> &'static str {
        "process start to the first result (NTT, MSM G1/G2, batch addition at 2^n; the warm-up), cold and warm module cache"
    }
    fn variants(&self, target: Target) -> &'static [&'static str] {
        target.pick(VARIANTS, &[])
    }
    fn in_default_sweep(&self) -> bool {
        false
    }
    fn default_sizes(&self, target: Target) -> &'static [u32] {
        target.pick(&[20], &[])
    }
    fn prepare<'g>(&self, gpu: Option<&'g Gpu>, variant: &str, log_n: u32, opts: &CaseOptions) -> Prepared<'g> {
        let gpu = gpu.ok_or("startup is timed on a GPU only")?;
        if !VARIANTS.contains(&variant) {
            return Err(format!("startup: no variant {variant:?}").into());
        }
        let cc = gpu.info().compute_capability;
        if variant.starts_with("embedded_") && !zkgpu::module::PREBUILT_SASS.iter().any(|s| s.compute_capability == cc)
        {
            return Err(format!(
                "startup {variant}: this runner embeds no SASS for sm_{}{} (build it with ZKGPU_SASS=sm_{}{})",
                cc.0, cc.1, cc.0, cc.1
            )
            .into());
        }
        let scratch = std::env::temp_dir().join(format!("zkgpu-startup-{}-{variant}", std::process::id()));
        let case = StartupCase {
            variant: variant.to_string(),
            log_n,
            seed: opts.seed,
            device: gpu.info().ordinal,
            scratch,
            runs: 0,
        };
        if variant == "warm_first_op" {
            // Fill the cache once (untimed); every timed run then finds it filled.
            case.spawn("cold_warm_up", &case.cache_dir())?;
        }
        Ok(Box::new(case))
    }
}

struct StartupCase {
    variant: String,
    log_n: u32,
    seed: u64,
    device: usize,
    /// Holds the module cache folders of this case's runs.
    scratch: PathBuf,
    runs: u32,
}

impl StartupCase {
    /// The module cache a run uses: one shared folder for `warm_first_op`, a new empty one per cold run.
    fn cache_dir(&self) -> PathBuf {
        if self.variant == "warm_first_op" {
            self.scratch.join("cache")
        } else {
            self.scratch.join(format!("cold-{}", self.runs))
        }
    }

    /// Runs the child for `variant` with module cache `cache`; milliseconds from spawn to its first result,
    /// less its input preparation.
    fn spawn(&self, variant: &str, cache: &Path) -> Result<f64> {
        let exe = std::env::current_exe()?;
        let (child_variant, embedded) = match variant {
            "warm_first_op" => ("cold_first_ntt", "off"),
            "embedded_first_msm_g1" => ("cold_first_msm_g1", "on"),
            "embedded_warm_up" => ("cold_warm_up", "on"),
            other => (other, "off"),
        };
        let spawned_us = epoch_us();
        let out = Command::new(exe)
            .args(["--startup-child", child_variant, "--sizes", &self.log_n.to_string()])
            .args(["--device", &self.device.to_string(), "--seed", &self.seed.to_string()])
            .env(CACHE_DIR_ENV, cache)
            .env("CUDA_CACHE_DISABLE", "1")
            .env(zkgpu::module::EMBEDDED_SASS_ENV, embedded)
            .env_remove(zkgpu::module::CUBIN_DIR_ENV)
            .output()?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            return Err(format!(
                "startup child {variant} failed ({}):\n{stdout}{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            )
            .into());
        }
        let report =
            stdout.lines().find_map(|l| l.strip_prefix(REPORT)).ok_or("the startup child printed no report")?;
        let mut fields = report.split_whitespace();
        let result_us: u128 = fields.next().ok_or("no result time")?.parse()?;
        let inputs_ms: f64 = fields.next().ok_or("no input time")?.parse()?;
        Ok(result_us.saturating_sub(spawned_us) as f64 / 1e3 - inputs_ms)
    }
}

impl Case for StartupCase {
    fn inputs(&self) -> &'static str {
        "pageable"
    }
    fn run(&mut self) -> Result<f64> {
        let cache = self.cache_dir();
        let ms = self.spawn(&self.variant, &cache)?;
        if self.variant != "warm_first_op" {
            let _ = std::fs::remove_dir_all(&cache);
        }
        self.runs += 1;
        Ok(ms)
    }
    fn verify(&mut self, runs: u32) -> Result<()> {
        // Every child checked its own result and exited with failure otherwise (`run` then returned an error).
        let _ = std::fs::remove_dir_all(&self.scratch);
        if self.runs == runs { Ok(()) } else { Err(format!("{} of {runs} startup runs happened", self.runs).into()) }
    }
    fn extra(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut extra = serde_json::Map::new();
        extra.insert("cuda_cache_disabled".into(), true.into());
        extra.insert("module_cache".into(), (if self.variant == "warm_first_op" { "filled" } else { "empty" }).into());
        extra.insert("embedded_sass".into(), self.variant.starts_with("embedded_").into());
        extra
    }
}

fn epoch_us() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros())
}

/// The child's side (`zkgpu-bench --startup-child VARIANT --sizes N`): prepare inputs, then time from here on
/// is the parent's to measure; print the report line once the first result is back, then check it.
pub fn child(variant: &str, log_n: u32, device: usize, seed: u64) -> Result<()> {
    let n = 1usize << log_n;
    let started = Instant::now();
    let report = |inputs_ms: f64| println!("{REPORT} {} {inputs_ms:.3}", epoch_us());
    match variant {
        "cold_first_ntt" => {
            let input = super::ntt::random_scalars(n, seed, 0);
            let mut values = input.clone();
            let inputs_ms = started.elapsed().as_secs_f64() * 1e3;
            let gpu = Gpu::new(device)?;
            Ntt::new(&gpu)?.run_host(&mut values, n, NttConfig::forward())?;
            report(inputs_ms);
            let mut expected = input;
            zkgpu::ntt::cpu::ntt(&mut expected, NttConfig::forward())?;
            if values != expected {
                return Err("the NTT's result differs from the CPU reference".into());
            }
        }
        "cold_first_msm_g1" => first_msm::<G1>(n, seed, device, started, report)?,
        "cold_first_msm_g2" => first_msm::<G2>(n, seed, device, started, report)?,
        "cold_first_batch_add" => {
            let (a, b, points) = points::<G1>(n, seed);
            let inputs_ms = started.elapsed().as_secs_f64() * 1e3;
            let gpu = Gpu::new(device)?;
            let on_device = gpu.upload(&points)?;
            let sum = zkgpu::batch_add::batch_add::<G1>(&gpu, &on_device, None, zkgpu::batch_add::Method::Xyzz)?;
            report(inputs_ms);
            // Σ (A + i·B) = n·A + n(n-1)/2·B.
            let expected = G1::add(
                &G1::mul_scalar(&G1::to_affine(&a), &Scalar::from(n as u64)),
                &G1::mul_scalar(&G1::to_affine(&b), &Scalar::from((n as u64) * (n as u64 - 1) / 2)),
            );
            if !G1::eq(&sum, &expected) {
                return Err("the batch addition's sum differs from its closed form".into());
            }
        }
        "cold_warm_up" => {
            let gpu = Gpu::new(device)?;
            let loaded = zkgpu::warm_up(&gpu)?;
            report(0.0);
            if loaded.len() != zkgpu::module::Family::PRODUCTION.len() {
                return Err(format!("the warm-up loaded {} modules", loaded.len()).into());
            }
        }
        other => return Err(format!("--startup-child: unknown variant {other:?}").into()),
    }
    Ok(())
}

/// Points `A + i·B` (random `A`, `B`), affine: distinct, cheap to make, with closed-form sums.
fn points<C: BenchCurve>(n: usize, seed: u64) -> (C::Projective, C::Projective, Vec<C::Affine>) {
    let inputs = super::batch_add::inputs::<C>(1, seed);
    let (a, b) = (inputs.a, inputs.b);
    // Runs of 1024 from `A + k·1024·B`, in parallel.
    let step = C::mul(&b, 1024);
    let points = (0..n.div_ceil(1024))
        .into_par_iter()
        .flat_map_iter(|k| {
            let mut p = C::add(&a, &C::mul(&step, k as u64));
            (k * 1024..n.min(k * 1024 + 1024)).map(move |_| {
                let affine = C::to_affine(&p);
                p = C::add(&p, &b);
                affine
            })
        })
        .collect();
    (a, b, points)
}

/// MSM of random scalars over `A + i·B`: expected `(Σ sᵢ)·A + (Σ i·sᵢ)·B`.
fn first_msm<C: BenchCurve>(n: usize, seed: u64, device: usize, started: Instant, report: impl Fn(f64)) -> Result<()>
where
    C::Affine: zkgpu::DeviceSafe,
{
    let (a, b, bases) = points::<C>(n, seed);
    let scalars = super::ntt::random_scalars(n, seed, 1);
    let inputs_ms = started.elapsed().as_secs_f64() * 1e3;
    let gpu = Gpu::new(device)?;
    let sum = zkgpu::msm::msm::<C>(&gpu, &bases, &scalars)?;
    report(inputs_ms);
    let (total, weighted) = scalars
        .par_iter()
        .enumerate()
        .map(|(i, s)| (*s, *s * Scalar::from(i as u64)))
        .reduce(|| (Scalar::from(0u64), Scalar::from(0u64)), |x, y| (x.0 + y.0, x.1 + y.1));
    let expected = C::add(&C::mul_scalar(&C::to_affine(&a), &total), &C::mul_scalar(&C::to_affine(&b), &weighted));
    if !C::eq(&sum, &expected) {
        return Err(format!("the {} MSM differs from its closed form", C::STEM).into());
    }
    Ok(())
}
