//! Answers that restate the question around the expected answer: `The capital of Peru is Lima` for "What is the
//! capital of Peru?", or `Lima is the capital of Peru`. Only this rule of the pre-judge reads the question.
//!
//! The answer is split at its first copula (`is`, `was`, `are`, `were`, each optionally followed by `called` or
//! `known as`; with spaces around). One side must be accepted by the expected answer's forms as an answer of its own
//! (with the usual explanation tails, `Cyrillic, which …`); the other side is the *restatement*, and it must be made
//! of the question's own words:
//!
//! - at least two content words (words other than [`FUNCTION_WORDS`]), so that it restates something (`Peru is
//!   Lima` is not a restatement of "What is the capital of Peru?");
//! - every content word is a word of the question, compared without case and after a crude suffix strip (`-s`,
//!   `-es`, `-ed`, `-ing`, so `measuring` = `measures`); a word the question lacks (`former`, `second`, `neighbour`,
//!   `single`) keeps the answer open, since it may change what is claimed;
//! - none of its words is an [`EXPLANATION_BLOCKERS`] word (`not`, `or`, `never`, `isnt` …).
//!
//! Then the answer says, in the question's own words, that the expected answer is what the question asks for:
//! CORRECT. The rule never says INCORRECT (`The capital of Peru is Cusco` may still name an alias of the expected
//! answer), and it is not used by the wrong-question flag (which compares answers with other questions' expected
//! answers, without their questions).

use super::{EXPLANATION_BLOCKERS, ExpectedForms, GivenForms, words};

/// Words that carry no claim of their own: articles, prepositions, pronouns and auxiliaries. A restatement needs at
/// least two words outside this list, each of them a word of the question.
pub const FUNCTION_WORDS: &[&str] = &[
    "a", "an", "the", "of", "in", "on", "at", "by", "for", "to", "from", "with", "and", "as",
    "into", "that", "which", "who", "whom", "whose", "what", "where", "when", "this", "these",
    "those", "it", "its", "is", "are", "was", "were", "be", "been", "has", "have", "had", "does",
    "do", "did", "our", "your", "their", "his", "her", "called", "known",
];

/// The copulas an answer is split at, longest first, each with a space before and after.
const COPULAS: &[&str] = &[
    " is known as ",
    " was known as ",
    " are known as ",
    " were known as ",
    " is called ",
    " was called ",
    " are called ",
    " were called ",
    " is ",
    " was ",
    " are ",
    " were ",
];

/// Whether `given` restates `question` around an answer that `expected` accepts (see the module docs).
pub(crate) fn accepts(question: &str, given: &str, expected: &ExpectedForms) -> bool {
    let Some((before, after)) = split_at_copula(given) else {
        return false;
    };
    let question: Vec<String> = content_words(question).collect();
    if question.is_empty() {
        return false;
    }
    let answers = |side: &str| expected.accepts(&GivenForms::of(side));
    (answers(after) && restates(before, &question))
        || (answers(before) && restates(after, &question))
}

/// The answer before and after its first copula (the longest one starting there), both non-empty.
fn split_at_copula(given: &str) -> Option<(&str, &str)> {
    let lower = given.to_lowercase();
    // `to_lowercase` may change byte lengths outside ASCII; the split needs offsets valid in `given`.
    if lower.len() != given.len() {
        return None;
    }
    let (at, len) = COPULAS
        .iter()
        .filter_map(|c| lower.find(c).map(|i| (i, c.len())))
        .min_by_key(|&(i, len)| (i, std::cmp::Reverse(len)))?;
    let (before, after) = (given[..at].trim(), given[at + len..].trim());
    (!before.is_empty() && !after.is_empty()).then_some((before, after))
}

/// Whether `side` is a restatement made of the question's content words (module docs).
fn restates(side: &str, question: &[String]) -> bool {
    let all = words(side);
    if all
        .iter()
        .any(|w| EXPLANATION_BLOCKERS.contains(&w.to_lowercase().as_str()))
    {
        return false;
    }
    let content: Vec<String> = content_words(side).collect();
    content.len() >= 2 && content.iter().all(|w| question.contains(w))
}

/// The lower-cased, suffix-stripped words of `s` outside [`FUNCTION_WORDS`].
fn content_words(s: &str) -> impl Iterator<Item = String> {
    words(s).into_iter().filter_map(|w| {
        let w = w.to_lowercase();
        (!FUNCTION_WORDS.contains(&w.as_str())).then(|| stem(&w))
    })
}

/// A crude suffix strip, the same on both sides: `measures`, `measuring`, `measured` → `measur`.
fn stem(w: &str) -> String {
    for suffix in ["ing", "es", "ed", "s"] {
        if let Some(s) = w.strip_suffix(suffix)
            && s.chars().count() >= 3
        {
            return s.to_owned();
        }
    }
    w.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settles(question: &str, given: &str, expected: &str) -> bool {
        accepts(question, given, &ExpectedForms::of(expected))
    }

    #[test]
    fn a_restatement_around_the_expected_answer_is_correct() {
        let yes = [
            (
                "What is the capital of Peru?",
                "The capital of Peru is Lima",
                "Lima",
            ),
            (
                "What is the capital of Peru?",
                "Lima is the capital of Peru.",
                "Lima",
            ),
            (
                "What is the most abundant element in Earth's crust by mass?",
                "The most abundant element in Earth's crust by mass is oxygen",
                "Oxygen",
            ),
            (
                "What is the hottest planet in our solar system?",
                "The hottest planet in our solar system is Venus",
                "Venus",
            ),
            (
                "Which alphabet is used to write Russian?",
                "The Russian alphabet is Cyrillic, which was introduced in the 9th century",
                "Cyrillic",
            ),
            (
                "Which instrument measures atmospheric pressure?",
                "The instrument measuring atmospheric pressure is the Barometer",
                "Barometer",
            ),
            (
                "Which colored part of the eye controls the size of the pupil?",
                "The iris is the colored part of the eye that controls the size of the pupil",
                "Iris",
            ),
            // A hedged single answer is that answer, as everywhere in the pre-judge (`maybe Mars?` = `Mars`).
            (
                "What is the capital of Peru?",
                "The capital of Peru is maybe Lima",
                "Lima",
            ),
            (
                "What is the deepest known point in Earth's oceans called?",
                "The deepest known point in Earth's oceans is called the Challenger Deep",
                "Challenger Deep",
            ),
        ];
        for (q, g, e) in yes {
            assert!(settles(q, g, e), "{g:?} for {e:?}");
        }
    }

    #[test]
    fn anything_that_may_claim_something_else_stays_open() {
        let no = [
            // Not the expected answer (an alias is possible): never INCORRECT, and not CORRECT.
            (
                "What is the capital of Peru?",
                "The capital of Peru is Cusco",
                "Lima",
            ),
            // A word the question lacks changes the claim.
            (
                "What is the capital of Peru?",
                "The former capital of Peru is Lima",
                "Lima",
            ),
            (
                "What is the capital of Peru?",
                "Lima is the second city of Peru",
                "Lima",
            ),
            // Negations, alternatives, hedges.
            (
                "What is the capital of Peru?",
                "The capital of Peru is not Lima",
                "Lima",
            ),
            (
                "What is the capital of Peru?",
                "The capital of Peru isn't Lima",
                "Lima",
            ),
            (
                "What is the capital of Peru?",
                "Lima is not the capital of Peru",
                "Lima",
            ),
            (
                "What is the capital of Peru?",
                "The capital of Peru is Lima or Cusco",
                "Lima",
            ),
            (
                "What is the capital of Peru?",
                "The capital or the largest city of Peru is Lima",
                "Lima",
            ),
            // Too little restated.
            ("What is the capital of Peru?", "Peru is Lima", "Lima"),
            ("What is the capital of Peru?", "It is Lima", "Lima"),
            // More after the answer than an explanation.
            (
                "What is the capital of Peru?",
                "The capital of Peru is Lima. It was Cusco before",
                "Lima",
            ),
            (
                "What is the capital of Peru?",
                "The capital of Peru is Lima, Ohio",
                "Lima",
            ),
            // The answer is another question's subject.
            (
                "Which country's capital is Lima?",
                "The capital is Lima",
                "Peru",
            ),
            // No copula.
            (
                "What is the capital of Peru?",
                "Peru's capital: Lima",
                "Lima",
            ),
            // The expected answer with its other forms only: the restatement rule adds nothing to a plain mismatch.
            (
                "Who wrote Pride and Prejudice?",
                "The writer of Pride and Prejudice is Austen",
                "Jane Austen",
            ),
        ];
        for (q, g, e) in no {
            assert!(!settles(q, g, e), "{g:?} for {e:?}");
        }
    }

    #[test]
    fn the_first_copula_splits_the_answer() {
        assert_eq!(
            split_at_copula("The capital of Peru is called Lima"),
            Some(("The capital of Peru", "Lima"))
        );
        assert_eq!(
            split_at_copula("Lima is the capital; Cusco is not"),
            Some(("Lima", "the capital; Cusco is not"))
        );
        assert_eq!(split_at_copula("is Lima"), None);
        assert_eq!(split_at_copula("Lima"), None);
    }
}
