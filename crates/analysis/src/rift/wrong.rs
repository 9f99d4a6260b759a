//! The wrong-question share's rows: per structure (from the answer aggregation) and pooled over linear and jumping
//! per model, each with its standard error clustered by prompt and the design effect ([`super::clustered`]).

use polars::prelude::*;

use super::{WrongQuestion, answers, clustered, sort_opts};
use crate::Error;
use crate::tables::{f64_col, i64_col, str_col};

/// The prefix of the wrong-question frame's sum columns for its clustered SE (kept until the pooled rows are made,
/// then left out of the written table).
pub(crate) const WQ_SUMS: &str = "wq";

/// The structure label of a pooled wrong-question row.
pub const POOLED: &str = "pooled";

/// Per model, linear and jumping pooled: (sum of flagged incorrect answers) ÷ (sum of incorrect answers), as rows of
/// the wrong-question frame (structure [`POOLED`]) and as records.
pub(super) fn pooled_wrong_question(
    per_structure: &DataFrame,
) -> Result<(Vec<WrongQuestion>, DataFrame), Error> {
    let mut aggs = vec![
        col("incorrect").sum(),
        col("wrong_question").sum(),
        col("wrong_question_correct").sum(),
        col("unjudged").sum(),
    ];
    aggs.extend(clustered::pooled(WQ_SUMS));
    let df = per_structure
        .clone()
        .lazy()
        .filter(col("structure").neq(lit("baseline")))
        .group_by([col("model")])
        .agg(aggs)
        .with_column(answers::wrong_question_share())
        .with_columns(answers::wrong_question_se())
        .select(
            per_structure
                .get_column_names()
                .into_iter()
                .map(|c| {
                    if c == "structure" {
                        lit(POOLED).alias("structure")
                    } else {
                        col(c.clone())
                    }
                })
                .collect::<Vec<_>>(),
        )
        .sort(["model"], sort_opts())
        .collect()
        .map_err(Error::polars("RIFT pooled wrong-question share"))?;
    Ok((wrong_question_rows(&df)?, df))
}

pub(super) fn wrong_question_rows(df: &DataFrame) -> Result<Vec<WrongQuestion>, Error> {
    let (m, s, inc, wq, share) = (
        str_col(df, "model")?,
        str_col(df, "structure")?,
        i64_col(df, "incorrect")?,
        i64_col(df, "wrong_question")?,
        f64_col(df, "share")?,
    );
    let unjudged = i64_col(df, "unjudged")?;
    let wq_correct = i64_col(df, "wrong_question_correct")?;
    let (se, deff) = (
        f64_col(df, "share_se_clustered")?,
        f64_col(df, "share_design_effect")?,
    );
    Ok((0..df.height())
        .map(|i| WrongQuestion {
            model: m[i].clone(),
            structure: s[i].clone(),
            incorrect: inc[i].unwrap_or_default(),
            wrong_question: wq[i].unwrap_or_default(),
            wrong_question_correct: wq_correct[i].unwrap_or_default(),
            unjudged: unjudged[i].unwrap_or_default(),
            share: share[i],
            share_se_clustered: se[i],
            share_design_effect: deff[i],
        })
        .collect())
}
