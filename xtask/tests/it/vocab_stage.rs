//! The pipeline's vocabulary step calls its models through the run's one client: a paid difficulty model stops at
//! the run's cost limit with its requests in the run's spend ledger (exit 3, no vocabulary written), and one
//! Ctrl-C during the step ends the run with exit 3 with every answer it paid for on file.

use std::path::Path;
use std::time::Duration;

use mock_provider::{MockConfig, MockServer};

use crate::interrupt::{interrupt_after, pipeline, wait};
use crate::repo;

/// A run in `dir` whose `[ifscale] vocab` is missing, so the pipeline builds it from the fixture corpus with the
/// perplexity difficulty on `paid` (served by `paid`) and embeddings from `embed`; `run` lines go into `[run]`.
fn vocab_workspace(dir: &Path, paid: &MockServer, embed: &MockServer, samples: u32, run: &str) {
    std::fs::write(
        dir.join("models.toml"),
        format!(
            "[models.paid]\nbase-urls = [\"{}\"]\nmodel-id = \"paid\"\nmax-tokens = 50\nmax-concurrency = 1\n\
             retry-base-s = 0.01\nprice-in-per-mtok = 1000.0\n\n\
             [models.embed]\nbase-urls = [\"{}\"]\nmodel-id = \"embed\"\nretry-base-s = 0.01\n",
            paid.base_url(),
            embed.base_url()
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("vocab.toml"),
        format!(
            "embeddings-model = \"embed\"\n\n[difficulty]\nmethod = \"perplexity\"\nmodel = \"paid\"\n\
             samples = {samples}\n"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("run.toml"),
        format!(
            "[run]\nname = \"stop\"\nmodels-file = \"models.toml\"\nmodels = [\"paid\"]\ncache = \"cache.sqlite\"\n{run}\n\
             [vocab]\ncorpus = \"{}\"\nsettings = \"vocab.toml\"\n\n\
             [ifscale]\ngrid = [10]\nseeds = [0]\nsampling = \"paper\"\nvocab = \"vocab.tsv\"\ntemplate = \"{}\"\n\
             max-attempts = 1\n",
            repo("crates/vocab-pipeline/test_data/corpus"),
            repo("configs/prompts/ifscale-report.txt")
        ),
    )
    .unwrap();
}

/// The difficulty step's answers on file.
fn difficulty_answers(dir: &Path) -> usize {
    let file = dir.join("artifacts/runs/stop/vocab/vocab-difficulty.paid.jsonl");
    std::fs::read_to_string(file)
        .map(|t| t.lines().filter(|l| !l.trim().is_empty()).count())
        .unwrap_or(0)
}

#[test]
fn a_paid_vocabulary_model_stops_at_the_runs_cost_limit_with_its_requests_in_the_ledger() {
    let paid = MockServer::start(MockConfig::new(), 0).unwrap();
    let embed = MockServer::start(MockConfig::new(), 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    // The fixture corpus leaves one term, asked 20 times. At 1 000 USD per million input tokens a request costs
    // about 0.055 USD (the client reserves its own, smaller, estimate before sending): a 0.06 USD cap pays for one.
    vocab_workspace(dir.path(), &paid, &embed, 20, "max-cost-usd = 0.06");
    // The dry run names the step's models, and sends nothing.
    let dry = std::process::Command::new(env!("CARGO_BIN_EXE_xtask"))
        .current_dir(dir.path())
        .args([
            "pipeline",
            "--config",
            "run.toml",
            "--dry-run",
            "--no-progress",
        ])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&dry.stdout);
    assert!(
        dry.status.success(),
        "{table}{}",
        String::from_utf8_lossy(&dry.stderr)
    );
    assert!(table.contains("| vocab difficulty | paid |"), "{table}");
    assert!(table.contains("| vocab embeddings | embed |"), "{table}");
    assert_eq!(paid.requests() + embed.requests(), 0);
    let code = wait(
        &mut pipeline(dir.path(), "run.log"),
        Duration::from_secs(300),
    );
    let log = std::fs::read_to_string(dir.path().join("run.log")).unwrap();
    assert_eq!(code, 3, "{log}");
    assert!(log.contains("stage vocab stopped with"), "{log}");
    assert_eq!(paid.requests(), 1, "one request fits under the cap: {log}");
    let ledger =
        std::fs::read_to_string(dir.path().join("artifacts/runs/stop/spend.jsonl")).unwrap();
    assert_eq!(
        ledger.lines().count(),
        1,
        "the vocabulary's request is in the run's ledger"
    );
    // The mock bills 55 prompt tokens for the difficulty prompt: 0.055 USD at 1 000 USD per million.
    let line: serde_json::Value = serde_json::from_str(ledger.trim()).unwrap();
    assert!(
        (line["usd"].as_f64().unwrap() - 0.055).abs() < 1e-9,
        "{ledger}"
    );
    assert_eq!(difficulty_answers(dir.path()), 1);
    assert!(
        !dir.path().join("vocab.tsv").exists(),
        "no vocabulary is built from part of the terms"
    );
    // The same cap again: the ledger says it is spent, so nothing more is sent.
    let code = wait(
        &mut pipeline(dir.path(), "again.log"),
        Duration::from_secs(300),
    );
    assert_eq!(code, 3);
    assert_eq!(paid.requests(), 1);
}

#[test]
fn one_ctrl_c_during_the_vocabulary_step_exits_3_and_keeps_every_answer() {
    let mut cfg = MockConfig::new();
    cfg.latency = Duration::from_millis(300);
    let paid = MockServer::start(cfg, 0).unwrap();
    let embed = MockServer::start(MockConfig::new(), 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    // One term asked 40 times, one at a time, 0.3 s each.
    vocab_workspace(dir.path(), &paid, &embed, 40, "");
    let mut child = pipeline(dir.path(), "first.log");
    let (code, log) = interrupt_after(&mut child, &paid, 2, &dir.path().join("first.log"));
    assert_eq!(code, 3, "{log}");
    assert_eq!(
        log.lines().filter(|l| l.contains("Ctrl-C again")).count(),
        1,
        "the vocabulary step's client is the one Ctrl-C stops: {log}"
    );
    // Every request the model answered is on file (the one in flight was waited for).
    let sent = paid.requests() as usize;
    assert_eq!(difficulty_answers(dir.path()), sent, "{log}");
    assert!(!dir.path().join("vocab.tsv").exists());
}
