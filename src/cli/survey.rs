//! `flakestat survey`: resolve settings, open the store, run the fetch session (or stay offline),
//! then analyze the store's snapshot and render the report. Progress bars and every terminal or
//! environment decision live here; the layers below get plain values.

use std::collections::BTreeSet;
use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::Args;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::output::{FormatArg, resolve_format, use_color, write_output};
use super::source::SourceArgs;
use super::when::{WHEN_FORMS, parse_window};
use super::{CodedError, GlobalArgs};
use crate::analysis::{self, AnalysisConfig};
use crate::exit;
use crate::fetch::{
    self, AncestrySummary, Classifier, FetchError, Progress, ProgressEvent, Session, StatsSnapshot,
    SurveyPlan,
};
use crate::model::{Repo, Run, SignatureInfo};
use crate::report::{self, Format, RenderOptions};
use crate::signatures;
use crate::store::{HISTORY_DAYS, Store, StoreError};

const EXAMPLES: &str = "\
Examples:
  flakestat survey --repo NVIDIA/cuda-python --since 2026-06-15
  flakestat survey --repo NVIDIA/cuda-python --since 7d --workflow ci.yml --branch main
  flakestat survey --repo NVIDIA/cuda-python --since 2026-06-01 --until 2026-06-30 -q --output june.md
  flakestat survey --repo NVIDIA/cuda-python --since 30d --offline --signatures ./signatures
  flakestat survey --replay fixtures/cuda-python-flake --since 2026-06-15

WHEN is a date (2026-06-15, UTC), an RFC 3339 datetime (2026-06-15T08:00:00Z) or a span back
from now (30m, 24h, 7d, 2w). --since is inclusive; a date given to --until means through the end
of that day.

The token comes from GITHUB_TOKEN, else GH_TOKEN, else `gh auth token`; without one, public
repositories work within GitHub's anonymous limit (60 requests an hour). The store lives in
--cache-dir, else FLAKESTAT_CACHE_DIR, else the platform cache folder; a repeated survey only
asks GitHub for what can have changed.";

#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct SurveyArgs {
    /// The repository, OWNER/NAME (with --replay: the dataset's by default).
    #[arg(long, value_name = "OWNER/NAME", required_unless_present = "replay")]
    pub repo: Option<String>,
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
    /// How long to wait for the store's lock when another run holds it (30s, 5m, 0).
    #[arg(long, value_name = "DURATION", default_value = "0s")]
    pub wait: String,
    #[command(flatten)]
    pub source: SourceArgs,
}

pub fn run(global: &GlobalArgs, args: SurveyArgs) -> anyhow::Result<u8> {
    // Replay: the dataset decides the repository and what "now" is.
    let replay = super::source::Replay::load(args.source.replay.as_deref())?;
    let now = replay
        .as_ref()
        .map_or_else(super::when::now_to_the_second, |ds| ds.now());
    let mut repo = match (&args.repo, &replay) {
        (Some(text), _) => Repo::parse(text).ok_or_else(|| {
            CodedError::new(
                exit::INVALID_INPUT,
                format!("--repo {text:?} is not OWNER/NAME (for example NVIDIA/cuda-python)"),
            )
        })?,
        (None, Some(ds)) => ds.repo(),
        (None, None) => unreachable!("clap requires --repo without --replay"),
    };
    let (since, until) = parse_window(&args.since, args.until.as_deref(), now)
        .map_err(|e| CodedError::new(exit::INVALID_INPUT, e.to_string()))?;
    debug_assert!(!WHEN_FORMS.is_empty());

    let (classifier, infos) = load_signatures(args.source.signatures.as_deref())?;
    let file_config =
        super::config::load_config(args.source.config.as_deref(), std::path::Path::new("."))
            .map_err(|e| CodedError::new(exit::INVALID_INPUT, e.to_string()))?;
    let analysis_config = AnalysisConfig {
        pr_conventions: file_config.pr_conventions,
        matrix: file_config.matrix,
        focus: None,
        cost: file_config.cost,
    };

    let cache = args.source.cache_dir()?;
    let cache_dir = &cache.path;
    // One writer per store: a nightly or another survey on it makes this one stop, clearly.
    let wait = super::nightly::parse_wait(&args.wait).ok_or_else(|| {
        CodedError::new(
            exit::INVALID_INPUT,
            format!("--wait {:?} is not a duration (0, 30s, 5m, 1h)", args.wait),
        )
    })?;
    let _lock = super::nightly::lock_store(cache_dir, wait, "flakestat survey")?;
    let store = Store::open(cache_dir).map_err(store_error)?;
    let store = Arc::new(Mutex::new(store));

    let show_progress = !global.quiet && std::io::stderr().is_terminal();
    let bars = Arc::new(Bars::new(show_progress, global.quiet, global.verbose));
    let mut fetch_failure: Option<FetchError> = None;
    let mut stats: Option<StatsSnapshot> = None;
    let mut ancestry_summary: Option<AncestrySummary> = None;
    let mut archive_line: Option<String> = None;
    let mut survey_summary: Option<fetch::SurveySummary> = None;

    if args.source.offline {
        let counts = store
            .lock()
            .expect("store lock")
            .counts(&repo)
            .map_err(store_error)?;
        if counts.runs == 0 && !global.quiet {
            eprintln!(
                "flakestat: the store in {} holds nothing for {repo}: run the survey once without --offline",
                cache_dir.display()
            );
        }
        crate::store::reclassify_stored(&store, &repo, classifier.as_ref()).map_err(store_error)?;
    } else {
        let _fake; // keeps the replay server alive through the survey
        let (api_url, token) = match replay {
            Some(ds) => {
                let gh = ds.start()?;
                let url = gh.api_url();
                _fake = gh;
                (url, None)
            }
            None => args.source.github_api(global),
        };
        let config = args.source.client_config(api_url, token);
        let session = Session::new(config, bars.clone()).map_err(fetch_error)?;
        let plan = SurveyPlan {
            repo: repo.clone(),
            since,
            until,
            workflows: args.workflows.clone(),
            branch: args.branch.clone(),
            event: args.event.clone(),
            interruptible: true,
        };
        let wanted = |runs: &[Run], default_branch: &str| {
            prs_of_runs(runs, default_branch, &analysis_config)
        };
        match session.survey(store.clone(), classifier.clone(), &plan, &wanted) {
            Ok(summary) => {
                // GitHub's spelling from here on, in the store and in the report.
                if let Some(canonical) = summary.repo.clone() {
                    repo = canonical;
                }
                archive_line = archive_note(&summary);
                survey_summary = Some(summary);
                let fingerprint = classifier.fingerprint();
                let ancestry = AncestryPlan {
                    repo: &repo,
                    since,
                    until,
                    fingerprint: &fingerprint,
                    signatures: &infos,
                    config: &analysis_config,
                };
                match fetch_ancestry(&session, &store, &ancestry) {
                    Ok(summary) => ancestry_summary = Some(summary),
                    Err(e) => fetch_failure = Some(e),
                }
            }
            Err(e) => fetch_failure = Some(e),
        }
        stats = Some(session.stats());
    }
    bars.finish();
    if let Some(stats) = stats
        && !global.quiet
    {
        let mut line = closing_line(&stats);
        if let Some(archive) = &archive_line {
            line.push_str(&format!(", {archive}"));
        }
        if global.verbose > 0
            && let Some(peak) = peak_memory()
        {
            line.push_str(&format!(", peak memory {}", human_bytes(peak)));
        }
        eprintln!("flakestat: {line}");
        if global.verbose > 0
            && let Some(summary) = &survey_summary
        {
            eprintln!("flakestat: {}", cost_line(summary));
        }
        if let Some(a) = ancestry_summary {
            eprintln!("flakestat: {}", ancestry_line(&a));
        }
    }
    if let Some(err) = fetch_failure {
        return Err(fetch_error(err).into());
    }

    let snapshot = store
        .lock()
        .expect("store lock")
        .load_snapshot(&repo, since, until, &classifier.fingerprint())
        .map_err(store_error)?;
    let data = analysis::analyze(&snapshot, &infos, &analysis_config);
    let format = match resolve_format(args.source.format, args.source.output.as_deref()) {
        FormatArg::Table => Format::Table,
        FormatArg::Markdown => Format::Markdown,
        FormatArg::Json => Format::Json,
        FormatArg::Html => Format::Html,
    };
    let options = RenderOptions {
        color: args.source.output.is_none() && use_color(global.color),
        width: if args.source.output.is_none() && std::io::stdout().is_terminal() {
            terminal_width()
        } else {
            None
        },
    };
    write_output(args.source.output.as_deref(), |out| {
        report::render(&data, format, &options, out)
    })?;
    Ok(exit::SUCCESS)
}

/// At most this many rounds of "analyze, fetch what the bisection lacks".
const ANCESTRY_ROUNDS: usize = 4;

/// What the bisection's fetch needs to know.
struct AncestryPlan<'a> {
    repo: &'a Repo,
    since: chrono::DateTime<chrono::Utc>,
    until: chrono::DateTime<chrono::Utc>,
    fingerprint: &'a str,
    signatures: &'a [SignatureInfo],
    config: &'a AnalysisConfig,
}

/// After the survey: the default branch's history over the window and its history, then the
/// fork points of the runs the bisection needs placed, then the changed files of the merges
/// that end up suspects. Each step reads the analysis of what the store now holds, so only what
/// matters is asked for, and nothing the store already knows.
fn fetch_ancestry(
    session: &Session,
    store: &Arc<Mutex<Store>>,
    plan: &AncestryPlan<'_>,
) -> Result<AncestrySummary, FetchError> {
    let mut summary = AncestrySummary::default();
    let default_branch = store
        .lock()
        .expect("store lock")
        .default_branch(plan.repo)?
        .unwrap_or_else(|| "main".to_string());
    let history = plan.since - chrono::TimeDelta::days(HISTORY_DAYS);
    session.fetch_mainline(
        store,
        plan.repo,
        &default_branch,
        history,
        plan.until,
        &mut summary,
    )?;
    let snapshot = |store: &Arc<Mutex<Store>>| {
        store.lock().expect("store lock").load_snapshot(
            plan.repo,
            plan.since,
            plan.until,
            plan.fingerprint,
        )
    };
    fetch_fork_pulls(
        session,
        store,
        plan,
        &snapshot(store)?,
        &default_branch,
        &mut summary,
    )?;
    // Files and fork points change what the analysis sees (a PR found to touch the paths has
    // its runs left out, which can move the first hit): ask again until nothing new is needed.
    let mut asked_heads = std::collections::BTreeSet::new();
    let mut asked_files = std::collections::BTreeSet::new();
    let mut asked_commits = std::collections::BTreeSet::new();
    for _ in 0..ANCESTRY_ROUNDS {
        let needs = analysis::bisect::needs(&snapshot(store)?, plan.signatures, plan.config);
        let heads: BTreeSet<_> = needs.heads.difference(&asked_heads).cloned().collect();
        let files: BTreeSet<u64> = needs
            .merge_files
            .difference(&asked_files)
            .copied()
            .collect();
        let commits: BTreeSet<_> = needs
            .commit_files
            .difference(&asked_commits)
            .cloned()
            .collect();
        if heads.is_empty() && files.is_empty() && commits.is_empty() {
            break;
        }
        session.fetch_fork_points(store, plan.repo, &default_branch, &heads, &mut summary)?;
        session.fetch_merge_files(store, plan.repo, &files, &mut summary)?;
        session.fetch_commit_files(store, plan.repo, &commits, &mut summary)?;
        asked_heads.extend(heads);
        asked_files.extend(files);
        asked_commits.extend(commits);
    }
    Ok(summary)
}

/// For a command that places nothing on merges (`nightly`): the fork runs of the window mapped
/// to their PRs through the PR listing, then the changed files those PRs' relevance needs, so
/// fork PRs count like any other PR there too. Returns the requests made.
#[allow(clippy::too_many_arguments)]
pub(super) fn map_fork_runs(
    session: &Session,
    store: &Arc<Mutex<Store>>,
    repo: &Repo,
    since: chrono::DateTime<chrono::Utc>,
    until: chrono::DateTime<chrono::Utc>,
    fingerprint: &str,
    signatures: &[SignatureInfo],
    config: &AnalysisConfig,
) -> Result<u64, FetchError> {
    let plan = AncestryPlan {
        repo,
        since,
        until,
        fingerprint,
        signatures,
        config,
    };
    let mut summary = AncestrySummary::default();
    let default_branch = store
        .lock()
        .expect("store lock")
        .default_branch(repo)?
        .unwrap_or_else(|| "main".to_string());
    let snapshot = |store: &Arc<Mutex<Store>>| {
        store
            .lock()
            .expect("store lock")
            .load_snapshot(repo, since, until, fingerprint)
    };
    fetch_fork_pulls(
        session,
        store,
        &plan,
        &snapshot(store)?,
        &default_branch,
        &mut summary,
    )?;
    let needs = analysis::bisect::needs(&snapshot(store)?, signatures, config);
    session.fetch_merge_files(store, repo, &needs.merge_files, &mut summary)?;
    Ok(summary.requests())
}

/// Fork runs name no PR: when some run of the window is one whose PR the store cannot name,
/// and the PR listing has not covered its time yet, list PRs (`fetch/pulls.rs`).
fn fetch_fork_pulls(
    session: &Session,
    store: &Arc<Mutex<Store>>,
    plan: &AncestryPlan<'_>,
    snapshot: &crate::model::Snapshot,
    default_branch: &str,
    summary: &mut AncestrySummary,
) -> Result<(), FetchError> {
    use analysis::prs::{ForkHeads, ForkMatch, needs_fork_mapping};
    let forks = ForkHeads::new(&snapshot.pulls);
    let mut needs = crate::fetch::PullHeadNeeds::default();
    for run in &snapshot.runs {
        if !needs_fork_mapping(run, default_branch, &plan.config.pr_conventions)
            || forks.find(run) != ForkMatch::NotListed
            || session.pull_heads_covered(store, plan.repo, run.created_at)?
        {
            continue;
        }
        if let (Some(repo), Some(branch)) = (&run.head_repository, &run.head_branch) {
            needs.add(repo, branch, run.created_at);
        }
    }
    if needs.heads.is_empty() {
        return Ok(());
    }
    session.fetch_pull_heads(store, plan.repo, &needs, summary)
}

fn ancestry_line(a: &AncestrySummary) -> String {
    format!(
        "bisection: {} requests ({} for the default branch's history, {} compare for fork points, {} fork points already known, {} for suspects' changed files, {} listing PRs for fork runs)",
        a.requests(),
        a.mainline_requests,
        a.compare_requests,
        a.fork_points_known,
        a.files_requests,
        a.pull_list_requests
    )
}

/// The PRs of runs that hit some signature (`analysis::prs::run_origin`): their changed files
/// decide whether a PR is related to a flake.
pub(super) fn prs_of_runs(
    hit_runs: &[Run],
    default_branch: &str,
    config: &AnalysisConfig,
) -> BTreeSet<u64> {
    hit_runs
        .iter()
        .filter_map(|r| analysis::prs::run_origin(r, default_branch, &config.pr_conventions).pr())
        .collect()
}

/// `-v`: the survey's requests per kind against the minimum (docs/survey.md, "The minimum").
pub(super) fn cost_line(summary: &fetch::SurveySummary) -> String {
    let cost = &summary.cost;
    let kinds: Vec<String> = cost
        .kinds()
        .iter()
        .map(|(name, k)| format!("{name} {}/{}", k.made, k.minimum))
        .collect();
    let mut line = format!(
        "survey requests against the minimum: {}; {}/{}",
        kinds.join(", "),
        cost.made(),
        cost.minimum()
    );
    if cost.minimum() > 0 {
        line.push_str(&format!(
            " ({:.3}×)",
            cost.made() as f64 / cost.minimum() as f64
        ));
    }
    if summary.runs_jobs_skipped > 0 {
        line.push_str(&format!(
            "; jobs of {} runs not needed (their workflow had nothing failed or re-run)",
            summary.runs_jobs_skipped
        ));
    }
    line
}

pub(super) fn closing_line(stats: &StatsSnapshot) -> String {
    let mut line = format!(
        "{} requests ({} not modified, {} retried), {} logs downloaded ({})",
        stats.requests,
        stats.not_modified,
        stats.retries,
        stats.logs_downloaded,
        human_bytes(stats.log_bytes)
    );
    match (stats.rate_limit_remaining, stats.rate_limit_limit) {
        (Some(left), Some(limit)) => line.push_str(&format!(", rate limit {left}/{limit} left")),
        (Some(left), None) => line.push_str(&format!(", rate limit {left} left")),
        _ => {}
    }
    line
}

/// What the closing line says of attempt archives and logs that were not their job's own;
/// `None` when no log needed an archive.
pub(super) fn archive_note(summary: &fetch::SurveySummary) -> Option<String> {
    if summary.logs_from_archive == 0 && summary.logs_not_own == 0 && summary.logs_unknown == 0 {
        return None;
    }
    let mut note = format!(
        "{} logs from {} attempt archives",
        summary.logs_from_archive, summary.archives_fetched
    );
    if summary.logs_not_own > 0 {
        note.push_str(&format!(
            " ({} served by GitHub for another attempt)",
            summary.logs_not_own
        ));
    }
    if summary.logs_unknown > 0 {
        note.push_str(&format!(", {} logs unknown", summary.logs_unknown));
    }
    Some(note)
}

/// The process's peak resident memory (Linux `VmHWM`), for `-v` and the benchmark.
fn peak_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn human_bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 30 => format!("{:.1} GiB", n as f64 / (1u64 << 30) as f64),
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / (1u64 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{n} B"),
    }
}

fn store_error(err: StoreError) -> CodedError {
    CodedError::new(exit::STORE, err.to_string())
}

pub(super) fn fetch_error(err: FetchError) -> CodedError {
    let code = match &err {
        FetchError::Unauthorized { .. } | FetchError::Forbidden { .. } => exit::GITHUB_AUTH,
        FetchError::NotFound(_) => exit::GITHUB_NOT_FOUND,
        FetchError::RateLimited { .. } | FetchError::SecondaryLimit(_) => exit::RATE_LIMITED,
        FetchError::Network(_) => exit::NETWORK,
        FetchError::Store(_) => exit::STORE,
        FetchError::Interrupted => exit::INTERRUPTED,
        FetchError::Config(_) => exit::INVALID_INPUT,
        FetchError::Unexpected { .. }
        | FetchError::Parse { .. }
        | FetchError::TooLarge { .. }
        | FetchError::Unavailable(_) => exit::ERROR,
        FetchError::Spool(_) => exit::STORE,
    };
    CodedError::new(code, err.to_string())
}

/// The signature set as the survey needs it: something that classifies, and what the analysis
/// must know of each signature. A broken signature file is invalid input.
pub(super) fn load_signatures(
    dir: Option<&std::path::Path>,
) -> anyhow::Result<(Arc<dyn Classifier>, Vec<SignatureInfo>)> {
    let source = signatures::resolve_dir(dir);
    let invalid =
        |e: signatures::SignatureError| CodedError::new(exit::INVALID_INPUT, e.to_string());
    let specs = source.load().map_err(invalid)?;
    let set = signatures::SignatureSet::compile(specs).map_err(invalid)?;
    let infos = set.info();
    Ok((Arc::new(set), infos))
}

/// `COLUMNS` when the shell exports it; comfy-table measures the terminal itself otherwise.
fn terminal_width() -> Option<u16> {
    std::env::var("COLUMNS").ok()?.trim().parse().ok()
}

/// Progress bars on stderr: runs listed, jobs fetched, logs downloaded. Hidden when stderr is
/// not a terminal or with `-q`.
pub(super) struct Bars {
    visible: bool,
    quiet: bool,
    verbose: u8,
    multi: MultiProgress,
    runs: ProgressBar,
    jobs: ProgressBar,
    logs: ProgressBar,
}

impl Bars {
    pub(super) fn new(visible: bool, quiet: bool, verbose: u8) -> Bars {
        let target = if visible {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        let multi = MultiProgress::with_draw_target(target);
        let spinner = ProgressStyle::with_template("{spinner} {prefix:>5} {pos} listed {msg}")
            .expect("valid template");
        let bar = ProgressStyle::with_template(
            "{spinner} {prefix:>5} [{bar:30}] {pos}/{len} eta {eta} {msg}",
        )
        .expect("valid template")
        .progress_chars("=> ");
        let runs = multi.add(
            ProgressBar::new_spinner()
                .with_style(spinner)
                .with_prefix("runs"),
        );
        let jobs = multi.add(
            ProgressBar::new(0)
                .with_style(bar.clone())
                .with_prefix("jobs"),
        );
        let logs = multi.add(ProgressBar::new(0).with_style(bar).with_prefix("logs"));
        if visible {
            runs.enable_steady_tick(Duration::from_millis(120));
        }
        Bars {
            visible,
            quiet,
            verbose,
            multi,
            runs,
            jobs,
            logs,
        }
    }

    /// A line above the bars, or on plain stderr when they are hidden.
    fn say(&self, line: String) {
        // Notes quote names, URLs and answers from outside.
        let line = crate::report::sanitize::terminal(&line);
        if self.visible {
            let _ = self.multi.println(line);
        } else if !self.quiet {
            eprintln!("{line}");
        }
    }

    pub(super) fn finish(&self) {
        for bar in [&self.runs, &self.jobs, &self.logs] {
            bar.finish_and_clear();
        }
        let _ = self.multi.clear();
    }
}

impl Progress for Bars {
    fn event(&self, event: ProgressEvent) {
        match event {
            ProgressEvent::RunsListed(n) => self.runs.set_position(n),
            ProgressEvent::JobsQueued(n) => self.jobs.inc_length(n),
            ProgressEvent::JobsDone => self.jobs.inc(1),
            ProgressEvent::LogsQueued(n) => self.logs.inc_length(n),
            ProgressEvent::LogDone { bytes } => {
                self.logs.inc(1);
                if bytes > 0 {
                    self.logs.set_message(format!("+{}", human_bytes(bytes)));
                }
            }
            ProgressEvent::Waiting { until, why } => {
                let text = format!("{why}: waiting until {} UTC", until.format("%H:%M:%S"));
                if self.visible {
                    self.runs.set_message(format!("({text})"));
                } else {
                    self.say(format!("flakestat: {text}"));
                }
            }
            ProgressEvent::Phase(phase) => {
                self.runs.set_message(format!("({phase})"));
                if !self.visible && self.verbose >= 1 {
                    self.say(format!("flakestat: {phase}"));
                }
            }
            ProgressEvent::Note(note) => self.say(format!("flakestat: {note}")),
            ProgressEvent::Detail(note) => {
                if self.verbose >= 1 {
                    self.say(format!("flakestat: {note}"));
                }
            }
            ProgressEvent::Request { status, url } => {
                if self.verbose >= 2 {
                    self.say(format!("flakestat: {status} GET {url}"));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_fetch_failure_has_its_exit_code() {
        let t = chrono::Utc::now();
        let cases = [
            (
                FetchError::Unauthorized {
                    status: 401,
                    message: "Bad credentials".into(),
                },
                exit::GITHUB_AUTH,
            ),
            (
                FetchError::Forbidden {
                    status: 403,
                    message: "no".into(),
                },
                exit::GITHUB_AUTH,
            ),
            (FetchError::NotFound("x".into()), exit::GITHUB_NOT_FOUND),
            (FetchError::RateLimited { reset: t }, exit::RATE_LIMITED),
            (FetchError::SecondaryLimit("x".into()), exit::RATE_LIMITED),
            (FetchError::Network("x".into()), exit::NETWORK),
            (FetchError::Interrupted, exit::INTERRUPTED),
        ];
        for (err, code) in cases {
            let text = err.to_string();
            assert_eq!(fetch_error(err).code, code, "{text}");
        }
    }

    #[test]
    fn the_closing_line_says_requests_logs_bytes_and_budget() {
        let stats = StatsSnapshot {
            requests: 120,
            not_modified: 10,
            retries: 2,
            logs_downloaded: 7,
            log_bytes: 3 << 20,
            rate_limit_remaining: Some(4880),
            rate_limit_limit: Some(5000),
        };
        assert_eq!(
            closing_line(&stats),
            "120 requests (10 not modified, 2 retried), 7 logs downloaded (3.0 MiB), rate limit 4880/5000 left"
        );
    }
}
