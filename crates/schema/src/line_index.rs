//! Reading a JSONL file too big to hold by key: one pass notes where each key's lines are, then the records of
//! one key are read back on demand (used by the run explorer for paper-scale answer and response files).

use std::collections::HashMap;
use std::fs::File;
use std::hash::Hash;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

use crate::io::{Error, parse_line};

/// Where one run of consecutive lines of a key starts: byte offset, byte length and 1-based first line number.
#[derive(Debug, Clone, Copy)]
struct Span {
    offset: u64,
    len: u64,
    line: usize,
}

/// The byte ranges of a JSONL file's lines grouped by a key read from each line.
#[derive(Debug)]
pub struct LineIndex<K> {
    path: PathBuf,
    file: File,
    spans: HashMap<K, Vec<Span>>,
    latest: bool,
    /// Where the next unread line starts, and its 1-based number.
    end: u64,
    next_line: usize,
}

impl<K: DeserializeOwned + Hash + Eq> LineIndex<K> {
    /// Indexes every line by the key `K` deserialized from it (a struct of the few fields that make the key;
    /// the other fields are skipped). With `latest`, only a key's last line is kept (the newest response).
    /// A malformed line is an error naming the file and line; an unfinished last line is ignored.
    pub fn build(path: &Path, latest: bool) -> Result<LineIndex<K>, Error> {
        let file = File::open(path).map_err(|e| Error::io(path, e))?;
        let mut index = LineIndex {
            path: path.to_owned(),
            file,
            spans: HashMap::new(),
            latest,
            end: 0,
            next_line: 1,
        };
        index.scan()?;
        Ok(index)
    }

    /// Adds the lines appended to the file since it was indexed (a file that was replaced, say rewritten
    /// atomically, is indexed again from the start).
    pub fn update(&mut self) -> Result<(), Error> {
        use std::os::unix::fs::MetadataExt;
        let io = |e| Error::io(&self.path, e);
        let now = std::fs::metadata(&self.path).map_err(io)?;
        let open = self.file.metadata().map_err(io)?;
        if now.ino() != open.ino() || now.dev() != open.dev() || now.len() < self.end {
            *self = LineIndex::build(&self.path.clone(), self.latest)?;
            return Ok(());
        }
        self.scan()
    }

    /// Indexes the lines from `end` on; an unfinished last line is left for the next scan.
    fn scan(&mut self) -> Result<(), Error> {
        let path = self.path.clone();
        let io = |e| Error::io(&path, e);
        let mut file = self.file.try_clone().map_err(io)?;
        std::io::Seek::seek(&mut file, std::io::SeekFrom::Start(self.end)).map_err(io)?;
        let mut reader = BufReader::with_capacity(1 << 20, file);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            let n = reader.read_until(b'\n', &mut buf).map_err(io)?;
            if n == 0 {
                break;
            }
            let complete = buf.ends_with(b"\n");
            let here = Span {
                offset: self.end,
                len: n as u64,
                line: self.next_line,
            };
            let text = text_of(&buf);
            let text = text.trim_end_matches(['\n', '\r']);
            if text.trim().is_empty() {
                if complete {
                    self.end += n as u64;
                    self.next_line += 1;
                }
                continue;
            }
            let key: K = match parse_line(text) {
                Ok(k) => k,
                // A line still being written: left for the next scan.
                Err(_) if !complete => break,
                Err((field, message)) => {
                    return Err(Error::Record {
                        path: path.clone(),
                        line: here.line,
                        field,
                        message,
                    });
                }
            };
            self.end += n as u64;
            self.next_line += 1;
            let v = self.spans.entry(key).or_default();
            if self.latest {
                v.clear();
            }
            match v.last_mut() {
                Some(last) if last.offset + last.len == here.offset => last.len += here.len,
                _ => v.push(here),
            }
        }
        Ok(())
    }

    /// Keys found.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// The records of `key` in file order (none when the key is absent).
    pub fn read<T: DeserializeOwned>(&self, key: &K) -> Result<Vec<T>, Error> {
        let mut out = Vec::new();
        for span in self.spans.get(key).into_iter().flatten() {
            let mut buf = vec![0; span.len as usize];
            self.file
                .read_exact_at(&mut buf, span.offset)
                .map_err(|e| Error::Io {
                    path: self.path.clone(),
                    source: e,
                })?;
            let text = text_of(&buf);
            for (i, line) in text.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                out.push(parse_line(line).map_err(|(field, message)| Error::Record {
                    path: self.path.clone(),
                    line: span.line + i,
                    field,
                    message,
                })?);
            }
        }
        Ok(out)
    }
}

/// The bytes as text: checked as UTF-8 (the fast check), and only a line that is not valid UTF-8 is read lossily.
fn text_of(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Eq, Hash, serde::Deserialize)]
    struct Key {
        id: String,
    }

    #[derive(Debug, PartialEq, serde::Deserialize)]
    struct Rec {
        id: String,
        v: u32,
    }

    #[test]
    fn reads_back_each_keys_lines_and_the_latest_one() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.jsonl");
        std::fs::write(
            &path,
            "{\"id\":\"a\",\"v\":1}\n{\"id\":\"a\",\"v\":2}\n{\"id\":\"b\",\"v\":3}\n\n{\"id\":\"a\",\"v\":4}\n{\"id\":\"b\"",
        )
        .expect("write");
        let all = LineIndex::<Key>::build(&path, false).expect("index");
        let key = |s: &str| Key { id: s.to_owned() };
        let vs = |r: Vec<Rec>| r.into_iter().map(|r| r.v).collect::<Vec<_>>();
        assert_eq!(vs(all.read(&key("a")).expect("a")), [1, 2, 4]);
        assert_eq!(vs(all.read(&key("b")).expect("b")), [3]);
        assert!(all.read::<Rec>(&key("c")).expect("c").is_empty());
        let latest = LineIndex::<Key>::build(&path, true).expect("index");
        assert_eq!(vs(latest.read(&key("a")).expect("a")), [4]);
        assert_eq!(latest.len(), 2);
    }

    #[test]
    fn a_malformed_line_names_file_and_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("bad.jsonl");
        std::fs::write(&path, "{\"id\":\"a\"}\n{\"id\":7}\n").expect("write");
        let err = LineIndex::<Key>::build(&path, false).expect_err("bad line");
        let msg = err.to_string();
        assert!(msg.contains("bad.jsonl:2: field `id`"), "{msg}");
    }

    #[test]
    fn update_adds_appended_lines_finishes_a_torn_one_and_follows_a_replaced_file() {
        use std::io::Write;
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.jsonl");
        std::fs::write(&path, "{\"id\":\"a\",\"v\":1}\n{\"id\":\"b\"").expect("write");
        let mut ix = LineIndex::<Key>::build(&path, true).expect("index");
        let key = |s: &str| Key { id: s.to_owned() };
        let vs = |r: Vec<Rec>| r.into_iter().map(|r| r.v).collect::<Vec<_>>();
        assert_eq!(ix.len(), 1, "the torn line waits");
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .expect("open");
        f.write_all(b",\"v\":2}\n{\"id\":\"a\",\"v\":3}\n")
            .expect("append");
        ix.update().expect("update");
        assert_eq!(vs(ix.read(&key("a")).expect("a")), [3]);
        assert_eq!(vs(ix.read(&key("b")).expect("b")), [2]);
        // An atomic rewrite (a new file under the same name) is indexed afresh.
        let tmp = dir.path().join("t.jsonl");
        std::fs::write(&tmp, "{\"id\":\"c\",\"v\":5}\n").expect("write");
        std::fs::rename(&tmp, &path).expect("rename");
        ix.update().expect("update");
        assert_eq!(ix.len(), 1);
        assert_eq!(vs(ix.read(&key("c")).expect("c")), [5]);
    }
}
