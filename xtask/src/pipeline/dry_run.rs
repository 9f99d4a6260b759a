//! `cargo xtask pipeline --dry-run`: per stage and model, the requests a run would send and their worst-case cost,
//! from the prompts the config makes (written to a temporary file and removed); nothing is sent.
//!
//! RIFT prompts come from the prepared questions when they are this config's (`super::rift_data`), else from the
//! raw clue file prepared in memory, else (no clue file) from the RIFT paper's published counts, said so.

use inference_client::{Client, ModelConfig};
use schema::paths::RunPaths;

use super::PipelineConfig;
use crate::UsageError;

#[allow(clippy::print_stdout)]
pub(super) fn dry_run(
    cfg: &PipelineConfig,
    models: &[ModelConfig],
    paths: &RunPaths,
    client: &Client,
    // `[rift] dataset` was prepared from this config's `[rift-prep]` (or the config prepares nothing).
    prepared: bool,
) -> anyhow::Result<()> {
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    if let Some(ifs) = &cfg.ifscale {
        let tmp = paths.root.join(".dry-run-ifscale-prompts.jsonl");
        harness::ifscale::write_prompts(ifs, None, &tmp)?;
        let prompts = harness::read_prompts(&tmp)?;
        let _ = std::fs::remove_file(&tmp);
        let judge = ifs.judge_model.as_deref();
        rows.extend(harness::estimate::ifscale(
            &prompts,
            models,
            judge,
            ifs.max_attempts,
            client,
        )?);
    }
    let mut baseline = None;
    if let Some(rift) = &cfg.rift {
        let prep = cfg.rift_prep.as_ref();
        let judge = prep.and_then(|p| p.judge_model.as_deref());
        let raw = prep.and_then(|p| p.inputs.first());
        // Before the prep stage ran (or when the prepared file is another config's), sample from the raw clue
        // file, prepared in memory without rephrasing.
        let mut sample_cfg = rift.clone();
        if (!prepared || !rift.dataset.is_file())
            && let Some(raw) = raw
        {
            if rift.dataset.is_file() {
                notes.push(format!(
                    "RIFT: {} was prepared from other inputs than this config's `[rift-prep]`, so it is not used; \
                     the prompts are sampled from {} (the run prepares it again).",
                    rift.dataset.display(),
                    raw.display()
                ));
            }
            sample_cfg.dataset = raw.clone();
        }
        if let Some(missing) = prep.and_then(super::rift_data::missing_input)
            && sample_cfg.dataset != rift.dataset
        {
            rows.extend(super::rift_data::published_estimate(rift, prep, models));
            notes.push(super::rift_data::published_note(missing));
            baseline = Some(prompt_gen::rift::baseline_description(
                rift,
                jeopardy_prep::PUBLISHED_QUESTIONS,
            ));
        } else {
            if !sample_cfg.dataset.is_file() {
                return Err(UsageError(format!(
                    "{}: the RIFT dataset does not exist; list the raw clue files it is prepared from under \
                     `[rift-prep] inputs` (the README's \"Reproducing the papers\" explains the Jeopardy! file)",
                    rift.dataset.display()
                ))
                .into());
            }
            let tmp = paths.root.join(".dry-run-rift-prompts.jsonl");
            harness::rift::write_prompts(&sample_cfg, &tmp)?;
            let prompts = harness::read_prompts(&tmp)?;
            let _ = std::fs::remove_file(&tmp);
            let first_rift_row = rows.len();
            rows.extend(harness::estimate::rift(&prompts, models, judge, client)?);
            if let Some(prep) = prep
                && let Some(rephraser) = &prep.rephrase_model
            {
                let mut clues = 0;
                for input in &prep.inputs {
                    clues += jeopardy_prep::load_clues(input)
                        .map_err(|e| UsageError(e.to_string()))?
                        .len();
                }
                rows.insert(
                    first_rift_row,
                    harness::estimate::Estimate {
                        stage: "rift rephrase",
                        model: rephraser.clone(),
                        note: "one per raw clue, before clean-up (cached: a rerun sends none)"
                            .to_owned(),
                        requests: clues,
                        est_input_tokens: 0,
                        worst_case_cost_usd: None,
                        unbounded: 0,
                    },
                );
            }
            let questions = harness::rift::load_dataset(&sample_cfg.dataset)?.len();
            baseline = Some(prompt_gen::rift::baseline_description(rift, questions));
        }
    }
    // The judge check: a fixed number of control items per configured judge, whatever the run's size.
    if cfg.judge_check.enabled {
        let n = cfg.judge_check.per_kind;
        if let Some(judge) = cfg
            .rift
            .as_ref()
            .and(cfg.rift_prep.as_ref())
            .and_then(|p| p.judge_model.as_ref())
        {
            rows.push(harness::estimate::Estimate {
                stage: "rift judge check",
                model: judge.clone(),
                note: format!(
                    "at most {n} known-correct and {n} known-incorrect control items, up to `judge-tries` each"
                ),
                requests: 2 * n,
                est_input_tokens: 0,
                worst_case_cost_usd: None,
                unbounded: 0,
            });
        }
        if let Some(judge) = cfg.ifscale.as_ref().and_then(|i| i.judge_model.as_ref()) {
            let coherent = std::fs::read_to_string(&cfg.judge_check.coherent_reports)
                .map(|t| t.lines().filter(|l| !l.trim().is_empty()).count())
                .unwrap_or(0);
            let incoherent = n.max(harness::judge_check::MIN_INCOHERENT);
            rows.push(harness::estimate::Estimate {
                stage: "ifscale judge check",
                model: judge.clone(),
                note: format!(
                    "{} hand-written coherent and at most {incoherent} incoherent control reports, up to `judge-tries` each",
                    coherent.min(n)
                ),
                requests: coherent.min(n) + incoherent,
                est_input_tokens: 0,
                worst_case_cost_usd: None,
                unbounded: 0,
            });
        }
    }
    println!("{}", harness::estimate::to_markdown(&rows));
    if let Some(b) = baseline {
        println!("RIFT baseline: {b}.");
    }
    for note in notes {
        println!("{note}");
    }
    match client.cap_usd() {
        Some(cap) => println!(
            "Run-wide budget: {cap:.2} USD, of which {:.4} already spent by earlier runs ({}).",
            client.spent_usd(),
            paths.spend_ledger().display()
        ),
        None => println!(
            "Run-wide budget: none (set `[run] max-cost-usd` or --max-cost); {:.4} USD spent by earlier runs.",
            client.spent_usd()
        ),
    }
    Ok(())
}
