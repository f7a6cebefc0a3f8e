//! Writers that get in each other's way, on a real server: a PostgreSQL deadlock undoes one of
//! the store's write transactions, which is then tried again (`CROSSED_TRIES` in all, then
//! `StoreError::Crossed`, exit 8); a write kept waiting past the busy timeout is
//! `StoreError::Busy` (exit 8) on either engine. Whatever ends a transaction, nothing of it is
//! left half-written and the connection is left ready for the next write.
//!
//! The deadlocks are real: a second connection locks two of the tables a store transaction
//! writes, in the opposite order, while the store's transaction waits between its statements
//! (`cross`). The timeouts are lowered on the tests' own connections (the store's
//! `BUSY_TIMEOUT` stays 30 s), so no test waits that long.

use std::time::{Duration, Instant};

use super::*;

/// A PostgreSQL store in a fresh schema holding run 1 of [`repo`], completed; its URL, the
/// server process of its connection, and the repository.
fn postgres_store_with_a_run(test: &str) -> Option<(Store, PostgresUrl, i32, Repo)> {
    let Some(url) = postgres_url() else {
        eprintln!("{test}: FLAKESTAT_TEST_POSTGRES is not set: skipped (.ci/postgres.sh start)");
        return None;
    };
    let url = PostgresUrl::parse(&url).unwrap();
    let mut store = Store::open_postgres(&url).unwrap();
    let pid = sql(&store, "SELECT pg_backend_pid()");
    let r = repo();
    store
        .store_runs(&r, &[run(1, "2026-06-15T10:00:00Z", 1, "completed")])
        .unwrap();
    Some((store, url, pid, r))
}

/// One value the store's own connection reads.
fn sql<T: for<'a> ::postgres::types::FromSql<'a> + Send + 'static>(
    store: &Store,
    query: &str,
) -> T {
    let query = query.to_string();
    store
        .postgres()
        .unwrap()
        .with_client(move |c| Ok(c.query_one(&query, &[])?.get(0)))
        .unwrap()
}

/// Statements on another connection of the test server (`batch_execute`).
fn batch(conn: &postgres::Conn, statements: &str) -> Result<(), StoreError> {
    let statements = statements.to_string();
    conn.call(move |c| Ok(c.batch_execute(&statements)?))
}

/// Runs `write` on `store` while another writer crosses it: that writer holds `second` (a table
/// the write changes after `first`), and each time the store's transaction, having written
/// `first`, waits for `second`, it asks for `first` — a deadlock, which PostgreSQL breaks by
/// undoing the store's transaction (its wait began first, so its deadlock check runs first and
/// finds the cycle). The other writer then lets `first` go again, keeping `second`, ready for the
/// next try; after `times` deadlocks it lets both go. Returns what `write` returned and how many
/// deadlocks the store's transaction met.
fn cross<R: Send>(
    store: &mut Store,
    url: &PostgresUrl,
    pid: i32,
    (first, second): (&str, &str),
    times: u32,
    write: impl FnOnce(&mut Store) -> R + Send,
) -> (R, u32) {
    std::thread::scope(|s| {
        // Inside the scope: should this thread panic, the connection closes before the scope
        // waits for the store's thread, which would otherwise wait for its locks for ever.
        let other = postgres::Conn::open(url, "crossing writer").unwrap();
        // Both waits would be checked for a deadlock a second after they began, a few
        // milliseconds apart: on a busy machine this connection's check could come first and
        // undo it instead. Its check comes much later (a superuser's setting; the test server's
        // user is one: elsewhere the race stays, and this test says so when it loses it).
        let _ = batch(&other, "SET deadlock_timeout = '20s'");
        batch(&other, &format!("BEGIN; LOCK TABLE {second} IN SHARE MODE")).unwrap();
        let waits = format!(
            "SELECT count(*) FROM pg_locks WHERE pid = {pid} AND NOT granted
               AND relation = '{second}'::regclass"
        );
        let writer = s.spawn(|| write(store));
        let mut crossed = 0;
        let started = Instant::now();
        while !writer.is_finished() {
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "the store's write neither ended nor waited for {second}"
            );
            let query = waits.clone();
            let waiting: i64 = other
                .call(move |c| Ok(c.query_one(&query, &[])?.get(0)))
                .unwrap();
            if crossed < times && waiting > 0 {
                // Returns once PostgreSQL has undone the store's transaction.
                batch(
                    &other,
                    &format!("SAVEPOINT crossing; LOCK TABLE {first} IN SHARE MODE"),
                )
                .expect("PostgreSQL undoes the store's transaction, not the crossing one");
                batch(&other, "ROLLBACK TO SAVEPOINT crossing").unwrap();
                crossed += 1;
                if crossed == times {
                    batch(&other, "ROLLBACK").unwrap();
                }
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        (writer.join().unwrap(), crossed)
    })
}

/// A log with its classification (`Tx::Write`: logs, classifications, then the job's plan
/// forgotten) that PostgreSQL undoes to break a deadlock with another writer is written again,
/// whole: the caller sees success and the rows are the ones it wrote.
#[test]
fn a_log_write_undone_by_a_postgres_deadlock_is_tried_again_and_stored_whole() {
    let Some((mut store, url, pid, r)) = postgres_store_with_a_run("deadlock retried") else {
        return;
    };
    store
        .store_jobs(RunId(1), 1, true, &[job(10, 1, 1, "failure")])
        .unwrap();
    store
        .store_logs("fp", &[], &[(JobId(10), LogPlan::Job)])
        .unwrap();

    let classification = hit("nccl-timeout");
    let (stored, crossed) = cross(&mut store, &url, pid, ("logs", "log_plans"), 1, |store| {
        store.store_log(
            JobId(10),
            &LogEntry::Stored(compress_log(b"NCCL timeout\n")),
            Some(("fp", &classification)),
        )
    });
    assert_eq!(crossed, 1, "the store's transaction met one deadlock");
    stored.expect("a deadlock is tried again, not returned");

    assert_eq!(
        store.load_log(JobId(10)).unwrap().as_deref(),
        Some(&b"NCCL timeout\n"[..])
    );
    let classifications: i64 = sql(
        &store,
        "SELECT count(*) FROM classifications WHERE job_id = 10 AND fingerprint = 'fp' AND matched",
    );
    assert_eq!(classifications, 1);
    assert!(store.load_log_plans(&[JobId(10)]).unwrap().is_empty());
    assert_eq!(store.counts(&r).unwrap().logs_stored, 1);
}

/// A read-modify-write (`Tx::Serial`: `store_jobs` reads the run, writes its jobs, then marks
/// the run) that meets a deadlock on every try gives up after `CROSSED_TRIES` tries, exactly,
/// with `StoreError::Crossed` (exit 8), and leaves nothing of any try behind: no job, no mark,
/// no lock (another connection's serial write goes through at once).
#[test]
fn a_write_that_deadlocks_on_every_try_gives_up_after_crossed_tries_leaving_nothing_written() {
    let Some((mut store, url, pid, _)) = postgres_store_with_a_run("deadlock on every try") else {
        return;
    };
    let jobs = [job(10, 1, 1, "failure"), job(11, 1, 1, "success")];

    let (stored, crossed) = cross(
        &mut store,
        &url,
        pid,
        ("jobs", "runs"),
        CROSSED_TRIES + 2,
        |store| store.store_jobs(RunId(1), 1, true, &jobs),
    );
    let err = stored.expect_err("a deadlock on every try is returned");
    assert!(matches!(err, StoreError::Crossed { .. }), "{err}");
    let text = err.to_string();
    assert!(text.contains("(SQLSTATE 40P01)"), "{text}");
    assert!(text.contains(url.masked()), "{text}");
    assert_eq!(crossed, CROSSED_TRIES, "tries before giving up");

    assert!(store.load_run_jobs(RunId(1)).unwrap().is_empty());
    let marked: Option<i32> = sql(&store, "SELECT jobs_attempt FROM runs WHERE id = 1");
    assert_eq!(marked, None);
    let mut another = Store::open_postgres(&url).unwrap();
    let state: String = sql(
        &another,
        &format!("SELECT state FROM pg_stat_activity WHERE pid = {pid}"),
    );
    assert_eq!(
        state, "idle",
        "no transaction left open on the store's connection"
    );
    sql::<String>(&another, "SELECT set_config('lock_timeout', '2s', false)");
    another.store_jobs(RunId(1), 1, true, &jobs).unwrap();
    assert_eq!(store.load_run_jobs(RunId(1)).unwrap().len(), 2);
}

/// PostgreSQL: a serial write (`Tx::Serial`) that waited out the lock timeout for the
/// serialising lock (held by another writer's transaction) is `StoreError::Busy`, and the
/// connection is left ready: the next writes go through. (Its `BEGIN` takes that lock; a wait
/// that timed out there used to leave the connection inside a failed transaction, so every later
/// serial write failed with "current transaction is aborted".)
#[test]
fn a_serial_write_that_timed_out_for_the_lock_is_busy_and_the_store_goes_on() {
    let Some((mut store, url, _, r)) = postgres_store_with_a_run("serial write busy") else {
        return;
    };
    sql::<String>(&store, "SELECT set_config('lock_timeout', '200ms', false)");
    let holder = postgres::Conn::open(&url, "holder").unwrap();
    batch(
        &holder,
        "BEGIN; SELECT pg_advisory_xact_lock(1179405143, 0)",
    )
    .unwrap();

    let jobs = [job(10, 1, 1, "failure")];
    let err = store.store_jobs(RunId(1), 1, true, &jobs).unwrap_err();
    assert!(matches!(err, StoreError::Busy { .. }), "{err}");
    assert!(err.to_string().contains(url.masked()), "{err}");
    batch(&holder, "ROLLBACK").unwrap();
    // The lock is the database's: other tests' serial writes may hold it a while.
    sql::<String>(&store, "SELECT set_config('lock_timeout', '30s', false)");

    for _ in 0..2 {
        store.store_jobs(RunId(1), 1, true, &jobs).unwrap();
    }
    store
        .store_window(
            &r,
            "all",
            &ListedWindow {
                since: t("2026-06-15T00:00:00Z"),
                until: t("2026-06-16T00:00:00Z"),
                runs: 1,
            },
        )
        .unwrap();
    assert_eq!(store.load_run_jobs(RunId(1)).unwrap().len(), 1);
}

/// SQLite: a write kept waiting past the busy timeout by another connection's write
/// transaction is `StoreError::Busy` (naming the store and the 30 s a write waits), nothing of
/// it is written, no transaction is left open, and the store takes the next write once the
/// other is done. (The timeout is lowered on this test's connection; `snapshot_errors` shows the same
/// through the binary with the real 30 s.)
#[test]
fn a_sqlite_write_kept_waiting_past_the_busy_timeout_is_busy_and_leaves_nothing() {
    let (_dir, mut store) = open();
    store.set_busy_timeout(Duration::from_millis(200)).unwrap();
    let path_of_store = store.sqlite().unwrap().path().to_path_buf();
    let other = rusqlite::Connection::open(&path_of_store).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    let r = repo();
    let runs = [run(1, "2026-06-15T10:00:00Z", 1, "completed")];

    let started = Instant::now();
    let err = store.store_runs(&r, &runs).unwrap_err();
    let waited = started.elapsed();
    match &err {
        StoreError::Busy {
            store: path,
            waited,
        } => {
            assert_eq!(Path::new(path), path_of_store);
            assert_eq!(*waited, BUSY_TIMEOUT.as_secs());
        }
        other => panic!("not Busy: {other}"),
    }
    assert!(waited >= Duration::from_millis(200), "{waited:?}");
    assert!(
        store.sqlite().unwrap().conn.is_autocommit(),
        "no transaction left open on the store's connection"
    );
    other.execute_batch("ROLLBACK").unwrap();

    assert_eq!(store.counts(&r).unwrap().runs, 0);
    assert_eq!(store.store_runs(&r, &runs).unwrap(), vec![RunId(1)]);
    assert_eq!(store.counts(&r).unwrap().runs, 1);
}
