//! `flakestat pr OWNER/NAME#N`: one pull request's red checks explained. Resolves the settings
//! once, fetches the PR and its latest runs into the store through the survey's ingest (`fetch`),
//! labels every failed job from the window's evidence (`analyse`: `analysis::pr`), writes the
//! table, markdown or JSON (`write_report`), optionally keeps one comment on the PR current
//! (`post`), and exits 0 when nothing is the PR's doing, 1 otherwise (`exit::PR_FAILURE`).

use clap::Args;

use super::GlobalArgs;
use super::error::CliError;
use super::output::{FormatArg, ReportOutput};
use super::pipeline::fetch::Connection;
use super::pipeline::pr::PrWindow;
use super::pipeline::{self, SharedStore, Signatures};
use super::progress::{Bars, closing_line};
use super::settings;
use super::source::{Replay, SourceArgs};
use super::when::{Bound, parse_when};
use crate::analysis::AnalysisConfig;
use crate::analysis::pr::{PrReport, RunSelection};
use crate::exit;
use crate::fetch::checks::CheckPosted;
use crate::fetch::comments::Posted;
use crate::fetch::{ClientConfig, PrPlan};
use crate::model::{PrNumber, Repo, Timestamp};
use crate::report::pr as render_pr;

const EXAMPLES: &str = "\
Examples:
  flakestat pr NVIDIA/cuda-python#2388
  flakestat pr --repo NVIDIA/cuda-python --pr 2388 --format json
  flakestat pr NVIDIA/cuda-python#2388 --post-comment
  flakestat pr --replay fixtures/cuda-python-flake --pr 2388
  flakestat pr NVIDIA/cuda-python#2388 --offline --all-runs

Fetches the PR, its runs in either PR style (`pull_request` runs, fork PRs' included, and `push`
runs on its mirror branch pull-request/<N>), their jobs and failed logs into the store, then
labels every failed job of its latest head's runs: known flake, broken on the default branch,
infrastructure, likely this PR, or unknown, from what the store holds since --since (run
`flakestat survey` first: without the default branch's runs there is no evidence). Exits 0
when every failure is a known flake, broken on the default branch or infrastructure (or there
is none), 1 when one is likely the PR's or unknown. docs/pr.md says what each label means.";

/// The token the replay server is given to comment with (the fake accepts any).
const REPLAY_TOKEN: &str = "flakestat-replay";

#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct PrArgs {
    /// The pull request: OWNER/NAME#N, or N with --repo (or --replay).
    #[arg(value_name = "OWNER/NAME#N", conflicts_with = "pr")]
    pub target: Option<String>,
    /// The pull request's number (with --repo, or --replay).
    #[arg(long, value_name = "N")]
    pub pr: Option<u64>,
    /// The repository, OWNER/NAME (with --replay: the dataset's by default).
    #[arg(long, value_name = "OWNER/NAME")]
    pub repo: Option<String>,
    /// How far back the store is read for evidence (a date, an RFC 3339 datetime, or 24h / 7d /
    /// 2w ago).
    #[arg(long, value_name = "WHEN", default_value = "30d")]
    pub since: String,
    /// Label every run of the PR, not only its latest head's.
    #[arg(long)]
    pub all_runs: bool,
    /// Keep one comment on the PR current: created the first time, edited on every later run
    /// (found by a hidden marker; never a second comment).
    #[arg(long)]
    pub post_comment: bool,
    /// As a GitHub App (--app-id, --app-key): keep one check run named `flakestat` on the PR's
    /// head commit with the summary and the table (success when nothing is the PR's doing,
    /// neutral otherwise), edited in place on every later run.
    #[arg(long)]
    pub check_run: bool,
    #[command(flatten)]
    pub source: SourceArgs,
}

/// Everything `pr` decided before doing any work.
struct Settings {
    replay: Option<Replay>,
    repo: Repo,
    pr: PrNumber,
    since: Timestamp,
    now: Timestamp,
    signatures: Signatures,
    config: AnalysisConfig,
    output: ReportOutput,
}

impl Settings {
    fn resolve(global: &GlobalArgs, args: &PrArgs) -> Result<Settings, CliError> {
        let replay = Replay::load(args.source.replay.as_deref())?;
        let now = settings::resolve_now(None, replay.as_ref())?;
        let (repo, pr) = target(args, replay.as_ref())?;
        let since = parse_when(&args.since, Bound::Since, now)?;
        if args.source.format == Some(FormatArg::Html) {
            return Err(CliError::Invalid(
                "--format html: `pr` writes table, markdown (a comment body) or json".into(),
            ));
        }
        if (args.post_comment || args.check_run) && args.source.offline {
            return Err(CliError::Invalid(
                "--post-comment and --check-run write to GitHub: leave out --offline".into(),
            ));
        }
        let output =
            ReportOutput::resolve(args.source.format, args.source.output.clone(), global.color)?;
        Ok(Settings {
            replay,
            repo,
            pr,
            since,
            now,
            signatures: Signatures::load(args.source.signatures.as_deref())?,
            config: settings::analysis_config(args.source.config.as_deref(), None)?,
            output,
        })
    }
}

/// The repository and the PR: `OWNER/NAME#N`, or `N` (`#N`, `--pr N`) with `--repo` or the
/// replay's repository.
fn target(args: &PrArgs, replay: Option<&Replay>) -> Result<(Repo, PrNumber), CliError> {
    let bad = |text: &str| {
        CliError::Invalid(format!(
            "{text:?} is not a pull request: give OWNER/NAME#N (for example NVIDIA/cuda-python#2388), or N with --repo"
        ))
    };
    let (repo, number) = match (&args.target, args.pr) {
        (Some(text), _) => {
            let (repo, n) = match text.trim().rsplit_once('#') {
                Some((repo, n)) if !repo.is_empty() => {
                    (Some(Repo::parse(repo).ok_or_else(|| bad(text))?), n)
                }
                Some((_, n)) => (None, n),
                None => (None, text.trim()),
            };
            let n = n.parse::<u64>().ok().filter(|n| *n > 0);
            (repo, n.ok_or_else(|| bad(text))?)
        }
        (None, Some(n)) if n > 0 => (None, n),
        (None, Some(n)) => return Err(bad(&n.to_string())),
        (None, None) => {
            return Err(CliError::Invalid(
                "which pull request? give OWNER/NAME#N, or --pr N with --repo".into(),
            ));
        }
    };
    let number = PrNumber(number);
    let repo = match (repo, &args.repo) {
        (Some(a), Some(b)) if settings::parse_repo(b)? != a => {
            return Err(CliError::Invalid(format!(
                "{a}#{number} and --repo {b} name two repositories: give one"
            )));
        }
        (Some(a), _) => a,
        (None, Some(b)) => settings::parse_repo(b)?,
        (None, None) => match replay {
            Some(r) => r.repo(),
            None => {
                return Err(CliError::Invalid(format!(
                    "which repository is #{number} in? give OWNER/NAME#{number}, or --repo OWNER/NAME"
                )));
            }
        },
    };
    Ok((repo, number))
}

pub fn run(global: &GlobalArgs, args: PrArgs) -> Result<u8, CliError> {
    let mut settings = Settings::resolve(global, &args)?;
    let connection = if args.source.offline {
        Connection::offline()
    } else {
        pipeline::fetch::connect(
            &args.source,
            settings.replay.take(),
            global,
            Some(REPLAY_TOKEN),
        )?
    };
    if args.post_comment && connection.token.is_none() && connection.app.is_none() {
        return Err(CliError::NoToken(
            "--post-comment needs a token that may write the PR's comments: set GITHUB_TOKEN or GH_TOKEN (or use --app-id and --app-key)".into(),
        ));
    }
    if args.check_run && connection.app.is_none() {
        return Err(CliError::NoToken(
            "--check-run: GitHub takes check runs from GitHub Apps only: pass --app-id and --app-key (else APP_ID and PRIVATE_KEY_PATH)".into(),
        ));
    }
    let resolved = args.source.store_location()?;
    let store = pipeline::open_store(&resolved.location)?;
    let oldest = if args.source.offline {
        None
    } else {
        fetch(global, &args, &settings, &connection, &store)?
    };
    let report = analyse(&args, &settings, &store, oldest)?;
    settings
        .output
        .write(|out, format, options| render_pr::render(&report, format, options, out))?;
    if args.post_comment {
        post(global, &args, &settings, &report, &connection)?;
    }
    if args.check_run {
        check_run(global, &args, &settings, &report, &connection)?;
    }
    Ok(if report.all_explained() {
        exit::SUCCESS
    } else {
        if !global.quiet {
            eprintln!(
                "flakestat: some failure may be this PR's own (likely this PR, or unknown); exiting {}",
                exit::PR_FAILURE
            );
        }
        exit::PR_FAILURE
    })
}

/// The PR, its runs (the latest head's, or all), their jobs and failed logs into the store;
/// when the oldest of the runs to label was created.
fn fetch(
    global: &GlobalArgs,
    args: &PrArgs,
    settings: &Settings,
    connection: &Connection,
    store: &SharedStore,
) -> Result<Option<Timestamp>, CliError> {
    let bars = Bars::for_command(global);
    let session = connection.session(&args.source, &bars)?;
    let plan = PrPlan {
        repo: settings.repo.clone(),
        pr: settings.pr,
        mirror_branches: vec![format!("pull-request/{}", settings.pr)],
        all_runs: args.all_runs,
    };
    let fetched = session.fetch_pr(store.clone(), settings.signatures.classifier(), &plan);
    bars.finish();
    let fetched = fetched?;
    if !global.quiet {
        let to = if connection.is_replay() {
            "the replay's fake GitHub on 127.0.0.1: "
        } else {
            ""
        };
        eprintln!(
            "flakestat: {to}PR #{}: {} listed, {} ingested; {}",
            settings.pr,
            plural(fetched.runs.len(), "run"),
            plural(fetched.ingested.len(), "run"),
            closing_line(&session.stats())
        );
    }
    Ok(fetched.ingested.iter().map(|r| r.created_at).min())
}

fn plural(n: usize, one: &str) -> String {
    format!("{n} {one}{}", if n == 1 { "" } else { "s" })
}

/// The window's evidence and the PR's failed jobs, labelled.
/// `oldest`: when the oldest run fetched to label was created (offline: found in the window).
fn analyse(
    args: &PrArgs,
    settings: &Settings,
    store: &SharedStore,
    oldest: Option<Timestamp>,
) -> Result<PrReport, CliError> {
    let window = PrWindow {
        repo: &settings.repo,
        pr: settings.pr,
        since: settings.since,
        until: settings.now,
        oldest,
        runs: if args.all_runs {
            RunSelection::All
        } else {
            RunSelection::LatestHead
        },
    };
    pipeline::pr::label_stored(store, &window, &settings.signatures, &settings.config)
}

/// The client settings a write to GitHub uses (the connection's token or App).
fn write_config(args: &PrArgs, connection: &Connection) -> ClientConfig {
    let mut config = ClientConfig::new(connection.api_url.as_str(), connection.token.clone());
    config.app = connection.app.clone();
    config.max_retries = args.source.max_retries;
    config.allow_insecure_http = args.source.allow_insecure_http;
    config
}

/// Creates or edits the check run `flakestat` on the PR's head commit.
fn check_run(
    global: &GlobalArgs,
    args: &PrArgs,
    settings: &Settings,
    report: &PrReport,
    connection: &Connection,
) -> Result<(), CliError> {
    let written =
        pipeline::pr::put_check_run(write_config(args, connection), &settings.repo, report)?;
    if global.quiet {
        return Ok(());
    }
    let Some((target, posted)) = written else {
        eprintln!(
            "flakestat: no run of PR #{}: no commit to put a check run on",
            settings.pr
        );
        return Ok(());
    };
    let line = match posted {
        CheckPosted::Created { id } => format!("created check run {id}"),
        CheckPosted::Updated { id } => format!("updated check run {id}"),
        CheckPosted::Unchanged { id } => {
            format!("check run {id} already says this: left as it is")
        }
    };
    eprintln!(
        "flakestat: {line} on {} of PR #{}",
        target.head_sha.0, settings.pr
    );
    Ok(())
}

/// Creates or edits the PR's one comment.
fn post(
    global: &GlobalArgs,
    args: &PrArgs,
    settings: &Settings,
    report: &PrReport,
    connection: &Connection,
) -> Result<(), CliError> {
    let (target, posted) =
        pipeline::pr::post_comment(write_config(args, connection), &settings.repo, report)?;
    if !global.quiet {
        let on_fake = if connection.is_replay() {
            " (the replay's fake GitHub on 127.0.0.1; nothing reached github.com)"
        } else {
            ""
        };
        let line = match posted {
            Posted::Created { id, .. } => format!("created comment {id} on {target}{on_fake}"),
            Posted::Updated { id, .. } => format!("updated comment {id} on {target}{on_fake}"),
            Posted::Unchanged { id, .. } => {
                format!("comment {id} on {target}{on_fake} already says this: left as it is")
            }
        };
        eprintln!("flakestat: {}", crate::report::sanitize::terminal(&line));
    }
    Ok(())
}
