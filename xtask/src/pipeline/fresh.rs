//! Stage freshness: each stage records a fingerprint of its inputs next to its outputs;
//! a stage whose fingerprint is unchanged and whose outputs all exist is skipped.

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

/// What a stage depends on: config sections (as canonical JSON) and input files (by content hash).
pub(crate) struct Fingerprint {
    parts: Vec<(String, String)>,
}

impl Fingerprint {
    pub(crate) fn new(stage: &str) -> Fingerprint {
        let mut fp = Fingerprint { parts: Vec::new() };
        fp.parts.push(("stage".to_owned(), stage.to_owned()));
        fp.parts.push((
            "schema-version".to_owned(),
            schema::SCHEMA_VERSION.to_string(),
        ));
        fp.parts.push((
            "ifstress-version".to_owned(),
            env!("CARGO_PKG_VERSION").to_owned(),
        ));
        fp
    }

    /// Adds a serializable value (a config section, a list of models) under `name`.
    pub(crate) fn value<T: Serialize>(
        mut self,
        name: &str,
        value: &T,
    ) -> anyhow::Result<Fingerprint> {
        let json =
            serde_json::to_string(value).with_context(|| format!("fingerprinting {name}"))?;
        self.parts
            .push((name.to_owned(), schema::sha256_hex(json.as_bytes())));
        Ok(self)
    }

    /// Adds a file's content hash (a missing file hashes as "missing").
    pub(crate) fn file(mut self, path: &Path) -> anyhow::Result<Fingerprint> {
        let hash = if path.is_file() {
            let bytes =
                std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
            schema::sha256_hex(&bytes)
        } else {
            "missing".to_owned()
        };
        self.parts.push((path.display().to_string(), hash));
        Ok(self)
    }

    fn digest(&self) -> String {
        let joined: Vec<String> = self.parts.iter().map(|(k, v)| format!("{k}={v}")).collect();
        schema::sha256_hex(joined.join("\n").as_bytes())
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct Stamp {
    fingerprint: String,
    outputs: Vec<PathBuf>,
}

/// The stamp folder of a run.
pub(crate) struct Stamps {
    dir: PathBuf,
}

impl Stamps {
    pub(crate) fn new(run_dir: &Path) -> Stamps {
        Stamps {
            dir: run_dir.join(".stages"),
        }
    }

    fn path(&self, stage: &str) -> PathBuf {
        self.dir.join(format!("{stage}.json"))
    }

    /// True when the stage ran before with the same inputs and its outputs are all still there.
    pub(crate) fn is_fresh(&self, stage: &str, fp: &Fingerprint, outputs: &[PathBuf]) -> bool {
        let Ok(bytes) = std::fs::read(self.path(stage)) else {
            return false;
        };
        let Ok(stamp) = serde_json::from_slice::<Stamp>(&bytes) else {
            return false;
        };
        stamp.fingerprint == fp.digest()
            && stamp.outputs == outputs
            && outputs.iter().all(|p| p.exists())
    }

    /// Records that the stage finished with these inputs and outputs.
    pub(crate) fn mark(
        &self,
        stage: &str,
        fp: &Fingerprint,
        outputs: &[PathBuf],
    ) -> anyhow::Result<()> {
        let stamp = Stamp {
            fingerprint: fp.digest(),
            outputs: outputs.to_vec(),
        };
        let bytes = serde_json::to_vec_pretty(&stamp)?;
        schema::write_atomic(&self.path(stage), &bytes)?;
        Ok(())
    }
}
