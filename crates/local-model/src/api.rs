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
    /// Seed of the sampler when `temperature > 0`; without one, the seed comes from the request itself
    /// ([`ChatRequest::sampling_seed`]).
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

    /// Whether the request samples (`temperature > 0`) rather than decoding greedily.
    pub fn samples(&self) -> bool {
        self.temperature.is_some_and(|t| t > 0.0)
    }

    /// The seed a sampled request is generated with: its own `seed`, or else one derived from what it asks for
    /// (the messages, `temperature`, `top_p` and `repeat_penalty`: FNV-1a over their JSON), so that the same
    /// request always gets the same reply. Fields that only cut a reply short (`max_tokens`, `stop`, `ignore_eos`)
    /// or change nothing generated (`model`, `logprobs`, `stream`) are left out. `None` for a greedy request.
    pub fn sampling_seed(&self) -> Option<u64> {
        if !self.samples() {
            return None;
        }
        self.seed.or_else(|| {
            let identity = serde_json::json!([
                self.messages,
                self.temperature,
                self.top_p,
                self.repeat_penalty
            ]);
            Some(fnv1a(identity.to_string().as_bytes()))
        })
    }

    pub fn stop_strings(&self) -> &[String] {
        self.stop.as_ref().map_or(&[], StopStrings::as_slice)
    }
}

/// 64-bit FNV-1a: a hash that is the same in every build and on every machine.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
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
    /// The seed the reply was sampled with ([`ChatRequest::sampling_seed`]); `None` for a greedy reply.
    pub seed: Option<u64>,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn sampled(seed: Option<u64>) -> ChatRequest {
        ChatRequest {
            temperature: Some(0.7),
            seed,
            ..ChatRequest::greedy(vec![ChatMessage::new("user", "Name a colour.")], 8)
        }
    }

    #[test]
    fn a_sampled_request_is_seeded_by_its_own_seed_or_by_what_it_asks() {
        assert_eq!(sampled(Some(42)).sampling_seed(), Some(42));
        let derived = sampled(None).sampling_seed().unwrap();
        // Pinned: the derivation must not change between builds, or a rerun would sample differently.
        assert_eq!(derived, 0x329e_2dd7_dc4a_b812);
        // Transport and length settings do not change it; the messages and the sampler's settings do.
        let longer = ChatRequest {
            max_tokens: Some(64),
            logprobs: true,
            stream: true,
            model: Some("m".to_owned()),
            ..sampled(None)
        };
        assert_eq!(longer.sampling_seed(), Some(derived));
        let hotter = ChatRequest {
            temperature: Some(0.8),
            ..sampled(None)
        };
        assert_ne!(hotter.sampling_seed(), Some(derived));
        let other = ChatRequest {
            messages: vec![ChatMessage::new("user", "Name a color.")],
            ..sampled(None)
        };
        assert_ne!(other.sampling_seed(), Some(derived));
        let greedy = ChatRequest {
            temperature: Some(0.0),
            ..sampled(Some(42))
        };
        assert_eq!(greedy.sampling_seed(), None);
    }
}
