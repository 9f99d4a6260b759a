//! `cargo xtask pipeline`: every stage that is out of date, in order, from offline assets to the HTML report.
//!
//! assets → vocabulary (only when missing or asked) → Jeopardy! prep → IFScale prompts → RIFT prompts →
//! generation (both benchmarks, every model) → judging → scoring → analysis → figures → report.
//! Each stage records a fingerprint of its inputs under `<run>/.stages/`; a stage whose inputs did not change and
//! whose outputs exist is skipped, so a rerun of a finished pipeline makes no model call.

mod config;
mod fresh;
mod report;
pub(crate) mod screenshot;

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use inference_client::{ModelConfig, RunOptions};
use schema::paths::RunPaths;

pub(crate) use config::{PipelineConfig, json_schema};
use fresh::{Fingerprint, Stamps};

use crate::UsageError;

#[derive(Debug, clap::Args)]
pub(crate) struct PipelineArgs {
    /// The experiment config (TOML; unknown keys are errors).
    #[arg(long, default_value = "configs/default.toml")]
    config: PathBuf,
    /// Print, per stage, how many requests would be sent and their worst-case cost; send nothing.
    #[arg(long)]
    dry_run: bool,
    /// Most requests in flight per base URL (overrides the models' `max-concurrency`).
    #[arg(long)]
    concurrency: Option<usize>,
    /// Stop sending once spent plus in-flight worst case would exceed this many USD (overrides the config).
    #[arg(long)]
    max_cost: Option<f64>,
    /// Ignore cached responses and send every request again.
    #[arg(long)]
    refresh: bool,
    /// Rebuild the IFScale vocabulary from `[vocab].corpus` even when the file exists.
    #[arg(long)]
    rebuild_vocab: bool,
    /// Run every stage even when its inputs did not change.
    #[arg(long)]
    force: bool,
    /// No progress bars.
    #[arg(long)]
    no_progress: bool,
}

/// What the run did, for the report and the summary.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    pub(crate) stages_run: Vec<String>,
    pub(crate) stages_skipped: Vec<String>,
}

pub(crate) fn run(args: &PipelineArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let cfg = PipelineConfig::load(&args.config)?;
    let config_text = std::fs::read_to_string(&args.config)?;
    let run_dir = cfg.run_dir();
    let paths = RunPaths::new(&run_dir);
    let models = load_models(&cfg)?;
    let mut opts = RunOptions::new(cfg.run.cache.clone());
    opts.concurrency = args.concurrency;
    opts.max_cost_usd = args.max_cost.or(cfg.run.max_cost_usd);
    opts.refresh = args.refresh;
    opts.progress = !args.no_progress;

    if args.dry_run {
        return dry_run(&cfg, &models, &paths, &opts);
    }
    let stamps = Stamps::new(&run_dir);
    let mut out = Outcome::default();
    let mut stage = Stager {
        stamps: &stamps,
        force: args.force,
        out: &mut out,
    };

    // Offline assets for embedded models are resolved while loading the models (see `crate::models`).
    if let Some(ifs) = &cfg.ifscale
        && let Some(file) = &ifs.vocab
    {
        vocab_stage(file, cfg.vocab.as_ref(), args.rebuild_vocab)?;
    }
    if let (Some(rift), Some(prep)) = (&cfg.rift, &cfg.rift_prep)
        && !prep.inputs.is_empty()
    {
        let dir = rift.dataset.parent().unwrap_or(Path::new(".")).to_owned();
        let mut fp = Fingerprint::new("rift-prep");
        for p in &prep.inputs {
            fp = fp.file(p)?;
        }
        let outputs = vec![rift.dataset.clone()];
        stage.run("rift-prep", fp, &outputs, || {
            crate::rift::prep_stage(&prep.inputs, &dir, None, &opts)?;
            Ok(())
        })?;
    }
    if let Some(ifs) = &cfg.ifscale {
        ifscale_stages(ifs, &cfg, &models, &paths, &opts, &mut stage)?;
    }
    if let Some(rift) = &cfg.rift {
        rift_stages(rift, &cfg, &models, &paths, &opts, &mut stage)?;
    }
    report::analyse_and_report(&cfg, &config_text, &paths, &mut stage)?;
    let summary = report::summary_markdown(&cfg, &paths, &out, started.elapsed().as_secs_f64())?;
    schema::write_atomic(&paths.summary(), summary.as_bytes())?;
    print_summary(&summary);
    Ok(())
}

#[allow(clippy::print_stdout)]
fn print_summary(summary: &str) {
    println!("{summary}");
}

/// Runs a stage unless it is fresh, and stamps it when it finishes.
pub(crate) struct Stager<'a> {
    stamps: &'a Stamps,
    force: bool,
    pub(crate) out: &'a mut Outcome,
}

impl Stager<'_> {
    pub(crate) fn run(
        &mut self,
        name: &str,
        fp: Fingerprint,
        outputs: &[PathBuf],
        body: impl FnOnce() -> anyhow::Result<()>,
    ) -> anyhow::Result<bool> {
        if !self.force && self.stamps.is_fresh(name, &fp, outputs) {
            tracing::info!(stage = name, "Up to date; skipped.");
            self.out.stages_skipped.push(name.to_owned());
            return Ok(false);
        }
        tracing::info!(stage = name, "Running.");
        body().with_context(|| format!("stage {name}"))?;
        self.stamps.mark(name, &fp, outputs)?;
        self.out.stages_run.push(name.to_owned());
        Ok(true)
    }
}

fn load_models(cfg: &PipelineConfig) -> anyhow::Result<Vec<ModelConfig>> {
    cfg.run
        .models
        .iter()
        .map(|name| crate::models::load_model(&cfg.run.models_file, name))
        .collect()
}

/// The vocabulary exists, or is built from the configured corpus.
fn vocab_stage(
    file: &Path,
    section: Option<&config::VocabSection>,
    rebuild: bool,
) -> anyhow::Result<()> {
    if file.is_file() && !rebuild {
        return Ok(());
    }
    let Some(section) = section else {
        return Err(UsageError(format!(
            "vocabulary {} is missing and `[vocab].corpus` is not set; set it or point `[ifscale].vocab` at an existing list",
            file.display()
        ))
        .into());
    };
    crate::vocab::build_default(&section.corpus, file)
}

/// Folder of one model's files inside a benchmark folder (names are made file-system safe).
pub(crate) fn model_dir(bench_dir: &Path, model: &str) -> PathBuf {
    let safe: String = model
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    bench_dir.join("models").join(safe)
}

/// A model the config may name (a judge), resolved from the run's models file.
fn optional_model(cfg: &PipelineConfig, name: Option<&str>) -> anyhow::Result<Option<ModelConfig>> {
    name.map(|n| crate::models::load_model(&cfg.run.models_file, n))
        .transpose()
}

fn ifscale_stages(
    ifs: &prompt_gen::ifscale::IfscaleConfig,
    cfg: &PipelineConfig,
    models: &[ModelConfig],
    paths: &RunPaths,
    opts: &RunOptions,
    stage: &mut Stager<'_>,
) -> anyhow::Result<()> {
    let prompts_path = paths.ifscale_prompts();
    let mut fp = Fingerprint::new("ifscale-prompts")
        .value("ifscale", ifs)?
        .file(&ifs.template)?;
    if let Some(v) = &ifs.vocab {
        fp = fp.file(v)?;
    }
    stage.run(
        "ifscale-prompts",
        fp,
        std::slice::from_ref(&prompts_path),
        || {
            let n = crate::ifscale::prompts_stage(ifs, None, &prompts_path)?;
            tracing::info!(prompts = n, "Wrote the IFScale prompts.");
            Ok(())
        },
    )?;
    let judge = optional_model(cfg, ifs.judge_model.as_deref())?;
    let bench_dir = paths.root.join("ifscale");
    let (mut scores, mut labels, mut attempts) = (Vec::new(), Vec::new(), Vec::new());
    for model in models {
        let files = crate::ifscale::GenerationFiles::in_dir(&model_dir(&bench_dir, &model.name));
        let fp = Fingerprint::new("ifscale-generate")
            .value("model", model)?
            .value("judge", &judge)?
            .value("ifscale", ifs)?
            .file(&prompts_path)?;
        let outputs = vec![
            files.responses.clone(),
            files.attempts.clone(),
            files.scores.clone(),
            files.labels.clone(),
        ];
        let name = format!("ifscale-generate:{}", model.name);
        stage.run(&name, fp, &outputs, || {
            let prompts: Vec<schema::PromptRecord> = schema::read_jsonl(&prompts_path)?;
            let s = crate::ifscale::generate(&crate::ifscale::Generation {
                prompts: &prompts,
                model,
                judge: judge.as_ref(),
                coherence_threshold: ifs.coherence_threshold,
                max_attempts: ifs.max_attempts,
                mode: schema::ifscale::MatchMode::Paper,
                files: &files,
                opts,
            })?;
            tracing::info!(model = %model.name, samples = s.samples, accepted = s.accepted, failed = s.failed, attempts = s.attempts, "IFScale generation finished.");
            Ok(())
        })?;
        scores.push(files.scores);
        labels.push(files.labels);
        attempts.push(files.attempts);
    }
    concat_jsonl(&scores, &paths.ifscale_scores())?;
    concat_jsonl(&labels, &paths.ifscale_labels())?;
    concat_jsonl(&attempts, &paths.ifscale_attempts())?;
    Ok(())
}

fn rift_stages(
    rift: &prompt_gen::rift::RiftConfig,
    cfg: &PipelineConfig,
    models: &[ModelConfig],
    paths: &RunPaths,
    opts: &RunOptions,
    stage: &mut Stager<'_>,
) -> anyhow::Result<()> {
    let prompts_path = paths.rift_prompts();
    let fp = Fingerprint::new("rift-prompts")
        .value("rift", rift)?
        .file(&rift.dataset)?
        .file(&rift.system_prompt)?
        .file(&rift.baseline_system_prompt)?;
    stage.run(
        "rift-prompts",
        fp,
        std::slice::from_ref(&prompts_path),
        || {
            let n = crate::rift::prompts_stage(rift, &prompts_path)?;
            tracing::info!(prompts = n, "Wrote the RIFT prompts.");
            Ok(())
        },
    )?;
    let bench_dir = paths.root.join("rift");
    let judge = optional_model(
        cfg,
        cfg.rift_prep
            .as_ref()
            .and_then(|p| p.judge_model.as_deref()),
    )?;
    let judge_template = PathBuf::from("configs/prompts/rift-judge.txt");
    let mut answer_files = Vec::new();
    let mut prompt_files = Vec::new();
    for model in models {
        let dir = model_dir(&bench_dir, &model.name);
        let responses = dir.join("responses.jsonl");
        let verdicts = dir.join("verdicts.jsonl");
        let answers = dir.join("answer-scores.jsonl");
        let scores = dir.join("prompt-scores.jsonl");
        let fp = Fingerprint::new("rift-generate")
            .value("model", model)?
            .file(&prompts_path)?;
        let name = format!("rift-generate:{}", model.name);
        stage.run(&name, fp, std::slice::from_ref(&responses), || {
            let prompts = schema::read_jsonl(&prompts_path)?;
            crate::rift::run_stage(model, &prompts, &responses, opts)?;
            Ok(())
        })?;
        let mut verdict_path = None;
        if let Some(judge) = &judge {
            let fp = Fingerprint::new("rift-judge")
                .value("judge", judge)?
                .file(&prompts_path)?
                .file(&responses)?
                .file(&judge_template)?;
            let name = format!("rift-judge:{}", model.name);
            stage.run(&name, fp, std::slice::from_ref(&verdicts), || {
                let template = crate::rift::read_text(&judge_template)?;
                crate::rift::judge_stage(
                    judge,
                    &prompts_path,
                    &responses,
                    &template,
                    &dir,
                    false,
                    opts,
                )?;
                Ok(())
            })?;
            verdict_path = Some(verdicts.clone());
        }
        let mut fp = Fingerprint::new("rift-score")
            .file(&prompts_path)?
            .file(&responses)?;
        if let Some(v) = &verdict_path {
            fp = fp.file(v)?;
        }
        let name = format!("rift-score:{}", model.name);
        stage.run(&name, fp, &[answers.clone(), scores.clone()], || {
            crate::rift::score_stage(
                &prompts_path,
                &responses,
                verdict_path.as_deref(),
                &dir,
                false,
            )?;
            Ok(())
        })?;
        answer_files.push(answers);
        prompt_files.push(scores);
    }
    concat_jsonl(&answer_files, &paths.rift_answer_scores())?;
    concat_jsonl(&prompt_files, &paths.rift_prompt_scores())?;
    Ok(())
}

/// Joins per-model JSONL files into one, atomically (the analysis reads one table per benchmark).
pub(crate) fn concat_jsonl(parts: &[PathBuf], out: &Path) -> anyhow::Result<()> {
    let mut bytes = Vec::new();
    for p in parts {
        let part = std::fs::read(p).with_context(|| format!("reading {}", p.display()))?;
        bytes.extend_from_slice(&part);
        if !part.is_empty() && !part.ends_with(b"\n") {
            bytes.push(b'\n');
        }
    }
    schema::write_atomic(out, &bytes)?;
    Ok(())
}

#[allow(clippy::print_stdout)]
fn dry_run(
    cfg: &PipelineConfig,
    models: &[ModelConfig],
    paths: &RunPaths,
    opts: &RunOptions,
) -> anyhow::Result<()> {
    let mut rows: Vec<(String, String, String, usize, u64, f64, usize)> = Vec::new();
    if let Some(ifs) = &cfg.ifscale {
        let tmp = paths.root.join(".dry-run-ifscale-prompts.jsonl");
        crate::ifscale::prompts_stage(ifs, None, &tmp)?;
        let prompts: Vec<schema::PromptRecord> = schema::read_jsonl(&tmp)?;
        let _ = std::fs::remove_file(&tmp);
        for m in models {
            let r = inference_client::dry_run(m, &prompts, opts)?;
            let n = r.prompts - r.cached;
            let attempts = ifs.max_attempts as usize;
            rows.push((
                "ifscale generation".into(),
                m.name.clone(),
                format!(
                    "first attempts; worst case {} with every retry",
                    n * attempts
                ),
                n,
                r.est_input_tokens,
                r.worst_case_cost_usd * attempts as f64,
                r.unbounded,
            ));
            if let Some(judge) = &ifs.judge_model {
                rows.push((
                    "ifscale coherence judge".into(),
                    judge.clone(),
                    format!(
                        "one per attempt that passes rules (a) and (b), at most {}",
                        n * attempts
                    ),
                    n,
                    0,
                    f64::NAN,
                    0,
                ));
            }
        }
    }
    if let Some(rift) = &cfg.rift {
        // Before the prep stage ran, sample from the raw clue file (prepared in memory, without rephrasing).
        let mut sample_cfg = rift.clone();
        if !rift.dataset.is_file()
            && let Some(raw) = cfg.rift_prep.as_ref().and_then(|p| p.inputs.first())
        {
            sample_cfg.dataset = raw.clone();
        }
        if !sample_cfg.dataset.is_file() {
            return Err(UsageError(format!(
                "{}: the RIFT dataset does not exist; list the raw clue files under `[rift-prep].inputs`",
                rift.dataset.display()
            ))
            .into());
        }
        let tmp = paths.root.join(".dry-run-rift-prompts.jsonl");
        crate::rift::prompts_stage(&sample_cfg, &tmp)?;
        let prompts: Vec<schema::PromptRecord> = schema::read_jsonl(&tmp)?;
        let _ = std::fs::remove_file(&tmp);
        for m in models {
            let r = inference_client::dry_run(m, &prompts, opts)?;
            rows.push((
                "rift generation".into(),
                m.name.clone(),
                "one request per prompt".into(),
                r.prompts - r.cached,
                r.est_input_tokens,
                r.worst_case_cost_usd,
                r.unbounded,
            ));
        }
        if let Some(judge) = cfg
            .rift_prep
            .as_ref()
            .and_then(|p| p.judge_model.as_deref())
        {
            let total: usize = prompts
                .iter()
                .filter_map(|p| {
                    p.extra
                        .get("expected")
                        .and_then(|e| e.as_array())
                        .map(Vec::len)
                })
                .sum();
            rows.push((
                "rift judge".into(),
                judge.to_owned(),
                "at most one per answer the pre-judge cannot settle".into(),
                total * models.len(),
                0,
                f64::NAN,
                0,
            ));
        }
    }
    println!("| stage | model | requests | note | est. input tokens | worst-case cost (USD) |");
    println!("|---|---|---:|---|---:|---:|");
    let mut total_cost = 0.0;
    for (stage, model, note, n, tokens, cost, unbounded) in &rows {
        let cost_s = if cost.is_nan() {
            "depends on replies".to_owned()
        } else if *unbounded > 0 {
            format!("{cost:.2} (+{unbounded} requests without max-tokens)")
        } else {
            format!("{cost:.2}")
        };
        if cost.is_finite() {
            total_cost += cost;
        }
        println!("| {stage} | {model} | {n} | {note} | {tokens} | {cost_s} |");
    }
    println!("\nWorst case in all (without judge replies): {total_cost:.2} USD. Nothing was sent.");
    Ok(())
}
