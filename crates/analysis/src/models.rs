//! Model display names and the reasoning-model rule shared by tables and figures.

/// Whether a model configuration is a reasoning model, by name.
///
/// The rule (for the IFScale published names and RIFT model names): a name containing `reasoning`, `thinking` or
/// `-r1`, an OpenAI o-series name (`o1`, `o3`, `o4-mini`, …), `gemini-2.5-pro`, `grok-3-mini` or `gpt-oss` counts
/// as reasoning. Callers that know better pass an explicit list (see [`ReasoningRule`]).
pub fn is_reasoning_name(model: &str) -> bool {
    let lower = model.to_ascii_lowercase();
    let base = lower.rsplit('/').next().unwrap_or(&lower);
    let o_series = base.len() >= 2 && base.starts_with('o') && base.as_bytes()[1].is_ascii_digit();
    o_series
        || [
            "reasoning",
            "thinking",
            "-r1",
            "gemini-2.5-pro",
            "grok-3-mini",
            "gpt-oss",
        ]
        .iter()
        .any(|needle| base.contains(needle))
}

/// How reasoning models are recognized: an explicit list when the caller has one, otherwise [`is_reasoning_name`].
#[derive(Debug, Clone, Default)]
pub struct ReasoningRule {
    /// Exact model names that are reasoning models; when `Some`, the name heuristic is not used.
    pub explicit: Option<Vec<String>>,
}

impl ReasoningRule {
    pub fn is_reasoning(&self, model: &str) -> bool {
        match &self.explicit {
            Some(list) => list.iter().any(|m| m == model),
            None => is_reasoning_name(model),
        }
    }

    /// The label used in figures and tables: the name without its provider prefix, with " (r)" for reasoning models.
    pub fn label(&self, model: &str) -> String {
        let short = model.rsplit('/').next().unwrap_or(model);
        let short = short
            .strip_suffix("-high-reasoning")
            .map(|s| format!("{s}-high"))
            .unwrap_or_else(|| short.to_owned());
        if self.is_reasoning(model) {
            format!("{short} (r)")
        } else {
            short
        }
    }
}
