//! How a sample ended: the one outcome (`schema::ifscale::SampleStatus`) its attempts log gives it.
//!
//! A sample with an accepted attempt is `scored`. Otherwise its last attempt decides (the retry rules ran out on
//! it), in this order: a failed request is `request-failed`; empty or whitespace visible text is no visible output,
//! `with-reasoning` when the provider reported reasoning tokens (the budget went to thinking), else
//! `without-reasoning`, whatever rule rejected it (a truncated empty reply is no visible output, not truncated);
//! then the rule that rejected it: `truncated`, `keyword-list` (a constraint list), `refused` (the refusal
//! detector's content refusal, or the refusal judge's verdict), `declined-impractical` (the detector's decline of the
//! task as impractical), `too-short` (the paper's rule (b) with neither found), `incoherent`.

use schema::ifscale::{AttemptLog, RejectReason, SampleStatus};

/// The outcome one attempt would give its sample (`scored` when accepted).
pub fn attempt_outcome(log: &AttemptLog) -> SampleStatus {
    if log.accepted {
        return SampleStatus::Scored;
    }
    if log.reason == Some(RejectReason::RequestFailed) {
        return SampleStatus::RequestFailed;
    }
    if log.words == 0 {
        return if log.reasoning_tokens.is_some_and(|t| t > 0) {
            SampleStatus::NoVisibleOutputWithReasoning
        } else {
            SampleStatus::NoVisibleOutputWithoutReasoning
        };
    }
    match log.reason {
        Some(RejectReason::Truncated) => SampleStatus::Truncated,
        Some(RejectReason::ConstraintList) => SampleStatus::KeywordList,
        Some(RejectReason::Refused) => SampleStatus::Refused,
        Some(RejectReason::DeclinedImpractical) => SampleStatus::DeclinedImpractical,
        Some(RejectReason::TooShort) => SampleStatus::TooShort,
        Some(RejectReason::Incoherent) => SampleStatus::Incoherent,
        Some(RejectReason::RequestFailed) => SampleStatus::RequestFailed,
        None => SampleStatus::Failed,
    }
}

/// A sample's outcome from its attempts in order: `scored` when one was accepted, else its last attempt's
/// ([`attempt_outcome`]); `failed` (reason unknown) with no attempt at all.
pub fn sample_outcome(logs: &[AttemptLog]) -> SampleStatus {
    if logs.iter().any(|l| l.accepted) {
        return SampleStatus::Scored;
    }
    logs.last().map_or(SampleStatus::Failed, attempt_outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(reason: Option<RejectReason>, words: u32, reasoning: Option<u64>) -> AttemptLog {
        AttemptLog {
            id: "s".to_owned(),
            model: "m".to_owned(),
            attempt: 1,
            accepted: reason.is_none(),
            reason,
            coherence: None,
            coherence_reason: None,
            judge_error: None,
            words,
            latency_s: None,
            output_tokens: None,
            reasoning_tokens: reasoning,
            refusal_judge: None,
        }
    }

    #[test]
    fn each_attempt_maps_to_one_outcome() {
        use RejectReason as R;
        use SampleStatus as S;
        let cases = [
            (log(None, 300, None), S::Scored),
            (log(Some(R::RequestFailed), 0, None), S::RequestFailed),
            (
                log(Some(R::Truncated), 0, Some(4096)),
                S::NoVisibleOutputWithReasoning,
            ),
            (
                log(Some(R::TooShort), 0, Some(0)),
                S::NoVisibleOutputWithoutReasoning,
            ),
            (
                log(Some(R::TooShort), 0, None),
                S::NoVisibleOutputWithoutReasoning,
            ),
            (log(Some(R::Truncated), 900, Some(10)), S::Truncated),
            (log(Some(R::ConstraintList), 12, None), S::KeywordList),
            (log(Some(R::Refused), 9, None), S::Refused),
            (
                log(Some(R::DeclinedImpractical), 30, None),
                S::DeclinedImpractical,
            ),
            (log(Some(R::TooShort), 9, None), S::TooShort),
            (log(Some(R::Incoherent), 400, None), S::Incoherent),
        ];
        for (l, want) in cases {
            assert_eq!(attempt_outcome(&l), want, "{l:?}");
        }
    }

    #[test]
    fn the_last_attempt_decides_unless_one_was_accepted() {
        let refused = log(Some(RejectReason::Refused), 9, None);
        let truncated = log(Some(RejectReason::Truncated), 900, None);
        assert_eq!(
            sample_outcome(&[refused.clone(), truncated.clone()]),
            SampleStatus::Truncated
        );
        assert_eq!(
            sample_outcome(&[truncated, refused.clone()]),
            SampleStatus::Refused
        );
        assert_eq!(
            sample_outcome(&[refused, log(None, 300, None)]),
            SampleStatus::Scored
        );
        assert_eq!(sample_outcome(&[]), SampleStatus::Failed);
    }
}
