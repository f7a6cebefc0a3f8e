//! The ancestry rounds, after a survey: what the bisection and the PR relevance need that the
//! listing does not bring (the default branch's history, fork points, fork PRs, suspects'
//! changed files; for `nightly`, every PR's changed files in the range too). Each round reads
//! the analysis of what the store now holds, so only what matters is asked for.

use std::collections::BTreeSet;

use super::{AncestrySummary, FetchError, PullHeadNeeds, Session, store_error};
use flakestat_core::analysis::{self, AnalysisConfig};
use flakestat_core::model::{PrNumber, Repo, Run, SignatureInfo, Snapshot};
use flakestat_store::{HISTORY_DAYS, StoreHandle};

/// The PRs of runs that hit some signature (`analysis::prs::run_origin`): their changed files
/// decide whether a PR is related to a flake.
pub fn prs_of_runs(
    hit_runs: &[Run],
    default_branch: &str,
    config: &AnalysisConfig,
) -> BTreeSet<PrNumber> {
    hit_runs
        .iter()
        .filter_map(|r| analysis::prs::run_origin(r, default_branch, &config.pr_conventions).pr())
        .collect()
}

/// At most this many rounds of "analyze, fetch what the bisection lacks" (fork points come a
/// round before the suspects' files).
const ANCESTRY_ROUNDS: usize = 6;

/// What the bisection's fetch needs to know.
pub struct AncestryPlan<'a> {
    pub repo: &'a Repo,
    pub since: chrono::DateTime<chrono::Utc>,
    pub until: chrono::DateTime<chrono::Utc>,
    pub fingerprint: &'a str,
    pub signatures: &'a [SignatureInfo],
    pub config: &'a AnalysisConfig,
}

/// After the survey: the default branch's history over the window and its history, then the
/// fork points of the runs the bisection needs placed, then the changed files of the merges
/// that end up suspects. Each step reads the analysis of what the store now holds, so only what
/// matters is asked for, and nothing the store already knows.
pub fn fetch_ancestry(
    session: &Session,
    store: &StoreHandle,
    plan: &AncestryPlan<'_>,
) -> Result<AncestrySummary, FetchError> {
    fetch_what_analysis_needs(session, store, plan, false)
}

/// Before `nightly` analyses: what [`fetch_ancestry`] fetches (the default branch's history,
/// fork PRs, fork points, suspects' files), and the changed files of every PR with a run in the
/// range. Its figures are counts of runs, and whether a PR's run is left out of a signature's
/// runs (related) depends on those files: fetched before the analysis, not by whichever earlier
/// command happened to need them, the same store gives the same night twice. Returns the
/// requests made.
pub fn fetch_for_nightly(
    session: &Session,
    store: &StoreHandle,
    plan: &AncestryPlan<'_>,
) -> Result<u64, FetchError> {
    fetch_what_analysis_needs(session, store, plan, true).map(|s| s.requests())
}

fn fetch_what_analysis_needs(
    session: &Session,
    store: &StoreHandle,
    plan: &AncestryPlan<'_>,
    every_pr_s_files: bool,
) -> Result<AncestrySummary, FetchError> {
    let mut summary = AncestrySummary::default();
    let default_branch = store
        .blocking(|s| s.default_branch(plan.repo))
        .map_err(store_error)?
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
    let snapshot = |store: &StoreHandle| {
        store
            .blocking(|s| s.load_snapshot(plan.repo, plan.since, plan.until, plan.fingerprint))
            .map_err(store_error)
    };
    fetch_fork_pulls(
        session,
        store,
        plan,
        &snapshot(store)?,
        &default_branch,
        &mut summary,
    )?;
    if every_pr_s_files {
        // Fork runs have their PR now; no later step adds a PR to the range.
        let prs =
            analysis::prs::window_prs_without_files(&snapshot(store)?, &plan.config.pr_conventions);
        session.fetch_merge_files(store, plan.repo, &prs, &mut summary)?;
    }
    // Files and fork points change what the analysis sees (a PR found to touch the paths has
    // its runs left out, which can move the first hit): ask again until nothing new is needed.
    let mut asked_heads = BTreeSet::new();
    let mut asked_files = BTreeSet::new();
    let mut asked_commits = BTreeSet::new();
    for _ in 0..ANCESTRY_ROUNDS {
        let needs = analysis::bisect::needs(&snapshot(store)?, plan.signatures, plan.config);
        let heads: BTreeSet<_> = needs.heads.difference(&asked_heads).cloned().collect();
        let counting: BTreeSet<PrNumber> = needs
            .counting_files
            .difference(&asked_files)
            .copied()
            .collect();
        // Fork points (and what decides which runs count) first: until the runs around a first
        // hit are placed, most merges before it look possible, and their files would be asked
        // for in vain (a test's bisection, with fewer hits than a signature's, lists dozens
        // before and a handful after).
        let files: BTreeSet<PrNumber> = if heads.is_empty() {
            needs
                .merge_files
                .difference(&asked_files)
                .copied()
                .chain(counting.iter().copied())
                .collect()
        } else {
            counting
        };
        let commits: BTreeSet<_> = if heads.is_empty() {
            needs
                .commit_files
                .difference(&asked_commits)
                .cloned()
                .collect()
        } else {
            BTreeSet::new()
        };
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

/// Fork runs name no PR: when some run of the window is one whose PR the store cannot name,
/// and the PR listing has not covered its time yet, list PRs (`pulls.rs`).
fn fetch_fork_pulls(
    session: &Session,
    store: &StoreHandle,
    plan: &AncestryPlan<'_>,
    snapshot: &Snapshot,
    default_branch: &str,
    summary: &mut AncestrySummary,
) -> Result<(), FetchError> {
    use analysis::prs::{ForkHeads, ForkMatch, needs_fork_mapping};
    let forks = ForkHeads::new(&snapshot.pulls);
    let mut needs = PullHeadNeeds::default();
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
