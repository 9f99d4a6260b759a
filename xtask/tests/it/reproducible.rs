//! The offline default run is reproducible (issue 46): two runs of `configs/default.toml` on the embedded model, at
//! once, each in a folder of its own with an empty response cache, give byte-identical replies and tables. Greedy
//! RIFT replies carry no seed; every sampled IFScale reply carries the seed it was sampled with.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::repo;
use schema::{Outcome, ResponseRecord, Usage};

/// Starts the default config in a fresh folder: the repository's `configs` and `datasets` linked in, everything the
/// run writes (the response cache included) inside the folder.
fn start_default_run() -> (tempfile::TempDir, Child) {
    let dir = tempfile::tempdir().unwrap();
    for d in ["configs", "datasets"] {
        std::os::unix::fs::symlink(repo(d), dir.path().join(d)).unwrap();
    }
    let child = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .current_dir(dir.path())
        .args(["pipeline", "--no-progress"])
        .env("NO_COLOR", "1")
        // No screenshot of the report: a test does not need Chromium.
        .env("PATH", "/nonexistent")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.path().join("pipeline.log")).unwrap())
        .spawn()
        .unwrap();
    (dir, child)
}

/// Waits for a run started by [`start_default_run`] and checks that it succeeded.
fn finish(dir: &Path, mut child: Child) {
    let status = child.wait().unwrap();
    let log = std::fs::read_to_string(dir.join("pipeline.log")).unwrap_or_default();
    assert_eq!(status.code(), Some(0), "{log}");
}

/// What a reply is, without how long it took or whether it came from the cache.
type Reply = (
    String,
    u32,
    Outcome,
    Option<String>,
    Option<String>,
    Usage,
    Option<u64>,
);

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
            (
                r.id,
                r.sample_index,
                r.outcome,
                r.content,
                r.finish_reason,
                r.usage,
                r.served.and_then(|s| s.seed),
            )
        })
        .collect();
    replies.sort_by(|x, y| (&x.0, x.1).cmp(&(&y.0, y.1)));
    replies
}

/// Every table file (Markdown, CSV, JSON) below `dir`, by path relative to it, with its bytes as compared: measured
/// times differ from run to run, so the `latency` and `acc_per_latency` columns of a CSV are left out, and the
/// Markdown and JSON renderings of a table with a latency column are not compared (its CSV holds the rest).
fn tables(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
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
            out.push((path.strip_prefix(dir).unwrap().to_owned(), bytes));
        }
    }
    out.sort();
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

#[test]
fn two_fresh_default_runs_give_the_same_replies_and_tables() {
    // Both at once: each run's engine competes with the other's for the cores, as under any other load.
    let (first, a) = start_default_run();
    let (second, b) = start_default_run();
    finish(first.path(), a);
    finish(second.path(), b);
    for benchmark in ["ifscale", "rift"] {
        let a = replies(first.path(), benchmark);
        let b = replies(second.path(), benchmark);
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x, y, "{benchmark}: the two runs replied differently");
        }
        assert_eq!(a.len(), b.len(), "{benchmark}");
        let seeded = a.iter().filter(|r| r.6.is_some()).count();
        match benchmark {
            // IFScale samples at temperature 0.7: every reply says its seed, and no two samples share one.
            "ifscale" => {
                assert_eq!(seeded, a.len(), "{a:?}");
                let mut seeds: Vec<u64> = a.iter().filter_map(|r| r.6).collect();
                seeds.sort_unstable();
                seeds.dedup();
                assert_eq!(seeds.len(), a.len(), "{a:?}");
            }
            // RIFT decodes greedily: no seed.
            _ => assert_eq!(seeded, 0, "{a:?}"),
        }
    }
    let tables_of =
        |run: &tempfile::TempDir| tables(&run.path().join("artifacts/runs/default/tables"));
    let (a, b) = (tables_of(&first), tables_of(&second));
    assert!(a.len() > 20, "{} table files", a.len());
    for ((pa, x), (pb, y)) in a.iter().zip(&b) {
        assert_eq!(pa, pb);
        assert!(
            x == y,
            "{} differs:\n{}\n---\n{}",
            pa.display(),
            String::from_utf8_lossy(x),
            String::from_utf8_lossy(y)
        );
    }
    assert_eq!(a.len(), b.len());
}
