//! SVG plots of a results file, one figure per op family, meant to be read at a glance.
//!
//! [`write_svg`] with `--plot DIR/NAME.svg` writes `NAME.svg` (an overview: the main panel of every family
//! present) and one `NAME_<family>.svg` per family beside it:
//! - `msm`: median time of the best zkgpu variant per size (G1 for each input placement, G2 device-resident)
//!   with sppark's H200 figures as markers (× device, △ pinned host memory, □ pageable host memory), and the
//!   speed-up over sppark where it has a figure;
//! - `ntt`: the forward NN transform (device-resident) and the end-to-end rows from host memory, sppark's
//!   figures, and the speed-up over sppark for each configuration it was measured on;
//! - `batch_add`: each op's best variant, sppark's G1 figures, the speed-up over them;
//! - `field`: multiplication throughput (best variant per field, the H200 IMAD bound dashed, sppark's figure)
//!   and inversion throughput;
//! - `transfers`: host/device copy bandwidth with sppark's figures;
//! - `pipeline`: Groth16 partition jobs, time per job and GPU busy fraction per variant;
//! - `groth16`: proofs per second per prover (zkgpu's solid, the peers' dashed) and zkgpu's speed-up over
//!   supraseal with as many proofs in flight (`zkgpu` against `supraseal`, `zkgpu-pipelined` against
//!   `supraseal-batch8`, `zkgpu-stream` against `supraseal-batch32`);
//! - `other`: any op none of the above claims, one panel each.
//!
//! Axes: x is the size as `2^k` (bytes for transfers); y is logarithmic for times and rates, with
//! SI-prefixed labels (`1 ms`, `20 G`), and linear for ratios and fractions. The SVG text is a pure function
//! of the results (no dates, no random ids, no system fonts, no trigonometry for markers), so
//! `cargo xtask readme --check` can redraw the committed plots and compare them byte for byte.
use crate::Result;
use plotters::prelude::*;
use std::path::Path;
use zkgpu_bench::peers::{self, Figure};
use zkgpu_bench::results::{Results, Row, groth16_in_flight as in_flight, groth16_supraseal_peer as supraseal_peer};

const FONT: &str = "sans-serif";
const PANEL_W: u32 = 560;
const CHART_H: u32 = 320;
const LEGEND_ROW_H: u32 = 18;
const LEGEND_PAD: u32 = 10;
const TITLE_H: u32 = 34;
/// Legend entries per row under a panel.
const LEGEND_COLS: usize = 2;
/// The overview and the family figures put this many panels side by side.
const FIGURE_COLS: usize = 2;

const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(23, 190, 207),
];
/// Peers measured in the same run (Groth16's supraseal and bellperson): shades of grey.
const GREYS: [RGBColor; 5] =
    [RGBColor(0, 0, 0), RGBColor(110, 110, 110), RGBColor(160, 160, 160), RGBColor(60, 60, 60), RGBColor(135, 90, 60)];
const REFERENCE: RGBColor = RGBColor(110, 110, 110);

/// Writes the overview to `path` and the family figures beside it (`<stem>_<family>.svg`).
pub fn write_svg(results: &Results, path: &Path) -> Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "plot".into());
    for (name, svg) in render(results, &stem)? {
        std::fs::write(dir.join(name), svg)?;
    }
    Ok(())
}

/// The plots of `results` as (file name, SVG text): `<stem>.svg` first, then `<stem>_<family>.svg` for each
/// family with rows, in the order of the module docs.
pub fn render(results: &Results, stem: &str) -> Result<Vec<(String, String)>> {
    let families = families(results);
    let gpu = short(&results.gpu);
    let mut out = Vec::new();
    let main: Vec<&Panel> = families.iter().filter_map(|f| f.panels.first()).collect();
    let title = format!("{gpu}: the main panel of each op family ({stem}_<family>.svg has the rest)");
    out.push((format!("{stem}.svg"), draw_figure(&title, &main)?));
    for family in &families {
        let panels: Vec<&Panel> = family.panels.iter().collect();
        out.push((format!("{stem}_{}.svg", family.key), draw_figure(&format!("{} on {gpu}", family.title), &panels)?));
    }
    Ok(out)
}

fn short(name: &str) -> &str {
    name.split(" (").next().unwrap_or(name)
}

// ---------------------------------------------------------------------------------------------------------
// What is drawn: figures of panels of series.

#[derive(Clone, Copy, Debug, PartialEq)]
enum Marker {
    Dot,
    Cross,
    Triangle,
    Square,
    Diamond,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Line {
    Solid,
    Dashed,
    None,
}

struct Series {
    label: String,
    color: RGBColor,
    marker: Marker,
    line: Line,
    /// (log2 size, value in the panel's unit)
    points: Vec<(f64, f64)>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Scale {
    /// Milliseconds, logarithmic, labelled in seconds with SI prefixes (`500 µs`, `20 ms`, `1.5 s`).
    Time,
    /// Per second in base units, logarithmic, labelled with SI prefixes (`20 G`).
    Rate,
    /// Linear from zero, labelled `1.5×`, with 1 marked.
    Ratio,
    /// 0..1, labelled in percent.
    Fraction,
}

struct Panel {
    title: String,
    scale: Scale,
    y_desc: String,
    x_desc: &'static str,
    /// x is log2 bytes (labels in KiB/MiB/GiB) rather than log2 elements (labels 2^k).
    x_bytes: bool,
    series: Vec<Series>,
    /// Labelled horizontal reference lines (value in the panel's unit).
    references: Vec<(String, f64, RGBColor)>,
}

impl Panel {
    fn new(title: impl Into<String>, scale: Scale, y_desc: impl Into<String>, x_desc: &'static str) -> Panel {
        Panel {
            title: title.into(),
            scale,
            y_desc: y_desc.into(),
            x_desc,
            x_bytes: false,
            series: Vec::new(),
            references: Vec::new(),
        }
    }

    fn push(&mut self, label: impl Into<String>, color: RGBColor, marker: Marker, line: Line, points: Vec<(f64, f64)>) {
        if !points.is_empty() {
            self.series.push(Series { label: label.into(), color, marker, line, points });
        }
    }

    fn is_empty(&self) -> bool {
        self.series.is_empty()
    }

    fn legend_rows(&self) -> u32 {
        (self.series.len() + self.references.len()).div_ceil(LEGEND_COLS) as u32
    }
}

struct Family {
    key: &'static str,
    title: &'static str,
    panels: Vec<Panel>,
}

// ---------------------------------------------------------------------------------------------------------
// From rows to series.

fn extra(row: &Row, name: &str) -> Option<f64> {
    row.extra.get(name).and_then(serde_json::Value::as_f64).filter(|v| v.is_finite())
}

/// The ops of `results` that `pred` accepts, in file order.
fn ops_where(results: &Results, pred: impl Fn(&str) -> bool) -> Vec<&str> {
    let mut ops: Vec<&str> = Vec::new();
    for r in &results.rows {
        if pred(&r.op) && !ops.contains(&r.op.as_str()) {
            ops.push(&r.op);
        }
    }
    ops
}

fn rows_of<'a>(results: &'a Results, op: &str) -> Vec<&'a Row> {
    results.rows.iter().filter(|r| r.op == op).collect()
}

/// Input placements of `rows`: device, pinned, pageable, host, then any other, each once.
fn placements<'a>(rows: &[&'a Row]) -> Vec<&'a str> {
    let rank = |i: &str| ["device", "pinned", "pageable", "host"].iter().position(|p| *p == i).unwrap_or(4);
    let mut out: Vec<&str> = Vec::new();
    for r in rows {
        if !out.contains(&r.inputs.as_str()) {
            out.push(&r.inputs);
        }
    }
    out.sort_by_key(|i| rank(i)); // stable: others keep their file order
    out
}

fn placement_label(inputs: &str) -> String {
    match inputs {
        "device" => "device-resident".into(),
        "pinned" => "pinned host".into(),
        "pageable" => "pageable host".into(),
        "host" => "CPU".into(),
        other => other.into(),
    }
}

/// sppark's marker for an input placement.
fn peer_marker(inputs: &str) -> Marker {
    match inputs {
        "pinned" => Marker::Triangle,
        "pageable" => Marker::Square,
        _ => Marker::Cross,
    }
}

/// Per size, the best value over the variants of `rows` with these inputs (`higher`: larger is better).
fn best(rows: &[&Row], inputs: &str, value: impl Fn(&Row) -> Option<f64>, higher: bool) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::new();
    for r in rows.iter().filter(|r| r.inputs == inputs) {
        let Some(v) = value(r).filter(|v| v.is_finite() && *v > 0.0) else { continue };
        let x = f64::from(r.log_n);
        match out.iter_mut().find(|(px, _)| *px == x) {
            Some(p) if (higher && v > p.1) || (!higher && v < p.1) => p.1 = v,
            Some(_) => {}
            None => out.push((x, v)),
        }
    }
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out
}

/// sppark's recorded times (ms) for (op, inputs), as points; none for results from another GPU than the one
/// sppark was measured on (an H200).
fn peer_ms(results: &Results, op: &str, inputs: &str) -> Vec<(f64, f64)> {
    if !results.gpu.contains("H200") {
        return Vec::new();
    }
    let mut pts: Vec<(f64, f64)> = peers::SPPARK_H200
        .iter()
        .filter(|p| p.op == op && p.inputs == inputs)
        .filter_map(|p| match p.figure {
            Figure::Ms(ms) => Some((f64::from(p.log_n), ms)),
            _ => None,
        })
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    pts
}

/// Peer time over zkgpu time where both exist (> 1: zkgpu faster).
fn speedup(zkgpu_ms: &[(f64, f64)], peer_ms: &[(f64, f64)]) -> Vec<(f64, f64)> {
    zkgpu_ms.iter().filter_map(|(x, ms)| peer_ms.iter().find(|(px, _)| px == x).map(|(_, p)| (*x, p / ms))).collect()
}

fn median_ms(r: &Row) -> Option<f64> {
    Some(r.median_ms)
}

/// "G1" for msm_g1, "fwd NN" for ntt_fwd_nn, "coset inv RR" for ntt_coset_inv_rr, "G1 all" for
/// batch_add_g1_all, "Fq" for mul_fq / inv_fq.
fn op_label(op: &str) -> String {
    let words: Vec<String> = op
        .split('_')
        .skip(1)
        .map(|w| match w {
            "g1" | "g2" | "nn" | "nr" | "rn" | "rr" => w.to_uppercase(),
            "fq" => "Fq".into(),
            "fr" => "Fr".into(),
            "add" => String::new(),
            other => other.into(),
        })
        .filter(|w| !w.is_empty())
        .collect();
    if words.is_empty() { op.to_string() } else { words.join(" ") }
}

/// Which ops a family claims, and how its panels are built.
type FamilyBuilder = (fn(&str) -> bool, fn(&Results) -> Family);

/// Each family's panels; ops no family claims go to `other`.
fn families(results: &Results) -> Vec<Family> {
    let builders: [FamilyBuilder; 7] = [
        (|op| op.starts_with("msm_"), msm),
        (|op| op.starts_with("ntt_"), ntt),
        (|op| op.starts_with("batch_add_"), batch_add),
        (|op| op.starts_with("mul_") || op.starts_with("inv_"), field),
        (|op| op == "h2d" || op == "d2h", transfers),
        (|op| op.starts_with("pipeline_"), pipeline),
        (|op| op == "groth16_prove", groth16),
    ];
    let mut out = Vec::new();
    for (claims, build) in &builders {
        if results.rows.iter().any(|r| claims(&r.op)) {
            let mut family = build(results);
            family.panels.retain(|p| !p.is_empty());
            if !family.panels.is_empty() {
                out.push(family);
            }
        }
    }
    let rest = ops_where(results, |op| !builders.iter().any(|(claims, _)| claims(op)));
    if !rest.is_empty() {
        let mut family = Family { key: "other", title: "Other ops", panels: Vec::new() };
        for op in rest {
            let rows = rows_of(results, op);
            let mut panel = Panel::new(format!("{op}: median time"), Scale::Time, "median time", "n");
            let mut k = 0;
            for inputs in placements(&rows) {
                let mut variants: Vec<&str> = Vec::new();
                for r in rows.iter().filter(|r| r.inputs == inputs) {
                    if !variants.contains(&r.variant.as_str()) {
                        variants.push(&r.variant);
                    }
                }
                for v in variants {
                    if k == PALETTE.len() {
                        break;
                    }
                    let vrows: Vec<&Row> = rows.iter().copied().filter(|r| r.variant == v).collect();
                    panel.push(
                        format!("{v} ({inputs})"),
                        PALETTE[k],
                        Marker::Dot,
                        Line::Solid,
                        best(&vrows, inputs, median_ms, false),
                    );
                    k += 1;
                }
            }
            if !panel.is_empty() {
                family.panels.push(panel);
            }
        }
        if !family.panels.is_empty() {
            out.push(family);
        }
    }
    out
}

/// A time panel and a speed-up panel: for each (op, inputs) chosen by `series`, the best variant's time,
/// sppark's figures for `peer_op(op, inputs)` (markers by placement, in the line's colour) and the ratio.
fn time_and_speedup(
    key: &'static str,
    title: &'static str,
    what: &str,
    x_desc: &'static str,
    series: &[(&str, &str, String, &str)],
    results: &Results,
) -> Family {
    let mut time =
        Panel::new(format!("{what}: median time, best variant per size"), Scale::Time, "median time", x_desc);
    let mut ratio = Panel::new(
        format!("{what}: speed-up over {} (H200)", peers::PEER_NAME),
        Scale::Ratio,
        "zkgpu vs sppark (> 1: zkgpu faster)",
        x_desc,
    );
    ratio.references.push(("sppark = 1".into(), 1.0, REFERENCE));
    for (k, (op, inputs, label, peer_op)) in series.iter().enumerate() {
        let color = PALETTE[k % PALETTE.len()];
        let ms = best(&rows_of(results, op), inputs, median_ms, false);
        let peer = peer_ms(results, peer_op, inputs);
        time.push(format!("zkgpu {label}"), color, Marker::Dot, Line::Solid, ms.clone());
        if !peer.is_empty() && !ms.is_empty() {
            // sppark's end-to-end NTT figures are of another configuration than zkgpu's rows: say which.
            let peer_label = if peer_op == op {
                label.clone()
            } else {
                format!("{}, {}", op_label(peer_op), placement_label(inputs))
            };
            time.push(format!("sppark {peer_label}"), color, peer_marker(inputs), Line::None, peer.clone());
            ratio.push(label.clone(), color, Marker::Dot, Line::Solid, speedup(&ms, &peer));
        }
    }
    Family { key, title, panels: vec![time, ratio] }
}

fn msm(results: &Results) -> Family {
    let mut series = Vec::new();
    for op in ops_where(results, |op| op.starts_with("msm_")) {
        let rows = rows_of(results, op);
        let all = placements(&rows);
        // G1 in every placement (sppark has all three); other curves device-resident only, to keep few lines.
        let chosen: Vec<&str> = if op == "msm_g1" { all } else { all.into_iter().take(1).collect() };
        for inputs in chosen {
            series.push((op, inputs, format!("{}, {}", op_label(op), placement_label(inputs)), op));
        }
    }
    time_and_speedup("msm", "MSM (Pippenger)", "MSM", "points n", &series, results)
}

fn ntt(results: &Results) -> Family {
    let ops = ops_where(results, |op| op.starts_with("ntt_"));
    // The representative device transform: forward, natural order in and out (sppark measured it end to end too).
    let main = ops.iter().copied().find(|op| *op == "ntt_fwd_nn").or(ops.first().copied()).unwrap_or("ntt_fwd_nn");
    let main_rows = rows_of(results, main);
    let mut series: Vec<(&str, &str, String, &str)> = Vec::new();
    let first = placements(&main_rows).first().copied().unwrap_or("device");
    series.push((main, first, format!("{}, {}", op_label(main), placement_label(first)), main));
    // End to end from host memory, whichever configuration has such rows.
    for op in &ops {
        for inputs in placements(&rows_of(results, op)) {
            if inputs == "pinned" || inputs == "pageable" {
                series.push((op, inputs, format!("{}, {}", op_label(op), placement_label(inputs)), main));
            }
        }
    }
    let mut family = time_and_speedup("ntt", "NTT over Fr", "NTT", "elements n", &series, results);
    family.panels[0].title = "NTT: median time (from host memory: end to end)".into();
    // The speed-up panel: every configuration sppark was measured on (device-resident), not only the main one.
    let ratio = &mut family.panels[1];
    ratio.series.clear();
    let mut k = 0;
    for op in &ops {
        let ms = best(&rows_of(results, op), "device", median_ms, false);
        let peer = peer_ms(results, op, "device");
        let pts = speedup(&ms, &peer);
        if !pts.is_empty() {
            ratio.push(op_label(op), PALETTE[k % PALETTE.len()], Marker::Dot, Line::Solid, pts);
            k += 1;
        }
    }
    family
}

fn batch_add(results: &Results) -> Family {
    let mut series = Vec::new();
    for op in ops_where(results, |op| op.starts_with("batch_add_")) {
        let rows = rows_of(results, op);
        if let Some(inputs) = placements(&rows).first().copied() {
            let label = op_label(op).replace(" half", " half (50% bitmap)");
            series.push((op, inputs, label, op));
        }
    }
    time_and_speedup("batch_add", "Batch addition of affine points", "Batch addition", "points n", &series, results)
}

fn field(results: &Results) -> Family {
    let h200 = results.gpu.contains("H200");
    let mut mul = Panel::new(
        "Field multiplication: throughput, best variant",
        Scale::Rate,
        "multiplications / s",
        "threads (chains of multiplications)",
    );
    let mut inv = Panel::new(
        "Field inversion: throughput, best variant",
        Scale::Rate,
        "inversions / s",
        "threads (chains of inversions)",
    );
    for (k, op) in ops_where(results, |op| op.starts_with("mul_")).into_iter().enumerate() {
        let color = PALETTE[k % PALETTE.len()];
        let rows = rows_of(results, op);
        for inputs in placements(&rows).into_iter().take(1) {
            let pts = best(&rows, inputs, |r| r.gmul_s.map(|g| g * 1e9), true);
            mul.push(format!("zkgpu {}", op_label(op)), color, Marker::Dot, Line::Solid, pts);
            let peer: Vec<(f64, f64)> = peers::SPPARK_H200
                .iter()
                .filter(|p| p.op == op && p.inputs == inputs)
                .filter_map(|p| match p.figure {
                    Figure::GmulS(g) => Some((f64::from(p.log_n), g * 1e9)),
                    _ => None,
                })
                .collect();
            if inputs != "host" {
                mul.push(format!("sppark {}", op_label(op)), color, Marker::Cross, Line::None, peer);
            }
        }
        if let Some(bound) = peers::h200_imad_bound_gmul_s(op).filter(|_| h200) {
            mul.references.push((format!("{} IMAD bound (H200)", op_label(op)), bound * 1e9, color));
        }
    }
    for (k, op) in ops_where(results, |op| op.starts_with("inv_")).into_iter().enumerate() {
        let rows = rows_of(results, op);
        for inputs in placements(&rows).into_iter().take(1) {
            let pts = best(&rows, inputs, |r| r.ginv_s.map(|g| g * 1e9), true);
            inv.push(format!("zkgpu {}", op_label(op)), PALETTE[k % PALETTE.len()], Marker::Dot, Line::Solid, pts);
        }
    }
    Family { key: "field", title: "Field arithmetic", panels: vec![mul, inv] }
}

fn transfers(results: &Results) -> Family {
    let mut panel = Panel::new("Host <-> device copies: bandwidth", Scale::Rate, "bytes / s", "bytes copied");
    panel.x_bytes = true;
    let mut k = 0;
    for op in ops_where(results, |op| op == "h2d" || op == "d2h") {
        let rows = rows_of(results, op);
        for inputs in placements(&rows) {
            let color = PALETTE[k % PALETTE.len()];
            k += 1;
            let name = op.to_uppercase();
            // D2H dashed: at line rate it lies on top of H2D.
            let line = if op == "d2h" { Line::Dashed } else { Line::Solid };
            panel.push(
                format!("zkgpu {name}, {}", placement_label(inputs)),
                color,
                Marker::Dot,
                line,
                best(&rows, inputs, |r| r.gbps.map(|g| g * 1e9), true),
            );
            let peer: Vec<(f64, f64)> = peers::SPPARK_H200
                .iter()
                .filter(|p| p.op == op && p.inputs == inputs)
                .filter_map(|p| match p.figure {
                    Figure::Gbps(g) => Some((f64::from(p.log_n), g * 1e9)),
                    _ => None,
                })
                .collect();
            panel.push(
                format!("sppark {name}, {}", placement_label(inputs)),
                color,
                peer_marker(inputs),
                Line::None,
                peer,
            );
        }
    }
    Family { key: "transfers", title: "Transfers", panels: vec![panel] }
}

fn pipeline(results: &Results) -> Family {
    let ops = ops_where(results, |op| op.starts_with("pipeline_"));
    let mut time = Panel::new("Groth16 partition jobs: time per job", Scale::Time, "wall time per job", "domain n");
    let mut busy =
        Panel::new("Groth16 partition jobs: GPU busy", Scale::Fraction, "kernel time / wall time", "domain n");
    let mut k = 0;
    for op in &ops {
        let rows = rows_of(results, op);
        let mut variants: Vec<&str> = Vec::new();
        for r in &rows {
            if !variants.contains(&r.variant.as_str()) {
                variants.push(&r.variant);
            }
        }
        for v in variants {
            let vrows: Vec<&Row> = rows.iter().copied().filter(|r| r.variant == v).collect();
            let label = if ops.len() > 1 { format!("{op} {v}") } else { v.to_string() };
            let color = PALETTE[k % PALETTE.len()];
            k += 1;
            let mut per_job = Vec::new();
            let mut fraction = Vec::new();
            for r in &vrows {
                per_job.push((f64::from(r.log_n), extra(r, "ms_per_job").unwrap_or(r.median_ms)));
                if let Some(b) = extra(r, "gpu_busy") {
                    fraction.push((f64::from(r.log_n), b));
                }
            }
            time.push(label.clone(), color, Marker::Dot, Line::Solid, per_job);
            busy.push(label, color, Marker::Dot, Line::Solid, fraction);
        }
    }
    Family { key: "pipeline", title: "Groth16 partition pipeline", panels: vec![time, busy] }
}

fn proofs_per_s(r: &Row) -> Option<f64> {
    extra(r, "proofs_per_s").or_else(|| (r.median_ms > 0.0).then(|| 1e3 / r.median_ms))
}

fn groth16(results: &Results) -> Family {
    // SHA-256 chains only: the x^5 circuits (`-x5`) are another workload.
    let rows: Vec<&Row> =
        rows_of(results, "groth16_prove").into_iter().filter(|r| !r.variant.ends_with("-x5")).collect();
    let mut variants: Vec<&str> = Vec::new();
    for r in &rows {
        if !variants.contains(&r.variant.as_str()) {
            variants.push(&r.variant);
        }
    }
    let mut rate = Panel::new(
        "Groth16 proofs of SHA-256 chains: throughput",
        Scale::Rate,
        "proofs / s (synthesis included)",
        "domain n",
    );
    let mut ratio = Panel::new(
        "Groth16: zkgpu's speed-up over supraseal",
        Scale::Ratio,
        "proofs/s vs supraseal (> 1: zkgpu faster)",
        "domain n",
    );
    ratio.references.push(("supraseal = 1 (as many in flight)".into(), 1.0, REFERENCE));
    let (mut ours, mut theirs) = (0, 0);
    let peer_markers = [Marker::Triangle, Marker::Square, Marker::Diamond, Marker::Cross];
    for v in &variants {
        let vrows: Vec<&Row> = rows.iter().copied().filter(|r| r.variant == *v).collect();
        let pts = placements(&vrows).first().map(|inputs| best(&vrows, inputs, proofs_per_s, true)).unwrap_or_default();
        if v.starts_with("zkgpu") {
            let color = PALETTE[ours % PALETTE.len()];
            ours += 1;
            let mut up: Vec<(f64, f64)> = vrows
                .iter()
                .filter_map(|r| {
                    let peer = supraseal_peer(&rows, r)?;
                    Some((f64::from(r.log_n), proofs_per_s(r)? / proofs_per_s(peer)?))
                })
                .collect();
            up.sort_by(|a, b| a.0.total_cmp(&b.0));
            let n = in_flight(v);
            ratio.push(format!("{v} ({n} in flight)"), color, Marker::Dot, Line::Solid, up);
            rate.push(v.to_string(), color, Marker::Dot, Line::Solid, pts);
        } else {
            let (color, marker) = (GREYS[theirs % GREYS.len()], peer_markers[theirs % peer_markers.len()]);
            theirs += 1;
            rate.push(v.to_string(), color, marker, Line::Dashed, pts);
        }
    }
    Family { key: "groth16", title: "Groth16 prover", panels: vec![rate, ratio] }
}

// ---------------------------------------------------------------------------------------------------------
// Drawing.

/// Panels in rows of [`FIGURE_COLS`], a title on top; each row as tall as its tallest legend needs.
fn draw_figure(title: &str, panels: &[&Panel]) -> Result<String> {
    let cols = panels.len().clamp(1, FIGURE_COLS);
    let rows: Vec<&[&Panel]> = panels.chunks(cols).collect();
    let row_h =
        |row: &[&Panel]| CHART_H + LEGEND_PAD + LEGEND_ROW_H * row.iter().map(|p| p.legend_rows()).max().unwrap_or(0);
    let width = PANEL_W * cols as u32;
    let height = TITLE_H + rows.iter().map(|r| row_h(r)).sum::<u32>().max(CHART_H);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let (top, mut rest) = root.split_vertically(TITLE_H);
        top.draw(&Text::new(title.to_string(), (14, 10), (FONT, 17).into_font().color(&BLACK)))?;
        if panels.is_empty() {
            rest.draw(&Text::new("no rows to plot".to_string(), (14, 20), (FONT, 14)))?;
        }
        for row in rows {
            let (area, below) = rest.split_vertically(row_h(row));
            rest = below;
            for (cell, panel) in area.split_evenly((1, cols)).iter().zip(row.iter()) {
                draw_panel(cell, panel)?;
            }
        }
        root.present()?;
    }
    Ok(svg)
}

/// The y coordinate of a value: log10 for times and rates, the value itself otherwise.
fn to_y(scale: Scale, v: f64) -> Option<f64> {
    match scale {
        Scale::Time | Scale::Rate => (v > 0.0 && v.is_finite()).then(|| v.log10()),
        Scale::Ratio | Scale::Fraction => v.is_finite().then_some(v),
    }
}

/// Draws a marker at `$at` on `$area` from integer pixel offsets (the same bytes on every machine: no
/// trigonometry). A macro because the chart and the legend are areas of different coordinate types.
macro_rules! draw_marker {
    ($area:expr, $at:expr, $marker:expr, $color:expr) => {{
        let (at, color) = ($at, $color);
        let stroke = color.stroke_width(2);
        match $marker {
            Marker::Dot => $area.draw(&(EmptyElement::at(at) + Circle::new((0, 0), 3, color.filled()))),
            Marker::Cross => $area.draw(
                &(EmptyElement::at(at)
                    + PathElement::new(vec![(-5, -5), (5, 5)], stroke)
                    + PathElement::new(vec![(-5, 5), (5, -5)], stroke)),
            ),
            Marker::Triangle => {
                $area.draw(&(EmptyElement::at(at) + PathElement::new(vec![(0, -6), (6, 5), (-6, 5), (0, -6)], stroke)))
            }
            Marker::Square => $area.draw(
                &(EmptyElement::at(at) + PathElement::new(vec![(-5, -5), (5, -5), (5, 5), (-5, 5), (-5, -5)], stroke)),
            ),
            Marker::Diamond => $area.draw(
                &(EmptyElement::at(at) + PathElement::new(vec![(0, -6), (6, 0), (0, 6), (-6, 0), (0, -6)], stroke)),
            ),
        }
    }};
}

fn draw_panel(area: &DrawingArea<SVGBackend, plotters::coord::Shift>, p: &Panel) -> Result<()> {
    let (chart_area, legend_area) = area.split_vertically(CHART_H);
    let xs: Vec<f64> = p.series.iter().flat_map(|s| s.points.iter().map(|q| q.0)).collect();
    let ys: Vec<f64> = p
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|q| q.1))
        .chain(p.references.iter().map(|r| r.1))
        .filter_map(|v| to_y(p.scale, v))
        .collect();
    if xs.is_empty() || ys.is_empty() {
        return Ok(());
    }
    let (x_lo, x_hi) = xs.iter().fold((f64::MAX, f64::MIN), |(lo, hi), x| (lo.min(*x), hi.max(*x)));
    let (y_lo, y_hi) = ys.iter().fold((f64::MAX, f64::MIN), |(lo, hi), y| (lo.min(*y), hi.max(*y)));
    let x_keys = x_ticks(x_lo, x_hi);
    let (y_range, y_keys) = y_axis(p.scale, y_lo, y_hi);
    let x_range = (x_lo - 0.5)..(x_hi + 0.5);
    let mut chart = ChartBuilder::on(&chart_area)
        .caption(&p.title, (FONT, 15))
        .margin(8)
        .margin_right(18)
        .x_label_area_size(36)
        .y_label_area_size(66)
        .build_cartesian_2d(Axis { range: x_range.clone(), keys: x_keys }, Axis { range: y_range, keys: y_keys })?;
    let scale = p.scale;
    let x_bytes = p.x_bytes;
    chart
        .configure_mesh()
        .x_desc(p.x_desc)
        .y_desc(p.y_desc.as_str())
        .x_label_formatter(&|x| if x_bytes { bytes_label(*x) } else { power_of_two(*x) })
        .y_label_formatter(&|y| y_label(scale, *y))
        .bold_line_style(RGBColor(228, 228, 228))
        .light_line_style(TRANSPARENT)
        .label_style((FONT, 12))
        .axis_desc_style((FONT, 13))
        .draw()?;
    for (_, value, color) in &p.references {
        if let Some(y) = to_y(scale, *value) {
            chart.draw_series(DashedLineSeries::new(
                vec![(x_range.start, y), (x_range.end, y)],
                6,
                4,
                color.stroke_width(1),
            ))?;
        }
    }
    for s in &p.series {
        let mut pts: Vec<(f64, f64)> = s.points.iter().filter_map(|(x, v)| to_y(scale, *v).map(|y| (*x, y))).collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        match s.line {
            Line::Solid => {
                chart.draw_series(LineSeries::new(pts.clone(), s.color.stroke_width(2)))?;
            }
            Line::Dashed => {
                chart.draw_series(DashedLineSeries::new(pts.clone(), 6, 4, s.color.stroke_width(2)))?;
            }
            Line::None => {}
        }
        for q in pts {
            draw_marker!(chart.plotting_area(), q, s.marker, s.color)?;
        }
    }
    // The legend, under the chart: series first, then the reference lines.
    let entries = p
        .series
        .iter()
        .map(|s| (s.label.as_str(), s.color, Some(s.marker), s.line))
        .chain(p.references.iter().map(|(label, _, color)| (label.as_str(), *color, None, Line::Dashed)));
    for (i, (label, color, marker, line)) in entries.enumerate() {
        let x = 70 + (i % LEGEND_COLS) as i32 * ((PANEL_W as i32 - 70) / LEGEND_COLS as i32);
        let y = (LEGEND_PAD / 2 + LEGEND_ROW_H * (i / LEGEND_COLS) as u32) as i32 + LEGEND_ROW_H as i32 / 2;
        match line {
            Line::Solid => legend_area.draw(&PathElement::new(vec![(x, y), (x + 24, y)], color.stroke_width(2)))?,
            Line::Dashed => {
                legend_area.draw(&PathElement::new(vec![(x, y), (x + 9, y)], color.stroke_width(2)))?;
                legend_area.draw(&PathElement::new(vec![(x + 15, y), (x + 24, y)], color.stroke_width(2)))?;
            }
            Line::None => {}
        }
        if let Some(m) = marker {
            draw_marker!(legend_area, (x + 12, y), m, color)?;
        }
        legend_area.draw(&Text::new(fit(label, 36), (x + 32, y - 7), (FONT, 12)))?;
    }
    Ok(())
}

/// A linear axis labelled at exactly the given values (the labels come from the mesh's formatters).
struct Axis {
    range: std::ops::Range<f64>,
    keys: Vec<f64>,
}

impl Ranged for Axis {
    type ValueType = f64;
    type FormatOption = plotters::coord::ranged1d::DefaultFormatting;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let t = (v - self.range.start) / (self.range.end - self.range.start);
        limit.0 + (t * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<H: plotters::coord::ranged1d::KeyPointHint>(&self, hint: H) -> Vec<f64> {
        // Bold lines and labels at the keys; no light lines.
        if hint.weight().allow_light_points() { Vec::new() } else { self.keys.clone() }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.range.clone()
    }
}

fn fit(label: &str, chars: usize) -> String {
    if label.chars().count() <= chars {
        label.to_string()
    } else {
        let mut s: String = label.chars().take(chars - 1).collect();
        s.push('…');
        s
    }
}

/// Integer log2 sizes to label: every one, or every other when there are many.
fn x_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let (lo, hi) = (lo.round() as i64, hi.round() as i64);
    let step = if hi - lo > 14 { 2 } else { 1 };
    (lo..=hi).step_by(step).map(|k| k as f64).collect()
}

/// The y range (in [`to_y`] coordinates) and its labelled values.
fn y_axis(scale: Scale, lo: f64, hi: f64) -> (std::ops::Range<f64>, Vec<f64>) {
    match scale {
        Scale::Time | Scale::Rate => {
            let (lo, hi) =
                if hi - lo < 0.3 { ((lo + hi) / 2.0 - 0.3, (lo + hi) / 2.0 + 0.3) } else { (lo - 0.12, hi + 0.12) };
            let decades = hi - lo;
            let (mantissas, every): (&[f64], i64) = match decades {
                d if d <= 0.8 => (&[1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], 1),
                d if d <= 2.2 => (&[1.0, 2.0, 5.0], 1),
                d if d <= 4.5 => (&[1.0, 3.0], 1),
                d if d <= 8.0 => (&[1.0], 1),
                _ => (&[1.0], 2),
            };
            let mut keys = Vec::new();
            for e in (lo.floor() as i64)..=(hi.ceil() as i64) {
                if e.rem_euclid(every) != 0 {
                    continue;
                }
                for m in mantissas {
                    let y = m.log10() + e as f64;
                    if y >= lo && y <= hi {
                        keys.push(y);
                    }
                }
            }
            (lo..hi, keys)
        }
        Scale::Ratio => {
            let top = (hi * 1.15).max(1.25);
            let step = [0.25, 0.5, 1.0, 2.0, 5.0, 10.0].into_iter().find(|s| top / s <= 8.0).unwrap_or(20.0);
            let keys = (0..).map(|i| i as f64 * step).take_while(|v| *v <= top).collect();
            (0.0..top, keys)
        }
        Scale::Fraction => (0.0..1.05, vec![0.0, 0.25, 0.5, 0.75, 1.0]),
    }
}

fn y_label(scale: Scale, y: f64) -> String {
    match scale {
        Scale::Time => si(10f64.powf(y) * 1e-3, "s"),
        Scale::Rate => {
            // Plain numbers below a thousand (0.5 proofs/s, not 500 m).
            let v = 10f64.powf(y);
            if (1e-3..1e3).contains(&v) { plain(v) } else { si(v, "") }
        }
        Scale::Ratio => format!("{}×", trim(&format!("{y:.2}"))),
        Scale::Fraction => format!("{:.0}%", y * 100.0),
    }
}

/// `2²⁰` for 20.
fn power_of_two(x: f64) -> String {
    if (x - x.round()).abs() > 1e-6 {
        return String::new();
    }
    const SUP: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    let k = x.round() as i64;
    let digits: String = k.unsigned_abs().to_string().chars().map(|c| SUP[c as usize - '0' as usize]).collect();
    format!("2{}{digits}", if k < 0 { "⁻" } else { "" })
}

/// `16 MiB` for 24, `1 GiB` for 30.
fn bytes_label(x: f64) -> String {
    if (x - x.round()).abs() > 1e-6 || x < 0.0 {
        return String::new();
    }
    let k = x.round() as u32;
    let (unit, shift) = match k {
        40.. => ("TiB", 40),
        30.. => ("GiB", 30),
        20.. => ("MiB", 20),
        10.. => ("KiB", 10),
        _ => ("B", 0),
    };
    format!("{} {unit}", 1u64 << (k - shift))
}

/// A value with an SI prefix and at most three significant digits: `500 µs`, `20 ms`, `1.5 s`, `27.4 G`.
fn si(v: f64, unit: &str) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("0{}", if unit.is_empty() { String::new() } else { format!(" {unit}") });
    }
    const PREFIXES: [&str; 9] = ["p", "n", "µ", "m", "", "k", "M", "G", "T"];
    let mut e3 = ((v.abs().log10() / 3.0).floor() as i32).clamp(-4, 4);
    let mut m = v / 10f64.powi(3 * e3);
    // Three significant digits; a mantissa that rounds up to 1000 moves to the next prefix.
    let digits = |m: f64| {
        if m.abs() >= 100.0 {
            0
        } else if m.abs() >= 10.0 {
            1
        } else {
            2
        }
    };
    let rounded: f64 = format!("{m:.*}", digits(m)).parse().unwrap_or(m);
    if rounded.abs() >= 1000.0 && e3 < 4 {
        e3 += 1;
        m = v / 10f64.powi(3 * e3);
    }
    let number = trim(&format!("{m:.*}", digits(m)));
    let prefix = PREFIXES[(e3 + 4) as usize];
    if prefix.is_empty() && unit.is_empty() { number } else { format!("{number} {prefix}{unit}") }
}

/// Up to three significant digits, no trailing zeros: `0.5`, `0.25`, `20`, `750`.
fn plain(v: f64) -> String {
    let digits = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else if v >= 1.0 {
        2
    } else {
        (2.0 - v.log10().floor()) as usize
    };
    trim(&format!("{v:.digits$}"))
}

fn trim(s: &str) -> String {
    if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(op: &str, variant: &str, log_n: u32, inputs: &str, median_ms: f64) -> Row {
        Row::new(op, variant, log_n, inputs, median_ms)
    }

    fn results(rows: Vec<Row>) -> Results {
        Results {
            gpu: "NVIDIA H200".into(),
            driver: "580".into(),
            commit: "test".into(),
            date: "2026-01-01T00:00:00Z".into(),
            rows,
        }
    }

    #[test]
    fn si_labels() {
        assert_eq!(si(1e-3, "s"), "1 ms");
        assert_eq!(si(0.02, "s"), "20 ms");
        assert_eq!(si(1.5, "s"), "1.5 s");
        assert_eq!(si(5e-4, "s"), "500 µs");
        assert_eq!(si(0.0009999, "s"), "1 ms");
        assert_eq!(si(5e9, ""), "5 G");
        assert_eq!(si(27.4e9, ""), "27.4 G");
        assert_eq!(si(10f64.powf(2f64.log10() - 3.0), "s"), "2 ms");
        assert_eq!(si(0.0, "s"), "0 s");
        assert_eq!(si(3.0, ""), "3");
    }

    #[test]
    fn axis_labels() {
        assert_eq!(power_of_two(20.0), "2²⁰");
        assert_eq!(power_of_two(20.5), "");
        assert_eq!(bytes_label(24.0), "16 MiB");
        assert_eq!(bytes_label(30.0), "1 GiB");
        assert_eq!(y_label(Scale::Time, (0.001f64).log10()), "1 µs");
        assert_eq!(y_label(Scale::Time, 1.0), "10 ms");
        assert_eq!(y_label(Scale::Ratio, 1.5), "1.5×");
        assert_eq!(y_label(Scale::Rate, (0.5f64).log10()), "0.5");
        assert_eq!(y_label(Scale::Rate, (0.02f64).log10()), "0.02");
        assert_eq!(y_label(Scale::Rate, 10f64.log10()), "10");
        assert_eq!(y_label(Scale::Rate, (5e9f64).log10()), "5 G");
        assert_eq!(y_label(Scale::Fraction, 0.5), "50%");
        // 1-2-5 ticks over two decades, only powers of ten over many.
        let (_, keys) = y_axis(Scale::Time, 0.0, 1.5);
        assert!(keys.iter().any(|k| (k - 2f64.log10()).abs() < 1e-12));
        let (_, keys) = y_axis(Scale::Time, -3.0, 6.0);
        assert!(keys.iter().all(|k| (k - k.round()).abs() < 1e-12));
    }

    #[test]
    fn groth16_peers_have_as_many_proofs_in_flight() {
        let mut rows = Vec::new();
        for (variant, circuit) in [
            ("zkgpu", "sha256-38"),
            ("zkgpu-stream", "sha256-38"),
            ("zkgpu-x5", "x5-rounds"),
            ("supraseal", "sha256-38"),
            ("supraseal-batch8", "sha256-38"),
            ("supraseal-batch32", "sha256-38"),
        ] {
            let mut r = row("groth16_prove", variant, 20, "host", 100.0);
            r.extra.insert("circuit".into(), serde_json::json!(circuit));
            rows.push(r);
        }
        let refs: Vec<&Row> = rows.iter().collect();
        let peer =
            |v: &str| supraseal_peer(&refs, refs.iter().find(|r| r.variant == v).unwrap()).map(|p| p.variant.clone());
        assert_eq!(peer("zkgpu").as_deref(), Some("supraseal"));
        assert_eq!(peer("zkgpu-stream").as_deref(), Some("supraseal-batch32"));
        assert_eq!(peer("zkgpu-x5"), None);
        assert_eq!(in_flight("zkgpu-pipelined"), 8);
    }

    #[test]
    fn op_labels() {
        assert_eq!(op_label("msm_g1"), "G1");
        assert_eq!(op_label("ntt_coset_fwd_nr"), "coset fwd NR");
        assert_eq!(op_label("batch_add_g2_half"), "G2 half");
        assert_eq!(op_label("mul_fq"), "Fq");
    }

    fn sample() -> Results {
        let mut rows = Vec::new();
        for (k, log_n) in [20u32, 22, 24].into_iter().enumerate() {
            let f = (1u64 << (log_n - 20)) as f64;
            rows.push(row("msm_g1", "auto", log_n, "device", 11.0 * f));
            rows.push(row("msm_g1", "precompute4", log_n, "device", 10.0 * f));
            rows.push(row("msm_g1", "auto-pinned", log_n, "pinned", 14.0 * f));
            rows.push(row("ntt_fwd_nn", "gpu", log_n, "device", 0.26 * f));
            rows.push(row("ntt_fwd_nr", "gpu-pinned", log_n, "pinned", 1.6 * f));
            rows.push(row("batch_add_g1_all", "xyzz", log_n, "device", 0.55 * f));
            let mut mul = row("mul_fr", "asm", log_n, "device", 68.0 * f);
            mul.gmul_s = Some(62.0 + k as f64);
            rows.push(mul);
            rows.push(row("startup", "cold_first_ntt", log_n, "device", 800.0));
        }
        for (variant, pps) in [
            ("zkgpu", 2.0),
            ("zkgpu-stream", 4.0),
            ("supraseal", 1.3),
            ("supraseal-batch32", 4.5),
            ("bellperson-cpu", 0.25),
        ] {
            for (log_n, scale) in [(20u32, 1.0), (22, 0.25)] {
                let mut r = row("groth16_prove", variant, log_n, "host", 1e3 / (pps * scale));
                r.extra.insert("proofs_per_s".into(), serde_json::json!(pps * scale));
                rows.push(r);
            }
        }
        results(rows)
    }

    #[test]
    fn one_figure_per_family_with_peers_and_ratios() {
        let files = render(&sample(), "h200").unwrap();
        let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "h200.svg",
                "h200_msm.svg",
                "h200_ntt.svg",
                "h200_batch_add.svg",
                "h200_field.svg",
                "h200_groth16.svg",
                "h200_other.svg"
            ]
        );
        let text = |name: &str| files.iter().find(|(n, _)| n == name).map(|(_, s)| s.as_str()).unwrap();
        let msm = text("h200_msm.svg");
        assert!(msm.starts_with("<svg"));
        for needle in
            ["zkgpu G1, device-resident", "sppark G1, pinned host", "speed-up over sppark", "sppark = 1", "20 ms"]
        {
            assert!(msm.contains(needle), "{needle} in the MSM figure");
        }
        assert!(!msm.contains("10000000"), "no raw numbers on the axes");
        assert!(text("h200_field.svg").contains("Fr IMAD bound (H200)"));
        assert!(text("h200_field.svg").contains(" G\n"), "SI rate labels");
        let g = text("h200_groth16.svg");
        assert!(
            g.contains("zkgpu-stream (32 in flight)")
                && g.contains("zkgpu (1 in flight)")
                && g.contains("bellperson-cpu")
        );
        // Figures stay small: two panels side by side, a few legend rows.
        for (name, svg) in &files {
            let height: u32 = svg.split("height=\"").nth(1).and_then(|s| s.split('"').next()).unwrap().parse().unwrap();
            assert!(height <= 1700, "{name} is {height} px tall");
        }
    }

    #[test]
    fn deterministic_and_without_groth16_rows() {
        let mut r = sample();
        assert_eq!(render(&r, "x").unwrap(), render(&r, "x").unwrap());
        r.rows.retain(|row| row.op != "groth16_prove");
        let names: Vec<String> = render(&r, "x").unwrap().into_iter().map(|(n, _)| n).collect();
        assert!(!names.iter().any(|n| n.contains("groth16")));
        // A CPU run: no peer markers (sppark's figures are GPU figures).
        let mut cpu = sample();
        for row in &mut cpu.rows {
            row.inputs = "host".into();
        }
        cpu.gpu = "cpu: test".into();
        let files = render(&cpu, "cpu").unwrap();
        let msm = &files.iter().find(|(n, _)| n == "cpu_msm.svg").unwrap().1;
        assert!(!msm.contains("sppark G1"));
    }

    /// `cargo xtask readme --check` runs this: every committed plot in benches/results/ is what its results
    /// file gives now, and no other SVG lies there.
    #[test]
    fn committed_plots_match_the_results() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../benches/results");
        let mut expected: Vec<(String, String)> = Vec::new();
        let mut jsons: Vec<_> = std::fs::read_dir(&dir).unwrap().filter_map(|e| e.ok().map(|e| e.path())).collect();
        jsons.sort();
        for json in jsons.iter().filter(|p| p.extension().is_some_and(|e| e == "json")) {
            let results = Results::read(json).unwrap();
            let stem = json.file_stem().unwrap().to_string_lossy().into_owned();
            expected.extend(render(&results, &stem).unwrap());
        }
        let mut problems = Vec::new();
        for (name, svg) in &expected {
            match std::fs::read_to_string(dir.join(name)) {
                Ok(committed) if committed == *svg => {}
                Ok(_) => problems.push(format!("benches/results/{name} differs from what its JSON gives")),
                Err(_) => problems.push(format!("benches/results/{name} is missing")),
            }
        }
        for svg in jsons.iter().filter(|p| p.extension().is_some_and(|e| e == "svg")) {
            let name = svg.file_name().unwrap().to_string_lossy().into_owned();
            if !expected.iter().any(|(n, _)| *n == name) {
                problems.push(format!("benches/results/{name} is drawn from no results file"));
            }
        }
        assert!(problems.is_empty(), "{}\nrun `cargo xtask readme` and commit benches/results/", problems.join("\n"));
    }
}
