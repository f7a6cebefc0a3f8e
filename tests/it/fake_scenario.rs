//! The bundled `cuda-python-flake` scenario tells the story its README tells: the figures are
//! counted here from the generated `Dataset` (by reading logs, not the generator's plan) and
//! compared with the README's table.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::OnceLock;

use crate::common::pr_of;
use chrono::{DateTime, TimeDelta, Utc};
use flakestat::fake::scenario::cuda_python::{
    BETWEEN_PR, CULPRIT_PR, FLAKE_MESSAGE, FLAKE_TEST_FILE, FORK_PR, RELATED_PR, RENAME_TITLE,
};
use flakestat::fake::{Dataset, FakeLog, FakeRun};
use flakestat::model::{Conclusion, Job, Timestamp};

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/cuda-python-flake")
}

fn dataset() -> &'static Dataset {
    static DS: OnceLock<Dataset> = OnceLock::new();
    DS.get_or_init(|| Dataset::load(&dir()).expect("the bundled scenario loads"))
}

fn t(s: &str) -> Timestamp {
    DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
}

fn log_text<'a>(ds: &'a Dataset, job: &Job) -> Option<&'a str> {
    match ds.logs.get(&job.id) {
        Some(FakeLog::Text(text)) => Some(text),
        _ => None,
    }
}

fn is_flake(ds: &Dataset, job: &Job) -> bool {
    job.is_failed() && log_text(ds, job).is_some_and(|l| l.contains(FLAKE_MESSAGE))
}

/// The runs of PRs touching the flake's paths: #2362 (the test) and the fork's graph PR.
fn is_related(run: &FakeRun) -> bool {
    matches!(pr_of(run), Some(RELATED_PR | FORK_PR))
}

fn on_main(run: &FakeRun) -> bool {
    run.run.head_branch.as_deref() == Some("main")
}

/// The figures the README states, counted from the dataset.
fn facts(ds: &Dataset) -> BTreeMap<&'static str, String> {
    let culprit = ds.pull(CULPRIT_PR).unwrap();
    let merged = culprit.merged_at.unwrap();
    let related = |r: &FakeRun| is_related(r);
    let hit = |r: &FakeRun| r.all_jobs().iter().any(|j| is_flake(ds, j));
    let runs = &ds.runs;
    let after: Vec<&FakeRun> = runs
        .iter()
        .filter(|r| r.run.created_at > merged && r.run.is_completed() && !related(r))
        .collect();
    let before: Vec<&FakeRun> = runs
        .iter()
        .filter(|r| r.run.created_at <= merged && !related(r))
        .collect();
    let hits: Vec<&FakeRun> = after.iter().copied().filter(|r| hit(r)).collect();
    let first = hits.iter().map(|r| r.run.created_at).min().unwrap();
    let rerun_green = hits
        .iter()
        .filter(|r| r.run.run_attempt > 1 && r.run.conclusion == Some("success".into()))
        .count();
    let flaky_jobs: Vec<&Job> = runs
        .iter()
        .filter(|r| !related(r))
        .flat_map(|r| r.all_jobs())
        .filter(|j| is_flake(ds, j))
        .collect();
    let failed_jobs: Vec<&Job> = ds.jobs().filter(|j| j.is_failed()).collect();
    let all_jobs = ds.jobs().count();
    let expired = ds
        .logs
        .values()
        .filter(|l| matches!(l, FakeLog::Expired))
        .count();
    let missing = failed_jobs
        .iter()
        .filter(|j| {
            !matches!(
                ds.logs.get(&j.id),
                Some(FakeLog::Text(_) | FakeLog::Expired)
            )
        })
        .count();
    let span = |d: TimeDelta| format!("{}h{:02}m", d.num_hours(), d.num_minutes() % 60);
    let pct = (hits.len() * 1000 / after.len()) as f64 / 10.0;
    let mut f = BTreeMap::new();
    f.insert("runs", runs.len().to_string());
    f.insert(
        "runs in progress",
        runs.iter()
            .filter(|r| !r.run.is_completed())
            .count()
            .to_string(),
    );
    f.insert(
        "first run created",
        runs.iter()
            .map(|r| r.run.created_at)
            .min()
            .unwrap()
            .to_rfc3339(),
    );
    f.insert("jobs (every attempt)", all_jobs.to_string());
    f.insert("failed jobs", failed_jobs.len().to_string());
    f.insert(
        "attempts",
        runs.iter()
            .map(|r| r.attempts.len())
            .sum::<usize>()
            .to_string(),
    );
    f.insert(
        "merged pull requests",
        ds.pulls
            .iter()
            .filter(|p| p.merged_at.is_some())
            .count()
            .to_string(),
    );
    f.insert("pull requests", ds.pulls.len().to_string());
    f.insert("#2371 merged at", merged.to_rfc3339());
    f.insert(
        "completed runs after the merge (related PR excluded)",
        after.len().to_string(),
    );
    f.insert(
        "runs up to the merge (related PR excluded)",
        before.len().to_string(),
    );
    f.insert(
        "runs up to the merge with a flake hit",
        before.iter().filter(|r| hit(r)).count().to_string(),
    );
    f.insert("runs with a flake hit", hits.len().to_string());
    f.insert("hit rate after the merge", format!("{pct}%"));
    f.insert(
        "hit runs on main",
        hits.iter().filter(|r| on_main(r)).count().to_string(),
    );
    f.insert(
        "hit runs on pull requests",
        hits.iter()
            .filter(|r| pr_of(r).is_some())
            .count()
            .to_string(),
    );
    f.insert("hit runs re-run to green", rerun_green.to_string());
    f.insert(
        "most attempts of a hit run",
        hits.iter()
            .map(|r| r.run.run_attempt)
            .max()
            .unwrap()
            .to_string(),
    );
    // The night one GPU runner pool lost its CUDA context, and the test two PRs broke on their
    // own branches.
    let pool_night: Vec<&FakeRun> = runs
        .iter()
        .filter(|r| {
            let failed: Vec<&Job> = r.all_jobs().into_iter().filter(|j| j.is_failed()).collect();
            failed.len() > 1
                && failed
                    .iter()
                    .all(|j| log_text(ds, j).is_some_and(|l| l.contains("errors in 131.52s")))
        })
        .collect();
    f.insert(
        "machine-wide night (every linux-aarch64 test job failed)",
        pool_night
            .iter()
            .map(|r| format!("run {} ({})", r.run.id.0, r.run.created_at.date_naive()))
            .collect::<Vec<_>>()
            .join(", "),
    );
    let broke: BTreeSet<String> = runs
        .iter()
        .filter(|r| {
            r.all_jobs().iter().any(|j| {
                log_text(ds, j).is_some_and(|l| {
                    l.contains(
                        "FAILED tests/test_launcher.py::test_launch_config_rejects_zero_grid",
                    )
                })
            })
        })
        .map(|r| pr_of(r).map_or_else(|| "main".to_string(), |n| format!("#{n}")))
        .collect();
    f.insert(
        "test_launch_config_rejects_zero_grid fails on",
        broke.into_iter().collect::<Vec<_>>().join(", "),
    );
    f.insert(
        "flaky job executions (related PR excluded)",
        flaky_jobs.len().to_string(),
    );
    // One failing test per flaky job, as the seed's hand survey counted them, and the jobs
    // that hung before pytest reported a failure.
    let named = |name: &str| {
        let summary = format!("FAILED tests/graph/test_graph_definition_lifetime.py::{name} - ");
        flaky_jobs
            .iter()
            .filter(|j| log_text(ds, j).is_some_and(|l| l.contains(&summary)))
            .count()
            .to_string()
    };
    for (key, name) in [
        (
            "flaky jobs failing test_kernel_args_buffer_lifetime",
            "test_kernel_args_buffer_lifetime",
        ),
        (
            "flaky jobs failing test_memcpy_…",
            "test_memcpy_buffer_allocations_released_after_graph_destroyed",
        ),
        (
            "flaky jobs failing test_slot_owners_…",
            "test_slot_owners_released_after_graph_destroyed",
        ),
        (
            "flaky jobs failing test_pending_call_…",
            "test_pending_call_queue_saturation_preserves_cleanup",
        ),
    ] {
        f.insert(key, named(name));
    }
    f.insert(
        "flaky jobs naming no test (hung, interrupted)",
        flaky_jobs
            .iter()
            .filter(|j| log_text(ds, j).is_some_and(|l| !l.contains("FAILED")))
            .count()
            .to_string(),
    );
    f.insert("first hit", first.to_rfc3339());
    f.insert("first hit after the merge", span(first - merged));
    f.insert(
        "related PR runs failing with the assertion",
        runs.iter()
            .filter(|r| pr_of(r) == Some(RELATED_PR) && hit(r))
            .count()
            .to_string(),
    );
    f.insert(
        "fork PR runs failing with the assertion",
        runs.iter()
            .filter(|r| pr_of(r) == Some(FORK_PR) && hit(r))
            .count()
            .to_string(),
    );
    f.insert("expired logs (410)", expired.to_string());
    f.insert("failed jobs without a log (404)", missing.to_string());
    f
}

/// `| key | value |` rows of the README's figures table.
fn readme_figures() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(dir().join("README.md")).unwrap();
    let section = text
        .split("<!-- figures:start -->")
        .nth(1)
        .and_then(|s| s.split("<!-- figures:end -->").next())
        .expect("README has a figures table");
    section
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l
                .trim()
                .trim_matches('|')
                .split('|')
                .map(str::trim)
                .collect();
            (cells.len() == 2 && !cells[0].starts_with('-') && cells[0] != "figure")
                .then(|| (cells[0].to_string(), cells[1].trim_matches('`').to_string()))
        })
        .collect()
}

#[test]
fn print_facts() {
    for (k, v) in facts(dataset()) {
        println!("| {k} | `{v}` |");
    }
}

#[test]
fn readme_figures_match_the_generated_data() {
    let computed = facts(dataset());
    let stated = readme_figures();
    let computed: BTreeMap<String, String> = computed
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    assert_eq!(
        stated, computed,
        "regenerate the README table with `cargo test --test it fake_scenario::print_facts -- --nocapture`"
    );
}

#[test]
fn expected_constants_match_the_generated_data() {
    use flakestat::fake::scenario::cuda_python::expected as e;
    let f = facts(dataset());
    let n = |k: &str| f[k].parse::<usize>().unwrap();
    assert_eq!(n("runs"), e::RUNS);
    assert_eq!(
        n("completed runs after the merge (related PR excluded)"),
        e::RUNS_AFTER_MERGE
    );
    assert_eq!(
        n("runs up to the merge (related PR excluded)"),
        e::RUNS_UP_TO_MERGE
    );
    assert_eq!(n("runs with a flake hit"), e::HIT_RUNS);
    assert_eq!(n("hit runs on main"), e::HIT_RUNS_ON_MAIN);
    assert_eq!(n("hit runs on pull requests"), e::HIT_RUNS_ON_PRS);
    assert_eq!(n("hit runs re-run to green"), e::HIT_RUNS_RERUN_TO_GREEN);
    assert_eq!(n("most attempts of a hit run"), e::MOST_ATTEMPTS as usize);
    assert_eq!(
        n("flaky job executions (related PR excluded)"),
        e::FLAKY_JOBS
    );
    assert_eq!(
        n("related PR runs failing with the assertion"),
        e::RELATED_PR_HIT_RUNS
    );
    assert_eq!(
        n("fork PR runs failing with the assertion"),
        e::FORK_PR_HIT_RUNS
    );
    assert_eq!(t(&f["first hit"]), t(e::FIRST_HIT));
    assert_eq!(t(&f["#2371 merged at"]), t(e::CULPRIT_MERGED_AT));
    assert_eq!(n("failed jobs"), e::FAILED_JOBS);
    assert_eq!(n("expired logs (410)"), e::EXPIRED_LOGS);
    assert_eq!(n("failed jobs without a log (404)"), e::MISSING_LOGS);
}

#[test]
fn generation_is_deterministic() {
    let again = Dataset::load(&dir()).unwrap();
    assert!(again == *dataset(), "two loads differ");
}

#[test]
fn the_flake_hits_only_free_threaded_jobs_after_the_culprit() {
    let ds = dataset();
    let merged = ds.pull(CULPRIT_PR).unwrap().merged_at.unwrap();
    let mut platforms = BTreeSet::new();
    let mut cudas = BTreeSet::new();
    let mut gpus = BTreeSet::new();
    for run in &ds.runs {
        if is_related(run) {
            continue;
        }
        for job in run.all_jobs() {
            if !is_flake(ds, job) {
                continue;
            }
            assert!(
                job.name.contains("3.14t"),
                "flake on a GIL job: {}",
                job.name
            );
            assert!(
                run.run.created_at > merged,
                "hit before the merge: {}",
                run.run.id
            );
            platforms.insert(job.name.split(' ').nth(1).unwrap().to_string());
            cudas.insert(if job.name.contains("12.9.1") {
                "12.9.1"
            } else {
                "13.0.2"
            });
            gpus.insert(
                ["t4", "h100", "a100"]
                    .into_iter()
                    .find(|g| job.name.contains(&format!("GPU {g}")))
                    .unwrap(),
            );
        }
    }
    assert_eq!(
        platforms,
        BTreeSet::from(["linux-64".into(), "linux-aarch64".into(), "win-64".into()])
    );
    assert_eq!(cudas.len(), 2);
    assert_eq!(gpus, BTreeSet::from(["t4", "h100", "a100"]));
}

#[test]
fn the_story_holds() {
    let ds = dataset();
    let f = facts(ds);
    let n = |k: &str| f[k].trim_end_matches('%').parse::<f64>().unwrap();
    assert_eq!(n("runs with a flake hit"), 16.0);
    assert_eq!(n("hit runs on main"), 5.0);
    assert_eq!(n("hit runs on pull requests"), 11.0);
    assert_eq!(n("hit runs re-run to green"), 7.0);
    assert_eq!(n("most attempts of a hit run"), 6.0);
    assert_eq!(n("runs up to the merge with a flake hit"), 0.0);
    assert!(n("runs up to the merge (related PR excluded)") >= 280.0);
    assert!((60.0..=95.0).contains(&n("completed runs after the merge (related PR excluded)")));
    assert!((15.0..=28.0).contains(&n("hit rate after the merge")));
    assert!((340.0..=420.0).contains(&n("runs")));
    assert!(n("related PR runs failing with the assertion") >= 2.0);

    // First hit about 4.5 hours after the merge, with the unrelated merge in between.
    let merged = ds.pull(CULPRIT_PR).unwrap().merged_at.unwrap();
    let first = t(&f["first hit"]);
    let gap = first - merged;
    assert!(
        gap > TimeDelta::hours(4) && gap < TimeDelta::hours(5),
        "{gap}"
    );
    let between = ds.pull(BETWEEN_PR).unwrap().merged_at.unwrap();
    assert!(merged < between && between < first);
    let merges_between: Vec<u64> = ds
        .pulls
        .iter()
        .filter(|p| p.merged_at.is_some_and(|m| m > merged && m < first))
        .map(|p| p.number)
        .collect();
    assert_eq!(merges_between, vec![BETWEEN_PR]);
}

#[test]
fn decoys_look_like_the_flake_but_are_not() {
    let ds = dataset();
    // The related PR fails with the same assertion on GIL jobs too.
    let related_jobs: Vec<&Job> = ds
        .runs
        .iter()
        .filter(|r| pr_of(r) == Some(RELATED_PR))
        .flat_map(|r| r.all_jobs())
        .filter(|j| is_flake(ds, j))
        .collect();
    assert!(related_jobs.iter().any(|j| !j.name.contains("3.14t")));
    // A 3.14t job fails after the merge for another reason.
    let merged = ds.pull(CULPRIT_PR).unwrap().merged_at.unwrap();
    let other = ds
        .runs
        .iter()
        .filter(|r| r.run.created_at > merged)
        .any(|r| {
            r.all_jobs().iter().any(|j| {
                j.name.contains("3.14t")
                    && log_text(ds, j).is_some_and(|l| l.contains("Cannot set NULL context"))
            })
        });
    assert!(other);
    // A failed build skips its platform's tests, and the re-run repeats them.
    let skipped = ds
        .jobs()
        .filter(|j| j.conclusion == Some("skipped".into()))
        .count();
    assert!(skipped >= 6, "{skipped}");
}

#[test]
fn pull_requests_and_the_commit_graph_agree() {
    let ds = dataset();
    let culprit = ds.pull(CULPRIT_PR).unwrap();
    let files: Vec<&str> = culprit.files.iter().map(|f| f.filename.as_str()).collect();
    assert!(files.contains(&"cuda_core/cuda/core/_graph.py"));
    assert!(files.contains(&FLAKE_TEST_FILE));
    let related = ds.pull(RELATED_PR).unwrap();
    assert!(related.merged_at.is_none());
    assert!(related.files.iter().any(|f| f.filename == FLAKE_TEST_FILE));
    // Only the culprit and the related PR go near the flaky test or the graph code.
    for pr in &ds.pulls {
        if matches!(pr.number, CULPRIT_PR | RELATED_PR | FORK_PR) {
            continue;
        }
        assert!(
            !pr.files.iter().any(|f| f.filename.contains("graph")),
            "#{} touches graph code",
            pr.number
        );
    }
    let merged: Vec<_> = ds.pulls.iter().filter(|p| p.merged_at.is_some()).collect();
    assert!((35..=50).contains(&merged.len()), "{}", merged.len());
    assert!(ds.pulls.iter().any(|p| p.title == RENAME_TITLE));

    // Every hit run's head contains the culprit's merge commit; every merge is on main.
    let culprit_sha = culprit.merge_commit_sha.clone().unwrap();
    let main = ds.resolve_ref("main").unwrap();
    let main_history = ds.ancestors(&main);
    for pr in &merged {
        assert!(main_history.contains(pr.merge_commit_sha.as_ref().unwrap()));
    }
    for run in &ds.runs {
        assert!(
            ds.commit(&run.run.head_sha.0).is_some(),
            "unknown head {}",
            run.run.head_sha
        );
        let hit = run.all_jobs().iter().any(|j| is_flake(ds, j));
        if hit && !is_related(run) {
            assert!(ds.ancestors(&run.run.head_sha).contains(&culprit_sha));
        }
        if on_main(run) && run.run.event == "push".into() {
            assert!(main_history.contains(&run.run.head_sha));
        }
    }
}

#[test]
fn runs_and_jobs_look_like_cuda_python() {
    let ds = dataset();
    let events: BTreeSet<&str> = ds.runs.iter().map(|r| r.run.event.as_str()).collect();
    assert_eq!(events, BTreeSet::from(["pull_request", "push", "schedule"]));
    assert!(
        ds.runs
            .iter()
            .any(|r| r.run.head_branch.as_deref() == Some("12.9.x"))
    );
    for run in &ds.runs {
        if run.run.event == "push".into() && pr_of(run).is_some() {
            assert!(
                run.run.pull_requests.is_empty(),
                "mirror branches list no PRs"
            );
        }
        let latest = run.jobs_at(run.run.run_attempt);
        assert!((25..=40).contains(&latest.len()), "{} jobs", latest.len());
        for job in run.all_jobs() {
            assert!(job.id.0 > u64::from(u32::MAX));
            assert_eq!(job.run_id, run.run.id);
        }
        assert_eq!(run.attempts.len() as u32, run.run.run_attempt);
    }
    let names: BTreeSet<&str> = ds.jobs().map(|j| j.name.as_str()).collect();
    assert!(names.contains("Test linux-64 / py3.14t, 12.9.1, local, t4"));
    assert!(names.contains("Test linux-64 / Python 3.14t, CUDA 12.9.1 (local), GPU t4"));
    assert!(names.contains("Test win-64 / Python 3.14t, CUDA 13.0.2 (wheels), GPU a100 (MCDM)"));
    assert!(names.iter().any(|n| n.starts_with("Build ")));
    // Run ids and job ids grow with time, as GitHub's do.
    let mut by_time: Vec<&FakeRun> = ds.runs.iter().collect();
    by_time.sort_by_key(|r| r.run.created_at);
    assert!(by_time.windows(2).all(|w| w[0].run.id < w[1].run.id));
}

#[test]
fn logs_have_the_raw_format() {
    let ds = dataset();
    let texts: Vec<&str> = ds
        .logs
        .values()
        .filter_map(|l| match l {
            FakeLog::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert!(texts.len() > 20);
    for text in &texts {
        assert!(text.starts_with('\u{feff}'));
        let body = text.trim_start_matches('\u{feff}');
        let first = body.lines().next().unwrap();
        assert_eq!(&first[28..29], " ");
        DateTime::parse_from_rfc3339(&first[..28]).unwrap();
        assert_eq!(first.as_bytes()[19], b'.');
        assert_eq!(&first[27..28], "Z");
        assert!(body.contains("##[group]Run "));
        assert!(body.contains("##[endgroup]"));
        assert!(body.contains("\u{1b}[36;1m"), "script lines are coloured");
    }
    let flaky: Vec<&&str> = texts.iter().filter(|t| t.contains(FLAKE_MESSAGE)).collect();
    // A flake log names its failing test and ends with pytest's exit code 1; or its job hung on
    // the worker-thread test, `run-tests` interrupted pytest (`timeout`'s exit code 124), and
    // no pytest line names a failed test (three such jobs, one of which hung again when re-run:
    // four logs).
    let (named, hung): (Vec<&&str>, Vec<&&str>) = flaky
        .iter()
        .partition(|t| t.contains("FAILED tests/graph/"));
    assert!(
        named
            .iter()
            .all(|t| t.contains("##[error]Process completed with exit code 1."))
    );
    assert_eq!(hung.len(), 4);
    for t in &hung {
        assert!(t.contains("##[error]Process completed with exit code 124."));
        assert!(t.contains(" KeyboardInterrupt "));
        assert!(t.contains("PytestUnhandledThreadExceptionWarning"));
        assert!(!t.contains("FAILED"), "{t}");
    }
    assert!(flaky.iter().all(|t| t.contains("\u{1b}[31m")));
    for needle in [
        "Connection reset by peer",
        "Could not resolve host",
        "HTTP error 503",
        "The runner has received a shutdown signal",
        "ValueError: Cannot set NULL context as current",
        "Fatal Python error: Segmentation fault",
        "cl : Command line error D8021",
        "sccache: error: Server startup failed",
    ] {
        assert!(
            texts.iter().any(|t| t.contains(needle)),
            "no log mentions {needle}"
        );
    }
    let ipc = texts
        .iter()
        .filter(|t| t.contains("did not report readiness"))
        .count();
    assert_eq!(ipc, 2, "the unclassified IPC failure repeats");
    // The segfault's traceback lines are continuations: no timestamp.
    let segv = texts
        .iter()
        .find(|t| t.contains("Segmentation fault"))
        .unwrap();
    assert!(segv.lines().any(|l| l.starts_with("Current thread 0x")));
    // Job names and test ids vary per job.
    let flake_names: BTreeSet<&str> = flaky
        .iter()
        .filter_map(|t| {
            t.lines()
                .find_map(|l| l.split("Complete job name: ").nth(1))
        })
        .collect();
    assert!(flake_names.len() >= 5, "{flake_names:?}");
}

#[test]
#[ignore = "writes every log to $FLAKESTAT_DUMP for eyeballing"]
fn dump_logs() {
    let ds = dataset();
    let out = PathBuf::from(std::env::var("FLAKESTAT_DUMP").expect("set FLAKESTAT_DUMP"));
    std::fs::create_dir_all(&out).unwrap();
    for job in ds.jobs() {
        if let Some(text) = log_text(ds, job) {
            std::fs::write(out.join(format!("{}.log", job.id)), text).unwrap();
        }
    }
}

/// GET over a raw connection; returns status, headers (lower-case names) and body.
async fn http_get(url: &str) -> (u16, Vec<(String, String)>, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest.split_at(rest.find('/').unwrap());
    let mut stream = tokio::net::TcpStream::connect(host).await.unwrap();
    let req = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    stream.write_all(req.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.unwrap();
    let text = String::from_utf8(raw).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let headers = head
        .lines()
        .skip(1)
        .filter_map(|l| l.split_once(": "))
        .map(|(k, v)| (k.to_ascii_lowercase(), v.to_string()))
        .collect();
    (status, headers, body.to_string())
}

#[tokio::test]
async fn the_scenario_is_served_over_http() {
    let ds = dataset().clone();
    let since = t("2026-06-15T00:00:00Z");
    let expected = ds.runs.iter().filter(|r| r.run.created_at >= since).count();
    let gh = flakestat::fake::FakeGitHub::start(ds, flakestat::fake::Faults::default())
        .await
        .unwrap();
    let mut url = Some(format!(
        "{}/repos/NVIDIA/cuda-python/actions/workflows/ci.yml/runs?created=%3E%3D2026-06-15&per_page=100",
        gh.api_url()
    ));
    let mut ids = Vec::new();
    while let Some(u) = url.take() {
        let (status, headers, body) = http_get(&u).await;
        assert_eq!(status, 200);
        let page: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(page["total_count"].as_u64().unwrap() as usize, expected);
        ids.extend(
            page["workflow_runs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["id"].as_u64().unwrap()),
        );
        url = headers
            .iter()
            .find(|(k, _)| k == "link")
            .and_then(|(_, v)| v.split(", ").find(|p| p.ends_with("rel=\"next\"")))
            .map(|p| {
                p.split(';')
                    .next()
                    .unwrap()
                    .trim_matches(['<', '>'])
                    .to_string()
            });
    }
    assert_eq!(ids.len(), expected);
    // A flaky job's log arrives through the redirect, byte for byte.
    let (job, text) = dataset()
        .jobs()
        .find_map(|j| {
            log_text(dataset(), j)
                .filter(|l| l.contains(FLAKE_MESSAGE))
                .map(|l| (j.id, l))
        })
        .unwrap();
    let (status, headers, _) = http_get(&format!(
        "{}/repos/NVIDIA/cuda-python/actions/jobs/{job}/logs",
        gh.api_url()
    ))
    .await;
    assert_eq!(status, 302);
    let location = &headers.iter().find(|(k, _)| k == "location").unwrap().1;
    let (status, _, body) = http_get(location).await;
    assert_eq!(status, 200);
    assert_eq!(body, text);
}

#[tokio::test]
async fn a_day_later_brings_new_runs_a_completion_and_a_rerun() {
    use flakestat::fake::scenario::cuda_python::a_day_later;
    let mut ds = dataset().clone();
    let before_now = ds.now;
    let before_runs = ds.runs.len();
    let change = a_day_later(&mut ds);
    assert_eq!(ds.now, before_now + TimeDelta::days(1));
    assert_eq!(ds.runs.len(), before_runs + 2);
    assert!(ds.runs.iter().all(|r| r.run.is_completed()));

    let completed = ds.run(change.completed).unwrap();
    assert_eq!(completed.run.conclusion, Some(Conclusion::Failure));
    let flaky: Vec<&Job> = completed
        .all_jobs()
        .into_iter()
        .filter(|j| is_flake(&ds, j))
        .collect();
    assert_eq!(flaky.len(), 1);
    assert!(flaky[0].name.contains("3.14t"));
    let text = log_text(&ds, flaky[0]).unwrap();
    assert!(text.contains(&format!("Complete job name: {}", flaky[0].name)));
    let first_stamp = t(&text.trim_start_matches('\u{feff}')[..28]);
    assert!(first_stamp < flaky[0].started_at.unwrap());

    let rerun = ds.run(change.rerun).unwrap();
    let old = dataset().run(change.rerun).unwrap();
    assert_eq!(rerun.run.run_attempt, old.run.run_attempt + 1);
    assert_eq!(rerun.run.conclusion, Some(Conclusion::Success));
    assert!(rerun.run.created_at < before_now && rerun.run.updated_at > before_now);

    assert_eq!(change.new_runs.len(), 2);
    assert_eq!(change.new_hits.len(), 1);
    for id in &change.new_runs {
        let r = ds.run(*id).unwrap();
        assert!(r.run.created_at > before_now && r.run.created_at <= ds.now);
        assert!(ds.commit(&r.run.head_sha.0).is_some());
        let hit = r.all_jobs().iter().any(|j| is_flake(&ds, j));
        assert_eq!(hit, change.new_hits.contains(id));
    }
    let merge = ds.run(change.new_runs[0]).unwrap();
    assert_eq!(ds.resolve_ref("main").unwrap(), merge.run.head_sha);

    // Served: a created-filtered listing since the old `now` shows the new runs, not the re-run.
    let gh = flakestat::fake::FakeGitHub::start(ds, flakestat::fake::Faults::default())
        .await
        .unwrap();
    let since = before_now.format("%Y-%m-%dT%H:%M:%SZ");
    let (_, _, body) = http_get(&format!(
        "{}/repos/NVIDIA/cuda-python/actions/runs?created=%3E%3D{since}",
        gh.api_url()
    ))
    .await;
    let page: serde_json::Value = serde_json::from_str(&body).unwrap();
    let ids: BTreeSet<u64> = page["workflow_runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_u64().unwrap())
        .collect();
    let expected: BTreeSet<u64> = change.new_runs.iter().map(|r| r.0).collect();
    assert_eq!(ids, expected);
}

/// Issue 40: a run re-run to green at its Nth attempt is a job that failed at attempts 1 to
/// N-1 and passed at N ("re-run failed jobs" runs only the jobs that failed before), never
/// attempts that ran no job.
#[test]
fn every_rerun_to_green_attempt_count_is_the_attempts_that_ran_the_job() {
    let ds = dataset();
    let mut most = 0;
    for r in ds.runs.iter().filter(|r| r.run.run_attempt > 1) {
        for pair in r.attempts.windows(2) {
            let failed: BTreeSet<&str> = pair[0]
                .jobs
                .iter()
                .filter(|j| j.is_failed() || j.conclusion == Some("skipped".into()))
                .map(|j| j.name.as_str())
                .collect();
            assert!(
                !pair[1].jobs.is_empty(),
                "run {} attempt {} ran no job",
                r.run.id.0,
                pair[1].attempt
            );
            for j in &pair[1].jobs {
                assert!(
                    failed.contains(j.name.as_str()),
                    "run {} attempt {} re-ran {}, which had not failed",
                    r.run.id.0,
                    pair[1].attempt,
                    j.name
                );
            }
        }
        if r.run.conclusion == Some("success".into()) {
            // The job that failed first ran in every attempt, and passed only in the last.
            let first = r.attempts[0].jobs.iter().find(|j| j.is_failed()).unwrap();
            let ran: Vec<&Job> = r
                .all_jobs()
                .into_iter()
                .filter(|j| j.name == first.name)
                .collect();
            assert_eq!(ran.len() as u32, r.run.run_attempt, "run {}", r.run.id.0);
            assert!(ran[..ran.len() - 1].iter().all(|j| j.is_failed()));
            if r.all_jobs().iter().any(|j| is_flake(ds, j)) {
                most = most.max(ran.len());
            }
        }
    }
    assert_eq!(most, 6, "the story's run green only at its 6th attempt");
}
