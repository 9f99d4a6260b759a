//! What a response record holds, resume, the cost limit and the dry run.

use inference_client::{Client, estimate_input_tokens};
use mock_provider::{MockConfig, MockServer};
use schema::{Logprobs, Outcome};

use crate::support::{chat, contents, model, opts, prompt, prompts, run};

#[test]
fn reasoning_truncation_logprobs_and_cost_are_recorded() {
    let mock = MockServer::start(MockConfig::new(), 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut ps = vec![
        prompt("think", "[think] hi"),
        prompt("field", "[reasoning] hi"),
        prompt("long", "[length] hi"),
        prompt("lp", "hi"),
        prompt("cost", "[cost] hi"),
    ];
    ps[3].params.logprobs = true;
    ps[0]
        .extra
        .insert("keywords".into(), serde_json::json!(["a", "b"]));
    let (s, recs) = run(
        &model(&mock.base_url()),
        &ps,
        &dir.path().join("out.jsonl"),
        &opts(dir.path()),
    );
    let get = |id: &str| recs.iter().find(|r| r.id == id).unwrap();
    assert_eq!(
        get("think").content.as_deref(),
        Some("Reply to: [think] hi")
    );
    assert_eq!(
        get("think").reasoning.as_deref(),
        Some("Thinking about it.")
    );
    assert_eq!(
        get("think").prompt_meta["keywords"],
        serde_json::json!(["a", "b"])
    );
    assert_eq!(
        get("field").reasoning.as_deref(),
        Some("Reasoned separately.")
    );
    assert_eq!(get("long").outcome, Outcome::Truncated);
    assert_eq!(get("long").finish_reason.as_deref(), Some("length"));
    assert_eq!(
        get("lp").logprobs,
        Some(Logprobs {
            mean: -1.0,
            tokens: 2
        })
    );
    assert_eq!(get("think").logprobs, None);
    assert_eq!(get("cost").usage.cost_usd, Some(0.25));
    assert_eq!(get("cost").usage.completion_tokens, 10);
    assert!((s.spent_usd - 0.25).abs() < 1e-9);
    assert_eq!(s.truncated, 1);
    // Truncated answers are cached too: a rerun into a new file sends nothing.
    let (s2, _) = run(
        &model(&mock.base_url()),
        &ps,
        &dir.path().join("again.jsonl"),
        &opts(dir.path()),
    );
    assert_eq!((s2.cached, s2.sent), (5, 0));
}

#[test]
fn resume_sends_only_what_is_missing() {
    let mock = MockServer::start(MockConfig::new(), 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.jsonl");
    let m = model(&mock.base_url());
    run(&m, &prompts(10), &out, &opts(dir.path()));
    let (s, recs) = run(&m, &prompts(25), &out, &opts(dir.path()));
    assert_eq!((s.resumed, s.sent, s.cached), (10, 15, 0));
    assert_eq!(contents(&recs).len(), 25);
    assert_eq!(mock.requests(), 25);
}

/// A line on file for a request that has since changed is not an answer: after a change of prompt text the prompt
/// is sent again, after a change of metadata only it is served from the cache with the new metadata, and a stale
/// line that could not be replaced is dropped rather than passed off as current.
#[test]
fn changed_requests_are_answered_again() {
    let mock = MockServer::start(MockConfig::new(), 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.jsonl");
    let mut m = model(&mock.base_url());
    let o = opts(dir.path());
    let ps = prompts(3);
    run(&m, &ps, &out, &o);

    let mut changed = ps.clone();
    changed[0] = prompt("p0", "a new question");
    changed[1]
        .extra
        .insert("keywords".into(), serde_json::json!(["tax"]));
    let (s, recs) = run(&m, &changed, &out, &o);
    assert_eq!((s.resumed, s.sent, s.cached), (1, 1, 1));
    assert_eq!(mock.requests(), 4);
    let by_id = contents(&recs);
    assert_eq!(by_id.len(), 3, "one line per prompt after the rerun");
    assert_eq!(
        by_id[&("p0".to_owned(), 0)].as_deref(),
        Some("Reply to: a new question")
    );
    let p1 = recs.iter().find(|r| r.id == "p1").unwrap();
    assert_eq!(p1.prompt_meta["keywords"], serde_json::json!(["tax"]));

    // A new max_tokens changes every request, and a cost limit then stops them all: none of the old answers may
    // stay on file.
    m.max_tokens = Some(1000);
    m.price_out_per_mtok = 1000.0;
    let mut limited = opts(dir.path());
    limited.max_cost_usd = Some(0.5);
    let (s, recs) = run(&m, &changed, &out, &limited);
    assert_eq!((s.resumed, s.skipped_for_cost), (0, 3));
    assert!(recs.is_empty(), "{recs:?}");
}

#[test]
fn cost_limit_stops_sending() {
    let mock = MockServer::start(MockConfig::new(), 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut m = model(&mock.base_url());
    m.max_tokens = Some(1000);
    m.price_in_per_mtok = 0.0;
    m.price_out_per_mtok = 1000.0; // 1 USD worst case per request; the mock uses 10 output tokens (0.01 USD).
    let mut o = opts(dir.path());
    o.concurrency = Some(1);
    o.max_cost_usd = Some(0.5);
    let (s, recs) = run(&m, &prompts(20), &dir.path().join("out.jsonl"), &o);
    // Not even one request fits a worst case of 1 USD under a 0.5 USD limit.
    assert_eq!((s.sent, s.skipped_for_cost), (0, 20));
    assert!(recs.is_empty());
    o.max_cost_usd = Some(1.055);
    let (s, recs) = run(&m, &prompts(20), &dir.path().join("out.jsonl"), &o);
    // After each 0.01 USD answer the next worst case (1 USD) must still fit: 0.01·k + 1 ≤ 1.055 allows k ≤ 5 more.
    assert_eq!(s.sent, 6);
    assert_eq!(s.skipped_for_cost, 14);
    assert_eq!(recs.len(), 6);
    assert!(s.spent_usd <= 1.055);
    // A cost limit without max_tokens is refused.
    let mut unbounded = model(&mock.base_url());
    unbounded.price_out_per_mtok = 1.0;
    let err = chat(&unbounded, &prompts(1), &dir.path().join("x.jsonl"), &o);
    assert!(matches!(err, Err(inference_client::Error::Config(_))));
}

#[test]
fn dry_run_estimates_tokens_and_worst_case_cost() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = model("http://127.0.0.1:9/v1");
    m.max_tokens = Some(100);
    m.price_in_per_mtok = 2.0;
    m.price_out_per_mtok = 10.0;
    let ps = vec![prompt("a", "12345678"), prompt("b", "123")];
    // "Be brief." is 9 characters: ceil(9/4) + 4 = 7; "12345678": 2 + 4 = 6; "123": 1 + 4 = 5.
    assert_eq!(estimate_input_tokens(&ps[0]), 13);
    let r = Client::new(opts(dir.path()))
        .unwrap()
        .dry_run(&m, &ps)
        .unwrap();
    assert_eq!(
        (r.prompts, r.cached, r.est_input_tokens, r.unbounded),
        (2, 0, 25, 0)
    );
    let expect = (25.0 * 2.0 + 200.0 * 10.0) / 1e6;
    assert!((r.worst_case_cost_usd - expect).abs() < 1e-12);
}
