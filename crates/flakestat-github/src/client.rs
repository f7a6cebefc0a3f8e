//! The GitHub client: a small transport of its own (`transport.rs`: hyper-util over rustls, one
//! `User-Agent`, the credential only on the API origin), and on it what GitHub asks of a client
//! (GITHUB.md): status checks before reading a body, bounded concurrency, the rate-limit
//! budget, secondary limits with `retry-after`, retries with exponential backoff and jitter,
//! conditional requests, capped and streamed response bodies, and redirects followed here, hop
//! by hop.
//!
//! Nothing under it retries or follows a redirect: a retry layer that retries 5xx at once and
//! ignores `retry-after` would fight the backoff here and spend budget, and a redirect policy
//! that decides each hop against the previous one re-sends the token when a foreign host
//! redirects to itself (GITHUB.md, "Redirect chains").
//!
//! The token goes only to the API origin (scheme, host and port of the API root): on the first
//! request, and on a redirect hop only while every hop of the chain so far stayed on that origin.
//! Once a chain has left it, no later hop carries the token, not even one that comes back: those
//! hops are sent without a credential, and the transport drops one handed to it for another
//! origin. A chain is at most `max_redirects` hops, never goes from https to http, and never
//! leaves http(s). `get` refuses absolute URLs on any other origin (a `Link` header pointing
//! elsewhere), and the token is never sent over plain http except to loopback
//! (`allow_insecure_http` to override).

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use chrono::Utc;
use http::{HeaderMap, HeaderValue, StatusCode};
use http_body_util::BodyExt;
use tokio::sync::Semaphore;

use super::pages::ListingError;
use super::{FetchError, Progress, ProgressEvent};
use flakestat_core::model::Timestamp;

mod app;
mod transport;
pub use app::{AppAuth, AppKey, AppKeyError};
use transport::{Bearer, Transport, TransportError};

/// How the client talks to GitHub. Its `Debug` never shows the token.
#[derive(Clone)]
pub struct ClientConfig {
    /// API root without trailing slash, e.g. `https://api.github.com`, `https://HOST/api/v3`.
    pub api_url: String,
    /// Sent only to the API host. `None`: anonymous (unless `app`).
    pub token: Option<String>,
    /// Authenticate as a GitHub App's installation instead (`app.rs`): its tokens are fetched
    /// and renewed here, and sent by the same rule as `token`.
    pub app: Option<AppAuth>,
    /// Requests in flight at once.
    pub concurrency: usize,
    /// Retries of one request after a 5xx, a timeout or a dropped connection.
    pub max_retries: u32,
    /// First backoff; doubled on each retry, plus up to as much again of jitter.
    pub backoff_base: Duration,
    /// Wait for the rate-limit reset when it is at most this far away; stop otherwise.
    pub max_reset_wait: Duration,
    /// Whole request, body included.
    pub request_timeout: Duration,
    /// Secondary-limit waits of one request before giving up.
    pub max_secondary_waits: u32,
    /// Redirect hops followed for one request.
    pub max_redirects: u32,
    /// The largest API answer read (JSON pages); a larger one is refused.
    pub max_response_size: u64,
    /// The largest log read; the rest of a larger one is not downloaded.
    pub max_log_size: u64,
    /// Send the token over plain http to a host that is not loopback (GitHub Enterprise test
    /// setups).
    pub allow_insecure_http: bool,
}

impl std::fmt::Debug for ClientConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientConfig")
            .field("api_url", &self.api_url)
            .field("token", &self.token.as_ref().map(|_| "***"))
            .field("app", &self.app)
            .field("concurrency", &self.concurrency)
            .field("max_retries", &self.max_retries)
            .field("backoff_base", &self.backoff_base)
            .field("max_reset_wait", &self.max_reset_wait)
            .field("request_timeout", &self.request_timeout)
            .field("max_secondary_waits", &self.max_secondary_waits)
            .field("max_redirects", &self.max_redirects)
            .field("max_response_size", &self.max_response_size)
            .field("max_log_size", &self.max_log_size)
            .field("allow_insecure_http", &self.allow_insecure_http)
            .finish()
    }
}

/// GitHub asks integrators to avoid concurrent requests and to back off on secondary limits
/// ("make requests serially instead of concurrently"); its secondary limit allows no more than
/// 100 concurrent requests and counts points per minute. Four in flight keeps a survey within
/// those limits with room for other tools on the same token, while hiding most of the latency
/// of serial requests; any secondary limit makes every task wait (`retry-after`).
pub const DEFAULT_CONCURRENCY: usize = 4;

/// GitHub's largest JSON pages (100 runs with their commits) are a few MB: 50 MiB is far above
/// any real answer and keeps a hostile or broken server from filling memory.
pub const DEFAULT_MAX_RESPONSE_SIZE: u64 = 50 << 20;

/// Real job logs rarely pass 100 MB; 1 GiB keeps the pathological ones out of the store.
pub const DEFAULT_MAX_LOG_SIZE: u64 = 1 << 30;

/// GitHub's log links take one hop; a few more allow a CDN in between.
pub const DEFAULT_MAX_REDIRECTS: u32 = 5;

impl ClientConfig {
    pub fn new(api_url: impl Into<String>, token: Option<String>) -> ClientConfig {
        ClientConfig {
            api_url: api_url.into().trim_end_matches('/').to_string(),
            token,
            app: None,
            concurrency: DEFAULT_CONCURRENCY,
            max_retries: 5,
            backoff_base: Duration::from_millis(250),
            max_reset_wait: Duration::from_secs(5 * 60),
            request_timeout: Duration::from_secs(120),
            max_secondary_waits: 10,
            max_redirects: DEFAULT_MAX_REDIRECTS,
            max_response_size: DEFAULT_MAX_RESPONSE_SIZE,
            max_log_size: DEFAULT_MAX_LOG_SIZE,
            allow_insecure_http: false,
        }
    }
}

/// A response read whole: status, headers, body.
#[derive(Debug)]
pub struct Response {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Response {
    /// GitHub's `message`, or the start of the body.
    pub fn message(&self) -> String {
        serde_json::from_slice::<super::wire::WireError>(&self.body)
            .map(|e| e.message)
            .ok()
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| {
                String::from_utf8_lossy(&self.body[..self.body.len().min(200)]).into()
            })
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The `rel="next"` URL of the `Link` header.
    pub fn next_link(&self) -> Option<String> {
        let link = self.header("link")?;
        link.split(',').find_map(|part| {
            let (url, params) = part.split_once(';')?;
            params
                .split(';')
                .any(|p| p.trim() == "rel=\"next\"")
                .then(|| {
                    url.trim()
                        .trim_start_matches('<')
                        .trim_end_matches('>')
                        .to_string()
                })
        })
    }

    pub fn etag(&self) -> Option<&str> {
        self.header("etag")
    }
}

/// Counters for the closing line and the benchmark.
#[derive(Debug, Default)]
pub struct Stats {
    pub requests: AtomicU64,
    pub not_modified: AtomicU64,
    pub retries: AtomicU64,
    pub logs_downloaded: AtomicU64,
    pub log_bytes: AtomicU64,
    /// A limit stopped a survey (`note_stop`).
    pub stopped: std::sync::atomic::AtomicBool,
    /// Downloads (a log, or an attempt archive's logs together) finished and stored after a
    /// limit stopped the survey: they were under way on the log host, which the limit does not
    /// reach. At most the concurrency.
    pub finished_after_stop: AtomicU64,
}

/// A plain copy of `Stats`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StatsSnapshot {
    pub requests: u64,
    pub not_modified: u64,
    pub retries: u64,
    pub logs_downloaded: u64,
    pub log_bytes: u64,
    pub rate_limit_remaining: Option<u64>,
    pub rate_limit_limit: Option<u64>,
    /// `Some(n)` when a limit stopped the survey: `n` downloads under way (a log, or an
    /// archive's logs) were finished and stored before it returned.
    pub finished_after_stop: Option<u64>,
}

#[derive(Debug, Default, Clone, Copy)]
struct Budget {
    limit: Option<u64>,
    remaining: Option<u64>,
    reset: Option<i64>,
}

/// The GitHub client. Cheap to share behind an `Arc`.
pub struct GitHubClient {
    /// One connection pool for the API and the hosts it redirects to.
    transport: Transport,
    /// The fixed token, sent to the API origin only. With App authentication each installation
    /// token is kept in `app_tokens` instead.
    token: Option<Bearer>,
    app_tokens: app::AppTokens,
    config: ClientConfig,
    permits: Semaphore,
    budget: Mutex<Budget>,
    /// After a secondary limit: no request before this instant.
    paused_until: Mutex<Option<tokio::time::Instant>>,
    stats: Stats,
    progress: std::sync::Arc<dyn Progress>,
}

impl std::fmt::Debug for GitHubClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitHubClient")
            .field("api_url", &self.config.api_url)
            .field("token", &self.config.token.as_ref().map(|_| "***"))
            .field("app", &self.config.app)
            .finish()
    }
}

/// `scheme://host[:port]` of a URL, the default port left out (`https://h:443` is `https://h`).
fn origin_of(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(u) => match u.port() {
            Some(port) => format!("{}://{}:{port}", u.scheme(), u.host_str().unwrap_or("")),
            None => format!("{}://{}", u.scheme(), u.host_str().unwrap_or("")),
        },
        Err(_) => {
            let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
            let host = rest.split(['/', '?']).next().unwrap_or("");
            format!("{scheme}://{host}")
        }
    }
}

/// Whether a host is this machine: `localhost`, 127.0.0.0/8, `::1`.
fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// Checks an API root before anything is sent: a URL, http or https, with a host; and no token
/// over plain http to another machine unless allowed.
pub fn check_api_url(
    api_url: &str,
    with_token: bool,
    allow_insecure_http: bool,
) -> Result<url::Url, FetchError> {
    let example =
        "e.g. https://api.github.com, or https://HOST/api/v3 for GitHub Enterprise Server";
    let parsed = url::Url::parse(api_url).map_err(|e| {
        FetchError::ApiRoot(format!(
            "the API root {api_url:?} is not a URL ({e}); expected {example}"
        ))
    })?;
    match parsed.scheme() {
        "https" | "http" => {}
        other => {
            return Err(FetchError::ApiRoot(format!(
                "the API root {api_url:?}: flakestat talks to GitHub over https (or http), not {other}:; expected {example}"
            )));
        }
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(FetchError::ApiRoot(format!(
            "the API root {api_url:?} has no host; expected {example}"
        )));
    }
    if parsed.scheme() == "http" && with_token && !allow_insecure_http && !is_loopback(&parsed) {
        return Err(FetchError::InsecureHttp {
            api_url: api_url.to_string(),
        });
    }
    Ok(parsed)
}

/// Every occurrence of `secret` in `body` replaced by `***`.
fn scrub(body: &mut Vec<u8>, secret: &[u8]) {
    if secret.is_empty() || body.len() < secret.len() {
        return;
    }
    let mut out = Vec::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        if body[i..].starts_with(secret) {
            out.extend_from_slice(b"***");
            i += secret.len();
        } else {
            out.push(body[i]);
            i += 1;
        }
    }
    *body = out;
}

/// The host of a URL, for messages (never its query: a signed link's credential).
fn shown_host(url: &url::Url) -> String {
    url.host_str().unwrap_or("the log host").to_string()
}

/// Azure Blob Storage's error code in an XML error body (`<Code>AuthenticationFailed</Code>`),
/// when it is one: a short word of letters, never the rest of the body.
fn azure_code(body: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(body.get(..body.len().min(4096))?).ok()?;
    let start = text.find("<Code>")? + "<Code>".len();
    let code = &text[start..start + text[start..].find("</Code>")?];
    (!code.is_empty() && code.len() <= 64 && code.bytes().all(|b| b.is_ascii_alphanumeric()))
        .then(|| code.to_string())
}

/// Whether a status is a redirect flakestat follows (not 304, not 300).
fn is_followed_redirect(status: StatusCode) -> bool {
    matches!(status.as_u16(), 301 | 302 | 303 | 307 | 308)
}

/// A URL as it may appear in a message: without its query (a signed link's signature is a
/// credential for as long as it lives).
fn shown(url: &url::Url) -> String {
    let mut url = url.clone();
    url.set_query(None);
    url.set_fragment(None);
    url.to_string()
}

/// Where a redirect goes next, or why it is not followed. `what` names the download in the
/// message ("job 123's log").
fn next_hop(current: &url::Url, location: &str, what: &str) -> Result<url::Url, String> {
    let next = current.join(location).map_err(|e| {
        format!("{what}: GitHub redirected to {location:?}, which is not a URL ({e})")
    })?;
    match next.scheme() {
        "http" | "https" => {}
        other => {
            return Err(format!(
                "{what}: GitHub redirected to {}, a {other}: location; only http and https are followed",
                shown(&next)
            ));
        }
    }
    if current.scheme() == "https" && next.scheme() == "http" {
        return Err(format!(
            "{what}: GitHub redirected from https to plain http ({}); refused",
            shown(&next)
        ));
    }
    Ok(next)
}

/// What to do with a body larger than allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Oversize {
    /// An API answer: an error.
    Refuse,
    /// A log: keep the first bytes, stop reading.
    Truncate,
}

/// A download's body stays in memory up to this size; past it, it goes to an anonymous
/// temporary file, so a large log is never held whole.
pub const SPOOL_AT: u64 = 8 << 20;

/// A download (`fetch_blob`): the final answer of its redirect chain.
#[derive(Debug)]
pub struct Blob {
    /// Status and headers; the body too, unless it was spooled.
    pub response: Response,
    /// The body, when it outgrew `SPOOL_AT`: an anonymous temporary file (removed when dropped)
    /// positioned at its start, and its length.
    pub spooled: Option<(std::fs::File, u64)>,
    /// The body was cut at `max_log_size`.
    pub truncated: bool,
}

impl Blob {
    /// The body's length, in memory or spooled.
    pub fn len(&self) -> u64 {
        self.spooled
            .as_ref()
            .map_or(self.response.body.len() as u64, |(_, len)| *len)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One hop's answer: the response, its spooled body if any, whether it was cut.
struct Answer {
    response: Response,
    spooled: Option<(std::fs::File, u64)>,
    truncated: bool,
}

/// How a body is read: its limit, what happens past it, whether a success may be spooled.
#[derive(Debug, Clone, Copy)]
struct BodyPolicy {
    limit: u64,
    oversize: Oversize,
    spool: bool,
}

/// Error bodies are read for their message only.
const MAX_ERROR_BODY: u64 = 64 << 10;

/// Why one try of one request failed.
enum TryError {
    /// No answer within the request timeout.
    Timeout(Duration),
    Transport(TransportError),
    TooLarge(u64),
    Spool(std::io::Error),
}

impl TryError {
    /// A failure worth another try of a GET (no answer, the connection failed), in words;
    /// `None` for one that another try would meet again.
    fn transient(&self) -> Option<String> {
        match self {
            TryError::Timeout(after) => Some(format!("no answer within {after:?}")),
            TryError::Transport(e) => Some(e.to_string()),
            TryError::TooLarge(_) | TryError::Spool(_) => None,
        }
    }

    /// The one mapping of a failed try to the caller's error: `method` and `url` (as it may be
    /// shown) name the request, `limit` is the body limit it was read under.
    fn into_error(self, method: &http::Method, url: &str, limit: u64) -> FetchError {
        match self {
            TryError::Timeout(after) => {
                FetchError::Network(format!("no answer to {method} {url} within {after:?}"))
            }
            TryError::Transport(e) => FetchError::Network(e.to_string()),
            TryError::TooLarge(size) => FetchError::TooLarge {
                url: url.to_string(),
                size,
                limit,
            },
            TryError::Spool(e) => FetchError::Spool(format!(
                "cannot write the answer to {url} to a temporary file: {e}; check the free space of TMPDIR"
            )),
        }
    }
}

/// What a 403 or 429 from the API says of GitHub's limits.
enum Limit {
    /// The budget is spent (`x-ratelimit-remaining: 0`) until its reset.
    Spent,
    /// A secondary limit: ask again after `retry_after` seconds (GitHub: at least a minute
    /// when it says none).
    Secondary {
        retry_after: Option<u64>,
        message: String,
    },
}

impl Limit {
    /// The limit a response reports, if it is a limit and not a refusal (a 403 for want of
    /// access is the caller's to read).
    fn of(response: &Response) -> Option<Limit> {
        if response.status != StatusCode::FORBIDDEN
            && response.status != StatusCode::TOO_MANY_REQUESTS
        {
            return None;
        }
        if response.header("x-ratelimit-remaining") == Some("0") {
            return Some(Limit::Spent);
        }
        let message = response.message();
        let retry_after = response
            .header("retry-after")
            .and_then(|v| v.trim().parse::<u64>().ok());
        let secondary = response.header("retry-after").is_some()
            || response.status == StatusCode::TOO_MANY_REQUESTS
            || message
                .to_ascii_lowercase()
                .contains("secondary rate limit");
        secondary.then_some(Limit::Secondary {
            retry_after,
            message,
        })
    }
}

impl From<TransportError> for TryError {
    fn from(e: TransportError) -> TryError {
        TryError::Transport(e)
    }
}

/// What every request says it is (GitHub asks for a `User-Agent` naming the application).
pub const USER_AGENT: &str = concat!("flakestat/", env!("CARGO_PKG_VERSION"));

impl GitHubClient {
    /// Builds the client (and reads the system's TLS roots); it sends inside a tokio runtime.
    pub fn new(
        config: ClientConfig,
        progress: std::sync::Arc<dyn Progress>,
    ) -> Result<GitHubClient, FetchError> {
        check_api_url(
            &config.api_url,
            config.token.is_some() || config.app.is_some(),
            config.allow_insecure_http,
        )?;
        let token = config.token.as_deref().map(Bearer::new).transpose()?;
        Ok(GitHubClient {
            transport: Transport::new(&config.api_url)?,
            token,
            app_tokens: app::AppTokens::default(),
            permits: Semaphore::new(config.concurrency.max(1)),
            budget: Mutex::new(Budget::default()),
            paused_until: Mutex::new(None),
            stats: Stats::default(),
            config,
            progress,
        })
    }

    /// Requests in flight at once.
    pub fn concurrency(&self) -> usize {
        self.config.concurrency.max(1)
    }

    pub fn api_url(&self) -> &str {
        &self.config.api_url
    }

    pub fn stats(&self) -> StatsSnapshot {
        let budget = *self.budget.lock().expect("budget lock");
        StatsSnapshot {
            requests: self.stats.requests.load(Ordering::Relaxed),
            not_modified: self.stats.not_modified.load(Ordering::Relaxed),
            retries: self.stats.retries.load(Ordering::Relaxed),
            logs_downloaded: self.stats.logs_downloaded.load(Ordering::Relaxed),
            log_bytes: self.stats.log_bytes.load(Ordering::Relaxed),
            rate_limit_remaining: budget.remaining,
            rate_limit_limit: budget.limit,
            finished_after_stop: self
                .stats
                .stopped
                .load(Ordering::Relaxed)
                .then(|| self.stats.finished_after_stop.load(Ordering::Relaxed)),
        }
    }

    /// A limit stopped a survey, and `finished` downloads under way were finished and stored
    /// after it began.
    pub fn note_stop(&self, finished: u64) {
        self.stats.stopped.store(true, Ordering::Relaxed);
        self.stats
            .finished_after_stop
            .fetch_add(finished, Ordering::Relaxed);
    }

    pub fn note_log(&self, bytes: u64) {
        self.stats.logs_downloaded.fetch_add(1, Ordering::Relaxed);
        self.stats.log_bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// The absolute URL of an API path (`/repos/...`).
    pub fn url(&self, path_and_query: &str) -> String {
        format!("{}{}", self.config.api_url, path_and_query)
    }

    /// Waits until the budget allows a request: at once when it is not spent, until the reset
    /// when that is near, else `RateLimited`.
    async fn wait_for_budget(&self) -> Result<(), FetchError> {
        let paused = *self.paused_until.lock().expect("pause lock");
        if let Some(until) = paused {
            tokio::time::sleep_until(until).await;
        }
        loop {
            let reset = {
                let budget = self.budget.lock().expect("budget lock");
                match (budget.remaining, budget.reset) {
                    (Some(0), Some(reset)) => reset,
                    _ => return Ok(()),
                }
            };
            let now = Utc::now().timestamp();
            let wait = Duration::from_secs((reset - now).max(0) as u64 + 1);
            let reset_at = Timestamp::from_timestamp(reset, 0).unwrap_or_default();
            if wait > self.config.max_reset_wait {
                return Err(FetchError::RateLimited { reset: reset_at });
            }
            self.progress.event(ProgressEvent::Waiting {
                until: reset_at,
                why: "rate limit spent",
            });
            tokio::time::sleep(wait).await;
            let mut budget = self.budget.lock().expect("budget lock");
            if budget.reset == Some(reset) {
                budget.remaining = None;
            }
        }
    }

    fn pause_until(&self, until: tokio::time::Instant) {
        let mut paused = self.paused_until.lock().expect("pause lock");
        if paused.is_none_or(|p| p < until) {
            *paused = Some(until);
        }
    }

    fn note_budget(&self, headers: &HeaderMap) {
        let num = |name: &str| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<i64>().ok())
        };
        if let (Some(remaining), Some(reset)) =
            (num("x-ratelimit-remaining"), num("x-ratelimit-reset"))
        {
            let mut budget = self.budget.lock().expect("budget lock");
            // Responses arrive out of order: keep the lowest count within one reset window.
            let newer_window = budget.reset.is_none_or(|r| reset > r);
            if newer_window || budget.remaining.is_none_or(|r| (remaining as u64) < r) {
                budget.remaining = Some(remaining.max(0) as u64);
            }
            budget.reset = Some(reset);
            budget.limit = num("x-ratelimit-limit").map(|l| l.max(0) as u64);
        }
    }

    fn backoff(&self, attempt: u32) -> Duration {
        let base = self
            .config
            .backoff_base
            .saturating_mul(1 << attempt.min(10));
        let jitter = base.mul_f64(fastrand::f64());
        base + jitter
    }

    /// One GET of an API page, with retries, budget and secondary-limit handling, redirects
    /// followed by the token rule above, and the answer capped at `max_response_size`. Answers
    /// every status but 5xx, 429 and rate-limit 403s to the caller, who knows what a 404 or 410
    /// means there.
    pub async fn get(&self, url: &str, etag: Option<&str>) -> Result<Response, FetchError> {
        let policy = BodyPolicy {
            limit: self.config.max_response_size,
            oversize: Oversize::Refuse,
            spool: false,
        };
        Ok(self.follow(url, etag, url, policy).await?.response)
    }

    /// One download behind an API endpoint that redirects to a foreign blob host (a job's log,
    /// an attempt's archive): the same redirect rule, the body cut at `max_log_size` (the
    /// caller says so). `what` names it in messages ("job 123's log"). A redirect that is not
    /// followed (other scheme, https→http, too many hops) is `FetchError::Unavailable`.
    pub async fn fetch_blob(&self, url: &str, what: &str) -> Result<Blob, FetchError> {
        let policy = BodyPolicy {
            limit: self.config.max_log_size,
            oversize: Oversize::Truncate,
            spool: true,
        };
        let answer = self.follow(url, None, what, policy).await?;
        Ok(Blob {
            response: answer.response,
            spooled: answer.spooled,
            truncated: answer.truncated,
        })
    }

    /// One download that is useless cut short (an artifact's zip): the same redirect rule as
    /// `fetch_blob`, but a body over `limit` bytes is refused (`FetchError::TooLarge`, read no
    /// further) instead of cut; spooled to a temporary file past `SPOOL_AT`.
    pub async fn fetch_whole_blob(
        &self,
        url: &str,
        what: &str,
        limit: u64,
    ) -> Result<Blob, FetchError> {
        let policy = BodyPolicy {
            limit,
            oversize: Oversize::Refuse,
            spool: true,
        };
        let answer = self.follow(url, None, what, policy).await?;
        Ok(Blob {
            response: answer.response,
            spooled: answer.spooled,
            truncated: answer.truncated,
        })
    }

    /// The largest log `fetch_blob` reads.
    pub fn max_log_size(&self) -> u64 {
        self.config.max_log_size
    }

    /// Follows a redirect chain from an API URL, hop by hop, deciding each hop's token against
    /// the API origin and the hops before it.
    async fn follow(
        &self,
        url: &str,
        etag: Option<&str>,
        what: &str,
        policy: BodyPolicy,
    ) -> Result<Answer, FetchError> {
        if origin_of(url) != self.transport.api_origin() {
            return Err(FetchError::Config(format!(
                "refusing to follow {url}: not on the API host {}",
                self.transport.api_origin()
            )));
        }
        let start = url::Url::parse(url)
            .map_err(|e| FetchError::Config(format!("{url:?} is not a URL: {e}")))?;
        // Whose installation's token the chain's hops on the API origin carry (App auth).
        let account = url
            .strip_prefix(self.config.api_url.as_str())
            .and_then(app::Account::of_path);
        // A 403 from a host the API redirected to is a signed URL that expired (Azure's
        // `AuthenticationFailed`; the URL lives about a minute, and a download can wait longer
        // for its turn): the API is asked again for a fresh one, once.
        let mut asked_again = false;
        'chain: loop {
            let mut current = start.clone();
            // True while every hop so far stayed on the API origin: only then is the token sent.
            let mut at_home = true;
            for hop in 0..=self.config.max_redirects {
                let etag = if hop == 0 { etag } else { None };
                let answer = self
                    .get_once(current.as_str(), etag, at_home, account.as_ref(), policy)
                    .await?;
                if !at_home && answer.response.status == StatusCode::FORBIDDEN {
                    if !asked_again {
                        asked_again = true;
                        continue 'chain;
                    }
                    return Err(FetchError::Unavailable(format!(
                        "{what}: {} refused its signed URL twice (403{}), though the API handed it out afresh",
                        shown_host(&current),
                        azure_code(&answer.response.body)
                            .map(|code| format!(" {code}"))
                            .unwrap_or_default()
                    )));
                }
                let location = answer
                    .response
                    .header("location")
                    .filter(|_| is_followed_redirect(answer.response.status))
                    .map(str::to_string);
                let Some(location) = location else {
                    return Ok(answer);
                };
                let next = next_hop(&current, &location, what).map_err(FetchError::Unavailable)?;
                at_home = at_home && origin_of(next.as_str()) == self.transport.api_origin();
                current = next;
            }
            return Err(FetchError::Unavailable(format!(
                "{what}: more than {} redirects (last to {}); refused",
                self.config.max_redirects,
                shown(&current)
            )));
        }
    }

    /// One hop: one GET with retries, budget and secondary-limit handling. `at_home`: the hop
    /// is on the API origin and every hop before it was, so it may carry the token (of
    /// `account`'s installation, with App auth) and its rate-limit headers count.
    async fn get_once(
        &self,
        url: &str,
        etag: Option<&str>,
        at_home: bool,
        account: Option<&app::Account>,
        policy: BodyPolicy,
    ) -> Result<Answer, FetchError> {
        // An App's installation token refused once (revoked, clocks apart) is renewed once.
        let mut renewed = false;
        // Off the API origin the query is a signed link's credential: never in a message.
        let display = match (at_home, url::Url::parse(url)) {
            (false, Ok(parsed)) => shown(&parsed),
            _ => url.to_string(),
        };
        let mut failures = 0u32;
        let mut secondary_waits = 0u32;
        loop {
            let (bearer, generation) = if at_home {
                self.wait_for_budget().await?;
                self.api_credential(account).await?
            } else {
                (None, 0)
            };
            let mut headers = HeaderMap::new();
            if let Some(etag) = etag
                && let Ok(value) = HeaderValue::from_str(etag)
            {
                headers.insert(http::header::IF_NONE_MATCH, value);
            }
            let sent = self
                .exchange(
                    http::Method::GET,
                    url,
                    headers,
                    None,
                    bearer.as_ref(),
                    policy,
                )
                .await;
            let transient = match sent {
                Err(failure) => match failure.transient() {
                    Some(transient) => transient,
                    None => {
                        return Err(failure.into_error(&http::Method::GET, &display, policy.limit));
                    }
                },
                Ok((parts, mut body, spooled, truncated)) => {
                    // A refusal's words end in messages: an API (or a proxy before it) that
                    // echoes the request's `Authorization` never puts the credential there.
                    if parts.status.as_u16() >= 400
                        && let Some(bearer) = &bearer
                    {
                        scrub(&mut body, bearer.secret());
                    }
                    let response = self.received(parts, body, at_home, &display);
                    let status = response.status;
                    let limited = at_home
                        && (status == StatusCode::FORBIDDEN
                            || status == StatusCode::TOO_MANY_REQUESTS);
                    if limited && self.waited_for_limit(&response, &mut secondary_waits)? {
                        continue;
                    }
                    if status == StatusCode::UNAUTHORIZED && generation > 0 && !renewed {
                        renewed = true;
                        self.forget_app_token(generation).await;
                        continue;
                    }
                    // A refusal (403, 429 included) is the caller's to read.
                    if !status.is_server_error() {
                        return Ok(Answer {
                            response,
                            spooled,
                            truncated,
                        });
                    }
                    format!("{} from {}", status, display)
                }
            };
            failures += 1;
            if failures > self.config.max_retries {
                return Err(FetchError::Network(format!(
                    "{transient} (after {} tries)",
                    failures
                )));
            }
            self.stats.retries.fetch_add(1, Ordering::Relaxed);
            tokio::time::sleep(self.backoff(failures - 1)).await;
        }
    }

    /// The one way a request goes out, whatever it is (a GET's try, a JSON write, the App's
    /// own requests): counted, under a concurrency permit and the request timeout, sent by the
    /// transport (with `bearer`, which it puts only on the API origin), its body read under
    /// `policy`. Its failures become errors in one place ([`TryError::into_error`]).
    async fn exchange(
        &self,
        method: http::Method,
        url: &str,
        headers: HeaderMap,
        body: Option<&serde_json::Value>,
        bearer: Option<&Bearer>,
        policy: BodyPolicy,
    ) -> Result<Sent, TryError> {
        let permit = self
            .permits
            .acquire()
            .await
            .expect("semaphore never closed");
        self.stats.requests.fetch_add(1, Ordering::Relaxed);
        let exchange = async {
            let response = self
                .transport
                .send(method, url, headers, body, bearer)
                .await?;
            let (parts, body) = response.into_parts();
            let (body, spooled, truncated) = read_capped(&parts, body, policy).await?;
            Ok((parts, body, spooled, truncated))
        };
        let sent = tokio::time::timeout(self.config.request_timeout, exchange).await;
        drop(permit);
        sent.unwrap_or(Err(TryError::Timeout(self.config.request_timeout)))
    }

    /// An answer as it arrives: its rate-limit headers noted (on the API origin), reported,
    /// a 304 counted.
    fn received(
        &self,
        parts: http::response::Parts,
        body: Vec<u8>,
        at_home: bool,
        display: &str,
    ) -> Response {
        if at_home {
            self.note_budget(&parts.headers);
        }
        self.progress.event(ProgressEvent::Request {
            status: parts.status.as_u16(),
            url: display.to_string(),
        });
        if parts.status == StatusCode::NOT_MODIFIED {
            self.stats.not_modified.fetch_add(1, Ordering::Relaxed);
        }
        Response {
            status: parts.status,
            headers: parts.headers,
            body,
        }
    }

    /// A 403 or 429 from the API: `true` when it is a rate limit worth asking again after
    /// (the budget spent: `wait_for_budget` waits for the reset or stops; a secondary limit:
    /// every task pauses for `retry-after`), `false` when it is a refusal to return.
    fn waited_for_limit(
        &self,
        response: &Response,
        secondary_waits: &mut u32,
    ) -> Result<bool, FetchError> {
        let (retry_after, message) = match Limit::of(response) {
            None => return Ok(false),
            Some(Limit::Spent) => return Ok(true),
            Some(Limit::Secondary {
                retry_after,
                message,
            }) => (retry_after, message),
        };
        *secondary_waits += 1;
        if *secondary_waits > self.config.max_secondary_waits {
            return Err(FetchError::SecondaryLimit(message));
        }
        // GitHub: without `retry-after`, wait at least a minute.
        let wait = Duration::from_secs(retry_after.unwrap_or(60));
        self.progress.event(ProgressEvent::Waiting {
            until: Utc::now() + chrono::TimeDelta::from_std(wait).unwrap_or_default(),
            why: "secondary rate limit",
        });
        self.stats.retries.fetch_add(1, Ordering::Relaxed);
        // Every task pauses, not only this one: more requests now would only prolong the
        // limit.
        self.pause_until(tokio::time::Instant::now() + wait);
        Ok(true)
    }
}

/// A response's head, body, spooled body and whether the body was cut.
type Sent = (
    http::response::Parts,
    Vec<u8>,
    Option<(std::fs::File, u64)>,
    bool,
);

/// Reads a body frame by frame, never past the policy's limit: `Refuse` fails as soon as the
/// declared length or the bytes read pass it, `Truncate` keeps the first `limit` bytes and stops
/// reading. A successful body that may be spooled moves to an anonymous temporary file once it
/// passes `SPOOL_AT`; an error body is cut at `MAX_ERROR_BODY` (only its message is wanted).
async fn read_capped(
    parts: &http::response::Parts,
    mut body: hyper::body::Incoming,
    policy: BodyPolicy,
) -> Result<(Vec<u8>, Option<(std::fs::File, u64)>, bool), TryError> {
    use tokio::io::{AsyncSeekExt, AsyncWriteExt};

    let success = parts.status.is_success();
    let (limit, oversize) = if success || policy.oversize == Oversize::Refuse {
        (policy.limit, policy.oversize)
    } else {
        (policy.limit.min(MAX_ERROR_BODY), Oversize::Truncate)
    };
    let declared = parts
        .headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if oversize == Oversize::Refuse
        && let Some(size) = declared.filter(|&size| size > limit)
    {
        return Err(TryError::TooLarge(size));
    }
    let spool_at = if policy.spool && success {
        SPOOL_AT
    } else {
        u64::MAX
    };
    let mut memory = Vec::with_capacity(declared.unwrap_or(0).min(limit).min(SPOOL_AT) as usize);
    let mut file: Option<tokio::fs::File> = None;
    let mut len = 0u64;
    let mut truncated = false;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| TryError::Transport(TransportError::Body(e)))?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        let room = limit - len;
        let take = if data.len() as u64 > room {
            match oversize {
                Oversize::Refuse => return Err(TryError::TooLarge(len + data.len() as u64)),
                Oversize::Truncate => {
                    truncated = true;
                    &data[..room as usize]
                }
            }
        } else {
            &data[..]
        };
        if file.is_none() && len + take.len() as u64 > spool_at {
            let spool = tempfile::tempfile().map_err(TryError::Spool)?;
            let mut spool = tokio::fs::File::from_std(spool);
            spool.write_all(&memory).await.map_err(TryError::Spool)?;
            memory = Vec::new();
            file = Some(spool);
        }
        match file.as_mut() {
            Some(spool) => spool.write_all(take).await.map_err(TryError::Spool)?,
            None => memory.extend_from_slice(take),
        }
        len += take.len() as u64;
        if truncated {
            break;
        }
    }
    let spooled = match file {
        Some(mut spool) => {
            spool.flush().await.map_err(TryError::Spool)?;
            spool
                .seek(std::io::SeekFrom::Start(0))
                .await
                .map_err(TryError::Spool)?;
            Some((spool.into_std().await, len))
        }
        None => None,
    };
    Ok((memory, spooled, truncated))
}

impl GitHubClient {
    /// One POST or PATCH of a JSON body, tried once: a write is never retried (a timed-out
    /// write may have landed; callers make writes findable instead, see `comments`). A spent
    /// budget or a secondary limit is an error, not a wait, so nothing is written late.
    pub async fn send_json(
        &self,
        method: http::Method,
        url: &str,
        body: &serde_json::Value,
    ) -> Result<Response, FetchError> {
        if origin_of(url) != self.transport.api_origin() {
            return Err(FetchError::Internal(format!(
                "refusing to send to {url}: not on the API host {}",
                self.transport.api_origin()
            )));
        }
        self.wait_for_budget().await?;
        let account = url
            .strip_prefix(self.config.api_url.as_str())
            .and_then(app::Account::of_path);
        let (bearer, _) = self.api_credential(account.as_ref()).await?;
        let policy = self.answer_policy();
        let (parts, body, _, _) = self
            .exchange(
                method.clone(),
                url,
                HeaderMap::new(),
                Some(body),
                bearer.as_ref(),
                policy,
            )
            .await
            .map_err(|failure| failure.into_error(&method, url, policy.limit))?;
        self.note_budget(&parts.headers);
        let response = Response {
            status: parts.status,
            headers: parts.headers,
            body,
        };
        match Limit::of(&response) {
            None => Ok(response),
            Some(Limit::Spent) => {
                let reset = self.budget.lock().expect("budget lock").reset;
                Err(FetchError::RateLimited {
                    reset: reset
                        .and_then(|r| Timestamp::from_timestamp(r, 0))
                        .unwrap_or_default(),
                })
            }
            Some(Limit::Secondary { message, .. }) => Err(FetchError::SecondaryLimit(message)),
        }
    }

    /// How a one-try request's answer is read: whole, in memory, at most the API answer limit.
    fn answer_policy(&self) -> BodyPolicy {
        BodyPolicy {
            limit: self.config.max_response_size,
            oversize: Oversize::Refuse,
            spool: false,
        }
    }

    /// [`GitHubClient::send_json`], its answer (200 or 201) read as `T`; any other status is
    /// `refused(url, response)` (what a comment's or a check run's refusal means differs).
    pub(crate) async fn write_json<T: serde::de::DeserializeOwned, E: ListingError>(
        &self,
        method: http::Method,
        url: &str,
        body: &serde_json::Value,
        refused: impl FnOnce(&str, &Response) -> E,
    ) -> Result<T, E> {
        let response = self.send_json(method, url, body).await?;
        if !matches!(response.status, StatusCode::OK | StatusCode::CREATED) {
            return Err(refused(url, &response));
        }
        serde_json::from_slice(&response.body).map_err(|e| E::unparsable(url, e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 41 §8: an answer echoing the `Authorization` header loses the credential before
    /// its words reach a message; an Azure error's code is read, nothing else of the body.
    #[test]
    fn a_refusal_echoing_the_token_is_scrubbed_and_azure_codes_are_read() {
        let bearer = Bearer::new("ghp_s3cret").unwrap();
        assert_eq!(bearer.secret(), b"ghp_s3cret");
        let mut body =
            br#"{"message":"bad header: Authorization: Bearer ghp_s3cret (ghp_s3cret)"}"#.to_vec();
        scrub(&mut body, bearer.secret());
        assert_eq!(
            String::from_utf8(body).unwrap(),
            r#"{"message":"bad header: Authorization: Bearer *** (***)"}"#
        );
        let mut short = b"ghp".to_vec();
        scrub(&mut short, b"ghp_s3cret");
        assert_eq!(short, b"ghp");
        assert_eq!(
            azure_code(b"<?xml version=\"1.0\"?><Error><Code>AuthenticationFailed</Code><Message>x</Message></Error>")
                .as_deref(),
            Some("AuthenticationFailed")
        );
        assert_eq!(azure_code(b"<Code>two words</Code>"), None);
        assert_eq!(azure_code(b"not xml"), None);
    }

    fn response(link: &str) -> Response {
        let mut headers = HeaderMap::new();
        headers.insert("link", HeaderValue::from_str(link).unwrap());
        Response {
            status: StatusCode::OK,
            headers,
            body: Vec::new(),
        }
    }

    #[test]
    fn next_link_is_found_among_others() {
        let r = response(
            "<https://api.github.com/x?page=1>; rel=\"prev\", <https://api.github.com/x?page=3>; rel=\"next\", <https://api.github.com/x?page=9>; rel=\"last\"",
        );
        assert_eq!(
            r.next_link().as_deref(),
            Some("https://api.github.com/x?page=3")
        );
        assert_eq!(
            response("<https://a/x?page=1>; rel=\"first\"").next_link(),
            None
        );
    }

    #[test]
    fn the_token_never_shows_in_debug_output() {
        let config = ClientConfig::new("https://api.github.com", Some("ghp_secret".into()));
        let text = format!("{config:?}");
        assert!(
            !text.contains("ghp_secret") && text.contains("***"),
            "{text}"
        );
    }

    #[test]
    fn hops_stay_on_http_and_never_downgrade() {
        let here = url::Url::parse("https://api.example/repos/o/r/actions/jobs/1/logs").unwrap();
        let ok = next_hop(&here, "https://blob.example/x?sig=s", "job 1's log").unwrap();
        assert_eq!(ok.host_str(), Some("blob.example"));
        let relative = next_hop(&here, "/other", "job 1's log").unwrap();
        assert_eq!(relative.as_str(), "https://api.example/other");
        let down = next_hop(&here, "http://blob.example/x?sig=s", "job 1's log").unwrap_err();
        assert!(
            down.contains("https to plain http") && !down.contains("sig="),
            "{down}"
        );
        let file = next_hop(&here, "file:///etc/passwd", "job 1's log").unwrap_err();
        assert!(
            file.contains("job 1's log") && file.contains("file:"),
            "{file}"
        );
        let http = url::Url::parse("http://127.0.0.1:1/a").unwrap();
        assert!(next_hop(&http, "https://blob.example/", "x").is_ok());
    }

    #[test]
    fn api_urls_are_checked_before_anything_is_sent() {
        assert!(check_api_url("https://api.github.com", true, false).is_ok());
        assert!(check_api_url("http://127.0.0.1:8080", true, false).is_ok());
        assert!(check_api_url("http://localhost:8080/api/v3", true, false).is_ok());
        assert!(check_api_url("http://[::1]:8080", true, false).is_ok());
        assert!(check_api_url("http://ghe.example", false, false).is_ok());
        assert!(check_api_url("http://ghe.example", true, true).is_ok());
        // The CLI adds the flags to change (`--allow-insecure-http`, `--api-url`): this layer
        // names no flag, it says what is wrong, with a variant the CLI can tell apart.
        let insecure = check_api_url("http://ghe.example/api/v3", true, false).unwrap_err();
        assert!(
            matches!(insecure, FetchError::InsecureHttp { .. }),
            "{insecure}"
        );
        let insecure = insecure.to_string();
        assert!(
            insecure.contains("http://ghe.example/api/v3") && !insecure.contains("--"),
            "{insecure}"
        );
        for bad in ["ftp://ghe.example", "not a url", "https://", "file:///tmp"] {
            let err = check_api_url(bad, false, false).unwrap_err();
            assert!(matches!(err, FetchError::ApiRoot(_)), "{bad}: {err}");
            let message = err.to_string();
            assert!(
                message.contains("the API root")
                    && message.contains(bad)
                    && !message.contains("--"),
                "{bad}: {message}"
            );
        }
    }

    #[test]
    fn origins_compare_scheme_host_and_port() {
        assert_eq!(
            origin_of("https://ghe.example/api/v3/repos?x=1"),
            "https://ghe.example"
        );
        assert_ne!(
            origin_of("http://127.0.0.1:1000/a"),
            origin_of("http://127.0.0.1:1001/a")
        );
    }
}
