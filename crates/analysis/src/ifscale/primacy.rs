//! Primacy ingredients: error rates in the early, middle and late thirds of the keyword list per (model, N), from
//! the per-keyword labels (`schema::ifscale::KeywordLabel`).
//!
//! The thirds are the ones the primacy ratio uses: with `b = max(1, N div 3)`, early = the first `b` positions, late =
//! the last `b`, middle = the rest. An error is an omitted or modified keyword. A third's error rate is pooled over
//! the (model, N) samples: errors ÷ keywords in that third × 100 (every sample at one N has the same third sizes, so
//! this is also the mean of the per-sample rates). `late_over_early` is the ratio of the pooled rates; it differs
//! from the published primacy ratio, which averages per-sample ratios and skips samples without an early error.
//! N is the number of labels of a sample; failed samples have no labels and do not appear here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use polars::prelude::*;
use schema::ifscale::{KeywordLabel, KeywordStatus};
use serde::Serialize;

use crate::Error;
use crate::tables;

/// One (model, N) row of the thirds table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThirdsRow {
    pub model: String,
    pub num_rules: i64,
    /// Samples with labels.
    pub n_samples: i64,
    /// Keywords per sample in the early and late thirds (b) and in the middle (N − 2b).
    pub third_size: i64,
    pub middle_size: i64,
    pub early_error_pct: Option<f64>,
    pub middle_error_pct: Option<f64>,
    pub late_error_pct: Option<f64>,
    pub late_over_early: Option<f64>,
}

/// Reads keyword-label JSONL files.
pub fn load_labels(paths: &[PathBuf]) -> Result<Vec<KeywordLabel>, Error> {
    Ok(schema::read_jsonl_files(paths)?)
}

/// The thirds of a list of `n` keywords: `(b, middle size)`.
pub fn third_sizes(n: usize) -> (usize, usize) {
    let b = (n / 3).max(1).min(n);
    (b, n.saturating_sub(2 * b))
}

/// Which third position `pos` (0-based) of an `n`-keyword list is in: 0 early, 1 middle, 2 late.
pub fn third_of(pos: usize, n: usize) -> usize {
    let (b, _) = third_sizes(n);
    if pos < b {
        0
    } else if pos >= n - b {
        2
    } else {
        1
    }
}

/// Error rates per third for every (model, N), sorted by model then N.
pub fn thirds(labels: &[KeywordLabel]) -> Vec<ThirdsRow> {
    // Per sample: its N and its error flags by position.
    let mut samples: BTreeMap<(&str, &str), Vec<(u32, bool)>> = BTreeMap::new();
    for l in labels {
        samples
            .entry((l.model.as_str(), l.id.as_str()))
            .or_default()
            .push((l.position, l.status != KeywordStatus::Exact));
    }
    /// Samples, errors per third, keywords per third.
    type Counts = (i64, [u64; 3], [u64; 3]);
    let mut groups: BTreeMap<(&str, i64), Counts> = BTreeMap::new();
    for ((model, _), marks) in &samples {
        let n = marks.len();
        let g = groups.entry((model, n as i64)).or_default();
        g.0 += 1;
        for &(pos, err) in marks {
            let t = third_of(pos as usize, n);
            g.2[t] += 1;
            g.1[t] += u64::from(err);
        }
    }
    groups
        .into_iter()
        .map(|((model, n), (count, errors, totals))| {
            let rate =
                |t: usize| (totals[t] > 0).then(|| errors[t] as f64 / totals[t] as f64 * 100.0);
            let (b, middle) = third_sizes(n as usize);
            let (early, late) = (rate(0), rate(2));
            ThirdsRow {
                model: model.to_owned(),
                num_rules: n,
                n_samples: count,
                third_size: b as i64,
                middle_size: middle as i64,
                early_error_pct: early,
                middle_error_pct: rate(1),
                late_error_pct: late,
                late_over_early: match (early, late) {
                    (Some(e), Some(l)) if e > 0.0 => Some(l / e),
                    _ => None,
                },
            }
        })
        .collect()
}

/// The thirds table as a frame.
pub fn thirds_frame(rows: &[ThirdsRow]) -> Result<DataFrame, Error> {
    tables::Columns::of(rows)
        .col("model", |r| r.model.as_str())
        .col("num_rules", |r| r.num_rules)
        .col("n_samples", |r| r.n_samples)
        .col("third_size", |r| r.third_size)
        .col("middle_size", |r| r.middle_size)
        .col("early_error_pct", |r| r.early_error_pct)
        .col("middle_error_pct", |r| r.middle_error_pct)
        .col("late_error_pct", |r| r.late_error_pct)
        .col("late_over_early", |r| r.late_over_early)
        .frame("primacy thirds table")
}

/// Writes `ifscale_primacy_thirds` (Parquet, CSV; Markdown at the headline densities).
pub fn write_tables(rows: &[ThirdsRow], dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut written = tables::write_table(&thirds_frame(rows)?, dir, "ifscale_primacy_thirds")?;
    let ns: Vec<i64> = rows.iter().map(|r| r.num_rules).collect();
    let shown = super::results::headline_ns(&ns);
    let table = tables::MdTable {
        name: "ifscale_primacy_thirds",
        caption: "Primacy ingredients: error rate (%) in the early, middle and late thirds of the keyword list (b = \
                  max(1, N div 3) keywords in the early and late thirds), pooled over samples; late ÷ early of the \
                  pooled rates.",
        header: &[
            "model",
            "N",
            "samples",
            "early err %",
            "middle err %",
            "late err %",
            "late ÷ early",
        ],
    };
    written.extend(table.write_rows(
        dir,
        rows,
        |r| shown.contains(&r.num_rules),
        |r| {
            vec![
                r.model.clone(),
                r.num_rules.to_string(),
                r.n_samples.to_string(),
                tables::fmt_opt(r.early_error_pct, 1),
                tables::fmt_opt(r.middle_error_pct, 1),
                tables::fmt_opt(r.late_error_pct, 1),
                tables::fmt_opt(r.late_over_early, 2),
            ]
        },
    )?);
    Ok(written)
}
