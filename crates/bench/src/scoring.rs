//! `cargo xtask bench scoring`: IFScale paper-mode keyword scoring, one `re.search` per keyword in Python (the
//! published semantics) against the one-pass Rust matcher, on the same generated reports; labels must be identical.
//!
//! Both sides are timed in CPU seconds of the scoring alone: Python's `time.process_time()` around its loop (the
//! reports already read), Rust's thread CPU clock around building the matcher and labelling every report (the
//! keyword lists already laid out as slices), as the mean of `--repeat` rounds, each with a new matcher.

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail};
use harness::synthetic;
use prompt_gen::rng::Mt19937;
use schema::ifscale::{KeywordStatus, MatchMode};
use scoring::ifscale::Matcher;

#[derive(Debug, clap::Args)]
pub struct ScoringArgs {
    /// Vocabulary to draw keywords from (one term per line, or a TSV with a `term` column); synthetic words when absent.
    #[arg(long, default_value = "datasets/vocab/ifscale-paper.txt")]
    vocab: PathBuf,
    /// Extra filler words for the reports' prose (one term per line, or a TSV with a `term` column), besides a
    /// built-in list of common report words; keywords of `--vocab` are left out of it.
    #[arg(long, default_value = "datasets/vocab/default.tsv")]
    filler: PathBuf,
    /// Number of reports.
    #[arg(long, default_value_t = 200)]
    reports: usize,
    /// Bytes of text per report (about).
    #[arg(long, default_value_t = 16_000)]
    report_bytes: usize,
    /// Rust scoring rounds (the CPU time shown is per round).
    #[arg(long, default_value_t = 20)]
    repeat: u32,
    #[arg(long, default_value = "python3")]
    python: String,
    /// Time the Rust side only (when tuning it); no speed-up is shown.
    #[arg(long)]
    rust_only: bool,
}

const PY_SCORER: &str = r#"
import json, re, sys, time
src, dst = sys.argv[1], sys.argv[2]
reports = [json.loads(l) for l in open(src, encoding="utf-8")]
t0 = time.process_time()
out = []
for r in reports:
    text = r["text"].lower()
    labels = []
    for kw in r["keywords"]:
        kw = kw.lower()
        if re.search(r"\b" + re.escape(kw) + r"\b", text):
            labels.append("exact")
            continue
        st = kw[: max(3, int(len(kw) * 0.8))]
        if re.search(r"\b" + re.escape(st) + r"[a-z]*\b", text):
            labels.append("modified")
        else:
            labels.append("omitted")
    out.append(labels)
cpu = time.process_time() - t0
json.dump(out, open(dst, "w"))
print(json.dumps({"cpu_s": cpu}))
"#;

/// This thread's CPU time in seconds, to the nanosecond (`/proc`'s per-thread figures only move at scheduler
/// ticks, too coarse for a few milliseconds of work).
fn thread_cpu_s() -> anyhow::Result<f64> {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `clock_gettime` writes one `timespec` through a pointer to a live, writable one.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    if rc != 0 {
        bail!("clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    }
    Ok(t.tv_sec as f64 + t.tv_nsec as f64 / 1e9)
}

fn load_vocab(path: &std::path::Path, rng: &mut Mt19937) -> Vec<String> {
    if let Ok(bytes) = std::fs::read(path)
        && let Ok(v) = prompt_gen::ifscale::Vocabulary::parse(&bytes, &path.display().to_string())
        && v.len() >= 100
    {
        return v.terms.into_iter().map(|t| t.term).collect();
    }
    tracing::warn!(path = %path.display(), "Vocabulary not found; using 500 synthetic words.");
    let letters = b"abcdefghijklmnopqrstuvwxyz";
    let mut words = std::collections::BTreeSet::new();
    while words.len() < 500 {
        let len = 4 + rng.random_interval(8) as usize;
        words.insert(
            (0..len)
                .map(|_| letters[rng.random_interval(25) as usize] as char)
                .collect::<String>(),
        );
    }
    words.into_iter().collect()
}

/// Filler words: the built-in list plus the terms of `path` (when it reads), minus the keyword vocabulary.
fn load_filler(path: &std::path::Path, vocab: &[String]) -> Vec<String> {
    let extra = match std::fs::read(path)
        .map_err(anyhow::Error::from)
        .and_then(|bytes| {
            Ok(prompt_gen::ifscale::Vocabulary::parse(
                &bytes,
                &path.display().to_string(),
            )?)
        }) {
        Ok(v) => v.terms.into_iter().map(|t| t.term).collect(),
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "No extra filler words; using the built-in list only.");
            Vec::new()
        }
    };
    synthetic::filler_words(&extra, vocab)
}

fn name(s: KeywordStatus) -> &'static str {
    match s {
        KeywordStatus::Exact => "exact",
        KeywordStatus::Modified => "modified",
        KeywordStatus::Omitted => "omitted",
    }
}

#[allow(clippy::print_stdout)]
pub fn run(args: &ScoringArgs) -> anyhow::Result<()> {
    let mut rng = Mt19937::new(1);
    let vocab = load_vocab(&args.vocab, &mut rng);
    let filler = load_filler(&args.filler, &vocab);
    let reports = synthetic::reports(&vocab, &filler, args.reports, args.report_bytes);
    let checks: usize = reports.iter().map(|r| r.keywords.len()).sum();
    let bytes: usize = reports.iter().map(|r| r.text.len()).sum();

    let dir = std::env::temp_dir().join(format!("ifstress-bench-scoring-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let input = dir.join("reports.jsonl");
    let mut lines = String::new();
    for r in &reports {
        lines.push_str(&serde_json::to_string(
            &serde_json::json!({"keywords": r.keywords, "text": r.text}),
        )?);
        lines.push('\n');
    }
    std::fs::write(&input, lines)?;
    let py_out = dir.join("python-labels.json");
    let script = dir.join("score.py");
    std::fs::write(&script, PY_SCORER)?;

    // Rust: the matcher is built over every report's keywords, then one pass per report; both are timed, and
    // repeated for a stable CPU figure. The inputs are laid out as the library takes them before the clock starts
    // (as Python's are read before its clock starts), and the labels are named after it stops.
    let all: Vec<&str> = reports
        .iter()
        .flat_map(|r| r.keywords.iter().map(String::as_str))
        .collect();
    let per_report: Vec<Vec<&str>> = reports
        .iter()
        .map(|r| r.keywords.iter().map(String::as_str).collect())
        .collect();
    let mut statuses: Vec<Vec<KeywordStatus>> = Vec::with_capacity(reports.len());
    let rounds = args.repeat.max(1);
    let (mut build_cpu, mut label_cpu) = (0.0, 0.0);
    let wall = Instant::now();
    for _ in 0..rounds {
        statuses.clear();
        let cpu0 = thread_cpu_s()?;
        let mut matcher = Matcher::new(MatchMode::Paper, &all)?;
        let cpu1 = thread_cpu_s()?;
        for (r, kws) in reports.iter().zip(&per_report) {
            statuses.push(matcher.label(&r.text, kws));
        }
        let cpu2 = thread_cpu_s()?;
        build_cpu += cpu1 - cpu0;
        label_cpu += cpu2 - cpu1;
    }
    let rust_labels: Vec<Vec<&'static str>> = statuses
        .iter()
        .map(|s| s.iter().map(|&x| name(x)).collect())
        .collect();
    let (build_cpu, label_cpu) = (build_cpu / f64::from(rounds), label_cpu / f64::from(rounds));
    let rust_cpu = build_cpu + label_cpu;
    let rust_wall = wall.elapsed().as_secs_f64() / f64::from(rounds);

    println!(
        "reports {}, keyword checks {checks}, text {:.2} MB, {} distinct filler words",
        reports.len(),
        bytes as f64 / 1e6,
        filler.len()
    );
    if args.rust_only {
        println!(
            "rust one pass: {rust_cpu:.6} CPU s (build {build_cpu:.6} + label {label_cpu:.6}), wall {rust_wall:.6} s"
        );
        let _ = std::fs::remove_dir_all(&dir);
        return Ok(());
    }
    println!("running Python (one re.search per keyword and check)...");
    let out = Command::new(&args.python)
        .arg(&script)
        .arg(&input)
        .arg(&py_out)
        .output()
        .with_context(|| format!("running {}", args.python))?;
    if !out.status.success() {
        bail!("python failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    let py: serde_json::Value =
        serde_json::from_slice(&out.stdout).context("reading python's timing")?;
    let py_cpu = py["cpu_s"]
        .as_f64()
        .context("python's timing has no cpu_s")?;
    let py_labels: Vec<Vec<String>> = serde_json::from_slice(&std::fs::read(&py_out)?)?;
    let _ = std::fs::remove_dir_all(&dir);

    let mut differ = 0;
    let mut counts = [0usize; 3];
    for (i, (a, b)) in rust_labels.iter().zip(&py_labels).enumerate() {
        if a.len() != b.len() {
            bail!(
                "report {i}: {} Rust labels, {} Python labels",
                a.len(),
                b.len()
            );
        }
        for (k, (x, y)) in a.iter().zip(b).enumerate() {
            match *x {
                "exact" => counts[0] += 1,
                "modified" => counts[1] += 1,
                _ => counts[2] += 1,
            }
            if *x != y.as_str() {
                if differ < 5 {
                    println!(
                        "  differs: report {i} keyword {:?}: rust {x}, python {y}",
                        reports[i].keywords[k]
                    );
                }
                differ += 1;
            }
        }
    }
    if py_labels.len() != rust_labels.len() {
        bail!(
            "{} Python reports, {} Rust reports",
            py_labels.len(),
            rust_labels.len()
        );
    }
    println!(
        "labels: exact {}, modified {}, omitted {}",
        counts[0], counts[1], counts[2]
    );
    println!("{:<34} {:>12}", "", "CPU seconds");
    println!("{:<34} {:>12.4}", "python re.search per keyword", py_cpu);
    println!(
        "{:<34} {:>12.6}   (wall {:.6} s, mean of {rounds} rounds)",
        "rust one pass (token trie)", rust_cpu, rust_wall,
    );
    println!(
        "{:<34} {:>12.6}",
        "  of which: build the matcher", build_cpu
    );
    println!(
        "{:<34} {:>12.6}",
        "  of which: label the reports", label_cpu
    );
    println!(
        "speed-up (CPU)                     {:>12.0}x",
        py_cpu / rust_cpu.max(1e-9)
    );
    if differ > 0 {
        bail!("{differ} of {checks} labels differ between Rust and Python");
    }
    println!("labels identical: {checks} of {checks}");
    Ok(())
}
