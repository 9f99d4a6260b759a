//! Stage 3: fuzzy deduplication of the pooled candidate lists.
//!
//! Two terms are duplicates when their `strsim` normalized Levenshtein similarity reaches the threshold.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Settings of the fuzzy dedup.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct DedupConfig {
    /// Two terms are duplicates when `strsim::normalized_levenshtein` of their lowercase forms is at least this.
    pub threshold: f64,
}

impl Default for DedupConfig {
    fn default() -> Self {
        DedupConfig { threshold: 0.9 }
    }
}

/// A term that survived dedup, with the spellings merged into it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// The representative spelling (acronyms keep their capitals).
    pub term: String,
    /// How many filings proposed this term or one of its merged spellings (a filing counts once per spelling).
    pub source_count: u64,
    /// Other spellings merged into this one (lowercase), sorted.
    pub merged: Vec<String>,
}

/// Pools the per-filing lists and merges near-duplicates.
///
/// `counts` maps each lowercase term to the number of filings that proposed it; `display` gives the spelling to
/// keep for each lowercase term. Terms are visited by descending filing count, then ascending length, then
/// alphabetically; each joins the first representative already kept whose similarity is at or above the
/// threshold, otherwise it becomes a representative. So in a tie the more widely proposed, then shorter, then
/// alphabetically first spelling wins. Only pairs whose length difference allows the threshold are compared.
pub fn dedup(
    counts: &BTreeMap<String, u64>,
    display: &BTreeMap<String, String>,
    cfg: &DedupConfig,
) -> Vec<Candidate> {
    let mut order: Vec<(&String, u64)> = counts.iter().map(|(k, v)| (k, *v)).collect();
    order.sort_by(|a, b| {
        b.1.cmp(&a.1)
            .then(a.0.len().cmp(&b.0.len()))
            .then(a.0.cmp(b.0))
    });
    let mut reps: Vec<(String, Candidate)> = Vec::new();
    // The representatives' indices by length in characters, ascending, so a term is compared only with the lengths
    // the threshold allows (tens of thousands of candidates with an extra source); the hit is still the first
    // representative kept, as in a scan of all of them.
    let mut by_len: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (key, n) in order {
        let chars = key.chars().count();
        let len = chars as f64;
        let hit = by_len
            .iter()
            .filter(|(rl, _)| {
                let rl = **rl as f64;
                (len - rl).abs() / len.max(rl) <= 1.0 - cfg.threshold + 1e-12
            })
            .filter_map(|(_, idx)| {
                idx.iter()
                    .copied()
                    .find(|&i| strsim::normalized_levenshtein(&reps[i].0, key) >= cfg.threshold)
            })
            .min()
            .map(|i| &mut reps[i]);
        match hit {
            Some((_, cand)) => {
                cand.source_count += n;
                cand.merged.push(key.clone());
                cand.merged.sort();
            }
            None => {
                let term = display.get(key).cloned().unwrap_or_else(|| key.clone());
                by_len.entry(chars).or_default().push(reps.len());
                reps.push((
                    key.clone(),
                    Candidate {
                        term,
                        source_count: n,
                        merged: Vec::new(),
                    },
                ));
            }
        }
    }
    let mut out: Vec<Candidate> = reps.into_iter().map(|(_, c)| c).collect();
    out.sort_by(|a, b| {
        a.term
            .to_ascii_lowercase()
            .cmp(&b.term.to_ascii_lowercase())
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_duplicates_merge_into_the_most_proposed_spelling() {
        let counts: BTreeMap<String, u64> = [
            ("recognition", 3),
            ("recognitions", 1),
            ("licensor", 2),
            ("licensee", 2),
            ("consolidated", 2),
            ("consolidates", 2),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        let display = BTreeMap::new();
        let out = dedup(&counts, &display, &DedupConfig::default());
        let terms: Vec<(&str, u64)> = out
            .iter()
            .map(|c| (c.term.as_str(), c.source_count))
            .collect();
        // licensor/licensee are 0.75 similar: kept apart. consolidated/consolidates tie on count and length:
        // alphabetical order makes "consolidated" the representative.
        assert_eq!(
            terms,
            [
                ("consolidated", 4),
                ("licensee", 2),
                ("licensor", 2),
                ("recognition", 4)
            ]
        );
        assert_eq!(out[0].merged, ["consolidates"]);
        assert_eq!(out[3].merged, ["recognitions"]);
    }

    #[test]
    fn display_spelling_is_kept() {
        let counts: BTreeMap<String, u64> = [("gaap".to_owned(), 2)].into_iter().collect();
        let display: BTreeMap<String, String> = [("gaap".to_owned(), "GAAP".to_owned())]
            .into_iter()
            .collect();
        assert_eq!(
            dedup(&counts, &display, &DedupConfig::default())[0].term,
            "GAAP"
        );
    }
}
