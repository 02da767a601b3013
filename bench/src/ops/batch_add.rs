//! `batch_add_{g1,g2}_{all,half}`: the sum of 2^n affine points on the device, all of them or those selected
//! by a 50 % random bitmap; kernel time of one whole sum (accumulate, reduce, finish; the affine levels too).
//!
//! GPU variants: `xyzz` (XYZZ accumulation; the baseline) and, for `_all`, `affine` (affine levels with one
//! inversion per thread run, then XYZZ). CPU variant (no GPU): `blstrs` (mixed additions, the reference).
//!
//! Inputs are distinct points generated on the GPU (`bench_batch_add_{g1,g2}_expand`): thread `t` writes
//! `A + t·B + j·Q` for `j < RUN` (random `A`, `B`, `Q`), so no point repeats and the expected sum has a closed
//! form: `c·A + (Σ t)·B + (Σ j)·Q` over the selected points, which `verify` checks with blstrs.
use super::{BenchOp, Case, CaseOptions, Prepared, Target};
use crate::Result;
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use rayon::prelude::*;
use std::marker::PhantomData;
use std::time::Instant;
use zkgpu::batch_add::cpu::batch_add_cpu;
use zkgpu::batch_add::{BatchAdder, Curve, G1, G2, Method};
use zkgpu::kernel_args::{BatchAddExpand, read, write};
use zkgpu::{DeviceBuffer, Gpu};

/// Points per generator thread.
pub(super) const RUN: usize = 1024;

/// What differs between G1 and G2 here.
pub trait BenchCurve: Curve + Send + Sync {
    const STEM: &'static str;
    /// A fixed point of the group (hashed to the curve: blstrs exposes no inherent generator).
    fn generator() -> Self::Projective;
    fn mul(p: &Self::Projective, s: u64) -> Self::Projective;
    fn add(a: &Self::Projective, b: &Self::Projective) -> Self::Projective;
    fn to_affine(p: &Self::Projective) -> Self::Affine;
    fn eq(a: &Self::Projective, b: &Self::Projective) -> bool;
}

/// `BenchCurve` for one group: its blstrs types and the domain tag its fixed point is hashed with.
macro_rules! bench_curve {
    ($curve:ty, $stem:literal, $projective:ty, $affine:ty, $dst:literal) => {
        impl BenchCurve for $curve {
            const STEM: &'static str = $stem;
            fn generator() -> $projective {
                <$projective>::hash_to_curve(b"zkgpu batch_add bench", $dst, &[])
            }
            fn mul(p: &$projective, s: u64) -> $projective {
                p * Scalar::from(s)
            }
            fn add(a: &$projective, b: &$projective) -> $projective {
                a + b
            }
            fn to_affine(p: &$projective) -> $affine {
                <$affine>::from(p)
            }
            fn eq(a: &$projective, b: &$projective) -> bool {
                a == b
            }
        }
    };
}

bench_curve!(G1, "g1", G1Projective, G1Affine, b"ZKGPU-BENCH-G1");
bench_curve!(G2, "g2", G2Projective, G2Affine, b"ZKGPU-BENCH-G2");

/// `Σ sᵢ`, `Σ sᵢ·tᵢ`, `Σ sᵢ·jᵢ` for `i = t·RUN + j`: what [`closed_form`] needs of the scalars.
pub(super) fn coefficient_sums(s: &[Scalar]) -> [Scalar; 3] {
    let zero = Scalar::from(0u64);
    s.par_chunks(RUN)
        .enumerate()
        .map(|(t, run)| {
            let (mut sum, mut sj) = (zero, zero);
            for (j, &x) in run.iter().enumerate() {
                sum += x;
                sj += x * Scalar::from(j as u64);
            }
            [sum, sum * Scalar::from(t as u64), sj]
        })
        .reduce(|| [zero; 3], |x, y| [x[0] + y[0], x[1] + y[1], x[2] + y[2]])
}

/// `Σ sᵢ·Pᵢ` for the generated points `Pᵢ = A + t·B + j·Q` (normalized), from the scalars'
/// [`coefficient_sums`]: the expected result of the MSM and pipeline benches.
pub(super) fn closed_form<C: BenchCurve>(inp: &Inputs<C>, [sum, st, sj]: &[Scalar; 3]) -> C::Projective {
    let mul = |p: &C::Projective, k: &Scalar| C::mul_scalar(&C::to_affine(p), k);
    C::normalize(&C::add(&C::add(&mul(&inp.a, sum), &mul(&inp.b, st)), &mul(&inp.q, sj)))
}

/// A random multiple of the generator (64-bit scalar products: random enough for distinct inputs).
fn random_point<C: BenchCurve>(rng: &mut ChaCha8Rng) -> C::Projective {
    let g = C::mul(&C::generator(), rng.next_u64() | 1);
    C::mul(&g, rng.next_u64() | 1)
}

/// The generator's parameters `A, B, Q` and the seeds `A + t·B`.
pub(super) struct Inputs<C: BenchCurve> {
    pub(super) a: C::Projective,
    pub(super) b: C::Projective,
    pub(super) q: C::Projective,
    pub(super) seeds: Vec<C::Projective>,
}

pub(super) fn inputs<C: BenchCurve>(n: usize, seed: u64) -> Inputs<C> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (a, b, q) = (random_point::<C>(&mut rng), random_point::<C>(&mut rng), random_point::<C>(&mut rng));
    let mut seeds = Vec::with_capacity(n.div_ceil(RUN));
    let mut acc = a;
    for _ in 0..n.div_ceil(RUN) {
        seeds.push(acc);
        acc = C::add(&acc, &b);
    }
    Inputs { a, b, q, seeds }
}

/// 50 % random bitmap over n points (`None` for `_all`).
fn bitmap(n: usize, half: bool, seed: u64) -> Option<Vec<u32>> {
    half.then(|| {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xb17_3a9);
        let mut words: Vec<u32> = (0..n.div_ceil(32)).map(|_| rng.next_u32()).collect();
        if !n.is_multiple_of(32)
            && let Some(last) = words.last_mut()
        {
            *last &= (1u32 << (n % 32)) - 1;
        }
        words
    })
}

/// `c·A + (Σ t)·B + (Σ j)·Q` over the selected points `A + t·B + j·Q`, index `i = t·RUN + j`.
fn expected_sum<C: BenchCurve>(inp: &Inputs<C>, n: usize, bitmap: Option<&[u32]>) -> C::Projective {
    let (mut count, mut sum_t, mut sum_j) = (0u64, 0u64, 0u64);
    for w in 0..n.div_ceil(32) {
        let mut word = match bitmap {
            Some(b) => b[w],
            None if (w + 1) * 32 <= n => u32::MAX,
            None => (1u32 << (n % 32)) - 1,
        };
        while word != 0 {
            let i = (w * 32) as u64 + word.trailing_zeros() as u64;
            count += 1;
            sum_t += i / RUN as u64;
            sum_j += i % RUN as u64;
            word &= word - 1;
        }
    }
    let part = C::add(&C::mul(&inp.a, count), &C::mul(&inp.b, sum_t));
    C::add(&part, &C::mul(&inp.q, sum_j))
}

pub struct BatchAddOp<C> {
    half: bool,
    _curve: PhantomData<C>,
}

impl<C> BatchAddOp<C> {
    pub fn new(half: bool) -> Self {
        BatchAddOp { half, _curve: PhantomData }
    }
}

impl<C: BenchCurve> BenchOp for BatchAddOp<C> {
    fn name(&self) -> &'static str {
        match (C::STEM, self.half) {
            ("g1", false) => "batch_add_g1_all",
            ("g1", true) => "batch_add_g1_half",
            (_, false) => "batch_add_g2_all",
            (_, true) => "batch_add_g2_half",
        }
    }
    fn about(&self) -> &'static str {
        if self.half {
            "sum of the points selected by a 50% random bitmap, points on the device"
        } else {
            "sum of all points, points on the device"
        }
    }
    fn variants(&self, target: Target) -> &'static [&'static str] {
        match (target, self.half) {
            (Target::Gpu, _) => &["xyzz", "affine"],
            (Target::Cpu, _) => &["blstrs"],
        }
    }
    fn default_sizes(&self, target: Target) -> &'static [u32] {
        target.pick(&[20, 21, 22, 23, 24, 25, 26], zkgpu_bench::bench_args::cpu_default_sizes(self.name()))
    }
    fn kernels(&self, variant: &str) -> Vec<String> {
        let mut names = vec![format!("batch_add_{}_accumulate", C::STEM)];
        names.extend(["reduce", "finish"].map(|k| format!("set_sum_{}_{k}", C::STEM)));
        if variant == "affine" {
            names.push(format!("batch_add_{}_affine_level", C::STEM));
            if self.half {
                names.push(format!("batch_add_{}_affine_level_gather", C::STEM));
                names.extend(["count_chunks", "selected_totals", "compact_indices"].map(|k| format!("batch_add_{k}")));
            }
        }
        names
    }
    fn prepare<'g>(&self, gpu: Option<&'g Gpu>, variant: &str, log_n: u32, opts: &CaseOptions) -> Prepared<'g> {
        let n = 1usize << log_n;
        let inp = inputs::<C>(n, opts.seed ^ log_n as u64);
        let bits = bitmap(n, self.half, opts.seed ^ log_n as u64);
        let expected = expected_sum::<C>(&inp, n, bits.as_deref());
        match (gpu, variant) {
            (Some(gpu), "xyzz" | "affine") => {
                let method = if variant == "affine" { Method::Affine } else { Method::Xyzz };
                let points = generate_on_gpu::<C>(gpu, &inp, n)?;
                let bitmap = bits.as_deref().map(|b| gpu.upload(b)).transpose()?;
                let adder = BatchAdder::<C>::new(gpu, n, &[0, n], method)?;
                Ok(Box::new(GpuCase::<C> { gpu, adder, points, bitmap, expected }))
            }
            (None, "blstrs") => {
                let points: Vec<C::Affine> = (0..n)
                    .map(|i| {
                        let p = C::add(&inp.seeds[i / RUN], &C::mul(&inp.q, (i % RUN) as u64));
                        C::to_affine(&p)
                    })
                    .collect();
                Ok(Box::new(CpuCase::<C> { points, bitmap: bits, expected, last: None }))
            }
            _ => Err(format!("{}: no variant {variant:?} here", self.name()).into()),
        }
    }
}

/// The n input points, generated on the GPU from the seeds.
pub(super) fn generate_on_gpu<C: BenchCurve>(gpu: &Gpu, inp: &Inputs<C>, n: usize) -> Result<DeviceBuffer<C::Affine>> {
    let seeds = gpu.upload(&inp.seeds)?;
    let step = gpu.upload(&[C::to_affine(&inp.q)])?;
    let mut points = gpu.alloc_zeroed::<C::Affine>(n)?;
    let function = gpu.kernel(&C::KERNELS.bench_expand)?;
    let expand = BatchAddExpand {
        seeds: read(seeds.raw()),
        step: read(step.raw()),
        run: RUN as u32,
        n: u32::try_from(n)?,
        out: write(points.raw_mut()),
    };
    // SAFETY: bench_batch_add_{C}_expand: ceil(n / RUN) threads, seeds holds that many Jacobian points, step one
    // affine point, points n; distinct buffers.
    unsafe { function.launch(gpu.stream(), zkgpu::launch_config_1d(n.div_ceil(RUN), 64), expand) }?;
    gpu.synchronize()?;
    Ok(points)
}

struct GpuCase<'g, C: BenchCurve> {
    gpu: &'g Gpu,
    adder: BatchAdder<'g, C>,
    points: DeviceBuffer<C::Affine>,
    bitmap: Option<DeviceBuffer<u32>>,
    expected: C::Projective,
}

impl<C: BenchCurve> Case for GpuCase<'_, C> {
    fn inputs(&self) -> &'static str {
        "device"
    }

    fn run(&mut self) -> Result<f64> {
        let (adder, points, bitmap) = (&mut self.adder, &self.points, self.bitmap.as_ref());
        let ms = self.gpu.time_ms(|_| adder.enqueue(points, bitmap))?;
        Ok(ms as f64)
    }

    fn verify(&mut self, _runs: u32) -> Result<()> {
        let got = self.adder.sums()?;
        match got.first() {
            Some(sum) if C::eq(sum, &self.expected) => Ok(()),
            _ => Err(format!("batch_add_{}: GPU sum differs from the closed-form blstrs sum", C::STEM).into()),
        }
    }

    fn extra(&self) -> serde_json::Map<String, serde_json::Value> {
        let method = format!("{:?}", self.adder.method());
        serde_json::Map::from_iter([("method".to_string(), method.into())])
    }
}

struct CpuCase<C: BenchCurve> {
    points: Vec<C::Affine>,
    bitmap: Option<Vec<u32>>,
    expected: C::Projective,
    last: Option<C::Projective>,
}

impl<C: BenchCurve> Case for CpuCase<C> {
    fn inputs(&self) -> &'static str {
        "host"
    }

    fn run(&mut self) -> Result<f64> {
        let start = Instant::now();
        let sum = batch_add_cpu::<C>(&self.points, self.bitmap.as_deref())?;
        let ms = start.elapsed().as_secs_f64() * 1e3;
        self.last = Some(sum);
        Ok(ms)
    }

    fn verify(&mut self, _runs: u32) -> Result<()> {
        match &self.last {
            Some(sum) if C::eq(sum, &self.expected) => Ok(()),
            _ => Err(format!("batch_add_{}: CPU sum differs from the closed form", C::STEM).into()),
        }
    }
}

/// The four ops, in listing order.
pub fn all_ops() -> Vec<Box<dyn BenchOp>> {
    vec![
        Box::new(BatchAddOp::<G1>::new(false)),
        Box::new(BatchAddOp::<G1>::new(true)),
        Box::new(BatchAddOp::<G2>::new(false)),
        Box::new(BatchAddOp::<G2>::new(true)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_cases_verify_against_the_closed_form() {
        let opts = CaseOptions { seed: 5, iters: None };
        for op in
            [&BatchAddOp::<G1>::new(false) as &dyn BenchOp, &BatchAddOp::<G1>::new(true), &BatchAddOp::<G2>::new(true)]
        {
            let mut case = op.prepare(None, "blstrs", 11, &opts).unwrap();
            case.run().unwrap();
            case.verify(1).unwrap();
        }
    }
}
