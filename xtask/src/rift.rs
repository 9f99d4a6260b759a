//! `cargo xtask rift prep | prompts | run | judge | score | audit | agreement | judge-pairs`: flags → config → `harness::rift` → printed summary.

use std::path::{Path, PathBuf};

use anyhow::Context;
use harness::helper::HelperCall;
use harness::rift::{Judge, Rephrase, Score};
use pipeline::config::{LoadedJudge, RiftPrepSection, load_section};
use prompt_gen::rift::RiftConfig;
use schema::judge::JudgeRole;
use schema::paths::ModelPaths;

use crate::client::{ClientArgs, ClientDefaults};

/// The `[rift-prep]` section of `--config`, when one is given.
fn prep_section(config: Option<&Path>) -> anyhow::Result<Option<RiftPrepSection>> {
    config.map(load_section::<RiftPrepSection>).transpose()
}

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
    /// Draw a seeded sample of judged answers of a run into a CSV with an empty `human_label` column, to check by hand.
    Audit(AuditArgs),
    /// Agreement of the verdicts with the human labels of an audit CSV (overall and per verdict source, Cohen's κ).
    Agreement(AgreementArgs),
    /// Judge a CSV of (id, question, expected, given) pairs directly with the pre-judge (and the LLM judge with
    /// `--judge-model`) into `id, verdict, source`; with a `label` column, print coverage and precision per kind.
    JudgePairs(JudgePairsArgs),
}

#[derive(Debug, clap::Args)]
pub(crate) struct JudgePairsArgs {
    /// A CSV with the columns `id, question, expected, given` (optional `kind` and `label`; others are ignored).
    #[arg(long)]
    input: PathBuf,
    /// The verdicts CSV to write (`id, verdict, source`).
    #[arg(long)]
    out: PathBuf,
    /// Send what the pre-judge cannot settle to this judge model; without it those pairs are UNDECIDED.
    #[arg(long)]
    judge_model: Option<String>,
    /// Folder for judge-prompts.jsonl, judge-responses.jsonl and verdicts.jsonl (default: `<out>` without its
    /// extension, plus `-judge`).
    #[arg(long)]
    judge_dir: Option<PathBuf>,
    /// The judge prompt ({question}, {expected}, {given}); default: the config's `[judges.rift] prompt`, else
    /// `configs/prompts/rift-judge.txt`.
    #[arg(long)]
    judge_template: Option<PathBuf>,
    /// A config whose `[judges.rift]` table sets the judge's prompt, request settings and tries.
    #[arg(long)]
    config: Option<PathBuf>,
    #[command(flatten)]
    client: ClientArgs,
}

#[derive(Debug, clap::Args)]
pub(crate) struct AuditArgs {
    /// A run folder (`artifacts/runs/<name>`); its `rift/answer-scores.jsonl` is sampled.
    #[arg(long)]
    run_dir: PathBuf,
    /// How many judged answers (the paper checked 100).
    #[arg(long, default_value_t = 100)]
    n: usize,
    #[arg(long, default_value_t = 0)]
    seed: u32,
    #[arg(long)]
    out: PathBuf,
}

#[derive(Debug, clap::Args)]
pub(crate) struct AgreementArgs {
    /// An audit CSV whose `human_label` column is filled in (CORRECT or INCORRECT; empty rows are left out).
    #[arg(long)]
    labels: PathBuf,
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
    /// A config whose `[rift-prep]` section sets `rephrase-max-tokens` (default: 4096).
    #[arg(long)]
    config: Option<PathBuf>,
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
    /// The judge prompt ({question}, {expected}, {given}); default: the config's `[judges.rift] prompt`, else
    /// `configs/prompts/rift-judge.txt`.
    #[arg(long)]
    judge_template: Option<PathBuf>,
    /// Also judge the answers the pre-judge settled (to measure their agreement).
    #[arg(long)]
    judge_settled: bool,
    /// A config whose `[judges.rift]` table sets the judge's prompt, `max-tokens`, `tries`, `reasoning-effort` and
    /// `extra-body` (defaults: 4096 tokens, 3 tries).
    #[arg(long)]
    config: Option<PathBuf>,
    #[command(flatten)]
    client: ClientArgs,
}

#[derive(Debug, clap::Args)]
pub(crate) struct ScoreArgs {
    #[arg(long)]
    prompts: PathBuf,
    #[arg(long)]
    responses: PathBuf,
    /// verdicts.jsonl from `rift judge`; without it the answers the pre-judge cannot settle are unjudged.
    #[arg(long)]
    verdicts: Option<PathBuf>,
    /// Output folder.
    #[arg(long)]
    out_dir: PathBuf,
    /// Emit judge requests for pre-judge-settled answers too.
    #[arg(long)]
    judge_settled: bool,
}

#[allow(clippy::print_stdout)]
pub(crate) fn run(cmd: &Rift) -> anyhow::Result<()> {
    let defaults = ClientDefaults::standalone();
    match cmd {
        Rift::Prep(a) => {
            let model = a
                .rephrase_model
                .as_deref()
                .map(|name| pipeline::models::load_model(a.client.models_file(&defaults), name))
                .transpose()?;
            let template = match &model {
                Some(_) => harness::read_text(&a.rephrase_template)?,
                None => String::new(),
            };
            let call = prep_section(a.config.as_deref())?
                .map_or_else(HelperCall::rephrase, |p| p.rephrase_call());
            let client = a.client.client(&defaults)?;
            let rephrase = model.as_ref().map(|model| Rephrase {
                model,
                template: &template,
                call: &call,
                client: &client,
            });
            let prepared = harness::rift::prep(&a.input, &a.out_dir, rephrase.as_ref())?;
            println!("{}", prepared.summary.to_markdown());
        }
        Rift::Prompts(a) => {
            let cfg: RiftConfig = load_section(&a.config)?;
            let n = harness::rift::write_prompts(&cfg, &a.out)?;
            tracing::info!(prompts = n, out = %a.out.display(), "Wrote RIFT prompts.");
        }
        Rift::Run(a) => {
            let model = pipeline::models::load_model(a.client.models_file(&defaults), &a.model)?;
            let mut prompts = harness::read_prompts(&a.prompts)?;
            if let Some(limit) = a.limit {
                prompts = harness::rift::limit_per_structure(prompts, limit);
            }
            harness::rift::run(&model, &prompts, &a.out, &a.client.client(&defaults)?)?;
        }
        Rift::Judge(a) => {
            let judge = LoadedJudge::standalone(
                a.config.as_deref(),
                JudgeRole::RiftAnswers,
                Some(&a.judge_model),
                a.judge_template.as_deref(),
                a.client.models_file(&defaults),
            )?
            .context("a judge named on the command line")?;
            let s = harness::rift::judge(&Judge {
                judge: judge.judge(),
                prompts: &a.prompts,
                responses: &a.responses,
                judge_settled: a.judge_settled,
                files: &ModelPaths::in_dir(&a.out_dir),
                client: &a.client.client(&defaults)?,
            })?;
            println!(
                "judge requests     {} judged, {} unjudged after {} tries ({:.1}% failed); {} requests sent",
                s.judged,
                s.unjudged,
                judge.call.tries,
                s.judge_failure_share() * 100.0,
                s.requests_sent
            );
            println!("verdicts           {}", s.verdicts_file.display());
        }
        Rift::Audit(a) => {
            let answers = schema::paths::RunPaths::new(&a.run_dir).rift_answer_scores();
            let n = harness::audit::sample(&answers, a.n, a.seed, &a.out)?;
            tracing::info!(items = n, out = %a.out.display(), "Wrote the audit sample; fill in `human_label`.");
        }
        Rift::Agreement(a) => {
            let rows = harness::audit::agreement(&a.labels)?;
            println!("{}", harness::audit::to_markdown(&rows));
        }
        Rift::JudgePairs(a) => {
            let pairs = harness::pairs::read_pairs(&a.input)?;
            let judged = match &a.judge_model {
                None => harness::pairs::judge_pairs(&pairs, None)?,
                Some(name) => {
                    let judge = LoadedJudge::standalone(
                        a.config.as_deref(),
                        JudgeRole::RiftAnswers,
                        Some(name),
                        a.judge_template.as_deref(),
                        a.client.models_file(&defaults),
                    )?
                    .context("a judge named on the command line")?;
                    let dir = a.judge_dir.clone().unwrap_or_else(|| {
                        let stem = a.out.file_stem().unwrap_or_default().to_string_lossy();
                        a.out.with_file_name(format!("{stem}-judge"))
                    });
                    harness::pairs::judge_pairs(
                        &pairs,
                        Some(&harness::pairs::PairJudge {
                            judge: judge.judge(),
                            files: &ModelPaths::in_dir(&dir),
                            client: &a.client.client(&defaults)?,
                        }),
                    )?
                }
            };
            harness::pairs::write_verdicts(&a.out, &judged)?;
            let count =
                |s: harness::pairs::PairSource| judged.iter().filter(|j| j.source == s).count();
            tracing::info!(
                pairs = judged.len(),
                pre_judge = count(harness::pairs::PairSource::PreJudge),
                llm = count(harness::pairs::PairSource::Llm),
                unjudged = count(harness::pairs::PairSource::Unjudged),
                out = %a.out.display(),
                "Wrote pair verdicts."
            );
            let stats = harness::pairs::kind_stats(&pairs, &judged);
            if !stats.is_empty() {
                println!("{}", harness::pairs::to_markdown(&stats));
            }
        }
        Rift::Score(a) => {
            let summary = harness::rift::score(&Score {
                prompts: &a.prompts,
                responses: &a.responses,
                verdicts: a.verdicts.as_deref(),
                judge_settled: a.judge_settled,
                files: &ModelPaths::in_dir(&a.out_dir),
            })?;
            println!("{}", summary.to_markdown());
        }
    }
    Ok(())
}
