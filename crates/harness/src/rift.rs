//! RIFT: Jeopardy! preparation (with optional LLM rephrasing), the prompts of an experiment, one model's run, the
//! LLM judge for the answers the pre-judge cannot settle, and scoring with its per-(model, structure) summary.
//!
//! Each stage reads and writes files, so it can be rerun alone; model calls go through the inference client and
//! resume from its responses files. The summary is `analysis::rift`'s aggregation of the scores, the same one the
//! run's tables come from.
//!
//! The judge and the rephrasing take their request settings from the caller's [`HelperCall`]. A judge reply that
//! cannot be read (failed, truncated without a verdict word, or unparsable) is asked again with the next
//! `sample_index`, up to `tries` times; an answer whose judge request never got a verdict is *unjudged* (never
//! correct, never incorrect, counted on its own). So is an answer the pre-judge cannot settle when no judge is
//! configured: a designed outcome of an offline run, not a failure.
//!
//! Judge requests and the single-question baseline prompts go through `Client::chat_batch`: provider batch jobs
//! when the client runs them (`--batch`); answers still waiting for a batch job leave the stage incomplete.
//!
//! `write_prompts` writes one prompt at a time; `run_file` feeds the prompts file to `Client::chat_stream` in chunks of
//! [`RUN_CHUNK`]. Judging and scoring go [`SCORE_CHUNK`] prompts at a time on three threads (reading, scoring, writing
//! consecutive chunks), with judge requests de-duplicated across chunks; the answer table is also written as Parquet
//! (`answer-scores.parquet`), which the summary scans.

mod judge;
mod run;
mod score;

pub use judge::{Judge, JudgeSummary, ask_judge, judge};
pub use run::{RUN_CHUNK, run, run_file};
use run::{lines_of, newest_of};
use score::each_scored_chunk;
pub use score::{SCORE_CHUNK, Score, ScoreSummary, score};

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use analysis::rift::{OutcomeCounts, RiftSummary, StructureStats, WrongQuestion};
use inference_client::{Client, ModelConfig, RunSummary};
use prompt_gen::rift::{RiftConfig, SystemPrompts};
use schema::paths::ModelPaths;
use schema::rift::{JudgeVerdict, PromptLine, Question};
use schema::{LineIndex, PromptRecord, RequestParams, ResponseKey, ResponseRecord, ResponseReply};
use scoring::rift::{PreJudgeReport, ScoreOptions};

use crate::helper::{HelperCall, failure_share};
use crate::{Error, read_text};

/// Loads the dataset a config names: a prepared `questions.jsonl`, or a raw clue file prepared in memory.
pub fn load_dataset(path: &Path) -> Result<Vec<Question>, Error> {
    if path.extension().is_some_and(|e| e == "jsonl") {
        return jeopardy_prep::load_questions(path).map_err(|e| Error::Input(e.to_string()));
    }
    let prepared = jeopardy_prep::prepare_files(&[path.to_owned()], None)
        .map_err(|e| Error::Input(e.to_string()))?;
    tracing::info!(
        path = %path.display(),
        kept = prepared.questions.len(),
        dropped = prepared.skipped.len(),
        "Prepared a raw clue file in memory (no rephrasing)."
    );
    Ok(prepared.questions)
}

/// The paper's step 0: every clue rephrased by a model before clean-up.
#[derive(Debug, Clone, Copy)]
pub struct Rephrase<'a> {
    pub model: &'a ModelConfig,
    /// The rephrasing prompt ({category}, {clue}, {response}).
    pub template: &'a str,
    /// Request settings (`[rift-prep] rephrase-max-tokens`, …); temperature is 0.
    pub call: &'a HelperCall,
    pub client: &'a Client,
}

/// `rift prep`: loads the clue files (rows numbered across them in order), optionally rephrases them (requests and
/// responses are written to `out_dir`), cleans them and writes `questions.jsonl`, `skipped.jsonl` and the summary.
pub fn prep(
    inputs: &[PathBuf],
    out_dir: &Path,
    rephrase: Option<&Rephrase<'_>>,
) -> Result<jeopardy_prep::Prepared, Error> {
    let rephrasings = match rephrase {
        None => None,
        Some(r) => {
            let mut clues = Vec::new();
            for p in inputs {
                clues
                    .extend(jeopardy_prep::load_clues(p).map_err(|e| Error::Input(e.to_string()))?);
            }
            r.call
                .check("rephrase-")
                .map_err(|e| Error::Input(format!("[rift-prep]: {e}")))?;
            let params = RequestParams {
                temperature: Some(0.0),
                ..r.call.params()
            };
            let requests = jeopardy_prep::rephrase_requests(&clues, r.template, &params);
            let req_path = out_dir.join("rephrase-prompts.jsonl");
            let resp_path = out_dir.join("rephrase-responses.jsonl");
            schema::write_jsonl_atomic(&req_path, &requests)?;
            tracing::info!(requests = requests.len(), model = %r.model.name, "Rephrasing clues.");
            r.client.chat(r.model, &requests, &resp_path)?;
            Some(jeopardy_prep::parse_rephrasings(
                &schema::read_latest_responses(&resp_path)?,
            ))
        }
    };
    let prepared = jeopardy_prep::prepare_files(inputs, rephrasings.as_ref())
        .map_err(|e| Error::Input(e.to_string()))?;
    let paths = jeopardy_prep::write_outputs(&prepared, out_dir).map_err(|e| Error::Output {
        path: out_dir.to_owned(),
        message: e.to_string(),
    })?;
    tracing::info!(questions = %paths.questions.display(), skipped = %paths.skipped.display(), "Wrote the prepared dataset.");
    Ok(prepared)
}

/// `rift prompts`: samples the experiment of `cfg` and writes its prompts atomically, one at a time (a paper-scale
/// experiment is never held in memory); returns how many.
pub fn write_prompts(cfg: &RiftConfig, out: &Path) -> Result<usize, Error> {
    use std::io::Write as _;
    /// A prompt that could not be built, or one that could not be written.
    enum Failed {
        Build(prompt_gen::rift::Error),
        Write(std::io::Error),
    }
    impl From<prompt_gen::rift::Error> for Failed {
        fn from(e: prompt_gen::rift::Error) -> Failed {
            Failed::Build(e)
        }
    }
    let questions = load_dataset(&cfg.dataset)?;
    let multi = read_text(&cfg.system_prompt)?;
    let baseline = read_text(&cfg.baseline_system_prompt)?;
    let system = SystemPrompts {
        multi: &multi,
        baseline: &baseline,
    };
    let mut built = None;
    let mut count = 0;
    let written = schema::write_atomic_with(out, |w| {
        let r = prompt_gen::rift::for_each_prompt(&questions, cfg, system, |p| {
            serde_json::to_writer(&mut *w, &p)
                .map_err(std::io::Error::from)
                .and_then(|()| w.write_all(b"\n"))
                .map_err(Failed::Write)
        });
        match r {
            Ok(n) => {
                count = n;
                Ok(())
            }
            Err(Failed::Write(e)) => Err(e),
            Err(Failed::Build(e)) => {
                built = Some(e);
                Err(std::io::Error::other("a prompt could not be built"))
            }
        }
    });
    if let Some(e) = built {
        return Err(Error::Input(e.to_string()));
    }
    written?;
    Ok(count)
}

/// The first `limit` prompts of each structure, in order.
pub fn limit_per_structure(prompts: Vec<PromptRecord>, limit: usize) -> Vec<PromptRecord> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    prompts
        .into_iter()
        .filter(|p| {
            let s = p
                .extra
                .get("structure")
                .and_then(|v| v.as_str())
                .unwrap_or("")
                .to_owned();
            let n = seen.entry(s).or_insert(0);
            *n += 1;
            *n <= limit
        })
        .collect()
}
