//! Stage 8: difficulty of each lemma as the perplexity of a model writing one sentence that uses it.
//!
//! For each lemma, `samples` prompts ask for a one-sentence business report that contains the word exactly once;
//! the difficulty is the mean over the usable samples of exp(−mean token log-probability) of the completion.
//! Prompts and responses are the shared `schema` records; running them is the caller's job (see [`PromptRunner`]).

use std::collections::BTreeMap;

use schema::{Message, Outcome, PromptRecord, RequestParams, ResponseRecord};
use serde::{Deserialize, Serialize};

use crate::Error;

/// How the final ranking is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DifficultyMethod {
    /// Perplexity of the model's completions (the paper's method).
    Perplexity,
    /// Offline proxy with no model: difficulty = 9 − Zipf (rarer words rank as harder). Not the paper's method.
    ZipfProxy,
}

/// Settings of the difficulty stage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct DifficultyConfig {
    pub method: DifficultyMethod,
    /// Model name from the models config (perplexity method).
    pub model: String,
    /// Completions per lemma. The paper used 3 at temperature 0; with a deterministic greedy local model the
    /// samples are identical, so 1 gives the same number at a third of the cost.
    pub samples: u32,
    pub temperature: f64,
    pub max_tokens: u32,
    /// Extra request body fields (e.g. `repeat_penalty` for a local model).
    #[serde(default)]
    pub extra_body: serde_json::Map<String, serde_json::Value>,
    /// Path of the prompt template; `{word}` becomes the lemma.
    pub prompt: std::path::PathBuf,
    /// Terms kept after ranking.
    pub keep: usize,
}

impl Default for DifficultyConfig {
    /// The offline default: the embedded SmolLM2-135M, one greedy sample (it is deterministic), top 500.
    fn default() -> Self {
        let mut extra_body = serde_json::Map::new();
        // A 135M model loops under pure greedy decoding; a mild repeat penalty makes it stop by itself.
        extra_body.insert("repeat_penalty".to_owned(), serde_json::json!(1.15));
        DifficultyConfig {
            method: DifficultyMethod::Perplexity,
            model: "smollm2-135m".to_owned(),
            samples: 1,
            temperature: 0.0,
            max_tokens: 48,
            extra_body,
            prompt: std::path::PathBuf::from("configs/prompts/vocab-difficulty.txt"),
            keep: 500,
        }
    }
}

/// Runs prompts through a model and returns one response per prompt (in any order).
pub trait PromptRunner {
    /// Description of `model` recorded in the provenance report.
    fn describe(&self, model: &str) -> serde_json::Value;
    /// Runs the prompts of one stage (`stage` names the output file) on the configured model named `model`.
    fn run(
        &mut self,
        stage: &str,
        model: &str,
        prompts: &[PromptRecord],
    ) -> Result<Vec<ResponseRecord>, Error>;
}

/// One prompt per lemma and sample, with log-probabilities requested.
pub fn build_prompts(
    lemmas: &[String],
    template: &str,
    cfg: &DifficultyConfig,
) -> Vec<PromptRecord> {
    let mut out = Vec::with_capacity(lemmas.len() * cfg.samples as usize);
    for lemma in lemmas {
        let text = template.replace("{word}", lemma);
        for s in 0..cfg.samples.max(1) {
            let mut extra = serde_json::Map::new();
            extra.insert("term".to_owned(), serde_json::Value::String(lemma.clone()));
            out.push(PromptRecord {
                id: format!("vocab-difficulty:{lemma}"),
                messages: vec![Message::user(text.clone())],
                sample_index: s,
                params: RequestParams {
                    max_tokens: Some(cfg.max_tokens),
                    temperature: Some(cfg.temperature),
                    logprobs: true,
                    extra_body: cfg.extra_body.clone(),
                    ..RequestParams::default()
                },
                extra,
            });
        }
    }
    out
}

/// A lemma's measured difficulty.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Difficulty {
    pub perplexity: f64,
    pub samples: u32,
}

/// Counts of what the responses contained.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub struct ScoreReport {
    pub responses: u64,
    pub used: u64,
    pub failed: u64,
    pub without_logprobs: u64,
    pub unknown_id: u64,
}

/// Averages exp(−mean log-prob) per lemma over the usable responses (outcome ok or truncated, with log-probs).
pub fn score(responses: &[ResponseRecord]) -> (BTreeMap<String, Difficulty>, ScoreReport) {
    let mut sums: BTreeMap<String, (f64, u32)> = BTreeMap::new();
    let mut rep = ScoreReport {
        responses: responses.len() as u64,
        ..ScoreReport::default()
    };
    for r in responses {
        let Some(lemma) = r.id.strip_prefix("vocab-difficulty:") else {
            rep.unknown_id += 1;
            continue;
        };
        if r.outcome == Outcome::Failed {
            rep.failed += 1;
            continue;
        }
        let Some(lp) = r
            .logprobs
            .as_ref()
            .filter(|lp| lp.tokens > 0 && lp.mean.is_finite())
        else {
            rep.without_logprobs += 1;
            continue;
        };
        let e = sums.entry(lemma.to_owned()).or_insert((0.0, 0));
        e.0 += (-lp.mean).exp();
        e.1 += 1;
        rep.used += 1;
    }
    let out = sums
        .into_iter()
        .map(|(k, (s, n))| {
            (
                k,
                Difficulty {
                    perplexity: s / f64::from(n),
                    samples: n,
                },
            )
        })
        .collect();
    (out, rep)
}

/// Ranks `(term, difficulty)` by descending difficulty (ties: alphabetical) and keeps the first `keep`.
pub fn rank(mut scored: Vec<(String, f64)>, keep: usize) -> Vec<(String, f64)> {
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    scored.truncate(keep);
    scored
}

#[cfg(test)]
mod tests {
    use super::*;
    use schema::Logprobs;

    fn cfg() -> DifficultyConfig {
        DifficultyConfig {
            method: DifficultyMethod::Perplexity,
            model: "m".into(),
            samples: 3,
            temperature: 0.0,
            max_tokens: 60,
            extra_body: serde_json::Map::new(),
            prompt: "p".into(),
            keep: 2,
        }
    }

    fn resp(id: &str, s: u32, mean: Option<f64>, outcome: Outcome) -> ResponseRecord {
        ResponseRecord {
            sample_index: s,
            outcome,
            content: Some("x".into()),
            logprobs: mean.map(|mean| Logprobs { mean, tokens: 10 }),
            ..ResponseRecord::new(id, "m")
        }
    }

    #[test]
    fn prompts_ask_for_logprobs_per_sample() {
        let p = build_prompts(&["lease".into()], "Use {word} once.", &cfg());
        assert_eq!(p.len(), 3);
        assert_eq!(p[2].sample_index, 2);
        assert!(p[0].params.logprobs);
        assert_eq!(p[0].messages[0].content, "Use lease once.");
        assert_eq!(p[0].id, "vocab-difficulty:lease");
    }

    #[test]
    fn perplexity_is_averaged_and_ranked() {
        let rs = vec![
            resp("vocab-difficulty:lease", 0, Some(-1.0), Outcome::Ok),
            resp("vocab-difficulty:lease", 1, Some(-2.0), Outcome::Truncated),
            resp("vocab-difficulty:audit", 0, Some(-0.5), Outcome::Ok),
            resp("vocab-difficulty:audit", 1, None, Outcome::Ok),
            resp("vocab-difficulty:tort", 0, Some(-3.0), Outcome::Failed),
            resp("other", 0, Some(-1.0), Outcome::Ok),
        ];
        let (d, rep) = score(&rs);
        let lease = (1f64.exp() + 2f64.exp()) / 2.0;
        assert!((d["lease"].perplexity - lease).abs() < 1e-12);
        assert_eq!(d["lease"].samples, 2);
        assert_eq!(
            (rep.used, rep.failed, rep.without_logprobs, rep.unknown_id),
            (3, 1, 1, 1)
        );
        let ranked = rank(d.into_iter().map(|(k, v)| (k, v.perplexity)).collect(), 1);
        assert_eq!(ranked[0].0, "lease");
    }
}
