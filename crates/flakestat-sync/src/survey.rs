//! The survey: every run created in a window (listing split under the 1,000-result cap), the jobs
//! of every attempt of the runs that can have changed in the workflows that had a failed or
//! re-run run, the log of every failed job not yet stored (classified as it arrives), then
//! merged pull requests and the files of the PRs the caller names. It asks for what a figure
//! needs and no more: docs/survey.md, "The minimum", and `SurveyCost` counts it.
//!
//! Work is a set of tasks (list a window, ingest a run: `ingest.rs`) run concurrently; the
//! client bounds what is in flight. Each task commits its own results in transactions before it
//! ends, so stopping at any point (Ctrl-C, a spent rate limit, an error) leaves a consistent
//! store that the next survey resumes from: it re-lists (cheaply, with ETags), skips runs whose
//! completed attempt is stored, and downloads only the logs still missing.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::{Arc, Mutex};

use chrono::{TimeDelta, Utc};
use futures_util::{StreamExt, TryStreamExt, stream};
use http::StatusCode;
use tokio::task::JoinSet;

use super::artifacts::JunitArtifacts;
use super::ingest::{Ingest, Ingested, LeftBehind, RunAttempt, is_stop, parse_run};
use super::pages::{End, Flow, Listing};
use super::store_error;
use flakestat_github::{ClientConfig, GitHubClient, StatsSnapshot};
// The client's helpers, where the engine's modules have always found them.
use super::tasks;
use super::wire::{RunList, WireFile, WirePull, WireRepo, WorkflowList};
use super::{Classifier, FetchError, Progress, ProgressEvent};
use flakestat_core::model::{PrNumber, PullRequest, Repo, Run, RunId, Timestamp, WorkflowId};
pub(super) use flakestat_github::pages::{encode, github_time, parse_json, unexpected};
use flakestat_store::{HISTORY_DAYS, ListedWindow, StoreHandle};

/// A filtered run listing returns at most this many results, whatever `total_count` says.
const LISTING_CAP: u64 = 1000;
pub(super) const PER_PAGE: u64 = 100;
/// Kept list bodies unused this long are pruned.
const ETAG_DAYS: i64 = 30;

/// What to survey.
#[derive(Debug, Clone)]
pub struct SurveyPlan {
    pub repo: Repo,
    /// Inclusive.
    pub since: Timestamp,
    /// Exclusive.
    pub until: Timestamp,
    /// Workflow names, file names (`ci.yml`) or ids; empty: every workflow.
    pub workflows: Vec<String>,
    pub branch: Option<String>,
    pub event: Option<String>,
    /// Stop on Ctrl-C with `FetchError::Interrupted`.
    pub interruptible: bool,
}

/// What a survey did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SurveySummary {
    /// The repository as GitHub names it (`full_name`), whatever spelling the plan used.
    pub repo: Option<Repo>,
    pub runs_listed: u64,
    pub runs_jobs_fetched: u64,
    pub logs_settled: u64,
    /// Failed-job logs taken from an attempt's log archive (see [`archive_is_cheaper`] and
    /// the stale-attempt-log check).
    pub logs_from_archive: u64,
    /// Per-job downloads that were another execution's log (GitHub's stale-attempt-log bug).
    pub logs_not_own: u64,
    /// Logs whose own text neither the job's endpoint nor its attempt's archive gave: unknown.
    pub logs_unknown: u64,
    /// Attempt archives downloaded.
    pub archives_fetched: u64,
    /// `--junit-artifacts`: runs whose artifacts were listed, and the matching artifacts read,
    /// refused (caps, unreadable, unavailable) and expired (`artifacts.rs`).
    pub artifacts: ArtifactSummary,
    pub logs_reclassified: u64,
    pub pulls_files_fetched: u64,
    /// Runs whose jobs were not fetched: their workflow had nothing failed or re-run in the
    /// window, so no figure reads them.
    pub runs_jobs_skipped: u64,
    /// Requests made against the minimum, per kind (docs/survey.md, "The minimum").
    pub cost: SurveyCost,
    pub stats: StatsSnapshot,
}

/// What `--junit-artifacts` did in a survey.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ArtifactSummary {
    pub runs_listed: u64,
    pub read: u64,
    pub refused: u64,
    pub expired: u64,
}

/// Requests of one kind: made, and the fewest a perfect client would have made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KindCost {
    pub made: u64,
    pub minimum: u64,
}

/// A survey's requests per kind, against the minimum each needs (docs/survey.md). Retries are
/// not counted here (the closing line counts them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SurveyCost {
    /// `GET /repos/{o}/{r}` and workflow look-ups.
    pub repo: KindCost,
    /// Run list pages.
    pub runs: KindCost,
    /// Jobs pages.
    pub jobs: KindCost,
    /// Job log requests (the API's 302; the log host's answer is not counted).
    pub logs: KindCost,
    /// PR list pages.
    pub pulls: KindCost,
    /// PR changed-files pages (and any single-PR request).
    pub files: KindCost,
}

impl SurveyCost {
    pub fn made(&self) -> u64 {
        self.kinds().iter().map(|(_, k)| k.made).sum()
    }

    pub fn minimum(&self) -> u64 {
        self.kinds().iter().map(|(_, k)| k.minimum).sum()
    }

    /// Adds another survey's requests, kind by kind (a survey over several repositories).
    pub fn add(&mut self, other: &SurveyCost) {
        for (total, one) in [
            (&mut self.repo, other.repo),
            (&mut self.runs, other.runs),
            (&mut self.jobs, other.jobs),
            (&mut self.logs, other.logs),
            (&mut self.pulls, other.pulls),
            (&mut self.files, other.files),
        ] {
            total.made += one.made;
            total.minimum += one.minimum;
        }
    }

    /// Each kind with its name, in the order the closing line prints them.
    pub fn kinds(&self) -> [(&'static str, KindCost); 6] {
        [
            ("repository", self.repo),
            ("run list", self.runs),
            ("jobs", self.jobs),
            ("logs", self.logs),
            ("PR list", self.pulls),
            ("PR files", self.files),
        ]
    }
}

/// A tokio runtime and a GitHub client; every method blocks.
pub struct Session {
    pub(super) runtime: tokio::runtime::Runtime,
    pub(super) client: Arc<GitHubClient>,
    pub(super) progress: Arc<dyn Progress>,
    pub(super) junit: Option<Arc<JunitArtifacts>>,
}

impl Session {
    pub fn new(config: ClientConfig, progress: Arc<dyn Progress>) -> Result<Session, FetchError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| FetchError::Internal(format!("cannot start the async runtime: {e}")))?;
        let client = {
            let _guard = runtime.enter();
            Arc::new(GitHubClient::new(config, progress.clone())?)
        };
        Ok(Session {
            runtime,
            client,
            progress,
            junit: None,
        })
    }

    /// Also read JUnit XML from the artifacts of runs with a failed job (`artifacts.rs`).
    pub fn read_junit_artifacts(&mut self, junit: Option<JunitArtifacts>) {
        self.junit = junit.map(Arc::new);
    }

    pub fn stats(&self) -> StatsSnapshot {
        self.client.stats()
    }

    /// One run, as a webhook names it, into the store through [`Ingest`]: the repository
    /// (`GET /repos/{o}/{r}`, which also stores its identity), the run as GitHub shows it now
    /// (`GET …/actions/runs/{id}`), then [`Ingest::ingest_run`]: its jobs, failed jobs' logs or
    /// attempt archives and classification, stored; nothing fetched again for a run the store
    /// already holds at this attempt, completed. No window is recorded as listed: only a
    /// listing covers a window.
    pub fn ingest_one(
        &self,
        store: StoreHandle,
        classifier: Arc<dyn Classifier>,
        repo: &Repo,
        run: RunId,
    ) -> Result<Ingested, FetchError> {
        self.runtime.block_on(async {
            let (repo, _) = fetch_repo(&self.client, &store, repo).await?;
            let url = self.client.url(&format!(
                "/repos/{}/{}/actions/runs/{run}",
                encode(&repo.owner),
                encode(&repo.name)
            ));
            let response = self.client.get(&url, None).await?;
            if response.status == StatusCode::NOT_FOUND {
                return Err(FetchError::NotFound(format!(
                    "GitHub knows no run {run} in {repo} (or the token cannot see it)"
                )));
            }
            if response.status != StatusCode::OK {
                return Err(unexpected(&url, &response));
            }
            let run = parse_run(&url, &response.body)?;
            let ingest = Ingest::new(
                self.client.clone(),
                store,
                classifier,
                self.progress.clone(),
                repo,
            )
            .reading_junit_artifacts(self.junit.clone());
            ingest.ingest_run(&run).await
        })
    }

    /// Runs the whole survey. `prs_of_interest` names, from the window's runs with a signature
    /// hit and the default branch, the PRs whose changed files are wanted; the caller owns that
    /// policy (which branch names name a PR).
    pub fn survey(
        &self,
        store: StoreHandle,
        classifier: Arc<dyn Classifier>,
        plan: &SurveyPlan,
        prs_of_interest: &(dyn Fn(&[Run], &str) -> BTreeSet<PrNumber> + Sync),
    ) -> Result<SurveySummary, FetchError> {
        self.progress.event(ProgressEvent::Phase("repository"));
        let (repo, default_branch) =
            self.runtime
                .block_on(fetch_repo(&self.client, &store, &plan.repo))?;
        let ingest = Ingest::new(
            self.client.clone(),
            store.clone(),
            classifier.clone(),
            self.progress.clone(),
            repo.clone(),
        )
        .reading_junit_artifacts(self.junit.clone());
        let survey = Survey {
            client: self.client.clone(),
            store,
            fingerprint: classifier.fingerprint(),
            classifier,
            ingest,
            progress: self.progress.clone(),
            repo: repo.clone(),
            default_branch,
            plan: SurveyPlan {
                repo,
                ..plan.clone()
            },
            listed: Mutex::new(HashSet::new()),
            jobs_scheduled: Mutex::new(HashSet::new()),
            workflows: Mutex::new(WorkflowJobs::default()),
            // `fetch_repo` above: the one repository request, always needed.
            cost: Mutex::new(SurveyCost {
                repo: KindCost {
                    made: 1,
                    minimum: 1,
                },
                ..SurveyCost::default()
            }),
        };
        let survey = Arc::new(survey);
        let interruptible = plan.interruptible;
        let mut summary = self.runtime.block_on(async {
            let work = survey.clone().run(prs_of_interest);
            if interruptible {
                tokio::select! {
                    result = work => result,
                    _ = tokio::signal::ctrl_c() => Err(FetchError::Interrupted),
                }
            } else {
                work.await
            }
        })?;
        summary.stats = self.client.stats();
        summary.repo = Some(survey.repo.clone());
        Ok(summary)
    }
}

/// `GET /repos/{o}/{r}`: GitHub's name and id of the repository however it was spelt (GitHub
/// compares names without case), its default branch, and the first place an unknown repository
/// or a bad token shows. The store keeps one row per GitHub id under GitHub's name.
pub(super) async fn fetch_repo(
    client: &GitHubClient,
    store: &StoreHandle,
    asked: &Repo,
) -> Result<(Repo, String), FetchError> {
    let url = client.url(&format!(
        "/repos/{}/{}",
        encode(&asked.owner),
        encode(&asked.name)
    ));
    let response = client.get(&url, None).await?;
    if response.status == StatusCode::NOT_FOUND {
        return Err(FetchError::NotFound(format!(
            "GitHub knows no repository {asked} (or the token cannot see it); check the repository's name and the token's access"
        )));
    }
    if response.status != StatusCode::OK {
        return Err(unexpected(&url, &response));
    }
    let wire: WireRepo = parse_json(&url, &response.body)?;
    let repo = Repo::parse(&wire.full_name).ok_or_else(|| FetchError::Parse {
        url: url.clone(),
        error: format!("full_name {:?} is not OWNER/NAME", wire.full_name),
    })?;
    let (stored, id, branch) = (repo.clone(), wire.id, wire.default_branch.clone());
    store
        .run(move |s| s.store_repo_identity(&stored, id, &branch))
        .await
        .map_err(store_error)?;
    Ok((repo, wire.default_branch))
}

/// One unit of work; each returns the work it uncovers.
enum Task {
    /// List runs created in `[since, until)` for one listing scope.
    Window {
        scope: Arc<Scope>,
        since: Timestamp,
        until: Timestamp,
        role: WindowRole,
    },
    /// Ingest a run seen at an attempt: its jobs, then its failed jobs' logs.
    Ingest(RunAttempt),
    /// The logs a stopped survey left behind.
    LeftBehind(LeftBehind),
}

/// Where a listed window sits in the cover of the survey window.
#[derive(Debug, Clone)]
enum WindowRole {
    /// A window of the cover: recorded in the store once listed whole.
    Cover,
    /// The rest of a window whose newest 1,000 runs were listed: `[root.since, oldest)`.
    Rest(Arc<Rest>),
    /// The one second at which the newest 1,000 of a window ended, when some runs of that
    /// second were left out of them; never recorded (it lies inside the root).
    Second,
}

/// What listing a window found: GitHub's `total_count`, the oldest run read and the distinct
/// runs read.
struct Listed {
    total: u64,
    oldest: Option<Timestamp>,
    seen: u64,
}

/// What a `Rest` window needs to know about the listing it continues.
#[derive(Debug)]
struct Rest {
    /// The window of the cover this one continues, with the count GitHub gave for it.
    root: ListedWindow,
    /// `total_count` of the window whose newest 1,000 were just listed.
    above_total: u64,
    /// Distinct runs among those 1,000.
    above_seen: u64,
    /// The oldest `created_at` among them: this window ends at its second.
    oldest: Timestamp,
}

/// Which workflows need their runs' jobs: those with a run that failed or was re-run in the
/// window. Until one shows, the jobs tasks of a workflow's runs wait here.
#[derive(Default)]
struct WorkflowJobs {
    noisy: HashSet<WorkflowId>,
    held: HashMap<WorkflowId, Vec<Task>>,
}

/// One run listing: a route and its filters.
#[derive(Debug)]
struct Scope {
    /// e.g. `/repos/o/r/actions/runs`.
    path: String,
    /// Already-encoded `&k=v` filters.
    filters: String,
    /// Names the scope in the store's `windows` table.
    key: String,
    /// The `--workflow` this scope lists, for a 404's message.
    workflow: Option<String>,
    /// Distinct runs this scope's listing returned (for its minimum of pages).
    runs: std::sync::atomic::AtomicU64,
}

struct Survey {
    client: Arc<GitHubClient>,
    store: StoreHandle,
    classifier: Arc<dyn Classifier>,
    fingerprint: String,
    /// Each run's jobs and logs, and the stop of GitHub's limit.
    ingest: Ingest,
    pub(super) progress: Arc<dyn Progress>,
    /// GitHub's spelling.
    repo: Repo,
    default_branch: String,
    plan: SurveyPlan,
    listed: Mutex<HashSet<RunId>>,
    /// Runs whose jobs task was made (scheduled or held).
    jobs_scheduled: Mutex<HashSet<RunId>>,
    workflows: Mutex<WorkflowJobs>,
    /// The repository, listing and PR requests (the jobs and logs are the ingest's).
    cost: Mutex<SurveyCost>,
}

/// Covers `[since, until)` with the windows that fitted last time (`known`, by start), and new
/// windows for the gaps. Adjacent known windows are merged while together they fill at most one
/// page: a daily survey leaves one small window per day, and listing them one by one would cost
/// a round trip each where one page does.
fn plan_cover(
    since: Timestamp,
    until: Timestamp,
    known: &[ListedWindow],
) -> Vec<(Timestamp, Timestamp)> {
    let mut cover: Vec<(Timestamp, Timestamp)> = Vec::new();
    let mut cursor = since;
    // Runs in the last cover entry when it is a known window (merge candidate).
    let mut last_runs: Option<u64> = None;
    for w in known {
        if w.since < cursor || w.until > until {
            continue;
        }
        if w.since > cursor {
            cover.push((cursor, w.since));
            last_runs = None;
        }
        match (cover.last_mut(), last_runs) {
            (Some(last), Some(runs)) if runs + w.runs <= PER_PAGE && last.1 == w.since => {
                last.1 = w.until;
                last_runs = Some(runs + w.runs);
            }
            _ => {
                cover.push((w.since, w.until));
                last_runs = Some(w.runs);
            }
        }
        cursor = w.until;
    }
    if cursor < until {
        cover.push((cursor, until));
    }
    cover
}

impl Survey {
    fn repo_path(&self) -> String {
        format!(
            "/repos/{}/{}",
            encode(&self.repo.owner),
            encode(&self.repo.name)
        )
    }

    /// GET expecting 200 (or 304 with a stored body when `cached`), returning the body.
    async fn get_ok(&self, url: &str, cached: bool) -> Result<Vec<u8>, FetchError> {
        let stored = if cached {
            let url = url.to_string();
            self.store
                .run(move |s| s.cached_response(&url))
                .await
                .map_err(store_error)?
        } else {
            None
        };
        let response = self
            .client
            .get(url, stored.as_ref().map(|c| c.etag.as_str()))
            .await?;
        match response.status {
            StatusCode::OK => {
                if cached && let Some(etag) = response.etag() {
                    let (url, etag, body) =
                        (url.to_string(), etag.to_string(), response.body.clone());
                    self.store
                        .run(move |s| s.store_response(&url, &etag, &body, Utc::now()))
                        .await
                        .map_err(store_error)?;
                }
                Ok(response.body)
            }
            StatusCode::NOT_MODIFIED if stored.is_some() => {
                let url = url.to_string();
                self.store
                    .run(move |s| s.touch_response(&url, Utc::now()))
                    .await
                    .map_err(store_error)?;
                Ok(stored.expect("checked above").body)
            }
            _ => Err(unexpected(url, &response)),
        }
    }

    async fn run(
        self: Arc<Self>,
        prs_of_interest: &(dyn Fn(&[Run], &str) -> BTreeSet<PrNumber> + Sync),
    ) -> Result<SurveySummary, FetchError> {
        let mut summary = SurveySummary::default();

        self.store
            .run(|s| s.prune_responses(Utc::now() - TimeDelta::days(ETAG_DAYS)))
            .await
            .map_err(store_error)?;
        let default_branch = self.default_branch.clone();

        // Signatures changed since the logs were stored: re-classify them, no download.
        let this = self.clone();
        summary.logs_reclassified = super::blocking(move || {
            super::reclassify_stored(&this.store, &this.repo, this.classifier.as_ref())
        })
        .await?;

        self.progress.event(ProgressEvent::Phase("runs"));
        let scopes: Vec<Arc<Scope>> = self.scopes().await?.into_iter().map(Arc::new).collect();
        let mut tasks = self.cover_tasks(&scopes).await?;
        // Logs a stopped survey left behind, whatever the listing says now.
        let left = self
            .ingest
            .left_behind(self.plan.since, self.plan.until)
            .await?;
        if !left.is_empty() {
            tasks.push(Task::LeftBehind(left));
        }
        // The merged PRs need nothing from the runs: listed while the runs are, not after.
        let jobs_fetched = self.perform_with_pulls(tasks, &default_branch).await?;
        summary.runs_jobs_fetched = jobs_fetched;
        self.count_listing(&scopes, &mut summary);

        self.progress.event(ProgressEvent::Phase("pull requests"));
        summary.pulls_files_fetched = self
            .fetch_files_of_interest(prs_of_interest, &default_branch)
            .await?;
        summary.cost = *self.cost();
        summary.cost.add(&self.ingest.cost());
        // Where the jobs whose logs this survey stored ran: their preambles, no request.
        let this = self.clone();
        super::blocking(move || flakestat_store::reread_preambles(&this.store, &this.repo)).await?;
        Ok(summary)
    }

    /// The listing tasks: each scope's cover windows.
    async fn cover_tasks(&self, scopes: &[Arc<Scope>]) -> Result<Vec<Task>, FetchError> {
        let mut tasks = Vec::new();
        for scope in scopes {
            for (since, until) in self.cover(scope).await? {
                tasks.push(Task::Window {
                    scope: scope.clone(),
                    since,
                    until,
                    role: WindowRole::Cover,
                });
            }
        }
        Ok(tasks)
    }

    /// The tasks (`perform_all`) and the merged PRs' listing at once. An error that is not a
    /// stop (`is_stop`) returns at once and drops the other work; a stop lets the other end in
    /// order, then returns (the closing line learns how many logs were finished meanwhile).
    async fn perform_with_pulls(
        self: &Arc<Self>,
        tasks: Vec<Task>,
        default_branch: &str,
    ) -> Result<u64, FetchError> {
        let work = self.clone().perform_all(tasks);
        let pulls = async {
            let listed = self.fetch_merged_pulls(default_branch).await;
            if let Err(e) = &listed
                && is_stop(e)
            {
                self.ingest.begin_stop();
            }
            listed
        };
        tokio::pin!(work, pulls);
        let (mut jobs, mut pulled) = (None, None);
        while jobs.is_none() || pulled.is_none() {
            tokio::select! {
                done = &mut work, if jobs.is_none() => {
                    if let Err(e) = &done && !is_stop(e) {
                        return done;
                    }
                    jobs = Some(done);
                }
                done = &mut pulls, if pulled.is_none() => {
                    if let Err(e) = done {
                        if !is_stop(&e) {
                            return Err(e);
                        }
                        pulled = Some(Err(e));
                    } else {
                        pulled = Some(Ok(()));
                    }
                }
            }
        }
        if let Some(stored) = self.ingest.stored_since_stop() {
            self.client.note_stop(stored);
        }
        let jobs = jobs.expect("awaited above")?;
        pulled.expect("awaited above")?;
        Ok(jobs)
    }

    /// Performs the tasks and every task they uncover; returns how many runs were ingested. An
    /// error stops the others at once, unless it is a stop (`is_stop`): then no task starts,
    /// those under way end (the API refuses them at once; downloads redirected to the log host
    /// finish and are stored), what they uncover is left for the next survey (the store knows
    /// it), and the stop is returned.
    async fn perform_all(self: Arc<Self>, tasks: Vec<Task>) -> Result<u64, FetchError> {
        // Only a few tasks are futures at a time (`tasks.rs`). A run's logs are part of its
        // ingest, which takes them before the next run: they are what the survey is for, and a
        // stopped survey should have as many as possible. Stopped by the merged PRs' listing,
        // this returns Ok: `perform_with_pulls` returns its error.
        let mut jobs_fetched = 0;
        tasks::perform_all(
            tasks,
            self.client.concurrency() * 2,
            &self.ingest,
            |task| {
                if let Task::Ingest(_) = task {
                    jobs_fetched += 1;
                }
                self.clone().perform(task)
            },
            |more| more,
        )
        .await?;
        Ok(jobs_fetched)
    }

    /// The listing's and the logs' counts into `summary`, and the run listing's minimum.
    fn count_listing(&self, scopes: &[Arc<Scope>], summary: &mut SurveySummary) {
        summary.runs_listed = self.listed.lock().expect("listed lock").len() as u64;
        self.ingest.count_logs(summary);
        summary.runs_jobs_skipped = std::mem::take(&mut self.workflows.lock().expect("lock").held)
            .values()
            .map(|held| held.len() as u64)
            .sum();
        // A perfect listing reads each scope's runs in full pages.
        self.cost().runs.minimum = scopes
            .iter()
            .map(|s| {
                let runs = s.runs.load(std::sync::atomic::Ordering::Relaxed);
                runs.div_ceil(PER_PAGE).max(1)
            })
            .sum();
    }

    /// The changed files of the PRs the caller names from the runs with a hit; returns how
    /// many PRs' files were fetched.
    async fn fetch_files_of_interest(
        &self,
        prs_of_interest: &(dyn Fn(&[Run], &str) -> BTreeSet<PrNumber> + Sync),
        default_branch: &str,
    ) -> Result<u64, FetchError> {
        // Only the runs with a hit are read back, not the whole window.
        let (repo, since, until) = (self.repo.clone(), self.plan.since, self.plan.until);
        let fingerprint = self.fingerprint.clone();
        let hit_runs = self
            .store
            .run(move |s| s.runs_with_hits(&repo, since, until, &fingerprint))
            .await
            .map_err(store_error)?;
        // The web host, for the link of a PR no listing returned (GitHub Enterprise Server too).
        let web = hit_runs.iter().find_map(|r| {
            r.html_url
                .split_once("/actions/runs/")
                .map(|(w, _)| w.to_string())
        });
        let mut wanted = Vec::new();
        for number in prs_of_interest(&hit_runs, default_branch) {
            let repo = self.repo.clone();
            let known = self
                .store
                .run(move |s| s.load_pull(&repo, number))
                .await
                .map_err(store_error)?;
            if known.as_ref().is_some_and(|p| p.files.is_some()) {
                continue;
            }
            let stub = match known {
                Some(_) => None,
                None => Some(PullRequest {
                    number,
                    title: String::new(),
                    state: String::new(),
                    base_ref: String::new(),
                    head_ref: String::new(),
                    merged_at: None,
                    merge_commit_sha: None,
                    html_url: web
                        .as_ref()
                        .map(|w| format!("{w}/pull/{number}"))
                        .unwrap_or_default(),
                    files: None,
                    head: None,
                }),
            };
            wanted.push((number, stub));
        }
        // As many PRs at once as requests may be in flight: one after the other, the files of
        // a month's few dozen PRs with a hit were the survey's longest wait after the logs.
        stream::iter(wanted)
            .map(|(number, stub)| self.fetch_pull_files(number, stub))
            .buffer_unordered(self.client.concurrency())
            .try_fold(
                0,
                |fetched, found| async move { Ok(fetched + u64::from(found)) },
            )
            .await
    }

    async fn perform(self: Arc<Self>, task: Task) -> Result<Vec<Task>, FetchError> {
        if self.ingest.stopping() {
            return Ok(Vec::new());
        }
        match task {
            Task::Window {
                scope,
                since,
                until,
                role,
            } => self.list_window(scope, since, until, role).await,
            Task::Ingest(attempt) => self.ingest.ingest(attempt).await.map(|_| Vec::new()),
            Task::LeftBehind(left) => self
                .ingest
                .settle_left_behind(left)
                .await
                .map(|_| Vec::new()),
        }
    }

    /// One listing scope per `--workflow` (or one for all), with the branch and event filters.
    async fn scopes(&self) -> Result<Vec<Scope>, FetchError> {
        let mut filters = String::new();
        let mut key = String::new();
        if let Some(branch) = &self.plan.branch {
            filters.push_str(&format!("&branch={}", encode(branch)));
            key.push_str(&format!(" branch={branch}"));
        }
        if let Some(event) = &self.plan.event {
            filters.push_str(&format!("&event={}", encode(event)));
            key.push_str(&format!(" event={event}"));
        }
        let base = self.repo_path();
        if self.plan.workflows.is_empty() {
            return Ok(vec![Scope {
                path: format!("{base}/actions/runs"),
                filters,
                key: format!("all{key}"),
                workflow: None,
                runs: Default::default(),
            }]);
        }
        let mut scopes = Vec::new();
        for workflow in &self.plan.workflows {
            let id = self.resolve_workflow(workflow).await?;
            scopes.push(Scope {
                path: format!("{base}/actions/workflows/{}/runs", encode(&id)),
                filters: filters.clone(),
                key: format!("workflow={id}{key}"),
                workflow: Some(workflow.clone()),
                runs: Default::default(),
            });
        }
        Ok(scopes)
    }

    /// A file name (`ci.yml`) or id is used as is; a workflow's name is looked up.
    async fn resolve_workflow(&self, workflow: &str) -> Result<String, FetchError> {
        let is_file = workflow.ends_with(".yml") || workflow.ends_with(".yaml");
        if is_file || workflow.chars().all(|c| c.is_ascii_digit()) {
            return Ok(workflow.rsplit('/').next().unwrap_or(workflow).to_string());
        }
        let url = self.client.url(&format!(
            "{}/actions/workflows?per_page=100",
            self.repo_path()
        ));
        {
            let mut cost = self.cost();
            cost.repo.made += 1;
            cost.repo.minimum += 1;
        }
        let body = self.get_ok(&url, false).await?;
        let list: WorkflowList = parse_json(&url, &body)?;
        list.workflows
            .iter()
            .find(|w| w.name.eq_ignore_ascii_case(workflow))
            .map(|w| w.id.to_string())
            .ok_or_else(|| {
                let names: Vec<String> = list
                    .workflows
                    .iter()
                    .map(|w| format!("{} ({})", w.name, w.path))
                    .collect();
                FetchError::NotFound(format!(
                    "no workflow named {workflow:?} in {}; known: {}",
                    self.repo,
                    names.join(", ")
                ))
            })
    }

    /// The windows to list: those that fitted last time, and new ones for the gaps.
    async fn cover(&self, scope: &Scope) -> Result<Vec<(Timestamp, Timestamp)>, FetchError> {
        let (repo, key) = (self.repo.clone(), scope.key.clone());
        let (since, until) = (self.plan.since, self.plan.until);
        let known = self
            .store
            .run(move |s| s.load_windows(&repo, &key, since, until))
            .await
            .map_err(store_error)?;
        Ok(plan_cover(self.plan.since, self.plan.until, &known))
    }

    fn list_url(&self, scope: &Scope, since: Timestamp, until: Timestamp, page: u64) -> String {
        // `created=A..B` is inclusive at both ends and has one-second resolution.
        let last = until - TimeDelta::seconds(1);
        let created = format!("{}..{}", github_time(since), github_time(last));
        self.client.url(&format!(
            "{}?created={}{}&per_page={PER_PAGE}&page={page}",
            scope.path,
            encode(&created),
            scope.filters
        ))
    }

    /// GET one run list page (with its ETag), counted as a run-list request.
    async fn fetch_run_page(&self, url: &str) -> Result<RunList, FetchError> {
        self.cost().runs.made += 1;
        let body = self.get_ok(url, true).await?;
        parse_json::<RunList>(url, &body)
    }

    fn cost(&self) -> std::sync::MutexGuard<'_, SurveyCost> {
        self.cost.lock().expect("cost lock")
    }

    /// Lists one window. When GitHub reports more than the cap, its newest 1,000 runs (pages 1
    /// to 10) are read, and the rest of the window, up to the second of the oldest of them, is
    /// listed next: every page holds runs that are kept, so a window of N runs costs
    /// ⌈N/100⌉ pages (one more only when runs created in that same second were cut off). A
    /// window that fits has all its pages read at once.
    async fn list_window(
        self: Arc<Self>,
        scope: Arc<Scope>,
        since: Timestamp,
        until: Timestamp,
        role: WindowRole,
    ) -> Result<Vec<Task>, FetchError> {
        let url = self.list_url(&scope, since, until, 1);
        let first = match (self.fetch_run_page(&url).await, &scope.workflow) {
            (Err(FetchError::Unexpected { status: 404, .. }), Some(workflow)) => {
                return Err(FetchError::NotFound(format!(
                    "{} has no workflow {workflow:?}; pass its file name (ci.yml), name or id",
                    self.repo
                )));
            }
            (result, _) => result?,
        };
        let total = first.total_count;
        let mut tasks = Vec::new();
        if let WindowRole::Rest(rest) = &role
            && rest.above_seen + total < rest.above_total
        {
            // Runs of the second where the newest 1,000 ended were cut off from them.
            tasks.push(Task::Window {
                scope: scope.clone(),
                since: rest.oldest,
                until: rest.oldest + TimeDelta::seconds(1),
                role: WindowRole::Second,
            });
        }
        let over = total > LISTING_CAP;
        if over && until - since <= TimeDelta::seconds(1) {
            self.progress.event(ProgressEvent::Note(format!(
                "{total} runs were created in the second {}: GitHub lists only {LISTING_CAP} of them",
                github_time(since)
            )));
        }
        let pages = total.min(LISTING_CAP).div_ceil(PER_PAGE);
        let mut oldest: Option<Timestamp> = None;
        let mut seen: HashSet<RunId> = HashSet::new();
        let mut note = |list: &RunList| {
            for r in &list.workflow_runs {
                seen.insert(RunId(r.id));
                oldest = Some(oldest.map_or(r.created_at, |o| o.min(r.created_at)));
            }
        };
        note(&first);
        tasks.extend(self.take_runs(&scope, first).await?);
        let mut set = JoinSet::new();
        for page in 2..=pages {
            let this = self.clone();
            let url = self.list_url(&scope, since, until, page);
            set.spawn(async move { this.fetch_run_page(&url).await });
        }
        while let Some(joined) = set.join_next().await {
            let list = joined.expect("listing tasks do not panic")?;
            note(&list);
            tasks.extend(self.take_runs(&scope, list).await?);
        }
        let listed = Listed {
            total,
            oldest,
            seen: seen.len() as u64,
        };
        tasks.extend(
            self.after_listing(scope, since, until, &role, listed)
                .await?,
        );
        Ok(tasks)
    }

    /// After a window is listed: the window of the runs the cap cut off (or of the one second
    /// they all began in), or, the window listed whole, its record in the store so a repeat
    /// lists it the same way.
    async fn after_listing(
        &self,
        scope: Arc<Scope>,
        since: Timestamp,
        until: Timestamp,
        role: &WindowRole,
        listed: Listed,
    ) -> Result<Option<Task>, FetchError> {
        let Listed {
            total,
            oldest,
            seen,
        } = listed;
        let over = total > LISTING_CAP;
        let root = match role {
            WindowRole::Cover => Some(ListedWindow {
                since,
                until,
                runs: total,
            }),
            WindowRole::Rest(rest) => Some(rest.root),
            WindowRole::Second => None,
        };
        if over && until - since > TimeDelta::seconds(1) {
            let oldest = oldest.unwrap_or(since).max(since);
            let rest = Rest {
                root: root.expect("a one-second window is never over the cap here"),
                above_total: total,
                above_seen: seen,
                oldest,
            };
            return Ok(Some(if oldest > since {
                Task::Window {
                    scope,
                    since,
                    until: oldest,
                    role: WindowRole::Rest(Arc::new(rest)),
                }
            } else {
                // The newest 1,000 all began in the window's first second.
                Task::Window {
                    scope,
                    since,
                    until: since + TimeDelta::seconds(1),
                    role: WindowRole::Second,
                }
            }));
        }
        // The whole cover window is listed: a repeat lists it the same way (the same URLs,
        // answered 304) without asking whether it fits.
        if let Some(root) = root {
            let (repo, key) = (self.repo.clone(), scope.key.clone());
            self.store
                .run(move |s| s.store_window(&repo, &key, &root))
                .await
                .map_err(store_error)?;
        }
        Ok(None)
    }

    /// Stores a page of runs; returns the jobs tasks of those that can have changed and whose
    /// workflow needs them. The others wait until a run of their workflow fails or is re-run,
    /// and are dropped if none does.
    async fn take_runs(&self, scope: &Scope, list: RunList) -> Result<Vec<Task>, FetchError> {
        let runs: Vec<_> = list
            .workflow_runs
            .into_iter()
            .map(|r| r.into_model())
            // The listing is by creation time; a run outside the window (a clock edge) is
            // not ours to store as part of it.
            .filter(|r| r.created_at >= self.plan.since && r.created_at < self.plan.until)
            .collect();
        let (repo, stored) = (self.repo.clone(), runs.clone());
        let need = self
            .store
            .run(move |s| s.store_runs(&repo, &stored))
            .await
            .map_err(store_error)?;
        let listed = {
            let mut listed = self.listed.lock().expect("listed lock");
            for r in &runs {
                if listed.insert(r.id) {
                    scope
                        .runs
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            }
            listed.len() as u64
        };
        self.progress.event(ProgressEvent::RunsListed(listed));
        let need: HashSet<RunId> = need.into_iter().collect();
        let mut tasks: Vec<Task> = Vec::new();
        {
            let mut scheduled = self.jobs_scheduled.lock().expect("jobs lock");
            let mut workflows = self.workflows.lock().expect("workflows lock");
            for r in &runs {
                if r.needs_workflow_jobs() && workflows.noisy.insert(r.workflow_id) {
                    tasks.extend(workflows.held.remove(&r.workflow_id).unwrap_or_default());
                }
                if !need.contains(&r.id) || !scheduled.insert(r.id) {
                    continue;
                }
                let task = Task::Ingest(RunAttempt::of(r));
                if workflows.noisy.contains(&r.workflow_id) {
                    tasks.push(task);
                } else {
                    workflows.held.entry(r.workflow_id).or_default().push(task);
                }
            }
        }
        self.progress
            .event(ProgressEvent::JobsQueued(tasks.len() as u64));
        Ok(tasks)
    }

    /// Closed PRs into the default branch, most recently updated first, until they are older
    /// than the window's history: their merge time and merge commit date first hits.
    async fn fetch_merged_pulls(&self, default_branch: &str) -> Result<(), FetchError> {
        let oldest = self.plan.since - TimeDelta::days(HISTORY_DAYS);
        let url = self.client.url(&format!(
            "{}/pulls?state=closed&base={}&sort=updated&direction=desc&per_page={PER_PAGE}",
            self.repo_path(),
            encode(default_branch)
        ));
        let mut pages =
            Listing::new(&self.client, url).pages::<Vec<WirePull>, FetchError, _>(unexpected);
        while let Some(page) = pages.next().await? {
            let reached_older = page
                .last()
                .is_none_or(|p| p.updated_at.is_some_and(|u| u < oldest));
            // A page is needed when it holds a PR updated within the lookback (or is the
            // first: GitHub must say the list is empty).
            let needed = page
                .iter()
                .any(|p| p.updated_at.is_none_or(|u| u >= oldest));
            if needed || self.cost().pulls.minimum == 0 {
                self.cost().pulls.minimum += 1;
            }
            let merged: Vec<_> = page
                .into_iter()
                // Merged within the window's history; a page also holds older ones.
                .filter(|p| p.merged_at.is_some_and(|m| m >= oldest))
                .map(WirePull::into_model)
                .collect();
            let repo = self.repo.clone();
            self.store
                .run(move |s| s.store_pulls(&repo, &merged))
                .await
                .map_err(store_error)?;
            if reached_older {
                break;
            }
        }
        let walked = pages.walked();
        self.cost().pulls.made += walked.pages;
        Ok(())
    }

    /// A PR's changed files. `false` when GitHub does not know the PR (deleted, or a number
    /// from a branch name that is not a PR). A PR no listing returned is not asked for
    /// (`GET /pulls/{n}` would cost a request per PR and no figure reads more than its
    /// number, link and files): `stub` is stored for it with the files; a later listing that
    /// returns the PR replaces it and keeps the files.
    async fn fetch_pull_files(
        &self,
        number: PrNumber,
        stub: Option<PullRequest>,
    ) -> Result<bool, FetchError> {
        let pr_url = self
            .client
            .url(&format!("{}/pulls/{number}", self.repo_path()));
        let url = format!("{pr_url}/files?per_page={PER_PAGE}");
        let mut files = Vec::new();
        let mut listed = 0usize;
        let walked = Listing::new(&self.client, url)
            .absent_on(&[StatusCode::NOT_FOUND])
            .walk::<Vec<WireFile>, FetchError>(unexpected, |page| {
                listed += page.len();
                for file in page {
                    files.extend(file.previous_filename);
                    files.push(file.filename);
                }
                Ok(Flow::More)
            })
            .await?;
        self.cost().files.made += walked.pages;
        if walked.end == End::Absent {
            return Ok(false);
        }
        // Each item is one changed file (a rename names two paths).
        self.cost().files.minimum += (listed as u64).div_ceil(PER_PAGE).max(1);
        files.sort();
        files.dedup();
        let repo = self.repo.clone();
        self.store
            .run(move |s| {
                if let Some(stub) = stub {
                    s.store_pulls(&repo, &[stub])?;
                }
                s.store_pull_files(&repo, number, &files)
            })
            .await
            .map_err(store_error)?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cover_reuses_known_windows_merges_small_ones_and_fills_gaps() {
        let t = |h: i64| {
            chrono::DateTime::parse_from_rfc3339("2026-06-01T00:00:00Z")
                .unwrap()
                .to_utc()
                + TimeDelta::hours(h)
        };
        let w = |a, b, runs| ListedWindow {
            since: t(a),
            until: t(b),
            runs,
        };
        assert_eq!(plan_cover(t(0), t(10), &[]), vec![(t(0), t(10))]);
        let known = [
            w(1, 2, 600), // big: kept alone
            w(2, 3, 30),  // small ones merge...
            w(3, 4, 30),
            w(4, 5, 50), // ...until a page is full
            w(6, 7, 10), // after a gap
            w(8, 12, 5), // beyond `until`: ignored
        ];
        assert_eq!(
            plan_cover(t(0), t(10), &known),
            vec![
                (t(0), t(1)),
                (t(1), t(2)),
                (t(2), t(4)),
                (t(4), t(5)),
                (t(5), t(6)),
                (t(6), t(7)),
                (t(7), t(10)),
            ]
        );
    }

    #[test]
    fn query_values_are_encoded() {
        assert_eq!(
            encode("2026-06-15T00:00:00Z..2026-06-15T23:59:59Z"),
            "2026-06-15T00%3A00%3A00Z..2026-06-15T23%3A59%3A59Z"
        );
        assert_eq!(encode("pull-request/12"), "pull-request%2F12");
    }
}
