//! Another writer holding a SQLite store's write lock, as a second process would: the tests of
//! what serve and the survey do meanwhile.

use std::path::PathBuf;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A connection of its own holding `BEGIN IMMEDIATE` on a store for a while, on its thread.
pub struct HeldWriteLock {
    /// When the lock was taken.
    pub taken: Instant,
    thread: JoinHandle<Instant>,
}

impl HeldWriteLock {
    /// Takes the write lock of the SQLite database `db` (waiting up to a minute for a write
    /// already under way, as a careful second writer would) and holds it for `hold`; returns
    /// once it is taken.
    pub fn hold(db: PathBuf, hold: Duration) -> HeldWriteLock {
        let (taken_tx, taken) = mpsc::channel();
        let thread = std::thread::spawn(move || {
            let conn = rusqlite::Connection::open(&db).unwrap();
            conn.busy_timeout(Duration::from_secs(60)).unwrap();
            conn.execute_batch("BEGIN IMMEDIATE").unwrap();
            taken_tx.send(Instant::now()).unwrap();
            std::thread::sleep(hold);
            let released = Instant::now();
            conn.execute_batch("COMMIT").unwrap();
            released
        });
        let taken = taken
            .recv()
            .expect("the lock holder took the lock (it panicked otherwise)");
        HeldWriteLock { taken, thread }
    }

    /// Waits for the lock to be let go; returns when it was.
    pub fn released(self) -> Instant {
        self.thread.join().expect("the lock holder ended well")
    }
}
