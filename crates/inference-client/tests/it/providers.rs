//! The client against the mock's provider emulation (`mock_provider`, module `emulate`): request styles,
//! providers' error shapes, fatal answers, retry hints, stalled bodies, provenance, dead replicas and the budget.

use inference_client::{Client, Error, ModelConfig, TokenLimitField};
use mock_provider::{MockConfig, MockServer};
use schema::{ErrorClass, Outcome, ResponseRecord};

use crate::support::{chat, model, opts, prompts, run};

fn emulated(mock: &MockServer, id: &str) -> ModelConfig {
    let mut m = model(&mock.base_url());
    m.model_id = id.to_owned();
    m.name = id.to_owned();
    m
}

#[test]
fn an_o_series_model_needs_its_request_style_and_a_repeated_400_stops_it() {
    let mock = MockServer::start(MockConfig::new(), 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    // As a new user would declare it: max_tokens and a temperature. Every request gets the same 400; after five
    // the model's requests stop, with the provider's message.
    let mut naive = emulated(&mock, "o-series");
    naive.max_tokens = Some(2000);
    naive.temperature = Some(0.0);
    let mut o = opts(dir.path());
    o.concurrency = Some(1);
    let err = chat(&naive, &prompts(20), &dir.path().join("naive.jsonl"), &o).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, Error::FailFast { status: 400, .. }), "{msg}");
    assert!(
        msg.contains("max_completion_tokens") && msg.contains("o-series"),
        "{msg}"
    );
    assert_eq!(
        mock.requests(),
        5,
        "no request after the fifth identical 400"
    );
    // Declared with its style, the same prompts are answered; reasoning tokens are kept apart.
    let mut styled = naive.clone();
    styled.token_limit_field = TokenLimitField::MaxCompletionTokens;
    styled.sampling = false;
    let (s, records) = run(
        &styled,
        &prompts(3),
        &dir.path().join("styled.jsonl"),
        &opts(dir.path()),
    );
    assert_eq!((s.sent, s.failed), (3, 0));
    for r in &records {
        assert_eq!(r.outcome, Outcome::Ok);
        assert_eq!(r.usage.reasoning_tokens, Some(400));
        assert_eq!(r.usage.visible_tokens(), 10);
    }
    // A budget the reasoning uses up: empty content, truncated, never an answer.
    styled.max_tokens = Some(300);
    let (_, cut) = run(
        &styled,
        &prompts(1),
        &dir.path().join("cut.jsonl"),
        &opts(dir.path()),
    );
    assert_eq!(cut[0].outcome, Outcome::Truncated);
    assert_eq!(cut[0].content.as_deref(), Some(""));
}

#[test]
fn limits_are_checked_before_anything_is_sent() {
    let mock = MockServer::start(MockConfig::new(), 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut m = emulated(&mock, "short-context");
    m.max_tokens = Some(200);
    m.context_window = Some(512);
    let long = vec![crate::support::prompt("long", &"word ".repeat(400))];
    let client = Client::new(opts(dir.path())).unwrap();
    let err = client.dry_run(&m, &long).unwrap_err();
    assert!(err.is_config(), "{err}");
    assert!(
        err.to_string().contains("512-token context window"),
        "{err}"
    );
    let err = client
        .chat(&m, &long, &dir.path().join("o.jsonl"))
        .unwrap_err();
    assert!(err.to_string().contains("\"long\""), "{err}");
    m.output_cap = Some(100);
    let err = client
        .chat(&m, &prompts(1), &dir.path().join("o.jsonl"))
        .unwrap_err();
    assert!(err.to_string().contains("output cap of 100"), "{err}");
    assert_eq!(mock.requests(), 0);
}

#[test]
fn a_thinking_model_is_split_and_can_be_told_not_to_think() {
    let mock = MockServer::start(MockConfig::new(), 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut m = emulated(&mock, "vllm-thinker");
    let (_, r) = run(
        &m,
        &prompts(1),
        &dir.path().join("a.jsonl"),
        &opts(dir.path()),
    );
    assert_eq!(
        r[0].reasoning.as_deref(),
        Some("Let me think about this carefully.")
    );
    assert_eq!(r[0].content.as_deref(), Some("Reply to: question 0"));
    m.extra_body.insert(
        "chat_template_kwargs".into(),
        serde_json::json!({"enable_thinking": false}),
    );
    let (_, r) = run(
        &m,
        &prompts(1),
        &dir.path().join("b.jsonl"),
        &opts(dir.path()),
    );
    assert_eq!(r[0].reasoning, None);
}

#[test]
fn provider_errors_inside_a_200_are_retried_and_the_provider_is_recorded() {
    let mock = MockServer::start(MockConfig::new(), 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let m = emulated(&mock, "openrouter-flaky");
    let (s, r) = run(
        &m,
        &prompts(2),
        &dir.path().join("o.jsonl"),
        &opts(dir.path()),
    );
    assert_eq!((s.failed, s.requests), (0, 6));
    for rec in &r {
        let classes: Vec<_> = rec.attempts.iter().map(|a| a.error_class).collect();
        assert_eq!(
            classes,
            [
                Some(ErrorClass::ServerError),
                Some(ErrorClass::ProviderError),
                None
            ]
        );
        let served = rec.served.as_ref().unwrap();
        assert_eq!(served.provider.as_deref(), Some("Emulated Provider"));
        assert_eq!(rec.usage.cost_usd, Some(0.001));
    }
    assert!((s.spent_usd - 0.002).abs() < 1e-12);
    // The failed answer that still reported usage (20 prompt tokens) is paid for too: at 1 000 USD per million
    // input tokens, 0.02 USD per prompt on top of the provider-reported 0.001.
    let mut priced = m.clone();
    priced.price_in_per_mtok = 1000.0;
    let (s, _) = run(
        &priced,
        &prompts(4)[2..],
        &dir.path().join("p.jsonl"),
        &opts(dir.path()),
    );
    assert!((s.spent_usd - 2.0 * 0.021).abs() < 1e-9, "{}", s.spent_usd);
}

#[test]
fn out_of_credits_stops_the_run_at_once() {
    let mock = MockServer::start(MockConfig::new(), 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let m = emulated(&mock, "credits-6");
    let mut o = opts(dir.path());
    o.concurrency = Some(2);
    let err = chat(&m, &prompts(40), &dir.path().join("o.jsonl"), &o).unwrap_err();
    assert!(matches!(err, Error::FailFast { status: 402, .. }), "{err}");
    assert!(err.to_string().contains("Insufficient credits"), "{err}");
    // Six answers, and no more than the requests already in flight after the first 402.
    assert!(mock.requests() <= 6 + 2, "{} requests", mock.requests());
    // The answered prompts are on file; a rerun does not pay for them again.
    let done: Vec<ResponseRecord> = schema::read_jsonl(&dir.path().join("o.jsonl")).unwrap();
    assert_eq!(done.iter().filter(|r| r.outcome == Outcome::Ok).count(), 6);
}

#[test]
fn retry_after_ms_is_honoured_over_retry_after() {
    let mock = MockServer::start(MockConfig::new(), 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let m = emulated(&mock, "rate-limited-ms");
    let (s, r) = run(
        &m,
        &prompts(1),
        &dir.path().join("o.jsonl"),
        &opts(dir.path()),
    );
    assert_eq!(s.failed, 0);
    let first = &r[0].attempts[0];
    assert_eq!(first.error_class, Some(ErrorClass::RateLimited));
    // The wait the client planned (not one it measured, so the bound holds on a loaded machine): the
    // `retry-after-ms` hint, not the 30 s `retry-after`.
    assert!(
        (0.05..1.0).contains(&first.delay_s),
        "the 30 s retry-after was used: {}",
        first.delay_s
    );
}

#[test]
fn a_body_that_never_comes_ends_at_the_idle_timeout() {
    let mock = MockServer::start(MockConfig::new(), 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut m = emulated(&mock, "stall");
    m.timeout_s = 60.0;
    m.idle_timeout_s = 0.3;
    let (s, r) = run(
        &m,
        &prompts(1),
        &dir.path().join("o.jsonl"),
        &opts(dir.path()),
    );
    assert_eq!(s.failed, 0);
    assert_eq!(r[0].attempts.len(), 2);
    let stalled = &r[0].attempts[0];
    assert_eq!(stalled.error_class, Some(ErrorClass::Timeout));
    // The idle timer ended it, not the 60 s request timeout: it lasted at least the idle timeout and less than the
    // request timeout (a machine would have to stall the client for a minute to break the upper bound).
    assert!(
        stalled.latency_s >= 0.3 && stalled.latency_s < m.timeout_s,
        "{stalled:?}"
    );
}

#[test]
fn the_served_model_and_replica_are_recorded() {
    let mock = MockServer::start(MockConfig::new(), 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let m = emulated(&mock, "alias");
    let (_, r) = run(
        &m,
        &prompts(1),
        &dir.path().join("o.jsonl"),
        &opts(dir.path()),
    );
    let served = r[0].served.as_ref().unwrap();
    assert_eq!(served.model.as_deref(), Some("served-elsewhere-v2"));
    assert_eq!(served.system_fingerprint.as_deref(), Some("fp_emu"));
    assert_eq!(served.replica, Some(0));
    assert_eq!(served.request_id.as_deref(), Some("emu-1"));
}

#[test]
fn a_dead_replica_is_ejected() {
    let mock = MockServer::start(MockConfig::new(), 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    // A port with nothing listening: every connection is refused.
    let dead = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/v1", l.local_addr().unwrap())
    };
    let mut m = model(&mock.base_url());
    m.base_urls.push(dead);
    let (s, r) = run(
        &m,
        &prompts(300),
        &dir.path().join("o.jsonl"),
        &opts(dir.path()),
    );
    assert_eq!((s.sent, s.failed), (300, 0));
    let refused: usize = r
        .iter()
        .flat_map(|x| &x.attempts)
        .filter(|a| a.error_class == Some(ErrorClass::Connection))
        .count();
    assert!(refused <= 20, "{refused} requests went to the dead replica");
    assert!(
        r.iter()
            .all(|x| x.served.as_ref().unwrap().replica == Some(0))
    );
}

#[test]
fn a_budget_ledger_carries_the_cap_across_clients() {
    let mock = MockServer::start(MockConfig::new(), 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let m = emulated(&mock, "alias");
    let mut o = opts(dir.path());
    o.ledger = Some(dir.path().join("spend.jsonl"));
    o.max_cost_usd = Some(0.006);
    let mut capped = m.clone();
    capped.max_tokens = Some(10);
    // At 100 USD per million input tokens, the worst case of one request is its 14 estimated input tokens =
    // 0.0014 USD; the server then reports 20 prompt tokens, so each answer costs 0.002 USD.
    capped.price_in_per_mtok = 100.0;
    let first = Client::new(o.clone()).unwrap();
    let s = first
        .chat(&capped, &prompts(2), &dir.path().join("a.jsonl"))
        .unwrap();
    assert!(
        (first.spent_usd() - 0.004).abs() < 1e-9,
        "{}",
        first.spent_usd()
    );
    assert_eq!(s.skipped_for_cost, 0);
    // A new client (a rerun) starts from the ledger: 0.004 spent, so one more request fits under the cap.
    let rest = prompts(10)[2..].to_vec();
    let second = Client::new(o.clone()).unwrap();
    assert!((second.spent_usd() - 0.004).abs() < 1e-9);
    let s = second
        .chat(&capped, &rest, &dir.path().join("b.jsonl"))
        .unwrap();
    assert_eq!((s.sent, s.skipped_for_cost), (1, 7), "{s:?}");
    assert!((second.spent_usd() - 0.006).abs() < 1e-9);
    // The same cap again: nothing more is sent.
    let again = Client::new(o.clone()).unwrap();
    let s = again
        .chat(&capped, &rest, &dir.path().join("b.jsonl"))
        .unwrap();
    assert_eq!(s.sent, 0, "{s:?}");
    // With a higher cap the next rerun continues.
    o.max_cost_usd = Some(1.0);
    let third = Client::new(o).unwrap();
    let s = third
        .chat(&capped, &rest, &dir.path().join("b.jsonl"))
        .unwrap();
    assert_eq!((s.resumed, s.sent, s.skipped_for_cost), (1, 7, 0), "{s:?}");
}

#[test]
fn a_401_without_a_key_says_how_to_name_one() {
    let mut cfg = MockConfig::new();
    cfg.script = vec![mock_provider::Fault::Unauthorized];
    let mock = MockServer::start(cfg, 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let err = chat(
        &model(&mock.base_url()),
        &prompts(1),
        &dir.path().join("o.jsonl"),
        &opts(dir.path()),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("no API key was sent") && err.contains("api-key-env"),
        "{err}"
    );
}

#[test]
fn custom_headers_are_sent_and_secret_ones_come_from_the_environment() {
    let mock = MockServer::start(MockConfig::new(), 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let var = "IFSTRESS_TEST_HEADER_SECRET";
    // The secret reaches the client through its options, not the process's environment.
    let opts = |dir: &std::path::Path| inference_client::RunOptions {
        env: inference_client::Env::fixed([(var, "azure-secret-value")]),
        ..opts(dir)
    };
    let mut m = emulated(&mock, "echo-headers");
    m.headers.insert(
        "X-Title".to_owned(),
        inference_client::HeaderValue::Text("ifstress".to_owned()),
    );
    m.headers.insert(
        "api-key".to_owned(),
        inference_client::HeaderValue::Env {
            env: var.to_owned(),
        },
    );
    let (_, r) = run(
        &m,
        &prompts(1),
        &dir.path().join("o.jsonl"),
        &opts(dir.path()),
    );
    let content = r[0].content.as_deref().unwrap();
    assert!(content.contains("x-title=ifstress"), "{content}");
    assert!(content.contains("api-key=azure-secret-value"), "{content}");
    // A header variable that is not set is a config error naming it, before anything is sent.
    m.headers.insert(
        "api-key".to_owned(),
        inference_client::HeaderValue::Env {
            env: "IFSTRESS_TEST_HEADER_UNSET".to_owned(),
        },
    );
    let sent = mock.requests();
    let err = chat(
        &m,
        &prompts(2),
        &dir.path().join("p.jsonl"),
        &opts(dir.path()),
    )
    .unwrap_err();
    assert!(
        err.is_config() && err.to_string().contains("IFSTRESS_TEST_HEADER_UNSET"),
        "{err}"
    );
    assert_eq!(mock.requests(), sent);
}
