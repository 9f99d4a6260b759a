//! The pre-judge's INCORRECT rules for answers that name something else for certain (`docs/rift-judging.md`,
//! "Answers that reject the expected answer" and "Another numbered one").
//!
//! - A retraction of the expected answer: the answer says in so many words that the expected answer is not the
//!   answer, and does not take it back. One of its parts (split at `,` `;` `:` `?` and dashes) is `not X` /
//!   `never X` / `it isn't X` / `it is not X` / `it's not X` / `that isn't X` / `that's not X`, or a part `X` is
//!   followed by a part that is only `no`, `no wait`, `nope`, `wait` or `correction` and then something else (`X —
//!   no, Y`, `X? No, Y`, `X — correction: Y`), where the pre-judge's matching accepts `X` for the expected answer;
//!   and no other part after it is accepted, mentions the expected answer or holds a word of [`TAKE_BACK`] (`not
//!   only X`, `no doubt`, `just kidding`, `yes`, `right` …). An expected answer with a negation word of its own
//!   (`Not Fade Away`, `No Country for Old Men`) is never judged by this rule. `X, isn't it?` is a tag question
//!   that agrees, so `X isn't it` is not read as a rejection; nor is a bare `not Y` that names another answer (`not
//!   Saturn` may point at the right one by elimination), nor `X — actually Y` (`actually` may go on to explain X).
//! - Another numbered one: the answer and the expected answer are the same words but for a last Roman numeral
//!   of another value (`Henry VII` for `Henry VIII`, `Johann Strauss I` for `Johann Strauss II`, `World War I` for
//!   `World War II`).

use super::{ExpectedForms, GivenForms, normalize, words};

/// Words that, after a rejection, take it back or qualify it: the rejection rule then does not apply.
pub const TAKE_BACK: &[&str] = &[
    "yes",
    "yeah",
    "yep",
    "right",
    "correct",
    "sure",
    "indeed",
    "definitely",
    "certainly",
    "exactly",
    "true",
    "confirmed",
    "doubt",
    "question",
    "kidding",
    "joke",
    "joking",
    "only",
    "just",
    "merely",
    "simply",
    "necessarily",
    "quite",
    "also",
    "too",
];

/// Negation words: an expected answer with one is never judged by the rejection rule.
const NEGATIONS: &[&str] = &[
    "not", "no", "never", "non", "nor", "neither", "none", "nothing", "nobody", "nowhere",
    "without", "isnt", "wasnt", "arent", "werent", "dont", "doesnt", "didnt", "cant", "cannot",
    "wont", "nay", "zero", "nil", "nought", "naught", "nada", "zilch", "nix", "but", "except",
    "other", "anything", "any",
];

/// Words that make the part after `not` a comment rather than another answer (`Paris, not really`, `not sure`).
const COMMENTS: &[&str] = &[
    "really",
    "sure",
    "certain",
    "exactly",
    "quite",
    "necessarily",
    "entirely",
    "completely",
    "so",
    "that",
    "it",
    "this",
    "correct",
    "right",
    "true",
    "likely",
    "confident",
    "positive",
    "convinced",
    "certainly",
    "definitely",
    "wrong",
    "incorrect",
    "me",
    "i",
    "you",
    "think",
    "know",
    "only",
    "just",
    "one",
    "any",
    "anything",
    "anyone",
    "anybody",
    "a",
    "an",
    "all",
    "every",
    "much",
    "many",
    "enough",
    "even",
    "ever",
    "yet",
    "at",
    "in",
    "too",
    "also",
    "either",
    "neither",
    "both",
    "single",
    "once",
];

/// Whole answers that decline to answer.
pub const REFUSALS: &[&str] = &[
    "i dont know",
    "i do not know",
    "dont know",
    "dunno",
    "idk",
    "no idea",
    "i have no idea",
    "not sure",
    "im not sure",
    "i am not sure",
    "no answer",
    "i cannot answer",
    "i cant answer",
    "i cannot say",
    "i cant say",
    "i dont know the answer",
    "i do not know the answer",
    "sorry i dont know",
];

/// Words of an expected answer that a refusal might match in meaning (`unknown`, `anonymous`, `I Don't Know`).
const REFUSAL_LIKE: &[&str] = &[
    "know",
    "known",
    "unknown",
    "idea",
    "sure",
    "unsure",
    "answer",
    "anonymous",
    "nobody",
    "none",
    "nothing",
    "mystery",
    "uncertain",
    "unclear",
    "pass",
    "dunno",
    "idk",
];

/// Parts that retract the part before them.
const RETRACTIONS: &[&[&str]] = &[
    &["no"],
    &["no", "wait"],
    &["nope"],
    &["wait"],
    &["correction"],
];

/// Openings of a part that rejects what follows them.
const REJECTIONS: &[&[&str]] = &[
    &["not"],
    &["never"],
    &["it", "isnt"],
    &["it", "is", "not"],
    &["its", "not"],
    &["it", "wasnt"],
    &["it", "was", "not"],
    &["that", "isnt"],
    &["that", "is", "not"],
    &["thats", "not"],
];

/// Whether an expected answer has a negation word (the rejection rule then never applies to it).
pub(crate) fn has_negation(expected: &str) -> bool {
    words(expected)
        .iter()
        .any(|w| NEGATIONS.contains(&w.to_lowercase().as_str()))
}

/// Whether `given` retracts the expected answer (module docs). `expected` has no negation word of its own.
pub(crate) fn retracts(given: &str, expected: &ExpectedForms) -> bool {
    let parts: Vec<&str> = split_parts(given);
    let lower = |p: &str| -> Vec<String> { words(p).iter().map(|w| w.to_lowercase()).collect() };
    let accepted = |p: &str| expected.accepts(&GivenForms::of(p));
    // A part that neither gives the expected answer nor takes a rejection back.
    let stands = |p: &&str| {
        !accepted(p)
            && !mentions(p, expected)
            && !lower(p).iter().any(|w| TAKE_BACK.contains(&w.as_str()))
    };
    for (i, part) in parts.iter().enumerate() {
        let (original, w) = (words(part), lower(part));
        // `not X`, `it isn't X`: X is the expected answer.
        for opening in REJECTIONS {
            if w.len() > opening.len() && w[..opening.len()] == **opening {
                let rest = &w[opening.len()..];
                let rest_text = original[opening.len()..].join(" ");
                let others_stand = parts.iter().enumerate().all(|(j, p)| j == i || stands(p));
                if !TAKE_BACK.contains(&rest[0].as_str()) && accepted(&rest_text) && others_stand {
                    return true;
                }
            }
        }
        // `X — no, Y`: X is the expected answer and something else follows the retraction.
        if i > 0
            && RETRACTIONS.iter().any(|r| w == **r)
            && accepted(parts[i - 1])
            && i + 1 < parts.len()
            && parts[i + 1..].iter().all(stands)
        {
            return true;
        }
    }
    false
}

/// Whether the answer affirms the expected answer against another one: `X, not Y` / `X — not Y` (two parts) or
/// `not Y but X` (one part), where X is accepted, Y is neither accepted nor mentions the expected answer, and Y is
/// another answer rather than a comment (no word of [`COMMENTS`]: `Paris, not really`).
pub(crate) fn contrasts(given: &str, expected: &ExpectedForms) -> bool {
    if expected.negated {
        return false;
    }
    let parts = split_parts(given);
    let accepted = |w: &[String]| expected.accepts(&GivenForms::of(&w.join(" ")));
    let other = |y: &[String]| {
        !y.is_empty()
            && !accepted(y)
            && !mentions(&y.join(" "), expected)
            && !y
                .iter()
                .any(|w| COMMENTS.contains(&w.to_lowercase().as_str()))
    };
    let lower = |p: &str| -> Vec<String> { words(p).iter().map(|w| w.to_lowercase()).collect() };
    match parts.as_slice() {
        [x, y] => {
            let (xw, yw) = (words(x), words(y));
            lower(y).first().is_some_and(|w| w == "not") && accepted(&xw) && other(&yw[1..])
        }
        [one] => {
            let (w, l) = (words(one), lower(one));
            let but = l.iter().position(|t| t == "but");
            match but {
                Some(b) if l.first().is_some_and(|t| t == "not") && b > 1 && b + 1 < w.len() => {
                    other(&w[1..b]) && accepted(&w[b + 1..])
                }
                _ => false,
            }
        }
        _ => false,
    }
}

/// Whether the answer declines to answer (one of [`REFUSALS`], as a whole) or only negates another answer (`not
/// Saturn`, `it isn't Mars`: one part, naming nothing else), for an expected answer that neither could match: no
/// negation word, nothing like [`REFUSAL_LIKE`], and (for a negation) no number it could mean (`not one` for
/// `zero`).
pub(crate) fn refuses(given: &GivenForms, expected: &ExpectedForms) -> bool {
    if expected.negated {
        return false;
    }
    let whole = normalize(&given.raw).to_lowercase();
    let expected_words: Vec<String> = words(&expected.raw)
        .iter()
        .map(|w| w.to_lowercase())
        .collect();
    if REFUSALS.contains(&whole.as_str()) {
        return !expected_words
            .iter()
            .any(|w| REFUSAL_LIKE.contains(&w.as_str()));
    }
    let parts = split_parts(&given.raw);
    let [one] = parts.as_slice() else {
        return false;
    };
    let (w, l) = (
        words(one),
        words(one)
            .iter()
            .map(|w| w.to_lowercase())
            .collect::<Vec<_>>(),
    );
    REJECTIONS.iter().any(|opening| {
        l.len() > opening.len()
            && l[..opening.len()] == **opening
            && !expected.numeric
            && !l[opening.len()..].iter().any(|t| {
                COMMENTS.contains(&t.as_str()) || matches!(t.as_str(), "but" | "or" | "and")
            })
            && !mentions(&w[opening.len()..].join(" "), expected)
            && !expected.accepts(&GivenForms::of(&w[opening.len()..].join(" ")))
    })
}

/// The parts of an answer: split at `,` `;` `:` `?` `!` and at dashes that separate (`—`, `–`, ` - `, ` -- `).
fn split_parts(given: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut rest = given;
    loop {
        let cut = [
            ",", ";", ":", "?", "!", " - ", " -- ", "\u{2014}", "\u{2013}",
        ]
        .iter()
        .filter_map(|d| rest.find(d).map(|i| (i, d.len())))
        .min();
        match cut {
            Some((i, n)) => {
                parts.push(&rest[..i]);
                rest = &rest[i + n..];
            }
            None => {
                parts.push(rest);
                break;
            }
        }
    }
    parts
        .into_iter()
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect()
}

/// Whether a part names the expected answer among other words (a form of it, word for word, inside the part).
fn mentions(part: &str, expected: &ExpectedForms) -> bool {
    let hay = format!(" {} ", normalize(part));
    expected
        .forms
        .iter()
        .any(|f| hay.contains(&format!(" {f} ")))
}

/// Whether the answer names another numbered one: some form of it and some form of the expected answer are the
/// same words but for a last Roman numeral of another value.
pub(crate) fn another_numbered_one(given: &GivenForms, expected: &ExpectedForms) -> bool {
    given.forms.iter().any(|g| {
        expected.forms.iter().any(|e| {
            let (g, e): (Vec<&str>, Vec<&str>) = (g.split(' ').collect(), e.split(' ').collect());
            g.len() == e.len()
                && g.len() >= 2
                && g[..g.len() - 1] == e[..e.len() - 1]
                && matches!(
                    (roman(g[g.len() - 1]), roman(e[e.len() - 1])),
                    (Some(a), Some(b)) if a != b
                )
        })
    })
}

/// The value of a Roman numeral in standard form (`IV`, `viii`, `XLII`; not `IIII` or `IC`), 1–3999.
fn roman(w: &str) -> Option<u32> {
    let w = w.to_ascii_uppercase();
    let mut rest = w.as_str();
    let mut total = 0;
    // Thousands, then hundreds, tens and units, each as one of the standard forms of its digit.
    for (unit, five, ten, scale) in [
        ('M', ' ', ' ', 1000),
        ('C', 'D', 'M', 100),
        ('X', 'L', 'C', 10),
        ('I', 'V', 'X', 1),
    ] {
        let forms: Vec<(String, u32)> = if scale == 1000 {
            (1..=3)
                .map(|n| (unit.to_string().repeat(n), n as u32))
                .collect()
        } else {
            let u = unit.to_string();
            vec![
                (format!("{u}{ten}"), 9),
                (format!("{five}{u}{u}{u}"), 8),
                (format!("{five}{u}{u}"), 7),
                (format!("{five}{u}"), 6),
                (five.to_string(), 5),
                (format!("{u}{five}"), 4),
                (u.repeat(3), 3),
                (u.repeat(2), 2),
                (u, 1),
            ]
        };
        let mut best: Option<(usize, u32)> = None;
        for (f, v) in &forms {
            if rest.starts_with(f.as_str()) && best.is_none_or(|(l, _)| f.len() > l) {
                best = Some((f.len(), *v));
            }
        }
        if let Some((len, v)) = best {
            total += v * scale;
            rest = &rest[len..];
        }
    }
    (rest.is_empty() && total > 0).then_some(total)
}

#[cfg(test)]
mod tests {
    use super::roman;

    #[test]
    fn roman_numerals_in_standard_form() {
        for (w, v) in [
            ("I", Some(1)),
            ("iv", Some(4)),
            ("VIII", Some(8)),
            ("XIV", Some(14)),
            ("XLII", Some(42)),
            ("MCMLXXXIV", Some(1984)),
            ("MMMCMXCIX", Some(3999)),
            ("C", Some(100)),
            ("D", Some(500)),
            ("IIII", None),
            ("IC", None),
            ("VV", None),
            ("", None),
            ("Paris", None),
        ] {
            assert_eq!(roman(w), v, "{w}");
        }
    }
}
