//! The optional refusal judge's prompt and the strict reading of its answer. It is asked only about replies the
//! refusal detector leaves [`super::RefusalVerdict::Uncertain`]; the loop that asks it lives outside this crate.
//!
//! The prompt is the rubric (the text of `[judges.refusal] prompt`, by default
//! `configs/prompts/ifscale-refusal.txt`), the reply between `<reply>` tags, and the answer format, which is fixed
//! here so the instruction and the parser cannot drift apart: two lines, `REASON: <one sentence>` and
//! `VERDICT: REFUSED` or `VERDICT: ATTEMPTED`.
//!
//! The reading is strict and never guesses. Exactly one verdict is read from lines that start with `VERDICT:`
//! (after white space; the keyword and the value in any case, a final period allowed); prose around them is
//! ignored, and so is every word outside them, so "I refused to…" in an explanation is never taken for a verdict.
//! No such line, a value other than `REFUSED` or `ATTEMPTED` (`VERDICT: maybe`, `VERDICT: **REFUSED**`), or two
//! lines that disagree is an unreadable answer: an error saying which, that the caller records.

use super::Error;

/// The answer format the judge is asked for (after the reply).
const ANSWER_FORMAT: &str = "Answer with exactly two lines and nothing else:\n\
                             REASON: <one sentence>\n\
                             VERDICT: REFUSED (the reply declines the task) or VERDICT: ATTEMPTED (it attempts the report)";

/// The refusal judge's prompt for one reply (a single user message): the rubric, the reply between `<reply>` tags
/// (trimmed), then the answer format.
pub fn refusal_judge_prompt(rubric: &str, reply: &str) -> String {
    let mut p = String::with_capacity(rubric.len() + reply.len() + ANSWER_FORMAT.len() + 32);
    p.push_str(rubric.trim_end());
    p.push_str("\n\n<reply>\n");
    p.push_str(reply.trim());
    p.push_str("\n</reply>\n\n");
    p.push_str(ANSWER_FORMAT);
    p
}

/// A readable refusal verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusalJudgeVerdict {
    /// The reply declines the task.
    pub refused: bool,
    /// The `REASON:` line's text (empty without one).
    pub reason: String,
}

/// Reads the judge's answer strictly (see the module docs); an unreadable answer is an error naming why.
pub fn parse_refusal_verdict(answer: &str) -> Result<RefusalJudgeVerdict, Error> {
    let mut verdict: Option<bool> = None;
    let mut reason = String::new();
    for line in answer.lines() {
        let line = line.trim();
        if let Some(value) = field(line, "VERDICT:") {
            let value = value.strip_suffix('.').unwrap_or(value).trim();
            let said = if value.eq_ignore_ascii_case("REFUSED") {
                true
            } else if value.eq_ignore_ascii_case("ATTEMPTED") {
                false
            } else {
                return Err(Error::RefusalVerdict(format!(
                    "the VERDICT line says {value:?}, not REFUSED or ATTEMPTED"
                )));
            };
            match verdict {
                Some(v) if v != said => {
                    return Err(Error::RefusalVerdict(
                        "two VERDICT lines that disagree".to_owned(),
                    ));
                }
                _ => verdict = Some(said),
            }
        } else if let Some(value) = field(line, "REASON:")
            && reason.is_empty()
        {
            reason = value.to_owned();
        }
    }
    match verdict {
        Some(refused) => Ok(RefusalJudgeVerdict { refused, reason }),
        None => {
            let head: String = answer.trim().chars().take(80).collect();
            Err(Error::RefusalVerdict(format!(
                "no `VERDICT: REFUSED` or `VERDICT: ATTEMPTED` line in {head:?}"
            )))
        }
    }
}

/// The rest of `line` after `key` (ASCII case ignored), trimmed; None when the line does not start with it.
fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let head = line.get(..key.len())?;
    head.eq_ignore_ascii_case(key)
        .then(|| line[key.len()..].trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(answer: &str) -> Result<(bool, String), String> {
        parse_refusal_verdict(answer)
            .map(|v| (v.refused, v.reason))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn the_prompt_is_the_rubric_the_reply_and_the_format() {
        assert_eq!(
            refusal_judge_prompt("Decide.\n", "  I will not.  "),
            "Decide.\n\n<reply>\nI will not.\n</reply>\n\nAnswer with exactly two lines and nothing else:\n\
             REASON: <one sentence>\n\
             VERDICT: REFUSED (the reply declines the task) or VERDICT: ATTEMPTED (it attempts the report)"
        );
    }

    #[test]
    fn well_formed_answers_are_read() {
        assert_eq!(
            read("REASON: It declines to write the report.\nVERDICT: REFUSED"),
            Ok((true, "It declines to write the report.".to_owned()))
        );
        assert_eq!(
            read("REASON: A report follows its caveat.\nVERDICT: ATTEMPTED"),
            Ok((false, "A report follows its caveat.".to_owned()))
        );
        // Case, surrounding white space, a final period and prose around the two lines are tolerated.
        assert_eq!(read("  verdict:  refused.  "), Ok((true, String::new())));
        assert_eq!(
            read(
                "Let me look at the reply first.\n\nReason: it writes the report.\nVerdict: Attempted\n"
            ),
            Ok((false, "it writes the report.".to_owned()))
        );
        // The same verdict twice is one verdict.
        assert_eq!(
            read("VERDICT: REFUSED\nVERDICT: refused"),
            Ok((true, String::new()))
        );
    }

    #[test]
    fn unreadable_answers_are_errors_never_guesses() {
        for (answer, why) in [
            ("", "no `VERDICT"),
            ("The model refused the task.", "no `VERDICT"),
            ("REFUSED", "no `VERDICT"),
            ("REASON: it says no.", "no `VERDICT"),
            ("VERDICT: maybe", "\"maybe\""),
            ("VERDICT: **REFUSED**", "\"**REFUSED**\""),
            ("VERDICT: REFUSED, mostly", "not REFUSED or ATTEMPTED"),
            ("VERDICT:", "\"\""),
            ("VERDICT: REFUSED\nVERDICT: ATTEMPTED", "disagree"),
            ("**VERDICT: REFUSED**", "no `VERDICT"),
            ("The VERDICT: REFUSED", "no `VERDICT"),
        ] {
            let err = read(answer).unwrap_err();
            assert!(err.starts_with("refusal verdict: "), "{answer:?}: {err}");
            assert!(err.contains(why), "{answer:?}: {err}");
        }
    }
}
