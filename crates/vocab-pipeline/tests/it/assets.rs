//! Checks against the real offline assets in the cache (`cargo xtask setup` fetches them).

use std::path::PathBuf;

use vocab_pipeline::embed::{Embedder, MiniLm, cosine};
use vocab_pipeline::wordfreq::WordFreq;

/// The cached offline asset `name` (failing, never skipping, when it is missing).
pub(crate) fn asset(name: &str) -> PathBuf {
    let p = schema::env::cache_dir().join("assets").join(name);
    assert!(
        p.is_file(),
        "{} is missing: run `cargo xtask setup` to fetch the offline assets",
        p.display()
    );
    p
}

#[test]
fn zipf_values_match_wordfreq() {
    let wf = WordFreq::load(&asset("wordfreq-large_en.msgpack.gz")).unwrap();
    assert!(
        wf.len() > 100_000,
        "large_en should list several hundred thousand words, got {}",
        wf.len()
    );
    assert_eq!(wf.zipf("revenue"), 4.64);
    assert_eq!(wf.zipf("the"), 7.73);
    assert_eq!(wf.zipf("amortization"), 2.97);
    assert_eq!(wf.zipf("Revenue"), 4.64);
    assert_eq!(wf.zipf("qqzxqqzx"), 0.0);
}

#[test]
fn minilm_embeddings_are_unit_length_and_meaningful() {
    let mut m = MiniLm::load(
        &asset("all-minilm-l6-v2/model.safetensors"),
        &asset("all-minilm-l6-v2/tokenizer.json"),
        &asset("all-minilm-l6-v2/config.json"),
        8,
    )
    .unwrap();
    let words: Vec<String> = [
        "revenue",
        "sales",
        "giraffe",
        "amortization of intangible assets",
    ]
    .map(String::from)
    .to_vec();
    let v = m.embed(&words).unwrap();
    assert_eq!(v.len(), 4);
    for x in &v {
        assert_eq!(x.len(), 384);
        let norm = x.iter().map(|a| a * a).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "norm {norm}");
    }
    let rs = cosine(&v[0], &v[1]);
    let rg = cosine(&v[0], &v[2]);
    assert!(
        rs > rg,
        "cos(revenue, sales) = {rs} should exceed cos(revenue, giraffe) = {rg}"
    );
    // Batch-longest padding with masked pooling: a short word embeds the same alone and next to a long phrase.
    let alone = m.embed(&words[..1]).unwrap();
    let diff: f32 = alone[0]
        .iter()
        .zip(&v[0])
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f32::max);
    assert!(diff < 1e-4, "padding changed the embedding by {diff}");
}
