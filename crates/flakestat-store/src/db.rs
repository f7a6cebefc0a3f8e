//! The database seam: the few things the store asks of an engine (run a statement, run a query
//! and hand back its rows as plain values, run a batch), implemented by SQLite (a
//! `rusqlite::Connection`, below) and PostgreSQL (`postgres::Conn`). Every statement of the
//! store is written once, in SQLite's spelling, against `dyn Db`; the store's operations are
//! methods of `dyn Db` (`impl dyn Db` in `lib.rs`, `ancestry.rs`, `queue.rs` …).
//!
//! The dialects differ only where this file says:
//! - placeholders: `?1` is written, PostgreSQL reads `$1` ([`postgres_sql`], the one rewriting
//!   of a statement's text);
//! - the order rows were first stored in: SQLite's `rowid`, PostgreSQL's `seq` column, spelt
//!   in the statement that needs it ([`Dialect::stored_order`]);
//! - text ordered byte by byte: SQLite's `COLLATE BINARY`, PostgreSQL's `COLLATE "C"`, spelt
//!   in the statement that needs it ([`Dialect::bytewise`]);
//! - types: a [`Value`] is an integer, a text, a blob or null; PostgreSQL's `INTEGER`,
//!   `BIGINT`, `BOOLEAN` and `BYTEA` columns take and give the same values (`postgres/mod.rs`
//!   binds each by the type the server inferred), and migrations name PostgreSQL's types,
//!   which [`Dialect::schema`] maps to SQLite's (`BIGINT`→`INTEGER`, `BYTEA`→`BLOB` …);
//! - transactions: how each [`Tx`] begins ([`Dialect::begin`]).
//!
//! What both engines read alike is written alike: `lower()` for names compared without case
//! (ASCII only on both, as GitHub's names), `ON CONFLICT … DO UPDATE` for upserts, `RETURNING`
//! for what an insert made, `LIKE` for a character in a text, and lists of ids inlined as
//! integers ([`id_list`]).

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, params_from_iter};

use super::StoreError;

/// The engine a statement runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

/// What a transaction is for: its `BEGIN`. Several writers may share a store (a survey, a
/// nightly, `serve`): nothing holds it longer than one of these.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tx {
    /// Writes that belong together. SQLite takes its write lock at `BEGIN` (`IMMEDIATE`), so a
    /// second writer waits its turn (up to [`crate::BUSY_TIMEOUT`]) instead of failing when
    /// its reads turn into a write.
    Write,
    /// A read-modify-write two writers must not interleave (a listed window merged with those
    /// stored, the repository's identity): on PostgreSQL, one such transaction at a time.
    Serial,
    /// Reads that must see one moment: a survey writing meanwhile never shows half.
    Read,
    /// A schema migration: one process at a time applies it.
    Migrate,
}

impl Dialect {
    pub(crate) fn begin(self, tx: Tx) -> &'static str {
        match (self, tx) {
            (Dialect::Sqlite, Tx::Read) => "BEGIN",
            (Dialect::Sqlite, _) => "BEGIN IMMEDIATE",
            (Dialect::Postgres, Tx::Write) => "BEGIN",
            (Dialect::Postgres, Tx::Read) => "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
            // Advisory-lock classes: 1179405143 is "FLKW" (serial writes), 1179405133 "FLKM"
            // (migrations); both are released at the transaction's end.
            (Dialect::Postgres, Tx::Serial) => "BEGIN; SELECT pg_advisory_xact_lock(1179405143, 0)",
            (Dialect::Postgres, Tx::Migrate) => {
                "BEGIN; SELECT pg_advisory_xact_lock(1179405133, 0)"
            }
        }
    }

    /// The column that orders rows as they were first stored: SQLite's `rowid`, PostgreSQL's
    /// `seq` (every table that needs it has one: `{seq}` in [`Dialect::schema`]).
    pub(crate) fn stored_order(self) -> &'static str {
        match self {
            Dialect::Sqlite => "rowid",
            Dialect::Postgres => "seq",
        }
    }

    /// The collation that orders text byte by byte, the same on both engines.
    pub(crate) fn bytewise(self) -> &'static str {
        match self {
            Dialect::Sqlite => "COLLATE BINARY",
            Dialect::Postgres => "COLLATE \"C\"",
        }
    }

    /// A migration written with PostgreSQL's types, in this dialect. `{seq}` is PostgreSQL's
    /// column standing for SQLite's `rowid`.
    pub(crate) fn schema(self, sql: &str) -> String {
        match self {
            Dialect::Postgres => sql.replace("{seq}", "seq BIGSERIAL NOT NULL,"),
            Dialect::Sqlite => sql
                .replace("{seq}", "")
                .replace("BIGSERIAL", "INTEGER")
                .replace("BIGINT", "INTEGER")
                .replace("BOOLEAN", "INTEGER")
                .replace("DEFAULT FALSE", "DEFAULT 0")
                .replace("BYTEA", "BLOB"),
        }
    }
}

/// A statement's placeholders as PostgreSQL reads them: `$n` for `?n`. Nothing else of the
/// text changes: a statement that differs between the engines says so itself (`Dialect`).
pub(crate) fn postgres_sql(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        let number_follows = chars.peek().is_some_and(char::is_ascii_digit);
        out.push(if c == '?' && number_follows { '$' } else { c });
    }
    out
}

/// `id IN (…)` lists: integers written into the statement (nothing a user typed), in chunks.
pub(crate) fn id_list(ids: &[u64]) -> Vec<String> {
    ids.chunks(500)
        .map(|chunk| {
            let ids: Vec<String> = chunk.iter().map(u64::to_string).collect();
            ids.join(", ")
        })
        .collect()
}

/// A parameter or a column: what both engines store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Null,
    /// Integers of every width, and booleans (0 and 1).
    Int(i64),
    Text(String),
    Blob(Vec<u8>),
}

/// `Value::from` each parameter type: `$t` becomes `$value` (of `$v`).
macro_rules! value_from {
    ($($t:ty => |$v:ident| $value:expr;)*) => {$(
        impl From<$t> for Value {
            fn from($v: $t) -> Value {
                $value
            }
        }
    )*};
}
value_from! {
    i64 => |n| Value::Int(n);
    u64 => |n| Value::Int(n as i64);
    u32 => |n| Value::Int(n.into());
    bool => |b| Value::Int(b.into());
    &str => |s| Value::Text(s.to_string());
    String => |s| Value::Text(s);
    &String => |s| Value::Text(s.clone());
    &[u8] => |b| Value::Blob(b.to_vec());
    Vec<u8> => |b| Value::Blob(b);
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Value {
        v.map_or(Value::Null, Into::into)
    }
}

/// The parameters of one statement.
macro_rules! params {
    ($($v:expr),* $(,)?) => {
        &[$($crate::db::Value::from($v)),*][..]
    };
}
pub(crate) use params;

/// A value read back as a Rust type.
pub trait FromValue: Sized {
    fn from_value(value: &Value) -> Option<Self>;
}

/// `FromValue` for each type: `$t` is read from a `$pattern` value as `$read`.
macro_rules! from_value {
    ($($t:ty: $pattern:pat => $read:expr;)*) => {$(
        impl FromValue for $t {
            fn from_value(value: &Value) -> Option<$t> {
                match value {
                    $pattern => $read,
                    _ => None,
                }
            }
        }
    )*};
}
from_value! {
    i64: Value::Int(n) => Some(*n);
    u64: Value::Int(n) => u64::try_from(*n).ok();
    u32: Value::Int(n) => u32::try_from(*n).ok();
    bool: Value::Int(n) => Some(*n != 0);
    String: Value::Text(s) => Some(s.clone());
    Vec<u8>: Value::Blob(b) => Some(b.clone());
}

impl<T: FromValue> FromValue for Option<T> {
    fn from_value(value: &Value) -> Option<Option<T>> {
        match value {
            Value::Null => Some(None),
            other => T::from_value(other).map(Some),
        }
    }
}

/// One row of a query's result.
#[derive(Debug)]
pub struct Row(pub(crate) Vec<Value>);

impl Row {
    /// Column `i` as a `T`; a column of another kind is a store flakestat did not write.
    pub(crate) fn get<T: FromValue>(&self, i: usize) -> Result<T, StoreError> {
        let value = self.0.get(i).unwrap_or(&Value::Null);
        T::from_value(value).ok_or_else(|| {
            StoreError::Corrupt(format!(
                "column {i} holds {value:?}, not a {}",
                std::any::type_name::<T>()
            ))
        })
    }
}

/// What the store asks of an engine. `&self` throughout: SQLite's connection and the
/// PostgreSQL connection's thread each take one call at a time.
pub trait Db: Send {
    fn dialect(&self) -> Dialect;
    /// Runs one statement (written for SQLite); returns how many rows it changed.
    fn execute(&self, sql: &str, params: &[Value]) -> Result<u64, StoreError>;
    /// Runs one query (written for SQLite); returns its rows.
    fn query(&self, sql: &str, params: &[Value]) -> Result<Vec<Row>, StoreError>;
    /// Runs statements without parameters, in this engine's dialect as they are.
    fn batch(&self, sql: &str) -> Result<(), StoreError>;
    /// Prepares one statement (written for SQLite) without running it: the engine checks its
    /// syntax and every table and column it names.
    #[cfg(test)]
    fn prepare_only(&self, sql: &str) -> Result<(), StoreError>;
}

impl dyn Db + '_ {
    /// `f` in one transaction of kind `tx`: committed when it returns `Ok`, rolled back when
    /// it fails. Two writers whose transactions crossed (PostgreSQL chose this one to undo)
    /// run it again: [`crate::CROSSED_TRIES`] tries in all. `f` may run more than once, so it
    /// only writes through `db`.
    pub(crate) fn transaction<R>(
        &self,
        tx: Tx,
        mut f: impl FnMut(&dyn Db) -> Result<R, StoreError>,
    ) -> Result<R, StoreError> {
        let mut tries = 0;
        loop {
            // A failed `BEGIN` is rolled back too: PostgreSQL's serial one also waits for its
            // lock, and a wait that timed out leaves the connection inside a failed
            // transaction, where every later statement would fail.
            let done = self
                .batch(self.dialect().begin(tx))
                .and_then(|()| f(self))
                .and_then(|value| self.batch("COMMIT").map(|()| value));
            match done {
                Ok(value) => return Ok(value),
                Err(e) => {
                    let _ = self.batch("ROLLBACK");
                    tries += 1;
                    if !matches!(e, StoreError::Crossed { .. }) || tries >= crate::CROSSED_TRIES {
                        return Err(e);
                    }
                }
            }
        }
    }

    /// The first row `sql` finds, decoded by `f`.
    pub(crate) fn query_row<T>(
        &self,
        sql: &str,
        params: &[Value],
        f: impl FnOnce(&Row) -> Result<T, StoreError>,
    ) -> Result<Option<T>, StoreError> {
        self.query(sql, params)?.first().map(f).transpose()
    }

    /// Every row `sql` finds, decoded by `f`, collected.
    pub(crate) fn query_map<T, C: FromIterator<T>>(
        &self,
        sql: &str,
        params: &[Value],
        f: impl FnMut(&Row) -> Result<T, StoreError>,
    ) -> Result<C, StoreError> {
        self.query(sql, params)?.iter().map(f).collect()
    }
}

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self {
            Value::Null => ValueRef::Null,
            Value::Int(n) => ValueRef::Integer(*n),
            Value::Text(s) => ValueRef::Text(s.as_bytes()),
            Value::Blob(b) => ValueRef::Blob(b),
        }))
    }
}

impl Db for Connection {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn execute(&self, sql: &str, params: &[Value]) -> Result<u64, StoreError> {
        let run = || {
            Ok(self
                .prepare_cached(sql)?
                .execute(params_from_iter(params))? as u64)
        };
        run().map_err(|e| busy(self, e))
    }

    fn query(&self, sql: &str, params: &[Value]) -> Result<Vec<Row>, StoreError> {
        rows(self, sql, params).map_err(|e| busy(self, e))
    }

    fn batch(&self, sql: &str) -> Result<(), StoreError> {
        self.execute_batch(sql).map_err(|e| busy(self, e.into()))
    }

    #[cfg(test)]
    fn prepare_only(&self, sql: &str) -> Result<(), StoreError> {
        self.prepare(sql)?;
        Ok(())
    }
}

/// A write that waited out the busy timeout for another writer's transaction: `Busy`.
fn busy(conn: &Connection, err: StoreError) -> StoreError {
    use rusqlite::ErrorCode::{DatabaseBusy, DatabaseLocked};
    match &err {
        StoreError::Sql(e)
            if matches!(e.sqlite_error_code(), Some(DatabaseBusy | DatabaseLocked)) =>
        {
            StoreError::Busy {
                store: conn.path().unwrap_or_default().to_string(),
                waited: crate::BUSY_TIMEOUT.as_secs(),
            }
        }
        _ => err,
    }
}

/// A query's rows as plain values.
fn rows(conn: &Connection, sql: &str, params: &[Value]) -> Result<Vec<Row>, StoreError> {
    let mut stmt = conn.prepare_cached(sql)?;
    let columns = stmt.column_count();
    let mut rows = stmt.query(params_from_iter(params))?;
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        let mut values = Vec::with_capacity(columns);
        for i in 0..columns {
            values.push(match row.get_ref(i)? {
                ValueRef::Null => Value::Null,
                ValueRef::Integer(n) => Value::Int(n),
                ValueRef::Real(x) => Value::Int(x as i64),
                ValueRef::Text(t) => Value::Text(
                    String::from_utf8(t.to_vec())
                        .map_err(|e| StoreError::Corrupt(e.to_string()))?,
                ),
                ValueRef::Blob(b) => Value::Blob(b.to_vec()),
            });
        }
        out.push(Row(values));
    }
    Ok(out)
}
