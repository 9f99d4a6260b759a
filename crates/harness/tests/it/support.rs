//! A scripted mock server, a fast-retrying model on it, and quiet run options.

use std::path::Path;

use inference_client::{Client, ModelConfig, RunOptions};
use mock_provider::{MockConfig, MockServer};

/// A mock whose replies are scripted per marker (see `MockConfig::replies`); other requests get the echo.
pub(crate) fn mock(replies: &[(&str, &[&str])]) -> MockServer {
    let mut cfg = MockConfig::new();
    cfg.replies = replies
        .iter()
        .map(|(marker, contents)| {
            (
                (*marker).to_owned(),
                contents.iter().map(|c| (*c).to_owned()).collect(),
            )
        })
        .collect();
    MockServer::start(cfg, 0).expect("start the mock")
}

/// A model on the mock with quick retries and a short timeout.
pub(crate) fn model(mock: &MockServer, id: &str) -> ModelConfig {
    let mut m = ModelConfig::ad_hoc(&mock.base_url(), id);
    m.retry_base_s = 0.01;
    m.retry_max_s = 0.05;
    m.timeout_s = 2.0;
    m
}

/// Run options with the cache in `dir`, no progress bar and no fsync.
pub(crate) fn client(dir: &Path) -> Client {
    Client::new(opts(dir)).expect("client")
}

pub(crate) fn opts(dir: &Path) -> RunOptions {
    let mut o = RunOptions::new(dir.join("cache.sqlite"));
    o.durable = false;
    o
}
