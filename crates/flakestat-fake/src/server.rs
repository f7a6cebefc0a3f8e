//! The HTTP side of the fake: three listeners on 127.0.0.1 (the API, a "blob storage" host that
//! serves job logs behind signed URLs, and a third origin that only takes part in redirect chains),
//! deterministic fault injection, auth, rate-limit budgets, ETags, scripted redirect chains for a
//! job's log (`set_log_redirects`), and a record of every request with the `Authorization` header
//! it carried.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::task::JoinSet;

use super::app::{AppState, Decision, FakeApp};
use super::dataset::{Dataset, FakeAttempt, FakeComment, FakeLog, FakeRun};
use super::owners::{self, OwnerRoute};
use super::routes::{self, Ctx, Query, Reply, Route, RouteKind};
use flakestat_core::model::{JobId, RunId};

/// Deterministic misbehaviour. Counters run over API requests (not log-host requests), 1-based,
/// per server: `error_every: Some(3)` fails requests 3, 6, 9…, so a fault-injected run is
/// reproducible. When several faults pick the same request, the first of drop, error, secondary
/// limit wins. Faults are transient: the next try of a faulted request (same method and path)
/// is never faulted, so a client that retries gets through whatever the interleaving.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Faults {
    /// Slept before answering each request (both hosts).
    pub latency: Duration,
    /// Every Nth request is answered 502 (odd occurrences) or 503 (even ones), with a body.
    pub error_every: Option<u32>,
    /// Every Nth request: the connection is closed without an answer.
    pub drop_every: Option<u32>,
    /// Every Nth request is answered 403 with `retry-after` and the secondary-limit message.
    pub secondary_limit_every: Option<u32>,
    /// The `retry-after` value, in seconds.
    pub retry_after_secs: u64,
    /// The status of a secondary-limit answer: 403 (default) or 429, both seen on GitHub.
    pub secondary_limit_status: u16,
    /// The budget of authenticated requests per window (GitHub: 5,000/h). Once spent, requests
    /// are answered 403 with `x-ratelimit-remaining: 0` until the window resets. `None`: 5,000.
    pub rate_limit: Option<u32>,
    /// The budget of anonymous requests (GitHub: 60/h). `None`: same as `rate_limit`.
    pub anonymous_rate_limit: Option<u32>,
    /// How long after its first request a budget window resets (`x-ratelimit-reset`).
    pub rate_limit_window: Duration,
    /// The status of an exhausted-budget answer: 403 (default) or 429, both seen on GitHub.
    pub rate_limit_status: u16,
    /// How long a log redirect URL stays valid (GitHub: about a minute).
    pub log_url_ttl: Duration,
    /// GitHub's stale-attempt-log bug (GITHUB.md): `GET /actions/jobs/{id}/logs` for a job of an
    /// earlier attempt answers with the log of the latest attempt's execution of that job.
    pub stale_attempt_logs: bool,
    /// The first N downloads of each log (a job's log, an attempt's archive) on the log host
    /// are answered 403 `AuthenticationFailed`, what Azure answers a signed URL that expired
    /// (a URL handed out, then used after a long queue). 1: the URL asked for again works; 2:
    /// the log stays unavailable to a client that asks once more.
    pub expired_log_downloads: u32,
}

impl Default for Faults {
    fn default() -> Faults {
        Faults {
            latency: Duration::ZERO,
            error_every: None,
            drop_every: None,
            secondary_limit_every: None,
            retry_after_secs: 1,
            secondary_limit_status: 403,
            rate_limit: None,
            anonymous_rate_limit: None,
            rate_limit_window: Duration::from_secs(3600),
            rate_limit_status: 403,
            log_url_ttl: Duration::from_secs(60),
            stale_attempt_logs: false,
            expired_log_downloads: 0,
        }
    }
}

/// Which listener a request reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listener {
    Api,
    LogHost,
    /// A third origin: serves nothing but scripted redirect hops (`set_log_redirects`).
    Elsewhere,
}

/// One answer of a scripted redirect chain (`FakeGitHub::set_log_redirects`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hop {
    /// Answer this status (301, 302, 303, 307, 308) with a `Location` on that listener: the next
    /// hop of the chain, or the log itself after the last hop.
    To(u16, Listener),
    /// Answer this status with this `Location`, verbatim (`file:///etc/passwd`, `ftp://…`).
    Location(u16, String),
}

/// One request as the fake saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedRequest {
    pub listener: Listener,
    /// `127.0.0.1:PORT` of the listener.
    pub host: String,
    pub method: String,
    /// Path and query, as sent.
    pub path: String,
    /// Whether an `Authorization` header arrived.
    pub authorization: bool,
    /// The `Authorization` header's value, as it arrived (tests assert it never reaches another
    /// origin).
    pub authorization_value: Option<String>,
    /// The status answered; 0 when the connection was dropped without an answer.
    pub status: u16,
    pub kind: RouteKind,
    /// When the answer was decided (after `Faults::latency`): the benchmark's timeline.
    pub answered: std::time::Instant,
    /// Every `User-Agent` header that arrived, in order (GitHub wants exactly one).
    pub user_agents: Vec<String>,
}

const DEFAULT_LIMIT: u32 = 5000;

#[derive(Debug)]
struct Budget {
    used: u32,
    /// Epoch seconds; 0 before the first request.
    reset: u64,
}

impl Budget {
    fn refresh(&mut self, now: u64, window: Duration) {
        if self.reset == 0 || now >= self.reset {
            self.used = 0;
            self.reset = now + window.as_secs().max(1);
        }
    }
}

struct State {
    /// One per repository served; the first is the one `dataset()` and `mutate` name, and its
    /// `auth` decides for the whole server.
    datasets: Vec<Dataset>,
    /// Owners that are users, not organisations: `/orgs/{owner}/repos` answers them 404.
    users: BTreeSet<String>,
    faults: Faults,
    requests: Vec<RecordedRequest>,
    api_count: u64,
    /// Requests (method and path) whose last try was faulted: their next try is answered
    /// normally, so faults are transient as on GitHub and a bounded retry always gets through,
    /// however concurrent requests interleave with the counters.
    faulted: std::collections::HashSet<String>,
    token_budget: Budget,
    anonymous_budget: Budget,
    /// Scripted redirect chains of job logs.
    redirects: BTreeMap<JobId, Vec<Hop>>,
    /// A GitHub App (`app.rs`): while set, its installation tokens are the only credentials.
    app: Option<AppState>,
    /// Downloads so far of each log host path (`Faults::expired_log_downloads`).
    log_downloads: HashMap<String, u32>,
}

struct Shared {
    state: Mutex<State>,
    api_addr: SocketAddr,
    log_addr: SocketAddr,
    elsewhere_addr: SocketAddr,
    /// Signs log URLs; fixed per server.
    secret: u64,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock (a bug in a route) must not wedge every later request.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn api_url(&self) -> String {
        format!("http://{}", self.api_addr)
    }

    fn addr(&self, which: Listener) -> SocketAddr {
        match which {
            Listener::Api => self.api_addr,
            Listener::LogHost => self.log_addr,
            Listener::Elsewhere => self.elsewhere_addr,
        }
    }

    fn log_signature(&self, job: JobId, expires: u64) -> String {
        routes::fake_sha(&format!("{}:{job}:{expires}", self.secret))[..32].to_string()
    }

    fn artifact_signature(&self, artifact: u64, expires: u64) -> String {
        routes::fake_sha(&format!("{}:artifact:{artifact}:{expires}", self.secret))[..32]
            .to_string()
    }

    fn archive_signature(&self, run: RunId, attempt: u32, expires: u64) -> String {
        routes::fake_sha(&format!(
            "{}:archive:{run}:{attempt}:{expires}",
            self.secret
        ))[..32]
            .to_string()
    }
}

/// Returned by a handler to close the connection without an answer.
#[derive(Debug)]
struct DropConnection;

impl std::fmt::Display for DropConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("fault injection: connection dropped")
    }
}

impl std::error::Error for DropConnection {}

type HttpResponse = Response<Full<Bytes>>;

/// A running fake GitHub. Dropping it (or calling `shutdown`) stops both listeners and every
/// open connection.
pub struct FakeGitHub {
    shared: Arc<Shared>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    thread: Option<(
        std::thread::JoinHandle<()>,
        tokio::sync::oneshot::Sender<()>,
    )>,
}

impl std::fmt::Debug for FakeGitHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeGitHub")
            .field("api", &self.shared.api_addr)
            .field("log_host", &self.shared.log_addr)
            .finish()
    }
}

impl FakeGitHub {
    /// Binds two ephemeral ports on 127.0.0.1 and serves `dataset` on the current tokio runtime.
    pub async fn start(dataset: Dataset, faults: Faults) -> std::io::Result<FakeGitHub> {
        FakeGitHub::start_many(vec![dataset], faults).await
    }

    /// Serves several repositories behind one server (one rate-limit budget, one fault
    /// counter), with their owners' repository listings (`/orgs/{org}/repos`,
    /// `/users/{user}/repos`). Job and run ids must not repeat across the datasets. The first
    /// dataset is the one [`FakeGitHub::dataset`] and [`FakeGitHub::mutate`] name; its `auth`
    /// applies to every request.
    pub async fn start_many(datasets: Vec<Dataset>, faults: Faults) -> std::io::Result<FakeGitHub> {
        if datasets.is_empty() {
            return Err(std::io::Error::other(
                "the fake GitHub needs at least one dataset",
            ));
        }
        let api = TcpListener::bind("127.0.0.1:0").await?;
        let logs = TcpListener::bind("127.0.0.1:0").await?;
        let elsewhere = TcpListener::bind("127.0.0.1:0").await?;
        let api_addr = api.local_addr()?;
        let log_addr = logs.local_addr()?;
        let elsewhere_addr = elsewhere.local_addr()?;
        let secret = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(7, |d| d.as_nanos() as u64)
            ^ u64::from(api_addr.port());
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                datasets,
                users: BTreeSet::new(),
                faults,
                requests: Vec::new(),
                api_count: 0,
                faulted: Default::default(),
                log_downloads: HashMap::new(),
                token_budget: Budget { used: 0, reset: 0 },
                anonymous_budget: Budget { used: 0, reset: 0 },
                redirects: BTreeMap::new(),
                app: None,
            }),
            api_addr,
            log_addr,
            elsewhere_addr,
            secret,
        });
        let tasks = vec![
            tokio::spawn(accept_loop(api, shared.clone(), Listener::Api)),
            tokio::spawn(accept_loop(logs, shared.clone(), Listener::LogHost)),
            tokio::spawn(accept_loop(elsewhere, shared.clone(), Listener::Elsewhere)),
        ];
        Ok(FakeGitHub {
            shared,
            tasks,
            thread: None,
        })
    }

    /// Starts the server on a runtime of its own, in a background thread: for blocking callers
    /// (`survey --replay`, synchronous tests).
    pub fn start_blocking(dataset: Dataset, faults: Faults) -> std::io::Result<FakeGitHub> {
        FakeGitHub::start_many_blocking(vec![dataset], faults)
    }

    /// [`FakeGitHub::start_many`] on a runtime of its own, in a background thread.
    pub fn start_many_blocking(
        datasets: Vec<Dataset>,
        faults: Faults,
    ) -> std::io::Result<FakeGitHub> {
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("fake-github".to_string())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                runtime.block_on(async move {
                    match FakeGitHub::start_many(datasets, faults).await {
                        Ok(server) => {
                            let _ = ready_tx.send(Ok(server.shared.clone()));
                            let _ = stop_rx.await;
                            server.shutdown();
                        }
                        Err(e) => {
                            let _ = ready_tx.send(Err(e));
                        }
                    }
                });
            })?;
        let shared = ready_rx
            .recv()
            .map_err(|_| std::io::Error::other("the fake GitHub thread died while starting"))??;
        Ok(FakeGitHub {
            shared,
            tasks: Vec::new(),
            thread: Some((thread, stop_tx)),
        })
    }

    /// `http://127.0.0.1:PORT`: the API root, no trailing slash.
    pub fn api_url(&self) -> String {
        self.shared.api_url()
    }

    /// `http://127.0.0.1:PORT` of the second listener, which serves log blobs.
    pub fn log_host_url(&self) -> String {
        format!("http://{}", self.shared.log_addr)
    }

    /// `http://127.0.0.1:PORT` of the third listener, which only serves redirect hops.
    pub fn elsewhere_url(&self) -> String {
        format!("http://{}", self.shared.elsewhere_addr)
    }

    /// Scripts the answers to a job's log request: the log endpoint answers `hops[0]`, each hop
    /// it points to answers the next one, and the request after the last hop gets the log (the
    /// dataset's text for the job, 404 without one), whichever listener it reaches. An empty
    /// chain restores the usual single 302 to the log host.
    pub fn set_log_redirects(&self, job: JobId, hops: Vec<Hop>) {
        let mut state = self.shared.lock();
        if hops.is_empty() {
            state.redirects.remove(&job);
        } else {
            state.redirects.insert(job, hops);
        }
    }

    /// Serves a GitHub App's routes (`app.rs`) from the next request on; from then the API
    /// takes only that App's current installation tokens. `Err` when its public key is not PEM.
    pub fn set_app(&self, app: FakeApp) -> Result<(), String> {
        self.shared.lock().app = Some(AppState::new(app)?);
        Ok(())
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.clone()
    }

    /// How many requests of a kind arrived (faulted ones included).
    pub fn request_count(&self, kind: RouteKind) -> usize {
        self.shared
            .lock()
            .requests
            .iter()
            .filter(|r| r.kind == kind)
            .count()
    }

    /// Requests per kind.
    pub fn request_counts(&self) -> BTreeMap<RouteKind, usize> {
        let mut counts = BTreeMap::new();
        for r in &self.shared.lock().requests {
            *counts.entry(r.kind).or_insert(0) += 1;
        }
        counts
    }

    /// Starts both budgets afresh, as if their reset time had passed: the next request opens a
    /// new window with the whole budget. For tests that resume a stopped survey without waiting
    /// for the reset (however slow the machine, each survey then gets exactly one budget).
    pub fn refill_budget(&self) {
        let mut state = self.shared.lock();
        state.token_budget = Budget { used: 0, reset: 0 };
        state.anonymous_budget = Budget { used: 0, reset: 0 };
    }

    /// Forgets the recorded requests (the fault counter keeps running).
    pub fn clear_requests(&self) {
        self.shared.lock().requests.clear();
    }

    /// Replaces the faults from the next request on; the request counter keeps running.
    pub fn set_faults(&self, faults: Faults) {
        self.shared.lock().faults = faults;
    }

    /// A copy of the dataset as it is now (comments posted included).
    pub fn dataset(&self) -> Dataset {
        self.shared.lock().datasets[0].clone()
    }

    /// Every dataset served, in the order given.
    pub fn datasets(&self) -> Vec<Dataset> {
        self.shared.lock().datasets.clone()
    }

    /// Marks these owners as users rather than organisations: `/orgs/{owner}/repos` answers
    /// 404 for them, as GitHub does, and `/users/{owner}/repos` lists their repositories.
    pub fn set_users(&self, logins: &[&str]) {
        self.shared.lock().users = logins.iter().map(|l| l.to_ascii_lowercase()).collect();
    }

    /// Changes the dataset of one repository in place; `None` when none is served.
    pub fn mutate_repo<R>(
        &self,
        repo: &flakestat_core::model::Repo,
        f: impl FnOnce(&mut Dataset) -> R,
    ) -> Option<R> {
        let mut state = self.shared.lock();
        let ds = state
            .datasets
            .iter_mut()
            .find(|d| d.repo.to_string().eq_ignore_ascii_case(&repo.to_string()))?;
        Some(f(ds))
    }

    /// Changes the dataset in place: the way to simulate "a day later".
    pub fn mutate<R>(&self, f: impl FnOnce(&mut Dataset) -> R) -> R {
        f(&mut self.shared.lock().datasets[0])
    }

    /// Adds a run (a new run appearing since the last survey).
    pub fn add_run(&self, run: FakeRun) {
        self.mutate(|ds| ds.runs.push(run));
    }

    /// Adds an attempt to a run (a re-run); `false` when the run is unknown.
    pub fn push_attempt(&self, run: RunId, attempt: FakeAttempt) -> bool {
        self.mutate(|ds| ds.push_attempt(run, attempt))
    }

    /// Sets a job's log.
    pub fn set_log(&self, job: JobId, log: FakeLog) {
        self.mutate(|ds| {
            ds.logs.insert(job, log);
        });
    }

    /// The comments of an issue or pull request, oldest first.
    pub fn comments(&self, issue: u64) -> Vec<FakeComment> {
        self.shared.lock().datasets[0]
            .comments
            .iter()
            .filter(|c| c.issue_number == issue)
            .cloned()
            .collect()
    }

    /// The check runs Apps created on `head_sha`, oldest first.
    pub fn check_runs(&self, head_sha: &str) -> Vec<crate::FakeCheckRun> {
        self.shared.lock().datasets[0]
            .check_runs
            .iter()
            .filter(|c| c.head_sha == head_sha)
            .cloned()
            .collect()
    }

    /// Stops both listeners and closes every connection.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        for task in self.tasks.drain(..) {
            task.abort();
        }
        if let Some((thread, stop)) = self.thread.take() {
            let _ = stop.send(());
            let _ = thread.join();
        }
    }
}

impl Drop for FakeGitHub {
    fn drop(&mut self) {
        self.stop();
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>, which: Listener) {
    // Connections live in this set: aborting the accept loop drops it and aborts them all.
    let mut connections = JoinSet::new();
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(_) => continue,
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
        };
        let shared = shared.clone();
        connections.spawn(async move {
            let service = service_fn(move |req| {
                let shared = shared.clone();
                async move {
                    if let Some(hop) = scripted_hop(&shared, which, &req) {
                        return Ok(serve_hop(&shared, which, &req, hop));
                    }
                    match which {
                        Listener::Api => serve_api(shared, req).await,
                        Listener::LogHost => Ok(serve_log(shared, req).await),
                        Listener::Elsewhere => Ok(serve_hop(&shared, which, &req, None)),
                    }
                }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

fn epoch_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn every(n: u64, k: Option<u32>) -> bool {
    matches!(k, Some(k) if k > 0 && n.is_multiple_of(u64::from(k)))
}

/// Who is asking.
enum Caller {
    Anonymous,
    /// A token the dataset accepts; `access` false for tokens without access to the repository.
    Token {
        access: bool,
    },
    /// A current installation token of the App (`app.rs`).
    App,
    BadToken,
}

fn caller(ds: &Dataset, req: &Request<Incoming>) -> Caller {
    let Some(value) = req.headers().get(hyper::header::AUTHORIZATION) else {
        return Caller::Anonymous;
    };
    let value = value.to_str().unwrap_or("");
    let token = value
        .strip_prefix("Bearer ")
        .or_else(|| value.strip_prefix("token "))
        .or_else(|| value.strip_prefix("bearer "))
        .unwrap_or("")
        .trim();
    if token.is_empty() {
        return Caller::BadToken;
    }
    if ds.auth.tokens_without_access.iter().any(|t| t == token) {
        return Caller::Token { access: false };
    }
    if ds.auth.tokens.is_empty() || ds.auth.tokens.iter().any(|t| t == token) {
        Caller::Token { access: true }
    } else {
        Caller::BadToken
    }
}

/// What `serve_api` reads from a request's head.
struct ApiRequest {
    method: String,
    path: String,
    path_and_query: String,
    query: Query,
    if_none_match: Option<String>,
    has_auth: bool,
    auth_value: Option<String>,
    parsed: Option<(String, String, Route)>,
    /// `/orgs/{org}/repos` or `/users/{user}/repos`.
    owner_route: Option<OwnerRoute>,
    kind: RouteKind,
}

impl ApiRequest {
    fn read(req: &Request<Incoming>) -> ApiRequest {
        let method = req.method().as_str().to_string();
        let path = req.uri().path().to_string();
        let path_and_query = req
            .uri()
            .path_and_query()
            .map_or(path.clone(), |p| p.as_str().to_string());
        let if_none_match = req
            .headers()
            .get(hyper::header::IF_NONE_MATCH)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        // GitHub Enterprise Server roots the API at /api/v3: accept both.
        let api_path = path.strip_prefix("/api/v3").unwrap_or(&path).to_string();
        let rate_limit_route = method == "GET" && api_path == "/rate_limit";
        let parsed = routes::parse_route(&method, &api_path);
        let owner_route = owners::parse_owner_route(&method, &api_path);
        let kind = match &parsed {
            Some(p) => p.2.kind(),
            None if rate_limit_route => RouteKind::RateLimit,
            None if owner_route.is_some() => RouteKind::OwnerRepos,
            None => RouteKind::Unknown,
        };
        ApiRequest {
            query: Query::parse(req.uri().query()),
            if_none_match,
            has_auth: req.headers().contains_key(hyper::header::AUTHORIZATION),
            auth_value: authorization_value(req),
            parsed,
            owner_route,
            kind,
            method,
            path,
            path_and_query,
        }
    }
}

async fn serve_api(
    shared: Arc<Shared>,
    req: Request<Incoming>,
) -> Result<HttpResponse, DropConnection> {
    let latency = shared.lock().faults.latency;
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    let head = ApiRequest::read(&req);
    let agents = user_agents(&req);
    let api_path = head.path.strip_prefix("/api/v3").unwrap_or(&head.path);
    let decision = {
        let State { app, users, .. } = &mut *shared.lock();
        app.as_mut()
            .map(|app| app.decide(&head.method, api_path, head.auth_value.as_deref(), users))
    };
    let who = match decision {
        Some(Decision::Reply(reply, kind)) => {
            return Ok(answer_as_app(&shared, &head, agents, reply, kind));
        }
        Some(Decision::Admit) => Caller::App,
        Some(Decision::Anonymous) => Caller::Anonymous,
        None => caller(&shared.lock().datasets[0], &req),
    };
    let body = if head.method == "GET" {
        Bytes::new()
    } else {
        req.into_body()
            .collect()
            .await
            .map(|b| b.to_bytes())
            .unwrap_or_default()
    };

    let mut state = shared.lock();
    state.api_count += 1;
    let n = state.api_count;
    let record = |state: &mut State, status: u16| {
        state.requests.push(RecordedRequest {
            answered: std::time::Instant::now(),
            user_agents: agents.clone(),
            listener: Listener::Api,
            host: shared.api_addr.to_string(),
            method: head.method.clone(),
            path: head.path_and_query.clone(),
            authorization: head.has_auth,
            authorization_value: head.auth_value.clone(),
            status,
            kind: head.kind,
        });
    };
    let faults = faults_for(
        &mut state,
        n,
        &format!("{} {}", head.method, head.path_and_query),
    );
    if every(n, faults.drop_every) {
        record(&mut state, 0);
        return Err(DropConnection);
    }
    let anonymous = matches!(who, Caller::Anonymous);
    let limit = rate_limit(&faults, anonymous);
    let budget = if anonymous {
        &mut state.anonymous_budget
    } else {
        &mut state.token_budget
    };
    budget.refresh(epoch_now(), faults.rate_limit_window);

    let reply = match injected_fault(n, &faults) {
        Some(reply) => reply,
        None => {
            let State {
                datasets,
                users,
                token_budget,
                anonymous_budget,
                ..
            } = &mut *state;
            let budget = if anonymous {
                anonymous_budget
            } else {
                token_budget
            };
            answer_api(
                &shared,
                (datasets, users),
                budget,
                limit,
                &who,
                (head.parsed.clone(), head.owner_route.clone()),
                &head.query,
                &head.path,
                &body,
                head.if_none_match.as_deref(),
                faults.log_url_ttl.as_secs().max(1),
                faults.rate_limit_status,
                faults.stale_attempt_logs,
            )
        }
    };
    let budget = if anonymous {
        &state.anonymous_budget
    } else {
        &state.token_budget
    };
    let rate = rate_headers(limit, budget);
    record(&mut state, reply.status);
    drop(state);
    Ok(build_response(reply, &rate, n))
}

/// An answer of the App side (`app.rs`), recorded like any other; App routes are free and
/// fault-free.
fn answer_as_app(
    shared: &Shared,
    head: &ApiRequest,
    agents: Vec<String>,
    reply: Reply,
    kind: Option<RouteKind>,
) -> HttpResponse {
    let mut state = shared.lock();
    state.api_count += 1;
    let n = state.api_count;
    state.requests.push(RecordedRequest {
        answered: std::time::Instant::now(),
        user_agents: agents,
        listener: Listener::Api,
        host: shared.api_addr.to_string(),
        method: head.method.clone(),
        path: head.path_and_query.clone(),
        authorization: head.has_auth,
        authorization_value: head.auth_value.clone(),
        status: reply.status,
        kind: kind.unwrap_or(head.kind),
    });
    drop(state);
    build_response(reply, &[], n)
}

/// The faults for request `n` (`key`: its method and path). A request a fault hit is answered
/// without faults when it is retried, so every fault costs one retry.
fn faults_for(state: &mut State, n: u64, key: &str) -> Faults {
    let mut faults = state.faults.clone();
    if state.faulted.remove(key) {
        faults.drop_every = None;
        faults.error_every = None;
        faults.secondary_limit_every = None;
    } else if [
        faults.drop_every,
        faults.error_every,
        faults.secondary_limit_every,
    ]
    .into_iter()
    .any(|f| every(n, f))
    {
        state.faulted.insert(key.to_string());
    }
    faults
}

/// The primary rate limit of a token, or of anonymous callers.
fn rate_limit(faults: &Faults, anonymous: bool) -> u32 {
    if anonymous {
        faults
            .anonymous_rate_limit
            .or(faults.rate_limit)
            .unwrap_or(DEFAULT_LIMIT)
    } else {
        faults.rate_limit.unwrap_or(DEFAULT_LIMIT)
    }
}

/// A server error (502 and 503 in turn) or a secondary rate limit, when request `n` gets one.
fn injected_fault(n: u64, faults: &Faults) -> Option<Reply> {
    if every(n, faults.error_every) {
        let occurrence = n / u64::from(faults.error_every.unwrap_or(1));
        return Some(if occurrence % 2 == 1 {
            Reply::json(
                502,
                &serde_json::json!({"message": "Server Error", "status": "502"}),
            )
        } else {
            Reply {
                status: 503,
                content_type: "text/html; charset=utf-8",
                body: b"<html><body><h1>503 Service Unavailable</h1>No server is available to handle this request.</body></html>\n".to_vec(),
                headers: Vec::new(),
            }
        });
    }
    if every(n, faults.secondary_limit_every) {
        let mut r = Reply::error(
            faults.secondary_limit_status,
            "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID FAKE:0000.",
            "/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits",
        );
        r.headers
            .push(("retry-after".into(), faults.retry_after_secs.to_string()));
        return Some(r);
    }
    None
}

/// The `x-ratelimit-*` headers every API answer carries.
fn rate_headers(limit: u32, budget: &Budget) -> [(&'static str, String); 5] {
    [
        ("x-ratelimit-limit", limit.to_string()),
        (
            "x-ratelimit-remaining",
            limit.saturating_sub(budget.used).to_string(),
        ),
        ("x-ratelimit-used", budget.used.min(limit).to_string()),
        ("x-ratelimit-reset", budget.reset.to_string()),
        ("x-ratelimit-resource", "core".to_string()),
    ]
}

#[allow(clippy::too_many_arguments)]
fn answer_api(
    shared: &Shared,
    (datasets, users): (&mut [Dataset], &BTreeSet<String>),
    budget: &mut Budget,
    limit: u32,
    who: &Caller,
    (parsed, owner_route): (Option<(String, String, Route)>, Option<OwnerRoute>),
    query: &Query,
    path: &str,
    body: &[u8],
    if_none_match: Option<&str>,
    log_ttl: u64,
    limit_status: u16,
    stale_attempt_logs: bool,
) -> Reply {
    let requested = Requested {
        parsed,
        owner_route,
        path,
    };
    let (target, access) = match admit(datasets, budget, limit, who, requested, limit_status) {
        Ok(admitted) => admitted,
        Err(refused) => return refused,
    };
    let (ds, route) = match target {
        Admitted::Repo(index, route) => (&mut datasets[index], route),
        Admitted::Owner(owner_route) => {
            let api = shared.api_url();
            let listing = owners::OwnerListing {
                users,
                api: &api,
                path,
                query,
            };
            let mut reply = owners::list_owner_repos(datasets, &owner_route, access, &listing);
            if reply.status == 200 && tag(&mut reply, if_none_match) {
                // A 304 does not count against the rate limit.
                return reply;
            }
            budget.used += 1;
            return reply;
        }
    };
    let log_url = |job: JobId| {
        let expires = epoch_now() + log_ttl;
        format!(
            "http://{}/logs/{job}?se={expires}&sig={}",
            shared.log_addr,
            shared.log_signature(job, expires)
        )
    };
    let archive_url = |run: RunId, n: u32| {
        let expires = epoch_now() + log_ttl;
        format!(
            "http://{}/archives/{run}/{n}?se={expires}&sig={}",
            shared.log_addr,
            shared.archive_signature(run, n, expires)
        )
    };
    let artifact_url = |artifact: u64| {
        let expires = epoch_now() + log_ttl;
        format!(
            "http://{}/artifacts/{artifact}?se={expires}&sig={}",
            shared.log_addr,
            shared.artifact_signature(artifact, expires)
        )
    };
    let api = shared.api_url();
    let login = if access { "flakestat-bot" } else { "anonymous" };
    let ctx = Ctx {
        api: &api,
        path,
        query,
        log_url: &log_url,
        archive_url: &archive_url,
        artifact_url: &artifact_url,
        stale_attempt_logs,
        body,
        login,
        app: matches!(who, Caller::App),
    };
    let mut reply = routes::answer(ds, &route, &ctx);
    if !route.is_write() && reply.status == 200 && tag(&mut reply, if_none_match) {
        // A 304 does not count against the rate limit.
        return reply;
    }
    budget.used += 1;
    reply
}

/// What a request asks for, as `ApiRequest::read` parsed it.
struct Requested<'a> {
    parsed: Option<(String, String, Route)>,
    owner_route: Option<OwnerRoute>,
    path: &'a str,
}

/// What an admitted request is answered from.
enum Admitted {
    /// A route of the repository served by `datasets[index]`.
    Repo(usize, Route),
    /// An owner's repository listing.
    Owner(OwnerRoute),
}

/// The checks before a route is answered, in GitHub's order: credentials, the free
/// `/rate_limit`, the budget, the repository and its visibility, write access. Returns what to
/// answer from and whether the caller has access, or the refusal (counted when GitHub counts
/// it). The first dataset's `auth` decides for the whole server.
fn admit(
    datasets: &[Dataset],
    budget: &mut Budget,
    limit: u32,
    who: &Caller,
    requested: Requested<'_>,
    limit_status: u16,
) -> Result<(Admitted, bool), Reply> {
    let Requested {
        parsed,
        owner_route,
        path,
    } = requested;
    if matches!(who, Caller::BadToken) {
        return Err(Reply::error(401, "Bad credentials", ""));
    }
    if datasets[0].auth.require_token && matches!(who, Caller::Anonymous) {
        return Err(Reply::error(401, "Requires authentication", ""));
    }
    if parsed.is_none() && path.trim_start_matches("/api/v3") == "/rate_limit" {
        // Free: GitHub does not count it.
        let core = serde_json::json!({
            "limit": limit,
            "remaining": limit.saturating_sub(budget.used),
            "reset": budget.reset,
            "used": budget.used.min(limit),
            "resource": "core",
        });
        return Err(Reply::json(
            200,
            &serde_json::json!({"resources": {"core": core}, "rate": core}),
        ));
    }
    if budget.used >= limit {
        let message = if matches!(who, Caller::Anonymous) {
            "API rate limit exceeded for 127.0.0.1. (But here's the good news: Authenticated requests get a higher rate limit. Check out the documentation for more details.)"
        } else {
            "API rate limit exceeded for user ID 1. If you reach out to GitHub Support for help, please include the request ID FAKE:0001."
        };
        return Err(Reply::error(
            limit_status,
            message,
            "/overview/rate-limits-for-the-rest-api#about-the-primary-rate-limit",
        ));
    }
    let access = match who {
        Caller::Token { access } => *access,
        Caller::App => true,
        _ => false,
    };
    if let Some(owner_route) = owner_route {
        return Ok((Admitted::Owner(owner_route), access));
    }
    let Some((owner, name, route)) = parsed else {
        budget.used += 1;
        return Err(Reply::not_found());
    };
    let index = datasets.iter().position(|d| {
        owner.eq_ignore_ascii_case(&d.repo.owner) && name.eq_ignore_ascii_case(&d.repo.name)
    });
    let Some(index) = index.filter(|&i| !datasets[i].private || access) else {
        budget.used += 1;
        return Err(Reply::error(
            404,
            "Not Found",
            "/repos/repos#get-a-repository",
        ));
    };
    if route.is_write() {
        if matches!(who, Caller::Anonymous) {
            return Err(Reply::error(401, "Requires authentication", ""));
        }
        if !access {
            budget.used += 1;
            return Err(Reply::error(
                403,
                "Resource not accessible by personal access token",
                "/issues/comments",
            ));
        }
    }
    Ok((Admitted::Repo(index, route), access))
}

/// Gives a 200 its weak ETag; answers 304 instead (and returns true) when `if_none_match`
/// names it.
fn tag(reply: &mut Reply, if_none_match: Option<&str>) -> bool {
    let etag = format!(
        "W/\"{}\"",
        &routes::fake_sha(&String::from_utf8_lossy(&reply.body))[..32]
    );
    let matched = if_none_match.is_some_and(|inm| {
        inm.split(',')
            .any(|t| t.trim() == "*" || t.trim().trim_start_matches("W/") == &etag[2..])
    });
    if matched {
        reply.status = 304;
        reply.body.clear();
        reply.headers.retain(|(k, _)| k != "link");
    }
    reply.headers.push(("etag".into(), etag));
    matched
}

fn build_response(reply: Reply, rate: &[(&str, String)], n: u64) -> HttpResponse {
    let mut builder = Response::builder()
        .status(StatusCode::from_u16(reply.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
        .header("server", "github.com")
        .header("x-github-api-version-selected", "2022-11-28")
        .header("x-github-media-type", "github.v3; format=json")
        .header("x-github-request-id", format!("FAKE:{n:08X}"));
    if reply.status != 304 && reply.status != 302 {
        builder = builder.header("content-type", reply.content_type);
    }
    for (k, v) in rate {
        builder = builder.header(*k, v);
    }
    for (k, v) in &reply.headers {
        builder = builder.header(k.as_str(), v.as_str());
    }
    builder
        .body(Full::new(Bytes::from(reply.body)))
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new())))
}

async fn serve_log(shared: Arc<Shared>, req: Request<Incoming>) -> HttpResponse {
    let latency = shared.lock().faults.latency;
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    let path = req.uri().path().to_string();
    let path_and_query = req
        .uri()
        .path_and_query()
        .map_or(path.clone(), |p| p.as_str().to_string());
    let query = Query::parse(req.uri().query());
    let has_auth = req.headers().contains_key(hyper::header::AUTHORIZATION);
    let auth_value = authorization_value(&req);
    let agents = user_agents(&req);
    let job = path
        .strip_prefix("/logs/")
        .and_then(|s| s.parse::<u64>().ok())
        .map(JobId);
    let archive = path.strip_prefix("/archives/").and_then(|rest| {
        let (run, n) = rest.split_once('/')?;
        Some((RunId(run.parse().ok()?), n.parse::<u32>().ok()?))
    });
    let artifact = path
        .strip_prefix("/artifacts/")
        .and_then(|s| s.parse::<u64>().ok());
    let expires = query.get("se").and_then(|s| s.parse::<u64>().ok());
    let signed = match (job, archive, expires, query.get("sig")) {
        _ if artifact.is_some() => match (artifact, expires, query.get("sig")) {
            (Some(a), Some(e), Some(sig)) => shared.artifact_signature(a, e) == sig,
            _ => false,
        },
        (Some(j), _, Some(e), Some(sig)) => shared.log_signature(j, e) == sig,
        (_, Some((run, n)), Some(e), Some(sig)) => shared.archive_signature(run, n, e) == sig,
        _ => false,
    };
    let mut state = shared.lock();
    let expired_first = state.faults.expired_log_downloads;
    let downloads = if signed && artifact.is_none() && expired_first > 0 {
        let n = state.log_downloads.entry(path.clone()).or_default();
        *n += 1;
        *n
    } else {
        u32::MAX
    };
    let (status, content_type, body): (u16, &str, Vec<u8>) = if !signed {
        (
            403,
            "application/xml",
            azure_error("AuthenticationFailed", "Signature did not match."),
        )
    } else if expires.is_some_and(|e| e < epoch_now()) || downloads <= expired_first {
        (
            403,
            "application/xml",
            azure_error(
                "AuthenticationFailed",
                "Signed expiry time has to be after signed start time.",
            ),
        )
    } else if let Some(id) = artifact {
        let zip = state
            .datasets
            .iter()
            .find_map(|d| d.artifacts.iter().find(|a| a.id == id))
            .and_then(routes::artifact_bytes);
        match zip {
            Some(zip) => (200, "application/zip", zip),
            None => (
                404,
                "application/xml",
                azure_error("BlobNotFound", "The specified blob does not exist."),
            ),
        }
    } else if let Some((run, n)) = archive {
        let served = state.datasets.iter().find(|d| d.run(run).is_some());
        match served.map_or(Err(404), |d| routes::attempt_archive(d, run, n)) {
            Ok(zip) => (200, "application/zip", zip),
            Err(_) => (
                404,
                "application/xml",
                azure_error("BlobNotFound", "The specified blob does not exist."),
            ),
        }
    } else {
        let text = job.and_then(|j| {
            state
                .datasets
                .iter()
                .find_map(|d| routes::job_log_text(d, j))
        });
        match text {
            Some(text) => (200, "text/plain; charset=utf-8", text.into_bytes()),
            None => (
                404,
                "application/xml",
                azure_error("BlobNotFound", "The specified blob does not exist."),
            ),
        }
    };
    state.requests.push(RecordedRequest {
        answered: std::time::Instant::now(),
        user_agents: agents,
        listener: Listener::LogHost,
        host: shared.log_addr.to_string(),
        method: req.method().as_str().to_string(),
        path: path_and_query,
        authorization: has_auth,
        authorization_value: auth_value,
        status,
        kind: if artifact.is_some() {
            RouteKind::ArtifactBlob
        } else if archive.is_some() {
            RouteKind::ArchiveBlob
        } else {
            RouteKind::LogBlob
        },
    });
    drop(state);
    Response::builder()
        .status(status)
        .header("content-type", content_type)
        .header("x-ms-request-id", "00000000-fake-0000-0000-000000000000")
        .body(Full::new(Bytes::from(body)))
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new())))
}

fn azure_error(code: &str, message: &str) -> Vec<u8> {
    format!(
        "\u{feff}<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>{code}</Code><Message>{message}</Message></Error>"
    )
    .into_bytes()
}

fn user_agents(req: &Request<Incoming>) -> Vec<String> {
    req.headers()
        .get_all(hyper::header::USER_AGENT)
        .iter()
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .collect()
}

fn authorization_value(req: &Request<Incoming>) -> Option<String> {
    req.headers()
        .get(hyper::header::AUTHORIZATION)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
}

/// Which step of a scripted chain a request is: `(job, index)`, index 0 being the API's log
/// endpoint (only when the job has a chain) and `n` the `/hop/{job}/{n}` paths.
fn scripted_hop(
    shared: &Shared,
    which: Listener,
    req: &Request<Incoming>,
) -> Option<Option<(JobId, usize)>> {
    let path = req.uri().path();
    if let Some(rest) = path.strip_prefix("/hop/") {
        let (job, n) = rest.split_once('/')?;
        let job = JobId(job.parse().ok()?);
        let n = n.parse().ok()?;
        return Some(Some((job, n)));
    }
    if which != Listener::Api {
        return None;
    }
    let api_path = path.strip_prefix("/api/v3").unwrap_or(path);
    let (_, _, route) = routes::parse_route(req.method().as_str(), api_path)?;
    let Route::JobLog(job) = route else {
        return None;
    };
    shared
        .lock()
        .redirects
        .contains_key(&job)
        .then_some(Some((job, 0)))
}

/// Answers one step of a scripted chain (`None`: a request the third listener does not know).
fn serve_hop(
    shared: &Shared,
    which: Listener,
    req: &Request<Incoming>,
    step: Option<(JobId, usize)>,
) -> HttpResponse {
    let mut state = shared.lock();
    let hop = step.map(|(job, n)| (job, n, state.redirects.get(&job).and_then(|h| h.get(n))));
    let (status, location, body) = match hop {
        None => (404, None, b"no such hop".to_vec()),
        Some((job, n, Some(Hop::To(status, target)))) => (
            *status,
            Some(format!(
                "http://{}/hop/{job}/{}",
                shared.addr(*target),
                n + 1
            )),
            Vec::new(),
        ),
        Some((_, _, Some(Hop::Location(status, to)))) => (*status, Some(to.clone()), Vec::new()),
        Some((job, _, None)) => match state.datasets.iter().find_map(|d| d.logs.get(&job)) {
            Some(FakeLog::Text(text)) => (200, None, text.clone().into_bytes()),
            _ => (404, None, b"no log".to_vec()),
        },
    };
    let path = req
        .uri()
        .path_and_query()
        .map_or_else(|| req.uri().path().to_string(), |p| p.as_str().to_string());
    state.requests.push(RecordedRequest {
        answered: std::time::Instant::now(),
        user_agents: user_agents(req),
        listener: which,
        host: shared.addr(which).to_string(),
        method: req.method().as_str().to_string(),
        path,
        authorization: req.headers().contains_key(hyper::header::AUTHORIZATION),
        authorization_value: authorization_value(req),
        status,
        kind: if step.is_some_and(|(_, n)| n == 0) {
            RouteKind::JobLog
        } else {
            RouteKind::LogBlob
        },
    });
    drop(state);
    let mut builder = Response::builder()
        .status(status)
        .header("content-type", "text/plain; charset=utf-8");
    if let Some(location) = location {
        builder = builder.header("location", location);
    }
    builder
        .body(Full::new(Bytes::from(body)))
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new())))
}
