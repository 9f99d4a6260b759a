//! The judge check end to end (`cargo xtask pipeline` against the mock provider): a RIFT judge that says
//! CORRECT to everything and the embedded SmolLM2-135M as judge both end the run with exit 4 and say why; a sound
//! mock judge passes (exit 0), its sensitivity and specificity shown in `summary.md` and `report.html`; a failed
//! judge kept on purpose exits 0 with the mark; and the result tables are byte-identical with the check on and off.

use crate::repo;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use mock_provider::{MockConfig, MockServer, Responder};

/// Runs the pipeline in `dir`; returns the exit code, the summary and the last lines of the log.
fn pipeline(dir: &Path) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .current_dir(dir)
        .args(["pipeline", "--config", "run.toml", "--no-progress"])
        .env("NO_COLOR", "1")
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    let summary =
        std::fs::read_to_string(dir.join("artifacts/runs/check/summary.md")).unwrap_or_default();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let last: Vec<&str> = stderr.lines().rev().take(4).collect();
    (out.status.code().unwrap_or(-1), summary, last.join("\n"))
}

/// The RIFT judge's grading prompt.
const GRADE: &str = "You grade answers to trivia questions";

/// A sound judge: CORRECT when the given answer, without a leading `What is` and anything after its `?` or `(`,
/// is the expected answer up to case, INCORRECT otherwise.
fn sound_verdict(last: &str) -> String {
    let field = |name: &str| {
        last.lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.trim().to_lowercase())
            .unwrap_or_default()
    };
    let (expected, given) = (field("Expected answer:"), field("Given answer:"));
    let given = given.strip_prefix("what is ").unwrap_or(&given);
    let given = given.split(['?', '(']).next().unwrap_or("").trim();
    if !expected.is_empty() && given == expected {
        "CORRECT".to_owned()
    } else {
        "INCORRECT".to_owned()
    }
}

/// A mock whose RIFT model answers each prompt with "Canberra, Ottawa, …" and whose judge is `judge`.
fn mock(judge: fn(&str) -> String) -> MockServer {
    let mut cfg = MockConfig::new();
    cfg.responder = Some(Responder(Arc::new(move |_model: &str, last: &str| {
        if last.contains(GRADE) {
            Some(judge(last))
        } else {
            Some("Canberra, Ottawa, Nairobi, Paris, Oxygen, 1928".to_owned())
        }
    })));
    MockServer::start(cfg, 0).unwrap()
}

/// A workspace with the repository's prompts and a RIFT-only config judged by `judge` (a models-file entry).
fn workspace(dir: &Path, models: &str, judge_check: &str) {
    let prompts = dir.join("configs/prompts");
    std::fs::create_dir_all(&prompts).unwrap();
    for f in std::fs::read_dir(repo("configs/prompts")).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, prompts.join(f.file_name().unwrap())).unwrap();
    }
    std::fs::write(dir.join("models.toml"), models).unwrap();
    std::fs::write(
        dir.join("run.toml"),
        format!(
            "[run]\nname = \"check\"\nmodels-file = \"models.toml\"\nmodels = [\"writer\"]\ncache = \"cache.sqlite\"\n\n\
             [rift-prep]\ninputs = [\"{}\"]\n\n\
             [judges.rift]\nmodel = \"grader\"\nmax-tokens = 8\n\n\
             [rift]\nseed = 7\ndataset = \"artifacts/jeopardy/questions.jsonl\"\nlinear-prompts = 1\njumping-prompts = 1\n\
             baseline-prompts = 4\nnum-min = 10\nnum-max = 12\nmax-jump-distance = 18\nmax-tokens = 100\n\n\
             [judge-check]\n{judge_check}",
            repo("datasets/jeopardy/team-clues.json"),
        ),
    )
    .unwrap();
}

fn mock_models(mock: &MockServer) -> String {
    format!(
        "[models.writer]\nbase-urls = [\"{url}\"]\nmodel-id = \"mock\"\nretry-base-s = 0.01\n\n\
         [models.grader]\nbase-urls = [\"{url}\"]\nmodel-id = \"mock\"\nretry-base-s = 0.01\n",
        url = mock.base_url()
    )
}

fn read(dir: &Path, file: &str) -> String {
    std::fs::read_to_string(dir.join("artifacts/runs/check").join(file)).unwrap_or_default()
}

#[test]
fn a_judge_that_says_correct_to_everything_exits_4_and_says_why() {
    let mock = mock(|_| "CORRECT".to_owned());
    let dir = tempfile::tempdir().unwrap();
    workspace(dir.path(), &mock_models(&mock), "");
    let (code, summary, log) = pipeline(dir.path());
    assert_eq!(code, 4, "{summary}\n{log}");
    assert!(
        log.contains("RIFT answer judge `grader` failed its check")
            && log.contains("specificity 0/"),
        "{log}"
    );
    assert!(summary.contains("**judge failed its check"), "{summary}");
    assert!(
        summary.contains("| rift | grader | RIFT answer judge |"),
        "{summary}"
    );
    // Every stage finished: the report and the tables exist, and the RIFT tables carry the mark.
    let report = read(dir.path(), "report.html");
    assert!(report.contains("judge failed its check"), "report");
    let table2 = read(dir.path(), "tables/rift/rift_table2.md");
    assert!(table2.starts_with("[judge failed its check"), "{table2}");
    let check: serde_json::Value =
        serde_json::from_str(&read(dir.path(), "judge-check.json")).unwrap();
    let c = &check["checks"][0];
    assert_eq!(c["passed"], false);
    assert_eq!(c["sensitivity"]["rate"], 1.0);
    assert_eq!(c["specificity"]["agree"], 0);
    assert!(c["specificity"]["total"].as_u64().unwrap() >= 10, "{c}");
    // The control items are in their own folder and explorer view, in no result.
    let answers = read(dir.path(), "rift/answer-scores.jsonl");
    let controls = read(dir.path(), "rift/judge-check/grader/controls.jsonl");
    assert!(!controls.is_empty());
    for line in controls.lines() {
        let c: serde_json::Value = serde_json::from_str(line).unwrap();
        let id = c["id"].as_str().unwrap();
        assert!(!answers.contains(id), "control {id} among the answers");
    }
    assert!(read(dir.path(), "explorer/judge-check.html").contains("known_incorrect"));
    assert!(!read(dir.path(), "explorer/rift-writer.html").contains("known_incorrect"));
    // Kept on purpose: exit 0, the mark stays.
    let text = std::fs::read_to_string(dir.path().join("run.toml")).unwrap();
    std::fs::write(
        dir.path().join("run.toml"),
        text.replace(
            "[judge-check]\n",
            "[judge-check]\nkeep-failed-judge = true\n",
        ),
    )
    .unwrap();
    let sent = mock.requests();
    let (code, summary, log) = pipeline(dir.path());
    assert_eq!(code, 0, "{summary}\n{log}");
    assert_eq!(mock.requests(), sent, "a rerun sends nothing");
    assert!(summary.contains("kept on purpose"), "{summary}");
    assert!(read(dir.path(), "tables/rift/rift_table2.md").starts_with("[judge failed its check"));
}

#[test]
fn a_sound_judge_passes_and_the_results_are_the_same_with_the_check_on_and_off() {
    let mock = mock(sound_verdict);
    let on = tempfile::tempdir().unwrap();
    workspace(on.path(), &mock_models(&mock), "per-kind = 10\n");
    let (code, summary, log) = pipeline(on.path());
    assert_eq!(code, 0, "{summary}\n{log}");
    assert!(!summary.contains("judge failed its check"), "{summary}");
    let line = summary
        .lines()
        .find(|l| l.starts_with("| rift | grader |"))
        .unwrap_or_else(|| panic!("{summary}"));
    assert!(
        line.contains("10/10 = 100.0 % (95 % CI 72.2–100.0)"),
        "{line}"
    );
    assert!(line.ends_with("| passed |"), "{line}");
    let report = read(on.path(), "report.html");
    assert!(
        report.contains("Judge check") && report.contains("98 %"),
        "report"
    );
    assert!(
        report.contains("10/10 = 100.0 % (95 % CI 72.2–100.0)"),
        "report"
    );
    // The judge check's row in the spend table.
    assert!(
        summary.contains("| RIFT | judge check | grader |"),
        "{summary}"
    );

    let off = tempfile::tempdir().unwrap();
    workspace(off.path(), &mock_models(&mock), "enabled = false\n");
    let (code, summary, log) = pipeline(off.path());
    assert_eq!(code, 0, "{summary}\n{log}");
    assert!(
        !off.path()
            .join("artifacts/runs/check/judge-check.json")
            .exists()
    );
    let mut compared = 0;
    let mut corrected = 0;
    for dir in ["tables/rift", "rift", "figures/rift"] {
        let a = on.path().join("artifacts/runs/check").join(dir);
        for f in std::fs::read_dir(&a).unwrap() {
            let f = f.unwrap().path();
            let ext = f.extension().and_then(|e| e.to_str()).unwrap_or("");
            if !["md", "csv", "jsonl", "parquet", "svg"].contains(&ext) {
                continue;
            }
            let name = f.file_name().unwrap();
            let b = off.path().join("artifacts/runs/check").join(dir).join(name);
            // The judge-corrected tables need the judge's measured errors, so only the checked run has them.
            if name.to_string_lossy().contains("judge_corrected") {
                assert!(!b.exists(), "{} without a check", b.display());
                corrected += 1;
                continue;
            }
            assert_eq!(
                std::fs::read(&f).unwrap(),
                std::fs::read(&b).unwrap(),
                "{} differs with the check on",
                f.display()
            );
            compared += 1;
        }
    }
    assert!(compared >= 8, "{compared} files compared");
    assert!(corrected >= 1, "no judge-corrected table with the check on");
}

/// The embedded SmolLM2-135M as RIFT judge (greedy, a few tokens): it cannot tell right from wrong, and the run
/// says so with exit 4.
#[test]
fn the_embedded_smollm2_as_judge_fails_its_check() {
    let mock = mock(sound_verdict);
    let dir = tempfile::tempdir().unwrap();
    let models = format!(
        "[models.writer]\nbase-urls = [\"{}\"]\nmodel-id = \"mock\"\nretry-base-s = 0.01\n\n\
         [models.grader]\nengine = \"embedded\"\nmodel-id = \"smollm2-135m-instruct\"\ntemperature = 0.0\n\
         max-tokens = 8\nmax-concurrency = 2\ntimeout-s = 300\n",
        mock.base_url()
    );
    workspace(dir.path(), &models, "per-kind = 10\n");
    let (code, summary, log) = pipeline(dir.path());
    // 4, not 3: the tiny model's rambling replies are cached and read the same on a rerun, so they fail its check
    // instead of making the run incomplete; only failed requests would.
    assert_eq!(code, 4, "{summary}\n{log}");
    assert!(!summary.contains("## Incomplete"), "{summary}");
    assert!(
        log.contains("RIFT answer judge `grader` failed its check"),
        "{log}"
    );
    assert!(
        summary.contains("| rift | grader | RIFT answer judge |"),
        "{summary}"
    );
}
