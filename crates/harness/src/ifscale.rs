//! IFScale: the prompts of a config, and the generation loop with the paper's retry rules and coherence judge.
//!
//! Attempt k of a sample is the inference client's `sample_index` k − 1, so every attempt has its own cache entry
//! and its own line in the responses file. An attempt is rejected when its request failed, when it hit
//! `max_tokens` (truncated), when it is a constraint list (rule a), a refusal (the refusal detector) or too short
//! (rule b); when a refusal judge is given, when it calls a reply the detector cannot settle a refusal (`refusal`);
//! and, when a judge model is given, when the judge scores its coherence below the threshold (rule c). The rules
//! themselves are pure functions of `scoring::ifscale`; this module only runs them, logs every decision and scores
//! the result.
//!
//! Each judge comes with its rubric and request settings (`max_tokens`, reasoning, tries) as a [`JudgeRef`]. An attempt the
//! judge gives no usable verdict for after every try is *unjudged*: it keeps its `judge_error` and stands on the
//! other rules, and the summary counts it ([`GenerationSummary::unjudged`], [`GenerationSummary::judge_failure_share`]).
//! Judge requests go through `Client::chat_batch`: provider batch jobs when the client runs them (`--batch`).
//!
//! Every attempt goes into the `AttemptLog` JSONL with its visible and reasoning tokens. A sample whose every attempt
//! was rejected gets the outcome of its last attempt (`scoring::ifscale::sample_outcome`: refused, no visible
//! output, truncated, …) as its `status`; one whose attempt was not sent (the cost limit) is left out until a rerun, which
//! resumes from the files and sends nothing twice.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use inference_client::{Client, ModelConfig};
use prompt_gen::ifscale::{IfscaleConfig, ScoreSpan, Template, Vocabulary, build_prompts};
use schema::ifscale::{AttemptLog, ConstraintListRule, MatchMode, PromptMeta, RejectReason};
use schema::judge::JudgeFailure;
use schema::paths::ModelPaths;
use schema::{Message, Outcome, PromptRecord, ResponseKey, ResponseRecord};
use scoring::ifscale::{
    Matcher, SampleInput, check_response, coherence_judge_prompt, parse_coherence_verdict,
    score_sample,
};

use crate::Error;
use crate::helper::{JudgeRef, JudgeTally, failure_share};

mod refusal;

pub use refusal::refusal_counts_from_attempts;

/// Builds the prompts of `cfg` (the vocabulary `vocab`, else the config's) and writes them atomically to `out`;
/// returns how many.
pub fn write_prompts(
    cfg: &IfscaleConfig,
    vocab: Option<&Path>,
    out: &Path,
) -> Result<usize, Error> {
    let vocab_path = vocab.or(cfg.vocab.as_deref()).ok_or_else(|| {
        Error::Input("no vocabulary: give --vocab or set `vocab` in [ifscale]".to_owned())
    })?;
    let bytes = std::fs::read(vocab_path).map_err(|e| Error::io(vocab_path, e))?;
    let vocab = Vocabulary::parse(&bytes, &vocab_path.display().to_string())
        .map_err(|e| Error::Input(e.to_string()))?;
    let tbytes = std::fs::read(&cfg.template).map_err(|e| Error::io(&cfg.template, e))?;
    let template = Template::parse(&tbytes, &cfg.template.display().to_string())
        .map_err(|e| Error::Input(e.to_string()))?;
    let prompts = build_prompts(&vocab, &template, cfg).map_err(|e| Error::Input(e.to_string()))?;
    schema::write_jsonl_atomic(out, &prompts)?;
    Ok(prompts.len())
}

/// Reads a judge's prompt or rubric file (`what`: `judge`, `coherence`, `refusal`) as the judge gets it, trailing whitespace dropped;
/// a missing, unreadable or empty file is an error naming the file.
pub fn read_rubric(path: &Path, what: &str) -> Result<String, Error> {
    let text = crate::read_text(path)?;
    if text.trim().is_empty() {
        return Err(Error::Input(format!(
            "{}: the {what} rubric is empty",
            path.display()
        )));
    }
    Ok(text)
}

/// What [`generate`] needs.
#[derive(Debug, Clone, Copy)]
pub struct Generation<'a> {
    pub prompts: &'a [PromptRecord],
    pub model: &'a ModelConfig,
    /// The coherence judge with its rubric (`[judges.coherence]`); None: the coherence check is skipped (and the
    /// summary says so).
    pub coherence: Option<JudgeRef<'a>>,
    /// The refusal judge with its rubric (`[judges.refusal]`); None: replies the refusal detector cannot settle are
    /// scored as not refused, and no request is sent.
    pub refusal: Option<JudgeRef<'a>>,
    /// Which reading of the constraint-list rule (a) rejects a reply.
    pub constraint_list: ConstraintListRule,
    pub coherence_threshold: u8,
    /// At least 1.
    pub max_attempts: u32,
    pub mode: MatchMode,
    /// The whole answer or only its `<report>` span.
    pub span: ScoreSpan,
    /// Responses, judge responses, attempts log, scores and labels (see [`ModelPaths`]).
    pub files: &'a ModelPaths,
    pub client: &'a Client,
}

/// What [`generate`] did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GenerationSummary {
    pub samples: usize,
    pub accepted: usize,
    /// Samples that exhausted their attempts; they are in the scores with their outcome as `status`.
    pub failed: usize,
    /// Samples with an attempt the client did not send (the cost limit): no outcome yet, left out of the scores;
    /// a rerun continues them.
    pub not_sent: usize,
    pub attempts: usize,
    /// Rejected attempts per reason (`constraint_list`, `refused`, `declined_impractical`, `too_short`, `incoherent`,
    /// `truncated`, `request_failed`).
    pub rejected: BTreeMap<String, usize>,
    /// A judge model was given (the coherence check ran).
    pub judge_configured: bool,
    /// Attempts the judge gave a coherence score.
    pub judged: usize,
    /// Attempts sent to the judge that got no usable verdict after every try (the judge failed); they keep their
    /// `judge_error` and stand on the other rules.
    pub unjudged: usize,
    /// What the refusal judge made of the attempts the refusal detector could not settle (nothing without one).
    pub refusal_judge: JudgeTally,
    /// Mean accuracy over scored samples (failed ones have none).
    pub mean_accuracy: Option<f64>,
}

struct SampleState {
    logs: Vec<AttemptLog>,
    accepted: Option<ResponseRecord>,
    /// An attempt was not sent (the cost limit): the sample has no outcome yet and is left out of the scores.
    unsent: bool,
}

/// One attempt's response and the decision on it so far.
struct Decision {
    sample: usize,
    response: ResponseRecord,
    log: AttemptLog,
}

/// Generates every prompt with up to `max_attempts` attempts under the paper's retry rules, writes the attempts
/// log, then scores the accepted reports (failed samples included as `failed`).
///
/// Rerunning with the same files resumes: answered requests are neither sent nor written again, and every decision
/// is recomputed from the files.
pub fn generate(g: &Generation<'_>) -> Result<GenerationSummary, Error> {
    if g.max_attempts == 0 {
        return Err(Error::Input("max attempts must be at least 1".to_owned()));
    }
    for judge in g.coherence.iter().chain(g.refusal.iter()) {
        judge.check()?;
    }
    // Every prompt must be an IFScale prompt before anything is sent.
    let metas: Vec<PromptMeta> = g
        .prompts
        .iter()
        .map(prompt_meta)
        .collect::<Result<_, _>>()?;
    let mut states: Vec<SampleState> = g
        .prompts
        .iter()
        .map(|_| SampleState {
            logs: Vec::new(),
            accepted: None,
            unsent: false,
        })
        .collect();
    let mut pending: Vec<usize> = (0..g.prompts.len()).collect();
    let temp = |p: &PromptRecord| p.params.temperature.or(g.model.temperature);
    if g.max_attempts > 1 && g.prompts.iter().any(|p| temp(p) == Some(0.0)) {
        tracing::warn!(model = %g.model.name, "Temperature 0: a retried attempt will most likely repeat the rejected answer.");
    }
    let responses_path = g.files.responses();
    for attempt in 1..=g.max_attempts {
        if pending.is_empty() {
            break;
        }
        let batch: Vec<PromptRecord> = pending
            .iter()
            .map(|&i| {
                let mut p = g.prompts[i].clone();
                p.sample_index = attempt - 1;
                p
            })
            .collect();
        tracing::info!(attempt, prompts = batch.len(), model = %g.model.name, "Generating.");
        g.client.chat(g.model, &batch, &responses_path)?;
        let mut responses = latest_by_key(&responses_path)?;
        // Rules (a), (b) and truncation first.
        let mut decisions: Vec<Decision> = Vec::new();
        for (&i, asked) in pending.iter().zip(&batch) {
            let p = &g.prompts[i];
            // No line: the client did not send it (the cost limit). The sample waits for a rerun.
            let Some(r) = responses.remove(&ResponseKey::of_prompt(asked)) else {
                states[i].unsent = true;
                continue;
            };
            let text = r.content.clone().unwrap_or_default();
            let reason = match r.outcome {
                Outcome::Failed => Some(RejectReason::RequestFailed),
                Outcome::Truncated => Some(RejectReason::Truncated),
                Outcome::Ok => check_response(&text, g.constraint_list),
            };
            let log = AttemptLog {
                id: p.id.clone(),
                model: g.model.name.clone(),
                attempt,
                accepted: reason.is_none(),
                reason,
                coherence: None,
                coherence_reason: None,
                judge_error: None,
                words: scoring::ifscale::word_count(&text) as u32,
                latency_s: r.latency_s,
                output_tokens: Some(r.usage.visible_tokens()),
                reasoning_tokens: r.usage.reasoning_tokens,
                refusal_judge: None,
            };
            decisions.push(Decision {
                sample: i,
                response: r,
                log,
            });
        }
        // The refusal judge, for replies that passed the rules but that the refusal detector cannot settle.
        if let Some(judge) = g.refusal {
            refusal::judge_uncertain(g, judge, attempt, &mut decisions)?;
        }
        // Rule (c): the coherence judge, for attempts that passed the rest.
        if let Some(judge) = g.coherence {
            judge_attempts(g, judge, attempt, &mut decisions)?;
        }
        let mut next = Vec::new();
        for d in decisions {
            let accepted = d.log.accepted;
            states[d.sample].logs.push(d.log);
            if accepted {
                states[d.sample].accepted = Some(d.response);
            } else {
                next.push(d.sample);
            }
        }
        pending = next;
        let logs: Vec<&AttemptLog> = states.iter().flat_map(|s| s.logs.iter()).collect();
        schema::write_jsonl_atomic(&g.files.attempts(), logs)?;
    }

    let mut summary = GenerationSummary {
        samples: g.prompts.len(),
        judge_configured: g.coherence.is_some(),
        ..Default::default()
    };
    for s in &states {
        summary.attempts += s.logs.len();
        for l in &s.logs {
            if let Some(r) = l.reason {
                *summary
                    .rejected
                    .entry(reason_name(r).to_owned())
                    .or_default() += 1;
            }
            let t = judge_counts(l);
            summary.judged += t.judged;
            summary.unjudged += t.unjudged();
            summary.refusal_judge.add(refusal::refusal_counts(l));
        }
        if s.accepted.is_some() {
            summary.accepted += 1;
        } else if s.unsent {
            summary.not_sent += 1;
        } else {
            summary.failed += 1;
        }
    }
    // Score.
    let mut matcher = matcher_for(g.mode, metas.iter().map(|m| m.keywords.as_slice()))?;
    let mut scores = Vec::new();
    let mut labels = Vec::new();
    for ((p, meta), s) in g.prompts.iter().zip(&metas).zip(&states) {
        if s.unsent {
            continue;
        }
        let acc = s.accepted.as_ref();
        let last = s.logs.iter().rev().find(|l| l.accepted);
        let input = SampleInput {
            id: &p.id,
            model: &g.model.name,
            num_rules: meta.num_rules,
            seed: meta.seed,
            keywords: &meta.keywords,
            text: acc.map(|r| {
                let text = r.content.as_deref().unwrap_or_default();
                match g.span {
                    ScoreSpan::Whole => text,
                    ScoreSpan::Report => scoring::ifscale::report_span(text),
                }
            }),
            latency_s: acc.and_then(|r| r.latency_s),
            output_tokens: acc.map(|r| r.usage.visible_tokens()),
            reasoning_tokens: acc.and_then(|r| r.usage.reasoning_tokens),
            coherence: last.and_then(|l| l.coherence).map(f64::from),
            attempts: s.logs.len() as u32,
        };
        let (mut score, l) = score_sample(&mut matcher, &input);
        if acc.is_none() {
            score.status = scoring::ifscale::sample_outcome(&s.logs);
        }
        scores.push(score);
        labels.extend(l);
    }
    let accs: Vec<f64> = scores.iter().filter_map(|s| s.accuracy).collect();
    summary.mean_accuracy =
        (!accs.is_empty()).then(|| accs.iter().sum::<f64>() / accs.len() as f64);
    schema::write_jsonl_atomic(&g.files.scores(), &scores)?;
    schema::write_jsonl_atomic(&g.files.labels(), &labels)?;
    Ok(summary)
}

impl GenerationSummary {
    /// Unjudged attempts as a share of the attempts sent to the judge (0 without a judge): above
    /// [`crate::helper::UNJUDGED_ALERT_SHARE`] the stage is incomplete.
    pub fn judge_failure_share(&self) -> f64 {
        failure_share(self.judged, self.unjudged)
    }
}

/// What the judge made of one attempt: a coherence score, a failed request, or replies without a readable score.
fn judge_counts(l: &AttemptLog) -> JudgeTally {
    match (l.coherence, &l.judge_error) {
        (Some(_), _) => crate::helper::tally_of(None),
        (None, Some(failure)) => crate::helper::tally_of(Some(failure)),
        (None, None) => JudgeTally::default(),
    }
}

/// The judge counts of an attempts log written by [`generate`] (for a stage that was up to date and skipped); a
/// missing file counts nothing.
pub fn judge_counts_from_attempts(attempts: &Path) -> Result<JudgeTally, Error> {
    let mut tally = JudgeTally::default();
    if !attempts.is_file() {
        return Ok(tally);
    }
    let logs: Vec<AttemptLog> = schema::read_jsonl(attempts)?;
    for l in &logs {
        tally.add(judge_counts(l));
    }
    Ok(tally)
}

/// Asks the judge about every attempt that passed the other rules, up to `judge.call.tries` times while its answer
/// does not parse (try t is the judge request's `sample_index` t − 1).
fn judge_attempts(
    g: &Generation<'_>,
    judge: JudgeRef<'_>,
    attempt: u32,
    decisions: &mut [Decision],
) -> Result<(), Error> {
    let judge_path = g.files.coherence_judge();
    let mut open: Vec<usize> = (0..decisions.len())
        .filter(|&d| decisions[d].log.accepted)
        .collect();
    let mut last_error: HashMap<usize, JudgeFailure> = HashMap::new();
    for try_index in 0..judge.call.tries {
        if open.is_empty() {
            break;
        }
        let batch: Vec<PromptRecord> = open
            .iter()
            .map(|&d| {
                let Decision { response, log, .. } = &decisions[d];
                PromptRecord {
                    id: format!("{}#a{attempt}", log.id),
                    messages: vec![Message::user(coherence_judge_prompt(
                        judge.prompt,
                        response.content.as_deref().unwrap_or_default(),
                    ))],
                    sample_index: try_index,
                    params: judge.call.params(),
                    extra: serde_json::Map::new(),
                }
            })
            .collect();
        tracing::info!(attempt, judge_try = try_index + 1, requests = batch.len(), judge = %judge.model.name, "Judging coherence.");
        let sent = g.client.chat_batch(judge.model, &batch, &judge_path)?;
        let verdicts = latest_by_key(&judge_path)?;
        let mut still = Vec::new();
        for (&d, req) in open.iter().zip(&batch) {
            let Some(v) = verdicts.get(&ResponseKey::of_prompt(req)) else {
                last_error.insert(d, JudgeFailure::NoResponse);
                still.push(d);
                continue;
            };
            let parsed = crate::helper::read_answer(v, |text| {
                parse_coherence_verdict(text).map_err(|e| e.to_string())
            });
            match parsed {
                Ok(verdict) => {
                    let log = &mut decisions[d].log;
                    log.coherence = Some(verdict.score);
                    log.coherence_reason = Some(verdict.reason);
                    if verdict.score < g.coherence_threshold {
                        log.accepted = false;
                        log.reason = Some(RejectReason::Incoherent);
                    }
                }
                Err(e) => {
                    last_error.insert(d, e);
                    still.push(d);
                }
            }
        }
        open = still;
        if sent.batch_pending > 0 {
            // Verdicts still to come from a batch job (vLLM's run_batch): the stage is incomplete, and the next
            // run reads them before asking again.
            break;
        }
    }
    // No usable verdict after every try: the attempt stands on the other rules, and the log says why.
    for d in open {
        decisions[d].log.judge_error = last_error.remove(&d);
    }
    Ok(())
}

/// A matcher that knows every keyword of the given lists.
pub(crate) fn matcher_for<'a>(
    mode: MatchMode,
    keyword_lists: impl Iterator<Item = &'a [String]>,
) -> Result<Matcher, Error> {
    let keywords: Vec<&str> = keyword_lists.flatten().map(String::as_str).collect();
    Ok(Matcher::new(mode, &keywords)?)
}

/// The newest response per key of a responses file, for lookup.
fn latest_by_key(path: &Path) -> Result<HashMap<ResponseKey, ResponseRecord>, Error> {
    Ok(schema::read_latest_responses(path)?
        .into_iter()
        .map(|r| (ResponseKey::of(&r), r))
        .collect())
}

fn prompt_meta(p: &PromptRecord) -> Result<PromptMeta, Error> {
    serde_json::from_value(serde_json::Value::Object(p.extra.clone())).map_err(|e| {
        Error::Input(format!(
            "prompt {}: not an IFScale prompt record: {e}",
            p.id
        ))
    })
}

/// The name a rejection reason has in the summary (as in the attempts log).
fn reason_name(r: RejectReason) -> &'static str {
    match r {
        RejectReason::ConstraintList => "constraint_list",
        RejectReason::TooShort => "too_short",
        RejectReason::Refused => "refused",
        RejectReason::DeclinedImpractical => "declined_impractical",
        RejectReason::Incoherent => "incoherent",
        RejectReason::Truncated => "truncated",
        RejectReason::RequestFailed => "request_failed",
    }
}
