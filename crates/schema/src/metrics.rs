//! Per-stage measurements of a pipeline run (`cargo xtask pipeline --stage-metrics <file>`), one JSON line per
//! stage; `cargo xtask bench pipeline` reads them into its table. [`InFlight`] is the inference client's count of
//! requests in flight over its calls (`inference_client::RunSummary::in_flight`), summed per stage.
//!
//! `InFlight` gives the mean and peak in flight against the cap, the time with prompts waiting and with the cap full,
//! and (`stage_span_s`) the whole stage while prompts remained, the time between calls included. Its times are
//! additive, so the calls of a stage sum.

use serde::{Deserialize, Serialize};

/// One measured stage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageMetric {
    pub stage: String,
    /// False when the stage was up to date and skipped.
    pub ran: bool,
    pub wall_s: f64,
    /// User + system CPU seconds of the process and its children during the stage.
    pub cpu_s: f64,
    /// Peak resident memory during the stage, MiB (None where it cannot be measured).
    #[serde(default)]
    pub peak_rss_mib: Option<f64>,
    /// Lines written to JSONL/CSV files (the appended lines of a file that grew in place).
    pub rows: u64,
    /// Bytes written (the growth of a file appended in place; the whole size of a file written anew).
    pub bytes: u64,
    /// Files written.
    pub files: usize,
    /// Requests in flight during the stage's client calls that sent requests (None: it sent none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_flight: Option<InFlight>,
}

/// Requests in flight over one or more client calls that sent requests one by one (not as batch jobs).
///
/// A request is in flight from the moment its POST starts until the last byte of its reply (or its failure) is
/// read; retries count once per attempt, and the back-off between attempts is not in flight. The times are
/// additive, so the calls of a stage sum into one value ([`InFlight::add`]); the shares divide by [`InFlight::wall_s`],
/// the calls' own wall time (preparing, sending and draining), not the stage's.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InFlight {
    /// Client calls summed here.
    pub calls: u32,
    /// HTTP attempts made (retries included).
    pub requests: u64,
    /// Most requests allowed in flight: the concurrency times the model's base URLs (the largest over the calls).
    pub cap: usize,
    /// Most requests seen in flight at once.
    pub peak: usize,
    /// The calls' wall time, from the call to its return: [`InFlight::prepare_s`], sending and
    /// [`InFlight::drain_s`].
    pub wall_s: f64,
    /// Requests in flight integrated over time (request-seconds); over `wall_s` it is the time-weighted mean.
    pub busy_s: f64,
    /// `cap` integrated over the calls' wall time (the request-seconds the cap allowed).
    pub capacity_s: f64,
    /// Time during which prompts were waiting to be sent (prepared, not yet handed to a request).
    pub backlog_s: f64,
    /// Requests in flight integrated over `backlog_s` (request-seconds); over `backlog_s` it is the mean in flight
    /// while prompts waited.
    pub backlog_busy_s: f64,
    /// `cap` integrated over `backlog_s`.
    pub backlog_capacity_s: f64,
    /// Of `backlog_s`, the time with `cap` requests in flight: the client kept the concurrency full.
    pub saturated_s: f64,
    /// The whole stage while prompts remained to be sent: from the first call's first request until the last
    /// call had handed out its last prompt, the time between calls included (the harness's bookkeeping between
    /// chunks, with nothing sent). For one call it is `backlog_s` from its first request on; `Client::take_in_flight`
    /// joins its calls'.
    #[serde(default)]
    pub stage_span_s: f64,
    /// Requests in flight integrated over `stage_span_s` (request-seconds).
    #[serde(default)]
    pub stage_span_busy_s: f64,
    /// Time before the first request could go out: reading the output file for resume, cache look-ups, building
    /// request bodies.
    pub prepare_s: f64,
    /// Time after the last reply until the call returned: the writer catching up (cache and output lines), and
    /// the output's compaction after failures.
    pub drain_s: f64,
    /// Time the sender waited for in-flight requests to settle their cost before the next fit under the cost limit.
    pub budget_wait_s: f64,
}

impl InFlight {
    /// Adds another call's (or stage's) counts to these.
    pub fn add(&mut self, o: &InFlight) {
        self.calls += o.calls;
        self.requests += o.requests;
        self.cap = self.cap.max(o.cap);
        self.peak = self.peak.max(o.peak);
        self.wall_s += o.wall_s;
        self.busy_s += o.busy_s;
        self.capacity_s += o.capacity_s;
        self.backlog_s += o.backlog_s;
        self.backlog_busy_s += o.backlog_busy_s;
        self.backlog_capacity_s += o.backlog_capacity_s;
        self.saturated_s += o.saturated_s;
        self.stage_span_s += o.stage_span_s;
        self.stage_span_busy_s += o.stage_span_busy_s;
        self.prepare_s += o.prepare_s;
        self.drain_s += o.drain_s;
        self.budget_wait_s += o.budget_wait_s;
    }

    /// Time-weighted mean of the requests in flight over the calls' wall time.
    pub fn mean(&self) -> f64 {
        ratio(self.busy_s, self.wall_s)
    }

    /// Mean time a request was in flight (its latency as the client saw it), seconds.
    pub fn mean_latency_s(&self) -> f64 {
        ratio(self.busy_s, self.requests as f64)
    }

    /// The mean in flight as a share of the cap (1: the cap was full all the time).
    pub fn fill(&self) -> f64 {
        ratio(self.busy_s, self.capacity_s)
    }

    /// Time-weighted mean of the requests in flight while prompts waited to be sent.
    pub fn backlog_mean(&self) -> f64 {
        ratio(self.backlog_busy_s, self.backlog_s)
    }

    /// The mean in flight while prompts waited as a share of the cap (1: whenever prompts waited, the cap was full).
    pub fn backlog_fill(&self) -> f64 {
        ratio(self.backlog_busy_s, self.backlog_capacity_s)
    }

    /// The mean in flight over the whole stage while prompts remained to be sent, as a share of the cap
    /// (`stage_span_busy_s / (cap × stage_span_s)`): unlike [`InFlight::backlog_fill`], the time between client
    /// calls counts, with nothing in flight.
    pub fn stage_fill(&self) -> f64 {
        ratio(self.stage_span_busy_s, self.cap as f64 * self.stage_span_s)
    }

    /// Share of the calls' wall time with prompts waiting and `cap` requests in flight.
    pub fn saturated_share(&self) -> f64 {
        ratio(self.saturated_s, self.wall_s)
    }

    /// Share of the calls' wall time with prompts waiting to be sent.
    pub fn backlog_share(&self) -> f64 {
        ratio(self.backlog_s, self.wall_s)
    }

    /// Share of the calls' wall time with prompts waiting but fewer than `cap` requests in flight: the sender
    /// itself, the adaptive limit after 429/503s, retry back-offs or the cost limit held requests back.
    pub fn unsaturated_backlog_share(&self) -> f64 {
        ratio((self.backlog_s - self.saturated_s).max(0.0), self.wall_s)
    }

    /// Share of the calls' wall time spent waiting on something other than the server: preparing the prompts,
    /// draining the writer, waiting for the cost limit.
    pub fn other_wait_share(&self) -> f64 {
        ratio(
            self.prepare_s + self.drain_s + self.budget_wait_s,
            self.wall_s,
        )
    }
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 { a / b } else { 0.0 }
}

#[cfg(test)]
mod tests {
    use super::InFlight;

    #[test]
    fn in_flight_adds_up_and_divides_by_the_calls_wall_time() {
        let mut a = InFlight {
            calls: 1,
            requests: 10,
            cap: 4,
            peak: 4,
            wall_s: 2.0,
            busy_s: 6.0,
            capacity_s: 8.0,
            backlog_s: 1.5,
            backlog_busy_s: 5.5,
            backlog_capacity_s: 6.0,
            saturated_s: 1.0,
            stage_span_s: 2.0,
            stage_span_busy_s: 6.0,
            prepare_s: 0.2,
            drain_s: 0.2,
            budget_wait_s: 0.0,
        };
        let b = InFlight {
            calls: 1,
            requests: 2,
            cap: 8,
            peak: 2,
            wall_s: 2.0,
            busy_s: 2.0,
            capacity_s: 16.0,
            backlog_s: 0.0,
            backlog_busy_s: 0.0,
            backlog_capacity_s: 0.0,
            saturated_s: 0.0,
            stage_span_s: 0.0,
            stage_span_busy_s: 0.0,
            prepare_s: 0.1,
            drain_s: 0.1,
            budget_wait_s: 0.4,
        };
        a.add(&b);
        assert_eq!((a.calls, a.requests, a.cap, a.peak), (2, 12, 8, 4));
        assert!((a.mean() - 2.0).abs() < 1e-12);
        assert!((a.mean_latency_s() - 8.0 / 12.0).abs() < 1e-12);
        assert!((a.fill() - 8.0 / 24.0).abs() < 1e-12);
        assert!((a.saturated_share() - 0.25).abs() < 1e-12);
        assert!((a.backlog_mean() - 5.5 / 1.5).abs() < 1e-12);
        assert!((a.backlog_fill() - 5.5 / 6.0).abs() < 1e-12);
        assert!((a.stage_fill() - 6.0 / 16.0).abs() < 1e-12);
        assert!((a.backlog_share() - 0.375).abs() < 1e-12);
        assert!((a.unsaturated_backlog_share() - 0.125).abs() < 1e-12);
        assert!((a.other_wait_share() - 0.25).abs() < 1e-12);
        assert_eq!(InFlight::default().mean(), 0.0);
    }
}
