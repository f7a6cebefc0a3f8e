//! The logs of jobs chosen by id (a sample of successful jobs: `signatures audit
//! --green-sample`'s, `--green-logs`'), each downloaded on its own (`GET
//! …/actions/jobs/{id}/logs`, its redirect to the log host followed without the token) or, with
//! [`Asking::archives`], several jobs of one attempt through the attempt's archive (`GET
//! …/actions/runs/{id}/attempts/{n}/logs`: one request for every job of the attempt) when that is
//! cheaper ([`archive_is_cheaper`], as a survey's failed logs), concurrently within the client's
//! limit, checked to be the job's own execution, and handed to the caller's closure as it
//! arrives, on a blocking thread, in memory or spooled to a file (the closure reads it as it
//! streams: a large log is never held whole). A job the archive lacks (or an archive GitHub does
//! not give) is asked for on its own.
//!
//! Once GitHub's limit (or any other error of a download) stops one, no new download starts,
//! those under way are handed over, and the first error is returned, as `Ingest` does; an error
//! of the closure returns at once.

use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use http::StatusCode;
use tokio::task::JoinSet;

use super::FetchError;
use super::archive::{archive_is_cheaper, is_own_log, read_archive};
use super::spool::LogBody;
use super::store_error;
use super::survey::{Session, encode, unexpected};
use flakestat_core::model::{Job, JobId, LogStatus, Repo, RunId};
use flakestat_github::GitHubClient;
use flakestat_store::StoreHandle;

/// One job's log, as the closure gets it.
pub(super) enum JobLog {
    /// The job's own log (its timestamps fit its execution, or it has none).
    Own(LogBody),
    /// Not had: `Expired` (410), `Missing` (404), `Mismatched` (another execution's log) or
    /// `Unavailable` (a redirect not followed).
    Gone(LogStatus),
}

/// How a batch of jobs' logs is asked for.
#[derive(Debug, Clone, Copy)]
pub(super) struct Asking {
    /// What the jobs are, for errors ("job N's log (`what`)").
    pub what: &'static str,
    /// Several jobs of one attempt through its archive when that is cheaper.
    pub archives: bool,
}

/// What the downloads cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Downloads {
    /// `GET …/jobs/{id}/logs` and attempt archive requests made.
    pub requests: u64,
    /// Of them, attempt archives.
    pub archives: u64,
    /// Bytes downloaded (logs, and archives as GitHub sent them).
    pub bytes: u64,
}

/// One download: a job's log, or an attempt's archive for several of its jobs.
enum Unit {
    Job(JobId),
    Archive {
        run: RunId,
        attempt: u32,
        jobs: Vec<JobId>,
    },
}

/// What one download gave: each job's log or why none, the jobs to ask for on their own (an
/// archive's), and the bytes downloaded.
type Got = (Vec<(JobId, Result<LogBody, LogStatus>)>, Vec<JobId>, u64);

impl Session {
    /// Downloads the logs of `jobs` as `asking` says and hands each to `settle` on a blocking
    /// thread (which stores what it makes of it); `tally` gets each result on the caller's side.
    /// Returns what the downloads cost (right even when an error stopped them half-way) and how
    /// they ended.
    pub(super) fn for_each_job_log<R, S>(
        &self,
        store: &StoreHandle,
        repo: &Repo,
        jobs: Vec<JobId>,
        asking: Asking,
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
            "/repos/{}/{}/actions",
            encode(&repo.owner),
            encode(&repo.name)
        );
        let mut counts = Downloads::default();
        let done = self.runtime.block_on(async {
            let mut queue: VecDeque<Unit> = if asking.archives {
                let store = store.clone();
                super::blocking(move || plan_units(&store, jobs)).await?
            } else {
                jobs.into_iter().map(Unit::Job).collect()
            };
            let mut set = JoinSet::new();
            let mut stop: Option<FetchError> = None;
            loop {
                while stop.is_none()
                    && set.len() < client.concurrency()
                    && let Some(unit) = queue.pop_front()
                {
                    let (client, store, base) = (client.clone(), store.clone(), base.clone());
                    counts.requests += 1;
                    match unit {
                        Unit::Job(job) => {
                            set.spawn(fetch_job_log(client, base, job, asking.what));
                        }
                        Unit::Archive { run, attempt, jobs } => {
                            counts.archives += 1;
                            set.spawn(fetch_archive(client, store, base, (run, attempt), jobs));
                        }
                    }
                }
                let Some(joined) = set.join_next().await else {
                    break;
                };
                let (logs, retry, bytes) = match joined.expect("job log tasks do not panic") {
                    Ok(got) => got,
                    Err(e) => {
                        // The first error stops new downloads; those under way are handed over.
                        stop.get_or_insert(e);
                        continue;
                    }
                };
                counts.bytes += bytes;
                queue.extend(retry.into_iter().map(Unit::Job));
                for (job, fetched) in logs {
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
            }
            match stop {
                Some(e) => Err(e),
                None => Ok(()),
            }
        });
        (counts, done)
    }
}

/// The downloads for `jobs`: per attempt, its archive when that is cheaper than one request per
/// job ([`archive_is_cheaper`]: at least two of its jobs, and a quarter of its executed jobs or
/// an earlier attempt), else one per job. Blocking.
fn plan_units(store: &StoreHandle, jobs: Vec<JobId>) -> Result<VecDeque<Unit>, FetchError> {
    store.blocking(|s| {
        let mut units = VecDeque::new();
        let mut by_attempt: BTreeMap<(RunId, u32), Vec<JobId>> = BTreeMap::new();
        for job in jobs {
            match s.load_job(job).map_err(store_error)? {
                Some(m) => by_attempt
                    .entry((m.run_id, m.run_attempt))
                    .or_default()
                    .push(job),
                None => units.push_back(Unit::Job(job)),
            }
        }
        let mut run_jobs: BTreeMap<RunId, Vec<Job>> = BTreeMap::new();
        for ((run, attempt), jobs) in by_attempt {
            if jobs.len() < 2 {
                units.extend(jobs.into_iter().map(Unit::Job));
                continue;
            }
            let all = match run_jobs.entry(run) {
                Entry::Occupied(known) => known.into_mut(),
                Entry::Vacant(new) => new.insert(s.load_run_jobs(run).map_err(store_error)?),
            };
            let executed = all.iter().filter(|j| j.run_attempt == attempt).count();
            let latest = all.iter().all(|j| j.run_attempt <= attempt);
            if archive_is_cheaper(jobs.len(), executed, latest) {
                units.push_back(Unit::Archive { run, attempt, jobs });
            } else {
                units.extend(jobs.into_iter().map(Unit::Job));
            }
        }
        Ok::<_, FetchError>(units)
    })
}

/// One job's log on its own.
async fn fetch_job_log(
    client: Arc<GitHubClient>,
    base: String,
    job: JobId,
    what: &'static str,
) -> Result<Got, FetchError> {
    let url = client.url(&format!("{base}/jobs/{job}/logs"));
    let what = format!("job {job}'s log ({what})");
    let one = |fetched| Ok((vec![(job, fetched)], Vec::new(), 0));
    let blob = match client.fetch_blob(&url, &what).await {
        Ok(blob) => blob,
        Err(FetchError::Unavailable(_)) => return one(Err(LogStatus::Unavailable)),
        Err(e) => return Err(e),
    };
    let (response, body) = LogBody::of(blob);
    match response.status {
        StatusCode::OK => {
            let bytes = body.len();
            client.note_log(bytes);
            Ok((vec![(job, Ok(body))], Vec::new(), bytes))
        }
        StatusCode::GONE => one(Err(LogStatus::Expired)),
        StatusCode::NOT_FOUND => one(Err(LogStatus::Missing)),
        _ => Err(unexpected(&url, &response)),
    }
}

/// Several jobs of one attempt through its archive: the logs it holds (matched to the jobs by
/// name and time, `read_archive`), the other jobs to ask for on their own (all of them when
/// GitHub gives no archive, or one over the log size limit).
async fn fetch_archive(
    client: Arc<GitHubClient>,
    store: StoreHandle,
    base: String,
    (run, attempt): (RunId, u32),
    jobs: Vec<JobId>,
) -> Result<Got, FetchError> {
    let url = client.url(&format!("{base}/runs/{run}/attempts/{attempt}/logs"));
    let what = format!("run {run} attempt {attempt}'s log archive");
    let blob = match client.fetch_blob(&url, &what).await {
        Ok(blob) if !blob.truncated => blob,
        Ok(_) | Err(FetchError::Unavailable(_)) => return Ok((Vec::new(), jobs, 0)),
        Err(e) => return Err(e),
    };
    let (response, body) = LogBody::of(blob);
    match response.status {
        StatusCode::OK => {}
        StatusCode::GONE | StatusCode::NOT_FOUND => return Ok((Vec::new(), jobs, 0)),
        _ => return Err(unexpected(&url, &response)),
    }
    let bytes = body.len();
    let max_entry = client.max_log_size();
    let wanted = jobs.clone();
    let (entries, matched) = super::blocking(move || {
        let run_jobs = store
            .blocking(|s| s.load_run_jobs(run))
            .map_err(store_error)?;
        let models: Vec<Job> = run_jobs
            .iter()
            .filter(|j| wanted.contains(&j.id))
            .cloned()
            .collect();
        read_archive(body, &models, &run_jobs, max_entry, url)
    })
    .await?;
    let mut entries: Vec<Option<LogBody>> = entries.into_iter().map(|(_, b)| Some(b)).collect();
    let mut logs = Vec::new();
    let mut retry = Vec::new();
    for job in jobs {
        match matched.get(&job).and_then(|&i| entries[i].take()) {
            Some(body) => {
                client.note_log(body.len());
                logs.push((job, Ok(body)));
            }
            None => retry.push(job),
        }
    }
    Ok((logs, retry, bytes))
}

/// A downloaded log as the job's own, or `Gone(Mismatched)` when its timestamps show another
/// execution of the job (GitHub answers an earlier attempt's job id with the latest attempt's
/// log): never taken as this job's.
fn own(store: &StoreHandle, job: JobId, mut body: LogBody) -> Result<JobLog, FetchError> {
    let (model, run_jobs) = store.blocking(|store| {
        let model = store.load_job(job).map_err(store_error)?;
        let run_jobs = match &model {
            Some(m) => store.load_run_jobs(m.run_id).map_err(store_error)?,
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
