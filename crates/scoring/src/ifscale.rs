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
//! [`Matcher`] gives exactly these labels with one pass over each text for all keywords: the text is cut into runs of
//! word characters once, and each run walks a trie of every keyword and stem, or finds what it marks in a memo of
//! the runs seen before (see [`Matcher`] for why that equals a per-keyword `re.search`).
//!
//! # Strict mode
//! `*` and `~` are removed, the text is split on whitespace, non-alphanumeric characters are trimmed from both ends
//! of each token, and tokens are lowercased. A keyword is exact when a token equals it (a `*` in the keyword matches
//! any run of characters), modified when a token starts with its stem, omitted otherwise. Possessives, plurals and
//! hyphenated compounds are therefore modifications, not hits.

use std::collections::HashSet;
use std::sync::OnceLock;

use schema::ifscale::{
    KeywordLabel, KeywordStatus, MatchMode, RejectReason, SampleScore, SampleStatus,
};

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

/// Byte trie over the compiled keywords and their stems. Node 0 is the root; 0 as a child means "none".
#[derive(Debug, Default)]
struct Trie {
    /// Children for `a`..=`z`, the bytes almost every keyword is made of.
    lower: Vec<[u32; 26]>,
    /// Children for any other byte (digits, `_`, UTF-8 of accented letters), sorted by byte.
    other: Vec<Vec<(u8, u32)>>,
    /// [`EXACT`]: a keyword ends here; [`STEM`]: a stem ends here.
    ends: Vec<u8>,
}

const EXACT: u8 = 1;
const STEM: u8 = 2;

impl Trie {
    fn new() -> Trie {
        let mut t = Trie::default();
        t.push_node();
        t
    }

    fn push_node(&mut self) -> u32 {
        self.lower.push([0; 26]);
        self.other.push(Vec::new());
        self.ends.push(0);
        (self.lower.len() - 1) as u32
    }

    #[inline]
    fn child(&self, node: u32, b: u8) -> u32 {
        if b.is_ascii_lowercase() {
            self.lower[node as usize][usize::from(b - b'a')]
        } else {
            let other = &self.other[node as usize];
            other
                .binary_search_by_key(&b, |&(k, _)| k)
                .map_or(0, |i| other[i].1)
        }
    }

    fn insert(&mut self, word: &[u8], flag: u8) {
        let mut node = 0;
        for &b in word {
            let mut next = self.child(node, b);
            if next == 0 {
                next = self.push_node();
                if b.is_ascii_lowercase() {
                    self.lower[node as usize][usize::from(b - b'a')] = next;
                } else {
                    let other = &mut self.other[node as usize];
                    let at = other.partition_point(|&(k, _)| k < b);
                    other.insert(at, (b, next));
                }
            }
            node = next;
        }
        self.ends[node as usize] |= flag;
    }
}

/// The [`Trie`] laid out for reading: nodes in breadth-first order in one `u32` array, so the walk touches a few
/// cache lines. A node at offset `o` is a header `ends | child_count << 8` followed by its children, each
/// `offset << 8 | byte`, sorted by byte. The root is at offset 0 (so 0 as a child offset means "none").
/// `jump` goes straight to the node of a token's first `jump_depth` lowercase ASCII letters (three, or two when
/// some keyword or stem is shorter, 0 for none), where almost every token's walk starts and most end.
#[derive(Debug, Clone)]
struct Compact {
    nodes: Vec<u32>,
    jump: Vec<u32>,
    jump_depth: usize,
    /// A bit per `jump` entry, set when it is not 0: the same answer from 2 KiB instead of 70 KiB, for the
    /// first test of every token.
    gate: Vec<u64>,
}

impl Compact {
    fn new(trie: &Trie, shortest: usize) -> Result<Compact, Error> {
        let children = |n: u32| -> Vec<(u8, u32)> {
            let mut c: Vec<(u8, u32)> = (b'a'..=b'z')
                .filter_map(|b| {
                    let next = trie.lower[n as usize][usize::from(b - b'a')];
                    (next != 0).then_some((b, next))
                })
                .collect();
            c.extend(trie.other[n as usize].iter().copied());
            c.sort_unstable();
            c
        };
        // Breadth-first order, each node's children and offset.
        let mut order = vec![0u32];
        let mut kids = Vec::with_capacity(trie.ends.len());
        let mut offset = vec![0u32; trie.ends.len()];
        let mut next_offset = 0usize;
        let mut k = 0;
        while k < order.len() {
            let n = order[k];
            offset[n as usize] = u32::try_from(next_offset)
                .ok()
                .filter(|&o| o < 1 << 24)
                .ok_or(Error::TooManyKeywords)?;
            let c = children(n);
            next_offset += 1 + c.len();
            order.extend(c.iter().map(|&(_, child)| child));
            kids.push(c);
            k += 1;
        }
        let mut nodes = Vec::with_capacity(next_offset);
        for (&n, c) in order.iter().zip(&kids) {
            nodes.push(u32::from(trie.ends[n as usize]) | (c.len() as u32) << 8);
            nodes.extend(
                c.iter()
                    .map(|&(b, child)| offset[child as usize] << 8 | u32::from(b)),
            );
        }
        let jump_depth = match shortest {
            0 | 1 => 0,
            2 => 2,
            _ => 3,
        };
        let mut compact = Compact {
            nodes,
            jump: vec![0; 26usize.pow(jump_depth as u32)],
            jump_depth,
            gate: Vec::new(),
        };
        if jump_depth > 0 {
            // Every path of `jump_depth` lowercase letters from the root (the rest of the table stays 0).
            let mut paths = vec![(0u32, 0usize)];
            for _ in 0..jump_depth {
                paths = paths
                    .iter()
                    .flat_map(|&(node, i)| {
                        let compact = &compact;
                        (b'a'..=b'z').filter_map(move |b| {
                            let next = compact.child(node, b);
                            (next != 0).then_some((next, i * 26 + usize::from(b - b'a')))
                        })
                    })
                    .collect();
            }
            compact.gate = vec![0; compact.jump.len().div_ceil(64)];
            for (node, i) in paths {
                compact.jump[i] = node;
                compact.gate[i / 64] |= 1 << (i % 64);
            }
        }
        Ok(compact)
    }

    /// False when a token (of ASCII word characters) certainly matches nothing: it is shorter than every keyword
    /// and stem, or its first three letters begin none of them.
    #[inline]
    fn may_match(&self, token: &[u8]) -> bool {
        if self.jump_depth != 3 {
            return token.len() >= self.jump_depth;
        }
        let [a, b, c, ..] = *token else {
            return false;
        };
        let (a, b, c) = (a | 0x20, b | 0x20, c | 0x20);
        if !(a.is_ascii_lowercase() && b.is_ascii_lowercase() && c.is_ascii_lowercase()) {
            return true;
        }
        let i = (usize::from(a - b'a') * 26 + usize::from(b - b'a')) * 26 + usize::from(c - b'a');
        self.gate[i / 64] & (1 << (i % 64)) != 0
    }

    /// The [`Compact::jump`] entry of a token that starts with `jump_depth` lowercase ASCII letters.
    #[inline]
    fn jump(&self, token: &[u8]) -> Option<u32> {
        let head = token.get(..self.jump_depth)?;
        let mut i = 0;
        for &b in head {
            let b = b.to_ascii_lowercase();
            if !b.is_ascii_lowercase() {
                return None;
            }
            i = i * 26 + usize::from(b - b'a');
        }
        Some(self.jump[i])
    }

    #[inline]
    fn ends(&self, node: u32) -> u8 {
        self.nodes[node as usize] as u8
    }

    #[inline]
    fn child(&self, node: u32, b: u8) -> u32 {
        let header = self.nodes[node as usize];
        let from = node as usize + 1;
        let list = &self.nodes[from..from + (header >> 8) as usize];
        for &e in list {
            if e as u8 == b {
                return e >> 8;
            }
        }
        0
    }

    /// The nodes of a lowercased `keyword` and of its stem (`stem_len` bytes), when both were compiled.
    fn find(&self, keyword: &str, stem_len: usize) -> Option<(u32, u32)> {
        let mut node = 0;
        let mut stem_node = 0;
        for (i, &b) in keyword.as_bytes().iter().enumerate() {
            node = self.child(node, b);
            if node == 0 {
                return None;
            }
            if i + 1 == stem_len {
                stem_node = node;
            }
        }
        (self.ends(node) & EXACT != 0 && self.ends(stem_node) & STEM != 0)
            .then_some((node, stem_node))
    }
}

/// FNV-1a: a fast hash for the short keys of [`Matcher::new`]'s set (no untrusted-key flooding concern there:
/// the keys are the caller's own keywords).
#[derive(Default, Clone, Copy)]
struct BuildFnv;

struct Fnv(u64);

impl std::hash::BuildHasher for BuildFnv {
    type Hasher = Fnv;
    fn build_hasher(&self) -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl std::hash::Hasher for Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    fn finish(&self) -> u64 {
        self.0
    }
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
    /// Each compiled keyword's packed bytes (see [`pack`]) with its node and its stem's node: a keyword is found
    /// with one probe instead of a walk.
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

    /// Sets [`Matcher::hits`]: which of [`EXACT`] and [`STEM`] some token of `text` (lowercased on the fly, as
    /// [`lowercase`] would) satisfied at which trie node. False (and `hits` unfinished) when the text has a `Σ`,
    /// whose lowercase depends on its neighbours.
    ///
    /// Tokens are found without a branch per byte: a bit mask per 64 bytes marks the bytes that can be inside a
    /// token (ASCII word characters and every non-ASCII byte), and each run of set bits is one stretch. An ASCII
    /// stretch is a token; one with other characters is lowercased and cut by character.
    fn mark(&mut self, text: &str) -> bool {
        self.hits.fill(0);
        let bytes = text.as_bytes();
        let (mask, non_ascii) = (&mut self.mask, &mut self.non_ascii);
        mask.clear();
        non_ascii.clear();
        let mut chunks = bytes.chunks_exact(64);
        for chunk in &mut chunks {
            let (m, high) = chunk_bits(chunk.try_into().unwrap_or(&[0; 64]));
            mask.push(m);
            non_ascii.push(high);
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            mask.push(rest.iter().enumerate().fold(0u64, |m, (j, &b)| {
                m | u64::from(IN_STRETCH[usize::from(b)]) << j
            }));
            non_ascii.push(!rest.is_ascii());
        }
        // A zero word ends the last stretch.
        mask.push(0);
        let mut scratch = String::new();
        // Each word's run starts and run ends (last bytes) are paired in order; a run that goes on past its word
        // leaves its start pending, and its end is the first one in a later word.
        let mut carry = 0u64;
        let mut pending = None;
        for w in 0..self.mask.len() - 1 {
            let (m, next) = (self.mask[w], self.mask[w + 1]);
            let mut starts = m & !(m << 1 | carry);
            let mut ends = m & !(m >> 1 | next << 63);
            carry = m >> 63;
            let base = w * 64;
            if let Some(start) = pending {
                if ends == 0 {
                    continue;
                }
                let end = base + ends.trailing_zeros() as usize + 1;
                ends &= ends - 1;
                pending = None;
                if !self.stretch_at(text, start, end, false, &mut scratch) {
                    return false;
                }
            }
            let ascii = !self.non_ascii[w];
            while ends != 0 {
                let start = base + starts.trailing_zeros() as usize;
                let end = base + ends.trailing_zeros() as usize + 1;
                starts &= starts - 1;
                ends &= ends - 1;
                if !self.stretch_at(text, start, end, ascii, &mut scratch) {
                    return false;
                }
            }
            if starts != 0 {
                pending = Some(base + starts.trailing_zeros() as usize);
            }
        }
        true
    }

    /// The stretch `text[start..end]` (`ascii` when it is known to be ASCII). False when it holds a `Σ`.
    #[inline(always)]
    fn stretch_at(
        &mut self,
        text: &str,
        start: usize,
        end: usize,
        ascii: bool,
        scratch: &mut String,
    ) -> bool {
        let bytes = text.as_bytes();
        let stretch = &bytes[start..end];
        if ascii || stretch.is_ascii() {
            if end - start <= 15 || self.trie.may_match(stretch) {
                self.ascii_token(bytes, start, end);
            }
        } else {
            let stretch = &text[start..end];
            if stretch.contains('Σ') {
                return false;
            }
            self.stretch(stretch, scratch);
        }
        true
    }

    /// An ASCII token, `text[start..end]`: what it marks comes from the memo, or from a walk that the memo then
    /// keeps.
    #[inline]
    fn ascii_token(&mut self, text: &[u8], start: usize, end: usize) {
        let Some(key) = pack(text, start, end - start) else {
            self.walk(&text[start..end]);
            return;
        };
        match self.memo.tokens.find(key) {
            Ok(slot) => {
                // Two marks or fewer (nearly always) are applied without a branch, and with plain stores (no
                // read that the next token's write would wait for): a missing one is 0, never read.
                let v = self.memo.tokens.values[slot];
                let (a, b) = (v as u32, (v >> 32) as u32);
                if a & MORE == 0 {
                    self.hits[a as usize] = 1;
                    self.hits[b as usize] = 1;
                } else {
                    let from = (a & !MORE) as usize;
                    for &m in &self.memo.more[from..from + b as usize] {
                        self.hits[m as usize] = 1;
                    }
                }
            }
            Err(slot) => {
                self.walk(&text[start..end]);
                self.memo.insert(slot, key, &self.marks);
            }
        }
    }

    /// A stretch with non-ASCII characters (`growth—driven`, `customer’s`, `revenueé`): lowercased, then cut into
    /// tokens by character (after lowercasing, as Python does: `İ` becomes `i` and a combining dot, which is not a
    /// word character). Tokens that come out ASCII go through the memo like any other.
    fn stretch(&mut self, stretch: &str, scratch: &mut String) {
        scratch.clear();
        // Start of the token being read in `scratch`, and whether it is ASCII so far.
        let mut from = None;
        let mut ascii = true;
        for c in stretch.chars() {
            if c.is_ascii() {
                // Every ASCII byte of a stretch is a word character.
                from.get_or_insert(scratch.len());
                scratch.push(c.to_ascii_lowercase());
                continue;
            }
            for c in c.to_lowercase() {
                if is_word_char(c) {
                    from.get_or_insert(scratch.len());
                    ascii &= c.is_ascii();
                    scratch.push(c);
                } else if let Some(f) = from.take() {
                    self.scratch_token(scratch, f, ascii);
                    ascii = true;
                }
            }
        }
        if let Some(f) = from {
            self.scratch_token(scratch, f, ascii);
        }
    }

    /// The token `scratch[from..]`, lowercased.
    fn scratch_token(&mut self, scratch: &str, from: usize, ascii: bool) {
        let bytes = scratch.as_bytes();
        if ascii {
            self.ascii_token(bytes, from, bytes.len());
        } else {
            self.walk(&bytes[from..]);
        }
    }

    /// Marks what one token (a maximal run of word characters; ASCII letters may still be uppercase) matches:
    /// the whole token a keyword, and each stem it starts with that only `[a-z]` follows. The [`mark`]s are also
    /// left in [`Matcher::marks`].
    #[inline]
    fn walk(&mut self, token: &[u8]) {
        self.marks.clear();
        self.trie.walk(token, &mut self.marks);
        for &m in &self.marks {
            self.hits[m as usize] = 1;
        }
    }
}

impl Compact {
    /// Pushes to `marks` what `token` marks (see [`Matcher::walk`]).
    #[inline]
    fn walk(&self, token: &[u8], marks: &mut Vec<u32>) {
        let low = |b: u8| b.to_ascii_lowercase();
        let (mut node, skip) = match self.jump(token) {
            Some(0) => return,
            Some(node) => (node, self.jump_depth),
            None => (0, 0),
        };
        // Where the final run of `[a-z]` starts (a stem ending before it is followed by something else);
        // found when the first stem is reached.
        let mut tail = None;
        let mut at = skip;
        loop {
            if at > 0 && self.ends(node) & STEM != 0 {
                let tail = *tail.get_or_insert_with(|| {
                    token
                        .iter()
                        .rposition(|&b| !low(b).is_ascii_lowercase())
                        .map_or(0, |p| p + 1)
                });
                if at >= tail {
                    marks.push(mark(node, STEM) as u32);
                }
            }
            let Some(&b) = token.get(at) else {
                break;
            };
            node = self.child(node, low(b));
            if node == 0 {
                return;
            }
            at += 1;
        }
        if self.ends(node) & EXACT != 0 {
            marks.push(mark(node, EXACT) as u32);
        }
    }
}

/// The token at `text[start..start + len]` packed into 16 bytes: its bytes with ASCII letters lowercased (`| 0x20`,
/// which keeps digits and maps `_` to DEL, never a token byte), padding that becomes 0x20, and its length in the
/// top byte; never 0. `None` for tokens over 15 bytes. One-to-one for tokens of ASCII word characters.
#[inline]
fn pack(text: &[u8], start: usize, len: usize) -> Option<u128> {
    if len > 15 {
        return None;
    }
    let raw = match text.get(start..start + 16) {
        Some(s) => u128::from_le_bytes(s.try_into().ok()?),
        None => load_short(&text[start..start + len]),
    };
    Some(finish_pack(raw & LOW_BYTES[len], len))
}

/// [`pack`] from the token's bytes (`raw`, zero past `len`).
#[inline]
fn finish_pack(raw: u128, len: usize) -> u128 {
    const LOWER: u128 = 0x0020_2020_2020_2020_2020_2020_2020_2020;
    raw | LOWER | (len as u128) << 120
}

/// `LOW_BYTES[n]` keeps the low `n` bytes of a `u128` (a table: a variable shift of a `u128` takes several
/// instructions).
static LOW_BYTES: [u128; 16] = {
    let mut t = [0u128; 16];
    let mut n = 0;
    while n < 16 {
        t[n] = (1u128 << (8 * n)) - 1;
        n += 1;
    }
    t
};

/// The bytes of `s` (under 16 of them) as a little-endian number: two overlapping loads instead of a copy (the
/// bytes where they overlap are the same, so or-ing them changes nothing).
#[inline]
fn load_short(s: &[u8]) -> u128 {
    let n = s.len();
    let word = |i: usize, w: usize| -> u128 {
        let mut b = [0u8; 8];
        b[..w].copy_from_slice(&s[i..i + w]);
        u128::from(u64::from_le_bytes(b)) << (8 * i)
    };
    match n {
        8.. => word(0, 8) | word(n - 8, 8),
        4..8 => word(0, 4) | word(n - 4, 4),
        _ => s.iter().rev().fold(0u128, |x, &b| x << 8 | u128::from(b)),
    }
}

/// An open-addressing hash table from [`pack`]ed keys to `V`, with linear probing; it doubles when half full, up
/// to [`Table::MAX_SLOTS`] (after that, inserts are dropped: every use here is a cache or an index that tolerates
/// a miss). Keys and values are in separate arrays, so that a probe reads 16-byte keys only.
#[derive(Debug, Clone)]
struct Table<V> {
    /// 0 is an empty slot.
    keys: Vec<u128>,
    values: Vec<V>,
    used: usize,
}

impl<V: Copy + Default> Table<V> {
    const MAX_SLOTS: usize = 1 << 22;

    /// A table for about `n` keys before it first grows.
    fn new(n: usize) -> Table<V> {
        let slots = (2 * n).next_power_of_two().max(16);
        Table {
            keys: vec![0; slots],
            values: vec![V::default(); slots],
            used: 0,
        }
    }

    /// `Ok(slot)` of `key`, or `Err(slot)`: the empty slot to insert it at.
    #[inline]
    fn find(&self, key: u128) -> Result<usize, usize> {
        let h = ((key as u64) ^ ((key >> 64) as u64).rotate_left(29))
            .wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let mask = self.keys.len() - 1;
        let mut i = (h >> 32) as usize & mask;
        loop {
            let k = self.keys[i];
            if k == key {
                return Ok(i);
            }
            if k == 0 {
                return Err(i);
            }
            i = (i + 1) & mask;
        }
    }

    fn get(&self, key: u128) -> Option<V> {
        self.find(key).ok().map(|i| self.values[i])
    }

    /// Puts `key` at `slot`, found empty by [`Table::find`]. False when the table is full.
    fn insert(&mut self, slot: usize, key: u128, value: V) -> bool {
        if (self.used + 1) * 2 <= self.keys.len() {
            self.keys[slot] = key;
            self.values[slot] = value;
        } else if self.keys.len() < Table::<V>::MAX_SLOTS {
            let mut bigger = Table::new(self.keys.len());
            for (&k, &v) in self.keys.iter().zip(&self.values).filter(|(k, _)| **k != 0) {
                if let Err(i) = bigger.find(k) {
                    (bigger.keys[i], bigger.values[i]) = (k, v);
                }
            }
            if let Err(i) = bigger.find(key) {
                (bigger.keys[i], bigger.values[i]) = (key, value);
            }
            bigger.used = self.used;
            *self = bigger;
        } else {
            return false;
        }
        self.used += 1;
        true
    }
}

/// Where [`Matcher::hits`] records that a token satisfied `flag` ([`EXACT`] or [`STEM`]) at trie node `node`.
/// Never 0 (the root ends no keyword, as none is empty), so 0 can stand for "no mark".
#[inline]
fn mark(node: u32, flag: u8) -> usize {
    2 * node as usize + usize::from(flag == STEM)
}

/// In a [`Memo`] value's low half: the token marks more than two nodes, listed in [`Memo::more`].
const MORE: u32 = 1 << 31;

/// The ASCII tokens of up to 15 bytes seen so far, with what they mark (see [`Matcher`]): a repeated word (most of
/// a text's words, and of the next text's) is walked once. A value holds up to two [`mark`]s (under 2^25), 0 for
/// none; a token with more has [`MORE`] and the start of its list in [`Memo::more`] in the
/// low half, the list's length in the high one.
#[derive(Debug, Clone)]
struct Memo {
    tokens: Table<u64>,
    more: Vec<u32>,
}

impl Memo {
    fn new() -> Memo {
        Memo {
            tokens: Table::new(2048),
            more: Vec::new(),
        }
    }

    /// Keeps `key` (found empty at `slot`) with its `marks`, unless the table is full.
    fn insert(&mut self, slot: usize, key: u128, marks: &[u32]) {
        let value = match *marks {
            [] => 0,
            [a] => u64::from(a),
            [a, b] => u64::from(a) | u64::from(b) << 32,
            _ => {
                let from = self.more.len();
                if from >= MORE as usize {
                    return;
                }
                self.more.extend_from_slice(marks);
                from as u64 | u64::from(MORE) | (marks.len() as u64) << 32
            }
        };
        self.tokens.insert(slot, key, value);
    }
}

/// A keyword's [`pack`]ed key, when it is made of ASCII word characters only (the packing is one-to-one there).
#[inline]
fn index_key(kw: &[u8]) -> Option<u128> {
    let n = kw.len();
    if n > 15 {
        return None;
    }
    // All `n` bytes ASCII (no high bit) and in a stretch, tested eight at a time.
    let raw = load_short(kw);
    let (lo, hi) = (raw as u64, (raw >> 64) as u64);
    let word = stretch_bits(lo) | stretch_bits(hi) << 8;
    let all = (1u64 << n) - 1;
    let high = (lo | hi) & 0x8080_8080_8080_8080;
    (high == 0 && word & all == all).then(|| finish_pack(raw, n))
}

/// For 64 bytes: bit `j` set when byte `j` can be in a stretch ([`IN_STRETCH`]), and whether any byte is
/// non-ASCII. SSE2 (part of every x86_64 CPU) does 16 bytes per compare, against 8 per step of [`stretch_bits`].
#[cfg(target_arch = "x86_64")]
#[inline]
fn chunk_bits(chunk: &[u8; 64]) -> (u64, bool) {
    use std::arch::x86_64::*;
    // SAFETY: the SSE2 intrinsics need the `sse2` target feature, which every x86_64 target has; each unaligned
    // load reads bytes `16 * k..16 * k + 16` of the 64-byte `chunk`.
    unsafe {
        let (mut m, mut high) = (0u64, 0u64);
        for k in 0..4 {
            let v = _mm_loadu_si128(chunk.as_ptr().add(16 * k).cast());
            let hi = _mm_movemask_epi8(v) as u32 as u64;
            let l = _mm_or_si128(v, _mm_set1_epi8(0x20));
            let letter = _mm_and_si128(
                _mm_cmpgt_epi8(l, _mm_set1_epi8(b'a' as i8 - 1)),
                _mm_cmplt_epi8(l, _mm_set1_epi8(b'z' as i8 + 1)),
            );
            let digit = _mm_and_si128(
                _mm_cmpgt_epi8(v, _mm_set1_epi8(b'0' as i8 - 1)),
                _mm_cmplt_epi8(v, _mm_set1_epi8(b'9' as i8 + 1)),
            );
            let under = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'_' as i8));
            let word = _mm_or_si128(_mm_or_si128(letter, digit), under);
            let bits = _mm_movemask_epi8(word) as u32 as u64 | hi;
            m |= bits << (16 * k);
            high |= hi;
        }
        (m, high != 0)
    }
}

/// [`chunk_bits`] where SSE2 is not there.
#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn chunk_bits(chunk: &[u8; 64]) -> (u64, bool) {
    chunk_bits_portable(chunk)
}

/// [`chunk_bits`] with word arithmetic (compiled on x86_64 for its test only).
#[cfg_attr(target_arch = "x86_64", cfg(test))]
#[inline]
fn chunk_bits_portable(chunk: &[u8; 64]) -> (u64, bool) {
    let (mut m, mut high) = (0u64, 0u64);
    for (j, eight) in chunk.chunks_exact(8).enumerate() {
        let x = u64::from_le_bytes(eight.try_into().unwrap_or_default());
        m |= stretch_bits(x) << (8 * j);
        high |= x & 0x8080_8080_8080_8080;
    }
    (m, high != 0)
}

/// [`IN_STRETCH`] for eight bytes at once (bit `j` for byte `j`), with word arithmetic instead of lookups.
#[inline]
fn stretch_bits(x: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let seven = x & !HIGH;
    // For 7-bit bytes v, bit 7 of v + (0x80 - lo) is set exactly when v >= lo (no carry leaves the byte).
    let at_least = |v: u64, lo: u8| (v + ONES * u64::from(0x80 - lo)) & HIGH;
    let within = |v: u64, lo: u8, hi: u8| at_least(v, lo) & !at_least(v, hi + 1);
    let word = within(seven | (ONES * 0x20), b'a', b'z')
        | within(seven, b'0', b'9')
        | within(seven, b'_', b'_');
    // Non-ASCII bytes (bit 7 set) are in every stretch; ASCII ones when they are word characters.
    let flags = (x & HIGH) | (word & !(x & HIGH));
    // Gather the eight flag bits into the low byte.
    ((flags >> 7).wrapping_mul(0x0102_0408_1020_4080)) >> 56
}

/// Bytes that can be part of a token: ASCII word characters, and every byte of a non-ASCII character (whether
/// that character is a word character is decided later, by character).
static IN_STRETCH: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = (!c.is_ascii() || c.is_ascii_alphanumeric() || c == b'_') as u8;
        b += 1;
    }
    t
};

/// `str::to_lowercase`, faster on mostly-ASCII text: the standard library converts everything after the first
/// non-ASCII character one character at a time through its tables, while this goes back to bytes after each one.
/// Only `Σ` depends on its neighbours; a text holding one takes the standard path.
pub fn lowercase(text: &str) -> String {
    if text.contains('Σ') {
        return text.to_lowercase();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        let ascii = rest
            .bytes()
            .position(|b| !b.is_ascii())
            .unwrap_or(rest.len());
        let (run, tail) = rest.split_at(ascii);
        out.push_str(run);
        let from = out.len() - run.len();
        out[from..].make_ascii_lowercase();
        let mut chars = tail.chars();
        if let Some(c) = chars.next() {
            out.extend(c.to_lowercase());
        }
        rest = chars.as_str();
    }
    out
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
        Matcher::new(MatchMode::Paper, &[kw])
            .unwrap()
            .label(text, &[kw])[0]
    }

    #[test]
    fn tables_grow_and_keep_every_key() {
        let mut t: Table<u64> = Table::new(4);
        for i in 1..=20_000u64 {
            let key = pack(format!("w{i}").as_bytes(), 0, format!("w{i}").len()).unwrap();
            match t.find(key) {
                Err(slot) => assert!(t.insert(slot, key, i)),
                Ok(_) => panic!("w{i} found before it was inserted"),
            }
        }
        assert_eq!(t.used, 20_000);
        for i in 1..=20_000u64 {
            let w = format!("w{i}");
            assert_eq!(t.get(pack(w.as_bytes(), 0, w.len()).unwrap()), Some(i));
        }
        assert_eq!(t.get(pack(b"w0", 0, 2).unwrap()), None);
    }

    /// Runs of word characters of every length from every offset in a 64-byte word, so that they start, end
    /// and cross word boundaries in every way (one and several words long).
    #[test]
    fn stretches_of_any_length_and_offset() {
        let keywords = ["revenue", "tax", "é"];
        let mut m = Matcher::new(MatchMode::Paper, &keywords).unwrap();
        for offset in 0..70 {
            for extra in 0..140 {
                let pad = "x ".repeat(offset / 2) + &" ".repeat(offset % 2);
                for token in [
                    format!("revenue{}", "a".repeat(extra)),
                    format!("{}_tax", "q".repeat(extra)),
                    format!("re{}venue", "é".repeat(extra % 3)),
                    format!("tax{}é", "z".repeat(extra)),
                ] {
                    for text in [format!("{pad}{token}"), format!("{pad}{token} tax.")] {
                        let lower = lowercase(&text);
                        let got = m.label(&text, &keywords);
                        for (kw, got) in keywords.iter().zip(got) {
                            assert_eq!(got, paper_status_naive(&lower, kw), "{kw} in {text:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn short_loads_equal_a_copy() {
        let text = b"abcdefghijklmnop";
        for len in 0..16 {
            let mut buf = [0u8; 16];
            buf[..len].copy_from_slice(&text[..len]);
            assert_eq!(load_short(&text[..len]), u128::from_le_bytes(buf), "{len}");
        }
    }

    /// The memo (tokens remembered across texts, with one, two or more marks, and a table that grows) must give
    /// what a fresh walk gives.
    #[test]
    fn remembered_tokens_label_as_fresh_ones() {
        // Nested stems: `accountabilities` marks the stems of `account` and `accountability`, and more.
        let keywords = [
            "account",
            "accountability",
            "accountabilities",
            "accounts",
            "tax",
            "taxation",
            "revenue",
        ];
        let mut shared = Matcher::new(MatchMode::Paper, &keywords).unwrap();
        let pool = [
            "accountabilities",
            "accountability",
            "accounting",
            "accounts",
            "Accou",
            "taxes",
            "TAXATION",
            "tax_1",
            "revenues",
            "rev",
            "the",
            "of",
        ];
        let mut state = 7u64;
        let mut next = |n: u64| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            (state >> 33) % n
        };
        for t in 0..300 {
            let mut text = String::new();
            for _ in 0..6 {
                text.push_str(pool[next(pool.len() as u64) as usize]);
                text.push(' ');
            }
            // Filler no keyword starts with, new in every text, so the memo grows past its first size.
            for j in 0..20 {
                text.push_str(&format!("zz{t}x{j} "));
            }
            let lower = lowercase(&text);
            let got = shared.label(&text, &keywords);
            for (kw, got) in keywords.iter().zip(got) {
                assert_eq!(got, paper_status_naive(&lower, kw), "{kw} in {text:?}");
            }
        }
        assert!(
            shared.memo.tokens.used > 4096,
            "{}",
            shared.memo.tokens.used
        );
        assert!(!shared.memo.more.is_empty());
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
    fn lowercase_equals_the_standard_library() {
        for t in [
            "",
            "Revenue",
            "ÉCOLE Straße",
            "naïve CAFÉ’S Growth",
            "İSTANBUL Ünited",
            "ΟΔΟΣ ΣΑΣ Σ",
            "\u{301}ABC\u{10400}XYZ",
            "mixed ÀB cD ÉF",
        ] {
            assert_eq!(lowercase(t), t.to_lowercase(), "{t:?}");
        }
    }

    #[test]
    fn chunk_bits_equal_the_table() {
        // Every byte value at every position of a chunk, with varied neighbours.
        for b in 0..=255u8 {
            for at in 0..64 {
                let mut chunk = [0u8; 64];
                for (j, c) in chunk.iter_mut().enumerate() {
                    *c = (j as u8).wrapping_mul(37).wrapping_add(b);
                }
                chunk[at] = b;
                for (m, high) in [chunk_bits(&chunk), chunk_bits_portable(&chunk)] {
                    for (j, &c) in chunk.iter().enumerate() {
                        let want = u64::from(IN_STRETCH[usize::from(c)]);
                        assert_eq!((m >> j) & 1, want, "{c:#x} at {j}");
                    }
                    assert_eq!(high, !chunk.is_ascii());
                }
            }
        }
    }

    #[test]
    fn word_arithmetic_equals_the_table() {
        let mut x: u64 = 0x0123_4567_89ab_cdef;
        let mut bytes: Vec<u8> = (0..=255).collect();
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            bytes.extend(x.to_le_bytes());
        }
        for eight in bytes.chunks_exact(8) {
            let want = eight.iter().enumerate().fold(0u64, |m, (j, &b)| {
                m | u64::from(IN_STRETCH[usize::from(b)]) << j
            });
            let got = stretch_bits(u64::from_le_bytes(eight.try_into().unwrap()));
            assert_eq!(got, want, "{eight:?}");
        }
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
