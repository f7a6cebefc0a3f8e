//! The store's schema and its forward migrations.
//!
//! `PRAGMA user_version` holds the number of migrations applied. A new table or column is a new
//! entry at the end of `MIGRATIONS`, never an edit of an old one: a store written by an older
//! flakestat is brought forward on open. A store written by a newer flakestat (a higher version
//! than this binary knows) is refused rather than guessed at.

use rusqlite::{Connection, TransactionBehavior};

use super::StoreError;

/// One SQL batch per schema version; index 0 takes an empty database to version 1.
///
/// Rows keep the columns queries filter or join on, and the full record as JSON (`json`) so a
/// field added to `model` does not need a migration to be carried through.
const MIGRATIONS: &[&str] = &[
    // Version 1.
    "
    CREATE TABLE repos (
        id INTEGER PRIMARY KEY,
        owner TEXT NOT NULL,
        name TEXT NOT NULL,
        default_branch TEXT,
        UNIQUE (owner, name)
    );
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        repo_id INTEGER NOT NULL REFERENCES repos(id),
        created_at INTEGER NOT NULL,
        run_attempt INTEGER NOT NULL,
        status TEXT NOT NULL,
        -- The attempt whose jobs (of every attempt up to it) are stored, and whether that attempt
        -- was completed then: a completed attempt never changes, so it needs no new jobs request.
        jobs_attempt INTEGER,
        jobs_completed INTEGER NOT NULL DEFAULT 0,
        json TEXT NOT NULL
    );
    CREATE INDEX runs_by_repo_created ON runs (repo_id, created_at);
    CREATE TABLE jobs (
        id INTEGER PRIMARY KEY,
        run_id INTEGER NOT NULL REFERENCES runs(id),
        run_attempt INTEGER NOT NULL,
        failed INTEGER NOT NULL,
        json TEXT NOT NULL
    );
    CREATE INDEX jobs_by_run ON jobs (run_id, run_attempt, id);
    -- Written in the same transaction as the log's classification: a row here is a whole log.
    CREATE TABLE logs (
        job_id INTEGER PRIMARY KEY,
        status TEXT NOT NULL CHECK (status IN ('stored', 'expired', 'missing')),
        raw_size INTEGER NOT NULL DEFAULT 0,
        zstd BLOB
    );
    CREATE TABLE classifications (
        job_id INTEGER NOT NULL,
        fingerprint TEXT NOT NULL,
        -- Whether some signature matched: finds the runs with a hit without parsing JSON.
        matched INTEGER NOT NULL,
        json TEXT NOT NULL,
        PRIMARY KEY (job_id, fingerprint)
    );
    CREATE TABLE pulls (
        repo_id INTEGER NOT NULL REFERENCES repos(id),
        number INTEGER NOT NULL,
        updated_at INTEGER,
        json TEXT NOT NULL,
        -- JSON array of paths; NULL until fetched.
        files TEXT,
        PRIMARY KEY (repo_id, number)
    );
    -- Bodies of list pages with their ETag; `used_at` (epoch seconds) lets old ones be pruned.
    CREATE TABLE etags (
        url TEXT PRIMARY KEY,
        etag TEXT NOT NULL,
        zstd BLOB NOT NULL,
        used_at INTEGER NOT NULL
    );
    -- Listing windows (`created=` ranges) that fitted under the 1,000-result cap last time, per
    -- listing scope (workflow, branch, event): a repeat starts from them instead of re-splitting.
    CREATE TABLE windows (
        repo_id INTEGER NOT NULL REFERENCES repos(id),
        scope TEXT NOT NULL,
        since INTEGER NOT NULL,
        until INTEGER NOT NULL,
        -- GitHub's `total_count` for the window when it was listed.
        runs INTEGER NOT NULL,
        PRIMARY KEY (repo_id, scope, since)
    );
    ",
    // Version 2: commit ancestry for the bisection (`store/ancestry.rs`).
    "
    -- Commits of the default branch's history; ordered by committed_at.
    CREATE TABLE mainline (
        repo_id INTEGER NOT NULL REFERENCES repos(id),
        sha TEXT NOT NULL,
        committed_at INTEGER NOT NULL,
        PRIMARY KEY (repo_id, sha)
    );
    CREATE INDEX mainline_by_date ON mainline (repo_id, committed_at);
    -- A run head's merge base with the default branch (NULL: GitHub could not say). Immutable.
    CREATE TABLE fork_points (
        repo_id INTEGER NOT NULL REFERENCES repos(id),
        head_sha TEXT NOT NULL,
        fork_sha TEXT,
        PRIMARY KEY (repo_id, head_sha)
    );
    ",
    // Version 3: direct pushes to the default branch as merges (`analysis/bisect.rs`): each
    // mainline commit's title, and the changed files of those that end up suspects.
    "
    ALTER TABLE mainline ADD COLUMN title TEXT NOT NULL DEFAULT '';
    -- JSON array of paths; NULL until fetched.
    ALTER TABLE mainline ADD COLUMN files TEXT;
    ",
    // Version 4: each mainline commit's parents (JSON array of shas, first parent first; NULL
    // when unknown), so the bisection places commits on the first-parent chain, not by date.
    "
    ALTER TABLE mainline ADD COLUMN parents TEXT;
    ",
];

/// The schema version this binary writes.
pub const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

/// Brings the database to `SCHEMA_VERSION`, one transaction per migration.
///
/// The version is read inside a write transaction, so two processes opening a new store at once
/// do not both apply the same migration.
pub(super) fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    loop {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let current: u32 = tx.pragma_query_value(None, "user_version", |row| row.get(0))?;
        if current > SCHEMA_VERSION {
            return Err(StoreError::TooNew {
                found: current,
                known: SCHEMA_VERSION,
            });
        }
        let Some(sql) = MIGRATIONS.get(current as usize) else {
            return Ok(());
        };
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", current + 1)?;
        tx.commit()?;
    }
}
