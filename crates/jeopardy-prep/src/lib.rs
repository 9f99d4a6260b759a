//! Loads Jeopardy! clue sets (JSON and CSV layouts) and cleans them into RIFT question/answer pairs.
//!
//! The cleaning follows the RIFT paper's order: (optional) LLM rephrasing, drop answers with a comma,
//! drop pairs relying on superscript/subscript, strip diacritics (NFKD), drop remaining non-ASCII, `&` → `and`
//! in questions. Before that it removes transport artefacts and drops media clues. Every dropped pair is kept with
//! its reason. Rephrasing is expressed as prompt records out and response records in: this crate never calls a
//! model and knows nothing about HTTP; it knows nothing about prompts for the benchmark either.
//!
//! Difficulty: the clue value as aired, and a normalized value. Jeopardy! doubled its clue values on 2001-11-26,
//! so the rule is: a value aired before 2001-11-26 is doubled, later values are kept; clues without a value
//! (Final Jeopardy!, tiebreakers) have none. Daily Double wagers cannot be told apart in the public data and are
//! treated like any other value.
//!
//! `normalize_value` applies that rule; every dropped pair is a `schema::rift::SkippedQuestion` with its `SkipReason`,
//! and `Summary` gives Table 1 and the drop counts. The steps, and which of them are ours rather than the paper's, are
//! in `docs/rift-data.md`.

mod clean;
mod load;
mod rephrase;
mod summary;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use schema::rift::{Question, SkipReason, SkippedQuestion};

pub use load::{Layout, RawClue, detect_layout, load_clues, parse_value};
use rephrase::rephrase_id;
pub use rephrase::{Rephrasing, Rephrasings, parse_rephrasings, rephrase_requests};
pub use summary::Summary;

/// The air date from which clue values are on today's scale (values before it are doubled).
pub const VALUE_DOUBLING_DATE: &str = "2001-11-26";

/// Clues in the public Jeopardy! file the RIFT paper starts from (its JSON layout; the CSV twin has the same rows).
pub const PUBLISHED_CLUES: usize = 216_930;

/// Question/answer pairs the RIFT paper kept after its clean-up (its baseline's n).
pub const PUBLISHED_QUESTIONS: usize = 83_453;

/// Errors of loading and writing; a malformed record names file, record (0-based index) and field.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: record {record}: field `{field}`: {message}")]
    Malformed {
        path: PathBuf,
        record: usize,
        field: String,
        message: String,
    },
    #[error(transparent)]
    Schema(#[from] schema::Error),
}

/// The result of preparing one or more source files.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub questions: Vec<Question>,
    pub skipped: Vec<SkippedQuestion>,
    pub summary: Summary,
}

/// The normalized value: doubled before [`VALUE_DOUBLING_DATE`], kept after; None stays None.
pub fn normalize_value(value: Option<u32>, air_date: &str) -> Option<u32> {
    value.map(|v| {
        if air_date < VALUE_DOUBLING_DATE {
            v.saturating_mul(2)
        } else {
            v
        }
    })
}

/// A clue after the artefact clean-up and the empty/media checks: the input of rephrasing.
#[derive(Debug, Clone)]
pub(crate) struct Cleaned {
    pub(crate) category: String,
    pub(crate) question: String,
    pub(crate) answer: String,
}

/// Artefact clean-up plus the two checks that precede rephrasing (empty, media).
pub(crate) fn pre_clean(raw: &RawClue) -> Result<Cleaned, (SkipReason, Option<String>)> {
    let question = clean::clean_artefacts(&raw.question);
    let answer = clean::unquote_answer(&clean::clean_artefacts(&raw.answer));
    let category = clean::clean_artefacts(&raw.category);
    if let Some(m) = clean::media_marker(&question) {
        return Err((SkipReason::Media, Some(m.to_owned())));
    }
    if question.is_empty() || answer.is_empty() {
        return Err((SkipReason::Empty, None));
    }
    Ok(Cleaned {
        category,
        question,
        answer,
    })
}

/// Runs the whole preparation over clues in order; `rephrasings` switches the LLM rephrasing step on.
///
/// `files` names the inputs for the summary.
pub fn prepare(clues: &[RawClue], rephrasings: Option<&Rephrasings>, files: &[String]) -> Prepared {
    let mut questions = Vec::new();
    let mut skipped = Vec::new();
    for raw in clues {
        let skip = |reason: SkipReason, detail: Option<String>, q: &str, a: &str, cat: &str| {
            SkippedQuestion {
                source: raw.source.clone(),
                reason,
                detail,
                category: cat.to_owned(),
                question: q.to_owned(),
                answer: a.to_owned(),
            }
        };
        let cleaned = match pre_clean(raw) {
            Ok(c) => c,
            Err((reason, detail)) => {
                skipped.push(skip(
                    reason,
                    detail,
                    &raw.question,
                    &raw.answer,
                    &raw.category,
                ));
                continue;
            }
        };
        let (mut question, mut answer, rephrased) = match rephrasings {
            None => (cleaned.question.clone(), cleaned.answer.clone(), false),
            Some(map) => match map.get(&rephrase_id(&cleaned)) {
                Some(r) => (
                    clean::collapse_ws_pub(&r.question),
                    clean::unquote_answer(&r.answer),
                    true,
                ),
                None => {
                    let d = Some("no usable rephrasing for this clue".to_owned());
                    skipped.push(skip(
                        SkipReason::RephraseFailed,
                        d,
                        &cleaned.question,
                        &cleaned.answer,
                        &cleaned.category,
                    ));
                    continue;
                }
            },
        };
        if question.is_empty() || answer.is_empty() {
            skipped.push(skip(
                SkipReason::Empty,
                None,
                &question,
                &answer,
                &cleaned.category,
            ));
            continue;
        }
        if answer.contains(',') {
            skipped.push(skip(
                SkipReason::AnswerComma,
                None,
                &question,
                &answer,
                &cleaned.category,
            ));
            continue;
        }
        if let Some(m) = clean::super_subscript_marker(&question)
            .or_else(|| clean::super_subscript_marker(&answer))
        {
            skipped.push(skip(
                SkipReason::SuperSubscript,
                Some(m),
                &question,
                &answer,
                &cleaned.category,
            ));
            continue;
        }
        question = clean::strip_diacritics(&question);
        answer = clean::strip_diacritics(&answer);
        let category = clean::strip_diacritics(&cleaned.category);
        if let Some(c) =
            clean::first_non_ascii(&question).or_else(|| clean::first_non_ascii(&answer))
        {
            let d = Some(format!("{c:?} (U+{:04X})", c as u32));
            skipped.push(skip(SkipReason::NonAscii, d, &question, &answer, &category));
            continue;
        }
        question = clean::ampersand_to_and(&question);
        questions.push(Question {
            row: questions.len() as u64,
            question,
            answer,
            category,
            value: raw.value,
            value_normalized: normalize_value(raw.value, &raw.air_date),
            round: raw.round.clone(),
            air_date: raw.air_date.clone(),
            show_number: raw.show_number,
            source: Some(raw.source.clone()),
            rephrased,
        });
    }
    let summary = Summary::compute(files, clues.len(), &questions, &skipped);
    Prepared {
        questions,
        skipped,
        summary,
    }
}

/// Loads and prepares several files (in the order given, rows numbered across them).
pub fn prepare_files(
    paths: &[PathBuf],
    rephrasings: Option<&Rephrasings>,
) -> Result<Prepared, Error> {
    let mut clues = Vec::new();
    let mut files = Vec::new();
    for path in paths {
        let loaded = load_clues(path)?;
        tracing::info!(path = %path.display(), clues = loaded.len(), "Loaded Jeopardy! clues.");
        files.push(path.display().to_string());
        clues.extend(loaded);
    }
    Ok(prepare(&clues, rephrasings, &files))
}

/// The files written by [`write_outputs`].
#[derive(Debug, Clone)]
pub struct OutputPaths {
    pub questions: PathBuf,
    pub skipped: PathBuf,
    pub summary_json: PathBuf,
    pub summary_md: PathBuf,
}

impl OutputPaths {
    pub fn in_dir(dir: &Path) -> OutputPaths {
        OutputPaths {
            questions: dir.join("questions.jsonl"),
            skipped: dir.join("skipped.jsonl"),
            summary_json: dir.join("summary.json"),
            summary_md: dir.join("summary.md"),
        }
    }
}

/// Writes `questions.jsonl`, `skipped.jsonl`, `summary.json` and `summary.md` into `dir`, each atomically.
pub fn write_outputs(prepared: &Prepared, dir: &Path) -> Result<OutputPaths, Error> {
    let paths = OutputPaths::in_dir(dir);
    schema::write_jsonl_atomic(&paths.questions, &prepared.questions)?;
    schema::write_jsonl_atomic(&paths.skipped, &prepared.skipped)?;
    let json = serde_json::to_vec_pretty(&prepared.summary).expect("a summary always serializes");
    schema::write_atomic(&paths.summary_json, &json)?;
    schema::write_atomic(&paths.summary_md, prepared.summary.to_markdown().as_bytes())?;
    Ok(paths)
}

/// Reads a prepared `questions.jsonl`, checking that rows are numbered 0, 1, 2, … in order.
pub fn load_questions(path: &Path) -> Result<Vec<Question>, Error> {
    let questions: Vec<Question> = schema::read_jsonl(path)?;
    for (i, q) in questions.iter().enumerate() {
        if q.row != i as u64 {
            return Err(Error::Malformed {
                path: path.to_owned(),
                record: i,
                field: "row".to_owned(),
                message: format!("expected row {i}, found {}", q.row),
            });
        }
    }
    Ok(questions)
}

/// Counts per skip reason, every reason present (zeros included), in check order.
pub fn skip_counts(skipped: &[SkippedQuestion]) -> BTreeMap<SkipReason, usize> {
    let mut counts: BTreeMap<SkipReason, usize> = SkipReason::ALL.iter().map(|r| (*r, 0)).collect();
    for s in skipped {
        *counts.entry(s.reason).or_default() += 1;
    }
    counts
}

#[cfg(test)]
mod tests;
