//! Embedding zkgpu in a prover: open a GPU, hand it `blstrs::Scalar` vectors as they are, run NTTs (device
//! resident, and from pinned host memory), and check against the CPU reference.
//!
//! `cargo run --release --example embed` (on a machine without a GPU it prints the typed error and exits 1).
//! Uses only production kernels, so it also works with the committed PTX (stable Rust, no kernel toolchain).
use ff::Field;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use zkgpu::ntt::cpu as ntt_cpu;
use zkgpu::{Ntt, NttConfig, PinnedMode};

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            // No driver or no GPU is a typed error (Error::NoDriver / Error::NoDevice), never a panic.
            eprintln!("embed: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> zkgpu::Result<()> {
    let gpu = zkgpu::Gpu::new(0)?;
    println!("{} (PTX {}, {})", gpu.info().name, gpu.info().ptx_arch, zkgpu::PTX_SOURCE);
    let ntt = Ntt::new(&gpu)?;

    let n = 1 << 20;
    let mut rng = ChaCha20Rng::seed_from_u64(42);
    let coeffs: Vec<blstrs::Scalar> = (0..n).map(|_| blstrs::Scalar::random(&mut rng)).collect();

    // Device resident: upload once, transform in place (queued on the compute stream), time with CUDA events.
    let mut buf = gpu.upload(&coeffs)?;
    ntt.prepare(n, NttConfig::forward())?; // twiddle tables built outside the timed region
    let ms = gpu.time_ms(|_| ntt.run(&mut buf, n, NttConfig::forward()))?;
    let evals = gpu.download(&buf)?;
    println!("forward NTT 2^20 on the device: {ms:.3} ms");

    // From page-locked host memory (what a prover's synthesis should write into): copies at PCIe line rate.
    let mut pinned = gpu.pin_slice(&evals, PinnedMode::ReadBack)?;
    ntt.run_host(&mut pinned, n, NttConfig::inverse())?;

    // Checks: spot values against the CPU reference, and the round trip.
    for k in [0, 1, n / 2, n - 1] {
        if evals[k] != ntt_cpu::output_at(&coeffs, NttConfig::forward(), k)? {
            return Err(zkgpu::Error::InvalidLaunch(format!("forward output {k} is wrong")));
        }
    }
    if pinned[..] != coeffs[..] {
        return Err(zkgpu::Error::InvalidLaunch("inverse(forward(x)) != x".into()));
    }
    println!("outputs match the CPU reference; inverse(forward(x)) == x");
    Ok(())
}
