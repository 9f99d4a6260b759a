//! One writer per run: an advisory lock on a small lock file beside what a process writes (a run folder, a
//! responses file), held for as long as the process writes there.
//!
//! The lock is the operating system's advisory file lock on an open file (`flock` on Unix, `LockFileEx` on
//! Windows, through `std::fs::File::lock`), so it is released when the process exits, crashes or is killed: a
//! stale lock file left on disk locks nothing. A second process that wants the same lock waits for the first,
//! saying so on one line (as cargo does for its build lock), with the first one's process id, which the holder
//! writes into the lock file. Within one process the lock is shared: every [`WriterLock`] of one lock file holds
//! the same open file, so two parts of one command (or two clients of one test) never wait for each other.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Seek as _, SeekFrom, Write as _};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

use crate::Error;

/// An exclusive hold on a lock file, released when the last [`WriterLock`] of this process on it drops (or the
/// process ends).
#[derive(Debug, Clone)]
pub struct WriterLock {
    held: Arc<Held>,
}

#[derive(Debug)]
struct Held {
    path: PathBuf,
    /// The open, locked file: closing it releases the lock.
    _file: File,
}

/// The lock files this process holds, by canonical path.
static HELD: Mutex<Option<HashMap<PathBuf, Weak<Held>>>> = Mutex::new(None);

impl WriterLock {
    /// The lock of the output file `out`: `.<name>.lock` beside it (its folder is created if missing).
    pub fn for_output(out: &Path) -> Result<WriterLock, Error> {
        WriterLock::acquire(&lock_path(out))
    }

    /// Holds `lock` (created if missing) exclusively, waiting for another process that holds it; the wait is said
    /// on one line (`Blocking waiting for file lock on <path>, held by pid <N>`).
    pub fn acquire(lock: &Path) -> Result<WriterLock, Error> {
        if let Some(dir) = lock.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(lock)
            .map_err(|e| Error::io(lock, e))?;
        let key = std::fs::canonicalize(lock).map_err(|e| Error::io(lock, e))?;
        if let Some(held) = registry_get(&key) {
            return Ok(WriterLock { held });
        }
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let holder = holder_pid(lock)
                    .map_or_else(|| "another process".to_owned(), |pid| format!("pid {pid}"));
                tracing::warn!(
                    "Blocking waiting for file lock on {}, held by {holder} (another run writing the same files)",
                    lock.display()
                );
                file.lock().map_err(|e| Error::io(lock, e))?;
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(Error::io(lock, e)),
        }
        // Say who holds it, for the next process that has to wait: one fixed-width line written over the old one
        // in place (never an empty file between a truncation and the write).
        let line = format!("{:<PID_WIDTH$}\n", std::process::id());
        (&file)
            .seek(SeekFrom::Start(0))
            .and_then(|_| (&file).write_all(line.as_bytes()))
            .and_then(|()| file.set_len(line.len() as u64))
            .map_err(|e| Error::io(lock, e))?;
        let held = Arc::new(Held {
            path: lock.to_owned(),
            _file: file,
        });
        let mut reg = HELD.lock().unwrap_or_else(|e| e.into_inner());
        let map = reg.get_or_insert_with(HashMap::new);
        map.retain(|_, w| w.strong_count() > 0);
        // Another thread of this process may have taken it meanwhile (it waited for us, or we for it): share one.
        if let Some(other) = map.get(&key).and_then(Weak::upgrade) {
            return Ok(WriterLock { held: other });
        }
        map.insert(key, Arc::downgrade(&held));
        Ok(WriterLock { held })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.held.path
    }
}

/// Width of the pid line in a lock file (`u32::MAX` has ten digits).
const PID_WIDTH: usize = 10;

/// The pid written in `lock` by the process that holds it. That process writes it just after taking the lock, so a
/// process that found the lock taken may read the file before the pid is there: it reads again for up to a second.
fn holder_pid(lock: &Path) -> Option<u32> {
    for _ in 0..50 {
        let pid = std::fs::read_to_string(lock)
            .ok()
            .and_then(|t| t.trim().parse::<u32>().ok());
        if pid.is_some() {
            return pid;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    None
}

fn registry_get(key: &Path) -> Option<Arc<Held>> {
    HELD.lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .and_then(|m| m.get(key))
        .and_then(Weak::upgrade)
}

/// The lock file of the output `out`: `.<name>.lock` in the same folder.
pub fn lock_path(out: &Path) -> PathBuf {
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    out.with_file_name(format!(".{name}.lock"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_is_shared_within_the_process_and_released_on_drop() {
        let dir = tempfile::tempdir().expect("dir");
        let out = dir.path().join("sub/responses.jsonl");
        let a = WriterLock::for_output(&out).expect("first");
        assert_eq!(a.path(), dir.path().join("sub/.responses.jsonl.lock"));
        // The same process: shared, no wait.
        let b = WriterLock::for_output(&out).expect("second");
        assert!(Arc::ptr_eq(&a.held, &b.held));
        let text = std::fs::read_to_string(a.path()).expect("read");
        assert_eq!(text.trim(), std::process::id().to_string());
        // Another open file description (what another process has) cannot take it while it is held...
        let other = File::open(a.path()).expect("open");
        assert!(matches!(
            other.try_lock(),
            Err(std::fs::TryLockError::WouldBlock)
        ));
        drop(a);
        assert!(matches!(
            other.try_lock(),
            Err(std::fs::TryLockError::WouldBlock)
        ));
        // ...and can once the last holder is gone.
        drop(b);
        other.try_lock().expect("released");
    }

    #[test]
    fn a_waiting_process_reads_the_pid_written_just_after_the_lock_was_taken() {
        let dir = tempfile::tempdir().expect("dir");
        let lock = dir.path().join(".out.jsonl.lock");
        // The holder has created and locked the file but not yet written its pid.
        std::fs::write(&lock, "").expect("create");
        let writer = {
            let lock = lock.clone();
            std::thread::spawn(move || {
                std::thread::sleep(std::time::Duration::from_millis(100));
                std::fs::write(&lock, "4242      \n").expect("write");
            })
        };
        assert_eq!(holder_pid(&lock), Some(4242));
        writer.join().expect("writer");
    }

    #[test]
    fn the_pid_line_replaces_a_longer_old_one() {
        let dir = tempfile::tempdir().expect("dir");
        let out = dir.path().join("responses.jsonl");
        std::fs::write(lock_path(&out), "123456789012345\nstale\n").expect("old");
        let held = WriterLock::for_output(&out).expect("lock");
        let text = std::fs::read_to_string(held.path()).expect("read");
        assert_eq!(text.trim(), std::process::id().to_string());
        assert_eq!(text.len(), PID_WIDTH + 1);
    }
}
