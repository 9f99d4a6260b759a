//! One writer per run: two `cargo xtask infer` processes started at once on one responses file, or two
//! `cargo xtask pipeline` runs of one config, send each request once; the second waits for the first, saying so on
//! one line, and then finds everything answered.

use std::time::Duration;

use mock_provider::{MockConfig, MockServer};
use schema::ResponseRecord;

use crate::interrupt::{ifscale_workspace, infer, pipeline, wait, write_prompts};

#[test]
fn two_infers_on_one_responses_file_send_each_request_once() {
    let mut cfg = MockConfig::new();
    cfg.latency = Duration::from_millis(20);
    let mock = MockServer::start(cfg, 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let n = 300;
    write_prompts(&dir.path().join("prompts.jsonl"), n);
    let flags = ["--concurrency", "8"];
    let mut a = infer(dir.path(), &mock.base_url(), "a.log", &flags);
    let mut b = infer(dir.path(), &mock.base_url(), "b.log", &flags);
    let code_a = wait(&mut a, Duration::from_secs(180));
    let code_b = wait(&mut b, Duration::from_secs(180));
    let logs = format!(
        "{}\n---\n{}",
        std::fs::read_to_string(dir.path().join("a.log")).unwrap(),
        std::fs::read_to_string(dir.path().join("b.log")).unwrap()
    );
    assert_eq!((code_a, code_b), (0, 0), "{logs}");
    assert_eq!(mock.requests(), n as u64, "each request once: {logs}");
    let lines: Vec<ResponseRecord> = schema::read_jsonl(&dir.path().join("out.jsonl")).unwrap();
    assert_eq!(lines.len(), n, "one line per prompt: {logs}");
    let waits: Vec<&str> = logs
        .lines()
        .filter(|l| l.contains("Blocking waiting for file lock on"))
        .collect();
    assert_eq!(waits.len(), 1, "{logs}");
    assert!(waits[0].contains(".out.jsonl.lock"), "{logs}");
    assert!(waits[0].contains("held by pid "), "{logs}");
}

#[test]
fn two_pipelines_on_one_run_send_each_request_once() {
    let cfg = MockConfig::new();
    // One run alone: the requests the run needs.
    let alone = MockServer::start(cfg.clone(), 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    ifscale_workspace(dir.path(), &alone);
    let code = wait(
        &mut pipeline(dir.path(), "alone.log"),
        Duration::from_secs(300),
    );
    assert_eq!(code, 0);
    let needed = alone.requests();
    assert!(needed >= 40, "{needed}");

    let mock = MockServer::start(cfg, 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    ifscale_workspace(dir.path(), &mock);
    let mut a = pipeline(dir.path(), "a.log");
    let mut b = pipeline(dir.path(), "b.log");
    let code_a = wait(&mut a, Duration::from_secs(300));
    let code_b = wait(&mut b, Duration::from_secs(300));
    let logs = format!(
        "{}\n---\n{}",
        std::fs::read_to_string(dir.path().join("a.log")).unwrap(),
        std::fs::read_to_string(dir.path().join("b.log")).unwrap()
    );
    assert_eq!((code_a, code_b), (0, 0), "{logs}");
    assert_eq!(mock.requests(), needed, "each request once: {logs}");
    assert_eq!(
        logs.lines()
            .filter(|l| l.contains("Blocking waiting for file lock on")
                && l.contains("runs/stop/.lock"))
            .count(),
        1,
        "{logs}"
    );
    let responses: Vec<ResponseRecord> = schema::read_jsonl(
        &dir.path()
            .join("artifacts/runs/stop/ifscale/models/mock/responses.jsonl"),
    )
    .unwrap();
    let keys: std::collections::BTreeSet<(&str, u32)> = responses
        .iter()
        .map(|r| (r.id.as_str(), r.sample_index))
        .collect();
    assert_eq!(keys.len(), responses.len(), "one line per prompt");
}
