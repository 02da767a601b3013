//! CPU references for [`crate::msm`], on blstrs: the obvious sum `Σ sᵢ·Pᵢ` (one scalar multiplication per
//! point, for small tests), blstrs' own Pippenger (`multi_exp`), and a replay of the GPU's launches stage by
//! stage with the kernels' per-thread code (`zkgpu_kernels::msm::model`), which tests use to check the
//! algorithm itself without a GPU.
use blstrs::Scalar;
use zkgpu_kernels::field::Fr;
use zkgpu_kernels::msm::{WindowWidths, model};

use crate::curve::Curve;
use crate::error::{Error, Result};
use crate::msm::MsmPlan;
use crate::msm::engine::combine_windows;

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

/// `Σ scalars[j]·bases[indices[j]]` by gathering the bases and calling [`msm_cpu`]. `Err(LengthMismatch)` when
/// scalars and indices differ in length, `Err(IndexOutOfRange)` for an index past the bases.
pub fn msm_indexed_cpu<C: Curve>(bases: &[C::Affine], scalars: &[Scalar], indices: &[u32]) -> Result<C::Projective> {
    msm_cpu::<C>(&gather::<C>(bases, scalars, indices)?, scalars)
}

fn gather<C: Curve>(bases: &[C::Affine], scalars: &[Scalar], indices: &[u32]) -> Result<Vec<C::Affine>> {
    check_lengths(indices.len(), scalars.len())?;
    let bad = indices.iter().filter(|&&i| i as usize >= bases.len()).count();
    if bad > 0 {
        return Err(Error::IndexOutOfRange { what: "msm base indices", count: bad, limit: bases.len() });
    }
    Ok(indices.iter().map(|&i| bases[i as usize]).collect())
}

/// The GPU algorithm replayed on the CPU with `plan`'s window size, copies, chunk and per-thread work: the
/// same per-thread programs, with the precomputed table built the same way (normalized).
pub fn msm_model<C: Curve>(bases: &[C::Affine], scalars: &[Scalar], plan: &MsmPlan) -> Result<C::Projective> {
    check_lengths(bases.len(), scalars.len())?;
    model_run::<C>(bases, scalars, None, plan)
}

/// [`msm_model`] for sparse scalars: scalar `j` multiplies `bases[indices[j]]`, as
/// [`crate::msm::Scalars::DeviceIndexed`] runs on the GPU. Errors as [`msm_indexed_cpu`].
pub fn msm_model_indexed<C: Curve>(
    bases: &[C::Affine],
    scalars: &[Scalar],
    indices: &[u32],
    plan: &MsmPlan,
) -> Result<C::Projective> {
    gather::<C>(bases, scalars, indices)?;
    model_run::<C>(bases, scalars, Some(indices), plan)
}

/// What [`crate::msm::Msm::sorted_chunk`] must return: the first chunk's bucket offsets and sorted entries per
/// virtual window, in the radix sort's order (`zkgpu_kernels::msm::model::sorted_windows`). `stride` is the
/// table's row length (device bases: the table's `n`; host bases: the chunk's length); base `i` of the chunk
/// (or `indices[i]`) must be below it.
pub fn sorted_chunk_model(
    scalars: &[Scalar],
    indices: Option<&[u32]>,
    plan: &MsmPlan,
    stride: usize,
) -> Vec<(Vec<u32>, Vec<u32>)> {
    let len = scalars.len().min(plan.chunk);
    // SAFETY (layout): as in model_run.
    let frs: &[Fr] = unsafe { std::slice::from_raw_parts(scalars.as_ptr().cast(), len) };
    let layout = zkgpu_kernels::msm::DigitLayout {
        c: plan.window_bits,
        windows: plan.windows,
        virtual_windows: plan.virtual_windows,
        stride: stride as u32,
    };
    let indices = indices.map(|ix| &ix[..len]);
    model::sorted_windows(frs, indices, 0, layout)
}

fn model_run<C: Curve>(
    bases: &[C::Affine],
    scalars: &[Scalar],
    indices: Option<&[u32]>,
    plan: &MsmPlan,
) -> Result<C::Projective> {
    plan.validate()?;
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
        affine_rounds: plan.affine_rounds,
    };
    let sums: Vec<_> =
        model::window_sums(&table, frs, indices, model_plan).into_iter().map(C::from_kernel_jacobian).collect();
    let widths = WindowWidths::new(plan.window_bits, plan.virtual_windows);
    Ok(C::normalize(&combine_windows::<C>(&sums, widths)))
}
