//! `cargo xtask pipeline`: the flags of a run, turned into `pipeline::Options` and the run's one client, then
//! `pipeline::run` (every stage that is out of date, from offline assets to the HTML report; with `--until`, in
//! batches until the rule holds); with `--shard`, one share of it. `cargo xtask merge`: shards' folders checked and
//! merged (`pipeline::merge::prepare`), then the same `pipeline::run` on the merged folder.

use std::path::PathBuf;
use std::sync::Arc;

use pipeline::PipelineConfig;

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
    /// Run the grid in batches, in its fixed seeded order, until the rule holds: `ci-width=2pp` (every interval
    /// per IFScale density and RIFT structure narrower than 2 points) or `decided` (every model's paired
    /// comparison with `--baseline` better, worse or within `--margin`); over `[sequential] until`.
    #[arg(long, value_name = "RULE", conflicts_with_all = ["dry_run", "pilot"])]
    until: Option<String>,
    /// The model `--until decided` compares every other model with.
    #[arg(long, value_name = "MODEL")]
    baseline: Option<String>,
    /// A difference within this margin counts as none for `--until decided` (default 1pp).
    #[arg(long, value_name = "POINTS")]
    margin: Option<String>,
    /// Run one share of the run into a folder of its own: `I/N` (from 0) or `auto/N` (the index from a Kubernetes
    /// indexed Job's `JOB_COMPLETION_INDEX` or a Slurm array's `SLURM_ARRAY_TASK_ID`, the array numbered from 0);
    /// see docs/scaling.md.
    #[arg(long, value_name = "I/N|auto/N")]
    shard: Option<String>,
    /// The run folder [default: artifacts/runs/<name>, a shard's with `-shard-<I>-of-<N>` appended].
    #[arg(long)]
    run_dir: Option<PathBuf>,
    #[command(flatten)]
    client: ClientArgs,
}

#[derive(Debug, clap::Args)]
pub(crate) struct MergeArgs {
    /// The shards' run folders (`cargo xtask pipeline --shard I/N`), every index once.
    #[arg(required = true)]
    shards: Vec<PathBuf>,
    /// The merged run's folder.
    #[arg(long)]
    out: PathBuf,
    /// The config the shards ran.
    #[arg(long, default_value = "configs/default.toml")]
    config: PathBuf,
    #[command(flatten)]
    client: ClientArgs,
}

/// A path inside the working directory, relative to it (as the config's own run folders are), so a merged or
/// sharded run names its files as a plain run does.
fn relative(path: &std::path::Path) -> PathBuf {
    std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(cwd).ok().map(PathBuf::from))
        .unwrap_or_else(|| path.to_owned())
}

/// Checks and merges the shards into `--out`, then runs the config there: every answer is resumed from the shards'
/// files, so the stages on the whole run send nothing.
pub(crate) fn merge(args: &MergeArgs) -> anyhow::Result<()> {
    let cfg = PipelineConfig::load(&args.config)?;
    let mut opts = options(&cfg, &args.config, &args.client);
    opts.run_dir = Some(relative(&args.out));
    let config_text = std::fs::read_to_string(&args.config)?;
    let merged = pipeline::merge::prepare(
        &args.shards,
        &relative(&args.out),
        &config_text,
        &opts.models_file,
        &opts.cache,
    )?;
    tracing::info!(
        shards = merged.shards,
        files = merged.files,
        lines = merged.lines,
        cache_entries = merged.cache_entries,
        "Merged the shards; running the stages on the whole run."
    );
    let client = Arc::new(args.client.client(&defaults(&cfg, &opts))?);
    pipeline::run(cfg, &opts, client)
}

/// The client's defaults from the config, with the run's ledger.
fn defaults(cfg: &PipelineConfig, opts: &pipeline::Options) -> ClientDefaults {
    ClientDefaults {
        models_file: cfg.run.models_file.clone(),
        cache: cfg.run.cache.clone(),
        max_cost_usd: cfg.run.max_cost_usd,
        ledger: Some(pipeline::Run::ledger(cfg, opts)),
    }
}

/// The options every run starts from: the config, and the models file and cache as the flags or the config say.
fn options(
    cfg: &PipelineConfig,
    config: &std::path::Path,
    client: &ClientArgs,
) -> pipeline::Options {
    let base = ClientDefaults {
        models_file: cfg.run.models_file.clone(),
        cache: cfg.run.cache.clone(),
        max_cost_usd: cfg.run.max_cost_usd,
        ledger: None,
    };
    pipeline::Options::new(
        config.to_owned(),
        client.models_file(&base).to_owned(),
        client.cache_path(&base).to_owned(),
    )
}

pub(crate) fn run(args: &PipelineArgs) -> anyhow::Result<()> {
    let cfg = PipelineConfig::load(&args.config)?;
    let shard = args
        .shard
        .as_deref()
        .map(|spec| pipeline::shard::Shard::parse(spec, |k| std::env::var(k).ok()))
        .transpose()
        .map_err(pipeline::outcome::usage)?;
    let opts = pipeline::Options {
        dry_run: args.dry_run,
        pilot: args.pilot,
        rebuild_vocab: args.rebuild_vocab,
        force: args.force,
        stage_metrics: args.stage_metrics.clone(),
        until: pipeline::sequential::Flags {
            until: args.until.clone(),
            baseline: args.baseline.clone(),
            margin: args.margin.clone(),
        },
        run_dir: args.run_dir.as_deref().map(relative),
        shard,
        ..options(&cfg, &args.config, &args.client)
    };
    let client = Arc::new(args.client.client(&defaults(&cfg, &opts))?);
    pipeline::run(cfg, &opts, client)
}
