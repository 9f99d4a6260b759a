//! `cargo xtask pipeline --pilot [N]`: the expected tokens and cost of a run, not only its worst case.
//!
//! The pilot runs the run's own generation and judge stages (`harness::ifscale::generate`, `harness::rift::run`
//! and `harness::rift::judge`) on N seeded prompts per model and stage: a systematic sample over the prompts in
//! their order (IFScale: across the density grid), per structure for RIFT (linear, jumping, baseline). It goes
//! through the run's client, so its answers are in the response cache and the spend ledger: the run sends none of
//! them again. Its files go to `<run>/pilot/`, never to the run's own folders.
//!
//! Each unit (an IFScale sample with all its attempts, a RIFT prompt, a RIFT answer for the judge) costs what the
//! pilot observed; the run's units (counted from the prompts the config makes, like the dry run's) are scaled by
//! the pilot's mean, with a range from its lightest to its heaviest unit (stratified sums for RIFT's structures).
//! A model with prices gets a cost; one without (a local server) gets tokens and request time instead.

use std::collections::BTreeMap;
use std::path::Path;

use inference_client::{Client, ModelConfig};
use prompt_gen::rift::RiftConfig;
use schema::PromptRecord;
use schema::paths::{Bench, RunPaths};

use harness::estimate::expected::{Row, Stratum, per_request, per_unit, pick, to_markdown};

use super::{PipelineConfig, rift_judge_call};

/// The sampling seed of the pilot's prompts (fixed: a rerun of the pilot is answered from the cache).
const SEED: u32 = 0;

fn create_parent(path: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(path.parent().unwrap_or(Path::new(".")))
}

fn structure(p: &PromptRecord) -> String {
    p.extra
        .get("structure")
        .and_then(|v| v.as_str())
        .unwrap_or("")
        .to_owned()
}

fn answers(p: &PromptRecord) -> usize {
    p.extra
        .get("expected")
        .and_then(|e| e.as_array())
        .map_or(0, Vec::len)
}

/// The RIFT experiment the pilot can build its prompts from now, exactly as the run will: the prepared questions
/// when they are this config's (`prepared`), or the one raw clue file prepared in memory when the run will prepare
/// it the same way (no rephrasing); else none, with the reason. Also the notes on what the pilot leaves out.
pub(super) fn rift_source(
    cfg: &PipelineConfig,
    prepared: bool,
) -> (Option<RiftConfig>, Vec<String>) {
    let mut notes = Vec::new();
    let rift = cfg.rift.as_ref().and_then(|rift| {
        let prep = cfg.rift_prep.as_ref().filter(|p| !p.inputs.is_empty());
        match prep {
            _ if prepared && rift.dataset.is_file() => Some(rift.clone()),
            None => {
                notes.push(format!("RIFT: not piloted: {} is not there.", rift.dataset.display()));
                None
            }
            Some(prep)
                if prep.rephrase_model.is_none()
                    && prep.inputs.len() == 1
                    && prep.inputs[0].is_file() =>
            {
                let mut raw = rift.clone();
                raw.dataset = prep.inputs[0].clone();
                Some(raw)
            }
            Some(_) => {
                notes.push(
                    "RIFT: not piloted: its prompts are made from prepared (rephrased) questions that are not there \
                     yet; run the pipeline's `rift-prep` stage first (the dry run counts its requests)."
                        .to_owned(),
                );
                None
            }
        }
    });
    if cfg
        .rift_prep
        .as_ref()
        .is_some_and(|p| p.rephrase_model.is_some())
        && cfg.rift.is_some()
    {
        notes.push(
            "Not piloted: the RIFT rephrasing (one request per raw clue; `--dry-run` counts them)."
                .to_owned(),
        );
    }
    if cfg.judge_check.enabled {
        notes.push(
            "Not piloted: the judge checks (a fixed number of control items per judge; `--dry-run` counts them)."
                .to_owned(),
        );
    }
    (rift, notes)
}

/// What the pilot needs beside the config.
pub(super) struct Pilot<'a> {
    pub(super) cfg: &'a PipelineConfig,
    /// Prompts per model and stage.
    pub(super) per_stage: usize,
    pub(super) models: &'a [ModelConfig],
    pub(super) ifscale_judge: Option<&'a ModelConfig>,
    pub(super) rubric: &'a str,
    pub(super) rift_judge: Option<&'a ModelConfig>,
    /// The RIFT questions the run's prompts are made from, when the pilot can build them now.
    pub(super) rift: Option<RiftConfig>,
    pub(super) paths: &'a RunPaths,
    pub(super) client: &'a Client,
}

/// Sends the pilot and prints the expectation; `notes` are printed below it (what was not piloted and why).
#[allow(clippy::print_stdout)]
pub(super) fn pilot(p: &Pilot<'_>, notes: &[String]) -> anyhow::Result<()> {
    let root = p.paths.root.join("pilot");
    let pilot_paths = RunPaths::new(&root);
    std::fs::create_dir_all(root.join("rift"))?;
    let spent_before = p.client.spent_usd();
    let prices = |m: &ModelConfig| (m.price_in_per_mtok, m.price_out_per_mtok);
    let mut rows = Vec::new();
    if let Some(ifs) = &p.cfg.ifscale {
        let all = root.join("ifscale-prompts.jsonl");
        harness::ifscale::write_prompts(ifs, None, &all)?;
        let prompts = harness::read_prompts(&all)?;
        let chosen: Vec<PromptRecord> = pick(prompts.len(), p.per_stage, SEED)
            .into_iter()
            .map(|i| prompts[i].clone())
            .collect();
        for m in p.models {
            let files = pilot_paths.model(Bench::Ifscale, &m.name);
            create_parent(&files.responses())?;
            super::generate_ifscale(ifs, &chosen, m, p.ifscale_judge, p.rubric, &files, p.client)?;
            let (units, requests) = per_unit(&files.responses())?;
            rows.push(Row {
                stage: "ifscale generation",
                model: m.name.clone(),
                prices: prices(m),
                unit: "sample",
                pilot_requests: requests,
                strata: vec![Stratum {
                    run_units: prompts.len(),
                    observed: units.into_values().collect(),
                }],
            });
            if let Some(judge) = p.ifscale_judge {
                let (observed, requests) = per_request(&files.coherence_judge(), chosen.len())?;
                rows.push(Row {
                    stage: "ifscale coherence judge",
                    model: judge.name.clone(),
                    prices: prices(judge),
                    unit: "sample",
                    pilot_requests: requests,
                    strata: vec![Stratum {
                        run_units: prompts.len(),
                        observed,
                    }],
                });
            }
        }
        let _ = std::fs::remove_file(&all);
    }
    if let Some(rift) = &p.rift {
        let all = root.join("rift-all-prompts.jsonl");
        harness::rift::write_prompts(rift, &all)?;
        let prompts = harness::read_prompts(&all)?;
        let _ = std::fs::remove_file(&all);
        let mut by_structure: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for (i, q) in prompts.iter().enumerate() {
            by_structure.entry(structure(q)).or_default().push(i);
        }
        let chosen: Vec<PromptRecord> = by_structure
            .values()
            .flat_map(|idx| {
                pick(idx.len(), p.per_stage, SEED)
                    .into_iter()
                    .map(|j| prompts[idx[j]].clone())
            })
            .collect();
        let pilot_prompts = root.join("rift").join("prompts.jsonl");
        schema::write_jsonl_atomic(&pilot_prompts, &chosen)?;
        let run_answers: usize = prompts.iter().map(answers).sum();
        let pilot_answers: usize = chosen.iter().map(answers).sum();
        let judge_call = rift_judge_call(p.cfg.rift_prep.as_ref());
        let template = harness::read_text(Path::new("configs/prompts/rift-judge.txt"))?;
        for m in p.models {
            let files = pilot_paths.model(Bench::Rift, &m.name);
            create_parent(&files.responses())?;
            harness::rift::run(m, &chosen, &files.responses(), p.client)?;
            let (units, requests) = per_unit(&files.responses())?;
            let strata = by_structure
                .iter()
                .map(|(s, idx)| Stratum {
                    run_units: idx.len(),
                    observed: chosen
                        .iter()
                        .filter(|q| structure(q) == *s)
                        .filter_map(|q| units.get(&q.id).copied())
                        .collect(),
                })
                .collect();
            rows.push(Row {
                stage: "rift generation",
                model: m.name.clone(),
                prices: prices(m),
                unit: "prompt",
                pilot_requests: requests,
                strata,
            });
            if let Some(judge) = p.rift_judge {
                harness::rift::judge(&harness::rift::Judge {
                    judge,
                    prompts: &pilot_prompts,
                    responses: &files.responses(),
                    template: &template,
                    judge_settled: false,
                    call: &judge_call,
                    files: &files,
                    client: p.client,
                })?;
                let (observed, requests) = per_request(&files.judge_responses(), pilot_answers)?;
                rows.push(Row {
                    stage: "rift judge",
                    model: judge.name.clone(),
                    prices: prices(judge),
                    unit: "answer",
                    pilot_requests: requests,
                    strata: vec![Stratum {
                        run_units: run_answers,
                        observed,
                    }],
                });
            }
        }
    }
    println!("{}", to_markdown(&rows, p.per_stage));
    for note in notes {
        println!("{note}");
    }
    println!(
        "The pilot spent {:.4} USD (in the run's ledger, {}); its answers are in {}.",
        p.client.spent_usd() - spent_before,
        p.paths.spend_ledger().display(),
        root.display()
    );
    Ok(())
}
