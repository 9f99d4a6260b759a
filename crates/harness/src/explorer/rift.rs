//! The RIFT side of the explorer: one entry per prompt (its scores, the traversal as a table with each answer's
//! verdict and who settled it, wrong-question links (marked where the judge still called the answer correct), the raw
//! reply with its reasoning folded away). The sample list has a filter on the flagged answers judged correct.
//!
//! A paper-scale model has 20 000 prompts and 3 million answers, so only the prompt scores are held; answers and
//! responses are read back per prompt through a [`schema::LineIndex`].

use std::path::Path;

use schema::paths::{Bench, ModelPaths};
use schema::rift::{AnswerScore, JudgeSource, PromptScore, ReplyOutcome, Verdict};
use schema::{LineIndex, ResponseRecord};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Entry, Options, Pager, round, shown};
use crate::Error;

/// What identifies a prompt's answers and its response in their files.
#[derive(Debug, PartialEq, Eq, Hash, Deserialize)]
struct AnswerKey {
    prompt_id: String,
    #[serde(default)]
    sample_index: u32,
}

#[derive(Debug, PartialEq, Eq, Hash, Deserialize)]
struct ResponseKey {
    id: String,
    #[serde(default)]
    sample_index: u32,
}

#[derive(Serialize)]
struct Prompt<'a> {
    id: &'a str,
    structure: &'static str,
    n: u32,
    k: Option<u32>,
    outcome: &'static str,
    /// Correct over judged answers, in percent (None when nothing was judged).
    accuracy: Option<f64>,
    correct: u32,
    unjudged: u32,
    wrong_question: u32,
    /// Flagged answers the judge called correct.
    wrong_question_correct: u32,
    missing: u32,
    extra: u32,
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    reasoning_tokens: Option<u64>,
    /// `[step, question number, question, gold, parsed reply, verdict, verdict by, wrong question of]`.
    steps: Vec<Value>,
    content: Option<String>,
    reasoning: Option<String>,
}

fn outcome_name(o: ReplyOutcome) -> &'static str {
    match o {
        ReplyOutcome::Ok => "ok",
        ReplyOutcome::Empty => "empty",
        ReplyOutcome::Malformed => "malformed",
        ReplyOutcome::Truncated => "truncated",
        ReplyOutcome::Failed => "failed",
    }
}

fn verdict_name(v: Verdict) -> &'static str {
    match v {
        Verdict::Correct => "correct",
        Verdict::Incorrect => "incorrect",
        Verdict::Missing => "missing",
        Verdict::Unjudged => "unjudged",
    }
}

fn source_name(s: JudgeSource) -> &'static str {
    match s {
        JudgeSource::PreJudge => "pre-judge",
        JudgeSource::Llm => "judge",
        JudgeSource::PreJudgeOnly => "unjudged (no judge)",
        JudgeSource::LlmUnusable => "unjudged (judge failed)",
        JudgeSource::None => "—",
    }
}

/// Writes one model's pages into `dir`.
pub(super) fn write(
    m: &ModelPaths,
    model: &str,
    dir: &Path,
    run: &str,
    opts: &Options,
) -> Result<Entry, Error> {
    let prompts: Vec<PromptScore> = schema::read_jsonl(&m.prompt_scores())?;
    let answers = if m.answer_scores().is_file() {
        Some(LineIndex::<AnswerKey>::build(&m.answer_scores(), false)?)
    } else {
        None
    };
    let responses = if m.responses().is_file() {
        Some(LineIndex::<ResponseKey>::build(&m.responses(), true)?)
    } else {
        None
    };
    let whole_in = Path::new("rift/models")
        .join(super::file_part(model))
        .join("responses.jsonl");
    let field = opts
        .max_field_bytes
        .min(opts.max_page_bytes.saturating_sub(super::SHELL_BYTES) / 3);
    let mut pager = Pager::new(dir, Bench::Rift, model, run, opts.max_page_bytes);
    let mut rows = Vec::with_capacity(prompts.len());
    let mut showcase: Option<((u32, u32), String, usize)> = None;
    for p in &prompts {
        let mut scored: Vec<AnswerScore> = match &answers {
            Some(ix) => ix.read(&AnswerKey {
                prompt_id: p.prompt_id.clone(),
                sample_index: p.sample_index,
            })?,
            None => Vec::new(),
        };
        scored.sort_by_key(|a| a.depth);
        let response: Option<ResponseRecord> = match &responses {
            Some(ix) => ix
                .read(&ResponseKey {
                    id: p.prompt_id.clone(),
                    sample_index: p.sample_index,
                })?
                .pop(),
            None => None,
        };
        let questions: Vec<String> = response
            .as_ref()
            .and_then(|r| r.prompt_meta.get("questions"))
            .and_then(|q| serde_json::from_value(q.clone()).ok())
            .unwrap_or_default();
        // The steps share the page with the raw reply and the reasoning: each text gets a fair share.
        let per_cell = (field / scored.len().max(1)).clamp(200, 20_000);
        let steps: Vec<Value> = scored
            .iter()
            .map(|a| {
                let cell = |t: &str| shown(t, per_cell, &whole_in);
                serde_json::json!([
                    a.depth + 1,
                    a.question_number,
                    questions.get(a.depth as usize).map(|q| cell(q)),
                    cell(&a.expected),
                    a.given.as_deref().map(cell),
                    verdict_name(a.verdict),
                    source_name(a.judged_by),
                    a.wrong_question_of,
                ])
            })
            .collect();
        let judged = p.num_questions.saturating_sub(p.unjudged);
        let accuracy = (judged > 0).then(|| 100.0 * f64::from(p.correct) / f64::from(judged));
        let prompt = Prompt {
            id: &p.prompt_id,
            structure: p.structure.as_str(),
            n: p.num_questions,
            k: p.jump_k,
            outcome: outcome_name(p.outcome),
            accuracy: round(accuracy, 2),
            correct: p.correct,
            unjudged: p.unjudged,
            wrong_question: p.wrong_question,
            wrong_question_correct: p.wrong_question_correct,
            missing: p.missing,
            extra: p.extra,
            prompt_tokens: p.prompt_tokens,
            completion_tokens: p.completion_tokens,
            reasoning_tokens: p.reasoning_tokens,
            steps,
            content: response
                .as_ref()
                .and_then(|r| r.content.as_deref())
                .map(|t| shown(t, field, &whole_in)),
            reasoning: response
                .as_ref()
                .and_then(|r| r.reasoning.as_deref())
                .map(|t| shown(t, field, &whole_in)),
        };
        let page = pager.push(&prompt)?;
        let rank = (p.wrong_question, p.num_questions);
        if showcase.as_ref().is_none_or(|b| rank > b.0) {
            showcase = Some((rank, p.prompt_id.clone(), page));
        }
        rows.push(serde_json::json!([
            p.prompt_id,
            prompt.structure,
            p.num_questions,
            p.jump_k,
            prompt.accuracy,
            p.unjudged,
            p.wrong_question,
            p.wrong_question_correct,
            p.completion_tokens,
            prompt.outcome,
            page
        ]));
    }
    pager.finish(
        &[
            "id",
            "structure",
            "n",
            "k",
            "accuracy %",
            "unjudged",
            "wrong question",
            "flagged, judged correct",
            "output tokens",
            "outcome",
        ],
        &[
            false, false, true, true, true, true, true, true, true, false,
        ],
        &["structure", "n", "flagged, judged correct", "outcome"],
        rows,
        showcase.map(|(_, id, page)| (id, page)),
    )
}
