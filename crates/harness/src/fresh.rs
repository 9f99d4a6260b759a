//! Stage freshness: each stage of a run records a fingerprint of its inputs next to its outputs; a stage whose
//! fingerprint is unchanged and whose outputs all exist is skipped by a rerun. Which stages exist and in what order
//! is the pipeline's (xtask's); this module only keeps the stamps.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::Error;

/// What a stage depends on: config sections (as canonical JSON) and input files (by content hash).
#[derive(Debug, Clone)]
pub struct Fingerprint {
    parts: Vec<(String, String)>,
}

impl Fingerprint {
    /// A fingerprint of `stage` that already covers the record schema and the ifstress version.
    pub fn new(stage: &str) -> Fingerprint {
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
    pub fn value<T: Serialize>(mut self, name: &str, value: &T) -> Result<Fingerprint, Error> {
        let json = serde_json::to_string(value)
            .map_err(|e| Error::Input(format!("fingerprinting {name}: {e}")))?;
        self.parts
            .push((name.to_owned(), schema::sha256_hex(json.as_bytes())));
        Ok(self)
    }

    /// Adds a file's content hash (a missing file hashes as "missing").
    pub fn file(mut self, path: &Path) -> Result<Fingerprint, Error> {
        let hash = if path.is_file() {
            schema::sha256_file_hex(path)?
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

    fn path(&self, stage: &str) -> PathBuf {
        self.dir.join(format!("{stage}.json"))
    }

    /// True when the stage ran before with the same inputs and its outputs are all still there.
    pub fn is_fresh(&self, stage: &str, fp: &Fingerprint, outputs: &[PathBuf]) -> bool {
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
        let stamp = Stamp {
            fingerprint: fp.digest(),
            outputs: outputs.to_vec(),
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
