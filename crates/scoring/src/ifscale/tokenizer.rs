//! Cuts a text into tokens in one pass, for [`Matcher`]: a bit mask per 64 bytes marks the bytes that can be
//! inside a token (ASCII word characters and every non-ASCII byte), and each run of set bits is one stretch. An
//! ASCII stretch is a token; one with other characters is lowercased and cut by character.
//!
//! The mask of a 64-byte chunk ([`chunk_bits`]) has two paths side by side: `sse2.rs`, 16 bytes per compare
//! (SSE2 is part of every x86_64 CPU), and `portable.rs`, word arithmetic 8 bytes per step, for every other
//! target (and compiled on x86_64 for its test). Both must equal the byte table [`IN_STRETCH`].
//!
//! Also [`lowercase`]: `str::to_lowercase`, faster on mostly-ASCII text.

#[cfg(target_arch = "x86_64")]
mod sse2;
// The portable path is compiled on x86_64 too, for the test that holds it to the SSE2 one and to the table.
#[cfg_attr(target_arch = "x86_64", cfg(test))]
mod portable;

#[cfg(not(target_arch = "x86_64"))]
use portable::chunk_bits;
#[cfg(target_arch = "x86_64")]
use sse2::chunk_bits;

use super::{Matcher, is_word_char};

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

impl Matcher {
    /// Sets [`Matcher::hits`]: which of [`EXACT`](super::trie::EXACT) and [`STEM`](super::trie::STEM) some token of
    /// `text` (lowercased on the fly, as [`lowercase`] would) satisfied at which trie node. False (and `hits`
    /// unfinished) when the text has a `Σ`, whose lowercase depends on its neighbours.
    ///
    /// Tokens are found without a branch per byte: a bit mask per 64 bytes marks the bytes that can be inside a
    /// token (ASCII word characters and every non-ASCII byte), and each run of set bits is one stretch. An ASCII
    /// stretch is a token; one with other characters is lowercased and cut by character.
    pub(super) fn mark(&mut self, text: &str) -> bool {
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
}

/// [`IN_STRETCH`] for eight bytes at once (bit `j` for byte `j`), with word arithmetic instead of lookups.
#[inline]
pub(super) fn stretch_bits(x: u64) -> u64 {
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
pub(super) static IN_STRETCH: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = (!c.is_ascii() || c.is_ascii_alphanumeric() || c == b'_') as u8;
        b += 1;
    }
    t
};

#[cfg(test)]
mod tests {
    use schema::ifscale::MatchMode;

    use super::*;
    use crate::ifscale::paper_status_naive;

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
                for (m, high) in [chunk_bits(&chunk), portable::chunk_bits(&chunk)] {
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
}
