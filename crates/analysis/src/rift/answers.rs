//! The answer-table half of the RIFT aggregation ([`aggregate_answers`]: what the pipeline runs, and what
//! `cargo xtask bench analysis` times against pandas). The answer table can hold 18.6 M rows, so it is read in three
//! streaming passes keyed by its integer codes, and everything after them works on their small results (one row per
//! prompt, per group × depth):
//!
//! - per-prompt sums, by the sorted group-by: the writers keep each prompt's rows together and number the prompts in
//!   order, so the table is sorted by `prompt`; once one pass over the codes has checked that, a sortedness hint lets
//!   the streaming engine sum each run of equal codes over slices of its morsels instead of hashing every row (half
//!   the time of the hash group-by); a table out of prompt order takes the hash group-by ([`prompt_sums`]);
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

/// The columns [`prompt_sums`] gives per prompt.
const SUMS: [&str; 6] = [
    "n",
    "correct",
    "incorrect",
    "unjudged",
    "wrong_question",
    "wrong_question_correct",
];

/// Runs one query over the answer table on the streaming engine.
fn stream(plan: LazyFrame, ctx: &str) -> Result<DataFrame, Error> {
    plan.collect_with_engine(Engine::Streaming)
        .map(|r| r.unwrap_single())
        .map_err(Error::polars(ctx))
}

/// Per-prompt sums (`prompt`, then `n` answers and the count of each verdict flag, as `Int64`), one row per prompt.
///
/// A table in prompt order (what the writers produce: each prompt's rows together, codes increasing) is summed by
/// polars' sorted group-by, told by a sortedness hint that the codes are sorted: it cuts its input where the code
/// changes and sums each run over slices, instead of hashing every row. The order is checked first (one streaming
/// pass over the codes), because the hint is a promise polars does not check: on a table out of order the sorted
/// group-by would return one row per run of equal codes, and a table whose prompts are spread over it (every run one
/// row long) takes it nine times as long as the hash group-by. Such a table goes to the hash group-by; so does a
/// table whose sorted sums do not come out one row per prompt, which the sorted group-by should never give.
fn prompt_sums(answers: LazyFrame) -> Result<DataFrame, Error> {
    let ctx = "RIFT per-prompt sums";
    let sums = |answers: LazyFrame| {
        answers.group_by([col("prompt")]).agg([
            len().cast(DataType::Int64).alias("n"),
            count_of("correct"),
            count_of("incorrect"),
            count_of("unjudged"),
            count_of("wrong_question"),
            count_of("wrong_question_correct"),
        ])
    };
    if prompts_in_order(answers.clone())? {
        let sorted = Sorted {
            column: "prompt".into(),
            descending: Some(false),
            nulls_last: None,
        };
        let hinted = answers
            .clone()
            .hint(HintIR::Sorted([sorted].into()))
            .map_err(Error::polars(ctx))?;
        let by_runs = stream(sums(hinted), ctx)?;
        if strictly_increasing(by_runs.column("prompt").map_err(Error::polars(ctx))?)? {
            return Ok(by_runs);
        }
        tracing::warn!(
            "polars' sorted group-by gave more than one row for a prompt; summing the answer table again by hashing"
        );
    }
    stream(sums(answers), ctx)
}

/// Whether the answer table's prompt codes never decrease (so each prompt's rows are together), read in one
/// streaming pass over the `prompt` column; an empty table is in order.
fn prompts_in_order(answers: LazyFrame) -> Result<bool, Error> {
    let ctx = "RIFT prompt order";
    let check = stream(
        answers.select([col("prompt").is_sorted(Some(false), None).alias("in_order")]),
        ctx,
    )?;
    let in_order = check
        .column("in_order")
        .and_then(|c| c.bool().map(|b| b.get(0)))
        .map_err(Error::polars(ctx))?;
    Ok(in_order.unwrap_or(true))
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
    let mut wq_aggs = vec![
        col("incorrect").sum().alias("incorrect"),
        col("wrong_question").sum().alias("wrong_question"),
        col("wrong_question_correct")
            .sum()
            .alias("wrong_question_correct"),
        col("unjudged").sum().alias("unjudged"),
    ];
    wq_aggs.extend(super::clustered::sums(
        col("wrong_question"),
        col("incorrect"),
        super::WQ_SUMS,
    ));
    let wrong_question = per_prompt
        .clone()
        .lazy()
        .group_by([col("model"), col("structure")])
        .agg(wq_aggs)
        .with_column(wrong_question_share())
        .with_columns(wrong_question_se())
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

/// The `share_se_clustered` and `share_design_effect` columns of the wrong-question share, from its sums
/// ([`super::WQ_SUMS`]). Per structure and pooled alike.
pub(super) fn wrong_question_se() -> [Expr; 2] {
    super::clustered::se_and_deff(super::WQ_SUMS, "share_se_clustered", "share_design_effect")
}

/// The `share` column: flagged (`wrong_question`) of `incorrect` answers, in percent; null without incorrect ones.
/// Per structure and pooled alike.
pub(super) fn wrong_question_share() -> Expr {
    when(col("incorrect").gt(lit(0)))
        .then(
            col("wrong_question").cast(DataType::Float64)
                / col("incorrect").cast(DataType::Float64)
                * lit(100.0),
        )
        .otherwise(lit(NULL).cast(DataType::Float64))
        .alias("share")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::{SyntheticConfig, generate_records};

    #[test]
    fn tables_written_in_prompt_order_take_the_sorted_group_by() {
        let cfg = SyntheticConfig {
            seed: 3,
            models: 2,
            prompts_per_structure: 20,
            baseline_prompts: 10,
            min_questions: 5,
            max_questions: 40,
        };
        let (_, answers) = generate_records(&cfg);
        let in_order = crate::rift::answers_frame(&answers).unwrap();
        assert!(prompts_in_order(in_order.clone().lazy()).unwrap());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("answers.parquet");
        crate::synthetic::write_answers_parquet(&cfg, &path).unwrap();
        let scan = crate::rift::scan_answers_parquet(&path).unwrap();
        assert!(prompts_in_order(scan).unwrap());
        let mut by_depth = answers.clone();
        by_depth.sort_by_key(|a| a.depth);
        let spread = crate::rift::answers_frame(&by_depth).unwrap();
        assert!(!prompts_in_order(spread.lazy()).unwrap());
        // Both ways give the same sums, one row per prompt in code order.
        let sorted = prompt_sums(in_order.clone().lazy()).unwrap();
        let hashed = stream(
            in_order.lazy().group_by([col("prompt")]).agg([
                len().cast(DataType::Int64).alias("n"),
                count_of("correct"),
                count_of("incorrect"),
                count_of("unjudged"),
                count_of("wrong_question"),
                count_of("wrong_question_correct"),
            ]),
            "test",
        )
        .unwrap()
        .sort(["prompt"], Default::default())
        .unwrap();
        assert!(sorted.equals_missing(&hashed));
    }
}
