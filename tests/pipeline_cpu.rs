//! The partition pipeline's CPU side (runs in CI, no GPU): the job's shape validation, the assignment split,
//! the phase report's arithmetic (interval union, busy fraction, GB/s, merging jobs and GPUs), the multi-GPU
//! range split and engine choice, and the CPU reference job: `h` from the coset recipe against a direct
//! computation of `(A·B − C) / Z` (polynomial product and exact division by `X^n − 1` for a satisfied
//! witness, evaluation at the coset generator otherwise) at 2^4..2^8, and whole jobs against the obvious sums.
mod common;

use blstrs::{G1Affine, G2Affine, Scalar};
use common::pipeline_cases::{filecoin_mix, job_data};
use common::points::distinct_points;
use common::seeded_rng;
use ff::Field;
use zkgpu::Error;
use zkgpu::curve::{G1, G2};
use zkgpu::msm::cpu::msm_naive;
use zkgpu::ntt::NttConfig;
use zkgpu::ntt::cpu::{coset_generator, ntt};
use zkgpu::pipeline::cpu::{AssignmentQueries, h_coefficients, partition_cpu};
use zkgpu::pipeline::{
    AssignmentInput, PartitionConfig, PartitionJob, PartitionShape, combine_gpus, pick_engine, split_assignment,
    split_ranges, tail_plan, window_ranges,
};
use zkgpu::profile::{Phase, PhaseKind, PhaseReport, gbps, union_ms};

// ---------------------------------------------------------------------------------------------------------
// Shapes and the split

#[test]
fn shape_check_names_the_bad_input() {
    let shape = PartitionShape { n: 16, assignments: vec![40, 7] };
    let v16 = vec![Scalar::ONE; 16];
    let v8 = vec![Scalar::ONE; 8];
    let v12 = vec![Scalar::ONE; 12];
    let (t40, i40) = (vec![Scalar::ONE; 40], vec![0u32; 40]);
    let (t7, i7) = (vec![Scalar::ONE; 7], vec![0u32; 7]);
    let (o40, o7) = (vec![0u32; 2], vec![0u32; 1]);
    let good = |a, b, c| PartitionJob {
        a,
        b,
        c,
        assignments: vec![
            AssignmentInput { tail: &t40[..12], tail_index: &i40[..12], ones: &o40 },
            AssignmentInput { tail: &t7, tail_index: &i7, ones: &o7 },
        ],
        h_out: None,
    };
    shape.check(&good(&v16, &v16, &v16)).unwrap();
    assert!(matches!(
        shape.check(&good(&v8, &v16, &v16)),
        Err(Error::LengthMismatch { what: "partition a", expected: 16, actual: 8 })
    ));
    assert!(matches!(shape.check(&good(&v16, &v12, &v16)), Err(Error::NttSize { n: 12 })));
    assert!(matches!(shape.check(&good(&v16, &v16, &v8)), Err(Error::LengthMismatch { what: "partition c", .. })));
    assert!(matches!(shape.check(&good(&v16, &v16, &[])), Err(Error::NttSize { n: 0 })));

    let mut job = good(&v16, &v16, &v16);
    job.assignments.pop();
    assert!(matches!(
        shape.check(&job),
        Err(Error::LengthMismatch { what: "partition assignments", expected: 2, actual: 1 })
    ));
    // A tail longer than its assignment, indices that do not pair with the tail.
    let mut job = good(&v16, &v16, &v16);
    job.assignments[1] = AssignmentInput { tail: &t40[..8], tail_index: &i40[..8], ones: &o7 };
    assert!(matches!(shape.check(&job), Err(Error::LengthMismatch { expected: 7, actual: 8, .. })));
    let mut job = good(&v16, &v16, &v16);
    job.assignments[0].tail_index = &i40[..11];
    assert!(matches!(
        shape.check(&job),
        Err(Error::LengthMismatch { what: "partition assignment tail_index", expected: 12, actual: 11 })
    ));
    // Full-length and empty tails are fine.
    let mut job = good(&v16, &v16, &v16);
    job.assignments[0] = AssignmentInput { tail: &t40, tail_index: &i40, ones: &o40 };
    job.assignments[1] = AssignmentInput { tail: &[], tail_index: &[], ones: &o7 };
    shape.check(&job).unwrap();
    let mut job = good(&v16, &v16, &v16);
    job.assignments[0].ones = &o7;
    assert!(matches!(shape.check(&job), Err(Error::BitmapTooShort { words: 1, needed: 2, points: 40 })));
    // A longer bitmap is fine (only the needed words are read).
    let o40_long = vec![0u32; 5];
    let mut job = good(&v16, &v16, &v16);
    job.assignments[0].ones = &o40_long;
    shape.check(&job).unwrap();

    assert_eq!(shape.upload_bytes(), 3 * 16 * 32 + 40 * 36 + 2 * 4 + 7 * 36 + 4);
}

#[test]
fn split_assignment_separates_ones_and_tail() {
    let mut rng = seeded_rng("split_assignment_separates_ones_and_tail");
    // Small (one thread) and large (several threads, chunk edges inside the data) inputs, sizes off multiples of 32.
    for m in [0usize, 1, 31, 33, 1000, 200_003] {
        let mut values = filecoin_mix(&mut rng, m);
        if m > 0 {
            values[m - 1] = Scalar::from(2u64); // the last position in the tail
        }
        let mut ones = vec![u32::MAX; m.div_ceil(32)];
        let (mut tail, mut tail_index) = (vec![Scalar::ONE; m], vec![u32::MAX; m]);
        let k = split_assignment(&values, &mut ones, &mut tail, &mut tail_index).unwrap();
        let expected: Vec<(u32, Scalar)> = values
            .iter()
            .enumerate()
            .filter(|(_, v)| **v != Scalar::ZERO && **v != Scalar::ONE)
            .map(|(i, v)| (i as u32, *v))
            .collect();
        assert_eq!(k, expected.len(), "m = {m}: tail length");
        let got: Vec<(u32, Scalar)> = tail_index[..k].iter().copied().zip(tail[..k].iter().copied()).collect();
        assert_eq!(got, expected, "m = {m}: the tail and its positions, in order");
        assert!(
            tail[k..].iter().all(|s| *s == Scalar::ONE) && tail_index[k..].iter().all(|&i| i == u32::MAX),
            "m = {m}: room past k untouched"
        );
        for (i, v) in values.iter().enumerate() {
            let bit = (ones[i / 32] >> (i % 32)) & 1 == 1;
            assert_eq!(bit, *v == Scalar::ONE, "m = {m}, bit {i}");
        }
        if m % 32 != 0 {
            assert_eq!(ones[m / 32] >> (m % 32), 0, "bits past the end are clear");
        }
        // Exactly k of room is enough.
        let (mut tail, mut tail_index) = (vec![Scalar::ONE; k], vec![0u32; k]);
        assert_eq!(split_assignment(&values, &mut ones, &mut tail, &mut tail_index).unwrap(), k);
    }
    // Length errors leave the outputs alone.
    let values: Vec<Scalar> = (0..40u64).map(Scalar::from).collect(); // 38 tail values
    let mut ones = vec![7u32; 1];
    let (mut tail, mut tail_index) = (vec![Scalar::ONE; 40], vec![9u32; 40]);
    assert!(matches!(
        split_assignment(&values, &mut ones, &mut tail, &mut tail_index),
        Err(Error::LengthMismatch { .. })
    ));
    let mut ones = vec![7u32; 2];
    let mut short = vec![Scalar::ONE; 37];
    let r = split_assignment(&values, &mut ones, &mut short, &mut tail_index);
    assert!(matches!(r, Err(Error::LengthMismatch { expected: 38, actual: 37, .. })), "{r:?}");
    let mut short_index = vec![9u32; 37];
    let r = split_assignment(&values, &mut ones, &mut tail, &mut short_index);
    assert!(matches!(r, Err(Error::LengthMismatch { what: "split_assignment tail_index", .. })), "{r:?}");
    assert_eq!(ones, vec![7, 7]);
    assert!(
        short.iter().chain(&tail).all(|s| *s == Scalar::ONE) && tail_index.iter().chain(&short_index).all(|&i| i == 9)
    );
}

/// A streamed assignment's windows take exactly the tail entries whose positions fall in them (ascending
/// positions from a seeded split, windows of 32..4096 positions, windows with no entry, an empty tail); any
/// order gives consecutive ranges covering every entry once (misplaced ones are the GPU's to count bad).
#[test]
fn window_ranges_split_an_ascending_tail_by_position() {
    let mut rng = seeded_rng("window_ranges_split_an_ascending_tail_by_position");
    for len in [1usize, 31, 1000, 5000, 20_037] {
        let values = filecoin_mix(&mut rng, len);
        let (mut ones, mut tail, mut index) = (vec![0u32; len.div_ceil(32)], vec![Scalar::ZERO; len], vec![0u32; len]);
        let k = split_assignment(&values, &mut ones, &mut tail, &mut index).unwrap();
        let index = &index[..k];
        for window in [32usize, 64, 4096] {
            let windows = len.div_ceil(window);
            let ranges = window_ranges(index, window, windows);
            assert_eq!(ranges.len(), windows);
            for (w, r) in ranges.iter().enumerate() {
                let expected: Vec<usize> = (0..k).filter(|&j| (index[j] as usize) / window == w).collect();
                assert_eq!(r.clone().collect::<Vec<_>>(), expected, "len {len}, window {window}, window {w}");
            }
        }
        let mut reversed = index.to_vec();
        reversed.reverse();
        let ranges = window_ranges(&reversed, 64, len.div_ceil(64));
        assert_eq!(ranges.first().map(|r| r.start), Some(0));
        assert_eq!(ranges.last().map(|r| r.end), Some(k));
        assert!(ranges.windows(2).all(|p| p[0].end == p[1].start), "{ranges:?}");
    }
    assert_eq!(window_ranges(&[], 64, 3), vec![0..0, 0..0, 0..0]);
    assert_eq!(window_ranges(&[70, 71, 255, 256], 64, 5), vec![0..0, 0..2, 2..2, 2..3, 3..4]);
}

#[test]
fn tail_plan_is_sized_for_the_sparse_tail() {
    let config = PartitionConfig::default();
    let sparse = tail_plan(1 << 20, &config).unwrap();
    let dense = tail_plan(1 << 20, &PartitionConfig { tail_fraction: 1.0, ..config }).unwrap();
    assert!(sparse.window_bits <= dense.window_bits, "{sparse:?} vs {dense:?}");
    let fixed = tail_plan(
        1 << 20,
        &PartitionConfig { tail_msm: zkgpu::msm::MsmConfig { window_bits: Some(9), ..Default::default() }, ..config },
    )
    .unwrap();
    assert_eq!(fixed.window_bits, 9);
    assert_eq!(sparse.n, 1 << 20);
}

// ---------------------------------------------------------------------------------------------------------
// Report arithmetic

fn phase(name: &str, kind: PhaseKind, start: f64, end: f64, bytes: usize) -> Phase {
    Phase { name: name.into(), kind, start_ms: start, end_ms: end, bytes }
}

#[test]
fn union_counts_overlaps_once() {
    assert_eq!(union_ms([]), 0.0);
    assert_eq!(union_ms([(0.0, 1.0)]), 1.0);
    assert_eq!(union_ms([(0.0, 2.0), (1.0, 3.0)]), 3.0);
    assert_eq!(union_ms([(5.0, 6.0), (0.0, 1.0), (0.5, 0.75)]), 2.0);
    assert_eq!(union_ms([(0.0, 1.0), (1.0, 2.0)]), 2.0, "touching intervals");
    assert_eq!(union_ms([(2.0, 1.0), (3.0, 3.0)]), 0.0, "reversed and empty intervals");
    assert_eq!(union_ms([(0.0, 10.0), (2.0, 3.0), (4.0, 5.0)]), 10.0, "nested");
}

#[test]
fn report_busy_fraction_and_bandwidth() {
    // Uploads 0..10 ms (2 GB in two copies), kernels 5..25 ms with an overlapping pair, a download 25..26 ms,
    // and a span over all of it (a streamed MSM's first step to its last: it waits, so it counts as nothing).
    let phases = vec![
        phase("msm.stream.0.g1", PhaseKind::Span, 0.0, 26.0, 0),
        phase("h2d.a", PhaseKind::H2d, 0.0, 5.0, 500_000_000),
        phase("h2d.b", PhaseKind::H2d, 5.0, 10.0, 500_000_000),
        phase("ntt", PhaseKind::Kernel, 5.0, 15.0, 0),
        phase("msm.h", PhaseKind::Kernel, 14.0, 20.0, 0),
        phase("msm.tail", PhaseKind::Kernel, 22.0, 25.0, 0),
        phase("d2h.results", PhaseKind::D2h, 25.0, 26.0, 1_000_000),
    ];
    let r = PhaseReport::from_phases(phases);
    assert_eq!(r.wall_ms, 26.0);
    assert_eq!(r.kernel_ms, 18.0, "15 + 3, the overlap of ntt and msm.h counted once");
    assert_eq!(r.kernel_sum_ms, 19.0);
    assert!((r.gpu_busy - 18.0 / 26.0).abs() < 1e-12);
    assert_eq!(r.h2d_bytes, 1_000_000_000);
    assert_eq!(r.h2d_ms, 10.0);
    assert!((r.h2d_gbps - 100.0).abs() < 1e-9, "1 GB in 10 ms");
    assert!((r.d2h_gbps - 1.0).abs() < 1e-9);
    assert_eq!(r.transfer_ms, 11.0);
    assert!((r.kernel_ms_of("msm.") - 9.0).abs() < 1e-12, "kernel phases only, not the span");
    assert_eq!(r.phases.len(), 7, "the span is reported");

    let host = r.clone().with_wall_ms(36.0);
    assert!((host.gpu_busy - 0.5).abs() < 1e-12);
    assert_eq!(r.clone().with_wall_ms(0.0).gpu_busy, 0.0);
    assert_eq!(r.clone().with_wall_ms(1.0).gpu_busy, 1.0, "clamped");

    let empty = PhaseReport::from_phases(Vec::new());
    assert_eq!((empty.wall_ms, empty.gpu_busy, empty.h2d_gbps), (0.0, 0.0, 0.0));
    assert_eq!(gbps(1_000_000_000, 0.0), 0.0);
}

#[test]
fn merged_jobs_and_combined_gpus() {
    // Two jobs on one GPU: job 2's upload overlaps job 1's kernel.
    let j1 = PhaseReport::from_phases(vec![
        phase("h2d.a", PhaseKind::H2d, 0.0, 10.0, 550_000_000),
        phase("k", PhaseKind::Kernel, 10.0, 30.0, 0),
    ]);
    let j2 = PhaseReport::from_phases(vec![
        phase("h2d.a", PhaseKind::H2d, 10.0, 20.0, 550_000_000),
        phase("k", PhaseKind::Kernel, 30.0, 50.0, 0),
    ]);
    let both = PhaseReport::merge([&j1, &j2]);
    assert_eq!(both.wall_ms, 50.0);
    assert_eq!(both.kernel_ms, 40.0);
    assert!((both.gpu_busy - 0.8).abs() < 1e-12);
    assert!((both.h2d_gbps - 55.0).abs() < 1e-9);

    // The same on two GPUs of a pool: busy is the mean over GPUs.
    let other = PhaseReport::from_phases(vec![
        phase("h2d.a", PhaseKind::H2d, 0.0, 10.0, 550_000_000),
        phase("k", PhaseKind::Kernel, 10.0, 20.0, 0),
    ]);
    let pool = combine_gpus(&[both.clone(), other]);
    assert_eq!(pool.wall_ms, 50.0);
    assert_eq!(pool.kernel_ms, 50.0);
    assert_eq!((both.active_ms, pool.active_ms), (50.0, 70.0), "active times summed over GPUs");
    assert!((pool.gpu_busy - 0.5).abs() < 1e-12);
    assert!((pool.h2d_gbps - 55.0).abs() < 1e-9);
    assert_eq!(combine_gpus(&[]).gpu_busy, 0.0);
}

/// Active time is the union of kernels and copies: a span (which includes waits) and the gaps between
/// phases are not, so `wall − active` is the time the GPU did neither.
#[test]
fn active_time_is_kernels_or_copies() {
    let r = PhaseReport::from_phases(vec![
        phase("h2d.a", PhaseKind::H2d, 0.0, 4.0, 1),
        phase("ntt", PhaseKind::Kernel, 2.0, 6.0, 0),
        phase("msm.h", PhaseKind::Span, 0.0, 20.0, 0),
        phase("chunk.h.0", PhaseKind::Kernel, 10.0, 12.0, 0),
        phase("d2h.results", PhaseKind::D2h, 12.0, 13.0, 1),
    ]);
    assert_eq!(r.wall_ms, 20.0);
    assert_eq!(r.active_ms, 9.0, "0..6 and 10..13");
    assert_eq!((r.kernel_ms, r.transfer_ms), (6.0, 5.0));
}

// ---------------------------------------------------------------------------------------------------------
// Multi-GPU helpers

#[test]
fn ranges_cover_contiguously_and_evenly() {
    for n in [0usize, 1, 2, 3, 7, 100, 1 << 20, (1 << 27) + 5] {
        for parts in [0usize, 1, 2, 3, 8] {
            let r = split_ranges(n, parts);
            assert!(!r.is_empty());
            assert!(r.len() <= parts.max(1));
            assert_eq!(r[0].start, 0);
            assert_eq!(r[r.len() - 1].end, n);
            for w in r.windows(2) {
                assert_eq!(w[0].end, w[1].start, "contiguous");
                assert!(w[0].len() >= w[1].len() && w[0].len() - w[1].len() <= 1, "even: {r:?}");
            }
            if n > 0 {
                assert!(r.iter().all(|x| !x.is_empty()), "no empty part for n = {n}, parts = {parts}: {r:?}");
            }
        }
    }
    assert_eq!(split_ranges(10, 3), vec![0..4, 4..7, 7..10]);
}

#[test]
fn least_busy_engine_ties_in_turn() {
    assert_eq!(pick_engine(&[0, 0], 0), 0);
    assert_eq!(pick_engine(&[0, 0], 1), 1);
    assert_eq!(pick_engine(&[1, 0], 0), 1);
    assert_eq!(pick_engine(&[2, 1, 1], 0), 1);
    assert_eq!(pick_engine(&[2, 1, 1], 2), 2);
    assert_eq!(pick_engine(&[0, 1, 0], 1), 2);
    assert_eq!(pick_engine(&[], 3), 0);
}

// ---------------------------------------------------------------------------------------------------------
// The reference job

/// `p · q` by the schoolbook product (lengths n each, result 2n − 1).
fn poly_mul(p: &[Scalar], q: &[Scalar]) -> Vec<Scalar> {
    let mut out = vec![Scalar::ZERO; p.len() + q.len() - 1];
    for (i, x) in p.iter().enumerate() {
        for (j, y) in q.iter().enumerate() {
            out[i + j] += x * y;
        }
    }
    out
}

fn coefficients(evals: &[Scalar]) -> Vec<Scalar> {
    let mut v = evals.to_vec();
    ntt(&mut v, NttConfig::inverse()).unwrap();
    v
}

fn eval(coeffs: &[Scalar], x: Scalar) -> Scalar {
    coeffs.iter().rev().fold(Scalar::ZERO, |acc, c| acc * x + c)
}

#[test]
fn h_equals_the_exact_quotient_for_a_satisfied_witness() {
    let mut rng = seeded_rng("h_equals_the_exact_quotient_for_a_satisfied_witness");
    for log_n in 4..=8u32 {
        let n = 1usize << log_n;
        let data = job_data(&mut rng, n, &[], true);
        let h = h_coefficients(&data.a, &data.b, &data.c).unwrap();
        // P = A·B − C has degree <= 2n − 2; P = Q·(X^n − 1) + R with Q = P's top half and R_i = p_i + p_{n+i}.
        let mut p = poly_mul(&coefficients(&data.a), &coefficients(&data.b));
        for (pi, ci) in p.iter_mut().zip(coefficients(&data.c)) {
            *pi -= ci;
        }
        p.push(Scalar::ZERO); // length 2n
        let (low, high) = p.split_at(n);
        assert!(low.iter().zip(high).all(|(l, h)| *l + h == Scalar::ZERO), "Z divides A·B − C at 2^{log_n}");
        assert_eq!(h, high.to_vec(), "h = (A·B − C) / Z at 2^{log_n}");
        assert_eq!(h[n - 1], Scalar::ZERO, "deg h <= n − 2");
    }
}

#[test]
fn h_matches_the_quotient_on_the_coset_for_any_witness() {
    let mut rng = seeded_rng("h_matches_the_quotient_on_the_coset_for_any_witness");
    for log_n in 4..=8u32 {
        let n = 1usize << log_n;
        let data = job_data(&mut rng, n, &[], false);
        let h = h_coefficients(&data.a, &data.b, &data.c).unwrap();
        let (ca, cb, cc) = (coefficients(&data.a), coefficients(&data.b), coefficients(&data.c));
        // h is defined by its values on the coset g·H: check two of them directly.
        let w = zkgpu::ntt::cpu::root_of_unity(log_n);
        for k in [0u64, 3] {
            let x = coset_generator() * w.pow_vartime([k]);
            let z = x.pow_vartime([n as u64]) - Scalar::ONE;
            let expected = (eval(&ca, x) * eval(&cb, x) - eval(&cc, x)) * z.invert().unwrap();
            assert_eq!(eval(&h, x), expected, "h at g·w^{k}, 2^{log_n}");
        }
    }
    // Lengths are checked.
    let v = vec![Scalar::ONE; 16];
    assert!(matches!(h_coefficients(&v, &v[..8], &v), Err(Error::LengthMismatch { .. })));
    assert!(matches!(h_coefficients(&v[..12], &v[..12], &v[..12]), Err(Error::NttSize { n: 12 })));
}

#[test]
fn reference_job_equals_the_obvious_sums() {
    let mut rng = seeded_rng("reference_job_equals_the_obvious_sums");
    let n = 32;
    let lens = [70usize, 9];
    let data = job_data(&mut rng, n, &lens, false);
    let h_bases: Vec<G1Affine> = distinct_points::<G1>(&mut rng, n);
    let q1: Vec<Vec<G1Affine>> = (0..3).map(|_| distinct_points::<G1>(&mut rng, lens[0])).collect();
    let q2: Vec<G2Affine> = distinct_points::<G2>(&mut rng, lens[1]);
    let g1_refs: Vec<&[G1Affine]> = q1.iter().map(Vec::as_slice).collect();
    let g2_refs: Vec<&[G2Affine]> = vec![&q2];
    let queries = [
        AssignmentQueries { len: lens[0], g1: &g1_refs, g2: &[] },
        AssignmentQueries { len: lens[1], g1: &[], g2: &g2_refs },
    ];
    let job = data.job();
    let (results, h) = partition_cpu(&h_bases, &queries, &job).unwrap();

    assert_eq!(h, h_coefficients(&data.a, &data.b, &data.c).unwrap());
    assert_eq!(results.h, msm_naive::<G1>(&h_bases, &h).unwrap());
    for (q, got) in q1.iter().zip(&results.assignments[0].g1) {
        assert_eq!(*got, msm_naive::<G1>(q, &data.assignments[0].values).unwrap());
    }
    assert!(results.assignments[0].g2.is_empty() && results.assignments[1].g1.is_empty());
    assert_eq!(results.assignments[1].g2[0], msm_naive::<G2>(&q2, &data.assignments[1].values).unwrap());

    // Shape errors, as on the GPU.
    let mut bad = data.job();
    bad.b = &data.a[..16];
    assert!(matches!(partition_cpu(&h_bases, &queries, &bad), Err(Error::LengthMismatch { what: "partition b", .. })));
    assert!(matches!(partition_cpu(&h_bases, &queries[..1], &data.job()), Err(Error::LengthMismatch { .. })));
    let short_query = [AssignmentQueries { len: lens[0], g1: &[&q1[0][..69]], g2: &[] }, queries[1]];
    assert!(matches!(partition_cpu(&h_bases, &short_query, &data.job()), Err(Error::LengthMismatch { .. })));
    // A tail position past the assignment.
    let (tail, index) = ([Scalar::from(3u64), Scalar::from(5u64)], [0u32, lens[1] as u32]);
    let mut bad = data.job();
    bad.assignments[1].tail = &tail;
    bad.assignments[1].tail_index = &index;
    assert!(matches!(partition_cpu(&h_bases, &queries, &bad), Err(Error::IndexOutOfRange { count: 1, .. })));
}
