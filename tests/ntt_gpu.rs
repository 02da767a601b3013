//! NTT on the GPU against the CPU reference (`zkgpu::ntt::cpu`): every configuration (direction, coset, four
//! orderings) at every size 2^0..2^20, batches, round trips, host-slice API (pageable and pinned), the Groth16
//! quotient sequence (whole and as its building blocks), typed errors with buffers left unchanged, the NN / RR
//! scratch buffer's life, a device-memory budget (the in-place fallback when the scratch does not fit), and 16
//! outputs of 2^24 and 2^27 transforms checked against the direct sum. Run with `cargo xtask test --gpu`;
//! without a GPU these tests fail.
mod common;

use blstrs::Scalar;
use ff::Field;
use rand_core::RngCore;
use zkgpu::ntt::cpu as ntt_cpu;
use zkgpu::ntt::{Direction, NttConfig, Order};
use zkgpu::{Error, Ntt, PinnedMode};

fn random_scalars(rng: &mut impl RngCore, n: usize) -> Vec<Scalar> {
    (0..n).map(|_| Scalar::random(&mut *rng)).collect()
}

/// Random values without the per-element cost of `Scalar::random` (for 2^24+): x_i = s * t^i.
fn geometric_scalars(rng: &mut impl RngCore, n: usize) -> Vec<Scalar> {
    let (s, t) = (Scalar::random(&mut *rng), Scalar::random(&mut *rng));
    let mut out = Vec::with_capacity(n);
    let mut x = s;
    for _ in 0..n {
        out.push(x);
        x *= t;
    }
    out
}

fn ntt_on_gpu(ntt: &Ntt, input: &[Scalar], n: usize, cfg: NttConfig) -> Vec<Scalar> {
    let gpu = ntt.gpu();
    let mut buf = gpu.upload(input).unwrap();
    ntt.run(&mut buf, n, cfg).unwrap_or_else(|e| panic!("{cfg} n={n}: {e}"));
    gpu.download(&buf).unwrap()
}

fn first_mismatch(got: &[Scalar], expected: &[Scalar]) -> Option<usize> {
    got.iter().zip(expected).position(|(a, b)| a != b)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_configuration_every_size_up_to_2_20() {
    let gpu = common::gpu::gpu();
    let ntt = Ntt::new(&gpu).unwrap();
    let mut rng = common::seeded_rng("every_configuration_every_size_up_to_2_20");
    // Largest first: the cached twiddle table is then larger than most transforms (strided use).
    for log_n in (0..=common::max_log_n(20)).rev() {
        let n = 1usize << log_n;
        let input = random_scalars(&mut rng, n);
        for cfg in NttConfig::all() {
            let mut expected = input.clone();
            ntt_cpu::ntt(&mut expected, cfg).unwrap();
            let got = ntt_on_gpu(&ntt, &input, n, cfg);
            if let Some(i) = first_mismatch(&got, &expected) {
                panic!("{cfg} 2^{log_n}: first wrong output at {i}");
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn fresh_tables_in_ascending_sizes() {
    // A new Ntt per size class: tables built for exactly that size, then grown.
    let gpu = common::gpu::gpu();
    let ntt = Ntt::new(&gpu).unwrap();
    let mut rng = common::seeded_rng("fresh_tables_in_ascending_sizes");
    for log_n in [1u32, 2, 9, 10, 11, 17, 21] {
        let n = 1usize << log_n;
        let input = random_scalars(&mut rng, n);
        for cfg in [NttConfig::forward(), NttConfig::inverse().coset().orders(Order::BitReversed, Order::Natural)] {
            let mut expected = input.clone();
            ntt_cpu::ntt(&mut expected, cfg).unwrap();
            assert!(ntt_on_gpu(&ntt, &input, n, cfg) == expected, "{cfg} 2^{log_n}");
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn batches() {
    let gpu = common::gpu::gpu();
    let ntt = Ntt::new(&gpu).unwrap();
    let mut rng = common::seeded_rng("batches");
    for (log_n, batch) in [(0u32, 7usize), (1, 5), (3, 1000), (4, 64), (10, 5), (11, 3), (13, 6), (16, 4)] {
        let n = 1usize << log_n;
        let input = random_scalars(&mut rng, n * batch);
        for cfg in NttConfig::all() {
            let mut expected = input.clone();
            ntt_cpu::ntt_batch(&mut expected, n, cfg).unwrap();
            let got = ntt_on_gpu(&ntt, &input, n, cfg);
            if let Some(i) = first_mismatch(&got, &expected) {
                panic!("{cfg} 2^{log_n} x{batch}: first wrong output at {i}");
            }
        }
    }
}

/// NN and RR of `input` (transforms of size n) on the GPU against the reference.
fn check_nn_and_rr(ntt: &Ntt, input: &[Scalar], n: usize, what: &str) {
    for cfg in [
        NttConfig::forward().orders(Order::Natural, Order::Natural),
        NttConfig::inverse().coset().orders(Order::BitReversed, Order::BitReversed),
    ] {
        let mut expected = input.to_vec();
        ntt_cpu::ntt_batch(&mut expected, n, cfg).unwrap();
        if let Some(i) = first_mismatch(&ntt_on_gpu(ntt, input, n, cfg), &expected) {
            panic!("{what}: {cfg} n={n}: first wrong output at {i}");
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn scratch_is_grown_reused_and_released() {
    let gpu = common::gpu::gpu();
    let ntt = Ntt::new(&gpu).unwrap();
    let mut rng = common::seeded_rng("scratch_is_grown_reused_and_released");
    let n = 1usize << 14;
    // One pass (2^10) reverses in place: no scratch.
    check_nn_and_rr(&ntt, &random_scalars(&mut rng, 1 << 10), 1 << 10, "one pass");
    assert_eq!(ntt.scratch_len(), 0);
    check_nn_and_rr(&ntt, &random_scalars(&mut rng, n), n, "first");
    assert_eq!(ntt.scratch_len(), n);
    check_nn_and_rr(&ntt, &random_scalars(&mut rng, 3 * n), n, "grown to a batch of 3");
    assert_eq!(ntt.scratch_len(), 3 * n);
    check_nn_and_rr(&ntt, &random_scalars(&mut rng, n), n, "smaller, reused");
    assert_eq!(ntt.scratch_len(), 3 * n);
    ntt.release_scratch();
    assert_eq!(ntt.scratch_len(), 0);
    check_nn_and_rr(&ntt, &random_scalars(&mut rng, n), n, "after the release");
    assert_eq!(ntt.scratch_len(), n);
}

/// Within a budget ([`Ntt::with_budget`]): with room for the tables and not for the scratch buffer, NN and RR
/// (one transform and a batch of 3) permute in place instead and equal the reference, the NTT holding at most
/// the budget; the host-slice API counts its device copy too (refused while that does not fit, run in place
/// beside it when it does); a budget below the tables is `DeviceBudget` with the buffer unchanged.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_budget_bounds_tables_and_scratch() {
    let gpu = common::gpu::gpu();
    let mut rng = common::seeded_rng("a_budget_bounds_tables_and_scratch");
    let n = 1usize << 16;
    let nn = NttConfig::forward().orders(Order::Natural, Order::Natural);
    let rr = NttConfig::inverse().coset().orders(Order::BitReversed, Order::BitReversed);
    let unbounded = Ntt::new(&gpu).unwrap();
    for cfg in [nn, rr] {
        unbounded.prepare(n, cfg).unwrap();
    }
    let scratch = unbounded.scratch_len() * size_of::<Scalar>();
    assert_eq!(scratch, n * size_of::<Scalar>());
    let tables = unbounded.device_bytes() - scratch;

    // Room for the tables and their upload staging (a few KiB), not for a scratch of 2^16 elements.
    let budget = tables + scratch / 2;
    let bounded = Ntt::with_budget(&gpu, budget).unwrap();
    assert_eq!(bounded.budget(), Some(budget));
    check_nn_and_rr(&bounded, &random_scalars(&mut rng, n), n, "within a budget");
    check_nn_and_rr(&bounded, &random_scalars(&mut rng, 3 * n), n, "a batch of 3 within a budget");
    assert_eq!(bounded.scratch_len(), 0, "the scratch does not fit the budget");
    assert!(bounded.device_bytes() <= budget, "{} bytes over {budget}", bounded.device_bytes());

    // The host-slice API's device copy (2^16 elements) does not fit beside the tables either.
    let input = random_scalars(&mut rng, n);
    let mut host = input.clone();
    match bounded.run_host(&mut host, n, nn) {
        Err(Error::DeviceBudget { budget: b, needed, .. }) => assert!(b == budget && needed > budget, "{needed}"),
        other => panic!("run_host over the budget gave {other:?}"),
    }
    assert_eq!(host, input, "a refused call changed the data");
    // With room for the copy and not for a scratch beside it: in place.
    let roomier = Ntt::with_budget(&gpu, tables + scratch + scratch / 2).unwrap();
    for cfg in [nn, rr] {
        roomier.prepare(n, cfg).unwrap(); // every table, and a scratch, which fits beside them alone
    }
    assert_eq!(roomier.device_bytes(), tables + scratch);
    roomier.release_scratch();
    let mut expected = input.clone();
    ntt_cpu::ntt(&mut expected, nn).unwrap();
    roomier.run_host(&mut host, n, nn).unwrap();
    assert_eq!(first_mismatch(&host, &expected), None, "run_host within a budget");
    assert_eq!(roomier.scratch_len(), 0);

    // Below the tables: refused, the buffer unchanged.
    let tiny = Ntt::with_budget(&gpu, tables / 4).unwrap();
    let mut buf = gpu.upload(&input).unwrap();
    match tiny.run(&mut buf, n, nn) {
        Err(Error::DeviceBudget { budget: b, needed, .. }) => assert!(b == tables / 4 && needed > b, "{needed}"),
        other => panic!("a budget below the tables gave {other:?}"),
    }
    assert_eq!(gpu.download(&buf).unwrap(), input, "a refused transform changed the buffer");
    assert_eq!(tiny.device_bytes(), 0);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn round_trips_at_2_22() {
    let gpu = common::gpu::gpu();
    let ntt = Ntt::new(&gpu).unwrap();
    let mut rng = common::seeded_rng("round_trips_at_2_22");
    let n = 1 << 22;
    let input = geometric_scalars(&mut rng, n);
    for coset in [false, true] {
        for (fwd_orders, inv_orders) in [
            ((Order::Natural, Order::BitReversed), (Order::BitReversed, Order::Natural)),
            ((Order::Natural, Order::Natural), (Order::Natural, Order::Natural)),
            ((Order::BitReversed, Order::BitReversed), (Order::BitReversed, Order::BitReversed)),
        ] {
            let fwd = NttConfig { direction: Direction::Forward, coset, input: fwd_orders.0, output: fwd_orders.1 };
            let inv = NttConfig { direction: Direction::Inverse, coset, input: inv_orders.0, output: inv_orders.1 };
            let mut buf = gpu.upload(&input).unwrap();
            ntt.run(&mut buf, n, fwd).unwrap();
            let mid = gpu.download(&buf).unwrap();
            assert_ne!(mid[..16], input[..16], "{fwd} changed nothing");
            ntt.run(&mut buf, n, inv).unwrap();
            let back = gpu.download(&buf).unwrap();
            assert!(back == input, "{fwd} then {inv} is not the identity");
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn host_slices_pageable_and_pinned() {
    let gpu = common::gpu::gpu();
    let ntt = Ntt::new(&gpu).unwrap();
    let mut rng = common::seeded_rng("host_slices_pageable_and_pinned");
    let n = 1 << 14;
    let input = random_scalars(&mut rng, 2 * n);
    let cfg = NttConfig::forward().coset().orders(Order::Natural, Order::BitReversed);
    let mut expected = input.clone();
    ntt_cpu::ntt_batch(&mut expected, n, cfg).unwrap();

    let mut pageable = input.clone();
    ntt.run_host(&mut pageable, n, cfg).unwrap();
    assert!(pageable == expected);

    let mut pinned = gpu.pin_slice(&input, PinnedMode::ReadBack).unwrap();
    ntt.run_host(&mut pinned, n, cfg).unwrap();
    assert!(pinned[..] == expected[..]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn bad_shapes_are_typed_errors_and_leave_buffers_unchanged() {
    let gpu = common::gpu::gpu();
    let ntt = Ntt::new(&gpu).unwrap();
    let mut rng = common::seeded_rng("bad_shapes_are_typed_errors_and_leave_buffers_unchanged");
    let input = random_scalars(&mut rng, 24);
    let mut buf = gpu.upload(&input).unwrap();
    assert!(matches!(ntt.run(&mut buf, 24, NttConfig::forward()), Err(Error::NttSize { n: 24 })));
    assert!(matches!(ntt.run(&mut buf, 0, NttConfig::forward()), Err(Error::NttSize { n: 0 })));
    assert!(matches!(ntt.run(&mut buf, 16, NttConfig::forward()), Err(Error::NttBatchShape { len: 24, n: 16 })));
    assert!(matches!(ntt.run(&mut buf, 32, NttConfig::inverse()), Err(Error::NttBatchShape { len: 24, n: 32 })));
    assert!(matches!(ntt.run(&mut buf, 1usize << 40, NttConfig::forward()), Err(Error::NttTooLarge { log_n: 40, .. })));
    assert_eq!(gpu.download(&buf).unwrap(), input);

    let mut host = input.clone();
    assert!(matches!(ntt.run_host(&mut host, 5, NttConfig::forward()), Err(Error::NttSize { n: 5 })));
    assert!(matches!(ntt.run_host(&mut host[..20], 8, NttConfig::forward()), Err(Error::NttBatchShape { .. })));
    assert_eq!(host, input);

    let mut empty = gpu.alloc_zeroed::<Scalar>(0).unwrap();
    assert!(matches!(ntt.run(&mut empty, 1, NttConfig::forward()), Err(Error::NttBatchShape { len: 0, n: 1 })));

    // Groth16 inputs of unequal lengths.
    let mut a = gpu.upload(&input[..16]).unwrap();
    let mut b = gpu.upload(&input[..16]).unwrap();
    let mut c = gpu.upload(&input[..8]).unwrap();
    assert!(matches!(ntt.groth16_h(&mut a, &mut b, &mut c), Err(Error::NttBatchShape { len: 8, n: 16 })));
    assert!(matches!(ntt.groth16_h_combine(&mut a, &b, &c), Err(Error::NttBatchShape { len: 8, n: 16 })));
    assert!(matches!(ntt.groth16_h_combine(&mut a, &c, &b), Err(Error::NttBatchShape { len: 8, n: 16 })));
    assert!(matches!(ntt.groth16_h_multiply(&mut a, &c), Err(Error::NttBatchShape { len: 8, n: 16 })));
    assert!(matches!(ntt.groth16_h_finish(&mut a, &c), Err(Error::NttBatchShape { len: 8, n: 16 })));
    assert!(matches!(ntt.groth16_h_subtract(&mut a, &c), Err(Error::NttBatchShape { len: 8, n: 16 })));
    assert_eq!(gpu.download(&a).unwrap(), input[..16].to_vec());
    assert_eq!(gpu.download(&b).unwrap(), input[..16].to_vec());
    // Groth16 inputs whose length is not a power of two (the building blocks check it too).
    let (mut a, mut b, mut c) = (gpu.upload(&input).unwrap(), gpu.upload(&input).unwrap(), gpu.upload(&input).unwrap());
    assert!(matches!(ntt.groth16_h(&mut a, &mut b, &mut c), Err(Error::NttSize { n: 24 })));
    assert!(matches!(ntt.groth16_h_prepare(&mut a), Err(Error::NttSize { n: 24 })));
    assert!(matches!(ntt.groth16_h_prepare_c(&mut c), Err(Error::NttSize { n: 24 })));
    assert!(matches!(ntt.groth16_h_combine(&mut a, &b, &c), Err(Error::NttSize { n: 24 })));
    assert!(matches!(ntt.groth16_h_multiply(&mut a, &b), Err(Error::NttSize { n: 24 })));
    assert!(matches!(ntt.groth16_h_finish(&mut a, &c), Err(Error::NttSize { n: 24 })));
    assert!(matches!(ntt.groth16_h_interpolate(&mut a), Err(Error::NttSize { n: 24 })));
    assert!(matches!(ntt.groth16_h_subtract(&mut a, &c), Err(Error::NttSize { n: 24 })));
    assert!(matches!(ntt.groth16_h_prepare(&mut empty), Err(Error::NttSize { n: 0 })));
    assert!(matches!(ntt.groth16_h_interpolate(&mut empty), Err(Error::NttSize { n: 0 })));
    assert!(matches!(ntt.groth16_h_prepare_c(&mut empty), Err(Error::NttSize { n: 0 })));
    for v in [&a, &b, &c] {
        assert_eq!(gpu.download(v).unwrap(), input);
    }
}

/// The CPU reference of `Ntt::groth16_h`, by the textbook recipe (7 transforms: C's coset round trip
/// included): (h's coefficients, the coset evaluations of a and b, c's coefficients in bit-reversed order).
fn groth16_h_reference(a: &[Scalar], b: &[Scalar], c: &[Scalar]) -> (Vec<Scalar>, [Vec<Scalar>; 3]) {
    // Coefficients, coset evaluations, (A B - C) / Z, coset interpolation.
    let coset_evals = |v: &[Scalar]| {
        let mut v = v.to_vec();
        ntt_cpu::ntt(&mut v, NttConfig::inverse()).unwrap();
        ntt_cpu::ntt(&mut v, NttConfig::forward().coset()).unwrap();
        v
    };
    let n = a.len();
    let (ea, eb, ec) = (coset_evals(a), coset_evals(b), coset_evals(c));
    let z_inv = (ntt_cpu::coset_generator().pow_vartime([n as u64]) - Scalar::ONE).invert().unwrap();
    let mut h: Vec<Scalar> = (0..n).map(|i| (ea[i] * eb[i] - ec[i]) * z_inv).collect();
    ntt_cpu::ntt(&mut h, NttConfig::inverse().coset()).unwrap();
    let mut c_coefficients = c.to_vec();
    ntt_cpu::ntt(&mut c_coefficients, NttConfig::inverse().orders(Order::Natural, Order::BitReversed)).unwrap();
    (h, [ea, eb, c_coefficients])
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn groth16_h_matches_the_reference() {
    let gpu = common::gpu::gpu();
    let ntt = Ntt::new(&gpu).unwrap();
    let mut rng = common::seeded_rng("groth16_h_matches_the_reference");
    for log_n in [0u32, 1, 4, 10, 15, 20] {
        let n = 1usize << log_n;
        let (a, b, c) = (random_scalars(&mut rng, n), random_scalars(&mut rng, n), random_scalars(&mut rng, n));
        let (expected, [_, eb, ec]) = groth16_h_reference(&a, &b, &c);

        let (mut da, mut db, mut dc) = (gpu.upload(&a).unwrap(), gpu.upload(&b).unwrap(), gpu.upload(&c).unwrap());
        ntt.groth16_h(&mut da, &mut db, &mut dc).unwrap();
        assert!(gpu.download(&da).unwrap() == expected, "h at 2^{log_n}");
        assert!(gpu.download(&db).unwrap() == eb, "coset evaluations of b at 2^{log_n}");
        assert!(gpu.download(&dc).unwrap() == ec, "coefficients of c at 2^{log_n}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn groth16_h_building_blocks_compose_to_groth16_h() {
    let gpu = common::gpu::gpu();
    // Two engines, so that the building blocks build their own tables (none left by groth16_h).
    let (blocks, whole) = (Ntt::new(&gpu).unwrap(), Ntt::new(&gpu).unwrap());
    let mut rng = common::seeded_rng("groth16_h_building_blocks_compose_to_groth16_h");
    // Ascending sizes: the twiddle table is rebuilt larger along the way.
    for log_n in [0u32, 1, 4, 10, 15, 20] {
        let n = 1usize << log_n;
        let (a, b, c) = (random_scalars(&mut rng, n), random_scalars(&mut rng, n), random_scalars(&mut rng, n));
        let (expected, coset) = groth16_h_reference(&a, &b, &c);

        // The three prepares (c first, unlike groth16_h: the vectors are independent), then combine.
        let (mut da, mut db, mut dc) = (gpu.upload(&a).unwrap(), gpu.upload(&b).unwrap(), gpu.upload(&c).unwrap());
        blocks.groth16_h_prepare_c(&mut dc).unwrap();
        for v in [&mut da, &mut db] {
            blocks.groth16_h_prepare(v).unwrap();
        }
        for (v, e, name) in [
            (&da, &coset[0], "coset evaluations of a"),
            (&db, &coset[1], "coset evaluations of b"),
            (&dc, &coset[2], "coefficients of c"),
        ] {
            assert!(gpu.download(v).unwrap() == *e, "prepare: {name} at 2^{log_n}");
        }
        blocks.groth16_h_combine(&mut da, &db, &dc).unwrap();
        let h = gpu.download(&da).unwrap();
        assert!(h == expected, "prepare + combine: h at 2^{log_n}");
        assert!(
            gpu.download(&db).unwrap() == coset[1] && gpu.download(&dc).unwrap() == coset[2],
            "combine only reads b and c"
        );

        // Two buffers, as the engine's two-vector slots run it: B's transforms, A's and B multiplied into A,
        // A interpolated, then C in B's buffer and subtracted (finish in its two parts).
        let (mut two_a, mut two_bc) = (gpu.upload(&a).unwrap(), gpu.upload(&b).unwrap());
        blocks.groth16_h_prepare(&mut two_bc).unwrap();
        blocks.groth16_h_prepare(&mut two_a).unwrap();
        blocks.groth16_h_multiply(&mut two_a, &two_bc).unwrap();
        assert!(gpu.download(&two_bc).unwrap() == coset[1], "multiply only reads b at 2^{log_n}");
        blocks.groth16_h_interpolate(&mut two_a).unwrap();
        gpu.upload_into(&c, &mut two_bc).unwrap();
        blocks.groth16_h_prepare_c(&mut two_bc).unwrap();
        blocks.groth16_h_subtract(&mut two_a, &two_bc).unwrap();
        assert!(gpu.download(&two_a).unwrap() == h, "two buffers: h at 2^{log_n}");
        assert!(gpu.download(&two_bc).unwrap() == coset[2], "the subtraction only reads c at 2^{log_n}");

        // The same as groth16_h, buffer for buffer.
        let (mut wa, mut wb, mut wc) = (gpu.upload(&a).unwrap(), gpu.upload(&b).unwrap(), gpu.upload(&c).unwrap());
        whole.groth16_h(&mut wa, &mut wb, &mut wc).unwrap();
        assert!(gpu.download(&wa).unwrap() == h, "groth16_h and its building blocks at 2^{log_n}");
        assert!(gpu.download(&wb).unwrap() == coset[1] && gpu.download(&wc).unwrap() == coset[2], "b, c at 2^{log_n}");
    }
}

/// 16 outputs of a large transform against the direct sum (O(n) each, in parallel threads).
fn spot_check(log_n: u32, cfgs: &[NttConfig]) {
    let gpu = common::gpu::gpu();
    let ntt = Ntt::new(&gpu).unwrap();
    let mut rng = common::seeded_rng(&format!("spot_check_2_{log_n}"));
    let n = 1usize << log_n;
    let input = geometric_scalars(&mut rng, n);
    for &cfg in cfgs {
        let got = ntt_on_gpu(&ntt, &input, n, cfg);
        let mut ks: Vec<usize> = vec![0, 1, n / 2, n - 1];
        ks.extend((0..12).map(|_| (rng.next_u64() as usize) & (n - 1)));
        let expected: Vec<Scalar> = std::thread::scope(|s| {
            let handles: Vec<_> = ks
                .iter()
                .map(|&k| {
                    let input = &input;
                    s.spawn(move || ntt_cpu::output_at(input, cfg, k).unwrap())
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (&k, e) in ks.iter().zip(&expected) {
            let pos = if cfg.output == Order::BitReversed { ntt_cpu::bit_reverse_index(k, log_n) } else { k };
            assert_eq!(got[pos], *e, "{cfg} 2^{log_n}: output {k}");
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn spot_check_2_24() {
    spot_check(
        24,
        &[
            NttConfig::forward().orders(Order::Natural, Order::BitReversed),
            NttConfig::forward().coset(),
            NttConfig::inverse().orders(Order::BitReversed, Order::Natural),
        ],
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn spot_check_2_27() {
    spot_check(27, &[NttConfig::forward().orders(Order::Natural, Order::BitReversed)]);
}

/// `s * t^i` for i in `start..start + len`, generated in parallel chunks (for 2^30 elements).
fn geometric_range(s: Scalar, t: Scalar, start: usize, len: usize) -> Vec<Scalar> {
    let mut out = vec![Scalar::ZERO; len];
    let threads = std::thread::available_parallelism().map_or(4, |p| p.get());
    let chunk = len.div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        for (c, part) in out.chunks_mut(chunk).enumerate() {
            scope.spawn(move || {
                let mut x = s * t.pow_vartime([(start + c * chunk) as u64]);
                for v in part {
                    *v = x;
                    x *= t;
                }
            });
        }
    });
    out
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn round_trip_2_30_or_out_of_memory() {
    // 2^30 elements are 32 GiB; with the twiddle table (16 GiB) the round trip needs ~48 GiB of device memory.
    // Where the device has less, the typed error must come back with the buffer unchanged.
    let gpu = common::gpu::gpu();
    let ntt = Ntt::new(&gpu).unwrap();
    let mut rng = common::seeded_rng("round_trip_2_30_or_out_of_memory");
    let (s, t) = (Scalar::random(&mut rng), Scalar::random(&mut rng));
    let n = 1usize << 30;
    let mut buf = match gpu.upload(&geometric_range(s, t, 0, n)) {
        Ok(buf) => buf,
        Err(Error::OutOfMemory { .. }) => {
            println!("2^30 does not fit this device ({} bytes): OutOfMemory, as it should", gpu.info().total_memory);
            return;
        }
        Err(e) => panic!("upload: {e}"),
    };
    let fwd = NttConfig::forward().orders(Order::Natural, Order::BitReversed);
    let inv = NttConfig::inverse().orders(Order::BitReversed, Order::Natural);
    for cfg in [fwd, inv] {
        match ntt.run(&mut buf, n, cfg) {
            Ok(()) => {}
            Err(Error::OutOfMemory { .. }) => {
                // The table allocation failed before any kernel ran: the data must be as it was.
                let now = gpu.download(&buf).unwrap();
                let expected = if cfg == fwd { geometric_range(s, t, 0, 1 << 20) } else { Vec::new() };
                if cfg == fwd {
                    assert!(now[..1 << 20] == expected[..], "{cfg}: OutOfMemory but the buffer changed");
                }
                println!("{cfg} at 2^30: OutOfMemory (device has {} bytes)", gpu.info().total_memory);
                return;
            }
            Err(e) => panic!("{cfg} at 2^30: {e}"),
        }
    }
    let back = gpu.download(&buf).unwrap();
    drop(buf);
    for start in (0..n).step_by(1 << 26) {
        let expected = geometric_range(s, t, start, 1 << 26);
        if let Some(i) = first_mismatch(&back[start..start + (1 << 26)], &expected) {
            panic!("2^30 round trip differs at {}", start + i);
        }
    }
}
