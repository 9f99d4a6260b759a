//! One request through the mock: the route (`/stats`, the Batch API, embeddings, chat completions), then the
//! emulated provider, the fault, or the answer, whole or streamed.

use std::io;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use hyper::body::Incoming;
use hyper::{Request as HttpRequest, Response};
use serde_json::json;

use crate::answer::{completion, embedding_reply, pick_fault, scripted};
use crate::http::{self, Body, BodyError};
use crate::{Fault, Shared, batch, emulate, snapshot, stream};

/// A request as the mock's answers see it.
pub(crate) struct Request {
    pub(crate) method: String,
    pub(crate) path: String,
    pub(crate) auth: Option<String>,
    /// Every header, names in lower case.
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Bytes,
}

impl Request {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Answers one request; an `Err` closes the connection without a response.
pub(crate) async fn handle(
    req: HttpRequest<Incoming>,
    sh: Arc<Shared>,
) -> io::Result<Response<Body>> {
    let (parts, body) = req.into_parts();
    let headers: Vec<(String, String)> = parts
        .headers
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_owned(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let body = match http::read_body(body, sh.cfg.max_body_bytes).await {
        Ok(b) => b,
        Err(BodyError::TooLarge(limit)) => {
            let msg = format!("the request body is longer than the mock's limit of {limit} bytes");
            return Ok(http::json(
                413,
                &[],
                json!({"error": {"message": msg}}).to_string(),
            ));
        }
        Err(BodyError::Broken(e)) => return Err(e),
    };
    let req = Request {
        method: parts.method.as_str().to_owned(),
        path: parts.uri.path().to_owned(),
        auth: parts
            .headers
            .get(hyper::header::AUTHORIZATION)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned()),
        headers,
        body,
    };
    if req.path == "/stats" {
        let s = snapshot(&sh.stats);
        let body =
            json!({"requests": s.requests, "ok": s.ok, "faults": s.faults, "ok_us": s.ok_us});
        return Ok(http::json(200, &[], body.to_string()));
    }
    // The Batch API's endpoints take faults from the same script, then answer.
    if batch::handles(&req.path) {
        if let Some(fault) = pick_fault(&sh) {
            return write_fault(fault, &req, &sh).await;
        }
        let (status, body) = batch::route(&req, &sh).await;
        return Ok(http::json(status, &[], body));
    }
    let embeddings = req.path.ends_with("/embeddings");
    if !embeddings && !req.path.ends_with("/chat/completions") {
        return Ok(http::json(
            404,
            &[],
            r#"{"error":{"message":"no such route"}}"#,
        ));
    }
    sh.stats.requests.fetch_add(1, Ordering::Relaxed);
    let started = Instant::now();
    let streamed = if embeddings {
        None
    } else {
        stream::requested(&req.body)
    };
    if let Some(e) = emulate::emulate(&req.body, &req.headers, &sh.emu, |last| scripted(last, &sh))
    {
        return Ok(emulated(e, streamed, &req, &sh));
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
        let counters = Arc::clone(&sh);
        let record = move || {
            let us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
            counters.stats.ok_us.fetch_add(us, Ordering::Relaxed);
        };
        return Ok(match streamed {
            Some(usage) => {
                let events = stream::events(&body, sh.cfg.chunk_chars, usage);
                let pace = pace(&sh, sh.cfg.latency);
                stream::respond(events, pace, stream::End::Whole, record)
            }
            None => {
                let response = http::json(200, &[], body);
                record();
                response
            }
        });
    };
    write_fault(fault, &req, &sh).await
}

/// The answer of an emulated provider.
fn emulated(
    e: emulate::Emulated,
    streamed: Option<bool>,
    req: &Request,
    sh: &Shared,
) -> Response<Body> {
    match e {
        emulate::Emulated::Reply(200, _, body) if streamed.is_some() => {
            sh.stats.ok.fetch_add(1, Ordering::Relaxed);
            let usage = streamed.unwrap_or(false);
            let events = stream::events(&body, sh.cfg.chunk_chars, usage);
            stream::respond(events, pace(sh, Duration::ZERO), stream::End::Whole, || {})
        }
        emulate::Emulated::Reply(status, headers, body) => {
            if status == 200 {
                sh.stats.ok.fetch_add(1, Ordering::Relaxed);
            } else {
                sh.stats.faults.fetch_add(1, Ordering::Relaxed);
            }
            let headers: Vec<(&str, &str)> =
                headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
            http::json(status, &headers, body)
        }
        emulate::Emulated::Stall if streamed.is_some() => {
            // The first event, then nothing; the client's idle timeout must end the wait.
            let first = stream::events(&completion(&req.body, sh), sh.cfg.chunk_chars, false);
            let first = first.into_iter().take(1).collect();
            stream::respond(
                first,
                pace(sh, Duration::ZERO),
                stream::End::Silent(sh.cfg.hang),
                || {},
            )
        }
        // Headers for a body that never comes; the client's idle timeout must end the wait.
        emulate::Emulated::Stall => stalled(Bytes::new(), 100, sh.cfg.hang),
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

/// A 200 that declares `declared` bytes, sends `prefix`, waits `hang` and aborts the connection.
fn stalled(prefix: Bytes, declared: usize, hang: Duration) -> Response<Body> {
    let (tx, body) = http::channel();
    tokio::spawn(async move {
        if !prefix.is_empty() && tx.send(Ok(prefix)).await.is_err() {
            return;
        }
        if !hang.is_zero() {
            tokio::time::sleep(hang).await;
        }
        let _ = tx.send(Err(io::Error::other("the body stops here"))).await;
    });
    http::response(
        200,
        "application/json",
        &[("content-length", &declared.to_string())],
        body,
    )
}

/// A fault of a 200 answer, as a stream: the same body faults, sent as events.
fn stream_fault(fault: Fault, req: &Request, sh: &Shared, usage: bool) -> Option<Response<Body>> {
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
    Some(stream::respond(
        events,
        pace(sh, Duration::ZERO),
        end,
        || {},
    ))
}

/// Answers a request with a fault; an `Err` drops the connection without a response.
async fn write_fault(fault: Fault, req: &Request, sh: &Shared) -> io::Result<Response<Body>> {
    sh.stats.faults.fetch_add(1, Ordering::Relaxed);
    if let Some(usage) = stream::requested(&req.body)
        && let Some(response) = stream_fault(fault, req, sh, usage)
    {
        return Ok(response);
    }
    let ra = sh.cfg.retry_after_s.to_string();
    let err = |msg: &str| json!({"error": {"message": msg}}).to_string();
    Ok(match fault {
        Fault::RateLimited => http::json(429, &[("retry-after", &ra)], err("slow down")),
        Fault::RateLimitedDate => {
            let at = SystemTime::now() + Duration::from_secs(sh.cfg.retry_after_s + 1);
            let date = httpdate::fmt_http_date(at);
            http::json(429, &[("retry-after", &date)], err("slow down"))
        }
        Fault::Unavailable => http::json(503, &[], err("overloaded")),
        Fault::ServerError => http::json(500, &[], err("internal error")),
        Fault::RequestTimeout => http::json(408, &[], err("request timeout")),
        Fault::Conflict => http::json(409, &[], err("conflict")),
        Fault::Reset => return Err(io::Error::other("reset")),
        Fault::Hang => {
            tokio::time::sleep(sh.cfg.hang).await;
            return Err(io::Error::other("hang"));
        }
        Fault::InvalidJson => http::json(200, &[], "{\"choices\": [ this is not json"),
        Fault::EmptyChoices => http::json(200, &[], r#"{"id":"x","choices":[]}"#),
        Fault::TruncatedBody => {
            let body = completion(&req.body, sh);
            let half = Bytes::copy_from_slice(&body.as_bytes()[..body.len() / 2]);
            stalled(half, body.len(), Duration::ZERO)
        }
        Fault::BadRequest => http::json(400, &[], err("bad request: context too long")),
        Fault::Unauthorized => {
            let msg = format!(
                "Incorrect API key provided: {}",
                req.auth.as_deref().unwrap_or("none")
            );
            http::json(401, &[], err(&msg))
        }
        Fault::Forbidden => http::json(403, &[], err("forbidden")),
        Fault::NotFound => http::json(404, &[], err("model not found")),
        Fault::Silent => stalled(Bytes::new(), 100, sh.cfg.hang),
    })
}
