//! Tables as data: a caption, columns (a name and an alignment each) and rows of text cells, rendered to Markdown
//! ([`Table::to_markdown`]) and CSV ([`Table::to_csv`]) here, and to HTML by `plots::html`'s templates.
//!
//! Every Markdown table the project writes is built as a [`Table`] and rendered here, so no code writes the pipes
//! by hand and no code reads Markdown back: a page that shows a table gets the [`Table`] itself (a table written to
//! disk for a later stage goes as JSON beside its Markdown, see `analysis::tables`).
//! It knows nothing of what the cells mean: formatting numbers is the caller's business.

use serde::{Deserialize, Serialize};

/// How a column's cells line up (Markdown's `---` or `---:`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Align {
    Left,
    Right,
}

/// A column: its header cell and its alignment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Column {
    pub name: String,
    pub align: Align,
}

/// A left-aligned column (text).
pub fn left(name: impl Into<String>) -> Column {
    Column {
        name: name.into(),
        align: Align::Left,
    }
}

/// A right-aligned column (numbers).
pub fn right(name: impl Into<String>) -> Column {
    Column {
        name: name.into(),
        align: Align::Right,
    }
}

/// A table of text cells; every row has one cell per column.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Table {
    /// Text above the table (Markdown: its own paragraph; HTML: the `<caption>`); empty for none.
    pub caption: String,
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// A table without caption or rows.
    pub fn new(columns: Vec<Column>) -> Table {
        Table {
            caption: String::new(),
            columns,
            rows: Vec::new(),
        }
    }

    /// A table whose columns are all left-aligned, named by `header`.
    pub fn left_aligned<S: AsRef<str>>(header: &[S]) -> Table {
        Table::new(header.iter().map(|h| left(h.as_ref())).collect())
    }

    /// The table with `caption` above it.
    pub fn with_caption(mut self, caption: impl Into<String>) -> Table {
        self.caption = caption.into();
        self
    }

    /// The table with `rows` appended.
    pub fn with_rows(mut self, rows: impl IntoIterator<Item = Vec<String>>) -> Table {
        self.rows.extend(rows);
        self
    }

    /// Appends a row (one cell per column).
    pub fn push(&mut self, row: Vec<String>) {
        debug_assert_eq!(row.len(), self.columns.len(), "a row of {row:?}");
        self.rows.push(row);
    }

    /// The header cells.
    pub fn header(&self) -> Vec<&str> {
        self.columns.iter().map(|c| c.name.as_str()).collect()
    }

    /// Markdown: the caption and a blank line (when there is a caption), the header, the alignment row (`---` left,
    /// `---:` right) and one line per row, each line ending in a newline. A `|` in a cell is written `\|` and a line
    /// break as a space, so a cell never breaks the table.
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        if !self.caption.is_empty() {
            out.push_str(&self.caption);
            out.push_str("\n\n");
        }
        markdown_line(&mut out, self.columns.iter().map(|c| c.name.as_str()));
        out.push('|');
        for c in &self.columns {
            out.push_str(match c.align {
                Align::Left => "---|",
                Align::Right => "---:|",
            });
        }
        out.push('\n');
        for row in &self.rows {
            markdown_line(&mut out, row.iter().map(String::as_str));
        }
        out
    }

    /// CSV: the header, then the rows, each line ending in `\n`; no caption. A cell is quoted when it holds a comma,
    /// a quote or a line break (quotes doubled), and text a spreadsheet would run as a formula is defused first
    /// ([`crate::csv_cell`]).
    pub fn to_csv(&self) -> String {
        let mut out = String::new();
        csv_line(&mut out, self.columns.iter().map(|c| c.name.as_str()));
        for row in &self.rows {
            csv_line(&mut out, row.iter().map(String::as_str));
        }
        out
    }
}

fn markdown_line<'a>(out: &mut String, cells: impl Iterator<Item = &'a str>) {
    out.push('|');
    for cell in cells {
        out.push(' ');
        for c in cell.chars() {
            match c {
                '|' => out.push_str("\\|"),
                '\n' | '\r' => out.push(' '),
                c => out.push(c),
            }
        }
        out.push_str(" |");
    }
    out.push('\n');
}

fn csv_line<'a>(out: &mut String, cells: impl Iterator<Item = &'a str>) {
    for (i, cell) in cells.enumerate() {
        if i > 0 {
            out.push(',');
        }
        let cell = crate::csv_cell(cell);
        if cell.contains([',', '"', '\n', '\r']) {
            out.push('"');
            out.push_str(&cell.replace('"', "\"\""));
            out.push('"');
        } else {
            out.push_str(&cell);
        }
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Table {
        Table::new(vec![left("model"), right("accuracy (%)"), left("note")]).with_rows([
            vec!["alpha".to_owned(), "87.5".to_owned(), "a|b".to_owned()],
            vec!["beta".to_owned(), "–".to_owned(), String::new()],
        ])
    }

    #[test]
    fn markdown_has_the_alignment_row_and_escapes_pipes() {
        assert_eq!(
            sample().to_markdown(),
            "| model | accuracy (%) | note |\n|---|---:|---|\n| alpha | 87.5 | a\\|b |\n| beta | – |  |\n"
        );
        assert_eq!(
            sample().with_caption("Cap.").to_markdown(),
            format!("Cap.\n\n{}", sample().to_markdown())
        );
    }

    #[test]
    fn a_line_break_in_a_cell_stays_on_the_row() {
        let mut t = Table::left_aligned(&["a|b"]);
        t.push(vec!["one\ntwo\r\n".to_owned()]);
        assert_eq!(t.to_markdown(), "| a\\|b |\n|---|\n| one two   |\n");
    }

    #[test]
    fn csv_quotes_what_needs_it_and_defuses_formulas() {
        let mut t = Table::left_aligned(&["text", "n"]);
        for cell in ["plain", "a,b", "say \"hi\"", "two\nlines", "=1+1", "-3"] {
            t.push(vec![cell.to_owned(), "1".to_owned()]);
        }
        assert_eq!(
            t.to_csv(),
            "text,n\nplain,1\n\"a,b\",1\n\"say \"\"hi\"\"\",1\n\"two\nlines\",1\n'=1+1,1\n-3,1\n"
        );
        assert_eq!(
            sample().to_csv(),
            "model,accuracy (%),note\nalpha,87.5,a|b\nbeta,–,\n"
        );
    }

    #[test]
    fn a_table_round_trips_through_json() {
        let t = sample().with_caption("c");
        let json = serde_json::to_string(&t).unwrap();
        assert!(json.contains("\"align\":\"right\""), "{json}");
        assert_eq!(serde_json::from_str::<Table>(&json).unwrap(), t);
        assert_eq!(t.header(), ["model", "accuracy (%)", "note"]);
    }
}
