//! Criterion benches for the host API: `cargo bench --bench host`.
//!
//! - `cpu_field`: one field multiplication on the CPU, zkgpu's arithmetic (the host build of the kernels'
//!   code) beside blstrs (blst's assembly), for Fq and Fr.
//! - `gpu`: device work timed with CUDA events (`Gpu::time_ms`) through criterion's `iter_custom`, so the
//!   numbers are device time, not host waits: a 2^20-element Fr multiplication kernel and a 2^20-element
//!   upload. Skipped, with a message, when no CUDA GPU is present.
//!
//! The kernel-variant sweeps with tables, JSON and plots are `cargo xtask bench`; this file is for quick
//! A/B checks of the host library itself.
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use cudarc::driver::PushKernelArg;
use ff::Field as _;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use std::hint::black_box;
use std::time::Duration;
use zkgpu_kernels::field::{Field, Fq, Fr};

const SEED: u64 = 0x5eed_6e5c;

fn cpu_field(c: &mut Criterion) {
    let mut rng = ChaCha20Rng::seed_from_u64(SEED);
    let (a, b) = (blstrs::Scalar::random(&mut rng), blstrs::Scalar::random(&mut rng));
    let (p, q) = (blstrs::Fp::random(&mut rng), blstrs::Fp::random(&mut rng));
    // The same values in zkgpu's types, through their canonical little-endian bytes.
    let (za, zb) =
        (Fr::from_canonical_limbs(limbs32(&a.to_bytes_le())), Fr::from_canonical_limbs(limbs32(&b.to_bytes_le())));
    let (zp, zq) =
        (Fq::from_canonical_limbs(limbs32(&p.to_bytes_le())), Fq::from_canonical_limbs(limbs32(&q.to_bytes_le())));

    let mut group = c.benchmark_group("cpu_field");
    group.throughput(Throughput::Elements(1));
    group.bench_function("mul_fr/zkgpu-host", |bench| bench.iter(|| black_box(black_box(&za).mul(black_box(&zb)))));
    group.bench_function("mul_fr/blstrs", |bench| bench.iter(|| black_box(black_box(a) * black_box(b))));
    group.bench_function("mul_fq/zkgpu-host", |bench| bench.iter(|| black_box(black_box(&zp).mul(black_box(&zq)))));
    group.bench_function("mul_fq/blstrs", |bench| bench.iter(|| black_box(black_box(p) * black_box(q))));
    group.finish();
}

fn limbs32<const B: usize, const N: usize>(bytes: &[u8; B]) -> [u32; N] {
    let mut out = [0u32; N];
    for (limb, chunk) in out.iter_mut().zip(bytes.chunks_exact(4)) {
        *limb = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
    }
    out
}

fn gpu(c: &mut Criterion) {
    let gpu = match zkgpu::Gpu::new(0) {
        Ok(gpu) => gpu,
        Err(e) => {
            eprintln!("gpu benches skipped: no CUDA GPU ({e})");
            return;
        }
    };
    const LOG_N: u32 = 20;
    let n = 1usize << LOG_N;
    let mut rng = ChaCha20Rng::seed_from_u64(SEED);
    let a: Vec<blstrs::Scalar> = (0..n).map(|_| blstrs::Scalar::random(&mut rng)).collect();
    let b: Vec<blstrs::Scalar> = (0..n).map(|_| blstrs::Scalar::random(&mut rng)).collect();
    let setup = || -> zkgpu::Result<_> {
        Ok((gpu.upload(&a)?, gpu.upload(&b)?, gpu.alloc_zeroed::<blstrs::Scalar>(n)?, gpu.function("arith_fr_mul")?))
    };
    let (da, db, mut out, kernel) = match setup() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("gpu benches skipped: setup failed ({e})");
            return;
        }
    };
    let n32 = n as u32;

    let mut group = c.benchmark_group("gpu");
    group.throughput(Throughput::Elements(n as u64));
    group.bench_function("arith_fr_mul/2^20", |bench| {
        bench.iter_custom(|iters| {
            let ms = gpu.time_ms(|stream| {
                for _ in 0..iters {
                    let mut launch = stream.launch_builder(&kernel);
                    launch.arg(da.raw()).arg(db.raw()).arg(out.raw_mut()).arg(&n32);
                    // SAFETY: thread i < n reads a[i], b[i] and writes out[i]; each buffer holds n Fr values
                    // and out aliases neither input.
                    unsafe { launch.launch(zkgpu::launch_config_1d(n, 256)) }?;
                }
                Ok(())
            });
            device_time(ms)
        })
    });
    group.throughput(Throughput::Bytes((n * 32) as u64));
    group.bench_function("upload_pageable/2^20_fr", |bench| {
        bench.iter_custom(|iters| {
            let ms = gpu.time_ms(|_| {
                for _ in 0..iters {
                    black_box(gpu.upload(&a)?);
                }
                Ok(())
            });
            device_time(ms)
        })
    });
    group.finish();
}

/// Criterion wants a Duration; a failed GPU call is a broken benchmark, reported loudly.
fn device_time(ms: zkgpu::Result<f32>) -> Duration {
    match ms {
        Ok(ms) => Duration::from_secs_f64(f64::from(ms) * 1e-3),
        Err(e) => panic!("GPU benchmark failed: {e}"),
    }
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
}

criterion_group! { name = benches; config = config(); targets = cpu_field, gpu }
criterion_main!(benches);
