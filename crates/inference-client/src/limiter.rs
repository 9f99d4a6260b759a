//! Per-endpoint adaptive concurrency and load balancing over a model's base URLs.
//!
//! Each endpoint has a limit between 1 and its cap. A success adds `1 / limit` (about one more slot per
//! window of successes); a 429 or 503 halves it, at most once per half second so one burst of rejections
//! counts once. A request goes to the endpoint with a free slot and the lowest load (in flight / limit).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

const DECREASE_GAP: Duration = Duration::from_millis(500);

struct Endpoint {
    url: Arc<str>,
    limit: f64,
    cap: f64,
    in_flight: usize,
    last_decrease: Option<Instant>,
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
            })
            .collect();
        Arc::new(Endpoints {
            state: Mutex::new(state),
            notify: Notify::new(),
        })
    }

    /// Waits for a free slot on the least loaded endpoint.
    pub(crate) async fn acquire(self: &Arc<Self>) -> Slot {
        loop {
            let notified = std::pin::pin!(self.notify.notified());
            let mut notified = notified;
            notified.as_mut().enable();
            if let Some(slot) = self.try_acquire() {
                return slot;
            }
            notified.await;
        }
    }

    fn try_acquire(self: &Arc<Self>) -> Option<Slot> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let mut best: Option<(usize, f64)> = None;
        for (i, e) in st.iter().enumerate() {
            let limit = e.limit.floor().max(1.0);
            if (e.in_flight as f64) < limit {
                let load = e.in_flight as f64 / limit;
                if best.is_none_or(|(_, b)| load < b) {
                    best = Some((i, load));
                }
            }
        }
        let (i, _) = best?;
        st[i].in_flight += 1;
        Some(Slot {
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

    pub(crate) fn success(&self) {
        let mut st = self
            .endpoints
            .state
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let e = &mut st[self.index];
        e.limit = (e.limit + 1.0 / e.limit).min(e.cap);
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
