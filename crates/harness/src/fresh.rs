//! Stage freshness: each stage of a run records a fingerprint of its inputs next to its outputs; a stage whose
//! fingerprint is unchanged and whose outputs all exist is skipped by a rerun. Which stages exist and in what order
//! is the pipeline's (xtask's); this module only keeps the stamps.
//!
//! Input files are fingerprinted by content hash, but a paper-scale run's inputs are large (an 800 MB prompts
//! file, a 3 M-row answer table) and several stages share them, so a file's hash is reused while its length,
//! modification time (ns) and inode are unchanged: within the process (one hash per file per run) and across runs
//! (each stamp keeps the hashes it was made from), as `make` and Git's index trust file metadata. Every output is
//! written by an atomic rename (a new inode) or appended to (a new length), so a changed file is hashed again. As
//! in Git ("racily clean" files), a hash is only kept for a file last modified over two seconds before it was
//! read, so a rewrite within the file system's timestamp granularity cannot pass for the old content.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use serde::{Deserialize, Serialize};

use crate::Error;

/// What a stage depends on: config sections (as canonical JSON) and input files (by content hash).
#[derive(Debug, Clone)]
pub struct Fingerprint {
    parts: Vec<(String, Part)>,
}

#[derive(Debug, Clone)]
enum Part {
    Hash(String),
    /// A file, hashed when the fingerprint is compared or recorded (`None`: missing).
    File(PathBuf, Option<FileMeta>),
}

/// What must be unchanged for a file's recorded hash to be reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct FileMeta {
    len: u64,
    mtime_ns: i64,
    ino: u64,
}

impl FileMeta {
    fn of(path: &Path) -> Option<FileMeta> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path).ok().filter(|m| m.is_file())?;
        Some(FileMeta {
            len: m.len(),
            mtime_ns: m
                .mtime()
                .saturating_mul(1_000_000_000)
                .saturating_add(m.mtime_nsec()),
            ino: m.ino(),
        })
    }
}

/// A file's content hash and the metadata it was taken at (kept in stamps).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct FileHash {
    path: PathBuf,
    meta: FileMeta,
    sha256: String,
}

/// Whether `meta`'s modification is old enough that a same-length rewrite would show in the modification time.
fn settled(meta: FileMeta) -> bool {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
    now - meta.mtime_ns > 2_000_000_000
}

/// The hashes taken by this process.
fn memo() -> &'static Mutex<HashMap<PathBuf, (FileMeta, String)>> {
    static MEMO: OnceLock<Mutex<HashMap<PathBuf, (FileMeta, String)>>> = OnceLock::new();
    MEMO.get_or_init(Mutex::default)
}

/// `path`'s content hash: from `known` or this process's memo when `meta` matches, else read and remembered.
fn file_hash(path: &Path, meta: FileMeta, known: &[FileHash]) -> Result<String, Error> {
    if let Some(k) = known.iter().find(|k| k.path == path && k.meta == meta) {
        return Ok(k.sha256.clone());
    }
    if let Ok(m) = memo().lock()
        && let Some((seen, hash)) = m.get(path)
        && *seen == meta
    {
        return Ok(hash.clone());
    }
    let hash = schema::sha256_file_hex(path)?;
    // Only a settled file that did not change while it was read is remembered.
    if settled(meta)
        && FileMeta::of(path) == Some(meta)
        && let Ok(mut m) = memo().lock()
    {
        m.insert(path.to_owned(), (meta, hash.clone()));
    }
    Ok(hash)
}

impl Fingerprint {
    /// A fingerprint of `stage` that already covers the record schema and the ifstress version.
    pub fn new(stage: &str) -> Fingerprint {
        let mut fp = Fingerprint { parts: Vec::new() };
        fp.parts
            .push(("stage".to_owned(), Part::Hash(stage.to_owned())));
        fp.parts.push((
            "schema-version".to_owned(),
            Part::Hash(schema::SCHEMA_VERSION.to_string()),
        ));
        fp.parts.push((
            "ifstress-version".to_owned(),
            Part::Hash(env!("CARGO_PKG_VERSION").to_owned()),
        ));
        fp
    }

    /// Adds a serializable value (a config section, a list of models) under `name`.
    pub fn value<T: Serialize>(mut self, name: &str, value: &T) -> Result<Fingerprint, Error> {
        let json = serde_json::to_string(value)
            .map_err(|e| Error::Input(format!("fingerprinting {name}: {e}")))?;
        self.parts.push((
            name.to_owned(),
            Part::Hash(schema::sha256_hex(json.as_bytes())),
        ));
        Ok(self)
    }

    /// Adds a file's content hash (a missing file hashes as "missing"). The file is hashed when the fingerprint is
    /// compared or recorded, and only when no hash of it at the same length, modification time and inode is known.
    pub fn file(mut self, path: &Path) -> Result<Fingerprint, Error> {
        self.parts.push((
            path.display().to_string(),
            Part::File(path.to_owned(), FileMeta::of(path)),
        ));
        Ok(self)
    }

    /// The digest, and the hashes of the files it covers.
    fn digest(&self, known: &[FileHash]) -> Result<(String, Vec<FileHash>), Error> {
        let mut joined = Vec::with_capacity(self.parts.len());
        let mut files = Vec::new();
        for (k, part) in &self.parts {
            let v = match part {
                Part::Hash(h) => h.clone(),
                Part::File(_, None) => "missing".to_owned(),
                Part::File(path, Some(meta)) => {
                    let sha256 = file_hash(path, *meta, known)?;
                    if settled(*meta) {
                        files.push(FileHash {
                            path: path.clone(),
                            meta: *meta,
                            sha256: sha256.clone(),
                        });
                    }
                    sha256
                }
            };
            joined.push(format!("{k}={v}"));
        }
        Ok((schema::sha256_hex(joined.join("\n").as_bytes()), files))
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct Stamp {
    fingerprint: String,
    outputs: Vec<PathBuf>,
    /// The input files' hashes the fingerprint was made from (reused while a file's metadata is unchanged).
    #[serde(default)]
    files: Vec<FileHash>,
}

/// The stamp folder of a run.
#[derive(Debug, Clone)]
pub struct Stamps {
    dir: PathBuf,
}

impl Stamps {
    /// The stamps of the run in `run_dir` (kept in `run_dir/.stages`).
    pub fn new(run_dir: &Path) -> Stamps {
        Stamps {
            dir: run_dir.join(".stages"),
        }
    }

    /// Stamps kept in `dir` itself (`dir/<name>.json`), beside outputs that several runs may share: a prepared
    /// dataset's provenance, checked by every run before it reads the dataset.
    pub fn beside(dir: &Path) -> Stamps {
        Stamps {
            dir: dir.to_owned(),
        }
    }

    fn path(&self, stage: &str) -> PathBuf {
        self.dir.join(format!("{stage}.json"))
    }

    fn read(&self, stage: &str) -> Option<Stamp> {
        let bytes = std::fs::read(self.path(stage)).ok()?;
        serde_json::from_slice::<Stamp>(&bytes).ok()
    }

    /// True when the stage ran before with the same inputs and its outputs are all still there.
    pub fn is_fresh(&self, stage: &str, fp: &Fingerprint, outputs: &[PathBuf]) -> bool {
        let Some(stamp) = self.read(stage) else {
            return false;
        };
        if stamp.outputs != outputs || !outputs.iter().all(|p| p.exists()) {
            return false;
        }
        fp.digest(&stamp.files)
            .is_ok_and(|(digest, _)| digest == stamp.fingerprint)
    }

    /// Forgets that the stage finished, so the next run runs it again.
    pub fn clear(&self, stage: &str) -> Result<(), Error> {
        match std::fs::remove_file(self.path(stage)) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Error::io(&self.path(stage), e)),
        }
    }

    /// Records that the stage finished with these inputs and outputs.
    pub fn mark(&self, stage: &str, fp: &Fingerprint, outputs: &[PathBuf]) -> Result<(), Error> {
        let known = self.read(stage).map(|s| s.files).unwrap_or_default();
        let (fingerprint, files) = fp.digest(&known)?;
        let stamp = Stamp {
            fingerprint,
            outputs: outputs.to_vec(),
            files,
        };
        let bytes = serde_json::to_vec_pretty(&stamp).map_err(|e| Error::Output {
            path: self.path(stage),
            message: e.to_string(),
        })?;
        schema::write_atomic(&self.path(stage), &bytes)?;
        Ok(())
    }
}

/// Joins JSONL files into one, atomically and streaming (a run's analysis reads one table per benchmark).
pub fn concat_jsonl(parts: &[PathBuf], out: &Path) -> Result<(), Error> {
    use std::io::{Read, Seek, SeekFrom, Write};
    let mut opened = Vec::with_capacity(parts.len());
    for p in parts {
        let mut f = std::fs::File::open(p).map_err(|e| Error::io(p, e))?;
        let len = f.metadata().map_err(|e| Error::io(p, e))?.len();
        // Whether the part ends without a newline (then one is added).
        let mut last = [b'\n'];
        if len > 0 {
            f.seek(SeekFrom::Start(len - 1))
                .and_then(|_| f.read_exact(&mut last))
                .and_then(|()| f.seek(SeekFrom::Start(0)).map(drop))
                .map_err(|e| Error::io(p, e))?;
        }
        opened.push((f, last[0] != b'\n'));
    }
    schema::write_atomic_with(out, |w| {
        for (f, unterminated) in &mut opened {
            std::io::copy(f, w)?;
            if *unterminated {
                w.write_all(b"\n")?;
            }
        }
        Ok(())
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stage_is_fresh_until_an_input_or_an_output_changes() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.txt");
        let output = dir.path().join("out.txt");
        std::fs::write(&input, "a").unwrap();
        std::fs::write(&output, "x").unwrap();
        let stamps = Stamps::new(dir.path());
        let fp = || {
            Fingerprint::new("s")
                .value("k", &1)
                .unwrap()
                .file(&input)
                .unwrap()
        };
        let outs = [output.clone()];
        assert!(!stamps.is_fresh("s", &fp(), &outs));
        stamps.mark("s", &fp(), &outs).unwrap();
        assert!(stamps.is_fresh("s", &fp(), &outs));
        std::fs::write(&input, "b").unwrap();
        assert!(!stamps.is_fresh("s", &fp(), &outs), "changed input");
        stamps.mark("s", &fp(), &outs).unwrap();
        std::fs::remove_file(&output).unwrap();
        assert!(!stamps.is_fresh("s", &fp(), &outs), "missing output");
    }

    #[test]
    fn concatenation_ends_every_part_with_a_newline() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, out) = (
            dir.path().join("a"),
            dir.path().join("b"),
            dir.path().join("o"),
        );
        std::fs::write(&a, "{\"x\":1}").unwrap();
        std::fs::write(&b, "{\"x\":2}\n").unwrap();
        concat_jsonl(&[a, b], &out).unwrap();
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            "{\"x\":1}\n{\"x\":2}\n"
        );
    }
}
