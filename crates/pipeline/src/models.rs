//! Loading a model declaration for a command: the one place xtask turns a model name into a ready `ModelConfig`
//! (for the embedded engine: the GGUF from `$IFSTRESS_GGUF` or the fetched SmolLM2, threads from `$IFSTRESS_THREADS`).

use std::path::{Path, PathBuf};

use anyhow::Context;
use inference_client::{Engine, ModelConfig, Models};
use schema::env::EnvVars;

use crate::outcome::Failure;

/// Reads `name` from the models file and resolves what the embedded engine needs.
pub fn load_model(models_file: &Path, name: &str) -> anyhow::Result<ModelConfig> {
    let all = Models::load(models_file).map_err(|e| Failure::Usage(e.to_string()))?;
    let mut model = all
        .get(name)
        .map_err(|e| Failure::Usage(format!("{}: {e}", models_file.display())))?
        .clone();
    resolve_embedded(&mut model)?;
    Ok(model)
}

/// Fills in the GGUF (`$IFSTRESS_GGUF`, else the fetched SmolLM2) and threads (`$IFSTRESS_THREADS`) of an embedded model.
pub fn resolve_embedded(model: &mut ModelConfig) -> anyhow::Result<()> {
    if model.engine != Engine::Embedded {
        return Ok(());
    }
    if model.gguf.is_none() {
        let path = match std::env::var_os(EnvVars::IFSTRESS_GGUF).filter(|v| !v.is_empty()) {
            Some(p) => PathBuf::from(p),
            None => crate::assets::ensure(&schema::env::cache_dir(), &crate::assets::SMOLLM2_GGUF)
                .context("resolving the embedded model's GGUF")?,
        };
        model.gguf = Some(path);
    }
    if model.threads.is_none()
        && let Ok(t) = std::env::var(EnvVars::IFSTRESS_THREADS)
    {
        let threads = t.parse().map_err(|_| {
            Failure::Usage(format!(
                "{}: not a number: {t:?}",
                EnvVars::IFSTRESS_THREADS
            ))
        })?;
        model.threads = Some(threads);
    }
    if let Some(g) = &model.gguf
        && !g.is_file()
    {
        return Err(Failure::Usage(format!(
            "model {:?}: GGUF file {} does not exist",
            model.name,
            g.display()
        ))
        .into());
    }
    Ok(())
}
