//! Provider batch jobs against the mock's Batch API (upload, create, poll, download) and vLLM's file mode:
//! the same records, cache and budget as one-by-one requests, failed lines sent again, bad endings as one error.

use std::path::Path;
use std::time::Duration;

use inference_client::{BatchMode, BatchOptions, Client, Error, ModelConfig, RunOptions};
use mock_provider::{BatchEnd, Fault, MockConfig, MockServer};
use schema::{Outcome, PromptRecord, ResponseRecord};

use crate::support::{self, expected_content, prompt};

fn batch_opts(dir: &Path) -> RunOptions {
    let mut o = support::opts(dir);
    o.progress = false;
    o.batch = Some(BatchOptions {
        poll_interval: Duration::from_millis(5),
        max_wait: Some(Duration::from_secs(20)),
        ..BatchOptions::default()
    });
    o
}

fn batch_model(mock: &MockServer, mode: BatchMode) -> ModelConfig {
    let mut m = support::model(&mock.base_url());
    m.batch = Some(mode);
    m.max_tokens = Some(100);
    m.price_in_per_mtok = 1.0;
    m.price_out_per_mtok = 2.0;
    m
}

fn records(out: &Path) -> Vec<ResponseRecord> {
    schema::read_latest_responses(out).expect("read output")
}

fn mock(end: BatchEnd) -> MockServer {
    let mut cfg = MockConfig::new();
    cfg.batch_end = end;
    MockServer::start(cfg, 0).expect("mock")
}

/// The fields a record's answer is made of (not its timings or attempts).
fn answer_of(r: &ResponseRecord) -> (String, u32, Outcome, Option<String>, String, schema::Usage) {
    (
        r.id.clone(),
        r.sample_index,
        r.outcome,
        r.content.clone(),
        r.cache_key.clone(),
        r.usage.clone(),
    )
}

#[test]
fn a_batch_round_trip_writes_what_chat_would_and_is_never_sent_again() {
    let dir = tempfile::tempdir().unwrap();
    let mock = mock(BatchEnd::Completed);
    let model = batch_model(&mock, BatchMode::Openai);
    let mut prompts = support::prompts(5);
    // Same request under another id: one line, two records.
    prompts.push(prompt("p0-again", "question 0"));
    let out = dir.path().join("responses.jsonl");
    let mut o = batch_opts(dir.path());
    o.ledger = Some(dir.path().join("spend.jsonl"));
    let client = Client::new(o.clone()).unwrap();
    let s = client.chat_batch(&model, &prompts, &out).unwrap();
    let stats = mock.batch_stats();
    assert_eq!(
        (s.sent, s.failed, s.batch_pending, client.unfinished()),
        (6, 0, 0, 0)
    );
    assert_eq!((stats.uploads, stats.batches, stats.lines), (1, 1, 5));
    assert_eq!(stats.polls, 3, "validating, in_progress, completed");
    assert_eq!(
        mock.requests(),
        0,
        "no chat completion is requested one by one"
    );
    let got = records(&out);
    assert_eq!(got.len(), 6);
    for (r, p) in got.iter().zip(&prompts) {
        assert_eq!(r.id, p.id);
        assert_eq!(r.outcome, Outcome::Ok);
        assert_eq!(r.content.as_deref(), Some(expected_content(p).as_str()));
        assert!(!r.cached);
    }
    // Usage and cost go into the one budget and the run's spend ledger.
    assert!(s.prompt_tokens > 0 && s.completion_tokens == 60);
    assert!(client.spent_usd() > 0.0 && (client.spent_usd() - s.spent_usd).abs() < 1e-12);
    let ledger = std::fs::read_to_string(dir.path().join("spend.jsonl")).unwrap();
    assert_eq!(ledger.lines().count(), 6);

    // The same records as one-by-one requests would have written (another cache, another file).
    let other = tempfile::tempdir().unwrap();
    let direct = other.path().join("direct.jsonl");
    let one_by_one = Client::new(support::opts(other.path())).unwrap();
    one_by_one.chat(&model, &prompts, &direct).unwrap();
    // The Batch API bills half the listed prices (`batch-price-share` unset): the same answers cost half.
    assert!(
        (one_by_one.spent_usd() - 2.0 * client.spent_usd()).abs() < 1e-12,
        "one by one {} USD, as a batch {} USD",
        one_by_one.spent_usd(),
        client.spent_usd()
    );
    let sorted = |rs: &[ResponseRecord]| {
        let mut v: Vec<_> = rs.iter().map(answer_of).collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    };
    assert_eq!(sorted(&got), sorted(&records(&direct)));
    let chat_requests = mock.requests();

    // A rerun with --batch resumes everything; a plain run on a new file copies from the cache: nothing is sent.
    let again = Client::new(o.clone()).unwrap();
    let s = again.chat_batch(&model, &prompts, &out).unwrap();
    assert_eq!((s.resumed, s.sent), (6, 0));
    let fresh = dir.path().join("fresh.jsonl");
    let s = again.chat(&model, &prompts, &fresh).unwrap();
    assert_eq!((s.cached, s.sent), (6, 0));
    let s = again
        .chat_batch(&model, &prompts, &dir.path().join("fresh2.jsonl"))
        .unwrap();
    assert_eq!((s.cached, s.sent), (6, 0));
    assert_eq!(mock.batch_stats().batches, 1);
    assert_eq!(mock.requests(), chat_requests);
    // The batch files stay for inspection; the submitted batch is no longer pending.
    let folder = inference_client::batch_dir(&out);
    let names: Vec<String> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().any(|n| n.starts_with("input-")), "{names:?}");
    assert!(
        names
            .iter()
            .any(|n| n.starts_with("read-") && n.contains("output-")),
        "{names:?}"
    );
    assert!(!names.iter().any(|n| n.starts_with("state-")), "{names:?}");
}

#[test]
fn failed_lines_stay_unanswered_and_only_they_are_sent_again() {
    let dir = tempfile::tempdir().unwrap();
    let mock = mock(BatchEnd::Completed);
    let model = batch_model(&mock, BatchMode::Openai);
    let prompts: Vec<PromptRecord> = vec![
        prompt("a", "first"),
        prompt("b", "second [batch-error]"),
        prompt("c", "third"),
        prompt("d", "fourth [batch-500]"),
        prompt("e", "fifth"),
    ];
    let out = dir.path().join("judge.jsonl");
    let client = Client::new(batch_opts(dir.path())).unwrap();
    let s = client.chat_batch(&model, &prompts, &out).unwrap();
    assert_eq!((s.sent, s.failed), (5, 2));
    assert_eq!(client.unfinished(), 2);
    let got = records(&out);
    let failed: Vec<(&str, &str)> = got
        .iter()
        .filter(|r| r.outcome == Outcome::Failed)
        .map(|r| (r.id.as_str(), r.error.as_deref().unwrap_or("")))
        .collect();
    assert_eq!(failed.len(), 2, "{failed:?}");
    assert!(
        failed[0].0 == "b" && failed[0].1.contains("server_error"),
        "{failed:?}"
    );
    assert!(
        failed[1].0 == "d" && failed[1].1.starts_with("HTTP 500"),
        "{failed:?}"
    );

    // The next run sends only the two failed lines, in one new batch.
    let again = Client::new(batch_opts(dir.path())).unwrap();
    let s = again.chat_batch(&model, &prompts, &out).unwrap();
    assert_eq!((s.resumed, s.sent, s.failed), (3, 2, 0));
    assert_eq!(again.unfinished(), 0);
    let stats = mock.batch_stats();
    assert_eq!((stats.batches, stats.lines), (2, 7));
    let got = records(&out);
    assert_eq!(got.len(), 5);
    assert!(got.iter().all(|r| r.outcome == Outcome::Ok));
    assert_eq!(mock.requests(), 0);
}

#[test]
fn a_batch_that_ends_badly_is_one_clear_error_and_loses_nothing() {
    for (end, status, answered) in [
        (BatchEnd::Failed, "failed", 0),
        (BatchEnd::Expired, "expired", 2),
        (BatchEnd::Cancelled, "cancelled", 2),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let bad = mock(end);
        let prompts = support::prompts(4);
        let out = dir.path().join("responses.jsonl");
        let client = Client::new(batch_opts(dir.path())).unwrap();
        let err = client
            .chat_batch(&batch_model(&bad, BatchMode::Openai), &prompts, &out)
            .unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, Error::Batch(_)), "{end:?}: {msg}");
        assert!(!msg.contains('\n'), "{end:?}: one line: {msg}");
        assert!(msg.contains(&format!("ended \"{status}\"")), "{msg}");
        assert!(
            msg.contains(&format!("{answered} of 4 requests answered")),
            "{msg}"
        );
        let ok = records(&out)
            .iter()
            .filter(|r| r.outcome == Outcome::Ok)
            .count();
        assert_eq!(ok, answered, "{end:?}");

        // Nothing is lost: a rerun (here against a provider that completes) sends only what is unanswered.
        let good = mock(BatchEnd::Completed);
        let again = Client::new(batch_opts(dir.path())).unwrap();
        let s = again
            .chat_batch(&batch_model(&good, BatchMode::Openai), &prompts, &out)
            .unwrap();
        assert_eq!((s.resumed, s.sent), (answered, 4 - answered), "{end:?}");
        assert_eq!(good.batch_stats().lines as usize, 4 - answered);
        assert!(records(&out).iter().all(|r| r.outcome == Outcome::Ok));
    }
}

#[test]
fn the_cost_limit_is_checked_on_the_worst_case_before_submitting() {
    let dir = tempfile::tempdir().unwrap();
    let mock = mock(BatchEnd::Completed);
    let mut model = batch_model(&mock, BatchMode::Openai);
    // Billed at the listed prices (a provider without a batch discount).
    model.batch_price_share = Some(1.0);
    let prompts = support::prompts(10);
    // Each worst case is about (~12 input + 100 output × 2) / 1e6 USD: room for three.
    let mut o = batch_opts(dir.path());
    o.max_cost_usd = Some(3.5 * 212e-6);
    let client = Client::new(o).unwrap();
    let s = client
        .chat_batch(&model, &prompts, &dir.path().join("r.jsonl"))
        .unwrap();
    assert_eq!((s.sent, s.skipped_for_cost), (3, 7));
    assert_eq!(mock.batch_stats().lines, 3);
    assert_eq!(client.unfinished(), 7);
    assert!(client.spent_usd() <= 3.5 * 212e-6);
}

#[test]
fn a_run_stopped_while_polling_resumes_its_batch_instead_of_paying_twice() {
    let dir = tempfile::tempdir().unwrap();
    let mock = mock(BatchEnd::Completed);
    let model = batch_model(&mock, BatchMode::Openai);
    let prompts = support::prompts(3);
    let out = dir.path().join("responses.jsonl");
    let mut o = batch_opts(dir.path());
    o.batch.as_mut().unwrap().max_wait = Some(Duration::ZERO);
    let err = Client::new(o)
        .unwrap()
        .chat_batch(&model, &prompts, &out)
        .unwrap_err();
    assert!(err.to_string().contains("still running"), "{err}");
    assert_eq!(records(&out).len(), 0);
    let s = Client::new(batch_opts(dir.path()))
        .unwrap()
        .chat_batch(&model, &prompts, &out)
        .unwrap();
    assert_eq!(s.sent, 3);
    assert_eq!(mock.batch_stats().batches, 1, "the first batch is resumed");
    assert_eq!(records(&out).len(), 3);
}

#[test]
fn file_mode_leaves_the_input_for_run_batch_and_reads_its_output_next_time() {
    let dir = tempfile::tempdir().unwrap();
    let mock = mock(BatchEnd::Completed);
    let model = batch_model(&mock, BatchMode::File);
    let prompts = support::prompts(3);
    let out = dir.path().join("responses.jsonl");
    let client = Client::new(batch_opts(dir.path())).unwrap();
    let s = client.chat_batch(&model, &prompts, &out).unwrap();
    assert_eq!((s.sent, s.batch_pending), (3, 3));
    assert_eq!(
        client.unfinished(),
        3,
        "a stage waiting for run_batch is incomplete"
    );
    assert_eq!(records(&out).len(), 0);
    let folder = inference_client::batch_dir(&out);
    let input = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("input-")
        })
        .expect("an input file");
    // What run_batch writes: one line per request, here the second one failed.
    let mut output = String::new();
    for (i, line) in std::fs::read_to_string(&input).unwrap().lines().enumerate() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["url"], "/v1/chat/completions");
        assert_eq!(v["method"], "POST");
        let last = v["body"]["messages"][1]["content"].as_str().unwrap();
        let response = if i == 1 {
            serde_json::json!({"status_code": 400, "body": {"error": {"message": "bad"}}})
        } else {
            serde_json::json!({"status_code": 200, "body": {"id": "vllm-1", "model": "mock-model",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": format!("Reply to: {last}")},
                "finish_reason": "stop"}], "usage": {"prompt_tokens": 7, "completion_tokens": 3}}})
        };
        output.push_str(
            &serde_json::json!({"id": format!("r{i}"), "custom_id": v["custom_id"], "response": response, "error": null})
                .to_string(),
        );
        output.push('\n');
    }
    let name = input
        .file_name()
        .unwrap()
        .to_string_lossy()
        .replace("input-", "output-");
    std::fs::write(folder.join(name), output).unwrap();

    let again = Client::new(batch_opts(dir.path())).unwrap();
    let s = again.chat_batch(&model, &prompts, &out).unwrap();
    assert_eq!((s.sent, s.failed, s.batch_pending), (3, 1, 0));
    let got = records(&out);
    assert_eq!(got.iter().filter(|r| r.outcome == Outcome::Ok).count(), 2);
    assert_eq!(got[0].usage.prompt_tokens, 7);
    // The failed one waits for the next run_batch; the answered ones are cached for a plain run.
    let third = Client::new(batch_opts(dir.path())).unwrap();
    let s = third.chat_batch(&model, &prompts, &out).unwrap();
    assert_eq!((s.resumed, s.batch_pending), (2, 1));
    let s = third
        .chat(&model, &prompts[..1], &dir.path().join("plain.jsonl"))
        .unwrap();
    assert_eq!((s.cached, s.sent), (1, 0));
    assert_eq!(mock.requests(), 0);
    assert_eq!(mock.batch_stats().uploads, 0);
}

#[test]
fn without_batch_support_chat_batch_is_chat() {
    let dir = tempfile::tempdir().unwrap();
    let mock = mock(BatchEnd::Completed);
    let model = batch_model(&mock, BatchMode::None);
    let client = Client::new(batch_opts(dir.path())).unwrap();
    let s = client
        .chat_batch(&model, &support::prompts(2), &dir.path().join("r.jsonl"))
        .unwrap();
    assert_eq!((s.sent, s.requests), (2, 2));
    assert_eq!(mock.batch_stats().uploads, 0);
    // OpenAI's own endpoint takes batch jobs unless the config says otherwise; other servers do not.
    let mut openai = ModelConfig::ad_hoc("https://api.openai.com/v1", "gpt-4o-mini");
    assert_eq!(openai.batch_mode(), BatchMode::Openai);
    openai.batch = Some(BatchMode::None);
    assert_eq!(openai.batch_mode(), BatchMode::None);
    assert_eq!(
        ModelConfig::ad_hoc("http://127.0.0.1:8000/v1", "m").batch_mode(),
        BatchMode::None
    );
}

#[test]
fn batch_calls_are_retried_and_a_refused_key_stops_the_model_without_showing_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = MockConfig::new();
    cfg.retry_after_s = 0;
    cfg.script = vec![Fault::RateLimited, Fault::ServerError, Fault::Reset];
    let flaky = MockServer::start(cfg, 0).unwrap();
    let prompts = support::prompts(2);
    let s = Client::new(batch_opts(dir.path()))
        .unwrap()
        .chat_batch(
            &batch_model(&flaky, BatchMode::Openai),
            &prompts,
            &dir.path().join("a.jsonl"),
        )
        .unwrap();
    assert_eq!((s.sent, s.failed), (2, 0));
    assert_eq!(flaky.batch_stats().uploads, 1);

    let var = "IFSTRESS_TEST_BATCH_KEY";
    let key = "sk-batch-SECRET-123";
    // The key reaches the clients through their options, not the process's environment.
    let batch_opts = |dir: &Path| RunOptions {
        env: inference_client::Env::fixed([(var, key)]),
        ..batch_opts(dir)
    };
    let mut cfg = MockConfig::new();
    cfg.script = vec![Fault::Unauthorized];
    let refusing = MockServer::start(cfg, 0).unwrap();
    let mut model = batch_model(&refusing, BatchMode::Openai);
    model.api_key_env = Some(var.to_owned());
    // Another cache: the first part's answers would be copied from it.
    let other = tempfile::tempdir().unwrap();
    let out = other.path().join("b.jsonl");
    let err = Client::new(batch_opts(other.path()))
        .unwrap()
        .chat_batch(&model, &prompts, &out)
        .unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, Error::FailFast { status: 401, .. }), "{msg}");
    assert!(!msg.contains("SECRET"), "{msg}");
    for f in std::fs::read_dir(inference_client::batch_dir(&out)).unwrap() {
        let text = std::fs::read_to_string(f.unwrap().path()).unwrap();
        assert!(!text.contains("SECRET"));
    }
}
