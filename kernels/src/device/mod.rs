//! The device API: a small cuda_std-like layer over `core::arch::nvptx`, LLVM NVVM intrinsics and inline PTX.
//!
//! - `index`: thread / block / grid indices and dimensions, lane and warp ids, `global_thread_index`,
//!   the grid-stride loop `for_each_index`;
//! - `sync`: block barrier, warp barrier, memory fences;
//! - `warp`: shuffles (idx / up / down / xor), votes (all / any / ballot) and `match.any`;
//! - [`atomic`]: relaxed atomics on global or shared memory (`atom.add`, `atom.max`, ...);
//! - `copy`: 16-byte global <-> shared copies (`cp.async`, vector load/store);
//! - [`shared`]: an arena over the launch-sized dynamic shared memory that hands out typed, aligned,
//!   non-overlapping slices with bounds checks.
//!
//! Everything that touches the hardware is `#[cfg(target_arch = "nvptx64")]`; the arena's carving logic
//! ([`shared::SharedArena::from_raw`]) is target-independent so the host can test it.

pub mod atomic;
pub mod shared;

#[cfg(target_arch = "nvptx64")]
pub mod index;
#[cfg(target_arch = "nvptx64")]
pub mod sync;
#[cfg(target_arch = "nvptx64")]
pub mod copy;
#[cfg(target_arch = "nvptx64")]
pub mod warp;

#[cfg(target_arch = "nvptx64")]
pub use index::*;
#[cfg(target_arch = "nvptx64")]
pub use sync::*;
#[cfg(target_arch = "nvptx64")]
pub use copy::*;
#[cfg(target_arch = "nvptx64")]
pub use warp::*;
pub use shared::{SharedArena, SharedSlice};
