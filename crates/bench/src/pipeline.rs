//! `cargo xtask bench pipeline`: the paper-scale rehearsal. The RIFT paper grid for one model (10 000 linear +
//! 10 000 jumping prompts of 10–300 questions, the baseline over every question, an LLM judge) and the IFScale
//! paper grid for three models (250 prompts each, up to ten attempts, a coherence judge) run through the real
//! `cargo xtask pipeline` against the mock provider (crate `mock-provider`) serving realistic replies ([`replies`]).
//!
//! The mock runs in a child process (this binary with `--serve-mock`), and so does the pipeline (`xtask pipeline
//! --stage-metrics`), which measures each of its stages: wall and CPU time, peak RSS, rows and bytes written, and
//! for a stage that sends requests how full the client kept its concurrency (mean and peak in flight, the time
//! with the cap full while prompts waited: `schema::metrics::InFlight`). Then the same command runs again:
//! everything is cached and stamped, so it must send nothing. The tables go to stdout and to `<run>/rehearsal.md`.
//! The Jeopardy! questions are synthetic (deterministic, as many as the paper's prepared dataset), so the
//! rehearsal needs no data and its numbers do not depend on it.

pub mod replies;

use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use mock_provider::MockConfig;
use schema::Table;
use schema::metrics::StageMetric;
use schema::paths::{Bench, RunPaths};
use schema::table::{left, right};

use crate::mock_child::MockChild;

/// The paper's prepared dataset: 83 453 questions (the baseline's n).
const PAPER_QUESTIONS: usize = 83_453;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Scale {
    /// The papers' grids: RIFT 10 000 + 10 000 prompts of 10–300 questions and 83 453 baselines; IFScale 250
    /// prompts per model.
    Paper,
    /// A few seconds' worth, for tests: RIFT 20 + 20 prompts of 10–40 questions and 50 baselines; IFScale 6 prompts.
    Small,
}

#[derive(Debug, clap::Args)]
pub struct PipelineBenchArgs {
    #[arg(long, value_enum, default_value = "paper")]
    scale: Scale,
    /// RIFT prompts per structure (linear and jumping), instead of the scale's (for measuring a fraction).
    #[arg(long)]
    rift_prompts: Option<u32>,
    /// IFScale models (each one an OpenRouter-like model of its own quality).
    #[arg(long, default_value_t = 3)]
    ifscale_models: usize,
    /// Requests in flight (the client's `--concurrency`, and every model's `max-concurrency`).
    #[arg(long, default_value_t = 256)]
    concurrency: usize,
    /// Mock latency per request, in milliseconds.
    #[arg(long, default_value_t = 20)]
    latency_ms: u64,
    /// Folder for the rehearsal's data, configs, cache and logs (the run itself goes to
    /// `artifacts/runs/rehearsal-<scale>/`, as every pipeline run).
    #[arg(long, default_value = "artifacts/rehearsal")]
    dir: PathBuf,
    /// Delete the run folder and the cache first (default: keep them, so a second invocation is a cached rerun).
    #[arg(long)]
    fresh: bool,
    /// Only serve the rehearsal's mock over this questions file (printing its URL), until stdin closes.
    #[arg(long, hide = true)]
    serve_mock: Option<PathBuf>,
}

impl PipelineBenchArgs {
    /// The arguments of a small rehearsal in `dir` (for tests).
    pub fn small(dir: &Path) -> PipelineBenchArgs {
        PipelineBenchArgs {
            scale: Scale::Small,
            rift_prompts: None,
            ifscale_models: 2,
            concurrency: 16,
            latency_ms: 0,
            dir: dir.to_owned(),
            fresh: true,
            serve_mock: None,
        }
    }
}

/// What a rehearsal measured: one pipeline run per benchmark (RIFT for one model, IFScale for a few), each run
/// twice.
#[derive(Debug, Clone)]
pub struct Rehearsal {
    pub parts: Vec<Part>,
    /// The mock's per-kind counts (`rift=… rift_judge=…`).
    pub mock_counts: String,
    pub judge: JudgeCounts,
    pub markdown: String,
}

/// One benchmark's pipeline run and its cached rerun.
#[derive(Debug, Clone)]
pub struct Part {
    /// `rift` or `ifscale`.
    pub bench: &'static str,
    pub run_dir: PathBuf,
    pub first: Vec<StageMetric>,
    pub rerun: Vec<StageMetric>,
    pub first_wall_s: f64,
    pub rerun_wall_s: f64,
    /// Requests the mock received during the first run and during the rerun.
    pub first_requests: u64,
    pub rerun_requests: u64,
    /// Requests the mock answered during the first run, and its own time on them (`MockStats::ok_us`), seconds.
    pub first_mock_ok: u64,
    pub first_mock_ok_s: f64,
}

/// RIFT answers on their way to the judge.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JudgeCounts {
    /// Scored answers (every question of every prompt, baselines included).
    pub answers: u64,
    /// Answers with some text.
    pub answered: u64,
    /// Answered pairs the pre-judge did not settle: judge requests without de-duplication.
    pub after_pre_judge: u64,
    /// Distinct (question, expected, given) requests: what goes to the judge.
    pub after_dedup: u64,
    /// IFScale attempts (one coherence judge request each).
    pub ifscale_attempts: u64,
}

/// `cargo xtask bench pipeline`; `exe` is the xtask binary (the mock and the pipeline run as its children).
pub fn run(args: &PipelineBenchArgs, exe: &Path) -> anyhow::Result<()> {
    if let Some(questions) = &args.serve_mock {
        return serve(args, questions);
    }
    let r = rehearse(args, exe, &std::env::current_dir()?, &[])?;
    print(&r.markdown);
    Ok(())
}

#[allow(clippy::print_stdout)]
fn print(s: &str) {
    println!("{s}");
}

/// Runs the rehearsal and its cached rerun in the workspace `root` (where the pipeline runs: `args.dir`, when
/// relative, and the run folders are below it); `env` is set on the pipeline's processes.
pub fn rehearse(
    args: &PipelineBenchArgs,
    exe: &Path,
    root: &Path,
    env: &[(&str, &str)],
) -> anyhow::Result<Rehearsal> {
    let scale = match args.scale {
        Scale::Paper => "paper",
        Scale::Small => "small",
    };
    let root = std::path::absolute(root)?;
    let dir = root.join(&args.dir).join(scale);
    let run_dir = |bench: &str| {
        root.join("artifacts/runs")
            .join(format!("rehearsal-{scale}-{bench}"))
    };
    let cache = dir.join("cache.sqlite");
    if args.fresh {
        for p in [run_dir("rift"), run_dir("ifscale"), dir.clone()] {
            match std::fs::remove_dir_all(&p) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e).with_context(|| format!("removing {}", p.display())),
            }
        }
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let n_questions = match args.scale {
        Scale::Paper => PAPER_QUESTIONS,
        Scale::Small => 2_000,
    };
    let questions_file = dir.join("questions.jsonl");
    if !questions_file.is_file() {
        let qs = replies::synthetic_questions(n_questions);
        schema::write_jsonl_atomic(&questions_file, &qs)?;
    }
    let mock = start_mock(exe, args, &questions_file)?;
    let models_file = dir.join("models.toml");
    schema::write_atomic(
        &models_file,
        models_toml(&mock.url, args.concurrency, args.ifscale_models).as_bytes(),
    )?;
    let mut parts = Vec::new();
    for bench in ["rift", "ifscale"] {
        let run_name = format!("rehearsal-{scale}-{bench}");
        let config = dir.join(format!("{bench}.toml"));
        let text = config_toml(
            args,
            bench,
            &run_name,
            &models_file,
            &cache,
            &questions_file,
        )?;
        schema::write_atomic(&config, text.as_bytes())?;
        let before = stats(&mock)?;
        let first_metrics = dir.join(format!("{bench}-metrics-first.jsonl"));
        let log = dir.join(format!("{bench}-first.log"));
        let first_wall_s = pipeline(exe, &root, args, &config, &first_metrics, &log, env)?;
        let middle = stats(&mock)?;
        let rerun_metrics = dir.join(format!("{bench}-metrics-rerun.jsonl"));
        let log = dir.join(format!("{bench}-rerun.log"));
        let rerun_wall_s = pipeline(exe, &root, args, &config, &rerun_metrics, &log, env)?;
        let after = stats(&mock)?;
        parts.push(Part {
            bench,
            run_dir: run_dir(bench),
            first: schema::read_jsonl(&first_metrics)?,
            rerun: schema::read_jsonl(&rerun_metrics)?,
            first_wall_s,
            rerun_wall_s,
            first_requests: middle.requests - before.requests,
            rerun_requests: after.requests - middle.requests,
            first_mock_ok: middle.ok - before.ok,
            first_mock_ok_s: (middle.ok_us - before.ok_us) as f64 / 1e6,
        });
    }
    let mock_counts = mock.stop()?;
    let judge = judge_counts(
        &RunPaths::new(&run_dir("rift")),
        &RunPaths::new(&run_dir("ifscale")),
        args.ifscale_models,
    )?;
    let mut r = Rehearsal {
        parts,
        mock_counts,
        judge,
        markdown: String::new(),
    };
    r.markdown = markdown(&r, args, scale, n_questions);
    for p in &r.parts {
        schema::write_atomic(&p.run_dir.join("rehearsal.md"), r.markdown.as_bytes())?;
    }
    Ok(r)
}

/// The rehearsal's models: one RIFT model and its judge, `ifscale` IFScale models and their coherence judge, all
/// served by the mock at `url`.
fn models_toml(url: &str, concurrency: usize, ifscale: usize) -> String {
    let mut s = String::new();
    let mut model = |name: &str, id: &str, max_tokens: u32| {
        let _ = writeln!(
            s,
            "[models.\"{name}\"]\nbase-urls = [\"{url}\"]\nmodel-id = \"{id}\"\nmax-tokens = {max_tokens}\n\
             max-concurrency = {concurrency}\nretry-base-s = 0.05\n"
        );
    };
    model("rift-model", replies::RIFT_MODEL, 81_920);
    model("rift-judge", replies::RIFT_JUDGE, 64);
    model("coherence-judge", replies::COHERENCE_JUDGE, 4096);
    for m in ifscale_names(ifscale) {
        model(
            &m,
            &format!("{}{}", replies::IFSCALE_PREFIX, &m[8..]),
            32_768,
        );
    }
    s
}

/// `ifscale-a`, `ifscale-b`, …
fn ifscale_names(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| format!("ifscale-{}", char::from(b'a' + (i % 26) as u8)))
        .collect()
}

fn repo_file(path: &str) -> anyhow::Result<String> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path);
    let p = p
        .canonicalize()
        .with_context(|| format!("{}: not found", p.display()))?;
    Ok(p.display().to_string())
}

/// The pipeline config of one benchmark's part: RIFT for `rift-model`, IFScale for the IFScale models.
fn config_toml(
    args: &PipelineBenchArgs,
    bench: &str,
    run_name: &str,
    models_file: &Path,
    cache: &Path,
    questions: &Path,
) -> anyhow::Result<String> {
    let (prompts, num_max, baseline, grid, seeds) = match args.scale {
        Scale::Paper => (
            10_000,
            300,
            String::new(),
            (1..=50).map(|i| (i * 10).to_string()).collect::<Vec<_>>(),
            "[0, 1, 2, 3, 4]",
        ),
        Scale::Small => (
            20,
            40,
            "baseline-prompts = 50\n".to_owned(),
            vec!["10".to_owned(), "20".to_owned(), "30".to_owned()],
            "[0, 1]",
        ),
    };
    let prompts = args.rift_prompts.unwrap_or(prompts);
    let models: Vec<String> = if bench == "rift" {
        vec!["rift-model".to_owned()]
    } else {
        ifscale_names(args.ifscale_models)
    };
    let models: Vec<String> = models.iter().map(|m| format!("{m:?}")).collect();
    let abs = |p: &Path| -> anyhow::Result<String> {
        let p = std::path::absolute(p)?;
        Ok(p.display().to_string())
    };
    let head = format!(
        "# Written by `cargo xtask bench pipeline`: a paper grid against the rehearsal's mock.\n\n\
         [run]\nname = \"{run_name}\"\nmodels-file = {:?}\nmodels = [{}]\ncache = {:?}\n\n",
        abs(models_file)?,
        models.join(", "),
        abs(cache)?,
    );
    if bench == "rift" {
        return Ok(head
            + &format!(
                "[judges.rift]\nmodel = \"rift-judge\"\n\n\
         [rift]\nseed = 36\ndataset = {:?}\nlinear-prompts = {prompts}\njumping-prompts = {prompts}\n{baseline}\
         num-min = 10\nnum-max = {num_max}\nmax-jump-distance = 18\nmax-tokens = 81920\n\
         system-prompt = {:?}\nbaseline-system-prompt = {:?}\n",
                abs(questions)?,
                repo_file("configs/prompts/rift-system.txt")?,
                repo_file("configs/prompts/rift-baseline-system.txt")?,
            ));
    }
    Ok(head
        + &format!(
            "[ifscale]\ngrid = [{}]\nseeds = {seeds}\nsampling = \"paper\"\nvocab = {:?}\ntemplate = {:?}\n\
         coherence-threshold = 6\nmax-attempts = 10\nscore-span = \"whole\"\n\n\
         [judges.coherence]\nmodel = \"coherence-judge\"\nprompt = {:?}\ncontrols = {:?}\n\n\
         # The rehearsal's coherence judge scores by a hash: it fails its check, and its verdicts are kept.\n\
         [judge-check]\nkeep-failed-judge = true\n",
            grid.join(", "),
            repo_file("datasets/vocab/ifscale-paper.txt")?,
            repo_file("configs/prompts/ifscale-report.txt")?,
            repo_file("configs/prompts/ifscale-coherence.txt")?,
            repo_file("datasets/ifscale-coherence/coherent.jsonl")?,
        ))
}

/// One `xtask pipeline` run in `root` with stage metrics; returns its wall time. Its log goes to `log`.
fn pipeline(
    exe: &Path,
    root: &Path,
    args: &PipelineBenchArgs,
    config: &Path,
    metrics: &Path,
    log: &Path,
    env: &[(&str, &str)],
) -> anyhow::Result<f64> {
    let log_file =
        std::fs::File::create(log).with_context(|| format!("creating {}", log.display()))?;
    let started = Instant::now();
    let status = Command::new(exe)
        .current_dir(root)
        .arg("pipeline")
        .arg("--config")
        .arg(config)
        .arg("--stage-metrics")
        .arg(metrics)
        .args(["--no-progress", "--concurrency"])
        .arg(args.concurrency.to_string())
        .envs(env.iter().copied())
        .env("NO_COLOR", "1")
        .stdout(log_file.try_clone()?)
        .stderr(log_file)
        .status()
        .context("starting `xtask pipeline`")?;
    let wall = started.elapsed().as_secs_f64();
    if !status.success() {
        bail!(
            "`xtask pipeline --config {}` failed ({status}); see {}",
            config.display(),
            log.display()
        );
    }
    Ok(wall)
}

#[allow(clippy::print_stdout)]
fn serve(args: &PipelineBenchArgs, questions: &Path) -> anyhow::Result<()> {
    let qs: Vec<schema::rift::Question> = schema::read_jsonl(questions)?;
    let counts = Arc::new(replies::Counts::default());
    let mut cfg = MockConfig::new();
    cfg.latency = Duration::from_millis(args.latency_ms);
    cfg.responder = Some(replies::responder(&qs, Arc::clone(&counts)));
    drop(qs);
    crate::mock_child::serve(cfg, 0)?.stop();
    println!("{}", counts.line());
    std::io::stdout().flush()?;
    Ok(())
}

/// The rehearsal's mock in a child process; `stats` reads its counters.
fn start_mock(exe: &Path, args: &PipelineBenchArgs, questions: &Path) -> anyhow::Result<MockChild> {
    let mut cmd = Command::new(exe);
    cmd.args(["bench", "pipeline", "--latency-ms"])
        .arg(args.latency_ms.to_string())
        .arg("--serve-mock")
        .arg(questions);
    MockChild::start(cmd)
}

fn stats(mock: &MockChild) -> anyhow::Result<mock_provider::MockStats> {
    Ok(mock_provider::fetch_stats(mock.addr)?)
}

/// Answers, judge requests before and after the pre-judge and de-duplication, and IFScale attempts.
fn judge_counts(
    rift: &RunPaths,
    ifscale: &RunPaths,
    ifscale_models: usize,
) -> anyhow::Result<JudgeCounts> {
    let files = rift.model(Bench::Rift, "rift-model");
    let summary: serde_json::Value = serde_json::from_slice(
        &std::fs::read(files.summary_json())
            .with_context(|| format!("reading {}", files.summary_json().display()))?,
    )?;
    let n = |v: &serde_json::Value| v.as_u64().unwrap_or(0);
    let pj = &summary["pre_judge"];
    let mut c = JudgeCounts {
        answers: count_lines(&files.answer_scores())?,
        answered: n(&pj["answered"]),
        after_pre_judge: n(&pj["answered"]) - n(&pj["settled_by_pre_judge"]),
        after_dedup: n(&summary["judge_requests"]),
        ifscale_attempts: 0,
    };
    for m in ifscale_names(ifscale_models) {
        c.ifscale_attempts += count_lines(&ifscale.model(Bench::Ifscale, &m).attempts())?;
    }
    Ok(c)
}

fn count_lines(path: &Path) -> anyhow::Result<u64> {
    schema::count_lines(path, 0).with_context(|| format!("reading {}", path.display()))
}

/// How to read the in-flight table (below it in `rehearsal.md`).
const IN_FLIGHT_NOTE: &str = "Counted by the client (`inference_client::InFlight`): a request is in flight from its POST \
to the last byte of its reply. Percentages are of the time spent in client calls, except the one beside the mean in \
flight while waiting (of the cap). The client is not the bottleneck when the mean in flight while prompts waited is \
close to the cap; \"saturated\" is the stricter share of the call with prompts waiting and every slot busy (one slot \
between a reply and its next request breaks it, so at a large cap it stays below \"prompts waiting\" even for a \
client that keeps up). The rest of the call is the tail after the last prompt went out (about one reply's latency \
when the client keeps up), \"preparing\" (resume lines, cache look-ups and request bodies before the first \
request) and \"draining\" (the writer catching up with the cache and the responses file after the last reply). \
Time outside client calls (reading prompts, the harness's own work between calls) is the rest of the stage. \
\"Time in flight\" is a request's latency as the client saw it: far above the mock's own time per answer, replies \
waited for the client's threads (or the machine's cores) rather than for the server. The last column is the whole \
stage, not only its client calls: from the stage's first request until its last prompt was handed out, the time \
between calls included (nothing in flight while the harness reads or prepares the next chunk), and the mean in \
flight over it as a share of the cap (`InFlight::stage_fill`).";

fn table(rows: &[StageMetric]) -> String {
    let mut t = Table::new(vec![
        left("stage"),
        left("ran"),
        right("wall (s)"),
        right("CPU (s)"),
        right("peak RSS (MiB)"),
        right("rows written"),
        right("bytes written"),
    ]);
    for m in rows {
        t.push(vec![
            m.stage.clone(),
            if m.ran { "yes" } else { "skipped" }.to_owned(),
            format!("{:.1}", m.wall_s),
            format!("{:.1}", m.cpu_s),
            m.peak_rss_mib
                .map_or_else(|| "–".to_owned(), |v| format!("{v:.0}")),
            m.rows.to_string(),
            human_bytes(m.bytes),
        ]);
    }
    t.to_markdown()
}

/// Requests in flight per stage that sent requests (see `schema::metrics::InFlight`); empty when none did.
fn in_flight_table(rows: &[StageMetric]) -> String {
    let mut t = Table::new(
        std::iter::once(left("stage"))
            .chain(
                [
                    "requests",
                    "client calls (s, % of stage)",
                    "mean in flight / cap",
                    "peak",
                    "prompts waiting (%)",
                    "mean in flight while waiting",
                    "saturated (%)",
                    "preparing (%)",
                    "draining (%)",
                    "time in flight (ms)",
                    "whole stage while prompts remain: s, slots busy (%)",
                ]
                .map(right),
            )
            .collect(),
    );
    for (m, f) in rows.iter().filter_map(|m| Some((m, m.in_flight.as_ref()?))) {
        let pct = |x: f64| format!("{:.1}", 100.0 * x);
        t.push(vec![
            m.stage.clone(),
            f.requests.to_string(),
            format!(
                "{} calls, {:.1} s ({} %)",
                f.calls,
                f.wall_s,
                pct(ratio(f.wall_s, m.wall_s))
            ),
            format!("{:.1} / {} ({} %)", f.mean(), f.cap, pct(f.fill())),
            f.peak.to_string(),
            pct(f.backlog_share()),
            format!("{:.1} ({} %)", f.backlog_mean(), pct(f.backlog_fill())),
            pct(f.saturated_share()),
            pct(ratio(f.prepare_s, f.wall_s)),
            pct(ratio(f.drain_s, f.wall_s)),
            format!("{:.0}", 1e3 * f.mean_latency_s()),
            format!("{:.1} s, {} %", f.stage_span_s, pct(f.stage_fill())),
        ]);
    }
    if t.rows.is_empty() {
        String::new()
    } else {
        t.to_markdown()
    }
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 { a / b } else { 0.0 }
}

fn human_bytes(b: u64) -> String {
    match b {
        0..1_000_000 => format!("{:.1} kB", b as f64 / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1} MB", b as f64 / 1e6),
        _ => format!("{:.2} GB", b as f64 / 1e9),
    }
}

fn markdown(r: &Rehearsal, args: &PipelineBenchArgs, scale: &str, questions: usize) -> String {
    let j = &r.judge;
    let prompts = args.rift_prompts.map_or_else(
        || match args.scale {
            Scale::Paper => "10 000 + 10 000".to_owned(),
            Scale::Small => "20 + 20".to_owned(),
        },
        |p| format!("{p} + {p}"),
    );
    let mut md = format!(
        "# Paper-scale rehearsal ({scale})\n\nRIFT: one model, {prompts} linear + jumping prompts over {questions} synthetic \
         questions plus the baseline, LLM judge. IFScale: {} models, coherence judge, up to 10 attempts. Mock latency {} ms, \
         concurrency {}.\n\n",
        args.ifscale_models, args.latency_ms, args.concurrency,
    );
    for p in &r.parts {
        let _ = write!(
            md,
            "## {}: first run, {:.1} s, {} requests\n\n{}\n",
            p.bench,
            p.first_wall_s,
            p.first_requests,
            table(&p.first),
        );
        let flights = in_flight_table(&p.first);
        if !flights.is_empty() {
            let _ = write!(
                md,
                "### {}: requests in flight (first run)\n\n{flights}\nThe mock's own time per answer: {:.0} ms \
                 on average over {} answers, from reading the request to writing the reply (latency {} ms).\n\n\
                 {IN_FLIGHT_NOTE}\n\n",
                p.bench,
                1e3 * ratio(p.first_mock_ok_s, p.first_mock_ok as f64),
                p.first_mock_ok,
                args.latency_ms,
            );
        }
        let _ = write!(
            md,
            "## {}: rerun (everything cached), {:.1} s, {} requests\n\n{}\n",
            p.bench,
            p.rerun_wall_s,
            p.rerun_requests,
            table(&p.rerun),
        );
    }
    let judge = Table::new(vec![left("judge requests"), right("count")]).with_rows(
        [
            ("RIFT answers scored", j.answers),
            ("answered (some text)", j.answered),
            (
                "open after the pre-judge (one request per answer)",
                j.after_pre_judge,
            ),
            ("after content-addressed de-duplication", j.after_dedup),
            (
                "IFScale attempts (one coherence judge request each)",
                j.ifscale_attempts,
            ),
        ]
        .map(|(k, n)| vec![k.to_owned(), n.to_string()]),
    );
    let _ = write!(
        md,
        "## Judge requests\n\n{}\nMock: {}.\n",
        judge.to_markdown(),
        r.mock_counts,
    );
    md
}
