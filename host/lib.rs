//! zkgpu: BLS12-381 GPU kernels written in Rust, and the host library that drives them.
//!
//! The host side is layered, a folder per layer (`host/runtime/`, one folder per algorithm with its CPU
//! reference in `cpu.rs`, `host/pipeline/` and `host/groth16/` for the prover):
//! - [`raw`]: the few direct driver calls cudarc's safe API lacks, and the driver-presence guard (cudarc
//!   panics when `libcuda` is missing, so every entry point checks first and returns [`Error::NoDriver`]);
//! - cudarc's safe API (contexts, streams, events, `CudaSlice`, launches), used as is;
//! - the typed API here: [`Gpu`] (a device with its PTX module and a compute and a copy stream),
//!   [`DeviceBuffer`] / [`PinnedBuffer`] of [`DeviceSafe`] values (blstrs types go to the device as bytes),
//!   [`PinnedPool`] (pin a prover's working set once, reuse it), [`PhaseRecorder`] (phase timing),
//!   [`PartitionEngine`] / [`ProverPool`] (the Groth16 partition pipeline on one or several GPUs),
//!   `groth16` (feature `bellperson`: proofs of bellperson circuits),
//!   [`EventTimer`] / [`Gpu::time_ms`], [`launch_config_1d`].
//!
//! # Which PTX runs
//! `build.rs` embeds two PTX modules, for sm_90 and sm_80, and [`Gpu::new`] picks by compute capability:
//! 9.0 and later load the sm_90 PTX, 8.x the sm_80 PTX, anything older is [`Error::UnsupportedArch`]. The
//! driver JIT-compiles the PTX on load, so no CUDA toolkit is needed at build or run time, only a driver.
//!
//! Where the PTX comes from (see `build.rs`): when the pinned nightly named in `rust-toolchain.toml` is
//! installed with `rust-src`, the kernels are compiled from `kernels/` with rustc's `nvptx64-nvidia-cuda`
//! target; otherwise the PTX committed in `kernels/ptx/` is embedded. A prover on stable Rust therefore gets
//! the committed PTX with no extra setup (CI checks it equals what the sources build). [`PTX_SOURCE`] says
//! which happened in this build. `ZKGPU_PTX=build|prebuilt` forces one or the other.
//!
//! # The typed APIs
//! Inputs and outputs are blstrs types; every call returns [`Result`] (no panics on a caller's data).
//!
//! NTT over Fr (forward/inverse, coset, natural or bit-reversed orders), with the twiddles cached per size:
//! ```no_run
//! # fn main() -> zkgpu::Result<()> {
//! use zkgpu::{Gpu, Ntt, NttConfig};
//! let gpu = Gpu::new(0)?;
//! let ntt = Ntt::new(&gpu)?;
//! let mut values = vec![blstrs::Scalar::from(3u64); 1 << 20];
//! ntt.run_host(&mut values, 1 << 20, NttConfig::forward())?;
//! # Ok(())
//! # }
//! ```
//! MSM over G1 or G2 (`Σ sᵢ·Pᵢ`; [`msm::Msm`] keeps its scratch and the bases on the device across calls):
//! ```no_run
//! # fn main() -> zkgpu::Result<()> {
//! use blstrs::{G1Affine, Scalar};
//! use group::prime::PrimeCurveAffine;
//! use zkgpu::curve::G1;
//! let gpu = zkgpu::Gpu::new(0)?;
//! let (bases, scalars) = (vec![G1Affine::generator(); 1024], vec![Scalar::from(5u64); 1024]);
//! let sum = zkgpu::msm::msm::<G1>(&gpu, &bases, &scalars)?;
//! # Ok(())
//! # }
//! ```
//! Batch addition of affine points (all, or those a bitmap selects):
//! ```no_run
//! # fn main() -> zkgpu::Result<()> {
//! use group::prime::PrimeCurveAffine;
//! use zkgpu::batch_add::{Method, batch_add};
//! use zkgpu::curve::G1;
//! let gpu = zkgpu::Gpu::new(0)?;
//! let points = gpu.upload(&vec![blstrs::G1Affine::generator(); 1 << 16])?;
//! let sum = batch_add::<G1>(&gpu, &points, None, Method::Affine)?;
//! # Ok(())
//! # }
//! ```
//! The Groth16 partition pipeline ([`PartitionEngine`]: NTTs, H MSM, batch additions and tail MSMs of a
//! partition as one job, inputs streamed from pinned memory on a second stream): see [`pipeline`].
//!
//! Groth16 proofs of bellperson circuits (feature `bellperson`), byte-identical to bellperson's:
//! ```no_run
//! # #[cfg(feature = "bellperson")]
//! # fn main() -> zkgpu::Result<()> {
//! use rand_core::SeedableRng;
//! use zkgpu::groth16::{Groth16Prover, ProvingKey, circuits::Sha256Chain};
//! let gpu = zkgpu::Gpu::new(0)?;
//! let key = ProvingKey::read("sha256-38.params", false)?; // a bellperson parameter file
//! let mut prover = Groth16Prover::new(&gpu, key)?;
//! let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(7);
//! let proof = prover.prove(Sha256Chain::random(38, &mut rng), &mut rng)?; // bellperson's Proof<Bls12>
//! let circuits = (0..8).map(|_| Sha256Chain::random(38, &mut rng)).collect();
//! let proofs = prover.prove_batch(circuits, &mut rng)?; // synthesis on all cores while the GPU proves
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "bellperson"))]
//! # fn main() {}
//! ```

// The layers, bottom up: the runtime (driver, device, memory, modules, timing), the algorithms (each with
// its CPU reference in `cpu`), the prover layer.
pub mod runtime;
pub use runtime::{
    device, error, health, kernel_args, launch, memory, module, module_cache, pinned, profile, raw, timing,
};

pub mod curve;

pub mod batch_add;
pub mod msm;
pub mod ntt;

#[cfg(feature = "bellperson")]
pub mod groth16;
pub mod pipeline;

pub use device::{DeviceInfo, Gpu};
pub use error::{Error, Result};
pub use launch::{DEFAULT_DYNAMIC_SHARED_LIMIT, launch_config_1d, try_launch_config_1d};
pub use memory::{DeviceBuffer, DeviceSafe};
pub use module::{SM80, SM90};
pub use ntt::{Ntt, NttConfig};
pub use pinned::{PinnedBuffer, PinnedMode, PinnedPool, PoolStats};
pub use pipeline::{
    PartitionConfig, PartitionEngine, PartitionJob, PartitionOutput, PartitionSrs, ProverPool, StreamMode,
};
pub use profile::{MemoryWatch, PhaseRecorder, PhaseReport};
pub use timing::EventTimer;

/// Loads every production kernel module on `gpu` now ([`Gpu::warm_up`]): compiles what is neither prebuilt nor
/// in zkgpu's module cache and stores it there, so a service's first proof pays no compilation.
pub fn warm_up(gpu: &Gpu) -> Result<Vec<module::LoadedModule>> {
    gpu.warm_up()
}

/// Where this build's PTX came from: "built" (compiled from `kernels/` by build.rs with the pinned nightly)
/// or "committed" (the PTX checked in under `kernels/ptx/`).
pub const PTX_SOURCE: &str = env!("ZKGPU_PTX_SOURCE");
