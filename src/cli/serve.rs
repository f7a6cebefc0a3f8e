//! `flakestat serve`: resolve the settings once (listen address, secret, repositories, store,
//! signatures), then run the webhook receiver of `flakestat-serve` with an [`IngestRun`] over
//! flakestat-sync's [`Upkeep`]: a queued run is fetched (`GET …/actions/runs/{id}`) and ingested
//! through the survey's per-run path (its jobs of every attempt, its failed jobs' logs,
//! classified and stored as they arrive), and the resync is the survey of the recent window
//! (`--resync-window`) and its ancestry. What stays here is the command's: which repositories
//! and which clock, the PR hook (`--pr-comments`, `--pr-checks`), the lines said on stderr and
//! the test hook `--panic-in-ingest`.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use chrono::{TimeDelta, Utc};
use clap::{ArgGroup, Args};

use super::GlobalArgs;
use super::error::CliError;
use super::pipeline::fetch::{Connection, connect_to};
use super::pipeline::pr::PrHook;
use super::pipeline::{self, Signatures};
use super::settings;
use super::source::{AppArgs, Replay, parse_size};
use crate::analysis::AnalysisConfig;
use crate::exit;
use crate::fetch::{
    ClientConfig, DEFAULT_CONCURRENCY, FetchError, Fetched, GreenLogs, Session, Upkeep, may_pass,
};
use crate::model::Timestamp;
use crate::report::sanitize;
use crate::store::{QueuedRun, StoreLocation};
use flakestat_serve::{
    DEFAULT_BODY_TIMEOUT, DEFAULT_HEADER_TIMEOUT, DEFAULT_MAX_BODY, DEFAULT_MAX_CONNECTIONS,
    DEFAULT_QUEUE_WAIT, IngestFailure, IngestRun, Ingested, Repos, Say, ServeConfig, WebhookSecret,
};

const EXAMPLES: &str = "\
Examples:
  flakestat serve --repo NVIDIA/cuda-python --listen 127.0.0.1:8080 \\
      --webhook-secret-file /etc/flakestat/webhook-secret
  FLAKESTAT_WEBHOOK_SECRET=… flakestat serve --org NVIDIA \\
      --store postgres://flakestat@db/flakestat --listen 0.0.0.0:8080
  flakestat serve --replay fixtures/cuda-python-flake --listen 127.0.0.1:0 \\
      --webhook-secret-file secret.txt
  flakestat serve --org NVIDIA --app-id 123456 \\
      --app-key /etc/flakestat/app.pem \\
      --webhook-secret-file /etc/flakestat/webhook-secret

GitHub posts each delivery to http://ADDR/webhook (content type application/json, a secret,
the events \"Workflow runs\" and \"Workflow jobs\"); /healthz and /metrics answer GET. The
first line on stdout is {\"listen\":\"HOST:PORT\"}, the address bound (port 0 picks one).
SIGTERM or Ctrl-C stops it; what is still queued is kept and the next start drains it.
docs/serve.md: reverse proxy, GitHub's settings, a systemd unit, a container.";

#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
#[command(group = ArgGroup::new("target").args(["repos", "org", "replay"]).required(true).multiple(true))]
pub struct ServeArgs {
    /// Where to listen, HOST:PORT (port 0: any free port, printed on stdout).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// The webhook's secret, read from FILE (a trailing newline is not part of it). Default:
    /// FLAKESTAT_WEBHOOK_SECRET.
    #[arg(long, value_name = "FILE")]
    pub webhook_secret_file: Option<PathBuf>,
    /// Read the logs of this share of each ingested run's green job executions (0 to 1, or
    /// 10%) for the tests their runner retried to a pass (hidden flakes), as `survey
    /// --green-logs` does; the resync reads its window's. 0 (the default) reads none.
    #[arg(long, value_name = "RATE", default_value = "0", value_parser = super::source::parse_fraction)]
    pub green_logs: f64,
    /// With --green-logs: keep each green log read (compressed, in the store).
    #[arg(long)]
    pub keep_green_logs: bool,
    /// A repository whose deliveries are taken, OWNER/NAME; repeatable.
    #[arg(long = "repo", value_name = "OWNER/NAME")]
    pub repos: Vec<String>,
    /// Take the deliveries of every repository of this owner.
    #[arg(long, value_name = "OWNER", conflicts_with = "repos")]
    pub org: Option<String>,
    /// How often to survey the recent window, filling in what a dropped delivery missed (GitHub
    /// never retries one); 0: never.
    #[arg(long, value_name = "DURATION", default_value = "1h")]
    pub resync: String,
    /// How far back the resync reaches.
    #[arg(long, value_name = "DURATION", default_value = "24h")]
    pub resync_window: String,
    /// The largest delivery body taken (bytes, or with K, M, G, KiB, MiB, GiB); larger is
    /// refused with 413. GitHub's deliveries are at most 25 MB.
    #[arg(long, value_name = "SIZE", default_value_t = DEFAULT_MAX_BODY, value_parser = parse_size)]
    pub max_body: u64,
    /// Open connections at once; past it the oldest idle connection is closed, or when every
    /// one is in a request the new one is answered 503.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_CONNECTIONS as u32,
          value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub max_connections: u32,
    /// /healthz answers 503 while the oldest queued delivery is older than this.
    #[arg(long, value_name = "DURATION", default_value = "1h")]
    pub max_queue_age: String,
    /// How long a request's header may take (an idle connection is closed after it), in
    /// milliseconds (tests lower it).
    #[arg(long, value_name = "MS", hide = true, default_value_t = DEFAULT_HEADER_TIMEOUT.as_millis() as u64)]
    pub header_timeout_ms: u64,
    /// How long a request's body may take, in milliseconds (tests lower it).
    #[arg(long, value_name = "MS", hide = true, default_value_t = DEFAULT_BODY_TIMEOUT.as_millis() as u64)]
    pub body_timeout_ms: u64,
    /// How long a delivery waits for the store's lock, and then for its write, in milliseconds
    /// (tests lower it).
    #[arg(long, value_name = "MS", hide = true, default_value_t = DEFAULT_QUEUE_WAIT.as_millis() as u64)]
    pub queue_wait_ms: u64,
    /// Ignored, kept for old scripts: the store has no lock to wait for (serve writes it beside
    /// surveys and nightlies).
    #[arg(long, value_name = "DURATION", default_value = "5m", hide = true)]
    pub wait: String,
    /// Where the store lives. Default: FLAKESTAT_CACHE_DIR, else the platform cache folder
    /// (with --replay: the replay's own store in it).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// A team store on PostgreSQL (postgres://USER:PASSWORD@HOST:PORT/DATABASE). Default:
    /// FLAKESTAT_STORE.
    #[arg(long, value_name = "URL", conflicts_with = "cache_dir")]
    pub store: Option<String>,
    /// Signature files. Default: ./signatures if present, else the bundled set.
    #[arg(long, value_name = "DIR")]
    pub signatures: Option<PathBuf>,
    /// Analysis settings (PR branch conventions). Default: ./flakestat.toml if present.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// The API root. Default: GITHUB_API_URL, else https://api.github.com.
    #[arg(long, value_name = "URL")]
    pub api_url: Option<String>,
    #[command(flatten)]
    pub app: AppArgs,
    /// Ingest from a recorded dataset served by the built-in fake GitHub on 127.0.0.1 (tests,
    /// trying it out); its repository by default.
    #[arg(long, value_name = "DIR", conflicts_with = "api_url")]
    pub replay: Option<PathBuf>,
    /// Requests in flight at once.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_CONCURRENCY as u16,
          value_parser = clap::value_parser!(u16).range(1..=32))]
    pub concurrency: u16,
    /// Send the token over plain http:// to a host that is not loopback.
    #[arg(long)]
    pub allow_insecure_http: bool,
    /// Failed ingests of one delivery before it is given up (tests lower it).
    #[arg(long, value_name = "N", default_value_t = 3, hide = true)]
    pub max_tries: u32,
    /// Retries of a request after a 5xx, a timeout or a dropped connection (tests lower it).
    #[arg(long, value_name = "N", default_value_t = 5, hide = true)]
    pub max_retries: u32,
    /// Tests only (builds with the fake GitHub): every ingest panics, as a bug would, to see
    /// the worker restarted, counted, and serve ending after enough panics in a row.
    #[cfg(feature = "replay")]
    #[arg(long, hide = true)]
    pub panic_in_ingest: bool,
    /// After ingesting a PR's run, keep that PR's one comment current (`pr --post-comment`'s;
    /// never a fork PR's; docs/pr.md).
    #[arg(long)]
    pub pr_comments: bool,
    /// As a GitHub App: after ingesting a PR's run, keep the check run `flakestat` on its head
    /// commit current (`pr --check-run`'s).
    #[arg(long)]
    pub pr_checks: bool,
}

/// Everything `serve` decided before listening.
struct Settings {
    config: ServeConfig,
    replay: Option<Replay>,
    location: StoreLocation,
    signatures: Signatures,
    analysis: AnalysisConfig,
    resync_window: TimeDelta,
    /// With `--replay`, the recording's end: the resync's "now" (replays are reproducible
    /// whatever the clock says); else the clock.
    now: Option<Timestamp>,
}

impl Settings {
    fn resolve(args: &ServeArgs) -> Result<Settings, CliError> {
        let replay = Replay::load(args.replay.as_deref())?;
        let repos = if let Some(owner) = &args.org {
            Repos::Owner(owner.clone())
        } else if args.repos.is_empty() {
            Repos::Some(vec![settings::resolve_repo(None, replay.as_ref())?])
        } else {
            Repos::Some(
                args.repos
                    .iter()
                    .map(|r| settings::resolve_repo(Some(r), None))
                    .collect::<Result<_, _>>()?,
            )
        };
        let secret = resolve_secret(args)?;
        let now = replay.as_ref().map(Replay::now);
        let resync = settings::parse_duration("--resync", &args.resync)?;
        let resync_window = settings::parse_duration("--resync-window", &args.resync_window)?;
        let max_queue_age = settings::parse_duration("--max-queue-age", &args.max_queue_age)?;
        let millis = std::time::Duration::from_millis;
        // Validated as before, then ignored (old scripts keep working).
        settings::parse_duration("--wait", &args.wait)?;
        let location = settings::resolve_store_or_replay(
            args.store.as_deref(),
            args.cache_dir.as_deref(),
            args.replay.as_deref(),
        )?
        .location;
        Ok(Settings {
            config: ServeConfig {
                listen: args.listen,
                secret,
                repos,
                max_body: args.max_body,
                max_connections: args.max_connections as usize,
                header_timeout: millis(args.header_timeout_ms.max(1)),
                body_timeout: millis(args.body_timeout_ms.max(1)),
                queue_wait: millis(args.queue_wait_ms.max(1)),
                max_queue_age,
                resync: (!resync.is_zero()).then_some(resync),
                max_tries: args.max_tries.max(1),
            },
            replay,
            location,
            signatures: Signatures::load(args.signatures.as_deref())?,
            analysis: settings::analysis_config(args.config.as_deref(), None)?,
            resync_window: TimeDelta::from_std(resync_window).unwrap_or(TimeDelta::MAX),
            now,
        })
    }
}

/// `--webhook-secret-file`, else `FLAKESTAT_WEBHOOK_SECRET`; never printed.
fn resolve_secret(args: &ServeArgs) -> Result<WebhookSecret, CliError> {
    let bytes = settings::resolve_webhook_secret(
        args.webhook_secret_file.as_deref(),
        "serve needs the webhook's secret",
        "an unsigned webhook would let anyone write the store",
    )?;
    WebhookSecret::new(bytes)
        .ok_or_else(|| CliError::Invalid("the webhook secret is empty".to_string()))
}

pub fn run(global: &GlobalArgs, args: ServeArgs) -> Result<u8, CliError> {
    let mut settings = Settings::resolve(&args)?;
    let store = pipeline::open_store(&settings.location)?;
    // The front's own connection (queue writes), so a delivery never waits for an ingest.
    let front = crate::store::Store::open_at(&settings.location)?;
    let connection = connect_to(
        args.api_url.as_deref(),
        &args.app,
        settings.replay.take(),
        global,
        None,
    )?;
    let pr_hook = pr_hook(&args, &connection)?;
    let session = Session::new(client_config(&args, &connection), Arc::new(()))?;
    let say: Arc<dyn Say> = Arc::new(Stderr {
        quiet: global.quiet,
    });
    let ingest = Arc::new(SurveyIngest {
        upkeep: Upkeep {
            session,
            store: store.clone(),
            classifier: settings.signatures.classifier(),
            signatures: settings.signatures.infos.clone(),
            analysis: settings.analysis,
            green: GreenLogs {
                rate: args.green_logs,
                keep_logs: args.keep_green_logs,
            },
        },
        repos: settings.config.repos.clone(),
        signatures: settings.signatures,
        resync_window: settings.resync_window,
        now: settings.now,
        #[cfg(feature = "replay")]
        panic_in_ingest: args.panic_in_ingest,
        pr_hook,
        say: say.clone(),
    });
    let bound = |addr: SocketAddr| {
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(
            stdout,
            "{}",
            serde_json::json!({ "listen": addr.to_string() })
        );
        let _ = stdout.flush();
        say.say(format!(
            "listening on http://{addr}/webhook; store {}",
            settings.location.describe()
        ));
    };
    flakestat_serve::serve(
        settings.config,
        store.clone(),
        front,
        ingest,
        say.clone(),
        bound,
        stop_signal(),
    )
    .map_err(|e| CliError::Failed(e.to_string()))?;
    // Told, not required: a store lost at the stop (a database restarting) keeps its queue.
    let left = store.blocking(|s| s.queue_stats());
    say.say(match left {
        Ok(left) => format!(
            "stopped; {} run attempt deliveries still queued (the next start drains them)",
            left.queued
        ),
        Err(e) => format!("stopped; cannot count the deliveries still queued: {e}"),
    });
    drop(connection);
    Ok(exit::SUCCESS)
}

fn client_config(args: &ServeArgs, connection: &Connection) -> ClientConfig {
    let mut config = ClientConfig::new(connection.api_url.clone(), connection.token.clone());
    config.app = connection.app.clone();
    config.concurrency = usize::from(args.concurrency);
    config.max_retries = args.max_retries;
    config.allow_insecure_http = args.allow_insecure_http;
    config
}

/// SIGTERM (systemd, docker stop) or Ctrl-C.
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// The server's lines on stderr, sanitized (they quote repository names and GitHub's answers).
struct Stderr {
    quiet: bool,
}

impl Say for Stderr {
    fn say(&self, line: String) {
        if !self.quiet {
            eprintln!("flakestat serve: {}", sanitize::terminal(&line));
        }
    }
}

/// [`IngestRun`] over flakestat-sync's [`Upkeep`] (one run through the survey's `Ingest`, the
/// recent window's survey for the resync), with the command's own hooks around it.
struct SurveyIngest {
    upkeep: Upkeep,
    repos: Repos,
    /// The PR hook's: the signatures `upkeep` classifies with.
    signatures: Signatures,
    resync_window: TimeDelta,
    now: Option<Timestamp>,
    #[cfg(feature = "replay")]
    panic_in_ingest: bool,
    /// `--pr-comments` / `--pr-checks`.
    pr_hook: Option<PrHook>,
    say: Arc<dyn Say>,
}

/// `--pr-comments` / `--pr-checks`: the hook, refused without the credentials GitHub needs.
fn pr_hook(args: &ServeArgs, connection: &Connection) -> Result<Option<PrHook>, CliError> {
    if !args.pr_comments && !args.pr_checks {
        return Ok(None);
    }
    if args.pr_checks && connection.app.is_none() {
        return Err(CliError::NoToken(
            "--pr-checks: GitHub takes check runs from GitHub Apps only: pass --app-id and --app-key".into(),
        ));
    }
    if connection.token.is_none() && connection.app.is_none() {
        return Err(CliError::NoToken(
            "--pr-comments needs a token that may write the PRs' comments (GITHUB_TOKEN, GH_TOKEN) or a GitHub App".into(),
        ));
    }
    Ok(Some(PrHook::new(
        args.pr_comments,
        args.pr_checks,
        client_config(args, connection),
    )))
}

impl IngestRun for SurveyIngest {
    /// The run through the survey's own per-run path ([`Upkeep::ingest`]), beside any survey
    /// or nightly writing the store, then the PR hook.
    fn ingest(&self, run: &QueuedRun) -> Result<Ingested, IngestFailure> {
        #[cfg(feature = "replay")]
        if self.panic_in_ingest {
            panic!("--panic-in-ingest: run {} (a test's fault)", run.run);
        }
        let fetched = self
            .upkeep
            .ingest(&run.repo, run.run, run.run_created_at)
            .map_err(failure)?;
        if let Some(hook) = &self.pr_hook {
            // The run is stored whatever the hook does: a failed write is said, not retried.
            let now = self.now.unwrap_or_else(Utc::now);
            let what = (&run.repo, run.run, run.run_attempt);
            let (store, analysis) = (&self.upkeep.store, &self.upkeep.analysis);
            match hook.after_ingest(store, &self.signatures, analysis, what, now) {
                Ok(Some(line)) => self.say.say(line),
                Ok(None) => {}
                Err(e) => self.say.say(format!(
                    "run {}: the PR's comment or check run: {e}",
                    run.run
                )),
            }
        }
        Ok(ingested(fetched))
    }

    fn resync(&self) -> Result<Ingested, IngestFailure> {
        let repos = match &self.repos {
            Repos::Some(repos) => repos.clone(),
            Repos::Owner(owner) => self
                .upkeep
                .store
                .blocking(|s| s.repos_of_owner(owner))
                .map_err(|e| IngestFailure {
                    message: e.to_string(),
                    retry: true,
                })?,
        };
        let until = self.now.unwrap_or_else(Utc::now);
        let fetched = self
            .upkeep
            .resync(&repos, until, self.resync_window)
            .map_err(failure)?;
        Ok(ingested(fetched))
    }
}

fn ingested(fetched: Fetched) -> Ingested {
    Ingested {
        logs_fetched: fetched.logs_fetched,
        rate_limit_remaining: fetched.rate_limit_remaining,
    }
}

/// A failed step as the worker sees it, tried again when it may pass ([`may_pass`]).
fn failure(e: FetchError) -> IngestFailure {
    IngestFailure {
        retry: may_pass(&e),
        message: e.to_string(),
    }
}
