//! Issue #5 end to end: small datasets served by the fake GitHub, surveyed by the real binary
//! (`--api-url`), which fetches the default branch's history, the fork points and the suspects'
//! files after the survey; the JSON report must name the merge that introduced the flake, or say
//! honestly why it cannot. Plus the bundled cuda-python story through `--replay`.
//!
//! Each dataset is a real commit graph: `main` moves by one squash commit per merge; every
//! `pull_request` run tests a PR-branch commit on top of `main` as it stood; a side branch forks
//! from an older `main` commit. Whether a run hits is decided from what its commit contains (the
//! culprit's commit among its ancestors) and a fixed pattern, so the tests know the answer from
//! the construction, not from the analysis.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Output;

use chrono::{Duration, TimeZone, Utc};
use flakestat::fake::{
    Dataset, FakeAttempt, FakeCommit, FakeFile, FakeGitHub, FakeLog, FakePull, FakeRun, Faults,
    RouteKind,
};
use flakestat::model::{Job, JobId, PrNumber, Repo, Run, RunId, Sha, Timestamp, WorkflowId};
use flakestat::report::wire;

const TEST_ID: &str = "tests/graph/test_lifetime.py::test_release";

/// What a run's one job fails: nothing, the marker flake ([`TEST_ID`], the signature's line),
/// or these tests (each with a pytest summary line of its own, no signature's).
pub(crate) enum Fails<'a> {
    Nothing,
    Marker,
    Tests(&'a [&'a str]),
}

impl Fails<'_> {
    fn of(hit: bool) -> Fails<'static> {
        if hit { Fails::Marker } else { Fails::Nothing }
    }
}

pub(crate) fn t(hours: i64) -> Timestamp {
    Utc.with_ymd_and_hms(2026, 6, 1, 0, 0, 0).unwrap() + Duration::hours(hours)
}

fn sha(tag: &str) -> Sha {
    // A stable 40-hex-digit sha per tag.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in tag.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    Sha(format!(
        "{h:016x}{:016x}{:08x}",
        h.rotate_left(17),
        h as u32
    ))
}

/// How a run is triggered.
#[derive(Clone, Copy)]
pub(crate) enum Kind {
    /// `pull_request` of PR #900 (an open PR touching nothing of interest), on top of `main`.
    PullRequest,
    /// `pull_request` of PR `n` (its branch `topic-n`), on top of `main`.
    Pr(u64),
    /// A push to `side`, whose head forks from main as it stood at the given hour.
    Side { forked_at: i64 },
}

pub(crate) struct Builder {
    pub(crate) ds: Dataset,
    /// Main's commits, oldest first: (sha, date).
    main: Vec<(Sha, Timestamp)>,
    next_run: u64,
    culprit: Option<Sha>,
    /// `pull_request` runs so far whose commit contained the culprit.
    exposed: u64,
}

impl Builder {
    pub(crate) fn new() -> Builder {
        let repo = Repo::parse("octo/flaky").unwrap();
        let mut ds = Dataset::new(repo, t(24 * 30));
        ds.auth.tokens = vec!["tok".into()];
        let root = sha("root");
        ds.commits.push(FakeCommit {
            sha: root.clone(),
            parents: vec![],
            message: "Initial".into(),
            author: "octocat".into(),
            date: t(-24 * 60),
            files: Vec::new(),
        });
        ds.branches.insert("main".into(), root.clone());
        ds.pulls
            .push(pull(900, "Open PR touching docs", None, &["docs/a.md"]));
        Builder {
            ds,
            main: vec![(root, t(-24 * 60))],
            next_run: 30_000_000_000,
            culprit: None,
            exposed: 0,
        }
    }

    /// Main's tip at `at`.
    fn main_at(&self, at: Timestamp) -> Sha {
        self.main
            .iter()
            .rev()
            .find(|(_, d)| *d <= at)
            .map(|(s, _)| s.clone())
            .unwrap()
    }

    /// Merges PR `n` at hour `h` as a squash commit on main, with a push run for it (which
    /// hits when `hit`). `culprit` marks the merge that introduces the flake.
    pub(crate) fn merge(&mut self, n: u64, title: &str, h: i64, files: &[&str], culprit: bool) {
        let parent = self.main.last().unwrap().0.clone();
        let commit = sha(&format!("merge {n}"));
        self.ds.commits.push(FakeCommit {
            sha: commit.clone(),
            parents: vec![parent],
            message: format!("{title} (#{n})"),
            author: "octocat".into(),
            date: t(h),
            files: Vec::new(),
        });
        self.main.push((commit.clone(), t(h)));
        self.ds.branches.insert("main".into(), commit.clone());
        self.ds
            .pulls
            .push(pull(n, title, Some((t(h), commit.clone())), files));
        if culprit {
            self.culprit = Some(commit);
        }
    }

    /// Pushes a commit straight to main at hour `h` (no pull request), changing `files`.
    /// `culprit` marks the push that introduces the flake.
    fn push(&mut self, title: &str, h: i64, files: &[&str], culprit: bool) -> Sha {
        let parent = self.main.last().unwrap().0.clone();
        let commit = sha(&format!("push {h}"));
        self.ds.commits.push(FakeCommit {
            sha: commit.clone(),
            parents: vec![parent],
            message: format!("{title}\n\nA longer body that is not the title."),
            author: "octocat".into(),
            date: t(h),
            files: files.iter().map(|f| f.to_string()).collect(),
        });
        self.main.push((commit.clone(), t(h)));
        self.ds.branches.insert("main".into(), commit.clone());
        if culprit {
            self.culprit = Some(commit.clone());
        }
        commit
    }

    /// Whether a commit contains the culprit.
    fn contains_culprit(&self, head: &Sha) -> bool {
        self.culprit
            .as_ref()
            .is_some_and(|c| self.ds.ancestors(head).contains(c))
    }

    /// A run at hour `h`; `hit` says whether it fails with the flake.
    fn run(&mut self, h: i64, kind: Kind, hit: bool) -> RunId {
        self.run_failing(h, kind, Fails::of(hit))
    }

    /// A run at hour `h` failing what `fails` says.
    pub(crate) fn run_failing(&mut self, h: i64, kind: Kind, fails: Fails<'_>) -> RunId {
        self.next_run += 1000;
        let id = RunId(self.next_run);
        let at = t(h) + Duration::minutes(7);
        let (event, branch, head, prs) = match kind {
            Kind::PullRequest => {
                let head = sha(&format!("pr-head {id}"));
                self.ds.commits.push(FakeCommit {
                    sha: head.clone(),
                    parents: vec![self.main_at(at)],
                    message: "PR change".into(),
                    author: "dev".into(),
                    date: at - Duration::minutes(1),
                    files: Vec::new(),
                });
                ("pull_request", "topic-900".to_string(), head, vec![900])
            }
            Kind::Pr(n) => {
                let head = sha(&format!("pr-head {id}"));
                self.ds.commits.push(FakeCommit {
                    sha: head.clone(),
                    parents: vec![self.main_at(at)],
                    message: format!("PR {n} change"),
                    author: "dev".into(),
                    date: at - Duration::minutes(1),
                    files: Vec::new(),
                });
                ("pull_request", format!("topic-{n}"), head, vec![n])
            }
            Kind::Side { forked_at } => {
                let head = sha(&format!("side-head {id}"));
                self.ds.commits.push(FakeCommit {
                    sha: head.clone(),
                    parents: vec![self.main_at(t(forked_at))],
                    message: "Side work".into(),
                    author: "dev".into(),
                    date: at - Duration::minutes(1),
                    files: Vec::new(),
                });
                self.ds.branches.insert("side".into(), head.clone());
                ("push", "side".to_string(), head, vec![])
            }
        };
        self.add_run(id, at, event, &branch, head, prs, fails);
        id
    }

    /// The push run of the latest merge, `minutes` after it.
    fn push_run(&mut self, minutes: i64, hit: bool) -> RunId {
        self.push_run_failing(minutes, Fails::of(hit))
    }

    /// The push run of the latest merge, `minutes` after it, failing what `fails` says.
    pub(crate) fn push_run_failing(&mut self, minutes: i64, fails: Fails<'_>) -> RunId {
        self.next_run += 1000;
        let id = RunId(self.next_run);
        let (head, date) = self.main.last().unwrap().clone();
        self.add_run(
            id,
            date + Duration::minutes(minutes),
            "push",
            "main",
            head,
            vec![],
            fails,
        );
        id
    }

    #[allow(clippy::too_many_arguments)]
    fn add_run(
        &mut self,
        id: RunId,
        at: Timestamp,
        event: &str,
        branch: &str,
        head: Sha,
        prs: Vec<u64>,
        fails: Fails<'_>,
    ) {
        let hit = !matches!(fails, Fails::Nothing);
        let job = Job {
            id: JobId(id.0 * 10 + 1),
            run_id: id,
            run_attempt: 1,
            name: "Test linux-64 / py3.13".into(),
            status: "completed".into(),
            conclusion: Some(if hit { "failure" } else { "success" }.into()),
            created_at: at,
            started_at: Some(at),
            completed_at: Some(at + Duration::minutes(20)),
            html_url: Some(format!(
                "https://github.com/octo/flaky/actions/runs/{id}/job/{}",
                id.0 * 10 + 1
            )),
            labels: Vec::new(),
            head_sha: head.clone(),
        };
        match fails {
            Fails::Nothing => {}
            Fails::Marker => {
                self.ds.logs.insert(
                    job.id,
                    FakeLog::Text(format!(
                        "\u{feff}2026-06-01T00:00:00.0000000Z ##[group]Run pytest\n\
                         2026-06-01T00:00:01.0000000Z E       AssertionError: FLAKE-MARKER not released\n\
                         2026-06-01T00:00:02.0000000Z FAILED {TEST_ID} - AssertionError: FLAKE-MARKER not released\n\
                         2026-06-01T00:00:03.0000000Z ##[error]Process completed with exit code 1.\n"
                    )),
                );
            }
            Fails::Tests(tests) => {
                let mut log =
                    "\u{feff}2026-06-01T00:00:00.0000000Z ##[group]Run pytest\n".to_string();
                for test in tests {
                    log.push_str(&format!(
                        "2026-06-01T00:00:02.0000000Z FAILED {test} - assert 1 == 2\n"
                    ));
                }
                log.push_str(
                    "2026-06-01T00:00:03.0000000Z ##[error]Process completed with exit code 1.\n",
                );
                self.ds.logs.insert(job.id, FakeLog::Text(log));
            }
        }
        let run = Run {
            id,
            workflow_id: WorkflowId(77),
            workflow_name: "CI".into(),
            workflow_path: ".github/workflows/ci.yml".into(),
            display_title: "CI".into(),
            event: event.into(),
            head_branch: Some(branch.into()),
            head_sha: head,
            run_number: id.0 / 1000,
            run_attempt: 1,
            status: "completed".into(),
            conclusion: None,
            created_at: at,
            updated_at: at + Duration::minutes(30),
            run_started_at: Some(at),
            html_url: format!("https://github.com/octo/flaky/actions/runs/{id}"),
            pull_requests: prs.into_iter().map(PrNumber).collect(),
            head_repository: None,
        };
        let attempt = FakeAttempt {
            attempt: 1,
            created_at: at,
            conclusion: Some(if hit { "failure" } else { "success" }.into()),
            jobs: vec![job],
        };
        self.ds.runs.push(FakeRun::new(run, attempt));
    }

    /// Hourly `pull_request` runs over `[from, to)`: of the runs whose commit contains the
    /// culprit (counted over the whole dataset), the one after the first `offset` hits, then
    /// every `every`-th.
    fn hourly(&mut self, from: i64, to: i64, every: u64, offset: u64) -> Vec<(RunId, bool)> {
        let mut out = Vec::new();
        for h in from..to {
            let at = t(h) + Duration::minutes(7);
            let head_would = self.main_at(at);
            let hit = if self.contains_culprit(&head_would) {
                self.exposed += 1;
                let exposed = self.exposed;
                exposed > offset && (exposed - offset - 1).is_multiple_of(every)
            } else {
                false
            };
            out.push((self.run(h, Kind::PullRequest, hit), hit));
        }
        out
    }
}

pub(crate) fn pull(
    n: u64,
    title: &str,
    merged: Option<(Timestamp, Sha)>,
    files: &[&str],
) -> FakePull {
    FakePull {
        number: n,
        title: title.into(),
        state: if merged.is_some() { "closed" } else { "open" }.into(),
        user: "dev".into(),
        base_ref: "main".into(),
        head_ref: format!("topic-{n}"),
        head_sha: sha(&format!("head {n}")),
        base_sha: sha("root"),
        created_at: t(-24 * 40),
        updated_at: merged.as_ref().map_or(t(-24 * 40), |(at, _)| *at),
        closed_at: merged.as_ref().map(|(at, _)| *at),
        merged_at: merged.as_ref().map(|(at, _)| *at),
        merge_commit_sha: merged.map(|(_, s)| s),
        draft: false,
        locked: false,
        head_repo: None,
        files: files
            .iter()
            .map(|f| FakeFile {
                filename: f.to_string(),
                status: "modified".into(),
                previous_filename: None,
                additions: 1,
                deletions: 1,
            })
            .collect(),
    }
}

pub(crate) fn signatures_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("marker-flake.toml"),
        r#"title = "The marker flake"
pattern = 'AssertionError: FLAKE-MARKER'
test = '^FAILED (?P<test>\S+\.py::\S+)'
paths = ["src/graph/**"]

[examples]
match = ["E       AssertionError: FLAKE-MARKER not released"]
no_match = ["E       AssertionError: assert 1 == 2"]
"#,
    )
    .unwrap();
    dir
}

pub(crate) fn flakestat(args: &[&str]) -> Output {
    crate::common::flakestat()
        .args(args)
        .env("GH_TOKEN", "tok")
        .output()
        .expect("the binary runs")
}

/// Surveys `[since, until)` hours with the real binary; returns the report and stderr.
fn survey(gh: &FakeGitHub, cache: &Path, since: i64, until: i64) -> (wire::Signature, String) {
    let sigs = signatures_dir();
    let since = t(since).to_rfc3339();
    let until = t(until).to_rfc3339();
    let api = gh.api_url();
    let out = flakestat(&[
        "survey",
        "--repo",
        "octo/flaky",
        "--since",
        &since,
        "--until",
        &until,
        "--api-url",
        &api,
        "--cache-dir",
        cache.to_str().unwrap(),
        "--signatures",
        sigs.path().to_str().unwrap(),
        "--format",
        "json",
        "--max-retries",
        "1",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    let report: wire::Report = serde_json::from_slice(&out.stdout).unwrap();
    let sig = report
        .signatures
        .into_iter()
        .find(|s| s.id == "marker-flake")
        .unwrap();
    (sig, stderr)
}

fn first_hit(runs: &[(RunId, bool)]) -> RunId {
    runs.iter().find(|(_, hit)| *hit).unwrap().0
}

fn prs(s: &wire::Signature) -> Vec<u64> {
    s.suspects.iter().map(|x| x.pr.map_or(0, |p| p.0)).collect()
}

#[test]
fn the_culprit_is_named_though_an_unrelated_merge_lands_before_the_first_hit() {
    let mut b = Builder::new();
    let mut runs = b.hourly(0, 100, 5, 0);
    b.merge(10, "Docs: typo", 20, &["README.md"], false);
    b.merge(
        11,
        "Graph: release buffers at destroy",
        100,
        &["src/graph/buffers.py"],
        true,
    );
    runs.extend(b.hourly(100, 103, 5, 3));
    b.merge(12, "Bump a pin", 103, &["requirements.txt"], false);
    b.push_run(1, false);
    runs.extend(b.hourly(103, 260, 5, 0));
    // Built so: the culprit's first exposed runs are clean, the first hit after #12.
    let first = first_hit(&runs);
    let culprit_at = t(100);
    let gh = FakeGitHub::start_blocking(b.ds, Faults::default()).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let (s, stderr) = survey(&gh, cache.path(), 48, 24 * 12);

    assert_eq!(s.bisection.as_ref().unwrap().verdict, "placed", "{s:#?}");
    assert_eq!(s.suspects[0].pr, Some(PrNumber(11)), "{:?}", prs(&s));
    assert!(
        prs(&s).contains(&12),
        "the later merge is shown as a suspect too"
    );
    assert!(!prs(&s).contains(&10), "#10 has ~80 clean runs after it");
    let top = &s.suspects[0];
    assert_eq!(top.touches_paths, Some(true));
    let twelve = s
        .suspects
        .iter()
        .find(|x| x.pr == Some(PrNumber(12)))
        .unwrap();
    assert_eq!(twelve.touches_paths, Some(false));
    assert!(
        twelve.likelihood > top.likelihood,
        "likelihood alone prefers the later merge; both kinds of evidence are shown"
    );
    let b = s.bisection.as_ref().unwrap();
    assert_eq!(b.first_hit_run_id, Some(first.0));
    assert_eq!(b.pr, Some(PrNumber(11)));
    let w = s.impact_window.as_ref().unwrap();
    assert_eq!((w.starts_at.as_str(), w.start), ("merge", culprit_at));
    assert!(stderr.contains("bisection:"), "{stderr}");
}

#[test]
fn a_merge_adding_the_failing_test_outranks_a_neutral_one() {
    let mut b = Builder::new();
    let mut runs = b.hourly(0, 100, 4, 0);
    b.merge(
        20,
        "Tests: lifetime of graph buffers",
        100,
        &["tests/graph/test_lifetime.py"],
        true,
    );
    runs.extend(b.hourly(100, 101, 4, 1));
    b.merge(
        21,
        "CI: cache pip",
        101,
        &[".github/workflows/ci.yml"],
        false,
    );
    runs.extend(b.hourly(101, 220, 4, 0));
    let _ = first_hit(&runs);
    let gh = FakeGitHub::start_blocking(b.ds, Faults::default()).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let (s, _) = survey(&gh, cache.path(), 48, 24 * 12);
    assert_eq!(prs(&s)[0], 20, "{:#?}", s.suspects);
    assert_eq!(s.suspects[0].touches_tests, Some(true));
    assert_eq!(s.suspects[0].touches_paths, Some(false));
    let other = s
        .suspects
        .iter()
        .find(|x| x.pr == Some(PrNumber(21)))
        .unwrap();
    assert_eq!(other.touches_tests, Some(false));
    assert!(s.tests.contains_key(TEST_ID));
}

#[test]
fn a_flake_present_from_the_start_is_pinned_on_no_merge() {
    let mut b = Builder::new();
    // The culprit merged before the survey's history: every run hits one in five from the start.
    b.merge(30, "Old change", -24 * 40, &["src/graph/old.py"], true);
    b.hourly(0, 24, 5, 1);
    b.merge(31, "Unrelated", 24, &["README.md"], false);
    b.hourly(24, 200, 5, 0);
    let gh = FakeGitHub::start_blocking(b.ds, Faults::default()).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let (s, _) = survey(&gh, cache.path(), 0, 24 * 9);
    let b = s.bisection.as_ref().unwrap();
    assert_eq!(b.verdict, "present_before_window", "{b:#?}");
    assert!(s.suspects.is_empty());
    assert_eq!(s.impact_window.as_ref().unwrap().starts_at, "first_hit");
}

#[test]
fn a_rare_flake_is_not_placed_on_a_merge() {
    let mut b = Builder::new();
    b.hourly(0, 100, 1_000, 0);
    b.merge(40, "Graph: tweak", 100, &["src/graph/x.py"], true);
    // Two hits in 150 exposed runs: no usable hit rate.
    let runs = b.hourly(100, 250, 100, 20);
    assert_eq!(runs.iter().filter(|(_, h)| *h).count(), 2);
    let gh = FakeGitHub::start_blocking(b.ds, Faults::default()).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let (s, _) = survey(&gh, cache.path(), 48, 24 * 12);
    let b = s.bisection.as_ref().unwrap();
    assert_eq!(b.verdict, "not_enough_hits", "{b:#?}");
    assert!(s.suspects.is_empty());
    assert_eq!(s.impact_window.as_ref().unwrap().starts_at, "first_hit");
}

#[test]
fn side_branch_runs_without_the_culprit_do_not_count_against_it() {
    let mut b = Builder::new();
    let mut runs = b.hourly(0, 100, 3, 0);
    b.merge(
        50,
        "Graph: new allocator",
        100,
        &["src/graph/alloc.py"],
        true,
    );
    // After the merge: side-branch pushes forked before it (clean: they lack it) between PR runs.
    let mut side_heads = BTreeSet::new();
    for h in 100..160 {
        if h % 2 == 0 {
            let id = b.run(h, Kind::Side { forked_at: 90 }, false);
            side_heads.insert(id);
        } else {
            runs.extend(b.hourly(h, h + 1, 3, 2));
        }
    }
    let first = first_hit(&runs);
    let gh = FakeGitHub::start_blocking(b.ds, Faults::default()).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let (s, stderr) = survey(&gh, cache.path(), 48, 24 * 8);
    let bisection = s.bisection.as_ref().unwrap();
    assert_eq!(bisection.first_hit_run_id, Some(first.0));
    let top = &s.suspects[0];
    assert_eq!(top.pr, Some(PrNumber(50)));
    // Clean runs after #50 before the first hit: the PR runs alone (hours 101, 103).
    assert_eq!(top.clean_runs_after, 2, "{top:#?}");
    assert_eq!(top.unknown_runs_after, 0, "every fork point was fetched");
    let compares = gh.request_count(RouteKind::Compare);
    assert!(compares > 0 && compares <= side_heads.len(), "{compares}");
    assert!(
        stderr.contains(&format!("{compares} compare")),
        "the cost is reported: {stderr}"
    );

    // Again: fork points are immutable and cached; the history is not listed twice.
    gh.clear_requests();
    let (again, stderr) = survey(&gh, cache.path(), 48, 24 * 8);
    assert_eq!(gh.request_count(RouteKind::Compare), 0, "{stderr}");
    assert_eq!(gh.request_count(RouteKind::Commits), 0, "{stderr}");
    assert_eq!(again.suspects, s.suspects);
}

fn scenario() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/cuda-python-flake")
}

#[test]
fn the_bundled_story_names_2371_four_and_a_half_hours_before_the_first_hit() {
    let cache = tempfile::tempdir().unwrap();
    let signatures = Path::new(env!("CARGO_MANIFEST_DIR")).join("signatures");
    let out = flakestat(&[
        "-q",
        "survey",
        "--replay",
        scenario().to_str().unwrap(),
        "--since",
        "2026-06-15",
        "--cache-dir",
        cache.path().to_str().unwrap(),
        "--signatures",
        signatures.to_str().unwrap(),
        "--format",
        "markdown",
    ]);
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = md
        .lines()
        .find(|l| l.contains("`wait-until-timeout`:"))
        .expect("the signature's overview line");
    assert!(
        line.contains("since #2371 merged on 2026-07-15 16:52 UTC"),
        "{line}"
    );
    assert!(
        line.contains("first hit 4.4 h after #2371 merged"),
        "{line}"
    );
    assert!(line.contains("zero hits in "), "{line}");
    assert!(line.contains("before #2371 ("), "{line}");
    // No --until: the window ends where the survey ended (the recording's end).
    let json = crate::common::flake_account(
        "NVIDIA/cuda-python",
        "2026-06-15",
        cache.path(),
        &["--signatures", signatures.to_str().unwrap()],
        "json",
    );
    let report: wire::Report = serde_json::from_str(&json).unwrap();
    let s = &report.signatures[0];
    assert_eq!(s.suspects[0].pr, Some(PrNumber(2371)));
    assert_eq!(s.suspects[0].touches_paths, Some(true));
    assert_eq!(s.suspects[0].touches_tests, Some(true));
    // #2379, whose push run is the first hit, is a suspect too, ranked below.
    assert!(
        s.suspects
            .iter()
            .skip(1)
            .any(|x| x.pr == Some(PrNumber(2379)))
    );
    // #2362 (the decoy editing the test file) never merged: no suspect.
    assert!(s.suspects.iter().all(|x| x.pr != Some(PrNumber(2362))));
    let b = s.bisection.as_ref().unwrap();
    assert_eq!(b.minutes_after_merge, Some(4 * 60 + 26));
}

/// A repository without pull requests: every change is pushed straight to `main`, each push
/// tested by its own push run. The flake comes with the push at hour 100 (which touches the
/// signature's paths); its first two runs are clean, so the first hit is the run of the push at
/// hour 102, two pushes later. The pushes are the merges: the culprit is named by its commit,
/// with its title, its changed files fetched from `/commits/{sha}` and kept in the store.
#[test]
fn a_direct_push_to_main_is_named_when_the_repository_has_no_pull_requests() {
    let mut b = Builder::new();
    b.ds.pulls.clear();
    let mut first = None;
    let mut culprit = None;
    for h in 0..220 {
        let is_culprit = h == 100;
        let files = if is_culprit {
            vec!["src/graph/buffers.py".to_string()]
        } else {
            vec![format!("docs/page-{h}.md")]
        };
        let files: Vec<&str> = files.iter().map(String::as_str).collect();
        let title = if is_culprit {
            "Graph: release buffers at destroy".to_string()
        } else {
            format!("Docs: page {h}")
        };
        let commit = b.push(&title, h, &files, is_culprit);
        if is_culprit {
            culprit = Some(commit);
        }
        let hit = if b.culprit.is_some() {
            b.exposed += 1;
            b.exposed > 2 && (b.exposed - 3).is_multiple_of(3)
        } else {
            false
        };
        let id = b.push_run(5, hit);
        if hit && first.is_none() {
            first = Some((id, h));
        }
    }
    let culprit = culprit.unwrap();
    let (first, first_h) = first.unwrap();
    // Built so: the culprit is not the last push before the first hit.
    assert_eq!(first_h, 102);
    assert!(b.ds.pulls.is_empty());
    let gh = FakeGitHub::start_blocking(b.ds, Faults::default()).unwrap();
    let cache = tempfile::tempdir().unwrap();
    let (s, stderr) = survey(&gh, cache.path(), 48, 24 * 9);

    let bisection = s.bisection.as_ref().unwrap();
    assert_eq!(bisection.verdict, "placed", "{s:#?}");
    assert_eq!(bisection.first_hit_run_id, Some(first.0));
    assert_eq!(bisection.pr, None, "a direct push has no PR");
    let top = &s.suspects[0];
    assert_eq!(top.sha, culprit.0, "{:#?}", s.suspects);
    assert_eq!(top.pr, None);
    assert_eq!(top.title, "Graph: release buffers at destroy");
    assert_eq!(
        top.url.as_deref(),
        Some(format!("https://github.com/octo/flaky/commit/{}", culprit.0).as_str())
    );
    assert_eq!(top.merged_at, t(100));
    assert_eq!(top.clean_runs_after, 2, "{top:#?}");
    // The files came from `/commits/{sha}`: without them the last push before the first hit
    // (likelihood 1) would outrank the culprit.
    assert_eq!(top.touches_paths, Some(true));
    assert_eq!(top.touches_tests, Some(false));
    let later = s
        .suspects
        .iter()
        .find(|x| x.sha == sha("push 102").0)
        .expect("the push whose run hit first is a suspect too");
    assert_eq!(later.pr, None);
    assert_eq!(later.touches_paths, Some(false));
    assert!(later.likelihood > top.likelihood);
    let w = s.impact_window.as_ref().unwrap();
    assert_eq!((w.starts_at.as_str(), w.start), ("merge", t(100)));
    let commit_requests = gh.request_count(RouteKind::Commit);
    assert!(
        commit_requests >= 2 && commit_requests == s.suspects.len(),
        "one request per suspect: {commit_requests} for {} suspects",
        s.suspects.len()
    );
    assert!(stderr.contains("bisection:"), "{stderr}");

    // The sentence names the commit by its short sha, with its title, in the markdown report.
    let sigs = signatures_dir();
    let out = flakestat(&[
        "report",
        "--repo",
        "octo/flaky",
        "--since",
        &t(48).to_rfc3339(),
        "--until",
        &t(24 * 9).to_rfc3339(),
        "--cache-dir",
        cache.path().to_str().unwrap(),
        "--signatures",
        sigs.path().to_str().unwrap(),
        "--signature",
        "marker-flake",
        "--format",
        "markdown",
    ]);
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let short = &culprit.0[..7];
    assert!(
        md.contains(&format!(
            "first hit 2.1 h after {short} (\"Graph: release buffers at destroy\") landed"
        )),
        "{md}"
    );
    assert!(
        md.contains(&format!(
            "[{short}](https://github.com/octo/flaky/commit/{})",
            culprit.0
        )),
        "{md}"
    );
    assert!(!md.contains("#0"), "{md}");

    // Again: the commits' files are cached in the store, not asked twice.
    gh.clear_requests();
    let (again, stderr) = survey(&gh, cache.path(), 48, 24 * 9);
    assert_eq!(gh.request_count(RouteKind::Commit), 0, "{stderr}");
    assert_eq!(again.suspects, s.suspects);
}
