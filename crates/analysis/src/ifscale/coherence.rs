//! Coherence over every judged generation attempt (the paper's core-task analysis, Appendix B.4), from the attempts
//! logs (`schema::ifscale::AttemptLog`), next to the accepted-only view.
//!
//! Per (model, N): attempts made, attempts the judge scored, samples (distinct prompt ids) and accepted samples,
//! mean coherence over all judged attempts, the share of judged attempts below the threshold (6 in the paper),
//! attempts per accepted sample, mean output tokens of the judged attempts, and, labelled "accepted only", the mean
//! coherence of the judged attempts that were accepted. An attempt is one generation request: a truncated reply and
//! a failed request each use one. N and the seed come from the prompt id (`ifscale-n{N}-s{seed}`).
//! Output tokens are the attempt's visible output tokens; reasoning tokens are not part of them.
//! With a checked coherence judge, [`write_corrected`] gives the accepted share corrected for its measured errors.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use polars::prelude::*;
use schema::ifscale::AttemptLog;
use serde::Serialize;

use crate::Error;
use crate::tables;

/// The paper's threshold: a coherence score below 6 is not a plausible business report.
pub const PAPER_THRESHOLD: u8 = 6;

/// Settings for [`aggregate`].
#[derive(Debug, Clone, Serialize)]
pub struct CoherenceConfig {
    /// Scores below this count as incoherent.
    pub threshold: u8,
}

/// One (model, N) row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CoherenceRow {
    pub model: String,
    pub num_rules: i64,
    pub attempts: i64,
    /// Attempts with a coherence score.
    pub judged: i64,
    pub samples: i64,
    pub accepted_samples: i64,
    /// Mean coherence over every judged attempt, accepted or not.
    pub mean_all: Option<f64>,
    /// Share (%) of judged attempts scored below the threshold.
    pub below_threshold_pct: Option<f64>,
    /// Attempts ÷ accepted samples (None when nothing was accepted).
    pub attempts_per_accepted: Option<f64>,
    /// Mean visible output tokens of the judged attempts that report them.
    pub mean_output_tokens: Option<f64>,
    /// Accepted only: mean coherence of the accepted attempts that were judged.
    pub mean_accepted_only: Option<f64>,
}

/// Reads attempts-log JSONL files.
pub fn load_attempts(paths: &[PathBuf]) -> Result<Vec<AttemptLog>, Error> {
    Ok(schema::read_jsonl_files(paths)?)
}

/// `(N, seed)` from a prompt id `ifscale-n{N}-s{seed}` (the form `prompt-gen` writes).
pub fn parse_prompt_id(id: &str) -> Option<(u32, u64)> {
    let rest = id.strip_prefix("ifscale-n")?;
    let (n, seed) = rest.split_once("-s")?;
    Some((n.parse().ok()?, seed.parse().ok()?))
}

fn mean(xs: &[f64]) -> Option<f64> {
    crate::stats::mean(xs)
}

/// Aggregates attempts per (model, N), sorted by model then N. Attempts whose id does not carry N are an error that
/// names the id.
pub fn aggregate(
    attempts: &[AttemptLog],
    cfg: &CoherenceConfig,
) -> Result<Vec<CoherenceRow>, Error> {
    #[derive(Default)]
    struct Acc<'a> {
        attempts: i64,
        scores: Vec<f64>,
        accepted_scores: Vec<f64>,
        tokens: Vec<f64>,
        ids: BTreeSet<&'a str>,
        accepted_ids: BTreeSet<&'a str>,
    }
    let mut groups: BTreeMap<(&str, i64), Acc<'_>> = BTreeMap::new();
    for a in attempts {
        let (n, _) = parse_prompt_id(&a.id).ok_or_else(|| {
            Error::Empty(format!(
                "attempt of {} has id `{}`, which does not name N (ifscale-n<N>-s<seed>)",
                a.model, a.id
            ))
        })?;
        let g = groups.entry((a.model.as_str(), i64::from(n))).or_default();
        g.attempts += 1;
        g.ids.insert(a.id.as_str());
        if a.accepted {
            g.accepted_ids.insert(a.id.as_str());
        }
        if let Some(c) = a.coherence {
            g.scores.push(f64::from(c));
            if a.accepted {
                g.accepted_scores.push(f64::from(c));
            }
            if let Some(t) = a.output_tokens {
                g.tokens.push(t as f64);
            }
        }
    }
    Ok(groups
        .into_iter()
        .map(|((model, n), g)| {
            let below = g
                .scores
                .iter()
                .filter(|&&s| s < f64::from(cfg.threshold))
                .count();
            let accepted = g.accepted_ids.len() as i64;
            CoherenceRow {
                model: model.to_owned(),
                num_rules: n,
                attempts: g.attempts,
                judged: g.scores.len() as i64,
                samples: g.ids.len() as i64,
                accepted_samples: accepted,
                mean_all: mean(&g.scores),
                below_threshold_pct: (!g.scores.is_empty())
                    .then(|| below as f64 / g.scores.len() as f64 * 100.0),
                attempts_per_accepted: (accepted > 0).then(|| g.attempts as f64 / accepted as f64),
                mean_output_tokens: mean(&g.tokens),
                mean_accepted_only: mean(&g.accepted_scores),
            }
        })
        .collect())
}

/// The coherence table as a frame.
pub fn coherence_frame(rows: &[CoherenceRow]) -> Result<DataFrame, Error> {
    let f = |g: &dyn Fn(&CoherenceRow) -> Option<f64>| rows.iter().map(g).collect::<Vec<_>>();
    let i = |g: &dyn Fn(&CoherenceRow) -> i64| rows.iter().map(g).collect::<Vec<_>>();
    let columns = vec![
        Column::new(
            "model".into(),
            rows.iter().map(|r| r.model.as_str()).collect::<Vec<_>>(),
        ),
        Column::new("num_rules".into(), i(&|r| r.num_rules)),
        Column::new("attempts".into(), i(&|r| r.attempts)),
        Column::new("judged".into(), i(&|r| r.judged)),
        Column::new("samples".into(), i(&|r| r.samples)),
        Column::new("accepted_samples".into(), i(&|r| r.accepted_samples)),
        Column::new("coherence_all_attempts".into(), f(&|r| r.mean_all)),
        Column::new("below_threshold_pct".into(), f(&|r| r.below_threshold_pct)),
        Column::new(
            "attempts_per_accepted".into(),
            f(&|r| r.attempts_per_accepted),
        ),
        Column::new("output_tokens".into(), f(&|r| r.mean_output_tokens)),
        Column::new(
            "coherence_accepted_only".into(),
            f(&|r| r.mean_accepted_only),
        ),
    ];
    DataFrame::new(rows.len(), columns).map_err(Error::polars("building the coherence table"))
}

/// Writes `ifscale_coherence_attempts` (Parquet, CSV; Markdown at the headline densities).
pub fn write_tables(
    rows: &[CoherenceRow],
    cfg: &CoherenceConfig,
    dir: &Path,
) -> Result<Vec<PathBuf>, Error> {
    let mut written =
        tables::write_table(&coherence_frame(rows)?, dir, "ifscale_coherence_attempts")?;
    let ns: Vec<i64> = rows.iter().map(|r| r.num_rules).collect();
    let shown = super::results::headline_ns(&ns);
    let md: Vec<Vec<String>> = rows
        .iter()
        .filter(|r| shown.contains(&r.num_rules))
        .map(|r| {
            vec![
                r.model.clone(),
                r.num_rules.to_string(),
                r.attempts.to_string(),
                r.judged.to_string(),
                format!("{}/{}", r.accepted_samples, r.samples),
                tables::fmt_opt(r.mean_all, 2),
                tables::fmt_opt(r.below_threshold_pct, 1),
                tables::fmt_opt(r.attempts_per_accepted, 2),
                tables::fmt_opt(r.mean_output_tokens, 0),
                tables::fmt_opt(r.mean_accepted_only, 2),
            ]
        })
        .collect();
    let below = format!("% below {}", cfg.threshold);
    written.extend(tables::write_markdown(
        dir,
        "ifscale_coherence_attempts",
        "Coherence over all judged attempts, accepted or not (an attempt is one generation request; a truncated reply \
         and a failed request each use one), with the accepted-only mean beside it. Output tokens: mean visible output \
         tokens of the judged attempts (reasoning tokens excluded).",
        &[
            "model",
            "N",
            "attempts",
            "judged",
            "accepted/samples",
            "coherence (all attempts)",
            &below,
            "attempts per accepted",
            "output tokens",
            "coherence (accepted only)",
        ],
        &md,
    )?);
    Ok(written)
}

/// The name of the coherence-accepted share corrected for the coherence judge, under `tables/ifscale/`.
pub const CORRECTED_TABLE: &str = "ifscale_coherence_judge_corrected";

/// The share of judged attempts the coherence judge accepted (scored at or above the threshold) per (model, N),
/// raw and corrected for the judge's measured errors (`crate::judge_correction`: every attempt was decided by the
/// judge, none by a pre-judge; attempts taken as independent), as Markdown and data.
pub fn write_corrected(
    rows: &[CoherenceRow],
    cfg: &CoherenceConfig,
    judge: &str,
    cal: &crate::judge_correction::Calibration,
    dir: &Path,
) -> Result<Vec<PathBuf>, Error> {
    use crate::judge_correction::{Count, correct};
    let md: Vec<Vec<String>> = rows
        .iter()
        .filter_map(|r| {
            let judged = u64::try_from(r.judged).ok()?;
            let below = (r.below_threshold_pct? / 100.0 * judged as f64).round() as u64;
            let c = correct(
                Count::default(),
                Count::new(judged - below, judged),
                cal,
                1.0,
            )?;
            Some(vec![
                r.model.clone(),
                r.num_rules.to_string(),
                judged.to_string(),
                format!("{:.1}", 100.0 * c.raw),
                c.describe(),
            ])
        })
        .collect();
    let (se, sp) = (cal.sensitivity, cal.specificity);
    let caption = format!(
        "Share of judged attempts the coherence judge `{judge}` accepted (score ≥ {}), raw and corrected for its \
         measured errors (Rogan–Gladen with its control reports: sensitivity {}/{}, specificity {}/{}; 95 % \
         delta-method interval over the attempts and the control reports, clipped to [0, 100])",
        cfg.threshold, se.k, se.n, sp.k, sp.n
    );
    tables::write_markdown(
        dir,
        CORRECTED_TABLE,
        &caption,
        &[
            "model",
            "N",
            "judged attempts",
            "accepted, raw (%)",
            "accepted, judge-corrected (%) [95 % interval]",
        ],
        &md,
    )
}
