//! Field kernels (`arith_{fr,fq,fq2}_*`, default and `_portable`; `bench_mul_*`) on the GPU against blstrs:
//! the properties of tests/field_cpu.rs through the GPU harness. Run with `cargo xtask test --gpu` (or
//! `cargo test --test field_gpu -- --ignored`); without a GPU these tests fail rather than pass.
mod common;

use common::field_props::{Evaluator, FieldUnderTest, Op, check_laws, check_ops_match_reference, test_inputs};
use cudarc::driver::PushKernelArg;
use ff::Field as _;
use zkgpu::DeviceSafe;
use zkgpu_kernels::field::{Fq, Fq2, Fr};

/// Total elements per batch: prime, so neither a multiple of 32 nor of the block size.
const BATCH: usize = 5003;

/// The `arith_*` kernels, one thread per element, default (`portable = false`) or `_portable` variants.
struct Device {
    gpu: zkgpu::Gpu,
    portable: bool,
}

impl<F: FieldUnderTest> Evaluator<F> for Device
where
    F::Ref: DeviceSafe,
{
    fn label(&self) -> String {
        format!("gpu {} {}", if self.portable { "portable" } else { "default" }, F::NAME)
    }
    fn eval(&self, op: Op, a: &[F::Ref], b: &[F::Ref]) -> Vec<F::Ref> {
        let kernel = format!("arith_{}_{}{}", F::NAME, op.name(), if self.portable { "_portable" } else { "" });
        if Op::BINARY.contains(&op) {
            common::gpu::run_binary(&self.gpu, &kernel, a, b)
        } else {
            common::gpu::run_unary(&self.gpu, &kernel, a)
        }
    }
}

fn gpu_ops_match_blstrs<F: FieldUnderTest>(test: &str, portable: bool)
where
    F::Ref: DeviceSafe,
{
    let device = Device { gpu: common::gpu::gpu(), portable };
    let mut rng = common::seeded_rng(test);
    let edges = F::edge_cases().len();
    let (a, b) = test_inputs::<F>(&mut rng, BATCH.saturating_sub(edges * edges).max(1));
    check_ops_match_reference::<F>(&device, &a, &b);
    // Tiny and odd launches: a single element, a partial warp, one past a warp.
    for n in [1usize, 31, 33] {
        check_ops_match_reference::<F>(&device, &a[a.len() - n..], &b[b.len() - n..]);
    }
}

fn gpu_laws<F: FieldUnderTest>(test: &str, portable: bool)
where
    F::Ref: DeviceSafe,
{
    let device = Device { gpu: common::gpu::gpu(), portable };
    let mut rng = common::seeded_rng(test);
    let (a, b) = test_inputs::<F>(&mut rng, 1000);
    let c: Vec<F::Ref> = (0..a.len()).map(|_| F::Ref::random(&mut rng)).collect();
    check_laws::<F>(&device, &a, &b, &c);
}

macro_rules! field_gpu_tests {
    ($field:ident, $t:ty) => {
        mod $field {
            use super::*;
            #[test]
            #[ignore = "needs a CUDA GPU"]
            fn default_ops_match_blstrs() {
                gpu_ops_match_blstrs::<$t>(concat!("gpu::", stringify!($field), "::default::ops"), false);
            }
            #[test]
            #[ignore = "needs a CUDA GPU"]
            fn portable_ops_match_blstrs() {
                gpu_ops_match_blstrs::<$t>(concat!("gpu::", stringify!($field), "::portable::ops"), true);
            }
            #[test]
            #[ignore = "needs a CUDA GPU"]
            fn default_algebraic_laws() {
                gpu_laws::<$t>(concat!("gpu::", stringify!($field), "::default::laws"), false);
            }
            #[test]
            #[ignore = "needs a CUDA GPU"]
            fn portable_algebraic_laws() {
                gpu_laws::<$t>(concat!("gpu::", stringify!($field), "::portable::laws"), true);
            }
        }
    };
}

field_gpu_tests!(fr, Fr);
field_gpu_tests!(fq, Fq);
field_gpu_tests!(fq2, Fq2);

/// `bench_mul_{field}_{variant}(x, y, iters, n)` leaves `x[i] * y[i]^iters` in `x[i]`.
fn bench_kernel_computes_power<F: FieldUnderTest>(test: &str, variant: &str)
where
    F::Ref: DeviceSafe,
{
    let gpu = common::gpu::gpu();
    let mut rng = common::seeded_rng(test);
    let n = 1000usize;
    let iters = 7u32;
    let mut x: Vec<F::Ref> = (0..n).map(|_| F::Ref::random(&mut rng)).collect();
    let y: Vec<F::Ref> = (0..n).map(|_| F::Ref::random(&mut rng)).collect();
    x[0] = F::Ref::ZERO;
    x[1] = F::Ref::ONE;
    let want: Vec<F::Ref> = x.iter().zip(&y).map(|(x, y)| *x * y.pow_vartime([iters as u64])).collect();

    let kernel = format!("bench_mul_{}_{variant}", F::NAME);
    let f = gpu.function(&kernel).unwrap();
    let mut dx = gpu.upload(&x).unwrap();
    let dy = gpu.upload(&y).unwrap();
    let n32 = n as u32;
    let mut launch = gpu.stream().launch_builder(&f);
    launch.arg(dx.raw_mut()).arg(dy.raw()).arg(&iters).arg(&n32);
    // SAFETY: x and y hold n elements of the kernel's type (their blstrs twins) and do not overlap.
    unsafe { launch.launch(zkgpu::launch_config_1d(n, 128)) }.unwrap();
    let got = gpu.download(&dx).unwrap();
    let bad = (0..n).filter(|&i| got[i] != want[i]).count();
    assert_eq!(bad, 0, "{kernel}: {bad} of {n} elements differ (first: {:?})", (0..n).find(|&i| got[i] != want[i]));
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn bench_mul_kernels_compute_powers() {
    bench_kernel_computes_power::<Fq>("gpu::bench_mul_fq_asm", "asm");
    bench_kernel_computes_power::<Fq>("gpu::bench_mul_fq_portable", "portable");
    bench_kernel_computes_power::<Fr>("gpu::bench_mul_fr_asm", "asm");
    bench_kernel_computes_power::<Fr>("gpu::bench_mul_fr_portable", "portable");
    bench_kernel_computes_power::<Fr>("gpu::bench_mul_fr_fp64", "fp64");
    bench_kernel_computes_power::<Fr>("gpu::bench_mul_fr_hybrid", "hybrid");
}
