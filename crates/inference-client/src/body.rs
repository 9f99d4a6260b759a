//! Request bodies and the cache key derived from them.

use schema::PromptRecord;
use serde_json::{Map, Value};

use crate::config::{Engine, ModelConfig};

/// The JSON body for one prompt: the model's defaults with the prompt's `params` merged over them.
///
/// Order of precedence (later wins): model defaults, model `extra-body`, prompt params, prompt `extra_body`.
pub(crate) fn request_body(model: &ModelConfig, prompt: &PromptRecord) -> Map<String, Value> {
    let p = &prompt.params;
    let mut body = Map::new();
    body.insert("model".into(), Value::String(model.model_id.clone()));
    body.insert(
        "messages".into(),
        serde_json::to_value(&prompt.messages).unwrap_or(Value::Null),
    );
    let mut put = |k: &str, v: Option<Value>| {
        if let Some(v) = v {
            body.insert(k.to_owned(), v);
        }
    };
    put(
        "temperature",
        p.temperature.or(model.temperature).map(Value::from),
    );
    put("top_p", p.top_p.or(model.top_p).map(Value::from));
    put(
        "max_tokens",
        p.max_tokens.or(model.max_tokens).map(Value::from),
    );
    put("seed", p.seed.or(model.seed).map(Value::from));
    let stop = if p.stop.is_empty() {
        &model.stop
    } else {
        &p.stop
    };
    put(
        "stop",
        (!stop.is_empty()).then(|| Value::from(stop.clone())),
    );
    put(
        "reasoning_effort",
        p.reasoning_effort
            .clone()
            .or_else(|| model.reasoning_effort.clone())
            .map(Value::String),
    );
    if p.logprobs {
        body.insert("logprobs".into(), Value::Bool(true));
    }
    for (k, v) in model.extra_body.iter().chain(p.extra_body.iter()) {
        body.insert(k.clone(), v.clone());
    }
    // A streaming response would not parse as one JSON document.
    body.remove("stream");
    body
}

/// The max_tokens a body asks for, if any.
pub(crate) fn body_max_tokens(body: &Map<String, Value>) -> Option<u32> {
    body.get("max_tokens")
        .or_else(|| body.get("max_completion_tokens"))
        .and_then(Value::as_u64)
        .map(|n| u32::try_from(n).unwrap_or(u32::MAX))
}

/// What identifies a model for caching: its engine, its model id and, for the embedded engine, the weights file.
///
/// Neither the config name nor the base URL is part of it, so replicas share entries and renaming a model keeps its cache.
pub(crate) fn model_identity(model: &ModelConfig) -> String {
    match model.engine {
        Engine::Openai => format!("openai:{}", model.model_id),
        Engine::Embedded => {
            let weights = model
                .gguf
                .as_ref()
                .map(|g| {
                    let name = g
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    let len = std::fs::metadata(g).map(|m| m.len()).unwrap_or(0);
                    format!("{name}:{len}")
                })
                .unwrap_or_default();
            format!("embedded:{}:{weights}", model.model_id)
        }
    }
}

/// SHA-256 over the model identity, the canonical request body (keys sorted, `model` included) and the sample index.
pub(crate) fn cache_key(identity: &str, body: &Map<String, Value>, sample_index: u32) -> String {
    let mut doc = Map::new();
    doc.insert("identity".into(), Value::String(identity.to_owned()));
    doc.insert("body".into(), Value::Object(body.clone()));
    doc.insert("sample_index".into(), Value::from(sample_index));
    let mut bytes = Vec::with_capacity(512);
    write_canonical(&Value::Object(doc), &mut bytes);
    schema::sha256_hex(&bytes)
}

/// Compact JSON with object keys sorted at every level, so key order in configs never changes a key.
fn write_canonical(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push(b'{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(serde_json::to_string(k).unwrap_or_default().as_bytes());
                out.push(b':');
                write_canonical(&map[k], out);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(item, out);
            }
            out.push(b']');
        }
        other => out.extend_from_slice(other.to_string().as_bytes()),
    }
}

/// Input tokens estimated as characters / 4 over all message contents, plus 4 per message for the chat template.
pub fn estimate_input_tokens(prompt: &PromptRecord) -> u64 {
    prompt
        .messages
        .iter()
        .map(|m| (m.content.chars().count() as u64).div_ceil(4) + 4)
        .sum()
}
