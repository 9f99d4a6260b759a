//! `cargo xtask pipeline`: every stage that is out of date, in order, from offline assets to the HTML report.
//!
//! assets → vocabulary (only when missing or asked) → Jeopardy! prep → IFScale prompts → RIFT prompts →
//! generation (both benchmarks, every model) → judging → scoring → analysis → figures → report.
//! Each stage records a fingerprint of its inputs under `<run>/.stages/`; a stage whose inputs did not change and
//! whose outputs exist is skipped, so a rerun of a finished pipeline makes no model call.
//!
//! The `Stager` runs each stage with a `harness::fresh::Fingerprint` of its inputs. It does not stamp a stage after
//! which the client counts more unanswered prompts: the run lists them in `summary.md` and ends `Incomplete` (exit 3).
//! Per-model folders (`RunPaths::model`) are joined into one score file per benchmark before the analysis.

mod config;
mod dry_run;
mod metrics;
mod pilot;
mod report;
mod rift_data;

use std::path::{Path, PathBuf};
use std::time::Instant;

use inference_client::{Client, ModelConfig};
use schema::paths::{Bench, RunPaths};

pub(crate) use config::{
    PipelineConfig, RiftPrepSection, coherence_rubric, ifscale_judge_call, json_schema,
    load_section, rift_judge_call,
};
use harness::fresh::{Fingerprint, Stamps, concat_jsonl};

use crate::UsageError;
use crate::client::{ClientArgs, ClientDefaults};

#[derive(Debug, clap::Args)]
pub(crate) struct PipelineArgs {
    /// The experiment config (TOML; unknown keys are errors).
    #[arg(long, default_value = "configs/default.toml")]
    config: PathBuf,
    /// Print, per stage, how many requests would be sent and their worst-case cost; send nothing.
    #[arg(long)]
    dry_run: bool,
    /// Send N seeded prompts per model and stage (default 3) through the run's client and cache, then print the
    /// expected tokens and cost of the whole run with a range (tokens and time for models without prices). The
    /// run reuses the pilot's answers.
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "3", conflicts_with = "dry_run")]
    pilot: Option<usize>,
    /// Rebuild the IFScale vocabulary from `[vocab].corpus` even when the file exists.
    #[arg(long)]
    rebuild_vocab: bool,
    /// Run every stage even when its inputs did not change.
    #[arg(long)]
    force: bool,
    /// Append one JSON line per stage to this file (created anew): wall time, CPU time, peak RSS, rows and bytes
    /// written under the run folder and the cache (what `cargo xtask bench pipeline` tabulates).
    #[arg(long)]
    stage_metrics: Option<PathBuf>,
    #[command(flatten)]
    client: ClientArgs,
}

/// The `max_tokens` each model's IFScale generation requests carry: `[ifscale] max-tokens` when set (it overrides
/// the model's, as in the request body), else the model's own `max-tokens`; a model with neither is uncapped.
pub(crate) fn ifscale_caps(
    ifs: Option<&prompt_gen::ifscale::IfscaleConfig>,
    models: &[inference_client::ModelConfig],
) -> Vec<::report::departures::OutputCap> {
    use ::report::departures::{CapSource, OutputCap};
    let Some(ifs) = ifs else {
        return Vec::new();
    };
    models
        .iter()
        .filter_map(|m| {
            let (max_tokens, source) = match (ifs.max_tokens, m.max_tokens) {
                (Some(t), _) => (t, CapSource::RunConfig),
                (None, Some(t)) => (t, CapSource::ModelsFile),
                (None, None) => return None,
            };
            Some(OutputCap {
                model: m.name.clone(),
                max_tokens,
                source,
            })
        })
        .collect()
}

/// What the run did, for the report and the summary.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    pub(crate) stages_run: Vec<String>,
    pub(crate) stages_skipped: Vec<String>,
    /// Stages that ran but left prompts without an answer, with how many.
    pub(crate) incomplete: Vec<(String, usize)>,
}

pub(crate) fn run(args: &PipelineArgs) -> anyhow::Result<()> {
    let started = Instant::now();
    let cfg = PipelineConfig::load(&args.config)?;
    let config_text = std::fs::read_to_string(&args.config)?;
    let run_dir = cfg.run_dir();
    let paths = RunPaths::new(&run_dir);
    let defaults = ClientDefaults {
        models_file: cfg.run.models_file.clone(),
        cache: cfg.run.cache.clone(),
        max_cost_usd: cfg.run.max_cost_usd,
        ledger: Some(paths.spend_ledger()),
    };
    let models_file = args.client.models_file(&defaults);
    let models = cfg
        .run
        .models
        .iter()
        .map(|name| crate::models::load_model(models_file, name))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let client = args.client.client(&defaults)?;
    let load = |name: Option<&str>| {
        name.map(|n| crate::models::load_model(models_file, n))
            .transpose()
    };
    let ifscale_judge = load(cfg.ifscale.as_ref().and_then(|c| c.judge_model.as_deref()))?;
    // The coherence rubric is read up front (only when a judge will get it), so a missing file stops the run
    // before anything is sent.
    let rubric = match (&cfg.ifscale, &ifscale_judge) {
        (Some(ifs), Some(_)) => coherence_rubric(ifs, &args.config)?,
        _ => String::new(),
    };
    let rift_judge = load(
        cfg.rift_prep
            .as_ref()
            .and_then(|p| p.judge_model.as_deref()),
    )?;

    let rift_prep = match (&cfg.rift, &cfg.rift_prep) {
        (Some(rift), Some(prep)) if !prep.inputs.is_empty() => Some((rift, prep)),
        _ => None,
    };
    let rephraser = load(rift_prep.and_then(|(_, p)| p.rephrase_model.as_deref()))?;
    let prepared = match rift_prep {
        Some((rift, prep)) => rift_data::belongs(
            rift,
            &rift_data::prep_fingerprint(prep, rephraser.as_ref())?,
        ),
        None => true,
    };
    if args.dry_run {
        return dry_run::dry_run(&cfg, &models, &paths, &client, prepared);
    }
    if let Some(per_stage) = args.pilot {
        let (rift, notes) = pilot::rift_source(&cfg, prepared);
        return pilot::pilot(
            &pilot::Pilot {
                cfg: &cfg,
                per_stage: per_stage.max(1),
                models: &models,
                ifscale_judge: ifscale_judge.as_ref(),
                rubric: &rubric,
                rift_judge: rift_judge.as_ref(),
                rift,
                paths: &paths,
                client: &client,
            },
            &notes,
        );
    }
    // A missing clue file stops the run before anything is sent.
    if let Some(missing) = rift_prep.and_then(|(_, p)| rift_data::missing_input(p)) {
        return Err(rift_data::missing_clues_error(missing, &args.config).into());
    }
    // One writer per run: a second pipeline on the same run folder waits here, saying so, until this one exits,
    // then finds its stages up to date (the client also locks each responses file it writes).
    let _run_lock = schema::WriterLock::acquire(&paths.root.join(".lock"))?;
    let (stages, requests) = plan(
        &cfg,
        models.len(),
        ifscale_judge.is_some(),
        rift_judge.is_some(),
    );
    client.plan_stages(stages, requests);
    let stamps = Stamps::new(&run_dir);
    let mut out = Outcome::default();
    let metrics = match &args.stage_metrics {
        Some(file) => {
            // The cache is SQLite: its file and its write-ahead log.
            let cache = args.client.cache_path(&defaults);
            let mut roots = vec![run_dir.clone(), cache.to_owned()];
            for suffix in ["-wal", "-shm"] {
                let mut p = cache.as_os_str().to_owned();
                p.push(suffix);
                roots.push(PathBuf::from(p));
            }
            Some(metrics::Metrics::new(file, roots)?)
        }
        None => None,
    };
    let mut stage = Stager {
        stamps: &stamps,
        force: args.force,
        out: &mut out,
        client: &client,
        stopped: Default::default(),
        started: 0,
        metrics: metrics.as_ref(),
        judge_checked: cfg.judge_check.enabled,
        judge_tallies: Default::default(),
    };

    // Offline assets for embedded models are resolved while loading the models (see `crate::models`).
    if let Some(ifs) = &cfg.ifscale
        && let Some(file) = &ifs.vocab
    {
        vocab_stage(file, cfg.vocab.as_ref(), args.rebuild_vocab)?;
    }
    if let Some((rift, prep)) = rift_prep {
        rift_data::prep_stage(rift, prep, rephraser.as_ref(), &client, &mut stage)?;
    }
    if let Some(ifs) = &cfg.ifscale {
        ifscale_stages(
            ifs,
            ifscale_judge.as_ref(),
            &rubric,
            &models,
            &paths,
            &client,
            &mut stage,
        )?;
    }
    if let Some(rift) = &cfg.rift {
        rift_stages(
            rift,
            rift_judge.as_ref(),
            &rift_judge_call(cfg.rift_prep.as_ref()),
            &models,
            &paths,
            &client,
            &mut stage,
        )?;
    }
    let checked = judge_check_stages(
        &cfg,
        ifscale_judge.as_ref().map(|j| (j, rubric.as_str())),
        rift_judge.as_ref(),
        &models,
        &paths,
        &client,
        &mut stage,
    )?;
    let prices: ::report::cost::Prices = models
        .iter()
        .chain(ifscale_judge.iter())
        .chain(rift_judge.iter())
        .map(|m| (m.name.clone(), (m.price_in_per_mtok, m.price_out_per_mtok)))
        .collect();
    let caps = ifscale_caps(cfg.ifscale.as_ref(), &models);
    report::analyse_and_report(&cfg, &config_text, &paths, &prices, &caps, &mut stage)?;
    client.finish_stages();
    let mut summary = ::report::summary_markdown(
        &cfg.run.name,
        &paths,
        &cfg.run.models,
        out.stages_run.len(),
        out.stages_skipped.len(),
        started.elapsed().as_secs_f64(),
        &prices,
        &caps,
    )?;
    if !out.incomplete.is_empty() {
        summary.push_str("\n## Incomplete\n\nThese stages finished without an answer to every prompt (failed after their retries, not sent because of the cost limit, left unjudged by a configured judge, or stopped because their model cannot be used); they are not marked done, and a plain rerun sends what is missing.\n\n| stage | prompts without an answer |\n|---|---:|\n");
        for (name, n) in &out.incomplete {
            let n = if *n == 0 {
                "–".to_owned()
            } else {
                n.to_string()
            };
            summary.push_str(&format!("| {name} | {n} |\n"));
        }
    }
    if let Some(cap) = client.cap_usd() {
        summary.push_str(&format!(
            "\nSpent {:.4} of the run's {cap:.2} USD budget (ledger: {}).\n",
            client.spent_usd(),
            paths.spend_ledger().display()
        ));
    }
    schema::write_atomic(&paths.summary(), summary.as_bytes())?;
    print_summary(&summary);
    let failed: Vec<String> = checked
        .iter()
        .flat_map(|f| &f.checks)
        .filter(|c| !c.passed)
        .inspect(|c| {
            if c.kept {
                tracing::warn!(
                    "{}; its verdicts are kept on purpose ([judge-check] keep-failed-judge).",
                    c.reason()
                );
            } else {
                tracing::error!("{}.", c.reason());
            }
        })
        .filter(|c| !c.kept)
        .map(schema::judge_check::JudgeCheck::reason)
        .collect();
    // Incomplete (3) comes before a failed judge (4): the rerun that completes the run checks the judge again.
    if !out.incomplete.is_empty() {
        let missing: usize = out.incomplete.iter().map(|(_, n)| n).sum();
        return Err(crate::Incomplete(format!(
            "the run finished incomplete: {missing} prompts without an answer, in {} stages (see {}); rerun to continue",
            out.incomplete.len(),
            paths.summary().display()
        ))
        .into());
    }
    if !failed.is_empty() {
        return Err(crate::JudgeFailed(format!(
            "the run finished, but {} (see {})",
            failed.join("; "),
            paths.judge_check().display()
        ))
        .into());
    }
    Ok(())
}

/// The judge check (`[judge-check]`): control items for each configured judge, after the stages whose data they
/// are made from, then the run's `judge-check.json` (None when the check is off: a stale file is removed).
fn judge_check_stages(
    cfg: &PipelineConfig,
    // The coherence judge and its rubric.
    ifscale_judge: Option<(&ModelConfig, &str)>,
    rift_judge: Option<&ModelConfig>,
    models: &[ModelConfig],
    paths: &RunPaths,
    client: &Client,
    stage: &mut Stager<'_>,
) -> anyhow::Result<Option<schema::judge_check::JudgeCheckFile>> {
    let jc = &cfg.judge_check;
    if !jc.enabled {
        match std::fs::remove_file(paths.judge_check()) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e.into()),
        }
        return Ok(None);
    }
    let gate = jc.gate();
    let mut checks = Vec::new();
    if let (Some(rift), Some(judge)) = (&cfg.rift, rift_judge) {
        let files = paths.judge_check_dir(Bench::Rift, &judge.name);
        let call = rift_judge_call(cfg.rift_prep.as_ref());
        let template = PathBuf::from("configs/prompts/rift-judge.txt");
        let fp = Fingerprint::new("rift-judge-check")
            .value("judge", judge)?
            .value("judge-call", &call)?
            .value("per-kind", &jc.per_kind)?
            .value("seed", &jc.seed)?
            .file(&paths.rift_prompts())?
            .file(&rift.dataset)?
            .file(&template)?;
        let name = format!("rift-judge-check:{}", judge.name);
        stage.run(&name, fp, &[files.control_verdicts()], || {
            let template = harness::read_text(&template)?;
            let sent = harness::judge_check::rift(&harness::judge_check::RiftCheck {
                judge,
                prompts: &paths.rift_prompts(),
                dataset: &rift.dataset,
                template: &template,
                call: &call,
                plan: jc.plan(),
                files: &files,
                client,
            })?;
            tracing::info!(judge = %judge.name, requests = sent, "Checked the RIFT judge.");
            Ok(())
        })?;
        checks.extend(harness::judge_check::check_of(
            "rift",
            "RIFT answer judge",
            &judge.name,
            &files,
            &paths.root,
            &gate,
            stage.tally(Bench::Rift, &judge.name),
        )?);
    }
    if let (Some(ifs), Some((judge, rubric))) = (&cfg.ifscale, ifscale_judge) {
        let files = paths.judge_check_dir(Bench::Ifscale, &judge.name);
        let call = ifscale_judge_call(ifs);
        let responses: Vec<PathBuf> = models
            .iter()
            .map(|m| paths.model(Bench::Ifscale, &m.name).responses())
            .collect();
        let mut fp = Fingerprint::new("ifscale-judge-check")
            .value("judge", judge)?
            .value("judge-call", &call)?
            .value("per-kind", &jc.per_kind)?
            .value("seed", &jc.seed)?
            .value("threshold", &ifs.coherence_threshold)?
            .file(&ifs.coherence_prompt)?
            .file(&jc.coherent_reports)?;
        for r in &responses {
            fp = fp.file(r)?;
        }
        let name = format!("ifscale-judge-check:{}", judge.name);
        stage.run(&name, fp, &[files.control_verdicts()], || {
            let sent = harness::judge_check::coherence(&harness::judge_check::CoherenceCheck {
                judge,
                responses: &responses,
                coherent: &jc.coherent_reports,
                rubric,
                call: &call,
                threshold: ifs.coherence_threshold,
                plan: jc.plan(),
                files: &files,
                client,
            })?;
            tracing::info!(judge = %judge.name, requests = sent, "Checked the coherence judge.");
            Ok(())
        })?;
        checks.extend(harness::judge_check::check_of(
            "ifscale",
            "IFScale coherence judge",
            &judge.name,
            &files,
            &paths.root,
            &gate,
            stage.tally(Bench::Ifscale, &judge.name),
        )?);
    }
    let file = harness::judge_check::assemble(checks, &paths.judge_check())?;
    Ok(Some(file))
}

/// How many stages the run has and how many prompts its model stages ask (first attempts and judge calls that
/// can be known before running; the RIFT judge's share depends on the pre-judge and is added as it comes), for the
/// overall progress line.
fn plan(
    cfg: &PipelineConfig,
    models: usize,
    ifscale_judge: bool,
    rift_judge: bool,
) -> (usize, u64) {
    let m = models as u64;
    let mut stages = 3; // analysis, explorer, report
    let mut requests = 0;
    if let (Some(_), Some(prep)) = (&cfg.rift, &cfg.rift_prep)
        && !prep.inputs.is_empty()
    {
        stages += 1;
    }
    if cfg.judge_check.enabled {
        stages += usize::from(cfg.ifscale.is_some() && ifscale_judge)
            + usize::from(cfg.rift.is_some() && rift_judge);
    }
    if let Some(ifs) = &cfg.ifscale {
        stages += 1 + models;
        let prompts = (ifs.grid.len() * ifs.seeds.len()) as u64;
        requests += prompts * m * if ifscale_judge { 2 } else { 1 };
    }
    if let Some(rift) = &cfg.rift {
        stages += 1 + models * if rift_judge { 3 } else { 2 };
        let baseline = match rift.baseline_prompts {
            Some(n) => u64::from(n),
            None => std::fs::read(&rift.dataset)
                .map(|b| b.iter().filter(|&&c| c == b'\n').count() as u64)
                .unwrap_or(0),
        };
        requests +=
            (u64::from(rift.linear_prompts) + u64::from(rift.jumping_prompts) + baseline) * m;
    }
    (stages, requests)
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
    /// The command's client: a stage after which it counts more unanswered prompts is incomplete.
    client: &'a Client,
    /// Models whose requests were stopped (stage names end in `:<model>`): their later stages are not run.
    stopped: std::collections::BTreeSet<String>,
    /// Stages reached so far (run, skipped or not run), for the overall progress line.
    started: usize,
    /// Per-stage measurements (`--stage-metrics`).
    metrics: Option<&'a metrics::Metrics>,
    /// `[judge-check] enabled`: unreadable judge replies go to the judge check instead of making a stage
    /// incomplete.
    judge_checked: bool,
    /// What each judge (by benchmark) made of the run's own items, for its check.
    judge_tallies: std::collections::BTreeMap<(Bench, String), harness::helper::JudgeTally>,
}

impl Stager<'_> {
    /// Runs a stage unless it is fresh (see [`Stager::run_inner`]), measuring it when asked to.
    pub(crate) fn run(
        &mut self,
        name: &str,
        fp: Fingerprint,
        outputs: &[PathBuf],
        body: impl FnOnce() -> anyhow::Result<()>,
    ) -> anyhow::Result<bool> {
        self.started += 1;
        self.client.start_stage(self.started, name);
        let Some(m) = self.metrics else {
            return self.run_inner(name, fp, outputs, body);
        };
        let running = m.start();
        // Only this stage's client calls count.
        let _ = self.client.take_in_flight();
        let ran = self.run_inner(name, fp, outputs, body)?;
        m.finish(name, ran, running, self.client.take_in_flight())?;
        Ok(ran)
    }

    fn run_inner(
        &mut self,
        name: &str,
        fp: Fingerprint,
        outputs: &[PathBuf],
        body: impl FnOnce() -> anyhow::Result<()>,
    ) -> anyhow::Result<bool> {
        let model = name.split_once(':').map(|(_, m)| m.to_owned());
        // After Ctrl-C no further stage runs; the stages before are kept (a rerun continues).
        if self.client.stop_handle().is_stopping() {
            return Err(crate::Incomplete(format!(
                "stopped by a signal before stage {name}: the answers in flight were written; rerun to continue"
            ))
            .into());
        }
        if let Some(m) = model.as_ref().filter(|m| self.stopped.contains(*m)) {
            tracing::warn!(stage = name, model = %m, "Not run: this model's requests were stopped.");
            return Ok(false);
        }
        if !self.force && self.stamps.is_fresh(name, &fp, outputs) {
            tracing::info!(stage = name, "Up to date; skipped.");
            self.out.stages_skipped.push(name.to_owned());
            return Ok(false);
        }
        tracing::info!(stage = name, "Running.");
        let before = self.client.unfinished();
        if let Err(e) = body() {
            // A stage cut short by Ctrl-C is not done (like a cost-capped one), whatever it says.
            if self.client.stop_handle().is_stopping() {
                tracing::warn!(stage = name, "Stopped by a signal: {e:#}");
                return Err(crate::Incomplete(format!(
                    "stopped by a signal during stage {name}: the answers in flight were written; rerun to continue"
                ))
                .into());
            }
            // A model that cannot be used (bad key, unknown model, the same 400 again and again, no server that
            // ever answered) stops its own
            // stage; the other models go on and the run ends incomplete. Out of credits stops everything.
            match stopped_model(&e) {
                Some(stop) if !stop.is_out_of_credits() => {
                    tracing::error!(stage = name, "{stop}");
                    self.stopped.extend(model);
                    self.out
                        .incomplete
                        .push((format!("{name} (stopped: {stop})"), 0));
                    self.out.stages_run.push(name.to_owned());
                    return Ok(true);
                }
                _ => return Err(e.context(format!("stage {name}"))),
            }
        }
        let missing = self.client.unfinished() - before;
        if missing > 0 {
            tracing::warn!(
                stage = name,
                missing,
                "Stage finished without an answer to every prompt; not marked done."
            );
            self.out.incomplete.push((name.to_owned(), missing));
            self.out.stages_run.push(name.to_owned());
            return Ok(true);
        }
        self.stamps.mark(name, &fp, outputs)?;
        self.out.stages_run.push(name.to_owned());
        Ok(true)
    }
}

impl Stager<'_> {
    /// What `judge` made of the run's own items in `bench` (nothing when it judged none).
    fn tally(&self, bench: Bench, judge: &str) -> harness::helper::JudgeTally {
        self.judge_tallies
            .get(&(bench, judge.to_owned()))
            .copied()
            .unwrap_or_default()
    }

    /// A configured judge that left more than `UNJUDGED_ALERT_SHARE` of a stage's items unjudged makes the stage
    /// incomplete: said in red, its stamp removed (a rerun asks the judge again), listed in the summary (exit 3).
    /// With the judge check on, only failed requests count here: replies without a readable verdict read the same
    /// on a rerun, so they are the judge's own failure and go to its check (exit 4 when too many).
    fn check_judge(
        &mut self,
        name: &str,
        bench: Bench,
        judge: &str,
        tally: harness::helper::JudgeTally,
    ) -> anyhow::Result<()> {
        self.judge_tallies
            .entry((bench, judge.to_owned()))
            .or_default()
            .add(tally);
        let unjudged = if self.judge_checked {
            tally.failed
        } else {
            tally.unjudged()
        };
        let share = harness::helper::failure_share(tally.items() - unjudged, unjudged);
        if share > harness::helper::UNJUDGED_ALERT_SHARE {
            tracing::error!(
                stage = name,
                judged = tally.judged,
                unjudged,
                share_pct = 100.0 * share,
                "The configured judge left more than 2 % of this stage's items unjudged."
            );
            self.stamps.clear(name)?;
            self.out.incomplete.push((
                format!("{name} (unjudged by the configured judge)"),
                unjudged,
            ));
        }
        Ok(())
    }
}

/// The client's "stop this model" error in an error's chain, if that is what ended a stage.
fn stopped_model(e: &anyhow::Error) -> Option<&inference_client::Error> {
    e.chain().find_map(|c| {
        let client = c
            .downcast_ref::<inference_client::Error>()
            .or_else(|| match c.downcast_ref::<harness::Error>() {
                Some(harness::Error::Client(inner)) => Some(inner),
                _ => None,
            })?;
        client.stops_model().then_some(client)
    })
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

/// One model's IFScale generation (attempts, retry rules, coherence judge, scores) with the config's settings: the
/// stage of the run and the pilot's sample of it call the same thing.
pub(super) fn generate_ifscale(
    ifs: &prompt_gen::ifscale::IfscaleConfig,
    prompts: &[schema::PromptRecord],
    model: &ModelConfig,
    judge: Option<&ModelConfig>,
    rubric: &str,
    files: &schema::paths::ModelPaths,
    client: &Client,
) -> Result<harness::ifscale::GenerationSummary, harness::Error> {
    harness::ifscale::generate(&harness::ifscale::Generation {
        prompts,
        model,
        judge,
        judge_call: &ifscale_judge_call(ifs),
        coherence_rubric: rubric,
        constraint_list: ifs.constraint_list,
        coherence_threshold: ifs.coherence_threshold,
        max_attempts: ifs.max_attempts,
        mode: schema::ifscale::MatchMode::Paper,
        span: ifs.score_span,
        files,
        client,
    })
}

fn ifscale_stages(
    ifs: &prompt_gen::ifscale::IfscaleConfig,
    judge: Option<&ModelConfig>,
    rubric: &str,
    models: &[ModelConfig],
    paths: &RunPaths,
    client: &Client,
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
            let n = harness::ifscale::write_prompts(ifs, None, &prompts_path)?;
            tracing::info!(prompts = n, "Wrote the IFScale prompts.");
            Ok(())
        },
    )?;
    let (mut scores, mut labels, mut attempts) = (Vec::new(), Vec::new(), Vec::new());
    for model in models {
        let files = paths.model(Bench::Ifscale, &model.name);
        let fp = generate_fingerprint(ifs, model, judge, &prompts_path)?;
        let outputs = vec![
            files.responses(),
            files.attempts(),
            files.scores(),
            files.labels(),
        ];
        let name = format!("ifscale-generate:{}", model.name);
        stage.run(&name, fp, &outputs, || {
            let prompts = harness::read_prompts(&prompts_path)?;
            let s = generate_ifscale(ifs, &prompts, model, judge, rubric, &files, client)?;
            tracing::info!(model = %model.name, samples = s.samples, accepted = s.accepted, failed = s.failed, attempts = s.attempts, "IFScale generation finished.");
            Ok(())
        })?;
        if let Some(judge) = judge {
            let tally = harness::ifscale::judge_counts_from_attempts(&files.attempts())?;
            stage.check_judge(&name, Bench::Ifscale, &judge.name, tally)?;
        }
        scores.push(files.scores());
        labels.push(files.labels());
        attempts.push(files.attempts());
    }
    // A model whose stage was stopped (see `Stager::run`) has no files to join.
    for files in [&mut scores, &mut labels, &mut attempts] {
        files.retain(|p| p.is_file());
    }
    let mut fp = Fingerprint::new("ifscale-join");
    for p in scores.iter().chain(&labels).chain(&attempts) {
        fp = fp.value("part", p)?.file(p)?;
    }
    let outputs = [
        paths.ifscale_scores(),
        paths.ifscale_labels(),
        paths.ifscale_attempts(),
    ];
    stage.run("ifscale-join", fp, &outputs, || {
        concat_jsonl(&scores, &paths.ifscale_scores())?;
        concat_jsonl(&labels, &paths.ifscale_labels())?;
        concat_jsonl(&attempts, &paths.ifscale_attempts())?;
        Ok(())
    })?;
    Ok(())
}

/// The fingerprint of one model's IFScale generation stage: the model, the judge, the whole `[ifscale]` section
/// (so the constraint-list reading and the threshold are in it: switching them re-decides every attempt, from the
/// cache), the prompts and, with a judge, the coherence rubric's text.
fn generate_fingerprint(
    ifs: &prompt_gen::ifscale::IfscaleConfig,
    model: &ModelConfig,
    judge: Option<&ModelConfig>,
    prompts: &Path,
) -> anyhow::Result<Fingerprint> {
    let mut fp = Fingerprint::new("ifscale-generate")
        .value("model", model)?
        .value("judge", &judge)?
        .value("ifscale", ifs)?
        .value("constraint-list", &ifs.constraint_list.name())?
        .file(prompts)?;
    if judge.is_some() {
        fp = fp.file(&ifs.coherence_prompt)?;
    }
    Ok(fp)
}

fn rift_stages(
    rift: &prompt_gen::rift::RiftConfig,
    judge: Option<&ModelConfig>,
    judge_call: &harness::helper::HelperCall,
    models: &[ModelConfig],
    paths: &RunPaths,
    client: &Client,
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
            let n = harness::rift::write_prompts(rift, &prompts_path)?;
            tracing::info!(prompts = n, "Wrote the RIFT prompts.");
            Ok(())
        },
    )?;
    let judge_template = PathBuf::from("configs/prompts/rift-judge.txt");
    let mut answer_files = Vec::new();
    let mut prompt_files = Vec::new();
    let mut table_files = Vec::new();
    for model in models {
        let files = paths.model(Bench::Rift, &model.name);
        let responses = files.responses();
        let fp = Fingerprint::new("rift-generate")
            .value("model", model)?
            .file(&prompts_path)?;
        let name = format!("rift-generate:{}", model.name);
        stage.run(&name, fp, std::slice::from_ref(&responses), || {
            harness::rift::run_file(model, &prompts_path, &responses, client)?;
            Ok(())
        })?;
        let mut verdict_path = None;
        if let Some(judge) = judge {
            let fp = Fingerprint::new("rift-judge")
                .value("judge", judge)?
                .value("judge-call", judge_call)?
                .file(&prompts_path)?
                .file(&responses)?
                .file(&judge_template)?;
            let name = format!("rift-judge:{}", model.name);
            stage.run(&name, fp, &[files.verdicts()], || {
                let template = harness::read_text(&judge_template)?;
                harness::rift::judge(&harness::rift::Judge {
                    judge,
                    prompts: &prompts_path,
                    responses: &responses,
                    template: &template,
                    judge_settled: false,
                    call: judge_call,
                    files: &files,
                    client,
                })?;
                Ok(())
            })?;
            if files.verdicts().is_file() {
                let s = harness::rift::JudgeSummary::from_verdicts(&files.verdicts())?;
                stage.check_judge(&name, Bench::Rift, &judge.name, s.tally())?;
            }
            verdict_path = Some(files.verdicts());
        }
        let mut fp = Fingerprint::new("rift-score")
            .file(&prompts_path)?
            .file(&responses)?;
        if let Some(v) = &verdict_path {
            fp = fp.file(v)?;
        }
        let name = format!("rift-score:{}", model.name);
        let outputs = [files.answer_scores(), files.prompt_scores()];
        stage.run(&name, fp, &outputs, || {
            let summary = harness::rift::score(&harness::rift::Score {
                prompts: &prompts_path,
                responses: &responses,
                verdicts: verdict_path.as_deref(),
                judge_settled: false,
                files: &files,
            })?;
            print_summary(&summary.to_markdown());
            Ok(())
        })?;
        let [answers, scores] = outputs;
        if answers.is_file() {
            table_files.push(files.answer_table());
        }
        answer_files.push(answers);
        prompt_files.push(scores);
    }
    for files in [&mut answer_files, &mut prompt_files] {
        files.retain(|p| p.is_file());
    }
    // A Parquet table for every model's answers, or none (then the analysis reads the JSONL).
    if !table_files.iter().all(|p| p.is_file()) || table_files.len() != answer_files.len() {
        table_files.clear();
    }
    // Stamped like a stage: a rerun with unchanged parts copies nothing.
    let mut fp = Fingerprint::new("rift-join").value("tables", &table_files)?;
    for p in answer_files.iter().chain(&prompt_files).chain(&table_files) {
        fp = fp.file(p)?;
    }
    let outputs = [
        paths.rift_answer_scores(),
        paths.rift_prompt_scores(),
        paths.rift_answer_tables(),
    ];
    stage.run("rift-join", fp, &outputs, || {
        concat_jsonl(&answer_files, &paths.rift_answer_scores())?;
        concat_jsonl(&prompt_files, &paths.rift_prompt_scores())?;
        analysis::rift::write_answer_tables(&paths.rift_answer_tables(), &table_files)?;
        Ok(())
    })?;
    Ok(())
}
