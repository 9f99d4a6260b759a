//! Request bodies and the cache key derived from them.
//!
//! The cache key is a SHA-256 of the model identity (`model_identity`: engine, model id, `weights-id`, and for a GGUF
//! its SHA-256, streamed through `schema::sha256_file_hex` and kept in a `<file>.sha256` note), the request body with
//! its keys sorted, and the sample index. The config name, base URL, key, headers and `stream` are not in it: replicas
//! share entries, renaming a model keeps them, and a streamed answer is the same entry as a whole one. Changing how a
//! body is built changes the keys of existing models.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use schema::PromptRecord;
use serde_json::{Map, Value};

use crate::config::{Engine, ModelConfig, TokenLimitField};

/// The JSON body for one prompt: the model's defaults with the prompt's `params` merged over them.
///
/// Order of precedence (later wins): model defaults, model `extra-body`, prompt params, prompt `extra_body`. The
/// token limit goes in the model's `token-limit-field`; a model with `sampling = false` never gets `temperature` or
/// `top_p`. A sampled request to the embedded model that names no seed gets one from the prompt's id and sample index
/// ([`prompt_seed`]), so its reply is reproducible (the seed is in the body, hence in the cache key).
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
        model.token_limit_field.as_str(),
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
    if let Some(route) = &model.route {
        body.insert("provider".into(), route.body());
    }
    for (k, v) in model.extra_body.iter().chain(p.extra_body.iter()) {
        body.insert(k.clone(), v.clone());
    }
    // A streaming response would not parse as one JSON document.
    body.remove("stream");
    if model.engine == Engine::Embedded
        && !body.contains_key("seed")
        && body
            .get("temperature")
            .and_then(Value::as_f64)
            .is_some_and(|t| t > 0.0)
    {
        body.insert(
            "seed".into(),
            Value::from(prompt_seed(&prompt.id, prompt.sample_index)),
        );
    }
    if !model.sampling {
        for k in ["temperature", "top_p"] {
            if body.remove(k).is_some() {
                warn_once(&model.name, k);
            }
        }
    }
    // One token-limit field only: the one the model takes.
    let other = match model.token_limit_field {
        TokenLimitField::MaxTokens => "max_completion_tokens",
        TokenLimitField::MaxCompletionTokens => "max_tokens",
    };
    if let Some(v) = body.remove(other) {
        body.entry(model.token_limit_field.as_str()).or_insert(v);
    }
    body
}

/// The seed of a sampled request to the embedded model that names none: a 32-bit number from a SHA-256 of the prompt's
/// id and sample index, so every sample of a prompt has its own and a rerun with an empty cache samples the same reply.
fn prompt_seed(id: &str, sample_index: u32) -> u64 {
    let hex = schema::sha256_hex(format!("{id}\u{1f}{sample_index}").as_bytes());
    u64::from_str_radix(&hex[..8], 16).unwrap_or(0)
}

/// Says once per model and parameter that a sampling parameter was left out.
fn warn_once(model: &str, param: &str) {
    static SEEN: OnceLock<Mutex<std::collections::HashSet<String>>> = OnceLock::new();
    let seen = SEEN.get_or_init(Default::default);
    if seen
        .lock()
        .map(|mut s| s.insert(format!("{model}\u{1f}{param}")))
        .unwrap_or(false)
    {
        tracing::info!(
            model,
            param,
            "This model takes no sampling parameters (`sampling = false`); not sending it."
        );
    }
}

/// The max_tokens a body asks for, if any.
pub(crate) fn body_max_tokens(body: &Map<String, Value>) -> Option<u32> {
    body.get("max_tokens")
        .or_else(|| body.get("max_completion_tokens"))
        .and_then(Value::as_u64)
        .map(|n| u32::try_from(n).unwrap_or(u32::MAX))
}

/// What identifies a model for caching: its engine, its model id, the declared `weights-id` and, for the embedded
/// engine, a hash of the GGUF's bytes.
///
/// Neither the config name nor the base URL is part of it, so replicas share entries and renaming a model keeps its
/// cache; two different weights behind one `model-id` never share entries when their `weights-id` (or GGUF) differ.
pub(crate) fn model_identity(model: &ModelConfig) -> String {
    let mut id = match model.engine {
        Engine::Openai => format!("openai:{}", model.model_id),
        Engine::Embedded => {
            let weights = model.gguf.as_deref().map(gguf_digest).unwrap_or_default();
            format!("embedded:{}:{weights}", model.model_id)
        }
    };
    if let Some(w) = &model.weights_id {
        id.push_str(":weights=");
        id.push_str(w);
    }
    id
}

/// `sha256:<hex>` of a GGUF file, computed once per file and kept (by size and modification time) in memory and in
/// a `<file>.sha256` note beside it; a file that cannot be read gives `unreadable:<name>`.
fn gguf_digest(path: &Path) -> String {
    /// (file, size, modification time in ns) → digest.
    type Memo = Mutex<HashMap<(PathBuf, u64, u128), String>>;
    static MEMO: OnceLock<Memo> = OnceLock::new();
    let Ok(meta) = std::fs::metadata(path) else {
        return format!("unreadable:{}", path.display());
    };
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    let key = (path.to_owned(), meta.len(), mtime);
    let memo = MEMO.get_or_init(Default::default);
    if let Some(d) = memo.lock().ok().and_then(|m| m.get(&key).cloned()) {
        return d;
    }
    let note = path.with_extension("gguf.sha256");
    let stamp = format!("{} {mtime}", meta.len());
    let from_note = std::fs::read_to_string(&note).ok().and_then(|t| {
        let (s, hex) = t.trim().rsplit_once(' ')?;
        (s == stamp).then(|| format!("sha256:{hex}"))
    });
    let digest = match from_note {
        Some(d) => d,
        // Streamed through the hash, so a GGUF of any size is never held in memory.
        None => match schema::sha256_file_hex(path) {
            Ok(hex) => {
                // A read-only folder just means the hash is computed again next time.
                let _ = schema::write_atomic(&note, format!("{stamp} {hex}\n").as_bytes());
                format!("sha256:{hex}")
            }
            Err(_) => format!("unreadable:{}", path.display()),
        },
    };
    if let Ok(mut m) = memo.lock() {
        m.insert(key, digest.clone());
    }
    digest
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_tell_apart_models_behind_one_id() {
        let a = ModelConfig::ad_hoc("http://127.0.0.1:1/v1", "local");
        let mut b = a.clone();
        b.weights_id = Some("q4_k_m".to_owned());
        assert_ne!(model_identity(&a), model_identity(&b));
        // Replicas and names do not matter.
        let mut c = b.clone();
        c.name = "other".to_owned();
        c.base_urls = vec!["http://127.0.0.1:2/v1".to_owned()];
        assert_eq!(model_identity(&b), model_identity(&c));
    }

    #[test]
    fn a_sampled_embedded_request_is_seeded_by_its_prompt_id_and_sample_index() {
        let mut m = ModelConfig::ad_hoc("http://127.0.0.1:1/v1", "smol");
        m.engine = Engine::Embedded;
        m.temperature = Some(0.7);
        let mut p = PromptRecord {
            id: "ifscale/n10/s0".to_owned(),
            messages: vec![schema::Message::user("Write.")],
            sample_index: 0,
            params: schema::RequestParams::default(),
            extra: Map::new(),
        };
        let seed = |m: &ModelConfig, p: &PromptRecord| request_body(m, p).get("seed").cloned();
        let first = seed(&m, &p).unwrap();
        assert_eq!(first, Value::from(prompt_seed("ifscale/n10/s0", 0)));
        // Pinned: a rerun must derive the same seed.
        assert_eq!(prompt_seed("ifscale/n10/s0", 0), 0x32c8_82dc);
        p.sample_index = 1;
        assert_ne!(seed(&m, &p).unwrap(), first);
        // A seed the prompt or the model names wins; greedy requests and other engines get none.
        p.params.seed = Some(5);
        assert_eq!(seed(&m, &p), Some(Value::from(5)));
        p.params.seed = None;
        p.params.temperature = Some(0.0);
        assert_eq!(seed(&m, &p), None);
        p.params.temperature = None;
        m.engine = Engine::Openai;
        assert_eq!(seed(&m, &p), None);
    }

    #[test]
    fn a_gguf_is_known_by_its_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let (x, y) = (dir.path().join("x.gguf"), dir.path().join("y.gguf"));
        std::fs::write(&x, b"weights one").unwrap();
        std::fs::write(&y, b"weights two").unwrap();
        let mut m = ModelConfig::ad_hoc("http://127.0.0.1:1/v1", "smol");
        m.engine = Engine::Embedded;
        m.gguf = Some(x.clone());
        let first = model_identity(&m);
        assert!(
            first.contains(&schema::sha256_hex(b"weights one")),
            "{first}"
        );
        // Same size, other bytes: another identity.
        m.gguf = Some(y);
        assert_ne!(model_identity(&m), first);
        // The hash is noted beside the file and reused.
        assert!(dir.path().join("x.gguf.sha256").is_file());
        m.gguf = Some(x);
        assert_eq!(model_identity(&m), first);
    }
}
