//! Δ per model: the paper's relative drop Δ = (A_linear − A_jumping) ÷ A_linear × 100 (Table 2, §5.1.3), and beside
//! it the absolute gaps in percentage points that the paper's prose quotes ("surpasses 12 percentage points …
//! often exceeds 30"): linear − jumping and baseline − jumping mean accuracy.
//!
//! Where a structure has unjudged answers its mean accuracy is only known as a range (unjudged counted wrong …
//! unjudged counted right); each quantity then has no single value, only the smallest and largest value the two
//! ranges allow.

use polars::prelude::*;
use serde::Serialize;

use super::StructureStats;
use crate::Error;

/// Δ and the percentage-point gaps for one model (accuracies in percent).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Delta {
    pub model: String,
    pub baseline: Option<f64>,
    pub linear: Option<f64>,
    pub jumping: Option<f64>,
    /// None when either structure has unjudged answers (then only the bounds are known) or A_linear is 0.
    pub delta: Option<f64>,
    /// The smallest and largest Δ the accuracy bounds allow (equal to `delta` when every answer was judged).
    pub delta_lower: Option<f64>,
    pub delta_upper: Option<f64>,
    /// A_linear − A_jumping in percentage points; None when either structure has unjudged answers.
    pub linear_minus_jumping_pp: Option<f64>,
    /// The smallest and largest linear − jumping gap the accuracy bounds allow.
    pub linear_minus_jumping_pp_lower: Option<f64>,
    pub linear_minus_jumping_pp_upper: Option<f64>,
    /// A_baseline − A_jumping in percentage points; None when either structure has unjudged answers.
    pub baseline_minus_jumping_pp: Option<f64>,
    /// The smallest and largest baseline − jumping gap the accuracy bounds allow.
    pub baseline_minus_jumping_pp_lower: Option<f64>,
    pub baseline_minus_jumping_pp_upper: Option<f64>,
}

/// A − B in percentage points with its bounds: (point, lower, upper). The point needs both rows fully judged; the
/// bounds are A's lower − B's upper and A's upper − B's lower (equal to the point when both are fully judged).
pub(crate) fn gap_pp(
    a: Option<&StructureStats>,
    b: Option<&StructureStats>,
) -> (Option<f64>, Option<f64>, Option<f64>) {
    let (Some(a), Some(b)) = (a, b) else {
        return (None, None, None);
    };
    let diff = |x: Option<f64>, y: Option<f64>| Some(x? - y?);
    if a.unjudged == 0 && b.unjudged == 0 {
        let point = diff(a.mean, b.mean);
        return (point, point, point);
    }
    (
        None,
        diff(a.mean_lower, b.mean_upper),
        diff(a.mean_upper, b.mean_lower),
    )
}

/// Δ and the gaps for each model, from Table 2's rows.
pub(crate) fn deltas(models: &[String], table2: &[StructureStats]) -> Vec<Delta> {
    models
        .iter()
        .map(|m| {
            let get = |s: &str| table2.iter().find(|r| &r.model == m && r.structure == s);
            let (base, lin, jump) = (get("baseline"), get("linear"), get("jumping"));
            let all_judged = [lin, jump]
                .iter()
                .all(|r| r.is_none_or(|r| r.unjudged == 0));
            let mean = |r: Option<&StructureStats>| r.and_then(|r| r.mean);
            let relative = |l: Option<f64>, j: Option<f64>| match (l, j) {
                (Some(l), Some(j)) if l != 0.0 => Some((l - j) / l * 100.0),
                _ => None,
            };
            let delta = if all_judged {
                relative(mean(lin), mean(jump))
            } else {
                None
            };
            // Δ = (1 − J/L) × 100 is smallest with J high and L low, largest with J low and L high.
            let (delta_lower, delta_upper) = if all_judged {
                (delta, delta)
            } else {
                (
                    relative(
                        lin.and_then(|r| r.mean_lower),
                        jump.and_then(|r| r.mean_upper),
                    ),
                    relative(
                        lin.and_then(|r| r.mean_upper),
                        jump.and_then(|r| r.mean_lower),
                    ),
                )
            };
            let (lj, lj_lo, lj_hi) = gap_pp(lin, jump);
            let (bj, bj_lo, bj_hi) = gap_pp(base, jump);
            Delta {
                model: m.clone(),
                baseline: mean(base),
                linear: mean(lin),
                jumping: mean(jump),
                delta,
                delta_lower,
                delta_upper,
                linear_minus_jumping_pp: lj,
                linear_minus_jumping_pp_lower: lj_lo,
                linear_minus_jumping_pp_upper: lj_hi,
                baseline_minus_jumping_pp: bj,
                baseline_minus_jumping_pp_lower: bj_lo,
                baseline_minus_jumping_pp_upper: bj_hi,
            }
        })
        .collect()
}

/// The `rift_delta` frame: one row per model, the columns of [`Delta`].
pub(crate) fn frame(deltas: &[Delta]) -> Result<DataFrame, Error> {
    let f = |name: &str, get: fn(&Delta) -> Option<f64>| {
        Column::new(name.into(), deltas.iter().map(get).collect::<Vec<_>>())
    };
    DataFrame::new(
        deltas.len(),
        vec![
            Column::new(
                "model".into(),
                deltas.iter().map(|d| d.model.as_str()).collect::<Vec<_>>(),
            ),
            f("baseline", |d| d.baseline),
            f("linear", |d| d.linear),
            f("jumping", |d| d.jumping),
            f("delta", |d| d.delta),
            f("delta_lower", |d| d.delta_lower),
            f("delta_upper", |d| d.delta_upper),
            f("linear_minus_jumping_pp", |d| d.linear_minus_jumping_pp),
            f("linear_minus_jumping_pp_lower", |d| {
                d.linear_minus_jumping_pp_lower
            }),
            f("linear_minus_jumping_pp_upper", |d| {
                d.linear_minus_jumping_pp_upper
            }),
            f("baseline_minus_jumping_pp", |d| d.baseline_minus_jumping_pp),
            f("baseline_minus_jumping_pp_lower", |d| {
                d.baseline_minus_jumping_pp_lower
            }),
            f("baseline_minus_jumping_pp_upper", |d| {
                d.baseline_minus_jumping_pp_upper
            }),
        ],
    )
    .map_err(Error::polars("RIFT delta table"))
}
