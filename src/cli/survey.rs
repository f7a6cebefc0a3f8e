//! `flakestat survey`: resolve the settings once, open the store (no lock: other runs may write
//! it meanwhile), survey the repositories of the scope (one `--repo`, several, or `--org`; or
//! stay offline), then analyze each one's snapshot and write the report: one repository's, or
//! the combined one. The steps are the shared pipeline's (`pipeline::scope`); this file only
//! orders them and says what happened.

use clap::{ArgGroup, Args};

use super::GlobalArgs;
use super::error::CliError;
use super::output::ReportOutput;
use super::pipeline::scope::{self, Fetched, Filters, Reports, ScopeSurvey};
use super::pipeline::{SharedStore, Signatures};
use super::progress::{
    ancestry_line, archive_note, closing_line, cost_line, green_line, human_bytes, peak_memory,
};
use super::repos::{RepoArgs, Target};
use super::settings;
use super::source::{FixIt, Replay, SourceArgs, fill_gap_command};
use super::when::parse_window;
use crate::analysis::AnalysisConfig;
use crate::exit;
use crate::fetch::Session;
use crate::fetch::{AncestryPlan, fetch_ancestry};
use crate::model::{Repo, Timestamp};
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
    /// With --offline: exit 0 even when the store lacks part of the window (the report's
    /// first line still says what is missing). Without it such a report exits 9, as `report`.
    #[arg(long, requires = "offline")]
    pub allow_incomplete: bool,
    #[command(flatten)]
    pub source: SourceArgs,
}

/// Everything `survey` decided before doing any work; `repo` is the one repository surveyed,
/// or which several.
struct Settings {
    replay: Option<Replay>,
    repo: Target,
    since: Timestamp,
    until: Timestamp,
    signatures: Signatures,
    config: AnalysisConfig,
    output: ReportOutput,
}

impl Settings {
    fn resolve(global: &GlobalArgs, args: &SurveyArgs) -> Result<Settings, CliError> {
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

/// One repository or several, one way: connect, survey each repository (then the bisection's
/// fetch), say what happened, analyse each; only the report chooses between one repository's
/// and the combined one.
pub fn run(global: &GlobalArgs, args: SurveyArgs) -> Result<u8, CliError> {
    let mut settings = Settings::resolve(global, &args)?;
    let connection = scope::connect(
        global,
        &args.source,
        &settings.repo,
        settings.replay.take(),
        None,
    )?;
    let resolved = args.source.store_location()?;
    let location = &resolved.location;
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
        fetch_ancestry(session, store, &plan).map(Some)
    };
    let survey = ScopeSurvey {
        target: &settings.repo,
        since: settings.since,
        until: settings.until,
        filters: Filters {
            workflows: args.workflows.clone(),
            branch: args.branch.clone(),
            event: args.event.clone(),
        },
        signatures: &settings.signatures,
        config: &settings.config,
        then: &ancestry,
        green: args.source.green_logs(),
    };
    let mut surveyed = scope::survey(global, &args.source, &connection, location, &survey)?;
    if let Some(fetched) = &surveyed.fetched {
        match &settings.repo {
            Target::One(_) => say_closing_lines(global, fetched, args.source.replay.is_some()),
            Target::Many(many) => scope::say_closing_lines(global, many, fetched),
        }
    }
    if let Some(err) = surveyed.failure() {
        return Err(err);
    }
    if let (Target::One(repo), None) = (&settings.repo, &surveyed.fetched) {
        say_if_nothing_stored(global, &surveyed.store, repo, location)?;
    }
    let mut reports = scope::analyze_all(
        &surveyed.store,
        &surveyed.repos,
        (settings.since, settings.until),
        &settings.signatures,
        &settings.config,
    )?;
    // An incomplete report's fix-it survey repeats the flags given (the store, the signatures).
    for data in &mut reports {
        data.fill_gap = Some(fill_gap_command(
            &data.survey_gap(),
            &args.source.survey_flags(),
        ));
    }
    let reports = Reports::of(Some(&settings.repo), reports);
    write_report(&reports, &settings)?;
    if resolved.replay_store && !global.quiet {
        say_where_the_replay_went(&args, location);
    }
    if args.source.offline {
        // Read from the store alone, as `report` reads it: a window it lacks part of is said,
        // and exits as `report` does.
        return Ok(super::pipeline::incomplete_exit(
            global,
            reports.completeness(),
            args.allow_incomplete,
        ));
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
    say!(
        "flakestat: the replay's store is in {} (kept apart from real data); `{command}` reads it again",
        location.describe()
    );
}

/// `--offline` over one repository the store knows nothing of: said, with what to run.
fn say_if_nothing_stored(
    global: &GlobalArgs,
    store: &SharedStore,
    repo: &Repo,
    location: &StoreLocation,
) -> Result<(), CliError> {
    let counts = store.blocking(|s| s.counts(repo))?;
    if counts.runs == 0 && !global.quiet {
        say!(
            "flakestat: the store in {} holds nothing for {}: run the survey once without --offline",
            location.describe(),
            repo
        );
    }
    Ok(())
}

/// The closing lines of one repository's survey: requests, logs and rate limit; with `-v`
/// peak memory and the survey's cost; the bisection's requests.
/// `replay`: the requests went to the built-in fake GitHub, and the line says so (no one
/// should read its rate limit as their own).
fn say_closing_lines(global: &GlobalArgs, fetched: &Fetched, replay: bool) {
    if global.quiet {
        return;
    }
    let summary = fetched.summaries.first();
    let mut line = closing_line(&fetched.stats);
    if let Some(archive) = summary.and_then(archive_note) {
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
    say!("flakestat: {to}{line}");
    if global.verbose > 0
        && let Some(summary) = summary
    {
        say!("flakestat: {}", cost_line(summary));
    }
    if let Some(a) = fetched.after.first() {
        say!("flakestat: {}", ancestry_line(a));
    }
    if !fetched.green.is_empty() {
        say!("flakestat: {}", green_line(&fetched.green));
    }
}

/// The repositories' reports, rendered: one repository's as it is, several combined.
fn write_report(reports: &Reports, settings: &Settings) -> Result<(), CliError> {
    settings
        .output
        .write(|out, format, options| report::render(reports.view(), format, options, out))
}
