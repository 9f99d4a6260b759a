//! Dry-run estimates: per benchmark stage and model, how many requests a run would send and their worst-case
//! cost, from the prompts and the response cache alone (nothing is sent); [`expected`], the expected cost from a
//! pilot's answers.

pub mod expected;

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

/// IFScale: the first attempts of every model (worst case: every retry), the coherence judge if one is named, and
/// the refusal judge if one is named.
pub fn ifscale(
    prompts: &[PromptRecord],
    models: &[ModelConfig],
    judge_model: Option<&str>,
    refusal_judge: Option<&str>,
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
        if let Some(judge) = refusal_judge {
            rows.push(Estimate {
                stage: "ifscale refusal judge",
                model: judge.to_owned(),
                note: format!(
                    "one per attempt the refusal rules cannot settle (known only from the replies), at most {}",
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

/// RIFT: one request per prompt and model, and judge requests (up to `[judges.rift] tries` per expected answer) if a judge is named.
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
            note: "one per answer the pre-judge cannot settle, up to `tries` when a reply cannot be read".to_owned(),
            requests: answers * models.len(),
            est_input_tokens: 0,
            worst_case_cost_usd: None,
            unbounded: 0,
        });
    }
    Ok(rows)
}

/// The estimate as a Markdown table, with the worst case in all below it.
pub fn to_markdown(rows: &[Estimate]) -> String {
    use schema::table::{left, right};
    let mut t = schema::Table::new(vec![
        left("stage"),
        left("model"),
        right("requests"),
        left("note"),
        right("est. input tokens"),
        right("worst-case cost (USD)"),
    ]);
    let mut total_cost = 0.0;
    for r in rows {
        let cost_s = match r.worst_case_cost_usd {
            None => "depends on replies".to_owned(),
            Some(cost) if r.unbounded > 0 => {
                format!("{cost:.2} (+{} requests without max-tokens)", r.unbounded)
            }
            Some(cost) => format!("{cost:.2}"),
        };
        if let Some(cost) = r.worst_case_cost_usd.filter(|c| c.is_finite()) {
            total_cost += cost;
        }
        t.push(vec![
            r.stage.to_owned(),
            r.model.clone(),
            r.requests.to_string(),
            r.note.clone(),
            r.est_input_tokens.to_string(),
            cost_s,
        ]);
    }
    let mut md = t.to_markdown();
    md.push_str(&format!(
        "\nWorst case in all (without judge replies): {total_cost:.2} USD. Nothing was sent.\n"
    ));
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_sums_the_bounded_costs() {
        let row = |stage, cost, unbounded| Estimate {
            stage,
            model: "m".to_owned(),
            note: "n".to_owned(),
            requests: 2,
            est_input_tokens: 10,
            worst_case_cost_usd: cost,
            unbounded,
        };
        let md = to_markdown(&[
            row("a", Some(1.5), 0),
            row("b", Some(0.25), 3),
            row("c", None, 0),
        ]);
        assert!(md.contains("| a | m | 2 | n | 10 | 1.50 |"), "{md}");
        assert!(md.contains("0.25 (+3 requests without max-tokens)"), "{md}");
        assert!(
            md.contains("| c | m | 2 | n | 10 | depends on replies |"),
            "{md}"
        );
        assert!(
            md.contains("Worst case in all (without judge replies): 1.75 USD"),
            "{md}"
        );
    }
}
