//! The IFScale figures beyond the per-sample aggregate: primacy thirds (from keyword labels), coherence over every
//! judged attempt and coherence vs output tokens (from the attempts logs), reasoning tokens vs N and reasoning effort
//! lower vs high (from the aggregate, when the records carry them).

use std::path::{Path, PathBuf};

use analysis::ifscale::coherence::CoherenceRow;
use analysis::ifscale::primacy::ThirdsRow;
use analysis::ifscale::reasoning::{self, EffortRow};
use analysis::ifscale::{IfscaleSummary, RuleRow};
use analysis::models::ReasoningRule;
use plotters::style::RGBColor;

use super::{X_LABEL, legend};
use crate::Error;
use crate::figure::{Figure, LegendEntry, Panel, PanelKind, Series, auto_range};
use crate::style::ModelStyles;

const LEGEND_TITLE: &str = "model ((r) = reasoning)";
const LOWER: RGBColor = RGBColor(230, 120, 20);
const HIGH: RGBColor = RGBColor(40, 90, 200);
const GREY: RGBColor = RGBColor(120, 120, 120);

fn n_range<'a>(ns: impl Iterator<Item = &'a i64>) -> (f64, f64) {
    let max = ns.copied().max().unwrap_or(500) as f64;
    (0.0, max + max * 0.02)
}

fn models_in<'a>(names: impl Iterator<Item = &'a String>) -> Vec<String> {
    let mut m: Vec<String> = names.cloned().collect();
    m.sort();
    m.dedup();
    m
}

fn lines_panel(
    title: &str,
    x_label: &str,
    y_label: &str,
    x_range: (f64, f64),
    series: Vec<Series>,
    y_floor: Option<f64>,
) -> Panel {
    let y_range = auto_range(
        series
            .iter()
            .flat_map(|s| s.points.iter().filter_map(|p| p.1)),
        y_floor,
    );
    Panel {
        title: title.to_owned(),
        x_label: x_label.to_owned(),
        y_label: y_label.to_owned(),
        x_range,
        y_range,
        log_y: false,
        log_x: false,
        kind: PanelKind::Lines(series),
    }
}

/// A row of a per-(model, N) table.
trait Keyed {
    fn model(&self) -> &str;
    fn n(&self) -> i64;
}

impl Keyed for ThirdsRow {
    fn model(&self) -> &str {
        &self.model
    }
    fn n(&self) -> i64 {
        self.num_rules
    }
}

impl Keyed for CoherenceRow {
    fn model(&self) -> &str {
        &self.model
    }
    fn n(&self) -> i64 {
        self.num_rules
    }
}

impl Keyed for RuleRow {
    fn model(&self) -> &str {
        &self.model
    }
    fn n(&self) -> i64 {
        self.num_rules
    }
}

/// One line per model of `value` against N, over `rows` of any per-(model, N) table.
fn per_model<R: Keyed>(
    rows: &[R],
    models: &[String],
    styles: &ModelStyles,
    value: &dyn Fn(&R) -> Option<f64>,
) -> Vec<Series> {
    models
        .iter()
        .map(|m| {
            Series::line(
                styles.color(m),
                rows.iter()
                    .filter(|r| r.model() == m)
                    .map(|r| (r.n() as f64, value(r)))
                    .collect(),
            )
        })
        .collect()
}

/// Error rates in the early, middle and late thirds of the keyword list vs N, and late ÷ early.
pub fn primacy_figure(rows: &[ThirdsRow], styles: &ModelStyles) -> Option<Figure> {
    if rows.is_empty() {
        return None;
    }
    let models = models_in(rows.iter().map(|r| &r.model));
    let xr = n_range(rows.iter().map(|r| &r.num_rules));
    let panel = |title: &str, y: &str, v: &dyn Fn(&ThirdsRow) -> Option<f64>| {
        lines_panel(
            title,
            X_LABEL,
            y,
            xr,
            per_model(rows, &models, styles, v),
            Some(0.0),
        )
    };
    Some(Figure {
        name: "ifscale_primacy_thirds".to_owned(),
        title: "IFScale: error rate in the early, middle and late thirds of the keyword list vs N (pooled over samples)"
            .to_owned(),
        panels: vec![
            panel("early third", "error rate (%)", &|r| r.early_error_pct),
            panel("middle third", "error rate (%)", &|r| r.middle_error_pct),
            panel("late third", "error rate (%)", &|r| r.late_error_pct),
            panel("late ÷ early (> 1 = primacy effect)", "ratio of error rates", &|r| {
                r.late_over_early
            }),
        ],
        columns: 2,
        panel_size: (560, 420),
        legend: legend(styles, &models),
        legend_title: LEGEND_TITLE.to_owned(),
    })
}

/// Coherence over all judged attempts vs N (with the accepted-only view), and coherence vs output tokens.
pub fn coherence_figures(
    rows: &[CoherenceRow],
    threshold: u8,
    styles: &ModelStyles,
) -> Vec<Figure> {
    if rows.iter().all(|r| r.judged == 0) {
        return Vec::new();
    }
    let models = models_in(rows.iter().map(|r| &r.model));
    let xr = n_range(rows.iter().map(|r| &r.num_rules));
    let threshold_line = |x: (f64, f64)| {
        let mut s = Series::line(
            GREY,
            vec![
                (x.0, Some(f64::from(threshold))),
                (x.1, Some(f64::from(threshold))),
            ],
        );
        s.dashed = true;
        s.width = 1;
        s
    };
    let with_threshold = |mut series: Vec<Series>, x: (f64, f64)| {
        series.push(threshold_line(x));
        series
    };
    let panel = |title: &str, y: &str, v: &dyn Fn(&CoherenceRow) -> Option<f64>, line: bool| {
        let s = per_model(rows, &models, styles, v);
        lines_panel(
            title,
            X_LABEL,
            y,
            xr,
            if line { with_threshold(s, xr) } else { s },
            Some(0.0),
        )
    };
    let mut out = vec![Figure {
        name: "ifscale_coherence_all_attempts_vs_n".to_owned(),
        title: format!(
            "IFScale: coherence over all judged attempts vs N (dashed grey = threshold {threshold}), beside the accepted-only view"
        ),
        panels: vec![
            panel(
                "mean coherence, all judged attempts",
                "coherence (1–10)",
                &|r| r.mean_all,
                true,
            ),
            panel(
                &format!("share of judged attempts below {threshold}"),
                "below threshold (%)",
                &|r| r.below_threshold_pct,
                false,
            ),
            panel(
                "attempts per accepted sample",
                "attempts",
                &|r| r.attempts_per_accepted,
                false,
            ),
            panel(
                "mean coherence, accepted only",
                "coherence (1–10)",
                &|r| r.mean_accepted_only,
                true,
            ),
        ],
        columns: 2,
        panel_size: (560, 420),
        legend: legend(styles, &models),
        legend_title: LEGEND_TITLE.to_owned(),
    }];
    // Coherence vs output tokens: one point per (model, N), joined in N order.
    let series: Vec<Series> = models
        .iter()
        .map(|m| {
            let mut s = Series::line(
                styles.color(m),
                rows.iter()
                    .filter(|r| &r.model == m)
                    .filter_map(|r| Some((r.mean_output_tokens?, r.mean_all)))
                    .collect(),
            );
            s.markers = true;
            s.width = 1;
            s
        })
        .collect();
    let xs: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .collect();
    if !xs.is_empty() {
        let xr = auto_range(xs.into_iter(), Some(0.0));
        out.push(Figure {
            name: "ifscale_coherence_vs_output_tokens".to_owned(),
            title: format!(
                "IFScale: mean coherence of all judged attempts vs their mean visible output tokens, one point per (model, N) (dashed grey = threshold {threshold})"
            ),
            panels: vec![lines_panel(
                "",
                "visible output tokens (mean over judged attempts)",
                "coherence (1–10)",
                xr,
                with_threshold(series, xr),
                Some(0.0),
            )],
            columns: 1,
            panel_size: (960, 640),
            legend: legend(styles, &models),
            legend_title: LEGEND_TITLE.to_owned(),
        });
    }
    out
}

/// Reasoning tokens vs N (models that report them) and effort lower vs high (base models run at both).
pub fn reasoning_figures(summary: &IfscaleSummary, styles: &ModelStyles) -> Vec<Figure> {
    let mut out = Vec::new();
    let xr = n_range(summary.rows.iter().map(|r| &r.num_rules));
    let with_tokens = reasoning::reasoning_models(summary);
    if !with_tokens.is_empty() {
        out.push(Figure {
            name: "ifscale_reasoning_tokens_vs_n".to_owned(),
            title: "IFScale: reasoning tokens and visible output tokens vs N (mean over scored samples; never summed)"
                .to_owned(),
            panels: vec![
                lines_panel(
                    "reasoning tokens",
                    X_LABEL,
                    "reasoning tokens",
                    xr,
                    per_model(&summary.rows, &with_tokens, styles, &|r| r.reasoning_tokens),
                    Some(0.0),
                ),
                lines_panel(
                    "visible output tokens",
                    X_LABEL,
                    "output tokens",
                    xr,
                    per_model(&summary.rows, &with_tokens, styles, &|r| r.output_tokens),
                    Some(0.0),
                ),
            ],
            columns: 2,
            panel_size: (560, 440),
            legend: legend(styles, &with_tokens),
            legend_title: LEGEND_TITLE.to_owned(),
        });
    }
    let rows = reasoning::effort_rows(summary);
    let pairs = reasoning::effort_pairs(&summary.models);
    if !pairs.is_empty() {
        let pair_series = |base: &str,
                           lower: &dyn Fn(&EffortRow) -> Option<f64>,
                           high: &dyn Fn(&EffortRow) -> Option<f64>| {
            let pts = |v: &dyn Fn(&EffortRow) -> Option<f64>| {
                rows.iter()
                    .filter(|r| r.base == base)
                    .map(|r| (r.num_rules as f64, v(r)))
                    .collect::<Vec<_>>()
            };
            let mut lo = Series::line(LOWER, pts(lower));
            lo.dashed = true;
            vec![lo, Series::line(HIGH, pts(high))]
        };
        let short = |b: &str| b.rsplit('/').next().unwrap_or(b).to_owned();
        let mut panels: Vec<Panel> = pairs
            .iter()
            .map(|p| {
                let mut panel = lines_panel(
                    &format!("{}: accuracy", short(&p.base)),
                    X_LABEL,
                    "accuracy (%)",
                    xr,
                    pair_series(&p.base, &|r| r.accuracy_lower, &|r| r.accuracy_high),
                    Some(0.0),
                );
                panel.y_range = (0.0, 105.0);
                panel
            })
            .collect();
        let has_tokens = rows.iter().any(|r| r.reasoning_tokens_high.is_some());
        for p in &pairs {
            panels.push(if has_tokens {
                lines_panel(
                    &format!("{}: reasoning tokens", short(&p.base)),
                    X_LABEL,
                    "reasoning tokens",
                    xr,
                    pair_series(&p.base, &|r| r.reasoning_tokens_lower, &|r| {
                        r.reasoning_tokens_high
                    }),
                    Some(0.0),
                )
            } else {
                lines_panel(
                    &format!("{}: latency", short(&p.base)),
                    X_LABEL,
                    "latency (s)",
                    xr,
                    pair_series(&p.base, &|r| r.latency_lower, &|r| r.latency_high),
                    Some(0.0),
                )
            });
        }
        out.push(Figure {
            name: "ifscale_effort_lower_vs_high".to_owned(),
            title: format!(
                "IFScale: reasoning effort, lower (dashed) vs high (solid): accuracy and {} vs N",
                if has_tokens {
                    "reasoning tokens"
                } else {
                    "latency"
                }
            ),
            panels,
            columns: pairs.len(),
            panel_size: (420, 360),
            legend: vec![
                LegendEntry {
                    label: "lower effort (medium or default)".to_owned(),
                    color: LOWER,
                },
                LegendEntry {
                    label: "high effort".to_owned(),
                    color: HIGH,
                },
            ],
            legend_title: "configuration".to_owned(),
        });
    }
    out
}

/// Draws the primacy-thirds figure into `dir`; `models` fixes the colour order (the aggregate's models).
pub fn draw_primacy(
    rows: &[ThirdsRow],
    models: &[String],
    rule: &ReasoningRule,
    dir: &Path,
) -> Result<Vec<PathBuf>, Error> {
    let styles = ModelStyles::new(models, rule);
    match primacy_figure(rows, &styles) {
        Some(f) => f.write(dir),
        None => Ok(Vec::new()),
    }
}

/// Draws the coherence figures into `dir`; `models` fixes the colour order.
pub fn draw_coherence(
    rows: &[CoherenceRow],
    threshold: u8,
    models: &[String],
    rule: &ReasoningRule,
    dir: &Path,
) -> Result<Vec<PathBuf>, Error> {
    let styles = ModelStyles::new(models, rule);
    let mut written = Vec::new();
    for f in coherence_figures(rows, threshold, &styles) {
        written.extend(f.write(dir)?);
    }
    Ok(written)
}
