//! Where artifacts live under a run folder. Every stage uses these names, so any stage can be rerun alone.

use std::path::{Path, PathBuf};

/// The files of one run, `artifacts/runs/<run>/`.
#[derive(Debug, Clone)]
pub struct RunPaths {
    pub root: PathBuf,
}

impl RunPaths {
    pub fn new(root: &Path) -> RunPaths {
        RunPaths {
            root: root.to_owned(),
        }
    }
    pub fn ifscale_prompts(&self) -> PathBuf {
        self.root.join("ifscale/prompts.jsonl")
    }
    pub fn ifscale_responses(&self) -> PathBuf {
        self.root.join("ifscale/responses.jsonl")
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
    pub fn rift_responses(&self) -> PathBuf {
        self.root.join("rift/responses.jsonl")
    }
    pub fn rift_judge_requests(&self) -> PathBuf {
        self.root.join("rift/judge-requests.jsonl")
    }
    pub fn rift_verdicts(&self) -> PathBuf {
        self.root.join("rift/verdicts.jsonl")
    }
    pub fn rift_answer_scores(&self) -> PathBuf {
        self.root.join("rift/answer-scores.jsonl")
    }
    pub fn rift_prompt_scores(&self) -> PathBuf {
        self.root.join("rift/prompt-scores.jsonl")
    }
    pub fn tables(&self) -> PathBuf {
        self.root.join("tables")
    }
    pub fn figures(&self) -> PathBuf {
        self.root.join("figures")
    }
    pub fn report(&self) -> PathBuf {
        self.root.join("report.html")
    }
    pub fn summary(&self) -> PathBuf {
        self.root.join("summary.md")
    }
}
