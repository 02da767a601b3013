//! The results table printed after a sweep, and the small facts a results file records (CPU name, date).
use crate::ops::{BenchOp, Target};
use zkgpu_bench::peers;
use zkgpu_bench::results::{Results, Row};

pub fn print_table(results: &Results, ops: &[Box<dyn BenchOp>], target: Target) {
    println!("\n{} (driver {}, commit {}, {})", results.gpu, results.driver, results.commit, results.date);
    let header = format!(
        "{:<18} {:<20} {:>5} {:<8} {:>11} {:>11} {:>26} {:>8} {:>24}",
        "op", "variant", "log n", "inputs", "median ms", "min ms", "throughput", "vs base", "vs sppark (H200)"
    );
    println!("{header}\n{}", "-".repeat(header.len()));
    for row in &results.rows {
        let baseline =
            ops.iter().find(|op| op.name() == row.op).and_then(|op| op.variants(target).first().copied()).and_then(
                |base| {
                    results
                        .rows
                        .iter()
                        .find(|r| r.op == row.op && r.log_n == row.log_n && r.inputs == row.inputs && r.variant == base)
                },
            );
        let vs_base = baseline.map(|b| format!("{:.2}x", b.median_ms / row.median_ms)).unwrap_or_default();
        let vs_peer = match (peers::sppark(&row.op, row.log_n, &row.inputs), peers::ratio_to_sppark(row)) {
            (Some(p), Some(r)) => format!("{r:.2}x of {}", p.figure.describe()),
            _ => String::new(),
        };
        println!(
            "{:<18} {:<20} {:>5} {:<8} {:>11.4} {:>11.4} {:>26} {:>8} {:>24}",
            row.op,
            row.variant,
            row.log_n,
            row.inputs,
            row.median_ms,
            row.min_ms,
            throughput(results, row),
            vs_base,
            vs_peer
        );
    }
    if target == Target::Gpu && results.gpu.contains("H200") {
        println!("(IMAD bound on the H200: {})", peers::h200_imad_bounds_text());
    }
}

/// "27.1 G mul/s (95% IMAD)" on an H200, "27.1 G mul/s" elsewhere, "1.20 G inv/s" for inversions, "12.0 GB/s"
/// for transfers, "busy 99% H2D 55.3 GB/s" for pipelines (their `gpu_busy` and `h2d_gbps` fields).
fn throughput(results: &Results, row: &Row) -> String {
    let field = |name: &str| row.extra.get(name).and_then(serde_json::Value::as_f64);
    if let (Some(busy), Some(h2d)) = (field("gpu_busy"), field("h2d_gbps")) {
        return format!("busy {:.0}% H2D {h2d:.1} GB/s", 100.0 * busy);
    }
    if let Some(g) = row.gmul_s {
        let bound = peers::h200_imad_bound_gmul_s(&row.op).filter(|_| results.gpu.contains("H200"));
        return match bound {
            Some(b) => format!("{g:.2} G mul/s ({:.0}% IMAD)", 100.0 * g / b),
            None if g < 1.0 => format!("{:.1} M mul/s", g * 1e3),
            None => format!("{g:.2} G mul/s"),
        };
    }
    if let Some(g) = row.ginv_s {
        return match g {
            g if g >= 1.0 => format!("{g:.2} G inv/s"),
            g if g >= 1e-3 => format!("{:.2} M inv/s", g * 1e3),
            g => format!("{:.1} k inv/s", g * 1e6),
        };
    }
    row.gbps.map(|g| format!("{g:.1} GB/s")).unwrap_or_default()
}

/// "Model name (N threads)" from /proc/cpuinfo, for CPU reference results.
pub fn cpu_name() -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("model name").map(|r| r.trim_start_matches([' ', '\t', ':']).to_string()))
        })
        .unwrap_or_else(|| "unknown CPU".into());
    format!("{model} ({} threads)", rayon::current_num_threads())
}

/// Current UTC time as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn utc_now_rfc3339() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    rfc3339(secs)
}

fn rfc3339(unix_secs: u64) -> String {
    let days = (unix_secs / 86_400) as i64;
    let rem = unix_secs % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

#[cfg(test)]
mod tests {
    #[test]
    fn rfc3339_dates() {
        assert_eq!(super::rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(super::rfc3339(1_795_000_000), "2026-11-18T11:06:40Z");
    }

    #[test]
    fn throughput_column_per_kind_of_row() {
        let results: super::Results = serde_json::from_str(
            r#"{"gpu": "NVIDIA H200", "driver": "", "commit": "", "date": "", "rows": [
                {"op": "h2d", "variant": "pinned", "log_n": 30, "inputs": "pinned", "median_ms": 1, "min_ms": 1,
                 "max_ms": 1, "reps": 5, "gbps": 55.25},
                {"op": "pipeline_partition", "variant": "pinned-2stream", "log_n": 24, "inputs": "pinned",
                 "median_ms": 1, "min_ms": 1, "max_ms": 1, "reps": 3, "gpu_busy": 0.992, "h2d_gbps": 55.27},
                {"op": "msm_g1", "variant": "auto", "log_n": 24, "inputs": "device", "median_ms": 1, "min_ms": 1,
                 "max_ms": 1, "reps": 7, "window_bits": 19},
                {"op": "inv_fq", "variant": "divsteps", "log_n": 20, "inputs": "device", "median_ms": 1,
                 "min_ms": 1, "max_ms": 1, "reps": 7, "ginv_s": 0.41, "iters": 4},
                {"op": "inv_fr", "variant": "divsteps", "log_n": 20, "inputs": "device", "median_ms": 1,
                 "min_ms": 1, "max_ms": 1, "reps": 7, "ginv_s": 1.5, "iters": 4},
                {"op": "inv_fq", "variant": "fermat", "log_n": 12, "inputs": "host", "median_ms": 1,
                 "min_ms": 1, "max_ms": 1, "reps": 7, "ginv_s": 0.0000331, "iters": 2}]}"#,
        )
        .unwrap();
        let column: Vec<String> = results.rows.iter().map(|r| super::throughput(&results, r)).collect();
        assert_eq!(
            column,
            ["55.2 GB/s", "busy 99% H2D 55.3 GB/s", "", "410.00 M inv/s", "1.50 G inv/s", "33.1 k inv/s"]
        );
    }
}
