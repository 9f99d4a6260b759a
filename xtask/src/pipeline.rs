//! `cargo xtask pipeline`: the flags of a run, turned into `pipeline::Options` and the run's one client, then
//! `pipeline::run` (every stage that is out of date, from offline assets to the HTML report; with `--until`, in
//! batches until the rule holds).

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
    #[command(flatten)]
    client: ClientArgs,
}

pub(crate) fn run(args: &PipelineArgs) -> anyhow::Result<()> {
    let cfg = PipelineConfig::load(&args.config)?;
    let defaults = ClientDefaults {
        models_file: cfg.run.models_file.clone(),
        cache: cfg.run.cache.clone(),
        max_cost_usd: cfg.run.max_cost_usd,
        ledger: Some(pipeline::Run::ledger(&cfg)),
    };
    let opts = pipeline::Options {
        config: args.config.clone(),
        models_file: args.client.models_file(&defaults).to_owned(),
        cache: args.client.cache_path(&defaults).to_owned(),
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
    };
    let client = Arc::new(args.client.client(&defaults)?);
    pipeline::run(cfg, &opts, client)
}
