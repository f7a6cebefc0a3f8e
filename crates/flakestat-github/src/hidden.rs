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

use std::io::{Read, Seek};

use http::StatusCode;
use tokio::task::JoinSet;

use super::FetchError;
use super::archive::is_own_log;
use super::spool::LogBody;
use super::survey::{Session, encode, unexpected};
use flakestat_core::analysis::hidden::in_green_sample;
use flakestat_core::model::{JobId, LogStatus, Repo, Timestamp};
use flakestat_core::signatures::testids::green::read_green;
use flakestat_store::{GreenRead, LogEntry, StoreHandle, compress_log};

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
        let client = self.client.clone();
        let base = format!(
            "/repos/{}/{}/actions/jobs",
            encode(&repo.owner),
            encode(&repo.name)
        );
        self.runtime.block_on(async {
            let mut set = JoinSet::new();
            let mut queue = todo.into_iter();
            let mut stop: Option<FetchError> = None;
            loop {
                while stop.is_none()
                    && set.len() < client.concurrency()
                    && let Some(job) = queue.next()
                {
                    let client = client.clone();
                    let url = client.url(&format!("{base}/{job}/logs"));
                    summary.requests += 1;
                    set.spawn(async move {
                        let what = format!("job {job}'s log (a successful job, --green-logs)");
                        let blob = match client.fetch_blob(&url, &what).await {
                            Ok(blob) => blob,
                            Err(FetchError::Unavailable(_)) => {
                                return Ok((job, None, LogStatus::Unavailable));
                            }
                            Err(e) => return Err(e),
                        };
                        let (response, body) = LogBody::of(blob);
                        match response.status {
                            StatusCode::OK => {
                                client.note_log(body.len());
                                Ok((job, Some(body), LogStatus::Stored))
                            }
                            StatusCode::GONE => Ok((job, None, LogStatus::Expired)),
                            StatusCode::NOT_FOUND => Ok((job, None, LogStatus::Missing)),
                            _ => Err(unexpected(&url, &response)),
                        }
                    });
                }
                let Some(joined) = set.join_next().await else {
                    break;
                };
                let (job, body, status) = match joined.expect("green log tasks do not panic") {
                    Ok(done) => done,
                    Err(e) => {
                        // The first error stops new downloads; those under way are stored.
                        stop.get_or_insert(e);
                        continue;
                    }
                };
                let read = match body {
                    Some(body) => {
                        summary.bytes += body.len();
                        let store = store.clone();
                        let keep = asked.keep_logs;
                        super::blocking(move || settle(&store, job, body, keep)).await?
                    }
                    None => GreenRead::Gone(status),
                };
                match &read {
                    GreenRead::Read(o) => {
                        summary.read += 1;
                        summary.with_retries += u64::from(!o.retried.is_empty());
                    }
                    GreenRead::Gone(_) => summary.unavailable += 1,
                }
                store
                    .run(move |s| s.store_green_outcome(job, &read))
                    .await?;
            }
            match stop {
                Some(e) => Err(e),
                None => Ok(()),
            }
        })
    }
}

/// A downloaded green log read: its outcome, or `Mismatched` when its timestamps show another
/// execution of the job (never taken as this job's). With `keep`, the log is stored too.
fn settle(
    store: &StoreHandle,
    job: JobId,
    mut body: LogBody,
    keep: bool,
) -> Result<GreenRead, FetchError> {
    let spool_error = |e: std::io::Error| {
        FetchError::Spool(format!(
            "cannot read job {job}'s log back from its temporary file: {e}"
        ))
    };
    let (model, run_jobs) = store.blocking(|store| {
        let model = store.load_job(job)?;
        let run_jobs = match &model {
            Some(m) => store.load_run_jobs(m.run_id)?,
            None => Vec::new(),
        };
        Ok::<_, FetchError>((model, run_jobs))
    })?;
    if let Some(model) = model {
        let span = body.span().map_err(spool_error)?;
        if !is_own_log(span, &model, &run_jobs) {
            return Ok(GreenRead::Gone(LogStatus::Mismatched));
        }
    }
    let bytes = match body {
        LogBody::Memory(bytes) => bytes,
        LogBody::Spooled(mut file, _) => {
            file.rewind().map_err(spool_error)?;
            let mut bytes = Vec::new();
            file.read_to_end(&mut bytes).map_err(spool_error)?;
            bytes
        }
    };
    let outcome = read_green(&String::from_utf8_lossy(&bytes));
    if keep {
        store.blocking(|s| s.store_green_log(job, &LogEntry::Stored(compress_log(&bytes))))?;
    }
    Ok(GreenRead::Read(outcome))
}
