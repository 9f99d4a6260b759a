//! A sequential run against the mock provider: its prompts are a prefix of the whole grid's, byte for byte, and
//! continuing it with a tighter rule sends only the new prompts (counted by the mock).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use inference_client::{Client, RunOptions};
use mock_provider::{MockConfig, MockServer};
use pipeline::sequential::{Flags, Reason, Until};
use pipeline::{Options, PipelineConfig, Run};

fn repo(p: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(p)
        .display()
        .to_string()
}

/// Two mock models on RIFT (prepared from the team's clues), 5 question sets a batch per structure.
fn config(dir: &Path, server: &MockServer) -> (PathBuf, PathBuf) {
    let models = dir.join("models.toml");
    let mut text = String::new();
    for m in ["a", "b"] {
        text.push_str(&format!(
            "[models.{m}]\nbase-urls = [\"{}\"]\nmodel-id = \"mock-{m}\"\nprice-in-per-mtok = 1.0\nprice-out-per-mtok = 2.0\n\n",
            server.base_url()
        ));
    }
    std::fs::write(&models, text).unwrap();
    let config = dir.join("run.toml");
    std::fs::write(
        &config,
        format!(
            "[run]\nname = {:?}\nmodels = [\"a\", \"b\"]\nmodels-file = {:?}\n\n\
             [rift-prep]\ninputs = [{:?}]\n\n\
             [rift]\nseed = 7\ndataset = {:?}\nlinear-prompts = 30\njumping-prompts = 30\nbaseline-prompts = 30\n\
             num-min = 10\nnum-max = 12\nmax-jump-distance = 9\nmax-tokens = 64\ntemperature = 0.0\n\
             system-prompt = {:?}\nbaseline-system-prompt = {:?}\n\n\
             [judge-check]\nenabled = false\n\n[sequential]\nrift-batch = 5\n",
            dir.join("run").display().to_string(),
            models.display().to_string(),
            repo("datasets/jeopardy/team-clues.json"),
            dir.join("questions.jsonl").display().to_string(),
            repo("configs/prompts/rift-system.txt"),
            repo("configs/prompts/rift-baseline-system.txt"),
        ),
    )
    .unwrap();
    (config, models)
}

fn load(dir: &Path, config: &Path, models: &Path) -> Run {
    let cfg = PipelineConfig::load(config).unwrap();
    let cache = dir.join("cache.sqlite");
    let mut client = RunOptions::new(cache.clone());
    client.progress = false;
    let opts = Options::new(config.to_owned(), models.to_owned(), cache);
    Run::load(cfg, &opts, Arc::new(Client::new(client).unwrap())).unwrap()
}

fn until(run: &Run, rule: &str) -> Until {
    let flags = Flags {
        until: Some(rule.to_owned()),
        ..Flags::default()
    };
    Until::resolve(
        run.cfg.sequential.as_ref(),
        &flags,
        &run.cfg.run.models,
        &run.opts.config,
    )
    .unwrap()
    .unwrap()
}

fn units(c: &pipeline::sequential::Counts) -> u64 {
    c.rift.iter().map(|(_, n)| *n as u64).sum()
}

#[test]
fn a_tighter_rule_continues_the_run_and_sends_only_the_new_prompts() {
    let server = MockServer::start(MockConfig::new(), 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (config, models) = config(dir.path(), &server);

    let run = load(dir.path(), &config, &models);
    let (loose, _) = pipeline::sequential::batches(&run, &until(&run, "ci-width=60pp")).unwrap();
    assert_eq!(loose.reason, Reason::Answered, "{loose:?}");
    let first = units(&loose.prefix);
    assert!(first < units(&loose.grid), "{loose:?}");
    // Two models, one request per prompt of the prefix.
    assert_eq!(server.requests(), 2 * first);
    let md = run.sequential.markdown().unwrap();
    assert!(md.contains("RIFT: stopped after"), "{md}");
    assert!(md.contains(": intervals below 60pp."), "{md}");
    assert!(md.contains("The stop saved"), "{md}");

    // The prefix's prompts are the whole grid's lines, byte for byte and in order.
    let full = dir.path().join("full.jsonl");
    harness::rift::write_prompts(run.cfg.rift.as_ref().unwrap(), &full).unwrap();
    let full = std::fs::read_to_string(full).unwrap();
    let part = std::fs::read_to_string(run.paths.rift_prompts()).unwrap();
    let mut rest = full.lines();
    for line in part.lines() {
        assert!(
            rest.any(|l| l == line),
            "not in the full grid's order: {line}"
        );
    }
    drop(run);

    // A tighter rule starts where the loose one stopped and sends only what is new.
    let run = load(dir.path(), &config, &models);
    let (tight, _) = pipeline::sequential::batches(&run, &until(&run, "ci-width=30pp")).unwrap();
    let second = units(&tight.prefix);
    assert!(second > first, "{tight:?}");
    assert_eq!(server.requests(), 2 * second);
    drop(run);

    // The same rule again: answered already, nothing sent.
    let run = load(dir.path(), &config, &models);
    let (again, _) = pipeline::sequential::batches(&run, &until(&run, "ci-width=30pp")).unwrap();
    assert_eq!(again.prefix, tight.prefix);
    assert_eq!(server.requests(), 2 * second);
}
