//! The decay-pattern table: per model the classification (with near-ties marked), the BIC margin between the two
//! best families, every family's parameters, BIC and R², and the variance pattern.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use polars::prelude::*;

use super::IfscaleSummary;
use crate::Error;
use crate::fit::{DecayFit, DecayPattern, VariancePattern};
use crate::tables;

fn variance_of(summary: &IfscaleSummary) -> BTreeMap<&str, Option<VariancePattern>> {
    summary
        .variance
        .iter()
        .map(|(m, v)| (m.as_str(), *v))
        .collect()
}

/// The decay-fit table: one row per model.
pub fn fits_frame(summary: &IfscaleSummary) -> Result<DataFrame, Error> {
    let fits = &summary.fits;
    let var = variance_of(summary);
    let f = |g: &dyn Fn(&DecayFit) -> Option<f64>| fits.iter().map(g).collect::<Vec<Option<f64>>>();
    let s = |g: &dyn Fn(&DecayFit) -> Option<String>| {
        fits.iter().map(g).collect::<Vec<Option<String>>>()
    };
    let columns = vec![
        Column::new(
            "model".into(),
            fits.iter().map(|f| f.model.as_str()).collect::<Vec<_>>(),
        ),
        Column::new("pattern".into(), s(&|f| Some(f.label()))),
        Column::new("best".into(), s(&|f| Some(f.pattern.as_str().to_owned()))),
        Column::new(
            "runner_up".into(),
            s(&|f| f.runner_up.map(|p| p.as_str().to_owned())),
        ),
        Column::new("bic_margin".into(), f(&|f| f.margin)),
        Column::new(
            "variance_pattern".into(),
            s(&|f| {
                var.get(f.model.as_str())
                    .copied()
                    .flatten()
                    .map(|v| v.as_str().to_owned())
            }),
        ),
        Column::new(
            "n_points".into(),
            fits.iter().map(|f| f.n_points as i64).collect::<Vec<_>>(),
        ),
        Column::new(
            "threshold_level".into(),
            f(&|f| f.threshold.as_ref().map(|t| t.level)),
        ),
        Column::new(
            "threshold_breakpoint".into(),
            f(&|f| f.threshold.as_ref().map(|t| t.breakpoint)),
        ),
        Column::new(
            "threshold_slope_after".into(),
            f(&|f| f.threshold.as_ref().map(|t| t.slope_after)),
        ),
        Column::new(
            "threshold_bic".into(),
            f(&|f| f.bic(DecayPattern::Threshold)),
        ),
        Column::new("threshold_r2".into(), f(&|f| f.r2(DecayPattern::Threshold))),
        Column::new("linear_intercept".into(), f(&|f| Some(f.linear.intercept))),
        Column::new("linear_slope".into(), f(&|f| Some(f.linear.slope))),
        Column::new("linear_bic".into(), f(&|f| f.bic(DecayPattern::Linear))),
        Column::new("linear_r2".into(), f(&|f| f.r2(DecayPattern::Linear))),
        Column::new(
            "exp_floor".into(),
            f(&|f| f.exponential.as_ref().map(|e| e.floor)),
        ),
        Column::new(
            "exp_amplitude".into(),
            f(&|f| f.exponential.as_ref().map(|e| e.amplitude)),
        ),
        Column::new(
            "exp_tau".into(),
            f(&|f| f.exponential.as_ref().map(|e| e.tau)),
        ),
        Column::new("exp_bic".into(), f(&|f| f.bic(DecayPattern::Exponential))),
        Column::new("exp_r2".into(), f(&|f| f.r2(DecayPattern::Exponential))),
    ];
    DataFrame::new(fits.len(), columns).map_err(Error::polars("building the decay-fit table"))
}

/// The Markdown rows of the decay table.
pub fn markdown_rows(summary: &IfscaleSummary) -> Vec<Vec<String>> {
    let var = variance_of(summary);
    summary
        .fits
        .iter()
        .map(|f| {
            let v = var
                .get(f.model.as_str())
                .copied()
                .flatten()
                .map_or("–", VariancePattern::as_str);
            let fam = |p: DecayPattern| [tables::fmt_opt(f.bic(p), 1), tables::fmt_opt(f.r2(p), 3)];
            let mut row = vec![
                f.model.clone(),
                f.label(),
                tables::fmt_opt(f.margin, 1),
                v.to_owned(),
                tables::fmt_opt(f.threshold.as_ref().map(|t| t.breakpoint), 0),
                tables::fmt_opt(f.threshold.as_ref().map(|t| t.slope_after), 4),
                tables::fmt_opt(Some(f.linear.slope), 4),
                tables::fmt_opt(f.exponential.as_ref().map(|e| e.floor), 1),
                tables::fmt_opt(f.exponential.as_ref().map(|e| e.tau), 1),
            ];
            for p in [
                DecayPattern::Threshold,
                DecayPattern::Linear,
                DecayPattern::Exponential,
            ] {
                row.extend(fam(p));
            }
            row
        })
        .collect()
}

/// Writes `ifscale_decay_fits` (Parquet, CSV, Markdown).
pub fn write_tables(summary: &IfscaleSummary, dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut written = tables::write_table(&fits_frame(summary)?, dir, "ifscale_decay_fits")?;
    written.extend(tables::write_markdown(
        dir,
        "ifscale_decay_fits",
        "Decay pattern per model: the lowest-BIC family among threshold (plateau ≥ 1/5 of the N range, then a linear \
         drop), linear, and exponential (settles within the range, τ ≤ span/3), fitted to mean accuracy vs N; margin = \
         BIC of the runner-up − BIC of the best, near-tie when < 2. Variance pattern of the across-seed std.",
        &[
            "model",
            "pattern",
            "margin",
            "variance",
            "breakpoint",
            "slope after",
            "linear slope",
            "exp floor",
            "exp τ",
            "BIC thr",
            "R² thr",
            "BIC lin",
            "R² lin",
            "BIC exp",
            "R² exp",
        ],
        &markdown_rows(summary),
    )?);
    Ok(written)
}
