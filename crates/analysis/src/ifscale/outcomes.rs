//! How IFScale samples ended, per (model, N): the count and share of each outcome (`schema::ifscale::SampleStatus`),
//! and accuracy two ways: the paper's, the mean over the scored samples only, and the mean over all samples with
//! every failure (refused, declined as impractical, no visible output, truncated, …) counted as 0.
//!
//! The table `ifscale_outcomes` is written only when some sample did not end `scored`: a run without failures
//! keeps exactly the tables it had before outcomes were recorded. It shows a column per outcome that occurs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use polars::prelude::*;
use schema::ifscale::SampleStatus;
use schema::table::{Table, left, right};
use serde::Serialize;

use crate::Error;
use crate::tables::{self, f64_col, i64_col, str_col};

/// One (model, N): how its samples ended, and accuracy both ways.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OutcomeRow {
    pub model: String,
    pub num_rules: i64,
    pub n_samples: i64,
    /// Samples per outcome (outcomes with none left out), in `SampleStatus::ALL` order.
    pub counts: BTreeMap<SampleStatus, i64>,
    /// The paper's accuracy: mean over the scored samples (None when none was scored).
    pub accuracy_scored: Option<f64>,
    /// Mean over every sample, a failure counting as 0.
    pub accuracy_all: Option<f64>,
}

impl OutcomeRow {
    /// The share of `status` among the samples, in percent.
    pub fn share(&self, status: SampleStatus) -> f64 {
        let n = self.counts.get(&status).copied().unwrap_or(0);
        if self.n_samples == 0 {
            0.0
        } else {
            n as f64 * 100.0 / self.n_samples as f64
        }
    }
    /// Samples that did not end `scored`.
    pub fn failures(&self) -> i64 {
        self.counts
            .iter()
            .filter(|(s, _)| s.is_failure())
            .map(|(_, n)| n)
            .sum()
    }
}

/// One (model, N) while counting: samples per outcome, and the scored samples' accuracies.
type Group = (BTreeMap<SampleStatus, i64>, Vec<f64>);

/// The outcome rows of a per-sample frame (its `status` column), sorted by model and N.
pub fn outcome_rows(samples: &DataFrame) -> Result<Vec<OutcomeRow>, Error> {
    let models = str_col(samples, "model")?;
    let ns = i64_col(samples, "num_rules")?;
    let acc = f64_col(samples, "accuracy")?;
    let status = str_col(samples, "status")?;
    let mut groups: BTreeMap<(String, i64), Group> = BTreeMap::new();
    for i in 0..samples.height() {
        let s = SampleStatus::from_name(&status[i]).ok_or_else(|| {
            Error::Empty(format!(
                "IFScale sample frame: row {i}: unknown status `{}`",
                status[i]
            ))
        })?;
        let g = groups
            .entry((models[i].clone(), ns[i].unwrap_or_default()))
            .or_default();
        *g.0.entry(s).or_default() += 1;
        if s == SampleStatus::Scored
            && let Some(a) = acc[i]
        {
            g.1.push(a);
        }
    }
    Ok(groups
        .into_iter()
        .map(|((model, num_rules), (counts, accs))| {
            let n_samples: i64 = counts.values().sum();
            // `fold` from +0: an empty `sum` of floats is −0, which would print as "-0.0".
            let sum = accs.iter().fold(0.0, |a, b| a + b);
            OutcomeRow {
                model,
                num_rules,
                n_samples,
                accuracy_scored: (!accs.is_empty()).then(|| sum / accs.len() as f64),
                accuracy_all: (n_samples > 0).then(|| sum / n_samples as f64),
                counts,
            }
        })
        .collect())
}

/// True when some sample did not end `scored` (then the outcome table and figure are made).
pub fn any_failure(rows: &[OutcomeRow]) -> bool {
    rows.iter().any(|r| r.failures() > 0)
}

/// The outcomes that occur in `rows`, in `SampleStatus::ALL` order.
pub fn occurring(rows: &[OutcomeRow]) -> Vec<SampleStatus> {
    SampleStatus::ALL
        .into_iter()
        .filter(|s| rows.iter().any(|r| r.counts.contains_key(s)))
        .collect()
}

/// The outcome table: per (model, N), the samples, accuracy both ways, and each occurring outcome's count and share.
pub fn table(rows: &[OutcomeRow]) -> Table {
    let outcomes = occurring(rows);
    let mut columns = vec![
        left("model"),
        right("N"),
        right("samples"),
        right("accuracy, scored samples (%)"),
        right("accuracy, all samples (%)"),
    ];
    columns.extend(outcomes.iter().map(|s| right(s.name())));
    let mut t = Table::new(columns).with_caption(
        "How every sample ended, per model and N: the paper's accuracy (mean over the scored samples) beside the \
         accuracy over all samples with each failure counted as 0, and each outcome's count (share of the samples).",
    );
    for r in rows {
        let mut row = vec![
            r.model.clone(),
            r.num_rules.to_string(),
            r.n_samples.to_string(),
            tables::fmt_opt(r.accuracy_scored, 1),
            tables::fmt_opt(r.accuracy_all, 1),
        ];
        row.extend(outcomes.iter().map(|&s| {
            let n = r.counts.get(&s).copied().unwrap_or(0);
            format!("{n} ({:.0} %)", r.share(s))
        }));
        t.push(row);
    }
    t
}

/// Writes `ifscale_outcomes` when some sample failed ([`any_failure`]); nothing otherwise.
pub fn write_tables(rows: &[OutcomeRow], dir: &Path) -> Result<Vec<PathBuf>, Error> {
    if !any_failure(rows) {
        return Ok(Vec::new());
    }
    tables::write_table_markdown(dir, "ifscale_outcomes", &table(rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accuracy_both_ways_and_shares() {
        let df = df!(
            "model" => ["m", "m", "m", "m", "n"],
            "num_rules" => [10i64, 10, 10, 10, 10],
            "accuracy" => [Some(80.0), Some(60.0), None, None, Some(50.0)],
            "status" => ["scored", "scored", "refused", "no-visible-output-with-reasoning", "scored"],
        )
        .unwrap();
        let rows = outcome_rows(&df).unwrap();
        assert_eq!(rows.len(), 2);
        let m = &rows[0];
        assert_eq!(m.n_samples, 4);
        assert_eq!(m.accuracy_scored, Some(70.0));
        assert_eq!(m.accuracy_all, Some(35.0));
        assert_eq!(m.share(SampleStatus::Refused), 25.0);
        assert_eq!(m.failures(), 2);
        assert!(any_failure(&rows));
        assert_eq!(
            table(&rows).to_markdown(),
            "How every sample ended, per model and N: the paper's accuracy (mean over the scored samples) beside \
             the accuracy over all samples with each failure counted as 0, and each outcome's count (share of the \
             samples).\n\n\
             | model | N | samples | accuracy, scored samples (%) | accuracy, all samples (%) | scored | refused | no-visible-output-with-reasoning |\n\
             |---|---:|---:|---:|---:|---:|---:|---:|\n\
             | m | 10 | 4 | 70.0 | 35.0 | 2 (50 %) | 1 (25 %) | 1 (25 %) |\n\
             | n | 10 | 1 | 50.0 | 50.0 | 1 (100 %) | 0 (0 %) | 0 (0 %) |\n"
        );
        // A group with no scored sample has accuracy 0 over all samples, printed without a sign.
        let none = df!(
            "model" => ["m"],
            "num_rules" => [10i64],
            "accuracy" => [None::<f64>],
            "status" => ["refused"],
        )
        .unwrap();
        let rows_none = outcome_rows(&none).unwrap();
        assert_eq!(tables::fmt_opt(rows_none[0].accuracy_all, 1), "0.0");
        // Without failures nothing is written.
        assert!(!any_failure(&rows[1..]));
        let dir = tempfile::tempdir().unwrap();
        assert!(write_tables(&rows[1..], dir.path()).unwrap().is_empty());
        assert_eq!(write_tables(&rows, dir.path()).unwrap().len(), 2);
    }

    #[test]
    fn declines_as_impractical_have_their_own_column_after_refusals() {
        let df = df!(
            "model" => ["m", "m", "m", "m"],
            "num_rules" => [1000i64, 1000, 1000, 1000],
            "accuracy" => [Some(40.0), None, None, None],
            "status" => ["scored", "too-short", "declined-impractical", "refused"],
        )
        .unwrap();
        let rows = outcome_rows(&df).unwrap();
        assert_eq!(
            occurring(&rows),
            [
                SampleStatus::Scored,
                SampleStatus::Refused,
                SampleStatus::DeclinedImpractical,
                SampleStatus::TooShort
            ]
        );
        assert_eq!(rows[0].share(SampleStatus::DeclinedImpractical), 25.0);
        assert_eq!(rows[0].failures(), 3);
        let md = table(&rows).to_markdown();
        assert!(
            md.contains(
                "| scored | refused | declined-impractical | too-short |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n\
                 | m | 1000 | 4 | 40.0 | 10.0 | 1 (25 %) | 1 (25 %) | 1 (25 %) | 1 (25 %) |"
            ),
            "{md}"
        );
    }
}
