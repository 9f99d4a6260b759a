//! Model display names, the reasoning-model rule and the reasoning-effort rule shared by tables and figures.

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

/// A configuration's reasoning effort as its name states it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Effort {
    /// No effort in the name: the provider's default (OpenAI's o-series default is medium; the published leaderboard
    /// calls the plain `o3` "o3 (medium)"), or reasoning off for a hybrid model.
    Default,
    Low,
    Medium,
    High,
}

impl Effort {
    pub fn as_str(self) -> &'static str {
        match self {
            Effort::Default => "default",
            Effort::Low => "low",
            Effort::Medium => "medium",
            Effort::High => "high",
        }
    }
}

/// The base name and the effort of a configuration, by name: a trailing `-high-reasoning`, `-high`, `-medium`
/// (`-medium-reasoning`) or `-low` (`-low-reasoning`) names the effort; anything else is [`Effort::Default`].
pub fn effort_of(model: &str) -> (String, Effort) {
    for (suffix, effort) in [
        ("-high-reasoning", Effort::High),
        ("-medium-reasoning", Effort::Medium),
        ("-low-reasoning", Effort::Low),
        ("-high", Effort::High),
        ("-medium", Effort::Medium),
        ("-low", Effort::Low),
    ] {
        if let Some(base) = model.strip_suffix(suffix) {
            return (base.to_owned(), effort);
        }
    }
    (model.to_owned(), Effort::Default)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn effort_from_names() {
        assert_eq!(
            effort_of("openai/o3-high-reasoning"),
            ("openai/o3".to_owned(), Effort::High)
        );
        assert_eq!(effort_of("o3-medium"), ("o3".to_owned(), Effort::Medium));
        assert_eq!(effort_of("o3-high"), ("o3".to_owned(), Effort::High));
        assert_eq!(
            effort_of("openai/o3"),
            ("openai/o3".to_owned(), Effort::Default)
        );
        assert_eq!(
            effort_of("gpt-4.1-mini"),
            ("gpt-4.1-mini".to_owned(), Effort::Default)
        );
    }
}
