//! The one task executor of the fetcher: the survey's tasks (listing windows, run ingests) and an
//! ingest's steps (log and archive downloads, artifacts) both run through [`perform_all`].
//!
//! Work uncovers work (a listed window its runs, an archive the jobs it lacked), so tasks wait in
//! a queue of plain values and only a few are futures at a time: memory does not grow with the
//! number of runs. GitHub's limit (`is_stop`) is not an error like the others: it stops the
//! batch ([`Stop`]), no task starts after it, those under way end (the API refuses them at once;
//! downloads redirected to the log host finish and are stored), what they uncover is left for the
//! next batch (the store knows it), and the stop is returned. Any other error stops the others at
//! once and is returned.

use std::collections::VecDeque;
use std::future::Future;

use tokio::task::JoinSet;

use super::FetchError;
use super::ingest::is_stop;

/// Whether GitHub's limit stopped the batch, and how it is told a task met the limit.
pub(crate) trait Stop {
    fn stopping(&self) -> bool;
    /// Marks the batch stopped (once).
    fn begin_stop(&self);
}

/// Performs `tasks` and every task they uncover, at most `in_flight` at once, in the order they
/// were queued: `start` makes a task's future, `done` takes what a finished one returns and
/// gives back the tasks it uncovered (dropped once the batch is stopping). See the module's doc
/// for a stop and an error. A panic in a task is re-raised here, as it was.
pub(crate) async fn perform_all<T, O, F>(
    tasks: Vec<T>,
    in_flight: usize,
    stop: &(impl Stop + Sync),
    mut start: impl FnMut(T) -> F,
    mut done: impl FnMut(O) -> Vec<T>,
) -> Result<(), FetchError>
where
    F: Future<Output = Result<O, FetchError>> + Send + 'static,
    O: Send + 'static,
{
    let mut queue: VecDeque<T> = tasks.into();
    let mut set: JoinSet<Result<O, FetchError>> = JoinSet::new();
    let mut stopped: Option<FetchError> = None;
    loop {
        while !stop.stopping()
            && set.len() < in_flight
            && let Some(task) = queue.pop_front()
        {
            set.spawn(start(task));
        }
        let Some(joined) = set.join_next().await else {
            break;
        };
        let finished = match joined {
            Ok(finished) => finished,
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            // Cancelled: the runtime is shutting down (Ctrl-C).
            Err(_) => Err(FetchError::Interrupted),
        };
        match finished {
            Ok(output) => {
                let more = done(output);
                if !stop.stopping() {
                    queue.extend(more);
                }
            }
            Err(err) if is_stop(&err) => {
                stop.begin_stop();
                stopped.get_or_insert(err);
            }
            Err(err) => {
                set.abort_all();
                while set.join_next().await.is_some() {}
                return Err(err);
            }
        }
    }
    stopped.map_or(Ok(()), Err)
}
