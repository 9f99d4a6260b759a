//! Stage 2: candidate business terms per filing.
//!
//! Two extractors: an LLM one (prompts built here, responses parsed here; the caller runs them through the
//! inference client), and an offline keyness one that needs no model.
//!
//! The keyness extractor leaves names out by how they are capitalized and whether WordNet knows them;
//! [`parse_term_list`] reads an LLM's list of terms.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use crate::corpus::{Document, words};
use crate::wordfreq::WordFreq;

/// Settings of the offline keyness extractor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case", default)]
pub struct KeynessConfig {
    /// Candidates kept per filing.
    pub top_k: usize,
    /// Smoothing constant `n` of the ratio, in occurrences per million words.
    pub smoothing_per_million: f64,
    /// A word must occur at least this often in a filing to be a candidate of that filing.
    pub min_count: u64,
    /// Shortest word kept, in letters.
    pub min_len: usize,
    /// Longest word kept, in letters.
    pub max_len: usize,
    /// A word spelled in capitals in at least this share of its occurrences (and at most 6 letters long)
    /// is kept as an acronym in capitals (`GAAP`); every other word is lowercased.
    pub acronym_share: f64,
    /// A word capitalized like a name (first letter only) in at least this share of its occurrences, and not a
    /// common word (see [`crate::lemma::Lemmatizer::is_common_word`]), is a name and no candidate (`Mayer`,
    /// `Virginia`); the paper's LLM extractor asks for business terms, which leaves names out. Above 1 turns the
    /// filter off.
    pub name_share: f64,
}

impl Default for KeynessConfig {
    fn default() -> Self {
        KeynessConfig {
            top_k: 500,
            smoothing_per_million: 10.0,
            min_count: 2,
            min_len: 3,
            max_len: 20,
            acronym_share: 0.9,
            name_share: 0.9,
        }
    }
}

/// One filing's candidates, best first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FilingCandidates {
    pub filing: String,
    pub terms: Vec<String>,
}

/// How one word of a text is spelled: its occurrences, those in capitals, and those capitalized like a name.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Spellings {
    pub count: u64,
    pub caps: u64,
    pub title: u64,
}

/// Word counts of one text: lowercase word → its [`Spellings`]; and the number of words.
pub fn count_words(
    text: &str,
    min_len: usize,
    max_len: usize,
) -> (HashMap<String, Spellings>, u64) {
    let mut counts: HashMap<String, Spellings> = HashMap::new();
    let mut total = 0u64;
    for w in words(text) {
        total += 1;
        let n = w.len();
        if n < min_len || n > max_len {
            continue;
        }
        let caps = w.bytes().all(|b| b.is_ascii_uppercase());
        let title = !caps && w.as_bytes()[0].is_ascii_uppercase();
        let e = counts.entry(w.to_ascii_lowercase()).or_default();
        e.count += 1;
        e.caps += u64::from(caps);
        e.title += u64::from(title);
    }
    (counts, total)
}

/// Offline extractor: ranks each single alphabetic word of a filing by keyness against general English.
///
/// Keyness is Kilgarriff's "simple maths" smoothed ratio
/// `(fpm_filing + n) / (fpm_english + n)`, where fpm is the frequency per million words (the filing's own count
/// over its word count, and wordfreq's frequency for English, 0 when wordfreq does not know the word) and `n` is
/// `smoothing-per-million`. A small `n` favours rare words, a large one favours common words that are much more
/// frequent in the filing. Ties break alphabetically, so the ranking is deterministic. Names (see
/// [`KeynessConfig::name_share`]; `is_common` tells common words) are left out.
pub fn keyness_candidates(
    doc: &Document,
    wf: &WordFreq,
    is_common: &dyn Fn(&str) -> bool,
    cfg: &KeynessConfig,
) -> FilingCandidates {
    let (counts, total) = count_words(&doc.text, cfg.min_len, cfg.max_len);
    let total = total.max(1) as f64;
    let n = cfg.smoothing_per_million;
    let mut scored: Vec<(f64, String)> = counts
        .into_iter()
        .filter(|(_, s)| s.count >= cfg.min_count)
        .filter(|(w, s)| (s.title as f64) < cfg.name_share * s.count as f64 || is_common(w))
        .map(|(w, Spellings { count: c, caps, .. })| {
            let fpm = c as f64 / total * 1e6;
            let ref_fpm = wf.frequency(&w) * 1e6;
            let score = (fpm + n) / (ref_fpm + n);
            let term = if w.len() <= 6 && caps as f64 >= cfg.acronym_share * c as f64 {
                w.to_ascii_uppercase()
            } else {
                w
            };
            (score, term)
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    scored.truncate(cfg.top_k);
    FilingCandidates {
        filing: doc.name.clone(),
        terms: scored.into_iter().map(|(_, t)| t).collect(),
    }
}

/// Settings of the LLM extractor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct LlmExtractConfig {
    /// Model name from the models config.
    pub model: String,
    /// Path of the prompt template; `{n}` becomes the number of terms, `{filing}` the filing's text.
    pub prompt: std::path::PathBuf,
    /// Terms asked for per filing.
    pub top_k: usize,
    /// The filing text is cut to this many characters (at a word boundary) before it goes into the prompt.
    pub max_filing_chars: usize,
    pub max_tokens: u32,
}

/// Fills the extraction template for one filing.
pub fn extraction_prompt(template: &str, doc: &Document, cfg: &LlmExtractConfig) -> String {
    let mut text = doc.text.as_str();
    if text.len() > cfg.max_filing_chars {
        let mut cut = cfg.max_filing_chars;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        let cut = text[..cut].rfind(char::is_whitespace).unwrap_or(cut);
        text = &text[..cut];
    }
    template
        .replace("{n}", &cfg.top_k.to_string())
        .replace("{filing}", text)
}

/// Parses a model's answer into single-word terms.
///
/// Accepts a JSON array of strings anywhere in the text (also inside a ```json fence or an object such as
/// `{"terms": [...]}`); when no JSON parses, falls back to one term per line or comma. Only single words made of
/// letters (an inner hyphen or apostrophe is not a single word) are kept; duplicates are dropped, order kept.
pub fn parse_term_list(answer: &str) -> Vec<String> {
    let mut raw: Vec<String> = Vec::new();
    if let Some(list) = find_json_list(answer) {
        raw = list;
    } else {
        for part in answer.split(['\n', ',']) {
            let t = part
                .trim()
                .trim_start_matches(|c: char| {
                    c == '-' || c == '*' || c == '•' || c.is_ascii_digit() || c == '.' || c == ')'
                })
                .trim()
                .trim_matches(|c: char| c == '"' || c == '\'' || c == '`' || c == '[' || c == ']');
            raw.push(t.to_owned());
        }
    }
    let mut seen = std::collections::HashSet::new();
    raw.into_iter()
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty() && t.chars().all(|c| c.is_ascii_alphabetic()))
        .filter(|t| seen.insert(t.to_ascii_lowercase()))
        .collect()
}

fn find_json_list(answer: &str) -> Option<Vec<String>> {
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(answer.trim())
        && let Some(list) = strings_of(&v)
    {
        return Some(list);
    }
    // Try each '[' in turn: parse one JSON value starting there and ignore whatever follows it.
    for (start, _) in answer.match_indices('[') {
        let mut stream =
            serde_json::Deserializer::from_str(&answer[start..]).into_iter::<serde_json::Value>();
        if let Some(Ok(v)) = stream.next()
            && let Some(list) = strings_of(&v)
        {
            return Some(list);
        }
    }
    None
}

fn strings_of(v: &serde_json::Value) -> Option<Vec<String>> {
    match v {
        serde_json::Value::Array(items) => {
            let list: Vec<String> = items
                .iter()
                .filter_map(|i| i.as_str().map(str::to_owned))
                .collect();
            (!list.is_empty()).then_some(list)
        }
        serde_json::Value::Object(map) => map.values().find_map(strings_of),
        _ => None,
    }
}

/// How many filings proposed each term (case-insensitive key → count), for the `source_counts` column.
pub fn source_counts(lists: &[FilingCandidates]) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for l in lists {
        let mut seen = std::collections::HashSet::new();
        for t in &l.terms {
            let k = t.to_ascii_lowercase();
            if seen.insert(k.clone()) {
                *out.entry(k).or_insert(0) += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> Document {
        Document {
            name: "f.txt".into(),
            path: "f.txt".into(),
            sha256: String::new(),
            format: "text",
            text: text.into(),
        }
    }

    #[test]
    fn keyness_prefers_words_frequent_here_and_rare_in_english() {
        // "the" is very common in English; "amortization" rare; "giraffe" appears only once (below min count).
        let wf = WordFreq::from_buckets([
            ("the".to_owned(), 127),
            ("amortization".to_owned(), 603),
            ("revenue".to_owned(), 436),
            ("and".to_owned(), 150),
        ]);
        let text = "the amortization and the revenue and the amortization of the revenue and GAAP GAAP the giraffe";
        let cfg = KeynessConfig {
            top_k: 3,
            ..KeynessConfig::default()
        };
        let c = keyness_candidates(&doc(text), &wf, &|_| true, &cfg);
        assert_eq!(c.terms, ["GAAP", "amortization", "revenue"]);
    }

    #[test]
    fn names_are_left_out_unless_common_words() {
        let wf = WordFreq::from_buckets([("the".to_owned(), 127)]);
        // "Mayer" is always capitalized and no common word: a name. "Agreement" is always capitalized (a defined
        // term) but a common word. "lease" is mostly lowercase.
        let text = "the Mayer and the Agreement. Mayer signed the Agreement and the lease. Lease and lease. Mayer";
        let common = |w: &str| w != "mayer";
        let c = keyness_candidates(&doc(text), &wf, &common, &KeynessConfig::default());
        assert!(!c.terms.contains(&"mayer".to_owned()), "{:?}", c.terms);
        assert!(c.terms.contains(&"agreement".to_owned()), "{:?}", c.terms);
        assert!(c.terms.contains(&"lease".to_owned()), "{:?}", c.terms);
        let off = KeynessConfig {
            name_share: 1.1,
            ..KeynessConfig::default()
        };
        let c = keyness_candidates(&doc(text), &wf, &common, &off);
        assert!(c.terms.contains(&"mayer".to_owned()), "{:?}", c.terms);
    }

    #[test]
    fn parses_json_lists_robustly() {
        assert_eq!(
            parse_term_list("[\"revenue\", \"Lease\", \"net income\", \"revenue\"]"),
            ["revenue", "Lease"]
        );
        assert_eq!(
            parse_term_list(
                "Here you go:\n```json\n[\"debt\", \"equity\"]\n```\nHope this helps [1]."
            ),
            ["debt", "equity"]
        );
        assert_eq!(
            parse_term_list("{\"terms\": [\"goodwill\", \"EBITDA\"]}"),
            ["goodwill", "EBITDA"]
        );
        assert_eq!(
            parse_term_list("1. revenue\n2. margin\n- audit, tax-free"),
            ["revenue", "margin", "audit"]
        );
        assert!(parse_term_list("").is_empty());
    }

    #[test]
    fn prompt_cuts_long_filings_at_a_word_boundary() {
        let cfg = LlmExtractConfig {
            model: "m".into(),
            prompt: "p".into(),
            top_k: 500,
            max_filing_chars: 12,
            max_tokens: 100,
        };
        let p = extraction_prompt("Top {n}:\n{filing}", &doc("alpha beta gamma delta"), &cfg);
        assert_eq!(p, "Top 500:\nalpha beta");
    }
}
