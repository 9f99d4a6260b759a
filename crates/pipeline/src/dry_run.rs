//! `cargo xtask pipeline --dry-run`: per stage and model, the requests a run would send and their worst-case cost,
//! from the stages' own `estimate` (`crate::stage::Stage`) and the prompts the config makes (written to a
//! temporary file and removed); nothing is sent.
//!
//! RIFT prompts come from the prepared questions when they are this config's (`crate::rift_data`), else from the
//! raw clue file prepared in memory, else (no clue file) from the RIFT paper's published counts, said so.

use harness::estimate::Estimate;
use inference_client::ModelConfig;
use prompt_gen::ifscale::IfscaleConfig;
use prompt_gen::rift::RiftConfig;
use schema::PromptRecord;
use schema::paths::Bench;
use std::collections::BTreeSet;

use crate::Run;
use crate::config::RiftPrepSection;
use crate::outcome::Failure;
use crate::shard::Unit;
use crate::stage::Stage;

/// What the stages' estimates share: the prompts the config makes, built once, and the notes printed under the
/// table.
pub struct DryRun<'a> {
    pub run: &'a Run,
    ifscale: Option<Option<Vec<PromptRecord>>>,
    rift: Option<RiftSample>,
    notes: Vec<String>,
    baseline: Option<String>,
    /// In a shard: the units it sends, once computed (`None` inside: the share cannot be computed, said in a note).
    share: Option<Option<std::rc::Rc<BTreeSet<Unit>>>>,
}

/// Where the RIFT estimate comes from.
enum RiftSample {
    /// The prompts the run will send, and the questions they are made from.
    Prompts(Vec<PromptRecord>),
    /// No clue file: the published counts.
    Published,
}

impl<'a> DryRun<'a> {
    pub fn new(run: &'a Run) -> DryRun<'a> {
        DryRun {
            run,
            ifscale: None,
            rift: None,
            notes: Vec::new(),
            baseline: None,
            share: None,
        }
    }

    /// In a shard (`--shard`), the units it sends: the assignment every shard computes, over the prompts the config
    /// makes (both benchmarks'); `None` in a whole run, and when a benchmark's prompts are not made (a vocabulary
    /// still to build, RIFT estimated from the published counts), said in a note: the rows are then the whole run's.
    pub fn share(&mut self) -> anyhow::Result<Option<std::rc::Rc<BTreeSet<Unit>>>> {
        let Some(sharding) = &self.run.shard else {
            return Ok(None);
        };
        if let Some(share) = &self.share {
            return Ok(share.clone());
        }
        let cfg = &self.run.cfg;
        let mut complete = true;
        if let Some(ifs) = &cfg.ifscale {
            complete &= self.ifscale_prompts(ifs)?.is_some();
        }
        if let Some(rift) = &cfg.rift {
            complete &= matches!(self.rift_sample(rift)?, RiftSample::Prompts(_));
        }
        let mut lists: Vec<(Bench, &[PromptRecord])> = Vec::new();
        if let Some(Some(p)) = &self.ifscale {
            lists.push((Bench::Ifscale, p));
        }
        if let Some(RiftSample::Prompts(p)) = &self.rift {
            lists.push((Bench::Rift, p));
        }
        let (share, line) =
            crate::shard::share_of(self.run, sharding.shard, complete.then_some(&lists[..]));
        self.notes.push(line);
        self.share = Some(share.clone());
        Ok(share)
    }

    /// The run's IFScale prompts, made once; None (said in a note) while the vocabulary they sample is still to be
    /// built by the run's vocabulary step.
    pub fn ifscale_prompts(
        &mut self,
        ifs: &IfscaleConfig,
    ) -> anyhow::Result<Option<&[PromptRecord]>> {
        if self.ifscale.is_none() {
            if let Some(vocab) = ifs.vocab.as_ref().filter(|v| !v.is_file()) {
                self.notes.push(format!(
                    "IFScale: not estimated: its vocabulary {} is built by the run's vocabulary step first \
                     (`[vocab]`); a dry run after it counts the IFScale requests.",
                    vocab.display()
                ));
                self.ifscale = Some(None);
            } else {
                let tmp = self.run.paths.root.join(".dry-run-ifscale-prompts.jsonl");
                harness::ifscale::write_prompts(ifs, None, &tmp)?;
                let prompts = harness::read_prompts(&tmp)?;
                let _ = std::fs::remove_file(&tmp);
                self.ifscale = Some(Some(prompts));
            }
        }
        Ok(self.ifscale.as_ref().and_then(Option::as_deref))
    }

    /// The notes printed under the table.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Adds a note printed under the table.
    pub fn note(&mut self, note: String) {
        self.notes.push(note);
    }

    /// The RIFT generation and judge rows of `model`.
    pub fn rift_rows(
        &mut self,
        rift: &RiftConfig,
        model: &ModelConfig,
    ) -> anyhow::Result<Vec<Estimate>> {
        let run = self.run;
        let judge = run.cfg.judges.rift.as_ref().map(|j| j.model.as_str());
        let share = self.share()?;
        match self.rift_sample(rift)? {
            RiftSample::Published => Ok(crate::rift_data::published_estimate(
                rift,
                judge,
                std::slice::from_ref(model),
            )),
            RiftSample::Prompts(prompts) => Ok(harness::estimate::rift(
                &crate::shard::keep(share.as_deref(), Bench::Rift, &model.name, prompts),
                std::slice::from_ref(model),
                judge,
                &run.client,
            )?),
        }
    }

    /// The rephrasing's row: one request per raw clue.
    pub fn rephrase_rows(
        &mut self,
        rift: &RiftConfig,
        prep: &RiftPrepSection,
    ) -> anyhow::Result<Vec<Estimate>> {
        let Some(rephraser) = &prep.rephrase_model else {
            return Ok(Vec::new());
        };
        if matches!(self.rift_sample(rift)?, RiftSample::Published) {
            return Ok(crate::rift_data::published_rephrase(prep)
                .into_iter()
                .collect());
        }
        let mut clues = 0;
        for input in &prep.inputs {
            clues += jeopardy_prep::load_clues(input)
                .map_err(|e| Failure::Usage(e.to_string()))?
                .len();
        }
        Ok(vec![Estimate {
            stage: "rift rephrase",
            model: rephraser.clone(),
            note: "one per raw clue, before clean-up (cached: a rerun sends none)".to_owned(),
            requests: clues,
            est_input_tokens: 0,
            worst_case_cost_usd: None,
            unbounded: 0,
        }])
    }

    /// The RIFT prompts the run will send, made once: from the prepared questions when they are this config's,
    /// else sampled from the raw clue file prepared in memory without rephrasing, else the published counts.
    fn rift_sample(&mut self, rift: &RiftConfig) -> anyhow::Result<&RiftSample> {
        if self.rift.is_none() {
            let sample = self.make_rift_sample(rift)?;
            self.rift = Some(sample);
        }
        Ok(self.rift.as_ref().unwrap_or(&RiftSample::Published))
    }

    fn make_rift_sample(&mut self, rift: &RiftConfig) -> anyhow::Result<RiftSample> {
        let run = self.run;
        let prep = run.cfg.rift_prep.as_ref();
        let raw = prep.and_then(|p| p.inputs.first());
        let mut sample_cfg = rift.clone();
        if (!run.prepared || !rift.dataset.is_file())
            && let Some(raw) = raw
        {
            if rift.dataset.is_file() {
                self.notes.push(format!(
                    "RIFT: {} was prepared from other inputs than this config's `[rift-prep]`, so it is not used; \
                     the prompts are sampled from {} (the run prepares it again).",
                    rift.dataset.display(),
                    raw.display()
                ));
            }
            sample_cfg.dataset = raw.clone();
        }
        if let Some(missing) = prep.and_then(crate::rift_data::missing_input)
            && sample_cfg.dataset != rift.dataset
        {
            self.notes.push(crate::rift_data::published_note(missing));
            self.baseline = Some(prompt_gen::rift::baseline_description(
                rift,
                jeopardy_prep::PUBLISHED_QUESTIONS,
            ));
            return Ok(RiftSample::Published);
        }
        if !sample_cfg.dataset.is_file() {
            return Err(Failure::Usage(format!(
                "{}: the RIFT dataset does not exist; list the raw clue files it is prepared from under \
                 `[rift-prep] inputs` (the README's \"Reproducing the papers\" explains the Jeopardy! file)",
                rift.dataset.display()
            ))
            .into());
        }
        let tmp = run.paths.root.join(".dry-run-rift-prompts.jsonl");
        harness::rift::write_prompts(&sample_cfg, &tmp)?;
        let prompts = harness::read_prompts(&tmp)?;
        let _ = std::fs::remove_file(&tmp);
        let questions = harness::rift::load_dataset(&sample_cfg.dataset)?.len();
        self.baseline = Some(prompt_gen::rift::baseline_description(rift, questions));
        Ok(RiftSample::Prompts(prompts))
    }
}

/// Every stage's estimate, in the order the stages run.
pub fn rows<'a>(run: &'a Run, stages: &[Stage<'a>]) -> anyhow::Result<(Vec<Estimate>, DryRun<'a>)> {
    let mut dry = DryRun::new(run);
    let mut rows = Vec::new();
    for stage in stages {
        if let Some(estimate) = &stage.estimate {
            rows.extend(estimate(&mut dry)?);
        }
    }
    Ok((rows, dry))
}

/// Prints the dry run of `stages`: the table, the RIFT baseline, the notes and the budget.
#[allow(clippy::print_stdout)]
pub fn dry_run<'a>(run: &'a Run, stages: &[Stage<'a>]) -> anyhow::Result<()> {
    let (rows, dry) = rows(run, stages)?;
    println!("{}", harness::estimate::to_markdown(&rows));
    if let Some(b) = &dry.baseline {
        println!("RIFT baseline: {b}.");
    }
    for note in &dry.notes {
        println!("{note}");
    }
    let client = &run.client;
    match client.cap_usd() {
        Some(cap) => println!(
            "Run-wide budget: {cap:.2} USD, of which {:.4} already spent by earlier runs ({}).",
            client.spent_usd(),
            run.paths.spend_ledger().display()
        ),
        None => println!(
            "Run-wide budget: none (set `[run] max-cost-usd` or --max-cost); {:.4} USD spent by earlier runs.",
            client.spent_usd()
        ),
    }
    Ok(())
}
