//! RIFT scoring over many chunks (its three threads): the same scores as scoring everything at once, and a bad
//! prompt deep in the file is one error that names it, with the earlier outputs left as they were.

use harness::rift::{SCORE_CHUNK, Score, score};
use schema::paths::ModelPaths;
use schema::rift::{AnswerScore, JudgeRequest, PromptScore, Structure};
use schema::{PromptRecord, ResponseRecord};
use scoring::rift::ScoreOptions;

use crate::rift::prompt;

fn reply(p: &PromptRecord, content: &str) -> ResponseRecord {
    ResponseRecord {
        content: Some(content.to_owned()),
        usage: schema::Usage {
            prompt_tokens: 30,
            completion_tokens: 6,
            reasoning_tokens: None,
            cost_usd: None,
        },
        cache_key: format!("key-{}", p.id),
        ..ResponseRecord::new(&p.id, "answerer")
    }
}

/// More than two chunks of prompts, each answered in one of four ways, written out of order.
fn fixture(n: usize) -> (Vec<PromptRecord>, Vec<ResponseRecord>) {
    let prompts: Vec<PromptRecord> = (0..n)
        .map(|i| {
            prompt(
                &format!("p{i:05}"),
                Structure::Linear,
                &[
                    ("Capital of France?", "Paris"),
                    ("Largest planet?", "Jupiter"),
                    (&format!("Number {i}?"), &format!("{i}")),
                ],
            )
        })
        .collect();
    let mut responses: Vec<ResponseRecord> = prompts
        .iter()
        .enumerate()
        .map(|(i, p)| match i % 4 {
            0 => reply(p, &format!("Paris, Jupiter, {i}")),
            1 => reply(p, "Jupiter, Paris"),
            2 => reply(p, &format!("paris france, the planet Jupiter, {}", i + 1)),
            _ => reply(p, "unknown"),
        })
        .collect();
    responses.reverse();
    (prompts, responses)
}

#[test]
fn many_chunks_score_as_one_and_a_bad_prompt_deep_in_the_file_is_one_error() {
    let n = 2 * SCORE_CHUNK + 77;
    let (mut prompts, responses) = fixture(n);
    let dir = tempfile::tempdir().unwrap();
    let (prompts_path, responses_path) =
        (dir.path().join("prompts.jsonl"), dir.path().join("r.jsonl"));
    schema::write_jsonl_atomic(&prompts_path, &prompts).unwrap();
    schema::write_jsonl_atomic(&responses_path, &responses).unwrap();
    let files = ModelPaths::in_dir(&dir.path().join("answerer"));
    let s = Score {
        prompts: &prompts_path,
        responses: &responses_path,
        verdicts: None,
        judge_settled: false,
        files: &files,
    };
    let summary = score(&s).unwrap();

    // Scoring at once goes in the responses' order: give it the prompts' order.
    let in_order: Vec<ResponseRecord> = responses.iter().rev().cloned().collect();
    let at_once = scoring::rift::score(
        &prompts,
        &in_order,
        None,
        ScoreOptions {
            judge_settled: false,
        },
    )
    .unwrap();
    let answers: Vec<AnswerScore> = schema::read_jsonl(&files.answer_scores()).unwrap();
    let prompt_scores: Vec<PromptScore> = schema::read_jsonl(&files.prompt_scores()).unwrap();
    let requests: Vec<JudgeRequest> = schema::read_jsonl(&files.judge_requests()).unwrap();
    assert_eq!(answers.len(), 3 * n);
    assert_eq!(prompt_scores.len(), n);
    // In prompts-file order, whatever the order of the responses.
    assert_eq!(prompt_scores[0].prompt_id, "p00000");
    assert_eq!(prompt_scores[n - 1].prompt_id, format!("p{:05}", n - 1));
    assert!(
        answers == at_once.answers,
        "chunked answers differ from scoring at once"
    );
    assert!(
        prompt_scores == at_once.prompts,
        "chunked prompt scores differ"
    );
    // Judge requests are de-duplicated across chunks: "paris france" and "the planet Jupiter" once each, plus
    // one per distinct number answer and one "unknown" per question.
    assert_eq!(requests, at_once.judge_requests);
    assert_eq!(summary.judge_requests, requests.len());
    assert!(
        requests.len() < answers.len() / 2,
        "{} requests",
        requests.len()
    );

    // A prompt whose traversal does not match its answers, in the third chunk: one error naming it, and the
    // outputs of the run before are kept whole.
    let before = std::fs::read(files.answer_scores()).unwrap();
    let bad = 2 * SCORE_CHUNK + 5;
    prompts[bad]
        .extra
        .insert("num".to_owned(), serde_json::json!(4));
    schema::write_jsonl_atomic(&prompts_path, &prompts).unwrap();
    let err = score(&s).unwrap_err().to_string();
    assert!(
        err.contains(&format!("p{bad:05}")) && err.contains("num = 4"),
        "{err}"
    );
    assert_eq!(std::fs::read(files.answer_scores()).unwrap(), before);

    // A line that is not JSON after the last full chunk: an error naming the file and line.
    let (good, _) = fixture(n);
    let mut text = serde_json::to_string(&good[0]).unwrap() + "\n";
    for p in &good[1..] {
        text += &(serde_json::to_string(p).unwrap() + "\n");
    }
    text += "{\"id\": \"broken\"\n";
    std::fs::write(&prompts_path, text).unwrap();
    let err = score(&s).unwrap_err().to_string();
    assert!(
        err.contains("reading prompts") && err.contains(&format!(":{}", n + 1)),
        "{err}"
    );
    assert_eq!(std::fs::read(files.answer_scores()).unwrap(), before);
}
