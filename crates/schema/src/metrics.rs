//! Per-stage measurements of a pipeline run (`cargo xtask pipeline --stage-metrics <file>`), one JSON line per
//! stage; `cargo xtask bench pipeline` reads them into its table.

use serde::{Deserialize, Serialize};

/// One measured stage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageMetric {
    pub stage: String,
    /// False when the stage was up to date and skipped.
    pub ran: bool,
    pub wall_s: f64,
    /// User + system CPU seconds of the process and its children during the stage.
    pub cpu_s: f64,
    /// Peak resident memory during the stage, MiB (None where it cannot be measured).
    #[serde(default)]
    pub peak_rss_mib: Option<f64>,
    /// Lines written to JSONL/CSV files (the appended lines of a file that grew in place).
    pub rows: u64,
    /// Bytes written (the growth of a file appended in place; the whole size of a file written anew).
    pub bytes: u64,
    /// Files written.
    pub files: usize,
}
