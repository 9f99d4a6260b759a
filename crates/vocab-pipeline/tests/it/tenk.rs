//! The vocabulary pipeline's model-free stages (reading the filings, keyness candidates, dedup, look-back, Zipf,
//! lemmas) on the shared 10-K filings, their per-stage counts and surviving terms checked against
//! `test_data/tenk-stages.txt` (derived once from this run and reviewed by hand; to derive it again after a
//! deliberate change: `UPDATE_EXPECT=1 cargo test --workspace --test it -- tenk --include-ignored`, then review the
//! diff).

use std::fmt::Write as _;

use expect_test::expect_file;
use vocab_pipeline::pipeline::{VocabConfig, model_free_stages};
use vocab_pipeline::wordfreq::WordFreq;

use crate::assets::asset;
use crate::pipeline::lemmatizer;

#[test]
#[ignore = "needs ../shared/data/tenk"]
fn the_model_free_stages_on_the_shared_10k_filings_keep_their_counts() {
    let corpus = schema::env::shared_data("tenk").unwrap();
    let wordfreq = WordFreq::load(&asset("wordfreq-large_en.msgpack.gz")).unwrap();
    let (counts, terms) =
        model_free_stages(&VocabConfig::default(), &corpus, &wordfreq, &lemmatizer()).unwrap();
    let mut got = String::from(
        "# The vocabulary pipeline's model-free stages on ../shared/data/tenk with the default settings\n\
         # (tests/it/tenk.rs): per stage, items in and out, then the terms left after stage 6.\n",
    );
    for c in &counts {
        let _ = writeln!(got, "{} {} {}", c.stage, c.input, c.output);
    }
    let _ = writeln!(got, "# {} terms", terms.len());
    for t in &terms {
        let _ = writeln!(got, "{t}");
    }
    expect_file!["../../test_data/tenk-stages.txt"].assert_eq(&got);
}

/// The committed IFScale-XL list (`datasets/vocab/xl.tsv`): its SHA-256 is the one its provenance records, it has at
/// least 10 000 terms, and stages 1–6 with its settings (`configs/vocab-xl.toml`) on the shared filings give again
/// the counts its provenance records. A full rebuild also embeds ~21 600 terms and compares ~2.3e8 pairs, many
/// minutes on two cores, so this checks the deterministic model-free stages and the committed file; the embedding
/// and ranking stages' determinism on the same code path is checked small by `pipeline::an_extra_source_…`.
#[test]
#[ignore = "needs ../shared/data/tenk"]
fn the_committed_xl_list_matches_its_provenance_and_its_early_stages_rebuild() {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let tsv = std::fs::read(repo.join("datasets/vocab/xl.tsv")).unwrap();
    let prov: serde_json::Value = serde_json::from_slice(
        &std::fs::read(repo.join("datasets/vocab/xl.provenance.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        prov["output"]["sha256"].as_str().unwrap(),
        schema::sha256_hex(&tsv)
    );
    let rows = String::from_utf8(tsv).unwrap().lines().count() - 1;
    assert_eq!(prov["output"]["rows"].as_u64().unwrap() as usize, rows);
    assert!(rows >= 10_000, "{rows}");

    let settings: VocabConfig =
        toml::from_str(&std::fs::read_to_string(repo.join("configs/vocab-xl.toml")).unwrap())
            .unwrap();
    assert_eq!(prov["config"], serde_json::to_value(&settings).unwrap());
    let corpus = schema::env::shared_data("tenk").unwrap();
    let wordfreq = WordFreq::load(&asset("wordfreq-large_en.msgpack.gz")).unwrap();
    let (counts, _) = model_free_stages(&settings, &corpus, &wordfreq, &lemmatizer()).unwrap();
    let recorded = prov["stages"].as_array().unwrap();
    assert_eq!(counts.len(), 6);
    for (c, r) in counts.iter().zip(recorded) {
        assert_eq!(
            (c.stage.as_str(), c.input as u64, c.output as u64),
            (
                r["stage"].as_str().unwrap(),
                r["input"].as_u64().unwrap(),
                r["output"].as_u64().unwrap()
            )
        );
    }
}
