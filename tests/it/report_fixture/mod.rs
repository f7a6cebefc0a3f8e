//! Snapshots built in code for the report tests: a small builder, and the cuda-python story
//! (a free-threaded-only flake that starts after a merge) with the figures it was built from, so
//! tests compare the analysis against the construction, not against a copy of its own output.
#![allow(dead_code)]

use std::collections::BTreeSet;

use chrono::{Duration, TimeZone, Utc};
use flakestat::model::{
    Classification, Job, JobId, LogLine, LogStatus, PrNumber, PullRequest, Repo, Run, RunId, Sha,
    SignatureId, SignatureInfo, SignatureMatch, Snapshot, Timestamp, WorkflowId,
};

pub const SIG: &str = "wait-until-timeout";
pub const PLATFORMS: &[&str] = &["linux-64", "win-64"];
pub const PYTHONS: &[&str] = &["3.12", "3.13", "3.14", "3.14t"];

pub fn t0() -> Timestamp {
    Utc.with_ymd_and_hms(2026, 7, 1, 0, 0, 0).unwrap()
}

/// Where a run comes from.
#[derive(Debug, Clone, Copy)]
pub enum From {
    Main,
    /// `pull-request/N` mirror branch, pushed (cuda-python's convention).
    Mirror(u64),
    /// A `pull_request` event with the number in `pull_requests[]`.
    Pr(u64),
    /// A fork PR: no number anywhere.
    Fork,
}

/// How a job ended.
#[derive(Debug, Clone)]
pub enum Outcome {
    Pass,
    /// Failed; the signature matched with these test ids.
    Hit(Vec<String>),
    /// Failed; no signature matched; these error lines.
    Unmatched(Vec<String>),
    /// Failed; the log is gone.
    Expired,
    /// Skipped (did not run).
    Skipped,
}

pub struct Builder {
    pub snapshot: Snapshot,
    next_run: u64,
    next_job: u64,
}

impl Default for Builder {
    fn default() -> Self {
        Self::new()
    }
}

impl Builder {
    pub fn new() -> Builder {
        Builder {
            snapshot: Snapshot {
                repo: Repo::parse("NVIDIA/cuda-python"),
                default_branch: "main".into(),
                since: Some(t0()),
                until: Some(t0() + Duration::days(21)),
                ..Snapshot::default()
            },
            next_run: 1000,
            next_job: 5_000_000_000,
        }
    }

    pub fn pull(&mut self, number: u64, files: Option<&[&str]>) {
        self.snapshot.pulls.insert(
            PrNumber(number),
            PullRequest {
                number: PrNumber(number),
                title: format!("PR {number}"),
                state: "open".into(),
                base_ref: "main".into(),
                head_ref: format!("topic-{number}"),
                merged_at: None,
                merge_commit_sha: None,
                html_url: format!("https://github.com/NVIDIA/cuda-python/pull/{number}"),
                files: files.map(|f| f.iter().map(|s| s.to_string()).collect()),
                head: None,
            },
        );
    }

    /// Adds a run with one list of `(job name, outcome)` per attempt; returns its id.
    pub fn run(&mut self, at: Timestamp, from: From, attempts: &[Vec<(String, Outcome)>]) -> RunId {
        self.next_run += 1;
        let id = RunId(self.next_run);
        let (event, branch, prs) = match from {
            From::Main => ("push", Some("main".to_string()), vec![]),
            From::Mirror(n) => ("push", Some(format!("pull-request/{n}")), vec![]),
            From::Pr(n) => ("pull_request", Some(format!("topic-{n}")), vec![n]),
            From::Fork => ("pull_request", Some("patch-1".to_string()), vec![]),
        };
        let last = attempts.last().expect("at least one attempt");
        let failed = last
            .iter()
            .any(|(_, o)| !matches!(o, Outcome::Pass | Outcome::Skipped));
        let url = format!(
            "https://github.com/NVIDIA/cuda-python/actions/runs/{}",
            id.0
        );
        self.snapshot.runs.push(Run {
            id,
            workflow_id: WorkflowId(7),
            workflow_name: "CI".into(),
            workflow_path: ".github/workflows/ci.yml".into(),
            display_title: "CI".into(),
            event: event.into(),
            head_branch: branch,
            head_sha: Sha(format!("{:040x}", id.0)),
            run_number: id.0,
            run_attempt: attempts.len() as u32,
            status: "completed".into(),
            conclusion: Some(if failed { "failure" } else { "success" }.into()),
            created_at: at,
            updated_at: at,
            run_started_at: Some(at),
            html_url: url.clone(),
            pull_requests: prs.into_iter().map(PrNumber).collect(),
            head_repository: None,
        });
        for (a, jobs) in attempts.iter().enumerate() {
            let attempt = a as u32 + 1;
            let started = at + Duration::hours(a as i64);
            for (name, outcome) in jobs {
                self.next_job += 1;
                let job_id = JobId(self.next_job);
                let conclusion = match outcome {
                    Outcome::Pass => "success",
                    Outcome::Skipped => "skipped",
                    _ => "failure",
                };
                self.snapshot.jobs.push(Job {
                    id: job_id,
                    run_id: id,
                    run_attempt: attempt,
                    name: name.clone(),
                    status: "completed".into(),
                    conclusion: Some(conclusion.into()),
                    created_at: started,
                    started_at: Some(started),
                    completed_at: Some(started + Duration::minutes(20)),
                    html_url: Some(format!("{url}/job/{}", job_id.0)),
                    // Test jobs on GPU runners, builds on CPU ones, as on cuda-python.
                    labels: vec![if name.starts_with("Test") {
                        "linux-amd64-gpu-t4-latest-1".to_string()
                    } else {
                        "linux-amd64-cpu16".to_string()
                    }],
                    head_sha: Sha(format!("{:040x}", id.0)),
                });
                match outcome {
                    Outcome::Pass | Outcome::Skipped => {}
                    Outcome::Expired => {
                        self.snapshot.logs.insert(job_id, LogStatus::Expired);
                    }
                    Outcome::Hit(tests) => {
                        self.snapshot.logs.insert(job_id, LogStatus::Stored);
                        self.snapshot.classifications.insert(
                            job_id,
                            Classification {
                                matches: vec![SignatureMatch {
                                    signature: SignatureId(SIG.into()),
                                    line: 812,
                                    lines: vec![812],
                                    text: "AssertionError: condition not satisfied within 5.0s"
                                        .into(),
                                    step: Some("Run tests".into()),
                                    count: 1,
                                    tests: tests.iter().cloned().collect::<BTreeSet<_>>(),
                                }],
                                error_lines: vec![LogLine {
                                    line: 812,
                                    text: "AssertionError: condition not satisfied within 5.0s"
                                        .into(),
                                }],
                                ..Default::default()
                            },
                        );
                    }
                    Outcome::Unmatched(lines) => {
                        self.snapshot.logs.insert(job_id, LogStatus::Stored);
                        self.snapshot.classifications.insert(
                            job_id,
                            Classification {
                                matches: vec![],
                                error_lines: lines
                                    .iter()
                                    .enumerate()
                                    .map(|(i, l)| LogLine {
                                        line: 100 + i as u64,
                                        text: l.clone(),
                                    })
                                    .collect(),
                                ..Default::default()
                            },
                        );
                    }
                }
            }
        }
        id
    }

    /// Sorts runs and jobs the way `load_snapshot` does.
    pub fn finish(mut self) -> Snapshot {
        self.snapshot.runs.sort_by_key(|r| (r.created_at, r.id));
        self.snapshot
            .jobs
            .sort_by_key(|j| (j.run_id, j.run_attempt, j.id));
        self.snapshot
    }
}

pub fn test_job(platform: &str, python: &str) -> String {
    format!("Test {platform} / py{python}, 12.9.1, local, t4")
}

/// Every test job of the matrix, passing, except those `fail` names.
pub fn matrix(fail: &[(&str, &str, Outcome)]) -> Vec<(String, Outcome)> {
    let mut jobs = vec![("Build linux-64".to_string(), Outcome::Pass)];
    for p in PLATFORMS {
        for py in PYTHONS {
            let outcome = fail
                .iter()
                .find(|(fp, fpy, _)| fp == p && fpy == py)
                .map_or(Outcome::Pass, |(_, _, o)| o.clone());
            jobs.push((test_job(p, py), outcome));
        }
    }
    jobs
}

pub fn signature() -> SignatureInfo {
    SignatureInfo {
        id: SignatureId(SIG.into()),
        title: "_wait_until timed out in free-threaded tests".into(),
        paths: vec!["cuda_core/cuda/core/_memory/**".into()],
        issue: Some("https://github.com/NVIDIA/cuda-python/issues/2400".into()),
    }
}

/// The figures the story was built from.
#[derive(Debug, Default)]
pub struct Story {
    pub runs_before: u64,
    pub runs_before_unknown: u64,
    pub runs_in_impact: u64,
    pub hit_runs: BTreeSet<RunId>,
    pub hit_main: u64,
    pub hit_pr: u64,
    pub rerun_to_green: u64,
    pub max_attempts: u32,
    pub jobs_hit: u64,
    pub first_hit_run: Option<RunId>,
    pub excluded: Vec<(RunId, u64, bool)>,
    pub unmatched_jobs: u64,
    pub expired_jobs: u64,
    pub tests: std::collections::BTreeMap<String, u64>,
    /// When the PR that introduced the flake (#2371) merged.
    pub merged_at: Option<Timestamp>,
}

/// Marks a PR merged into main at `at`, with a merge commit of its own.
pub fn merge(b: &mut Builder, number: u64, at: Timestamp) {
    let pull = b
        .snapshot
        .pulls
        .get_mut(&PrNumber(number))
        .expect("the PR exists");
    pull.state = "closed".into();
    pull.merged_at = Some(at);
    pull.merge_commit_sha = Some(Sha(format!("{:040x}", 0xfeed_0000 + number)));
}

pub const HOSTILE: &str = "E | a|b | `tick` ``x`` <script>alert(1)</script> \u{1b}[31mred\u{1b}[0m\n# not a heading\n- not a list &amp; [x](javascript:alert(1)) \\| end";

/// The story: clean runs before (some before `since`), a related PR that hits before its merge,
/// then runs with hits on main and on unrelated PRs, re-runs to green (one taking 6 attempts),
/// hits only on 3.14t, an unmatched hostile failure, an expired log.
pub fn cuda_story() -> (Snapshot, Vec<SignatureInfo>, Story) {
    let mut b = Builder::new();
    let mut story = Story::default();
    let hour = Duration::hours(1);
    let related_pr = 2371;
    b.pull(
        related_pr,
        Some(&["cuda_core/cuda/core/_memory/_buffer.pyx", "README.md"]),
    );
    for n in 2380..2392 {
        b.pull(n, Some(&["cuda_bindings/docs/source/release.rst"]));
    }

    // 30 clean runs before `since` and 40 in the window before the first hit; one with an
    // expired log (unknown).
    let mut t = t0() - Duration::days(5);
    for i in 0..70 {
        let from = if i % 3 == 0 {
            From::Mirror(2380 + i % 12)
        } else {
            From::Main
        };
        if i == 10 {
            b.run(
                t,
                From::Main,
                &[matrix(&[("win-64", "3.12", Outcome::Expired)])],
            );
            story.runs_before_unknown += 1;
            story.expired_jobs += u64::from(t >= t0());
        } else {
            b.run(t, from, &[matrix(&[])]);
            story.runs_before += 1;
        }
        t += hour * 3;
    }
    // The related PR's own runs hit (excluded), before anything else hits.
    let r = b.run(
        t,
        From::Mirror(related_pr),
        &[matrix(&[(
            "linux-64",
            "3.14t",
            Outcome::Hit(vec!["test_a".into()]),
        )])],
    );
    story.excluded.push((r, related_pr, true));
    t += hour;
    let r = b.run(t, From::Mirror(related_pr), &[matrix(&[])]);
    story.excluded.push((r, related_pr, false));
    // #2371 merges; an unrelated merge (#2380) lands after it, just before the first hit.
    story.merged_at = Some(t + hour);
    merge(&mut b, related_pr, t + hour);
    merge(&mut b, 2380, t + hour * 3);
    t += hour * 4;

    // The impact window: 40 runs, hits at chosen places.
    // (attempts, platform, from)
    let plan: &[(usize, u32, &str, From)] = &[
        (0, 1, "linux-64", From::Main),
        (3, 2, "win-64", From::Mirror(2381)),
        (5, 1, "linux-64", From::Mirror(2382)),
        (9, 6, "linux-64", From::Main),
        (12, 2, "win-64", From::Pr(2383)),
        (20, 3, "linux-64", From::Mirror(2384)),
        (27, 1, "win-64", From::Main),
        (33, 2, "linux-64", From::Mirror(2385)),
    ];
    for i in 0..40 {
        let tests = vec![format!("tests/test_event.py::test_{}", i % 3)];
        match plan.iter().find(|(at, ..)| *at == i) {
            Some(&(_, attempts, platform, from)) => {
                let mut all = Vec::new();
                for a in 1..=attempts {
                    // Every attempt fails but the last of a re-run; a single attempt fails.
                    let hit = attempts == 1 || a < attempts;
                    if hit {
                        all.push(matrix(&[(platform, "3.14t", Outcome::Hit(tests.clone()))]));
                        story.jobs_hit += 1;
                        *story.tests.entry(tests[0].clone()).or_default() += 1;
                    } else {
                        all.push(matrix(&[]));
                    }
                }
                let id = b.run(t, from, &all);
                story.first_hit_run.get_or_insert(id);
                story.hit_runs.insert(id);
                match from {
                    From::Main => story.hit_main += 1,
                    _ => story.hit_pr += 1,
                }
                if attempts > 1 {
                    story.rerun_to_green += 1;
                    story.max_attempts = story.max_attempts.max(attempts);
                }
            }
            None if i == 15 => {
                b.run(
                    t,
                    From::Main,
                    &[matrix(&[(
                        "linux-64",
                        "3.12",
                        Outcome::Unmatched(vec![HOSTILE.into()]),
                    )])],
                );
                story.unmatched_jobs += 1;
            }
            None if i == 16 => {
                b.run(
                    t,
                    From::Main,
                    &[matrix(&[(
                        "linux-64",
                        "3.13",
                        Outcome::Unmatched(vec![
                            "Segmentation fault at 0x7f00aa in /tmp/a/b.so".into(),
                        ]),
                    )])],
                );
                b.run(
                    t + Duration::minutes(1),
                    From::Main,
                    &[matrix(&[(
                        "win-64",
                        "3.13",
                        Outcome::Unmatched(vec![
                            "Segmentation fault at 0x7f11bb in /tmp/c/d.so".into(),
                        ]),
                    )])],
                );
                story.unmatched_jobs += 2;
                story.runs_in_impact += 1;
            }
            None => {
                b.run(t, From::Main, &[matrix(&[])]);
            }
        }
        story.runs_in_impact += 1;
        t += hour * 5;
    }
    (b.finish(), vec![signature()], story)
}
