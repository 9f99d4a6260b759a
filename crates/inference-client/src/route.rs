//! Routing to upstream providers: a router (OpenRouter) sends one model id to different providers, whose
//! quantisation and serving differ, so a model's answers can change with the backend. A model's `route` pins it
//! (`[models.<name>.route]` in the models file): it becomes the request's `provider` object (OpenRouter's provider
//! routing: `order`, `allow_fallbacks`, `quantizations`), so it is part of the cache key. A model without a `route`
//! and without a `provider` in its `extra-body` keeps the exact request body (and cache key) it had.
//!
//! It knows nothing about runs or reports: [`unpinned`] only says whether a model's requests may be answered by
//! whichever provider the router picks.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::config::ModelConfig;

/// A router's provider settings for one model.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Route {
    /// The upstream providers to use, in order of preference (OpenRouter's provider slugs, e.g. "deepinfra").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub order: Vec<String>,
    /// Whether the router may fall back to providers not in `order`; `false` pins the model to them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_fallbacks: Option<bool>,
    /// Only providers serving these quantisations (e.g. "bf16", "fp8").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub quantizations: Vec<String>,
}

impl Route {
    /// The request's `provider` object.
    pub(crate) fn body(&self) -> Value {
        let mut m = Map::new();
        if !self.order.is_empty() {
            m.insert("order".into(), Value::from(self.order.clone()));
        }
        if let Some(f) = self.allow_fallbacks {
            m.insert("allow_fallbacks".into(), Value::Bool(f));
        }
        if !self.quantizations.is_empty() {
            m.insert(
                "quantizations".into(),
                Value::from(self.quantizations.clone()),
            );
        }
        Value::Object(m)
    }
}

/// Whether `model` is reached through a router that picks the upstream provider (OpenRouter).
pub fn is_router(model: &ModelConfig) -> bool {
    model.base_urls.iter().any(|u| u.contains("openrouter.ai"))
}

/// A router model whose requests any provider may answer: no `route` (or `extra-body.provider`) that names
/// providers with fallbacks off.
pub fn unpinned(model: &ModelConfig) -> bool {
    if !is_router(model) {
        return false;
    }
    let provider = match (&model.route, model.extra_body.get("provider")) {
        (_, Some(p)) => p.clone(),
        (Some(r), None) => r.body(),
        (None, None) => return true,
    };
    let named = provider
        .get("order")
        .or_else(|| provider.get("only"))
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty());
    let no_fallbacks = provider.get("allow_fallbacks") == Some(&Value::Bool(false));
    !(named && no_fallbacks)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(url: &str, route: Option<Route>) -> ModelConfig {
        ModelConfig {
            route,
            ..ModelConfig::ad_hoc(url, "m")
        }
    }

    #[test]
    fn a_router_model_is_pinned_by_named_providers_without_fallbacks() {
        let router = "https://openrouter.ai/api/v1";
        assert!(!unpinned(&model("http://localhost:8000/v1", None)));
        assert!(unpinned(&model(router, None)));
        let order = Route {
            order: vec!["deepinfra".into()],
            ..Route::default()
        };
        assert!(unpinned(&model(router, Some(order.clone()))));
        let pinned = Route {
            allow_fallbacks: Some(false),
            quantizations: vec!["bf16".into()],
            ..order
        };
        assert!(!unpinned(&model(router, Some(pinned.clone()))));
        assert_eq!(
            pinned.body().to_string(),
            r#"{"order":["deepinfra"],"allow_fallbacks":false,"quantizations":["bf16"]}"#
        );
    }
}
