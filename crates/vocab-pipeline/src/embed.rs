//! Stage 7 embeddings: all-MiniLM-L6-v2 (BERT, 384-d) run with candle, mean-pooled and L2-normalized (the offline
//! default), or any OpenAI-compatible `/v1/embeddings` endpoint (the paper used text-embedding-3-small).

use std::path::Path;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer};

use crate::Error;

/// Something that turns terms into unit vectors.
pub trait Embedder {
    /// Name recorded in the provenance report.
    fn describe(&self) -> String;
    /// One L2-normalized vector per text, in order.
    fn embed(&mut self, texts: &[String]) -> Result<Vec<Vec<f32>>, Error>;
}

/// all-MiniLM-L6-v2 (sentence-transformers) on the CPU.
pub struct MiniLm {
    model: BertModel,
    tokenizer: Tokenizer,
    batch_size: usize,
    device: Device,
}

fn model_err(what: impl std::fmt::Display) -> Error {
    Error::Model(what.to_string())
}

impl MiniLm {
    /// Loads the weights (`model.safetensors`), `tokenizer.json` and `config.json`.
    ///
    /// The shipped tokenizer pads every input to 128 tokens; it is switched to padding each batch to its longest
    /// input, and the attention mask keeps padding out of the mean pooling.
    pub fn load(
        weights: &Path,
        tokenizer: &Path,
        config: &Path,
        batch_size: usize,
    ) -> Result<MiniLm, Error> {
        let cfg_text = std::fs::read_to_string(config).map_err(|e| Error::io(config, e))?;
        let cfg: Config = serde_json::from_str(&cfg_text).map_err(|e| Error::Input {
            path: config.to_owned(),
            what: format!("not a BERT config: {e}"),
        })?;
        let mut tok = Tokenizer::from_file(tokenizer).map_err(|e| Error::Input {
            path: tokenizer.to_owned(),
            what: format!("not a tokenizer.json: {e}"),
        })?;
        tok.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..PaddingParams::default()
        }));
        let device = Device::Cpu;
        let bytes = std::fs::read(weights).map_err(|e| Error::io(weights, e))?;
        let vb =
            VarBuilder::from_buffered_safetensors(bytes, DType::F32, &device).map_err(|e| {
                Error::Input {
                    path: weights.to_owned(),
                    what: format!("not a safetensors file: {e}"),
                }
            })?;
        let model = BertModel::load(vb, &cfg).map_err(|e| Error::Input {
            path: weights.to_owned(),
            what: format!("not BERT weights: {e}"),
        })?;
        Ok(MiniLm {
            model,
            tokenizer: tok,
            batch_size: batch_size.max(1),
            device,
        })
    }

    fn embed_batch(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, Error> {
        let enc = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(model_err)?;
        let n = enc.len();
        let len = enc.first().map_or(0, |e| e.get_ids().len());
        let mut ids = Vec::with_capacity(n * len);
        let mut mask = Vec::with_capacity(n * len);
        for e in &enc {
            if e.get_ids().len() != len {
                return Err(Error::Model(
                    "tokenizer returned a ragged batch despite padding".to_owned(),
                ));
            }
            ids.extend_from_slice(e.get_ids());
            mask.extend_from_slice(e.get_attention_mask());
        }
        let ids = Tensor::from_vec(ids, (n, len), &self.device).map_err(model_err)?;
        let mask = Tensor::from_vec(mask, (n, len), &self.device).map_err(model_err)?;
        let types = ids.zeros_like().map_err(model_err)?;
        let hidden = self
            .model
            .forward(&ids, &types, Some(&mask))
            .map_err(model_err)?;
        let pooled = (|| -> candle_core::Result<Vec<Vec<f32>>> {
            let m = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
            let sum = hidden.broadcast_mul(&m)?.sum(1)?;
            let count = m.sum(1)?.clamp(1e-9f32, f32::MAX)?;
            let mean = sum.broadcast_div(&count)?;
            let norm = mean
                .sqr()?
                .sum_keepdim(1)?
                .sqrt()?
                .clamp(1e-12f32, f32::MAX)?;
            mean.broadcast_div(&norm)?.to_vec2::<f32>()
        })()
        .map_err(model_err)?;
        Ok(pooled)
    }
}

impl Embedder for MiniLm {
    fn describe(&self) -> String {
        "all-MiniLM-L6-v2 (candle, mean pooling with attention mask, L2 normalized)".to_owned()
    }

    fn embed(&mut self, texts: &[String]) -> Result<Vec<Vec<f32>>, Error> {
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(self.batch_size) {
            out.extend(self.embed_batch(chunk)?);
        }
        Ok(out)
    }
}

/// Cosine similarity of two unit vectors (their dot product).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// An OpenAI-compatible `POST {base_url}/embeddings` endpoint (OpenAI, vLLM, llama.cpp server, Ollama...).
///
/// Terms go in batches; each batch is tried up to `max_attempts` times when the server answers 429 or 5xx or
/// the connection fails. Vectors are put back in input order by their `index` and L2-normalized.
pub struct HttpEmbedder {
    http: reqwest::blocking::Client,
    url: String,
    model_id: String,
    /// Value of the `Authorization: Bearer` header; never printed.
    api_key: Option<String>,
    batch_size: usize,
    max_attempts: u32,
}

#[derive(serde::Deserialize)]
struct EmbeddingsReply {
    data: Vec<EmbeddingItem>,
}

#[derive(serde::Deserialize)]
struct EmbeddingItem {
    index: usize,
    embedding: Vec<f32>,
}

impl HttpEmbedder {
    /// `base_url` ends in `/v1` (or whatever prefix the server uses); `api_key` comes from the environment.
    pub fn new(
        base_url: &str,
        model_id: &str,
        api_key: Option<String>,
        batch_size: usize,
        timeout: std::time::Duration,
    ) -> Result<HttpEmbedder, Error> {
        let http = reqwest::blocking::Client::builder()
            .timeout(timeout)
            .build()
            .map_err(model_err)?;
        Ok(HttpEmbedder {
            http,
            url: format!("{}/embeddings", base_url.trim_end_matches('/')),
            model_id: model_id.to_owned(),
            api_key,
            batch_size: batch_size.max(1),
            max_attempts: 4,
        })
    }

    fn batch(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, Error> {
        let body = serde_json::json!({ "model": self.model_id, "input": texts });
        let mut attempt = 0;
        let reply = loop {
            attempt += 1;
            let mut req = self.http.post(&self.url).json(&body);
            if let Some(key) = &self.api_key {
                req = req.bearer_auth(key);
            }
            let retry = match req.send() {
                Ok(r) if r.status().is_success() => {
                    break r
                        .bytes()
                        .map_err(|e| model_err(format!("{}: {e}", self.url)))?;
                }
                Ok(r) => {
                    let status = r.status();
                    if status.as_u16() != 429 && !status.is_server_error() {
                        return Err(model_err(format!("{}: HTTP {status}", self.url)));
                    }
                    format!("HTTP {status}")
                }
                Err(e) => format!("{}", e.without_url()),
            };
            if attempt >= self.max_attempts {
                return Err(model_err(format!(
                    "{}: {retry} after {attempt} attempts",
                    self.url
                )));
            }
            tracing::warn!(url = %self.url, attempt, error = %retry, "Embeddings request failed; retrying.");
            std::thread::sleep(std::time::Duration::from_millis(250 << attempt.min(6)));
        };
        let reply: EmbeddingsReply = serde_json::from_slice(&reply).map_err(|e| {
            model_err(format!(
                "{}: reply is not an embeddings list: {e}",
                self.url
            ))
        })?;
        let mut out: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
        for item in reply.data {
            let slot = out.get_mut(item.index).ok_or_else(|| {
                model_err(format!(
                    "{}: reply has index {} for {} inputs",
                    self.url,
                    item.index,
                    texts.len()
                ))
            })?;
            *slot = Some(normalize(item.embedding));
        }
        out.into_iter()
            .enumerate()
            .map(|(i, v)| {
                v.filter(|v| !v.is_empty()).ok_or_else(|| {
                    model_err(format!(
                        "{}: no embedding for input {i} ({:?})",
                        self.url, texts[i]
                    ))
                })
            })
            .collect()
    }
}

fn normalize(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    v
}

impl Embedder for HttpEmbedder {
    fn describe(&self) -> String {
        format!("{} via {} (L2 normalized)", self.model_id, self.url)
    }

    fn embed(&mut self, texts: &[String]) -> Result<Vec<Vec<f32>>, Error> {
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(self.batch_size) {
            out.extend(self.batch(chunk)?);
        }
        Ok(out)
    }
}
