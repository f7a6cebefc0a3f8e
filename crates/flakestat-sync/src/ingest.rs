//! One run attempt's ingest: its jobs (every attempt's), the log of each failed job not yet
//! stored (one by one, or the attempt's log archive when that is cheaper or the per-job log is
//! another execution's), each log classified as it arrives, all committed to the store. The
//! survey calls it for each run its listing finds that can have changed; a webhook worker calls
//! it for each completed run GitHub announces. The GitHub client keeps its rules (rate limits,
//! retries, redirects followed without the token); this file keeps the survey's: a download
//! holds one of the client's concurrency permits from its API request until its outcome is
//! stored (so a SIGKILL loses no more than that), and once GitHub's limit stops the work
//! (`is_stop`) no download starts, those under way finish and are stored, and what is left is
//! recorded (`LogPlan`) for the next ingest to resume, not to download again.
//!
//! An `Ingest` is one batch's (a survey, a queue drained): it remembers the logs it scheduled
//! and the limit that stopped it. Making one is cheap (the client is shared); a long-running
//! caller makes a new one per batch.

use std::collections::{BTreeMap, HashSet};
use std::io::Seek;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use http::StatusCode;

use super::archive::{archive_is_cheaper, is_own_log, read_archive};
use super::artifacts::JunitArtifacts;
use super::pages::{Flow, Listing};
use super::spool::LogBody;
use super::store_error;
use super::survey::{
    ArtifactSummary, PER_PAGE, SurveyCost, SurveySummary, encode, parse_json, unexpected,
};
use super::tasks::{self, Stop};
use super::wire::{JobList, WireRun};
use super::{Classifier, FetchError, Progress, ProgressEvent};
use flakestat_core::model::{Job, JobId, Repo, Run, RunId, Timestamp};
use flakestat_github::{Blob, GitHubClient};
use flakestat_store::{
    LogEntry, LogOutcome, LogPlan, Store, StoreHandle, compress_log, compress_log_reader,
};

/// A run at the attempt a listing (or a webhook) shows, whose row the store already holds
/// (`Store::store_runs`; [`Ingest::ingest_run`] stores it first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunAttempt {
    pub run: RunId,
    /// The run's latest attempt: the jobs of every attempt up to it are fetched.
    pub attempt: u32,
    /// Whether that attempt is completed; the jobs of one that is not are fetched again by the
    /// next ingest of the run (`Store::store_runs` says so).
    pub completed: bool,
}

impl RunAttempt {
    /// The attempt a run shows.
    pub fn of(run: &Run) -> RunAttempt {
        RunAttempt {
            run: run.id,
            attempt: run.run_attempt,
            completed: run.is_completed(),
        }
    }
}

/// What one call did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Ingested {
    /// Whether the run's jobs were fetched (`false`: the store had them at this attempt,
    /// completed).
    pub jobs_fetched: bool,
    /// Failed jobs' logs settled: stored and classified, or recorded as expired, missing,
    /// unavailable or unknown.
    pub logs_settled: u64,
}

/// The logs a stopped ingest left behind (`Ingest::left_behind`), each to the download its
/// plan names; settled by `Ingest::settle_left_behind`.
pub struct LeftBehind {
    steps: Vec<Step>,
}

impl LeftBehind {
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }
}

/// Whether an error is GitHub's limit stopping the work (the budget spent until a reset too
/// far away, a secondary limit that kept refusing): the API refuses for now, but the log host
/// does not, so the downloads already redirected there finish and are stored before it is
/// returned. Any other error stops at once.
pub(super) fn is_stop(err: &FetchError) -> bool {
    matches!(
        err,
        FetchError::RateLimited { .. } | FetchError::SecondaryLimit(_)
    )
}

/// One log download; each returns the downloads it uncovers.
enum Step {
    /// Fetch, classify and store one failed job's log.
    Log { job: JobId },
    /// Read the JUnit reports of a run's matching artifacts (`artifacts.rs`).
    Artifacts { run: RunId },
    /// Fetch one attempt's log archive and take these failed jobs' logs from it. `fallback`:
    /// the jobs were not tried one by one yet (the archive was the cheaper way), so a job the
    /// archive lacks is asked for one by one; otherwise its own endpoint served another
    /// execution's log, and a job the archive lacks is unknown.
    Archive {
        run: RunId,
        attempt: u32,
        jobs: Vec<JobId>,
        fallback: bool,
    },
}

/// What a step did: the logs it settled and the steps it uncovered.
#[derive(Default)]
struct Done {
    settled: u64,
    more: Vec<Step>,
}

impl Done {
    fn settled(settled: u64) -> Done {
        Done {
            settled,
            more: Vec::new(),
        }
    }

    fn more(more: Vec<Step>) -> Done {
        Done { settled: 0, more }
    }
}

/// Counters of the log downloads, for the survey's summary.
#[derive(Debug, Default)]
struct LogCounts {
    settled: AtomicU64,
    /// Downloads whose outcome was stored: a log's, or an archive's logs together.
    downloads: AtomicU64,
    from_archive: AtomicU64,
    not_own: AtomicU64,
    unknown: AtomicU64,
    archives: AtomicU64,
}

/// Ingests run attempts of one repository into the store; clones share one batch.
#[derive(Clone)]
pub struct Ingest {
    inner: Arc<Inner>,
}

struct Inner {
    client: Arc<GitHubClient>,
    store: StoreHandle,
    classifier: Arc<dyn Classifier>,
    fingerprint: String,
    progress: Arc<dyn Progress>,
    /// GitHub's spelling.
    repo: Repo,
    logs_scheduled: Mutex<HashSet<JobId>>,
    counts: LogCounts,
    /// Jobs pages and log requests, against their minimum.
    cost: Mutex<SurveyCost>,
    /// Log and archive downloads under way, each from its API request until its outcome is
    /// stored: at most the client's concurrency, so a SIGKILL loses no more than that.
    downloads: tokio::sync::Semaphore,
    /// Once a limit stopped the work (`is_stop`): the downloads stored by then. No download
    /// starts after it; those under way finish.
    stop: Mutex<Option<u64>>,
    /// `--junit-artifacts`: which artifacts of a run with a failed job to read, and what was.
    junit: Option<Arc<JunitArtifacts>>,
    artifacts: Mutex<ArtifactSummary>,
}

impl Ingest {
    /// An ingest of `repo`'s runs (named as GitHub names it, `full_name`; the store must know
    /// the repository: `Store::store_repo_identity`, as the survey's first request does).
    /// Must be called inside a tokio runtime, as every async method of the crate.
    pub fn new(
        client: Arc<GitHubClient>,
        store: StoreHandle,
        classifier: Arc<dyn Classifier>,
        progress: Arc<dyn Progress>,
        repo: Repo,
    ) -> Ingest {
        let downloads = tokio::sync::Semaphore::new(client.concurrency());
        Ingest {
            inner: Arc::new(Inner {
                fingerprint: classifier.fingerprint(),
                client,
                store,
                classifier,
                progress,
                repo,
                logs_scheduled: Mutex::new(HashSet::new()),
                counts: LogCounts::default(),
                cost: Mutex::new(SurveyCost::default()),
                downloads,
                stop: Mutex::new(None),
                junit: None,
                artifacts: Mutex::default(),
            }),
        }
    }

    /// Also reads the JUnit reports of the matching artifacts of each ingested run with a
    /// failed job (`artifacts.rs`). Set before the ingest is shared.
    pub fn reading_junit_artifacts(mut self, junit: Option<Arc<JunitArtifacts>>) -> Ingest {
        Arc::get_mut(&mut self.inner)
            .expect("set before the ingest is shared")
            .junit = junit;
        self
    }

    /// Ingests one run attempt whose run the store holds: every attempt's jobs
    /// (`GET …/actions/runs/{id}/jobs?filter=all`, every page), committed with the run's
    /// attempt in one transaction, then the log of each failed job without one, each committed
    /// with its classification as it arrives (an archive's logs together). Returns once every
    /// such log is settled; an error returns what stopped it (the store keeps what was done).
    pub async fn ingest(&self, attempt: RunAttempt) -> Result<Ingested, FetchError> {
        let RunAttempt {
            run,
            attempt,
            completed,
        } = attempt;
        let steps = self.inner.fetch_jobs(run, attempt, completed).await?;
        let logs_settled = self.inner.clone().perform_all(steps).await?;
        Ok(Ingested {
            jobs_fetched: true,
            logs_settled,
        })
    }

    /// Stores `run` as GitHub shows it (a webhook's `workflow_run`, [`parse_run`]), settles
    /// the logs a stopped ingest left behind for it, and ingests its attempt unless the store
    /// already has that attempt's jobs, completed: a run delivered twice is fetched once.
    pub async fn ingest_run(&self, run: &Run) -> Result<Ingested, FetchError> {
        let inner = self.inner.clone();
        let stored = run.clone();
        let (need, steps) = self
            .inner
            .store
            .run(move |store| {
                let need = store
                    .store_runs(&inner.repo, std::slice::from_ref(&stored))
                    .map_err(store_error)?;
                let mut pending = Vec::new();
                for job in store.load_run_jobs(stored.id).map_err(store_error)? {
                    if job.is_failed() && !store.has_log(job.id).map_err(store_error)? {
                        pending.push((stored.id, job.id));
                    }
                }
                Ok::<_, FetchError>((need, inner.plan_left_behind(store, pending)?))
            })
            .await?;
        let left = LeftBehind { steps };
        let inner = &self.inner;
        let mut done = self.settle_left_behind(left).await?;
        if need.contains(&run.id) {
            inner.progress.event(ProgressEvent::JobsQueued(1));
            let ingested = self.ingest(RunAttempt::of(run)).await?;
            done.jobs_fetched = true;
            done.logs_settled += ingested.logs_settled;
        }
        Ok(done)
    }

    /// The logs of failed jobs without one among the repository's runs created in
    /// `[since, until)`, as a stopped ingest left them, whatever a listing says now: each job
    /// with a plan (`LogPlan`) goes to the download its plan names, the others are scheduled as
    /// a fresh ingest would. Marks them scheduled in this batch (an ingest of their run meanwhile
    /// does not download them again).
    pub async fn left_behind(
        &self,
        since: Timestamp,
        until: Timestamp,
    ) -> Result<LeftBehind, FetchError> {
        let inner = self.inner.clone();
        let steps = self
            .inner
            .store
            .run(move |store| {
                let pending = store
                    .failed_jobs_without_log(&inner.repo, since, until)
                    .map_err(store_error)?;
                inner.plan_left_behind(store, pending)
            })
            .await?;
        Ok(LeftBehind { steps })
    }

    /// Downloads, classifies and stores the logs `left` names, as `ingest` does.
    pub async fn settle_left_behind(&self, left: LeftBehind) -> Result<Ingested, FetchError> {
        let logs_settled = self.inner.clone().perform_all(left.steps).await?;
        Ok(Ingested {
            jobs_fetched: false,
            logs_settled,
        })
    }

    /// Jobs pages and log requests made so far in this batch, against their minimum (the
    /// `jobs` and `logs` kinds; the others are zero).
    pub fn cost(&self) -> SurveyCost {
        *self.inner.cost()
    }

    /// Marks the batch stopped by a limit (once): no download starts after this. The survey
    /// calls it when its own requests (listing, PRs) meet the limit.
    pub(super) fn begin_stop(&self) {
        self.inner.begin_stop();
    }

    pub(super) fn stopping(&self) -> bool {
        self.inner.stopping()
    }

    /// Downloads (a log, or an archive's logs together) stored since the batch was stopped by
    /// a limit, when it was: at most those under way then, the client's concurrency.
    pub(super) fn stored_since_stop(&self) -> Option<u64> {
        let then = (*self.inner.stop.lock().expect("stop lock"))?;
        Some(self.inner.counts.downloads.load(Ordering::Relaxed) - then)
    }

    /// The log counters into a survey's summary.
    pub(super) fn count_logs(&self, summary: &mut SurveySummary) {
        let counts = &self.inner.counts;
        let count = |c: &AtomicU64| c.load(Ordering::Relaxed);
        summary.logs_settled = count(&counts.settled);
        summary.logs_from_archive = count(&counts.from_archive);
        summary.logs_not_own = count(&counts.not_own);
        summary.logs_unknown = count(&counts.unknown);
        summary.archives_fetched = count(&counts.archives);
        summary.artifacts = *self.inner.artifacts.lock().expect("artifacts lock");
    }
}

/// Parses a run as GitHub's REST API and its `workflow_run` webhook payload carry it (the
/// payload's `workflow_run` object); `what` names it in the error.
pub fn parse_run(what: &str, json: &[u8]) -> Result<Run, FetchError> {
    parse_json::<WireRun>(what, json).map(WireRun::into_model)
}

/// The batch's stop, for the executor (`tasks.rs`): the ingest's own steps and the survey's
/// tasks (through [`Ingest`]) share it.
impl Stop for Inner {
    fn stopping(&self) -> bool {
        Inner::stopping(self)
    }

    fn begin_stop(&self) {
        Inner::begin_stop(self)
    }
}

impl Stop for Ingest {
    fn stopping(&self) -> bool {
        self.inner.stopping()
    }

    fn begin_stop(&self) {
        self.inner.begin_stop()
    }
}

impl Inner {
    fn cost(&self) -> std::sync::MutexGuard<'_, SurveyCost> {
        self.cost.lock().expect("cost lock")
    }

    fn repo_path(&self) -> String {
        format!(
            "/repos/{}/{}",
            encode(&self.repo.owner),
            encode(&self.repo.name)
        )
    }

    /// Marks the batch stopped by a limit (once): no download starts after this.
    fn begin_stop(&self) {
        let mut stop = self.stop.lock().expect("stop lock");
        if stop.is_none() {
            *stop = Some(self.counts.downloads.load(Ordering::Relaxed));
            self.progress.event(ProgressEvent::Detail(
                "GitHub's limit stops the survey: finishing the downloads under way".to_string(),
            ));
        }
    }

    fn stopping(&self) -> bool {
        self.stop.lock().expect("stop lock").is_some()
    }

    /// Performs the steps and every step they uncover, all at once (a download waits for its
    /// permit inside `perform`), through the fetcher's one executor (`tasks.rs`, which says what
    /// a stop and an error do); returns the logs they settled.
    async fn perform_all(self: Arc<Self>, steps: Vec<Step>) -> Result<u64, FetchError> {
        let mut settled = 0;
        tasks::perform_all(
            steps,
            usize::MAX,
            self.as_ref(),
            |step| self.clone().perform(step),
            |done: Done| {
                settled += done.settled;
                done.more
            },
        )
        .await?;
        Ok(settled)
    }

    async fn perform(self: Arc<Self>, step: Step) -> Result<Done, FetchError> {
        // A download holds its permit from its API request until its outcome is stored.
        let _download = self.downloads.acquire().await.expect("never closed");
        if self.stopping() {
            return Ok(Done::default());
        }
        match step {
            Step::Log { job } => self.fetch_log(job).await,
            Step::Artifacts { run } => self.fetch_artifacts(run).await,
            Step::Archive {
                run,
                attempt,
                jobs,
                fallback,
            } => self.fetch_archive(run, attempt, jobs, fallback).await,
        }
    }

    /// The steps of failed jobs without a log (`(run, job)`, as a stopped ingest left them):
    /// each job with a plan (`LogPlan`) goes to the download its plan names, the others are
    /// scheduled as a fresh ingest would. Reads `store` (on the store's thread: the caller's
    /// `StoreHandle::run`).
    fn plan_left_behind(
        &self,
        store: &Store,
        pending: Vec<(RunId, JobId)>,
    ) -> Result<Vec<Step>, FetchError> {
        let ids: Vec<JobId> = pending.iter().map(|(_, job)| *job).collect();
        let plans = store.load_log_plans(&ids).map_err(store_error)?;
        let mut by_run: BTreeMap<RunId, Vec<JobId>> = BTreeMap::new();
        let mut tasks = Vec::new();
        let mut archives: BTreeMap<(RunId, u32), Vec<JobId>> = BTreeMap::new();
        for (run, job) in pending {
            match plans.get(&job) {
                None => by_run.entry(run).or_default().push(job),
                Some(plan) => {
                    self.logs_scheduled.lock().expect("logs lock").insert(job);
                    match plan {
                        LogPlan::Job => tasks.push(Step::Log { job }),
                        LogPlan::Archive => {
                            let attempt = store
                                .load_job(job)
                                .map_err(store_error)?
                                .map_or(1, |j| j.run_attempt);
                            archives.entry((run, attempt)).or_default().push(job);
                        }
                    }
                }
            }
        }
        let planned = tasks.len() as u64 + archives.values().map(|j| j.len() as u64).sum::<u64>();
        if planned > 0 {
            self.progress.event(ProgressEvent::LogsQueued(planned));
        }
        tasks.extend(
            archives
                .into_iter()
                .map(|((run, attempt), jobs)| Step::Archive {
                    run,
                    attempt,
                    jobs,
                    fallback: false,
                }),
        );
        for (run, jobs) in by_run {
            let (run_jobs, latest) = (
                store.load_run_jobs(run).map_err(store_error)?,
                store.run_attempt(run).map_err(store_error)?.unwrap_or(1),
            );
            let failed: Vec<Job> = run_jobs
                .iter()
                .filter(|j| jobs.contains(&j.id))
                .cloned()
                .collect();
            tasks.extend(self.schedule_logs(run, &failed, &run_jobs, latest));
        }
        Ok(tasks)
    }

    /// Every job of every attempt (`filter=all`), committed with the run in one transaction.
    async fn fetch_jobs(
        &self,
        run: RunId,
        attempt: u32,
        completed: bool,
    ) -> Result<Vec<Step>, FetchError> {
        let url = self.client.url(&format!(
            "{}/actions/runs/{run}/jobs?filter=all&per_page={PER_PAGE}",
            self.repo_path()
        ));
        let mut jobs = Vec::new();
        // Where each job ran: the listing carries it, so it costs no request of its own.
        let mut runners = BTreeMap::new();
        let walked = Listing::new(&self.client, url)
            .walk::<JobList, FetchError>(unexpected, |page| {
                // Follow `Link: rel="next"`, not `total_count`: with `filter=all` its meaning
                // is not documented, and a short count would lose an attempt's jobs.
                let more = !page.is_empty();
                jobs.extend(page.into_iter().map(|j| {
                    let runner = j.runner();
                    let job = j.into_model();
                    if !runner.is_unknown() {
                        runners.insert(job.id, runner);
                    }
                    job
                }));
                Ok(if more { Flow::More } else { Flow::Stop })
            })
            .await?;
        self.cost().jobs.made += walked.pages;
        self.cost().jobs.minimum += (jobs.len() as u64).div_ceil(PER_PAGE).max(1);
        let (stored, without_log) = (jobs.clone(), Vec::new());
        let without_log = self
            .store
            .run(move |store| {
                let mut without_log = without_log;
                store
                    .store_jobs_with_runners(run, attempt, completed, &stored, &runners)
                    .map_err(store_error)?;
                for job in stored.into_iter().filter(|j| j.is_failed()) {
                    if !store.has_log(job.id).map_err(store_error)? {
                        without_log.push(job);
                    }
                }
                Ok::<_, FetchError>(without_log)
            })
            .await?;
        self.progress.event(ProgressEvent::JobsDone);
        let mut steps = self.schedule_logs(run, &without_log, &jobs, attempt);
        if self.junit.is_some() && jobs.iter().any(|j| j.is_failed()) {
            steps.push(Step::Artifacts { run });
        }
        Ok(steps)
    }

    /// `--junit-artifacts`: one run's matching artifacts read and stored (`artifacts.rs`).
    async fn fetch_artifacts(&self, run: RunId) -> Result<Done, FetchError> {
        let Some(junit) = &self.junit else {
            return Ok(Done::default());
        };
        let got = super::artifacts::fetch_run_artifacts(
            &self.client,
            &self.store,
            self.progress.as_ref(),
            &self.repo_path(),
            run,
            junit,
        )
        .await?;
        let mut sum = self.artifacts.lock().expect("artifacts lock");
        sum.runs_listed += got.listed_runs;
        sum.read += got.read;
        sum.refused += got.refused;
        sum.expired += got.expired;
        Ok(Done::default())
    }

    /// The log tasks of a run's failed jobs without a log: per attempt, its archive when that
    /// is cheaper ([`archive_is_cheaper`]), else one task per job. `run_jobs`: every job of
    /// every attempt of the run; `latest`: the run's latest attempt.
    fn schedule_logs(
        &self,
        run: RunId,
        failed: &[Job],
        run_jobs: &[Job],
        latest: u32,
    ) -> Vec<Step> {
        let mut scheduled = self.logs_scheduled.lock().expect("logs lock");
        let mut by_attempt: BTreeMap<u32, Vec<JobId>> = BTreeMap::new();
        for job in failed {
            if scheduled.insert(job.id) {
                by_attempt.entry(job.run_attempt).or_default().push(job.id);
            }
        }
        let mut tasks = Vec::new();
        let mut queued = 0u64;
        for (attempt, jobs) in by_attempt {
            queued += jobs.len() as u64;
            let executed = run_jobs.iter().filter(|j| j.run_attempt == attempt).count();
            if archive_is_cheaper(jobs.len(), executed, attempt >= latest) {
                tasks.push(Step::Archive {
                    run,
                    attempt,
                    jobs,
                    fallback: true,
                });
            } else {
                tasks.extend(jobs.into_iter().map(|job| Step::Log { job }));
            }
        }
        self.progress.event(ProgressEvent::LogsQueued(queued));
        tasks
    }

    /// Classifies, compresses and stores one log on a blocking thread (`settle_logs`).
    async fn settle_log(
        &self,
        job: JobId,
        log: Option<LogBody>,
        entry: Option<LogEntry>,
    ) -> Result<Done, FetchError> {
        self.settle_logs(vec![(job, log, entry)], Vec::new()).await
    }

    /// Classifies and compresses logs on a blocking thread (a spooled log as it is read back
    /// from its file, never held whole), then stores them, each with its classification, and
    /// `plans` for jobs whose log is still to come, in one transaction: an attempt archive's
    /// logs are stored together or not at all. A log without a body is stored as `entry`
    /// (`Missing` when none).
    async fn settle_logs(
        &self,
        logs: Vec<(JobId, Option<LogBody>, Option<LogEntry>)>,
        plans: Vec<(JobId, LogPlan)>,
    ) -> Result<Done, FetchError> {
        let store = self.store.clone();
        let classifier = self.classifier.clone();
        let fingerprint = self.fingerprint.clone();
        let count = logs.len() as u64;
        let sizes: Vec<u64> = logs
            .iter()
            .map(|(_, log, _)| log.as_ref().map_or(0, LogBody::len))
            .collect();
        let outcomes = crate::blocking(move || {
            logs.into_iter()
                .map(|(job, log, entry)| outcome(classifier.as_ref(), job, log, entry))
                .collect::<Result<Vec<_>, FetchError>>()
        })
        .await?;
        store
            .run(move |s| s.store_logs(&fingerprint, &outcomes, &plans))
            .await
            .map_err(store_error)?;
        for bytes in sizes {
            if bytes > 0 {
                self.client.note_log(bytes);
            }
            self.counts.settled.fetch_add(1, Ordering::Relaxed);
            self.progress.event(ProgressEvent::LogDone { bytes });
        }
        self.counts.downloads.fetch_add(1, Ordering::Relaxed);
        Ok(Done::settled(count))
    }

    /// Records that these jobs' logs are to be asked one by one (their attempt's archive lacks
    /// them, or GitHub does not serve it), and returns those tasks: a survey stopped before
    /// they run resumes with them, not with the archive again.
    async fn ask_one_by_one(&self, jobs: Vec<JobId>) -> Result<Done, FetchError> {
        let plans: Vec<_> = jobs.iter().map(|&job| (job, LogPlan::Job)).collect();
        let fingerprint = self.fingerprint.clone();
        self.store
            .run(move |s| s.store_logs(&fingerprint, &[], &plans))
            .await
            .map_err(store_error)?;
        Ok(Done::more(
            jobs.into_iter().map(|job| Step::Log { job }).collect(),
        ))
    }

    /// `GET …/jobs/{id}/logs`: the 302 to the log host is followed without the token; 410 is an
    /// expired log, 404 a job without one, a redirect not followed (another scheme, https to
    /// http, too many hops) an unavailable one, said once and recorded so the survey goes on. A
    /// log over `max_log_size` is cut there, said once. A log whose timestamps do not fit the
    /// job's execution (GitHub answers an earlier attempt's job id with the latest attempt's log)
    /// is not taken: the job's attempt archive is asked instead. The log is classified and
    /// compressed on a blocking thread, then stored with its classification in one transaction.
    async fn fetch_log(&self, job: JobId) -> Result<Done, FetchError> {
        let url = self
            .client
            .url(&format!("{}/actions/jobs/{job}/logs", self.repo_path()));
        {
            let mut cost = self.cost();
            cost.logs.made += 1;
            cost.logs.minimum += 1;
        }
        let what = format!("job {job}'s log");
        let blob = match self.client.fetch_blob(&url, &what).await {
            Ok(blob) => blob,
            Err(FetchError::Unavailable(message)) => {
                self.progress.event(ProgressEvent::Note(format!(
                    "{message}; recorded as unavailable"
                )));
                return self
                    .settle_log(job, None, Some(LogEntry::Unavailable))
                    .await;
            }
            Err(e) => return Err(e),
        };
        if blob.truncated && blob.response.status == StatusCode::OK {
            self.progress.event(ProgressEvent::LogTooLarge {
                what: what.to_string(),
                limit: self.client.max_log_size(),
                kept: Some(blob.len()),
            });
        }
        let (response, mut body) = LogBody::of(blob);
        let entry = match response.status {
            StatusCode::OK => None,
            StatusCode::GONE => Some(LogEntry::Expired),
            StatusCode::NOT_FOUND => Some(LogEntry::Missing),
            _ => return Err(unexpected(&url, &response)),
        };
        if entry.is_some() {
            return self.settle_log(job, None, entry).await;
        }
        let (model, run_jobs) = self
            .store
            .run(move |store| {
                let model = store.load_job(job).map_err(store_error)?;
                let run_jobs = match &model {
                    Some(m) => store.load_run_jobs(m.run_id).map_err(store_error)?,
                    None => Vec::new(),
                };
                Ok::<_, FetchError>((model, run_jobs))
            })
            .await?;
        if let Some(model) = model {
            let span = body.span().map_err(|e| {
                FetchError::Spool(format!(
                    "cannot read {what} back from its temporary file: {e}"
                ))
            })?;
            if !is_own_log(span, &model, &run_jobs) {
                // Learnt at the price of a download: kept, so that a survey stopped before the
                // archive arrives asks the archive next time, not this endpoint again.
                let fingerprint = self.fingerprint.clone();
                self.store
                    .run(move |s| s.store_logs(&fingerprint, &[], &[(job, LogPlan::Archive)]))
                    .await
                    .map_err(store_error)?;
                self.counts.not_own.fetch_add(1, Ordering::Relaxed);
                self.progress.event(ProgressEvent::Detail(format!(
                    "the log GitHub served for job {job} ({} attempt {}) is another execution's: asking the attempt's archive",
                    model.name, model.run_attempt
                )));
                return Ok(Done::more(vec![Step::Archive {
                    run: model.run_id,
                    attempt: model.run_attempt,
                    jobs: vec![job],
                    fallback: false,
                }]));
            }
        }
        self.settle_log(job, Some(body), None).await
    }

    /// `GET …/actions/runs/{run}/attempts/{n}/logs` (302 to a zip on the log host, followed
    /// without the token): takes each job's log from the archive ([`match_archive_spans`]).
    /// A job the archive lacks (or an archive GitHub does not serve) is asked one by one when
    /// `fallback`, else recorded as unknown (`Mismatched`) — never classified as another's log.
    async fn fetch_archive(
        &self,
        run: RunId,
        attempt: u32,
        jobs: Vec<JobId>,
        fallback: bool,
    ) -> Result<Done, FetchError> {
        let url = self.client.url(&format!(
            "{}/actions/runs/{run}/attempts/{attempt}/logs",
            self.repo_path()
        ));
        let what = format!("run {run} attempt {attempt}'s log archive");
        let unknown = |jobs: Vec<JobId>, entry: LogEntry| -> Vec<_> {
            jobs.into_iter()
                .map(|job| (job, None, Some(entry.clone())))
                .collect()
        };
        let Some(blob) = self.fetch_archive_blob(&url, &what).await? else {
            if fallback {
                return self.ask_one_by_one(jobs).await;
            }
            self.counts
                .unknown
                .fetch_add(jobs.len() as u64, Ordering::Relaxed);
            return self
                .settle_logs(unknown(jobs, LogEntry::Mismatched), Vec::new())
                .await;
        };
        let (response, body) = LogBody::of(blob);
        match response.status {
            StatusCode::OK => {}
            StatusCode::GONE | StatusCode::NOT_FOUND if fallback => {
                return self.ask_one_by_one(jobs).await;
            }
            StatusCode::GONE | StatusCode::NOT_FOUND => {
                let entry = if response.status == StatusCode::GONE {
                    LogEntry::Expired
                } else {
                    self.counts
                        .unknown
                        .fetch_add(jobs.len() as u64, Ordering::Relaxed);
                    LogEntry::Mismatched
                };
                return self.settle_logs(unknown(jobs, entry), Vec::new()).await;
            }
            _ => return Err(unexpected(&url, &response)),
        }
        self.counts.archives.fetch_add(1, Ordering::Relaxed);
        let run_jobs = self
            .store
            .run(move |s| s.load_run_jobs(run))
            .await
            .map_err(store_error)?;
        let models: Vec<Job> = run_jobs
            .iter()
            .filter(|j| jobs.contains(&j.id))
            .cloned()
            .collect();
        let max_entry = self.client.max_log_size();
        let (entries, matched) =
            crate::blocking(move || read_archive(body, &models, &run_jobs, max_entry, url)).await?;
        let mut entries: Vec<Option<LogBody>> = entries.into_iter().map(|(_, b)| Some(b)).collect();
        let mut settled = Vec::new();
        let mut retry = Vec::new();
        for job in jobs {
            match matched.get(&job).and_then(|&i| entries[i].take()) {
                Some(log) => {
                    self.counts.from_archive.fetch_add(1, Ordering::Relaxed);
                    settled.push((job, Some(log), None));
                }
                None if fallback => retry.push(job),
                None => {
                    self.counts.unknown.fetch_add(1, Ordering::Relaxed);
                    self.progress.event(ProgressEvent::Detail(format!(
                        "job {job}: attempt {attempt}'s archive of run {run} has no log of it either: unknown"
                    )));
                    settled.push((job, None, Some(LogEntry::Mismatched)));
                }
            }
        }
        // The archive's logs and the plans of the jobs it lacks: one transaction.
        let plans = retry.iter().map(|&job| (job, LogPlan::Job)).collect();
        let done = self.settle_logs(settled, plans).await?;
        Ok(Done {
            settled: done.settled,
            more: retry.into_iter().map(|job| Step::Log { job }).collect(),
        })
    }

    /// Downloads an attempt's log archive; `None` (said once) when it is over the client's
    /// log size limit or GitHub sends it somewhere not followed.
    async fn fetch_archive_blob(&self, url: &str, what: &str) -> Result<Option<Blob>, FetchError> {
        match self.client.fetch_blob(url, what).await {
            Ok(blob) if blob.truncated => {
                self.progress.event(ProgressEvent::LogTooLarge {
                    what: what.to_string(),
                    limit: self.client.max_log_size(),
                    kept: None,
                });
                Ok(None)
            }
            Ok(blob) => Ok(Some(blob)),
            Err(FetchError::Unavailable(message)) => {
                self.progress
                    .event(ProgressEvent::Note(format!("{message}; not read")));
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }
}

/// One log's outcome for the store: a body classified and compressed (a spooled one as it is
/// read back from its file), or `entry` (`Missing` when none). Blocking.
fn outcome(
    classifier: &dyn Classifier,
    job: JobId,
    log: Option<LogBody>,
    entry: Option<LogEntry>,
) -> Result<LogOutcome, FetchError> {
    let (classification, compressed) = match log {
        Some(LogBody::Memory(log)) => (classifier.classify(&log), compress_log(&log)),
        Some(LogBody::Spooled(mut file, _)) => {
            let spool_error = |e: std::io::Error| {
                FetchError::Spool(format!(
                    "cannot read job {job}'s log back from its temporary file: {e}"
                ))
            };
            file.rewind().map_err(spool_error)?;
            let classification = classifier.classify_reader(&mut file).map_err(spool_error)?;
            file.rewind().map_err(spool_error)?;
            let compressed = compress_log_reader(&mut file).map_err(spool_error)?;
            (classification, compressed)
        }
        None => {
            return Ok(LogOutcome {
                job,
                entry: entry.unwrap_or(LogEntry::Missing),
                classification: None,
            });
        }
    };
    Ok(LogOutcome {
        job,
        entry: LogEntry::Stored(compressed),
        classification: Some(classification),
    })
}
