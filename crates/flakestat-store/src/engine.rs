//! `Store`: what the rest of flakestat holds, on either engine. The SQLite store
//! (`SqliteStore`, in a folder, the default for one person) or the PostgreSQL store (`PgStore`,
//! on a server, for a team); both keep the same records at the same schema version and answer
//! every query in the same order, so the same store contents give byte-identical reports.
//!
//! Each operation is a plain method of `Store`, written once for both engines in the module of
//! its records (`lib.rs`, `ancestry.rs`, `queue.rs` …) with the statements below, which reach
//! the engine through the database seam (`db.rs`). This file opens the engine.

use std::path::{Path, PathBuf};

use super::db::{Db, Dialect, Row, Tx, Value};
use super::postgres::{PgStore, PostgresUrl};
use super::{Access, SqliteStore, StoreError, store_file};

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

#[derive(Debug)]
enum Engine {
    Sqlite(SqliteStore),
    Postgres(PgStore),
}

/// The store, on either engine. Not `Sync`: share it through a `StoreHandle` (`handle.rs`).
#[derive(Debug)]
pub struct Store {
    engine: Engine,
}

impl From<Engine> for Store {
    fn from(engine: Engine) -> Store {
        Store { engine }
    }
}

impl Store {
    /// Opens (creating if needed) the SQLite store in `cache_dir`.
    pub fn open(cache_dir: &Path) -> Result<Store, StoreError> {
        SqliteStore::open(cache_dir).map(|s| Engine::Sqlite(s).into())
    }

    /// Opens (creating if needed) the SQLite store at exactly `path`.
    pub fn open_file(path: &Path) -> Result<Store, StoreError> {
        SqliteStore::open_file(path).map(|s| Engine::Sqlite(s).into())
    }

    /// Connects to the PostgreSQL store at `url`, creating or migrating its tables.
    pub fn open_postgres(url: &PostgresUrl) -> Result<Store, StoreError> {
        PgStore::open(url).map(|p| Engine::Postgres(p).into())
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
        // An empty file is no store: SQLite would take it for a new database and the schema
        // would be written into a file this command was only asked to read.
        if std::fs::metadata(&path).is_ok_and(|m| m.len() == 0) {
            return Err(StoreError::NotAStore { path });
        }
        match SqliteStore::open_file(&path) {
            Ok(store) => Ok(Some((Engine::Sqlite(store).into(), Access::ReadWrite))),
            Err(StoreError::ReadOnly { .. }) => Ok(Some((
                Engine::Sqlite(SqliteStore::open_read_only(&path)?).into(),
                Access::ReadOnly,
            ))),
            Err(e) => Err(e),
        }
    }

    /// How long a write on this connection waits for other writers' transactions before it is
    /// `Busy` (by default [`crate::BUSY_TIMEOUT`]): `serve`'s queue writes wait less, so that
    /// a delivery is answered within GitHub's 10 seconds.
    pub fn set_busy_timeout(&mut self, wait: std::time::Duration) -> Result<(), StoreError> {
        match &mut self.engine {
            Engine::Sqlite(s) => Ok(s.conn.busy_timeout(wait)?),
            Engine::Postgres(p) => p.conn.set_lock_timeout(wait),
        }
    }

    /// For messages: the database file, or the connection string with its password masked.
    pub fn describe(&self) -> String {
        match &self.engine {
            Engine::Sqlite(s) => s.path().display().to_string(),
            Engine::Postgres(p) => p.url().masked().to_string(),
        }
    }

    /// The engine, as the database the operations run on.
    pub(crate) fn db(&self) -> &(dyn Db + 'static) {
        match &self.engine {
            Engine::Sqlite(s) => &s.conn,
            Engine::Postgres(p) => &p.conn,
        }
    }

    /// The SQLite engine, when it is the one.
    #[cfg(test)]
    pub(crate) fn sqlite(&self) -> Option<&SqliteStore> {
        match &self.engine {
            Engine::Sqlite(s) => Some(s),
            Engine::Postgres(_) => None,
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

/// The statements every operation is written with, on this store's engine: the operations
/// (`store_runs`, `counts`, `queue_delivery` …) are plain methods of `Store`, each written once
/// for both engines over the database seam (`db.rs`), in the module of its records.
impl Store {
    /// This engine's dialect, for the few statements spelt per engine.
    pub(crate) fn dialect(&self) -> Dialect {
        self.db().dialect()
    }

    /// Runs one statement (written for SQLite); returns how many rows it changed.
    pub(crate) fn execute(&self, sql: &str, params: &[Value]) -> Result<u64, StoreError> {
        self.db().execute(sql, params)
    }

    /// Runs one query (written for SQLite); returns its rows.
    pub(crate) fn query(&self, sql: &str, params: &[Value]) -> Result<Vec<Row>, StoreError> {
        self.db().query(sql, params)
    }

    /// The first row `sql` finds, decoded by `f`.
    pub(crate) fn query_row<T>(
        &self,
        sql: &str,
        params: &[Value],
        f: impl FnOnce(&Row) -> Result<T, StoreError>,
    ) -> Result<Option<T>, StoreError> {
        self.db().query_row(sql, params, f)
    }

    /// Every row `sql` finds, decoded by `f`, collected.
    pub(crate) fn query_map<T, C: FromIterator<T>>(
        &self,
        sql: &str,
        params: &[Value],
        f: impl FnMut(&Row) -> Result<T, StoreError>,
    ) -> Result<C, StoreError> {
        self.db().query_map(sql, params, f)
    }

    /// `f` in one transaction of kind `tx` (see the seam's `transaction`): it is handed this
    /// store, whose operations then run inside the transaction. `f` may run more than once (two
    /// writers' transactions crossed), so it only writes through the store it is handed.
    pub(crate) fn transaction<R>(
        &self,
        tx: Tx,
        mut f: impl FnMut(&Store) -> Result<R, StoreError>,
    ) -> Result<R, StoreError> {
        self.db().transaction(tx, |_| f(self))
    }
}
