//! The store's schema and its forward migrations, one list for both engines.
//!
//! The version is the number of migrations applied: SQLite's `PRAGMA user_version`, PostgreSQL's
//! one-row table `flakestat_schema`. A new table or column is a new entry at the end of
//! `VERSIONS`, never an edit of an old one: a store written by an older flakestat is brought
//! forward on open. A store written by a newer flakestat (a higher version than this binary
//! knows) is refused rather than guessed at, and so is a database holding tables but no version
//! (another program's). Each migration is one transaction that only one process applies at a
//! time (`Tx::Migrate`). PostgreSQL tables live in the connection's current schema
//! (`search_path`), so one database can hold several stores.
//!
//! Migrations name PostgreSQL's types; SQLite reads them as its own (`Dialect::schema`:
//! `BIGINT`→`INTEGER`, `BOOLEAN`→`INTEGER`, `BYTEA`→`BLOB`, `BIGSERIAL`→`INTEGER`), so an
//! `INTEGER PRIMARY KEY` is still SQLite's rowid. Rows keep the columns queries filter or join
//! on, and the full record as JSON (`json`) so a field added to `model` does not need a
//! migration to be carried through.

use std::sync::LazyLock;

#[cfg(test)]
use rusqlite::Connection;

use super::StoreError;
use crate::db::{Db, Dialect, Tx, params};

/// One schema version: what both engines run, then what each runs of its own.
struct Migration {
    both: &'static str,
    sqlite: &'static str,
    postgres: &'static str,
}

const fn same(both: &'static str) -> Migration {
    Migration {
        both,
        sqlite: "",
        postgres: "",
    }
}

/// Index 0 takes an empty database to version 1.
const VERSIONS: &[Migration] = &[
    // Version 1.
    same(
        "
    CREATE TABLE repos (
        id BIGSERIAL PRIMARY KEY,
        owner TEXT NOT NULL,
        name TEXT NOT NULL,
        default_branch TEXT,
        UNIQUE (owner, name)
    );
    CREATE TABLE runs (
        id BIGINT PRIMARY KEY,
        repo_id BIGINT NOT NULL REFERENCES repos(id),
        created_at BIGINT NOT NULL,
        run_attempt INTEGER NOT NULL,
        status TEXT NOT NULL,
        -- The attempt whose jobs (of every attempt up to it) are stored, and whether that attempt
        -- was completed then: a completed attempt never changes, so it needs no new jobs request.
        jobs_attempt INTEGER,
        jobs_completed BOOLEAN NOT NULL DEFAULT FALSE,
        json TEXT NOT NULL
    );
    CREATE INDEX runs_by_repo_created ON runs (repo_id, created_at);
    CREATE TABLE jobs (
        id BIGINT PRIMARY KEY,
        run_id BIGINT NOT NULL REFERENCES runs(id),
        run_attempt INTEGER NOT NULL,
        failed BOOLEAN NOT NULL,
        json TEXT NOT NULL
    );
    CREATE INDEX jobs_by_run ON jobs (run_id, run_attempt, id);
    -- Written in the same transaction as the log's classification: a row here is a whole log.
    CREATE TABLE logs (
        job_id BIGINT PRIMARY KEY,
        status TEXT NOT NULL CONSTRAINT logs_status CHECK (status IN ('stored', 'expired', 'missing')),
        raw_size BIGINT NOT NULL DEFAULT 0,
        zstd BYTEA
    );
    CREATE TABLE classifications (
        job_id BIGINT NOT NULL,
        fingerprint TEXT NOT NULL,
        -- Whether some signature matched: finds the runs with a hit without parsing JSON.
        matched BOOLEAN NOT NULL,
        json TEXT NOT NULL,
        PRIMARY KEY (job_id, fingerprint)
    );
    CREATE TABLE pulls (
        repo_id BIGINT NOT NULL REFERENCES repos(id),
        number BIGINT NOT NULL,
        updated_at BIGINT,
        json TEXT NOT NULL,
        -- JSON array of paths; NULL until fetched.
        files TEXT,
        PRIMARY KEY (repo_id, number)
    );
    -- Bodies of list pages with their ETag; `used_at` (epoch seconds) lets old ones be pruned.
    CREATE TABLE etags (
        url TEXT PRIMARY KEY,
        etag TEXT NOT NULL,
        zstd BYTEA NOT NULL,
        used_at BIGINT NOT NULL
    );
    -- Listing windows (`created=` ranges) that fitted under the 1,000-result cap last time, per
    -- listing scope (workflow, branch, event): a repeat starts from them instead of re-splitting.
    CREATE TABLE windows (
        repo_id BIGINT NOT NULL REFERENCES repos(id),
        scope TEXT NOT NULL,
        since BIGINT NOT NULL,
        until BIGINT NOT NULL,
        -- GitHub's `total_count` for the window when it was listed.
        runs BIGINT NOT NULL,
        PRIMARY KEY (repo_id, scope, since)
    );
    ",
    ),
    // Version 2: commit ancestry for the bisection (`store/ancestry.rs`). PostgreSQL's `seq`
    // stands for SQLite's rowid: the order of first storing, which breaks ties of
    // `committed_at` the same way on both engines.
    Migration {
        both: "
    -- Commits of the default branch's history; ordered by committed_at.
    CREATE TABLE mainline (
        repo_id BIGINT NOT NULL REFERENCES repos(id),
        sha TEXT NOT NULL,
        committed_at BIGINT NOT NULL,
        {seq}
        PRIMARY KEY (repo_id, sha)
    );
    -- A run head's merge base with the default branch (NULL: GitHub could not say). Immutable.
    CREATE TABLE fork_points (
        repo_id BIGINT NOT NULL REFERENCES repos(id),
        head_sha TEXT NOT NULL,
        fork_sha TEXT,
        PRIMARY KEY (repo_id, head_sha)
    );
    ",
        sqlite: "CREATE INDEX mainline_by_date ON mainline (repo_id, committed_at);",
        postgres: "CREATE INDEX mainline_by_date ON mainline (repo_id, committed_at, seq);",
    },
    // Version 3: direct pushes to the default branch as merges (`analysis/bisect.rs`): each
    // mainline commit's title, and the changed files of those that end up suspects.
    same(
        "
    ALTER TABLE mainline ADD COLUMN title TEXT NOT NULL DEFAULT '';
    -- JSON array of paths; NULL until fetched.
    ALTER TABLE mainline ADD COLUMN files TEXT;
    ",
    ),
    // Version 4: one repository however it is typed (`NVIDIA/x` and `nvidia/x` are one on
    // GitHub): its GitHub id, a case-insensitive name, and rows stored under a second spelling
    // merged into the first; and logs that GitHub served for another execution of the job and
    // that the attempt's archive did not hold either (`mismatched`); and logs whose download was
    // refused (`unavailable`: a redirect to another scheme, from https to http, or too many hops).
    // SQLite cannot change a CHECK: the logs table is rebuilt. (PostgreSQL has nothing to merge:
    // no PostgreSQL store predates this version's case-insensitive lookups.)
    Migration {
        both: "
    ALTER TABLE repos ADD COLUMN github_id BIGINT;
    ",
        sqlite: "
    CREATE TEMP TABLE repo_merge AS
        SELECT r.id AS old,
               (SELECT min(k.id) FROM repos k
                WHERE k.owner = r.owner COLLATE NOCASE AND k.name = r.name COLLATE NOCASE) AS new
        FROM repos r;
    DELETE FROM repo_merge WHERE old = new;
    UPDATE runs SET repo_id = (SELECT new FROM repo_merge WHERE old = runs.repo_id)
        WHERE repo_id IN (SELECT old FROM repo_merge);
    UPDATE OR IGNORE pulls SET repo_id = (SELECT new FROM repo_merge WHERE old = pulls.repo_id)
        WHERE repo_id IN (SELECT old FROM repo_merge);
    DELETE FROM pulls WHERE repo_id IN (SELECT old FROM repo_merge);
    UPDATE OR IGNORE windows SET repo_id = (SELECT new FROM repo_merge WHERE old = windows.repo_id)
        WHERE repo_id IN (SELECT old FROM repo_merge);
    DELETE FROM windows WHERE repo_id IN (SELECT old FROM repo_merge);
    UPDATE OR IGNORE mainline SET repo_id = (SELECT new FROM repo_merge WHERE old = mainline.repo_id)
        WHERE repo_id IN (SELECT old FROM repo_merge);
    DELETE FROM mainline WHERE repo_id IN (SELECT old FROM repo_merge);
    UPDATE OR IGNORE fork_points
        SET repo_id = (SELECT new FROM repo_merge WHERE old = fork_points.repo_id)
        WHERE repo_id IN (SELECT old FROM repo_merge);
    DELETE FROM fork_points WHERE repo_id IN (SELECT old FROM repo_merge);
    DELETE FROM repos WHERE id IN (SELECT old FROM repo_merge);
    DROP TABLE repo_merge;
    CREATE UNIQUE INDEX repos_by_name_nocase ON repos (owner COLLATE NOCASE, name COLLATE NOCASE);
    CREATE UNIQUE INDEX repos_by_github_id ON repos (github_id);
    CREATE TABLE logs_v4 (
        job_id INTEGER PRIMARY KEY,
        status TEXT NOT NULL CHECK (status IN ('stored', 'expired', 'missing', 'mismatched', 'unavailable')),
        raw_size INTEGER NOT NULL DEFAULT 0,
        zstd BLOB
    );
    INSERT INTO logs_v4 (job_id, status, raw_size, zstd)
        SELECT job_id, status, raw_size, zstd FROM logs;
    DROP TABLE logs;
    ALTER TABLE logs_v4 RENAME TO logs;
    ",
        postgres: "
    CREATE UNIQUE INDEX repos_by_name_nocase ON repos (lower(owner), lower(name));
    CREATE UNIQUE INDEX repos_by_github_id ON repos (github_id);
    ALTER TABLE logs DROP CONSTRAINT logs_status;
    ALTER TABLE logs ADD CONSTRAINT logs_status
        CHECK (status IN ('stored', 'expired', 'missing', 'mismatched', 'unavailable'));
    ",
    },
    // Version 5: each mainline commit's parents (JSON array of shas, first parent first; NULL
    // when unknown), so the bisection places commits on the first-parent chain, not by date.
    same(
        "
    ALTER TABLE mainline ADD COLUMN parents TEXT;
    ",
    ),
    // Version 6: logs of *successful* jobs sampled by `signatures audit --green-sample`
    // (`store/green.rs`). A table of their own, never `logs`: no failure figure, no
    // re-classification and no snapshot reads it, so a green log can never pass for a failure's.
    same(
        "
    CREATE TABLE green_logs (
        job_id BIGINT PRIMARY KEY,
        status TEXT NOT NULL
            CHECK (status IN ('stored', 'expired', 'missing', 'mismatched', 'unavailable')),
        raw_size BIGINT NOT NULL DEFAULT 0,
        zstd BYTEA
    );
    ",
    ),
    // Version 7: the next download a failed job's log needs when it is not the job's own
    // endpoint (`plans.rs`): `archive` when that endpoint served another execution's log, `job`
    // when the attempt's archive, asked first, lacked it. Gone once the log's outcome is stored,
    // so a stopped survey resumes with the download still needed, not the one that taught it.
    same(
        "
    CREATE TABLE log_plans (
        job_id BIGINT PRIMARY KEY,
        next TEXT NOT NULL CHECK (next IN ('archive', 'job'))
    );
    ",
    ),
    // Version 8: JUnit reports from run artifacts (`--junit-artifacts`, `artifacts.rs`): each
    // matching artifact's outcome, the job it was matched to (NULL: unknown) and its tests as
    // JSON; and the runs listed per pattern, so a repeat survey asks nothing.
    same(
        "
    CREATE TABLE artifacts (
        id BIGINT PRIMARY KEY,
        run_id BIGINT NOT NULL,
        name TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('stored', 'expired', 'refused', 'unavailable')),
        job_id BIGINT,
        json TEXT NOT NULL
    );
    CREATE INDEX artifacts_by_run ON artifacts (run_id, id);
    CREATE INDEX artifacts_by_job ON artifacts (job_id, id);
    CREATE TABLE artifact_listings (
        run_id BIGINT NOT NULL,
        pattern TEXT NOT NULL,
        PRIMARY KEY (run_id, pattern)
    );
    ",
    ),
    // Version 9: the webhook queue of `flakestat serve` (`queue.rs`): each accepted delivery,
    // once per `X-GitHub-Delivery`, stored before it is answered; `queued` until the worker
    // has ingested the run attempt it names.
    same(
        "
    CREATE TABLE webhook_queue (
        delivery TEXT PRIMARY KEY,
        event TEXT NOT NULL,
        action TEXT NOT NULL,
        owner TEXT NOT NULL,
        name TEXT NOT NULL,
        run_id BIGINT NOT NULL,
        run_attempt BIGINT NOT NULL,
        run_created_at BIGINT,
        received_at BIGINT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('queued', 'noted', 'done', 'failed')),
        tries INTEGER NOT NULL DEFAULT 0,
        error TEXT
    );
    CREATE INDEX webhook_queue_by_state ON webhook_queue (state, received_at, delivery);
    ",
    ),
    // Version 10: where each job ran (`analysis::hosts`): the runner the jobs listing names
    // (NULL: never got one, or stored before this version), and what a stored log's preamble
    // says of the machine (`signatures::preamble`), read once per parser `version`, so a store
    // of any age gains it by re-reading its logs, with no request.
    same(
        "
    ALTER TABLE jobs ADD COLUMN runner_name TEXT;
    ALTER TABLE jobs ADD COLUMN runner_group_name TEXT;
    CREATE TABLE log_preambles (
        job_id BIGINT PRIMARY KEY,
        version INTEGER NOT NULL,
        runner_version TEXT,
        runner_name TEXT,
        machine TEXT,
        image TEXT,
        image_version TEXT,
        driver TEXT,
        gpu TEXT
    );
    ",
    ),
    // Version 11: what `--green-logs` read in green jobs' logs (`hidden.rs`): per job
    // execution its outcome (`read`, or why not) and what the log said of its tests (passed
    // count, NULL when no summary said; retries; the tests retried to a pass as JSON), not the
    // log. A job with a row is never asked again.
    same(
        "
    CREATE TABLE green_outcomes (
        job_id BIGINT PRIMARY KEY,
        status TEXT NOT NULL
            CHECK (status IN ('read', 'expired', 'missing', 'mismatched', 'unavailable')),
        passed BIGINT,
        retries BIGINT NOT NULL DEFAULT 0,
        retried TEXT NOT NULL DEFAULT '[]'
    );
    ",
    ),
    // Version 12 (issue 42): each run attempt a `serve` worker is ingesting, claimed by
    // it until `claimed_until` (seconds), so replicas sharing a store ingest it once
    // (`claims.rs`).
    same(
        "
    CREATE TABLE queue_claims (
        run_id BIGINT NOT NULL,
        run_attempt BIGINT NOT NULL,
        claimed_by TEXT NOT NULL,
        claimed_until BIGINT NOT NULL,
        PRIMARY KEY (run_id, run_attempt)
    );
    ",
    ),
];

/// The schema version this binary writes.
pub const SCHEMA_VERSION: u32 = VERSIONS.len() as u32;

fn render(dialect: Dialect) -> Vec<String> {
    VERSIONS
        .iter()
        .map(|m| {
            let own = match dialect {
                Dialect::Sqlite => m.sqlite,
                Dialect::Postgres => m.postgres,
            };
            dialect.schema(&format!("{}\n{own}", m.both))
        })
        .collect()
}

/// Each version's SQL as SQLite runs it.
static MIGRATIONS: LazyLock<Vec<String>> = LazyLock::new(|| render(Dialect::Sqlite));
/// Each version's SQL as PostgreSQL runs it.
static POSTGRES_MIGRATIONS: LazyLock<Vec<String>> = LazyLock::new(|| render(Dialect::Postgres));

/// Brings the database to `SCHEMA_VERSION`, one transaction per migration. The version is read
/// inside the migration's transaction, so two processes opening a new store at once do not
/// both apply the same migration. Errors name no store: the engine's `open` does.
pub(super) fn migrate(db: &dyn Db) -> Result<(), StoreError> {
    let dialect = db.dialect();
    let migrations = match dialect {
        Dialect::Sqlite => &*MIGRATIONS,
        Dialect::Postgres => &*POSTGRES_MIGRATIONS,
    };
    loop {
        let done = db.transaction(Tx::Migrate, |db| {
            let current = match version(db)? {
                Some(v) => v,
                // Tables but no version: some other program's; never write into it.
                None if tables(db)? > 0 => {
                    return Err(StoreError::NotAStore {
                        path: Default::default(),
                    });
                }
                None => {
                    if dialect == Dialect::Postgres {
                        db.batch(
                            "CREATE TABLE flakestat_schema (version INTEGER NOT NULL);
                             INSERT INTO flakestat_schema (version) VALUES (0);",
                        )?;
                    }
                    0
                }
            };
            if current > SCHEMA_VERSION {
                return Err(StoreError::TooNew {
                    path: Default::default(),
                    found: current,
                    known: SCHEMA_VERSION,
                });
            }
            let Some(sql) = migrations.get(current as usize) else {
                return Ok(true);
            };
            db.batch(sql)?;
            match dialect {
                Dialect::Sqlite => db.batch(&format!("PRAGMA user_version = {}", current + 1))?,
                Dialect::Postgres => {
                    db.execute(
                        "UPDATE flakestat_schema SET version = ?1",
                        params![current + 1],
                    )?;
                }
            }
            Ok(false)
        })?;
        if done {
            return Ok(());
        }
    }
}

/// The schema version the database records; `None` when it records none.
fn version(db: &dyn Db) -> Result<Option<u32>, StoreError> {
    let sql = match db.dialect() {
        Dialect::Sqlite => "SELECT user_version FROM pragma_user_version() WHERE user_version > 0",
        Dialect::Postgres => {
            let exists = db.query_row(
                "SELECT to_regclass('flakestat_schema') IS NOT NULL",
                params![],
                |r| r.get::<bool>(0),
            )?;
            if exists != Some(true) {
                return Ok(None);
            }
            "SELECT version FROM flakestat_schema"
        }
    };
    db.query_row(sql, params![], |r| r.get(0))
}

/// How many tables the database (PostgreSQL: the current schema) holds.
fn tables(db: &dyn Db) -> Result<u64, StoreError> {
    let sql = match db.dialect() {
        Dialect::Sqlite => "SELECT count(*) FROM sqlite_master",
        Dialect::Postgres => {
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()"
        }
    };
    Ok(db.query_row(sql, params![], |r| r.get(0))?.unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use flakestat_core::model::{JobId, Repo};

    /// A store written before version 4 holds a repository under two spellings (each survey
    /// under another spelling made a row of its own): opened now, they are one repository with
    /// everything of both, found under any spelling, and named as GitHub names it once resolved.
    #[test]
    fn version_4_merges_the_spellings_of_one_repository() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.sqlite3");
        {
            let conn = Connection::open(&path).unwrap();
            for sql in &MIGRATIONS[..3] {
                conn.execute_batch(sql).unwrap();
            }
            conn.pragma_update(None, "user_version", 3).unwrap();
            conn.execute_batch(
                "INSERT INTO repos (id, owner, name, default_branch) VALUES
                    (1, 'NVIDIA', 'cuda-python', 'main'), (2, 'nvidia', 'CUDA-python', 'main'),
                    (3, 'octo', 'demo', 'main');
                 INSERT INTO runs (id, repo_id, created_at, run_attempt, status, json) VALUES
                    (10, 1, 0, 1, 'completed', '{}'), (11, 2, 0, 1, 'completed', '{}'),
                    (12, 3, 0, 1, 'completed', '{}');
                 INSERT INTO pulls (repo_id, number, json) VALUES (1, 7, '{}'), (2, 7, '{}'),
                    (2, 8, '{}');
                 INSERT INTO windows (repo_id, scope, since, until, runs) VALUES
                    (2, 'all', 0, 10, 1);
                 INSERT INTO jobs (id, run_id, run_attempt, failed, json) VALUES
                    (100, 11, 1, 1, '{}');
                 INSERT INTO logs (job_id, status) VALUES (100, 'expired');",
            )
            .unwrap();
        }
        let mut store = crate::Store::open_file(&path).unwrap();
        let count = |sql: &str| -> i64 {
            let conn = &store.sqlite().unwrap().conn;
            conn.query_row(sql, [], |r| r.get(0)).unwrap()
        };
        assert_eq!(count("SELECT count(*) FROM repos"), 2);
        assert_eq!(count("SELECT count(*) FROM runs WHERE repo_id = 1"), 2);
        assert_eq!(count("SELECT count(*) FROM pulls WHERE repo_id = 1"), 2);
        assert_eq!(count("SELECT count(*) FROM windows WHERE repo_id = 1"), 1);
        assert_eq!(
            count("SELECT count(*) FROM logs WHERE status = 'expired'"),
            1
        );
        let lower = Repo::parse("NviDia/Cuda-Python").unwrap();
        assert_eq!(store.counts(&lower).unwrap().runs, 2);
        assert_eq!(
            store.stored_repo(&lower).unwrap(),
            Repo::parse("NVIDIA/cuda-python")
        );
        // Resolved: GitHub's name and id; a rename keeps the row (and its runs).
        store
            .store_repo_identity(&Repo::parse("NVIDIA/cuda-python").unwrap(), 42, "main")
            .unwrap();
        store
            .store_repo_identity(&Repo::parse("NVIDIA/cuda-py").unwrap(), 42, "main")
            .unwrap();
        let renamed = Repo::parse("nvidia/CUDA-PY").unwrap();
        assert_eq!(store.counts(&renamed).unwrap().runs, 2);
        assert_eq!(store.stored_repo(&lower).unwrap(), None);
        // The new status is accepted.
        store
            .store_log(JobId(100), &crate::LogEntry::Mismatched, None)
            .unwrap();
        let status: String = store
            .sqlite()
            .unwrap()
            .conn
            .query_row("SELECT status FROM logs WHERE job_id = 100", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(status, "mismatched");
    }
}

#[cfg(test)]
mod migration_tests {
    use super::*;

    /// A store of schema `version` (its migrations applied, nothing later) holding one stored
    /// log, job 7's.
    fn store_of_version(version: u32) -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        for sql in &MIGRATIONS[..version as usize] {
            conn.execute_batch(sql).unwrap();
        }
        conn.pragma_update(None, "user_version", version).unwrap();
        conn.execute(
            "INSERT INTO logs (job_id, status, raw_size, zstd) VALUES (7, 'stored', 3, x'010203')",
            [],
        )
        .unwrap();
        conn
    }

    /// Migrates a [`store_of_version`] store: brought to this binary's version (later versions
    /// follow it), job 7's log kept as it was.
    fn migrate_keeping_the_log(conn: &mut Connection) {
        migrate(conn).unwrap();
        let version: u32 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        let kept: (String, i64, Vec<u8>) = conn
            .query_row(
                "SELECT status, raw_size, zstd FROM logs WHERE job_id = 7",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        assert_eq!(kept, ("stored".to_string(), 3, vec![1, 2, 3]));
    }

    #[test]
    fn version_4_keeps_the_logs_and_accepts_unavailable() {
        let mut conn = store_of_version(3);
        assert!(
            conn.execute(
                "INSERT INTO logs (job_id, status) VALUES (8, 'unavailable')",
                []
            )
            .is_err(),
            "version 3 refuses the new status"
        );
        migrate_keeping_the_log(&mut conn);
        conn.execute(
            "INSERT INTO logs (job_id, status) VALUES (8, 'unavailable')",
            [],
        )
        .unwrap();
        assert!(
            conn.execute("INSERT INTO logs (job_id, status) VALUES (9, 'other')", [])
                .is_err()
        );
    }

    /// A store of version 5 gains the green-log table on open and keeps its failure logs.
    #[test]
    fn version_6_adds_green_logs_and_keeps_the_rest() {
        let mut conn = store_of_version(5);
        assert!(
            conn.execute(
                "INSERT INTO green_logs (job_id, status) VALUES (8, 'stored')",
                []
            )
            .is_err(),
            "version 5 has no green logs"
        );
        migrate_keeping_the_log(&mut conn);
        conn.execute(
            "INSERT INTO green_logs (job_id, status) VALUES (8, 'expired')",
            [],
        )
        .unwrap();
        assert!(
            conn.execute(
                "INSERT INTO green_logs (job_id, status) VALUES (9, 'other')",
                []
            )
            .is_err()
        );
    }

    /// A store of version 6 gains the log plans on open (`plans.rs`), keeps its logs, and
    /// takes only the two plans.
    #[test]
    fn version_7_adds_log_plans_and_keeps_the_rest() {
        let mut conn = store_of_version(6);
        assert!(
            conn.execute("INSERT INTO log_plans (job_id, next) VALUES (8, 'job')", [])
                .is_err(),
            "version 6 has no log plans"
        );
        migrate_keeping_the_log(&mut conn);
        for next in ["job", "archive"] {
            conn.execute(
                "INSERT OR REPLACE INTO log_plans (job_id, next) VALUES (8, ?1)",
                [next],
            )
            .unwrap();
        }
        assert!(
            conn.execute(
                "INSERT INTO log_plans (job_id, next) VALUES (9, 'other')",
                []
            )
            .is_err()
        );
    }

    /// A store of version 7 gains the artifact tables on open, keeps its logs, and takes only
    /// the four artifact statuses.
    #[test]
    fn version_8_adds_artifacts_and_keeps_the_rest() {
        let mut conn = store_of_version(7);
        assert!(
            conn.execute(
                "INSERT INTO artifacts (id, run_id, name, status, json) VALUES (1, 2, 'a', 'stored', '{}')",
                []
            )
            .is_err(),
            "version 7 has no artifacts"
        );
        migrate_keeping_the_log(&mut conn);
        for (id, status) in [
            (1, "stored"),
            (2, "expired"),
            (3, "refused"),
            (4, "unavailable"),
        ] {
            conn.execute(
                "INSERT INTO artifacts (id, run_id, name, status, json) VALUES (?1, 2, 'a', ?2, '{}')",
                rusqlite::params![id, status],
            )
            .unwrap();
        }
        assert!(
            conn.execute(
                "INSERT INTO artifacts (id, run_id, name, status, json) VALUES (5, 2, 'a', 'other', '{}')",
                []
            )
            .is_err()
        );
        conn.execute(
            "INSERT INTO artifact_listings (run_id, pattern) VALUES (2, 'junit-*')",
            [],
        )
        .unwrap();
    }

    /// A store of version 8 gains the webhook queue on open, keeps its logs, and takes one
    /// row per delivery id in the four states only.
    #[test]
    fn version_9_adds_the_webhook_queue_and_keeps_the_rest() {
        let mut conn = store_of_version(8);
        let insert = "INSERT INTO webhook_queue (delivery, event, action, owner, name, run_id,
                run_attempt, received_at, state)
             VALUES (?1, 'workflow_run', 'completed', 'o', 'r', 1, 1, 0, ?2)";
        assert!(
            conn.execute(insert, ["d1", "queued"]).is_err(),
            "version 8 has no webhook queue"
        );
        migrate_keeping_the_log(&mut conn);
        conn.execute(insert, ["d1", "queued"]).unwrap();
        assert!(
            conn.execute(insert, ["d1", "done"]).is_err(),
            "one row per delivery"
        );
        assert!(conn.execute(insert, ["d2", "other"]).is_err());
    }

    /// A store of version 9 gains the runner columns and the preamble table on open, keeps its
    /// logs and jobs (their runner unknown: NULL), and takes one preamble per job.
    #[test]
    fn version_10_adds_where_jobs_ran_and_keeps_the_rest() {
        let mut conn = store_of_version(9);
        conn.execute_batch(
            "INSERT INTO repos (id, owner, name) VALUES (1, 'o', 'r');
             INSERT INTO runs (id, repo_id, created_at, run_attempt, status, json)
                VALUES (1, 1, 0, 1, 'completed', '{}');",
        )
        .unwrap();
        conn.execute(
            "INSERT INTO jobs (id, run_id, run_attempt, failed, json) VALUES (7, 1, 1, 1, '{}')",
            [],
        )
        .unwrap();
        let preamble = "INSERT INTO log_preambles (job_id, version, machine) VALUES (7, 1, ?1)";
        assert!(
            conn.execute(preamble, ["gpu-a"]).is_err(),
            "version 9 has no preambles"
        );
        migrate_keeping_the_log(&mut conn);
        let runner: (Option<String>, Option<String>) = conn
            .query_row(
                "SELECT runner_name, runner_group_name FROM jobs WHERE id = 7",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!(runner, (None, None));
        conn.execute(preamble, ["gpu-a"]).unwrap();
        assert!(
            conn.execute(preamble, ["gpu-b"]).is_err(),
            "one preamble per job"
        );
    }

    /// A store of version 10 gains `green_outcomes` on open, keeps its logs, and takes one
    /// outcome per job, of the statuses it knows.
    #[test]
    fn version_11_adds_green_outcomes_and_keeps_the_rest() {
        let mut conn = store_of_version(10);
        let insert = "INSERT INTO green_outcomes (job_id, status, passed, retries, retried)
                      VALUES (7, ?1, 41, 2, '[]')";
        assert!(
            conn.execute(insert, ["read"]).is_err(),
            "version 10 has no green outcomes"
        );
        migrate_keeping_the_log(&mut conn);
        assert!(
            conn.execute(insert, ["fetched"]).is_err(),
            "an unknown status is refused"
        );
        conn.execute(insert, ["read"]).unwrap();
        assert!(
            conn.execute(insert, ["expired"]).is_err(),
            "one outcome per job"
        );
        let row: (String, Option<i64>, i64) = conn
            .query_row(
                "SELECT status, passed, retries FROM green_outcomes WHERE job_id = 7",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        assert_eq!(row, ("read".to_string(), Some(41), 2));
    }

    /// A store of the version before the queue claims gains their table on open, keeps its logs
    /// and its queue, and takes one claim per run attempt. (Issue 42: version 12.)
    #[test]
    fn version_12_adds_queue_claims_and_keeps_the_rest() {
        let mut conn = store_of_version(SCHEMA_VERSION - 1);
        conn.execute(
            "INSERT INTO webhook_queue (delivery, event, action, owner, name, run_id,
                run_attempt, received_at, state)
             VALUES ('d1', 'workflow_run', 'completed', 'o', 'r', 1, 1, 0, 'queued')",
            [],
        )
        .unwrap();
        let claim = "INSERT INTO queue_claims (run_id, run_attempt, claimed_by, claimed_until)
             VALUES (1, 1, ?1, 60)";
        assert!(
            conn.execute(claim, ["one"]).is_err(),
            "the version before has no claims"
        );
        migrate_keeping_the_log(&mut conn);
        conn.execute(claim, ["one"]).unwrap();
        assert!(
            conn.execute(claim, ["two"]).is_err(),
            "one claim per run attempt"
        );
        let queued: String = conn
            .query_row(
                "SELECT state FROM webhook_queue WHERE delivery = 'd1'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(queued, "queued");
    }
}
