//! zkgpu: BLS12-381 GPU kernels written in Rust, and the host library that drives them.
//!
//! The host side is layered:
//! - [`raw`]: the few direct driver calls cudarc's safe API lacks, and the driver-presence guard (cudarc
//!   panics when `libcuda` is missing, so every entry point checks first and returns [`Error::NoDriver`]);
//! - cudarc's safe API (contexts, streams, events, `CudaSlice`, launches), used as is;
//! - the typed API here: [`Gpu`] (a device with its PTX module and a compute and a copy stream),
//!   [`DeviceBuffer`] / [`PinnedBuffer`] of [`DeviceSafe`] values (blstrs types go to the device as bytes),
//!   [`PinnedPool`] (pin a prover's working set once, reuse it), [`PhaseRecorder`] (phase timing),
//!   [`PartitionEngine`] / [`ProverPool`] (the Groth16 partition pipeline on one or several GPUs),
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
//! # Example
//! ```no_run
//! use cudarc::driver::PushKernelArg;
//! # fn main() -> zkgpu::Result<()> {
//! let gpu = zkgpu::Gpu::new(0)?;
//! let a = gpu.upload(&[1u32, 2, 3])?;
//! let b = gpu.upload(&[10u32, 20, 30])?;
//! let mut out = gpu.alloc_zeroed::<u32>(3)?;
//! let n = 3u32;
//! let f = gpu.function("smoke_add_u32")?;
//! let mut launch = gpu.stream().launch_builder(&f);
//! launch.arg(a.raw()).arg(b.raw()).arg(out.raw_mut()).arg(&n);
//! // SAFETY: smoke_add_u32 reads n u32s from a and b and writes n to out; the buffers hold n each.
//! unsafe { launch.launch(zkgpu::launch_config_1d(3, 256)) }?;
//! assert_eq!(gpu.download(&out)?, vec![11, 22, 33]);
//! # Ok(())
//! # }
//! ```

pub mod batch_add;
pub mod batch_add_cpu;
pub mod curve;
pub mod device;
pub mod error;
#[cfg(feature = "bellperson")]
pub mod groth16;
pub mod launch;
pub mod memory;
pub mod module;
pub mod msm;
pub mod msm_cpu;
pub mod ntt;
pub mod ntt_cpu;
pub mod pinned;
pub mod pipeline;
pub mod pipeline_cpu;
pub mod profile;
pub mod raw;
pub mod timing;

pub use device::{DeviceInfo, Gpu};
pub use error::{Error, Result};
pub use launch::{DEFAULT_DYNAMIC_SHARED_LIMIT, launch_config_1d, try_launch_config_1d};
pub use memory::{DeviceBuffer, DeviceSafe};
pub use ntt::{Ntt, NttConfig};
pub use pinned::{PinnedBuffer, PinnedMode, PinnedPool, PoolStats};
pub use pipeline::{PartitionConfig, PartitionEngine, PartitionJob, PartitionOutput, PartitionSrs, ProverPool, StreamMode};
pub use profile::{PhaseRecorder, PhaseReport};
pub use module::{PTX_SM80, PTX_SM90, TEST_PTX_SM80, TEST_PTX_SM90};
pub use timing::EventTimer;

/// Where this build's PTX came from: "built" (compiled from `kernels/` by build.rs with the pinned nightly)
/// or "committed" (the PTX checked in under `kernels/ptx/`).
pub const PTX_SOURCE: &str = env!("ZKGPU_PTX_SOURCE");
