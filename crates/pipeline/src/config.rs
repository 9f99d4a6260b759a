//! The pipeline config (`configs/default.toml`, `configs/ifscale-paper.toml`, `configs/rift-paper.toml`).
//!
//! The experiment lives here (models, grids, seeds, templates); run-time knobs (concurrency, dry run) are flags.
//! Unknown keys are errors; `cargo xtask codegen` writes `configs/schema.json` from these types.
//!
//! Sections: `[run]`, `[vocab]`, `[ifscale]`, `[rift-prep]`, `[rift]`, `[judge-check]` and `[sequential]` (its type in
//! `crate::sequential::rule`). `load_section` is the one
//! loader of a lone `[ifscale]` or `[rift]` section, with the checks `PipelineConfig::load` applies (`Section::check`);
//! `coherence_rubric` reads `[ifscale] coherence-prompt` (through `harness::ifscale::read_coherence_rubric`) for the
//! pipeline and `ifscale run`, its error naming the config file and the field; `refusal_rubric` reads
//! `[ifscale] refusal-prompt` the same way.

use std::path::{Path, PathBuf};

use anyhow::Context;
use harness::helper::HelperCall;
use prompt_gen::ifscale::IfscaleConfig;
use prompt_gen::rift::RiftConfig;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::outcome::Failure;

/// A whole pipeline run.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct PipelineConfig {
    pub run: RunSection,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vocab: Option<VocabSection>,
    /// IFScale; leave the section out to skip the benchmark.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ifscale: Option<IfscaleConfig>,
    /// RIFT; leave the section out to skip the benchmark.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rift: Option<RiftConfig>,
    /// RIFT data preparation and judging.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rift_prep: Option<RiftPrepSection>,
    /// The check of every configured judge with control items (on by default; see `docs/rift-judging.md`).
    #[serde(default)]
    pub judge_check: JudgeCheckSection,
    /// A sequential run's stopping rule and batches (`--until`; see `docs/sequential.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequential: Option<crate::sequential::SequentialSection>,
}

/// Control items with a known verdict, made from the run's own data (or, for the IFScale refusal judge, written by
/// us) and sent to each configured judge (the RIFT judge, the IFScale coherence judge and refusal judge) blind
/// among the real items, and the gate on the judge's agreement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct JudgeCheckSection {
    /// Check every configured judge (default true); false sends no control item and writes no `judge-check.json`.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Control items of each kind per judge (known-correct and known-incorrect; default 50, fewer when fewer can
    /// be made; the coherence judge gets at least 20 known-incoherent reports and every hand-written coherent one
    /// up to this count).
    #[serde(default = "default_per_kind")]
    pub per_kind: usize,
    /// Seed of the controls' choice (default 0).
    #[serde(default)]
    pub seed: u64,
    /// Smallest share of known-correct controls the judge must accept (default 0.9).
    #[serde(default = "default_min_share")]
    pub min_sensitivity: f64,
    /// Smallest share of known-incorrect controls the judge must reject (default 0.9).
    #[serde(default = "default_min_share")]
    pub min_specificity: f64,
    /// Largest share of the run's own items (RIFT judge requests, IFScale judged attempts) that the judge may
    /// leave without a readable verdict after every try (default 0.02); above it the judge fails its check.
    #[serde(default = "default_max_unreadable_share")]
    pub max_unreadable_share: f64,
    /// Keep a failed judge's verdicts on purpose: the run then exits 0 instead of 4; every table and figure built
    /// from them stays marked "judge failed its check" (default false).
    #[serde(default)]
    pub keep_failed_judge: bool,
    /// The hand-written known-coherent reports (default `datasets/ifscale-coherence/coherent.jsonl`).
    #[serde(default = "default_coherent_reports")]
    pub coherent_reports: PathBuf,
    /// The refusal judge's hand-written control replies, known reports and known refusals that the refusal
    /// detector cannot settle (default `datasets/ifscale-refusal/controls.jsonl`; up to `per-kind` of each).
    #[serde(default = "default_refusal_controls")]
    pub refusal_controls: PathBuf,
}

impl Default for JudgeCheckSection {
    fn default() -> JudgeCheckSection {
        JudgeCheckSection {
            enabled: true,
            per_kind: default_per_kind(),
            seed: 0,
            min_sensitivity: default_min_share(),
            min_specificity: default_min_share(),
            max_unreadable_share: default_max_unreadable_share(),
            keep_failed_judge: false,
            coherent_reports: default_coherent_reports(),
            refusal_controls: default_refusal_controls(),
        }
    }
}

impl JudgeCheckSection {
    /// The controls' count and seed.
    pub fn plan(&self) -> scoring::judge_check::ControlPlan {
        scoring::judge_check::ControlPlan {
            per_kind: self.per_kind,
            seed: self.seed,
        }
    }

    /// The gate's thresholds.
    pub fn gate(&self) -> harness::judge_check::Gate {
        harness::judge_check::Gate {
            min_sensitivity: self.min_sensitivity,
            min_specificity: self.min_specificity,
            max_unreadable_share: self.max_unreadable_share,
            keep_failed_judge: self.keep_failed_judge,
        }
    }

    fn check(&self, path: &Path) -> anyhow::Result<()> {
        let bad = if self.per_kind == 0 {
            Some((
                "per-kind",
                "must be at least 1 (set `enabled = false` to send no control item)",
            ))
        } else if !(0.0..=1.0).contains(&self.min_sensitivity) {
            Some(("min-sensitivity", "must be between 0 and 1"))
        } else if !(0.0..=1.0).contains(&self.min_specificity) {
            Some(("min-specificity", "must be between 0 and 1"))
        } else if !(0.0..=1.0).contains(&self.max_unreadable_share) {
            Some(("max-unreadable-share", "must be between 0 and 1"))
        } else {
            None
        };
        match bad {
            Some((field, msg)) => Err(Failure::Usage(format!(
                "{}: [judge-check]: field `{field}`: {msg}",
                path.display()
            ))
            .into()),
            None => Ok(()),
        }
    }
}

fn yes() -> bool {
    true
}

fn default_per_kind() -> usize {
    50
}

fn default_min_share() -> f64 {
    0.9
}

fn default_max_unreadable_share() -> f64 {
    harness::helper::UNJUDGED_ALERT_SHARE
}

fn default_coherent_reports() -> PathBuf {
    PathBuf::from("datasets/ifscale-coherence/coherent.jsonl")
}

fn default_refusal_controls() -> PathBuf {
    PathBuf::from("datasets/ifscale-refusal/controls.jsonl")
}

/// Which models run, and where the outputs go.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RunSection {
    /// Run name: outputs go to `artifacts/runs/<name>/`.
    pub name: String,
    /// Model declarations (default `configs/models.toml`).
    #[serde(default = "default_models_file")]
    pub models_file: PathBuf,
    /// Names of the models to evaluate (keys of `models-file`).
    pub models: Vec<String>,
    /// Response cache shared by every stage (default `artifacts/cache/responses.sqlite`).
    #[serde(default = "default_cache")]
    pub cache: PathBuf,
    /// Stop sending requests once spent plus the worst case in flight would exceed this many USD.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cost_usd: Option<f64>,
    /// Models to mark as reasoning models ("(r)") in figures; default: a name rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_models: Option<Vec<String>>,
}

/// Building the IFScale vocabulary (`[ifscale].vocab`) from 10-K filings; done only when that file is missing
/// or with `--rebuild-vocab`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct VocabSection {
    /// Folder of 10-K filings (plain text, HTML or EDGAR-CORPUS JSON).
    pub corpus: PathBuf,
    /// The vocabulary pipeline's settings (a TOML file of `vocab_pipeline::pipeline::VocabConfig`'s kebab-case
    /// fields, as `cargo xtask vocab build --config` reads); unset: its defaults. The models it names come from the
    /// run's models file and are called through the run's client, budget and ledger.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<PathBuf>,
}

/// Where the RIFT questions come from and who judges the answers.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RiftPrepSection {
    /// Raw clue files (JSON or CSV layout) prepared into `[rift].dataset`.
    #[serde(default)]
    pub inputs: Vec<PathBuf>,
    /// Model (from `models-file`) that judges answers the pre-judge cannot settle; unset: those answers are
    /// unjudged (neither correct nor incorrect; the tables show accuracy bounds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_model: Option<String>,
    /// The judge's prompt ({question}, {expected}, {given}); default `configs/prompts/rift-judge.txt`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_template: Option<PathBuf>,
    /// `max_tokens` of each judge request (unset: 4096, room for a reasoning judge to think).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_max_tokens: Option<u32>,
    /// Judge requests per answer while the reply cannot be read (unset: 3); then the answer is unjudged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_tries: Option<u32>,
    /// `reasoning_effort` of each judge request (unset: the judge model's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_reasoning_effort: Option<String>,
    /// Extra body fields of each judge request (e.g. a provider's thinking switch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_extra_body: Option<serde_json::Map<String, serde_json::Value>>,
    /// Model (from `models-file`) that rephrases every clue into a self-contained question before clean-up (the
    /// paper's step 0); unset: the clues are used as they are. Cached and resumable like every model call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rephrase_model: Option<String>,
    /// The rephrasing prompt ({category}, {clue}, {response}); default `configs/prompts/rift-rephrase.txt`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rephrase_template: Option<PathBuf>,
    /// `max_tokens` of each rephrasing request (unset: 4096).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rephrase_max_tokens: Option<u32>,
}

impl RiftPrepSection {
    /// The judge's request settings, defaults filled in.
    pub fn judge_call(&self) -> HelperCall {
        let d = HelperCall::judge();
        HelperCall {
            max_tokens: self.judge_max_tokens.unwrap_or(d.max_tokens),
            tries: self.judge_tries.unwrap_or(d.tries),
            reasoning_effort: self.judge_reasoning_effort.clone(),
            extra_body: self.judge_extra_body.clone().unwrap_or_default(),
        }
    }

    /// The rephrasing's request settings, defaults filled in.
    pub fn rephrase_call(&self) -> HelperCall {
        let d = HelperCall::rephrase();
        HelperCall {
            max_tokens: self.rephrase_max_tokens.unwrap_or(d.max_tokens),
            ..d
        }
    }
}

/// The RIFT judge's prompt file of a `[rift-prep]` section (`judge-template`), default
/// `configs/prompts/rift-judge.txt`.
pub fn rift_judge_template(prep: Option<&RiftPrepSection>) -> PathBuf {
    prep.and_then(|p| p.judge_template.clone())
        .unwrap_or_else(|| PathBuf::from(DEFAULT_RIFT_JUDGE_TEMPLATE))
}

/// The RIFT judge's default prompt file.
pub const DEFAULT_RIFT_JUDGE_TEMPLATE: &str = "configs/prompts/rift-judge.txt";

/// The judge settings of a `[rift-prep]` section, or the defaults without one.
pub fn rift_judge_call(prep: Option<&RiftPrepSection>) -> HelperCall {
    prep.map_or_else(HelperCall::judge, RiftPrepSection::judge_call)
}

/// The coherence judge's request settings of an `[ifscale]` section, defaults filled in.
pub fn ifscale_judge_call(ifs: &IfscaleConfig) -> HelperCall {
    let d = HelperCall::judge();
    HelperCall {
        max_tokens: ifs.judge_max_tokens.unwrap_or(d.max_tokens),
        tries: ifs.judge_tries.unwrap_or(d.tries),
        reasoning_effort: ifs.judge_reasoning_effort.clone(),
        extra_body: ifs.judge_extra_body.clone().unwrap_or_default(),
    }
}

/// The coherence rubric of an `[ifscale]` section (`coherence-prompt`), read as the judge gets it; a missing,
/// unreadable or empty file is a one-line usage error naming the config file and the field.
pub fn coherence_rubric(ifs: &IfscaleConfig, config: &Path) -> anyhow::Result<String> {
    harness::ifscale::read_coherence_rubric(&ifs.coherence_prompt).map_err(|e| {
        Failure::Usage(format!(
            "{}: [ifscale]: field `coherence-prompt`: {e}",
            config.display()
        ))
        .into()
    })
}

/// The refusal judge's rubric file of an `[ifscale]` section (`refusal-prompt`, default
/// `configs/prompts/ifscale-refusal.txt`).
pub fn refusal_prompt(ifs: &IfscaleConfig) -> PathBuf {
    ifs.refusal_prompt
        .clone()
        .unwrap_or_else(|| PathBuf::from(prompt_gen::ifscale::DEFAULT_REFUSAL_PROMPT))
}

/// The refusal rubric of an `[ifscale]` section, read as the judge gets it; a missing, unreadable or empty file is
/// a one-line usage error naming the config file and the field.
pub fn refusal_rubric(ifs: &IfscaleConfig, config: &Path) -> anyhow::Result<String> {
    harness::ifscale::read_rubric(&refusal_prompt(ifs), "refusal").map_err(|e| {
        Failure::Usage(format!(
            "{}: [ifscale]: field `refusal-prompt`: {e}",
            config.display()
        ))
        .into()
    })
}

/// The refusal judge of an `[ifscale]` section, loaded, with its rubric.
#[derive(Debug, Clone)]
pub struct LoadedRefusalJudge {
    pub model: inference_client::ModelConfig,
    pub rubric: String,
}

impl LoadedRefusalJudge {
    /// As the generation loop takes it.
    pub fn judge(&self) -> harness::ifscale::RefusalJudge<'_> {
        harness::ifscale::RefusalJudge {
            model: &self.model,
            rubric: &self.rubric,
        }
    }
}

/// Loads the refusal judge an `[ifscale]` section names (`refusal-judge-model`, from `models_file`) and reads its
/// rubric; None without one. Every problem is a usage error naming the file and the field.
pub fn load_refusal_judge(
    ifs: &IfscaleConfig,
    models_file: &Path,
    config: &Path,
) -> anyhow::Result<Option<LoadedRefusalJudge>> {
    let Some(name) = ifs.refusal_judge_model.as_deref() else {
        return Ok(None);
    };
    Ok(Some(LoadedRefusalJudge {
        model: crate::models::load_model(models_file, name)?,
        rubric: refusal_rubric(ifs, config)?,
    }))
}

fn default_models_file() -> PathBuf {
    PathBuf::from("configs/models.toml")
}

fn default_cache() -> PathBuf {
    PathBuf::from("artifacts/cache/responses.sqlite")
}

impl PipelineConfig {
    /// Reads and checks a config; every problem is a usage error that names the file and the field.
    pub fn load(path: &Path) -> anyhow::Result<PipelineConfig> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            Failure::Usage(format!("{}: cannot read the config: {e}", path.display()))
        })?;
        let cfg: PipelineConfig = toml::from_str(&text).map_err(|e| {
            let msg = e.message().trim_end().to_owned();
            let place = e
                .span()
                .map(|s| format!(":{}", text[..s.start].matches('\n').count() + 1))
                .unwrap_or_default();
            Failure::Usage(format!("{}{place}: {msg}", path.display()))
        })?;
        if cfg.run.models.is_empty() {
            return Err(Failure::Usage(format!(
                "{}: field `run.models`: name at least one model",
                path.display()
            ))
            .into());
        }
        if let Some(ifs) = &cfg.ifscale {
            ifs.check(path)?;
        }
        if let Some(rift) = &cfg.rift {
            rift.check(path)?;
        }
        if let Some(prep) = &cfg.rift_prep {
            prep.check(path)?;
        }
        cfg.judge_check.check(path)?;
        Ok(cfg)
    }

    /// The RIFT section and the `[rift-prep]` that prepares its questions, when the config prepares any (its
    /// `inputs` are not empty).
    pub fn rift_prep(&self) -> Option<(&RiftConfig, &RiftPrepSection)> {
        match (&self.rift, &self.rift_prep) {
            (Some(rift), Some(prep)) if !prep.inputs.is_empty() => Some((rift, prep)),
            _ => None,
        }
    }

    pub fn run_dir(&self) -> PathBuf {
        PathBuf::from("artifacts/runs").join(&self.run.name)
    }
}

/// The JSON schema of the pipeline config, pretty-printed with a trailing newline.
pub fn json_schema() -> anyhow::Result<String> {
    let schema = schemars::schema_for!(PipelineConfig);
    let mut text =
        serde_json::to_string_pretty(&schema).context("serializing the config schema")?;
    text.push('\n');
    Ok(text)
}

/// A section of the pipeline config that a stage command also reads on its own (`[ifscale]`, `[rift]`): one
/// loader ([`load_section`]) and one check, the same in both places.
pub trait Section: DeserializeOwned {
    /// The table name.
    const NAME: &'static str;
    /// The checks beyond parsing (none unless the section defines some); a failure is a usage error naming `path`.
    fn check(&self, _path: &Path) -> anyhow::Result<()> {
        Ok(())
    }
}

impl Section for IfscaleConfig {
    const NAME: &'static str = "ifscale";
    fn check(&self, path: &Path) -> anyhow::Result<()> {
        self.validate()
            .map_err(|e| Failure::Usage(format!("{}: {e}", path.display())).into())
    }
}

impl Section for RiftPrepSection {
    const NAME: &'static str = "rift-prep";
    fn check(&self, path: &Path) -> anyhow::Result<()> {
        let problem = [
            ("judge-max-tokens", self.judge_max_tokens),
            ("judge-tries", self.judge_tries),
            ("rephrase-max-tokens", self.rephrase_max_tokens),
        ]
        .into_iter()
        .find(|(_, v)| *v == Some(0));
        match problem {
            Some((field, _)) => Err(Failure::Usage(format!(
                "{}: [rift-prep]: field `{field}`: must be at least 1",
                path.display()
            ))
            .into()),
            None => Ok(()),
        }
    }
}

/// Parsing is the whole check: the sampler reports impossible settings against the dataset.
impl Section for RiftConfig {
    const NAME: &'static str = "rift";
}

/// Reads the `[T::NAME]` table of a config file (or the whole file when it has no such table), strictly, and
/// checks it; every problem is a usage error that names the file.
pub fn load_section<T: Section>(path: &Path) -> anyhow::Result<T> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::Usage(format!("{}: cannot read the config: {e}", path.display())))?;
    let table: toml::Table =
        toml::from_str(&text).map_err(|e| Failure::Usage(format!("{}: {e}", path.display())))?;
    let table = match table.get(T::NAME) {
        Some(toml::Value::Table(t)) => t.clone(),
        _ => table,
    };
    let section = T::deserialize(toml::Value::Table(table))
        .map_err(|e| Failure::Usage(format!("{}: [{}]: {e}", path.display(), T::NAME)))?;
    section.check(path)?;
    Ok(section)
}

#[cfg(test)]
mod tests {
    use super::*;
    use schema::ifscale::ConstraintListRule;

    const IFSCALE: &str =
        "[ifscale]\ngrid = [10]\nseeds = [0]\nsampling = \"paper\"\ntemplate = \"t.txt\"\n";

    fn load(name: &str, text: &str) -> anyhow::Result<PipelineConfig> {
        let dir =
            std::env::temp_dir().join(format!("ifstress-config-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{name}.toml"));
        std::fs::write(
            &path,
            format!("[run]\nname = \"x\"\nmodels = [\"m\"]\n{text}"),
        )
        .unwrap();
        let cfg = PipelineConfig::load(&path);
        std::fs::remove_dir_all(&dir).unwrap();
        cfg
    }

    #[test]
    fn judge_and_rephrase_settings_come_from_the_config_with_reasoning_room_by_default() {
        let cfg = load("defaults", &format!("{IFSCALE}[rift-prep]\n")).unwrap();
        let ifs = ifscale_judge_call(cfg.ifscale.as_ref().unwrap());
        let rift = rift_judge_call(cfg.rift_prep.as_ref());
        for call in [&ifs, &rift] {
            assert_eq!((call.max_tokens, call.tries), (4096, 3));
            assert_eq!(call.params().max_tokens, Some(4096));
        }
        assert_eq!(rift_judge_call(None), rift);
        assert_eq!(cfg.rift_prep.unwrap().rephrase_call().max_tokens, 4096);

        let cfg = load(
            "set",
            &format!(
                "{IFSCALE}judge-max-tokens = 300\njudge-tries = 5\njudge-reasoning-effort = \"low\"\n\
                 [rift-prep]\njudge-max-tokens = 16\njudge-extra-body = {{ think = false }}\nrephrase-max-tokens = 200\n"
            ),
        )
        .unwrap();
        let ifs = ifscale_judge_call(cfg.ifscale.as_ref().unwrap());
        assert_eq!((ifs.max_tokens, ifs.tries), (300, 5));
        assert_eq!(ifs.params().reasoning_effort.as_deref(), Some("low"));
        let prep = cfg.rift_prep.unwrap();
        let rift = prep.judge_call();
        assert_eq!((rift.max_tokens, rift.tries), (16, 3));
        assert_eq!(
            rift.params().extra_body.get("think"),
            Some(&serde_json::Value::Bool(false))
        );
        assert_eq!(prep.rephrase_call().max_tokens, 200);
    }

    #[test]
    fn a_missing_coherence_rubric_is_a_one_line_usage_error_naming_the_config_and_field() {
        let cfg = load(
            "rubric",
            &format!("{IFSCALE}coherence-prompt = \"/nonexistent/rubric.txt\"\n"),
        )
        .unwrap();
        let ifs = cfg.ifscale.unwrap();
        let err = coherence_rubric(&ifs, Path::new("configs/run.toml")).unwrap_err();
        assert!(err.downcast_ref::<Failure>().is_some(), "{err}");
        let msg = err.to_string();
        assert!(
            msg.starts_with("configs/run.toml: [ifscale]: field `coherence-prompt`: ")
                && msg.contains("/nonexistent/rubric.txt"),
            "{msg}"
        );
        assert!(!msg.contains('\n'), "one line: {msg}");
        // The default: the repository's rubric file, and today's reading of the constraint-list rule.
        let ifs = load("default-rubric", IFSCALE).unwrap().ifscale.unwrap();
        assert_eq!(
            ifs.coherence_prompt,
            PathBuf::from("configs/prompts/ifscale-coherence.txt")
        );
        assert_eq!(ifs.constraint_list, ConstraintListRule::WholeReply);
    }

    #[test]
    fn the_refusal_judge_is_off_by_default_and_a_missing_rubric_names_the_field() {
        let ifs = load("no-refusal", IFSCALE).unwrap().ifscale.unwrap();
        let none = load_refusal_judge(
            &ifs,
            Path::new("/nonexistent/models.toml"),
            Path::new("r.toml"),
        );
        assert!(none.unwrap().is_none(), "no key: no judge, nothing loaded");
        assert_eq!(
            refusal_prompt(&ifs),
            PathBuf::from("configs/prompts/ifscale-refusal.txt")
        );
        let ifs = load(
            "refusal",
            &format!("{IFSCALE}refusal-judge-model = \"j\"\nrefusal-prompt = \"/nonexistent/refusal.txt\"\n"),
        )
        .unwrap()
        .ifscale
        .unwrap();
        assert_eq!(ifs.refusal_judge_model.as_deref(), Some("j"));
        let err = refusal_rubric(&ifs, Path::new("configs/run.toml")).unwrap_err();
        assert!(err.downcast_ref::<Failure>().is_some(), "{err}");
        let msg = err.to_string();
        assert!(
            msg.starts_with("configs/run.toml: [ifscale]: field `refusal-prompt`: ")
                && msg.contains("/nonexistent/refusal.txt"),
            "{msg}"
        );
    }

    #[test]
    fn the_constraint_list_reading_is_read_and_an_unknown_one_is_an_error() {
        let ifs = load(
            "run",
            &format!("{IFSCALE}constraint-list = \"run-in-report\"\n"),
        )
        .unwrap()
        .ifscale
        .unwrap();
        assert_eq!(ifs.constraint_list, ConstraintListRule::RunInReport);
        let err = load(
            "bad-rule",
            &format!("{IFSCALE}constraint-list = \"anywhere\"\n"),
        )
        .unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("bad-rule.toml") && msg.contains("anywhere"),
            "{msg}"
        );
    }

    #[test]
    fn switching_the_constraint_list_reading_or_the_rubric_makes_the_generation_stage_stale() {
        let dir = tempfile::tempdir().unwrap();
        let prompts = dir.path().join("prompts.jsonl");
        let rubric = dir.path().join("rubric.txt");
        let out = dir.path().join("out.jsonl");
        for p in [&prompts, &rubric, &out] {
            std::fs::write(p, "x\n").unwrap();
        }
        let mut ifs = load("stamp", IFSCALE).unwrap().ifscale.unwrap();
        ifs.coherence_prompt = rubric.clone();
        let model = inference_client::ModelConfig::ad_hoc("http://127.0.0.1:9", "m");
        let judge = inference_client::ModelConfig::ad_hoc("http://127.0.0.1:9", "j");
        let stamps = harness::fresh::Stamps::new(dir.path());
        let outputs = [out];
        let fp = |ifs: &IfscaleConfig| {
            crate::stages::ifscale::generate_fingerprint(ifs, &model, Some(&judge), &prompts)
                .unwrap()
        };
        stamps.mark("g", &fp(&ifs), &outputs).unwrap();
        assert!(stamps.is_fresh("g", &fp(&ifs), &outputs));
        let mut run = ifs.clone();
        run.constraint_list = ConstraintListRule::RunInReport;
        assert!(!stamps.is_fresh("g", &fp(&run), &outputs));
        std::fs::write(&rubric, "another rubric\n").unwrap();
        assert!(!stamps.is_fresh("g", &fp(&ifs), &outputs));
    }

    #[test]
    fn a_zero_judge_setting_is_a_one_line_usage_error_naming_the_file_and_field() {
        for (name, text, field) in [
            (
                "ifs",
                format!("{IFSCALE}judge-max-tokens = 0\n"),
                "judge-max-tokens",
            ),
            (
                "ifs-tries",
                format!("{IFSCALE}judge-tries = 0\n"),
                "judge-tries",
            ),
            (
                "rift",
                "[rift-prep]\njudge-max-tokens = 0\n".to_owned(),
                "judge-max-tokens",
            ),
            (
                "rift-tries",
                "[rift-prep]\njudge-tries = 0\n".to_owned(),
                "judge-tries",
            ),
            (
                "rephrase",
                "[rift-prep]\nrephrase-max-tokens = 0\n".to_owned(),
                "rephrase-max-tokens",
            ),
        ] {
            let err = load(name, &text).unwrap_err();
            assert!(err.downcast_ref::<Failure>().is_some(), "{name}: {err}");
            let msg = err.to_string();
            assert!(
                msg.contains(&format!("{name}.toml")) && msg.contains(&format!("`{field}`")),
                "{name}: {msg}"
            );
            assert!(!msg.contains('\n'), "{name}: one line: {msg}");
        }
    }
}
