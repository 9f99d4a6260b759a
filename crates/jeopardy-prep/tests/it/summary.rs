//! Snapshot tests of the Table 1 summary (`Summary::to_markdown`, written as `summary.md`) and of `summary.json`,
//! prepared from the fixtures in `test_data/`; the fixtures' absolute folder is replaced by `[test_data]`.
//!
//! The expected text sits inline in each test. After an intended change of the rendering, update it with
//! `UPDATE_EXPECT=1 cargo test -p jeopardy-prep --test it` and review the diff before committing.

use std::path::{Path, PathBuf};

use expect_test::{Expect, expect};
use jeopardy_prep::{Prepared, Rephrasing, Rephrasings};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("test_data")
        .join(name)
}

fn prepare(files: &[&str], rephrasings: Option<&Rephrasings>) -> Prepared {
    let paths: Vec<PathBuf> = files.iter().map(|f| fixture(f)).collect();
    jeopardy_prep::prepare_files(&paths, rephrasings).unwrap()
}

/// Prepares the fixture files in order and compares the Markdown summary.
fn check(files: &[&str], expect: Expect) {
    expect.assert_eq(&prepare(files, None).summary.to_markdown());
}

#[test]
fn json_fixture() {
    check(
        &["clues.json"],
        expect![[r#"
        | Statistic | Value |
        |---|---|
        | Input clues | 10 |
        | Total question–answer pairs | 3 |
        | Unique categories | 3 |
        | Clue values (as aired) | $200–$600 |
        | Clue values (normalized) | $200–$600 |
        | Pairs without a value | 1 |
        | Rephrased pairs | 0 |
        | Round: Final Jeopardy! | 1 |
        | Round: Jeopardy! | 2 |

        | Drop reason | Pairs |
        |---|---|
        | empty | 1 |
        | media | 2 |
        | rephrase_failed | 0 |
        | answer_comma | 1 |
        | super_subscript | 2 |
        | non_ascii | 1 |
        | total dropped | 7 |
    "#]],
    );
}

#[test]
fn csv_fixture() {
    check(
        &["clues.csv"],
        expect![[r#"
        | Statistic | Value |
        |---|---|
        | Input clues | 4 |
        | Total question–answer pairs | 3 |
        | Unique categories | 3 |
        | Clue values (as aired) | $200–$2000 |
        | Clue values (normalized) | $200–$2000 |
        | Pairs without a value | 1 |
        | Rephrased pairs | 0 |
        | Round: Double Jeopardy! | 1 |
        | Round: Final Jeopardy! | 1 |
        | Round: Jeopardy! | 1 |

        | Drop reason | Pairs |
        |---|---|
        | empty | 0 |
        | media | 1 |
        | rephrase_failed | 0 |
        | answer_comma | 0 |
        | super_subscript | 0 |
        | non_ascii | 0 |
        | total dropped | 1 |
    "#]],
    );
}

#[test]
fn both_fixtures_pooled() {
    check(
        &["clues.json", "clues.csv"],
        expect![[r#"
        | Statistic | Value |
        |---|---|
        | Input clues | 14 |
        | Total question–answer pairs | 6 |
        | Unique categories | 6 |
        | Clue values (as aired) | $200–$2000 |
        | Clue values (normalized) | $200–$2000 |
        | Pairs without a value | 2 |
        | Rephrased pairs | 0 |
        | Round: Double Jeopardy! | 1 |
        | Round: Final Jeopardy! | 2 |
        | Round: Jeopardy! | 3 |

        | Drop reason | Pairs |
        |---|---|
        | empty | 1 |
        | media | 3 |
        | rephrase_failed | 0 |
        | answer_comma | 1 |
        | super_subscript | 2 |
        | non_ascii | 1 |
        | total dropped | 8 |
    "#]],
    );
}

#[test]
fn nothing_prepared_gives_dashes_and_zeros() {
    let prepared = jeopardy_prep::prepare(&[], None, &[]);
    expect![[r#"
        | Statistic | Value |
        |---|---|
        | Input clues | 0 |
        | Total question–answer pairs | 0 |
        | Unique categories | 0 |
        | Clue values (as aired) | – |
        | Clue values (normalized) | – |
        | Pairs without a value | 0 |
        | Rephrased pairs | 0 |

        | Drop reason | Pairs |
        |---|---|
        | empty | 0 |
        | media | 0 |
        | rephrase_failed | 0 |
        | answer_comma | 0 |
        | super_subscript | 0 |
        | non_ascii | 0 |
        | total dropped | 0 |
    "#]]
    .assert_eq(&prepared.summary.to_markdown());
}

#[test]
fn rephrased_pairs_and_failed_rephrasings_are_counted() {
    let clues = jeopardy_prep::load_clues(&fixture("clues.json")).unwrap();
    let requests = jeopardy_prep::rephrase_requests(
        &clues,
        "{category}\n{clue}\n{response}",
        &Default::default(),
    );
    // The first two clues sent get a rephrasing (the second keeps its comma and is dropped); the rest fail.
    let rephrasings: Rephrasings = [
        ("Which river flows through Cairo?", "The Nile"),
        (
            "Which two nicknames does Alaska have?",
            "The Last Frontier, The Great Land",
        ),
    ]
    .iter()
    .zip(&requests)
    .map(|((q, a), r)| {
        (
            r.id.clone(),
            Rephrasing {
                question: (*q).to_owned(),
                answer: (*a).to_owned(),
            },
        )
    })
    .collect();
    let prepared = prepare(&["clues.json"], Some(&rephrasings));
    expect![[r#"
        | Statistic | Value |
        |---|---|
        | Input clues | 10 |
        | Total question–answer pairs | 1 |
        | Unique categories | 1 |
        | Clue values (as aired) | $200–$200 |
        | Clue values (normalized) | $200–$200 |
        | Pairs without a value | 0 |
        | Rephrased pairs | 1 |
        | Round: Jeopardy! | 1 |

        | Drop reason | Pairs |
        |---|---|
        | empty | 1 |
        | media | 2 |
        | rephrase_failed | 5 |
        | answer_comma | 1 |
        | super_subscript | 0 |
        | non_ascii | 0 |
        | total dropped | 9 |
    "#]]
    .assert_eq(&prepared.summary.to_markdown());
}

#[test]
fn summary_json_with_fixture_folder_normalised() {
    let prepared = prepare(&["clues.json", "clues.csv"], None);
    let dir = tempfile::tempdir().unwrap();
    let paths = jeopardy_prep::write_outputs(&prepared, dir.path()).unwrap();
    let json = std::fs::read_to_string(&paths.summary_json).unwrap();
    let folder = fixture("").display().to_string();
    expect![[r#"
        {
          "files": [
            "[test_data]/clues.json",
            "[test_data]/clues.csv"
          ],
          "input_pairs": 14,
          "pairs": 6,
          "unique_categories": 6,
          "value_min": 200,
          "value_max": 2000,
          "value_normalized_min": 200,
          "value_normalized_max": 2000,
          "without_value": 2,
          "rephrased": 0,
          "per_round": {
            "Double Jeopardy!": 1,
            "Final Jeopardy!": 2,
            "Jeopardy!": 3
          },
          "skipped": {
            "answer_comma": 1,
            "empty": 1,
            "media": 3,
            "non_ascii": 1,
            "rephrase_failed": 0,
            "super_subscript": 2
          },
          "skipped_total": 8
        }"#]]
    .assert_eq(&json.replace(&folder, "[test_data]/"));
}
