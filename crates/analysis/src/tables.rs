//! Writing tables: Parquet and CSV for every table, Markdown for the papers' tables (each also kept as a JSON
//! `schema::Table` beside it, which the report reads: [`read_tables`]); all atomic and byte-stable.

use std::io::Cursor;
use std::path::{Path, PathBuf};

use polars::prelude::*;

use schema::Table;

use crate::Error;

/// Writes `<dir>/<name>.parquet` and `<dir>/<name>.csv`, returning the paths written.
///
/// Text cells of the CSV that a spreadsheet would run as formulas are defused (`schema::csv_cell`); the Parquet
/// file keeps the values as they are.
pub fn write_table(df: &DataFrame, dir: &Path, name: &str) -> Result<Vec<PathBuf>, Error> {
    let mut df = df.clone();
    let mut csv = Vec::new();
    CsvWriter::new(&mut csv)
        .include_header(true)
        .finish(&mut csv_safe(&df).map_err(Error::polars(format!("writing {name}.csv")))?)
        .map_err(Error::polars(format!("writing {name}.csv")))?;
    let mut parquet = Cursor::new(Vec::new());
    ParquetWriter::new(&mut parquet)
        .with_statistics(StatisticsOptions::empty())
        .finish(&mut df)
        .map_err(Error::polars(format!("writing {name}.parquet")))?;
    let csv_path = dir.join(format!("{name}.csv"));
    let parquet_path = dir.join(format!("{name}.parquet"));
    schema::write_atomic(&csv_path, &csv)?;
    schema::write_atomic(&parquet_path, parquet.get_ref())?;
    Ok(vec![parquet_path, csv_path])
}

/// The frame with every text column's cells passed through `schema::csv_cell`.
fn csv_safe(df: &DataFrame) -> PolarsResult<DataFrame> {
    let mut out = df.clone();
    for col in df.columns() {
        if col.dtype() == &DataType::String {
            let safe: StringChunked = col
                .str()?
                .iter()
                .map(|v| v.map(|s| schema::csv_cell(s).into_owned()))
                .collect();
            out.replace(
                col.name(),
                safe.with_name(col.name().clone()).into_series().into(),
            )?;
        }
    }
    Ok(out)
}

/// A frame built from rows of `R` one column at a time: each column is a name and its value per row.
pub(crate) struct Columns<'r, R> {
    rows: &'r [R],
    columns: Vec<Column>,
}

impl<'r, R> Columns<'r, R> {
    pub(crate) fn of(rows: &'r [R]) -> Columns<'r, R> {
        Columns {
            rows,
            columns: Vec::new(),
        }
    }

    /// Adds column `name` with `value(row)` for every row.
    pub(crate) fn col<T, F>(self, name: &str, value: F) -> Columns<'r, R>
    where
        F: FnMut(&'r R) -> T,
        Series: NamedFrom<Vec<T>, [T]>,
    {
        let values: Vec<T> = self.rows.iter().map(value).collect();
        self.values(name, values)
    }

    /// Adds column `name` with values computed beforehand, one per row.
    pub(crate) fn values<T>(mut self, name: &str, values: Vec<T>) -> Columns<'r, R>
    where
        Series: NamedFrom<Vec<T>, [T]>,
    {
        self.columns.push(Column::new(name.into(), values));
        self
    }

    /// The frame; `what` names the table in an error.
    pub(crate) fn frame(self, what: &str) -> Result<DataFrame, Error> {
        DataFrame::new(self.rows.len(), self.columns)
            .map_err(Error::polars(format!("building the {what}")))
    }
}

/// A Markdown table: its file `<name>.md`, the caption above it and its header.
pub(crate) struct MdTable<'a> {
    pub(crate) name: &'a str,
    pub(crate) caption: &'a str,
    pub(crate) header: &'a [&'a str],
}

impl MdTable<'_> {
    /// Writes the table ([`write_table_markdown`]): one row for each of `rows` that `keep` keeps, with the cells `cells`
    /// gives.
    pub(crate) fn write_rows<R>(
        &self,
        dir: &Path,
        rows: &[R],
        keep: impl Fn(&R) -> bool,
        cells: impl Fn(&R) -> Vec<String>,
    ) -> Result<Vec<PathBuf>, Error> {
        let table = Table::left_aligned(self.header)
            .with_caption(self.caption)
            .with_rows(rows.iter().filter(|r| keep(r)).map(cells));
        write_table_markdown(dir, self.name, &table)
    }
}

/// How the table `<name>` is kept as data beside its Markdown: `<name>.table.json`.
const TABLE_JSON: &str = ".table.json";

/// Writes a table of left-aligned columns with `caption` above it ([`write_table_markdown`]); returns both paths.
pub fn write_markdown(
    dir: &Path,
    name: &str,
    caption: &str,
    header: &[&str],
    rows: &[Vec<String>],
) -> Result<Vec<PathBuf>, Error> {
    let table = Table::left_aligned(header)
        .with_caption(caption)
        .with_rows(rows.iter().cloned());
    write_table_markdown(dir, name, &table)
}

/// Writes the table as Markdown, `<dir>/<name>.md`, and as data, `<dir>/<name>.table.json` (what the report shows:
/// [`read_tables`]); returns both paths.
pub fn write_table_markdown(dir: &Path, name: &str, table: &Table) -> Result<Vec<PathBuf>, Error> {
    let md = dir.join(format!("{name}.md"));
    let json = dir.join(format!("{name}{TABLE_JSON}"));
    schema::write_atomic(&md, table.to_markdown().as_bytes())?;
    let data = serde_json::to_vec_pretty(table).map_err(|e| Error::Input {
        path: json.clone(),
        message: e.to_string(),
    })?;
    schema::write_atomic(&json, &data)?;
    Ok(vec![md, json])
}

/// Every table [`write_table_markdown`] wrote in `dir`, with its name, in name order (nothing when `dir` does not exist).
pub fn read_tables(dir: &Path) -> Result<Vec<(String, Table)>, Error> {
    let io = |path: &Path, e: &dyn std::fmt::Display| Error::Input {
        path: path.to_owned(),
        message: e.to_string(),
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    let mut files = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| io(dir, &e))?.path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if let Some(stem) = name.strip_suffix(TABLE_JSON) {
            files.push((stem.to_owned(), path.clone()));
        }
    }
    files.sort();
    files
        .into_iter()
        .map(|(name, path)| {
            let text = std::fs::read(&path).map_err(|e| io(&path, &e))?;
            let table = serde_json::from_slice(&text).map_err(|e| io(&path, &e))?;
            Ok((name, table))
        })
        .collect()
}

/// A table of left-aligned columns in Markdown, with `caption` above it (`schema::Table::to_markdown`).
pub fn markdown(caption: &str, header: &[&str], rows: &[Vec<String>]) -> String {
    Table::left_aligned(header)
        .with_caption(caption)
        .with_rows(rows.iter().cloned())
        .to_markdown()
}

/// Formats an optional float with `digits` decimals, `–` when undefined.
pub fn fmt_opt(v: Option<f64>, digits: usize) -> String {
    match v {
        Some(x) if x.is_finite() => format!("{x:.digits$}"),
        _ => "–".to_owned(),
    }
}

/// Reads a column as `Vec<Option<f64>>` (casting integers).
pub(crate) fn f64_col(df: &DataFrame, name: &str) -> Result<Vec<Option<f64>>, Error> {
    let s = df
        .column(name)
        .and_then(|c| c.cast(&DataType::Float64))
        .map_err(Error::polars(format!("column {name}")))?;
    let ca = s.f64().map_err(Error::polars(format!("column {name}")))?;
    Ok(ca.iter().collect())
}

/// Reads a column as `Vec<Option<i64>>`.
pub(crate) fn i64_col(df: &DataFrame, name: &str) -> Result<Vec<Option<i64>>, Error> {
    let s = df
        .column(name)
        .and_then(|c| c.cast(&DataType::Int64))
        .map_err(Error::polars(format!("column {name}")))?;
    let ca = s.i64().map_err(Error::polars(format!("column {name}")))?;
    Ok(ca.iter().collect())
}

/// Reads a string column.
pub(crate) fn str_col(df: &DataFrame, name: &str) -> Result<Vec<String>, Error> {
    let s = df
        .column(name)
        .map_err(Error::polars(format!("column {name}")))?;
    let ca = s.str().map_err(Error::polars(format!("column {name}")))?;
    Ok(ca
        .iter()
        .map(|v| v.unwrap_or_default().to_owned())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_cells_that_look_like_formulas_are_defused_in_the_csv_only() {
        let dir = tempfile::tempdir().expect("tempdir");
        let df = df!(
            "model" => ["=cmd|' /C calc'!A0", "plain"],
            "delta_pp" => [-1.5, 2.0],
        )
        .expect("frame");
        write_table(&df, dir.path(), "t").expect("write");
        let csv = std::fs::read_to_string(dir.path().join("t.csv")).expect("csv");
        assert_eq!(csv, "model,delta_pp\n'=cmd|' /C calc'!A0,-1.5\nplain,2.0\n");
        let back =
            ParquetReader::new(std::fs::File::open(dir.path().join("t.parquet")).expect("parquet"))
                .finish()
                .expect("read");
        assert_eq!(
            back.column("model")
                .expect("model")
                .str()
                .expect("str")
                .get(0),
            Some("=cmd|' /C calc'!A0")
        );
    }
}
