//! RIFT records: prepared questions, prompt metadata, judge requests and verdicts, per-answer and per-prompt scores.

use serde::{Deserialize, Serialize};

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
}

/// Prompt structure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Structure {
    Baseline,
    Linear,
    Jumping,
}

/// The RIFT fields of a prompt record (they ride along in `PromptRecord::extra`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptMeta {
    pub benchmark: String,
    pub structure: Structure,
    /// Id shared by the linear and jumping versions of one question set.
    pub group_id: String,
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
}

/// Who settled a verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JudgeSource {
    /// The deterministic normalized-match pre-judge.
    PreJudge,
    /// An LLM judge through the inference client.
    Llm,
    /// No judge model configured: the pre-judge's "not a match" stands.
    PreJudgeOnly,
    /// No answer to judge.
    None,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Correct,
    Incorrect,
    Missing,
}

/// How a reply as a whole turned out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReplyOutcome {
    Ok,
    Empty,
    Truncated,
    Failed,
}

/// One request for the LLM judge (a line of `judge-requests.jsonl`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeRequest {
    /// `<prompt id>#<depth>`.
    pub id: String,
    pub question: String,
    pub expected: String,
    pub given: String,
}

/// One judged answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnswerScore {
    pub prompt_id: String,
    pub model: String,
    pub structure: Structure,
    /// 0-based position in the traversal (how deep into the prompt).
    pub depth: u32,
    /// 1-based question number in the prompt.
    pub question_number: u32,
    pub expected: String,
    pub given: Option<String>,
    pub verdict: Verdict,
    pub judged_by: JudgeSource,
    /// The incorrect answer matches the expected answer of this other question (1-based number).
    pub wrong_question_of: Option<u32>,
}

/// One scored prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptScore {
    pub prompt_id: String,
    pub group_id: String,
    pub model: String,
    pub structure: Structure,
    pub num_questions: u32,
    pub jump_k: Option<u32>,
    pub outcome: ReplyOutcome,
    pub correct: u32,
    pub accuracy: f64,
    pub wrong_question: u32,
    pub missing: u32,
    pub extra: u32,
    pub stopped_early: bool,
    pub ran_long: bool,
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
    pub reasoning_tokens: Option<u64>,
}
