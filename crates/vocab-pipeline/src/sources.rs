//! Extra candidate sources beside the filings, for a vocabulary larger than the filings' keyness candidates can
//! give (the IFScale-XL list of 10 000 terms): WordNet nouns within a Zipf band.
//!
//! An extra source's terms join the pooled candidates of stage 2 with no filing behind them (`source_count` 0), so
//! fuzzy dedup keeps the filings' spellings as representatives; they skip the look-back (they were not extracted
//! from the text) and then pass the same Zipf, lemma, pruning and difficulty stages as the filings' terms.
//! [`Tally`] counts, per stage, how many of the surviving terms came from the filings and how many from the extra
//! sources only, for the provenance report.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::lemma::Lemmatizer;
use crate::wordfreq::WordFreq;

/// A source of candidate terms besides the filings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExtraSource {
    /// Single-word WordNet nouns in common (lowercase) use whose Zipf frequency is within a band.
    WordnetNouns,
}

impl ExtraSource {
    /// The name used in the settings and the provenance report.
    pub fn name(self) -> &'static str {
        match self {
            ExtraSource::WordnetNouns => "wordnet-nouns",
        }
    }
}

/// Settings of the `wordnet-nouns` source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct WordnetNounsConfig {
    /// Lowest Zipf frequency of a noun taken (WordNet's nouns between Zipf 1 and 2 are mostly genus and species
    /// names and obsolete words).
    pub min_zipf: f64,
    /// Highest Zipf frequency of a noun taken.
    pub max_zipf: f64,
    /// Shortest and longest noun taken, in letters (as the keyness extractor's `min-len` and `max-len`).
    pub min_len: usize,
    pub max_len: usize,
}

impl Default for WordnetNounsConfig {
    fn default() -> Self {
        WordnetNounsConfig {
            min_zipf: 2.0,
            max_zipf: 9.0,
            min_len: 3,
            max_len: 20,
        }
    }
}

/// The WordNet nouns the source proposes, sorted, and what the provenance report says about them.
///
/// A noun is taken when it is one word of lowercase ASCII letters of an allowed length, some WordNet synset spells it
/// in lowercase (so names WordNet knows only capitalized stay out, as in the keyness extractor), and its Zipf
/// frequency is within the band.
pub fn wordnet_nouns(
    lemmatizer: &Lemmatizer,
    wordfreq: &WordFreq,
    cfg: &WordnetNounsConfig,
) -> (Vec<String>, Value) {
    let mut single = 0usize;
    let mut common = 0usize;
    let mut out: Vec<String> = Vec::new();
    for noun in lemmatizer.nouns() {
        let len = noun.len();
        if !(cfg.min_len..=cfg.max_len).contains(&len)
            || !noun.bytes().all(|b| b.is_ascii_lowercase())
        {
            continue;
        }
        single += 1;
        if !lemmatizer.is_common_word(noun) {
            continue;
        }
        common += 1;
        let z = wordfreq.zipf(noun);
        if z >= cfg.min_zipf && z <= cfg.max_zipf {
            out.push(noun.to_owned());
        }
    }
    out.sort();
    let notes = json!({
        "rule": "index.noun lemmas of one word of lowercase ASCII letters, min-len..=max-len letters, spelled in lowercase by some synset, with min-zipf <= Zipf <= max-zipf",
        "config": cfg,
        "single-word-nouns": single,
        "in-common-use": common,
        "in-zipf-band": out.len(),
    });
    (out, notes)
}

/// Per stage, how many surviving terms have a filing behind them and how many come from the extra sources only.
#[derive(Debug, Default)]
pub struct Tally(Vec<Value>);

impl Tally {
    /// Records the split of one stage's output: `filings` terms proposed by some filing, `extra` by the extra
    /// sources only.
    pub fn push(&mut self, stage: &str, filings: usize, extra: usize) {
        self.0
            .push(json!({ "stage": stage, "filings": filings, "extra-sources-only": extra }));
    }

    /// The provenance report's `sources` object.
    pub fn report(self, sources: Vec<Value>) -> Value {
        json!({ "extra": sources, "per-stage": self.0 })
    }
}
