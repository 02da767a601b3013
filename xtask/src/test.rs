//! `cargo xtask test [--gpu]`: the project's test command (what CI runs).
//!
//! 1. PTX check (`cargo xtask ptx --check`: committed PTX fresh, ptxas clean, no spills in hot kernels), then
//!    `cargo fmt --check`, `cargo clippy --workspace --all-targets -D warnings` and `cargo doc` (warnings
//!    denied);
//! 2. `cargo test --workspace` (with the bench runner's tests) and the PTX built from source; the GPU tests are `#[ignore]`d, so this is the
//!    CPU suite. `--gpu` first checks that a CUDA GPU is present (through `zkgpu::Gpu::count()`, by the bench
//!    runner's `--probe`; no GPU is an error) and then runs everything with `-- --include-ignored`, except the
//!    two-GPU tests (`two_gpus_*`) on a host with one GPU (said in the output);
//!    The criterion benches then run once each in test mode (`cargo test --bench host`, same features);
//! 3. `cargo xtask readme --check`: the README's headline table, benches/results/README.md and the plots are
//!    what benches/results/*.json gives (the plots redrawn by the runner's plot test, which step 2 built);
//! 4. stable consumer check, when a `stable` toolchain is installed: `cargo +stable publish --dry-run` of
//!    zkgpu-kernels and zkgpu with ZKGPU_PTX=prebuilt proves both crates package with everything their build
//!    needs and that a prover on stable Rust builds the host crate from the packages' committed PTX.
//!
//! Every step runs even if an earlier one failed; the summary lists the failures. Each step prints a header
//! and its verdict with its duration; the builds, ptxas runs and test runs inside it show a spinner (plain
//! start/end lines when stderr is not a terminal). The closing line totals the tests and names the skipped
//! ones by their ignore reason: `tests: 148 passed, 0 failed, 110 GPU tests skipped (need a CUDA GPU: cargo
//! xtask test --gpu)`; only `#[ignore = "needs a CUDA GPU"]` tests are called GPU tests.
use crate::progress::format_duration;
use crate::util::{self, Result};
use crate::{bench, ptx, readme};
use std::time::Instant;

pub fn run(gpu: bool, stable: bool, cargo_args: &[String]) -> Result<()> {
    let mut skip_two_gpus = false;
    if gpu {
        // Before anything slow: a GPU run without a GPU must fail loudly, not skip the GPU tests.
        let runner = bench::build_runner()?;
        util::run_step(
            "looking for a CUDA GPU (zkgpu-bench --probe; minutes if the driver's JIT cache is cold)",
            std::process::Command::new(&runner).arg("--probe"),
            &mut |step, line| step.println(line),
        )
        .map_err(|e| format!("--gpu needs a CUDA GPU, and none was found ({e})"))?;
        let count = std::process::Command::new(&runner).arg("--gpu-count").output().map_err(|e| e.to_string())?;
        let count: usize = String::from_utf8_lossy(&count.stdout).trim().parse().unwrap_or(0);
        if count < 2 {
            eprintln!("xtask: {count} GPU visible: skipping the two-GPU tests (two_gpus_*)");
            skip_two_gpus = true;
        }
    }
    let stable_step = stable && util::toolchain_installed("stable");
    if stable && !stable_step {
        eprintln!("xtask: no `stable` toolchain installed: skipping the stable consumer build");
    }
    let steps = if stable_step { 6 } else { 5 };
    let mut number = 0;
    let mut failures = Vec::new();
    // Each step: a header line, then its own progress (spinners of the builds, ptxas and test runs inside
    // it), then its verdict with its duration.
    let mut step = |name: &str, run: &mut dyn FnMut() -> Result<()>| {
        number += 1;
        eprintln!("xtask: step {number}/{steps}: {name}");
        let start = Instant::now();
        let result = run();
        let took = format_duration(start.elapsed());
        match result {
            Ok(()) => eprintln!("xtask: step {number}/{steps}: {name}: ok ({took})"),
            Err(e) => {
                eprintln!("xtask: step {number}/{steps}: {name}: FAILED ({took})\n{e}");
                failures.push(name.to_string());
            }
        }
    };

    step("ptx check", &mut || ptx::run(true).map(|_| ()));
    step("format, lints and docs (cargo fmt --check, clippy and rustdoc with warnings denied)", &mut lint);

    let mut cmd = util::cargo();
    // `zkgpu-bench/runner` adds the bench runner's own tests (input generation, CPU cases, size syntax).
    cmd.args(["test", "--workspace", "--features", FEATURES]).env("ZKGPU_PTX", "build");
    if gpu || !cargo_args.is_empty() {
        cmd.arg("--");
        if gpu {
            cmd.arg("--include-ignored");
        }
        if skip_two_gpus {
            cmd.args(["--skip", "two_gpus_"]);
        }
        cmd.args(cargo_args);
    }
    let name = if gpu { "cargo test (CPU + GPU)" } else { "cargo test (CPU; GPU tests ignored)" };
    let mut counts = util::TestCounts::default();
    step(name, &mut || util::run_counting("cargo test --workspace", &mut cmd, &mut counts));
    // Criterion benches in test mode: each benchmark runs once (the GPU group skips itself without a GPU).
    // The same package selection and features as the step before, so the libraries it built are reused: with
    // `-p zkgpu` and no features, cargo resolved other features and compiled zkgpu and part of its graph again.
    step("criterion benches (test mode)", &mut || {
        util::run_step(
            "cargo test --bench host",
            util::cargo()
                .args(["test", "--workspace", "--features", FEATURES, "--bench", "host"])
                .env("ZKGPU_PTX", "build"),
            &mut |step, line| step.println(line),
        )
    });

    step("results tables and plots fresh (cargo xtask readme --check)", &mut || readme::run(true));

    if stable_step {
        step(
            "stable consumer build from the packaged crates (cargo publish --dry-run, committed PTX)",
            &mut stable_build,
        );
    }

    let verdict = if failures.is_empty() {
        eprintln!("xtask: all steps passed");
        Ok(())
    } else {
        Err(format!("failed steps: {}", failures.join(", ")))
    };
    // The closing line: totals over every test binary, the ignored tests by their reason.
    println!("{}", counts.summary());
    verdict
}

/// The features every check builds with: the bench runner (its own tests) and the Groth16 prover.
const FEATURES: &str = "zkgpu-bench/runner,zkgpu/bellperson";

/// `cargo fmt --check` (rustfmt.toml; kernels/ excepted, see there), `cargo clippy` over every target and
/// `cargo doc`, warnings denied in both.
fn lint() -> Result<()> {
    let echo = &mut |step: &crate::progress::Step, line: &str| step.println(line);
    util::run_step("cargo fmt --check", util::cargo().args(["fmt", "--all", "--", "--check"]), echo)?;
    util::run_step(
        "cargo clippy --workspace --all-targets -- -D warnings",
        util::cargo()
            .args(["clippy", "--workspace", "--all-targets", "--features", FEATURES, "--", "-D", "warnings"])
            .env("ZKGPU_PTX", "build"),
        echo,
    )?;
    util::run_step(
        "cargo doc --no-deps (warnings denied)",
        util::cargo()
            .args(["doc", "--no-deps", "--workspace", "--features", FEATURES])
            .env("ZKGPU_PTX", "build")
            .env("RUSTDOCFLAGS", "-D warnings"),
        echo,
    )
}

/// Build the host crate the way a stable-Rust prover gets it from a registry: `cargo publish --dry-run` of both
/// library crates on the stable toolchain packages them, then builds each from its package alone (the host
/// crate against the packaged kernels crate) with the committed PTX, no nightly. `--allow-dirty`: a local run
/// checks the working tree; CI's clone is clean anyway.
fn stable_build() -> Result<()> {
    // Cargo takes a registry crate's version as its identity (registry sources never change), so both its
    // unpacked sources and its compiled artifacts from an earlier dry run would be reused for a changed package
    // of the same version: start from neither (about 30 s of dependency builds).
    forget_unpacked_packages();
    let target = util::target_dir().join("stable-consumer");
    let _ = std::fs::remove_dir_all(&target);
    util::run_step(
        "cargo +stable publish --dry-run -p zkgpu-kernels -p zkgpu",
        util::cargo_with_toolchain("stable")
            .args(["publish", "--dry-run", "-p", "zkgpu-kernels", "-p", "zkgpu", "--allow-dirty"])
            .env("ZKGPU_PTX", "prebuilt")
            .env("CARGO_TARGET_DIR", &target),
        &mut |step, line| step.println(line),
    )
}

/// Removes this workspace's crates from the sources cargo unpacked out of earlier dry runs' temporary
/// registries (`$CARGO_HOME/registry/src/-<hash>/zkgpu*`): cargo reuses such a folder when the registry path
/// is the same, so a second run would verify the host crate against the *previous* package of the kernels
/// crate (a CI machine starts without them; a developer's second `cargo xtask test` would not).
fn forget_unpacked_packages() {
    let home = std::env::var_os("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cargo")));
    let Some(sources) = home.map(|h| h.join("registry/src")) else { return };
    let Ok(registries) = std::fs::read_dir(&sources) else { return };
    // Only the temporary registries of `cargo publish` (named `-<hash>`), never crates.io's.
    for registry in registries.flatten().filter(|r| r.file_name().to_string_lossy().starts_with('-')) {
        let Ok(crates) = std::fs::read_dir(registry.path()) else { continue };
        for krate in crates.flatten().filter(|c| c.file_name().to_string_lossy().starts_with("zkgpu")) {
            let _ = std::fs::remove_dir_all(krate.path());
        }
    }
}
