//! RIFT by clue value and the pooled wrong-question share: exact band counts and accuracies of a small hand-made
//! run, the value-mix check on equal and on different mixes, the pooled share as sums over linear and jumping, and
//! the same tables from the Parquet answer table as from the records.

use analysis::polars::prelude::*;
use analysis::rift::values::{BandAccuracy, VALUE_BANDS};
use analysis::rift::{self, RiftConfig};
use analysis::synthetic;
use schema::rift::{AnswerScore, JudgeSource, Structure, Verdict};

const C: Verdict = Verdict::Correct;
const I: Verdict = Verdict::Incorrect;
const U: Verdict = Verdict::Unjudged;

/// One prompt's answers: (value, verdict, flagged as another question's answer).
fn prompt(
    model: &str,
    structure: Structure,
    id: &str,
    answers: &[(Option<u32>, Verdict, bool)],
) -> Vec<AnswerScore> {
    answers
        .iter()
        .enumerate()
        .map(|(d, &(value, verdict, flagged))| AnswerScore {
            prompt_id: id.to_owned(),
            sample_index: 0,
            model: model.to_owned(),
            structure,
            depth: d as u32,
            question_number: d as u32 + 1,
            row: Some(d as u64),
            value_normalized: value,
            expected: format!("answer {d}"),
            given: Some("given".to_owned()),
            verdict,
            judged_by: JudgeSource::PreJudge,
            pre_judge: None,
            judge_id: None,
            wrong_question_of: flagged.then_some(1),
        })
        .collect()
}

/// Model "m": the same four values in its linear and jumping prompt (200, 400, 600, none), two baseline prompts
/// ($2000 correct, $1600 incorrect). Model "n": linear all $200, jumping $2000, $2000 and two without a value.
fn fixture() -> Vec<AnswerScore> {
    let mut a = Vec::new();
    a.extend(prompt(
        "m",
        Structure::Linear,
        "l1",
        &[
            (Some(200), C, false),
            (Some(400), I, true),
            (Some(600), C, false),
            (None, I, false),
        ],
    ));
    a.extend(prompt(
        "m",
        Structure::Jumping,
        "j1",
        &[
            (Some(200), I, true),
            (Some(400), I, false),
            (Some(600), C, false),
            (None, U, false),
        ],
    ));
    a.extend(prompt(
        "m",
        Structure::Baseline,
        "b1",
        &[(Some(2000), C, false)],
    ));
    a.extend(prompt(
        "m",
        Structure::Baseline,
        "b2",
        &[(Some(1600), I, false)],
    ));
    a.extend(prompt(
        "n",
        Structure::Linear,
        "l1",
        &[(Some(200), C, false); 4],
    ));
    a.extend(prompt(
        "n",
        Structure::Jumping,
        "j1",
        &[
            (Some(2000), I, true),
            (Some(2000), C, false),
            (None, I, false),
            (None, I, false),
        ],
    ));
    a
}

fn summary_of(answers: &[AnswerScore]) -> rift::RiftSummary {
    rift::aggregate(
        rift::answers_frame(answers).unwrap().lazy(),
        None,
        &RiftConfig::default(),
    )
    .unwrap()
}

fn band<'a>(s: &'a rift::RiftSummary, m: &str, st: &str, b: usize) -> &'a BandAccuracy {
    s.values
        .accuracy
        .iter()
        .find(|r| r.model == m && r.structure == st && r.band == VALUE_BANDS[b])
        .unwrap_or_else(|| panic!("no row {m} {st} {}", VALUE_BANDS[b]))
}

#[test]
fn band_counts_and_accuracies_of_a_known_run() {
    let s = summary_of(&fixture());
    let counts = |r: &BandAccuracy| (r.answers, r.correct, r.incorrect, r.unjudged);
    // Model m, linear: $200 and $400 share the first band (one right of two), $600 the second, none its own.
    let r = band(&s, "m", "linear", 0);
    assert_eq!(counts(r), (2, 1, 1, 0));
    assert_eq!(r.accuracy, Some(50.0));
    let (lo, hi) = analysis::stats::wilson95(1, 2).unwrap();
    assert_eq!((r.ci_low, r.ci_high), (Some(lo * 100.0), Some(hi * 100.0)));
    assert_eq!(counts(band(&s, "m", "linear", 1)), (1, 1, 0, 0));
    assert_eq!(band(&s, "m", "linear", 5).accuracy, Some(0.0));
    // Jumping: the valueless question is unjudged, so its band has bounds and no judged accuracy.
    assert_eq!(band(&s, "m", "jumping", 0).accuracy, Some(0.0));
    let none = band(&s, "m", "jumping", 5);
    assert_eq!(counts(none), (1, 0, 0, 1));
    assert_eq!(
        (none.accuracy, none.accuracy_lower, none.accuracy_upper),
        (None, Some(0.0), Some(100.0))
    );
    assert_eq!((none.ci_low, none.ci_high), (None, None));
    // Baseline: $1600 and $2000 are the fourth and fifth bands.
    assert_eq!(band(&s, "m", "baseline", 3).accuracy, Some(0.0));
    assert_eq!(band(&s, "m", "baseline", 4).accuracy, Some(100.0));
    // Bands without questions have no accuracy row, but a mix row of 0.
    assert_eq!(
        s.values
            .accuracy
            .iter()
            .filter(|r| r.model == "m" && r.structure == "linear")
            .count(),
        3
    );
    let mix: Vec<(i64, Option<f64>)> = s
        .values
        .mix
        .iter()
        .filter(|r| r.model == "m" && r.structure == "linear")
        .map(|r| (r.questions, r.share))
        .collect();
    assert_eq!(
        mix,
        [
            (2, Some(50.0)),
            (1, Some(25.0)),
            (0, Some(0.0)),
            (0, Some(0.0)),
            (0, Some(0.0)),
            (1, Some(25.0))
        ]
    );
    // Every answer is in one band: nothing dropped.
    let total: i64 = s.values.mix.iter().map(|r| r.questions).sum();
    assert_eq!(total as usize, fixture().len());
}

#[test]
fn the_mix_check_on_equal_and_on_different_mixes() {
    let s = summary_of(&fixture());
    let test = |m: &str| s.values.mix_test.iter().find(|t| t.model == m).unwrap();
    // Equal mixes (m): statistic 0 over the three bands used, p = 1.
    let m = test("m");
    assert_eq!((m.linear_questions, m.jumping_questions), (4, 4));
    assert_eq!((m.chi_square, m.df), (Some(0.0), Some(2)));
    assert!((m.p_value.unwrap() - 1.0).abs() < 1e-12);
    // Different mixes (n): linear (4, 0, 0), jumping (0, 2, 2) over $200, $2000, none; every expected count is
    // (2, 1, 1), so χ² = 2 + 1 + 1 + 2 + 1 + 1 = 8 with 2 degrees of freedom, p = e^(−4).
    let n = test("n");
    assert!((n.chi_square.unwrap() - 8.0).abs() < 1e-12);
    assert_eq!(n.df, Some(2));
    assert!((n.p_value.unwrap() - (-4.0f64).exp()).abs() < 1e-12);
    // A model with one structure only cannot be tested.
    let one = summary_of(&prompt(
        "o",
        Structure::Linear,
        "l1",
        &[(Some(200), C, false)],
    ));
    assert_eq!(one.values.mix_test[0].p_value, None);
}

#[test]
fn the_pooled_share_is_flagged_incorrect_over_incorrect_of_linear_and_jumping() {
    let s = summary_of(&fixture());
    let pooled = |m: &str| {
        s.wrong_question_pooled
            .iter()
            .find(|w| w.model == m)
            .unwrap()
    };
    // m: linear 1 of 2, jumping 1 of 2 → 2 of 4 (the baseline's incorrect answer stays out of the pool).
    let m = pooled("m");
    assert_eq!(
        (m.structure.as_str(), m.incorrect, m.wrong_question),
        ("pooled", 4, 2)
    );
    assert_eq!(m.share, Some(50.0));
    // n: linear has no incorrect answer, jumping 1 flagged of 3.
    let n = pooled("n");
    assert_eq!((n.incorrect, n.wrong_question), (3, 1));
    assert!((n.share.unwrap() - 100.0 / 3.0).abs() < 1e-12);
    // On a synthetic run: the pooled row is the sums over the structures' rows.
    let (prompts, answers) = synthetic::generate_records(&crate::rift::small());
    let s = rift::aggregate_records(&answers, &prompts, &RiftConfig::default()).unwrap();
    assert_eq!(s.wrong_question_pooled.len(), s.models.len());
    for p in &s.wrong_question_pooled {
        let rows: Vec<_> = s
            .wrong_question
            .iter()
            .filter(|w| w.model == p.model && w.structure != "baseline")
            .collect();
        assert_eq!(rows.len(), 2);
        let inc: i64 = rows.iter().map(|w| w.incorrect).sum();
        let wq: i64 = rows.iter().map(|w| w.wrong_question).sum();
        assert_eq!((p.incorrect, p.wrong_question), (inc, wq));
        assert!((p.share.unwrap() - wq as f64 / inc as f64 * 100.0).abs() < 1e-12);
    }
    // The frame holds the pooled rows beside the others.
    let frame = &s.frames["rift_wrong_question"];
    assert_eq!(frame.height(), s.wrong_question.len() + s.models.len());
}

#[test]
fn value_tables_from_parquet_equal_those_from_records() {
    let cfg = crate::rift::small();
    let (prompts, answers) = synthetic::generate_records(&cfg);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("answers.parquet");
    synthetic::write_answers_parquet(&cfg, &path).unwrap();
    let pf = rift::prompts_frame(&prompts).unwrap();
    let from_parquet = rift::aggregate(
        rift::scan_answers_parquet(&path).unwrap(),
        Some(&pf),
        &RiftConfig::default(),
    )
    .unwrap();
    let from_records = rift::aggregate_records(&answers, &prompts, &RiftConfig::default()).unwrap();
    assert_eq!(from_parquet.values.accuracy, from_records.values.accuracy);
    assert_eq!(from_parquet.values.mix, from_records.values.mix);
    assert_eq!(from_parquet.values.mix_test, from_records.values.mix_test);
    // The synthetic values: every band used, one question in twenty without a value, nothing dropped.
    let none: i64 = from_records
        .values
        .mix
        .iter()
        .filter(|r| r.band == "no value")
        .map(|r| r.questions)
        .sum();
    let share = none as f64 / answers.len() as f64;
    assert!((0.03..0.07).contains(&share), "{share}");
    let total: i64 = from_records.values.mix.iter().map(|r| r.questions).sum();
    assert_eq!(total as usize, answers.len());
}
