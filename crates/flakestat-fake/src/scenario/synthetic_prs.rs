//! Pull requests for the [`synthetic`](super::synthetic) dataset, as a busy repository has them:
//! a share of the CI runs are `pull_request` runs of PRs (a few pushes each), and a share of
//! those PRs come from forks. A fork PR's runs carry `pull_requests: []`, their head repository
//! is the fork and their head branch the fork's (often `main` or `patch-1`, names other forks
//! use too), as GitHub serves them (/work/shared/GITHUB.md, "Fork PRs"); the survey can only
//! name their PR through `GET /pulls?state=all`. Same-repository PRs are squash-merged into the
//! next `main` commit after their last push; half the fork PRs are merged the same way, the
//! others stay open (a stale bot touches those idle for 14 days). Some PRs change the test a flake lives in ([`FLAKY_PATH`]): their runs are
//! "related" to a signature whose `paths` name it.
//!
//! Also the PR labeler that runs on PR events only ([`Dataset::add_pr_bot_workflow`]).

use std::collections::VecDeque;

use chrono::TimeDelta;

use super::super::dataset::{Dataset, FakeFile, FakePull, bot_run};
use flakestat_core::model::{Run, Sha, Timestamp};

/// The file some synthetic PRs change: a signature whose `paths` match it finds those PRs
/// related.
pub const FLAKY_PATH: &str = "tests/flaky/test_timing.py";

/// An open PR without a push for this long is labelled stale by a bot (which updates it).
const STALE_DAYS: i64 = 14;

/// The number of the first synthetic PR.
pub const FIRST_PR: u64 = 101;

/// Whether item `i` is among the `percent` % picked evenly (exactly ⌊n × percent / 100⌋ of
/// the first n).
pub(super) fn spread(i: usize, percent: u32) -> bool {
    let p = percent.min(100) as usize;
    (i + 1) * p / 100 > i * p / 100
}

/// One PR being built.
struct Draft {
    number: u64,
    title: String,
    user: String,
    head_ref: String,
    /// The fork's `owner/name`, or `None` for a branch of the repository itself.
    fork: Option<String>,
    created_at: Timestamp,
    /// Each push: when, and its commit.
    pushes: Vec<(Timestamp, Sha)>,
    base_sha: Sha,
    to_merge: bool,
    merged: Option<(Timestamp, Sha)>,
    files: Vec<FakeFile>,
}

/// What a PR run needs from the plan.
pub(super) struct PrRun {
    pub number: u64,
    pub title: String,
    pub head_ref: String,
    pub fork: Option<String>,
    pub sha: Sha,
    /// The commit's parent: the PR's previous push, or `main` for the first.
    pub parent: Sha,
}

/// Plans the PRs of a synthetic dataset run by run.
pub(super) struct PrPlan {
    repo_name: String,
    pushes_per_pr: usize,
    fork_percent: u32,
    pr_runs: usize,
    forks: usize,
    drafts: Vec<Draft>,
    /// PRs whose last push is done, waiting for the next `main` commit to merge them.
    to_merge: VecDeque<usize>,
}

impl PrPlan {
    pub fn new(repo_name: &str, pushes_per_pr: usize, fork_percent: u32) -> PrPlan {
        PrPlan {
            repo_name: repo_name.to_string(),
            pushes_per_pr: pushes_per_pr.max(1),
            fork_percent,
            pr_runs: 0,
            forks: 0,
            drafts: Vec::new(),
            to_merge: VecDeque::new(),
        }
    }

    /// The next PR run, created at `created` while `main` is at `main_head`.
    pub fn next_run(&mut self, created: Timestamp, main_head: &Sha) -> PrRun {
        let k = self.pr_runs / self.pushes_per_pr;
        let push = self.pr_runs % self.pushes_per_pr;
        self.pr_runs += 1;
        if push == 0 {
            let number = FIRST_PR + k as u64;
            let fork = spread(k, self.fork_percent);
            let (user, head_ref, fork_repo, to_merge, flaky) = if fork {
                let f = self.forks;
                self.forks += 1;
                let user = format!("contributor{f}");
                // Fork branches: often the fork's own `main`, or a name many forks share.
                let branch = match f % 3 {
                    0 => "main".to_string(),
                    1 => "patch-1".to_string(),
                    _ => format!("fix-{f}"),
                };
                let repo = format!("{user}/{}", self.repo_name);
                (user, branch, Some(repo), f.is_multiple_of(2), f % 4 == 1)
            } else {
                (
                    format!("dev{}", k % 5),
                    format!("feature/{k}"),
                    None,
                    true,
                    k.is_multiple_of(6),
                )
            };
            let mut files = vec![file(&format!("src/module{}.rs", k % 7))];
            if flaky {
                files.push(file(FLAKY_PATH));
            }
            self.drafts.push(Draft {
                number,
                title: format!("Change {k} to module {}", k % 7),
                user,
                head_ref,
                fork: fork_repo,
                created_at: created - TimeDelta::minutes(5),
                pushes: Vec::new(),
                base_sha: main_head.clone(),
                to_merge,
                merged: None,
                files,
            });
        }
        let index = self.drafts.len() - 1;
        let draft = &mut self.drafts[index];
        let parent = draft
            .pushes
            .last()
            .map_or_else(|| main_head.clone(), |(_, sha)| sha.clone());
        let sha = Sha(super::super::routes::fake_sha(&format!(
            "synthetic pr {} push {push}",
            draft.number
        )));
        draft.pushes.push((created, sha.clone()));
        if push + 1 == self.pushes_per_pr && draft.to_merge {
            self.to_merge.push_back(index);
        }
        PrRun {
            number: draft.number,
            title: draft.title.clone(),
            head_ref: draft.head_ref.clone(),
            fork: draft.fork.clone(),
            sha,
            parent,
        }
    }

    /// The `main` commit `sha` made at `at`: the squash merge of the oldest PR waiting, if any;
    /// its commit message and changed files.
    pub fn merge_into(&mut self, sha: &Sha, at: Timestamp) -> Option<(String, Vec<String>)> {
        let index = self.to_merge.pop_front()?;
        let draft = &mut self.drafts[index];
        draft.merged = Some((at, sha.clone()));
        Some((
            format!("{} (#{})", draft.title, draft.number),
            draft.files.iter().map(|f| f.filename.clone()).collect(),
        ))
    }

    /// The PRs as the fake serves them, as of `now`. A merged PR was last updated when it
    /// merged; an open one 10 minutes after its last push (its labeler runs come within a
    /// minute of each push), or, once 14 days passed without a push, when a stale bot labelled
    /// it then: an old open PR is listed among recent ones, far from its runs.
    pub fn pulls(self, now: Timestamp) -> Vec<FakePull> {
        self.drafts
            .into_iter()
            .map(|d| {
                let (last_push, head_sha) = d.pushes.last().cloned().expect("a PR has a push");
                let (merged_at, merge_commit_sha) = match d.merged {
                    Some((at, sha)) => (Some(at), Some(sha)),
                    None => (None, None),
                };
                FakePull {
                    number: d.number,
                    title: d.title,
                    state: if merged_at.is_some() {
                        "closed"
                    } else {
                        "open"
                    }
                    .into(),
                    user: d.user,
                    base_ref: "main".into(),
                    head_ref: d.head_ref,
                    head_sha,
                    base_sha: d.base_sha,
                    created_at: d.created_at,
                    updated_at: merged_at.unwrap_or_else(|| {
                        let stale = last_push + TimeDelta::days(STALE_DAYS);
                        if stale < now {
                            stale
                        } else {
                            last_push + TimeDelta::minutes(10)
                        }
                    }),
                    closed_at: merged_at,
                    merged_at,
                    merge_commit_sha,
                    draft: false,
                    locked: false,
                    files: d.files,
                    head_repo: d.fork,
                }
            })
            .collect()
    }
}

fn file(name: &str) -> FakeFile {
    FakeFile {
        filename: name.to_string(),
        status: "modified".into(),
        previous_filename: None,
        additions: 3,
        deletions: 1,
    }
}

impl Dataset {
    /// Adds a PR labeler that runs on PR events only, making `percent` % of all runs its own
    /// (one job each, green at attempt 1, no log): each `pull_request` run of the dataset gets
    /// its share of labeler runs, a few seconds after it, with its head commit, branch, PR
    /// and head repository (a fork PR's labeler runs name no PR either). Without PR runs, the
    /// same as [`Dataset::add_bot_workflow`]. Deterministic.
    pub fn add_pr_bot_workflow(&mut self, percent: u32) {
        let percent = u64::from(percent.min(99));
        let mut bases: Vec<Run> = self
            .runs
            .iter()
            .filter(|r| r.run.event == "pull_request".into())
            .map(|r| r.run.clone())
            .collect();
        if bases.is_empty() {
            return self.add_bot_workflow(percent as u32);
        }
        bases.sort_by_key(|r| (r.created_at, r.id));
        let bots = (self.runs.len() as u64 * percent).div_ceil(100 - percent);
        let repo = self.repo.clone();
        let mut nth_of_base = 0u64;
        let mut last_base = usize::MAX;
        for k in 0..bots {
            let b = (k * bases.len() as u64 / bots) as usize;
            if b != last_base {
                (last_base, nth_of_base) = (b, 0);
            }
            let base = &bases[b];
            let created = base.created_at + TimeDelta::seconds(5 + 11 * nth_of_base as i64);
            nth_of_base += 1;
            self.runs.push(bot_run(&repo, k, base, created));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{SyntheticSpec, synthetic};

    #[test]
    fn fork_prs_are_a_fifth_and_their_runs_name_no_pr_as_on_github() {
        let ds = synthetic(&SyntheticSpec {
            runs: 200,
            pr_percent: 50,
            pushes_per_pr: 2,
            fork_percent: 20,
            bot_percent: 70,
            ..SyntheticSpec::default()
        });
        let forks: Vec<_> = ds.pulls.iter().filter(|p| p.head_repo.is_some()).collect();
        assert_eq!(ds.pulls.len(), 50);
        assert_eq!(forks.len(), 10);
        for fake in &ds.runs {
            let run = &fake.run;
            if !run.event.as_str().starts_with("pull_request") {
                assert!(run.pull_requests.is_empty() && run.head_repository.is_none());
                continue;
            }
            // Every PR run (the labeler's too) is its PR's: named, or by the fork's head.
            let pull = match run.pull_requests.as_slice() {
                [n] => ds.pull(n.0).expect("a listed PR"),
                [] => ds
                    .pulls
                    .iter()
                    .find(|p| {
                        p.head_repo == run.head_repository
                            && Some(&p.head_ref) == run.head_branch.as_ref()
                    })
                    .expect("a fork run's PR, by head repository and branch"),
                more => panic!("{more:?}"),
            };
            assert_eq!(pull.head_repo.is_some(), run.pull_requests.is_empty());
            assert!(pull.created_at <= run.created_at && run.created_at <= pull.updated_at);
            assert_eq!(pull.head_ref, run.head_branch.clone().unwrap());
        }
        // Half the fork PRs merged, into the main commit a run after their last push.
        let merged = forks.iter().filter(|p| p.merged_at.is_some()).count();
        assert_eq!(merged, 5);
        for p in ds.pulls.iter().filter(|p| p.merged_at.is_some()) {
            let sha = p.merge_commit_sha.as_ref().unwrap();
            let commit = ds.commit(&sha.0).expect("the merge commit is on main");
            assert!(commit.message.ends_with(&format!("(#{})", p.number)));
        }
        // The labeler makes 70 % of the runs.
        let bots = ds
            .runs
            .iter()
            .filter(|r| r.run.workflow_id.0 == crate::BOT_WORKFLOW_ID)
            .count();
        assert_eq!(bots * 100 / ds.runs.len(), 70);
    }
}
