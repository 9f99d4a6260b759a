//! Helper calls: the requests a stage makes besides the benchmark's own (the IFScale coherence judge, the RIFT
//! judge, the RIFT rephrasing). Their settings come from the config (`[ifscale]` and `[rift-prep]`), never from
//! constants in the loops; the defaults leave room for a reasoning model to think before it answers (the client
//! splits `<think>` blocks off into the record's `reasoning`, so the parsers see the answer alone).
//!
//! A judge reply that cannot be read is asked again with a new `sample_index` (its own cache entry), up to
//! `tries` times; an item still without a verdict is *unjudged*. [`UNJUDGED_ALERT_SHARE`] is the share of a
//! stage's items that may end unjudged because a configured judge failed before the run counts as incomplete.
//! [`ask_until_readable`] is that loop for a judge whose answer a parser reads (the IFScale refusal judge, in a run
//! and in its check).

use std::collections::HashMap;
use std::path::Path;

use inference_client::{Client, ModelConfig};
use serde::Serialize;
use serde_json::{Map, Value};

use schema::judge::{JudgeFailure, JudgeRole};
use schema::{Outcome, PromptRecord, RequestParams, ResponseKey};

use crate::Error;

/// Default `max_tokens` of a judge request: room for a reasoning model's thinking before its verdict.
pub const DEFAULT_JUDGE_MAX_TOKENS: u32 = 4096;
/// Default `max_tokens` of a rephrasing request.
pub const DEFAULT_REPHRASE_MAX_TOKENS: u32 = 4096;
/// Default tries per judged item while the judge's reply cannot be read.
pub const DEFAULT_JUDGE_TRIES: u32 = 3;
/// More than this share of a stage's items unjudged because a configured judge failed makes the run incomplete.
pub const UNJUDGED_ALERT_SHARE: f64 = 0.02;

/// What a configured judge made of a stage's items.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct JudgeTally {
    /// Items with a verdict.
    pub judged: usize,
    /// Items whose every request failed (or got no response): a rerun asks again, so the stage is incomplete.
    pub failed: usize,
    /// Items whose judge replied every time, but never with a readable verdict: the judge's own failure (a rerun
    /// reads the same cached replies), counted in the judge check.
    pub unreadable: usize,
}

impl JudgeTally {
    /// Items without a verdict, for either reason.
    pub fn unjudged(&self) -> usize {
        self.failed + self.unreadable
    }

    /// Items sent to the judge.
    pub fn items(&self) -> usize {
        self.judged + self.unjudged()
    }

    /// Adds another stage's counts.
    pub fn add(&mut self, other: JudgeTally) {
        self.judged += other.judged;
        self.failed += other.failed;
        self.unreadable += other.unreadable;
    }
}

/// The settings of one kind of helper call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HelperCall {
    /// `max_tokens` of each request (at least 1).
    pub max_tokens: u32,
    /// Requests per item while the reply cannot be read (at least 1; 1 for calls that are not retried).
    pub tries: u32,
    /// `reasoning_effort` of each request (unset: the model's default).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<String>,
    /// Extra body fields of each request (e.g. a provider's thinking switch).
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub extra_body: Map<String, Value>,
}

impl HelperCall {
    /// A judge with the defaults.
    pub fn judge() -> HelperCall {
        HelperCall {
            max_tokens: DEFAULT_JUDGE_MAX_TOKENS,
            tries: DEFAULT_JUDGE_TRIES,
            reasoning_effort: None,
            extra_body: Map::new(),
        }
    }

    /// Rephrasing with the defaults (one try: an unusable rephrasing drops the clue, as before).
    pub fn rephrase() -> HelperCall {
        HelperCall {
            max_tokens: DEFAULT_REPHRASE_MAX_TOKENS,
            tries: 1,
            reasoning_effort: None,
            extra_body: Map::new(),
        }
    }

    /// The request parameters every prompt of this call carries (temperature is the caller's).
    pub fn params(&self) -> RequestParams {
        RequestParams {
            max_tokens: Some(self.max_tokens),
            reasoning_effort: self.reasoning_effort.clone(),
            extra_body: self.extra_body.clone(),
            ..RequestParams::default()
        }
    }

    /// Checks the numbers; the error names the field by its config key after `prefix` (e.g. `judge-`).
    pub fn check(&self, prefix: &str) -> Result<(), String> {
        if self.max_tokens == 0 {
            return Err(format!("field `{prefix}max-tokens`: must be at least 1"));
        }
        if self.tries == 0 {
            return Err(format!("field `{prefix}tries`: must be at least 1"));
        }
        Ok(())
    }
}

/// A judge as the harness asks it: its role, its model, its prompt (the RIFT judge's template, an IFScale judge's
/// rubric) and its request settings. The pipeline lends one from each judge of its config.
#[derive(Debug, Clone, Copy)]
pub struct JudgeRef<'a> {
    pub role: JudgeRole,
    pub model: &'a ModelConfig,
    pub prompt: &'a str,
    pub call: &'a HelperCall,
}

impl JudgeRef<'_> {
    /// Checks its settings and that its prompt is not empty; the error names its config table and field.
    pub fn check(&self) -> Result<(), Error> {
        let table = format!("[judges.{}]", self.role.key());
        self.call
            .check("")
            .map_err(|e| Error::Input(format!("{table}: {e}")))?;
        if self.prompt.trim().is_empty() {
            return Err(Error::Input(format!(
                "{table}: field `prompt`: the {}'s prompt is empty",
                self.role.label()
            )));
        }
        Ok(())
    }
}

/// `unjudged ÷ (judged + unjudged)`, 0 when nothing was sent to a judge.
pub fn failure_share(judged: usize, unjudged: usize) -> f64 {
    let total = judged + unjudged;
    if total == 0 {
        0.0
    } else {
        unjudged as f64 / total as f64
    }
}

/// Asks `judge` every prompt (their `sample_index` is replaced by the try), and again, try t being `sample_index`
/// t − 1, while `parse` cannot read its answer, up to `call.tries`. Answers go to `responses` through the client
/// (cached and resumable). Returns, in `prompts` order, what `parse` read or why there is none, and how many
/// requests were sent or resumed. Answers still to come from a batch job end the tries early (the next run reads
/// them).
pub fn ask_until_readable<T>(
    client: &Client,
    judge: &ModelConfig,
    call: &HelperCall,
    responses: &Path,
    prompts: &[PromptRecord],
    parse: impl Fn(&str) -> Result<T, String>,
) -> Result<(Vec<Result<T, JudgeFailure>>, usize), Error> {
    let mut out: Vec<Result<T, JudgeFailure>> = prompts
        .iter()
        .map(|_| Err(JudgeFailure::NoResponse))
        .collect();
    let mut open: Vec<usize> = (0..prompts.len()).collect();
    let mut sent = 0;
    for try_index in 0..call.tries {
        if open.is_empty() {
            break;
        }
        let batch: Vec<PromptRecord> = open
            .iter()
            .map(|&i| PromptRecord {
                sample_index: try_index,
                ..prompts[i].clone()
            })
            .collect();
        let s = client.chat_batch(judge, &batch, responses)?;
        sent += batch.len();
        let latest: HashMap<ResponseKey, schema::ResponseRecord> =
            schema::read_latest_responses(responses)?
                .into_iter()
                .map(|r| (ResponseKey::of(&r), r))
                .collect();
        let mut still = Vec::new();
        for (&i, p) in open.iter().zip(&batch) {
            let read = match latest.get(&ResponseKey::of_prompt(p)) {
                None => Err(JudgeFailure::NoResponse),
                Some(r) => read_answer(r, &parse),
            };
            if read.is_err() {
                still.push(i);
            }
            out[i] = read;
        }
        open = still;
        if s.batch_pending > 0 {
            break;
        }
    }
    Ok((out, sent))
}

/// A judge's answer read by `parse`: its verdict, or why there is none (the request failed, no text, or what
/// `parse` said). The one reading of a judge's response, for every judge.
pub fn read_answer<T>(
    r: &schema::ResponseRecord,
    parse: impl Fn(&str) -> Result<T, String>,
) -> Result<T, JudgeFailure> {
    if r.outcome == Outcome::Failed {
        return Err(JudgeFailure::RequestFailed(
            r.error.clone().unwrap_or_default(),
        ));
    }
    match r.content.as_deref() {
        Some(text) if !text.trim().is_empty() => parse(text).map_err(JudgeFailure::Unreadable),
        _ => Err(JudgeFailure::EmptyAnswer),
    }
}

/// What a judge made of one item from the failure [`ask_until_readable`] left (None: a verdict): a failed request
/// or no answer is `failed` (a rerun asks again), anything else `unreadable`.
pub fn tally_of(failure: Option<&JudgeFailure>) -> JudgeTally {
    match failure {
        None => JudgeTally {
            judged: 1,
            ..JudgeTally::default()
        },
        Some(f) if f.is_unanswered() => JudgeTally {
            failed: 1,
            ..JudgeTally::default()
        },
        Some(_) => JudgeTally {
            unreadable: 1,
            ..JudgeTally::default()
        },
    }
}
