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
         max-attempts = 2\n\n\
         [rift-prep]\ninputs = [\"{}\"]\n\n\
         [judges.coherence]\nmodel = \"coherence\"\ncontrols = \"{}\"\n\n\
         [judges.rift]\nmodel = \"grader\"\n\n\
         [rift]\nseed = 7\ndataset = \"artifacts/jeopardy/questions.jsonl\"\nlinear-prompts = 2\njumping-prompts = 2\n\
         baseline-prompts = 6\nnum-min = 10\nnum-max = 12\nmax-jump-distance = 18\nmax-tokens = 200\n\n\
         [judge-check]\nkeep-failed-judge = true\n",
        repo("datasets/vocab/ifscale-paper.txt"),
        repo("configs/prompts/ifscale-report.txt"),
        repo("datasets/jeopardy/team-clues.json"),
        repo("datasets/ifscale-coherence/coherent.jsonl"),
    );
    std::fs::write(dir.join("run.toml"), config).unwrap();
}

/// IFScale reports, coherence verdicts and RIFT grades, the same for every request.
pub(crate) fn mock() -> MockServer {
    MockServer::start(mock_config(), 0).unwrap()
}

/// The configuration of [`mock`], for a test that adds to it (`slurm.rs` adds a responder).
pub(crate) fn mock_config() -> MockConfig {
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
    cfg
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
pub(crate) fn outputs(run: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
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
    if let Ok(check) = std::fs::read(run.join("judge-check.json")) {
        all.insert("judge-check.json".into(), check);
    }
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
    // Every answer was asked for by one shard, and the judge checks' control items by shard 0 alone, except that a
    // judge prompt common to items of two shards (the same answer to the same question) may be sent by both when
    // they run at the same time; the merge keeps one.
    let sharded = mock.requests() - single;
    assert!(
        (single..=single + 4).contains(&sharded),
        "{sharded} requests for {single}"
    );
    let shard = |i: usize| format!("artifacts/runs/split-shard-{i}-of-3");

    // A task resubmitted alone (`sbatch --array=1 …`) sees the submission's own minimum and count. `--shard auto`
    // once read them and ran the whole run as shard 0/1; without N it is refused, and `auto/3` resumes shard 1.
    let resubmitted = |spec: &str| {
        xtask(
            split.path(),
            &[
                "pipeline",
                "--config",
                "run.toml",
                "--no-progress",
                "--shard",
                spec,
            ],
        )
        .envs([
            ("SLURM_ARRAY_JOB_ID", "41"),
            ("SLURM_ARRAY_TASK_ID", "1"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_TASK_MAX", "1"),
            ("SLURM_ARRAY_TASK_COUNT", "1"),
        ])
        .output()
        .unwrap()
    };
    let before = mock.requests();
    let out = resubmitted("auto");
    assert_eq!(out.status.code(), Some(2), "{}", output(&out));
    assert!(output(&out).contains("--shard auto/N"), "{}", output(&out));
    let out = resubmitted("auto/3");
    assert!(out.status.success(), "{}", output(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("shard 1/3:"),
        "{}",
        output(&out)
    );
    // A split that contradicts the run's shard folders is refused before anything is written.
    let out = resubmitted("0/1");
    assert_eq!(out.status.code(), Some(2), "{}", output(&out));
    assert!(
        output(&out).contains("already split another way"),
        "{}",
        output(&out)
    );
    assert!(
        !split
            .path()
            .join("artifacts/runs/split-shard-0-of-1")
            .exists()
    );
    assert_eq!(
        mock.requests(),
        before,
        "resuming a finished shard sends nothing"
    );
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

/// The requests of each dry-run row (stage, model), summed over rows with the same name.
fn dry_rows(text: &str) -> BTreeMap<(String, String), u64> {
    let mut rows = BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with('|')) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if let (Some(stage), Some(model), Some(Ok(n))) = (
            cells.get(1),
            cells.get(2),
            cells.get(3).map(|c| c.parse::<u64>()),
        ) {
            *rows
                .entry((stage.to_string(), model.to_string()))
                .or_insert(0) += n;
        }
    }
    rows
}

#[test]
fn a_shards_dry_run_estimates_its_share_and_the_shares_add_up_to_the_run() {
    let mock = mock();
    let dir = tempfile::tempdir().unwrap();
    workspace(dir.path(), &mock, "mock");
    let dry = |shard: Option<&str>| {
        let mut args = vec![
            "pipeline",
            "--config",
            "run.toml",
            "--dry-run",
            "--no-progress",
        ];
        if let Some(s) = shard {
            args.extend(["--shard", s]);
        }
        let out = xtask(dir.path(), &args).output().unwrap();
        assert!(out.status.success(), "{}", output(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let whole = dry_rows(&dry(None));
    let generation: Vec<&(String, String)> = whole
        .keys()
        .filter(|(stage, _)| stage.contains("generation") || stage.contains("generate"))
        .collect();
    assert!(!generation.is_empty(), "{whole:?}");
    let mut sum: BTreeMap<(String, String), u64> = BTreeMap::new();
    for i in 0..3 {
        let text = dry(Some(&format!("{i}/3")));
        assert!(text.contains(&format!("shard {i}/3: ")), "{text}");
        assert!(text.contains("the rows are this shard's share"), "{text}");
        for (key, n) in dry_rows(&text) {
            if generation.contains(&&key) {
                assert!(
                    n < whole[&key],
                    "shard {i}/3 {key:?}: {n} of {}",
                    whole[&key]
                );
            }
            *sum.entry(key).or_insert(0) += n;
        }
    }
    for key in generation {
        assert_eq!(
            sum[key], whole[key],
            "{key:?}: the shards' rows add up to the run's"
        );
    }
    assert_eq!(mock.requests(), 0, "a dry run sends nothing");
}
