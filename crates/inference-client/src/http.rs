//! One POST of a JSON body: the HTTP client with the model's key, and a response turned into bytes (or, streamed,
//! into a completion) or a classified [`Failure`] with the server's retry hints. Messages never name the URL's
//! secrets or the key.
//!
//! Timers: a whole reply ([`post`], [`send`]) is bounded by the request's timeout alone. A streamed reply
//! ([`post_stream`]) is bounded by the attempt's `timeout-s` until the first byte of its body, then by
//! `idle-timeout-s` between two pieces of it, however long the answer takes ([`read_timed`], which reads tokio's
//! clock: its tests drive it on a paused one, over a scripted body).

use std::time::{Duration, SystemTime};

use schema::ErrorClass;

use crate::Error;
use crate::config::{HeaderValue, ModelConfig};
use crate::parse::{self, Completion, Failure};
use crate::redact::Redactor;
use crate::retry::{self, Hints};
use crate::sse::Assembler;

/// What a model's requests carry besides the body: the bearer key and the custom headers, read from the
/// environment, and the redactor that keeps every one of those secrets out of messages.
pub(crate) struct Access {
    pub(crate) key: Option<String>,
    headers: reqwest::header::HeaderMap,
    pub(crate) redactor: Redactor,
}

impl Access {
    /// Equal for two models that send the same key and headers (they share a connection pool per base URL).
    pub(crate) fn fingerprint(&self) -> u64 {
        crate::pool::fingerprint(self.key.as_deref(), &self.headers)
    }
}

/// Reads the model's key and custom headers (`{ env = "VAR" }` values) from `env`.
pub(crate) fn access(model: &ModelConfig, vars: &crate::client::Env) -> Result<Access, Error> {
    let key = crate::client::api_key(model, vars)?;
    let mut redactor = Redactor::new(key.as_deref());
    let mut headers = reqwest::header::HeaderMap::new();
    for (name, value) in &model.headers {
        let (text, secret) = match value {
            HeaderValue::Text(t) => (t.clone(), false),
            HeaderValue::Env { env } => {
                let v = vars.var(env).ok_or_else(|| {
                    Error::Config(format!(
                        "model {:?}: header {name:?} reads environment variable {env}, which is not set",
                        model.name
                    ))
                })?;
                (v, true)
            }
        };
        let bad = || {
            Error::Config(format!(
                "model {:?}: header {name:?} has characters not allowed in HTTP",
                model.name
            ))
        };
        let name = reqwest::header::HeaderName::from_bytes(name.as_bytes()).map_err(|_| bad())?;
        let mut v = reqwest::header::HeaderValue::from_str(&text).map_err(|_| bad())?;
        if secret {
            v.set_sensitive(true);
            redactor = redactor.with(Some(&text));
        }
        headers.insert(name, v);
    }
    Ok(Access {
        key,
        headers,
        redactor,
    })
}

/// TCP keepalive: quiet time before the first probe, time between probes, probes missed before the connection ends.
const KEEPALIVE_IDLE: Duration = Duration::from_secs(15);
const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(5);
const KEEPALIVE_RETRIES: u32 = 3;

/// An HTTP client for one model: its key as a bearer token and its headers (secrets marked sensitive, so never
/// logged), a connect timeout and TCP keepalive. It has no read timeout: each request brings its own timers.
pub(crate) fn build_client(
    _model: &ModelConfig,
    access: &Access,
    pool: usize,
) -> Result<reqwest::Client, Error> {
    let mut headers = access.headers.clone();
    headers.insert(
        reqwest::header::CONTENT_TYPE,
        reqwest::header::HeaderValue::from_static("application/json"),
    );
    if let Some(k) = &access.key {
        let mut v =
            reqwest::header::HeaderValue::from_str(&format!("Bearer {k}")).map_err(|_| {
                Error::Config(
                    "the API key contains characters not allowed in an HTTP header".into(),
                )
            })?;
        v.set_sensitive(true);
        headers.insert(reqwest::header::AUTHORIZATION, v);
    }
    reqwest::Client::builder()
        .default_headers(headers)
        .pool_max_idle_per_host(pool)
        .connect_timeout(Duration::from_secs(30))
        .tcp_nodelay(true)
        // A connection whose peer is gone (a host restarted, a network cut) is noticed in about 30 s, not after
        // the idle timeout: probes after 15 s of quiet, every 5 s, three missed ones end it.
        .tcp_keepalive(KEEPALIVE_IDLE)
        .tcp_keepalive_interval(KEEPALIVE_INTERVAL)
        .tcp_keepalive_retries(KEEPALIVE_RETRIES)
        .build()
        .map_err(|e| {
            Error::Setup(access.redactor.clean(&format!(
                "cannot build the HTTP client: {}",
                error_chain(&e)
            )))
        })
}

/// POSTs `body` to `url`; a 2xx body comes back as bytes, anything else as a classified failure.
pub(crate) async fn post(
    client: &reqwest::Client,
    url: impl reqwest::IntoUrl,
    body: Vec<u8>,
    timeout: Duration,
    redactor: &Redactor,
) -> Result<(u16, Vec<u8>), Failure> {
    send(client.post(url).body(body).timeout(timeout), redactor).await
}

/// Sends a request; a 2xx body comes back as bytes, anything else as a classified failure.
pub(crate) async fn send(
    request: reqwest::RequestBuilder,
    redactor: &Redactor,
) -> Result<(u16, Vec<u8>), Failure> {
    let resp = request
        .send()
        .await
        .map_err(|e| request_failure(&e, redactor))?;
    let status = resp.status().as_u16();
    let hints = Hints::from_headers(
        |name| resp.headers().get(name).and_then(|v| v.to_str().ok()),
        SystemTime::now(),
    );
    let bytes = resp.bytes().await.map_err(|e| Failure {
        class: if e.is_timeout() {
            ErrorClass::Timeout
        } else {
            ErrorClass::TruncatedBody
        },
        status: Some(status),
        message: redactor.clean(&error_chain(&e)),
        retry_after: hints.retry_after,
        should_retry: hints.should_retry,
        usage: None,
        closed: false,
    })?;
    if !(200..300).contains(&status) {
        return Err(Failure {
            class: retry::status_class(status),
            status: Some(status),
            message: redactor.clean(&parse::error_message(&bytes)),
            retry_after: hints.retry_after,
            should_retry: hints.should_retry,
            usage: None,
            closed: false,
        });
    }
    Ok((status, bytes.to_vec()))
}

/// A request that got no response: a timeout once it was sent (`timeout`; a connection that could not be made in
/// time is `connection`), else a connection failure, marked `closed` when the connection was made and then closed
/// (or reset) before any answer.
fn request_failure(e: &reqwest::Error, redactor: &Redactor) -> Failure {
    let timeout = e.is_timeout() && !e.is_connect();
    Failure {
        class: if timeout {
            ErrorClass::Timeout
        } else {
            ErrorClass::Connection
        },
        status: None,
        message: redactor.clean(&error_chain(e)),
        retry_after: None,
        should_retry: None,
        usage: None,
        closed: !timeout && !e.is_connect() && closed_before_answer(e),
    }
}

/// Whether the causes of a request error show a connection that ended before any answer: hyper's "connection closed
/// before message completed", or the peer resetting it (or its write end gone) once it was made.
fn closed_before_answer(e: &reqwest::Error) -> bool {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if let Some(h) = err.downcast_ref::<hyper::Error>()
            && h.is_incomplete_message()
        {
            return true;
        }
        if let Some(io) = err.downcast_ref::<std::io::Error>()
            && matches!(
                io.kind(),
                std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe
            )
        {
            return true;
        }
        cur = err.source();
    }
    false
}

/// How often a streamed reply tells its endpoint that it is alive (the health watch calls an endpoint silent after
/// seconds, `health::SILENT`).
const HEARD_EVERY: Duration = Duration::from_millis(500);

/// POSTs a streaming request body (`stream: true`) and reads its server-sent events into a completion.
///
/// Until the first byte of the body arrives only `timeout` applies (counted from the send); after it, `idle` bounds
/// each silence between two pieces of the body, and nothing bounds the answer's length. A server that answers a
/// 2xx with a whole JSON document instead of events is read as a whole reply; an error status as in [`send`].
pub(crate) async fn post_stream(
    client: &reqwest::Client,
    url: impl reqwest::IntoUrl,
    body: Vec<u8>,
    timeout: Duration,
    idle: Duration,
    redactor: &Redactor,
    heard: impl Fn(),
) -> Result<Completion, Failure> {
    let deadline = tokio::time::Instant::now() + timeout;
    let secs = |d: Duration| d.as_secs_f64();
    let sent = tokio::time::timeout_at(deadline, client.post(url).body(body).send()).await;
    let mut resp = match sent {
        Err(_) => {
            return Err(Failure {
                class: ErrorClass::Timeout,
                status: None,
                message: format!("no response within timeout-s ({} s)", secs(timeout)),
                retry_after: None,
                should_retry: None,
                usage: None,
                closed: false,
            });
        }
        Ok(Err(e)) => return Err(request_failure(&e, redactor)),
        Ok(Ok(r)) => r,
    };
    let status = resp.status().as_u16();
    let hints = Hints::from_headers(
        |name| resp.headers().get(name).and_then(|v| v.to_str().ok()),
        SystemTime::now(),
    );
    let fail = |class, message: String| Failure {
        class,
        status: Some(status),
        message: redactor.clean(&message),
        retry_after: hints.retry_after,
        should_retry: hints.should_retry,
        usage: None,
        closed: false,
    };
    let ok = (200..300).contains(&status);
    let events = resp
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.contains("text/event-stream"));
    let mut stream = (ok && events).then(Assembler::new);
    let mut whole: Vec<u8> = Vec::new();
    // The endpoint hears from the answer at most every `HEARD_EVERY`.
    let mut told: Option<tokio::time::Instant> = None;
    let end = read_timed(&mut resp, deadline, idle, |piece, at| {
        if told.is_none_or(|t| at.duration_since(t) >= HEARD_EVERY) {
            heard();
            told = Some(at);
        }
        match stream.as_mut() {
            Some(a) => a
                .feed(piece)
                .map_err(|f| fail(f.class, f.message).with_usage(f.usage)),
            None => {
                whole.extend_from_slice(piece);
                Ok(())
            }
        }
    })
    .await?;
    match end {
        BodyEnd::Whole => {}
        // After `[DONE]` the answer is whole, whatever the connection does next.
        _ if stream.as_ref().is_some_and(|a| a.done) => {}
        BodyEnd::NoStart => {
            return Err(fail(
                ErrorClass::Timeout,
                format!("no answer began within timeout-s ({} s)", secs(timeout)),
            ));
        }
        BodyEnd::Silent => {
            return Err(fail(
                ErrorClass::Timeout,
                format!(
                    "the answer went silent for idle-timeout-s ({} s)",
                    secs(idle)
                ),
            ));
        }
        BodyEnd::Broken(e) => {
            let class = if e.is_timeout() {
                ErrorClass::Timeout
            } else {
                ErrorClass::TruncatedBody
            };
            return Err(fail(class, error_chain(&e)));
        }
    }
    if !ok {
        return Err(fail(
            retry::status_class(status),
            parse::error_message(&whole),
        ));
    }
    let parsed = match stream {
        Some(a) => a.finish(),
        None => parse::parse_completion(&whole),
    };
    parsed.map_err(|f| fail(f.class, f.message).with_usage(f.usage))
}

/// A body read piece by piece: a response, or a test's scripted body. `next_piece` must be cancel-safe (a timer
/// drops it): a piece is lost only once it is returned.
pub(crate) trait Pieces {
    type Error;
    /// The next piece; `None` at the end of the body.
    fn next_piece(
        &mut self,
    ) -> impl std::future::Future<Output = Result<Option<bytes::Bytes>, Self::Error>>;
}

impl Pieces for reqwest::Response {
    type Error = reqwest::Error;

    fn next_piece(
        &mut self,
    ) -> impl std::future::Future<Output = Result<Option<bytes::Bytes>, reqwest::Error>> {
        self.chunk()
    }
}

/// How [`read_timed`] ended.
#[derive(Debug, PartialEq)]
pub(crate) enum BodyEnd<E> {
    /// The body ended.
    Whole,
    /// No piece came before the deadline.
    NoStart,
    /// After a piece, none came for `idle`.
    Silent,
    /// Reading failed.
    Broken(E),
}

/// Reads `body` into `take` (each piece with the time it came) until it ends: bounded by `deadline` until its first
/// piece, then by `idle` between two pieces, however long it lasts. An error from `take` ends the read.
///
/// One timer for the whole body, re-armed lazily: a piece only notes when it came, and the timer, when it fires
/// before the silence is long enough, is set again from that note. So a long answer of many small pieces costs a
/// clock read per piece, not a timer registration.
pub(crate) async fn read_timed<B: Pieces, F>(
    body: &mut B,
    deadline: tokio::time::Instant,
    idle: Duration,
    mut take: impl FnMut(&[u8], tokio::time::Instant) -> Result<(), F>,
) -> Result<BodyEnd<B::Error>, F> {
    let timer = tokio::time::sleep_until(deadline);
    tokio::pin!(timer);
    let mut last_piece: Option<tokio::time::Instant> = None;
    loop {
        let piece = tokio::select! {
            biased;
            piece = body.next_piece() => piece,
            () = &mut timer => {
                let Some(last) = last_piece else {
                    return Ok(BodyEnd::NoStart);
                };
                let due = last + idle;
                if due > tokio::time::Instant::now() {
                    timer.as_mut().reset(due);
                    continue;
                }
                return Ok(BodyEnd::Silent);
            }
        };
        let piece = match piece {
            Err(e) => return Ok(BodyEnd::Broken(e)),
            Ok(None) => return Ok(BodyEnd::Whole),
            Ok(Some(piece)) => piece,
        };
        let at = tokio::time::Instant::now();
        if last_piece.is_none() {
            timer.as_mut().reset(at + idle);
        }
        last_piece = Some(at);
        take(&piece, at)?;
    }
}

/// A reqwest error and its causes on one line, without the URL.
pub(crate) fn error_chain(e: &reqwest::Error) -> String {
    let mut msg = String::new();
    let mut cur: Option<&dyn std::error::Error> = Some(e);
    let mut first = true;
    while let Some(err) = cur {
        let text = if first {
            // reqwest's own message names the URL; its kind without the URL is enough.
            if e.is_timeout() {
                "timed out".to_owned()
            } else if e.is_connect() {
                "connection failed".to_owned()
            } else if e.is_body() || e.is_decode() {
                "reading the response body failed".to_owned()
            } else {
                "request failed".to_owned()
            }
        } else {
            err.to_string()
        };
        if !msg.is_empty() {
            msg.push_str(": ");
        }
        msg.push_str(&text);
        first = false;
        cur = err.source();
    }
    msg
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use super::*;

    /// A body that sends each piece after its wait, then ends (or, when `silent`, sends nothing more). Like a
    /// response's, its `next_piece` is cancel-safe: the timer's branch drops it, and the piece's time stays set.
    struct Script {
        pieces: VecDeque<(u64, &'static str)>,
        silent: bool,
        due: Option<tokio::time::Instant>,
    }

    impl Script {
        fn new(pieces: impl IntoIterator<Item = (u64, &'static str)>, silent: bool) -> Script {
            Script {
                pieces: pieces.into_iter().collect(),
                silent,
                due: None,
            }
        }
    }

    impl Pieces for Script {
        type Error = ();

        async fn next_piece(&mut self) -> Result<Option<bytes::Bytes>, ()> {
            let Some(&(ms, piece)) = self.pieces.front() else {
                if self.silent {
                    std::future::pending::<()>().await;
                }
                return Ok(None);
            };
            let due = *self
                .due
                .get_or_insert_with(|| tokio::time::Instant::now() + Duration::from_millis(ms));
            tokio::time::sleep_until(due).await;
            self.pieces.pop_front();
            self.due = None;
            Ok(Some(bytes::Bytes::from_static(piece.as_bytes())))
        }
    }

    /// Reads `body` with `timeout` until the first piece and `idle` after it, on tokio's paused clock: how it
    /// ended, the pieces read, and when (virtual time since the start).
    async fn read(
        body: &mut Script,
        timeout_ms: u64,
        idle_ms: u64,
    ) -> (BodyEnd<()>, String, Duration) {
        let t0 = tokio::time::Instant::now();
        let mut text = String::new();
        let end = read_timed(
            body,
            t0 + Duration::from_millis(timeout_ms),
            Duration::from_millis(idle_ms),
            |piece, _| {
                text.push_str(std::str::from_utf8(piece).unwrap());
                Ok::<(), ()>(())
            },
        )
        .await
        .unwrap();
        (end, text, t0.elapsed())
    }

    #[tokio::test(start_paused = true)]
    async fn silence_after_a_piece_ends_the_read_exactly_idle_later() {
        let mut body = Script::new([(200, "a"), (300, "b")], true);
        let (end, text, at) = read(&mut body, 30_000, 1_000).await;
        assert_eq!((end, text.as_str()), (BodyEnd::Silent, "ab"));
        // The last piece came at 0.5 s; nothing bounds the read but `idle` after it (not the 30 s deadline).
        assert_eq!(at, Duration::from_millis(1_500));
    }

    #[tokio::test(start_paused = true)]
    async fn an_answer_longer_than_both_timers_is_read_whole() {
        // 48 pieces 100 ms apart: 4.8 s of answer, every gap far inside the 1.5 s idle bound, the whole far beyond
        // the 2 s until the first piece.
        let mut body = Script::new((0..48).map(|_| (100, "xxxx")), false);
        let (end, text, at) = read(&mut body, 2_000, 1_500).await;
        assert_eq!((end, text.len()), (BodyEnd::Whole, 48 * 4));
        assert_eq!(at, Duration::from_millis(4_800));
    }

    #[tokio::test(start_paused = true)]
    async fn before_the_first_piece_only_the_deadline_counts() {
        // `idle` (100 ms) does not apply before the first piece; the deadline (1 s) ends the wait.
        let mut body = Script::new([(3_000, "late")], false);
        let (end, text, at) = read(&mut body, 1_000, 100).await;
        assert_eq!((end, text.as_str()), (BodyEnd::NoStart, ""));
        assert_eq!(at, Duration::from_secs(1));
    }

    #[tokio::test(start_paused = true)]
    async fn keep_alive_comments_carry_a_slow_start_past_the_deadline() {
        // A comment within the 1.5 s deadline, then one every 200 ms until the answer 3 s after the start.
        let mut pieces = vec![(200, ": keep-alive\n\n")];
        pieces.extend((0..14).map(|_| (200, ": keep-alive\n\n")));
        pieces.push((0, "data: answer\n\n"));
        let mut body = Script::new(pieces, false);
        let (end, text, at) = read(&mut body, 1_500, 1_500).await;
        assert_eq!(end, BodyEnd::Whole);
        assert!(text.ends_with("data: answer\n\n"), "{text}");
        assert_eq!(at, Duration::from_secs(3));
    }

    #[tokio::test(start_paused = true)]
    async fn a_gap_just_inside_idle_is_no_silence() {
        // Gaps of 999 ms under a 1 s idle bound: read whole; a gap of 1 001 ms: silent exactly 1 s after the
        // piece before it.
        let mut body = Script::new([(10, "a"), (999, "b"), (999, "c")], false);
        let (end, text, _) = read(&mut body, 1_000, 1_000).await;
        assert_eq!((end, text.as_str()), (BodyEnd::Whole, "abc"));
        let mut body = Script::new([(10, "a"), (999, "b"), (1_001, "c")], false);
        let (end, text, at) = read(&mut body, 1_000, 1_000).await;
        assert_eq!((end, text.as_str()), (BodyEnd::Silent, "ab"));
        assert_eq!(at, Duration::from_millis(2_009));
    }
}
