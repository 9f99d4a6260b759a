//! Per-stage measurements of a pipeline run (`cargo xtask pipeline --stage-metrics <file>`): wall time, CPU time
//! (this process and its children, user + system), peak resident memory of the stage alone, and the rows and
//! bytes the stage wrote under the run's folders, and the requests in flight during its client calls
//! (`inference_client::Client::take_in_flight`). `cargo xtask bench pipeline` reads them into its tables.
//!
//! Peak memory per stage: on Linux, writing `5` to `/proc/self/clear_refs` resets the process's high-water mark
//! (`VmHWM`) to its current resident size, so `VmHWM` read after the stage is the stage's own peak (the memory the
//! process already held counts in it). Elsewhere the column is left empty.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use schema::metrics::{InFlight, StageMetric};

/// Where measurements go and which folders a stage's writes are looked for in.
#[derive(Debug)]
pub(crate) struct Metrics {
    file: PathBuf,
    roots: Vec<PathBuf>,
}

/// A file's identity and size before a stage: a file with a new inode was written anew.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileState {
    inode: u64,
    len: u64,
    modified: Option<std::time::SystemTime>,
}

/// A stage being measured (see [`Metrics::start`]).
pub(crate) struct Running {
    started: Instant,
    cpu: f64,
    before: BTreeMap<PathBuf, FileState>,
}

impl Metrics {
    /// Measurements appended to `file` (created anew); writes are looked for under `roots` (files or folders).
    pub(crate) fn new(file: &Path, roots: Vec<PathBuf>) -> anyhow::Result<Metrics> {
        if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(file, b"")?;
        Ok(Metrics {
            file: file.to_owned(),
            roots,
        })
    }

    pub(crate) fn start(&self) -> Running {
        reset_peak_rss();
        Running {
            before: snapshot(&self.roots),
            cpu: cpu_seconds(),
            started: Instant::now(),
        }
    }

    /// Ends a measurement and appends its line, with the requests in flight of the stage's client calls.
    pub(crate) fn finish(
        &self,
        stage: &str,
        ran: bool,
        r: Running,
        in_flight: Option<InFlight>,
    ) -> anyhow::Result<()> {
        let wall_s = r.started.elapsed().as_secs_f64();
        let cpu_s = cpu_seconds() - r.cpu;
        let peak_rss_mib = peak_rss_kib().map(|k| k as f64 / 1024.0);
        let (mut rows, mut bytes, mut files) = (0, 0, 0);
        for (path, after) in snapshot(&self.roots) {
            let from = match r.before.get(&path) {
                Some(b) if *b == after => continue,
                Some(b) if b.inode == after.inode && after.len >= b.len => b.len,
                _ => 0,
            };
            files += 1;
            bytes += after.len - from;
            if is_table(&path) {
                rows += schema::count_lines(&path, from).unwrap_or(0);
            }
        }
        let m = StageMetric {
            stage: stage.to_owned(),
            ran,
            wall_s,
            cpu_s,
            peak_rss_mib,
            rows,
            bytes,
            files,
            in_flight,
        };
        let mut line = serde_json::to_vec(&m)?;
        line.push(b'\n');
        let mut f = std::fs::OpenOptions::new().append(true).open(&self.file)?;
        f.write_all(&line)?;
        Ok(())
    }
}

fn is_table(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "jsonl" || e == "csv")
}

/// Every file under `roots` (skipping the temporary files of atomic writes) with its state.
fn snapshot(roots: &[PathBuf]) -> BTreeMap<PathBuf, FileState> {
    let mut out = BTreeMap::new();
    let mut stack: Vec<PathBuf> = roots.to_vec();
    while let Some(p) = stack.pop() {
        let Ok(meta) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if meta.is_dir() {
            if let Ok(rd) = std::fs::read_dir(&p) {
                stack.extend(rd.flatten().map(|e| e.path()));
            }
        } else if meta.is_file() {
            out.insert(
                p,
                FileState {
                    inode: inode(&meta),
                    len: meta.len(),
                    modified: meta.modified().ok(),
                },
            );
        }
    }
    out
}

#[cfg(unix)]
fn inode(meta: &std::fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::ino(meta)
}

#[cfg(not(unix))]
fn inode(_meta: &std::fs::Metadata) -> u64 {
    0
}

/// User + system CPU seconds of this process and its waited-for children.
fn cpu_seconds() -> f64 {
    #[cfg(unix)]
    {
        let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        let mut total = 0.0;
        for who in [libc::RUSAGE_SELF, libc::RUSAGE_CHILDREN] {
            // SAFETY: getrusage writes one plain struct that we own.
            let mut u: libc::rusage = unsafe { std::mem::zeroed() };
            if unsafe { libc::getrusage(who, &mut u) } == 0 {
                total += tv(u.ru_utime) + tv(u.ru_stime);
            }
        }
        total
    }
    #[cfg(not(unix))]
    {
        0.0
    }
}

/// Resets `VmHWM` to the current resident size (Linux only; a no-op elsewhere).
fn reset_peak_rss() {
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .write(true)
        .open("/proc/self/clear_refs")
    {
        let _ = f.write_all(b"5");
    }
}

/// `VmHWM` in KiB.
fn peak_rss_kib() -> Option<u64> {
    let mut s = String::new();
    std::fs::File::open("/proc/self/status")
        .ok()?
        .read_to_string(&mut s)
        .ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}
