//! The merge of a sharded run's folders into one run folder (`cargo xtask merge`), before the run's stages run on
//! the whole.
//!
//! [`prepare`] checks the shards' manifests (`crate::shard::Manifest`): the same ifstress version, config and
//! models file as the merge's, the same assignment, each finished with every prompt answered, and every shard
//! index from 0 to N−1 given exactly once (so every unit is covered once: the assignment is a partition). All
//! problems are one usage error naming each shard folder at fault. It then writes the merged run's responses files
//! (every model's answers, judge replies and judge-check replies: each the shards' files one after the other, with
//! a request two shards both sent kept once, as a single run sends it once), its spend ledger (the shards' ledgers in shard order), and copies the
//! entries of each shard's response cache that the merge's cache lacks. Written whole each time, so merging again
//! gives the same folder.
//!
//! The caller then runs the config on the merged folder (`crate::run` with `Options::run_dir`): every model call
//! is resumed from those files, so nothing is sent, and the joins, judge checks, analysis, explorer, report and
//! `summary.md` are made exactly as a single run makes them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use schema::paths::{Bench, ModelPaths, RunPaths};

use crate::outcome::usage;
use crate::shard::{MANIFEST, Manifest, digests, version};

/// What [`prepare`] merged.
#[derive(Debug, Default)]
pub struct Merged {
    pub shards: usize,
    /// Responses files written, and their lines.
    pub files: usize,
    pub lines: usize,
    /// Cache entries copied from shards' own caches.
    pub cache_entries: u64,
}

/// Reads a shard folder's manifest.
fn manifest(dir: &Path) -> anyhow::Result<Manifest> {
    let file = dir.join(MANIFEST);
    let text = std::fs::read_to_string(&file).map_err(|e| {
        usage(format!(
            "{}: no {MANIFEST} ({e}): this is not a finished shard; rerun its `cargo xtask pipeline --shard` command \
             (it resumes)",
            dir.display()
        ))
    })?;
    serde_json::from_str(&text).map_err(|e| usage(format!("{}: {e}", file.display())))
}

/// Checks the shards against each other and the merge's config; every problem, in one error.
fn check(
    shards: &[(PathBuf, Manifest)],
    config_text: &str,
    models_file: &Path,
    out: &Path,
) -> anyhow::Result<()> {
    let (config_sha, models_sha) = digests(config_text, models_file)?;
    let mut problems = Vec::new();
    let Some((first_dir, first)) = shards.first() else {
        return Err(usage("merge: no shard folders given"));
    };
    let label = |m: &Manifest| format!("{}/{}", m.index, m.count);
    let mut given: BTreeMap<usize, Vec<&Path>> = BTreeMap::new();
    for (dir, m) in shards {
        let name = format!("shard {} ({})", label(m), dir.display());
        if m.ifstress_version != version() {
            problems.push(format!(
                "{name} was run by ifstress {}, this is {}",
                m.ifstress_version,
                version()
            ));
        }
        if m.config_sha256 != config_sha {
            problems.push(format!("{name} was run with another config than this one"));
        }
        if m.models_sha256 != models_sha {
            problems.push(format!(
                "{name} was run with another models file than {}",
                models_file.display()
            ));
        }
        if m.count != first.count || m.assignment_sha256 != first.assignment_sha256 {
            problems.push(format!(
                "{name} splits the run differently from shard {} ({})",
                label(first),
                first_dir.display()
            ));
        }
        if !m.complete {
            problems.push(format!(
                "{name} finished with prompts unanswered: rerun its command to continue it"
            ));
        }
        if std::path::absolute(dir).ok() == std::path::absolute(out).ok() {
            problems.push(format!("{name} is the output folder"));
        }
        given.entry(m.index).or_default().push(dir);
    }
    for (index, dirs) in &given {
        if dirs.len() > 1 {
            let dirs: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
            problems.push(format!(
                "shard {index}/{} is given {} times: {}",
                first.count,
                dirs.len(),
                dirs.join(", ")
            ));
        }
    }
    for index in (0..first.count).filter(|i| !given.contains_key(i)) {
        problems.push(format!(
            "shard {index}/{} is missing (its folder ends in -shard-{index}-of-{})",
            first.count, first.count
        ));
    }
    if problems.is_empty() {
        return Ok(());
    }
    Err(usage(format!(
        "cannot merge these shards: {}",
        problems.join("; ")
    )))
}

/// The responses files a shard's model calls wrote, relative to its run folder.
fn response_files(run: &Path) -> Vec<PathBuf> {
    let paths = RunPaths::new(run);
    let mut files = Vec::new();
    let subdirs = |dir: PathBuf| -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_dir())
            .collect();
        dirs.sort();
        dirs
    };
    for bench in [Bench::Ifscale, Bench::Rift] {
        for dir in subdirs(paths.bench(bench).join("models")) {
            let m = ModelPaths::in_dir(&dir);
            files.extend([
                m.responses(),
                m.coherence_judge(),
                m.refusal_judge(),
                m.judge_responses(),
            ]);
        }
        for dir in subdirs(paths.bench(bench).join("judge-check")) {
            files.push(ModelPaths::in_dir(&dir).judge_responses());
        }
    }
    files
        .into_iter()
        .filter(|f| f.is_file())
        .filter_map(|f| f.strip_prefix(run).ok().map(Path::to_path_buf))
        .collect()
}

/// The fields of a response line that say which answer it is, and whether it came from the cache.
#[derive(serde::Deserialize)]
struct LineKey {
    id: String,
    #[serde(default)]
    sample_index: u32,
    #[serde(default)]
    cached: bool,
}

/// Each readable line of `file` with its key (a torn or unreadable line is skipped, as readers of responses do).
fn each_line(
    file: &Path,
    mut f: impl FnMut((String, u32), bool, &str) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    use std::io::BufRead;
    let reader = std::io::BufReader::new(std::fs::File::open(file)?);
    for line in reader.lines() {
        let line = line?;
        if let Ok(k) = serde_json::from_str::<LineKey>(&line) {
            f((k.id, k.sample_index), k.cached, &line)?;
        }
    }
    Ok(())
}

/// Writes `out` as the lines of the responses files `sources` (one per shard, in shard order), streaming; returns
/// the lines written. An answer is the shards' own, so keys do not repeat across shards, except where two shards
/// sent the same request (a judge prompt common to items of both): a single run sends it once, so only one shard's
/// lines for that key are kept, those of the first shard that did not take it from the cache.
fn merge_responses(sources: &[PathBuf], out: &Path) -> anyhow::Result<usize> {
    // The shard each key's lines come from, and whether one of its lines was answered afresh there.
    let mut owner: std::collections::HashMap<(String, u32), (usize, bool)> =
        std::collections::HashMap::new();
    for (i, s) in sources.iter().enumerate() {
        each_line(s, |key, cached, _| {
            let e = owner.entry(key).or_insert((i, !cached));
            if e.0 == i {
                e.1 |= !cached;
            } else if !e.1 && !cached {
                *e = (i, true);
            }
            Ok(())
        })?;
    }
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut lines = 0;
    let mut failed = None;
    schema::write_atomic_with(out, |w| {
        use std::io::Write;
        for (i, s) in sources.iter().enumerate() {
            let written = each_line(s, |key, _, line| {
                if owner.get(&key).is_some_and(|o| o.0 == i) {
                    lines += 1;
                    writeln!(w, "{line}")?;
                }
                Ok(())
            });
            if let Err(e) = written {
                failed = Some(e);
                return Err(std::io::Error::other(
                    "a shard's responses file could not be read",
                ));
            }
        }
        Ok(())
    })
    .map_err(|e| match failed.take() {
        Some(f) => f.context(e.to_string()),
        None => e.into(),
    })?;
    Ok(lines)
}

/// Writes `out` as the files of `sources` one after the other (each ending in a newline).
fn concat(sources: &[PathBuf], out: &Path) -> anyhow::Result<()> {
    let mut bytes = Vec::new();
    for s in sources {
        let mut b = std::fs::read(s)?;
        if b.last().is_some_and(|c| *c != b'\n') {
            b.push(b'\n');
        }
        bytes.extend(b);
    }
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir)?;
    }
    schema::write_atomic(out, &bytes)?;
    Ok(())
}

/// Checks the shard folders `dirs` and writes their answers, ledgers and cache entries into the run folder `out`
/// and the cache `cache`, for a run of `config_text` with `models_file` to finish.
pub fn prepare(
    dirs: &[PathBuf],
    out: &Path,
    config_text: &str,
    models_file: &Path,
    cache: &Path,
) -> anyhow::Result<Merged> {
    let shards = dirs
        .iter()
        .map(|d| Ok((d.clone(), manifest(d)?)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    check(&shards, config_text, models_file, out)?;
    let mut ordered: Vec<&(PathBuf, Manifest)> = shards.iter().collect();
    ordered.sort_by_key(|(_, m)| m.index);
    let mut merged = Merged {
        shards: ordered.len(),
        ..Merged::default()
    };
    let mut by_file: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
    for (dir, _) in &ordered {
        for rel in response_files(dir) {
            by_file.entry(rel.clone()).or_default().push(dir.join(rel));
        }
    }
    for (rel, sources) in &by_file {
        merged.lines += merge_responses(sources, &out.join(rel))?;
        merged.files += 1;
    }
    let ledgers: Vec<PathBuf> = ordered
        .iter()
        .map(|(d, _)| RunPaths::new(d).spend_ledger())
        .filter(|l| l.is_file())
        .collect();
    if !ledgers.is_empty() {
        concat(&ledgers, &RunPaths::new(out).spend_ledger())?;
    }
    let target = std::path::absolute(cache)?;
    let mut opened: Option<inference_client::Cache> = None;
    for (dir, m) in &ordered {
        if m.cache == target
            || std::fs::canonicalize(&m.cache).ok() == std::fs::canonicalize(&target).ok()
        {
            continue;
        }
        if !m.cache.is_file() {
            tracing::warn!(
                shard = %dir.display(),
                cache = %m.cache.display(),
                "This shard's cache is not here; its answers are merged from its responses files."
            );
            continue;
        }
        let mut c = match opened.take() {
            Some(c) => c,
            None => inference_client::Cache::open(cache)?,
        };
        merged.cache_entries += c.import(&m.cache)?;
        opened = Some(c);
    }
    Ok(merged)
}
