//! `flakestat nightly`: what changed in CI since yesterday, for cron and for a GitHub issue. Opens
//! the store (no lock: other runs may write it meanwhile), surveys the baseline and the period
//! incrementally (the whole range is re-listed with ETags, so runs that completed or were re-run
//! since the last night are seen), compares the period with the baseline (`analysis::nightly`),
//! writes the report, keeps one comment up to date (`fetch::comments`), and exits `ALERT` when
//! `--fail-on` says so. The steps are the shared pipeline's; this file orders them. Over several
//! repositories (`--org`, `--repo` repeated) each is surveyed and compared with its own baseline,
//! and one report (and one comment) holds them all.

use clap::{ArgGroup, Args};

use super::GlobalArgs;
use super::error::CliError;
use super::output::{ReportOutput, write_output};
use super::pipeline::fetch::Connection;
use super::pipeline::scope::{self, Fetched, Filters, ScopeSurvey};
use super::pipeline::{self, SharedStore, Signatures};
use super::progress::{archive_note, closing_line, green_line};
use super::repos::{RepoArgs, Target};
use super::settings;
use super::source::{Replay, SourceArgs, fill_gap_command};
use super::when::{Bound, parse_when};
use crate::analysis::AnalysisConfig;
use crate::analysis::nightly::{AlertOn, NightlyData, NightlyMany, nightly};
use crate::exit;
use crate::fetch::comments::{CommentTarget, Commenter, Posted};
use crate::fetch::{AncestryPlan, fetch_for_nightly};
use crate::fetch::{AncestrySummary, ClientConfig, Session};
use crate::model::{Repo, Timestamp};
use crate::report::nightly::{MAX_COMMENT_BYTES, NightlyView, marker, render, render_comment};

const EXAMPLES: &str = "\
Examples:
  flakestat nightly --repo NVIDIA/cuda-python
  flakestat nightly --repo NVIDIA/cuda-python --since 24h --baseline 14d \\
      --format json --output nightly.json
  flakestat nightly --repo NVIDIA/cuda-python \\
      --post-comment NVIDIA/cuda-python#2396 --fail-on new -q
  flakestat nightly --repo NVIDIA/cuda-python \\
      --post-comment NVIDIA/cuda-python#2396 --dry-run
  flakestat nightly --replay fixtures/cuda-python-flake \\
      --until 2026-07-17T00:00:00Z
  flakestat nightly --org NVIDIA --repo-pattern 'cuda-*' \\
      --post-comment NVIDIA/ci-health#7 --fail-on new
  flakestat nightly --repo NVIDIA/cuda-python --fail-on new-flaky-test

The period is [--since, --until); the baseline is the span before it (--baseline 14d: the 14 days
before --since; a date or datetime is its start). A signature is new when the period hits it and
the baseline never did; rising when its period hits are improbable at the baseline's rate
(binomial tail below 0.01, at least 2 runs hit); fading when the period has no hit although the
baseline's rate predicted at least 3. A test is newly flaky when it failed and passed on the same
code in the period (re-run to green, green on the same commit, retried to a pass) and not in the
baseline. See docs/nightly.md.

Exit codes: 0 done; 10 --fail-on found that kind of change (after writing and posting the report);
4 GitHub refused (credentials, no permission to comment, a locked issue); 5 no such repository or
issue; 6 rate limit spent (nothing posted); 7 network; 8 the store is locked by another run or
cannot be opened; 9 the store does not hold the whole range yet (report written, nothing posted;
--allow-incomplete accepts it); 3 bad input.";

#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
#[command(group = ArgGroup::new("target").args(["repos", "org", "replay"]).required(true).multiple(true))]
pub struct NightlyArgs {
    /// The repositories (with --replay: the dataset's by default).
    #[command(flatten)]
    pub target: RepoArgs,
    /// Start of the period (24h, 7d, a date or an RFC 3339 datetime); it ends at --until.
    #[arg(long, value_name = "WHEN", default_value = "24h")]
    pub since: String,
    /// The baseline before the period: a span back from --since (14d, 2w), or its start as a
    /// date or datetime.
    #[arg(long, value_name = "SPAN", default_value = "14d")]
    pub baseline: String,
    /// End of the period, as "now" (a date means through the end of that day; reproducible
    /// replays and tests). Default: the clock (with --replay: the dataset's present).
    // `--now` was its name before `--until` was spelled the same in every command: kept, hidden.
    #[arg(long, value_name = "WHEN", alias = "now")]
    pub until: Option<String>,
    /// Keep one comment on this issue up to date (found by a hidden marker; created the first
    /// time, edited afterwards). Needs a token that may write issues.
    #[arg(long, value_name = "OWNER/REPO#N", conflicts_with = "offline")]
    pub post_comment: Option<String>,
    /// With --post-comment: print where the comment would go (stderr) and its body (stdout)
    /// instead of posting; the report goes only to --output.
    #[arg(long, requires = "post_comment")]
    pub dry_run: bool,
    /// Exit 10 when the report holds this kind of change: new (signature or unclassified
    /// failure), rising, any (either; fading never alerts), new-flaky-test (a test flaky in
    /// the period and not in the baseline), or bad-host (a host newly on the drain list of
    /// `report --hosts`).
    #[arg(long, value_enum, value_name = "KIND")]
    pub fail_on: Option<FailOnArg>,
    /// Ignored, kept for old scripts: the store has no lock to wait for (several runs may write
    /// it at once).
    #[arg(long, value_name = "DURATION", default_value = "0s", hide = true)]
    pub wait: String,
    /// Post and exit as usual even when the store does not hold the whole range yet (otherwise
    /// the report is written, nothing is posted, and the exit code is 9).
    #[arg(long)]
    pub allow_incomplete: bool,
    #[command(flatten)]
    pub source: SourceArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOnArg {
    New,
    Rising,
    Any,
    NewFlakyTest,
    BadHost,
}

impl From<FailOnArg> for AlertOn {
    fn from(arg: FailOnArg) -> AlertOn {
        match arg {
            FailOnArg::New => AlertOn::New,
            FailOnArg::Rising => AlertOn::Rising,
            FailOnArg::Any => AlertOn::Any,
            FailOnArg::NewFlakyTest => AlertOn::NewFlakyTest,
            FailOnArg::BadHost => AlertOn::BadHost,
        }
    }
}

/// The token the replay server is given to comment with (the fake accepts any).
const REPLAY_TOKEN: &str = "flakestat-replay";

/// Everything `nightly` decided before doing any work; `repo` is the one repository, or which
/// several.
struct Settings {
    replay: Option<Replay>,
    now: Timestamp,
    repo: Target,
    period_since: Timestamp,
    baseline_since: Timestamp,
    target: Option<CommentTarget>,
    signatures: Signatures,
    config: AnalysisConfig,
    output: ReportOutput,
}

impl Settings {
    fn resolve(global: &GlobalArgs, args: &NightlyArgs) -> Result<Settings, CliError> {
        let replay = Replay::load(args.source.replay.as_deref())?;
        let now = settings::end_by_now(
            settings::resolve_now(args.until.as_deref(), replay.as_ref())?,
            settings::resolve_now(None, replay.as_ref())?,
            replay.is_some(),
        );
        let repo = match args.target.target()? {
            Some(target) => target,
            None => Target::One(settings::resolve_repo(None, replay.as_ref())?),
        };
        let (baseline_since, period_since) = resolve_period(args, now)?;
        settings::parse_wait(&args.wait)?;
        let target = args.post_comment.as_deref().map(parse_target).transpose()?;
        let signatures = Signatures::load(args.source.signatures.as_deref())?;
        let config = settings::analysis_config(args.source.config.as_deref(), None)?;
        let output =
            ReportOutput::resolve(args.source.format, args.source.output.clone(), global.color)?;
        Ok(Settings {
            replay,
            now,
            repo,
            period_since,
            baseline_since,
            target,
            signatures,
            config,
            output,
        })
    }
}

/// The baseline's start and the period's start: `[baseline, since)` and `[since, now)`.
fn resolve_period(args: &NightlyArgs, now: Timestamp) -> Result<(Timestamp, Timestamp), CliError> {
    let period_since = parse_when(&args.since, Bound::Since, now)?;
    if period_since >= now {
        return Err(CliError::Invalid(format!(
            "--since {:?} is not before --until ({now}): the period would be empty",
            args.since
        )));
    }
    let baseline_since = parse_when(&args.baseline, Bound::Since, period_since)
        .ok()
        .filter(|b| *b < period_since)
        .ok_or_else(|| {
            CliError::Invalid(format!(
                "--baseline {:?} is not a span before --since (14d, 2w, 72h) nor a date or datetime before it",
                args.baseline
            ))
        })?;
    Ok((baseline_since, period_since))
}

/// `--post-comment OWNER/REPO#N`.
fn parse_target(text: &str) -> Result<CommentTarget, CliError> {
    CommentTarget::parse(text).ok_or_else(|| {
        CliError::Invalid(format!(
            "--post-comment {text:?} is not OWNER/REPO#N (for example NVIDIA/cuda-python#2396)"
        ))
    })
}

/// `--post-comment` needs a token unless `--dry-run`.
fn check_token(args: &NightlyArgs, posting: bool, connection: &Connection) -> Result<(), CliError> {
    if posting && !args.dry_run && connection.token.is_none() && connection.app.is_none() {
        return Err(CliError::NoToken(
            "--post-comment needs a token that may write issues: set GITHUB_TOKEN or GH_TOKEN (or use --dry-run)".into(),
        ));
    }
    Ok(())
}

/// One repository or several, one way: each surveyed over the whole range and compared with
/// its own baseline; only the view at the end ([`NightlyView`]) tells one repository's report
/// and comment from one over them all.
pub fn run(global: &GlobalArgs, args: NightlyArgs) -> Result<u8, CliError> {
    let mut settings = Settings::resolve(global, &args)?;
    // The API and the token, resolved once; posting uses the same.
    let connection = scope::connect(
        global,
        &args.source,
        &settings.repo,
        settings.replay.take(),
        Some(REPLAY_TOKEN),
    )?;
    check_token(&args, settings.target.is_some(), &connection)?;
    let compared =
        survey_and_compare(global, &args, &connection, &settings).map_err(|e| match e {
            CliError::Fetch { .. } if settings.target.is_some() => CliError::NotPosted(Box::new(e)),
            e => e,
        })?;
    // The report first: a posting failure still leaves it written.
    let write = !(args.dry_run && args.source.output.is_none());
    let target = settings.target.as_ref();
    let many;
    let view = match &settings.repo {
        Target::One(_) => NightlyView::Repo(compared.first().expect("one repository, one report")),
        Target::Many(scope) => {
            many = NightlyMany::new(compared, scope.org.clone());
            NightlyView::Org(&many)
        }
    };
    if write {
        settings
            .output
            .write(|out, format, options| render(view, format, options, out))?;
    }
    post_and_exit(global, &args, target, &connection, view)
}

/// How a night ends, for one repository or several: an incomplete report posts nothing and
/// exits 4 (unless allowed); else the comment (`comment`: its marker and body) is posted where
/// asked, and the exit is what `--fail-on` says of the alerts.
fn post_and_exit(
    global: &GlobalArgs,
    args: &NightlyArgs,
    target: Option<&CommentTarget>,
    connection: &Connection,
    view: NightlyView<'_>,
) -> Result<u8, CliError> {
    let incomplete = pipeline::incomplete_exit(global, &view.completeness(), args.allow_incomplete);
    if incomplete != exit::SUCCESS {
        if target.is_some() && !global.quiet {
            say!("flakestat: nothing was posted: the report would be incomplete");
        }
        return Ok(incomplete);
    }
    if let Some(target) = target {
        let marker = marker(view);
        let body = render_comment(view, &marker, MAX_COMMENT_BYTES);
        post(global, args, target, (&marker, &body), connection)?;
    }
    Ok(alert_exit(global, args.fail_on, view))
}

/// The survey of the whole range and what the comparison reads (fork runs' PRs, every PR's
/// changed files, the ancestry; or, offline, a re-classification),
/// the closing lines, then each repository's period compared with its baseline. The store is
/// closed before anything is posted.
fn survey_and_compare(
    global: &GlobalArgs,
    args: &NightlyArgs,
    connection: &Connection,
    settings: &Settings,
) -> Result<Vec<NightlyData>, CliError> {
    let resolved = args.source.store_location()?;
    let fingerprint = settings.signatures.fingerprint();
    // Before the analysis, everything it reads that the survey does not fetch: fork runs'
    // PRs, every PR's changed files in the range (whether its runs are related to a
    // signature), the default branch's history and what the bisection needs (the tests'
    // verdicts read it). Fetched here, a night's figures never depend on what an earlier
    // command happened to fetch: the same store gives the same report.
    let needs = |session: &Session, store: &SharedStore, repo: &Repo| {
        let plan = AncestryPlan {
            repo,
            since: settings.baseline_since,
            until: settings.now,
            fingerprint: &fingerprint,
            signatures: &settings.signatures.infos,
            config: &settings.config,
        };
        fetch_for_nightly(session, store, &plan).map(|_| None::<AncestrySummary>)
    };
    // The whole range, not only the period: listings unchanged since last night cost a free
    // 304, and a run that completed or was re-run since then is fetched again.
    let survey = ScopeSurvey {
        target: &settings.repo,
        since: settings.baseline_since,
        until: settings.now,
        filters: Filters::default(),
        signatures: &settings.signatures,
        config: &settings.config,
        then: &needs,
        green: args.source.green_logs(),
    };
    let mut surveyed = scope::survey(
        global,
        &args.source,
        connection,
        &resolved.location,
        &survey,
    )?;
    if let Some(fetched) = &surveyed.fetched {
        match &settings.repo {
            Target::One(_) => say_closing_line(global, fetched),
            Target::Many(many) => scope::say_closing_lines(global, many, fetched),
        }
    }
    if let Some(err) = surveyed.failure() {
        return Err(err);
    }
    let mut compared = Vec::new();
    for repo in &surveyed.repos {
        let snapshot = pipeline::load_snapshot(
            &surveyed.store,
            repo,
            settings.baseline_since,
            settings.now,
            &settings.signatures,
        )?;
        let mut data = nightly(
            &snapshot,
            &settings.signatures.infos,
            &settings.config,
            settings.baseline_since,
            settings.period_since,
            settings.now,
        );
        data.fill_gap = Some(fill_gap_command(
            &data.survey_gap(),
            &args.source.survey_flags(),
        ));
        compared.push(data);
    }
    Ok(compared)
}

/// One repository's closing line: requests, logs and rate limit, and the attempt archives of
/// a survey that went through.
fn say_closing_line(global: &GlobalArgs, fetched: &Fetched) {
    if global.quiet {
        return;
    }
    let mut line = closing_line(&fetched.stats);
    if fetched.failure.is_none()
        && let Some(archive) = fetched.summaries.first().and_then(archive_note)
    {
        line.push_str(&format!(", {archive}"));
    }
    say!("flakestat: {line}");
    if !fetched.green.is_empty() {
        say!("flakestat: {}", green_line(&fetched.green));
    }
}

/// `exit::ALERT` when `--fail-on` asked about a kind of change the report holds (`alerts`).
fn alert_exit(global: &GlobalArgs, fail_on: Option<FailOnArg>, view: NightlyView<'_>) -> u8 {
    let Some(on) = fail_on else {
        return exit::SUCCESS;
    };
    if !view.alerts(on.into()) {
        return exit::SUCCESS;
    }
    if !global.quiet {
        say!(
            "flakestat: --fail-on {}: found; exiting {}",
            match on {
                FailOnArg::New => "new",
                FailOnArg::Rising => "rising",
                FailOnArg::Any => "any",
                FailOnArg::NewFlakyTest => "new-flaky-test",
                FailOnArg::BadHost => "bad-host",
            },
            exit::ALERT
        );
    }
    exit::ALERT
}

/// Creates or updates the comment `marker` finds with `body`, or (`--dry-run`) says what it
/// would do.
fn post(
    global: &GlobalArgs,
    args: &NightlyArgs,
    target: &CommentTarget,
    (marker, body): (&str, &str),
    connection: &Connection,
) -> Result<(), CliError> {
    let mut config = ClientConfig::new(connection.api_url.as_str(), connection.token.clone());
    config.max_retries = args.source.max_retries;
    config.allow_insecure_http = args.source.allow_insecure_http;
    let commenter = Commenter::new(config).map_err(|e| CliError::NotPosted(Box::new(e.into())))?;
    if args.dry_run {
        return dry_run(&commenter, target, marker, body, connection.is_replay());
    }
    let posted = commenter.upsert(target, marker, body)?;
    if !global.quiet {
        // A replay posts to its fake GitHub: its comment URLs name github.com, where nothing
        // went, so they are not shown, and the line says where the comment went.
        let replay = connection.is_replay();
        let posted = match posted {
            Posted::Created { id, .. } if replay => Posted::Created { id, html_url: None },
            Posted::Updated { id, .. } if replay => Posted::Updated { id, html_url: None },
            other => other,
        };
        let on_fake = if replay {
            " (the replay's fake GitHub on 127.0.0.1; nothing reached github.com)"
        } else {
            ""
        };
        let line = match posted {
            Posted::Created { id, html_url } => format!(
                "created comment {id} on {target}{on_fake}{}",
                html_url.map(|u| format!(": {u}")).unwrap_or_default()
            ),
            Posted::Updated { id, html_url } => format!(
                "updated comment {id} on {target}{on_fake}{}",
                html_url.map(|u| format!(": {u}")).unwrap_or_default()
            ),
            Posted::Unchanged { id, .. } => {
                format!("comment {id} on {target}{on_fake} already says this: left as it is")
            }
        };
        // The URL is GitHub's answer.
        say!("flakestat: {}", crate::report::sanitize::terminal(&line));
    }
    Ok(())
}

/// `--dry-run`: where the comment would go (stderr) and its body (stdout).
fn dry_run(
    commenter: &Commenter,
    target: &CommentTarget,
    marker: &str,
    body: &str,
    replay: bool,
) -> Result<(), CliError> {
    let mut found = commenter.find(target, marker)?;
    if replay && let Some(c) = found.as_mut() {
        c.html_url = None; // the fake's URL names github.com, where nothing went
    }
    let target = if replay {
        format!("{target} (the replay's fake GitHub on 127.0.0.1)")
    } else {
        target.to_string()
    };
    let what = match found {
        Some(c) if c.body == body => format!(
            "would leave comment {} on {target} as it is (same body)",
            c.id
        ),
        Some(c) => format!(
            "would update comment {} on {target}{}",
            c.id,
            c.html_url.map(|u| format!(" ({u})")).unwrap_or_default()
        ),
        None => format!("would create a comment on {target}"),
    };
    say!(
        "flakestat: dry run: {}; {} characters:",
        crate::report::sanitize::terminal(&what),
        body.chars().count()
    );
    write_output(None, |out| out.write_all(body.as_bytes()))
}
