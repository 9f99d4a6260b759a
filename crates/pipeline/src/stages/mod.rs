//! The run's list of stages, in order: the one place a stage is declared.
//!
//! vocabulary (only when its file is missing or asked) → Jeopardy! prep → IFScale prompts, generation per model
//! (attempts, retry rules, coherence judge, scores), join → RIFT prompts, then per model generation, judge and
//! score, join → judge checks and their gate → analysis → explorer → report.
//! Per-model folders (`RunPaths::model`) are joined into one score file per benchmark before the analysis.

pub mod checks;
pub mod ifscale;
pub mod report;
pub mod rift;

use crate::Run;
use crate::stage::Stage;

/// Every stage of `run`, in the order they run.
pub fn list(run: &Run) -> Vec<Stage<'_>> {
    let mut stages = data(run);
    stages.extend(checks::stages(run));
    stages.extend(report::stages(run));
    stages
}

/// The stages that make a run's data, up to the joined score files (a sequential run's batch): the list without
/// the judge checks, the analysis and the report.
pub fn data(run: &Run) -> Vec<Stage<'_>> {
    let mut stages = Vec::new();
    if let Some(stage) = crate::vocab::stage(run) {
        stages.push(stage);
    }
    if let Some(stage) = crate::rift_data::prep_stage(run) {
        stages.push(stage);
    }
    if let Some(ifs) = &run.cfg.ifscale {
        stages.extend(ifscale::stages(run, ifs));
    }
    if let Some(rift) = &run.cfg.rift {
        stages.extend(rift::stages(run, rift));
    }
    stages
}
