//! Where artifacts live under a run folder. Every stage uses these names, so any stage can be rerun alone.
//!
//! A run folder `artifacts/runs/<run>/` holds, per benchmark, the prompts, one folder per model
//! (`<bench>/models/<model>/`, see [`ModelPaths`]) and the per-benchmark score files joined from the model folders;
//! then `tables/`, `figures/`, `report.html` and `summary.md`.
//!
//! `RunPaths::model` is the one place a model's folder is named; a single stage's `--out-dir` is a `ModelPaths` too. A
//! judge check's files sit in `<run>/<bench>/judge-check/<judge>/` (`RunPaths::judge_check_dir`), never in a model's
//! folder.

use std::path::{Path, PathBuf};

/// The files of one run, `artifacts/runs/<run>/`.
#[derive(Debug, Clone)]
pub struct RunPaths {
    pub root: PathBuf,
}

/// A benchmark: the name of its folder in a run, and how records name it (`"ifscale"`, `"rift"`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Bench {
    Ifscale,
    Rift,
}

impl std::fmt::Display for Bench {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Bench {
    pub fn as_str(self) -> &'static str {
        match self {
            Bench::Ifscale => "ifscale",
            Bench::Rift => "rift",
        }
    }
}

impl RunPaths {
    pub fn new(root: &Path) -> RunPaths {
        RunPaths {
            root: root.to_owned(),
        }
    }
    /// A benchmark's folder.
    pub fn bench(&self, bench: Bench) -> PathBuf {
        self.root.join(bench.as_str())
    }
    /// One model's folder of one benchmark, `<run>/<bench>/models/<model>/` (the name made file-system safe).
    pub fn model(&self, bench: Bench, model: &str) -> ModelPaths {
        let safe: String = model
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        ModelPaths::in_dir(&self.bench(bench).join("models").join(safe))
    }
    pub fn ifscale_prompts(&self) -> PathBuf {
        self.root.join("ifscale/prompts.jsonl")
    }
    pub fn ifscale_attempts(&self) -> PathBuf {
        self.root.join("ifscale/attempts.jsonl")
    }
    pub fn ifscale_scores(&self) -> PathBuf {
        self.root.join("ifscale/scores.jsonl")
    }
    pub fn ifscale_labels(&self) -> PathBuf {
        self.root.join("ifscale/labels.jsonl")
    }
    pub fn rift_prompts(&self) -> PathBuf {
        self.root.join("rift/prompts.jsonl")
    }
    pub fn rift_answer_scores(&self) -> PathBuf {
        self.root.join("rift/answer-scores.jsonl")
    }
    pub fn rift_prompt_scores(&self) -> PathBuf {
        self.root.join("rift/prompt-scores.jsonl")
    }
    /// RIFT: which per-model Parquet answer tables (`ModelPaths::answer_table`) make up `answer-scores.jsonl`
    /// (written by the run-level join; what the analysis scans instead of the JSONL).
    pub fn rift_answer_tables(&self) -> PathBuf {
        self.root.join("rift/answer-tables.json")
    }
    pub fn tables(&self) -> PathBuf {
        self.root.join("tables")
    }
    pub fn figures(&self) -> PathBuf {
        self.root.join("figures")
    }
    /// The run's spend ledger: one line per paid request, across reruns (the cost limit covers all of them).
    pub fn spend_ledger(&self) -> PathBuf {
        self.root.join("spend.jsonl")
    }
    pub fn report(&self) -> PathBuf {
        self.root.join("report.html")
    }
    pub fn summary(&self) -> PathBuf {
        self.root.join("summary.md")
    }
    /// Every judge's check (`schema::judge_check::JudgeCheckFile`).
    pub fn judge_check(&self) -> PathBuf {
        self.root.join("judge-check.json")
    }
    /// One judge's control items, prompts, responses and verdicts: `<run>/<bench>/judge-check/<judge>/`, never
    /// among a model's results.
    pub fn judge_check_dir(&self, bench: Bench, judge: &str) -> ModelPaths {
        let model = self.model(bench, judge);
        let name = model
            .dir
            .file_name()
            .map(std::ffi::OsStr::to_owned)
            .unwrap_or_default();
        ModelPaths::in_dir(&self.bench(bench).join("judge-check").join(name))
    }
}

/// The files of one model's run of one benchmark: a run's `<bench>/models/<model>/`, or the `--out-dir` of a
/// single stage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelPaths {
    pub dir: PathBuf,
}

impl ModelPaths {
    pub fn in_dir(dir: &Path) -> ModelPaths {
        ModelPaths {
            dir: dir.to_owned(),
        }
    }
    /// The model's responses (IFScale: every generation attempt, `sample_index` = attempt − 1).
    pub fn responses(&self) -> PathBuf {
        self.dir.join("responses.jsonl")
    }
    /// IFScale: the coherence judge's responses (ids `<prompt id>#a<attempt>`).
    pub fn coherence_judge(&self) -> PathBuf {
        self.dir.join("judge.jsonl")
    }
    /// IFScale: the optional refusal judge's responses (ids `<prompt id>#a<attempt>`), for replies the refusal
    /// detector could not settle.
    pub fn refusal_judge(&self) -> PathBuf {
        self.dir.join("refusal-judge.jsonl")
    }
    /// IFScale: one line per generation attempt and the decision on it.
    pub fn attempts(&self) -> PathBuf {
        self.dir.join("attempts.jsonl")
    }
    /// IFScale: one score per sample.
    pub fn scores(&self) -> PathBuf {
        self.dir.join("scores.jsonl")
    }
    /// IFScale: one label per keyword.
    pub fn labels(&self) -> PathBuf {
        self.dir.join("labels.jsonl")
    }
    /// RIFT: the LLM judge's prompt records.
    pub fn judge_prompts(&self) -> PathBuf {
        self.dir.join("judge-prompts.jsonl")
    }
    /// RIFT: the LLM judge's responses.
    pub fn judge_responses(&self) -> PathBuf {
        self.dir.join("judge-responses.jsonl")
    }
    /// RIFT: the parsed verdicts of the LLM judge.
    pub fn verdicts(&self) -> PathBuf {
        self.dir.join("verdicts.jsonl")
    }
    /// RIFT: the requests the pre-judge left for the LLM judge.
    pub fn judge_requests(&self) -> PathBuf {
        self.dir.join("judge-requests.jsonl")
    }
    /// RIFT: one score per expected answer.
    pub fn answer_scores(&self) -> PathBuf {
        self.dir.join("answer-scores.jsonl")
    }
    /// RIFT: the answer table's columns (`analysis::rift::answers_frame`) as Parquet, what the score summary reads.
    pub fn answer_table(&self) -> PathBuf {
        self.dir.join("answer-scores.parquet")
    }
    /// RIFT: one score per prompt.
    pub fn prompt_scores(&self) -> PathBuf {
        self.dir.join("prompt-scores.jsonl")
    }
    /// RIFT: the per-(model, structure) summary, as JSON.
    pub fn summary_json(&self) -> PathBuf {
        self.dir.join("summary.json")
    }
    /// A judge check's control items (`schema::judge_check::RiftControl` or `CoherenceControl`).
    pub fn controls(&self) -> PathBuf {
        self.dir.join("controls.jsonl")
    }
    /// A judge check's verdict on each control item (`schema::judge_check::ControlVerdict`).
    pub fn control_verdicts(&self) -> PathBuf {
        self.dir.join("control-verdicts.jsonl")
    }
    /// RIFT: the per-(model, structure) summary, as Markdown.
    pub fn summary_md(&self) -> PathBuf {
        self.dir.join("summary.md")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_folder_sits_under_its_benchmark_with_a_safe_name() {
        let run = RunPaths::new(Path::new("artifacts/runs/r"));
        let m = run.model(Bench::Rift, "openai/gpt-4o mini");
        assert_eq!(
            m.dir,
            Path::new("artifacts/runs/r/rift/models/openai_gpt-4o_mini")
        );
        assert_eq!(
            m.responses(),
            Path::new("artifacts/runs/r/rift/models/openai_gpt-4o_mini/responses.jsonl")
        );
    }
}
