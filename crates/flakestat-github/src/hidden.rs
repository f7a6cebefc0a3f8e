//! `--green-logs RATE`: the logs of a share of the green job executions in a survey's window,
//! downloaded like a failed job's (`GET …/actions/jobs/{id}/logs`, its redirect followed
//! without the token), checked to be the job's own execution, read for the tests the runner
//! retried to a pass (`signatures::testids::green`), and stored as that outcome only
//! (`store/hidden.rs`; the log too with `keep_logs`, in `green_logs`).
//!
//! Which jobs: those of the window's runs that succeeded, have no outcome yet, and fall in the
//! sample (`analysis::hidden::in_green_sample`: a hash of the job id against the rate, so a
//! repeat picks the same jobs and a higher rate adds to the lower one's). Each is asked once:
//! its outcome, whatever it is, is stored as it arrives, so a stopped survey resumes with the
//! jobs it had not reached. Once GitHub's limit stops a download no new one starts, those under
//! way are stored, and the error is returned (as `Ingest` does).

use super::FetchError;
use super::joblogs::{JobLog, spool_error};
use super::survey::Session;
use flakestat_core::analysis::hidden::in_green_sample;
use flakestat_core::model::{JobId, Repo, Timestamp};
use flakestat_core::signatures::testids::green::read_green_from;
use flakestat_store::{GreenRead, LogEntry, StoreHandle};

/// What `--green-logs` asks for one repository.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GreenLogs {
    /// The share of green job executions read, in `[0, 1]`; 0 reads none.
    pub rate: f64,
    /// Keep each log read (compressed, in `green_logs`) as well as its outcome.
    pub keep_logs: bool,
}

/// What reading green logs did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GreenLogsFetch {
    /// Green jobs of the window with no outcome yet.
    pub unread: u64,
    /// Of them, those in the sample.
    pub sampled: u64,
    /// `GET …/jobs/{id}/logs` requests made.
    pub requests: u64,
    /// Log bytes downloaded.
    pub bytes: u64,
    /// Logs read (their outcome stored).
    pub read: u64,
    /// Logs GitHub could not give (expired, missing, another execution's, refused).
    pub unavailable: u64,
    /// Logs read that named a test retried to a pass.
    pub with_retries: u64,
}

impl Session {
    /// Reads the sampled green logs of `repo`'s runs created in `[since, until)` that have no
    /// outcome yet; `summary` counts as it goes (right even when an error stops it).
    pub fn fetch_green_outcomes(
        &self,
        store: &StoreHandle,
        repo: &Repo,
        (since, until): (Timestamp, Timestamp),
        asked: GreenLogs,
        summary: &mut GreenLogsFetch,
    ) -> Result<(), FetchError> {
        if asked.rate <= 0.0 {
            return Ok(());
        }
        let unread = store.blocking(|s| s.green_jobs_unread(repo, since, until))?;
        summary.unread += unread.len() as u64;
        let todo: Vec<JobId> = unread
            .iter()
            .map(|j| j.id)
            .filter(|&j| in_green_sample(j, asked.rate))
            .collect();
        summary.sampled += todo.len() as u64;
        let keep = asked.keep_logs;
        let (downloads, done) = self.for_each_job_log(
            store,
            repo,
            todo,
            "a successful job, --green-logs",
            move |store, job, log| settle(store, job, log, keep),
            |read| match read {
                GreenRead::Read(o) => {
                    summary.read += 1;
                    summary.with_retries += u64::from(!o.retried.is_empty());
                }
                GreenRead::Gone(_) => summary.unavailable += 1,
            },
        );
        summary.requests += downloads.requests;
        summary.bytes += downloads.bytes;
        done
    }
}

/// A green log read as it streams, its outcome stored (and, with `keep`, the log itself); or
/// what became of it.
fn settle(
    store: &StoreHandle,
    job: JobId,
    log: JobLog,
    keep: bool,
) -> Result<GreenRead, FetchError> {
    let read = match log {
        JobLog::Own(mut body) => {
            let reader = body.reader().map_err(|e| spool_error(job, e))?;
            let outcome = read_green_from(std::io::BufReader::new(reader))
                .map_err(|e| spool_error(job, e))?;
            if keep {
                let log = body.compress().map_err(|e| spool_error(job, e))?;
                store.blocking(|s| s.store_green_log(job, &LogEntry::Stored(log)))?;
            }
            GreenRead::Read(outcome)
        }
        JobLog::Gone(status) => GreenRead::Gone(status),
    };
    store.blocking(|s| s.store_green_outcome(job, &read))?;
    Ok(read)
}
