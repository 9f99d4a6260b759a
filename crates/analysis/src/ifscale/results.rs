//! The full multi-metric results table (accuracy with its spread and intervals, O:M ratio, primacy ratio, latency at
//! each reported N) and its comparison with the published leaderboard (`published_results_table.csv`).
//!
//! The published leaderboard rounds accuracy and standard deviation to 0.1 percentage point and names models without
//! their provider (`o3 (high)`, `claude-opus-4 (r)`). A published row is matched to a configuration here by name:
//! `(r)` and `(high)` mean the `-high-reasoning` configuration, `(medium)` or no tag the plain one. When that
//! configuration disagrees by more than the rounding (0.05) and another configuration of the same base name agrees,
//! the row is matched to that one and flagged `matched_by_values` (the published `gemini-2.5-pro-preview` row holds
//! the high-effort run's numbers).

use std::path::{Path, PathBuf};

use polars::prelude::*;
use serde::Serialize;

use super::{IfscaleSummary, RuleRow};
use crate::Error;
use crate::tables;

/// The densities the paper reports in its tables.
pub const HEADLINE_NS: [i64; 5] = [10, 50, 100, 250, 500];

/// Half a unit of the published rounding (0.1 percentage point).
pub const ROUNDING: f64 = 0.05;

/// The N values the Markdown tables show: every N of a short grid (at most ten), else the headline densities present
/// (every N when none of them is).
pub fn headline_ns(ns: &[i64]) -> Vec<i64> {
    let mut all: Vec<i64> = ns.to_vec();
    all.sort_unstable();
    all.dedup();
    if all.len() <= 10 {
        return all;
    }
    let shown: Vec<i64> = HEADLINE_NS
        .iter()
        .copied()
        .filter(|n| all.contains(n))
        .collect();
    if shown.is_empty() { all } else { shown }
}

fn headline_rows(summary: &IfscaleSummary) -> Vec<&RuleRow> {
    let ns: Vec<i64> = summary.rows.iter().map(|r| r.num_rules).collect();
    let shown = headline_ns(&ns);
    summary
        .rows
        .iter()
        .filter(|r| shown.contains(&r.num_rules))
        .collect()
}

/// The results table at the headline densities: one row per (model, N).
pub fn results_frame(summary: &IfscaleSummary) -> Result<DataFrame, Error> {
    let rows = headline_rows(summary);
    tables::Columns::of(&rows)
        .col("model", |r| r.model.as_str())
        .col("num_rules", |r| r.num_rules)
        .col("n_samples", |r| r.n_samples)
        .col("n_failed", |r| r.n_failed)
        .col("accuracy", |r| r.accuracy)
        .col("accuracy_std", |r| r.accuracy_std)
        .col("accuracy_t_low", |r| r.accuracy_t_low)
        .col("accuracy_t_high", |r| r.accuracy_t_high)
        .col("accuracy_ci_low", |r| r.accuracy_ci_low)
        .col("accuracy_ci_high", |r| r.accuracy_ci_high)
        .col("om_ratio", |r| r.om_ratio)
        .col("primacy_ratio", |r| r.primacy_ratio)
        .col("latency", |r| r.latency)
        .frame("results table")
}

fn interval(lo: Option<f64>, hi: Option<f64>) -> String {
    match (lo, hi) {
        (Some(l), Some(h)) => format!(
            "{} – {}",
            tables::fmt_opt(Some(l), 1),
            tables::fmt_opt(Some(h), 1)
        ),
        _ => "–".to_owned(),
    }
}

/// Writes `ifscale_results_full` (Parquet, CSV, Markdown).
pub fn write_tables(summary: &IfscaleSummary, dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut written = tables::write_table(&results_frame(summary)?, dir, "ifscale_results_full")?;
    let level = summary.config.ci_level * 100.0;
    let t_head = format!("{level:.0}% t-interval");
    let b_head = format!("{level:.0}% bootstrap");
    let table = tables::MdTable {
        name: "ifscale_results_full",
        caption: "Results at the reported densities: scored/total samples (failed samples are excluded from means), \
                  mean accuracy (%), sample std across seeds, Student-t and percentile-bootstrap intervals of the mean \
                  (with 5 seeds the bootstrap interval is narrow by construction; the t-interval is the honest one), \
                  O:M ratio, primacy ratio and mean latency (s).",
        header: &[
            "model",
            "N",
            "scored",
            "accuracy",
            "std",
            &t_head,
            &b_head,
            "O:M",
            "primacy",
            "latency (s)",
        ],
    };
    written.extend(table.write_rows(
        dir,
        &headline_rows(summary),
        |_| true,
        |r| {
            vec![
                r.model.clone(),
                r.num_rules.to_string(),
                format!("{}/{}", r.n_samples - r.n_failed, r.n_samples),
                tables::fmt_opt(r.accuracy, 1),
                tables::fmt_opt(r.accuracy_std, 1),
                interval(r.accuracy_t_low, r.accuracy_t_high),
                interval(r.accuracy_ci_low, r.accuracy_ci_high),
                tables::fmt_opt(r.om_ratio, 2),
                tables::fmt_opt(r.primacy_ratio, 2),
                tables::fmt_opt(r.latency, 1),
            ]
        },
    )?);
    Ok(written)
}

/// One row of the published leaderboard.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PublishedRow {
    pub name: String,
    /// Accuracy and standard deviation (%) at [`HEADLINE_NS`].
    pub accuracy: Vec<Option<f64>>,
    pub std: Vec<Option<f64>>,
}

/// Reads `published_results_table.csv` (`Model, 10 Instructions accuracy, …, 500 Instructions std.dev, Organization`,
/// values like `98.0%`).
pub fn load_published_results(path: &Path) -> Result<Vec<PublishedRow>, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::Input {
        path: path.to_owned(),
        message: e.to_string(),
    })?;
    parse_published_results(&text, path)
}

/// Parses the published leaderboard's text (`path` names it in errors).
pub fn parse_published_results(text: &str, path: &Path) -> Result<Vec<PublishedRow>, Error> {
    let bad = |message: String| Error::Input {
        path: path.to_owned(),
        message,
    };
    let mut lines = text.lines();
    let header: Vec<String> = lines
        .next()
        .unwrap_or_default()
        .split(',')
        .map(|h| h.trim().to_owned())
        .collect();
    let find = |want: &str| {
        header
            .iter()
            .position(|h| h == want)
            .ok_or_else(|| bad(format!("missing column `{want}` in the header")))
    };
    let model_col = find("Model")?;
    let acc_cols = HEADLINE_NS
        .iter()
        .map(|n| find(&format!("{n} Instructions accuracy")))
        .collect::<Result<Vec<_>, _>>()?;
    let std_cols = HEADLINE_NS
        .iter()
        .map(|n| find(&format!("{n} Instructions std.dev")))
        .collect::<Result<Vec<_>, _>>()?;
    let mut out = Vec::new();
    for (i, line) in lines.enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        let value = |c: usize| -> Result<Option<f64>, Error> {
            let cell = cells.get(c).copied().unwrap_or_default();
            if cell.is_empty() {
                return Ok(None);
            }
            cell.trim_end_matches('%')
                .parse::<f64>()
                .map(Some)
                .map_err(|_| bad(format!("line {}: `{cell}` is not a percentage", i + 2)))
        };
        out.push(PublishedRow {
            name: cells.get(model_col).copied().unwrap_or_default().to_owned(),
            accuracy: acc_cols
                .iter()
                .map(|&c| value(c))
                .collect::<Result<_, _>>()?,
            std: std_cols
                .iter()
                .map(|&c| value(c))
                .collect::<Result<_, _>>()?,
        });
    }
    Ok(out)
}

/// One published row against the configuration it was matched to.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MatchedRow {
    pub published: String,
    pub model: String,
    /// True when the name rule's configuration disagreed and this one was chosen by its values. (A published name
    /// that is only a prefix of a name here, `gemini-2.5-flash-preview` for `…-05-20`, is matched by name.)
    pub matched_by_values: bool,
    /// The largest |published − here| over accuracy and std at the headline densities.
    pub max_abs_diff: f64,
    /// Where that largest difference is, e.g. `std@500`.
    pub worst: String,
    /// When matched by values: the largest difference of the configuration the name rule gave.
    pub name_rule_diff: Option<f64>,
}

/// The comparison with the published leaderboard.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResultsComparison {
    pub rows: Vec<MatchedRow>,
    /// Published rows no configuration here matches.
    pub unmatched: Vec<String>,
}

impl ResultsComparison {
    /// The largest difference over every matched row.
    pub fn max_abs_diff(&self) -> f64 {
        self.rows.iter().map(|r| r.max_abs_diff).fold(0.0, f64::max)
    }
}

fn split_tag(name: &str) -> (String, Option<String>) {
    match name.split_once(" (") {
        Some((base, tag)) => (
            base.trim().to_owned(),
            Some(tag.trim_end_matches(')').to_owned()),
        ),
        None => (name.trim().to_owned(), None),
    }
}

fn short(model: &str) -> &str {
    model.rsplit('/').next().unwrap_or(model)
}

/// `(max |diff|, where)` of one published row against one configuration; None when nothing could be compared.
fn row_diff(summary: &IfscaleSummary, model: &str, p: &PublishedRow) -> Option<(f64, String)> {
    let mut worst: Option<(f64, String)> = None;
    for (i, n) in HEADLINE_NS.iter().enumerate() {
        let Some(r) = summary.model_rows(model).find(|r| r.num_rules == *n) else {
            continue;
        };
        for (what, published, here) in [
            ("accuracy", p.accuracy[i], r.accuracy),
            ("std", p.std[i], r.accuracy_std),
        ] {
            if let (Some(a), Some(b)) = (published, here) {
                let d = (a - b).abs();
                if worst.as_ref().is_none_or(|w| d > w.0) {
                    worst = Some((d, format!("{what}@{n}")));
                }
            }
        }
    }
    worst
}

/// Matches every published row to a configuration of `summary` and measures the differences.
pub fn compare_published(
    summary: &IfscaleSummary,
    published: &[PublishedRow],
) -> ResultsComparison {
    let mut out = ResultsComparison {
        rows: Vec::new(),
        unmatched: Vec::new(),
    };
    for p in published {
        let (base, tag) = split_tag(&p.name);
        let high = matches!(tag.as_deref(), Some("r" | "high"));
        let by_name = summary.models.iter().find(|m| {
            let s = short(m);
            if high {
                s == format!("{base}-high-reasoning")
            } else {
                s == base
            }
        });
        let scored = |m: &String| row_diff(summary, m, p).map(|(d, w)| (m.clone(), d, w));
        let named = by_name.and_then(scored);
        let name_rule_diff = named.as_ref().map(|n| n.1);
        let chosen = match named {
            Some(n) if n.1 <= ROUNDING + 1e-9 => Some((n, false)),
            named => {
                // Every configuration of the same base name, the closest one if it agrees to the rounding.
                let best = summary
                    .models
                    .iter()
                    .filter(|m| short(m) == base || short(m).starts_with(&format!("{base}-")))
                    .filter_map(scored)
                    .min_by(|a, b| a.1.total_cmp(&b.1));
                match (best, named) {
                    (Some(b), _) if b.1 <= ROUNDING + 1e-9 => {
                        let flagged = by_name.is_some_and(|n| *n != b.0);
                        Some((b, flagged))
                    }
                    (_, Some(n)) => Some((n, false)),
                    (b, None) => b.map(|b| (b, false)),
                }
            }
        };
        match chosen {
            Some(((model, d, worst), flagged)) => out.rows.push(MatchedRow {
                published: p.name.clone(),
                model,
                matched_by_values: flagged,
                max_abs_diff: d,
                worst,
                name_rule_diff: if flagged { name_rule_diff } else { None },
            }),
            None => out.unmatched.push(p.name.clone()),
        }
    }
    out
}
