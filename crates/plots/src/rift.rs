//! The RIFT figures: accuracy vs prompt tokens (linear and jumping, Figures 3/6/7), the wrong-question share of
//! incorrect answers per model, per structure and pooled (Figures 4/8), question-level accuracy vs depth (Figures
//! 5/9), and the value mix of each structure's questions (ifstress's own check of the paper's difficulty control).

use std::path::{Path, PathBuf};

use analysis::models::ReasoningRule;
use analysis::rift::{CurvePoint, RiftSummary};
use plotters::style::RGBColor;

use crate::Error;
use crate::figure::{Bar, Figure, LegendEntry, Panel, PanelKind, Series, auto_range};
use crate::style::ModelStyles;

/// Depths answered fewer times than this are left out of the depth figure (their accuracy is noise); the table keeps them.
const MIN_DEPTH_ANSWERS: i64 = 30;

fn curve_panels(
    summary: &RiftSummary,
    styles: &ModelStyles,
    points: &[CurvePoint],
    x_label: &str,
    what: &str,
) -> Vec<Panel> {
    let x_max = points.iter().map(|p| p.x).fold(0.0, f64::max);
    ["linear", "jumping"]
        .iter()
        .map(|structure| {
            let series: Vec<Series> = summary
                .models
                .iter()
                .map(|m| {
                    let pts = points
                        .iter()
                        .filter(|p| {
                            &p.model == m
                                && p.structure == *structure
                                && (what != "depth" || p.n >= MIN_DEPTH_ANSWERS)
                        })
                        .map(|p| (p.x, Some(p.accuracy)))
                        .collect();
                    let mut s = Series::line(styles.color(m), pts);
                    s.markers = what == "tokens";
                    s
                })
                .collect();
            Panel {
                title: format!("{structure} prompts"),
                x_label: x_label.to_owned(),
                y_label: "accuracy (%)".to_owned(),
                x_range: (0.0, (x_max * 1.02).max(1.0)),
                y_range: (0.0, 102.0),
                log_y: false,
                log_x: false,
                kind: PanelKind::Lines(series),
            }
        })
        .collect()
}

/// A title suffix when a curve leaves unjudged answers out of its accuracy (empty when every answer was judged).
fn unjudged_note(points: &[CurvePoint]) -> String {
    let n: i64 = points.iter().map(|p| p.unjudged).sum();
    if n == 0 {
        String::new()
    } else {
        format!("; judged answers only, {n} unjudged left out")
    }
}

fn legend(styles: &ModelStyles, models: &[String]) -> Vec<LegendEntry> {
    models
        .iter()
        .map(|m| LegendEntry {
            label: styles.label(m),
            color: styles.color(m),
        })
        .collect()
}

/// Every RIFT figure as data (drawn by [`draw_all`]).
pub fn figures(summary: &RiftSummary, rule: &ReasoningRule) -> Vec<Figure> {
    let styles = ModelStyles::new(&summary.models, rule);
    let mut out = Vec::new();
    if !summary.by_tokens.is_empty() {
        let width = summary.token_bin_width.unwrap_or(0);
        out.push(Figure {
            name: "rift_accuracy_vs_tokens".to_owned(),
            title: format!(
                "RIFT: prompt accuracy vs prompt tokens (bins of {width} tokens, mean per bin{})",
                unjudged_note(&summary.by_tokens)
            ),
            panels: curve_panels(
                summary,
                &styles,
                &summary.by_tokens,
                "prompt tokens",
                "tokens",
            ),
            columns: 2,
            panel_size: (640, 480),
            legend: legend(&styles, &summary.models),
            legend_title: "model ((r) = reasoning)".to_owned(),
        });
    }
    if !summary.by_depth.is_empty() {
        out.push(Figure {
            name: "rift_accuracy_vs_depth".to_owned(),
            title: format!(
                "RIFT: question-level accuracy vs depth (questions answered before it; depths with >= 30 answers{})",
                unjudged_note(&summary.by_depth)
            ),
            panels: curve_panels(
                summary,
                &styles,
                &summary.by_depth,
                "depth into the traversal",
                "depth",
            ),
            columns: 2,
            panel_size: (640, 480),
            legend: legend(&styles, &summary.models),
            legend_title: "model ((r) = reasoning)".to_owned(),
        });
    }
    // Wrong-question share: one row per model, a bar per structure and one for both pooled (the paper's figure).
    // Baseline prompts hold one question, so there is no other question to answer: only linear and jumping.
    let shares = || {
        summary
            .wrong_question
            .iter()
            .chain(&summary.wrong_question_pooled)
    };
    let structures: Vec<&str> = ["linear", "jumping", analysis::rift::POOLED]
        .into_iter()
        .filter(|s| shares().any(|w| w.structure == *s && w.share.is_some()))
        .collect();
    if !structures.is_empty() {
        let colors = [
            RGBColor(31, 119, 180),
            RGBColor(214, 39, 40),
            RGBColor(120, 120, 120),
        ];
        let mut bars = Vec::new();
        for (row, m) in summary.models.iter().enumerate() {
            for (slot, s) in structures.iter().enumerate() {
                if let Some(share) = shares()
                    .find(|w| &w.model == m && w.structure == *s)
                    .and_then(|w| w.share)
                {
                    bars.push(Bar {
                        row,
                        slot,
                        slots: structures.len(),
                        value: share,
                        color: colors[slot],
                    });
                }
            }
        }
        let x_max = auto_range(bars.iter().map(|b| b.value), Some(0.0))
            .1
            .max(1.0);
        let rows: Vec<String> = summary.models.iter().map(|m| styles.label(m)).collect();
        let n = rows.len() as f64;
        out.push(Figure {
            name: "rift_wrong_question_share".to_owned(),
            title: "RIFT: incorrect answers that answer a different question (%; pooled = linear + jumping, as Fig. 4)".to_owned(),
            panels: vec![Panel {
                title: String::new(),
                x_label: "% of incorrect answers".to_owned(),
                y_label: String::new(),
                x_range: (0.0, x_max),
                y_range: (0.0, n),
                log_y: false,
                log_x: false,
                kind: PanelKind::Bars { rows, bars },
            }],
            columns: 1,
            panel_size: (820, (90 + 44 * summary.models.len() as u32).max(300)),
            legend: structures
                .iter()
                .enumerate()
                .map(|(i, s)| LegendEntry {
                    label: if *s == analysis::rift::POOLED {
                        "pooled (linear + jumping)".to_owned()
                    } else {
                        (*s).to_owned()
                    },
                    color: colors[i],
                })
                .collect(),
            legend_title: "structure".to_owned(),
        });
    }
    if let Some(fig) = value_mix_figure(summary, &styles) {
        out.push(fig);
    }
    out
}

/// The value mix: per model a panel with one row per value band and a bar per structure (share of the structure's
/// questions), the linear-vs-jumping chi-square test in the panel's title.
fn value_mix_figure(summary: &RiftSummary, styles: &ModelStyles) -> Option<Figure> {
    use analysis::rift::values::{VALUE_BANDS, fmt_p};
    let mix = &summary.values.mix;
    if mix.is_empty() {
        return None;
    }
    let structures: Vec<&str> = analysis::rift::STRUCTURES
        .into_iter()
        .filter(|s| mix.iter().any(|r| r.structure == *s && r.questions > 0))
        .collect();
    let colors = [
        RGBColor(120, 120, 120),
        RGBColor(31, 119, 180),
        RGBColor(214, 39, 40),
    ];
    let color = |s: &str| {
        colors[analysis::rift::STRUCTURES
            .iter()
            .position(|x| *x == s)
            .unwrap_or(0)]
    };
    let x_max = auto_range(mix.iter().filter_map(|r| r.share), Some(0.0))
        .1
        .max(1.0);
    let panels: Vec<Panel> = summary
        .models
        .iter()
        .filter(|m| mix.iter().any(|r| &r.model == *m))
        .map(|m| {
            let mut bars = Vec::new();
            for (row, band) in VALUE_BANDS.iter().enumerate() {
                for (slot, s) in structures.iter().enumerate() {
                    if let Some(share) = mix
                        .iter()
                        .find(|r| &r.model == m && r.structure == *s && r.band == *band)
                        .and_then(|r| r.share)
                    {
                        bars.push(Bar {
                            row,
                            slot,
                            slots: structures.len(),
                            value: share,
                            color: color(s),
                        });
                    }
                }
            }
            let test = summary
                .values
                .mix_test
                .iter()
                .find(|t| &t.model == m)
                .and_then(|t| Some((t.chi_square?, t.df?, t.p_value?)))
                .map_or_else(
                    || "linear vs jumping: not testable".to_owned(),
                    |(c, df, p)| {
                        format!(
                            "linear vs jumping: chi-square {c:.2}, df {df}, p {}",
                            fmt_p_cmp(&fmt_p(p))
                        )
                    },
                );
            Panel {
                title: format!("{}: {test}", styles.label(m)),
                x_label: "% of the structure's questions".to_owned(),
                y_label: String::new(),
                x_range: (0.0, x_max),
                y_range: (0.0, VALUE_BANDS.len() as f64),
                log_y: false,
                log_x: false,
                kind: PanelKind::Bars {
                    rows: VALUE_BANDS.iter().map(|b| (*b).to_owned()).collect(),
                    bars,
                },
            }
        })
        .collect();
    let columns = panels.len().clamp(1, 2);
    Some(Figure {
        name: "rift_value_mix".to_owned(),
        title: "RIFT: value mix of the questions per structure (normalised clue value bands)"
            .to_owned(),
        panels,
        columns,
        panel_size: (640, 420),
        legend: structures
            .iter()
            .map(|s| LegendEntry {
                label: (*s).to_owned(),
                color: color(s),
            })
            .collect(),
        legend_title: "structure".to_owned(),
    })
}

/// "= 0.1234" or "< 0.0001".
fn fmt_p_cmp(p: &str) -> String {
    if p.starts_with('<') {
        p.to_owned()
    } else {
        format!("= {p}")
    }
}

/// Draws every RIFT figure into `dir` (PNG and SVG); returns the files written.
pub fn draw_all(
    summary: &RiftSummary,
    rule: &ReasoningRule,
    dir: &Path,
) -> Result<Vec<PathBuf>, Error> {
    let mut written = Vec::new();
    for fig in figures(summary, rule) {
        written.extend(fig.write(dir)?);
    }
    Ok(written)
}
