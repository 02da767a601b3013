//! Multi-scalar multiplication `Σ sᵢ·Pᵢ` over G1 and G2 on the GPU (Pippenger's bucket method, signed
//! digits, every stage on the device, window combination included). The CPU reference is
//! [`crate::msm::cpu`].
//!
//! The algorithm, its stages and thread mapping are described in `zkgpu_kernels::msm`; measured numbers and
//! what limits them are in DESIGN.md ("MSM").
//!
//! - **Bases** come from the host ([`Bases::Host`], pinned or pageable) or stay on the device
//!   ([`MsmBases`], uploaded once: a Groth16 SRS is the same for every proof). Device bases may carry
//!   fixed-base precomputation ([`MsmBases::precompute`]): `copies` shifted copies of the table cut the
//!   bucket sets (and doublings) from `W` to `⌈W / copies⌉`, which makes larger windows pay; the cost is
//!   `copies ×` the table's memory.
//! - **Scalars** come from the host ([`Scalars::Host`]) or the device ([`Scalars::Device`]).
//! - **Chunks**: points are processed in chunks (buckets persist across them). With host inputs, the next
//!   chunk's upload runs on the copy stream while the current chunk computes; device inputs use chunks only
//!   to bound the scratch memory (2^25 points per chunk by default, 2^24 with affine accumulation).
//! - **Several tables, one scalar vector** ([`Msm::enqueue_tables`]): the MSMs of one scalar vector over
//!   several base tables (a Groth16 assignment's A, B and L queries) share the sort when the scalars fit one
//!   chunk; only the bucket stages run per table.
//! - **Determinism**: the result is normalized to `Z = 1` on the host (with the default counting sort the
//!   order inside a bucket varies from run to run, the point does not; [`Sort::Radix`] is stable), so results
//!   are bit-identical run to run.
//!
//! ```no_run
//! # fn main() -> zkgpu::Result<()> {
//! use group::{Curve, Group};
//! use zkgpu::msm::{Bases, DeviceLimits, G1, Msm, MsmBases, MsmConfig, MsmPlan, Scalars};
//! let gpu = zkgpu::Gpu::new(0)?;
//! let g = blstrs::G1Projective::generator();
//! let bases: Vec<blstrs::G1Affine> = (1..=4u64).map(|k| (g * blstrs::Scalar::from(k)).to_affine()).collect();
//! let scalars: Vec<blstrs::Scalar> = (1..=4u64).map(blstrs::Scalar::from).collect();
//! // One-shot:
//! let sum = zkgpu::msm::msm::<G1>(&gpu, &bases, &scalars)?;
//! // Bases resident on the device, many MSMs with new scalars:
//! let srs = MsmBases::<G1>::upload(&gpu, &bases)?;
//! // A plan fitted to the memory the device has left beside the bases:
//! let plan = MsmPlan::within::<G1>(bases.len(), &MsmConfig::default(), false, &DeviceLimits::of(&gpu)?)?;
//! let mut msm = Msm::<G1>::new(&gpu, plan)?;
//! let again = msm.run(Bases::Device(&srs), Scalars::Host(&scalars))?;
//! assert_eq!(sum, again);
//! # Ok(())
//! # }
//! ```
/// The CPU reference (tests compare the GPU against it).
pub mod cpu;

use std::ops::Range;

use blstrs::Scalar;
use cudarc::driver::{CudaEvent, LaunchConfig};
use zkgpu_kernels::interface::{self, sig};
use zkgpu_kernels::msm::{FOLD_RUNS, MAX_WINDOW_BITS, SCAN_BLOCK, SCAN_SPAN, WindowWidths, window_count};
use zkgpu_kernels::msm_sort::{
    RADIX_BITS, SORT_BLOCK, SORT_GRID, downsweep_shared_bytes, radix_bits, radix_passes, sort_grid,
    upsweep_shared_bytes,
};

use crate::batch_add::{XyzzSetSum, reduce_scratch_len};
pub use crate::curve::{Curve, G1, G2};
use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::kernel_args::{self as args, KernelFn, Ptr, read, read_or_null, write};
use crate::launch::launch_config_1d;
use crate::memory::{DeviceBuffer, as_bytes};
use crate::profile::{PhaseKind, PhaseRecorder};

mod bases;
mod engine;
mod plan;
mod stream;

pub use bases::*;
pub use engine::*;
pub use plan::*;
pub(crate) use stream::*;
