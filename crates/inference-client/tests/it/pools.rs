//! What one `Client` keeps from call to call: a replica that is dead for the whole run is probed with a growing
//! back-off across calls (chunks), not found again in every call; a learned limit and the connection pool carry
//! over too.

use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use inference_client::Client;
use mock_provider::{MockConfig, MockServer};
use schema::ResponseRecord;

use crate::support::{model, opts, prompts};

/// A replica that accepts TCP connections and closes them at once (every request on it fails as a broken
/// connection), counting the connections; stops when the returned flag is set.
fn dead_replica() -> (String, Arc<AtomicUsize>, Arc<AtomicBool>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let count = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let (c, d) = (Arc::clone(&count), Arc::clone(&done));
    std::thread::spawn(move || {
        while !d.load(Ordering::Relaxed) {
            match listener.accept() {
                Ok((stream, _)) => {
                    c.fetch_add(1, Ordering::Relaxed);
                    drop(stream);
                }
                Err(_) => std::thread::sleep(Duration::from_millis(2)),
            }
        }
    });
    (url, count, done)
}

#[test]
fn a_dead_replica_is_probed_with_back_off_across_calls_not_found_again_in_each() {
    let mut cfg = MockConfig::new();
    cfg.latency = Duration::from_millis(40);
    let mock = MockServer::start(cfg, 0).unwrap();
    let (dead, connections, done) = dead_replica();
    let mut m = model(&mock.base_url());
    m.base_urls.push(dead);
    m.max_concurrency = 4;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.jsonl");
    let client = Client::new(opts(dir.path())).unwrap();
    let all = prompts(400);
    let chunks = 20;
    let t0 = Instant::now();
    let mut ejections = 0;
    for chunk in all.chunks(all.len() / chunks) {
        let s = client.chat(&m, chunk, &out).unwrap();
        assert_eq!(s.failed, 0, "{s:?}");
        ejections += s.ejections;
    }
    let took = t0.elapsed().as_secs_f64();
    done.store(true, Ordering::Relaxed);
    let n = connections.load(Ordering::Relaxed);
    // Every prompt answered once, by the live replica.
    let lines: Vec<ResponseRecord> = schema::read_jsonl(&out).unwrap();
    assert_eq!(lines.len(), all.len());
    assert_eq!(mock.requests(), all.len() as u64);
    // Found again in every call, the dead replica would cost each call a check (a TCP connection and
    // `GET /models`) and the requests sent to it before its ejection: at least 3 connections per call. Kept
    // across calls, it costs the first check and its first requests (up to 4 at once), then one probe and one
    // request on probation after each back-off (1 s, 2 s, 4 s, …): about 2 per doubling of the run's time.
    let doublings = took.log2().ceil().max(0.0) as usize + 1;
    assert!(
        n < 3 * chunks && n <= 6 + 2 * doublings,
        "{n} connections to the dead replica in {took:.1} s over {chunks} calls ({ejections} ejections)"
    );
    assert!(
        ejections >= 1 && (ejections as usize) <= 1 + doublings,
        "{ejections}"
    );
}
