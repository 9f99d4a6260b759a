//! The client and the pipeline against llama.cpp's own `llama-server` serving the SmolLM2 GGUF (not a mock this
//! project wrote): chat with usage and served-model provenance, concurrency at the server's `--parallel`,
//! generations longer than the idle timeout, a stop and restart in the middle of a run, the server's
//! context-overflow error, and the default pipeline through the `llamacpp-server` entry of `configs/models.toml`.
//!
//! Each test starts its own server (one thread, `-c 2048`) and kills it on drop. With `IFSTRESS_REAL_SERVER_URL`
//! and `IFSTRESS_REAL_SERVER_MODEL` set, the chat, concurrency, long-generation and pipeline tests use that server
//! instead (vLLM, Ollama); the restart and context-overflow tests always use their own `llama-server`, since they
//! stop it or read its own error.

mod support;

use crate::repo;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use inference_client::{Client, ModelConfig, RunOptions};
use schema::{ErrorClass, Message, Outcome, PromptRecord, ResponseRecord};
use serde_json::Value;
use support::{LlamaServer, Target, http_get, line_count};

fn prompt(id: &str, text: &str) -> PromptRecord {
    PromptRecord {
        id: id.to_owned(),
        messages: vec![Message::system("Be brief."), Message::user(text)],
        sample_index: 0,
        params: Default::default(),
        extra: Default::default(),
    }
}

/// The target's model at temperature 0 with `max_tokens` output tokens.
fn model(target: &Target, max_tokens: u32) -> ModelConfig {
    let mut m = ModelConfig::ad_hoc(&target.base_url(), target.model_id());
    m.temperature = Some(0.0);
    m.max_tokens = Some(max_tokens);
    m
}

fn opts(dir: &Path) -> RunOptions {
    let mut o = RunOptions::new(dir.join("cache.sqlite"));
    o.progress = false;
    o.durable = false;
    o
}

fn records(path: &Path) -> Vec<ResponseRecord> {
    schema::read_jsonl(path).expect("the responses file reads")
}

/// `extra-body` that makes the generation run to `max_tokens` (llama.cpp and vLLM take `ignore_eos`).
fn run_to_max_tokens(m: &mut ModelConfig) {
    m.extra_body
        .insert("ignore_eos".to_owned(), Value::Bool(true));
}

/// The model id the server lists first at `GET /v1/models`.
fn listed_model(base_url: &str) -> String {
    let (status, body) = http_get(&format!("{base_url}/models")).expect("GET /v1/models");
    assert_eq!(status, 200, "{body}");
    let v: Value = serde_json::from_str(&body).expect("JSON from /v1/models");
    v["data"][0]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no model id in {body}"))
        .to_owned()
}

#[test]
fn chat_records_usage_and_the_served_model() {
    let target = Target::from_env(1);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("responses.jsonl");
    let prompts = [
        prompt("capital", "What is the capital of France?"),
        prompt("colour", "Name one colour."),
    ];
    let s = Client::new(opts(dir.path()))
        .unwrap()
        .chat(&model(&target, 48), &prompts, &out)
        .unwrap();
    assert_eq!((s.sent, s.failed, s.requests), (2, 0, 2), "{s:?}");
    let listed = listed_model(&target.base_url());
    for r in records(&out) {
        assert!(
            matches!(r.outcome, Outcome::Ok | Outcome::Truncated),
            "{r:?}"
        );
        assert!(
            r.content.as_deref().is_some_and(|c| !c.trim().is_empty()),
            "{r:?}"
        );
        assert!(
            r.usage.prompt_tokens > 10,
            "the system and user messages: {r:?}"
        );
        assert!((1..=48).contains(&r.usage.completion_tokens), "{r:?}");
        assert_eq!(r.attempts.len(), 1, "{r:?}");
        let served = r.served.as_ref().expect("provenance");
        assert_eq!(served.model.as_deref(), Some(listed.as_str()), "{r:?}");
        assert_eq!(served.replica, Some(0));
        assert!(served.request_id.is_some(), "{r:?}");
    }
    if let Some(server) = target.managed() {
        // The server counted the tokens the records say.
        let recs = records(&out);
        let predicted: u64 = recs.iter().map(|r| r.usage.completion_tokens).sum();
        let predicted = predicted as f64;
        assert_eq!(server.metric("tokens_predicted_total"), predicted);
    }
}

#[test]
fn requests_run_concurrently_at_the_servers_parallel_slots() {
    const PARALLEL: usize = 2;
    let target = Target::from_env(PARALLEL);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("responses.jsonl");
    let prompts: Vec<PromptRecord> = (0..6)
        .map(|i| prompt(&format!("p{i}"), &format!("Count from {i} to {}.", i + 20)))
        .collect();
    let mut m = model(&target, 40);
    run_to_max_tokens(&mut m);
    m.max_concurrency = PARALLEL;
    let s = Client::new(opts(dir.path()))
        .unwrap()
        .chat(&m, &prompts, &out)
        .unwrap();
    assert_eq!((s.sent, s.failed), (6, 0), "{s:?}");
    let flights = s.in_flight.as_ref().expect("requests were sent");
    assert_eq!(flights.peak, PARALLEL, "{flights:?}");
    let recs = records(&out);
    assert_eq!(recs.len(), 6);
    // llama-server closes its connection after each streamed answer without saying so, and the next request often
    // goes out on it before the client has noticed. Such a request is sent again at once on a new connection, and
    // the server is not taken for dead (it was ejected, its slots left idle, before that was known); the server's
    // own token count below shows that nothing was generated, so paid, twice.
    let resent: Vec<_> = recs
        .iter()
        .flat_map(|r| &r.attempts)
        .filter(|a| a.status.is_none())
        .collect();
    assert!(
        resent
            .iter()
            .all(|a| a.error_class == Some(ErrorClass::Connection) && a.delay_s == 0.0),
        "{recs:?}"
    );
    assert_eq!(s.requests, 6 + resent.len() as u64, "{s:?}");
    assert_eq!(s.ejections, 0, "{s:?}");
    assert!(
        recs.iter()
            .all(|r| r.outcome == Outcome::Truncated && r.usage.completion_tokens == 40),
        "{recs:?}"
    );
    if let Some(server) = target.managed() {
        // llama-server decoded both slots' sequences together (two busy slots per decode step but for the ends).
        let busy = server.metric("n_busy_slots_per_decode");
        assert!(busy > 1.5, "mean busy slots per decode {busy}");
        assert_eq!(server.metric("tokens_predicted_total"), 6.0 * 40.0);
    }
}

#[test]
fn a_generation_longer_than_the_idle_timeout_is_answered_on_its_first_attempt() {
    let target = Target::from_env(1);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("responses.jsonl");
    let mut m = model(&target, 600);
    run_to_max_tokens(&mut m);
    m.idle_timeout_s = 1.0;
    m.timeout_s = 300.0;
    // Two attempts, so that a failure of this test (a client that abandons the answer) ends quickly.
    m.max_attempts = 2;
    let prompts = [prompt(
        "story",
        "Write a long story about a lighthouse keeper.",
    )];
    let s = Client::new(opts(dir.path()))
        .unwrap()
        .chat(&m, &prompts, &out)
        .unwrap();
    let recs = records(&out);
    assert_eq!((s.failed, s.requests), (0, 1), "{s:?} {recs:?}");
    let r = &recs[0];
    assert_eq!(r.outcome, Outcome::Truncated, "{r:?}");
    assert_eq!(r.usage.completion_tokens, 600, "{r:?}");
    assert_eq!(r.attempts.len(), 1, "{r:?}");
    let latency = r.latency_s.expect("latency");
    assert!(
        latency > 2.0 * m.idle_timeout_s,
        "the generation took {latency:.1} s, not well over the {} s idle timeout: the test proves nothing",
        m.idle_timeout_s
    );
}

/// The models file for `xtask infer`/`pipeline`: one model `name` at `base_url`.
fn models_file(dir: &Path, name: &str, base_url: &str, model_id: &str, extra: &str) {
    std::fs::write(
        dir.join("models.toml"),
        format!(
            "[models.{name}]\nbase-urls = [\"{base_url}\"]\nmodel-id = \"{model_id}\"\ntemperature = 0.0\n{extra}"
        ),
    )
    .unwrap();
}

fn write_prompts(path: &Path, prompts: &[PromptRecord]) {
    let text: String = prompts
        .iter()
        .map(|p| serde_json::to_string(p).unwrap() + "\n")
        .collect();
    std::fs::write(path, text).unwrap();
}

/// `cargo xtask infer` of `prompts.jsonl` into `responses.jsonl` with model `m` of `models.toml`, in `dir`.
fn infer(dir: &Path, m: &str) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_xtask"));
    cmd.current_dir(dir)
        .args(["infer", "--models", "models.toml", "--model", m])
        .args(["--prompts", "prompts.jsonl", "--out", "responses.jsonl"])
        .args(["--cache", "cache.sqlite", "--no-progress", "--no-fsync"])
        .env("NO_COLOR", "1");
    cmd
}

/// Generations llama-server finished, from its log (it prints the timing of each finished task; a task cut off by
/// a stop prints none).
fn finished_generations(log: &str) -> usize {
    log.lines()
        .filter(|l| l.contains("print_timing") && l.contains("total time"))
        .count()
}

/// Requests llama-server took into a slot, from its log (refused ones included).
fn launched_tasks(log: &str) -> usize {
    log.lines().filter(|l| l.contains("launch_slot_")).count()
}

/// The restart: llama-server is stopped while `xtask infer` runs and started again a few seconds later.
/// Every prompt is answered once (the server answered each request once: nothing paid twice), and the client
/// goes on within 10 s of the server's return, with the default timeouts. Always against its own llama-server.
#[test]
fn a_server_restart_mid_run_loses_nothing_and_costs_seconds() {
    const N: usize = 40;
    let mut server = LlamaServer::start(2);
    let dir = tempfile::tempdir().unwrap();
    models_file(
        dir.path(),
        "real",
        &server.base_url(),
        LlamaServer::MODEL_ID,
        "max-tokens = 24\nmax-concurrency = 2\nextra-body = { ignore_eos = true }\n",
    );
    let prompts: Vec<PromptRecord> = (0..N)
        .map(|i| {
            prompt(
                &format!("q{i:02}"),
                &format!("Say something about the number {i}."),
            )
        })
        .collect();
    write_prompts(&dir.path().join("prompts.jsonl"), &prompts);
    let out = dir.path().join("responses.jsonl");
    let stderr_path = dir.path().join("infer.log");
    let mut child = infer(dir.path(), "real")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr_path).unwrap())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while line_count(&out) < 8 {
        assert!(Instant::now() < deadline, "no progress before the stop");
        assert!(
            child.try_wait().unwrap().is_none(),
            "infer ended before the stop"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    server.stop();
    let at_stop = line_count(&out);
    std::thread::sleep(Duration::from_secs(3));
    let back = server.restart();
    let answered_before = line_count(&out);
    while line_count(&out) <= answered_before {
        assert!(
            back.elapsed() < Duration::from_secs(60),
            "no answer within 60 s of the server's return"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let resumed = back.elapsed();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "infer did not finish");
        std::thread::sleep(Duration::from_millis(50));
    };
    let log = std::fs::read_to_string(&stderr_path).unwrap();
    assert!(status.success(), "{status}: {log}");
    let recs = records(&out);
    let mut ids: Vec<&str> = recs.iter().map(|r| r.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!((recs.len(), ids.len()), (N, N), "{log}");
    assert!(
        recs.iter().all(|r| r.outcome == Outcome::Truncated),
        "{recs:?}"
    );
    assert!(at_stop < N, "the run was over before the stop");
    assert_eq!(
        finished_generations(&server.log()),
        N,
        "llama-server generated each answer once"
    );
    assert!(
        resumed <= Duration::from_secs(10),
        "the client resumed {resumed:?} after the server's return\n{log}"
    );
}

/// A prompt longer than the server's context: llama-server answers 400 `exceed_context_size_error`; the client
/// gives that prompt up at once (no retry: it would fail alike), with one warning line naming it, and the other
/// prompt is answered. Always against its own llama-server (the error is its own).
#[test]
fn a_prompt_over_the_context_fails_once_with_one_line_naming_it() {
    let server = LlamaServer::start(1);
    let dir = tempfile::tempdir().unwrap();
    models_file(
        dir.path(),
        "real",
        &server.base_url(),
        LlamaServer::MODEL_ID,
        "max-tokens = 16\nmax-concurrency = 1\n",
    );
    let long = "lighthouse ".repeat(3 * LlamaServer::CTX);
    write_prompts(
        &dir.path().join("prompts.jsonl"),
        &[prompt("too-long", &long), prompt("short", "Say hello.")],
    );
    let out = infer(dir.path(), "real").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("too-long") && l.contains("context size"))
        .collect();
    assert_eq!(
        lines.len(),
        1,
        "one line names the prompt and the error:\n{stderr}"
    );
    assert!(lines[0].contains("HTTP 400"), "{}", lines[0]);
    let recs = records(&dir.path().join("responses.jsonl"));
    let failed = recs.iter().find(|r| r.id == "too-long").expect("a record");
    assert_eq!(failed.outcome, Outcome::Failed);
    assert_eq!(failed.attempts.len(), 1, "no retry: {failed:?}");
    let error = failed.error.as_deref().unwrap_or_default();
    assert!(
        error.contains("exceeds the available context size") && !error.contains('\n'),
        "{error}"
    );
    let short = recs.iter().find(|r| r.id == "short").expect("a record");
    assert_ne!(short.outcome, Outcome::Failed, "{short:?}");
    // The server saw one request per prompt.
    assert_eq!(launched_tasks(&server.log()), 2, "{}", server.log());
}

/// The default pipeline (both benchmarks, tiny sizes) on the `llamacpp-server` entry of `configs/models.toml`,
/// its base URL (and, against another server, its model id) changed to the server's: the run completes.
#[test]
fn the_default_pipeline_runs_on_the_llamacpp_server_entry() {
    let target = Target::from_env(2);
    let dir = tempfile::tempdir().unwrap();
    let models: toml::Table =
        toml::from_str(&std::fs::read_to_string(repo("configs/models.toml")).unwrap()).unwrap();
    let entry = models["models"]["llamacpp-server"]
        .as_table()
        .cloned()
        .expect("configs/models.toml has [models.llamacpp-server]");
    let mut entry = entry;
    entry.insert(
        "base-urls".to_owned(),
        toml::Value::Array(vec![toml::Value::String(target.base_url())]),
    );
    if target.managed().is_none() {
        entry.insert(
            "model-id".to_owned(),
            toml::Value::String(target.model_id().to_owned()),
        );
    }
    let mut one = toml::Table::new();
    one.insert("llamacpp-server".to_owned(), toml::Value::Table(entry));
    let mut file = toml::Table::new();
    file.insert("models".to_owned(), toml::Value::Table(one));
    std::fs::write(
        dir.path().join("models.toml"),
        toml::to_string(&file).unwrap(),
    )
    .unwrap();
    let prompts = dir.path().join("configs/prompts");
    std::fs::create_dir_all(&prompts).unwrap();
    for f in std::fs::read_dir(repo("configs/prompts")).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, prompts.join(f.file_name().unwrap())).unwrap();
    }
    std::fs::write(
        dir.path().join("run.toml"),
        format!(
            "[run]\nname = \"real\"\nmodels-file = \"models.toml\"\nmodels = [\"llamacpp-server\"]\n\
             cache = \"cache.sqlite\"\n\n\
             [ifscale]\ngrid = [10]\nseeds = [0]\nsampling = \"paper\"\nvocab = \"{}\"\ntemplate = \"{}\"\n\
             max-tokens = 120\ntemperature = 0.7\nmax-attempts = 1\n\n\
             [rift-prep]\ninputs = [\"{}\"]\n\n\
             [rift]\nseed = 7\ndataset = \"artifacts/jeopardy/questions.jsonl\"\nlinear-prompts = 1\n\
             jumping-prompts = 1\nbaseline-prompts = 2\nnum-min = 10\nnum-max = 10\nmax-jump-distance = 18\n\
             max-tokens = 64\ntemperature = 0.0\n",
            repo("datasets/vocab/default.tsv"),
            repo("configs/prompts/ifscale-report.txt"),
            repo("datasets/jeopardy/team-clues.json"),
        ),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .current_dir(dir.path())
        .args(["pipeline", "--config", "run.toml", "--no-progress"])
        .env("NO_COLOR", "1")
        // No screenshot of the report: a test does not need Chromium.
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let run = dir.path().join("artifacts/runs/real");
    let summary = std::fs::read_to_string(run.join("summary.md")).unwrap();
    assert!(!summary.contains("## Incomplete"), "{summary}");
    assert!(run.join("report.html").is_file());
    let listed = listed_model(&target.base_url());
    for bench in ["ifscale", "rift"] {
        let responses = run.join(format!("{bench}/models/llamacpp-server/responses.jsonl"));
        let recs = records(&responses);
        assert!(!recs.is_empty(), "{}", responses.display());
        for r in &recs {
            assert_ne!(r.outcome, Outcome::Failed, "{r:?}");
            assert_eq!(
                r.served.as_ref().and_then(|s| s.model.as_deref()),
                Some(listed.as_str())
            );
        }
    }
}
