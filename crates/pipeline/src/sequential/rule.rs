//! The stopping rule of a sequential run: the config's `[sequential]` section, `--until`, `--baseline` and
//! `--margin` (flags win), resolved into an [`Until`].

use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::outcome::Failure;

/// `[sequential]`: add the grid's units in batches, in its fixed seeded order, and stop once the rule holds
/// (see `docs/sequential.md`). Without `until` here or `--until`, a run is the whole grid.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct SequentialSection {
    /// The stopping rule: `"ci-width=2pp"` (every model's interval per IFScale density and RIFT structure narrower
    /// than 2 points) or `"decided"` (every candidate's paired comparison with `baseline` decided).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
    /// The model every other model is compared with (`decided`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
    /// A difference within this margin counts as none (`decided`; default `"1pp"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub margin: Option<String>,
    /// The error rate of the anytime-valid intervals (default 0.05; for `decided`, shared by all comparisons).
    #[serde(default = "default_alpha")]
    pub alpha: f64,
    /// IFScale seeds added per density and batch (default 1).
    #[serde(default = "one")]
    pub ifscale_batch: usize,
    /// RIFT question sets added per structure and batch (default 25).
    #[serde(default = "default_rift_batch")]
    pub rift_batch: usize,
}

impl Default for SequentialSection {
    fn default() -> SequentialSection {
        SequentialSection {
            until: None,
            baseline: None,
            margin: None,
            alpha: default_alpha(),
            ifscale_batch: one(),
            rift_batch: default_rift_batch(),
        }
    }
}

fn default_alpha() -> f64 {
    0.05
}

fn one() -> usize {
    1
}

fn default_rift_batch() -> usize {
    25
}

/// What `cargo xtask pipeline`'s flags say of the rule (each overrides the config's key).
#[derive(Debug, Clone, Default)]
pub struct Flags {
    pub until: Option<String>,
    pub baseline: Option<String>,
    pub margin: Option<String>,
}

/// When a sequential run stops adding batches.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "rule")]
pub enum Rule {
    /// Every interval narrower than this (a fraction: 2 pp is 0.02).
    CiWidth { width: f64 },
    /// Every candidate's paired difference with `baseline` better, worse or within `margin` (a fraction).
    Decided { baseline: String, margin: f64 },
}

/// A resolved rule with its batches.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Until {
    pub rule: Rule,
    pub alpha: f64,
    pub ifscale_batch: usize,
    pub rift_batch: usize,
    /// The rule as written (`ci-width=2pp`, `decided --baseline m --margin 1pp`).
    pub text: String,
}

impl Until {
    /// The rule of a config and its flags, or none (a whole-grid run); a malformed rule, an unknown baseline or a
    /// missing one is a usage error naming the config file and the field.
    pub fn resolve(
        section: Option<&SequentialSection>,
        flags: &Flags,
        models: &[String],
        config: &Path,
    ) -> anyhow::Result<Option<Until>> {
        let default = SequentialSection::default();
        let s = section.unwrap_or(&default);
        let bad = |field: &str, msg: String| -> anyhow::Error {
            Failure::Usage(format!(
                "{}: [sequential]: field `{field}`: {msg}",
                config.display()
            ))
            .into()
        };
        let Some(until) = flags.until.clone().or_else(|| s.until.clone()) else {
            return Ok(None);
        };
        if !(s.alpha > 0.0 && s.alpha < 1.0) {
            return Err(bad("alpha", "must lie between 0 and 1".to_owned()));
        }
        if s.ifscale_batch == 0 || s.rift_batch == 0 {
            return Err(bad(
                "ifscale-batch",
                "batches must add at least 1 unit".to_owned(),
            ));
        }
        let until = until.trim();
        let (rule, text) = if let Some(w) = until.strip_prefix("ci-width=") {
            let width = points(w).map_err(|m| bad("until", m))?;
            (
                Rule::CiWidth { width },
                format!("ci-width={}", fmt_pp(width)),
            )
        } else if until == "decided" {
            let baseline = flags
                .baseline
                .clone()
                .or_else(|| s.baseline.clone())
                .ok_or_else(|| {
                    bad(
                        "baseline",
                        "`decided` needs a baseline model (`--baseline`)".to_owned(),
                    )
                })?;
            if !models.contains(&baseline) {
                return Err(bad(
                    "baseline",
                    format!(
                        "`{baseline}` is not one of the run's models ({})",
                        models.join(", ")
                    ),
                ));
            }
            if models.len() < 2 {
                return Err(bad(
                    "until",
                    "`decided` needs a second model to compare".to_owned(),
                ));
            }
            let margin = match flags.margin.clone().or_else(|| s.margin.clone()) {
                Some(m) => points(&m).map_err(|m| bad("margin", m))?,
                None => 0.01,
            };
            let text = format!("decided --baseline {baseline} --margin {}", fmt_pp(margin));
            (Rule::Decided { baseline, margin }, text)
        } else {
            return Err(bad(
                "until",
                format!("`{until}` is not a rule: use `ci-width=<points>pp` or `decided`"),
            ));
        };
        Ok(Some(Until {
            rule,
            alpha: s.alpha,
            ifscale_batch: s.ifscale_batch,
            rift_batch: s.rift_batch,
            text,
        }))
    }
}

/// `2pp` (or `2`) as the fraction 0.02; a positive number of points below 100.
fn points(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let n = t.strip_suffix("pp").unwrap_or(t).trim();
    match n.parse::<f64>() {
        Ok(v) if v > 0.0 && v < 100.0 => Ok(v / 100.0),
        _ => Err(format!(
            "`{text}` is not a number of percentage points like `2pp`"
        )),
    }
}

/// A fraction as points: 0.02 → `2pp`, 0.005 → `0.5pp`.
pub fn fmt_pp(f: f64) -> String {
    let p = f * 100.0;
    let s = format!("{p:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s}pp")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(flags: Flags) -> anyhow::Result<Option<Until>> {
        let models = vec!["a".to_owned(), "b".to_owned()];
        Until::resolve(None, &flags, &models, Path::new("run.toml"))
    }

    #[test]
    fn rules_parse_from_flags() {
        let ci = resolve(Flags {
            until: Some("ci-width=2pp".into()),
            ..Flags::default()
        })
        .unwrap()
        .unwrap();
        assert_eq!(ci.rule, Rule::CiWidth { width: 0.02 });
        assert_eq!(ci.text, "ci-width=2pp");
        let d = resolve(Flags {
            until: Some("decided".into()),
            baseline: Some("a".into()),
            margin: Some("0.5pp".into()),
        })
        .unwrap()
        .unwrap();
        assert_eq!(
            d.rule,
            Rule::Decided {
                baseline: "a".into(),
                margin: 0.005
            }
        );
        assert!(resolve(Flags::default()).unwrap().is_none());
    }

    #[test]
    fn bad_rules_name_the_field() {
        for (flags, field) in [
            (
                Flags {
                    until: Some("ci-width=wide".into()),
                    ..Flags::default()
                },
                "until",
            ),
            (
                Flags {
                    until: Some("soon".into()),
                    ..Flags::default()
                },
                "until",
            ),
            (
                Flags {
                    until: Some("decided".into()),
                    ..Flags::default()
                },
                "baseline",
            ),
            (
                Flags {
                    until: Some("decided".into()),
                    baseline: Some("c".into()),
                    ..Flags::default()
                },
                "baseline",
            ),
        ] {
            let e = resolve(flags).unwrap_err().to_string();
            assert!(e.contains(&format!("field `{field}`")), "{e}");
        }
    }
}
