//! Requests in flight (`RunSummary::in_flight`): against a mock that answers after 50 ms, the client keeps its
//! concurrency full while prompts wait, never exceeds it, and says so in numbers.

use std::time::Duration;

use inference_client::{Cache, Client, InFlight};
use mock_provider::{MockConfig, MockServer};

use crate::support::{model, opts, prompts, run};

const LATENCY: Duration = Duration::from_millis(50);

/// Options with concurrency `c` and a cache already created (creating the SQLite file takes about 0.1 s, which
/// would count as the call's preparation and dilute the sending these tests look at).
fn options(dir: &std::path::Path, c: usize) -> inference_client::RunOptions {
    let mut o = opts(dir);
    o.concurrency = Some(c);
    drop(Cache::open(&o.cache_path).unwrap());
    o
}

fn slow_mock() -> MockServer {
    let mut cfg = MockConfig::new();
    cfg.latency = LATENCY;
    MockServer::start(cfg, 0).unwrap()
}

#[test]
fn the_client_keeps_its_concurrency_full_while_prompts_wait() {
    let mock = slow_mock();
    let dir = tempfile::tempdir().unwrap();
    let o = options(dir.path(), 8);
    let (s, recs) = run(
        &model(&mock.base_url()),
        &prompts(64),
        &dir.path().join("out.jsonl"),
        &o,
    );
    assert_eq!((recs.len(), s.sent, mock.requests()), (64, 64, 64));
    let f = s.in_flight.clone().expect("requests were sent");
    assert_eq!((f.calls, f.requests, f.cap, f.peak), (1, 64, 8, 8), "{f:?}");
    assert!((f.wall_s - s.wall_s).abs() < 0.01, "{f:?} vs {s:?}");
    // Each request took at least the mock's latency, so at least 64 × 50 ms were spent in flight.
    assert!(f.busy_s >= 64.0 * LATENCY.as_secs_f64(), "{f:?}");
    // 64 requests 8 at a time: eight rounds of 50 ms, the cap full for the first seven (prompts waiting).
    assert!(
        f.mean() > 6.0 && f.mean() <= 8.0,
        "mean {}: {f:?}",
        f.mean()
    );
    assert!(f.fill() > 0.75, "{f:?}");
    assert!(
        f.backlog_s >= 6.0 * LATENCY.as_secs_f64() && f.backlog_s < f.wall_s,
        "{f:?}"
    );
    // While prompts waited, the cap was full but for the moments between a reply and the next request.
    assert!(f.backlog_mean() > 7.0 && f.backlog_mean() <= 8.0, "{f:?}");
    assert!(f.saturated_s > 0.75 * f.backlog_s, "{f:?}");
    assert!(f.saturated_share() > 0.6, "{f:?}");
    assert!(f.unsaturated_backlog_share() < 0.2, "{f:?}");
    assert!(f.other_wait_share() < 0.3, "{f:?}");
    assert_eq!(f.budget_wait_s, 0.0);
}

#[test]
fn a_cap_above_the_prompts_is_never_full_and_calls_add_up() {
    let mock = slow_mock();
    let dir = tempfile::tempdir().unwrap();
    let o = options(dir.path(), 32);
    let client = Client::new(o).unwrap();
    let m = model(&mock.base_url());
    let out = dir.path().join("out.jsonl");
    let s = client.chat(&m, &prompts(10), &out).unwrap();
    let f = s.in_flight.expect("requests were sent");
    assert_eq!((f.requests, f.cap, f.peak), (10, 32, 10), "{f:?}");
    assert_eq!(f.saturated_s, 0.0, "{f:?}");
    // Every prompt went out at once: no prompt waited for a slot.
    assert!(f.backlog_s < LATENCY.as_secs_f64(), "{f:?}");
    assert!(f.busy_s >= 10.0 * LATENCY.as_secs_f64(), "{f:?}");
    assert!(f.mean() > 3.0 && f.mean() <= 10.0, "{f:?}");
    assert!(f.fill() < 10.0 / 32.0, "{f:?}");

    // A second call: 5 new prompts, the 10 others answered on file. The client sums both calls until taken.
    let more = prompts(15);
    let t = client.chat(&m, &more, &out).unwrap();
    assert_eq!((t.resumed, t.sent), (10, 5));
    let g = t.in_flight.expect("requests were sent");
    assert_eq!((g.requests, g.peak), (5, 5), "{g:?}");
    let sum = client.take_in_flight().expect("two calls sent requests");
    let mut expected = f.clone();
    expected.add(&g);
    // The stage's span joins the calls': from the first call's first request until the second handed out its last
    // prompt, the time between the calls included; every request of the first call lies within it.
    assert!(
        (sum.stage_span_busy_s - (f.busy_s + g.backlog_busy_s)).abs() < 1e-9,
        "{sum:?}"
    );
    assert!(
        sum.stage_span_s >= LATENCY.as_secs_f64() && sum.stage_span_s < f.wall_s + g.wall_s + 1.0,
        "{sum:?}"
    );
    assert!(
        sum.stage_fill() > 0.0 && sum.stage_fill() < 10.0 / 32.0,
        "{sum:?}"
    );
    expected.stage_span_s = sum.stage_span_s;
    expected.stage_span_busy_s = sum.stage_span_busy_s;
    assert_eq!(sum, expected);
    assert_eq!((sum.calls, sum.requests, sum.peak), (2, 15, 10));
    assert_eq!(client.take_in_flight(), None, "taken");

    // Everything answered: nothing is sent, nothing counted.
    let u = client.chat(&m, &more, &out).unwrap();
    assert_eq!(u.in_flight, None);
    assert_eq!(client.take_in_flight(), None);
}

#[test]
fn the_cap_is_the_concurrency_times_the_base_urls() {
    let (a, b) = (slow_mock(), slow_mock());
    let dir = tempfile::tempdir().unwrap();
    let o = options(dir.path(), 3);
    let mut m = model(&a.base_url());
    m.base_urls.push(b.base_url());
    let (s, _) = run(&m, &prompts(24), &dir.path().join("out.jsonl"), &o);
    let f: InFlight = s.in_flight.expect("requests were sent");
    assert_eq!((f.requests, f.cap, f.peak), (24, 6, 6), "{f:?}");
    assert_eq!(a.requests() + b.requests(), 24);
    assert!(f.mean() > 4.0, "{f:?}");
    assert!(f.saturated_s > 0.8 * f.backlog_s, "{f:?}");
    assert!(f.backlog_fill() > 0.8, "{f:?}");
}
