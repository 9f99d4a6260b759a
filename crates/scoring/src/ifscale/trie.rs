//! The compiled keywords and stems: a byte [`Trie`] to build them in, the same laid out for reading ([`Compact`]),
//! and the walk of one token through it, which yields the [`mark`]s the token sets in [`Matcher::hits`].

use super::{Error, Matcher};

/// Byte trie over the compiled keywords and their stems. Node 0 is the root; 0 as a child means "none".
#[derive(Debug, Default)]
pub(super) struct Trie {
    /// Children for `a`..=`z`, the bytes almost every keyword is made of.
    lower: Vec<[u32; 26]>,
    /// Children for any other byte (digits, `_`, UTF-8 of accented letters), sorted by byte.
    other: Vec<Vec<(u8, u32)>>,
    /// [`EXACT`]: a keyword ends here; [`STEM`]: a stem ends here.
    ends: Vec<u8>,
}

pub(super) const EXACT: u8 = 1;
pub(super) const STEM: u8 = 2;

impl Trie {
    pub(super) fn new() -> Trie {
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

    pub(super) fn insert(&mut self, word: &[u8], flag: u8) {
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
pub(super) struct Compact {
    pub(super) nodes: Vec<u32>,
    jump: Vec<u32>,
    jump_depth: usize,
    /// A bit per `jump` entry, set when it is not 0: the same answer from 2 KiB instead of 70 KiB, for the
    /// first test of every token.
    gate: Vec<u64>,
}

impl Compact {
    pub(super) fn new(trie: &Trie, shortest: usize) -> Result<Compact, Error> {
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
    pub(super) fn may_match(&self, token: &[u8]) -> bool {
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
    pub(super) fn find(&self, keyword: &str, stem_len: usize) -> Option<(u32, u32)> {
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

/// Where [`Matcher::hits`] records that a token satisfied `flag` ([`EXACT`] or [`STEM`]) at trie node `node`.
/// Never 0 (the root ends no keyword, as none is empty), so 0 can stand for "no mark".
#[inline]
pub(super) fn mark(node: u32, flag: u8) -> usize {
    2 * node as usize + usize::from(flag == STEM)
}

impl Matcher {
    /// Marks what one token (a maximal run of word characters; ASCII letters may still be uppercase) matches:
    /// the whole token a keyword, and each stem it starts with that only `[a-z]` follows. The [`mark`]s are also
    /// left in [`Matcher::marks`].
    #[inline]
    pub(super) fn walk(&mut self, token: &[u8]) {
        self.marks.clear();
        self.trie.walk(token, &mut self.marks);
        for &m in &self.marks {
            self.hits[m as usize] = 1;
        }
    }
}
