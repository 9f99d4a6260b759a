//! Auditing the RIFT judgments by hand, as the paper did (it hand-checked 100 judged items and agreed on 98 %).
//!
//! [`sample`] draws a seeded sample of judged answers from a run's answer scores into a CSV with an empty
//! `human_label` column; a person fills it in with CORRECT or INCORRECT; [`agreement`] reads it back and reports how
//! often the verdicts agree with the human labels, and Cohen's κ, overall and per verdict source (pre-judge, LLM).

use std::collections::BTreeMap;
use std::path::Path;

use prompt_gen::rng::Mt19937;
use schema::rift::{AnswerScore, JudgeSource, Verdict};

use crate::Error;

/// The columns of an audit file, in order.
pub const COLUMNS: [&str; 9] = [
    "item",
    "model",
    "prompt_id",
    "question_number",
    "expected",
    "given",
    "verdict",
    "source",
    "human_label",
];

fn source_name(s: JudgeSource) -> &'static str {
    match s {
        JudgeSource::PreJudge => "pre_judge",
        JudgeSource::Llm => "llm",
        JudgeSource::PreJudgeOnly => "pre_judge_only",
        JudgeSource::LlmUnusable => "llm_unusable",
        JudgeSource::None => "none",
    }
}

/// Writes a seeded uniform sample of `n` judged answers (verdict correct or incorrect, an answer given) from
/// `answers` to the CSV `out`, with an empty `human_label` column; returns how many were written.
pub fn sample(answers: &Path, n: usize, seed: u32, out: &Path) -> Result<usize, Error> {
    let all: Vec<AnswerScore> = schema::read_jsonl(answers)?;
    let judged: Vec<&AnswerScore> = all
        .iter()
        .filter(|a| matches!(a.verdict, Verdict::Correct | Verdict::Incorrect) && a.given.is_some())
        .collect();
    let take = n.min(judged.len());
    let mut picks = Mt19937::new(seed)
        .choice_without_replacement(judged.len(), take)
        .unwrap_or_default();
    picks.sort_unstable();
    let mut w = csv::Writer::from_writer(Vec::new());
    let io = |e: csv::Error| Error::Output {
        path: out.to_owned(),
        message: e.to_string(),
    };
    w.write_record(COLUMNS).map_err(io)?;
    for (item, &i) in picks.iter().enumerate() {
        let a = judged[i];
        let verdict = if a.verdict == Verdict::Correct {
            "CORRECT"
        } else {
            "INCORRECT"
        };
        w.write_record([
            (item + 1).to_string(),
            schema::csv_cell(&a.model).into_owned(),
            schema::csv_cell(&a.prompt_id).into_owned(),
            a.question_number.to_string(),
            schema::csv_cell(&a.expected).into_owned(),
            schema::csv_cell(a.given.as_deref().unwrap_or_default()).into_owned(),
            verdict.to_owned(),
            source_name(a.judged_by).to_owned(),
            String::new(),
        ])
        .map_err(io)?;
    }
    let bytes = w.into_inner().map_err(|e| Error::Output {
        path: out.to_owned(),
        message: e.to_string(),
    })?;
    schema::write_atomic(out, &bytes)?;
    Ok(take)
}

/// Agreement of verdicts with human labels over one group of items.
#[derive(Debug, Clone, PartialEq)]
pub struct Agreement {
    /// "all", or a verdict source.
    pub group: String,
    pub items: usize,
    pub agree: usize,
    /// Share of items where verdict and label agree (0–1).
    pub share: f64,
    /// Cohen's κ; `None` when chance agreement is 1 (every item has the same verdict and label).
    pub kappa: Option<f64>,
}

/// Reads a filled-in audit file; rows with an empty `human_label` are left out. A label other than CORRECT or
/// INCORRECT (any case) is an error naming the row.
pub fn agreement(labels: &Path) -> Result<Vec<Agreement>, Error> {
    let bad =
        |row: usize, msg: String| Error::Input(format!("{}: row {row}: {msg}", labels.display()));
    let mut rdr = csv::Reader::from_path(labels).map_err(|e| bad(1, e.to_string()))?;
    let headers = rdr.headers().map_err(|e| bad(1, e.to_string()))?.clone();
    let col = |name: &str| {
        headers
            .iter()
            .position(|h| h.trim() == name)
            .ok_or_else(|| bad(1, format!("no `{name}` column")))
    };
    let (c_verdict, c_source, c_label) = (col("verdict")?, col("source")?, col("human_label")?);
    let mut by: BTreeMap<String, Vec<(bool, bool)>> = BTreeMap::new();
    for (i, rec) in rdr.records().enumerate() {
        let row = i + 2;
        let rec = rec.map_err(|e| bad(row, e.to_string()))?;
        let label = rec.get(c_label).unwrap_or("").trim().to_ascii_uppercase();
        if label.is_empty() {
            continue;
        }
        let parse = |v: &str, field: &str| match v {
            "CORRECT" => Ok(true),
            "INCORRECT" => Ok(false),
            other => Err(bad(
                row,
                format!("field `{field}`: {other:?} is neither CORRECT nor INCORRECT"),
            )),
        };
        let human = parse(&label, "human_label")?;
        let verdict = parse(
            &rec.get(c_verdict).unwrap_or("").trim().to_ascii_uppercase(),
            "verdict",
        )?;
        let source = rec.get(c_source).unwrap_or("").trim().to_owned();
        by.entry("all".to_owned())
            .or_default()
            .push((verdict, human));
        by.entry(source).or_default().push((verdict, human));
    }
    Ok(by
        .into_iter()
        .map(|(group, pairs)| summarize(group, &pairs))
        .collect())
}

fn summarize(group: String, pairs: &[(bool, bool)]) -> Agreement {
    let n = pairs.len() as f64;
    let agree = pairs.iter().filter(|(v, h)| v == h).count();
    let po = agree as f64 / n;
    let pv = pairs.iter().filter(|(v, _)| *v).count() as f64 / n;
    let ph = pairs.iter().filter(|(_, h)| *h).count() as f64 / n;
    let pe = pv * ph + (1.0 - pv) * (1.0 - ph);
    Agreement {
        group,
        items: pairs.len(),
        agree,
        share: po,
        kappa: (pe < 1.0).then(|| (po - pe) / (1.0 - pe)),
    }
}

/// The agreement as a table.
pub fn table(rows: &[Agreement]) -> schema::Table {
    use schema::table::{left, right};
    let mut t = schema::Table::new(vec![
        left("items judged by"),
        right("labelled items"),
        right("agree"),
        right("agreement (%)"),
        right("Cohen's κ"),
    ]);
    for r in rows {
        t.push(vec![
            r.group.clone(),
            r.items.to_string(),
            r.agree.to_string(),
            format!("{:.1}", 100.0 * r.share),
            r.kappa
                .map_or_else(|| "–".to_owned(), |k| format!("{k:.2}")),
        ]);
    }
    t
}

/// The agreement as a Markdown table.
pub fn to_markdown(rows: &[Agreement]) -> String {
    table(rows).to_markdown()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kappa_of_known_tables() {
        // 20 items: verdict/label CORRECT/CORRECT 10, CORRECT/INCORRECT 2, INCORRECT/CORRECT 3, INCORRECT/INCORRECT 5.
        let mut pairs = vec![(true, true); 10];
        pairs.extend(vec![(true, false); 2]);
        pairs.extend(vec![(false, true); 3]);
        pairs.extend(vec![(false, false); 5]);
        let a = summarize("all".to_owned(), &pairs);
        assert_eq!((a.items, a.agree), (20, 15));
        // po = 0.75, pe = 0.6 · 0.65 + 0.4 · 0.35 = 0.53, κ = 0.22 / 0.47.
        assert!((a.kappa.unwrap() - 0.22 / 0.47).abs() < 1e-12);
        let same = summarize("x".to_owned(), &[(true, true); 4]);
        assert_eq!((same.share, same.kappa), (1.0, None));
    }
}
