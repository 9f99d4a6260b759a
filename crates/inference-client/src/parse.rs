//! Turning an HTTP response into a completion, or into a classified failure.
//!
//! A 200 that carries an `error` object, or a choice with `finish_reason: "error"`, is a retryable provider error. What
//! the server says about itself (model, fingerprint, upstream provider, request id) is kept as `schema::Served`.
//! `split_think` is the one place a `<think>` block is split off into the record's `reasoning`.

use std::time::Duration;

use schema::{ErrorClass, Logprobs, Served, Usage};
use serde_json::Value;

/// A usable completion.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Completion {
    pub(crate) content: String,
    pub(crate) reasoning: Option<String>,
    pub(crate) finish_reason: Option<String>,
    pub(crate) usage: Usage,
    pub(crate) logprobs: Option<Logprobs>,
    /// What the server said about itself (the replica is filled in by the caller).
    pub(crate) served: Served,
}

/// A failed attempt: its class, the status if a response arrived, a key-free message and the server's retry hints.
#[derive(Debug, Clone)]
pub(crate) struct Failure {
    pub(crate) class: ErrorClass,
    pub(crate) status: Option<u16>,
    pub(crate) message: String,
    pub(crate) retry_after: Option<Duration>,
    /// The server's `x-should-retry` header.
    pub(crate) should_retry: Option<bool>,
    /// Usage the failed answer still reported (a provider may bill a failed attempt).
    pub(crate) usage: Option<Usage>,
    /// The connection was made, the request went out, and the connection closed before any answer: most often a
    /// keep-alive connection the server had just closed (llama-server closes one after each streamed answer, without
    /// saying so), which the client reused before it noticed. Proof that something listens, not that it is dead.
    pub(crate) closed: bool,
}

impl Failure {
    /// This failure with the usage its answer reported.
    pub(crate) fn with_usage(mut self, usage: Option<Usage>) -> Failure {
        self.usage = usage;
        self
    }
}

/// The server's error message from a JSON error body (`{"error": {"message": ...}}`), else the body's first 200 characters.
pub(crate) fn error_message(body: &[u8]) -> String {
    if let Ok(v) = serde_json::from_slice::<Value>(body)
        && let Some(msg) = error_message_of(&v)
    {
        return msg;
    }
    truncate_chars(&String::from_utf8_lossy(body), 200)
}

/// The message of a parsed JSON document's `error` object, if it has one.
fn error_message_of(v: &Value) -> Option<String> {
    let err = v.get("error")?;
    let msg = err
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_else(|| err.to_string());
    Some(truncate_chars(&msg, 300))
}

fn truncate_chars(s: &str, n: usize) -> String {
    let s = s.trim();
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

/// A failure of a 200 response (its class and message; no hints).
pub(crate) fn failure_200(class: ErrorClass, message: String) -> Failure {
    Failure {
        class,
        status: Some(200),
        message,
        retry_after: None,
        should_retry: None,
        usage: None,
        closed: false,
    }
}

/// Parses a 200 body into a completion.
pub(crate) fn parse_completion(body: &[u8]) -> Result<Completion, Failure> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| failure_200(ErrorClass::InvalidJson, format!("invalid JSON: {e}")))?;
    completion_of(&v)
}

/// A completion from a parsed reply document (the non-streaming reply, or the one a stream's chunks add up to).
pub(crate) fn completion_of(v: &Value) -> Result<Completion, Failure> {
    let fail = failure_200;
    // Some providers (OpenRouter) report upstream errors with status 200 and an `error` object.
    if let Some(err) = v.get("error").filter(|e| !e.is_null()) {
        let code = err
            .get("code")
            .and_then(Value::as_u64)
            .and_then(|c| u16::try_from(c).ok());
        let class = code.map_or(ErrorClass::ProviderError, crate::retry::status_class);
        let message = error_message_of(v).unwrap_or_default();
        let mut f = fail(class, format!("error in body: {message}"));
        f.usage = v.get("usage").map(|u| parse_usage(Some(u)));
        return Err(f);
    }
    let choice = v
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .ok_or_else(|| fail(ErrorClass::EmptyChoices, "response has no choices".into()))?;
    let message = choice
        .get("message")
        .ok_or_else(|| fail(ErrorClass::InvalidJson, "choices[0] has no message".into()))?;
    let raw_content = match message.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    };
    let field_reasoning = ["reasoning_content", "reasoning"].iter().find_map(|k| {
        message
            .get(*k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    });
    let (content, think) = split_think(&raw_content);
    let reasoning = match (field_reasoning, think) {
        (Some(a), Some(b)) => Some(format!("{a}\n{b}")),
        (a, b) => a.or(b),
    };
    let finish_reason = choice
        .get("finish_reason")
        .and_then(Value::as_str)
        .map(str::to_owned);
    // OpenRouter ends a choice with `finish_reason: "error"` when the upstream provider failed mid-answer.
    if finish_reason.as_deref() == Some("error") {
        let detail = choice
            .get("error")
            .map(|e| format!(": {}", error_message(e.to_string().as_bytes())))
            .unwrap_or_default();
        let mut f = fail(
            ErrorClass::ProviderError,
            format!("the provider ended the answer with finish_reason \"error\"{detail}"),
        );
        f.usage = v.get("usage").map(|u| parse_usage(Some(u)));
        return Err(f);
    }
    let usage = parse_usage(v.get("usage"));
    let logprobs = choice.get("logprobs").and_then(parse_logprobs);
    let text = |k: &str| {
        v.get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    let served = Served {
        model: text("model"),
        system_fingerprint: text("system_fingerprint"),
        provider: text("provider"),
        replica: None,
        request_id: text("id"),
        seed: v.get("seed").and_then(Value::as_u64),
    };
    Ok(Completion {
        content,
        reasoning,
        finish_reason,
        usage,
        logprobs,
        served,
    })
}

pub(crate) fn parse_usage(u: Option<&Value>) -> Usage {
    let Some(u) = u else { return Usage::default() };
    let n = |v: Option<&Value>| v.and_then(Value::as_u64);
    Usage {
        prompt_tokens: n(u.get("prompt_tokens")).unwrap_or(0),
        completion_tokens: n(u.get("completion_tokens")).unwrap_or(0),
        reasoning_tokens: n(u.pointer("/completion_tokens_details/reasoning_tokens"))
            .or_else(|| n(u.get("reasoning_tokens"))),
        cost_usd: u.get("cost").and_then(Value::as_f64),
    }
}

/// Mean token log-prob from OpenAI's `logprobs.content[].logprob`.
fn parse_logprobs(lp: &Value) -> Option<Logprobs> {
    let items = lp.get("content")?.as_array()?;
    let values: Vec<f64> = items
        .iter()
        .filter_map(|t| t.get("logprob").and_then(Value::as_f64))
        .collect();
    if values.is_empty() {
        return None;
    }
    Some(Logprobs {
        mean: values.iter().sum::<f64>() / values.len() as f64,
        tokens: values.len() as u64,
    })
}

/// Splits `<think>…</think>` blocks off the answer.
///
/// An unclosed `<think>` (cut by `max_tokens`) makes the rest reasoning; a `</think>` without an opening tag
/// (templates that put `<think>` in the prompt) makes everything before it reasoning.
pub(crate) fn split_think(text: &str) -> (String, Option<String>) {
    const OPEN: &str = "<think>";
    const CLOSE: &str = "</think>";
    if !text.contains(OPEN) && !text.contains(CLOSE) {
        return (text.to_owned(), None);
    }
    let mut answer = String::new();
    let mut thoughts: Vec<&str> = Vec::new();
    let mut rest = text;
    // Closing tag before any opening tag: the prefix is reasoning.
    if let Some(c) = rest.find(CLOSE)
        && rest.find(OPEN).is_none_or(|o| c < o)
    {
        thoughts.push(rest[..c].trim());
        rest = &rest[c + CLOSE.len()..];
    }
    while let Some(o) = rest.find(OPEN) {
        answer.push_str(&rest[..o]);
        let after = &rest[o + OPEN.len()..];
        match after.find(CLOSE) {
            Some(c) => {
                thoughts.push(after[..c].trim());
                rest = &after[c + CLOSE.len()..];
            }
            None => {
                thoughts.push(after.trim());
                rest = "";
            }
        }
    }
    answer.push_str(rest);
    let thoughts: Vec<&str> = thoughts.into_iter().filter(|t| !t.is_empty()).collect();
    let reasoning = (!thoughts.is_empty()).then(|| thoughts.join("\n"));
    (answer.trim().to_owned(), reasoning)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn think_blocks_are_split_off() {
        assert_eq!(split_think("plain"), ("plain".into(), None));
        assert_eq!(
            split_think("<think>hmm</think>\nAnswer"),
            ("Answer".into(), Some("hmm".into()))
        );
        assert_eq!(
            split_think("pre-thought</think>Answer"),
            ("Answer".into(), Some("pre-thought".into()))
        );
        assert_eq!(
            split_think("A<think>cut off"),
            ("A".into(), Some("cut off".into()))
        );
        assert_eq!(
            split_think("<think>a</think>x<think>b</think>y"),
            ("xy".into(), Some("a\nb".into()))
        );
    }

    #[test]
    fn usage_logprobs_and_reasoning_fields() {
        let body = br#"{"choices":[{"message":{"content":"hi","reasoning_content":"r"},"finish_reason":"length",
            "logprobs":{"content":[{"logprob":-1.0},{"logprob":-3.0}]}}],
            "usage":{"prompt_tokens":5,"completion_tokens":2,"completion_tokens_details":{"reasoning_tokens":1},"cost":0.01}}"#;
        let c = parse_completion(body).unwrap();
        assert_eq!(c.content, "hi");
        assert_eq!(c.reasoning.as_deref(), Some("r"));
        assert_eq!(c.finish_reason.as_deref(), Some("length"));
        assert_eq!(
            c.usage,
            Usage {
                prompt_tokens: 5,
                completion_tokens: 2,
                reasoning_tokens: Some(1),
                cost_usd: Some(0.01)
            }
        );
        assert_eq!(
            c.logprobs,
            Some(Logprobs {
                mean: -2.0,
                tokens: 2
            })
        );
    }
}
