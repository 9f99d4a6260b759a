//! IFScale keyword matching against the published semantics and against a naive per-keyword regex.

use std::path::PathBuf;

use schema::ifscale::{KeywordStatus, MatchMode, SampleStatus};
use scoring::ifscale::{Matcher, SampleInput, is_word_char, score_sample, stem};

fn status_name(s: KeywordStatus) -> &'static str {
    match s {
        KeywordStatus::Exact => "exact",
        KeywordStatus::Modified => "modified",
        KeywordStatus::Omitted => "omitted",
    }
}

fn unescape(s: &str) -> String {
    s.replace("\\n", "\n")
        .replace("\\t", "\t")
        .replace("\\\\", "\\")
}

/// Expected labels in this fixture were computed with Python 3.11's `re` (see its header line).
#[test]
fn paper_mode_agrees_with_python_on_tricky_text() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("test_data/ifscale-tricky.tsv");
    let text = std::fs::read_to_string(&path).unwrap();
    let rows: Vec<Vec<&str>> = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split('\t').collect())
        .collect();
    assert!(rows.len() >= 50);
    let keywords: Vec<&str> = rows.iter().map(|r| r[1]).collect();
    let mut shared = Matcher::new(MatchMode::Paper, &keywords).unwrap();
    let mut empty = Matcher::new(MatchMode::Paper, &[]).unwrap();
    for r in &rows {
        let (t, kw, want, case) = (unescape(r[0]), r[1], r[2], r[3]);
        assert_eq!(
            status_name(shared.label(&t, &[kw])[0]),
            want,
            "{case}: {t:?} / {kw}"
        );
        // Keywords outside the compiled set take the direct-search path; same answer.
        assert_eq!(
            status_name(empty.label(&t, &[kw])[0]),
            want,
            "{case} (uncompiled): {t:?} / {kw}"
        );
        assert_eq!(
            naive_regex(&t.to_lowercase(), &kw.to_lowercase()),
            status_name(shared.label(&t, &[kw])[0])
        );
    }
}

/// The published rule written as one `regex` per keyword and check, Python's `\b` spelled out with its `\w`
/// (general category L or N, or `_`): an independent implementation of the same semantics.
struct NaiveRegex {
    exact: regex::Regex,
    modified: regex::Regex,
}

impl NaiveRegex {
    fn new(kw: &str) -> NaiveRegex {
        const W: &str = r"[\p{L}\p{N}_]";
        const NW: &str = r"[^\p{L}\p{N}_]";
        let left = |first: char| {
            if is_word_char(first) {
                format!("(?:^|{NW})")
            } else {
                W.to_owned()
            }
        };
        let right = |last: char| {
            if is_word_char(last) {
                format!("(?:{NW}|$)")
            } else {
                W.to_owned()
            }
        };
        let (first, last) = (kw.chars().next().unwrap(), kw.chars().next_back().unwrap());
        let exact = format!("{}{}{}", left(first), regex::escape(kw), right(last));
        let st = stem(kw);
        let st_last = st.chars().next_back().unwrap();
        let modified = format!(
            "{}{}(?:[a-z]+(?:{NW}|$)|{})",
            left(first),
            regex::escape(st),
            right(st_last)
        );
        NaiveRegex {
            exact: regex::Regex::new(&exact).unwrap(),
            modified: regex::Regex::new(&modified).unwrap(),
        }
    }

    fn status(&self, text_lower: &str) -> &'static str {
        if self.exact.is_match(text_lower) {
            "exact"
        } else if self.modified.is_match(text_lower) {
            "modified"
        } else {
            "omitted"
        }
    }
}

fn naive_regex(text: &str, kw: &str) -> &'static str {
    NaiveRegex::new(kw).status(text)
}

/// splitmix64: a self-contained generator for the random texts below.
struct Rand(u64);

impl Rand {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }
}

#[test]
fn one_pass_labels_equal_per_keyword_regex_on_random_text() {
    let keywords = [
        "revenue",
        "tax",
        "ESG",
        "roi",
        "lease",
        "leaseback",
        "audit",
        "auditor",
        "naïve",
        "straße",
        "co-payment",
        "customer",
        "cost",
        "costs",
        "accountability",
        "aaa",
        "e-commerce",
        "x_y",
        "2fa",
        "hedging",
    ];
    let glue = [
        " ", " ", " ", ", ", ". ", "-", "_", "'", "’", "2", "é", "\u{301}", "*", "**", "\n", "(",
        ")", "s", "es", "ing", "ed", "x", "S", "İ", "Σ", "ß", "\u{a0}", "1",
    ];
    let mut rng = Rand(7);
    let mut matcher = Matcher::new(MatchMode::Paper, &keywords).unwrap();
    let mut half = Matcher::new(MatchMode::Paper, &keywords[..10]).unwrap();
    let naive: Vec<NaiveRegex> = keywords
        .iter()
        .map(|k| NaiveRegex::new(&k.to_lowercase()))
        .collect();
    for _ in 0..2000 {
        let mut text = String::new();
        for _ in 0..(rng.next() % 40) {
            let word = rng.pick(&keywords);
            let word = match rng.next() % 4 {
                0 => word.to_uppercase(),
                1 => stem(word).to_owned(),
                _ => word.to_owned(),
            };
            text.push_str(&word);
            text.push_str(rng.pick(&glue));
        }
        let got = matcher.label(&text, &keywords);
        let got_half = half.label(&text, &keywords);
        let lower = text.to_lowercase();
        for (i, kw) in keywords.iter().enumerate() {
            let want = naive[i].status(&lower);
            assert_eq!(status_name(got[i]), want, "{kw} in {text:?}");
            assert_eq!(
                status_name(got_half[i]),
                want,
                "{kw} in {text:?} (partly compiled)"
            );
        }
    }
}

#[test]
fn strict_mode_is_whole_token() {
    let mut m = Matcher::new(MatchMode::Strict, &[]).unwrap();
    let text =
        "**Revenue** rose; the customer's view, customer-driven. Taxes _audit_ rev* ~~lease~~";
    let kws = [
        "revenue", "customer", "tax", "audit", "lease", "rev", "cust*", "equity", "*driven",
    ];
    let got: Vec<&str> = m.label(text, &kws).into_iter().map(status_name).collect();
    assert_eq!(
        got,
        [
            "exact", "modified", "modified", "exact", "exact", "exact", "exact", "omitted", "exact"
        ]
    );
}

#[test]
fn score_sample_counts_and_labels() {
    let mut m = Matcher::new(MatchMode::Paper, &["revenue", "tax", "audit"]).unwrap();
    let keywords: Vec<String> = ["audit", "tax", "revenue"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    let input = SampleInput {
        id: "ifscale-n003-s0",
        model: "m",
        num_rules: 3,
        seed: 0,
        keywords: &keywords,
        text: Some("Revenues grew after the audit."),
        latency_s: Some(1.5),
        output_tokens: Some(7),
        reasoning_tokens: Some(40),
        coherence: None,
        attempts: 1,
    };
    let (score, labels) = score_sample(&mut m, &input);
    assert_eq!(score.status, SampleStatus::Scored);
    assert_eq!(
        (score.output_tokens, score.reasoning_tokens),
        (Some(7), Some(40))
    );
    assert_eq!((score.exact, score.modified, score.omitted), (1, 1, 1));
    assert_eq!(score.primacy_ratio, None, "the first constraint was met");
    assert_eq!(labels.len(), 3);
    assert_eq!(
        (
            labels[2].position,
            labels[2].keyword.as_str(),
            labels[2].status
        ),
        (2, "revenue", KeywordStatus::Modified)
    );
    let failed = SampleInput {
        text: None,
        ..input
    };
    let (score, labels) = score_sample(&mut m, &failed);
    assert_eq!(
        (score.status, score.accuracy, labels.len()),
        (SampleStatus::Failed, None, 0)
    );
}

#[test]
fn the_report_span_is_what_lies_between_the_tags() {
    use scoring::ifscale::report_span;
    assert_eq!(
        report_span("Sure! <report>\nThe audit.\n</report> Note: tax."),
        "\nThe audit.\n"
    );
    assert_eq!(report_span("Intro <report>cut off"), "cut off");
    assert_eq!(report_span("no tags at all"), "no tags at all");
}
