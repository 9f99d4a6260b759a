//! `cargo xtask pipeline --pilot [N]`: the expected tokens and cost of a run, not only its worst case.
//!
//! The pilot runs the `pilot` of each of the run's stages (`crate::stage::Stage`: the generation and judge stages,
//! through `harness::ifscale::generate`, `harness::rift::run` and `harness::rift::judge`) on N seeded prompts per
//! model and stage: a systematic sample over the prompts in
//! their order (IFScale: across the density grid), per structure for RIFT (linear, jumping, baseline). It goes
//! through the run's client, so its answers are in the response cache and the spend ledger: the run sends none of
//! them again. Its files go to `<run>/pilot/`, never to the run's own folders.
//!
//! Each unit (an IFScale sample with all its attempts, a RIFT prompt, a RIFT answer for the judge) costs what the
//! pilot observed; the run's units (counted from the prompts the config makes, like the dry run's) are scaled by
//! the pilot's mean, with a range from its lightest to its heaviest unit (stratified sums for RIFT's structures).
//! A model with prices gets a cost; one without (a local server) gets tokens and request time instead.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use inference_client::ModelConfig;
use prompt_gen::rift::RiftConfig;
use schema::PromptRecord;
use schema::paths::{Bench, RunPaths};

use harness::estimate::expected::{Row, pick, to_markdown};

use crate::Run;
use crate::config::PipelineConfig;
use crate::shard::Unit;
use crate::stage::Stage;

/// The sampling seed of the pilot's prompts (fixed: a rerun of the pilot is answered from the cache).
const SEED: u32 = 0;

pub(crate) fn create_parent(path: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(path.parent().unwrap_or(Path::new(".")))
}

pub(crate) fn structure(p: &PromptRecord) -> String {
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
pub(crate) fn rift_source(
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

/// What the stages' pilots share: the run, the sample size, the pilot's own folder and the samples, drawn once.
pub struct Pilot<'a> {
    pub run: &'a Run,
    /// Prompts per model and stage.
    pub per_stage: usize,
    /// The pilot's run folder (`<run>/pilot/`).
    pub paths: RunPaths,
    /// The run's IFScale prompts and the pilot's sample of them.
    ifscale: Option<(Vec<PromptRecord>, Vec<PromptRecord>)>,
    rift: Option<Option<RiftSample>>,
    /// In a shard: the units it sends, once computed (`None` inside: a benchmark's prompts cannot be made now).
    share: Option<Option<std::rc::Rc<BTreeSet<Unit>>>>,
    /// What the pilot says about a shard's share.
    share_note: Option<String>,
}

/// The pilot's RIFT prompts: a systematic sample per structure.
#[derive(Debug, Clone)]
pub struct RiftSample {
    /// The pilot's prompts file.
    pub prompts: std::path::PathBuf,
    pub chosen: Vec<PromptRecord>,
    /// The run's prompts by structure (indices).
    pub by_structure: BTreeMap<String, Vec<usize>>,
    /// Answers expected over the run's prompts and over the pilot's.
    pub run_answers: usize,
    pub pilot_answers: usize,
    /// The run's prompts (for a shard's share).
    pub all: std::rc::Rc<Vec<PromptRecord>>,
}

impl RiftSample {
    /// The run's prompts of a structure that `model` sends: all of them, or in a shard those of its `share`.
    pub fn run_units(&self, share: Option<&BTreeSet<Unit>>, model: &str, idx: &[usize]) -> usize {
        idx.iter()
            .filter(|&&i| crate::shard::contains(share, Bench::Rift, model, &self.all[i].id))
            .count()
    }

    /// The answers expected over the run's prompts that `model` sends (a shard's share, with `share`).
    pub fn run_answers(&self, share: Option<&BTreeSet<Unit>>, model: &str) -> usize {
        match share {
            None => self.run_answers,
            Some(_) => self
                .all
                .iter()
                .filter(|p| crate::shard::contains(share, Bench::Rift, model, &p.id))
                .map(answers)
                .sum(),
        }
    }
}

impl<'a> Pilot<'a> {
    pub fn new(run: &'a Run, per_stage: usize) -> anyhow::Result<Pilot<'a>> {
        let root = run.paths.root.join("pilot");
        std::fs::create_dir_all(root.join("rift"))?;
        Ok(Pilot {
            run,
            per_stage,
            paths: RunPaths::new(&root),
            ifscale: None,
            rift: None,
            share: None,
            share_note: None,
        })
    }

    /// In a shard (`--shard`), the units it sends, from the prompts the config makes (the same assignment as the
    /// shard's own): the pilot scales each unit's observed cost to the shard's units instead of the run's. `None`
    /// in a whole run, and when a benchmark's prompts cannot be made now (then the rows are the whole run's, said so).
    pub fn share(&mut self) -> anyhow::Result<Option<std::rc::Rc<BTreeSet<Unit>>>> {
        let Some(sharding) = &self.run.shard else {
            return Ok(None);
        };
        if let Some(share) = &self.share {
            return Ok(share.clone());
        }
        let cfg = &self.run.cfg;
        if let Some(ifs) = &cfg.ifscale {
            self.ifscale_sample(ifs)?;
        }
        let rift = if cfg.rift.is_some() {
            self.rift_sample()?.map(|s| s.all.clone())
        } else {
            Some(std::rc::Rc::new(Vec::new()))
        };
        let ifscale = match (&cfg.ifscale, &self.ifscale) {
            (None, _) => Some(&[][..]),
            (Some(_), Some((all, _))) => Some(all.as_slice()),
            (Some(_), None) => None,
        };
        let lists = match (ifscale, &rift) {
            (Some(ifscale), Some(rift)) => {
                Some([(Bench::Ifscale, ifscale), (Bench::Rift, rift.as_slice())])
            }
            _ => None,
        };
        let (share, line) =
            crate::shard::share_of(self.run, sharding.shard, lists.as_ref().map(|l| &l[..]));
        self.share_note = Some(line);
        self.share = Some(share.clone());
        Ok(share)
    }

    /// The number of the run's IFScale samples and the pilot's systematic sample of them, spread over the density
    /// grid.
    pub fn ifscale_sample(
        &mut self,
        ifs: &prompt_gen::ifscale::IfscaleConfig,
    ) -> anyhow::Result<(usize, Vec<PromptRecord>)> {
        if self.ifscale.is_none() {
            let all = self.paths.root.join("ifscale-prompts.jsonl");
            harness::ifscale::write_prompts(ifs, None, &all)?;
            let prompts = harness::read_prompts(&all)?;
            let _ = std::fs::remove_file(&all);
            let chosen = pick(prompts.len(), self.per_stage, SEED)
                .into_iter()
                .map(|i| prompts[i].clone())
                .collect();
            self.ifscale = Some((prompts, chosen));
        }
        Ok(self
            .ifscale
            .as_ref()
            .map(|(all, chosen)| (all.len(), chosen.clone()))
            .unwrap_or_default())
    }

    /// How many of the run's IFScale prompts fit `model`'s context window (`crate::fit`): the samples the run sends
    /// (in a shard, of its share).
    pub fn ifscale_fitting(
        &mut self,
        ifs: &prompt_gen::ifscale::IfscaleConfig,
        model: &ModelConfig,
    ) -> anyhow::Result<usize> {
        let share = self.share()?;
        self.ifscale_sample(ifs)?;
        Ok(self.ifscale.as_ref().map_or(0, |(all, _)| {
            all.iter()
                .filter(|p| {
                    crate::shard::contains(share.as_deref(), Bench::Ifscale, &model.name, &p.id)
                })
                .filter(|p| crate::fit::check(model, p).is_none())
                .count()
        }))
    }

    /// The pilot's RIFT sample, when the pilot can build the run's prompts now (see [`rift_source`]).
    pub fn rift_sample(&mut self) -> anyhow::Result<Option<&RiftSample>> {
        if self.rift.is_none() {
            let (rift, _) = rift_source(&self.run.cfg, self.run.prepared);
            let sample = match rift {
                Some(rift) => Some(self.make_rift_sample(&rift)?),
                None => None,
            };
            self.rift = Some(sample);
        }
        Ok(self.rift.as_ref().and_then(Option::as_ref))
    }

    fn make_rift_sample(&self, rift: &RiftConfig) -> anyhow::Result<RiftSample> {
        let all = self.paths.root.join("rift-all-prompts.jsonl");
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
                pick(idx.len(), self.per_stage, SEED)
                    .into_iter()
                    .map(|j| prompts[idx[j]].clone())
            })
            .collect();
        let pilot_prompts = self.paths.root.join("rift").join("prompts.jsonl");
        schema::write_jsonl_atomic(&pilot_prompts, &chosen)?;
        Ok(RiftSample {
            prompts: pilot_prompts,
            run_answers: prompts.iter().map(answers).sum(),
            pilot_answers: chosen.iter().map(answers).sum(),
            chosen,
            by_structure,
            all: std::rc::Rc::new(prompts),
        })
    }
}

/// A model's prices per million input and output tokens.
pub(crate) fn prices(m: &ModelConfig) -> (f64, f64) {
    (m.price_in_per_mtok, m.price_out_per_mtok)
}

/// Every stage's pilot rows, in the order the stages run.
pub fn rows<'a>(run: &'a Run, stages: &[Stage<'a>], per_stage: usize) -> anyhow::Result<Vec<Row>> {
    Ok(rows_and_share(run, stages, per_stage)?.0)
}

/// Every stage's pilot rows, and what the pilot says about a shard's share.
fn rows_and_share<'a>(
    run: &'a Run,
    stages: &[Stage<'a>],
    per_stage: usize,
) -> anyhow::Result<(Vec<Row>, Option<String>)> {
    let mut pilot = Pilot::new(run, per_stage)?;
    let mut rows = Vec::new();
    for stage in stages {
        if let Some(f) = &stage.pilot {
            rows.extend(f(&mut pilot)?);
        }
    }
    Ok((rows, pilot.share_note))
}

/// Sends the pilot of `stages` and prints the expectation, and below it what was not piloted and why.
#[allow(clippy::print_stdout)]
pub fn pilot<'a>(run: &'a Run, stages: &[Stage<'a>], per_stage: usize) -> anyhow::Result<()> {
    let spent_before = run.client.spent_usd();
    let (rows, share_note) = rows_and_share(run, stages, per_stage)?;
    let (_, notes) = rift_source(&run.cfg, run.prepared);
    println!("{}", to_markdown(&rows, per_stage));
    if let Some(note) = share_note {
        println!("{note}");
    }
    for note in notes {
        println!("{note}");
    }
    println!(
        "The pilot spent {:.4} USD (in the run's ledger, {}); its answers are in {}.",
        run.client.spent_usd() - spent_before,
        run.paths.spend_ledger().display(),
        run.paths.root.join("pilot").display()
    );
    Ok(())
}
