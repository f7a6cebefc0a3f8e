//! `Store`: what the rest of flakestat holds, on either engine. The SQLite store
//! (`SqliteStore`, in a folder, the default for one person) or the PostgreSQL store (`PgStore`,
//! on a server, for a team); both keep the same records at the same schema version and answer
//! every query in the same order, so the same store contents give byte-identical reports.
//!
//! Each operation is written once, over the database seam (`db.rs`): a method of `dyn Db`
//! (where its doc lives), which both engines are. This file opens the engine and hands it over.

use std::path::{Path, PathBuf};

use super::db::Db;
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
            Engine::Sqlite(s) => &**s,
            Engine::Postgres(p) => &p.conn,
        }
    }

    fn db_mut(&mut self) -> &mut (dyn Db + 'static) {
        match &mut self.engine {
            Engine::Sqlite(s) => &mut **s,
            Engine::Postgres(p) => &mut p.conn,
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

/// Every operation of the store (`store_runs`, `counts`, `queue_delivery` …) is a method of the
/// database its engine is: written once, over the seam (`db.rs`), with its doc there.
impl std::ops::Deref for Store {
    type Target = dyn Db;
    fn deref(&self) -> &(dyn Db + 'static) {
        self.db()
    }
}

impl std::ops::DerefMut for Store {
    fn deref_mut(&mut self) -> &mut (dyn Db + 'static) {
        self.db_mut()
    }
}
