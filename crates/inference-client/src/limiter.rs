//! Per-endpoint adaptive concurrency, load balancing over a model's base URLs, and when an endpoint counts as dead.
//!
//! Each endpoint has a limit between 1 and its cap. A success adds `1 / limit` (about one more slot per
//! window of successes); a 429 or 503 halves it, at most once per half second so one burst of rejections
//! counts once. A request goes to the endpoint with a free slot and the lowest load (in flight / limit).
//!
//! Only evidence that an endpoint is dead ejects it: a connection that cannot be made (refused, reset while
//! connecting), or a health probe (a TCP connection to its host, see `health`) failing while its requests are
//! silent. A timeout of one request is no such evidence: when the endpoint answered anything since that attempt
//! began, it stays; otherwise it is probed at once. Nor is a connection closed unanswered by an endpoint that has
//! answered before (a keep-alive connection the server had just closed): the resend connects again, and ejects if
//! that fails. An ejected endpoint gets no request until its back-off has passed (1 s, doubling while it keeps
//! failing, to 60 s; to 5 s for an endpoint that has answered before, so a restarted server is back within
//! seconds); then the next request first probes it with a TCP connection (no paid attempt is spent on a server
//! that refuses connections), and a probe that connects readmits it on probation, one request at a time until
//! one succeeds. A probe that fails while requests are in flight on the endpoint ends their attempts (they are
//! retried elsewhere or later), instead of waiting out the idle timeout. So a dead replica costs a few probes
//! instead of half the traffic, and a slow one is never mistaken for a dead one.
//!
//! Its clock is tokio's, so a test on paused time drives the back-off.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use schema::ErrorClass;
use tokio::sync::{Notify, watch};
use tokio::time::Instant;

use crate::health::{self, HostPort};
use crate::parse::Failure;
use crate::retry;
use crate::stop::StopHandle;

const DECREASE_GAP: Duration = Duration::from_millis(500);
const FIRST_EJECTION: Duration = Duration::from_secs(1);
const LONGEST_EJECTION: Duration = Duration::from_secs(60);
/// The longest back-off of an endpoint that has answered before: readmitted within seconds of its return.
const LONGEST_EJECTION_ANSWERED: Duration = Duration::from_secs(5);

struct Endpoint {
    url: Arc<str>,
    /// Where a TCP probe connects (None when the URL names no host: never probed, never ejected by a probe).
    host: Option<HostPort>,
    limit: f64,
    cap: f64,
    in_flight: usize,
    last_decrease: Option<Instant>,
    /// Ejected (dead): no request until a probe connects.
    ejected: bool,
    /// When an ejected endpoint may be probed next.
    next_probe: Instant,
    /// A probe of this ejected endpoint is under way.
    probe_running: bool,
    /// Length of the next ejection.
    ejection: Duration,
    /// Readmitted on probation: one request at a time until one succeeds.
    probing: bool,
    /// It gave an HTTP answer (any status) in this run or an earlier call of the client.
    answered: bool,
    /// Last time anything came from it (an answer, an error status, a streamed chunk).
    heard: Option<Instant>,
    /// Since when requests are in flight on it without interruption.
    busy_since: Option<Instant>,
    /// A request timed out with nothing heard since it began: probe it now.
    suspect: bool,
    /// Last health probe of this endpoint while admitted.
    last_probe: Option<Instant>,
    /// The last connection error, for the "never answered" message.
    error: Option<String>,
    /// Bumped when a probe finds the endpoint dead: attempts in flight on it end.
    dead: watch::Sender<u64>,
}

pub(crate) struct Endpoints {
    state: Mutex<Vec<Endpoint>>,
    notify: Notify,
    stop: StopHandle,
    /// No more requests at all (the model is being stopped).
    halted: AtomicBool,
    ejections: AtomicU64,
    /// Each endpoint's URL parsed once (None when it does not parse: each request then reports the error).
    parsed: Vec<Option<reqwest::Url>>,
}

/// What a request may do next.
enum Grant {
    Slot(Slot),
    /// Probe this ejected endpoint first.
    Probe(usize, HostPort),
    /// Wait for a released slot, a readmission, or this instant.
    Wait(Option<Instant>),
}

/// How a model's endpoints start a call.
pub(crate) struct EndpointStart {
    /// Full chat-completion URL.
    pub(crate) url: String,
    /// Answered before (in a pre-flight check or an earlier call).
    pub(crate) answered: bool,
    /// Could not be reached before the call: starts ejected, with this error.
    pub(crate) unreachable: Option<String>,
}

impl Endpoints {
    /// Each endpoint gets `cap` slots at most and starts fully open (or ejected, when it was unreachable).
    pub(crate) fn new(starts: &[EndpointStart], cap: usize, stop: StopHandle) -> Arc<Endpoints> {
        let cap = cap.max(1) as f64;
        let now = Instant::now();
        let state = starts
            .iter()
            .map(|s| Endpoint {
                url: Arc::from(s.url.as_str()),
                host: health::host_port(&s.url),
                limit: cap,
                cap,
                in_flight: 0,
                last_decrease: None,
                ejected: s.unreachable.is_some(),
                next_probe: now + FIRST_EJECTION,
                probe_running: false,
                ejection: if s.unreachable.is_some() {
                    FIRST_EJECTION * 2
                } else {
                    FIRST_EJECTION
                },
                probing: false,
                answered: s.answered,
                heard: None,
                busy_since: None,
                suspect: false,
                last_probe: None,
                error: s.unreachable.clone(),
                dead: watch::Sender::new(0),
            })
            .collect();
        Arc::new(Endpoints {
            parsed: starts
                .iter()
                .map(|s| reqwest::Url::parse(&s.url).ok())
                .collect(),
            state: Mutex::new(state),
            notify: Notify::new(),
            stop,
            halted: AtomicBool::new(false),
            ejections: AtomicU64::new(0),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Endpoint>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits for a free slot on the least loaded endpoint that is not ejected; `None` once sending is stopped
    /// (a signal) or halted (the model is stopped).
    pub(crate) async fn acquire(self: &Arc<Self>) -> Option<Slot> {
        loop {
            let notified = std::pin::pin!(self.notify.notified());
            let mut notified = notified;
            notified.as_mut().enable();
            if self.stop.is_stopping() || self.halted.load(Ordering::SeqCst) {
                return None;
            }
            match self.try_acquire() {
                Grant::Slot(slot) => return Some(slot),
                Grant::Probe(i, host) => {
                    let mut claim = ProbeClaim {
                        endpoints: self,
                        index: i,
                        finished: false,
                    };
                    let result = health::tcp_probe(&host).await;
                    claim.finished = true;
                    self.probed(i, result);
                }
                Grant::Wait(until) => {
                    let stop = self.stop.clone();
                    let stopped = stop.stopped();
                    match until {
                        Some(until) => {
                            tokio::select! {
                                () = notified => {},
                                () = tokio::time::sleep_until(until) => {},
                                () = stopped => {},
                            }
                        }
                        None => {
                            tokio::select! {
                                () = notified => {},
                                () = stopped => {},
                            }
                        }
                    }
                }
            }
        }
    }

    fn try_acquire(self: &Arc<Self>) -> Grant {
        let mut st = self.lock();
        let now = Instant::now();
        let mut best: Option<(usize, f64)> = None;
        let mut wake: Option<Instant> = None;
        let mut probe: Option<usize> = None;
        for (i, e) in st.iter().enumerate() {
            if e.ejected {
                if e.probe_running {
                    continue;
                }
                if e.next_probe <= now {
                    probe.get_or_insert(i);
                } else {
                    wake = Some(wake.map_or(e.next_probe, |w| w.min(e.next_probe)));
                }
                continue;
            }
            let limit = if e.probing {
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
        if let Some((i, _)) = best {
            let e = &mut st[i];
            if e.in_flight == 0 {
                e.busy_since = Some(now);
            }
            e.in_flight += 1;
            return Grant::Slot(Slot {
                endpoints: Arc::clone(self),
                index: i,
                url: Arc::clone(&e.url),
                since: now,
            });
        }
        if let Some(i) = probe {
            let e = &mut st[i];
            match e.host.clone() {
                Some(host) => {
                    e.probe_running = true;
                    return Grant::Probe(i, host);
                }
                // Nothing to probe: readmit on probation, the request itself is the probe.
                None => {
                    e.ejected = false;
                    e.probing = true;
                    drop(st);
                    return self.try_acquire();
                }
            }
        }
        Grant::Wait(wake)
    }

    /// Ends a probe of an ejected endpoint: readmits it on probation, or schedules the next probe.
    fn probed(&self, index: usize, result: Result<(), String>) {
        let mut st = self.lock();
        let e = &mut st[index];
        e.probe_running = false;
        let now = Instant::now();
        match result {
            Ok(()) => {
                e.ejected = false;
                e.probing = true;
                e.last_probe = Some(now);
                tracing::info!(
                    endpoint = index,
                    "Endpoint accepts connections again; readmitted, one request at a time until one succeeds."
                );
            }
            Err(msg) => {
                e.error = Some(msg);
                e.next_probe = now + e.ejection;
                e.ejection = (e.ejection * 2).min(longest_ejection(e.answered));
            }
        }
        drop(st);
        self.notify.notify_waiters();
    }

    /// Ejects an endpoint (no-op when it already is); `kill` also ends the attempts in flight on it.
    fn eject(&self, index: usize, error: &str, kill: bool) {
        let mut st = self.lock();
        let e = &mut st[index];
        if kill {
            e.dead.send_modify(|g| *g += 1);
        }
        e.error = Some(error.to_owned());
        if e.ejected {
            return;
        }
        let now = Instant::now();
        e.ejected = true;
        e.next_probe = now + e.ejection;
        tracing::warn!(
            endpoint = index,
            seconds = e.ejection.as_secs_f64(),
            error,
            "Endpoint unreachable; ejected, then probed again."
        );
        e.ejection = (e.ejection * 2).min(longest_ejection(e.answered));
        e.probing = false;
        e.limit = (e.limit / 2.0).max(1.0);
        self.ejections.fetch_add(1, Ordering::Relaxed);
    }

    /// Admitted endpoints that need a health probe now: requests in flight and nothing heard for `silent` (at
    /// most one probe per `gap`), or a request that timed out in silence. Marks them probed.
    pub(crate) fn due_probes(&self, silent: Duration, gap: Duration) -> Vec<(usize, HostPort)> {
        let mut st = self.lock();
        let now = Instant::now();
        let mut due = Vec::new();
        for (i, e) in st.iter_mut().enumerate() {
            let Some(host) = e.host.clone() else { continue };
            if e.ejected || e.in_flight == 0 {
                continue;
            }
            let quiet_since = match (e.heard, e.busy_since) {
                (Some(h), Some(b)) => h.max(b),
                (h, b) => h.or(b).unwrap_or(now),
            };
            let recently_probed = e.last_probe.is_some_and(|p| now.duration_since(p) < gap);
            if e.suspect || (now.duration_since(quiet_since) >= silent && !recently_probed) {
                e.suspect = false;
                e.last_probe = Some(now);
                due.push((i, host));
            }
        }
        due
    }

    /// A health probe of an admitted endpoint failed: it is dead; its attempts in flight end.
    pub(crate) fn probe_failed(&self, index: usize, error: &str) {
        self.eject(
            index,
            &format!("a health probe failed while its requests were silent: {error}"),
            true,
        );
    }

    /// Applies a pre-flight check (`checked[i]` for endpoint `i`): an endpoint that answered is marked so, one that
    /// could not be reached is ejected (keeping the back-off it has: a replica that stays dead is probed ever more
    /// rarely, call after call), one that can be reached again is readmitted on probation.
    pub(crate) fn apply_checks(&self, checked: &[health::Checked]) {
        let mut st = self.lock();
        let now = Instant::now();
        for (e, c) in st.iter_mut().zip(checked) {
            e.answered |= c.answered;
            match &c.unreachable {
                Some(err) => {
                    e.error = Some(err.clone());
                    if !e.ejected {
                        e.ejected = true;
                        e.probing = false;
                        e.next_probe = now + e.ejection;
                        e.ejection = (e.ejection * 2).min(longest_ejection(e.answered));
                    }
                }
                None if e.ejected && !e.probe_running => {
                    e.ejected = false;
                    e.probing = true;
                }
                None => {}
            }
        }
        drop(st);
        self.notify.notify_waiters();
    }

    /// A new call begins: a model halted in an earlier call (none of its endpoints answered in time) may send again.
    pub(crate) fn resume(&self) {
        self.halted.store(false, Ordering::SeqCst);
    }

    /// Whether any endpoint ever answered (in this client's life).
    pub(crate) fn any_answered(&self) -> bool {
        self.lock().iter().any(|e| e.answered)
    }

    /// When no endpoint has ever answered and none has a request in flight: each endpoint's URL and last error.
    pub(crate) fn never_answered(&self) -> Option<Vec<(String, Option<String>)>> {
        let st = self.lock();
        if st.iter().any(|e| e.answered || e.in_flight > 0) {
            return None;
        }
        Some(
            st.iter()
                .map(|e| (e.url.to_string(), e.error.clone()))
                .collect(),
        )
    }

    /// The endpoints (their chat URLs) that answered in this call.
    pub(crate) fn answered(&self) -> Vec<String> {
        self.lock()
            .iter()
            .filter(|e| e.answered)
            .map(|e| e.url.to_string())
            .collect()
    }

    /// No more requests at all: waiting requests get none, attempts in flight end.
    pub(crate) fn halt(&self) {
        self.halted.store(true, Ordering::SeqCst);
        for e in self.lock().iter() {
            e.dead.send_modify(|g| *g += 1);
        }
        self.notify.notify_waiters();
    }

    /// The client's stop handle (a wait before a retry ends early once sending is stopped).
    pub(crate) fn stop(&self) -> &StopHandle {
        &self.stop
    }

    /// How often an endpoint was ejected so far (over every call of the client).
    pub(crate) fn ejections(&self) -> u64 {
        self.ejections.load(Ordering::Relaxed)
    }

    /// Current limits, for logs and tests.
    pub(crate) fn limits(&self) -> Vec<f64> {
        self.lock().iter().map(|e| e.limit).collect()
    }
}

fn longest_ejection(answered: bool) -> Duration {
    if answered {
        LONGEST_EJECTION_ANSWERED
    } else {
        LONGEST_EJECTION
    }
}

/// A probe of an ejected endpoint under way; if the probing request is dropped first, another may probe.
struct ProbeClaim<'a> {
    endpoints: &'a Endpoints,
    index: usize,
    finished: bool,
}

impl Drop for ProbeClaim<'_> {
    fn drop(&mut self) {
        if !self.finished {
            self.endpoints.lock()[self.index].probe_running = false;
            self.endpoints.notify.notify_waiters();
        }
    }
}

/// One request's hold on an endpoint; released on drop.
pub(crate) struct Slot {
    endpoints: Arc<Endpoints>,
    index: usize,
    url: Arc<str>,
    /// When the attempt began.
    since: Instant,
}

impl Slot {
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// The URL parsed (at the call's start, not per request), when it parses.
    pub(crate) fn parsed_url(&self) -> Option<reqwest::Url> {
        self.endpoints.parsed[self.index].clone()
    }

    /// The endpoint's index in the model's `base-urls`.
    pub(crate) fn index(&self) -> usize {
        self.index
    }

    /// Something came from the endpoint (an answer, an error status, a streamed chunk): it is alive.
    pub(crate) fn heard(&self) {
        let mut st = self.endpoints.lock();
        let e = &mut st[self.index];
        e.heard = Some(Instant::now());
        e.answered = true;
    }

    pub(crate) fn success(&self) {
        let mut st = self.endpoints.lock();
        let e = &mut st[self.index];
        e.heard = Some(Instant::now());
        e.answered = true;
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

    /// What a failed attempt says about the endpoint: an HTTP answer shows it is alive (a 429 or 503 also halves
    /// its limit); a connection that cannot be made ejects it, one closed unanswered does not; a timeout ejects
    /// nothing, but an endpoint that was silent all along the attempt is probed at once.
    pub(crate) fn failed(&self, f: &Failure) {
        if f.status.is_some() {
            self.heard();
        }
        if retry::is_overload(f) {
            self.overload();
        }
        match (f.status, f.class) {
            // A connection closed unanswered by an endpoint that has answered before, and is not on probation, is
            // most likely a keep-alive connection it had just closed: the resend connects again, and ejects the
            // endpoint if that fails. From an endpoint that never answered, it is a broken endpoint.
            (None, ErrorClass::Connection) if f.closed && self.answered_freely() => {}
            (None, ErrorClass::Connection) => self.endpoints.eject(self.index, &f.message, false),
            (None, ErrorClass::Timeout) => {
                let mut st = self.endpoints.lock();
                let e = &mut st[self.index];
                if e.heard.is_some_and(|h| h > self.since) {
                    tracing::debug!(
                        endpoint = self.index,
                        "A request timed out while the endpoint answered others; it stays admitted."
                    );
                } else {
                    e.suspect = true;
                }
            }
            _ => {}
        }
    }

    /// The endpoint answered before and is not on probation.
    fn answered_freely(&self) -> bool {
        let st = self.endpoints.lock();
        let e = &st[self.index];
        e.answered && !e.probing
    }

    fn overload(&self) {
        let mut st = self.endpoints.lock();
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

    /// Runs one attempt, ended early with a connection failure when the endpoint is found dead meanwhile.
    pub(crate) async fn guard<T>(
        &self,
        attempt: impl Future<Output = Result<T, Failure>>,
    ) -> Result<T, Failure> {
        let mut dead = self.endpoints.lock()[self.index].dead.subscribe();
        tokio::select! {
            r = attempt => r,
            _ = dead.changed() => Err(Failure {
                class: ErrorClass::Connection,
                status: None,
                message: "the endpoint stopped answering (a health probe failed, or the model is stopped)".to_owned(),
                retry_after: None,
                should_retry: None,
                usage: None,
                closed: false,
            }),
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        {
            let mut st = self.endpoints.lock();
            let e = &mut st[self.index];
            e.in_flight -= 1;
            if e.in_flight == 0 {
                e.busy_since = None;
            }
        }
        self.endpoints.notify.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(class: ErrorClass, status: Option<u16>) -> Failure {
        Failure {
            class,
            status,
            message: "boom".to_owned(),
            retry_after: None,
            should_retry: None,
            usage: None,
            closed: false,
        }
    }

    fn two() -> Arc<Endpoints> {
        let start = |url: &str| EndpointStart {
            url: url.to_owned(),
            answered: false,
            unreachable: None,
        };
        Endpoints::new(
            &[
                start("http://127.0.0.1:1/v1/chat/completions"),
                start("http://127.0.0.1:2/v1/chat/completions"),
            ],
            4,
            StopHandle::default(),
        )
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_timeout_while_others_answer_ejects_nothing() {
        let e = two();
        let slow = e.acquire().await.unwrap();
        let other = e.acquire().await.unwrap();
        let same = e.acquire().await.unwrap();
        assert_eq!(slow.index(), same.index());
        same.success();
        slow.failed(&failure(ErrorClass::Timeout, None));
        assert_eq!(e.ejections(), 0);
        assert!(!e.lock()[slow.index()].suspect);
        // A timeout in silence: not ejected, probed at once.
        other.failed(&failure(ErrorClass::Timeout, None));
        assert_eq!(e.ejections(), 0);
        let due = e.due_probes(Duration::from_secs(3600), Duration::from_secs(3600));
        assert_eq!(
            due.iter().map(|(i, _)| *i).collect::<Vec<_>>(),
            vec![other.index()]
        );
        // A refused connection ejects.
        other.failed(&failure(ErrorClass::Connection, None));
        assert_eq!(e.ejections(), 1);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn acquiring_stops_with_the_stop_handle() {
        let stop = StopHandle::default();
        let e = Endpoints::new(
            &[EndpointStart {
                url: "http://127.0.0.1:1/v1/chat/completions".to_owned(),
                answered: true,
                unreachable: None,
            }],
            1,
            stop.clone(),
        );
        let held = e.acquire().await.unwrap();
        stop.stop_sending();
        assert!(e.acquire().await.is_none());
        drop(held);
    }

    /// The ejection back-off on tokio's paused clock: an endpoint that refused a connection is readmitted (on
    /// probation) exactly `FIRST_EJECTION` later. Its URL names no host, so readmission needs no probe.
    #[tokio::test(start_paused = true)]
    async fn an_ejected_endpoint_is_readmitted_exactly_its_back_off_later() {
        let e = Endpoints::new(
            &[EndpointStart {
                url: "file:///no-host/chat/completions".to_owned(),
                answered: false,
                unreachable: None,
            }],
            1,
            StopHandle::default(),
        );
        let slot = e.acquire().await.unwrap();
        let t0 = Instant::now();
        slot.failed(&failure(ErrorClass::Connection, None));
        drop(slot);
        assert_eq!(e.ejections(), 1);
        let again = e.acquire().await.unwrap();
        assert_eq!(t0.elapsed(), FIRST_EJECTION);
        assert!(e.lock()[again.index()].probing);
    }
}
