//! The vocabulary file (`<name>.tsv`) and its provenance report (`<name>.provenance.json`).
//!
//! [`read_terms`] reads either this TSV or a file of one term per line.

use std::path::Path;

use serde::Serialize;

use crate::Error;

/// Header line of the vocabulary TSV.
pub const TSV_HEADER: &str = "term\tdifficulty\tzipf\tlemma_of\tsource_counts";

/// One row of the vocabulary.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VocabEntry {
    /// The instruction word (a WordNet lemma, or an acronym in capitals).
    pub term: String,
    /// Mean perplexity of the difficulty completions (or the Zipf proxy; the provenance says which).
    pub difficulty: f64,
    /// wordfreq Zipf frequency of `term`.
    pub zipf: f64,
    /// Candidate spellings collapsed into this term by dedup and lemmatization, other than `term` itself.
    pub lemma_of: Vec<String>,
    /// Number of (filing, spelling) candidate proposals behind this term.
    pub source_counts: u64,
}

/// Renders the TSV: the header, then one row per entry in the given order.
pub fn to_tsv(entries: &[VocabEntry]) -> String {
    let mut out = String::from(TSV_HEADER);
    out.push('\n');
    for e in entries {
        out.push_str(&format!(
            "{}\t{:.4}\t{:.2}\t{}\t{}\n",
            e.term,
            e.difficulty,
            e.zipf,
            e.lemma_of.join(","),
            e.source_counts
        ));
    }
    out
}

/// Reads the terms of a vocabulary file: this crate's TSV (header `term\t…`) or a plain one-term-per-line list
/// (the paper's `vocab.txt`). Blank lines are skipped; a term must be a single word of letters.
pub fn read_terms(path: &Path) -> Result<Vec<String>, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let mut lines = text.lines().enumerate().peekable();
    let tsv = lines.peek().is_some_and(|(_, l)| l.starts_with("term\t"));
    if tsv {
        lines.next();
    }
    let mut out = Vec::new();
    for (i, line) in lines {
        let term = if tsv {
            line.split('\t').next().unwrap_or("")
        } else {
            line
        }
        .trim();
        if term.is_empty() {
            continue;
        }
        if !term.chars().all(|c| c.is_alphabetic()) {
            return Err(Error::Input {
                path: path.to_owned(),
                what: format!(
                    "line {}: field `term`: `{term}` is not a single word of letters",
                    i + 1
                ),
            });
        }
        out.push(term.to_owned());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tsv_round_trips_through_read_terms() {
        let rows = vec![
            VocabEntry {
                term: "lease".into(),
                difficulty: 12.3456,
                zipf: 4.1,
                lemma_of: vec!["leases".into(), "leasing".into()],
                source_counts: 3,
            },
            VocabEntry {
                term: "GAAP".into(),
                difficulty: 9.0,
                zipf: 3.0,
                lemma_of: vec![],
                source_counts: 1,
            },
        ];
        let tsv = to_tsv(&rows);
        assert_eq!(
            tsv,
            "term\tdifficulty\tzipf\tlemma_of\tsource_counts\nlease\t12.3456\t4.10\tleases,leasing\t3\nGAAP\t9.0000\t3.00\t\t1\n"
        );
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("v.tsv");
        std::fs::write(&p, tsv).unwrap();
        assert_eq!(read_terms(&p).unwrap(), ["lease", "GAAP"]);
        let q = dir.path().join("v.txt");
        std::fs::write(&q, "ESG\n\ndebt\nnet income\n").unwrap();
        let err = read_terms(&q).unwrap_err().to_string();
        assert!(err.contains("v.txt") && err.contains("line 4"), "{err}");
    }
}
