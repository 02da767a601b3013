//! G1/G2 point kernels (`arith_{g1,g2}_*`) on the GPU against blstrs: the properties of tests/curve_cpu.rs,
//! through the GPU harness. Run with `cargo xtask test --gpu` (or `cargo test --test curve_gpu -- --ignored`);
//! without a GPU these tests fail rather than pass.
mod common;

use common::curve_props::{
    self as props, AddOp, CurveUnderTest, G1, G2, PairBatch, PointEvaluator, RoundTrip, UnaryOp,
};
use zkgpu::DeviceSafe;

/// The kernels, launched one thread per element through the test harness.
struct Device(zkgpu::Gpu);

impl<C> PointEvaluator<C> for Device
where
    C: CurveUnderTest,
    C::Affine: DeviceSafe,
    C::Projective: DeviceSafe,
{
    fn binary(&self, op: AddOp, p: &[C::Affine], q: &[C::Affine]) -> Vec<C::Projective> {
        common::gpu::run_binary(&self.0, &props::kernel_name::<C>(op.name()), p, q)
    }
    fn unary(&self, op: UnaryOp, p: &[C::Affine]) -> Vec<C::Projective> {
        common::gpu::run_unary(&self.0, &props::kernel_name::<C>(op.name()), p)
    }
    fn round_trip(&self, op: RoundTrip, p: &[C::Affine]) -> Vec<C::Affine> {
        common::gpu::run_unary(&self.0, &props::kernel_name::<C>(op.name()), p)
    }
}

/// Odd sizes: one element, a partial warp, one past a warp, and a large batch that is not a multiple of 32.
const BATCH_SIZES: [usize; 4] = [1, 31, 33, 1061];

macro_rules! curve_gpu_tests {
    ($module:ident, $curve:ty) => {
        mod $module {
            use super::*;

            #[test]
            #[ignore = "needs a CUDA GPU"]
            fn edge_cases_match_blstrs() {
                let device = Device(common::gpu::gpu());
                let mut rng = common::seeded_rng(concat!(stringify!($module), "::edge_cases_match_blstrs"));
                props::check_all_ops(&device, &PairBatch::<$curve>::edge_cases(&mut rng));
            }

            #[test]
            #[ignore = "needs a CUDA GPU"]
            fn mixed_batches_match_blstrs() {
                let device = Device(common::gpu::gpu());
                let mut rng = common::seeded_rng(concat!(stringify!($module), "::mixed_batches_match_blstrs"));
                for len in BATCH_SIZES {
                    props::check_all_ops(&device, &PairBatch::<$curve>::mixed(&mut rng, len));
                }
            }
        }
    };
}

curve_gpu_tests!(g1, G1);
curve_gpu_tests!(g2, G2);
