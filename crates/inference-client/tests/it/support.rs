//! Shared helpers: prompts, a fast-retrying model config, and a run that returns the output records.

use std::collections::BTreeMap;
use std::path::Path;

use inference_client::{Client, Error, ModelConfig, RunOptions, RunSummary};
use schema::{Message, PromptRecord, ResponseRecord};

pub(crate) fn prompt(id: &str, text: &str) -> PromptRecord {
    PromptRecord {
        id: id.to_owned(),
        messages: vec![Message::system("Be brief."), Message::user(text)],
        sample_index: 0,
        params: Default::default(),
        extra: Default::default(),
    }
}

pub(crate) fn prompts(n: usize) -> Vec<PromptRecord> {
    (0..n)
        .map(|i| prompt(&format!("p{i}"), &format!("question {i}")))
        .collect()
}

/// An ad-hoc model with quick retries and a short timeout, suitable for the mock.
pub(crate) fn model(base_url: &str) -> ModelConfig {
    let mut m = ModelConfig::ad_hoc(base_url, "mock-model");
    m.retry_base_s = 0.01;
    m.retry_max_s = 0.05;
    m.timeout_s = 0.5;
    m.max_attempts = 6;
    m
}

pub(crate) fn opts(dir: &Path) -> RunOptions {
    let mut o = RunOptions::new(dir.join("cache.sqlite"));
    o.durable = false;
    o
}

/// One chat call on a fresh client.
pub(crate) fn chat(
    model: &ModelConfig,
    prompts: &[PromptRecord],
    out: &Path,
    opts: &RunOptions,
) -> Result<RunSummary, Error> {
    Client::new(opts.clone())?.chat(model, prompts, out)
}

pub(crate) fn run(
    model: &ModelConfig,
    prompts: &[PromptRecord],
    out: &Path,
    opts: &RunOptions,
) -> (RunSummary, Vec<ResponseRecord>) {
    let summary = chat(model, prompts, out, opts).expect("run");
    let records = schema::read_jsonl(out).expect("read output");
    (summary, records)
}

/// Content per (id, sample index); panics if a prompt appears twice.
pub(crate) fn contents(records: &[ResponseRecord]) -> BTreeMap<(String, u32), Option<String>> {
    let mut map = BTreeMap::new();
    for r in records {
        let prev = map.insert((r.id.clone(), r.sample_index), r.content.clone());
        assert!(prev.is_none(), "prompt {} appears twice", r.id);
    }
    map
}

pub(crate) fn expected_content(p: &PromptRecord) -> String {
    format!(
        "Reply to: {}",
        p.messages.last().map(|m| m.content.as_str()).unwrap_or("")
    )
}
