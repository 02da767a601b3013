//! GPU tests of how kernel modules reach the device (`#[ignore = "needs a CUDA GPU"]`; `cargo xtask test
//! --gpu`): each family's module loads on first use and only then, zkgpu's module cache serves a second
//! process without compiling, and two processes filling an empty cache at once both succeed.
//!
//! The cache tests run this test binary again as child processes (`module_load_child`), each with its own
//! environment: the cache folder, `CUDA_CACHE_DISABLE=1` (so the driver's cache does not stand in for ours),
//! no `ZKGPU_CUBIN_DIR` and `ZKGPU_EMBEDDED_SASS=off` (prebuilt SASS would be loaded before the cache is asked).
mod common;

use std::path::Path;
use std::process::{Command, Output};

use zkgpu::module::{Family, ModuleImage};
use zkgpu::module_cache::CACHE_DIR_ENV;
use zkgpu::{Gpu, Ntt, NttConfig};

fn families(gpu: &Gpu) -> Vec<Family> {
    gpu.loaded_modules().iter().filter_map(|m| m.family).collect()
}

/// Set in the environment of `first_use_child`'s process: its checks need a process that has loaded nothing.
const FIRST_USE_ENV: &str = "ZKGPU_FIRST_USE_CHILD";

/// In a new process (modules are shared by every handle of a device in a process, so this test binary's other
/// tests would interfere): a fresh handle loads nothing; an NTT loads the NTT module only; a G1 MSM then adds
/// the MSM modules of G1 (and the G1 batch-addition module, whose reduction kernels the MSM uses) and nothing
/// of G2; a second handle of the device sees them loaded; the warm-up loads every production module but the
/// benchmarks.
#[test]
#[ignore = "needs a CUDA GPU"]
fn modules_load_on_first_use_only() {
    common::run_child_test("first_use_child", FIRST_USE_ENV, "zkgpu-first-use: checked");
}

/// The child of `modules_load_on_first_use_only`; run directly (without its variable) it checks nothing and
/// says so.
#[test]
#[ignore = "needs a CUDA GPU"]
fn first_use_child() {
    if std::env::var_os(FIRST_USE_ENV).is_none() {
        println!("first_use_child: run by modules_load_on_first_use_only in a process of its own");
        return;
    }
    let gpu = Gpu::new(0).expect("GPU 0");
    assert!(gpu.loaded_modules().is_empty(), "Gpu::new loaded {:?}", gpu.loaded_modules());

    let mut values: Vec<blstrs::Scalar> = (0..1u64 << 10).map(blstrs::Scalar::from).collect();
    let expected = {
        let mut cpu = values.clone();
        zkgpu::ntt::cpu::ntt(&mut cpu, NttConfig::forward()).expect("CPU NTT");
        cpu
    };
    Ntt::new(&gpu).expect("Ntt::new").run_host(&mut values, 1 << 10, NttConfig::forward()).expect("NTT");
    assert_eq!(values, expected, "the NTT's result");
    assert_eq!(families(&gpu), vec![Family::Ntt]);

    let bases = vec![<blstrs::G1Affine as group::prime::PrimeCurveAffine>::generator(); 64];
    let scalars: Vec<blstrs::Scalar> = (1..=64u64).map(blstrs::Scalar::from).collect();
    let sum = zkgpu::msm::msm::<zkgpu::curve::G1>(&gpu, &bases, &scalars).expect("MSM");
    assert_eq!(sum, <blstrs::G1Projective as group::Group>::generator() * blstrs::Scalar::from(64 * 65 / 2));
    assert_eq!(families(&gpu), vec![Family::Ntt, Family::Msm, Family::MsmG1, Family::SetSumG1]);

    // A clone and a second handle of the device share the loaded modules: nothing loads twice.
    assert_eq!(families(&gpu.clone()), families(&gpu));
    let second = Gpu::new(0).expect("a second handle of GPU 0");
    assert_eq!(second.loaded_modules(), gpu.loaded_modules());
    let again = zkgpu::msm::msm::<zkgpu::curve::G1>(&second, &bases, &scalars).expect("MSM on the second handle");
    assert_eq!(again, sum);
    assert_eq!(second.loaded_modules(), gpu.loaded_modules(), "the second handle loaded again");

    let loaded = zkgpu::warm_up(&gpu).expect("warm-up");
    assert_eq!(loaded.iter().filter_map(|m| m.family).collect::<Vec<_>>(), Family::PRODUCTION);
    for module in &loaded {
        println!("{:<28} {:?} {:.1} ms", module.stem, module.image, module.load_ms);
    }
    println!("zkgpu-first-use: checked");
}

/// Not a test of its own: the child process of the cache tests (it also passes when run directly, loading
/// the NTT module through whatever cache the environment names). Prints how the module got there.
#[test]
#[ignore = "needs a CUDA GPU"]
fn module_load_child() {
    let gpu = Gpu::new(0).expect("GPU 0");
    gpu.function("ntt_pass_dif").expect("an NTT kernel");
    let loaded = gpu.loaded_modules();
    assert_eq!(loaded.len(), 1, "{loaded:?}");
    println!("zkgpu-module-load {:?} {:.1}", loaded[0].image, loaded[0].load_ms);
}

/// Runs `module_load_child` in a new process with the cache at `dir`; returns how the module loaded.
fn child(dir: &Path) -> Command {
    let mut cmd = Command::new(std::env::current_exe().expect("the test binary"));
    cmd.args(["module_load_child", "--exact", "--ignored", "--nocapture", "--test-threads=1"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .env(CACHE_DIR_ENV, dir)
        .env("CUDA_CACHE_DISABLE", "1")
        .env(zkgpu::module::EMBEDDED_SASS_ENV, "off")
        .env_remove(zkgpu::module::CUBIN_DIR_ENV);
    cmd
}

fn image_of(output: &Output) -> ModuleImage {
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "child failed: {stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    // With --nocapture libtest prints "test module_load_child ... " without a newline before the test's own
    // output, so the report can start mid-line.
    let line = stdout
        .lines()
        .find_map(|l| l.split_once("zkgpu-module-load ").map(|(_, report)| report))
        .unwrap_or_else(|| panic!("no report in the child's output:\n{stdout}"));
    println!("child: {line}");
    match line.split_whitespace().next() {
        Some("Ptx") => ModuleImage::Ptx,
        Some("Cached") => ModuleImage::Cached,
        Some("Cubin") => ModuleImage::Cubin,
        Some("Embedded") => ModuleImage::Embedded,
        other => panic!("unknown image {other:?}"),
    }
}

fn scratch_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("zkgpu-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Two processes start on an empty cache at once: both succeed, each compiling or loading what the other
/// stored first (at least one compiles; a slowed process, e.g. under compute-sanitizer, may find the other's
/// file), and one valid file is left. A third process loads from the cache. A corrupted file is ignored
/// (compiled again) and replaced. `off` stores nothing.
#[test]
#[ignore = "needs a CUDA GPU"]
fn module_cache_serves_later_processes() {
    let dir = scratch_dir("module-cache");
    let racing: Vec<_> = (0..2).map(|_| child(&dir).spawn().expect("spawns")).collect();
    let images: Vec<ModuleImage> =
        racing.into_iter().map(|process| image_of(&process.wait_with_output().expect("runs"))).collect();
    assert!(images.iter().all(|i| matches!(i, ModuleImage::Ptx | ModuleImage::Cached)), "{images:?}");
    assert!(images.contains(&ModuleImage::Ptx), "nobody compiled on an empty cache: {images:?}");
    let files: Vec<_> =
        std::fs::read_dir(&dir).expect("the cache folder exists").map(|e| e.expect("entry").path()).collect();
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!(image_of(&child(&dir).output().expect("runs")), ModuleImage::Cached);

    let mut bytes = std::fs::read(&files[0]).expect("reads");
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x40;
    std::fs::write(&files[0], &bytes).expect("corrupts");
    assert_eq!(image_of(&child(&dir).output().expect("runs")), ModuleImage::Ptx, "a corrupt file was loaded");
    assert_eq!(image_of(&child(&dir).output().expect("runs")), ModuleImage::Cached, "the file was not replaced");
    std::fs::remove_dir_all(&dir).expect("cleans up");

    let off = child(Path::new("off")).output().expect("runs");
    assert_eq!(image_of(&off), ModuleImage::Ptx);
    assert!(!Path::new("off").exists(), "`off` made a folder named off");
}
