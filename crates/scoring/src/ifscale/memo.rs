//! Tokens and keywords packed into 16 bytes ([`pack`]), the open-addressing [`Table`] they key, and the [`Memo`]:
//! what each short ASCII token marks, kept across texts so that a repeated word is walked once. Also the FNV
//! hasher of [`Matcher::new`]'s set of the other keywords.

use super::Matcher;
use super::tokenizer::stretch_bits;

impl Matcher {
    /// An ASCII token, `text[start..end]`: what it marks comes from the memo, or from a walk that the memo then
    /// keeps.
    #[inline]
    pub(super) fn ascii_token(&mut self, text: &[u8], start: usize, end: usize) {
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
pub(super) struct Table<V> {
    /// 0 is an empty slot.
    keys: Vec<u128>,
    values: Vec<V>,
    used: usize,
}

impl<V: Copy + Default> Table<V> {
    const MAX_SLOTS: usize = 1 << 22;

    /// A table for about `n` keys before it first grows.
    pub(super) fn new(n: usize) -> Table<V> {
        let slots = (2 * n).next_power_of_two().max(16);
        Table {
            keys: vec![0; slots],
            values: vec![V::default(); slots],
            used: 0,
        }
    }

    /// `Ok(slot)` of `key`, or `Err(slot)`: the empty slot to insert it at.
    #[inline]
    pub(super) fn find(&self, key: u128) -> Result<usize, usize> {
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

    pub(super) fn get(&self, key: u128) -> Option<V> {
        self.find(key).ok().map(|i| self.values[i])
    }

    /// Puts `key` at `slot`, found empty by [`Table::find`]. False when the table is full.
    pub(super) fn insert(&mut self, slot: usize, key: u128, value: V) -> bool {
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

/// In a [`Memo`] value's low half: the token marks more than two nodes, listed in [`Memo::more`].
const MORE: u32 = 1 << 31;

/// The ASCII tokens of up to 15 bytes seen so far, with what they mark (see [`Matcher`]): a repeated word (most of
/// a text's words, and of the next text's) is walked once. A value holds up to two
/// [`mark`](super::trie::mark)s (under 2^25), 0 for none; a token with more has [`MORE`] and the start of its list
/// in [`Memo::more`] in the low half, the list's length in the high one.
#[derive(Debug, Clone)]
pub(super) struct Memo {
    tokens: Table<u64>,
    more: Vec<u32>,
}

impl Memo {
    pub(super) fn new() -> Memo {
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
pub(super) fn index_key(kw: &[u8]) -> Option<u128> {
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

/// FNV-1a: a fast hash for the short keys of [`Matcher::new`]'s set (no untrusted-key flooding concern there:
/// the keys are the caller's own keywords).
#[derive(Default, Clone, Copy)]
pub(super) struct BuildFnv;

pub(super) struct Fnv(u64);

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

#[cfg(test)]
mod tests {
    use schema::ifscale::MatchMode;

    use super::*;
    use crate::ifscale::{lowercase, paper_status_naive};

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
}
