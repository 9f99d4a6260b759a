//! The paper configs on a machine without the papers' data: the RIFT paper config's dry run on a fresh tree and
//! after another config prepared its questions (it estimates from the published counts and says so), its run
//! stopping with one line that says what the missing clue file is, and prepared questions that belong to the inputs
//! they were made from (a config that shares the path prepares them again).

use crate::repo;
use std::path::Path;
use std::process::{Command, Output};

use mock_provider::{MockConfig, MockServer};

/// Runs `cargo xtask <args>` in `dir` (no progress bars, plain logs, no Chromium).
fn xtask(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .current_dir(dir)
        .args(args)
        .arg("--no-progress")
        .env("NO_COLOR", "1")
        .env("PATH", "/nonexistent")
        .output()
        .unwrap()
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The repository's `configs/` folder (configs, models files, prompts), copied into `dir`.
fn copy_configs(dir: &Path) {
    for sub in ["configs", "configs/prompts"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
        for f in std::fs::read_dir(repo(sub)).unwrap() {
            let f = f.unwrap().path();
            if f.is_file() {
                std::fs::copy(&f, dir.join(sub).join(f.file_name().unwrap())).unwrap();
            }
        }
    }
}

/// The RIFT paper config's dry run, with its rows' request counts checked against the published counts and its
/// config (10 000 + 10 000 prompts of 10–300 questions, every question as a baseline, six models).
fn assert_published_estimate(dir: &Path, config: &str) -> String {
    let out = xtask(dir, &["pipeline", "--config", config, "--dry-run"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains(
            "RIFT: estimated from the published counts (216 930 raw clues to rephrase, 83 453 questions), \
             because the clue file datasets/jeopardy/JEOPARDY_QUESTIONS1.json is not there"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("| rift rephrase | rift-judge | 216930 |"),
        "{stdout}"
    );
    for model in ["gpt-oss-20b", "qwen3-30b-a3b-instruct"] {
        assert!(
            stdout.contains(&format!("| rift generation | {model} | 103453 |")),
            "{model}: {stdout}"
        );
    }
    // 20 000 prompts of 155 questions on average and 83 453 baselines, for each of six models (one judge row per
    // model's answers).
    let judged: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("| rift judge | rift-judge | "))
        .collect();
    assert_eq!(judged.len(), 6, "{stdout}");
    let answers = 20_000 * 155 + 83_453;
    for row in judged {
        assert!(row.contains(&format!("| {answers} |")), "{row}");
    }
    assert!(
        stdout.contains("RIFT baseline: all 83453 questions of the dataset."),
        "{stdout}"
    );
    stdout
}

#[test]
fn the_rift_paper_dry_run_works_on_a_fresh_tree_and_its_run_says_what_the_missing_file_is() {
    let dir = tempfile::tempdir().unwrap();
    copy_configs(dir.path());
    let stdout = assert_published_estimate(dir.path(), "configs/rift-paper.toml");
    assert!(!stdout.contains("prepared from other inputs"), "{stdout}");
    // The run itself stops before sending anything, with one line naming the file, its layouts and the README.
    let out = xtask(
        dir.path(),
        &["pipeline", "--config", "configs/rift-paper.toml"],
    );
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let last = stderr.lines().last().unwrap_or_default();
    for part in [
        "datasets/jeopardy/JEOPARDY_QUESTIONS1.json: no such file",
        "216 930-clue JSON",
        "CSV twin",
        "README's \"Reproducing the papers\"",
    ] {
        assert!(last.contains(part), "{part}: {stderr}");
    }
    assert!(!dir.path().join("artifacts/jeopardy").exists());
}

/// A RIFT-only run of the default config's data (the team-written clues) on the mock.
fn default_like(dataset_inputs: &str) -> String {
    format!(
        "[run]\nname = \"small\"\nmodels-file = \"models.toml\"\nmodels = [\"writer\"]\ncache = \"cache.sqlite\"\n\n\
         [rift-prep]\ninputs = [\"{dataset_inputs}\"]\n\n\
         [rift]\nseed = 7\ndataset = \"artifacts/jeopardy/questions.jsonl\"\nlinear-prompts = 1\njumping-prompts = 1\n\
         baseline-prompts = 3\nnum-min = 10\nnum-max = 12\nmax-jump-distance = 18\nmax-tokens = 50\n\n\
         [judge-check]\nenabled = false\n"
    )
}

#[test]
fn after_a_default_prep_the_rift_paper_dry_run_uses_none_of_its_questions() {
    let mock = MockServer::start(MockConfig::new(), 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    copy_configs(d);
    std::fs::create_dir_all(d.join("datasets/jeopardy")).unwrap();
    let team = d.join("datasets/jeopardy/team-clues.json");
    std::fs::copy(repo("datasets/jeopardy/team-clues.json"), &team).unwrap();
    std::fs::write(
        d.join("models.toml"),
        format!(
            "[models.writer]\nbase-urls = [\"{}\"]\nmodel-id = \"mock\"\nmax-tokens = 50\nretry-base-s = 0.01\n",
            mock.base_url()
        ),
    )
    .unwrap();
    std::fs::write(
        d.join("small.toml"),
        default_like("datasets/jeopardy/team-clues.json"),
    )
    .unwrap();
    let out = xtask(d, &["pipeline", "--config", "small.toml"]);
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    let questions = d.join("artifacts/jeopardy/questions.jsonl");
    let count = |p: &Path| std::fs::read_to_string(p).unwrap().lines().count();
    let team_questions = count(&questions);
    assert!(team_questions > 100, "{team_questions}");
    assert!(d.join("artifacts/jeopardy/prepared-from.json").is_file());

    // The paper config as shipped has its own folder; the same config pointed at the default's path sees that
    // the file there was prepared from other inputs. Both estimate from the published counts.
    let stdout = assert_published_estimate(d, "configs/rift-paper.toml");
    assert!(!stdout.contains("prepared from other inputs"), "{stdout}");
    let shared = std::fs::read_to_string(d.join("configs/rift-paper.toml"))
        .unwrap()
        .replace(
            "artifacts/jeopardy/rift-paper/questions.jsonl",
            "artifacts/jeopardy/questions.jsonl",
        );
    std::fs::write(d.join("configs/rift-paper-shared.toml"), shared).unwrap();
    let stdout = assert_published_estimate(d, "configs/rift-paper-shared.toml");
    assert!(
        stdout.contains(
            "RIFT: artifacts/jeopardy/questions.jsonl was prepared from other inputs than this config's"
        ),
        "{stdout}"
    );
    assert_eq!(
        count(&questions),
        team_questions,
        "a dry run writes nothing"
    );

    // A config with other clues at the same path prepares them again, and so does the first one after it: each
    // run reads only questions made from its own inputs.
    let clues: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(&team).unwrap()).unwrap();
    let fewer = d.join("datasets/jeopardy/fewer.json");
    std::fs::write(&fewer, serde_json::to_string(&clues[..60]).unwrap()).unwrap();
    std::fs::write(
        d.join("fewer.toml"),
        default_like("datasets/jeopardy/fewer.json").replace("\"small\"", "\"fewer\""),
    )
    .unwrap();
    let out = xtask(d, &["pipeline", "--config", "fewer.toml"]);
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    let fewer_questions = count(&questions);
    assert!(
        fewer_questions <= 60 && fewer_questions > 30,
        "{fewer_questions}"
    );
    let out = xtask(d, &["pipeline", "--config", "small.toml"]);
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    assert_eq!(count(&questions), team_questions);
}

/// A business report long enough for the retry rules, and the coherence judge's verdict on it.
const REPORT: &str = "<report>\n# Results\n\nOur revenue rose this year because the team widened the margin on every \
    product line, and the board expects the same discipline to carry the company through the next two quarters while \
    the outlook for every segment stays stable and strong. Costs fell in the plants we rebuilt, the sales teams \
    opened new accounts in three regions, and the cash we kept lets us invest without new debt.\n</report>";

/// `configs/models-paper.toml` with every model served by `mock` (prices and model ids as they are, no API key).
fn paper_models_on(mock: &MockServer, dir: &Path) {
    let text = std::fs::read_to_string(repo("configs/models-paper.toml")).unwrap();
    let models: String = text
        .lines()
        .filter(|l| !l.starts_with("api-key-env"))
        .map(|l| {
            if l.starts_with("base-urls") {
                format!(
                    "base-urls = [\"{}\"]\nretry-base-s = 0.01\n",
                    mock.base_url()
                )
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    std::fs::write(dir.join("configs/models-paper.toml"), models).unwrap();
}

/// `expected (low–high)` after `label` in `text`, as numbers.
fn span_after(text: &str, label: &str) -> (f64, f64, f64) {
    let rest = &text[text
        .find(label)
        .unwrap_or_else(|| panic!("{label}: {text}"))
        + label.len()..];
    let (expected, rest) = rest.split_once(" (").unwrap();
    let (low, rest) = rest.split_once('–').unwrap();
    let high = rest.split_once(')').unwrap().0;
    let num = |s: &str| {
        s.trim()
            .parse::<f64>()
            .unwrap_or_else(|e| panic!("{s}: {e}"))
    };
    (num(expected), num(low), num(high))
}

#[test]
fn the_ifscale_paper_pilot_prints_an_expected_cost_with_a_range_and_the_run_reuses_its_answers() {
    let mut cfg = MockConfig::new();
    cfg.replies = vec![
        (
            "professional business report".to_owned(),
            vec![REPORT.to_owned()],
        ),
        (
            "Reply with one JSON object".to_owned(),
            vec![r#"{"reason": "A coherent report.", "score": 8}"#.to_owned()],
        ),
    ];
    let mock = MockServer::start(cfg, 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    copy_configs(d);
    paper_models_on(&mock, d);
    std::fs::create_dir_all(d.join("datasets/vocab")).unwrap();
    std::fs::copy(
        repo("datasets/vocab/ifscale-paper.txt"),
        d.join("datasets/vocab/ifscale-paper.txt"),
    )
    .unwrap();
    let config = ["--config", "configs/ifscale-paper.toml"];
    let out = xtask(d, &[&["pipeline", "--pilot"], &config[..]].concat());
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    // 24 configurations, 3 samples each, every report accepted at its first attempt and judged once; the mock
    // writes the same report for every model, so the judge's requests after the first model's come from the cache.
    let sent = 24 * 3 + 3;
    assert_eq!(mock.requests(), sent, "{stdout}");
    let (expected, low, high) = span_after(&stdout, "Expected cost of the run: ");
    assert!(
        low > 0.0 && low < expected && expected < high,
        "{low} {expected} {high}: {stdout}"
    );
    assert!(
        stdout.contains(
            "| ifscale generation | claude-opus-4 | 3 samples, 3 requests | 250 samples |"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "| ifscale coherence judge | o4-mini-judge | 3 samples, 3 requests | 250 samples |"
        ),
        "{stdout}"
    );
    // Each row's cost range scales the pilot's lightest and heaviest sample by the run's 250.
    let (row_expected, row_low, row_high) = span_after(
        stdout
            .lines()
            .find(|l| l.starts_with("| ifscale generation | gpt-4o |"))
            .unwrap()
            .rsplit(" | ")
            .next()
            .unwrap(),
        "",
    );
    assert!(
        row_low < row_expected && row_expected < row_high,
        "{stdout}"
    );
    let ledger =
        std::fs::read_to_string(d.join("artifacts/runs/ifscale-paper/spend.jsonl")).unwrap();
    assert_eq!(
        ledger.lines().count() as u64,
        sent,
        "every request the pilot paid for is in the run's ledger"
    );

    // A second pilot is answered from the cache and expects the same.
    let again = xtask(d, &[&["pipeline", "--pilot"], &config[..]].concat());
    assert_eq!(again.status.code(), Some(0));
    assert_eq!(mock.requests(), sent, "a second pilot sends nothing");
    assert_eq!(
        span_after(&text(&again).0, "Expected cost of the run: "),
        (expected, low, high)
    );
    // The run counts the pilot's answers as done: its dry run has 3 fewer first attempts per model to send.
    let dry = xtask(d, &[&["pipeline", "--dry-run"], &config[..]].concat());
    let (stdout, stderr) = text(&dry);
    assert_eq!(dry.status.code(), Some(0), "{stderr}");
    assert!(
        stdout.contains("| ifscale generation | claude-opus-4 | 247 |"),
        "{stdout}"
    );
}

/// The RIFT pilot: three prompts of each structure (linear, jumping, baseline) from the prepared-in-memory team
/// clues, an expected cost scaled per structure, and a run that then sends only the prompts the pilot did not.
#[test]
fn the_rift_pilot_samples_each_structure_and_the_run_sends_only_the_rest() {
    let mock = MockServer::start(MockConfig::new(), 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    copy_configs(d);
    std::fs::create_dir_all(d.join("datasets/jeopardy")).unwrap();
    std::fs::copy(
        repo("datasets/jeopardy/team-clues.json"),
        d.join("datasets/jeopardy/team-clues.json"),
    )
    .unwrap();
    std::fs::write(
        d.join("models.toml"),
        format!(
            "[models.writer]\nbase-urls = [\"{}\"]\nmodel-id = \"mock\"\nmax-tokens = 50\nretry-base-s = 0.01\n\
             price-in-per-mtok = 1000.0\nprice-out-per-mtok = 4000.0\n",
            mock.base_url()
        ),
    )
    .unwrap();
    let config = default_like("datasets/jeopardy/team-clues.json")
        .replace(
            "linear-prompts = 1\njumping-prompts = 1",
            "linear-prompts = 4\njumping-prompts = 5",
        )
        .replace("baseline-prompts = 3", "baseline-prompts = 6");
    std::fs::write(d.join("small.toml"), config).unwrap();
    let out = xtask(d, &["pipeline", "--config", "small.toml", "--pilot"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_eq!(mock.requests(), 9, "three prompts of each structure");
    assert!(
        stdout.contains("| rift generation | writer | 9 prompts, 9 requests | 15 prompts |"),
        "{stdout}"
    );
    let (expected, low, high) = span_after(&stdout, "Expected cost of the run: ");
    assert!(low > 0.0 && low <= expected && expected <= high, "{stdout}");
    // The pilot wrote nothing of the run's own: the prepared file does not exist yet, and the run prepares it.
    assert!(!d.join("artifacts/jeopardy/questions.jsonl").exists());
    let out = xtask(d, &["pipeline", "--config", "small.toml"]);
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    assert_eq!(
        mock.requests(),
        15,
        "the run sends only the 6 prompts the pilot did not"
    );
}
