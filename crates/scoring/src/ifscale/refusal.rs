//! The refusal detector: deterministic rules over a reply's visible text that tell a model declining the IFScale
//! task ("I'm sorry, but I can't help with that", "Including all 5 000 terms is not feasible") from a report, even
//! a report about safety, harm or anthrax that says "cannot" or "I'm sorry to report".
//!
//! The rules (every phrase is matched on the text lowercased, with Markdown emphasis and headings removed and
//! curly apostrophes made straight):
//! - A **refusal cue** is a first-person statement of declining: "I can't / cannot / won't / am unable to / am not
//!   able to / won't be able to / am not going to" followed by a task verb (help, assist, write, include, …);
//!   "I must / have to / will have to decline", "I refuse"; "sorry, (but) I can't …"; "I apologize, but";
//!   "as an AI (language model)"; "I'm not comfortable writing / including …"; or the task called impossible:
//!   "this request is not feasible", "it is impractical to include …".
//! - A **pivot** says a report follows anyway: "here is", "here's", "below is", "the following report".
//! - The **opening** is the first three sentences.
//!
//! The verdict: no cue in the opening is [`RefusalVerdict::NotRefused`], and so is a cue followed by a pivot and at
//! least [`PIVOT_REPORT_WORDS`] words (a caveat, then the report). Otherwise a reply under [`SHORT_REFUSAL_WORDS`]
//! words is [`RefusalVerdict::Refused`]; a longer one is refused when it repeats its cues ([`REPEATED_CUES`] or
//! more: a long explanation of declining), and [`RefusalVerdict::Uncertain`] otherwise: the rules cannot settle it, an
//! optional judge may, and without one it is treated as not refused (its report is scored).
//!
//! A business word never makes a cue on its own: "revenue declined", "customers were unable to pay", "we cannot
//! ignore the risk", "harmful emissions" and "I'm sorry to report a loss" have no first-person declining of the
//! task. The tests hold at least 40 written replies, refusals and reports, and no report is called a refusal.

use std::sync::OnceLock;

use regex::Regex;

/// A reply with a refusal cue in its opening and fewer words than this is a refusal.
pub const SHORT_REFUSAL_WORDS: usize = 80;
/// A longer reply with this many refusal cues or more, and no pivot to a report, is a refusal.
pub const REPEATED_CUES: usize = 2;
/// A pivot to a report followed by at least this many words makes a reply with a cue a report (a caveat first).
pub const PIVOT_REPORT_WORDS: usize = 40;
/// Sentences in the opening.
const OPENING_SENTENCES: usize = 3;

/// What the rules make of a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RefusalVerdict {
    /// The model declined the task.
    Refused,
    /// A report (or an empty reply: no visible output is its own outcome).
    NotRefused,
    /// A refusal cue the rules cannot settle (a long reply with one cue and no pivot): treated as not refused.
    Uncertain,
}

/// The verb after a first-person modal that makes it a refusal of the task.
const TASK_VERBS: &str = "help|assist|comply|fulfil|fulfill|provide|write|create|produce|complete|generate|do|\
                          draft|compose|prepare|continue|engage|support|include|incorporate|use|craft|honou?r|\
                          accommodate|process|participate|proceed";

/// Adverbs allowed between the modal and the verb ("I can't fully help").
const ADVERBS: &str =
    "really|fully|possibly|actually|simply|directly|reasonably|realistically|responsibly|ethically";

fn cue_patterns() -> &'static [Regex] {
    static CUES: OnceLock<Vec<Regex>> = OnceLock::new();
    CUES.get_or_init(|| {
        let modal = r"(?: can't| cant| cannot| can not| won't| will not| am unable to|'m unable to| am not able to|'m not able to| won't be able to| will not be able to| am not going to|'m not going to| must decline to| have to decline to)";
        [
            format!(r"\bi{modal} (?:(?:{ADVERBS}) )?(?:{TASK_VERBS})\b"),
            r"\bi(?: must| have to| will have to| need to|'ll have to|'m going to| am going to) (?:respectfully |politely )?decline\b".to_owned(),
            r"\bi (?:respectfully |politely )?(?:decline|refuse)\b".to_owned(),
            r"\bsorry\b[^.!?\n]{0,30}\bi(?: can't| cannot| can not| won't| will not| am unable|'m unable| am not able|'m not able)\b".to_owned(),
            r"\bi apologi[sz]e,? but\b".to_owned(),
            r"\bas an ai(?: language model| assistant)?\b,? i\b".to_owned(),
            r"\bi(?:'m| am) not (?:comfortable|willing to) (?:(?:with|help) )?(?:writing|write|include|including|creating|producing|helping|using|providing)\b".to_owned(),
            r"\b(?:this|your|the) (?:request|task) (?:is|would be|seems) (?:not (?:feasible|practical|possible|realistic)|impractical|infeasible|impossible|unreasonable)\b".to_owned(),
            r"\b(?:it is|it's|it would be) (?:not (?:feasible|practical|possible|realistic)|impractical|infeasible|impossible)(?: for me)? to (?:write|produce|create|include|incorporate|use|craft|compose|generate|fulfil|fulfill|complete)\b".to_owned(),
            r"\b(?:it isn't|it is not|it's not) (?:feasible|practical|possible|realistic)(?: for me)? to (?:write|produce|create|include|incorporate|use|craft|compose|generate|fulfil|fulfill|complete)\b".to_owned(),
        ]
        .iter()
        .map(|p| Regex::new(p).expect("static pattern"))
        .collect()
    })
}

fn pivot_pattern() -> &'static Regex {
    static PIVOT: OnceLock<Regex> = OnceLock::new();
    PIVOT.get_or_init(|| {
        Regex::new(r"\b(?:here is|here's|here are|below is|below are|the following (?:report|is|business report))\b")
            .expect("static pattern")
    })
}

/// The text as the rules read it: lowercased, straight apostrophes, emphasis and heading marks removed.
fn normalise(text: &str) -> String {
    text.to_lowercase()
        .replace(['\u{2019}', '\u{2018}'], "'")
        .replace(['*', '_', '#', '`'], "")
        // "I can't help but notice" is no refusal.
        .replace("help but ", "helpbut ")
}

/// The first [`OPENING_SENTENCES`] sentences (cut after `.`, `!`, `?` or a line break).
fn opening(text: &str) -> &str {
    let mut sentences = 0;
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        let end = matches!(b, b'.' | b'!' | b'?')
            && bytes.get(i + 1).is_none_or(|n| n.is_ascii_whitespace())
            || b == b'\n' && i > 0 && bytes[i - 1] != b'\n';
        if end {
            sentences += 1;
            if sentences == OPENING_SENTENCES {
                return &text[..=i];
            }
        }
    }
    text
}

/// Refusal cues in `text` (normalised), at most one per pattern and place.
fn cues(text: &str) -> usize {
    cue_patterns()
        .iter()
        .map(|re| re.find_iter(text).count())
        .sum()
}

/// The rules' verdict on a reply's visible text (see the module docs).
pub fn detect_refusal(text: &str) -> RefusalVerdict {
    let norm = normalise(text);
    let words = norm.split_whitespace().count();
    if words == 0 || cues(opening(norm.trim_start())) == 0 {
        return RefusalVerdict::NotRefused;
    }
    if let Some(m) = pivot_pattern().find(&norm)
        && norm[m.end()..].split_whitespace().count() >= PIVOT_REPORT_WORDS
    {
        return RefusalVerdict::NotRefused;
    }
    // Short, or long and repeating its cues (a long explanation of declining).
    if words < SHORT_REFUSAL_WORDS || cues(&norm) >= REPEATED_CUES {
        RefusalVerdict::Refused
    } else {
        RefusalVerdict::Uncertain
    }
}

#[cfg(test)]
#[path = "refusal_cases.rs"]
mod cases;
