//! The RIFT per-answer table written as Parquet in batches (columnar, compressed, one row group per batch), so a
//! paper-scale scoring stage (≈ 3.1 M answers per model) never holds every answer: each batch of
//! `AnswerScore`s becomes [`crate::rift::answers_frame`]'s columns and is appended; [`crate::rift::aggregate`]
//! then scans the file lazily.
//!
//! The `group` and `prompt` codes are numbered once per file, across batches (`crate::rift::AnswerCodes`); tables
//! joined with `crate::rift::concat_answer_tables` each get a code range of their own.

use std::fs::File;
use std::path::{Path, PathBuf};

use polars::io::parquet::write::BatchedWriter;
use polars::prelude::*;

use crate::Error;

/// A Parquet answer table being written; [`AnswerTableWriter::finish`] renames it into place (atomically).
pub struct AnswerTableWriter {
    path: PathBuf,
    tmp: PathBuf,
    writer: Option<BatchedWriter<File>>,
    rows: u64,
    /// One numbering of groups and prompts for the whole file.
    codes: crate::rift::AnswerCodes,
}

impl AnswerTableWriter {
    pub fn create(path: &Path) -> AnswerTableWriter {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        AnswerTableWriter {
            path: path.to_owned(),
            tmp: path.with_file_name(format!(".{name}.{}.tmp", std::process::id())),
            writer: None,
            rows: 0,
            codes: Default::default(),
        }
    }

    /// Appends a batch of answers (the first batch fixes the schema).
    pub fn write(&mut self, answers: &[schema::rift::AnswerScore]) -> Result<(), Error> {
        if answers.is_empty() {
            return Ok(());
        }
        let ctx = || self.path.display().to_string();
        let df = self.codes.frame(answers)?;
        if self.writer.is_none() {
            if let Some(dir) = self.tmp.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(|e| Error::Input {
                    path: dir.to_owned(),
                    message: e.to_string(),
                })?;
            }
            let file = File::create(&self.tmp).map_err(|e| Error::Input {
                path: self.tmp.clone(),
                message: e.to_string(),
            })?;
            let schema = df.schema().as_ref().clone();
            self.writer = Some(
                ParquetWriter::new(file)
                    .batched(&schema)
                    .map_err(Error::polars(ctx()))?,
            );
        }
        if let Some(w) = self.writer.as_mut() {
            w.write_batch(&df).map_err(Error::polars(ctx()))?;
        }
        self.rows += answers.len() as u64;
        Ok(())
    }

    /// Finishes the file and moves it into place; returns its rows, or `None` when no answer was written (then no
    /// file is written and an old one is removed).
    pub fn finish(mut self) -> Result<Option<u64>, Error> {
        let io = |path: &Path, e: std::io::Error| Error::Input {
            path: path.to_owned(),
            message: e.to_string(),
        };
        let Some(w) = self.writer.take() else {
            match std::fs::remove_file(&self.path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io(&self.path, e)),
            }
            return Ok(None);
        };
        w.finish()
            .map_err(Error::polars(self.path.display().to_string()))?;
        drop(w);
        std::fs::rename(&self.tmp, &self.path).map_err(|e| io(&self.path, e))?;
        Ok(Some(self.rows))
    }
}

impl Drop for AnswerTableWriter {
    fn drop(&mut self) {
        if self.writer.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}
