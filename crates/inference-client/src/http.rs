//! One POST of a JSON body: the HTTP client with the model's key, and a response turned into bytes (or, streamed,
//! into a completion) or a classified [`Failure`] with the server's retry hints. Messages never name the URL's
//! secrets or the key.
//!
//! Timers: a whole reply ([`post`], [`send`]) is bounded by the request's timeout alone. A streamed reply
//! ([`post_stream`]) is bounded by the attempt's `timeout-s` until the first byte of its body, then by
//! `idle-timeout-s` between two pieces of it, however long the answer takes.

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
    let mut first = true;
    // One timer for the whole body, re-armed lazily: a piece only notes when it came, and the timer, when it fires
    // before the silence is long enough, is set again from that note. So a long answer of many small pieces costs a
    // clock read per piece, not a timer registration; the endpoint hears from it at most every `HEARD_EVERY`.
    let timer = tokio::time::sleep_until(deadline);
    tokio::pin!(timer);
    let mut last_piece = tokio::time::Instant::now();
    let mut told: Option<tokio::time::Instant> = None;
    loop {
        let next = tokio::select! {
            biased;
            piece = resp.chunk() => Ok(piece),
            () = &mut timer => {
                let due = last_piece + idle;
                if !first && due > tokio::time::Instant::now() {
                    timer.as_mut().reset(due);
                    continue;
                }
                Err(())
            }
        };
        let piece = match next {
            // After `[DONE]` the answer is whole, whatever the connection does next.
            Err(_) | Ok(Err(_)) if stream.as_ref().is_some_and(|a| a.done) => break,
            Err(_) if first => {
                return Err(fail(
                    ErrorClass::Timeout,
                    format!("no answer began within timeout-s ({} s)", secs(timeout)),
                ));
            }
            Err(_) => {
                return Err(fail(
                    ErrorClass::Timeout,
                    format!(
                        "the answer went silent for idle-timeout-s ({} s)",
                        secs(idle)
                    ),
                ));
            }
            Ok(Err(e)) => {
                let class = if e.is_timeout() {
                    ErrorClass::Timeout
                } else {
                    ErrorClass::TruncatedBody
                };
                return Err(fail(class, error_chain(&e)));
            }
            Ok(Ok(None)) => break,
            Ok(Ok(Some(piece))) => piece,
        };
        last_piece = tokio::time::Instant::now();
        if first {
            first = false;
            timer.as_mut().reset(last_piece + idle);
        }
        if told.is_none_or(|t| last_piece.duration_since(t) >= HEARD_EVERY) {
            heard();
            told = Some(last_piece);
        }
        match stream.as_mut() {
            Some(a) => a
                .feed(&piece)
                .map_err(|f| fail(f.class, f.message).with_usage(f.usage))?,
            None => whole.extend_from_slice(&piece),
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
