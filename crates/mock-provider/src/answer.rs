//! The mock's answers: the fault a request gets (the script, then the seeded random draw), the deterministic
//! completion and embedding documents, and the scripted contents.

use serde_json::{Value, json};

use crate::{Fault, Shared};

pub(crate) fn pick_fault(sh: &Shared) -> Option<Fault> {
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
pub(crate) fn scripted(last: &str, sh: &Shared) -> Option<String> {
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
pub(crate) fn embedding_reply(body: &[u8]) -> String {
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

pub(crate) fn completion(body: &[u8], sh: &Shared) -> String {
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

/// Bytes of a request body without `stream` and `stream_options` (transport, not content).
pub(crate) fn content_len(body: &[u8]) -> usize {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(mut m)) if m.contains_key("stream") => {
            m.remove("stream");
            m.remove("stream_options");
            serde_json::to_vec(&Value::Object(m)).map_or(body.len(), |v| v.len())
        }
        _ => body.len(),
    }
}
