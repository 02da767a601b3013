//! zkgpu kernels: BLS12-381 arithmetic and the GPU kernels built on it.
//!
//! One `no_std` source serves two builds:
//! - **host** (any target): the arithmetic compiles to portable Rust, so the CPU can run exactly the code the
//!   GPU runs (used as a second reference in tests and by the host crate);
//! - **nvptx64-nvidia-cuda**: `build.rs` compiles this crate to PTX; the `entry` module holds the kernels
//!   (`extern "ptx-kernel"`), and the arithmetic switches to inline-PTX carry chains.
//!
//! Layout: [`device`] is the small cuda_std-like API (thread indices, barriers, warp ops, atomics, shared
//! memory); [`field`] holds Fr, Fq, Fq2; [`curve`] holds G1/G2 point arithmetic; `entry` (nvptx only) holds
//! one file of kernels per algorithm.
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(
        abi_ptx,
        stdarch_nvptx,
        asm_experimental_arch,
        link_llvm_intrinsics,
        core_intrinsics,
        gpu_intrinsics,
        gpu_launch_sized_workgroup_mem
    )
)]
#![cfg_attr(target_arch = "nvptx64", allow(internal_features))]

/// Runs `$body` for `$i` in `$lo..$hi` (`$hi ≤ 16`), fully unrolled (the fields' limb and digit loops, the
/// sort's per-thread items).
/// LLVM leaves such loops rolled when their bodies hold 64-bit products, and a rolled loop indexing a limb
/// array puts the array in local memory; unrolled, with constant bounds, every limb stays in a register and
/// the offsets a loop tracks are constants.
macro_rules! unrolled {
    ($i:ident in $lo:literal..$hi:expr, $body:block) => {
        unrolled!(@ $i, $lo, $hi, $body, 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15)
    };
    (@ $i:ident, $lo:literal, $hi:expr, $body:block, $($k:literal)*) => {
        $(
            #[allow(unused_comparisons)]
            if $k >= $lo && $k < $hi {
                let $i: usize = $k;
                $body
            }
        )*
    };
}

pub mod batch_add;
pub mod curve;
pub mod device;
pub mod field;
pub mod launch_bounds;
pub mod msm;
pub mod msm_sort;
pub mod ntt;

#[cfg(target_arch = "nvptx64")]
mod entry;

/// A kernel must never unwind; on the GPU a panic traps the thread (the launch then fails with an error the
/// host reports). Kernels are written so that no reachable path panics: indices are bounds-checked by hand.
#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: `trap` aborts the kernel; the host sees CUDA_ERROR_ILLEGAL_INSTRUCTION / launch failure.
    unsafe { core::arch::nvptx::trap() }
}

/// The typed kernel interface: per production kernel its `.entry` name and its parameter list
/// ([`interface::Entry`], typed by an [`interface::Signature`]), and every parameter list once, by name
/// ([`for_each_signature!`]), from which the host crate makes one argument struct per list. The host names
/// kernels only through it and launches them only with the struct of their own list.
///
/// Why: CI has no GPU to run a launch, so a renamed kernel, a changed signature or a misplaced argument would
/// pass every CPU check. Now the host's argument structs do not compile against a kernel of another list, an
/// argument of the wrong kind (pointer, `u32`, `u64`) does not compile, and the host crate's build.rs parses
/// the `.visible .entry` parameter lists of the production PTX it embeds (committed or freshly built) and fails
/// the build unless every entry of [`interface::kernels`] is there exactly once with exactly its parameters
/// ([`interface::check_ptx`]).
///
/// What it does not catch: PTX records only the parameters' widths, so a kernel whose two `u32` parameters
/// were swapped in its source, or a pointer to the wrong element type, still passes; the struct fields' names
/// make the first visible at the launch site, and the `# Safety` promises and the GPU tests cover the rest.
/// Kernels of the test module are not listed.
///
/// Host targets only (build.rs reads it through a build dependency): nothing here reaches the PTX.
#[cfg(not(target_arch = "nvptx64"))]
pub mod interface;

/// The production PTX split into one module per kernel family ([`modules::Family`]: NTT, MSM per curve, batch
/// addition per curve, benchmarks), so that a program loads, and the driver JIT-compiles, only what it uses: an
/// NTT-only prover never compiles G2 MSM, which is most of the PTX. The host crate's build.rs splits the PTX
/// it embeds ([`modules::split`]); each kernel's family follows from its name's prefix ([`modules::Family::of`]).
///
/// Host targets only, like [`interface`].
#[cfg(not(target_arch = "nvptx64"))]
pub mod modules;

/// The committed production PTX (`ptx/zkgpu_<arch>.ptx.gz`): what a build without the kernel toolchain embeds.
#[cfg(not(target_arch = "nvptx64"))]
pub mod committed;

/// This crate's folder, whose `ptx/` holds the committed modules: how the host crate's build script finds the
/// kernels' sources and PTX whether they sit beside it (this repository) or in a registry (a published crate).
#[cfg(not(target_arch = "nvptx64"))]
pub const SOURCE_DIR: &str = env!("CARGO_MANIFEST_DIR");
