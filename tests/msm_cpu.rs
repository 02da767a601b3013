//! MSM on the CPU: the kernels' algorithm replayed on the host (`zkgpu_kernels::msm::model` through
//! `zkgpu::msm::cpu::msm_model`: the same digit recoding, bucket sort, segmented accumulation, split fixup,
//! reduction and window combination the GPU runs) against blstrs, over the edge cases, several window
//! sizes, tiny segments and chunks (so bucket runs cross segment and chunk boundaries), and precomputed
//! copies. Also the digit recoding itself, the radix sort's passes with the GPU's geometry
//! (`zkgpu_kernels::msm_sort::model`) against a stable sort, and the plan's typed errors.
mod common;

use blstrs::Scalar;
use common::curve_props::CurveUnderTest;
use common::msm_cases::{edge_cases, random_scalars, window_pattern};
use common::points::distinct_points;
use common::seeded_rng;
use ff::{Field, PrimeField};
use group::Curve as _;
use rand_core::RngCore;
use zkgpu::Error;
use zkgpu::curve::{Curve, G1, G2};
use zkgpu::msm::cpu::{msm_cpu, msm_model, msm_naive};
use zkgpu::msm::{Accumulation, MsmConfig, MsmPlan, Sort, choose_window_bits};
use zkgpu_kernels::field::Fr;
use zkgpu_kernels::msm::{
    MAX_WINDOW_BITS, WindowWidths, digit_of_word, digit_word, for_each_digit, rank_overflow, window_count,
};

fn plan(n: usize, c: Option<u32>, chunk: Option<usize>, copies: u32) -> MsmPlan {
    MsmPlan::new(n, &MsmConfig { window_bits: c, chunk, precompute: copies, ..Default::default() }, false).unwrap()
}

/// `p` with affine accumulation over `rounds` rounds.
fn affine(p: MsmPlan, rounds: u32) -> MsmPlan {
    MsmPlan { affine_rounds: rounds, affine_windows: 1, ..p }
}

/// The model under `plan` (and with `seg` forced when given) equals blstrs.
fn check_model<C: Curve>(bases: &[C::Affine], scalars: &[Scalar], mut p: MsmPlan, seg: Option<u32>, what: &str) {
    if let Some(seg) = seg {
        p.seg = seg;
    }
    let expected = msm_cpu::<C>(bases, scalars).unwrap();
    let got = msm_model::<C>(bases, scalars, &p).unwrap();
    assert_eq!(got, expected, "{what}: n = {}, plan {p:?}", scalars.len());
}

fn edge_cases_on<C: CurveUnderTest>(name: &str) {
    let mut rng = seeded_rng(name);
    for case in edge_cases::<C>(&mut rng) {
        let n = case.scalars.len();
        // The automatic plan, a small window with tiny segments, a chunked run with two precomputed copies.
        check_model::<C>(&case.bases, &case.scalars, plan(n, None, None, 1), None, &case.name);
        check_model::<C>(&case.bases, &case.scalars, plan(n, Some(5), None, 1), Some(3), &case.name);
        check_model::<C>(&case.bases, &case.scalars, plan(n, Some(7), Some(13), 2), Some(2), &case.name);
        // Affine accumulation: one round then XYZZ, and every round affine over long runs (small windows).
        check_model::<C>(&case.bases, &case.scalars, affine(plan(n, Some(5), None, 1), 1), Some(8), &case.name);
        check_model::<C>(&case.bases, &case.scalars, affine(plan(n, Some(3), Some(29), 2), 32), Some(16), &case.name);
    }
}

curve_tests! {
    fn model_matches_blstrs_on_edge_cases = edge_cases_on { g1: G1(), g2: G2() }
}

/// Every window size 1..=24 (c = 1: one bucket per window; c = 24: 2^23 buckets, mostly empty), segments of 1
/// (every entry its own run), chunks and precomputation up to one copy per window.
#[test]
fn model_window_sizes_segments_chunks_and_copies() {
    let mut rng = seeded_rng("model_window_sizes_segments_chunks_and_copies");
    let n = 40;
    let bases = distinct_points::<G1>(&mut rng, n);
    let scalars = random_scalars(&mut rng, n);
    for c in [1, 2, 3, 4, 9, 13, 16] {
        check_model::<G1>(&bases, &scalars, plan(n, Some(c), None, 1), Some(1), &format!("c = {c}, seg 1"));
    }
    check_model::<G1>(&bases, &scalars, plan(n, Some(18), None, 1), None, "c = 18");
    for chunk in [1, 7, 39] {
        check_model::<G1>(&bases, &scalars, plan(n, Some(6), Some(chunk), 1), Some(4), &format!("chunk {chunk}"));
    }
    for copies in [2, 3, 11, window_count(11)] {
        let p = plan(n, Some(11), Some(16), copies);
        check_model::<G1>(&bases, &scalars, p, Some(5), &format!("{copies} copies"));
    }
}

/// Random sizes and plans, XYZZ or affine accumulation (a small proptest-style sweep with printed seeds).
#[test]
fn model_random_sizes_and_plans() {
    let mut rng = seeded_rng("model_random_sizes_and_plans");
    for _ in 0..12 {
        let n = (rng.next_u32() % 600) as usize;
        let c = 1 + rng.next_u32() % 14;
        let seg = 1 + rng.next_u32() % 64;
        let chunk = 1 + (rng.next_u32() as usize % (n + 1));
        let copies = 1 + rng.next_u32() % window_count(c).min(4);
        let rounds = rng.next_u32() % 9;
        let bases = distinct_points::<G1>(&mut rng, n);
        let scalars = random_scalars(&mut rng, n);
        let p = affine(plan(n, Some(c), Some(chunk), copies), rounds);
        check_model::<G1>(&bases, &scalars, p, Some(seg), "random plan (affine rounds 0: XYZZ)");
    }
}

/// Sparse (indexed) scalars: the model with base indices equals blstrs over the gathered bases, for indices
/// in order, shuffled, repeated, the first and the last base, with tiny segments, chunks and precomputed
/// copies; an index past the bases is a typed error.
#[test]
fn model_indexed_scalars() {
    let mut rng = seeded_rng("model_indexed_scalars");
    let bases = distinct_points::<G1>(&mut rng, 50);
    for k in [0usize, 1, 2, 17, 50, 120] {
        let scalars = random_scalars(&mut rng, k);
        let mut cases: Vec<(String, Vec<u32>)> = vec![
            ("random with repeats".into(), (0..k).map(|_| rng.next_u32() % 50).collect()),
            ("extremes".into(), (0..k).map(|j| if j % 2 == 0 { 0 } else { 49 }).collect()),
        ];
        if k <= 50 {
            let mut increasing: Vec<u32> =
                (0..50).filter(|_| rng.next_u32().is_multiple_of(2)).chain(0..50).take(k).collect();
            increasing.sort_unstable();
            cases.push(("increasing".into(), increasing));
        }
        for (what, indices) in cases {
            let expected = zkgpu::msm::cpu::msm_indexed_cpu::<G1>(&bases, &scalars, &indices).unwrap();
            for (c, chunk, copies, seg) in
                [(None, None, 1, None), (Some(5), Some(7), 1, Some(3)), (Some(6), Some(16), 3, Some(2))]
            {
                let mut p = plan(k, c, chunk, copies);
                if let Some(seg) = seg {
                    p.seg = seg;
                }
                let got = zkgpu::msm::cpu::msm_model_indexed::<G1>(&bases, &scalars, &indices, &p).unwrap();
                assert_eq!(got, expected, "{what}: k = {k}, plan {p:?}");
            }
        }
    }
    let scalars = random_scalars(&mut rng, 3);
    let p = plan(3, None, None, 1);
    let r = zkgpu::msm::cpu::msm_model_indexed::<G1>(&bases, &scalars, &[0, 50, 7], &p);
    assert!(matches!(r, Err(Error::IndexOutOfRange { count: 1, limit: 50, .. })), "{r:?}");
    let r = zkgpu::msm::cpu::msm_model_indexed::<G1>(&bases, &scalars, &[0, 1], &p);
    assert!(matches!(r, Err(Error::LengthMismatch { .. })), "{r:?}");
}

/// `Σ d_w·2^start(w)` over the signed digits gives the scalar back, every digit is in `(−2^(b−1), 2^(b−1)]` for
/// its window's `b` bits and survives the count kernel's digit word, and no carry is left after the last
/// window, for every window size and the boundary patterns, with uniform windows (precomputed copies) and with
/// the narrow top windows of a plain MSM.
#[test]
fn signed_digits_recompose_the_scalar() {
    let mut rng = seeded_rng("signed_digits_recompose_the_scalar");
    for c in 1..=MAX_WINDOW_BITS {
        let windows = window_count(c);
        let mut scalars = random_scalars(&mut rng, 20);
        scalars.extend([Scalar::ZERO, Scalar::ONE, -Scalar::ONE, window_pattern(c, 1 << (c - 1))]);
        scalars.extend([window_pattern(c, (1 << c) - 1), window_pattern(c, (1 << (c - 1)) + 1)]);
        if c >= 2 {
            // The same boundaries for (c − 1)-bit windows: all ones, and the narrow windows' top digit 2^(c−2).
            scalars.extend([window_pattern(c - 1, (1 << (c - 1)) - 1), window_pattern(c - 1, 1 << (c - 2))]);
        }
        for widths in [WindowWidths { c, wide: windows }, WindowWidths::new(c, windows)] {
            let covered: u32 = (0..windows).map(|w| widths.bits(w)).sum();
            assert!(covered >= 256 && widths.start(windows - 1) + widths.bits(windows - 1) == covered, "{widths:?}");
            for &s in &scalars {
                let limbs: [u32; 8] = canonical_limbs(&s);
                let mut digits = vec![0i64; windows as usize];
                for_each_digit(&limbs, widths, windows, |w, m, neg| {
                    let half = 1 << (widths.bits(w) - 1);
                    assert!(m >= 1 && m <= half, "{widths:?}: window {w} magnitude {m}");
                    assert!(!(neg && m == half), "{widths:?}: -2^(b-1) is not a digit");
                    // The count kernel's stored form (0 means no digit) gives the digit and the rank back, the
                    // rank saturated at rank_overflow(c).
                    let overflow = rank_overflow(c);
                    for rank in [0, 1, overflow - 1, overflow, overflow + 1, u32::MAX] {
                        let word = digit_word(m, neg, rank, c);
                        let back = (m, neg, rank.min(overflow));
                        assert!(
                            word != 0 && digit_of_word(word, c) == back,
                            "c = {c}: digit word of {m}, {neg}, rank {rank}"
                        );
                    }
                    digits[w as usize] = if neg { -(m as i64) } else { m as i64 };
                });
                let mut sum = Scalar::ZERO;
                for (w, d) in digits.into_iter().enumerate() {
                    let weight = Scalar::from(2u64).pow_vartime([widths.start(w as u32) as u64]);
                    let term = Scalar::from(d.unsigned_abs());
                    sum += if d < 0 { -term * weight } else { term * weight };
                }
                assert_eq!(sum, s, "{widths:?}");
            }
        }
    }
}

/// The narrow windows: only without precomputed copies, and none for c = 1 (c = 19: 4 windows of 19 bits and 10
/// of 18; c = 16 divides 256, so nothing narrows; c = 21: all 13 windows are 20 bits).
#[test]
fn narrow_windows_only_without_copies() {
    assert_eq!(WindowWidths::new(19, 14), WindowWidths { c: 19, wide: 4 });
    assert_eq!(WindowWidths::new(20, 13), WindowWidths { c: 20, wide: 9 });
    assert_eq!(WindowWidths::new(16, 16), WindowWidths { c: 16, wide: 16 });
    assert_eq!(WindowWidths::new(1, 256), WindowWidths { c: 1, wide: 256 });
    // c = 21: 13 windows of 20 bits still cover 260 (all narrow).
    assert_eq!(WindowWidths::new(21, 13), WindowWidths { c: 21, wide: 0 });
    for c in 2..=MAX_WINDOW_BITS {
        let windows = window_count(c);
        for copies in 2..=windows {
            let q = windows.div_ceil(copies);
            assert_eq!(WindowWidths::new(c, q), WindowWidths { c, wide: windows }, "c = {c}, {copies} copies");
        }
    }
}

/// Canonical little-endian u32 limbs of a scalar.
fn canonical_limbs(s: &Scalar) -> [u32; 8] {
    let bytes = s.to_repr();
    let mut limbs = [0u32; 8];
    for (i, l) in limbs.iter_mut().enumerate() {
        *l = u32::from_le_bytes([
            bytes.as_ref()[4 * i],
            bytes.as_ref()[4 * i + 1],
            bytes.as_ref()[4 * i + 2],
            bytes.as_ref()[4 * i + 3],
        ]);
    }
    limbs
}

/// The kernels' Montgomery-to-canonical conversion agrees with blstrs.
#[test]
fn canonical_limbs_match_blstrs() {
    let mut rng = seeded_rng("canonical_limbs_match_blstrs");
    for s in random_scalars(&mut rng, 50).into_iter().chain([Scalar::ZERO, Scalar::ONE, -Scalar::ONE]) {
        // SAFETY (layout): Scalar and Fr are the same 32 bytes (tests/layout.rs).
        let fr: Fr = unsafe { std::mem::transmute_copy(&s) };
        assert_eq!(zkgpu_kernels::msm::canonical(&fr), canonical_limbs(&s));
    }
}

/// The naive reference and blstrs' multi_exp agree (the oracles check each other), and both reject lengths
/// that differ.
#[test]
fn cpu_references_agree_and_check_lengths() {
    let mut rng = seeded_rng("cpu_references_agree_and_check_lengths");
    let bases = distinct_points::<G2>(&mut rng, 20);
    let scalars = random_scalars(&mut rng, 20);
    assert_eq!(msm_naive::<G2>(&bases, &scalars).unwrap(), msm_cpu::<G2>(&bases, &scalars).unwrap());
    let g = blstrs::G2Projective::from(bases[0]);
    assert_eq!(
        msm_naive::<G2>(&bases[..1], &[Scalar::from(5u64)]).unwrap(),
        (g * Scalar::from(5u64)).to_affine().into()
    );
    for r in [msm_naive::<G2>(&bases[..3], &scalars[..2]), msm_cpu::<G2>(&bases[..3], &scalars[..2])] {
        assert!(matches!(r, Err(Error::LengthMismatch { expected: 2, actual: 3, .. })), "{r:?}");
    }
}

/// Plans: bad window bits, a zero chunk and more copies than windows are typed errors; the automatic window
/// grows with n and every automatic plan is in range.
#[test]
fn plan_choices_and_errors() {
    for config in [
        MsmConfig { window_bits: Some(0), ..Default::default() },
        MsmConfig { window_bits: Some(MAX_WINDOW_BITS + 1), ..Default::default() },
        MsmConfig { chunk: Some(0), ..Default::default() },
        MsmConfig { window_bits: Some(16), precompute: 17, ..Default::default() },
        MsmConfig { scatter_passes: Some(0), ..Default::default() },
    ] {
        let r = MsmPlan::new(1000, &config, false);
        assert!(matches!(r, Err(Error::MsmConfig(_))), "{config:?}: {r:?}");
    }
    let mut last = 0;
    for log_n in 0..=27 {
        let n = 1usize << log_n;
        let c = choose_window_bits(n, 1, 1);
        assert!(c >= last, "2^{log_n}: c = {c} after {last}");
        last = c;
        let p = MsmPlan::new(n, &MsmConfig::default(), log_n >= 20).unwrap();
        assert!(p.chunk >= 1 && p.chunk <= n && p.seg >= 1 && p.reduce_run >= 1, "{p:?}");
        assert_eq!(p.virtual_windows, p.windows);
        // One scatter pass per 64 MiB of a window's sorted entries (at most 8, at most one per bucket).
        let want = (p.chunk * 4).div_ceil(64 << 20).clamp(1, 8).min(1 << (p.window_bits - 1)) as u32;
        assert_eq!(p.scatter_passes, want, "2^{log_n}: {p:?}");
    }
    let p = MsmPlan::new(1 << 25, &MsmConfig { scatter_passes: Some(3), ..Default::default() }, false).unwrap();
    assert_eq!(p.scatter_passes, 3);
    let p = MsmPlan::new(4, &MsmConfig { window_bits: Some(2), scatter_passes: Some(5), ..Default::default() }, false)
        .unwrap();
    assert_eq!(p.scatter_passes, 2, "at most one pass per bucket");
    // Precomputation makes bucket work cheaper, so the chosen window does not shrink (while there are at least
    // as many windows as copies: 16 copies need c <= 16).
    for copies in [2, 4, 8] {
        assert!(choose_window_bits(1 << 24, copies, 1) >= choose_window_bits(1 << 24, 1, 1), "{copies} copies");
    }
}

/// Affine accumulation plans: rounds as asked (at least 1) or chosen in 1..=8, window groups within the
/// virtual windows, scratch near the 2 GiB budget per launch; and the memory bound: a 2^26 G1 MSM with
/// device-resident bases and scalars (inputs included) stays within 16 GB with either accumulation.
#[test]
fn affine_plans_and_the_16_gb_bound() {
    let affine = |rounds| MsmConfig { accumulation: Accumulation::Affine { rounds }, ..Default::default() };
    for log_n in [0, 10, 16, 20, 22, 24, 26, 27] {
        let n = 1usize << log_n;
        let xyzz = MsmPlan::new(n, &MsmConfig::default(), false).unwrap();
        assert_eq!((xyzz.affine_rounds, xyzz.affine_windows), (0, 0));
        let p = MsmPlan::new(n, &affine(None), false).unwrap();
        assert!((1..=8).contains(&p.affine_rounds), "2^{log_n}: {p:?}");
        assert!((1..=p.virtual_windows).contains(&p.affine_windows), "2^{log_n}: {p:?}");
        assert!(p.seg.is_power_of_two() && (16..=512).contains(&p.seg), "2^{log_n}: {p:?}");
        let extra = p.scratch_bytes::<G1>() as f64 - xyzz.scratch_bytes::<G1>() as f64;
        assert!(extra <= 2.2e9, "2^{log_n}: affine scratch {extra:.3e} bytes over the XYZZ plan's");
        assert_eq!(MsmPlan::new(n, &affine(Some(3)), false).unwrap().affine_rounds, 3);
        assert_eq!(MsmPlan::new(n, &affine(Some(0)), false).unwrap().affine_rounds, 1);
    }
    let n = 1usize << 26;
    let inputs = n * (size_of::<<G1 as Curve>::Affine>() + size_of::<Scalar>());
    let radix = MsmConfig { sort: Sort::Radix, ..Default::default() };
    for config in [MsmConfig::default(), affine(None), radix] {
        let total = inputs + MsmPlan::new(n, &config, false).unwrap().scratch_bytes::<G1>();
        assert!(total as f64 <= 16e9, "2^26 G1, {config:?}: {:.2} GB", total as f64 / 1e9);
    }
}

/// The radix sort's passes, replayed with the kernels' geometry (blocks, tiles, histogram layout, spine), equal
/// a stable sort by key for every pass count (c = 1: one pass of no bits; 12 | 13: one | two passes; 23 | 24:
/// two | three), keys crowded into few buckets or spread over all, and sizes around a tile and past 256 tiles
/// (several tiles per block); the grid is sized for more items than there are (as the host does after the
/// first pass drops zero digits).
#[test]
fn radix_sort_passes_match_a_stable_sort() {
    use zkgpu_kernels::msm_sort::{
        SORT_GRID, SORT_TILE, block_items, model::radix_sort, radix_bits, radix_passes, sort_grid,
    };
    let mut rng = seeded_rng("radix_sort_passes_match_a_stable_sort");
    for c in [1, 2, 8, 12, 13, 19, 20, 23, 24] {
        assert!(
            radix_bits(c) <= zkgpu_kernels::msm_sort::RADIX_BITS && radix_bits(c) * radix_passes(c) >= c - 1,
            "c = {c}"
        );
        for (len, spread) in [(0, true), (1, true), (4095, true), (4097, false), (40_000, true), (1_100_000, c == 19)] {
            let buckets = 1u32 << (c - 1);
            let keys = if spread { buckets } else { buckets.min(3) };
            let items: Vec<(u32, u32)> = (0..len).map(|i| (rng.next_u32() % keys, i)).collect();
            let mut expected = items.clone();
            expected.sort_by_key(|&(k, _)| k);
            let max_items = len + len / 3;
            assert_eq!(radix_sort(items, c, max_items), expected, "c = {c}, {len} items");
        }
    }
    for items in [0u32, 1, SORT_TILE - 1, SORT_TILE, SORT_TILE * SORT_GRID, SORT_TILE * SORT_GRID + 1, 1 << 27] {
        let (blocks, per_block) = sort_grid(items);
        assert!((1..=SORT_GRID).contains(&blocks) && per_block >= 1, "{items}: {blocks} x {per_block}");
        let mut next = 0;
        for g in 0..blocks {
            let (lo, hi) = block_items(g, per_block, items);
            assert!(lo == next && lo <= hi, "{items}: block {g} takes [{lo}, {hi}) after {next}");
            next = hi;
        }
        assert_eq!(next, items, "{items}: the blocks cover every item");
    }
}

/// Plans for bases streamed from host memory against device scalars ([`MsmPlan::within_streamed_bases`]):
/// one chunk when unbounded; otherwise the least modelled work whose scratch and bases staging fit (two
/// buffers only with several chunks, no scalar staging), with no cheaper plan of twice the chunk fitting;
/// a configured chunk is kept; nothing fitting is `OutOfMemory`.
#[test]
fn streamed_bases_plans_prefer_few_chunks() {
    use zkgpu::msm::{DeviceLimits, window_cost};
    let bytes = |p: &MsmPlan| p.scratch_bytes::<G1>() + p.staging_bytes::<G1>(true, false);
    let affine_size = size_of::<<G1 as Curve>::Affine>();
    for log_n in [0, 12, 20, 24] {
        let n = 1usize << log_n;
        let p = MsmPlan::within_streamed_bases::<G1>(n, &MsmConfig::default(), n, &DeviceLimits::UNBOUNDED).unwrap();
        assert_eq!(p.chunk, n, "2^{log_n}: one chunk");
        assert_eq!(p.staging_bytes::<G1>(true, false), n * affine_size, "2^{log_n}: one staging buffer");
        assert_eq!(p.staging_bytes::<G1>(true, true), n * (affine_size + size_of::<Scalar>()));
    }
    let n = 1usize << 24;
    let one = MsmPlan::within_streamed_bases::<G1>(n, &MsmConfig::default(), n, &DeviceLimits::UNBOUNDED).unwrap();
    let cost = |p: &MsmPlan| window_cost(n, 1, n.div_ceil(p.chunk), p.window_bits);
    for fraction in [0.9, 0.6, 0.4, 0.2] {
        let limits = DeviceLimits { memory_bytes: (bytes(&one) as f64 * fraction) as usize, ..DeviceLimits::UNBOUNDED };
        let p = MsmPlan::within_streamed_bases::<G1>(n, &MsmConfig::default(), n, &limits).unwrap();
        println!("{fraction} of one chunk's {} bytes: c = {} chunk 2^{}", bytes(&one), p.window_bits, p.chunk.ilog2());
        assert!(bytes(&p) <= limits.memory_bytes, "{fraction}: {p:?}");
        let buffers = if p.chunk < n { 2 } else { 1 };
        assert_eq!(p.staging_bytes::<G1>(true, false), buffers * p.chunk * affine_size, "double-buffered");
        for chunk in [p.chunk, 2 * p.chunk] {
            for c in 2..=22 {
                let config = MsmConfig { window_bits: Some(c), chunk: Some(chunk), ..Default::default() };
                let Ok(other) = MsmPlan::new(n, &config, true) else { continue };
                if bytes(&other) <= limits.memory_bytes {
                    assert!(cost(&other) >= cost(&p), "{fraction}: c = {c}, chunk {chunk} fits and costs less");
                }
            }
        }
    }
    let small = DeviceLimits { memory_bytes: bytes(&one) / 5, ..DeviceLimits::UNBOUNDED };
    let p = MsmPlan::within_streamed_bases::<G1>(n, &MsmConfig::default(), n, &small).unwrap();
    assert!(p.chunk < n, "a fifth of one chunk's bytes: several chunks, {p:?}");
    let chunk = MsmConfig { chunk: Some(1 << 22), ..Default::default() };
    let p = MsmPlan::within_streamed_bases::<G1>(n, &chunk, n, &DeviceLimits::UNBOUNDED).unwrap();
    assert_eq!(p.chunk, 1 << 22, "a configured chunk is kept");
    let p = MsmPlan::within_streamed_bases::<G1>(n, &MsmConfig::default(), 1 << 21, &DeviceLimits::UNBOUNDED).unwrap();
    assert_eq!(p.chunk, 1 << 21, "chunks of at most `largest`, the fewest of them");
    let tiny = DeviceLimits { memory_bytes: 1 << 20, total_bytes: 1 << 30, sm_count: 132 };
    let r = MsmPlan::within_streamed_bases::<G1>(n, &MsmConfig::default(), n, &tiny);
    assert!(matches!(r, Err(Error::OutOfMemory { requested, .. }) if requested > 1 << 20), "{r:?}");
}

/// Plans fitted to a device ([`MsmPlan::within`]): without a memory bound they are `MsmPlan::new`'s (so the
/// H200's measured choices stand); where the default plan does not fit, the chosen one does and is the least
/// modelled work among those that fit; a configured window or chunk is kept; nothing fitting is
/// `OutOfMemory` with the smallest plan's bytes; fewer SMs mean more work per thread.
#[test]
fn plans_fit_the_device() {
    use zkgpu::msm::{DeviceLimits, window_cost};
    let affine = MsmConfig { accumulation: Accumulation::Affine { rounds: None }, ..Default::default() };
    for log_n in [0, 5, 12, 16, 20, 24, 26, 27] {
        let n = 1usize << log_n;
        for (config, host) in [(MsmConfig::default(), false), (MsmConfig::default(), true), (affine, false)] {
            let new = MsmPlan::new(n, &config, host).unwrap();
            assert_eq!(MsmPlan::within::<G1>(n, &config, host, &DeviceLimits::UNBOUNDED).unwrap(), new, "2^{log_n}");
            assert_eq!(MsmPlan::within::<G2>(n, &config, host, &DeviceLimits::UNBOUNDED).unwrap(), new, "2^{log_n}");
        }
    }
    // Cards of 24 and 16 GB with the bases and scalars resident (the plan gets what they leave).
    let card = |gb: usize, n: usize| {
        let total = gb << 30;
        let inputs = n * (size_of::<<G1 as Curve>::Affine>() + size_of::<Scalar>());
        DeviceLimits { memory_bytes: total - inputs - (256 << 20), total_bytes: total, sm_count: 128 }
    };
    for (gb, log_n) in [(24, 27), (16, 26), (8, 25), (12, 26), (4, 24)] {
        let n = 1usize << log_n;
        let limits = card(gb, n);
        let default = MsmPlan::new(n, &MsmConfig::default(), false).unwrap();
        let fitted = MsmPlan::within::<G1>(n, &MsmConfig::default(), false, &limits).unwrap();
        let bytes = fitted.device_bytes::<G1>(false);
        println!(
            "{gb} GB, 2^{log_n}: default c = {} chunk 2^{} ({:.2} GB); fitted c = {} chunk 2^{} ({:.2} GB of {:.2})",
            default.window_bits,
            default.chunk.ilog2(),
            default.device_bytes::<G1>(false) as f64 / 1e9,
            fitted.window_bits,
            fitted.chunk.ilog2(),
            bytes as f64 / 1e9,
            limits.memory_bytes as f64 / 1e9
        );
        assert!(bytes <= limits.memory_bytes, "{gb} GB, 2^{log_n}: {fitted:?} takes {bytes}");
        if default.device_bytes::<G1>(false) <= limits.memory_bytes {
            assert_eq!(fitted.window_bits, default.window_bits, "{gb} GB, 2^{log_n}: the default fits");
            assert_eq!(fitted.chunk, default.chunk, "{gb} GB, 2^{log_n}: the default fits");
            continue;
        }
        // The least modelled work among the plans that fit: no other window at this chunk or twice it fits and
        // costs less.
        let cost = |p: &MsmPlan| window_cost(n, 1, n.div_ceil(p.chunk), p.window_bits);
        for chunk in [fitted.chunk, fitted.chunk * 2] {
            for c in 2..=22 {
                let config = MsmConfig { window_bits: Some(c), chunk: Some(chunk), ..Default::default() };
                // Narrow windows with a large chunk count more entries than the kernels' u32: no plan.
                let Ok(other) = MsmPlan::new(n, &config, false) else { continue };
                if other.device_bytes::<G1>(false) <= limits.memory_bytes {
                    assert!(
                        cost(&other) >= cost(&fitted),
                        "{gb} GB, 2^{log_n}: c = {c}, chunk {chunk} fits and costs less than {fitted:?}"
                    );
                }
            }
        }
    }
    // Configured choices are kept: a configured window shrinks the chunk, a configured chunk the window.
    let n = 1usize << 27;
    let limits = card(24, n);
    let c21 = MsmConfig { window_bits: Some(21), ..Default::default() };
    let p = MsmPlan::within::<G1>(n, &c21, false, &limits).unwrap();
    assert!(p.window_bits == 21 && p.chunk < 1 << 25 && p.device_bytes::<G1>(false) <= limits.memory_bytes, "{p:?}");
    let chunk = MsmConfig { chunk: Some(1 << 24), ..Default::default() };
    let default = MsmPlan::new(1 << 24, &chunk, false).unwrap();
    let limits = DeviceLimits { memory_bytes: default.device_bytes::<G1>(false) - 1, ..DeviceLimits::UNBOUNDED };
    let p = MsmPlan::within::<G1>(1 << 24, &chunk, false, &limits).unwrap();
    assert!(
        p.chunk == 1 << 24
            && p.window_bits != default.window_bits
            && p.device_bytes::<G1>(false) <= limits.memory_bytes,
        "{p:?}"
    );
    // Nothing fits: OutOfMemory, asking for the smallest plan's bytes.
    let tiny = DeviceLimits { memory_bytes: 1 << 20, total_bytes: 1 << 30, sm_count: 132 };
    for config in
        [MsmConfig::default(), c21, MsmConfig { window_bits: Some(22), chunk: Some(1 << 25), ..Default::default() }]
    {
        match MsmPlan::within::<G1>(1 << 20, &config, true, &tiny) {
            Err(Error::OutOfMemory { requested, free, total }) => {
                assert!(
                    requested > free && free == 1 << 20 && total == 1 << 30,
                    "{config:?}: {requested} {free} {total}"
                )
            }
            r => panic!("{config:?} in 1 MiB: {r:?}"),
        }
    }
    let r = MsmPlan::within::<G1>(1000, &MsmConfig { window_bits: Some(0), ..Default::default() }, false, &tiny);
    assert!(matches!(r, Err(Error::MsmConfig(_))), "configuration errors come first: {r:?}");
    // Half the SMs: twice the entries per accumulate thread and buckets per reduce thread (within the clamps).
    let half = DeviceLimits { sm_count: 66, ..DeviceLimits::UNBOUNDED };
    let (full, halved) = (
        MsmPlan::new(1 << 20, &MsmConfig::default(), false).unwrap(),
        MsmPlan::within::<G1>(1 << 20, &MsmConfig::default(), false, &half).unwrap(),
    );
    assert_eq!((halved.window_bits, halved.chunk), (full.window_bits, full.chunk));
    assert_eq!((halved.seg, halved.reduce_run), (full.seg * 2, full.reduce_run * 2), "{full:?} against {halved:?}");
    // Precomputed copies: only windows with at least as many windows as copies are chosen.
    for copies in [2, 4, 8, 16] {
        for log_n in [16, 20, 24, 27] {
            let c = choose_window_bits(1 << log_n, copies, 1);
            assert!(window_count(c) >= copies, "2^{log_n}, {copies} copies: c = {c}");
            MsmPlan::new(1 << log_n, &MsmConfig { precompute: copies, ..Default::default() }, false).unwrap();
        }
    }
}
