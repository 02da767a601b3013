//! SVG plot of a results file: per op, median time vs size (left, log-log) and throughput vs size (right,
//! log2 sizes, linear from zero so ratios read directly), one line per variant, with sppark's recorded figure
//! as a marker where one exists and the H200 IMAD bound as a dashed line for field multiplication.
use crate::Result;
use plotters::coord::ranged1d::ValueFormatter;
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
        draw_panel(&panels[2 * k], &format!("{title}: median time"), "median ms", &rows, |r| Some(r.median_ms), None, false, None)?;
        let (label, unit_of): (&str, fn(&Row) -> Option<f64>) = if rows.iter().any(|r| r.gmul_s.is_some()) {
            ("G mul/s", |r| r.gmul_s)
        } else if rows.iter().any(|r| r.ginv_s.is_some()) {
            ("G inv/s", |r| r.ginv_s)
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
        // The H200's IMAD bound as a reference line on H200 multiplication charts.
        let bound = peers::h200_imad_bound_gmul_s(op).filter(|_| results.gpu.contains("H200"));
        let reference = bound.map(|b| ("H200 IMAD bound", b));
        draw_panel(&panels[2 * k + 1], &format!("{title}: throughput"), label, &rows, unit_of, Some(&peer), true, reference)?;
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
    linear_from_zero: bool,
    reference: Option<(&str, f64)>,
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
    let x_range = (x_lo - 0.5)..(x_hi + 0.5);
    let mut builder = ChartBuilder::on(area);
    builder.caption(title, ("sans-serif", 16)).margin(12).x_label_area_size(32).y_label_area_size(64);
    let x_labels = (x_hi - x_lo) as usize + 2;
    if linear_from_zero {
        // Throughput: linear from zero (ratios read directly), headroom above the data for the legend.
        let y_top = y_hi.max(reference.map_or(0.0, |(_, v)| v)) * 1.45;
        let chart = builder.build_cartesian_2d(x_range, 0.0..y_top)?;
        fill_chart(chart, y_label, x_labels, &points, &peer_points, reference, SeriesLabelPosition::UpperLeft)
    } else {
        let chart = builder.build_cartesian_2d(x_range, ((y_lo / 1.5)..(y_hi * 1.5)).log_scale())?;
        fill_chart(chart, y_label, x_labels, &points, &peer_points, None, SeriesLabelPosition::LowerRight)
    }
}

type Chart<'a, Y> = ChartContext<'a, SVGBackend<'a>, Cartesian2d<plotters::coord::types::RangedCoordf64, Y>>;

/// Mesh, one line per series, sppark markers, an optional labelled horizontal reference line, legend.
fn fill_chart<'a, Y: Ranged<ValueType = f64> + ValueFormatter<f64>>(
    mut chart: Chart<'a, Y>,
    y_label: &str,
    x_labels: usize,
    points: &[(String, Vec<(f64, f64)>)],
    peer_points: &[(f64, f64)],
    reference: Option<(&str, f64)>,
    legend: SeriesLabelPosition,
) -> Result<()> {
    chart
        .configure_mesh()
        .x_desc("log2 n")
        .y_desc(y_label)
        // One label per integer log2 size.
        .x_labels(x_labels)
        .x_label_formatter(&|x| if (x - x.round()).abs() < 1e-6 { format!("{x:.0}") } else { String::new() })
        .y_labels(8)
        .y_label_formatter(&|y| short_number(*y))
        .light_line_style(TRANSPARENT)
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
    if let Some((label, value)) = reference {
        let (x0, x1) = (chart.x_range().start, chart.x_range().end);
        let grey = RGBColor(120, 120, 120);
        chart
            .draw_series(DashedLineSeries::new(vec![(x0, value), (x1, value)], 6, 4, grey.stroke_width(1)))?
            .label(label.to_string())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], grey.stroke_width(1)));
    }
    chart.configure_series_labels().position(legend).background_style(WHITE.mix(0.8)).border_style(BLACK).draw()?;
    Ok(())
}

/// Axis numbers with about three significant digits and no trailing zeros.
fn short_number(v: f64) -> String {
    if !(v.abs() > 1e-12 && v.is_finite()) {
        return "0".into();
    }
    let a = v.abs();
    let digits = if a >= 100.0 { 0 } else if a >= 10.0 { 1 } else if a >= 1.0 { 2 } else { ((2.0 - a.log10().floor()) as usize).min(12) };
    let s = format!("{v:.digits$}");
    if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_numbers() {
        assert_eq!(short_number(0.0), "0");
        assert_eq!(short_number(1000.0), "1000");
        assert_eq!(short_number(27.4), "27.4");
        assert_eq!(short_number(2.5), "2.5");
        assert_eq!(short_number(0.025), "0.025");
        assert_eq!(short_number(f64::NAN), "0");
    }

    #[test]
    fn writes_a_plot_with_peer_marker() {
        let row = |variant: &str, log_n: u32, gmul_s: f64| Row {
            op: "mul_fq".into(),
            variant: variant.into(),
            log_n,
            inputs: "device".into(),
            median_ms: 1.0 / gmul_s,
            min_ms: 1.0 / gmul_s,
            max_ms: 1.0 / gmul_s,
            reps: 5,
            gmul_s: Some(gmul_s),
            ginv_s: None,
            gbps: None,
            extra: Default::default(),
        };
        let results = Results {
            gpu: "NVIDIA H200".into(),
            driver: "13.0".into(),
            commit: "test".into(),
            date: "2026-01-01T00:00:00Z".into(),
            rows: vec![row("portable", 20, 15.0), row("portable", 22, 15.9), row("asm", 20, 26.0), row("asm", 22, 27.0)],
        };
        let path = std::env::temp_dir().join(format!("zkgpu-plot-test-{}.svg", std::process::id()));
        write_svg(&results, &path).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).ok();
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("sppark@17278d74"), "peer marker in the legend");
        assert!(svg.contains("H200 IMAD bound"));
        assert!(svg.contains("asm (device)") && svg.contains("portable (device)"));
    }
}
