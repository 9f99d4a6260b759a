//! Reasoning vs non-reasoning models on RIFT (the paper's §5.1.1: "reasoning variants consistently outperform their
//! non-reasoning counterparts …, including cases where small reasoning models surpass substantially larger
//! non-reasoning models (e.g., Qwen3-4B-Th vs. Qwen3-30B-It)").
//!
//! Per structure, every reasoning model beside every non-reasoning model, by [`ReasoningRule`]: all pairs rather
//! than same-family twins, because the paper's comparisons cross sizes and a family prefix cannot be read reliably
//! from model names. Each side is Table 2's mean accuracy; the gap is reasoning − non-reasoning in percentage
//! points, with bounds where unjudged answers make a mean a range (see [`super::delta`]).

use std::path::{Path, PathBuf};

use polars::prelude::*;
use serde::Serialize;

use super::{STRUCTURES, StructureStats, fmt_bounds};
use crate::Error;
use crate::models::ReasoningRule;
use crate::tables;

/// One (structure, reasoning model, non-reasoning model) row (accuracies in percent).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReasoningPair {
    pub structure: String,
    pub reasoning_model: String,
    /// Table 2's judged mean accuracy of the reasoning model, and its bounds.
    pub reasoning_mean: Option<f64>,
    pub reasoning_lower: Option<f64>,
    pub reasoning_upper: Option<f64>,
    /// Unjudged answers behind the reasoning model's mean.
    pub reasoning_unjudged: i64,
    pub instruct_model: String,
    pub instruct_mean: Option<f64>,
    pub instruct_lower: Option<f64>,
    pub instruct_upper: Option<f64>,
    pub instruct_unjudged: i64,
    /// Reasoning − non-reasoning mean accuracy in percentage points; None when either side has unjudged answers.
    pub gap_pp: Option<f64>,
    /// The smallest and largest gap the accuracy bounds allow (equal to `gap_pp` when every answer was judged).
    pub gap_pp_lower: Option<f64>,
    pub gap_pp_upper: Option<f64>,
}

/// The pairs, ordered by structure (baseline, linear, jumping), then reasoning model, then non-reasoning model.
/// A pair is listed for a structure only when both models have prompts of it.
pub fn reasoning_vs_instruct(
    table2: &[StructureStats],
    rule: &ReasoningRule,
) -> Vec<ReasoningPair> {
    let mut out = Vec::new();
    for structure in STRUCTURES {
        let mut rows: Vec<&StructureStats> =
            table2.iter().filter(|r| r.structure == structure).collect();
        rows.sort_by(|a, b| a.model.cmp(&b.model));
        let (reasoning, instruct): (Vec<_>, Vec<_>) =
            rows.into_iter().partition(|r| rule.is_reasoning(&r.model));
        for r in &reasoning {
            for i in &instruct {
                let (gap_pp, gap_pp_lower, gap_pp_upper) = super::delta::gap_pp(Some(r), Some(i));
                out.push(ReasoningPair {
                    structure: structure.to_owned(),
                    reasoning_model: r.model.clone(),
                    reasoning_mean: r.mean,
                    reasoning_lower: r.mean_lower,
                    reasoning_upper: r.mean_upper,
                    reasoning_unjudged: r.unjudged,
                    instruct_model: i.model.clone(),
                    instruct_mean: i.mean,
                    instruct_lower: i.mean_lower,
                    instruct_upper: i.mean_upper,
                    instruct_unjudged: i.unjudged,
                    gap_pp,
                    gap_pp_lower,
                    gap_pp_upper,
                });
            }
        }
    }
    out
}

/// The `rift_reasoning_vs_instruct` frame: the columns of [`ReasoningPair`].
pub(crate) fn frame(pairs: &[ReasoningPair]) -> Result<DataFrame, Error> {
    let s = |name: &str, get: fn(&ReasoningPair) -> &str| {
        Column::new(name.into(), pairs.iter().map(get).collect::<Vec<_>>())
    };
    let f = |name: &str, get: fn(&ReasoningPair) -> Option<f64>| {
        Column::new(name.into(), pairs.iter().map(get).collect::<Vec<_>>())
    };
    let i = |name: &str, get: fn(&ReasoningPair) -> i64| {
        Column::new(name.into(), pairs.iter().map(get).collect::<Vec<_>>())
    };
    DataFrame::new(
        pairs.len(),
        vec![
            s("structure", |p| &p.structure),
            s("reasoning_model", |p| &p.reasoning_model),
            f("reasoning_mean", |p| p.reasoning_mean),
            f("reasoning_lower", |p| p.reasoning_lower),
            f("reasoning_upper", |p| p.reasoning_upper),
            i("reasoning_unjudged", |p| p.reasoning_unjudged),
            s("instruct_model", |p| &p.instruct_model),
            f("instruct_mean", |p| p.instruct_mean),
            f("instruct_lower", |p| p.instruct_lower),
            f("instruct_upper", |p| p.instruct_upper),
            i("instruct_unjudged", |p| p.instruct_unjudged),
            f("gap_pp", |p| p.gap_pp),
            f("gap_pp_lower", |p| p.gap_pp_lower),
            f("gap_pp_upper", |p| p.gap_pp_upper),
        ],
    )
    .map_err(Error::polars("RIFT reasoning vs instruct table"))
}

/// A mean cell: the mean, or its bounds where answers are unjudged.
fn mean_cell(mean: Option<f64>, lower: Option<f64>, upper: Option<f64>, unjudged: i64) -> String {
    if unjudged > 0 {
        fmt_bounds(lower, upper, 2)
    } else {
        tables::fmt_opt(mean, 2)
    }
}

/// Writes `rift_reasoning_vs_instruct.md` (and its `.table.json`) when there is at least one pair (the Parquet and CSV are written with
/// the other frames).
pub(crate) fn write_markdown(pairs: &[ReasoningPair], dir: &Path) -> Result<Vec<PathBuf>, Error> {
    if pairs.is_empty() {
        return Ok(Vec::new());
    }
    let rows: Vec<Vec<String>> = pairs
        .iter()
        .map(|p| {
            let gap = match p.gap_pp {
                Some(g) => format!("{g:+.1}"),
                None => fmt_bounds(p.gap_pp_lower, p.gap_pp_upper, 1),
            };
            vec![
                p.structure.clone(),
                p.reasoning_model.clone(),
                mean_cell(
                    p.reasoning_mean,
                    p.reasoning_lower,
                    p.reasoning_upper,
                    p.reasoning_unjudged,
                ),
                p.instruct_model.clone(),
                mean_cell(
                    p.instruct_mean,
                    p.instruct_lower,
                    p.instruct_upper,
                    p.instruct_unjudged,
                ),
                gap,
            ]
        })
        .collect();
    tables::write_markdown(
        dir,
        "rift_reasoning_vs_instruct",
        "Reasoning vs non-reasoning models: per structure, the mean accuracy (%) of every reasoning model beside every non-reasoning model (all pairs, not only same-family twins: the paper's comparisons also cross sizes, e.g. Qwen3-4B-Thinking vs Qwen3-30B-Instruct). Gap = reasoning − non-reasoning in percentage points. Where a model has unjudged answers its mean shows bounds (unjudged counted wrong … unjudged counted right), and so does the gap.",
        &[
            "Structure",
            "Reasoning model",
            "Reasoning mean (%)",
            "Non-reasoning model",
            "Non-reasoning mean (%)",
            "Gap (pp)",
        ],
        &rows,
    )
}
