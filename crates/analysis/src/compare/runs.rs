//! What a run holds for a comparison, read once however many of its models are compared: its IFScale and RIFT
//! items (to check that two runs hold the same ones), its IFScale sample scores and the models of its RIFT answers;
//! and one model's [`Entry`] from it. `cargo xtask compare` and the report of a multi-model run
//! (`report::compare`) both read runs through this.

use std::collections::BTreeMap;
use std::path::Path;

use super::report::Entry;
use super::{align, ifscale};
use crate::Error;

/// One run's items, IFScale scores and RIFT models.
#[derive(Debug, Clone)]
pub struct RunData {
    pub ifscale_items: Option<BTreeMap<String, align::IfscaleItem>>,
    pub rift_items: Option<BTreeMap<String, align::RiftItem>>,
    pub ifscale_scores: Option<Vec<schema::ifscale::SampleScore>>,
    pub rift_models: Vec<String>,
    /// The run's checked RIFT answer judge.
    pub rift_judge: Option<super::rift::RiftJudge>,
}

impl RunData {
    /// Reads the run folder `run` (its prompt files, `ifscale/scores.jsonl` and the RIFT answer tables).
    pub fn read(run: &Path) -> Result<RunData, Error> {
        Ok(RunData {
            ifscale_items: align::ifscale_items(run)?,
            rift_items: align::rift_items(run)?,
            ifscale_scores: align::ifscale_scores(run)?,
            rift_models: align::rift_models(run)?,
            rift_judge: align::rift_judge(run)?,
        })
    }

    /// The models with IFScale scores or RIFT answers, sorted.
    pub fn models(&self) -> Vec<String> {
        let mut m: Vec<String> = self
            .ifscale_models()
            .into_iter()
            .chain(self.rift_models.iter().cloned())
            .collect();
        m.sort();
        m.dedup();
        m
    }

    /// The models with IFScale sample scores, sorted.
    pub fn ifscale_models(&self) -> Vec<String> {
        let mut m: Vec<String> = self
            .ifscale_scores
            .iter()
            .flatten()
            .map(|s| s.model.clone())
            .collect();
        m.sort();
        m.dedup();
        m
    }

    /// `model`'s side of a comparison, labelled `label`: its IFScale samples and RIFT answers per prompt (None for
    /// a benchmark it has nothing of). `run` is the folder this was read from.
    pub fn entry(&self, run: &Path, model: &str, label: String) -> Result<Entry, Error> {
        let ifscale = self
            .ifscale_scores
            .as_ref()
            .map(|s| ifscale::samples_of(s, model))
            .filter(|s| !s.is_empty());
        let rift = if self.rift_models.iter().any(|m| m == model) {
            let prompts = align::rift_prompts(run, model, self.rift_items.as_ref())?;
            super::verdicts::check(run, model, &prompts)?;
            Some(prompts)
        } else {
            None
        };
        Ok(Entry {
            label,
            ifscale,
            rift,
            rift_judge: self.rift_judge.clone(),
        })
    }
}

/// The items of `b` against those of `a`: one line naming every difference, or None when they are the same.
pub fn differences(a: &RunData, b: &RunData) -> Option<String> {
    let mut parts = Vec::new();
    if let (Some(x), Some(y)) = (&a.ifscale_items, &b.ifscale_items) {
        let d = align::ifscale_differences(x, y);
        if !d.is_empty() {
            parts.push(format!("IFScale: {}", d.join("; ")));
        }
    }
    if let (Some(x), Some(y)) = (&a.rift_items, &b.rift_items) {
        let d = align::rift_differences(x, y);
        if !d.is_empty() {
            parts.push(format!("RIFT: {}", d.join("; ")));
        }
    }
    (!parts.is_empty()).then(|| parts.join(" | "))
}
