//! The run's `summary.md` (what `report` says of the run, where a sequential run stopped, the stages that finished
//! incomplete, the budget) and the outcome it ends with.

use crate::Run;
use crate::outcome::Failure;
use crate::stage::{Ctx, Outcome};

/// Writes `<run>/summary.md` for what the stages did, and returns its text.
pub fn write(run: &Run, out: &Outcome, seconds: f64) -> anyhow::Result<String> {
    let paths = &run.paths;
    let mut summary = ::report::summary_markdown(
        &run.cfg.run.name,
        paths,
        &run.cfg.run.models,
        out.stages_run.len(),
        out.stages_skipped.len(),
        seconds,
        &run.prices(),
        &run.ifscale_caps(),
    )?;
    if let Some(seq) = run.sequential.markdown() {
        summary.push_str(&seq);
    }
    summary.push_str(&incomplete_markdown(&out.incomplete));
    summary.push_str(&crate::fit::summary_markdown(
        &crate::stages::ifscale::does_not_fit(paths),
    )?);
    if let Some(cap) = run.client.cap_usd() {
        summary.push_str(&format!(
            "\nSpent {:.4} of the run's {cap:.2} USD budget (ledger: {}).\n",
            run.client.spent_usd(),
            paths.spend_ledger().display()
        ));
    }
    schema::write_atomic(&paths.summary(), summary.as_bytes())?;
    Ok(summary)
}

/// The "Incomplete" section: the stages that finished without an answer to every prompt (empty when none).
pub fn incomplete_markdown(incomplete: &[(String, usize)]) -> String {
    if incomplete.is_empty() {
        return String::new();
    }
    let mut table = schema::Table::new(vec![
        schema::table::left("stage"),
        schema::table::right("prompts without an answer"),
    ]);
    for (name, n) in incomplete {
        let n = if *n == 0 {
            "–".to_owned()
        } else {
            n.to_string()
        };
        table.push(vec![name.clone(), n]);
    }
    format!(
        "\n## Incomplete\n\nThese stages finished without an answer to every prompt (failed after their retries, not sent because of the cost limit, left unjudged by a configured judge, or stopped because their model cannot be used); they are not marked done, and a plain rerun sends what is missing.\n\n{}",
        table.to_markdown()
    )
}

/// How the run ends: incomplete (3) before a failed judge (4), since the rerun that completes the run checks the
/// judge again; else success.
pub fn outcome(run: &Run, ctx: &Ctx<'_>) -> anyhow::Result<()> {
    let failed: Vec<String> = ctx
        .judge_check
        .iter()
        .flat_map(|f| &f.checks)
        .filter(|c| !c.passed)
        .inspect(|c| {
            if c.kept {
                tracing::warn!(
                    "{}; its verdicts are kept on purpose ([judge-check] keep-failed-judge).",
                    c.reason()
                );
            } else {
                tracing::error!("{}.", c.reason());
            }
        })
        .filter(|c| !c.kept)
        .map(schema::judge_check::JudgeCheck::reason)
        .collect();
    let incomplete = &ctx.out.incomplete;
    if !incomplete.is_empty() {
        let missing: usize = incomplete.iter().map(|(_, n)| n).sum();
        return Err(Failure::Incomplete(format!(
            "the run finished incomplete: {missing} prompts without an answer, in {} stages (see {}); rerun to continue",
            incomplete.len(),
            run.paths.summary().display()
        ))
        .into());
    }
    if !failed.is_empty() {
        return Err(Failure::JudgeFailed(format!(
            "the run finished, but {} (see {})",
            failed.join("; "),
            run.paths.judge_check().display()
        ))
        .into());
    }
    Ok(())
}
