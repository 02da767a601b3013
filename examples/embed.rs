//! Embedding zkgpu in a prover: open a GPU, move blstrs values to the device as they are, run a kernel, time
//! it with CUDA events, and check the result against blstrs on the CPU.
//!
//! `cargo run --release --example embed` (on a machine without a GPU it prints the typed error and exits 1).
use cudarc::driver::PushKernelArg;
use ff::Field;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

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

    let mut rng = ChaCha20Rng::seed_from_u64(42);
    let a: Vec<blstrs::Scalar> = (0..1 << 20).map(|_| blstrs::Scalar::random(&mut rng)).collect();
    let b: Vec<blstrs::Scalar> = (0..1 << 20).map(|_| blstrs::Scalar::random(&mut rng)).collect();

    // blstrs values go to the device as bytes: their layout is the kernels' (checked by tests/layout.rs).
    let (da, db) = (gpu.upload(&a)?, gpu.upload(&b)?);
    let mut out = gpu.alloc_zeroed::<blstrs::Scalar>(a.len())?;
    let n = u32::try_from(a.len()).map_err(|_| zkgpu::Error::SizeOverflow("element count".into()))?;
    let kernel = gpu.function("arith_fr_mul")?;
    let ms = gpu.time_ms(|stream| {
        let mut launch = stream.launch_builder(&kernel);
        launch.arg(da.raw()).arg(db.raw()).arg(out.raw_mut()).arg(&n);
        // SAFETY: one thread per element i < n reads a[i], b[i] and writes out[i]; all hold n elements and
        // out aliases neither input.
        unsafe { launch.launch(zkgpu::launch_config_1d(a.len(), 256)) }?;
        Ok(())
    })?;
    let products = gpu.download(&out)?;

    let wrong = products.iter().zip(a.iter().zip(&b)).filter(|(p, (x, y))| **p != **x * **y).count();
    println!("2^20 Fr multiplications: {ms:.3} ms of device time, {wrong} wrong");
    if wrong == 0 { Ok(()) } else { Err(zkgpu::Error::InvalidLaunch(format!("{wrong} wrong products"))) }
}
