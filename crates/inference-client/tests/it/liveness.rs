//! Dead, slow and stopped: a server restarted in the middle of a run, a base URL where nothing listens, a slow
//! answer on one connection while the others answer, and a run stopped through the client's stop handle.

use std::time::{Duration, Instant};

use inference_client::{Client, Error};
use mock_provider::{Fault, MockConfig, MockServer};
use schema::{ErrorClass, Outcome, ResponseRecord};

use crate::support::{chat, contents, expected_content, model, opts, prompts};

/// Polls `cond` every 20 ms until it holds; panics after `limit` with `what`.
fn wait_for(limit: Duration, what: &str, mut cond: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !cond() {
        assert!(t0.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn start_on(cfg: &MockConfig, port: u16) -> MockServer {
    // The port was just released; a few tries in case the kernel is slow to let it go.
    let t0 = Instant::now();
    loop {
        match MockServer::start(cfg.clone(), port) {
            Ok(m) => return m,
            Err(e) if t0.elapsed() < Duration::from_secs(10) => {
                let _ = e;
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(e) => panic!("cannot restart the mock on port {port}: {e}"),
        }
    }
}

#[test]
fn a_restarted_server_is_back_in_seconds_and_nothing_is_lost_or_sent_twice() {
    let mut cfg = MockConfig::new();
    cfg.latency = Duration::from_millis(100);
    let mock = MockServer::start(cfg.clone(), 0).unwrap();
    let port = mock.addr().port();
    let dir = tempfile::tempdir().unwrap();
    let mut m = model(&mock.base_url());
    // Timeouts far above the outage: resuming must not wait for them.
    m.timeout_s = 120.0;
    m.idle_timeout_s = 60.0;
    m.max_attempts = 10;
    m.retry_base_s = 0.05;
    m.retry_max_s = 0.5;
    let mut o = opts(dir.path());
    o.concurrency = Some(4);
    let ps = prompts(120);
    let out = dir.path().join("o.jsonl");
    let run = {
        let (m, ps, out, o) = (m.clone(), ps.clone(), out.clone(), o.clone());
        std::thread::spawn(move || chat(&m, &ps, &out, &o))
    };
    wait_for(Duration::from_secs(60), "30 answers", || {
        mock.stats().ok >= 30
    });
    let before = mock.stop();
    std::thread::sleep(Duration::from_secs(3));
    let back = Instant::now();
    let mock = start_on(&cfg, port);
    wait_for(
        Duration::from_secs(60),
        "a request after the restart",
        || mock.requests() > 0,
    );
    let resumed = back.elapsed();
    let s = run.join().unwrap().expect("run");
    let after = mock.stop();
    // A replica that answered before is probed again at most 5 s apart (`LONGEST_EJECTION_ANSWERED`; the back-off
    // itself is tested exactly on tokio's paused clock in `limiter.rs`): 10 s is that bound with as much again for a
    // loaded machine.
    assert!(
        resumed < Duration::from_secs(10),
        "resumed {:.1} s after the server came back",
        resumed.as_secs_f64()
    );
    assert_eq!((s.sent, s.failed), (120, 0), "{s:?}");
    assert!(s.ejections >= 1, "{s:?}");
    let records: Vec<ResponseRecord> = schema::read_jsonl(&out).unwrap();
    let got = contents(&records);
    assert_eq!(got.len(), 120);
    for p in &ps {
        assert_eq!(
            got[&(p.id.clone(), 0)].as_deref(),
            Some(expected_content(p).as_str())
        );
    }
    // Each prompt answered exactly once in all: the only answers the server began twice are the streams the stop
    // cut off, each of them an abandoned attempt in the summary.
    assert_eq!(
        before.ok + after.ok,
        120 + s.abandoned,
        "{before:?} {after:?} {s:?}"
    );
    assert!(s.abandoned <= 4, "{s:?}");
}

#[test]
fn a_base_url_where_nothing_listens_ends_in_one_line_naming_it() {
    let dead = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/v1", l.local_addr().unwrap())
    };
    let dir = tempfile::tempdir().unwrap();
    let mut m = model(&dead);
    // How the wait probes and when it ends is tested exactly on tokio's paused clock (`health.rs`); here the real
    // refusal is what counts. The wait is a lower bound; the upper one only catches a wait that never ends.
    m.server_wait_s = Some(1.0);
    let t0 = Instant::now();
    let err = chat(
        &m,
        &prompts(5),
        &dir.path().join("o.jsonl"),
        &opts(dir.path()),
    )
    .unwrap_err();
    let took = t0.elapsed();
    let msg = err.to_string();
    assert!(matches!(err, Error::Unreachable { .. }), "{msg}");
    assert!(!err.is_config(), "{msg}");
    assert!(err.stops_model(), "{msg}");
    assert!(msg.contains(&dead), "{msg}");
    assert!(msg.to_lowercase().contains("refused"), "{msg}");
    assert!(!msg.contains('\n'), "{msg}");
    assert!(
        took >= Duration::from_secs(1) && took < Duration::from_secs(30),
        "{took:?}"
    );
}

#[test]
fn a_slow_answer_on_one_connection_does_not_eject_the_replica_while_others_answer() {
    let mut cfg = MockConfig::new();
    cfg.latency = Duration::from_millis(50);
    cfg.script = vec![Fault::Hang];
    cfg.hang = Duration::from_secs(4);
    let mock = MockServer::start(cfg, 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut m = model(&mock.base_url());
    // The hung request times out (no answer begins within `timeout-s`) long before the mock gives up on it.
    m.timeout_s = 1.0;
    m.idle_timeout_s = 1.0;
    let mut o = opts(dir.path());
    o.concurrency = Some(4);
    let out = dir.path().join("o.jsonl");
    let s = chat(&m, &prompts(60), &out, &o).unwrap();
    assert_eq!((s.sent, s.failed), (60, 0), "{s:?}");
    assert_eq!(
        s.ejections, 0,
        "a timeout while others answer ejected the replica"
    );
    let records: Vec<ResponseRecord> = schema::read_jsonl(&out).unwrap();
    let timed_out: Vec<&ResponseRecord> = records
        .iter()
        .filter(|r| r.attempts[0].error_class == Some(ErrorClass::Timeout))
        .collect();
    assert_eq!(timed_out.len(), 1);
    assert_eq!(timed_out[0].attempts.len(), 2);
    assert!(records.iter().all(|r| r.outcome == Outcome::Ok));
}

#[test]
fn a_stopped_client_writes_what_is_in_flight_and_a_rerun_sends_the_rest_once() {
    let mut cfg = MockConfig::new();
    cfg.latency = Duration::from_millis(300);
    let mock = MockServer::start(cfg, 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let m = model(&mock.base_url());
    let mut m = m;
    m.timeout_s = 60.0;
    let mut o = opts(dir.path());
    o.concurrency = Some(8);
    let ps = prompts(100);
    let out = dir.path().join("o.jsonl");
    let client = Client::new(o.clone()).unwrap();
    let stop = client.stop_handle();
    let run = {
        let (m, ps, out) = (m.clone(), ps.clone(), out.clone());
        std::thread::spawn(move || {
            let s = client.chat(&m, &ps, &out);
            (s, client.unfinished())
        })
    };
    wait_for(Duration::from_secs(60), "16 requests", || {
        mock.requests() >= 16
    });
    let in_flight = stop.stop_sending();
    assert!((1..=8).contains(&in_flight), "{in_flight}");
    let (s, unfinished) = run.join().unwrap();
    let s = s.expect("a stopped run returns normally");
    assert!(s.interrupted > 0, "{s:?}");
    assert_eq!(unfinished, s.interrupted + s.failed, "{s:?}");
    assert_eq!(s.failed, 0, "{s:?}");
    let first: Vec<ResponseRecord> = schema::read_jsonl(&out).unwrap();
    // Every request the mock received was answered and written, the ones in flight at the stop included.
    assert_eq!(first.len() as u64, mock.stats().ok);
    assert_eq!(mock.requests(), mock.stats().ok);
    assert_eq!(first.len() + s.interrupted, 100, "{s:?}");
    // The rerun sends the rest, each once.
    let s = chat(&m, &ps, &out, &o).unwrap();
    assert_eq!(s.resumed, first.len(), "{s:?}");
    assert_eq!(mock.requests(), 100);
    let all: Vec<ResponseRecord> = schema::read_jsonl(&out).unwrap();
    assert_eq!(contents(&all).len(), 100);
}
