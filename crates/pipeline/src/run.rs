//! A run: its options, the config resolved into models and judges, and the one entry point [`run`] (a dry run, a
//! pilot, or the stages executed, then the summary and the outcome).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use analysis::all::Inputs;
use analysis::models::ReasoningRule;
use harness::fresh::Stamps;
use inference_client::{Client, ModelConfig};
use schema::judge::JudgeRole;
use schema::paths::RunPaths;

use crate::config::{LoadedJudge, PipelineConfig};
use crate::outcome::usage;
use crate::stage::{Ctx, Executor, Stage};
use crate::{dry_run, pilot, plan, rift_data, stages, summary};

/// How to run a config: what `cargo xtask pipeline`'s flags say.
#[derive(Debug, Clone)]
pub struct Options {
    /// The config file (its text is part of the report's fingerprint).
    pub config: PathBuf,
    /// The models file (the `--models` flag, else the config's `models-file`).
    pub models_file: PathBuf,
    /// The response cache the client uses (measured by `--stage-metrics`).
    pub cache: PathBuf,
    /// Print the requests and worst-case cost per stage; send nothing.
    pub dry_run: bool,
    /// Send this many seeded prompts per model and stage and print the expected cost.
    pub pilot: Option<usize>,
    /// Rebuild the IFScale vocabulary even when its file exists.
    pub rebuild_vocab: bool,
    /// Run every stage even when its inputs did not change.
    pub force: bool,
    /// Append one JSON line per stage to this file (`cargo xtask bench pipeline`).
    pub stage_metrics: Option<PathBuf>,
    /// `--until`, `--baseline`, `--margin`: a sequential run's rule (over the config's `[sequential]`).
    pub until: crate::sequential::Flags,
    /// The run folder, instead of the config's `artifacts/runs/<name>` (a shard's, a merge's `--out`).
    pub run_dir: Option<PathBuf>,
    /// Send only this shard's share of the run (`crate::shard`).
    pub shard: Option<crate::shard::Shard>,
}

impl Options {
    /// A whole, ordinary run of `config`: every flag off (each field says what its flag changes).
    pub fn new(config: PathBuf, models_file: PathBuf, cache: PathBuf) -> Options {
        Options {
            config,
            models_file,
            cache,
            dry_run: false,
            pilot: None,
            rebuild_vocab: false,
            force: false,
            stage_metrics: None,
            until: Default::default(),
            run_dir: None,
            shard: None,
        }
    }

    /// The run folder: `run_dir`, else the config's, beside which a shard has its own.
    pub fn run_dir(&self, cfg: &PipelineConfig) -> PathBuf {
        let dir = self.run_dir.clone().unwrap_or_else(|| cfg.run_dir());
        match (&self.shard, &self.run_dir) {
            (Some(shard), None) => shard.run_dir(&dir),
            _ => dir,
        }
    }
}

/// A config resolved for running: its models and judges loaded, its run folder, its client.
pub struct Run {
    pub cfg: PipelineConfig,
    pub opts: Options,
    pub config_text: String,
    pub paths: RunPaths,
    pub stamps: Stamps,
    pub models: Vec<ModelConfig>,
    /// The judges of the benchmarks the config runs (`[judges.<role>]`), loaded, by role.
    pub judges: crate::config::judges::Judges,
    pub rephraser: Option<ModelConfig>,
    /// `[rift] dataset` was prepared from this config's `[rift-prep]` (or the config prepares nothing).
    pub prepared: bool,
    /// The run's one client.
    pub client: Arc<Client>,
    /// A sequential run's current prefix of the grid and what its summary says (empty otherwise).
    pub sequential: crate::sequential::Shared,
    /// The shard this process runs, when the run is split (`crate::shard`).
    pub shard: Option<crate::shard::Sharding>,
}

impl Run {
    /// Resolves `cfg` with `opts`: every model and judge it names, each judge's rubric when a judge gets it; every
    /// problem is a usage error naming the file and the field.
    pub fn load(cfg: PipelineConfig, opts: &Options, client: Arc<Client>) -> anyhow::Result<Run> {
        let config_text = std::fs::read_to_string(&opts.config)?;
        let paths = RunPaths::new(&opts.run_dir(&cfg));
        let models_file = opts.models_file.as_path();
        let load = |name: Option<&str>| {
            name.map(|n| crate::models::load_model(models_file, n))
                .transpose()
        };
        let models = cfg
            .run
            .models
            .iter()
            .map(|name| crate::models::load_model(models_file, name))
            .collect::<anyhow::Result<Vec<_>>>()?;
        // A judge of a benchmark the config leaves out is not loaded (its table may stay in the config).
        let mut judges = crate::config::judges::Judges::new();
        for (role, _) in cfg.judges.iter() {
            let runs = match role.bench() {
                schema::paths::Bench::Ifscale => cfg.ifscale.is_some(),
                schema::paths::Bench::Rift => cfg.rift.is_some() || cfg.rift_prep.is_some(),
            };
            if runs
                && let Some(j) = LoadedJudge::load(&cfg.judges, role, models_file, &opts.config)?
            {
                judges.insert(role, j);
            }
        }
        let rephraser = load(
            cfg.rift_prep()
                .and_then(|(_, p)| p.rephrase_model.as_deref()),
        )?;
        let prepared = match cfg.rift_prep() {
            Some((rift, prep)) => rift_data::belongs(
                rift,
                &rift_data::prep_fingerprint(prep, rephraser.as_ref())?,
            ),
            None => true,
        };
        Ok(Run {
            stamps: Stamps::new(&paths.root),
            cfg,
            opts: opts.clone(),
            config_text,
            paths,
            models,
            judges,
            rephraser,
            prepared,
            client,
            sequential: crate::sequential::Shared::default(),
            shard: opts.shard.map(crate::shard::Sharding::new),
        })
    }

    /// The spend ledger of a config's run (`<run>/spend.jsonl`): the run's client keeps its budget there, so a
    /// cost limit covers reruns.
    pub fn ledger(cfg: &PipelineConfig, opts: &Options) -> PathBuf {
        RunPaths::new(&opts.run_dir(cfg)).spend_ledger()
    }

    /// The run's judge of `role`, when it has one.
    pub fn judge(&self, role: JudgeRole) -> Option<&LoadedJudge> {
        self.judges.get(&role)
    }

    /// The models of the run's judges, in role order.
    pub fn judge_models(&self) -> impl Iterator<Item = &ModelConfig> {
        self.judges.values().map(|j| &j.model)
    }

    /// The run's one client.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Every model the run sends requests to with its prices (per million input and output tokens).
    pub fn prices(&self) -> ::report::cost::Prices {
        self.models
            .iter()
            .chain(self.judge_models())
            .map(|m| (m.name.clone(), (m.price_in_per_mtok, m.price_out_per_mtok)))
            .collect()
    }

    /// The `max_tokens` each model's IFScale generation requests carry: `[ifscale] max-tokens` when set (it
    /// overrides the model's, as in the request body), else the model's own `max-tokens`; a model with neither is
    /// uncapped.
    pub fn ifscale_caps(&self) -> Vec<::report::departures::OutputCap> {
        use ::report::departures::{CapSource, OutputCap};
        let Some(ifs) = &self.cfg.ifscale else {
            return Vec::new();
        };
        self.models
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
}

/// Runs a config: the dry run, the pilot, or every stage that is out of date, then the summary. A run that
/// finished incomplete or with a failed judge returns that [`Failure`].
pub fn run(cfg: PipelineConfig, opts: &Options, client: Arc<Client>) -> anyhow::Result<()> {
    let started = Instant::now();
    if let Some(shard) = opts.shard {
        let base = opts.run_dir.clone().unwrap_or_else(|| cfg.run_dir());
        crate::shard::check_split(&base, &opts.run_dir(&cfg), shard, opts.run_dir.is_none())
            .map_err(crate::outcome::usage)?;
    }
    let run = Run::load(cfg, opts, client)?;
    crate::routing::warn(&run);
    let stages = crate::shard::filter(&run, stages::list(&run));
    if opts.dry_run {
        return dry_run::dry_run(&run, &stages);
    }
    if let Some(per_stage) = opts.pilot {
        return pilot::pilot(&run, &stages, per_stage.max(1));
    }
    // A missing clue file stops the run before anything is sent.
    if let Some(missing) = run
        .cfg
        .rift_prep()
        .and_then(|(_, p)| rift_data::missing_input(p))
    {
        return Err(rift_data::missing_clues_error(missing, &opts.config).into());
    }
    // One writer per run: a second pipeline on the same run folder waits here, saying so, until this one exits,
    // then finds its stages up to date (the client also locks each responses file it writes).
    let _run_lock = schema::WriterLock::acquire(&run.paths.root.join(".lock"))?;
    if opts.shard.is_some() && (opts.until.until.is_some() || run.cfg.sequential.is_some()) {
        return Err(crate::outcome::usage(
            "a shard runs its share of the whole grid: --shard cannot be combined with --until or a [sequential] section",
        ));
    }
    let until = crate::sequential::Until::resolve(
        run.cfg.sequential.as_ref(),
        &opts.until,
        &run.cfg.run.models,
        &opts.config,
    )?;
    let ctx = match &until {
        Some(until) => crate::sequential::execute(&run, until)?,
        None => {
            // A whole-grid run leaves no sequential stop behind (the report would show a stale one).
            let stop = crate::sequential::sequential_json(&run);
            if stop.is_file() {
                std::fs::remove_file(stop)?;
            }
            execute(&run, &stages)?
        }
    };
    if let Some(sharding) = &run.shard {
        return crate::shard::finish(&run, sharding, &ctx);
    }
    let summary = summary::write(&run, &ctx.out, started.elapsed().as_secs_f64())?;
    print(&summary);
    summary::outcome(&run, &ctx)
}

/// Executes `stages` of `run` in order (the progress line planned from them), returning what they did.
pub fn execute<'a>(run: &'a Run, stages: &[Stage<'a>]) -> anyhow::Result<Ctx<'a>> {
    let plan = plan::plan(stages);
    run.client.plan_stages(plan.stages, plan.requests);
    let metrics = match &run.opts.stage_metrics {
        Some(file) => {
            // The cache is SQLite: its file and its write-ahead log.
            let cache = &run.opts.cache;
            let mut roots = vec![run.paths.root.clone(), cache.clone()];
            for suffix in ["-wal", "-shm"] {
                let mut p = cache.as_os_str().to_owned();
                p.push(suffix);
                roots.push(PathBuf::from(p));
            }
            Some(crate::metrics::Metrics::new(file, roots)?)
        }
        None => None,
    };
    let ctx = Ctx::new(&run.client, &run.stamps, run.cfg.judge_check.enabled);
    let mut exec = Executor::new(ctx, run.opts.force, plan.stages, metrics.as_ref());
    let result = exec.run_all(stages);
    run.client.finish_stages();
    result?;
    Ok(exec.ctx)
}

/// Every table and figure of a run folder, written into it: the analysis stage, and `cargo xtask plots
/// --run-dir`. The tables come first (`analysis::all::analyse`), then the figures drawn from them.
pub fn analyse_run(run_dir: &Path, rule: &ReasoningRule) -> anyhow::Result<()> {
    analyse_and_draw(&Inputs::for_run(run_dir, rule.clone()))?;
    Ok(())
}

/// The tables, then the figures drawn from them; returns the analysis and the number of figure files.
pub fn analyse_and_draw(inputs: &Inputs) -> anyhow::Result<(analysis::all::Analysed, usize)> {
    let analysed = analysis::all::analyse(inputs).map_err(|e| match e {
        analysis::Error::Usage(msg) => usage(msg),
        other => other.into(),
    })?;
    let figures = plots::all::draw(&analysed, &inputs.rule, &inputs.out)?;
    Ok((analysed, figures))
}

#[allow(clippy::print_stdout)]
pub(crate) fn print(text: &str) {
    println!("{text}");
}
