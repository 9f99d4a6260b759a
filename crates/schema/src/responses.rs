//! The newest response per key: the one rule for reading back a responses file.
//!
//! A responses file is append-only, so a resumed run may hold a retried request twice; the last line for a key is
//! the one that counts. The key is [`ResponseKey`]: the prompt's id and its sample index. A file written by the
//! inference client holds one model's answers, so the model is not part of the key.

use std::collections::HashMap;
use std::path::Path;

use crate::io::{Error, read_jsonl};
use crate::records::{PromptRecord, ResponseRecord};

/// What identifies one answer in a responses file: the prompt id and the sample index. It deserializes from a
/// response line (the other fields skipped), so a [`crate::LineIndex`] can index a responses file by it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Deserialize)]
pub struct ResponseKey {
    pub id: String,
    #[serde(default)]
    pub sample_index: u32,
}

impl ResponseKey {
    /// The key a response answers.
    pub fn of(r: &ResponseRecord) -> ResponseKey {
        ResponseKey {
            id: r.id.clone(),
            sample_index: r.sample_index,
        }
    }

    /// The key a prompt's response will have.
    pub fn of_prompt(p: &PromptRecord) -> ResponseKey {
        ResponseKey {
            id: p.id.clone(),
            sample_index: p.sample_index,
        }
    }
}

/// Keeps the newest (last) record per [`ResponseKey`], in the order of the kept records.
pub fn latest_per_key(records: Vec<ResponseRecord>) -> Vec<ResponseRecord> {
    let mut newest: HashMap<ResponseKey, usize> = HashMap::with_capacity(records.len());
    for (i, r) in records.iter().enumerate() {
        newest.insert(ResponseKey::of(r), i);
    }
    if newest.len() == records.len() {
        return records;
    }
    let mut keep = vec![false; records.len()];
    for i in newest.into_values() {
        keep[i] = true;
    }
    records
        .into_iter()
        .zip(keep)
        .filter_map(|(r, k)| k.then_some(r))
        .collect()
}

/// Reads a responses file (failing on a malformed line; a torn last line is tolerated) and keeps the newest
/// line per [`ResponseKey`], in file order.
pub fn read_latest_responses(path: &Path) -> Result<Vec<ResponseRecord>, Error> {
    Ok(latest_per_key(read_jsonl(path)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(id: &str, sample_index: u32, content: &str) -> ResponseRecord {
        ResponseRecord {
            sample_index,
            content: Some(content.to_owned()),
            ..ResponseRecord::new(id, "m")
        }
    }

    fn contents(records: &[ResponseRecord]) -> Vec<(&str, u32, &str)> {
        records
            .iter()
            .map(|r| {
                (
                    r.id.as_str(),
                    r.sample_index,
                    r.content.as_deref().unwrap_or(""),
                )
            })
            .collect()
    }

    #[test]
    fn the_last_line_per_key_wins_in_file_order() {
        let kept = latest_per_key(vec![
            rec("a", 0, "old a"),
            rec("b", 0, "b"),
            rec("a", 1, "a second sample"),
            rec("a", 0, "new a"),
        ]);
        assert_eq!(
            contents(&kept),
            vec![
                ("b", 0, "b"),
                ("a", 1, "a second sample"),
                ("a", 0, "new a")
            ]
        );
    }

    #[test]
    fn reading_a_file_applies_the_rule() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("responses.jsonl");
        let lines = [rec("x", 0, "first"), rec("x", 0, "retried")];
        crate::write_jsonl_atomic(&p, &lines).unwrap();
        let kept = read_latest_responses(&p).unwrap();
        assert_eq!(contents(&kept), vec![("x", 0, "retried")]);
        assert_eq!(ResponseKey::of(&kept[0]).id, "x");
    }
}
