//! `signatures audit --green-sample N`: download (or, `--offline`, only reuse) the logs of a
//! bounded sample of successful jobs, classify them with the signatures audited, and give each
//! signature its share of matches in them (`analysis::green`). The sample is kept in the store's
//! `green_logs`, apart from every failure log, so a repeat costs no request.
//!
//! A sample that cannot be had (no network, GitHub refusing anonymous log downloads, a spent
//! rate limit) is said once on stderr and leaves the shares it could not measure unknown, never
//! zero; a bad `--api-url` or a store that cannot be written is an error like anywhere else.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use super::error::CliError;
use super::pipeline::{self, SharedStore};
use super::progress::closing_line;
use super::{GlobalArgs, settings};
use crate::analysis::green::{GreenShare, green_sample, green_shares, hit_names};
use crate::fetch::{ClientConfig, FetchError, GreenFetch, Session};
use crate::model::{Classification, JobId, LogStatus, Repo, Snapshot};
use crate::signatures::{SignatureSet, SignatureSpec};
use crate::store::StoreLocation;

#[derive(Debug, clap::Args)]
pub struct GreenArgs {
    /// Download the logs of at most N successful jobs with the job names of the signatures'
    /// hits (spread across those names, newest first; kept in the store) and report each
    /// signature's matches in them: any match is an alarm (too broad). Counted in the request
    /// budget. Without it, the share of matches in successful jobs is unknown.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub green_sample: Option<u64>,
    /// No network: use only the green logs an earlier audit stored.
    #[arg(long, conflicts_with = "api_url")]
    pub offline: bool,
    /// The API root (with --replay, which also serves the green sample, not allowed).
    /// Default: GITHUB_API_URL, else https://api.github.com.
    #[arg(long, value_name = "URL", conflicts_with = "replay")]
    pub api_url: Option<String>,
    #[command(flatten)]
    pub app: super::source::AppArgs,
    /// Send the token over plain http:// to a host that is not loopback.
    #[arg(long)]
    pub allow_insecure_http: bool,
    /// Retries of a request after a 5xx, a timeout or a dropped connection (tests lower it).
    #[arg(long, value_name = "N", default_value_t = 5, hide = true)]
    pub max_retries: u32,
}

/// What the sample says, per signature id, and one line on the sample for the audit's summary.
pub(super) struct GreenOutcome {
    pub shares: BTreeMap<String, GreenShare>,
    pub summary: String,
}

/// Picks the sample, downloads what the store lacks of it (unless `--offline`), classifies the
/// stored green logs with `specs`, and gives each signature its share.
pub(super) fn sample_green(
    global: &GlobalArgs,
    args: &GreenArgs,
    location: &StoreLocation,
    replay: Option<&Path>,
    snapshot: &Snapshot,
    specs: &[SignatureSpec],
) -> Result<GreenOutcome, CliError> {
    let ids: Vec<String> = specs.iter().map(|s| s.id.0.clone()).collect();
    let Some(n) = args.green_sample else {
        let why = "not sampled (pass --green-sample N)";
        return Ok(GreenOutcome {
            shares: green_shares(snapshot, &ids, None, why),
            summary: format!("matches in successful jobs unknown: {why}"),
        });
    };
    let sample = green_sample(snapshot, &hit_names(snapshot), n as usize);
    if sample.is_empty() {
        let why = "no successful job in the window has the job name of a hit";
        return Ok(GreenOutcome {
            shares: green_shares(snapshot, &ids, None, why),
            summary: format!("matches in successful jobs unknown: {why}"),
        });
    }
    let repo = snapshot
        .repo
        .clone()
        .expect("a snapshot loaded from the store names its repository");
    let store = pipeline::open_store(location)?;

    let stopped = if args.offline {
        None
    } else {
        download_sample(global, args, replay, &store, &repo, &sample)?
    };

    let set = SignatureSet::compile(specs.to_vec())
        .map_err(|e| CliError::signatures("the signatures audited", e, ""))?;
    let (green, missing) = store.blocking(|store| {
        let statuses = store.green_log_statuses(&sample)?;
        let mut green: Vec<(JobId, Classification)> = Vec::new();
        for job in &sample {
            if statuses.get(job) != Some(&LogStatus::Stored) {
                continue;
            }
            if let Some(raw) = store.load_green_log(*job)? {
                green.push((*job, set.classify(&raw)));
            }
        }
        let missing = sample.len() - green.len();
        Ok::<_, CliError>((green, missing))
    })?;
    let mut summary = format!(
        "green sample: {} logs of successful jobs (of {} picked",
        green.len(),
        sample.len()
    );
    if missing > 0 {
        summary.push_str(&format!(
            "; {missing} without a log{}",
            if args.offline {
                " in the store (--offline)"
            } else if stopped.is_some() {
                ": the sample stopped early"
            } else {
                ": expired, missing or not the job's own"
            }
        ));
    }
    summary.push(')');
    let why = if args.offline {
        "no green log stored (run the audit once without --offline)"
    } else {
        "no green log could be downloaded"
    };
    let shares = if green.is_empty() {
        green_shares(snapshot, &ids, None, why)
    } else {
        green_shares(snapshot, &ids, Some(&green), why)
    };
    Ok(GreenOutcome { shares, summary })
}

/// Downloads what the store lacks of the sample (beside any survey writing the store) and says
/// how it went; why it stopped early, if it did.
fn download_sample(
    global: &GlobalArgs,
    args: &GreenArgs,
    replay: Option<&Path>,
    store: &SharedStore,
    repo: &Repo,
    sample: &[JobId],
) -> Result<Option<String>, CliError> {
    let (fetched, stats, failure) = download(global, args, replay, store, repo, sample)?;
    let mut stopped = None;
    if let Some(e) = failure {
        stopped = Some(e.to_string());
        if !global.quiet {
            say!(
                "flakestat: the green sample stopped after {} of its {} log requests: {}; the shares it could not measure stay unknown",
                fetched.requests,
                sample.len() as u64 - fetched.known,
                crate::report::sanitize::terminal_line(&e.to_string())
            );
        }
    }
    if !global.quiet {
        say!(
            "flakestat: green sample: {} jobs, {} already in the store, {} log requests ({} logs stored, {} unavailable); {}",
            sample.len(),
            fetched.known,
            fetched.requests,
            fetched.stored,
            fetched.unavailable,
            closing_line(&stats)
        );
    }
    Ok(stopped)
}

/// Downloads the sample's missing logs. A failure that leaves the audit meaningful (GitHub
/// refusing, unreachable, out of budget) is returned beside what was done; a bad `--api-url`,
/// the store or an interrupt is an error.
fn download(
    global: &GlobalArgs,
    args: &GreenArgs,
    replay: Option<&Path>,
    store: &SharedStore,
    repo: &Repo,
    sample: &[JobId],
) -> Result<(GreenFetch, crate::fetch::StatsSnapshot, Option<FetchError>), CliError> {
    let _fake; // keeps the replay server alive while the sample downloads
    let (api_url, token, app) = match replay {
        Some(dir) => {
            let replay = super::source::Replay::load(Some(dir))?.expect("a --replay folder");
            let gh = replay.start()?;
            let url = gh.api_url();
            _fake = gh;
            (url, None, None)
        }
        None => {
            let url = settings::resolve_api_url(args.api_url.as_deref());
            match settings::resolve_credentials(&url, &args.app)? {
                settings::Credentials::App(app) => (url, None, Some(app.auth)),
                settings::Credentials::Token(token, _) => {
                    (url, Some(token.expose().to_string()), None)
                }
                settings::Credentials::Anonymous => {
                    if !global.quiet {
                        say!(
                            "flakestat: no token (GITHUB_TOKEN, GH_TOKEN or `gh auth login`): GitHub may refuse to serve job logs anonymously"
                        );
                    }
                    (url, None, None)
                }
            }
        }
    };
    let mut config = ClientConfig::new(api_url, token);
    config.app = app;
    config.max_retries = args.max_retries;
    config.allow_insecure_http = args.allow_insecure_http;
    let session = Session::new(config, Arc::new(()))?;
    let mut fetched = GreenFetch::default();
    let failure = match session.fetch_green_logs(store, repo, sample, &mut fetched) {
        Ok(()) => None,
        Err(
            e @ (FetchError::Config(_)
            | FetchError::Internal(_)
            | FetchError::ApiRoot(_)
            | FetchError::InsecureHttp { .. }
            | FetchError::Store(_)
            | FetchError::Spool(_)
            | FetchError::Interrupted),
        ) => return Err(e.into()),
        Err(e) => Some(e),
    };
    Ok((fetched, session.stats(), failure))
}
