//! The difficulty stage through the real inference client against its mock OpenAI server on 127.0.0.1,
//! which answers `logprobs: true` with token log-probs -0.5 and -1.5 (mean -1, so perplexity e).

use std::sync::Arc;

use inference_client::{Client, ModelConfig, RunOptions};
use mock_provider::{MockConfig, MockServer};
use vocab_pipeline::client::ClientRunner;
use vocab_pipeline::difficulty::{self, DifficultyConfig, PromptRunner};

#[test]
fn perplexity_comes_from_the_clients_logprobs() {
    let server = MockServer::start(MockConfig::new(), 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut model = ModelConfig::ad_hoc(&server.base_url(), "mock-lm");
    model.name = "mock".to_owned();
    let mut runner = ClientRunner::new(
        vec![model],
        dir.path().join("responses"),
        Arc::new(Client::new(RunOptions::new(dir.path().join("cache.sqlite"))).unwrap()),
    );
    let cfg = DifficultyConfig {
        samples: 3,
        ..DifficultyConfig::default()
    };
    let terms: Vec<String> = ["lease", "covenant"].map(String::from).to_vec();
    let prompts = difficulty::build_prompts(&terms, "Use {word} once.", &cfg);
    let responses = runner.run("vocab-difficulty", "mock", &prompts).unwrap();
    assert_eq!(responses.len(), 6);
    assert_eq!(server.requests(), 6);
    let (scores, report) = difficulty::score(&responses);
    assert_eq!(report.used, 6);
    for t in &terms {
        assert!(
            (scores[t].perplexity - std::f64::consts::E).abs() < 1e-9,
            "{t}: {:?}",
            scores[t]
        );
        assert_eq!(scores[t].samples, 3);
    }
    // A rerun is served from the responses file and the cache: no new request, same answers.
    let again = runner.run("vocab-difficulty", "mock", &prompts).unwrap();
    assert_eq!(again, responses);
    assert_eq!(server.requests(), 6);
    assert_eq!(runner.describe("mock")["model-id"], "mock-lm");
    let err = runner
        .run("vocab-difficulty", "nope", &prompts)
        .unwrap_err()
        .to_string();
    assert!(err.contains("nope"), "{err}");
}
