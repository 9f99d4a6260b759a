//! One request: its attempts through the retry loop (`retry::drive`), its record, what it cost, and the answers
//! that stop its model (401, 403, 404, 402, or the same 400 again and again).

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use schema::{Attempt, ErrorClass};
use serde_json::{Map, Value};

use crate::Error;
use crate::client::Budget;
use crate::config::ModelConfig;
use crate::limiter::Endpoints;
use crate::parse::{Completion, Failure};
use crate::redact::Redactor;
use crate::retry::{self, Decision, Ended, Rules, Try};

use super::record::send_once;
use super::{
    Bars, Counters, Job, Written, class_name, fill_answer, fill_failure, is_abandoned, new_record,
    without_credentials,
};

/// Identical 400 answers after which a model's remaining requests are not sent.
const REPEATED_BAD_REQUESTS: u32 = 5;

pub(super) struct TaskCtx {
    pub(super) model: Arc<ModelConfig>,
    /// One HTTP client per replica (by `Slot::index`).
    pub(super) http: Arc<[reqwest::Client]>,
    /// The same without idle connections (by `Slot::index`): a resend after a pooled connection closed unanswered.
    pub(super) fresh: Arc<[reqwest::Client]>,
    pub(super) endpoints: Arc<Endpoints>,
    pub(super) counters: Arc<Counters>,
    pub(super) redactor: Arc<Redactor>,
    pub(super) budget: Arc<Budget>,
    pub(super) tx: mpsc::Sender<Written>,
    pub(super) progress: Bars,
    /// No API key was configured (a 401 then says how to name one).
    pub(super) no_key: bool,
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
    pub(super) async fn run(
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
