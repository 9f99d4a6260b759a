//! A run split into shards: both benchmarks, two models and both judges on the mock provider, as three shards in
//! separate processes at the same time on one response cache, merged with `cargo xtask merge` and compared byte for
//! byte with the same run made whole; a missing or doubled shard is one error naming it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mock_provider::{MockConfig, MockServer};

use crate::repo;

pub(crate) fn xtask(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_xtask"));
    cmd.current_dir(dir)
        .args(args)
        .env("NO_COLOR", "1")
        // No screenshot of the report: a test does not need Chromium.
        .env("PATH", "/nonexistent");
    cmd
}

pub(crate) fn output(out: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A workspace in `dir`: the prompt files, a models file whose models the mock serves (`writer` under `writer_id`),
/// and the run's config.
pub(crate) fn workspace(dir: &Path, mock: &MockServer, writer_id: &str) {
    let prompts = dir.join("configs/prompts");
    std::fs::create_dir_all(&prompts).unwrap();
    for f in std::fs::read_dir(repo("configs/prompts")).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, prompts.join(f.file_name().unwrap())).unwrap();
    }
    let mut models = String::new();
    for name in ["writer", "second", "coherence", "grader"] {
        let id = if name == "writer" { writer_id } else { "mock" };
        models.push_str(&format!(
            "[models.{name}]\nbase-urls = [\"{}\"]\nmodel-id = \"{id}\"\nmax-tokens = 300\nretry-base-s = 0.01\n\n",
            mock.base_url()
        ));
    }
    std::fs::write(dir.join("models.toml"), models).unwrap();
    let config = format!(
        "[run]\nname = \"split\"\nmodels-file = \"models.toml\"\nmodels = [\"writer\", \"second\"]\ncache = \"cache.sqlite\"\n\n\
         [ifscale]\ngrid = [10, 20]\nseeds = [0, 1]\nsampling = \"paper\"\nvocab = \"{}\"\ntemplate = \"{}\"\n\
         max-attempts = 2\njudge-model = \"coherence\"\n\n\
         [rift-prep]\ninputs = [\"{}\"]\njudge-model = \"grader\"\n\n\
         [rift]\nseed = 7\ndataset = \"artifacts/jeopardy/questions.jsonl\"\nlinear-prompts = 2\njumping-prompts = 2\n\
         baseline-prompts = 6\nnum-min = 10\nnum-max = 12\nmax-jump-distance = 18\nmax-tokens = 200\n\n\
         [judge-check]\nenabled = false\n",
        repo("datasets/vocab/ifscale-paper.txt"),
        repo("configs/prompts/ifscale-report.txt"),
        repo("datasets/jeopardy/team-clues.json"),
    );
    std::fs::write(dir.join("run.toml"), config).unwrap();
}

/// IFScale reports, coherence verdicts and RIFT grades, the same for every request.
pub(crate) fn mock() -> MockServer {
    let mut cfg = MockConfig::new();
    cfg.replies = vec![
        (
            "professional business report".to_owned(),
            vec!["<report>\n# Results\n\nRevenue rose and the margin widened on every product line.\n</report>".to_owned()],
        ),
        (
            "Reply with one JSON object".to_owned(),
            vec![r#"{"reason": "A coherent report.", "score": 8}"#.to_owned()],
        ),
        (
            "You grade answers to trivia questions".to_owned(),
            vec!["CORRECT".to_owned()],
        ),
    ];
    MockServer::start(cfg, 0).unwrap()
}

/// Every file under `root/sub`, by path relative to `root`.
fn files(root: &Path, sub: &str, into: &mut BTreeMap<PathBuf, Vec<u8>>) {
    let dir = root.join(sub);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    for e in entries {
        let p = e.unwrap().path();
        let rel = p.strip_prefix(root).unwrap().to_owned();
        if p.is_dir() {
            files(root, rel.to_str().unwrap(), into);
        } else {
            into.insert(rel, std::fs::read(&p).unwrap());
        }
    }
}

/// The run's tables, figures and `summary.md`, with the one line that legitimately differs (the wall time) and two
/// columns of the cost table taken out of the summary: output tokens per second (measured latency), and how many
/// requests the cache answered (shards running at once on one cache may each send a request that another shard is
/// about to cache, so the count depends on timing; the answers do not).
fn outputs(run: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut all = BTreeMap::new();
    files(run, "tables", &mut all);
    files(run, "figures", &mut all);
    let summary = std::fs::read_to_string(run.join("summary.md")).unwrap();
    let summary: Vec<String> = summary
        .lines()
        .filter(|l| !l.contains("Finished in"))
        .map(|l| {
            if !(l.starts_with("| IFScale |") || l.starts_with("| RIFT |")) {
                return l.to_owned();
            }
            // The cost table's fifth column, requests from the cache, and tenth, output tokens per second.
            let mut cells: Vec<&str> = l.split('|').collect();
            cells[5] = " (cache) ";
            cells[10] = " (latency) ";
            cells.join("|")
        })
        .collect();
    all.insert("summary.md".into(), summary.join("\n").into_bytes());
    all
}

#[test]
fn three_shards_at_once_merge_into_the_single_run_and_a_missing_or_doubled_shard_is_named() {
    let mock = mock();
    let whole = tempfile::tempdir().unwrap();
    workspace(whole.path(), &mock, "mock");
    let out = xtask(
        whole.path(),
        &["pipeline", "--config", "run.toml", "--no-progress"],
    )
    .output()
    .unwrap();
    assert!(out.status.success(), "{}", output(&out));
    let single = mock.requests();

    let split = tempfile::tempdir().unwrap();
    workspace(split.path(), &mock, "mock");
    // Three processes at the same time, on one response cache.
    let children: Vec<_> = (0..3)
        .map(|i| {
            let shard = format!("{i}/3");
            xtask(
                split.path(),
                &[
                    "pipeline",
                    "--config",
                    "run.toml",
                    "--no-progress",
                    "--shard",
                    &shard,
                ],
            )
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", output(&out));
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("units"),
            "{}",
            output(&out)
        );
    }
    // Every answer was asked for by one shard, except that a judge prompt common to items of two shards (the same
    // answer to the same question) may be sent by both when they run at the same time; the merge keeps one.
    let sharded = mock.requests() - single;
    assert!(
        (single..=single + 4).contains(&sharded),
        "{sharded} requests for {single}"
    );
    let shard = |i: usize| format!("artifacts/runs/split-shard-{i}-of-3");
    let merge = |shards: &[String]| {
        let mut args = vec![
            "merge",
            "--config",
            "run.toml",
            "--no-progress",
            "--out",
            "artifacts/runs/split",
        ];
        args.extend(shards.iter().map(String::as_str));
        xtask(split.path(), &args).output().unwrap()
    };

    // A missing shard and a doubled one: one usage error naming each, and nothing merged.
    let out = merge(&[shard(0), shard(0)]);
    assert_eq!(out.status.code(), Some(2), "{}", output(&out));
    let text = output(&out);
    assert!(text.contains("shard 0/3 is given 2 times"), "{text}");
    assert!(
        text.contains("shard 1/3 is missing") && text.contains("shard 2/3 is missing"),
        "{text}"
    );
    assert!(!split.path().join("artifacts/runs/split").exists());

    let before = mock.requests();
    let out = merge(&[shard(2), shard(0), shard(1)]);
    assert!(out.status.success(), "{}", output(&out));
    assert_eq!(mock.requests(), before, "the merge sends nothing");
    let a = outputs(&whole.path().join("artifacts/runs/split"));
    let b = outputs(&split.path().join("artifacts/runs/split"));
    assert!(
        a.keys().any(|k| k.starts_with("figures")) && a.keys().any(|k| k.starts_with("tables"))
    );
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (path, bytes) in &a {
        assert!(
            &b[path] == bytes,
            "{} differs:\n{}\n---\n{}",
            path.display(),
            String::from_utf8_lossy(bytes),
            String::from_utf8_lossy(&b[path])
        );
    }
}
