//! The embedded engine: starts the local llama.cpp model behind an OpenAI-compatible server on 127.0.0.1.
//!
//! Everything else (records, cache, retries, progress) goes through the normal HTTP path against that server.

use crate::Error;
use crate::config::ModelConfig;

/// Context length of the embedded model's sequences (SmolLM2's training context).
const CTX_SIZE: u32 = 8192;

/// The context window the embedded engine is started with, in tokens (prompt plus output).
pub const EMBEDDED_CONTEXT: u32 = CTX_SIZE;

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

/// Starts the embedded model described by `cfg` (`gguf`, `threads`): the model is loaded once and requests are
/// computed one at a time (further ones queue in the server), so a 2-core machine is never oversubscribed.
pub(crate) fn start(cfg: &ModelConfig) -> Result<EmbeddedHandle, Error> {
    let gguf = cfg.gguf.clone().ok_or_else(|| {
        Error::Embedded(format!(
            "model {:?} uses the embedded engine but no `gguf` file is configured (run through `cargo xtask`, \
             which resolves the fetched SmolLM2, or set `gguf`)",
            cfg.name
        ))
    })?;
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    let threads = cfg.threads.unwrap_or_else(|| cores.min(2)).max(1);
    let engine = local_model::EngineConfig {
        gguf,
        threads,
        ctx_size: CTX_SIZE,
        max_parallel: 1,
    };
    let server =
        local_model::LocalServer::start(&engine).map_err(|e| Error::Embedded(e.to_string()))?;
    Ok(EmbeddedHandle {
        base_url: server.base_url().to_owned(),
        _guard: Box::new(server),
    })
}
