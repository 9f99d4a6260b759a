//! A run on the provider emulator with a content filter that refuses on words and a thinking model that spends its
//! whole budget on reasoning: every IFScale sample ends in exactly one outcome, and the tables, the report and
//! `summary.md` show accuracy both ways.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use inference_client::{Client, RunOptions};
use mock_provider::{MockConfig, MockServer};
use pipeline::{Options, PipelineConfig};
use schema::PromptRecord;
use schema::ifscale::{PromptMeta, SampleScore, SampleStatus};

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

/// Eight words of the paper's vocabulary that the prompt template does not use (so only a keyword trips them).
fn trigger_words() -> Vec<String> {
    let template = std::fs::read_to_string(repo("configs/prompts/ifscale-report.txt"))
        .unwrap()
        .to_lowercase();
    let in_template: BTreeSet<String> = template
        .split(|c: char| !c.is_alphanumeric())
        .map(str::to_owned)
        .collect();
    std::fs::read_to_string(repo("datasets/vocab/ifscale-paper.txt"))
        .unwrap()
        .lines()
        .map(|w| w.trim().to_lowercase())
        .filter(|w| !w.is_empty() && w.chars().all(char::is_alphanumeric))
        .filter(|w| !in_template.contains(w))
        .take(8)
        .collect()
}

#[test]
fn refusals_and_reasoning_exhaustion_each_end_in_one_outcome() {
    let server = MockServer::start(MockConfig::new(), 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let triggers = trigger_words();
    let models = dir.path().join("models.toml");
    std::fs::write(
        &models,
        format!(
            "[models.refuser]\nbase-urls = [\"{url}\"]\nmodel-id = \"refuse-on-{}\"\nprice-in-per-mtok = 1.0\nprice-out-per-mtok = 2.0\n\n\
             [models.thinker]\nbase-urls = [\"{url}\"]\nmodel-id = \"reasoning-exhaust\"\nprice-in-per-mtok = 1.0\nprice-out-per-mtok = 2.0\nmax-tokens = 256\n",
            triggers.join("+"),
            url = server.base_url(),
        ),
    )
    .unwrap();
    let config = dir.path().join("run.toml");
    let run_dir = dir.path().join("run");
    std::fs::write(
        &config,
        format!(
            "[run]\nname = {:?}\nmodels = [\"refuser\", \"thinker\"]\nmodels-file = {:?}\n\n\
             [ifscale]\ngrid = [10, 50]\nseeds = [0, 1, 2]\nsampling = \"paper\"\nvocab = {:?}\ntemplate = {:?}\nmax-attempts = 1\n\n\
             [judge-check]\nenabled = false\n",
            run_dir.display().to_string(),
            models.display().to_string(),
            repo("datasets/vocab/ifscale-paper.txt").display().to_string(),
            repo("configs/prompts/ifscale-report.txt").display().to_string(),
        ),
    )
    .unwrap();
    let cfg = PipelineConfig::load(&config).unwrap();
    let cache = dir.path().join("cache.sqlite");
    let mut client = RunOptions::new(cache.clone());
    client.progress = false;
    let opts = Options::new(config, models, cache);
    pipeline::run(cfg, &opts, Arc::new(Client::new(client).unwrap())).unwrap();

    let prompts: Vec<PromptRecord> =
        schema::read_jsonl(&run_dir.join("ifscale/prompts.jsonl")).unwrap();
    let scores: Vec<SampleScore> =
        schema::read_jsonl(&run_dir.join("ifscale/scores.jsonl")).unwrap();
    // Every sample of both models has one line, with one outcome.
    assert_eq!(scores.len(), 2 * prompts.len());
    let mut refused = 0;
    for p in &prompts {
        let meta: PromptMeta =
            serde_json::from_value(serde_json::Value::Object(p.extra.clone())).unwrap();
        let trips = meta
            .keywords
            .iter()
            .any(|k| triggers.contains(&k.to_lowercase()));
        let of = |model: &str| {
            let mine: Vec<&SampleScore> = scores
                .iter()
                .filter(|s| s.id == p.id && s.model == model)
                .collect();
            assert_eq!(mine.len(), 1, "{model} {}", p.id);
            mine[0].status
        };
        let want = if trips {
            refused += 1;
            SampleStatus::Refused
        } else {
            SampleStatus::Scored
        };
        assert_eq!(of("refuser"), want, "{}", p.id);
        assert_eq!(
            of("thinker"),
            SampleStatus::NoVisibleOutputWithReasoning,
            "{}",
            p.id
        );
    }
    assert!(refused > 0 && refused < prompts.len(), "{refused} refused");

    // The tables, the report and summary.md show both accuracies and the outcomes.
    let outcomes =
        std::fs::read_to_string(run_dir.join("tables/ifscale/ifscale_outcomes.md")).unwrap();
    assert!(outcomes.contains("accuracy, all samples (%)"), "{outcomes}");
    assert!(
        outcomes.contains("| thinker | 10 | 3 | – | 0.0 |"),
        "{outcomes}"
    );
    let keywords =
        std::fs::read_to_string(run_dir.join("tables/ifscale/ifscale_refusal_keywords.md"))
            .unwrap();
    assert!(keywords.contains("| refuser |"), "{keywords}");
    let summary = std::fs::read_to_string(run_dir.join("summary.md")).unwrap();
    assert!(summary.contains("### Outcomes"), "{summary}");
    assert!(
        summary.contains("no-visible-output-with-reasoning"),
        "{summary}"
    );
    let report = std::fs::read_to_string(run_dir.join("report.html")).unwrap();
    assert!(report.contains("accuracy, scored samples (%)"));
    assert!(report.contains("accuracy, all samples (%)"));
    assert!(report.contains("Keywords that appear in refused samples"));
    // The outcome figure is drawn (a sample failed).
    assert!(
        run_dir
            .join("figures/ifscale/ifscale_outcomes_vs_n.png")
            .is_file()
    );
    if let Some(keep) = std::env::var_os("IFSTRESS_KEEP_OUTCOME_FIGURE") {
        std::fs::copy(
            run_dir.join("figures/ifscale/ifscale_outcomes_vs_n.png"),
            keep,
        )
        .unwrap();
    }
}
