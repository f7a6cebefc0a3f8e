//! The logs of a sample of *successful* jobs, for `signatures audit --green-sample`: each one
//! downloaded like a failed job's (`GET …/actions/jobs/{id}/logs`, whose 302 to the log host is
//! followed without the token), checked to be its job's own execution, compressed, and kept in
//! the store's `green_logs` (never among failure logs: `store/green.rs`).
//!
//! The caller (`cli`) picks the jobs (`analysis::green::green_sample`); this file only asks
//! GitHub for those the store has no outcome for yet, at most one request each
//! (`joblogs.rs`), and counts them.

use super::FetchError;
use super::joblogs::{Asking, JobLog, spool_error};
use super::store_error;
use super::survey::Session;
use flakestat_core::model::{JobId, LogStatus, Repo};
use flakestat_store::{LogEntry, StoreHandle};

/// What fetching a green sample did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GreenFetch {
    /// Jobs whose log outcome the store already held: no request.
    pub known: u64,
    /// `GET …/jobs/{id}/logs` requests made (each at most one redirect chain to the log host).
    pub requests: u64,
    /// Logs downloaded and stored.
    pub stored: u64,
    /// Logs GitHub could not give (expired, missing, another execution's, refused redirect).
    pub unavailable: u64,
}

impl Session {
    /// Downloads the green logs of `jobs` the store has no outcome for, concurrently within the
    /// client's limit, storing each as it arrives; `summary` counts as it goes, so it is right
    /// even when an error stops the sample half-way (what was stored stays stored).
    pub fn fetch_green_logs(
        &self,
        store: &StoreHandle,
        repo: &Repo,
        jobs: &[JobId],
        summary: &mut GreenFetch,
    ) -> Result<(), FetchError> {
        let known = store
            .blocking(|s| s.green_log_statuses(jobs))
            .map_err(store_error)?;
        summary.known += known.len() as u64;
        let todo: Vec<JobId> = jobs
            .iter()
            .copied()
            .filter(|j| !known.contains_key(j))
            .collect();
        let (downloads, done) = self.for_each_job_log(
            store,
            repo,
            todo,
            Asking {
                what: "a successful job, sampled",
                archives: false,
            },
            settle,
            |stored| {
                if stored {
                    summary.stored += 1;
                } else {
                    summary.unavailable += 1;
                }
            },
        );
        summary.requests += downloads.requests;
        done
    }
}

/// A green log kept as it came: compressed (read as it streams), or what became of it; whether
/// it was stored.
fn settle(store: &StoreHandle, job: JobId, log: JobLog) -> Result<bool, FetchError> {
    let entry = match log {
        JobLog::Own(mut body) => {
            LogEntry::Stored(body.compress().map_err(|e| spool_error(job, e))?)
        }
        JobLog::Gone(LogStatus::Expired) => LogEntry::Expired,
        JobLog::Gone(LogStatus::Mismatched) => LogEntry::Mismatched,
        JobLog::Gone(LogStatus::Unavailable) => LogEntry::Unavailable,
        JobLog::Gone(_) => LogEntry::Missing,
    };
    let stored = matches!(entry, LogEntry::Stored(_));
    store
        .blocking(|s| s.store_green_log(job, &entry))
        .map_err(store_error)?;
    Ok(stored)
}
