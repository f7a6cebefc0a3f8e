//! The steps of `survey` and `nightly` over the repositories a command covers (its [`Target`]):
//! one `--repo` is a scope of one, `--repo` repeated or `--org` several, and both go the same
//! way. One store, one client and one rate-limit budget for all of them, surveyed one after the
//! other, most recent work first (named repositories in the order given, then the owner's
//! newest push first), each with the same plan ([`ScopeSurvey::plan`]) and then what the
//! command asks after it (`survey`: the bisection's fetch; `nightly`: the same and every PR's
//! changed files in the range). The command analyses each repository on its own and chooses only at the end between one
//! repository's report and the combined one (`analysis::org`), and between their closing
//! lines. A survey stopped anywhere resumes across all of them: each repository's store state
//! resumes, and the owner's listing is kept with its ETags (a repeat costs nothing while it has
//! not changed). `report` reads the store alone, the same way for one repository and several
//! ([`load_stored`], a list of one or of several; [`report`]).

use super::fetch::{Connection, connect as connect_to};
use super::{SharedStore, Signatures, StoredWindow, open_store, reclassify};
use crate::analysis::org::OrgReport;
use crate::analysis::{self, AnalysisConfig, Completeness, ReportData};
use crate::cli::GlobalArgs;
use crate::cli::error::CliError;
use crate::cli::progress::{
    Bars, closing_line, cost_line, green_line, human_bytes, listing_line, peak_memory,
};
use crate::cli::repos::{Many, Target, same};
use crate::cli::source::{Replay, SourceArgs, StoredArgs, fill_gap_command};
use crate::fetch::prs_of_runs;
use crate::fetch::{
    AncestrySummary, FetchError, GreenLogs, GreenLogsFetch, OwnerListing, Session, StatsSnapshot,
    SurveyPlan, SurveySummary,
};
use crate::model::{Repo, Run, Snapshot, Timestamp};
use crate::report::View;
use crate::store::{Access, StoreLocation};

/// What follows one repository's survey (the bisection's fetch for `survey`; for `nightly`, the
/// same and every PR's changed files in the range), given the repository in GitHub's spelling; the bisection's requests,
/// when the step has them to say.
pub type AfterSurvey<'a> =
    &'a dyn Fn(&Session, &SharedStore, &Repo) -> Result<Option<AncestrySummary>, FetchError>;

/// The survey's own filters: `survey`'s `--workflow`, `--branch` and `--event` (`nightly`
/// surveys every run).
#[derive(Debug, Clone, Default)]
pub struct Filters {
    pub workflows: Vec<String>,
    pub branch: Option<String>,
    pub event: Option<String>,
}

/// What a survey over the command's repositories was asked to do, resolved by the command.
pub struct ScopeSurvey<'a> {
    pub target: &'a Target,
    pub since: Timestamp,
    pub until: Timestamp,
    pub filters: Filters,
    pub signatures: &'a Signatures,
    pub config: &'a AnalysisConfig,
    pub then: AfterSurvey<'a>,
    /// `--green-logs`: the green logs read after each repository's survey.
    pub green: GreenLogs,
}

impl ScopeSurvey<'_> {
    /// The survey's plan for one repository: the same for both commands and every scope.
    pub fn plan(&self, repo: &Repo) -> SurveyPlan {
        SurveyPlan {
            repo: repo.clone(),
            since: self.since,
            until: self.until,
            workflows: self.filters.workflows.clone(),
            branch: self.filters.branch.clone(),
            event: self.filters.event.clone(),
            interruptible: true,
        }
    }
}

/// What a survey over the command's repositories leaves: the store, the repositories surveyed
/// (in GitHub's spelling, in survey order; offline, one as asked and several as the store
/// holds them) and, unless offline, what fetching did.
pub struct Surveyed {
    pub store: SharedStore,
    pub repos: Vec<Repo>,
    pub fetched: Option<Fetched>,
}

impl Surveyed {
    /// The failure that stopped the fetch, for after the closing lines (what was collected is
    /// stored).
    pub fn failure(&mut self) -> Option<CliError> {
        self.fetched.as_mut().and_then(|f| f.failure.take())
    }
}

/// What fetching the repositories did.
pub struct Fetched {
    pub stats: StatsSnapshot,
    /// Each surveyed repository's survey, in survey order.
    pub summaries: Vec<SurveySummary>,
    /// What each repository's following step said (`survey`: its bisection's requests).
    pub after: Vec<AncestrySummary>,
    /// What `--green-logs` read of each repository (none at rate 0).
    pub green: Vec<GreenLogsFetch>,
    skipped: Vec<(Repo, &'static str)>,
    listing: Option<OwnerListing>,
    /// The error that stopped the fetch (the owner's listing, a survey, or the step after).
    pub failure: Option<CliError>,
}

/// The connection for the command's repositories: none with `--offline`; `--replay` serves
/// one repository only, so with several it is refused. `replay_token` as for
/// [`connect_to`].
pub fn connect(
    global: &GlobalArgs,
    source: &SourceArgs,
    target: &Target,
    replay: Option<Replay>,
    replay_token: Option<&str>,
) -> Result<Connection, CliError> {
    if matches!(target, Target::Many(_)) && source.replay.is_some() {
        return Err(CliError::Invalid(
            "--replay serves the one repository its dataset records: leave out --org and extra --repo"
                .into(),
        ));
    }
    if source.offline {
        return Ok(Connection::offline());
    }
    connect_to(source, replay, global, replay_token)
}

/// The command's repositories surveyed (with `--offline`, what the store holds for them
/// re-classified). A failure while fetching is kept in [`Fetched`], for after the closing
/// lines.
pub fn survey(
    global: &GlobalArgs,
    source: &SourceArgs,
    connection: &Connection,
    location: &StoreLocation,
    survey: &ScopeSurvey<'_>,
) -> Result<Surveyed, CliError> {
    let store = open_store(location)?;
    if source.offline {
        let repos = match survey.target {
            Target::One(repo) => vec![repo.clone()],
            Target::Many(many) => stored_repos(&store, many)?,
        };
        for repo in &repos {
            reclassify(&store, repo, survey.signatures)?;
        }
        return Ok(Surveyed {
            store,
            repos,
            fetched: None,
        });
    }
    let bars = Bars::for_command(global);
    let session = connection.session(source, &bars)?;
    let (repos, fetched) = fetch_all(&session, &store, survey, &bars);
    bars.finish();
    Ok(Surveyed {
        store,
        repos,
        fetched: Some(fetched),
    })
}

/// Each repository's report over `[since, until)`, from the store, in order.
pub fn analyze_all(
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

/// The scope's reports as its report shows them: one repository's as it is (the
/// single-repository shape), several combined (`analysis::org`).
pub enum Reports {
    One(ReportData),
    Org(OrgReport),
}

impl Reports {
    /// `reports`, one per repository of `target` in survey order, as `target`'s report (`None`:
    /// the replay's own repository, a scope of one).
    pub fn of(target: Option<&Target>, reports: Vec<ReportData>) -> Reports {
        match target {
            Some(Target::Many(many)) => {
                Reports::Org(analysis::org::combine(reports, many.org.clone()))
            }
            Some(Target::One(_)) | None => Reports::One(
                reports
                    .into_iter()
                    .next()
                    .expect("one repository, one report"),
            ),
        }
    }

    /// What `report::render` renders.
    pub fn view(&self) -> View<'_> {
        match self {
            Reports::One(data) => View::Repo(data),
            Reports::Org(org) => View::Org(org),
        }
    }

    /// What the store does not hold yet, over the scope's repositories.
    pub fn completeness(&self) -> &Completeness {
        match self {
            Reports::One(data) => &data.completeness,
            Reports::Org(org) => &org.combined.completeness,
        }
    }
}

/// Lists the owner's repositories (if `--org`), chooses, and surveys each (then what the
/// command fetches after a survey), one after the other, until the first failure: the
/// repositories surveyed in GitHub's spelling, and what fetching did.
fn fetch_all(
    session: &Session,
    store: &SharedStore,
    survey: &ScopeSurvey<'_>,
    bars: &Bars,
) -> (Vec<Repo>, Fetched) {
    let mut done = Fetched {
        stats: StatsSnapshot::default(),
        summaries: Vec::new(),
        after: Vec::new(),
        green: Vec::new(),
        skipped: Vec::new(),
        listing: None,
        failure: None,
    };
    let mut repos = Vec::new();
    if let Err(e) = fetch_each(session, store, survey, bars, &mut repos, &mut done) {
        done.failure = Some(e);
    }
    done.stats = session.stats();
    (repos, done)
}

fn fetch_each(
    session: &Session,
    store: &SharedStore,
    survey: &ScopeSurvey<'_>,
    bars: &Bars,
    repos: &mut Vec<Repo>,
    done: &mut Fetched,
) -> Result<(), CliError> {
    let chosen = match survey.target {
        Target::One(repo) => vec![repo.clone()],
        Target::Many(many) => {
            if let Some(owner) = &many.org {
                let pushed_since = (!many.include_inactive).then_some(survey.since);
                done.listing = Some(session.list_owner_repos(store, owner, pushed_since)?);
            }
            let listed = done
                .listing
                .as_ref()
                .map_or(&[][..], |l| l.repos.as_slice());
            let (chosen, skipped) = many.choose(listed, survey.since);
            done.skipped = skipped;
            chosen
        }
    };
    for (i, asked) in chosen.iter().enumerate() {
        if matches!(survey.target, Target::Many(_)) {
            bars.start_repo(asked, i + 1, chosen.len());
        }
        let Some(summary) = survey_one(session, store, survey, asked, bars)? else {
            done.skipped.push((asked.clone(), "not found"));
            continue;
        };
        let repo = summary.repo.clone().unwrap_or_else(|| asked.clone());
        done.summaries.push(summary);
        done.after.extend((survey.then)(session, store, &repo)?);
        if survey.green.rate > 0.0 {
            let mut read = GreenLogsFetch::default();
            let window = (survey.since, survey.until);
            let result = session.fetch_green_outcomes_listing_quiet(
                store,
                survey.signatures.classifier(),
                &repo,
                window,
                survey.green,
                &mut read,
            );
            done.green.push(read);
            result?;
        }
        repos.push(repo);
    }
    Ok(())
}

/// One repository's survey; `None` for a listed repository GitHub will not show Actions for
/// (said, and the rest go on). A named one that is not found is an error.
fn survey_one(
    session: &Session,
    store: &SharedStore,
    survey: &ScopeSurvey<'_>,
    asked: &Repo,
    bars: &Bars,
) -> Result<Option<SurveySummary>, FetchError> {
    let plan = survey.plan(asked);
    let config = survey.config;
    let wanted = |runs: &[Run], default_branch: &str| prs_of_runs(runs, default_branch, config);
    let named = match survey.target {
        Target::One(repo) => same(repo, asked),
        Target::Many(many) => many.named.iter().any(|r| same(r, asked)),
    };
    match session.survey(
        store.clone(),
        survey.signatures.classifier(),
        &plan,
        &wanted,
    ) {
        Ok(summary) => Ok(Some(summary)),
        Err(FetchError::NotFound(message)) if !named => {
            bars.say(format!("flakestat: skipped {asked}: {message}"));
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// The closing lines of a survey over several repositories: requests, logs and rate limit
/// (with `-v` peak memory), then on success with `-v` the cost against the minimum, what the
/// owner's listing found, and each repository skipped.
pub fn say_closing_lines(global: &GlobalArgs, many: &Many, fetched: &Fetched) {
    if global.quiet {
        return;
    }
    let mut line = closing_line(&fetched.stats);
    if global.verbose > 0
        && let Some(peak) = peak_memory()
    {
        line.push_str(&format!(", peak memory {}", human_bytes(peak)));
    }
    say!("flakestat: {line}");
    if !fetched.green.is_empty() {
        say!("flakestat: {}", green_line(&fetched.green));
    }
    if fetched.failure.is_some() {
        return;
    }
    if global.verbose > 0 {
        let mut summed = SurveySummary::default();
        for summary in &fetched.summaries {
            summed.cost.add(&summary.cost);
            summed.runs_jobs_skipped += summary.runs_jobs_skipped;
        }
        say!("flakestat: {}", cost_line(&summed));
    }
    let surveyed = fetched.summaries.len();
    if let (Some(owner), Some(listing)) = (&many.org, &fetched.listing) {
        let named = many.named.len().min(surveyed);
        let line = listing_line(owner, listing, surveyed - named, fetched.skipped.len());
        say!("flakestat: {line}");
    }
    if global.verbose > 0 {
        for (repo, why) in &fetched.skipped {
            say!("flakestat: skipped {repo}: {why}");
        }
    }
}

/// The named repositories, then what the store holds for `--org` (matching the pattern), in
/// GitHub's spelling as the survey stored it.
fn stored_repos(store: &SharedStore, many: &Many) -> Result<Vec<Repo>, CliError> {
    store.blocking(|store| {
        let stored = match &many.org {
            Some(owner) => store.repos_of_owner(owner)?,
            None => Vec::new(),
        };
        let mut repos = Vec::new();
        for repo in many.choose_stored(&stored) {
            repos.push(store.stored_repo(&repo)?.unwrap_or(repo));
        }
        Ok(repos)
    })
}

/// A scope's window as the store alone holds it, one way for every scope (one `--repo`, the
/// replay's own repository, `--repo` repeated or `--org`: a list of one or of several): each
/// repository's snapshot, classified with the current signatures, in the scope's order.
pub struct StoredScope {
    /// The window, the signatures, the analysis settings and where the store is.
    pub window: StoredWindow,
    pub snapshots: Vec<Snapshot>,
    /// Stored logs classified now (the signatures changed since they were stored), over every
    /// repository of the scope.
    pub classified: u64,
    /// What a fix-it survey command repeats of the flags given (`StoredArgs::survey_flags`).
    pub survey_flags: Vec<String>,
}

impl StoredScope {
    /// Each repository's snapshot analysed, in order; an incomplete report's fix-it command
    /// repeats the flags given.
    pub fn analyze(&self) -> Vec<ReportData> {
        self.snapshots
            .iter()
            .map(|snapshot| {
                let mut data =
                    analysis::analyze(snapshot, &self.window.signatures.infos, &self.window.config);
                data.fill_gap = Some(fill_gap_command(&data.survey_gap(), &self.survey_flags));
                data
            })
            .collect()
    }
}

/// `report` over its scope, from the store alone (`focus` is `--signature`): each repository
/// loaded and analysed the same way ([`load_stored`]), then shown as the scope's report (one
/// repository's as it is, several combined); `None` is `--replay` alone, its own repository.
pub fn report(
    global: &GlobalArgs,
    target: Option<&Target>,
    stored: &StoredArgs,
    focus: Option<&str>,
) -> Result<Reports, CliError> {
    let scope = load_stored(target, stored, focus)?;
    say_classified(global, scope.classified);
    Ok(Reports::of(target, scope.analyze()))
}

/// With `--verbose`, how many stored logs (over every repository of the scope) were classified
/// with the current signatures.
pub fn say_classified(global: &GlobalArgs, classified: u64) {
    if classified > 0 && global.verbose > 0 {
        say!("flakestat: classified {classified} stored logs with the current signatures");
    }
}

/// The scope's window from the store alone: resolves the flags, opens the store (never making
/// one), chooses the repositories (one as asked; the replay's own with `target` `None`;
/// several: the named ones and what the store holds for `--org`), checks that each was
/// surveyed, re-classifies what the signatures have not seen (in memory only when the store is
/// read-only) and loads each repository's window.
pub fn load_stored(
    target: Option<&Target>,
    stored: &StoredArgs,
    focus: Option<&str>,
) -> Result<StoredScope, CliError> {
    let window = StoredWindow::resolve(stored, focus)?;
    let (store, access) = super::open_stored(stored, &window, &survey_target(target, &window))?;
    let repos = match target {
        Some(Target::One(repo)) => vec![repo.clone()],
        Some(Target::Many(many)) => stored_repos(&store, many)?,
        None => vec![
            window
                .replay_repo
                .clone()
                .expect("clap requires --repo or --org without --replay"),
        ],
    };
    check_stored(&store, target, &repos, stored, &window)?;
    let until = window.until_for(&store, &repos)?;
    let read_only = access == Access::ReadOnly;
    let mut classified = 0;
    if !read_only {
        for repo in &repos {
            classified += reclassify(&store, repo, &window.signatures)?;
        }
    }
    let mut snapshots = Vec::new();
    for repo in &repos {
        let mut snapshot =
            super::load_snapshot(&store, repo, window.since, until, &window.signatures)?;
        if read_only {
            classified += super::classify_in_memory(&store, &mut snapshot, &window.signatures)?;
        }
        snapshots.push(snapshot);
    }
    if read_only {
        super::say_read_only(&store, classified);
    }
    Ok(StoredScope {
        window,
        snapshots,
        classified,
        survey_flags: stored.survey_flags(),
    })
}

/// The `--repo`/`--org` a survey of the scope names (for "no store at …, run `flakestat
/// survey …`").
fn survey_target(target: Option<&Target>, window: &StoredWindow) -> String {
    match target {
        Some(Target::One(repo)) => format!("--repo {repo}"),
        Some(Target::Many(many)) => match (&many.org, many.named.first()) {
            (Some(owner), _) => format!("--org {owner}"),
            (None, Some(repo)) => format!("--repo {repo}"),
            (None, None) => "--repo OWNER/NAME".to_string(),
        },
        None => match &window.replay_repo {
            Some(repo) => format!("--repo {repo}"),
            None => "--repo OWNER/NAME".to_string(),
        },
    }
}

/// Every repository a report covers must have been surveyed into this store: an error that
/// says which survey to run (`--since` as given) otherwise, naming the first repository
/// missing, or, when a scope of several finds none of its repositories, the whole scope.
fn check_stored(
    store: &SharedStore,
    target: Option<&Target>,
    repos: &[Repo],
    args: &StoredArgs,
    window: &StoredWindow,
) -> Result<(), CliError> {
    let location = &window.location;
    let since = &args.since;
    let apart = super::replays_kept_apart(args, window);
    let mut known = Vec::new();
    for repo in repos {
        let branch = store.blocking(|s| s.default_branch(repo))?;
        known.push(branch.is_some());
    }
    if let Some(Target::Many(many)) = target
        && !known.contains(&true)
    {
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
