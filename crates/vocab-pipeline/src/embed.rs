//! Stage 7 embeddings: all-MiniLM-L6-v2 (BERT, 384-d) run with candle, mean-pooled and L2-normalized (the offline
//! default), or any OpenAI-compatible `/v1/embeddings` endpoint (the paper used text-embedding-3-small).
//!
//! [`MiniLm`] is the candle model, compiled only with the crate's `minilm` feature (on by default; the application
//! turns it on only for `cargo xtask vocab build`, see [`require_minilm`]); [`ClientEmbedder`] sends the texts through the inference client's `Client::embed`
//! (its cache, retries and budget) to the model the vocabulary config names with `embeddings-model = "<models.toml
//! name>"`.

use std::sync::Arc;

use inference_client::{Client, ModelConfig};

use crate::Error;

#[cfg(feature = "minilm")]
mod minilm;
#[cfg(feature = "minilm")]
pub use minilm::MiniLm;

/// Whether this build contains [`MiniLm`] (the crate's `minilm` feature).
pub const MINILM_BUILT: bool = cfg!(feature = "minilm");

/// The cargo feature that compiles [`MiniLm`] in.
pub const MINILM_FEATURE: &str = "minilm";

/// Fails with [`Error::NotBuilt`] when this build leaves [`MiniLm`] out; call it before fetching its weights.
pub fn require_minilm() -> Result<(), Error> {
    if MINILM_BUILT {
        Ok(())
    } else {
        Err(Error::NotBuilt {
            part: "the MiniLM embedder (candle)",
            feature: MINILM_FEATURE,
        })
    }
}

/// [`MiniLm::load`] boxed, or [`Error::NotBuilt`] in a build without it.
pub fn load_minilm(
    weights: &std::path::Path,
    tokenizer: &std::path::Path,
    config: &std::path::Path,
    batch_size: usize,
) -> Result<Box<dyn Embedder>, Error> {
    require_minilm()?;
    #[cfg(feature = "minilm")]
    return Ok(Box::new(MiniLm::load(
        weights, tokenizer, config, batch_size,
    )?));
    #[cfg(not(feature = "minilm"))]
    {
        let _ = (weights, tokenizer, config, batch_size);
        unreachable!("require_minilm fails in a build without MiniLM")
    }
}

/// Something that turns terms into unit vectors.
pub trait Embedder {
    /// Name recorded in the provenance report.
    fn describe(&self) -> String;
    /// One L2-normalized vector per text, in order.
    fn embed(&mut self, texts: &[String]) -> Result<Vec<Vec<f32>>, Error>;
}

/// Cosine similarity of two unit vectors (their dot product).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// An OpenAI-compatible `/v1/embeddings` model (OpenAI, vLLM, llama.cpp server, Ollama...) through the inference
/// client, which owns the key, the retries, the cache and the budget; vectors are L2-normalized here.
pub struct ClientEmbedder {
    client: Arc<Client>,
    model: ModelConfig,
    batch_size: usize,
}

impl ClientEmbedder {
    pub fn new(client: Arc<Client>, model: ModelConfig, batch_size: usize) -> ClientEmbedder {
        ClientEmbedder {
            client,
            model,
            batch_size: batch_size.max(1),
        }
    }
}

fn normalize(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    v
}

impl Embedder for ClientEmbedder {
    fn describe(&self) -> String {
        format!(
            "{} ({}) through the inference client (L2 normalized)",
            self.model.name, self.model.model_id
        )
    }

    fn embed(&mut self, texts: &[String]) -> Result<Vec<Vec<f32>>, Error> {
        let vectors = self
            .client
            .embed(&self.model, texts, self.batch_size)
            .map_err(|e| {
                if e.is_config() {
                    Error::Config(e.to_string())
                } else {
                    Error::Model(e.to_string())
                }
            })?;
        Ok(vectors.into_iter().map(normalize).collect())
    }
}
