//! Streamed answers: the idle timeout measures silence, not an answer's length; what a stream carries (usage,
//! reasoning, provenance) ends up exactly where a whole reply puts it; abandoned attempts are counted and, where
//! the provider bills them, paid for at their worst case.

use std::sync::Arc;
use std::time::{Duration, Instant};

use inference_client::estimate_input_tokens;
use mock_provider::{Fault, MockConfig, MockServer, Responder};
use schema::{ErrorClass, ResponseRecord};

use crate::support::{model, opts, prompt, prompts, run};

/// A mock whose every answer is `chars` characters long.
fn long_answers(chars: usize) -> Option<Responder> {
    Some(Responder(Arc::new(move |_, _| Some("x".repeat(chars)))))
}

/// The timers themselves (an answer longer than both, a silence, the first byte) are tested exactly on tokio's
/// paused clock (`http.rs`'s unit tests); this checks that nothing else in the real path (the HTTP client's own
/// timeouts, the connection pool) cuts a long streamed answer short. Bounds: the lower ones are causal (23 gaps of
/// 50 ms); each gap is 50 ms against a 1 s idle bound, and the whole test took 1.27-1.28 s over six runs at a load
/// average near 3 on two cores (about 0.1 s above the answer's 1.15 s), so a gap would have to stretch twentyfold
/// to fail it.
#[test]
fn an_answer_longer_than_both_timeouts_arrives_on_its_first_attempt() {
    let mut cfg = MockConfig::new();
    // 24 events 50 ms apart: about 1.2 s of generation.
    cfg.responder = long_answers(22 * 4);
    cfg.chunk_chars = 4;
    cfg.chunk_delay = Duration::from_millis(50);
    let mock = MockServer::start(cfg, 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut m = model(&mock.base_url());
    m.timeout_s = 0.6;
    m.idle_timeout_s = 1.0;
    let ps = prompts(4);
    let t0 = Instant::now();
    let (s, recs) = run(&m, &ps, &dir.path().join("o.jsonl"), &opts(dir.path()));
    assert!(
        t0.elapsed() > Duration::from_millis(1_100),
        "{:?}",
        t0.elapsed()
    );
    assert_eq!((s.sent, s.failed, s.requests, s.abandoned), (4, 0, 4, 0));
    assert_eq!(mock.requests(), 4);
    for r in &recs {
        assert_eq!(r.attempts.len(), 1, "{:?}", r.attempts);
        assert_eq!(r.content.as_deref().map(str::len), Some(22 * 4));
        assert!(r.latency_s.unwrap() > 1.1);
    }
}

#[test]
fn a_stream_that_goes_silent_is_abandoned_after_the_idle_timeout() {
    let mut cfg = MockConfig::new();
    cfg.script = vec![Fault::Silent];
    cfg.hang = Duration::from_secs(20);
    let mock = MockServer::start(cfg, 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut m = model(&mock.base_url());
    m.timeout_s = 30.0;
    m.idle_timeout_s = 1.0;
    let t0 = Instant::now();
    let (s, recs) = run(
        &m,
        &prompts(1),
        &dir.path().join("o.jsonl"),
        &opts(dir.path()),
    );
    // Ended by the idle timeout, neither by the server (20 s) nor by `timeout-s` (30 s): the bound sits between
    // the 1 s idle timeout and the server's 20 s (when it fires is tested exactly on a paused clock, `http.rs`).
    assert!(t0.elapsed() < Duration::from_secs(12), "{:?}", t0.elapsed());
    assert_eq!((s.failed, s.requests, s.abandoned), (0, 2, 1));
    let first = &recs[0].attempts[0];
    assert_eq!(first.error_class, Some(ErrorClass::Timeout));
    assert_eq!(first.status, Some(200));
    assert!(first.abandoned);
    assert!(first.latency_s >= 1.0, "{}", first.latency_s);
    assert!(!recs[0].attempts[1].abandoned);
    assert_eq!(recs[0].abandoned_attempts(), 1);
}

#[test]
fn a_cut_stream_is_retried_and_counted_abandoned() {
    let mut cfg = MockConfig::new();
    cfg.script = vec![
        Fault::TruncatedBody,
        Fault::InvalidJson,
        Fault::EmptyChoices,
    ];
    let mock = MockServer::start(cfg, 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let m = model(&mock.base_url());
    let (s, recs) = run(
        &m,
        &prompts(1),
        &dir.path().join("o.jsonl"),
        &opts(dir.path()),
    );
    let classes: Vec<_> = recs[0].attempts.iter().map(|a| a.error_class).collect();
    assert_eq!(
        classes,
        [
            Some(ErrorClass::TruncatedBody),
            Some(ErrorClass::InvalidJson),
            Some(ErrorClass::EmptyChoices),
            None
        ]
    );
    assert_eq!((s.failed, s.abandoned), (0, 1));
    assert_eq!(recs[0].content.as_deref(), Some("Reply to: question 0"));
}

/// The fields of a record that a streamed and a whole reply must give alike.
fn answer_fields(r: &ResponseRecord) -> impl PartialEq + std::fmt::Debug {
    let mut served = r.served.clone();
    if let Some(s) = served.as_mut() {
        s.request_id = None;
    }
    (
        r.outcome,
        r.content.clone(),
        r.reasoning.clone(),
        r.finish_reason.clone(),
        r.usage.clone(),
        r.logprobs.clone(),
        served,
        r.cache_key.clone(),
    )
}

#[test]
fn a_streamed_answer_is_recorded_and_cached_as_a_whole_one() {
    let mut cfg = MockConfig::new();
    cfg.chunk_chars = 3;
    let mock = MockServer::start(cfg, 0).unwrap();
    let mut ps = vec![
        prompt("think", "[think] plan it"),
        prompt("reasoning", "[reasoning] and [cost] and [length]"),
        prompt("plain", "just answer"),
    ];
    ps[2].params.logprobs = true;
    let streamed = model(&mock.base_url());
    let mut whole = streamed.clone();
    whole.stream = false;
    let (da, db) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (sa, a) = run(&streamed, &ps, &da.path().join("o.jsonl"), &opts(da.path()));
    let (sb, b) = run(&whole, &ps, &db.path().join("o.jsonl"), &opts(db.path()));
    assert_eq!((sa.requests, sb.requests), (3, 3));
    assert_eq!(sa.spent_usd, sb.spent_usd);
    let (mut a, mut b) = (a, b);
    a.sort_by(|x, y| x.id.cmp(&y.id));
    b.sort_by(|x, y| x.id.cmp(&y.id));
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(answer_fields(x), answer_fields(y), "{}", x.id);
    }
    let think = a.iter().find(|r| r.id == "think").unwrap();
    assert_eq!(think.reasoning.as_deref(), Some("Thinking about it."));
    assert_eq!(think.content.as_deref(), Some("Reply to: [think] plan it"));
    let by_id = |rs: &[ResponseRecord], id: &str| rs.iter().find(|r| r.id == id).cloned().unwrap();
    let reasoning = by_id(&a, "reasoning");
    assert_eq!(reasoning.reasoning.as_deref(), Some("Reasoned separately."));
    assert_eq!(reasoning.usage.cost_usd, Some(0.25));
    assert_eq!(reasoning.finish_reason.as_deref(), Some("length"));
    assert_eq!(reasoning.usage.completion_tokens, 10);
    assert!(reasoning.usage.prompt_tokens > 0);
    assert_eq!(
        by_id(&a, "plain").logprobs.as_ref().map(|l| l.tokens),
        Some(2)
    );
    // Streaming is transport: the non-streaming run's key is the key, and the cache serves either mode.
    let (sc, c) = run(
        &whole,
        &ps,
        &da.path().join("again.jsonl"),
        &opts(da.path()),
    );
    assert_eq!((sc.cached, sc.requests), (3, 0));
    assert_eq!(by_id(&c, "reasoning").content, reasoning.content);
}

#[test]
fn the_cache_key_does_not_depend_on_streaming() {
    let mock = MockServer::start(MockConfig::new(), 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut m = model(&mock.base_url());
    m.max_tokens = Some(64);
    let (_, streamed) = run(
        &m,
        &prompts(1),
        &dir.path().join("a.jsonl"),
        &opts(dir.path()),
    );
    m.stream = false;
    let mut o = opts(dir.path());
    o.refresh = true;
    let (_, whole) = run(&m, &prompts(1), &dir.path().join("b.jsonl"), &o);
    assert_eq!(streamed[0].cache_key, whole[0].cache_key);
    // The key as defined before streaming existed: SHA-256 of the canonical (keys sorted, compact) document
    // {"body":{"max_tokens":64,"messages":[…],"model":"mock-model"},"identity":"openai:mock-model",
    // "sample_index":0}, computed apart from this crate; no `stream` or `stream_options` in it.
    assert_eq!(
        streamed[0].cache_key,
        "0e7ab79ba436da23c9c044304a7afc9d904410199a146ee81132373115dfb5f7"
    );
}

/// The timer is tested exactly on tokio's paused clock (`http.rs`'s unit tests); this checks that the mock's real
/// comment lines reach it. Bounds: a comment every 100 ms against 0.6 s bounds; the test took 1.24-1.25 s over six
/// runs at a load average near 3 on two cores (the mock's 1.2 s plus setup), so the comments came on time.
#[test]
fn keep_alive_comments_carry_a_slow_start_past_the_first_byte_timeout() {
    let mut cfg = MockConfig::new();
    cfg.latency = Duration::from_millis(1_200);
    cfg.keep_alive = Some(Duration::from_millis(100));
    let mock = MockServer::start(cfg, 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut m = model(&mock.base_url());
    // The first comment arrives within `timeout-s`; then every silence is far below `idle-timeout-s`.
    m.timeout_s = 0.6;
    m.idle_timeout_s = 0.6;
    let (s, recs) = run(
        &m,
        &prompts(1),
        &dir.path().join("o.jsonl"),
        &opts(dir.path()),
    );
    assert_eq!((s.failed, s.requests, s.abandoned), (0, 1, 0));
    assert!(recs[0].latency_s.unwrap() >= 1.2);
    assert_eq!(recs[0].content.as_deref(), Some("Reply to: question 0"));
}

#[test]
fn without_a_first_byte_only_timeout_s_ends_the_wait() {
    let mut cfg = MockConfig::new();
    cfg.latency = Duration::from_secs(3);
    let mock = MockServer::start(cfg, 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut m = model(&mock.base_url());
    m.max_attempts = 1;
    m.timeout_s = 1.0;
    // Not used before the first byte.
    m.idle_timeout_s = 0.1;
    let t0 = Instant::now();
    let (s, recs) = run(
        &m,
        &prompts(1),
        &dir.path().join("o.jsonl"),
        &opts(dir.path()),
    );
    assert_eq!((s.failed, s.abandoned), (1, 1));
    let a = &recs[0].attempts[0];
    assert_eq!(a.error_class, Some(ErrorClass::Timeout));
    assert!(
        a.latency_s >= 0.95 && t0.elapsed() < Duration::from_secs(3),
        "{a:?}"
    );
}

#[test]
fn without_streaming_the_whole_reply_is_bounded_by_timeout_s_only() {
    let mut cfg = MockConfig::new();
    cfg.latency = Duration::from_millis(1500);
    let mock = MockServer::start(cfg, 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut m = model(&mock.base_url());
    m.stream = false;
    m.max_attempts = 1;
    // Far below the reply's time: not used without streaming.
    m.idle_timeout_s = 0.1;
    m.timeout_s = 10.0;
    let (s, recs) = run(
        &m,
        &prompts(1),
        &dir.path().join("o.jsonl"),
        &opts(dir.path()),
    );
    assert_eq!((s.failed, s.requests, s.abandoned), (0, 1, 0));
    assert!(recs[0].latency_s.unwrap() >= 1.5);
    m.timeout_s = 0.5;
    let mut o = opts(dir.path());
    o.refresh = true;
    let (s, recs) = run(&m, &prompts(1), &dir.path().join("b.jsonl"), &o);
    assert_eq!((s.failed, s.abandoned), (1, 1));
    assert_eq!(recs[0].attempts[0].error_class, Some(ErrorClass::Timeout));
    assert!(recs[0].attempts[0].abandoned);
}

#[test]
fn a_billed_abandoned_attempt_counts_at_its_worst_case() {
    let spent = |bills: Option<bool>| {
        let mut cfg = MockConfig::new();
        cfg.script = vec![Fault::Silent];
        cfg.hang = Duration::from_secs(10);
        let mock = MockServer::start(cfg, 0).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut m = model(&mock.base_url());
        m.timeout_s = 10.0;
        m.idle_timeout_s = 0.5;
        m.max_tokens = Some(1000);
        m.price_in_per_mtok = 2.0;
        m.price_out_per_mtok = 8.0;
        m.bills_abandoned = bills;
        let ps = prompts(1);
        let (s, recs) = run(&m, &ps, &dir.path().join("o.jsonl"), &opts(dir.path()));
        assert_eq!(s.abandoned, 1);
        let u = &recs[0].usage;
        let answer = (u.prompt_tokens as f64 * 2.0 + u.completion_tokens as f64 * 8.0) / 1e6;
        let worst = (estimate_input_tokens(&ps[0]) as f64 * 2.0 + 1000.0 * 8.0) / 1e6;
        (s.spent_usd, answer, worst)
    };
    let (billed, answer, worst) = spent(Some(true));
    assert!(
        (billed - (answer + worst)).abs() < 1e-12,
        "{billed} vs {answer} + {worst}"
    );
    let (free, answer, _) = spent(Some(false));
    assert!((free - answer).abs() < 1e-12, "{free} vs {answer}");
    // An http:// endpoint is local: not billed unless the config says so.
    let (default, answer, _) = spent(None);
    assert!((default - answer).abs() < 1e-12, "{default} vs {answer}");
}

#[test]
fn records_without_the_abandoned_field_still_read() {
    let line = r#"{"schema_version":1,"id":"p0","sample_index":0,"model":"m","outcome":"ok","content":"hi",
        "usage":{"prompt_tokens":1,"completion_tokens":1},"wall_s":0.1,
        "attempts":[{"n":1,"status":503,"error_class":"server_error","latency_s":0.1,"delay_s":0.2},
                    {"n":2,"status":200,"latency_s":0.1,"delay_s":0.0}],
        "cache_key":"k","cached":false}"#;
    let r: ResponseRecord = serde_json::from_str(line).unwrap();
    assert_eq!(r.abandoned_attempts(), 0);
    // And a record with none abandoned is written as before.
    let text = serde_json::to_string(&r).unwrap();
    assert!(!text.contains("abandoned"), "{text}");
}
