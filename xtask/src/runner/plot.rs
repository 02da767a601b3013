//! SVG plot of a results file: per op, median time vs size (left) and throughput vs size (right), one line
//! per variant, log scales, with sppark's recorded figure as a marker where one exists.
use crate::Result;
use plotters::prelude::*;
use std::path::Path;
use xtask::peers::{self, Figure};
use xtask::results::{Results, Row};

const PANEL: (u32, u32) = (560, 360);
const COLORS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

pub fn write_svg(results: &Results, path: &Path) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let mut ops: Vec<&str> = Vec::new();
    for row in &results.rows {
        if !ops.contains(&row.op.as_str()) {
            ops.push(&row.op);
        }
    }
    let size = (PANEL.0 * 2, PANEL.1 * ops.len().max(1) as u32);
    let root = SVGBackend::new(path, size).into_drawing_area();
    root.fill(&WHITE)?;
    let panels = root.split_evenly((ops.len().max(1), 2));
    for (k, op) in ops.iter().enumerate() {
        let rows: Vec<&Row> = results.rows.iter().filter(|r| r.op == *op).collect();
        let title = format!("{op} on {}", short(&results.gpu));
        draw_panel(&panels[2 * k], &format!("{title}: median time"), "median ms", &rows, |r| Some(r.median_ms), None)?;
        let (label, unit_of): (&str, fn(&Row) -> Option<f64>) = if rows.iter().any(|r| r.gmul_s.is_some()) {
            ("G mul/s", |r| r.gmul_s)
        } else if rows.iter().any(|r| r.gbps.is_some()) {
            ("GB/s", |r| r.gbps)
        } else {
            ("elements/s", |r| Some((1u64 << r.log_n) as f64 / (r.median_ms * 1e-3)))
        };
        let peer = |r: &Row| match peers::sppark(&r.op, r.log_n, &r.inputs).map(|p| p.figure) {
            Some(Figure::GmulS(v)) | Some(Figure::Gbps(v)) => Some(v),
            Some(Figure::Ms(ms)) if label == "elements/s" => Some((1u64 << r.log_n) as f64 / (ms * 1e-3)),
            _ => None,
        };
        draw_panel(&panels[2 * k + 1], &format!("{title}: throughput"), label, &rows, unit_of, Some(&peer))?;
    }
    root.present()?;
    Ok(())
}

fn short(name: &str) -> &str {
    name.split(" (").next().unwrap_or(name)
}

/// One chart: x = log2 n, y = value (log scale), a line per (variant, inputs), optional sppark markers.
fn draw_panel(
    area: &DrawingArea<SVGBackend, plotters::coord::Shift>,
    title: &str,
    y_label: &str,
    rows: &[&Row],
    value: impl Fn(&Row) -> Option<f64>,
    peer: Option<&dyn Fn(&Row) -> Option<f64>>,
) -> Result<()> {
    let mut points: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for r in rows {
        let Some(v) = value(r).filter(|v| *v > 0.0 && v.is_finite()) else { continue };
        let series = format!("{} ({})", r.variant, r.inputs);
        match points.iter_mut().find(|(s, _)| *s == series) {
            Some((_, p)) => p.push((r.log_n as f64, v)),
            None => points.push((series, vec![(r.log_n as f64, v)])),
        }
    }
    let mut peer_points: Vec<(f64, f64)> = Vec::new();
    if let Some(peer) = peer {
        for r in rows {
            if let Some(v) = peer(r) {
                if !peer_points.contains(&(r.log_n as f64, v)) {
                    peer_points.push((r.log_n as f64, v));
                }
            }
        }
    }
    let all: Vec<(f64, f64)> = points.iter().flat_map(|(_, p)| p.iter().copied()).chain(peer_points.iter().copied()).collect();
    if all.is_empty() {
        return Ok(());
    }
    let (x_lo, x_hi) = all.iter().fold((f64::MAX, f64::MIN), |(lo, hi), p| (lo.min(p.0), hi.max(p.0)));
    let (y_lo, y_hi) = all.iter().fold((f64::MAX, f64::MIN), |(lo, hi), p| (lo.min(p.1), hi.max(p.1)));
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 16))
        .margin(12)
        .x_label_area_size(32)
        .y_label_area_size(64)
        .build_cartesian_2d((x_lo - 0.5)..(x_hi + 0.5), ((y_lo / 1.5)..(y_hi * 1.5)).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("log2 n")
        .y_desc(y_label)
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.3}"))
        .draw()?;
    for (k, (series, pts)) in points.iter().enumerate() {
        let color = COLORS[k % COLORS.len()];
        let mut pts = pts.clone();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))?
            .label(series.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2)));
        chart.draw_series(pts.iter().map(|p| Circle::new(*p, 3, color.filled())))?;
    }
    if !peer_points.is_empty() {
        chart
            .draw_series(peer_points.iter().map(|p| Cross::new(*p, 6, BLACK.stroke_width(2))))?
            .label(format!("{} ({})", peers::PEER_NAME, peers::PEER_GPU))
            .legend(|(x, y)| Cross::new((x + 9, y), 5, BLACK.stroke_width(2)));
    }
    chart.configure_series_labels().background_style(WHITE.mix(0.8)).border_style(BLACK).draw()?;
    Ok(())
}
