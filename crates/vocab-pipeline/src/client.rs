//! The inference client as the pipeline's [`PromptRunner`]: every model call goes through its cache and retries.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;

use inference_client::{ModelConfig, RunOptions};
use schema::{PromptRecord, ResponseRecord};

use crate::Error;
use crate::difficulty::PromptRunner;

/// Runs prompts with `inference_client::run_prompts_blocking`, one responses file per stage and model.
pub struct ClientRunner {
    models: BTreeMap<String, ModelConfig>,
    out_dir: PathBuf,
    opts: RunOptions,
}

impl ClientRunner {
    /// `models` are the resolved configs the stages may name; responses go to `out_dir/<stage>.<model>.jsonl`.
    pub fn new(models: Vec<ModelConfig>, out_dir: PathBuf, opts: RunOptions) -> ClientRunner {
        ClientRunner {
            models: models.into_iter().map(|m| (m.name.clone(), m)).collect(),
            out_dir,
            opts,
        }
    }
}

impl PromptRunner for ClientRunner {
    fn describe(&self, model: &str) -> serde_json::Value {
        match self.models.get(model) {
            Some(m) => serde_json::json!({
                "name": m.name,
                "engine": m.engine.as_str(),
                "model-id": m.model_id,
                "base-urls": m.base_urls,
                "gguf": m.gguf.as_ref().and_then(|p| p.file_name()).map(|n| n.to_string_lossy().into_owned()),
            }),
            None => serde_json::json!({ "name": model }),
        }
    }

    fn run(
        &mut self,
        stage: &str,
        model: &str,
        prompts: &[PromptRecord],
    ) -> Result<Vec<ResponseRecord>, Error> {
        let cfg = self
            .models
            .get(model)
            .ok_or_else(|| Error::Config(format!("model `{model}` is not in the models config")))?;
        let out = self.out_dir.join(format!("{stage}.{model}.jsonl"));
        tracing::info!(stage, model, prompts = prompts.len(), out = %out.display(), "Running prompts through the inference client.");
        // The client logs its own summary when the run ends.
        inference_client::run_prompts_blocking(cfg, prompts, &out, &self.opts)
            .map_err(|e| Error::Model(format!("{stage} on {model}: {e}")))?;
        // The file may hold answers to earlier runs' prompts too: keep this run's, the last line per key winning.
        let wanted: HashSet<(&str, u32)> = prompts
            .iter()
            .map(|p| (p.id.as_str(), p.sample_index))
            .collect();
        let all: Vec<ResponseRecord> = schema::read_jsonl(&out)?;
        let mut latest: HashMap<(String, u32), ResponseRecord> = HashMap::new();
        for r in all {
            if wanted.contains(&(r.id.as_str(), r.sample_index)) {
                latest.insert((r.id.clone(), r.sample_index), r);
            }
        }
        let mut out: Vec<ResponseRecord> = latest.into_values().collect();
        out.sort_by(|a, b| a.id.cmp(&b.id).then(a.sample_index.cmp(&b.sample_index)));
        Ok(out)
    }
}
