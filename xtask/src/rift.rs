//! `cargo xtask rift prep | prompts | run | judge | score`: the RIFT stages, each runnable alone from files.
//!
//! The stage functions (`prep_stage`, `prompts_stage`, `run_stage`, `judge_stage`, `score_stage`) take typed
//! arguments so the pipeline can call them directly.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context;
use inference_client::{ModelConfig, RunOptions, RunSummary};
use prompt_gen::rift::{RiftConfig, SystemPrompts};
use schema::rift::{AnswerScore, JudgeRequest, JudgeVerdict, PromptScore, Question, Structure};
use schema::{PromptRecord, RequestParams, ResponseRecord};
use scoring::rift::{PreJudgeReport, ScoreOptions};

use crate::UsageError;

/// RIFT: Jeopardy! preparation, baseline/linear/jumping prompts, model runs, LLM judging and scoring.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum Rift {
    /// Load Jeopardy! clue files (JSON or CSV layout), clean them, write questions.jsonl, skipped.jsonl and a summary.
    Prep(PrepArgs),
    /// Sample an experiment's prompts from a config (`[rift]` table or a bare RIFT config) into a prompts JSONL.
    Prompts(PromptsArgs),
    /// Send a prompts file to one model (cached, resumable) into a responses JSONL.
    Run(RunArgs),
    /// Send the unsettled answers of a run to an LLM judge; writes judge prompts, judge responses and verdicts.
    Judge(JudgeArgs),
    /// Score responses (with verdicts if given): answer-scores.jsonl, prompt-scores.jsonl, judge-requests.jsonl, summary.
    Score(ScoreArgs),
}

#[derive(Debug, clap::Args)]
pub(crate) struct PrepArgs {
    /// Clue files (the 216 930-clue JSON layout or its CSV twin); rows are numbered across them in order.
    #[arg(long, required = true, num_args = 1..)]
    input: Vec<PathBuf>,
    /// Output folder.
    #[arg(long)]
    out_dir: PathBuf,
    /// Rephrase every clue with this model first (the paper's step 0); cached and resumable.
    #[arg(long)]
    rephrase_model: Option<String>,
    /// The rephrasing prompt ({category}, {clue}, {response}).
    #[arg(long, default_value = "configs/prompts/rift-rephrase.txt")]
    rephrase_template: PathBuf,
    #[command(flatten)]
    client: ClientArgs,
}

#[derive(Debug, clap::Args)]
pub(crate) struct PromptsArgs {
    /// TOML file holding a `[rift]` table, or a bare RIFT config.
    #[arg(long)]
    config: PathBuf,
    /// Prompts JSONL to write.
    #[arg(long)]
    out: PathBuf,
}

#[derive(Debug, clap::Args)]
pub(crate) struct RunArgs {
    #[arg(long)]
    prompts: PathBuf,
    /// A model declared in the models file.
    #[arg(long)]
    model: String,
    /// Responses JSONL (appended to; an existing file is resumed).
    #[arg(long)]
    out: PathBuf,
    /// Only the first N prompts of each structure.
    #[arg(long)]
    limit: Option<usize>,
    #[command(flatten)]
    client: ClientArgs,
}

#[derive(Debug, clap::Args)]
pub(crate) struct JudgeArgs {
    #[arg(long)]
    prompts: PathBuf,
    #[arg(long)]
    responses: PathBuf,
    /// The judge model (temperature 0 unless its prompt says otherwise).
    #[arg(long)]
    judge_model: String,
    /// Folder for judge-prompts.jsonl, judge-responses.jsonl and verdicts.jsonl.
    #[arg(long)]
    out_dir: PathBuf,
    /// The judge prompt ({question}, {expected}, {given}).
    #[arg(long, default_value = "configs/prompts/rift-judge.txt")]
    judge_template: PathBuf,
    /// Also judge the answers the pre-judge settled (to measure their agreement).
    #[arg(long)]
    judge_settled: bool,
    #[command(flatten)]
    client: ClientArgs,
}

#[derive(Debug, clap::Args)]
pub(crate) struct ScoreArgs {
    #[arg(long)]
    prompts: PathBuf,
    #[arg(long)]
    responses: PathBuf,
    /// verdicts.jsonl from `rift judge`; without it the pre-judge's verdicts stand (labelled pre_judge_only).
    #[arg(long)]
    verdicts: Option<PathBuf>,
    /// Output folder.
    #[arg(long)]
    out_dir: PathBuf,
    /// Emit judge requests for pre-judge-settled answers too.
    #[arg(long)]
    judge_settled: bool,
}

#[derive(Debug, clap::Args)]
pub(crate) struct ClientArgs {
    /// The models file.
    #[arg(long, default_value = "configs/models.toml")]
    models: PathBuf,
    /// The response cache (SQLite).
    #[arg(long, default_value = "artifacts/cache/responses.sqlite")]
    cache: PathBuf,
    /// Most requests in flight per base URL.
    #[arg(long)]
    concurrency: Option<usize>,
    /// No progress bar.
    #[arg(long)]
    no_progress: bool,
}

impl ClientArgs {
    fn options(&self) -> RunOptions {
        let mut o = RunOptions::new(self.cache.clone());
        o.concurrency = self.concurrency;
        o.progress = !self.no_progress;
        o
    }
}

pub(crate) fn run(cmd: &Rift) -> anyhow::Result<()> {
    match cmd {
        Rift::Prep(a) => {
            let rephrase = match &a.rephrase_model {
                Some(name) => Some((
                    crate::models::load_model(&a.client.models, name)?,
                    read_text(&a.rephrase_template)?,
                )),
                None => None,
            };
            let rephrase = rephrase.as_ref().map(|(m, t)| (m, t.as_str()));
            prep_stage(&a.input, &a.out_dir, rephrase, &a.client.options()).map(|_| ())
        }
        Rift::Prompts(a) => {
            let cfg = load_config(&a.config)?;
            let n = prompts_stage(&cfg, &a.out)?;
            tracing::info!(prompts = n, out = %a.out.display(), "Wrote RIFT prompts.");
            Ok(())
        }
        Rift::Run(a) => {
            let model = crate::models::load_model(&a.client.models, &a.model)?;
            let mut prompts = read_prompts(&a.prompts)?;
            if let Some(limit) = a.limit {
                prompts = limit_per_structure(prompts, limit);
            }
            run_stage(&model, &prompts, &a.out, &a.client.options())?;
            Ok(())
        }
        Rift::Judge(a) => {
            let model = crate::models::load_model(&a.client.models, &a.judge_model)?;
            let template = read_text(&a.judge_template)?;
            judge_stage(
                &model,
                &a.prompts,
                &a.responses,
                &template,
                &a.out_dir,
                a.judge_settled,
                &a.client.options(),
            )
            .map(|_| ())
        }
        Rift::Score(a) => score_stage(
            &a.prompts,
            &a.responses,
            a.verdicts.as_deref(),
            &a.out_dir,
            a.judge_settled,
        )
        .map(|_| ()),
    }
}

/// Reads a prompt text file, dropping trailing whitespace.
pub(crate) fn read_text(path: &Path) -> anyhow::Result<String> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(text.trim_end().to_owned())
}

/// Reads a `[rift]` table (or a bare RIFT config) from a TOML file.
pub(crate) fn load_config(path: &Path) -> anyhow::Result<RiftConfig> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let value: toml::Table =
        toml::from_str(&text).map_err(|e| UsageError(format!("{}: {e}", path.display())))?;
    let table = match value.get("rift") {
        Some(toml::Value::Table(t)) => t.clone(),
        _ => value,
    };
    RiftConfig::deserialize(toml::Value::Table(table))
        .map_err(|e| UsageError(format!("{}: [rift]: {e}", path.display())).into())
}

use serde::Deserialize as _;

fn read_prompts(path: &Path) -> anyhow::Result<Vec<PromptRecord>> {
    schema::read_jsonl(path).map_err(|e| UsageError(format!("reading prompts: {e}")).into())
}

fn read_responses(path: &Path) -> anyhow::Result<Vec<ResponseRecord>> {
    let (records, report) = schema::read_jsonl_lenient::<ResponseRecord>(path)?;
    if let Some(bad) = report.bad_lines.first() {
        anyhow::bail!("{bad}");
    }
    // A resumed run may hold a retried prompt twice: the newest line wins.
    let mut latest: BTreeMap<(String, u32, String), usize> = BTreeMap::new();
    for (i, r) in records.iter().enumerate() {
        latest.insert((r.id.clone(), r.sample_index, r.model.clone()), i);
    }
    let mut keep: Vec<usize> = latest.into_values().collect();
    keep.sort_unstable();
    Ok(keep.into_iter().map(|i| records[i].clone()).collect())
}

fn limit_per_structure(prompts: Vec<PromptRecord>, limit: usize) -> Vec<PromptRecord> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    prompts
        .into_iter()
        .filter(|p| {
            let s = p
                .extra
                .get("structure")
                .and_then(|v| v.as_str())
                .unwrap_or("")
                .to_owned();
            let n = seen.entry(s).or_insert(0);
            *n += 1;
            *n <= limit
        })
        .collect()
}

/// Loads the dataset a config names: a prepared `questions.jsonl`, or a raw clue file prepared in memory.
pub(crate) fn load_dataset(path: &Path) -> anyhow::Result<Vec<Question>> {
    if path.extension().is_some_and(|e| e == "jsonl") {
        return jeopardy_prep::load_questions(path).map_err(|e| UsageError(e.to_string()).into());
    }
    let prepared = jeopardy_prep::prepare_files(&[path.to_owned()], None)
        .map_err(|e| UsageError(e.to_string()))?;
    tracing::info!(
        path = %path.display(),
        kept = prepared.questions.len(),
        dropped = prepared.skipped.len(),
        "Prepared a raw clue file in memory (no rephrasing)."
    );
    Ok(prepared.questions)
}

/// `rift prep`: loads, (optionally) rephrases, cleans and writes the dataset; prints the summary tables.
#[allow(clippy::print_stdout)]
pub(crate) fn prep_stage(
    inputs: &[PathBuf],
    out_dir: &Path,
    rephrase: Option<(&ModelConfig, &str)>,
    opts: &RunOptions,
) -> anyhow::Result<jeopardy_prep::Prepared> {
    let rephrasings = match rephrase {
        None => None,
        Some((model, template)) => {
            let mut clues = Vec::new();
            for p in inputs {
                clues.extend(jeopardy_prep::load_clues(p).map_err(|e| UsageError(e.to_string()))?);
            }
            let params = RequestParams {
                temperature: Some(0.0),
                max_tokens: Some(256),
                ..RequestParams::default()
            };
            let requests = jeopardy_prep::rephrase_requests(&clues, template, &params);
            let req_path = out_dir.join("rephrase-prompts.jsonl");
            let resp_path = out_dir.join("rephrase-responses.jsonl");
            schema::write_jsonl_atomic(&req_path, &requests)?;
            tracing::info!(requests = requests.len(), model = %model.name, "Rephrasing clues.");
            inference_client::run_prompts_blocking(model, &requests, &resp_path, opts)?;
            Some(jeopardy_prep::parse_rephrasings(&read_responses(
                &resp_path,
            )?))
        }
    };
    let prepared = jeopardy_prep::prepare_files(inputs, rephrasings.as_ref())
        .map_err(|e| UsageError(e.to_string()))?;
    let paths = jeopardy_prep::write_outputs(&prepared, out_dir)?;
    println!("{}", prepared.summary.to_markdown());
    tracing::info!(questions = %paths.questions.display(), skipped = %paths.skipped.display(), "Wrote the prepared dataset.");
    Ok(prepared)
}

/// `rift prompts`: samples the experiment and writes its prompts atomically; returns how many.
pub(crate) fn prompts_stage(cfg: &RiftConfig, out: &Path) -> anyhow::Result<usize> {
    let questions = load_dataset(&cfg.dataset)?;
    let multi = read_text(&cfg.system_prompt)?;
    let baseline = read_text(&cfg.baseline_system_prompt)?;
    let prompts = prompt_gen::rift::build_experiment(
        &questions,
        cfg,
        SystemPrompts {
            multi: &multi,
            baseline: &baseline,
        },
    )
    .map_err(|e| UsageError(e.to_string()))?;
    schema::write_jsonl_atomic(out, &prompts)?;
    Ok(prompts.len())
}

/// `rift run`: one model over a prompts list through the inference client.
pub(crate) fn run_stage(
    model: &ModelConfig,
    prompts: &[PromptRecord],
    out: &Path,
    opts: &RunOptions,
) -> anyhow::Result<RunSummary> {
    let s = inference_client::run_prompts_blocking(model, prompts, out, opts)?;
    if s.failed > 0 {
        tracing::warn!(failed = s.failed, out = %out.display(), "Some prompts failed; they score as failed replies, and a rerun retries them.");
    }
    Ok(s)
}

/// `rift judge`: judge requests → judge model → verdicts. Returns the verdicts file.
pub(crate) fn judge_stage(
    judge: &ModelConfig,
    prompts: &Path,
    responses: &Path,
    template: &str,
    out_dir: &Path,
    judge_settled: bool,
    opts: &RunOptions,
) -> anyhow::Result<PathBuf> {
    let prompts = read_prompts(prompts)?;
    let responses = read_responses(responses)?;
    let scored = scoring::rift::score(&prompts, &responses, None, ScoreOptions { judge_settled })?;
    let judge_prompts = scoring::rift::judge_prompts(
        &scored.judge_requests,
        template,
        // One word is asked for; the cap keeps a rambling judge cheap (its first word still counts).
        &RequestParams {
            max_tokens: Some(8),
            ..RequestParams::default()
        },
    );
    let req_path = out_dir.join("judge-prompts.jsonl");
    let resp_path = out_dir.join("judge-responses.jsonl");
    let verdict_path = out_dir.join("verdicts.jsonl");
    schema::write_jsonl_atomic(&req_path, &judge_prompts)?;
    tracing::info!(requests = judge_prompts.len(), judge = %judge.name, "Judging unsettled answers.");
    inference_client::run_prompts_blocking(judge, &judge_prompts, &resp_path, opts)?;
    let verdicts = scoring::rift::parse_verdicts(&read_responses(&resp_path)?);
    schema::write_jsonl_atomic(&verdict_path, &verdicts)?;
    let usable = verdicts.iter().filter(|v| v.verdict.is_some()).count();
    tracing::info!(verdicts = verdicts.len(), usable, out = %verdict_path.display(), "Wrote verdicts.");
    Ok(verdict_path)
}

/// What `rift score` found, per (model, structure).
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct ScoreSummary {
    pub(crate) rows: Vec<ScoreRow>,
    pub(crate) pre_judge: PreJudgeReport,
    pub(crate) judge_requests: usize,
}

#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct ScoreRow {
    pub(crate) model: String,
    pub(crate) structure: Structure,
    pub(crate) prompts: usize,
    pub(crate) questions: u64,
    pub(crate) correct: u64,
    pub(crate) mean_accuracy: f64,
    pub(crate) wrong_question: u64,
    pub(crate) incorrect: u64,
    pub(crate) missing: u64,
    pub(crate) extra: u64,
    pub(crate) stopped_early: usize,
    pub(crate) ran_long: usize,
    pub(crate) empty_or_malformed: usize,
}

/// `rift score`: writes answer-scores.jsonl, prompt-scores.jsonl, judge-requests.jsonl and summary.{json,md}.
#[allow(clippy::print_stdout)]
pub(crate) fn score_stage(
    prompts: &Path,
    responses: &Path,
    verdicts: Option<&Path>,
    out_dir: &Path,
    judge_settled: bool,
) -> anyhow::Result<ScoreSummary> {
    let prompts = read_prompts(prompts)?;
    let responses = read_responses(responses)?;
    let verdicts: Option<Vec<JudgeVerdict>> = match verdicts {
        Some(p) => Some(schema::read_jsonl(p)?),
        None => None,
    };
    let scored = scoring::rift::score(
        &prompts,
        &responses,
        verdicts.as_deref(),
        ScoreOptions { judge_settled },
    )?;
    schema::write_jsonl_atomic(&out_dir.join("answer-scores.jsonl"), &scored.answers)?;
    schema::write_jsonl_atomic(&out_dir.join("prompt-scores.jsonl"), &scored.prompts)?;
    schema::write_jsonl_atomic::<JudgeRequest>(
        &out_dir.join("judge-requests.jsonl"),
        &scored.judge_requests,
    )?;
    let summary = ScoreSummary {
        rows: summarize(&scored.prompts, &scored.answers),
        pre_judge: scoring::rift::pre_judge_report(
            &scored.answers,
            verdicts.as_deref().unwrap_or(&[]),
        ),
        judge_requests: scored.judge_requests.len(),
    };
    let md = summary_markdown(&summary);
    schema::write_atomic(
        &out_dir.join("summary.json"),
        &serde_json::to_vec_pretty(&summary)?,
    )?;
    schema::write_atomic(&out_dir.join("summary.md"), md.as_bytes())?;
    println!("{md}");
    Ok(summary)
}

fn summarize(prompts: &[PromptScore], answers: &[AnswerScore]) -> Vec<ScoreRow> {
    let mut rows: BTreeMap<(String, Structure), ScoreRow> = BTreeMap::new();
    for p in prompts {
        let r = rows
            .entry((p.model.clone(), p.structure))
            .or_insert_with(|| ScoreRow {
                model: p.model.clone(),
                structure: p.structure,
                prompts: 0,
                questions: 0,
                correct: 0,
                mean_accuracy: 0.0,
                wrong_question: 0,
                incorrect: 0,
                missing: 0,
                extra: 0,
                stopped_early: 0,
                ran_long: 0,
                empty_or_malformed: 0,
            });
        r.prompts += 1;
        r.questions += u64::from(p.num_questions);
        r.correct += u64::from(p.correct);
        r.mean_accuracy += p.accuracy;
        r.wrong_question += u64::from(p.wrong_question);
        r.missing += u64::from(p.missing);
        r.extra += u64::from(p.extra);
        r.stopped_early += usize::from(p.stopped_early);
        r.ran_long += usize::from(p.ran_long);
        r.empty_or_malformed += usize::from(matches!(
            p.outcome,
            schema::rift::ReplyOutcome::Empty | schema::rift::ReplyOutcome::Malformed
        ));
    }
    for a in answers
        .iter()
        .filter(|a| a.verdict == schema::rift::Verdict::Incorrect)
    {
        if let Some(r) = rows.get_mut(&(a.model.clone(), a.structure)) {
            r.incorrect += 1;
        }
    }
    let mut out: Vec<ScoreRow> = rows.into_values().collect();
    for r in &mut out {
        r.mean_accuracy /= r.prompts.max(1) as f64;
    }
    out
}

fn summary_markdown(s: &ScoreSummary) -> String {
    let mut md = String::new();
    let _ = writeln!(
        md,
        "| model | structure | prompts | questions | correct | mean accuracy | incorrect | wrong question (share of incorrect) | missing | extra | stopped early | ran long | empty/malformed |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    for r in &s.rows {
        let share = if r.incorrect == 0 {
            0.0
        } else {
            r.wrong_question as f64 / r.incorrect as f64 * 100.0
        };
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {:.1}% | {} | {} ({share:.0}%) | {} | {} | {} | {} | {} |",
            r.model,
            r.structure.as_str(),
            r.prompts,
            r.questions,
            r.correct,
            r.mean_accuracy * 100.0,
            r.incorrect,
            r.wrong_question,
            r.missing,
            r.extra,
            r.stopped_early,
            r.ran_long,
            r.empty_or_malformed
        );
    }
    let p = &s.pre_judge;
    let pct = |a: u64, b: u64| {
        if b == 0 {
            0.0
        } else {
            a as f64 / b as f64 * 100.0
        }
    };
    let _ = writeln!(
        md,
        "\nPre-judge: settled {} of {} answered pairs ({:.1}%); LLM judge settled {}; {} stand on the pre-judge alone; {} judge requests.",
        p.settled_by_pre_judge,
        p.answered,
        pct(p.settled_by_pre_judge, p.answered),
        p.judged_by_llm,
        p.pre_judge_only,
        s.judge_requests
    );
    if p.both > 0 {
        let _ = writeln!(
            md,
            "Pre-judge vs LLM judge on {} pairs both judged: {} agree ({:.1}%).",
            p.both,
            p.agree,
            pct(p.agree, p.both)
        );
    }
    md
}
