//! `cargo xtask pipeline` against the inference client's mock with a run-wide cost limit: a budget-stopped run
//! exits 3 and lists what is missing, a rerun with the same cap sends nothing, and a rerun with a higher cap
//! finishes the run (exit 0).

use std::path::Path;
use std::process::Command;

use inference_client::mock::{MockConfig, MockServer};

fn repo(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(path)
        .canonicalize()
        .unwrap()
        .display()
        .to_string()
}

/// Runs the pipeline in `dir` with extra flags; returns the exit code and the summary.
fn pipeline(dir: &Path, flags: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .current_dir(dir)
        .args(["pipeline", "--config", "run.toml", "--no-progress"])
        .args(flags)
        .env("NO_COLOR", "1")
        // No screenshot of the report: a test does not need Chromium.
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    let summary =
        std::fs::read_to_string(dir.join("artifacts/runs/budget/summary.md")).unwrap_or_default();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let last: Vec<&str> = stderr.lines().rev().take(3).collect();
    (
        out.status.code().unwrap_or(-1),
        format!("{summary}\n{}", last.join("\n")),
    )
}

#[test]
fn a_budget_stopped_run_exits_3_and_a_rerun_with_a_higher_cap_finishes_it() {
    let mock = MockServer::start(MockConfig::new(), 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    // The mock bills one token per 4 body bytes, a little more than the client's worst case for the same request;
    // at 1 000 USD per million input tokens a request costs about 0.5 USD, so a 0.6 USD cap pays for one.
    std::fs::write(
        dir.path().join("models.toml"),
        format!(
            "[models.mock]\nbase-urls = [\"{}\"]\nmodel-id = \"mock\"\nmax-tokens = 50\nmax-concurrency = 1\n\
             retry-base-s = 0.01\nprice-in-per-mtok = 1000.0\n",
            mock.base_url()
        ),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("run.toml"),
        format!(
            "[run]\nname = \"budget\"\nmodels-file = \"models.toml\"\nmodels = [\"mock\"]\ncache = \"cache.sqlite\"\n\
             max-cost-usd = 0.6\n\n[ifscale]\ngrid = [10]\nseeds = [0, 1, 2]\nsampling = \"paper\"\nvocab = \"{}\"\n\
             template = \"{}\"\nmax-attempts = 1\n",
            repo("datasets/vocab/ifscale-paper.txt"),
            repo("configs/prompts/ifscale-report.txt")
        ),
    )
    .unwrap();
    let (code, summary) = pipeline(dir.path(), &[]);
    assert_eq!(code, 3, "{summary}");
    assert!(summary.contains("## Incomplete"), "{summary}");
    assert!(summary.contains("| ifscale-generate"), "{summary}");
    let sent = mock.requests();
    assert_eq!(sent, 1, "one request fits under the cap");
    // The same cap: the ledger says it is spent, nothing is sent, still incomplete.
    let (code, _) = pipeline(dir.path(), &[]);
    assert_eq!(code, 3);
    assert_eq!(mock.requests(), sent);
    // A higher cap continues where the run stopped, without paying again for the answered prompt.
    let (code, summary) = pipeline(dir.path(), &["--max-cost", "10"]);
    assert_eq!(code, 0, "{summary}");
    assert!(!summary.contains("## Incomplete"), "{summary}");
    assert_eq!(mock.requests(), 3);
    let ledger =
        std::fs::read_to_string(dir.path().join("artifacts/runs/budget/spend.jsonl")).unwrap();
    assert_eq!(
        ledger.lines().count(),
        3,
        "one ledger line per paid request"
    );
}

/// The o-series coherence judge: reasoning eats a 300-token budget, every verdict comes back empty, so
/// every judged attempt ends unjudged; the pipeline says so and exits 3 instead of passing the run as complete.
#[test]
fn a_judge_that_never_answers_makes_the_run_incomplete() {
    let report = "<report>\n# Results\n\nOur revenue rose this year because the team widened the margin on every \
                  product line, and the board expects the same discipline to carry the company through the next two \
                  quarters while the outlook for every segment stays stable and strong.\n</report>";
    let mut cfg = MockConfig::new();
    cfg.replies = vec![(
        "professional business report".to_owned(),
        vec![report.to_owned()],
    )];
    let mock = MockServer::start(cfg, 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("models.toml"),
        format!(
            "[models.writer]\nbase-urls = [\"{url}\"]\nmodel-id = \"mock\"\nmax-tokens = 200\n\n\
             [models.judge]\nbase-urls = [\"{url}\"]\nmodel-id = \"o-series\"\ntoken-limit-field = \"max_completion_tokens\"\n\
             sampling = false\nretry-base-s = 0.01\n",
            url = mock.base_url()
        ),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("run.toml"),
        format!(
            "[run]\nname = \"budget\"\nmodels-file = \"models.toml\"\nmodels = [\"writer\"]\ncache = \"cache.sqlite\"\n\n\
             [ifscale]\ngrid = [10]\nseeds = [0, 1]\nsampling = \"paper\"\nvocab = \"{}\"\ntemplate = \"{}\"\n\
             max-attempts = 1\njudge-model = \"judge\"\njudge-max-tokens = 300\njudge-tries = 2\n",
            repo("datasets/vocab/ifscale-paper.txt"),
            repo("configs/prompts/ifscale-report.txt")
        ),
    )
    .unwrap();
    let (code, summary) = pipeline(dir.path(), &[]);
    assert_eq!(code, 3, "{summary}");
    assert!(
        summary.contains("ifscale-generate:writer (unjudged by the configured judge) | 2 |"),
        "{summary}"
    );
    // Two reports, each judged twice (both tries cut off inside the reasoning).
    assert_eq!(mock.requests(), 2 + 2 * 2);
}
