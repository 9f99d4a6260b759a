//! Dry-run estimates: per benchmark stage and model, how many requests a run would send and their worst-case
//! cost, from the prompts and the response cache alone (nothing is sent).

use inference_client::{Client, ModelConfig};
use schema::PromptRecord;

use crate::Error;

/// One stage's requests for one model.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    pub stage: &'static str,
    pub model: String,
    /// How to read `requests`.
    pub note: String,
    pub requests: usize,
    /// Input tokens of the requests not in the cache (characters / 4 plus 4 per message).
    pub est_input_tokens: u64,
    /// None when it depends on replies not known yet (the judges' requests).
    pub worst_case_cost_usd: Option<f64>,
    /// Requests without `max_tokens` (their output cost is not bounded and not counted).
    pub unbounded: usize,
}

/// IFScale: the first attempts of every model (worst case: every retry), and the coherence judge if one is named.
pub fn ifscale(
    prompts: &[PromptRecord],
    models: &[ModelConfig],
    judge_model: Option<&str>,
    max_attempts: u32,
    client: &Client,
) -> Result<Vec<Estimate>, Error> {
    let mut rows = Vec::new();
    let attempts = max_attempts as usize;
    for m in models {
        let r = client.dry_run(m, prompts)?;
        let n = r.prompts - r.cached;
        rows.push(Estimate {
            stage: "ifscale generation",
            model: m.name.clone(),
            note: format!(
                "first attempts; worst case {} with every retry",
                n * attempts
            ),
            requests: n,
            est_input_tokens: r.est_input_tokens,
            worst_case_cost_usd: Some(r.worst_case_cost_usd * attempts as f64),
            unbounded: r.unbounded,
        });
        if let Some(judge) = judge_model {
            rows.push(Estimate {
                stage: "ifscale coherence judge",
                model: judge.to_owned(),
                note: format!(
                    "one per attempt that passes rules (a) and (b), at most {}",
                    n * attempts
                ),
                requests: n,
                est_input_tokens: 0,
                worst_case_cost_usd: None,
                unbounded: 0,
            });
        }
    }
    Ok(rows)
}

/// RIFT: one request per prompt and model, and at most one judge request per expected answer if a judge is named.
pub fn rift(
    prompts: &[PromptRecord],
    models: &[ModelConfig],
    judge_model: Option<&str>,
    client: &Client,
) -> Result<Vec<Estimate>, Error> {
    let mut rows = Vec::new();
    for m in models {
        let r = client.dry_run(m, prompts)?;
        rows.push(Estimate {
            stage: "rift generation",
            model: m.name.clone(),
            note: "one request per prompt".to_owned(),
            requests: r.prompts - r.cached,
            est_input_tokens: r.est_input_tokens,
            worst_case_cost_usd: Some(r.worst_case_cost_usd),
            unbounded: r.unbounded,
        });
    }
    if let Some(judge) = judge_model {
        let answers: usize = prompts
            .iter()
            .filter_map(|p| {
                p.extra
                    .get("expected")
                    .and_then(|e| e.as_array())
                    .map(Vec::len)
            })
            .sum();
        rows.push(Estimate {
            stage: "rift judge",
            model: judge.to_owned(),
            note: "at most one per answer the pre-judge cannot settle".to_owned(),
            requests: answers * models.len(),
            est_input_tokens: 0,
            worst_case_cost_usd: None,
            unbounded: 0,
        });
    }
    Ok(rows)
}
