//! A stage as data, and the one loop that runs a list of them.
//!
//! A [`Stage`] says what it reads (`inputs`, a `harness::fresh::Fingerprint` made when the stage is reached, so it
//! can hash what an earlier stage wrote), what it writes (`outputs`), how many requests it plans (`requests`), how
//! to run it, and optionally how the dry run estimates it and how the pilot samples it. The run's list
//! (`crate::stages::list`) is the only place a stage is declared: [`Executor`] runs it, `crate::plan` counts it,
//! `crate::dry_run` and `crate::pilot` read its `estimate` and `pilot`, and the progress line and the summary name
//! it by its [`Stage::key`].
//!
//! The executor skips a stage whose fingerprint and outputs are unchanged, and stamps a stage only when the client
//! counts no new unanswered prompt after it: otherwise the stage is listed as incomplete (exit 3 at the end) and a
//! rerun sends what is missing. A model the client had to stop (bad key, unknown model) stops that model's later
//! stages; the other models go on. After Ctrl-C no further stage runs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use harness::estimate::Estimate;
use harness::estimate::expected::Row;
use harness::fresh::{Fingerprint, Stamps};
use harness::helper::JudgeTally;
use inference_client::Client;
use schema::paths::Bench;

use crate::outcome::Failure;

/// A fallible step of a stage, borrowing the run it belongs to.
pub type Step<'a, C, T> = Box<dyn Fn(&mut C) -> anyhow::Result<T> + 'a>;

/// A fallible check of a stage's freshness stamps.
pub type StampCheck<'a> = Box<dyn Fn(&Stamps) -> anyhow::Result<()> + 'a>;

/// Which shards of a run split with `--shard` run a stage; the merge and an unsplit run run every stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sharded {
    /// Every shard, identically, before the others: what the per-model stages read (the vocabulary, the Jeopardy!
    /// preparation, the prompt files).
    Every,
    /// Every shard, each sending only its share of the units (generation, retries, judges).
    Share,
    /// Shard 0 alone, so the run sends it once whatever the number of shards (the judge checks: their control
    /// items depend on the config alone, never on a shard's answers).
    First,
    /// No shard: the merged run makes it from every shard's answers (joins, analysis, explorer, report).
    Whole,
}

/// One stage of a run.
pub struct Stage<'a> {
    /// What the stage does (`ifscale-generate`, `rift-judge`, `report`, ...).
    pub name: &'static str,
    /// The model whose requests it sends, for stages that run once per model.
    pub model: Option<String>,
    /// Which shards of a split run run it (`crate::shard::filter`).
    pub sharded: Sharded,
    /// Whether a stamp of its inputs keeps it from running again. An unstamped step (the vocabulary, which is built
    /// only when its file is missing; the judge-check gate) runs every time and is not counted among the stages.
    pub stamped: bool,
    /// Its inputs' fingerprint, made when the stage is reached.
    pub inputs: Box<dyn Fn() -> anyhow::Result<Fingerprint> + 'a>,
    /// What it writes: the stage is fresh only while these exist.
    pub outputs: Vec<PathBuf>,
    /// The requests it is planned to send (first attempts and judge calls known before running), for the progress
    /// line.
    pub requests: u64,
    /// Runs before the freshness check (e.g. clearing a stamp that no longer holds).
    pub before: Option<StampCheck<'a>>,
    /// The work.
    pub run: Step<'a, Ctx<'a>, ()>,
    /// Runs after the stage, whether it ran or was fresh (e.g. adding a judge's tally to its check).
    pub after: Option<Step<'a, Ctx<'a>, ()>>,
    /// The dry run's rows for this stage (requests and worst-case cost; nothing is sent).
    pub estimate: Option<Step<'a, crate::dry_run::DryRun<'a>, Vec<Estimate>>>,
    /// The pilot's rows for this stage (a few seeded units sent, scaled to the run).
    pub pilot: Option<Step<'a, crate::pilot::Pilot<'a>, Vec<Row>>>,
}

impl<'a> Stage<'a> {
    /// A stamped stage with no model, no planned requests and no estimate; set the rest with struct update syntax
    /// or the builder methods.
    pub fn new(
        name: &'static str,
        inputs: impl Fn() -> anyhow::Result<Fingerprint> + 'a,
        outputs: Vec<PathBuf>,
        run: impl Fn(&mut Ctx<'a>) -> anyhow::Result<()> + 'a,
    ) -> Stage<'a> {
        Stage {
            name,
            model: None,
            sharded: Sharded::Whole,
            stamped: true,
            inputs: Box::new(inputs),
            outputs,
            requests: 0,
            before: None,
            run: Box::new(run),
            after: None,
            estimate: None,
            pilot: None,
        }
    }

    /// The stage runs once per model: this one is `model`'s. In a split run each shard sends its share of it.
    pub fn for_model(mut self, model: &str) -> Stage<'a> {
        self.model = Some(model.to_owned());
        self.sharded = Sharded::Share;
        self
    }

    /// In a split run, which shards run it (by default: a per-model stage its share in every shard, any other
    /// stage only the whole run or the merge).
    pub fn sharded(mut self, sharded: Sharded) -> Stage<'a> {
        self.sharded = sharded;
        self
    }

    /// Its planned requests.
    pub fn requests(mut self, n: u64) -> Stage<'a> {
        self.requests = n;
        self
    }

    /// Its dry-run rows.
    pub fn estimate(
        mut self,
        f: impl Fn(&mut crate::dry_run::DryRun<'a>) -> anyhow::Result<Vec<Estimate>> + 'a,
    ) -> Stage<'a> {
        self.estimate = Some(Box::new(f));
        self
    }

    /// Its pilot rows.
    pub fn pilot(
        mut self,
        f: impl Fn(&mut crate::pilot::Pilot<'a>) -> anyhow::Result<Vec<Row>> + 'a,
    ) -> Stage<'a> {
        self.pilot = Some(Box::new(f));
        self
    }

    /// What runs after it.
    pub fn after(mut self, f: impl Fn(&mut Ctx<'a>) -> anyhow::Result<()> + 'a) -> Stage<'a> {
        self.after = Some(Box::new(f));
        self
    }

    /// The stage's name in stamps, logs, the progress line and the summary: `<name>:<model>` or `<name>`.
    pub fn key(&self) -> String {
        match &self.model {
            Some(m) => format!("{}:{m}", self.name),
            None => self.name.to_owned(),
        }
    }
}

/// What the run did, for the summary and the exit code.
#[derive(Debug, Default)]
pub struct Outcome {
    pub stages_run: Vec<String>,
    pub stages_skipped: Vec<String>,
    /// Stages that ran but left prompts without an answer, with how many (0: not counted, e.g. a stopped model).
    pub incomplete: Vec<(String, usize)>,
    /// The progress line's titles, in the order the stages were reached (`stage k of n: <key>`).
    pub progress: Vec<String>,
}

/// The state stages share while a run executes.
pub struct Ctx<'a> {
    /// The run's one client: every model call of every stage goes through it.
    pub client: &'a Client,
    pub(crate) stamps: &'a Stamps,
    /// `[judge-check] enabled`: unreadable judge replies go to the judge check instead of making a stage
    /// incomplete.
    pub(crate) judge_checked: bool,
    /// What each judge (by benchmark) made of the run's own items, for its check.
    pub(crate) tallies: BTreeMap<(Bench, String), JudgeTally>,
    /// The judges' checks, gathered by the judge-check stages for the gate.
    pub(crate) checks: Vec<schema::judge_check::JudgeCheck>,
    /// The run's judge-check file, once the gate has assembled it.
    pub(crate) judge_check: Option<schema::judge_check::JudgeCheckFile>,
    pub out: Outcome,
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(client: &'a Client, stamps: &'a Stamps, judge_checked: bool) -> Ctx<'a> {
        Ctx {
            client,
            stamps,
            judge_checked,
            tallies: BTreeMap::new(),
            checks: Vec::new(),
            judge_check: None,
            out: Outcome::default(),
        }
    }

    /// What `judge` made of the run's own items in `bench` (nothing when it judged none).
    pub(crate) fn tally(&self, bench: Bench, judge: &str) -> JudgeTally {
        self.tallies
            .get(&(bench, judge.to_owned()))
            .copied()
            .unwrap_or_default()
    }

    /// A configured judge that left more than `UNJUDGED_ALERT_SHARE` of a stage's items unjudged makes the stage
    /// incomplete: said in red, its stamp removed (a rerun asks the judge again), listed in the summary (exit 3).
    /// With the judge check on, only failed requests count here: replies without a readable verdict read the same
    /// on a rerun, so they are the judge's own failure and go to its check (exit 4 when too many).
    pub(crate) fn check_judge(
        &mut self,
        key: &str,
        bench: Bench,
        judge: &str,
        tally: JudgeTally,
    ) -> anyhow::Result<()> {
        self.tallies
            .entry((bench, judge.to_owned()))
            .or_default()
            .add(tally);
        let unjudged = if self.judge_checked {
            tally.failed
        } else {
            tally.unjudged()
        };
        let share = harness::helper::failure_share(tally.items() - unjudged, unjudged);
        if share > harness::helper::UNJUDGED_ALERT_SHARE {
            tracing::error!(
                stage = key,
                judged = tally.judged,
                unjudged,
                share_pct = 100.0 * share,
                "The configured judge left more than 2 % of this stage's items unjudged."
            );
            self.stamps.clear(key)?;
            self.out.incomplete.push((
                format!("{key} (unjudged by the configured judge)"),
                unjudged,
            ));
        }
        Ok(())
    }
}

/// Runs stages in order, skipping fresh ones.
pub(crate) struct Executor<'a, 'm> {
    pub(crate) ctx: Ctx<'a>,
    pub(crate) force: bool,
    /// Models whose requests were stopped: their later stages are not run.
    stopped: BTreeSet<String>,
    /// Counted stages reached so far, and how many the run has, for the progress line.
    started: usize,
    planned: usize,
    /// Per-stage measurements (`--stage-metrics`).
    metrics: Option<&'m crate::metrics::Metrics>,
}

impl<'a, 'm> Executor<'a, 'm> {
    pub(crate) fn new(
        ctx: Ctx<'a>,
        force: bool,
        planned: usize,
        metrics: Option<&'m crate::metrics::Metrics>,
    ) -> Executor<'a, 'm> {
        Executor {
            ctx,
            force,
            stopped: BTreeSet::new(),
            started: 0,
            planned,
            metrics,
        }
    }

    /// Runs every stage of `stages` in order.
    pub(crate) fn run_all(&mut self, stages: &[Stage<'a>]) -> anyhow::Result<()> {
        for stage in stages {
            self.run(stage)?;
            if let Some(after) = &stage.after {
                after(&mut self.ctx)?;
            }
        }
        Ok(())
    }

    /// Runs a stage unless it is fresh, measuring it when asked to; true when it ran.
    fn run(&mut self, stage: &Stage<'a>) -> anyhow::Result<bool> {
        let key = stage.key();
        if stage.stamped {
            self.started += 1;
            let title = format!("stage {} of {}: {key}", self.started, self.planned);
            self.ctx.client.start_stage(self.started, &key);
            self.ctx.out.progress.push(title);
        }
        let Some(m) = self.metrics.filter(|_| stage.stamped) else {
            return self.run_inner(stage, &key);
        };
        let running = m.start();
        // Only this stage's client calls count.
        let _ = self.ctx.client.take_in_flight();
        let ran = self.run_inner(stage, &key)?;
        m.finish(&key, ran, running, self.ctx.client.take_in_flight())?;
        Ok(ran)
    }

    fn run_inner(&mut self, stage: &Stage<'a>, key: &str) -> anyhow::Result<bool> {
        let client = self.ctx.client;
        // After Ctrl-C no further stage runs; the stages before are kept (a rerun continues).
        if client.stop_handle().is_stopping() {
            return Err(Failure::Incomplete(format!(
                "stopped by a signal before stage {key}: the answers in flight were written; rerun to continue"
            ))
            .into());
        }
        if let Some(m) = stage.model.as_ref().filter(|m| self.stopped.contains(*m)) {
            tracing::warn!(stage = key, model = %m, "Not run: this model's requests were stopped.");
            return Ok(false);
        }
        if let Some(before) = &stage.before {
            before(self.ctx.stamps)?;
        }
        let fp = if stage.stamped {
            let fp = (stage.inputs)()?;
            if !self.force && self.ctx.stamps.is_fresh(key, &fp, &stage.outputs) {
                tracing::info!(stage = key, "Up to date; skipped.");
                self.ctx.out.stages_skipped.push(key.to_owned());
                return Ok(false);
            }
            tracing::info!(stage = key, "Running.");
            Some(fp)
        } else {
            None
        };
        let before = client.unfinished();
        if let Err(e) = (stage.run)(&mut self.ctx) {
            // A stage cut short by Ctrl-C is not done (like a cost-capped one), whatever it says.
            if client.stop_handle().is_stopping() {
                tracing::warn!(stage = key, "Stopped by a signal: {e:#}");
                return Err(Failure::Incomplete(format!(
                    "stopped by a signal during stage {key}: the answers in flight were written; rerun to continue"
                ))
                .into());
            }
            // A step that left prompts unanswered (the cost limit, failures after their retries) cannot be used by
            // the stages after it (an unstamped step writes its output whole or not at all): the run ends
            // incomplete here, and a rerun sends what is missing.
            let missing = client.unfinished() - before;
            if missing > 0 && !stage.stamped {
                return Err(Failure::Incomplete(format!(
                    "stage {key} stopped with {missing} prompts without an answer ({e:#}); rerun to continue"
                ))
                .into());
            }
            // A model that cannot be used (bad key, unknown model, the same 400 again and again, no server that
            // ever answered) stops its own stage; the other models go on and the run ends incomplete. Out of
            // credits stops everything.
            match stopped_model(&e) {
                Some(stop) if !stop.is_out_of_credits() => {
                    tracing::error!(stage = key, "{stop}");
                    self.stopped.extend(stage.model.clone());
                    self.ctx
                        .out
                        .incomplete
                        .push((format!("{key} (stopped: {stop})"), 0));
                    self.ctx.out.stages_run.push(key.to_owned());
                    return Ok(true);
                }
                _ => return Err(e.context(format!("stage {key}"))),
            }
        }
        let Some(fp) = fp else {
            return Ok(true);
        };
        let missing = client.unfinished() - before;
        if missing > 0 {
            tracing::warn!(
                stage = key,
                missing,
                "Stage finished without an answer to every prompt; not marked done."
            );
            self.ctx.out.incomplete.push((key.to_owned(), missing));
            self.ctx.out.stages_run.push(key.to_owned());
            return Ok(true);
        }
        self.ctx.stamps.mark(key, &fp, &stage.outputs)?;
        self.ctx.out.stages_run.push(key.to_owned());
        Ok(true)
    }
}

/// The client's "stop this model" error in an error's chain, if that is what ended a stage.
fn stopped_model(e: &anyhow::Error) -> Option<&inference_client::Error> {
    e.chain().find_map(|c| {
        let client = c
            .downcast_ref::<inference_client::Error>()
            .or_else(|| match c.downcast_ref::<harness::Error>() {
                Some(harness::Error::Client(inner)) => Some(inner),
                _ => None,
            })?;
        client.stops_model().then_some(client)
    })
}
