//! `[judges.<role>]`: one table per LLM judge (`rift`, `coherence`, `refusal`), each with the same keys, and the
//! judges of a config loaded ([`LoadedJudge`]: its model from the models file and its prompt's text).
//!
//! The keys the judges had before they were one concept (`[ifscale] judge-model`, `[rift-prep] judge-template`,
//! `[judge-check] coherent-reports`, …) are refused with a one-line error that names the new key ([`moved_key`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use harness::helper::{HelperCall, JudgeRef};
use schema::judge::JudgeRole;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::outcome::Failure;

/// The config's judges, one optional table each; a judge left out is not asked (see each role's docs for what then
/// happens to the items it would decide).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct JudgesSection {
    /// RIFT's answer judge: decides the answers the deterministic pre-judge cannot settle; without it they are
    /// unjudged (neither correct nor incorrect; the tables show accuracy bounds). Its prompt ({question},
    /// {expected}, {given}) defaults to `configs/prompts/rift-judge.txt`; its controls are made from the run's data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rift: Option<JudgeSection>,
    /// IFScale's coherence judge: rates every accepted attempt against `[ifscale] coherence-threshold`; without it
    /// the coherence check is skipped and the report says so. Its rubric defaults to
    /// `configs/prompts/ifscale-coherence.txt` (our own text; the paper's is not available) and its coherent
    /// control reports to `datasets/ifscale-coherence/coherent.jsonl`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coherence: Option<JudgeSection>,
    /// IFScale's refusal judge: decides the replies the refusal detector cannot settle; without it they are scored
    /// and no request is sent. Its rubric defaults to `configs/prompts/ifscale-refusal.txt` and its control
    /// replies to `datasets/ifscale-refusal/controls.jsonl`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<JudgeSection>,
}

/// One judge: who it is, what it is told, how its requests are sent, and how it is checked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct JudgeSection {
    /// The judge model (a name from `[run] models-file`).
    pub model: String,
    /// Its prompt or rubric file (unset: the role's default, see `[judges]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<PathBuf>,
    /// `max_tokens` of each request (unset: 4096, room for a reasoning judge to think).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Requests per item while the reply cannot be read (unset: 3); an item still without a verdict is unjudged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tries: Option<u32>,
    /// `reasoning_effort` of each request (unset: the judge model's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<String>,
    /// Extra body fields of each request (e.g. a provider's thinking switch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_body: Option<serde_json::Map<String, serde_json::Value>>,
    /// The hand-written control items of the judge check (coherence and refusal judges; unset: the role's default
    /// file). The RIFT judge's controls are made from the run's data, so it has no such file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controls: Option<PathBuf>,
    /// Control items of each kind for this judge (unset: `[judge-check] per-kind`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_kind: Option<usize>,
    /// Smallest share of known-correct controls this judge must accept (unset: `[judge-check] min-sensitivity`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_sensitivity: Option<f64>,
    /// Smallest share of known-incorrect controls this judge must reject (unset: `[judge-check] min-specificity`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_specificity: Option<f64>,
    /// Largest share of the run's own items this judge may leave without a readable verdict (unset:
    /// `[judge-check] max-unreadable-share`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unreadable_share: Option<f64>,
}

/// The RIFT judge's default prompt file (our own; the paper publishes neither its judge nor its prompt).
pub const DEFAULT_RIFT_PROMPT: &str = "configs/prompts/rift-judge.txt";

/// The default prompt file of each role, relative to the workspace root.
pub fn default_prompt(role: JudgeRole) -> &'static str {
    match role {
        JudgeRole::RiftAnswers => DEFAULT_RIFT_PROMPT,
        JudgeRole::Coherence => "configs/prompts/ifscale-coherence.txt",
        JudgeRole::Refusal => "configs/prompts/ifscale-refusal.txt",
    }
}

/// The default control file of each role that has one.
pub fn default_controls(role: JudgeRole) -> Option<&'static str> {
    match role {
        JudgeRole::RiftAnswers => None,
        JudgeRole::Coherence => Some("datasets/ifscale-coherence/coherent.jsonl"),
        JudgeRole::Refusal => Some("datasets/ifscale-refusal/controls.jsonl"),
    }
}

impl JudgesSection {
    /// The table of `role`, when the config has one.
    pub fn get(&self, role: JudgeRole) -> Option<&JudgeSection> {
        match role {
            JudgeRole::RiftAnswers => self.rift.as_ref(),
            JudgeRole::Coherence => self.coherence.as_ref(),
            JudgeRole::Refusal => self.refusal.as_ref(),
        }
    }

    /// The configured judges with their roles, in role order.
    pub fn iter(&self) -> impl Iterator<Item = (JudgeRole, &JudgeSection)> {
        JudgeRole::ALL
            .into_iter()
            .filter_map(|r| self.get(r).map(|j| (r, j)))
    }

    /// The checks serde cannot make; a failure is a usage error naming the file, the table and the field.
    pub fn check(&self, path: &Path) -> anyhow::Result<()> {
        for (role, j) in self.iter() {
            let share = |v: Option<f64>| v.is_some_and(|v| !(0.0..=1.0).contains(&v));
            let bad = if j.model.trim().is_empty() {
                Some(("model", "names no model"))
            } else if j.max_tokens == Some(0) {
                Some(("max-tokens", "must be at least 1"))
            } else if j.tries == Some(0) {
                Some(("tries", "must be at least 1"))
            } else if j.per_kind == Some(0) {
                Some((
                    "per-kind",
                    "must be at least 1 (set `[judge-check] enabled = false` to send no control item)",
                ))
            } else if share(j.min_sensitivity) {
                Some(("min-sensitivity", "must be between 0 and 1"))
            } else if share(j.min_specificity) {
                Some(("min-specificity", "must be between 0 and 1"))
            } else if share(j.max_unreadable_share) {
                Some(("max-unreadable-share", "must be between 0 and 1"))
            } else if j.controls.is_some() && default_controls(role).is_none() {
                Some((
                    "controls",
                    "the RIFT judge's controls are made from the run's data; there is no file to name",
                ))
            } else {
                None
            };
            if let Some((field, msg)) = bad {
                return Err(Failure::Usage(format!(
                    "{}: [judges.{}]: field `{field}`: {msg}",
                    path.display(),
                    role.key()
                ))
                .into());
            }
        }
        Ok(())
    }
}

impl JudgeSection {
    /// A judge of `model` with every other key unset (its role's defaults).
    pub fn of_model(model: &str) -> JudgeSection {
        JudgeSection {
            model: model.to_owned(),
            prompt: None,
            max_tokens: None,
            tries: None,
            reasoning_effort: None,
            extra_body: None,
            controls: None,
            per_kind: None,
            min_sensitivity: None,
            min_specificity: None,
            max_unreadable_share: None,
        }
    }

    /// Its request settings, defaults filled in.
    pub fn call(&self) -> HelperCall {
        let d = HelperCall::judge();
        HelperCall {
            max_tokens: self.max_tokens.unwrap_or(d.max_tokens),
            tries: self.tries.unwrap_or(d.tries),
            reasoning_effort: self.reasoning_effort.clone(),
            extra_body: self.extra_body.clone().unwrap_or_default(),
        }
    }

    /// Its prompt file, the role's default when unset.
    pub fn prompt_file(&self, role: JudgeRole) -> PathBuf {
        self.prompt
            .clone()
            .unwrap_or_else(|| PathBuf::from(default_prompt(role)))
    }

    /// Its control file, the role's default when unset (None for the RIFT judge).
    pub fn controls_file(&self, role: JudgeRole) -> Option<PathBuf> {
        self.controls
            .clone()
            .or_else(|| default_controls(role).map(PathBuf::from))
    }
}

/// The request settings of a role's judge in `judges`, or the defaults without one (a standalone command may be
/// given a judge model the config does not name).
pub fn call_of(judges: &JudgesSection, role: JudgeRole) -> HelperCall {
    judges
        .get(role)
        .map_or_else(HelperCall::judge, JudgeSection::call)
}

/// A judge of a config, loaded: its table, its model and its prompt's text (read as the judge gets it).
#[derive(Debug, Clone)]
pub struct LoadedJudge {
    pub role: JudgeRole,
    pub section: JudgeSection,
    pub model: inference_client::ModelConfig,
    /// The prompt file (`prompt`, or the role's default) and its text, trailing whitespace dropped.
    pub prompt_file: PathBuf,
    pub prompt: String,
    /// Its request settings, defaults filled in.
    pub call: HelperCall,
}

impl LoadedJudge {
    /// Loads the judge of `role` in `judges` (None without one): its model from `models_file`, its prompt file
    /// read up front so a missing one stops the run before anything is sent. Every problem is a usage error naming
    /// the config file and the field.
    pub fn load(
        judges: &JudgesSection,
        role: JudgeRole,
        models_file: &Path,
        config: &Path,
    ) -> anyhow::Result<Option<LoadedJudge>> {
        match judges.get(role) {
            Some(section) => LoadedJudge::of_section(role, section, models_file, config).map(Some),
            None => Ok(None),
        }
    }

    /// The judge of a standalone command: `config`'s table of `role` (when a config is given and has one), its
    /// model replaced by `model` and its prompt by `prompt` where the command line names them; None when neither
    /// names a judge.
    pub fn standalone(
        config: Option<&Path>,
        role: JudgeRole,
        model: Option<&str>,
        prompt: Option<&Path>,
        models_file: &Path,
    ) -> anyhow::Result<Option<LoadedJudge>> {
        let judges = config.map(load_judges).transpose()?.unwrap_or_default();
        let section = match (judges.get(role), model) {
            (Some(s), Some(m)) => Some(JudgeSection {
                model: m.to_owned(),
                ..s.clone()
            }),
            (Some(s), None) => Some(s.clone()),
            (None, Some(m)) => Some(JudgeSection::of_model(m)),
            (None, None) => None,
        };
        let Some(mut section) = section else {
            return Ok(None);
        };
        if let Some(p) = prompt {
            section.prompt = Some(p.to_owned());
        }
        let config = config.unwrap_or(Path::new("the command line"));
        LoadedJudge::of_section(role, &section, models_file, config).map(Some)
    }

    /// Loads the judge `section` describes (see [`LoadedJudge::load`]).
    fn of_section(
        role: JudgeRole,
        section: &JudgeSection,
        models_file: &Path,
        config: &Path,
    ) -> anyhow::Result<LoadedJudge> {
        let model = crate::models::load_model(models_file, &section.model)?;
        let prompt_file = section.prompt_file(role);
        let what = match role {
            JudgeRole::RiftAnswers => "judge",
            JudgeRole::Coherence => "coherence",
            JudgeRole::Refusal => "refusal",
        };
        let prompt = harness::ifscale::read_rubric(&prompt_file, what).map_err(|e| {
            Failure::Usage(format!(
                "{}: [judges.{}]: field `prompt`: {e}",
                config.display(),
                role.key()
            ))
        })?;
        Ok(LoadedJudge {
            role,
            call: section.call(),
            section: section.clone(),
            model,
            prompt_file,
            prompt,
        })
    }

    /// The judge as the harness asks it.
    pub fn judge(&self) -> JudgeRef<'_> {
        JudgeRef {
            role: self.role,
            model: &self.model,
            prompt: &self.prompt,
            call: &self.call,
        }
    }
}

/// The loaded judges of a run, by role.
pub type Judges = BTreeMap<JudgeRole, LoadedJudge>;

/// The keys of the judges before `[judges]`, by the table they were in, with the key that replaces each.
const MOVED: &[(&str, &str, &str)] = &[
    ("ifscale", "judge-model", "[judges.coherence] model"),
    (
        "ifscale",
        "judge-max-tokens",
        "[judges.coherence] max-tokens",
    ),
    ("ifscale", "judge-tries", "[judges.coherence] tries"),
    (
        "ifscale",
        "judge-reasoning-effort",
        "[judges.coherence] reasoning-effort",
    ),
    (
        "ifscale",
        "judge-extra-body",
        "[judges.coherence] extra-body",
    ),
    ("ifscale", "coherence-prompt", "[judges.coherence] prompt"),
    ("ifscale", "refusal-judge-model", "[judges.refusal] model"),
    ("ifscale", "refusal-prompt", "[judges.refusal] prompt"),
    ("rift-prep", "judge-model", "[judges.rift] model"),
    ("rift-prep", "judge-template", "[judges.rift] prompt"),
    ("rift-prep", "judge-max-tokens", "[judges.rift] max-tokens"),
    ("rift-prep", "judge-tries", "[judges.rift] tries"),
    (
        "rift-prep",
        "judge-reasoning-effort",
        "[judges.rift] reasoning-effort",
    ),
    ("rift-prep", "judge-extra-body", "[judges.rift] extra-body"),
    (
        "judge-check",
        "coherent-reports",
        "[judges.coherence] controls",
    ),
    (
        "judge-check",
        "refusal-controls",
        "[judges.refusal] controls",
    ),
];

/// The one-line error for a judge key of `section` that has moved to `[judges]` (None when `table` has none); the
/// refusal judge, which shared the coherence judge's request keys, now has its own.
pub fn moved_key(path: &Path, section: &str, table: &toml::Table) -> Option<Failure> {
    let (_, old, new) = MOVED
        .iter()
        .find(|(s, old, _)| *s == section && table.contains_key(*old))?;
    let also = if section == "ifscale" && old.starts_with("judge-") && *old != "judge-model" {
        format!(
            " (and `{}` for the refusal judge)",
            new.replace("coherence", "refusal")
        )
    } else {
        String::new()
    };
    Some(Failure::Usage(format!(
        "{}: [{section}]: field `{old}` has moved: set `{new}`{also} instead (docs/judges.md)",
        path.display()
    )))
}

/// Every moved judge key in a whole config's tables: the first one found, as [`moved_key`] words it.
pub fn moved_in(path: &Path, config: &toml::Table) -> Option<Failure> {
    ["ifscale", "rift-prep", "judge-check"]
        .iter()
        .find_map(|s| match config.get(*s) {
            Some(toml::Value::Table(t)) => moved_key(path, s, t),
            _ => None,
        })
}

/// The `[judges]` table of a config file (none: no judge), for the standalone commands that read one section of a
/// config; every problem is a usage error naming the file.
pub fn load_judges(path: &Path) -> anyhow::Result<JudgesSection> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::Usage(format!("{}: cannot read the config: {e}", path.display())))?;
    let table: toml::Table =
        toml::from_str(&text).map_err(|e| Failure::Usage(format!("{}: {e}", path.display())))?;
    if let Some(f) = moved_in(path, &table) {
        return Err(f.into());
    }
    let judges = match table.get("judges") {
        Some(v) => JudgesSection::deserialize(v.clone())
            .map_err(|e| Failure::Usage(format!("{}: [judges]: {e}", path.display())))?,
        None => JudgesSection::default(),
    };
    judges.check(path)?;
    Ok(judges)
}
