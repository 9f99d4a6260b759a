//! The portable path of the tokenizer's mask: word arithmetic, no SIMD. The mask on every target but x86_64,
//! where it is compiled for its test only.

use super::stretch_bits;

/// For 64 bytes: bit `j` set when byte `j` can be in a stretch ([`IN_STRETCH`](super::IN_STRETCH)), and whether
/// any byte is non-ASCII; with word arithmetic, eight bytes per step of [`stretch_bits`].
#[inline]
pub(super) fn chunk_bits(chunk: &[u8; 64]) -> (u64, bool) {
    let (mut m, mut high) = (0u64, 0u64);
    for (j, eight) in chunk.chunks_exact(8).enumerate() {
        let x = u64::from_le_bytes(eight.try_into().unwrap_or_default());
        m |= stretch_bits(x) << (8 * j);
        high |= x & 0x8080_8080_8080_8080;
    }
    (m, high != 0)
}
