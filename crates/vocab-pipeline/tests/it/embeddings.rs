//! Stage 7's `/v1/embeddings` embedder: the mock provider (crate `mock-provider`) on 127.0.0.1 embeds each term `w` as
//! `[len(w), 1, 0]`; the embedder hands back unit vectors in term order.

use std::sync::Arc;

use inference_client::{Client, ModelConfig, RunOptions};
use mock_provider::{MockConfig, MockServer};
use vocab_pipeline::embed::{ClientEmbedder, Embedder};

fn terms(ws: &[&str]) -> Vec<String> {
    ws.iter().map(|w| (*w).to_owned()).collect()
}

#[test]
fn vectors_come_back_normalized_in_term_order() {
    let mock = MockServer::start(MockConfig::new(), 0).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut model = ModelConfig::ad_hoc(&mock.base_url(), "emb-small");
    model.name = "emb".to_owned();
    let mut o = RunOptions::new(dir.path().join("cache.sqlite"));
    o.durable = false;
    let client = Arc::new(Client::new(o).unwrap());
    let mut e = ClientEmbedder::new(client, model, 2);
    let words = ["tax", "lease", "revenue"];
    let v = e.embed(&terms(&words)).unwrap();
    assert_eq!(v.len(), 3);
    for (w, vec) in words.iter().zip(&v) {
        let n = w.len() as f32;
        let norm = (n * n + 1.0).sqrt();
        assert!(
            (vec[0] - n / norm).abs() < 1e-6 && (vec[1] - 1.0 / norm).abs() < 1e-6,
            "{w}: {vec:?}"
        );
    }
    // Two batches of at most two terms.
    assert_eq!(mock.requests(), 2);
    assert!(e.describe().contains("emb-small"));
}
