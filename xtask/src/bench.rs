//! `cargo xtask bench [runner args]`: the kernel workbench.
//!
//! The arguments are the bench runner's (`zkgpu-bench`, the `runner` feature of this package; they are parsed
//! here first with the same definition, [`zkgpu_bench::bench_args::BenchArgs`], so `--help` and mistakes need no
//! build). Builds the runner with the PTX built from source, prints ptxas's resource table for the kernels
//! of the selected ops, then runs the runner, which times the kernels on the GPU (CUDA events) or, with no
//! GPU, times the CPU reference and says so.
//!
//! GPU or not: `--cpu`, or the runner's `--gpu-count` printing 0, means the CPU reference is timed. (`--gpu-count`
//! asks the driver for its device count and loads no kernels; `--probe` would open the device and JIT-compile
//! the modules, minutes when the driver's cache is cold.) The ptxas table is only information for a GPU run:
//! - with a GPU: from the ptxas results cache, running ptxas for a module it does not hold (minutes, once);
//! - without one: from the cache when it holds this PTX, else skipped with a one-line note (`cargo xtask ptx`
//!   fills the cache); no ptxas run and no ptxas download.
//!
//! Results go to `--json`/`--plot` (default `target/zkgpu-bench/latest.{json,svg}`; the plot defaults to the
//! JSON path with `.svg` when only `--json` is given); a JSON file written under benches/results/ also
//! refreshes the README's headline table, benches/results/README.md and the plots (`cargo xtask readme`).
use crate::util::{self, Result};
use crate::{ptx, readme};
use std::path::PathBuf;
use std::process::Command;
use zkgpu_bench::bench_args::BenchArgs;

/// `args`: the runner arguments as given (forwarded unchanged); `parsed`: the same, parsed.
pub fn run(parsed: &BenchArgs, args: &[String]) -> Result<()> {
    let (runner, built) = build_runner_with_ptx()?;
    if parsed.is_query() && parsed.from.is_none() {
        return util::run(Command::new(&runner).args(args));
    }

    if parsed.from.is_none() {
        let gpu = !parsed.cpu && gpu_count(&runner) > 0;
        print_ptxas_table(&runner, args, &built, gpu);
    }

    let mut cmd = Command::new(&runner);
    cmd.args(args);
    let out_dir = util::target_dir().join("zkgpu-bench");
    if parsed.json.is_none() {
        cmd.arg("--json").arg(out_dir.join("latest.json"));
    }
    if parsed.plot.is_none() {
        // The plot goes beside the results file (README links benches/results/<gpu>.svg).
        let beside = parsed.json.as_ref().map(|j| j.with_extension("svg"));
        cmd.arg("--plot").arg(beside.unwrap_or_else(|| out_dir.join("latest.svg")));
    }
    util::run(&mut cmd)?;

    if parsed.json.as_ref().is_some_and(|j| j.to_string_lossy().contains("benches/results")) {
        readme::run(false)?;
    }
    Ok(())
}

/// The ptxas table for the kernels the selected ops launch (see the module docs for where it comes from).
fn print_ptxas_table(runner: &PathBuf, args: &[String], built: &ptx::BuiltPtx, gpu: bool) {
    let report = if gpu {
        // Benchmarked kernels live in the production module; the (large) test module is skipped.
        ptx::ptxas_report(built, false).map(Some)
    } else {
        ptx::cached_report(built)
    };
    let kernels = match kernel_names(runner, args) {
        Ok(k) => k,
        Err(e) => return eprintln!("xtask: warning: no ptxas table: {e}"),
    };
    match report {
        Ok(Some(report)) => ptx::print_table(&report, Some(&|k: &str| kernels.iter().any(|n| n == k))),
        Ok(None) => eprintln!(
            "xtask: no ptxas table (no GPU run, and .cache/ptxas/results/ holds no results for this PTX: \
             `cargo xtask ptx` makes them, minutes on first run)"
        ),
        Err(e) => eprintln!("xtask: warning: no ptxas table: {e}"),
    }
}

/// Visible CUDA devices by the runner's `--gpu-count` (0 if it fails).
fn gpu_count(runner: &PathBuf) -> usize {
    Command::new(runner)
        .arg("--gpu-count")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(0)
}

/// Build `zkgpu-bench` in release with the PTX built from source; return its path.
pub fn build_runner() -> Result<PathBuf> {
    build_runner_with_ptx().map(|(runner, _)| runner)
}

/// [`build_runner`], also returning the PTX that build embedded (the same build.rs output `cargo xtask ptx` uses).
pub fn build_runner_with_ptx() -> Result<(PathBuf, ptx::BuiltPtx)> {
    build_runner_embedding(None)
}

/// [`build_runner_with_ptx`] with `ZKGPU_EMBED_ARCHES` set to `arches` (the bundle embeds sm_90 only).
pub fn build_runner_embedding(arches: Option<&str>) -> Result<(PathBuf, ptx::BuiltPtx)> {
    let mut cmd = util::cargo();
    cmd.args(["build", "--release", "-p", "zkgpu-bench", "--features", "runner", "--bin", "zkgpu-bench"])
        .env("ZKGPU_PTX", "build")
        .env("ZKGPU_BENCH_COMMIT", git_commit());
    match arches {
        Some(arches) => cmd.env("ZKGPU_EMBED_ARCHES", arches),
        None => cmd.env_remove("ZKGPU_EMBED_ARCHES"),
    };
    let messages = util::cargo_json("building zkgpu-bench (cargo build --release)", &mut cmd)?;
    let runner = messages
        .iter()
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "zkgpu-bench")
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .ok_or_else(|| "cargo built no zkgpu-bench executable".to_string())?;
    Ok((runner, ptx::from_messages(&messages)?))
}

/// Kernels the selected ops and variants launch (asked from the runner, which owns the op registry).
fn kernel_names(runner: &PathBuf, args: &[String]) -> Result<Vec<String>> {
    let out =
        Command::new(runner).args(args).arg("--kernels").output().map_err(|e| format!("{}: {e}", runner.display()))?;
    if !out.status.success() {
        return Err(format!("zkgpu-bench --kernels failed:\n{}", String::from_utf8_lossy(&out.stderr)));
    }
    Ok(String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect())
}

/// Short commit id, with `-dirty` when the work tree has changes ("unknown" outside git).
pub fn git_commit() -> String {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(util::root())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match git(&["rev-parse", "--short=12", "HEAD"]) {
        Some(id) => {
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
            if dirty { format!("{id}-dirty") } else { id }
        }
        None => "unknown".into(),
    }
}
