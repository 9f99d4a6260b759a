//! all-MiniLM-L6-v2 (BERT, 384-d) on the CPU with candle: the offline default embedder of stage 7.
//!
//! Compiled only with the `minilm` feature (candle and tokenizers are about a tenth of a cold build, and only
//! `cargo xtask vocab build` uses them).

use std::path::Path;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer};

use super::Embedder;
use crate::Error;

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
