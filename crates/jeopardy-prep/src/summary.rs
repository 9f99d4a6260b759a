//! The Table-1-like statistics of a prepared dataset, plus the counts per drop reason.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use schema::rift::{Question, SkippedQuestion};
use serde::{Deserialize, Serialize};

/// Statistics of one preparation (written as `summary.json` and `summary.md`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub files: Vec<String>,
    /// Clues read from the files.
    pub input_pairs: usize,
    /// Question/answer pairs kept.
    pub pairs: usize,
    pub unique_categories: usize,
    /// Smallest and largest clue value as aired (pairs with a value).
    pub value_min: Option<u32>,
    pub value_max: Option<u32>,
    pub value_normalized_min: Option<u32>,
    pub value_normalized_max: Option<u32>,
    /// Kept pairs without a value (Final Jeopardy!, tiebreakers).
    pub without_value: usize,
    pub rephrased: usize,
    pub per_round: BTreeMap<String, usize>,
    /// Dropped pairs per reason (every reason listed, in check order).
    pub skipped: BTreeMap<String, usize>,
    pub skipped_total: usize,
}

impl Summary {
    pub(crate) fn compute(
        files: &[String],
        input_pairs: usize,
        questions: &[Question],
        skipped: &[SkippedQuestion],
    ) -> Summary {
        let categories: BTreeSet<&str> = questions.iter().map(|q| q.category.as_str()).collect();
        let values = questions.iter().filter_map(|q| q.value);
        let normalized = questions.iter().filter_map(|q| q.value_normalized);
        let mut per_round = BTreeMap::new();
        for q in questions {
            *per_round.entry(q.round.clone()).or_insert(0) += 1;
        }
        let skipped_counts = crate::skip_counts(skipped)
            .into_iter()
            .map(|(r, n)| (r.as_str().to_owned(), n))
            .collect();
        Summary {
            files: files.to_vec(),
            input_pairs,
            pairs: questions.len(),
            unique_categories: categories.len(),
            value_min: values.clone().min(),
            value_max: values.max(),
            value_normalized_min: normalized.clone().min(),
            value_normalized_max: normalized.max(),
            without_value: questions.iter().filter(|q| q.value.is_none()).count(),
            rephrased: questions.iter().filter(|q| q.rephrased).count(),
            per_round,
            skipped: skipped_counts,
            skipped_total: skipped.len(),
        }
    }

    /// The statistics as two Markdown tables (dataset, then drop reasons in check order).
    pub fn to_markdown(&self) -> String {
        let range = |a: Option<u32>, b: Option<u32>| match (a, b) {
            (Some(a), Some(b)) => format!("${a}–${b}"),
            _ => "–".to_owned(),
        };
        let mut s = String::new();
        let _ = writeln!(s, "| Statistic | Value |\n|---|---|");
        let _ = writeln!(s, "| Input clues | {} |", self.input_pairs);
        let _ = writeln!(s, "| Total question–answer pairs | {} |", self.pairs);
        let _ = writeln!(s, "| Unique categories | {} |", self.unique_categories);
        let _ = writeln!(
            s,
            "| Clue values (as aired) | {} |",
            range(self.value_min, self.value_max)
        );
        let _ = writeln!(
            s,
            "| Clue values (normalized) | {} |",
            range(self.value_normalized_min, self.value_normalized_max)
        );
        let _ = writeln!(s, "| Pairs without a value | {} |", self.without_value);
        let _ = writeln!(s, "| Rephrased pairs | {} |", self.rephrased);
        for (round, n) in &self.per_round {
            let _ = writeln!(s, "| Round: {round} | {n} |");
        }
        let _ = writeln!(s, "\n| Drop reason | Pairs |\n|---|---|");
        for reason in schema::rift::SkipReason::ALL {
            let n = self.skipped.get(reason.as_str()).copied().unwrap_or(0);
            let _ = writeln!(s, "| {} | {n} |", reason.as_str());
        }
        let _ = writeln!(s, "| total dropped | {} |", self.skipped_total);
        s
    }
}
