//! MSM on the GPU against blstrs (`zkgpu::msm::cpu::msm_cpu`, blstrs' `multi_exp`): the edge cases
//! for G1 and G2 with host and device inputs, a seeded sweep of random sizes and plans, 2^16 and 2^20 points,
//! plans fitted to a device-memory budget (and one below the smallest plan), explicit window sizes, small
//! chunks (several chunks, so the double-buffered host staging is exercised) with every mix of host and device
//! bases and scalars, precomputed bases (also longer than the scalars),
//! one scalar vector over several tables,
//! pinned host inputs, determinism (bit-identical results run to run) and engine reuse, the typed errors
//! (which leave the inputs and the engine as they were), and the sorted entries of both sorts against the
//! model's. Needs a CUDA GPU: `cargo xtask test --gpu`.
mod common;

use blstrs::Scalar;
use common::curve_props::CurveUnderTest;
use common::gpu::gpu;
use common::msm_cases::{edge_cases, random_scalars};
use common::points::distinct_points;
use common::seeded_rng;
use rand_core::RngCore;
use zkgpu::msm::cpu::msm_cpu;
use zkgpu::msm::{
    Accumulation, Bases, Curve, DeviceLimits, G1, G2, Msm, MsmBases, MsmConfig, MsmPlan, Scalars, Sort, msm, msm_device,
};
use zkgpu::{DeviceSafe, Error, Gpu, PinnedMode};

/// Where one input of a run lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum At {
    Host,
    Device,
}
use At::{Device, Host};

/// (bases, scalars): every mix. (Device, Host) is the prover's main case (SRS resident, fresh scalars).
const PLACEMENTS: [(At, At); 4] = [(Host, Host), (Device, Host), (Host, Device), (Device, Device)];

/// The bytes of a value (results are compared byte for byte where determinism is the point).
fn bytes_of<T: DeviceSafe>(value: &T) -> Vec<u8> {
    // SAFETY: DeviceSafe types have no padding bytes (the trait's contract), so all size_of::<T>() bytes
    // of `value` are initialised; u8 has alignment 1 and the slice is copied before `value`'s borrow ends.
    unsafe { std::slice::from_raw_parts((value as *const T).cast::<u8>(), size_of::<T>()) }.to_vec()
}

/// One MSM through an engine: inputs placed as `at` says, the table made with `MsmBases::precompute` for
/// `plan` (a plain upload when the plan has no copies). Device scalars are read back afterwards and must be
/// unchanged.
fn run_on<C: Curve>(
    gpu: &Gpu,
    engine: &mut Msm<'_, C>,
    table: Option<&MsmBases<C>>,
    bases: &[C::Affine],
    scalars: &[Scalar],
    at: (At, At),
) -> zkgpu::Result<C::Projective> {
    let device_scalars = match at.1 {
        Device => Some(gpu.upload(scalars)?),
        Host => None,
    };
    let b = match (at.0, table) {
        (Device, Some(t)) => Bases::Device(t),
        (Device, None) => panic!("run_on: device bases asked for without a table"),
        (Host, _) => Bases::Host(bases),
    };
    let s = match &device_scalars {
        Some(d) => Scalars::Device(d),
        None => Scalars::Host(scalars),
    };
    let result = engine.run(b, s);
    if let Some(d) = &device_scalars {
        assert_eq!(gpu.download(d)?, scalars, "device scalars changed by the MSM");
    }
    result
}

/// One MSM with a fresh plan (`host_inputs` when either input is on the host) and engine; returns the result
/// and the plan.
fn gpu_msm<C: Curve>(
    gpu: &Gpu,
    bases: &[C::Affine],
    scalars: &[Scalar],
    config: &MsmConfig,
    at: (At, At),
) -> zkgpu::Result<(C::Projective, MsmPlan)> {
    let plan = MsmPlan::new(scalars.len(), config, at.0 == Host || at.1 == Host)?;
    let table = match at.0 {
        Device => Some(MsmBases::<C>::precompute(gpu, bases, &plan)?),
        Host => None,
    };
    let mut engine = Msm::<C>::new(gpu, plan)?;
    let sum = run_on(gpu, &mut engine, table.as_ref(), bases, scalars, at)?;
    Ok((sum, plan))
}

/// [`gpu_msm`] equals `expected`, and the plan honours the explicit choices of `config`.
fn check<C: Curve>(
    gpu: &Gpu,
    bases: &[C::Affine],
    scalars: &[Scalar],
    expected: &C::Projective,
    config: &MsmConfig,
    at: (At, At),
    what: &str,
) {
    let n = scalars.len();
    let (got, plan) = gpu_msm::<C>(gpu, bases, scalars, config, at)
        .unwrap_or_else(|e| panic!("{what}: n = {n}, {config:?}, {at:?}: {e}"));
    assert_eq!(got, *expected, "{what}: n = {n}, {at:?}, plan {plan:?}");
    if let Some(c) = config.window_bits {
        assert_eq!(plan.window_bits, c, "{what}: window bits");
    }
    if let Some(chunk) = config.chunk {
        assert_eq!(plan.chunk, chunk.clamp(1, n.max(1)), "{what}: chunk");
    }
    assert_eq!(plan.copies, config.precompute.max(1), "{what}: copies");
    if let Some(passes) = config.scatter_passes {
        assert_eq!(plan.scatter_passes, passes.min(plan.buckets() as u32), "{what}: scatter passes");
    }
    match config.accumulation {
        Accumulation::Xyzz => assert_eq!(plan.affine_rounds, 0, "{what}: XYZZ accumulation"),
        Accumulation::Affine { rounds } => {
            assert!(plan.affine_rounds >= 1, "{what}: affine accumulation without rounds");
            if let Some(r) = rounds {
                assert_eq!(plan.affine_rounds, r.max(1), "{what}: affine rounds");
            }
        }
    }
}

/// What most templates start with: the GPU, `n` random distinct bases then `n` random scalars from the test's
/// seeded RNG, and blstrs' MSM of them.
fn msm_inputs<C: CurveUnderTest>(name: &str, n: usize) -> (Gpu, Vec<C::Affine>, Vec<Scalar>, C::Projective) {
    let gpu = gpu();
    let mut rng = seeded_rng(name);
    let bases = distinct_points::<C>(&mut rng, n);
    let scalars = random_scalars(&mut rng, n);
    let expected = msm_cpu::<C>(&bases, &scalars).unwrap();
    (gpu, bases, scalars, expected)
}

fn config(window_bits: Option<u32>, chunk: Option<usize>, precompute: u32) -> MsmConfig {
    MsmConfig { window_bits, chunk, precompute, ..Default::default() }
}

/// Affine accumulation with `rounds` (`None`: the plan's choice).
fn affine(config: MsmConfig, rounds: Option<u32>) -> MsmConfig {
    MsmConfig { accumulation: Accumulation::Affine { rounds }, ..config }
}

// ---------------------------------------------------------------------------------------------------------
// Edge cases

/// The edge cases through every placement (`precomputed == false`), or through 4 precomputed copies.
fn edge_cases_on<C: CurveUnderTest>(name: &str, precomputed: bool) {
    let gpu = gpu();
    let mut rng = seeded_rng(name);
    let cases = edge_cases::<C>(&mut rng);
    assert!(cases.len() > 20, "edge_cases gave only {} cases", cases.len());
    for case in &cases {
        let (bases, scalars, what) = (&case.bases[..], &case.scalars[..], case.name.as_str());
        let expected = msm_cpu::<C>(bases, scalars).unwrap();
        if precomputed {
            // The automatic window has at least 12 windows, so 4 copies always fit.
            check::<C>(&gpu, bases, scalars, &expected, &config(None, None, 4), (Device, Host), what);
            continue;
        }
        // One-shot from host memory, and one-shot from device memory.
        let got = msm::<C>(&gpu, bases, scalars).unwrap_or_else(|e| panic!("{what}: msm: {e}"));
        assert_eq!(got, expected, "{what}: msm (host bases and scalars)");
        let table = MsmBases::<C>::upload(&gpu, bases).unwrap();
        let device_scalars = gpu.upload(scalars).unwrap();
        let got = msm_device::<C>(&gpu, &table, &device_scalars).unwrap_or_else(|e| panic!("{what}: msm_device: {e}"));
        assert_eq!(got, expected, "{what}: msm_device");
        // Through an engine: device bases with device scalars, and the prover's mix (device bases, host scalars).
        for at in [(Device, Device), (Device, Host)] {
            check::<C>(&gpu, bases, scalars, &expected, &MsmConfig::default(), at, what);
        }
        // Affine accumulation: the plan's rounds, and a small window (long runs) with every round affine.
        check::<C>(&gpu, bases, scalars, &expected, &affine(MsmConfig::default(), None), (Device, Device), what);
        check::<C>(&gpu, bases, scalars, &expected, &affine(config(Some(4), None, 0), Some(32)), (Host, Host), what);
    }
}

curve_tests! {
    #[ignore = "needs a CUDA GPU"]
    fn edge_cases_host_and_device = edge_cases_on { g1: G1(false), g2: G2(false) }
}

curve_tests! {
    #[ignore = "needs a CUDA GPU"]
    fn edge_cases_precomputed = edge_cases_on { g1: G1(true), g2: G2(true) }
}

// ---------------------------------------------------------------------------------------------------------
// Random sizes and plans

/// `draws` random sizes in 0..4096, each with a random placement and, one time in three each, an explicit
/// window (2..=16 bits), an explicit chunk (at least n/8 points, so few chunks), 1..=8 scatter passes over
/// bucket ranges, affine accumulation (1..=9 rounds or the plan's choice) and (device bases only) 2..=4
/// precomputed copies (when `precompute`; the G2 sweep draws none, `edge_cases_precomputed::g2` and
/// `precomputed_bases::g2` cover G2 copies).
fn random_sweep<C: CurveUnderTest>(name: &str, draws: usize, precompute: bool) {
    let gpu = gpu();
    let mut rng = seeded_rng(name);
    for draw in 0..draws {
        let n = (rng.next_u32() % 4096) as usize;
        let at = PLACEMENTS[rng.next_u32() as usize % PLACEMENTS.len()];
        let window_bits = (rng.next_u32().is_multiple_of(3)).then(|| 2 + rng.next_u32() % 15);
        let chunk = (rng.next_u32().is_multiple_of(3)).then(|| 1 + n / 8 + rng.next_u32() as usize % (n + 1));
        let copies =
            if precompute && at.0 == Device && rng.next_u32().is_multiple_of(3) { 2 + rng.next_u32() % 3 } else { 0 };
        let mut cfg = config(window_bits, chunk, copies);
        if rng.next_u32().is_multiple_of(3) {
            cfg.sort = Sort::Radix;
        } else {
            // The counting sort's scatter in a random number of passes, or the plan's.
            cfg.scatter_passes = (rng.next_u32().is_multiple_of(2)).then(|| 1 + rng.next_u32() % 8);
        }
        if rng.next_u32().is_multiple_of(3) {
            let rounds = rng.next_u32() % 10;
            cfg = affine(cfg, (rounds > 0).then_some(rounds));
        }
        let bases = distinct_points::<C>(&mut rng, n);
        let scalars = random_scalars(&mut rng, n);
        let expected = msm_cpu::<C>(&bases, &scalars).unwrap();
        check::<C>(&gpu, &bases, &scalars, &expected, &cfg, at, &format!("draw {draw}"));
    }
}

curve_tests! {
    #[ignore = "needs a CUDA GPU"]
    fn random_sizes_and_plans = random_sweep { g1: G1(20, true), g2: G2(5, false) }
}

// ---------------------------------------------------------------------------------------------------------
// Large sizes

/// Random distinct bases and scalars of each size: `msm` (host inputs, default plan: more than 2^20 points
/// make several host chunks), `msm_device`, the scatter in 5 passes, the radix sort and affine accumulation
/// against blstrs' multi_exp.
fn sizes_on<C: CurveUnderTest>(name: &str, sizes: &[usize]) {
    let gpu = gpu();
    let mut rng = seeded_rng(name);
    for &n in sizes {
        let bases = distinct_points::<C>(&mut rng, n);
        let scalars = random_scalars(&mut rng, n);
        let expected = msm_cpu::<C>(&bases, &scalars).unwrap();
        let got = msm::<C>(&gpu, &bases, &scalars).unwrap_or_else(|e| panic!("n = {n}: msm: {e}"));
        assert_eq!(got, expected, "n = {n}: msm (host inputs)");
        let table = MsmBases::<C>::upload(&gpu, &bases).unwrap();
        let device_scalars = gpu.upload(&scalars).unwrap();
        let got = msm_device::<C>(&gpu, &table, &device_scalars).unwrap_or_else(|e| panic!("n = {n}: msm_device: {e}"));
        assert_eq!(got, expected, "n = {n}: msm_device");
        assert_eq!(gpu.download(&device_scalars).unwrap(), scalars, "n = {n}: device scalars changed");
        let passes = MsmConfig { scatter_passes: Some(5), ..MsmConfig::default() };
        check::<C>(&gpu, &bases, &scalars, &expected, &passes, (Device, Device), &format!("n = {n}, 5 scatter passes"));
        let radix = MsmConfig { sort: Sort::Radix, ..MsmConfig::default() };
        check::<C>(&gpu, &bases, &scalars, &expected, &radix, (Device, Host), &format!("n = {n}, radix sort"));
        // Affine accumulation: the plan's rounds with device inputs, every round affine with host inputs.
        let what = format!("n = {n}, affine");
        check::<C>(&gpu, &bases, &scalars, &expected, &affine(MsmConfig::default(), None), (Device, Device), &what);
        check::<C>(&gpu, &bases, &scalars, &expected, &affine(MsmConfig::default(), Some(32)), (Host, Host), &what);
    }
}

curve_tests! {
    #[ignore = "needs a CUDA GPU"]
    fn sizes_2_16 = sizes_on { g1: G1(&[1 << 16, (1 << 16) + 7]), g2: G2(&[1 << 16]) }
}

curve_tests! {
    // 2^20 + 13 with host inputs is several chunks by default (a plan chunk of 2^20, queued ramped: 2^17, 2^18,
    // 2^19 and 2^17 + 13 points).
    #[ignore = "needs a CUDA GPU"]
    fn sizes_2_20 = sizes_on { g1: G1(&[1 << 20, (1 << 20) + 13]), g2: G2(&[1 << 20]) }
}

/// Plans fitted to the device (`MsmPlan::within`): this device's limits leave the default plan (the memory is
/// ample), and a budget of 5/6 of the default plan's bytes makes another plan (a smaller window or chunk; with
/// device inputs and a configured chunk, another window) that runs in that budget and equals blstrs.
fn fitted_plans_on<C: CurveUnderTest>(name: &str, n: usize) {
    let (gpu, bases, scalars, expected) = msm_inputs::<C>(name, n);
    let limits = DeviceLimits::of(&gpu).unwrap();
    assert_eq!(limits.sm_count, gpu.info().sm_count);
    let table = MsmBases::<C>::upload(&gpu, &bases).unwrap();
    for (config, at) in [(MsmConfig::default(), (Host, Host)), (config(None, Some(n), 0), (Device, Device))] {
        let host = at.0 == Host;
        let default = MsmPlan::new(n, &config, host).unwrap();
        let on_this_device = MsmPlan::within::<C>(n, &config, host, &limits).unwrap();
        assert_eq!((on_this_device.window_bits, on_this_device.chunk), (default.window_bits, default.chunk), "{at:?}");
        let budget = default.device_bytes::<C>(host) / 6 * 5;
        let plan = MsmPlan::within_budget::<C>(&gpu, n, &config, host, budget).unwrap();
        assert_eq!(plan, MsmPlan::within::<C>(n, &config, host, &limits.capped(budget)).unwrap());
        assert_ne!((plan.window_bits, plan.chunk), (default.window_bits, default.chunk), "{at:?}: {plan:?}");
        let mut engine = Msm::<C>::new(&gpu, plan).unwrap();
        let got = run_on(&gpu, &mut engine, Some(&table), &bases, &scalars, at).unwrap();
        assert_eq!(got, expected, "{at:?}, plan {plan:?} for {budget} bytes");
        assert!(engine.device_bytes() <= budget, "{at:?}: {} bytes over {budget}", engine.device_bytes());
    }
    // Below the smallest plan (two staged chunks of 2^16 points alone take more): the error states it.
    let budget = 1 << 20;
    match MsmPlan::within_budget::<C>(&gpu, n, &MsmConfig::default(), true, budget) {
        Err(Error::DeviceBudget { budget: b, needed, .. }) => assert!(b == budget && needed > budget, "{needed}"),
        other => panic!("a budget of {budget} bytes gave {other:?}"),
    }
}

curve_tests! {
    #[ignore = "needs a CUDA GPU"]
    fn fitted_plans = fitted_plans_on { g1: G1((1 << 20) + 5), g2: G2(1 << 18) }
}

// ---------------------------------------------------------------------------------------------------------
// Plan variants

/// Explicit window sizes, host inputs and device inputs.
fn window_sizes_on<C: CurveUnderTest>(name: &str, n: usize, bits: &[u32]) {
    let (gpu, bases, scalars, expected) = msm_inputs::<C>(name, n);
    for &c in bits {
        for at in [(Host, Host), (Device, Device)] {
            check::<C>(&gpu, &bases, &scalars, &expected, &config(Some(c), None, 0), at, &format!("c = {c}"));
        }
    }
}

curve_tests! {
    #[ignore = "needs a CUDA GPU"]
    fn explicit_window_bits = window_sizes_on {
        g1: G1(3000, &[1, 3, 8, 13, 16, 20]),
        g2: G2(2000, &[5, 8, 13, 16, 20]),
    }
}

/// Chunks of about n/5 (dividing n and not), and many small chunks, with every placement: several chunks
/// through the double-buffered staging, buckets carried across chunks.
fn chunks_on<C: CurveUnderTest>(name: &str, n: usize) {
    let (gpu, bases, scalars, expected) = msm_inputs::<C>(name, n);
    for chunk in [n / 5, n / 5 + 1, n / 23] {
        assert!(n.div_ceil(chunk) >= 5, "chunk {chunk} of {n} makes fewer than 5 chunks");
        for at in PLACEMENTS {
            check::<C>(&gpu, &bases, &scalars, &expected, &config(None, Some(chunk), 0), at, &format!("chunk {chunk}"));
        }
    }
    // A small window with chunks (many buckets runs cross chunk boundaries).
    check::<C>(&gpu, &bases, &scalars, &expected, &config(Some(6), Some(n / 5), 0), (Device, Host), "c = 6, chunk n/5");
}

curve_tests! {
    #[ignore = "needs a CUDA GPU"]
    fn small_chunks_host_and_device_inputs = chunks_on { g1: G1(20_000), g2: G2(10_000) }
}

/// Precomputed bases: 2, 4 and 8 copies (the bench's `precomputeK` variants) with the automatic window and
/// explicit ones, one copy per window (c = 16, 16 copies: a single virtual window), chunked, with host and
/// device scalars; the table's size.
fn precomputed_on<C: CurveUnderTest>(name: &str, n: usize) {
    let (gpu, bases, scalars, expected) = msm_inputs::<C>(name, n);
    for copies in [2, 4, 8] {
        for c in [None, Some(8), Some(16)] {
            for at in [(Device, Device), (Device, Host)] {
                check::<C>(
                    &gpu,
                    &bases,
                    &scalars,
                    &expected,
                    &config(c, None, copies),
                    at,
                    &format!("{copies} copies, c {c:?}"),
                );
            }
        }
        let cfg = config(Some(10), Some(n / 3), copies);
        check::<C>(&gpu, &bases, &scalars, &expected, &cfg, (Device, Host), &format!("{copies} copies, chunk n/3"));
    }
    check::<C>(&gpu, &bases, &scalars, &expected, &config(Some(16), None, 16), (Device, Device), "16 copies, c = 16");

    let plan = MsmPlan::new(n, &config(None, None, 4), false).unwrap();
    assert_eq!((plan.copies, plan.virtual_windows), (4, plan.windows.div_ceil(4)));
    let table = MsmBases::<C>::precompute(&gpu, &bases, &plan).unwrap();
    assert_eq!((table.len(), table.copies()), (n, 4));
    assert_eq!(table.device_bytes(), 4 * n * size_of::<C::Affine>());
}

curve_tests! {
    #[ignore = "needs a CUDA GPU"]
    fn precomputed_bases = precomputed_on { g1: G1(5000), g2: G2(3000) }
}

/// Device bases (plain and precomputed: the copies' stride is the table's length, not the scalars') used by
/// fewer scalars, through one engine: the first `m` bases count.
fn longer_bases_on<C: CurveUnderTest>(name: &str, n: usize) {
    let gpu = gpu();
    let mut rng = seeded_rng(name);
    let bases = distinct_points::<C>(&mut rng, n);
    let scalars = random_scalars(&mut rng, n);
    for copies in [1, 4] {
        let plan = MsmPlan::new(n, &config(None, Some(n / 3), copies), true).unwrap();
        let table = MsmBases::<C>::precompute(&gpu, &bases, &plan).unwrap();
        let mut engine = Msm::<C>::new(&gpu, plan).unwrap();
        for m in [n, 1, 0, n / 2 + 1, n - 1] {
            let expected = msm_cpu::<C>(&bases[..m], &scalars[..m]).unwrap();
            for at in [(Device, Host), (Device, Device)] {
                let got = run_on(&gpu, &mut engine, Some(&table), &bases[..m], &scalars[..m], at)
                    .unwrap_or_else(|e| panic!("{copies} copies, {m} of {n} bases, {at:?}: {e}"));
                assert_eq!(got, expected, "{copies} copies, {m} of {n} bases, {at:?}");
            }
        }
    }
}

curve_tests! {
    #[ignore = "needs a CUDA GPU"]
    fn device_bases_longer_than_scalars = longer_bases_on { g1: G1(6000), g2: G2(3000) }
}

/// Sparse (indexed) scalars over device bases, plain and with 4 precomputed copies, in several chunks through
/// one engine: random indices with repeats, increasing indices, a prefix of the buffers (`len` below their
/// length), the empty case; then the errors: an index past the bases (`IndexOutOfRange` from `finish`, and
/// the engine still works), buffers shorter than `len`, host bases.
fn indexed_on<C: CurveUnderTest>(name: &str, n: usize, k: usize) {
    let gpu = gpu();
    let mut rng = seeded_rng(name);
    let bases = distinct_points::<C>(&mut rng, n);
    let scalars = random_scalars(&mut rng, k);
    let random: Vec<u32> = (0..k).map(|_| rng.next_u32() % n as u32).collect();
    let mut increasing = random.clone();
    increasing.sort_unstable();
    let d_scalars = gpu.upload(&scalars).unwrap();
    for copies in [1, 4] {
        let plan = MsmPlan::new(k, &config(None, Some(k / 3 + 1), copies), false).unwrap();
        let table = MsmBases::<C>::precompute(&gpu, &bases, &plan).unwrap();
        let mut engine = Msm::<C>::new(&gpu, plan).unwrap();
        for (what, indices) in [("random", &random), ("increasing", &increasing)] {
            let d_indices = gpu.upload(indices).unwrap();
            for len in [k, k / 2 + 1, 1, 0] {
                let expected = zkgpu::msm::cpu::msm_indexed_cpu::<C>(&bases, &scalars[..len], &indices[..len]).unwrap();
                let sparse = Scalars::DeviceIndexed { scalars: &d_scalars, indices: &d_indices, len };
                let got = engine
                    .run(Bases::Device(&table), sparse)
                    .unwrap_or_else(|e| panic!("{what}, {copies} copies, len {len}: {e}"));
                assert_eq!(got, expected, "{what} indices, {copies} copies, len {len} of {k}, plan {plan:?}");
            }
        }
        let mut bad = random.clone();
        bad[k / 2] = n as u32;
        bad[k - 1] = u32::MAX;
        let d_bad = gpu.upload(&bad).unwrap();
        let r =
            engine.run(Bases::Device(&table), Scalars::DeviceIndexed { scalars: &d_scalars, indices: &d_bad, len: k });
        assert!(
            matches!(r, Err(Error::IndexOutOfRange { count: 2, limit, .. }) if limit == n),
            "{copies} copies: {r:?}"
        );
        let d_indices = gpu.upload(&random).unwrap();
        let expected = zkgpu::msm::cpu::msm_indexed_cpu::<C>(&bases, &scalars, &random).unwrap();
        let sparse = Scalars::DeviceIndexed { scalars: &d_scalars, indices: &d_indices, len: k };
        assert_eq!(
            engine.run(Bases::Device(&table), sparse).unwrap(),
            expected,
            "{copies} copies: after the index error"
        );
        let short = gpu.upload(&random[..k - 1]).unwrap();
        let r =
            engine.run(Bases::Device(&table), Scalars::DeviceIndexed { scalars: &d_scalars, indices: &short, len: k });
        assert!(matches!(r, Err(Error::LengthMismatch { .. })), "short indices: {r:?}");
    }
    let plan = MsmPlan::new(k, &MsmConfig::default(), true).unwrap();
    let mut engine = Msm::<C>::new(&gpu, plan).unwrap();
    let d_indices = gpu.upload(&random).unwrap();
    let r = engine.run(
        Bases::Host(&bases[..k.min(n)]),
        Scalars::DeviceIndexed { scalars: &d_scalars, indices: &d_indices, len: k },
    );
    assert!(matches!(r, Err(Error::MsmConfig(_))), "host bases with indexed scalars: {r:?}");
}

curve_tests! {
    #[ignore = "needs a CUDA GPU"]
    fn indexed_scalars = indexed_on { g1: G1(5000, 3000), g2: G2(2000, 1500) }
}

/// One scalar vector over several tables ([`Msm::enqueue_tables`]): dense and sparse scalars, in one chunk
/// (one sort for all tables) and in several (each table sorted again), plain and with 2 precomputed copies;
/// then the empty cases and the errors: tables of different lengths, an index past the tables (counted
/// once, not once per table), `finish` after several tables. The engine works after each error.
fn tables_on<C: CurveUnderTest>(name: &str, n: usize, k: usize) {
    let gpu = gpu();
    let mut rng = seeded_rng(name);
    let bases: Vec<Vec<C::Affine>> = (0..3).map(|_| distinct_points::<C>(&mut rng, n)).collect();
    let dense = random_scalars(&mut rng, n);
    let sparse = random_scalars(&mut rng, k);
    let indices: Vec<u32> = (0..k).map(|_| rng.next_u32() % n as u32).collect();
    let (d_dense, d_sparse, d_indices) =
        (gpu.upload(&dense).unwrap(), gpu.upload(&sparse).unwrap(), gpu.upload(&indices).unwrap());
    let dense_expected: Vec<_> = bases.iter().map(|b| msm_cpu::<C>(b, &dense).unwrap()).collect();
    let sparse_expected: Vec<_> =
        bases.iter().map(|b| zkgpu::msm::cpu::msm_indexed_cpu::<C>(b, &sparse, &indices).unwrap()).collect();
    for (chunk, copies) in [(None, 1), (Some(n / 3 + 1), 1), (None, 2), (Some(k / 2 + 1), 2)] {
        let plan = MsmPlan::new(n, &config(None, chunk, copies), false).unwrap();
        let tables: Vec<MsmBases<C>> =
            bases.iter().map(|b| MsmBases::<C>::precompute(&gpu, b, &plan).unwrap()).collect();
        let refs: Vec<&MsmBases<C>> = tables.iter().collect();
        let mut engine = Msm::<C>::new(&gpu, plan).unwrap();
        let what = format!("chunk {chunk:?}, {copies} copies");
        engine.enqueue_tables(&refs, Scalars::Device(&d_dense)).unwrap();
        assert_eq!(engine.finish_tables().unwrap(), dense_expected, "{what}: dense scalars");
        let indexed = Scalars::DeviceIndexed { scalars: &d_sparse, indices: &d_indices, len: k };
        engine.enqueue_tables(&refs, indexed).unwrap();
        assert_eq!(engine.finish_tables().unwrap(), sparse_expected, "{what}: indexed scalars");
        // One table through enqueue_tables is enqueue.
        engine.enqueue_tables(&refs[1..2], Scalars::Device(&d_dense)).unwrap();
        assert_eq!(engine.finish().unwrap(), dense_expected[1], "{what}: one table");

        let mut bad = indices.clone();
        bad[k / 2] = n as u32;
        bad[k - 1] = u32::MAX;
        let d_bad = gpu.upload(&bad).unwrap();
        engine.enqueue_tables(&refs, Scalars::DeviceIndexed { scalars: &d_sparse, indices: &d_bad, len: k }).unwrap();
        let r = engine.finish_tables();
        assert!(matches!(r, Err(Error::IndexOutOfRange { count: 2, limit, .. }) if limit == n), "{what}: {r:?}");
        engine.enqueue_tables(&refs, Scalars::Device(&d_dense)).unwrap();
        let r = engine.finish();
        assert!(matches!(r, Err(Error::MsmConfig(_))), "{what}: finish after three tables: {r:?}");
        engine.enqueue_tables(&refs, Scalars::Device(&d_dense)).unwrap();
        assert_eq!(engine.finish_tables().unwrap(), dense_expected, "{what}: after the errors");
    }
    let plan = MsmPlan::new(n + 1, &MsmConfig::default(), false).unwrap();
    let mut engine = Msm::<C>::new(&gpu, plan).unwrap();
    let tables: Vec<MsmBases<C>> = bases.iter().map(|b| MsmBases::<C>::upload(&gpu, b).unwrap()).collect();
    let longer = MsmBases::<C>::upload(&gpu, &distinct_points::<C>(&mut rng, n + 1)).unwrap();
    let r = engine.enqueue_tables(&[&tables[0], &longer], Scalars::Device(&d_dense));
    assert!(matches!(r, Err(Error::LengthMismatch { .. })), "tables of different lengths: {r:?}");
    engine.enqueue_tables(&[], Scalars::Device(&d_dense)).unwrap();
    assert_eq!(engine.finish_tables().unwrap(), Vec::new(), "no tables");
    let none = Scalars::DeviceIndexed { scalars: &d_sparse, indices: &d_indices, len: 0 };
    engine.enqueue_tables(&[&tables[0], &tables[2]], none).unwrap();
    assert_eq!(engine.finish_tables().unwrap(), vec![C::identity(); 2], "no scalars");
    engine.enqueue_tables(&[&tables[2], &tables[0]], Scalars::Device(&d_dense)).unwrap();
    assert_eq!(engine.finish_tables().unwrap(), vec![dense_expected[2], dense_expected[0]], "after the errors");
}

curve_tests! {
    #[ignore = "needs a CUDA GPU"]
    fn several_tables = tables_on { g1: G1(5000, 3000), g2: G2(2000, 1500) }
}

/// Host inputs in page-locked memory (write-combined and cached): one-shot, chunked through an engine, and
/// pinned scalars with device bases. The pinned buffers still hold the inputs afterwards.
fn pinned_on<C: CurveUnderTest>(name: &str, n: usize) {
    let (gpu, bases, scalars, expected) = msm_inputs::<C>(name, n);
    let table = MsmBases::<C>::upload(&gpu, &bases).unwrap();
    for mode in [PinnedMode::WriteCombined, PinnedMode::ReadBack] {
        let pinned_bases = gpu.pin_slice(&bases, mode).unwrap();
        let pinned_scalars = gpu.pin_slice(&scalars, mode).unwrap();
        let got =
            msm::<C>(&gpu, &pinned_bases[..], &pinned_scalars[..]).unwrap_or_else(|e| panic!("{mode:?}: msm: {e}"));
        assert_eq!(got, expected, "{mode:?}: msm from pinned memory");
        let plan = MsmPlan::new(n, &config(None, Some(n / 4), 0), true).unwrap();
        let mut engine = Msm::<C>::new(&gpu, plan).unwrap();
        for round in 0..2 {
            let got = engine.run(Bases::Host(&pinned_bases[..]), Scalars::Host(&pinned_scalars[..])).unwrap();
            assert_eq!(got, expected, "{mode:?}: pinned bases and scalars in 4 chunks, round {round}");
            let got = engine.run(Bases::Device(&table), Scalars::Host(&pinned_scalars[..])).unwrap();
            assert_eq!(got, expected, "{mode:?}: device bases, pinned scalars in 4 chunks, round {round}");
        }
        assert!(pinned_bases[..] == bases[..] && pinned_scalars[..] == scalars[..], "{mode:?}: pinned inputs changed");
    }
}

curve_tests! {
    #[ignore = "needs a CUDA GPU"]
    fn pinned_host_inputs = pinned_on { g1: G1(50_000), g2: G2(10_000) }
}

// ---------------------------------------------------------------------------------------------------------
// Determinism and reuse

/// The same MSM three times on one engine (and once more on a fresh one) gives the same bytes, equal to
/// blstrs' normalized result: random scalars, and every scalar equal (one bucket per window holds every
/// point, the case where the scatter's atomics reorder the most).
fn deterministic_on<C: CurveUnderTest>(name: &str, n: usize) {
    let gpu = gpu();
    let mut rng = seeded_rng(name);
    let bases = distinct_points::<C>(&mut rng, n);
    let random = random_scalars(&mut rng, n);
    let same = vec![random[0]; n];
    let table = MsmBases::<C>::upload(&gpu, &bases).unwrap();
    for (what, scalars) in [("random scalars", &random), ("every scalar equal", &same)] {
        let expected = bytes_of(&msm_cpu::<C>(&bases, scalars).unwrap());
        for at in [(Host, Host), (Device, Device), (Device, Host)] {
            let plan = MsmPlan::new(n, &config(None, Some(n / 2), 0), at != (Device, Device)).unwrap();
            let mut engine = Msm::<C>::new(&gpu, plan).unwrap();
            for run in 0..3 {
                let got = run_on(&gpu, &mut engine, Some(&table), &bases, scalars, at).unwrap();
                assert_eq!(bytes_of(&got), expected, "{what}, {at:?}: run {run} differs from blstrs' bytes");
            }
            let (fresh, _) = gpu_msm::<C>(&gpu, &bases, scalars, &MsmConfig::default(), at).unwrap();
            assert_eq!(bytes_of(&fresh), expected, "{what}, {at:?}: a fresh engine differs");
        }
    }
}

curve_tests! {
    #[ignore = "needs a CUDA GPU"]
    fn deterministic_results = deterministic_on { g1: G1(1 << 16), g2: G2(1 << 14) }
}

/// One engine (chunked, host-input plan) used for many MSMs with new scalars, sizes and placements, the
/// staging allocated on first use and reused.
fn reuse_on<C: CurveUnderTest>(name: &str, n: usize) {
    let gpu = gpu();
    let mut rng = seeded_rng(name);
    let bases = distinct_points::<C>(&mut rng, n);
    let table = MsmBases::<C>::upload(&gpu, &bases).unwrap();
    let plan = MsmPlan::new(n, &config(None, Some(n / 3), 0), true).unwrap();
    let mut engine = Msm::<C>::new(&gpu, plan).unwrap();
    let scratch = engine.device_bytes();
    assert_eq!(scratch, plan.scratch_bytes::<C>());
    let mut with_staging = None;
    for (round, m) in [n, n, 0, 17, n - 1, n, n / 2, n].into_iter().enumerate() {
        let at = PLACEMENTS[round % PLACEMENTS.len()];
        let scalars = random_scalars(&mut rng, m);
        let expected = msm_cpu::<C>(&bases[..m], &scalars).unwrap();
        let got = run_on(&gpu, &mut engine, Some(&table), &bases[..m], &scalars, at)
            .unwrap_or_else(|e| panic!("round {round} ({m} scalars, {at:?}): {e}"));
        assert_eq!(got, expected, "round {round}: {m} scalars, {at:?}");
        assert_eq!(engine.plan(), &plan);
        with_staging.get_or_insert(engine.device_bytes());
    }
    // The first run (host bases and scalars) added the staging; later runs reused it.
    let with_staging = with_staging.unwrap_or(0);
    assert!(with_staging > scratch, "no staging after a run from host memory: {with_staging} bytes");
    assert_eq!(engine.device_bytes(), with_staging, "staging grew after the first run");
}

curve_tests! {
    #[ignore = "needs a CUDA GPU"]
    fn engine_reused_for_new_scalars = reuse_on { g1: G1(5000), g2: G2(2000) }
}

// ---------------------------------------------------------------------------------------------------------
// Typed errors

fn is_length_mismatch<T>(r: &zkgpu::Result<T>, expected: usize, actual: usize) -> bool {
    matches!(r, Err(Error::LengthMismatch { expected: e, actual: a, .. }) if *e == expected && *a == actual)
}

/// Length mismatches (host bases vs scalars, more scalars than the plan, device bases shorter than the
/// scalars), tables precomputed for another plan and precomputed plans with host bases are typed errors;
/// the inputs are unchanged and the engines still give right answers afterwards.
fn typed_errors_on<C: CurveUnderTest>(name: &str) {
    let gpu = gpu();
    let mut rng = seeded_rng(name);
    let n = 100;
    let bases = distinct_points::<C>(&mut rng, n);
    let scalars = random_scalars(&mut rng, n);
    let (bases_before, scalars_before) = (bases.clone(), scalars.clone());
    let expected = msm_cpu::<C>(&bases, &scalars).unwrap();
    let device_scalars = gpu.upload(&scalars).unwrap();

    // One-shot: bases and scalars differ in length.
    let r = msm::<C>(&gpu, &bases[..n - 1], &scalars);
    assert!(is_length_mismatch(&r, n, n - 1), "msm, {} bases for {n} scalars: {r:?}", n - 1);
    let r = msm::<C>(&gpu, &bases, &scalars[..n - 1]);
    assert!(is_length_mismatch(&r, n - 1, n), "msm, {n} bases for {} scalars: {r:?}", n - 1);

    // An engine: host bases must match the scalars exactly.
    let plan = MsmPlan::new(n, &MsmConfig::default(), true).unwrap();
    let mut engine = Msm::<C>::new(&gpu, plan).unwrap();
    for (b, s) in [(n - 1, n), (n, n - 1), (0, 1), (1, 0)] {
        let r = engine.run(Bases::Host(&bases[..b]), Scalars::Host(&scalars[..s]));
        assert!(is_length_mismatch(&r, s, b), "engine, {b} host bases for {s} scalars: {r:?}");
    }
    // More scalars than the plan's n, host or device.
    let small_plan = MsmPlan::new(n / 2, &MsmConfig::default(), true).unwrap();
    let mut small = Msm::<C>::new(&gpu, small_plan).unwrap();
    let table = MsmBases::<C>::upload(&gpu, &bases).unwrap();
    let r = small.run(Bases::Host(&bases), Scalars::Host(&scalars));
    assert!(is_length_mismatch(&r, n / 2, n), "{n} scalars for a plan of {}: {r:?}", n / 2);
    let r = small.run(Bases::Device(&table), Scalars::Device(&device_scalars));
    assert!(is_length_mismatch(&r, n / 2, n), "{n} device scalars for a plan of {}: {r:?}", n / 2);
    // Device bases shorter than the scalars.
    let short_table = MsmBases::<C>::upload(&gpu, &bases[..n / 2]).unwrap();
    let r = engine.run(Bases::Device(&short_table), Scalars::Host(&scalars));
    assert!(is_length_mismatch(&r, n, n / 2), "{} device bases for {n} scalars: {r:?}", n / 2);

    // Precomputed tables must come from the engine's plan (copies and window bits).
    let plan_for = |c: u32, copies: u32| MsmPlan::new(n, &config(Some(c), None, copies), false).unwrap();
    let pre_plan = plan_for(8, 4);
    let pre_table = MsmBases::<C>::precompute(&gpu, &bases, &pre_plan).unwrap();
    for other in [plan_for(9, 4), plan_for(8, 2), plan_for(8, 0)] {
        let mut e = Msm::<C>::new(&gpu, other).unwrap();
        let r = e.run(Bases::Device(&pre_table), Scalars::Host(&scalars));
        assert!(matches!(r, Err(Error::MsmConfig(_))), "table for {pre_plan:?} with plan {other:?}: {r:?}");
    }
    let mut pre_engine = Msm::<C>::new(&gpu, pre_plan).unwrap();
    let r = pre_engine.run(Bases::Device(&table), Scalars::Device(&device_scalars));
    assert!(matches!(r, Err(Error::MsmConfig(_))), "plain table with a precomputed plan: {r:?}");
    // A precomputed plan needs device bases.
    for s in [Scalars::Host(&scalars), Scalars::Device(&device_scalars)] {
        let r = pre_engine.run(Bases::Host(&bases), s);
        assert!(matches!(r, Err(Error::MsmConfig(_))), "precomputed plan with host bases: {r:?}");
    }

    // Nothing was modified, and the engines still work.
    assert!(bases == bases_before && scalars == scalars_before, "host inputs changed");
    assert_eq!(gpu.download(&device_scalars).unwrap(), scalars_before, "device scalars changed");
    assert_eq!(engine.run(Bases::Host(&bases), Scalars::Host(&scalars)).unwrap(), expected, "engine after errors");
    assert_eq!(
        engine.run(Bases::Device(&table), Scalars::Device(&device_scalars)).unwrap(),
        expected,
        "device inputs after errors"
    );
    let half = msm_cpu::<C>(&bases[..n / 2], &scalars[..n / 2]).unwrap();
    assert_eq!(
        small.run(Bases::Device(&table), Scalars::Host(&scalars[..n / 2])).unwrap(),
        half,
        "small engine after errors"
    );
    let got = pre_engine.run(Bases::Device(&pre_table), Scalars::Host(&scalars)).unwrap();
    assert_eq!(got, expected, "precomputed engine after errors");
}

curve_tests! {
    #[ignore = "needs a CUDA GPU"]
    fn typed_errors_leave_inputs_untouched = typed_errors_on { g1: G1(), g2: G2() }
}

// ---------------------------------------------------------------------------------------------------------
// Split enqueue / finish

/// `enqueue` + `finish` equal `run`; two engines queued before either finishes (work of both in the stream
/// at once) give their own results; `finish` with nothing queued and a second `enqueue` before `finish` are
/// typed errors that leave the queued MSM intact; an empty MSM queues nothing and finishes as the identity.
fn split_on<C: CurveUnderTest>(name: &str, n: usize) {
    let gpu = gpu();
    let mut rng = seeded_rng(name);
    let bases = distinct_points::<C>(&mut rng, n);
    let table = MsmBases::<C>::upload(&gpu, &bases).unwrap();
    let (s1, s2) = (random_scalars(&mut rng, n), random_scalars(&mut rng, n));
    let (e1, e2) = (msm_cpu::<C>(&bases, &s1).unwrap(), msm_cpu::<C>(&bases, &s2).unwrap());
    let d1 = gpu.upload(&s1).unwrap();
    let plan = MsmPlan::new(n, &MsmConfig::default(), false).unwrap();
    let (mut a, mut b) = (Msm::<C>::new(&gpu, plan).unwrap(), Msm::<C>::new(&gpu, plan).unwrap());

    assert!(matches!(a.finish(), Err(Error::MsmConfig(_))), "finish with nothing queued");
    a.enqueue(Bases::Device(&table), Scalars::Device(&d1)).unwrap();
    let again = a.enqueue(Bases::Device(&table), Scalars::Host(&s2));
    assert!(matches!(again, Err(Error::MsmConfig(_))), "second enqueue before finish: {again:?}");
    b.enqueue(Bases::Host(&bases), Scalars::Host(&s2)).unwrap();
    assert_eq!(b.finish().unwrap(), e2, "engine b (host inputs)");
    assert_eq!(a.finish().unwrap(), e1, "engine a (queued first, finished last)");
    assert_eq!(a.run(Bases::Device(&table), Scalars::Host(&s2)).unwrap(), e2, "run after the split");
    a.enqueue(Bases::Device(&table), Scalars::Host(&s1[..0])).unwrap();
    assert_eq!(a.finish().unwrap(), C::identity(), "empty MSM");
    assert!(matches!(a.finish(), Err(Error::MsmConfig(_))), "finish twice");
}

curve_tests! {
    #[ignore = "needs a CUDA GPU"]
    fn enqueue_then_finish = split_on { g1: G1(3000), g2: G2(1000) }
}

// ---------------------------------------------------------------------------------------------------------
// The sort

/// Scalars whose digits exercise the sort: random values, zeros, ones, r − 1, small values (every high
/// window's digit is zero, so the radix sort's first pass drops most of the items) and one value repeated
/// (a bucket per window holds an eighth of the entries).
fn sort_scalars(rng: &mut rand_chacha::ChaCha20Rng, n: usize) -> Vec<Scalar> {
    let repeated = random_scalars(rng, 1)[0];
    let random = random_scalars(rng, n);
    (0..n)
        .map(|i| match rng.next_u32() % 8 {
            0 => Scalar::from(0u64),
            1 => Scalar::from(1u64),
            2 => -Scalar::from(1u64),
            3 => Scalar::from(rng.next_u64() % 100_000),
            4 => repeated,
            _ => random[i],
        })
        .collect()
}

/// `Msm::sorted_chunk` against `msm_cpu::sorted_chunk_model`: entry for entry with the radix sort (stable, so
/// deterministic), bucket by bucket as multisets with the counting sort (its atomics order a bucket's entries
/// arbitrarily); offsets always exactly.
fn check_sorted(got: &[(Vec<u32>, Vec<u32>)], expected: &[(Vec<u32>, Vec<u32>)], sort: Sort, what: &str) {
    assert_eq!(got.len(), expected.len(), "{what}: virtual windows");
    for (v, ((got_offsets, got_entries), (offsets, entries))) in got.iter().zip(expected).enumerate() {
        assert_eq!(got_offsets, offsets, "{what}: offsets of virtual window {v}");
        match sort {
            Sort::Radix => assert_eq!(got_entries, entries, "{what}: entries of virtual window {v}"),
            Sort::Counting => {
                for b in 0..offsets.len() - 1 {
                    let range = offsets[b] as usize..offsets[b + 1] as usize;
                    let (mut g, mut e) = (got_entries[range.clone()].to_vec(), entries[range].to_vec());
                    g.sort_unstable();
                    e.sort_unstable();
                    assert_eq!(g, e, "{what}: bucket {b} of virtual window {v}");
                }
            }
        }
    }
}

/// The sorted chunk of both sorts against the model, for window sizes of one, two and three radix passes (c =
/// 1, 2, 5, 12 | 13, 16, 19, 20, 23 | 24), host and device inputs, 3 precomputed copies, sparse (indexed)
/// scalars, and 1.5 M scalars (several tiles per sort block).
#[test]
#[ignore = "needs a CUDA GPU"]
fn g1_sort_matches_model() {
    let gpu = gpu();
    let mut rng = seeded_rng("g1_sort_matches_model");
    let n = 3000;
    let bases = distinct_points::<G1>(&mut rng, n);
    let scalars = sort_scalars(&mut rng, n);
    let d_scalars = gpu.upload(&scalars).unwrap();
    let msm = msm_cpu::<G1>(&bases, &scalars).unwrap();
    let run = |cfg: MsmConfig, at: (At, At), what: &str| {
        let plan = MsmPlan::new(n, &cfg, at.0 == Host || at.1 == Host).unwrap();
        let table = MsmBases::<G1>::precompute(&gpu, &bases, &plan).unwrap();
        let mut engine = Msm::<G1>::new(&gpu, plan).unwrap();
        let b = || if at.0 == Device { Bases::Device(&table) } else { Bases::Host(&bases) };
        let s = || if at.1 == Device { Scalars::Device(&d_scalars) } else { Scalars::Host(&scalars) };
        let got = engine.sorted_chunk(b(), s()).unwrap();
        let expected = zkgpu::msm::cpu::sorted_chunk_model(&scalars, None, &plan, n);
        check_sorted(&got, &expected, cfg.sort, &format!("{what}, {at:?}, plan {plan:?}"));
        // The engine still runs whole MSMs after a sorted_chunk call.
        assert_eq!(engine.run(b(), s()).unwrap(), msm, "{what}: MSM after sorted_chunk");
    };
    // A bucket past rank_overflow(c) entries (the scatter's atomic cursors): at c = 23 and 24 (255 and 127)
    // the ~375 copies of each special scalar.
    for sort in [Sort::Radix, Sort::Counting] {
        for c in [1, 2, 5, 12, 13, 16, 19, 20, 23, 24] {
            run(
                MsmConfig { window_bits: Some(c), sort, ..Default::default() },
                (Device, Device),
                &format!("{sort:?}, c = {c}"),
            );
        }
        run(
            MsmConfig { window_bits: Some(13), sort, ..Default::default() },
            (Host, Host),
            &format!("{sort:?}, host inputs"),
        );
        let cfg = MsmConfig { window_bits: Some(13), precompute: 3, sort, ..Default::default() };
        run(cfg, (Device, Device), &format!("{sort:?}, 3 copies"));
    }

    // Sparse scalars: k scalars naming random bases (the radix sort's values come from the indices).
    let k = 2000;
    let indices: Vec<u32> = (0..k).map(|_| rng.next_u32() % n as u32).collect();
    let d_indices = gpu.upload(&indices).unwrap();
    let table = MsmBases::<G1>::upload(&gpu, &bases).unwrap();
    for sort in [Sort::Radix, Sort::Counting] {
        let plan = MsmPlan::new(k, &MsmConfig { window_bits: Some(16), sort, ..Default::default() }, false).unwrap();
        let mut engine = Msm::<G1>::new(&gpu, plan).unwrap();
        let sparse = Scalars::DeviceIndexed { scalars: &d_scalars, indices: &d_indices, len: k };
        let got = engine.sorted_chunk(Bases::Device(&table), sparse).unwrap();
        let expected = zkgpu::msm::cpu::sorted_chunk_model(&scalars[..k], Some(&indices), &plan, n);
        check_sorted(&got, &expected, sort, &format!("{sort:?}, indexed scalars"));
    }

    // 1.5 M scalars at c = 20: for the radix sort 733 tiles per window, so sort blocks take three tiles each.
    // The sort never reads the bases, so one point repeated will do.
    let big = 1_500_000;
    let big_scalars = sort_scalars(&mut rng, big);
    let d_big = gpu.upload(&big_scalars).unwrap();
    let table = MsmBases::<G1>::upload(&gpu, &vec![bases[0]; big]).unwrap();
    // The counting sort too: its scatter places the first rank_overflow(20) = 2047 entries of a bucket by the
    // count's ranks and the rest (here the repeated scalar's ~190 K per window) by atomic cursors.
    for sort in [Sort::Radix, Sort::Counting] {
        let plan = MsmPlan::new(big, &MsmConfig { window_bits: Some(20), sort, ..Default::default() }, false).unwrap();
        let mut engine = Msm::<G1>::new(&gpu, plan).unwrap();
        let got = engine.sorted_chunk(Bases::Device(&table), Scalars::Device(&d_big)).unwrap();
        let expected = zkgpu::msm::cpu::sorted_chunk_model(&big_scalars, None, &plan, big);
        check_sorted(&got, &expected, sort, &format!("1.5 M scalars, {sort:?}"));
    }
}
