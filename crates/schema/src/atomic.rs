//! A JSONL file written record by record and moved into place atomically at the end, for a stage that streams
//! several outputs at once (one [`crate::write_atomic_with`] closure can only fill one file).

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::io::Error;

/// A JSONL file being written: records go to a temporary file beside `path`; [`AtomicJsonl::finish`] syncs and
/// renames it into place. Dropped unfinished (an error on the way), the temporary file is removed and `path` is
/// left as it was.
pub struct AtomicJsonl {
    path: PathBuf,
    tmp: PathBuf,
    w: Option<BufWriter<File>>,
    rows: u64,
}

impl AtomicJsonl {
    pub fn create(path: &Path) -> Result<AtomicJsonl, Error> {
        let tmp = crate::io::temp_beside(path, "stream.tmp")?;
        let file = File::create(&tmp).map_err(|e| Error::io(&tmp, e))?;
        Ok(AtomicJsonl {
            path: path.to_owned(),
            tmp,
            w: Some(BufWriter::with_capacity(1 << 20, file)),
            rows: 0,
        })
    }

    /// Appends one record as one line.
    pub fn append<T: Serialize>(&mut self, record: &T) -> Result<(), Error> {
        let Some(w) = self.w.as_mut() else {
            return Ok(());
        };
        serde_json::to_writer(&mut *w, record).map_err(|source| {
            if source.is_io() {
                Error::io(&self.path, source.into())
            } else {
                Error::Serialize {
                    path: self.path.clone(),
                    source,
                }
            }
        })?;
        w.write_all(b"\n").map_err(|e| Error::io(&self.path, e))?;
        self.rows += 1;
        Ok(())
    }

    /// Records appended so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Syncs the file and renames it into place; returns the records written.
    pub fn finish(mut self) -> Result<u64, Error> {
        let Some(w) = self.w.take() else {
            return Ok(self.rows);
        };
        let result = (|| {
            let f = w.into_inner().map_err(|e| e.into_error())?;
            f.sync_all()?;
            fs::rename(&self.tmp, &self.path)
        })();
        result.map_err(|e| {
            let _ = fs::remove_file(&self.tmp);
            Error::io(&self.path, e)
        })?;
        if let Some(d) = self.path.parent().and_then(|d| File::open(d).ok()) {
            let _ = d.sync_all();
        }
        Ok(self.rows)
    }
}

impl Drop for AtomicJsonl {
    fn drop(&mut self) {
        if self.w.take().is_some() {
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appears_only_when_finished() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("a.jsonl");
        std::fs::write(&path, "old\n").expect("write");
        let mut w = AtomicJsonl::create(&path).expect("create");
        w.append(&serde_json::json!({"x": 1})).expect("append");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "old\n");
        drop(w);
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "old\n");
        assert_eq!(
            std::fs::read_dir(dir.path()).expect("dir").count(),
            1,
            "no temporary file left"
        );
        let mut w = AtomicJsonl::create(&path).expect("create");
        w.append(&serde_json::json!({"x": 1})).expect("append");
        w.append(&serde_json::json!({"x": 2})).expect("append");
        assert_eq!(w.finish().expect("finish"), 2);
        assert_eq!(
            std::fs::read_to_string(&path).expect("read"),
            "{\"x\":1}\n{\"x\":2}\n"
        );
    }
}
