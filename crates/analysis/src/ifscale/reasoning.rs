//! Reasoning models: reasoning tokens vs N per model (from the per-sample records that report them), and reasoning
//! effort compared where one base model was run at a lower and at high effort.
//!
//! Effort comes from the configuration name (`analysis::models::effort_of`): `o3` and `o3-high-reasoning` form a pair,
//! as do `o3-medium` and `o3-high`. The lower side is the medium configuration when there is one, else the default
//! (no effort named), else low. Reasoning tokens and visible output tokens are separate columns, never summed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use polars::prelude::*;
use serde::Serialize;

use super::{IfscaleSummary, RuleRow};
use crate::Error;
use crate::models::{Effort, effort_of};
use crate::tables;

/// One base model run at a lower and at high effort.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EffortPair {
    pub base: String,
    pub lower_model: String,
    pub lower_effort: Effort,
    pub high_model: String,
}

/// The pairs in `models`, sorted by base name.
pub fn effort_pairs(models: &[String]) -> Vec<EffortPair> {
    let mut by_base: BTreeMap<String, Vec<(Effort, &String)>> = BTreeMap::new();
    for m in models {
        let (base, effort) = effort_of(m);
        by_base.entry(base).or_default().push((effort, m));
    }
    by_base
        .into_iter()
        .filter_map(|(base, configs)| {
            let high = configs.iter().find(|c| c.0 == Effort::High)?;
            let lower = [Effort::Medium, Effort::Default, Effort::Low]
                .iter()
                .find_map(|e| configs.iter().find(|c| c.0 == *e))?;
            Some(EffortPair {
                base,
                lower_model: lower.1.clone(),
                lower_effort: lower.0,
                high_model: high.1.clone(),
            })
        })
        .collect()
}

/// One (pair, N) row: both configurations side by side.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EffortRow {
    pub base: String,
    pub num_rules: i64,
    pub lower_effort: Effort,
    pub accuracy_lower: Option<f64>,
    pub accuracy_high: Option<f64>,
    /// High minus lower, percentage points.
    pub accuracy_gain: Option<f64>,
    pub latency_lower: Option<f64>,
    pub latency_high: Option<f64>,
    pub reasoning_tokens_lower: Option<f64>,
    pub reasoning_tokens_high: Option<f64>,
    pub output_tokens_lower: Option<f64>,
    pub output_tokens_high: Option<f64>,
}

/// The side-by-side rows of every pair at every N both configurations ran.
pub fn effort_rows(summary: &IfscaleSummary) -> Vec<EffortRow> {
    let mut out = Vec::new();
    for p in effort_pairs(&summary.models) {
        let high: BTreeMap<i64, &RuleRow> = summary
            .model_rows(&p.high_model)
            .map(|r| (r.num_rules, r))
            .collect();
        for lo in summary.model_rows(&p.lower_model) {
            let Some(hi) = high.get(&lo.num_rules) else {
                continue;
            };
            out.push(EffortRow {
                base: p.base.clone(),
                num_rules: lo.num_rules,
                lower_effort: p.lower_effort,
                accuracy_lower: lo.accuracy,
                accuracy_high: hi.accuracy,
                accuracy_gain: hi.accuracy.zip(lo.accuracy).map(|(h, l)| h - l),
                latency_lower: lo.latency,
                latency_high: hi.latency,
                reasoning_tokens_lower: lo.reasoning_tokens,
                reasoning_tokens_high: hi.reasoning_tokens,
                output_tokens_lower: lo.output_tokens,
                output_tokens_high: hi.output_tokens,
            });
        }
    }
    out
}

fn effort_frame(rows: &[EffortRow]) -> Result<DataFrame, Error> {
    tables::Columns::of(rows)
        .col("base", |r| r.base.as_str())
        .col("num_rules", |r| r.num_rules)
        .col("lower_effort", |r| r.lower_effort.as_str())
        .col("accuracy_lower", |r| r.accuracy_lower)
        .col("accuracy_high", |r| r.accuracy_high)
        .col("accuracy_gain", |r| r.accuracy_gain)
        .col("latency_lower", |r| r.latency_lower)
        .col("latency_high", |r| r.latency_high)
        .col("reasoning_tokens_lower", |r| r.reasoning_tokens_lower)
        .col("reasoning_tokens_high", |r| r.reasoning_tokens_high)
        .col("output_tokens_lower", |r| r.output_tokens_lower)
        .col("output_tokens_high", |r| r.output_tokens_high)
        .frame("effort table")
}

fn reasoning_frame(rows: &[&RuleRow]) -> Result<DataFrame, Error> {
    tables::Columns::of(rows)
        .col("model", |r| r.model.as_str())
        .col("num_rules", |r| r.num_rules)
        .col("accuracy", |r| r.accuracy)
        .col("reasoning_tokens", |r| r.reasoning_tokens)
        .col("output_tokens", |r| r.output_tokens)
        .col("latency", |r| r.latency)
        .frame("reasoning-token table")
}

/// The models that report reasoning tokens anywhere, in summary order.
pub fn reasoning_models(summary: &IfscaleSummary) -> Vec<String> {
    summary
        .models
        .iter()
        .filter(|m| summary.model_rows(m).any(|r| r.reasoning_tokens.is_some()))
        .cloned()
        .collect()
}

/// Writes `ifscale_effort_pairs` when a pair exists and `ifscale_reasoning_tokens` when a model reports reasoning
/// tokens (Parquet, CSV; Markdown at the headline densities).
pub fn write_tables(summary: &IfscaleSummary, dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut written = Vec::new();
    let ns: Vec<i64> = summary.rows.iter().map(|r| r.num_rules).collect();
    let shown = super::results::headline_ns(&ns);
    let rows = effort_rows(summary);
    if !rows.is_empty() {
        written.extend(tables::write_table(
            &effort_frame(&rows)?,
            dir,
            "ifscale_effort_pairs",
        )?);
        let table = tables::MdTable {
            name: "ifscale_effort_pairs",
            caption: "Reasoning effort: each base model at its lower effort (medium, or the provider default when no \
                      effort is named) and at high effort; gain = high − lower accuracy (pp); latency in seconds; \
                      reasoning tokens as reported (– when the records carry none).",
            header: &[
                "base",
                "N",
                "lower effort",
                "acc lower",
                "acc high",
                "gain",
                "latency lower",
                "latency high",
                "reasoning tok lower",
                "reasoning tok high",
            ],
        };
        written.extend(table.write_rows(
            dir,
            &rows,
            |r| shown.contains(&r.num_rules),
            |r| {
                vec![
                    r.base.clone(),
                    r.num_rules.to_string(),
                    r.lower_effort.as_str().to_owned(),
                    tables::fmt_opt(r.accuracy_lower, 1),
                    tables::fmt_opt(r.accuracy_high, 1),
                    tables::fmt_opt(r.accuracy_gain, 1),
                    tables::fmt_opt(r.latency_lower, 1),
                    tables::fmt_opt(r.latency_high, 1),
                    tables::fmt_opt(r.reasoning_tokens_lower, 0),
                    tables::fmt_opt(r.reasoning_tokens_high, 0),
                ]
            },
        )?);
    }
    let with_tokens = reasoning_models(summary);
    if !with_tokens.is_empty() {
        let rows: Vec<&RuleRow> = summary
            .rows
            .iter()
            .filter(|r| with_tokens.contains(&r.model))
            .collect();
        written.extend(tables::write_table(
            &reasoning_frame(&rows)?,
            dir,
            "ifscale_reasoning_tokens",
        )?);
        let table = tables::MdTable {
            name: "ifscale_reasoning_tokens",
            caption: "Reasoning tokens vs N (mean over scored samples that report them) beside the visible output \
                      tokens; the two are never summed.",
            header: &[
                "model",
                "N",
                "accuracy",
                "reasoning tokens",
                "visible output tokens",
                "latency (s)",
            ],
        };
        written.extend(table.write_rows(
            dir,
            &rows,
            |r| shown.contains(&r.num_rules),
            |r| {
                vec![
                    r.model.clone(),
                    r.num_rules.to_string(),
                    tables::fmt_opt(r.accuracy, 1),
                    tables::fmt_opt(r.reasoning_tokens, 0),
                    tables::fmt_opt(r.output_tokens, 0),
                    tables::fmt_opt(r.latency, 1),
                ]
            },
        )?);
    }
    Ok(written)
}
