//! Judging (question, expected, given) pairs directly, outside a run: `cargo xtask rift judge-pairs`.
//!
//! [`read_pairs`] reads a CSV with the columns `id, question, expected, given` (others are ignored; an optional
//! `label` column holds CORRECT / INCORRECT and an optional `kind` column a category). [`judge_pairs`] settles each
//! pair with exactly the pipeline's code: `scoring::rift::pre_judge` first, then, when a judge is given, the judge
//! prompt, reply parsing and retries of `harness::rift::judge` ([`crate::rift::ask_judge`]) through the caller's
//! client. A pair is UNDECIDED when the pre-judge cannot settle it and no judge was given (source `unjudged`), or
//! when the judge gave no usable verdict after every try (also `unjudged`). [`write_verdicts`] writes
//! `id, verdict, source`.
//!
//! With labels, [`kind_stats`] measures the verdicts per kind: coverage (the share of pairs settled) and
//! precision (the share of settled verdicts that match the label), and counts false CORRECT verdicts (CORRECT where
//! the label is INCORRECT), the error a judge must never make.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use inference_client::Client;
use schema::paths::ModelPaths;
use schema::rift::{JudgeRequest, Verdict};

use crate::Error;
use crate::helper::JudgeRef;

/// One pair to judge.
#[derive(Debug, Clone, PartialEq)]
pub struct Pair {
    pub id: String,
    pub question: String,
    pub expected: String,
    pub given: String,
    /// The `kind` column, when the file has one.
    pub kind: Option<String>,
    /// The `label` column, when the file has one and the row's cell is not empty: true for CORRECT.
    pub label: Option<bool>,
}

/// A pair's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PairVerdict {
    Correct,
    Incorrect,
    /// Neither the pre-judge nor a judge settled it.
    Undecided,
}

impl PairVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            PairVerdict::Correct => "CORRECT",
            PairVerdict::Incorrect => "INCORRECT",
            PairVerdict::Undecided => "UNDECIDED",
        }
    }
}

/// Who settled a pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PairSource {
    PreJudge,
    Llm,
    /// Nobody: no judge was given, or the judge gave no usable verdict.
    Unjudged,
}

impl PairSource {
    pub fn as_str(self) -> &'static str {
        match self {
            PairSource::PreJudge => "pre_judge",
            PairSource::Llm => "llm",
            PairSource::Unjudged => "unjudged",
        }
    }
}

/// The verdict on one pair.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgedPair {
    pub id: String,
    pub verdict: PairVerdict,
    pub source: PairSource,
}

/// The columns [`read_pairs`] needs.
pub const REQUIRED_COLUMNS: [&str; 4] = ["id", "question", "expected", "given"];

/// Reads a pairs CSV. A missing column, a short row, an empty id, a repeated id or a label other than CORRECT /
/// INCORRECT (any case; an empty cell means unlabelled) is an input error naming the file, the row (the CSV's line
/// number, the header being row 1) and the field.
pub fn read_pairs(path: &Path) -> Result<Vec<Pair>, Error> {
    let bad = |row: u64, field: &str, msg: &str| {
        Error::Input(format!(
            "{}: row {row}: field `{field}`: {msg}",
            path.display()
        ))
    };
    let mut rdr = csv::ReaderBuilder::new()
        .flexible(true)
        .from_path(path)
        .map_err(|e| Error::Input(format!("{}: {e}", path.display())))?;
    let headers = rdr
        .headers()
        .map_err(|e| Error::Input(format!("{}: row 1: {e}", path.display())))?
        .clone();
    let col = |name: &str| headers.iter().position(|h| h.trim() == name);
    let mut required = [0; 4];
    for (slot, name) in required.iter_mut().zip(REQUIRED_COLUMNS) {
        *slot = col(name).ok_or_else(|| bad(1, name, "no such column"))?;
    }
    let (c_kind, c_label) = (col("kind"), col("label"));
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for (i, rec) in rdr.records().enumerate() {
        let fallback = i as u64 + 2;
        let rec = rec.map_err(|e| {
            let row = e.position().map_or(fallback, |p| p.line());
            Error::Input(format!("{}: row {row}: {e}", path.display()))
        })?;
        let row = rec.position().map_or(fallback, |p| p.line());
        let field = |c: usize, name: &str| {
            rec.get(c)
                .map(str::to_owned)
                .ok_or_else(|| bad(row, name, "missing (the row is short)"))
        };
        let [id, question, expected, given] =
            [0, 1, 2, 3].map(|k| field(required[k], REQUIRED_COLUMNS[k]));
        let (id, question, expected, given) = (id?, question?, expected?, given?);
        let id = id.trim().to_owned();
        if id.is_empty() {
            return Err(bad(row, "id", "empty"));
        }
        if !seen.insert(id.clone()) {
            return Err(bad(row, "id", &format!("`{id}` appears twice")));
        }
        let kind = c_kind
            .map(|c| field(c, "kind").map(|k| k.trim().to_owned()))
            .transpose()?;
        let label = match c_label {
            None => None,
            Some(c) => match field(c, "label")?.trim().to_ascii_uppercase().as_str() {
                "" => None,
                "CORRECT" => Some(true),
                "INCORRECT" => Some(false),
                other => {
                    return Err(bad(
                        row,
                        "label",
                        &format!("`{other}` is neither CORRECT nor INCORRECT"),
                    ));
                }
            },
        };
        out.push(Pair {
            id,
            question,
            expected,
            given,
            kind,
            label,
        });
    }
    Ok(out)
}

/// The LLM judge of [`judge_pairs`]: the same settings and files as `harness::rift::judge`.
#[derive(Debug, Clone, Copy)]
pub struct PairJudge<'a> {
    /// The RIFT judge with its prompt ({question}, {expected}, {given}) and request settings (`[judges.rift]`).
    pub judge: JudgeRef<'a>,
    /// Where judge prompts, judge responses (resumed on a rerun) and verdicts go.
    pub files: &'a ModelPaths,
    pub client: &'a Client,
}

/// Judges every pair: the pre-judge, then (for what it leaves open) the judge when one is given. Pairs with the
/// same question, expected and given answer share one judge request, as in a run.
pub fn judge_pairs(
    pairs: &[Pair],
    judge: Option<&PairJudge<'_>>,
) -> Result<Vec<JudgedPair>, Error> {
    let pre: Vec<Option<bool>> = pairs
        .iter()
        .map(|p| scoring::rift::pre_judge_for(&p.question, &p.given, &p.expected))
        .collect();
    let mut llm: HashMap<String, Verdict> = HashMap::new();
    if let Some(j) = judge {
        j.judge.check()?;
        let mut requests: Vec<JudgeRequest> = Vec::new();
        let mut requested = HashSet::new();
        for (p, _) in pairs.iter().zip(&pre).filter(|(_, v)| v.is_none()) {
            let id = scoring::rift::judge_id(&p.question, &p.expected, &p.given);
            if requested.insert(id.clone()) {
                requests.push(JudgeRequest {
                    id,
                    question: p.question.clone(),
                    expected: p.expected.clone(),
                    given: p.given.clone(),
                });
            }
        }
        let prompts =
            scoring::rift::judge_prompts(&requests, j.judge.prompt, &j.judge.call.params());
        schema::write_jsonl_atomic(&j.files.judge_prompts(), &prompts)?;
        let (verdicts, _) = crate::rift::ask_judge(
            j.judge.model,
            &prompts,
            j.judge.call,
            &j.files.judge_responses(),
            j.client,
        )?;
        schema::write_jsonl_atomic(&j.files.verdicts(), &verdicts)?;
        llm = verdicts
            .into_iter()
            .filter_map(|v| v.verdict.map(|verdict| (v.id, verdict)))
            .collect();
    }
    Ok(pairs
        .iter()
        .zip(pre)
        .map(|(p, pre)| {
            let (verdict, source) = match pre {
                Some(true) => (PairVerdict::Correct, PairSource::PreJudge),
                Some(false) => (PairVerdict::Incorrect, PairSource::PreJudge),
                None => {
                    let id = scoring::rift::judge_id(&p.question, &p.expected, &p.given);
                    match llm.get(&id) {
                        Some(Verdict::Correct) => (PairVerdict::Correct, PairSource::Llm),
                        Some(Verdict::Incorrect) => (PairVerdict::Incorrect, PairSource::Llm),
                        _ => (PairVerdict::Undecided, PairSource::Unjudged),
                    }
                }
            };
            JudgedPair {
                id: p.id.clone(),
                verdict,
                source,
            }
        })
        .collect())
}

/// Writes `id, verdict, source` to the CSV `out` (atomically).
pub fn write_verdicts(out: &Path, judged: &[JudgedPair]) -> Result<(), Error> {
    let io = |e: String| Error::Output {
        path: out.to_owned(),
        message: e,
    };
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(["id", "verdict", "source"])
        .map_err(|e| io(e.to_string()))?;
    for j in judged {
        w.write_record([
            schema::csv_cell(&j.id).as_ref(),
            j.verdict.as_str(),
            j.source.as_str(),
        ])
        .map_err(|e| io(e.to_string()))?;
    }
    let bytes = w.into_inner().map_err(|e| io(e.to_string()))?;
    schema::write_atomic(out, &bytes)?;
    Ok(())
}

/// How the verdicts fared on the labelled pairs of one kind.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KindStats {
    /// The kind, or `all` for every labelled pair (pairs without a kind count as `-`).
    pub kind: String,
    /// Labelled pairs.
    pub pairs: usize,
    /// Of those, settled (CORRECT or INCORRECT).
    pub settled: usize,
    /// Of the settled, those matching the label.
    pub agree: usize,
    /// Settled CORRECT.
    pub said_correct: usize,
    /// CORRECT where the label is INCORRECT.
    pub false_correct: usize,
    /// INCORRECT where the label is CORRECT.
    pub false_incorrect: usize,
}

impl KindStats {
    /// Settled ÷ pairs (0 for no pairs).
    pub fn coverage(&self) -> f64 {
        share(self.settled, self.pairs).unwrap_or(0.0)
    }

    /// Matching ÷ settled; `None` when nothing was settled.
    pub fn precision(&self) -> Option<f64> {
        share(self.agree, self.settled)
    }

    /// Correct CORRECT verdicts ÷ CORRECT verdicts; `None` when there were none.
    pub fn correct_precision(&self) -> Option<f64> {
        share(self.said_correct - self.false_correct, self.said_correct)
    }

    fn add(&mut self, label: bool, verdict: PairVerdict) {
        self.pairs += 1;
        let said = match verdict {
            PairVerdict::Correct => true,
            PairVerdict::Incorrect => false,
            PairVerdict::Undecided => return,
        };
        self.settled += 1;
        self.said_correct += usize::from(said);
        if said == label {
            self.agree += 1;
        } else if said {
            self.false_correct += 1;
        } else {
            self.false_incorrect += 1;
        }
    }
}

fn share(a: usize, b: usize) -> Option<f64> {
    (b > 0).then(|| a as f64 / b as f64)
}

/// Per-kind statistics of `judged` (in the order of `pairs`) against the labels, kinds in alphabetical order and
/// then `all`; empty when no pair has a label.
pub fn kind_stats(pairs: &[Pair], judged: &[JudgedPair]) -> Vec<KindStats> {
    let mut by: BTreeMap<&str, KindStats> = BTreeMap::new();
    let mut all = KindStats {
        kind: "all".to_owned(),
        ..KindStats::default()
    };
    for (p, j) in pairs.iter().zip(judged) {
        let Some(label) = p.label else { continue };
        let kind = p.kind.as_deref().filter(|k| !k.is_empty()).unwrap_or("-");
        by.entry(kind)
            .or_insert_with(|| KindStats {
                kind: kind.to_owned(),
                ..KindStats::default()
            })
            .add(label, j.verdict);
        all.add(label, j.verdict);
    }
    if all.pairs == 0 {
        return Vec::new();
    }
    by.into_values().chain(std::iter::once(all)).collect()
}

/// The statistics as a Markdown table.
pub fn to_markdown(stats: &[KindStats]) -> String {
    use schema::table::{left, right};
    let mut t = schema::Table::new(vec![
        left("kind"),
        right("pairs"),
        right("settled"),
        right("coverage"),
        right("precision"),
        right("CORRECT verdicts"),
        right("false CORRECT"),
        right("false INCORRECT"),
    ]);
    let pct = |v: Option<f64>| v.map_or_else(|| "–".to_owned(), |v| format!("{:.1}%", v * 100.0));
    for s in stats {
        t.push(vec![
            s.kind.clone(),
            s.pairs.to_string(),
            s.settled.to_string(),
            pct(Some(s.coverage())),
            pct(s.precision()),
            s.said_correct.to_string(),
            s.false_correct.to_string(),
            s.false_incorrect.to_string(),
        ]);
    }
    t.to_markdown()
}
