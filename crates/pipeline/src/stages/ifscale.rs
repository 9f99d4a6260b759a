//! IFScale's stages: the prompts, one generation per model (attempts, the paper's retry rules, the optional refusal
//! judge, the coherence judge, scores and labels), and the join of the models' files.

use std::path::{Path, PathBuf};

use harness::estimate::expected::{Row, Stratum, per_request, per_unit};
use harness::fresh::{Fingerprint, concat_jsonl};
use inference_client::{Client, ModelConfig};
use prompt_gen::ifscale::IfscaleConfig;
use schema::judge::JudgeRole;
use schema::paths::{Bench, ModelPaths};

use crate::Run;
use crate::config::LoadedJudge;
use crate::stage::{Sharded, Stage};

/// The IFScale stages of `run`.
pub(crate) fn stages<'a>(run: &'a Run, ifs: &'a IfscaleConfig) -> Vec<Stage<'a>> {
    let paths = &run.paths;
    let prompts = paths.ifscale_prompts();
    let mut stages = vec![
        Stage::new(
            "ifscale-prompts",
            move || {
                let mut fp = Fingerprint::new("ifscale-prompts")
                    .value("ifscale", ifs)?
                    .file(&ifs.template)?;
                if let Some(v) = &ifs.vocab {
                    fp = fp.file(v)?;
                }
                crate::sequential::grid::fingerprint(fp, run, Bench::Ifscale)
            },
            vec![prompts.clone()],
            move |_| {
                let mut n = harness::ifscale::write_prompts(ifs, None, &paths.ifscale_prompts())?;
                if let Some(prefix) = run.sequential.prefix() {
                    n = crate::sequential::grid::keep_prefix(
                        &paths.ifscale_prompts(),
                        Bench::Ifscale,
                        &prefix,
                        &ifs.seeds,
                    )?;
                }
                tracing::info!(prompts = n, "Wrote the IFScale prompts.");
                Ok(())
            },
        )
        .sharded(Sharded::Every),
    ];
    let judge = run.judge(JudgeRole::Coherence);
    let refusal = run.judge(JudgeRole::Refusal);
    let samples = (ifs.grid.len() * ifs.seeds.len()) as u64;
    for model in &run.models {
        let files = paths.model(Bench::Ifscale, &model.name);
        let outputs = vec![
            files.responses(),
            files.attempts(),
            files.scores(),
            files.labels(),
            crate::fit::file(&files.dir),
        ];
        let key = format!("ifscale-generate:{}", model.name);
        let mut stage = Stage::new(
            "ifscale-generate",
            move || {
                let prompts = run.prompts_for(Bench::Ifscale, &model.name)?;
                let fp = generate_fingerprint(ifs, model, judge, &prompts)?;
                refusal_fingerprint(fp, refusal)
            },
            outputs,
            {
                let files = files.clone();
                move |ctx| {
                    let all = harness::read_prompts(&run.prompts_for(Bench::Ifscale, &model.name)?)?;
                    let (prompts, not) = crate::fit::split(model, &all);
                    schema::write_jsonl_atomic(&crate::fit::file(&files.dir), &not)?;
                    if let Some(s) = crate::fit::sentence("IFScale", model, all.len(), &not) {
                        tracing::warn!("{s}");
                    }
                    let s = generate(run, ifs, &prompts, model, &files, ctx.client)?;
                    tracing::info!(model = %model.name, samples = s.samples, accepted = s.accepted, failed = s.failed, attempts = s.attempts, "IFScale generation finished.");
                    Ok(())
                }
            },
        )
        .for_model(&model.name)
        .requests(samples)
        .estimate(move |dry| {
            let share = dry.share()?;
            let Some(all) = dry.ifscale_prompts(ifs)? else {
                return Ok(Vec::new());
            };
            let all = &*crate::shard::keep(share.as_deref(), Bench::Ifscale, &model.name, all);
            let (prompts, not) = crate::fit::split(model, all);
            if let Some(s) = crate::fit::sentence("IFScale", model, all.len(), &not) {
                dry.note(s);
            }
            Ok(harness::estimate::ifscale(
                &prompts,
                std::slice::from_ref(model),
                judge.map(|j| j.model.name.as_str()),
                refusal.map(|j| j.model.name.as_str()),
                ifs.max_attempts,
                &run.client,
            )?)
        })
        .pilot(move |p| pilot(p, ifs, model, judge.map(|j| &j.model)));
        if judge.is_some() || refusal.is_some() {
            let files = files.clone();
            stage = stage.after(move |ctx| {
                if let Some(judge) = judge {
                    let tally = harness::ifscale::judge_counts_from_attempts(&files.attempts())?;
                    ctx.check_judge(&key, Bench::Ifscale, &judge.model.name, tally)?;
                }
                if let Some(refusal) = refusal {
                    let tally = harness::ifscale::refusal_counts_from_attempts(&files.attempts())?;
                    let name = JudgeRole::Refusal.check_name(&refusal.model.name);
                    ctx.check_judge(&key, Bench::Ifscale, &name, tally)?;
                }
                Ok(())
            });
        }
        stages.push(stage);
    }
    stages.push(Stage::new(
        "ifscale-join",
        move || {
            let mut fp = Fingerprint::new("ifscale-join");
            let [scores, labels, attempts, unfit] = parts(run);
            for p in scores.iter().chain(&labels).chain(&attempts).chain(&unfit) {
                fp = fp.value("part", p)?.file(p)?;
            }
            Ok(fp)
        },
        vec![
            paths.ifscale_scores(),
            paths.ifscale_labels(),
            paths.ifscale_attempts(),
            does_not_fit(paths),
        ],
        move |_| {
            let [scores, labels, attempts, unfit] = parts(run);
            concat_jsonl(&unfit, &does_not_fit(paths))?;
            concat_jsonl(&scores, &paths.ifscale_scores())?;
            concat_jsonl(&labels, &paths.ifscale_labels())?;
            concat_jsonl(&attempts, &paths.ifscale_attempts())?;
            Ok(())
        },
    ));
    stages
}

/// The run's IFScale samples that were not sent because their prompt does not fit the model's context window
/// (`crate::fit::DoesNotFit` records of every model), next to `scores.jsonl`.
pub fn does_not_fit(paths: &schema::paths::RunPaths) -> PathBuf {
    paths.ifscale_scores().with_file_name("does-not-fit.jsonl")
}

/// The models' score, label, attempt and does-not-fit files that exist (a model whose stage was stopped has none to
/// join).
fn parts(run: &Run) -> [Vec<PathBuf>; 4] {
    let files: Vec<ModelPaths> = run
        .models
        .iter()
        .map(|m| run.paths.model(Bench::Ifscale, &m.name))
        .collect();
    let existing = |f: fn(&ModelPaths) -> PathBuf| {
        files
            .iter()
            .map(f)
            .filter(|p| p.is_file())
            .collect::<Vec<_>>()
    };
    [
        existing(ModelPaths::scores),
        existing(ModelPaths::labels),
        existing(ModelPaths::attempts),
        existing(|f| crate::fit::file(&f.dir)),
    ]
}

/// One model's IFScale generation (attempts, retry rules, the refusal and coherence judges, scores) with the
/// config's settings: the stage of the run and the pilot's sample of it call the same thing.
pub(crate) fn generate(
    run: &Run,
    ifs: &IfscaleConfig,
    prompts: &[schema::PromptRecord],
    model: &ModelConfig,
    files: &ModelPaths,
    client: &Client,
) -> Result<harness::ifscale::GenerationSummary, harness::Error> {
    harness::ifscale::generate(&harness::ifscale::Generation {
        prompts,
        model,
        coherence: run.judge(JudgeRole::Coherence).map(LoadedJudge::judge),
        refusal: run.judge(JudgeRole::Refusal).map(LoadedJudge::judge),
        constraint_list: ifs.constraint_list,
        coherence_threshold: ifs.coherence_threshold,
        max_attempts: ifs.max_attempts,
        mode: schema::ifscale::MatchMode::Paper,
        span: ifs.score_span,
        files,
        client,
    })
}

/// The fingerprint of one model's IFScale generation stage: the model, the whole `[ifscale]` section (so the
/// constraint-list reading and the threshold are in it: switching them re-decides every attempt, from the cache),
/// the prompts and, with a coherence judge, its model, request settings and rubric's text.
pub(crate) fn generate_fingerprint(
    ifs: &IfscaleConfig,
    model: &ModelConfig,
    judge: Option<&LoadedJudge>,
    prompts: &Path,
) -> anyhow::Result<Fingerprint> {
    let mut fp = Fingerprint::new("ifscale-generate")
        .value("model", model)?
        .value("judge", &judge.map(|j| &j.model))?
        .value("ifscale", ifs)?
        .value("constraint-list", &ifs.constraint_list.name())?
        .file(prompts)?;
    if let Some(judge) = judge {
        fp = fp
            .value("judge-call", &judge.call)?
            .file(&judge.prompt_file)?;
    }
    Ok(fp)
}

/// The generation fingerprint with the refusal judge, when one is configured: its model, request settings and
/// rubric's text (without one the fingerprint is unchanged, so runs without it stay up to date).
pub(crate) fn refusal_fingerprint(
    fp: Fingerprint,
    refusal: Option<&LoadedJudge>,
) -> anyhow::Result<Fingerprint> {
    match refusal {
        None => Ok(fp),
        Some(judge) => Ok(fp
            .value("refusal-judge", &judge.model)?
            .value("refusal-judge-call", &judge.call)?
            .file(&judge.prompt_file)?),
    }
}

/// The pilot of one model's generation: its sample of the prompts generated (with the judge), scaled to the run.
fn pilot(
    p: &mut crate::pilot::Pilot<'_>,
    ifs: &IfscaleConfig,
    model: &ModelConfig,
    judge: Option<&ModelConfig>,
) -> anyhow::Result<Vec<Row>> {
    let (_, sample) = p.ifscale_sample(ifs)?;
    // The run sends only the prompts that fit the model, so the pilot samples and scales to those.
    let (chosen, _) = crate::fit::split(model, &sample);
    let all = p.ifscale_fitting(ifs, model)?;
    let files = p.paths.model(Bench::Ifscale, &model.name);
    crate::pilot::create_parent(&files.responses())?;
    generate(p.run, ifs, &chosen, model, &files, &p.run.client)?;
    let (units, requests) = per_unit(&files.responses())?;
    let mut rows = vec![Row {
        stage: "ifscale generation",
        model: model.name.clone(),
        prices: crate::pilot::prices(model),
        unit: "sample",
        pilot_requests: requests,
        strata: vec![Stratum {
            run_units: all,
            observed: units.into_values().collect(),
        }],
    }];
    if let Some(refusal) = p.run.judge(JudgeRole::Refusal).map(|j| &j.model) {
        let (observed, requests) = per_request(&files.refusal_judge(), chosen.len())?;
        rows.push(Row {
            stage: "ifscale refusal judge",
            model: refusal.name.clone(),
            prices: crate::pilot::prices(refusal),
            unit: "sample",
            pilot_requests: requests,
            strata: vec![Stratum {
                run_units: all,
                observed,
            }],
        });
    }
    if let Some(judge) = judge {
        let (observed, requests) = per_request(&files.coherence_judge(), chosen.len())?;
        rows.push(Row {
            stage: "ifscale coherence judge",
            model: judge.name.clone(),
            prices: crate::pilot::prices(judge),
            unit: "sample",
            pilot_requests: requests,
            strata: vec![Stratum {
                run_units: all,
                observed,
            }],
        });
    }
    Ok(rows)
}
