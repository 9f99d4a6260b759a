//! OpenAI-compatible Chat Completions client for ifstress: every model call of every stage goes through here.
//!
//! It sends prompts with retries, adaptive per-endpoint concurrency and load balancing over replicas,
//! caches every answer in SQLite under a key made of what determines it (model identity, full request body,
//! sample index), streams one `schema::ResponseRecord` per prompt to an append-only JSONL, resumes after a crash
//! without sending or writing anything twice (a line counts as an answer only while its prompt's request is
//! unchanged), and stops before a cost limit. API keys are read only here, from
//! the environment variable a model's config names, and never appear in records, the cache, logs or errors.
//!
//! A command builds one [`Client`] for its whole run and calls [`Client::chat`] for each batch of prompts,
//! [`Client::chat_stream`] for a large prompts file fed chunk by chunk (the next chunk is prepared while this one's
//! requests are in flight) and [`Client::embed`] for `/v1/embeddings`. For the life of the process the client owns
//! the options, the budget, the async runtime, the embedded engines it started, one HTTP connection pool per base
//! URL (and credentials), and per model its replicas' adaptive limits and health (`pool`): chunks, stages, judges,
//! embeddings and batch jobs all share them, a learned limit carries over from call to call, and a replica found
//! dead keeps its back-off instead of being found again by every call. It is also the one writer of every
//! responses file it appends to ([`Client::lock_output`]: an advisory lock another process waits for). Every retry
//! decision is in the `retry` module; what makes an endpoint count as dead, and how it is probed, in `limiter` and
//! `health`.
//! [`Client::stop_handle`] stops sending new requests while the ones in flight are waited for and written (what
//! a command does on Ctrl-C).
//!
//! It deliberately knows nothing about benchmarks, prompts' meaning or scoring: prompts are opaque chat messages
//! with ride-along fields. The embedded engine (`engine = "embedded"`) is a local server reached over the same HTTP path.

mod batch;
mod body;
mod cache;
mod client;
mod config;
mod embed;
mod embedded;
mod error;
mod health;
mod http;
mod in_flight;
mod limiter;
mod parse;
mod pool;
mod redact;
mod retry;
pub mod route;
mod run;
mod sse;
mod stop;

pub use batch::batch_dir;
pub use body::estimate_input_tokens;
pub use cache::Cache;
pub use client::{BatchOptions, Client, Env, RunOptions};
pub use config::{BatchMode, Engine, HeaderValue, ModelConfig, Models, TokenLimitField};
pub use embedded::EMBEDDED_CONTEXT;
pub use error::Error;
pub use run::{ChatFeed, DryRunReport, RunSummary};
pub use schema::metrics::InFlight;
pub use stop::StopHandle;
