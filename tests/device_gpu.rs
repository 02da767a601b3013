//! GPU tests of the host runtime and the device API (`#[ignore = "needs a CUDA GPU"]`; run them with
//! `cargo xtask test --gpu` or `cargo test --test device_gpu -- --ignored`). Each opens GPU 0 through
//! `common::gpu()`, which panics where there is no GPU, so they fail rather than pass without one.
//!
//! Device-API kernels (kernels/src/entry/device_api.rs) are checked against CPU models of what each
//! primitive must produce, at sizes around the warp (32) and block (256) sizes, including n not a multiple
//! of either (idle lanes must still take part in warp operations).
mod common;

use std::sync::Arc;

use cudarc::driver::{CudaStream, PushKernelArg};
use ff::Field;
use group::prime::PrimeCurveAffine;
use group::{Curve, Group};
use rand_core::RngCore;

use common::gpu::{BLOCK, gpu, run_binary, run_unary};
use zkgpu::{DeviceSafe, Error, Gpu, PinnedMode, launch_config_1d};

/// Sizes around the warp and block sizes, plus larger ones that are not multiples of either.
const SIZES: [usize; 11] = [0, 1, 2, 31, 32, 33, 255, 256, 257, 1000, 65_537];

fn random_u32s(rng: &mut impl RngCore, n: usize) -> Vec<u32> {
    (0..n).map(|_| rng.next_u32()).collect()
}

/// The raw bytes of a slice (DeviceSafe types have no padding).
fn bytes_of<T: DeviceSafe>(values: &[T]) -> Vec<u8> {
    // SAFETY: DeviceSafe guarantees no padding, so every byte is initialised.
    unsafe { std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), size_of_val(values)) }.to_vec()
}

/// The 32-lane warp of element i, clipped to n: the CPU view of what a warp sees (idle lanes hold 0).
fn warp_of(a: &[u32], i: usize) -> [u32; 32] {
    let base = i / 32 * 32;
    std::array::from_fn(|lane| a.get(base + lane).copied().unwrap_or(0))
}

// ---------------------------------------------------------------------------------------------------------
// Smoke

#[test]
#[ignore = "needs a CUDA GPU"]
fn smoke_add_u32_matches_the_cpu() {
    let gpu = gpu();
    let mut rng = common::seeded_rng("smoke_add_u32_matches_the_cpu");
    for n in SIZES {
        let a = random_u32s(&mut rng, n);
        let mut b = random_u32s(&mut rng, n);
        if n > 0 {
            // Edge values: wrap-around must be modular.
            b[0] = u32::MAX;
        }
        let got: Vec<u32> = run_binary(&gpu, "smoke_add_u32", &a, &b);
        let want: Vec<u32> = a.iter().zip(&b).map(|(x, y)| x.wrapping_add(*y)).collect();
        assert_eq!(got, want, "n = {n}");
    }
}

// ---------------------------------------------------------------------------------------------------------
// Device API: warp shuffles and votes

fn check_warp_kernel(kernel: &str, model: impl Fn(&[u32], usize) -> u32) {
    let gpu = gpu();
    let mut rng = common::seeded_rng(kernel);
    for n in SIZES {
        let a = random_u32s(&mut rng, n);
        let got: Vec<u32> = run_unary(&gpu, kernel, &a);
        let want: Vec<u32> = (0..n).map(|i| model(&a, i)).collect();
        assert_eq!(got.len(), n, "{kernel}: n = {n}");
        if let Some(i) = (0..n).find(|&i| got[i] != want[i]) {
            panic!("{kernel}: n = {n}: element {i}: got {:#x}, want {:#x}", got[i], want[i]);
        }
    }
}

fn warp_sum(a: &[u32], i: usize) -> u32 {
    warp_of(a, i).iter().fold(0u32, |s, x| s.wrapping_add(*x))
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn warp_shfl_xor_reduces_the_warp() {
    check_warp_kernel("device_api_warp_sum_xor", warp_sum);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn warp_shfl_down_then_idx_reduces_and_broadcasts() {
    check_warp_kernel("device_api_warp_sum_down", warp_sum);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn warp_shfl_up_scans_the_warp() {
    check_warp_kernel("device_api_warp_scan_up", |a, i| {
        warp_of(a, i)[..=i % 32].iter().fold(0u32, |s, x| s.wrapping_add(*x))
    });
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn warp_shfl_idx_reverses_the_warp_and_lane_id_is_right() {
    check_warp_kernel("device_api_warp_reverse", |a, i| warp_of(a, i)[31 - i % 32]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn warp_shfl_xor_u64_moves_both_halves() {
    check_warp_kernel("device_api_warp_sum_u64", |a, i| {
        let sum = warp_of(a, i).iter().fold(0u64, |s, &x| s.wrapping_add(((x as u64) << 32) | x as u64));
        (sum as u32) ^ ((sum >> 32) as u32)
    });
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn warp_votes_match_the_cpu() {
    let gpu = gpu();
    let mut rng = common::seeded_rng("warp_votes_match_the_cpu");
    let model = |a: &[u32], i: usize| {
        let odd = warp_of(a, i).map(|x| x & 1 == 1);
        let base = i / 32 * 32;
        // Idle lanes (past n) vote false.
        let votes: Vec<bool> = (0..32).map(|lane| base + lane < a.len() && odd[lane]).collect();
        let count = votes.iter().filter(|v| **v).count() as u32;
        let all = votes.iter().all(|v| *v) as u32;
        let any = votes.iter().any(|v| *v) as u32;
        count | all << 8 | any << 9 | 1 << 10
    };
    for n in SIZES {
        // Random parities, then all odd (vote_all true on full warps), then all even (vote_any false).
        let random = random_u32s(&mut rng, n);
        let all_odd: Vec<u32> = random.iter().map(|x| x | 1).collect();
        let all_even: Vec<u32> = random.iter().map(|x| x & !1).collect();
        for (what, a) in [("random", random), ("all odd", all_odd), ("all even", all_even)] {
            let got: Vec<u32> = run_unary(&gpu, "device_api_votes", &a);
            let want: Vec<u32> = (0..n).map(|i| model(&a, i)).collect();
            assert_eq!(got, want, "votes, {what}, n = {n}");
        }
    }
}

// ---------------------------------------------------------------------------------------------------------
// Device API: atomics

#[test]
#[ignore = "needs a CUDA GPU"]
fn atomics_build_an_exact_histogram_sum_and_max() {
    let gpu = gpu();
    let mut rng = common::seeded_rng("atomics_build_an_exact_histogram_sum_and_max");
    let f = gpu.function("device_api_atomics").unwrap();
    for n in [1usize, 33, 1000, 1 << 20] {
        // Few distinct bins relative to n: heavy contention on every counter.
        let a: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
        let da = gpu.upload(&a).unwrap();
        let mut bins = gpu.alloc_zeroed::<u32>(256).unwrap();
        let mut total = gpu.alloc_zeroed::<u64>(2).unwrap();
        let n32 = n as u32;
        let mut launch = gpu.stream().launch_builder(&f);
        launch.arg(da.raw()).arg(bins.raw_mut()).arg(total.raw_mut()).arg(&n32);
        // SAFETY: a holds n u32s, bins 256 u32s, total 2 u64s (zeroed); see the kernel's contract.
        unsafe { launch.launch(launch_config_1d(n, BLOCK)) }.unwrap();
        let got_bins = gpu.download(&bins).unwrap();
        let got_total = gpu.download(&total).unwrap();
        let mut want_bins = vec![0u32; 256];
        for x in &a {
            want_bins[(x % 256) as usize] += 1;
        }
        let want_sum = a.iter().fold(0u64, |s, &x| s.wrapping_add(x as u64));
        let want_max = *a.iter().max().unwrap() as u64;
        assert_eq!(got_bins, want_bins, "histogram, n = {n}");
        assert_eq!(got_total[0], want_sum, "u64 atomic sum, n = {n}");
        assert_eq!(got_total[1], want_max, "u32 atomic max (low half of a zeroed u64), n = {n}");
    }
}

// ---------------------------------------------------------------------------------------------------------
// Device API: dynamic shared memory arena (> 48 KiB)

/// Bytes the arena kernel carves at 256 threads: 3 u8, pad to 8, 256 u64, 256 * 64 u32.
const ARENA_BYTES: usize = 8 + 256 * 8 + 256 * 64 * 4;

fn launch_arena(gpu: &Gpu, f: &cudarc::driver::CudaFunction, a: &[u32], shared: usize) -> zkgpu::Result<Vec<u32>> {
    let n = a.len();
    let da = gpu.upload(a)?;
    let mut out = gpu.alloc_zeroed::<u32>(n)?;
    let n32 = n as u32;
    let mut cfg = launch_config_1d(n, 256);
    cfg.shared_mem_bytes = shared as u32;
    let mut launch = gpu.stream().launch_builder(f);
    launch.arg(da.raw()).arg(out.raw_mut()).arg(&n32);
    // SAFETY: a and out hold n u32s each and do not alias; 1-D blocks of 256.
    unsafe { launch.launch(cfg) }?;
    gpu.download(&out)
}

fn arena_model(a: &[u32], i: usize) -> u32 {
    let block = 256;
    let base = i / block * block;
    let partner = base + (block - 1 - i % block);
    let v = a.get(partner).copied().unwrap_or(0);
    // sum_k (v + k) for k < 64, plus v from the u64 slot, plus the bytes 1 + 2 + 3.
    v.wrapping_mul(65).wrapping_add(63 * 64 / 2).wrapping_add(6)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn shared_arena_round_trips_through_more_than_48k_of_dynamic_shared_memory() {
    let gpu = gpu();
    let mut rng = common::seeded_rng("shared_arena_round_trips_through_more_than_48k_of_dynamic_shared_memory");
    const { assert!(ARENA_BYTES > zkgpu::DEFAULT_DYNAMIC_SHARED_LIMIT) };
    assert!(
        gpu.info().max_shared_per_block_optin >= ARENA_BYTES,
        "device allows only {} bytes of shared memory per block",
        gpu.info().max_shared_per_block_optin
    );
    let f = gpu.function("device_api_shared_arena").unwrap();
    let a = random_u32s(&mut rng, 1000);

    // (Whether a launch before the opt-in fails is not checked: modules, and so the function's attribute, are
    // shared by every handle in the process, and another test may have opted in already.)
    gpu.allow_dynamic_shared(&f, ARENA_BYTES).unwrap();
    for n in [1usize, 255, 256, 257, 1000, 70_000] {
        let a = random_u32s(&mut rng, n);
        let got = launch_arena(&gpu, &f, &a, ARENA_BYTES).unwrap();
        let want: Vec<u32> = (0..n).map(|i| arena_model(&a, i)).collect();
        assert_eq!(got, want, "arena round trip, n = {n}");
    }

    // Too little shared memory: the arena's bounds check refuses, every output says so.
    let got = launch_arena(&gpu, &f, &a, ARENA_BYTES - 1).unwrap();
    assert!(got.iter().all(|&x| x == 0xdead_beef), "a launch one byte short must fail the arena's bounds check");
    let got = launch_arena(&gpu, &f, &a, 0).unwrap();
    assert!(got.iter().all(|&x| x == 0xdead_beef), "a launch with no shared memory must fail the bounds check");

    // Beyond the device's limit: refused on the host before any launch.
    let too_much = gpu.info().max_shared_per_block_optin + 1;
    assert!(matches!(gpu.allow_dynamic_shared(&f, too_much), Err(Error::InvalidLaunch(_))));
    // The context still works.
    assert_eq!(run_binary::<u32, u32>(&gpu, "smoke_add_u32", &[1, 2], &[3, 4]), vec![4, 6]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn function_with_shared_sets_the_attribute_and_the_config() {
    let gpu = gpu();
    let a: Vec<u32> = (0..513).collect();
    let (f, cfg) =
        gpu.function_with_shared("device_api_shared_arena", launch_config_1d(a.len(), 256), ARENA_BYTES).unwrap();
    assert_eq!(cfg.shared_mem_bytes as usize, ARENA_BYTES);
    let got = launch_arena(&gpu, &f, &a, ARENA_BYTES).unwrap();
    let want: Vec<u32> = (0..a.len()).map(|i| arena_model(&a, i)).collect();
    assert_eq!(got, want);
}

// ---------------------------------------------------------------------------------------------------------
// Transfers: every DeviceSafe type, pageable and pinned

fn round_trip<T: DeviceSafe + PartialEq + std::fmt::Debug>(gpu: &Gpu, what: &str, values: &[T]) {
    let buf = gpu.upload(values).unwrap_or_else(|e| panic!("{what}: upload: {e}"));
    assert_eq!(buf.len(), values.len(), "{what}");
    assert_eq!(buf.byte_len(), size_of_val(values), "{what}");
    let back = gpu.download(&buf).unwrap_or_else(|e| panic!("{what}: download: {e}"));
    assert_eq!(bytes_of(&back), bytes_of(values), "{what}: bytes differ after a round trip of {}", values.len());
    assert_eq!(back, values, "{what}");
    // Into an existing buffer and back into an existing slice.
    let mut buf2 = gpu.alloc_zeroed::<T>(values.len()).unwrap();
    gpu.upload_into(values, &mut buf2).unwrap();
    let mut host = back.clone();
    host.reverse();
    gpu.download_into(&buf2, &mut host).unwrap();
    assert_eq!(bytes_of(&host), bytes_of(values), "{what}: upload_into/download_into");
}

fn round_trip_sizes<T: DeviceSafe + PartialEq + std::fmt::Debug>(gpu: &Gpu, what: &str, mut make: impl FnMut() -> T) {
    for n in [0usize, 1, 7, 1000] {
        let values: Vec<T> = (0..n).map(|_| make()).collect();
        round_trip(gpu, what, &values);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_device_safe_type_round_trips_exactly() {
    let gpu = gpu();
    let mut rng = common::seeded_rng("every_device_safe_type_round_trips_exactly");
    round_trip_sizes(&gpu, "u8", || (rng.next_u32() & 0xff) as u8);
    round_trip_sizes(&gpu, "u32", || rng.next_u32());
    round_trip_sizes(&gpu, "u64", || rng.next_u64());
    round_trip_sizes(&gpu, "[u32; 12]", || std::array::from_fn::<u32, 12, _>(|_| rng.next_u32()));
    round_trip_sizes(&gpu, "Scalar", || blstrs::Scalar::random(&mut rng));
    round_trip_sizes(&gpu, "Fp", || blstrs::Fp::random(&mut rng));
    round_trip_sizes(&gpu, "Fp2", || blstrs::Fp2::random(&mut rng));
    round_trip_sizes(&gpu, "G1Affine", || blstrs::G1Projective::random(&mut rng).to_affine());
    round_trip_sizes(&gpu, "G2Affine", || blstrs::G2Projective::random(&mut rng).to_affine());
    round_trip_sizes(&gpu, "G1Projective", || blstrs::G1Projective::random(&mut rng));
    round_trip_sizes(&gpu, "G2Projective", || blstrs::G2Projective::random(&mut rng));
    // Identities (all-zero affine in blst's convention) survive too.
    round_trip(&gpu, "G1Affine identity", &[blstrs::G1Affine::identity(); 3]);
    round_trip(&gpu, "G2Projective identity", &[blstrs::G2Projective::identity(); 3]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn length_mismatches_are_typed_errors_and_leave_outputs_untouched() {
    let gpu = gpu();
    let mut buf = gpu.upload(&[1u32, 2, 3]).unwrap();
    assert!(matches!(gpu.upload_into(&[1u32, 2], &mut buf), Err(Error::LengthMismatch { expected: 3, actual: 2, .. })));
    let mut host = vec![9u32; 4];
    assert!(matches!(gpu.download_into(&buf, &mut host), Err(Error::LengthMismatch { expected: 3, actual: 4, .. })));
    assert_eq!(host, vec![9; 4], "the output must be untouched on error");
    assert_eq!(gpu.download(&buf).unwrap(), vec![1, 2, 3], "the device buffer must be untouched on error");
    let mut pinned = gpu.alloc_pinned::<u32>(2, PinnedMode::ReadBack).unwrap();
    assert!(matches!(gpu.upload_async(&mut pinned, &mut buf), Err(Error::LengthMismatch { .. })));
    assert!(matches!(gpu.download_async(&mut buf, &mut pinned), Err(Error::LengthMismatch { .. })));
    assert_eq!(&pinned[..], &[0, 0]);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn pinned_buffers_round_trip_in_both_modes() {
    let gpu = gpu();
    let mut rng = common::seeded_rng("pinned_buffers_round_trip_in_both_modes");
    for n in [0usize, 1, 1000, 1 << 22] {
        let values = random_u32s(&mut rng, n);
        for mode in [PinnedMode::WriteCombined, PinnedMode::ReadBack] {
            let mut src = gpu.alloc_pinned::<u32>(n, mode).unwrap();
            assert_eq!(src.len(), n);
            assert_eq!(src.mode(), mode);
            if mode == PinnedMode::ReadBack {
                assert!(src.iter().all(|&x| x == 0), "pinned buffers start zeroed");
            }
            src.copy_from_slice(&values);
            let mut dev = gpu.alloc_zeroed::<u32>(n).unwrap();
            gpu.upload_async(&mut src, &mut dev).unwrap();
            let mut back = gpu.alloc_pinned::<u32>(n, PinnedMode::ReadBack).unwrap();
            gpu.download_async(&mut dev, &mut back).unwrap();
            // Deref waits for the download.
            assert_eq!(&back[..], &values[..], "n = {n}, {mode:?}");
            back.wait().unwrap();
            assert!(!back.is_busy().unwrap());
            // A pinned slice through the synchronous path works too.
            assert_eq!(gpu.download(&gpu.upload(&src[..]).unwrap()).unwrap(), values, "n = {n}, {mode:?}");
        }
    }
    // pin_slice copies a Vec into pinned memory.
    let scalars: Vec<blstrs::Scalar> = (0..100).map(|_| blstrs::Scalar::random(&mut rng)).collect();
    let mut pinned = gpu.pin_slice(&scalars, PinnedMode::WriteCombined).unwrap();
    let mut dev = gpu.alloc_zeroed::<blstrs::Scalar>(100).unwrap();
    gpu.upload_async(&mut pinned, &mut dev).unwrap();
    assert_eq!(gpu.download(&dev).unwrap(), scalars);
}

// ---------------------------------------------------------------------------------------------------------
// Two streams: copies on the copy stream, kernels on the compute stream, ordered by events

/// The cross-stream sequences of the reliability issue, 100 rounds each on 64 MiB buffers (wide windows):
/// (1) kernels read `s` on the compute stream, `download_async(s)` and `upload_async(.., s)` follow on the copy
///     stream: the kernels and the download must see the old `s`, and `s` ends with the new values;
/// (2) `download_async(s)` on the copy stream, then a kernel writes `s` on the compute stream: the download must
///     see the old `s`.
#[test]
#[ignore = "needs a CUDA GPU"]
fn cross_stream_reads_and_writes_are_ordered() {
    let gpu = gpu();
    let f = gpu.function("smoke_add_u32").unwrap();
    let n = 16 << 20;
    let n32 = n as u32;
    let ones = gpu.upload(&vec![1u32; n]).unwrap();
    let mut s = gpu.alloc_zeroed::<u32>(n).unwrap();
    let mut out = gpu.alloc_zeroed::<u32>(n).unwrap();
    let mut staged = gpu.alloc_pinned::<u32>(n, PinnedMode::WriteCombined).unwrap();
    let mut back = gpu.alloc_pinned::<u32>(n, PinnedMode::ReadBack).unwrap();
    let all = |values: &[u32], want: u32, what: &str, round: u32| {
        if let Some(i) = values.iter().position(|&v| v != want) {
            panic!("round {round}: {what}[{i}] = {}, want {want}", values[i]);
        }
    };
    for round in 0..100u32 {
        let (old, new) = (3 * round, 3 * round + 1);
        gpu.upload_into(&vec![old; n], &mut s).unwrap();
        // (1) Several kernels reading s, to keep the compute stream busy while the copies are queued.
        for _ in 0..8 {
            let mut launch = gpu.stream().launch_builder(&f);
            launch.arg(s.raw()).arg(ones.raw()).arg(out.raw_mut()).arg(&n32);
            // SAFETY: three buffers of n u32s; out aliases neither input.
            unsafe { launch.launch(launch_config_1d(n, BLOCK)) }.unwrap();
        }
        gpu.download_async(&mut s, &mut back).unwrap();
        staged.fill(new); // waits for the previous round's upload from `staged`
        gpu.upload_async(&mut staged, &mut s).unwrap();
        all(&back, old, "downloaded s", round); // waits for the download
        all(&gpu.download(&out).unwrap(), old + 1, "kernel output", round);
        gpu.synchronize().unwrap();
        all(&gpu.download(&s).unwrap(), new, "s after the upload", round);
        // (2) A kernel writing s right after a download of s queued on the copy stream.
        gpu.download_async(&mut s, &mut back).unwrap();
        let mut launch = gpu.stream().launch_builder(&f);
        launch.arg(ones.raw()).arg(ones.raw()).arg(s.raw_mut()).arg(&n32);
        // SAFETY: three buffers of n u32s; s aliases neither input.
        unsafe { launch.launch(launch_config_1d(n, BLOCK)) }.unwrap();
        all(&back, new, "s downloaded before the kernel wrote it", round);
        all(&gpu.download(&s).unwrap(), 2, "s written by the kernel", round);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn copy_stream_uploads_are_ordered_before_compute_kernels_and_downloads_after() {
    let gpu = gpu();
    let mut rng = common::seeded_rng("copy_stream_uploads_are_ordered_before_compute_kernels_and_downloads_after");
    let f = gpu.function("smoke_add_u32").unwrap();
    // Big enough (64 MiB per buffer) that a missing wait would show as stale or partial data.
    let n = 16 << 20;
    let mut src_a = gpu.alloc_pinned::<u32>(n, PinnedMode::WriteCombined).unwrap();
    let mut src_b = gpu.alloc_pinned::<u32>(n, PinnedMode::WriteCombined).unwrap();
    let mut back = gpu.alloc_pinned::<u32>(n, PinnedMode::ReadBack).unwrap();
    let mut dev_a = gpu.alloc_zeroed::<u32>(n).unwrap();
    let mut dev_b = gpu.alloc_zeroed::<u32>(n).unwrap();
    let mut dev_out = gpu.alloc_zeroed::<u32>(n).unwrap();
    for round in 0..4 {
        let a = random_u32s(&mut rng, n);
        let b = random_u32s(&mut rng, n);
        src_a.copy_from_slice(&a); // waits for the previous round's upload of src_a
        src_b.copy_from_slice(&b);
        gpu.upload_async(&mut src_a, &mut dev_a).unwrap();
        gpu.upload_async(&mut src_b, &mut dev_b).unwrap();
        let n32 = n as u32;
        let mut launch = gpu.stream().launch_builder(&f);
        launch.arg(dev_a.raw()).arg(dev_b.raw()).arg(dev_out.raw_mut()).arg(&n32);
        // SAFETY: three buffers of n u32s, out aliases neither input.
        unsafe { launch.launch(launch_config_1d(n, BLOCK)) }.unwrap();
        gpu.download_async(&mut dev_out, &mut back).unwrap();
        let got = &back[..]; // waits for the download
        if let Some(i) = (0..n).find(|&i| got[i] != a[i].wrapping_add(b[i])) {
            panic!("round {round}: element {i} is {:#x}, want {:#x}", got[i], a[i].wrapping_add(b[i]));
        }
    }
    // Explicit cross-stream joins work too.
    gpu.copy_waits_for_compute().unwrap();
    gpu.compute_waits_for_copy().unwrap();
    gpu.synchronize().unwrap();
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn time_ms_measures_device_time() {
    let gpu = gpu();
    let f = gpu.function("device_api_warp_sum_xor").unwrap();
    let n = 1 << 24;
    let a = gpu.alloc_zeroed::<u32>(n).unwrap();
    let mut out = gpu.alloc_zeroed::<u32>(n).unwrap();
    let n32 = n as u32;
    let launch_once = |stream: &Arc<CudaStream>, out: &mut zkgpu::DeviceBuffer<u32>| -> zkgpu::Result<()> {
        let mut launch = stream.launch_builder(&f);
        launch.arg(a.raw()).arg(out.raw_mut()).arg(&n32);
        // SAFETY: a and out hold n u32s each.
        unsafe { launch.launch(launch_config_1d(n, BLOCK)) }?;
        Ok(())
    };
    // Only bounds that cannot depend on what else the GPU is doing (other tests run concurrently and share
    // the device; relative timings between launches are for the benchmarks, not tests): the device time
    // between the two events is positive, and no longer than the host wall time around the whole call.
    for launches in [1, 10] {
        let wall = std::time::Instant::now();
        let ms = gpu
            .time_ms(|s| {
                for _ in 0..launches {
                    launch_once(s, &mut out)?;
                }
                Ok(())
            })
            .unwrap();
        let wall_ms = wall.elapsed().as_secs_f64() * 1e3;
        println!("{launches} launch(es): {ms:.4} ms device, {wall_ms:.4} ms wall");
        assert!(ms.is_finite() && ms > 0.0, "{ms}");
        assert!(f64::from(ms) <= wall_ms + 0.01, "device time {ms} ms exceeds the wall time {wall_ms} ms");
    }
    // EventTimer directly.
    let timer = zkgpu::EventTimer::start(gpu.stream()).unwrap();
    launch_once(gpu.stream(), &mut out).unwrap();
    let ms = timer.stop().unwrap();
    assert!(ms.is_finite() && ms > 0.0);
    // An error inside the closure comes back as is.
    assert!(matches!(gpu.time_ms(|_| Err(Error::InvalidLaunch("test".into()))), Err(Error::InvalidLaunch(_))));
}

// ---------------------------------------------------------------------------------------------------------
// Devices and errors

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_gpu_is_enumerated_and_runs_kernels() {
    let count = Gpu::count().unwrap();
    assert!(count >= 1, "no GPU found");
    let all = Gpu::all().unwrap();
    assert_eq!(all.len(), count);
    for (ordinal, gpu) in all.iter().enumerate() {
        let info = gpu.info();
        println!("{info:?}");
        assert_eq!(info.ordinal, ordinal);
        assert!(!info.name.is_empty());
        assert!(info.compute_capability.0 >= 8);
        let want_arch = if info.compute_capability.0 >= 9 { "sm_90" } else { "sm_80" };
        assert_eq!(info.ptx_arch, want_arch);
        assert!(info.sm_count > 0 && info.total_memory > 0 && info.max_threads_per_block >= 1024);
        assert!(info.max_shared_per_block_optin >= zkgpu::DEFAULT_DYNAMIC_SHARED_LIMIT);
        assert!(info.driver_version.contains('.'));
        let (free, total) = gpu.memory_info().unwrap();
        assert!(free <= total && total > 0, "free {free}, total {total}");
        let got: Vec<u32> = run_binary(gpu, "smoke_add_u32", &[1u32, 2, 3], &[ordinal as u32; 3]);
        assert_eq!(got, vec![1 + ordinal as u32, 2 + ordinal as u32, 3 + ordinal as u32]);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn bad_ordinal_and_missing_kernel_are_typed_errors() {
    let count = Gpu::count().unwrap();
    match Gpu::new(999) {
        Err(Error::DeviceIndex { ordinal: 999, count: c }) => assert_eq!(c, count),
        other => panic!("Gpu::new(999) gave {other:?}"),
    }
    let gpu = gpu();
    match gpu.function("no_such_kernel") {
        Err(Error::MissingKernel(name)) => assert_eq!(name, "no_such_kernel"),
        other => panic!("unknown kernel gave {other:?}"),
    }
    assert!(matches!(gpu.function("smoke\0add"), Err(Error::MissingKernel(_))));
    assert!(matches!(gpu.function(""), Err(Error::MissingKernel(_))));
    assert!(gpu.function("smoke_add_u32").is_ok());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn out_of_memory_is_typed_and_does_not_poison_the_context() {
    let gpu = gpu();
    let total = gpu.info().total_memory;
    match gpu.alloc_zeroed::<u8>(total * 2) {
        Err(Error::OutOfMemory { requested, total: t, .. }) => {
            assert_eq!(requested, total * 2);
            assert_eq!(t, total);
        }
        other => panic!("allocating twice the device memory gave {:?}", other.map(|b| b.len())),
    }
    match gpu.upload::<u8>(&[]) {
        Ok(b) => assert!(b.is_empty()),
        Err(e) => panic!("empty upload after OOM: {e}"),
    }
    // Byte counts that overflow are refused before the driver sees them.
    assert!(matches!(gpu.alloc_zeroed::<u64>(usize::MAX / 4), Err(Error::SizeOverflow(_))));
    assert!(matches!(gpu.alloc_pinned::<u64>(usize::MAX / 4, PinnedMode::ReadBack), Err(Error::SizeOverflow(_))));
    // The context still runs kernels, allocates and copies.
    let got: Vec<u32> = run_binary(&gpu, "smoke_add_u32", &[40u32; 1000], &[2u32; 1000]);
    assert_eq!(got, vec![42; 1000]);
    let big = gpu.alloc_zeroed::<u8>(1 << 30).unwrap();
    assert_eq!(big.len(), 1 << 30);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn raw_ranges_launch_a_kernel_on_one_chunk() {
    let gpu = gpu();
    let mut rng = common::seeded_rng("raw_ranges_launch_a_kernel_on_one_chunk");
    let n = 1000;
    let a = random_u32s(&mut rng, n);
    let b = random_u32s(&mut rng, n);
    let da = gpu.upload(&a).unwrap();
    let db = gpu.upload(&b).unwrap();
    let mut out = gpu.alloc_zeroed::<u32>(n).unwrap();
    let f = gpu.function("smoke_add_u32").unwrap();
    let (start, end) = (300, 777);
    let chunk = (end - start) as u32;
    {
        let va = da.raw_range(start..end).unwrap();
        let vb = db.raw_range(start..end).unwrap();
        let mut vo = out.raw_range_mut(start..end).unwrap();
        let mut launch = gpu.stream().launch_builder(&f);
        launch.arg(&va).arg(&vb).arg(&mut vo).arg(&chunk);
        // SAFETY: each view holds `chunk` u32s; out aliases neither input.
        unsafe { launch.launch(launch_config_1d(chunk as usize, BLOCK)) }.unwrap();
    }
    let got = gpu.download(&out).unwrap();
    for i in 0..n {
        let want = if (start..end).contains(&i) { a[i].wrapping_add(b[i]) } else { 0 };
        assert_eq!(got[i], want, "element {i}");
    }
    assert!(matches!(da.raw_range(0..n + 1), Err(Error::LengthMismatch { .. })));
    #[allow(clippy::reversed_empty_ranges)]
    let reversed = da.raw_range(5..4);
    assert!(matches!(reversed, Err(Error::LengthMismatch { .. })));
    assert_eq!(da.raw_range(n..n).unwrap().len(), 0);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn pinned_pool_reuses_blocks_and_respects_its_cap() {
    const MIB: usize = 1 << 20;
    let gpu = gpu();
    let mut rng = common::seeded_rng("pinned_pool_reuses_blocks_and_respects_its_cap");
    let pool = zkgpu::PinnedPool::new(&gpu, PinnedMode::ReadBack, Some(3 * MIB));
    let a = pool.take::<u32>(MIB / 4).unwrap();
    let b = pool.take::<u32>(MIB / 4).unwrap();
    assert_eq!(pool.stats(), zkgpu::PoolStats { pinned_bytes: 2 * MIB, free_bytes: 0, free_blocks: 0 });
    match pool.take::<u8>(2 * MIB) {
        Err(Error::PinnedPoolExhausted { requested, pinned, limit }) => {
            assert_eq!((requested, pinned, limit), (2 * MIB, 2 * MIB, 3 * MIB));
        }
        other => panic!("over the cap gave {other:?}"),
    }
    let a_addr = a.as_ptr() as usize;
    drop(a);
    assert_eq!(pool.stats().free_blocks, 1);
    // A smaller request (of another type) reuses the free block.
    let c = pool.take::<blstrs::Scalar>(1000).unwrap();
    assert_eq!(c.as_ptr() as usize, a_addr, "the free block must be reused");
    assert_eq!(pool.stats().free_blocks, 0);
    drop(c);
    drop(b);
    // Two idle 1 MiB blocks, both too small for 2 MiB: they are unpinned before the new block is pinned.
    let d = pool.take::<u8>(2 * MIB).unwrap();
    assert_eq!(pool.stats(), zkgpu::PoolStats { pinned_bytes: 2 * MIB, free_bytes: 0, free_blocks: 0 });
    drop(d);
    pool.release_free();
    assert_eq!(pool.stats(), zkgpu::PoolStats { pinned_bytes: 0, free_bytes: 0, free_blocks: 0 });

    // Pooled buffers transfer like any pinned buffer, and reused contents are overwritten as expected.
    let upload_pool = zkgpu::PinnedPool::new(&gpu, PinnedMode::WriteCombined, None);
    for round in 0..3 {
        let n = 100_000 + round;
        let values = random_u32s(&mut rng, n);
        let mut src = upload_pool.take::<u32>(n).unwrap();
        src.copy_from_slice(&values);
        let mut dev = gpu.alloc_zeroed::<u32>(n).unwrap();
        gpu.upload_async(&mut src, &mut dev).unwrap();
        let mut back = pool.take::<u32>(n).unwrap();
        gpu.download_async(&mut dev, &mut back).unwrap();
        assert_eq!(&back[..], &values[..], "round {round}");
    }
    assert!(upload_pool.stats().free_blocks >= 1);
    // Empty buffers need no block.
    assert!(pool.take::<u64>(0).unwrap().is_empty());
    // A buffer outliving its pool is simply freed.
    let orphan = upload_pool.take::<u8>(4096).unwrap();
    drop(upload_pool);
    drop(orphan);
}
