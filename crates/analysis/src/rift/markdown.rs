//! The RIFT tables on disk: every frame as Parquet + CSV, and Table 2 (with Δ and the percentage-point gaps), the
//! wrong-question shares (per structure and pooled), accuracy by value band and the value-mix check, the reply
//! outcomes and reasoning vs non-reasoning models as Markdown. Where answers are unjudged a cell shows the accuracy bounds (unjudged counted wrong …
//! unjudged counted right) instead of one number, beside the unjudged count.

use std::path::{Path, PathBuf};

use super::{Delta, RiftSummary, StructureStats};
use crate::Error;
use crate::tables;

/// "lower … upper" with `digits` decimals, or "–" when either is unknown.
pub fn fmt_bounds(lower: Option<f64>, upper: Option<f64>, digits: usize) -> String {
    match (lower, upper) {
        (Some(l), Some(u)) => format!("{l:.digits$} … {u:.digits$}"),
        _ => "–".to_owned(),
    }
}

/// A Table 2 mean cell: "mean (± SE)" when every answer was judged, else the bounds of the mean.
fn mean_cell(r: Option<&StructureStats>) -> String {
    let Some(r) = r else {
        return "–".to_owned();
    };
    if r.unjudged > 0 {
        return fmt_bounds(r.mean_lower, r.mean_upper, 2);
    }
    match (r.mean, r.se) {
        (Some(mean), Some(se)) => format!("{mean:.2} (± {se:.2})"),
        (Some(mean), None) => format!("{mean:.2}"),
        (None, _) => "–".to_owned(),
    }
}

/// A Table 2 median cell: the median, or the bounds of the median where answers are unjudged.
fn median_cell(r: Option<&StructureStats>) -> String {
    match r {
        Some(r) if r.unjudged > 0 => fmt_bounds(r.median_lower, r.median_upper, 2),
        r => tables::fmt_opt(r.and_then(|r| r.median), 2),
    }
}

/// Writes every RIFT table (Parquet + CSV) under `dir`, and Table 2 as Markdown.
pub fn write_tables(summary: &RiftSummary, dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut written = Vec::new();
    for (name, df) in &summary.frames {
        written.extend(tables::write_table(df, dir, name)?);
    }
    let cell = |m: &str, s: &str| {
        summary
            .table2
            .iter()
            .find(|r| r.model == m && r.structure == s)
    };
    let rows: Vec<Vec<String>> = summary
        .models
        .iter()
        .map(|m| {
            let d = summary.deltas.iter().find(|d| &d.model == m);
            let delta = match d {
                Some(d) if d.delta.is_some() => tables::fmt_opt(d.delta, 1),
                Some(d) => fmt_bounds(d.delta_lower, d.delta_upper, 1),
                None => "–".to_owned(),
            };
            let gap = |point: fn(&Delta) -> [Option<f64>; 3]| match d.map(point) {
                Some([Some(p), _, _]) => format!("{p:.1}"),
                Some([None, lo, hi]) => fmt_bounds(lo, hi, 1),
                None => "–".to_owned(),
            };
            let linear_gap = gap(|d| {
                [
                    d.linear_minus_jumping_pp,
                    d.linear_minus_jumping_pp_lower,
                    d.linear_minus_jumping_pp_upper,
                ]
            });
            let baseline_gap = gap(|d| {
                [
                    d.baseline_minus_jumping_pp,
                    d.baseline_minus_jumping_pp_lower,
                    d.baseline_minus_jumping_pp_upper,
                ]
            });
            let unjudged = super::STRUCTURES
                .iter()
                .map(|s| cell(m, s).map_or_else(|| "–".to_owned(), |r| r.unjudged.to_string()))
                .collect::<Vec<_>>()
                .join(" / ");
            vec![
                m.clone(),
                mean_cell(cell(m, "baseline")),
                mean_cell(cell(m, "linear")),
                median_cell(cell(m, "linear")),
                mean_cell(cell(m, "jumping")),
                median_cell(cell(m, "jumping")),
                delta,
                linear_gap,
                baseline_gap,
                unjudged,
            ]
        })
        .collect();
    let mut rows = rows;
    rows.extend(super::published::markdown_rows()?);
    written.extend(tables::write_markdown(
        dir,
        "rift_table2",
        "Table 2: baseline vs linear vs jumping prompt accuracy (%), mean (± standard error) and median over prompts; Δ = (A_linear − A_jumping) / A_linear × 100 (relative, %); beside it the absolute gaps in percentage points, A_linear − A_jumping and A_baseline − A_jumping. Unjudged answers (no judge verdict: none configured, or the judge failed) are neither correct nor incorrect; where there are any, a cell shows bounds: unjudged counted wrong … unjudged counted right. Rows marked \"(published)\" are the RIFT paper's Table 2, for comparison.",
        &["Model", "Baseline mean (± SE)", "Linear mean (± SE)", "Linear median", "Jumping mean (± SE)", "Jumping median", "Δ", "Linear − jumping (pp)", "Baseline − jumping (pp)", "Unjudged answers (baseline / linear / jumping)"],
        &rows,
    )?);
    let answer_rows: Vec<Vec<String>> = summary
        .table2
        .iter()
        .map(|r| {
            vec![
                r.model.clone(),
                r.structure.clone(),
                (r.answers - r.unjudged).to_string(),
                tables::fmt_opt(r.answer_accuracy, 2),
                tables::fmt_opt(r.answer_se_clustered, 2),
                tables::fmt_opt(r.answer_design_effect, 2),
                tables::fmt_opt(r.se, 2),
            ]
        })
        .collect();
    written.extend(tables::write_markdown(
        dir,
        "rift_answer_level",
        "Answer-level accuracy: correct ÷ settled answers over every prompt (unjudged answers left out), with its standard error clustered by prompt (answers of one prompt succeed or fail together, so treating them as independent understates the error) and the design effect (clustered variance ÷ the variance if the answers were independent: how many times fewer independent answers the run is worth). Beside it, Table 2's SE of the prompt-level mean, whose unit is already the prompt. Definitions: docs/compare.md.",
        &["Model", "Structure", "Settled answers", "Accuracy (%)", "SE clustered by prompt (pp)", "Design effect", "Prompt-level SE (pp)"],
        &answer_rows,
    )?);
    // Each model's rows by structure, then its pooled row (linear + jumping).
    let mut wq: Vec<&super::WrongQuestion> = summary
        .wrong_question
        .iter()
        .chain(&summary.wrong_question_pooled)
        .collect();
    wq.sort_by_key(|w| (w.model.clone(), w.structure == super::POOLED));
    let wq_rows: Vec<Vec<String>> = wq
        .into_iter()
        .map(|w| {
            vec![
                w.model.clone(),
                if w.structure == super::POOLED {
                    "pooled (linear + jumping)".to_owned()
                } else {
                    w.structure.clone()
                },
                w.incorrect.to_string(),
                w.wrong_question.to_string(),
                tables::fmt_opt(w.share, 1),
                tables::fmt_opt(w.share_se_clustered, 1),
                tables::fmt_opt(w.share_design_effect, 2),
                w.wrong_question_correct.to_string(),
                w.unjudged.to_string(),
            ]
        })
        .collect();
    written.extend(tables::write_markdown(
        dir,
        "rift_wrong_question",
        "Share of incorrect answers that are the answer to a different question of the same prompt (the RIFT paper's Fig. 4), per structure and pooled: the \"pooled (linear + jumping)\" row is the paper's one share per model, (flagged incorrect answers) ÷ (incorrect answers) over linear and jumping prompts; baseline prompts are left out of the pool, since a one-question prompt has no other question to answer and its incorrect answers would only dilute the share. Unlike the paper's LLM flag, ifstress flags an answer by the pre-judge's normalized matching (it equals another question's expected answer and not its own), whatever the verdict; the share counts the flagged answers judged incorrect; \"Flagged, judged correct\" counts the flagged answers the judge called correct, outside the share (a lenient judge, or an answer right for both questions). Unjudged answers are not incorrect and stay out of the share. The share's standard error is clustered by prompt (the incorrect answers of one prompt are not independent); the design effect is its variance over the variance if they were.",
        &["Model", "Structure", "Incorrect", "Wrong question", "Share (%)", "SE clustered by prompt (pp)", "Design effect", "Flagged, judged correct", "Unjudged"],
        &wq_rows,
    )?);
    written.extend(summary.values.write_markdown(dir)?);
    written.extend(super::reasoning::write_markdown(
        &summary.reasoning_vs_instruct,
        dir,
    )?);
    let out_rows: Vec<Vec<String>> = summary
        .outcomes
        .iter()
        .map(|o| {
            vec![
                o.model.clone(),
                o.structure.clone(),
                o.prompts.to_string(),
                o.empty.to_string(),
                o.truncated.to_string(),
                o.malformed.to_string(),
                o.failed.to_string(),
                o.stopped_early.to_string(),
                o.ran_long.to_string(),
            ]
        })
        .collect();
    written.extend(tables::write_markdown(
        dir,
        "rift_reply_outcomes",
        "Replies per model and structure: empty, truncated (hit max tokens), malformed (no answer readable), failed requests, stopped early, ran long.",
        &["Model", "Structure", "Prompts", "Empty", "Truncated", "Malformed", "Failed", "Stopped early", "Ran long"],
        &out_rows,
    )?);
    Ok(written)
}
