//! A small OpenAI-compatible mock provider on 127.0.0.1 with fault injection, for tests, benchmarks and fault runs.
//!
//! It serves `POST …/chat/completions`, `POST …/embeddings`, the Batch API's endpoints and `GET /stats` over
//! hyper's HTTP/1.1 server (keep-alive, chunked bodies, request bodies up to `MockConfig::max_body_bytes`, larger ones
//! get a 413) on a single-threaded tokio runtime in a thread of its own; it parses no HTTP itself. Each request either
//! gets a fault or a deterministic answer: the content is `"Reply to: "` followed by the last message's content,
//! so any two runs give the same content per prompt. Markers in the last message change the answer: `[think]`
//! wraps reasoning in `<think>` tags, `[reasoning]` adds a `reasoning_content` field, `[length]` ends with
//! `finish_reason = "length"`, `[cost]` adds `usage.cost`; `logprobs: true` in the request adds two token
//! log-probs (-0.5 and -1.5).
//!
//! `MockConfig::replies` scripts the content instead: a request whose last message contains a marker gets that
//! marker's contents in order (the last one repeats), so a test can make a second attempt answer differently.
//!
//! `MockConfig::responder` is the mock's extension point: a function of (model id, last message) that returns the
//! content (or `None` for the default), for callers that compute realistic replies (the paper-scale rehearsal,
//! `cargo xtask bench pipeline`, answers RIFT lists and IFScale reports this way without this crate knowing either).
//!
//! A request with `stream: true` gets the same answer as server-sent events (see the `stream` module), paced by
//! `MockConfig::chunk_delay` and `MockConfig::keep_alive`; every fault and emulation works in both modes.
//!
//! Faults come from a script (the first requests, in order) and then at random with `fault_rate`, drawn from
//! a seeded generator; an `Unauthorized` fault echoes the request's `Authorization` header back, as careless
//! providers do, so tests can check that the client redacts it.
//!
//! Some model ids emulate real providers' own behaviour (o-series, vLLM thinking, OpenRouter errors, out of
//! credits, short context, `retry-after-ms`, a stalled body, an alias, a content filter that refuses on words, a
//! thinking model that spends its whole budget on reasoning): see the `emulate` module.
//!
//! The OpenAI Batch API's endpoints (upload, create, poll, download) answer batch lines the same way, with
//! markers for failed lines and `MockConfig::batch_end` for batches that end badly: see the `batch` module.
//!
//! [`files::FileServer`] is a plain stand-in for a web server of fixed files (the EDGAR stand-in of the
//! vocabulary pipeline's tests), recording each request.
//!
//! This crate depends on no other crate of the workspace: the clients it is used against (the inference client,
//! the harness, the vocabulary pipeline, xtask and the benchmarks) depend on it, in their tests or, for
//! `cargo xtask bench`, in the benchmarks' code.
//!
//! The faults (`Fault`): 429 (`Retry-After` in seconds or as a date), 500, 503, 408, 409, a reset, a hang, a body that
//! is not JSON, empty choices, a truncated body, 400, 401, 403, 404, and `Silent` (the answer starts, then stops; never
//! drawn at random). `fetch_stats` reads the counters of a mock in another process through `GET /stats`.

mod answer;
mod batch;
mod emulate;
pub mod files;
mod http;
mod serve;
mod stream;

use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

pub use batch::{BatchEnd, BatchStats};

/// The default of [`MockConfig::max_body_bytes`].
pub const MAX_BODY_BYTES: usize = 512 * 1024 * 1024;

/// One kind of injected fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fault {
    /// 429 with `Retry-After` in seconds (the value of `MockConfig::retry_after_s`).
    RateLimited,
    /// 429 with `Retry-After` as an HTTP date `retry_after_s` from now (rounded up to whole seconds).
    RateLimitedDate,
    /// 503.
    Unavailable,
    /// 500.
    ServerError,
    /// 408.
    RequestTimeout,
    /// 409.
    Conflict,
    /// The connection is closed without a response.
    Reset,
    /// No response for `hang`, then the connection is closed (the client times out first).
    Hang,
    /// 200 with a body that is not JSON.
    InvalidJson,
    /// 200 with `"choices": []`.
    EmptyChoices,
    /// 200 whose body stops halfway (the connection closes before `Content-Length` bytes).
    TruncatedBody,
    /// 400.
    BadRequest,
    /// 401 echoing the `Authorization` header.
    Unauthorized,
    /// 403.
    Forbidden,
    /// 404.
    NotFound,
    /// The answer begins and then goes silent for `hang` (a stream stops after half its events; a whole reply
    /// sends its headers and no body), then the connection is closed. Not among the random faults.
    Silent,
}

impl Fault {
    /// Every fault a client should retry.
    pub const RETRYABLE: [Fault; 11] = [
        Fault::RateLimited,
        Fault::RateLimitedDate,
        Fault::Unavailable,
        Fault::ServerError,
        Fault::RequestTimeout,
        Fault::Conflict,
        Fault::Reset,
        Fault::Hang,
        Fault::InvalidJson,
        Fault::EmptyChoices,
        Fault::TruncatedBody,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Fault::RateLimited => "rate_limited",
            Fault::RateLimitedDate => "rate_limited_date",
            Fault::Unavailable => "unavailable",
            Fault::ServerError => "server_error",
            Fault::RequestTimeout => "request_timeout",
            Fault::Conflict => "conflict",
            Fault::Reset => "reset",
            Fault::Hang => "hang",
            Fault::InvalidJson => "invalid_json",
            Fault::EmptyChoices => "empty_choices",
            Fault::TruncatedBody => "truncated_body",
            Fault::BadRequest => "bad_request",
            Fault::Unauthorized => "unauthorized",
            Fault::Forbidden => "forbidden",
            Fault::NotFound => "not_found",
            Fault::Silent => "silent",
        }
    }

    /// Parses a name as written by `name`.
    pub fn from_name(s: &str) -> Option<Fault> {
        Fault::RETRYABLE
            .iter()
            .chain(
                [
                    Fault::BadRequest,
                    Fault::Unauthorized,
                    Fault::Forbidden,
                    Fault::NotFound,
                    Fault::Silent,
                ]
                .iter(),
            )
            .copied()
            .find(|f| f.name() == s)
    }
}

/// How the mock behaves.
#[derive(Debug, Clone)]
pub struct MockConfig {
    /// Delay before every response (and before a fault).
    pub latency: Duration,
    /// Faults for the first requests, in arrival order.
    pub script: Vec<Fault>,
    /// Probability of a random fault for each request after the script.
    pub fault_rate: f64,
    /// The faults random injection draws from (uniformly).
    pub faults: Vec<Fault>,
    pub seed: u64,
    /// `Retry-After` seconds sent with 429s.
    pub retry_after_s: u64,
    /// How long a `Hang` fault stalls.
    pub hang: Duration,
    /// How batch jobs end (`/v1/batches`; see the `batch` module).
    pub batch_end: BatchEnd,
    /// Scripted contents: (marker, contents). The n-th answered request whose last message contains the marker
    /// (the first marker that matches) gets the n-th content, the last one once they run out.
    pub replies: Vec<(String, Vec<String>)>,
    /// Computes the content of a completion from (model id, last message); `None` falls back to the scripted
    /// replies and the default. Called on the mock's thread, so it should be quick.
    pub responder: Option<Responder>,
    /// Streamed replies: characters of content (and of reasoning) per event.
    pub chunk_chars: usize,
    /// Streamed replies: the wait between two events (a slow generation).
    pub chunk_delay: Duration,
    /// Streamed replies: send a keep-alive comment at this interval while the answer is waited for (the
    /// `latency`, and any `chunk_delay` longer than it).
    pub keep_alive: Option<Duration>,
    /// The longest request body read (a Batch API upload included); a longer one gets a 413.
    pub max_body_bytes: usize,
}

/// A reply function for [`MockConfig::responder`].
#[derive(Clone)]
pub struct Responder(pub Arc<ReplyFn>);

/// (model id, last message) → content, or `None` for the mock's default.
pub type ReplyFn = dyn Fn(&str, &str) -> Option<String> + Send + Sync;

impl std::fmt::Debug for Responder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Responder(..)")
    }
}

impl MockConfig {
    /// No latency, no faults.
    pub fn new() -> MockConfig {
        MockConfig {
            latency: Duration::ZERO,
            script: Vec::new(),
            fault_rate: 0.0,
            faults: Fault::RETRYABLE.to_vec(),
            seed: 1,
            retry_after_s: 1,
            hang: Duration::from_secs(5),
            replies: Vec::new(),
            batch_end: BatchEnd::Completed,
            responder: None,
            chunk_chars: 16,
            chunk_delay: Duration::ZERO,
            keep_alive: None,
            max_body_bytes: MAX_BODY_BYTES,
        }
    }
}

impl Default for MockConfig {
    fn default() -> MockConfig {
        MockConfig::new()
    }
}

/// Counters the mock keeps.
#[derive(Debug, Default)]
struct Stats {
    requests: AtomicU64,
    ok: AtomicU64,
    faults: AtomicU64,
    ok_us: AtomicU64,
}

/// A snapshot of the mock's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MockStats {
    /// Chat-completion requests received.
    pub requests: u64,
    /// Requests answered with a completion.
    pub ok: u64,
    /// Requests answered with a fault.
    pub faults: u64,
    /// Microseconds spent on the requests answered with a completion (not emulated), summed: from the request
    /// read to its reply handed to the HTTP layer (a streamed reply: to its last event), so the latency, building
    /// the reply and waiting for the thread. Over `ok` requests, the mock's own time per answer, to compare with
    /// the time the client saw them in flight.
    pub ok_us: u64,
}

struct Shared {
    cfg: MockConfig,
    stats: Stats,
    script: Mutex<VecDeque<Fault>>,
    rng: Mutex<u64>,
    /// Requests answered so far per scripted marker.
    replied: Mutex<Vec<usize>>,
    emu: emulate::EmuState,
    batches: batch::BatchState,
}

/// A running mock; stops when dropped.
pub struct MockServer {
    server: http::Running,
    shared: Arc<Shared>,
}

impl MockServer {
    /// Starts the mock on 127.0.0.1 (`port` 0 picks a free port) in its own thread with a single-threaded runtime.
    pub fn start(cfg: MockConfig, port: u16) -> io::Result<MockServer> {
        let shared = Arc::new(Shared {
            script: Mutex::new(cfg.script.iter().copied().collect()),
            rng: Mutex::new(cfg.seed),
            replied: Mutex::new(vec![0; cfg.replies.len()]),
            cfg,
            stats: Stats::default(),
            emu: emulate::EmuState::default(),
            batches: batch::BatchState::default(),
        });
        let sh = Arc::clone(&shared);
        let server = http::serve(port, "ifstress-mock", move |req| {
            serve::handle(req, Arc::clone(&sh))
        })?;
        Ok(MockServer { server, shared })
    }

    /// e.g. `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.server.addr())
    }

    pub fn addr(&self) -> SocketAddr {
        self.server.addr()
    }

    pub fn stats(&self) -> MockStats {
        snapshot(&self.shared.stats)
    }

    /// What the batch endpoints did so far.
    pub fn batch_stats(&self) -> BatchStats {
        self.shared.batches.stats()
    }

    /// Chat-completion requests received so far.
    pub fn requests(&self) -> u64 {
        self.shared.stats.requests.load(Ordering::Relaxed)
    }

    /// Stops accepting connections, closes every connection (as a server process that dies does), waits for
    /// the server thread, and returns the final counters.
    pub fn stop(mut self) -> MockStats {
        self.server.stop();
        self.stats()
    }
}

fn snapshot(s: &Stats) -> MockStats {
    MockStats {
        requests: s.requests.load(Ordering::Relaxed),
        ok: s.ok.load(Ordering::Relaxed),
        faults: s.faults.load(Ordering::Relaxed),
        ok_us: s.ok_us.load(Ordering::Relaxed),
    }
}

/// Reads the counters of a mock running elsewhere (another process) through `GET /stats`.
pub fn fetch_stats(addr: SocketAddr) -> io::Result<MockStats> {
    let url = format!("http://{addr}/stats");
    let v: Value = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .and_then(|c| c.get(&url).send())
        .and_then(reqwest::blocking::Response::error_for_status)
        .and_then(reqwest::blocking::Response::json)
        .map_err(|e| io::Error::other(format!("{url}: {e}")))?;
    let n = |k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
    Ok(MockStats {
        requests: n("requests"),
        ok: n("ok"),
        faults: n("faults"),
        ok_us: n("ok_us"),
    })
}
