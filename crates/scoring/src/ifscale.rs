//! IFScale scoring: which of a report's required keywords are there exactly, modified or omitted; the per-sample
//! metrics; and the generation retry rules (constraint lists, refusals, the coherence and refusal judges' prompts and
//! answers).
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
//! [`Matcher`] gives exactly these labels with one pass over each text for all keywords: the text is cut into runs of
//! word characters once, and each run walks a trie of every keyword and stem, or finds what it marks in a memo of
//! the runs seen before (see [`Matcher`] for why that equals a per-keyword `re.search`).
//!
//! # Strict mode
//! `*` and `~` are removed, the text is split on whitespace, non-alphanumeric characters are trimmed from both ends
//! of each token, and tokens are lowercased. A keyword is exact when a token equals it (a `*` in the keyword matches
//! any run of characters), modified when a token starts with its stem, omitted otherwise. Possessives, plurals and
//! hyphenated compounds are therefore modifications, not hits.
//!
//! # Code map
//! This module holds the public [`Matcher`], the published rule it must equal ([`paper_status_naive`]) and the
//! per-sample labels and metrics ([`score_sample`]). The rest is private, one concern per module:
//! - `tokenizer`: cuts a text into tokens in one pass, lowercasing on the fly, from a bit mask per 64 bytes; the
//!   mask's SSE2 path (x86_64) and portable path sit side by side in `tokenizer/sse2.rs` and
//!   `tokenizer/portable.rs`. Also [`lowercase`].
//! - `trie`: the keywords and stems compiled into a byte trie, and the walk of one token through it.
//! - `memo`: tokens packed into 16 bytes, the hash table they key, and the memo of what each short token marks.
//! - `strict`: strict mode.
//! - `marks`: where the labelled keywords occur in a text (for showing a report).
//! - `retry`: the generation retry rules ([`check_response`]) and the coherence judge's prompt and answer.
//! - [`refusal`]: the deterministic refusal detector ([`detect_refusal`]): content refusals, declines of the task as
//!   impractical, reports.
//! - `refusal_judge`: the optional refusal judge's prompt and the strict reading of its answer, for the replies the
//!   detector leaves uncertain ([`refusal_judge_prompt`], [`parse_refusal_verdict`]).
//! - `outcome`: the one outcome a sample ends in ([`sample_outcome`]).
//!
//! The memo is kept across texts, so [`Matcher::label`] takes `&mut self`. [`sample_metrics`] gives a sample's
//! accuracy, its omission and modification shares and its primacy ratio; `marks` where each labelled keyword occurs,
//! as offsets into the text as written (for the run explorer).

mod marks;
mod memo;
mod outcome;
pub mod refusal;
mod refusal_judge;
mod retry;
mod strict;
mod tokenizer;
mod trie;

use std::collections::HashSet;
use std::sync::OnceLock;

use schema::ifscale::{KeywordLabel, KeywordStatus, MatchMode, SampleScore, SampleStatus};

pub use marks::{Mark, marks};
pub use outcome::{attempt_outcome, sample_outcome};
pub use refusal::{RefusalVerdict, detect_refusal, refusal_kind};
pub use refusal_judge::{RefusalJudgeVerdict, parse_refusal_verdict, refusal_judge_prompt};
pub use retry::{
    CONSTRAINT_LIST_MIN_PARTS, CoherenceVerdict, MIN_WORDS, check_response, coherence_judge_prompt,
    is_constraint_list, is_constraint_list_under, longest_bare_word_run, parse_coherence_verdict,
    word_count,
};
pub use tokenizer::lowercase;

use memo::{BuildFnv, Memo, Table, index_key};
use strict::label_strict;
use trie::{Compact, EXACT, STEM, Trie, mark};

/// Errors from building a matcher or reading a judge's answer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("keyword {position} (1-based) is empty")]
    EmptyKeyword { position: usize },
    #[error(
        "too many keywords to compile into one matcher (the keyword trie is limited to 16 million entries)"
    )]
    TooManyKeywords,
    /// The coherence judge's answer has no usable `score`.
    #[error("coherence verdict: {0}")]
    Verdict(String),
    /// The refusal judge's answer has no readable verdict.
    #[error("refusal verdict: {0}")]
    RefusalVerdict(String),
}

/// Python 3's `\w` for `str` patterns: general category L or N, or `_`.
pub fn is_word_char(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric() || c == '_';
    }
    let ranges = word_ranges();
    let i = ranges.partition_point(|&(_, end)| end < c);
    ranges.get(i).is_some_and(|&(start, _)| start <= c)
}

/// The non-ASCII word characters as sorted, disjoint ranges: Unicode's general categories L and N, read from the
/// regex engine's own tables once.
fn word_ranges() -> &'static [(char, char)] {
    static RANGES: OnceLock<Vec<(char, char)>> = OnceLock::new();
    RANGES.get_or_init(|| {
        let hir = regex_syntax::Parser::new()
            .parse(r"[\p{L}\p{N}]")
            .expect("static pattern");
        match hir.kind() {
            regex_syntax::hir::HirKind::Class(regex_syntax::hir::Class::Unicode(class)) => class
                .ranges()
                .iter()
                .map(|r| (r.start(), r.end()))
                .filter(|&(_, end)| !end.is_ascii())
                .collect(),
            _ => Vec::new(),
        }
    })
}

fn is_word(c: Option<char>) -> bool {
    c.is_some_and(is_word_char)
}

/// The stem used for the "modified" check: the first `max(3, floor(0.8 · len))` characters (all of a shorter word).
pub fn stem(keyword: &str) -> &str {
    if keyword.is_ascii() {
        return &keyword[..((keyword.len() as f64 * 0.8) as usize)
            .max(3)
            .min(keyword.len())];
    }
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

/// Lowercases a keyword, borrowing it when it already is.
fn lower_keyword(kw: &str) -> std::borrow::Cow<'_, str> {
    if kw.bytes().any(|b| b.is_ascii_uppercase() || !b.is_ascii()) {
        kw.to_lowercase().into()
    } else {
        kw.into()
    }
}

/// Labels keywords in texts, compiled once for a set of keywords (e.g. a whole vocabulary).
///
/// Keywords outside that set are still labelled correctly, by a slower direct search.
///
/// How the one pass works: for a keyword made only of word characters, `\b<kw>\b` matches exactly when some
/// maximal run of word characters in the text (a *token*) equals it, and `\b<stem>[a-z]*\b` exactly when some
/// token starts with the stem and continues with ASCII lowercase letters only (the greedy `[a-z]*` cannot stop
/// between two letters, since both are word characters). So the text is cut into tokens once (lowercasing as it
/// goes); a token whose first three bytes begin some keyword or stem walks a byte trie of all of them, and the
/// nodes it reaches are marked. Keywords with other characters (a hyphen, an apostrophe) take the direct search.
///
/// What a token marks depends only on its lowercased bytes, so the matcher remembers it for short tokens (up to
/// 15 bytes, nearly all of them): the same word in a later text, or later in the same text, costs one table probe.
/// That is why labelling takes `&mut self`; clone the matcher to label on several threads.
#[derive(Debug, Clone)]
pub struct Matcher {
    mode: MatchMode,
    /// Paper mode: the compiled keywords and stems.
    trie: Compact,
    /// Each compiled keyword's packed bytes (see [`pack`](memo::pack)) with its node and its stem's node: a keyword
    /// is found with one probe instead of a walk.
    index: Table<(u32, u32)>,
    /// Short tokens seen so far and what they mark.
    memo: Memo,
    /// Per-text scratch, kept between texts: 1 at the [`mark`] of each (node, flag) the text satisfied.
    hits: Vec<u8>,
    /// Per-text scratch: a bit per byte of the text, set for bytes that can be inside a token.
    mask: Vec<u64>,
    /// Per-text scratch: which words of `mask` cover a non-ASCII byte.
    non_ascii: Vec<bool>,
    /// Per-token scratch: what the token being walked marks.
    marks: Vec<u32>,
}

impl Matcher {
    /// Compiles `keywords` (duplicates and case variants are merged). An empty keyword is an error.
    /// (Not generic, so that it is compiled, and optimised, with this crate.)
    pub fn new(mode: MatchMode, keywords: &[&str]) -> Result<Matcher, Error> {
        let mut trie = Trie::new();
        // The shortest pattern's length in bytes (a stem is never longer than its keyword).
        let mut shortest = usize::MAX;
        // Keyword lists repeat the same words many times; each distinct one is compiled once. Nearly all are
        // short and ASCII, and found again by their packed bytes (which merge case variants); the rest by spelling.
        let mut packed: Table<()> = Table::new(1024);
        let mut spelled: HashSet<&str, BuildFnv> = HashSet::default();
        let mut distinct = Vec::new();
        for (i, &kw) in keywords.iter().enumerate() {
            if kw.is_empty() {
                return Err(Error::EmptyKeyword { position: i + 1 });
            }
            if mode != MatchMode::Paper {
                continue;
            }
            let new = match index_key(kw.as_bytes()) {
                Some(key) => match packed.find(key) {
                    Ok(_) => false,
                    Err(slot) => {
                        // A full table only means a repeat may be compiled again, which changes nothing.
                        packed.insert(slot, key, ());
                        true
                    }
                },
                None => spelled.insert(kw),
            };
            if !new {
                continue;
            }
            distinct.push(kw);
            let lower = lower_keyword(kw);
            let stem = stem(&lower);
            // Inserting a keyword again (a case variant) changes nothing.
            if lower.chars().all(is_word_char) {
                trie.insert(lower.as_bytes(), EXACT);
                trie.insert(stem.as_bytes(), STEM);
                shortest = shortest.min(stem.len());
            }
        }
        let trie = Compact::new(&trie, shortest)?;
        let mut index = Table::new(distinct.len());
        for kw in distinct {
            let kw = lower_keyword(kw);
            if let (Some(key), Some(nodes)) =
                (index_key(kw.as_bytes()), trie.find(&kw, stem(&kw).len()))
                && let Err(slot) = index.find(key)
            {
                index.insert(slot, key, nodes);
            }
        }
        let hits = vec![0; 2 * trie.nodes.len()];
        Ok(Matcher {
            mode,
            trie,
            index,
            memo: Memo::new(),
            hits,
            mask: Vec::new(),
            non_ascii: Vec::new(),
            marks: Vec::new(),
        })
    }

    pub fn mode(&self) -> MatchMode {
        self.mode
    }

    /// The status of each of `keywords` (in their order) in `text`: one pass over the text.
    pub fn label(&mut self, text: &str, keywords: &[&str]) -> Vec<KeywordStatus> {
        match self.mode {
            MatchMode::Paper => self.label_paper(text, keywords),
            MatchMode::Strict => label_strict(&lowercase(text), keywords),
        }
    }

    fn label_paper(&mut self, text: &str, keywords: &[&str]) -> Vec<KeywordStatus> {
        let mut lower = None;
        if !self.mark(text) {
            // `Σ` lowercases by context: such a text is lowercased as a whole first (then it has no `Σ`).
            let l = lower.insert(lowercase(text));
            self.mark(l);
        }
        keywords
            .iter()
            .map(|&kw| match self.lookup(kw) {
                Some((exact, _)) if self.hits[mark(exact, EXACT)] != 0 => KeywordStatus::Exact,
                Some((_, stem)) if self.hits[mark(stem, STEM)] != 0 => KeywordStatus::Modified,
                Some(_) => KeywordStatus::Omitted,
                None => paper_status_naive(
                    lower.get_or_insert_with(|| lowercase(text)),
                    &lower_keyword(kw),
                ),
            })
            .collect()
    }

    /// The nodes of a keyword and its stem, when it was compiled.
    fn lookup(&self, kw: &str) -> Option<(u32, u32)> {
        match index_key(kw.as_bytes()) {
            // Packing lowercases.
            Some(key) => self.index.get(key),
            None => {
                let kw = lower_keyword(kw);
                self.trie.find(&kw, stem(&kw).len())
            }
        }
    }
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

/// The text between the first `<report>` and the `</report>` after it (to the end when the closing tag is missing;
/// the whole text when there is no opening tag), so words in a preamble or a trailing note do not count.
pub fn report_span(text: &str) -> &str {
    let Some(start) = text.find("<report>") else {
        return text;
    };
    let body = &text[start + "<report>".len()..];
    match body.find("</report>") {
        Some(end) => &body[..end],
        None => body,
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
    /// Visible output tokens (reasoning not included).
    pub output_tokens: Option<u64>,
    /// Reasoning tokens, when the provider reports them.
    pub reasoning_tokens: Option<u64>,
    pub coherence: Option<f64>,
    pub attempts: u32,
}

/// Scores one sample: the per-sample row and one label per keyword (no labels for a failed sample).
pub fn score_sample(
    matcher: &mut Matcher,
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
        reasoning_tokens: input.reasoning_tokens,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn paper(text: &str, kw: &str) -> KeywordStatus {
        Matcher::new(MatchMode::Paper, &[kw])
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
    fn word_ranges_equal_the_unicode_classes() {
        let re = regex::Regex::new(r"^[\p{L}\p{N}_]$").unwrap();
        let mut buf = [0u8; 4];
        for c in (0..=0x10_FFFF).filter_map(char::from_u32) {
            assert_eq!(
                is_word_char(c),
                re.is_match(c.encode_utf8(&mut buf)),
                "U+{:04X}",
                c as u32
            );
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
}
