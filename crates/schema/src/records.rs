//! Records shared by every benchmark: prompts in, responses out, and the attempts between them.
//!
//! `ResponseReply` is the part of a response line that scoring reads (the answer, how it ended, the token counts); the
//! prompt's metadata is skipped without being built. `Served` is what the server said about itself (provenance).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One chat message in the OpenAI format.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub role: String,
    pub content: String,
}

impl Message {
    pub fn system(content: impl Into<String>) -> Message {
        Message {
            role: "system".to_owned(),
            content: content.into(),
        }
    }
    pub fn user(content: impl Into<String>) -> Message {
        Message {
            role: "user".to_owned(),
            content: content.into(),
        }
    }
}

/// Per-prompt request settings that override the model's defaults.
///
/// Every field that is set becomes part of the request body and therefore of the cache key.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stop: Vec<String>,
    /// Ask for token log-probabilities (the OpenAI `logprobs` flag).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub logprobs: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<String>,
    /// Extra body fields passed through verbatim (e.g. `repeat_penalty` for llama.cpp).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub extra_body: Map<String, Value>,
}

/// One line of a prompts file: an id, the chat messages, and any other fields, which ride along untouched.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptRecord {
    pub id: String,
    pub messages: Vec<Message>,
    /// Which independent sample of the same request this is (part of the cache key).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub sample_index: u32,
    #[serde(default, skip_serializing_if = "is_default_params")]
    pub params: RequestParams,
    /// Benchmark-specific fields (keywords, traversal, seed, ...), kept in order and passed through.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn is_default_params(p: &RequestParams) -> bool {
    *p == RequestParams::default()
}

/// How a request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The model stopped by itself; `content` is its answer.
    Ok,
    /// The model hit `max_tokens` (`finish_reason = "length"`): never score this as a finished answer.
    Truncated,
    /// No usable response after all attempts; `error` says why.
    Failed,
}

/// Why an attempt did not produce a usable response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    RateLimited,
    ServerError,
    RequestTimeout,
    Conflict,
    Timeout,
    Connection,
    InvalidJson,
    EmptyChoices,
    TruncatedBody,
    BadRequest,
    Unauthorized,
    Forbidden,
    NotFound,
    OtherStatus,
    Engine,
    /// HTTP 402: the account is out of credits.
    PaymentRequired,
    /// A provider failure reported inside a 200 response (an `error` object, or `finish_reason: "error"`).
    ProviderError,
}

/// One HTTP (or engine) attempt of a request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attempt {
    /// 1-based attempt number.
    pub n: u32,
    /// HTTP status, when a response arrived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// `None` for the successful attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_class: Option<ErrorClass>,
    /// Seconds this attempt took.
    pub latency_s: f64,
    /// Seconds waited before the next attempt (0 for the last one).
    pub delay_s: f64,
    /// The client gave this attempt up after sending it (a timeout, or an answer cut off): the provider may have
    /// generated, and billed, an answer nobody received. Absent (false) in older files.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub abandoned: bool,
}

/// Token usage and provider-reported cost.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
    /// Cost in USD as reported by the provider (OpenRouter's `usage.cost`), when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

impl Usage {
    /// Visible output tokens: completion tokens minus reasoning tokens (OpenAI and OpenRouter count reasoning in
    /// `completion_tokens`; a provider that reports no reasoning tokens gives all completion tokens).
    pub fn visible_tokens(&self) -> u64 {
        self.completion_tokens
            .saturating_sub(self.reasoning_tokens.unwrap_or(0))
    }
}

/// Log-probability summary of a completion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Logprobs {
    /// Mean natural-log probability per generated token.
    pub mean: f64,
    pub tokens: u64,
}

/// The fields of a response line that scoring reads: which prompt and sample, which model, how it ended, the
/// answer and the token counts. Everything else (the prompt's metadata above all) is skipped without being built.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ResponseReply {
    pub id: String,
    #[serde(default)]
    pub sample_index: u32,
    pub model: String,
    pub outcome: Outcome,
    #[serde(default)]
    pub content: Option<String>,
    pub usage: Usage,
}

impl From<&ResponseRecord> for ResponseReply {
    fn from(r: &ResponseRecord) -> ResponseReply {
        ResponseReply {
            id: r.id.clone(),
            sample_index: r.sample_index,
            model: r.model.clone(),
            outcome: r.outcome,
            content: r.content.clone(),
            usage: r.usage.clone(),
        }
    }
}

/// One line of a responses file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponseRecord {
    pub schema_version: u32,
    /// The prompt's id.
    pub id: String,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub sample_index: u32,
    /// The configured model name (not the replica that served it).
    pub model: String,
    pub outcome: Outcome,
    /// The answer with any reasoning removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Reasoning text: the `reasoning` / `reasoning_content` field or `<think>` blocks split off the content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    pub usage: Usage,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logprobs: Option<Logprobs>,
    /// Seconds of the successful attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_s: Option<f64>,
    /// Seconds from the first attempt's start to the end of the last one, including back-off.
    pub wall_s: f64,
    pub attempts: Vec<Attempt>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The cache key this response is stored under (hex SHA-256).
    pub cache_key: String,
    /// True when this line was served from the cache in this run.
    #[serde(default)]
    pub cached: bool,
    /// The prompt's ride-along fields, copied so a responses file is self-describing.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub prompt_meta: Map<String, Value>,
    /// Who actually answered, as the server said (absent on failed and older records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub served: Option<Served>,
}

impl ResponseRecord {
    /// A line for `model`'s answer to prompt `id`, sample 0, not yet filled in: outcome `ok`, no content, usage,
    /// attempts or cache key. The client fills in the rest; a test sets what it needs with struct update syntax
    /// (`ResponseRecord { content: Some(..), ..ResponseRecord::new("p1", "m") }`).
    pub fn new(id: impl Into<String>, model: impl Into<String>) -> ResponseRecord {
        ResponseRecord {
            schema_version: crate::SCHEMA_VERSION,
            id: id.into(),
            sample_index: 0,
            model: model.into(),
            outcome: Outcome::Ok,
            content: None,
            reasoning: None,
            finish_reason: None,
            usage: Usage::default(),
            logprobs: None,
            latency_s: None,
            wall_s: 0.0,
            attempts: Vec::new(),
            error: None,
            cache_key: String::new(),
            cached: false,
            prompt_meta: Map::new(),
            served: None,
        }
    }

    /// How many of its attempts the client abandoned after sending them (timed out or cut off).
    pub fn abandoned_attempts(&self) -> usize {
        self.attempts.iter().filter(|a| a.abandoned).count()
    }
}

/// Provenance of an answer: what the server reported about itself, and which replica it was.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Served {
    /// The `model` the server says answered (may differ from the requested id: a dated version, an alias).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_fingerprint: Option<String>,
    /// OpenRouter's upstream `provider`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Index of the base URL (in the model's `base-urls`) that answered; never the URL's secrets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica: Option<u32>,
    /// The response `id` (or the `x-request-id` header).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// The seed the server says it sampled with (a top-level `seed`, as the embedded model sends for a sampled reply).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}
