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
//! The statements are the store's, written once (`db.rs`): this file runs them, each prepared
//! once per connection in PostgreSQL's spelling (`db::postgres_sql`), its parameters bound by
//! the types the server inferred (an integer to `INTEGER`, `BIGINT` or `BOOLEAN`), its columns
//! read back as the same plain values SQLite gives.
//!
//! TLS (`tls.rs`): the URL's `sslmode` and `sslrootcert` are read here, every TLS connection
//! checks the server's certificate with rustls; without `sslmode` the connection is plain TCP.
//!
//! The connection string's password never leaves this module: `PostgresUrl` shows itself with
//! the password masked, and every message from the server or the driver is scrubbed of it.

mod tls;

use std::collections::HashMap;
use std::fmt;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use std::error::Error;

use bytes::BytesMut;
use postgres::types::{IsNull, ToSql, Type, to_sql_checked};
use postgres::{Client, NoTls, Statement};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::StoreError;
use crate::db::{Db, Dialect, Row, Value, postgres_sql};

/// A PostgreSQL connection string (`postgres://USER:PASSWORD@HOST:PORT/DATABASE?…`). Its
/// `Debug` and `Display` mask the password.
#[derive(Clone)]
pub struct PostgresUrl {
    /// What the driver reads: the URL without the parameters `tls.rs` reads.
    secret: String,
    masked: String,
    password: Option<String>,
    tls: tls::TlsSettings,
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
        let (driver, tls) = tls::split_tls(text).map_err(|detail| StoreError::PostgresUrl {
            store: masked.clone(),
            detail,
        })?;
        let config: postgres::Config =
            driver
                .parse()
                .map_err(|e: postgres::Error| StoreError::PostgresUrl {
                    store: masked.clone(),
                    detail: e.to_string(),
                })?;
        let password = config
            .get_password()
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .filter(|p| !p.is_empty());
        let url = PostgresUrl {
            secret: driver,
            masked,
            password,
            tls,
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
        let mut config: postgres::Config =
            self.secret
                .parse()
                .map_err(|e: postgres::Error| StoreError::PostgresUrl {
                    store: self.masked.clone(),
                    detail: self.scrub(&e.to_string()),
                })?;
        config.ssl_mode(self.tls.ssl_mode());
        Ok(config)
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
        None => tls::handshake_detail(err).unwrap_or_else(|| err.to_string()),
    }
}

impl From<postgres::Error> for StoreError {
    fn from(err: postgres::Error) -> StoreError {
        let store = String::new();
        match err.code().map(|code| code.code()) {
            // `lock_timeout` (set at connect) ran out: other writers held the rows or the lock.
            Some("55P03") => StoreError::Busy {
                store,
                waited: crate::BUSY_TIMEOUT.as_secs(),
            },
            // Two writers' transactions waited for each other; the server undid this one.
            Some("40P01" | "40001") => StoreError::Crossed {
                store,
                detail: error_detail(&err),
            },
            _ => StoreError::Postgres {
                store,
                detail: error_detail(&err),
            },
        }
    }
}

/// The connection and its prepared statements, on the connection's thread.
struct Session {
    client: Client,
    /// By the statement's text as the store writes it.
    statements: HashMap<String, Statement>,
}

impl Session {
    fn prepare(&mut self, sql: &str) -> Result<Statement, StoreError> {
        if let Some(statement) = self.statements.get(sql) {
            return Ok(statement.clone());
        }
        let statement = self.client.prepare(&postgres_sql(sql))?;
        if self.statements.len() >= 256 {
            // Lists of ids make statements of their own: keep the cache bounded.
            self.statements.clear();
        }
        self.statements.insert(sql.to_string(), statement.clone());
        Ok(statement)
    }
}

/// One piece of work for the connection's thread.
type Work = Box<dyn FnOnce(&mut Link) + Send>;

/// The first pause before another try at a lost connection, doubled after each failed try up
/// to [`RECONNECT_MAX`].
const RECONNECT_FIRST: Duration = Duration::from_millis(250);
const RECONNECT_MAX: Duration = Duration::from_secs(30);

/// One connection, owned by its thread (see the module's doc); dropping it closes the
/// connection. A connection the server dropped (a restart, a failover, an idle timeout) is made
/// anew on the next call after the failure that found it, then no more often than a backoff
/// doubling from [`RECONNECT_FIRST`] to [`RECONNECT_MAX`] while the server stays away; calls
/// between tries fail at once, saying when the next try is.
pub(crate) struct Conn {
    work: Option<mpsc::Sender<Work>>,
    thread: Option<JoinHandle<()>>,
    url: PostgresUrl,
}

/// Connects with `config` (over TLS when `tls` is given and the URL's `sslmode` asks for it)
/// and sets the lock timeout.
fn connect(
    config: &postgres::Config,
    tls: &Option<MakeRustlsConnect>,
    lock_timeout: Duration,
) -> Result<Client, postgres::Error> {
    let mut client = match tls {
        Some(tls) => config.connect(tls.clone())?,
        None => config.connect(NoTls)?,
    };
    client.batch_execute(&lock_timeout_sql(lock_timeout))?;
    Ok(client)
}

fn lock_timeout_sql(wait: Duration) -> String {
    format!("SET lock_timeout = '{}ms'", wait.as_millis().max(1))
}

/// The connection's thread: the session while there is one, and when to try again without.
struct Link {
    config: postgres::Config,
    tls: Option<MakeRustlsConnect>,
    session: Option<Session>,
    lock_timeout: Duration,
    next_try: std::time::Instant,
    pause: Duration,
    last_error: String,
    /// The last call failed on the server's side: before the next, the connection is checked
    /// (a server that restarted answers the first statement after with an error, and the
    /// driver does not always count the connection closed).
    suspect: bool,
}

impl Link {
    /// The session, made anew when the last one was lost and a try is due.
    fn session(&mut self) -> Result<&mut Session, StoreError> {
        if std::mem::take(&mut self.suspect)
            && let Some(session) = &mut self.session
            && session.client.is_valid(Duration::from_secs(5)).is_err()
        {
            self.session = None;
            self.last_error = "the connection to the server was lost".to_string();
            self.next_try = std::time::Instant::now();
            self.pause = RECONNECT_FIRST;
        }
        if self.session.as_ref().is_some_and(|s| s.client.is_closed()) {
            self.session = None;
            self.last_error = "the connection to the server was lost".to_string();
            self.next_try = std::time::Instant::now();
            self.pause = RECONNECT_FIRST;
        }
        if self.session.is_none() {
            let now = std::time::Instant::now();
            if now < self.next_try {
                return Err(StoreError::Postgres {
                    store: String::new(),
                    detail: format!(
                        "{}; connecting again in {:.1} s",
                        self.last_error,
                        (self.next_try - now).as_secs_f64()
                    ),
                });
            }
            match connect(&self.config, &self.tls, self.lock_timeout) {
                Ok(client) => {
                    self.session = Some(Session {
                        client,
                        statements: HashMap::new(),
                    });
                    self.pause = RECONNECT_FIRST;
                }
                Err(e) => {
                    self.last_error = format!("cannot connect again: {}", error_detail(&e));
                    self.next_try = now + self.pause;
                    self.pause = (self.pause * 2).min(RECONNECT_MAX);
                    return Err(StoreError::Postgres {
                        store: String::new(),
                        detail: self.last_error.clone(),
                    });
                }
            }
        }
        Ok(self.session.as_mut().expect("a session was just made"))
    }
}

impl Conn {
    pub(crate) fn open(url: &PostgresUrl, application_name: &str) -> Result<Conn, StoreError> {
        let connect_error = |detail: String| StoreError::PostgresConnect {
            store: url.masked.clone(),
            detail: url.scrub(&detail),
        };
        let mut config = url.config()?;
        config.application_name(application_name);
        let tls = url.tls.connector().map_err(connect_error)?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(30));
        }
        let (work_tx, work_rx) = mpsc::channel::<Work>();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<(), String>>();
        let thread = std::thread::Builder::new()
            .name("flakestat-postgres".to_string())
            .spawn(move || {
                // A write waits for other writers' transactions as long as SQLite's does.
                let client = match connect(&config, &tls, crate::BUSY_TIMEOUT) {
                    Ok(client) => {
                        let _ = ready_tx.send(Ok(()));
                        client
                    }
                    Err(e) => {
                        let _ = ready_tx.send(Err(error_detail(&e)));
                        return;
                    }
                };
                let mut link = Link {
                    config,
                    tls,
                    session: Some(Session {
                        client,
                        statements: HashMap::new(),
                    }),
                    lock_timeout: crate::BUSY_TIMEOUT,
                    next_try: std::time::Instant::now(),
                    pause: RECONNECT_FIRST,
                    last_error: String::new(),
                    suspect: false,
                };
                while let Ok(work) = work_rx.recv() {
                    work(&mut link);
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

    /// How long a write waits for other writers' locks on this connection, kept for the
    /// connections made again after a loss.
    pub(crate) fn set_lock_timeout(&self, wait: Duration) -> Result<(), StoreError> {
        self.on_link(move |link| {
            link.lock_timeout = wait;
            let client = &mut link.session()?.client;
            Ok(client.batch_execute(&lock_timeout_sql(wait))?)
        })
    }

    /// Runs `f` with the connection, on its thread, and waits for its answer.
    pub(crate) fn call<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Client) -> Result<R, StoreError> + Send + 'static,
    ) -> Result<R, StoreError> {
        self.run(move |session| f(&mut session.client))
    }

    fn run<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Session) -> Result<R, StoreError> + Send + 'static,
    ) -> Result<R, StoreError> {
        self.on_link(move |link| link.session().and_then(f))
    }

    /// Runs `f` on the connection's thread and waits for its answer, the store named in it.
    fn on_link<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Link) -> Result<R, StoreError> + Send + 'static,
    ) -> Result<R, StoreError> {
        let (tx, rx) = mpsc::sync_channel(1);
        let gone = || StoreError::Postgres {
            store: self.url.masked.clone(),
            detail: "the connection to the server was lost".to_string(),
        };
        self.work
            .as_ref()
            .ok_or_else(gone)?
            .send(Box::new(move |link: &mut Link| {
                let done = f(link);
                link.suspect = matches!(done, Err(StoreError::Postgres { .. }));
                let _ = tx.send(done);
            }))
            .map_err(|_| gone())?;
        match rx.recv() {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(StoreError::Postgres { detail, .. })) => Err(StoreError::Postgres {
                store: self.url.masked.clone(),
                detail: self.url.scrub(&detail),
            }),
            Ok(Err(StoreError::Crossed { detail, .. })) => Err(StoreError::Crossed {
                store: self.url.masked.clone(),
                detail: self.url.scrub(&detail),
            }),
            Ok(Err(StoreError::Busy { waited, .. })) => Err(StoreError::Busy {
                store: self.url.masked.clone(),
                waited,
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

/// Each parameter as the type the server inferred for it: where `INTEGER`, `BIGINT` and
/// `BOOLEAN` columns meet the store's one integer.
impl ToSql for Value {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
        match self {
            Value::Null => Ok(IsNull::Yes),
            Value::Int(n) => match *ty {
                Type::BOOL => (*n != 0).to_sql(ty, out),
                Type::INT2 => i16::try_from(*n)?.to_sql(ty, out),
                Type::INT4 => i32::try_from(*n)?.to_sql(ty, out),
                _ => n.to_sql(ty, out),
            },
            Value::Text(s) => s.to_sql(ty, out),
            Value::Blob(b) => b.to_sql(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

fn refs(params: &[Value]) -> Vec<&(dyn ToSql + Sync)> {
    params.iter().map(|p| p as _).collect()
}

/// A row as plain values: integers of every width and booleans as `Int`.
fn decode(row: &postgres::Row) -> Result<Row, StoreError> {
    let mut values = Vec::with_capacity(row.len());
    for (i, column) in row.columns().iter().enumerate() {
        let int = |n: Option<i64>| n.map_or(Value::Null, Value::Int);
        values.push(match *column.type_() {
            Type::BOOL => int(row.try_get::<_, Option<bool>>(i)?.map(i64::from)),
            Type::INT2 => int(row.try_get::<_, Option<i16>>(i)?.map(i64::from)),
            Type::INT4 => int(row.try_get::<_, Option<i32>>(i)?.map(i64::from)),
            Type::INT8 => int(row.try_get::<_, Option<i64>>(i)?),
            Type::BYTEA => row
                .try_get::<_, Option<Vec<u8>>>(i)?
                .map_or(Value::Null, Value::Blob),
            _ => row
                .try_get::<_, Option<String>>(i)?
                .map_or(Value::Null, Value::Text),
        });
    }
    Ok(Row(values))
}

impl Db for Conn {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn execute(&self, sql: &str, params: &[Value]) -> Result<u64, StoreError> {
        let (sql, params) = (sql.to_string(), params.to_vec());
        self.run(move |session| {
            let statement = session.prepare(&sql)?;
            Ok(session.client.execute(&statement, &refs(&params))?)
        })
    }

    fn query(&self, sql: &str, params: &[Value]) -> Result<Vec<Row>, StoreError> {
        let (sql, params) = (sql.to_string(), params.to_vec());
        self.run(move |session| {
            let statement = session.prepare(&sql)?;
            let rows = session.client.query(&statement, &refs(&params))?;
            rows.iter().map(decode).collect()
        })
    }

    fn batch(&self, sql: &str) -> Result<(), StoreError> {
        let sql = sql.to_string();
        self.call(move |client| Ok(client.batch_execute(&sql)?))
    }

    #[cfg(test)]
    fn prepare_only(&self, sql: &str) -> Result<(), StoreError> {
        let sql = sql.to_string();
        self.run(move |session| session.prepare(&sql).map(drop))
    }
}

/// The PostgreSQL engine of `Store`: a connection whose tables are at `SCHEMA_VERSION`.
pub struct PgStore {
    pub(crate) conn: Conn,
}

impl fmt::Debug for PgStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PgStore")
            .field("url", &self.conn.url)
            .finish()
    }
}

impl PgStore {
    /// Connects to the server and brings its tables to `SCHEMA_VERSION`.
    pub fn open(url: &PostgresUrl) -> Result<PgStore, StoreError> {
        let conn = Conn::open(url, "flakestat")?;
        let store = url.masked.clone();
        crate::schema::migrate(&conn).map_err(|e| match e {
            StoreError::NotAStore { .. } => StoreError::PostgresNotAStore { store },
            StoreError::TooNew { found, known, .. } => StoreError::PostgresTooNew {
                store,
                found,
                known,
            },
            other => other,
        })?;
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
