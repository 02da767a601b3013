//! compute-sanitizer for the bundle (`cargo xtask bundle DIR --sanitizer`): NVIDIA's PyPI wheel
//! `nvidia-cuda-sanitizer-api` ships the `compute-sanitizer` binary and the libraries it injects, so a GPU host
//! without a CUDA toolkit can run memcheck, racecheck and synccheck over the GPU tests. Downloaded once into
//! `.cache/sanitizer/<version>/` (git-ignored), the wheel's `bin/` and `lib/` kept side by side as NVIDIA
//! lays them out.
use crate::util::{self, Result};
use std::path::PathBuf;

/// The pinned wheel (its CUDA version matches the H200's driver, CUDA 13.0).
pub const SANITIZER_WHEEL: &str = "nvidia-cuda-sanitizer-api==13.0.85";

/// `.cache/sanitizer/<version>/`, holding `bin/compute-sanitizer` and its libraries (fetched on first use).
pub fn locate() -> Result<PathBuf> {
    let version = SANITIZER_WHEEL.rsplit("==").next().unwrap_or("unknown");
    let dir = util::root().join(".cache/sanitizer").join(version);
    if dir.join("bin/compute-sanitizer").is_file() {
        return Ok(dir);
    }
    // bin/* and lib/* of the wheel's nvidia/cu13/ (headers and metadata are not needed to run it).
    util::fetch_wheel_members(
        &format!("fetching compute-sanitizer from PyPI ({SANITIZER_WHEEL}, ~14 MB)"),
        SANITIZER_WHEEL,
        &dir,
        &[("nvidia/cu13/bin/*", &dir.join("bin")), ("nvidia/cu13/lib/*", &dir.join("lib"))],
    )?;
    if dir.join("bin/compute-sanitizer").is_file() {
        Ok(dir)
    } else {
        Err(format!("{SANITIZER_WHEEL} held no bin/compute-sanitizer"))
    }
}
