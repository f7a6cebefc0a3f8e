//! Which pull request a run belongs to, if any, and whether a run is a "main" run.
//!
//! A run belongs to PR N when its event is `pull_request`/`pull_request_target` (from
//! `pull_requests[]`, which is empty for forks, else from the head branch), or when its branch
//! follows a mirror convention: `pull-request/<N>` (PR branches pushed by a bot so CI runs as
//! `push`, as NVIDIA/cuda-python does) or `gh-readonly-queue/<base>/pr-<N>-<sha>` (merge queue).
//! The conventions are regexes with a named group `pr`, configurable in `flakestat.toml`.

use regex::Regex;

use crate::model::Run;

/// Branch-name conventions that name a PR: each regex has a named group `pr`.
#[derive(Debug, Clone)]
pub struct PrConventions {
    pub branch_patterns: Vec<Regex>,
}

/// The built-in conventions.
pub const DEFAULT_BRANCH_PATTERNS: &[&str] = &[
    r"^pull-request/(?P<pr>\d+)$",
    r"^gh-readonly-queue/.+/pr-(?P<pr>\d+)-[0-9a-f]+$",
];

impl Default for PrConventions {
    fn default() -> PrConventions {
        PrConventions {
            branch_patterns: DEFAULT_BRANCH_PATTERNS
                .iter()
                .map(|p| Regex::new(p).expect("built-in PR branch pattern compiles"))
                .collect(),
        }
    }
}

/// Where a run comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RunOrigin {
    /// The default branch: push, schedule, workflow_dispatch…
    DefaultBranch,
    /// A pull request (directly, or through a mirror or merge-queue branch).
    PullRequest(u64),
    /// A pull request whose number cannot be known (a fork PR with no number anywhere).
    UnknownPullRequest,
    /// Any other branch or tag.
    Other,
}

impl RunOrigin {
    pub fn pr(self) -> Option<u64> {
        match self {
            RunOrigin::PullRequest(n) => Some(n),
            _ => None,
        }
    }
}

/// Classifies a run by its event, `pull_requests[]` and branch name.
pub fn run_origin(run: &Run, default_branch: &str, conventions: &PrConventions) -> RunOrigin {
    let branch = run.head_branch.as_deref().unwrap_or("");
    if let Some(n) = pr_from_branch(branch, conventions) {
        return RunOrigin::PullRequest(n);
    }
    if matches!(
        run.event.as_str(),
        "pull_request" | "pull_request_target" | "pull_request_review"
    ) {
        return match run.pull_requests.first() {
            Some(&n) => RunOrigin::PullRequest(n),
            None => RunOrigin::UnknownPullRequest,
        };
    }
    if branch == default_branch {
        RunOrigin::DefaultBranch
    } else {
        RunOrigin::Other
    }
}

fn pr_from_branch(branch: &str, conventions: &PrConventions) -> Option<u64> {
    conventions.branch_patterns.iter().find_map(|re| {
        re.captures(branch)?
            .name("pr")
            .and_then(|m| m.as_str().parse().ok())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{RunId, Sha, WorkflowId};

    fn run(event: &str, branch: Option<&str>, prs: &[u64]) -> Run {
        let t = "2026-07-01T00:00:00Z".parse().unwrap();
        Run {
            id: RunId(1),
            workflow_id: WorkflowId(1),
            workflow_name: "CI".into(),
            workflow_path: ".github/workflows/ci.yml".into(),
            display_title: "t".into(),
            event: event.into(),
            head_branch: branch.map(String::from),
            head_sha: Sha("a".repeat(40)),
            run_number: 1,
            run_attempt: 1,
            status: "completed".into(),
            conclusion: Some("success".into()),
            created_at: t,
            updated_at: t,
            run_started_at: Some(t),
            html_url: String::new(),
            pull_requests: prs.to_vec(),
        }
    }

    #[test]
    fn origins_follow_events_and_conventions() {
        let c = PrConventions::default();
        let cases = [
            (run("push", Some("main"), &[]), RunOrigin::DefaultBranch),
            (run("schedule", Some("main"), &[]), RunOrigin::DefaultBranch),
            (
                run("push", Some("pull-request/2371"), &[]),
                RunOrigin::PullRequest(2371),
            ),
            (
                run("pull_request", Some("fix-x"), &[42]),
                RunOrigin::PullRequest(42),
            ),
            (
                run("pull_request", Some("fork-branch"), &[]),
                RunOrigin::UnknownPullRequest,
            ),
            (
                run(
                    "merge_group",
                    Some("gh-readonly-queue/main/pr-77-0123abcd"),
                    &[],
                ),
                RunOrigin::PullRequest(77),
            ),
            (run("push", Some("release/1.0"), &[]), RunOrigin::Other),
            (run("push", None, &[]), RunOrigin::Other),
        ];
        for (run, want) in cases {
            assert_eq!(
                run_origin(&run, "main", &c),
                want,
                "{} {:?}",
                run.event,
                run.head_branch
            );
        }
    }
}
