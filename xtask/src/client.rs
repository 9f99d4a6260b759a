//! The inference client's flags, declared once and flattened into every command that calls models, and the one
//! function that turns them into the command's `Client`.
//!
//! The flags: `--models`, `--cache`, `--concurrency`, `--max-cost`, `--refresh`, `--no-progress`, `--no-fsync`,
//! `--drain-s`, and `--batch` with `--batch-poll-s` and `--batch-wait-s` (the RIFT judge and baseline and the IFScale
//! coherence judge then go through `Client::chat_batch`). `ClientArgs::client` is the one place a command's `Client` is
//! built; the pipeline adds the run's spend ledger.

use std::path::{Path, PathBuf};

use std::time::Duration;

use inference_client::{BatchOptions, Client, RunOptions};

use pipeline::Failure;

/// How a command talks to models: where they are declared, the cache, and the run-time knobs.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ClientArgs {
    /// The models file [default: configs/models.toml, or the pipeline config's `models-file`].
    #[arg(long)]
    pub(crate) models: Option<PathBuf>,
    /// The response cache (SQLite) [default: artifacts/cache/responses.sqlite, or the pipeline config's `cache`].
    #[arg(long)]
    pub(crate) cache: Option<PathBuf>,
    /// Most requests in flight per base URL (default: the model's `max-concurrency`).
    #[arg(long)]
    pub(crate) concurrency: Option<usize>,
    /// Stop sending once spent + in-flight worst case would exceed this many USD (overrides the pipeline config).
    #[arg(long)]
    pub(crate) max_cost: Option<f64>,
    /// Ignore cached responses and existing outputs: send every request again.
    #[arg(long)]
    pub(crate) refresh: bool,
    /// No progress bars.
    #[arg(long)]
    pub(crate) no_progress: bool,
    /// Skip the fsync after each written batch (a killed process still loses nothing; a power cut might).
    #[arg(long)]
    pub(crate) no_fsync: bool,
    /// Send the large judge stages and the RIFT baseline as provider batch jobs (OpenAI Batch API, or an input
    /// file for vLLM's run_batch: see `batch` in the models file and docs/scaling.md).
    #[arg(long)]
    pub(crate) batch: bool,
    /// Seconds between two polls of a submitted batch job.
    #[arg(long, default_value_t = 30.0, requires = "batch")]
    pub(crate) batch_poll_s: f64,
    /// Stop waiting for batch jobs after this many seconds (they go on; a rerun resumes them) [default: wait].
    #[arg(long, requires = "batch")]
    pub(crate) batch_wait_s: Option<f64>,
    /// After Ctrl-C, seconds to wait for the requests in flight (their answers are written) before quitting.
    #[arg(long, default_value_t = 120.0)]
    pub(crate) drain_s: f64,
}

/// What a command uses when a client flag is not given: a stand-alone command's defaults, or the pipeline config's.
#[derive(Debug, Clone)]
pub(crate) struct ClientDefaults {
    pub(crate) models_file: PathBuf,
    pub(crate) cache: PathBuf,
    pub(crate) max_cost_usd: Option<f64>,
    /// The run's spend ledger (the pipeline's `spend.jsonl`), so a cost limit covers reruns.
    pub(crate) ledger: Option<PathBuf>,
}

impl ClientDefaults {
    /// The defaults of a command run on its own.
    pub(crate) fn standalone() -> ClientDefaults {
        ClientDefaults {
            models_file: PathBuf::from("configs/models.toml"),
            cache: PathBuf::from("artifacts/cache/responses.sqlite"),
            max_cost_usd: None,
            ledger: None,
        }
    }
}

impl ClientArgs {
    /// The models file: the flag, else the default.
    pub(crate) fn models_file<'a>(&'a self, defaults: &'a ClientDefaults) -> &'a Path {
        self.models.as_deref().unwrap_or(&defaults.models_file)
    }

    /// The response cache: the flag, else the default.
    pub(crate) fn cache_path<'a>(&'a self, defaults: &'a ClientDefaults) -> &'a Path {
        self.cache.as_deref().unwrap_or(&defaults.cache)
    }

    /// The command's inference client (one per command: one budget, embedded engines loaded once), with Ctrl-C
    /// handled from now on (see `crate::signals`).
    pub(crate) fn client(&self, defaults: &ClientDefaults) -> anyhow::Result<Client> {
        let opts = self.run_options(defaults)?;
        let drain = opts.drain;
        let client = Client::new(opts)?;
        crate::signals::install(client.stop_handle(), drain);
        Ok(client)
    }

    /// The inference client's run options: each flag over its default.
    fn run_options(&self, defaults: &ClientDefaults) -> anyhow::Result<RunOptions> {
        let mut o = RunOptions::new(self.cache.clone().unwrap_or_else(|| defaults.cache.clone()));
        o.concurrency = self.concurrency;
        o.max_cost_usd = self.max_cost.or(defaults.max_cost_usd);
        o.refresh = self.refresh;
        o.progress = !self.no_progress;
        o.durable = !self.no_fsync;
        o.ledger.clone_from(&defaults.ledger);
        if !(self.drain_s.is_finite() && self.drain_s >= 0.0) {
            return Err(Failure::Usage(format!(
                "--drain-s must be a non-negative number of seconds, got {}",
                self.drain_s
            ))
            .into());
        }
        o.drain = Duration::from_secs_f64(self.drain_s);
        if self.batch {
            let seconds = |flag: &str, s: f64| {
                if s.is_finite() && s >= 0.0 {
                    Ok(Duration::from_secs_f64(s))
                } else {
                    Err(Failure::Usage(format!(
                        "--{flag} must be a non-negative number of seconds, got {s}"
                    )))
                }
            };
            o.batch = Some(BatchOptions {
                poll_interval: seconds("batch-poll-s", self.batch_poll_s)?,
                max_wait: self
                    .batch_wait_s
                    .map(|s| seconds("batch-wait-s", s))
                    .transpose()?,
                ..BatchOptions::default()
            });
        }
        Ok(o)
    }
}
