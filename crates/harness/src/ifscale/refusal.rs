//! The optional refusal judge in the generation loop: the replies the refusal detector leaves uncertain
//! (`scoring::ifscale::RefusalVerdict::Uncertain`: a long reply with one declining cue and no report after a pivot)
//! go to a judge model, with the configured rubric and the fixed answer format
//! (`scoring::ifscale::refusal_judge_prompt`), before the coherence judge. A reply it calls a refusal is rejected
//! as `refused`, or as `declined_impractical` when the detector's kind rules say it calls the task impractical
//! without objecting to its content (`scoring::ifscale::refusal_kind`), and retried like any refusal; one it calls
//! an attempt stays accepted; one it gives no readable verdict for after every try stands as not refused, its
//! `refusal_judge.error` saying why (never a guess).
//!
//! Its requests are `<prompt id>#a<attempt>` in the model's `refusal-judge.jsonl` (`ModelPaths::refusal_judge`),
//! through the run's client (cached, budgeted, resumable), with its own request settings (`[judges.refusal]`).

use std::path::Path;

use schema::ifscale::{AttemptLog, RefusalJudgement, RejectReason};
use schema::judge::JudgeFailure;
use schema::{Message, Outcome, PromptRecord};
use scoring::ifscale::{
    RefusalVerdict, detect_refusal, parse_refusal_verdict, refusal_judge_prompt, refusal_kind,
};

use super::{Decision, Generation};
use crate::Error;
use crate::helper::{JudgeRef, JudgeTally, ask_until_readable, tally_of};

/// Asks the refusal judge about every accepted attempt of this round whose reply the detector leaves uncertain,
/// and records its decision in the attempt's log.
pub(super) fn judge_uncertain(
    g: &Generation<'_>,
    judge: JudgeRef<'_>,
    attempt: u32,
    decisions: &mut [Decision],
) -> Result<(), Error> {
    let open: Vec<usize> = decisions
        .iter()
        .enumerate()
        .filter(|(_, d)| {
            d.log.accepted
                && d.response.outcome == Outcome::Ok
                && detect_refusal(d.response.content.as_deref().unwrap_or_default())
                    == RefusalVerdict::Uncertain
        })
        .map(|(i, _)| i)
        .collect();
    if open.is_empty() {
        return Ok(());
    }
    let prompts: Vec<PromptRecord> = open
        .iter()
        .map(|&d| {
            let Decision { response, log, .. } = &decisions[d];
            PromptRecord {
                id: format!("{}#a{attempt}", log.id),
                messages: vec![Message::user(refusal_judge_prompt(
                    judge.prompt,
                    response.content.as_deref().unwrap_or_default(),
                ))],
                sample_index: 0,
                params: judge.call.params(),
                extra: serde_json::Map::new(),
            }
        })
        .collect();
    tracing::info!(attempt, requests = prompts.len(), judge = %judge.model.name, "Asking the refusal judge about replies the rules cannot settle.");
    let (read, _) = ask_until_readable(
        g.client,
        judge.model,
        judge.call,
        &g.files.refusal_judge(),
        &prompts,
        |text| parse_refusal_verdict(text).map_err(|e| e.to_string()),
    )?;
    for (d, r) in open.into_iter().zip(read) {
        let Decision { response, log, .. } = &mut decisions[d];
        let judgement = match r {
            Ok(v) => RefusalJudgement {
                refused: Some(v.refused),
                reason: (!v.reason.is_empty()).then_some(v.reason),
                error: None,
            },
            Err(e) => RefusalJudgement {
                refused: None,
                reason: None,
                error: Some(e),
            },
        };
        if judgement.refused == Some(true) {
            log.accepted = false;
            let reply = response.content.as_deref().unwrap_or_default();
            log.reason = Some(
                refusal_kind(reply)
                    .reject_reason()
                    .unwrap_or(RejectReason::Refused),
            );
        }
        log.refusal_judge = Some(judgement);
    }
    Ok(())
}

/// What the refusal judge made of one attempt (nothing when it was not asked).
pub(super) fn refusal_counts(l: &AttemptLog) -> JudgeTally {
    match &l.refusal_judge {
        None => JudgeTally::default(),
        Some(j) if j.refused.is_some() => tally_of(None),
        Some(j) => tally_of(Some(
            j.error
                .as_ref()
                .unwrap_or(&JudgeFailure::Unreadable(String::new())),
        )),
    }
}

/// The refusal judge's counts of an attempts log written by `generate` (for a stage that was up to date and
/// skipped); a missing file counts nothing.
pub fn refusal_counts_from_attempts(attempts: &Path) -> Result<JudgeTally, Error> {
    let mut tally = JudgeTally::default();
    if !attempts.is_file() {
        return Ok(tally);
    }
    let logs: Vec<AttemptLog> = schema::read_jsonl(attempts)?;
    for l in &logs {
        tally.add(refusal_counts(l));
    }
    Ok(tally)
}
