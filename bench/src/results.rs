//! The benchmark results file (`benches/results/<gpu>.json`), in the schema of `shared/design.md`:
//! `{"gpu", "driver", "commit", "date", "rows": [{"op", "variant", "log_n", "inputs", "median_ms", "min_ms",
//! "max_ms", "reps", ...}]}` with op-specific extras (`gmul_s` for multiplication throughput, `ginv_s` for
//! inversion throughput, `gbps` for transfers, `gpu_busy`/`h2d_gbps` for pipelines). Unknown fields are kept,
//! so old files round-trip.
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One benchmark run: where it ran and what it measured.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Results {
    /// Device name, e.g. "NVIDIA H200", or `"cpu: <model>"` for CPU reference runs.
    pub gpu: String,
    /// NVIDIA driver version ("none" for CPU runs).
    pub driver: String,
    /// Git commit the binaries were built from (`-dirty` when the tree had changes).
    pub commit: String,
    /// UTC time of the run, RFC 3339.
    pub date: String,
    pub rows: Vec<Row>,
}

/// One (op, variant, size, input placement) measurement. Times are milliseconds over `reps` repetitions.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row {
    pub op: String,
    pub variant: String,
    pub log_n: u32,
    /// Where the inputs start: "device", "pinned", "pageable" (GPU) or "host" (CPU reference).
    pub inputs: String,
    pub median_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
    pub reps: u32,
    /// Field multiplications per second, in billions (mul_* ops).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gmul_s: Option<f64>,
    /// Field inversions per second, in billions (inv_* ops).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ginv_s: Option<f64>,
    /// Transfer rate in GB/s (h2d/d2h ops).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gbps: Option<f64>,
    /// Anything else an op records (iterations, gpu_busy, ...).
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl Row {
    /// A row with only the common fields (all times `median_ms`, 5 reps): for tests and generated rows.
    pub fn new(op: &str, variant: &str, log_n: u32, inputs: &str, median_ms: f64) -> Row {
        Row {
            op: op.into(),
            variant: variant.into(),
            log_n,
            inputs: inputs.into(),
            median_ms,
            min_ms: median_ms,
            max_ms: median_ms,
            reps: 5,
            gmul_s: None,
            ginv_s: None,
            gbps: None,
            extra: Default::default(),
        }
    }
}

impl Results {
    pub fn read(path: &Path) -> Result<Results, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    pub fn write(&self, path: &Path) -> Result<(), String> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        let text = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        std::fs::write(path, text + "\n").map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// Proofs in flight per run of a Groth16 variant (`groth16_prove` rows): `supraseal-batch<N>` N, `zkgpu-stream`
/// 32 and `zkgpu-pipelined` 8 (the runner's batch sizes), other batches 8, else 1.
pub fn groth16_in_flight(variant: &str) -> usize {
    if let Some(n) = variant.strip_prefix("supraseal-batch").and_then(|n| n.parse().ok()) {
        return n;
    }
    if variant.contains("stream") {
        32
    } else if variant.contains("pipelined") || variant.contains("batch") {
        8
    } else {
        1
    }
}

/// The supraseal row a zkgpu Groth16 row is compared with (tables and plots): same size, same circuit, as many
/// proofs in flight; none for the x⁵ circuit, which the peers were not run on.
pub fn groth16_supraseal_peer<'a>(rows: &[&'a Row], row: &Row) -> Option<&'a Row> {
    let circuit = |r: &Row| r.extra.get("circuit").and_then(|c| c.as_str()).map(str::to_string);
    rows.iter().copied().find(|p| {
        p.log_n == row.log_n
            && p.variant.starts_with("supraseal")
            && groth16_in_flight(&p.variant) == groth16_in_flight(&row.variant)
            && circuit(p) == circuit(row)
            && !row.variant.ends_with("-x5")
    })
}
