//! Per-endpoint adaptive concurrency and load balancing over a model's base URLs.
//!
//! Each endpoint has a limit between 1 and its cap. A success adds `1 / limit` (about one more slot per
//! window of successes); a 429 or 503 halves it, at most once per half second so one burst of rejections
//! counts once. A request goes to the endpoint with a free slot and the lowest load (in flight / limit).
//!
//! An endpoint that cannot be reached (connection refused or reset, timeout) is ejected: it gets no request until
//! its back-off has passed (1 s, doubling to 60 s while it keeps failing), then one probe at a time; a success
//! readmits it. So a dead replica costs a few probes instead of half the traffic.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

const DECREASE_GAP: Duration = Duration::from_millis(500);
const FIRST_EJECTION: Duration = Duration::from_secs(1);
const LONGEST_EJECTION: Duration = Duration::from_secs(60);

struct Endpoint {
    url: Arc<str>,
    limit: f64,
    cap: f64,
    in_flight: usize,
    last_decrease: Option<Instant>,
    /// Ejected until then (unreachable); afterwards one probe at a time until a success.
    ejected_until: Option<Instant>,
    /// Length of the next ejection.
    ejection: Duration,
    /// Readmitted on probation: one request at a time until one succeeds.
    probing: bool,
}

pub(crate) struct Endpoints {
    state: Mutex<Vec<Endpoint>>,
    notify: Notify,
}

impl Endpoints {
    /// `urls` are full chat-completion URLs; each gets `cap` slots at most and starts fully open.
    pub(crate) fn new(urls: &[String], cap: usize) -> Arc<Endpoints> {
        let cap = cap.max(1) as f64;
        let state = urls
            .iter()
            .map(|u| Endpoint {
                url: Arc::from(u.as_str()),
                limit: cap,
                cap,
                in_flight: 0,
                last_decrease: None,
                ejected_until: None,
                ejection: FIRST_EJECTION,
                probing: false,
            })
            .collect();
        Arc::new(Endpoints {
            state: Mutex::new(state),
            notify: Notify::new(),
        })
    }

    /// Waits for a free slot on the least loaded endpoint that is not ejected.
    pub(crate) async fn acquire(self: &Arc<Self>) -> Slot {
        loop {
            let notified = std::pin::pin!(self.notify.notified());
            let mut notified = notified;
            notified.as_mut().enable();
            match self.try_acquire() {
                Ok(slot) => return slot,
                // Every endpoint with room is ejected: wake when the first ejection ends (or a slot frees up).
                Err(Some(until)) => {
                    let wait = until.saturating_duration_since(Instant::now());
                    let _ = tokio::time::timeout(wait, notified).await;
                }
                Err(None) => notified.await,
            }
        }
    }

    /// A slot, or when to try again if only ejected endpoints have room (`None`: when a slot is released).
    fn try_acquire(self: &Arc<Self>) -> Result<Slot, Option<Instant>> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        let mut best: Option<(usize, f64)> = None;
        let mut wake: Option<Instant> = None;
        for (i, e) in st.iter().enumerate() {
            if let Some(until) = e.ejected_until
                && until > now
            {
                wake = Some(wake.map_or(until, |w| w.min(until)));
                continue;
            }
            let limit = if e.probing || e.ejected_until.is_some() {
                1.0
            } else {
                e.limit.floor().max(1.0)
            };
            if (e.in_flight as f64) < limit {
                let load = e.in_flight as f64 / limit;
                if best.is_none_or(|(_, b)| load < b) {
                    best = Some((i, load));
                }
            }
        }
        let Some((i, _)) = best else {
            return Err(wake);
        };
        let e = &mut st[i];
        if e.ejected_until.take().is_some() {
            e.probing = true;
        }
        e.in_flight += 1;
        Ok(Slot {
            endpoints: Arc::clone(self),
            index: i,
            url: Arc::clone(&st[i].url),
        })
    }

    /// Current limits, for logs and tests.
    pub(crate) fn limits(&self) -> Vec<f64> {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|e| e.limit)
            .collect()
    }
}

/// One request's hold on an endpoint; released on drop.
pub(crate) struct Slot {
    endpoints: Arc<Endpoints>,
    index: usize,
    url: Arc<str>,
}

impl Slot {
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// The endpoint's index in the model's `base-urls`.
    pub(crate) fn index(&self) -> usize {
        self.index
    }

    pub(crate) fn success(&self) {
        let mut st = self
            .endpoints
            .state
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let e = &mut st[self.index];
        e.limit = (e.limit + 1.0 / e.limit).min(e.cap);
        if e.probing {
            e.probing = false;
            e.ejection = FIRST_EJECTION;
            tracing::info!(
                endpoint = self.index,
                "Endpoint answered again; readmitted."
            );
        }
    }

    /// The endpoint could not be reached: eject it for its back-off (doubling while it keeps failing).
    pub(crate) fn unreachable(&self) {
        let mut st = self
            .endpoints
            .state
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let e = &mut st[self.index];
        if e.ejected_until.is_some() {
            return;
        }
        let now = Instant::now();
        e.ejected_until = Some(now + e.ejection);
        tracing::warn!(
            endpoint = self.index,
            seconds = e.ejection.as_secs_f64(),
            "Endpoint unreachable; ejected, then probed again."
        );
        e.ejection = (e.ejection * 2).min(LONGEST_EJECTION);
        e.probing = false;
        e.limit = (e.limit / 2.0).max(1.0);
    }

    pub(crate) fn overload(&self) {
        let mut st = self
            .endpoints
            .state
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let e = &mut st[self.index];
        let now = Instant::now();
        if e.last_decrease
            .is_none_or(|t| now.duration_since(t) >= DECREASE_GAP)
        {
            e.limit = (e.limit / 2.0).max(1.0);
            e.last_decrease = Some(now);
            tracing::debug!(
                endpoint = self.index,
                limit = e.limit,
                "Endpoint overloaded; halving its concurrency."
            );
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        {
            let mut st = self
                .endpoints
                .state
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            st[self.index].in_flight -= 1;
        }
        self.endpoints.notify.notify_one();
    }
}
