//! RIFT aggregation: Table 2 (mean ± SE and median accuracy per model × structure), Δ and the percentage-point gaps
//! ([`Delta`]), accuracy by prompt tokens and by depth, the wrong-question share of incorrect answers, reply-outcome
//! counts, and reasoning vs non-reasoning models ([`ReasoningPair`]).
//!
//! Two canonical frames feed it:
//! - the answer table ([`ANSWER_COLUMNS`]): one row per expected answer, `correct`/`incorrect`/`unjudged` booleans
//!   (none = missing), `wrong_question` (an incorrect answer that is another question's answer) and
//!   `wrong_question_correct` (a flagged answer judged correct, counted apart from the paper's share); it can be 18.6 M
//!   rows, so it is queried lazily with the streaming engine (from Parquet via [`scan_answers_parquet`]), grouped by
//!   its integer codes `group` and `prompt`, one pass of the engine for per-prompt sums, sums by depth and the
//!   labels (the model, structure and prompt strings, decoded for each prompt's depth-0 row only);
//! - the prompt table ([`PROMPT_COLUMNS`]): one row per prompt with its token count and reply outcome.
//!
//! Prompt accuracy is `correct ÷ (num_questions − unjudged) × 100` (missing answers count as wrong; unjudged ones,
//! which nobody settled, are neither right nor wrong and leave the denominator), computed here rather than trusted
//! from the record. Beside it go the bounds `correct ÷ num_questions` (every unjudged answer wrong) and
//! `(correct + unjudged) ÷ num_questions` (every unjudged answer right), and the unjudged count; without unjudged
//! answers all three are the same number.

use std::collections::BTreeMap;

use polars::prelude::*;
use serde::Serialize;

mod answers;
mod clustered;
pub mod corrected;
pub mod corrected_wrong;
mod delta;
mod frames;
mod markdown;
pub mod published;
mod reasoning;
pub mod values;
mod wrong;

pub use answers::{AnswerAggregates, aggregate_answers};
pub use delta::Delta;
pub(crate) use frames::prompt_key;
pub use frames::{
    ANSWER_COLUMNS, AnswerCodes, PROMPT_COLUMNS, answer_schema, answers_frame,
    concat_answer_tables, load_run, prompts_frame, scan_answers_parquet, write_answer_tables,
};
pub use markdown::{fmt_bounds, write_tables};
pub use reasoning::{ReasoningPair, reasoning_vs_instruct};
pub use wrong::POOLED;
pub(crate) use wrong::WQ_SUMS;
use wrong::{pooled_wrong_question, wrong_question_rows};

use crate::Error;
use crate::models::ReasoningRule;
use crate::tables::{f64_col, i64_col, str_col};

/// The structures in table order.
pub const STRUCTURES: [&str; 3] = ["baseline", "linear", "jumping"];

pub fn structure_name(s: schema::rift::Structure) -> &'static str {
    match s {
        schema::rift::Structure::Baseline => "baseline",
        schema::rift::Structure::Linear => "linear",
        schema::rift::Structure::Jumping => "jumping",
    }
}

/// Aggregates records held in memory (one model's scores, say) exactly as [`aggregate`] does a run's files.
pub fn aggregate_records(
    answers: &[schema::rift::AnswerScore],
    prompts: &[schema::rift::PromptScore],
    cfg: &RiftConfig,
) -> Result<RiftSummary, Error> {
    let prompts = prompts_frame(prompts)?;
    aggregate(answers_frame(answers)?.lazy(), Some(&prompts), cfg)
}

/// One row of Table 2 (accuracies in percent).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StructureStats {
    pub model: String,
    pub structure: String,
    pub n_prompts: i64,
    /// Mean of the prompts' judged accuracy (unjudged answers left out of each prompt's denominator; a prompt with
    /// every answer unjudged has none and is left out).
    pub mean: Option<f64>,
    pub se: Option<f64>,
    pub median: Option<f64>,
    /// Expected answers over the prompts.
    pub answers: i64,
    /// Of those, unjudged (neither correct nor incorrect).
    pub unjudged: i64,
    /// Mean accuracy with every unjudged answer counted wrong (settled-correct share).
    pub mean_lower: Option<f64>,
    /// Mean accuracy with every unjudged answer counted right (settled-correct plus unjudged share).
    pub mean_upper: Option<f64>,
    pub median_lower: Option<f64>,
    pub median_upper: Option<f64>,
    /// Answer-level accuracy: correct ÷ settled answers over every prompt (percent).
    pub answer_accuracy: Option<f64>,
    /// Its standard error clustered by prompt (percentage points).
    pub answer_se_clustered: Option<f64>,
    /// Clustered variance ÷ the variance if the answers were independent.
    pub answer_design_effect: Option<f64>,
}

impl StructureStats {
    /// Unjudged answers as a fraction of the expected answers (0 when there are none).
    pub fn unjudged_share(&self) -> f64 {
        if self.answers > 0 {
            self.unjudged as f64 / self.answers as f64
        } else {
            0.0
        }
    }
}

/// A point of a per-model curve (token bin or depth).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CurvePoint {
    pub model: String,
    pub structure: String,
    pub x: f64,
    pub n: i64,
    /// Judged accuracy (unjudged answers left out of the denominator).
    pub accuracy: f64,
    /// Unjudged answers behind the point (left out of `accuracy`).
    pub unjudged: i64,
}

/// Wrong-question share of incorrect answers per model × structure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WrongQuestion {
    pub model: String,
    pub structure: String,
    pub incorrect: i64,
    pub wrong_question: i64,
    /// Answers flagged as another question's answer that were judged correct (outside the share): a lenient
    /// judge, or an answer right for both questions.
    pub wrong_question_correct: i64,
    /// Unjudged answers: not incorrect, so outside this share's denominator; counted here to show it.
    pub unjudged: i64,
    /// Percent of incorrect answers that are another question's answer (None when there are no incorrect answers).
    pub share: Option<f64>,
    /// The share's standard error clustered by prompt (percentage points).
    pub share_se_clustered: Option<f64>,
    /// Clustered variance ÷ the variance if the incorrect answers were independent.
    pub share_design_effect: Option<f64>,
}

/// Reply-outcome counts per model × structure (needs the prompt table).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OutcomeCounts {
    pub model: String,
    pub structure: String,
    pub prompts: i64,
    pub empty: i64,
    pub truncated: i64,
    /// Text came back but no answer could be read from it.
    pub malformed: i64,
    pub failed: i64,
    pub stopped_early: i64,
    pub ran_long: i64,
}

/// Settings for [`aggregate`].
#[derive(Debug, Clone, Default, Serialize)]
pub struct RiftConfig {
    /// Token-bin width; `None` picks a round width giving at most 20 bins over the largest prompt.
    pub token_bin_width: Option<u64>,
    /// Which models are reasoning models, for the reasoning-vs-instruct table.
    #[serde(skip)]
    pub reasoning: ReasoningRule,
}

/// Everything the RIFT tables and figures need.
#[derive(Debug, Clone, Serialize)]
pub struct RiftSummary {
    pub models: Vec<String>,
    pub table2: Vec<StructureStats>,
    pub deltas: Vec<Delta>,
    pub by_depth: Vec<CurvePoint>,
    pub by_tokens: Vec<CurvePoint>,
    pub token_bin_width: Option<u64>,
    pub wrong_question: Vec<WrongQuestion>,
    /// Per model, the wrong-question share with linear and jumping pooled (the paper's Fig. 4 gives one share per
    /// model); structure "pooled". Baseline prompts hold one question, so no other question to answer: left out.
    pub wrong_question_pooled: Vec<WrongQuestion>,
    /// Accuracy by clue value band and the linear/jumping value-mix check ([`values`]).
    pub values: values::ValueTables,
    pub outcomes: Vec<OutcomeCounts>,
    /// Per structure, each reasoning model beside each non-reasoning model ([`reasoning_vs_instruct`]).
    pub reasoning_vs_instruct: Vec<ReasoningPair>,
    /// Where Table 2 came from: "prompt-scores" or "answer-scores".
    pub table2_source: String,
    #[serde(skip)]
    pub frames: BTreeMap<String, DataFrame>,
}

fn sort_opts() -> SortMultipleOptions {
    SortMultipleOptions::default().with_maintain_order(true)
}

/// `accuracy` (judged: correct ÷ (n − unjudged), null when nothing was judged), `accuracy_lower` (correct ÷ n) and
/// `accuracy_upper` ((correct + unjudged) ÷ n), in percent, from the integer columns `correct`, `unjudged` and `n`.
fn accuracies(n: &str) -> [Expr; 3] {
    let f = |c: &str| col(c).cast(DataType::Float64);
    let judged = f(n) - f("unjudged");
    let share = |num: Expr, den: Expr| {
        when(den.clone().gt(lit(0.0)))
            .then(num / den * lit(100.0))
            .otherwise(lit(NULL).cast(DataType::Float64))
    };
    [
        share(f("correct"), judged).alias("accuracy"),
        share(f("correct"), f(n)).alias("accuracy_lower"),
        share(f("correct") + f("unjudged"), f(n)).alias("accuracy_upper"),
    ]
}

/// The columns of the Table 2 frame, in order.
const TABLE2_COLUMNS: [&str; 15] = [
    "model",
    "structure",
    "n_prompts",
    "mean",
    "se",
    "median",
    "answers",
    "unjudged",
    "mean_lower",
    "mean_upper",
    "median_lower",
    "median_upper",
    "answer_accuracy",
    "answer_se_clustered",
    "answer_design_effect",
];

/// Table 2 statistics from per-prompt rows (`model`, `structure`, `n` answers, `correct`, `unjudged`, and the three
/// accuracy columns of [`accuracies`], in percent); beside them the answer-level accuracy (correct ÷ settled answers
/// over all prompts) with its standard error clustered by prompt and the design effect ([`clustered`]).
fn table2_frame(per_prompt: LazyFrame) -> Result<DataFrame, Error> {
    let mut aggs = vec![
        len().cast(DataType::Int64).alias("n_prompts"),
        col("accuracy").mean().alias("mean"),
        (col("accuracy").std(1) / col("accuracy").count().cast(DataType::Float64).sqrt())
            .alias("se"),
        col("accuracy").median().alias("median"),
        col("n").cast(DataType::Int64).sum().alias("answers"),
        col("unjudged")
            .cast(DataType::Int64)
            .sum()
            .alias("unjudged"),
        col("accuracy_lower").mean().alias("mean_lower"),
        col("accuracy_upper").mean().alias("mean_upper"),
        col("accuracy_lower").median().alias("median_lower"),
        col("accuracy_upper").median().alias("median_upper"),
    ];
    aggs.extend(clustered::sums(
        col("correct"),
        col("n").cast(DataType::Int64) - col("unjudged").cast(DataType::Int64),
        "ans",
    ));
    per_prompt
        .group_by([col("model"), col("structure")])
        .agg(aggs)
        .with_column(
            when(col("ans_m").gt(lit(0.0)))
                .then(col("ans_y") / col("ans_m") * lit(100.0))
                .otherwise(lit(NULL).cast(DataType::Float64))
                .alias("answer_accuracy"),
        )
        .with_columns(clustered::se_and_deff(
            "ans",
            "answer_se_clustered",
            "answer_design_effect",
        ))
        .select(TABLE2_COLUMNS.map(col))
        .sort(["model", "structure"], sort_opts())
        .collect()
        .map_err(Error::polars("RIFT Table 2"))
}

fn nice_width(max_tokens: u64) -> u64 {
    let candidates = [
        50u64, 100, 200, 250, 500, 1000, 2000, 2500, 5000, 10_000, 20_000, 25_000, 50_000, 100_000,
    ];
    for w in candidates {
        if max_tokens / w < 20 {
            return w;
        }
    }
    max_tokens.div_ceil(20).max(1)
}

/// Aggregates a RIFT run: the answer table (lazy) and, when present, the prompt table.
pub fn aggregate(
    answers: LazyFrame,
    prompts: Option<&DataFrame>,
    cfg: &RiftConfig,
) -> Result<RiftSummary, Error> {
    let mut answers = answers;
    let has_values = answers
        .collect_schema()
        .map_err(Error::polars("RIFT answer table"))?
        .contains("value_normalized");
    let agg = aggregate_answers(answers.clone())?;
    let mut frames = BTreeMap::new();
    let values = if has_values {
        values::value_tables(answers, &agg.per_prompt)?
    } else {
        tracing::warn!(
            "The RIFT answer table has no value_normalized column (written by an older version); the value-band tables are left out."
        );
        values::ValueTables::default()
    };

    let (table2_df, table2_source) = match prompts {
        Some(p) if p.height() > 0 => (
            table2_frame(
                p.clone()
                    .lazy()
                    .with_column(col("num_questions").alias("n"))
                    .with_columns(accuracies("n")),
            )?,
            "prompt-scores",
        ),
        _ => (agg.table2.clone(), "answer-scores"),
    };
    let table2 = {
        let (m, s, n) = (
            str_col(&table2_df, "model")?,
            str_col(&table2_df, "structure")?,
            i64_col(&table2_df, "n_prompts")?,
        );
        let (mean, se, median) = (
            f64_col(&table2_df, "mean")?,
            f64_col(&table2_df, "se")?,
            f64_col(&table2_df, "median")?,
        );
        let (answers, unjudged) = (
            i64_col(&table2_df, "answers")?,
            i64_col(&table2_df, "unjudged")?,
        );
        let (lo, hi, med_lo, med_hi) = (
            f64_col(&table2_df, "mean_lower")?,
            f64_col(&table2_df, "mean_upper")?,
            f64_col(&table2_df, "median_lower")?,
            f64_col(&table2_df, "median_upper")?,
        );
        let (ans_acc, ans_se, ans_deff) = (
            f64_col(&table2_df, "answer_accuracy")?,
            f64_col(&table2_df, "answer_se_clustered")?,
            f64_col(&table2_df, "answer_design_effect")?,
        );
        (0..table2_df.height())
            .map(|i| StructureStats {
                model: m[i].clone(),
                structure: s[i].clone(),
                n_prompts: n[i].unwrap_or_default(),
                mean: mean[i],
                se: se[i],
                median: median[i],
                answers: answers[i].unwrap_or_default(),
                unjudged: unjudged[i].unwrap_or_default(),
                mean_lower: lo[i],
                mean_upper: hi[i],
                median_lower: med_lo[i],
                median_upper: med_hi[i],
                answer_accuracy: ans_acc[i],
                answer_se_clustered: ans_se[i],
                answer_design_effect: ans_deff[i],
            })
            .collect::<Vec<_>>()
    };
    let mut models: Vec<String> = table2.iter().map(|r| r.model.clone()).collect();
    models.sort();
    models.dedup();
    let deltas = delta::deltas(&models, &table2);
    let reasoning_vs_instruct = reasoning_vs_instruct(&table2, &cfg.reasoning);

    let by_depth = curve(&agg.by_depth, "depth")?;
    let wrong_question = wrong_question_rows(&agg.wrong_question)?;

    let (wrong_question_pooled, pooled_df) = pooled_wrong_question(&agg.wrong_question)?;

    let mut by_tokens = Vec::new();
    let mut outcomes = Vec::new();
    let mut token_bin_width = None;
    if let Some(p) = prompts.filter(|p| p.height() > 0) {
        let max_tokens = p
            .column("prompt_tokens")
            .and_then(|c| c.cast(&DataType::UInt64))
            .map_err(Error::polars("prompt_tokens"))?
            .u64()
            .map_err(Error::polars("prompt_tokens"))?
            .max();
        if let Some(max_tokens) = max_tokens {
            let width = cfg
                .token_bin_width
                .unwrap_or_else(|| nice_width(max_tokens))
                .max(1);
            token_bin_width = Some(width);
            let w = width as i64;
            let tokens_df = p
                .clone()
                .lazy()
                .filter(
                    col("prompt_tokens")
                        .is_not_null()
                        .and(col("num_questions").gt(lit(0))),
                )
                .with_column(col("num_questions").alias("n"))
                .with_columns(accuracies("n"))
                .with_column(
                    ((col("prompt_tokens").cast(DataType::Int64) / lit(w)) * lit(w) + lit(w / 2))
                        .alias("bin_mid"),
                )
                .group_by([col("model"), col("structure"), col("bin_mid")])
                .agg([
                    len().cast(DataType::Int64).alias("n"),
                    col("unjudged")
                        .cast(DataType::Int64)
                        .sum()
                        .alias("unjudged"),
                    col("accuracy").mean().alias("accuracy"),
                    col("accuracy_lower").mean().alias("accuracy_lower"),
                    col("accuracy_upper").mean().alias("accuracy_upper"),
                ])
                .sort(["model", "structure", "bin_mid"], sort_opts())
                .collect()
                .map_err(Error::polars("RIFT accuracy by tokens"))?;
            by_tokens = curve(&tokens_df, "bin_mid")?;
            frames.insert("rift_accuracy_by_tokens".to_owned(), tokens_df);
        }
        let out_df = p
            .clone()
            .lazy()
            .group_by([col("model"), col("structure")])
            .agg([
                len().cast(DataType::Int64).alias("prompts"),
                col("outcome")
                    .eq(lit("empty"))
                    .cast(DataType::Int64)
                    .sum()
                    .alias("empty"),
                col("outcome")
                    .eq(lit("truncated"))
                    .cast(DataType::Int64)
                    .sum()
                    .alias("truncated"),
                col("outcome")
                    .eq(lit("malformed"))
                    .cast(DataType::Int64)
                    .sum()
                    .alias("malformed"),
                col("outcome")
                    .eq(lit("failed"))
                    .cast(DataType::Int64)
                    .sum()
                    .alias("failed"),
                col("stopped_early")
                    .cast(DataType::Int64)
                    .sum()
                    .alias("stopped_early"),
                col("ran_long")
                    .cast(DataType::Int64)
                    .sum()
                    .alias("ran_long"),
            ])
            .sort(["model", "structure"], sort_opts())
            .collect()
            .map_err(Error::polars("RIFT outcome counts"))?;
        let g = |n: &str| i64_col(&out_df, n);
        let (m, s) = (str_col(&out_df, "model")?, str_col(&out_df, "structure")?);
        let (pr, em, tr, fa, se, rl) = (
            g("prompts")?,
            g("empty")?,
            g("truncated")?,
            g("failed")?,
            g("stopped_early")?,
            g("ran_long")?,
        );
        let ma = g("malformed")?;
        outcomes = (0..out_df.height())
            .map(|i| OutcomeCounts {
                model: m[i].clone(),
                structure: s[i].clone(),
                prompts: pr[i].unwrap_or_default(),
                empty: em[i].unwrap_or_default(),
                truncated: tr[i].unwrap_or_default(),
                malformed: ma[i].unwrap_or_default(),
                failed: fa[i].unwrap_or_default(),
                stopped_early: se[i].unwrap_or_default(),
                ran_long: rl[i].unwrap_or_default(),
            })
            .collect();
        frames.insert("rift_reply_outcomes".to_owned(), out_df);
    }

    frames.insert("rift_table2".to_owned(), table2_df);
    frames.insert("rift_accuracy_by_depth".to_owned(), agg.by_depth);
    let sum_columns = clustered::sum_columns(WQ_SUMS);
    let written: Vec<PlSmallStr> = agg
        .wrong_question
        .get_column_names()
        .into_iter()
        .filter(|c| !sum_columns.iter().any(|s| s.as_str() == c.as_str()))
        .cloned()
        .collect();
    frames.insert(
        "rift_wrong_question".to_owned(),
        agg.wrong_question
            .vstack(&pooled_df)
            .and_then(|df| df.sort(["model", "structure"], sort_opts()))
            .and_then(|df| df.select(written))
            .map_err(Error::polars("RIFT wrong-question share"))?,
    );
    for (name, df) in values.frames()? {
        frames.insert(name.to_owned(), df);
    }
    frames.insert("rift_delta".to_owned(), delta::frame(&deltas)?);
    frames.insert(
        "rift_reasoning_vs_instruct".to_owned(),
        reasoning::frame(&reasoning_vs_instruct)?,
    );

    Ok(RiftSummary {
        models,
        table2,
        deltas,
        by_depth,
        by_tokens,
        token_bin_width,
        wrong_question,
        wrong_question_pooled,
        values,
        outcomes,
        reasoning_vs_instruct,
        table2_source: table2_source.to_owned(),
        frames,
    })
}

fn curve(df: &DataFrame, x: &str) -> Result<Vec<CurvePoint>, Error> {
    let (m, s, xs, n, acc) = (
        str_col(df, "model")?,
        str_col(df, "structure")?,
        f64_col(df, x)?,
        i64_col(df, "n")?,
        f64_col(df, "accuracy")?,
    );
    let unjudged = i64_col(df, "unjudged")?;
    Ok((0..df.height())
        .filter_map(|i| {
            Some(CurvePoint {
                model: m[i].clone(),
                structure: s[i].clone(),
                x: xs[i]?,
                n: n[i].unwrap_or_default(),
                accuracy: acc[i]?,
                unjudged: unjudged[i].unwrap_or_default(),
            })
        })
        .collect())
}
