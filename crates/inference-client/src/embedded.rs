//! The embedded engine: starts the local llama.cpp model behind an OpenAI-compatible server on 127.0.0.1.
//!
//! Everything else (records, cache, retries, progress) goes through the normal HTTP path against that server.

use crate::Error;
use crate::config::ModelConfig;

/// A running embedded server: its base URL and a guard that stops it on drop.
pub(crate) struct EmbeddedHandle {
    base_url: String,
    _guard: Box<dyn Send>,
}

impl EmbeddedHandle {
    /// e.g. `http://127.0.0.1:PORT/v1`.
    pub(crate) fn base_url(&self) -> &str {
        &self.base_url
    }
}

/// Starts the embedded model described by `cfg` (`gguf`, `threads`, `max-concurrency`).
pub(crate) fn start(cfg: &ModelConfig) -> Result<EmbeddedHandle, Error> {
    let _ = cfg;
    let _ = |base_url: String, guard: Box<dyn Send>| EmbeddedHandle {
        base_url,
        _guard: guard,
    };
    Err(Error::Embedded(
        "embedded engine not available in this build".into(),
    ))
}
