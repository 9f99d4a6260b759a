//! A run: prompts in, one response line per (prompt id, sample index) out, through the cache.
//!
//! A line on file resumes a prompt only while its cache key and ride-along fields match. An attempt abandoned after it
//! was sent (timed out, or its answer cut off) is marked in `Attempt::abandoned` and counted in
//! `RunSummary::abandoned`; with `bills-abandoned` it is billed at its worst case. A first attempt whose pooled
//! connection was closed unanswered is sent again at once on a new connection (`pool::ModelPool::fresh`), not counted
//! against `max-attempts`. The same 400 five times stops the model's remaining requests.
//!
//! This module is the call (`run_prompts`); its parts are modules of their own: `prepare` (what is resumed, cached
//! or to send), `schedule` (the queue, the cost limit before each request, the replicas' slots, the drain after a
//! stop), `request` (one request's attempts through `retry::drive`, its record and cost), `writer` (cache and
//! output), `record`, `counters`, `progress`, `dry_run` and `session` (a prompts file fed chunk by chunk).

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use schema::metrics::InFlight;
use schema::{
    Attempt, ErrorClass, JsonlAppender, Outcome, PromptRecord, ResponseKey, ResponseRecord,
};
use serde_json::{Map, Value};

use crate::Error;
use crate::body::{
    body_max_tokens, cache_key, estimate_input_tokens, model_identity, request_body,
};
use crate::cache::Cache;
use crate::client::{BatchOptions, Client, check_limits, check_unique};
use crate::config::{BatchMode, ModelConfig};
use crate::http;
use crate::in_flight::Tracker;
use crate::limiter::Slot;
use crate::parse::{self, Completion, Failure};
use crate::redact::Redactor;

mod counters;
mod dry_run;
mod prepare;
mod progress;
mod record;
mod request;
mod schedule;
mod session;
mod writer;

pub(crate) use counters::Counters;
pub use dry_run::DryRunReport;
pub(crate) use dry_run::dry_run;
pub(crate) use progress::Bars;
use progress::make_progress;
pub(crate) use schedule::{Closed, Pending, send_all};

use prepare::{Prepared, Prepped, compact, prepare, unbounded_under_cap};
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

/// What a line on file answered: its cache key and the prompt's ride-along fields.
type AnsweredRequest = (String, Map<String, Value>);

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
