//! SIGKILL mid-run, rerun: every prompt exactly once, with the content an uninterrupted run gives.

use std::process::Command;
use std::time::{Duration, Instant};

use mock_provider::{MockConfig, MockServer};

use crate::support::{contents, model, opts, prompts, run};

#[test]
fn kill_9_then_rerun_gives_the_uninterrupted_output() {
    let mut cfg = MockConfig::new();
    cfg.latency = Duration::from_millis(20);
    let mock = MockServer::start(cfg, 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ps = prompts(400);
    let prompts_path = dir.path().join("prompts.jsonl");
    schema::write_jsonl_atomic(&prompts_path, ps.iter()).unwrap();
    let out = dir.path().join("out.jsonl");
    let cache = dir.path().join("cache.sqlite");

    let child_run = || {
        Command::new(env!("CARGO_BIN_EXE_inference-client-run"))
            .arg(&prompts_path)
            .arg(&out)
            .arg(mock.base_url())
            .arg("mock-model")
            .arg(&cache)
            .arg("8")
            .spawn()
            .unwrap()
    };
    let mut child = child_run();
    let start = Instant::now();
    loop {
        let lines = std::fs::read(&out)
            .map(|b| b.iter().filter(|&&c| c == b'\n').count())
            .unwrap_or(0);
        if lines >= 60 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the child made no progress"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL on Unix.
    child.wait().unwrap();
    let partial = schema::read_jsonl::<schema::ResponseRecord>(&out).unwrap();
    assert!(
        partial.len() < ps.len(),
        "the child finished before it was killed"
    );
    let sent_before = mock.requests();

    let status = child_run().wait().unwrap();
    assert!(status.success());
    let after = schema::read_jsonl::<schema::ResponseRecord>(&out).unwrap();
    let got = contents(&after); // Panics on a duplicate.
    assert_eq!(got.len(), ps.len());
    // The rerun sent only what the killed run had not finished (plus at most its in-flight requests).
    assert!(mock.requests() - sent_before <= (ps.len() - partial.len()) as u64);

    let clean_dir = tempfile::tempdir().unwrap();
    let (_, clean) = run(
        &model(&mock.base_url()),
        &ps,
        &clean_dir.path().join("out.jsonl"),
        &opts(clean_dir.path()),
    );
    assert_eq!(got, contents(&clean));
}
