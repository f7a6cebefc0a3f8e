//! Which pull request a run belongs to, if any, and whether a run is a "main" run.
//!
//! A run belongs to PR N when its event is `pull_request`/`pull_request_target` (from
//! `pull_requests[]`, which is empty for forks, else from the head branch), or when its branch
//! follows a mirror convention: `pull-request/<N>` (PR branches pushed by a bot so CI runs as
//! `push`, as NVIDIA/cuda-python does) or `gh-readonly-queue/<base>/pr-<N>-<sha>` (merge queue).
//! The conventions are regexes with a named group `pr`, configurable in `flakestat.toml`.
//!
//! A fork PR's runs carry no number at all (`pull_requests: []`, the head branch is the fork's):
//! [`ForkHeads`] finds their PR among the listed PRs by head repository and branch, confirmed
//! by head sha when several match. A run whose PR cannot be found stays
//! [`RunOrigin::UnknownPullRequest`]: the analysis counts it nowhere and lists it with the reason.

use std::collections::{BTreeMap, BTreeSet};

use chrono::TimeDelta;
use regex::Regex;

use crate::model::{PrNumber, PullRequest, Run, Snapshot};

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
    PullRequest(PrNumber),
    /// A pull request whose number cannot be known (a fork PR with no number anywhere).
    UnknownPullRequest,
    /// Any other branch or tag.
    Other,
}

impl RunOrigin {
    pub fn pr(self) -> Option<PrNumber> {
        match self {
            RunOrigin::PullRequest(n) => Some(n),
            _ => None,
        }
    }
}

/// Listed PRs by head (repository, branch): maps fork runs, which name no PR, to their PR.
#[derive(Debug, Clone, Default)]
pub struct ForkHeads<'a> {
    by_head: BTreeMap<(String, &'a str), Vec<&'a PullRequest>>,
}

/// Why a fork run's PR is not known, or which it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForkMatch {
    Found(PrNumber),
    /// GitHub named no head repository (a deleted fork) or no branch.
    NoHead,
    /// No listed PR has this head repository and branch (not listed yet, or deleted).
    NotListed,
    /// Several PRs had this head at the run's time and none has the run's head sha.
    Ambiguous,
}

impl ForkMatch {
    /// Says why, for reports; `None` when found.
    pub fn reason(self) -> Option<&'static str> {
        match self {
            ForkMatch::Found(_) => None,
            ForkMatch::NoHead => Some("a fork run without a head repository or branch"),
            ForkMatch::NotListed => Some("no listed PR has the fork's branch as its head"),
            ForkMatch::Ambiguous => Some("several PRs had the fork's branch as their head"),
        }
    }
}

/// A PR may still get runs shortly after it closed (the `closed` event, a late re-run).
const AFTER_CLOSE: TimeDelta = TimeDelta::hours(1);

impl<'a> ForkHeads<'a> {
    pub fn new(pulls: &'a BTreeMap<PrNumber, PullRequest>) -> ForkHeads<'a> {
        let mut by_head: BTreeMap<(String, &'a str), Vec<&'a PullRequest>> = BTreeMap::new();
        for pull in pulls.values() {
            let Some(repo) = pull.head.as_ref().and_then(|h| h.repo.as_deref()) else {
                continue;
            };
            by_head
                .entry((repo.to_ascii_lowercase(), pull.head_ref.as_str()))
                .or_default()
                .push(pull);
        }
        ForkHeads { by_head }
    }

    /// The PR of a run that names none: same head repository and branch, open when the run was
    /// created; among several, the one whose head is the run's sha.
    pub fn find(&self, run: &Run) -> ForkMatch {
        let (Some(repo), Some(branch)) =
            (run.head_repository.as_deref(), run.head_branch.as_deref())
        else {
            return ForkMatch::NoHead;
        };
        let Some(candidates) = self.by_head.get(&(repo.to_ascii_lowercase(), branch)) else {
            return ForkMatch::NotListed;
        };
        let open_then: Vec<&&PullRequest> = candidates
            .iter()
            .filter(|p| {
                p.head.as_ref().is_some_and(|h| {
                    h.created_at <= run.created_at
                        && h.closed_at
                            .is_none_or(|c| run.created_at <= c + AFTER_CLOSE)
                })
            })
            .collect();
        match open_then.as_slice() {
            [] => ForkMatch::NotListed,
            [one] => ForkMatch::Found(one.number),
            several => {
                let same_sha: Vec<PrNumber> = several
                    .iter()
                    .filter(|p| p.head.as_ref().is_some_and(|h| h.sha == run.head_sha))
                    .map(|p| p.number)
                    .collect();
                match same_sha.as_slice() {
                    [one] => ForkMatch::Found(*one),
                    _ => ForkMatch::Ambiguous,
                }
            }
        }
    }
}

/// [`run_origin`], with fork runs mapped to their PR through `forks`.
pub fn resolve_origin(
    run: &Run,
    default_branch: &str,
    conventions: &PrConventions,
    forks: &ForkHeads<'_>,
) -> RunOrigin {
    match run_origin(run, default_branch, conventions) {
        RunOrigin::UnknownPullRequest => match forks.find(run) {
            ForkMatch::Found(n) => RunOrigin::PullRequest(n),
            _ => RunOrigin::UnknownPullRequest,
        },
        origin => origin,
    }
}

/// Whether a run is a fork PR's that names no PR (what the PR listing is asked for).
pub fn needs_fork_mapping(run: &Run, default_branch: &str, conventions: &PrConventions) -> bool {
    run_origin(run, default_branch, conventions) == RunOrigin::UnknownPullRequest
}

/// The PRs of the snapshot's window's runs (fork runs mapped through `snapshot.pulls`) whose
/// changed files the store does not hold: telling every one of those runs related or not to a
/// signature needs them. `nightly` fetches them before it analyses, so a PR run's place in a
/// denominator never depends on whether an earlier command happened to fetch its PR's files.
pub fn window_prs_without_files(
    snapshot: &Snapshot,
    conventions: &PrConventions,
) -> BTreeSet<PrNumber> {
    let forks = ForkHeads::new(&snapshot.pulls);
    snapshot
        .runs
        .iter()
        .filter(|r| super::in_survey_window(snapshot, r.created_at))
        .filter_map(|r| resolve_origin(r, &snapshot.default_branch, conventions, &forks).pr())
        .filter(|n| snapshot.pulls.get(n).is_none_or(|p| p.files.is_none()))
        .collect()
}

/// Classifies a run by its event, `pull_requests[]` and branch name.
pub fn run_origin(run: &Run, default_branch: &str, conventions: &PrConventions) -> RunOrigin {
    let branch = run.head_branch.as_deref().unwrap_or("");
    if let Some(n) = pr_from_branch(branch, conventions) {
        return RunOrigin::PullRequest(n);
    }
    if run.event.is_pull_request() {
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

fn pr_from_branch(branch: &str, conventions: &PrConventions) -> Option<PrNumber> {
    conventions.branch_patterns.iter().find_map(|re| {
        re.captures(branch)?
            .name("pr")
            .and_then(|m| m.as_str().parse().ok())
            .map(PrNumber)
    })
}

/// Whether a PR's changes touch a signature's `paths`. Related PRs' runs are left out of the
/// signature's counts: the PR itself may be what fails, which is no flake.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PrRelevance {
    /// The PR changes `file`, which `glob` matches.
    Related { file: String, glob: String },
    /// The PR's changed files are known and none matches.
    Unrelated,
    /// Cannot be told; never guessed.
    Unknown(RelevanceUnknown),
}

/// Why a PR's relevance cannot be told.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RelevanceUnknown {
    /// The signature lists no `paths`.
    NoPaths,
    /// A fork PR whose number appears nowhere in the run.
    PrNumberUnknown,
    /// The store holds no record of the PR.
    PrNotStored,
    /// The PR is known but its changed files were not fetched or were unavailable.
    FilesNotFetched,
}

impl RelevanceUnknown {
    /// Says why, for reports.
    pub fn reason(self) -> &'static str {
        match self {
            RelevanceUnknown::NoPaths => "the signature lists no paths",
            RelevanceUnknown::PrNumberUnknown => "the PR number is unknown (fork PR)",
            RelevanceUnknown::PrNotStored => "the PR is not in the store",
            RelevanceUnknown::FilesNotFetched => "the PR's changed files were not fetched",
        }
    }
}

/// A signature's `paths`, compiled. Globs follow gitignore conventions: `*` stops at `/`, `**`
/// crosses directories.
#[derive(Debug, Clone)]
pub struct PathMatcher {
    globs: Vec<(String, globset::GlobMatcher)>,
    /// Globs that do not compile; reported, never silently dropped.
    pub invalid: Vec<String>,
}

impl PathMatcher {
    pub fn new(paths: &[String]) -> PathMatcher {
        let mut globs = Vec::new();
        let mut invalid = Vec::new();
        for p in paths {
            match globset::GlobBuilder::new(p).literal_separator(true).build() {
                Ok(g) => globs.push((p.clone(), g.compile_matcher())),
                Err(_) => invalid.push(p.clone()),
            }
        }
        PathMatcher { globs, invalid }
    }

    pub fn is_empty(&self) -> bool {
        self.globs.is_empty()
    }

    /// The valid globs as one set (for the bisection's "touches paths").
    pub fn globset(&self) -> globset::GlobSet {
        let mut builder = globset::GlobSetBuilder::new();
        for (pattern, _) in &self.globs {
            if let Ok(glob) = globset::GlobBuilder::new(pattern)
                .literal_separator(true)
                .build()
            {
                builder.add(glob);
            }
        }
        builder
            .build()
            .unwrap_or_else(|_| globset::GlobSet::empty())
    }

    /// The first changed file a glob matches, with that glob.
    pub fn first_match<'a>(&self, files: &'a [String]) -> Option<(&'a str, &str)> {
        files.iter().find_map(|f| {
            self.globs
                .iter()
                .find(|(_, m)| m.is_match(f))
                .map(|(g, _)| (f.as_str(), g.as_str()))
        })
    }
}

/// The relevance of a run's PR to a signature; `None` when the run is not a PR's.
pub fn pr_relevance(
    origin: RunOrigin,
    pulls: &std::collections::BTreeMap<PrNumber, crate::model::PullRequest>,
    paths: &PathMatcher,
) -> Option<PrRelevance> {
    let number = match origin {
        RunOrigin::PullRequest(n) => n,
        RunOrigin::UnknownPullRequest => {
            return Some(PrRelevance::Unknown(RelevanceUnknown::PrNumberUnknown));
        }
        RunOrigin::DefaultBranch | RunOrigin::Other => return None,
    };
    if paths.is_empty() {
        return Some(PrRelevance::Unknown(RelevanceUnknown::NoPaths));
    }
    let Some(pull) = pulls.get(&number) else {
        return Some(PrRelevance::Unknown(RelevanceUnknown::PrNotStored));
    };
    let Some(files) = &pull.files else {
        return Some(PrRelevance::Unknown(RelevanceUnknown::FilesNotFetched));
    };
    Some(match paths.first_match(files) {
        Some((file, glob)) => PrRelevance::Related {
            file: file.to_string(),
            glob: glob.to_string(),
        },
        None => PrRelevance::Unrelated,
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
            pull_requests: prs.iter().copied().map(PrNumber).collect(),
            head_repository: None,
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
                RunOrigin::PullRequest(PrNumber(2371)),
            ),
            (
                run("pull_request", Some("fix-x"), &[42]),
                RunOrigin::PullRequest(PrNumber(42)),
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
                RunOrigin::PullRequest(PrNumber(77)),
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

    #[test]
    fn fork_runs_map_to_the_pr_heading_their_branch_confirmed_by_sha_among_several() {
        use crate::model::{PullHead, PullRequest};
        let at = |s: &str| -> crate::model::Timestamp { s.parse().unwrap() };
        let pull =
            |n: u64, repo: &str, head: &str, sha: char, from: &str, to: Option<&str>| PullRequest {
                number: PrNumber(n),
                title: String::new(),
                state: "closed".into(),
                base_ref: "main".into(),
                head_ref: head.into(),
                merged_at: None,
                merge_commit_sha: None,
                html_url: String::new(),
                files: None,
                head: Some(PullHead {
                    repo: Some(repo.into()),
                    sha: Sha(sha.to_string().repeat(40)),
                    created_at: at(from),
                    closed_at: to.map(at),
                }),
            };
        let pulls: std::collections::BTreeMap<PrNumber, PullRequest> = [
            pull(
                1,
                "Fork/cuda-python",
                "fix",
                'a',
                "2026-06-01T00:00:00Z",
                None,
            ),
            pull(
                2,
                "other/cuda-python",
                "fix",
                'b',
                "2026-06-01T00:00:00Z",
                None,
            ),
            // Two PRs from the same fork branch, both open in July: the sha decides.
            pull(
                3,
                "dev/cuda-python",
                "wip",
                'c',
                "2026-07-01T00:00:00Z",
                None,
            ),
            pull(
                4,
                "dev/cuda-python",
                "wip",
                'd',
                "2026-07-02T00:00:00Z",
                None,
            ),
        ]
        .into_iter()
        .map(|p| (p.number, p))
        .collect();
        let forks = ForkHeads::new(&pulls);
        let fork_run = |repo: Option<&str>, branch: &str, sha: char| {
            let mut r = run("pull_request", Some(branch), &[]);
            r.head_repository = repo.map(String::from);
            r.head_sha = Sha(sha.to_string().repeat(40));
            r.created_at = at("2026-07-05T00:00:00Z");
            r
        };
        // The full name is matched whatever its case.
        let r = fork_run(Some("fork/CUDA-python"), "fix", 'e');
        assert_eq!(forks.find(&r), ForkMatch::Found(PrNumber(1)));
        let c = PrConventions::default();
        assert_eq!(
            resolve_origin(&r, "main", &c, &forks),
            RunOrigin::PullRequest(PrNumber(1))
        );
        assert_eq!(
            forks.find(&fork_run(Some("dev/cuda-python"), "wip", 'd')),
            ForkMatch::Found(PrNumber(4))
        );
        assert_eq!(
            forks.find(&fork_run(Some("dev/cuda-python"), "wip", 'e')),
            ForkMatch::Ambiguous
        );
        let gone = fork_run(Some("gone/cuda-python"), "fix", 'e');
        assert_eq!(forks.find(&gone), ForkMatch::NotListed);
        assert_eq!(
            resolve_origin(&gone, "main", &c, &forks),
            RunOrigin::UnknownPullRequest
        );
        assert_eq!(forks.find(&fork_run(None, "fix", 'e')), ForkMatch::NoHead);
        // A run before the PR existed is not its.
        let mut early = fork_run(Some("dev/cuda-python"), "wip", 'c');
        early.created_at = at("2026-06-30T00:00:00Z");
        assert_eq!(forks.find(&early), ForkMatch::NotListed);
    }

    #[test]
    fn relevance_is_known_only_from_fetched_files() {
        use crate::model::PullRequest;
        let pull = |n: u64, files: Option<&[&str]>| PullRequest {
            number: PrNumber(n),
            title: String::new(),
            state: "open".into(),
            base_ref: "main".into(),
            head_ref: "x".into(),
            merged_at: None,
            merge_commit_sha: None,
            html_url: String::new(),
            files: files.map(|f| f.iter().map(|s| s.to_string()).collect()),
            head: None,
        };
        let pulls = [
            (
                PrNumber(1),
                pull(1, Some(&["cuda_core/tests/helpers.py", "README.md"])),
            ),
            (PrNumber(2), pull(2, Some(&["docs/index.rst"]))),
            (PrNumber(3), pull(3, None)),
        ]
        .into_iter()
        .collect();
        let paths = PathMatcher::new(&["cuda_core/tests/**".to_string(), "[".to_string()]);
        assert_eq!(paths.invalid, ["["]);
        assert_eq!(
            pr_relevance(RunOrigin::PullRequest(PrNumber(1)), &pulls, &paths),
            Some(PrRelevance::Related {
                file: "cuda_core/tests/helpers.py".into(),
                glob: "cuda_core/tests/**".into()
            })
        );
        assert_eq!(
            pr_relevance(RunOrigin::PullRequest(PrNumber(2)), &pulls, &paths),
            Some(PrRelevance::Unrelated)
        );
        assert_eq!(
            pr_relevance(RunOrigin::PullRequest(PrNumber(3)), &pulls, &paths),
            Some(PrRelevance::Unknown(RelevanceUnknown::FilesNotFetched))
        );
        assert_eq!(
            pr_relevance(RunOrigin::PullRequest(PrNumber(4)), &pulls, &paths),
            Some(PrRelevance::Unknown(RelevanceUnknown::PrNotStored))
        );
        assert_eq!(
            pr_relevance(
                RunOrigin::PullRequest(PrNumber(2)),
                &pulls,
                &PathMatcher::new(&[])
            ),
            Some(PrRelevance::Unknown(RelevanceUnknown::NoPaths))
        );
        assert_eq!(pr_relevance(RunOrigin::DefaultBranch, &pulls, &paths), None);
        // `*` does not cross directories.
        let shallow = PathMatcher::new(&["cuda_core/*".to_string()]);
        assert_eq!(
            pr_relevance(RunOrigin::PullRequest(PrNumber(1)), &pulls, &shallow),
            Some(PrRelevance::Unrelated)
        );
    }

    #[test]
    fn the_window_s_prs_without_files_are_every_pr_run_s_not_only_the_hit_ones() {
        let pull = |n: u64, files: Option<&[&str]>| crate::model::PullRequest {
            number: PrNumber(n),
            title: String::new(),
            state: "closed".into(),
            base_ref: "main".into(),
            head_ref: format!("b{n}"),
            merged_at: None,
            merge_commit_sha: None,
            html_url: String::new(),
            files: files.map(|f| f.iter().map(|s| s.to_string()).collect()),
            head: None,
        };
        let at = |s: &str| -> crate::model::Timestamp { s.parse().unwrap() };
        let mut runs = vec![
            run("push", Some("pull-request/10"), &[]),
            run("pull_request", Some("b11"), &[11]),
            run("pull_request", Some("b12"), &[12]),
            run("push", Some("main"), &[]),
            run("push", Some("pull-request/13"), &[]),
            run("push", Some("pull-request/14"), &[]),
        ];
        // PR 14's only run is before the window.
        runs[5].created_at = at("2026-06-01T00:00:00Z");
        let snapshot = Snapshot {
            default_branch: "main".into(),
            since: Some(at("2026-06-15T00:00:00Z")),
            until: Some(at("2026-07-15T00:00:00Z")),
            runs,
            pulls: [
                pull(10, None),
                pull(11, Some(&["src/a.py"])),
                pull(12, None),
                pull(14, None),
            ]
            .into_iter()
            .map(|p| (p.number, p))
            .collect(),
            ..Snapshot::default()
        };
        let want: BTreeSet<PrNumber> = [10, 12, 13].map(PrNumber).into();
        assert_eq!(
            window_prs_without_files(&snapshot, &PrConventions::default()),
            want,
            "files known (11), before the window (14) and not a PR's (main) are not asked for"
        );
    }
}
