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
