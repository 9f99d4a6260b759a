//! RIFT scoring: parse a reply into answers, align answer i with the i-th question of the traversal, settle clear
//! cases with a deterministic pre-judge, and hand the rest to an LLM judge as request records.
//!
//! Flow: [`score`] without verdicts gives scores whose unsettled answers are [`Verdict::Unjudged`] (labelled
//! `pre_judge_only`) plus the [`JudgeRequest`]s; [`judge_prompts`] turns those into prompt records for
//! the inference client; [`parse_verdicts`] reads its responses back; [`score`] with the verdicts gives the final
//! scores. Nothing here calls a model.
//!
//! Pre-judge ([`prejudge`], rules in its docs and `docs/rift-judging.md`): it only settles what is certain. A
//! form of the given answer (normalized; also without a leading `What is` / `Who is`, or before a dash followed by
//! an explanation) equal to a form of the expected answer (normalized; also without a quoted-note parenthetical,
//! or either side of a final `(or X)`) is correct, as is the same plain number written alike (`1,440` = `1440`); an
//! answer without a letter or digit, a plain number that cannot be the expected one, an answer that rejects the
//! expected answer in so many words and one that names another numbered one (`Henry VII` for `Henry VIII`) are
//! incorrect; an empty slot is missing. Everything else is unsettled: the LLM judge's verdict decides it, and without one (no judge
//! configured, or every try of the judge failed) it stays unjudged, which is neither correct nor incorrect.
//!
//! Wrong-question flag (the paper's structural adherence): set on every given answer, whatever its verdict, that the
//! pre-judge's own matching accepts for another question of the prompt and not for its own. It never changes the
//! verdict: a match with another question's answer never makes an answer incorrect by itself (it goes to the judge
//! like any unsettled answer). The paper's figure counts the flagged answers among the incorrect ones; a flagged
//! answer the judge called correct is counted apart ([`PromptScore::wrong_question_correct`]): a lenient judge, or
//! an answer right for both questions. A paraphrase of another answer that only a judge could recognise stays
//! unflagged.
//!
//! [`parse_reply`] reads the content the client recorded: reasoning is already split off into
//! `ResponseRecord::reasoning` by the client's one `<think>` splitter. Judge requests are content-addressed, so one
//! (question, expected, given) triple is judged once; [`parse_verdicts`] keeps the newest usable try of each id, and
//! [`parse_verdict`] reads long replies too. [`pre_judge_report`] sets what the pre-judge settled beside the judge's
//! verdicts.

use std::collections::HashMap;

use schema::rift::{
    AnswerScore, JudgeRequest, JudgeSource, JudgeVerdict, PromptLine, PromptMeta, PromptScore,
    ReplyOutcome, Verdict,
};
use schema::{Message, Outcome, PromptRecord, RequestParams, ResponseRecord, ResponseReply};
use serde_json::{Map, Value};

pub mod prejudge;

pub use prejudge::{EXPLANATION_BLOCKERS, EXPLANATION_STARTS, normalize, pre_judge, pre_judge_for};
use prejudge::{ExpectedForms, GivenForms};

/// Errors of RIFT scoring: responses that do not match the prompts.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("response `{id}` (model {model}) has no prompt in the prompts file")]
    UnknownPrompt { id: String, model: String },
    #[error("prompt `{id}`: field `{field}`: {message}")]
    BadPrompt {
        id: String,
        field: String,
        message: String,
    },
}

/// A reply split into answers.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedReply {
    pub outcome: ReplyOutcome,
    /// Answers in the order given; an empty string holds a position that had no text.
    pub answers: Vec<String>,
}

/// Splits a reply into answers: wrappers (`OUTPUT:`, `Answers:`, code fences, quotes, numbering, trailing periods)
/// are dropped, then the text is split on commas and line breaks.
///
/// `content` is a response's answer as the inference client recorded it: reasoning (a `reasoning` field or
/// `<think>` blocks) is already split off into `ResponseRecord::reasoning`, which scoring never reads.
pub fn parse_reply(content: Option<&str>, outcome: Outcome) -> ParsedReply {
    let Some(content) = content.filter(|_| outcome != Outcome::Failed) else {
        return ParsedReply {
            outcome: ReplyOutcome::Failed,
            answers: Vec::new(),
        };
    };
    let truncated = outcome == Outcome::Truncated;
    let text = strip_wrappers(content);
    if text.trim().is_empty() {
        let outcome = if truncated {
            ReplyOutcome::Truncated
        } else {
            ReplyOutcome::Empty
        };
        return ParsedReply {
            outcome,
            answers: Vec::new(),
        };
    }
    let mut answers: Vec<String> = text.split([',', '\n', ';']).map(clean_item).collect();
    // A leading line that only introduces the list ("Here are my answers:").
    if answers.len() > 1
        && text
            .lines()
            .next()
            .is_some_and(|l| l.trim_end().ends_with(':'))
    {
        answers.remove(0);
    }
    while answers.last().is_some_and(|a| a.is_empty()) {
        answers.pop();
    }
    while answers.first().is_some_and(|a| a.is_empty()) {
        answers.remove(0);
    }
    if answers.is_empty() {
        let outcome = if truncated {
            ReplyOutcome::Truncated
        } else {
            ReplyOutcome::Malformed
        };
        return ParsedReply { outcome, answers };
    }
    let outcome = if truncated {
        ReplyOutcome::Truncated
    } else {
        ReplyOutcome::Ok
    };
    ParsedReply { outcome, answers }
}

fn strip_wrappers(s: &str) -> String {
    let mut t = s.trim().to_owned();
    let lower = t.to_ascii_lowercase();
    if let Some(i) = lower.rfind("output:") {
        t = t[i + "output:".len()..].to_owned();
    }
    let t = t.replace("```", "");
    let mut t = t.trim();
    for label in ["final answers:", "final answer:", "answers:", "answer:"] {
        if t.get(..label.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(label))
        {
            t = &t[label.len()..];
        }
    }
    t.trim().to_owned()
}

fn clean_item(s: &str) -> String {
    // An echoed question line ("3. Question? → Answer"): keep what follows the last arrow.
    let s = match s.rsplit_once('→') {
        Some((_, tail))
            if tail.trim_start().starts_with("Now Answer Question Number")
                || tail.trim_start().starts_with("You are done") =>
        {
            ""
        }
        Some((_, tail)) => tail,
        None => s,
    };
    let mut t = s.trim();
    // Numbering: "3.", "3)", "3:", "Q3:", "Question 3:" (only when followed by text).
    let lower = t.to_ascii_lowercase();
    let skip = lower
        .strip_prefix("question ")
        .map(|_| "question ".len())
        .or_else(|| lower.strip_prefix('q').map(|_| 1));
    let digits_from = skip
        .filter(|&n| t[n..].starts_with(|c: char| c.is_ascii_digit()))
        .unwrap_or(0);
    let digits = t[digits_from..]
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .count();
    if digits > 0 {
        let rest = &t[digits_from + digits..];
        if let Some(r) = rest.strip_prefix(['.', ')', ':'])
            && (r.starts_with(' ') || digits_from > 0)
        {
            t = r;
        }
    }
    let mut t = t.trim();
    loop {
        let before = t;
        t = t
            .trim()
            .trim_matches(['*', '`', '"', '\u{201c}', '\u{201d}'])
            .trim();
        if t.len() >= 2 && t.starts_with('\'') && t.ends_with('\'') {
            t = &t[1..t.len() - 1];
        }
        t = t
            .trim_start_matches(['-', '•'])
            .trim_end_matches(['.', '!'])
            .trim();
        if t == before {
            break;
        }
    }
    t.to_owned()
}

/// The question a given answer belongs to instead: when the pre-judge's own matching (see [`prejudge`]: the same
/// given and expected forms that make an answer correct) does not accept `given` for its own question, the first
/// other question of the traversal whose expected answer it accepts, skipping questions whose expected answer
/// normalizes to this question's. Whatever the verdict: the flag never changes it. Deterministic and
/// conservative: a paraphrase of another question's answer that only a judge would recognise is not flagged.
fn wrong_question_of(
    given: &GivenForms,
    depth: usize,
    forms: &[ExpectedForms],
    traversal: &[u32],
) -> Option<u32> {
    if forms[depth].accepts(given) {
        return None;
    }
    (0..forms.len())
        .find(|&j| j != depth && forms[j].whole != forms[depth].whole && forms[j].accepts(given))
        .map(|j| traversal[j])
}

/// The content-addressed id of a judge request.
pub fn judge_id(question: &str, expected: &str, given: &str) -> String {
    let key = format!("{question}\n{expected}\n{given}");
    format!("rift-judge-{}", &schema::sha256_hex(key.as_bytes())[..20])
}

/// How to score.
#[derive(Debug, Clone, Copy)]
pub struct ScoreOptions {
    /// Also send pre-judge-settled answers to the judge, to measure the pre-judge's agreement with it
    /// (their verdict stays the pre-judge's).
    pub judge_settled: bool,
}

/// Everything one scoring pass produces.
#[derive(Debug, Clone, Default)]
pub struct Scored {
    pub answers: Vec<AnswerScore>,
    pub prompts: Vec<PromptScore>,
    /// Distinct judge requests for unsettled answers (and settled ones with `judge_settled`), in first-use order.
    pub judge_requests: Vec<JudgeRequest>,
}

/// The scoring view of a whole prompt record.
fn line_of(p: &PromptRecord) -> Result<PromptLine, Error> {
    PromptLine::of(p).map_err(|e| Error::BadPrompt {
        id: p.id.clone(),
        field: ".".to_owned(),
        message: e.to_string(),
    })
}

/// A prompt's traversal, expected answers and questions must agree with its `num`.
fn check_prompt(p: &PromptLine) -> Result<(), Error> {
    let meta = &p.meta;
    let n = meta.traversal.len();
    if meta.expected.len() != n || meta.questions.len() != n || n != meta.num as usize {
        return Err(Error::BadPrompt {
            id: p.id.clone(),
            field: "traversal".to_owned(),
            message: format!(
                "num = {}, traversal has {n}, expected {}, questions {}",
                meta.num,
                meta.expected.len(),
                meta.questions.len()
            ),
        });
    }
    Ok(())
}

/// Scores every response against its prompt; `verdicts` are the LLM judge's (None: no judge ran).
pub fn score(
    prompts: &[PromptRecord],
    responses: &[ResponseRecord],
    verdicts: Option<&[JudgeVerdict]>,
    opts: ScoreOptions,
) -> Result<Scored, Error> {
    let verdicts = verdicts.map(verdicts_by_id);
    let lines = prompts.iter().map(line_of).collect::<Result<Vec<_>, _>>()?;
    let replies: Vec<ResponseReply> = responses.iter().map(ResponseReply::from).collect();
    score_indexed(&lines, &replies, verdicts.as_ref(), opts)
}

/// The verdicts by judge id, as [`score_indexed`] and [`pre_judge_report_indexed`] take them (a caller that
/// scores a large run chunk by chunk builds this once).
pub fn verdicts_by_id(verdicts: &[JudgeVerdict]) -> HashMap<&str, &JudgeVerdict> {
    verdicts.iter().map(|v| (v.id.as_str(), v)).collect()
}

/// [`score`] on the scoring views of the records (what a caller streaming a large run reads), with the verdicts
/// already by id.
pub fn score_indexed(
    prompts: &[PromptLine],
    responses: &[ResponseReply],
    verdicts: Option<&HashMap<&str, &JudgeVerdict>>,
    opts: ScoreOptions,
) -> Result<Scored, Error> {
    let mut metas: HashMap<&str, &PromptMeta> = HashMap::new();
    for p in prompts {
        check_prompt(p)?;
        metas.insert(p.id.as_str(), &p.meta);
    }
    let mut out = Scored::default();
    let mut requested = std::collections::HashSet::new();
    for r in responses {
        let meta = metas
            .get(r.id.as_str())
            .ok_or_else(|| Error::UnknownPrompt {
                id: r.id.clone(),
                model: r.model.clone(),
            })?;
        let mut parsed = parse_reply(r.content.as_deref(), r.outcome);
        if meta.structure == schema::rift::Structure::Baseline && parsed.answers.len() > 1 {
            // A baseline reply is one answer, commas and all.
            parsed.answers = vec![parsed.answers.join(", ")];
        }
        let n = meta.traversal.len();
        let forms: Vec<ExpectedForms> =
            meta.expected.iter().map(|e| ExpectedForms::of(e)).collect();
        let mut prompt = PromptScore {
            prompt_id: r.id.clone(),
            sample_index: r.sample_index,
            group_id: meta.group_id.clone(),
            model: r.model.clone(),
            structure: meta.structure,
            num_questions: n as u32,
            jump_k: meta.jump_k,
            outcome: parsed.outcome,
            answers_given: parsed.answers.len() as u32,
            correct: 0,
            unjudged: 0,
            accuracy: 0.0,
            wrong_question: 0,
            wrong_question_correct: 0,
            missing: 0,
            extra: parsed.answers.len().saturating_sub(n) as u32,
            stopped_early: !parsed.answers.is_empty() && parsed.answers.len() < n,
            ran_long: parsed.answers.len() > n,
            judged_by_llm: 0,
            pre_judge_only: 0,
            prompt_tokens: (r.outcome != Outcome::Failed).then_some(r.usage.prompt_tokens),
            completion_tokens: (r.outcome != Outcome::Failed).then_some(r.usage.completion_tokens),
            reasoning_tokens: r.usage.reasoning_tokens,
        };
        for depth in 0..n {
            let expected = &meta.expected[depth];
            let given = parsed.answers.get(depth).filter(|g| !g.is_empty());
            let mut a = AnswerScore {
                prompt_id: r.id.clone(),
                sample_index: r.sample_index,
                model: r.model.clone(),
                structure: meta.structure,
                depth: depth as u32,
                question_number: meta.traversal[depth],
                row: meta.rows.get(depth).copied(),
                value_normalized: meta.values_normalized.get(depth).copied().flatten(),
                expected: expected.clone(),
                given: parsed.answers.get(depth).cloned(),
                verdict: Verdict::Missing,
                judged_by: JudgeSource::None,
                pre_judge: None,
                judge_id: None,
                wrong_question_of: None,
            };
            if let Some(given) = given {
                // Correctness first: the pre-judge on this question's own expected answer, else the judge.
                // Another question's answer never settles it ("Newton" may well be right for "Isaac Newton").
                let given_forms = GivenForms::of(given);
                let pre = given_forms.verdict_for(&meta.questions[depth], &forms[depth]);
                a.pre_judge = pre;
                // The judge id (a SHA-256 of the triple) only where a judge request is wanted: the pre-judge
                // settles most answers, and a settled answer's verdict is the pre-judge's whatever the judge said.
                let id = (pre.is_none() || opts.judge_settled)
                    .then(|| judge_id(&meta.questions[depth], expected, given));
                if let Some(id) = &id {
                    if requested.insert(id.clone()) {
                        out.judge_requests.push(JudgeRequest {
                            id: id.clone(),
                            question: meta.questions[depth].clone(),
                            expected: expected.clone(),
                            given: given.clone(),
                        });
                    }
                    a.judge_id = Some(id.clone());
                }
                let llm = verdicts
                    .as_ref()
                    .map(|v| id.as_deref().and_then(|id| v.get(id)).map(|jv| jv.verdict));
                (a.verdict, a.judged_by) = match (pre, llm) {
                    (Some(true), _) => (Verdict::Correct, JudgeSource::PreJudge),
                    (Some(false), _) => (Verdict::Incorrect, JudgeSource::PreJudge),
                    (None, Some(Some(Some(v)))) => (v, JudgeSource::Llm),
                    (None, Some(Some(None))) => (Verdict::Unjudged, JudgeSource::LlmUnusable),
                    (None, Some(None) | None) => (Verdict::Unjudged, JudgeSource::PreJudgeOnly),
                };
                a.wrong_question_of =
                    wrong_question_of(&given_forms, depth, &forms, &meta.traversal);
            }
            match a.verdict {
                Verdict::Correct => prompt.correct += 1,
                Verdict::Missing => prompt.missing += 1,
                Verdict::Unjudged => prompt.unjudged += 1,
                Verdict::Incorrect => {}
            }
            match a.judged_by {
                JudgeSource::Llm => prompt.judged_by_llm += 1,
                JudgeSource::PreJudgeOnly | JudgeSource::LlmUnusable => prompt.pre_judge_only += 1,
                _ => {}
            }
            match (a.wrong_question_of, a.verdict) {
                (Some(_), Verdict::Incorrect) => prompt.wrong_question += 1,
                (Some(_), Verdict::Correct) => prompt.wrong_question_correct += 1,
                _ => {}
            }
            out.answers.push(a);
        }
        prompt.accuracy = if n == 0 {
            0.0
        } else {
            f64::from(prompt.correct) / n as f64
        };
        out.prompts.push(prompt);
    }
    Ok(out)
}

/// Judge prompt records (temperature 0 unless `params` says otherwise); `template` holds `{question}`,
/// `{expected}` and `{given}`.
pub fn judge_prompts(
    requests: &[JudgeRequest],
    template: &str,
    params: &RequestParams,
) -> Vec<PromptRecord> {
    let mut params = params.clone();
    params.temperature.get_or_insert(0.0);
    requests
        .iter()
        .map(|r| {
            let text = template
                .replace("{question}", &r.question)
                .replace("{expected}", &r.expected)
                .replace("{given}", &r.given);
            let mut extra = Map::new();
            extra.insert("task".to_owned(), Value::from("rift-judge"));
            if let Ok(Value::Object(m)) = serde_json::to_value(r) {
                for (k, v) in m.into_iter().filter(|(k, _)| k != "id") {
                    extra.insert(k, v);
                }
            }
            PromptRecord {
                id: r.id.clone(),
                messages: vec![Message::user(text)],
                sample_index: 0,
                params: params.clone(),
                extra,
            }
        })
        .collect()
}

/// Reads the judge's replies, one verdict per judge id: the newest try (highest `sample_index`) with a usable
/// verdict wins, else the id has no verdict. A reply is usable when [`parse_verdict`] reads it, also in a reply
/// cut by the token limit; failed replies never are. `tries` counts the replies seen for the id.
pub fn parse_verdicts(responses: &[ResponseReply]) -> Vec<JudgeVerdict> {
    let mut out: Vec<JudgeVerdict> = Vec::new();
    let mut at: HashMap<&str, (usize, u32, bool)> = HashMap::new();
    for r in responses {
        let raw = r.content.clone();
        let verdict = match (r.outcome, raw.as_deref()) {
            (Outcome::Ok | Outcome::Truncated, Some(text)) => parse_verdict(text),
            _ => None,
        };
        let this = JudgeVerdict {
            id: r.id.clone(),
            judge_model: r.model.clone(),
            verdict,
            raw,
            tries: 1,
        };
        match at.get_mut(r.id.as_str()) {
            None => {
                at.insert(&r.id, (out.len(), r.sample_index, verdict.is_some()));
                out.push(this);
            }
            Some((i, newest, usable)) => {
                let tries = out[*i].tries + 1;
                // A usable reply beats an unusable one; among equals the newest try wins.
                if (verdict.is_some(), r.sample_index) > (*usable, *newest) {
                    (*newest, *usable) = (r.sample_index, verdict.is_some());
                    out[*i] = this;
                }
                out[*i].tries = tries;
            }
        }
    }
    out
}

/// One judge reply to a verdict. The first word CORRECT / INCORRECT (or YES / NO / WRONG) decides; a longer reply
/// (a judge that explains itself before or after answering) is read from its last line that starts with, or is
/// labelled (`Verdict:`, `Final answer:`, `**…**`), a verdict word, then from its last verdict word. Reasoning
/// in `<think>` blocks never reaches this function: the client splits it off into the record's `reasoning`.
pub fn parse_verdict(text: &str) -> Option<Verdict> {
    fn word(w: &str, upper: &str) -> Option<Verdict> {
        match w {
            "CORRECT" | "YES" => Some(Verdict::Correct),
            "INCORRECT" | "NO" | "WRONG" => Some(Verdict::Incorrect),
            "NOT" if upper.contains("NOT CORRECT") => Some(Verdict::Incorrect),
            _ => None,
        }
    }
    fn words(s: &str) -> impl DoubleEndedIterator<Item = &str> {
        s.split(|c: char| !c.is_ascii_alphabetic())
            .filter(|w| !w.is_empty())
    }
    let upper = text.to_ascii_uppercase();
    if let Some(v) = words(&upper).next().and_then(|w| word(w, &upper)) {
        return Some(v);
    }
    // A line such as "Verdict: CORRECT", "**INCORRECT**" or "Final answer - correct".
    for line in upper.lines().rev() {
        let mut ws = words(line);
        let first = ws.next();
        let labelled = matches!(
            first,
            Some("VERDICT" | "ANSWER" | "FINAL" | "GRADE" | "JUDGMENT")
        );
        let v = if labelled {
            ws.find_map(|w| match w {
                "CORRECT" => Some(Verdict::Correct),
                "INCORRECT" | "WRONG" => Some(Verdict::Incorrect),
                _ => None,
            })
        } else {
            first.and_then(|w| word(w, line))
        };
        if v.is_some() {
            return v;
        }
    }
    // The last CORRECT / INCORRECT anywhere ("… so the given answer is incorrect.").
    words(&upper).rev().find_map(|w| match w {
        "CORRECT" => Some(Verdict::Correct),
        "INCORRECT" => Some(Verdict::Incorrect),
        _ => None,
    })
}

/// How the pre-judge fared: its share of the answered pairs it settled, and its agreement with the LLM judge
/// on the pairs both judged.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct PreJudgeReport {
    /// Answers with some text.
    pub answered: u64,
    /// Of those, settled by the pre-judge.
    pub settled_by_pre_judge: u64,
    /// Of those, judged by the LLM.
    pub judged_by_llm: u64,
    /// Unjudged: the pre-judge could not settle them and no judge verdict exists (no judge, or unusable replies).
    pub pre_judge_only: u64,
    /// Of `pre_judge_only`, those whose configured judge failed every try (`JudgeSource::LlmUnusable`).
    pub judge_failed: u64,
    /// Pairs the pre-judge settled and the LLM also judged.
    pub both: u64,
    /// Of `both`, how many verdicts agree.
    pub agree: u64,
}

/// Summarizes the pre-judge over scored answers and the judge's verdicts.
pub fn pre_judge_report(answers: &[AnswerScore], verdicts: &[JudgeVerdict]) -> PreJudgeReport {
    pre_judge_report_indexed(answers, &verdicts_by_id(verdicts))
}

/// [`pre_judge_report`] with the verdicts already by id.
pub fn pre_judge_report_indexed(
    answers: &[AnswerScore],
    by_id: &HashMap<&str, &JudgeVerdict>,
) -> PreJudgeReport {
    let mut r = PreJudgeReport::default();
    for a in answers
        .iter()
        .filter(|a| a.given.as_deref().is_some_and(|g| !g.is_empty()))
    {
        r.answered += 1;
        match a.judged_by {
            JudgeSource::PreJudge => r.settled_by_pre_judge += 1,
            JudgeSource::Llm => r.judged_by_llm += 1,
            JudgeSource::PreJudgeOnly => r.pre_judge_only += 1,
            JudgeSource::LlmUnusable => {
                r.pre_judge_only += 1;
                r.judge_failed += 1;
            }
            JudgeSource::None => {}
        }
        if let (Some(pre), Some(Some(llm))) = (
            a.pre_judge,
            a.judge_id
                .as_deref()
                .and_then(|id| by_id.get(id))
                .map(|v| &v.verdict),
        ) {
            r.both += 1;
            if pre == (*llm == Verdict::Correct) {
                r.agree += 1;
            }
        }
    }
    r
}

#[cfg(test)]
mod tests;
