//! The answer-table half of the RIFT aggregation ([`aggregate_answers`]: what the pipeline runs, and what
//! `cargo xtask bench analysis` times against pandas). The answer table can hold 18.6 M rows, so it is read in three
//! streaming passes keyed by its integer codes, and everything after them works on their small results (one row per
//! prompt, per group × depth):
//!
//! - per-prompt sums, by the sorted group-by: the writers keep each prompt's rows together and number the prompts in
//!   order, so the table is sorted by `prompt`; a sortedness hint lets the streaming engine sum each run of equal
//!   codes over slices of its morsels instead of hashing every row (half the time of the hash group-by). The hint is
//!   checked on the result, so a table out of prompt order still gives the right sums ([`prompt_sums`]);
//! - sums per group × depth, a hash group-by on one `u64` key (a single-column key is hashed directly, two would be
//!   row-encoded first);
//! - each prompt's labels (its group and strings) from its depth-0 row; a query of its own, because the streaming
//!   engine then decodes the strings of those rows alone, whereas queries collected together share one scan of the
//!   union of their columns (the strings of every row).

use polars::prelude::*;
use polars_plan::plans::{HintIR, Sorted};

use super::{accuracies, sort_opts, table2_frame};
use crate::Error;

/// A verdict flag's count (`true` rows) as an `Int64` column of the same name.
fn count_of(flag: &str) -> Expr {
    col(flag).sum().cast(DataType::Int64).alias(flag)
}

/// The columns [`prompt_sums`] adds up per prompt.
const SUMS: [&str; 5] = ["n", "correct", "incorrect", "unjudged", "wrong_question"];

/// Runs one query over the answer table on the streaming engine.
fn stream(plan: LazyFrame, ctx: &str) -> Result<DataFrame, Error> {
    plan.collect_with_engine(Engine::Streaming)
        .map(|r| r.unwrap_single())
        .map_err(Error::polars(ctx))
}

/// Per-prompt sums (`prompt`, then `n` answers and the count of each verdict flag, as `Int64`), one row per prompt.
///
/// The query tells polars the table is sorted by `prompt` (what the writers produce), so the streaming engine takes
/// its sorted group-by: it cuts its input where the code changes and sums each run. That is right for any table in
/// which each prompt's rows are together; for any other table each run still gets its own row with its own sums (every
/// row in exactly one run), so the result is checked: codes strictly increasing means one row per prompt holding all
/// of its rows; otherwise the runs of each prompt are added up.
fn prompt_sums(answers: LazyFrame) -> Result<DataFrame, Error> {
    let ctx = "RIFT per-prompt sums";
    let sorted = Sorted {
        column: "prompt".into(),
        descending: Some(false),
        nulls_last: None,
    };
    let runs = answers
        .hint(HintIR::Sorted([sorted].into()))
        .map_err(Error::polars(ctx))?
        .group_by([col("prompt")])
        .agg([
            len().cast(DataType::Int64).alias("n"),
            count_of("correct"),
            count_of("incorrect"),
            count_of("unjudged"),
            count_of("wrong_question"),
        ]);
    let mut runs = stream(runs, ctx)?;
    if strictly_increasing(runs.column("prompt").map_err(Error::polars(ctx))?)? {
        return Ok(runs);
    }
    tracing::debug!("The answer table is not in prompt order; adding up each prompt's runs.");
    // The hint may have marked the codes sorted; they are not, so the in-memory group-by must not trust it.
    let mut prompt = runs
        .column("prompt")
        .map_err(Error::polars(ctx))?
        .as_materialized_series()
        .clone();
    prompt.set_sorted_flag(polars::series::IsSorted::Not);
    runs.with_column(prompt.into_column())
        .map_err(Error::polars(ctx))?;
    runs.lazy()
        .group_by([col("prompt")])
        .agg(SUMS.map(|c| col(c).sum()))
        .collect()
        .map_err(Error::polars(ctx))
}

/// Whether a code column has no nulls and each value is above the one before (so every value is there once).
fn strictly_increasing(codes: &Column) -> Result<bool, Error> {
    let ctx = "RIFT prompt codes";
    let codes = codes.cast(&DataType::UInt64).map_err(Error::polars(ctx))?;
    let codes = codes.u64().map_err(Error::polars(ctx))?;
    if codes.null_count() > 0 {
        return Ok(false);
    }
    let mut values = codes.into_no_null_iter();
    let Some(mut last) = values.next() else {
        return Ok(true);
    };
    for v in values {
        if v <= last {
            return Ok(false);
        }
        last = v;
    }
    Ok(true)
}

/// Depths per group in the combined group × depth key (any `u32` depth fits).
const DEPTH_SPAN: u64 = 1 << 32;

/// Sums per `group` × depth: `group`, `depth`, `n` answers, `correct`, `unjudged`.
fn depth_sums(answers: LazyFrame) -> Result<DataFrame, Error> {
    let depth = answers
        .group_by([(col("group").cast(DataType::UInt64) * lit(DEPTH_SPAN)
            + col("depth").cast(DataType::UInt64))
        .alias("key")])
        .agg([
            len().cast(DataType::Int64).alias("n"),
            count_of("correct"),
            count_of("unjudged"),
        ])
        .select([
            // The quotient of an exact multiple of the span (a true division, exact in f64 below 2^53).
            ((col("key") - col("key") % lit(DEPTH_SPAN)) / lit(DEPTH_SPAN))
                .cast(DataType::UInt32)
                .alias("group"),
            (col("key") % lit(DEPTH_SPAN))
                .cast(DataType::UInt32)
                .alias("depth"),
            col("n"),
            col("correct"),
            col("unjudged"),
        ]);
    stream(depth, "RIFT sums by depth")
}

/// Each prompt's depth-0 row: `prompt`, `group` and the label strings, which the scan decodes for these rows alone.
fn depth_zero_labels(answers: LazyFrame) -> Result<DataFrame, Error> {
    let labels = answers.filter(col("depth").eq(lit(0u32))).select([
        col("prompt"),
        col("group"),
        col("model"),
        col("structure"),
        col("prompt_id"),
    ]);
    stream(labels, "RIFT prompt labels")
}

/// The per-prompt table: each prompt's labels (`model`, `structure`, `prompt_id`, `group`) beside its sums. A table in
/// prompt order has its depth-0 rows in the order of the sums, so the two are put side by side as they are; otherwise
/// they are joined on the prompt code (after [`prompt_labels`] made sure every prompt has its labels once).
fn per_prompt_rows(
    answers: LazyFrame,
    sums: DataFrame,
    labels: DataFrame,
) -> Result<DataFrame, Error> {
    let ctx = "RIFT per-prompt sums";
    const LABELS: [&str; 4] = ["model", "structure", "prompt_id", "group"];
    let code = |df: &DataFrame| df.column("prompt").map_err(Error::polars(ctx)).cloned();
    if labels.height() == sums.height() && code(&labels)?.equals_missing(&code(&sums)?) {
        let sums = sums.select(SUMS).map_err(Error::polars(ctx))?;
        return labels
            .select(LABELS)
            .and_then(|labels| labels.hstack(sums.columns()))
            .map_err(Error::polars(ctx));
    }
    let labels = prompt_labels(answers, &sums, labels)?;
    sums.lazy()
        .join(
            labels.lazy(),
            [col("prompt")],
            [col("prompt")],
            JoinArgs::new(JoinType::Inner),
        )
        .select(LABELS.into_iter().chain(SUMS).map(col).collect::<Vec<_>>())
        .collect()
        .map_err(Error::polars(ctx))
}

/// Labels for every prompt of `sums`: the depth-0 rows when they name each prompt once (every prompt's answers run
/// from depth 0), otherwise each prompt's first row from a full scan.
fn prompt_labels(
    answers: LazyFrame,
    sums: &DataFrame,
    labels: DataFrame,
) -> Result<DataFrame, Error> {
    let unique = labels
        .column("prompt")
        .and_then(|c| c.n_unique())
        .map_err(Error::polars("RIFT prompt labels"))?;
    if labels.height() == sums.height() && unique == sums.height() {
        return Ok(labels);
    }
    answers
        .group_by([col("prompt")])
        .agg([
            col("group").first(),
            col("model").first(),
            col("structure").first(),
            col("prompt_id").first(),
        ])
        .collect_with_engine(Engine::Streaming)
        .map(|r| r.unwrap_single())
        .map_err(Error::polars("RIFT prompt labels"))
}

/// Judged accuracy and its bounds by depth, from sums per `group` × depth and the groups' labels.
fn depth_table(depth: DataFrame, groups: LazyFrame) -> Result<DataFrame, Error> {
    depth
        .lazy()
        .join(
            groups,
            [col("group")],
            [col("group")],
            JoinArgs::new(JoinType::Inner),
        )
        .select([
            col("model"),
            col("structure"),
            col("depth"),
            col("n"),
            col("correct"),
            col("unjudged"),
        ])
        .with_columns(accuracies("n"))
        .sort(["model", "structure", "depth"], sort_opts())
        .collect()
        .map_err(Error::polars("RIFT accuracy by depth"))
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
    let sums = prompt_sums(answers.clone())?;
    let depth = depth_sums(answers.clone())?;
    let labels = depth_zero_labels(answers.clone())?;
    let per_prompt = per_prompt_rows(answers, sums, labels)?;
    let groups = per_prompt
        .clone()
        .lazy()
        .select([col("group"), col("model"), col("structure")])
        .unique_generic(Some(vec![col("group")]), UniqueKeepStrategy::First);
    let by_depth = depth_table(depth, groups)?;
    let table2 = table2_frame(per_prompt.clone().lazy().with_columns(accuracies("n")))?;
    let wrong_question = per_prompt
        .clone()
        .lazy()
        .group_by([col("model"), col("structure")])
        .agg([
            col("incorrect").sum().alias("incorrect"),
            col("wrong_question").sum().alias("wrong_question"),
            col("unjudged").sum().alias("unjudged"),
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
