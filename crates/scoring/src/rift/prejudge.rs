//! The RIFT deterministic pre-judge: settles an (answer, expected answer) pair only when the outcome is certain.
//!
//! A false CORRECT is the worst error a judge can make, so every rule here may only make two strings equal when
//! they certainly say the same thing; anything else is left unsettled for the LLM judge (or stays unjudged).
//!
//! Normal form ([`normalize`]), applied to both sides:
//!
//! 1. Unicode NFKD without combining marks (`é` → `e`); the dashes `‐ ‑ ‒ – — ― −` read as `-`; a run of
//!    superscript digits or signs is marked as an exponent with `^` (`10²` → `10 ^ 2`, never `102`).
//! 2. Words are runs of letters and digits. A word is lower-cased unless it has an upper-case letter after its first
//!    character (`CO`, `NaCl`, `H2O`, `iPhone` keep their case, so `Co` ≠ `CO`; `Paris` = `paris`).
//! 3. Inside numbers nothing is lost: a `.` followed by a digit (`3.14`, `.5`) and a `,` between two digits
//!    (`1,000`) stay in the word, so `15` ≠ `1.5` and `314` ≠ `3.14`.
//! 4. Joiners: a `.` after a letter (`D.C.` → `dc`, `Dr.` → `dr`) and an apostrophe between letters or digits
//!    (`O'Leary` → `oleary`) are removed without a break.
//! 5. `&` is the word `and`. A `-` before a digit is its own token (a minus sign or a range: `-40` ≠ `40`); a `-`
//!    after a lone `a`, `an` or `the` and before a letter joins (`A-ha` → `aha`, so the article rule cannot drop
//!    it).
//! 6. Separators (become a break): white space, quotes (`" ' ‘ ’ “ ” „ « » ‹ ›` and `` ` ``), markdown emphasis
//!    (`*`, `_`), `( ) [ ] { }`, `, ; : ! ?`, other `.` and `-`. Any other symbol (`+ # % $ / ~ = °` …) is kept
//!    as its own token (`C++` ≠ `C`, `~~Paris~~` ≠ `Paris`).
//! 7. Number words become digits only as a well-formed number phrase: `twenty-one` → `21`, `one hundred and five`
//!    → `105`, `two thousand and three` → `2003`. Adjacent numbers are never summed: `nine nine` → `9 9`,
//!    `Nineteen Eighty-Four` → `19 84`. The ordinals `first` … `twelfth` become `1st` … `12th` (`second` only
//!    before another word: alone it may be the unit of time).
//! 8. One leading article (`a`, `an`, `the`) is dropped when something other than a lone number follows it
//!    (`The Nile` = `Nile`, but `The One` ≠ `1`).
//!
//! Forms of the given answer (any may match): the whole answer; the answer without a leading `What is` / `Who is`
//! (`what|who|where|when|which` + `is|are|was|were`, with something after it); the answer without leading
//! restatements and hedges ([`HEDGE_OPENINGS`]: `It's`, `The answer is`, `I think`, `maybe` …) and trailing hedges
//! ([`HEDGE_ENDINGS`]: `, I think`, `? Not sure`, ` probably` …); and, when the answer goes on after a dash (`—`,
//! `–`, or ` - ` / ` -- ` with spaces around) with an explanation, the part before the dash (also without `What
//! is`). The tail counts as an explanation when its first word is one of [`EXPLANATION_STARTS`] and no word of it is
//! one of [`EXPLANATION_BLOCKERS`] (a correction or hedge: `no`, `actually`, `or`, `but` …); after a comma, only
//! when its first word is one of [`EXPLANATION_AFTER_COMMA`] (`Isaac Newton, who …`, never `Rome, Italy`). An
//! answer that affirms the expected answer against another (`X, not Y`, `not Y but X`) is correct too
//! (`rejects`).
//!
//! Forms of the expected answer (any may match): the whole answer; with a single parenthetical that is only a quoted
//! note (`Herman Melville ("Typee")`), the answer without it; with a single `(or X)` at its end
//! (`Burma (or Myanmar)`), each alternative (`Burma`, `Myanmar`). Any other parenthetical stays part of the answer
//! (`Henry (VIII)` accepts `Henry VIII`, never `Henry`).
//!
//! Verdicts: a given form equal to an expected form, or the same plain number written alike (`1,440` = `1440`), is
//! CORRECT; otherwise these are INCORRECT: an answer without any letter or digit when the expected answer has one;
//! a plain number that cannot be the expected one (`numbers`: an incompatible plain number, or an expected answer
//! that cannot stand for a number); an answer that rejects the expected answer in so many words, or names another
//! numbered one (`rejects`). With the question at hand ([`pre_judge_for`]), an answer that restates the question
//! in its own words around the expected answer is CORRECT too (`restates`). Everything else is unsettled. The wrong-question flag uses the same matching
//! ([`ExpectedForms::accepts`]).

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

mod numbers;
mod rejects;
mod restates;

use numbers::PlainNumber;
pub use numbers::{NUMBER_WORD_STEMS, NUMBER_WORDS, stands_for_a_number};
pub use rejects::{REFUSALS, TAKE_BACK};
pub use restates::FUNCTION_WORDS;

/// First words of a tail after a dash that make it an explanation of the answer before the dash.
pub const EXPLANATION_STARTS: &[&str] = &[
    "because", "since", "as", "which", "who", "whose", "where", "when", "known", "named", "called",
    "located", "born", "it", "its", "this", "he", "she", "they", "his", "her", "their", "ie", "eg",
];

/// First words of a tail after a comma that make it an explanation of the answer before the comma.
pub const EXPLANATION_AFTER_COMMA: &[&str] =
    &["who", "which", "whose", "where", "when", "because", "since"];

/// Words that keep a tail after a dash from being a mere explanation: corrections, alternatives and hedges.
pub const EXPLANATION_BLOCKERS: &[&str] = &[
    "no",
    "not",
    "nor",
    "never",
    "or",
    "but",
    "however",
    "although",
    "though",
    "actually",
    "wait",
    "correction",
    "sorry",
    "instead",
    "rather",
    "maybe",
    "perhaps",
    "possibly",
    "probably",
    "unless",
    "except",
    "wrong",
    "incorrect",
    "mistake",
    "unsure",
    "guess",
    "isnt",
    "wasnt",
    "arent",
    "werent",
    "dont",
    "doesnt",
    "didnt",
    "cant",
    "cannot",
    "wont",
];

/// The pre-judge's normal form of an answer (rules 1–8 of the module docs), its tokens joined by single spaces.
pub fn normalize(s: &str) -> String {
    finish(words(s))
}

/// The pre-judge on one pair: Some(true) when a form of `given` equals a form of `expected`, Some(false) when
/// `given` has no letter or digit and `expected` has one, None when it cannot tell.
pub fn pre_judge(given: &str, expected: &str) -> Option<bool> {
    GivenForms::of(given).verdict(&ExpectedForms::of(expected))
}

/// The pre-judge on one answer to `question`: [`pre_judge`]'s rules, then the one rule that reads the question
/// (`restates`: `The capital of Peru is Lima` for "What is the capital of Peru?" is CORRECT). What a run, the
/// labelled pairs and the judge check's controls use.
pub fn pre_judge_for(question: &str, given: &str, expected: &str) -> Option<bool> {
    GivenForms::of(given).verdict_for(question, &ExpectedForms::of(expected))
}

/// The normal forms of a given answer that the pre-judge tries.
pub(crate) struct GivenForms {
    forms: Vec<String>,
    has_alnum: bool,
    /// The answer as a plain number ([`numbers`]), if it is one.
    number: Option<PlainNumber>,
    /// The answer as given (for [`rejects`]).
    raw: String,
}

impl GivenForms {
    pub(crate) fn of(given: &str) -> Self {
        let mut forms = Vec::new();
        let mut add = |raw: &str| {
            let w = words(raw);
            let mut push = |w: Vec<String>| {
                if let Some(rest) = without_question_form(&w) {
                    forms.push(finish(rest.to_vec()));
                }
                forms.push(finish(w));
            };
            if let Some(rest) = without_hedges(&w) {
                push(rest);
            }
            push(w);
        };
        add(given);
        for comma in [false, true] {
            if let Some(head) = head_before_explanation(given, comma) {
                add(head);
            }
        }
        forms.retain(|f| !f.is_empty());
        Self {
            forms,
            has_alnum: given.chars().any(char::is_alphanumeric),
            number: PlainNumber::parse(given, true),
            raw: given.to_owned(),
        }
    }

    /// The pre-judge's verdict against one expected answer (see [`pre_judge`]).
    /// [`Self::verdict`], then the restatement of `question` around the expected answer (CORRECT only).
    pub(crate) fn verdict_for(&self, question: &str, expected: &ExpectedForms) -> Option<bool> {
        self.verdict(expected)
            .or_else(|| restates::accepts(question, &self.raw, expected).then_some(true))
    }

    pub(crate) fn verdict(&self, expected: &ExpectedForms) -> Option<bool> {
        if expected.accepts(self) || rejects::contrasts(&self.raw, expected) {
            Some(true)
        } else if !self.has_alnum && expected.has_alnum {
            Some(false)
        } else if let Some(given) = &self.number {
            // A plain number: wrong for a number it cannot be, and for an answer that cannot stand for a number.
            let wrong = match &expected.number {
                Some(e) => given.incompatible_with(e),
                None if given.may_be_one() => !expected.numeric_if_one,
                None => !expected.numeric,
            };
            wrong.then_some(false)
        } else if numbers::different_alternatives(&self.raw)
            || (!expected.negated && rejects::retracts(&self.raw, expected))
            || rejects::another_numbered_one(self, expected)
            || rejects::refuses(self, expected)
        {
            Some(false)
        } else {
            None
        }
    }
}

/// The normal forms the pre-judge accepts for one expected answer.
pub(crate) struct ExpectedForms {
    /// The whole expected answer, normalized.
    pub(crate) whole: String,
    /// Every accepted form, `whole` first.
    forms: Vec<String>,
    has_alnum: bool,
    /// The expected answer as a plain number, if it is one.
    number: Option<PlainNumber>,
    /// Whether it may stand for a number ([`stands_for_a_number`]), and whether it may stand for one.
    numeric: bool,
    numeric_if_one: bool,
    /// Whether it has a negation word of its own (`Not Fade Away`): then no answer is taken as rejecting it.
    negated: bool,
    /// The expected answer as written (for [`rejects`]).
    raw: String,
}

impl ExpectedForms {
    pub(crate) fn of(expected: &str) -> Self {
        let whole = normalize(expected);
        let mut forms = vec![whole.clone()];
        forms.extend(parenthetical_forms(expected));
        forms.retain(|f| !f.is_empty());
        Self {
            whole,
            forms,
            has_alnum: expected.chars().any(char::is_alphanumeric),
            number: PlainNumber::parse(expected, false),
            numeric: stands_for_a_number(expected, false),
            numeric_if_one: stands_for_a_number(expected, true),
            negated: rejects::has_negation(expected),
            raw: expected.to_owned(),
        }
    }

    /// Whether some form of the given answer equals some accepted form, or both are plain numbers written alike
    /// (`1,440` = `1440`).
    pub(crate) fn accepts(&self, given: &GivenForms) -> bool {
        given.forms.iter().any(|g| self.forms.contains(g))
            || matches!((&given.number, &self.number), (Some(g), Some(e)) if g.same_as(e))
    }
}

/// Forms of an expected answer with one parenthetical: without a quoted note, or each side of a final `(or X)`.
fn parenthetical_forms(expected: &str) -> Vec<String> {
    let Some(open) = expected.find('(') else {
        return Vec::new();
    };
    let Some(close) = expected[open..].find(')').map(|i| i + open) else {
        return Vec::new();
    };
    let (before, inner, after) = (
        &expected[..open],
        expected[open + 1..close].trim(),
        &expected[close + 1..],
    );
    if after.contains(['(', ')']) || inner.contains('(') {
        return Vec::new();
    }
    if is_quoted(inner) {
        return vec![normalize(&format!("{before} {after}"))];
    }
    let alternative = inner
        .get(..3)
        .filter(|h| h.eq_ignore_ascii_case("or "))
        .map(|_| &inner[3..]);
    match alternative {
        Some(alt) if after.trim().is_empty() && !before.trim().is_empty() => {
            vec![normalize(before), normalize(alt)]
        }
        _ => Vec::new(),
    }
}

/// Whether a parenthetical's text is one quotation (`"Typee"`, `“Typee”`, `'Typee'`).
fn is_quoted(inner: &str) -> bool {
    const PAIRS: [(char, char); 4] = [
        ('"', '"'),
        ('\u{201c}', '\u{201d}'),
        ('\'', '\''),
        ('\u{2018}', '\u{2019}'),
    ];
    PAIRS.iter().any(|&(open, close)| {
        inner.chars().count() > 2
            && inner.starts_with(open)
            && inner.ends_with(close)
            && !inner[open.len_utf8()..inner.len() - close.len_utf8()].contains([open, close])
    })
}

/// The part of a given answer before a dash (or, with `comma`, a comma) that is followed by an explanation (module
/// docs), if any.
fn head_before_explanation(given: &str, comma: bool) -> Option<&str> {
    let separators: &[&str] = if comma {
        &[", "]
    } else {
        &[" - ", " -- ", "\u{2014}", "\u{2013}"]
    };
    let at = separators
        .iter()
        .filter_map(|d| given.find(d).map(|i| (i, d.len())))
        .min()?;
    let (head, tail) = (&given[..at.0], &given[at.0 + at.1..]);
    let tail = words(tail);
    let first = tail.first()?;
    // After a comma only a relative or causal clause explains (`Isaac Newton, who …`); `Rome, Italy` does not.
    let starts = if comma {
        EXPLANATION_AFTER_COMMA
    } else {
        EXPLANATION_STARTS
    };
    let explains = starts.contains(&first.as_str())
        && !tail
            .iter()
            .any(|w| EXPLANATION_BLOCKERS.contains(&w.as_str()));
    (explains && !head.trim().is_empty()).then_some(head)
}

/// Openings that only restate or hedge the answer after them (`It's X`, `The answer is X`, `I think X`, `maybe X`).
pub const HEDGE_OPENINGS: &[&[&str]] = &[
    &["maybe"],
    &["probably"],
    &["perhaps"],
    &["possibly"],
    &["i", "think"],
    &["i", "believe"],
    &["i", "guess"],
    &["id", "guess"],
    &["im", "guessing"],
    &["i", "suppose"],
    &["im", "not", "sure"],
    &["i", "am", "not", "sure"],
    &["not", "sure"],
    &["its"],
    &["it", "is"],
    &["thats"],
    &["that", "is"],
    &["that", "would", "be"],
    &["the", "answer", "is"],
    &["my", "answer", "is"],
    &["id", "say"],
    &["i", "would", "say"],
];

/// Endings that only hedge the answer before them (`X, I think`, `X? Not sure`, `X probably`).
pub const HEDGE_ENDINGS: &[&[&str]] = &[
    &["i", "think"],
    &["i", "believe"],
    &["i", "guess"],
    &["id", "guess"],
    &["i", "suppose"],
    &["probably"],
    &["maybe"],
    &["perhaps"],
    &["possibly"],
    &["not", "sure"],
    &["im", "not", "sure"],
    &["i", "am", "not", "sure"],
];

/// The words without leading restatements and hedges and trailing hedges, when there were any and something is
/// left (`I think it's Wellington` → `Wellington`, `ostrich, I think` → `ostrich`).
fn without_hedges(w: &[String]) -> Option<Vec<String>> {
    let is = |part: &[String], phrase: &[&str]| {
        part.len() == phrase.len() && part.iter().zip(phrase).all(|(a, b)| a == b)
    };
    let (mut from, mut to) = (0, w.len());
    loop {
        let before = (from, to);
        if let Some(p) = HEDGE_OPENINGS
            .iter()
            .find(|p| to - from > p.len() && is(&w[from..from + p.len()], p))
        {
            from += p.len();
        }
        if let Some(p) = HEDGE_ENDINGS
            .iter()
            .find(|p| to - from > p.len() && is(&w[to - p.len()..to], p))
        {
            to -= p.len();
        }
        if (from, to) == before {
            break;
        }
    }
    (from > 0 || to < w.len()).then(|| w[from..to].to_vec())
}

/// The words after a leading `What is` / `Who is` (and the like), when something follows it.
fn without_question_form(w: &[String]) -> Option<&[String]> {
    let question = matches!(
        w.first().map(String::as_str),
        Some("what" | "who" | "where" | "when" | "which")
    ) && matches!(
        w.get(1).map(String::as_str),
        Some("is" | "are" | "was" | "were")
    );
    (question && w.len() > 2).then(|| &w[2..])
}

/// Number words turned into digits, then a leading article dropped (rules 7–8).
fn finish(w: Vec<String>) -> String {
    let mut w = numbers_to_digits(&w);
    let lone_number = w.len() == 2 && w[1].starts_with(|c: char| c.is_ascii_digit());
    if w.len() > 1 && matches!(w[0].as_str(), "a" | "an" | "the") && !lone_number {
        w.remove(0);
    }
    w.join(" ")
}

/// Rules 1–6: the tokens of an answer, before number words and articles.
fn words(s: &str) -> Vec<String> {
    // A run of superscript digits or signs is an exponent: `^` marks it so that `10²` stays apart from `102`.
    let mut marked = String::with_capacity(s.len());
    let mut in_superscript = false;
    for c in s.chars() {
        let sup = matches!(
            c,
            '\u{00b9}' | '\u{00b2}' | '\u{00b3}' | '\u{2070}' | '\u{2074}'..='\u{207b}'
        );
        if sup && !in_superscript {
            marked.push('^');
        }
        in_superscript = sup;
        marked.push(c);
    }
    let chars: Vec<char> = marked
        .nfkd()
        .filter(|c| !is_combining_mark(*c))
        .map(|c| match c {
            '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
            c => c,
        })
        .collect();
    let mut out = Vec::new();
    // `word` holds the finished segments of the current token, `seg` the letters and digits not yet case-folded.
    let (mut word, mut seg) = (String::new(), String::new());
    let fold = |word: &mut String, seg: &mut String| {
        let keeps_case = seg.chars().skip(1).any(char::is_uppercase);
        if keeps_case {
            word.push_str(seg);
        } else {
            word.extend(seg.chars().flat_map(char::to_lowercase));
        }
        seg.clear();
    };
    let flush = |out: &mut Vec<String>, word: &mut String, seg: &mut String| {
        fold(word, seg);
        if !word.is_empty() {
            out.push(std::mem::take(word));
        }
    };
    for (i, &c) in chars.iter().enumerate() {
        let prev = i.checked_sub(1).map(|j| chars[j]);
        let next = chars.get(i + 1).copied();
        let digit = |c: Option<char>| c.is_some_and(|c| c.is_ascii_digit());
        let alnum = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
        match c {
            c if c.is_alphanumeric() => seg.push(c),
            '.' if digit(next) => seg.push('.'),
            ',' if digit(prev) && digit(next) => seg.push(','),
            '.' if prev.is_some_and(char::is_alphabetic) => fold(&mut word, &mut seg),
            '\'' | '\u{2019}' | '\u{02bc}' if alnum(prev) && alnum(next) => {
                fold(&mut word, &mut seg)
            }
            '&' => {
                flush(&mut out, &mut word, &mut seg);
                out.push("and".to_owned());
            }
            '-' if next.is_some_and(char::is_alphabetic) && is_article(&word, &seg) => {
                fold(&mut word, &mut seg)
            }
            '-' if digit(next) => {
                flush(&mut out, &mut word, &mut seg);
                out.push("-".to_owned());
            }
            c if c.is_whitespace() || is_separator(c) => flush(&mut out, &mut word, &mut seg),
            c => {
                flush(&mut out, &mut word, &mut seg);
                out.push(c.to_string());
            }
        }
    }
    flush(&mut out, &mut word, &mut seg);
    out
}

/// Whether the token being built is an article (`A-ha` must not lose its `A` as an article would).
fn is_article(word: &str, seg: &str) -> bool {
    word.is_empty()
        && ["a", "an", "the"]
            .iter()
            .any(|a| seg.eq_ignore_ascii_case(a))
}

/// Characters that only separate words (rule 6).
fn is_separator(c: char) -> bool {
    matches!(
        c,
        '"' | '\''
            | '\u{2018}'
            | '\u{2019}'
            | '\u{201c}'
            | '\u{201d}'
            | '\u{201e}'
            | '\u{02bc}'
            | '\u{00ab}'
            | '\u{00bb}'
            | '\u{2039}'
            | '\u{203a}'
            | '`'
            | '*'
            | '_'
            | '('
            | ')'
            | '['
            | ']'
            | '{'
            | '}'
            | ','
            | ';'
            | ':'
            | '!'
            | '?'
            | '.'
            | '-'
    )
}

/// The number words below twenty, by value.
const UNITS: [&str; 20] = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
];

/// The value of a number word below 100 that can stand alone or end a phrase: `zero` … `nineteen` as units, and
/// the tens.
fn small(w: &str) -> Option<Small> {
    const TENS: [&str; 8] = [
        "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
    ];
    if let Some(i) = UNITS.iter().position(|u| *u == w) {
        return Some(Small::Unit(i as u64));
    }
    TENS.iter()
        .position(|t| *t == w)
        .map(|i| Small::Tens(20 + 10 * i as u64))
}

#[derive(Clone, Copy)]
enum Small {
    /// 0–19.
    Unit(u64),
    /// 20, 30, … 90.
    Tens(u64),
}

fn ordinal(w: &str) -> Option<&'static str> {
    const ORD: [(&str, &str); 12] = [
        ("first", "1st"),
        ("second", "2nd"),
        ("third", "3rd"),
        ("fourth", "4th"),
        ("fifth", "5th"),
        ("sixth", "6th"),
        ("seventh", "7th"),
        ("eighth", "8th"),
        ("ninth", "9th"),
        ("tenth", "10th"),
        ("eleventh", "11th"),
        ("twelfth", "12th"),
    ];
    ORD.iter().find(|(a, _)| *a == w).map(|(_, b)| *b)
}

/// A number below 100 at `w[i..]`: a unit (`zero` only alone, which the caller checks), a teen, or a tens word
/// optionally followed by a unit 1–9. Returns the value and the number of words read.
fn below_100(w: &[String], i: usize) -> Option<(u64, usize)> {
    match small(w.get(i)?)? {
        Small::Unit(u) => Some((u, 1)),
        Small::Tens(t) => match w.get(i + 1).and_then(|n| small(n)) {
            Some(Small::Unit(u @ 1..=9)) => Some((t + u, 2)),
            _ => Some((t, 1)),
        },
    }
}

/// A number below 1000 at `w[i..]`: `<1–9> hundred [and] [below 100]` or a number below 100.
fn below_1000(w: &[String], i: usize) -> Option<(u64, usize)> {
    if let (Some(Small::Unit(h @ 1..=9)), Some("hundred")) = (
        w.get(i).and_then(|x| small(x)),
        w.get(i + 1).map(String::as_str),
    ) {
        let and = usize::from(w.get(i + 2).is_some_and(|x| x == "and"));
        if let Some((v, n)) = below_100(w, i + 2 + and).filter(|&(v, _)| v > 0) {
            return Some((h * 100 + v, 2 + and + n));
        }
        return Some((h * 100, 2));
    }
    below_100(w, i)
}

/// A well-formed number phrase at `w[i..]`: `[<1–999> million] [<1–999> thousand] [[and] <1–999>]`, with at least
/// one part. `zero` only counts as a number on its own. Returns the value and the number of words read.
fn number_phrase(w: &[String], i: usize) -> Option<(u64, usize)> {
    let (mut total, mut at) = (0u64, i);
    for (scale, word) in [(1_000_000, "million"), (1_000, "thousand")] {
        if let Some((v, n)) = below_1000(w, at).filter(|&(v, _)| v > 0)
            && w.get(at + n).is_some_and(|x| x == word)
        {
            total += v * scale;
            at += n + 1;
        }
    }
    let and = usize::from(at > i && w.get(at).is_some_and(|x| x == "and"));
    match below_1000(w, at + and) {
        Some((v, n)) if v > 0 || at == i => {
            total += v;
            at += and + n;
        }
        _ => {}
    }
    (at > i).then_some((total, at - i))
}

/// Each well-formed number phrase becomes one digit string; other words pass, ordinals become `1st` … `12th`.
fn numbers_to_digits(w: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < w.len() {
        match number_phrase(w, i) {
            Some((v, n)) => {
                out.push(v.to_string());
                i += n;
            }
            None => {
                // "second" is also a unit of time: an ordinal only before another word ("Second Amendment").
                let ord = ordinal(&w[i]).filter(|_| w[i] != "second" || i + 1 < w.len());
                out.push(ord.map_or_else(|| w[i].clone(), str::to_owned));
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
