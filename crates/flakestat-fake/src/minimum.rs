//! The fewest requests any fresh survey of a window of a fake dataset needs, per kind
//! (docs/survey.md, "The minimum"), computed from the dataset alone: what the fake serves and
//! how it pages, never what the client did. The survey benchmark and the cost tests hold the
//! client's requests against it.

use std::collections::{BTreeMap, BTreeSet};

use super::dataset::{Dataset, FakeLog, FakePull, FakeRun};
use flakestat_core::model::{Conclusion, Run, Timestamp, WorkflowId};

/// Items per page, as the client asks for them.
const PER_PAGE: u64 = 100;
/// How far before the window merged PRs are listed (`store::HISTORY_DAYS`).
const LOOKBACK_DAYS: i64 = 14;
/// A PR may still get runs shortly after it closed (as `analysis::prs` allows).
const AFTER_CLOSE_MINUTES: i64 = 60;

/// The minimum per kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SurveyMinimum {
    /// `GET /repos/{o}/{r}`.
    pub repo: u64,
    /// ⌈runs / 100⌉ run-list pages (a client knowing where each 1,000 runs end).
    pub list: u64,
    /// ⌈jobs / 100⌉ pages (every attempt) of each run of a workflow with a failed or re-run run.
    pub jobs: u64,
    /// One request per failed job execution.
    pub logs: u64,
    /// Pages of the merged-PR listing (`state=closed&base=<default>`, newest updated first)
    /// that hold a PR updated within the lookback; at least one.
    pub merged_pulls: u64,
    /// Pages of `GET /pulls?state=all` (newest updated first) down to the one holding the PR of
    /// the last fork run that the merged listing did not name; 0 without such runs.
    pub fork_pulls: u64,
    /// ⌈files / 100⌉ pages of each PR with a run that hit a signature (its relevance is read).
    pub files: u64,
}

impl SurveyMinimum {
    /// The minimum for a survey of `[since, until)` into an empty store. `hit` says whether a
    /// failed job's log text hits some signature.
    pub fn of(
        ds: &Dataset,
        since: Timestamp,
        until: Timestamp,
        hit: &dyn Fn(&str) -> bool,
    ) -> SurveyMinimum {
        let runs: Vec<&FakeRun> = ds
            .runs
            .iter()
            .filter(|r| r.run.created_at >= since && r.run.created_at < until)
            .collect();
        let noisy: BTreeSet<WorkflowId> = runs
            .iter()
            .filter(|r| r.run.run_attempt > 1 || r.run.conclusion != Some(Conclusion::Success))
            .map(|r| r.run.workflow_id)
            .collect();
        let jobs = runs
            .iter()
            .filter(|r| noisy.contains(&r.run.workflow_id))
            .map(|r| (r.all_jobs().len() as u64).div_ceil(PER_PAGE).max(1))
            .sum();
        let logs = runs
            .iter()
            .flat_map(|r| r.all_jobs())
            .filter(|j| j.is_failed())
            .count() as u64;

        // The merged-PR listing, and the PRs it stores (merged within the lookback).
        let lookback = since - chrono::TimeDelta::days(LOOKBACK_DAYS);
        let closed = newest_updated_first(
            ds.pulls
                .iter()
                .filter(|p| p.state == "closed" && p.base_ref == ds.default_branch),
        );
        let recent = closed.iter().filter(|p| p.updated_at >= lookback).count() as u64;
        let merged_pulls = recent.div_ceil(PER_PAGE).max(1);
        let stored: BTreeSet<u64> = closed
            .iter()
            .filter(|p| p.merged_at.is_some_and(|m| m >= lookback))
            .map(|p| p.number)
            .collect();

        // Fork runs name no PR: the state=all listing down to the deepest PR still unnamed.
        let all = newest_updated_first(ds.pulls.iter());
        let position: BTreeMap<u64, u64> = all
            .iter()
            .enumerate()
            .map(|(i, p)| (p.number, i as u64))
            .collect();
        let deepest = runs
            .iter()
            .filter(|r| is_fork_run(ds, &r.run))
            .filter_map(|r| fork_pull(ds, &r.run))
            .filter(|n| !stored.contains(n))
            .filter_map(|n| position.get(&n).copied())
            .max();
        let fork_pulls = deepest.map_or(0, |i| i / PER_PAGE + 1);

        // The PRs whose relevance a figure reads: those of runs with a hit.
        let hit_prs: BTreeSet<u64> = runs
            .iter()
            .filter(|r| {
                r.all_jobs().iter().any(|j| {
                    j.is_failed()
                        && matches!(ds.logs.get(&j.id), Some(FakeLog::Text(text)) if hit(text))
                })
            })
            .filter_map(|r| {
                r.run.pull_requests.first().map(|n| n.0).or_else(|| {
                    is_fork_run(ds, &r.run)
                        .then(|| fork_pull(ds, &r.run))
                        .flatten()
                })
            })
            .collect();
        let files = hit_prs
            .iter()
            .filter_map(|n| ds.pull(*n))
            .map(|p| (p.files.len() as u64).div_ceil(PER_PAGE).max(1))
            .sum();

        SurveyMinimum {
            repo: 1,
            list: (runs.len() as u64).div_ceil(PER_PAGE).max(1),
            jobs,
            logs,
            merged_pulls,
            fork_pulls,
            files,
        }
    }

    /// Both PR listings.
    pub fn pulls(&self) -> u64 {
        self.merged_pulls + self.fork_pulls
    }

    pub fn total(&self) -> u64 {
        self.repo + self.list + self.jobs + self.logs + self.pulls() + self.files
    }
}

/// As the fake pages `sort=updated&direction=desc`.
fn newest_updated_first<'a>(pulls: impl Iterator<Item = &'a FakePull>) -> Vec<&'a FakePull> {
    let mut pulls: Vec<&FakePull> = pulls.collect();
    pulls.sort_by_key(|p| std::cmp::Reverse((p.updated_at, p.number)));
    pulls
}

/// A PR event's run from another repository that names no PR.
fn is_fork_run(ds: &Dataset, run: &Run) -> bool {
    run.event.as_str().starts_with("pull_request")
        && run.pull_requests.is_empty()
        && run
            .head_repository
            .as_deref()
            .is_some_and(|h| !h.eq_ignore_ascii_case(&ds.repo.to_string()))
}

/// The PR a fork run belongs to: same head repository and branch, open when the run started.
fn fork_pull(ds: &Dataset, run: &Run) -> Option<u64> {
    let repo = run.head_repository.as_deref()?;
    let branch = run.head_branch.as_deref()?;
    ds.pulls
        .iter()
        .filter(|p| {
            p.head_repo
                .as_deref()
                .is_some_and(|h| h.eq_ignore_ascii_case(repo))
                && p.head_ref == branch
                && p.created_at <= run.created_at
                && p.closed_at.is_none_or(|c| {
                    run.created_at <= c + chrono::TimeDelta::minutes(AFTER_CLOSE_MINUTES)
                })
        })
        .map(|p| p.number)
        .next()
}
