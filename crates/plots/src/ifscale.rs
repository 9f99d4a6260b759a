//! The IFScale figures: accuracy vs N (small multiples with ±1 std bands, and all models together), the three decay
//! archetypes with their fitted curves, primacy ratio, failure modes and O:M, std, latency, accuracy per latency,
//! output tokens and coherence vs N; [`extra`] adds the primacy thirds, coherence over all attempts, reasoning tokens
//! and reasoning effort; [`outcomes`] accuracy both ways and how every sample ended on a log axis to 10 000, when a
//! sample failed or the grid goes past 500.

pub mod extra;
pub mod outcomes;

use std::path::{Path, PathBuf};

use analysis::fit::DecayPattern;
use analysis::ifscale::vocabulary::RunVocabulary;
use analysis::ifscale::{IfscaleSummary, RuleRow};
use analysis::models::ReasoningRule;

use crate::Error;
use crate::figure::{Figure, LegendEntry, Panel, PanelKind, Series, auto_range};
use crate::style::ModelStyles;

pub(crate) const X_LABEL: &str = "instructions (N)";

fn x_range(summary: &IfscaleSummary) -> (f64, f64) {
    let max = summary
        .rows
        .iter()
        .map(|r| r.num_rules)
        .max()
        .unwrap_or(500) as f64;
    (0.0, max + max * 0.02)
}

pub(crate) fn legend(styles: &ModelStyles, models: &[String]) -> Vec<LegendEntry> {
    models
        .iter()
        .map(|m| LegendEntry {
            label: styles.label(m),
            color: styles.color(m),
        })
        .collect()
}

/// One line per model of `value`.
fn lines(
    summary: &IfscaleSummary,
    styles: &ModelStyles,
    value: &dyn Fn(&RuleRow) -> Option<f64>,
) -> Vec<Series> {
    summary
        .models
        .iter()
        .map(|m| {
            Series::line(
                styles.color(m),
                summary
                    .model_rows(m)
                    .map(|r| (r.num_rules as f64, value(r)))
                    .collect(),
            )
        })
        .collect()
}

fn all_values(series: &[Series]) -> impl Iterator<Item = f64> + '_ {
    series
        .iter()
        .flat_map(|s| s.points.iter().filter_map(|p| p.1))
}

fn single(
    summary: &IfscaleSummary,
    styles: &ModelStyles,
    name: &str,
    title: &str,
    y_label: &str,
    value: &dyn Fn(&RuleRow) -> Option<f64>,
    log_y: bool,
) -> Figure {
    let mut series = lines(summary, styles, value);
    if log_y {
        for s in &mut series {
            for p in &mut s.points {
                p.1 = p.1.filter(|v| *v > 0.0).map(f64::log10);
            }
        }
    }
    let y_range = auto_range(all_values(&series), if log_y { None } else { Some(0.0) });
    Figure {
        name: name.to_owned(),
        title: title.to_owned(),
        panels: vec![Panel {
            title: String::new(),
            x_label: X_LABEL.to_owned(),
            y_label: y_label.to_owned(),
            x_range: x_range(summary),
            y_range,
            log_y,
            log_x: false,
            kind: PanelKind::Lines(series),
        }],
        columns: 1,
        panel_size: (960, 640),
        legend: legend(styles, &summary.models),
        legend_title: "model ((r) = reasoning)".to_owned(),
    }
}

/// The run's models (in colour) over the 24 published configurations (thin grey lines, from the committed
/// reference data), so a new model can be placed among them; None when every model here is a published one. When
/// the run's keywords are not the paper's list (`vocabulary`), each run model's legend entry says so.
fn over_published(
    summary: &IfscaleSummary,
    styles: &ModelStyles,
    vocabulary: Option<RunVocabulary>,
) -> Option<Figure> {
    let published = match analysis::ifscale::published::curves() {
        Ok(c) => c,
        Err(e) => {
            tracing::warn!("The published IFScale curves could not be read: {e}");
            return None;
        }
    };
    if summary
        .models
        .iter()
        .all(|m| published.iter().any(|c| &c.model == m))
    {
        return None;
    }
    let grey = plotters::style::RGBColor(190, 190, 190);
    let mut series: Vec<Series> = published
        .iter()
        .map(|c| {
            let mut s = Series::line(
                grey,
                c.points.iter().map(|&(n, a)| (n as f64, Some(a))).collect(),
            );
            s.width = 1;
            s
        })
        .collect();
    series.extend(lines(summary, styles, &|r| r.accuracy));
    let (_, run_max) = x_range(summary);
    let mut legend = legend(styles, &summary.models);
    if let Some(note) = vocabulary.and_then(RunVocabulary::legend_note) {
        for entry in &mut legend {
            entry.label = format!("{} ({note})", entry.label);
        }
    }
    legend.push(LegendEntry {
        label: format!("published ({} configurations)", published.len()),
        color: grey,
    });
    Some(Figure {
        name: "ifscale_accuracy_vs_n_vs_published".to_owned(),
        title: "IFScale: this run's models over the published configurations (grey)".to_owned(),
        panels: vec![Panel {
            title: String::new(),
            x_label: X_LABEL.to_owned(),
            y_label: "accuracy (%)".to_owned(),
            x_range: (0.0, run_max.max(510.0)),
            y_range: (0.0, 105.0),
            log_y: false,
            log_x: false,
            kind: PanelKind::Lines(series),
        }],
        columns: 1,
        panel_size: (960, 640),
        legend,
        legend_title: "model ((r) = reasoning)".to_owned(),
    })
}

/// Every IFScale figure as data (drawn by [`draw_all`]); `vocabulary` is the run's, when known (the figures beside
/// published data label a run that did not sample the paper's list).
pub fn figures(
    summary: &IfscaleSummary,
    rule: &ReasoningRule,
    vocabulary: Option<RunVocabulary>,
) -> Vec<Figure> {
    let styles = ModelStyles::new(&summary.models, rule);
    let xr = x_range(summary);
    let mut out = Vec::new();

    // Figure 2: small multiples, mean accuracy with ±1 std band per model.
    let grid_panels: Vec<Panel> = summary
        .models
        .iter()
        .map(|m| {
            let rows: Vec<&RuleRow> = summary.model_rows(m).collect();
            let mut s = Series::line(
                styles.color(m),
                rows.iter()
                    .map(|r| (r.num_rules as f64, r.accuracy))
                    .collect(),
            );
            s.band = rows
                .iter()
                .filter_map(|r| {
                    let (a, sd) = (r.accuracy?, r.accuracy_std.unwrap_or(0.0));
                    Some((r.num_rules as f64, a - sd, a + sd))
                })
                .collect();
            Panel {
                title: styles.label(m),
                x_label: X_LABEL.to_owned(),
                y_label: "accuracy (%)".to_owned(),
                x_range: xr,
                y_range: (0.0, 105.0),
                log_y: false,
                log_x: false,
                kind: PanelKind::Lines(vec![s]),
            }
        })
        .collect();
    out.push(Figure {
        name: "ifscale_accuracy_by_model".to_owned(),
        title: "IFScale: accuracy vs instruction density per model (mean over seeds, band = ±1 sample std)".to_owned(),
        panels: grid_panels,
        columns: 6,
        panel_size: (330, 250),
        legend: Vec::new(),
        legend_title: String::new(),
    });

    let mut all = single(
        summary,
        &styles,
        "ifscale_accuracy_vs_n",
        "IFScale: mean accuracy vs instruction density",
        "accuracy (%)",
        &|r| r.accuracy,
        false,
    );
    if let Some(p) = all.panels.first_mut() {
        p.y_range = (0.0, 105.0);
    }
    out.push(all);
    out.extend(over_published(summary, &styles, vocabulary));

    // Figure 1: the three decay archetypes, each model drawn in the panel of its fitted pattern with its fitted curve.
    let patterns = [
        DecayPattern::Threshold,
        DecayPattern::Linear,
        DecayPattern::Exponential,
    ];
    let mut arche_panels = Vec::new();
    for pattern in patterns {
        let mut series = Vec::new();
        for f in summary.fits.iter().filter(|f| f.pattern == pattern) {
            let rows: Vec<&RuleRow> = summary.model_rows(&f.model).collect();
            let mut data = Series::line(
                styles.color(&f.model),
                rows.iter()
                    .map(|r| (r.num_rules as f64, r.accuracy))
                    .collect(),
            );
            data.width = 1;
            data.markers = true;
            let mut curve = Series::line(
                styles.color(&f.model),
                rows.iter()
                    .map(|r| (r.num_rules as f64, Some(f.predict(r.num_rules as f64))))
                    .collect(),
            );
            curve.width = 3;
            curve.dashed = true;
            series.push(data);
            series.push(curve);
        }
        let n_models = series.len() / 2;
        let ties = summary
            .fits
            .iter()
            .filter(|f| f.pattern == pattern && f.is_near_tie())
            .count();
        let tie_note = if ties > 0 {
            format!(", {ties} a near-tie")
        } else {
            String::new()
        };
        arche_panels.push(Panel {
            title: format!("{} decay ({n_models} models{tie_note})", pattern.as_str()),
            x_label: X_LABEL.to_owned(),
            y_label: "accuracy (%)".to_owned(),
            x_range: xr,
            y_range: (0.0, 105.0),
            log_y: false,
            log_x: false,
            kind: PanelKind::Lines(series),
        });
    }
    out.push(Figure {
        name: "ifscale_decay_archetypes".to_owned(),
        title: "IFScale: decay archetypes (points = mean accuracy, dashed = fitted curve; lowest BIC among bounded threshold, linear and exponential families)".to_owned(),
        panels: arche_panels,
        columns: 3,
        panel_size: (560, 470),
        legend: legend(&styles, &summary.models),
        legend_title: "model ((r) = reasoning)".to_owned(),
    });

    out.push(single(
        summary,
        &styles,
        "ifscale_primacy_ratio_vs_n",
        "IFScale: primacy ratio vs N (late-third miss rate ÷ early-third miss rate; > 1 = primacy effect)",
        "primacy ratio",
        &|r| r.primacy_ratio,
        false,
    ));

    // Failure modes: omission share, modification share, O:M.
    let fm_panel = |title: &str, y_label: &str, value: &dyn Fn(&RuleRow) -> Option<f64>| {
        let series = lines(summary, &styles, value);
        let y_range = auto_range(all_values(&series), Some(0.0));
        Panel {
            title: title.to_owned(),
            x_label: X_LABEL.to_owned(),
            y_label: y_label.to_owned(),
            x_range: xr,
            y_range,
            log_y: false,
            log_x: false,
            kind: PanelKind::Lines(series),
        }
    };
    out.push(Figure {
        name: "ifscale_failure_modes".to_owned(),
        title: "IFScale: error types vs N (shares of errors, mean over seeds) and O:M ratio"
            .to_owned(),
        panels: vec![
            fm_panel("omission share of errors", "omission (%)", &|r| {
                r.omission_pct
            }),
            fm_panel("modification share of errors", "modification (%)", &|r| {
                r.modification_pct
            }),
            fm_panel(
                "O:M = mean omission ÷ mean modification",
                "O:M ratio",
                &|r| r.om_ratio,
            ),
        ],
        columns: 3,
        panel_size: (520, 470),
        legend: legend(&styles, &summary.models),
        legend_title: "model ((r) = reasoning)".to_owned(),
    });

    out.push(single(
        summary,
        &styles,
        "ifscale_std_vs_n",
        "IFScale: accuracy standard deviation across seeds vs N (ddof = 1)",
        "std of accuracy (pp)",
        &|r| r.accuracy_std,
        false,
    ));
    if summary.has_latency() {
        out.push(single(
            summary,
            &styles,
            "ifscale_latency_vs_n",
            "IFScale: mean latency vs N (log scale)",
            "latency (s)",
            &|r| r.latency,
            true,
        ));
        out.push(single(
            summary,
            &styles,
            "ifscale_acc_per_latency_vs_n",
            "IFScale: accuracy per second of latency vs N (mean accuracy ÷ mean latency)",
            "accuracy % per second",
            &|r| r.acc_per_latency,
            false,
        ));
    }
    if summary.has_output_tokens() {
        out.push(single(
            summary,
            &styles,
            "ifscale_output_tokens_vs_n",
            "IFScale: mean visible output tokens vs N (reasoning tokens excluded)",
            "visible output tokens",
            &|r| r.output_tokens,
            false,
        ));
    }
    if summary.has_coherence() {
        out.push(single(
            summary,
            &styles,
            "ifscale_coherence_vs_n",
            "IFScale: mean coherence score vs N, accepted only (the accepted attempt of each scored sample)",
            "coherence (accepted only)",
            &|r| r.coherence,
            false,
        ));
    }
    out.extend(extra::reasoning_figures(summary, &styles));
    out.extend(outcomes::outcomes_figure(summary, &styles));
    out
}

/// Draws every IFScale figure into `dir` (PNG and SVG); returns the files written.
pub fn draw_all(
    summary: &IfscaleSummary,
    rule: &ReasoningRule,
    vocabulary: Option<RunVocabulary>,
    dir: &Path,
) -> Result<Vec<PathBuf>, Error> {
    let mut written = Vec::new();
    for fig in figures(summary, rule, vocabulary) {
        written.extend(fig.write(dir)?);
    }
    Ok(written)
}
