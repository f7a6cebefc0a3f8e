//! The only place SQL appears: the embedded SQLite store that a survey fills and every report
//! reads.
//!
//! One file, `<cache dir>/store-v1/flakestat.sqlite3` (the folder's version changes only if the
//! layout ever changes incompatibly; compatible changes are migrations, see `schema`). The folder
//! is created 0700 and the file 0600: it holds private repositories' logs. WAL mode, so a report
//! can read while a survey writes, and every write that belongs together is one short
//! transaction: a run's jobs, a log with its classification. What is in the store is therefore
//! always whole, and an interrupted survey resumes from it. Several writers may share a store (a
//! survey, a nightly, `serve`) with no lock held between transactions: each write transaction
//! waits its turn (`BUSY_TIMEOUT`, then `StoreError::Busy`), every write is an upsert two writers
//! may both make, and the few read-modify-writes (a listed window, the repository's identity)
//! run one at a time (`Tx::Serial`).
//!
//! Raw logs are kept zstd-compressed, so a change of signatures re-classifies them without a
//! download; classifications are keyed by the signature set's fingerprint.
//!
//! `Store` (`engine.rs`) is what the rest of flakestat holds: this SQLite store, or the same
//! tables on a PostgreSQL server for a team (`postgres/`), chosen by a `StoreLocation`. Both
//! engines keep the same records, at the same schema version, and return them in the same order:
//! every statement, algorithm and migration is written once, over the database seam (`db.rs`).
//! The operations are plain methods of `Store` (below, and in `ancestry.rs`, `queue.rs` …); a
//! transaction hands its closure the same `Store`, so an operation calls the others inside it.

mod ancestry;
mod artifacts;
mod claims;
mod db;
mod engine;
mod green;
mod handle;
mod hidden;
mod owners;
mod placements;
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
use rusqlite::Connection;

use db::{Row, Tx, id_list, params};

use flakestat_core::model::{
    Classification, Job, JobId, LogStatus, PrNumber, PullRequest, Repo, Run, RunId, Runner,
    Snapshot, Timestamp,
};

pub use ancestry::mainline_scope;
pub use artifacts::{ArtifactRecord, ArtifactStatus};
pub use engine::{Store, StoreLocation};
pub use handle::StoreHandle;
pub use hidden::GreenRead;
pub use plans::{LogOutcome, LogPlan};
pub use postgres::PostgresUrl;
pub use queue::{Delivery, QueueStats, Queued, QueuedRun};
pub use reclassify::{reclassify_stored, reread_preambles};
pub use schema::SCHEMA_VERSION;

/// The folder inside the cache dir; its number changes only with an incompatible layout.
pub const STORE_DIR: &str = "store-v1";
/// The database file inside `STORE_DIR`.
pub const STORE_FILE: &str = "flakestat.sqlite3";
/// How far before `since` `load_snapshot` reaches for earlier runs ("clean runs before" the
/// first hit, bisection). Surveys fetch merged PRs over the same lookback.
pub const HISTORY_DAYS: i64 = 14;
/// How long a write waits for other writers' transactions before the store is `Busy`. Several
/// writers may share a store; each holds it for one short transaction at a time.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(30);
/// How many times in all a write transaction is tried when PostgreSQL undoes it to break a
/// deadlock with another writer's (SQLSTATE 40P01) or for a serialization failure (40001):
/// the first try and four more, then `StoreError::Crossed`.
pub const CROSSED_TRIES: u32 = 5;
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
    #[error("{}", damaged_message(Some(path), detail))]
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
    /// Other writers' transactions kept a write waiting longer than `BUSY_TIMEOUT`.
    #[error(
        "the store {store} is busy: a write waited {waited}s for other flakestat runs' writes; run again when they are done"
    )]
    Busy { store: String, waited: u64 },
    /// Two writers' PostgreSQL transactions crossed (a deadlock the server broke) on each of
    /// the `CROSSED_TRIES` tries of one transaction.
    #[error("PostgreSQL store {store}: {detail}; run again")]
    Crossed { store: String, detail: String },
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
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => {
            damaged_message(None, &sqlite_detail(err))
        }
        Some(ErrorCode::ReadOnly) => "read-only store: make it and its folder writable".to_string(),
        Some(ErrorCode::DiskFull) => "the disk is full: free some space and run again".to_string(),
        _ => sqlite_detail(err),
    }
}

/// A damaged store, worded one way wherever it is met (on opening, where its file is known, or
/// later, by a statement): what SQLite said and what to do.
fn damaged_message(path: Option<&Path>, detail: &str) -> String {
    let at = path
        .map(|p| format!(" at {}", p.display()))
        .unwrap_or_default();
    format!(
        "damaged store{at} ({detail}); delete the store file (the next survey fetches everything again)"
    )
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
        conn.busy_timeout(BUSY_TIMEOUT).map_err(open_err)?;
        Ok(SqliteStore {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// Opens (creating if needed) the store at exactly `path`; the file is created 0600.
    pub fn open_file(path: &Path) -> Result<SqliteStore, StoreError> {
        // Only a file not made yet is opened there: a read-only store is SQLite's to say, below.
        create_private_file(path).map_err(|source| StoreError::CreateFile {
            path: path.to_path_buf(),
            source,
        })?;
        let open_err = |source| open_error(path, source);
        let conn = Connection::open(path).map_err(open_err)?;
        // SQLite opens a file it may not write for reading only: the moment to say so.
        if conn.is_readonly(rusqlite::MAIN_DB).map_err(open_err)? {
            return Err(StoreError::ReadOnly {
                path: path.to_path_buf(),
            });
        }
        conn.busy_timeout(BUSY_TIMEOUT).map_err(open_err)?;
        // Fails on a read-only folder (no room for the WAL), which is the moment to say so.
        set_wal(&conn).map_err(open_err)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(open_err)?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(open_err)?;
        schema::migrate(&conn).map_err(|e| match e {
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
}

/// Puts the store in WAL mode. Two processes opening a new store at once (two nightlies on one
/// cache) race to switch the file to WAL, and SQLite answers the loser `SQLITE_BUSY` at once,
/// without its busy handler: so it is asked again, with a growing pause, for up to
/// [`BUSY_TIMEOUT`] as any write would wait.
fn set_wal(conn: &Connection) -> rusqlite::Result<()> {
    let start = std::time::Instant::now();
    let mut pause = Duration::from_millis(5);
    loop {
        match conn.pragma_update(None, "journal_mode", "WAL") {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if matches!(
                    e.code,
                    rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                ) && start.elapsed() < BUSY_TIMEOUT =>
            {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(200));
            }
            done => return done,
        }
    }
}

/// The store's operations, written once for both engines (see `db.rs`). Writes take `&mut`
/// as `Store`'s do; each is one transaction where it writes more than one row.
impl Store {
    /// The repository's row: its name compared without case, as GitHub does (`nvidia/x` is
    /// `NVIDIA/x`), so any spelling finds what a survey stored.
    fn repo_id(&self, repo: &Repo) -> Result<Option<i64>, StoreError> {
        self.query_row(
            "SELECT id FROM repos WHERE lower(owner) = lower(?1) AND lower(name) = lower(?2)",
            params![&repo.owner, &repo.name],
            |r| r.get(0),
        )
    }

    /// The repository's row, or 0 when the store does not know it: no row has id 0 (both
    /// engines number from 1), so a query of its rows finds none.
    fn repo_key(&self, repo: &Repo) -> Result<i64, StoreError> {
        Ok(self.repo_id(repo)?.unwrap_or(0))
    }

    /// The repository's row, made if missing; two writers making it at once make one.
    fn ensure_repo(&self, repo: &Repo) -> Result<i64, StoreError> {
        if let Some(id) = self.repo_id(repo)? {
            return Ok(id);
        }
        self.execute(
            "INSERT INTO repos (owner, name) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
            params![&repo.owner, &repo.name],
        )?;
        self.repo_id(repo)?
            .ok_or_else(|| StoreError::Corrupt("a repository row vanished".into()))
    }

    /// Records the repository and its default branch.
    pub fn store_repo(&mut self, repo: &Repo, default_branch: &str) -> Result<(), StoreError> {
        self.transaction(Tx::Write, |db| {
            let id = db.ensure_repo(repo)?;
            db.execute(
                "UPDATE repos SET default_branch = ?1 WHERE id = ?2",
                params![default_branch, id],
            )?;
            Ok(())
        })
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
        let (owner, name) = (&canonical.owner, &canonical.name);
        // Read, then written from what was read: one writer at a time.
        self.transaction(Tx::Serial, |db| {
            let by_id: Option<i64> = db.query_row(
                "SELECT id FROM repos WHERE github_id = ?1",
                params![github_id],
                |r| r.get(0),
            )?;
            let by_name: Option<(i64, Option<u64>)> = db.query_row(
                "SELECT id, github_id FROM repos
                 WHERE lower(owner) = lower(?1) AND lower(name) = lower(?2)",
                params![owner, name],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            let insert = || -> Result<i64, StoreError> {
                db.query_row(
                    "INSERT INTO repos (owner, name) VALUES (?1, ?2) RETURNING id",
                    params![owner, name],
                    |r| r.get(0),
                )?
                .ok_or_else(|| StoreError::Corrupt("an inserted repository row".into()))
            };
            let id = match (by_id, by_name) {
                (Some(id), Some((other, _))) if other != id => {
                    // Another repository held this name: it keeps its data under a name no
                    // `--repo` can spell (`owner/name#id`), until a survey of it names it again.
                    db.execute(
                        "UPDATE repos SET name = name || '#' || coalesce(github_id, id) WHERE id = ?1",
                        params![other],
                    )?;
                    id
                }
                (Some(id), _) => id,
                (None, Some((id, None))) => id,
                (None, Some((other, Some(_)))) => {
                    db.execute(
                        "UPDATE repos SET name = name || '#' || github_id WHERE id = ?1",
                        params![other],
                    )?;
                    insert()?
                }
                (None, None) => insert()?,
            };
            db.execute(
                "UPDATE repos SET owner = ?1, name = ?2, github_id = ?3, default_branch = ?4
                 WHERE id = ?5",
                params![owner, name, github_id, default_branch, id],
            )?;
            Ok(())
        })
    }

    /// The repository as stored (GitHub's spelling once a survey resolved it) for any spelling
    /// of its name; `None` when the store does not know it.
    pub fn stored_repo(&self, repo: &Repo) -> Result<Option<Repo>, StoreError> {
        self.query_row(
            "SELECT owner, name FROM repos WHERE lower(owner) = lower(?1) AND lower(name) = lower(?2)",
            params![&repo.owner, &repo.name],
            |r| {
                Ok(Repo {
                    owner: r.get(0)?,
                    name: r.get(1)?,
                })
            },
        )
    }

    /// The default branch recorded by `store_repo`, if any.
    pub fn default_branch(&self, repo: &Repo) -> Result<Option<String>, StoreError> {
        Ok(self
            .query_row(
                "SELECT default_branch FROM repos
                 WHERE lower(owner) = lower(?1) AND lower(name) = lower(?2)",
                params![&repo.owner, &repo.name],
                |r| r.get::<Option<String>>(0),
            )?
            .flatten())
    }

    /// Inserts or updates runs as a listing shows them (at their latest attempt), in one
    /// transaction. Returns the ids of those whose jobs must be (re)fetched: new runs, runs with a
    /// new attempt, and runs whose stored attempt was not completed when its jobs were fetched.
    /// A run is never moved back: another writer's newer attempt, or its completed state of the
    /// same attempt, is kept over an older listing's (which then needs nothing).
    pub fn store_runs(&mut self, repo: &Repo, runs: &[Run]) -> Result<Vec<RunId>, StoreError> {
        self.transaction(Tx::Write, |db| {
            let repo_id = db.ensure_repo(repo)?;
            let mut need_jobs = Vec::new();
            for run in runs {
                let stored: Option<(Option<u32>, bool)> = db.query_row(
                    "INSERT INTO runs (id, repo_id, created_at, run_attempt, status, json)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                     ON CONFLICT (id) DO UPDATE SET
                        created_at = excluded.created_at, run_attempt = excluded.run_attempt,
                        status = excluded.status, json = excluded.json
                     WHERE excluded.run_attempt > runs.run_attempt
                        OR (excluded.run_attempt = runs.run_attempt
                            AND (runs.status <> 'completed' OR excluded.status = 'completed'))
                     RETURNING jobs_attempt, jobs_completed",
                    params![
                        run.id.0,
                        repo_id,
                        secs(run.created_at),
                        run.run_attempt,
                        run.status.as_str(),
                        to_json(run)
                    ],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )?;
                // No row back: the stored run is newer than this listing.
                if stored.is_some_and(|s| s != (Some(run.run_attempt), true)) {
                    need_jobs.push(run.id);
                }
            }
            Ok(need_jobs)
        })
    }

    /// Stores every job of every attempt of a run up to `run_attempt`, in one transaction, and
    /// marks the run's jobs as fetched for that attempt (final when `completed`). What another
    /// writer stored meanwhile is never moved back: the mark of a later attempt's jobs is kept,
    /// and jobs fetched while an attempt ran never replace those fetched once it completed.
    pub fn store_jobs(
        &mut self,
        run: RunId,
        run_attempt: u32,
        completed: bool,
        jobs: &[Job],
    ) -> Result<(), StoreError> {
        self.store_jobs_with_runners(run, run_attempt, completed, jobs, &BTreeMap::new())
    }

    /// [`store_jobs`](Self::store_jobs), with the runner the listing names for each job (a job
    /// absent from `runners`, or one GitHub names no runner for, keeps what was stored).
    pub fn store_jobs_with_runners(
        &mut self,
        run: RunId,
        run_attempt: u32,
        completed: bool,
        jobs: &[Job],
        runners: &BTreeMap<JobId, Runner>,
    ) -> Result<(), StoreError> {
        // Read, then written from what was read: one writer at a time.
        self.transaction(Tx::Serial, |db| {
            let stored: Option<(Option<u32>, bool)> = db.query_row(
                "SELECT jobs_attempt, jobs_completed FROM runs WHERE id = ?1",
                params![run.0],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            if stored == Some((Some(run_attempt), true)) && !completed {
                return Ok(());
            }
            for job in jobs {
                let runner = runners.get(&job.id).cloned().unwrap_or_default();
                db.execute(
                    "INSERT INTO jobs (id, run_id, run_attempt, failed, json, runner_name,
                        runner_group_name)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                     ON CONFLICT (id) DO UPDATE SET
                        run_attempt = excluded.run_attempt, failed = excluded.failed,
                        json = excluded.json,
                        runner_name = coalesce(excluded.runner_name, jobs.runner_name),
                        runner_group_name =
                            coalesce(excluded.runner_group_name, jobs.runner_group_name)",
                    params![
                        job.id.0,
                        job.run_id.0,
                        job.run_attempt,
                        job.is_failed(),
                        to_json(job),
                        runner.name,
                        runner.group
                    ],
                )?;
            }
            db.execute(
                "UPDATE runs SET jobs_attempt = ?1, jobs_completed = ?2
                 WHERE id = ?3 AND (jobs_attempt IS NULL OR jobs_attempt <= ?1)",
                params![run_attempt, completed, run.0],
            )?;
            Ok(())
        })
    }

    /// Failed jobs (failure, timed_out) of the repository's runs created in `[since, until)`
    /// whose log is not stored yet, with their run, oldest first.
    pub fn failed_jobs_without_log(
        &self,
        repo: &Repo,
        since: Timestamp,
        until: Timestamp,
    ) -> Result<Vec<(RunId, JobId)>, StoreError> {
        let repo_id = self.repo_key(repo)?;
        self.query_map(
            "SELECT jobs.run_id, jobs.id FROM jobs JOIN runs ON runs.id = jobs.run_id
             LEFT JOIN logs ON logs.job_id = jobs.id
             WHERE runs.repo_id = ?1 AND runs.created_at >= ?2 AND runs.created_at < ?3
               AND jobs.failed AND logs.job_id IS NULL
             ORDER BY runs.created_at, jobs.run_id, jobs.id",
            params![repo_id, secs(since), secs(until)],
            |r| Ok((RunId(r.get(0)?), JobId(r.get(1)?))),
        )
    }

    /// One stored job.
    pub fn load_job(&self, job: JobId) -> Result<Option<Job>, StoreError> {
        self.query_row(
            "SELECT json FROM jobs WHERE id = ?1",
            params![job.0],
            json_column,
        )
    }

    /// Every stored job of a run, of every attempt, by (attempt, id).
    pub fn load_run_jobs(&self, run: RunId) -> Result<Vec<Job>, StoreError> {
        self.query_map(
            "SELECT json FROM jobs WHERE run_id = ?1 ORDER BY run_attempt, id",
            params![run.0],
            json_column,
        )
    }

    /// The attempt a run was last listed at; `None` when the run is not stored.
    pub fn run_attempt(&self, run: RunId) -> Result<Option<u32>, StoreError> {
        self.query_row(
            "SELECT run_attempt FROM runs WHERE id = ?1",
            params![run.0],
            |r| r.get(0),
        )
    }

    /// Whether a job's log outcome (stored, expired or missing) is recorded.
    pub fn has_log(&self, job: JobId) -> Result<bool, StoreError> {
        Ok(self
            .query_row(
                "SELECT 1 FROM logs WHERE job_id = ?1",
                params![job.0],
                |_| Ok(()),
            )?
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
        self.transaction(Tx::Write, |db| db.write_log(job, entry, classification))
    }

    /// A stored log, decompressed; `None` when not stored.
    pub fn load_log(&self, job: JobId) -> Result<Option<Vec<u8>>, StoreError> {
        self.query_row(
            "SELECT zstd FROM logs WHERE job_id = ?1 AND status = 'stored'",
            params![job.0],
            zstd_column,
        )
    }

    /// Stored logs of the repository with no classification for `fingerprint` (the signatures
    /// changed since they were classified, or classification was interrupted).
    pub fn logs_to_classify(
        &self,
        repo: &Repo,
        fingerprint: &str,
    ) -> Result<Vec<JobId>, StoreError> {
        let repo_id = self.repo_key(repo)?;
        self.query_map(
            "SELECT logs.job_id FROM logs JOIN jobs ON jobs.id = logs.job_id
             JOIN runs ON runs.id = jobs.run_id
             LEFT JOIN classifications c ON c.job_id = logs.job_id AND c.fingerprint = ?2
             WHERE runs.repo_id = ?1 AND logs.status = 'stored' AND c.job_id IS NULL
             ORDER BY logs.job_id",
            params![repo_id, fingerprint],
            |r| Ok(JobId(r.get(0)?)),
        )
    }

    /// Stores one classification, replacing one made before under `fingerprint`.
    pub fn store_classification(
        &mut self,
        job: JobId,
        fingerprint: &str,
        classification: &Classification,
    ) -> Result<(), StoreError> {
        self.upsert_classification(job, fingerprint, classification)
    }

    fn upsert_classification(
        &self,
        job: JobId,
        fingerprint: &str,
        classification: &Classification,
    ) -> Result<(), StoreError> {
        self.execute(
            "INSERT INTO classifications (job_id, fingerprint, matched, json)
             VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (job_id, fingerprint) DO UPDATE SET
                matched = excluded.matched, json = excluded.json",
            params![
                job.0,
                fingerprint,
                !classification.is_unclassified(),
                to_json(classification)
            ],
        )?;
        Ok(())
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
        let repo_id = self.repo_key(repo)?;
        self.query_map(
            "SELECT runs.json FROM runs WHERE runs.repo_id = ?1
               AND runs.created_at >= ?2 AND runs.created_at < ?3
               AND EXISTS (SELECT 1 FROM jobs JOIN classifications c ON c.job_id = jobs.id
                           WHERE jobs.run_id = runs.id AND c.fingerprint = ?4
                             AND (c.matched OR c.json LIKE '%\"tests\":{\"failed\":[{%'))
             ORDER BY runs.created_at, runs.id",
            params![repo_id, secs(since), secs(until), fingerprint],
            json_column,
        )
    }

    /// Inserts or updates pull requests; files already stored are kept when `files` is `None`.
    pub fn store_pulls(&mut self, repo: &Repo, pulls: &[PullRequest]) -> Result<(), StoreError> {
        self.transaction(Tx::Write, |db| {
            let repo_id = db.ensure_repo(repo)?;
            for pull in pulls {
                let mut bare = pull.clone();
                let files = bare.files.take().map(|f| to_json(&f));
                db.execute(
                    "INSERT INTO pulls (repo_id, number, json, files) VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT (repo_id, number) DO UPDATE SET
                        json = excluded.json, files = coalesce(excluded.files, pulls.files)",
                    params![repo_id, pull.number.0, to_json(&bare), files],
                )?;
            }
            Ok(())
        })
    }

    /// Stores the files a pull request changed.
    pub fn store_pull_files(
        &mut self,
        repo: &Repo,
        number: PrNumber,
        files: &[String],
    ) -> Result<(), StoreError> {
        self.transaction(Tx::Write, |db| {
            let repo_id = db.ensure_repo(repo)?;
            db.execute(
                "UPDATE pulls SET files = ?1 WHERE repo_id = ?2 AND number = ?3",
                params![to_json(&files), repo_id, number.0],
            )?;
            Ok(())
        })
    }

    /// One stored pull request (with its files when fetched).
    pub fn load_pull(
        &self,
        repo: &Repo,
        number: PrNumber,
    ) -> Result<Option<PullRequest>, StoreError> {
        let repo_id = self.repo_key(repo)?;
        self.query_row(
            "SELECT json, files FROM pulls WHERE repo_id = ?1 AND number = ?2",
            params![repo_id, number.0],
            pull_from_row,
        )
    }

    /// The body and ETag last stored for `url`.
    pub fn cached_response(&self, url: &str) -> Result<Option<CachedResponse>, StoreError> {
        self.query_row(
            "SELECT zstd, etag FROM etags WHERE url = ?1",
            params![url],
            |r| {
                Ok(CachedResponse {
                    etag: r.get(1)?,
                    body: zstd_column(r)?,
                })
            },
        )
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
        self.execute(
            "INSERT INTO etags (url, etag, zstd, used_at) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (url) DO UPDATE SET
                etag = excluded.etag, zstd = excluded.zstd, used_at = excluded.used_at",
            params![url, etag, zstd, secs(now)],
        )?;
        Ok(())
    }

    /// Notes that a kept body was used again (a 304) at `now`.
    pub fn touch_response(&mut self, url: &str, now: Timestamp) -> Result<(), StoreError> {
        self.execute(
            "UPDATE etags SET used_at = ?2 WHERE url = ?1",
            params![url, secs(now)],
        )?;
        Ok(())
    }

    /// Forgets kept bodies not used since `before` (URLs of windows that ended at a past "now"
    /// are never asked again); returns how many.
    pub fn prune_responses(&mut self, before: Timestamp) -> Result<u64, StoreError> {
        self.execute(
            "DELETE FROM etags WHERE used_at < ?1",
            params![secs(before)],
        )
    }

    /// Listing windows that fitted under the cap last time, inside `[from, to)`, by start.
    pub fn load_windows(
        &self,
        repo: &Repo,
        scope: &str,
        from: Timestamp,
        to: Timestamp,
    ) -> Result<Vec<ListedWindow>, StoreError> {
        let repo_id = self.repo_key(repo)?;
        self.query_map(
            "SELECT since, until, runs FROM windows
             WHERE repo_id = ?1 AND scope = ?2 AND since >= ?3 AND until <= ?4 ORDER BY since",
            params![repo_id, scope, secs(from), secs(to)],
            |r| {
                Ok(ListedWindow {
                    since: from_secs(r.get(0)?),
                    until: from_secs(r.get(1)?),
                    runs: r.get(2)?,
                })
            },
        )
    }

    /// Records that a window was listed completely. Windows recorded before (perhaps by
    /// another writer meanwhile) keep what lies outside it: only the overlap is replaced, so
    /// no writer's coverage is lost. A part kept counts its whole window's runs (at most that).
    pub fn store_window(
        &mut self,
        repo: &Repo,
        scope: &str,
        window: &ListedWindow,
    ) -> Result<(), StoreError> {
        let (since, until) = (secs(window.since), secs(window.until));
        self.transaction(Tx::Serial, |db| {
            let repo_id = db.ensure_repo(repo)?;
            let overlapping: Vec<(i64, i64, u64)> = db.query_map(
                "DELETE FROM windows WHERE repo_id = ?1 AND scope = ?2 AND since < ?4 AND until > ?3
                 RETURNING since, until, runs",
                params![repo_id, scope, since, until],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )?;
            let kept = overlapping
                .iter()
                .flat_map(|&(a, b, runs)| [(a, b.min(since), runs), (a.max(until), b, runs)]);
            for (a, b, runs) in kept.chain([(since, until, window.runs)]) {
                if a < b {
                    db.execute(
                        "INSERT INTO windows (repo_id, scope, since, until, runs)
                         VALUES (?1, ?2, ?3, ?4, ?5)",
                        params![repo_id, scope, a, b, runs],
                    )?;
                }
            }
            Ok(())
        })
    }

    /// What the store holds for a repository.
    pub fn counts(&self, repo: &Repo) -> Result<StoreCounts, StoreError> {
        let repo_id = self.repo_key(repo)?;
        let sql = "SELECT (SELECT count(*) FROM runs WHERE repo_id = ?1),
                (SELECT count(*) FROM jobs JOIN runs ON runs.id = jobs.run_id
                 WHERE runs.repo_id = ?1),
                count(*) FILTER (WHERE logs.status = 'stored'),
                count(*) FILTER (WHERE logs.status = 'expired'),
                count(*) FILTER (WHERE logs.status = 'missing')
            FROM logs JOIN jobs ON jobs.id = logs.job_id JOIN runs ON runs.id = jobs.run_id
            WHERE runs.repo_id = ?1";
        Ok(self
            .query_row(sql, params![repo_id], |r| {
                Ok(StoreCounts {
                    runs: r.get(0)?,
                    jobs: r.get(1)?,
                    logs_stored: r.get(2)?,
                    logs_expired: r.get(3)?,
                    logs_missing: r.get(4)?,
                })
            })?
            .unwrap_or_default())
    }

    /// Everything the analysis needs for `repo` and the window `[since, until)`, read in one
    /// transaction (a survey writing meanwhile never shows half):
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
    ///
    /// A job with a stored JUnit artifact has its tests taken from it instead of from its log:
    /// the runner's own report is the better witness (`artifacts.rs`).
    pub fn load_snapshot(
        &self,
        repo: &Repo,
        since: Timestamp,
        until: Timestamp,
        fingerprint: &str,
    ) -> Result<Snapshot, StoreError> {
        self.transaction(Tx::Read, |db| {
            let mut snapshot = db.read_snapshot(repo, since, until, fingerprint)?;
            let jobs: Vec<JobId> = snapshot.classifications.keys().copied().collect();
            for (job, tests) in db.junit_tests(&jobs)? {
                if let Some(classification) = snapshot.classifications.get_mut(&job) {
                    classification.tests = tests;
                }
            }
            Ok(snapshot)
        })
    }

    fn read_snapshot(
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

        snapshot.runs = self.query_map(
            "SELECT json FROM runs WHERE repo_id = ?1 AND created_at >= ?2 AND created_at < ?3
             ORDER BY created_at, id",
            params![repo_id, from, to],
            json_column,
        )?;
        // Stored by the creation second; ties by id as documented.
        snapshot.runs.sort_by_key(|r| (r.created_at, r.id));

        for r in self.query(
            "SELECT jobs.json, jobs.failed, logs.status, c.json
             FROM jobs JOIN runs ON runs.id = jobs.run_id
             LEFT JOIN logs ON logs.job_id = jobs.id
             LEFT JOIN classifications c ON c.job_id = jobs.id AND c.fingerprint = ?4
             WHERE runs.repo_id = ?1 AND runs.created_at >= ?2 AND runs.created_at < ?3
             ORDER BY jobs.run_id, jobs.run_attempt, jobs.id",
            params![repo_id, from, to, fingerprint],
        )? {
            let job: Job = json_column(&r)?;
            if r.get::<bool>(1)? {
                let status = log_status(r.get::<Option<String>>(2)?.as_deref());
                snapshot.logs.insert(job.id, status);
                if let (LogStatus::Stored, Some(c)) = (status, r.get::<Option<String>>(3)?) {
                    snapshot.classifications.insert(job.id, from_json(&c)?);
                }
            }
            snapshot.jobs.push(job);
        }

        snapshot.pulls = self
            .query_map::<PullRequest, Vec<_>>(
                "SELECT json, files FROM pulls WHERE repo_id = ?1 ORDER BY number",
                params![repo_id],
                pull_from_row,
            )?
            .into_iter()
            .map(|pull| (pull.number, pull))
            .collect();
        snapshot.mainline = self.load_mainline(repo, until)?;
        snapshot.fork_points = self.load_fork_points(repo)?;
        snapshot.runs_without_jobs = self.query_map(
            "SELECT id FROM runs WHERE repo_id = ?1 AND created_at >= ?2 AND created_at < ?3
               AND (jobs_attempt IS NULL OR jobs_attempt < run_attempt) ORDER BY id",
            params![repo_id, from, to],
            |r| Ok(RunId(r.get(0)?)),
        )?;
        snapshot.unlisted = self.unlisted(repo_id, since, until)?;
        snapshot.surveyed_to = self.surveyed_to(repo)?;
        snapshot.parents = self.load_parents(repo)?;
        snapshot.placements = self.load_placements(repo_id, from, to)?;
        snapshot.green = self.load_green_outcomes(repo_id, from, to)?;
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
        let windows: Vec<(i64, i64)> = self.query_map(
            &format!(
                "SELECT since, until FROM windows WHERE repo_id = ?1 AND {RUN_LISTINGS}
                   AND until > ?2 AND since < ?3 ORDER BY since, until"
            ),
            params![repo_id, from, to],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        Ok(gaps(from, to, &windows)
            .into_iter()
            .map(|(a, b)| (from_secs(a), from_secs(b)))
            .collect())
    }

    /// The end of the latest run listing of `repo` ([`RUN_LISTINGS`]): where what the store
    /// has surveyed ends. `None` when no listing finished.
    pub fn surveyed_to(&self, repo: &Repo) -> Result<Option<Timestamp>, StoreError> {
        let repo_id = self.repo_key(repo)?;
        let end: Option<Option<i64>> = self.query_row(
            &format!("SELECT max(until) FROM windows WHERE repo_id = ?1 AND {RUN_LISTINGS}"),
            params![repo_id],
            |r| r.get(0),
        )?;
        Ok(end.flatten().map(from_secs))
    }

    /// For each of `jobs` with a row, the word `sql` reads of it, parsed; a job without a row
    /// is absent from the map. `sql` selects `(job_id, word)` of the jobs `IN ({ids})`.
    fn per_job<T>(
        &self,
        sql: &str,
        jobs: &[JobId],
        parse: impl Fn(JobId, &str) -> Result<T, StoreError>,
    ) -> Result<BTreeMap<JobId, T>, StoreError> {
        let ids: Vec<u64> = jobs.iter().map(|j| j.0).collect();
        let mut out = BTreeMap::new();
        for ids in id_list(&ids) {
            for r in self.query(&sql.replace("{ids}", &ids), params![])? {
                let job = JobId(r.get(0)?);
                out.insert(job, parse(job, &r.get::<String>(1)?)?);
            }
        }
        Ok(out)
    }

    /// Every stored run of the repository, by id (for tests and `report`).
    pub fn load_runs(&self, repo: &Repo) -> Result<HashMap<RunId, Run>, StoreError> {
        let repo_id = self.repo_key(repo)?;
        self.query_map(
            "SELECT json FROM runs WHERE repo_id = ?1",
            params![repo_id],
            |r| {
                let run: Run = json_column(r)?;
                Ok((run.id, run))
            },
        )
    }
}

/// Column 0 as JSON of a `T`.
fn json_column<T: serde::de::DeserializeOwned>(row: &Row) -> Result<T, StoreError> {
    from_json(&row.get::<String>(0)?)
}

/// Column 0 as a compressed log or body, decompressed.
fn zstd_column(row: &Row) -> Result<Vec<u8>, StoreError> {
    zstd::decode_all(&row.get::<Vec<u8>>(0)?[..]).map_err(StoreError::Log)
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

/// A `LogEntry` as written (in `logs` and `green_logs`): status, raw size and the compressed
/// bytes.
fn log_row(entry: &LogEntry) -> (&'static str, u64, Option<&[u8]>) {
    match entry {
        LogEntry::Stored(log) => ("stored", log.raw_size, Some(&log.zstd[..])),
        LogEntry::Expired => ("expired", 0, None),
        LogEntry::Missing => ("missing", 0, None),
        LogEntry::Mismatched => ("mismatched", 0, None),
        LogEntry::Unavailable => ("unavailable", 0, None),
    }
}

/// A `(json, files)` row of `pulls`.
fn pull_from_row(row: &Row) -> Result<PullRequest, StoreError> {
    let mut pull: PullRequest = json_column(row)?;
    pull.files = row
        .get::<Option<String>>(1)?
        .as_deref()
        .map(from_json)
        .transpose()?;
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
///
/// A file that exists is never opened here, only changed by its path: closing any descriptor
/// of a file drops every `fcntl` lock this process holds on it, SQLite's included. A second
/// connection in one process (serve's queue writer beside its ingest's) that opened and closed
/// the store or its `-shm` would take the first one's locks away; another process then took
/// itself for the only one, reset the shared memory the first had mapped (SIGBUS) and deleted
/// the WAL on closing. Whether the file can be written is SQLite's to say (`open_file`).
fn create_private_file(path: &Path) -> io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    match options.open(path) {
        Ok(file) => drop(file),
        // A symbolic link to a file not made yet: made here 0600 too (nothing can hold a lock
        // on a file that does not exist).
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists && !path.exists() => {
            drop(options.create_new(false).create(true).open(path)?);
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    // A store made before (by hand, another umask, a copy) that others can read is made
    // private: it holds private repositories' logs. So are its WAL files, which SQLite made
    // with the store's mode. Best effort: a store another user owns (and lets us write) keeps
    // its mode.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for suffix in ["", "-wal", "-shm"] {
            let mut file = path.as_os_str().to_owned();
            file.push(suffix);
            let file = Path::new(&file);
            if let Ok(meta) = std::fs::metadata(file) {
                let mode = meta.permissions().mode();
                if mode & 0o077 != 0 {
                    let _ = std::fs::set_permissions(
                        file,
                        std::fs::Permissions::from_mode(mode & 0o700),
                    );
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
