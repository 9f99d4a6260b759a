//! Is the server there? Light health probes of a model's endpoints, none of them a paid request.
//!
//! - Before the first request of a model, each endpoint is checked once per client: a TCP connection to its
//!   host, then `GET <base>/models` (any HTTP answer counts, a 404 included: not every server lists its models),
//!   said on one log line. When none can be reached, the call waits for one, saying so, up to the model's
//!   `server-wait-s` (a server may still be loading its weights), then stops the model with one error line naming
//!   the URL and the connection error.
//! - While a call runs, [`watch`] probes (a TCP connection) every admitted endpoint whose requests have gone
//!   silent, or whose request just timed out in silence; a failed probe ejects it and ends its attempts (see
//!   `limiter`). It also stops the model when no endpoint has answered anything within the bound.
//!
//! Both bounds read tokio's clock, so a test on paused time drives them.

use std::time::Duration;

use crate::Error;
use crate::limiter::Endpoints;
use crate::redact::Redactor;
use crate::stop::StopHandle;

/// How long a TCP probe may take to connect.
const CONNECT_PROBE: Duration = Duration::from_secs(3);
/// How long `GET /models` may take.
const MODELS_PROBE: Duration = Duration::from_secs(10);
/// How often [`watch`] looks at the endpoints.
const TICK: Duration = Duration::from_millis(500);
/// Requests in flight with nothing heard for this long make their endpoint probed...
const SILENT: Duration = Duration::from_secs(5);
/// ...at most this often.
const PROBE_GAP: Duration = Duration::from_secs(5);

/// A host and port to connect to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HostPort(String, u16);

/// The host and port of an `http(s)://` URL (IPv6 literals without brackets); `None` when it names no host.
pub(crate) fn host_port(url: &str) -> Option<HostPort> {
    let u = reqwest::Url::parse(url).ok()?;
    let port = u.port_or_known_default()?;
    let host = u.host_str()?.trim_start_matches('[').trim_end_matches(']');
    Some(HostPort(host.to_owned(), port))
}

/// Connects to the host (and closes the connection at once); the error, on one line, when that fails.
pub(crate) async fn tcp_probe(host: &HostPort) -> Result<(), String> {
    match tokio::time::timeout(
        CONNECT_PROBE,
        tokio::net::TcpStream::connect((host.0.as_str(), host.1)),
    )
    .await
    {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(format!("cannot connect: {e}")),
        Err(_) => Err(format!(
            "cannot connect: no answer within {} s",
            CONNECT_PROBE.as_secs()
        )),
    }
}

/// What the pre-flight check found for one endpoint.
#[derive(Debug, Clone)]
pub(crate) struct Checked {
    /// It answered `GET /models` (any status).
    pub(crate) answered: bool,
    /// The connection error when it could not be reached.
    pub(crate) unreachable: Option<String>,
}

/// Checks the base URLs that no earlier call of the client heard from (`known[i]` says which it did; `http[i]` is
/// base URL `i`'s HTTP client), says what
/// it found on one line, and waits up to `wait` while none can be reached; `Err` when none could be reached by
/// then. Returns immediately once sending is stopped.
pub(crate) async fn preflight(
    model: &str,
    bases: &[String],
    known: &[bool],
    http: &[reqwest::Client],
    wait: Duration,
    redactor: &Redactor,
    stop: &StopHandle,
) -> Result<Vec<Checked>, Error> {
    let started = tokio::time::Instant::now();
    let mut checked: Vec<Checked> = Vec::with_capacity(bases.len());
    let mut said = Vec::new();
    for ((base, &known), http) in bases.iter().zip(known).zip(http) {
        if known {
            checked.push(Checked {
                answered: true,
                unreachable: None,
            });
            continue;
        }
        let c = check(base, http, redactor).await;
        said.push(format!("{}: {}", shown(base, redactor), describe(&c)));
        checked.push(c);
    }
    if said.is_empty() {
        return Ok(checked);
    }
    let reachable = checked.iter().filter(|c| c.unreachable.is_none()).count();
    if reachable > 0 {
        tracing::info!(
            model,
            reachable,
            of = bases.len(),
            "Endpoints checked: {}.",
            said.join("; ")
        );
        return Ok(checked);
    }
    tracing::warn!(
        model,
        wait_s = wait.as_secs_f64(),
        "No endpoint can be reached yet ({}); waiting for one (a server may still be loading its weights; \
         `server-wait-s` in the model config sets how long).",
        said.join("; ")
    );
    let found = wait_for_one(started, wait, stop, async || {
        for (i, base) in bases.iter().enumerate() {
            let Some(host) = host_port(base) else {
                continue;
            };
            if let Err(e) = tcp_probe(&host).await {
                checked[i].unreachable = Some(e);
                continue;
            }
            let c = check(base, &http[i], redactor).await;
            if c.unreachable.is_none() {
                tracing::info!(
                    model,
                    waited_s = started.elapsed().as_secs_f64(),
                    "Endpoint {} can be reached now: {}.",
                    shown(base, redactor),
                    describe(&c)
                );
                checked[i] = c;
                return true;
            }
            checked[i] = c;
        }
        false
    })
    .await;
    if !found {
        let what: Vec<(String, Option<String>)> = bases
            .iter()
            .zip(&checked)
            .map(|(b, c)| (b.clone(), c.unreachable.clone()))
            .collect();
        return Err(never_answered(model, &what, wait, redactor));
    }
    Ok(checked)
}

/// Probes with `probe` again and again (after 0.25 s, then twice as long each time, at most 2 s apart) until it
/// finds an endpoint, or sending is stopped (both `true`), or `wait` after `started` has passed (`false`).
async fn wait_for_one(
    started: tokio::time::Instant,
    wait: Duration,
    stop: &StopHandle,
    mut probe: impl AsyncFnMut() -> bool,
) -> bool {
    let mut pause = Duration::from_millis(250);
    loop {
        if stop.is_stopping() {
            return true;
        }
        if started.elapsed() >= wait {
            return false;
        }
        let left = wait.saturating_sub(started.elapsed());
        stop.sleep(pause.min(left)).await;
        pause = (pause * 2).min(Duration::from_secs(2));
        if probe().await {
            return true;
        }
    }
}

/// A TCP connection, then `GET <base>/models`.
async fn check(base: &str, http: &reqwest::Client, redactor: &Redactor) -> Checked {
    let Some(host) = host_port(base) else {
        return Checked {
            answered: false,
            unreachable: None,
        };
    };
    if let Err(e) = tcp_probe(&host).await {
        return Checked {
            answered: false,
            unreachable: Some(e),
        };
    }
    let url = format!("{}/models", base.trim_end_matches('/'));
    // `Connection: close`: the check's connection is never pooled, so no request is later sent on a connection the
    // server has meanwhile closed (llama-server closes idle keep-alive connections; a POST on one fails and is
    // retried, paid twice on a provider).
    let request = http
        .get(&url)
        .header(reqwest::header::CONNECTION, "close")
        .timeout(MODELS_PROBE);
    let answered = match request.send().await {
        Ok(_) => true,
        Err(e) => {
            tracing::debug!(error = %redactor.clean(&crate::http::error_chain(&e)), "GET /models failed.");
            false
        }
    };
    Checked {
        answered,
        unreachable: None,
    }
}

fn describe(c: &Checked) -> String {
    match (&c.unreachable, c.answered) {
        (Some(e), _) => format!("not reachable ({e})"),
        (None, true) => "reachable, answers GET /models".to_owned(),
        (None, false) => "accepts connections (no answer to GET /models)".to_owned(),
    }
}

/// A base URL as messages show it: without credentials or secrets.
fn shown(url: &str, redactor: &Redactor) -> String {
    redactor.clean(&crate::run::without_credentials(url))
}

/// The error that stops a model none of whose endpoints answered within `wait`: each URL and its last error.
pub(crate) fn never_answered(
    model: &str,
    endpoints: &[(String, Option<String>)],
    wait: Duration,
    redactor: &Redactor,
) -> Error {
    let what: Vec<String> = endpoints
        .iter()
        .map(|(url, e)| {
            format!(
                "{}: {}",
                shown(url.trim_end_matches("/chat/completions"), redactor),
                e.as_deref().unwrap_or("no answer")
            )
        })
        .collect();
    Error::Unreachable {
        model: model.to_owned(),
        waited_s: wait.as_secs_f64().round(),
        message: what.join("; "),
    }
}

/// Watches a call's endpoints until it ends: probes silent ones (see the module docs) and, when no endpoint has
/// answered anything within `wait` of `started` and none has a request in flight, halts them and returns the
/// error that stops the model.
pub(crate) async fn watch(
    endpoints: std::sync::Arc<Endpoints>,
    model: String,
    started: tokio::time::Instant,
    wait: Duration,
    redactor: std::sync::Arc<Redactor>,
) -> Error {
    loop {
        tokio::time::sleep(TICK).await;
        for (i, host) in endpoints.due_probes(SILENT, PROBE_GAP) {
            if let Err(e) = tcp_probe(&host).await {
                endpoints.probe_failed(i, &e);
            }
        }
        if started.elapsed() >= wait
            && let Some(what) = endpoints.never_answered()
        {
            endpoints.halt();
            return never_answered(&model, &what, wait, &redactor);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_ports_come_from_the_url() {
        assert_eq!(
            host_port("http://127.0.0.1:8080/v1/chat/completions"),
            Some(HostPort("127.0.0.1".into(), 8080))
        );
        assert_eq!(
            host_port("https://user:pw@api.example.org/v1"),
            Some(HostPort("api.example.org".into(), 443))
        );
        assert_eq!(
            host_port("http://[::1]:9/v1"),
            Some(HostPort("::1".into(), 9))
        );
        assert_eq!(host_port("not a url"), None);
    }

    /// The server wait on tokio's paused clock: probes 0.25, 0.5, 1 and 2 s apart, and the end exactly at the bound.
    #[tokio::test(start_paused = true)]
    async fn the_server_wait_ends_exactly_at_its_bound() {
        let stop = StopHandle::default();
        let t0 = tokio::time::Instant::now();
        let mut probes = Vec::new();
        let found = wait_for_one(t0, Duration::from_secs(6), &stop, async || {
            probes.push(t0.elapsed());
            false
        })
        .await;
        assert!(!found);
        assert_eq!(t0.elapsed(), Duration::from_secs(6));
        let ms = |v: &[Duration]| v.iter().map(Duration::as_millis).collect::<Vec<_>>();
        // The last pause is cut to what is left of the bound.
        assert_eq!(ms(&probes), [250, 750, 1_750, 3_750, 5_750, 6_000]);
    }

    #[tokio::test(start_paused = true)]
    async fn the_server_wait_ends_when_an_endpoint_answers_or_sending_stops() {
        let stop = StopHandle::default();
        let t0 = tokio::time::Instant::now();
        let mut n = 0;
        let found = wait_for_one(t0, Duration::from_secs(300), &stop, async || {
            n += 1;
            n == 3
        })
        .await;
        assert!(found);
        assert_eq!(t0.elapsed(), Duration::from_millis(1_750));
        let stopper = {
            let stop = stop.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_secs(10)).await;
                stop.stop_sending();
            })
        };
        let t1 = tokio::time::Instant::now();
        assert!(wait_for_one(t1, Duration::from_secs(300), &stop, async || false).await);
        assert_eq!(t1.elapsed(), Duration::from_secs(10));
        stopper.await.unwrap();
    }
}
