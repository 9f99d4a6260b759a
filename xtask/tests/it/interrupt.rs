//! `cargo xtask infer` (the built binary, as a child process) stopped with Ctrl-C keeps what is paid for and a
//! rerun sends each request once in all; pointed at a base URL where nothing listens, it ends with one error line
//! naming the URL within the configured bound and exits 1; `cargo xtask pipeline` stopped in a model stage exits
//! 3 and its rerun sends no request twice.

use crate::repo;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mock_provider::{MockConfig, MockServer};
use schema::{Message, PromptRecord, ResponseRecord};

pub(crate) fn write_prompts(path: &Path, n: usize) {
    let prompts: Vec<PromptRecord> = (0..n)
        .map(|i| PromptRecord {
            id: format!("p{i}"),
            messages: vec![Message::user(format!("question {i}"))],
            sample_index: 0,
            params: Default::default(),
            extra: Default::default(),
        })
        .collect();
    schema::write_jsonl_atomic(path, prompts.iter()).unwrap();
}

/// `xtask infer` in `dir` against `base_url`, its stderr into `log`.
pub(crate) fn infer(dir: &Path, base_url: &str, log: &str, flags: &[&str]) -> Child {
    let stderr = std::fs::File::create(dir.join(log)).unwrap();
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .current_dir(dir)
        .args([
            "infer",
            "--prompts",
            "prompts.jsonl",
            "--out",
            "out.jsonl",
            "--cache",
            "cache.sqlite",
            "--base-url",
            base_url,
            "--model-id",
            "mock",
            "--no-progress",
        ])
        .args(flags)
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .unwrap()
}

/// Waits for the child to exit (killing it after `limit`); its exit code.
pub(crate) fn wait(child: &mut Child, limit: Duration) -> i32 {
    let t0 = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code().unwrap_or(-1);
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("xtask infer did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn ctrl_c_keeps_the_answers_in_flight_and_a_rerun_sends_each_request_once() {
    let mut cfg = MockConfig::new();
    cfg.latency = Duration::from_millis(300);
    let mock = MockServer::start(cfg, 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let n = 200;
    write_prompts(&dir.path().join("prompts.jsonl"), n);
    let mut child = infer(
        dir.path(),
        &mock.base_url(),
        "first.log",
        &["--concurrency", "8"],
    );
    let t0 = Instant::now();
    while mock.requests() < 24 {
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "no requests arrived"
        );
        if let Some(status) = child.try_wait().unwrap() {
            panic!("xtask infer ended early: {status}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: sends a signal to our own child process.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let code = wait(&mut child, Duration::from_secs(120));
    let log = std::fs::read_to_string(dir.path().join("first.log")).unwrap();
    assert_eq!(code, 3, "{log}");
    let stopping: Vec<&str> = log.lines().filter(|l| l.contains("Ctrl-C again")).collect();
    assert_eq!(stopping.len(), 1, "{log}");
    assert!(stopping[0].contains("in flight"), "{log}");
    let first: Vec<ResponseRecord> = schema::read_jsonl(&dir.path().join("out.jsonl")).unwrap();
    assert!(first.len() < n, "the run was not interrupted: {log}");
    // The requests in flight at the signal were answered and written: every request received has its line.
    assert_eq!(first.len() as u64, mock.requests(), "{log}");

    let mut child = infer(
        dir.path(),
        &mock.base_url(),
        "rerun.log",
        &["--concurrency", "8"],
    );
    let code = wait(&mut child, Duration::from_secs(180));
    let log = std::fs::read_to_string(dir.path().join("rerun.log")).unwrap();
    assert_eq!(code, 0, "{log}");
    assert_eq!(mock.requests(), n as u64, "each request once in all");
    let all: Vec<ResponseRecord> = schema::read_jsonl(&dir.path().join("out.jsonl")).unwrap();
    assert_eq!(all.len(), n);
    let ids: std::collections::BTreeSet<&str> = all.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids.len(), n);
}

#[test]
fn a_base_url_where_nothing_listens_exits_1_with_one_line_naming_it() {
    let dead = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/v1", l.local_addr().unwrap())
    };
    let dir = tempfile::tempdir().unwrap();
    write_prompts(&dir.path().join("prompts.jsonl"), 3);
    let t0 = Instant::now();
    let mut child = infer(dir.path(), &dead, "infer.log", &["--server-wait-s", "3"]);
    let code = wait(&mut child, Duration::from_secs(120));
    let took = t0.elapsed();
    let log = std::fs::read_to_string(dir.path().join("infer.log")).unwrap();
    assert_eq!(code, 1, "{log}");
    let errors: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("no endpoint answered"))
        .collect();
    assert_eq!(errors.len(), 1, "{log}");
    assert!(errors[0].contains(&dead), "{log}");
    assert!(errors[0].to_lowercase().contains("refused"), "{log}");
    assert!(log.lines().any(|l| l.contains("waiting for one")), "{log}");
    assert!(took < Duration::from_secs(60), "{took:?}");
}

/// An IFScale-only pipeline workspace in `dir` whose one model is `mock`: 40 prompts, 4 in flight at a time.
pub(crate) fn ifscale_workspace(dir: &Path, mock: &MockServer) {
    std::fs::write(
        dir.join("models.toml"),
        format!(
            "[models.mock]\nbase-urls = [\"{}\"]\nmodel-id = \"mock\"\nmax-tokens = 50\nmax-concurrency = 4\n\
             retry-base-s = 0.01\n",
            mock.base_url()
        ),
    )
    .unwrap();
    let seeds: Vec<String> = (0..40).map(|s| s.to_string()).collect();
    std::fs::write(
        dir.join("run.toml"),
        format!(
            "[run]\nname = \"stop\"\nmodels-file = \"models.toml\"\nmodels = [\"mock\"]\ncache = \"cache.sqlite\"\n\n\
             [ifscale]\ngrid = [10]\nseeds = [{}]\nsampling = \"paper\"\nvocab = \"{}\"\ntemplate = \"{}\"\n\
             max-attempts = 1\n",
            seeds.join(", "),
            repo("datasets/vocab/ifscale-paper.txt"),
            repo("configs/prompts/ifscale-report.txt")
        ),
    )
    .unwrap();
}

pub(crate) fn pipeline(dir: &Path, log: &str) -> Child {
    let stderr = std::fs::File::create(dir.join(log)).unwrap();
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .current_dir(dir)
        .args(["pipeline", "--config", "run.toml", "--no-progress"])
        .env("NO_COLOR", "1")
        // No screenshot of the report: a test does not need Chromium.
        .env("PATH", "/nonexistent")
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .unwrap()
}

/// Once `mock` has received `n` requests (the child still running), sends the child one SIGINT and waits for it to
/// exit; its exit code and its log (`log`).
pub(crate) fn interrupt_after(
    child: &mut Child,
    mock: &MockServer,
    n: u64,
    log: &Path,
) -> (i32, String) {
    let t0 = Instant::now();
    while mock.requests() < n {
        assert!(
            t0.elapsed() < Duration::from_secs(240),
            "no requests arrived"
        );
        if let Some(status) = child.try_wait().unwrap() {
            let log = std::fs::read_to_string(log).unwrap_or_default();
            panic!("the child ended early: {status}\n{log}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: sends a signal to our own child process.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let code = wait(child, Duration::from_secs(180));
    (code, std::fs::read_to_string(log).unwrap())
}

#[test]
fn ctrl_c_stops_a_pipeline_stage_like_a_cost_cap_and_a_rerun_pays_for_nothing_twice() {
    let mut cfg = MockConfig::new();
    cfg.latency = Duration::from_millis(300);
    // The same run without interruption: how many requests it takes.
    let whole = MockServer::start(cfg.clone(), 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    ifscale_workspace(dir.path(), &whole);
    let code = wait(
        &mut pipeline(dir.path(), "whole.log"),
        Duration::from_secs(300),
    );
    let log = std::fs::read_to_string(dir.path().join("whole.log")).unwrap();
    assert_eq!(code, 0, "{log}");
    let needed = whole.requests();
    assert!(needed >= 40, "{needed}");

    let mock = MockServer::start(cfg, 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    ifscale_workspace(dir.path(), &mock);
    let mut child = pipeline(dir.path(), "first.log");
    let (code, log) = interrupt_after(&mut child, &mock, 8, &dir.path().join("first.log"));
    assert_eq!(code, 3, "{log}");
    assert_eq!(
        log.lines().filter(|l| l.contains("Ctrl-C again")).count(),
        1,
        "{log}"
    );
    assert!(mock.requests() < needed, "not interrupted: {log}");
    // The stage was not marked done: the rerun finishes it, sending only what the first run did not answer.
    let code = wait(
        &mut pipeline(dir.path(), "rerun.log"),
        Duration::from_secs(300),
    );
    let log = std::fs::read_to_string(dir.path().join("rerun.log")).unwrap();
    assert_eq!(code, 0, "{log}");
    assert_eq!(mock.requests(), needed, "{log}");
}
