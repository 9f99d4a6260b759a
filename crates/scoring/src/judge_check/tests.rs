//! Tests of the control items and the agreement figures.

use super::*;

fn q(row: u64, category: &str, question: &str, expected: &str) -> SourceQuestion {
    SourceQuestion {
        row,
        category: category.to_owned(),
        question: question.to_owned(),
        expected: expected.to_owned(),
    }
}

fn questions() -> Vec<SourceQuestion> {
    vec![
        q(0, "CAPITALS", "The capital of Australia?", "Canberra"),
        q(1, "CAPITALS", "The capital of Canada?", "Ottawa"),
        q(2, "SCIENCE", "Element with symbol O?", "Oxygen"),
        q(
            3,
            "SCIENCE",
            "Who wrote the laws of motion?",
            "Isaac Newton",
        ),
        q(4, "MYTHS", "Norse god of thunder?", "Thor"),
        q(5, "MATH", "How many sides has a hexagon?", "6"),
        q(6, "PHYSICS", "Unit named for Newton?", "Newton"),
        q(7, "NATIONS", "Abbreviation for the United States?", "USA"),
        q(
            8,
            "GEO",
            "Country of the Stars and Stripes?",
            "United States of America",
        ),
        q(
            9,
            "BUILDINGS",
            "Headquarters of the US defense department?",
            "Pentagon",
        ),
    ]
}

#[test]
fn every_control_is_unsettled_by_the_pre_judge_and_of_the_promised_form() {
    let plan = ControlPlan {
        per_kind: 50,
        seed: 0,
    };
    let controls = rift_controls(&questions(), plan);
    let correct = controls
        .iter()
        .filter(|c| c.kind == ControlKind::KnownCorrect)
        .count();
    assert_eq!(
        correct, 10,
        "one known-correct control per question: {controls:#?}"
    );
    assert!(controls.len() > correct, "{controls:#?}");
    for c in &controls {
        assert_eq!(
            pre_judge_for(&c.question, &c.given, &c.expected),
            None,
            "{c:?}"
        );
        assert_eq!(c.id, judge_id(&c.question, &c.expected, &c.given));
        match c.kind {
            ControlKind::KnownCorrect => {
                assert!(c.given.contains(c.expected.as_str()), "{c:?}");
                assert!(c.other_row.is_none());
            }
            ControlKind::KnownIncorrect => {
                if let Some(other) = c.other_row {
                    let o = &questions()[other as usize];
                    let me = &questions()[c.row as usize];
                    assert_ne!(o.category, me.category, "{c:?}");
                    assert!(certainly_different(&me.expected, &o.expected), "{c:?}");
                } else {
                    assert_eq!(c.form, "year_for_non_number");
                    assert!(c.given.parse::<u32>().is_ok(), "{c:?}");
                }
            }
        }
    }
}

#[test]
fn the_choice_is_seeded_deterministic_and_capped() {
    let plan = |per_kind, seed| ControlPlan { per_kind, seed };
    let a = rift_controls(&questions(), plan(3, 7));
    assert_eq!(a, rift_controls(&questions(), plan(3, 7)));
    assert_eq!(
        a.iter()
            .filter(|c| c.kind == ControlKind::KnownCorrect)
            .count(),
        3
    );
    assert_eq!(
        a.iter()
            .filter(|c| c.kind == ControlKind::KnownIncorrect)
            .count(),
        3
    );
    assert_ne!(a, rift_controls(&questions(), plan(3, 8)));
    assert!(rift_controls(&[], plan(50, 0)).is_empty());
}

#[test]
fn answers_that_might_mean_the_same_are_never_paired_as_certainly_wrong() {
    // A shared word, the same number written two ways, an acronym.
    assert!(!certainly_different("Isaac Newton", "Newton"));
    assert!(!certainly_different("1,000", "1000"));
    assert!(!certainly_different("one thousand", "1000"));
    assert!(!certainly_different("USA", "United States of America"));
    assert!(!certainly_different("The Beatles", "Beatles"));
    assert!(!certainly_different("", "Thor"));
    assert!(certainly_different("Thor", "Golden Gate Bridge"));
    assert!(certainly_different("Barcelona", "Colosseum"));
    assert!(!has_no_number("a dozen"));
    assert!(!has_no_number("Catch-22"));
    assert!(has_no_number("Pentagon"));
}

#[test]
fn an_unusable_reply_counts_against_the_judge_and_the_gate_uses_both_figures() {
    let v = |kind, accepted| ControlVerdict {
        id: String::new(),
        kind,
        form: String::new(),
        accepted,
        score: None,
    };
    let verdicts = [
        v(ControlKind::KnownCorrect, Some(true)),
        v(ControlKind::KnownCorrect, None),
        v(ControlKind::KnownIncorrect, Some(false)),
        v(ControlKind::KnownIncorrect, Some(true)),
    ];
    let (sens, spec) = sensitivity_specificity(&verdicts);
    assert_eq!((sens.agree, sens.total, sens.unjudged), (1, 2, 1));
    assert_eq!((spec.agree, spec.total, spec.unjudged), (1, 2, 0));
    assert!(!passes(&sens, &spec, 0.9, 0.9));
    assert!(passes(&sens, &spec, 0.5, 0.5));
    // Always CORRECT: perfect sensitivity, no specificity.
    let always = [
        v(ControlKind::KnownCorrect, Some(true)),
        v(ControlKind::KnownIncorrect, Some(true)),
    ];
    let (sens, spec) = sensitivity_specificity(&always);
    assert_eq!((sens.rate, spec.rate), (Some(1.0), Some(0.0)));
    assert!(!passes(&sens, &spec, 0.9, 0.9));
    let none = agreement(0, 0, 0);
    assert!(
        passes(&none, &none, 0.9, 0.9),
        "no controls of a kind: nothing to fail"
    );
}
