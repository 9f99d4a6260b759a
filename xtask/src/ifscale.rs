//! `cargo xtask ifscale prompts|run` and `cargo xtask score-reports`: flags → config → `harness::ifscale` /
//! `harness::reports` → printed summary.

use std::path::PathBuf;

use harness::ifscale::{Generation, write_prompts};
use harness::reports::ScoreReports;
use pipeline::config::{LoadedJudge, load_section};
use prompt_gen::ifscale::IfscaleConfig;
use schema::ifscale::MatchMode;
use schema::judge::JudgeRole;
use schema::paths::ModelPaths;

use crate::client::{ClientArgs, ClientDefaults};

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
    /// Config with an `[ifscale]` section (coherence threshold, constraint-list reading, attempts) and its judges
    /// (`[judges.coherence]`, `[judges.refusal]`).
    #[arg(long, default_value = "configs/default.toml")]
    config: PathBuf,
    /// Coherence judge model (overrides the config's `[judges.coherence] model`).
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
    /// Keyword matching used for the scores.
    #[arg(long, value_enum, default_value = "paper")]
    mode: ModeArg,
    #[command(flatten)]
    client: ClientArgs,
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
            let cfg: IfscaleConfig = load_section(&args.config)?;
            let n = write_prompts(&cfg, args.vocab.as_deref(), &args.out)?;
            tracing::info!(prompts = n, out = %args.out.display(), "Wrote IFScale prompts.");
            Ok(())
        }
        Ifscale::Run(args) => run_cmd(args),
    }
}

#[allow(clippy::print_stdout)]
fn run_cmd(args: &RunArgs) -> anyhow::Result<()> {
    let cfg: IfscaleConfig = load_section(&args.config)?;
    let defaults = ClientDefaults::standalone();
    let models_file = args.client.models_file(&defaults);
    let model = pipeline::models::load_model(models_file, &args.model)?;
    let config = Some(args.config.as_path());
    let name = args.judge_model.as_deref();
    let judge = (!args.no_judge)
        .then(|| LoadedJudge::standalone(config, JudgeRole::Coherence, name, None, models_file))
        .transpose()?
        .flatten();
    let refusal = LoadedJudge::standalone(config, JudgeRole::Refusal, None, None, models_file)?;
    let mut prompts = harness::read_prompts(&args.prompts)?;
    if let Some(n) = args.limit {
        prompts.truncate(n);
    }
    let files = ModelPaths::in_dir(&args.out_dir);
    let s = harness::ifscale::generate(&Generation {
        prompts: &prompts,
        model: &model,
        coherence: judge.as_ref().map(LoadedJudge::judge),
        refusal: refusal.as_ref().map(LoadedJudge::judge),
        constraint_list: cfg.constraint_list,
        coherence_threshold: cfg.coherence_threshold,
        max_attempts: args.max_attempts.unwrap_or(cfg.max_attempts),
        mode: args.mode.mode(),
        span: cfg.score_span,
        files: &files,
        client: &args.client.client(&defaults)?,
    })?;
    println!("model              {}", model.name);
    println!("samples            {}", s.samples);
    println!("accepted           {}", s.accepted);
    println!(
        "failed             {} (every attempt rejected; scored as failed)",
        s.failed
    );
    if s.not_sent > 0 {
        println!(
            "not sent           {} (the cost limit; rerun to continue)",
            s.not_sent
        );
    }
    println!("attempts           {}", s.attempts);
    println!(
        "constraint list    {} reading (`[ifscale] constraint-list`)",
        cfg.constraint_list.name()
    );
    for (reason, n) in &s.rejected {
        let note = if reason == "truncated" {
            " (hit max_tokens)"
        } else {
            ""
        };
        println!("  rejected {reason:<16} {n}{note}");
    }
    match judge.as_ref().filter(|_| s.judge_configured) {
        Some(j) => println!(
            "coherence check    judge {} (threshold {}); {} attempts judged, {} unjudged ({:.1}%: no verdict after every try)",
            j.model.name,
            cfg.coherence_threshold,
            s.judged,
            s.unjudged,
            s.judge_failure_share() * 100.0
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

pub(crate) fn score_reports(args: &ScoreReportsArgs) -> anyhow::Result<()> {
    let s = harness::reports::score_reports(&ScoreReports {
        input: &args.input,
        attempts: args.attempts.as_deref(),
        mode: args.mode.mode(),
        out: &args.out,
        labels: args.labels.as_deref(),
    })?;
    tracing::info!(samples = s.samples, failed = s.failed, labels = s.labels, out = %args.out.display(), "Scored reports.");
    Ok(())
}
