//! The judge check (`[judge-check]`): control items for each configured judge (the RIFT judge, the IFScale
//! coherence judge and refusal judge), after the stages whose data they are made from, then the gate that writes the
//! run's `judge-check.json` (or removes a stale one when the check is off).

use harness::estimate::Estimate;
use harness::fresh::Fingerprint;
use schema::judge::JudgeRole;
use schema::paths::Bench;

use crate::Run;
use crate::config::{ifscale_judge_call, rift_judge_call, rift_judge_template};
use crate::stage::{Ctx, Sharded, Stage};

/// The judge-check stages of `run` and their gate.
pub(crate) fn stages(run: &Run) -> Vec<Stage<'_>> {
    let cfg = &run.cfg;
    let jc = &cfg.judge_check;
    let paths = &run.paths;
    let mut stages = Vec::new();
    if !jc.enabled {
        stages.push(gate(run));
        return stages;
    }
    if let (Some(rift), Some(judge)) = (&cfg.rift, run.rift_judge.as_ref()) {
        let files = paths.judge_check_dir(Bench::Rift, &judge.name);
        let call = rift_judge_call(cfg.rift_prep.as_ref());
        let template = rift_judge_template(cfg.rift_prep.as_ref());
        let (fp_call, fp_template) = (call.clone(), template.clone());
        let after_files = files.clone();
        stages.push(
            Stage::new(
                "rift-judge-check",
                move || {
                    Ok(Fingerprint::new("rift-judge-check")
                        .value("judge", judge)?
                        .value("judge-call", &fp_call)?
                        .value("per-kind", &jc.per_kind)?
                        .value("seed", &jc.seed)?
                        .file(&paths.rift_prompts())?
                        .file(&rift.dataset)?
                        .file(&fp_template)?)
                },
                vec![files.control_verdicts()],
                move |ctx| {
                    let template = harness::read_text(&template)?;
                    let sent = harness::judge_check::rift(&harness::judge_check::RiftCheck {
                        judge,
                        prompts: &paths.rift_prompts(),
                        dataset: &rift.dataset,
                        template: &template,
                        call: &call,
                        plan: jc.plan(),
                        files: &files,
                        client: ctx.client,
                    })?;
                    tracing::info!(judge = %judge.name, requests = sent, "Checked the RIFT judge.");
                    Ok(())
                },
            )
            .for_model(&judge.name)
            .sharded(Sharded::First)
            .estimate(move |_| {
                let n = jc.per_kind;
                Ok(controls_estimate(
                    "rift judge check",
                    &judge.name,
                    format!("at most {n} known-correct and {n} known-incorrect control items"),
                    2 * n,
                ))
            })
            .after(gather(
                run,
                JudgeRole::RiftAnswers,
                &judge.name,
                judge.name.clone(),
                after_files,
            )),
        );
    }
    if let (Some(ifs), Some(judge)) = (&cfg.ifscale, run.ifscale_judge.as_ref()) {
        let files = paths.judge_check_dir(Bench::Ifscale, &judge.name);
        let call = ifscale_judge_call(ifs);
        let fp_call = call.clone();
        let after_files = files.clone();
        stages.push(
            Stage::new(
                "ifscale-judge-check",
                move || {
                    // The controls depend on the config alone (never on the run's replies), so the check is the
                    // same in a single run, shard 0 and the merge.
                    Ok(Fingerprint::new("ifscale-judge-check")
                        .value("judge", judge)?
                        .value("judge-call", &fp_call)?
                        .value("per-kind", &jc.per_kind)?
                        .value("seed", &jc.seed)?
                        .value("threshold", &ifs.coherence_threshold)?
                        .file(&ifs.coherence_prompt)?
                        .file(&jc.coherent_reports)?)
                },
                vec![files.control_verdicts()],
                move |ctx| {
                    let sent =
                        harness::judge_check::coherence(&harness::judge_check::CoherenceCheck {
                            judge,
                            coherent: &jc.coherent_reports,
                            rubric: &run.rubric,
                            call: &call,
                            threshold: ifs.coherence_threshold,
                            plan: jc.plan(),
                            files: &files,
                            client: ctx.client,
                        })?;
                    tracing::info!(judge = %judge.name, requests = sent, "Checked the coherence judge.");
                    Ok(())
                },
            )
            .for_model(&judge.name)
            .sharded(Sharded::First)
            .estimate(move |_| {
                let n = jc.per_kind;
                let coherent = std::fs::read_to_string(&jc.coherent_reports)
                    .map(|t| t.lines().filter(|l| !l.trim().is_empty()).count())
                    .unwrap_or(0)
                    .min(n);
                let incoherent = n.max(harness::judge_check::MIN_INCOHERENT);
                Ok(controls_estimate(
                    "ifscale judge check",
                    &judge.name,
                    format!(
                        "{coherent} hand-written coherent and at most {incoherent} incoherent control reports"
                    ),
                    coherent + incoherent,
                ))
            })
            .after(gather(
                run,
                JudgeRole::Coherence,
                &judge.name,
                judge.name.clone(),
                after_files,
            )),
        );
    }
    if let (Some(ifs), Some(judge)) = (&cfg.ifscale, run.ifscale_refusal_judge.as_ref()) {
        stages.push(refusal(run, ifs, judge));
    }
    stages.push(gate(run));
    stages
}

/// The IFScale refusal judge's check: its hand-written control replies (`[judge-check] refusal-controls`), known
/// reports and known refusals the refusal detector cannot settle, through the run's refusal rubric.
fn refusal<'a>(
    run: &'a Run,
    ifs: &'a prompt_gen::ifscale::IfscaleConfig,
    judge: &'a inference_client::ModelConfig,
) -> Stage<'a> {
    let jc = &run.cfg.judge_check;
    let paths = &run.paths;
    let name = JudgeRole::Refusal.check_name(&judge.name);
    let files = paths.judge_check_dir(Bench::Ifscale, &name);
    let call = ifscale_judge_call(ifs);
    let fp_call = call.clone();
    let after_files = files.clone();
    Stage::new(
        "ifscale-refusal-judge-check",
        move || {
            Ok(Fingerprint::new("ifscale-refusal-judge-check")
                .value("judge", judge)?
                .value("judge-call", &fp_call)?
                .value("per-kind", &jc.per_kind)?
                .file(&crate::config::refusal_prompt(ifs))?
                .file(&jc.refusal_controls)?)
        },
        vec![files.control_verdicts()],
        move |ctx| {
            let sent = harness::judge_check::refusal(&harness::judge_check::RefusalCheck {
                judge,
                controls: &jc.refusal_controls,
                rubric: &run.refusal_rubric,
                call: &call,
                per_kind: jc.per_kind,
                files: &files,
                client: ctx.client,
            })?;
            tracing::info!(judge = %judge.name, requests = sent, "Checked the refusal judge.");
            Ok(())
        },
    )
    .for_model(&judge.name)
    .sharded(Sharded::First)
    .estimate(move |_| {
        let n = jc.per_kind;
        let controls = harness::judge_check::refusal_controls(&jc.refusal_controls, n)
            .map(|c| c.len())
            .unwrap_or(0);
        Ok(controls_estimate(
            "ifscale refusal judge check",
            &judge.name,
            format!(
                "{controls} hand-written control replies (known reports and known refusals, at most {n} of each)"
            ),
            controls,
        ))
    })
    .after(gather(
        run,
        JudgeRole::Refusal,
        &judge.name,
        name,
        after_files,
    ))
}

/// A judge check's row in the dry run: `requests` control items, each asked up to `judge-tries` times.
fn controls_estimate(
    stage: &'static str,
    judge: &str,
    controls: String,
    requests: usize,
) -> Vec<Estimate> {
    vec![Estimate {
        stage,
        model: judge.to_owned(),
        note: format!("{controls}, up to `judge-tries` each"),
        requests,
        est_input_tokens: 0,
        worst_case_cost_usd: None,
        unbounded: 0,
    }]
}

/// A judge check's last step: its result, from the control verdicts in `files` and from what the judge made of the
/// run's own items (the tally kept under `tally`), gathered for the gate.
fn gather<'a>(
    run: &'a Run,
    role: JudgeRole,
    judge: &'a str,
    tally: String,
    files: schema::paths::ModelPaths,
) -> impl Fn(&mut Ctx<'a>) -> anyhow::Result<()> + 'a {
    move |ctx| {
        let check = harness::judge_check::check_of(
            role,
            judge,
            &files,
            &run.paths.root,
            &run.cfg.judge_check.gate(),
            ctx.tally(role.bench(), &tally),
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
