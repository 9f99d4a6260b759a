//! JSONL reading and writing, atomic file replacement.
//!
//! Reading: `read_jsonl`, `read_jsonl_files`, `read_jsonl_chunks` (a large file in batches, never held whole) and
//! `read_jsonl_lenient` (bad lines collected instead of fatal). An error names the file, the line and the field; an
//! unfinished last line, a crash's torn write, is skipped with a warning.
//!
//! Writing: `write_atomic` (bytes), `write_atomic_with` and `write_jsonl_atomic` (streamed through a buffer) write a
//! temporary file beside the target, fsync and rename it, so a crash leaves the old file or the new one;
//! `JsonlAppender` appends whole lines, each flushed (and fsynced when durable). `sha256_hex` is the one hash of cache
//! keys and fingerprints; `sha256_file_hex` hashes a file in chunks.

use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;
use sha2::{Digest, Sha256};

/// Errors from reading or writing record files.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A malformed line: file, 1-based line number, the field path (`.` for the whole record) and what is wrong.
    #[error("{path}:{line}: field `{field}`: {message}")]
    Record {
        path: PathBuf,
        line: usize,
        field: String,
        message: String,
    },
    #[error("{path}: cannot serialize record: {source}")]
    Serialize {
        path: PathBuf,
        source: serde_json::Error,
    },
}

impl Error {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Error {
        Error::Io {
            path: path.to_owned(),
            source,
        }
    }
}

/// What a lenient read found besides the records.
#[derive(Debug, Default)]
pub struct ReadReport {
    /// A crash left an unfinished last line (no trailing newline, not valid JSON); it was ignored.
    pub torn_tail: bool,
    /// Malformed lines that were skipped (only in lenient mode).
    pub bad_lines: Vec<Error>,
}

/// Reads every record of a JSONL file, failing on the first malformed line.
///
/// Blank lines are skipped. An unfinished last line (no trailing newline) that does not parse is a crash's torn write:
/// it is ignored with a warning rather than reported.
pub fn read_jsonl<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>, Error> {
    Ok(read_inner(path, false)?.0)
}

/// Reads several JSONL files into one list, in the order given (the same rules as [`read_jsonl`] for each).
pub fn read_jsonl_files<T: DeserializeOwned>(
    paths: &[std::path::PathBuf],
) -> Result<Vec<T>, Error> {
    let mut out = Vec::new();
    for p in paths {
        out.extend(read_jsonl(p)?);
    }
    Ok(out)
}

/// Reads a JSONL file `chunk` records at a time, handing each batch to `f` in file order, so a large file is
/// never held in memory (the same rules as [`read_jsonl`]: errors name file, line and field; a torn last line is
/// tolerated).
pub fn read_jsonl_chunks<T: DeserializeOwned, E: From<Error>>(
    path: &Path,
    chunk: usize,
    mut f: impl FnMut(Vec<T>) -> Result<(), E>,
) -> Result<(), E> {
    let mut batch = Vec::with_capacity(chunk.clamp(1, 1 << 16));
    each_record(path, false, &mut ReadReport::default(), |rec| {
        batch.push(rec);
        if batch.len() >= chunk.max(1) {
            f(std::mem::take(&mut batch))?;
        }
        Ok::<(), E>(())
    })?;
    if !batch.is_empty() {
        f(batch)?;
    }
    Ok(())
}

/// Reads every well-formed record, collecting malformed lines in the report instead of failing.
pub fn read_jsonl_lenient<T: DeserializeOwned>(path: &Path) -> Result<(Vec<T>, ReadReport), Error> {
    read_inner(path, true)
}

fn read_inner<T: DeserializeOwned>(
    path: &Path,
    lenient: bool,
) -> Result<(Vec<T>, ReadReport), Error> {
    let mut records = Vec::new();
    let mut report = ReadReport::default();
    each_record(path, lenient, &mut report, |rec| {
        records.push(rec);
        Ok::<(), Error>(())
    })?;
    Ok((records, report))
}

/// The one line loop of the JSONL readers: every well-formed record goes to `f` in file order and blank lines are
/// skipped. An unfinished last line (no trailing newline) that does not parse is a crash's torn write: a warning
/// and `report.torn_tail`. A malformed line is an error naming file, line and field, or, when `lenient`, kept in
/// `report.bad_lines` while reading goes on.
fn each_record<T: DeserializeOwned, E: From<Error>>(
    path: &Path,
    lenient: bool,
    report: &mut ReadReport,
    mut f: impl FnMut(T) -> Result<(), E>,
) -> Result<(), E> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let mut buf = String::new();
    let mut line_no = 0;
    loop {
        buf.clear();
        let n = reader.read_line(&mut buf).map_err(|e| Error::io(path, e))?;
        if n == 0 {
            break;
        }
        line_no += 1;
        let complete = buf.ends_with('\n');
        let text = buf.trim_end_matches(['\n', '\r']);
        if text.trim().is_empty() {
            continue;
        }
        match parse_line::<T>(text) {
            Ok(rec) => f(rec)?,
            Err(_) if !complete => {
                tracing::warn!(path = %path.display(), line = line_no, "Ignoring a torn last line left by an interrupted write.");
                report.torn_tail = true;
                break;
            }
            Err((field, message)) => {
                let err = Error::Record {
                    path: path.to_owned(),
                    line: line_no,
                    field,
                    message,
                };
                if !lenient {
                    return Err(err.into());
                }
                report.bad_lines.push(err);
            }
        }
    }
    Ok(())
}

pub(crate) fn parse_line<T: DeserializeOwned>(text: &str) -> Result<T, (String, String)> {
    // Most lines are well-formed: the path to the bad field is worked out only for a line that fails.
    if let Ok(record) = serde_json::from_str(text) {
        return Ok(record);
    }
    let de = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|err| {
        let field = err.path().to_string();
        let inner = err.into_inner();
        // serde_json appends " at line L column C"; the line is always 1 here, so keep only the message.
        let mut message = inner.to_string();
        if let Some(pos) = message.rfind(" at line ") {
            message.truncate(pos);
        }
        (field, message)
    })
}

/// Replaces `path` with `bytes` atomically: write a temporary file in the same folder, fsync, rename.
///
/// A crash leaves either the old file or the new one, never a half-written file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    write_atomic_with(path, |w| w.write_all(bytes))
}

/// A temporary file name beside `path` (`.<name>.<pid>.<tag>`), in its folder, which is created if missing: the
/// first half of every atomic write (the rename is the second).
pub(crate) fn temp_beside(path: &Path, tag: &str) -> Result<PathBuf, Error> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(dir.join(format!(".{name}.{}.{tag}", std::process::id())))
}

/// Newlines in `path` from byte `from` on (the rows of a JSONL or CSV file), read in 1 MiB blocks.
pub fn count_lines(path: &Path, from: u64) -> std::io::Result<u64> {
    let mut f = File::open(path)?;
    f.seek(SeekFrom::Start(from))?;
    let mut r = BufReader::with_capacity(1 << 20, f);
    let mut n = 0;
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Ok(n);
        }
        n += buf.iter().filter(|&&b| b == b'\n').count() as u64;
        let len = buf.len();
        r.consume(len);
    }
}

/// Replaces `path` atomically with what `fill` writes (through a buffer, so a large file is never held in
/// memory): a temporary file in the same folder, fsync, rename. On an error the temporary file is removed.
pub fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut std::io::BufWriter<File>) -> std::io::Result<()>,
) -> Result<(), Error> {
    let tmp = temp_beside(path, "tmp")?;
    let result = (|| {
        let mut w = std::io::BufWriter::with_capacity(1 << 20, File::create(&tmp)?);
        fill(&mut w)?;
        let f = w.into_inner().map_err(|e| e.into_error())?;
        f.sync_all()?;
        fs::rename(&tmp, path)?;
        // Make the rename itself durable.
        if let Ok(d) = File::open(tmp.parent().unwrap_or(Path::new("."))) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    result.map_err(|e| {
        let _ = fs::remove_file(&tmp);
        Error::io(path, e)
    })
}

/// Serializes `records` one per line and replaces `path` atomically, streaming (records may come from an
/// iterator that never holds them all).
pub fn write_jsonl_atomic<'a, T: Serialize + 'a>(
    path: &Path,
    records: impl IntoIterator<Item = &'a T>,
) -> Result<(), Error> {
    let mut failed = None;
    let result = write_atomic_with(path, |w| {
        for rec in records {
            if let Err(source) = serde_json::to_writer(&mut *w, rec) {
                if source.is_io() {
                    return Err(source.into());
                }
                failed = Some(source);
                return Err(std::io::Error::other("serialize"));
            }
            w.write_all(b"\n")?;
        }
        Ok(())
    });
    match failed {
        Some(source) => Err(Error::Serialize {
            path: path.to_owned(),
            source,
        }),
        None => result,
    }
}

/// The SHA-256 of a file's content (hex), read in chunks.
pub fn sha256_file_hex(path: &Path) -> Result<String, Error> {
    let mut f = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).map_err(|e| Error::io(path, e))?;
        if n == 0 {
            return Ok(hex::encode(h.finalize()));
        }
        h.update(&buf[..n]);
    }
}

/// An append-only JSONL journal: each record is one `write` of a full line followed by a flush
/// (and an fsync when `durable`), so a `kill -9` loses at most the record being written.
pub struct JsonlAppender {
    path: PathBuf,
    file: File,
    durable: bool,
}

impl JsonlAppender {
    /// Opens (or creates) `path` for appending.
    ///
    /// If a crash left an unfinished last line, it is cut off first so the next record starts on a fresh line;
    /// complete lines are never touched.
    pub fn open(path: &Path, durable: bool) -> Result<JsonlAppender, Error> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)
            .map_err(|e| Error::io(path, e))?;
        let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
        if len > 0 {
            let keep = complete_prefix_len(&mut file, len).map_err(|e| Error::io(path, e))?;
            if keep < len {
                tracing::warn!(path = %path.display(), bytes = len - keep, "Cutting off a torn last line left by an interrupted write.");
                file.set_len(keep).map_err(|e| Error::io(path, e))?;
                file.sync_all().map_err(|e| Error::io(path, e))?;
            }
        }
        Ok(JsonlAppender {
            path: path.to_owned(),
            file,
            durable,
        })
    }

    /// Appends one record as one line.
    pub fn append<T: Serialize>(&mut self, record: &T) -> Result<(), Error> {
        let mut line = serde_json::to_vec(record).map_err(|source| Error::Serialize {
            path: self.path.clone(),
            source,
        })?;
        line.push(b'\n');
        self.file
            .write_all(&line)
            .map_err(|e| Error::io(&self.path, e))?;
        self.file.flush().map_err(|e| Error::io(&self.path, e))?;
        if self.durable {
            self.file
                .sync_data()
                .map_err(|e| Error::io(&self.path, e))?;
        }
        Ok(())
    }

    /// Appends lines already serialized (each a JSON document ending in `\n`) with one write, so a writer that
    /// batches records makes one system call per batch.
    pub fn append_lines(&mut self, lines: &[u8]) -> Result<(), Error> {
        debug_assert!(lines.is_empty() || lines.ends_with(b"\n"));
        if lines.is_empty() {
            return Ok(());
        }
        self.file
            .write_all(lines)
            .map_err(|e| Error::io(&self.path, e))?;
        if self.durable {
            self.file
                .sync_data()
                .map_err(|e| Error::io(&self.path, e))?;
        }
        Ok(())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Length of the file up to and including its last newline.
fn complete_prefix_len(file: &mut File, len: u64) -> std::io::Result<u64> {
    let mut pos = len;
    let mut buf = vec![0u8; 64 * 1024];
    while pos > 0 {
        let start = pos.saturating_sub(buf.len() as u64);
        let chunk = &mut buf[..(pos - start) as usize];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(chunk)?;
        if let Some(i) = chunk.iter().rposition(|&b| b == b'\n') {
            return Ok(start + i as u64 + 1);
        }
        pos = start;
    }
    Ok(0)
}

/// Hex SHA-256 of some bytes: the one hash used for cache keys, template hashes and stage fingerprints.
pub fn sha256_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let digest = Sha256::digest(bytes);
    let mut hex = Vec::with_capacity(2 * digest.len());
    for b in digest {
        hex.extend([DIGITS[usize::from(b >> 4)], DIGITS[usize::from(b & 15)]]);
    }
    String::from_utf8(hex).expect("hex digits are ASCII")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[test]
    fn sha256_hex_is_the_lowercase_digest() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(sha256_hex(b""), hex::encode(Sha256::digest(b"")));
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Rec {
        id: String,
        n: u32,
    }

    #[test]
    fn malformed_line_names_file_line_and_field() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.jsonl");
        fs::write(&p, "{\"id\":\"a\",\"n\":1}\n\n{\"id\":\"b\",\"n\":\"x\"}\n").unwrap();
        let err = read_jsonl::<Rec>(&p).unwrap_err().to_string();
        assert!(err.contains("a.jsonl:3: field `n`: invalid type"), "{err}");
    }

    #[test]
    fn torn_last_line_is_tolerated_and_cut_before_append() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.jsonl");
        fs::write(&p, "{\"id\":\"a\",\"n\":1}\n{\"id\":\"b\",\"n").unwrap();
        let (recs, report) = read_jsonl_lenient::<Rec>(&p).unwrap();
        assert_eq!(
            recs,
            vec![Rec {
                id: "a".into(),
                n: 1
            }]
        );
        assert!(report.torn_tail);
        let mut app = JsonlAppender::open(&p, true).unwrap();
        app.append(&Rec {
            id: "c".into(),
            n: 3,
        })
        .unwrap();
        let recs = read_jsonl::<Rec>(&p).unwrap();
        assert_eq!(
            recs,
            vec![
                Rec {
                    id: "a".into(),
                    n: 1
                },
                Rec {
                    id: "c".into(),
                    n: 3
                }
            ]
        );
    }

    #[test]
    fn unterminated_but_valid_last_line_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.jsonl");
        fs::write(&p, "{\"id\":\"a\",\"n\":1}").unwrap();
        assert_eq!(read_jsonl::<Rec>(&p).unwrap().len(), 1);
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn missing_field_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.jsonl");
        fs::write(&p, "{\"id\":\"a\"}\n").unwrap();
        let err = read_jsonl::<Rec>(&p).unwrap_err().to_string();
        assert!(err.contains(":1: field `.`: missing field `n`"), "{err}");
    }
}
