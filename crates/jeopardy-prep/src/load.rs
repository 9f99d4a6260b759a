//! Reading the two public layouts of the Jeopardy! clue set: the JSON array and its CSV twin.

use std::path::Path;

use serde_json::Value;

use crate::Error;

/// One clue as it appears in a source file, with value and show number parsed but the text untouched.
#[derive(Debug, Clone, PartialEq)]
pub struct RawClue {
    /// `<file name>#<0-based record index>`.
    pub source: String,
    pub category: String,
    pub air_date: String,
    pub question: String,
    pub answer: String,
    pub round: String,
    /// Dollar value as aired; None for Final Jeopardy! and tiebreakers (`null` / `None`).
    pub value: Option<u32>,
    pub show_number: Option<u32>,
}

/// Which layout a file is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// A JSON array of objects with `category, air_date, question, value, answer, round, show_number`.
    Json,
    /// CSV with the header `Show Number, Air Date, Round, Category, Value, Question, Answer` (spaces allowed).
    Csv,
}

/// Guesses the layout from the first non-blank byte: `[` is JSON, anything else CSV.
pub fn detect_layout(bytes: &[u8]) -> Layout {
    let first = bytes
        .iter()
        .copied()
        .find(|b| !(b.is_ascii_whitespace() || *b == 0xEF || *b == 0xBB || *b == 0xBF));
    if first == Some(b'[') {
        Layout::Json
    } else {
        Layout::Csv
    }
}

/// Loads every clue of one file in either layout.
pub fn load_clues(path: &Path) -> Result<Vec<RawClue>, Error> {
    let bytes = std::fs::read(path).map_err(|source| Error::Io {
        path: path.to_owned(),
        source,
    })?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match detect_layout(&bytes) {
        Layout::Json => parse_json(path, &name, &bytes),
        Layout::Csv => parse_csv(path, &name, &bytes),
    }
}

fn malformed(path: &Path, record: usize, field: &str, message: impl Into<String>) -> Error {
    Error::Malformed {
        path: path.to_owned(),
        record,
        field: field.to_owned(),
        message: message.into(),
    }
}

fn parse_json(path: &Path, name: &str, bytes: &[u8]) -> Result<Vec<RawClue>, Error> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| malformed(path, 0, ".", format!("not UTF-8: {e}")))?;
    let text = text.trim_start_matches('\u{feff}');
    let items: Vec<Value> = serde_json::from_str(text)
        .map_err(|e| malformed(path, 0, ".", format!("not a JSON array of clues: {e}")))?;
    let mut clues = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let Value::Object(obj) = item else {
            return Err(malformed(path, i, ".", "expected an object"));
        };
        let text_field = |field: &str| -> Result<String, Error> {
            match obj.get(field) {
                Some(Value::String(s)) => Ok(s.clone()),
                Some(Value::Number(n)) => Ok(n.to_string()),
                Some(other) => Err(malformed(
                    path,
                    i,
                    field,
                    format!("expected a string, found {other}"),
                )),
                None => Err(malformed(path, i, field, "missing field")),
            }
        };
        let value = match obj.get("value") {
            None => return Err(malformed(path, i, "value", "missing field")),
            Some(Value::Null) => None,
            Some(Value::String(s)) => parse_value(s).map_err(|m| malformed(path, i, "value", m))?,
            Some(Value::Number(n)) => Some(
                n.as_u64()
                    .and_then(|v| u32::try_from(v).ok())
                    .ok_or_else(|| {
                        malformed(path, i, "value", format!("not a dollar amount: {n}"))
                    })?,
            ),
            Some(other) => {
                return Err(malformed(
                    path,
                    i,
                    "value",
                    format!("expected a string, found {other}"),
                ));
            }
        };
        let show_number = match obj.get("show_number") {
            None => return Err(malformed(path, i, "show_number", "missing field")),
            Some(Value::Null) => None,
            Some(Value::String(s)) => {
                parse_show_number(s).map_err(|m| malformed(path, i, "show_number", m))?
            }
            Some(Value::Number(n)) => Some(
                n.as_u64()
                    .and_then(|v| u32::try_from(v).ok())
                    .ok_or_else(|| {
                        malformed(path, i, "show_number", format!("not a show number: {n}"))
                    })?,
            ),
            Some(other) => {
                return Err(malformed(
                    path,
                    i,
                    "show_number",
                    format!("expected a string, found {other}"),
                ));
            }
        };
        let air_date = text_field("air_date")?;
        check_date(&air_date).map_err(|m| malformed(path, i, "air_date", m))?;
        clues.push(RawClue {
            source: format!("{name}#{i}"),
            category: text_field("category")?,
            air_date,
            question: text_field("question")?,
            answer: text_field("answer")?,
            round: text_field("round")?,
            value,
            show_number,
        });
    }
    Ok(clues)
}

const CSV_COLUMNS: [&str; 7] = [
    "Show Number",
    "Air Date",
    "Round",
    "Category",
    "Value",
    "Question",
    "Answer",
];

fn parse_csv(path: &Path, name: &str, bytes: &[u8]) -> Result<Vec<RawClue>, Error> {
    let bytes = bytes
        .strip_prefix(b"\xEF\xBB\xBF".as_slice())
        .unwrap_or(bytes);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(false)
        .from_reader(bytes);
    let headers = reader
        .headers()
        .map_err(|e| malformed(path, 0, "header", e.to_string()))?
        .clone();
    let mut index = [0usize; 7];
    for (slot, column) in index.iter_mut().zip(CSV_COLUMNS) {
        *slot = headers
            .iter()
            .position(|h| h.trim().eq_ignore_ascii_case(column))
            .ok_or_else(|| malformed(path, 0, column, "column missing from the header"))?;
    }
    let [show, date, round, category, value, question, answer] = index;
    let mut clues = Vec::new();
    for (i, row) in reader.records().enumerate() {
        let row = row.map_err(|e| malformed(path, i, ".", e.to_string()))?;
        let get = |col: usize| row.get(col).unwrap_or("").to_owned();
        let value = parse_value(&get(value)).map_err(|m| malformed(path, i, "Value", m))?;
        let show_number =
            parse_show_number(&get(show)).map_err(|m| malformed(path, i, "Show Number", m))?;
        let air_date = get(date).trim().to_owned();
        check_date(&air_date).map_err(|m| malformed(path, i, "Air Date", m))?;
        clues.push(RawClue {
            source: format!("{name}#{i}"),
            category: get(category),
            air_date,
            question: get(question),
            answer: get(answer),
            round: get(round).trim().to_owned(),
            value,
            show_number,
        });
    }
    Ok(clues)
}

/// Parses `$2,000`, `$200`, `200`; `None`, `null` and the empty string are no value.
pub fn parse_value(s: &str) -> Result<Option<u32>, String> {
    let t = s.trim();
    if t.is_empty() || t.eq_ignore_ascii_case("none") || t.eq_ignore_ascii_case("null") {
        return Ok(None);
    }
    let digits: String = t
        .strip_prefix('$')
        .unwrap_or(t)
        .chars()
        .filter(|c| *c != ',')
        .collect();
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
        return Err(format!("not a dollar amount: {s:?}"));
    }
    digits
        .parse::<u32>()
        .map(Some)
        .map_err(|_| format!("dollar amount out of range: {s:?}"))
}

fn parse_show_number(s: &str) -> Result<Option<u32>, String> {
    let t = s.trim();
    if t.is_empty() || t.eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    t.parse::<u32>()
        .map(Some)
        .map_err(|_| format!("not a show number: {s:?}"))
}

/// Air dates must be ISO `YYYY-MM-DD` (the value normalization compares them).
fn check_date(s: &str) -> Result<(), String> {
    let b = s.as_bytes();
    let ok = b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    if ok {
        Ok(())
    } else {
        Err(format!("not a YYYY-MM-DD date: {s:?}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values() {
        assert_eq!(parse_value("$2,000"), Ok(Some(2000)));
        assert_eq!(parse_value("$200"), Ok(Some(200)));
        assert_eq!(parse_value("None"), Ok(None));
        assert!(parse_value("$2k").is_err());
    }

    #[test]
    fn layout_detection() {
        assert_eq!(detect_layout(b"  \n[{}]"), Layout::Json);
        assert_eq!(detect_layout(b"Show Number, Air Date"), Layout::Csv);
    }
}
