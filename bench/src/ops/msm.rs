//! `msm_g1`, `msm_g2`: the multi-scalar multiplication `Σ sᵢ·Pᵢ` of 2^n points through `zkgpu::msm::Msm`.
//!
//! GPU variants name the plan, then (as in the NTT ops) where the inputs are:
//! - `auto`: `MsmConfig::default()` (the cost model's window, default chunks); the baseline.
//! - `c12`, `c16`, `c20`: explicit window bits.
//! - `precompute2`, `precompute4`, `precompute8`: 2, 4 or 8 precomputed copies of the bases
//!   (`MsmBases::precompute`, built before timing and not timed: a prover's SRS is prepared once), automatic
//!   window. Device inputs only.
//! - `chunk22` .. `chunk27` (listed ones; any `chunkK` with K in 16..=27 parses), also `-pinned`: chunks of
//!   2^K points (2^25 is the default for XYZZ accumulation with device inputs since eb6e183, about n/4 with
//!   host inputs; fewer chunks mean fewer bucket fixups, more scratch, and with host inputs a longer first
//!   upload that nothing overlaps).
//! - `radix`: the stable radix sort (`Sort::Radix`) instead of the default counting sort. Device inputs.
//! - `counting`: the counting sort (`Sort::Counting`, the default: global atomics, the scatter in one pass per
//!   64 MiB of a virtual window's sorted entries, at most 8) named explicitly. Device inputs.
//! - `scatter1`, `scatter2`, `scatter4`, `scatter8`: the counting sort with the scatter in 1, 2, 4 or 8 passes
//!   over bucket ranges. Device inputs.
//!
//! Without a suffix the bases are resident (`MsmBases`) and the scalars on the device (`inputs` "device"):
//! one run is `Msm::run` timed with CUDA events, from scalars on the device to the normalized result on the
//! host. `-pinned` / `-pageable`: bases and scalars in page-locked (`Gpu::pin_slice`) or ordinary host
//! memory, timed end to end with the wall clock (chunked uploads overlapping compute, the result's download).
//! In every case the engine (`Msm::new`: plan and scratch) is made before timing and reused, as a prover
//! does; the first (warm-up) run allocates the host-input staging. The default sweep runs `auto` on all three
//! placements and `precompute4`; `--variants` selects the rest. CPU variant (no GPU): `blstrs` (blstrs'
//! `multi_exp` through `zkgpu::msm::cpu::msm_cpu`, the tests' reference), at 2^12..2^16.
//!
//! Inputs: bases `Pᵢ = A + t·B + j·Q` for `i = t·1024 + j` (random `A`, `B`, `Q`), generated on the GPU by
//! `batch_add_{g1,g2}_expand` (the CPU variant computes the same points on the CPU), so they are distinct and
//! cost no CPU time at 2^26; scalars uniformly random, generated in parallel from the seed.
//!
//! Verification: every run must return the same point (determinism), and that point must equal the closed
//! form `Σ sᵢ·Pᵢ = (Σ sᵢ)·A + (Σ sᵢ·tᵢ)·B + (Σ sᵢ·jᵢ)·Q`: n scalar-field multiply-adds (in parallel) and three
//! blstrs scalar multiplications. That is exact (no sampling), independent of the GPU's algorithm (only group
//! linearity and blstrs), and cheap at any size, where a blstrs MSM of 2^26 points would take minutes.
//!
//! Extra JSON fields: `window_bits`, `chunk` (points per chunk), `copies` (precomputed copies, 1 = none),
//! `peak_bytes` (device memory held during a run: device inputs including the precomputed table, plus
//! `Msm::device_bytes`, i.e. scratch and host-input staging) and, for `precomputeK`, `precompute_ms`.
use super::batch_add::{BenchCurve, Inputs, RUN, closed_form, coefficient_sums, generate_on_gpu, inputs};
use super::ntt::random_scalars;
use super::{BenchOp, Case, CaseOptions, Prepared, Target};
use crate::Result;
use blstrs::Scalar;
use rayon::prelude::*;
use std::marker::PhantomData;
use std::time::Instant;
use zkgpu::msm::cpu::msm_cpu;
use zkgpu::msm::{Accumulation, Bases, DeviceLimits, G1, G2, Msm, MsmBases, MsmConfig, MsmPlan, Scalars, Sort};
use zkgpu::{DeviceBuffer, Gpu, PinnedBuffer, PinnedMode};

const GPU_VARIANTS: &[&str] = &[
    "auto",
    "auto-pinned",
    "auto-pageable",
    "c12",
    "c12-pinned",
    "c12-pageable",
    "c16",
    "c16-pinned",
    "c16-pageable",
    "c18",
    "c19",
    "c20",
    "c20-pinned",
    "c20-pageable",
    "precompute2",
    "precompute4",
    "precompute8",
    "precompute2-chunk26",
    "precompute2-chunk27",
    "chunk22",
    "chunk22-pinned",
    "chunk23",
    "chunk23-pinned",
    "chunk24-pinned",
    "chunk25",
    "chunk26",
    "chunk27",
    "chunk26-c20",
    "chunk26-c22",
    "radix",
    "counting",
    "scatter1",
    "scatter2",
    "scatter4",
    "scatter8",
    "affine",
    "affine-pinned",
    "affine-r1",
    "affine-r2",
    "affine-r3",
    "affine-r5",
    "affine-full",
];
const DEFAULT_GPU_VARIANTS: &[&str] = &["auto", "auto-pinned", "auto-pageable", "precompute4", "affine"];

/// The plan and the input placement ("device", "pinned", "pageable") a GPU variant names.
fn parse_variant(variant: &str) -> Option<(MsmConfig, &'static str)> {
    let (choice, inputs) = if let Some(c) = variant.strip_suffix("-pinned") {
        (c, "pinned")
    } else if let Some(c) = variant.strip_suffix("-pageable") {
        (c, "pageable")
    } else {
        (variant, "device")
    };
    let bits = |c: u32| MsmConfig { window_bits: Some(c), ..MsmConfig::default() };
    let affine = |rounds| MsmConfig { accumulation: Accumulation::Affine { rounds }, ..MsmConfig::default() };
    let config = match choice {
        "auto" => MsmConfig::default(),
        "c12" => bits(12),
        "c16" => bits(16),
        "c18" => bits(18),
        "c19" => bits(19),
        "c20" => bits(20),
        "precompute2" | "precompute4" | "precompute8" if inputs == "device" => {
            MsmConfig { precompute: choice["precompute".len()..].parse().ok()?, ..MsmConfig::default() }
        }
        "precompute2-chunk26" | "precompute2-chunk27" if inputs == "device" => MsmConfig {
            precompute: 2,
            chunk: Some(1 << choice["precompute2-chunk".len()..].parse::<u32>().ok()?),
            ..MsmConfig::default()
        },
        "chunk26-c20" | "chunk26-c22" if inputs == "device" => MsmConfig {
            chunk: Some(1 << 26),
            window_bits: Some(choice["chunk26-c".len()..].parse().ok()?),
            ..MsmConfig::default()
        },
        // `chunkK`: chunks of 2^K points, any placement (the host-input chunking's A/B).
        chunk if chunk.starts_with("chunk") => {
            let bits = chunk["chunk".len()..].parse::<u32>().ok().filter(|b| (16..=27).contains(b))?;
            MsmConfig { chunk: Some(1 << bits), ..MsmConfig::default() }
        }
        "radix" if inputs == "device" => MsmConfig { sort: Sort::Radix, ..MsmConfig::default() },
        "counting" if inputs == "device" => MsmConfig { sort: Sort::Counting, ..MsmConfig::default() },
        "scatter1" | "scatter2" | "scatter4" | "scatter8" if inputs == "device" => MsmConfig {
            sort: Sort::Counting,
            scatter_passes: Some(choice["scatter".len()..].parse().ok()?),
            ..MsmConfig::default()
        },
        // Affine accumulation: the plan's rounds, `-rK` K rounds, `-full` every round.
        "affine" => affine(None),
        "affine-full" => affine(Some(32)),
        other => affine(Some(other.strip_prefix("affine-r")?.parse().ok().filter(|&r| r >= 1)?)),
    };
    Some((config, inputs))
}

pub struct MsmOp<C>(PhantomData<C>);

/// The two ops, in listing order.
pub fn all_ops() -> Vec<Box<dyn BenchOp>> {
    vec![Box::new(MsmOp::<G1>(PhantomData)), Box::new(MsmOp::<G2>(PhantomData))]
}

impl<C: BenchCurve> BenchOp for MsmOp<C> {
    fn name(&self) -> &'static str {
        if C::STEM == "g1" { "msm_g1" } else { "msm_g2" }
    }
    fn about(&self) -> &'static str {
        "MSM (zkgpu::msm::Msm), 255-bit random scalars, distinct bases; -pinned/-pageable: host inputs"
    }
    fn variants(&self, target: Target) -> &'static [&'static str] {
        target.pick(GPU_VARIANTS, &["blstrs"])
    }
    fn default_variants(&self, target: Target) -> &'static [&'static str] {
        target.pick(DEFAULT_GPU_VARIANTS, &["blstrs"])
    }
    fn default_sizes(&self, target: Target) -> &'static [u32] {
        match (target, C::STEM) {
            (Target::Gpu, "g1") => &[16, 18, 20, 22, 24, 26, 27],
            (Target::Gpu, _) => &[16, 18, 20, 22, 24],
            (Target::Cpu, _) => zkgpu_bench::bench_args::cpu_default_sizes(self.name()),
        }
    }
    fn kernels(&self, variant: &str) -> Vec<String> {
        let s = C::STEM;
        let mut names: Vec<String> =
            ["msm_count", "msm_scan_sums", "msm_scan", "msm_scatter"].map(String::from).to_vec();
        names.extend(["accumulate", "fold", "fixup", "reduce"].map(|k| format!("msm_{s}_{k}")));
        names.extend(["reduce", "finish"].map(|k| format!("set_sum_{s}_{k}")));
        if variant.starts_with("precompute") {
            names.push(format!("msm_{s}_precompute"));
        }
        names
    }
    fn prepare<'g>(&self, gpu: Option<&'g Gpu>, variant: &str, log_n: u32, opts: &CaseOptions) -> Prepared<'g> {
        let n = 1usize << log_n;
        let generator = Generator::<C>::new(n, opts.seed ^ 0x4d53_4d00 ^ u64::from(log_n));
        let scalars = random_scalars(n, opts.seed ^ 0x004d_534d, u64::from(log_n));
        let sums = coefficient_sums(&scalars);
        match (gpu, variant) {
            (Some(gpu), _) => {
                let (config, inputs) =
                    parse_variant(variant).ok_or_else(|| format!("{}: no GPU variant {variant:?}", self.name()))?;
                // Fitted to the memory left once the bases (the precomputed table) and, with device inputs, the
                // scalars are on the device: with host inputs the generated points stay there until the run.
                let device_scalars = if inputs == "device" { n * size_of::<Scalar>() } else { 0 };
                let input_bytes = n * size_of::<C::Affine>() * config.precompute.max(1) as usize + device_scalars;
                let limits = DeviceLimits::of(gpu)?.less(input_bytes);
                let plan = MsmPlan::within::<C>(n, &config, inputs != "device", &limits)?;
                let points = generator.expand_on_gpu(gpu)?;
                let mut precompute_ms = None;
                let place = match inputs {
                    "device" if plan.copies > 1 => {
                        // MsmBases::precompute takes host bases: bring the generated points back first.
                        let host = gpu.download(&points)?;
                        drop(points);
                        let start = Instant::now();
                        let bases = MsmBases::precompute(gpu, &host, &plan)?;
                        precompute_ms = Some(start.elapsed().as_secs_f64() * 1e3);
                        Place::Device { bases, scalars: gpu.upload(&scalars)? }
                    }
                    "device" => Place::Device { bases: MsmBases::from_buffer(points)?, scalars: gpu.upload(&scalars)? },
                    "pinned" => {
                        let mut bases = gpu.alloc_pinned::<C::Affine>(n, PinnedMode::WriteCombined)?;
                        gpu.download_into(&points, &mut bases)?;
                        Place::Pinned { bases, scalars: gpu.pin_slice(&scalars, PinnedMode::WriteCombined)? }
                    }
                    _ => Place::Pageable { bases: gpu.download(&points)?, scalars },
                };
                let msm = Msm::<C>::new(gpu, plan)?;
                let check = Check { generator, sums, first: None, last: None, runs_differ: false };
                Ok(Box::new(GpuCase { gpu, msm, place, inputs, precompute_ms, check }))
            }
            (None, "blstrs") => {
                let bases = generator.expand_on_cpu();
                let check = Check { generator, sums, first: None, last: None, runs_differ: false };
                Ok(Box::new(CpuCase::<C> { bases, scalars, check }))
            }
            (None, _) => Err(format!("{}: no CPU variant {variant:?}", self.name()).into()),
        }
    }
}

/// The bases' parameters `A, B, Q` and the run seeds `A + t·B`.
/// The bench inputs `Pᵢ = A + t·B + j·Q` (batch addition's generator, `super::batch_add::inputs`).
struct Generator<C: BenchCurve> {
    inputs: Inputs<C>,
    n: usize,
}

impl<C: BenchCurve> Generator<C> {
    fn new(n: usize, seed: u64) -> Self {
        Generator { inputs: inputs::<C>(n, seed), n }
    }

    /// The n bases on the GPU (`batch_add_{C}_expand`: one thread per run of RUN points).
    fn expand_on_gpu(&self, gpu: &Gpu) -> Result<DeviceBuffer<C::Affine>> {
        generate_on_gpu(gpu, &self.inputs, self.n)
    }

    /// The same n bases on the CPU (runs in parallel, one addition and one normalization per point).
    fn expand_on_cpu(&self) -> Vec<C::Affine> {
        let (n, q) = (self.n, self.inputs.q);
        self.inputs
            .seeds
            .par_iter()
            .enumerate()
            .flat_map_iter(|(t, &seed)| {
                let mut acc = seed;
                (0..RUN.min(n - t * RUN)).map(move |_| {
                    let p = C::to_affine(&acc);
                    acc = C::add(&acc, &q);
                    p
                })
            })
            .collect()
    }

    /// `Σ sᵢ·Pᵢ` from the scalar sums of [`coefficient_sums`].
    fn expected(&self, sums: &[Scalar; 3]) -> C::Projective {
        closed_form(&self.inputs, sums)
    }
}

/// Results seen so far, checked against the closed form.
struct Check<C: BenchCurve> {
    generator: Generator<C>,
    sums: [Scalar; 3],
    first: Option<C::Projective>,
    last: Option<C::Projective>,
    runs_differ: bool,
}

impl<C: BenchCurve> Check<C> {
    fn record(&mut self, sum: C::Projective) {
        match &self.first {
            None => self.first = Some(sum),
            Some(first) => self.runs_differ |= !C::eq(first, &sum),
        }
        self.last = Some(sum);
    }

    fn verify(&self, what: &str, runs: u32) -> Result<()> {
        let Some(last) = &self.last else {
            return Err(format!("msm_{} {what}: no run to verify", C::STEM).into());
        };
        if self.runs_differ {
            return Err(format!("msm_{} {what}: the {runs} runs did not all return the same point", C::STEM).into());
        }
        if !C::eq(last, &self.generator.expected(&self.sums)) {
            return Err(format!("msm_{} {what}: the result differs from the closed-form blstrs sum", C::STEM).into());
        }
        Ok(())
    }
}

enum Place<C: BenchCurve> {
    Device { bases: MsmBases<C>, scalars: DeviceBuffer<Scalar> },
    Pinned { bases: PinnedBuffer<C::Affine>, scalars: PinnedBuffer<Scalar> },
    Pageable { bases: Vec<C::Affine>, scalars: Vec<Scalar> },
}

struct GpuCase<'g, C: BenchCurve> {
    gpu: &'g Gpu,
    msm: Msm<'g, C>,
    place: Place<C>,
    inputs: &'static str,
    precompute_ms: Option<f64>,
    check: Check<C>,
}

impl<C: BenchCurve> Case for GpuCase<'_, C> {
    fn inputs(&self) -> &'static str {
        self.inputs
    }

    fn run(&mut self) -> Result<f64> {
        let msm = &mut self.msm;
        let (ms, sum) = match &self.place {
            Place::Device { bases, scalars } => {
                let mut sum = None;
                let ms = self.gpu.time_ms(|_| {
                    sum = Some(msm.run(Bases::Device(bases), Scalars::Device(scalars))?);
                    Ok(())
                })?;
                (f64::from(ms), sum)
            }
            Place::Pinned { bases, scalars } => {
                let start = Instant::now();
                let sum = msm.run(Bases::Host(&bases[..]), Scalars::Host(&scalars[..]))?;
                (start.elapsed().as_secs_f64() * 1e3, Some(sum))
            }
            Place::Pageable { bases, scalars } => {
                let start = Instant::now();
                let sum = msm.run(Bases::Host(bases), Scalars::Host(scalars))?;
                (start.elapsed().as_secs_f64() * 1e3, Some(sum))
            }
        };
        self.check.record(sum.ok_or("Msm::run returned no result")?);
        Ok(ms)
    }

    fn verify(&mut self, runs: u32) -> Result<()> {
        self.check.verify(self.inputs, runs)
    }

    fn extra(&self) -> serde_json::Map<String, serde_json::Value> {
        let plan = self.msm.plan();
        let inputs = match &self.place {
            Place::Device { bases, scalars } => bases.device_bytes() + scalars.byte_len(),
            Place::Pinned { .. } | Place::Pageable { .. } => 0,
        };
        let mut extra = serde_json::Map::from_iter([
            ("window_bits".to_string(), plan.window_bits.into()),
            ("chunk".to_string(), plan.chunk.into()),
            ("copies".to_string(), plan.copies.into()),
            ("peak_bytes".to_string(), (inputs + self.msm.device_bytes()).into()),
        ]);
        if let Some(ms) = self.precompute_ms {
            extra.insert("precompute_ms".to_string(), ms.into());
        }
        extra
    }
}

struct CpuCase<C: BenchCurve> {
    bases: Vec<C::Affine>,
    scalars: Vec<Scalar>,
    check: Check<C>,
}

impl<C: BenchCurve> Case for CpuCase<C> {
    fn inputs(&self) -> &'static str {
        "host"
    }

    fn run(&mut self) -> Result<f64> {
        let start = Instant::now();
        let sum = msm_cpu::<C>(&self.bases, &self.scalars)?;
        let ms = start.elapsed().as_secs_f64() * 1e3;
        self.check.record(sum);
        Ok(ms)
    }

    fn verify(&mut self, runs: u32) -> Result<()> {
        self.check.verify("blstrs", runs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_variants_parse_and_precompute_is_device_only() {
        for v in GPU_VARIANTS.iter().chain(DEFAULT_GPU_VARIANTS) {
            assert!(parse_variant(v).is_some(), "{v}");
        }
        assert_eq!(
            parse_variant("c16-pinned"),
            Some((MsmConfig { window_bits: Some(16), ..Default::default() }, "pinned"))
        );
        assert_eq!(parse_variant("precompute4").map(|(c, i)| (c.precompute, i)), Some((4, "device")));
        assert_eq!(parse_variant("precompute8").map(|(c, i)| (c.precompute, i)), Some((8, "device")));
        let rounds = |v: &str| parse_variant(v).map(|(c, _)| c.accumulation);
        assert_eq!(rounds("affine-r3"), Some(Accumulation::Affine { rounds: Some(3) }));
        assert_eq!(rounds("affine-pinned"), Some(Accumulation::Affine { rounds: None }));
        assert_eq!(parse_variant("chunk23-pinned").map(|(c, i)| (c.chunk, i)), Some((Some(1 << 23), "pinned")));
        assert_eq!(parse_variant("scatter2").map(|(c, _)| (c.sort, c.scatter_passes)), Some((Sort::Counting, Some(2))));
        for bad in [
            "counting-pinned",
            "precompute4-pinned",
            "precompute8-pageable",
            "precompute3",
            "c13",
            "auto-device",
            "blstrs",
            "affine-r0",
            "affine-rx",
            "chunk15",
            "chunk28-pinned",
        ] {
            assert!(parse_variant(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn cpu_cases_verify_against_the_closed_form() {
        let opts = CaseOptions { seed: 7, iters: None };
        for op in all_ops() {
            // Two runs of RUN points (the closed form's t and j both vary).
            let mut case = op.prepare(None, "blstrs", 11, &opts).unwrap();
            case.run().unwrap();
            case.run().unwrap();
            case.verify(2).unwrap();
            assert!(op.prepare(None, "auto", 11, &opts).is_err());
        }
    }

    /// The closed form agrees with blstrs on points that are not a whole number of runs, and a wrong result
    /// or runs that disagree fail verification.
    #[test]
    fn closed_form_matches_blstrs_and_rejects_wrong_results() {
        let n = RUN + 77;
        let generator = Generator::<G1>::new(n, 3);
        let bases = generator.expand_on_cpu();
        assert_eq!(bases.len(), n);
        let scalars = random_scalars(n, 3, 0);
        let sums = coefficient_sums(&scalars);
        let exact = msm_cpu::<G1>(&bases, &scalars).unwrap();
        assert_eq!(generator.expected(&sums), exact);

        let mut check = Check { generator, sums, first: None, last: None, runs_differ: false };
        assert!(check.verify("test", 0).is_err(), "nothing recorded");
        check.record(exact);
        check.verify("test", 1).unwrap();
        let other = msm_cpu::<G1>(&bases[..n - 1], &scalars[..n - 1]).unwrap();
        check.record(other);
        assert!(check.verify("test", 2).is_err(), "a wrong last result");
        check.record(exact);
        assert!(check.verify("test", 3).is_err(), "runs that differ");
    }

    #[test]
    fn ops_names_sizes_and_kernels() {
        let ops = all_ops();
        let names: Vec<&str> = ops.iter().map(|o| o.name()).collect();
        assert_eq!(names, ["msm_g1", "msm_g2"]);
        assert_eq!(ops[0].default_sizes(Target::Gpu), &[16, 18, 20, 22, 24, 26, 27]);
        assert_eq!(ops[1].default_sizes(Target::Gpu), &[16, 18, 20, 22, 24]);
        assert!(ops.iter().all(|o| o.in_default_sweep()), "both curves run in the default sweep");
        assert!(ops[0].kernels("auto").contains(&"msm_g1_fold".to_string()));
        assert!(ops[1].kernels("precompute4").contains(&"msm_g2_precompute".to_string()));
        assert!(!ops[0].kernels("auto").iter().any(|k| k.contains("precompute")));
    }
}
