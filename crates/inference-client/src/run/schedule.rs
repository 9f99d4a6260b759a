//! Scheduling one call's requests: the queue, the cost limit before each request, the replicas' slots, the health
//! watch, and the drain after a stop. Each request's attempts are `request`'s.

use std::sync::atomic::Ordering;
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use tokio::sync::Semaphore;

use crate::Error;
use crate::client::Client;
use crate::config::ModelConfig;
use crate::http;
use crate::in_flight::Tracker;

use super::request::TaskCtx;
use super::{Bars, Counters, Job, Written};

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
    pub(super) const STOPPED: u8 = 1;
    pub(super) const COST: u8 = 2;

    pub(super) fn set(&self, why: u8) {
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
    let started = tokio::time::Instant::now();
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
