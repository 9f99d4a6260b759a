//! A run: prompts in, one response line per (prompt id, sample index) out, through the cache.
//!
//! A line on file resumes a prompt only while its cache key and ride-along fields match. An attempt abandoned after it
//! was sent (timed out, or its answer cut off) is marked in `Attempt::abandoned` and counted in
//! `RunSummary::abandoned`; with `bills-abandoned` it is billed at its worst case. A first attempt whose pooled
//! connection was closed unanswered is sent again at once on a new connection (`pool::ModelPool::fresh`), not counted
//! against `max-attempts`. The same 400 five times stops the model's remaining requests.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use schema::metrics::InFlight;
use schema::{
    Attempt, ErrorClass, JsonlAppender, Outcome, PromptRecord, ResponseKey, ResponseRecord,
};
use serde_json::{Map, Value};
use tokio::sync::Semaphore;

use crate::Error;
use crate::body::{
    body_max_tokens, cache_key, estimate_input_tokens, model_identity, request_body,
};
use crate::cache::Cache;
use crate::client::{BatchOptions, Budget, Client, check_limits, check_unique};
use crate::config::{BatchMode, ModelConfig};
use crate::http;
use crate::in_flight::Tracker;
use crate::limiter::{Endpoints, Slot};
use crate::parse::{self, Completion, Failure};
use crate::redact::Redactor;
use crate::retry::{self, Decision, Ended, Rules, Try};

mod prepare;
mod record;
mod session;
mod writer;

use prepare::{Prepared, Prepped, compact, prepare, unbounded_under_cap};
use record::send_once;
pub(crate) use record::{
    class_name, fill_answer, fill_failure, is_abandoned, new_record, without_credentials,
};
pub use session::ChatFeed;
pub(crate) use writer::Written;
use writer::writer_loop;

/// What a run did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunSummary {
    /// Prompts given.
    pub total: usize,
    /// Prompts already in the output file (resumed), not touched.
    pub resumed: usize,
    /// Prompts served from the cache.
    pub cached: usize,
    /// Prompts sent to the model.
    pub sent: usize,
    /// HTTP attempts made (retries included).
    pub requests: u64,
    /// Of those, attempts abandoned after they were sent (timed out, or the answer cut off); with
    /// `bills-abandoned` each is counted in `spent_usd` at its worst case.
    pub abandoned: u64,
    /// Prompts whose response is `failed` (written, not cached; a rerun retries them).
    pub failed: usize,
    /// Prompts whose response is `truncated` (hit max_tokens).
    pub truncated: usize,
    /// Prompts not sent because `max_cost_usd` would have been exceeded.
    pub skipped_for_cost: usize,
    /// Prompts not sent, or abandoned in flight after the drain bound, because sending was stopped
    /// ([`crate::Client::stop_handle`]); a rerun sends them.
    pub interrupted: usize,
    /// How often an endpoint was found dead (connection refused or reset, a failed health probe) and ejected.
    pub ejections: u64,
    /// Prompts in a batch job that has not answered them yet (a `run_batch` file not yet run, or a line missing
    /// from the output); a rerun reads or sends them.
    pub batch_pending: usize,
    /// USD spent on this run's requests (provider-reported cost when present, else tokens × prices).
    pub spent_usd: f64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Seconds the run took.
    pub wall_s: f64,
    /// Requests in flight over the call (None when it sent no request one by one: everything resumed or cached,
    /// or sent as a batch job).
    pub in_flight: Option<InFlight>,
}

/// What `dry_run` estimates.
#[derive(Debug, Clone, PartialEq)]
pub struct DryRunReport {
    pub prompts: usize,
    /// Prompts whose answer is already in the cache (0 with `refresh`); they would cost nothing.
    pub cached: usize,
    /// Input tokens of the prompts that would be sent, estimated as characters / 4 plus 4 per message.
    pub est_input_tokens: u64,
    /// Their cost if every answer used its full `max_tokens`.
    pub worst_case_cost_usd: f64,
    /// Prompts without any `max_tokens` (their output cost is not bounded and not counted).
    pub unbounded: usize,
}

/// Estimates a run without sending anything.
pub(crate) fn dry_run(
    client: &Client,
    model: &ModelConfig,
    prompts: &[PromptRecord],
) -> Result<DryRunReport, Error> {
    let opts = client.options();
    model.validate(&format!("model {:?}", model.name))?;
    check_unique(prompts)?;
    check_limits(model, prompts)?;
    let identity = model_identity(model);
    let cache = if !opts.refresh && opts.cache_path.exists() {
        Some(Cache::open(&opts.cache_path)?)
    } else {
        None
    };
    let mut report = DryRunReport {
        prompts: prompts.len(),
        cached: 0,
        est_input_tokens: 0,
        worst_case_cost_usd: 0.0,
        unbounded: 0,
    };
    for p in prompts {
        let body = request_body(model, p);
        if let Some(c) = &cache
            && c.get(&cache_key(&identity, &body, p.sample_index))?
                .is_some()
        {
            report.cached += 1;
            continue;
        }
        let input = estimate_input_tokens(p);
        report.est_input_tokens += input;
        let max_tokens = body_max_tokens(&body);
        if max_tokens.is_none() {
            report.unbounded += 1;
        }
        report.worst_case_cost_usd += model.worst_case_cost(input, max_tokens.unwrap_or(0));
    }
    Ok(report)
}

/// What a line on file answered: its cache key and the prompt's ride-along fields.
type AnsweredRequest = (String, Map<String, Value>);

/// Identical 400 answers after which a model's remaining requests are not sent.
const REPEATED_BAD_REQUESTS: u32 = 5;

/// One prompt waiting to be sent.
pub(crate) struct Job {
    /// Its place in the prompts.
    pub(crate) index: usize,
    /// Its cache key.
    pub(crate) key: String,
    /// The JSON request body.
    pub(crate) body: Vec<u8>,
    pub(crate) input_tokens: u64,
    pub(crate) max_tokens: Option<u32>,
}

/// Sends every prompt not yet answered in `out`, appending one `ResponseRecord` per (id, sample index) as each completes.
///
/// Prompts already answered in `out` (a non-failed newest line for the same request: same cache key and same
/// prompt metadata) are skipped; a line for a request that has since changed (another prompt text, parameters or
/// model) is not an answer, and the prompt goes on as if it were not there. Cached answers are copied without a
/// request; everything else is sent with retries. Failed responses are written but not cached, and a rerun retries them
/// (the output then keeps only the newest line per prompt). A 401, 403 or 404 stops the run with an error.
/// Also returns when sending began and when the last prompt was handed out (for the stage's span).
pub(crate) async fn run_prompts(
    client: &Client,
    model: &ModelConfig,
    prompts: &[PromptRecord],
    out: &Path,
    batch: Option<(&BatchOptions, BatchMode)>,
    on_file: Option<Vec<ResponseRecord>>,
) -> Result<(RunSummary, Option<(Instant, Instant)>), Error> {
    let started = Instant::now();
    let opts = client.options();
    model.validate(&format!("model {:?}", model.name))?;
    check_unique(prompts)?;
    check_limits(model, prompts)?;
    let access = http::access(model, &opts.env)?;
    // One writer per output: another process writing `out` is waited for before it is read.
    client.lock_output(out)?;

    // The output: resume from what is there, or start afresh on refresh (a caller that hands the lines on file
    // removed it itself).
    if opts.refresh && on_file.is_none() && out.exists() {
        std::fs::remove_file(out).map_err(|e| Error::Setup(format!("{}: {e}", out.display())))?;
    }
    // fsync once per written batch (through a second handle on the same file), not once per line.
    let appender = JsonlAppender::open(out, false)?;
    let syncer = open_syncer(opts, out)?;
    // The newest line per (id, sample index): the request it answered, or None when it failed.
    let on_file = match on_file {
        Some(lines) => lines,
        None => schema::read_latest_responses(out)?,
    };
    let mut summary = RunSummary {
        total: prompts.len(),
        ..RunSummary::default()
    };
    let identity = model_identity(model);
    let cache = Cache::open(&opts.cache_path)?;
    // Requests sent one by one stream their answers (batch jobs never do); streaming is transport, not part of
    // the cache key.
    let stream = batch.is_none() && model.stream;
    let mut from_cache: Vec<ResponseRecord> = Vec::new();
    let mut jobs: Vec<Job> = Vec::new();
    let Prepared {
        resumed,
        stale,
        had_failed,
        keys,
    } = prepare(
        opts,
        model,
        &identity,
        &cache,
        prompts,
        on_file,
        stream,
        |p| {
            match p {
                Prepped::Cached(r) => from_cache.push(*r),
                Prepped::Job(j) => jobs.push(j),
            }
            Ok(())
        },
    )?;
    if opts.max_cost_usd.is_some() && jobs.iter().any(|j| j.max_tokens.is_none()) {
        return Err(unbounded_under_cap());
    }
    summary.resumed = resumed;
    summary.cached = from_cache.len();
    if stale > 0 {
        tracing::warn!(
            model = %model.name, stale, out = %out.display(),
            "Some answers on file are for requests that have since changed (prompt, parameters or model); those prompts are answered again."
        );
    }
    tracing::info!(
        model = %model.name, prompts = prompts.len(), resumed = summary.resumed, cached = summary.cached,
        to_send = jobs.len(), "Starting inference run."
    );

    // The writer thread: cache first, then the output line, in batches.
    let progress = make_progress(
        opts.progress,
        (prompts.len() - summary.resumed) as u64,
        client.overall(summary.resumed as u64, prompts.len() as u64),
    );
    let (tx, rx) = mpsc::channel::<Written>();
    let writer = {
        let identity = identity.clone();
        std::thread::Builder::new()
            .name("ifstress-writer".into())
            .spawn(move || writer_loop(rx, cache, appender, syncer, &identity))
            .map_err(|e| Error::Setup(format!("cannot start the writer thread: {e}")))?
    };
    for r in from_cache {
        progress.inc(1);
        if tx
            .send(Written {
                record: r,
                store: false,
            })
            .is_err()
        {
            break;
        }
    }

    let jobs_result = match batch {
        _ if jobs.is_empty() => Ok(Counters::default()),
        None => {
            // Every request is known: the queue holds them all.
            let (jtx, jrx) = tokio::sync::mpsc::channel(jobs.len());
            for job in jobs {
                let p = &prompts[job.index];
                let _ = jtx.try_send(Pending {
                    job,
                    id: p.id.clone(),
                    sample_index: p.sample_index,
                    meta: p.extra.clone(),
                });
            }
            drop(jtx);
            send_all(
                client,
                model,
                jrx,
                access,
                &tx,
                &progress,
                &Closed::default(),
            )
            .await
        }
        Some((options, mode)) => {
            let priced = model.batch_priced(mode);
            let job = crate::batch::BatchRun {
                client,
                model: &priced,
                prompts,
                access: &access,
                tx: &tx,
                progress: &progress,
                out,
                options,
                mode,
            };
            job.send(jobs).await
        }
    };
    drop(tx);
    let writer_result = writer
        .join()
        .unwrap_or_else(|_| Err(Error::Setup("the writer thread panicked".into())));
    progress.finish_and_clear();
    let counters = jobs_result?;
    writer_result?;
    counters.fill(&mut summary);
    if had_failed || stale > 0 {
        compact(
            out,
            prompts
                .iter()
                .map(ResponseKey::of_prompt)
                .zip(keys.iter().map(String::as_str)),
        )?;
    }
    summary.wall_s = started.elapsed().as_secs_f64();
    summary.in_flight = counters
        .flights
        .as_ref()
        .map(|t| t.finish(started, counters.budget_wait_s));
    let span = counters.flights.as_ref().map(Tracker::span);
    log_finished(model, &summary);
    if let Some(err) = counters.abort.lock().ok().and_then(|mut a| a.take()) {
        return Err(err);
    }
    Ok((summary, span))
}

/// The second handle on the output that fsyncs it once per written batch (None without durable writes).
pub(crate) fn open_syncer(
    opts: &crate::RunOptions,
    out: &Path,
) -> Result<Option<std::fs::File>, Error> {
    if !opts.durable {
        return Ok(None);
    }
    std::fs::File::open(out)
        .map(Some)
        .map_err(|e| Error::Setup(format!("{}: {e}", out.display())))
}

pub(crate) fn log_finished(model: &ModelConfig, summary: &RunSummary) {
    tracing::info!(
        model = %model.name, sent = summary.sent, cached = summary.cached, resumed = summary.resumed,
        failed = summary.failed, interrupted = summary.interrupted, batch_pending = summary.batch_pending, truncated = summary.truncated, requests = summary.requests, abandoned = summary.abandoned,
        prompt_tokens = summary.prompt_tokens, completion_tokens = summary.completion_tokens,
        spent_usd = summary.spent_usd, wall_s = summary.wall_s, "Inference run finished."
    );
}

fn make_progress(enabled: bool, len: u64, overall: Option<(MultiProgress, ProgressBar)>) -> Bars {
    if !enabled {
        return Bars {
            call: ProgressBar::hidden(),
            overall: None,
        };
    }
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr_with_hz(5));
    if let Ok(style) =
        ProgressStyle::with_template("{bar:30} {pos}/{len} {per_sec} ETA {eta} {msg}")
    {
        bar.set_style(style);
    }
    match overall {
        // Below the run's overall line.
        Some((multi, line)) => Bars {
            call: multi.add(bar),
            overall: Some(line),
        },
        None => Bars {
            call: bar,
            overall: None,
        },
    }
}

/// The per-call bar and, when the command drew one (see [`Client::plan_stages`]), the overall line above it.
#[derive(Clone)]
pub(crate) struct Bars {
    call: ProgressBar,
    overall: Option<ProgressBar>,
}

impl Bars {
    pub(crate) fn inc(&self, n: u64) {
        self.call.inc(n);
        if let Some(o) = &self.overall {
            o.inc(n);
        }
    }

    fn set_message(&self, msg: String) {
        self.call.set_message(msg);
    }

    fn finish_and_clear(&self) {
        self.call.finish_and_clear();
    }
}

/// What one call's sending did (requests, outcomes, tokens, money), filled in by its requests as they finish.
#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) sent: usize,
    pub(crate) skipped_for_cost: usize,
    /// Prompts not sent or abandoned because sending was stopped.
    pub(crate) interrupted: AtomicUsize,
    pub(crate) ejections: u64,
    pub(crate) batch_pending: usize,
    pub(crate) requests: AtomicU64,
    /// Attempts abandoned after they were sent.
    pub(crate) abandoned: AtomicU64,
    pub(crate) failed: AtomicUsize,
    pub(crate) truncated: AtomicUsize,
    pub(crate) prompt_tokens: AtomicU64,
    pub(crate) completion_tokens: AtomicU64,
    /// USD spent by this call's requests.
    pub(crate) spent: Mutex<f64>,
    /// How often each 400 message came back (after its retries).
    bad_requests: Mutex<HashMap<String, u32>>,
    /// The error that ends the call once every finished answer is written.
    pub(crate) abort: Mutex<Option<Error>>,
    /// Requests in flight over time (requests sent one by one only).
    pub(crate) flights: Option<Tracker>,
    /// Seconds the sender waited for the cost limit.
    pub(crate) budget_wait_s: f64,
}

impl Counters {
    /// Copies the counts into a run's summary.
    pub(crate) fn fill(&self, summary: &mut RunSummary) {
        summary.sent = self.sent;
        summary.requests = self.requests.load(Ordering::Relaxed);
        summary.abandoned = self.abandoned.load(Ordering::Relaxed);
        summary.failed = self.failed.load(Ordering::Relaxed);
        summary.truncated = self.truncated.load(Ordering::Relaxed);
        summary.skipped_for_cost = self.skipped_for_cost;
        summary.interrupted = self.interrupted.load(Ordering::Relaxed);
        summary.ejections = self.ejections;
        summary.batch_pending = self.batch_pending;
        summary.prompt_tokens = self.prompt_tokens.load(Ordering::Relaxed);
        summary.completion_tokens = self.completion_tokens.load(Ordering::Relaxed);
        summary.spent_usd = self.spent.lock().map(|c| *c).unwrap_or(0.0);
    }
}

/// A request waiting in the sender's queue, with the prompt's fields its response line carries.
pub(crate) struct Pending {
    pub(crate) job: Job,
    pub(crate) id: String,
    pub(crate) sample_index: u32,
    pub(crate) meta: Map<String, Value>,
}

/// Why the sender stopped taking requests from its queue before it was closed: what a feeder that finds the queue
/// closed counts its remaining prompts as.
#[derive(Default)]
pub(crate) struct Closed(std::sync::atomic::AtomicU8);

impl Closed {
    const STOPPED: u8 = 1;
    const COST: u8 = 2;

    fn set(&self, why: u8) {
        self.0.store(why, Ordering::Relaxed);
    }

    /// Sending was stopped ([`crate::StopHandle`]).
    pub(crate) fn stopped(&self) -> bool {
        self.0.load(Ordering::Relaxed) == Self::STOPPED
    }

    /// The cost limit was reached.
    pub(crate) fn for_cost(&self) -> bool {
        self.0.load(Ordering::Relaxed) == Self::COST
    }
}

/// Closes the queue and counts what was still in it.
fn close_queue(rx: &mut tokio::sync::mpsc::Receiver<Pending>) -> usize {
    rx.close();
    let mut n = 0;
    while rx.try_recv().is_ok() {
        n += 1;
    }
    n
}

/// Sends the requests of the queue `jobs` (until it is closed and empty) with retries, spread over the model's
/// replicas within their limits, handing each finished line to the writer.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn send_all(
    client: &Client,
    model: &ModelConfig,
    mut jobs: tokio::sync::mpsc::Receiver<Pending>,
    access: http::Access,
    tx: &mpsc::Sender<Written>,
    progress: &Bars,
    closed: &Closed,
) -> Result<Counters, Error> {
    let opts = client.options();
    let budget = client.budget();
    let base_urls = client.base_urls(model)?;
    let cap = opts.concurrency.unwrap_or(model.max_concurrency).max(1);
    let no_key = access.key.is_none();
    let stop = client.stop_handle();
    // The model's replicas as the client keeps them from call to call: connection pools, limits, health.
    let (pool, fresh) = client
        .pools()
        .model(model, &access, &base_urls, cap, &stop)?;
    let redactor = &Arc::new(access.redactor);
    let endpoints = Arc::clone(&pool.endpoints);
    endpoints.resume();
    let ejections_before = endpoints.ejections();
    // Is anybody there? Checked once per client and model (again only while none of its replicas ever answered),
    // before the first request; a replica found dead keeps its back-off across calls.
    let started = Instant::now();
    if fresh || !endpoints.any_answered() {
        let known: Vec<bool> = base_urls.iter().map(|u| client.has_answered(u)).collect();
        let checked = crate::health::preflight(
            &model.name,
            &base_urls,
            &known,
            &pool.http,
            model.server_wait(),
            redactor,
            &stop,
        )
        .await?;
        endpoints.apply_checks(&checked);
    }
    let replicas = base_urls.len();
    let slots = Arc::new(Semaphore::new(cap * replicas));
    let counters = Arc::new(Counters {
        flights: Some(Tracker::new(cap * replicas, true)),
        ..Counters::default()
    });
    // Probes silent endpoints; stops the model when none has answered within its `server-wait-s`.
    let watcher = {
        let counters = Arc::clone(&counters);
        let watch = crate::health::watch(
            Arc::clone(&endpoints),
            model.name.clone(),
            started,
            model.server_wait(),
            Arc::clone(redactor),
        );
        tokio::spawn(async move {
            let err = watch.await;
            let mut abort = counters.abort.lock().unwrap_or_else(|e| e.into_inner());
            if abort.is_none() {
                *abort = Some(err);
            }
        })
    };
    let model = Arc::new(model.clone());
    let mut tasks = tokio::task::JoinSet::new();
    let mut sent = 0usize;
    let mut skipped = 0usize;
    let mut budget_wait = Duration::ZERO;
    loop {
        let next = tokio::select! {
            biased;
            () = stop.stopped() => None,
            j = jobs.recv() => j,
        };
        let Some(Pending {
            job,
            id,
            sample_index,
            meta,
        }) = next
        else {
            if stop.is_stopping() {
                closed.set(Closed::STOPPED);
                let n = close_queue(&mut jobs);
                counters.interrupted.fetch_add(n, Ordering::Relaxed);
            }
            break;
        };
        if counters.abort.lock().map(|a| a.is_some()).unwrap_or(true) {
            close_queue(&mut jobs);
            break;
        }
        if stop.is_stopping() {
            closed.set(Closed::STOPPED);
            let n = 1 + close_queue(&mut jobs);
            counters.interrupted.fetch_add(n, Ordering::Relaxed);
            break;
        }
        let worst = model.worst_case_cost(job.input_tokens, job.max_tokens.unwrap_or(0));
        // Wait for in-flight requests (they usually cost less than their worst case) before giving up.
        let mut waiting: Option<Instant> = None;
        let fits = loop {
            let (fits, idle) = budget.try_reserve(worst);
            if fits {
                break true;
            }
            waiting.get_or_insert_with(Instant::now);
            if idle || tasks.join_next().await.is_none() {
                break false;
            }
        };
        budget_wait += waiting.map_or(Duration::ZERO, |w| w.elapsed());
        if !fits {
            closed.set(Closed::COST);
            skipped = 1 + close_queue(&mut jobs);
            tracing::warn!(
                spent_usd = budget.spent(),
                limit_usd = budget.cap().unwrap_or(f64::INFINITY),
                not_sent = skipped,
                "Stopping: the next request could exceed the cost limit."
            );
            break;
        }
        let permit = tokio::select! {
            p = Arc::clone(&slots).acquire_owned() => p.map_err(|e| Error::Setup(e.to_string()))?,
            () = stop.stopped() => {
                budget.settle(worst, 0.0);
                closed.set(Closed::STOPPED);
                let n = 1 + close_queue(&mut jobs);
                counters.interrupted.fetch_add(n, Ordering::Relaxed);
                break;
            }
        };
        if counters.abort.lock().map(|a| a.is_some()).unwrap_or(true) {
            budget.settle(worst, 0.0);
            close_queue(&mut jobs);
            break;
        }
        sent += 1;
        let ctx = TaskCtx {
            model: Arc::clone(&model),
            http: Arc::clone(&pool.http),
            fresh: Arc::clone(&pool.fresh),
            endpoints: Arc::clone(&endpoints),
            counters: Arc::clone(&counters),
            redactor: Arc::clone(redactor),
            budget: Arc::clone(budget),
            tx: tx.clone(),
            progress: progress.clone(),
            no_key,
        };
        let in_flight = stop.begin();
        tasks.spawn(async move {
            ctx.run(job, id, sample_index, meta, worst).await;
            drop(permit);
            drop(in_flight);
        });
        // Reap finished tasks so the set stays small.
        while tasks.try_join_next().is_some() {}
    }
    // No prompt waits any more (each has a request, or the sender stopped).
    if let Some(t) = &counters.flights {
        t.backlog_done();
    }
    // Every request in flight is waited for; after a stop, up to the drain bound.
    loop {
        tokio::select! {
            r = tasks.join_next() => if r.is_none() { break },
            () = stop.drained(opts.drain) => {
                tasks.abort_all();
                let mut abandoned = 0;
                while let Some(r) = tasks.join_next().await {
                    if r.is_err_and(|e| e.is_cancelled()) {
                        abandoned += 1;
                    }
                }
                counters.interrupted.fetch_add(abandoned, Ordering::Relaxed);
                tracing::warn!(
                    model = %model.name, abandoned, drain_s = opts.drain.as_secs_f64(),
                    "Stopped waiting for the requests in flight; a rerun sends them again."
                );
                break;
            }
        }
    }
    watcher.abort();
    let _ = watcher.await;
    client.note_answered(
        endpoints
            .answered()
            .iter()
            .map(|u| u.trim_end_matches("/chat/completions").to_owned()),
    );
    tracing::debug!(limits = ?endpoints.limits(), "Final per-endpoint concurrency limits.");
    let mut counters = Arc::try_unwrap(counters)
        .map_err(|_| Error::Setup("a request task outlived the run".into()))?;
    counters.sent = sent;
    counters.skipped_for_cost = skipped;
    counters.ejections = endpoints.ejections() - ejections_before;
    counters.budget_wait_s = budget_wait.as_secs_f64();
    Ok(counters)
}

struct TaskCtx {
    model: Arc<ModelConfig>,
    /// One HTTP client per replica (by `Slot::index`).
    http: Arc<[reqwest::Client]>,
    /// The same without idle connections (by `Slot::index`): a resend after a pooled connection closed unanswered.
    fresh: Arc<[reqwest::Client]>,
    endpoints: Arc<Endpoints>,
    counters: Arc<Counters>,
    redactor: Arc<Redactor>,
    budget: Arc<Budget>,
    tx: mpsc::Sender<Written>,
    progress: Bars,
    /// No API key was configured (a 401 then says how to name one).
    no_key: bool,
}

/// The tries of a request, locked.
fn lock(tries: &Mutex<Tries>) -> std::sync::MutexGuard<'_, Tries> {
    tries.lock().unwrap_or_else(|e| e.into_inner())
}

/// What a request's attempts so far left behind.
#[derive(Default)]
struct Tries {
    attempts: Vec<Attempt>,
    /// The URL of the last attempt (without credentials).
    last_url: String,
    /// What failed attempts that still reported usage cost (a provider may bill them).
    billed: f64,
    /// The last attempt's latency, and whether it was abandoned after it was sent.
    latency: f64,
    abandoned: bool,
}

impl TaskCtx {
    async fn run(
        self,
        job: Job,
        id: String,
        sample_index: u32,
        meta: Map<String, Value>,
        worst: f64,
    ) {
        let m = &*self.model;
        let start = Instant::now();
        let timeout = Duration::from_secs_f64(m.timeout_s);
        let idle = m.stream.then(|| Duration::from_secs_f64(m.idle_timeout_s));
        let rules = Rules {
            resend_closed: true,
            ..Rules::of(m)
        };
        // Shared by the attempts and the verdicts on them (one at a time: never locked across an await).
        let tries = &Mutex::new(Tries::default());
        let (ctx, request) = (&self, &job);
        let ended = retry::drive(
            rules,
            &job.key,
            Some(self.endpoints.stop()),
            |t: Try| async move {
                // None when sending was stopped (or the model halted) before this attempt.
                let slot = ctx.endpoints.acquire().await?;
                let last_url = without_credentials(slot.url());
                lock(tries).last_url = last_url;
                let t0 = Instant::now();
                ctx.counters.requests.fetch_add(1, Ordering::Relaxed);
                let res = slot
                    .guard(send_once(
                        if t.fresh {
                            &ctx.fresh[slot.index()]
                        } else {
                            &ctx.http[slot.index()]
                        },
                        &slot,
                        request.body.clone(),
                        (timeout, idle),
                        &ctx.redactor,
                        ctx.counters.flights.as_ref(),
                    ))
                    .await;
                let tries = &mut *lock(tries);
                tries.latency = t0.elapsed().as_secs_f64();
                Some(match res {
                    Ok(mut c) => {
                        slot.success();
                        c.served.replica = u32::try_from(slot.index()).ok();
                        tries.attempts.push(Attempt {
                            n: t.n,
                            status: Some(200),
                            error_class: None,
                            latency_s: tries.latency,
                            delay_s: 0.0,
                            abandoned: false,
                        });
                        Ok((c, tries.latency))
                    }
                    Err(mut f) => {
                        // On a new connection, a close before any answer is no stale keep-alive connection: the
                        // endpoint is broken, and is treated as one that refuses connections.
                        f.closed &= !t.fresh;
                        slot.failed(&f);
                        drop(slot);
                        tries.abandoned = is_abandoned(&f);
                        if tries.abandoned {
                            ctx.counters.abandoned.fetch_add(1, Ordering::Relaxed);
                        }
                        if let Some(u) = &f.usage {
                            tries.billed += u.cost_usd.unwrap_or_else(|| {
                                m.cost_from_usage(u.prompt_tokens, u.completion_tokens)
                            });
                        } else if tries.abandoned && m.bills_abandoned() {
                            // The provider may have generated the whole answer: count what it could have cost.
                            tries.billed += m.worst_case_cost(
                                request.input_tokens,
                                request.max_tokens.unwrap_or(0),
                            );
                        }
                        Err(f)
                    }
                })
            },
            |f, v| {
                let tries = &mut *lock(tries);
                tries.attempts.push(Attempt {
                    n: v.n,
                    status: f.status,
                    error_class: Some(f.class),
                    latency_s: tries.latency,
                    delay_s: v.wait.as_secs_f64(),
                    abandoned: tries.abandoned,
                });
                tracing::debug!(id = %id, attempt = v.n, class = ?f.class, status = ?f.status, delay_s = v.wait.as_secs_f64(), "Attempt failed.");
            },
        )
        .await;
        let Tries {
            attempts,
            last_url,
            billed,
            ..
        } = std::mem::take(&mut *lock(tries));
        let result: Result<(Completion, f64), Failure> = match ended {
            Ended::Answered(answer) => Ok(answer),
            Ended::Failed(f) => Err(f),
            Ended::NotMade => {
                // Sending was stopped (or the model halted) before an attempt: no record, a rerun sends it.
                self.counters.interrupted.fetch_add(1, Ordering::Relaxed);
                self.release_cost(worst, billed);
                return;
            }
        };
        let wall_s = start.elapsed().as_secs_f64();
        let mut record = new_record(m, job.key, id, sample_index, meta, attempts, wall_s);
        let mut cost = 0.0;
        let store = match result {
            Ok((c, latency)) => {
                cost = fill_answer(&mut record, m, c, Some(latency), &self.counters);
                true
            }
            Err(f) => {
                fill_failure(&mut record, &f);
                // The same 400 again and again (an unsupported parameter, a model limit) fails every request alike.
                let repeated = f.class == ErrorClass::BadRequest && {
                    let mut seen = self
                        .counters
                        .bad_requests
                        .lock()
                        .unwrap_or_else(|e| e.into_inner());
                    let n = seen.entry(f.message.clone()).or_insert(0);
                    *n += 1;
                    *n >= REPEATED_BAD_REQUESTS
                };
                if retry::decide(&f) == Decision::StopModel || repeated {
                    let mut message = f.message.clone();
                    if f.class == ErrorClass::Unauthorized && self.no_key {
                        message.push_str(
                            " (no API key was sent: name the environment variable that holds it with `api-key-env` \
                             in the model config, or --api-key-env)",
                        );
                    }
                    if repeated {
                        message = format!(
                            "{message} (the same answer {REPEATED_BAD_REQUESTS} times: stopping this model's requests)"
                        );
                    }
                    let mut abort = self
                        .counters
                        .abort
                        .lock()
                        .unwrap_or_else(|e| e.into_inner());
                    if abort.is_none() {
                        *abort = Some(Error::FailFast {
                            model: m.name.clone(),
                            url: last_url.clone(),
                            status: f.status.unwrap_or(0),
                            class: class_name(f.class).to_owned(),
                            message,
                        });
                    }
                    drop(abort);
                    if repeated {
                        // This one is answered (failed); the ones after it are not sent.
                        self.counters.failed.fetch_add(1, Ordering::Relaxed);
                        self.release_cost(worst, billed);
                        self.progress.inc(1);
                        let _ = self.tx.send(Written {
                            record,
                            store: false,
                        });
                        return;
                    }
                    self.release_cost(worst, billed);
                    return;
                }
                self.counters.failed.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(id = %record.id, error = record.error.as_deref().unwrap_or(""), "Request failed.");
                false
            }
        };
        let spent = self.release_cost(worst, cost + billed);
        self.progress.inc(1);
        self.progress.set_message(format!(
            "{} tok ${spent:.4}",
            self.counters.prompt_tokens.load(Ordering::Relaxed)
                + self.counters.completion_tokens.load(Ordering::Relaxed)
        ));
        let _ = self.tx.send(Written { record, store });
    }

    fn release_cost(&self, worst: f64, cost: f64) -> f64 {
        *self
            .counters
            .spent
            .lock()
            .unwrap_or_else(|e| e.into_inner()) += cost;
        self.budget.settle(worst, cost)
    }
}
