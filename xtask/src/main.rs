//! `cargo xtask <task>`: zkgpu's developer tasks. One file per task:
//! [`ptx`] (build the kernels' PTX, ptxas resource table, freshness check), [`test`](mod@test) (the CI test command),
//! [`bench`](mod@bench) (the kernel workbench: GPU timings, or the CPU reference and ptxas table without a GPU),
//! [`bundle`] (a folder that runs the tests and benchmarks on a GPU host without Rust), [`readme`] (the
//! README's headline table, benches/results/README.md and the plots, from benches/results/*.json). Shared
//! process helpers live in [`util`], progress spinners in [`progress`], ptxas and its results cache in
//! [`ptxas`].
mod bench;
mod bundle;
mod progress;
mod ptx;
mod ptxas;
mod readme;
mod test;
mod util;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use zkgpu_bench::bench_args::BenchArgs;

#[derive(Parser)]
#[command(name = "cargo xtask", bin_name = "cargo xtask", about = "zkgpu developer tasks", version)]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Subcommand)]
enum Task {
    /// Build the kernels' PTX (sm_90, sm_80), copy it to kernels/ptx/, print ptxas's per-kernel resources.
    Ptx {
        /// Do not write kernels/ptx/; fail if it differs from a fresh build, on a ptxas error, or on a spill
        /// in a hot (non test-only) kernel.
        #[arg(long)]
        check: bool,
    },
    /// PTX check + `cargo test --workspace` (+ a stable-Rust build of the host crate from the committed PTX).
    Test {
        /// Also run the GPU tests (the `#[ignore]`d ones); fails if no CUDA GPU is present.
        #[arg(long)]
        gpu: bool,
        /// Skip the stable-Rust consumer build.
        #[arg(long)]
        no_stable: bool,
        /// Extra arguments for `cargo test` (after `--`), e.g. a test name filter.
        #[arg(last = true)]
        cargo_args: Vec<String>,
    },
    /// Benchmark kernels: GPU timings (CUDA events) when a GPU is present; otherwise the CPU reference (and
    /// the ptxas table if cached). The arguments are the zkgpu-bench runner's, passed to it unchanged.
    Bench(BenchArgs),
    /// Write a self-contained folder (stripped test binaries, bench runner, PTX, run.sh) for a GPU host
    /// with an NVIDIA driver and no Rust.
    Bundle {
        /// Output folder (created; emptied first if it is an earlier bundle).
        dir: PathBuf,
        /// Only the bench runner and the cubins, no test binaries: the baseline of an A/B, built in a
        /// worktree of the older commit and carried beside the full bundle.
        #[arg(long)]
        bench_only: bool,
    },
    /// Regenerate README.md's headline table, benches/results/README.md's tables and the plots
    /// benches/results/*.svg from benches/results/*.json.
    Readme {
        /// Write nothing; fail if a table or a plot differs from what the JSON gives (seconds, no GPU).
        #[arg(long)]
        check: bool,
    },
}

/// The command line, with the `--` of the old spelling `cargo xtask bench -- ARGS` dropped (the runner's
/// arguments are now `cargo xtask bench`'s own).
fn args() -> Vec<String> {
    let mut args: Vec<String> = std::env::args().collect();
    if args.get(1).is_some_and(|a| a == "bench") && args.get(2).is_some_and(|a| a == "--") {
        args.remove(2);
    }
    args
}

/// The arguments after the subcommand `name` (the bench runner gets them as they were given).
fn args_after(args: &[String], name: &str) -> Vec<String> {
    args.iter().skip(1).skip_while(|a| *a != name).skip(1).cloned().collect()
}

fn main() -> ExitCode {
    let args = args();
    let cli = Cli::parse_from(&args);
    let result = match cli.task {
        Task::Ptx { check } => ptx::run(check).map(|_| ()),
        Task::Test { gpu, no_stable, cargo_args } => test::run(gpu, !no_stable, &cargo_args),
        Task::Bench(parsed) => bench::run(&parsed, &args_after(&args, "bench")),
        Task::Bundle { dir, bench_only } => bundle::run(&dir, bench_only),
        Task::Readme { check } => readme::run(check),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: error: {e}");
            ExitCode::FAILURE
        }
    }
}
