//! `cargo xtask pipeline` against the mock provider (crate `mock-provider`) and its provider emulation: a run-wide cost limit
//! (a budget-stopped run exits 3 and lists what is missing, a rerun with the same cap sends nothing, a higher cap
//! finishes the run), reasoning judges that complete a run or leave it incomplete, a model that cannot be used, and
//! one whose server is not there.

use crate::repo;
use std::path::Path;
use std::process::Command;

use mock_provider::{MockConfig, MockServer};

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

/// The issue's o-series coherence judge: reasoning eats a 300-token budget, every verdict comes back empty, so
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
             max-attempts = 1\n\n\
             [judges.coherence]\nmodel = \"judge\"\nmax-tokens = 300\ntries = 2\nprompt = \"{}\"\n\n\
             [judge-check]\nenabled = false\n",
            repo("datasets/vocab/ifscale-paper.txt"),
            repo("configs/prompts/ifscale-report.txt"),
            repo("configs/prompts/ifscale-coherence.txt")
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

/// A workspace for a run in `dir`: the repository's prompt files (the RIFT judge template is read from
/// `configs/prompts/`), and a models file whose every model is served by `mock` under `ids`.
fn workspace(dir: &Path, mock: &MockServer, models: &[(&str, &str, &str)]) {
    let prompts = dir.join("configs/prompts");
    std::fs::create_dir_all(&prompts).unwrap();
    for f in std::fs::read_dir(repo("configs/prompts")).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, prompts.join(f.file_name().unwrap())).unwrap();
    }
    let mut toml = String::new();
    for (name, id, extra) in models {
        toml.push_str(&format!(
            "[models.{name}]\nbase-urls = [\"{}\"]\nmodel-id = \"{id}\"\nmax-tokens = 300\nretry-base-s = 0.01\n{extra}\n",
            mock.base_url()
        ));
    }
    std::fs::write(dir.join("models.toml"), toml).unwrap();
}

const REPORT: &str = "<report>\n# Results\n\nOur revenue rose this year because the team widened the margin on every \
    product line, and the board expects the same discipline to carry the company through the next two quarters while \
    the outlook for every segment stays stable and strong.\n</report>";

/// A mock for whole runs: IFScale prompts get [`REPORT`], coherence judges the `coherence` verdicts in turn, RIFT
/// judges CORRECT, and each `(marker, reply)` of `more` its reply.
fn judged_mock(coherence: &[&str], more: &[(&str, &str)]) -> MockServer {
    let mut cfg = MockConfig::new();
    cfg.replies = vec![
        (
            "professional business report".to_owned(),
            vec![REPORT.to_owned()],
        ),
        (
            "Reply with one JSON object".to_owned(),
            coherence.iter().map(|c| (*c).to_owned()).collect(),
        ),
        (
            "You grade answers to trivia questions".to_owned(),
            vec!["CORRECT".to_owned()],
        ),
    ];
    cfg.replies.extend(
        more.iter()
            .map(|(m, r)| ((*m).to_owned(), vec![(*r).to_owned()])),
    );
    MockServer::start(cfg, 0).unwrap()
}

/// Both benchmarks with both judges. These tests are about other things than the judge check (their scripted judges
/// answer the same to everything), so the check is off here; `judge_check.rs` tests it.
fn both_benchmarks(models: &str, prep_extra: &str) -> String {
    format!(
        "[run]\nname = \"budget\"\nmodels-file = \"models.toml\"\nmodels = [{models}]\ncache = \"cache.sqlite\"\n\n\
         [ifscale]\ngrid = [10]\nseeds = [0, 1]\nsampling = \"paper\"\nvocab = \"{}\"\ntemplate = \"{}\"\n\
         max-attempts = 1\n\n\
         [rift-prep]\ninputs = [\"{}\"]\n{prep_extra}\n\
         [judges.coherence]\nmodel = \"coherence\"\n\n\
         [judges.rift]\nmodel = \"grader\"\n\n\
         [rift]\nseed = 7\ndataset = \"artifacts/jeopardy/questions.jsonl\"\nlinear-prompts = 2\njumping-prompts = 2\n\
         baseline-prompts = 6\nnum-min = 10\nnum-max = 12\nmax-jump-distance = 18\nmax-tokens = 200\n\n\
         [judge-check]\nenabled = false\n",
        repo("datasets/vocab/ifscale-paper.txt"),
        repo("configs/prompts/ifscale-report.txt"),
        repo("datasets/jeopardy/team-clues.json"),
    )
}

/// The issue's setting, done right: an o-series coherence judge (its own request style) and a vLLM thinking model
/// as RIFT judge, both scripted to give verdicts after their reasoning. The run completes (exit 0) with every
/// judged item judged: none unjudged, none silently counted wrong. One report scores 4: coherence over all judged
/// attempts (6.0, half below 6) differs from the accepted-only view (8.0), as in the paper's coherence section.
#[test]
fn reasoning_judges_with_room_to_think_complete_the_run() {
    let mock = judged_mock(
        &[
            r#"{"reason": "A coherent report.", "score": 8}"#,
            r#"{"reason": "It wanders.", "score": 4}"#,
        ],
        &[],
    );
    let dir = tempfile::tempdir().unwrap();
    workspace(
        dir.path(),
        &mock,
        &[
            ("writer", "mock", ""),
            (
                "coherence",
                "o-series",
                "token-limit-field = \"max_completion_tokens\"\nsampling = false\n",
            ),
            ("grader", "vllm-thinker", ""),
        ],
    );
    // The judges get the default 4 096 tokens: room for the o-series model's 400 reasoning tokens.
    std::fs::write(
        dir.path().join("run.toml"),
        both_benchmarks("\"writer\"", ""),
    )
    .unwrap();
    let (code, summary) = pipeline(dir.path(), &[]);
    assert_eq!(code, 0, "{summary}");
    assert!(!summary.contains("## Incomplete"), "{summary}");
    let run = dir.path().join("artifacts/runs/budget");
    let attempts = std::fs::read_to_string(run.join("ifscale/attempts.jsonl")).unwrap();
    assert_eq!(attempts.matches("\"coherence\":8").count(), 1, "{attempts}");
    assert_eq!(attempts.matches("\"coherence\":4").count(), 1, "{attempts}");
    // Coherence over all judged attempts (the paper's view) sees the rejected one; the accepted-only view cannot.
    let table =
        std::fs::read_to_string(run.join("tables/ifscale/ifscale_coherence_attempts.md")).unwrap();
    assert!(
        table.contains("| writer | 10 | 2 | 2 | 1/2 | 6.00 | 50.0 | 2.00 | 10 | 8.00 |"),
        "{table}"
    );
    assert!(
        run.join("figures/ifscale/ifscale_coherence_all_attempts_vs_n.png")
            .is_file()
    );
    let answers = std::fs::read_to_string(run.join("rift/answer-scores.jsonl")).unwrap();
    assert!(
        answers.contains("\"judged_by\":\"llm\""),
        "the thinking judge's verdicts were read"
    );
    assert!(
        !answers.contains("unjudged") && !answers.contains("llm_unusable"),
        "{answers}"
    );
}

/// A model the provider does not serve stops its own stages with one error line; the other model's stages run and
/// the run ends incomplete (exit 3) with the stopped stage listed.
#[test]
fn a_model_that_cannot_be_used_stops_alone() {
    let mock = judged_mock(&[r#"{"reason": "A coherent report.", "score": 8}"#], &[]);
    let dir = tempfile::tempdir().unwrap();
    workspace(
        dir.path(),
        &mock,
        &[
            ("writer", "mock", ""),
            ("gone", "missing-model", ""),
            ("coherence", "mock", ""),
            ("grader", "mock", ""),
        ],
    );
    std::fs::write(
        dir.path().join("run.toml"),
        both_benchmarks("\"gone\", \"writer\"", ""),
    )
    .unwrap();
    let (code, summary) = pipeline(dir.path(), &[]);
    assert_eq!(code, 3, "{summary}");
    assert!(
        summary.contains("ifscale-generate:gone (stopped:"),
        "{summary}"
    );
    assert!(summary.contains("does not exist"), "{summary}");
    let run = dir.path().join("artifacts/runs/budget");
    assert!(run.join("ifscale/models/writer/scores.jsonl").is_file());
    assert!(run.join("rift/models/writer/answer-scores.jsonl").is_file());
}

/// A run of two models: the report has the comparison section (every pair compared, files in `<run>/compare/`)
/// and the explorer shows the two side by side on each benchmark.
#[test]
fn a_run_of_two_models_compares_them_in_the_report_and_the_explorer() {
    let mock = judged_mock(&[r#"{"reason": "A coherent report.", "score": 8}"#], &[]);
    let dir = tempfile::tempdir().unwrap();
    workspace(
        dir.path(),
        &mock,
        &[
            ("writer", "mock", ""),
            ("second", "mock", ""),
            ("coherence", "mock", ""),
            ("grader", "mock", ""),
        ],
    );
    std::fs::write(
        dir.path().join("run.toml"),
        both_benchmarks("\"writer\", \"second\"", ""),
    )
    .unwrap();
    let (code, summary) = pipeline(dir.path(), &[]);
    assert_eq!(code, 0, "{summary}");
    let run = dir.path().join("artifacts/runs/budget");
    for f in [
        "compare.md",
        "compare.json",
        "compare_ifscale_difference.png",
        "compare_rift_forest.png",
    ] {
        assert!(run.join("compare").join(f).is_file(), "{f}");
    }
    let md = std::fs::read_to_string(run.join("compare/compare.md")).unwrap();
    assert!(
        md.contains("## IFScale: writer − second") && md.contains("## RIFT: writer − second"),
        "{md}"
    );
    let report = std::fs::read_to_string(run.join("report.html")).unwrap();
    assert!(report.contains("<h2>Model comparison (paired)</h2>"));
    assert!(report.contains("IFScale: overall accuracy difference per pair"));
    assert!(report.contains("href=\"compare/compare.md\""));
    assert!(report.contains("href=\"explorer/pair-rift-writer-vs-second.html\""));
    assert!(
        run.join("explorer/pair-ifscale-writer-vs-second.html")
            .is_file()
    );
}

/// A model whose server is not there (nothing listens) is waited for up to its `server-wait-s`, then stops alone
/// with one error naming its URL; the other model's stages run and the run ends incomplete (exit 3).
#[test]
fn a_model_whose_server_is_not_there_stops_alone() {
    let mock = judged_mock(&[r#"{"reason": "A coherent report.", "score": 8}"#], &[]);
    let dir = tempfile::tempdir().unwrap();
    workspace(
        dir.path(),
        &mock,
        &[
            ("writer", "mock", ""),
            ("coherence", "mock", ""),
            ("grader", "mock", ""),
        ],
    );
    let dead = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/v1", l.local_addr().unwrap())
    };
    let mut models = std::fs::read_to_string(dir.path().join("models.toml")).unwrap();
    models.push_str(&format!(
        "[models.nowhere]\nbase-urls = [\"{dead}\"]\nmodel-id = \"mock\"\nmax-tokens = 300\nserver-wait-s = 2\n"
    ));
    std::fs::write(dir.path().join("models.toml"), models).unwrap();
    std::fs::write(
        dir.path().join("run.toml"),
        both_benchmarks("\"nowhere\", \"writer\"", ""),
    )
    .unwrap();
    let (code, summary) = pipeline(dir.path(), &[]);
    assert_eq!(code, 3, "{summary}");
    assert!(
        summary.contains("ifscale-generate:nowhere (stopped:"),
        "{summary}"
    );
    assert!(summary.contains("no endpoint answered"), "{summary}");
    assert!(summary.contains(&dead), "{summary}");
    let run = dir.path().join("artifacts/runs/budget");
    assert!(run.join("ifscale/models/writer/scores.jsonl").is_file());
    assert!(run.join("rift/models/writer/answer-scores.jsonl").is_file());
}

/// `[rift-prep] rephrase-model`: the pipeline rephrases every clue into a self-contained question before clean-up
/// (the paper's step 0), and a rerun sends nothing new.
#[test]
fn the_pipeline_rephrases_clues_when_a_model_is_named() {
    let mock = judged_mock(
        &[r#"{"reason": "A coherent report.", "score": 8}"#],
        &[(
            "Rewrite a Jeopardy! clue",
            "QUESTION: Which city is the rephrased capital?\nANSWER: Canberra",
        )],
    );
    let dir = tempfile::tempdir().unwrap();
    workspace(
        dir.path(),
        &mock,
        &[
            ("writer", "mock", ""),
            ("coherence", "mock", ""),
            ("grader", "mock", ""),
            ("rephraser", "mock", ""),
        ],
    );
    std::fs::write(
        dir.path().join("run.toml"),
        both_benchmarks("\"writer\"", "rephrase-model = \"rephraser\"\n"),
    )
    .unwrap();
    let (code, summary) = pipeline(dir.path(), &[]);
    assert_eq!(code, 0, "{summary}");
    let questions =
        std::fs::read_to_string(dir.path().join("artifacts/jeopardy/questions.jsonl")).unwrap();
    let n = questions.lines().count();
    assert!(n > 100, "{n} questions");
    assert_eq!(
        questions
            .matches("Which city is the rephrased capital?")
            .count(),
        n,
        "every question is the rephrased one"
    );
    let sent = mock.requests();
    let (code, _) = pipeline(dir.path(), &[]);
    assert_eq!(code, 0);
    assert_eq!(mock.requests(), sent, "a rerun sends nothing");
}

/// `--batch`: the RIFT baseline and both judges go through the mock's Batch API (the multi-question prompts and
/// the IFScale reports one by one); the run completes, and a rerun without `--batch` sends and submits nothing.
#[test]
fn with_batch_the_judges_and_the_baseline_run_as_batch_jobs() {
    let mock = judged_mock(&[r#"{"reason": "A coherent report.", "score": 8}"#], &[]);
    let dir = tempfile::tempdir().unwrap();
    let batch = "batch = \"openai\"\n";
    workspace(
        dir.path(),
        &mock,
        &[
            ("writer", "mock", batch),
            ("coherence", "mock", batch),
            ("grader", "mock", batch),
        ],
    );
    std::fs::write(
        dir.path().join("run.toml"),
        both_benchmarks("\"writer\"", ""),
    )
    .unwrap();
    let (code, summary) = pipeline(dir.path(), &["--batch", "--batch-poll-s", "0.01"]);
    assert_eq!(code, 0, "{summary}");
    let b = mock.batch_stats();
    assert!(b.batches >= 2, "{b:?}");
    // Six baseline prompts, two IFScale reports to judge, and the RIFT judge requests.
    assert!(b.lines >= 6 + 2, "{b:?}");
    let run = dir.path().join("artifacts/runs/budget");
    assert!(
        run.join("rift/models/writer/responses.batch")
            .read_dir()
            .unwrap()
            .any(|f| f
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("input-"))
    );
    let sent = mock.requests();
    let (code, summary) = pipeline(dir.path(), &["--force"]);
    assert_eq!(code, 0, "{summary}");
    assert_eq!(mock.requests(), sent);
    assert_eq!(mock.batch_stats(), b);
}
