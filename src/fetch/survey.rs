//! The survey: every run created in a window (listing split under the 1,000-result cap), the jobs
//! of every attempt of the runs that can have changed in the workflows that had a failed or
//! re-run run, the log of every failed job not yet stored (classified as it arrives), then
//! merged pull requests and the files of the PRs the caller names. It asks for what a figure
//! needs and no more: docs/survey.md, "The minimum", and `SurveyCost` counts it.
//!
//! Work is a set of tasks (list a window, fetch a run's jobs, fetch a log) run concurrently; the
//! client bounds what is in flight. Each task commits its own result in one transaction before it
//! ends, so stopping at any point (Ctrl-C, a spent rate limit, an error) leaves a consistent
//! store that the next survey resumes from: it re-lists (cheaply, with ETags), skips runs whose
//! completed attempt is stored, and downloads only the logs still missing.

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};

use chrono::{TimeDelta, Utc};
use http::StatusCode;
use serde::de::DeserializeOwned;
use tokio::task::JoinSet;

use super::client::{ClientConfig, GitHubClient, Response, StatsSnapshot};
use super::wire::{JobList, RunList, WireFile, WirePull, WireRepo, WorkflowList};
use super::{Classifier, FetchError, Progress, ProgressEvent};
use crate::model::{JobId, PullRequest, Repo, Run, RunId, Timestamp, WorkflowId};
use crate::store::{HISTORY_DAYS, ListedWindow, LogEntry, Store, compress_log};

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
    pub runs_listed: u64,
    pub runs_jobs_fetched: u64,
    pub logs_settled: u64,
    pub logs_reclassified: u64,
    pub pulls_files_fetched: u64,
    /// Runs whose jobs were not fetched: their workflow had nothing failed or re-run in the
    /// window, so no figure reads them.
    pub runs_jobs_skipped: u64,
    /// Requests made against the minimum, per kind (docs/survey.md, "The minimum").
    pub cost: SurveyCost,
    pub stats: StatsSnapshot,
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
    progress: Arc<dyn Progress>,
}

impl Session {
    pub fn new(config: ClientConfig, progress: Arc<dyn Progress>) -> Result<Session, FetchError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| FetchError::Config(format!("cannot start the async runtime: {e}")))?;
        let client = {
            let _guard = runtime.enter();
            Arc::new(GitHubClient::new(config, progress.clone())?)
        };
        Ok(Session {
            runtime,
            client,
            progress,
        })
    }

    pub fn stats(&self) -> StatsSnapshot {
        self.client.stats()
    }

    /// Runs the whole survey. `prs_of_interest` names, from the window's runs with a signature
    /// hit and the default branch, the PRs whose changed files are wanted; the caller owns that
    /// policy (which branch names name a PR).
    pub fn survey(
        &self,
        store: Arc<Mutex<Store>>,
        classifier: Arc<dyn Classifier>,
        plan: &SurveyPlan,
        prs_of_interest: &(dyn Fn(&[Run], &str) -> BTreeSet<u64> + Sync),
    ) -> Result<SurveySummary, FetchError> {
        let survey = Survey {
            client: self.client.clone(),
            store,
            fingerprint: classifier.fingerprint(),
            classifier,
            progress: self.progress.clone(),
            repo: plan.repo.clone(),
            plan: plan.clone(),
            listed: Mutex::new(HashSet::new()),
            jobs_scheduled: Mutex::new(HashSet::new()),
            workflows: Mutex::new(WorkflowJobs::default()),
            cost: Mutex::new(SurveyCost::default()),
            logs_scheduled: Mutex::new(HashSet::new()),
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
        Ok(summary)
    }
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
    /// Fetch every attempt's jobs of a run seen at `attempt`.
    Jobs {
        run: RunId,
        attempt: u32,
        completed: bool,
    },
    /// Fetch, classify and store one failed job's log.
    Log { job: JobId },
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

/// Whether a run, as listed, means its workflow's jobs are needed: it failed (anything but a
/// green, skipped or neutral conclusion once completed; a cancelled run may hold failed jobs)
/// or was re-run. A run still going says nothing yet.
fn needs_workflow_jobs(run: &Run) -> bool {
    run.run_attempt > 1
        || (run.is_completed()
            && !matches!(
                run.conclusion.as_deref(),
                Some("success" | "skipped" | "neutral")
            ))
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
    store: Arc<Mutex<Store>>,
    classifier: Arc<dyn Classifier>,
    fingerprint: String,
    progress: Arc<dyn Progress>,
    repo: Repo,
    plan: SurveyPlan,
    listed: Mutex<HashSet<RunId>>,
    /// Runs whose jobs task was made (scheduled or held).
    jobs_scheduled: Mutex<HashSet<RunId>>,
    workflows: Mutex<WorkflowJobs>,
    logs_scheduled: Mutex<HashSet<JobId>>,
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

/// Percent-encodes a query value (RFC 3986 unreserved characters pass).
pub(super) fn encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

pub(super) fn github_time(t: Timestamp) -> String {
    t.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

pub(super) fn parse_json<T: DeserializeOwned>(url: &str, body: &[u8]) -> Result<T, FetchError> {
    serde_json::from_slice(body).map_err(|e| FetchError::Parse {
        url: url.to_string(),
        error: e.to_string(),
    })
}

/// Maps the statuses no caller handles itself.
pub(super) fn unexpected(url: &str, response: &Response) -> FetchError {
    let status = response.status.as_u16();
    let message = response.message();
    match response.status {
        StatusCode::UNAUTHORIZED => FetchError::Unauthorized { status, message },
        StatusCode::FORBIDDEN => FetchError::Forbidden { status, message },
        _ => FetchError::Unexpected {
            url: url.to_string(),
            status,
            message,
        },
    }
}

impl Survey {
    fn store(&self) -> std::sync::MutexGuard<'_, Store> {
        self.store.lock().expect("store lock")
    }

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
            self.store().cached_response(url)?
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
                    self.store()
                        .store_response(url, etag, &response.body, Utc::now())?;
                }
                Ok(response.body)
            }
            StatusCode::NOT_MODIFIED if stored.is_some() => {
                self.store().touch_response(url, Utc::now())?;
                Ok(stored.expect("checked above").body)
            }
            _ => Err(unexpected(url, &response)),
        }
    }

    async fn run(
        self: Arc<Self>,
        prs_of_interest: &(dyn Fn(&[Run], &str) -> BTreeSet<u64> + Sync),
    ) -> Result<SurveySummary, FetchError> {
        let mut summary = SurveySummary::default();

        self.store()
            .prune_responses(Utc::now() - TimeDelta::days(ETAG_DAYS))?;
        self.progress.event(ProgressEvent::Phase("repository"));
        let default_branch = self.fetch_repo().await?;

        // Signatures changed since the logs were stored: re-classify them, no download.
        let this = self.clone();
        summary.logs_reclassified = tokio::task::spawn_blocking(move || {
            super::reclassify_stored(&this.store, &this.repo, this.classifier.as_ref())
        })
        .await
        .expect("classification does not panic")?;

        self.progress.event(ProgressEvent::Phase("runs"));
        let mut tasks: Vec<Task> = Vec::new();
        let scopes: Vec<Arc<Scope>> = self.scopes().await?.into_iter().map(Arc::new).collect();
        for scope in &scopes {
            for (since, until) in self.cover(scope)? {
                tasks.push(Task::Window {
                    scope: scope.clone(),
                    since,
                    until,
                    role: WindowRole::Cover,
                });
            }
        }
        // Logs left behind by an interrupted survey, whatever the listing says now.
        let pending =
            self.store()
                .failed_jobs_without_log(&self.repo, self.plan.since, self.plan.until)?;
        tasks.extend(self.schedule_logs(pending.into_iter().map(|(_, job)| job)));

        // Uncovered work waits in a queue of small `Task`s; only a few are futures at a time, so
        // memory does not grow with the number of runs. Logs go first: they are what the
        // survey is for, and a stopped survey should have as many as possible.
        let in_flight = self.client.concurrency() * 2;
        let mut queue: VecDeque<Task> = tasks.into();
        let mut set: JoinSet<Result<Vec<Task>, FetchError>> = JoinSet::new();
        loop {
            while set.len() < in_flight
                && let Some(task) = queue.pop_front()
            {
                match task {
                    Task::Jobs { .. } => summary.runs_jobs_fetched += 1,
                    Task::Log { .. } => summary.logs_settled += 1,
                    Task::Window { .. } => {}
                }
                set.spawn(self.clone().perform(task));
            }
            let Some(joined) = set.join_next().await else {
                break;
            };
            match joined.expect("survey tasks do not panic") {
                Ok(more) => {
                    for task in more {
                        match task {
                            Task::Log { .. } => queue.push_front(task),
                            _ => queue.push_back(task),
                        }
                    }
                }
                Err(err) => {
                    set.abort_all();
                    while set.join_next().await.is_some() {}
                    return Err(err);
                }
            }
        }
        summary.runs_listed = self.listed.lock().expect("listed lock").len() as u64;
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

        self.progress.event(ProgressEvent::Phase("pull requests"));
        self.fetch_merged_pulls(&default_branch).await?;
        // Only the runs with a hit are read back, not the whole window.
        let hit_runs = self.store().runs_with_hits(
            &self.repo,
            self.plan.since,
            self.plan.until,
            &self.fingerprint,
        )?;
        // The web host, for the link of a PR no listing returned (GitHub Enterprise Server too).
        let web = hit_runs.iter().find_map(|r| {
            r.html_url
                .split_once("/actions/runs/")
                .map(|(w, _)| w.to_string())
        });
        for number in prs_of_interest(&hit_runs, &default_branch) {
            let known = self.store().load_pull(&self.repo, number)?;
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
                }),
            };
            if self.fetch_pull_files(number, stub).await? {
                summary.pulls_files_fetched += 1;
            }
        }
        summary.cost = *self.cost();
        Ok(summary)
    }

    async fn perform(self: Arc<Self>, task: Task) -> Result<Vec<Task>, FetchError> {
        match task {
            Task::Window {
                scope,
                since,
                until,
                role,
            } => self.list_window(scope, since, until, role).await,
            Task::Jobs {
                run,
                attempt,
                completed,
            } => self.fetch_jobs(run, attempt, completed).await,
            Task::Log { job } => self.fetch_log(job).await.map(|()| Vec::new()),
        }
    }

    /// `GET /repos/{o}/{r}`: the default branch, and the first place an unknown repository or a
    /// bad token shows.
    async fn fetch_repo(&self) -> Result<String, FetchError> {
        let url = self.client.url(&self.repo_path());
        {
            let mut cost = self.cost();
            cost.repo.made += 1;
            cost.repo.minimum += 1;
        }
        let response = self.client.get(&url, None).await?;
        if response.status == StatusCode::NOT_FOUND {
            return Err(FetchError::NotFound(format!(
                "GitHub knows no repository {} (or the token cannot see it); check --repo and the token's access",
                self.repo
            )));
        }
        if response.status != StatusCode::OK {
            return Err(unexpected(&url, &response));
        }
        let repo: WireRepo = parse_json(&url, &response.body)?;
        self.store().store_repo(&self.repo, &repo.default_branch)?;
        Ok(repo.default_branch)
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
    fn cover(&self, scope: &Scope) -> Result<Vec<(Timestamp, Timestamp)>, FetchError> {
        let known =
            self.store()
                .load_windows(&self.repo, &scope.key, self.plan.since, self.plan.until)?;
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
        tasks.extend(self.take_runs(&scope, first)?);
        let mut set = JoinSet::new();
        for page in 2..=pages {
            let this = self.clone();
            let url = self.list_url(&scope, since, until, page);
            set.spawn(async move { this.fetch_run_page(&url).await });
        }
        while let Some(joined) = set.join_next().await {
            let list = joined.expect("listing tasks do not panic")?;
            note(&list);
            tasks.extend(self.take_runs(&scope, list)?);
        }
        let root = match &role {
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
                above_seen: seen.len() as u64,
                oldest,
            };
            if oldest > since {
                tasks.push(Task::Window {
                    scope,
                    since,
                    until: oldest,
                    role: WindowRole::Rest(Arc::new(rest)),
                });
            } else {
                // The newest 1,000 all began in the window's first second.
                tasks.push(Task::Window {
                    scope,
                    since,
                    until: since + TimeDelta::seconds(1),
                    role: WindowRole::Second,
                });
            }
            return Ok(tasks);
        }
        // The whole cover window is listed: a repeat lists it the same way (the same URLs,
        // answered 304) without asking whether it fits.
        if let Some(root) = root {
            self.store().store_window(&self.repo, &scope.key, &root)?;
        }
        Ok(tasks)
    }

    /// Stores a page of runs; returns the jobs tasks of those that can have changed and whose
    /// workflow needs them. The others wait until a run of their workflow fails or is re-run,
    /// and are dropped if none does.
    fn take_runs(&self, scope: &Scope, list: RunList) -> Result<Vec<Task>, FetchError> {
        let runs: Vec<_> = list
            .workflow_runs
            .into_iter()
            .map(|r| r.into_model())
            // The listing is by creation time; a run outside the window (a clock edge) is
            // not ours to store as part of it.
            .filter(|r| r.created_at >= self.plan.since && r.created_at < self.plan.until)
            .collect();
        let need = self.store().store_runs(&self.repo, &runs)?;
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
                if needs_workflow_jobs(r) && workflows.noisy.insert(r.workflow_id) {
                    tasks.extend(workflows.held.remove(&r.workflow_id).unwrap_or_default());
                }
                if !need.contains(&r.id) || !scheduled.insert(r.id) {
                    continue;
                }
                let task = Task::Jobs {
                    run: r.id,
                    attempt: r.run_attempt,
                    completed: r.is_completed(),
                };
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

    /// Every job of every attempt (`filter=all`), committed with the run in one transaction.
    async fn fetch_jobs(
        &self,
        run: RunId,
        attempt: u32,
        completed: bool,
    ) -> Result<Vec<Task>, FetchError> {
        let mut url = Some(self.client.url(&format!(
            "{}/actions/runs/{run}/jobs?filter=all&per_page={PER_PAGE}",
            self.repo_path()
        )));
        let mut jobs = Vec::new();
        while let Some(page_url) = url.take() {
            self.cost().jobs.made += 1;
            let response = self.client.get(&page_url, None).await?;
            if response.status != StatusCode::OK {
                return Err(unexpected(&page_url, &response));
            }
            let list: JobList = parse_json(&page_url, &response.body)?;
            // Follow `Link: rel="next"`, not `total_count`: with `filter=all` its meaning is
            // not documented, and a short count would lose an attempt's jobs.
            let more = !list.jobs.is_empty();
            jobs.extend(list.jobs.into_iter().map(|j| j.into_model()));
            if more {
                url = response.next_link();
            }
        }
        self.cost().jobs.minimum += (jobs.len() as u64).div_ceil(PER_PAGE).max(1);
        self.store().store_jobs(run, attempt, completed, &jobs)?;
        self.progress.event(ProgressEvent::JobsDone);
        let failed: Vec<JobId> = jobs
            .iter()
            .filter(|j| j.is_failed())
            .map(|j| j.id)
            .collect();
        let mut without_log = Vec::new();
        {
            let store = self.store();
            for job in failed {
                if !store.has_log(job)? {
                    without_log.push(job);
                }
            }
        }
        Ok(self.schedule_logs(without_log))
    }

    fn schedule_logs(&self, jobs: impl IntoIterator<Item = JobId>) -> Vec<Task> {
        let mut scheduled = self.logs_scheduled.lock().expect("logs lock");
        let tasks: Vec<Task> = jobs
            .into_iter()
            .filter(|j| scheduled.insert(*j))
            .map(|job| Task::Log { job })
            .collect();
        self.progress
            .event(ProgressEvent::LogsQueued(tasks.len() as u64));
        tasks
    }

    /// `GET …/jobs/{id}/logs`: the 302 to the log host is followed without the token; 410 is an
    /// expired log, 404 a job without one. The log is classified and compressed on a blocking
    /// thread, then stored with its classification in one transaction.
    async fn fetch_log(&self, job: JobId) -> Result<(), FetchError> {
        let url = self
            .client
            .url(&format!("{}/actions/jobs/{job}/logs", self.repo_path()));
        {
            let mut cost = self.cost();
            cost.logs.made += 1;
            cost.logs.minimum += 1;
        }
        let response = self.client.get(&url, None).await?;
        let entry = match response.status {
            StatusCode::OK => None,
            StatusCode::GONE => Some(LogEntry::Expired),
            StatusCode::NOT_FOUND => Some(LogEntry::Missing),
            _ => return Err(unexpected(&url, &response)),
        };
        let downloaded = entry.is_none();
        let bytes = if downloaded {
            response.body.len() as u64
        } else {
            0
        };
        let store = self.store.clone();
        let classifier = self.classifier.clone();
        let fingerprint = self.fingerprint.clone();
        tokio::task::spawn_blocking(move || match entry {
            Some(entry) => store
                .lock()
                .expect("store lock")
                .store_log(job, &entry, None),
            None => {
                let classification = classifier.classify(&response.body);
                let log = compress_log(&response.body);
                store.lock().expect("store lock").store_log(
                    job,
                    &LogEntry::Stored(log),
                    Some((&fingerprint, &classification)),
                )
            }
        })
        .await
        .expect("classification does not panic")?;
        if downloaded {
            self.client.note_log(bytes);
        }
        self.progress.event(ProgressEvent::LogDone { bytes });
        Ok(())
    }

    /// Closed PRs into the default branch, most recently updated first, until they are older
    /// than the window's history: their merge time and merge commit date first hits.
    async fn fetch_merged_pulls(&self, default_branch: &str) -> Result<(), FetchError> {
        let oldest = self.plan.since - TimeDelta::days(HISTORY_DAYS);
        let mut url = Some(self.client.url(&format!(
            "{}/pulls?state=closed&base={}&sort=updated&direction=desc&per_page={PER_PAGE}",
            self.repo_path(),
            encode(default_branch)
        )));
        while let Some(page_url) = url.take() {
            self.cost().pulls.made += 1;
            let response = self.client.get(&page_url, None).await?;
            if response.status != StatusCode::OK {
                return Err(unexpected(&page_url, &response));
            }
            let page: Vec<WirePull> = parse_json(&page_url, &response.body)?;
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
            self.store().store_pulls(&self.repo, &merged)?;
            if !reached_older {
                url = response.next_link();
            }
        }
        Ok(())
    }

    /// A PR's changed files. `false` when GitHub does not know the PR (deleted, or a number
    /// from a branch name that is not a PR). A PR no listing returned is not asked for
    /// (`GET /pulls/{n}` would cost a request per PR and no figure reads more than its
    /// number, link and files): `stub` is stored for it with the files; a later listing that
    /// returns the PR replaces it and keeps the files.
    async fn fetch_pull_files(
        &self,
        number: u64,
        stub: Option<PullRequest>,
    ) -> Result<bool, FetchError> {
        let pr_url = self
            .client
            .url(&format!("{}/pulls/{number}", self.repo_path()));
        let mut url = Some(format!("{pr_url}/files?per_page={PER_PAGE}"));
        let mut files = Vec::new();
        let mut listed = 0usize;
        while let Some(page_url) = url.take() {
            self.cost().files.made += 1;
            let response = self.client.get(&page_url, None).await?;
            match response.status {
                StatusCode::OK => {}
                StatusCode::NOT_FOUND => return Ok(false),
                _ => return Err(unexpected(&page_url, &response)),
            }
            let page: Vec<WireFile> = parse_json(&page_url, &response.body)?;
            listed += page.len();
            for file in page {
                files.extend(file.previous_filename);
                files.push(file.filename);
            }
            url = response.next_link();
        }
        // Each item is one changed file (a rename names two paths).
        self.cost().files.minimum += (listed as u64).div_ceil(PER_PAGE).max(1);
        files.sort();
        files.dedup();
        if let Some(stub) = stub {
            self.store().store_pulls(&self.repo, &[stub])?;
        }
        self.store().store_pull_files(&self.repo, number, &files)?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_map_to_auth_errors_with_github_s_message() {
        let response = |status: u16| Response {
            status: StatusCode::from_u16(status).unwrap(),
            headers: http::HeaderMap::new(),
            body: br#"{"message": "Resource not accessible by integration"}"#.to_vec(),
        };
        let err = unexpected("u", &response(403));
        assert!(matches!(err, FetchError::Forbidden { status: 403, .. }));
        assert!(err.to_string().contains("Resource not accessible"), "{err}");
        assert!(matches!(
            unexpected("u", &response(401)),
            FetchError::Unauthorized { .. }
        ));
        assert!(matches!(
            unexpected("u", &response(422)),
            FetchError::Unexpected { status: 422, .. }
        ));
    }

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
