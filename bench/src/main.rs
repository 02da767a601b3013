//! `zkgpu-bench`: times zkgpu's kernels. Run through `cargo xtask bench` (which also prints the ptxas table)
//! or directly from a bundle on a GPU host without Rust.
//!
//! With a CUDA GPU: each (op, variant, size) gets fresh random inputs, one warm-up run, then `--reps` timed
//! runs (CUDA events, device time); the table shows the median. Without one (or with `--cpu`) it times the
//! CPU reference of the same ops and says that GPU timings need a CUDA device.
mod ops;
mod plot;
mod report;

use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};
use ops::{BenchOp, CaseOptions, Target};
use std::process::ExitCode;
use zkgpu::Gpu;
use zkgpu_bench::bench_args::{self, BenchArgs};
use zkgpu_bench::results::{Results, Row};

pub type Result<T> = std::result::Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// The command line (shared with `cargo xtask bench`, which parses it first).
type Args = BenchArgs;

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("zkgpu-bench: error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> Result<ExitCode> {
    if args.probe {
        return Ok(probe(args.device));
    }
    if let Some(variant) = &args.startup_child {
        let log_n = parse_sizes(args.sizes.as_deref().unwrap_or("20"))?[0];
        ops::startup::child(variant, log_n, args.device, args.seed.unwrap_or(1))?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.warm_up {
        return warm_up(args.device);
    }
    if args.gpu_count {
        println!("{}", Gpu::count().unwrap_or(0));
        return Ok(ExitCode::SUCCESS);
    }
    if args.list {
        list(&ops::registry());
        return Ok(ExitCode::SUCCESS);
    }
    let selected = ops::select(ops::registry(), &args.ops)?;
    if args.kernels {
        for op in &selected {
            for v in variants(op.as_ref(), Target::Gpu, &args.variants) {
                for k in op.kernels(v) {
                    println!("{k}");
                }
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(path) = &args.from {
        let results = Results::read(path)?;
        let target = if results.rows.iter().all(|r| r.inputs == "host") { Target::Cpu } else { Target::Gpu };
        report::print_table(&results, &ops::registry(), target);
        if let Some(plot) = &args.plot {
            plot::write_svg(&results, plot)?;
            println!("plot: {}", plot.display());
        }
        return Ok(ExitCode::SUCCESS);
    }
    if args.reps == 0 {
        return Err("--reps must be at least 1".into());
    }

    let gpu = if args.cpu { None } else { open_gpu(args.device, "Timing the CPU reference instead.") };
    let target = if gpu.is_some() { Target::Gpu } else { Target::Cpu };
    let seed = args.seed.unwrap_or_else(random_seed);
    println!("zkgpu-bench: seed {seed} (replay with --seed {seed})");
    let opts = CaseOptions { seed, iters: args.iters };
    let sizes = args.sizes.as_deref().map(parse_sizes).transpose()?;

    // The plan: every (op, variant, size), variants of one size adjacent so ratios read side by side.
    let mut plan = Vec::new();
    for op in &selected {
        let op_sizes = sizes.clone().unwrap_or_else(|| op.default_sizes(target).to_vec());
        for &log_n in &op_sizes {
            for v in variants(op.as_ref(), target, &args.variants) {
                plan.push((op.as_ref(), v, log_n));
            }
        }
    }
    if plan.is_empty() {
        return Err("nothing to run: no op/variant matches (see --list)".into());
    }
    let unknown: Vec<&str> = args
        .variants
        .iter()
        .map(String::as_str)
        .filter(|w| !selected.iter().any(|op| op.variants(target).contains(w)))
        .collect();
    if !unknown.is_empty() {
        return Err(format!("no selected op has the variant(s) {unknown:?} (see --list)").into());
    }

    let bar = ProgressBar::new((plan.len() as u64) * u64::from(args.warmup + args.reps));
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} runs  {elapsed_precise}  {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut rows = Vec::new();
    for (op, variant, log_n) in plan {
        bar.set_message(format!("{} {variant} 2^{log_n}", op.name()));
        match measure(op, gpu.as_ref(), variant, log_n, &opts, &args, &bar) {
            Ok(row) => rows.push(row),
            // Sizes "where device memory allows" (2^27 MSM, 2^28 NTT) are skipped on smaller GPUs, not fatal.
            // So is a size a device-memory budget variant cannot run in (the error states the least it needs).
            Err(e)
                if matches!(
                    e.downcast_ref::<zkgpu::Error>(),
                    Some(zkgpu::Error::OutOfMemory { .. } | zkgpu::Error::DeviceBudget { .. })
                ) =>
            {
                // On stderr, not through the bar: a hidden bar (no terminal, as in the bundle's logs) drops it.
                bar.suspend(|| eprintln!("{} {variant} 2^{log_n}: skipped, {e}", op.name()));
            }
            Err(e) => return Err(format!("{} {variant} 2^{log_n}: {e}", op.name()).into()),
        }
    }
    bar.finish_and_clear();

    let (gpu_name, driver) = match &gpu {
        Some(g) => (g.info().name.clone(), g.info().driver_version.clone()),
        None => (format!("cpu: {}", report::cpu_name()), "none".to_string()),
    };
    let results = Results {
        gpu: gpu_name,
        driver,
        commit: option_env!("ZKGPU_BENCH_COMMIT").unwrap_or("unknown").to_string(),
        date: report::utc_now_rfc3339(),
        rows,
    };
    report::print_table(&results, &selected, target);
    if let Some(path) = &args.json {
        results.write(path)?;
        println!("results: {}", path.display());
    }
    if let Some(path) = &args.plot {
        plot::write_svg(&results, path)?;
        println!("plot: {}", path.display());
    }
    if target == Target::Cpu {
        println!("\nNOTE: these are CPU reference timings. GPU timings need a CUDA device (NVIDIA driver + GPU).");
    }
    Ok(ExitCode::SUCCESS)
}

/// Warm up, time `reps` runs, verify the outputs, summarize as a row.
fn measure(
    op: &dyn BenchOp,
    gpu: Option<&Gpu>,
    variant: &str,
    log_n: u32,
    opts: &CaseOptions,
    args: &Args,
    bar: &ProgressBar,
) -> Result<Row> {
    let mut case = op.prepare(gpu, variant, log_n, opts)?;
    for _ in 0..args.warmup {
        case.run()?;
        bar.inc(1);
    }
    let mut times = Vec::with_capacity(args.reps as usize);
    for _ in 0..args.reps {
        times.push(case.run()?);
        bar.inc(1);
    }
    case.verify(args.warmup + args.reps)?;
    times.sort_by(f64::total_cmp);
    let median = if times.len() % 2 == 1 {
        times[times.len() / 2]
    } else {
        (times[times.len() / 2 - 1] + times[times.len() / 2]) / 2.0
    };
    Ok(Row {
        op: op.name().to_string(),
        variant: variant.to_string(),
        log_n,
        inputs: case.inputs().to_string(),
        median_ms: median,
        min_ms: times[0],
        max_ms: times[times.len() - 1],
        reps: args.reps,
        gmul_s: case.muls_per_run().map(|m| m / (median * 1e-3) / 1e9),
        ginv_s: case.invs_per_run().map(|m| m / (median * 1e-3) / 1e9),
        gbps: case.bytes_per_run().map(|b| b / (median * 1e-3) / 1e9),
        extra: case.extra(),
    })
}

/// The op's variants on `target`: those named in `wanted`, else the op's default ones.
fn variants<'a>(op: &'a dyn BenchOp, target: Target, wanted: &[String]) -> Vec<&'a str> {
    if wanted.is_empty() {
        return op.default_variants(target).to_vec();
    }
    op.variants(target).iter().copied().filter(|v| wanted.iter().any(|w| w == v)).collect()
}

/// Open the GPU if there is one; otherwise say why (and `fallback`, what happens instead) and return None.
fn open_gpu(ordinal: usize, fallback: &str) -> Option<Gpu> {
    let opened =
        Gpu::count().and_then(|count| if count == 0 { Err(zkgpu::Error::NoDevice) } else { Gpu::new(ordinal) });
    match opened {
        Ok(gpu) => {
            let i = gpu.info();
            println!(
                "GPU {}: {} (sm_{}{}, {} SMs, {:.0} GiB), driver {}, PTX {} ({}; modules load on first use)",
                i.ordinal,
                i.name,
                i.compute_capability.0,
                i.compute_capability.1,
                i.sm_count,
                i.total_memory as f64 / (1u64 << 30) as f64,
                i.driver_version,
                i.ptx_arch,
                zkgpu::PTX_SOURCE
            );
            Some(gpu)
        }
        Err(e) => {
            println!("No CUDA GPU ({e}): GPU timings need a CUDA device. {fallback}");
            None
        }
    }
}

/// `--warm-up`: every production module loaded (compiled into the module cache where it was not there).
fn warm_up(ordinal: usize) -> Result<ExitCode> {
    let Some(gpu) = open_gpu(ordinal, "Nothing to warm up.") else { return Ok(ExitCode::FAILURE) };
    println!("module cache: {:?}", zkgpu::module_cache::ModuleCache::from_env());
    let started = std::time::Instant::now();
    for module in zkgpu::warm_up(&gpu)? {
        println!("{:<28} {:>10.1} ms  {:?}", module.stem, module.load_ms, module.image);
    }
    println!("warm-up: {:.1} s", started.elapsed().as_secs_f64());
    Ok(ExitCode::SUCCESS)
}

fn probe(ordinal: usize) -> ExitCode {
    match open_gpu(ordinal, "") {
        Some(_) => ExitCode::SUCCESS,
        None => ExitCode::FAILURE,
    }
}

/// `--list`: per op its default sizes, variants and description, wrapped to the terminal's width; consecutive
/// ops that differ only in name (the NTT orderings) share one entry.
fn list(ops: &[Box<dyn BenchOp>]) {
    let width = console::Term::stdout()
        .size_checked()
        .map(|(_, cols)| usize::from(cols))
        .unwrap_or_else(|| bench_args::columns_or(100))
        .clamp(40, 160);
    let sizes = |s: &[u32]| {
        if s.is_empty() { "-".to_string() } else { s.iter().map(u32::to_string).collect::<Vec<_>>().join(",") }
    };
    let names = |v: &[&str]| if v.is_empty() { "-".to_string() } else { v.join(", ") };
    println!("Ops (select by name or prefix: `mul`, `ntt_fwd`, `batch-add`; * = not in the default sweep).");
    println!("Variants: the first is the baseline the table's ratio column divides by.\n");
    let details = |op: &dyn BenchOp| {
        (
            format!(
                "sizes (log2): GPU {}; CPU {}",
                sizes(op.default_sizes(Target::Gpu)),
                sizes(op.default_sizes(Target::Cpu))
            ),
            format!("GPU variants: {}", names(op.variants(Target::Gpu))),
            format!("CPU variants: {}", names(op.variants(Target::Cpu))),
            op.about(),
        )
    };
    let mut i = 0;
    while i < ops.len() {
        let d = details(ops[i].as_ref());
        let group = ops[i..].iter().take_while(|op| details(op.as_ref()) == d).count();
        let label: Vec<String> = ops[i..i + group]
            .iter()
            .map(|op| format!("{}{}", op.name(), if op.in_default_sweep() { "" } else { " *" }))
            .collect();
        print_wrapped("", &label.join(", "), width);
        for line in [&d.0, &d.1, &d.2, d.3] {
            print_wrapped("    ", line, width);
        }
        i += group;
    }
}

/// `text` word-wrapped to `width` columns, every line after `indent` (continuation lines two spaces more).
fn print_wrapped(indent: &str, text: &str, width: usize) {
    let room = width.saturating_sub(indent.len() + 2).max(20);
    for (i, line) in bench_args::wrap(text, room).iter().enumerate() {
        println!("{indent}{}{line}", if i == 0 { "" } else { "  " });
    }
}

/// `22`, `16,20,24`, `16..24`, `16..24:2`.
fn parse_sizes(text: &str) -> Result<Vec<u32>> {
    let mut sizes = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        if let Some((lo, rest)) = part.split_once("..") {
            let (hi, step) = rest.split_once(':').unwrap_or((rest, "1"));
            let (lo, hi, step): (u32, u32, u32) = (lo.trim().parse()?, hi.trim().parse()?, step.trim().parse()?);
            if step == 0 || lo > hi {
                return Err(format!("bad size range {part:?}").into());
            }
            sizes.extend((lo..=hi).step_by(step as usize));
        } else {
            sizes.push(part.parse()?);
        }
    }
    if sizes.is_empty() || sizes.iter().any(|&s| s > 31) {
        return Err(format!("--sizes {text:?}: give log2 sizes between 0 and 31").into());
    }
    Ok(sizes)
}

fn random_seed() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_syntax() {
        assert_eq!(parse_sizes("22").unwrap(), vec![22]);
        assert_eq!(parse_sizes("16,20, 24").unwrap(), vec![16, 20, 24]);
        assert_eq!(parse_sizes("16..20").unwrap(), vec![16, 17, 18, 19, 20]);
        assert_eq!(parse_sizes("16..24:4").unwrap(), vec![16, 20, 24]);
        assert!(parse_sizes("20..16").is_err());
        assert!(parse_sizes("40").is_err());
        assert!(parse_sizes("x").is_err());
    }

    #[test]
    fn op_selection_by_prefix() {
        let names = |w: &[&str]| -> Vec<&'static str> {
            let wanted: Vec<String> = w.iter().map(|s| s.to_string()).collect();
            ops::select(ops::registry(), &wanted).unwrap().iter().map(|o| o.name()).collect()
        };
        assert_eq!(names(&["mul"]), vec!["mul_fq", "mul_fr"]);
        assert_eq!(names(&["mul_fr"]), vec!["mul_fr"]);
        assert_eq!(names(&["batch-add"]), names(&["batch_add"]));
        assert_eq!(
            names(&["batch-add"]),
            vec!["batch_add_g1_all", "batch_add_g1_half", "batch_add_g2_all", "batch_add_g2_half"]
        );
        assert!(ops::select(ops::registry(), &["mu".to_string()]).is_err());
    }
}
