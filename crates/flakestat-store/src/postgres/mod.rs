//! The store's tables on a PostgreSQL server, for a team: the nightly writes, everyone reads.
//! Same records, same schema version, same order of results as the SQLite store, so reports
//! are byte-identical on either engine.
//!
//! **Why a connection thread.** The store is synchronous and is called from everywhere, also
//! from async code of `fetch` running on tokio's worker threads. The `postgres` crate (the
//! blocking face of `tokio-postgres`) drives each call with a runtime of its own, which panics
//! when the calling thread is already inside a runtime. So the `postgres::Client` lives on a
//! thread of its own, outside any runtime, and every store call sends it a closure over a
//! channel and waits for the answer: callable from any thread, async or not, never nested in a
//! runtime. (A worker thread blocked on the answer is what a blocked SQLite call is today.)
//!
//! Dialect: `$n` placeholders, `ON CONFLICT … DO UPDATE` for SQLite's `INSERT OR REPLACE`,
//! `BYTEA` for `BLOB`, `BIGINT` for GitHub's 64-bit ids, `BOOLEAN` flags, `lower()` for
//! `COLLATE NOCASE`, and a `seq` column where SQLite orders by `rowid`.
//!
//! The connection string's password never leaves this module: `PostgresUrl` shows itself with
//! the password masked, and every message from the server or the driver is scrubbed of it.

pub mod lock;
mod queue;
mod schema;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use chrono::TimeDelta;
use postgres::{Client, GenericClient, NoTls, Transaction};

use super::{
    CachedResponse, HISTORY_DAYS, ListedWindow, LogEntry, LogOutcome, LogPlan, RUN_LISTINGS,
    StoreCounts, StoreError, from_json, from_secs, gaps, log_row, log_status, pull_from_row, secs,
    to_json,
};
use flakestat_core::model::{
    Classification, Job, JobId, LogStatus, MainlineCommit, PrNumber, PullRequest, Repo, Run, RunId,
    Sha, Snapshot, Timestamp,
};

pub use lock::PgLock;

/// A PostgreSQL connection string (`postgres://USER:PASSWORD@HOST:PORT/DATABASE?…`). Its
/// `Debug` and `Display` mask the password.
#[derive(Clone)]
pub struct PostgresUrl {
    secret: String,
    masked: String,
    password: Option<String>,
}

impl PostgresUrl {
    /// Whether `text` names a PostgreSQL store (rather than a folder).
    pub fn is_postgres(text: &str) -> bool {
        let lower = text.trim_start().to_ascii_lowercase();
        lower.starts_with("postgres://") || lower.starts_with("postgresql://")
    }

    pub fn parse(text: &str) -> Result<PostgresUrl, StoreError> {
        let masked = mask(text);
        if !PostgresUrl::is_postgres(text) {
            return Err(StoreError::PostgresUrl {
                store: masked,
                detail: "it does not start with postgres:// or postgresql://".to_string(),
            });
        }
        let config: postgres::Config =
            text.parse()
                .map_err(|e: postgres::Error| StoreError::PostgresUrl {
                    store: masked.clone(),
                    detail: e.to_string(),
                })?;
        let password = config
            .get_password()
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .filter(|p| !p.is_empty());
        let url = PostgresUrl {
            secret: text.to_string(),
            masked,
            password,
        };
        // The parser's own words may quote the text: never with the password in them.
        if let Err(StoreError::PostgresUrl { detail, .. }) = url.config() {
            return Err(StoreError::PostgresUrl {
                store: url.masked.clone(),
                detail: url.scrub(&detail),
            });
        }
        Ok(url)
    }

    /// The connection string with its password masked: what messages show.
    pub fn masked(&self) -> &str {
        &self.masked
    }

    fn config(&self) -> Result<postgres::Config, StoreError> {
        self.secret
            .parse()
            .map_err(|e: postgres::Error| StoreError::PostgresUrl {
                store: self.masked.clone(),
                detail: self.scrub(&e.to_string()),
            })
    }

    /// `text` without the password in it.
    fn scrub(&self, text: &str) -> String {
        match &self.password {
            Some(p) => text.replace(p.as_str(), "***"),
            None => text.to_string(),
        }
    }
}

impl fmt::Debug for PostgresUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PostgresUrl({})", self.masked)
    }
}

impl fmt::Display for PostgresUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.masked)
    }
}

/// `postgres://user:secret@host/db?password=secret` → `postgres://user:***@host/db?password=***`.
/// By hand rather than through a URL parser, so the rest of the text stays as typed.
fn mask(text: &str) -> String {
    let mut out = text.to_string();
    if let Some(scheme_end) = out.find("://") {
        let start = scheme_end + 3;
        let end = out[start..]
            .find(['/', '?', '#'])
            .map_or(out.len(), |i| start + i);
        if let Some(at) = out[start..end].rfind('@')
            && let Some(colon) = out[start..start + at].find(':')
        {
            out.replace_range(start + colon + 1..start + at, "***");
        }
    }
    if let Some(q) = out.find('?') {
        let query = out[q + 1..]
            .split('&')
            .map(|pair| {
                if pair.to_ascii_lowercase().starts_with("password=") {
                    "password=***"
                } else {
                    pair
                }
            })
            .collect::<Vec<_>>()
            .join("&");
        out.truncate(q + 1);
        out.push_str(&query);
    }
    out
}

/// What the server or the driver said, without SQL: a server error's message and SQLSTATE.
fn error_detail(err: &postgres::Error) -> String {
    match err.as_db_error() {
        Some(db) => {
            let hint = match db.code().code() {
                "25006" => "; the server is read-only: use a writable server",
                "42501" => "; the store's user lacks a privilege on its tables",
                "53100" => "; the server's disk is full",
                _ => "",
            };
            format!("{} (SQLSTATE {}){hint}", db.message(), db.code().code())
        }
        None => err.to_string(),
    }
}

impl From<postgres::Error> for StoreError {
    fn from(err: postgres::Error) -> StoreError {
        StoreError::Postgres {
            store: String::new(),
            detail: error_detail(&err),
        }
    }
}

type Work = Box<dyn FnOnce(&mut Client) + Send>;

/// One connection, owned by its thread (see the module's doc); dropping it closes the
/// connection, which releases every session lock it held.
pub(crate) struct Conn {
    work: Option<mpsc::Sender<Work>>,
    thread: Option<JoinHandle<()>>,
    url: PostgresUrl,
}

impl Conn {
    pub(crate) fn open(url: &PostgresUrl, application_name: &str) -> Result<Conn, StoreError> {
        let connect_error = |detail: String| StoreError::PostgresConnect {
            store: url.masked.clone(),
            detail: url.scrub(&detail),
        };
        let mut config = url.config()?;
        config.application_name(application_name);
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(30));
        }
        let (work_tx, work_rx) = mpsc::channel::<Work>();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<(), String>>();
        let thread = std::thread::Builder::new()
            .name("flakestat-postgres".to_string())
            .spawn(move || {
                let mut client = match config.connect(NoTls) {
                    Ok(client) => {
                        let _ = ready_tx.send(Ok(()));
                        client
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(error_detail(&e)));
                        return;
                    }
                };
                while let Ok(work) = work_rx.recv() {
                    work(&mut client);
                }
            })
            .map_err(|e| connect_error(e.to_string()))?;
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(Conn {
                work: Some(work_tx),
                thread: Some(thread),
                url: url.clone(),
            }),
            Ok(Err(detail)) => {
                let _ = thread.join();
                Err(connect_error(detail))
            }
            Err(_) => {
                let _ = thread.join();
                Err(connect_error("the connection's thread ended".to_string()))
            }
        }
    }

    /// Runs `f` with the connection, on its thread, and waits for its answer.
    pub(crate) fn call<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Client) -> Result<R, StoreError> + Send + 'static,
    ) -> Result<R, StoreError> {
        let (tx, rx) = mpsc::sync_channel(1);
        let gone = || StoreError::Postgres {
            store: self.url.masked.clone(),
            detail: "the connection to the server was lost".to_string(),
        };
        self.work
            .as_ref()
            .ok_or_else(gone)?
            .send(Box::new(move |client| {
                let _ = tx.send(f(client));
            }))
            .map_err(|_| gone())?;
        match rx.recv() {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(StoreError::Postgres { detail, .. })) => Err(StoreError::Postgres {
                store: self.url.masked.clone(),
                detail: self.url.scrub(&detail),
            }),
            Ok(Err(other)) => Err(other),
            Err(_) => Err(gone()),
        }
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        drop(self.work.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The PostgreSQL engine of `Store`.
pub struct PgStore {
    conn: Conn,
}

impl fmt::Debug for PgStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PgStore")
            .field("url", &self.conn.url)
            .finish()
    }
}

fn id(n: u64) -> i64 {
    n as i64
}

fn uid(row: &postgres::Row, i: usize) -> u64 {
    row.get::<_, i64>(i) as u64
}

fn repo_id(c: &mut impl GenericClient, repo: &Repo) -> Result<Option<i64>, StoreError> {
    Ok(c.query_opt(
        "SELECT id FROM repos WHERE lower(owner) = lower($1) AND lower(name) = lower($2)",
        &[&repo.owner, &repo.name],
    )?
    .map(|row| row.get(0)))
}

/// The repository's row, made if missing; two writers making it at once make one.
fn ensure_repo(tx: &mut Transaction<'_>, repo: &Repo) -> Result<i64, StoreError> {
    if let Some(id) = repo_id(tx, repo)? {
        return Ok(id);
    }
    tx.execute(
        "INSERT INTO repos (owner, name) VALUES ($1, $2) ON CONFLICT DO NOTHING",
        &[&repo.owner, &repo.name],
    )?;
    repo_id(tx, repo)?.ok_or_else(|| StoreError::Corrupt("a repository row vanished".into()))
}

impl PgStore {
    /// Connects to the server and brings its tables to `SCHEMA_VERSION`.
    pub fn open(url: &PostgresUrl) -> Result<PgStore, StoreError> {
        let conn = Conn::open(url, "flakestat")?;
        let store = url.masked.clone();
        conn.call(move |c| schema::migrate(c, &store))?;
        Ok(PgStore { conn })
    }

    /// The connection string, password masked.
    pub fn url(&self) -> &PostgresUrl {
        &self.conn.url
    }

    /// Runs `f` with the connection (for tests that look at the tables themselves).
    #[cfg(test)]
    pub(crate) fn with_client<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Client) -> Result<R, StoreError> + Send + 'static,
    ) -> Result<R, StoreError> {
        self.conn.call(f)
    }

    pub fn store_repo(&self, repo: &Repo, default_branch: &str) -> Result<(), StoreError> {
        let (repo, branch) = (repo.clone(), default_branch.to_string());
        self.conn.call(move |c| {
            let mut tx = c.transaction()?;
            let id = ensure_repo(&mut tx, &repo)?;
            tx.execute(
                "UPDATE repos SET default_branch = $1 WHERE id = $2",
                &[&branch, &id],
            )?;
            tx.commit()?;
            Ok(())
        })
    }

    pub fn store_repo_identity(
        &self,
        canonical: &Repo,
        github_id: u64,
        default_branch: &str,
    ) -> Result<(), StoreError> {
        let (canonical, branch) = (canonical.clone(), default_branch.to_string());
        let gid = id(github_id);
        self.conn.call(move |c| {
            let mut tx = c.transaction()?;
            let by_id: Option<i64> = tx
                .query_opt("SELECT id FROM repos WHERE github_id = $1", &[&gid])?
                .map(|row| row.get(0));
            let by_name: Option<(i64, Option<i64>)> = tx
                .query_opt(
                    "SELECT id, github_id FROM repos
                     WHERE lower(owner) = lower($1) AND lower(name) = lower($2)",
                    &[&canonical.owner, &canonical.name],
                )?
                .map(|row| (row.get(0), row.get(1)));
            let insert = |tx: &mut Transaction<'_>| -> Result<i64, StoreError> {
                Ok(tx
                    .query_one(
                        "INSERT INTO repos (owner, name) VALUES ($1, $2) RETURNING id",
                        &[&canonical.owner, &canonical.name],
                    )?
                    .get(0))
            };
            let id = match (by_id, by_name) {
                (Some(id), Some((other, _))) if other != id => {
                    tx.execute(
                        "UPDATE repos SET name = name || '#' || coalesce(github_id, id) WHERE id = $1",
                        &[&other],
                    )?;
                    id
                }
                (Some(id), _) => id,
                (None, Some((id, None))) => id,
                (None, Some((other, Some(_)))) => {
                    tx.execute(
                        "UPDATE repos SET name = name || '#' || github_id WHERE id = $1",
                        &[&other],
                    )?;
                    insert(&mut tx)?
                }
                (None, None) => insert(&mut tx)?,
            };
            tx.execute(
                "UPDATE repos SET owner = $1, name = $2, github_id = $3, default_branch = $4
                 WHERE id = $5",
                &[&canonical.owner, &canonical.name, &gid, &branch, &id],
            )?;
            tx.commit()?;
            Ok(())
        })
    }

    pub fn stored_repo(&self, repo: &Repo) -> Result<Option<Repo>, StoreError> {
        let repo = repo.clone();
        self.conn.call(move |c| {
            Ok(c.query_opt(
                "SELECT owner, name FROM repos
                 WHERE lower(owner) = lower($1) AND lower(name) = lower($2)",
                &[&repo.owner, &repo.name],
            )?
            .map(|row| Repo {
                owner: row.get(0),
                name: row.get(1),
            }))
        })
    }

    pub fn default_branch(&self, repo: &Repo) -> Result<Option<String>, StoreError> {
        let repo = repo.clone();
        self.conn.call(move |c| {
            Ok(c.query_opt(
                "SELECT default_branch FROM repos
                 WHERE lower(owner) = lower($1) AND lower(name) = lower($2)",
                &[&repo.owner, &repo.name],
            )?
            .and_then(|row| row.get::<_, Option<String>>(0)))
        })
    }

    pub fn repos_of_owner(&self, owner: &str) -> Result<Vec<Repo>, StoreError> {
        let owner = owner.to_string();
        let repos = self.conn.call(move |c| {
            Ok(c.query(
                "SELECT owner, name FROM repos
                 WHERE lower(owner) = lower($1) AND strpos(name, '#') = 0",
                &[&owner],
            )?
            .iter()
            .map(|row| Repo {
                owner: row.get(0),
                name: row.get(1),
            })
            .collect::<Vec<_>>())
        })?;
        Ok(crate::owners::sorted(repos))
    }

    pub fn store_runs(&self, repo: &Repo, runs: &[Run]) -> Result<Vec<RunId>, StoreError> {
        let (repo, runs) = (repo.clone(), runs.to_vec());
        self.conn.call(move |c| {
            let mut tx = c.transaction()?;
            let repo_id = ensure_repo(&mut tx, &repo)?;
            let upsert = tx.prepare(
                "INSERT INTO runs (id, repo_id, created_at, run_attempt, status, json)
                 VALUES ($1, $2, $3, $4, $5, $6)
                 ON CONFLICT (id) DO UPDATE SET
                    created_at = excluded.created_at, run_attempt = excluded.run_attempt,
                    status = excluded.status, json = excluded.json
                 RETURNING jobs_attempt, jobs_completed",
            )?;
            let mut need_jobs = Vec::new();
            for run in &runs {
                let row = tx.query_one(
                    &upsert,
                    &[
                        &id(run.id.0),
                        &repo_id,
                        &secs(run.created_at),
                        &(run.run_attempt as i32),
                        &run.status.as_str(),
                        &to_json(run),
                    ],
                )?;
                let jobs_attempt: Option<i32> = row.get(0);
                let jobs_completed: bool = row.get(1);
                let up_to_date = jobs_attempt == Some(run.run_attempt as i32) && jobs_completed;
                if !up_to_date {
                    need_jobs.push(run.id);
                }
            }
            tx.commit()?;
            Ok(need_jobs)
        })
    }

    pub fn store_jobs(
        &self,
        run: RunId,
        run_attempt: u32,
        completed: bool,
        jobs: &[Job],
    ) -> Result<(), StoreError> {
        let jobs = jobs.to_vec();
        self.conn.call(move |c| {
            let mut tx = c.transaction()?;
            let upsert = tx.prepare(
                "INSERT INTO jobs (id, run_id, run_attempt, failed, json) VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT (id) DO UPDATE SET
                    run_attempt = excluded.run_attempt, failed = excluded.failed,
                    json = excluded.json",
            )?;
            for job in &jobs {
                tx.execute(
                    &upsert,
                    &[
                        &id(job.id.0),
                        &id(job.run_id.0),
                        &(job.run_attempt as i32),
                        &job.is_failed(),
                        &to_json(job),
                    ],
                )?;
            }
            tx.execute(
                "UPDATE runs SET jobs_attempt = $1, jobs_completed = $2 WHERE id = $3",
                &[&(run_attempt as i32), &completed, &id(run.0)],
            )?;
            tx.commit()?;
            Ok(())
        })
    }

    pub fn failed_jobs_without_log(
        &self,
        repo: &Repo,
        since: Timestamp,
        until: Timestamp,
    ) -> Result<Vec<(RunId, JobId)>, StoreError> {
        let repo = repo.clone();
        self.conn.call(move |c| {
            let Some(repo_id) = repo_id(c, &repo)? else {
                return Ok(Vec::new());
            };
            let rows = c.query(
                "SELECT jobs.run_id, jobs.id FROM jobs JOIN runs ON runs.id = jobs.run_id
                 LEFT JOIN logs ON logs.job_id = jobs.id
                 WHERE runs.repo_id = $1 AND runs.created_at >= $2 AND runs.created_at < $3
                   AND jobs.failed AND logs.job_id IS NULL
                 ORDER BY runs.created_at, jobs.run_id, jobs.id",
                &[&repo_id, &secs(since), &secs(until)],
            )?;
            Ok(rows
                .iter()
                .map(|row| (RunId(uid(row, 0)), JobId(uid(row, 1))))
                .collect())
        })
    }

    pub fn load_job(&self, job: JobId) -> Result<Option<Job>, StoreError> {
        self.conn.call(move |c| {
            c.query_opt("SELECT json FROM jobs WHERE id = $1", &[&id(job.0)])?
                .map(|row| from_json(row.get::<_, &str>(0)))
                .transpose()
        })
    }

    pub fn load_run_jobs(&self, run: RunId) -> Result<Vec<Job>, StoreError> {
        self.conn.call(move |c| {
            c.query(
                "SELECT json FROM jobs WHERE run_id = $1 ORDER BY run_attempt, id",
                &[&id(run.0)],
            )?
            .iter()
            .map(|row| from_json(row.get::<_, &str>(0)))
            .collect()
        })
    }

    pub fn run_attempt(&self, run: RunId) -> Result<Option<u32>, StoreError> {
        self.conn.call(move |c| {
            Ok(
                c.query_opt("SELECT run_attempt FROM runs WHERE id = $1", &[&id(run.0)])?
                    .map(|row| row.get::<_, i32>(0) as u32),
            )
        })
    }

    pub fn has_log(&self, job: JobId) -> Result<bool, StoreError> {
        self.conn.call(move |c| {
            Ok(
                c.query_opt("SELECT 1 FROM logs WHERE job_id = $1", &[&id(job.0)])?
                    .is_some(),
            )
        })
    }

    pub fn store_log(
        &self,
        job: JobId,
        entry: &LogEntry,
        classification: Option<(&str, &Classification)>,
    ) -> Result<(), StoreError> {
        let row = LogRow::of(job, entry, classification);
        self.conn.call(move |c| {
            let mut tx = c.transaction()?;
            row.write(&mut tx)?;
            tx.commit()?;
            Ok(())
        })
    }

    /// See `SqliteStore::store_logs`.
    pub fn store_logs(
        &self,
        fingerprint: &str,
        logs: &[LogOutcome],
        plans: &[(JobId, LogPlan)],
    ) -> Result<(), StoreError> {
        let rows: Vec<LogRow> = logs
            .iter()
            .map(|l| {
                LogRow::of(
                    l.job,
                    &l.entry,
                    l.classification.as_ref().map(|c| (fingerprint, c)),
                )
            })
            .collect();
        let plans: Vec<(i64, &'static str)> =
            plans.iter().map(|(j, p)| (id(j.0), p.as_str())).collect();
        self.conn.call(move |c| {
            let mut tx = c.transaction()?;
            for row in &rows {
                row.write(&mut tx)?;
            }
            for (job, next) in &plans {
                tx.execute(
                    "INSERT INTO log_plans (job_id, next) VALUES ($1, $2)
                     ON CONFLICT (job_id) DO UPDATE SET next = excluded.next",
                    &[job, next],
                )?;
            }
            tx.commit()?;
            Ok(())
        })
    }

    /// See `SqliteStore::load_log_plans`.
    pub fn load_log_plans(&self, jobs: &[JobId]) -> Result<BTreeMap<JobId, LogPlan>, StoreError> {
        self.per_job(
            "SELECT job_id, next FROM log_plans WHERE job_id = ANY($1) ORDER BY job_id",
            jobs,
            LogPlan::parse,
        )
    }

    /// As `SqliteStore::per_job`: `sql` reads `(job_id, word)` rows of the jobs in `$1`.
    fn per_job<T>(
        &self,
        sql: &'static str,
        jobs: &[JobId],
        parse: impl Fn(JobId, &str) -> Result<T, StoreError>,
    ) -> Result<BTreeMap<JobId, T>, StoreError> {
        let ids: Vec<i64> = jobs.iter().map(|j| id(j.0)).collect();
        let rows: Vec<(u64, String)> = self.conn.call(move |c| {
            Ok(c.query(sql, &[&ids])?
                .iter()
                .map(|row| (uid(row, 0), row.get::<_, String>(1)))
                .collect())
        })?;
        rows.into_iter()
            .map(|(job, word)| {
                let job = JobId(job);
                Ok((job, parse(job, &word)?))
            })
            .collect()
    }

    /// See `SqliteStore::store_artifacts`.
    pub fn store_artifacts(
        &self,
        run: RunId,
        pattern: &str,
        artifacts: &[crate::ArtifactRecord],
    ) -> Result<(), StoreError> {
        let rows: Vec<(i64, String, &'static str, Option<i64>, String)> = artifacts
            .iter()
            .map(|a| {
                (
                    id(a.id),
                    a.name.clone(),
                    a.status.as_str(),
                    a.job.map(|j| id(j.0)),
                    crate::artifacts::artifact_json(a),
                )
            })
            .collect();
        let (run, pattern) = (id(run.0), pattern.to_string());
        self.conn.call(move |c| {
            let mut tx = c.transaction()?;
            for (artifact, name, status, job, json) in &rows {
                tx.execute(
                    "INSERT INTO artifacts (id, run_id, name, status, job_id, json)
                     VALUES ($1, $2, $3, $4, $5, $6)
                     ON CONFLICT (id) DO UPDATE SET run_id = excluded.run_id,
                        name = excluded.name, status = excluded.status,
                        job_id = excluded.job_id, json = excluded.json",
                    &[artifact, &run, name, status, job, json],
                )?;
            }
            tx.execute(
                "INSERT INTO artifact_listings (run_id, pattern) VALUES ($1, $2)
                 ON CONFLICT DO NOTHING",
                &[&run, &pattern],
            )?;
            tx.commit()?;
            Ok(())
        })
    }

    /// See `SqliteStore::artifacts_listed`.
    pub fn artifacts_listed(&self, run: RunId, pattern: &str) -> Result<bool, StoreError> {
        let (run, pattern) = (id(run.0), pattern.to_string());
        self.conn.call(move |c| {
            Ok(c.query_opt(
                "SELECT 1 FROM artifact_listings WHERE run_id = $1 AND pattern = $2",
                &[&run, &pattern],
            )?
            .is_some())
        })
    }

    /// See `SqliteStore::artifact_ids`.
    pub fn artifact_ids(&self, run: RunId) -> Result<BTreeSet<u64>, StoreError> {
        let run = id(run.0);
        self.conn.call(move |c| {
            Ok(
                c.query("SELECT id FROM artifacts WHERE run_id = $1", &[&run])?
                    .iter()
                    .map(|row| uid(row, 0))
                    .collect(),
            )
        })
    }

    /// See `SqliteStore::load_artifacts`.
    pub fn load_artifacts(&self, run: RunId) -> Result<Vec<crate::ArtifactRecord>, StoreError> {
        let key = id(run.0);
        let rows: Vec<(u64, String, String, Option<i64>, String)> = self.conn.call(move |c| {
            Ok(c.query(
                "SELECT id, name, status, job_id, json FROM artifacts WHERE run_id = $1 ORDER BY id",
                &[&key],
            )?
            .iter()
            .map(|row| (uid(row, 0), row.get(1), row.get(2), row.get(3), row.get(4)))
            .collect())
        })?;
        rows.into_iter()
            .map(|(artifact, name, status, job, json)| {
                let extra = crate::artifacts::parse_artifact_json(&json)?;
                Ok(crate::ArtifactRecord {
                    id: artifact,
                    run,
                    name,
                    status: crate::ArtifactStatus::parse(&status)?,
                    job: job.map(|j| JobId(j as u64)),
                    tests: extra.tests,
                    note: extra.note,
                })
            })
            .collect()
    }

    /// See `SqliteStore::junit_tests`.
    pub fn junit_tests(
        &self,
        jobs: &[JobId],
    ) -> Result<BTreeMap<JobId, flakestat_core::model::TestOutcomes>, StoreError> {
        let ids: Vec<i64> = jobs.iter().map(|j| id(j.0)).collect();
        let rows: Vec<(u64, String)> = self.conn.call(move |c| {
            Ok(c.query(
                "SELECT job_id, json FROM artifacts
                 WHERE job_id = ANY($1) AND status = 'stored' ORDER BY job_id, id",
                &[&ids],
            )?
            .iter()
            .map(|row| (uid(row, 0), row.get::<_, String>(1)))
            .collect())
        })?;
        let mut out: BTreeMap<JobId, flakestat_core::model::TestOutcomes> = BTreeMap::new();
        for (job, json) in rows {
            let extra = crate::artifacts::parse_artifact_json(&json)?;
            out.entry(JobId(job)).or_default().merge(extra.tests);
        }
        Ok(out)
    }

    /// See `SqliteStore::store_green_log`.
    pub fn store_green_log(&self, job: JobId, entry: &LogEntry) -> Result<(), StoreError> {
        let (status, size, blob) = crate::green::green_row(entry);
        let blob = blob.map(<[u8]>::to_vec);
        self.conn.call(move |c| {
            c.execute(
                "INSERT INTO green_logs (job_id, status, raw_size, zstd) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (job_id) DO UPDATE SET
                    status = excluded.status, raw_size = excluded.raw_size, zstd = excluded.zstd",
                &[&id(job.0), &status, &id(size), &blob],
            )?;
            Ok(())
        })
    }

    /// See `SqliteStore::green_log_statuses`.
    pub fn green_log_statuses(
        &self,
        jobs: &[JobId],
    ) -> Result<BTreeMap<JobId, LogStatus>, StoreError> {
        self.per_job(
            "SELECT job_id, status FROM green_logs WHERE job_id = ANY($1) ORDER BY job_id",
            jobs,
            crate::green::parse_green_status,
        )
    }

    /// See `SqliteStore::load_green_log`.
    pub fn load_green_log(&self, job: JobId) -> Result<Option<Vec<u8>>, StoreError> {
        let blob: Option<Vec<u8>> = self.conn.call(move |c| {
            Ok(c.query_opt(
                "SELECT zstd FROM green_logs WHERE job_id = $1 AND status = 'stored'",
                &[&id(job.0)],
            )?
            .and_then(|row| row.get::<_, Option<Vec<u8>>>(0)))
        })?;
        blob.map(|b| zstd::decode_all(&b[..]).map_err(StoreError::Log))
            .transpose()
    }

    pub fn load_log(&self, job: JobId) -> Result<Option<Vec<u8>>, StoreError> {
        let blob: Option<Vec<u8>> = self.conn.call(move |c| {
            Ok(c.query_opt(
                "SELECT zstd FROM logs WHERE job_id = $1 AND status = 'stored'",
                &[&id(job.0)],
            )?
            .and_then(|row| row.get::<_, Option<Vec<u8>>>(0)))
        })?;
        blob.map(|b| zstd::decode_all(&b[..]).map_err(StoreError::Log))
            .transpose()
    }

    pub fn logs_to_classify(
        &self,
        repo: &Repo,
        fingerprint: &str,
    ) -> Result<Vec<JobId>, StoreError> {
        let (repo, fingerprint) = (repo.clone(), fingerprint.to_string());
        self.conn.call(move |c| {
            let Some(repo_id) = repo_id(c, &repo)? else {
                return Ok(Vec::new());
            };
            let rows = c.query(
                "SELECT logs.job_id FROM logs JOIN jobs ON jobs.id = logs.job_id
                 JOIN runs ON runs.id = jobs.run_id
                 LEFT JOIN classifications c ON c.job_id = logs.job_id AND c.fingerprint = $2
                 WHERE runs.repo_id = $1 AND logs.status = 'stored' AND c.job_id IS NULL
                 ORDER BY logs.job_id",
                &[&repo_id, &fingerprint],
            )?;
            Ok(rows.iter().map(|row| JobId(uid(row, 0))).collect())
        })
    }

    pub fn store_classification(
        &self,
        job: JobId,
        fingerprint: &str,
        classification: &Classification,
    ) -> Result<(), StoreError> {
        let fingerprint = fingerprint.to_string();
        let (matched, json) = (!classification.is_unclassified(), to_json(classification));
        self.conn
            .call(move |c| upsert_classification(c, job, &fingerprint, matched, &json))
    }

    pub fn runs_with_hits(
        &self,
        repo: &Repo,
        since: Timestamp,
        until: Timestamp,
        fingerprint: &str,
    ) -> Result<Vec<Run>, StoreError> {
        let (repo, fingerprint) = (repo.clone(), fingerprint.to_string());
        self.conn.call(move |c| {
            let Some(repo_id) = repo_id(c, &repo)? else {
                return Ok(Vec::new());
            };
            c.query(
                "SELECT runs.json FROM runs WHERE runs.repo_id = $1
                   AND runs.created_at >= $2 AND runs.created_at < $3
                   AND EXISTS (SELECT 1 FROM jobs JOIN classifications c ON c.job_id = jobs.id
                               WHERE jobs.run_id = runs.id AND c.fingerprint = $4
                             AND (c.matched OR c.json LIKE '%\"tests\":{\"failed\":[{%'))
                 ORDER BY runs.created_at, runs.id",
                &[&repo_id, &secs(since), &secs(until), &fingerprint],
            )?
            .iter()
            .map(|row| from_json(row.get::<_, &str>(0)))
            .collect()
        })
    }

    pub fn store_pulls(&self, repo: &Repo, pulls: &[PullRequest]) -> Result<(), StoreError> {
        let repo = repo.clone();
        let rows: Vec<(i64, String, Option<String>)> = pulls
            .iter()
            .map(|pull| {
                let mut bare = pull.clone();
                let files = bare.files.take().map(|f| to_json(&f));
                (id(pull.number.0), to_json(&bare), files)
            })
            .collect();
        self.conn.call(move |c| {
            let mut tx = c.transaction()?;
            let repo_id = ensure_repo(&mut tx, &repo)?;
            let upsert = tx.prepare(
                "INSERT INTO pulls (repo_id, number, json, files) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (repo_id, number) DO UPDATE SET
                    json = excluded.json, files = coalesce(excluded.files, pulls.files)",
            )?;
            for (number, json, files) in &rows {
                tx.execute(&upsert, &[&repo_id, number, json, files])?;
            }
            tx.commit()?;
            Ok(())
        })
    }

    pub fn store_pull_files(
        &self,
        repo: &Repo,
        number: PrNumber,
        files: &[String],
    ) -> Result<(), StoreError> {
        let (repo, files) = (repo.clone(), to_json(&files));
        self.conn.call(move |c| {
            let mut tx = c.transaction()?;
            let repo_id = ensure_repo(&mut tx, &repo)?;
            tx.execute(
                "UPDATE pulls SET files = $1 WHERE repo_id = $2 AND number = $3",
                &[&files, &repo_id, &id(number.0)],
            )?;
            tx.commit()?;
            Ok(())
        })
    }

    pub fn load_pull(
        &self,
        repo: &Repo,
        number: PrNumber,
    ) -> Result<Option<PullRequest>, StoreError> {
        let repo = repo.clone();
        self.conn.call(move |c| {
            let Some(repo_id) = repo_id(c, &repo)? else {
                return Ok(None);
            };
            c.query_opt(
                "SELECT json, files FROM pulls WHERE repo_id = $1 AND number = $2",
                &[&repo_id, &id(number.0)],
            )?
            .map(|row| pull_from_row(row.get(0), row.get(1)))
            .transpose()
        })
    }

    pub fn cached_response(&self, url: &str) -> Result<Option<CachedResponse>, StoreError> {
        let url = url.to_string();
        let row: Option<(String, Vec<u8>)> = self.conn.call(move |c| {
            Ok(
                c.query_opt("SELECT etag, zstd FROM etags WHERE url = $1", &[&url])?
                    .map(|row| (row.get(0), row.get(1))),
            )
        })?;
        row.map(|(etag, zstd)| {
            Ok(CachedResponse {
                etag,
                body: zstd::decode_all(&zstd[..]).map_err(StoreError::Log)?,
            })
        })
        .transpose()
    }

    pub fn store_response(
        &self,
        url: &str,
        etag: &str,
        body: &[u8],
        now: Timestamp,
    ) -> Result<(), StoreError> {
        let zstd = zstd::encode_all(body, super::LOG_ZSTD_LEVEL).map_err(StoreError::Log)?;
        let (url, etag) = (url.to_string(), etag.to_string());
        self.conn.call(move |c| {
            c.execute(
                "INSERT INTO etags (url, etag, zstd, used_at) VALUES ($1, $2, $3, $4)
                 ON CONFLICT (url) DO UPDATE SET
                    etag = excluded.etag, zstd = excluded.zstd, used_at = excluded.used_at",
                &[&url, &etag, &zstd, &secs(now)],
            )?;
            Ok(())
        })
    }

    pub fn touch_response(&self, url: &str, now: Timestamp) -> Result<(), StoreError> {
        let url = url.to_string();
        self.conn.call(move |c| {
            c.execute(
                "UPDATE etags SET used_at = $2 WHERE url = $1",
                &[&url, &secs(now)],
            )?;
            Ok(())
        })
    }

    pub fn prune_responses(&self, before: Timestamp) -> Result<u64, StoreError> {
        self.conn
            .call(move |c| Ok(c.execute("DELETE FROM etags WHERE used_at < $1", &[&secs(before)])?))
    }

    pub fn surveyed_to(&self, repo: &Repo) -> Result<Option<Timestamp>, StoreError> {
        let repo = repo.clone();
        self.conn.call(move |c| {
            let Some(repo_id) = repo_id(c, &repo)? else {
                return Ok(None);
            };
            surveyed_to(c, repo_id)
        })
    }

    pub fn load_windows(
        &self,
        repo: &Repo,
        scope: &str,
        from: Timestamp,
        to: Timestamp,
    ) -> Result<Vec<ListedWindow>, StoreError> {
        let (repo, scope) = (repo.clone(), scope.to_string());
        self.conn.call(move |c| {
            let Some(repo_id) = repo_id(c, &repo)? else {
                return Ok(Vec::new());
            };
            let rows = c.query(
                "SELECT since, until, runs FROM windows
                 WHERE repo_id = $1 AND scope = $2 AND since >= $3 AND until <= $4 ORDER BY since",
                &[&repo_id, &scope, &secs(from), &secs(to)],
            )?;
            Ok(rows
                .iter()
                .map(|row| ListedWindow {
                    since: from_secs(row.get(0)),
                    until: from_secs(row.get(1)),
                    runs: uid(row, 2),
                })
                .collect())
        })
    }

    pub fn store_window(
        &self,
        repo: &Repo,
        scope: &str,
        window: &ListedWindow,
    ) -> Result<(), StoreError> {
        let (repo, scope, window) = (repo.clone(), scope.to_string(), *window);
        self.conn.call(move |c| {
            let mut tx = c.transaction()?;
            let repo_id = ensure_repo(&mut tx, &repo)?;
            let (since, until) = (secs(window.since), secs(window.until));
            tx.execute(
                "DELETE FROM windows WHERE repo_id = $1 AND scope = $2 AND since < $4 AND until > $3",
                &[&repo_id, &scope, &since, &until],
            )?;
            tx.execute(
                "INSERT INTO windows (repo_id, scope, since, until, runs) VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT (repo_id, scope, since) DO UPDATE SET
                    until = excluded.until, runs = excluded.runs",
                &[&repo_id, &scope, &since, &until, &id(window.runs)],
            )?;
            tx.commit()?;
            Ok(())
        })
    }

    pub fn counts(&self, repo: &Repo) -> Result<StoreCounts, StoreError> {
        let repo = repo.clone();
        self.conn.call(move |c| {
            let Some(repo_id) = repo_id(c, &repo)? else {
                return Ok(StoreCounts::default());
            };
            let row = c.query_one(
                "SELECT
                    (SELECT count(*) FROM runs WHERE repo_id = $1),
                    (SELECT count(*) FROM jobs JOIN runs ON runs.id = jobs.run_id
                     WHERE runs.repo_id = $1),
                    (SELECT count(*) FILTER (WHERE logs.status = 'stored')
                     FROM logs JOIN jobs ON jobs.id = logs.job_id
                     JOIN runs ON runs.id = jobs.run_id WHERE runs.repo_id = $1),
                    (SELECT count(*) FILTER (WHERE logs.status = 'expired')
                     FROM logs JOIN jobs ON jobs.id = logs.job_id
                     JOIN runs ON runs.id = jobs.run_id WHERE runs.repo_id = $1),
                    (SELECT count(*) FILTER (WHERE logs.status = 'missing')
                     FROM logs JOIN jobs ON jobs.id = logs.job_id
                     JOIN runs ON runs.id = jobs.run_id WHERE runs.repo_id = $1)",
                &[&repo_id],
            )?;
            Ok(StoreCounts {
                runs: uid(&row, 0),
                jobs: uid(&row, 1),
                logs_stored: uid(&row, 2),
                logs_expired: uid(&row, 3),
                logs_missing: uid(&row, 4),
            })
        })
    }

    /// As `SqliteStore::load_snapshot`, in one read-only, repeatable-read transaction: a survey
    /// writing meanwhile never shows half.
    pub fn load_snapshot(
        &self,
        repo: &Repo,
        since: Timestamp,
        until: Timestamp,
        fingerprint: &str,
    ) -> Result<Snapshot, StoreError> {
        let (repo, fingerprint) = (repo.clone(), fingerprint.to_string());
        self.conn.call(move |c| {
            let mut tx = c
                .build_transaction()
                .isolation_level(postgres::IsolationLevel::RepeatableRead)
                .read_only(true)
                .start()?;
            let snapshot = load_snapshot(&mut tx, &repo, since, until, &fingerprint)?;
            tx.commit()?;
            Ok(snapshot)
        })
    }

    pub fn load_runs(&self, repo: &Repo) -> Result<HashMap<RunId, Run>, StoreError> {
        let repo = repo.clone();
        self.conn.call(move |c| {
            let Some(repo_id) = repo_id(c, &repo)? else {
                return Ok(HashMap::new());
            };
            let mut runs = HashMap::new();
            for row in c.query("SELECT json FROM runs WHERE repo_id = $1", &[&repo_id])? {
                let run: Run = from_json(row.get::<_, &str>(0))?;
                runs.insert(run.id, run);
            }
            Ok(runs)
        })
    }

    // Ancestry (`store/ancestry.rs` on SQLite).

    pub fn store_mainline(
        &self,
        repo: &Repo,
        commits: &[MainlineCommit],
    ) -> Result<(), StoreError> {
        let (repo, commits) = (repo.clone(), commits.to_vec());
        self.conn.call(move |c| {
            let mut tx = c.transaction()?;
            let repo_id = ensure_repo(&mut tx, &repo)?;
            let insert = tx.prepare(INSERT_MAINLINE)?;
            for commit in &commits {
                tx.execute(
                    &insert,
                    &[
                        &repo_id,
                        &commit.sha.0,
                        &secs(commit.committed_at),
                        &commit.title,
                    ],
                )?;
            }
            tx.commit()?;
            Ok(())
        })
    }

    pub fn load_mainline(
        &self,
        repo: &Repo,
        until: Timestamp,
    ) -> Result<Vec<MainlineCommit>, StoreError> {
        let repo = repo.clone();
        self.conn.call(move |c| load_mainline(c, &repo, until))
    }

    pub fn store_parents(
        &self,
        repo: &Repo,
        parents: &[(Sha, Vec<Sha>)],
    ) -> Result<(), StoreError> {
        let repo = repo.clone();
        let rows: Vec<(String, String)> = parents
            .iter()
            .map(|(sha, ps)| (sha.0.clone(), to_json(ps)))
            .collect();
        self.conn.call(move |c| {
            let mut tx = c.transaction()?;
            let repo_id = ensure_repo(&mut tx, &repo)?;
            let update =
                tx.prepare("UPDATE mainline SET parents = $1 WHERE repo_id = $2 AND sha = $3")?;
            for (sha, parents) in &rows {
                tx.execute(&update, &[parents, &repo_id, sha])?;
            }
            tx.commit()?;
            Ok(())
        })
    }

    pub fn load_parents(&self, repo: &Repo) -> Result<BTreeMap<Sha, Vec<Sha>>, StoreError> {
        let repo = repo.clone();
        self.conn.call(move |c| load_parents(c, &repo))
    }

    pub fn store_commit_files(
        &self,
        repo: &Repo,
        sha: &Sha,
        files: &[String],
    ) -> Result<(), StoreError> {
        let (repo, sha, files) = (repo.clone(), sha.0.clone(), to_json(&files));
        self.conn.call(move |c| {
            let mut tx = c.transaction()?;
            let repo_id = ensure_repo(&mut tx, &repo)?;
            tx.execute(
                "UPDATE mainline SET files = $1 WHERE repo_id = $2 AND sha = $3",
                &[&files, &repo_id, &sha],
            )?;
            tx.commit()?;
            Ok(())
        })
    }

    pub fn store_fork_point(
        &self,
        repo: &Repo,
        head: &Sha,
        fork: Option<&MainlineCommit>,
    ) -> Result<(), StoreError> {
        let (repo, head, fork) = (repo.clone(), head.0.clone(), fork.cloned());
        self.conn.call(move |c| {
            let mut tx = c.transaction()?;
            let repo_id = ensure_repo(&mut tx, &repo)?;
            if let Some(fork) = &fork {
                tx.execute(
                    INSERT_MAINLINE,
                    &[&repo_id, &fork.sha.0, &secs(fork.committed_at), &fork.title],
                )?;
            }
            tx.execute(
                "INSERT INTO fork_points (repo_id, head_sha, fork_sha) VALUES ($1, $2, $3)
                 ON CONFLICT (repo_id, head_sha) DO UPDATE SET fork_sha = excluded.fork_sha",
                &[&repo_id, &head, &fork.as_ref().map(|f| f.sha.0.clone())],
            )?;
            tx.commit()?;
            Ok(())
        })
    }

    pub fn load_fork_points(&self, repo: &Repo) -> Result<BTreeMap<Sha, Sha>, StoreError> {
        let repo = repo.clone();
        self.conn.call(move |c| load_fork_points(c, &repo))
    }

    pub fn asked_fork_points(&self, repo: &Repo) -> Result<BTreeSet<Sha>, StoreError> {
        let repo = repo.clone();
        self.conn.call(move |c| {
            let Some(repo_id) = repo_id(c, &repo)? else {
                return Ok(BTreeSet::new());
            };
            Ok(c.query(
                "SELECT head_sha FROM fork_points WHERE repo_id = $1",
                &[&repo_id],
            )?
            .iter()
            .map(|row| Sha(row.get(0)))
            .collect())
        })
    }
}

/// A mainline commit, added once; a title missing from one stored as a bare fork point is
/// filled in. `seq` (SQLite's rowid) keeps the order commits were first stored in.
const INSERT_MAINLINE: &str = "
    INSERT INTO mainline (repo_id, sha, committed_at, title) VALUES ($1, $2, $3, $4)
    ON CONFLICT (repo_id, sha) DO UPDATE SET title = excluded.title
    WHERE mainline.title = '' AND excluded.title != ''";

/// One log outcome as the `logs` and `classifications` tables take it, owned so it can move to
/// the connection's thread.
struct LogRow {
    job: JobId,
    status: &'static str,
    size: u64,
    blob: Option<Vec<u8>>,
    classification: Option<(String, bool, String)>,
}

impl LogRow {
    fn of(job: JobId, entry: &LogEntry, classification: Option<(&str, &Classification)>) -> LogRow {
        let (status, size, blob) = log_row(entry);
        LogRow {
            job,
            status,
            size,
            blob: blob.map(<[u8]>::to_vec),
            classification: classification
                .map(|(fp, c)| (fp.to_string(), !c.is_unclassified(), to_json(c))),
        }
    }

    /// Writes the outcome and its classification, and forgets the job's plan (`plans.rs`).
    fn write(&self, tx: &mut Transaction<'_>) -> Result<(), StoreError> {
        tx.execute(
            "INSERT INTO logs (job_id, status, raw_size, zstd) VALUES ($1, $2, $3, $4)
             ON CONFLICT (job_id) DO UPDATE SET
                status = excluded.status, raw_size = excluded.raw_size, zstd = excluded.zstd",
            &[&id(self.job.0), &self.status, &id(self.size), &self.blob],
        )?;
        if let Some((fingerprint, matched, json)) = &self.classification {
            upsert_classification(tx, self.job, fingerprint, *matched, json)?;
        }
        tx.execute(
            "DELETE FROM log_plans WHERE job_id = $1",
            &[&id(self.job.0)],
        )?;
        Ok(())
    }
}

fn upsert_classification(
    c: &mut impl GenericClient,
    job: JobId,
    fingerprint: &str,
    matched: bool,
    json: &str,
) -> Result<(), StoreError> {
    c.execute(
        "INSERT INTO classifications (job_id, fingerprint, matched, json) VALUES ($1, $2, $3, $4)
         ON CONFLICT (job_id, fingerprint) DO UPDATE SET
            matched = excluded.matched, json = excluded.json",
        &[&id(job.0), &fingerprint, &matched, &json],
    )?;
    Ok(())
}

fn load_mainline(
    c: &mut impl GenericClient,
    repo: &Repo,
    until: Timestamp,
) -> Result<Vec<MainlineCommit>, StoreError> {
    let Some(repo_id) = repo_id(c, repo)? else {
        return Ok(Vec::new());
    };
    c.query(
        "SELECT sha, committed_at, title, files FROM mainline
         WHERE repo_id = $1 AND committed_at <= $2 ORDER BY committed_at, seq",
        &[&repo_id, &secs(until)],
    )?
    .iter()
    .map(|row| {
        Ok(MainlineCommit {
            sha: Sha(row.get(0)),
            committed_at: from_secs(row.get(1)),
            title: row.get(2),
            files: row.get::<_, Option<&str>>(3).map(from_json).transpose()?,
        })
    })
    .collect()
}

fn load_parents(
    c: &mut impl GenericClient,
    repo: &Repo,
) -> Result<BTreeMap<Sha, Vec<Sha>>, StoreError> {
    let Some(repo_id) = repo_id(c, repo)? else {
        return Ok(BTreeMap::new());
    };
    c.query(
        "SELECT sha, parents FROM mainline WHERE repo_id = $1 AND parents IS NOT NULL",
        &[&repo_id],
    )?
    .iter()
    .map(|row| Ok((Sha(row.get(0)), from_json(row.get::<_, &str>(1))?)))
    .collect()
}

fn load_fork_points(
    c: &mut impl GenericClient,
    repo: &Repo,
) -> Result<BTreeMap<Sha, Sha>, StoreError> {
    let Some(repo_id) = repo_id(c, repo)? else {
        return Ok(BTreeMap::new());
    };
    Ok(c.query(
        "SELECT head_sha, fork_sha FROM fork_points WHERE repo_id = $1 AND fork_sha IS NOT NULL",
        &[&repo_id],
    )?
    .iter()
    .map(|row| (Sha(row.get(0)), Sha(row.get(1))))
    .collect())
}

fn load_snapshot(
    c: &mut Transaction<'_>,
    repo: &Repo,
    since: Timestamp,
    until: Timestamp,
    fingerprint: &str,
) -> Result<Snapshot, StoreError> {
    let stored = c
        .query_opt(
            "SELECT owner, name, default_branch FROM repos
             WHERE lower(owner) = lower($1) AND lower(name) = lower($2)",
            &[&repo.owner, &repo.name],
        )?
        .map(|row| {
            (
                Repo {
                    owner: row.get(0),
                    name: row.get(1),
                },
                row.get::<_, Option<String>>(2),
            )
        });
    let mut snapshot = Snapshot {
        repo: Some(
            stored
                .as_ref()
                .map_or_else(|| repo.clone(), |(r, _)| r.clone()),
        ),
        default_branch: stored.and_then(|(_, b)| b).unwrap_or_default(),
        since: Some(since),
        until: Some(until),
        ..Snapshot::default()
    };
    let Some(repo_id) = repo_id(c, repo)? else {
        return Ok(snapshot);
    };
    let from = secs(since - TimeDelta::days(HISTORY_DAYS));
    let to = secs(until);

    for row in c.query(
        "SELECT json FROM runs WHERE repo_id = $1 AND created_at >= $2 AND created_at < $3
         ORDER BY created_at, id",
        &[&repo_id, &from, &to],
    )? {
        snapshot.runs.push(from_json(row.get::<_, &str>(0))?);
    }
    snapshot.runs.sort_by_key(|r| (r.created_at, r.id));

    for row in c.query(
        "SELECT jobs.json, jobs.failed, logs.status, cl.json
         FROM jobs JOIN runs ON runs.id = jobs.run_id
         LEFT JOIN logs ON logs.job_id = jobs.id
         LEFT JOIN classifications cl ON cl.job_id = jobs.id AND cl.fingerprint = $4
         WHERE runs.repo_id = $1 AND runs.created_at >= $2 AND runs.created_at < $3
         ORDER BY jobs.run_id, jobs.run_attempt, jobs.id",
        &[&repo_id, &from, &to, &fingerprint],
    )? {
        let job: Job = from_json(row.get::<_, &str>(0))?;
        let failed: bool = row.get(1);
        if failed {
            let status = log_status(row.get::<_, Option<&str>>(2));
            snapshot.logs.insert(job.id, status);
            if let (LogStatus::Stored, Some(c)) = (status, row.get::<_, Option<&str>>(3)) {
                snapshot
                    .classifications
                    .insert(job.id, from_json::<Classification>(c)?);
            }
        }
        snapshot.jobs.push(job);
    }

    let mut pulls = BTreeMap::new();
    for row in c.query(
        "SELECT json, files FROM pulls WHERE repo_id = $1 ORDER BY number",
        &[&repo_id],
    )? {
        let pull = pull_from_row(row.get(0), row.get(1))?;
        pulls.insert(pull.number, pull);
    }
    snapshot.pulls = pulls;
    snapshot.mainline = load_mainline(c, repo, until)?;
    snapshot.fork_points = load_fork_points(c, repo)?;

    snapshot.runs_without_jobs = c
        .query(
            "SELECT id FROM runs WHERE repo_id = $1 AND created_at >= $2 AND created_at < $3
               AND (jobs_attempt IS NULL OR jobs_attempt < run_attempt) ORDER BY id",
            &[&repo_id, &from, &to],
        )?
        .iter()
        .map(|row| RunId(uid(row, 0)))
        .collect();
    snapshot.unlisted = unlisted(c, repo_id, since, until)?;
    snapshot.surveyed_to = surveyed_to(c, repo_id)?;
    snapshot.parents = load_parents(c, repo)?;
    Ok(snapshot)
}

/// As `SqliteStore::unlisted`.
fn unlisted(
    c: &mut impl GenericClient,
    repo_id: i64,
    since: Timestamp,
    until: Timestamp,
) -> Result<Vec<(Timestamp, Timestamp)>, StoreError> {
    let (from, to) = (secs(since), secs(until));
    let windows: Vec<(i64, i64)> = c
        .query(
            &format!(
                "SELECT since, until FROM windows WHERE repo_id = $1 AND {RUN_LISTINGS}
                   AND until > $2 AND since < $3 ORDER BY since, until"
            ),
            &[&repo_id, &from, &to],
        )?
        .iter()
        .map(|row| (row.get(0), row.get(1)))
        .collect();
    Ok(gaps(from, to, &windows)
        .into_iter()
        .map(|(a, b)| (from_secs(a), from_secs(b)))
        .collect())
}

/// As `SqliteStore::surveyed_to`.
fn surveyed_to(c: &mut impl GenericClient, repo_id: i64) -> Result<Option<Timestamp>, StoreError> {
    let end: Option<i64> = c
        .query_one(
            &format!("SELECT max(until) FROM windows WHERE repo_id = $1 AND {RUN_LISTINGS}"),
            &[&repo_id],
        )?
        .get(0);
    Ok(end.map(from_secs))
}

/// For tests and benchmarks: a fresh, empty schema on the server at `base` (the URL of a
/// database the user may create schemas in), and the URL of a store in it. Each test gets a
/// store of its own on one throwaway server.
#[doc(hidden)]
pub fn fresh_schema_url(base: &str) -> Result<String, StoreError> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let url = PostgresUrl::parse(base)?;
    let schema = format!(
        "t{}_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed),
        fastrand::u32(..)
    );
    let conn = Conn::open(&url, "flakestat tests")?;
    let statement = format!("CREATE SCHEMA {schema}");
    conn.call(move |c| Ok(c.batch_execute(&statement)?))?;
    let separator = if base.contains('?') { '&' } else { '?' };
    Ok(format!(
        "{base}{separator}options=-c%20search_path%3D{schema}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_password_is_masked_wherever_it_is_written() {
        for (text, want) in [
            (
                "postgres://team:s3cret@db.example:5432/flakestat",
                "postgres://team:***@db.example:5432/flakestat",
            ),
            (
                "postgresql://team@db/flakestat?password=s3cret&sslmode=disable",
                "postgresql://team@db/flakestat?password=***&sslmode=disable",
            ),
            (
                "postgres://team:s3cret@db/x?password=s3cret",
                "postgres://team:***@db/x?password=***",
            ),
            ("postgres://db/flakestat", "postgres://db/flakestat"),
        ] {
            let url = PostgresUrl::parse(text).unwrap();
            assert_eq!(url.masked(), want);
            assert_eq!(url.to_string(), want);
            assert!(!format!("{url:?}").contains("s3cret"));
            assert_eq!(url.scrub("said s3cret twice: s3cret"), {
                if url.password.is_some() {
                    "said *** twice: ***"
                } else {
                    "said s3cret twice: s3cret"
                }
            });
        }
    }

    #[test]
    fn a_url_that_is_not_postgres_is_refused_naming_it_masked() {
        let err = PostgresUrl::parse("mysql://team:s3cret@db/x").unwrap_err();
        let text = err.to_string();
        assert!(text.contains("mysql://team:***@db/x"), "{text}");
        assert!(!text.contains("s3cret"), "{text}");
        assert!(PostgresUrl::is_postgres("PostgreSQL://db/x"));
        assert!(!PostgresUrl::is_postgres("/var/cache/flakestat"));
    }

    #[test]
    fn an_unreachable_server_is_named_without_its_password() {
        // A port nothing listens on: connection refused, at once.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let url =
            PostgresUrl::parse(&format!("postgres://team:s3cret@127.0.0.1:{port}/x")).unwrap();
        let err = PgStore::open(&url).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, StoreError::PostgresConnect { .. }), "{text}");
        assert!(
            text.contains(&format!("team:***@127.0.0.1:{port}")),
            "{text}"
        );
        assert!(!text.contains("s3cret"), "{text}");
    }
}
