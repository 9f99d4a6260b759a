//! One attempt and the records it fills: a response line started, an answer or a failure written into it, and
//! the error class names and credential-free URLs that messages use.

use super::*;

/// A response line for one prompt, not yet filled in (outcome `ok`, no content).
pub(crate) fn new_record(
    m: &ModelConfig,
    key: String,
    id: String,
    sample_index: u32,
    meta: Map<String, Value>,
    attempts: Vec<Attempt>,
    wall_s: f64,
) -> ResponseRecord {
    ResponseRecord {
        sample_index,
        wall_s,
        attempts,
        cache_key: key,
        prompt_meta: meta,
        ..ResponseRecord::new(id, m.name.clone())
    }
}

/// Fills a record from a completion (outcome, content, reasoning, usage, provenance) and counts its tokens;
/// returns what it cost (the provider's reported cost, else tokens × the model's prices).
pub(crate) fn fill_answer(
    record: &mut ResponseRecord,
    m: &ModelConfig,
    c: Completion,
    latency: Option<f64>,
    counters: &Counters,
) -> f64 {
    record.outcome = if c.finish_reason.as_deref() == Some("length") {
        Outcome::Truncated
    } else {
        Outcome::Ok
    };
    if record.outcome == Outcome::Truncated {
        counters.truncated.fetch_add(1, Ordering::Relaxed);
    }
    let cost = c
        .usage
        .cost_usd
        .unwrap_or_else(|| m.cost_from_usage(c.usage.prompt_tokens, c.usage.completion_tokens));
    counters
        .prompt_tokens
        .fetch_add(c.usage.prompt_tokens, Ordering::Relaxed);
    counters
        .completion_tokens
        .fetch_add(c.usage.completion_tokens, Ordering::Relaxed);
    record.content = Some(c.content);
    record.reasoning = c.reasoning;
    record.finish_reason = c.finish_reason;
    record.usage = c.usage;
    record.logprobs = c.logprobs;
    record.latency_s = latency;
    warn_if_other_model(m, c.served.model.as_deref());
    record.served = Some(c.served);
    cost
}

/// Marks a record failed with the failure's status, class and message.
pub(crate) fn fill_failure(record: &mut ResponseRecord, f: &Failure) {
    record.outcome = Outcome::Failed;
    let status = f.status.map(|s| format!("HTTP {s}, ")).unwrap_or_default();
    record.error = Some(format!("{status}{}: {}", class_name(f.class), f.message));
}

/// Warns once per model when the server says another model answered than the one requested (a dated version of
/// the requested id, or the id with a provider prefix, counts as the same).
pub(super) fn warn_if_other_model(m: &ModelConfig, served: Option<&str>) {
    static WARNED: std::sync::OnceLock<Mutex<std::collections::HashSet<String>>> =
        std::sync::OnceLock::new();
    let Some(served) = served else { return };
    let requested = m.model_id.rsplit('/').next().unwrap_or(&m.model_id);
    let bare = served.rsplit('/').next().unwrap_or(served);
    if bare.starts_with(requested) || requested.starts_with(bare) {
        return;
    }
    let first = WARNED
        .get_or_init(Default::default)
        .lock()
        .map(|mut w| w.insert(m.name.clone()))
        .unwrap_or(false);
    if first {
        tracing::warn!(model = %m.name, requested = %m.model_id, served, "The server answered with another model than the one requested; records keep the served name in `served.model`.");
    }
}

/// A URL without any `user:password@` part, for messages.
pub(crate) fn without_credentials(url: &str) -> String {
    match (url.find("://"), url.find('@')) {
        (Some(s), Some(at)) if at > s && !url[s + 3..at].contains('/') => {
            format!("{}{}", &url[..s + 3], &url[at + 1..])
        }
        _ => url.to_owned(),
    }
}

/// Snake-case name of an error class, as written in records.
pub(crate) fn class_name(c: ErrorClass) -> &'static str {
    match c {
        ErrorClass::RateLimited => "rate_limited",
        ErrorClass::ServerError => "server_error",
        ErrorClass::RequestTimeout => "request_timeout",
        ErrorClass::Conflict => "conflict",
        ErrorClass::Timeout => "timeout",
        ErrorClass::Connection => "connection",
        ErrorClass::InvalidJson => "invalid_json",
        ErrorClass::EmptyChoices => "empty_choices",
        ErrorClass::TruncatedBody => "truncated_body",
        ErrorClass::BadRequest => "bad_request",
        ErrorClass::Unauthorized => "unauthorized",
        ErrorClass::Forbidden => "forbidden",
        ErrorClass::NotFound => "not_found",
        ErrorClass::OtherStatus => "other_status",
        ErrorClass::Engine => "engine",
        ErrorClass::PaymentRequired => "payment_required",
        ErrorClass::ProviderError => "provider_error",
    }
}

/// Whether a failed attempt was given up after it was sent: it timed out (a connection that could not be made is
/// not a timeout), or its answer was cut off. The provider may have generated, and billed, that answer.
pub(crate) fn is_abandoned(f: &Failure) -> bool {
    matches!(f.class, ErrorClass::Timeout | ErrorClass::TruncatedBody)
}

/// One attempt: `timers` is the attempt's `timeout-s` and, when the answer streams, its `idle-timeout-s`.
pub(super) async fn send_once(
    client: &reqwest::Client,
    slot: &Slot,
    body: Vec<u8>,
    timers: (Duration, Option<Duration>),
    redactor: &Redactor,
    flights: Option<&Tracker>,
) -> Result<Completion, Failure> {
    // In flight from the POST to the reply's last byte (parsing it is the client's own time; a streamed reply is
    // read as it arrives).
    let flight = flights.map(Tracker::begin);
    // The URL parsed once per call; one that does not parse is given as text, and its request fails as such.
    match slot.parsed_url() {
        Some(url) => post_to(client, url, slot, body, timers, redactor, flight).await,
        None => post_to(client, slot.url(), slot, body, timers, redactor, flight).await,
    }
}

/// The POST of [`send_once`], streamed or whole; `flight` ends with the reply's last byte.
async fn post_to(
    client: &reqwest::Client,
    url: impl reqwest::IntoUrl,
    slot: &Slot,
    body: Vec<u8>,
    (timeout, idle): (Duration, Option<Duration>),
    redactor: &Redactor,
    flight: Option<crate::in_flight::Flight<'_>>,
) -> Result<Completion, Failure> {
    if let Some(idle) = idle {
        let reply =
            http::post_stream(client, url, body, timeout, idle, redactor, || slot.heard()).await;
        drop(flight);
        return reply;
    }
    let reply = http::post(client, url, body, timeout, redactor).await;
    drop(flight);
    let (status, bytes) = reply?;
    parse::parse_completion(&bytes).map_err(|mut f| {
        f.status = Some(status);
        f.message = redactor.clean(&f.message);
        f
    })
}

#[cfg(test)]
mod tests {
    use super::without_credentials;

    #[test]
    fn credentials_never_reach_a_message() {
        assert_eq!(
            without_credentials("https://user:pw@host.example/v1/chat/completions"),
            "https://host.example/v1/chat/completions"
        );
        assert_eq!(
            without_credentials("http://127.0.0.1:8000/v1/x@y"),
            "http://127.0.0.1:8000/v1/x@y"
        );
    }
}
