//! IFScale records: prompt metadata, the generation attempts log, and per-sample and per-keyword scores.

use serde::{Deserialize, Serialize};

/// How a keyword list was drawn from the vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SamplingMode {
    /// The released code: numpy `RandomState(seed).permutation(len)`, first N (nested prefixes per seed).
    Paper,
    /// The paper's text: quantile strata of difficulty, proportional allocation.
    Stratified,
}

/// The IFScale fields of a prompt record (they ride along in `PromptRecord::extra`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptMeta {
    pub benchmark: String,
    pub num_rules: u32,
    pub seed: u64,
    pub sampling: SamplingMode,
    /// Number of difficulty strata (stratified sampling only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strata: Option<u32>,
    /// Keywords in prompt order.
    pub keywords: Vec<String>,
    /// SHA-256 of the prompt template file.
    pub template_sha256: String,
    /// SHA-256 of the vocabulary file.
    pub vocab_sha256: String,
}

/// Which reading of the paper's constraint-list retry rule ("lists of constraints (≥10 comma-separated single
/// words)") is applied. The paper does not say whether the list must be the whole reply; both readings are ours.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ConstraintListRule {
    /// The whole reply is ten or more comma-separated bare words (the default).
    #[default]
    WholeReply,
    /// As `whole-reply`, and also a reply that contains a run of ten or more comma-separated bare words anywhere
    /// (see `scoring::ifscale::longest_bare_word_run` for what a run is).
    RunInReport,
}

impl ConstraintListRule {
    /// The config spelling (`whole-reply`, `run-in-report`).
    pub fn name(self) -> &'static str {
        match self {
            ConstraintListRule::WholeReply => "whole-reply",
            ConstraintListRule::RunInReport => "run-in-report",
        }
    }
}

/// Why a generation attempt was rejected: one of the paper's retry rules, a truncated answer, or no answer at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RejectReason {
    /// Ten or more comma-separated bare words (as the whole reply, or as a run inside it under
    /// [`ConstraintListRule::RunInReport`]): the model listed the constraints.
    ConstraintList,
    /// Fewer than 20 words with no refusal or decline found: the paper's rule (b) ("response refusals (<20 words)").
    TooShort,
    /// The refusal detector (`scoring::ifscale::refusal`) found the model refusing the task (objecting to its
    /// content, or declining it without calling it impractical), or, for a reply it could not settle, the optional
    /// refusal judge did ([`AttemptLog::refusal_judge`]).
    Refused,
    /// The refusal detector found the model declining the task as impractical, with no objection to its content:
    /// too many words for one reply, beyond its output limit, an offer to do it in chunks, "rather than produce
    /// something low-quality I'll stop here". Kept apart from [`RejectReason::Refused`]; retried like it.
    DeclinedImpractical,
    /// The coherence judge scored below the threshold.
    Incoherent,
    /// The response hit `max_tokens`.
    Truncated,
    /// The request failed at the transport level after the client's own retries.
    RequestFailed,
}

/// One line of the IFScale attempts log: what the retry rules decided about one generation attempt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttemptLog {
    /// The prompt's id.
    pub id: String,
    pub model: String,
    /// 1-based attempt number (the response's `sample_index` + 1).
    pub attempt: u32,
    pub accepted: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<RejectReason>,
    /// The judge's 1–10 score (None when the check did not run: no judge configured, or an earlier rule rejected).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coherence: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coherence_reason: Option<String>,
    /// Why the coherence check could not give a score (judge request failed, or its answer did not parse);
    /// the attempt is then judged on the other rules only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_error: Option<crate::judge::JudgeFailure>,
    /// Whitespace-separated words in the response.
    #[serde(default)]
    pub words: u32,
    /// Seconds of the generation call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_s: Option<f64>,
    /// Visible output tokens of the attempt, reasoning tokens not included (as in `SampleScore::output_tokens`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// Reasoning tokens of the attempt, when the provider reports them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
    /// What the optional refusal judge (`[judges.refusal]`) made of a reply the refusal detector could
    /// not settle; None when it was not asked (no such judge, or the rules settled the reply).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal_judge: Option<RefusalJudgement>,
}

/// The refusal judge's decision on one attempt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RefusalJudgement {
    /// True: the reply declines the task (the attempt is rejected as `refused`); false: it attempts it. None: no
    /// readable verdict after every try (never guessed: the attempt stands as not refused, and `error` says why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<bool>,
    /// The judge's one-line reason, when it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Why there is no verdict: the request failed, or the reply could not be parsed (with what it said).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<crate::judge::JudgeFailure>,
}

/// Keyword matching semantics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MatchMode {
    /// The published analysis: `\bkw\b` exact, prefix stem for modified.
    Paper,
    /// Markdown emphasis removed, whitespace tokens with punctuation stripped from their ends, whole-token match
    /// (`*` in a keyword matches any run of characters); a token that starts with the keyword's stem is modified.
    Strict,
}

/// What a keyword's check found in a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeywordStatus {
    /// The exact word is there.
    Exact,
    /// Only a variant sharing the keyword's stem is there.
    Modified,
    /// Neither.
    Omitted,
}

/// How a sample ended: scored, or the one reason it has no report to score (from its last attempt; see
/// `scoring::ifscale::outcome`). Every sample has exactly one; failed ones are counted, never dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SampleStatus {
    /// An accepted generation was scored (the paper's accuracy counts only these).
    Scored,
    /// The model refused the task: it objected to the content, or declined without calling the task impractical
    /// (the refusal detector, `scoring::ifscale::refusal`, or the optional refusal judge).
    Refused,
    /// The model declined the task as impractical (too many words for one reply, beyond its output limit, "break it
    /// into chunks"), with no objection to its content (the refusal detector).
    DeclinedImpractical,
    /// Empty or whitespace visible text after the model spent reasoning tokens: the budget went to thinking.
    NoVisibleOutputWithReasoning,
    /// Empty or whitespace visible text, no reasoning tokens reported.
    NoVisibleOutputWithoutReasoning,
    /// The reply stopped at the output cap (`finish_reason: length`).
    Truncated,
    /// The coherence judge scored it below the threshold.
    Incoherent,
    /// A list of the keywords instead of a report (the paper's constraint-list rule).
    KeywordList,
    /// Fewer than 20 words that the refusal detector calls neither a refusal nor a decline (the paper's rule (b)
    /// still rejects it).
    TooShort,
    /// The request failed after the client's retries.
    RequestFailed,
    /// Every attempt was rejected, the reason not recorded (scores written before outcomes were).
    Failed,
}

impl SampleStatus {
    /// Every outcome, in the order tables and figures show them.
    pub const ALL: [SampleStatus; 11] = [
        SampleStatus::Scored,
        SampleStatus::Refused,
        SampleStatus::DeclinedImpractical,
        SampleStatus::NoVisibleOutputWithReasoning,
        SampleStatus::NoVisibleOutputWithoutReasoning,
        SampleStatus::Truncated,
        SampleStatus::Incoherent,
        SampleStatus::KeywordList,
        SampleStatus::TooShort,
        SampleStatus::RequestFailed,
        SampleStatus::Failed,
    ];

    /// The spelling in `scores.jsonl` (`scored`, `refused`, `declined-impractical`, `no-visible-output-with-reasoning`,
    /// …).
    pub fn name(self) -> &'static str {
        match self {
            SampleStatus::Scored => "scored",
            SampleStatus::Refused => "refused",
            SampleStatus::DeclinedImpractical => "declined-impractical",
            SampleStatus::NoVisibleOutputWithReasoning => "no-visible-output-with-reasoning",
            SampleStatus::NoVisibleOutputWithoutReasoning => "no-visible-output-without-reasoning",
            SampleStatus::Truncated => "truncated",
            SampleStatus::Incoherent => "incoherent",
            SampleStatus::KeywordList => "keyword-list",
            SampleStatus::TooShort => "too-short",
            SampleStatus::RequestFailed => "request-failed",
            SampleStatus::Failed => "failed",
        }
    }

    /// The outcome named `name` ([`SampleStatus::name`]).
    pub fn from_name(name: &str) -> Option<SampleStatus> {
        SampleStatus::ALL.into_iter().find(|s| s.name() == name)
    }

    /// A failure of the model: counted as accuracy 0 in the accuracy over all samples (everything but `scored`).
    pub fn is_failure(self) -> bool {
        match self {
            SampleStatus::Scored => false,
            SampleStatus::Refused
            | SampleStatus::DeclinedImpractical
            | SampleStatus::NoVisibleOutputWithReasoning
            | SampleStatus::NoVisibleOutputWithoutReasoning
            | SampleStatus::Truncated
            | SampleStatus::Incoherent
            | SampleStatus::KeywordList
            | SampleStatus::TooShort
            | SampleStatus::RequestFailed
            | SampleStatus::Failed => true,
        }
    }
}

/// One scored IFScale sample (per model, N, seed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SampleScore {
    pub id: String,
    pub model: String,
    pub num_rules: u32,
    pub seed: u64,
    pub mode: MatchMode,
    pub status: SampleStatus,
    /// Exact hits / N × 100 (None when failed: a failed sample has no text to score).
    pub accuracy: Option<f64>,
    pub exact: u32,
    pub modified: u32,
    pub omitted: u32,
    /// Share of errors that are omissions, in percent (0 when there are no errors).
    pub omission_pct: Option<f64>,
    pub modification_pct: Option<f64>,
    /// Miss rate among the last b constraints ÷ miss rate among the first b, b = max(1, N div 3).
    pub primacy_ratio: Option<f64>,
    pub latency_s: Option<f64>,
    /// Visible output tokens of the accepted attempt: reasoning tokens are not included (when a provider counts them
    /// inside `completion_tokens`, this is `completion_tokens − reasoning_tokens`).
    pub output_tokens: Option<u64>,
    /// The accepted attempt's coherence score (None when unchecked or failed).
    pub coherence: Option<f64>,
    /// Generation attempts made for this sample (0 when unknown, e.g. scored from a generations CSV).
    pub attempts: u32,
    /// Reasoning tokens of the accepted attempt as the provider reports them (`schema::Usage::reasoning_tokens`);
    /// None when not reported. Kept apart from `output_tokens`, never summed into it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
}

/// One keyword's status in one sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeywordLabel {
    pub id: String,
    pub model: String,
    /// 0-based position in the prompt's constraint list.
    pub position: u32,
    pub keyword: String,
    pub status: KeywordStatus,
    pub mode: MatchMode,
}

#[cfg(test)]
mod tests {
    use super::{RejectReason, SampleStatus};

    #[test]
    fn outcome_names_are_their_json_spelling() {
        for s in SampleStatus::ALL {
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(json, format!("\"{}\"", s.name()));
            assert_eq!(SampleStatus::from_name(s.name()), Some(s));
            assert_eq!(s.is_failure(), s != SampleStatus::Scored);
        }
        // The spelling of the two outcomes older files hold is unchanged.
        assert_eq!(
            serde_json::from_str::<SampleStatus>("\"failed\"").unwrap(),
            SampleStatus::Failed
        );
        assert_eq!(SampleStatus::Scored.name(), "scored");
        // `ALL` is in declaration order, so the tables' `BTreeMap`s keyed by outcome list them in `ALL` order.
        assert!(SampleStatus::ALL.windows(2).all(|w| w[0] < w[1]));
        // Names older files hold are unchanged; the decline has its own spelling in both records.
        for (s, name) in [
            (SampleStatus::Refused, "refused"),
            (SampleStatus::TooShort, "too-short"),
            (SampleStatus::DeclinedImpractical, "declined-impractical"),
        ] {
            assert_eq!(serde_json::to_string(&s).unwrap(), format!("\"{name}\""));
        }
        for (r, name) in [
            (RejectReason::Refused, "refused"),
            (RejectReason::TooShort, "too_short"),
            (RejectReason::DeclinedImpractical, "declined_impractical"),
        ] {
            assert_eq!(serde_json::to_string(&r).unwrap(), format!("\"{name}\""));
        }
    }
}
