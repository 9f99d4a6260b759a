//! The writer thread of a call: what the requests answered, stored in the cache and appended to the output.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use schema::{JsonlAppender, ResponseRecord};

use crate::Error;
use crate::cache::Cache;

/// A record for the writer thread.
pub(crate) struct Written {
    pub(crate) record: ResponseRecord,
    /// Store in the cache (fresh ok/truncated answers).
    pub(crate) store: bool,
}

/// Answers written at most in one batch.
const BATCH: usize = 256;

/// While answers come fast (the last batch was written less than `BUSY` ago), the writer lets them gather for
/// `GATHER` after the first one before it writes: one transaction and one append for several answers instead of one
/// each. An answer then waits at most `GATHER` in memory before its commit; a crash in that time loses it as it
/// loses the requests still in flight (a rerun sends them again). While answers come slowly, each is written at once.
const GATHER: Duration = Duration::from_millis(4);
const BUSY: Duration = Duration::from_millis(10);

/// Writes what the requests answered, in batches of what has arrived: each record is serialized once, stored in the
/// cache (one transaction per batch) and then appended to the output (one write per batch). A crash between the
/// two leaves the answers in the cache only, and the rerun copies them over; a torn last line is cut off when the
/// output is opened again.
pub(super) fn writer_loop(
    rx: mpsc::Receiver<Written>,
    mut cache: Cache,
    mut out: JsonlAppender,
    syncer: Option<std::fs::File>,
    identity: &str,
) -> Result<(), Error> {
    let mut batch: Vec<Written> = Vec::with_capacity(BATCH);
    let mut texts: Vec<String> = Vec::with_capacity(BATCH);
    let mut lines: Vec<u8> = Vec::new();
    let mut last_write: Option<Instant> = None;
    while let Ok(first) = rx.recv() {
        batch.push(first);
        if last_write.is_some_and(|t| t.elapsed() < BUSY) {
            std::thread::sleep(GATHER);
        }
        while batch.len() < BATCH {
            match rx.try_recv() {
                Ok(w) => batch.push(w),
                Err(_) => break,
            }
        }
        for w in &batch {
            texts.push(serde_json::to_string(&w.record).map_err(|e| Error::Cache {
                path: out.path().to_owned(),
                message: format!("cannot serialize the answer to {}: {e}", w.record.id),
            })?);
        }
        let items: Vec<(&str, &str, &str)> = batch
            .iter()
            .zip(&texts)
            .filter(|(w, _)| w.store)
            .map(|(w, text)| (w.record.cache_key.as_str(), identity, text.as_str()))
            .collect();
        if !items.is_empty() {
            cache.put_many(&items)?;
        }
        lines.clear();
        for text in texts.drain(..) {
            lines.extend_from_slice(text.as_bytes());
            lines.push(b'\n');
        }
        out.append_lines(&lines)?;
        batch.clear();
        if let Some(f) = &syncer {
            f.sync_data()
                .map_err(|e| Error::Setup(format!("{}: {e}", out.path().display())))?;
        }
        last_write = Some(Instant::now());
    }
    Ok(())
}
