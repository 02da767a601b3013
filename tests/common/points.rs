//! Point sets for the batch-addition (and later MSM) tests, shared by the CPU and GPU suites.
use group::{Curve as _, Group};
use rand_chacha::ChaCha20Rng;
use rand_core::RngCore;

use super::curve_props::CurveUnderTest;

/// `n` distinct points `start + i·step` (random start and step).
pub fn distinct_points<C: CurveUnderTest>(rng: &mut ChaCha20Rng, n: usize) -> Vec<C::Affine> {
    let step = C::Projective::random(&mut *rng);
    let mut acc = C::Projective::random(&mut *rng);
    let mut proj = Vec::with_capacity(n);
    for _ in 0..n {
        proj.push(acc);
        acc += step;
    }
    let mut out = vec![C::Affine::from(C::Projective::identity()); n];
    C::Projective::batch_normalize(&proj, &mut out);
    out
}

/// Distinct points with edge cases sprinkled in, each kind about once in `one_in` positions: identities, `P`
/// and `−P`, and the same point 32 places later (so one GPU lane adds it twice: a doubling inside the mixed
/// addition), neighbours repeated or negated.
pub fn edge_points<C: CurveUnderTest>(rng: &mut ChaCha20Rng, n: usize, one_in: u32) -> Vec<C::Affine> {
    let mut points = distinct_points::<C>(rng, n);
    let identity = C::Affine::from(C::Projective::identity());
    for i in 0..n {
        match rng.next_u32() % one_in {
            0 => points[i] = identity,
            1 if i >= 32 => points[i] = points[i - 32],
            2 if i >= 32 => points[i] = -points[i - 32],
            3 if i >= 1 => points[i] = points[i - 1],
            4 if i >= 1 => points[i] = -points[i - 1],
            _ => {}
        }
    }
    points
}

/// A random selection bitmap for `n` points (bit i of word i / 32 selects point i).
pub fn random_bitmap(rng: &mut ChaCha20Rng, n: usize) -> Vec<u32> {
    (0..n.div_ceil(32)).map(|_| rng.next_u32()).collect()
}

/// `n` distinct points whose consecutive pairs (2i, 2i+1) cycle through every kind an affine pair addition must
/// handle: (P, P), (P, −P), (O, P), (P, O), (O, O), and a random pair.
pub fn affine_pair_cases<C: CurveUnderTest>(rng: &mut ChaCha20Rng, n: usize) -> Vec<C::Affine> {
    let identity = C::Affine::from(C::Projective::identity());
    let mut points = distinct_points::<C>(rng, n);
    for i in 0..n / 2 {
        match i % 6 {
            0 => points[2 * i + 1] = points[2 * i],
            1 => points[2 * i + 1] = -points[2 * i],
            2 => points[2 * i] = identity,
            3 => points[2 * i + 1] = identity,
            4 => (points[2 * i], points[2 * i + 1]) = (identity, identity),
            _ => {}
        }
    }
    points
}

/// `list` hidden in a larger table: `list` and `filler` at random positions of the table, and the positions of
/// `list`'s entries (`table[indices[k]] == list[k]`), for the gathered affine level.
pub fn scattered<T: Copy>(rng: &mut ChaCha20Rng, list: &[T], filler: &[T]) -> (Vec<T>, Vec<u32>) {
    let all: Vec<T> = list.iter().chain(filler).copied().collect();
    let mut position: Vec<u32> = (0..all.len() as u32).collect();
    for i in (1..position.len()).rev() {
        position.swap(i, rng.next_u32() as usize % (i + 1));
    }
    let mut table = all.clone();
    for (k, &p) in position.iter().enumerate() {
        table[p as usize] = all[k];
    }
    (table, position[..list.len()].to_vec())
}
