//! `/v1/embeddings` through the client: the same keys, retry rules, cache and budget as chat.
//!
//! Inputs go in batches; each batch is one request, cached under the model identity and the batch's body, and
//! retried by the rules of the `retry` module. Vectors come back in input order (by the reply's `index`).

use std::time::Duration;

use serde_json::{Map, Value};

use crate::body::{cache_key, model_identity};
use crate::cache::Cache;
use crate::client::Client;
use crate::config::{Engine, ModelConfig};
use crate::http;
use crate::parse::{self, Failure};
use crate::redact::Redactor;
use crate::retry::{self, Ended, Rules};
use crate::{Error, run::class_name};

#[derive(serde::Deserialize)]
struct Reply {
    data: Vec<Item>,
    #[serde(default)]
    usage: Option<Value>,
}

#[derive(serde::Deserialize)]
struct Item {
    index: usize,
    embedding: Vec<f32>,
}

impl Client {
    /// The embedding of each text from the model's OpenAI-compatible `/embeddings` endpoint, in input order,
    /// `batch_size` texts per request (spread over the model's base URLs). Cached batches are not sent again.
    ///
    /// A batch that still fails after the model's `max-attempts`, a reply that does not give one vector per
    /// input, or a cost limit that the next batch could exceed is an error naming the model and the URL.
    pub fn embed(
        &self,
        model: &ModelConfig,
        texts: &[String],
        batch_size: usize,
    ) -> Result<Vec<Vec<f32>>, Error> {
        model.validate(&format!("model {:?}", model.name))?;
        if model.engine == Engine::Embedded {
            return Err(Error::Config(format!(
                "model {:?}: the embedded engine serves no embeddings; name an OpenAI-compatible embeddings server",
                model.name
            )));
        }
        let access = http::access(model, &self.options().env)?;
        let redactor = &access.redactor;
        let cache = Cache::open(&self.options().cache_path)?;
        let identity = model_identity(model);
        let bases = self.base_urls(model)?;
        let urls: Vec<String> = bases
            .iter()
            .map(|u| format!("{}/embeddings", u.trim_end_matches('/')))
            .collect();
        // The client's connection pool per base URL (shared with every other call to it).
        let http = bases
            .iter()
            .map(|b| self.pools().http(model, &access, b, 2))
            .collect::<Result<Vec<_>, Error>>()?;
        let budget = self.budget();
        let mut out = Vec::with_capacity(texts.len());
        for (b, chunk) in texts.chunks(batch_size.max(1)).enumerate() {
            let mut body = Map::new();
            body.insert("model".into(), Value::String(model.model_id.clone()));
            body.insert("input".into(), Value::from(chunk.to_vec()));
            let ckey = cache_key(&identity, &body, 0);
            if !self.options().refresh
                && let Some(v) = cache.get_vectors(&ckey)?.filter(|v| v.len() == chunk.len())
            {
                out.extend(v);
                continue;
            }
            let url = &urls[b % urls.len()];
            let http = &http[b % urls.len()];
            let input: u64 = chunk
                .iter()
                .map(|t| (t.chars().count() as u64).div_ceil(4) + 1)
                .sum();
            let worst = model.worst_case_cost(input, 0);
            if !budget.try_reserve(worst).0 {
                return Err(Error::Budget(format!(
                    "model {:?}: the next embeddings request could exceed the cost limit (spent {:.4} USD of {:.4})",
                    model.name,
                    budget.spent(),
                    budget.cap().unwrap_or(f64::INFINITY)
                )));
            }
            let body = serde_json::to_vec(&Value::Object(body))
                .map_err(|e| Error::Prompts(e.to_string()))?;
            let sent = self
                .runtime()
                .block_on(post_with_retries(http, url, body, model, &ckey, redactor));
            let bytes = match sent {
                Ok(b) => b,
                Err(f) => {
                    budget.settle(worst, 0.0);
                    let status = f.status.map(|s| format!("HTTP {s}, ")).unwrap_or_default();
                    return Err(Error::Request {
                        model: model.name.clone(),
                        url: url.clone(),
                        message: format!("{status}{}: {}", class_name(f.class), f.message),
                    });
                }
            };
            let reply: Reply = serde_json::from_slice(&bytes).map_err(|e| {
                budget.settle(worst, 0.0);
                Error::Request {
                    model: model.name.clone(),
                    url: url.clone(),
                    message: format!("the reply is not an embeddings list: {e}"),
                }
            })?;
            let usage = parse::parse_usage(reply.usage.as_ref());
            let cost = usage
                .cost_usd
                .unwrap_or_else(|| model.cost_from_usage(usage.prompt_tokens, 0));
            budget.settle(worst, cost);
            let vectors = in_order(reply.data, chunk.len()).map_err(|message| Error::Request {
                model: model.name.clone(),
                url: url.clone(),
                message,
            })?;
            cache.put_vectors(&ckey, &identity, &vectors)?;
            out.extend(vectors);
        }
        Ok(out)
    }
}

/// One vector per input, placed by the reply's `index`; an error names a missing or out-of-range index.
fn in_order(items: Vec<Item>, n: usize) -> Result<Vec<Vec<f32>>, String> {
    let mut slots: Vec<Option<Vec<f32>>> = vec![None; n];
    for item in items {
        let slot = slots
            .get_mut(item.index)
            .ok_or_else(|| format!("the reply has index {} for {n} inputs", item.index))?;
        *slot = Some(item.embedding);
    }
    slots
        .into_iter()
        .enumerate()
        .map(|(i, v)| {
            v.filter(|v| !v.is_empty())
                .ok_or_else(|| format!("the reply has no embedding for input {i}"))
        })
        .collect()
}

/// POSTs with the retry rules of the `retry` module; a failure that stops the model comes back at once.
async fn post_with_retries(
    http: &reqwest::Client,
    url: &str,
    body: Vec<u8>,
    model: &ModelConfig,
    key_seed: &str,
    redactor: &Redactor,
) -> Result<Vec<u8>, Failure> {
    let timeout = Duration::from_secs_f64(model.timeout_s);
    let ended = retry::drive(
        Rules::of(model),
        key_seed,
        None,
        |_| {
            let body = body.clone();
            async move {
                Some(
                    http::post(http, url, body, timeout, redactor)
                        .await
                        .map(|(_, bytes)| bytes),
                )
            }
        },
        |f, v| {
            if !v.last {
                tracing::warn!(model = %model.name, url, attempt = v.n, class = class_name(f.class), wait_s = v.wait.as_secs_f64(), "Embeddings request failed; retrying.");
            }
        },
    )
    .await;
    match ended {
        Ended::Answered(bytes) => Ok(bytes),
        Ended::Failed(f) => Err(f),
        Ended::NotMade => unreachable!("an embeddings attempt is always made"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_are_put_in_input_order() {
        let items = vec![
            Item {
                index: 1,
                embedding: vec![2.0],
            },
            Item {
                index: 0,
                embedding: vec![1.0],
            },
        ];
        assert_eq!(in_order(items, 2).unwrap(), vec![vec![1.0], vec![2.0]]);
        let short = vec![Item {
            index: 0,
            embedding: vec![1.0],
        }];
        assert!(in_order(short, 2).unwrap_err().contains("input 1"));
        let out_of_range = vec![Item {
            index: 5,
            embedding: vec![1.0],
        }];
        assert!(in_order(out_of_range, 1).unwrap_err().contains("index 5"));
    }
}
