//! The logs of a sample of *successful* jobs, for `signatures audit --green-sample`: each one
//! downloaded like a failed job's (`GET …/actions/jobs/{id}/logs`, whose 302 to the log host is
//! followed without the token), checked to be its job's own execution, compressed, and kept in
//! the store's `green_logs` (never among failure logs: `store/green.rs`).
//!
//! The caller (`cli`) picks the jobs (`analysis::green::green_sample`); this file only asks
//! GitHub for those the store has no outcome for yet, at most one request each, and counts them.

use std::io::Seek;

use http::StatusCode;
use tokio::task::JoinSet;

use super::FetchError;
use super::archive::is_own_log;
use super::spool::LogBody;
use super::survey::{Session, encode, unexpected};
use flakestat_core::model::{JobId, Repo};
use flakestat_store::{LogEntry, StoreHandle, compress_log, compress_log_reader};

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
        let known = store.blocking(|s| s.green_log_statuses(jobs))?;
        summary.known += known.len() as u64;
        let todo: Vec<JobId> = jobs
            .iter()
            .copied()
            .filter(|j| !known.contains_key(j))
            .collect();
        let client = self.client.clone();
        let base = format!(
            "/repos/{}/{}/actions/jobs",
            encode(&repo.owner),
            encode(&repo.name)
        );
        self.runtime.block_on(async {
            let mut set = JoinSet::new();
            let mut queue = todo.into_iter();
            loop {
                while set.len() < client.concurrency()
                    && let Some(job) = queue.next()
                {
                    let client = client.clone();
                    let url = client.url(&format!("{base}/{job}/logs"));
                    summary.requests += 1;
                    set.spawn(async move {
                        let what = format!("job {job}'s log (a successful job, sampled)");
                        let blob = match client.fetch_blob(&url, &what).await {
                            Ok(blob) => blob,
                            Err(FetchError::Unavailable(_)) => {
                                return Ok((job, None, Some(LogEntry::Unavailable)));
                            }
                            Err(e) => return Err(e),
                        };
                        let (response, body) = LogBody::of(blob);
                        match response.status {
                            StatusCode::OK => {
                                client.note_log(body.len());
                                Ok((job, Some(body), None))
                            }
                            StatusCode::GONE => Ok((job, None, Some(LogEntry::Expired))),
                            StatusCode::NOT_FOUND => Ok((job, None, Some(LogEntry::Missing))),
                            _ => Err(unexpected(&url, &response)),
                        }
                    });
                }
                let Some(joined) = set.join_next().await else {
                    break;
                };
                let (job, body, entry) = joined.expect("green log tasks do not panic")?;
                let entry = match (body, entry) {
                    (Some(body), _) => {
                        let store = store.clone();
                        super::blocking(move || settle(&store, job, body)).await?
                    }
                    (None, entry) => entry.unwrap_or(LogEntry::Missing),
                };
                if matches!(entry, LogEntry::Stored(_)) {
                    summary.stored += 1;
                } else {
                    summary.unavailable += 1;
                }
                store.run(move |s| s.store_green_log(job, &entry)).await?;
            }
            Ok::<_, FetchError>(())
        })
    }
}

/// A downloaded green log as it is kept: compressed, or `Mismatched` when its timestamps show
/// another execution of the job (GitHub answers an earlier attempt's job id with the latest
/// attempt's log): never taken as this job's.
fn settle(store: &StoreHandle, job: JobId, mut body: LogBody) -> Result<LogEntry, FetchError> {
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
            return Ok(LogEntry::Mismatched);
        }
    }
    Ok(LogEntry::Stored(match body {
        LogBody::Memory(bytes) => compress_log(&bytes),
        LogBody::Spooled(mut file, _) => {
            file.rewind().map_err(spool_error)?;
            compress_log_reader(&mut file).map_err(spool_error)?
        }
    }))
}
