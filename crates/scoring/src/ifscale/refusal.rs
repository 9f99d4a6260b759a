//! The refusal detector: deterministic rules over a reply's visible text that tell a model declining the IFScale
//! task from a report, and a content refusal ("I'm sorry, but I can't write about anthrax") from a decline of the
//! task as impractical ("That's too many terms for one reply; I'd suggest breaking the list into chunks"), while a
//! report about safety, harm or anthrax that says "cannot", "unable", "impractical" or "I'm sorry to report" stays a
//! report.
//!
//! Every phrase is matched on the text lowercased, with Markdown emphasis and headings removed, curly apostrophes
//! made straight and the `<report>` tags the prompt asks for read as line breaks. A **sentence** ends after `.`, `!`
//! or `?` (before white space) or at a line break; the **opening** is the first three sentences.
//!
//! # What the rules look for
//! - A **refusal cue** is a stock statement of declining: "I can't / cannot / won't / am unable to / am not able
//!   to / won't be able to / am not going to / am not in a position to / would rather not / would prefer not to"
//!   followed by a task verb (help, assist, write, include, …); "I must / have to / will have to decline", "I
//!   refuse", "I'll (have to) pass on this"; "sorry, (but) I can't …", "sorry, can't …"; "I apologize, but"; "as an
//!   AI (language model)"; "I'm not comfortable writing / including …"; "this isn't something I can …"; the task
//!   called impossible ("this request is not feasible", "it is impractical to include …"); or giving up on it
//!   ("I'll stop here", "rather than produce something low-quality").
//! - A **pivot** says a report follows anyway: "here is", "here's", "below is", "the following report".
//! - A sentence **talks about the task** when it names it: the keywords, "these / all 500 / the required terms",
//!   "the list", "this request / task / prompt", "one reply / a single response / this report", "my output", the
//!   output or context limit, chunks or batches, "several replies", "in parts".
//! - **Report prose** is the words of the sentences that neither talk about the task, nor speak as "I" ("I", "me",
//!   "my"), nor hold a cue: the text a report is made of, which a decline has almost none of.
//! - A **decline sentence** talks about the task and gives a reason or an alternative, outside the words that name
//!   the task: a first-person "can't / won't / would rather not"; the task called impractical, unrealistic or
//!   impossible; too many words, too long, beyond or over a limit; a smaller list, chunks, parts or several
//!   replies; "would you like / let me know / I'd suggest / instead"; stopping here; a result that would be
//!   low-quality, filler or unreadable. An apology alone is no reason ("this report, unfortunately, cannot cover
//!   every market" is a report's sentence).
//!
//! # The verdict
//! 1. An empty reply is [`RefusalVerdict::NotRefused`] (no visible output is its own outcome). So is a reply with a
//!    report: a `<report>` span, or the text after a pivot, with at least [`PIVOT_REPORT_WORDS`] words of report
//!    prose (a caveat, then the report).
//! 2. With a cue in the opening, a reply under [`SHORT_REFUSAL_WORDS`] words declines; a longer one declines when
//!    it repeats its cues ([`REPEATED_CUES`] or more: a long explanation of declining), and is
//!    [`RefusalVerdict::Uncertain`] otherwise: the rules cannot settle it (one cue, then a long text with no report
//!    after a pivot: a caveat and a report, or an explanation of declining), an optional judge may, and without one
//!    it is treated as not refused (its report is scored). The task-talk rule below is not applied here, so a long
//!    decline with one stock cue stays uncertain where the same text without the cue would be settled: the judge
//!    check's committed controls (`datasets/ifscale-refusal/controls.jsonl`, held uncertain by a test in
//!    `harness::judge_check`) are such replies, and settling them would first need new controls.
//! 3. Without a cue in the opening (the **task-talk rule**), a reply with fewer than [`REPORT_PROSE_WORDS`] words of
//!    report prose declines when it has a decline sentence or a cue later on: it has no report in it and talks
//!    about the task. Under [`super::MIN_WORDS`] words (the paper's rule (b) rejects such a reply anyway) an
//!    apology or regret with a bare no ("Sorry, no.", "I'm afraid not.") or with "that / this / it" called
//!    impossible ("Unfortunately, that's not possible.", but not "it is not possible to pay a dividend") is enough.
//!    Otherwise the reply is not refused.
//!
//! A reply that declines is a content refusal, [`RefusalVerdict::Refused`], when it objects to what it was asked to
//! write (harm, danger, weapons, toxins, slurs, hate, policy or guidelines, what it is not permitted to write, real
//! people, misleading readers, …) or gives no reason at all; it is [`RefusalVerdict::DeclinedImpractical`] when it
//! calls the task impractical (too many words, a length or output limit, a single reply, chunks or parts, smaller
//! lists, a result that would be low-quality or unreadable, not feasible or realistic) without objecting to its
//! content. An objection to content wins over impracticality.
//!
//! A business word never makes a cue or a decline sentence on its own: "revenue declined", "customers were unable
//! to pay", "we cannot ignore the risk", "it was impractical to keep the plant open", "harmful emissions" and "I'm
//! sorry to report a loss" neither decline the task as "I" nor name it, and a report has far more than
//! [`REPORT_PROSE_WORDS`] words of report prose. The tests hold at least 60 written refusals and declines (each
//! with its kind) and 60 caveated or negation-heavy reports, and no report is called a refusal or a decline.

use std::sync::OnceLock;

use regex::Regex;
use schema::ifscale::RejectReason;

/// A reply with a refusal cue in its opening and fewer words than this declines.
pub const SHORT_REFUSAL_WORDS: usize = 80;
/// A longer reply with this many refusal cues or more, and no report after a pivot, declines.
pub const REPEATED_CUES: usize = 2;
/// A pivot to a report (or a `<report>` span) followed by at least this many words of report prose makes a reply a
/// report (a caveat first).
pub const PIVOT_REPORT_WORDS: usize = 40;
/// A reply without a cue in its opening and with fewer words of report prose than this has no report in it: the
/// task-talk rule applies. The same size as a report after a pivot.
pub const REPORT_PROSE_WORDS: usize = PIVOT_REPORT_WORDS;
/// Sentences in the opening.
const OPENING_SENTENCES: usize = 3;
/// The paper's rule (b) ([`super::MIN_WORDS`]): under this many words an apology with a bare no, or with the task
/// called impossible by a pronoun, is enough.
const FEW_WORDS: usize = super::retry::MIN_WORDS;

/// What the rules make of a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RefusalVerdict {
    /// The model refused the task: it objects to the content, or declines without calling the task impractical.
    Refused,
    /// The model declined the task as impractical (its size, a length limit, an offer to do it in parts), with no
    /// objection to its content.
    DeclinedImpractical,
    /// A report (or an empty reply: no visible output is its own outcome).
    NotRefused,
    /// A refusal cue the rules cannot settle (a long reply with one cue and no report after a pivot): treated as not
    /// refused.
    Uncertain,
}

impl RefusalVerdict {
    /// The reply declines the task (either kind).
    pub fn declines(self) -> bool {
        matches!(
            self,
            RefusalVerdict::Refused | RefusalVerdict::DeclinedImpractical
        )
    }

    /// The reason an attempt with this verdict is rejected (None when it is not).
    pub fn reject_reason(self) -> Option<RejectReason> {
        match self {
            RefusalVerdict::Refused => Some(RejectReason::Refused),
            RefusalVerdict::DeclinedImpractical => Some(RejectReason::DeclinedImpractical),
            RefusalVerdict::NotRefused | RefusalVerdict::Uncertain => None,
        }
    }
}

/// The verb after a first-person modal that makes it a refusal of the task.
const TASK_VERBS: &str = "help|assist|comply|fulfil|fulfill|provide|write|create|produce|complete|generate|do|\
                          draft|compose|prepare|continue|engage|support|include|incorporate|use|craft|honou?r|\
                          accommodate|process|participate|proceed|attempt|go ahead";

/// Adverbs allowed between the modal and the verb ("I can't fully help").
const ADVERBS: &str = "really|fully|possibly|actually|simply|directly|reasonably|realistically|responsibly|\
                       ethically|properly|sensibly|meaningfully|in good conscience";

fn compile(patterns: &[String]) -> Vec<Regex> {
    patterns
        .iter()
        .map(|p| Regex::new(p).expect("static pattern"))
        .collect()
}

fn cue_patterns() -> &'static [Regex] {
    static CUES: OnceLock<Vec<Regex>> = OnceLock::new();
    CUES.get_or_init(|| {
        let modal = r"(?: can't| cant| cannot| can not| won't| will not| am unable to|'m unable to| am not able to|'m not able to| won't be able to| will not be able to| am not going to|'m not going to| must decline to| have to decline to| am not in a position to|'m not in a position to|'d rather not| would rather not|'d prefer not to| would prefer not to| don't think i can| do not think i can| don't think i should| do not think i should)";
        let verbs = format!(r"(?:(?:{ADVERBS}) )?(?:{TASK_VERBS})");
        compile(&[
            format!(r"\bi{modal} {verbs}\b"),
            // "I'd rather not write this", "I'd prefer not to take this on": the same with "to" optional.
            format!(r"\bi(?:'d| would) (?:rather|prefer) not (?:to )?(?:{verbs}|take (?:this|it) on)\b"),
            r"\bi(?:'d| would) (?:rather|prefer) not(?: to)?\s*(?:[.!]|$)".to_owned(),
            r"\bi(?: must| have to| will have to| need to|'ll have to|'m going to| am going to|'d like to| would like to) (?:respectfully |politely )?(?:decline|pass)\b".to_owned(),
            r"\bi (?:respectfully |politely )?(?:decline|refuse)\b".to_owned(),
            r"\bi(?:'m| am) (?:respectfully |politely )?(?:declining|refusing|passing on)\b".to_owned(),
            r"\bi(?:'m going to| am going to|'ll| will| must| have to|'ll have to| need to)(?: have to)? say no\b".to_owned(),
            r"\bi (?:can't|cannot|can not) bring myself to\b".to_owned(),
            r"\bi(?: won't| will not|'m not| am not) be (?:writing|producing|creating|drafting|completing|doing|taking on|preparing|composing|attempting|providing|helping)\b".to_owned(),
            r"\bi(?:'ll| will) (?:respectfully |politely )?pass\b".to_owned(),
            r"\bsorry\b[^.!?\n]{0,30}\bi(?: can't| cannot| can not| won't| will not| am unable|'m unable| am not able|'m not able)\b".to_owned(),
            r"\bsorry\b[,;:]?(?: but)? (?:can't|cannot|won't) (?:do|help|write|take)\b".to_owned(),
            r"\b(?:i apologi[sz]e|my apologies|apologies),? but\b".to_owned(),
            r"\bas an ai(?: language model| assistant)?\b,? i\b".to_owned(),
            r"\bi(?:'m| am) not (?:comfortable|willing to) (?:(?:with|help) )?(?:writing|write|include|including|creating|producing|helping|using|providing)\b".to_owned(),
            r"(?:\bnot|n't) (?:something|a task|a request|one|a document|a report|a piece) (?:that )?i(?:'m| am)? (?:can|could|will|able to|willing to|going to)\b".to_owned(),
            r"\b(?:this|your|the) (?:request|task) (?:is|would be|seems) (?:not (?:feasible|practical|possible|realistic)|impractical|infeasible|impossible|unreasonable)\b".to_owned(),
            r"\b(?:it is|it's|it would be) (?:not (?:feasible|practical|possible|realistic)|impractical|infeasible|impossible)(?: for me)? to (?:write|produce|create|include|incorporate|use|craft|compose|generate|fulfil|fulfill|complete)\b".to_owned(),
            r"\b(?:it isn't|it is not|it's not) (?:feasible|practical|possible|realistic)(?: for me)? to (?:write|produce|create|include|incorporate|use|craft|compose|generate|fulfil|fulfill|complete)\b".to_owned(),
            // Giving up on the task: "I'll stop here", "rather than produce something low-quality".
            r"\bi(?:'ll| will|'m going to| am going to|'d better| had better) (?:stop|leave it|end|pause)(?: it)? (?:here|there|at that|at this point|for now)\b".to_owned(),
            r"\brather than (?:produce|write|deliver|hand(?: you| over)?|give you|send|output|attempt|return|submit)\b[^.!?\n]{0,50}\b(?:low[- ]quality|poor[- ]quality|subpar|incoherent|unreadable|filler|nonsense|word salad|padding|half-finished|incomplete|watered[- ]down|a mess|a jumble)".to_owned(),
        ])
    })
}

fn pivot_pattern() -> &'static Regex {
    static PIVOT: OnceLock<Regex> = OnceLock::new();
    PIVOT.get_or_init(|| {
        Regex::new(r"\b(?:here is|here's|here are|below is|below are|the following (?:report|is|business report))\b")
            .expect("static pattern")
    })
}

/// Phrases that name the task (see the module docs); a match followed by " of " and a word outside
/// [`LIST_OF_TASK`] is a business phrase ("the list of suppliers"), and "task force" is no task.
fn task_patterns() -> &'static [Regex] {
    static TASK: OnceLock<Vec<Regex>> = OnceLock::new();
    TASK.get_or_init(|| {
        let nouns = r"(?:key ?words?|words?|terms?|constraints?|entries|items|requirements|instructions|vocabulary)";
        let number = r"(?:\d{2,}|\d{1,3}(?:,\d{3})+|hundreds?|thousands?|(?:one|two|three|four|five|six|seven|eight|nine|ten|fifteen|twenty|fifty) (?:hundred|thousand))";
        let adjectives = r"(?:required|listed|given|provided|distinct|separate|different|specific|individual|exact|mandatory|dictated|remaining|requested|unique)";
        compile(&[
            r"\bkey ?words?\b".to_owned(),
            format!(r"\b(?:these|those|your|all(?: of)?(?: the| these| your| those)?|(?:every one|each|several|some|many|a few|most|none) of (?:the|these|your|those)|the {adjectives})\s+(?:(?:{number}|{adjectives})\s+){{0,2}}{nouns}\b"),
            format!(r"\b{number}\s+(?:of\s+(?:the\s+|these\s+|your\s+)?)?(?:{adjectives}\s+){{0,2}}{nouns}\b"),
            format!(r"\b{adjectives} {nouns}\b"),
            r"\bevery (?:single )?(?:one of the )?(?:required |listed |given )?(?:key ?word|word|term|constraint)\b".to_owned(),
            r"\b(?:the|this|that|your|such a|a)\s+(?:(?:long|full|whole|entire|given|provided|supplied|complete|required|keyword|word|term|constraint|vocabulary)\s+){0,2}list\b".to_owned(),
            r"\b(?:this|your|that)\s+(?:(?:original|whole|full|entire|specific|particular)\s+)?(?:request|task|prompt|assignment|exercise|instructions?|brief|ask|challenge)\b".to_owned(),
            r"\bthe\s+(?:(?:original|whole|full|entire)\s+)?(?:request|task|instructions|assignment)\b".to_owned(),
            r"\b(?:one|a single|single|each|this|my|one single)\s+(?:reply|response|message|answer|output|turn|pass|go|sitting|document|report)\b".to_owned(),
            r"\bmy\s+(?:\w+\s+)?(?:output|length|token|response|context|generation|reply)\b".to_owned(),
            r"\b(?:output|token|context|response|reply|message|generation)[- ](?:limits?|caps?|budgets?|windows?|ceilings?|length|lengths|size)\b".to_owned(),
            r"\bchunks?\b".to_owned(),
            r"\bbatch(?:es)? of (?:(?:about|around|roughly|up to|some|maybe) )?(?:\d+|a few|a hundred|\w+ hundred)\b".to_owned(),
            r"\b(?:in|into|across) (?:\w+ )?(?:smaller )?batch(?:es)?\b".to_owned(),
            r"\b(?:multiple|several|separate|smaller|shorter|successive)\s+(?:replies|responses|messages|reports|parts|sections|lists|sets|turns|documents)\b".to_owned(),
            r"\b(?:in|into)\s+(?:(?:several|multiple|smaller|separate|shorter)\s+)?(?:parts|pieces|portions|passes|sittings)\b".to_owned(),
        ])
    })
}

/// After "… list of" or "… task of", the words that keep it the task ("the list of keywords").
const LIST_OF_TASK: &[&str] = &[
    "keywords",
    "keyword",
    "words",
    "terms",
    "constraints",
    "required",
    "all",
    "every",
    "these",
    "the",
    "your",
    "over",
    "more",
    "nearly",
    "some",
    "about",
    "roughly",
    "almost",
];

/// A word after "of" that keeps "list of" or "task of" the task: one of [`LIST_OF_TASK`] or a number.
fn keeps_task(next: &str) -> bool {
    LIST_OF_TASK.contains(&next) || next.starts_with(|c: char| c.is_ascii_digit())
}

/// Where `s` names the task (see [`task_patterns`]): the byte ranges of the phrases that do.
fn task_spans(s: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    for re in task_patterns() {
        for m in re.find_iter(s) {
            let rest = &s[m.end()..];
            let named = m.as_str();
            let keeps = if named.ends_with("task") && rest.trim_start().starts_with("force") {
                false
            } else if (named.ends_with("list")
                || named.ends_with("task")
                || named.ends_with("request"))
                && rest.starts_with(" of ")
            {
                let after = rest[" of ".len()..]
                    .split(|c: char| !c.is_alphanumeric() && c != '\'')
                    .next()
                    .unwrap_or_default();
                keeps_task(after)
            } else {
                true
            };
            if keeps {
                spans.push((m.start(), m.end()));
            }
        }
    }
    spans
}

/// Whether `s` names the task.
fn talks_about_task(s: &str) -> bool {
    !task_spans(s).is_empty()
}

/// A decline sentence: `s` names the task and gives a reason not to write it or an alternative, outside the words
/// that name it (so "batches of 200" or "one reply" alone is no reason).
fn decline_sentence(s: &str) -> bool {
    let spans = task_spans(s);
    if spans.is_empty() {
        return false;
    }
    let mut rest = s.to_owned();
    for (start, end) in spans {
        rest.replace_range(start..end, &" ".repeat(end - start));
    }
    decline_signal(&rest)
}

/// "I", "me", "my": the reply speaks as its writer (a report speaks as "we" or of the company; "you" alone is no
/// mark, since a letter to shareholders speaks to them).
fn first_person(s: &str) -> bool {
    static PERSON: OnceLock<Regex> = OnceLock::new();
    PERSON
        .get_or_init(|| Regex::new(r"\b(?:i|me|my|myself|mine)\b").expect("static pattern"))
        .is_match(s)
}

/// A reason not to write or an alternative to writing (see the module docs); a decline sentence has one.
fn decline_signal(s: &str) -> bool {
    static SIGNAL: OnceLock<Vec<Regex>> = OnceLock::new();
    SIGNAL
        .get_or_init(|| {
            compile(&[
                // First person, negated or reluctant.
                r"\bi(?:'m|'d|'ll|'ve)?\s+(?:\w+\s+){0,2}?(?:can't|cannot|can not|couldn't|could not|won't|will not|wouldn't|would not|shouldn't|should not|don't|do not|not|unable|rather not|prefer not)\b".to_owned(),
                // Offers and alternatives.
                r"\b(?:would you like|do you want|shall i|should i|let me know|if you(?:'d| would)? (?:like|prefer|want)|happy to|glad to|i can|i could|i'd suggest|i would suggest|i suggest|i recommend|i'd recommend|i'd propose|i propose|my suggestion|alternatively|instead|how about|perhaps we|we could)\b".to_owned(),
                // Stopping.
                r"\b(?:stop|stopping|pause|leave it|hold off)\s+(?:here|there|at this point|for now)\b".to_owned(),
            ])
        })
        .iter()
        .any(|re| re.is_match(s))
        || impracticality(s)
        // "keyword soup" once "keyword" is blanked as the task's name.
        || s.contains(" soup") || s.contains(" stuffing")
}

/// The task called impractical: its size, a limit, chunks or parts, a poor result, not feasible (see the module
/// docs); the mark of [`RefusalVerdict::DeclinedImpractical`].
fn impracticality(s: &str) -> bool {
    static IMPRACTICAL: OnceLock<Vec<Regex>> = OnceLock::new();
    IMPRACTICAL
        .get_or_init(|| {
            compile(&[
                r"\btoo (?:many|much|long|large|big|lengthy|extensive|numerous|vast)\b".to_owned(),
                r"\b(?:this|that|so|such) many\b".to_owned(),
                r"\b(?:\d{3,}|\d{1,3}(?:,\d{3})+|hundreds?|thousands?)\s+(?:of\s+(?:the\s+|these\s+|your\s+)?)?(?:(?:distinct|separate|different|required|listed|specific|given|individual|unique|mandatory|dictated)\s+){0,2}(?:key ?words?|words?|terms?|constraints?|entries|items)\b".to_owned(),
                r"\b(?:output|length|token|context|response|reply|message|generation|word|space|size)[- ]?(?:limits?|caps?|budgets?|windows?|ceilings?|capacity|maximum)\b".to_owned(),
                r"\bmax(?:imum)? (?:output|length|response|reply|tokens?)\b".to_owned(),
                r"\b(?:beyond|exceeds?|exceeding|exceeded|surpass\w*)\b".to_owned(),
                r"\b(?:more|longer|larger|bigger) than (?:what|i|one|a|any|my|the|fits?|can)\b".to_owned(),
                r"\b(?:far|much|way|many times) (?:more|longer|larger|bigger|too)\b".to_owned(),
                r"\b(?:impractical|infeasible|unfeasible|unworkable|unrealistic|unwieldy|unmanageable|impossible|realistically)\b".to_owned(),
                r"\b(?:not|isn't|wasn't|aren't|n't)\s+(?:\w+\s+)?(?:feasible|practical|practicable|realistic|doable|workable|viable|manageable|possible)\b".to_owned(),
                r"\b(?:chunks?|batch(?:es)?|instal?lments?)\b".to_owned(),
                r"\b(?:break|breaking|split|splitting|divide|dividing|spread|spreading)\b[^.!?\n]{0,40}\b(?:into|across|over|up)\b".to_owned(),
                r"\b(?:in|into|across|over)\s+(?:\w+\s+){0,2}(?:parts|pieces|portions|stages|rounds|passes|sections|segments|sittings|replies|responses|messages|reports|turns)\b".to_owned(),
                r"\b(?:shorter|smaller|reduced|trimmed|more manageable|fewer|subset)\b".to_owned(),
                r"\b(?:one|a single|any single|no single) (?:go|pass|sitting|reply|response|message|answer|turn|report|document)\b".to_owned(),
                r"\b(?:low[- ]quality|poor[- ]quality|word salad|(?:keyword|word|term)s? (?:soup|stuffing|dump)|filler|padding|unreadable|incoherent|gibberish|nonsensical|truncated|cut off|partway)\b".to_owned(),
                r"\b(?:wouldn't|would not|won't|will not|couldn't|could not|can't|cannot)\s+(?:\w+\s+)?(?:be |read as |make )?(?:a )?(?:coherent|readable|sensible|meaningful|useful|real|genuine|proper|natural|good|fit|hold)\b".to_owned(),
                r"\b(?:stop|stopping|pause|leave it)\s+(?:here|there|at this point|for now)\b".to_owned(),
            ])
        })
        .iter()
        .any(|re| re.is_match(s))
}

/// An objection to what the reply was asked to write: the mark of a content refusal.
fn content_objection(s: &str) -> bool {
    static CONTENT: OnceLock<Regex> = OnceLock::new();
    CONTENT
        .get_or_init(|| {
            Regex::new(
                r"\b(?:harm|harms|harmful|harming|dangerous|danger|dangers|unsafe|safety|weapons?|weaponi[sz]\w*|bioweapons?|toxins?|toxic|poisons?|pathogens?|anthrax|ricin|cyanide|sarin|nerve agents?|explosives?|precursors?|violen\w*|hate|hateful|slurs?|offensive|inappropriate|explicit|sexual\w*|illegal|unlawful|crimes?|criminal|misuse|abus\w*|polic(?:y|ies)|guidelines?|permitted|ethic\w*|mislead\w*|defamat\w*|privacy|personal (?:data|information|names)|real (?:people|individuals|persons?|company)|minors|extremis\w*|terror\w*|self-harm|drugs?|narcotics?|insider|hazard\w*|malicious|deceptive|disinformation|misinformation|copyright\w*|propaganda|discriminat\w*|graphic|disturbing|objectionable|surveillance)\b",
            )
            .expect("static pattern")
        })
        .is_match(s)
}

/// The text as the rules read it: lowercased, straight apostrophes, emphasis and heading marks removed.
fn normalise(text: &str) -> String {
    static HELP_DOING: OnceLock<Regex> = OnceLock::new();
    let text = text
        .to_lowercase()
        .replace(['\u{2019}', '\u{2018}'], "'")
        .replace(['*', '_', '#', '`'], "")
        // "I can't help but notice" is no refusal.
        .replace("help but ", "helpbut ");
    // Nor is "I can't help feeling proud" (a feeling, not a task).
    HELP_DOING
        .get_or_init(|| {
            Regex::new(
                r"\bhelp ((?:feel|think|notic|wonder|smil|admir|be|laugh|wish|hop|worry)ing)\b",
            )
            .expect("static pattern")
        })
        .replace_all(&text, "helpbut $1")
        .into_owned()
}

/// The `<report>` span of a normalised text (to the end without a closing tag), if it has an opening tag.
fn report_span(norm: &str) -> Option<&str> {
    let start = norm.find("<report>")? + "<report>".len();
    let rest = &norm[start..];
    Some(rest.find("</report>").map_or(rest, |end| &rest[..end]))
}

/// The text with its `<report>` tags read as line breaks.
fn untagged(norm: &str) -> String {
    norm.replace("</report>", "\n").replace("<report>", "\n")
}

/// Where each sentence ends (cut after `.`, `!`, `?` before white space or the end, or at a line break).
fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        let end = matches!(b, b'.' | b'!' | b'?')
            && bytes.get(i + 1).is_none_or(|n| n.is_ascii_whitespace())
            || b == b'\n';
        if end {
            let s = text[start..=i].trim();
            if !s.is_empty() {
                out.push(s);
            }
            start = i + 1;
        }
    }
    let s = text[start..].trim();
    if !s.is_empty() {
        out.push(s);
    }
    out
}

/// Refusal cues in `text` (normalised), at most one per pattern and place.
fn cues(text: &str) -> usize {
    cue_patterns()
        .iter()
        .map(|re| re.find_iter(text).count())
        .sum()
}

/// Words of report prose in `text`: sentences that do not name the task, speak as "I", or hold a cue.
fn report_prose(text: &str) -> usize {
    sentences(text)
        .into_iter()
        .filter(|s| !talks_about_task(s) && !first_person(s) && cues(s) == 0)
        .map(|s| s.split_whitespace().count())
        .sum()
}

/// The kind of a reply that declines (see the module docs): content, or impracticality without an objection.
fn decline_kind(text: &str) -> RefusalVerdict {
    if !content_objection(text) && impracticality(text) {
        RefusalVerdict::DeclinedImpractical
    } else {
        RefusalVerdict::Refused
    }
}

/// The kind of decline a reply is, for a reply known to decline the task (the rules said so, or the refusal judge
/// did): [`RefusalVerdict::DeclinedImpractical`] when it calls the task impractical without objecting to its
/// content, [`RefusalVerdict::Refused`] otherwise.
pub fn refusal_kind(text: &str) -> RefusalVerdict {
    decline_kind(&untagged(&normalise(text)))
}

/// The rules' verdict on a reply's visible text (see the module docs).
pub fn detect_refusal(text: &str) -> RefusalVerdict {
    let norm = normalise(text);
    let words = norm.split_whitespace().count();
    if words == 0 {
        return RefusalVerdict::NotRefused;
    }
    // A report after a caveat: in the tags the prompt asks for, or after a pivot.
    if report_span(&norm).is_some_and(|span| report_prose(span) >= PIVOT_REPORT_WORDS) {
        return RefusalVerdict::NotRefused;
    }
    let body = untagged(&norm);
    if pivot_pattern()
        .find_iter(&body)
        .any(|m| report_prose(&body[m.end()..]) >= PIVOT_REPORT_WORDS)
    {
        return RefusalVerdict::NotRefused;
    }
    let all = sentences(&body);
    let opening: usize = all.iter().take(OPENING_SENTENCES).map(|s| cues(s)).sum();
    if opening > 0 {
        // Short, or long and repeating its cues (a long explanation of declining).
        return if words < SHORT_REFUSAL_WORDS || cues(&body) >= REPEATED_CUES {
            decline_kind(&body)
        } else {
            RefusalVerdict::Uncertain
        };
    }
    // The task-talk rule: no report in it, and a sentence that names the task and gives a reason not to write it.
    let prose = report_prose(&body);
    let declining = all.iter().any(|s| {
        cues(s) > 0
            || decline_sentence(s)
            || words < FEW_WORDS && regret(s) && (bare_no(s) || deictic_impossible(s))
    });
    if prose < REPORT_PROSE_WORDS && declining {
        decline_kind(&body)
    } else {
        RefusalVerdict::NotRefused
    }
}

/// An apology or regret ("sorry", "unfortunately", "I'm afraid").
fn regret(s: &str) -> bool {
    static REGRET: OnceLock<Regex> = OnceLock::new();
    REGRET
        .get_or_init(|| {
            Regex::new(
                r"\b(?:sorry|regrettably|unfortunately|afraid|apologi[sz]e|apologies|alas)\b",
            )
            .expect("static pattern")
        })
        .is_match(s)
}

/// A bare no after the regret: "Sorry, no.", "I'm afraid not.", "Unfortunately, can't."
fn bare_no(s: &str) -> bool {
    static NO: OnceLock<Regex> = OnceLock::new();
    NO.get_or_init(|| {
        Regex::new(r"\b(?:sorry|unfortunately|regrettably|afraid|apologies|alas)\b[,;: ]*(?:but\s+)?(?:no|not|nope|can't|cannot|won't)\s*(?:[.!]|$)")
            .expect("static pattern")
    })
    .is_match(s)
}

/// "That's not possible", "this isn't doable here": the task (a pronoun, not a business noun) called impossible,
/// not followed by "to" (so "it is not possible to pay a dividend" is not one).
fn deictic_impossible(s: &str) -> bool {
    static DEICTIC: OnceLock<Regex> = OnceLock::new();
    DEICTIC
        .get_or_init(|| {
            Regex::new(r"\b(?:that|this|it)(?:'s| is| isn't| is not| would not be| wouldn't be| won't be)\s+(?:not\s+)?(?:really\s+|just\s+|simply\s+)?(?:possible|feasible|doable|realistic|workable|an option|happening|going to happen)\b")
                .expect("static pattern")
        })
        .find_iter(s)
        .any(|m| !s[m.end()..].starts_with(" to "))
}

#[cfg(test)]
#[path = "refusal_cases.rs"]
mod cases;
