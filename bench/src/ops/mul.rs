//! `mul_fq`, `mul_fr`: Montgomery multiplication throughput. Each of n threads (GPU) or elements (CPU) runs a
//! dependent chain `x = x * y`, `iters` times, so latency and issue rate both count, as in a real kernel.
//!
//! GPU variants: `portable` (the portable-Rust arithmetic compiled for the GPU; the baseline) and `asm` (the
//! inline-PTX carry chains; for Fr with -r^-1 from the constant bank), kernels
//! `bench_mul_{fq,fr}_{asm,portable}(x, y, iters, n)`; Fr also has the tuning variants `constinv_lazy`,
//! `modreg` (kernels `bench_mul_fr_<variant>`, see docs/log/kernels-notes.md "Fr tuning") and the experiments `fp64`
//! (the digit products on the FP64 pipe, `zkgpu_kernels::field::fr_f64`; docs/log/kernels-notes.md "Fr on the FP64 pipe")
//! and `hybrid` (even warps `constinv_lazy`, odd warps `fp64`: both pipes at once).
//! CPU variants (the reference, used when no GPU is present): `blstrs` (blst's assembly; the baseline) and
//! `host` (zkgpu's own arithmetic built for the CPU). Each variant's outputs are checked on sampled elements
//! against an independent implementation (GPU and `blstrs` against zkgpu's host build; `host` against blstrs).
use super::{BenchOp, Case, CaseOptions, Prepared, Target};
use crate::Result;
use cudarc::driver::{CudaFunction, PushKernelArg};
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use rayon::prelude::*;
use std::marker::PhantomData;
use std::time::Instant;
use zkgpu::{DeviceBuffer, DeviceSafe, Gpu};
use zkgpu_kernels::field::{Field, Fq, Fr};

/// Chain length per GPU thread: long enough that launch overhead vanishes (~0.15 s per Fq run at 2^22).
const GPU_ITERS: u32 = 1024;
/// Chain length per CPU element: a sweep of the default sizes finishes in seconds on two cores.
const CPU_ITERS: u32 = 16;
/// Sampled elements whose results are recomputed independently after the timed runs.
const SAMPLES: usize = 32;
const GPU_BLOCK: u32 = 256;

/// What differs between the two fields.
pub trait MulSpec: Default + Send + Sync + 'static {
    const OP: &'static str;
    const STEM: &'static str;
    const ABOUT: &'static str;
    /// The element as the device sees it: Montgomery form, 32-bit little-endian limbs.
    type Limbs: DeviceSafe + Default + Copy + Send + Sync + PartialEq + std::fmt::Debug;
    /// zkgpu's arithmetic (host build).
    type Host: ChainElem<Self>;
    /// blstrs's type.
    type Blst: ChainElem<Self>;
    /// The modulus, 64-bit little-endian limbs.
    const MODULUS: &'static [u64];
    /// GPU variants; each has the kernel `bench_mul_{STEM}_{variant}`.
    const GPU_VARIANTS: &'static [&'static str];
    fn from_u64_limbs(l: &[u64]) -> Self::Limbs;
}

/// An element type that can run a multiplication chain and be compared through its limbs.
pub trait ChainElem<S: MulSpec>: Copy + Send + Sync {
    fn from_limbs(l: &S::Limbs) -> Self;
    fn limbs(&self) -> S::Limbs;
    fn mul(&self, rhs: &Self) -> Self;
}

#[derive(Default)]
pub struct FqSpec;
#[derive(Default)]
pub struct FrSpec;

impl MulSpec for FqSpec {
    const OP: &'static str = "mul_fq";
    const STEM: &'static str = "fq";
    const ABOUT: &'static str = "Fq (381-bit) Montgomery multiplication throughput, dependent chains";
    type Limbs = [u32; 12];
    type Host = Fq;
    type Blst = blstrs::Fp;
    const MODULUS: &'static [u64] = &[
        0xb9fe_ffff_ffff_aaab,
        0x1eab_fffe_b153_ffff,
        0x6730_d2a0_f6b0_f624,
        0x6477_4b84_f385_12bf,
        0x4b1b_a7b6_434b_acd7,
        0x1a01_11ea_397f_e69a,
    ];
    const GPU_VARIANTS: &'static [&'static str] = &["portable", "asm"];
    fn from_u64_limbs(l: &[u64]) -> [u32; 12] {
        split_limbs(l)
    }
}

impl MulSpec for FrSpec {
    const OP: &'static str = "mul_fr";
    const STEM: &'static str = "fr";
    const ABOUT: &'static str = "Fr (255-bit) Montgomery multiplication throughput, dependent chains";
    type Limbs = [u32; 8];
    type Host = Fr;
    type Blst = blstrs::Scalar;
    const MODULUS: &'static [u64] =
        &[0xffff_ffff_0000_0001, 0x53bd_a402_fffe_5bfe, 0x3339_d808_09a1_d805, 0x73ed_a753_299d_7d48];
    const GPU_VARIANTS: &'static [&'static str] = &["portable", "asm", "constinv_lazy", "modreg", "fp64", "hybrid"];
    fn from_u64_limbs(l: &[u64]) -> [u32; 8] {
        split_limbs(l)
    }
}

fn split_limbs<const N: usize>(l: &[u64]) -> [u32; N] {
    let mut out = [0u32; N];
    for (k, limb) in l.iter().enumerate().take(N / 2) {
        out[2 * k] = *limb as u32;
        out[2 * k + 1] = (*limb >> 32) as u32;
    }
    out
}

fn join_limbs<const W: usize>(l: &[u32]) -> [u64; W] {
    let mut out = [0u64; W];
    for (k, o) in out.iter_mut().enumerate() {
        *o = l[2 * k] as u64 | (l[2 * k + 1] as u64) << 32;
    }
    out
}

/// zkgpu's host arithmetic as a chain element, for each field.
macro_rules! host_chain_elem {
    ($($spec:ty: $field:ty;)*) => {$(
        impl ChainElem<$spec> for $field {
            fn from_limbs(l: &<$spec as MulSpec>::Limbs) -> Self {
                <$field>::from_limbs(*l)
            }
            fn limbs(&self) -> <$spec as MulSpec>::Limbs {
                <$field>::limbs(self)
            }
            #[inline(always)]
            fn mul(&self, rhs: &Self) -> Self {
                Field::mul(self, rhs)
            }
        }
    )*};
}

host_chain_elem! {
    FqSpec: Fq;
    FrSpec: Fr;
}

impl ChainElem<FqSpec> for blstrs::Fp {
    fn from_limbs(l: &[u32; 12]) -> Self {
        blstrs::Fp::from_raw_unchecked(join_limbs::<6>(l))
    }
    fn limbs(&self) -> [u32; 12] {
        split_limbs(&blst::blst_fp::from(*self).l)
    }
    #[inline(always)]
    fn mul(&self, rhs: &Self) -> Self {
        *self * rhs
    }
}

impl ChainElem<FrSpec> for blstrs::Scalar {
    fn from_limbs(l: &[u32; 8]) -> Self {
        blstrs::Scalar::from(blst::blst_fr { l: join_limbs::<4>(l) })
    }
    fn limbs(&self) -> [u32; 8] {
        split_limbs(&blst::blst_fr::from(*self).l)
    }
    #[inline(always)]
    fn mul(&self, rhs: &Self) -> Self {
        *self * rhs
    }
}

/// n uniformly random field elements (Montgomery form, < modulus), generated in parallel from `seed`;
/// `stream` separates independent vectors drawn from one seed. Distinct with overwhelming probability.
pub fn random_elements<S: MulSpec>(n: usize, seed: u64, stream: u64) -> Vec<S::Limbs> {
    const CHUNK: usize = 1 << 14;
    let modulus = S::MODULUS;
    let top = modulus.len() - 1;
    // Values below the next power of two above the modulus, rejected when >= modulus (accepts >= 81%).
    let top_mask = u64::MAX >> modulus[top].leading_zeros();
    let mut out = vec![S::Limbs::default(); n];
    out.par_chunks_mut(CHUNK).enumerate().for_each(|(chunk, elems)| {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream((stream << 32) | chunk as u64);
        let mut limbs = [0u64; 6];
        let limbs = &mut limbs[..modulus.len()];
        for e in elems {
            loop {
                for l in limbs.iter_mut() {
                    *l = rng.next_u64();
                }
                limbs[top] &= top_mask;
                if less_than(limbs, modulus) {
                    break;
                }
            }
            *e = S::from_u64_limbs(limbs);
        }
    });
    out
}

fn less_than(a: &[u64], b: &[u64]) -> bool {
    for (x, y) in a.iter().rev().zip(b.iter().rev()) {
        if x != y {
            return x < y;
        }
    }
    false
}

/// The chain `x ← step(x, y)`, `count` times, in the implementation `E` (the reference for sampled checks).
pub fn chain<S: MulSpec, E: ChainElem<S>>(x: &S::Limbs, y: &S::Limbs, count: u64, step: fn(&E, &E) -> E) -> S::Limbs {
    let (mut acc, y) = (E::from_limbs(x), E::from_limbs(y));
    for _ in 0..count {
        acc = step(&acc, &y);
    }
    acc.limbs()
}

/// The multiplication chain's step `x · y`.
pub fn mul_step<S: MulSpec, E: ChainElem<S>>(x: &E, y: &E) -> E {
    x.mul(y)
}

/// (`Default` needs `S: Default`, which every [`MulSpec`] is.)
#[derive(Default)]
pub struct MulOp<S>(PhantomData<S>);

impl<S: MulSpec> BenchOp for MulOp<S> {
    fn name(&self) -> &'static str {
        S::OP
    }
    fn about(&self) -> &'static str {
        S::ABOUT
    }
    fn variants(&self, target: Target) -> &'static [&'static str] {
        target.pick(S::GPU_VARIANTS, &["blstrs", "host"])
    }
    fn default_sizes(&self, target: Target) -> &'static [u32] {
        target.pick(&[16, 18, 20, 22, 24], zkgpu_bench::bench_args::cpu_default_sizes(self.name()))
    }
    fn kernels(&self, variant: &str) -> Vec<String> {
        vec![format!("bench_mul_{}_{variant}", S::STEM)]
    }
    fn prepare<'g>(&self, gpu: Option<&'g Gpu>, variant: &str, log_n: u32, opts: &CaseOptions) -> Prepared<'g> {
        let n = 1usize << log_n;
        let x = random_elements::<S>(n, opts.seed, 2 * log_n as u64);
        let y = random_elements::<S>(n, opts.seed, 2 * log_n as u64 + 1);
        let samples = sample_indices(n, opts.seed).into_iter().map(|i| (i, x[i], y[i])).collect();
        match (gpu, variant) {
            (Some(gpu), _) if S::GPU_VARIANTS.contains(&variant) => {
                let kernel = format!("bench_mul_{}_{variant}", S::STEM);
                let iters = opts.iters.unwrap_or(GPU_ITERS);
                let check = check_mul::<S, S::Host>;
                Ok(Box::new(GpuChainCase::<S>::new(gpu, &kernel, &x, &y, samples, iters, Unit::Mul, check)?))
            }
            // Each CPU variant is checked against the other implementation.
            (None, "host") => Ok(Box::new(CpuChainCase::<S, S::Host>::new(
                &x,
                &y,
                samples,
                opts.iters.unwrap_or(CPU_ITERS),
                (mul_step, Unit::Mul),
                (check_mul::<S, S::Blst>, "host"),
            ))),
            (None, "blstrs") => Ok(Box::new(CpuChainCase::<S, S::Blst>::new(
                &x,
                &y,
                samples,
                opts.iters.unwrap_or(CPU_ITERS),
                (mul_step, Unit::Mul),
                (check_mul::<S, S::Host>, "blstrs"),
            ))),
            _ => Err(format!("{}: no variant {variant:?} here", S::OP).into()),
        }
    }
}

/// Evenly spread sample positions (first and last included), shifted by the seed.
pub fn sample_indices(n: usize, seed: u64) -> Vec<usize> {
    let count = SAMPLES.min(n);
    let mut idx: Vec<usize> = (0..count).map(|k| (k * n / count + seed as usize % (n / count).max(1)) % n).collect();
    idx.push(n - 1);
    idx.sort_unstable();
    idx.dedup();
    idx
}

/// Sampled elements: (index, x, y).
pub type Samples<S> = Vec<(usize, <S as MulSpec>::Limbs, <S as MulSpec>::Limbs)>;

/// Checks sampled results `got(i)` after `count` chain steps against a reference implementation; `what`
/// names the implementation checked.
pub type Check<S> = fn(&Samples<S>, u64, &(dyn Fn(usize) -> <S as MulSpec>::Limbs + Sync), &str) -> Result<()>;

/// What one chain step is, i.e. the row's throughput unit (`gmul_s` or `ginv_s`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Mul,
    Inv,
}

/// A chain kernel `(x, y, iters, n)` on device-resident elements: the `mul_*` and `inv_*` GPU cases.
pub struct GpuChainCase<'g, S: MulSpec> {
    gpu: &'g Gpu,
    function: CudaFunction,
    x: DeviceBuffer<S::Limbs>,
    y: DeviceBuffer<S::Limbs>,
    samples: Samples<S>,
    n: u32,
    iters: u32,
    unit: Unit,
    check: Check<S>,
}

impl<'g, S: MulSpec> GpuChainCase<'g, S> {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        gpu: &'g Gpu,
        kernel: &str,
        x: &[S::Limbs],
        y: &[S::Limbs],
        samples: Samples<S>,
        iters: u32,
        unit: Unit,
        check: Check<S>,
    ) -> Result<Self> {
        Ok(GpuChainCase {
            gpu,
            function: gpu.function(kernel)?,
            x: gpu.upload(x)?,
            y: gpu.upload(y)?,
            samples,
            n: u32::try_from(x.len())?,
            iters,
            unit,
            check,
        })
    }
}

impl<S: MulSpec> Case for GpuChainCase<'_, S> {
    fn inputs(&self) -> &'static str {
        "device"
    }

    fn run(&mut self) -> Result<f64> {
        let cfg = zkgpu::launch_config_1d(self.n as usize, GPU_BLOCK);
        let (function, x, y, iters, n) = (&self.function, &mut self.x, &self.y, self.iters, self.n);
        let ms = self.gpu.time_ms(|stream| {
            let mut launch = stream.launch_builder(function);
            launch.arg(x.raw_mut()).arg(y.raw()).arg(&iters).arg(&n);
            // SAFETY: bench_mul_* / bench_inv_* thread i < n reads y[i] and x[i] and writes x[i]; both buffers
            // hold n canonical elements of the kernel's field type ([u32; N] limbs, same layout), no aliasing.
            unsafe { launch.launch(cfg) }?;
            Ok(())
        })?;
        Ok(ms as f64)
    }

    fn verify(&mut self, runs: u32) -> Result<()> {
        let out = self.gpu.download(&self.x)?;
        (self.check)(&self.samples, self.iters as u64 * runs as u64, &|i| out[i], "GPU")
    }

    fn muls_per_run(&self) -> Option<f64> {
        (self.unit == Unit::Mul).then_some(self.n as f64 * self.iters as f64)
    }

    fn invs_per_run(&self) -> Option<f64> {
        (self.unit == Unit::Inv).then_some(self.n as f64 * self.iters as f64)
    }

    fn extra(&self) -> serde_json::Map<String, serde_json::Value> {
        serde_json::Map::from_iter([("iters".to_string(), self.iters.into())])
    }
}

/// The same chains on the host, in the implementation `E` (zkgpu's host build or blstrs).
pub struct CpuChainCase<S: MulSpec, E: ChainElem<S>> {
    x: Vec<E>,
    y: Vec<E>,
    step: fn(&E, &E) -> E,
    unit: Unit,
    samples: Samples<S>,
    iters: u32,
    check: Check<S>,
    what: &'static str,
}

impl<S: MulSpec, E: ChainElem<S>> CpuChainCase<S, E> {
    pub fn new(
        x: &[S::Limbs],
        y: &[S::Limbs],
        samples: Samples<S>,
        iters: u32,
        (step, unit): (fn(&E, &E) -> E, Unit),
        (check, what): (Check<S>, &'static str),
    ) -> Self {
        CpuChainCase {
            x: x.par_iter().map(E::from_limbs).collect(),
            y: y.par_iter().map(E::from_limbs).collect(),
            step,
            unit,
            samples,
            iters,
            check,
            what,
        }
    }
}

impl<S: MulSpec, E: ChainElem<S>> Case for CpuChainCase<S, E> {
    fn inputs(&self) -> &'static str {
        "host"
    }

    fn run(&mut self) -> Result<f64> {
        let (iters, step) = (self.iters, self.step);
        // An inversion costs ~100 multiplications: smaller work units keep every core busy.
        let min_len = if self.unit == Unit::Mul { 256 } else { 16 };
        let start = Instant::now();
        self.x.par_iter_mut().zip(self.y.par_iter()).with_min_len(min_len).for_each(|(x, y)| {
            let mut acc = *x;
            for _ in 0..iters {
                acc = step(&acc, y);
            }
            *x = acc;
        });
        Ok(start.elapsed().as_secs_f64() * 1e3)
    }

    fn verify(&mut self, runs: u32) -> Result<()> {
        let x = &self.x;
        (self.check)(&self.samples, self.iters as u64 * runs as u64, &|i| x[i].limbs(), self.what)
    }

    fn muls_per_run(&self) -> Option<f64> {
        (self.unit == Unit::Mul).then_some(self.x.len() as f64 * self.iters as f64)
    }

    fn invs_per_run(&self) -> Option<f64> {
        (self.unit == Unit::Inv).then_some(self.x.len() as f64 * self.iters as f64)
    }

    fn extra(&self) -> serde_json::Map<String, serde_json::Value> {
        serde_json::Map::from_iter([("iters".to_string(), self.iters.into())])
    }
}

/// Recompute each sample's chain with the reference `R` and its `step`, and compare with `got(i)`.
pub fn check_samples<S: MulSpec, R: ChainElem<S>>(
    op: &str,
    samples: &Samples<S>,
    count: u64,
    step: fn(&R, &R) -> R,
    got: &(dyn Fn(usize) -> S::Limbs + Sync),
    what: &str,
) -> Result<()> {
    let bad = samples.par_iter().find_any(|(i, x0, y)| chain::<S, R>(x0, y, count, step) != got(*i));
    match bad {
        None => Ok(()),
        Some((i, x0, y)) => Err(format!(
            "{op}: {what} result wrong at element {i}: x0={x0:?} y={y:?} after {count} chain steps, got {:?}",
            got(*i)
        )
        .into()),
    }
}

/// [`Check`] of the multiplication chain against the implementation `R`.
fn check_mul<S: MulSpec, R: ChainElem<S>>(
    samples: &Samples<S>,
    count: u64,
    got: &(dyn Fn(usize) -> S::Limbs + Sync),
    what: &str,
) -> Result<()> {
    check_samples::<S, R>(S::OP, samples, count, mul_step::<S, R>, got, what)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_elements_are_reduced_distinct_and_reproducible() {
        let a = random_elements::<FqSpec>(5000, 7, 0);
        let b = random_elements::<FqSpec>(5000, 7, 0);
        let c = random_elements::<FqSpec>(5000, 7, 1);
        assert_eq!(a, b);
        assert_ne!(a, c);
        let mut sorted = a.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), a.len());
        for e in &a {
            let wide: [u64; 6] = join_limbs(e);
            assert!(less_than(&wide, FqSpec::MODULUS));
        }
        for e in random_elements::<FrSpec>(5000, 9, 0) {
            let wide: [u64; 4] = join_limbs(&e);
            assert!(less_than(&wide, FrSpec::MODULUS));
        }
    }

    #[test]
    fn host_and_blstrs_chains_agree() {
        let x = random_elements::<FqSpec>(8, 1, 0);
        let y = random_elements::<FqSpec>(8, 1, 1);
        for (a, b) in x.iter().zip(&y) {
            assert_eq!(chain::<FqSpec, Fq>(a, b, 5, mul_step), chain::<FqSpec, blstrs::Fp>(a, b, 5, mul_step));
        }
        let x = random_elements::<FrSpec>(8, 2, 0);
        let y = random_elements::<FrSpec>(8, 2, 1);
        for (a, b) in x.iter().zip(&y) {
            assert_eq!(chain::<FrSpec, Fr>(a, b, 5, mul_step), chain::<FrSpec, blstrs::Scalar>(a, b, 5, mul_step));
        }
    }

    #[test]
    fn cpu_cases_verify() {
        let opts = CaseOptions { seed: 3, iters: Some(4) };
        for op in [&MulOp::<FqSpec>::default() as &dyn BenchOp, &MulOp::<FrSpec>::default()] {
            for variant in op.variants(Target::Cpu) {
                let mut case = op.prepare(None, variant, 8, &opts).unwrap();
                case.run().unwrap();
                case.run().unwrap();
                case.verify(2).unwrap();
                assert!(case.verify(3).is_err(), "verification must notice a wrong count");
            }
        }
    }
}
