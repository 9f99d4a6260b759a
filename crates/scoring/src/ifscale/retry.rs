//! The generation retry rules: a response is asked for again when it is a list of the constraint words, a refusal
//! or a decline of the task (the refusal detector), or too short to be a report (the paper's rule (b)), and the coherence judge's prompt (around a rubric the caller passes in) and
//! the reading of its answer. Pure functions: the loop that applies them and calls the models lives outside this
//! crate (scoring never calls a model nor reads a file).
//!
//! The constraint-list rule has two readings ([`ConstraintListRule`]): the whole reply is the list
//! ([`is_constraint_list`]), or, in addition, the reply contains a run of the words anywhere
//! ([`longest_bare_word_run`]).

use std::sync::OnceLock;

use schema::ifscale::{ConstraintListRule, RejectReason};

use super::Error;

/// Fewer whitespace-separated words than this is too short to be a report (the paper's rule (b), "response refusals
/// (<20 words)").
pub const MIN_WORDS: usize = 20;
/// This many comma-separated bare words (or more) is a constraint list.
pub const CONSTRAINT_LIST_MIN_PARTS: usize = 10;

/// Whitespace-separated words.
pub fn word_count(text: &str) -> usize {
    text.split_whitespace().count()
}

/// Rule (a), whole-reply reading: the text split on commas gives at least ten parts, and every part (trimmed) is a
/// bare word `[A-Za-z]+`.
pub fn is_constraint_list(text: &str) -> bool {
    let mut parts = 0;
    for part in text.split(',') {
        let p = part.trim();
        if !is_bare_word(p) {
            return false;
        }
        parts += 1;
    }
    parts >= CONSTRAINT_LIST_MIN_PARTS
}

/// One bare word: ASCII letters only, at least one (no digit, hyphen, apostrophe, quote or markup).
fn is_bare_word(p: &str) -> bool {
    !p.is_empty() && p.bytes().all(|b| b.is_ascii_alphabetic())
}

/// The longest run of comma-separated bare words anywhere in the text (the run-in-report reading of rule (a)).
///
/// What a run is, precisely:
/// - The text is cut into segments at sentence and clause punctuation (`.`, `!`, `?`, `;`, `:`), at brackets
///   (`(`, `)`, `[`, `]`) and at line breaks, except a line break whose line ends with a comma (a list that goes on
///   on the next line). A trailing period therefore ends a run without spoiling its last word.
/// - A line's bullet or number marker (`-`, `*`, `+`, `•`, `1.`, `1)`) is dropped first.
/// - Each segment is split on commas into parts, trimmed. A run is a maximal sequence of consecutive parts that are
///   each one bare word (`[A-Za-z]+`, as in [`is_constraint_list`]: a hyphenated, quoted, emphasised or numbered
///   word is not bare and breaks the run). Lead-in text in a segment's first part ("We used revenue") is not part
///   of a run: the run starts at the next part.
/// - "and"/"or" before the last item: a part `and W` or `or W` (after an Oxford comma) counts as the item W, a part
///   `V and W` or `V or W` as the two items V and W; either ends the run.
/// - An empty part (two commas in a row, a comma before the end) ends the run.
pub fn longest_bare_word_run(text: &str) -> usize {
    let mut best = 0;
    for segment in segments(text) {
        let mut run = 0;
        for part in segment.split(',') {
            match list_items(part.trim()) {
                Some((n, last)) => {
                    run += n;
                    best = best.max(run);
                    if last {
                        run = 0;
                    }
                }
                None => run = 0,
            }
        }
    }
    best
}

/// How many list items a part is (1 for `W` or `and W`, 2 for `V and W`), and whether it must be a run's last
/// item; None when it is not a list part.
fn list_items(part: &str) -> Option<(usize, bool)> {
    if is_bare_word(part) {
        return Some((1, false));
    }
    let words: Vec<&str> = part.split_whitespace().collect();
    match words.as_slice() {
        [conj, w] if is_conjunction(conj) && is_bare_word(w) => Some((1, true)),
        [v, conj, w] if is_conjunction(conj) && is_bare_word(v) && is_bare_word(w) => {
            Some((2, true))
        }
        _ => None,
    }
}

fn is_conjunction(w: &str) -> bool {
    w.eq_ignore_ascii_case("and") || w.eq_ignore_ascii_case("or")
}

/// The text's segments (see [`longest_bare_word_run`]): lines joined where a line ends with a comma, bullet markers
/// dropped, then cut at sentence punctuation and brackets.
fn segments(text: &str) -> Vec<String> {
    let mut joined: Vec<String> = Vec::new();
    let mut continues = false;
    for line in text.lines() {
        let line = strip_marker(line.trim());
        match joined.last_mut() {
            Some(prev) if continues => {
                prev.push(' ');
                prev.push_str(line);
            }
            _ => joined.push(line.to_owned()),
        }
        continues = line.ends_with(',');
    }
    joined
        .iter()
        .flat_map(|l| {
            l.split(['.', '!', '?', ';', ':', '(', ')', '[', ']'])
                .map(str::to_owned)
        })
        .collect()
}

/// A line without its leading bullet (`-`, `*`, `+`, `•`) or number marker (`12.`, `3)`) and the space after it.
fn strip_marker(line: &str) -> &str {
    for bullet in ["- ", "* ", "+ ", "• "] {
        if let Some(rest) = line.strip_prefix(bullet) {
            return rest.trim_start();
        }
    }
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 {
        let rest = &line[digits..];
        if let Some(r) = rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") ")) {
            return r.trim_start();
        }
    }
    line
}

/// Rule (a) under a reading: the whole reply is a constraint list, or (run-in-report) it also contains a run of
/// at least ten comma-separated bare words.
pub fn is_constraint_list_under(text: &str, rule: ConstraintListRule) -> bool {
    match rule {
        ConstraintListRule::WholeReply => is_constraint_list(text),
        ConstraintListRule::RunInReport => {
            is_constraint_list(text) || longest_bare_word_run(text) >= CONSTRAINT_LIST_MIN_PARTS
        }
    }
}

/// Rule (a) (under `rule`), a refusal or a decline ([`super::refusal::detect_refusal`] says `Refused` or
/// `DeclinedImpractical`) and rule (b), in that order: the reason to reject a response text, or None when it passes.
/// The paper's rule (b) is its refusal rule; the detector also finds refusals and declines of 20 words or more, and
/// names the short ones (`refused` or `declined_impractical` instead of `too_short`).
pub fn check_response(text: &str, rule: ConstraintListRule) -> Option<RejectReason> {
    if is_constraint_list_under(text, rule) {
        Some(RejectReason::ConstraintList)
    } else if let Some(reason) = super::refusal::detect_refusal(text).reject_reason() {
        Some(reason)
    } else if word_count(text) < MIN_WORDS {
        Some(RejectReason::TooShort)
    } else {
        None
    }
}

/// The coherence judge's prompt for one report (a single user message): the rubric (the text of
/// `[judges.coherence] prompt`, e.g. `configs/prompts/ifscale-coherence.txt`, trailing whitespace dropped), then
/// the report between `<report>` tags, then the instruction to answer with the JSON object only.
pub fn coherence_judge_prompt(rubric: &str, report: &str) -> String {
    let mut p = String::with_capacity(rubric.len() + report.len() + 64);
    p.push_str(rubric);
    p.push_str("\n\n<report>\n");
    p.push_str(report.trim());
    p.push_str("\n</report>\n\nAnswer with the JSON object only.");
    p
}

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

    const WHOLE: ConstraintListRule = ConstraintListRule::WholeReply;
    const RUN: ConstraintListRule = ConstraintListRule::RunInReport;

    /// A report of more than twenty words around `middle`.
    fn report(middle: &str) -> String {
        format!(
            "The company closed the year with steady results across its three segments. {middle} \
             The board expects the same discipline to carry the business through the next two quarters."
        )
    }

    /// Each case: text, the longest run, rejected under whole-reply, rejected under run-in-report.
    #[test]
    fn both_readings_of_the_constraint_list_rule_case_by_case() {
        let ten = "revenue, audit, equity, tax, debt, ROI, ESG, asset, margin, yield";
        let cases: Vec<(&str, String, usize, bool, bool)> = vec![
            (
                "the whole reply is the list",
                ten.to_owned(),
                10,
                true,
                true,
            ),
            (
                "a run of ten inside a report",
                report(&format!("Key terms: {ten}.")),
                10,
                false,
                true,
            ),
            (
                "a trailing period ends the run, its last word still counts",
                report(&format!("{ten}.")),
                10,
                false,
                true,
            ),
            (
                "the whole reply with a trailing period is a run, not a whole-reply list",
                format!("{ten}."),
                10,
                false,
                true,
            ),
            (
                "an ordinary sentence listing four items",
                report("We watched revenue, margin, cash and equity closely."),
                1,
                false,
                false,
            ),
            (
                "four items ending the sentence: the lead-in's item is not counted",
                report("The plan covers revenue, margin, cash and equity."),
                3,
                false,
                false,
            ),
            (
                "nine words and an Oxford-comma `and` make ten",
                report(
                    "Terms: revenue, audit, equity, tax, debt, ROI, ESG, asset, margin, and yield.",
                ),
                10,
                false,
                true,
            ),
            (
                "`V and W` as the last part is two items",
                report(
                    "Terms: revenue, audit, equity, tax, debt, ROI, ESG, asset, margin and yield.",
                ),
                10,
                false,
                true,
            ),
            (
                "seven words and `asset or margin` make nine",
                report("Terms: revenue, audit, equity, tax, debt, ROI, ESG, asset or margin."),
                9,
                false,
                false,
            ),
            (
                "an `and` part ends the run: what follows starts a new one",
                report("revenue, audit, equity, tax and debt, ROI, ESG, asset, margin, yield."),
                5,
                false,
                false,
            ),
            (
                "lead-in text is not part of the run",
                report(
                    "We used revenue, audit, equity, tax, debt, ROI, ESG, asset, margin, yield.",
                ),
                9,
                false,
                false,
            ),
            (
                "a hyphenated word is not bare and breaks the run",
                report(
                    "revenue, audit, equity, tax, e-commerce, debt, ROI, ESG, asset, margin, yield.",
                ),
                6,
                false,
                false,
            ),
            (
                "a period inside the list cuts it in two",
                report("revenue, audit, equity, tax, debt. ROI, ESG, asset, margin, yield."),
                5,
                false,
                false,
            ),
            (
                "a line break cuts a run unless the line ends with a comma",
                report("revenue, audit, equity, tax, debt\nROI, ESG, asset, margin, yield."),
                5,
                false,
                false,
            ),
            (
                "a list that goes on after a comma at the end of a line",
                report("revenue, audit, equity, tax, debt,\nROI, ESG, asset, margin, yield."),
                10,
                false,
                true,
            ),
            (
                "a bullet marker is dropped",
                report(&format!("\n- {ten}\n")),
                10,
                false,
                true,
            ),
            (
                "a numbered line's marker is dropped",
                report(&format!("\n3) {ten}\n")),
                10,
                false,
                true,
            ),
            (
                "a bulleted list without commas is not comma-separated",
                format!(
                    "{}\n- revenue\n- audit\n- equity\n- tax\n- debt\n- ROI\n- ESG\n- asset\n- margin\n- yield",
                    report("")
                ),
                1,
                false,
                false,
            ),
            (
                "emphasised words are not bare",
                report(
                    "**revenue**, **audit**, **equity**, **tax**, **debt**, **ROI**, **ESG**, **asset**, **margin**, **yield**",
                ),
                0,
                false,
                false,
            ),
            (
                "two commas in a row end the run",
                report("revenue, audit, equity, tax, debt,, ROI, ESG, asset, margin, yield."),
                5,
                false,
                false,
            ),
            (
                "a list in brackets is a run",
                report(&format!("Our filings cite ({ten}) throughout.")),
                10,
                false,
                true,
            ),
            (
                "commas between clauses are no run",
                report(
                    "In the first half, sales rose, costs fell, and the margin widened, as planned.",
                ),
                0,
                false,
                false,
            ),
        ];
        for (name, text, run, whole, in_report) in cases {
            assert_eq!(longest_bare_word_run(&text), run, "{name}: run");
            assert_eq!(
                is_constraint_list_under(&text, WHOLE),
                whole,
                "{name}: whole-reply"
            );
            assert_eq!(
                is_constraint_list_under(&text, RUN),
                in_report,
                "{name}: run-in-report"
            );
            let expected = |rejected| {
                if rejected {
                    Some(RejectReason::ConstraintList)
                } else if word_count(&text) < MIN_WORDS {
                    Some(RejectReason::TooShort)
                } else {
                    None
                }
            };
            assert_eq!(check_response(&text, WHOLE), expected(whole), "{name}");
            assert_eq!(check_response(&text, RUN), expected(in_report), "{name}");
        }
    }

    #[test]
    fn retry_rules() {
        let list = "revenue, audit, equity,tax, debt, ROI, ESG, asset, margin, yield";
        assert!(is_constraint_list(list));
        for rule in [WHOLE, RUN] {
            assert_eq!(
                check_response(list, rule),
                Some(RejectReason::ConstraintList)
            );
        }
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
        for rule in [WHOLE, RUN] {
            assert_eq!(
                check_response("I cannot help with that request.", rule),
                Some(RejectReason::Refused)
            );
            // A decline of the task as impractical is named as such, not `too_short`, short or long.
            assert_eq!(
                check_response("That's too many terms for one reply.", rule),
                Some(RejectReason::DeclinedImpractical)
            );
            assert_eq!(
                check_response(
                    "Regrettably, I am not in a position to produce this report.",
                    rule
                ),
                Some(RejectReason::Refused)
            );
            assert_eq!(
                check_response("Revenue grew.", rule),
                Some(RejectReason::TooShort)
            );
            let ok = "word ".repeat(20);
            assert_eq!(check_response(&ok, rule), None);
            assert_eq!(
                check_response(&"word ".repeat(19), rule),
                Some(RejectReason::TooShort)
            );
        }
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
        assert_eq!(
            coherence_judge_prompt("Grade it.", "  The report.  "),
            "Grade it.\n\n<report>\nThe report.\n</report>\n\nAnswer with the JSON object only."
        );
    }
}
