//! `Store`: what the rest of flakestat holds, on either engine. The SQLite store
//! (`SqliteStore`, in a folder, the default for one person) or the PostgreSQL store (`PgStore`,
//! on a server, for a team); both keep the same records at the same schema version and answer
//! every query in the same order, so the same store contents give byte-identical reports.
//!
//! Every method below says what it does on `SqliteStore` (where its doc lives); this file only
//! chooses the engine.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::lock::{LockError, StoreLock};
use super::postgres::{PgLock, PgStore, PostgresUrl};
use super::{
    Access, ArtifactRecord, CachedResponse, Delivery, ListedWindow, LogEntry, LogOutcome, LogPlan,
    QueueStats, QueuedRun, SqliteStore, StoreCounts, StoreError, store_file,
};
use flakestat_core::model::{
    Classification, Job, JobId, LogStatus, MainlineCommit, PrNumber, PullRequest, Repo, Run, RunId,
    Sha, Snapshot, TestOutcomes, Timestamp,
};

/// Where a store is: a cache folder holding the SQLite store, or a PostgreSQL server.
#[derive(Debug, Clone)]
pub enum StoreLocation {
    Sqlite { cache_dir: PathBuf },
    Postgres(PostgresUrl),
}

impl StoreLocation {
    /// For messages: the folder, or the connection string with its password masked.
    pub fn describe(&self) -> String {
        match self {
            StoreLocation::Sqlite { cache_dir } => cache_dir.display().to_string(),
            StoreLocation::Postgres(url) => url.masked().to_string(),
        }
    }
}

enum Engine {
    Sqlite(SqliteStore),
    Postgres(PgStore),
}

/// The store, on either engine. Not `Sync`: share it behind a mutex.
pub struct Store {
    engine: Engine,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.engine {
            Engine::Sqlite(s) => s.fmt(f),
            Engine::Postgres(p) => p.fmt(f),
        }
    }
}

impl From<SqliteStore> for Store {
    fn from(store: SqliteStore) -> Store {
        Store {
            engine: Engine::Sqlite(store),
        }
    }
}

impl From<PgStore> for Store {
    fn from(store: PgStore) -> Store {
        Store {
            engine: Engine::Postgres(store),
        }
    }
}

impl Store {
    /// Opens (creating if needed) the SQLite store in `cache_dir`.
    pub fn open(cache_dir: &Path) -> Result<Store, StoreError> {
        SqliteStore::open(cache_dir).map(Store::from)
    }

    /// Opens (creating if needed) the SQLite store at exactly `path`.
    pub fn open_file(path: &Path) -> Result<Store, StoreError> {
        SqliteStore::open_file(path).map(Store::from)
    }

    /// Connects to the PostgreSQL store at `url`, creating or migrating its tables.
    pub fn open_postgres(url: &PostgresUrl) -> Result<Store, StoreError> {
        PgStore::open(url).map(Store::from)
    }

    /// Opens the store wherever it is.
    pub fn open_at(location: &StoreLocation) -> Result<Store, StoreError> {
        match location {
            StoreLocation::Sqlite { cache_dir } => Store::open(cache_dir),
            StoreLocation::Postgres(url) => Store::open_postgres(url),
        }
    }

    /// Opens the store at `location` for a command that only reads it: `None` when the cache
    /// folder holds no SQLite store (nothing is created there); a store that cannot be written
    /// is opened for reading only. A PostgreSQL store opens as always.
    pub fn open_existing(location: &StoreLocation) -> Result<Option<(Store, Access)>, StoreError> {
        let cache_dir = match location {
            StoreLocation::Sqlite { cache_dir } => cache_dir,
            StoreLocation::Postgres(url) => {
                return Ok(Some((Store::open_postgres(url)?, Access::ReadWrite)));
            }
        };
        let path = store_file(cache_dir);
        if !path.is_file() {
            return Ok(None);
        }
        match SqliteStore::open_file(&path) {
            Ok(store) => Ok(Some((store.into(), Access::ReadWrite))),
            Err(StoreError::ReadOnly { .. }) => Ok(Some((
                SqliteStore::open_read_only(&path)?.into(),
                Access::ReadOnly,
            ))),
            Err(e) => Err(e),
        }
    }

    /// For messages: the database file, or the connection string with its password masked.
    pub fn describe(&self) -> String {
        match &self.engine {
            Engine::Sqlite(s) => s.path().display().to_string(),
            Engine::Postgres(p) => p.url().masked().to_string(),
        }
    }

    /// The PostgreSQL engine, when it is the one.
    #[cfg(test)]
    pub(crate) fn postgres(&self) -> Option<&PgStore> {
        match &self.engine {
            Engine::Sqlite(_) => None,
            Engine::Postgres(p) => Some(p),
        }
    }
}

/// Each method, passed to the engine as it is.
macro_rules! dispatch {
    () => {};
    (fn $name:ident(&mut self $(, $arg:ident: $ty:ty)* $(,)?) -> $ret:ty; $($rest:tt)*) => {
        impl Store {
            #[doc = concat!("See `SqliteStore::", stringify!($name), "`.")]
            pub fn $name(&mut self $(, $arg: $ty)*) -> $ret {
                match &mut self.engine {
                    Engine::Sqlite(s) => s.$name($($arg),*),
                    Engine::Postgres(p) => p.$name($($arg),*),
                }
            }
        }
        dispatch!($($rest)*);
    };
    (fn $name:ident(&self $(, $arg:ident: $ty:ty)* $(,)?) -> $ret:ty; $($rest:tt)*) => {
        impl Store {
            #[doc = concat!("See `SqliteStore::", stringify!($name), "`.")]
            pub fn $name(&self $(, $arg: $ty)*) -> $ret {
                match &self.engine {
                    Engine::Sqlite(s) => s.$name($($arg),*),
                    Engine::Postgres(p) => p.$name($($arg),*),
                }
            }
        }
        dispatch!($($rest)*);
    };
}

dispatch! {
    fn store_repo(&mut self, repo: &Repo, default_branch: &str) -> Result<(), StoreError>;
    fn store_repo_identity(&mut self, canonical: &Repo, github_id: u64, default_branch: &str)
        -> Result<(), StoreError>;
    fn stored_repo(&self, repo: &Repo) -> Result<Option<Repo>, StoreError>;
    fn default_branch(&self, repo: &Repo) -> Result<Option<String>, StoreError>;
    fn repos_of_owner(&self, owner: &str) -> Result<Vec<Repo>, StoreError>;
    fn store_runs(&mut self, repo: &Repo, runs: &[Run]) -> Result<Vec<RunId>, StoreError>;
    fn store_jobs(&mut self, run: RunId, run_attempt: u32, completed: bool, jobs: &[Job])
        -> Result<(), StoreError>;
    fn failed_jobs_without_log(&self, repo: &Repo, since: Timestamp, until: Timestamp)
        -> Result<Vec<(RunId, JobId)>, StoreError>;
    fn load_job(&self, job: JobId) -> Result<Option<Job>, StoreError>;
    fn load_run_jobs(&self, run: RunId) -> Result<Vec<Job>, StoreError>;
    fn run_attempt(&self, run: RunId) -> Result<Option<u32>, StoreError>;
    fn has_log(&self, job: JobId) -> Result<bool, StoreError>;
    fn store_log(&mut self, job: JobId, entry: &LogEntry,
        classification: Option<(&str, &Classification)>) -> Result<(), StoreError>;
    fn store_logs(&mut self, fingerprint: &str, logs: &[LogOutcome], plans: &[(JobId, LogPlan)])
        -> Result<(), StoreError>;
    fn load_log_plans(&self, jobs: &[JobId]) -> Result<BTreeMap<JobId, LogPlan>, StoreError>;
    fn load_log(&self, job: JobId) -> Result<Option<Vec<u8>>, StoreError>;
    fn logs_to_classify(&self, repo: &Repo, fingerprint: &str) -> Result<Vec<JobId>, StoreError>;
    fn store_classification(&mut self, job: JobId, fingerprint: &str,
        classification: &Classification) -> Result<(), StoreError>;
    fn runs_with_hits(&self, repo: &Repo, since: Timestamp, until: Timestamp, fingerprint: &str)
        -> Result<Vec<Run>, StoreError>;
    fn store_pulls(&mut self, repo: &Repo, pulls: &[PullRequest]) -> Result<(), StoreError>;
    fn store_pull_files(&mut self, repo: &Repo, number: PrNumber, files: &[String])
        -> Result<(), StoreError>;
    fn load_pull(&self, repo: &Repo, number: PrNumber) -> Result<Option<PullRequest>, StoreError>;
    fn cached_response(&self, url: &str) -> Result<Option<CachedResponse>, StoreError>;
    fn store_response(&mut self, url: &str, etag: &str, body: &[u8], now: Timestamp)
        -> Result<(), StoreError>;
    fn touch_response(&mut self, url: &str, now: Timestamp) -> Result<(), StoreError>;
    fn prune_responses(&mut self, before: Timestamp) -> Result<u64, StoreError>;
    fn load_windows(&self, repo: &Repo, scope: &str, from: Timestamp, to: Timestamp)
        -> Result<Vec<ListedWindow>, StoreError>;
    fn surveyed_to(&self, repo: &Repo) -> Result<Option<Timestamp>, StoreError>;
    fn store_window(&mut self, repo: &Repo, scope: &str, window: &ListedWindow)
        -> Result<(), StoreError>;
    fn counts(&self, repo: &Repo) -> Result<StoreCounts, StoreError>;
    fn store_artifacts(&mut self, run: RunId, pattern: &str, artifacts: &[ArtifactRecord])
        -> Result<(), StoreError>;
    fn artifacts_listed(&self, run: RunId, pattern: &str) -> Result<bool, StoreError>;
    fn artifact_ids(&self, run: RunId) -> Result<BTreeSet<u64>, StoreError>;
    fn load_artifacts(&self, run: RunId) -> Result<Vec<ArtifactRecord>, StoreError>;
    fn junit_tests(&self, jobs: &[JobId]) -> Result<BTreeMap<JobId, TestOutcomes>, StoreError>;
    fn load_runs(&self, repo: &Repo) -> Result<HashMap<RunId, Run>, StoreError>;
    fn store_mainline(&mut self, repo: &Repo, commits: &[MainlineCommit])
        -> Result<(), StoreError>;
    fn load_mainline(&self, repo: &Repo, until: Timestamp)
        -> Result<Vec<MainlineCommit>, StoreError>;
    fn store_parents(&mut self, repo: &Repo, parents: &[(Sha, Vec<Sha>)])
        -> Result<(), StoreError>;
    fn load_parents(&self, repo: &Repo) -> Result<BTreeMap<Sha, Vec<Sha>>, StoreError>;
    fn store_commit_files(&mut self, repo: &Repo, sha: &Sha, files: &[String])
        -> Result<(), StoreError>;
    fn store_fork_point(&mut self, repo: &Repo, head: &Sha, fork: Option<&MainlineCommit>)
        -> Result<(), StoreError>;
    fn load_fork_points(&self, repo: &Repo) -> Result<BTreeMap<Sha, Sha>, StoreError>;
    fn asked_fork_points(&self, repo: &Repo) -> Result<BTreeSet<Sha>, StoreError>;
    fn store_green_log(&mut self, job: JobId, entry: &LogEntry) -> Result<(), StoreError>;
    fn green_log_statuses(&self, jobs: &[JobId]) -> Result<BTreeMap<JobId, LogStatus>, StoreError>;
    fn load_green_log(&self, job: JobId) -> Result<Option<Vec<u8>>, StoreError>;
    fn queue_delivery(&mut self, delivery: &Delivery) -> Result<bool, StoreError>;
    fn next_queued_run(&self) -> Result<Option<QueuedRun>, StoreError>;
    fn finish_queued_run(&mut self, run: RunId, run_attempt: u32) -> Result<u64, StoreError>;
    fn fail_queued_run(&mut self, delivery: &str, error: &str, give_up: bool)
        -> Result<(), StoreError>;
    fn queue_stats(&self) -> Result<QueueStats, StoreError>;
}

impl Store {
    /// The window's runs, jobs, logs' outcomes, classifications, pull requests and ancestry
    /// (see `SqliteStore::load_snapshot`), with the tests of every job that has a stored JUnit
    /// artifact taken from it instead of from its log: the runner's own report is the better
    /// witness (`artifacts.rs`).
    pub fn load_snapshot(
        &self,
        repo: &Repo,
        since: Timestamp,
        until: Timestamp,
        fingerprint: &str,
    ) -> Result<Snapshot, StoreError> {
        let mut snapshot = match &self.engine {
            Engine::Sqlite(s) => s.load_snapshot(repo, since, until, fingerprint)?,
            Engine::Postgres(p) => p.load_snapshot(repo, since, until, fingerprint)?,
        };
        let jobs: Vec<JobId> = snapshot.classifications.keys().copied().collect();
        for (job, tests) in self.junit_tests(&jobs)? {
            if let Some(classification) = snapshot.classifications.get_mut(&job) {
                classification.tests = tests;
            }
        }
        Ok(snapshot)
    }
}

/// One writer at a time: the SQLite store's lock file (the whole store), or the PostgreSQL
/// store's advisory lock of the repository. Dropping it releases the lock.
#[derive(Debug)]
pub enum StoreGuard {
    File(StoreLock),
    Postgres(PgLock),
}

impl StoreGuard {
    /// Takes the lock for writing `repo` into the store at `location`, trying again until
    /// `wait` has passed; `holder` names the taker in the next one's message.
    pub fn acquire(
        location: &StoreLocation,
        repo: &Repo,
        wait: Duration,
        holder: &str,
    ) -> Result<StoreGuard, LockError> {
        match location {
            StoreLocation::Sqlite { cache_dir } => {
                StoreLock::acquire(cache_dir, wait, holder).map(StoreGuard::File)
            }
            StoreLocation::Postgres(url) => {
                PgLock::acquire(url, repo, wait, holder).map(StoreGuard::Postgres)
            }
        }
    }

    /// What is held, for `-v`.
    pub fn describe(&self) -> String {
        match self {
            StoreGuard::File(lock) => lock.path().display().to_string(),
            StoreGuard::Postgres(lock) => lock.describe(),
        }
    }
}
