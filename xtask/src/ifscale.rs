//! `cargo xtask ifscale prompts|run` and `cargo xtask score-reports`: IFScale prompts, generation with the paper's
//! retry rules, and scoring.
//!
//! The generation loop lives here (not in `scoring`) because it is the only IFScale code that calls models: the
//! rules it applies are pure functions of `scoring::ifscale` and the requests go through `inference-client`.
//! [`generate`] takes typed arguments so the pipeline can call it directly.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use anyhow::Context;
use inference_client::{ModelConfig, RunOptions};
use prompt_gen::ifscale::{IfscaleConfig, Template, Vocabulary, build_prompts};
use schema::ifscale::{AttemptLog, KeywordLabel, MatchMode, PromptMeta, RejectReason, SampleScore};
use schema::{Message, Outcome, PromptRecord, RequestParams, ResponseRecord};
use scoring::ifscale::{
    Matcher, SampleInput, check_response, coherence_judge_prompt, parse_coherence_verdict,
    score_sample,
};
use serde::Deserialize as _;

use crate::UsageError;

/// Judge tries per attempt when the judge's answer does not parse.
const JUDGE_TRIES: u32 = 3;
/// `max_tokens` of a judge request (a one-sentence reason and a score).
const JUDGE_MAX_TOKENS: u32 = 200;

#[derive(Debug, clap::Subcommand)]
pub(crate) enum Ifscale {
    /// Write the prompt records of the configured grid (keywords in order, seed, N, sampling mode, template hash).
    Prompts(PromptsArgs),
    /// Generate with the paper's retry rules through the inference client, then score (cached and resumable).
    Run(RunArgs),
}

#[derive(Debug, clap::Args)]
pub(crate) struct PromptsArgs {
    /// A config file with an `[ifscale]` section (or a bare IFScale config).
    #[arg(long, default_value = "configs/default.toml")]
    config: PathBuf,
    /// The vocabulary (overrides the config's `vocab`).
    #[arg(long)]
    vocab: Option<PathBuf>,
    #[arg(long)]
    out: PathBuf,
}

#[derive(Debug, clap::Args)]
pub(crate) struct RunArgs {
    /// Prompts JSONL from `cargo xtask ifscale prompts`.
    #[arg(long)]
    prompts: PathBuf,
    /// A model declared in the models file.
    #[arg(long)]
    model: String,
    /// Folder for responses.jsonl, judge.jsonl, attempts.jsonl, scores.jsonl and labels.jsonl.
    #[arg(long)]
    out_dir: PathBuf,
    /// Config with an `[ifscale]` section: judge model, coherence threshold and attempts are read from it.
    #[arg(long, default_value = "configs/default.toml")]
    config: PathBuf,
    /// Coherence judge model (overrides the config's `judge-model`).
    #[arg(long)]
    judge_model: Option<String>,
    /// Skip the coherence check even if the config names a judge.
    #[arg(long, conflicts_with = "judge_model")]
    no_judge: bool,
    /// Attempts per sample (overrides the config's `max-attempts`).
    #[arg(long)]
    max_attempts: Option<u32>,
    /// Only the first N prompts.
    #[arg(long)]
    limit: Option<usize>,
    #[arg(long, default_value = "configs/models.toml")]
    models: PathBuf,
    /// The response cache (SQLite).
    #[arg(long, default_value = "artifacts/cache/responses.sqlite")]
    cache: PathBuf,
    /// Most requests in flight per base URL (default: the model's `max-concurrency`).
    #[arg(long)]
    concurrency: Option<usize>,
    /// Stop sending once spent + in-flight worst case would exceed this many USD.
    #[arg(long)]
    max_cost: Option<f64>,
    /// Keyword matching used for the scores.
    #[arg(long, value_enum, default_value = "paper")]
    mode: ModeArg,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum ModeArg {
    Paper,
    Strict,
}

impl ModeArg {
    fn mode(self) -> MatchMode {
        match self {
            ModeArg::Paper => MatchMode::Paper,
            ModeArg::Strict => MatchMode::Strict,
        }
    }
}

#[derive(Debug, clap::Args)]
pub(crate) struct ScoreReportsArgs {
    /// An IFScale generations CSV (`id,model,seed,num_rules,constraints,generated_text,latency_seconds,…`) or a
    /// responses JSONL whose records carry the prompt's keywords in `prompt_meta`.
    #[arg(long)]
    input: PathBuf,
    /// Per-sample rows: CSV when the name ends in `.csv`, JSONL otherwise.
    #[arg(long)]
    out: PathBuf,
    #[arg(long, value_enum, default_value = "paper")]
    mode: ModeArg,
    /// Also write one row per keyword (id, model, position, keyword, status); CSV or JSONL by extension.
    #[arg(long)]
    labels: Option<PathBuf>,
    /// For a responses JSONL holding several attempts per prompt: the attempts log that says which was accepted.
    #[arg(long)]
    attempts: Option<PathBuf>,
}

pub(crate) fn run(cmd: &Ifscale) -> anyhow::Result<()> {
    match cmd {
        Ifscale::Prompts(args) => {
            let cfg = load_config(&args.config)?;
            let n = prompts_stage(&cfg, args.vocab.as_deref(), &args.out)?;
            tracing::info!(prompts = n, out = %args.out.display(), "Wrote IFScale prompts.");
            Ok(())
        }
        Ifscale::Run(args) => run_cmd(args),
    }
}

/// Reads the `[ifscale]` section of a config file (or the whole file when it has none).
pub(crate) fn load_config(path: &Path) -> anyhow::Result<IfscaleConfig> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let value: toml::Value =
        toml::from_str(&text).map_err(|e| UsageError(format!("{}: {e}", path.display())))?;
    let table = match value.get("ifscale") {
        Some(toml::Value::Table(t)) => t.clone(),
        _ => match value {
            toml::Value::Table(t) => t,
            _ => return Err(UsageError(format!("{}: not a table", path.display())).into()),
        },
    };
    let cfg = IfscaleConfig::deserialize(toml::Value::Table(table))
        .map_err(|e| UsageError(format!("{}: [ifscale]: {e}", path.display())))?;
    cfg.validate()
        .map_err(|e| UsageError(format!("{}: {e}", path.display())))?;
    Ok(cfg)
}

/// Builds the prompts of `cfg` and writes them atomically; returns how many.
pub(crate) fn prompts_stage(
    cfg: &IfscaleConfig,
    vocab: Option<&Path>,
    out: &Path,
) -> anyhow::Result<usize> {
    let vocab_path = vocab.or(cfg.vocab.as_deref()).ok_or_else(|| {
        UsageError("no vocabulary: give --vocab or set `vocab` in [ifscale]".to_owned())
    })?;
    let bytes =
        std::fs::read(vocab_path).with_context(|| format!("reading {}", vocab_path.display()))?;
    let vocab = Vocabulary::parse(&bytes, &vocab_path.display().to_string())
        .map_err(|e| UsageError(e.to_string()))?;
    let tbytes = std::fs::read(&cfg.template)
        .with_context(|| format!("reading {}", cfg.template.display()))?;
    let template = Template::parse(&tbytes, &cfg.template.display().to_string())
        .map_err(|e| UsageError(e.to_string()))?;
    let prompts = build_prompts(&vocab, &template, cfg).map_err(|e| UsageError(e.to_string()))?;
    schema::write_jsonl_atomic(out, &prompts)?;
    Ok(prompts.len())
}

/// The files of one model's IFScale generation.
#[derive(Debug, Clone)]
pub(crate) struct GenerationFiles {
    /// Every generation attempt (the client's responses; `sample_index` = attempt − 1).
    pub(crate) responses: PathBuf,
    /// The coherence judge's responses (ids `<prompt id>#a<attempt>`).
    pub(crate) judge: PathBuf,
    pub(crate) attempts: PathBuf,
    pub(crate) scores: PathBuf,
    pub(crate) labels: PathBuf,
}

impl GenerationFiles {
    pub(crate) fn in_dir(dir: &Path) -> GenerationFiles {
        GenerationFiles {
            responses: dir.join("responses.jsonl"),
            judge: dir.join("judge.jsonl"),
            attempts: dir.join("attempts.jsonl"),
            scores: dir.join("scores.jsonl"),
            labels: dir.join("labels.jsonl"),
        }
    }
}

/// What [`generate`] needs.
pub(crate) struct Generation<'a> {
    pub(crate) prompts: &'a [PromptRecord],
    pub(crate) model: &'a ModelConfig,
    /// None: the coherence check is skipped (and the summary says so).
    pub(crate) judge: Option<&'a ModelConfig>,
    pub(crate) coherence_threshold: u8,
    pub(crate) max_attempts: u32,
    pub(crate) mode: MatchMode,
    pub(crate) files: &'a GenerationFiles,
    pub(crate) opts: &'a RunOptions,
}

/// What [`generate`] did.
#[derive(Debug, Clone, Default)]
pub(crate) struct GenerationSummary {
    pub(crate) samples: usize,
    pub(crate) accepted: usize,
    /// Samples that exhausted their attempts; they are in the scores as `failed`.
    pub(crate) failed: usize,
    pub(crate) attempts: usize,
    pub(crate) rejected: BTreeMap<String, usize>,
    pub(crate) judged: bool,
    pub(crate) judge_errors: usize,
    /// Mean accuracy over scored samples (failed ones have none).
    pub(crate) mean_accuracy: Option<f64>,
}

struct SampleState {
    logs: Vec<AttemptLog>,
    accepted: Option<ResponseRecord>,
}

/// Generates every prompt with up to `max_attempts` attempts under the paper's retry rules, writes the attempts
/// log, then scores the accepted reports (failed samples included as `failed`).
///
/// Rerunning with the same files resumes: answered requests are neither sent nor written again, and every decision
/// is recomputed from the files.
pub(crate) fn generate(g: &Generation<'_>) -> anyhow::Result<GenerationSummary> {
    let mut states: Vec<SampleState> = g
        .prompts
        .iter()
        .map(|_| SampleState {
            logs: Vec::new(),
            accepted: None,
        })
        .collect();
    let mut pending: Vec<usize> = (0..g.prompts.len()).collect();
    let temp = |p: &PromptRecord| p.params.temperature.or(g.model.temperature);
    if g.max_attempts > 1 && g.prompts.iter().any(|p| temp(p) == Some(0.0)) {
        tracing::warn!(model = %g.model.name, "Temperature 0: a retried attempt will most likely repeat the rejected answer.");
    }
    for attempt in 1..=g.max_attempts {
        if pending.is_empty() {
            break;
        }
        let batch: Vec<PromptRecord> = pending
            .iter()
            .map(|&i| {
                let mut p = g.prompts[i].clone();
                p.sample_index = attempt - 1;
                p
            })
            .collect();
        tracing::info!(attempt, prompts = batch.len(), model = %g.model.name, "Generating.");
        inference_client::run_prompts_blocking(g.model, &batch, &g.files.responses, g.opts)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let responses = latest_by_key(&g.files.responses)?;
        // Rules (a), (b) and truncation first.
        let mut decisions: Vec<(usize, ResponseRecord, AttemptLog)> = Vec::new();
        for &i in &pending {
            let p = &g.prompts[i];
            let r = responses
                .get(&(p.id.clone(), attempt - 1))
                .cloned()
                .with_context(|| {
                    format!(
                        "{}: no response for {} attempt {attempt}",
                        g.files.responses.display(),
                        p.id
                    )
                })?;
            let text = r.content.clone().unwrap_or_default();
            let reason = match r.outcome {
                Outcome::Failed => Some(RejectReason::RequestFailed),
                Outcome::Truncated => Some(RejectReason::Truncated),
                Outcome::Ok => check_response(&text),
            };
            let log = AttemptLog {
                id: p.id.clone(),
                model: g.model.name.clone(),
                attempt,
                accepted: reason.is_none(),
                reason,
                coherence: None,
                coherence_reason: None,
                judge_error: None,
                words: scoring::ifscale::word_count(&text) as u32,
                latency_s: r.latency_s,
                output_tokens: Some(r.usage.completion_tokens),
            };
            decisions.push((i, r, log));
        }
        // Rule (c): the coherence judge, for attempts that passed the rest.
        if let Some(judge) = g.judge {
            judge_attempts(g, judge, attempt, &mut decisions)?;
        }
        let mut next = Vec::new();
        for (i, r, log) in decisions {
            let accepted = log.accepted;
            states[i].logs.push(log);
            if accepted {
                states[i].accepted = Some(r);
            } else {
                next.push(i);
            }
        }
        pending = next;
        let logs: Vec<&AttemptLog> = states.iter().flat_map(|s| s.logs.iter()).collect();
        schema::write_jsonl_atomic(&g.files.attempts, logs)?;
    }

    let mut summary = GenerationSummary {
        samples: g.prompts.len(),
        judged: g.judge.is_some(),
        ..Default::default()
    };
    for s in &states {
        summary.attempts += s.logs.len();
        for l in &s.logs {
            if let Some(r) = l.reason {
                *summary
                    .rejected
                    .entry(reason_name(r).to_owned())
                    .or_default() += 1;
            }
            if l.judge_error.is_some() {
                summary.judge_errors += 1;
            }
        }
        if s.accepted.is_some() {
            summary.accepted += 1;
        } else {
            summary.failed += 1;
        }
    }
    // Score.
    let metas: Vec<PromptMeta> = g
        .prompts
        .iter()
        .map(prompt_meta)
        .collect::<anyhow::Result<_>>()?;
    let mut matcher = Matcher::new(
        g.mode,
        &metas
            .iter()
            .flat_map(|m| m.keywords.iter().map(String::as_str))
            .collect::<Vec<_>>(),
    )?;
    let mut scores = Vec::new();
    let mut labels = Vec::new();
    for ((p, meta), s) in g.prompts.iter().zip(&metas).zip(&states) {
        let acc = s.accepted.as_ref();
        let last = s.logs.iter().rev().find(|l| l.accepted);
        let input = SampleInput {
            id: &p.id,
            model: &g.model.name,
            num_rules: meta.num_rules,
            seed: meta.seed,
            keywords: &meta.keywords,
            text: acc.map(|r| r.content.as_deref().unwrap_or_default()),
            latency_s: acc.and_then(|r| r.latency_s),
            output_tokens: acc.map(|r| r.usage.completion_tokens),
            coherence: last.and_then(|l| l.coherence).map(f64::from),
            attempts: s.logs.len() as u32,
        };
        let (score, l) = score_sample(&mut matcher, &input);
        scores.push(score);
        labels.extend(l);
    }
    let accs: Vec<f64> = scores.iter().filter_map(|s| s.accuracy).collect();
    summary.mean_accuracy =
        (!accs.is_empty()).then(|| accs.iter().sum::<f64>() / accs.len() as f64);
    schema::write_jsonl_atomic(&g.files.scores, &scores)?;
    schema::write_jsonl_atomic(&g.files.labels, &labels)?;
    Ok(summary)
}

fn judge_attempts(
    g: &Generation<'_>,
    judge: &ModelConfig,
    attempt: u32,
    decisions: &mut [(usize, ResponseRecord, AttemptLog)],
) -> anyhow::Result<()> {
    let mut open: Vec<usize> = (0..decisions.len())
        .filter(|&d| decisions[d].2.accepted)
        .collect();
    let mut last_error: HashMap<usize, String> = HashMap::new();
    for try_index in 0..JUDGE_TRIES {
        if open.is_empty() {
            break;
        }
        let batch: Vec<PromptRecord> = open
            .iter()
            .map(|&d| {
                let (_, r, log) = &decisions[d];
                PromptRecord {
                    id: format!("{}#a{attempt}", log.id),
                    messages: vec![Message::user(coherence_judge_prompt(
                        r.content.as_deref().unwrap_or_default(),
                    ))],
                    sample_index: try_index,
                    params: RequestParams {
                        max_tokens: Some(JUDGE_MAX_TOKENS),
                        ..RequestParams::default()
                    },
                    extra: serde_json::Map::new(),
                }
            })
            .collect();
        tracing::info!(attempt, judge_try = try_index + 1, requests = batch.len(), judge = %judge.name, "Judging coherence.");
        inference_client::run_prompts_blocking(judge, &batch, &g.files.judge, g.opts)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let verdicts = latest_by_key(&g.files.judge)?;
        let mut still = Vec::new();
        for (&d, req) in open.iter().zip(&batch) {
            let Some(v) = verdicts.get(&(req.id.clone(), try_index)) else {
                last_error.insert(d, "no judge response".to_owned());
                still.push(d);
                continue;
            };
            let parsed = match (v.outcome, v.content.as_deref()) {
                (Outcome::Failed, _) => Err(format!(
                    "judge request failed: {}",
                    v.error.clone().unwrap_or_default()
                )),
                (_, Some(text)) => parse_coherence_verdict(text).map_err(|e| e.to_string()),
                (_, None) => Err("empty judge answer".to_owned()),
            };
            match parsed {
                Ok(verdict) => {
                    let log = &mut decisions[d].2;
                    log.coherence = Some(verdict.score);
                    log.coherence_reason = Some(verdict.reason);
                    if verdict.score < g.coherence_threshold {
                        log.accepted = false;
                        log.reason = Some(RejectReason::Incoherent);
                    }
                }
                Err(e) => {
                    last_error.insert(d, e);
                    still.push(d);
                }
            }
        }
        open = still;
    }
    // No usable verdict after every try: the attempt stands on the other rules, and the log says why.
    for d in open {
        decisions[d].2.judge_error = last_error.remove(&d);
    }
    Ok(())
}

/// The newest record per (id, sample index) of a responses file (a resumed run may hold a retried line twice).
fn latest_by_key(path: &Path) -> anyhow::Result<HashMap<(String, u32), ResponseRecord>> {
    let records: Vec<ResponseRecord> = schema::read_jsonl(path)?;
    Ok(records
        .into_iter()
        .map(|r| ((r.id.clone(), r.sample_index), r))
        .collect())
}

fn prompt_meta(p: &PromptRecord) -> anyhow::Result<PromptMeta> {
    serde_json::from_value(serde_json::Value::Object(p.extra.clone())).map_err(|e| {
        UsageError(format!(
            "prompt {}: not an IFScale prompt record: {e}",
            p.id
        ))
        .into()
    })
}

fn reason_name(r: RejectReason) -> &'static str {
    match r {
        RejectReason::ConstraintList => "constraint_list",
        RejectReason::TooShort => "too_short",
        RejectReason::Incoherent => "incoherent",
        RejectReason::Truncated => "truncated",
        RejectReason::RequestFailed => "request_failed",
    }
}

#[allow(clippy::print_stdout)]
fn run_cmd(args: &RunArgs) -> anyhow::Result<()> {
    let cfg = load_config(&args.config)?;
    let model = crate::models::load_model(&args.models, &args.model)?;
    let judge_name = if args.no_judge {
        None
    } else {
        args.judge_model.clone().or(cfg.judge_model.clone())
    };
    let judge = judge_name
        .as_deref()
        .map(|n| crate::models::load_model(&args.models, n))
        .transpose()?;
    let mut prompts: Vec<PromptRecord> = schema::read_jsonl(&args.prompts)
        .map_err(|e| UsageError(format!("reading prompts: {e}")))?;
    if let Some(n) = args.limit {
        prompts.truncate(n);
    }
    let mut opts = RunOptions::new(args.cache.clone());
    opts.concurrency = args.concurrency;
    opts.max_cost_usd = args.max_cost;
    let files = GenerationFiles::in_dir(&args.out_dir);
    let max_attempts = args.max_attempts.unwrap_or(cfg.max_attempts);
    if max_attempts == 0 {
        return Err(UsageError("--max-attempts must be at least 1".to_owned()).into());
    }
    let g = Generation {
        prompts: &prompts,
        model: &model,
        judge: judge.as_ref(),
        coherence_threshold: cfg.coherence_threshold,
        max_attempts,
        mode: args.mode.mode(),
        files: &files,
        opts: &opts,
    };
    let s = generate(&g)?;
    println!("model              {}", model.name);
    println!("samples            {}", s.samples);
    println!("accepted           {}", s.accepted);
    println!(
        "failed             {} (every attempt rejected; scored as failed)",
        s.failed
    );
    println!("attempts           {}", s.attempts);
    for (reason, n) in &s.rejected {
        println!(
            "  rejected {reason:<16} {n}{}",
            if reason == "truncated" {
                " (hit max_tokens)"
            } else {
                ""
            }
        );
    }
    match judge.as_ref().filter(|_| s.judged) {
        Some(j) => println!(
            "coherence check    judge {} (threshold {}); {} judge errors",
            j.name, cfg.coherence_threshold, s.judge_errors
        ),
        None => println!("coherence check    skipped: no judge model configured"),
    }
    match s.mean_accuracy {
        Some(a) => println!("mean accuracy      {a:.1} % over scored samples"),
        None => println!("mean accuracy      n/a (no scored sample)"),
    }
    println!("files              {}", args.out_dir.display());
    Ok(())
}

// ---------------------------------------------------------------------------------------------------------------
// score-reports

/// One report to score, from either input layout.
struct Report {
    id: String,
    model: String,
    seed: u64,
    num_rules: u32,
    keywords: Vec<String>,
    text: Option<String>,
    latency_s: Option<f64>,
    output_tokens: Option<u64>,
    coherence: Option<f64>,
    attempts: u32,
}

pub(crate) fn score_reports(args: &ScoreReportsArgs) -> anyhow::Result<()> {
    let is_csv = |p: &Path| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    let reports = if is_csv(&args.input) {
        read_generations_csv(&args.input)?
    } else {
        read_responses(&args.input, args.attempts.as_deref())?
    };
    let mode = args.mode.mode();
    let mut matcher = Matcher::new(
        mode,
        &reports
            .iter()
            .flat_map(|r| r.keywords.iter().map(String::as_str))
            .collect::<Vec<_>>(),
    )?;
    let mut scores: Vec<SampleScore> = Vec::with_capacity(reports.len());
    let mut labels: Vec<KeywordLabel> = Vec::new();
    for r in &reports {
        let input = SampleInput {
            id: &r.id,
            model: &r.model,
            num_rules: r.num_rules,
            seed: r.seed,
            keywords: &r.keywords,
            text: r.text.as_deref(),
            latency_s: r.latency_s,
            output_tokens: r.output_tokens,
            coherence: r.coherence,
            attempts: r.attempts,
        };
        let (s, l) = score_sample(&mut matcher, &input);
        scores.push(s);
        labels.extend(l);
    }
    if is_csv(&args.out) {
        write_scores_csv(&args.out, &scores)?;
    } else {
        schema::write_jsonl_atomic(&args.out, &scores)?;
    }
    if let Some(path) = &args.labels {
        if is_csv(path) {
            let mut w = csv::Writer::from_writer(Vec::new());
            w.write_record(["id", "model", "position", "keyword", "status", "mode"])?;
            for l in &labels {
                w.write_record([
                    l.id.as_str(),
                    &l.model,
                    &l.position.to_string(),
                    &l.keyword,
                    enum_name(&l.status).as_str(),
                    enum_name(&l.mode).as_str(),
                ])?;
            }
            schema::write_atomic(path, &w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?)?;
        } else {
            schema::write_jsonl_atomic(path, &labels)?;
        }
    }
    let failed = scores.iter().filter(|s| s.accuracy.is_none()).count();
    tracing::info!(samples = scores.len(), failed, labels = labels.len(), out = %args.out.display(), "Scored reports.");
    Ok(())
}

fn enum_name<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn write_scores_csv(path: &Path, scores: &[SampleScore]) -> anyhow::Result<()> {
    let opt = |v: Option<f64>| v.map(|x| x.to_string()).unwrap_or_default();
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "id",
        "model",
        "num_rules",
        "seed",
        "mode",
        "status",
        "accuracy",
        "exact",
        "modified",
        "omitted",
        "omission_pct",
        "modification_pct",
        "primacy_ratio",
        "latency_s",
        "output_tokens",
        "coherence",
        "attempts",
    ])?;
    for s in scores {
        w.write_record([
            s.id.clone(),
            s.model.clone(),
            s.num_rules.to_string(),
            s.seed.to_string(),
            enum_name(&s.mode),
            enum_name(&s.status),
            opt(s.accuracy),
            s.exact.to_string(),
            s.modified.to_string(),
            s.omitted.to_string(),
            opt(s.omission_pct),
            opt(s.modification_pct),
            opt(s.primacy_ratio),
            opt(s.latency_s),
            s.output_tokens.map(|t| t.to_string()).unwrap_or_default(),
            opt(s.coherence),
            s.attempts.to_string(),
        ])?;
    }
    schema::write_atomic(path, &w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?)?;
    Ok(())
}

/// The IFScale generations CSV: `id,model,seed,num_rules,constraints,generated_text,latency_seconds,…`.
fn read_generations_csv(path: &Path) -> anyhow::Result<Vec<Report>> {
    let mut rdr = csv::ReaderBuilder::new()
        .flexible(false)
        .from_path(path)
        .with_context(|| format!("reading {}", path.display()))?;
    let headers = rdr
        .headers()
        .with_context(|| format!("{}: reading the header", path.display()))?
        .clone();
    let col = |name: &str| headers.iter().position(|h| h.trim() == name);
    let need = |name: &str| {
        col(name).ok_or_else(|| {
            UsageError(format!(
                "{}: no `{name}` column (header: {:?})",
                path.display(),
                headers
            ))
        })
    };
    let (c_model, c_seed, c_n, c_kw, c_text) = (
        need("model")?,
        need("seed")?,
        need("num_rules")?,
        need("constraints")?,
        need("generated_text")?,
    );
    let c_id = col("id");
    let c_lat = col("latency_seconds");
    let c_tok = col("output_tokens").or_else(|| col("completion_tokens"));
    let mut out = Vec::new();
    for (i, rec) in rdr.records().enumerate() {
        let line = i + 2;
        let rec = rec.map_err(|e| UsageError(format!("{}: record {line}: {e}", path.display())))?;
        let field = |c: usize| rec.get(c).unwrap_or("").trim();
        let bad = |name: &str, v: &str| {
            UsageError(format!(
                "{}:{line}: field `{name}`: cannot read {v:?}",
                path.display()
            ))
        };
        let seed: u64 = parse_num(field(c_seed)).ok_or_else(|| bad("seed", field(c_seed)))?;
        let num_rules: u32 = parse_num(field(c_n)).ok_or_else(|| bad("num_rules", field(c_n)))?;
        let keywords: Vec<String> = field(c_kw)
            .split(',')
            .map(|k| k.trim().to_owned())
            .collect();
        if keywords.iter().any(String::is_empty) {
            return Err(UsageError(format!(
                "{}:{line}: field `constraints`: an empty keyword",
                path.display()
            ))
            .into());
        }
        if keywords.len() != num_rules as usize {
            tracing::warn!(
                line,
                num_rules,
                keywords = keywords.len(),
                "num_rules differs from the number of constraints; N is the constraint count."
            );
        }
        let latency_s = match c_lat.map(field) {
            None | Some("") => None,
            Some(v) => Some(v.parse::<f64>().map_err(|_| bad("latency_seconds", v))?),
        };
        let output_tokens = match c_tok.map(field) {
            None | Some("") => None,
            Some(v) => Some(parse_num::<u64>(v).ok_or_else(|| bad("output_tokens", v))?),
        };
        let model = field(c_model).to_owned();
        let id = c_id
            .map(|c| field(c).to_owned())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| format!("{model}-n{num_rules}-s{seed}"));
        let text = rec.get(c_text).unwrap_or("").to_owned();
        out.push(Report {
            id,
            model,
            seed,
            num_rules,
            keywords,
            text: Some(text),
            latency_s,
            output_tokens,
            coherence: None,
            attempts: 0,
        });
    }
    Ok(out)
}

/// Integers written as `3` or `3.0`.
fn parse_num<T: TryFrom<u64>>(v: &str) -> Option<T> {
    let n = match v.parse::<u64>() {
        Ok(n) => n,
        Err(_) => {
            let f: f64 = v.parse().ok()?;
            if f.fract() != 0.0 || f < 0.0 {
                return None;
            }
            f as u64
        }
    };
    T::try_from(n).ok()
}

/// A responses JSONL; with several attempts per (model, id), the attempts log picks the accepted one.
fn read_responses(path: &Path, attempts: Option<&Path>) -> anyhow::Result<Vec<Report>> {
    let records: Vec<ResponseRecord> =
        schema::read_jsonl(path).map_err(|e| UsageError(e.to_string()))?;
    let mut latest: BTreeMap<(String, String, u32), ResponseRecord> = BTreeMap::new();
    for r in records {
        latest.insert((r.model.clone(), r.id.clone(), r.sample_index), r);
    }
    let logs: Option<Vec<AttemptLog>> = attempts
        .map(|p| schema::read_jsonl(p).map_err(|e| UsageError(e.to_string())))
        .transpose()?;
    let mut by_sample: BTreeMap<(String, String), Vec<ResponseRecord>> = BTreeMap::new();
    for ((model, id, _), r) in latest {
        by_sample.entry((model, id)).or_default().push(r);
    }
    let mut out = Vec::new();
    for ((model, id), rs) in by_sample {
        let meta: PromptMeta = serde_json::from_value(serde_json::Value::Object(
            rs[0].prompt_meta.clone(),
        ))
        .map_err(|e| {
            UsageError(format!(
                "{}: response {id}: `prompt_meta` lacks the IFScale fields: {e}",
                path.display()
            ))
        })?;
        let (chosen, n_attempts, coherence) = match &logs {
            Some(logs) => {
                let mine: Vec<&AttemptLog> = logs
                    .iter()
                    .filter(|l| l.id == id && l.model == model)
                    .collect();
                let acc = mine.iter().find(|l| l.accepted);
                let chosen = acc.and_then(|l| rs.iter().find(|r| r.sample_index + 1 == l.attempt));
                (
                    chosen,
                    mine.len() as u32,
                    acc.and_then(|l| l.coherence).map(f64::from),
                )
            }
            None => {
                if rs.len() > 1 {
                    return Err(UsageError(format!(
                        "{}: {} responses for {id} ({model}); pass --attempts to say which one was accepted",
                        path.display(),
                        rs.len()
                    ))
                    .into());
                }
                (Some(&rs[0]).filter(|r| r.outcome == Outcome::Ok), 1, None)
            }
        };
        out.push(Report {
            id,
            model,
            seed: meta.seed,
            num_rules: meta.num_rules,
            keywords: meta.keywords,
            text: chosen.map(|r| r.content.clone().unwrap_or_default()),
            latency_s: chosen.and_then(|r| r.latency_s),
            output_tokens: chosen.map(|r| r.usage.completion_tokens),
            coherence,
            attempts: n_attempts,
        });
    }
    Ok(out)
}
