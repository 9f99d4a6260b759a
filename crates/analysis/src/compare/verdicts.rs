//! The two copies of a run's per-answer verdicts must agree: `rift/answer-scores.jsonl` (the records) and the
//! Parquet answer tables listed in `rift/answer-tables.json` (what the tables and the comparison read). Before a
//! comparison uses a model's answers from the Parquet tables, every one of its records in the JSONL is checked
//! against them (verdict by prompt and depth, and the count of answers), and the first disagreement fails the
//! comparison with one line naming the file, the record and the field. A run without answer tables reads the
//! JSONL alone: one copy, nothing to check.

use std::path::Path;

use schema::paths::RunPaths;
use schema::rift::{AnswerScore, Verdict};

use super::rift::{Prompts, RIGHT, UNJUDGED, WRONG};
use crate::Error;
use crate::rift::prompt_key;

/// Records read at a time.
const CHUNK: usize = 1 << 16;

fn code_name(code: u8) -> &'static str {
    match code {
        RIGHT => "correct",
        WRONG => "incorrect or missing",
        UNJUDGED => "unjudged",
        _ => "absent",
    }
}

fn code_of(v: Verdict) -> u8 {
    match v {
        Verdict::Correct => RIGHT,
        Verdict::Incorrect | Verdict::Missing => WRONG,
        Verdict::Unjudged => UNJUDGED,
    }
}

/// Checks `model`'s answers read from the run's answer tables (`prompts`) against the run's
/// `rift/answer-scores.jsonl`; Ok when the run has no answer tables (the JSONL was the one read) or no JSONL.
pub fn check(run: &Path, model: &str, prompts: &Prompts) -> Result<(), Error> {
    let paths = RunPaths::new(run);
    let (jsonl, list) = (paths.rift_answer_scores(), paths.rift_answer_tables());
    if !jsonl.is_file() || !list.is_file() {
        return Ok(());
    }
    let disagree = |message: String| Error::Input {
        path: jsonl.clone(),
        message,
    };
    let mut record = 0u64;
    let mut seen = 0u64;
    schema::read_jsonl_chunks(&jsonl, CHUNK, |batch: Vec<AnswerScore>| {
        for a in batch {
            record += 1;
            if a.model != model {
                continue;
            }
            seen += 1;
            let key = prompt_key(&a.prompt_id, a.sample_index);
            let table = prompts
                .get(&key)
                .and_then(|p| p.verdicts.get(a.depth as usize).copied())
                .unwrap_or(u8::MAX);
            let here = code_of(a.verdict);
            if here != table {
                return Err(disagree(format!(
                    "record {record} (model `{model}`, prompt `{key}`, depth {}): field verdict is {} here but {} \
                     in the answer tables of {}; the two copies of the verdicts disagree (rerun the RIFT score \
                     stage)",
                    a.depth,
                    code_name(here),
                    code_name(table),
                    list.display()
                )));
            }
        }
        Ok(())
    })?;
    let in_tables: u64 = prompts.values().map(|p| p.verdicts.len() as u64).sum();
    if seen != in_tables {
        return Err(disagree(format!(
            "holds {seen} answers of model `{model}` but the answer tables of {} hold {in_tables}; the two copies \
             of the verdicts disagree (rerun the RIFT score stage)",
            list.display()
        )));
    }
    Ok(())
}
