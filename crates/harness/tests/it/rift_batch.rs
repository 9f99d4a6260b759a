//! RIFT with `--batch`: the baseline prompts and the judge go through the mock's Batch API, give the same scores as
//! one-by-one requests, and a rerun sends nothing.

use std::time::Duration;

use harness::helper::HelperCall;
use harness::rift::{Judge, Score, judge, run, score};
use inference_client::{BatchMode, BatchOptions, Client};
use schema::paths::ModelPaths;
use schema::rift::{AnswerScore, JudgeSource, Structure, Verdict};

use crate::rift::{TEMPLATE, prompt};
use crate::support::{mock, model, opts};

#[test]
fn baseline_and_judge_go_through_batch_jobs_and_a_rerun_sends_nothing() {
    let mock = mock(&[
        ("G: Paris France", &["CORRECT"]),
        ("G: Saturn", &["INCORRECT, it is Jupiter"]),
        ("[lin]", &["Paris France, 7, Saturn"]),
        ("[base]", &["Paris"]),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let prompts = [
        prompt(
            "lin",
            Structure::Linear,
            &[
                ("Capital of France?", "Paris"),
                ("Days in a week?", "seven"),
                ("Largest planet?", "Jupiter"),
            ],
        ),
        prompt(
            "base",
            Structure::Baseline,
            &[("Capital of France?", "Paris")],
        ),
    ];
    let prompts_path = dir.path().join("prompts.jsonl");
    schema::write_jsonl_atomic(&prompts_path, &prompts).unwrap();
    let files = ModelPaths::in_dir(&dir.path().join("m"));
    let (mut answerer, mut judge_model) = (model(&mock, "answerer"), model(&mock, "judge"));
    answerer.batch = Some(BatchMode::Openai);
    judge_model.batch = Some(BatchMode::Openai);
    let mut o = opts(dir.path());
    o.progress = false;
    o.batch = Some(BatchOptions {
        poll_interval: Duration::from_millis(5),
        ..BatchOptions::default()
    });
    let client = Client::new(o).unwrap();

    let stages = || {
        run(&answerer, &prompts, &files.responses(), &client).unwrap();
        let verdicts = judge(&Judge {
            judge: &judge_model,
            prompts: &prompts_path,
            responses: &files.responses(),
            template: TEMPLATE,
            judge_settled: false,
            call: &HelperCall::judge(),
            files: &files,
            client: &client,
        })
        .unwrap();
        score(&Score {
            prompts: &prompts_path,
            responses: &files.responses(),
            verdicts: Some(&verdicts.verdicts_file),
            judge_settled: false,
            files: &files,
        })
        .unwrap();
        verdicts
    };
    let verdicts = stages();
    assert_eq!((verdicts.judged, verdicts.unjudged), (2, 0));
    // The multi-question prompt one by one; the baseline prompt (1 line) and the two judge requests as batches.
    assert_eq!(mock.requests(), 1);
    let b = mock.batch_stats();
    assert_eq!((b.batches, b.lines), (2, 3));
    assert_eq!(client.unfinished(), 0);

    let answers: Vec<AnswerScore> = schema::read_jsonl(&files.answer_scores()).unwrap();
    let mut got: Vec<(&str, &str, Verdict, JudgeSource)> = answers
        .iter()
        .map(|a| {
            (
                a.prompt_id.as_str(),
                a.expected.as_str(),
                a.verdict,
                a.judged_by,
            )
        })
        .collect();
    got.sort_by_key(|a| a.0);
    assert_eq!(
        got,
        vec![
            ("base", "Paris", Verdict::Correct, JudgeSource::PreJudge),
            ("lin", "Paris", Verdict::Correct, JudgeSource::Llm),
            ("lin", "seven", Verdict::Correct, JudgeSource::PreJudge),
            ("lin", "Jupiter", Verdict::Incorrect, JudgeSource::Llm),
        ]
    );

    // Everything is on file and in the cache: a rerun sends no request and submits no batch.
    stages();
    assert_eq!(mock.requests(), 1);
    assert_eq!(mock.batch_stats().batches, 2);
}
