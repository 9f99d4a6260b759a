//! The RIFT side of the explorer: one entry per prompt (its scores, the traversal as a table with each answer's
//! verdict and who settled it, wrong-question links (marked where the judge still called the answer correct), the raw
//! reply with its reasoning folded away). The sample list has a filter on the flagged answers judged correct.
//!
//! A paper-scale model has 20 000 prompts and 3 million answers, so only the prompt scores are held; answers and
//! responses are read back per prompt through a [`schema::LineIndex`].
//!
//! Two models side by side ([`write_pair`]): each model's verdicts are read once without their texts (a byte per
//! answer) to find the prompts where one got an answer right that the other got wrong; only those prompts' answers
//! and replies are read back, both models' in one traversal table.

use std::collections::HashMap;
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
    let mut providers = Vec::with_capacity(prompts.len());
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
        providers.push(super::provider_of(response.as_ref()));
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
    let mut list = (
        vec![
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
        vec![
            false, false, true, true, true, true, true, true, true, false,
        ],
        vec!["structure", "n", "flagged, judged correct", "outcome"],
    );
    super::with_provider_column(&mut rows, &providers, &mut list);
    pager.finish(
        super::List {
            columns: &list.0,
            numeric: &list.1,
            filters: &list.2,
            note: None,
        },
        rows,
        showcase.map(|(_, id, page)| (id, page)),
    )
}

/// An answer's verdict and where it is, read without its texts (for finding where two models differ).
#[derive(Deserialize)]
struct VerdictLine {
    prompt_id: String,
    #[serde(default)]
    sample_index: u32,
    depth: u32,
    verdict: Verdict,
}

/// Verdict codes of a model's answers by depth, per (prompt id, sample index).
const RIGHT: u8 = 1;
const WRONG: u8 = 0;
const UNSETTLED: u8 = 2;

fn verdicts(m: &ModelPaths) -> Result<HashMap<(String, u32), Vec<u8>>, Error> {
    let mut out: HashMap<(String, u32), Vec<u8>> = HashMap::new();
    if !m.answer_scores().is_file() {
        return Ok(out);
    }
    schema::read_jsonl_chunks(&m.answer_scores(), 8_192, |chunk: Vec<VerdictLine>| {
        for l in chunk {
            let v = out.entry((l.prompt_id, l.sample_index)).or_default();
            let d = l.depth as usize;
            if v.len() <= d {
                v.resize(d + 1, UNSETTLED);
            }
            v[d] = match l.verdict {
                Verdict::Correct => RIGHT,
                Verdict::Incorrect | Verdict::Missing => WRONG,
                Verdict::Unjudged => UNSETTLED,
            };
        }
        Ok::<(), Error>(())
    })?;
    Ok(out)
}

/// (a right and b wrong, b right and a wrong) over the depths both settled.
fn discordant(a: &[u8], b: &[u8]) -> (u32, u32) {
    a.iter().zip(b).fold((0, 0), |(x, y), (p, q)| {
        (
            x + u32::from(*p == RIGHT && *q == WRONG),
            y + u32::from(*q == RIGHT && *p == WRONG),
        )
    })
}

/// One model's side of a prompt shown side by side.
#[derive(Serialize)]
struct Side {
    outcome: &'static str,
    accuracy: Option<f64>,
    correct: u32,
    unjudged: u32,
    completion_tokens: Option<u64>,
    content: Option<String>,
}

/// One RIFT prompt of two models side by side.
#[derive(Serialize)]
struct PairPrompt<'a> {
    id: &'a str,
    structure: &'static str,
    n: u32,
    k: Option<u32>,
    a: Side,
    b: Side,
    /// `[step, question number, question, gold, a's reply, a's verdict, b's reply, b's verdict, "a"|"b"|""]`: the
    /// last says which model got the answer right when the other got it wrong.
    steps: Vec<Value>,
    a_only: u32,
    b_only: u32,
}

/// One model's files read for a side-by-side view: prompt scores by key, answers and responses by key.
struct PairSource {
    prompts: HashMap<(String, u32), PromptScore>,
    answers: Option<LineIndex<AnswerKey>>,
    responses: Option<LineIndex<ResponseKey>>,
    whole_in: std::path::PathBuf,
}

impl PairSource {
    fn open(m: &ModelPaths, model: &str) -> Result<PairSource, Error> {
        let prompts = schema::read_jsonl::<PromptScore>(&m.prompt_scores())?
            .into_iter()
            .map(|p| ((p.prompt_id.clone(), p.sample_index), p))
            .collect();
        Ok(PairSource {
            prompts,
            answers: if m.answer_scores().is_file() {
                Some(LineIndex::<AnswerKey>::build(&m.answer_scores(), false)?)
            } else {
                None
            },
            responses: if m.responses().is_file() {
                Some(LineIndex::<ResponseKey>::build(&m.responses(), true)?)
            } else {
                None
            },
            whole_in: Path::new("rift/models")
                .join(super::file_part(model))
                .join("responses.jsonl"),
        })
    }

    fn answers(&self, key: &(String, u32)) -> Result<Vec<AnswerScore>, Error> {
        let mut v = match &self.answers {
            Some(ix) => ix.read(&AnswerKey {
                prompt_id: key.0.clone(),
                sample_index: key.1,
            })?,
            None => Vec::new(),
        };
        v.sort_by_key(|a: &AnswerScore| a.depth);
        Ok(v)
    }

    fn response(&self, key: &(String, u32)) -> Result<Option<ResponseRecord>, Error> {
        Ok(match &self.responses {
            Some(ix) => ix
                .read(&ResponseKey {
                    id: key.0.clone(),
                    sample_index: key.1,
                })?
                .pop(),
            None => None,
        })
    }

    fn side(&self, p: &PromptScore, response: Option<&ResponseRecord>, field: usize) -> Side {
        let judged = p.num_questions.saturating_sub(p.unjudged);
        Side {
            outcome: outcome_name(p.outcome),
            accuracy: round(
                (judged > 0).then(|| 100.0 * f64::from(p.correct) / f64::from(judged)),
                2,
            ),
            correct: p.correct,
            unjudged: p.unjudged,
            completion_tokens: p.completion_tokens,
            content: response
                .and_then(|r| r.content.as_deref())
                .map(|t| shown(t, field, &self.whole_in)),
        }
    }
}

/// Writes models `a` and `b` side by side on the RIFT prompts both answered where one got an answer right that the
/// other got wrong, those with the most such answers first (at most [`Options::max_pair_samples`]).
pub(super) fn write_pair(
    (ma, a): (&ModelPaths, &str),
    (mb, b): (&ModelPaths, &str),
    dir: &Path,
    run: &str,
    opts: &Options,
) -> Result<super::PairEntry, Error> {
    let (va, vb) = (verdicts(ma)?, verdicts(mb)?);
    let (sa, sb) = (PairSource::open(ma, a)?, PairSource::open(mb, b)?);
    let mut total = 0usize;
    // (answers that differ, key, a only, b only)
    let mut differ: Vec<(u32, &(String, u32), u32, u32)> = Vec::new();
    for key in sa.prompts.keys() {
        if !sb.prompts.contains_key(key) {
            continue;
        }
        total += 1;
        let none = Vec::new();
        let (x, y) = discordant(va.get(key).unwrap_or(&none), vb.get(key).unwrap_or(&none));
        if x + y > 0 {
            differ.push((x + y, key, x, y));
        }
    }
    drop((va, vb));
    let differing = differ.len();
    differ.sort_by(|p, q| q.0.cmp(&p.0).then_with(|| p.1.cmp(q.1)));
    differ.truncate(opts.max_pair_samples);
    let field = opts
        .max_field_bytes
        .min(opts.max_page_bytes.saturating_sub(super::SHELL_BYTES) / 6);
    let mut pager = Pager::pair(dir, Bench::Rift, (a, b), run, opts.max_page_bytes);
    let mut rows = Vec::with_capacity(differ.len());
    for &(_, key, a_only, b_only) in &differ {
        let (pa, pb) = (&sa.prompts[key], &sb.prompts[key]);
        let (ra, rb) = (sa.response(key)?, sb.response(key)?);
        let (aa, ab) = (sa.answers(key)?, sb.answers(key)?);
        let questions: Vec<String> = ra
            .as_ref()
            .or(rb.as_ref())
            .and_then(|r| r.prompt_meta.get("questions"))
            .and_then(|q| serde_json::from_value(q.clone()).ok())
            .unwrap_or_default();
        let per_cell = (field / aa.len().max(ab.len()).max(1)).clamp(200, 20_000);
        let (in_a, in_b): (HashMap<u32, &AnswerScore>, HashMap<u32, &AnswerScore>) = (
            aa.iter().map(|x| (x.depth, x)).collect(),
            ab.iter().map(|x| (x.depth, x)).collect(),
        );
        let mut depths: Vec<u32> = in_a.keys().chain(in_b.keys()).copied().collect();
        depths.sort_unstable();
        depths.dedup();
        let steps: Vec<Value> = depths
            .iter()
            .filter_map(|d| {
                let (x, y) = (in_a.get(d).copied(), in_b.get(d).copied());
                let any = x.or(y)?;
                let cell = |t: &str| shown(t, per_cell, &sa.whole_in);
                let right = |v: Option<Verdict>| v == Some(Verdict::Correct);
                let wrong =
                    |v: Option<Verdict>| matches!(v, Some(Verdict::Incorrect | Verdict::Missing));
                let (vx, vy) = (x.map(|x| x.verdict), y.map(|y| y.verdict));
                let which = if right(vx) && wrong(vy) {
                    "a"
                } else if right(vy) && wrong(vx) {
                    "b"
                } else {
                    ""
                };
                Some(serde_json::json!([
                    d + 1,
                    any.question_number,
                    questions.get(*d as usize).map(|q| cell(q)),
                    cell(&any.expected),
                    x.and_then(|x| x.given.as_deref()).map(cell),
                    x.map(|x| verdict_name(x.verdict)),
                    y.and_then(|y| y.given.as_deref()).map(cell),
                    y.map(|y| verdict_name(y.verdict)),
                    which,
                ]))
            })
            .collect();
        let prompt = PairPrompt {
            id: &key.0,
            structure: pa.structure.as_str(),
            n: pa.num_questions,
            k: pa.jump_k,
            a: sa.side(pa, ra.as_ref(), field),
            b: sb.side(pb, rb.as_ref(), field),
            steps,
            a_only,
            b_only,
        };
        let page = pager.push(&prompt)?;
        rows.push(serde_json::json!([
            key.0,
            prompt.structure,
            pa.num_questions,
            prompt.a.accuracy,
            prompt.b.accuracy,
            a_only,
            b_only,
            page
        ]));
    }
    let (only_a, only_b) = (format!("right for {a} only"), format!("right for {b} only"));
    let (acc_a, acc_b) = (format!("{a} accuracy %"), format!("{b} accuracy %"));
    let entry = pager.finish(
        super::List {
            columns: &["id", "structure", "n", &acc_a, &acc_b, &only_a, &only_b],
            numeric: &[false, false, true, true, true, true, true],
            filters: &["structure", "n"],
            note: Some(format!(
                "Prompts both models answered: {total}, of which {differing} have an answer that one model got right \
                 and the other wrong (unjudged answers are neither){}. Listed with the most such answers first.",
                if differ.len() < differing {
                    format!("; the {} that differ most are listed", differ.len())
                } else {
                    String::new()
                }
            )),
        },
        rows,
        None,
    )?;
    Ok(super::PairEntry {
        a: a.to_owned(),
        b: b.to_owned(),
        paired: total,
        differing,
        entry,
    })
}
