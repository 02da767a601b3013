//! CPU reference for [`crate::batch_add`], on blstrs: the same inputs and checks, the obvious algorithm.
//! Tests compare the GPU against it; provers without a GPU can use it as the fallback.
use blstrs::Scalar;
use ff::Field as _;

use crate::batch_add::{check_bitmap, check_offsets};
use crate::curve::Curve;
use crate::error::Result;

/// Is point `i` selected by `bitmap` (bit `i` of word `i / 32`)? The bitmap must cover `i`.
fn selected(bitmap: Option<&[u32]>, i: usize) -> bool {
    bitmap.is_none_or(|b| (b[i / 32] >> (i % 32)) & 1 == 1)
}

/// The sum of `points` selected by `bitmap` (all when `None`); `Err(BitmapTooShort)` as on the GPU.
pub fn batch_add_cpu<C: Curve>(points: &[C::Affine], bitmap: Option<&[u32]>) -> Result<C::Projective> {
    Ok(batch_add_sets_cpu::<C>(points, &[0, points.len()], bitmap)?.remove(0))
}

/// Independent sums: set `s` is `points[set_offsets[s]..set_offsets[s + 1]]`, the bitmap indexed by position
/// in `points`. Same checks and errors as [`crate::batch_add::batch_add_sets`].
pub fn batch_add_sets_cpu<C: Curve>(
    points: &[C::Affine],
    set_offsets: &[usize],
    bitmap: Option<&[u32]>,
) -> Result<Vec<C::Projective>> {
    check_offsets(set_offsets, points.len())?;
    if let Some(b) = bitmap {
        check_bitmap(b.len(), points.len())?;
    }
    Ok(set_offsets
        .windows(2)
        .map(|w| {
            let mut acc = C::identity();
            for i in (w[0]..w[1]).filter(|&i| selected(bitmap, i)) {
                C::add_assign(&mut acc, &points[i]);
            }
            acc
        })
        .collect())
}

/// The scalar split on the CPU: `(ones bitmap, others bitmap, indices of the others)`, as
/// [`crate::batch_add::split_scalars`] computes them.
pub fn split_scalars_cpu(scalars: &[Scalar]) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    let words = scalars.len().div_ceil(32);
    let (mut ones, mut others, mut indices) = (vec![0u32; words], vec![0u32; words], Vec::new());
    for (i, s) in scalars.iter().enumerate() {
        if *s == Scalar::ONE {
            ones[i / 32] |= 1 << (i % 32);
        } else if !bool::from(s.is_zero()) {
            others[i / 32] |= 1 << (i % 32);
            indices.push(i as u32);
        }
    }
    (ones, others, indices)
}
