//! The only place SQL appears: the embedded SQLite store that a survey fills and every report
//! reads.
//!
//! One file, `<cache dir>/store-v1/flakestat.sqlite3` (the folder's version changes only if the
//! layout ever changes incompatibly; compatible changes are migrations, see `schema`). The folder
//! is created 0700 and the file 0600: it holds private repositories' logs. WAL mode, so a report
//! can read while a survey writes, and every write that belongs together is one transaction: a
//! run's jobs, a log with its classification. What is in the store is therefore always whole, and
//! an interrupted survey resumes from it.
//!
//! Raw logs are kept zstd-compressed, so a change of signatures re-classifies them without a
//! download; classifications are keyed by the signature set's fingerprint.
//!
//! `Store` (`engine.rs`) is what the rest of flakestat holds: this SQLite store, or the same
//! tables on a PostgreSQL server for a team (`postgres/`), chosen by a `StoreLocation`. Both
//! engines keep the same records, at the same schema version, and return them in the same order.

mod ancestry;
mod artifacts;
mod engine;
mod green;
pub mod lock;
mod owners;
mod plans;
pub mod postgres;
mod queue;
mod reclassify;
mod schema;

use std::collections::{BTreeMap, HashMap};
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use rusqlite::{Connection, OptionalExtension, Transaction, params};

use flakestat_core::model::{
    Classification, Job, JobId, LogStatus, PrNumber, PullRequest, Repo, Run, RunId, Snapshot,
    Timestamp,
};

pub use ancestry::mainline_scope;
pub use artifacts::{ArtifactRecord, ArtifactStatus};
pub use engine::{Store, StoreGuard, StoreLocation};
pub use plans::{LogOutcome, LogPlan};
pub use postgres::PostgresUrl;
pub use queue::{Delivery, QueueStats, QueuedRun};
pub use reclassify::reclassify_stored;
pub use schema::SCHEMA_VERSION;

/// The folder inside the cache dir; its number changes only with an incompatible layout.
pub const STORE_DIR: &str = "store-v1";
/// The database file inside `STORE_DIR`.
pub const STORE_FILE: &str = "flakestat.sqlite3";
/// How far before `since` `load_snapshot` reaches for earlier runs ("clean runs before" the
/// first hit, bisection). Surveys fetch merged PRs over the same lookback.
pub const HISTORY_DAYS: i64 = 14;
/// zstd level for logs: fast, and raw logs still shrink ~10×.
const LOG_ZSTD_LEVEL: i32 = 3;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot create the cache folder {path}: {source}")]
    CreateDir { path: PathBuf, source: io::Error },
    #[error("cannot create the store {path}: {source}")]
    CreateFile { path: PathBuf, source: io::Error },
    #[error("cannot open the store {path}: {source}")]
    Open {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error("not a flakestat store: {path} is not a database flakestat wrote; move it away")]
    NotAStore { path: PathBuf },
    #[error(
        "damaged store at {path} ({detail}); delete that file (the next survey fetches everything again)"
    )]
    Damaged { path: PathBuf, detail: String },
    #[error(
        "read-only store at {path}: a survey writes to it (and to its folder); make both writable"
    )]
    ReadOnly { path: PathBuf },
    #[error(
        "the read-only store at {path} has schema {found} and this flakestat reads {known}: bringing it forward writes to it; make it and its folder writable once"
    )]
    ReadOnlyOld {
        path: PathBuf,
        found: u32,
        known: u32,
    },
    #[error(
        "{path} is inside the store in {cache_dir}: a store never holds another; use {cache_dir} as the cache folder"
    )]
    Nested { path: PathBuf, cache_dir: PathBuf },
    #[error(
        "the store at {path} was made by a newer flakestat (schema {found}; this one knows {known}): upgrade flakestat"
    )]
    TooNew {
        path: PathBuf,
        found: u32,
        known: u32,
    },
    #[error("store: {}", sql_message(.0))]
    Sql(#[from] rusqlite::Error),
    #[error(
        "not a PostgreSQL URL: {store} ({detail}); write postgres://USER:PASSWORD@HOST:PORT/DATABASE"
    )]
    PostgresUrl { store: String, detail: String },
    #[error("cannot reach the PostgreSQL store {store}: {detail}; check the server")]
    PostgresConnect { store: String, detail: String },
    #[error(
        "not a flakestat store: the PostgreSQL schema of {store} holds other tables; use an empty database, or another schema (?options=-csearch_path%3DNAME)"
    )]
    PostgresNotAStore { store: String },
    #[error(
        "the PostgreSQL store {store} was made by a newer flakestat (schema {found}; this one knows {known}): upgrade flakestat"
    )]
    PostgresTooNew {
        store: String,
        found: u32,
        known: u32,
    },
    /// A failure met on an open PostgreSQL store (the server's words, never the SQL).
    #[error("PostgreSQL store {store}: {detail}")]
    Postgres { store: String, detail: String },
    #[error("store: a stored record does not parse ({0}); delete the cache folder to start over")]
    Corrupt(String),
    #[error("store: cannot read a stored log: {0}")]
    Log(io::Error),
}

impl StoreError {
    /// Whether the store file itself is at fault (not a store, damaged, read-only, made by a
    /// newer flakestat): another cache folder gets past it. Messages here name no flag; the
    /// caller says how to choose another folder.
    pub fn another_cache_dir_helps(&self) -> bool {
        use rusqlite::ErrorCode;
        match self {
            StoreError::NotAStore { .. }
            | StoreError::Damaged { .. }
            | StoreError::ReadOnly { .. }
            | StoreError::ReadOnlyOld { .. }
            | StoreError::Nested { .. }
            | StoreError::TooNew { .. } => true,
            StoreError::Sql(e) => matches!(
                e.sqlite_error_code(),
                Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase | ErrorCode::ReadOnly)
            ),
            _ => false,
        }
    }
}

/// What an SQLite failure met after opening means for the user (never the SQL itself).
fn sql_message(err: &rusqlite::Error) -> String {
    use rusqlite::ErrorCode;
    match err.sqlite_error_code() {
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => format!(
            "damaged store ({}); delete the store folder (the next survey fetches everything again)",
            sqlite_detail(err)
        ),
        Some(ErrorCode::ReadOnly) => "read-only store: make it and its folder writable".to_string(),
        Some(ErrorCode::DiskFull) => "the disk is full: free some space and run again".to_string(),
        _ => sqlite_detail(err),
    }
}

/// SQLite's own words for a failure, without any SQL text rusqlite may carry.
fn sqlite_detail(err: &rusqlite::Error) -> String {
    match err {
        rusqlite::Error::SqliteFailure(e, _) => e.to_string(),
        rusqlite::Error::SqlInputError { error, .. } => error.to_string(),
        other => other.to_string(),
    }
}

/// The user-facing error for an SQLite failure while opening the store at `path`.
fn open_error(path: &Path, err: rusqlite::Error) -> StoreError {
    use rusqlite::ErrorCode;
    let path = path.to_path_buf();
    match err.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) => StoreError::NotAStore { path },
        Some(ErrorCode::DatabaseCorrupt) => StoreError::Damaged {
            path,
            detail: sqlite_detail(&err),
        },
        Some(ErrorCode::ReadOnly | ErrorCode::PermissionDenied) => StoreError::ReadOnly { path },
        Some(ErrorCode::CannotOpen) if path.exists() => StoreError::ReadOnly { path },
        _ => StoreError::Open { path, source: err },
    }
}

/// `path` as an SQLite `file:` URI (`%`, `?` and `#` escaped).
fn file_uri(path: &Path) -> String {
    let mut uri = String::from("file:");
    for c in path.to_string_lossy().chars() {
        match c {
            '%' => uri.push_str("%25"),
            '?' => uri.push_str("%3f"),
            '#' => uri.push_str("%23"),
            c => uri.push(c),
        }
    }
    uri
}

/// What became of a failed job's log, ready to be written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogEntry {
    /// The log, compressed by `compress_log`.
    Stored(CompressedLog),
    Expired,
    Missing,
    /// GitHub served another execution's log for the job (an earlier attempt's job id answered
    /// with the latest attempt's log) and the attempt's archive held none of its own.
    Mismatched,
    /// Its download was refused (a redirect flakestat does not follow).
    Unavailable,
}

/// A zstd-compressed raw log and its uncompressed size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompressedLog {
    raw_size: u64,
    zstd: Vec<u8>,
}

impl CompressedLog {
    pub fn raw_size(&self) -> u64 {
        self.raw_size
    }
}

/// Compresses a raw log for `Store::store_log`. CPU work: call it off the async threads.
pub fn compress_log(raw: &[u8]) -> CompressedLog {
    CompressedLog {
        raw_size: raw.len() as u64,
        zstd: zstd::encode_all(raw, LOG_ZSTD_LEVEL).expect("compressing into memory cannot fail"),
    }
}

/// `compress_log` from a reader (a log spooled to a file): the raw log is never held whole, only
/// its compressed form.
pub fn compress_log_reader(raw: impl io::Read) -> io::Result<CompressedLog> {
    struct Counting<R> {
        inner: R,
        count: u64,
    }
    impl<R: io::Read> io::Read for Counting<R> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.inner.read(buf)?;
            self.count += n as u64;
            Ok(n)
        }
    }
    let mut counting = Counting {
        inner: raw,
        count: 0,
    };
    let zstd = zstd::encode_all(&mut counting, LOG_ZSTD_LEVEL)?;
    Ok(CompressedLog {
        raw_size: counting.count,
        zstd,
    })
}

/// A body kept with its ETag, for conditional requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachedResponse {
    pub etag: String,
    pub body: Vec<u8>,
}

/// A run-listing window `[since, until)` listed in full, and how many runs GitHub said it held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListedWindow {
    pub since: Timestamp,
    pub until: Timestamp,
    pub runs: u64,
}

/// Counts of what the store holds for one repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StoreCounts {
    pub runs: u64,
    pub jobs: u64,
    pub logs_stored: u64,
    pub logs_expired: u64,
    pub logs_missing: u64,
}

/// The embedded SQLite store (the engine behind `Store` by default). Not `Sync`: share it behind
/// a mutex.
pub struct SqliteStore {
    conn: Connection,
    path: PathBuf,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.path)
            .finish()
    }
}

fn secs(t: Timestamp) -> i64 {
    t.timestamp()
}

fn from_secs(s: i64) -> Timestamp {
    DateTime::<Utc>::from_timestamp(s, 0).unwrap_or_default()
}

fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("model types serialize")
}

fn from_json<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt(e.to_string()))
}

/// The cache folder of the store `dir` lies in, when it does: `dir` or one of its parents is a
/// store folder (`store-v1`, holding the database file). A cache folder there would nest a
/// store in a store.
pub fn enclosing_store(dir: &Path) -> Option<PathBuf> {
    let dir = std::path::absolute(dir).ok()?;
    dir.ancestors()
        .find(|a| a.join(STORE_FILE).is_file())
        .map(|store| store.parent().unwrap_or(store).to_path_buf())
}

/// The database file of the SQLite store in `cache_dir`.
pub fn store_file(cache_dir: &Path) -> PathBuf {
    cache_dir.join(STORE_DIR).join(STORE_FILE)
}

/// How a store was opened for a command that only reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    ReadWrite,
    /// The store cannot be written: nothing is stored, not even classifications.
    ReadOnly,
}

impl SqliteStore {
    /// Opens (creating if needed) the store in `cache_dir`: `cache_dir/store-v1/flakestat.sqlite3`.
    /// A `cache_dir` inside another store is refused ([`enclosing_store`]).
    pub fn open(cache_dir: &Path) -> Result<SqliteStore, StoreError> {
        if let Some(enclosing) = enclosing_store(cache_dir) {
            return Err(StoreError::Nested {
                path: cache_dir.to_path_buf(),
                cache_dir: enclosing,
            });
        }
        let dir = cache_dir.join(STORE_DIR);
        create_private_dir(&dir).map_err(|source| StoreError::CreateDir {
            path: dir.clone(),
            source,
        })?;
        SqliteStore::open_file(&dir.join(STORE_FILE))
    }

    /// Opens the existing store at `path` for reading only (a store that cannot be written still
    /// reports). A store of another schema version is refused: a newer one as always, an older
    /// one because bringing it forward writes.
    pub fn open_read_only(path: &Path) -> Result<SqliteStore, StoreError> {
        use rusqlite::OpenFlags;
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let open_err = |source| open_error(path, source);
        let open = |uri: &str| -> rusqlite::Result<Connection> {
            let conn = Connection::open_with_flags(uri, flags)?;
            // Reading the schema is what fails when WAL's shared memory cannot be made.
            conn.query_row("SELECT count(*) FROM sqlite_master", [], |row| {
                row.get::<_, i64>(0)
            })?;
            Ok(conn)
        };
        let uri = file_uri(path);
        // In a folder that cannot be written, WAL's `-shm` file cannot be made: read the file
        // as immutable (nobody writes a store neither they nor we can write).
        let conn = open(&uri)
            .or_else(|_| open(&format!("{uri}?immutable=1")))
            .map_err(open_err)?;
        let found: u32 = conn
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .map_err(open_err)?;
        if found > SCHEMA_VERSION {
            return Err(StoreError::TooNew {
                path: path.to_path_buf(),
                found,
                known: SCHEMA_VERSION,
            });
        }
        if found == 0 {
            return Err(StoreError::NotAStore {
                path: path.to_path_buf(),
            });
        }
        if found < SCHEMA_VERSION {
            return Err(StoreError::ReadOnlyOld {
                path: path.to_path_buf(),
                found,
                known: SCHEMA_VERSION,
            });
        }
        conn.busy_timeout(Duration::from_secs(30))
            .map_err(open_err)?;
        Ok(SqliteStore {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// Opens (creating if needed) the store at exactly `path`; the file is created 0600.
    pub fn open_file(path: &Path) -> Result<SqliteStore, StoreError> {
        create_private_file(path).map_err(|source| {
            if source.kind() == io::ErrorKind::PermissionDenied && path.exists() {
                StoreError::ReadOnly {
                    path: path.to_path_buf(),
                }
            } else {
                StoreError::CreateFile {
                    path: path.to_path_buf(),
                    source,
                }
            }
        })?;
        let open_err = |source| open_error(path, source);
        let mut conn = Connection::open(path).map_err(open_err)?;
        conn.busy_timeout(Duration::from_secs(30))
            .map_err(open_err)?;
        // Fails on a read-only file or folder, which is the moment to say so.
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(open_err)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(open_err)?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(open_err)?;
        schema::migrate(&mut conn).map_err(|e| match e {
            StoreError::Sql(source) => open_err(source),
            StoreError::TooNew { found, known, .. } => StoreError::TooNew {
                path: path.to_path_buf(),
                found,
                known,
            },
            StoreError::NotAStore { .. } => StoreError::NotAStore {
                path: path.to_path_buf(),
            },
            other => other,
        })?;
        Ok(SqliteStore {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The repository's row: its name compared without case, as GitHub does (`nvidia/x` is
    /// `NVIDIA/x`), so any spelling finds what a survey stored.
    fn repo_id(&self, repo: &Repo) -> Result<Option<i64>, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT id FROM repos WHERE owner = ?1 COLLATE NOCASE AND name = ?2 COLLATE NOCASE",
                params![repo.owner, repo.name],
                |row| row.get(0),
            )
            .optional()?)
    }

    fn ensure_repo(tx: &Transaction<'_>, repo: &Repo) -> Result<i64, StoreError> {
        let find = |tx: &Transaction<'_>| {
            tx.query_row(
                "SELECT id FROM repos WHERE owner = ?1 COLLATE NOCASE AND name = ?2 COLLATE NOCASE",
                params![repo.owner, repo.name],
                |row| row.get(0),
            )
            .optional()
        };
        if let Some(id) = find(tx)? {
            return Ok(id);
        }
        tx.execute(
            "INSERT INTO repos (owner, name) VALUES (?1, ?2)",
            params![repo.owner, repo.name],
        )?;
        Ok(tx.last_insert_rowid())
    }

    /// Records the repository and its default branch.
    pub fn store_repo(&mut self, repo: &Repo, default_branch: &str) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        let id = SqliteStore::ensure_repo(&tx, repo)?;
        tx.execute(
            "UPDATE repos SET default_branch = ?1 WHERE id = ?2",
            params![default_branch, id],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Records the repository as GitHub names it (`full_name`), under its GitHub id: the row
    /// with that id keeps everything stored for it whatever spelling or former name it was
    /// stored under; it takes the canonical name, which a row of another repository that held
    /// that name (renamed away since) gives up.
    pub fn store_repo_identity(
        &mut self,
        canonical: &Repo,
        github_id: u64,
        default_branch: &str,
    ) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        let by_id: Option<i64> = tx
            .query_row(
                "SELECT id FROM repos WHERE github_id = ?1",
                [github_id],
                |row| row.get(0),
            )
            .optional()?;
        let by_name: Option<(i64, Option<u64>)> = tx
            .query_row(
                "SELECT id, github_id FROM repos
                 WHERE owner = ?1 COLLATE NOCASE AND name = ?2 COLLATE NOCASE",
                params![canonical.owner, canonical.name],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()?;
        let id = match (by_id, by_name) {
            (Some(id), Some((other, _))) if other != id => {
                // Another repository held this name: it keeps its data under a name no
                // `--repo` can spell (`owner/name#id`), until a survey of it names it again.
                tx.execute(
                    "UPDATE repos SET name = name || '#' || coalesce(github_id, id) WHERE id = ?1",
                    [other],
                )?;
                id
            }
            (Some(id), _) => id,
            (None, Some((id, None))) => id,
            (None, Some((other, Some(_)))) => {
                tx.execute(
                    "UPDATE repos SET name = name || '#' || github_id WHERE id = ?1",
                    [other],
                )?;
                tx.execute(
                    "INSERT INTO repos (owner, name) VALUES (?1, ?2)",
                    params![canonical.owner, canonical.name],
                )?;
                tx.last_insert_rowid()
            }
            (None, None) => {
                tx.execute(
                    "INSERT INTO repos (owner, name) VALUES (?1, ?2)",
                    params![canonical.owner, canonical.name],
                )?;
                tx.last_insert_rowid()
            }
        };
        tx.execute(
            "UPDATE repos SET owner = ?1, name = ?2, github_id = ?3, default_branch = ?4
             WHERE id = ?5",
            params![
                canonical.owner,
                canonical.name,
                github_id,
                default_branch,
                id
            ],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// The repository as stored (GitHub's spelling once a survey resolved it) for any spelling
    /// of its name; `None` when the store does not know it.
    pub fn stored_repo(&self, repo: &Repo) -> Result<Option<Repo>, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT owner, name FROM repos
                 WHERE owner = ?1 COLLATE NOCASE AND name = ?2 COLLATE NOCASE",
                params![repo.owner, repo.name],
                |row| {
                    Ok(Repo {
                        owner: row.get(0)?,
                        name: row.get(1)?,
                    })
                },
            )
            .optional()?)
    }

    /// The default branch recorded by `store_repo`, if any.
    pub fn default_branch(&self, repo: &Repo) -> Result<Option<String>, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT default_branch FROM repos
                 WHERE owner = ?1 COLLATE NOCASE AND name = ?2 COLLATE NOCASE",
                params![repo.owner, repo.name],
                |row| row.get::<_, Option<String>>(0),
            )
            .optional()?
            .flatten())
    }

    /// Inserts or updates runs as a listing shows them (at their latest attempt), in one
    /// transaction. Returns the ids of those whose jobs must be (re)fetched: new runs, runs with a
    /// new attempt, and runs whose stored attempt was not completed when its jobs were fetched.
    pub fn store_runs(&mut self, repo: &Repo, runs: &[Run]) -> Result<Vec<RunId>, StoreError> {
        let tx = self.conn.transaction()?;
        let repo_id = SqliteStore::ensure_repo(&tx, repo)?;
        let mut need_jobs = Vec::new();
        {
            let mut upsert = tx.prepare_cached(
                "INSERT INTO runs (id, repo_id, created_at, run_attempt, status, json)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT (id) DO UPDATE SET
                    created_at = excluded.created_at, run_attempt = excluded.run_attempt,
                    status = excluded.status, json = excluded.json
                 RETURNING jobs_attempt, jobs_completed",
            )?;
            for run in runs {
                let (jobs_attempt, jobs_completed): (Option<u32>, bool) = upsert.query_row(
                    params![
                        run.id.0,
                        repo_id,
                        secs(run.created_at),
                        run.run_attempt,
                        run.status.as_str(),
                        to_json(run)
                    ],
                    |row| Ok((row.get(0)?, row.get(1)?)),
                )?;
                let up_to_date = jobs_attempt == Some(run.run_attempt) && jobs_completed;
                if !up_to_date {
                    need_jobs.push(run.id);
                }
            }
        }
        tx.commit()?;
        Ok(need_jobs)
    }

    /// Stores every job of every attempt of a run up to `run_attempt`, in one transaction, and
    /// marks the run's jobs as fetched for that attempt (final when `completed`).
    pub fn store_jobs(
        &mut self,
        run: RunId,
        run_attempt: u32,
        completed: bool,
        jobs: &[Job],
    ) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        {
            let mut upsert = tx.prepare_cached(
                "INSERT INTO jobs (id, run_id, run_attempt, failed, json) VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (id) DO UPDATE SET
                    run_attempt = excluded.run_attempt, failed = excluded.failed,
                    json = excluded.json",
            )?;
            for job in jobs {
                upsert.execute(params![
                    job.id.0,
                    job.run_id.0,
                    job.run_attempt,
                    job.is_failed(),
                    to_json(job)
                ])?;
            }
        }
        tx.execute(
            "UPDATE runs SET jobs_attempt = ?1, jobs_completed = ?2 WHERE id = ?3",
            params![run_attempt, completed, run.0],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Failed jobs (failure, timed_out) of the repository's runs created in `[since, until)`
    /// whose log is not stored yet, with their run, oldest first.
    pub fn failed_jobs_without_log(
        &self,
        repo: &Repo,
        since: Timestamp,
        until: Timestamp,
    ) -> Result<Vec<(RunId, JobId)>, StoreError> {
        let Some(repo_id) = self.repo_id(repo)? else {
            return Ok(Vec::new());
        };
        let mut stmt = self.conn.prepare_cached(
            "SELECT jobs.run_id, jobs.id FROM jobs JOIN runs ON runs.id = jobs.run_id
             LEFT JOIN logs ON logs.job_id = jobs.id
             WHERE runs.repo_id = ?1 AND runs.created_at >= ?2 AND runs.created_at < ?3
               AND jobs.failed AND logs.job_id IS NULL
             ORDER BY runs.created_at, jobs.run_id, jobs.id",
        )?;
        let rows = stmt.query_map(params![repo_id, secs(since), secs(until)], |row| {
            Ok((RunId(row.get(0)?), JobId(row.get(1)?)))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One stored job.
    pub fn load_job(&self, job: JobId) -> Result<Option<Job>, StoreError> {
        let json: Option<String> = self
            .conn
            .query_row("SELECT json FROM jobs WHERE id = ?1", [job.0], |row| {
                row.get(0)
            })
            .optional()?;
        json.map(|j| from_json(&j)).transpose()
    }

    /// Every stored job of a run, of every attempt, by (attempt, id).
    pub fn load_run_jobs(&self, run: RunId) -> Result<Vec<Job>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT json FROM jobs WHERE run_id = ?1 ORDER BY run_attempt, id")?;
        let mut rows = stmt.query([run.0])?;
        let mut jobs = Vec::new();
        while let Some(row) = rows.next()? {
            jobs.push(from_json(&row.get::<_, String>(0)?)?);
        }
        Ok(jobs)
    }

    /// The attempt a run was last listed at; `None` when the run is not stored.
    pub fn run_attempt(&self, run: RunId) -> Result<Option<u32>, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT run_attempt FROM runs WHERE id = ?1",
                [run.0],
                |row| row.get(0),
            )
            .optional()?)
    }

    /// Whether a job's log outcome (stored, expired or missing) is recorded.
    pub fn has_log(&self, job: JobId) -> Result<bool, StoreError> {
        Ok(self
            .conn
            .query_row("SELECT 1 FROM logs WHERE job_id = ?1", [job.0], |_| Ok(()))
            .optional()?
            .is_some())
    }

    /// Writes a log outcome and, for a stored log, its classification, in one transaction; the
    /// job's plan (`plans.rs`) is forgotten.
    pub fn store_log(
        &mut self,
        job: JobId,
        entry: &LogEntry,
        classification: Option<(&str, &Classification)>,
    ) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        plans::write_log(&tx, job, entry, classification)?;
        tx.commit()?;
        Ok(())
    }

    /// A stored log, decompressed; `None` when not stored.
    pub fn load_log(&self, job: JobId) -> Result<Option<Vec<u8>>, StoreError> {
        let blob: Option<Vec<u8>> = self
            .conn
            .query_row(
                "SELECT zstd FROM logs WHERE job_id = ?1 AND status = 'stored'",
                [job.0],
                |row| row.get(0),
            )
            .optional()?;
        blob.map(|b| zstd::decode_all(&b[..]).map_err(StoreError::Log))
            .transpose()
    }

    /// Stored logs of the repository with no classification for `fingerprint` (the signatures
    /// changed since they were classified, or classification was interrupted).
    pub fn logs_to_classify(
        &self,
        repo: &Repo,
        fingerprint: &str,
    ) -> Result<Vec<JobId>, StoreError> {
        let Some(repo_id) = self.repo_id(repo)? else {
            return Ok(Vec::new());
        };
        let mut stmt = self.conn.prepare_cached(
            "SELECT logs.job_id FROM logs JOIN jobs ON jobs.id = logs.job_id
             JOIN runs ON runs.id = jobs.run_id
             LEFT JOIN classifications c ON c.job_id = logs.job_id AND c.fingerprint = ?2
             WHERE runs.repo_id = ?1 AND logs.status = 'stored' AND c.job_id IS NULL
             ORDER BY logs.job_id",
        )?;
        let rows = stmt.query_map(params![repo_id, fingerprint], |row| Ok(JobId(row.get(0)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Stores one classification.
    pub fn store_classification(
        &mut self,
        job: JobId,
        fingerprint: &str,
        classification: &Classification,
    ) -> Result<(), StoreError> {
        upsert_classification(&self.conn, job, fingerprint, classification)
    }

    /// Runs of the repository created in `[since, until)` with a job whose log matched some
    /// signature or names a failed test (classified with `fingerprint`), oldest first: the
    /// runs whose PRs' files tell whether a PR is related to a flake or to a test. (A failed
    /// test is found in the stored JSON: `"tests":{"failed":[{` appears there only when the
    /// list is not empty, since a log's own text is escaped inside JSON strings.)
    pub fn runs_with_hits(
        &self,
        repo: &Repo,
        since: Timestamp,
        until: Timestamp,
        fingerprint: &str,
    ) -> Result<Vec<Run>, StoreError> {
        let Some(repo_id) = self.repo_id(repo)? else {
            return Ok(Vec::new());
        };
        let mut stmt = self.conn.prepare_cached(
            "SELECT runs.json FROM runs WHERE runs.repo_id = ?1
               AND runs.created_at >= ?2 AND runs.created_at < ?3
               AND EXISTS (SELECT 1 FROM jobs JOIN classifications c ON c.job_id = jobs.id
                           WHERE jobs.run_id = runs.id AND c.fingerprint = ?4
                             AND (c.matched OR c.json LIKE '%\"tests\":{\"failed\":[{%'))
             ORDER BY runs.created_at, runs.id",
        )?;
        let mut rows = stmt.query(params![repo_id, secs(since), secs(until), fingerprint])?;
        let mut runs = Vec::new();
        while let Some(row) = rows.next()? {
            runs.push(from_json(&row.get::<_, String>(0)?)?);
        }
        Ok(runs)
    }

    /// Inserts or updates pull requests; files already stored are kept when `files` is `None`.
    pub fn store_pulls(&mut self, repo: &Repo, pulls: &[PullRequest]) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        let repo_id = SqliteStore::ensure_repo(&tx, repo)?;
        {
            let mut upsert = tx.prepare_cached(
                "INSERT INTO pulls (repo_id, number, json, files) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (repo_id, number) DO UPDATE SET
                    json = excluded.json, files = coalesce(excluded.files, pulls.files)",
            )?;
            for pull in pulls {
                let mut bare = pull.clone();
                let files = bare.files.take().map(|f| to_json(&f));
                upsert.execute(params![repo_id, pull.number.0, to_json(&bare), files])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// Stores the files a pull request changed.
    pub fn store_pull_files(
        &mut self,
        repo: &Repo,
        number: PrNumber,
        files: &[String],
    ) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        let repo_id = SqliteStore::ensure_repo(&tx, repo)?;
        tx.execute(
            "UPDATE pulls SET files = ?1 WHERE repo_id = ?2 AND number = ?3",
            params![to_json(&files), repo_id, number.0],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// One stored pull request (with its files when fetched).
    pub fn load_pull(
        &self,
        repo: &Repo,
        number: PrNumber,
    ) -> Result<Option<PullRequest>, StoreError> {
        let Some(repo_id) = self.repo_id(repo)? else {
            return Ok(None);
        };
        let row: Option<(String, Option<String>)> = self
            .conn
            .query_row(
                "SELECT json, files FROM pulls WHERE repo_id = ?1 AND number = ?2",
                params![repo_id, number.0],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()?;
        row.map(|(json, files)| pull_from_row(&json, files.as_deref()))
            .transpose()
    }

    /// The body and ETag last stored for `url`.
    pub fn cached_response(&self, url: &str) -> Result<Option<CachedResponse>, StoreError> {
        let row: Option<(String, Vec<u8>)> = self
            .conn
            .query_row(
                "SELECT etag, zstd FROM etags WHERE url = ?1",
                [url],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()?;
        row.map(|(etag, zstd)| {
            Ok(CachedResponse {
                etag,
                body: zstd::decode_all(&zstd[..]).map_err(StoreError::Log)?,
            })
        })
        .transpose()
    }

    /// Keeps a response body with its ETag, used at `now`.
    pub fn store_response(
        &mut self,
        url: &str,
        etag: &str,
        body: &[u8],
        now: Timestamp,
    ) -> Result<(), StoreError> {
        let zstd = zstd::encode_all(body, LOG_ZSTD_LEVEL).map_err(StoreError::Log)?;
        self.conn.execute(
            "INSERT OR REPLACE INTO etags (url, etag, zstd, used_at) VALUES (?1, ?2, ?3, ?4)",
            params![url, etag, zstd, secs(now)],
        )?;
        Ok(())
    }

    /// Notes that a kept body was used again (a 304) at `now`.
    pub fn touch_response(&mut self, url: &str, now: Timestamp) -> Result<(), StoreError> {
        self.conn.execute(
            "UPDATE etags SET used_at = ?2 WHERE url = ?1",
            params![url, secs(now)],
        )?;
        Ok(())
    }

    /// Forgets kept bodies not used since `before` (URLs of windows that ended at a past "now"
    /// are never asked again); returns how many.
    pub fn prune_responses(&mut self, before: Timestamp) -> Result<u64, StoreError> {
        Ok(self
            .conn
            .execute("DELETE FROM etags WHERE used_at < ?1", [secs(before)])? as u64)
    }

    /// Listing windows that fitted under the cap last time, inside `[from, to)`, by start.
    pub fn load_windows(
        &self,
        repo: &Repo,
        scope: &str,
        from: Timestamp,
        to: Timestamp,
    ) -> Result<Vec<ListedWindow>, StoreError> {
        let Some(repo_id) = self.repo_id(repo)? else {
            return Ok(Vec::new());
        };
        let mut stmt = self.conn.prepare_cached(
            "SELECT since, until, runs FROM windows
             WHERE repo_id = ?1 AND scope = ?2 AND since >= ?3 AND until <= ?4 ORDER BY since",
        )?;
        let rows = stmt.query_map(params![repo_id, scope, secs(from), secs(to)], |row| {
            Ok(ListedWindow {
                since: from_secs(row.get(0)?),
                until: from_secs(row.get(1)?),
                runs: row.get(2)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Records that a window was listed completely; windows overlapping it recorded before are
    /// replaced.
    pub fn store_window(
        &mut self,
        repo: &Repo,
        scope: &str,
        window: &ListedWindow,
    ) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        let repo_id = SqliteStore::ensure_repo(&tx, repo)?;
        tx.execute(
            "DELETE FROM windows WHERE repo_id = ?1 AND scope = ?2 AND since < ?4 AND until > ?3",
            params![repo_id, scope, secs(window.since), secs(window.until)],
        )?;
        tx.execute(
            "INSERT INTO windows (repo_id, scope, since, until, runs) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                repo_id,
                scope,
                secs(window.since),
                secs(window.until),
                window.runs
            ],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// What the store holds for a repository.
    pub fn counts(&self, repo: &Repo) -> Result<StoreCounts, StoreError> {
        let Some(repo_id) = self.repo_id(repo)? else {
            return Ok(StoreCounts::default());
        };
        let count = |sql: &str| -> Result<u64, StoreError> {
            Ok(self.conn.query_row(sql, [repo_id], |row| row.get(0))?)
        };
        let logs = |status: &str| -> Result<u64, StoreError> {
            Ok(self.conn.query_row(
                "SELECT count(*) FROM logs JOIN jobs ON jobs.id = logs.job_id
                 JOIN runs ON runs.id = jobs.run_id WHERE runs.repo_id = ?1 AND logs.status = ?2",
                params![repo_id, status],
                |row| row.get(0),
            )?)
        };
        Ok(StoreCounts {
            runs: count("SELECT count(*) FROM runs WHERE repo_id = ?1")?,
            jobs: count(
                "SELECT count(*) FROM jobs JOIN runs ON runs.id = jobs.run_id WHERE runs.repo_id = ?1",
            )?,
            logs_stored: logs("stored")?,
            logs_expired: logs("expired")?,
            logs_missing: logs("missing")?,
        })
    }

    /// Everything the analysis needs for `repo` and the window `[since, until)`:
    ///
    /// - `runs`: the stored runs of the repository created in `[since − HISTORY_DAYS, until)`
    ///   (the earlier ones let the analysis count clean runs before a first hit), sorted by
    ///   (`created_at`, `id`), each at the latest attempt the store knows;
    /// - `jobs`: every stored job of every attempt of those runs, sorted by (`run_id`,
    ///   `run_attempt`, `id`);
    /// - `logs`: for each failed job among them, its log status (`Pending` when not fetched);
    /// - `classifications`: for failed jobs with a stored log, the classification made with the
    ///   signature set whose fingerprint is `fingerprint` (absent when not classified with it);
    /// - `pulls`: every pull request the store holds for the repository, with files when fetched;
    /// - `mainline`, `fork_points`: the commit ancestry the store holds (`store/ancestry.rs`).
    pub fn load_snapshot(
        &self,
        repo: &Repo,
        since: Timestamp,
        until: Timestamp,
        fingerprint: &str,
    ) -> Result<Snapshot, StoreError> {
        let mut snapshot = Snapshot {
            // The stored spelling: GitHub's, once a survey resolved it.
            repo: Some(self.stored_repo(repo)?.unwrap_or_else(|| repo.clone())),
            default_branch: self.default_branch(repo)?.unwrap_or_default(),
            since: Some(since),
            until: Some(until),
            ..Snapshot::default()
        };
        let Some(repo_id) = self.repo_id(repo)? else {
            return Ok(snapshot);
        };
        let from = secs(since - TimeDelta::days(HISTORY_DAYS));
        let to = secs(until);

        let mut stmt = self.conn.prepare_cached(
            "SELECT json FROM runs WHERE repo_id = ?1 AND created_at >= ?2 AND created_at < ?3
             ORDER BY created_at, id",
        )?;
        let mut rows = stmt.query(params![repo_id, from, to])?;
        while let Some(row) = rows.next()? {
            let run: Run = from_json(&row.get::<_, String>(0)?)?;
            snapshot.runs.push(run);
        }
        // SQLite orders by the creation second; ties by id as documented.
        snapshot.runs.sort_by_key(|r| (r.created_at, r.id));

        let mut stmt = self.conn.prepare_cached(
            "SELECT jobs.json, jobs.failed, logs.status, c.json
             FROM jobs JOIN runs ON runs.id = jobs.run_id
             LEFT JOIN logs ON logs.job_id = jobs.id
             LEFT JOIN classifications c ON c.job_id = jobs.id AND c.fingerprint = ?4
             WHERE runs.repo_id = ?1 AND runs.created_at >= ?2 AND runs.created_at < ?3
             ORDER BY jobs.run_id, jobs.run_attempt, jobs.id",
        )?;
        let mut rows = stmt.query(params![repo_id, from, to, fingerprint])?;
        while let Some(row) = rows.next()? {
            let job: Job = from_json(&row.get::<_, String>(0)?)?;
            let failed: bool = row.get(1)?;
            let status: Option<String> = row.get(2)?;
            let classification: Option<String> = row.get(3)?;
            if failed {
                let status = log_status(status.as_deref());
                snapshot.logs.insert(job.id, status);
                if let (LogStatus::Stored, Some(c)) = (status, classification) {
                    snapshot
                        .classifications
                        .insert(job.id, from_json::<Classification>(&c)?);
                }
            }
            snapshot.jobs.push(job);
        }

        let mut stmt = self
            .conn
            .prepare_cached("SELECT json, files FROM pulls WHERE repo_id = ?1 ORDER BY number")?;
        let mut rows = stmt.query([repo_id])?;
        let mut pulls = BTreeMap::new();
        while let Some(row) = rows.next()? {
            let json: String = row.get(0)?;
            let files: Option<String> = row.get(1)?;
            let pull = pull_from_row(&json, files.as_deref())?;
            pulls.insert(pull.number, pull);
        }
        snapshot.pulls = pulls;
        snapshot.mainline = self.load_mainline(repo, until)?;
        snapshot.fork_points = self.load_fork_points(repo)?;

        let mut stmt = self.conn.prepare_cached(
            "SELECT id FROM runs WHERE repo_id = ?1 AND created_at >= ?2 AND created_at < ?3
               AND (jobs_attempt IS NULL OR jobs_attempt < run_attempt) ORDER BY id",
        )?;
        let rows = stmt.query_map(params![repo_id, from, to], |row| Ok(RunId(row.get(0)?)))?;
        snapshot.runs_without_jobs = rows.collect::<Result<_, _>>()?;
        snapshot.unlisted = self.unlisted(repo_id, since, until)?;
        snapshot.surveyed_to = self.surveyed_to(repo)?;
        snapshot.parents = self.load_parents(repo)?;
        Ok(snapshot)
    }

    /// The parts of `[since, until)` that no run listing covers ([`RUN_LISTINGS`]): a report
    /// covers only what a listing covered. A part never asked (before the first listing, after
    /// the last, or with no listing at all: a survey stopped before its first one finished) is
    /// a gap as much as one a stopped survey left.
    fn unlisted(
        &self,
        repo_id: i64,
        since: Timestamp,
        until: Timestamp,
    ) -> Result<Vec<(Timestamp, Timestamp)>, StoreError> {
        let (from, to) = (secs(since), secs(until));
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT since, until FROM windows WHERE repo_id = ?1 AND {RUN_LISTINGS}
               AND until > ?2 AND since < ?3 ORDER BY since, until"
        ))?;
        let windows = stmt
            .query_map(params![repo_id, from, to], |row| {
                Ok((row.get::<_, i64>(0)?, row.get::<_, i64>(1)?))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(gaps(from, to, &windows)
            .into_iter()
            .map(|(a, b)| (from_secs(a), from_secs(b)))
            .collect())
    }

    /// The end of the latest run listing of `repo` ([`RUN_LISTINGS`]): where what the store
    /// has surveyed ends. `None` when no listing finished.
    pub fn surveyed_to(&self, repo: &Repo) -> Result<Option<Timestamp>, StoreError> {
        let Some(repo_id) = self.repo_id(repo)? else {
            return Ok(None);
        };
        let end: Option<i64> = self.conn.query_row(
            &format!("SELECT max(until) FROM windows WHERE repo_id = ?1 AND {RUN_LISTINGS}"),
            [repo_id],
            |row| row.get(0),
        )?;
        Ok(end.map(from_secs))
    }

    /// For each of `jobs` with a row, the word `sql` reads of it (one column; `?1` is the
    /// job), parsed; a job without a row is absent from the map.
    fn per_job<T>(
        &self,
        sql: &str,
        jobs: &[JobId],
        parse: impl Fn(JobId, &str) -> Result<T, StoreError>,
    ) -> Result<BTreeMap<JobId, T>, StoreError> {
        let mut stmt = self.conn.prepare_cached(sql)?;
        let mut out = BTreeMap::new();
        for &job in jobs {
            let word: Option<String> = stmt.query_row([job.0], |r| r.get(0)).optional()?;
            if let Some(word) = word {
                out.insert(job, parse(job, &word)?);
            }
        }
        Ok(out)
    }

    /// Every stored run of the repository, by id (for tests and `report`).
    pub fn load_runs(&self, repo: &Repo) -> Result<HashMap<RunId, Run>, StoreError> {
        let Some(repo_id) = self.repo_id(repo)? else {
            return Ok(HashMap::new());
        };
        let mut stmt = self
            .conn
            .prepare_cached("SELECT json FROM runs WHERE repo_id = ?1")?;
        let mut rows = stmt.query([repo_id])?;
        let mut runs = HashMap::new();
        while let Some(row) = rows.next()? {
            let run: Run = from_json(&row.get::<_, String>(0)?)?;
            runs.insert(run.id, run);
        }
        Ok(runs)
    }
}

/// Writes `job`'s classification under `fingerprint`, replacing one made before (`conn` may be
/// a transaction's).
fn upsert_classification(
    conn: &Connection,
    job: JobId,
    fingerprint: &str,
    classification: &Classification,
) -> Result<(), StoreError> {
    conn.execute(
        "INSERT OR REPLACE INTO classifications (job_id, fingerprint, matched, json)
         VALUES (?1, ?2, ?3, ?4)",
        params![
            job.0,
            fingerprint,
            !classification.is_unclassified(),
            to_json(classification)
        ],
    )?;
    Ok(())
}

/// The `windows` scopes of run listings, as an SQL condition both engines read alike: the
/// survey's `all…` (every workflow, perhaps with `branch=`/`event=` filters) and `workflow=…`.
/// What a report covers is read from these alone: the history's (`mainline …`) and the fork
/// PRs' (`pull heads`) listings list no runs.
pub(crate) const RUN_LISTINGS: &str =
    "(scope = 'all' OR scope LIKE 'all %' OR scope LIKE 'workflow=%')";

/// The parts of `[from, to)` not covered by `windows` (sorted by start).
fn gaps(from: i64, to: i64, windows: &[(i64, i64)]) -> Vec<(i64, i64)> {
    let mut out = Vec::new();
    let mut at = from;
    for &(a, b) in windows {
        if a > at && at < to {
            out.push((at, a.min(to)));
        }
        at = at.max(b);
    }
    if at < to {
        out.push((at, to));
    }
    out
}

/// A `logs.status` as the analysis sees it; no row is `Pending`.
fn log_status(status: Option<&str>) -> LogStatus {
    match status {
        Some("stored") => LogStatus::Stored,
        Some("expired") => LogStatus::Expired,
        Some("missing") => LogStatus::Missing,
        Some("mismatched") => LogStatus::Mismatched,
        Some("unavailable") => LogStatus::Unavailable,
        _ => LogStatus::Pending,
    }
}

/// A `LogEntry` as written: status, raw size and the compressed bytes.
fn log_row(entry: &LogEntry) -> (&'static str, u64, Option<&[u8]>) {
    match entry {
        LogEntry::Stored(log) => ("stored", log.raw_size, Some(&log.zstd[..])),
        LogEntry::Expired => ("expired", 0, None),
        LogEntry::Missing => ("missing", 0, None),
        LogEntry::Mismatched => ("mismatched", 0, None),
        LogEntry::Unavailable => ("unavailable", 0, None),
    }
}

fn pull_from_row(json: &str, files: Option<&str>) -> Result<PullRequest, StoreError> {
    let mut pull: PullRequest = from_json(json)?;
    pull.files = files.map(from_json).transpose()?;
    Ok(pull)
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    if dir.is_dir() {
        return Ok(());
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> io::Result<()> {
    std::fs::create_dir_all(dir)
}

/// Creates the file empty with mode 0600 if it does not exist, so SQLite (which gives its -wal and
/// -shm files the database's mode) never makes it world-readable.
fn create_private_file(path: &Path) -> io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path).map(drop)
}

#[cfg(test)]
mod tests;
