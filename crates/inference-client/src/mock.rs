//! A small OpenAI-compatible mock server on 127.0.0.1 with fault injection, for tests, benchmarks and fault runs.
//!
//! It speaks just enough HTTP/1.1 (keep-alive, `Content-Length` bodies) to serve `POST …/chat/completions`,
//! `POST …/embeddings` and `GET /stats`. Each request either gets a fault or a deterministic answer: the content is
//! `"Reply to: "` followed by the last message's content, so any two runs give the same content per prompt.
//! Markers in the last message change the answer: `[think]` wraps reasoning in `<think>` tags, `[reasoning]`
//! adds a `reasoning_content` field, `[length]` ends with `finish_reason = "length"`, `[cost]` adds `usage.cost`;
//! `logprobs: true` in the request adds two token log-probs (-0.5 and -1.5).
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
//! credits, short context, `retry-after-ms`, a stalled body, an alias): see the `emulate` module.
//!
//! The OpenAI Batch API's endpoints (upload, create, poll, download) answer batch lines the same way, with
//! markers for failed lines and `MockConfig::batch_end` for batches that end badly: see the `batch` module.

mod batch;
mod emulate;
mod stream;

use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

pub use batch::{BatchEnd, BatchStats};

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
    /// read to its reply written (the latency, building the reply, and waiting for a thread). Over `ok` requests,
    /// the mock's own time per answer, to compare with the time the client saw them in flight.
    pub ok_us: u64,
}

struct Shared {
    cfg: MockConfig,
    stats: Stats,
    script: Mutex<VecDeque<Fault>>,
    rng: Mutex<u64>,
    /// Requests answered so far per scripted marker.
    replied: Mutex<Vec<usize>>,
    stop: AtomicBool,
    emu: emulate::EmuState,
    batches: batch::BatchState,
}

/// A running mock; stops when dropped.
pub struct MockServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl MockServer {
    /// Starts the mock on 127.0.0.1 (`port` 0 picks a free port) in its own thread with a single-threaded runtime.
    pub fn start(cfg: MockConfig, port: u16) -> io::Result<MockServer> {
        let std_listener = std::net::TcpListener::bind(("127.0.0.1", port))?;
        std_listener.set_nonblocking(true)?;
        let addr = std_listener.local_addr()?;
        let shared = Arc::new(Shared {
            script: Mutex::new(cfg.script.iter().copied().collect()),
            rng: Mutex::new(cfg.seed),
            replied: Mutex::new(vec![0; cfg.replies.len()]),
            cfg,
            stats: Stats::default(),
            stop: AtomicBool::new(false),
            emu: emulate::EmuState::default(),
            batches: batch::BatchState::default(),
        });
        let sh = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("ifstress-mock".into())
            .spawn(move || {
                let rt = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        tracing::error!(error = %e, "Mock server: cannot start a runtime.");
                        return;
                    }
                };
                rt.block_on(async move {
                    let Ok(listener) = TcpListener::from_std(std_listener) else {
                        return;
                    };
                    loop {
                        if sh.stop.load(Ordering::Relaxed) {
                            break;
                        }
                        let accepted =
                            tokio::time::timeout(Duration::from_millis(50), listener.accept())
                                .await;
                        if let Ok(Ok((sock, _))) = accepted {
                            let _ = sock.set_nodelay(true);
                            tokio::spawn(serve_conn(sock, Arc::clone(&sh)));
                        }
                    }
                });
            })?;
        Ok(MockServer {
            addr,
            shared,
            thread: Some(thread),
        })
    }

    /// e.g. `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
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
        self.shutdown();
        self.stats()
    }

    fn shutdown(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.shutdown();
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
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr)?;
    s.write_all(b"GET /stats HTTP/1.1\r\nHost: mock\r\nConnection: close\r\n\r\n")?;
    let mut text = String::new();
    s.read_to_string(&mut text)?;
    let body = text.split("\r\n\r\n").nth(1).unwrap_or("");
    let v: Value = serde_json::from_str(body).map_err(io::Error::other)?;
    let n = |k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
    Ok(MockStats {
        requests: n("requests"),
        ok: n("ok"),
        faults: n("faults"),
        ok_us: n("ok_us"),
    })
}

struct Request {
    method: String,
    path: String,
    auth: Option<String>,
    /// Every header, names in lower case.
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    close: bool,
}

async fn read_request(
    r: &mut BufReader<tokio::net::tcp::OwnedReadHalf>,
) -> io::Result<Option<Request>> {
    let mut line = String::new();
    if r.read_line(&mut line).await? == 0 {
        return Ok(None);
    }
    let method = line.split_whitespace().next().unwrap_or("GET").to_owned();
    let path = line.split_whitespace().nth(1).unwrap_or("/").to_owned();
    let mut len = 0usize;
    let mut auth = None;
    let mut close = false;
    let mut headers = Vec::new();
    loop {
        line.clear();
        if r.read_line(&mut line).await? == 0 {
            return Ok(None);
        }
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((name, value)) = l.split_once(':') {
            let value = value.trim();
            headers.push((name.trim().to_ascii_lowercase(), value.to_owned()));
            if name.eq_ignore_ascii_case("content-length") {
                len = value
                    .parse()
                    .map_err(|_| io::Error::other("bad content-length"))?;
            } else if name.eq_ignore_ascii_case("authorization") {
                auth = Some(value.to_owned());
            } else if name.eq_ignore_ascii_case("connection") && value.eq_ignore_ascii_case("close")
            {
                close = true;
            }
        }
    }
    let mut body = vec![0u8; len];
    r.read_exact(&mut body).await?;
    Ok(Some(Request {
        method,
        path,
        auth,
        headers,
        body,
        close,
    }))
}

async fn serve_conn(sock: TcpStream, sh: Arc<Shared>) {
    let (rd, mut wr) = sock.into_split();
    let mut rd = BufReader::new(rd);
    while let Ok(Some(req)) = read_request(&mut rd).await {
        if req.path == "/stats" {
            let s = snapshot(&sh.stats);
            let body =
                json!({"requests": s.requests, "ok": s.ok, "faults": s.faults, "ok_us": s.ok_us})
                    .to_string();
            let _ = write_response(&mut wr, 200, &[], body.as_bytes(), None).await;
            if req.close {
                return;
            }
            continue;
        }
        // The Batch API's endpoints take faults from the same script, then answer.
        let batch_api = batch::handles(&req.path);
        if batch_api && let Some(fault) = pick_fault(&sh) {
            if write_fault(&mut wr, fault, &req, &sh).await.is_err() || req.close {
                return;
            }
            continue;
        }
        if batch_api {
            let (status, body) = batch::route(&req.method, &req.path, &req, &sh);
            let res = write_response(&mut wr, status, &[], &body, None).await;
            if res.is_err() || req.close {
                return;
            }
            continue;
        }
        let embeddings = req.path.ends_with("/embeddings");
        if !embeddings && !req.path.ends_with("/chat/completions") {
            let _ = write_response(
                &mut wr,
                404,
                &[],
                br#"{"error":{"message":"no such route"}}"#,
                None,
            )
            .await;
            continue;
        }
        sh.stats.requests.fetch_add(1, Ordering::Relaxed);
        let started = std::time::Instant::now();
        let streamed = if embeddings {
            None
        } else {
            stream::requested(&req.body)
        };
        if let Some(e) =
            emulate::emulate(&req.body, &req.headers, &sh.emu, |last| scripted(last, &sh))
        {
            let res = match e {
                emulate::Emulated::Reply(200, _, body) if streamed.is_some() => {
                    sh.stats.ok.fetch_add(1, Ordering::Relaxed);
                    let usage = streamed.unwrap_or(false);
                    let events = stream::events(&body, sh.cfg.chunk_chars, usage);
                    stream::write(
                        &mut wr,
                        &events,
                        &pace(&sh, Duration::ZERO),
                        stream::End::Whole,
                    )
                    .await
                }
                emulate::Emulated::Reply(status, headers, body) => {
                    if status == 200 {
                        sh.stats.ok.fetch_add(1, Ordering::Relaxed);
                    } else {
                        sh.stats.faults.fetch_add(1, Ordering::Relaxed);
                    }
                    let headers: Vec<(&str, &str)> =
                        headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
                    write_response(&mut wr, status, &headers, body.as_bytes(), None).await
                }
                emulate::Emulated::Stall if streamed.is_some() => {
                    // The first event, then nothing; the client's idle timeout must end the wait.
                    let first =
                        stream::events(&completion(&req.body, &sh), sh.cfg.chunk_chars, false);
                    let _ = stream::write(
                        &mut wr,
                        &first[..1],
                        &pace(&sh, Duration::ZERO),
                        stream::End::Silent(sh.cfg.hang),
                    )
                    .await;
                    return;
                }
                emulate::Emulated::Stall => {
                    // Headers for a body that never comes; the client's idle timeout must end the wait.
                    let _ = write_response(&mut wr, 200, &[], b"", Some(100)).await;
                    tokio::time::sleep(sh.cfg.hang).await;
                    return;
                }
            };
            if res.is_err() || req.close {
                return;
            }
            continue;
        }
        let fault = pick_fault(&sh);
        // A streamed answer waits its latency after the headers (with keep-alive comments, if asked).
        let stream_ok = fault.is_none() && streamed.is_some();
        if !sh.cfg.latency.is_zero() && !stream_ok {
            tokio::time::sleep(sh.cfg.latency).await;
        }
        let Some(fault) = fault else {
            sh.stats.ok.fetch_add(1, Ordering::Relaxed);
            let body = if embeddings {
                embedding_reply(&req.body)
            } else {
                completion(&req.body, &sh)
            };
            let written = match streamed {
                Some(usage) => {
                    let events = stream::events(&body, sh.cfg.chunk_chars, usage);
                    let pace = pace(&sh, sh.cfg.latency);
                    stream::write(&mut wr, &events, &pace, stream::End::Whole).await
                }
                None => write_response(&mut wr, 200, &[], body.as_bytes(), None).await,
            };
            let us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
            sh.stats.ok_us.fetch_add(us, Ordering::Relaxed);
            if written.is_err() || req.close {
                return;
            }
            continue;
        };
        if write_fault(&mut wr, fault, &req, &sh).await.is_err() || req.close {
            return;
        }
    }
}

/// How streamed events are paced: `latency` before the first.
fn pace(sh: &Shared, latency: Duration) -> stream::Pace {
    stream::Pace {
        latency,
        delay: sh.cfg.chunk_delay,
        keep_alive: sh.cfg.keep_alive,
    }
}

/// A fault of a 200 answer, as a stream: the same body faults, sent as events.
async fn write_stream_fault(
    wr: &mut tokio::net::tcp::OwnedWriteHalf,
    fault: Fault,
    req: &Request,
    sh: &Shared,
    usage: bool,
) -> Option<io::Result<()>> {
    let (events, end) = match fault {
        Fault::InvalidJson => (
            vec!["{\"choices\": [ this is not json".to_owned()],
            stream::End::Whole,
        ),
        Fault::EmptyChoices => (
            vec![r#"{"id":"x","choices":[]}"#.to_owned()],
            stream::End::Whole,
        ),
        Fault::TruncatedBody => (
            stream::events(&completion(&req.body, sh), sh.cfg.chunk_chars, usage),
            stream::End::Cut,
        ),
        Fault::Silent => (
            stream::events(&completion(&req.body, sh), sh.cfg.chunk_chars, usage),
            stream::End::Silent(sh.cfg.hang),
        ),
        _ => return None,
    };
    Some(stream::write(wr, &events, &pace(sh, Duration::ZERO), end).await)
}

/// Answers a request with a fault; an error (or a fault that drops the connection) ends the connection.
async fn write_fault(
    wr: &mut tokio::net::tcp::OwnedWriteHalf,
    fault: Fault,
    req: &Request,
    sh: &Shared,
) -> io::Result<()> {
    sh.stats.faults.fetch_add(1, Ordering::Relaxed);
    if let Some(usage) = stream::requested(&req.body)
        && let Some(written) = write_stream_fault(wr, fault, req, sh, usage).await
    {
        return written;
    }
    let ra = sh.cfg.retry_after_s.to_string();
    let err = |msg: &str| json!({"error": {"message": msg}}).to_string();
    match fault {
        Fault::RateLimited => {
            write_response(
                wr,
                429,
                &[("Retry-After", &ra)],
                err("slow down").as_bytes(),
                None,
            )
            .await
        }
        Fault::RateLimitedDate => {
            let at = SystemTime::now() + Duration::from_secs(sh.cfg.retry_after_s + 1);
            let date = httpdate::fmt_http_date(at);
            write_response(
                wr,
                429,
                &[("Retry-After", &date)],
                err("slow down").as_bytes(),
                None,
            )
            .await
        }
        Fault::Unavailable => {
            write_response(wr, 503, &[], err("overloaded").as_bytes(), None).await
        }
        Fault::ServerError => {
            write_response(wr, 500, &[], err("internal error").as_bytes(), None).await
        }
        Fault::RequestTimeout => {
            write_response(wr, 408, &[], err("request timeout").as_bytes(), None).await
        }
        Fault::Conflict => write_response(wr, 409, &[], err("conflict").as_bytes(), None).await,
        Fault::Reset => Err(io::Error::other("reset")),
        Fault::Hang => {
            tokio::time::sleep(sh.cfg.hang).await;
            Err(io::Error::other("hang"))
        }
        Fault::InvalidJson => {
            write_response(wr, 200, &[], b"{\"choices\": [ this is not json", None).await
        }
        Fault::EmptyChoices => {
            write_response(wr, 200, &[], br#"{"id":"x","choices":[]}"#, None).await
        }
        Fault::TruncatedBody => {
            let body = completion(&req.body, sh);
            let half = body.len() / 2;
            let _ = write_response(wr, 200, &[], &body.as_bytes()[..half], Some(body.len())).await;
            Err(io::Error::other("truncated"))
        }
        Fault::BadRequest => {
            write_response(
                wr,
                400,
                &[],
                err("bad request: context too long").as_bytes(),
                None,
            )
            .await
        }
        Fault::Unauthorized => {
            let msg = format!(
                "Incorrect API key provided: {}",
                req.auth.as_deref().unwrap_or("none")
            );
            write_response(wr, 401, &[], err(&msg).as_bytes(), None).await
        }
        Fault::Forbidden => write_response(wr, 403, &[], err("forbidden").as_bytes(), None).await,
        Fault::NotFound => {
            write_response(wr, 404, &[], err("model not found").as_bytes(), None).await
        }
        Fault::Silent => {
            let _ = write_response(wr, 200, &[], b"", Some(100)).await;
            tokio::time::sleep(sh.cfg.hang).await;
            Err(io::Error::other("silent"))
        }
    }
}

fn pick_fault(sh: &Shared) -> Option<Fault> {
    if let Some(f) = sh
        .script
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .pop_front()
    {
        return Some(f);
    }
    if sh.cfg.fault_rate <= 0.0 || sh.cfg.faults.is_empty() {
        return None;
    }
    let mut state = sh.rng.lock().unwrap_or_else(|e| e.into_inner());
    let a = next_u64(&mut state);
    let b = next_u64(&mut state);
    drop(state);
    let u = (a >> 11) as f64 / (1u64 << 53) as f64;
    (u < sh.cfg.fault_rate).then(|| sh.cfg.faults[(b % sh.cfg.faults.len() as u64) as usize])
}

fn next_u64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The scripted content for a last message, if a marker matches.
fn scripted(last: &str, sh: &Shared) -> Option<String> {
    let i = sh
        .cfg
        .replies
        .iter()
        .position(|(marker, _)| last.contains(marker.as_str()))?;
    let mut replied = sh.replied.lock().unwrap_or_else(|e| e.into_inner());
    let n = replied[i];
    replied[i] += 1;
    let contents = &sh.cfg.replies[i].1;
    contents.get(n).or(contents.last()).cloned()
}

/// The deterministic answer to a request body.
/// `/embeddings`: each input `w` becomes `[len(w), 1, 0]`, listed in reverse order (a client must place vectors
/// by `index`), with one prompt token per 4 bytes of input.
fn embedding_reply(body: &[u8]) -> String {
    let req: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let inputs: Vec<&str> = req
        .get("input")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .rev()
        .map(|(i, w)| json!({"object": "embedding", "index": i, "embedding": [w.len() as f32, 1.0, 0.0]}))
        .collect();
    let tokens: usize = inputs.iter().map(|w| w.len().div_ceil(4)).sum();
    json!({"object": "list", "data": data, "model": req.get("model"), "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})
        .to_string()
}

fn completion(body: &[u8], sh: &Shared) -> String {
    let req: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let last = req
        .get("messages")
        .and_then(Value::as_array)
        .and_then(|m| m.last())
        .and_then(|m| m.get("content"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let model = req.get("model").and_then(Value::as_str).unwrap_or("mock");
    let mut content = sh
        .cfg
        .responder
        .as_ref()
        .and_then(|r| (r.0)(model, last))
        .or_else(|| scripted(last, sh))
        .unwrap_or_else(|| format!("Reply to: {last}"));
    if last.contains("[think]") {
        content = format!("<think>Thinking about it.</think>\n{content}");
    }
    let mut message = json!({"role": "assistant", "content": content});
    if last.contains("[reasoning]") {
        message["reasoning_content"] = Value::from("Reasoned separately.");
    }
    let finish = if last.contains("[length]") {
        "length"
    } else {
        "stop"
    };
    // Counted from the request without its transport fields, so a streamed request costs what a whole one does.
    let prompt_tokens = (content_len(body) / 4) as u64;
    // A responder's content is counted at four bytes a token, as real replies are about that long.
    let completion_tokens = if sh.cfg.responder.is_some() {
        (content.len() / 4).max(1) as u64
    } else {
        10
    };
    let mut usage = json!({"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "total_tokens": prompt_tokens + completion_tokens});
    if last.contains("[cost]") {
        usage["cost"] = Value::from(0.25);
    }
    let mut choice = json!({"index": 0, "message": message, "finish_reason": finish});
    if req.get("logprobs").and_then(Value::as_bool) == Some(true) {
        choice["logprobs"] =
            json!({"content": [{"token": "a", "logprob": -0.5}, {"token": "b", "logprob": -1.5}]});
    }
    json!({"id": "mock-1", "object": "chat.completion", "model": model, "choices": [choice], "usage": usage}).to_string()
}

async fn write_response(
    w: &mut tokio::net::tcp::OwnedWriteHalf,
    status: u16,
    headers: &[(&str, &str)],
    body: &[u8],
    declared_len: Option<usize>,
) -> io::Result<()> {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        409 => "Conflict",
        402 => "Payment Required",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    };
    let mut head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
        declared_len.unwrap_or(body.len())
    );
    for (k, v) in headers {
        head.push_str(k);
        head.push_str(": ");
        head.push_str(v);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    let mut buf = Vec::with_capacity(head.len() + body.len());
    buf.extend_from_slice(head.as_bytes());
    buf.extend_from_slice(body);
    w.write_all(&buf).await?;
    w.flush().await
}

/// Bytes of a request body without `stream` and `stream_options` (transport, not content).
fn content_len(body: &[u8]) -> usize {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(mut m)) if m.contains_key("stream") => {
            m.remove("stream");
            m.remove("stream_options");
            serde_json::to_vec(&Value::Object(m)).map_or(body.len(), |v| v.len())
        }
        _ => body.len(),
    }
}
