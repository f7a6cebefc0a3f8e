//! `flakestat nightly`: what changed in CI since yesterday, for cron and for a GitHub issue.
//! Takes the store's lock, surveys the baseline and the period incrementally (the whole range is
//! re-listed with ETags, so runs that completed or were re-run since the last night are seen),
//! compares the period with the baseline (`analysis::nightly`), writes the report, keeps one
//! comment up to date (`fetch::comments`), and exits `ALERT` when `--fail-on` says so. Every
//! terminal and environment decision is made here.

use std::io::IsTerminal;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::Args;

use super::output::{FormatArg, resolve_format, use_color, write_output};
use super::source::SourceArgs;
use super::survey::{
    Bars, archive_note, closing_line, fetch_error, load_signatures, map_fork_runs, prs_of_runs,
};
use super::when::{Bound, parse_when};
use super::{CodedError, GlobalArgs};
use crate::analysis::AnalysisConfig;
use crate::analysis::nightly::{AlertOn, NightlyData, nightly};
use crate::exit;
use crate::fetch::comments::{CommentError, CommentTarget, Commenter, Posted};
use crate::fetch::{ClientConfig, Session, SurveyPlan};
use crate::model::{Repo, Run, Timestamp};
use crate::report::nightly::{MAX_COMMENT_BYTES, marker, render, render_comment};
use crate::report::{Format, RenderOptions};
use crate::store::lock::{LockError, StoreLock};
use crate::store::{Store, StoreError};

const EXAMPLES: &str = "\
Examples:
  flakestat nightly --repo NVIDIA/cuda-python
  flakestat nightly --repo NVIDIA/cuda-python --since 24h --baseline 14d --format json --output nightly.json
  flakestat nightly --repo NVIDIA/cuda-python --post-comment NVIDIA/cuda-python#2396 --fail-on new -q
  flakestat nightly --repo NVIDIA/cuda-python --post-comment NVIDIA/cuda-python#2396 --dry-run
  flakestat nightly --replay fixtures/cuda-python-flake --now 2026-07-17T00:00:00Z

The period is [--since, --now); the baseline is the span before it (--baseline 14d: the 14 days
before --since; a date or datetime is its start). A signature is new when the period hits it and
the baseline never did; rising when its period hits are improbable at the baseline's rate
(binomial tail below 0.01, at least 2 runs hit); fading when the period has no hit although the
baseline's rate predicted at least 3. See docs/nightly.md.

Exit codes: 0 done; 10 --fail-on found that kind of change (after writing and posting the report);
4 GitHub refused (credentials, no permission to comment, a locked issue); 5 no such repository or
issue; 6 rate limit spent (nothing posted); 7 network; 8 the store is locked by another run or
cannot be opened; 9 the store does not hold the whole range yet (report written, nothing posted;
--allow-incomplete accepts it); 3 bad input.";

#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct NightlyArgs {
    /// The repository, OWNER/NAME (with --replay: the dataset's by default).
    #[arg(long, value_name = "OWNER/NAME", required_unless_present = "replay")]
    pub repo: Option<String>,
    /// Start of the period (24h, 7d, a date or an RFC 3339 datetime); it ends at --now.
    #[arg(long, value_name = "WHEN", default_value = "24h")]
    pub since: String,
    /// The baseline before the period: a span back from --since (14d, 2w), or its start as a
    /// date or datetime.
    #[arg(long, value_name = "SPAN", default_value = "14d")]
    pub baseline: String,
    /// What "now" is, RFC 3339 (reproducible replays and tests). Default: the clock (with
    /// --replay: the dataset's present).
    #[arg(long, value_name = "RFC3339")]
    pub now: Option<String>,
    /// Keep one comment on this issue up to date (found by a hidden marker; created the first
    /// time, edited afterwards). Needs a token that may write issues.
    #[arg(long, value_name = "OWNER/REPO#N", conflicts_with = "offline")]
    pub post_comment: Option<String>,
    /// With --post-comment: print where the comment would go (stderr) and its body (stdout)
    /// instead of posting; the report goes only to --output.
    #[arg(long, requires = "post_comment")]
    pub dry_run: bool,
    /// Exit 10 when the report holds this kind of change: new (signature or unclassified
    /// failure), rising, or any (either; fading never alerts).
    #[arg(long, value_enum, value_name = "KIND")]
    pub fail_on: Option<FailOnArg>,
    /// How long to wait for the store's lock when another run holds it (30s, 5m, 0).
    #[arg(long, value_name = "DURATION", default_value = "0s")]
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
}

impl From<FailOnArg> for AlertOn {
    fn from(arg: FailOnArg) -> AlertOn {
        match arg {
            FailOnArg::New => AlertOn::New,
            FailOnArg::Rising => AlertOn::Rising,
            FailOnArg::Any => AlertOn::Any,
        }
    }
}

/// Takes the store's lock for `holder`, waiting up to `wait`; busy → `exit::STORE`.
pub(super) fn lock_store(
    cache_dir: &Path,
    wait: Duration,
    holder: &str,
) -> Result<StoreLock, CodedError> {
    StoreLock::acquire(cache_dir, wait, holder)
        .map_err(|e| CodedError::new(exit::STORE, e.to_string()))
}

/// The lock if free at once, `None` if another run holds it.
pub(super) fn try_lock_store(
    cache_dir: &Path,
    holder: &str,
) -> Result<Option<StoreLock>, CodedError> {
    match StoreLock::acquire(cache_dir, Duration::ZERO, holder) {
        Ok(lock) => Ok(Some(lock)),
        Err(LockError::Busy { .. }) => Ok(None),
        Err(e) => Err(CodedError::new(exit::STORE, e.to_string())),
    }
}

/// `0`, `45` (seconds), `30s`, `5m`, `1h`.
pub(super) fn parse_wait(text: &str) -> Option<Duration> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let n: u64 = number.parse().ok()?;
    let secs = match unit {
        "" | "s" => n,
        "m" => n.checked_mul(60)?,
        "h" => n.checked_mul(3600)?,
        _ => return None,
    };
    Some(Duration::from_secs(secs))
}

fn invalid(message: impl Into<String>) -> CodedError {
    CodedError::new(exit::INVALID_INPUT, message)
}

fn store_error(err: StoreError) -> CodedError {
    CodedError::new(exit::STORE, err.to_string())
}

fn comment_error(err: CommentError) -> CodedError {
    let code = match &err {
        CommentError::Locked { .. }
        | CommentError::Forbidden { .. }
        | CommentError::Unauthorized { .. } => exit::GITHUB_AUTH,
        CommentError::NotFound { .. } => exit::GITHUB_NOT_FOUND,
        CommentError::Unexpected { .. } | CommentError::Parse { .. } => exit::ERROR,
        CommentError::Fetch(_) => {
            let CommentError::Fetch(e) = err else {
                unreachable!("matched above")
            };
            return not_posted(fetch_error(e));
        }
    };
    CodedError::new(code, format!("{err}; nothing was posted"))
}

fn not_posted(err: CodedError) -> CodedError {
    CodedError::new(err.code, format!("{}; nothing was posted", err.message))
}

pub fn run(global: &GlobalArgs, args: NightlyArgs) -> anyhow::Result<u8> {
    let replay = super::source::Replay::load(args.source.replay.as_deref())?;
    let now: Timestamp = match (&args.now, &replay) {
        (Some(text), _) => chrono::DateTime::parse_from_rfc3339(text.trim())
            .map_err(|_| {
                invalid(format!(
                    "--now {text:?} is not an RFC 3339 datetime (2026-08-02T06:30:00Z)"
                ))
            })?
            .to_utc(),
        (None, Some(ds)) => ds.now(),
        (None, None) => super::when::now_to_the_second(),
    };
    let repo = match (&args.repo, &replay) {
        (Some(text), _) => Repo::parse(text).ok_or_else(|| {
            invalid(format!(
                "--repo {text:?} is not OWNER/NAME (for example NVIDIA/cuda-python)"
            ))
        })?,
        (None, Some(ds)) => ds.repo(),
        (None, None) => unreachable!("clap requires --repo without --replay"),
    };
    let period_since =
        parse_when(&args.since, Bound::Since, now).map_err(|e| invalid(e.to_string()))?;
    if period_since >= now {
        return Err(invalid(format!(
            "--since {:?} is not before --now ({now}): the period would be empty",
            args.since
        ))
        .into());
    }
    let baseline_since = parse_when(&args.baseline, Bound::Since, period_since)
        .ok()
        .filter(|b| *b < period_since)
        .ok_or_else(|| {
            invalid(format!(
                "--baseline {:?} is not a span before --since (14d, 2w, 72h) nor a date or datetime before it",
                args.baseline
            ))
        })?;
    let wait = parse_wait(&args.wait).ok_or_else(|| {
        invalid(format!(
            "--wait {:?} is not a duration (0, 30s, 5m, 1h)",
            args.wait
        ))
    })?;
    let target = match &args.post_comment {
        Some(text) => Some(CommentTarget::parse(text).ok_or_else(|| {
            invalid(format!(
                "--post-comment {text:?} is not OWNER/REPO#N (for example NVIDIA/cuda-python#2396)"
            ))
        })?),
        None => None,
    };

    let (classifier, infos) = load_signatures(args.source.signatures.as_deref())?;
    let file_config = super::config::load_config(args.source.config.as_deref(), Path::new("."))
        .map_err(|e| invalid(e.to_string()))?;
    let analysis_config = AnalysisConfig {
        pr_conventions: file_config.pr_conventions,
        matrix: file_config.matrix,
        focus: None,
        cost: file_config.cost,
    };

    // The API and the token, resolved once; posting uses the same.
    let _fake; // keeps the replay server alive through the survey and the posting
    let (api_url, token) = if args.source.offline {
        (String::new(), None)
    } else {
        match replay {
            Some(ds) => {
                let gh = ds.start()?;
                let url = gh.api_url();
                _fake = gh;
                // The fake accepts any token; one is needed to comment.
                (url, Some("flakestat-replay".to_string()))
            }
            None => args.source.github_api(global),
        }
    };
    if target.is_some() && !args.dry_run && token.is_none() {
        return Err(CodedError::new(
            exit::GITHUB_AUTH,
            "--post-comment needs a token that may write issues: set GITHUB_TOKEN or GH_TOKEN (or use --dry-run)",
        )
        .into());
    }

    let cache = args.source.cache_dir()?;
    let cache_dir = &cache.path;
    let lock = lock_store(cache_dir, wait, "flakestat nightly")?;
    if global.verbose > 0 {
        eprintln!("flakestat: holding {}", lock.path().display());
    }
    let store = Arc::new(Mutex::new(Store::open(cache_dir).map_err(store_error)?));

    if args.source.offline {
        crate::store::reclassify_stored(&store, &repo, classifier.as_ref()).map_err(store_error)?;
    } else {
        let show_progress = !global.quiet && std::io::stderr().is_terminal();
        let bars = Arc::new(Bars::new(show_progress, global.quiet, global.verbose));
        let config = args.source.client_config(api_url.clone(), token.clone());
        let session = Session::new(config, bars.clone()).map_err(fetch_error)?;
        // The whole range, not only the period: listings unchanged since last night cost a free
        // 304, and a run that completed or was re-run since then is fetched again.
        let plan = SurveyPlan {
            repo: repo.clone(),
            since: baseline_since,
            until: now,
            workflows: Vec::new(),
            branch: None,
            event: None,
            interruptible: true,
        };
        let wanted = |runs: &[Run], default_branch: &str| {
            prs_of_runs(runs, default_branch, &analysis_config)
        };
        let result = session
            .survey(store.clone(), classifier.clone(), &plan, &wanted)
            .and_then(|summary| {
                // Fork runs name no PR: map them (and fetch what their relevance needs) as the
                // survey's bisection step does, so they are not left out as unknown.
                map_fork_runs(
                    &session,
                    &store,
                    &repo,
                    baseline_since,
                    now,
                    &classifier.fingerprint(),
                    &infos,
                    &analysis_config,
                )?;
                Ok(summary)
            });
        bars.finish();
        if !global.quiet {
            let mut line = closing_line(&session.stats());
            if let Some(archive) = result.as_ref().ok().and_then(archive_note) {
                line.push_str(&format!(", {archive}"));
            }
            eprintln!("flakestat: {line}");
        }
        if let Err(err) = result {
            let coded = fetch_error(err);
            return Err(if target.is_some() {
                not_posted(coded)
            } else {
                coded
            }
            .into());
        }
    }

    let snapshot = store
        .lock()
        .expect("store lock")
        .load_snapshot(&repo, baseline_since, now, &classifier.fingerprint())
        .map_err(store_error)?;
    drop(store);
    drop(lock);
    let data = nightly(
        &snapshot,
        &infos,
        &analysis_config,
        baseline_since,
        period_since,
        now,
    );

    // The report first: a posting failure still leaves it written.
    let format = match resolve_format(args.source.format, args.source.output.as_deref()) {
        FormatArg::Table => Format::Table,
        FormatArg::Markdown => Format::Markdown,
        FormatArg::Json => Format::Json,
        FormatArg::Html => Format::Html,
    };
    let on_terminal = args.source.output.is_none() && std::io::stdout().is_terminal();
    let options = RenderOptions {
        color: args.source.output.is_none() && use_color(global.color),
        // `COLUMNS` when the shell exports it, as `survey` does.
        width: on_terminal
            .then(|| std::env::var("COLUMNS").ok()?.trim().parse().ok())
            .flatten(),
    };
    if !(args.dry_run && args.source.output.is_none()) {
        write_output(args.source.output.as_deref(), |out| {
            render(&data, format, &options, out)
        })?;
    }

    let incomplete =
        super::report::incomplete_exit(global, &data.completeness, args.allow_incomplete);
    if incomplete != exit::SUCCESS {
        if target.is_some() && !global.quiet {
            eprintln!("flakestat: nothing was posted: the report would be incomplete");
        }
        return Ok(incomplete);
    }
    if let Some(target) = &target {
        post(global, &args, target, &repo, &data, &api_url, token)?;
    }

    if let Some(on) = args.fail_on
        && data.alerts(on.into())
    {
        if !global.quiet {
            eprintln!(
                "flakestat: --fail-on {}: found; exiting {}",
                match on {
                    FailOnArg::New => "new",
                    FailOnArg::Rising => "rising",
                    FailOnArg::Any => "any",
                },
                exit::ALERT
            );
        }
        return Ok(exit::ALERT);
    }
    Ok(exit::SUCCESS)
}

/// Creates or updates the marked comment, or (`--dry-run`) says what it would do.
fn post(
    global: &GlobalArgs,
    args: &NightlyArgs,
    target: &CommentTarget,
    repo: &Repo,
    data: &NightlyData,
    api_url: &str,
    token: Option<String>,
) -> anyhow::Result<()> {
    let marker = marker(repo);
    let body = render_comment(data, &marker, MAX_COMMENT_BYTES);
    let mut config = ClientConfig::new(api_url, token);
    config.max_retries = args.source.max_retries;
    config.allow_insecure_http = args.source.allow_insecure_http;
    let commenter = Commenter::new(config).map_err(|e| not_posted(fetch_error(e)))?;
    if args.dry_run {
        let found = commenter.find(target, &marker).map_err(comment_error)?;
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
        eprintln!(
            "flakestat: dry run: {}; {} characters:",
            crate::report::sanitize::terminal(&what),
            body.chars().count()
        );
        write_output(None, |out| out.write_all(body.as_bytes()))?;
        return Ok(());
    }
    let posted = commenter
        .upsert(target, &marker, &body)
        .map_err(comment_error)?;
    if !global.quiet {
        let line = match posted {
            Posted::Created { id, html_url } => format!(
                "created comment {id} on {target}{}",
                html_url.map(|u| format!(": {u}")).unwrap_or_default()
            ),
            Posted::Updated { id, html_url } => format!(
                "updated comment {id} on {target}{}",
                html_url.map(|u| format!(": {u}")).unwrap_or_default()
            ),
            Posted::Unchanged { id, .. } => {
                format!("comment {id} on {target} already says this: left as it is")
            }
        };
        // The URL is GitHub's answer.
        eprintln!("flakestat: {}", crate::report::sanitize::terminal(&line));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fetch::FetchError;

    #[test]
    fn waits_parse() {
        assert_eq!(parse_wait("0"), Some(Duration::ZERO));
        assert_eq!(parse_wait("45"), Some(Duration::from_secs(45)));
        assert_eq!(parse_wait("30s"), Some(Duration::from_secs(30)));
        assert_eq!(parse_wait("5m"), Some(Duration::from_secs(300)));
        assert_eq!(parse_wait("1h"), Some(Duration::from_secs(3600)));
        for bad in ["", "m", "-1", "5 m", "2d", "1.5m"] {
            assert_eq!(parse_wait(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn comment_refusals_have_their_exit_codes() {
        let target = CommentTarget::parse("o/r#1").unwrap();
        let locked = CommentError::Locked {
            target: target.clone(),
            message: "Unable to create comment because issue is locked.".into(),
        };
        let coded = comment_error(locked);
        assert_eq!(coded.code, exit::GITHUB_AUTH);
        assert!(coded.message.contains("locked") && coded.message.contains("nothing was posted"));
        assert_eq!(
            comment_error(CommentError::NotFound { target }).code,
            exit::GITHUB_NOT_FOUND
        );
        let limited = CommentError::Fetch(FetchError::RateLimited {
            reset: chrono::Utc::now(),
        });
        let coded = comment_error(limited);
        assert_eq!(coded.code, exit::RATE_LIMITED);
        assert!(coded.message.contains("nothing was posted"));
    }
}
