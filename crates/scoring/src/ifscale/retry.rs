//! The generation retry rules: a response is asked for again when it is a bare list of the constraint words or too
//! short to be a report (a refusal), and the coherence judge's prompt and the reading of its answer. Pure functions:
//! the loop that applies them and calls the models lives outside this crate (scoring never calls a model).

use std::sync::OnceLock;

use schema::ifscale::RejectReason;

use super::Error;

/// Fewer whitespace-separated words than this is a refusal.
pub const MIN_WORDS: usize = 20;
/// This many comma-separated bare words (or more) is a constraint list.
pub const CONSTRAINT_LIST_MIN_PARTS: usize = 10;

/// Whitespace-separated words.
pub fn word_count(text: &str) -> usize {
    text.split_whitespace().count()
}

/// Rule (a): the text split on commas gives at least ten parts, and every part (trimmed) is a bare word `[A-Za-z]+`.
pub fn is_constraint_list(text: &str) -> bool {
    let mut parts = 0;
    for part in text.split(',') {
        let p = part.trim();
        if p.is_empty() || !p.bytes().all(|b| b.is_ascii_alphabetic()) {
            return false;
        }
        parts += 1;
    }
    parts >= CONSTRAINT_LIST_MIN_PARTS
}

/// Rules (a) and (b), in that order: the reason to reject a response text, or None when it passes.
pub fn check_response(text: &str) -> Option<RejectReason> {
    if is_constraint_list(text) {
        Some(RejectReason::ConstraintList)
    } else if word_count(text) < MIN_WORDS {
        Some(RejectReason::TooShort)
    } else {
        None
    }
}

/// The coherence judge's prompt for one report (a single user message).
pub fn coherence_judge_prompt(report: &str) -> String {
    let mut p = String::with_capacity(report.len() + 2_500);
    p.push_str(COHERENCE_RUBRIC);
    p.push_str("\n\n<report>\n");
    p.push_str(report.trim());
    p.push_str("\n</report>\n\nAnswer with the JSON object only.");
    p
}

const COHERENCE_RUBRIC: &str = "\
You are grading how coherent a business report is. Judge only whether it reads as a sensible, \
well-organized business document; ignore whether its facts are true and whether it uses any particular words.

Scores:
10 Pristine: polished and well organized; every sentence is purposeful and flows from the one before.
9 Excellent: clear structure and logical flow, with at most a stray awkward phrase.
8 Very good: well organized and sensible; a few clumsy sentences or slightly forced word choices.
7 Good: clearly a business report; some padding, repetition or abrupt transitions, but the argument holds.
6 Acceptable: a plausible business report overall, although noticeable passages are forced, generic or loosely connected.
5 Uneven: report-like structure, but many sentences exist only to carry words and the thread of the argument is often lost.
4 Weak: long stretches of stilted or contradictory text; sections barely relate to each other.
3 Poor: mostly strings of loosely related phrases or lists dressed as sentences; little sense can be made of it.
2 Broken: fragments, heavy repetition or word lists with only traces of a report.
1 Gibberish: no meaningful content; random words, endless repetition or unreadable text.

Reply with one JSON object and nothing else: {\"reason\": \"<one sentence>\", \"score\": <integer 1-10>}";

/// A parsed coherence verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct CoherenceVerdict {
    /// 1–10.
    pub score: u8,
    pub reason: String,
}

/// Reads the judge's answer: the JSON object in it (code fences and surrounding prose are tolerated, also a long
/// reply that explains itself around the object: the widest span from a `{` to the last `}` that parses as an
/// object wins, trying the first `{` first), with an integer `score` from 1 to 10 and a `reason`; a bare
/// `"score": N` is accepted when no object parses.
pub fn parse_coherence_verdict(answer: &str) -> Result<CoherenceVerdict, Error> {
    let object = answer.rfind('}').and_then(|end| {
        answer[..end].match_indices('{').find_map(|(start, _)| {
            match serde_json::from_str::<serde_json::Value>(&answer[start..=end]) {
                Ok(serde_json::Value::Object(obj)) => Some(obj),
                _ => None,
            }
        })
    });
    if let Some(obj) = object {
        let score = match obj.get("score") {
            Some(serde_json::Value::Number(n)) => n.as_f64(),
            Some(serde_json::Value::String(s)) => s.trim().parse::<f64>().ok(),
            _ => None,
        };
        let reason = obj
            .get("reason")
            .and_then(|r| r.as_str())
            .unwrap_or_default()
            .trim()
            .to_owned();
        return match score {
            Some(v) if v.fract() == 0.0 && (1.0..=10.0).contains(&v) => Ok(CoherenceVerdict {
                score: v as u8,
                reason,
            }),
            Some(v) => Err(Error::Verdict(format!(
                "score {v} is not an integer from 1 to 10"
            ))),
            None => Err(Error::Verdict(
                "the JSON object has no numeric `score`".to_owned(),
            )),
        };
    }
    static LOOSE: OnceLock<regex::Regex> = OnceLock::new();
    let re = LOOSE.get_or_init(|| {
        regex::Regex::new(r#"(?i)"?score"?\s*:\s*"?(\d{1,2})\b"#).expect("static pattern")
    });
    match re.captures(answer).and_then(|c| c[1].parse::<u8>().ok()) {
        Some(v) if (1..=10).contains(&v) => Ok(CoherenceVerdict {
            score: v,
            reason: String::new(),
        }),
        Some(v) => Err(Error::Verdict(format!(
            "score {v} is not an integer from 1 to 10"
        ))),
        None => {
            let head: String = answer.chars().take(80).collect();
            Err(Error::Verdict(format!(
                "no JSON object with a score in {head:?}"
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_rules() {
        let list = "revenue, audit, equity,tax, debt, ROI, ESG, asset, margin, yield";
        assert!(is_constraint_list(list));
        assert_eq!(check_response(list), Some(RejectReason::ConstraintList));
        assert!(
            !is_constraint_list("revenue, audit, equity, tax, debt, ROI, ESG, asset, margin"),
            "nine parts"
        );
        assert!(!is_constraint_list(
            "revenue, audit, equity, tax, debt, ROI, ESG, asset, margin, cash flow"
        ));
        assert!(!is_constraint_list(
            "revenue, audit, equity, tax, debt, ROI, ESG, asset, margin, yield, "
        ));
        assert_eq!(
            check_response("I cannot help with that request."),
            Some(RejectReason::TooShort)
        );
        let ok = "word ".repeat(20);
        assert_eq!(check_response(&ok), None);
        assert_eq!(
            check_response(&"word ".repeat(19)),
            Some(RejectReason::TooShort)
        );
    }

    #[test]
    fn verdicts_parse() {
        let v =
            parse_coherence_verdict("```json\n{\"reason\": \"Reads well.\", \"score\": 8}\n```")
                .unwrap();
        assert_eq!(
            v,
            CoherenceVerdict {
                score: 8,
                reason: "Reads well.".to_owned()
            }
        );
        assert_eq!(
            parse_coherence_verdict("{\"score\": \"6\", \"reason\": \"ok\"}")
                .unwrap()
                .score,
            6
        );
        assert_eq!(
            parse_coherence_verdict("Score: 3, because it is a list")
                .unwrap()
                .score,
            3
        );
        assert!(parse_coherence_verdict("{\"score\": 11}").is_err());
        assert!(parse_coherence_verdict("{\"score\": 6.5}").is_err());
        assert!(parse_coherence_verdict("no idea").is_err());
        // A long reply: prose with braces before the object, which is read whole.
        let long = "The report uses {placeholders} in two places, and the score: 2 rubric line does not fit.\n\n\
                    {\"reason\": \"Mostly coherent; a {few} odd phrases.\", \"score\": 7}\nThat is my grade.";
        assert_eq!(
            parse_coherence_verdict(long).unwrap(),
            CoherenceVerdict {
                score: 7,
                reason: "Mostly coherent; a {few} odd phrases.".to_owned()
            }
        );
        let prompt = coherence_judge_prompt("  The report.  ");
        assert!(prompt.contains("<report>\nThe report.\n</report>"));
        assert!(prompt.contains("10 Pristine") && prompt.contains("1 Gibberish"));
    }
}
