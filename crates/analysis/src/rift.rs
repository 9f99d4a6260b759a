//! RIFT aggregation: Table 2 (mean ± SE and median accuracy per model × structure), Δ, accuracy by prompt tokens and by
//! depth, the wrong-question share of incorrect answers, and reply-outcome counts.
//!
//! Two canonical frames feed it:
//! - the answer table ([`ANSWER_COLUMNS`]): one row per expected answer, `correct`/`incorrect` booleans (neither =
//!   missing) and `wrong_question` (an incorrect answer that is another question's answer); it can be 18.6 M rows, so it
//!   is queried lazily with the streaming engine (from Parquet via [`scan_answers_parquet`]);
//! - the prompt table ([`PROMPT_COLUMNS`]): one row per prompt with its token count and reply outcome.
//!
//! Prompt accuracy is `correct ÷ num_questions × 100` (missing answers count as wrong), computed here rather than
//! trusted from the record.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use polars::prelude::*;
use serde::Serialize;

use crate::Error;
use crate::tables::{self, f64_col, i64_col, str_col};

/// Columns of the canonical answer table.
pub const ANSWER_COLUMNS: [&str; 7] = [
    "model",
    "structure",
    "prompt_id",
    "depth",
    "correct",
    "incorrect",
    "wrong_question",
];
/// Columns of the canonical prompt table.
pub const PROMPT_COLUMNS: [&str; 9] = [
    "model",
    "structure",
    "prompt_id",
    "num_questions",
    "correct",
    "prompt_tokens",
    "outcome",
    "stopped_early",
    "ran_long",
];

/// The structures in table order.
pub const STRUCTURES: [&str; 3] = ["baseline", "linear", "jumping"];

pub fn structure_name(s: schema::rift::Structure) -> &'static str {
    match s {
        schema::rift::Structure::Baseline => "baseline",
        schema::rift::Structure::Linear => "linear",
        schema::rift::Structure::Jumping => "jumping",
    }
}

fn outcome_name(o: schema::rift::ReplyOutcome) -> &'static str {
    match o {
        schema::rift::ReplyOutcome::Ok => "ok",
        schema::rift::ReplyOutcome::Empty => "empty",
        schema::rift::ReplyOutcome::Malformed => "malformed",
        schema::rift::ReplyOutcome::Truncated => "truncated",
        schema::rift::ReplyOutcome::Failed => "failed",
    }
}

/// The per-sample prompt key: the prompt id, with `#<sample index>` appended for repeated samples.
fn prompt_key(prompt_id: &str, sample_index: u32) -> String {
    if sample_index == 0 {
        prompt_id.to_owned()
    } else {
        format!("{prompt_id}#{sample_index}")
    }
}

/// The answer table from `AnswerScore` records.
pub fn answers_frame(records: &[schema::rift::AnswerScore]) -> Result<DataFrame, Error> {
    use schema::rift::Verdict;
    let columns = vec![
        Column::new(
            "model".into(),
            records.iter().map(|r| r.model.as_str()).collect::<Vec<_>>(),
        ),
        Column::new(
            "structure".into(),
            records
                .iter()
                .map(|r| structure_name(r.structure))
                .collect::<Vec<_>>(),
        ),
        Column::new(
            "prompt_id".into(),
            records
                .iter()
                .map(|r| prompt_key(&r.prompt_id, r.sample_index))
                .collect::<Vec<_>>(),
        ),
        Column::new(
            "depth".into(),
            records.iter().map(|r| r.depth).collect::<Vec<u32>>(),
        ),
        Column::new(
            "correct".into(),
            records
                .iter()
                .map(|r| r.verdict == Verdict::Correct)
                .collect::<Vec<_>>(),
        ),
        Column::new(
            "incorrect".into(),
            records
                .iter()
                .map(|r| r.verdict == Verdict::Incorrect)
                .collect::<Vec<_>>(),
        ),
        Column::new(
            "wrong_question".into(),
            records
                .iter()
                .map(|r| r.verdict == Verdict::Incorrect && r.wrong_question_of.is_some())
                .collect::<Vec<_>>(),
        ),
    ];
    DataFrame::new(records.len(), columns).map_err(Error::polars("building the RIFT answer table"))
}

/// The prompt table from `PromptScore` records.
pub fn prompts_frame(records: &[schema::rift::PromptScore]) -> Result<DataFrame, Error> {
    let columns = vec![
        Column::new(
            "model".into(),
            records.iter().map(|r| r.model.as_str()).collect::<Vec<_>>(),
        ),
        Column::new(
            "structure".into(),
            records
                .iter()
                .map(|r| structure_name(r.structure))
                .collect::<Vec<_>>(),
        ),
        Column::new(
            "prompt_id".into(),
            records
                .iter()
                .map(|r| prompt_key(&r.prompt_id, r.sample_index))
                .collect::<Vec<_>>(),
        ),
        Column::new(
            "num_questions".into(),
            records
                .iter()
                .map(|r| r.num_questions)
                .collect::<Vec<u32>>(),
        ),
        Column::new(
            "correct".into(),
            records.iter().map(|r| r.correct).collect::<Vec<u32>>(),
        ),
        Column::new(
            "prompt_tokens".into(),
            records
                .iter()
                .map(|r| r.prompt_tokens)
                .collect::<Vec<Option<u64>>>(),
        ),
        Column::new(
            "outcome".into(),
            records
                .iter()
                .map(|r| outcome_name(r.outcome))
                .collect::<Vec<_>>(),
        ),
        Column::new(
            "stopped_early".into(),
            records.iter().map(|r| r.stopped_early).collect::<Vec<_>>(),
        ),
        Column::new(
            "ran_long".into(),
            records.iter().map(|r| r.ran_long).collect::<Vec<_>>(),
        ),
    ];
    DataFrame::new(records.len(), columns).map_err(Error::polars("building the RIFT prompt table"))
}

/// Reads `answer-scores.jsonl` and `prompt-scores.jsonl` of a RIFT run folder (`<run>/rift/`).
pub fn load_run(rift_dir: &Path) -> Result<(LazyFrame, Option<DataFrame>), Error> {
    let answers_path = rift_dir.join("answer-scores.jsonl");
    let prompts_path = rift_dir.join("prompt-scores.jsonl");
    let answers: Vec<schema::rift::AnswerScore> = schema::read_jsonl(&answers_path)?;
    let prompts = if prompts_path.exists() {
        let p: Vec<schema::rift::PromptScore> = schema::read_jsonl(&prompts_path)?;
        Some(prompts_frame(&p)?)
    } else {
        None
    };
    Ok((answers_frame(&answers)?.lazy(), prompts))
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

/// Scans an answer table stored as Parquet (lazily; nothing is read until a query runs).
pub fn scan_answers_parquet(path: &Path) -> Result<LazyFrame, Error> {
    let pl_path =
        PlRefPath::try_from_path(path).map_err(Error::polars(path.display().to_string()))?;
    LazyFrame::scan_parquet(pl_path, ScanArgsParquet::default())
        .map_err(Error::polars(path.display().to_string()))
}

/// One row of Table 2 (accuracies in percent).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StructureStats {
    pub model: String,
    pub structure: String,
    pub n_prompts: i64,
    pub mean: Option<f64>,
    pub se: Option<f64>,
    pub median: Option<f64>,
}

/// Δ = (A_linear − A_jumping) ÷ A_linear × 100 for one model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Delta {
    pub model: String,
    pub linear: Option<f64>,
    pub jumping: Option<f64>,
    pub delta: Option<f64>,
}

/// A point of a per-model curve (token bin or depth).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CurvePoint {
    pub model: String,
    pub structure: String,
    pub x: f64,
    pub n: i64,
    pub accuracy: f64,
}

/// Wrong-question share of incorrect answers per model × structure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WrongQuestion {
    pub model: String,
    pub structure: String,
    pub incorrect: i64,
    pub wrong_question: i64,
    /// Percent of incorrect answers that are another question's answer (None when there are no incorrect answers).
    pub share: Option<f64>,
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
#[derive(Debug, Clone, Serialize)]
pub struct RiftConfig {
    /// Token-bin width; `None` picks a round width giving at most 20 bins over the largest prompt.
    pub token_bin_width: Option<u64>,
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
    pub outcomes: Vec<OutcomeCounts>,
    /// Where Table 2 came from: "prompt-scores" or "answer-scores".
    pub table2_source: String,
    #[serde(skip)]
    pub frames: BTreeMap<String, DataFrame>,
}

fn sort_opts() -> SortMultipleOptions {
    SortMultipleOptions::default().with_maintain_order(true)
}

fn stream(lf: LazyFrame, ctx: &str) -> Result<DataFrame, Error> {
    lf.collect_with_engine(Engine::Streaming)
        .map(|r| r.unwrap_single())
        .map_err(Error::polars(ctx))
}

/// Per-prompt sums from the answer table (streaming): correct, incorrect, wrong-question and answer counts.
pub fn per_prompt_from_answers(answers: LazyFrame) -> Result<DataFrame, Error> {
    stream(
        answers
            .group_by([col("model"), col("structure"), col("prompt_id")])
            .agg([
                len().cast(DataType::Int64).alias("n"),
                col("correct").cast(DataType::Int64).sum().alias("correct"),
                col("incorrect")
                    .cast(DataType::Int64)
                    .sum()
                    .alias("incorrect"),
                col("wrong_question")
                    .cast(DataType::Int64)
                    .sum()
                    .alias("wrong_question"),
            ]),
        "RIFT per-prompt sums",
    )
}

/// Accuracy by depth from the answer table (streaming).
pub fn depth_from_answers(answers: LazyFrame) -> Result<DataFrame, Error> {
    let df = stream(
        answers
            .group_by([col("model"), col("structure"), col("depth")])
            .agg([
                len().cast(DataType::Int64).alias("n"),
                (col("correct").cast(DataType::Float64).mean() * lit(100.0)).alias("accuracy"),
            ]),
        "RIFT accuracy by depth",
    )?;
    df.lazy()
        .sort(["model", "structure", "depth"], sort_opts())
        .collect()
        .map_err(Error::polars("sorting depth table"))
}

/// Table 2 statistics from per-prompt accuracies (`model`, `structure`, `accuracy` in percent).
fn table2_frame(per_prompt: LazyFrame) -> Result<DataFrame, Error> {
    per_prompt
        .group_by([col("model"), col("structure")])
        .agg([
            len().cast(DataType::Int64).alias("n_prompts"),
            col("accuracy").mean().alias("mean"),
            (col("accuracy").std(1) / len().cast(DataType::Float64).sqrt()).alias("se"),
            col("accuracy").median().alias("median"),
        ])
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

/// The answer-table part of the analysis (the part the benchmark times): per-prompt sums → Table 2 from answers,
/// wrong-question shares; accuracy by depth.
pub struct AnswerAggregates {
    pub per_prompt: DataFrame,
    pub table2: DataFrame,
    pub wrong_question: DataFrame,
    pub by_depth: DataFrame,
}

pub fn aggregate_answers(answers: LazyFrame) -> Result<AnswerAggregates, Error> {
    let per_prompt = per_prompt_from_answers(answers.clone())?;
    let by_depth = depth_from_answers(answers)?;
    let table2 = table2_frame(
        per_prompt.clone().lazy().with_column(
            (col("correct").cast(DataType::Float64) / col("n").cast(DataType::Float64)
                * lit(100.0))
            .alias("accuracy"),
        ),
    )?;
    let wrong_question = per_prompt
        .clone()
        .lazy()
        .group_by([col("model"), col("structure")])
        .agg([
            col("incorrect").sum().alias("incorrect"),
            col("wrong_question").sum().alias("wrong_question"),
        ])
        .with_column(
            when(col("incorrect").gt(lit(0)))
                .then(
                    col("wrong_question").cast(DataType::Float64)
                        / col("incorrect").cast(DataType::Float64)
                        * lit(100.0),
                )
                .otherwise(lit(NULL).cast(DataType::Float64))
                .alias("share"),
        )
        .sort(["model", "structure"], sort_opts())
        .collect()
        .map_err(Error::polars("RIFT wrong-question share"))?;
    Ok(AnswerAggregates {
        per_prompt,
        table2,
        wrong_question,
        by_depth,
    })
}

/// Aggregates a RIFT run: the answer table (lazy) and, when present, the prompt table.
pub fn aggregate(
    answers: LazyFrame,
    prompts: Option<&DataFrame>,
    cfg: &RiftConfig,
) -> Result<RiftSummary, Error> {
    let agg = aggregate_answers(answers)?;
    let mut frames = BTreeMap::new();

    let (table2_df, table2_source) = match prompts {
        Some(p) if p.height() > 0 => (
            table2_frame(
                p.clone().lazy().with_column(
                    when(col("num_questions").gt(lit(0)))
                        .then(
                            col("correct").cast(DataType::Float64)
                                / col("num_questions").cast(DataType::Float64)
                                * lit(100.0),
                        )
                        .otherwise(lit(NULL).cast(DataType::Float64))
                        .alias("accuracy"),
                ),
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
        (0..table2_df.height())
            .map(|i| StructureStats {
                model: m[i].clone(),
                structure: s[i].clone(),
                n_prompts: n[i].unwrap_or_default(),
                mean: mean[i],
                se: se[i],
                median: median[i],
            })
            .collect::<Vec<_>>()
    };
    let mut models: Vec<String> = table2.iter().map(|r| r.model.clone()).collect();
    models.sort();
    models.dedup();
    let deltas: Vec<Delta> = models
        .iter()
        .map(|m| {
            let get = |s: &str| {
                table2
                    .iter()
                    .find(|r| &r.model == m && r.structure == s)
                    .and_then(|r| r.mean)
            };
            let (lin, jump) = (get("linear"), get("jumping"));
            let delta = match (lin, jump) {
                (Some(l), Some(j)) if l != 0.0 => Some((l - j) / l * 100.0),
                _ => None,
            };
            Delta {
                model: m.clone(),
                linear: lin,
                jumping: jump,
                delta,
            }
        })
        .collect();

    let by_depth = curve(&agg.by_depth, "depth")?;
    let wrong_question = {
        let df = &agg.wrong_question;
        let (m, s, inc, wq, share) = (
            str_col(df, "model")?,
            str_col(df, "structure")?,
            i64_col(df, "incorrect")?,
            i64_col(df, "wrong_question")?,
            f64_col(df, "share")?,
        );
        (0..df.height())
            .map(|i| WrongQuestion {
                model: m[i].clone(),
                structure: s[i].clone(),
                incorrect: inc[i].unwrap_or_default(),
                wrong_question: wq[i].unwrap_or_default(),
                share: share[i],
            })
            .collect()
    };

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
                .with_columns([
                    ((col("prompt_tokens").cast(DataType::Int64) / lit(w)) * lit(w) + lit(w / 2))
                        .alias("bin_mid"),
                    (col("correct").cast(DataType::Float64)
                        / col("num_questions").cast(DataType::Float64)
                        * lit(100.0))
                    .alias("accuracy"),
                ])
                .group_by([col("model"), col("structure"), col("bin_mid")])
                .agg([
                    len().cast(DataType::Int64).alias("n"),
                    col("accuracy").mean().alias("accuracy"),
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
    frames.insert("rift_wrong_question".to_owned(), agg.wrong_question);
    let delta_df = DataFrame::new(
        deltas.len(),
        vec![
            Column::new(
                "model".into(),
                deltas.iter().map(|d| d.model.as_str()).collect::<Vec<_>>(),
            ),
            Column::new(
                "linear".into(),
                deltas.iter().map(|d| d.linear).collect::<Vec<_>>(),
            ),
            Column::new(
                "jumping".into(),
                deltas.iter().map(|d| d.jumping).collect::<Vec<_>>(),
            ),
            Column::new(
                "delta".into(),
                deltas.iter().map(|d| d.delta).collect::<Vec<_>>(),
            ),
        ],
    )
    .map_err(Error::polars("RIFT delta table"))?;
    frames.insert("rift_delta".to_owned(), delta_df);

    Ok(RiftSummary {
        models,
        table2,
        deltas,
        by_depth,
        by_tokens,
        token_bin_width,
        wrong_question,
        outcomes,
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
    Ok((0..df.height())
        .filter_map(|i| {
            Some(CurvePoint {
                model: m[i].clone(),
                structure: s[i].clone(),
                x: xs[i]?,
                n: n[i].unwrap_or_default(),
                accuracy: acc[i]?,
            })
        })
        .collect())
}

/// Writes every RIFT table (Parquet + CSV) under `dir`, and Table 2 as Markdown.
pub fn write_tables(summary: &RiftSummary, dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut written = Vec::new();
    for (name, df) in &summary.frames {
        written.extend(tables::write_table(df, dir, name)?);
    }
    let cell = |m: &str, s: &str| {
        summary
            .table2
            .iter()
            .find(|r| r.model == m && r.structure == s)
    };
    let mean_se = |r: Option<&StructureStats>| match r.and_then(|r| Some((r.mean?, r.se))) {
        Some((mean, Some(se))) => format!("{mean:.2} (± {se:.2})"),
        Some((mean, None)) => format!("{mean:.2}"),
        None => "–".to_owned(),
    };
    let rows: Vec<Vec<String>> = summary
        .models
        .iter()
        .map(|m| {
            let delta = summary
                .deltas
                .iter()
                .find(|d| &d.model == m)
                .and_then(|d| d.delta);
            vec![
                m.clone(),
                mean_se(cell(m, "baseline")),
                mean_se(cell(m, "linear")),
                tables::fmt_opt(cell(m, "linear").and_then(|r| r.median), 2),
                mean_se(cell(m, "jumping")),
                tables::fmt_opt(cell(m, "jumping").and_then(|r| r.median), 2),
                tables::fmt_opt(delta, 1),
            ]
        })
        .collect();
    written.push(tables::write_markdown(
        dir,
        "rift_table2",
        "Table 2: baseline vs linear vs jumping prompt accuracy (%), mean (± standard error) and median over prompts; Δ = (A_linear − A_jumping) / A_linear × 100.",
        &["Model", "Baseline mean (± SE)", "Linear mean (± SE)", "Linear median", "Jumping mean (± SE)", "Jumping median", "Δ"],
        &rows,
    )?);
    let wq_rows: Vec<Vec<String>> = summary
        .wrong_question
        .iter()
        .map(|w| {
            vec![
                w.model.clone(),
                w.structure.clone(),
                w.incorrect.to_string(),
                w.wrong_question.to_string(),
                tables::fmt_opt(w.share, 1),
            ]
        })
        .collect();
    written.push(tables::write_markdown(
        dir,
        "rift_wrong_question",
        "Share of incorrect answers that are the answer to a different question of the same prompt.",
        &["Model", "Structure", "Incorrect", "Wrong question", "Share (%)"],
        &wq_rows,
    )?);
    let out_rows: Vec<Vec<String>> = summary
        .outcomes
        .iter()
        .map(|o| {
            vec![
                o.model.clone(),
                o.structure.clone(),
                o.prompts.to_string(),
                o.empty.to_string(),
                o.truncated.to_string(),
                o.malformed.to_string(),
                o.failed.to_string(),
                o.stopped_early.to_string(),
                o.ran_long.to_string(),
            ]
        })
        .collect();
    written.push(tables::write_markdown(
        dir,
        "rift_reply_outcomes",
        "Replies per model and structure: empty, truncated (hit max tokens), malformed (no answer readable), failed requests, stopped early, ran long.",
        &["Model", "Structure", "Prompts", "Empty", "Truncated", "Malformed", "Failed", "Stopped early", "Ran long"],
        &out_rows,
    )?);
    Ok(written)
}
