//! CPU references for [`crate::msm`], on blstrs: the obvious sum `Σ sᵢ·Pᵢ` (one scalar multiplication per
//! point, for small tests), blstrs' own Pippenger (`multi_exp`), and a replay of the GPU's launches stage by
//! stage with the kernels' per-thread code (`zkgpu_kernels::msm::model`), which tests use to check the
//! algorithm itself without a GPU.
use blstrs::Scalar;
use zkgpu_kernels::field::Fr;
use zkgpu_kernels::msm::model;

use crate::curve::Curve;
use crate::error::{Error, Result};
use crate::msm::MsmPlan;

fn check_lengths(bases: usize, scalars: usize) -> Result<()> {
    if bases != scalars {
        return Err(Error::LengthMismatch { what: "msm bases", expected: scalars, actual: bases });
    }
    Ok(())
}

/// `Σ scalars[i]·bases[i]` one scalar multiplication at a time (normalized). Slow; for small tests.
pub fn msm_naive<C: Curve>(bases: &[C::Affine], scalars: &[Scalar]) -> Result<C::Projective> {
    check_lengths(bases.len(), scalars.len())?;
    let mut acc = C::identity();
    for (p, s) in bases.iter().zip(scalars) {
        acc = C::add_projective(&acc, &C::mul_scalar(p, s));
    }
    Ok(C::normalize(&acc))
}

/// `Σ scalars[i]·bases[i]` by blstrs' `multi_exp` (normalized).
pub fn msm_cpu<C: Curve>(bases: &[C::Affine], scalars: &[Scalar]) -> Result<C::Projective> {
    check_lengths(bases.len(), scalars.len())?;
    if scalars.is_empty() {
        // blst's Pippenger indexes its first point unconditionally.
        return Ok(C::identity());
    }
    Ok(C::normalize(&C::multi_exp(bases, scalars)))
}

/// The GPU algorithm replayed on the CPU with `plan`'s window size, copies, chunk and per-thread work: the
/// same per-thread programs, with the precomputed table built the same way (normalized).
pub fn msm_model<C: Curve>(bases: &[C::Affine], scalars: &[Scalar], plan: &MsmPlan) -> Result<C::Projective> {
    check_lengths(bases.len(), scalars.len())?;
    let table = model::precompute(C::as_kernel_affine(bases), plan.window_bits, plan.copies);
    // SAFETY (layout): blstrs::Scalar is repr(transparent) over blst_fr, 4 little-endian u64 limbs in
    // Montgomery form; Fr is 8 little-endian u32 limbs, same bytes and alignment (tests/layout.rs).
    let frs: &[Fr] = unsafe { std::slice::from_raw_parts(scalars.as_ptr().cast(), scalars.len()) };
    let model_plan = model::Plan {
        c: plan.window_bits,
        copies: plan.copies,
        seg: plan.seg,
        reduce_run: plan.reduce_run,
        chunk: plan.chunk.min(u32::MAX as usize) as u32,
    };
    let sum = model::msm(&table, frs, model_plan);
    Ok(C::normalize(&C::from_kernel_jacobian(sum)))
}
