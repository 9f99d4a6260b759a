//! The long-lived [`Client`]: built once per command, it owns what outlives one batch of prompts (the async
//! runtime, the embedded engines it started, the spend budget) and offers `chat`, `dry_run` and `embed`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use schema::{PromptRecord, ResponseKey};

use crate::config::{Engine, ModelConfig};
use crate::run::{DryRunReport, RunSummary};
use crate::{Error, embedded};

/// How to run (as opposed to what to run, which the model configs and prompts say).
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Most requests in flight per base URL; `None` uses each model's `max_concurrency`.
    pub concurrency: Option<usize>,
    /// Stop before spent + in-flight worst case would exceed this many USD, across every call of the client.
    pub max_cost_usd: Option<f64>,
    /// Ignore the cache and any existing output: every prompt is sent again.
    pub refresh: bool,
    pub cache_path: PathBuf,
    /// Draw progress bars on stderr.
    pub progress: bool,
    /// fsync the output after each written batch.
    pub durable: bool,
}

impl RunOptions {
    /// Defaults: model concurrency, no cost limit, cache on, progress bars, durable writes.
    pub fn new(cache_path: PathBuf) -> RunOptions {
        RunOptions {
            concurrency: None,
            max_cost_usd: None,
            refresh: false,
            cache_path,
            progress: true,
            durable: true,
        }
    }

    fn validate(&self) -> Result<(), Error> {
        if let Some(max) = self.max_cost_usd
            && (max.is_nan() || max < 0.0)
        {
            return Err(Error::Config(format!(
                "max cost must be a non-negative number of USD, got {max}"
            )));
        }
        if self.concurrency == Some(0) {
            return Err(Error::Config(
                "concurrency must be at least 1 (got 0)".to_owned(),
            ));
        }
        Ok(())
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("opts", &self.opts)
            .field("spent_usd", &self.budget.spent())
            .finish_non_exhaustive()
    }
}

/// Money spent and reserved for requests in flight, across every call of one client.
#[derive(Debug, Default)]
pub(crate) struct Budget {
    cap: Option<f64>,
    state: Mutex<CostState>,
}

#[derive(Debug, Default)]
struct CostState {
    spent: f64,
    reserved: f64,
}

impl Budget {
    fn new(cap: Option<f64>) -> Budget {
        Budget {
            cap,
            state: Mutex::default(),
        }
    }

    pub(crate) fn cap(&self) -> Option<f64> {
        self.cap
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, CostState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Reserves `worst` USD when spent + reserved + worst fits under the cap (always, without a cap); returns
    /// whether it did and whether nothing else is reserved (so waiting cannot help).
    pub(crate) fn try_reserve(&self, worst: f64) -> (bool, bool) {
        let mut c = self.lock();
        let fits = self
            .cap
            .is_none_or(|cap| c.spent + c.reserved + worst <= cap);
        if fits {
            c.reserved += worst;
        }
        (fits, c.reserved <= 0.0)
    }

    /// Ends a reservation of `worst` that cost `cost`; returns the total spent.
    pub(crate) fn settle(&self, worst: f64, cost: f64) -> f64 {
        let mut c = self.lock();
        c.reserved = (c.reserved - worst).max(0.0);
        c.spent += cost;
        c.spent
    }

    pub(crate) fn spent(&self) -> f64 {
        self.lock().spent
    }
}

/// The inference client of one command: every model call goes through one of these.
///
/// Calls are blocking (the client owns a small async runtime); call them from one thread at a time.
pub struct Client {
    opts: RunOptions,
    rt: tokio::runtime::Runtime,
    budget: Arc<Budget>,
    /// Embedded engines started so far, by model identity; each is loaded once and stopped when the client drops.
    engines: Mutex<HashMap<String, embedded::EmbeddedHandle>>,
}

impl Client {
    /// A client with these options (validated: a negative cost limit or a concurrency of 0 is a config error).
    pub fn new(opts: RunOptions) -> Result<Client, Error> {
        opts.validate()?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| Error::Setup(format!("cannot start the async runtime: {e}")))?;
        Ok(Client {
            budget: Arc::new(Budget::new(opts.max_cost_usd)),
            opts,
            rt,
            engines: Mutex::default(),
        })
    }

    /// The options this client was built with.
    pub fn options(&self) -> &RunOptions {
        &self.opts
    }

    /// USD spent by this client so far (provider-reported cost where present, else tokens × price).
    pub fn spent_usd(&self) -> f64 {
        self.budget.spent()
    }

    /// Sends every prompt not yet answered in `out`, appending one `ResponseRecord` per (id, sample index) as each
    /// completes; see [`crate::run`] for resume, cache and failure rules.
    pub fn chat(
        &self,
        model: &ModelConfig,
        prompts: &[PromptRecord],
        out: &Path,
    ) -> Result<RunSummary, Error> {
        self.rt
            .block_on(crate::run::run_prompts(self, model, prompts, out))
    }

    /// What `chat` would do: prompts cached, estimated input tokens and the worst-case cost; sends nothing.
    pub fn dry_run(
        &self,
        model: &ModelConfig,
        prompts: &[PromptRecord],
    ) -> Result<DryRunReport, Error> {
        crate::run::dry_run(self, model, prompts)
    }

    pub(crate) fn budget(&self) -> &Arc<Budget> {
        &self.budget
    }

    pub(crate) fn runtime(&self) -> &tokio::runtime::Runtime {
        &self.rt
    }

    /// The model's base URLs; for the embedded engine, the local server's (started on first use, then reused).
    pub(crate) fn base_urls(&self, model: &ModelConfig) -> Result<Vec<String>, Error> {
        match model.engine {
            Engine::Openai => Ok(model.base_urls.clone()),
            Engine::Embedded => {
                let identity = crate::body::model_identity(model);
                let key = format!("{identity}:{:?}", model.threads);
                let mut engines = self.engines.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(h) = engines.get(&key) {
                    return Ok(vec![h.base_url().to_owned()]);
                }
                let handle = embedded::start(model)?;
                let url = handle.base_url().to_owned();
                engines.insert(key, handle);
                Ok(vec![url])
            }
        }
    }
}

/// The API key a model names, read from its environment variable; `None` when it names none.
pub(crate) fn api_key(model: &ModelConfig) -> Result<Option<String>, Error> {
    match &model.api_key_env {
        Some(var) => std::env::var(var)
            .ok()
            .filter(|k| !k.trim().is_empty())
            .map(Some)
            .ok_or_else(|| Error::MissingKey {
                model: model.name.clone(),
                var: var.clone(),
            }),
        None => Ok(None),
    }
}

/// An error naming both records when two prompts share an id and sample index.
pub(crate) fn check_unique(prompts: &[PromptRecord]) -> Result<(), Error> {
    let mut seen: HashMap<ResponseKey, usize> = HashMap::with_capacity(prompts.len());
    for (i, p) in prompts.iter().enumerate() {
        if let Some(first) = seen.insert(ResponseKey::of_prompt(p), i) {
            return Err(Error::Prompts(format!(
                "prompts {} and {}: field `id`: duplicate id {:?} with sample_index {}",
                first + 1,
                i + 1,
                p.id,
                p.sample_index
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_spans_calls_and_refuses_what_does_not_fit() {
        let b = Budget::new(Some(1.0));
        assert_eq!(b.try_reserve(0.6), (true, false));
        assert_eq!(b.try_reserve(0.6), (false, false));
        assert!((b.settle(0.6, 0.5) - 0.5).abs() < 1e-12);
        assert_eq!(b.try_reserve(0.6), (false, true));
        assert_eq!(b.try_reserve(0.5), (true, false));
        let unlimited = Budget::new(None);
        assert_eq!(unlimited.try_reserve(1e9), (true, false));
    }

    #[test]
    fn options_are_validated() {
        let mut o = RunOptions::new(PathBuf::from("c.sqlite"));
        o.concurrency = Some(0);
        assert!(Client::new(o.clone()).err().is_some_and(|e| e.is_config()));
        o.concurrency = None;
        o.max_cost_usd = Some(-1.0);
        assert!(Client::new(o).err().is_some_and(|e| e.is_config()));
    }
}
