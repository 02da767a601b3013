//! `cargo xtask <task>`: zkgpu's developer tasks. One file per task:
//! [`ptx`] (build the kernels' PTX, ptxas resource table, freshness check), [`test`] (the CI test command),
//! [`bench`] (the kernel workbench: GPU timings, or the CPU reference and ptxas table without a GPU),
//! [`bundle`] (a folder that runs the tests and benchmarks on a GPU host without Rust), [`readme`] (results
//! table in README.md). Shared process helpers live in [`util`], progress spinners in [`progress`], ptxas and
//! its results cache in [`ptxas`].
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

#[derive(Parser)]
#[command(name = "cargo xtask", about = "zkgpu developer tasks", version)]
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
        /// Also run the GPU tests (the #[ignore]d ones); fails if no CUDA GPU is present.
        #[arg(long)]
        gpu: bool,
        /// Skip the stable-Rust consumer build.
        #[arg(long)]
        no_stable: bool,
        /// Extra arguments for `cargo test` (after `--`), e.g. a test name filter.
        #[arg(last = true)]
        cargo_args: Vec<String>,
    },
    /// Benchmark kernels: GPU timings (CUDA events) when a GPU is present; otherwise the ptxas table and the
    /// CPU reference. All arguments go to the zkgpu-bench runner (see `cargo xtask bench -- --help`).
    Bench {
        /// Runner arguments: [OPS...] [--variants V,..] [--sizes 16..24] [--reps N] [--json PATH]
        /// [--plot PATH] [--list] [--cpu]
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Write a self-contained folder (stripped test binaries, bench runner, PTX, run.sh) for a GPU host
    /// with an NVIDIA driver and no Rust.
    Bundle {
        /// Output folder (created; emptied first if it is an earlier bundle).
        dir: PathBuf,
    },
    /// Regenerate README.md's results table from benches/results/*.json.
    Readme {
        /// Fail if README.md is not up to date instead of writing it.
        #[arg(long)]
        check: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.task {
        Task::Ptx { check } => ptx::run(check).map(|_| ()),
        Task::Test { gpu, no_stable, cargo_args } => test::run(gpu, !no_stable, &cargo_args),
        Task::Bench { args } => bench::run(&args),
        Task::Bundle { dir } => bundle::run(&dir),
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
