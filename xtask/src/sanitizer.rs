//! compute-sanitizer for the bundle (`cargo xtask bundle DIR --sanitizer`): NVIDIA's PyPI wheel
//! `nvidia-cuda-sanitizer-api` ships the `compute-sanitizer` binary and the libraries it injects, so a GPU host
//! without a CUDA toolkit can run memcheck, racecheck and synccheck over the GPU tests. Downloaded once into
//! `.cache/sanitizer/<version>/` (git-ignored), the wheel's `bin/` and `lib/` kept side by side as NVIDIA
//! lays them out.
use crate::util::{self, Result};
use std::path::PathBuf;
use std::process::Command;

/// The pinned wheel (its CUDA version matches the H200's driver, CUDA 13.0).
pub const SANITIZER_WHEEL: &str = "nvidia-cuda-sanitizer-api==13.0.85";

/// `.cache/sanitizer/<version>/`, holding `bin/compute-sanitizer` and its libraries (fetched on first use).
pub fn locate() -> Result<PathBuf> {
    let version = SANITIZER_WHEEL.rsplit("==").next().unwrap_or("unknown");
    let dir = util::root().join(".cache/sanitizer").join(version);
    if dir.join("bin/compute-sanitizer").is_file() {
        return Ok(dir);
    }
    let wheels = dir.join("wheel");
    util::pip_download(
        &format!("fetching compute-sanitizer from PyPI ({SANITIZER_WHEEL}, ~14 MB)"),
        SANITIZER_WHEEL,
        &wheels,
    )?;
    // bin/* and lib/*.so of the wheel's nvidia/cu13/ (headers and metadata are not needed to run it).
    let extract = r#"
import sys, zipfile, glob, os, shutil
wheels, dest = sys.argv[1], sys.argv[2]
whl = sorted(glob.glob(os.path.join(wheels, "nvidia_cuda_sanitizer_api-*.whl")))[-1]
with zipfile.ZipFile(whl) as z:
    for name in z.namelist():
        parts = name.split("/")
        if len(parts) == 4 and parts[2] in ("bin", "lib") and parts[3]:
            os.makedirs(os.path.join(dest, parts[2]), exist_ok=True)
            target = os.path.join(dest, parts[2], parts[3])
            with z.open(name) as src, open(target + ".part", "wb") as out:
                shutil.copyfileobj(src, out)
            os.chmod(target + ".part", 0o755)
            os.replace(target + ".part", target)
"#;
    util::run_described(
        &format!("unpacking compute-sanitizer into {}", dir.display()),
        Command::new("python3").args(["-c", extract]).arg(&wheels).arg(&dir),
    )?;
    std::fs::remove_dir_all(&wheels).ok();
    if dir.join("bin/compute-sanitizer").is_file() {
        Ok(dir)
    } else {
        Err(format!("{SANITIZER_WHEEL} held no bin/compute-sanitizer"))
    }
}
