//! `inv_fq`, `inv_fr`: field inversion throughput. Each of n threads (GPU) or elements (CPU) runs a dependent
//! chain `x = (x + y)⁻¹`, `iters` times (adding `y` keeps the chain from collapsing, as `inv(inv(x)) = x`).
//! Throughput is reported as G inv/s (`ginv_s` in the JSON row) = n · iters / time.
//!
//! GPU variants, kernels `bench_inv_{fq,fr}_<variant>(x, y, iters, n)`: `divsteps` (`Field::inverse`,
//! Bernstein–Yang; the baseline) and `fermat` (`inverse_fermat`: `a^(p−2)` with the asm multiplication, the
//! implementation divsteps replaced). Both use the same chain length, so the table's "vs base" column is the
//! speed ratio.
//! CPU variants (used when no GPU is present): `divsteps` and `fermat` (zkgpu's host build of the same code;
//! `divsteps` is the baseline, as on the GPU) and `blstrs` (blst's constant-time inversion).
//! Not in the default sweep: name it (`cargo xtask bench inv`).
//!
//! Verification: after the timed runs, sampled elements are recomputed on the host with blstrs (`0⁻¹ = 0`,
//! as the kernels), and the `blstrs` CPU variant against zkgpu's host divsteps.
use super::mul::{
    CpuChainCase, FqSpec, FrSpec, GpuChainCase, MulSpec, Samples, Unit, check_samples, random_elements, sample_indices,
};
use super::{BenchOp, Case, CaseOptions, Prepared, Target};
use crate::Result;
use std::marker::PhantomData;
use zkgpu::Gpu;
use zkgpu_kernels::field::Field;

/// Inversions per GPU thread per run. Fermat costs ~570 Fq (~380 Fr) multiplications per inversion, so at
/// 2^20 threads one Fq `fermat` run is ~0.1 s on an H200 (~27 G mul/s) and `divsteps` a fraction of that;
/// at 2^16 the `divsteps` runs still last far longer than a launch.
const GPU_ITERS: u32 = 4;
/// Inversions per CPU element per run: the default CPU sizes finish in seconds on two cores.
const CPU_ITERS: u32 = 2;
const GPU_VARIANTS: &[&str] = &["divsteps", "fermat"];
const CPU_VARIANTS: &[&str] = &["divsteps", "fermat", "blstrs"];

/// The inversion chain step `(a + y)⁻¹` (with `0⁻¹ = 0`) in each implementation, per field.
pub trait InvSpec: MulSpec {
    const INV_OP: &'static str;
    const INV_ABOUT: &'static str;
    /// zkgpu's `Field::inverse` (divsteps), host build.
    fn step_divsteps(a: &Self::Host, y: &Self::Host) -> Self::Host;
    /// zkgpu's `inverse_fermat`, host build.
    fn step_fermat(a: &Self::Host, y: &Self::Host) -> Self::Host;
    /// blstrs's `invert` (the independent reference).
    fn step_blstrs(a: &Self::Blst, y: &Self::Blst) -> Self::Blst;
}

/// blstrs's step; `invert` is `None` for 0, mapped to 0 as zkgpu's inversions do.
fn blstrs_step<B: ff::Field>(a: &B, y: &B) -> B {
    Option::<B>::from((*a + *y).invert()).unwrap_or(B::ZERO)
}

/// `InvSpec` for one field: its op name and `--list` line; the steps are the same code for both fields.
macro_rules! inv_spec {
    ($($spec:ty: $op:literal, $about:literal;)*) => {$(
        impl InvSpec for $spec {
            const INV_OP: &'static str = $op;
            const INV_ABOUT: &'static str = $about;
            fn step_divsteps(a: &Self::Host, y: &Self::Host) -> Self::Host {
                Field::inverse(&Field::add(a, y))
            }
            fn step_fermat(a: &Self::Host, y: &Self::Host) -> Self::Host {
                Field::add(a, y).inverse_fermat()
            }
            fn step_blstrs(a: &Self::Blst, y: &Self::Blst) -> Self::Blst {
                blstrs_step(a, y)
            }
        }
    )*};
}

inv_spec! {
    FqSpec: "inv_fq", "Fq (381-bit) inversion throughput (divsteps vs Fermat), dependent chains";
    FrSpec: "inv_fr", "Fr (255-bit) inversion throughput (divsteps vs Fermat), dependent chains";
}

/// [`super::mul::Check`] against blstrs.
fn check_blstrs<S: InvSpec>(
    samples: &Samples<S>,
    count: u64,
    got: &(dyn Fn(usize) -> S::Limbs + Sync),
    what: &str,
) -> Result<()> {
    check_samples::<S, S::Blst>(S::INV_OP, samples, count, S::step_blstrs, got, what)
}

/// [`super::mul::Check`] against zkgpu's host divsteps (for the `blstrs` CPU variant).
fn check_divsteps<S: InvSpec>(
    samples: &Samples<S>,
    count: u64,
    got: &(dyn Fn(usize) -> S::Limbs + Sync),
    what: &str,
) -> Result<()> {
    check_samples::<S, S::Host>(S::INV_OP, samples, count, S::step_divsteps, got, what)
}

/// (`Default` needs `S: Default`, which every [`MulSpec`] is.)
#[derive(Default)]
pub struct InvOp<S>(PhantomData<S>);

impl<S: InvSpec> BenchOp for InvOp<S> {
    fn name(&self) -> &'static str {
        S::INV_OP
    }
    fn about(&self) -> &'static str {
        S::INV_ABOUT
    }
    fn variants(&self, target: Target) -> &'static [&'static str] {
        target.pick(GPU_VARIANTS, CPU_VARIANTS)
    }
    fn in_default_sweep(&self) -> bool {
        false
    }
    fn default_sizes(&self, target: Target) -> &'static [u32] {
        target.pick(&[16, 18, 20], zkgpu_bench::bench_args::cpu_default_sizes(self.name()))
    }
    fn kernels(&self, variant: &str) -> Vec<String> {
        vec![format!("bench_inv_{}_{variant}", S::STEM)]
    }
    fn prepare<'g>(&self, gpu: Option<&'g Gpu>, variant: &str, log_n: u32, opts: &CaseOptions) -> Prepared<'g> {
        let n = 1usize << log_n;
        let x = random_elements::<S>(n, opts.seed, 2 * log_n as u64);
        let y = random_elements::<S>(n, opts.seed, 2 * log_n as u64 + 1);
        let samples = sample_indices(n, opts.seed).into_iter().map(|i| (i, x[i], y[i])).collect();
        let iters = opts.iters.unwrap_or(if gpu.is_some() { GPU_ITERS } else { CPU_ITERS });
        // zkgpu's host build is checked against blstrs, blstrs against zkgpu's divsteps.
        let host = |step: fn(&S::Host, &S::Host) -> S::Host, samples| -> Box<dyn Case + 'g> {
            let check = (check_blstrs::<S> as super::mul::Check<S>, "host");
            Box::new(CpuChainCase::<S, S::Host>::new(&x, &y, samples, iters, (step, Unit::Inv), check))
        };
        match (gpu, variant) {
            (Some(gpu), _) if GPU_VARIANTS.contains(&variant) => {
                let kernel = format!("bench_inv_{}_{variant}", S::STEM);
                let check = check_blstrs::<S>;
                Ok(Box::new(GpuChainCase::<S>::new(gpu, &kernel, &x, &y, samples, iters, Unit::Inv, check)?))
            }
            (None, "divsteps") => Ok(host(S::step_divsteps, samples)),
            (None, "fermat") => Ok(host(S::step_fermat, samples)),
            (None, "blstrs") => Ok(Box::new(CpuChainCase::<S, S::Blst>::new(
                &x,
                &y,
                samples,
                iters,
                (S::step_blstrs, Unit::Inv),
                (check_divsteps::<S>, "blstrs"),
            ))),
            _ => Err(format!("{}: no variant {variant:?} here", S::INV_OP).into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::mul::chain;
    use super::*;
    use zkgpu_kernels::field::{Fq, Fr};

    fn ops() -> [Box<dyn BenchOp>; 2] {
        [Box::new(InvOp::<FqSpec>::default()), Box::new(InvOp::<FrSpec>::default())]
    }

    #[test]
    fn names_variants_and_kernels() {
        let [fq, fr] = ops();
        assert_eq!((fq.name(), fr.name()), ("inv_fq", "inv_fr"));
        for op in [&fq, &fr] {
            assert_eq!(op.variants(Target::Gpu), &["divsteps", "fermat"], "divsteps is the GPU baseline");
            assert_eq!(op.variants(Target::Cpu)[0], "divsteps", "divsteps is the CPU baseline");
            assert!(op.variants(Target::Cpu).contains(&"blstrs"));
            assert!(!op.in_default_sweep(), "opt-in: the default sweep's time does not grow");
        }
        assert_eq!(fq.kernels("divsteps"), ["bench_inv_fq_divsteps"]);
        assert_eq!(fq.kernels("fermat"), ["bench_inv_fq_fermat"]);
        assert_eq!(fr.kernels("divsteps"), ["bench_inv_fr_divsteps"]);
        assert_eq!(fr.kernels("fermat"), ["bench_inv_fr_fermat"]);
    }

    #[test]
    fn registered_opt_in() {
        let names = |w: &[&str]| -> Vec<&'static str> {
            let wanted: Vec<String> = w.iter().map(|s| s.to_string()).collect();
            super::super::select(super::super::registry(), &wanted).unwrap().iter().map(|o| o.name()).collect()
        };
        assert_eq!(names(&["inv"]), ["inv_fq", "inv_fr"]);
        assert!(!names(&[]).iter().any(|n| n.starts_with("inv_")), "not in the default sweep");
    }

    #[test]
    fn host_chains_agree_with_blstrs() {
        let x = random_elements::<FqSpec>(8, 1, 0);
        let y = random_elements::<FqSpec>(8, 1, 1);
        for (a, b) in x.iter().zip(&y) {
            let want = chain::<FqSpec, blstrs::Fp>(a, b, 3, FqSpec::step_blstrs);
            assert_eq!(chain::<FqSpec, Fq>(a, b, 3, FqSpec::step_divsteps), want);
            assert_eq!(chain::<FqSpec, Fq>(a, b, 3, FqSpec::step_fermat), want);
        }
        let x = random_elements::<FrSpec>(8, 2, 0);
        let y = random_elements::<FrSpec>(8, 2, 1);
        for (a, b) in x.iter().zip(&y) {
            let want = chain::<FrSpec, blstrs::Scalar>(a, b, 3, FrSpec::step_blstrs);
            assert_eq!(chain::<FrSpec, Fr>(a, b, 3, FrSpec::step_divsteps), want);
            assert_eq!(chain::<FrSpec, Fr>(a, b, 3, FrSpec::step_fermat), want);
        }
        // (0 + 0)⁻¹ = 0 in every implementation, as the kernels define it.
        let zero = [0u32; 12];
        assert_eq!(chain::<FqSpec, blstrs::Fp>(&zero, &zero, 1, FqSpec::step_blstrs), zero);
        assert_eq!(chain::<FqSpec, Fq>(&zero, &zero, 1, FqSpec::step_divsteps), zero);
        assert_eq!(chain::<FqSpec, Fq>(&zero, &zero, 1, FqSpec::step_fermat), zero);
    }

    #[test]
    fn cpu_cases_verify() {
        let opts = CaseOptions { seed: 3, iters: Some(2) };
        for op in ops() {
            for variant in op.variants(Target::Cpu) {
                let mut case = op.prepare(None, variant, 6, &opts).unwrap();
                case.run().unwrap();
                case.run().unwrap();
                case.verify(2).unwrap();
                assert!(case.verify(3).is_err(), "verification must notice a wrong count");
                assert_eq!(case.invs_per_run(), Some(128.0));
                assert_eq!(case.muls_per_run(), None, "inversions are not reported as multiplications");
            }
        }
    }
}
