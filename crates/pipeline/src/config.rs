//! The pipeline config (`configs/default.toml`, `configs/ifscale-paper.toml`, `configs/rift-paper.toml`).
//!
//! The experiment lives here (models, grids, seeds, templates); run-time knobs (concurrency, dry run) are flags.
//! Unknown keys are errors; `cargo xtask codegen` writes `configs/schema.json` from these types.
//!
//! Sections: `[run]`, `[vocab]`, `[ifscale]`, `[rift-prep]`, `[rift]`, `[judges.<role>]` (one per LLM judge, in
//! [`judges`]), `[judge-check]` and `[sequential]` (its type in `crate::sequential::rule`). `load_section` is the one
//! loader of a lone `[ifscale]` or `[rift]` section, with the checks `PipelineConfig::load` applies (`Section::check`);
//! `judges::load_judges` reads the `[judges]` of a file for the standalone commands.

pub mod judges;

use std::path::{Path, PathBuf};

use anyhow::Context;
use harness::helper::HelperCall;
pub use judges::{JudgeSection, JudgesSection, LoadedJudge};
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
    /// The LLM judges (`[judges.rift]`, `[judges.coherence]`, `[judges.refusal]`), each with the same keys.
    #[serde(default, skip_serializing_if = "judges_empty")]
    pub judges: JudgesSection,
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
        }
    }
}

impl JudgeCheckSection {
    /// The controls' count and seed for `judge` (its own `per-kind` when set).
    pub fn plan(&self, judge: &JudgeSection) -> scoring::judge_check::ControlPlan {
        scoring::judge_check::ControlPlan {
            per_kind: judge.per_kind.unwrap_or(self.per_kind),
            seed: self.seed,
        }
    }

    /// The gate's thresholds for `judge` (its own, where it sets them).
    pub fn gate(&self, judge: &JudgeSection) -> harness::judge_check::Gate {
        harness::judge_check::Gate {
            min_sensitivity: judge.min_sensitivity.unwrap_or(self.min_sensitivity),
            min_specificity: judge.min_specificity.unwrap_or(self.min_specificity),
            max_unreadable_share: judge
                .max_unreadable_share
                .unwrap_or(self.max_unreadable_share),
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

fn judges_empty(j: &JudgesSection) -> bool {
    *j == JudgesSection::default()
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

/// Where the RIFT questions come from and who rephrases them (the judge of the answers is `[judges.rift]`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RiftPrepSection {
    /// Raw clue files (JSON or CSV layout) prepared into `[rift].dataset`.
    #[serde(default)]
    pub inputs: Vec<PathBuf>,
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
    /// The rephrasing's request settings, defaults filled in.
    pub fn rephrase_call(&self) -> HelperCall {
        let d = HelperCall::rephrase();
        HelperCall {
            max_tokens: self.rephrase_max_tokens.unwrap_or(d.max_tokens),
            ..d
        }
    }
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
        if let Some(moved) = toml::from_str::<toml::Table>(&text)
            .ok()
            .and_then(|t| judges::moved_in(path, &t))
        {
            return Err(moved.into());
        }
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
        cfg.judges.check(path)?;
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
        match self.rephrase_max_tokens {
            Some(0) => Err(Failure::Usage(format!(
                "{}: [rift-prep]: field `rephrase-max-tokens`: must be at least 1",
                path.display()
            ))
            .into()),
            _ => Ok(()),
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
    if let Some(moved) = judges::moved_in(path, &table) {
        return Err(moved.into());
    }
    let table = match table.get(T::NAME) {
        Some(toml::Value::Table(t)) => t.clone(),
        _ => table,
    };
    if let Some(moved) = judges::moved_key(path, T::NAME, &table) {
        return Err(moved.into());
    }
    let section = T::deserialize(toml::Value::Table(table))
        .map_err(|e| Failure::Usage(format!("{}: [{}]: {e}", path.display(), T::NAME)))?;
    section.check(path)?;
    Ok(section)
}

#[cfg(test)]
mod tests {
    use super::*;
    use schema::ifscale::ConstraintListRule;
    use schema::judge::JudgeRole;

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
    fn each_judge_has_its_own_table_with_the_same_keys_and_reasoning_room_by_default() {
        let cfg = load(
            "defaults",
            &format!("{IFSCALE}[rift-prep]\n[judges.coherence]\nmodel = \"j\"\n[judges.rift]\nmodel = \"r\"\n"),
        )
        .unwrap();
        assert!(
            cfg.judges.refusal.is_none(),
            "a judge left out is not there"
        );
        for role in [JudgeRole::Coherence, JudgeRole::RiftAnswers] {
            let call = judges::call_of(&cfg.judges, role);
            assert_eq!((call.max_tokens, call.tries), (4096, 3), "{role}");
            assert_eq!(call.params().max_tokens, Some(4096));
        }
        assert_eq!(
            judges::call_of(&JudgesSection::default(), JudgeRole::Refusal),
            HelperCall::judge()
        );
        assert_eq!(cfg.rift_prep.unwrap().rephrase_call().max_tokens, 4096);
        let coherence = cfg.judges.coherence.as_ref().unwrap();
        assert_eq!(
            coherence.prompt_file(JudgeRole::Coherence),
            PathBuf::from("configs/prompts/ifscale-coherence.txt")
        );
        assert_eq!(
            coherence.controls_file(JudgeRole::Coherence),
            Some(PathBuf::from("datasets/ifscale-coherence/coherent.jsonl"))
        );
        let jc = &cfg.judge_check;
        assert_eq!(jc.plan(coherence).per_kind, 50);
        assert_eq!(jc.gate(coherence).min_sensitivity, 0.9);

        let cfg = load(
            "set",
            &format!(
                "{IFSCALE}[rift-prep]\nrephrase-max-tokens = 200\n\
                 [judges.coherence]\nmodel = \"j\"\nmax-tokens = 300\ntries = 5\nreasoning-effort = \"low\"\n\
                 per-kind = 7\nmin-specificity = 0.8\n\
                 [judges.refusal]\nmodel = \"j\"\nmax-tokens = 64\ncontrols = \"c.jsonl\"\n\
                 [judges.rift]\nmodel = \"r\"\nmax-tokens = 16\nextra-body = {{ think = false }}\n"
            ),
        )
        .unwrap();
        let ifs = judges::call_of(&cfg.judges, JudgeRole::Coherence);
        assert_eq!((ifs.max_tokens, ifs.tries), (300, 5));
        assert_eq!(ifs.params().reasoning_effort.as_deref(), Some("low"));
        let refusal = judges::call_of(&cfg.judges, JudgeRole::Refusal);
        assert_eq!(
            (refusal.max_tokens, refusal.reasoning_effort),
            (64, None),
            "its own keys"
        );
        let rift = judges::call_of(&cfg.judges, JudgeRole::RiftAnswers);
        assert_eq!((rift.max_tokens, rift.tries), (16, 3));
        assert_eq!(
            rift.params().extra_body.get("think"),
            Some(&serde_json::Value::Bool(false))
        );
        let coherence = cfg.judges.coherence.as_ref().unwrap();
        assert_eq!(cfg.judge_check.plan(coherence).per_kind, 7);
        let gate = cfg.judge_check.gate(coherence);
        assert_eq!((gate.min_sensitivity, gate.min_specificity), (0.9, 0.8));
        assert_eq!(
            cfg.judges
                .refusal
                .as_ref()
                .unwrap()
                .controls_file(JudgeRole::Refusal),
            Some(PathBuf::from("c.jsonl"))
        );
        assert_eq!(cfg.rift_prep.unwrap().rephrase_call().max_tokens, 200);
    }

    #[test]
    fn every_old_judge_key_is_a_one_line_error_naming_its_new_key() {
        for (text, old, new) in [
            (
                format!("{IFSCALE}judge-model = \"j\"\n"),
                "judge-model",
                "[judges.coherence] model",
            ),
            (
                format!("{IFSCALE}judge-max-tokens = 9\n"),
                "judge-max-tokens",
                "[judges.coherence] max-tokens",
            ),
            (
                format!("{IFSCALE}coherence-prompt = \"x.txt\"\n"),
                "coherence-prompt",
                "[judges.coherence] prompt",
            ),
            (
                format!("{IFSCALE}refusal-judge-model = \"j\"\n"),
                "refusal-judge-model",
                "[judges.refusal] model",
            ),
            (
                "[rift-prep]\njudge-template = \"t.txt\"\n".to_owned(),
                "judge-template",
                "[judges.rift] prompt",
            ),
            (
                "[rift-prep]\njudge-tries = 2\n".to_owned(),
                "judge-tries",
                "[judges.rift] tries",
            ),
            (
                "[judge-check]\nrefusal-controls = \"c.jsonl\"\n".to_owned(),
                "refusal-controls",
                "[judges.refusal] controls",
            ),
        ] {
            let err = load("moved", &text).unwrap_err();
            assert!(err.downcast_ref::<Failure>().is_some(), "{old}: {err}");
            let msg = err.to_string();
            assert!(
                msg.contains("moved.toml")
                    && msg.contains(&format!("field `{old}` has moved"))
                    && msg.contains(&format!("`{new}`")),
                "{old}: {msg}"
            );
            assert!(!msg.contains('\n'), "one line: {msg}");
        }
        let msg = load("moved", &format!("{IFSCALE}judge-tries = 2\n"))
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("`[judges.refusal] tries` for the refusal judge"),
            "{msg}"
        );
    }

    #[test]
    fn a_missing_prompt_file_is_a_one_line_usage_error_naming_the_config_and_field() {
        let dir = tempfile::tempdir().unwrap();
        let models = dir.path().join("models.toml");
        std::fs::write(
            &models,
            "[models.j]\nbase-urls = [\"http://127.0.0.1:9/v1\"]\nmodel-id = \"j\"\n",
        )
        .unwrap();
        let empty = dir.path().join("empty.txt");
        std::fs::write(&empty, "\n").unwrap();
        for (role, prompt) in [
            (
                JudgeRole::Coherence,
                PathBuf::from("/nonexistent/rubric.txt"),
            ),
            (JudgeRole::Refusal, empty.clone()),
            (
                JudgeRole::RiftAnswers,
                PathBuf::from("/nonexistent/rift.txt"),
            ),
        ] {
            let section = JudgeSection {
                prompt: Some(prompt.clone()),
                ..JudgeSection::of_model("j")
            };
            let mut judges = JudgesSection::default();
            match role {
                JudgeRole::Coherence => judges.coherence = Some(section),
                JudgeRole::Refusal => judges.refusal = Some(section),
                JudgeRole::RiftAnswers => judges.rift = Some(section),
            }
            let err = LoadedJudge::load(&judges, role, &models, Path::new("configs/run.toml"))
                .unwrap_err();
            assert!(err.downcast_ref::<Failure>().is_some(), "{err}");
            let msg = err.to_string();
            assert!(
                msg.starts_with(&format!(
                    "configs/run.toml: [judges.{}]: field `prompt`: ",
                    role.key()
                )) && msg.contains(&prompt.display().to_string()),
                "{msg}"
            );
            assert!(!msg.contains('\n'), "one line: {msg}");
            let none = LoadedJudge::load(
                &JudgesSection::default(),
                role,
                Path::new("/nonexistent/models.toml"),
                Path::new("r.toml"),
            );
            assert!(none.unwrap().is_none(), "no table: no judge, nothing read");
        }
        // The default: the repository's rubric file, and today's reading of the constraint-list rule.
        let ifs = load("default-rubric", IFSCALE).unwrap().ifscale.unwrap();
        assert_eq!(ifs.constraint_list, ConstraintListRule::WholeReply);
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
    fn switching_the_constraint_list_reading_the_rubric_or_the_judge_settings_makes_the_generation_stage_stale()
     {
        let dir = tempfile::tempdir().unwrap();
        let prompts = dir.path().join("prompts.jsonl");
        let rubric = dir.path().join("rubric.txt");
        let out = dir.path().join("out.jsonl");
        for p in [&prompts, &rubric, &out] {
            std::fs::write(p, "x\n").unwrap();
        }
        let ifs = load("stamp", IFSCALE).unwrap().ifscale.unwrap();
        let model = inference_client::ModelConfig::ad_hoc("http://127.0.0.1:9", "m");
        let judge = LoadedJudge {
            role: JudgeRole::Coherence,
            section: JudgeSection::of_model("j"),
            model: inference_client::ModelConfig::ad_hoc("http://127.0.0.1:9", "j"),
            prompt_file: rubric.clone(),
            prompt: "x".to_owned(),
            call: HelperCall::judge(),
        };
        let stamps = harness::fresh::Stamps::new(dir.path());
        let outputs = [out];
        let fp = |ifs: &IfscaleConfig, judge: &LoadedJudge| {
            crate::stages::ifscale::generate_fingerprint(ifs, &model, Some(judge), &prompts)
                .unwrap()
        };
        stamps.mark("g", &fp(&ifs, &judge), &outputs).unwrap();
        assert!(stamps.is_fresh("g", &fp(&ifs, &judge), &outputs));
        let mut run = ifs.clone();
        run.constraint_list = ConstraintListRule::RunInReport;
        assert!(!stamps.is_fresh("g", &fp(&run, &judge), &outputs));
        let mut tries = judge.clone();
        tries.call.tries = 5;
        assert!(!stamps.is_fresh("g", &fp(&ifs, &tries), &outputs));
        std::fs::write(&rubric, "another rubric\n").unwrap();
        assert!(!stamps.is_fresh("g", &fp(&ifs, &judge), &outputs));
    }

    #[test]
    fn a_bad_judge_setting_is_a_one_line_usage_error_naming_the_file_table_and_field() {
        for (name, text, field) in [
            (
                "ifs",
                "[judges.coherence]\nmodel = \"j\"\nmax-tokens = 0\n".to_owned(),
                "[judges.coherence]: field `max-tokens`",
            ),
            (
                "ifs-tries",
                "[judges.refusal]\nmodel = \"j\"\ntries = 0\n".to_owned(),
                "[judges.refusal]: field `tries`",
            ),
            (
                "share",
                "[judges.rift]\nmodel = \"j\"\nmin-sensitivity = 1.5\n".to_owned(),
                "[judges.rift]: field `min-sensitivity`",
            ),
            (
                "rift-controls",
                "[judges.rift]\nmodel = \"j\"\ncontrols = \"c.jsonl\"\n".to_owned(),
                "[judges.rift]: field `controls`",
            ),
            (
                "rephrase",
                "[rift-prep]\nrephrase-max-tokens = 0\n".to_owned(),
                "field `rephrase-max-tokens`",
            ),
            ("no-model", "[judges.rift]\ntries = 2\n".to_owned(), "model"),
        ] {
            let err = load(name, &text).unwrap_err();
            assert!(err.downcast_ref::<Failure>().is_some(), "{name}: {err}");
            let msg = err.to_string();
            assert!(
                msg.contains(&format!("{name}.toml")) && msg.contains(field),
                "{name}: {msg}"
            );
            assert!(!msg.contains('\n'), "{name}: one line: {msg}");
        }
    }
}
