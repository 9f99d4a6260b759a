//! `cargo xtask pipeline --dry-run`: per stage and model, the requests a run would send and their worst-case cost,
//! from the prompts the config makes (written to a temporary file and removed); nothing is sent.

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
) -> anyhow::Result<()> {
    let mut rows = Vec::new();
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
        // Before the prep stage ran, sample from the raw clue file (prepared in memory, without rephrasing).
        let mut sample_cfg = rift.clone();
        if !rift.dataset.is_file()
            && let Some(raw) = cfg.rift_prep.as_ref().and_then(|p| p.inputs.first())
        {
            sample_cfg.dataset = raw.clone();
        }
        if !sample_cfg.dataset.is_file() {
            return Err(UsageError(format!(
                "{}: the RIFT dataset does not exist; list the raw clue files under `[rift-prep].inputs`",
                rift.dataset.display()
            ))
            .into());
        }
        let tmp = paths.root.join(".dry-run-rift-prompts.jsonl");
        harness::rift::write_prompts(&sample_cfg, &tmp)?;
        let prompts = harness::read_prompts(&tmp)?;
        let _ = std::fs::remove_file(&tmp);
        let judge = cfg
            .rift_prep
            .as_ref()
            .and_then(|p| p.judge_model.as_deref());
        let first_rift_row = rows.len();
        rows.extend(harness::estimate::rift(&prompts, models, judge, client)?);
        if let Some(prep) = &cfg.rift_prep
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
