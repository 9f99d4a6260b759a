//! The judge check: control items whose verdict is known, made from a run's own data, and a judge's agreement
//! with them (sensitivity, specificity, Wilson 95 % intervals). Nothing here calls a model; the harness sends the
//! controls blind (same judge prompt, settings and content-addressed ids as real items) and reads the verdicts back.
//!
//! RIFT controls ([`rift_controls`]), from the questions of a run's prompts:
//! - known-correct: the question with its own expected answer in a form the pre-judge does not settle but that is
//!   certainly correct: `What is <answer>? <a neutral sentence>` (`jeopardy_form`) or `<answer> (final answer)`
//!   (`final_answer_note`);
//! - known-incorrect: the question with the expected answer of a question from a *different category* that shares
//!   no word, number or acronym with its own (`other_category_answer`), also in the two forms above
//!   (`other_category_jeopardy_form`, `other_category_final_answer_note`, so the form does not give the label
//!   away), and a year given for an answer that has no number in it (`year_for_non_number`).
//!
//! Every control is checked with [`crate::rift::pre_judge_for`]: one the pre-judge would settle never reaches a judge,
//! so it is dropped. The choice is seeded and deterministic: candidates are taken in the order of a SHA-256 of
//! (seed, kind, row), so the same run and seed give the same controls.
//!
//! The intervals are `schema::judge_check::wilson95` (which `analysis::stats` re-exports); [`passes`] is the gate,
//! `[judge-check]`'s minimum sensitivity and specificity.

use std::collections::{BTreeMap, BTreeSet};

use schema::judge_check::{Agreement, ControlKind, ControlVerdict, RiftControl};

use crate::rift::{judge_id, normalize, pre_judge_for};

/// A question a RIFT control can be made from.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceQuestion {
    pub row: u64,
    pub category: String,
    pub question: String,
    pub expected: String,
}

/// How many controls of each kind, and the seed of their choice.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ControlPlan {
    /// Controls of each kind (fewer when fewer can be made).
    pub per_kind: usize,
    pub seed: u64,
}

/// Neutral sentences after a Jeopardy!-style answer: they change nothing about its correctness.
const TAILS: [&str; 4] = [
    "That is my answer to this clue.",
    "I am confident in this one.",
    "This fits the clue.",
    "That is my final response.",
];

/// Words that can stand for a number: an answer holding one is never given a year as a certainly wrong answer.
const NUMBER_WORDS: [&str; 24] = [
    "none",
    "zero",
    "nil",
    "nought",
    "naught",
    "nothing",
    "no",
    "dozen",
    "dozens",
    "pair",
    "couple",
    "score",
    "half",
    "quarter",
    "hundred",
    "hundreds",
    "thousand",
    "thousands",
    "million",
    "billion",
    "single",
    "both",
    "once",
    "twice",
];

/// A deterministic 64-bit key of a seed and some text.
fn key(seed: u64, parts: &[&str]) -> u64 {
    let mut text = seed.to_string();
    for p in parts {
        text.push('\u{1f}');
        text.push_str(p);
    }
    let hex = schema::sha256_hex(text.as_bytes());
    u64::from_str_radix(&hex[..16], 16).unwrap_or(0)
}

/// The word set of an answer for the "certainly different" test: normalized words with everything but letters and
/// digits removed, lower-cased (`1,000` and `1000` are one word, so are `U.S.` and `us`).
fn word_set(answer: &str) -> BTreeSet<String> {
    normalize(answer)
        .split(' ')
        .map(|w| {
            w.chars()
                .filter(|c| c.is_alphanumeric())
                .flat_map(char::to_lowercase)
                .collect::<String>()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

/// Whether `short` could be an acronym of `long` (its letters, in order, among the initials of `long`'s words).
fn acronym_of(short: &str, long: &str) -> bool {
    let letters: Vec<char> = short
        .chars()
        .filter(|c| c.is_alphabetic())
        .flat_map(char::to_lowercase)
        .collect();
    if letters.len() < 2 || short.split_whitespace().count() != 1 {
        return false;
    }
    let initials: Vec<char> = long
        .split(|c: char| !c.is_alphanumeric())
        .filter_map(|w| w.chars().next())
        .flat_map(char::to_lowercase)
        .collect();
    let mut it = initials.iter();
    letters.iter().all(|l| it.any(|i| i == l))
}

/// Two expected answers that certainly name different things: no shared word or number (after the pre-judge's
/// normal form), neither an acronym of the other, both with a letter or digit.
pub fn certainly_different(a: &str, b: &str) -> bool {
    let (wa, wb) = (word_set(a), word_set(b));
    !wa.is_empty()
        && !wb.is_empty()
        && wa.is_disjoint(&wb)
        && !acronym_of(a, b)
        && !acronym_of(b, a)
}

/// An answer with no digit and no word that can stand for a number: a year given for it is certainly wrong.
fn has_no_number(answer: &str) -> bool {
    let n = normalize(answer);
    !n.chars().any(|c| c.is_ascii_digit())
        && !word_set(answer)
            .iter()
            .any(|w| NUMBER_WORDS.contains(&w.as_str()))
}

fn control(
    kind: ControlKind,
    form: &str,
    q: &SourceQuestion,
    given: String,
    other_row: Option<u64>,
) -> RiftControl {
    RiftControl {
        id: judge_id(&q.question, &q.expected, &given),
        kind,
        form: form.to_owned(),
        question: q.question.clone(),
        expected: q.expected.clone(),
        given,
        row: q.row,
        other_row,
    }
}

/// The answer in one of the two forms both kinds share (chosen by `k`): `What is <answer>? <tail>` or
/// `<answer> (final answer)`.
fn dressed(answer: &str, k: u64) -> (bool, String) {
    if k.is_multiple_of(2) {
        let tail = TAILS[((k / 2) % TAILS.len() as u64) as usize];
        (true, format!("What is {answer}? {tail}"))
    } else {
        (false, format!("{answer} (final answer)"))
    }
}

/// The RIFT control items of a run: up to `plan.per_kind` known-correct and as many known-incorrect ones (fewer when
/// fewer can be made), each left unsettled by the pre-judge, in a seeded, deterministic order. `questions` are the
/// run's questions (duplicates by row are ignored). Known-correct controls come first, then known-incorrect ones.
pub fn rift_controls(questions: &[SourceQuestion], plan: ControlPlan) -> Vec<RiftControl> {
    let mut by_row: BTreeMap<u64, &SourceQuestion> = BTreeMap::new();
    for q in questions {
        by_row.entry(q.row).or_insert(q);
    }
    let qs: Vec<&SourceQuestion> = by_row.into_values().collect();
    let order = |kind: &str| {
        let mut o: Vec<(u64, usize)> = qs
            .iter()
            .enumerate()
            .map(|(i, q)| (key(plan.seed, &[kind, &q.row.to_string()]), i))
            .collect();
        o.sort_unstable();
        o
    };
    let unsettled = |c: &RiftControl| pre_judge_for(&c.question, &c.given, &c.expected).is_none();
    let mut out = Vec::new();
    // Known-correct: the question's own answer, dressed.
    let mut correct = 0;
    for (k, i) in order("known-correct") {
        if correct == plan.per_kind {
            break;
        }
        let q = qs[i];
        if q.expected.trim().is_empty() {
            continue;
        }
        let (jeopardy, given) = dressed(q.expected.trim(), k);
        let form = if jeopardy {
            "jeopardy_form"
        } else {
            "final_answer_note"
        };
        let c = control(ControlKind::KnownCorrect, form, q, given, None);
        if unsettled(&c) {
            out.push(c);
            correct += 1;
        }
    }
    // Known-incorrect: another category's answer (plain or dressed), or a year for an answer without a number.
    let mut incorrect = 0;
    for (k, i) in order("known-incorrect") {
        if incorrect == plan.per_kind {
            break;
        }
        let q = qs[i];
        if q.expected.trim().is_empty() {
            continue;
        }
        let year = (k % 4 == 3 && has_no_number(&q.expected))
            .then(|| {
                let year = 1800 + (k / 4) % 220;
                control(
                    ControlKind::KnownIncorrect,
                    "year_for_non_number",
                    q,
                    year.to_string(),
                    None,
                )
            })
            .filter(|c| unsettled(c));
        let made = year.or_else(|| {
            // The other question: stepping from a seeded start, the first of another category whose answer is
            // certainly different (at most 64 looks).
            let start = (k / 4) as usize % qs.len();
            (0..qs.len().min(64))
                .map(|step| qs[(start + step * 7919) % qs.len()])
                .find(|o| {
                    o.row != q.row
                        && !o.category.eq_ignore_ascii_case(&q.category)
                        && certainly_different(&q.expected, &o.expected)
                })
                .map(|o| {
                    let other = o.expected.trim();
                    let (form, given) = match k % 3 {
                        0 => ("other_category_answer", other.to_owned()),
                        _ => match dressed(other, k / 4) {
                            (true, g) => ("other_category_jeopardy_form", g),
                            (false, g) => ("other_category_final_answer_note", g),
                        },
                    };
                    control(ControlKind::KnownIncorrect, form, q, given, Some(o.row))
                })
        });
        if let Some(c) = made.filter(|c| unsettled(c)) {
            out.push(c);
            incorrect += 1;
        }
    }
    out
}

/// `agree` of `total` (of which `unjudged` had no usable verdict) with its rate and Wilson interval.
pub fn agreement(agree: u64, total: u64, unjudged: u64) -> Agreement {
    let ci = schema::judge_check::wilson95(agree, total);
    Agreement {
        agree,
        total,
        unjudged,
        rate: (total > 0).then(|| agree as f64 / total as f64),
        ci_low: ci.map(|c| c.0),
        ci_high: ci.map(|c| c.1),
    }
}

/// Sensitivity (known-correct accepted) and specificity (known-incorrect rejected) of a judge's verdicts on its
/// controls; a control without a usable verdict counts against the judge.
pub fn sensitivity_specificity(verdicts: &[ControlVerdict]) -> (Agreement, Agreement) {
    let of = |kind: ControlKind, want: bool| {
        let mine: Vec<&ControlVerdict> = verdicts.iter().filter(|v| v.kind == kind).collect();
        let agree = mine.iter().filter(|v| v.accepted == Some(want)).count() as u64;
        let unjudged = mine.iter().filter(|v| v.accepted.is_none()).count() as u64;
        agreement(agree, mine.len() as u64, unjudged)
    };
    (
        of(ControlKind::KnownCorrect, true),
        of(ControlKind::KnownIncorrect, false),
    )
}

/// Whether both figures reach their thresholds; a kind without control items does not fail the gate.
pub fn passes(
    sensitivity: &Agreement,
    specificity: &Agreement,
    min_sensitivity: f64,
    min_specificity: f64,
) -> bool {
    sensitivity.rate.is_none_or(|r| r >= min_sensitivity)
        && specificity.rate.is_none_or(|r| r >= min_specificity)
}

#[cfg(test)]
mod tests;
