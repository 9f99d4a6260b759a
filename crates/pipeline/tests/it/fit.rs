//! The context-window check (`pipeline::fit`) on the run's list of stages: the dry run leaves the prompts that do
//! not fit out of its counts and names the model, the pilot scales to the ones that fit, and the run never sends
//! them (the mock emulates a short-context server that would answer them with vLLM's 400) and writes them to
//! `does-not-fit.jsonl`, with no score line.

use std::path::Path;
use std::sync::Arc;

use inference_client::{Client, RunOptions};
use mock_provider::{MockConfig, MockServer};
use pipeline::fit::DoesNotFit;
use pipeline::{Options, PipelineConfig, Run};
use schema::paths::Bench;

fn repo(p: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(p)
        .display()
        .to_string()
}

/// An IFScale run at N = 10 and 100, seeds 0 and 1, on the mock's `short-context` emulation declared with a
/// 512-token window: N = 10 fits, N = 100 (about 3 700 characters) does not.
fn run_of(dir: &Path, server: &MockServer) -> Run {
    let models = dir.join("models.toml");
    std::fs::write(
        &models,
        format!(
            "[models.short]\nbase-urls = [\"{}\"]\nmodel-id = \"short-context\"\ncontext-window = 512\n\
             price-in-per-mtok = 1.0\nprice-out-per-mtok = 2.0\n",
            server.base_url()
        ),
    )
    .unwrap();
    let template = dir.join("template.txt");
    std::fs::write(&template, "Write a report.\n{{constraints}}\n").unwrap();
    let config = dir.join("run.toml");
    std::fs::write(
        &config,
        format!(
            "[run]\nname = {:?}\nmodels = [\"short\"]\nmodels-file = {:?}\n\n[ifscale]\ngrid = [10, 100]\n\
             seeds = [0, 1]\nsampling = \"paper\"\nvocab = {:?}\ntemplate = {:?}\nmax-tokens = 20\nmax-attempts = 1\n",
            dir.join("run").display().to_string(),
            models.display().to_string(),
            repo("datasets/vocab/ifscale-paper.txt"),
            template.display().to_string(),
        ),
    )
    .unwrap();
    let cfg = PipelineConfig::load(&config).unwrap();
    let cache = dir.join("cache.sqlite");
    let mut client = RunOptions::new(cache.clone());
    client.progress = false;
    let opts = Options::new(config, models, cache);
    Run::load(cfg, &opts, Arc::new(Client::new(client).unwrap())).unwrap()
}

#[test]
fn prompts_that_do_not_fit_the_context_window_are_never_sent_nor_scored() {
    let server = MockServer::start(MockConfig::new(), 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let run = run_of(dir.path(), &server);
    let mut stages = pipeline::stages::list(&run);
    stages.retain(|s| s.key() == "vocab" || s.key().starts_with("ifscale"));
    let keys: Vec<String> = stages.iter().map(|s| s.key()).collect();
    assert_eq!(
        keys,
        [
            "vocab",
            "ifscale-prompts",
            "ifscale-generate:short",
            "ifscale-join"
        ]
    );

    // The dry run counts the two samples that fit and names the model for the two that do not.
    let (rows, dry) = pipeline::dry_run::rows(&run, &stages).unwrap();
    let generation = rows
        .iter()
        .find(|r| r.model == "short" && r.stage.contains("generation"))
        .expect("a generation row");
    assert_eq!(generation.requests, 2, "{rows:?}");
    let note = dry.notes().join("\n");
    assert!(
        note.contains(
            "model short does not fit 2 of 4 prompts (N >= 100) in its 512-token context window"
        ),
        "{note}"
    );
    assert_eq!(server.requests(), 0);

    // The pilot samples and scales to the fitting samples only.
    let pilot = pipeline::pilot::rows(&run, &stages, 4).unwrap();
    assert_eq!(pilot[0].strata[0].run_units, 2);
    assert_eq!(server.requests(), 2);

    // The run sends the two that fit (answered from the pilot's cache entries), records the two that do not.
    let ctx = pipeline::execute(&run, &stages).unwrap();
    assert!(ctx.out.incomplete.is_empty());
    drop(ctx);
    assert_eq!(server.requests(), 2, "nothing that does not fit was sent");
    let files = run.paths.model(Bench::Ifscale, "short");
    let unfit: Vec<DoesNotFit> = schema::read_jsonl(&pipeline::fit::file(&files.dir)).unwrap();
    assert_eq!(unfit.len(), 2);
    assert!(unfit.iter().all(|d| d.status == "does-not-fit"
        && d.num_rules == Some(100)
        && d.context_window == 512
        && d.prompt_tokens + 20 > 512));
    let joined: Vec<DoesNotFit> =
        schema::read_jsonl(&pipeline::stages::ifscale::does_not_fit(&run.paths)).unwrap();
    assert_eq!(joined, unfit);
    let scores: Vec<serde_json::Value> = schema::read_jsonl(&run.paths.ifscale_scores()).unwrap();
    assert_eq!(
        scores.len(),
        2,
        "only the samples that were sent are scored"
    );
    assert!(scores.iter().all(|s| s["num_rules"] == 10), "{scores:?}");
    let section =
        pipeline::fit::summary_markdown(&pipeline::stages::ifscale::does_not_fit(&run.paths))
            .unwrap();
    assert!(section.contains("## Does not fit"), "{section}");
    assert!(section.contains("| short | 100 | 2 | 512 |"), "{section}");
}
