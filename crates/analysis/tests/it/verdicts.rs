//! A run's two copies of the RIFT verdicts (JSONL records and Parquet answer tables): `compare` reads the Parquet
//! and fails, naming the file and record, when the JSONL says otherwise; and with a checked judge the analysis
//! writes the judge-corrected accuracy table.

use std::path::Path;

use analysis::answer_table::AnswerTableWriter;
use analysis::compare::runs::RunData;
use analysis::synthetic::{self, SyntheticConfig};
use schema::paths::{Bench, RunPaths};
use schema::rift::{AnswerScore, JudgeSource, Verdict};

fn cfg() -> SyntheticConfig {
    SyntheticConfig {
        seed: 5,
        models: 2,
        prompts_per_structure: 12,
        baseline_prompts: 10,
        min_questions: 4,
        max_questions: 12,
    }
}

/// Writes a run folder holding `answers` as the joined JSONL and as one Parquet table per model (listed).
fn write_run(run: &Path, answers: &[AnswerScore]) {
    let paths = RunPaths::new(run);
    let mut models: Vec<String> = answers.iter().map(|a| a.model.clone()).collect();
    models.sort();
    models.dedup();
    let mut tables = Vec::new();
    for m in &models {
        let path = paths.model(Bench::Rift, m).answer_table();
        let mut w = AnswerTableWriter::create(&path);
        let mine: Vec<AnswerScore> = answers.iter().filter(|a| &a.model == m).cloned().collect();
        w.write(&mine).unwrap();
        w.finish().unwrap();
        tables.push(path);
    }
    analysis::rift::write_answer_tables(&paths.rift_answer_tables(), &tables).unwrap();
    schema::write_jsonl_atomic(&paths.rift_answer_scores(), answers).unwrap();
}

#[test]
fn compare_fails_when_the_jsonl_and_the_parquet_verdicts_disagree() {
    let dir = tempfile::tempdir().unwrap();
    let (_, mut answers) = synthetic::generate_records(&cfg());
    write_run(dir.path(), &answers);
    let data = RunData::read(dir.path()).unwrap();
    let model = data.rift_models[0].clone();
    let entry = data.entry(dir.path(), &model, model.clone()).unwrap();
    assert!(entry.rift.is_some());
    // Edit one verdict in the JSONL only: the comparison stops, naming the file, the record and the field.
    let (i, a) = answers
        .iter_mut()
        .enumerate()
        .find(|(_, a)| a.model == model && a.verdict == Verdict::Correct)
        .unwrap();
    a.verdict = Verdict::Incorrect;
    let (prompt, depth) = (a.prompt_id.clone(), a.depth);
    schema::write_jsonl_atomic(&RunPaths::new(dir.path()).rift_answer_scores(), &answers).unwrap();
    let err = data
        .entry(dir.path(), &model, model.clone())
        .unwrap_err()
        .to_string();
    let jsonl = RunPaths::new(dir.path()).rift_answer_scores();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!(
            "{}: record {} (model `{model}`, prompt `{prompt}`, depth {depth}): field verdict is incorrect or \
             missing here but correct in the answer tables of ",
            jsonl.display(),
            i + 1
        )),
        "{err}"
    );
    // A record missing from the JSONL: the counts disagree.
    answers.remove(i);
    schema::write_jsonl_atomic(&jsonl, &answers).unwrap();
    let err = data
        .entry(dir.path(), &model, model.clone())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("answers of model") && err.contains("the two copies"),
        "{err}"
    );
}

#[test]
fn a_checked_judge_gives_the_judge_corrected_table() {
    let dir = tempfile::tempdir().unwrap();
    let (_, mut answers) = synthetic::generate_records(&cfg());
    // Every other settled answer went to the LLM judge.
    for (i, a) in answers.iter_mut().enumerate() {
        if i % 2 == 0 && matches!(a.verdict, Verdict::Correct | Verdict::Incorrect) {
            a.judged_by = JudgeSource::Llm;
        }
    }
    write_run(dir.path(), &answers);
    let check = |agree: u64| schema::judge_check::Agreement {
        agree,
        total: 50,
        unjudged: 0,
        rate: Some(agree as f64 / 50.0),
        ci_low: None,
        ci_high: None,
    };
    let file = schema::judge_check::JudgeCheckFile {
        schema_version: 1,
        checks: vec![schema::judge_check::JudgeCheck {
            bench: schema::paths::Bench::Rift,
            role: schema::judge::JudgeRole::RiftAnswers,
            judge: "grader".into(),
            sensitivity: check(47),
            specificity: check(45),
            min_sensitivity: 0.9,
            min_specificity: 0.9,
            items: 0,
            unreadable: 0,
            max_unreadable_share: 0.02,
            passed: true,
            kept: false,
            requests: 100,
            controls_file: "rift/judge-check/grader/controls.jsonl".into(),
        }],
    };
    file.write(&RunPaths::new(dir.path()).judge_check())
        .unwrap();
    let inputs = analysis::all::Inputs::for_run(
        dir.path(),
        analysis::models::ReasoningRule { explicit: None },
    );
    analysis::all::analyse(&inputs).unwrap();
    let tables = dir.path().join("tables/rift");
    let c = analysis::rift::corrected::read(&tables).unwrap().unwrap();
    assert_eq!(c.judge, "grader");
    assert!(!c.rows.is_empty());
    for r in &c.rows {
        // The counts add up to the answer-level accuracy, and the correction moves only the judged part.
        let raw = (r.settled.0 + r.judged.0) as f64 / (r.settled.1 + r.judged.1) as f64;
        assert!((r.raw - raw).abs() < 1e-12, "{r:?}");
        let (v, lo, hi) = r.corrected.unwrap();
        assert!(
            lo <= v && v <= hi && (0.0..=1.0).contains(&lo) && hi <= 1.0,
            "{r:?}"
        );
        let theta = (r.judged.0 as f64 / r.judged.1 as f64 + 0.9 - 1.0) / (0.94 + 0.9 - 1.0);
        let want = (r.settled.0 as f64 + r.judged.1 as f64 * theta.clamp(0.0, 1.0))
            / (r.settled.1 + r.judged.1) as f64;
        assert!((v - want).abs() < 1e-12, "{v} {want}");
    }
    let sentence = analysis::rift::corrected::sentence(&c).unwrap();
    assert!(
        sentence.starts_with("Judge-corrected accuracy (answers the judge `grader` decided"),
        "{sentence}"
    );
    assert!(
        sentence.contains(" vs ") && sentence.contains("% raw"),
        "{sentence}"
    );
    let md = std::fs::read_to_string(tables.join("rift_judge_corrected.md")).unwrap();
    assert!(md.contains("sensitivity 47/50, specificity 45/50"), "{md}");
    let wrong =
        std::fs::read_to_string(tables.join("rift_wrong_question_judge_corrected.md")).unwrap();
    assert!(wrong.contains("wrong-question share, raw (%)"), "{wrong}");
}
