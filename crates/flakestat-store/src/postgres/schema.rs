//! The PostgreSQL schema and its forward migrations: the same versions as the SQLite store's
//! (`store/schema.rs`), one entry per version, in PostgreSQL's dialect.
//!
//! The version lives in the one-row table `flakestat_schema` (SQLite's `PRAGMA user_version`).
//! Each migration is a transaction under a transaction-scoped advisory lock, so two flakestat
//! processes opening a new store at once do not both apply it. Tables live in the connection's
//! current schema (`search_path`), so one database can hold several stores.

use postgres::Client;

use crate::SCHEMA_VERSION;
use crate::StoreError;

/// The advisory-lock class under which migrations are serialized.
const MIGRATION_LOCK: i32 = 0x464C_4B4D; // "FLKM"

/// One SQL batch per schema version; index 0 takes an empty schema to version 1. Each says
/// what the SQLite migration of the same version did, in this dialect.
const MIGRATIONS: &[&str] = &[
    // Version 1.
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
    CREATE TABLE logs (
        job_id BIGINT PRIMARY KEY,
        status TEXT NOT NULL CONSTRAINT logs_status CHECK (status IN ('stored', 'expired', 'missing')),
        raw_size BIGINT NOT NULL DEFAULT 0,
        zstd BYTEA
    );
    CREATE TABLE classifications (
        job_id BIGINT NOT NULL,
        fingerprint TEXT NOT NULL,
        matched BOOLEAN NOT NULL,
        json TEXT NOT NULL,
        PRIMARY KEY (job_id, fingerprint)
    );
    CREATE TABLE pulls (
        repo_id BIGINT NOT NULL REFERENCES repos(id),
        number BIGINT NOT NULL,
        updated_at BIGINT,
        json TEXT NOT NULL,
        files TEXT,
        PRIMARY KEY (repo_id, number)
    );
    CREATE TABLE etags (
        url TEXT PRIMARY KEY,
        etag TEXT NOT NULL,
        zstd BYTEA NOT NULL,
        used_at BIGINT NOT NULL
    );
    CREATE TABLE windows (
        repo_id BIGINT NOT NULL REFERENCES repos(id),
        scope TEXT NOT NULL,
        since BIGINT NOT NULL,
        until BIGINT NOT NULL,
        runs BIGINT NOT NULL,
        PRIMARY KEY (repo_id, scope, since)
    );
    ",
    // Version 2: commit ancestry. `seq` stands for SQLite's rowid: the order of first storing,
    // which breaks ties of `committed_at` the same way on both engines.
    "
    CREATE TABLE mainline (
        repo_id BIGINT NOT NULL REFERENCES repos(id),
        sha TEXT NOT NULL,
        committed_at BIGINT NOT NULL,
        seq BIGSERIAL NOT NULL,
        PRIMARY KEY (repo_id, sha)
    );
    CREATE INDEX mainline_by_date ON mainline (repo_id, committed_at, seq);
    CREATE TABLE fork_points (
        repo_id BIGINT NOT NULL REFERENCES repos(id),
        head_sha TEXT NOT NULL,
        fork_sha TEXT,
        PRIMARY KEY (repo_id, head_sha)
    );
    ",
    // Version 3: mainline commit titles and changed files.
    "
    ALTER TABLE mainline ADD COLUMN title TEXT NOT NULL DEFAULT '';
    ALTER TABLE mainline ADD COLUMN files TEXT;
    ",
    // Version 4: one repository however it is typed (its GitHub id, a case-insensitive name),
    // and the `mismatched` and `unavailable` log statuses. (SQLite's merge of rows stored under
    // two spellings has nothing to merge here: no PostgreSQL store predates this version's
    // case-insensitive lookups.)
    "
    ALTER TABLE repos ADD COLUMN github_id BIGINT;
    CREATE UNIQUE INDEX repos_by_name_nocase ON repos (lower(owner), lower(name));
    CREATE UNIQUE INDEX repos_by_github_id ON repos (github_id);
    ALTER TABLE logs DROP CONSTRAINT logs_status;
    ALTER TABLE logs ADD CONSTRAINT logs_status
        CHECK (status IN ('stored', 'expired', 'missing', 'mismatched', 'unavailable'));
    ",
    // Version 5: mainline commits' parents.
    "
    ALTER TABLE mainline ADD COLUMN parents TEXT;
    ",
    // Version 6: logs of successful jobs sampled by `signatures audit --green-sample`, in a
    // table of their own that no failure figure reads (`store/green.rs`).
    "
    CREATE TABLE green_logs (
        job_id BIGINT PRIMARY KEY,
        status TEXT NOT NULL
            CHECK (status IN ('stored', 'expired', 'missing', 'mismatched', 'unavailable')),
        raw_size BIGINT NOT NULL DEFAULT 0,
        zstd BYTEA
    );
    ",
    // Version 7: the next download a failed job's log needs when it is not the job's own
    // endpoint (`plans.rs`).
    "
    CREATE TABLE log_plans (
        job_id BIGINT PRIMARY KEY,
        next TEXT NOT NULL CHECK (next IN ('archive', 'job'))
    );
    ",
    // Version 8: JUnit reports from run artifacts (`artifacts.rs`) and the runs listed per
    // pattern.
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
    // Version 9: the webhook queue of `flakestat serve` (`queue.rs`).
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
];

const _: () = assert!(
    MIGRATIONS.len() as u32 == SCHEMA_VERSION,
    "each SQLite schema version has its PostgreSQL migration"
);

/// Brings the current schema to `SCHEMA_VERSION`; `store` (the masked URL) names it in errors.
pub(super) fn migrate(client: &mut Client, store: &str) -> Result<(), StoreError> {
    loop {
        let mut tx = client.transaction()?;
        tx.execute("SELECT pg_advisory_xact_lock($1, 0)", &[&MIGRATION_LOCK])?;
        let has_version: bool = tx
            .query_one("SELECT to_regclass('flakestat_schema') IS NOT NULL", &[])?
            .get(0);
        let current = if has_version {
            let v: i32 = tx
                .query_one("SELECT version FROM flakestat_schema", &[])?
                .get(0);
            v as u32
        } else {
            // Tables but no version: some other program's schema; never write into it.
            let tables: i64 = tx
                .query_one(
                    "SELECT count(*) FROM information_schema.tables
                     WHERE table_schema = current_schema()",
                    &[],
                )?
                .get(0);
            if tables > 0 {
                return Err(StoreError::PostgresNotAStore {
                    store: store.to_string(),
                });
            }
            tx.batch_execute(
                "CREATE TABLE flakestat_schema (version INTEGER NOT NULL);
                 INSERT INTO flakestat_schema (version) VALUES (0);",
            )?;
            0
        };
        if current > SCHEMA_VERSION {
            return Err(StoreError::PostgresTooNew {
                store: store.to_string(),
                found: current,
                known: SCHEMA_VERSION,
            });
        }
        let Some(sql) = MIGRATIONS.get(current as usize) else {
            return Ok(());
        };
        tx.batch_execute(sql)?;
        tx.execute(
            "UPDATE flakestat_schema SET version = $1",
            &[&(current as i32 + 1)],
        )?;
        tx.commit()?;
    }
}
