//! Where the keywords occur in a scored text, for showing a report with its keywords marked (the run explorer).
//!
//! The labels stay the truth: a keyword is marked exact only where it was labelled exact, modified only where it
//! was labelled modified, so the marks never disagree with the scores. Marking works on word tokens of the
//! original text (maximal runs of `\w` characters, lowercased one by one), so every offset is into the text as
//! written: a token equal to a keyword is an exact occurrence, a token made of its stem and ASCII lowercase letters
//! a modified one (the paper's `\b<stem>[a-z]*\b`). Keywords with other characters (a hyphen, a space) are found
//! by a case-insensitive search when the text is ASCII.

use std::collections::HashMap;

use schema::ifscale::KeywordStatus;

use super::{is_word_char, stem};

/// One marked occurrence: `text[start..end]` is keyword number `position` (0-based, list order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    pub start: usize,
    pub end: usize,
    pub position: u32,
    pub status: KeywordStatus,
}

/// The occurrences of `keywords` (with their labels, in list order) in `text`, sorted by start and never
/// overlapping (the first of two overlapping occurrences wins).
pub fn marks(text: &str, keywords: &[&str], labels: &[KeywordStatus]) -> Vec<Mark> {
    let mut exact: HashMap<String, Vec<u32>> = HashMap::new();
    let mut stems: HashMap<String, Vec<u32>> = HashMap::new();
    let mut other: Vec<(String, u32, KeywordStatus)> = Vec::new();
    for (i, (kw, &status)) in keywords.iter().zip(labels).enumerate() {
        let lower = kw.to_lowercase();
        if lower.is_empty() || status == KeywordStatus::Omitted {
            continue;
        }
        if !lower.chars().all(is_word_char) {
            other.push((lower, i as u32, status));
            continue;
        }
        match status {
            KeywordStatus::Exact => exact.entry(lower).or_default().push(i as u32),
            _ => stems
                .entry(stem(&lower).to_owned())
                .or_default()
                .push(i as u32),
        }
    }
    let mut out = Vec::new();
    if !exact.is_empty() || !stems.is_empty() {
        for (start, end) in word_tokens(text) {
            let token = text[start..end].to_lowercase();
            if let Some(&p) = exact.get(&token).and_then(|v| v.first()) {
                out.push(Mark {
                    start,
                    end,
                    position: p,
                    status: KeywordStatus::Exact,
                });
                continue;
            }
            if let Some(p) = stem_of(&token, &stems) {
                out.push(Mark {
                    start,
                    end,
                    position: p,
                    status: KeywordStatus::Modified,
                });
            }
        }
    }
    if text.is_ascii() {
        let lower = text.to_ascii_lowercase();
        for (kw, position, status) in &other {
            let mut from = 0;
            while let Some(i) = lower[from..].find(kw.as_str()) {
                let start = from + i;
                out.push(Mark {
                    start,
                    end: start + kw.len(),
                    position: *position,
                    status: *status,
                });
                from = start + 1;
            }
        }
    }
    out.sort_by_key(|m| (m.start, std::cmp::Reverse(m.end)));
    let mut kept: Vec<Mark> = Vec::with_capacity(out.len());
    for m in out {
        if kept.last().is_none_or(|k| m.start >= k.end) {
            kept.push(m);
        }
    }
    kept
}

/// The keyword position whose stem begins `token` and is followed by ASCII lowercase letters only.
fn stem_of(token: &str, stems: &HashMap<String, Vec<u32>>) -> Option<u32> {
    if stems.is_empty() {
        return None;
    }
    // The tail after the stem must be `[a-z]*`: only the prefixes that leave such a tail are candidates.
    let tail_from = token
        .bytes()
        .rposition(|b| !b.is_ascii_lowercase())
        .map_or(0, |i| i + 1);
    token
        .char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(token.len()))
        .filter(|&i| i >= tail_from && i > 0)
        .find_map(|i| stems.get(&token[..i]).and_then(|v| v.first().copied()))
}

/// Byte ranges of the maximal runs of word characters.
fn word_tokens(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let mut chars = text.char_indices().peekable();
    std::iter::from_fn(move || {
        let start = loop {
            let (i, c) = chars.next()?;
            if is_word_char(c) {
                break i;
            }
        };
        let mut end = text.len();
        while let Some(&(i, c)) = chars.peek() {
            if !is_word_char(c) {
                end = i;
                break;
            }
            chars.next();
        }
        Some((start, end))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ifscale::{MatchMode, Matcher};
    use KeywordStatus::{Exact, Modified, Omitted};

    fn marked(text: &str, kws: &[&str]) -> Vec<(String, u32, KeywordStatus)> {
        let labels = Matcher::new(MatchMode::Paper, kws)
            .expect("matcher")
            .label(text, kws);
        marks(text, kws, &labels)
            .into_iter()
            .map(|m| (text[m.start..m.end].to_owned(), m.position, m.status))
            .collect()
    }

    #[test]
    fn marks_follow_the_labels() {
        let text =
            "Accounting grew; the Revenue of the OEM rose. Our non-GAAP leverage, leveraging it.";
        let kws = [
            "accounts", "revenue", "oem", "non-gaap", "leverage", "absent",
        ];
        assert_eq!(
            marked(text, &kws),
            vec![
                ("Accounting".to_owned(), 0, Modified),
                ("Revenue".to_owned(), 1, Exact),
                ("OEM".to_owned(), 2, Exact),
                ("non-GAAP".to_owned(), 3, Exact),
                ("leverage".to_owned(), 4, Exact),
            ]
        );
    }

    #[test]
    fn every_labelled_keyword_is_marked_with_its_label() {
        let text = synthetic_text();
        let kws: Vec<&str> = [
            "growth", "market", "risks", "capital", "debt", "ratio", "equity", "zeta", "naïve",
            "déjà",
        ]
        .to_vec();
        let labels = Matcher::new(MatchMode::Paper, &kws)
            .expect("matcher")
            .label(&text, &kws);
        let got = marks(&text, &kws, &labels);
        for (i, label) in labels.iter().enumerate() {
            let statuses: Vec<KeywordStatus> = got
                .iter()
                .filter(|m| m.position == i as u32)
                .map(|m| m.status)
                .collect();
            match label {
                Omitted => assert!(statuses.is_empty(), "{}", kws[i]),
                s => {
                    assert!(
                        !statuses.is_empty(),
                        "{} labelled {s:?} but not marked",
                        kws[i]
                    );
                    assert!(statuses.iter().all(|x| x == s), "{}", kws[i]);
                }
            }
        }
        // Offsets are into the original text, on character boundaries.
        for m in &got {
            assert!(text.is_char_boundary(m.start) && text.is_char_boundary(m.end));
        }
    }

    fn synthetic_text() -> String {
        "Growth in the markets held; capitalization rose while debt_ratio stayed flat. Équity naïve déjàvu."
            .to_owned()
    }
}
