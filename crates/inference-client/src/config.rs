//! Model declarations: `configs/models.toml` and ad-hoc models from the command line.
//!
//! Per model: the engine (`openai`, or `embedded` for the local GGUF), its base URLs (replicas) and the variable that
//! holds its key, the request style (`token-limit-field`, `sampling`), limits checked before sending (`output-cap`,
//! `context-window`), `headers` whose secrets come from the environment, `weights-id` (part of the cache key),
//! `stream`, `timeout-s` (to the first byte when streaming, the whole reply otherwise), `idle-timeout-s` (silence
//! between streamed chunks), `max-attempts`, `bills-abandoned`, `server-wait-s`, prices and `batch`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::Error;

/// How a model is reached.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Engine {
    /// An OpenAI-compatible Chat Completions server (OpenRouter, OpenAI, vLLM, llama.cpp server, Ollama, ...).
    #[default]
    Openai,
    /// The local llama.cpp model, started in-process and then spoken to over HTTP on 127.0.0.1 like any other server.
    Embedded,
}

impl Engine {
    pub fn as_str(self) -> &'static str {
        match self {
            Engine::Openai => "openai",
            Engine::Embedded => "embedded",
        }
    }
}

/// Which body field carries the output-token limit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TokenLimitField {
    /// `max_tokens` (most servers).
    #[default]
    MaxTokens,
    /// `max_completion_tokens` (OpenAI's o-series and newer models, which reject `max_tokens`).
    MaxCompletionTokens,
}

impl TokenLimitField {
    pub fn as_str(self) -> &'static str {
        match self {
            TokenLimitField::MaxTokens => "max_tokens",
            TokenLimitField::MaxCompletionTokens => "max_completion_tokens",
        }
    }
}

/// How a model's provider takes batch jobs (`cargo xtask … --batch`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum BatchMode {
    /// The OpenAI Batch API: upload the input file (`/v1/files`), create the batch (`/v1/batches`), poll it,
    /// download the output and error files.
    Openai,
    /// Write the input file and leave it for an offline runner (vLLM's `run_batch`); its output file is read by
    /// the next run.
    File,
    /// No batch jobs: `--batch` sends this model's requests one by one as usual.
    None,
}

impl BatchMode {
    pub fn as_str(self) -> &'static str {
        match self {
            BatchMode::Openai => "openai",
            BatchMode::File => "file",
            BatchMode::None => "none",
        }
    }
}

/// A custom header's value: literal text, or `{ env = "VAR" }` to read a secret from the environment (never logged).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum HeaderValue {
    Text(String),
    Env { env: String },
}

/// One model: where it lives, how to authenticate, its default sampling parameters and its limits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ModelConfig {
    /// The name runs and records use (the `[models.<name>]` key); not part of the cache key.
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub engine: Engine,
    /// One or more replicas of the same model, load-balanced; empty for `engine = "embedded"`.
    #[serde(default)]
    pub base_urls: Vec<String>,
    /// Name of the environment variable holding the API key (never the key itself).
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// The provider's model id, sent as `model` in the request body.
    pub model_id: String,
    #[serde(default)]
    pub temperature: Option<f64>,
    #[serde(default)]
    pub top_p: Option<f64>,
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// The body field the token limit is sent in (`max_tokens` or `max_completion_tokens`).
    #[serde(default)]
    pub token_limit_field: TokenLimitField,
    /// `false` for models that reject sampling parameters (OpenAI's o-series): `temperature` and `top_p` are never
    /// sent, whatever the model or prompt asks.
    #[serde(default = "default_true")]
    pub sampling: bool,
    /// The provider's maximum output tokens per request; a larger `max-tokens` is refused before anything is sent.
    #[serde(default)]
    pub output_cap: Option<u32>,
    /// The model's context window in tokens; a prompt estimate plus `max-tokens` above it is refused before sending.
    #[serde(default)]
    pub context_window: Option<u32>,
    /// Extra HTTP headers (e.g. OpenRouter's `HTTP-Referer` and `X-Title`, Azure's `api-key = { env = "VAR" }`).
    #[serde(default)]
    pub headers: BTreeMap<String, HeaderValue>,
    /// What distinguishes these weights from others served under the same `model-id` (a local server's GGUF, a
    /// fine-tune); part of the cache identity.
    #[serde(default)]
    pub weights_id: Option<String>,
    #[serde(default)]
    pub seed: Option<u64>,
    #[serde(default)]
    pub stop: Vec<String>,
    /// Sent as `reasoning_effort` (e.g. "low", "medium", "high").
    #[serde(default)]
    pub reasoning_effort: Option<String>,
    /// A router's upstream providers (`[models.<name>.route]`: `order`, `allow-fallbacks`, `quantizations`), sent
    /// as the request's `provider` object; see `crate::route`. A `provider` in `extra-body` overrides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<crate::route::Route>,
    /// Extra request body fields, passed through verbatim (e.g. `repeat_penalty`, `reasoning = { effort = "high" }`).
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, serde_json::Value>")]
    pub extra_body: Map<String, Value>,
    /// Most requests in flight per base URL (adaptive concurrency never exceeds it).
    #[serde(default = "default_max_concurrency")]
    pub max_concurrency: usize,
    /// Seconds one attempt may wait for its answer to begin. Streaming (`stream = true`): from sending the request
    /// to the first byte of the response body (queueing and prefill of a long prompt); the answer's length is then
    /// bounded by `idle-timeout-s` alone. Not streaming: the whole attempt, from sending to the reply's last byte.
    #[serde(default = "default_timeout_s")]
    pub timeout_s: f64,
    /// Streaming only: seconds of silence (no byte at all, keep-alive comments included) between two pieces of
    /// the response body, after the first, before the attempt is abandoned. It never bounds how long an answer
    /// takes, only how long the connection may stay silent.
    #[serde(default = "default_idle_timeout_s")]
    pub idle_timeout_s: f64,
    /// Whether requests stream their answers (server-sent events, `stream: true` with usage in the last chunk).
    /// `false` for a provider that cannot stream: the whole reply is then waited for, bounded by `timeout-s`. Batch
    /// jobs and embeddings never stream. Streaming is transport only: it is not part of the cache key.
    #[serde(default = "default_true")]
    pub stream: bool,
    /// Whether the provider bills an attempt the client abandoned (timed out or cut off after it was sent); the
    /// spend ledger then counts each one at its worst case (prompt estimate plus `max-tokens`). Unset means true
    /// when any base URL is `https://`, false for `http://` and the embedded engine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bills_abandoned: Option<bool>,
    /// Seconds to wait for a server that has not answered yet (nothing listens on its port, as while a vLLM server
    /// loads its weights) before this model is stopped with an error naming the URL; unset means 300.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_wait_s: Option<f64>,
    /// Attempts per request before giving up (the first try included). A first attempt whose pooled connection was
    /// closed by the server before any answer is sent again at once on a new connection, and that resend is not
    /// counted (both are recorded).
    #[serde(default = "default_max_attempts")]
    pub max_attempts: u32,
    /// First retry delay in seconds; doubles each attempt, with full jitter.
    #[serde(default = "default_retry_base_s")]
    pub retry_base_s: f64,
    /// Longest delay between two attempts in seconds (a longer `Retry-After` is still honoured, up to 10 minutes).
    #[serde(default = "default_retry_max_s")]
    pub retry_max_s: f64,
    /// USD per million input tokens.
    #[serde(default)]
    pub price_in_per_mtok: f64,
    /// USD per million output tokens.
    #[serde(default)]
    pub price_out_per_mtok: f64,
    /// How `--batch` runs this model's requests: `"openai"` (the provider's Batch API), `"file"` (an input file for
    /// vLLM's `run_batch`, whose output the next run reads) or `"none"`; unset means `"openai"` when every base URL
    /// is `https://api.openai.com/…`, else `"none"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch: Option<BatchMode>,
    /// Share of the listed prices a batch job is billed, for its reserved worst case and its recorded cost; unset
    /// means 0.5 with `batch = "openai"` (the Batch API bills half the listed prices) and 1 otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_price_share: Option<f64>,
    /// Embedded engine: the GGUF file (when unset, the caller resolves a default, e.g. the fetched SmolLM2).
    #[serde(default)]
    pub gguf: Option<PathBuf>,
    /// Embedded engine: CPU threads.
    #[serde(default)]
    pub threads: Option<usize>,
}

fn default_true() -> bool {
    true
}
fn default_idle_timeout_s() -> f64 {
    120.0
}
fn default_max_concurrency() -> usize {
    16
}
fn default_timeout_s() -> f64 {
    600.0
}
fn default_max_attempts() -> u32 {
    10
}
fn default_retry_base_s() -> f64 {
    0.5
}
fn default_retry_max_s() -> f64 {
    30.0
}

impl ModelConfig {
    /// A model given on the command line: one base URL, a model id, no key variable, default limits.
    ///
    /// Its name is the model id.
    pub fn ad_hoc(base_url: &str, model_id: &str) -> ModelConfig {
        ModelConfig {
            name: model_id.to_owned(),
            engine: Engine::Openai,
            base_urls: vec![base_url.to_owned()],
            api_key_env: None,
            model_id: model_id.to_owned(),
            temperature: None,
            top_p: None,
            max_tokens: None,
            token_limit_field: TokenLimitField::MaxTokens,
            sampling: true,
            output_cap: None,
            context_window: None,
            headers: BTreeMap::new(),
            weights_id: None,
            seed: None,
            stop: Vec::new(),
            reasoning_effort: None,
            route: None,
            extra_body: Map::new(),
            max_concurrency: default_max_concurrency(),
            timeout_s: default_timeout_s(),
            idle_timeout_s: default_idle_timeout_s(),
            stream: true,
            bills_abandoned: None,
            server_wait_s: None,
            max_attempts: default_max_attempts(),
            retry_base_s: default_retry_base_s(),
            retry_max_s: default_retry_max_s(),
            price_in_per_mtok: 0.0,
            price_out_per_mtok: 0.0,
            batch: None,
            batch_price_share: None,
            gguf: None,
            threads: None,
        }
    }

    /// Checks the fields a run relies on; `what` names the config (file and table) in the message.
    pub fn validate(&self, what: &str) -> Result<(), Error> {
        let bad = |field: &str, message: &str| {
            Error::Config(format!("{what}: field `{field}`: {message}"))
        };
        if self.model_id.trim().is_empty() {
            return Err(bad("model-id", "must not be empty"));
        }
        if self.engine == Engine::Openai {
            if self.base_urls.is_empty() {
                return Err(bad(
                    "base-urls",
                    "needs at least one URL for engine \"openai\"",
                ));
            }
            for url in &self.base_urls {
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(bad(
                        "base-urls",
                        "each URL must start with http:// or https://",
                    ));
                }
            }
        }
        if self.engine == Engine::Embedded
            && matches!(self.batch, Some(BatchMode::Openai | BatchMode::File))
        {
            return Err(bad(
                "batch",
                "the embedded engine takes no batch jobs (use \"none\" or leave it unset)",
            ));
        }
        if self.max_concurrency == 0 {
            return Err(bad("max-concurrency", "must be at least 1"));
        }
        if !(self.timeout_s > 0.0 && self.timeout_s.is_finite()) {
            return Err(bad("timeout-s", "must be a positive number"));
        }
        if !(self.idle_timeout_s > 0.0 && self.idle_timeout_s.is_finite()) {
            return Err(bad("idle-timeout-s", "must be a positive number"));
        }
        if let (Some(max), Some(cap)) = (self.max_tokens, self.output_cap)
            && max > cap
        {
            return Err(bad(
                "max-tokens",
                &format!("{max} exceeds the model's output cap of {cap} tokens (`output-cap`)"),
            ));
        }
        if let (Some(max), Some(window)) = (self.max_tokens, self.context_window)
            && max >= window
        {
            return Err(bad(
                "max-tokens",
                &format!("{max} leaves no room for a prompt in the {window}-token context window"),
            ));
        }
        for (name, v) in &self.headers {
            if reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_err() {
                return Err(bad(
                    "headers",
                    &format!("{name:?} is not a valid header name"),
                ));
            }
            if let HeaderValue::Env { env } = v
                && env.trim().is_empty()
            {
                return Err(bad(
                    "headers",
                    &format!("{name:?}: `env` must name a variable"),
                ));
            }
        }
        if self
            .server_wait_s
            .is_some_and(|s| !(s >= 0.0 && s.is_finite()))
        {
            return Err(bad("server-wait-s", "must be a non-negative number"));
        }
        if self.max_attempts == 0 {
            return Err(bad("max-attempts", "must be at least 1"));
        }
        if !(self.retry_base_s >= 0.0 && self.retry_max_s >= 0.0) {
            return Err(bad("retry-base-s", "retry delays must not be negative"));
        }
        if self.price_in_per_mtok < 0.0 || self.price_out_per_mtok < 0.0 {
            return Err(bad("price-in-per-mtok", "prices must not be negative"));
        }
        if self
            .batch_price_share
            .is_some_and(|share| !(share.is_finite() && share >= 0.0))
        {
            return Err(bad(
                "batch-price-share",
                "must be a share of the listed prices, 0 or more",
            ));
        }
        Ok(())
    }

    /// How `--batch` runs this model: its `batch` field, else the Batch API for OpenAI's own endpoint and none
    /// for any other server (the embedded engine never batches).
    pub fn batch_mode(&self) -> BatchMode {
        if self.engine == Engine::Embedded {
            return BatchMode::None;
        }
        self.batch.unwrap_or_else(|| {
            let openai = !self.base_urls.is_empty()
                && self
                    .base_urls
                    .iter()
                    .all(|u| u.starts_with("https://api.openai.com/"));
            if openai {
                BatchMode::Openai
            } else {
                BatchMode::None
            }
        })
    }

    /// Whether an abandoned attempt is billed: `bills-abandoned`, else true for `https://` endpoints and false for
    /// local (`http://`, embedded) ones.
    pub(crate) fn bills_abandoned(&self) -> bool {
        self.bills_abandoned.unwrap_or_else(|| {
            self.engine == Engine::Openai
                && self.base_urls.iter().any(|u| u.starts_with("https://"))
        })
    }

    /// This model as a batch job of `mode` bills it: the listed prices times its [`ModelConfig::batch_price_share`].
    pub(crate) fn batch_priced(&self, mode: BatchMode) -> ModelConfig {
        let share = self
            .batch_price_share
            .unwrap_or(if mode == BatchMode::Openai { 0.5 } else { 1.0 });
        ModelConfig {
            price_in_per_mtok: self.price_in_per_mtok * share,
            price_out_per_mtok: self.price_out_per_mtok * share,
            ..self.clone()
        }
    }

    /// How long a call waits for a server that has not answered yet ([`ModelConfig::server_wait_s`], default 300 s).
    pub fn server_wait(&self) -> std::time::Duration {
        std::time::Duration::from_secs_f64(self.server_wait_s.unwrap_or(300.0))
    }

    /// Worst-case USD for one request: its input tokens plus `max_tokens` of output.
    pub(crate) fn worst_case_cost(&self, input_tokens: u64, max_tokens: u32) -> f64 {
        (input_tokens as f64 * self.price_in_per_mtok
            + f64::from(max_tokens) * self.price_out_per_mtok)
            / 1e6
    }

    /// USD from token counts and the configured prices.
    pub(crate) fn cost_from_usage(&self, prompt_tokens: u64, completion_tokens: u64) -> f64 {
        (prompt_tokens as f64 * self.price_in_per_mtok
            + completion_tokens as f64 * self.price_out_per_mtok)
            / 1e6
    }
}

/// The models of `configs/models.toml`: `[models.<name>]` tables.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Models {
    #[serde(default)]
    pub models: BTreeMap<String, ModelConfig>,
}

impl Models {
    /// Reads and validates a models file; each model's `name` is set from its table key.
    pub fn load(path: &Path) -> Result<Models, Error> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Config(format!("{}: {e}", path.display())))?;
        Models::parse(&text, &path.display().to_string())
    }

    /// Parses a models file's text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Models, Error> {
        let mut models: Models = toml::from_str(text)
            .map_err(|e| Error::Config(format!("{origin}: {}", one_line(&e.to_string()))))?;
        for (name, cfg) in &mut models.models {
            if !cfg.name.is_empty() && cfg.name != *name {
                return Err(Error::Config(format!(
                    "{origin}: [models.{name}]: field `name`: {:?} differs from the table name",
                    cfg.name
                )));
            }
            cfg.name.clone_from(name);
            cfg.validate(&format!("{origin}: [models.{name}]"))?;
        }
        Ok(models)
    }

    /// The model called `name`, or an error listing the known names.
    pub fn get(&self, name: &str) -> Result<&ModelConfig, Error> {
        self.models.get(name).ok_or_else(|| {
            let known: Vec<&str> = self.models.keys().map(String::as_str).collect();
            Error::Config(format!(
                "unknown model {name:?}; known models: {}",
                known.join(", ")
            ))
        })
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
