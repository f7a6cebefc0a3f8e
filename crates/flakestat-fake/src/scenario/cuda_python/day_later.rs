//! The scenario's next day, for tests of incremental surveys and the nightly comparison.

use chrono::TimeDelta;

use super::logs::{last_stamp, restamp_log};
use super::*;

/// What [`a_day_later`] changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DayLater {
    /// The run that was in progress; now completed, failed by the flake on one 3.14t job.
    pub completed: RunId,
    /// An older flake-failed PR run re-run to green: its `created_at` is old, so a listing
    /// filtered on `created` since the last survey does not show it; its `updated_at` is new.
    pub rerun: RunId,
    /// Runs created during the new day, oldest first: a merge on `main` (green) and a push to a
    /// new PR (a flake hit).
    pub new_runs: Vec<RunId>,
    /// Of `new_runs`, the ones with a flake hit.
    pub new_hits: Vec<RunId>,
}

/// Simulates the next 24 hours of the bundled scenario on `ds` (as loaded): completes the run
/// in progress, re-runs an old flake-failed PR run to green, and adds a green merge run and a
/// flake-hit PR run. `now` moves one day on. Deterministic.
///
/// # Panics
/// When `ds` is not the bundled scenario (no run in progress, no flake log).
pub fn a_day_later(ds: &mut Dataset) -> DayLater {
    let old_now = ds.now;
    ds.now = old_now + TimeDelta::days(1);
    let is_pr = |r: &FakeRun| {
        r.run
            .head_branch
            .as_deref()
            .is_some_and(|b| b.starts_with("pull-request/"))
    };
    let related = format!("pull-request/{RELATED_PR}");
    // A flake log to copy, from a run other than the related PR's, naming its failed test (not
    // one of the jobs that hung, `Cause::FlakeHung`).
    let (source_name, source_log) = ds
        .runs
        .iter()
        .filter(|r| r.run.head_branch.as_deref() != Some(related.as_str()))
        .flat_map(|r| r.all_jobs())
        .find_map(|j| match ds.logs.get(&j.id) {
            Some(FakeLog::Text(t))
                if t.contains(FLAKE_MESSAGE) && t.contains("FAILED tests/graph/") =>
            {
                Some((j.name.clone(), t.clone()))
            }
            _ => None,
        })
        .expect("the scenario has flake logs");
    let mut next_job = ds.jobs().map(|j| j.id.0).max().unwrap_or(0) + 1000;
    let mut new_job_id = || {
        next_job += 17;
        JobId(next_job)
    };

    // 1. The run in progress completes; its first 3.14t job hits the flake.
    let pending = ds
        .runs
        .iter()
        .position(|r| !r.run.is_completed())
        .expect("the scenario has a run in progress");
    let mut new_logs = Vec::new();
    {
        let fake = &mut ds.runs[pending];
        let attempt = fake.attempts.last_mut().expect("an attempt");
        let mut hit = false;
        for job in attempt.jobs.iter_mut() {
            if job.status == "completed".into() {
                continue;
            }
            let started = job
                .started_at
                .unwrap_or(job.created_at + TimeDelta::minutes(2));
            job.started_at = Some(started);
            job.status = "completed".into();
            job.conclusion = Some("success".into());
            job.completed_at = Some(started + TimeDelta::minutes(14));
            if !hit && job.name.contains("3.14t") {
                hit = true;
                let text = restamp_log(
                    &source_log,
                    started - TimeDelta::seconds(38),
                    &source_name,
                    &job.name,
                );
                job.conclusion = Some("failure".into());
                job.completed_at = last_stamp(&text).map(|t| t + TimeDelta::seconds(1));
                new_logs.push((job.id, text));
            }
        }
        attempt.conclusion = Some("failure".into());
        fake.run.status = "completed".into();
        fake.run.conclusion = Some("failure".into());
        fake.run.updated_at = attempt
            .jobs
            .iter()
            .filter_map(|j| j.completed_at)
            .max()
            .unwrap_or(old_now);
    }
    let completed = ds.runs[pending].run.id;

    // 2. The newest flake-failed PR run is re-run to green.
    let rerun_index = ds
        .runs
        .iter()
        .enumerate()
        .filter(|(_, r)| is_pr(r) && r.run.conclusion == Some("failure".into()))
        .filter(|(_, r)| {
            r.jobs_at(r.run.run_attempt).iter().any(|j| {
                matches!(ds.logs.get(&j.id), Some(FakeLog::Text(t)) if t.contains(FLAKE_MESSAGE))
            })
        })
        .max_by_key(|(_, r)| r.run.created_at)
        .map(|(i, _)| i)
        .expect("a flake-failed PR run");
    {
        let fake = &mut ds.runs[rerun_index];
        let n = fake.run.run_attempt + 1;
        let start = old_now + TimeDelta::hours(3);
        let jobs: Vec<Job> = fake
            .jobs_at(n - 1)
            .into_iter()
            .filter(|j| j.is_failed())
            .cloned()
            .map(|mut j| {
                j.id = new_job_id();
                j.run_attempt = n;
                j.conclusion = Some("success".into());
                j.created_at = start + TimeDelta::seconds(5);
                j.started_at = Some(start + TimeDelta::minutes(2));
                j.completed_at = Some(start + TimeDelta::minutes(17));
                j.html_url = Some(format!(
                    "https://github.com/{}/actions/runs/{}/job/{}",
                    ds.repo, j.run_id, j.id
                ));
                j
            })
            .collect();
        fake.push_attempt(FakeAttempt {
            attempt: n,
            created_at: start,
            conclusion: Some("success".into()),
            jobs,
        });
    }
    let rerun = ds.runs[rerun_index].run.id;

    // 3. Two new runs: a green merge on main, and a push to a new PR that hits the flake.
    let template = ds
        .runs
        .iter()
        .filter(|r| r.run.event == "push".into() && r.run.head_branch.as_deref() == Some("main"))
        .filter(|r| r.run.conclusion == Some("success".into()))
        .max_by_key(|r| r.run.created_at)
        .expect("a green merge run")
        .clone();
    let top = ds
        .pulls
        .iter()
        .map(|p| p.number)
        .chain(ds.issues.iter().map(|i| i.number))
        .max()
        .unwrap_or(2400);
    let main_head = ds.resolve_ref("main").expect("main");
    let mut new_runs = Vec::new();
    let mut new_hits = Vec::new();
    let specs = [
        (top + 1, "Fix a typo in the 1.1 release notes", true),
        (top + 2, "Add Device.uuid", false),
    ];
    let mut run_id = ds.runs.iter().map(|r| r.run.id.0).max().unwrap_or(0);
    let last_number = ds.runs.iter().map(|r| r.run.run_number).max().unwrap_or(0);
    for (k, (number, title, merge)) in specs.into_iter().enumerate() {
        let opened = old_now + TimeDelta::hours(2 + 3 * k as i64);
        let created = opened + TimeDelta::hours(2);
        let pr_sha = Sha(fake_sha(&format!("day-later pr {number}")));
        ds.commits.push(FakeCommit {
            sha: pr_sha.clone(),
            parents: vec![main_head.clone()],
            message: title.into(),
            author: "dev-eli".into(),
            date: opened,
            files: Vec::new(),
        });
        let (head_sha, branch, merged) = if merge {
            let sha = Sha(fake_sha(&format!("day-later merge {number}")));
            ds.commits.push(FakeCommit {
                sha: sha.clone(),
                parents: vec![main_head.clone()],
                message: format!("{title} (#{number})"),
                author: "dev-eli".into(),
                date: created,
                files: Vec::new(),
            });
            ds.branches.insert("main".into(), sha.clone());
            (sha, "main".to_string(), Some(created))
        } else {
            ds.branches
                .insert(format!("pull-request/{number}"), pr_sha.clone());
            (pr_sha.clone(), format!("pull-request/{number}"), None)
        };
        ds.pulls.push(FakePull {
            number,
            title: title.into(),
            state: if merge { "closed" } else { "open" }.into(),
            user: "dev-eli".into(),
            base_ref: "main".into(),
            head_ref: slug(title),
            head_sha: pr_sha,
            base_sha: main_head.clone(),
            created_at: opened,
            updated_at: created,
            closed_at: merged,
            merged_at: merged,
            merge_commit_sha: merged.map(|_| head_sha.clone()),
            draft: false,
            locked: false,
            head_repo: None,
            files: vec![file(
                if merge {
                    "cuda_core/docs/source/release/1.1.0-notes.rst"
                } else {
                    "cuda_core/cuda/core/_device.pyx"
                },
                "modified",
            )],
        });
        run_id += 1_000_000 + 7_919 * k as u64;
        let run_number = last_number + 1 + k as u64;
        let id = RunId(run_id);
        let delta = created - template.run.created_at;
        let mut hit = false;
        let mut jobs: Vec<Job> = Vec::new();
        for j in template.jobs_at(template.run.run_attempt) {
            let mut job = j.clone();
            job.id = new_job_id();
            job.run_id = id;
            job.run_attempt = 1;
            job.head_sha = head_sha.clone();
            job.created_at += delta;
            job.started_at = job.started_at.map(|t| t + delta);
            job.completed_at = job.completed_at.map(|t| t + delta);
            job.html_url = Some(format!(
                "https://github.com/{}/actions/runs/{id}/job/{}",
                ds.repo, job.id
            ));
            if !merge && !hit && job.name.contains("win-64") && job.name.contains("3.14t") {
                hit = true;
                let started = job.started_at.unwrap_or(job.created_at);
                let text = restamp_log(
                    &source_log,
                    started - TimeDelta::seconds(38),
                    &source_name,
                    &job.name,
                );
                job.conclusion = Some("failure".into());
                job.completed_at = last_stamp(&text).map(|t| t + TimeDelta::seconds(1));
                new_logs.push((job.id, text));
            }
            jobs.push(job);
        }
        let run = Run {
            id,
            run_number,
            event: "push".into(),
            head_branch: Some(branch),
            head_sha: head_sha.clone(),
            display_title: if merge {
                format!("{title} (#{number})")
            } else {
                title.to_string()
            },
            created_at: created,
            updated_at: created,
            run_started_at: Some(created),
            html_url: format!("https://github.com/{}/actions/runs/{id}", ds.repo),
            pull_requests: Vec::new(),
            head_repository: None,
            ..template.run.clone()
        };
        let attempt = FakeAttempt {
            attempt: 1,
            created_at: created + TimeDelta::seconds(3),
            conclusion: Some(if hit { "failure" } else { "success" }.into()),
            jobs,
        };
        ds.runs.push(FakeRun::new(run, attempt));
        new_runs.push(id);
        if hit {
            new_hits.push(id);
        }
    }
    for (job, text) in new_logs {
        ds.logs.insert(job, FakeLog::Text(text));
    }
    DayLater {
        completed,
        rerun,
        new_runs,
        new_hits,
    }
}
