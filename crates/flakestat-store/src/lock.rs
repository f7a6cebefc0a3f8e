//! One writer at a time per store: an exclusive advisory lock on `flakestat.lock` next to the
//! database (`<cache dir>/store-v1/flakestat.lock`). SQLite keeps each transaction whole, but a
//! survey is many transactions that assume nobody else is listing, fetching and pruning the same
//! store meanwhile; two cron runs overlapping would do the work twice and race on the ETag cache.
//!
//! The lock is `std::fs::File::try_lock` (flock on Unix, LockFileEx on Windows): the operating
//! system releases it when the process ends, however it ends, so a crash never leaves a stale
//! lock. The holder writes who it is into the file, for the message the next one prints.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::{STORE_DIR, create_private_dir};

/// The lock file inside `STORE_DIR`.
pub const LOCK_FILE: &str = "flakestat.lock";

/// How often a waiting process tries again.
const POLL: Duration = Duration::from_millis(200);

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(
        "the store is in use by another flakestat{holder}: waited {waited}s for the lock file {path}; let that run finish"
    )]
    Busy {
        path: PathBuf,
        /// ` (pid 123, flakestat nightly, since …)` or empty.
        holder: String,
        waited: u64,
    },
    #[error("cannot lock the store with {path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    /// A PostgreSQL store's lock of the repository is held (`store/postgres/lock.rs`).
    #[error(
        "the PostgreSQL store {store} is in use for {repo} by another flakestat{holder}: waited {waited}s for its lock; let that run finish"
    )]
    PostgresBusy {
        store: String,
        repo: String,
        holder: String,
        waited: u64,
    },
    #[error("cannot lock the store: {0}")]
    Postgres(super::StoreError),
    /// The cache folder lies inside another store (`StoreError::Nested`): no lock file, no
    /// folder is made there.
    #[error("{0}")]
    Nested(super::StoreError),
}

/// Held while it lives; dropping it releases the lock.
#[derive(Debug)]
pub struct StoreLock {
    file: File,
    path: PathBuf,
}

impl StoreLock {
    /// Takes the lock of the store in `cache_dir`, trying again until `wait` has passed.
    /// `holder` says who takes it (e.g. `flakestat nightly`), for the next one's message.
    pub fn acquire(cache_dir: &Path, wait: Duration, holder: &str) -> Result<StoreLock, LockError> {
        if let Some(enclosing) = super::enclosing_store(cache_dir) {
            return Err(LockError::Nested(super::StoreError::Nested {
                path: cache_dir.to_path_buf(),
                cache_dir: enclosing,
            }));
        }
        let dir = cache_dir.join(STORE_DIR);
        let path = dir.join(LOCK_FILE);
        let io_err = |source| LockError::Io {
            path: path.clone(),
            source,
        };
        create_private_dir(&dir).map_err(io_err)?;
        let mut options = OpenOptions::new();
        options.read(true).write(true).create(true).truncate(false);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut file = options.open(&path).map_err(io_err)?;
        let started = Instant::now();
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(TryLockError::WouldBlock) => {
                    if started.elapsed() >= wait {
                        return Err(LockError::Busy {
                            holder: read_holder(&mut file),
                            path,
                            waited: started.elapsed().as_secs(),
                        });
                    }
                    std::thread::sleep(POLL.min(wait.saturating_sub(started.elapsed())));
                }
                Err(TryLockError::Error(e)) => return Err(io_err(e)),
            }
        }
        // Who holds it, for the message of the next one; a failure here is harmless.
        let note = format!(
            "pid {}, {holder}, since {}",
            std::process::id(),
            chrono::Utc::now().format("%Y-%m-%d %H:%M:%S UTC")
        );
        let _ = file
            .set_len(0)
            .and_then(|()| file.seek(SeekFrom::Start(0)).map(drop))
            .and_then(|()| file.write_all(note.as_bytes()))
            .and_then(|()| file.flush());
        Ok(StoreLock { file, path })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for StoreLock {
    fn drop(&mut self) {
        let _ = self.file.set_len(0);
        let _ = self.file.unlock();
    }
}

fn read_holder(file: &mut File) -> String {
    let mut text = String::new();
    let _ = file.seek(SeekFrom::Start(0));
    let _ = file.take(200).read_to_string(&mut text);
    let text: String = text.chars().filter(|c| !c.is_control()).collect();
    let text = text.trim();
    if text.is_empty() {
        String::new()
    } else {
        format!(" ({text})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_on_the_same_store_is_refused_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let first = StoreLock::acquire(dir.path(), Duration::ZERO, "test one").unwrap();
        let err = StoreLock::acquire(dir.path(), Duration::from_millis(300), "test two")
            .unwrap_err()
            .to_string();
        assert!(err.contains(&first.path().display().to_string()), "{err}");
        assert!(err.contains("test one"), "{err}");
        assert!(
            err.contains(&format!("pid {}", std::process::id())),
            "{err}"
        );
        drop(first);
        StoreLock::acquire(dir.path(), Duration::ZERO, "test two").unwrap();
    }
}
