//! Requests in flight (`RunSummary::in_flight`): against a mock that answers after 50 ms, the client never exceeds
//! its concurrency and its figures add up.
//!
//! Every bound here holds on a loaded machine: exact counts, the invariants of the figures (nothing above the cap,
//! parts within wholes), and lower bounds that causality gives (a request lasts at least the mock's latency; a
//! prompt waits for a slot until a request of the round before has ended). How full the client keeps its cap depends
//! on the CPU it gets, so it is not asserted here: the tracker's arithmetic is checked exactly on a hand-moved clock
//! (`in_flight.rs`'s unit tests), and the fill on a real run is measured by `cargo xtask bench client`.

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
    assert_eq!((f.calls, f.requests, f.cap), (1, 64, 8), "{f:?}");
    assert!(f.peak >= 1 && f.peak <= 8, "never above the cap: {f:?}");
    // Both clocks start with the call; the in-flight figures are taken after the summary's.
    assert!(f.wall_s >= s.wall_s, "{f:?} vs {s:?}");
    // Each request took at least the mock's latency, so at least 64 × 50 ms were spent in flight.
    let latency = LATENCY.as_secs_f64();
    assert!(f.busy_s >= 64.0 * latency, "{f:?}");
    assert!(f.mean() <= f.peak as f64 + 1e-9, "{f:?}");
    // 64 prompts through 8 slots: the last takes a slot once 56 requests have been answered, 7 of them one after
    // another in one slot, so prompts waited at least 7 latencies, and the requests in flight meanwhile add up to
    // at least 56 latencies (6 and 48 asserted: a round of margin).
    assert!(
        f.backlog_s >= 6.0 * latency && f.backlog_s <= f.wall_s,
        "{f:?}"
    );
    assert!(
        f.backlog_busy_s >= 48.0 * latency && f.backlog_busy_s <= f.backlog_capacity_s + 1e-6,
        "{f:?}"
    );
    // Saturated time is a part of the time prompts waited.
    assert!(f.saturated_s <= f.backlog_s, "{f:?}");
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
    let started = std::time::Instant::now();
    let s = client.chat(&m, &prompts(10), &out).unwrap();
    let f = s.in_flight.expect("requests were sent");
    assert_eq!((f.requests, f.cap), (10, 32), "{f:?}");
    assert!(f.peak >= 1 && f.peak <= 10, "{f:?}");
    // Ten prompts never fill 32 slots.
    assert_eq!(f.saturated_s, 0.0, "{f:?}");
    assert!(f.busy_s >= 10.0 * LATENCY.as_secs_f64(), "{f:?}");
    assert!(f.mean() <= f.peak as f64 + 1e-9, "{f:?}");
    assert!(f.fill() <= 10.0 / 32.0 + 1e-9, "{f:?}");

    // A second call: 5 new prompts, the 10 others answered on file. The client sums both calls until taken.
    let more = prompts(15);
    let t = client.chat(&m, &more, &out).unwrap();
    let both_calls_s = started.elapsed().as_secs_f64();
    assert_eq!((t.resumed, t.sent), (10, 5));
    let g = t.in_flight.expect("requests were sent");
    assert_eq!(g.requests, 5, "{g:?}");
    assert!(g.peak >= 1 && g.peak <= 5, "{g:?}");
    let sum = client.take_in_flight().expect("two calls sent requests");
    let mut expected = f.clone();
    expected.add(&g);
    // The stage's span joins the calls': from the first call's first request until the second handed out its last
    // prompt, the time between the calls included; every request of the first call lies within it, and it lies
    // within the time this test spent in the two calls.
    assert!(
        (sum.stage_span_busy_s - (f.busy_s + g.backlog_busy_s)).abs() < 1e-9,
        "{sum:?}"
    );
    assert!(
        sum.stage_span_s >= LATENCY.as_secs_f64() && sum.stage_span_s <= both_calls_s,
        "{sum:?}"
    );
    assert!(
        sum.stage_fill() > 0.0 && sum.stage_fill() <= 10.0 / 32.0 + 1e-9,
        "{sum:?}"
    );
    expected.stage_span_s = sum.stage_span_s;
    expected.stage_span_busy_s = sum.stage_span_busy_s;
    assert_eq!(sum, expected);
    assert_eq!(
        (sum.calls, sum.requests, sum.peak),
        (2, 15, f.peak.max(g.peak))
    );
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
    assert_eq!((f.requests, f.cap), (24, 6), "{f:?}");
    assert!(f.peak >= 1 && f.peak <= 6, "{f:?}");
    assert_eq!(a.requests() + b.requests(), 24);
    // 24 prompts through 6 slots: the last takes a slot once 18 requests have been answered, 3 of them one after
    // another in one slot (2 rounds and 12 requests asserted: a round of margin).
    let latency = LATENCY.as_secs_f64();
    assert!(f.backlog_s >= 2.0 * latency, "{f:?}");
    assert!(
        f.backlog_busy_s >= 12.0 * latency && f.backlog_busy_s <= f.backlog_capacity_s + 1e-6,
        "{f:?}"
    );
    assert!(f.saturated_s <= f.backlog_s, "{f:?}");
}
