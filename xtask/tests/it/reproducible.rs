//! The offline default run is reproducible (issues 46 and 53): one run of `configs/default.toml` on the embedded
//! model, in a folder of its own with an empty response cache, gives the replies and tables whose SHA-256 digests are
//! committed for the machine's architecture (`reproducible/<arch>.json` beside this file). The digests were
//! recorded by another run, on another day and possibly another machine, so a pass shows that the replies depend
//! neither on the run nor on the machine. Greedy RIFT replies carry no seed; every sampled IFScale reply carries
//! the seed it was sampled with, and no two share one.
//!
//! A change to the engine, the prompts or the scoring that changes replies or tables on purpose is recorded again
//! with one command, `IFSTRESS_RECORD_DIGESTS=1 cargo test -p xtask --test it reproducible` (docs/testing.md): it
//! writes the file from the fresh run instead of comparing. Without a file for the running architecture the test
//! fails and says so; it never skips.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::repo;
use schema::{Outcome, ResponseRecord, Usage};
use serde::{Deserialize, Serialize};

/// Set to 1 to write the running architecture's digest file from the fresh run instead of comparing with it.
const RECORD: &str = "IFSTRESS_RECORD_DIGESTS";

/// The committed digests of one architecture: `reproducible/<arch>.json`.
#[derive(Debug, Serialize, Deserialize)]
struct Digests {
    /// How the file was made (not compared): the command, and the CPU features the engine was built for.
    recorded_with: String,
    recorded_on: String,
    /// Per benchmark, each reply by `<prompt id>#<sample index>`: the SHA-256 of its [`Reply`] as one JSON line.
    replies: BTreeMap<String, BTreeMap<String, String>>,
    /// Each table file below the run's `tables/`, by relative path: the SHA-256 of its bytes as [`tables`] reads them.
    tables: BTreeMap<String, String>,
}

/// Where the digests of the running architecture are committed.
fn digest_file() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/reproducible")
        .join(format!("{}.json", std::env::consts::ARCH))
}

/// The command that records the digests again.
const RECORD_COMMAND: &str = "IFSTRESS_RECORD_DIGESTS=1 cargo test -p xtask --test it reproducible";

/// Runs the default config in a fresh folder, the repository's `configs` and `datasets` linked in, everything the
/// run writes (the response cache included) inside the folder, and checks that it succeeded.
fn default_run() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for d in ["configs", "datasets"] {
        std::os::unix::fs::symlink(repo(d), dir.path().join(d)).unwrap();
    }
    let status = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .current_dir(dir.path())
        .args(["pipeline", "--no-progress"])
        .env("NO_COLOR", "1")
        // No screenshot of the report: a test does not need Chromium.
        .env("PATH", "/nonexistent")
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(dir.path().join("pipeline.log")).unwrap())
        .status()
        .unwrap();
    let log = std::fs::read_to_string(dir.path().join("pipeline.log")).unwrap_or_default();
    assert_eq!(status.code(), Some(0), "{log}");
    dir
}

/// What a reply is, without how long it took or whether it came from the cache.
#[derive(Debug, Serialize)]
struct Reply {
    id: String,
    sample_index: u32,
    outcome: Outcome,
    content: Option<String>,
    finish_reason: Option<String>,
    usage: Usage,
    seed: Option<u64>,
}

impl Reply {
    fn key(&self) -> String {
        format!("{}#{}", self.id, self.sample_index)
    }

    fn digest(&self) -> String {
        schema::sha256_hex(serde_json::to_string(self).unwrap().as_bytes())
    }
}

/// A benchmark's replies in a run, by prompt id and sample index (the responses file is in the order the answers
/// came, which the engine's parallel sequences may change from run to run).
fn replies(run: &Path, benchmark: &str) -> Vec<Reply> {
    let file = run
        .join("artifacts/runs/default")
        .join(benchmark)
        .join("models/smollm2-135m/responses.jsonl");
    let records: Vec<ResponseRecord> = schema::read_jsonl(&file).unwrap();
    assert!(!records.is_empty(), "{} is empty", file.display());
    let mut replies: Vec<Reply> = records
        .into_iter()
        .map(|r| {
            assert!(!r.cached, "{}: served from a cache", r.id);
            Reply {
                id: r.id,
                sample_index: r.sample_index,
                outcome: r.outcome,
                content: r.content,
                finish_reason: r.finish_reason,
                usage: r.usage,
                seed: r.served.and_then(|s| s.seed),
            }
        })
        .collect();
    replies.sort_by(|x, y| (&x.id, x.sample_index).cmp(&(&y.id, y.sample_index)));
    replies
}

/// Every table file (Markdown, CSV, JSON) below `dir`, by path relative to it, with its bytes as compared: measured
/// times differ from run to run, so the `latency` and `acc_per_latency` columns of a CSV are left out, and the
/// Markdown and JSON renderings of a table with a latency column are not compared (its CSV holds the rest).
fn tables(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_owned()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path);
                continue;
            }
            let Some(ext) = path.extension().and_then(|e| e.to_str()) else {
                continue;
            };
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            let timed = text.contains("latency");
            let bytes = match ext {
                "csv" if timed => without_timing(&text).into_bytes(),
                "csv" => text.into_bytes(),
                "md" | "json" if !timed => text.into_bytes(),
                _ => continue,
            };
            let rel = path.strip_prefix(dir).unwrap().display().to_string();
            out.insert(rel, bytes);
        }
    }
    out
}

/// A CSV table without its `latency` and `acc_per_latency` columns (the tables that have them hold numbers only).
fn without_timing(csv: &str) -> String {
    let header = csv.lines().next().unwrap_or_default();
    let keep: Vec<bool> = header
        .split(',')
        .map(|h| !matches!(h, "latency" | "acc_per_latency"))
        .collect();
    csv.lines()
        .map(|line| {
            line.split(',')
                .zip(&keep)
                .filter(|(_, k)| **k)
                .map(|(cell, _)| cell)
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The seeds the replies carry: IFScale samples at temperature 0.7, so every reply says its seed and no two
/// samples share one; RIFT decodes greedily, so none has a seed.
fn check_seeds(benchmark: &str, replies: &[Reply]) {
    let seeds: Vec<u64> = replies.iter().filter_map(|r| r.seed).collect();
    match benchmark {
        "ifscale" => {
            assert_eq!(seeds.len(), replies.len(), "{replies:?}");
            let mut distinct = seeds.clone();
            distinct.sort_unstable();
            distinct.dedup();
            assert_eq!(distinct.len(), replies.len(), "{replies:?}");
        }
        _ => assert!(seeds.is_empty(), "{replies:?}"),
    }
}

/// The keys on which two digest maps differ: changed, only in the recorded ones, only in the fresh ones.
fn differences(
    recorded: &BTreeMap<String, String>,
    fresh: &BTreeMap<String, String>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (k, v) in recorded {
        match fresh.get(k) {
            Some(f) if f == v => {}
            Some(_) => out.push(format!("{k} differs")),
            None => out.push(format!("{k} is missing from the fresh run")),
        }
    }
    for k in fresh.keys().filter(|k| !recorded.contains_key(*k)) {
        out.push(format!("{k} is new (not recorded)"));
    }
    out
}

/// The first problems in full, then how many more there are.
fn shown(problems: &[String]) -> String {
    const SHOWN: usize = 12;
    let mut text = problems[..problems.len().min(SHOWN)].join("\n");
    if problems.len() > SHOWN {
        text.push_str(&format!("\n… and {} more", problems.len() - SHOWN));
    }
    text
}

#[test]
fn a_fresh_default_run_gives_the_recorded_replies_and_tables() {
    let file = digest_file();
    let record = std::env::var(RECORD).is_ok_and(|v| v == "1");
    // Read before the run, so a missing file is said at once rather than after the run's minutes.
    let recorded: Option<Digests> = (!record).then(|| {
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| {
            panic!(
                "no digests are recorded for this architecture ({}): {}: {e}. Record them from a fresh default run \
                 with `{RECORD_COMMAND}` and commit the file.",
                std::env::consts::ARCH,
                file.display(),
            )
        });
        serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{}: not a digest file: {e}", file.display()))
    });
    let run = default_run();
    let mut fresh = Digests {
        recorded_with: RECORD_COMMAND.to_owned(),
        recorded_on: local_model::cpu::CpuReport::detect().summary(),
        replies: BTreeMap::new(),
        tables: BTreeMap::new(),
    };
    let mut contents: BTreeMap<String, Option<String>> = BTreeMap::new();
    for benchmark in ["ifscale", "rift"] {
        let replies = replies(run.path(), benchmark);
        check_seeds(benchmark, &replies);
        let digests = replies.iter().map(|r| (r.key(), r.digest())).collect();
        fresh.replies.insert(benchmark.to_owned(), digests);
        for r in replies {
            contents.insert(format!("{benchmark}/{}", r.key()), r.content);
        }
    }
    let tables = tables(&run.path().join("artifacts/runs/default/tables"));
    assert!(tables.len() > 20, "{} table files", tables.len());
    fresh.tables = tables
        .iter()
        .map(|(path, bytes)| (path.clone(), schema::sha256_hex(bytes)))
        .collect();

    let Some(recorded) = recorded else {
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        let mut text = serde_json::to_string_pretty(&fresh).unwrap();
        text.push('\n');
        std::fs::write(&file, text).unwrap();
        // The one line a recording run prints: where the digests went (the test passes without a comparison).
        #[allow(clippy::print_stderr)]
        {
            eprintln!("recorded the digests of this run in {}", file.display());
        }
        return;
    };

    let mut problems = Vec::new();
    let benchmarks: std::collections::BTreeSet<&String> = recorded
        .replies
        .keys()
        .chain(fresh.replies.keys())
        .collect();
    let empty = BTreeMap::new();
    for b in benchmarks {
        let (r, f) = (
            recorded.replies.get(b).unwrap_or(&empty),
            fresh.replies.get(b).unwrap_or(&empty),
        );
        for d in differences(r, f) {
            let key = d.split(' ').next().unwrap_or_default();
            let reply = contents.get(&format!("{b}/{key}")).cloned().flatten();
            problems.push(format!("reply {b}/{d}; the fresh run's reply: {reply:?}"));
        }
    }
    for d in differences(&recorded.tables, &fresh.tables) {
        let path = d.split(' ').next().unwrap_or_default();
        let now = tables
            .get(path)
            .map(|b| String::from_utf8_lossy(b).into_owned());
        problems.push(format!(
            "table {d}; the fresh run's:\n{}",
            now.unwrap_or_default()
        ));
    }
    assert!(
        problems.is_empty(),
        "the fresh default run differs from the digests recorded in {} (on {}) in {} places:\n{}\n\nIf the engine, \
         the prompts or the scoring changed on purpose, record the digests again with `{RECORD_COMMAND}` and commit \
         the file.",
        file.display(),
        recorded.recorded_on,
        problems.len(),
        shown(&problems),
    );
}
