//! Batch addition on the CPU: the kernels' algorithm replayed on the host (`zkgpu_kernels::batch_add::model`:
//! the same lane programs, windows, trees and affine levels the GPU runs) and the host crate's CPU reference,
//! both against plain blstrs sums. Edge cases: empty sets, one point, identity points, `P + (−P)`, the same
//! point twice (a doubling inside an addition), random bitmaps, odd sizes, unaligned set starts.
mod common;

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use common::curve_props::{CurveUnderTest, cast};
use common::points::{affine_pair_cases, distinct_points, edge_points, random_bitmap, scattered};
use common::seeded_rng;
use ff::Field as _;
use group::{Curve, Group};
use rand_core::RngCore;
use zkgpu::Error;
use zkgpu::batch_add::cpu::{batch_add_cpu, batch_add_sets_cpu, split_scalars_cpu};
use zkgpu::batch_add::{G1, G2};
use zkgpu_kernels::batch_add::{
    FINISH_BLOCK, ScalarClass, classify_scalar, model, nth_set_bit, selection_word, window_range,
};
use zkgpu_kernels::curve::{Affine, Xyzz};
use zkgpu_kernels::field::Field;
use zkgpu_kernels::field::Fr;

fn naive_sum<C: CurveUnderTest>(points: &[C::Affine], bitmap: Option<&[u32]>) -> C::Projective {
    let mut acc = C::Projective::identity();
    for (i, p) in points.iter().enumerate() {
        if bitmap.is_none_or(|b| (b[i / 32] >> (i % 32)) & 1 == 1) {
            acc += C::Projective::from(*p);
        }
    }
    acc
}

/// The model's result for one set at `points[first..]` of a larger bitmap, `blocks` one-warp blocks.
fn model_sum<C: CurveUnderTest>(
    points: &[C::Affine],
    bitmap: Option<&[u32]>,
    first: usize,
    blocks: u32,
) -> C::Projective {
    let ours: Vec<Affine<C::Field>> = points.iter().map(cast).collect();
    let lane_sums = model::accumulate(&ours, bitmap, first as u32, blocks, 32);
    // The GPU's reduce kernels regroup partials (any grouping is the same sum); finish as the GPU does.
    cast(&model::finish(&lane_sums, FINISH_BLOCK))
}

fn check_model<C: CurveUnderTest>(name: &str) {
    let mut rng = seeded_rng(name);
    for n in [0usize, 1, 2, 3, 31, 32, 33, 64, 65, 100, 257, 700] {
        for blocks in [1u32, 3, 8] {
            let points = edge_points::<C>(&mut rng, n, 8);
            let bitmap = random_bitmap(&mut rng, n + 64);
            let expected_all = naive_sum::<C>(&points, None);
            assert_eq!(model_sum::<C>(&points, None, 0, blocks), expected_all, "n = {n}, {blocks} blocks, all");
            // The set starts at an unaligned bit of a longer bitmap (as a later set of a multi-set launch).
            for first in [0usize, 5, 32, 37] {
                let shifted: Vec<u32> = (0..n.div_ceil(32))
                    .map(|w| selection_word(Some(|k: usize| bitmap[k]), first as u32, n as u32, w as u32))
                    .collect();
                let expected = naive_sum::<C>(&points, Some(&shifted));
                assert_eq!(
                    model_sum::<C>(&points, Some(&bitmap), first, blocks),
                    expected,
                    "n = {n}, {blocks} blocks, bitmap from bit {first}"
                );
            }
        }
    }
    // Every point the same: lanes double inside mixed additions, the trees double equal partials.
    let p = distinct_points::<C>(&mut rng, 1)[0];
    let same = vec![p; 300];
    assert_eq!(model_sum::<C>(&same, None, 0, 2), naive_sum::<C>(&same, None), "300 equal points");
    // P, −P pairs everywhere: the sum is the identity.
    let mut cancel = distinct_points::<C>(&mut rng, 150);
    let negs: Vec<_> = cancel.iter().map(|p| -*p).collect();
    cancel.extend(negs);
    assert!(bool::from(model_sum::<C>(&cancel, None, 0, 3).is_identity()), "P + (-P) pairs");
}

/// The reduce and finish kernels' four-lane addition (`quad_add_step`, replayed lane by lane with its
/// race checks) gives exactly `Xyzz::add`'s coordinates: random pairs in scaled coordinates, either side the
/// identity, the same point in two coordinate systems (the doubling), and `P + (−P)`.
fn check_quad_add<C: CurveUnderTest>(name: &str) {
    let mut rng = seeded_rng(name);
    let points: Vec<Affine<C::Field>> = distinct_points::<C>(&mut rng, 40).iter().map(cast).collect();
    let scale = |rng: &mut rand_chacha::ChaCha20Rng, p: &Affine<C::Field>| {
        Xyzz::from_affine_scaled(p, &points[(rng.next_u32() % 40) as usize].x)
    };
    let same = |a: &Xyzz<C::Field>, b: &Xyzz<C::Field>| a.x == b.x && a.y == b.y && a.zz == b.zz && a.zzz == b.zzz;
    let mut cases = vec![(Xyzz::IDENTITY, Xyzz::IDENTITY)];
    for w in points.windows(2) {
        let (a, b) = (scale(&mut rng, &w[0]), scale(&mut rng, &w[1]));
        let neg = Affine { x: w[0].x, y: w[0].y.neg() };
        cases.extend([
            (a, b),
            (a, Xyzz::IDENTITY),
            (Xyzz::IDENTITY, b),
            (a, scale(&mut rng, &w[0])),
            (a, scale(&mut rng, &neg)),
        ]);
    }
    for (i, (a, b)) in cases.iter().enumerate() {
        let (got, want) = (model::quad_add(a, b), a.add(b));
        assert!(same(&got, &want), "case {i}: quad {got:?} vs add {want:?}");
    }
}

curve_tests! {
    fn quad_addition_is_xyzz_addition = check_quad_add { g1: G1(), g2: G2() }
}

curve_tests! {
    fn model_matches_blstrs = check_model { g1: G1(), g2: G2() }
}

fn check_affine_level<C: CurveUnderTest>(name: &str) {
    let mut rng = seeded_rng(name);
    // 5001 points: 79 blocks of 32 pairs (the last partial), several blocks per lane at run 200.
    for n in [0usize, 1, 2, 3, 9, 64, 101, 5001] {
        for run in [1u32, 3, 32, 200] {
            let points = affine_pair_cases::<C>(&mut rng, n);
            let ours: Vec<Affine<C::Field>> = points.iter().map(cast).collect();
            // The same list gathered from a table twice its size (the first level under a bitmap).
            let filler: Vec<Affine<C::Field>> = distinct_points::<C>(&mut rng, n + 1).iter().map(cast).collect();
            let (table, indices) = scattered(&mut rng, &ours, &filler);
            for (what, level) in [
                ("plain", model::affine_level(&ours, None, run)),
                ("gathered", model::affine_level(&table, Some(&indices), run)),
            ] {
                assert_eq!(level.len(), n.div_ceil(2));
                for (i, got) in level.iter().enumerate() {
                    let expected = if 2 * i + 1 < n {
                        C::Projective::from(points[2 * i]) + C::Projective::from(points[2 * i + 1])
                    } else {
                        C::Projective::from(points[2 * i])
                    };
                    let got: C::Affine = cast(got);
                    assert_eq!(got, expected.to_affine(), "{what}: n = {n}, run = {run}, pair {i} (kind {})", i % 6);
                }
            }
        }
    }
}

curve_tests! {
    fn affine_level_matches_blstrs = check_affine_level { g1: G1(), g2: G2() }
}

#[test]
fn nth_set_bit_and_windows() {
    let mut rng = seeded_rng("nth_set_bit_and_windows");
    for _ in 0..2000 {
        let word = match rng.next_u32() % 3 {
            0 => u32::MAX,
            1 => rng.next_u32() & rng.next_u32(),
            _ => rng.next_u32(),
        };
        let positions: Vec<u32> = (0..32).filter(|b| (word >> b) & 1 == 1).collect();
        for j in 0..33u32 {
            assert_eq!(nth_set_bit(word, j), positions.get(j as usize).copied().unwrap_or(32), "{word:#x}, j = {j}");
        }
    }
    for windows in [0u32, 1, 5, 100, 1 << 20] {
        for warps in [1u32, 3, 64, 4096] {
            let mut next = 0;
            for w in 0..warps {
                let (a, b) = window_range(windows, w, warps);
                assert_eq!(a, next);
                assert!(b >= a && b - a <= windows.div_ceil(warps));
                next = b;
            }
            assert_eq!(next, windows);
        }
    }
}

#[test]
fn cpu_reference_sets_and_errors() {
    let mut rng = seeded_rng("cpu_reference_sets_and_errors");
    let points = edge_points::<G1>(&mut rng, 300, 8);
    let bitmap = random_bitmap(&mut rng, 300);
    let offsets = [0, 0, 1, 33, 33, 200, 300];
    let sums = batch_add_sets_cpu::<G1>(&points, &offsets, Some(&bitmap)).unwrap();
    for (s, w) in offsets.windows(2).enumerate() {
        let mut expected = G1Projective::identity();
        for i in w[0]..w[1] {
            if (bitmap[i / 32] >> (i % 32)) & 1 == 1 {
                expected += G1Projective::from(points[i]);
            }
        }
        assert_eq!(sums[s], expected, "set {s}");
    }
    let g2 = edge_points::<G2>(&mut rng, 40, 8);
    assert_eq!(batch_add_cpu::<G2>(&g2, None).unwrap(), naive_sum::<G2>(&g2, None));
    assert_eq!(batch_add_cpu::<G2>(&[] as &[G2Affine], None).unwrap(), G2Projective::identity());

    // Bitmap shorter than the point set.
    let short = batch_add_cpu::<G1>(&points, Some(&bitmap[..9]));
    assert!(matches!(short, Err(Error::BitmapTooShort { words: 9, needed: 10, points: 300 })), "{short:?}");
    // Offsets past the points, decreasing, or missing.
    for bad in [&[0usize, 301][..], &[0, 5, 4], &[]] {
        let r = batch_add_sets_cpu::<G1>(&points, bad, None);
        assert!(matches!(r, Err(Error::InvalidSets(_))), "{bad:?}: {r:?}");
    }
    let _unused: Option<G1Affine> = None;
}

#[test]
fn scalar_split_matches_the_kernel_classification() {
    let mut rng = seeded_rng("scalar_split_matches_the_kernel_classification");
    let mut scalars: Vec<Scalar> = (0..333)
        .map(|_| match rng.next_u32() % 4 {
            0 => Scalar::ZERO,
            1 => Scalar::ONE,
            _ => Scalar::random(&mut rng),
        })
        .collect();
    scalars.extend([-Scalar::ONE, Scalar::ONE.double(), Scalar::ZERO, Scalar::ONE]);
    let (ones, others, indices) = split_scalars_cpu(&scalars);
    for (i, s) in scalars.iter().enumerate() {
        let class = classify_scalar(&cast::<Scalar, Fr>(s));
        let bit = |b: &[u32]| (b[i / 32] >> (i % 32)) & 1 == 1;
        let expected = if *s == Scalar::ZERO {
            ScalarClass::Zero
        } else if *s == Scalar::ONE {
            ScalarClass::One
        } else {
            ScalarClass::Other
        };
        assert_eq!(class, expected, "scalar {i}");
        assert_eq!(bit(&ones), class == ScalarClass::One, "ones bit {i}");
        assert_eq!(bit(&others), class == ScalarClass::Other, "others bit {i}");
    }
    let expected_indices: Vec<u32> = (0..scalars.len() as u32)
        .filter(|&i| classify_scalar(&cast(&scalars[i as usize])) == ScalarClass::Other)
        .collect();
    assert_eq!(indices, expected_indices);
}
