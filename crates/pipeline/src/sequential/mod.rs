//! Sequential runs (`--until`, `[sequential]`): the grid's units are added in batches, in its fixed seeded order,
//! and the run stops adding once the question is answered, the grid is done, or a batch ends incomplete (the cost
//! limit, failures); Ctrl-C ends it like any run.
//!
//! A batch is a prefix of the grid ([`grid::Counts`]): the prompts stages keep only its lines, and the run's own
//! stages (`crate::stages::data`, through `crate::run::execute` and its one `Executor`) generate, judge, score and
//! join them; answers already in the cache are not sent again. After each batch the rule reads the per-model scores
//! with `analysis::sequential`'s anytime-valid confidence sequences, so looking after every batch keeps their
//! level. When it stops, the whole stage list runs once (the judge checks, tables, figures and report over the
//! prefix), and `summary.md` says where and why it stopped and what the stop saved ([`report`]).
//! `<run>/sequential.json` keeps the prefix: a later run with a tighter rule starts from it and sends only what is
//! new.

pub mod grid;
pub mod report;
pub mod rule;

use std::sync::Mutex;

use analysis::sequential::{Decision, MeanCs, PairedCs, decide};
use schema::paths::Bench;
use serde::{Deserialize, Serialize};

pub use grid::Counts;
pub use rule::{Flags, Rule, SequentialSection, Until};

use crate::Run;
use crate::stage::Ctx;

/// What a sequential run shares with its stages: the prefix the prompts stages keep, and what the summary says.
#[derive(Debug, Default)]
pub struct Shared {
    prefix: Mutex<Option<Counts>>,
    markdown: Mutex<Option<String>>,
}

impl Shared {
    /// The prefix of the grid the current batch holds (none: the whole grid).
    pub fn prefix(&self) -> Option<Counts> {
        self.prefix.lock().map(|p| p.clone()).unwrap_or_default()
    }

    fn set_prefix(&self, p: Counts) {
        if let Ok(mut slot) = self.prefix.lock() {
            *slot = Some(p);
        }
    }

    /// The summary's "Sequential run" section, once the run has stopped.
    pub fn markdown(&self) -> Option<String> {
        self.markdown.lock().map(|m| m.clone()).unwrap_or_default()
    }

    fn set_markdown(&self, m: String) {
        if let Ok(mut slot) = self.markdown.lock() {
            *slot = Some(m);
        }
    }
}

/// Why the run stopped adding batches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reason {
    /// The rule holds.
    Answered,
    /// Every unit of the grid is in.
    GridDone,
    /// A batch ended without every answer (the cost limit, failures).
    Incomplete,
}

/// One interval of the rule's last look.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Look {
    /// `IFScale` or `RIFT`.
    pub bench: String,
    /// A stratum (`ci-width`) or `<candidate> − <baseline>` (`decided`).
    pub what: String,
    /// The model (`ci-width`: the one with the widest interval).
    pub model: String,
    pub n: usize,
    pub lo: f64,
    pub hi: f64,
    /// `ci-width`: below the target; `decided`: the decision.
    pub verdict: String,
    pub done: bool,
}

/// What `<run>/sequential.json` keeps.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct State {
    pub rule: String,
    pub alpha: f64,
    pub batches: usize,
    pub reason: Reason,
    pub grid: Counts,
    pub prefix: Counts,
    pub looks: Vec<Look>,
    /// Expected cost of the whole grid and of the prefix (USD; none without prices).
    pub full_usd: Option<f64>,
    pub prefix_usd: Option<f64>,
    /// What the summary and the report say, sentence by sentence, and the last look as a table.
    pub summary: Vec<String>,
    pub table: schema::Table,
}

/// The benchmarks the run has.
fn benches(run: &Run) -> Vec<Bench> {
    let mut b = Vec::new();
    if run.cfg.ifscale.is_some() {
        b.push(Bench::Ifscale);
    }
    if run.cfg.rift.is_some() {
        b.push(Bench::Rift);
    }
    b
}

fn batch_of(until: &Until, bench: Bench) -> usize {
    match bench {
        Bench::Ifscale => until.ifscale_batch,
        Bench::Rift => until.rift_batch,
    }
}

pub(crate) fn seeds(run: &Run) -> Vec<u32> {
    run.cfg
        .ifscale
        .as_ref()
        .map(|i| i.seeds.clone())
        .unwrap_or_default()
}

/// The first batch: one batch per stratum, or the prefix a previous sequential run of this folder reached.
fn start(run: &Run, until: &Until, grid: &Counts) -> Counts {
    let saved: Option<State> = std::fs::read(sequential_json(run))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    let mut prefix = Counts::default();
    for bench in benches(run) {
        *prefix.of_mut(bench) = grid
            .of(bench)
            .iter()
            .map(|(s, n)| {
                let before = saved.as_ref().map_or(0, |st| st.prefix.get(bench, s));
                (s.clone(), before.max(batch_of(until, bench)).min(*n))
            })
            .collect();
    }
    prefix
}

/// `<run>/sequential.json`.
pub fn sequential_json(run: &Run) -> std::path::PathBuf {
    run.paths.root.join(::report::sequential::FILE)
}

/// What the rule makes of the prefix's scores: the looks, whether it holds, and the next prefix.
pub(crate) struct Evaluation {
    pub(crate) looks: Vec<Look>,
    pub(crate) answered: bool,
    pub(crate) next: Counts,
}

/// Reads the prefix's scores and applies the rule.
pub(crate) fn evaluate(
    run: &Run,
    until: &Until,
    grid: &Counts,
    prefix: &Counts,
) -> anyhow::Result<Evaluation> {
    let models = &run.cfg.run.models;
    let seeds = seeds(run);
    let mut looks = Vec::new();
    let mut next = Counts::default();
    let benches = benches(run);
    for &bench in &benches {
        let items = grid::observations(&run.paths, bench, models, &seeds, grid)?;
        let advance = |s: &str, open: bool| {
            let have = prefix.get(bench, s);
            if open {
                (have + batch_of(until, bench)).min(grid.get(bench, s))
            } else {
                have
            }
        };
        match &until.rule {
            Rule::CiWidth { width } => {
                for (s, _) in grid.of(bench) {
                    let mut widest: Option<Look> = None;
                    for (m, model) in models.iter().enumerate() {
                        let mut cs = MeanCs::new(until.alpha);
                        for it in items.iter().filter(|it| &it.stratum == s) {
                            if let Some(v) = it.values[m] {
                                cs.push(v);
                            }
                        }
                        let i = cs.interval();
                        let look = Look {
                            bench: report::bench_name(bench).to_owned(),
                            what: s.clone(),
                            model: model.clone(),
                            n: cs.len(),
                            lo: i.lo,
                            hi: i.hi,
                            done: !cs.is_empty() && i.width() < *width,
                            verdict: String::new(),
                        };
                        if widest
                            .as_ref()
                            .is_none_or(|w| look.hi - look.lo > w.hi - w.lo)
                        {
                            widest = Some(look);
                        }
                    }
                    let Some(mut look) = widest else { continue };
                    look.verdict = if look.done {
                        format!("below {}", rule::fmt_pp(*width))
                    } else {
                        format!("not below {}", rule::fmt_pp(*width))
                    };
                    next.of_mut(bench).push((s.clone(), advance(s, !look.done)));
                    looks.push(look);
                }
            }
            Rule::Decided { baseline, margin } => {
                let b = models.iter().position(|m| m == baseline).unwrap_or(0);
                let comparisons = (models.len().saturating_sub(1) * benches.len()).max(1);
                let alpha = until.alpha / comparisons as f64;
                let mut open = false;
                for (c, cand) in models.iter().enumerate().filter(|(c, _)| *c != b) {
                    let mut cs = PairedCs::new(alpha);
                    for it in &items {
                        if let (Some(x), Some(y)) = (it.values[c], it.values[b]) {
                            cs.push(x - y);
                        }
                    }
                    let i = cs.interval();
                    let d = if cs.is_empty() {
                        Decision::Undecided
                    } else {
                        decide(i, *margin)
                    };
                    open |= !d.is_decided();
                    looks.push(Look {
                        bench: report::bench_name(bench).to_owned(),
                        what: format!("{cand} − {baseline}"),
                        model: cand.clone(),
                        n: cs.len(),
                        lo: i.lo,
                        hi: i.hi,
                        verdict: d.as_str().to_owned(),
                        done: d.is_decided(),
                    });
                }
                *next.of_mut(bench) = grid
                    .of(bench)
                    .iter()
                    .map(|(s, _)| (s.clone(), advance(s, open)))
                    .collect();
            }
        }
    }
    Ok(Evaluation {
        answered: looks.iter().all(|l| l.done),
        looks,
        next,
    })
}

/// The batches of a sequential run, each executed as the run's data stages, until the rule stops it; returns the
/// state it stopped in (also written to `<run>/sequential.json`).
pub fn batches(run: &Run, until: &Until) -> anyhow::Result<(State, Vec<String>)> {
    let mut grid = grid::full(&run.cfg);
    let mut prefix = start(run, until, &grid);
    let mut ran: Vec<String> = Vec::new();
    let mut batches = 0;
    let (reason, looks) = loop {
        batches += 1;
        tracing::info!(batch = batches, rule = %until.text, "Sequential batch.");
        run.sequential.set_prefix(prefix.clone());
        let stages = crate::stages::data(run);
        let ctx = crate::run::execute(run, &stages)?;
        for s in ctx.out.stages_run {
            if !ran.contains(&s) {
                ran.push(s);
            }
        }
        // RIFT's baseline grid is known once its questions are prepared (the first batch).
        grid = grid::full(&run.cfg);
        let eval = evaluate(run, until, &grid, &prefix)?;
        if !ctx.out.incomplete.is_empty() {
            break (Reason::Incomplete, eval.looks);
        }
        if eval.answered {
            break (Reason::Answered, eval.looks);
        }
        if eval.next == prefix {
            break (Reason::GridDone, eval.looks);
        }
        prefix = eval.next;
    };
    let (full_usd, prefix_usd) = report::expected_costs(run, &grid, &prefix)?;
    let state = State {
        rule: until.text.clone(),
        alpha: until.alpha,
        batches,
        reason,
        grid,
        prefix,
        looks,
        full_usd,
        prefix_usd,
        summary: Vec::new(),
        table: schema::Table::default(),
    };
    let state = report::described(state);
    schema::write_atomic(&sequential_json(run), &serde_json::to_vec_pretty(&state)?)?;
    run.sequential.set_markdown(report::markdown(&state));
    Ok((state, ran))
}

/// A sequential run: its batches, then the whole stage list once over the prefix it stopped at (the data stages
/// are fresh by then); the outcome lists every stage any batch ran.
pub fn execute<'a>(run: &'a Run, until: &Until) -> anyhow::Result<Ctx<'a>> {
    let (_, ran) = batches(run, until)?;
    let stages = crate::stages::list(run);
    let mut ctx = crate::run::execute(run, &stages)?;
    for s in ran {
        if !ctx.out.stages_run.contains(&s) {
            ctx.out.stages_run.push(s);
        }
    }
    let run_now = ctx.out.stages_run.clone();
    ctx.out.stages_skipped.retain(|s| !run_now.contains(s));
    Ok(ctx)
}
