//! The two canonical RIFT frames (the answer table and the prompt table): their columns, how they are built from
//! score records (with the answer table's integer codes), and where a run folder keeps them (the Parquet answer
//! tables listed in `answer-tables.json`, or the JSONL records).

use std::path::Path;

use polars::prelude::*;

use super::structure_name;
use crate::Error;
use crate::tables;

/// Columns of the canonical answer table: the answer's model, structure and prompt key (strings, for people and
/// labels), the same two keys as integer codes (`group`: the (model, structure) pair, `prompt`: the prompt key,
/// each numbered in the order the table first holds it), the answer's depth and its verdict flags. The aggregation
/// groups by the codes and reads the strings only for each prompt's first answer (depth 0), so a large table is
/// never hashed or decoded string by string. `llm_judged` marks an answer an LLM judge decided (the share a judge
/// correction applies to).
pub const ANSWER_COLUMNS: [&str; 13] = [
    "model",
    "structure",
    "prompt_id",
    "group",
    "prompt",
    "depth",
    "correct",
    "incorrect",
    "unjudged",
    "wrong_question",
    "wrong_question_correct",
    "value_normalized",
    "llm_judged",
];

/// The answer table's schema ([`ANSWER_COLUMNS`] with their types).
pub fn answer_schema() -> Schema {
    let mut schema = Schema::default();
    for (name, dtype) in ANSWER_COLUMNS.iter().zip([
        DataType::String,
        DataType::String,
        DataType::String,
        DataType::UInt32,
        DataType::UInt32,
        DataType::UInt32,
        DataType::Boolean,
        DataType::Boolean,
        DataType::Boolean,
        DataType::Boolean,
        DataType::Boolean,
        DataType::UInt32,
        DataType::Boolean,
    ]) {
        schema.insert((*name).into(), dtype);
    }
    schema
}

/// Columns of the canonical prompt table.
pub const PROMPT_COLUMNS: [&str; 10] = [
    "model",
    "structure",
    "prompt_id",
    "num_questions",
    "correct",
    "unjudged",
    "prompt_tokens",
    "outcome",
    "stopped_early",
    "ran_long",
];

fn outcome_name(o: schema::rift::ReplyOutcome) -> &'static str {
    match o {
        schema::rift::ReplyOutcome::Ok => "ok",
        schema::rift::ReplyOutcome::Empty => "empty",
        schema::rift::ReplyOutcome::Malformed => "malformed",
        schema::rift::ReplyOutcome::Truncated => "truncated",
        schema::rift::ReplyOutcome::Failed => "failed",
    }
}

/// The per-sample prompt key: the prompt id, with `#<sample index>` appended for repeated samples.
pub(crate) fn prompt_key(prompt_id: &str, sample_index: u32) -> String {
    if sample_index == 0 {
        prompt_id.to_owned()
    } else {
        format!("{prompt_id}#{sample_index}")
    }
}

/// The integer codes of an answer table being built, kept across batches so that one file numbers each
/// (model, structure) group and each prompt once, whatever batch first holds it.
#[derive(Debug, Default, Clone)]
pub struct AnswerCodes {
    groups: std::collections::HashMap<(String, schema::rift::Structure), u32>,
    prompts: std::collections::HashMap<(String, schema::rift::Structure, String), u32>,
}

impl AnswerCodes {
    /// The answer table of `records`, coded consistently with every earlier call on this coder.
    pub fn frame(&mut self, records: &[schema::rift::AnswerScore]) -> Result<DataFrame, Error> {
        answers_frame_coded(records, self)
    }
}

/// Scans of several answer tables as one, each file's codes moved into its own range (`group` by 2^16 per file,
/// `prompt` by 2^32 per file, as `u64`), since every file numbers its groups and prompts from 0.
pub fn concat_answer_tables(scans: Vec<LazyFrame>) -> Result<LazyFrame, Error> {
    if scans.len() == 1 {
        return Ok(scans.into_iter().next().expect("one scan"));
    }
    let moved = scans
        .into_iter()
        .enumerate()
        .map(|(i, scan)| {
            let i = i as u64;
            scan.with_columns([
                (col("group").cast(DataType::UInt64) + lit(i << 16))
                    .cast(DataType::UInt32)
                    .alias("group"),
                (col("prompt").cast(DataType::UInt64) + lit(i << 32)).alias("prompt"),
            ])
        })
        .collect::<Vec<_>>();
    concat(moved, UnionArgs::default()).map_err(Error::polars("joining answer tables"))
}

/// The answer table from `AnswerScore` records.
pub fn answers_frame(records: &[schema::rift::AnswerScore]) -> Result<DataFrame, Error> {
    answers_frame_coded(records, &mut AnswerCodes::default())
}

fn answers_frame_coded(
    records: &[schema::rift::AnswerScore],
    codes: &mut AnswerCodes,
) -> Result<DataFrame, Error> {
    use schema::rift::Verdict;
    let prompt_ids: Vec<String> = records
        .iter()
        .map(|r| prompt_key(&r.prompt_id, r.sample_index))
        .collect();
    let group: Vec<u32> = records
        .iter()
        .map(|r| {
            let next = codes.groups.len() as u32;
            *codes
                .groups
                .entry((r.model.clone(), r.structure))
                .or_insert(next)
        })
        .collect();
    let prompt: Vec<u32> = records
        .iter()
        .zip(&prompt_ids)
        .map(|(r, id)| {
            let next = codes.prompts.len() as u32;
            *codes
                .prompts
                .entry((r.model.clone(), r.structure, id.clone()))
                .or_insert(next)
        })
        .collect();
    tables::Columns::of(records)
        .col("model", |r| r.model.as_str())
        .col("structure", |r| structure_name(r.structure))
        .values("prompt_id", prompt_ids)
        .values("group", group)
        .values("prompt", prompt)
        .col("depth", |r| r.depth)
        .col("correct", |r| r.verdict == Verdict::Correct)
        .col("incorrect", |r| r.verdict == Verdict::Incorrect)
        .col("unjudged", |r| r.verdict == Verdict::Unjudged)
        .col("wrong_question", |r| {
            r.verdict == Verdict::Incorrect && r.wrong_question_of.is_some()
        })
        .col("wrong_question_correct", |r| {
            r.verdict == Verdict::Correct && r.wrong_question_of.is_some()
        })
        .col("value_normalized", |r| r.value_normalized)
        .col("llm_judged", |r| {
            r.judged_by == schema::rift::JudgeSource::Llm
        })
        .frame("RIFT answer table")
}

/// The prompt table from `PromptScore` records.
pub fn prompts_frame(records: &[schema::rift::PromptScore]) -> Result<DataFrame, Error> {
    tables::Columns::of(records)
        .col("model", |r| r.model.as_str())
        .col("structure", |r| structure_name(r.structure))
        .col("prompt_id", |r| prompt_key(&r.prompt_id, r.sample_index))
        .col("num_questions", |r| r.num_questions)
        .col("correct", |r| r.correct)
        .col("unjudged", |r| r.unjudged)
        .col("prompt_tokens", |r| r.prompt_tokens)
        .col("outcome", |r| outcome_name(r.outcome))
        .col("stopped_early", |r| r.stopped_early)
        .col("ran_long", |r| r.ran_long)
        .frame("RIFT prompt table")
}

/// Reads a RIFT run folder (`<run>/rift/`): the answers lazily from the per-model Parquet tables listed in
/// `answer-tables.json` (written by the pipeline's join, so the 3 M-row `answer-scores.jsonl` of a paper-scale model
/// is never read into memory), or from `answer-scores.jsonl` when there is no such list; the prompts from
/// `prompt-scores.jsonl`.
pub fn load_run(rift_dir: &Path) -> Result<(LazyFrame, Option<DataFrame>), Error> {
    let answers_path = rift_dir.join("answer-scores.jsonl");
    let prompts_path = rift_dir.join("prompt-scores.jsonl");
    let prompts = if prompts_path.exists() {
        let p: Vec<schema::rift::PromptScore> = schema::read_jsonl(&prompts_path)?;
        Some(prompts_frame(&p)?)
    } else {
        None
    };
    if let Some(tables) = read_answer_tables(rift_dir)? {
        let mut scans = tables
            .iter()
            .map(|t| scan_answers_parquet(t))
            .collect::<Result<Vec<_>, _>>()?;
        // A table written before the integer codes (or the flagged-correct, value or LLM-judged column) existed is
        // read from the JSONL instead.
        let coded = scans.iter_mut().all(|s| {
            s.collect_schema().is_ok_and(|schema| {
                [
                    "group",
                    "prompt",
                    "wrong_question_correct",
                    "value_normalized",
                    "llm_judged",
                ]
                .iter()
                .all(|c| schema.contains(c))
            })
        });
        if coded {
            return Ok((concat_answer_tables(scans)?, prompts));
        }
        tracing::warn!(dir = %rift_dir.display(), "An answer table has no integer codes (written by an older version); reading the JSONL answers instead.");
    }
    let answers: Vec<schema::rift::AnswerScore> = schema::read_jsonl(&answers_path)?;
    Ok((answers_frame(&answers)?.lazy(), prompts))
}

/// The list [`load_run`] reads: which Parquet answer tables (`models/<model>/answer-scores.parquet`) hold the
/// answers of `answer-scores.jsonl`, relative to the list's folder; an empty list removes an old one.
pub fn write_answer_tables(list: &Path, tables: &[std::path::PathBuf]) -> Result<(), Error> {
    if tables.is_empty() {
        return match std::fs::remove_file(list) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Error::Input {
                path: list.to_owned(),
                message: e.to_string(),
            }),
        };
    }
    let dir = list.parent().unwrap_or(Path::new(""));
    let rel: Vec<String> = tables
        .iter()
        .map(|t| {
            t.strip_prefix(dir)
                .unwrap_or(t)
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    let json =
        serde_json::to_vec_pretty(&serde_json::json!({ "answer_tables": rel })).map_err(|e| {
            Error::Input {
                path: list.to_owned(),
                message: e.to_string(),
            }
        })?;
    schema::write_atomic(list, &json)?;
    Ok(())
}

/// The tables listed in `<rift_dir>/answer-tables.json`, when it exists and every one of them does.
fn read_answer_tables(rift_dir: &Path) -> Result<Option<Vec<std::path::PathBuf>>, Error> {
    let list = rift_dir.join("answer-tables.json");
    let bytes = match std::fs::read(&list) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(Error::Input {
                path: list,
                message: e.to_string(),
            });
        }
    };
    #[derive(serde::Deserialize)]
    struct List {
        answer_tables: Vec<String>,
    }
    let parsed: List = serde_json::from_slice(&bytes).map_err(|e| Error::Input {
        path: list.clone(),
        message: format!("field answer_tables: {e}"),
    })?;
    let tables: Vec<_> = parsed
        .answer_tables
        .iter()
        .map(|t| rift_dir.join(t))
        .collect();
    if tables.is_empty() || !tables.iter().all(|t| t.is_file()) {
        tracing::warn!(list = %list.display(), "Some answer tables listed are missing; reading answer-scores.jsonl.");
        return Ok(None);
    }
    Ok(Some(tables))
}

/// Scans an answer table stored as Parquet (lazily; nothing is read until a query runs).
pub fn scan_answers_parquet(path: &Path) -> Result<LazyFrame, Error> {
    let pl_path =
        PlRefPath::try_from_path(path).map_err(Error::polars(path.display().to_string()))?;
    LazyFrame::scan_parquet(pl_path, ScanArgsParquet::default())
        .map_err(Error::polars(path.display().to_string()))
}
