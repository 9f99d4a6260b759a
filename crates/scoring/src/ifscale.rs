//! IFScale scoring: which of a report's required keywords are there exactly, modified or omitted; the per-sample
//! metrics; and the generation retry rules (constraint lists, refusals, the coherence judge's prompt and answer).
//!
//! # Paper mode (the published analysis)
//! The text and the keyword are lowercased (`str.lower()`). A keyword is **exact** when `\b<kw>\b` matches,
//! else **modified** when `\b<stem>[a-z]*\b` matches, with `stem` = the first `max(3, floor(0.8 · len))`
//! characters of the keyword, else **omitted**. `\b` and `\w` have Python 3's meaning for `str` patterns: a word
//! character is a Unicode letter or number (general category L or N) or `_`, so digits, underscores and accented
//! letters glued to a word break its boundary ("revenue_x", "revenue2024" and "revenueé" do not contain
//! "revenue"), while apostrophes and hyphens do not ("customer's", "customer’s" and "customer-driven" contain
//! "customer"). `[a-z]` is ASCII only.
//!
//! [`Matcher`] gives exactly these labels with one pass over each text for all keywords: an Aho–Corasick automaton
//! over every keyword and stem reports every (overlapping) occurrence, and each occurrence is checked against the
//! boundary conditions the regex would impose, so the result equals a per-keyword `re.search`.
//!
//! # Strict mode
//! `*` and `~` are removed, the text is split on whitespace, non-alphanumeric characters are trimmed from both ends
//! of each token, and tokens are lowercased. A keyword is exact when a token equals it (a `*` in the keyword matches
//! any run of characters), modified when a token starts with its stem, omitted otherwise. Possessives, plurals and
//! hyphenated compounds are therefore modifications, not hits.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use schema::ifscale::{
    KeywordLabel, KeywordStatus, MatchMode, RejectReason, SampleScore, SampleStatus,
};

/// Errors from building a matcher or reading a judge's answer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("keyword {position} (1-based) is empty")]
    EmptyKeyword { position: usize },
    #[error("cannot build the keyword automaton: {0}")]
    Automaton(String),
    /// The coherence judge's answer has no usable `score`.
    #[error("coherence verdict: {0}")]
    Verdict(String),
}

/// Python 3's `\w` for `str` patterns: general category L or N, or `_`.
pub fn is_word_char(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric() || c == '_';
    }
    static WORD: OnceLock<regex::Regex> = OnceLock::new();
    let re = WORD.get_or_init(|| regex::Regex::new(r"^[\p{L}\p{N}]$").expect("static pattern"));
    let mut buf = [0u8; 4];
    re.is_match(c.encode_utf8(&mut buf))
}

fn is_word(c: Option<char>) -> bool {
    c.is_some_and(is_word_char)
}

/// The stem used for the "modified" check: the first `max(3, floor(0.8 · len))` characters (all of a shorter word).
pub fn stem(keyword: &str) -> &str {
    let len = keyword.chars().count();
    let keep = ((len as f64 * 0.8) as usize).max(3);
    match keyword.char_indices().nth(keep) {
        Some((i, _)) => &keyword[..i],
        None => keyword,
    }
}

/// `\b` before `text[at..]` when the next character is `first`.
fn boundary_before(text: &str, at: usize, first: char) -> bool {
    is_word(text[..at].chars().next_back()) != is_word_char(first)
}

/// `\b` after `text[..at]` when the previous character is `last`.
fn boundary_after(text: &str, at: usize, last: char) -> bool {
    is_word_char(last) != is_word(text[at..].chars().next())
}

/// Does `\b<kw>\b` match at the occurrence `text[start..start + kw.len()]`?
fn exact_at(text: &str, start: usize, kw: &str) -> bool {
    let (Some(first), Some(last)) = (kw.chars().next(), kw.chars().next_back()) else {
        return false;
    };
    boundary_before(text, start, first) && boundary_after(text, start + kw.len(), last)
}

/// Does `\b<stem>[a-z]*\b` match with the stem at `text[start..start + stem.len()]`?
fn stem_at(text: &str, start: usize, stem: &str) -> bool {
    let (Some(first), Some(last)) = (stem.chars().next(), stem.chars().next_back()) else {
        return false;
    };
    if !boundary_before(text, start, first) {
        return false;
    }
    let end = start + stem.len();
    let run = text.as_bytes()[end..]
        .iter()
        .take_while(|b| b.is_ascii_lowercase())
        .count();
    // The greedy `[a-z]*` backs off one letter at a time; a boundary can only follow the whole run (letters are
    // word characters) or come right after the stem (when no letter is taken).
    (run > 0 && !is_word(text[end + run..].chars().next())) || boundary_after(text, end, last)
}

/// The paper's label for one keyword by direct search (no automaton): the reference the fast path must equal.
pub fn paper_status_naive(text_lower: &str, keyword_lower: &str) -> KeywordStatus {
    if keyword_lower.is_empty() {
        return KeywordStatus::Omitted;
    }
    if overlapping_indices(text_lower, keyword_lower)
        .any(|i| exact_at(text_lower, i, keyword_lower))
    {
        return KeywordStatus::Exact;
    }
    let st = stem(keyword_lower);
    if overlapping_indices(text_lower, st).any(|i| stem_at(text_lower, i, st)) {
        return KeywordStatus::Modified;
    }
    KeywordStatus::Omitted
}

/// Start offsets of every occurrence of `needle`, overlapping ones included (`str::match_indices` skips those).
fn overlapping_indices<'a>(hay: &'a str, needle: &'a str) -> impl Iterator<Item = usize> + 'a {
    let mut from = 0;
    std::iter::from_fn(move || {
        let i = from + hay.get(from..)?.find(needle)?;
        from = i + hay[i..].chars().next().map_or(1, char::len_utf8);
        Some(i)
    })
}

#[derive(Debug, Clone, Copy)]
enum Use {
    Exact(u32),
    Stem(u32),
}

/// Labels keywords in texts, compiled once for a set of keywords (e.g. a whole vocabulary).
///
/// Keywords outside that set are still labelled correctly, by a slower direct search.
#[derive(Debug)]
pub struct Matcher {
    mode: MatchMode,
    /// Lowercased keywords of the compiled set.
    keywords: Vec<String>,
    index: HashMap<String, u32>,
    /// Paper mode: the automaton and, per pattern, which keywords use it and how.
    automaton: Option<(AhoCorasick, Vec<Vec<Use>>)>,
}

impl Matcher {
    /// Compiles `keywords` (duplicates and case variants are merged). An empty keyword is an error.
    pub fn new<'a>(
        mode: MatchMode,
        keywords: impl IntoIterator<Item = &'a str>,
    ) -> Result<Matcher, Error> {
        let mut list = Vec::new();
        let mut index = HashMap::new();
        for (i, kw) in keywords.into_iter().enumerate() {
            if kw.is_empty() {
                return Err(Error::EmptyKeyword { position: i + 1 });
            }
            let lower = kw.to_lowercase();
            if !index.contains_key(&lower) {
                index.insert(lower.clone(), list.len() as u32);
                list.push(lower);
            }
        }
        let automaton = match mode {
            MatchMode::Strict => None,
            MatchMode::Paper => {
                let mut patterns: Vec<&str> = Vec::new();
                let mut uses: Vec<Vec<Use>> = Vec::new();
                let mut pattern_id: HashMap<&str, usize> = HashMap::new();
                for (k, kw) in list.iter().enumerate() {
                    for (pat, u) in [
                        (kw.as_str(), Use::Exact(k as u32)),
                        (stem(kw), Use::Stem(k as u32)),
                    ] {
                        let id = *pattern_id.entry(pat).or_insert_with(|| {
                            patterns.push(pat);
                            uses.push(Vec::new());
                            patterns.len() - 1
                        });
                        uses[id].push(u);
                    }
                }
                let ac = AhoCorasick::builder()
                    .match_kind(MatchKind::Standard)
                    .kind(Some(AhoCorasickKind::DFA))
                    .build(&patterns)
                    .or_else(|_| {
                        AhoCorasick::builder()
                            .match_kind(MatchKind::Standard)
                            .build(&patterns)
                    })
                    .map_err(|e| Error::Automaton(e.to_string()))?;
                Some((ac, uses))
            }
        };
        Ok(Matcher {
            mode,
            keywords: list,
            index,
            automaton,
        })
    }

    pub fn mode(&self) -> MatchMode {
        self.mode
    }

    /// The status of each of `keywords` (in their order) in `text`: one pass over the text.
    pub fn label(&self, text: &str, keywords: &[&str]) -> Vec<KeywordStatus> {
        let lower = text.to_lowercase();
        match &self.automaton {
            Some((ac, uses)) => self.label_paper(&lower, ac, uses, keywords),
            None => label_strict(&lower, keywords),
        }
    }

    fn label_paper(
        &self,
        lower: &str,
        ac: &AhoCorasick,
        uses: &[Vec<Use>],
        keywords: &[&str],
    ) -> Vec<KeywordStatus> {
        let n = self.keywords.len();
        let mut exact = vec![false; n];
        let mut stemmed = vec![false; n];
        for m in ac.find_overlapping_iter(lower) {
            for u in &uses[m.pattern().as_usize()] {
                match *u {
                    Use::Exact(k) => {
                        let k = k as usize;
                        if !exact[k] && exact_at(lower, m.start(), &self.keywords[k]) {
                            exact[k] = true;
                        }
                    }
                    Use::Stem(k) => {
                        let k = k as usize;
                        if !stemmed[k] && stem_at(lower, m.start(), stem(&self.keywords[k])) {
                            stemmed[k] = true;
                        }
                    }
                }
            }
        }
        keywords
            .iter()
            .map(|kw| {
                let kw_lower = kw.to_lowercase();
                match self.index.get(&kw_lower) {
                    Some(&k) if exact[k as usize] => KeywordStatus::Exact,
                    Some(&k) if stemmed[k as usize] => KeywordStatus::Modified,
                    Some(_) => KeywordStatus::Omitted,
                    None => paper_status_naive(lower, &kw_lower),
                }
            })
            .collect()
    }
}

/// Strict-mode tokens of a lowercased text.
fn strict_tokens(lower: &str) -> Vec<&str> {
    lower
        .split(|c: char| c.is_whitespace())
        .map(|t| t.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|t| !t.is_empty())
        .collect()
}

fn label_strict(lower: &str, keywords: &[&str]) -> Vec<KeywordStatus> {
    let cleaned: String = lower.chars().filter(|&c| c != '*' && c != '~').collect();
    let set: HashSet<&str> = strict_tokens(&cleaned).into_iter().collect();
    let mut sorted: Vec<&str> = set.iter().copied().collect();
    sorted.sort_unstable();
    keywords
        .iter()
        .map(|kw| {
            let kw = kw.to_lowercase();
            if kw.contains('*') {
                return if sorted.iter().any(|t| glob_match(&kw, t)) {
                    KeywordStatus::Exact
                } else {
                    KeywordStatus::Omitted
                };
            }
            if set.contains(kw.as_str()) {
                return KeywordStatus::Exact;
            }
            let st = stem(&kw);
            let from = sorted.partition_point(|t| *t < st);
            if sorted.get(from).is_some_and(|t| t.starts_with(st)) {
                KeywordStatus::Modified
            } else {
                KeywordStatus::Omitted
            }
        })
        .collect()
}

/// `*` matches any run of characters (possibly empty); everything else literally.
fn glob_match(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let tail: Vec<&str> = parts.collect();
    let Some((last, middle)) = tail.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// Counts and rates of one sample's labels.
#[derive(Debug, Clone, PartialEq)]
pub struct SampleMetrics {
    pub exact: u32,
    pub modified: u32,
    pub omitted: u32,
    /// Exact / N × 100.
    pub accuracy: f64,
    /// Omissions as a share of the errors, in percent (0 with no errors).
    pub omission_pct: f64,
    /// Modifications as a share of the errors, in percent (0 with no errors).
    pub modification_pct: f64,
    /// Miss rate among the last b constraints ÷ miss rate among the first b, b = max(1, N div 3); undefined when
    /// N < 3 or no early constraint was missed.
    pub primacy_ratio: Option<f64>,
}

/// The paper's per-sample metrics from labels in prompt order (a miss is anything but exact).
pub fn sample_metrics(statuses: &[KeywordStatus]) -> SampleMetrics {
    let count = |s: KeywordStatus| statuses.iter().filter(|&&x| x == s).count() as u32;
    let (exact, modified, omitted) = (
        count(KeywordStatus::Exact),
        count(KeywordStatus::Modified),
        count(KeywordStatus::Omitted),
    );
    let n = statuses.len();
    let errors = modified + omitted;
    let share = |part: u32| {
        if errors == 0 {
            0.0
        } else {
            f64::from(part) / f64::from(errors) * 100.0
        }
    };
    let primacy_ratio = if n < 3 {
        None
    } else {
        let b = (n / 3).max(1);
        let misses =
            |s: &[KeywordStatus]| s.iter().filter(|&&x| x != KeywordStatus::Exact).count() as f64;
        let early = misses(&statuses[..b]) / b as f64;
        let late = misses(&statuses[n - b..]) / b as f64;
        (early > 0.0).then(|| late / early)
    };
    SampleMetrics {
        exact,
        modified,
        omitted,
        accuracy: if n == 0 {
            0.0
        } else {
            f64::from(exact) / n as f64 * 100.0
        },
        omission_pct: share(omitted),
        modification_pct: share(modified),
        primacy_ratio,
    }
}

/// One sample to score: who, what was asked, and the report (None when every attempt failed).
#[derive(Debug, Clone)]
pub struct SampleInput<'a> {
    pub id: &'a str,
    pub model: &'a str,
    pub num_rules: u32,
    pub seed: u64,
    /// Keywords in prompt order.
    pub keywords: &'a [String],
    pub text: Option<&'a str>,
    pub latency_s: Option<f64>,
    pub output_tokens: Option<u64>,
    pub coherence: Option<f64>,
    pub attempts: u32,
}

/// Scores one sample: the per-sample row and one label per keyword (no labels for a failed sample).
pub fn score_sample(
    matcher: &Matcher,
    input: &SampleInput<'_>,
) -> (SampleScore, Vec<KeywordLabel>) {
    let mut score = SampleScore {
        id: input.id.to_owned(),
        model: input.model.to_owned(),
        num_rules: input.num_rules,
        seed: input.seed,
        mode: matcher.mode(),
        status: SampleStatus::Failed,
        accuracy: None,
        exact: 0,
        modified: 0,
        omitted: 0,
        omission_pct: None,
        modification_pct: None,
        primacy_ratio: None,
        latency_s: input.latency_s,
        output_tokens: input.output_tokens,
        coherence: input.coherence,
        attempts: input.attempts,
    };
    let Some(text) = input.text else {
        return (score, Vec::new());
    };
    let keywords: Vec<&str> = input.keywords.iter().map(String::as_str).collect();
    let statuses = matcher.label(text, &keywords);
    let m = sample_metrics(&statuses);
    score.status = SampleStatus::Scored;
    score.accuracy = Some(m.accuracy);
    score.exact = m.exact;
    score.modified = m.modified;
    score.omitted = m.omitted;
    score.omission_pct = Some(m.omission_pct);
    score.modification_pct = Some(m.modification_pct);
    score.primacy_ratio = m.primacy_ratio;
    let labels = statuses
        .iter()
        .zip(&keywords)
        .enumerate()
        .map(|(i, (&status, kw))| KeywordLabel {
            id: input.id.to_owned(),
            model: input.model.to_owned(),
            position: i as u32,
            keyword: (*kw).to_owned(),
            status,
            mode: matcher.mode(),
        })
        .collect();
    (score, labels)
}

// ---------------------------------------------------------------------------------------------------------------
// Retry rules.

/// Fewer whitespace-separated words than this is a refusal.
pub const MIN_WORDS: usize = 20;
/// This many comma-separated bare words (or more) is a constraint list.
pub const CONSTRAINT_LIST_MIN_PARTS: usize = 10;

/// Whitespace-separated words.
pub fn word_count(text: &str) -> usize {
    text.split_whitespace().count()
}

/// Rule (a): the text split on commas gives at least ten parts, and every part (trimmed) is a bare word `[A-Za-z]+`.
pub fn is_constraint_list(text: &str) -> bool {
    let mut parts = 0;
    for part in text.split(',') {
        let p = part.trim();
        if p.is_empty() || !p.bytes().all(|b| b.is_ascii_alphabetic()) {
            return false;
        }
        parts += 1;
    }
    parts >= CONSTRAINT_LIST_MIN_PARTS
}

/// Rules (a) and (b), in that order: the reason to reject a response text, or None when it passes.
pub fn check_response(text: &str) -> Option<RejectReason> {
    if is_constraint_list(text) {
        Some(RejectReason::ConstraintList)
    } else if word_count(text) < MIN_WORDS {
        Some(RejectReason::TooShort)
    } else {
        None
    }
}

/// The coherence judge's prompt for one report (a single user message).
pub fn coherence_judge_prompt(report: &str) -> String {
    let mut p = String::with_capacity(report.len() + 2_500);
    p.push_str(COHERENCE_RUBRIC);
    p.push_str("\n\n<report>\n");
    p.push_str(report.trim());
    p.push_str("\n</report>\n\nAnswer with the JSON object only.");
    p
}

const COHERENCE_RUBRIC: &str = "\
You are grading how coherent a business report is. Judge only whether it reads as a sensible, \
well-organized business document; ignore whether its facts are true and whether it uses any particular words.

Scores:
10 Pristine: polished and well organized; every sentence is purposeful and flows from the one before.
9 Excellent: clear structure and logical flow, with at most a stray awkward phrase.
8 Very good: well organized and sensible; a few clumsy sentences or slightly forced word choices.
7 Good: clearly a business report; some padding, repetition or abrupt transitions, but the argument holds.
6 Acceptable: a plausible business report overall, although noticeable passages are forced, generic or loosely connected.
5 Uneven: report-like structure, but many sentences exist only to carry words and the thread of the argument is often lost.
4 Weak: long stretches of stilted or contradictory text; sections barely relate to each other.
3 Poor: mostly strings of loosely related phrases or lists dressed as sentences; little sense can be made of it.
2 Broken: fragments, heavy repetition or word lists with only traces of a report.
1 Gibberish: no meaningful content; random words, endless repetition or unreadable text.

Reply with one JSON object and nothing else: {\"reason\": \"<one sentence>\", \"score\": <integer 1-10>}";

/// A parsed coherence verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct CoherenceVerdict {
    /// 1–10.
    pub score: u8,
    pub reason: String,
}

/// Reads the judge's answer: the JSON object in it (code fences and surrounding prose are tolerated), with an
/// integer `score` from 1 to 10 and a `reason`; a bare `"score": N` is accepted when the object does not parse.
pub fn parse_coherence_verdict(answer: &str) -> Result<CoherenceVerdict, Error> {
    let start = answer.find('{');
    let end = answer.rfind('}');
    if let (Some(s), Some(e)) = (start, end)
        && s < e
        && let Ok(serde_json::Value::Object(obj)) =
            serde_json::from_str::<serde_json::Value>(&answer[s..=e])
    {
        let score = match obj.get("score") {
            Some(serde_json::Value::Number(n)) => n.as_f64(),
            Some(serde_json::Value::String(s)) => s.trim().parse::<f64>().ok(),
            _ => None,
        };
        let reason = obj
            .get("reason")
            .and_then(|r| r.as_str())
            .unwrap_or_default()
            .trim()
            .to_owned();
        return match score {
            Some(v) if v.fract() == 0.0 && (1.0..=10.0).contains(&v) => Ok(CoherenceVerdict {
                score: v as u8,
                reason,
            }),
            Some(v) => Err(Error::Verdict(format!(
                "score {v} is not an integer from 1 to 10"
            ))),
            None => Err(Error::Verdict(
                "the JSON object has no numeric `score`".to_owned(),
            )),
        };
    }
    static LOOSE: OnceLock<regex::Regex> = OnceLock::new();
    let re = LOOSE.get_or_init(|| {
        regex::Regex::new(r#"(?i)"?score"?\s*:\s*"?(\d{1,2})\b"#).expect("static pattern")
    });
    match re.captures(answer).and_then(|c| c[1].parse::<u8>().ok()) {
        Some(v) if (1..=10).contains(&v) => Ok(CoherenceVerdict {
            score: v,
            reason: String::new(),
        }),
        Some(v) => Err(Error::Verdict(format!(
            "score {v} is not an integer from 1 to 10"
        ))),
        None => {
            let head: String = answer.chars().take(80).collect();
            Err(Error::Verdict(format!(
                "no JSON object with a score in {head:?}"
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paper(text: &str, kw: &str) -> KeywordStatus {
        Matcher::new(MatchMode::Paper, [kw])
            .unwrap()
            .label(text, &[kw])[0]
    }

    #[test]
    fn stems_follow_the_published_rule() {
        assert_eq!(stem("revenue"), "reven");
        assert_eq!(stem("tax"), "tax");
        assert_eq!(stem("ab"), "ab");
        assert_eq!(stem("roi"), "roi");
        assert_eq!(stem("accountability"), "accountabil");
        assert_eq!(stem("ébène"), "ébèn");
    }

    #[test]
    fn python_word_characters() {
        for c in ['a', 'Z', '0', '_', 'é', 'ß', 'ж', '漢', '²', 'Ⅻ'] {
            assert!(is_word_char(c), "{c}");
        }
        for c in [' ', '-', '\'', '’', '*', '\u{301}', '\u{203f}', 'Ⓐ', '€'] {
            assert!(!is_word_char(c), "{c:?}");
        }
    }

    #[test]
    fn overlapping_occurrences_are_all_seen() {
        // The first "aaa" occurrence fails its boundary; an overlapping later one succeeds.
        assert_eq!(paper("baaa aaa", "aaa"), KeywordStatus::Exact);
        assert_eq!(paper("aaaa", "aaa"), KeywordStatus::Modified);
        assert_eq!(
            overlapping_indices("aaaa", "aa").collect::<Vec<_>>(),
            vec![0, 1, 2]
        );
    }

    #[test]
    fn metrics_follow_the_paper() {
        use KeywordStatus::{Exact as E, Modified as M, Omitted as O};
        let m = sample_metrics(&[O, E, E, E, M, E, E, M, O, E]);
        assert_eq!((m.exact, m.modified, m.omitted), (6, 2, 2));
        assert_eq!(m.accuracy, 60.0);
        assert_eq!(m.omission_pct, 50.0);
        assert_eq!(m.modification_pct, 50.0);
        // b = 3: early misses 1/3, late misses 2/3.
        assert_eq!(m.primacy_ratio, Some(2.0));
        let m = sample_metrics(&[E, E, E, O]);
        assert_eq!(m.primacy_ratio, None, "no early miss");
        assert_eq!((m.omission_pct, m.modification_pct), (100.0, 0.0));
        let m = sample_metrics(&[O, O]);
        assert_eq!(m.primacy_ratio, None, "N < 3");
        let m = sample_metrics(&[E, E, E]);
        assert_eq!(
            (m.accuracy, m.omission_pct, m.modification_pct),
            (100.0, 0.0, 0.0)
        );
    }

    #[test]
    fn retry_rules() {
        let list = "revenue, audit, equity,tax, debt, ROI, ESG, asset, margin, yield";
        assert!(is_constraint_list(list));
        assert_eq!(check_response(list), Some(RejectReason::ConstraintList));
        assert!(
            !is_constraint_list("revenue, audit, equity, tax, debt, ROI, ESG, asset, margin"),
            "nine parts"
        );
        assert!(!is_constraint_list(
            "revenue, audit, equity, tax, debt, ROI, ESG, asset, margin, cash flow"
        ));
        assert!(!is_constraint_list(
            "revenue, audit, equity, tax, debt, ROI, ESG, asset, margin, yield, "
        ));
        assert_eq!(
            check_response("I cannot help with that request."),
            Some(RejectReason::TooShort)
        );
        let ok = "word ".repeat(20);
        assert_eq!(check_response(&ok), None);
        assert_eq!(
            check_response(&"word ".repeat(19)),
            Some(RejectReason::TooShort)
        );
    }

    #[test]
    fn verdicts_parse() {
        let v =
            parse_coherence_verdict("```json\n{\"reason\": \"Reads well.\", \"score\": 8}\n```")
                .unwrap();
        assert_eq!(
            v,
            CoherenceVerdict {
                score: 8,
                reason: "Reads well.".to_owned()
            }
        );
        assert_eq!(
            parse_coherence_verdict("{\"score\": \"6\", \"reason\": \"ok\"}")
                .unwrap()
                .score,
            6
        );
        assert_eq!(
            parse_coherence_verdict("Score: 3, because it is a list")
                .unwrap()
                .score,
            3
        );
        assert!(parse_coherence_verdict("{\"score\": 11}").is_err());
        assert!(parse_coherence_verdict("{\"score\": 6.5}").is_err());
        assert!(parse_coherence_verdict("no idea").is_err());
        let prompt = coherence_judge_prompt("  The report.  ");
        assert!(prompt.contains("<report>\nThe report.\n</report>"));
        assert!(prompt.contains("10 Pristine") && prompt.contains("1 Gibberish"));
    }

    #[test]
    fn glob() {
        assert!(glob_match("custom*", "customers"));
        assert!(glob_match("*ment", "payment"));
        assert!(glob_match("c*t*r", "customer"));
        assert!(!glob_match("c*t*r", "custom"));
        assert!(glob_match("a*a", "aa"));
        assert!(!glob_match("a*a", "a"));
    }
}
