//! The REST routes: path → `Route`, and `Route` + `Dataset` → a `Reply` with the JSON shapes of
//! GitHub's OpenAPI description. No networking here: the server in `server.rs` handles faults,
//! auth, rate limits and ETags around these pure functions.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde_json::{Value, json};

use super::created::parse_created;
use super::dataset::{
    ArtifactBody, Dataset, FakeArtifact, FakeAttempt, FakeComment, FakeCommit, FakeLog, FakePull,
    FakeRun,
};
use flakestat_core::model::{Conclusion, Job, JobId, Run, RunId, Sha, Status, Timestamp};

/// What kind of request a path is; the unit of the request counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RouteKind {
    Repo,
    /// `/actions/workflows` and `/actions/workflows/{id|file}`.
    Workflows,
    /// `/rate_limit`: free, as on GitHub.
    RateLimit,
    ListRuns,
    Run,
    RunAttempt,
    ListJobs,
    AttemptJobs,
    JobLog,
    /// `GET /actions/runs/{id}/attempts/{n}/logs`: an attempt's log archive (302).
    AttemptLogs,
    /// A request to the log host.
    LogBlob,
    /// A request to the log host for an attempt's log archive.
    ArchiveBlob,
    /// `GET /actions/runs/{id}/artifacts`.
    ListArtifacts,
    /// `GET /actions/artifacts/{id}/zip` (302, or 410 when expired).
    ArtifactZip,
    /// A request to the log host for an artifact's zip.
    ArtifactBlob,
    ListPulls,
    Pull,
    PullFiles,
    Commits,
    /// `GET /commits/{sha}`: one commit with its changed files.
    Commit,
    Compare,
    ListComments,
    CreateComment,
    UpdateComment,
    /// `POST /repos/{o}/{r}/check-runs` (`checks.rs`).
    CreateCheckRun,
    /// `PATCH /repos/{o}/{r}/check-runs/{id}`.
    UpdateCheckRun,
    /// `GET /repos/{o}/{r}/check-runs/{id}`.
    CheckRun,
    /// `GET /repos/{o}/{r}/commits/{ref}/check-runs`.
    ListCheckRuns,
    /// `GET /orgs/{org}/repos` or `GET /users/{username}/repos`: an owner's repositories.
    OwnerRepos,
    /// `POST /app/installations/{id}/access_tokens`: an App's installation token (`app.rs`).
    AppToken,
    /// `GET /repos/{o}/{r}/installation` (or an org's, a user's): an App's installation.
    AppInstallation,
    Unknown,
}

/// A parsed API route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Route {
    Repo,
    ListWorkflows,
    Workflow(String),
    ListRuns { workflow: Option<String> },
    Run(RunId),
    RunAttempt(RunId, u32),
    ListJobs(RunId),
    AttemptJobs(RunId, u32),
    JobLog(JobId),
    AttemptLogs(RunId, u32),
    ListArtifacts(RunId),
    ArtifactZip(u64),
    ListPulls,
    Pull(u64),
    PullFiles(u64),
    Commits,
    Commit(String),
    Compare { base: String, head: String },
    ListComments(u64),
    CreateComment(u64),
    UpdateComment(u64),
    CreateCheckRun,
    UpdateCheckRun(u64),
    CheckRun(u64),
    ListCheckRuns(String),
    Unknown,
}

impl Route {
    pub(crate) fn kind(&self) -> RouteKind {
        match self {
            Route::Repo => RouteKind::Repo,
            Route::ListWorkflows | Route::Workflow(_) => RouteKind::Workflows,
            Route::ListRuns { .. } => RouteKind::ListRuns,
            Route::Run(_) => RouteKind::Run,
            Route::RunAttempt(..) => RouteKind::RunAttempt,
            Route::ListJobs(_) => RouteKind::ListJobs,
            Route::AttemptJobs(..) => RouteKind::AttemptJobs,
            Route::JobLog(_) => RouteKind::JobLog,
            Route::AttemptLogs(..) => RouteKind::AttemptLogs,
            Route::ListArtifacts(_) => RouteKind::ListArtifacts,
            Route::ArtifactZip(_) => RouteKind::ArtifactZip,
            Route::ListPulls => RouteKind::ListPulls,
            Route::Pull(_) => RouteKind::Pull,
            Route::PullFiles(_) => RouteKind::PullFiles,
            Route::Commits => RouteKind::Commits,
            Route::Commit(_) => RouteKind::Commit,
            Route::Compare { .. } => RouteKind::Compare,
            Route::ListComments(_) => RouteKind::ListComments,
            Route::CreateComment(_) => RouteKind::CreateComment,
            Route::UpdateComment(_) => RouteKind::UpdateComment,
            Route::CreateCheckRun => RouteKind::CreateCheckRun,
            Route::UpdateCheckRun(_) => RouteKind::UpdateCheckRun,
            Route::CheckRun(_) => RouteKind::CheckRun,
            Route::ListCheckRuns(_) => RouteKind::ListCheckRuns,
            Route::Unknown => RouteKind::Unknown,
        }
    }

    pub(crate) fn is_write(&self) -> bool {
        matches!(
            self,
            Route::CreateComment(_)
                | Route::UpdateComment(_)
                | Route::CreateCheckRun
                | Route::UpdateCheckRun(_)
        )
    }
}

/// Splits `/repos/{o}/{r}/rest` into the repository and the route. `None` when the path is not
/// under `/repos/{o}/{r}`.
pub(crate) fn parse_route(method: &str, path: &str) -> Option<(String, String, Route)> {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    if segs.len() < 3 || segs[0] != "repos" {
        return None;
    }
    let (owner, name) = (segs[1].to_string(), segs[2].to_string());
    let rest = &segs[3..];
    let num = |s: &str| s.parse::<u64>().ok();
    let get = method == "GET";
    let route = match rest {
        [] if get => Route::Repo,
        ["actions", "runs"] if get => Route::ListRuns { workflow: None },
        ["actions", "workflows"] if get => Route::ListWorkflows,
        ["actions", "workflows", w] if get => Route::Workflow(percent_decode(w)),
        ["actions", "workflows", w, "runs"] if get => Route::ListRuns {
            workflow: Some(percent_decode(w)),
        },
        ["actions", "runs", id] if get => num(id).map_or(Route::Unknown, |i| Route::Run(RunId(i))),
        ["actions", "runs", id, "attempts", n] if get => match (num(id), num(n)) {
            (Some(i), Some(n)) => Route::RunAttempt(RunId(i), n as u32),
            _ => Route::Unknown,
        },
        ["actions", "runs", id, "jobs"] if get => {
            num(id).map_or(Route::Unknown, |i| Route::ListJobs(RunId(i)))
        }
        ["actions", "runs", id, "attempts", n, "jobs"] if get => match (num(id), num(n)) {
            (Some(i), Some(n)) => Route::AttemptJobs(RunId(i), n as u32),
            _ => Route::Unknown,
        },
        ["actions", "runs", id, "attempts", n, "logs"] if get => match (num(id), num(n)) {
            (Some(i), Some(n)) => Route::AttemptLogs(RunId(i), n as u32),
            _ => Route::Unknown,
        },
        ["actions", "runs", id, "artifacts"] if get => {
            num(id).map_or(Route::Unknown, |i| Route::ListArtifacts(RunId(i)))
        }
        ["actions", "artifacts", id, "zip"] if get => {
            num(id).map_or(Route::Unknown, Route::ArtifactZip)
        }
        ["actions", "jobs", id, "logs"] if get => {
            num(id).map_or(Route::Unknown, |i| Route::JobLog(JobId(i)))
        }
        ["pulls"] if get => Route::ListPulls,
        ["pulls", n] if get => num(n).map_or(Route::Unknown, Route::Pull),
        ["pulls", n, "files"] if get => num(n).map_or(Route::Unknown, Route::PullFiles),
        ["commits"] if get => Route::Commits,
        ["commits", sha] if get => Route::Commit(percent_decode(sha)),
        ["compare", spec] if get => {
            let spec = percent_decode(spec);
            match spec.split_once("...") {
                Some((b, h)) if !b.is_empty() && !h.is_empty() => Route::Compare {
                    base: b.to_string(),
                    head: h.to_string(),
                },
                _ => Route::Unknown,
            }
        }
        ["issues", n, "comments"] if get => num(n).map_or(Route::Unknown, Route::ListComments),
        ["issues", n, "comments"] if method == "POST" => {
            num(n).map_or(Route::Unknown, Route::CreateComment)
        }
        ["issues", "comments", id] if method == "PATCH" => {
            num(id).map_or(Route::Unknown, Route::UpdateComment)
        }
        ["check-runs"] if method == "POST" => Route::CreateCheckRun,
        ["check-runs", id] if method == "PATCH" => {
            num(id).map_or(Route::Unknown, Route::UpdateCheckRun)
        }
        ["check-runs", id] if get => num(id).map_or(Route::Unknown, Route::CheckRun),
        ["commits", r, "check-runs"] if get => Route::ListCheckRuns(percent_decode(r)),
        _ => Route::Unknown,
    };
    Some((owner, name, route))
}

/// Decodes `%XX` escapes; `+` stays a plus (a `created` datetime may carry an offset).
pub(crate) fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(b) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The decoded query parameters; the last occurrence of a name wins.
#[derive(Debug, Clone, Default)]
pub(crate) struct Query {
    raw: String,
    params: BTreeMap<String, String>,
}

impl Query {
    pub(crate) fn parse(raw: Option<&str>) -> Query {
        let raw = raw.unwrap_or("").to_string();
        let params = raw
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (k, v) = p.split_once('=').unwrap_or((p, ""));
                (percent_decode(k), percent_decode(v))
            })
            .collect();
        Query { raw, params }
    }

    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.params.get(name).map(String::as_str)
    }

    /// The raw query with `page` replaced.
    fn with_page(&self, page: usize) -> String {
        let mut parts: Vec<&str> = self
            .raw
            .split('&')
            .filter(|p| !p.is_empty() && !p.starts_with("page="))
            .collect();
        let page = format!("page={page}");
        parts.push(&page);
        parts.join("&")
    }
}

/// A route's answer, before the server adds rate-limit headers and ETags.
#[derive(Debug, Clone)]
pub(crate) struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
    pub headers: Vec<(String, String)>,
}

impl Reply {
    pub(crate) fn json(status: u16, value: &Value) -> Reply {
        Reply {
            status,
            content_type: "application/json; charset=utf-8",
            body: serde_json::to_vec(value).expect("JSON values always serialize"),
            headers: Vec::new(),
        }
    }

    pub(crate) fn error(status: u16, message: &str, doc: &str) -> Reply {
        Reply::json(
            status,
            &json!({
                "message": message,
                "documentation_url": format!("https://docs.github.com/rest{doc}"),
                "status": status.to_string(),
            }),
        )
    }

    pub(crate) fn not_found() -> Reply {
        Reply::error(404, "Not Found", "")
    }

    fn header(mut self, name: &str, value: String) -> Reply {
        self.headers.push((name.to_string(), value));
        self
    }
}

/// What a route needs besides the dataset.
pub(crate) struct Ctx<'a> {
    /// `http://127.0.0.1:PORT`, no trailing slash.
    pub api: &'a str,
    pub path: &'a str,
    pub query: &'a Query,
    /// Where a job-log redirect points: `(job id) → absolute URL`.
    pub log_url: &'a dyn Fn(JobId) -> String,
    /// Where an attempt-archive redirect points: `(run, attempt) → absolute URL`.
    pub archive_url: &'a dyn Fn(RunId, u32) -> String,
    /// Where an artifact-zip redirect points: `(artifact id) → absolute URL`.
    pub artifact_url: &'a dyn Fn(u64) -> String,
    /// GitHub's stale-attempt-log bug: an earlier attempt's job id is answered with the log of
    /// the latest attempt's execution of the same job.
    pub stale_attempt_logs: bool,
    pub body: &'a [u8],
    /// Login of the caller, for comments.
    pub login: &'a str,
    /// The caller is a GitHub App's installation (only an App writes check runs).
    pub app: bool,
}

/// Answers a read or a write; writes mutate `ds`.
pub(crate) fn answer(ds: &mut Dataset, route: &Route, ctx: &Ctx<'_>) -> Reply {
    match route {
        Route::Repo => Reply::json(200, &repo_full_json(ds, ctx.api)),
        Route::ListWorkflows => list_workflows(ds, ctx),
        Route::Workflow(w) => match workflows(ds).into_iter().find(|r| workflow_matches(r, w)) {
            Some(r) => Reply::json(200, &workflow_json(ds, r, ctx.api)),
            None => Reply::not_found(),
        },
        Route::ListRuns { workflow } => list_runs(ds, workflow.as_deref(), ctx),
        Route::Run(id) => match ds.run(*id) {
            Some(run) => Reply::json(200, &run_json(ds, run, None, ctx.api)),
            None => Reply::not_found(),
        },
        Route::RunAttempt(id, n) => match ds.run(*id).and_then(|r| Some((r, r.attempt(*n)?))) {
            Some((run, attempt)) => Reply::json(200, &run_json(ds, run, Some(attempt), ctx.api)),
            None => Reply::not_found(),
        },
        Route::ListJobs(id) => list_run_jobs(ds, id, ctx),
        Route::AttemptJobs(id, n) => attempt_jobs(ds, id, n, ctx),
        Route::JobLog(id) => job_log(ds, id, ctx),
        Route::AttemptLogs(run, n) => attempt_logs(ds, run, n, ctx),
        Route::ListArtifacts(run) => list_artifacts(ds, run, ctx),
        Route::ArtifactZip(id) => artifact_zip(ds, *id, ctx),
        Route::ListPulls => list_pulls(ds, ctx),
        Route::Pull(n) => match ds.pull(*n) {
            Some(p) => Reply::json(200, &pull_json(ds, p, ctx.api, true)),
            None => Reply::not_found(),
        },
        Route::PullFiles(n) => pull_files(ds, n, ctx),
        Route::Commits => list_commits(ds, ctx),
        Route::Commit(r) => commit(ds, r, ctx),
        Route::Compare { base, head } => compare(ds, base, head, ctx.api),
        Route::ListComments(n) => list_comments(ds, n, ctx),
        Route::CreateComment(n) => create_comment(ds, n, ctx),
        Route::UpdateComment(id) => update_comment(ds, id, ctx),
        Route::CreateCheckRun => super::checks::create(ds, ctx),
        Route::UpdateCheckRun(id) => super::checks::update(ds, *id, ctx),
        Route::CheckRun(id) => super::checks::get(ds, *id, ctx),
        Route::ListCheckRuns(r) => super::checks::list_for_ref(ds, r, ctx),
        Route::Unknown => Reply::not_found(),
    }
}

fn list_workflows(ds: &Dataset, ctx: &Ctx<'_>) -> Reply {
    let workflows = workflows(ds);
    let items: Vec<Value> = workflows
        .iter()
        .map(|r| workflow_json(ds, r, ctx.api))
        .collect();
    let (range, link) = page_window(items.len(), usize::MAX, ctx);
    with_link(
        Reply::json(
            200,
            &json!({"total_count": items.len(), "workflows": items[range].to_vec()}),
        ),
        link,
    )
}

fn list_run_jobs(ds: &Dataset, id: &RunId, ctx: &Ctx<'_>) -> Reply {
    let Some(run) = ds.run(*id) else {
        return Reply::not_found();
    };
    let jobs = match ctx.query.get("filter").unwrap_or("latest") {
        "latest" => run.jobs_at(run.run.run_attempt),
        "all" => run.all_jobs(),
        _ => {
            return Reply::error(
                422,
                "Invalid request.\n\nInvalid filter: must be one of latest, all",
                "/actions/workflow-jobs#list-jobs-for-a-workflow-run",
            );
        }
    };
    list_jobs(ds, run, &jobs, ctx)
}

fn attempt_jobs(ds: &Dataset, id: &RunId, n: &u32, ctx: &Ctx<'_>) -> Reply {
    let Some(run) = ds.run(*id) else {
        return Reply::not_found();
    };
    if run.attempt(*n).is_none() {
        return Reply::not_found();
    }
    list_jobs(ds, run, &run.jobs_at(*n), ctx)
}

fn job_log(ds: &Dataset, id: &JobId, ctx: &Ctx<'_>) -> Reply {
    if !ds.jobs().any(|j| j.id == *id) {
        return Reply::not_found();
    }
    if ctx.stale_attempt_logs
        && let Some(latest) = latest_execution(ds, *id)
        && job_log_text(ds, latest).is_some()
    {
        return redirect((ctx.log_url)(latest));
    }
    match ds.logs.get(id) {
        Some(FakeLog::Text(_)) => redirect((ctx.log_url)(*id)),
        // What github.com answers for a log past retention (seen in the wild: the
        // message really is "Server Error").
        Some(FakeLog::Expired) => Reply::error(
            410,
            "Server Error",
            "/actions/workflow-jobs#download-job-logs-for-a-workflow-run",
        ),
        // A job that passed has a log too (`job_log_text`).
        None if job_log_text(ds, *id).is_some() => redirect((ctx.log_url)(*id)),
        Some(FakeLog::Missing) | None => Reply::error(
            404,
            "Not Found",
            "/actions/workflow-jobs#download-job-logs-for-a-workflow-run",
        ),
    }
}

fn attempt_logs(ds: &Dataset, run: &RunId, n: &u32, ctx: &Ctx<'_>) -> Reply {
    match ds.run(*run).map(|r| (r, r.attempt(*n))) {
        Some((_, Some(_))) => match attempt_archive(ds, *run, *n) {
            Ok(_) => redirect((ctx.archive_url)(*run, *n)),
            Err(status) => Reply::error(
                status,
                if status == 410 {
                    "Server Error"
                } else {
                    "Not Found"
                },
                "/actions/workflow-runs#download-workflow-run-attempt-logs",
            ),
        },
        _ => Reply::not_found(),
    }
}

/// `GET /actions/runs/{id}/artifacts`: `{total_count, artifacts}`, by id, paginated.
fn list_artifacts(ds: &Dataset, run: &RunId, ctx: &Ctx<'_>) -> Reply {
    let Some(fake) = ds.run(*run) else {
        return Reply::not_found();
    };
    let mut artifacts: Vec<&FakeArtifact> = ds.artifacts.iter().filter(|a| a.run == *run).collect();
    artifacts.sort_by_key(|a| a.id);
    let (range, link) = page_window(artifacts.len(), usize::MAX, ctx);
    let repo = &ds.repo;
    let page: Vec<Value> = artifacts[range]
        .iter()
        .map(|a| {
            let size = artifact_bytes(a).map_or(0, |b| b.len());
            let url = format!("{}/repos/{repo}/actions/artifacts/{}", ctx.api, a.id);
            json!({
                "id": a.id,
                "node_id": format!("MDg6QXJ0aWZhY3Q{}", a.id),
                "name": a.name,
                "size_in_bytes": size,
                "url": url,
                "archive_download_url": format!("{url}/zip"),
                "expired": matches!(a.body, ArtifactBody::Expired),
                "digest": format!("sha256:{}{}", fake_sha(&format!("artifact {}", a.id)), "0".repeat(24)),
                "created_at": ts(a.created_at),
                "updated_at": ts(a.created_at),
                "expires_at": ts(a.created_at + chrono::TimeDelta::days(90)),
                "workflow_run": {
                    "id": run.0,
                    "repository_id": repo_id(ds),
                    "head_repository_id": repo_id(ds),
                    "head_branch": fake.run.head_branch,
                    "head_sha": fake.run.head_sha.0,
                },
            })
        })
        .collect();
    with_link(
        Reply::json(
            200,
            &json!({"total_count": artifacts.len(), "artifacts": page}),
        ),
        link,
    )
}

/// `GET /actions/artifacts/{id}/zip`: 302 to the log host, or 410 past retention.
fn artifact_zip(ds: &Dataset, id: u64, ctx: &Ctx<'_>) -> Reply {
    let doc = "/actions/artifacts#download-an-artifact";
    match ds.artifacts.iter().find(|a| a.id == id) {
        None => Reply::error(404, "Not Found", doc),
        Some(a) if matches!(a.body, ArtifactBody::Expired | ArtifactBody::Gone) => {
            Reply::error(410, "Artifact has expired", doc)
        }
        Some(_) => redirect((ctx.artifact_url)(id)),
    }
}

/// The zip an artifact's download serves; `None` when it has none (expired).
pub(crate) fn artifact_bytes(a: &FakeArtifact) -> Option<Vec<u8>> {
    use std::io::Write as _;
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let deflated = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    let written: Result<(), zip::result::ZipError> = match &a.body {
        ArtifactBody::Expired | ArtifactBody::Gone => return None,
        ArtifactBody::Files(files) => files.iter().try_for_each(|(name, text)| {
            zip.start_file(name.as_str(), deflated)?;
            zip.write_all(text.as_bytes())?;
            Ok(())
        }),
        ArtifactBody::Zeros { entry, size } => (|| {
            zip.start_file(entry.as_str(), deflated)?;
            let block = vec![0u8; 1 << 16];
            let mut left = *size;
            while left > 0 {
                let n = left.min(block.len() as u64) as usize;
                zip.write_all(&block[..n])?;
                left -= n as u64;
            }
            Ok(())
        })(),
        ArtifactBody::Bulk { entry, size } => (|| {
            let stored = zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Stored);
            zip.start_file(entry.as_str(), stored)?;
            let mut state = a.id.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            let bytes: Vec<u8> = (0..*size)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    state as u8
                })
                .collect();
            zip.write_all(&bytes)?;
            Ok(())
        })(),
    };
    written.ok()?;
    zip.finish().ok().map(|c| c.into_inner())
}

fn pull_files(ds: &Dataset, n: &u64, ctx: &Ctx<'_>) -> Reply {
    match ds.pull(*n) {
        Some(p) => {
            let files: Vec<Value> = p
            .files
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let sha = fake_sha(&format!("blob {} {} {i}", p.number, f.filename));
                let mut v = json!({
                    "sha": sha,
                    "filename": f.filename,
                    "status": f.status,
                    "additions": f.additions,
                    "deletions": f.deletions,
                    "changes": f.additions + f.deletions,
                    "blob_url": format!("https://github.com/{}/blob/{}/{}", ds.repo, p.head_sha, f.filename),
                    "raw_url": format!("https://github.com/{}/raw/{}/{}", ds.repo, p.head_sha, f.filename),
                    "contents_url": format!("{}/repos/{}/contents/{}?ref={}", ctx.api, ds.repo, f.filename, p.head_sha),
                    "patch": "@@ -1,3 +1,3 @@",
                });
                if let Some(prev) = &f.previous_filename {
                    v["previous_filename"] = json!(prev);
                }
                v
            })
            .collect();
            paginated_array(files, ctx, 3000)
        }
        None => Reply::not_found(),
    }
}

fn commit(ds: &Dataset, r: &str, ctx: &Ctx<'_>) -> Reply {
    match ds
        .resolve_ref(r)
        .and_then(|sha| ds.commits.iter().find(|c| c.sha == sha))
    {
        Some(c) => {
            let mut v = commit_json(ds, c, ctx.api);
            v["files"] = c
                .files
                .iter()
                .map(|f| {
                    json!({
                        "sha": fake_sha(&format!("blob {} {f}", c.sha)),
                        "filename": f,
                        "status": "modified",
                        "additions": 1,
                        "deletions": 1,
                        "changes": 2,
                        "patch": "@@ -1,3 +1,3 @@",
                    })
                })
                .collect();
            v["stats"] = json!({"total": 2 * c.files.len(), "additions": c.files.len(), "deletions": c.files.len()});
            Reply::json(200, &v)
        }
        None => Reply::error(
            422,
            &format!("No commit found for SHA: {r}"),
            "/commits/commits#get-a-commit",
        ),
    }
}

fn list_comments(ds: &Dataset, n: &u64, ctx: &Ctx<'_>) -> Reply {
    if !issue_exists(ds, *n) {
        return Reply::not_found();
    }
    let comments: Vec<Value> = ds
        .comments
        .iter()
        .filter(|c| c.issue_number == *n)
        .map(|c| comment_json(ds, c, ctx.api))
        .collect();
    paginated_array(comments, ctx, usize::MAX)
}

fn create_comment(ds: &mut Dataset, n: &u64, ctx: &Ctx<'_>) -> Reply {
    if !issue_exists(ds, *n) {
        return Reply::not_found();
    }
    if issue_locked(ds, *n) {
        return Reply::error(
            403,
            "Unable to create comment because issue is locked.",
            "/issues/comments#create-an-issue-comment",
        );
    }
    let Some(body) = comment_body(ctx.body) else {
        return validation_failed("body");
    };
    let id = ds
        .comments
        .iter()
        .map(|c| c.id)
        .max()
        .unwrap_or(3_000_000_000)
        + 1;
    let at = comment_time(ds);
    let comment = FakeComment {
        id,
        issue_number: *n,
        body,
        user: ctx.login.to_string(),
        created_at: at,
        updated_at: at,
    };
    let reply = Reply::json(201, &comment_json(ds, &comment, ctx.api)).header(
        "location",
        format!("{}/repos/{}/issues/comments/{id}", ctx.api, ds.repo),
    );
    ds.comments.push(comment);
    reply
}

fn update_comment(ds: &mut Dataset, id: &u64, ctx: &Ctx<'_>) -> Reply {
    let Some(body) = comment_body(ctx.body) else {
        return validation_failed("body");
    };
    let at = comment_time(ds);
    let Some(issue) = ds
        .comments
        .iter()
        .find(|c| c.id == *id)
        .map(|c| c.issue_number)
    else {
        return Reply::not_found();
    };
    if issue_locked(ds, issue) {
        return Reply::error(
            403,
            "Unable to update comment because issue is locked.",
            "/issues/comments#update-an-issue-comment",
        );
    }
    let comment = ds
        .comments
        .iter_mut()
        .find(|c| c.id == *id)
        .expect("found above");
    comment.body = body;
    comment.updated_at = at;
    let comment = comment.clone();
    Reply::json(200, &comment_json(ds, &comment, ctx.api))
}

fn redirect(location: String) -> Reply {
    Reply {
        status: 302,
        content_type: "text/html;charset=utf-8",
        body: Vec::new(),
        headers: Vec::new(),
    }
    .header("location", location)
}

/// The job id of the latest attempt's execution of the same job (same run and name) as `job`,
/// when that is another execution.
fn latest_execution(ds: &Dataset, job: JobId) -> Option<JobId> {
    let run = ds.runs.iter().find(|r| {
        r.attempts
            .iter()
            .any(|a| a.jobs.iter().any(|j| j.id == job))
    })?;
    let name = &run.all_jobs().into_iter().find(|j| j.id == job)?.name;
    let latest = run
        .all_jobs()
        .into_iter()
        .filter(|j| &j.name == name)
        .max_by_key(|j| (j.run_attempt, j.id))?;
    (latest.id != job).then_some(latest.id)
}

/// The raw log the log host serves for a job: its recorded log, or for a job that ran and
/// passed (the dataset records logs of failed jobs only) a short log stamped within its
/// execution, as an archive or a stale answer would carry. `None`: expired, missing, or a job
/// that never ran.
pub(crate) fn job_log_text(ds: &Dataset, job: JobId) -> Option<String> {
    match ds.logs.get(&job) {
        Some(FakeLog::Text(text)) => Some(text.clone()),
        Some(_) => None,
        None => {
            let j = ds.jobs().find(|j| j.id == job)?;
            let (Some(start), Some(end)) = (j.started_at, j.completed_at) else {
                return None;
            };
            if j.conclusion != Some(Conclusion::Success) {
                return None;
            }
            let stamp = crate::stamp::log_line;
            if let Some(template) = &ds.passing_log {
                return Some(respace_log(template, start, end, &j.name));
            }
            Some(format!(
                "\u{feff}{} Current runner version: '2.329.0'\n{} ##[group]Run tests\n{} ====== all tests passed ======\n{} Cleaning up orphan processes\n",
                stamp(start),
                stamp(start + (end - start) / 10),
                stamp(end - (end - start) / 10),
                stamp(end),
            ))
        }
    }
}

/// A passing log template moved into `[start, end]`: its timestamps re-spaced linearly so its
/// first line is at `start` and its last at `end` (lines without one are kept as they are), and
/// `{{JOB_NAME}}` replaced by `name`.
fn respace_log(template: &str, start: Timestamp, end: Timestamp, name: &str) -> String {
    let body = template.trim_start_matches('\u{feff}');
    let stamp_of = |line: &str| -> Option<Timestamp> {
        chrono::DateTime::parse_from_rfc3339(line.get(..28)?)
            .ok()
            .map(|t| t.with_timezone(&chrono::Utc))
    };
    let first = body.lines().find_map(stamp_of);
    let last = body.lines().rev().find_map(stamp_of);
    let (Some(first), Some(last)) = (first, last) else {
        return template.replace("{{JOB_NAME}}", name);
    };
    let span = (last - first).num_microseconds().unwrap_or(1).max(1) as f64;
    let room = (end - start).num_microseconds().unwrap_or(0).max(0) as f64;
    let mut out = String::from("\u{feff}");
    for line in body.lines() {
        match stamp_of(line) {
            Some(t) => {
                let offset = (t - first).num_microseconds().unwrap_or(0) as f64 / span * room;
                let when = start + chrono::TimeDelta::microseconds(offset as i64);
                out.push_str(&crate::stamp::log_line(when));
                out.push_str(&line[28..]);
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out.replace("{{JOB_NAME}}", name)
}

/// An attempt's log archive as GitHub serves it: for each job its listing shows, one
/// `<i>_<name>.txt` at the top level (`/` dropped from the name, a repeated name suffixed
/// ` (1)`…) and a folder of that name with the job's steps (here one file). `Err(410)` when a
/// job's log is past retention (the archive is the run's logs), `Err(404)` when no job has one.
pub(crate) fn attempt_archive(ds: &Dataset, run: RunId, n: u32) -> Result<Vec<u8>, u16> {
    use std::io::Write as _;
    let fake = ds.run(run).ok_or(404u16)?;
    fake.attempt(n).ok_or(404u16)?;
    let jobs = fake.jobs_at(n);
    if jobs
        .iter()
        .any(|j| matches!(ds.logs.get(&j.id), Some(FakeLog::Expired)))
    {
        return Err(410);
    }
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut any = false;
    for (i, job) in jobs.iter().enumerate() {
        let Some(text) = job_log_text(ds, job.id) else {
            continue;
        };
        let base = job.name.replace('/', "");
        let count = seen.entry(base.clone()).or_insert(0);
        let name = if *count == 0 {
            base
        } else {
            format!("{base} ({count})")
        };
        *count += 1;
        let written = zip
            .start_file(format!("{}_{name}.txt", i + 1), options)
            .and_then(|()| zip.write_all(text.as_bytes()).map_err(Into::into))
            .and_then(|()| zip.start_file(format!("{name}/1_Run tests.txt"), options))
            .and_then(|()| zip.write_all(text.as_bytes()).map_err(Into::into));
        if written.is_err() {
            return Err(500);
        }
        any = true;
    }
    if !any {
        return Err(404);
    }
    zip.finish().map(|c| c.into_inner()).map_err(|_| 500)
}

fn validation_failed(field: &str) -> Reply {
    Reply::json(
        422,
        &json!({
            "message": "Validation Failed",
            "errors": [{"resource": "IssueComment", "code": "missing_field", "field": field}],
            "documentation_url": "https://docs.github.com/rest/issues/comments",
            "status": "422",
        }),
    )
}

fn comment_body(body: &[u8]) -> Option<String> {
    let v: Value = serde_json::from_slice(body).ok()?;
    v.get("body")?.as_str().map(str::to_string)
}

/// New comments are stamped after every existing one, one second apart, from the dataset's `now`.
fn comment_time(ds: &Dataset) -> Timestamp {
    let last = ds
        .comments
        .iter()
        .map(|c| c.updated_at.max(c.created_at))
        .max();
    match last {
        Some(t) if t >= ds.now => t + chrono::TimeDelta::seconds(1),
        _ => ds.now,
    }
}

fn issue_exists(ds: &Dataset, n: u64) -> bool {
    ds.pull(n).is_some() || ds.issues.iter().any(|i| i.number == n)
}

fn issue_locked(ds: &Dataset, n: u64) -> bool {
    ds.pull(n).is_some_and(|p| p.locked) || ds.issues.iter().any(|i| i.number == n && i.locked)
}

/// `per_page` (default 30, at most 100) and `page` (default 1).
fn page_params(query: &Query) -> (usize, usize) {
    let per_page = query
        .get("per_page")
        .and_then(|v| v.parse::<usize>().ok())
        .map_or(30, |v| v.clamp(1, 100));
    let page = query
        .get("page")
        .and_then(|v| v.parse::<usize>().ok())
        .map_or(1, |v| v.max(1));
    (per_page, page)
}

/// One page of `total` items (of which only the first `cap` can be listed) and its `Link` header.
/// `last` is computed from `total`, as GitHub does: past the cap, pages are empty.
fn page_window(
    total: usize,
    cap: usize,
    ctx: &Ctx<'_>,
) -> (std::ops::Range<usize>, Option<String>) {
    let (per_page, page) = page_params(ctx.query);
    let last = total.div_ceil(per_page).max(1);
    let listable = total.min(cap);
    let start = ((page - 1) * per_page).min(listable);
    let end = (start + per_page).min(listable);
    let url = |p: usize| format!("{}{}?{}", ctx.api, ctx.path, ctx.query.with_page(p));
    let mut links = Vec::new();
    if page > 1 {
        links.push(format!("<{}>; rel=\"prev\"", url((page - 1).min(last))));
    }
    if page < last {
        links.push(format!("<{}>; rel=\"next\"", url(page + 1)));
        links.push(format!("<{}>; rel=\"last\"", url(last)));
    }
    if page > 1 {
        links.push(format!("<{}>; rel=\"first\"", url(1)));
    }
    let link = (!links.is_empty()).then(|| links.join(", "));
    (start..end, link)
}

/// A paginated bare array with no cap: `per_page`, `page` and the `Link` header.
pub(crate) fn paginated(items: Vec<Value>, ctx: &Ctx<'_>) -> Reply {
    paginated_array(items, ctx, usize::MAX)
}

/// A paginated endpoint whose body wraps the page (`{total_count, check_runs: [...]}`).
pub(crate) fn paginated_page(
    items: Vec<Value>,
    ctx: &Ctx<'_>,
    wrap: impl Fn(Vec<Value>) -> Value,
) -> Reply {
    let (range, link) = page_window(items.len(), usize::MAX, ctx);
    with_link(Reply::json(200, &wrap(items[range].to_vec())), link)
}

/// A paginated endpoint whose body is a bare array.
fn paginated_array(items: Vec<Value>, ctx: &Ctx<'_>, cap: usize) -> Reply {
    let (range, link) = page_window(items.len(), cap, ctx);
    let page: Vec<Value> = items[range].to_vec();
    with_link(Reply::json(200, &Value::Array(page)), link)
}

fn with_link(reply: Reply, link: Option<String>) -> Reply {
    match link {
        Some(l) => reply.header("link", l),
        None => reply,
    }
}

/// The filters that make GitHub cap the run listing at 1,000 results.
const RUN_FILTERS: [&str; 8] = [
    "actor",
    "branch",
    "event",
    "status",
    "created",
    "exclude_pull_requests",
    "check_suite_id",
    "head_sha",
];

const CONCLUSIONS: [&str; 10] = [
    "success",
    "failure",
    "neutral",
    "cancelled",
    "skipped",
    "timed_out",
    "action_required",
    "stale",
    "startup_failure",
    "completed",
];

fn list_runs(ds: &Dataset, workflow: Option<&str>, ctx: &Ctx<'_>) -> Reply {
    let q = ctx.query;
    let created = match q.get("created") {
        Some(text) => match parse_created(text) {
            Some(r) => Some(r),
            None => {
                return Reply::error(
                    422,
                    &format!("Invalid created qualifier: {text}"),
                    "/actions/workflow-runs#list-workflow-runs-for-a-repository",
                );
            }
        },
        None => None,
    };
    if let Some(w) = workflow {
        let known = ds.runs.iter().any(|r| workflow_matches(&r.run, w));
        if !known {
            return Reply::not_found();
        }
    }
    let mut runs: Vec<&FakeRun> = ds
        .runs
        .iter()
        .filter(|r| workflow.is_none_or(|w| workflow_matches(&r.run, w)))
        .filter(|r| created.is_none_or(|c| c.contains(r.run.created_at)))
        .filter(|r| q.get("event").is_none_or(|e| r.run.event.as_str() == e))
        .filter(|r| {
            q.get("branch")
                .is_none_or(|b| r.run.head_branch.as_deref() == Some(b))
        })
        .filter(|r| q.get("head_sha").is_none_or(|s| r.run.head_sha.0 == s))
        .filter(|r| {
            q.get("status").is_none_or(|s| {
                if CONCLUSIONS.contains(&s) && s != "completed" {
                    r.run.conclusion.as_ref().map(Conclusion::as_str) == Some(s)
                } else {
                    r.run.status.as_str() == s
                }
            })
        })
        .collect();
    runs.sort_by(|a, b| {
        b.run
            .created_at
            .cmp(&a.run.created_at)
            .then(b.run.id.cmp(&a.run.id))
    });
    let filtered = RUN_FILTERS.iter().any(|f| q.get(f).is_some());
    let cap = if filtered { 1000 } else { usize::MAX };
    let (range, link) = page_window(runs.len(), cap, ctx);
    let exclude_prs = q.get("exclude_pull_requests") == Some("true");
    let page: Vec<Value> = runs[range]
        .iter()
        .map(|r| {
            let mut v = run_json(ds, r, None, ctx.api);
            if exclude_prs {
                v["pull_requests"] = json!([]);
            }
            v
        })
        .collect();
    with_link(
        Reply::json(
            200,
            &json!({"total_count": runs.len(), "workflow_runs": page}),
        ),
        link,
    )
}

/// One run per workflow: the workflows the dataset's runs belong to, by id.
fn workflows(ds: &Dataset) -> Vec<&flakestat_core::model::Run> {
    let mut by_id: BTreeMap<u64, &flakestat_core::model::Run> = BTreeMap::new();
    for r in &ds.runs {
        by_id.entry(r.run.workflow_id.0).or_insert(&r.run);
    }
    by_id.into_values().collect()
}

pub(crate) fn workflow_json(ds: &Dataset, r: &flakestat_core::model::Run, api: &str) -> Value {
    let repo = &ds.repo;
    let id = r.workflow_id.0;
    let first = ds
        .runs
        .iter()
        .filter(|x| x.run.workflow_id == r.workflow_id)
        .map(|x| x.run.created_at)
        .min()
        .unwrap_or(ds.now);
    json!({
        "id": id,
        "node_id": format!("W_kwDO{}", &fake_sha(&format!("workflow {id}"))[..10]),
        "name": r.workflow_name,
        "path": r.workflow_path,
        "state": "active",
        "created_at": ts(first),
        "updated_at": ts(first),
        "url": format!("{api}/repos/{repo}/actions/workflows/{id}"),
        "html_url": format!("https://github.com/{repo}/blob/{}/{}", ds.default_branch, r.workflow_path),
        "badge_url": format!("https://github.com/{repo}/workflows/{}/badge.svg", r.workflow_name),
    })
}

fn workflow_matches(run: &flakestat_core::model::Run, w: &str) -> bool {
    w.parse::<u64>().is_ok_and(|id| run.workflow_id.0 == id)
        || run.workflow_path.rsplit('/').next() == Some(w)
}

fn list_jobs(ds: &Dataset, run: &FakeRun, jobs: &[&Job], ctx: &Ctx<'_>) -> Reply {
    let (range, link) = page_window(jobs.len(), usize::MAX, ctx);
    let page: Vec<Value> = jobs[range]
        .iter()
        .map(|j| job_json(ds, run, j, ctx.api))
        .collect();
    with_link(
        Reply::json(200, &json!({"total_count": jobs.len(), "jobs": page})),
        link,
    )
}

fn list_pulls(ds: &Dataset, ctx: &Ctx<'_>) -> Reply {
    let q = ctx.query;
    let state = q.get("state").unwrap_or("open");
    let mut pulls: Vec<&FakePull> = ds
        .pulls
        .iter()
        .filter(|p| state == "all" || p.state == state)
        .filter(|p| q.get("base").is_none_or(|b| p.base_ref == b))
        .filter(|p| {
            q.get("head").is_none_or(|h| {
                let head = h.split_once(':').map_or(h, |(_, r)| r);
                p.head_ref == head
            })
        })
        .collect();
    let sort = q.get("sort").unwrap_or("created");
    let key = |p: &FakePull| -> (Timestamp, u64) {
        match sort {
            "updated" => (p.updated_at, p.number),
            _ => (p.created_at, p.number),
        }
    };
    pulls.sort_by_key(|p| key(p));
    // GitHub: "Default: desc when sort is created or sort is not specified, otherwise asc."
    let default_direction = if sort == "created" { "desc" } else { "asc" };
    if q.get("direction").unwrap_or(default_direction) == "desc" {
        pulls.reverse();
    }
    let items: Vec<Value> = pulls
        .iter()
        .map(|p| pull_json(ds, p, ctx.api, false))
        .collect();
    paginated_array(items, ctx, usize::MAX)
}

fn list_commits(ds: &Dataset, ctx: &Ctx<'_>) -> Reply {
    let q = ctx.query;
    let start = q.get("sha").unwrap_or(&ds.default_branch).to_string();
    let Some(head) = ds.resolve_ref(&start) else {
        return Reply::error(
            404,
            &format!("No commit found for SHA: {start}"),
            "/commits/commits#list-commits",
        );
    };
    let parse_time = |name: &str| -> Result<Option<Timestamp>, Reply> {
        match q.get(name) {
            None => Ok(None),
            Some(text) => chrono::DateTime::parse_from_rfc3339(text)
                .map(|t| Some(t.with_timezone(&chrono::Utc)))
                .map_err(|_| {
                    Reply::error(
                        422,
                        &format!("Invalid {name}: {text}"),
                        "/commits/commits#list-commits",
                    )
                }),
        }
    };
    let (since, until) = match (parse_time("since"), parse_time("until")) {
        (Ok(s), Ok(u)) => (s, u),
        (Err(r), _) | (_, Err(r)) => return r,
    };
    let reachable = ds.ancestors(&head);
    let mut commits: Vec<&FakeCommit> = ds
        .commits
        .iter()
        .filter(|c| reachable.contains(&c.sha))
        .filter(|c| since.is_none_or(|s| c.date >= s))
        .filter(|c| until.is_none_or(|u| c.date <= u))
        .collect();
    commits.sort_by(|a, b| b.date.cmp(&a.date).then(b.sha.cmp(&a.sha)));
    let items: Vec<Value> = commits
        .iter()
        .map(|c| commit_json(ds, c, ctx.api))
        .collect();
    paginated_array(items, ctx, usize::MAX)
}

fn compare(ds: &Dataset, base: &str, head: &str, api: &str) -> Reply {
    let (Some(base_sha), Some(head_sha)) = (ds.resolve_ref(base), ds.resolve_ref(head)) else {
        return Reply::not_found();
    };
    let base_anc = ds.ancestors(&base_sha);
    let head_anc = ds.ancestors(&head_sha);
    let common: BTreeSet<&Sha> = base_anc.intersection(&head_anc).collect();
    // The merge base: a common ancestor no other common ancestor descends from, i.e. one with
    // no child among them (dates need not follow ancestry: a branch's commits may be dated
    // before merges they contain); the newest such one when there are several.
    let has_common_child: BTreeSet<&Sha> = ds
        .commits
        .iter()
        .filter(|c| common.contains(&c.sha))
        .flat_map(|c| c.parents.iter())
        .collect();
    let merge_base = ds
        .commits
        .iter()
        .filter(|c| common.contains(&c.sha) && !has_common_child.contains(&c.sha))
        .max_by(|a, b| a.date.cmp(&b.date).then(a.sha.cmp(&b.sha)));
    let Some(merge_base) = merge_base else {
        return Reply::error(
            404,
            &format!("No common ancestor between {base} and {head}."),
            "/commits/commits#compare-two-commits",
        );
    };
    let mut ahead: Vec<&FakeCommit> = ds
        .commits
        .iter()
        .filter(|c| head_anc.contains(&c.sha) && !base_anc.contains(&c.sha))
        .collect();
    ahead.sort_by(|a, b| a.date.cmp(&b.date).then(a.sha.cmp(&b.sha)));
    let behind_by = base_anc.difference(&head_anc).count();
    let ahead_by = ahead.len();
    let status = match (ahead_by, behind_by) {
        (0, 0) => "identical",
        (_, 0) => "ahead",
        (0, _) => "behind",
        _ => "diverged",
    };
    let base_commit = ds
        .commit(&base_sha.0)
        .expect("resolved refs name known commits");
    let repo = &ds.repo;
    Reply::json(
        200,
        &json!({
            "url": format!("{api}/repos/{repo}/compare/{base}...{head}"),
            "html_url": format!("https://github.com/{repo}/compare/{base}...{head}"),
            "permalink_url": format!("https://github.com/{repo}/compare/{}...{}", base_sha, head_sha),
            "diff_url": format!("https://github.com/{repo}/compare/{base}...{head}.diff"),
            "patch_url": format!("https://github.com/{repo}/compare/{base}...{head}.patch"),
            "base_commit": commit_json(ds, base_commit, api),
            "merge_base_commit": commit_json(ds, merge_base, api),
            "status": status,
            "ahead_by": ahead_by,
            "behind_by": behind_by,
            "total_commits": ahead_by,
            "commits": ahead.iter().take(250).map(|c| commit_json(ds, c, api)).collect::<Vec<_>>(),
            "files": [],
        }),
    )
}

// ---- JSON shapes ----

/// A deterministic 40-hex-digit id for things the dataset does not name (blob, tree shas).
pub(crate) fn fake_sha(seed: &str) -> String {
    let mut out = String::with_capacity(40);
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in seed.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    let mut x = h;
    while out.len() < 40 {
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        let _ = write!(out, "{z:016x}");
    }
    out.truncate(40);
    out
}

fn user_id(login: &str) -> u64 {
    u64::from_str_radix(&fake_sha(login)[..7], 16).unwrap_or(1) + 1000
}

pub(crate) fn user_json(login: &str, api: &str) -> Value {
    let bot = login.ends_with("[bot]");
    json!({
        "login": login,
        "id": user_id(login),
        "node_id": format!("U_kgDO{}", &fake_sha(login)[..6]),
        "avatar_url": format!("https://avatars.githubusercontent.com/u/{}?v=4", user_id(login)),
        "gravatar_id": "",
        "url": format!("{api}/users/{login}"),
        "html_url": format!("https://github.com/{login}"),
        "type": if bot { "Bot" } else { "User" },
        "user_view_type": "public",
        "site_admin": false,
    })
}

fn repo_id(ds: &Dataset) -> u64 {
    u64::from_str_radix(&fake_sha(&ds.repo.to_string())[..8], 16).unwrap_or(1) % 900_000_000
        + 100_000_000
}

pub(crate) fn repo_min_json(ds: &Dataset, api: &str) -> Value {
    let full = ds.repo.to_string();
    json!({
        "id": repo_id(ds),
        "node_id": format!("R_kgDO{}", &fake_sha(&full)[..6]),
        "name": ds.repo.name,
        "full_name": full,
        "private": ds.private,
        "owner": user_json(&ds.repo.owner, api),
        "html_url": format!("https://github.com/{full}"),
        "description": null,
        "fork": false,
        "url": format!("{api}/repos/{full}"),
    })
}

/// The repository a run's or a PR's head lives in: the dataset's own, or a fork of it
/// (`full_name` given) with an id of its own and `fork: true`.
fn head_repo_json(ds: &Dataset, fork: Option<&str>, api: &str) -> Value {
    let Some(full) = fork.filter(|f| !f.eq_ignore_ascii_case(&ds.repo.to_string())) else {
        return repo_min_json(ds, api);
    };
    let (owner, name) = full.split_once('/').unwrap_or((full, &ds.repo.name));
    json!({
        "id": 900_000_000u64 + u64::from_str_radix(&fake_sha(full)[..6], 16).unwrap_or(0),
        "node_id": format!("R_kgDO{}", &fake_sha(full)[..6]),
        "name": name,
        "full_name": full,
        "private": false,
        "owner": user_json(owner, api),
        "html_url": format!("https://github.com/{full}"),
        "description": null,
        "fork": true,
        "url": format!("{api}/repos/{full}"),
    })
}

pub(crate) fn repo_full_json(ds: &Dataset, api: &str) -> Value {
    let mut v = repo_min_json(ds, api);
    let created = ds.commits.iter().map(|c| c.date).min().unwrap_or(ds.now);
    let extra = json!({
        "default_branch": ds.default_branch,
        "visibility": if ds.private { "private" } else { "public" },
        "archived": false,
        "disabled": false,
        "created_at": ts(created),
        "updated_at": ts(ds.now),
        "pushed_at": ts(ds.now),
        "clone_url": format!("https://github.com/{}.git", ds.repo),
        "language": "Python",
        "has_issues": true,
        "open_issues_count": ds.pulls.iter().filter(|p| p.state == "open").count(),
        "permissions": {"admin": false, "maintain": false, "push": false, "triage": false, "pull": true},
    });
    if let (Value::Object(base), Value::Object(more)) = (&mut v, extra) {
        base.extend(more);
    }
    v
}

pub(crate) fn ts(t: Timestamp) -> String {
    crate::stamp::api(t)
}

pub(crate) fn commit_author(ds: &Dataset, sha: &Sha) -> (String, Timestamp, String) {
    match ds.commit(&sha.0) {
        Some(c) => (c.author.clone(), c.date, c.message.clone()),
        None => ("github-actions".to_string(), ds.now, String::new()),
    }
}

/// What a run's JSON says of the attempt it shows: the latest, or an earlier one asked for.
struct AttemptState {
    run_attempt: u32,
    status: String,
    conclusion: Option<String>,
    started: Option<Timestamp>,
    updated: Timestamp,
}

fn attempt_state(r: &Run, attempt: Option<&FakeAttempt>) -> AttemptState {
    match attempt {
        Some(a) if a.attempt != r.run_attempt => {
            let last = a
                .jobs
                .iter()
                .filter_map(|j| j.completed_at)
                .max()
                .unwrap_or(a.created_at);
            let status = if a.conclusion.is_some() {
                "completed"
            } else {
                "in_progress"
            };
            AttemptState {
                run_attempt: a.attempt,
                status: status.to_string(),
                conclusion: a.conclusion.as_ref().map(ToString::to_string),
                started: Some(a.created_at),
                updated: last,
            }
        }
        _ => AttemptState {
            run_attempt: r.run_attempt,
            status: r.status.to_string(),
            conclusion: r.conclusion.as_ref().map(ToString::to_string),
            started: r.run_started_at,
            updated: r.updated_at,
        },
    }
}

/// A run's `pull_requests[]` entry for PR `n` (its head and base as the run saw them).
fn run_pull_json(ds: &Dataset, r: &Run, n: u64, api: &str) -> Value {
    let repo = &ds.repo;
    let (head_ref, head_sha, base_ref, base_sha) = match ds.pull(n) {
        Some(p) => (
            p.head_ref.clone(),
            p.head_sha.0.clone(),
            p.base_ref.clone(),
            p.base_sha.0.clone(),
        ),
        None => (
            r.head_branch.clone().unwrap_or_default(),
            r.head_sha.0.clone(),
            ds.default_branch.clone(),
            String::new(),
        ),
    };
    let repo_ref =
        json!({"id": repo_id(ds), "url": format!("{api}/repos/{repo}"), "name": repo.name});
    json!({
        "id": 2_000_000_000u64 + n,
        "number": n,
        "url": format!("{api}/repos/{repo}/pulls/{n}"),
        "head": {"ref": head_ref, "sha": head_sha, "repo": repo_ref},
        "base": {"ref": base_ref, "sha": base_sha, "repo": repo_ref},
    })
}

pub(crate) fn run_json(
    ds: &Dataset,
    fake: &FakeRun,
    attempt: Option<&FakeAttempt>,
    api: &str,
) -> Value {
    let r = &fake.run;
    let repo = &ds.repo;
    let id = r.id.0;
    let AttemptState {
        run_attempt,
        status,
        conclusion,
        started,
        updated,
    } = attempt_state(r, attempt);
    let run_url = format!("{api}/repos/{repo}/actions/runs/{id}");
    let previous = (run_attempt > 1).then(|| format!("{run_url}/attempts/{}", run_attempt - 1));
    let pulls: Vec<Value> = r
        .pull_requests
        .iter()
        .map(|n| run_pull_json(ds, r, n.0, api))
        .collect();
    let (author, date, message) = commit_author(ds, &r.head_sha);
    let actor = user_json(&author, api);
    let check_suite_id = 40_000_000_000u64 + id % 1_000_000_000 * 7 + u64::from(run_attempt);
    json!({
        "id": id,
        "name": r.workflow_name,
        "node_id": format!("WFR_kwLO{}", &fake_sha(&format!("run {id}"))[..10]),
        "head_branch": r.head_branch,
        "head_sha": r.head_sha,
        "path": r.workflow_path,
        "display_title": r.display_title,
        "run_number": r.run_number,
        "event": r.event,
        "status": status,
        "conclusion": conclusion,
        "workflow_id": r.workflow_id,
        "check_suite_id": check_suite_id,
        "check_suite_node_id": format!("CS_kwDO{}", &fake_sha(&format!("cs {check_suite_id}"))[..10]),
        "url": run_url,
        "html_url": r.html_url,
        "pull_requests": pulls,
        "created_at": ts(r.created_at),
        "updated_at": ts(updated),
        "actor": actor,
        "triggering_actor": actor,
        "run_attempt": run_attempt,
        "referenced_workflows": [],
        "run_started_at": started.map(ts),
        "jobs_url": format!("{run_url}/jobs"),
        "logs_url": format!("{run_url}/logs"),
        "check_suite_url": format!("{api}/repos/{repo}/check-suites/{check_suite_id}"),
        "artifacts_url": format!("{run_url}/artifacts"),
        "cancel_url": format!("{run_url}/cancel"),
        "rerun_url": format!("{run_url}/rerun"),
        "previous_attempt_url": previous,
        "workflow_url": format!("{api}/repos/{repo}/actions/workflows/{}", r.workflow_id),
        "head_commit": {
            "id": r.head_sha,
            "tree_id": fake_sha(&format!("tree {}", r.head_sha)),
            "message": message,
            "timestamp": ts(date),
            "author": {"name": author, "email": format!("{author}@users.noreply.github.com")},
            "committer": {"name": "GitHub", "email": "noreply@github.com"},
        },
        "repository": repo_min_json(ds, api),
        "head_repository": head_repo_json(ds, r.head_repository.as_deref(), api),
        "head_repository_id": head_repo_json(ds, r.head_repository.as_deref(), api)["id"],
    })
}

/// The runner labels a job name implies, in the style of NVIDIA's self-hosted runners.
pub(crate) fn job_labels(name: &str) -> Vec<String> {
    let lower = name.to_ascii_lowercase();
    let os = if lower.contains("win-64") {
        "windows-amd64"
    } else if lower.contains("aarch64") {
        "linux-arm64"
    } else {
        "linux-amd64"
    };
    let gpus = [
        "rtxpro6000",
        "rtx4090",
        "rtx2080",
        "h100",
        "a100",
        "l4",
        "t4",
    ];
    let gpu = gpus.iter().find(|g| {
        lower
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|w| w == **g)
    });
    match gpu {
        Some(g) => vec![format!("{os}-gpu-{g}-latest-1")],
        None if lower.starts_with("test") => vec![format!("{os}-gpu-l4-latest-1")],
        None => vec![format!("{os}-cpu16")],
    }
}

pub(crate) fn job_json(ds: &Dataset, run: &FakeRun, j: &Job, api: &str) -> Value {
    let repo = &ds.repo;
    let named = ds.runners.get(&j.id);
    let labels = match named {
        Some(_) if !j.labels.is_empty() => j.labels.clone(),
        _ => job_labels(&j.name),
    };
    let done = j.status == Status::Completed;
    let runner = j.started_at.map(|_| match named {
        Some(r) => r.name.clone(),
        None => format!(
            "{}-{}",
            labels[0],
            &fake_sha(&format!("runner {}", j.id))[..5]
        ),
    });
    let group = named.map_or("nv-gpu-runners", |r| r.group.as_str());
    let steps = job_steps(j);
    json!({
        "id": j.id,
        "run_id": j.run_id,
        "run_url": format!("{api}/repos/{repo}/actions/runs/{}", j.run_id),
        "run_attempt": j.run_attempt,
        "node_id": format!("CR_kwDO{}", &fake_sha(&format!("job {}", j.id))[..10]),
        "head_sha": j.head_sha,
        "url": format!("{api}/repos/{repo}/actions/jobs/{}", j.id),
        "html_url": j.html_url,
        "status": j.status,
        "conclusion": j.conclusion,
        "created_at": ts(j.created_at),
        "started_at": j.started_at.map(ts),
        "completed_at": if done { j.completed_at.map(ts) } else { None },
        "name": j.name,
        "steps": steps,
        "check_run_url": format!("{api}/repos/{repo}/check-runs/{}", j.id),
        "labels": labels,
        "runner_id": runner.as_ref().map(|_| 100_000 + j.id.0 % 90_000),
        "runner_name": runner,
        "runner_group_id": runner.as_ref().map(|_| 3),
        "runner_group_name": runner.as_ref().map(|_| group),
        "workflow_name": run.run.workflow_name,
        "head_branch": run.run.head_branch,
    })
}

/// Steps GitHub would list for a job: setup, checkout, the work, cleanup. Only the work step
/// carries the job's conclusion; an unfinished job is in its work step.
fn job_steps(j: &Job) -> Vec<Value> {
    let Some(start) = j.started_at else {
        return Vec::new();
    };
    let end = j.completed_at.unwrap_or(start);
    let work = if j.name.starts_with("Build") {
        "Build wheels"
    } else {
        "Run tests"
    };
    let names = [
        "Set up job",
        "Checkout",
        work,
        "Post Checkout",
        "Complete job",
    ];
    let span = (end - start).num_seconds().max(5);
    let completed = j.status == "completed".into();
    names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let s = start + chrono::TimeDelta::seconds(span * i as i64 / 5);
            let e = start + chrono::TimeDelta::seconds(span * (i as i64 + 1) / 5);
            let (status, conclusion) = match (completed, i) {
                (false, 0 | 1) => ("completed", Some("success")),
                (false, 2) => ("in_progress", None),
                (false, _) => ("queued", None),
                (true, 2) => ("completed", j.conclusion.as_ref().map(Conclusion::as_str)),
                (true, _) => ("completed", Some("success")),
            };
            json!({
                "name": name,
                "status": status,
                "conclusion": conclusion,
                "number": i + 1,
                "started_at": (status != "queued").then(|| ts(s)),
                "completed_at": (status == "completed").then(|| ts(e)),
            })
        })
        .collect()
}

fn pull_json(ds: &Dataset, p: &FakePull, api: &str, full: bool) -> Value {
    let repo = &ds.repo;
    let n = p.number;
    let pr_url = format!("{api}/repos/{repo}/pulls/{n}");
    let issue_url = format!("{api}/repos/{repo}/issues/{n}");
    let side = |r: &str, sha: &Sha, login: &str, fork: Option<&str>| {
        json!({
            "label": format!("{login}:{r}"),
            "ref": r,
            "sha": sha,
            "user": user_json(login, api),
            "repo": head_repo_json(ds, fork, api),
        })
    };
    let mut v = json!({
        "url": pr_url,
        "id": 2_000_000_000u64 + n,
        "node_id": format!("PR_kwDO{}", &fake_sha(&format!("pr {n}"))[..10]),
        "html_url": format!("https://github.com/{repo}/pull/{n}"),
        "diff_url": format!("https://github.com/{repo}/pull/{n}.diff"),
        "patch_url": format!("https://github.com/{repo}/pull/{n}.patch"),
        "issue_url": issue_url,
        "commits_url": format!("{pr_url}/commits"),
        "review_comments_url": format!("{pr_url}/comments"),
        "review_comment_url": format!("{api}/repos/{repo}/pulls/comments{{/number}}"),
        "comments_url": format!("{issue_url}/comments"),
        "statuses_url": format!("{api}/repos/{repo}/statuses/{}", p.head_sha),
        "number": n,
        "state": p.state,
        "locked": p.locked,
        "title": p.title,
        "user": user_json(&p.user, api),
        "body": null,
        "labels": [],
        "milestone": null,
        "active_lock_reason": null,
        "created_at": ts(p.created_at),
        "updated_at": ts(p.updated_at),
        "closed_at": p.closed_at.map(ts),
        "merged_at": p.merged_at.map(ts),
        "merge_commit_sha": p.merge_commit_sha,
        "assignee": null,
        "assignees": [],
        "requested_reviewers": [],
        "requested_teams": [],
        "head": side(&p.head_ref, &p.head_sha, &p.user, p.head_repo.as_deref()),
        "base": side(&p.base_ref, &p.base_sha, &ds.repo.owner, None),
        "_links": {
            "self": {"href": pr_url},
            "html": {"href": format!("https://github.com/{repo}/pull/{n}")},
            "issue": {"href": issue_url},
        },
        "author_association": "MEMBER",
        "auto_merge": null,
        "draft": p.draft,
    });
    if full {
        let additions: u64 = p.files.iter().map(|f| f.additions).sum();
        let deletions: u64 = p.files.iter().map(|f| f.deletions).sum();
        let extra = json!({
            "merged": p.merged_at.is_some(),
            "mergeable": if p.state == "open" { Some(true) } else { None },
            "rebaseable": null,
            "mergeable_state": if p.state == "open" { "clean" } else { "unknown" },
            "merged_by": p.merged_at.map(|_| user_json(&ds.repo.owner, api)),
            "comments": ds.comments.iter().filter(|c| c.issue_number == n).count(),
            "review_comments": 0,
            "maintainer_can_modify": false,
            "commits": 1,
            "additions": additions,
            "deletions": deletions,
            "changed_files": p.files.len(),
        });
        if let (Value::Object(base), Value::Object(more)) = (&mut v, extra) {
            base.extend(more);
        }
    }
    v
}

fn commit_json(ds: &Dataset, c: &FakeCommit, api: &str) -> Value {
    let repo = &ds.repo;
    let person = json!({
        "name": c.author,
        "email": format!("{}@users.noreply.github.com", c.author),
        "date": ts(c.date),
    });
    json!({
        "sha": c.sha,
        "node_id": format!("C_kwDO{}", &c.sha.0[..c.sha.0.len().min(10)]),
        "commit": {
            "author": person,
            "committer": {"name": "GitHub", "email": "noreply@github.com", "date": ts(c.date)},
            "message": c.message,
            "tree": {"sha": fake_sha(&format!("tree {}", c.sha)), "url": format!("{api}/repos/{repo}/git/trees/{}", fake_sha(&format!("tree {}", c.sha)))},
            "url": format!("{api}/repos/{repo}/git/commits/{}", c.sha),
            "comment_count": 0,
            "verification": {"verified": false, "reason": "unsigned", "signature": null, "payload": null, "verified_at": null},
        },
        "url": format!("{api}/repos/{repo}/commits/{}", c.sha),
        "html_url": format!("https://github.com/{repo}/commit/{}", c.sha),
        "comments_url": format!("{api}/repos/{repo}/commits/{}/comments", c.sha),
        "author": user_json(&c.author, api),
        "committer": user_json("web-flow", api),
        "parents": c.parents.iter().map(|p| json!({
            "sha": p,
            "url": format!("{api}/repos/{repo}/commits/{p}"),
            "html_url": format!("https://github.com/{repo}/commit/{p}"),
        })).collect::<Vec<_>>(),
    })
}

fn comment_json(ds: &Dataset, c: &FakeComment, api: &str) -> Value {
    let repo = &ds.repo;
    json!({
        "id": c.id,
        "node_id": format!("IC_kwDO{}", &fake_sha(&format!("comment {}", c.id))[..10]),
        "url": format!("{api}/repos/{repo}/issues/comments/{}", c.id),
        "html_url": format!("https://github.com/{repo}/issues/{}#issuecomment-{}", c.issue_number, c.id),
        "body": c.body,
        "user": user_json(&c.user, api),
        "created_at": ts(c.created_at),
        "updated_at": ts(c.updated_at),
        "issue_url": format!("{api}/repos/{repo}/issues/{}", c.issue_number),
        "author_association": "MEMBER",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The archive's top level spells job names as GitHub does: `/` dropped, a repeated name
    /// suffixed ` (1)`; each job also has a folder with its steps; every job that ran has a log.
    #[test]
    fn the_attempt_archive_names_jobs_as_github_does() {
        let mut ds = crate::scenario::synthetic(&crate::scenario::SyntheticSpec {
            runs: 5,
            ..Default::default()
        });
        let run = crate::scenario::synthetic_run_id(4);
        {
            let jobs = &mut ds.run_mut(run).unwrap().attempts[0].jobs;
            jobs[0].name = "Test linux-64 / py3.13".into();
            jobs[1].name = "build".into();
            jobs[2].name = "build".into();
        }
        let zip = attempt_archive(&ds, run, 1).unwrap();
        let mut names = Vec::new();
        let mut first = String::new();
        flakestat_zip::visit_files(std::io::Cursor::new(zip), |entry| {
            let (name, reader) = entry.unwrap();
            if names.is_empty() {
                reader.read_to_string(&mut first).unwrap();
            }
            names.push(name.to_string());
        })
        .unwrap();
        assert_eq!(
            names,
            [
                "1_Test linux-64  py3.13.txt",
                "Test linux-64  py3.13/1_Run tests.txt",
                "2_build.txt",
                "build/1_Run tests.txt",
                "3_build (1).txt",
                "build (1)/1_Run tests.txt",
                "4_Test job 3.txt",
                "Test job 3/1_Run tests.txt",
            ]
        );
        assert!(first.contains(&format!("FLAKE-MARKER run {run} attempt 1")));
        assert_eq!(attempt_archive(&ds, run, 2), Err(404));
        ds.logs.insert(JobId(run.0 * 10 + 100), FakeLog::Expired);
        assert_eq!(attempt_archive(&ds, run, 1), Err(410));
    }

    #[test]
    fn routes_parse() {
        let r = |p: &str| parse_route("GET", p).map(|(_, _, r)| r);
        assert_eq!(
            r("/repos/o/r/actions/runs/5/attempts/2/jobs"),
            Some(Route::AttemptJobs(RunId(5), 2))
        );
        assert_eq!(
            r("/repos/o/r/actions/workflows/ci.yml/runs"),
            Some(Route::ListRuns {
                workflow: Some("ci.yml".into())
            })
        );
        assert_eq!(
            r("/repos/o/r/compare/main...abc1234"),
            Some(Route::Compare {
                base: "main".into(),
                head: "abc1234".into()
            })
        );
        assert_eq!(r("/repos/o/r/actions/runs/x"), Some(Route::Unknown));
        assert_eq!(r("/user"), None);
        assert_eq!(
            parse_route("PATCH", "/repos/o/r/issues/comments/9").map(|x| x.2),
            Some(Route::UpdateComment(9))
        );
    }

    #[test]
    fn percent_decoding_keeps_plus() {
        assert_eq!(percent_decode("%3E%3D2026-06-15"), ">=2026-06-15");
        assert_eq!(percent_decode("a+b%2"), "a+b%2");
        assert_eq!(percent_decode("x%2B01:00"), "x+01:00");
    }

    #[test]
    fn labels_follow_the_job_name() {
        assert_eq!(
            job_labels("Test win-64 / Python 3.14t, CUDA 13.0.2 (wheels), GPU a100 (MCDM)"),
            vec!["windows-amd64-gpu-a100-latest-1"]
        );
        assert_eq!(
            job_labels("Test linux-64 / py3.14t, 12.9.1, local, t4"),
            vec!["linux-amd64-gpu-t4-latest-1"]
        );
        assert_eq!(
            job_labels("Build linux-aarch64 / py3.13"),
            vec!["linux-arm64-cpu16"]
        );
    }

    #[test]
    fn fake_shas_are_stable_and_hex() {
        let a = fake_sha("x");
        assert_eq!(a.len(), 40);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(a, fake_sha("x"));
        assert_ne!(a, fake_sha("y"));
    }
}
