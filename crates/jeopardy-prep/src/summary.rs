//! The Table-1-like statistics of a prepared dataset, plus the counts per drop reason.

use std::collections::{BTreeMap, BTreeSet};

use schema::Table;
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

    /// The dataset's statistics (Table 1 of the RIFT paper, with our counts): one row per statistic.
    pub fn table1(&self) -> Table {
        let range = |a: Option<u32>, b: Option<u32>| match (a, b) {
            (Some(a), Some(b)) => format!("${a}–${b}"),
            _ => "–".to_owned(),
        };
        let mut t = Table::left_aligned(&["Statistic", "Value"]);
        let mut row = |k: &str, v: String| t.push(vec![k.to_owned(), v]);
        row("Input clues", self.input_pairs.to_string());
        row("Total question–answer pairs", self.pairs.to_string());
        row("Unique categories", self.unique_categories.to_string());
        row(
            "Clue values (as aired)",
            range(self.value_min, self.value_max),
        );
        row(
            "Clue values (normalized)",
            range(self.value_normalized_min, self.value_normalized_max),
        );
        row("Pairs without a value", self.without_value.to_string());
        row("Rephrased pairs", self.rephrased.to_string());
        for (round, n) in &self.per_round {
            row(&format!("Round: {round}"), n.to_string());
        }
        t
    }

    /// The dropped pairs per reason, in check order, and their total.
    pub fn drop_reasons(&self) -> Table {
        let mut t = Table::left_aligned(&["Drop reason", "Pairs"]);
        for reason in schema::rift::SkipReason::ALL {
            let n = self.skipped.get(reason.as_str()).copied().unwrap_or(0);
            t.push(vec![reason.as_str().to_owned(), n.to_string()]);
        }
        t.push(vec![
            "total dropped".to_owned(),
            self.skipped_total.to_string(),
        ]);
        t
    }

    /// The statistics as two Markdown tables (dataset, then drop reasons in check order).
    pub fn to_markdown(&self) -> String {
        format!(
            "{}\n{}",
            self.table1().to_markdown(),
            self.drop_reasons().to_markdown()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_is_the_two_tables_with_a_blank_line_between() {
        let s = Summary {
            files: vec!["a.tsv".to_owned()],
            input_pairs: 10,
            pairs: 8,
            unique_categories: 3,
            value_min: Some(200),
            value_max: Some(2000),
            value_normalized_min: None,
            value_normalized_max: None,
            without_value: 1,
            rephrased: 2,
            per_round: BTreeMap::from([("J!".to_owned(), 8)]),
            skipped: BTreeMap::from([("media".to_owned(), 2)]),
            skipped_total: 2,
        };
        assert_eq!(
            s.to_markdown(),
            "| Statistic | Value |\n|---|---|\n| Input clues | 10 |\n| Total question–answer pairs | 8 |\n\
             | Unique categories | 3 |\n| Clue values (as aired) | $200–$2000 |\n| Clue values (normalized) | – |\n\
             | Pairs without a value | 1 |\n| Rephrased pairs | 2 |\n| Round: J! | 8 |\n\n\
             | Drop reason | Pairs |\n|---|---|\n| empty | 0 |\n| media | 2 |\n| rephrase_failed | 0 |\n\
             | answer_comma | 0 |\n| super_subscript | 0 |\n| non_ascii | 0 |\n| total dropped | 2 |\n"
        );
    }
}
