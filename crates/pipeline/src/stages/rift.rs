//! RIFT's stages: the prompts, then per model the generation, the judge (when `[judges.rift]` is set)
//! and the scores, and the join of the models' files.

use std::path::PathBuf;

use harness::estimate::expected::{Row, Stratum, per_request, per_unit};
use harness::fresh::{Fingerprint, concat_jsonl};
use inference_client::ModelConfig;
use prompt_gen::rift::RiftConfig;
use schema::paths::Bench;

use crate::Run;
use crate::config::LoadedJudge;
use crate::pilot::{Pilot, create_parent, prices};
use crate::stage::{Sharded, Stage};
use schema::judge::JudgeRole;

/// The RIFT stages of `run`.
pub(crate) fn stages<'a>(run: &'a Run, rift: &'a RiftConfig) -> Vec<Stage<'a>> {
    let paths = &run.paths;
    let prompts = paths.rift_prompts();
    let mut stages = vec![
        Stage::new(
            "rift-prompts",
            move || {
                let fp = Fingerprint::new("rift-prompts")
                    .value("rift", rift)?
                    .file(&rift.dataset)?
                    .file(&rift.system_prompt)?
                    .file(&rift.baseline_system_prompt)?;
                crate::sequential::grid::fingerprint(fp, run, Bench::Rift)
            },
            vec![prompts.clone()],
            move |_| {
                let mut n = harness::rift::write_prompts(rift, &paths.rift_prompts())?;
                if let Some(prefix) = run.sequential.prefix() {
                    n = crate::sequential::grid::keep_prefix(
                        &paths.rift_prompts(),
                        Bench::Rift,
                        &prefix,
                        &[],
                    )?;
                }
                tracing::info!(prompts = n, "Wrote the RIFT prompts.");
                Ok(())
            },
        )
        .sharded(Sharded::Every),
    ];
    let judge = run.judge(JudgeRole::RiftAnswers);
    let per_model = u64::from(rift.linear_prompts)
        + u64::from(rift.jumping_prompts)
        + match rift.baseline_prompts {
            Some(n) => u64::from(n),
            None => std::fs::read(&rift.dataset)
                .map(|b| b.iter().filter(|&&c| c == b'\n').count() as u64)
                .unwrap_or(0),
        };
    for model in &run.models {
        let files = paths.model(Bench::Rift, &model.name);
        let responses = files.responses();
        stages.push(
            Stage::new(
                "rift-generate",
                move || {
                    Ok(Fingerprint::new("rift-generate")
                        .value("model", model)?
                        .file(&run.prompts_for(Bench::Rift, &model.name)?)?)
                },
                vec![responses.clone()],
                {
                    let responses = responses.clone();
                    move |ctx| {
                        let prompts = run.prompts_for(Bench::Rift, &model.name)?;
                        harness::rift::run_file(model, &prompts, &responses, ctx.client)?;
                        Ok(())
                    }
                },
            )
            .for_model(&model.name)
            .requests(per_model)
            .estimate(move |dry| dry.rift_rows(rift, model))
            .pilot(move |p| pilot_generate(p, model)),
        );
        let mut verdicts = None;
        if let Some(judge) = judge {
            let key = format!("rift-judge:{}", model.name);
            let fp_responses = responses.clone();
            let (responses, run_files) = (responses.clone(), files.clone());
            let after_files = files.clone();
            stages.push(
                Stage::new(
                    "rift-judge",
                    move || {
                        Ok(Fingerprint::new("rift-judge")
                            .value("judge", &judge.model)?
                            .value("judge-call", &judge.call)?
                            .file(&run.prompts_for(Bench::Rift, &model.name)?)?
                            .file(&fp_responses)?
                            .file(&judge.prompt_file)?)
                    },
                    vec![files.verdicts()],
                    move |ctx| {
                        let prompts = run.prompts_for(Bench::Rift, &model.name)?;
                        harness::rift::judge(&harness::rift::Judge {
                            judge: judge.judge(),
                            prompts: &prompts,
                            responses: &responses,
                            judge_settled: false,
                            files: &run_files,
                            client: ctx.client,
                        })?;
                        Ok(())
                    },
                )
                .for_model(&model.name)
                .pilot(move |p| pilot_judge(p, model, judge))
                .after(move |ctx| {
                    if !after_files.verdicts().is_file() {
                        return Ok(());
                    }
                    let s = harness::rift::JudgeSummary::from_verdicts(&after_files.verdicts())?;
                    ctx.check_judge(&key, Bench::Rift, &judge.model.name, s.tally())
                }),
            );
            verdicts = Some(files.verdicts());
        }
        let fp_verdicts = verdicts.clone();
        let fp_responses = responses.clone();
        stages.push(
            Stage::new(
                "rift-score",
                move || {
                    let mut fp = Fingerprint::new("rift-score")
                        .file(&run.prompts_for(Bench::Rift, &model.name)?)?
                        .file(&fp_responses)?;
                    if let Some(v) = &fp_verdicts {
                        fp = fp.file(v)?;
                    }
                    Ok(fp)
                },
                vec![files.answer_scores(), files.prompt_scores()],
                move |_| {
                    let prompts = run.prompts_for(Bench::Rift, &model.name)?;
                    let summary = harness::rift::score(&harness::rift::Score {
                        prompts: &prompts,
                        responses: &responses,
                        verdicts: verdicts.as_deref(),
                        judge_settled: false,
                        files: &files,
                    })?;
                    crate::run::print(&summary.to_markdown());
                    Ok(())
                },
            )
            .for_model(&model.name),
        );
    }
    stages.push(Stage::new(
        "rift-join",
        // Stamped like a stage: a rerun with unchanged parts copies nothing.
        move || {
            let (answers, scores, tables) = parts(run);
            let mut fp = Fingerprint::new("rift-join").value("tables", &tables)?;
            for p in answers.iter().chain(&scores).chain(&tables) {
                fp = fp.file(p)?;
            }
            Ok(fp)
        },
        vec![
            paths.rift_answer_scores(),
            paths.rift_prompt_scores(),
            paths.rift_answer_tables(),
        ],
        move |_| {
            let (answers, scores, tables) = parts(run);
            concat_jsonl(&answers, &paths.rift_answer_scores())?;
            concat_jsonl(&scores, &paths.rift_prompt_scores())?;
            analysis::rift::write_answer_tables(&paths.rift_answer_tables(), &tables)?;
            Ok(())
        },
    ));
    stages
}

/// The models' answer and prompt score files that exist, and their Parquet answer tables: one for every model's
/// answers, or none (then the analysis reads the JSONL).
fn parts(run: &Run) -> (Vec<PathBuf>, Vec<PathBuf>, Vec<PathBuf>) {
    let (mut answers, mut scores, mut tables) = (Vec::new(), Vec::new(), Vec::new());
    for m in &run.models {
        let files = run.paths.model(Bench::Rift, &m.name);
        if files.answer_scores().is_file() {
            tables.push(files.answer_table());
            answers.push(files.answer_scores());
        }
        if files.prompt_scores().is_file() {
            scores.push(files.prompt_scores());
        }
    }
    if !tables.iter().all(|p| p.is_file()) {
        tables.clear();
    }
    (answers, scores, tables)
}

/// The pilot of one model's RIFT generation: its per-structure sample answered, scaled to the run by structure.
fn pilot_generate(p: &mut Pilot<'_>, model: &ModelConfig) -> anyhow::Result<Vec<Row>> {
    let share = p.share()?;
    let Some(sample) = p.rift_sample()?.cloned() else {
        return Ok(Vec::new());
    };
    let files = p.paths.model(Bench::Rift, &model.name);
    create_parent(&files.responses())?;
    let (chosen, by_structure) = (&sample.chosen, &sample.by_structure);
    harness::rift::run(model, chosen, &files.responses(), &p.run.client)?;
    let (units, requests) = per_unit(&files.responses())?;
    let strata = by_structure
        .iter()
        .map(|(s, idx)| Stratum {
            run_units: sample.run_units(share.as_deref(), &model.name, idx),
            observed: chosen
                .iter()
                .filter(|q| crate::pilot::structure(q) == *s)
                .filter_map(|q| units.get(&q.id).copied())
                .collect(),
        })
        .collect();
    Ok(vec![Row {
        stage: "rift generation",
        model: model.name.clone(),
        prices: prices(model),
        unit: "prompt",
        pilot_requests: requests,
        strata,
    }])
}

/// The pilot of the judge of one model's RIFT answers (those the pilot's generation wrote).
fn pilot_judge(
    p: &mut Pilot<'_>,
    model: &ModelConfig,
    judge: &LoadedJudge,
) -> anyhow::Result<Vec<Row>> {
    let share = p.share()?;
    let Some(sample) = p.rift_sample()?.cloned() else {
        return Ok(Vec::new());
    };
    let run_answers = sample.run_answers(share.as_deref(), &model.name);
    let (prompts, pilot_answers) = (sample.prompts, sample.pilot_answers);
    let files = p.paths.model(Bench::Rift, &model.name);
    harness::rift::judge(&harness::rift::Judge {
        judge: judge.judge(),
        prompts: &prompts,
        responses: &files.responses(),
        judge_settled: false,
        files: &files,
        client: &p.run.client,
    })?;
    let (observed, requests) = per_request(&files.judge_responses(), pilot_answers)?;
    Ok(vec![Row {
        stage: "rift judge",
        model: judge.model.name.clone(),
        prices: prices(&judge.model),
        unit: "answer",
        pilot_requests: requests,
        strata: vec![Stratum {
            run_units: run_answers,
            observed,
        }],
    }])
}
