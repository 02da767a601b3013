//! The bench runner's command line, shared by `zkgpu-bench` (which parses it) and `cargo xtask bench` (which
//! parses the same arguments first, so `cargo xtask bench --help` shows these flags and a typo fails before
//! anything is built, then hands the arguments to the runner unchanged).
//!
//! Also here, because both binaries need them without the runner's op registry: the default sizes of the CPU
//! reference ([`CPU_DEFAULT_SIZES`], shown in the help) and a word wrapper for terminal-width listings.
use clap::Parser;
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(name = "zkgpu-bench", about = "Benchmark zkgpu kernels (GPU) or their CPU reference")]
pub struct BenchArgs {
    /// Ops to run, by name or prefix (`mul` = mul_fq + mul_fr); default: the default sweep. See --list.
    pub ops: Vec<String>,
    /// Only these variants (comma-separated), e.g. `asm,portable`.
    #[arg(long, value_delimiter = ',')]
    pub variants: Vec<String>,
    /// log2 sizes: `22`, `16,20,24`, `16..24` (inclusive) or `16..24:2` (step); default: per op (CPU ones in
    /// --help, all in --list).
    #[arg(long, long_help = SIZES_LONG_HELP)]
    pub sizes: Option<String>,
    /// Timed repetitions per case (the median is reported; at least 5 recommended).
    #[arg(long, default_value_t = 7)]
    pub reps: u32,
    /// Untimed warm-up runs per case.
    #[arg(long, default_value_t = 1)]
    pub warmup: u32,
    /// Op-specific inner repetition count (mul: chain length per thread); default: per op.
    #[arg(long)]
    pub iters: Option<u32>,
    /// Input RNG seed; default: random (printed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Write results JSON here (schema in benches/results/README.md) [cargo xtask bench: default target/zkgpu-bench/latest.json].
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write SVG plots here (one figure per op family: the best variant per op, the peers, log scales)
    /// [cargo xtask bench: default beside the JSON, with .svg].
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// List ops, variants and default sizes (GPU and CPU), then exit.
    #[arg(long)]
    pub list: bool,
    /// Time the CPU reference even if a GPU is present (cargo xtask bench then runs no ptxas).
    #[arg(long)]
    pub cpu: bool,
    /// GPU ordinal.
    #[arg(long, default_value_t = 0)]
    pub device: usize,
    /// Print the CUDA device found (exit status 1 if none) and exit. Opens the device (loads no kernels: they
    /// load on first use, or with --warm-up).
    #[arg(long)]
    pub probe: bool,
    /// Print the number of visible CUDA devices (0 without a driver) and exit; asks the driver only (loads no
    /// kernels). The test runners skip the two-GPU tests (`two_gpus_*`) below 2; cargo xtask bench times the
    /// CPU reference at 0.
    #[arg(long)]
    pub gpu_count: bool,
    /// Print the kernels the selected ops and variants launch, one per line, and exit.
    #[arg(long)]
    pub kernels: bool,
    /// Run nothing: read an earlier results JSON, print its table and write `--plot` from it.
    #[arg(long, value_name = "JSON")]
    pub from: Option<PathBuf>,
    /// Load every production kernel module on the device now, compiling what zkgpu's module cache
    /// (`ZKGPU_CACHE_DIR`) lacks and storing it there; print each module and how it loaded, then exit. Run at
    /// deployment so that no prover start compiles.
    #[arg(long)]
    pub warm_up: bool,
    /// Internal: the child process of the `startup` op (one variant, size from --sizes).
    #[arg(long, hide = true, value_name = "VARIANT")]
    pub startup_child: Option<String>,
}

impl BenchArgs {
    /// A mode that prints something and exits without timing anything (no ptxas table wanted).
    pub fn is_query(&self) -> bool {
        self.list
            || self.probe
            || self.gpu_count
            || self.kernels
            || self.from.is_some()
            || self.warm_up
            || self.startup_child.is_some()
    }
}

/// log2 sizes the CPU reference sweeps when `--sizes` is not given, by op-name prefix (at a `_` boundary).
/// Ops not listed have no CPU reference (`h2d`, `d2h`).
pub const CPU_DEFAULT_SIZES: &[(&str, &[u32])] = &[
    ("mul", &[12, 14, 16]),
    ("inv", &[8, 10, 12]),
    ("ntt", &[12, 14, 16]),
    ("batch_add", &[10, 12, 14]),
    ("msm", &[12, 14, 16]),
    ("pipeline", &[10, 12]),
    ("groth16", &[15]),
];

/// `--sizes`'s long help (`--help`); a test checks it against [`CPU_DEFAULT_SIZES`].
const SIZES_LONG_HELP: &str = "log2 sizes: `22`, `16,20,24`, `16..24` (inclusive) or `16..24:2` (step).
Default: per op and target (GPU sizes: see --list). CPU reference: mul 12,14,16; inv 8,10,12; \
ntt 12,14,16; batch_add 10,12,14; msm 12,14,16; pipeline 10,12; groth16 15.";

/// The CPU default sizes of op `name` (empty when it has no CPU reference).
pub fn cpu_default_sizes(name: &str) -> &'static [u32] {
    CPU_DEFAULT_SIZES
        .iter()
        .find(|(prefix, _)| name == *prefix || name.strip_prefix(prefix).is_some_and(|rest| rest.starts_with('_')))
        .map_or(&[], |(_, sizes)| sizes)
}

/// Greedy word wrap of `text` to lines of at most `width` characters (a longer word gets a line of its own).
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// Columns for wrapped listings: `$COLUMNS` when set, else `fallback` (the caller asks its terminal first).
pub fn columns_or(fallback: usize) -> usize {
    std::env::var("COLUMNS").ok().and_then(|c| c.trim().parse().ok()).filter(|&c: &usize| c >= 20).unwrap_or(fallback)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn sizes_help_lists_the_cpu_defaults() {
        let listed: Vec<String> = CPU_DEFAULT_SIZES
            .iter()
            .map(|(op, sizes)| format!("{op} {}", sizes.iter().map(u32::to_string).collect::<Vec<_>>().join(",")))
            .collect();
        assert!(SIZES_LONG_HELP.contains(&format!("CPU reference: {}.", listed.join("; "))), "{SIZES_LONG_HELP}");
    }

    #[test]
    fn cpu_default_sizes_by_prefix() {
        assert_eq!(cpu_default_sizes("mul_fq"), &[12, 14, 16]);
        assert_eq!(cpu_default_sizes("inv_fr"), &[8, 10, 12]);
        assert_eq!(cpu_default_sizes("batch_add_g2_half"), &[10, 12, 14]);
        assert_eq!(cpu_default_sizes("pipeline_partition"), &[10, 12]);
        assert!(cpu_default_sizes("h2d").is_empty());
        assert!(cpu_default_sizes("multiply").is_empty(), "prefixes end at a `_` boundary");
    }

    #[test]
    fn wraps_at_word_boundaries() {
        assert_eq!(wrap("a bb ccc dddd", 6), vec!["a bb", "ccc", "dddd"]);
        assert_eq!(wrap("averyveryverylongword x", 5), vec!["averyveryverylongword", "x"]);
        assert_eq!(wrap("", 10), vec![""]);
        assert!(wrap(&"word ".repeat(100), 40).iter().all(|l| l.len() <= 40));
    }

    #[test]
    fn command_line_is_consistent() {
        BenchArgs::command().debug_assert();
        let a = BenchArgs::try_parse_from(["zkgpu-bench", "mul", "--sizes", "10", "--cpu"]).unwrap();
        assert_eq!(
            (&a.ops[..], a.sizes.as_deref(), a.cpu, a.is_query()),
            (&["mul".to_string()][..], Some("10"), true, false)
        );
        assert!(BenchArgs::try_parse_from(["zkgpu-bench", "--list"]).unwrap().is_query());
    }
}
