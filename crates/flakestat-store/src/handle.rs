//! `StoreHandle`: the one way async code reaches the store. A write may wait up to
//! `BUSY_TIMEOUT` for another writer (a survey, a nightly and `serve` share one store), and a
//! tokio worker parked in SQLite stalls every HTTP exchange and timer on it. So the handle owns
//! a thread of its own ("flakestat-store"), fed by a channel: an async caller sends it a closure
//! over the store and awaits the answer, its worker free meanwhile ([`StoreHandle::run`]).
//! Synchronous code (a command's steps outside the runtime, a blocking task) calls
//! [`StoreHandle::blocking`] on its own thread instead; both take the one connection in turn.
//!
//! It lives in the store crate because every async caller needs it (the fetcher and `serve`,
//! which does not depend on the fetcher), and it names no runtime (the store uses no tokio): the
//! answer comes back over a runtime-agnostic oneshot channel.

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, JoinHandle};

use futures_channel::oneshot;

use super::Store;

type Work = Box<dyn FnOnce(&mut Store) + Send>;

/// The store, shared by a command's async tasks and its synchronous steps; cloning is cheap.
/// Dropping the last clone ends the store's thread and closes the store.
#[derive(Clone)]
pub struct StoreHandle {
    inner: Arc<Inner>,
}

struct Inner {
    store: Arc<Mutex<Store>>,
    work: Option<mpsc::Sender<Work>>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for StoreHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreHandle").finish_non_exhaustive()
    }
}

impl From<Store> for StoreHandle {
    fn from(store: Store) -> StoreHandle {
        StoreHandle::new(store)
    }
}

impl StoreHandle {
    /// Takes the store and starts its thread.
    pub fn new(store: Store) -> StoreHandle {
        let store = Arc::new(Mutex::new(store));
        let (work, queue) = mpsc::channel::<Work>();
        let shared = store.clone();
        let thread = thread::Builder::new()
            .name("flakestat-store".into())
            .spawn(move || {
                for work in queue {
                    work(&mut shared.lock().unwrap_or_else(PoisonError::into_inner));
                }
            })
            .expect("the store's thread starts");
        StoreHandle {
            inner: Arc::new(Inner {
                store,
                work: Some(work),
                thread: Some(thread),
            }),
        }
    }

    /// Runs `work` over the store on the store's thread and returns its answer; the caller's
    /// task waits, its thread does not. Work waits its turn behind the work sent before it; a
    /// caller that stops waiting (the future dropped) before its turn cancels it. A panic in
    /// `work` is re-raised here, as it was.
    pub async fn run<T, F>(&self, work: F) -> T
    where
        F: FnOnce(&mut Store) -> T + Send + 'static,
        T: Send + 'static,
    {
        let (answer, answered) = oneshot::channel();
        let work: Work = Box::new(move |store| {
            // A caller gone before its turn (its task cancelled: Ctrl-C, a timeout, a sibling's
            // error) wants nothing done, as a blocking task cancelled before it starts.
            if answer.is_canceled() {
                return;
            }
            let _ = answer.send(catch_unwind(AssertUnwindSafe(|| work(store))));
        });
        self.inner
            .work
            .as_ref()
            .expect("the store's thread runs while a handle exists")
            .send(work)
            .expect("the store's thread runs while a handle exists");
        match answered.await.expect("the store's thread answers") {
            Ok(done) => done,
            Err(panic) => resume_unwind(panic),
        }
    }

    /// Runs `work` over the store on this thread, waiting for the store's turn. For synchronous
    /// code only (never a runtime's worker: that is what [`StoreHandle::run`] is for).
    pub fn blocking<T>(&self, work: impl FnOnce(&mut Store) -> T) -> T {
        work(
            &mut self
                .inner
                .store
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Closing the channel ends the thread; waiting for it closes the store before the
        // caller goes on (a command exits, a test removes the folder).
        drop(self.work.take());
        if let Some(thread) = self.thread.take()
            && thread.thread().id() != thread::current().id()
        {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block_on<T>(future: impl std::future::Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap()
            .block_on(future)
    }

    #[test]
    fn run_and_blocking_reach_one_store() {
        let dir = tempfile::tempdir().unwrap();
        let handle = StoreHandle::new(Store::open(dir.path()).unwrap());
        let path = handle.blocking(|s| s.describe());
        let answered = block_on(handle.run(|s| s.describe()));
        assert_eq!(path, answered);
        assert!(answered.contains("flakestat.sqlite3"), "{answered}");
    }

    #[test]
    fn a_panic_in_run_reaches_the_caller_and_the_store_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let handle = StoreHandle::new(Store::open(dir.path()).unwrap());
        let h = handle.clone();
        let caught = catch_unwind(AssertUnwindSafe(|| {
            block_on(h.run(|_| -> () { panic!("in the store") }))
        }));
        let message = *caught.unwrap_err().downcast::<&str>().unwrap();
        assert_eq!(message, "in the store");
        assert!(block_on(handle.run(|s| s.describe())).contains("sqlite"));
    }

    #[test]
    fn work_whose_caller_stopped_waiting_is_not_done() {
        use std::sync::atomic::{AtomicBool, Ordering};
        let dir = tempfile::tempdir().unwrap();
        let handle = StoreHandle::new(Store::open(dir.path()).unwrap());
        // Synchronous code holds the store until told to let go.
        let (held_tx, held) = mpsc::channel();
        let (release, release_rx) = mpsc::channel::<()>();
        let holder = {
            let handle = handle.clone();
            thread::spawn(move || {
                handle.blocking(|_| {
                    held_tx.send(()).unwrap();
                    release_rx.recv().unwrap();
                })
            })
        };
        held.recv().unwrap();
        let done = Arc::new(AtomicBool::new(false));
        let flag = done.clone();
        let late = handle.run(move |_| flag.store(true, Ordering::SeqCst));
        let waited = block_on(async {
            tokio::time::timeout(std::time::Duration::from_millis(50), late).await
        });
        assert!(waited.is_err(), "the store was held");
        release.send(()).unwrap();
        holder.join().unwrap();
        // The store's thread has gone past the cancelled work once the next one answers.
        block_on(handle.run(|_| ()));
        assert!(!done.load(Ordering::SeqCst), "cancelled work was done");
    }
}
