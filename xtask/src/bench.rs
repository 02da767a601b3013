//! `cargo xtask bench [runner args]`: the kernel workbench.
//!
//! Builds the bench runner (`zkgpu-bench`, the `runner` feature of this package) with the PTX built from
//! source, prints ptxas's resource table for the kernels of the selected ops, then runs the runner, which
//! times the kernels on the GPU (CUDA events) or, with no GPU, times the CPU reference and says so.
//! Results go to `--json`/`--plot` (default `target/zkgpu-bench/latest.{json,svg}`; the plot defaults to the
//! JSON path with `.svg` when only `--json` is given); a JSON file written under benches/results/ also
//! refreshes README.md's table.
use crate::util::{self, Result};
use crate::{ptx, readme};
use std::path::PathBuf;
use std::process::Command;

pub fn run(args: &[String]) -> Result<()> {
    let runner = build_runner()?;
    let passthrough = args.iter().any(|a| matches!(a.as_str(), "--list" | "-h" | "--help" | "--probe" | "--kernels"));
    if passthrough {
        return util::run(Command::new(&runner).args(args));
    }

    // ptxas table for the kernels this sweep uses (useful with or without a GPU).
    let kernels = kernel_names(&runner, args)?;
    // Benchmarked kernels live in the production module; the (large) test module is skipped.
    match ptx::build().and_then(|b| ptx::ptxas_report(&b, false)) {
        Ok(report) => ptx::print_table(&report, Some(&|k: &str| kernels.iter().any(|n| n == k))),
        Err(e) => eprintln!("xtask: warning: no ptxas table: {e}"),
    }

    let mut cmd = Command::new(&runner);
    cmd.args(args);
    let out_dir = util::target_dir().join("zkgpu-bench");
    let json = option_value(args, "--json").map(PathBuf::from);
    if json.is_none() {
        cmd.arg("--json").arg(out_dir.join("latest.json"));
    }
    if option_value(args, "--plot").is_none() {
        // The plot goes beside the results file (README links benches/results/<gpu>.svg).
        let plot = json.as_ref().map(|j| j.with_extension("svg")).unwrap_or_else(|| out_dir.join("latest.svg"));
        cmd.arg("--plot").arg(plot);
    }
    util::run(&mut cmd)?;

    if json.is_some_and(|j| j.to_string_lossy().contains("benches/results")) {
        readme::run(false)?;
    }
    Ok(())
}

/// The value of `--name VALUE` or `--name=VALUE` in `args`.
fn option_value<'a>(args: &'a [String], name: &str) -> Option<&'a str> {
    args.iter().enumerate().find_map(|(i, a)| {
        if a == name {
            args.get(i + 1).map(String::as_str)
        } else {
            a.strip_prefix(name).and_then(|rest| rest.strip_prefix('='))
        }
    })
}

/// Build `zkgpu-bench` in release with the PTX built from source; return its path.
pub fn build_runner() -> Result<PathBuf> {
    let messages = util::cargo_json(
        "building zkgpu-bench (cargo build --release)",
        util::cargo()
            .args(["build", "--release", "-p", "xtask", "--features", "runner", "--bin", "zkgpu-bench"])
            .env("ZKGPU_PTX", "build")
            .env("ZKGPU_BENCH_COMMIT", git_commit()),
    )?;
    messages
        .iter()
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "zkgpu-bench")
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .ok_or_else(|| "cargo built no zkgpu-bench executable".to_string())
}

/// Kernels the selected ops and variants launch (asked from the runner, which owns the op registry).
fn kernel_names(runner: &PathBuf, args: &[String]) -> Result<Vec<String>> {
    let out = Command::new(runner)
        .args(args)
        .arg("--kernels")
        .output()
        .map_err(|e| format!("{}: {e}", runner.display()))?;
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
