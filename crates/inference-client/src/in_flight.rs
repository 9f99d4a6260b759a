//! Requests in flight over one call, counted with a few atomics (no lock, no allocation per request).
//!
//! One word holds the number of requests in flight (low 32 bits) and whether prompts are still waiting to be sent
//! (the backlog bit); every change is one atomic read-modify-write of that word, so the changes of "prompts
//! waiting and the cap full" (saturated) come in one order and strictly alternate: entering adds its time to one
//! sum, leaving to another, and the saturated time is their difference (wrapping arithmetic, exact whatever the
//! sums' size). The time-weighted mean in flight needs no such care: its integral is the sum of the requests'
//! durations. Its part while prompts wait is `Σ min(end, close) − start` over the requests that started before the
//! backlog closed: a request subtracts its start when it begins with the backlog open and adds its end when it ends
//! with the backlog still open, and closing adds its time once per request then in flight.
//!
//! The time comes from a [`Clock`]: the monotonic clock, or in tests one they move by hand, so a test states
//! exact figures instead of bounds that a loaded machine could break.
//!
//! A call's figures go into `RunSummary::in_flight`; the client sums them over its calls until
//! `Client::take_in_flight`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use schema::metrics::InFlight;

const COUNT: u64 = 0xffff_ffff;
const BACKLOG: u64 = 1 << 32;

/// Where a [`Tracker`] reads the time.
pub(crate) enum Clock {
    /// `Instant::now()`, as nanoseconds since the tracker started.
    Monotonic,
    /// Nanoseconds since the tracker started, set by the test that holds the other end.
    #[cfg(test)]
    Manual(std::sync::Arc<AtomicU64>),
}

/// The in-flight counts of one call's requests (see the module doc).
pub(crate) struct Tracker {
    origin: Instant,
    clock: Clock,
    /// The call's cap (0: never saturated).
    cap: u64,
    /// In flight (low 32 bits) and the backlog bit.
    state: AtomicU64,
    peak: AtomicU64,
    requests: AtomicU64,
    /// Sum of the requests' durations (ns).
    busy_ns: AtomicU64,
    /// Wrapping sum of the requests' time in flight while the backlog was open (ns; see the module doc).
    backlog_busy_ns: AtomicU64,
    /// Wrapping sums of the times (ns since `origin`) the call became saturated and stopped being so.
    entered_ns: AtomicU64,
    left_ns: AtomicU64,
    /// When the first request began, the backlog ended and the last request ended (ns since `origin`).
    first_ns: AtomicU64,
    backlog_end_ns: AtomicU64,
    last_end_ns: AtomicU64,
}

impl Default for Tracker {
    /// A tracker that counts but is never saturated (cap 0, no backlog).
    fn default() -> Tracker {
        Tracker::new(0, false)
    }
}

impl Tracker {
    /// Starts counting now; `backlog`: prompts are waiting to be sent until [`Tracker::backlog_done`].
    pub(crate) fn new(cap: usize, backlog: bool) -> Tracker {
        Tracker::with_clock(cap, backlog, Clock::Monotonic)
    }

    /// [`Tracker::new`] reading the time from `clock`.
    pub(crate) fn with_clock(cap: usize, backlog: bool, clock: Clock) -> Tracker {
        Tracker {
            origin: Instant::now(),
            clock,
            cap: cap as u64,
            state: AtomicU64::new(if backlog { BACKLOG } else { 0 }),
            peak: AtomicU64::new(0),
            requests: AtomicU64::new(0),
            busy_ns: AtomicU64::new(0),
            backlog_busy_ns: AtomicU64::new(0),
            entered_ns: AtomicU64::new(0),
            left_ns: AtomicU64::new(0),
            first_ns: AtomicU64::new(0),
            backlog_end_ns: AtomicU64::new(0),
            last_end_ns: AtomicU64::new(0),
        }
    }

    fn now_ns(&self) -> u64 {
        match &self.clock {
            Clock::Monotonic => u64::try_from(self.origin.elapsed().as_nanos()).unwrap_or(u64::MAX),
            #[cfg(test)]
            Clock::Manual(ns) => ns.load(Ordering::Relaxed),
        }
    }

    fn saturated(&self, state: u64) -> bool {
        self.cap > 0 && state & BACKLOG != 0 && state & COUNT == self.cap
    }

    /// A request goes out; it is in flight until the returned guard drops.
    pub(crate) fn begin(&self) -> Flight<'_> {
        let t = self.now_ns();
        let before = self.state.fetch_add(1, Ordering::AcqRel);
        let after = before + 1;
        if before & BACKLOG != 0 {
            self.backlog_busy_ns.fetch_sub(t, Ordering::Relaxed);
        }
        if !self.saturated(before) && self.saturated(after) {
            self.entered_ns.fetch_add(t, Ordering::Relaxed);
        }
        self.peak.fetch_max(after & COUNT, Ordering::Relaxed);
        if self.requests.fetch_add(1, Ordering::Relaxed) == 0 {
            self.first_ns.store(t, Ordering::Relaxed);
        }
        Flight {
            tracker: self,
            started_ns: t,
        }
    }

    fn end(&self, started_ns: u64) {
        let t = self.now_ns();
        let before = self.state.fetch_sub(1, Ordering::AcqRel);
        if before & BACKLOG != 0 {
            self.backlog_busy_ns.fetch_add(t, Ordering::Relaxed);
        }
        if self.saturated(before) && !self.saturated(before - 1) {
            self.left_ns.fetch_add(t, Ordering::Relaxed);
        }
        self.busy_ns
            .fetch_add(t.saturating_sub(started_ns), Ordering::Relaxed);
        self.last_end_ns.fetch_max(t, Ordering::Relaxed);
    }

    /// Every prompt has been handed to a request (or the sender stopped): no prompt waits any more.
    pub(crate) fn backlog_done(&self) {
        let t = self.now_ns();
        let before = self.state.fetch_and(!BACKLOG, Ordering::AcqRel);
        if before & BACKLOG == 0 {
            return;
        }
        self.backlog_busy_ns
            .fetch_add((before & COUNT).wrapping_mul(t), Ordering::Relaxed);
        if self.saturated(before) {
            self.left_ns.fetch_add(t, Ordering::Relaxed);
        }
        self.backlog_end_ns.store(t, Ordering::Relaxed);
    }

    /// When the first request began and when the backlog closed (every prompt handed to a request): the span of a
    /// call that [`crate::Client`] joins with its other calls' into a stage's (see `InFlight::stage_span_s`).
    pub(crate) fn span(&self) -> (Instant, Instant) {
        let at = |ns: &AtomicU64| {
            self.origin + std::time::Duration::from_nanos(ns.load(Ordering::Relaxed))
        };
        (at(&self.first_ns), at(&self.backlog_end_ns))
    }

    /// The counts of a call that started at `call_started` (this tracker started when its sending did) and returns
    /// now, every request ended.
    pub(crate) fn finish(&self, call_started: Instant, budget_wait_s: f64) -> InFlight {
        let prepare_s = self
            .origin
            .saturating_duration_since(call_started)
            .as_secs_f64();
        self.finish_at(prepare_s, self.now_ns() as f64 / 1e9, budget_wait_s)
    }

    /// [`Tracker::finish`] with the time before this tracker started (`prepare_s`) and the time since it started
    /// (`done_s`) given.
    fn finish_at(&self, prepare_s: f64, done_s: f64, budget_wait_s: f64) -> InFlight {
        self.backlog_done();
        let s = |ns: u64| ns as f64 / 1e9;
        // A wrapping sum read as signed: the clocks of two threads can order an entry and an exit a few ns apart
        // the wrong way, which must not turn a total near 0 into 2^64 ns.
        let signed = |ns: u64| (ns as i64).max(0) as f64 / 1e9;
        let last_end = s(self.last_end_ns.load(Ordering::Relaxed));
        let wall_s = prepare_s + done_s;
        InFlight {
            calls: 1,
            requests: self.requests.load(Ordering::Relaxed),
            cap: self.cap as usize,
            peak: self.peak.load(Ordering::Relaxed) as usize,
            wall_s,
            busy_s: s(self.busy_ns.load(Ordering::Relaxed)),
            capacity_s: self.cap as f64 * wall_s,
            backlog_s: s(self.backlog_end_ns.load(Ordering::Relaxed)),
            backlog_busy_s: signed(self.backlog_busy_ns.load(Ordering::Relaxed)),
            backlog_capacity_s: self.cap as f64 * s(self.backlog_end_ns.load(Ordering::Relaxed)),
            stage_span_s: s(self
                .backlog_end_ns
                .load(Ordering::Relaxed)
                .saturating_sub(self.first_ns.load(Ordering::Relaxed))),
            stage_span_busy_s: signed(self.backlog_busy_ns.load(Ordering::Relaxed)),
            saturated_s: signed(
                self.left_ns
                    .load(Ordering::Relaxed)
                    .wrapping_sub(self.entered_ns.load(Ordering::Relaxed)),
            ),
            prepare_s,
            drain_s: (done_s - last_end).max(0.0),
            budget_wait_s,
        }
    }
}

/// One request in flight; it ends when this drops.
pub(crate) struct Flight<'a> {
    tracker: &'a Tracker,
    started_ns: u64,
}

impl Drop for Flight<'_> {
    fn drop(&mut self) {
        self.tracker.end(self.started_ns);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};

    use super::{Clock, Tracker};

    /// A tracker on a clock the test moves, and the function that moves it to `ms` milliseconds.
    fn manual(cap: usize, backlog: bool) -> (Tracker, impl Fn(u64)) {
        let ns = Arc::new(AtomicU64::new(0));
        let t = Tracker::with_clock(cap, backlog, Clock::Manual(Arc::clone(&ns)));
        (t, move |ms: u64| {
            ns.store(ms * 1_000_000, Ordering::Relaxed)
        })
    }

    #[test]
    fn saturation_counts_only_while_prompts_wait_and_the_cap_is_full() {
        let (t, at) = manual(2, true);
        let a = t.begin();
        let b = t.begin();
        at(20);
        drop(a);
        let c = t.begin();
        at(40);
        t.backlog_done();
        at(60);
        drop(b);
        drop(c);
        let f = t.finish(t.origin, 0.0);
        assert_eq!((f.requests, f.peak, f.cap), (3, 2, 2));
        let ms = |x: f64| (x * 1e3 * 1e6).round() / 1e6;
        // Saturated from the second request to the first's end (0–20 ms), and from the third's start to the
        // backlog's end (20–40 ms).
        assert_eq!(ms(f.saturated_s), 40.0, "{f:?}");
        assert_eq!((ms(f.backlog_s), ms(f.wall_s)), (40.0, 60.0), "{f:?}");
        // While prompts waited, two in flight all along: a (0–20), b (0–40), c (20–40).
        assert_eq!(ms(f.backlog_busy_s), 80.0, "{f:?}");
        assert!(
            (f.backlog_mean() - 2.0).abs() < 1e-12 && (f.backlog_fill() - 1.0).abs() < 1e-12,
            "{f:?}"
        );
        // a for 20 ms, b for 60, c for 40; the last ended when the call returned.
        assert_eq!((ms(f.busy_s), ms(f.drain_s)), (120.0, 0.0), "{f:?}");
        assert_eq!(ms(f.stage_span_s), 40.0, "{f:?}");
    }

    #[test]
    fn a_tracker_without_backlog_is_never_saturated() {
        let t = Tracker::new(1, false);
        drop(t.begin());
        let f = t.finish_at(0.5, 1.0, 0.0);
        assert_eq!((f.requests, f.peak), (1, 1));
        assert_eq!((f.saturated_s, f.backlog_s), (0.0, 0.0));
        assert!((f.wall_s - 1.5).abs() < 1e-12);
    }
}
