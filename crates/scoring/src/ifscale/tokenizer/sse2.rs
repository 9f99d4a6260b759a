//! The SSE2 path of the tokenizer's mask (x86_64 only; every x86_64 CPU has SSE2, so no run-time check).

/// For 64 bytes: bit `j` set when byte `j` can be in a stretch ([`IN_STRETCH`](super::IN_STRETCH)), and whether
/// any byte is non-ASCII. SSE2 (part of every x86_64 CPU) does 16 bytes per compare, against 8 per step of
/// [`stretch_bits`](super::stretch_bits).
#[inline]
pub(super) fn chunk_bits(chunk: &[u8; 64]) -> (u64, bool) {
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
