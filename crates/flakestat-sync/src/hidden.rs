//! `--green-logs RATE`: the logs of a share of the green job executions in a survey's window,
//! downloaded like a failed job's (`GET …/actions/jobs/{id}/logs`, its redirect followed
//! without the token), checked to be the job's own execution, read for the tests the runner
//! retried to a pass (`signatures::testids::green`), and stored as that outcome only
//! (`store/hidden.rs`; the log too with `keep_logs`, in `green_logs`).
//!
//! Which jobs: those of the window's runs that succeeded, have no outcome yet, and fall in the
//! sample (`analysis::hidden::in_green_sample`: a hash of the job id against the rate, so a
//! repeat picks the same jobs and a higher rate adds to the lower one's). A workflow none of
//! whose runs in the window failed or was re-run has no jobs listed by the survey
//! (`Run::needs_workflow_jobs`): its runs are sampled instead (`in_green_run_sample`, the same
//! hash of the run id), the jobs of the sampled green ones listed (one jobs page each, through
//! `Ingest`, only with [`Session::fetch_green_outcomes_listing_quiet`]) and every green job of
//! theirs read, so the share of their green jobs read is the rate too. Several sampled jobs of
//! one attempt come through the attempt's archive when that is cheaper (`joblogs.rs`). Each is
//! asked once:
//! its outcome, whatever it is, is stored as it arrives, so a stopped survey resumes with the
//! jobs it had not reached. Once GitHub's limit stops a download no new one starts, those under
//! way are stored, and the error is returned (as `Ingest` does).

use std::collections::HashSet;
use std::sync::Arc;

use futures_util::StreamExt;

use super::FetchError;
use super::ingest::{Ingest, RunAttempt};
use super::joblogs::{Asking, JobLog, spool_error};
use super::store_error;
use super::survey::Session;
use flakestat_core::analysis::hidden::{in_green_run_sample, in_green_sample};
use flakestat_core::model::{Conclusion, JobId, Repo, RunId, Timestamp};
use flakestat_core::signatures::Classifier;
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
    /// `GET …/jobs/{id}/logs` and attempt archive requests made.
    pub requests: u64,
    /// Of them, attempt archives (several sampled jobs of one attempt in one request).
    pub archives: u64,
    /// Log bytes downloaded.
    pub bytes: u64,
    /// Logs read (their outcome stored).
    pub read: u64,
    /// Logs GitHub could not give (expired, missing, another execution's, refused).
    pub unavailable: u64,
    /// Logs read that named a test retried to a pass.
    pub with_retries: u64,
    /// Sampled green runs of workflows that never failed in the window whose jobs were listed.
    pub quiet_runs_listed: u64,
    /// The jobs pages those listings took (not in `requests`).
    pub jobs_requests: u64,
}

impl Session {
    /// Reads the sampled green logs of `repo`'s runs created in `[since, until)` that have no
    /// outcome yet; `summary` counts as it goes (right even when an error stops it). Each job is
    /// sampled by its own id and no jobs are listed: those a caller stored are read (`serve`
    /// stores every delivered run's).
    pub fn fetch_green_outcomes(
        &self,
        store: &StoreHandle,
        repo: &Repo,
        window: (Timestamp, Timestamp),
        asked: GreenLogs,
        summary: &mut GreenLogsFetch,
    ) -> Result<(), FetchError> {
        self.read_green_outcomes(store, None, repo, window, asked, summary)
    }

    /// [`fetch_green_outcomes`](Self::fetch_green_outcomes) after listing the jobs of the
    /// sampled green runs of the window's never-failing workflows (a survey lists none for
    /// them), classifying any failed job's log among them with `classifier` as a survey would.
    pub fn fetch_green_outcomes_listing_quiet(
        &self,
        store: &StoreHandle,
        classifier: Arc<dyn Classifier>,
        repo: &Repo,
        window: (Timestamp, Timestamp),
        asked: GreenLogs,
        summary: &mut GreenLogsFetch,
    ) -> Result<(), FetchError> {
        self.read_green_outcomes(store, Some(classifier), repo, window, asked, summary)
    }

    fn read_green_outcomes(
        &self,
        store: &StoreHandle,
        classifier: Option<Arc<dyn Classifier>>,
        repo: &Repo,
        (since, until): (Timestamp, Timestamp),
        asked: GreenLogs,
        summary: &mut GreenLogsFetch,
    ) -> Result<(), FetchError> {
        if asked.rate <= 0.0 {
            return Ok(());
        }
        let quiet =
            self.list_quiet_sample(store, classifier, repo, (since, until), asked.rate, summary)?;
        let unread = store
            .blocking(|s| s.green_jobs_unread(repo, since, until))
            .map_err(store_error)?;
        summary.unread += unread.len() as u64;
        let todo: Vec<JobId> = unread
            .iter()
            .filter(|j| {
                if quiet.contains(&j.run_id) {
                    in_green_run_sample(j.run_id, asked.rate)
                } else {
                    in_green_sample(j.id, asked.rate)
                }
            })
            .map(|j| j.id)
            .collect();
        summary.sampled += todo.len() as u64;
        let keep = asked.keep_logs;
        let (downloads, done) = self.for_each_job_log(
            store,
            repo,
            todo,
            Asking {
                what: "a successful job, --green-logs",
                archives: true,
            },
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
        summary.archives += downloads.archives;
        summary.bytes += downloads.bytes;
        done
    }
}

impl Session {
    /// With `classifier`, the runs of the window's never-failing workflows
    /// (`Store::quiet_window_runs`), whose green jobs are sampled by run, the jobs of the sampled
    /// completed green ones not listed yet listed first (concurrently within the client's
    /// limit), so a hidden flake in a workflow that never fails is found too; without, none.
    fn list_quiet_sample(
        &self,
        store: &StoreHandle,
        classifier: Option<Arc<dyn Classifier>>,
        repo: &Repo,
        (since, until): (Timestamp, Timestamp),
        rate: f64,
        summary: &mut GreenLogsFetch,
    ) -> Result<HashSet<RunId>, FetchError> {
        // Without a listing (`serve` after a delivery, whose window is the run's creation
        // second: any workflow looks quiet there) every job is sampled by its own id.
        let Some(classifier) = classifier else {
            return Ok(HashSet::new());
        };
        let quiet = store
            .blocking(|s| s.quiet_window_runs(repo, since, until))
            .map_err(store_error)?;
        let ids: HashSet<RunId> = quiet.iter().map(|(r, _)| r.id).collect();
        let todo: Vec<RunAttempt> = quiet
            .iter()
            .filter(|(r, listed)| {
                !listed
                    && r.is_completed()
                    && r.conclusion == Some(Conclusion::Success)
                    && in_green_run_sample(r.id, rate)
            })
            .map(|(r, _)| RunAttempt::of(r))
            .collect();
        if todo.is_empty() {
            return Ok(ids);
        }
        let ingest = Ingest::new(
            self.client.clone(),
            store.clone(),
            classifier,
            self.progress.clone(),
            repo.clone(),
        );
        let listed = self.runtime.block_on(async {
            let mut pending = futures_util::stream::iter(todo)
                .map(|attempt| ingest.ingest(attempt))
                .buffer_unordered(self.client.concurrency());
            while let Some(done) = pending.next().await {
                done?;
                summary.quiet_runs_listed += 1;
            }
            Ok::<_, FetchError>(())
        });
        summary.jobs_requests += ingest.cost().jobs.made;
        listed.map(|()| ids)
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
                store
                    .blocking(|s| s.store_green_log(job, &LogEntry::Stored(log)))
                    .map_err(store_error)?;
            }
            GreenRead::Read(outcome)
        }
        JobLog::Gone(status) => GreenRead::Gone(status),
    };
    store
        .blocking(|s| s.store_green_outcome(job, &read))
        .map_err(store_error)?;
    Ok(read)
}
