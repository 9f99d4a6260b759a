//! The figures of a paired comparison (`analysis::compare::report::Report`): the IFScale accuracy difference
//! against N with its bootstrap band, one line per pair, and a forest plot of the RIFT prompt-level differences
//! (one row per pair and structure: the difference as a point, its interval as a bar, 0 as a grey line).

use std::path::{Path, PathBuf};

use analysis::compare::report::Report;
use analysis::models::ReasoningRule;
use plotters::style::RGBColor;

use crate::Error;
use crate::figure::{Figure, LegendEntry, Panel, PanelKind, Series, auto_range};
use crate::style::ModelStyles;

const GREY: RGBColor = RGBColor(150, 150, 150);

/// The figures of `report`: `compare_ifscale_difference` and `compare_rift_forest`, each when the report has that
/// benchmark.
pub fn figures(report: &Report) -> Vec<Figure> {
    let mut out = Vec::new();
    if !report.ifscale.is_empty() {
        out.push(ifscale_difference(report));
    }
    if report.rift.iter().any(|c| !c.structures.is_empty()) {
        out.push(rift_forest(report));
    }
    out
}

/// Writes the figures of `report` into `dir` (PNG and SVG).
pub fn draw(report: &Report, dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut written = Vec::new();
    for f in figures(report) {
        written.extend(f.write(dir)?);
    }
    Ok(written)
}

fn no_reasoning_labels() -> ReasoningRule {
    ReasoningRule {
        explicit: Some(Vec::new()),
    }
}

fn ifscale_difference(report: &Report) -> Figure {
    let names: Vec<String> = report
        .ifscale
        .iter()
        .map(|c| format!("{} − {}", c.a, c.b))
        .collect();
    let styles = ModelStyles::new(&names, &no_reasoning_labels());
    let mut series = Vec::new();
    let (mut xs, mut ys) = (Vec::new(), vec![0.0]);
    for (c, name) in report.ifscale.iter().zip(&names) {
        let mut s = Series::line(
            styles.color(name),
            c.per_n
                .iter()
                .map(|r| (f64::from(r.n), Some(r.metrics.accuracy.diff)))
                .collect(),
        );
        s.markers = true;
        s.band = c
            .per_n
            .iter()
            .filter_map(|r| {
                let a = &r.metrics.accuracy;
                Some((f64::from(r.n), a.ci_lower?, a.ci_upper?))
            })
            .collect();
        for r in &c.per_n {
            xs.push(f64::from(r.n));
            ys.push(r.metrics.accuracy.diff);
        }
        for (_, lo, hi) in &s.band {
            ys.extend([*lo, *hi]);
        }
        series.push(s);
    }
    let x_range = auto_range(xs.iter().copied(), None);
    let mut zero = Series::line(GREY, vec![(x_range.0, Some(0.0)), (x_range.1, Some(0.0))]);
    zero.width = 1;
    zero.dashed = true;
    series.insert(0, zero);
    Figure {
        name: "compare_ifscale_difference".to_owned(),
        title: format!(
            "IFScale: paired accuracy difference vs N (band = {:.0} % bootstrap interval over seeds)",
            (1.0 - report.options.alpha) * 100.0
        ),
        panels: vec![Panel {
            title: String::new(),
            x_label: "instruction density N".to_owned(),
            y_label: "accuracy difference (pp)".to_owned(),
            x_range,
            y_range: auto_range(ys.into_iter(), None),
            log_y: false,
            log_x: false,
            kind: PanelKind::Lines(series),
        }],
        columns: 1,
        panel_size: (760, 460),
        legend: legend(&styles, &names),
        legend_title: "difference".to_owned(),
    }
}

fn legend(styles: &ModelStyles, names: &[String]) -> Vec<LegendEntry> {
    names
        .iter()
        .map(|n| LegendEntry {
            label: n.clone(),
            color: styles.color(n),
        })
        .collect()
}

/// A forest-plot row: its label, the difference and its interval.
type ForestRow = (String, f64, Option<(f64, f64)>);

fn rift_forest(report: &Report) -> Figure {
    // Rows top to bottom: each pair's structures in table order.
    let mut rows: Vec<ForestRow> = Vec::new();
    for c in &report.rift {
        for r in &c.structures {
            let d = &r.prompt_level;
            let ci = d.ci_lower.zip(d.ci_upper);
            rows.push((format!("{} − {}: {}", c.a, c.b, r.structure), d.diff, ci));
        }
    }
    let names: Vec<String> = rows.iter().map(|r| r.0.clone()).collect();
    let styles = ModelStyles::new(&names, &no_reasoning_labels());
    let n = rows.len() as f64;
    let mut series = Vec::new();
    let mut xs = vec![0.0];
    for (i, (name, diff, ci)) in rows.iter().enumerate() {
        // The first row at the top.
        let y = n - i as f64;
        if let Some((lo, hi)) = ci {
            let mut bar = Series::line(styles.color(name), vec![(*lo, Some(y)), (*hi, Some(y))]);
            bar.width = 3;
            series.push(bar);
            xs.extend([*lo, *hi]);
        }
        let mut point = Series::line(styles.color(name), vec![(*diff, Some(y))]);
        point.markers = true;
        series.push(point);
        xs.push(*diff);
    }
    let x_range = auto_range(xs.into_iter(), None);
    let mut zero = Series::line(GREY, vec![(0.0, Some(0.5)), (0.0, Some(n + 0.5))]);
    zero.width = 1;
    zero.dashed = true;
    series.insert(0, zero);
    Figure {
        name: "compare_rift_forest".to_owned(),
        title: format!(
            "RIFT: paired prompt-level accuracy differences ({:.0} % bootstrap intervals over prompts)",
            (1.0 - report.options.alpha) * 100.0
        ),
        panels: vec![Panel {
            title: String::new(),
            x_label: "accuracy difference (pp)".to_owned(),
            y_label: "row (top = first in the legend)".to_owned(),
            x_range,
            y_range: (0.0, n + 1.0),
            log_y: false,
            log_x: false,
            kind: PanelKind::Lines(series),
        }],
        columns: 1,
        panel_size: (760, (120 + 40 * rows.len() as u32).max(320)),
        legend: legend(&styles, &names),
        legend_title: "comparison: structure".to_owned(),
    }
}
