//! RIFT run, judge and score on a two-prompt fixture, and a resumed rerun.

use std::path::{Path, PathBuf};

use harness::helper::HelperCall;
use harness::rift::{Judge, JudgeSummary, Score, ScoreSummary, judge, run, score};
use inference_client::{Client, ModelConfig, RunSummary};
use mock_provider::MockServer;
use schema::paths::ModelPaths;
use schema::rift::{AnswerScore, JudgeSource, PromptMeta, PromptScore, Structure, Verdict};
use schema::{Message, PromptRecord, ResponseRecord};

use crate::support::{client, mock, model};

pub(crate) const TEMPLATE: &str = "Q: {question}\nE: {expected}\nG: {given}";

pub(crate) fn prompt(id: &str, structure: Structure, qa: &[(&str, &str)]) -> PromptRecord {
    let n = qa.len() as u32;
    let meta = PromptMeta {
        benchmark: "rift".into(),
        structure,
        group_id: "g00000".into(),
        seed: 1,
        num: n,
        start_row: 0,
        max_jump_distance: 2,
        jump_k: None,
        traversal: (1..=n).collect(),
        expected: qa.iter().map(|(_, a)| (*a).to_owned()).collect(),
        questions: qa.iter().map(|(q, _)| (*q).to_owned()).collect(),
        rows: vec![],
        values_normalized: vec![],
    };
    let serde_json::Value::Object(extra) = serde_json::to_value(meta).unwrap() else {
        unreachable!("a struct serializes to an object")
    };
    PromptRecord {
        id: id.to_owned(),
        messages: vec![Message::user(format!(
            "[{id}] Answer the questions in order."
        ))],
        sample_index: 0,
        params: Default::default(),
        extra,
    }
}

/// The two-prompt fixture: a linear prompt of three questions and a one-question baseline in `<dir>/prompts.jsonl`,
/// a mock that answers them and judges the answers the pre-judge cannot settle (one right, one wrong), and the
/// answering model's files in `<dir>/m/`.
pub(crate) struct Tiny {
    pub(crate) mock: MockServer,
    pub(crate) prompts: [PromptRecord; 2],
    pub(crate) prompts_path: PathBuf,
    pub(crate) files: ModelPaths,
    pub(crate) answerer: ModelConfig,
    pub(crate) judge: ModelConfig,
}

impl Tiny {
    pub(crate) fn new(dir: &Path) -> Tiny {
        let mock = mock(&[
            ("G: Paris France", &["CORRECT"]),
            ("G: Saturn", &["INCORRECT, it is Jupiter"]),
            ("[lin]", &["Paris France, 7, Saturn"]),
            ("[base]", &["Paris"]),
        ]);
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
        let prompts_path = dir.join("prompts.jsonl");
        schema::write_jsonl_atomic(&prompts_path, &prompts).unwrap();
        let (answerer, judge) = (model(&mock, "answerer"), model(&mock, "judge"));
        Tiny {
            mock,
            prompts,
            prompts_path,
            files: ModelPaths::in_dir(&dir.join("m")),
            answerer,
            judge,
        }
    }

    /// Runs, judges and scores the fixture through `client`.
    pub(crate) fn stages(&self, client: &Client) -> (RunSummary, JudgeSummary, ScoreSummary) {
        let files = &self.files;
        let ran = run(&self.answerer, &self.prompts, &files.responses(), client).unwrap();
        let verdicts = judge(&Judge {
            judge: harness::helper::JudgeRef {
                role: schema::judge::JudgeRole::RiftAnswers,
                model: &self.judge,
                prompt: TEMPLATE,
                call: &HelperCall::judge(),
            },
            prompts: &self.prompts_path,
            responses: &files.responses(),
            judge_settled: false,
            files,
            client,
        })
        .unwrap();
        let summary = score(&Score {
            prompts: &self.prompts_path,
            responses: &files.responses(),
            verdicts: Some(&verdicts.verdicts_file),
            judge_settled: false,
            files,
        })
        .unwrap();
        (ran, verdicts, summary)
    }

    /// Checks each answer's prompt, expected answer, verdict and who gave it: the linear prompt's first and last
    /// answers judged by the LLM (right, wrong), the rest settled by the pre-judge. Sorted by prompt, stably: scores
    /// follow the responses file, in the order replies arrived, and each prompt's answers stay in traversal order.
    pub(crate) fn assert_judged(&self) {
        let answers: Vec<AnswerScore> = schema::read_jsonl(&self.files.answer_scores()).unwrap();
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
            [
                ("base", "Paris", Verdict::Correct, JudgeSource::PreJudge),
                ("lin", "Paris", Verdict::Correct, JudgeSource::Llm),
                ("lin", "seven", Verdict::Correct, JudgeSource::PreJudge),
                ("lin", "Jupiter", Verdict::Incorrect, JudgeSource::Llm),
            ]
        );
    }
}

#[test]
fn run_judge_and_score_a_tiny_experiment_then_resume_without_sending() {
    let dir = tempfile::tempdir().unwrap();
    let t = Tiny::new(dir.path());
    let client = client(dir.path());
    let stages = || {
        let (ran, _, summary) = t.stages(&client);
        (ran, summary)
    };
    let (mock, prompts, prompts_path, files) = (&t.mock, &t.prompts, &t.prompts_path, &t.files);
    let (ran, summary) = stages();
    assert_eq!((ran.sent, ran.failed), (2, 0));
    // Two replies, and two answers the pre-judge could not settle.
    assert_eq!(mock.requests(), 4);

    t.assert_judged();
    let prompt_scores: Vec<PromptScore> = schema::read_jsonl(&files.prompt_scores()).unwrap();
    let mut correct: Vec<(&str, u32)> = prompt_scores
        .iter()
        .map(|p| (p.prompt_id.as_str(), p.correct))
        .collect();
    correct.sort_unstable();
    assert_eq!(correct, vec![("base", 1), ("lin", 2)]);

    // The summary is analysis's: one row per (model, structure).
    let rows: Vec<(&str, &str, i64, Option<f64>)> = summary
        .table2
        .iter()
        .map(|r| (r.model.as_str(), r.structure.as_str(), r.n_prompts, r.mean))
        .collect();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0], ("answerer", "baseline", 1, Some(100.0)));
    let (m, s, n, mean) = rows[1];
    assert_eq!((m, s, n), ("answerer", "linear", 1));
    assert!((mean.unwrap() - 200.0 / 3.0).abs() < 1e-9, "{mean:?}");
    assert_eq!(summary.pre_judge.judged_by_llm, 2);
    let md = std::fs::read_to_string(files.summary_md()).unwrap();
    assert!(md.contains("| answerer | linear | 1 | 66.7 |"), "{md}");

    let before = std::fs::read(files.answer_scores()).unwrap();
    let (ran, _) = stages();
    assert_eq!((ran.sent, ran.resumed), (0, 2));
    assert_eq!(mock.requests(), 4, "a rerun sends nothing");
    assert_eq!(std::fs::read(files.answer_scores()).unwrap(), before);

    // A prompt set without `base` (the config changed): its answer stays on file, and scoring takes only the
    // answers to the current prompts.
    let fewer: Vec<PromptRecord> = prompts.iter().filter(|p| p.id != "base").cloned().collect();
    schema::write_jsonl_atomic(prompts_path, &fewer).unwrap();
    let summary = score(&Score {
        prompts: prompts_path,
        responses: &files.responses(),
        verdicts: None,
        judge_settled: false,
        files,
    })
    .unwrap();
    assert_eq!(summary.table2.len(), 1, "only the linear prompt is scored");
    let kept: Vec<ResponseRecord> = schema::read_jsonl(&files.responses()).unwrap();
    assert!(
        kept.iter().any(|r| r.id == "base"),
        "the paid answer stays on file"
    );
}
