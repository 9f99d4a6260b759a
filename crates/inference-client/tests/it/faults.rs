//! Every fault class is retried (or fails fast), and every attempt is recorded.

use std::time::Duration;

use inference_client::Error;
use mock_provider::{Fault, MockConfig, MockServer};
use schema::{ErrorClass, Outcome};

use crate::support::{chat, expected_content, model, opts, prompt, prompts, run};

/// One prompt against a mock whose first request gets `fault`; the retry succeeds.
fn retried_once(fault: Fault, class: ErrorClass, status: Option<u16>) {
    let mut cfg = MockConfig::new();
    cfg.script = vec![fault];
    cfg.retry_after_s = 0;
    cfg.hang = Duration::from_millis(1500);
    let mock = MockServer::start(cfg, 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let p = vec![prompt("only", "hello")];
    let (s, recs) = run(
        &model(&mock.base_url()),
        &p,
        &dir.path().join("out.jsonl"),
        &opts(dir.path()),
    );
    assert_eq!(recs.len(), 1);
    let r = &recs[0];
    assert_eq!(r.outcome, Outcome::Ok, "{fault:?}: {:?}", r.error);
    assert_eq!(r.content.as_deref(), Some(expected_content(&p[0]).as_str()));
    assert_eq!(r.attempts.len(), 2, "{fault:?}: {:?}", r.attempts);
    assert_eq!(r.attempts[0].error_class, Some(class), "{fault:?}");
    assert_eq!(r.attempts[0].status, status, "{fault:?}");
    assert_eq!(r.attempts[1].error_class, None);
    assert!(r.wall_s >= r.latency_s.unwrap());
    assert_eq!((s.sent, s.requests, s.failed), (1, 2, 0));
    assert_eq!(mock.requests(), 2);
}

#[test]
fn rate_limited_is_retried() {
    retried_once(Fault::RateLimited, ErrorClass::RateLimited, Some(429));
}
#[test]
fn unavailable_is_retried() {
    retried_once(Fault::Unavailable, ErrorClass::ServerError, Some(503));
}
#[test]
fn server_error_is_retried() {
    retried_once(Fault::ServerError, ErrorClass::ServerError, Some(500));
}
#[test]
fn request_timeout_is_retried() {
    retried_once(Fault::RequestTimeout, ErrorClass::RequestTimeout, Some(408));
}
#[test]
fn conflict_is_retried() {
    retried_once(Fault::Conflict, ErrorClass::Conflict, Some(409));
}
#[test]
fn connection_reset_is_retried() {
    retried_once(Fault::Reset, ErrorClass::Connection, None);
}
#[test]
fn timeout_is_retried() {
    retried_once(Fault::Hang, ErrorClass::Timeout, None);
}
#[test]
fn invalid_json_is_retried() {
    retried_once(Fault::InvalidJson, ErrorClass::InvalidJson, Some(200));
}
#[test]
fn empty_choices_is_retried() {
    retried_once(Fault::EmptyChoices, ErrorClass::EmptyChoices, Some(200));
}
#[test]
fn truncated_body_is_retried() {
    retried_once(Fault::TruncatedBody, ErrorClass::TruncatedBody, Some(200));
}

#[test]
fn retry_after_seconds_and_http_date_are_honoured() {
    let mut cfg = MockConfig::new();
    cfg.script = vec![Fault::RateLimited, Fault::RateLimitedDate];
    cfg.retry_after_s = 1;
    let mock = MockServer::start(cfg, 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (_, recs) = run(
        &model(&mock.base_url()),
        &prompts(1),
        &dir.path().join("out.jsonl"),
        &opts(dir.path()),
    );
    let a = &recs[0].attempts;
    assert_eq!(a.len(), 3);
    // Backoff alone would wait at most 0.05 s; the server asked for 1 s, then for a date 2 s ahead (whole seconds).
    // `delay_s` is the wait the client planned, not one it measured, so the first bound holds on any machine.
    assert!(a[0].delay_s >= 1.0 && a[0].delay_s < 1.5, "{a:?}");
    // The date was made while the second attempt was in flight and truncated to whole seconds: 1 to 2 s after it was
    // made, read at most the attempt's latency later. So the planned wait is at most 2 s, and at least 1 s less that
    // latency (a machine that stalls the client only makes the latency, and this bound's slack, larger).
    assert!(
        a[1].delay_s >= 1.0 - a[1].latency_s - 0.01 && a[1].delay_s <= 2.01,
        "{a:?}"
    );
    // The waits happened: the record's wall time holds both.
    assert!(recs[0].wall_s >= a[0].delay_s + a[1].delay_s);
}

#[test]
fn bad_request_fails_that_prompt_only() {
    let mut cfg = MockConfig::new();
    cfg.script = vec![Fault::BadRequest];
    let mock = MockServer::start(cfg, 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts(dir.path());
    o.concurrency = Some(1);
    let (s, recs) = run(
        &model(&mock.base_url()),
        &prompts(3),
        &dir.path().join("out.jsonl"),
        &o,
    );
    assert_eq!((s.failed, s.requests), (1, 3));
    let failed: Vec<_> = recs
        .iter()
        .filter(|r| r.outcome == Outcome::Failed)
        .collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].attempts.len(), 1);
    assert_eq!(
        failed[0].attempts[0].error_class,
        Some(ErrorClass::BadRequest)
    );
    assert!(
        failed[0]
            .error
            .as_deref()
            .unwrap()
            .contains("context too long"),
        "{:?}",
        failed[0].error
    );
    // A rerun retries the failed prompt and keeps one line per prompt.
    let (s2, recs2) = run(
        &model(&mock.base_url()),
        &prompts(3),
        &dir.path().join("out.jsonl"),
        &o,
    );
    assert_eq!((s2.sent, s2.resumed, s2.failed), (1, 2, 0));
    assert_eq!(recs2.len(), 3);
    assert!(recs2.iter().all(|r| r.outcome == Outcome::Ok));
}

fn stops_run(fault: Fault, status: u16) {
    let mut cfg = MockConfig::new();
    cfg.script = vec![fault];
    let mock = MockServer::start(cfg, 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts(dir.path());
    o.concurrency = Some(1);
    let out = dir.path().join("out.jsonl");
    let err = chat(&model(&mock.base_url()), &prompts(5), &out, &o).unwrap_err();
    match err {
        Error::FailFast { status: s, .. } => assert_eq!(s, status),
        other => panic!("expected a fail-fast error, got {other}"),
    }
    // No retries of the failing request and nothing sent after it.
    assert_eq!(mock.requests(), 1);
}

#[test]
fn unauthorized_stops_the_run() {
    stops_run(Fault::Unauthorized, 401);
}
#[test]
fn forbidden_stops_the_run() {
    stops_run(Fault::Forbidden, 403);
}
#[test]
fn not_found_stops_the_run() {
    stops_run(Fault::NotFound, 404);
}

#[test]
fn api_key_never_leaks() {
    let var = "IFSTRESS_TEST_KEY_REDACTION";
    let key = "sk-test-0123456789abcdefSECRET";
    // The key reaches the clients through their options, not the process's environment.
    let opts = |dir: &std::path::Path| inference_client::RunOptions {
        env: inference_client::Env::fixed([(var, key)]),
        ..opts(dir)
    };
    let mock = MockServer::start(MockConfig::new(), 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.jsonl");
    let mut m = model(&mock.base_url());
    m.api_key_env = Some(var.to_owned());
    let (s, _) = run(&m, &prompts(3), &out, &opts(dir.path()));
    assert_eq!(s.sent, 3);
    drop(mock);

    let mut cfg = MockConfig::new();
    cfg.script = vec![Fault::Unauthorized];
    let mock = MockServer::start(cfg, 0).unwrap();
    let mut m = model(&mock.base_url());
    m.api_key_env = Some(var.to_owned());
    let err = chat(&m, &prompts(5), &out, &opts(dir.path()))
        .unwrap_err()
        .to_string();
    assert!(err.contains("Incorrect API key provided"), "{err}");
    assert!(!err.contains("SECRET") && !err.contains("sk-test"), "{err}");
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        assert!(!bytes.windows(6).any(|w| w == b"SECRET"));
    }
    // A missing key variable is a clear error naming the variable, not the key.
    m.api_key_env = Some("IFSTRESS_TEST_KEY_UNSET".to_owned());
    let err = chat(&m, &prompts(1), &out, &opts(dir.path())).unwrap_err();
    assert!(matches!(err, Error::MissingKey { .. }), "{err}");
}

#[test]
fn thirty_percent_faults_every_prompt_exactly_once() {
    let mut cfg = MockConfig::new();
    cfg.fault_rate = 0.3;
    cfg.seed = 7;
    cfg.retry_after_s = 0;
    cfg.hang = Duration::from_millis(400);
    let mock = MockServer::start(cfg, 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut m = model(&mock.base_url());
    m.timeout_s = 0.2;
    m.max_attempts = 12;
    let mut o = opts(dir.path());
    o.concurrency = Some(32);
    let ps = prompts(400);
    let out = dir.path().join("out.jsonl");
    let (s, recs) = run(&m, &ps, &out, &o);
    assert_eq!((s.sent, s.failed), (400, 0));
    let map = crate::support::contents(&recs);
    assert_eq!(map.len(), 400);
    for p in &ps {
        assert_eq!(
            map[&(p.id.clone(), 0)].as_deref(),
            Some(expected_content(p).as_str())
        );
    }
    let stats = mock.stats();
    assert!(stats.faults > 60, "{stats:?}");
    assert_eq!(s.requests, stats.requests);
    // A second run sends nothing.
    let (s2, recs2) = run(&m, &ps, &out, &o);
    assert_eq!((s2.sent, s2.requests, s2.resumed), (0, 0, 400));
    assert_eq!(recs2.len(), 400);
    assert_eq!(mock.requests(), stats.requests);
}

#[test]
fn load_is_spread_over_replicas() {
    let mut cfg = MockConfig::new();
    cfg.latency = Duration::from_millis(5);
    let a = MockServer::start(cfg.clone(), 0).unwrap();
    let b = MockServer::start(cfg, 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut m = model(&a.base_url());
    m.base_urls.push(b.base_url());
    let mut o = opts(dir.path());
    o.concurrency = Some(4);
    let (s, _) = run(&m, &prompts(80), &dir.path().join("out.jsonl"), &o);
    assert_eq!(s.sent, 80);
    assert_eq!(a.requests() + b.requests(), 80);
    assert!(
        a.requests() >= 20 && b.requests() >= 20,
        "{} / {}",
        a.requests(),
        b.requests()
    );
}
