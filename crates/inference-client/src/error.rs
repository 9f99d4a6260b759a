//! The client's error type. Messages never contain API keys (see `redact`).
//!
//! `Error::is_config` tells a bad config, bad prompts or a missing API key (a usage error, exit code 2 in xtask) from a
//! failure while running.

use std::path::PathBuf;

/// Why a run could not start or had to stop. Per-request failures are not errors: they become `Outcome::Failed` records.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A model config or run option is invalid.
    #[error("{0}")]
    Config(String),
    /// The prompts are unusable (e.g. a duplicate id and sample index).
    #[error("{0}")]
    Prompts(String),
    /// The key variable a model names is not set.
    #[error("model {model:?}: environment variable {var} is not set (it must hold the API key)")]
    MissingKey { model: String, var: String },
    /// Reading or writing a record file.
    #[error(transparent)]
    Records(#[from] schema::Error),
    /// The response cache.
    #[error("cache {path}: {message}")]
    Cache { path: PathBuf, message: String },
    /// The HTTP client or the runtime could not be set up.
    #[error("{0}")]
    Setup(String),
    /// The embedded engine could not start.
    #[error("embedded engine: {0}")]
    Embedded(String),
    /// A request (other than a chat prompt, whose failures become records) failed after its retries.
    #[error("model {model:?}, {url}: {message}")]
    Request {
        model: String,
        url: String,
        message: String,
    },
    /// The cost limit stops a call that cannot leave work undone (e.g. embeddings).
    #[error("{0}")]
    Budget(String),
    /// A batch job ended without answering (`failed`, `expired`, `cancelled`), or is still running when the
    /// wait ends; what it answered is written first.
    #[error("{0}")]
    Batch(String),
    /// A request failed with a status that retrying cannot fix (401, 402, 403, 404, the same 400 again and
    /// again): this model's requests stop. `url` is the endpoint, without any credentials in it.
    #[error("model {model:?} at {url}: HTTP {status} ({class}): {message}")]
    FailFast {
        model: String,
        url: String,
        status: u16,
        class: String,
        message: String,
    },
    /// No endpoint of a model answered within its `server-wait-s` (nothing listens, or a server never came up):
    /// this model's requests stop. `message` names each base URL (without credentials) and its connection error.
    #[error("model {model:?}: no endpoint answered within {waited_s} s: {message}")]
    Unreachable {
        model: String,
        waited_s: f64,
        message: String,
    },
}

impl Error {
    /// True for a 402 (out of credits): every model behind the account is affected, so the whole run stops.
    pub fn is_out_of_credits(&self) -> bool {
        matches!(self, Error::FailFast { status: 402, .. })
    }

    /// True when this model's requests were stopped because none can succeed (a [`Error::FailFast`] status, or
    /// no endpoint that ever answered: [`Error::Unreachable`]); the other models of a run can go on.
    pub fn stops_model(&self) -> bool {
        matches!(self, Error::FailFast { .. } | Error::Unreachable { .. })
    }

    /// True when the run could not start because of how it was configured (a model config, a run option, the
    /// prompts or a missing API key), as opposed to a failure while running.
    pub fn is_config(&self) -> bool {
        matches!(
            self,
            Error::Config(_) | Error::Prompts(_) | Error::MissingKey { .. }
        )
    }
}
