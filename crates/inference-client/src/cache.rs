//! The response cache: SQLite in WAL mode, one row per cache key.
//!
//! Each write is committed before the response line is appended to the output, so a `kill -9` at any moment
//! leaves every finished response either in both or in the cache only (and the rerun copies it over).
//! WAL with `synchronous = NORMAL` survives a killed process; only a power loss can drop the last commits.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, params};
use schema::ResponseRecord;

use crate::Error;

/// An open response cache.
pub struct Cache {
    conn: Connection,
    path: PathBuf,
}

impl Cache {
    /// Opens (or creates) the cache at `path`.
    pub fn open(path: &Path) -> Result<Cache, Error> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| Error::Cache {
                path: path.to_owned(),
                message: e.to_string(),
            })?;
        }
        let err = |e: rusqlite::Error| Error::Cache {
            path: path.to_owned(),
            message: e.to_string(),
        };
        let conn = Connection::open(path).map_err(err)?;
        conn.busy_timeout(std::time::Duration::from_secs(30))
            .map_err(err)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(err)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(err)?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS responses (
                key TEXT PRIMARY KEY,
                model_identity TEXT NOT NULL,
                created_unix REAL NOT NULL,
                record TEXT NOT NULL
            );
            CREATE TABLE IF NOT EXISTS embeddings (
                key TEXT PRIMARY KEY,
                model_identity TEXT NOT NULL,
                created_unix REAL NOT NULL,
                vectors TEXT NOT NULL
            );",
        )
        .map_err(err)?;
        Ok(Cache {
            conn,
            path: path.to_owned(),
        })
    }

    fn err(&self, e: impl std::fmt::Display) -> Error {
        Error::Cache {
            path: self.path.clone(),
            message: e.to_string(),
        }
    }

    /// The stored record for `key`, if any.
    pub fn get(&self, key: &str) -> Result<Option<ResponseRecord>, Error> {
        let text: Option<String> = self
            .conn
            .prepare_cached("SELECT record FROM responses WHERE key = ?1")
            .and_then(|mut s| s.query_row(params![key], |r| r.get(0)).optional())
            .map_err(|e| self.err(e))?;
        match text {
            None => Ok(None),
            Some(t) => match serde_json::from_str(&t) {
                Ok(r) => Ok(Some(r)),
                Err(e) => {
                    tracing::warn!(key, error = %e, "Ignoring an unreadable cache entry.");
                    Ok(None)
                }
            },
        }
    }

    /// Stores records (replacing older entries with the same key) in one transaction: (key, model identity,
    /// the record serialized as JSON by `serde_json::to_string`), so a writer that also appends them to a file
    /// serializes each once.
    pub(crate) fn put_many(&mut self, items: &[(&str, &str, &str)]) -> Result<(), Error> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0);
        let path = self.path.clone();
        let err = |e: &dyn std::fmt::Display| Error::Cache {
            path: path.clone(),
            message: e.to_string(),
        };
        let tx = self.conn.transaction().map_err(|e| err(&e))?;
        {
            let mut stmt = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO responses (key, model_identity, created_unix, record) VALUES (?1, ?2, ?3, ?4)",
                )
                .map_err(|e| err(&e))?;
            for (key, identity, text) in items {
                stmt.execute(params![key, identity, now, text])
                    .map_err(|e| err(&e))?;
            }
        }
        tx.commit().map_err(|e| err(&e))
    }

    /// The stored embedding vectors for `key` (one request's inputs, in order), if any.
    pub(crate) fn get_vectors(&self, key: &str) -> Result<Option<Vec<Vec<f32>>>, Error> {
        let text: Option<String> = self
            .conn
            .prepare_cached("SELECT vectors FROM embeddings WHERE key = ?1")
            .and_then(|mut s| s.query_row(params![key], |r| r.get(0)).optional())
            .map_err(|e| self.err(e))?;
        Ok(text.and_then(|t| match serde_json::from_str(&t) {
            Ok(v) => Some(v),
            Err(e) => {
                tracing::warn!(key, error = %e, "Ignoring an unreadable cached embedding.");
                None
            }
        }))
    }

    /// Stores one request's embedding vectors.
    pub(crate) fn put_vectors(
        &self,
        key: &str,
        identity: &str,
        vectors: &[Vec<f32>],
    ) -> Result<(), Error> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0);
        let text = serde_json::to_string(vectors).map_err(|e| self.err(e))?;
        self.conn
            .execute(
                "INSERT OR REPLACE INTO embeddings (key, model_identity, created_unix, vectors) VALUES (?1, ?2, ?3, ?4)",
                params![key, identity, now, text],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// Number of entries.
    pub fn len(&self) -> Result<u64, Error> {
        self.conn
            .query_row("SELECT COUNT(*) FROM responses", [], |r| r.get(0))
            .map_err(|e| self.err(e))
    }

    /// True when the cache holds no entry.
    pub fn is_empty(&self) -> Result<bool, Error> {
        Ok(self.len()? == 0)
    }

    /// Copies every entry of the cache at `other` whose key this one lacks (a shard's own cache into the merged
    /// run's: the same key holds the same answer), in one transaction; returns how many were added.
    pub fn import(&mut self, other: &Path) -> Result<u64, Error> {
        let before = self.len()?;
        let other_text = other.to_string_lossy().into_owned();
        let other_err = |e: rusqlite::Error| Error::Cache {
            path: other.to_owned(),
            message: e.to_string(),
        };
        self.conn
            .execute("ATTACH DATABASE ?1 AS other", rusqlite::params![other_text])
            .map_err(other_err)?;
        let copied = self.conn.execute_batch(
            "BEGIN;
             INSERT OR IGNORE INTO responses SELECT key, model_identity, created_unix, record FROM other.responses;
             INSERT OR IGNORE INTO embeddings SELECT key, model_identity, created_unix, vectors FROM other.embeddings;
             COMMIT;",
        );
        if copied.is_err() {
            let _ = self.conn.execute_batch("ROLLBACK;");
        }
        let detached = self.conn.execute_batch("DETACH DATABASE other");
        copied.map_err(other_err)?;
        detached.map_err(|e| self.err(e))?;
        Ok(self.len()? - before)
    }

    /// Number of entries per model identity (engine and model id), sorted by identity.
    pub fn count_by_model(&self) -> Result<Vec<(String, u64)>, Error> {
        let mut stmt = self
            .conn
            .prepare("SELECT model_identity, COUNT(*) FROM responses GROUP BY model_identity ORDER BY model_identity")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.err(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(cache: &mut Cache, key: &str, content: &str) {
        let r = ResponseRecord {
            content: Some(content.to_owned()),
            ..ResponseRecord::new(key, "m")
        };
        let text = serde_json::to_string(&r).unwrap();
        cache.put_many(&[(key, "m", text.as_str())]).unwrap();
    }

    #[test]
    fn import_adds_only_the_keys_it_lacks() {
        let dir = tempfile::tempdir().unwrap();
        let mut merged = Cache::open(&dir.path().join("merged.sqlite")).unwrap();
        let mut shard = Cache::open(&dir.path().join("shard.sqlite")).unwrap();
        put(&mut merged, "a", "merged a");
        put(&mut shard, "a", "shard a");
        put(&mut shard, "b", "shard b");
        drop(shard);
        assert_eq!(merged.import(&dir.path().join("shard.sqlite")).unwrap(), 1);
        assert_eq!(merged.len().unwrap(), 2);
        let content = |k: &str| merged.get(k).unwrap().unwrap().content.unwrap();
        assert_eq!(
            (content("a"), content("b")),
            ("merged a".to_owned(), "shard b".to_owned())
        );
        // Importing again adds nothing.
        assert_eq!(merged.import(&dir.path().join("shard.sqlite")).unwrap(), 0);
    }
}
