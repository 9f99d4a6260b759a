//! The judge check (`[judge-check]`): control items for each judge of the run (`Run::judges`: the RIFT judge, the
//! IFScale coherence judge and refusal judge), built by one loop, after the stages whose data they are made from,
//! then the gate that writes the run's `judge-check.json` (or removes a stale one when the check is off).

use std::path::{Path, PathBuf};

use harness::estimate::Estimate;
use harness::fresh::Fingerprint;
use schema::judge::JudgeRole;

use crate::Run;
use crate::config::LoadedJudge;
use crate::stage::{Ctx, Sharded, Stage};

/// The judge-check stages of `run` and their gate: one stage per judge of the run, the same for every role.
pub(crate) fn stages(run: &Run) -> Vec<Stage<'_>> {
    let mut stages = Vec::new();
    if run.cfg.judge_check.enabled {
        stages.extend(run.judges.values().filter_map(|judge| check(run, judge)));
    }
    stages.push(gate(run));
    stages
}

/// The check of one judge (None when the benchmark whose data its controls come from is not in the config): its
/// controls, sent to it as the run's own items are, after the stages whose data they are made from, then its result
/// gathered for the gate. Checks run once per run, in shard 0 of a split one.
fn check<'a>(run: &'a Run, judge: &'a LoadedJudge) -> Option<Stage<'a>> {
    let cfg = &run.cfg;
    let jc = &cfg.judge_check;
    let paths = &run.paths;
    let role = judge.role;
    let source = Source::of(run, judge)?;
    let name = role.check_name(&judge.model.name);
    let files = paths.judge_check_dir(role.bench(), &name);
    let plan = jc.plan(&judge.section);
    let stage = stage_name(role);
    let after_files = files.clone();
    let (fp_source, est_source) = (source.clone(), source.clone());
    Some(
        Stage::new(
            stage,
            move || {
                // The controls depend on the config and the prepared data alone (never on the run's replies), so
                // the check is the same in a single run, shard 0 and the merge.
                let fp = Fingerprint::new(stage)
                    .value("judge", &judge.model)?
                    .value("judge-call", &judge.call)?
                    .value("per-kind", &plan.per_kind)?
                    .value("seed", &plan.seed)?
                    .file(&judge.prompt_file)?;
                fp_source.fingerprint(fp)
            },
            vec![files.control_verdicts()],
            move |ctx| {
                let sent = harness::judge_check::check(&harness::judge_check::Check {
                    judge: judge.judge(),
                    controls: source.controls(),
                    plan,
                    files: &files,
                    client: ctx.client,
                })?;
                tracing::info!(judge = %judge.model.name, requests = sent, "Checked the {}.", role.label());
                Ok(())
            },
        )
        .for_model(&judge.model.name)
        .sharded(Sharded::First)
        .estimate(move |_| {
            let (controls, requests) = source_estimate(&est_source, plan.per_kind);
            Ok(vec![Estimate {
                stage: estimate_name(role),
                model: judge.model.name.clone(),
                note: format!("{controls}, up to `tries` each"),
                requests,
                est_input_tokens: 0,
                worst_case_cost_usd: None,
                unbounded: 0,
            }])
        })
        .after(gather(run, judge, name, after_files)),
    )
}

/// What a judge's controls are made from, in the run's terms.
#[derive(Clone)]
enum Source<'a> {
    Rift { prompts: PathBuf, dataset: &'a Path },
    Coherence { coherent: PathBuf, threshold: u8 },
    Refusal { replies: PathBuf },
}

impl<'a> Source<'a> {
    /// The source of `judge`'s controls, when its benchmark is in the config.
    fn of(run: &'a Run, judge: &LoadedJudge) -> Option<Source<'a>> {
        let controls = || judge.section.controls_file(judge.role);
        match judge.role {
            JudgeRole::RiftAnswers => run.cfg.rift.as_ref().map(|rift| Source::Rift {
                prompts: run.paths.rift_prompts(),
                dataset: &rift.dataset,
            }),
            JudgeRole::Coherence => Some(Source::Coherence {
                coherent: controls()?,
                threshold: run.cfg.ifscale.as_ref()?.coherence_threshold,
            }),
            JudgeRole::Refusal => Some(Source::Refusal {
                replies: controls()?,
            }),
        }
    }

    fn controls(&self) -> harness::judge_check::Controls<'_> {
        use harness::judge_check::Controls;
        match self {
            Source::Rift { prompts, dataset } => Controls::Rift { prompts, dataset },
            Source::Coherence {
                coherent,
                threshold,
            } => Controls::Coherence {
                coherent,
                threshold: *threshold,
            },
            Source::Refusal { replies } => Controls::Refusal { replies },
        }
    }

    fn fingerprint(&self, fp: Fingerprint) -> anyhow::Result<Fingerprint> {
        Ok(match self {
            Source::Rift { prompts, dataset } => fp.file(prompts)?.file(dataset)?,
            Source::Coherence {
                coherent,
                threshold,
            } => fp.value("threshold", threshold)?.file(coherent)?,
            Source::Refusal { replies } => fp.file(replies)?,
        })
    }
}

fn stage_name(role: JudgeRole) -> &'static str {
    match role {
        JudgeRole::RiftAnswers => "rift-judge-check",
        JudgeRole::Coherence => "ifscale-judge-check",
        JudgeRole::Refusal => "ifscale-refusal-judge-check",
    }
}

fn estimate_name(role: JudgeRole) -> &'static str {
    match role {
        JudgeRole::RiftAnswers => "rift judge check",
        JudgeRole::Coherence => "ifscale judge check",
        JudgeRole::Refusal => "ifscale refusal judge check",
    }
}

/// What a judge check's controls are and how many requests they take (each asked up to `tries` times), for its
/// row in the dry run.
fn source_estimate(source: &Source<'_>, n: usize) -> (String, usize) {
    match source {
        Source::Rift { .. } => (
            format!("at most {n} known-correct and {n} known-incorrect control items"),
            2 * n,
        ),
        Source::Coherence { coherent, .. } => {
            let coherent = std::fs::read_to_string(coherent)
                .map(|t| t.lines().filter(|l| !l.trim().is_empty()).count())
                .unwrap_or(0)
                .min(n);
            let incoherent = n.max(harness::judge_check::MIN_INCOHERENT);
            (
                format!(
                    "{coherent} hand-written coherent and at most {incoherent} incoherent control reports"
                ),
                coherent + incoherent,
            )
        }
        Source::Refusal { replies } => {
            let controls = harness::judge_check::refusal_controls(replies, n)
                .map(|c| c.len())
                .unwrap_or(0);
            (
                format!(
                    "{controls} hand-written control replies (known reports and known refusals, at most {n} of each)"
                ),
                controls,
            )
        }
    }
}

/// A judge check's last step: its result, from the control verdicts in `files` and from what the judge made of the
/// run's own items (the tally kept under `tally`), gathered for the gate.
fn gather<'a>(
    run: &'a Run,
    judge: &'a LoadedJudge,
    tally: String,
    files: schema::paths::ModelPaths,
) -> impl Fn(&mut Ctx<'a>) -> anyhow::Result<()> + 'a {
    move |ctx| {
        let check = harness::judge_check::check_of(
            judge.role,
            &judge.model.name,
            &files,
            &run.paths.root,
            &run.cfg.judge_check.gate(&judge.section),
            ctx.tally(judge.role.bench(), &tally),
        )?;
        ctx.checks.extend(check);
        Ok(())
    }
}

/// The gate: the run's `judge-check.json` from the checks gathered so far (the check off: a stale file removed).
/// It runs every time and is not counted among the stages.
fn gate(run: &Run) -> Stage<'_> {
    let paths = &run.paths;
    let enabled = run.cfg.judge_check.enabled;
    Stage {
        stamped: false,
        ..Stage::new(
            "judge-check-gate",
            || Ok(Fingerprint::new("judge-check-gate")),
            Vec::new(),
            move |ctx| {
                if !enabled {
                    match std::fs::remove_file(paths.judge_check()) {
                        Ok(()) => {}
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                        Err(e) => return Err(e.into()),
                    }
                    return Ok(());
                }
                let checks = std::mem::take(&mut ctx.checks);
                ctx.judge_check = Some(harness::judge_check::assemble(
                    checks,
                    &paths.judge_check(),
                )?);
                Ok(())
            },
        )
    }
}
