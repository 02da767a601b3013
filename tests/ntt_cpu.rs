//! NTT tests that run without a GPU:
//! - the CPU reference (`zkgpu::ntt::cpu`) against the O(n^2) definition, every configuration;
//! - the GPU algorithm emulated on the CPU: the exact schedule `Ntt::run` launches (`zkgpu::ntt::schedule`),
//!   each pass run tile by tile with the kernels' own index arithmetic and the kernels' Fr (host build), on the
//!   same twiddle and scale tables; compared with the reference for every configuration, sizes 2^0..2^13,
//!   batches, and twiddle tables larger than the transform;
//! - shape validation (typed errors).
mod common;

use blstrs::Scalar;
use ff::Field;
use rand_core::RngCore;
use zkgpu::Error;
use zkgpu::ntt::cpu as ntt_cpu;
use zkgpu::ntt::{self, Buffer, Direction, NttConfig, Order, Step};
use zkgpu_kernels::field::Fr;
use zkgpu_kernels::ntt::plan::{emulate_bit_reverse, emulate_pass};

fn random_scalars(rng: &mut impl RngCore, n: usize) -> Vec<Scalar> {
    (0..n).map(|_| Scalar::random(&mut *rng)).collect()
}

fn to_fr(s: &[Scalar]) -> Vec<Fr> {
    // SAFETY: Scalar and Fr are both 32 bytes of Montgomery-form limbs, bit-identical (tests/layout.rs).
    s.iter().map(|x| unsafe { std::mem::transmute::<Scalar, Fr>(*x) }).collect()
}

fn to_scalar(f: &[Fr]) -> Vec<Scalar> {
    // SAFETY: as in to_fr.
    f.iter().map(|x| unsafe { std::mem::transmute::<Fr, Scalar>(*x) }).collect()
}

/// Expands a factor table to all its entries: e -> hi[e >> lo_bits] * lo[e mod 2^lo_bits].
fn expand(v: &ntt::TableValues, count: usize) -> Vec<Scalar> {
    (0..count).map(|e| v.hi[e >> v.lo_bits] * v.lo[e & ((1 << v.lo_bits) - 1)]).collect()
}

/// Runs `steps` on the CPU as the GPU would (same passes, tiles, twiddle and scale tables, the same data and
/// scratch buffers).
fn emulate(data: &mut [Scalar], log_n: u32, steps: &[Step]) {
    let mut work = to_fr(data);
    // The scratch starts with values no step may read before writing them.
    let mut scratch = vec![<Fr as zkgpu_kernels::field::Field>::ONE; work.len()];
    for step in steps {
        match step {
            Step::Permute => emulate_bit_reverse(&mut work, log_n),
            Step::Pass { params, dit, direction, scale, src, dst } => {
                let count = ntt::twiddle_count(params.log_table);
                let twiddles = to_fr(&expand(&ntt::twiddle_factors(params.log_table), count));
                let (lo, hi) = match scale {
                    Some(kind) => {
                        let v = ntt::scale_values(log_n, *kind);
                        (to_fr(&v.lo), to_fr(&v.hi))
                    }
                    None => (Vec::new(), Vec::new()),
                };
                // In place, the kernel reads what it overwrites only when each tile holds whole transforms (blocks
                // do not see each other's writes); the emulation runs blocks one after another, so check it here.
                if src == dst && (params.reverse_in || params.reverse_out) {
                    assert!(params.log_tile() >= log_n, "in-place reversing pass over several tiles: {params:?}");
                }
                let input = if *src == Buffer::Data { work.clone() } else { scratch.clone() };
                let output = if *dst == Buffer::Data { &mut work } else { &mut scratch };
                emulate_pass(&input, output, params, *dit, *direction == Direction::Inverse, &twiddles, &lo, &hi);
            }
        }
    }
    data.copy_from_slice(&to_scalar(&work));
}

#[test]
fn reference_matches_the_definition_in_every_configuration() {
    let mut rng = common::seeded_rng("reference_matches_the_definition_in_every_configuration");
    for log_n in 0..=7 {
        let input = random_scalars(&mut rng, 1 << log_n);
        for cfg in NttConfig::all() {
            let mut fast = input.clone();
            ntt_cpu::ntt(&mut fast, cfg).unwrap();
            assert_eq!(fast, ntt_cpu::dft_naive(&input, cfg).unwrap(), "{cfg} 2^{log_n}");
        }
    }
    // 2^10 for the two plain directions (the naive DFT is O(n^2)).
    let input = random_scalars(&mut rng, 1 << 10);
    for cfg in [NttConfig::forward(), NttConfig::inverse().coset()] {
        let mut fast = input.clone();
        ntt_cpu::ntt(&mut fast, cfg).unwrap();
        assert_eq!(fast, ntt_cpu::dft_naive(&input, cfg).unwrap(), "{cfg} 2^10");
    }
}

#[test]
fn reference_known_values() {
    // The transform of a delta at 0 is all ones; of all ones, n at 0 and zero elsewhere.
    let n = 16;
    let mut delta = vec![Scalar::ZERO; n];
    delta[0] = Scalar::ONE;
    ntt_cpu::ntt(&mut delta, NttConfig::forward()).unwrap();
    assert!(delta.iter().all(|x| *x == Scalar::ONE));
    let mut ones = vec![Scalar::ONE; n];
    ntt_cpu::ntt(&mut ones, NttConfig::forward()).unwrap();
    assert_eq!(ones[0], Scalar::from(n as u64));
    assert!(ones[1..].iter().all(|x| x.is_zero_vartime()));
    // The roots are primitive.
    for log_n in 1..=32 {
        let w = ntt_cpu::root_of_unity(log_n);
        assert_eq!(w.pow_vartime([1u64 << log_n]), Scalar::ONE);
        assert_ne!(w.pow_vartime([1u64 << (log_n - 1)]), Scalar::ONE);
    }
    assert_eq!(ntt_cpu::coset_generator(), Scalar::from(7u64));
}

#[test]
fn reference_round_trips() {
    let mut rng = common::seeded_rng("reference_round_trips");
    let input = random_scalars(&mut rng, 1 << 12);
    for coset in [false, true] {
        let fwd = NttConfig { direction: Direction::Forward, coset, input: Order::Natural, output: Order::BitReversed };
        let inv = NttConfig { direction: Direction::Inverse, coset, input: Order::BitReversed, output: Order::Natural };
        let mut x = input.clone();
        ntt_cpu::ntt(&mut x, fwd).unwrap();
        assert_ne!(x, input);
        ntt_cpu::ntt(&mut x, inv).unwrap();
        assert_eq!(x, input, "coset {coset}");
    }
}

#[test]
fn output_at_matches_the_full_transform() {
    let mut rng = common::seeded_rng("output_at_matches_the_full_transform");
    // 2^12: one Horner chain; 2^17: chunks summed on all cores (from 2^16 on).
    for log_n in [12u32, 17] {
        let n = 1usize << log_n;
        let input = random_scalars(&mut rng, n);
        for cfg in NttConfig::all() {
            let mut full = input.clone();
            ntt_cpu::ntt(&mut full, cfg).unwrap();
            for k in [0usize, 1, 77, n - 1] {
                let pos = if cfg.output == Order::BitReversed { ntt_cpu::bit_reverse_index(k, log_n) } else { k };
                assert_eq!(ntt_cpu::output_at(&input, cfg, k).unwrap(), full[pos], "{cfg} 2^{log_n} k={k}");
            }
        }
    }
}

/// The one twiddle table serves both directions: `T[e] = w_N^e` for `e <= N/2`, so `T[N/2] = -1` and the
/// inverse's mirrored read `-T[N/2 - t]` is `w_N^-t` for every `t < N/2`.
#[test]
fn the_twiddle_table_read_mirrored_gives_the_inverse_twiddles() {
    for log_table in 1..=12u32 {
        let count = ntt::twiddle_count(log_table);
        let table = expand(&ntt::twiddle_factors(log_table), count);
        let w = ntt_cpu::root_of_unity(log_table);
        let half = count - 1;
        assert_eq!(table[half], -Scalar::ONE, "2^{log_table}: T[N/2]");
        let w_inv = w.invert().unwrap();
        let mut expected_forward = Scalar::ONE;
        let mut expected_inverse = Scalar::ONE;
        for t in 0..half {
            assert_eq!(table[t], expected_forward, "2^{log_table}: T[{t}]");
            assert_eq!(-table[half - t], expected_inverse, "2^{log_table}: -T[N/2 - {t}]");
            expected_forward *= w;
            expected_inverse *= w_inv;
        }
    }
}

#[test]
fn emulated_gpu_schedule_matches_the_reference() {
    let mut rng = common::seeded_rng("emulated_gpu_schedule_matches_the_reference");
    for log_n in 1..=13u32 {
        let n = 1usize << log_n;
        // Batch 3 (odd: tiles cannot span transforms) at small sizes, and a table larger than the transform.
        let batch = if log_n <= 8 { 3 } else { 1 };
        let log_table = if log_n % 3 == 0 { log_n + 2 } else { log_n };
        let input = random_scalars(&mut rng, n * batch);
        for cfg in NttConfig::all() {
            if log_n > 10 && cfg.coset && cfg.input != cfg.output {
                continue; // keep the largest sizes quick: the other configurations cover every step kind
            }
            let mut expected = input.clone();
            ntt_cpu::ntt_batch(&mut expected, n, cfg).unwrap();
            // With the scratch buffer (the permutation folded into the passes) and without (a permutation step).
            for scratch in [true, false] {
                let mut got = input.clone();
                emulate(&mut got, log_n, &ntt::schedule(log_n, batch, cfg, log_table, scratch));
                assert!(got == expected, "{cfg} 2^{log_n} x{batch} (table 2^{log_table}, scratch {scratch})");
            }
        }
    }
}

#[test]
fn emulated_schedule_of_a_large_transform() {
    // 2^16: three passes (6 + 5 + 5), lo and hi both non-trivial in every pass.
    let mut rng = common::seeded_rng("emulated_schedule_of_a_large_transform");
    let log_n = 16;
    let input = random_scalars(&mut rng, 1 << log_n);
    for cfg in [
        NttConfig::forward().orders(Order::Natural, Order::BitReversed),
        NttConfig::inverse().coset().orders(Order::BitReversed, Order::Natural),
        // The permutation folded into the first (RR) and last (NN) of three passes, with scaling on load / store.
        NttConfig::forward().coset().orders(Order::BitReversed, Order::BitReversed),
        NttConfig::inverse().coset().orders(Order::Natural, Order::Natural),
    ] {
        let mut expected = input.clone();
        ntt_cpu::ntt(&mut expected, cfg).unwrap();
        let mut got = input.clone();
        emulate(&mut got, log_n, &ntt::schedule(log_n, 1, cfg, log_n, true));
        assert!(got == expected, "{cfg}");
    }
}

#[test]
fn folded_permutation_over_batches() {
    // Several passes over batches: a reversed position stays inside its transform (odd and even batch counts,
    // tiles of several hi values).
    let mut rng = common::seeded_rng("folded_permutation_over_batches");
    for (log_n, batch) in [(11u32, 3usize), (12, 4), (14, 2)] {
        let n = 1usize << log_n;
        let input = random_scalars(&mut rng, n * batch);
        for cfg in [
            NttConfig::forward().orders(Order::Natural, Order::Natural),
            NttConfig::inverse().orders(Order::BitReversed, Order::BitReversed),
        ] {
            let steps = ntt::schedule(log_n, batch, cfg, log_n, true);
            assert!(steps.iter().any(Step::uses_scratch) && !steps.contains(&Step::Permute), "{steps:?}");
            let mut expected = input.clone();
            ntt_cpu::ntt_batch(&mut expected, n, cfg).unwrap();
            let mut got = input.clone();
            emulate(&mut got, log_n, &steps);
            assert!(got == expected, "{cfg} 2^{log_n} x{batch}");
        }
    }
}

#[test]
fn groth16_h_sequence_emulated() {
    // The pass sequences of Ntt::groth16_h's building blocks. Ntt::groth16_h_prepare (a and b): an unscaled
    // inverse DIF, then a DIT whose load multiplies by n^-1 g^i, equals the coset forward of the inverse.
    // Ntt::groth16_h_prepare_c: an inverse DIF scaled by n^-1, c's coefficients in bit-reversed order.
    // Ntt::groth16_h_combine: the pointwise a b / Z (done here on the CPU), a coset inverse DIF, the
    // subtraction of c / Z (CPU) and one permutation give h's coefficients: the textbook recipe's, whose C
    // makes the coset round trip.
    let mut rng = common::seeded_rng("groth16_h_sequence_emulated");
    for log_n in [1u32, 5, 11] {
        let n = 1usize << log_n;
        let mut prepare = ntt::sweep(log_n, 1, ntt::Sweep::Dif, Direction::Inverse, log_n, None);
        prepare.extend(ntt::sweep(
            log_n,
            1,
            ntt::Sweep::Dit,
            Direction::Forward,
            log_n,
            Some(ntt::ScaleKind::InverseThenCoset),
        ));
        let prepare_c =
            ntt::sweep(log_n, 1, ntt::Sweep::Dif, Direction::Inverse, log_n, Some(ntt::ScaleKind::InverseN));
        let inputs: Vec<Vec<Scalar>> = (0..3).map(|_| random_scalars(&mut rng, n)).collect();
        let mut prepared = Vec::new();
        for (k, input) in inputs.iter().enumerate() {
            let mut got = input.clone();
            let mut expected = input.clone();
            if k < 2 {
                emulate(&mut got, log_n, &prepare);
                ntt_cpu::ntt(&mut expected, NttConfig::inverse()).unwrap();
                ntt_cpu::ntt(&mut expected, NttConfig::forward().coset()).unwrap();
            } else {
                emulate(&mut got, log_n, &prepare_c);
                ntt_cpu::ntt(&mut expected, NttConfig::inverse().orders(Order::Natural, Order::BitReversed)).unwrap();
            }
            assert!(got == expected, "prepare of input {k} at 2^{log_n}");
            prepared.push(got);
        }
        let z_inv = (ntt_cpu::coset_generator().pow_vartime([n as u64]) - Scalar::ONE).invert().unwrap();
        let mut h: Vec<Scalar> = (0..n).map(|i| prepared[0][i] * prepared[1][i] * z_inv).collect();
        emulate(
            &mut h,
            log_n,
            &ntt::sweep(log_n, 1, ntt::Sweep::Dif, Direction::Inverse, log_n, Some(ntt::ScaleKind::CosetInverse)),
        );
        for (x, c) in h.iter_mut().zip(&prepared[2]) {
            *x -= c * z_inv;
        }
        emulate(&mut h, log_n, &[Step::Permute]);
        let expected = zkgpu::pipeline::cpu::h_coefficients(&inputs[0], &inputs[1], &inputs[2]).unwrap();
        assert!(h == expected, "combine at 2^{log_n}");
    }
}

#[test]
fn shapes_are_validated() {
    assert!(matches!(ntt::checked_log_n(0), Err(Error::NttSize { n: 0 })));
    assert!(matches!(ntt::checked_log_n(12), Err(Error::NttSize { n: 12 })));
    assert_eq!(ntt::checked_log_n(1).unwrap(), 0);
    assert_eq!(ntt::checked_log_n(1 << 20).unwrap(), 20);
    assert!(matches!(
        ntt::checked_log_n(1usize << (ntt::MAX_LOG_N + 1)),
        Err(Error::NttTooLarge { log_n, .. }) if log_n == ntt::MAX_LOG_N + 1
    ));
    assert!(matches!(ntt::check_shape(0, 4), Err(Error::NttBatchShape { len: 0, n: 4 })));
    assert!(matches!(ntt::check_shape(6, 4), Err(Error::NttBatchShape { len: 6, n: 4 })));
    assert_eq!(ntt::check_shape(12, 4).unwrap(), (2, 3));
    // The CPU reference reports the same errors and leaves its input alone.
    let mut v = vec![Scalar::ONE; 3];
    assert!(matches!(ntt_cpu::ntt(&mut v, NttConfig::forward()), Err(Error::NttSize { n: 3 })));
    assert_eq!(v, vec![Scalar::ONE; 3]);
}

#[test]
fn config_names_round_trip() {
    let all = NttConfig::all();
    assert_eq!(all.len(), 16);
    for cfg in &all {
        assert_eq!(NttConfig::from_name(&cfg.name()), Some(*cfg));
    }
    assert_eq!(NttConfig::forward().orders(Order::Natural, Order::BitReversed).name(), "fwd_nr");
    assert_eq!(NttConfig::inverse().coset().orders(Order::BitReversed, Order::BitReversed).name(), "coset_inv_rr");
    assert_eq!(NttConfig::from_name("fwd_xx"), None);
}
