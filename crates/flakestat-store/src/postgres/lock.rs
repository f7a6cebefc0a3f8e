//! One writer per repository on a PostgreSQL store: a session-level advisory lock, keyed by the
//! store's schema and the repository (its name without case), held on a connection of its own for as long as the
//! `PgLock` lives. The server releases it when that connection ends, however the process ends,
//! so a crash never leaves a stale lock. Two nightly jobs of one repository therefore take turns
//! (the second waits with `--wait`, or stops with exit 8); surveys of other repositories in the
//! same store go on side by side.
//!
//! The holder names itself in the lock connection's `application_name`
//! (`flakestat nightly, pid 123, since …`), which the next one reads from `pg_stat_activity`
//! for its message.

use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use super::{Conn, PostgresUrl};
use crate::lock::LockError;
use flakestat_core::model::Repo;

/// The advisory-lock class of repository locks ("FLKS"); the key is the repository's hash.
const REPO_LOCK: i32 = 0x464C_4B53;

/// How often a waiting process tries again.
const POLL: Duration = Duration::from_millis(200);

/// Held while it lives; dropping it closes its connection, which releases the lock.
pub struct PgLock {
    _conn: Conn,
    store: String,
    repo: String,
}

impl std::fmt::Debug for PgLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PgLock({} for {})", self.store, self.repo)
    }
}

/// The lock's key for a repository of the store in `schema` (advisory locks are per database;
/// a database may hold a store per schema): the same for every spelling of its name.
fn repo_key(schema: &str, repo: &Repo) -> i32 {
    let name = format!("{schema}\0{}/{}", repo.owner, repo.name).to_ascii_lowercase();
    let digest = Sha256::digest(name.as_bytes());
    i32::from_be_bytes([digest[0], digest[1], digest[2], digest[3]]) & 0x7fff_ffff
}

impl PgLock {
    /// Takes `repo`'s lock in the store at `url`, trying again until `wait` has passed.
    pub fn acquire(
        url: &PostgresUrl,
        repo: &Repo,
        wait: Duration,
        holder: &str,
    ) -> Result<PgLock, LockError> {
        let note = format!(
            "{holder}, pid {}, since {}",
            std::process::id(),
            chrono::Utc::now().format("%Y-%m-%d %H:%M:%S UTC")
        );
        // `application_name` is cut at 63 bytes by the server: cut it here, on a char boundary.
        let mut name = note.clone();
        while name.len() > 63 {
            name.pop();
        }
        let conn = Conn::open(url, &name).map_err(LockError::Postgres)?;
        let schema: String = conn
            .call(|c| {
                Ok(c.query_one("SELECT coalesce(current_schema(), '')", &[])?
                    .get(0))
            })
            .map_err(LockError::Postgres)?;
        let key = repo_key(&schema, repo);
        let started = Instant::now();
        loop {
            let got: bool = conn
                .call(move |c| {
                    Ok(
                        c.query_one("SELECT pg_try_advisory_lock($1, $2)", &[&REPO_LOCK, &key])?
                            .get(0),
                    )
                })
                .map_err(LockError::Postgres)?;
            if got {
                return Ok(PgLock {
                    _conn: conn,
                    store: url.masked().to_string(),
                    repo: repo.to_string(),
                });
            }
            if started.elapsed() >= wait {
                let holder = conn
                    .call(move |c| {
                        Ok(c.query_opt(
                            "SELECT a.application_name FROM pg_locks l
                             JOIN pg_stat_activity a ON a.pid = l.pid
                             WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
                               AND l.database = (SELECT oid FROM pg_database
                                                 WHERE datname = current_database())
                               AND l.classid::int8 = $1 AND l.objid::int8 = $2
                             LIMIT 1",
                            &[&i64::from(REPO_LOCK), &i64::from(key)],
                        )?
                        .and_then(|row| row.get::<_, Option<String>>(0)))
                    })
                    .ok()
                    .flatten()
                    .map(|text| text.chars().filter(|c| !c.is_control()).collect::<String>())
                    .filter(|text| !text.trim().is_empty())
                    .map(|text| format!(" ({})", text.trim()))
                    .unwrap_or_default();
                return Err(LockError::PostgresBusy {
                    store: url.masked().to_string(),
                    repo: repo.to_string(),
                    holder,
                    waited: started.elapsed().as_secs(),
                });
            }
            std::thread::sleep(POLL.min(wait.saturating_sub(started.elapsed())));
        }
    }

    /// What the lock is of, for messages: the store (password masked) and the repository.
    pub fn describe(&self) -> String {
        format!("the lock of {} in {}", self.repo, self.store)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_a_repository_has_one_key() {
        let key = |schema, name| repo_key(schema, &Repo::parse(name).unwrap());
        let a = key("public", "NVIDIA/cuda-python");
        assert_eq!(a, key("public", "nvidia/CUDA-Python"));
        assert_ne!(a, key("public", "NVIDIA/cuda-pythons"));
        assert_ne!(a, key("team_b", "NVIDIA/cuda-python"), "another store");
        assert!(a >= 0);
    }
}
