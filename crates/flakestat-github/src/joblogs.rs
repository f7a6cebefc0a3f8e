//! The logs of jobs chosen by id (a sample of successful jobs: `signatures audit
//! --green-sample`'s, `--green-logs`'), each downloaded on its own (`GET
//! …/actions/jobs/{id}/logs`, its redirect to the log host followed without the token),
//! concurrently within the client's limit, checked to be the job's own execution, and handed to
//! the caller's closure as it arrives, on a blocking thread, in memory or spooled to a file (the
//! closure reads it as it streams: a large log is never held whole).
//!
//! Once GitHub's limit (or any other error of a download) stops one, no new download starts,
//! those under way are handed over, and the first error is returned, as `Ingest` does; an error
//! of the closure returns at once.

use std::sync::Arc;

use http::StatusCode;
use tokio::task::JoinSet;

use super::FetchError;
use super::archive::is_own_log;
use super::spool::LogBody;
use super::survey::{Session, encode, unexpected};
use flakestat_core::model::{JobId, LogStatus, Repo};
use flakestat_store::StoreHandle;

/// One job's log, as the closure gets it.
pub(super) enum JobLog {
    /// The job's own log (its timestamps fit its execution, or it has none).
    Own(LogBody),
    /// Not had: `Expired` (410), `Missing` (404), `Mismatched` (another execution's log) or
    /// `Unavailable` (a redirect not followed).
    Gone(LogStatus),
}

/// What the downloads cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Downloads {
    /// `GET …/jobs/{id}/logs` requests made.
    pub requests: u64,
    /// Log bytes downloaded (of the logs GitHub gave).
    pub bytes: u64,
}

impl Session {
    /// Downloads the logs of `jobs` (`what`: what they are, for errors, as in "job N's log
    /// (`what`)") and hands each to `settle` on a blocking thread (which stores what it makes of
    /// it); `tally` gets each result on the caller's side. Returns what the downloads cost
    /// (right even when an error stopped them half-way) and how they ended.
    pub(super) fn for_each_job_log<R, S>(
        &self,
        store: &StoreHandle,
        repo: &Repo,
        jobs: Vec<JobId>,
        what: &'static str,
        settle: S,
        mut tally: impl FnMut(R),
    ) -> (Downloads, Result<(), FetchError>)
    where
        R: Send + 'static,
        S: Fn(&StoreHandle, JobId, JobLog) -> Result<R, FetchError> + Send + Sync + 'static,
    {
        let client = self.client.clone();
        let settle = Arc::new(settle);
        let base = format!(
            "/repos/{}/{}/actions/jobs",
            encode(&repo.owner),
            encode(&repo.name)
        );
        let mut counts = Downloads::default();
        let done = self.runtime.block_on(async {
            let mut set = JoinSet::new();
            let mut queue = jobs.into_iter();
            let mut stop: Option<FetchError> = None;
            loop {
                while stop.is_none()
                    && set.len() < client.concurrency()
                    && let Some(job) = queue.next()
                {
                    let client = client.clone();
                    let url = client.url(&format!("{base}/{job}/logs"));
                    counts.requests += 1;
                    set.spawn(async move {
                        let what = format!("job {job}'s log ({what})");
                        let blob = match client.fetch_blob(&url, &what).await {
                            Ok(blob) => blob,
                            Err(FetchError::Unavailable(_)) => {
                                return Ok((job, Err(LogStatus::Unavailable)));
                            }
                            Err(e) => return Err(e),
                        };
                        let (response, body) = LogBody::of(blob);
                        match response.status {
                            StatusCode::OK => {
                                client.note_log(body.len());
                                Ok((job, Ok(body)))
                            }
                            StatusCode::GONE => Ok((job, Err(LogStatus::Expired))),
                            StatusCode::NOT_FOUND => Ok((job, Err(LogStatus::Missing))),
                            _ => Err(unexpected(&url, &response)),
                        }
                    });
                }
                let Some(joined) = set.join_next().await else {
                    break;
                };
                let (job, fetched) = match joined.expect("job log tasks do not panic") {
                    Ok(done) => done,
                    Err(e) => {
                        // The first error stops new downloads; those under way are handed over.
                        stop.get_or_insert(e);
                        continue;
                    }
                };
                if let Ok(body) = &fetched {
                    counts.bytes += body.len();
                }
                let store = store.clone();
                let settle = settle.clone();
                let done = super::blocking(move || {
                    let log = match fetched {
                        Ok(body) => own(&store, job, body)?,
                        Err(status) => JobLog::Gone(status),
                    };
                    settle(&store, job, log)
                })
                .await?;
                tally(done);
            }
            match stop {
                Some(e) => Err(e),
                None => Ok(()),
            }
        });
        (counts, done)
    }
}

/// A downloaded log as the job's own, or `Gone(Mismatched)` when its timestamps show another
/// execution of the job (GitHub answers an earlier attempt's job id with the latest attempt's
/// log): never taken as this job's.
fn own(store: &StoreHandle, job: JobId, mut body: LogBody) -> Result<JobLog, FetchError> {
    let (model, run_jobs) = store.blocking(|store| {
        let model = store.load_job(job)?;
        let run_jobs = match &model {
            Some(m) => store.load_run_jobs(m.run_id)?,
            None => Vec::new(),
        };
        Ok::<_, FetchError>((model, run_jobs))
    })?;
    if let Some(model) = model {
        let span = body.span().map_err(|e| spool_error(job, e))?;
        if !is_own_log(span, &model, &run_jobs) {
            return Ok(JobLog::Gone(LogStatus::Mismatched));
        }
    }
    Ok(JobLog::Own(body))
}

/// A spooled log that could not be read back.
pub(super) fn spool_error(job: JobId, e: std::io::Error) -> FetchError {
    FetchError::Spool(format!(
        "cannot read job {job}'s log back from its temporary file: {e}"
    ))
}
