//! The inference client as the pipeline's [`PromptRunner`]: every model call goes through its cache and retries.

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use inference_client::{Client, ModelConfig};
use schema::{PromptRecord, ResponseKey, ResponseRecord};

use crate::Error;
use crate::difficulty::PromptRunner;

/// Runs prompts through the command's inference client, one responses file per stage and model.
pub struct ClientRunner {
    models: BTreeMap<String, ModelConfig>,
    out_dir: PathBuf,
    client: Arc<Client>,
}

impl ClientRunner {
    /// `models` are the resolved configs the stages may name; responses go to `out_dir/<stage>.<model>.jsonl`.
    pub fn new(models: Vec<ModelConfig>, out_dir: PathBuf, client: Arc<Client>) -> ClientRunner {
        ClientRunner {
            models: models.into_iter().map(|m| (m.name.clone(), m)).collect(),
            out_dir,
            client,
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
        let unfinished = self.client.unfinished();
        self.client.chat(cfg, prompts, &out).map_err(|e| {
            let what = format!("{stage} on {model}: {e}");
            // A missing key or a bad model config is the caller's configuration, not a model failure.
            if e.is_config() {
                Error::Config(what)
            } else {
                Error::Model(what)
            }
        })?;
        // The file may hold answers to earlier runs' prompts too: keep this run's, the last line per key winning.
        // Prompts left without an answer (failed after their retries, not sent because of the cost limit, or
        // stopped by Ctrl-C) would build a vocabulary from part of the terms: the stage fails instead, and a rerun
        // sends only what is missing.
        let missing = self.client.unfinished() - unfinished;
        if missing > 0 {
            return Err(Error::Model(format!(
                "{stage} on {model}: {missing} of {} prompts without an answer (failed after their retries, over \
                 the cost limit, or stopped); rerun to continue",
                prompts.len()
            )));
        }
        let wanted: HashSet<ResponseKey> = prompts.iter().map(ResponseKey::of_prompt).collect();
        let mut out: Vec<ResponseRecord> = schema::read_latest_responses(&out)?
            .into_iter()
            .filter(|r| wanted.contains(&ResponseKey::of(r)))
            .collect();
        out.sort_by_key(ResponseKey::of);
        Ok(out)
    }
}
