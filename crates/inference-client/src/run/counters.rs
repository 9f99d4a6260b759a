//! What one call's sending did, counted by its requests as they finish, and copied into its [`RunSummary`].

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crate::Error;
use crate::in_flight::Tracker;

use super::RunSummary;

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
    pub(super) bad_requests: Mutex<HashMap<String, u32>>,
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
