//! The embedded, offline model: a GGUF file (SmolLM2-135M-Instruct by default) run in-process on llama.cpp
//! (its C API through `llama-cpp-sys-2`, held in owned handles by `engine::ffi`) and served as a small
//! OpenAI-compatible endpoint on 127.0.0.1.
//!
//! What this crate knows: how to load one GGUF once, render its own chat template (`tokenizer.chat_template`
//! from the GGUF metadata, rendered with minijinja exactly as written, so SmolLM2's default system prompt is
//! inserted when a conversation has none), tokenize with special tokens parsed, generate with greedy or
//! seeded sampling (temperature, top-p, repeat penalty), honour `max_tokens` and stop strings, report usage,
//! `finish_reason` and per-token log-probabilities, and queue requests so at most `max_parallel` sequences
//! share the CPU. Replies are reproducible: a greedy reply has the same bits whatever the thread count, the other
//! requests in flight or the requests before it (each request starts from an empty KV cache), and a sampled one is
//! seeded by the request's `seed` or, without one, by a hash of what it asks ([`ChatRequest::sampling_seed`]); the
//! seed is returned with the reply. Flash attention is used where its result does not depend on the thread count:
//! for prompt evaluation (several tokens per batch), not for decoding, where ggml's CPU kernel splits a long
//! sequence's sum between the threads ([`FlashAttention`]; `engine::worker` says how).
//! [`Engine`] is the in-process interface; [`LocalServer`] wraps it in
//! `/v1/chat/completions` + `/v1/models` on a free port (hyper's HTTP/1.1 server on a tokio runtime of its own,
//! generation on its blocking pool; request bodies up to [`MAX_BODY_BYTES`]) and, when dropped, fails the
//! requests in flight, closes every connection at once and joins its threads.
//!
//! What it deliberately does not know: where the GGUF comes from (callers pass a path; the asset cache lives
//! in xtask), environment variables, retries, caching of responses or the record files on disk (the inference
//! client owns those). A `stream: true` request is answered with server-sent events as the tokens come
//! (usage in a last chunk when `stream_options.include_usage` asks for it).

mod api;
pub mod cpu;
mod engine;
mod server;
mod template;
mod threads;

use std::path::PathBuf;

pub use api::{ChatMessage, ChatRequest, Completion, FinishReason, StopStrings, TokenLogprob};
pub use engine::{Engine, ThreadUse};
pub use server::{LocalServer, MAX_BODY_BYTES};
pub use template::ChatTemplate;

/// Where the engine uses llama.cpp's flash attention. Either way a reply has the same bits for any thread count
/// (see the crate docs); the two differ in speed and, slightly, in the numbers (a greedy reply may differ).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FlashAttention {
    /// For prompt evaluation (batches of tokens), where its result does not depend on the thread count; decoding
    /// (one token per step) attends without it. The default: long prompts are evaluated faster.
    #[default]
    Prompts,
    /// Nowhere: attention is matrix products and a softmax throughout (one llama.cpp context per sequence).
    Off,
}

/// How to run the embedded model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineConfig {
    /// The GGUF file to load.
    pub gguf: PathBuf,
    /// CPU threads in total (split evenly between the `max_parallel` sequences, at least one each).
    pub threads: usize,
    /// Context length per sequence (prompt plus completion), in tokens.
    pub ctx_size: u32,
    /// How many requests are processed at once; further requests wait in a queue.
    pub max_parallel: usize,
}

impl EngineConfig {
    /// Defaults for a small machine: 2 threads, a 4096-token context, one sequence at a time.
    pub fn new(gguf: impl Into<PathBuf>) -> EngineConfig {
        EngineConfig {
            gguf: gguf.into(),
            threads: 2,
            ctx_size: 4096,
            max_parallel: 1,
        }
    }
}

/// Everything that can go wrong while loading or running the embedded model.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("GGUF file {path} not found (run `cargo xtask setup` to fetch the default model)")]
    GgufMissing { path: PathBuf },
    #[error("cannot load GGUF {path}: {reason}")]
    Load { path: PathBuf, reason: String },
    #[error("invalid engine config: {0}")]
    Config(String),
    #[error("chat template: {0}")]
    Template(String),
    /// The request itself is unusable (answered with HTTP 400 by the server).
    #[error("bad request: {0}")]
    BadRequest(String),
    #[error("llama.cpp: {0}")]
    Engine(String),
    #[error("the engine is shutting down")]
    ShuttingDown,
    #[error("local server: {0}")]
    Io(#[from] std::io::Error),
}
