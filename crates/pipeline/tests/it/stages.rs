//! A stage added to the run's list shows up in all four things derived from it: the plan, the dry run, the pilot
//! and the progress line of an executed run (and is skipped as fresh by a rerun).

use std::path::Path;
use std::sync::Arc;

use harness::estimate::Estimate;
use harness::estimate::expected::{Row, Stratum};
use harness::fresh::Fingerprint;
use inference_client::{Client, RunOptions};
use mock_provider::{MockConfig, MockServer};
use pipeline::stage::Stage;
use pipeline::{Options, PipelineConfig, Run};
use schema::{Message, PromptRecord};

/// A run of one mock model with no benchmark section: its list is the judge-check gate and the last three stages.
fn run_of(dir: &Path, server: &MockServer) -> Run {
    let models = dir.join("models.toml");
    std::fs::write(
        &models,
        format!(
            "[models.mock]\nbase-urls = [\"{}\"]\nmodel-id = \"mock-lm\"\nprice-in-per-mtok = 1.0\nprice-out-per-mtok = 2.0\n",
            server.base_url()
        ),
    )
    .unwrap();
    // An absolute run name puts the run folder in the temporary folder (`artifacts/runs/<name>` joins to it).
    let config = dir.join("run.toml");
    let run_dir = dir.join("run");
    std::fs::write(
        &config,
        format!(
            "[run]\nname = {:?}\nmodels = [\"mock\"]\nmodels-file = {:?}\n",
            run_dir.display().to_string(),
            models.display().to_string()
        ),
    )
    .unwrap();
    let cfg = PipelineConfig::load(&config).unwrap();
    assert_eq!(cfg.run_dir(), run_dir);
    let cache = dir.join("cache.sqlite");
    let mut client = RunOptions::new(cache.clone());
    client.progress = false;
    let opts = Options::new(config, models, cache);
    Run::load(cfg, &opts, Arc::new(Client::new(client).unwrap())).unwrap()
}

/// The stage a test adds: one request to the run's model, its answer written to `probe.jsonl`.
fn probe(run: &Run) -> Stage<'_> {
    let out = run.paths.root.join("probe.jsonl");
    let model = &run.models[0];
    let prompt = || PromptRecord {
        id: "probe-0".to_owned(),
        messages: vec![Message::user("Say hi.")],
        sample_index: 0,
        params: Default::default(),
        extra: Default::default(),
    };
    Stage::new(
        "probe",
        || Ok(Fingerprint::new("probe").value("prompt", &"Say hi.")?),
        vec![out.clone()],
        move |ctx| {
            ctx.client.chat(model, &[prompt()], &out)?;
            Ok(())
        },
    )
    .for_model(&model.name)
    .requests(1)
    .estimate(move |dry| {
        let report = dry.run.client().dry_run(model, &[prompt()])?;
        Ok(vec![Estimate {
            stage: "probe",
            model: model.name.clone(),
            note: "the test's stage".to_owned(),
            requests: report.prompts - report.cached,
            est_input_tokens: report.est_input_tokens,
            worst_case_cost_usd: Some(report.worst_case_cost_usd),
            unbounded: 0,
        }])
    })
    .pilot(move |p| {
        let out = p.paths.root.join("probe.jsonl");
        p.run.client().chat(model, &[prompt()], &out)?;
        Ok(vec![Row {
            stage: "probe",
            model: model.name.clone(),
            prices: (model.price_in_per_mtok, model.price_out_per_mtok),
            unit: "prompt",
            pilot_requests: 1,
            strata: vec![Stratum {
                run_units: 1,
                observed: Vec::new(),
            }],
        }])
    })
}

#[test]
fn a_stage_added_to_the_list_is_planned_estimated_piloted_and_shown_in_the_progress() {
    let server = MockServer::start(MockConfig::new(), 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let run = run_of(dir.path(), &server);
    let base = pipeline::stages::list(&run);
    let names: Vec<String> = base.iter().map(Stage::key).collect();
    assert_eq!(
        names,
        ["judge-check-gate", "analysis", "explorer", "report"],
        "a run without a benchmark"
    );
    let before = pipeline::plan::plan(&base);

    let mut stages = pipeline::stages::list(&run);
    stages.insert(0, probe(&run));

    // The plan counts it and its request.
    let plan = pipeline::plan::plan(&stages);
    assert_eq!(plan.stages, before.stages + 1);
    assert_eq!(plan.requests, before.requests + 1);

    // The dry run estimates it, sending nothing.
    let (rows, _) = pipeline::dry_run::rows(&run, &stages).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (rows[0].stage, rows[0].model.as_str(), rows[0].requests),
        ("probe", "mock", 1)
    );
    assert_eq!(server.requests(), 0);

    // The pilot sends its sample through the run's client.
    let rows = pipeline::pilot::rows(&run, &stages, 3).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].stage, "probe");
    assert_eq!(server.requests(), 1);

    // Executed (without the analysis and report, which need benchmark scores), it is on the progress line and run;
    // its answer comes from the pilot's cache entry.
    stages.truncate(2);
    let ctx = pipeline::execute(&run, &stages).unwrap();
    assert_eq!(ctx.out.progress, ["stage 1 of 1: probe:mock"]);
    assert_eq!(ctx.out.stages_run, ["probe:mock"]);
    assert!(ctx.out.incomplete.is_empty());
    assert!(run.paths.root.join("probe.jsonl").is_file());
    assert_eq!(server.requests(), 1, "the pilot's answer is reused");
    drop(ctx);

    // A rerun finds it fresh.
    let ctx = pipeline::execute(&run, &stages).unwrap();
    assert_eq!(ctx.out.stages_skipped, ["probe:mock"]);
    assert!(ctx.out.stages_run.is_empty());
}
