//! The mock's streamed replies: a request with `stream: true` gets its answer as server-sent events over a chunked
//! HTTP body (fed through a channel by a task of its own, one event a chunk), cut from the same reply document it would get whole, so every answer and every emulated provider
//! behaves alike in both modes.
//!
//! The events are what OpenAI-compatible servers send: a first chunk with the role, the reasoning
//! (`reasoning_content`) and then the content in pieces of `MockConfig::chunk_chars` characters, a last chunk with
//! the finish reason, a usage chunk when `stream_options.include_usage` asks for it, and `data: [DONE]`. An `error`
//! object of a 200 reply becomes a chunk carrying it, as OpenRouter sends mid-stream failures.
//!
//! `MockConfig::chunk_delay` is waited between two events; with `MockConfig::keep_alive`, comment lines
//! (`: keep-alive`) are sent at that interval while the answer is waited for (the latency, and long delays).

use std::io;
use std::time::Duration;

use bytes::Bytes;
use hyper::Response;
use serde_json::{Map, Value, json};
use tokio::sync::mpsc::Sender;

use crate::http::{self, Body};

/// What a request asks of streaming: `None` when it does not stream, else whether it wants the usage chunk.
pub(crate) fn requested(body: &[u8]) -> Option<bool> {
    let v: Value = serde_json::from_slice(body).ok()?;
    if v.get("stream").and_then(Value::as_bool) != Some(true) {
        return None;
    }
    Some(
        v.pointer("/stream_options/include_usage")
            .and_then(Value::as_bool)
            .unwrap_or(false),
    )
}

/// How a stream ends.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum End {
    /// Every event, then `[DONE]` and the body's end.
    Whole,
    /// Half the events, then the connection closes (a cut-off body).
    Cut,
    /// Half the events, then silence for the given time, then the connection closes.
    Silent(Duration),
}

/// How events are paced.
pub(crate) struct Pace {
    /// Waited before the first event.
    pub(crate) latency: Duration,
    /// Waited between two events.
    pub(crate) delay: Duration,
    /// Interval of keep-alive comments while waiting.
    pub(crate) keep_alive: Option<Duration>,
}

/// The data of each event for a whole reply document `reply` (without `[DONE]`).
pub(crate) fn events(reply: &str, chunk_chars: usize, include_usage: bool) -> Vec<String> {
    let Ok(v) = serde_json::from_str::<Value>(reply) else {
        // Not JSON: sent as it is, so the client sees an invalid chunk.
        return vec![reply.replace('\n', " ")];
    };
    let mut head = Map::new();
    head.insert("object".into(), Value::from("chat.completion.chunk"));
    for k in ["id", "model", "system_fingerprint", "provider"] {
        if let Some(x) = v.get(k) {
            head.insert(k.into(), x.clone());
        }
    }
    // Every chunk begins with the same fields: written once, and each chunk's own fields appended to it (the same
    // text as serializing the whole chunk object, without a copy of the head per chunk).
    let head = Value::Object(head).to_string();
    let open = &head[..head.len() - 1];
    let chunk = |choices: Value, extra: &[(&str, Value)]| {
        let mut c = String::with_capacity(open.len() + 96);
        c.push_str(open);
        for (k, x) in
            std::iter::once(("choices", &choices)).chain(extra.iter().map(|(k, x)| (*k, x)))
        {
            if c.len() > 1 {
                c.push(',');
            }
            c.push('"');
            c.push_str(k);
            c.push_str("\":");
            c.push_str(&x.to_string());
        }
        c.push('}');
        c
    };
    let usage = v.get("usage").cloned();
    let mut out = Vec::new();
    if let Some(err) = v.get("error").filter(|e| !e.is_null()) {
        let mut extra = vec![("error", err.clone())];
        if let Some(u) = &usage {
            extra.push(("usage", u.clone()));
        }
        out.push(chunk(json!([]), &extra));
        return out;
    }
    let choice = v
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first());
    if let Some(choice) = choice {
        let delta = |d: Value| json!([{"index": 0, "delta": d, "finish_reason": null}]);
        out.push(chunk(
            delta(json!({"role": "assistant", "content": ""})),
            &[],
        ));
        let message = choice.get("message").cloned().unwrap_or(Value::Null);
        let text = |k: &str| message.get(k).and_then(Value::as_str).unwrap_or("");
        for piece in pieces(text("reasoning_content"), chunk_chars) {
            out.push(chunk(delta(json!({"reasoning_content": piece})), &[]));
        }
        let mut logprobs = choice.get("logprobs").cloned();
        for piece in pieces(text("content"), chunk_chars) {
            let mut c = json!([{"index": 0, "delta": {"content": piece}, "finish_reason": null}]);
            if let Some(lp) = logprobs.take().filter(|l| !l.is_null()) {
                c[0]["logprobs"] = lp;
            }
            out.push(chunk(c, &[]));
        }
        let mut last =
            json!([{"index": 0, "delta": {}, "finish_reason": choice.get("finish_reason")}]);
        if let Some(e) = choice.get("error") {
            last[0]["error"] = e.clone();
        }
        out.push(chunk(last, &[]));
    }
    if include_usage || choice.is_none() {
        let extra: Vec<(&str, Value)> = usage.map(|u| ("usage", u)).into_iter().collect();
        out.push(chunk(json!([]), &extra));
    }
    out
}

/// `text` in pieces of at most `n` characters (none for an empty text).
fn pieces(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(n.max(1)).map(|c| c.iter().collect()).collect()
}

/// A 200 with `events` as a `text/event-stream` body, paced and ended as asked by a task of its own; `done` is
/// called when the task has sent what it would send.
pub(crate) fn respond(
    events: Vec<String>,
    pace: Pace,
    end: End,
    done: impl FnOnce() + Send + 'static,
) -> Response<Body> {
    let (tx, body) = http::channel();
    tokio::spawn(async move {
        let sent = write(&tx, &events, &pace, end).await;
        done();
        if let Err(e) = sent
            && matches!(end, End::Cut | End::Silent(_))
        {
            // The connection is aborted mid-body, as a provider that dies does.
            let _ = tx.send(Err(e)).await;
        }
    });
    http::response(
        200,
        "text/event-stream",
        &[("cache-control", "no-cache")],
        body,
    )
}

/// Sends `events` paced and ended as asked; an error once the stream is cut, goes silent or the client is gone.
async fn write(
    tx: &Sender<io::Result<Bytes>>,
    events: &[String],
    pace: &Pace,
    end: End,
) -> io::Result<()> {
    let upto = match end {
        End::Whole => events.len(),
        End::Cut | End::Silent(_) => events.len().div_ceil(2),
    };
    wait(tx, pace.latency, pace.keep_alive).await?;
    for (i, e) in events[..upto].iter().enumerate() {
        if i > 0 {
            wait(tx, pace.delay, pace.keep_alive).await?;
        }
        send(tx, format!("data: {e}\n\n")).await?;
    }
    match end {
        End::Whole => send(tx, "data: [DONE]\n\n".to_owned()).await,
        End::Cut => Err(io::Error::other("cut")),
        End::Silent(hang) => {
            tokio::time::sleep(hang).await;
            Err(io::Error::other("silent"))
        }
    }
}

/// Waits `d`, sending a keep-alive comment every `every` of it.
async fn wait(
    tx: &Sender<io::Result<Bytes>>,
    d: Duration,
    every: Option<Duration>,
) -> io::Result<()> {
    let Some(every) = every.filter(|e| !e.is_zero()) else {
        if !d.is_zero() {
            tokio::time::sleep(d).await;
        }
        return Ok(());
    };
    let until = tokio::time::Instant::now() + d;
    loop {
        let now = tokio::time::Instant::now();
        if now >= until {
            return Ok(());
        }
        tokio::time::sleep((until - now).min(every)).await;
        if tokio::time::Instant::now() < until {
            send(tx, ": keep-alive\n\n".to_owned()).await?;
        }
    }
}

/// One chunk of the body; an error when the client is gone.
async fn send(tx: &Sender<io::Result<Bytes>>, text: String) -> io::Result<()> {
    tx.send(Ok(Bytes::from(text)))
        .await
        .map_err(|_| io::Error::other("the client closed the stream"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_event_is_the_chunk_object_serialized_with_its_head_first() {
        let reply = json!({
            "id": "c1", "model": "m", "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello world"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 2}
        })
        .to_string();
        let sent = events(&reply, 6, true);
        let head = r#"{"object":"chat.completion.chunk","id":"c1","model":"m","#;
        assert_eq!(
            sent,
            [
                format!(
                    r#"{head}"choices":[{{"index":0,"delta":{{"role":"assistant","content":""}},"finish_reason":null}}]}}"#
                ),
                format!(
                    r#"{head}"choices":[{{"index":0,"delta":{{"content":"Hello "}},"finish_reason":null}}]}}"#
                ),
                format!(
                    r#"{head}"choices":[{{"index":0,"delta":{{"content":"world"}},"finish_reason":null}}]}}"#
                ),
                format!(r#"{head}"choices":[{{"index":0,"delta":{{}},"finish_reason":"stop"}}]}}"#),
                format!(
                    r#"{head}"choices":[],"usage":{{"prompt_tokens":3,"completion_tokens":2}}}}"#
                ),
            ]
        );
        for e in &sent {
            assert!(serde_json::from_str::<Value>(e).is_ok(), "{e}");
        }
        // A reply without head fields still gives JSON objects.
        let bare = events(r#"{"choices":[]}"#, 6, false);
        assert_eq!(bare, [r#"{"object":"chat.completion.chunk","choices":[]}"#]);
    }
}
