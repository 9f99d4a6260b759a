//! Fixture tests of loading and preparing (`test_data/`), plus the shared samples when present.

use std::path::{Path, PathBuf};

use schema::rift::SkipReason;

use super::*;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("test_data")
        .join(name)
}

#[test]
fn json_layout_is_cleaned_in_the_papers_order() {
    let prepared = prepare_files(&[fixture("clues.json")], None).unwrap();
    let kept: Vec<(&str, &str)> = prepared
        .questions
        .iter()
        .map(|q| (q.question.as_str(), q.answer.as_str()))
        .collect();
    assert_eq!(
        kept,
        vec![
            ("This river flows through Cairo", "the Nile"),
            ("Paper-thin and served for dessert", "crepes"),
            (
                "Our team's spring show \"Storm Warning\" retold this Shakespeare play",
                "The Tempest"
            ),
        ]
    );
    let reasons: Vec<(&str, SkipReason)> = prepared
        .skipped
        .iter()
        .map(|s| (s.source.as_str(), s.reason))
        .collect();
    assert_eq!(
        reasons,
        vec![
            ("clues.json#1", SkipReason::Media),
            ("clues.json#2", SkipReason::AnswerComma),
            ("clues.json#3", SkipReason::SuperSubscript),
            ("clues.json#5", SkipReason::NonAscii),
            ("clues.json#7", SkipReason::Media),
            ("clues.json#8", SkipReason::SuperSubscript),
            ("clues.json#9", SkipReason::Empty),
        ]
    );
    // Rows are consecutive; values and the normalization rule.
    let q = &prepared.questions;
    assert_eq!(q.iter().map(|q| q.row).collect::<Vec<_>>(), vec![0, 1, 2]);
    assert_eq!((q[0].value, q[0].value_normalized), (Some(200), Some(200)));
    assert_eq!((q[2].value, q[2].value_normalized), (None, None));
    assert_eq!(q[2].round, "Final Jeopardy!");
    assert_eq!(q[2].show_number, Some(3834));
    let s = &prepared.summary;
    assert_eq!((s.input_pairs, s.pairs, s.skipped_total), (10, 3, 7));
    assert_eq!(s.skipped["media"], 2);
    assert_eq!(s.skipped["rephrase_failed"], 0);
    assert_eq!((s.value_min, s.value_max), (Some(200), Some(600)));
}

#[test]
fn csv_layout_with_leading_space_headers_crlf_dollars_and_none() {
    let clues = load_clues(&fixture("clues.csv")).unwrap();
    assert_eq!(clues.len(), 4);
    assert_eq!(clues[0].value, Some(200));
    assert_eq!(clues[2].value, Some(2000));
    assert_eq!(clues[3].value, None);
    assert_eq!(clues[1].category, "\"I\" LADS");
    let prepared = prepare(&clues, None, &[]);
    let kept: Vec<&str> = prepared
        .questions
        .iter()
        .map(|q| q.answer.as_str())
        .collect();
    assert_eq!(kept, vec!["Mercury", "Creme brulee", "a grid"]);
    assert_eq!(
        prepared.questions[2].question,
        "Crosswords and sudoku are both filled in, square by square, on one of these"
    );
    // Aired 2006: kept; the 1999 Final has no value.
    assert_eq!(prepared.questions[1].value_normalized, Some(2000));
    assert_eq!(prepared.skipped[0].reason, SkipReason::Media);
}

#[test]
fn values_before_the_doubling_date_are_doubled() {
    assert_eq!(normalize_value(Some(500), "1996-12-06"), Some(1000));
    assert_eq!(normalize_value(Some(500), "2001-11-25"), Some(1000));
    assert_eq!(normalize_value(Some(400), "2001-11-26"), Some(400));
    assert_eq!(normalize_value(None, "1990-01-01"), None);
}

#[test]
fn malformed_records_name_file_record_and_field() {
    let err = load_clues(&fixture("bad-value.json"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("bad-value.json: record 0: field `value`: not a dollar amount"),
        "{err}"
    );
    let err = load_clues(&fixture("bad-date.csv"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("bad-date.csv: record 0: field `Air Date`: not a YYYY-MM-DD date"),
        "{err}"
    );
}

#[test]
fn rephrasing_round_trip() {
    let clues = load_clues(&fixture("clues.json")).unwrap();
    let reqs = rephrase_requests(
        &clues,
        "Category: {category}\nClue: {clue}\nResponse: {response}",
        &Default::default(),
    );
    // Media and empty clues are not sent.
    assert_eq!(reqs.len(), 7);
    assert!(
        reqs[0].messages[0]
            .content
            .contains("Clue: This river flows through Cairo")
    );
    let response = |id: &str, content: &str| schema::ResponseRecord {
        content: Some(content.to_owned()),
        finish_reason: Some("stop".to_owned()),
        ..schema::ResponseRecord::new(id, "m")
    };
    let rephrasings = parse_rephrasings(&[response(
        &reqs[0].id,
        "QUESTION: Which river flows through Cairo?\nANSWER: The Nile",
    )]);
    let prepared = prepare(&clues, Some(&rephrasings), &[]);
    assert_eq!(prepared.questions.len(), 1);
    assert_eq!(
        prepared.questions[0].question,
        "Which river flows through Cairo?"
    );
    assert!(prepared.questions[0].rephrased);
    assert_eq!(prepared.summary.skipped["rephrase_failed"], 6);
}

#[test]
fn outputs_are_written_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let prepared = prepare_files(&[fixture("clues.json"), fixture("clues.csv")], None).unwrap();
    let paths = write_outputs(&prepared, dir.path()).unwrap();
    let back = load_questions(&paths.questions).unwrap();
    assert_eq!(back, prepared.questions);
    assert_eq!(back.len(), 6);
    let md = std::fs::read_to_string(&paths.summary_md).unwrap();
    assert!(md.contains("| Total question–answer pairs | 6 |"), "{md}");
    assert!(md.contains("| non_ascii | 1 |"), "{md}");
}

/// The team-written dataset must pass the preparation untouched: nothing dropped, every answer comma-free.
#[test]
fn team_dataset_is_clean() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../datasets/jeopardy/team-clues.json");
    let clues = load_clues(&path).unwrap();
    assert!(clues.len() >= 280, "{}", clues.len());
    let prepared = prepare(&clues, None, &[]);
    assert_eq!(
        prepared.skipped,
        vec![],
        "team clues must all survive preparation"
    );
    for (q, c) in prepared.questions.iter().zip(&clues) {
        assert_eq!(q.question, c.question, "{}", c.source);
        assert_eq!(q.answer, c.answer, "{}", c.source);
    }
    let mut answers: Vec<String> = prepared
        .questions
        .iter()
        .map(|q| q.answer.to_lowercase())
        .collect();
    answers.sort();
    answers.dedup();
    assert!(
        answers.len() + 10 >= prepared.questions.len(),
        "too many duplicate answers"
    );
}

/// The shared Jeopardy! samples (a user's clone lacks them; `.ci/run` runs this with `--include-ignored`).
#[test]
#[ignore = "needs ../shared/data/jeopardy"]
fn shared_samples_prepare_cleanly() {
    let dir = schema::env::shared_data("jeopardy").unwrap();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for f in files {
        let clues = load_clues(&f).unwrap();
        let p = prepare(&clues, None, &[]);
        assert_eq!(p.questions.len() + p.skipped.len(), clues.len());
        assert!(
            p.questions
                .iter()
                .all(|q| q.question.is_ascii() && q.answer.is_ascii() && !q.answer.contains(','))
        );
        assert!(
            p.questions
                .iter()
                .all(|q| !q.question.contains('&') && !q.question.contains("<a "))
        );
        assert!(p.summary.skipped["media"] > 0 && p.summary.skipped["answer_comma"] > 0);
    }
}
