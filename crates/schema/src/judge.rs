//! What a judge is, whichever benchmark it works for: its role (what it decides) and why it gave no verdict on an
//! item. A judge is an LLM asked about items the rules cannot settle: RIFT answers the pre-judge leaves open, IFScale
//! reports' coherence, IFScale replies the refusal detector cannot call. Every record, table, folder and message
//! that names a judge names it by [`JudgeRole`]; every "no verdict" is a [`JudgeFailure`].

use serde::{Deserialize, Serialize};

use crate::paths::Bench;

/// A judge's role: what it decides, in which benchmark. The one name of a judge in records, tables, folders and
/// messages; the serde names are the labels `judge-check.json` has always carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum JudgeRole {
    /// RIFT: whether an answer matches the expected one.
    #[serde(rename = "RIFT answer judge")]
    RiftAnswers,
    /// IFScale: how coherent a report is (a score against a threshold).
    #[serde(rename = "IFScale coherence judge")]
    Coherence,
    /// IFScale: whether a reply the refusal detector cannot settle refuses the task.
    #[serde(rename = "IFScale refusal judge")]
    Refusal,
}

impl JudgeRole {
    /// Every role, in the order checks run and tables list them.
    pub const ALL: [JudgeRole; 3] = [
        JudgeRole::RiftAnswers,
        JudgeRole::Coherence,
        JudgeRole::Refusal,
    ];

    /// The benchmark whose items it judges.
    pub fn bench(self) -> Bench {
        match self {
            JudgeRole::RiftAnswers => Bench::Rift,
            JudgeRole::Coherence | JudgeRole::Refusal => Bench::Ifscale,
        }
    }

    /// Its table in the pipeline config: `[judges.<key>]` (`rift`, `coherence`, `refusal`).
    pub fn key(self) -> &'static str {
        match self {
            JudgeRole::RiftAnswers => "rift",
            JudgeRole::Coherence => "coherence",
            JudgeRole::Refusal => "refusal",
        }
    }

    /// Its label (`RIFT answer judge`, …), as in `judge-check.json` and every message.
    pub fn label(self) -> &'static str {
        match self {
            JudgeRole::RiftAnswers => "RIFT answer judge",
            JudgeRole::Coherence => "IFScale coherence judge",
            JudgeRole::Refusal => "IFScale refusal judge",
        }
    }

    /// The name its check of `judge` goes by: the folder under `<run>/<bench>/judge-check/`
    /// (`RunPaths::judge_check_dir`) and its tally. The judge's own name, except for the refusal judge,
    /// `refusal-<judge>`, kept apart from the coherence judge's when one model is both.
    pub fn check_name(self, judge: &str) -> String {
        match self {
            JudgeRole::RiftAnswers | JudgeRole::Coherence => judge.to_owned(),
            JudgeRole::Refusal => format!("refusal-{judge}"),
        }
    }
}

impl std::fmt::Display for JudgeRole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

/// Why a judge gave no verdict on an item, after every try. Written in records as one line of text (the words
/// the attempts logs have always carried: `judge request failed: …`, `no judge response`, `empty judge answer`,
/// else what the reply's parser said), read back into the same variant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JudgeFailure {
    /// The judge request itself failed (with the client's error); a rerun asks again.
    RequestFailed(String),
    /// The responses file has no answer for it (not sent: the cost limit, or a batch job's answers still to come).
    NoResponse,
    /// The judge answered with no text.
    EmptyAnswer,
    /// The judge answered, but no verdict could be read from it (what the parser said): the judge's own failure,
    /// which its cached answers repeat on a rerun.
    Unreadable(String),
}

const REQUEST_FAILED: &str = "judge request failed";
const NO_RESPONSE: &str = "no judge response";
const EMPTY_ANSWER: &str = "empty judge answer";

impl JudgeFailure {
    /// The request failed or was never answered: the run is incomplete for it, and a rerun asks again (unlike an
    /// answer without a readable verdict).
    pub fn is_unanswered(&self) -> bool {
        matches!(
            self,
            JudgeFailure::RequestFailed(_) | JudgeFailure::NoResponse
        )
    }

    /// Reads the line [`std::fmt::Display`] writes.
    pub fn parse(line: &str) -> JudgeFailure {
        if line == NO_RESPONSE {
            JudgeFailure::NoResponse
        } else if line == EMPTY_ANSWER {
            JudgeFailure::EmptyAnswer
        } else if let Some(rest) = line.strip_prefix(REQUEST_FAILED) {
            JudgeFailure::RequestFailed(rest.strip_prefix(": ").unwrap_or(rest).to_owned())
        } else {
            JudgeFailure::Unreadable(line.to_owned())
        }
    }
}

impl std::fmt::Display for JudgeFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JudgeFailure::RequestFailed(e) => write!(f, "{REQUEST_FAILED}: {e}"),
            JudgeFailure::NoResponse => f.write_str(NO_RESPONSE),
            JudgeFailure::EmptyAnswer => f.write_str(EMPTY_ANSWER),
            JudgeFailure::Unreadable(why) => f.write_str(why),
        }
    }
}

impl Serialize for JudgeFailure {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for JudgeFailure {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<JudgeFailure, D::Error> {
        let line = String::deserialize(d)?;
        Ok(JudgeFailure::parse(&line))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The roles and benchmarks are written with the labels `judge-check.json` has always had, so older files
    /// read, and each role names its own benchmark and check folder.
    #[test]
    fn roles_keep_the_labels_of_earlier_files() {
        for role in JudgeRole::ALL {
            let json = serde_json::to_string(&role).unwrap();
            assert_eq!(json, format!("\"{}\"", role.label()));
            assert_eq!(serde_json::from_str::<JudgeRole>(&json).unwrap(), role);
        }
        assert_eq!(
            serde_json::to_string(&Bench::Ifscale).unwrap(),
            "\"ifscale\""
        );
        assert_eq!(JudgeRole::Coherence.bench(), Bench::Ifscale);
        assert_eq!(JudgeRole::RiftAnswers.bench(), Bench::Rift);
        assert_eq!(JudgeRole::Refusal.check_name("j"), "refusal-j");
        assert_eq!(JudgeRole::Coherence.check_name("j"), "j");
        assert!(serde_json::from_str::<JudgeRole>("\"IFScale judge\"").is_err());
    }

    /// Each failure is written as the attempts logs always wrote it and read back into the same variant; only a
    /// failed or unanswered request counts as unanswered.
    #[test]
    fn failures_are_written_as_before_and_read_back() {
        let cases = [
            (
                JudgeFailure::RequestFailed("HTTP 500".to_owned()),
                "judge request failed: HTTP 500",
            ),
            (JudgeFailure::NoResponse, "no judge response"),
            (JudgeFailure::EmptyAnswer, "empty judge answer"),
            (
                JudgeFailure::Unreadable("no score in the answer".to_owned()),
                "no score in the answer",
            ),
        ];
        for (failure, line) in cases {
            let json = serde_json::to_string(&failure).unwrap();
            assert_eq!(json, serde_json::to_string(line).unwrap());
            assert_eq!(
                serde_json::from_str::<JudgeFailure>(&json).unwrap(),
                failure
            );
        }
        assert!(JudgeFailure::NoResponse.is_unanswered());
        assert!(JudgeFailure::RequestFailed(String::new()).is_unanswered());
        assert!(!JudgeFailure::EmptyAnswer.is_unanswered());
        assert!(!JudgeFailure::Unreadable("x".to_owned()).is_unanswered());
    }
}
