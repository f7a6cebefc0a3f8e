//! `flakestat survey`: resolve the settings once, open the store (no lock: other runs may write
//! it meanwhile), run the fetch session (or stay offline), then analyze the store's snapshot and write the report. The steps are the
//! shared pipeline's; this file only orders them and says what happened.

use std::sync::Arc;

use clap::{ArgGroup, Args};

use super::GlobalArgs;
use super::error::CliError;
use super::output::ReportOutput;
use super::pipeline::fetch::{AncestryPlan, Connection, connect, fetch_ancestry, prs_of_runs};
use super::pipeline::many::{self, ManySurvey, connect_many};
use super::pipeline::{self, SharedStore, Signatures};
use super::progress::{
    Bars, ancestry_line, archive_note, closing_line, cost_line, human_bytes, peak_memory,
};
use super::repos::{Many, RepoArgs, Target};
use super::settings;
use super::source::{FixIt, Replay, SourceArgs};
use super::when::parse_window;
use crate::analysis::{self, AnalysisConfig};
use crate::exit;
use crate::fetch::{
    AncestrySummary, FetchError, Session, StatsSnapshot, SurveyPlan, SurveySummary,
};
use crate::model::{Repo, Run, Timestamp};
use crate::report;
use crate::store::StoreLocation;

const EXAMPLES: &str = "\
Examples:
  flakestat survey --repo NVIDIA/cuda-python --since 2026-06-15
  flakestat survey --repo NVIDIA/cuda-python --since 7d \\
      --workflow ci.yml --branch main
  flakestat survey --repo NVIDIA/cuda-python --since 2026-06-01 \\
      --until 2026-06-30 -q --output june.md
  flakestat survey --repo NVIDIA/cuda-python --since 30d --offline \\
      --signatures ./signatures
  flakestat survey --replay fixtures/cuda-python-flake --since 2026-06-15
  flakestat survey --org NVIDIA --repo-pattern 'cuda-*' --since 30d
  flakestat survey --repo NVIDIA/cuda-python --repo NVIDIA/cuda-quantum \\
      --since 30d
  flakestat survey --org NVIDIA --since 1d --app-id 123456 \\
      --app-key /etc/flakestat/app.private-key.pem

WHEN is a date (2026-06-15, UTC), an RFC 3339 datetime (2026-06-15T08:00:00Z) or a span back
from now (30m, 24h, 7d, 2w). --since is inclusive; a date given to --until means through the end
of that day.

The token comes from GITHUB_TOKEN, else GH_TOKEN, else `gh auth token`; without one, public
repositories work within GitHub's anonymous limit (60 requests an hour). As a GitHub App:
--app-id and --app-key (else APP_ID and PRIVATE_KEY_PATH); its installation on each owner is
looked up unless --installation-id names it, and its tokens are renewed before they expire.
The store lives in --cache-dir, else FLAKESTAT_CACHE_DIR, else the platform cache folder; a
repeated survey only asks GitHub for what can have changed.";

#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
#[command(group = ArgGroup::new("target").args(["repos", "org", "replay"]).required(true).multiple(true))]
pub struct SurveyArgs {
    /// The repositories (with --replay: the dataset's by default).
    #[command(flatten)]
    pub target: RepoArgs,
    /// Start of the window, inclusive (a date, an RFC 3339 datetime, or 24h / 7d / 2w ago).
    #[arg(long, value_name = "WHEN")]
    pub since: String,
    /// End of the window (a date means through the end of that day). Default: now.
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,
    /// Only runs of this workflow (its name, file name such as ci.yml, or id); repeatable.
    #[arg(long = "workflow", value_name = "NAME_OR_FILE")]
    pub workflows: Vec<String>,
    /// Only runs on this branch.
    #[arg(long, value_name = "BRANCH")]
    pub branch: Option<String>,
    /// Only runs triggered by this event (push, pull_request, schedule, …).
    #[arg(long, value_name = "EVENT")]
    pub event: Option<String>,
    /// Ignored, kept for old scripts: the store has no lock to wait for (several runs may write
    /// it at once).
    #[arg(long, value_name = "DURATION", default_value = "0s", hide = true)]
    pub wait: String,
    #[command(flatten)]
    pub source: SourceArgs,
}

/// Everything `survey` decided before doing any work; `repo` is the one repository surveyed,
/// or which several (`Target`, then `Many`).
struct Settings<R = Repo> {
    replay: Option<Replay>,
    repo: R,
    since: Timestamp,
    until: Timestamp,
    signatures: Signatures,
    config: AnalysisConfig,
    output: ReportOutput,
}

impl Settings<Target> {
    fn resolve(global: &GlobalArgs, args: &SurveyArgs) -> Result<Settings<Target>, CliError> {
        // Replay: the dataset decides the repository and what "now" is.
        let replay = Replay::load(args.source.replay.as_deref())?;
        let now = settings::resolve_now(None, replay.as_ref())?;
        let repo = match args.target.target()? {
            Some(target) => target,
            None => Target::One(settings::resolve_repo(None, replay.as_ref())?),
        };
        let (since, until) = parse_window(&args.since, args.until.as_deref(), now)?;
        let until = settings::end_by_now(until, now, replay.is_some());
        if until <= since {
            return Err(super::when::WhenError::Empty {
                since: args.since.clone(),
                until: "now".to_string(),
            }
            .into());
        }
        let signatures = Signatures::load(args.source.signatures.as_deref())?;
        let config = settings::analysis_config(args.source.config.as_deref(), None)?;
        settings::parse_wait(&args.wait)?;
        let output =
            ReportOutput::resolve(args.source.format, args.source.output.clone(), global.color)?;
        Ok(Settings {
            replay,
            repo,
            since,
            until,
            signatures,
            config,
            output,
        })
    }
}

/// What the fetch phase leaves for the closing lines.
#[derive(Default)]
struct Fetched {
    stats: Option<StatsSnapshot>,
    summary: Option<SurveySummary>,
    ancestry: Option<AncestrySummary>,
    failure: Option<FetchError>,
}

impl<T> Settings<T> {
    /// The same settings for `repo`.
    fn with_repo<R>(self, repo: R) -> Settings<R> {
        Settings {
            replay: self.replay,
            repo,
            since: self.since,
            until: self.until,
            signatures: self.signatures,
            config: self.config,
            output: self.output,
        }
    }
}

pub fn run(global: &GlobalArgs, args: SurveyArgs) -> Result<u8, CliError> {
    let settings = Settings::resolve(global, &args)?;
    match settings.repo.clone() {
        Target::One(repo) => run_one(global, &args, settings.with_repo(repo)),
        Target::Many(many) => run_many(global, &args, settings.with_repo(many)),
    }
}

/// Several repositories: surveyed one after the other into one store, reported together.
fn run_many(
    global: &GlobalArgs,
    args: &SurveyArgs,
    settings: Settings<Many>,
) -> Result<u8, CliError> {
    let connection = connect_many(global, &args.source, None)?;
    let resolved = args.source.store_location()?;
    let fingerprint = settings.signatures.fingerprint();
    let ancestry = |session: &Session, store: &SharedStore, repo: &Repo| {
        let plan = AncestryPlan {
            repo,
            since: settings.since,
            until: settings.until,
            fingerprint: &fingerprint,
            signatures: &settings.signatures.infos,
            config: &settings.config,
        };
        fetch_ancestry(session, store, &plan).map(|_| ())
    };
    let plan = |repo: &Repo| SurveyPlan {
        repo: repo.clone(),
        since: settings.since,
        until: settings.until,
        workflows: args.workflows.clone(),
        branch: args.branch.clone(),
        event: args.event.clone(),
        interruptible: true,
    };
    let survey = ManySurvey {
        many: &settings.repo,
        since: settings.since,
        until: settings.until,
        signatures: &settings.signatures,
        config: &settings.config,
        plan: &plan,
        then: &ancestry,
    };
    let surveyed = many::survey(
        global,
        &args.source,
        &connection,
        &resolved.location,
        &survey,
    )?;
    let org = many::combine_reports(&surveyed, &survey)?;
    settings
        .output
        .write(|out, format, options| report::render_org(&org, format, options, out))?;
    Ok(exit::SUCCESS)
}

/// One repository: the survey, its bisection's fetch, its report.
fn run_one(global: &GlobalArgs, args: &SurveyArgs, mut settings: Settings) -> Result<u8, CliError> {
    let resolved = args.source.store_location()?;
    let location = &resolved.location;
    let store = pipeline::open_store(location)?;

    let bars = Bars::for_command(global);
    let fetched = if args.source.offline {
        reclassify_offline(global, &store, &settings, location)?;
        Fetched::default()
    } else {
        let connection = connect(&args.source, settings.replay.take(), global, None)?;
        fetch(args, &connection, &bars, &store, &mut settings)?
    };
    bars.finish();
    say_closing_lines(global, &fetched, args.source.replay.is_some());
    if let Some(err) = fetched.failure {
        return Err(err.into());
    }
    write_report(&store, &settings)?;
    if resolved.replay_store && !global.quiet {
        say_where_the_replay_went(args, location);
    }
    Ok(exit::SUCCESS)
}

/// A replay's own store (no `--cache-dir`, no `--store`): where it is, and the `report` that
/// reads it again.
fn say_where_the_replay_went(args: &SurveyArgs, location: &StoreLocation) {
    let Some(replay) = &args.source.replay else {
        return;
    };
    // `--replay` first, as the quick start spells it; no `--cache-dir`: there was none.
    let fix_it = FixIt {
        since: &args.since,
        until: args.until.as_deref(),
        replay: None,
        cache_dir: None,
        signatures: args.source.signatures.as_deref(),
    };
    let replay = settings::shell_word(&replay.display().to_string());
    let command = fix_it.command("report", &format!("--replay {replay}"));
    eprintln!(
        "flakestat: the replay's store is in {} (kept apart from real data); `{command}` reads it again",
        location.describe()
    );
}

/// `--offline`: the store alone, re-classified with the current signatures.
fn reclassify_offline(
    global: &GlobalArgs,
    store: &SharedStore,
    settings: &Settings,
    location: &StoreLocation,
) -> Result<(), CliError> {
    let counts = store.lock().expect("store lock").counts(&settings.repo)?;
    if counts.runs == 0 && !global.quiet {
        eprintln!(
            "flakestat: the store in {} holds nothing for {}: run the survey once without --offline",
            location.describe(),
            settings.repo
        );
    }
    pipeline::reclassify(store, &settings.repo, &settings.signatures)?;
    Ok(())
}

/// The survey, then what the bisection needs. A failure of either is kept for after the
/// closing lines (what was collected is stored, and said).
fn fetch(
    args: &SurveyArgs,
    connection: &Connection,
    bars: &Arc<Bars>,
    store: &SharedStore,
    settings: &mut Settings,
) -> Result<Fetched, CliError> {
    let session = connection.session(&args.source, bars)?;
    let plan = SurveyPlan {
        repo: settings.repo.clone(),
        since: settings.since,
        until: settings.until,
        workflows: args.workflows.clone(),
        branch: args.branch.clone(),
        event: args.event.clone(),
        interruptible: true,
    };
    let config = &settings.config;
    let wanted = |runs: &[Run], default_branch: &str| prs_of_runs(runs, default_branch, config);
    let mut fetched = Fetched::default();
    match session.survey(
        store.clone(),
        settings.signatures.classifier(),
        &plan,
        &wanted,
    ) {
        Ok(summary) => {
            // GitHub's spelling from here on, in the store and in the report.
            if let Some(canonical) = summary.repo.clone() {
                settings.repo = canonical;
            }
            fetched.summary = Some(summary);
            let fingerprint = settings.signatures.fingerprint();
            let ancestry = AncestryPlan {
                repo: &settings.repo,
                since: settings.since,
                until: settings.until,
                fingerprint: &fingerprint,
                signatures: &settings.signatures.infos,
                config: &settings.config,
            };
            match fetch_ancestry(&session, store, &ancestry) {
                Ok(summary) => fetched.ancestry = Some(summary),
                Err(e) => fetched.failure = Some(e),
            }
        }
        Err(e) => fetched.failure = Some(e),
    }
    fetched.stats = Some(session.stats());
    Ok(fetched)
}

/// Requests, logs and rate limit; with `-v` peak memory and the survey's cost; the bisection's
/// requests.
/// `replay`: the requests went to the built-in fake GitHub, and the line says so (no one
/// should read its rate limit as their own).
fn say_closing_lines(global: &GlobalArgs, fetched: &Fetched, replay: bool) {
    let Some(stats) = &fetched.stats else { return };
    if global.quiet {
        return;
    }
    let mut line = closing_line(stats);
    if let Some(archive) = fetched.summary.as_ref().and_then(archive_note) {
        line.push_str(&format!(", {archive}"));
    }
    if global.verbose > 0
        && let Some(peak) = peak_memory()
    {
        line.push_str(&format!(", peak memory {}", human_bytes(peak)));
    }
    let to = if replay {
        "the replay's fake GitHub on 127.0.0.1: "
    } else {
        ""
    };
    eprintln!("flakestat: {to}{line}");
    if global.verbose > 0
        && let Some(summary) = &fetched.summary
    {
        eprintln!("flakestat: {}", cost_line(summary));
    }
    if let Some(a) = &fetched.ancestry {
        eprintln!("flakestat: {}", ancestry_line(a));
    }
}

/// The window's snapshot, analyzed and rendered.
fn write_report(store: &SharedStore, settings: &Settings) -> Result<(), CliError> {
    let snapshot = pipeline::load_snapshot(
        store,
        &settings.repo,
        settings.since,
        settings.until,
        &settings.signatures,
    )?;
    let data = analysis::analyze(&snapshot, &settings.signatures.infos, &settings.config);
    settings
        .output
        .write(|out, format, options| report::render(&data, format, options, out))
}
