//! Stopping a run without losing what is paid for: a [`StopHandle`] owned by the [`crate::Client`].
//!
//! Once [`StopHandle::stop_sending`] is called (a command does it on the first SIGINT or SIGTERM), no new request
//! is sent: the dispatch loop takes no further prompt, a request waiting for a retry makes no further attempt, and
//! the requests in flight are waited for up to the client's drain bound (`RunOptions::drain`), their answers
//! written to the output and the cache as usual. Prompts not sent (or abandoned after the bound) count as
//! unfinished, like prompts not sent because of the cost limit, so a rerun sends them.
//!
//! Its timers read tokio's clock, so a test on paused time drives them.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::sync::Notify;

/// A cheap, cloneable handle on a client's stop flag; usable from any thread (e.g. a signal handler's).
#[derive(Clone, Default)]
pub struct StopHandle(Arc<State>);

#[derive(Default)]
struct State {
    stopping: AtomicBool,
    /// When sending was stopped (tokio's clock: the real one, or a test's paused one).
    at: OnceLock<tokio::time::Instant>,
    notify: Notify,
    /// Prompts whose request is in flight (including those between two attempts).
    in_flight: AtomicUsize,
}

impl std::fmt::Debug for StopHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StopHandle")
            .field("stopping", &self.is_stopping())
            .field("in_flight", &self.in_flight())
            .finish()
    }
}

impl StopHandle {
    /// Stops sending new requests (idempotent); returns how many requests are in flight now.
    pub fn stop_sending(&self) -> usize {
        if !self.0.stopping.swap(true, Ordering::SeqCst) {
            let _ = self.0.at.set(tokio::time::Instant::now());
            self.0.notify.notify_waiters();
        }
        self.in_flight()
    }

    /// Whether [`StopHandle::stop_sending`] was called.
    pub fn is_stopping(&self) -> bool {
        self.0.stopping.load(Ordering::SeqCst)
    }

    /// Requests in flight now, over every call of the client.
    pub fn in_flight(&self) -> usize {
        self.0.in_flight.load(Ordering::SeqCst)
    }

    /// Resolves once sending is stopped.
    pub(crate) async fn stopped(&self) {
        loop {
            let notified = self.0.notify.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            if self.is_stopping() {
                return;
            }
            notified.await;
        }
    }

    /// Resolves `drain` after sending was stopped.
    pub(crate) async fn drained(&self, drain: Duration) {
        self.stopped().await;
        let at = self
            .0
            .at
            .get()
            .copied()
            .unwrap_or_else(tokio::time::Instant::now);
        tokio::time::sleep_until(at + drain).await;
    }

    /// Sleeps for `d`, or less when sending is stopped meanwhile; returns whether it slept the whole time.
    pub(crate) async fn sleep(&self, d: Duration) -> bool {
        tokio::select! {
            () = tokio::time::sleep(d) => true,
            () = self.stopped() => false,
        }
    }

    /// Counts one request in flight until the guard drops.
    pub(crate) fn begin(&self) -> InFlightGuard {
        self.0.in_flight.fetch_add(1, Ordering::SeqCst);
        InFlightGuard(self.clone())
    }
}

/// One request in flight (see [`StopHandle::begin`]).
pub(crate) struct InFlightGuard(StopHandle);

impl Drop for InFlightGuard {
    fn drop(&mut self) {
        (self.0).0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stopping_is_idempotent_and_counts_what_is_in_flight() {
        let s = StopHandle::default();
        let g = s.begin();
        let _h = s.begin();
        drop(g);
        assert!(!s.is_stopping());
        assert_eq!(s.stop_sending(), 1);
        assert_eq!(s.stop_sending(), 1);
        assert!(s.is_stopping());
    }

    /// The drain bound on tokio's paused clock: it ends exactly `drain` after the stop, however late it is awaited.
    #[tokio::test(start_paused = true)]
    async fn the_drain_ends_exactly_its_bound_after_the_stop() {
        let s = StopHandle::default();
        let t0 = tokio::time::Instant::now();
        let drained = {
            let s = s.clone();
            tokio::spawn(async move { s.drained(Duration::from_secs(120)).await })
        };
        tokio::time::sleep(Duration::from_secs(5)).await;
        assert!(!drained.is_finished());
        s.stop_sending();
        tokio::time::sleep(Duration::from_secs(30)).await;
        // Awaited 30 s after the stop: it still ends 120 s after the stop.
        let late = s.drained(Duration::from_secs(120));
        drained.await.unwrap();
        assert_eq!(t0.elapsed(), Duration::from_secs(125));
        late.await;
        assert_eq!(t0.elapsed(), Duration::from_secs(125));
    }

    #[tokio::test(start_paused = true)]
    async fn a_sleep_ends_early_when_sending_is_stopped() {
        let s = StopHandle::default();
        let t0 = tokio::time::Instant::now();
        assert!(s.sleep(Duration::from_secs(3)).await);
        assert_eq!(t0.elapsed(), Duration::from_secs(3));
        let stopper = {
            let s = s.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_secs(2)).await;
                s.stop_sending();
            })
        };
        assert!(!s.sleep(Duration::from_secs(600)).await);
        assert_eq!(t0.elapsed(), Duration::from_secs(5));
        stopper.await.unwrap();
    }
}
