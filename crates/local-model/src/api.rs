//! The request and completion types: the subset of the OpenAI chat-completions body the engine honours.

use serde::{Deserialize, Serialize};

/// One chat message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: String,
    pub content: String,
}

impl ChatMessage {
    pub fn new(role: impl Into<String>, content: impl Into<String>) -> ChatMessage {
        ChatMessage {
            role: role.into(),
            content: content.into(),
        }
    }
}

/// `stop` as OpenAI accepts it: one string or a list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum StopStrings {
    One(String),
    Many(Vec<String>),
}

impl StopStrings {
    pub fn as_slice(&self) -> &[String] {
        match self {
            StopStrings::One(s) => std::slice::from_ref(s),
            StopStrings::Many(v) => v,
        }
    }
}

/// A chat-completions request. Fields the engine does not use (`model`, `n`, `user`, ...) are accepted and
/// ignored so ordinary OpenAI clients work unchanged; `stream: true` is answered with server-sent events.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    #[serde(default)]
    pub model: Option<String>,
    pub messages: Vec<ChatMessage>,
    /// Completion cap in tokens; `None` means "until the context is full".
    #[serde(default, alias = "max_completion_tokens")]
    pub max_tokens: Option<u32>,
    /// 0 (the default) is greedy decoding.
    #[serde(default)]
    pub temperature: Option<f64>,
    #[serde(default)]
    pub top_p: Option<f64>,
    /// Seed of the sampler when `temperature > 0`.
    #[serde(default)]
    pub seed: Option<u64>,
    #[serde(default)]
    pub stop: Option<StopStrings>,
    /// Return per-token log-probabilities (OpenAI layout).
    #[serde(default)]
    pub logprobs: bool,
    /// llama.cpp's repeat penalty over the last 64 generated tokens (1.0 = off, the default).
    #[serde(default)]
    pub repeat_penalty: Option<f64>,
    /// Never end at an end-of-generation token (llama.cpp's extension; used by benchmarks for fixed lengths).
    #[serde(default)]
    pub ignore_eos: bool,
    #[serde(default)]
    pub stream: bool,
}

impl ChatRequest {
    /// A greedy request for these messages with a token cap.
    pub fn greedy(messages: Vec<ChatMessage>, max_tokens: u32) -> ChatRequest {
        ChatRequest {
            messages,
            max_tokens: Some(max_tokens),
            ..ChatRequest::default()
        }
    }

    pub fn stop_strings(&self) -> &[String] {
        self.stop.as_ref().map_or(&[], StopStrings::as_slice)
    }
}

/// Why generation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// End-of-generation token or a stop string.
    Stop,
    /// `max_tokens` (or the context) was reached.
    Length,
}

impl FinishReason {
    pub fn as_str(self) -> &'static str {
        match self {
            FinishReason::Stop => "stop",
            FinishReason::Length => "length",
        }
    }
}

/// The log-probability of one generated token under the model (natural log, before sampling transforms).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TokenLogprob {
    pub token: String,
    pub logprob: f64,
    pub bytes: Vec<u8>,
}

/// The result of one generation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Completion {
    pub text: String,
    pub finish_reason: FinishReason,
    /// Tokens of the rendered prompt.
    pub prompt_tokens: u32,
    /// Generated tokens, not counting the end-of-generation token.
    pub completion_tokens: u32,
    /// One entry per generated token, when requested.
    pub logprobs: Option<Vec<TokenLogprob>>,
    /// Wall time spent evaluating the prompt, in seconds.
    pub prompt_seconds: f64,
    /// Wall time spent generating, in seconds.
    pub decode_seconds: f64,
}

impl Completion {
    /// Mean natural-log probability per generated token, when log-probabilities were requested.
    pub fn mean_logprob(&self) -> Option<f64> {
        let lp = self.logprobs.as_ref()?;
        if lp.is_empty() {
            return None;
        }
        Some(lp.iter().map(|t| t.logprob).sum::<f64>() / lp.len() as f64)
    }
}
