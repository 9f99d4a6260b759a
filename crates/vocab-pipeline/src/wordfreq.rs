//! Stage 5 data: wordfreq's English word frequencies on the Zipf scale, read from `large_en.msgpack.gz`.
//!
//! The file (from the `wordfreq` Python wheel, data CC-BY-SA 4.0 by Robyn Speer et al.) is gzipped MessagePack:
//! `[header, bucket0, bucket1, …]`, where bucket `i` lists the words of frequency 10^(−i/100),
//! so a word in bucket `i` has Zipf frequency 9 − i/100 (log10 of its frequency per billion words).

use std::collections::HashMap;
use std::fmt;
use std::io::Read;
use std::path::Path;

use serde::de::{Deserializer, IgnoredAny, SeqAccess, Visitor};

use crate::Error;

/// Attribution for the word frequency data, copied into every provenance report.
pub const WORDFREQ_ATTRIBUTION: &str = "Word frequencies from wordfreq 3.1.1 (large_en), by Robyn Speer et al., \
data licensed CC-BY-SA 4.0 (https://creativecommons.org/licenses/by-sa/4.0/); used unmodified to compute Zipf values.";

/// Word → bucket index lookup.
#[derive(Debug, Clone)]
pub struct WordFreq {
    bucket: HashMap<String, u16>,
}

struct Buckets(Vec<Vec<String>>);

impl<'de> serde::Deserialize<'de> for Buckets {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Buckets;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array [header, bucket0, bucket1, ...]")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Buckets, A::Error> {
                let _header: Option<IgnoredAny> = seq.next_element()?;
                let mut out = Vec::new();
                while let Some(bucket) = seq.next_element::<Vec<String>>()? {
                    out.push(bucket);
                }
                Ok(Buckets(out))
            }
        }
        d.deserialize_seq(V)
    }
}

impl WordFreq {
    /// Reads a `*.msgpack.gz` frequency file.
    pub fn load(path: &Path) -> Result<WordFreq, Error> {
        let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        let mut raw = Vec::new();
        flate2::read::GzDecoder::new(file)
            .read_to_end(&mut raw)
            .map_err(|e| Error::Input {
                path: path.to_owned(),
                what: format!("not a gzip file: {e}"),
            })?;
        let buckets: Buckets = rmp_serde::from_slice(&raw).map_err(|e| Error::Input {
            path: path.to_owned(),
            what: format!("not a wordfreq msgpack list [header, bucket…]: {e}"),
        })?;
        let mut bucket = HashMap::new();
        for (i, words) in buckets.0.into_iter().enumerate() {
            let i = u16::try_from(i).map_err(|_| Error::Input {
                path: path.to_owned(),
                what: "more than 65535 buckets".to_owned(),
            })?;
            for w in words {
                // A word listed twice keeps its most frequent bucket.
                bucket.entry(w).or_insert(i);
            }
        }
        Ok(WordFreq { bucket })
    }

    /// Builds a table from explicit `(word, bucket)` pairs (for tests and fixtures).
    pub fn from_buckets(pairs: impl IntoIterator<Item = (String, u16)>) -> WordFreq {
        WordFreq {
            bucket: pairs.into_iter().collect(),
        }
    }

    pub fn len(&self) -> usize {
        self.bucket.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bucket.is_empty()
    }

    /// Zipf frequency of a single word, rounded to 2 decimals like wordfreq's `zipf_frequency`; 0 when unknown.
    ///
    /// The word is lowercased first (wordfreq case-folds); multi-word or non-alphabetic input is looked up as is.
    pub fn zipf(&self, word: &str) -> f64 {
        let key = word.to_lowercase();
        match self.bucket.get(&key) {
            Some(&i) => ((900 - i32::from(i)) as f64 / 100.0).max(0.0),
            None => 0.0,
        }
    }

    /// Relative frequency (per word of running text): 10^(Zipf − 9), 0 when unknown.
    pub fn frequency(&self, word: &str) -> f64 {
        let z = self.zipf(word);
        if z <= 0.0 { 0.0 } else { 10f64.powf(z - 9.0) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zipf_from_buckets() {
        let wf = WordFreq::from_buckets([("revenue".to_owned(), 436), ("the".to_owned(), 127)]);
        assert_eq!(wf.zipf("Revenue"), 4.64);
        assert_eq!(wf.zipf("the"), 7.73);
        assert_eq!(wf.zipf("giraffeish"), 0.0);
        assert!((wf.frequency("the") - 10f64.powf(-1.27)).abs() < 1e-12);
    }

    #[test]
    fn not_gzip_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.msgpack.gz");
        std::fs::write(&p, b"plain").unwrap();
        let err = WordFreq::load(&p).unwrap_err().to_string();
        assert!(
            err.contains("x.msgpack.gz") && err.contains("gzip"),
            "{err}"
        );
    }
}
