//! The long-lived [`Client`]: built once per command, it owns what outlives one batch of prompts (the async
//! runtime, the embedded engines it started, the spend budget, the connection pools and the replicas' limits and
//! health, the locks on the outputs it writes) and offers `chat`, `chat_stream`, `dry_run` and `embed`.
//!
//! `RunOptions` sets the cache, concurrency, cost limit, spend ledger (`spend.jsonl`: the budget then covers every
//! rerun of a run), refresh, progress, batch jobs and drain bound. `plan_stages` and `start_stage` draw one overall
//! progress line (stage k of n, prompts done, an ETA) above each call's bar. `unfinished` counts the prompts without an
//! answer (failed after retries, not sent, or waiting for a batch job), and `take_in_flight` hands over the
//! requests-in-flight figures summed since the last take.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use schema::metrics::InFlight;
use schema::{PromptRecord, ResponseKey, ResponseRecord};

use crate::config::{BatchMode, Engine, ModelConfig};
use crate::run::{DryRunReport, RunSummary};
use crate::{Error, StopHandle, embedded};

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
    /// A spend ledger (JSONL, one line per paid request) kept with a run: what it holds counts against
    /// `max_cost_usd`, so the cap covers reruns too.
    pub ledger: Option<PathBuf>,
    /// Run [`Client::chat_batch`] calls as provider batch jobs (for models whose provider takes them); `None`
    /// makes `chat_batch` the same as `chat`.
    pub batch: Option<BatchOptions>,
    /// After [`StopHandle::stop_sending`], how long the requests in flight are waited for (their answers written)
    /// before they are abandoned.
    pub drain: std::time::Duration,
    /// Where the variables that models name (`api-key-env`, a header's `{ env = "…" }`) are read.
    pub env: Env,
}

/// Where a client reads the variables that models name: the process's environment (the default), or a fixed set
/// given in code, so a test hands a key to one client without changing the process's environment. Debug output
/// shows the names only, never the values.
#[derive(Clone, Default)]
pub enum Env {
    #[default]
    Process,
    Fixed(std::collections::BTreeMap<String, String>),
}

impl Env {
    /// A fixed environment holding these variables and no other.
    pub fn fixed<K: Into<String>, V: Into<String>>(vars: impl IntoIterator<Item = (K, V)>) -> Env {
        Env::Fixed(
            vars.into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        )
    }

    /// The variable's value; `None` when it is unset or blank.
    pub fn var(&self, name: &str) -> Option<String> {
        match self {
            Env::Process => std::env::var(name).ok(),
            Env::Fixed(vars) => vars.get(name).cloned(),
        }
        .filter(|v| !v.trim().is_empty())
    }
}

impl std::fmt::Debug for Env {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Env::Process => f.write_str("Process"),
            Env::Fixed(vars) => f
                .debug_tuple("Fixed")
                .field(&vars.keys().collect::<Vec<_>>())
                .finish(),
        }
    }
}

/// How batch jobs are run: see [`Client::chat_batch`] and the `batch` module.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchOptions {
    /// Time between two polls of a submitted batch.
    pub poll_interval: std::time::Duration,
    /// Stop waiting after this long (the batch goes on at the provider; a rerun resumes polling it).
    pub max_wait: Option<std::time::Duration>,
    /// Most requests per batch job (the OpenAI Batch API takes 50 000); more prompts make several jobs.
    pub max_requests: usize,
    /// The `completion_window` asked for (OpenAI takes `"24h"`).
    pub completion_window: String,
}

impl Default for BatchOptions {
    /// Polls every 30 s, waits as long as the batch runs, 50 000 requests per job, a 24 h window.
    fn default() -> BatchOptions {
        BatchOptions {
            poll_interval: std::time::Duration::from_secs(30),
            max_wait: None,
            max_requests: 50_000,
            completion_window: "24h".to_owned(),
        }
    }
}

impl RunOptions {
    /// Defaults: model concurrency, no cost limit, cache on, progress bars, durable writes, 120 s to drain.
    pub fn new(cache_path: PathBuf) -> RunOptions {
        RunOptions {
            concurrency: None,
            max_cost_usd: None,
            refresh: false,
            cache_path,
            progress: true,
            durable: true,
            ledger: None,
            batch: None,
            drain: std::time::Duration::from_secs(120),
            env: Env::Process,
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
        if let Some(b) = &self.batch
            && b.max_requests == 0
        {
            return Err(Error::Config(
                "batch jobs need at least 1 request each (got 0)".to_owned(),
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

/// Money spent and reserved for requests in flight, across every call of one client (and, with a ledger, across
/// every run that shares the ledger).
#[derive(Debug, Default)]
pub(crate) struct Budget {
    cap: Option<f64>,
    state: Mutex<CostState>,
    /// The ledger's path and, once something was paid, its open file.
    ledger: Option<Mutex<(PathBuf, Option<std::fs::File>)>>,
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
            ledger: None,
        }
    }

    /// A budget that starts from what `path` records and appends every cost to it.
    fn with_ledger(cap: Option<f64>, path: &Path) -> Result<Budget, Error> {
        let setup =
            |e: std::io::Error| Error::Setup(format!("spend ledger {}: {e}", path.display()));
        let mut spent = 0.0;
        match std::fs::read_to_string(path) {
            Ok(text) => {
                for (i, line) in text
                    .lines()
                    .enumerate()
                    .filter(|(_, l)| !l.trim().is_empty())
                {
                    let usd = serde_json::from_str::<serde_json::Value>(line)
                        .ok()
                        .and_then(|v| v.get("usd").and_then(serde_json::Value::as_f64))
                        .filter(|u| u.is_finite() && *u >= 0.0);
                    match usd {
                        Some(u) => spent += u,
                        // A line cut by a crash is the only one that can be unreadable: the last.
                        None if i + 1 == text.lines().count() => {}
                        None => {
                            return Err(Error::Setup(format!(
                                "spend ledger {}: line {}: field `usd`: not a non-negative number",
                                path.display(),
                                i + 1
                            )));
                        }
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(setup(e)),
        }
        Ok(Budget {
            cap,
            state: Mutex::new(CostState {
                spent,
                reserved: 0.0,
            }),
            ledger: Some(Mutex::new((path.to_owned(), None))),
        })
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
        if cost > 0.0
            && let Some(ledger) = &self.ledger
        {
            use std::io::Write;
            let mut l = ledger.lock().unwrap_or_else(|e| e.into_inner());
            let (path, file) = &mut *l;
            if file.is_none() {
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    let _ = std::fs::create_dir_all(dir);
                }
                *file = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&*path)
                    .ok();
            }
            let written = file
                .as_mut()
                .map(|f| writeln!(f, "{{\"usd\":{cost}}}").is_ok());
            if written != Some(true) {
                tracing::warn!(ledger = %path.display(), "Could not record a cost in the spend ledger.");
            }
        }
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
    /// Prompts of every `chat` so far that have no answer: failed after their retries, or not sent (cost limit).
    unfinished: std::sync::atomic::AtomicUsize,
    /// The overall line of a multi-stage command (see [`Client::plan_stages`]).
    overall: Mutex<Option<Overall>>,
    /// Requests in flight over the calls since the last [`Client::take_in_flight`], and their joined span.
    in_flight: Mutex<(Option<InFlight>, Option<StageSpan>)>,
    /// Stops sending new requests (see [`Client::stop_handle`]).
    stop: StopHandle,
    /// Base URLs that answered something in an earlier call (not checked again before a call).
    answered: Mutex<std::collections::HashSet<String>>,
    /// Connection pools per base URL and replicas (limits, health) per model, for the client's life.
    pools: crate::pool::Pools,
    /// The output files this client writes, each locked against other processes for the client's life.
    writers: Mutex<HashMap<PathBuf, schema::WriterLock>>,
}

/// The calls of a stage joined into one span (see [`Client::take_in_flight`]).
struct StageSpan {
    /// When the first call began sending.
    began: std::time::Instant,
    /// Requests in flight integrated over every call before the last (request-seconds).
    busy_before_s: f64,
    /// When the last call handed out its last prompt.
    last_handed_out: std::time::Instant,
    /// The last call's requests in flight integrated until then, and over the whole call.
    last_backlog_busy_s: f64,
    last_busy_s: f64,
}

/// A command's overall progress line, drawn above each call's own bar.
struct Overall {
    multi: indicatif::MultiProgress,
    line: indicatif::ProgressBar,
    stages: usize,
}

impl Client {
    /// A client with these options (validated: a negative cost limit or a concurrency of 0 is a config error).
    pub fn new(opts: RunOptions) -> Result<Client, Error> {
        opts.validate()?;
        // One thread drives every request: the work per request is small (a streamed answer is a dozen events or
        // more), and with two worker threads most of it went to waking and parking them (`cargo xtask bench client`,
        // docs/scaling.md). It is the thread that calls `block_on` (a call's sender thread); several calls at once
        // share it.
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::Setup(format!("cannot start the async runtime: {e}")))?;
        let budget = match &opts.ledger {
            Some(path) => Budget::with_ledger(opts.max_cost_usd, path)?,
            None => Budget::new(opts.max_cost_usd),
        };
        if let Some(cap) = opts.max_cost_usd {
            tracing::info!(
                spent_usd = budget.spent(),
                cap_usd = cap,
                "Run-wide budget."
            );
        }
        Ok(Client {
            budget: Arc::new(budget),
            opts,
            rt,
            engines: Mutex::default(),
            unfinished: std::sync::atomic::AtomicUsize::new(0),
            overall: Mutex::default(),
            in_flight: Mutex::default(),
            stop: StopHandle::default(),
            answered: Mutex::default(),
            writers: Mutex::default(),
            pools: crate::pool::Pools::default(),
        })
    }

    /// Draws one overall line for a command of `stages` stages expected to ask about `requests` prompts in all
    /// (answered, resumed or cached): `stage k of n: <name>`, the prompts done and an ETA from the rate so far.
    /// Each `chat` bar is drawn below it and advances it; a stage that asks more than expected lengthens it.
    /// Nothing is drawn when progress bars are off or stderr is not a terminal.
    pub fn plan_stages(&self, stages: usize, requests: u64) {
        if !self.opts.progress {
            return;
        }
        let multi = indicatif::MultiProgress::with_draw_target(
            indicatif::ProgressDrawTarget::stderr_with_hz(5),
        );
        let line = multi.add(indicatif::ProgressBar::new(requests.max(1)));
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "{wide_msg} [{pos}/{len} prompts, {elapsed} elapsed, ETA {eta}]",
        ) {
            line.set_style(style);
        }
        *self.overall.lock().unwrap_or_else(|e| e.into_inner()) = Some(Overall {
            multi,
            line,
            stages,
        });
    }

    /// Names the stage now running on the overall line (1-based `k`).
    pub fn start_stage(&self, k: usize, name: &str) {
        if let Some(o) = self
            .overall
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
        {
            // One update, so the line never shows a stage number with another stage's name.
            o.line
                .set_message(format!("stage {k} of {}: {name}", o.stages));
        }
    }

    /// Removes the overall line.
    pub fn finish_stages(&self) {
        if let Some(o) = self
            .overall
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            o.line.finish_and_clear();
        }
    }

    /// The overall line for a `chat` of `total` prompts of which `resumed` are already on file: counted as done.
    pub(crate) fn overall(
        &self,
        resumed: u64,
        total: u64,
    ) -> Option<(indicatif::MultiProgress, indicatif::ProgressBar)> {
        let guard = self.overall.lock().unwrap_or_else(|e| e.into_inner());
        let o = guard.as_ref()?;
        let len = o.line.length().unwrap_or(0);
        if o.line.position() + total > len {
            o.line.set_length(o.line.position() + total);
        }
        o.line.inc(resumed);
        Some((o.multi.clone(), o.line.clone()))
    }

    /// The options this client was built with.
    pub fn options(&self) -> &RunOptions {
        &self.opts
    }

    /// The cost limit, if any.
    pub fn cap_usd(&self) -> Option<f64> {
        self.budget.cap()
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
        self.run(model, prompts, out, None, None)
    }

    /// Like [`Client::chat`], but resuming from `on_file` (what `out` already holds for these prompts, the newest
    /// line per prompt, as the caller read it) instead of reading the whole of `out`: a caller that sends a large
    /// prompts file chunk by chunk indexes `out` once and hands each chunk its own lines
    /// (`harness::rift::run_file`). `out` is only appended to (the caller removes it first for a refresh); lines
    /// of failed or changed requests are rewritten as in `chat`.
    pub fn chat_resuming(
        &self,
        model: &ModelConfig,
        prompts: &[PromptRecord],
        out: &Path,
        on_file: Vec<ResponseRecord>,
    ) -> Result<RunSummary, Error> {
        self.run(model, prompts, out, None, Some(on_file))
    }

    /// Like [`Client::chat`], but as provider batch jobs when the options ask for them (`RunOptions::batch`) and
    /// the model's provider takes them (`ModelConfig::batch_mode`); otherwise exactly `chat`.
    ///
    /// The prompts still to send go into OpenAI Batch API input files (`<out>.batch/input-<hash>.jsonl`, one
    /// request per line, `custom_id` = the cache key). With `batch = "openai"` each file is uploaded, its batch
    /// created, polled and its output and error files downloaded; with `batch = "file"` it is left for vLLM's
    /// `run_batch` (the log names the command), and a later call reads `output-<hash>.jsonl` beside it. Answers
    /// become the same records, cache entries and costs as `chat`'s; failed lines are written as failed and sent
    /// again by the next run; prompts still waiting for a batch count in [`RunSummary::batch_pending`] and in
    /// [`Client::unfinished`]. A batch that ends `failed`, `expired` or `cancelled` is an error, after what it
    /// answered is written.
    pub fn chat_batch(
        &self,
        model: &ModelConfig,
        prompts: &[PromptRecord],
        out: &Path,
    ) -> Result<RunSummary, Error> {
        self.batch_or_chat(model, prompts, out, None)
    }

    /// [`Client::chat_batch`] resuming from `on_file`, as [`Client::chat_resuming`] does.
    pub fn chat_batch_resuming(
        &self,
        model: &ModelConfig,
        prompts: &[PromptRecord],
        out: &Path,
        on_file: Vec<ResponseRecord>,
    ) -> Result<RunSummary, Error> {
        self.batch_or_chat(model, prompts, out, Some(on_file))
    }

    fn batch_or_chat(
        &self,
        model: &ModelConfig,
        prompts: &[PromptRecord],
        out: &Path,
        on_file: Option<Vec<ResponseRecord>>,
    ) -> Result<RunSummary, Error> {
        let mode = model.batch_mode();
        match &self.opts.batch {
            Some(b) if mode != BatchMode::None => {
                self.run(model, prompts, out, Some((b, mode)), on_file)
            }
            Some(_) => {
                tracing::info!(model = %model.name, "This model's provider takes no batch jobs (`batch` in the model config); sending its requests one by one.");
                self.run(model, prompts, out, None, on_file)
            }
            None => self.run(model, prompts, out, None, on_file),
        }
    }

    fn run(
        &self,
        model: &ModelConfig,
        prompts: &[PromptRecord],
        out: &Path,
        batch: Option<(&BatchOptions, BatchMode)>,
        on_file: Option<Vec<ResponseRecord>>,
    ) -> Result<RunSummary, Error> {
        let (s, span) = self.rt.block_on(crate::run::run_prompts(
            self, model, prompts, out, batch, on_file,
        ))?;
        self.finished_call(&s, span);
        Ok(s)
    }

    /// Counts a finished call: its unanswered prompts, its requests in flight, and its span (when sending began,
    /// when its last prompt was handed out) in the stage's.
    pub(crate) fn finished_call(
        &self,
        s: &RunSummary,
        span: Option<(std::time::Instant, std::time::Instant)>,
    ) {
        self.unfinished.fetch_add(
            s.failed + s.skipped_for_cost + s.batch_pending + s.interrupted,
            std::sync::atomic::Ordering::Relaxed,
        );
        let Some(f) = &s.in_flight else { return };
        let mut sum = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
        let (sum, stage) = &mut *sum;
        sum.get_or_insert_with(InFlight::default).add(f);
        if let Some((began, handed_out)) = span {
            match stage {
                None => {
                    *stage = Some(StageSpan {
                        began,
                        busy_before_s: 0.0,
                        last_handed_out: handed_out,
                        last_backlog_busy_s: f.backlog_busy_s,
                        last_busy_s: f.busy_s,
                    });
                }
                Some(st) => {
                    // The earlier calls' requests all ended before this call began: all of their time in flight
                    // lies within the stage's span.
                    st.busy_before_s += st.last_busy_s;
                    st.last_handed_out = handed_out;
                    st.last_backlog_busy_s = f.backlog_busy_s;
                    st.last_busy_s = f.busy_s;
                }
            }
        }
    }

    /// Requests in flight summed over every call since the last take (or since the client was built) that sent
    /// requests one by one; `None` when none did. A multi-stage command takes it after each stage
    /// (`xtask pipeline --stage-metrics`). Its `stage_span_s` is the time from the first call's first request
    /// until the last call handed out its last prompt, the time between calls included, and `stage_span_busy_s`
    /// the requests in flight over it.
    pub fn take_in_flight(&self) -> Option<InFlight> {
        let mut guard = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
        let (sum, stage) = &mut *guard;
        let mut sum = sum.take()?;
        if let Some(st) = stage.take() {
            sum.stage_span_s = st
                .last_handed_out
                .saturating_duration_since(st.began)
                .as_secs_f64();
            sum.stage_span_busy_s = st.busy_before_s + st.last_backlog_busy_s;
        }
        Some(sum)
    }

    /// How many prompts of all `chat` calls so far ended without an answer (failed after their retries, not sent
    /// because of the cost limit, or not sent or abandoned after [`StopHandle::stop_sending`]); a rerun sends them
    /// again. A stage that adds to it is incomplete.
    pub fn unfinished(&self) -> usize {
        self.unfinished.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// What `chat` would do: prompts cached, estimated input tokens and the worst-case cost; sends nothing.
    pub fn dry_run(
        &self,
        model: &ModelConfig,
        prompts: &[PromptRecord],
    ) -> Result<DryRunReport, Error> {
        crate::run::dry_run(self, model, prompts)
    }

    /// The handle that stops this client sending new requests: after [`StopHandle::stop_sending`] (a command calls
    /// it on the first Ctrl-C), every call takes no further prompt and makes no further attempt, waits up to
    /// [`RunOptions::drain`] for the requests in flight, writes their answers to the output and the cache, and
    /// returns normally; the prompts it did not answer count in [`RunSummary::interrupted`] and
    /// [`Client::unfinished`]. Later calls send nothing (cached answers are still written).
    pub fn stop_handle(&self) -> StopHandle {
        self.stop.clone()
    }

    /// Makes this client the one writer of the output file `out` for as long as it lives: an advisory lock on
    /// `.<name>.lock` beside it (`schema::WriterLock`). Another process that writes the same file (the same
    /// `infer --out`, another run of the same stage) waits until this client is gone, saying so on one line, and
    /// then resumes from what this one wrote, so nothing is sent twice. Every call that writes `out` takes it; a
    /// caller that reads `out` before its first call (to index it) takes it first. Released when the client
    /// drops, the process exits or crashes. The response cache is not locked: runs that share only it go on
    /// side by side.
    pub fn lock_output(&self, out: &Path) -> Result<(), Error> {
        let mut writers = self.writers.lock().unwrap_or_else(|e| e.into_inner());
        if writers.contains_key(out) {
            return Ok(());
        }
        let lock = schema::WriterLock::for_output(out).map_err(|e| Error::Setup(e.to_string()))?;
        writers.insert(out.to_owned(), lock);
        Ok(())
    }

    /// Whether the base URL answered in an earlier call of this client.
    pub(crate) fn has_answered(&self, base_url: &str) -> bool {
        self.answered
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(base_url)
    }

    /// Remembers base URLs that answered.
    pub(crate) fn note_answered(&self, base_urls: impl IntoIterator<Item = String>) {
        self.answered
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(base_urls);
    }

    pub(crate) fn pools(&self) -> &crate::pool::Pools {
        &self.pools
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

/// The API key a model names, read from its variable in `env`; `None` when it names none.
pub(crate) fn api_key(model: &ModelConfig, env: &Env) -> Result<Option<String>, Error> {
    match &model.api_key_env {
        Some(var) => env.var(var).map(Some).ok_or_else(|| Error::MissingKey {
            model: model.name.clone(),
            var: var.clone(),
        }),
        None => Ok(None),
    }
}

/// Refuses prompts the model cannot take: a token limit above its `output-cap`, or a prompt estimate plus the
/// token limit above its `context-window` (one line naming the model, the largest prompt and the numbers).
pub(crate) fn check_limits(model: &ModelConfig, prompts: &[PromptRecord]) -> Result<(), Error> {
    if model.output_cap.is_none() && model.context_window.is_none() {
        return Ok(());
    }
    let mut worst: Option<(u64, &PromptRecord, u32)> = None;
    for p in prompts {
        let body = crate::body::request_body(model, p);
        let max = crate::body::body_max_tokens(&body).unwrap_or(0);
        if let Some(cap) = model.output_cap
            && max > cap
        {
            return Err(Error::Config(format!(
                "model {:?}: prompt {:?} asks for {max} output tokens, above the model's output cap of {cap}",
                model.name, p.id
            )));
        }
        let need = crate::body::estimate_input_tokens(p) + u64::from(max);
        if worst.is_none_or(|(w, _, _)| need > w) {
            worst = Some((need, p, max));
        }
    }
    if let (Some(window), Some((need, p, max))) = (model.context_window, worst)
        && need > u64::from(window)
    {
        return Err(Error::Config(format!(
            "model {:?}: prompt {:?} needs about {} input tokens plus {max} output tokens, more than the {window}-token \
             context window (lower `max-tokens` or use a model with a longer context)",
            model.name,
            p.id,
            need - u64::from(max)
        )));
    }
    Ok(())
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
