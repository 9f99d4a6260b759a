//! One POST of a JSON body: the HTTP client with the model's key, and a response turned into bytes or a
//! classified [`Failure`] with the server's retry hints. Messages never name the URL's secrets or the key.

use std::time::{Duration, SystemTime};

use schema::ErrorClass;

use crate::Error;
use crate::config::{HeaderValue, ModelConfig};
use crate::parse::{self, Failure};
use crate::redact::Redactor;
use crate::retry::{self, Hints};

/// What a model's requests carry besides the body: the bearer key and the custom headers, read from the
/// environment, and the redactor that keeps every one of those secrets out of messages.
pub(crate) struct Access {
    pub(crate) key: Option<String>,
    headers: reqwest::header::HeaderMap,
    pub(crate) redactor: Redactor,
}

/// Reads the model's key and custom headers (`{ env = "VAR" }` values from the environment).
pub(crate) fn access(model: &ModelConfig) -> Result<Access, Error> {
    let key = crate::client::api_key(model)?;
    let mut redactor = Redactor::new(key.as_deref());
    let mut headers = reqwest::header::HeaderMap::new();
    for (name, value) in &model.headers {
        let (text, secret) = match value {
            HeaderValue::Text(t) => (t.clone(), false),
            HeaderValue::Env { env } => {
                let v = std::env::var(env).ok().filter(|v| !v.trim().is_empty()).ok_or_else(|| {
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
/// logged), a connect timeout, an idle-read timeout of the model's `idle-timeout-s`, and TCP keepalive.
pub(crate) fn build_client(
    model: &ModelConfig,
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
        .read_timeout(Duration::from_secs_f64(model.idle_timeout_s))
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
    url: &str,
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
    let resp = request.send().await.map_err(|e| Failure {
        class: if e.is_timeout() {
            ErrorClass::Timeout
        } else {
            ErrorClass::Connection
        },
        status: None,
        message: redactor.clean(&error_chain(&e)),
        retry_after: None,
        should_retry: None,
        usage: None,
    })?;
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
    })?;
    if !(200..300).contains(&status) {
        return Err(Failure {
            class: retry::status_class(status),
            status: Some(status),
            message: redactor.clean(&parse::error_message(&bytes)),
            retry_after: hints.retry_after,
            should_retry: hints.should_retry,
            usage: None,
        });
    }
    Ok((status, bytes.to_vec()))
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
