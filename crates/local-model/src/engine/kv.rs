//! A sequence's KV cells moved from a context with flash attention to one without: the two keep V in different
//! layouts, so llama.cpp refuses to load one's saved state into the other ("incompatible V transposition"), and
//! this module rewrites the state in between.
//!
//! The state is what `llama_state_seq_get_data_ext` writes for one sequence of a one-stream KV cache (the format of
//! the vendored llama.cpp, `llama_context::state_seq_get_data` and `llama_kv_cache::state_write`): a magic number
//! and the sequence id, the stream count, the cell count, each cell's position
//! and sequence ids, then a data header (`v_trans`, the layer count, two rotation fields), each layer's K rows
//! (type, row size, one row per cell), and each layer's V. With flash attention V is stored like K, one row per
//! cell (type, row size, rows); without it V is transposed (type, element size, components per cell, then each
//! component for every cell in turn). Both V headers take 12 bytes, so the rewrite is done in place: the header,
//! and each layer's block transposed. Anything that does not parse exactly to the end of the buffer is refused
//! with an error rather than guessed at, so a llama.cpp whose format changed fails its tests here.

use crate::Error;

/// The first four bytes of a sequence state (`io_magic` in llama.cpp's `llama-context.cpp`).
const STATE_MAGIC: u32 = 0xaf14_3cd8;

/// A `ggml_type` id and its element size, for the types a V cache may have here (not block-quantized).
fn element_size(ty: i32) -> Option<usize> {
    match ty {
        0 => Some(4),      // GGML_TYPE_F32
        1 | 30 => Some(2), // GGML_TYPE_F16, GGML_TYPE_BF16
        _ => None,
    }
}

/// A reader over the state that names the field it failed on.
struct Cursor<'a> {
    buf: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn take(&mut self, n: usize, what: &str) -> Result<std::ops::Range<usize>, Error> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&end| end <= self.buf.len())
            .ok_or_else(|| bad(&format!("it ends inside {what} (offset {})", self.at)))?;
        let range = self.at..end;
        self.at = end;
        Ok(range)
    }

    fn u32(&mut self, what: &str) -> Result<u32, Error> {
        let r = self.take(4, what)?;
        let mut b = [0u8; 4];
        b.copy_from_slice(&self.buf[r]);
        Ok(u32::from_ne_bytes(b))
    }

    fn i32(&mut self, what: &str) -> Result<i32, Error> {
        let r = self.take(4, what)?;
        let mut b = [0u8; 4];
        b.copy_from_slice(&self.buf[r]);
        Ok(i32::from_ne_bytes(b))
    }

    fn u64(&mut self, what: &str) -> Result<u64, Error> {
        let r = self.take(8, what)?;
        let mut b = [0u8; 8];
        b.copy_from_slice(&self.buf[r]);
        Ok(u64::from_ne_bytes(b))
    }
}

fn bad(why: &str) -> Error {
    Error::Engine(format!("cannot convert the KV state for decoding: {why}"))
}

fn size(n: u64, what: &str) -> Result<usize, Error> {
    usize::try_from(n).map_err(|_| bad(&format!("{what} {n} is too large")))
}

/// One layer's block of K or V: where its header and its data start, its element size and components per cell
/// (for K, whose rows are copied whole, `el` is the row size and `components` 1).
pub(super) struct Block {
    header: usize,
    pub(super) data: std::ops::Range<usize>,
    el: usize,
    components: usize,
}

/// Where the parts of a saved sequence state are.
pub(super) struct Layout {
    pub(super) cells: usize,
    /// Offset of the `v_trans` field.
    v_trans_at: usize,
    pub(super) v_trans: bool,
    pub(super) keys: Vec<Block>,
    pub(super) values: Vec<Block>,
}

/// Parse a sequence state of either V layout, to its last byte.
pub(super) fn layout(state: &[u8]) -> Result<Layout, Error> {
    let mut c = Cursor { buf: state, at: 0 };
    let magic = c.u32("the magic number")?;
    if magic != STATE_MAGIC {
        return Err(bad(&format!(
            "magic number {magic:#x}, expected {STATE_MAGIC:#x}"
        )));
    }
    c.i32("the sequence id")?;
    let streams = c.u32("the stream count")?;
    if streams != 1 {
        return Err(bad(&format!("{streams} streams, expected 1")));
    }
    let cells = size(u64::from(c.u32("the cell count")?), "cell count")?;
    let mut layout = Layout {
        cells,
        v_trans_at: c.at,
        v_trans: false,
        keys: Vec::new(),
        values: Vec::new(),
    };
    if cells == 0 {
        return if c.at == state.len() {
            Ok(layout)
        } else {
            Err(bad("bytes follow an empty stream"))
        };
    }
    for cell in 0..cells {
        c.i32("a cell position")?;
        let ids = c.u32("a cell's sequence count")?;
        if ids != 1 {
            return Err(bad(&format!(
                "cell {cell} belongs to {ids} sequences, expected 1"
            )));
        }
        c.take(4, "a cell's sequence id")?;
    }
    layout.v_trans_at = c.at;
    layout.v_trans = match c.u32("the V layout")? {
        0 => false,
        1 => true,
        other => return Err(bad(&format!("V layout {other}"))),
    };
    let layers = c.u32("the layer count")?;
    c.u32("the K rotation")?;
    c.u32("the V rotation")?;
    let block = |c: &mut Cursor<'_>, el: usize, components: usize, header: usize, what: &str| {
        let len = el
            .checked_mul(components)
            .and_then(|row| row.checked_mul(cells))
            .ok_or_else(|| bad(&format!("{what} is too large")))?;
        let data = c.take(len, what)?;
        Ok::<_, Error>(Block {
            header,
            data,
            el,
            components,
        })
    };
    for _ in 0..layers {
        let header = c.at;
        c.i32("a K type")?;
        let row = size(c.u64("a K row size")?, "K row size")?;
        let k = block(&mut c, row, 1, header, "a layer's K")?;
        layout.keys.push(k);
    }
    for layer in 0..layers {
        let header = c.at;
        let ty = c.i32("a V type")?;
        let el = element_size(ty)
            .ok_or_else(|| bad(&format!("layer {layer}'s V has ggml type {ty}")))?;
        let components = if layout.v_trans {
            let stored = size(u64::from(c.u32("a V element size")?), "V element size")?;
            if stored != el {
                return Err(bad(&format!(
                    "layer {layer}'s V elements of {stored} bytes for ggml type {ty}"
                )));
            }
            size(u64::from(c.u32("a V width")?), "V width")?
        } else {
            let row = size(c.u64("a V row size")?, "V row size")?;
            if row == 0 || row % el != 0 {
                return Err(bad(&format!(
                    "layer {layer}'s V rows of {row} bytes do not hold {el}-byte elements"
                )));
            }
            row / el
        };
        let v = block(&mut c, el, components, header, "a layer's V")?;
        layout.values.push(v);
    }
    if c.at != state.len() {
        return Err(bad(&format!(
            "{} bytes left after the last layer",
            state.len() - c.at
        )));
    }
    Ok(layout)
}

/// Rewrite `state`, saved from a flash-attention context, into the layout a context without flash attention loads.
/// `transpose(src, dst, rows, cols, el)` writes the transpose of `src` (`rows` × `cols` elements of `el` bytes, row
/// after row) into `dst`; `scratch` holds one layer's block meanwhile (kept for the next call).
pub(super) fn transpose_values(
    state: &mut [u8],
    scratch: &mut Vec<u8>,
    mut transpose: impl FnMut(&[u8], &mut [u8], usize, usize, usize) -> Result<(), Error>,
) -> Result<(), Error> {
    let layout = layout(state)?;
    if layout.cells == 0 {
        return Ok(());
    }
    if layout.v_trans {
        return Err(bad("V is already transposed"));
    }
    let at = layout.v_trans_at;
    state[at..at + 4].copy_from_slice(&1u32.to_ne_bytes());
    for b in &layout.values {
        let components = u32::try_from(b.components).map_err(|_| bad("V rows are too long"))?;
        let el = u32::try_from(b.el).map_err(|_| bad("V elements are too large"))?;
        state[b.header + 4..b.header + 8].copy_from_slice(&el.to_ne_bytes());
        state[b.header + 8..b.header + 12].copy_from_slice(&components.to_ne_bytes());
        let block = &mut state[b.data.clone()];
        scratch.clear();
        scratch.extend_from_slice(block);
        transpose(scratch, block, layout.cells, b.components, b.el)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain_transpose(
        src: &[u8],
        dst: &mut [u8],
        rows: usize,
        cols: usize,
        el: usize,
    ) -> Result<(), Error> {
        for r in 0..rows {
            for c in 0..cols {
                let from = (r * cols + c) * el;
                let to = (c * rows + r) * el;
                dst[to..to + el].copy_from_slice(&src[from..from + el]);
            }
        }
        Ok(())
    }

    /// A state as llama.cpp writes it for `cells` cells of sequence 0, with `layers` layers of f16 K and V of
    /// `components` elements per cell; V row by row (`v_trans` 0) or transposed (1). Element values name their
    /// layer, cell and component, so a misplaced one shows.
    fn state(cells: usize, layers: usize, components: usize, v_trans: bool) -> Vec<u8> {
        let mut s = Vec::new();
        s.extend_from_slice(&STATE_MAGIC.to_ne_bytes());
        s.extend_from_slice(&0i32.to_ne_bytes());
        s.extend_from_slice(&1u32.to_ne_bytes());
        s.extend_from_slice(&(cells as u32).to_ne_bytes());
        for cell in 0..cells {
            s.extend_from_slice(&(cell as i32).to_ne_bytes());
            s.extend_from_slice(&1u32.to_ne_bytes());
            s.extend_from_slice(&0i32.to_ne_bytes());
        }
        s.extend_from_slice(&u32::from(v_trans).to_ne_bytes());
        s.extend_from_slice(&(layers as u32).to_ne_bytes());
        s.extend_from_slice(&0u32.to_ne_bytes());
        s.extend_from_slice(&0u32.to_ne_bytes());
        let value = |kind: usize, layer: usize, cell: usize, comp: usize| {
            ((kind * 10_000 + layer * 1000 + cell * 16 + comp) as u16).to_ne_bytes()
        };
        for layer in 0..layers {
            s.extend_from_slice(&1i32.to_ne_bytes());
            s.extend_from_slice(&((components * 2) as u64).to_ne_bytes());
            for cell in 0..cells {
                for comp in 0..components {
                    s.extend_from_slice(&value(1, layer, cell, comp));
                }
            }
        }
        for layer in 0..layers {
            s.extend_from_slice(&1i32.to_ne_bytes());
            if v_trans {
                s.extend_from_slice(&2u32.to_ne_bytes());
                s.extend_from_slice(&(components as u32).to_ne_bytes());
                for comp in 0..components {
                    for cell in 0..cells {
                        s.extend_from_slice(&value(2, layer, cell, comp));
                    }
                }
            } else {
                s.extend_from_slice(&((components * 2) as u64).to_ne_bytes());
                for cell in 0..cells {
                    for comp in 0..components {
                        s.extend_from_slice(&value(2, layer, cell, comp));
                    }
                }
            }
        }
        s
    }

    #[test]
    fn a_row_state_becomes_the_transposed_state_byte_for_byte() {
        let mut s = state(5, 3, 4, false);
        transpose_values(&mut s, &mut Vec::new(), plain_transpose).unwrap();
        assert_eq!(s, state(5, 3, 4, true));
    }

    #[test]
    fn an_empty_sequence_is_left_alone_and_a_malformed_state_is_refused() {
        let mut empty = [
            STATE_MAGIC.to_ne_bytes(),
            0i32.to_ne_bytes(),
            1u32.to_ne_bytes(),
            0u32.to_ne_bytes(),
        ]
        .concat();
        transpose_values(&mut empty, &mut Vec::new(), plain_transpose).unwrap();

        let mut done = state(2, 1, 3, true);
        let e = transpose_values(&mut done, &mut Vec::new(), plain_transpose).unwrap_err();
        assert!(e.to_string().contains("already transposed"), "{e}");

        let mut cut = state(2, 2, 3, false);
        cut.pop();
        let e = transpose_values(&mut cut, &mut Vec::new(), plain_transpose).unwrap_err();
        assert!(e.to_string().contains("ends inside a layer's V"), "{e}");

        let mut longer = state(2, 2, 3, false);
        longer.push(0);
        let e = transpose_values(&mut longer, &mut Vec::new(), plain_transpose).unwrap_err();
        assert!(e.to_string().contains("1 bytes left"), "{e}");

        let mut two_streams = state(2, 1, 3, false);
        two_streams[8..12].copy_from_slice(&2u32.to_ne_bytes());
        let e = transpose_values(&mut two_streams, &mut Vec::new(), plain_transpose).unwrap_err();
        assert!(e.to_string().contains("2 streams"), "{e}");

        let mut other = state(2, 1, 3, false);
        other[0] ^= 1;
        let e = transpose_values(&mut other, &mut Vec::new(), plain_transpose).unwrap_err();
        assert!(e.to_string().contains("magic number"), "{e}");
    }
}
