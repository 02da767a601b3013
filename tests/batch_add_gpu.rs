//! Batch addition on the GPU against blstrs (the CPU reference in `zkgpu::batch_add::cpu`): both methods,
//! G1 and G2, all points and random bitmaps, many sets per launch, edge cases (empty sets, one point,
//! identities, `P + (−P)`, the same point twice), odd sizes, 2^16 and 2^20 points (~5 M for the affine levels),
//! several tables under one bitmap, the scalar split, and the typed errors. Needs a CUDA GPU:
//! `cargo xtask test --gpu`.
mod common;

use common::curve_props::CurveUnderTest;
use common::gpu::gpu;
use common::points::{affine_pair_cases, distinct_points, edge_points, random_bitmap, scattered};
use common::seeded_rng;
use ff::Field as _;
use group::Curve;
use rand_core::RngCore;
use zkgpu::Error;
use zkgpu::batch_add::cpu::{batch_add_cpu, batch_add_sets_cpu, split_scalars_cpu};
use zkgpu::batch_add::{
    Curve as GpuCurve, G1, G2, Method, affine_level, batch_add, batch_add_host, batch_add_sets, split_scalars,
};

/// GPU sum (points and bitmap uploaded) vs the CPU reference.
fn check_sum<C>(gpu: &zkgpu::Gpu, points: &[C::Affine], bitmap: Option<&[u32]>, method: Method, what: &str)
where
    C: GpuCurve,
    C::Projective: PartialEq + std::fmt::Debug,
{
    let expected = batch_add_cpu::<C>(points, bitmap).unwrap();
    let got = batch_add_host::<C>(gpu, points, bitmap, method).unwrap();
    assert_eq!(got, expected, "{what}: n = {}, bitmap: {}, {method:?}", points.len(), bitmap.is_some());
}

fn check_sizes<C: CurveUnderTest>(name: &str, sizes: &[usize], method: Method) {
    let gpu = gpu();
    let mut rng = seeded_rng(name);
    for &n in sizes {
        if method == Method::Affine && n > 1 << 20 {
            let adder = zkgpu::batch_add::BatchAdder::<C>::new(&gpu, n, &[0, n], method).unwrap();
            assert!(adder.affine_levels(false) > 0 && adder.affine_levels(true) > 0, "n = {n}: no affine levels");
        }
        let points = if n <= 1 << 16 { edge_points::<C>(&mut rng, n, 16) } else { distinct_points::<C>(&mut rng, n) };
        check_sum::<C>(&gpu, &points, None, method, name);
        let bitmap = random_bitmap(&mut rng, n);
        check_sum::<C>(&gpu, &points, Some(&bitmap), method, name);
        let none = vec![0u32; n.div_ceil(32)];
        check_sum::<C>(&gpu, &points, Some(&none), method, name);
    }
}

const SMALL: &[usize] = &[0, 1, 2, 3, 31, 32, 33, 1000, 4097, 1 << 16];

curve_tests! {
    #[ignore = "needs a CUDA GPU"]
    fn sums_small_and_2_16 = check_sizes { g1: G1(SMALL, Method::Xyzz), g2: G2(SMALL, Method::Xyzz) }
}

curve_tests! {
    #[ignore = "needs a CUDA GPU"]
    fn sums_2_20 = check_sizes { g1: G1(&[1 << 20, (1 << 20) + 13], Method::Xyzz), g2: G2(&[1 << 20], Method::Xyzz) }
}

/// The affine method: the levels only run on large lists (on an H200 G1 from ~2.2 M points, and under a bitmap,
/// planned for half of the set selected, from ~4.4 M; G2 from half that), so test there.
#[test]
#[ignore = "needs a CUDA GPU"]
fn g1_affine_method_large() {
    check_sizes::<G1>("g1_affine_method_large", &[1000, 5_000_011], Method::Affine);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn g2_affine_method_2_22() {
    check_sizes::<G2>("g2_affine_method_2_22", &[(1 << 22) + 7], Method::Affine);
}

/// The affine method under a bitmap on single sets that start inside the buffer: at a multiple of 32 points
/// (the selected points are compacted and gathered; bits past the set's end are set and must be ignored) and
/// unaligned (a plain XYZZ sum).
#[test]
#[ignore = "needs a CUDA GPU"]
fn g1_affine_method_bitmap_set_starts() {
    let gpu = gpu();
    let mut rng = seeded_rng("g1_affine_method_bitmap_set_starts");
    let n = 5_000_200;
    let points = distinct_points::<G1>(&mut rng, n);
    let bitmap = random_bitmap(&mut rng, n);
    let (device_points, device_bitmap) = (gpu.upload(&points).unwrap(), gpu.upload(&bitmap).unwrap());
    for (offsets, levels) in [([64, n - 100], true), ([5, n], false)] {
        let mut adder = zkgpu::batch_add::BatchAdder::<G1>::new(&gpu, n, &offsets, Method::Affine).unwrap();
        assert_eq!(adder.affine_levels(true) > 0, levels, "{offsets:?}: levels under a bitmap");
        adder.enqueue(&device_points, Some(&device_bitmap)).unwrap();
        let expected = batch_add_sets_cpu::<G1>(&points, &offsets, Some(&bitmap)).unwrap();
        assert_eq!(adder.sums().unwrap(), expected, "set {offsets:?}");
    }
    // Several tables under the bitmap (compacted once): the points and the points reversed.
    let reversed: Vec<_> = points.iter().rev().copied().collect();
    let device_reversed = gpu.upload(&reversed).unwrap();
    let offsets = [64, n - 100];
    let mut adder = zkgpu::batch_add::BatchAdder::<G1>::new(&gpu, n, &offsets, Method::Affine).unwrap();
    adder.enqueue_tables(&[&device_points, &device_reversed, &device_points], Some(&device_bitmap)).unwrap();
    let forward = batch_add_sets_cpu::<G1>(&points, &offsets, Some(&bitmap)).unwrap();
    let backward = batch_add_sets_cpu::<G1>(&reversed, &offsets, Some(&bitmap)).unwrap();
    let expected: Vec<_> = [&forward, &backward, &forward].into_iter().flatten().copied().collect();
    assert_eq!(adder.sums().unwrap(), expected, "three tables under one bitmap");
    // The affine levels (half and a quarter of the points) and the compaction's indices are held.
    let held = adder.device_bytes();
    assert!(
        held >= (n / 2 + n / 4) * size_of::<blstrs::G1Affine>() + (offsets[1] - offsets[0]) * 4,
        "device_bytes {held}"
    );
    // Then one table again, without a bitmap: sums() returns its one sum, and nothing more is allocated.
    adder.enqueue(&device_reversed, None).unwrap();
    assert_eq!(
        adder.sums().unwrap(),
        batch_add_sets_cpu::<G1>(&reversed, &offsets, None).unwrap(),
        "one table after three"
    );
    assert_eq!(adder.device_bytes(), held, "the adder's memory grew");
}

/// [`BatchAdder::with_budget`]: with the affine adder's own bytes (its bitmap compaction included) it stays
/// affine; a byte less and it sums in XYZZ within the budget; far below, `DeviceBudget` stating the XYZZ
/// scratch with nothing allocated. Every adder equals the CPU, with and without a bitmap, and allocates
/// nothing in its calls. Sizes where the levels run under a bitmap too (see the affine tests above).
fn budget_on<C: CurveUnderTest>(name: &str, n: usize) {
    use zkgpu::batch_add::BatchAdder;
    let gpu = gpu();
    let mut rng = seeded_rng(name);
    let points = distinct_points::<C>(&mut rng, n);
    let bitmap = random_bitmap(&mut rng, n);
    let (device, device_bitmap) = (gpu.upload(&points).unwrap(), gpu.upload(&bitmap).unwrap());
    let expected = [batch_add_cpu::<C>(&points, None).unwrap(), batch_add_cpu::<C>(&points, Some(&bitmap)).unwrap()];
    let mut unbounded = BatchAdder::<C>::new(&gpu, n, &[0, n], Method::Affine).unwrap();
    unbounded.reserve_selection().unwrap();
    assert!(unbounded.affine_levels(true) > 0, "the set compacts under a bitmap");
    let affine_bytes = unbounded.device_bytes();
    drop(unbounded);
    for (budget, method) in [(affine_bytes, Method::Affine), (affine_bytes - 1, Method::Xyzz)] {
        let mut adder = BatchAdder::<C>::with_budget(&gpu, n, &[0, n], Method::Affine, budget).unwrap();
        assert_eq!(adder.method(), method, "budget {budget}");
        let held = adder.device_bytes();
        assert!(held <= budget, "{held} bytes held for a budget of {budget}");
        for (bits, expected) in [None, Some(&device_bitmap)].into_iter().zip(&expected) {
            adder.enqueue(&device, bits).unwrap();
            assert_eq!(&adder.sums().unwrap()[0], expected, "{method:?}, bitmap {}", bits.is_some());
        }
        assert_eq!(adder.device_bytes(), held, "{method:?}: a call allocated");
    }
    gpu.synchronize().unwrap();
    let (free_before, _) = gpu.memory_info().unwrap();
    match BatchAdder::<C>::with_budget(&gpu, n, &[0, n], Method::Affine, 4096) {
        Err(Error::DeviceBudget { budget, needed, .. }) => assert!(budget == 4096 && needed > 4096, "{needed}"),
        other => panic!("a 4 KiB budget gave {:?}", other.map(|a| a.device_bytes())),
    }
    let (free_after, _) = gpu.memory_info().unwrap();
    assert!(free_after + (2 << 20) >= free_before, "{free_before} bytes free before, {free_after} after");
}

curve_tests! {
    #[ignore = "needs a CUDA GPU"]
    fn within_a_budget = budget_on { g1: G1(5_000_064), g2: G2((1 << 22) + 64) }
}

/// [`BatchAdder::enqueue_tables`] with several sets per table (XYZZ) and its errors: a table shorter than the
/// adder's points or a short bitmap fail before anything is queued (the last sums stay readable).
fn tables_on<C: CurveUnderTest>(name: &str) {
    let gpu = gpu();
    let mut rng = seeded_rng(name);
    let n = 4097;
    let offsets = [0, 1000, 1000, 4000, n];
    let tables: Vec<Vec<C::Affine>> = (0..3).map(|_| edge_points::<C>(&mut rng, n, 16)).collect();
    let bitmap = random_bitmap(&mut rng, n);
    let device: Vec<_> = tables.iter().map(|t| gpu.upload(t).unwrap()).collect();
    let device_bitmap = gpu.upload(&bitmap).unwrap();
    let mut adder = zkgpu::batch_add::BatchAdder::<C>::new(&gpu, n, &offsets, Method::Xyzz).unwrap();
    for bits in [None, Some((&bitmap, &device_bitmap))] {
        adder.enqueue_tables(&[&device[0], &device[1], &device[2]], bits.map(|b| b.1)).unwrap();
        let expected: Vec<_> =
            tables.iter().flat_map(|t| batch_add_sets_cpu::<C>(t, &offsets, bits.map(|b| &b.0[..])).unwrap()).collect();
        assert_eq!(adder.sums().unwrap(), expected, "bitmap {}", bits.is_some());
    }
    let expected = adder.sums().unwrap();
    let short = gpu.upload(&tables[0][..n - 1]).unwrap();
    let r = adder.enqueue_tables(&[&device[0], &short], None);
    assert!(matches!(r, Err(Error::LengthMismatch { .. })), "short table: {r:?}");
    let short_bitmap = gpu.upload(&bitmap[..bitmap.len() - 1]).unwrap();
    let r = adder.enqueue_tables(&[&device[0]], Some(&short_bitmap));
    assert!(matches!(r, Err(Error::BitmapTooShort { .. })), "short bitmap: {r:?}");
    assert_eq!(adder.sums().unwrap(), expected, "the errors queued nothing");
}

curve_tests! {
    #[ignore = "needs a CUDA GPU"]
    fn several_tables = tables_on { g1: G1(), g2: G2() }
}

/// The affine level kernel alone, on every degenerate pair kind and several run lengths.
fn check_affine_level<C: CurveUnderTest>(name: &str) {
    let gpu = gpu();
    let mut rng = seeded_rng(name);
    // 4097: 64 full blocks of 32 pairs; 5001: 78 full and a partial one; run 200 gives lanes many blocks.
    for n in [1usize, 2, 3, 101, 4096 + 1, 5001] {
        for run in [1usize, 3, 32, 200] {
            let points = affine_pair_cases::<C>(&mut rng, n);
            let input = gpu.upload(&points).unwrap();
            // The same list gathered from a table twice its size (the first level under a bitmap).
            let filler = distinct_points::<C>(&mut rng, n + 1);
            let (table, indices) = scattered(&mut rng, &points, &filler);
            let (table, indices) = (gpu.upload(&table).unwrap(), gpu.upload(&indices).unwrap());
            for (what, level) in [
                ("plain", affine_level::<C>(&gpu, &input, None, run)),
                ("gathered", affine_level::<C>(&gpu, &table, Some(&indices), run)),
            ] {
                let out = gpu.download(&level.unwrap()).unwrap();
                assert_eq!(out.len(), n.div_ceil(2));
                for (i, got) in out.iter().enumerate() {
                    let expected = if 2 * i + 1 < n {
                        C::Projective::from(points[2 * i]) + C::Projective::from(points[2 * i + 1])
                    } else {
                        C::Projective::from(points[2 * i])
                    };
                    assert_eq!(*got, expected.to_affine(), "{what}: n = {n}, run = {run}, pair {i} (kind {})", i % 6);
                }
            }
        }
    }
}

curve_tests! {
    #[ignore = "needs a CUDA GPU"]
    fn affine_level_edge_pairs = check_affine_level { g1: G1(), g2: G2() }
}

/// Many independent sums in one launch, with empty sets, one-point sets and unaligned starts.
fn check_sets<C: CurveUnderTest>(name: &str) {
    let gpu = gpu();
    let mut rng = seeded_rng(name);
    let n = 20_000;
    let points = edge_points::<C>(&mut rng, n, 16);
    let mut offsets = vec![0usize, 0, 1, 2, 35, 35, 100, 1000];
    while *offsets.last().unwrap() < n {
        let next = (offsets.last().unwrap() + (rng.next_u32() % 3000) as usize).min(n);
        offsets.push(next);
    }
    let bitmap = random_bitmap(&mut rng, n);
    let device_points = gpu.upload(&points).unwrap();
    let device_bitmap = gpu.upload(&bitmap).unwrap();
    for (bm, dbm) in [(None, None), (Some(&bitmap[..]), Some(&device_bitmap))] {
        let expected = batch_add_sets_cpu::<C>(&points, &offsets, bm).unwrap();
        let got = batch_add_sets::<C>(&gpu, &device_points, &offsets, dbm, Method::Xyzz).unwrap();
        assert_eq!(got.len(), offsets.len() - 1);
        for s in 0..got.len() {
            assert_eq!(got[s], expected[s], "set {s} ({}..{}), bitmap: {}", offsets[s], offsets[s + 1], bm.is_some());
        }
    }
    // Whole buffer through batch_add on device buffers.
    let one = batch_add::<C>(&gpu, &device_points, Some(&device_bitmap), Method::Xyzz).unwrap();
    assert_eq!(one, batch_add_cpu::<C>(&points, Some(&bitmap)).unwrap());
}

curve_tests! {
    #[ignore = "needs a CUDA GPU"]
    fn many_sets_one_launch = check_sets { g1: G1(), g2: G2() }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn scalar_split_matches_cpu() {
    let gpu = gpu();
    let mut rng = seeded_rng("scalar_split_matches_cpu");
    for n in [0usize, 1, 31, 33, 1000, 32 * 1024 + 5, (1 << 20) + 3] {
        let scalars: Vec<blstrs::Scalar> = (0..n)
            .map(|_| match rng.next_u32() % 3 {
                0 => blstrs::Scalar::ZERO,
                1 => blstrs::Scalar::ONE,
                _ => blstrs::Scalar::random(&mut rng),
            })
            .collect();
        let (ones, others, indices) = split_scalars_cpu(&scalars);
        let split = split_scalars(&gpu, &gpu.upload(&scalars).unwrap()).unwrap();
        assert_eq!(gpu.download(&split.ones).unwrap(), ones, "n = {n}: ones");
        assert_eq!(gpu.download(&split.others).unwrap(), others, "n = {n}: others");
        assert_eq!(split.other_count, indices.len(), "n = {n}: count");
        let got = gpu.download(&split.other_indices).unwrap();
        assert_eq!(&got[..split.other_count], &indices[..], "n = {n}: indices");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn typed_errors() {
    let gpu = gpu();
    let mut rng = seeded_rng("typed_errors");
    let points = distinct_points::<G1>(&mut rng, 100);
    let r = batch_add_host::<G1>(&gpu, &points, Some(&[0u32; 3]), Method::Xyzz);
    assert!(matches!(r, Err(Error::BitmapTooShort { words: 3, needed: 4, points: 100 })), "{r:?}");
    let device_points = gpu.upload(&points).unwrap();
    let short = gpu.upload(&[u32::MAX; 3]).unwrap();
    let r = batch_add::<G1>(&gpu, &device_points, Some(&short), Method::Xyzz);
    assert!(matches!(r, Err(Error::BitmapTooShort { .. })), "{r:?}");
    for bad in [&[0usize, 101][..], &[0, 50, 40], &[]] {
        let r = batch_add_sets::<G1>(&gpu, &device_points, bad, None, Method::Xyzz);
        assert!(matches!(r, Err(Error::InvalidSets(_))), "{bad:?}: {r:?}");
    }
}
