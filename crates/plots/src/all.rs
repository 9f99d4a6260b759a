//! Every figure of an analysis: the second half of what `cargo xtask plots` and the pipeline's analysis stage run,
//! after `analysis::all::analyse` has written the tables and returned their summaries. This module computes nothing;
//! it draws what it is given into `<out>/figures/{ifscale,rift}/` (PNG, SVG).
//!
//! A benchmark whose judge failed its check (`Analysed::ifscale_mark`, `rift_mark`) has the mark in every figure
//! title drawn from its results. Each model keeps one colour across the IFScale figures: the aggregate's models first,
//! then any that only the labels or attempts name.

use std::path::Path;

use analysis::all::Analysed;
use analysis::models::ReasoningRule;

use crate::Error;

/// Draws every figure `analysed` allows under `out`; returns how many files were written.
pub fn draw(analysed: &Analysed, rule: &ReasoningRule, out: &Path) -> Result<usize, Error> {
    let ifscale = crate::figure::with_title_mark(analysed.ifscale_mark.as_deref(), || {
        draw_ifscale(analysed, rule, &out.join("figures/ifscale"))
    })?;
    let rift = match &analysed.rift {
        Some(summary) => crate::figure::with_title_mark(analysed.rift_mark.as_deref(), || {
            crate::rift::draw_all(summary, rule, &out.join("figures/rift"))
        })?
        .len(),
        None => 0,
    };
    tracing::info!(ifscale, rift, "Wrote the figures.");
    Ok(ifscale + rift)
}

fn draw_ifscale(analysed: &Analysed, rule: &ReasoningRule, dir: &Path) -> Result<usize, Error> {
    let mut written = 0;
    let mut palette: Vec<String> = Vec::new();
    if let Some(summary) = &analysed.ifscale {
        written += crate::ifscale::draw_all(summary, rule, analysed.vocabulary, dir)?.len();
        palette.clone_from(&summary.models);
    }
    if let Some(rows) = &analysed.primacy {
        palette.extend(rows.iter().map(|r| r.model.clone()));
        written += crate::ifscale::extra::draw_primacy(rows, &palette, rule, dir)?.len();
    }
    if let Some((rows, cfg)) = &analysed.coherence {
        palette.extend(rows.iter().map(|r| r.model.clone()));
        written +=
            crate::ifscale::extra::draw_coherence(rows, cfg.threshold, &palette, rule, dir)?.len();
    }
    Ok(written)
}
