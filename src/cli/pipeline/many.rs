//! The steps of a command over several repositories (`--repo` repeated, `--org`): one store,
//! one client and one rate-limit budget for all of them, surveyed one after the other, most
//! recent work first (named repositories in the order given, then the owner's newest push
//! first); then each repository analysed on its own and the reports combined
//! (`analysis::org`). A survey stopped anywhere resumes across all of them: each repository's
//! store state resumes, and the owner's listing is kept with its ETags (a repeat costs nothing
//! while it has not changed). `survey` and `nightly` share the fetch ([`survey`]: each command
//! says what follows each repository's survey); `report` reads the store alone ([`report`]).

use super::fetch::{Connection, connect, prs_of_runs};
use super::{SharedStore, Signatures, StoredWindow, open_store, reclassify};
use crate::analysis::org::OrgReport;
use crate::analysis::{self, AnalysisConfig, ReportData};
use crate::cli::GlobalArgs;
use crate::cli::error::CliError;
use crate::cli::progress::{Bars, closing_line, cost_line, human_bytes, listing_line, peak_memory};
use crate::cli::repos::{Many, same};
use crate::cli::source::{SourceArgs, StoredArgs};
use crate::fetch::{FetchError, OwnerListing, Session, SurveyPlan, SurveySummary};
use crate::model::{Repo, Run, Timestamp};
use crate::store::{Access, StoreLocation};

/// What follows one repository's survey (the bisection's fetch for `survey`, the fork runs'
/// PRs for `nightly`), given the repository in GitHub's spelling.
pub type AfterSurvey<'a> = &'a dyn Fn(&Session, &SharedStore, &Repo) -> Result<(), FetchError>;

/// What a survey over several repositories was asked to do, resolved by the command.
pub struct ManySurvey<'a> {
    pub many: &'a Many,
    pub since: Timestamp,
    pub until: Timestamp,
    pub signatures: &'a Signatures,
    pub config: &'a AnalysisConfig,
    /// The survey's plan for one repository (the command's filters).
    pub plan: &'a dyn Fn(&Repo) -> SurveyPlan,
    pub then: AfterSurvey<'a>,
}

/// What a survey over several repositories leaves: the store and the repositories surveyed
/// (in GitHub's spelling, in survey order).
pub struct Surveyed {
    pub store: SharedStore,
    pub repos: Vec<Repo>,
}

/// The connection for several repositories: none with `--offline`; `--replay` serves one
/// repository only, so it is refused. `replay_token` as for [`connect`].
pub fn connect_many(
    global: &GlobalArgs,
    source: &SourceArgs,
    replay_token: Option<&str>,
) -> Result<Connection, CliError> {
    if source.replay.is_some() {
        return Err(CliError::Invalid(
            "--replay serves the one repository its dataset records: leave out --org and extra --repo"
                .into(),
        ));
    }
    if source.offline {
        return Ok(Connection::offline());
    }
    connect(source, None, global, replay_token)
}

/// Several repositories surveyed (with `--offline`, what the store holds for them
/// re-classified).
pub fn survey(
    global: &GlobalArgs,
    source: &SourceArgs,
    connection: &Connection,
    location: &StoreLocation,
    survey: &ManySurvey<'_>,
) -> Result<Surveyed, CliError> {
    let store = open_store(location)?;
    if source.offline {
        let repos = stored_repos(&store, survey.many)?;
        for repo in &repos {
            reclassify(&store, repo, survey.signatures)?;
        }
        return Ok(Surveyed { store, repos });
    }
    let bars = Bars::for_command(global);
    let session = connection.session(source, &bars)?;
    let fetched = fetch_all(&session, &store, survey, &bars);
    bars.finish();
    say_closing_lines(global, &session, survey.many, &fetched);
    let fetched = fetched?;
    Ok(Surveyed {
        store,
        repos: fetched.repos,
    })
}

/// Each surveyed repository's report over `[since, until)`, combined.
pub fn combine_reports(
    surveyed: &Surveyed,
    survey: &ManySurvey<'_>,
) -> Result<OrgReport, CliError> {
    let reports = analyze_all(
        &surveyed.store,
        &surveyed.repos,
        (survey.since, survey.until),
        survey.signatures,
        survey.config,
    )?;
    Ok(analysis::org::combine(reports, survey.many.org.clone()))
}

/// What fetching every repository did.
struct Fetched {
    /// GitHub's spelling of each repository surveyed, in survey order.
    repos: Vec<Repo>,
    skipped: Vec<(Repo, &'static str)>,
    listing: Option<OwnerListing>,
    /// The repositories' survey costs added up (for `-v`).
    summary: SurveySummary,
}

/// Lists the owner's repositories (if `--org`), chooses, and surveys each (then
/// what the command fetches after a survey), one after the other.
fn fetch_all(
    session: &Session,
    store: &SharedStore,
    survey: &ManySurvey<'_>,
    bars: &Bars,
) -> Result<Fetched, CliError> {
    let many = survey.many;
    let listing = match &many.org {
        Some(owner) => {
            let pushed_since = (!many.include_inactive).then_some(survey.since);
            Some(session.list_owner_repos(store, owner, pushed_since)?)
        }
        None => None,
    };
    let listed = listing.as_ref().map_or(&[][..], |l| l.repos.as_slice());
    let (chosen, skipped) = many.choose(listed, survey.since);
    let mut done = Fetched {
        repos: Vec::new(),
        skipped,
        listing,
        summary: SurveySummary::default(),
    };
    for (i, asked) in chosen.iter().enumerate() {
        bars.start_repo(asked, i + 1, chosen.len());
        let Some(summary) = survey_one(session, store, survey, asked, bars)? else {
            done.skipped.push((asked.clone(), "not found"));
            continue;
        };
        let repo = summary.repo.clone().unwrap_or_else(|| asked.clone());
        done.summary.cost.add(&summary.cost);
        done.summary.runs_jobs_skipped += summary.runs_jobs_skipped;
        (survey.then)(session, store, &repo)?;
        done.repos.push(repo);
    }
    Ok(done)
}

/// One repository's survey; `None` for a listed repository GitHub will not show Actions for
/// (said, and the rest go on). A named one that is not found is an error, as alone.
fn survey_one(
    session: &Session,
    store: &SharedStore,
    survey: &ManySurvey<'_>,
    asked: &Repo,
    bars: &Bars,
) -> Result<Option<SurveySummary>, FetchError> {
    let plan = (survey.plan)(asked);
    let config = survey.config;
    let wanted = |runs: &[Run], default_branch: &str| prs_of_runs(runs, default_branch, config);
    match session.survey(
        store.clone(),
        survey.signatures.classifier(),
        &plan,
        &wanted,
    ) {
        Ok(summary) => Ok(Some(summary)),
        Err(FetchError::NotFound(message)) if !survey.many.named.iter().any(|r| same(r, asked)) => {
            bars.say(format!("flakestat: skipped {asked}: {message}"));
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// Requests, logs and rate limit (with `-v` peak memory), then on success with `-v` the cost
/// against the minimum, what the owner's listing found, and each repository skipped.
fn say_closing_lines(
    global: &GlobalArgs,
    session: &Session,
    many: &Many,
    fetched: &Result<Fetched, CliError>,
) {
    if global.quiet {
        return;
    }
    let mut line = closing_line(&session.stats());
    if global.verbose > 0
        && let Some(peak) = peak_memory()
    {
        line.push_str(&format!(", peak memory {}", human_bytes(peak)));
    }
    eprintln!("flakestat: {line}");
    let Ok(done) = fetched else { return };
    if global.verbose > 0 {
        eprintln!("flakestat: {}", cost_line(&done.summary));
    }
    if let (Some(owner), Some(listing)) = (&many.org, &done.listing) {
        let named = many.named.len().min(done.repos.len());
        let line = listing_line(owner, listing, done.repos.len() - named, done.skipped.len());
        eprintln!("flakestat: {line}");
    }
    if global.verbose > 0 {
        for (repo, why) in &done.skipped {
            eprintln!("flakestat: skipped {repo}: {why}");
        }
    }
}

/// The named repositories, then what the store holds for `--org` (matching the pattern), in
/// GitHub's spelling as the survey stored it.
fn stored_repos(store: &SharedStore, many: &Many) -> Result<Vec<Repo>, CliError> {
    let store = store.lock().expect("store lock");
    let stored = match &many.org {
        Some(owner) => store.repos_of_owner(owner)?,
        None => Vec::new(),
    };
    let mut repos = Vec::new();
    for repo in many.choose_stored(&stored) {
        repos.push(store.stored_repo(&repo)?.unwrap_or(repo));
    }
    Ok(repos)
}

/// Each repository's report over the window, from the store.
fn analyze_all(
    store: &SharedStore,
    repos: &[Repo],
    (since, until): (Timestamp, Timestamp),
    signatures: &Signatures,
    config: &AnalysisConfig,
) -> Result<Vec<ReportData>, CliError> {
    repos
        .iter()
        .map(|repo| {
            let snapshot = super::load_snapshot(store, repo, since, until, signatures)?;
            Ok(analysis::analyze(&snapshot, &signatures.infos, config))
        })
        .collect()
}

/// `report` over several repositories, from the store alone: the named ones and what the store
/// holds for `--org`, each re-classified (as `load_from_store` does for one), analysed, and
/// combined. `focus` is `--signature`.
pub fn report(
    many: &Many,
    stored: &StoredArgs,
    focus: Option<&str>,
) -> Result<OrgReport, CliError> {
    let window = StoredWindow::resolve(stored, focus)?;
    let target = match (&many.org, many.named.first()) {
        (Some(owner), _) => format!("--org {owner}"),
        (None, Some(repo)) => format!("--repo {repo}"),
        (None, None) => "--repo OWNER/NAME".to_string(),
    };
    let (store, access) = super::open_stored(stored, &window, &target)?;
    let repos = stored_repos(&store, many)?;
    check_stored(&store, many, &repos, stored, &window)?;
    let until = window.until_for(&store, &repos)?;
    let read_only = access == Access::ReadOnly;
    if !read_only {
        for repo in &repos {
            reclassify(&store, repo, &window.signatures)?;
        }
    }
    let mut reports = Vec::new();
    let mut classified = 0;
    for repo in &repos {
        let mut snapshot =
            super::load_snapshot(&store, repo, window.since, until, &window.signatures)?;
        if read_only {
            classified += super::classify_in_memory(&store, &mut snapshot, &window.signatures)?;
        }
        let mut data = analysis::analyze(&snapshot, &window.signatures.infos, &window.config);
        data.survey_flags = stored.survey_flags();
        reports.push(data);
    }
    if read_only {
        super::say_read_only(&store, classified);
    }
    Ok(analysis::org::combine(reports, many.org.clone()))
}

/// Every repository a report covers must have been surveyed into this store: an error that
/// says which survey to run (`--since` as given) otherwise.
fn check_stored(
    store: &SharedStore,
    many: &Many,
    repos: &[Repo],
    args: &StoredArgs,
    window: &StoredWindow,
) -> Result<(), CliError> {
    let location = &window.location;
    let since = &args.since;
    let apart = super::replays_kept_apart(args, window);
    let mut known = Vec::new();
    for repo in repos {
        let branch = store.lock().expect("store lock").default_branch(repo)?;
        known.push(branch.is_some());
    }
    if !known.contains(&true) {
        let what = match &many.org {
            Some(owner) => owner.clone(),
            None => repos
                .iter()
                .map(|r| r.to_string())
                .collect::<Vec<_>>()
                .join(", "),
        };
        return Err(CliError::NothingStored(format!(
            "the store in {} holds nothing for {what}: run `flakestat survey` with the same --repo / --org, --since {since}{} first{apart}",
            location.describe(),
            args.survey_flags()
                .iter()
                .map(|f| format!(" {f}"))
                .collect::<String>(),
        )));
    }
    match repos.iter().zip(&known).find(|(_, k)| !**k) {
        Some((missing, _)) => Err(CliError::NothingStored(format!(
            "the store in {} holds nothing for {missing}: run `{}` first{apart}",
            location.describe(),
            args.survey_command(&format!("--repo {missing}")),
        ))),
        None => Ok(()),
    }
}
