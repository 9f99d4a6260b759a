//! `Client::embed` against the mock's `/embeddings` route: order, batching, retries, cache, budget, key hygiene.

use inference_client::{Client, Error};
use mock_provider::{Fault, MockConfig, MockServer};

use crate::support::{model, opts};

fn texts(ws: &[&str]) -> Vec<String> {
    ws.iter().map(|w| (*w).to_owned()).collect()
}

#[test]
fn vectors_come_back_in_input_order_after_a_retry_and_then_from_the_cache() {
    let mut cfg = MockConfig::new();
    cfg.script = vec![Fault::RateLimited];
    cfg.retry_after_s = 0;
    let mock = MockServer::start(cfg, 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let m = model(&mock.base_url());
    let client = Client::new(opts(dir.path())).unwrap();
    let words = texts(&["tax", "lease", "revenue"]);
    let v = client.embed(&m, &words, 2).unwrap();
    let want: Vec<Vec<f32>> = words
        .iter()
        .map(|w| vec![w.len() as f32, 1.0, 0.0])
        .collect();
    assert_eq!(v, want);
    // One refused request, then two batches of at most two texts.
    assert_eq!(mock.requests(), 3);
    // A second client over the same cache sends nothing.
    let again = Client::new(opts(dir.path())).unwrap();
    assert_eq!(again.embed(&m, &words, 2).unwrap(), want);
    assert_eq!(mock.requests(), 3);
}

#[test]
fn errors_name_the_url_and_never_the_key() {
    let mut cfg = MockConfig::new();
    cfg.script = vec![Fault::BadRequest];
    let mock = MockServer::start(cfg, 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let var = "IFSTRESS_TEST_EMBED_KEY";
    // The key reaches the client through its options, not the process's environment.
    let opts = |dir: &std::path::Path| inference_client::RunOptions {
        env: inference_client::Env::fixed([(var, "sk-test-embed-SECRET")]),
        ..opts(dir)
    };
    let mut m = model(&mock.base_url());
    m.api_key_env = Some(var.to_owned());
    let err = Client::new(opts(dir.path()))
        .unwrap()
        .embed(&m, &texts(&["tax"]), 8)
        .unwrap_err();
    assert!(matches!(err, Error::Request { .. }), "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("/v1/embeddings") && msg.contains("400"),
        "{msg}"
    );
    assert!(!msg.contains("SECRET"), "{msg}");
    // A 400 is not retried.
    assert_eq!(mock.requests(), 1);
}

#[test]
fn the_budget_counts_embeddings_and_stops_before_the_cap() {
    let mock = MockServer::start(MockConfig::new(), 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut m = model(&mock.base_url());
    m.price_in_per_mtok = 1_000_000.0; // one USD per input token
    let mut o = opts(dir.path());
    o.max_cost_usd = Some(5.0);
    let client = Client::new(o).unwrap();
    // "abcdefgh": 2 tokens by the mock's count, worst case 3 by the client's estimate.
    client.embed(&m, &texts(&["abcdefgh"]), 1).unwrap();
    assert!(
        (client.spent_usd() - 2.0).abs() < 1e-9,
        "{}",
        client.spent_usd()
    );
    let err = client
        .embed(
            &m,
            &texts(&["a much longer text than the rest of the budget allows"]),
            1,
        )
        .unwrap_err();
    assert!(matches!(err, Error::Budget(_)), "{err}");
    assert_eq!(mock.requests(), 1);
}
