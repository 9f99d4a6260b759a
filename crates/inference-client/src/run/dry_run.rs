//! The dry run: what a run would send and cost at most, without sending anything.

use schema::PromptRecord;

use crate::Error;
use crate::body::{
    body_max_tokens, cache_key, estimate_input_tokens, model_identity, request_body,
};
use crate::cache::Cache;
use crate::client::{Client, check_limits, check_unique};
use crate::config::ModelConfig;

/// What `dry_run` estimates.
#[derive(Debug, Clone, PartialEq)]
pub struct DryRunReport {
    pub prompts: usize,
    /// Prompts whose answer is already in the cache (0 with `refresh`); they would cost nothing.
    pub cached: usize,
    /// Input tokens of the prompts that would be sent, estimated as characters / 4 plus 4 per message.
    pub est_input_tokens: u64,
    /// Their cost if every answer used its full `max_tokens`.
    pub worst_case_cost_usd: f64,
    /// Prompts without any `max_tokens` (their output cost is not bounded and not counted).
    pub unbounded: usize,
}

/// Estimates a run without sending anything.
pub(crate) fn dry_run(
    client: &Client,
    model: &ModelConfig,
    prompts: &[PromptRecord],
) -> Result<DryRunReport, Error> {
    let opts = client.options();
    model.validate(&format!("model {:?}", model.name))?;
    check_unique(prompts)?;
    check_limits(model, prompts)?;
    let identity = model_identity(model);
    let cache = if !opts.refresh && opts.cache_path.exists() {
        Some(Cache::open(&opts.cache_path)?)
    } else {
        None
    };
    let mut report = DryRunReport {
        prompts: prompts.len(),
        cached: 0,
        est_input_tokens: 0,
        worst_case_cost_usd: 0.0,
        unbounded: 0,
    };
    for p in prompts {
        let body = request_body(model, p);
        if let Some(c) = &cache
            && c.get(&cache_key(&identity, &body, p.sample_index))?
                .is_some()
        {
            report.cached += 1;
            continue;
        }
        let input = estimate_input_tokens(p);
        report.est_input_tokens += input;
        let max_tokens = body_max_tokens(&body);
        if max_tokens.is_none() {
            report.unbounded += 1;
        }
        report.worst_case_cost_usd += model.worst_case_cost(input, max_tokens.unwrap_or(0));
    }
    Ok(report)
}
