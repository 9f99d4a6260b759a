//! RIFT records: prepared questions, prompt metadata, judge requests and verdicts, per-answer and per-prompt scores.
//!
//! `PromptLine` is a prompt line as scoring reads it: its key and RIFT fields, the chat messages skipped without being
//! built. `SkippedQuestion` keeps each clue the preparation dropped, with its `SkipReason`.

use serde::{Deserialize, Serialize};

/// The value of [`PromptMeta::benchmark`] for RIFT prompts.
pub const BENCHMARK: &str = "rift";

/// One prepared question/answer pair (a line of `questions.jsonl`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Question {
    /// 0-based row in the prepared dataset.
    pub row: u64,
    pub question: String,
    pub answer: String,
    pub category: String,
    /// Clue value in dollars as aired (None for Final Jeopardy!).
    pub value: Option<u32>,
    /// Value on the post-2001-11-26 scale (see jeopardy-prep for the rule).
    pub value_normalized: Option<u32>,
    pub round: String,
    pub air_date: String,
    pub show_number: Option<u32>,
    /// Where the pair came from: `<file name>#<0-based record index>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// True when the question and answer are an LLM's rephrasing of the clue.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rephrased: bool,
}

/// A source pair that preparation dropped, with the first reason that applied (a line of `skipped.jsonl`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkippedQuestion {
    /// `<file name>#<0-based record index>`.
    pub source: String,
    pub reason: SkipReason,
    /// A human-readable detail (e.g. the offending character).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    pub category: String,
    pub question: String,
    pub answer: String,
}

/// Why preparation dropped a pair, in the order the checks run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// The question or the answer is empty after cleaning.
    Empty,
    /// The clue refers to a picture, sound or video (`<a href`, "seen here", "heard here", Clue Crew).
    Media,
    /// Rephrasing was asked for but no usable rephrasing came back.
    RephraseFailed,
    /// The answer contains a comma (answers are parsed from a comma-separated list).
    AnswerComma,
    /// The pair relies on superscript or subscript (`<sup>`, `<sub>`, `²`, `₂`, `^2`).
    SuperSubscript,
    /// A character outside ASCII remains after diacritics were removed.
    NonAscii,
}

impl SkipReason {
    pub const ALL: [SkipReason; 6] = [
        SkipReason::Empty,
        SkipReason::Media,
        SkipReason::RephraseFailed,
        SkipReason::AnswerComma,
        SkipReason::SuperSubscript,
        SkipReason::NonAscii,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::Empty => "empty",
            SkipReason::Media => "media",
            SkipReason::RephraseFailed => "rephrase_failed",
            SkipReason::AnswerComma => "answer_comma",
            SkipReason::SuperSubscript => "super_subscript",
            SkipReason::NonAscii => "non_ascii",
        }
    }
}

/// Prompt structure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Structure {
    Baseline,
    Linear,
    Jumping,
}

impl Structure {
    pub fn as_str(self) -> &'static str {
        match self {
            Structure::Baseline => "baseline",
            Structure::Linear => "linear",
            Structure::Jumping => "jumping",
        }
    }
}

/// The RIFT fields of a prompt record (they ride along in `PromptRecord::extra`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptMeta {
    /// Always [`BENCHMARK`].
    pub benchmark: String,
    pub structure: Structure,
    /// Id shared by the linear and jumping versions of one question set.
    pub group_id: String,
    /// The prompt's own seed (it picks the jump step k).
    pub seed: u64,
    pub num: u32,
    pub start_row: u64,
    pub max_jump_distance: u32,
    /// The jump step k (None for linear and baseline).
    pub jump_k: Option<u32>,
    /// Question numbers (1-based) in the order they must be answered.
    pub traversal: Vec<u32>,
    /// Expected answers in traversal order.
    pub expected: Vec<String>,
    /// The questions in traversal order (for the judge).
    pub questions: Vec<String>,
    /// Dataset rows in traversal order.
    #[serde(default)]
    pub rows: Vec<u64>,
    /// Normalized clue values in traversal order (difficulty).
    #[serde(default)]
    pub values_normalized: Vec<Option<u32>>,
}

/// A RIFT prompt line as scoring reads it: the record's key and its RIFT fields. The chat messages and request
/// parameters, most of a paper-scale prompt's bytes, are skipped without being built.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PromptLine {
    pub id: String,
    #[serde(default)]
    pub sample_index: u32,
    #[serde(default, rename = "messages")]
    _messages: serde::de::IgnoredAny,
    #[serde(default, rename = "params")]
    _params: serde::de::IgnoredAny,
    #[serde(flatten)]
    pub meta: PromptMeta,
}

impl PromptLine {
    /// The scoring view of a whole prompt record.
    pub fn of(p: &crate::PromptRecord) -> Result<PromptLine, serde_json::Error> {
        Ok(PromptLine {
            id: p.id.clone(),
            sample_index: p.sample_index,
            _messages: serde::de::IgnoredAny,
            _params: serde::de::IgnoredAny,
            meta: serde_json::from_value(serde_json::Value::Object(p.extra.clone()))?,
        })
    }

    /// The key of this prompt's responses.
    pub fn key(&self) -> crate::ResponseKey {
        crate::ResponseKey {
            id: self.id.clone(),
            sample_index: self.sample_index,
        }
    }
}

/// Who settled a verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JudgeSource {
    /// The deterministic normalized-match pre-judge.
    PreJudge,
    /// An LLM judge through the inference client.
    Llm,
    /// No judge model configured and the pre-judge could not settle the answer: the verdict is
    /// [`Verdict::Unjudged`] (a designed outcome of an offline run).
    PreJudgeOnly,
    /// A judge was configured but gave no usable verdict after every try (failed, truncated or unparsable replies):
    /// the verdict is [`Verdict::Unjudged`] (a judge failure).
    LlmUnusable,
    /// No answer to judge.
    None,
}

/// The verdict on one expected answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Correct,
    Incorrect,
    Missing,
    /// An answer nobody settled: the pre-judge could not tell and no judge verdict exists (none configured, or the
    /// configured judge failed every try). Never counted correct or incorrect; it is left out of the accuracy
    /// denominator and counted on its own (accuracy bounds: settled-correct share … plus the unjudged share).
    Unjudged,
}

/// How a reply as a whole turned out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReplyOutcome {
    /// The model stopped by itself and the reply parsed into answers.
    Ok,
    /// No text at all once reasoning was removed.
    Empty,
    /// Text came back but no answer could be read from it.
    Malformed,
    /// The model hit its token limit; the answers before the cut are scored.
    Truncated,
    /// No response after all attempts.
    Failed,
}

/// One request for the LLM judge; it rides along in the judge `PromptRecord::extra`.
///
/// The judge prompt id is content-addressed (`rift-judge-<sha256 of question, expected, given>`), so the same
/// triple is judged once for every model and prompt that produced it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeRequest {
    /// The judge prompt id.
    pub id: String,
    pub question: String,
    pub expected: String,
    pub given: String,
}

/// The parsed reply of the LLM judge for one request (a line of `verdicts.jsonl`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeVerdict {
    /// The judge prompt id.
    pub id: String,
    pub judge_model: String,
    /// None when no try gave a usable reply (failed, truncated without a verdict, or unparsable).
    pub verdict: Option<Verdict>,
    /// The judge's raw reply (reasoning removed) of the try that settled it, else of the last try.
    pub raw: Option<String>,
    /// Judge requests sent for this id (try t is the judge request's `sample_index` t − 1); 0 in files written
    /// before retries existed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tries: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// One judged answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnswerScore {
    pub prompt_id: String,
    #[serde(default)]
    pub sample_index: u32,
    pub model: String,
    pub structure: Structure,
    /// 0-based position in the traversal (how deep into the prompt).
    pub depth: u32,
    /// 1-based question number in the prompt.
    pub question_number: u32,
    /// Dataset row of the question.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row: Option<u64>,
    /// Normalized clue value of the question (difficulty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_normalized: Option<u32>,
    pub expected: String,
    pub given: Option<String>,
    pub verdict: Verdict,
    pub judged_by: JudgeSource,
    /// The pre-judge's own call: Some(true) normalized match, Some(false) clear mismatch, None unsettled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_judge: Option<bool>,
    /// The judge request id, when the pair went to the LLM judge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_id: Option<String>,
    /// The answer matches the expected answer of this other question (1-based number) by the pre-judge's matching,
    /// and not its own, whatever its verdict (never set on a missing answer). Files written before issue 27 set it
    /// on incorrect answers only.
    pub wrong_question_of: Option<u32>,
}

/// One scored prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptScore {
    pub prompt_id: String,
    #[serde(default)]
    pub sample_index: u32,
    pub group_id: String,
    pub model: String,
    pub structure: Structure,
    pub num_questions: u32,
    pub jump_k: Option<u32>,
    pub outcome: ReplyOutcome,
    /// Answers read from the reply.
    #[serde(default)]
    pub answers_given: u32,
    pub correct: u32,
    /// Answers nobody settled ([`Verdict::Unjudged`]): neither correct nor incorrect.
    #[serde(default)]
    pub unjudged: u32,
    /// correct / num_questions: the lower bound of the prompt's accuracy (unjudged answers count as not correct);
    /// readers that need the judged accuracy compute correct / (num_questions − unjudged).
    pub accuracy: f64,
    /// Incorrect answers flagged as another question's answer (the paper's wrong-question count).
    pub wrong_question: u32,
    /// Answers flagged as another question's answer that the judge (or the pre-judge) called correct: a lenient
    /// judge, or an answer right for both questions.
    #[serde(default)]
    pub wrong_question_correct: u32,
    pub missing: u32,
    pub extra: u32,
    pub stopped_early: bool,
    pub ran_long: bool,
    /// Answers settled by the LLM judge.
    #[serde(default)]
    pub judged_by_llm: u32,
    /// Answers the pre-judge could not settle and no judge verdict exists for (no judge model, or its replies were
    /// unusable): the same answers as `unjudged`, kept under its old name for older readers.
    #[serde(default)]
    pub pre_judge_only: u32,
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
    pub reasoning_tokens: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{PromptRecord, ResponseRecord, ResponseReply};

    /// The scoring views read from a line equal the views of the whole records read from it.
    #[test]
    fn scoring_views_read_from_a_line_equal_those_of_the_whole_record() {
        let prompt = r#"{"id":"rift-g1-linear","messages":[{"role":"user","content":"1. Q \u2192 done"}],"sample_index":2,"params":{"max_tokens":10},"benchmark":"rift","structure":"linear","group_id":"g1","seed":7,"num":2,"start_row":3,"max_jump_distance":4,"jump_k":null,"traversal":[1,2],"expected":["a","b"],"questions":["q1","q\"2"],"rows":[3,4],"values_normalized":[200,null]}"#;
        let line: PromptLine = serde_json::from_str(prompt).unwrap();
        let record: PromptRecord = serde_json::from_str(prompt).unwrap();
        assert_eq!(line, PromptLine::of(&record).unwrap());
        assert_eq!(line.key().sample_index, 2);
        assert_eq!(line.meta.questions, ["q1", "q\"2"]);
        assert_eq!(line.meta.values_normalized, [Some(200), None]);

        let response = r#"{"schema_version":1,"id":"rift-g1-linear","sample_index":2,"model":"m","outcome":"ok","content":"a, b","usage":{"prompt_tokens":5,"completion_tokens":2},"wall_s":0.1,"attempts":[],"cache_key":"k","prompt_meta":{"questions":["q1","q2"]}}"#;
        let reply: ResponseReply = serde_json::from_str(response).unwrap();
        let record: ResponseRecord = serde_json::from_str(response).unwrap();
        assert_eq!(reply, ResponseReply::from(&record));
        assert_eq!(reply.content.as_deref(), Some("a, b"));
    }
}
