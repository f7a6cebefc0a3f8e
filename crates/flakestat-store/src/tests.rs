use super::*;
use flakestat_core::model::{PrNumber, Sha, SignatureId, SignatureMatch, WorkflowId};

fn t(s: &str) -> Timestamp {
    s.parse().unwrap()
}

fn repo() -> Repo {
    Repo::parse("NVIDIA/cuda-python").unwrap()
}

/// A run of `repo()`'s CI workflow on main; a completed one failed.
pub(crate) fn run(id: u64, created: &str, attempt: u32, status: &str) -> Run {
    Run {
        id: RunId(id),
        workflow_id: WorkflowId(7),
        workflow_name: "CI".into(),
        workflow_path: ".github/workflows/ci.yml".into(),
        display_title: format!("run {id}"),
        event: "push".into(),
        head_branch: Some("main".into()),
        head_sha: Sha("a".repeat(40)),
        run_number: id,
        run_attempt: attempt,
        status: status.into(),
        conclusion: (status == "completed").then(|| "failure".into()),
        created_at: t(created),
        updated_at: t(created),
        run_started_at: Some(t(created)),
        html_url: String::new(),
        pull_requests: vec![],
        head_repository: None,
    }
}

fn job(id: u64, run: u64, attempt: u32, conclusion: &str) -> Job {
    Job {
        id: JobId(id),
        run_id: RunId(run),
        run_attempt: attempt,
        name: format!("test ({id})"),
        status: "completed".into(),
        conclusion: Some(conclusion.into()),
        created_at: t("2026-06-15T10:00:00Z"),
        started_at: None,
        completed_at: None,
        html_url: None,
        labels: Vec::new(),
        head_sha: Sha("a".repeat(40)),
    }
}

fn hit(sig: &str) -> Classification {
    Classification {
        matches: vec![SignatureMatch {
            signature: SignatureId(sig.into()),
            line: 3,
            lines: vec![3],
            text: "boom".into(),
            step: None,
            count: 1,
            tests: Default::default(),
        }],
        error_lines: vec![],
        ..Default::default()
    }
}

fn open() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    (dir, store)
}

/// A fresh store on every engine the tests reach: SQLite always, PostgreSQL when
/// `FLAKESTAT_TEST_POSTGRES` names a server (`.ci/postgres.sh start`), each in a schema of its
/// own; without it, says that the PostgreSQL half skipped.
pub(super) fn engines() -> Vec<(&'static str, Option<tempfile::TempDir>, Store)> {
    let dir = tempfile::tempdir().unwrap();
    let sqlite = Store::open(dir.path()).unwrap();
    let mut out = vec![("sqlite", Some(dir), sqlite)];
    match postgres_url() {
        Some(url) => {
            let url = PostgresUrl::parse(&url).unwrap();
            out.push(("postgres", None, Store::open_postgres(&url).unwrap()));
        }
        None => eprintln!("FLAKESTAT_TEST_POSTGRES is not set: the PostgreSQL store was skipped"),
    }
    out
}

/// The URL of a fresh store on the test server, if there is one.
pub(crate) fn postgres_url() -> Option<String> {
    let base = std::env::var("FLAKESTAT_TEST_POSTGRES")
        .ok()
        .filter(|v| !v.is_empty())?;
    Some(postgres::fresh_schema_url(&base).expect("a schema on FLAKESTAT_TEST_POSTGRES"))
}

#[test]
fn open_creates_private_versioned_store_and_reopens() {
    let dir = tempfile::tempdir().unwrap();
    let path = {
        let store = SqliteStore::open(dir.path()).unwrap();
        store.path().to_path_buf()
    };
    assert_eq!(path, dir.path().join("store-v1").join("flakestat.sqlite3"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dir.path().join("store-v1")), 0o700);
        assert_eq!(mode(&path), 0o600);
        // Issue 41 §8: a store others can read (made by hand, another umask) is made private
        // when it is opened, its WAL file too.
        let wal = dir.path().join("store-v1/flakestat.sqlite3-wal");
        for p in [&path, &wal] {
            if p.exists() {
                std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o644)).unwrap();
            }
        }
        drop(SqliteStore::open(dir.path()).unwrap());
        assert_eq!(mode(&path), 0o600);
        if wal.exists() {
            assert_eq!(mode(&wal), 0o600);
        }
    }
    let store = SqliteStore::open(dir.path()).unwrap();
    let version: u32 = store
        .conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);
}

/// A store file that is a symbolic link to a file not made yet is made `0600` through it, as a
/// store file of its own is.
#[cfg(unix)]
#[test]
fn a_store_linked_to_a_file_not_made_yet_is_made_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("elsewhere.sqlite3");
    std::fs::create_dir(dir.path().join("store-v1")).unwrap();
    let link = dir.path().join("store-v1/flakestat.sqlite3");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    drop(SqliteStore::open(dir.path()).unwrap());
    let mode = std::fs::metadata(&target).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

/// Where `another_process_opens_and_closes_the_store` finds the store it opens (set only by
/// the test that runs it as a child process).
const CHILD_STORE: &str = "FLAKESTAT_STORE_TEST_CHILD_STORE";

/// A second connection in one process (serve's queue writer beside its ingest's) leaves the
/// first one's locks in place: opening the store never opens and closes a descriptor of a file
/// SQLite holds locked, for closing any descriptor of a file drops every `fcntl` lock the
/// process holds on it. Without them another process took itself for the only one: it reset
/// the shared memory serve had mapped (serve died of SIGBUS in CI), and on closing it
/// checkpointed and deleted the WAL under serve.
#[cfg(unix)]
#[test]
fn a_second_connection_leaves_the_first_one_s_locks_to_other_processes() {
    let dir = tempfile::tempdir().unwrap();
    let first = SqliteStore::open(dir.path()).unwrap();
    let second = SqliteStore::open(dir.path()).unwrap();
    let wal = dir.path().join("store-v1/flakestat.sqlite3-wal");
    assert!(wal.exists(), "the store is in WAL mode");
    let ran = dir.path().join("child ran");
    let child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "tests::another_process_opens_and_closes_the_store",
            "--ignored",
            "--quiet",
        ])
        .env(CHILD_STORE, first.path())
        .output()
        .unwrap();
    assert!(child.status.success(), "{child:?}");
    assert!(
        ran.exists(),
        "the child process opened the store: {child:?}"
    );
    assert!(
        wal.exists(),
        "another process took itself for the store's last connection and removed its WAL"
    );
    for store in [&first, &second] {
        let version: u32 = store
            .conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap();
        assert_eq!(version, SCHEMA_VERSION);
    }
}

/// Run only as the child process of the test above: opens the store it names with SQLite
/// alone, reads it, closes it, and leaves a file beside the store's folder to say it ran.
#[test]
#[ignore = "a child process of a_second_connection_leaves_the_first_one_s_locks_to_other_processes"]
fn another_process_opens_and_closes_the_store() {
    let Some(path) = std::env::var_os(CHILD_STORE) else {
        return;
    };
    let path = PathBuf::from(path);
    let conn = Connection::open(&path).unwrap();
    let tables: i64 = conn
        .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
        .unwrap();
    assert!(tables > 0);
    drop(conn);
    let dir = path.parent().unwrap().parent().unwrap();
    std::fs::write(dir.join("child ran"), tables.to_string()).unwrap();
}

#[test]
fn a_store_from_a_newer_flakestat_is_refused() {
    let (dir, store) = open();
    store
        .sqlite()
        .unwrap()
        .conn
        .pragma_update(None, "user_version", SCHEMA_VERSION + 1)
        .unwrap();
    drop(store);
    let err = Store::open(dir.path()).unwrap_err();
    assert!(matches!(err, StoreError::TooNew { .. }), "{err}");
}

#[test]
fn runs_need_jobs_until_a_completed_attempt_is_stored() {
    for (engine, _dir, mut store) in engines() {
        eprintln!("engine: {engine}");
        let r = repo();
        let first = run(1, "2026-06-15T10:00:00Z", 1, "in_progress");
        assert_eq!(
            store.store_runs(&r, std::slice::from_ref(&first)).unwrap(),
            vec![RunId(1)]
        );
        store.store_jobs(RunId(1), 1, false, &[]).unwrap();
        // Still in progress when its jobs were fetched: ask again.
        assert_eq!(store.store_runs(&r, &[first]).unwrap(), vec![RunId(1)]);
        let done = run(1, "2026-06-15T10:00:00Z", 1, "completed");
        store.store_runs(&r, std::slice::from_ref(&done)).unwrap();
        store
            .store_jobs(RunId(1), 1, true, &[job(10, 1, 1, "failure")])
            .unwrap();
        assert!(store.store_runs(&r, &[done]).unwrap().is_empty());
        // A re-run makes a new attempt: its jobs are needed again.
        let rerun = run(1, "2026-06-15T10:00:00Z", 2, "completed");
        assert_eq!(store.store_runs(&r, &[rerun]).unwrap(), vec![RunId(1)]);
    }
}

/// A writer whose listing or download is older than what another writer stored meanwhile never
/// moves the store back: not a run's attempt or completion, not its jobs, not a stored log.
#[test]
fn an_older_writer_never_moves_a_run_its_jobs_or_a_stored_log_back() {
    for (engine, _dir, mut store) in engines() {
        let r = repo();
        let newer = run(1, "2026-06-15T10:00:00Z", 2, "completed");
        assert_eq!(store.store_runs(&r, &[newer]).unwrap(), vec![RunId(1)]);
        store
            .store_jobs(RunId(1), 2, true, &[job(20, 1, 2, "failure")])
            .unwrap();
        store
            .store_log(JobId(20), &LogEntry::Stored(compress_log(b"log\n")), None)
            .unwrap();
        // Another writer listed the run earlier: attempt 1, then attempt 2 still running.
        for older in [
            run(1, "2026-06-15T10:00:00Z", 1, "completed"),
            run(1, "2026-06-15T10:00:00Z", 2, "in_progress"),
        ] {
            assert!(
                store.store_runs(&r, &[older]).unwrap().is_empty(),
                "{engine}"
            );
        }
        store
            .store_jobs(RunId(1), 1, true, &[job(10, 1, 1, "failure")])
            .unwrap();
        store
            .store_jobs(RunId(1), 2, false, &[job(20, 1, 2, "in_progress")])
            .unwrap();
        store
            .store_log(JobId(20), &LogEntry::Expired, None)
            .unwrap();
        assert_eq!(store.run_attempt(RunId(1)).unwrap(), Some(2), "{engine}");
        let stored = &store.load_runs(&r).unwrap()[&RunId(1)];
        assert_eq!(stored.status.as_str(), "completed", "{engine}");
        // The earlier attempt's jobs are added; the completed attempt's are kept as they were.
        let jobs = store.load_run_jobs(RunId(1)).unwrap();
        let jobs: Vec<(u64, bool)> = jobs.iter().map(|j| (j.id.0, j.is_failed())).collect();
        assert_eq!(jobs, [(10, true), (20, true)], "{engine}");
        assert!(
            store
                .store_runs(&r, &[run(1, "2026-06-15T10:00:00Z", 2, "completed")])
                .unwrap()
                .is_empty(),
            "{engine}: its jobs are still the completed attempt's"
        );
        assert_eq!(
            store.load_log(JobId(20)).unwrap().unwrap(),
            b"log\n",
            "{engine}"
        );
    }
}

#[test]
fn logs_round_trip_and_leave_the_pending_list() {
    for (engine, _dir, mut store) in engines() {
        eprintln!("engine: {engine}");
        let r = repo();
        store
            .store_runs(&r, &[run(1, "2026-06-15T10:00:00Z", 1, "completed")])
            .unwrap();
        store
            .store_jobs(
                RunId(1),
                1,
                true,
                &[
                    job(10, 1, 1, "failure"),
                    job(11, 1, 1, "timed_out"),
                    job(12, 1, 1, "success"),
                    job(13, 1, 1, "failure"),
                ],
            )
            .unwrap();
        let (since, until) = (t("2026-06-15T00:00:00Z"), t("2026-06-16T00:00:00Z"));
        let pending = store.failed_jobs_without_log(&r, since, until).unwrap();
        assert_eq!(
            pending,
            vec![
                (RunId(1), JobId(10)),
                (RunId(1), JobId(11)),
                (RunId(1), JobId(13))
            ]
        );
        let raw = b"\xef\xbb\xbf2026-06-15T10:00:00.0000000Z boom\n".repeat(100);
        store
            .store_log(
                JobId(10),
                &LogEntry::Stored(compress_log(&raw)),
                Some(("fp1", &hit("x"))),
            )
            .unwrap();
        store
            .store_log(JobId(11), &LogEntry::Expired, None)
            .unwrap();
        assert_eq!(store.load_log(JobId(10)).unwrap().unwrap(), raw);
        assert_eq!(store.load_log(JobId(11)).unwrap(), None);
        assert_eq!(
            store.failed_jobs_without_log(&r, since, until).unwrap(),
            vec![(RunId(1), JobId(13))]
        );
        assert!(store.logs_to_classify(&r, "fp1").unwrap().is_empty());
        assert_eq!(store.logs_to_classify(&r, "fp2").unwrap(), vec![JobId(10)]);

        let hit_runs = store.runs_with_hits(&r, since, until, "fp1").unwrap();
        assert_eq!(
            hit_runs.iter().map(|r| r.id).collect::<Vec<_>>(),
            vec![RunId(1)]
        );
        assert!(
            store
                .runs_with_hits(&r, since, until, "fp2")
                .unwrap()
                .is_empty()
        );
        store
            .store_log(
                JobId(13),
                &LogEntry::Stored(compress_log(b"nothing")),
                Some(("fp2", &Classification::default())),
            )
            .unwrap();
        assert!(
            store
                .runs_with_hits(&r, since, until, "fp2")
                .unwrap()
                .is_empty(),
            "no match"
        );

        let snap = store.load_snapshot(&r, since, until, "fp1").unwrap();
        assert_eq!(snap.logs[&JobId(10)], LogStatus::Stored);
        assert_eq!(snap.logs[&JobId(11)], LogStatus::Expired);
        assert_eq!(snap.logs[&JobId(13)], LogStatus::Stored);
        assert!(!snap.logs.contains_key(&JobId(12)), "only failed jobs");
        assert_eq!(snap.classifications[&JobId(10)], hit("x"));
        let other = store.load_snapshot(&r, since, until, "fp2").unwrap();
        assert_eq!(
            other.classifications.keys().collect::<Vec<_>>(),
            vec![&JobId(13)],
            "only what was classified with that fingerprint"
        );
    }
}

#[test]
fn snapshot_takes_the_window_and_the_history_before_it() {
    for (engine, _dir, mut store) in engines() {
        eprintln!("engine: {engine}");
        let r = repo();
        let runs = [
            run(1, "2026-05-01T00:00:00Z", 1, "completed"), // too early
            run(2, "2026-06-05T00:00:00Z", 1, "completed"), // history
            run(4, "2026-06-15T00:00:00Z", 1, "completed"), // since, inclusive
            run(3, "2026-06-15T00:00:00Z", 1, "completed"), // same second: by id
            run(5, "2026-06-16T00:00:00Z", 1, "completed"), // until, exclusive
        ];
        store.store_runs(&r, &runs).unwrap();
        for (i, attempt) in [(4, 2), (4, 1)] {
            store
                .store_jobs(
                    RunId(i),
                    attempt,
                    true,
                    &[job(i * 10 + attempt as u64, i, attempt, "failure")],
                )
                .unwrap();
        }
        let other = Repo::parse("other/repo").unwrap();
        store
            .store_runs(&other, &[run(9, "2026-06-15T01:00:00Z", 1, "completed")])
            .unwrap();
        store.store_repo(&r, "main").unwrap();
        let snap = store
            .load_snapshot(
                &r,
                t("2026-06-15T00:00:00Z"),
                t("2026-06-16T00:00:00Z"),
                "fp",
            )
            .unwrap();
        let ids: Vec<u64> = snap.runs.iter().map(|r| r.id.0).collect();
        assert_eq!(ids, vec![2, 3, 4]);
        let jobs: Vec<(u32, u64)> = snap.jobs.iter().map(|j| (j.run_attempt, j.id.0)).collect();
        assert_eq!(jobs, vec![(1, 41), (2, 42)]);
        assert_eq!(snap.default_branch, "main");
    }
}

#[test]
fn pulls_keep_their_files_when_updated_without_them() {
    for (engine, _dir, mut store) in engines() {
        eprintln!("engine: {engine}");
        let r = repo();
        let pr = PullRequest {
            number: PrNumber(2371),
            title: "Bump".into(),
            state: "closed".into(),
            base_ref: "main".into(),
            head_ref: "bump".into(),
            merged_at: Some(t("2026-06-14T10:00:00Z")),
            merge_commit_sha: Some(Sha("b".repeat(40))),
            html_url: String::new(),
            files: None,
            head: None,
        };
        store.store_pulls(&r, std::slice::from_ref(&pr)).unwrap();
        store
            .store_pull_files(&r, PrNumber(2371), &["cuda/core.py".to_string()])
            .unwrap();
        store.store_pulls(&r, &[pr]).unwrap();
        let got = store.load_pull(&r, PrNumber(2371)).unwrap().unwrap();
        assert_eq!(got.files, Some(vec!["cuda/core.py".to_string()]));
    }
}

#[test]
fn windows_and_etags_are_remembered() {
    for (engine, _dir, mut store) in engines() {
        eprintln!("engine: {engine}");
        let r = repo();
        let (a, b, c) = (
            t("2026-06-15T00:00:00Z"),
            t("2026-06-15T12:00:00Z"),
            t("2026-06-16T00:00:00Z"),
        );
        let w = |since, until, runs| ListedWindow { since, until, runs };
        store.store_window(&r, "all", &w(a, c, 1500)).unwrap();
        store.store_window(&r, "all", &w(a, b, 700)).unwrap();
        store.store_window(&r, "all", &w(b, c, 800)).unwrap();
        assert_eq!(
            store.load_windows(&r, "all", a, c).unwrap(),
            vec![w(a, b, 700), w(b, c, 800)]
        );
        assert!(
            store
                .load_windows(&r, "wf:ci.yml", a, c)
                .unwrap()
                .is_empty()
        );
        store
            .store_response("https://x/1", "\"e1\"", b"body", a)
            .unwrap();
        store
            .store_response("https://x/2", "\"e2\"", b"old", a)
            .unwrap();
        store.touch_response("https://x/1", c).unwrap();
        assert_eq!(store.prune_responses(b).unwrap(), 1);
        assert!(store.cached_response("https://x/2").unwrap().is_none());
        let cached = store.cached_response("https://x/1").unwrap().unwrap();
        assert_eq!(
            (cached.etag.as_str(), &cached.body[..]),
            ("\"e1\"", &b"body"[..])
        );
    }
}

/// Two writers list overlapping windows: the later one replaces only the overlap, and what the
/// earlier one covered outside it stays covered (the runs it counted kept as an upper bound).
#[test]
fn a_listed_window_replaces_only_its_overlap_with_another_writers_windows() {
    for (engine, _dir, mut other) in engines() {
        let r = repo();
        let h = |hour: i64| t("2026-06-15T00:00:00Z") + chrono::TimeDelta::hours(hour);
        let w = |since, until, runs| ListedWindow { since, until, runs };
        other.store_window(&r, "all", &w(h(0), h(12), 10)).unwrap();
        other.store_window(&r, "all", &w(h(12), h(24), 20)).unwrap();
        other.store_window(&r, "all", &w(h(30), h(36), 7)).unwrap();
        let store = &mut other;
        store.store_window(&r, "all", &w(h(6), h(18), 5)).unwrap();
        assert_eq!(
            store.load_windows(&r, "all", h(0), h(48)).unwrap(),
            vec![
                w(h(0), h(6), 10),
                w(h(6), h(18), 5),
                w(h(18), h(24), 20),
                w(h(30), h(36), 7)
            ],
            "{engine}"
        );
        // One that covers another whole replaces it; one inside another splits it.
        store.store_window(&r, "all", &w(h(28), h(40), 9)).unwrap();
        store.store_window(&r, "all", &w(h(2), h(3), 1)).unwrap();
        assert_eq!(
            store.load_windows(&r, "all", h(0), h(48)).unwrap(),
            vec![
                w(h(0), h(2), 10),
                w(h(2), h(3), 1),
                w(h(3), h(6), 10),
                w(h(6), h(18), 5),
                w(h(18), h(24), 20),
                w(h(28), h(40), 9)
            ],
            "{engine}"
        );
    }
}

#[test]
fn the_snapshot_names_runs_without_jobs_and_windows_not_listed() {
    for (engine, _dir, mut store) in engines() {
        eprintln!("engine: {engine}");
        let r = repo();
        store.store_repo(&r, "main").unwrap();
        let runs = [
            run(1, "2026-06-15T01:00:00Z", 1, "completed"),
            run(2, "2026-06-15T02:00:00Z", 2, "completed"),
            run(3, "2026-06-15T03:00:00Z", 1, "completed"),
        ];
        store.store_runs(&r, &runs).unwrap();
        store
            .store_jobs(RunId(1), 1, true, &[job(10, 1, 1, "success")])
            .unwrap();
        // Run 2's jobs are stored for attempt 1 only: its attempt 2 is still to fetch.
        store
            .store_jobs(RunId(2), 1, true, &[job(20, 2, 1, "failure")])
            .unwrap();
        let window = |since: &str, until: &str| ListedWindow {
            since: t(since),
            until: t(until),
            runs: 1,
        };
        let (since, until) = (t("2026-06-15T00:00:00Z"), t("2026-06-17T00:00:00Z"));
        let snap = store.load_snapshot(&r, since, until, "fp").unwrap();
        // No listing finished (a survey stopped before its first one): nothing is covered.
        assert_eq!(snap.unlisted, vec![(since, until)]);
        assert_eq!(snap.surveyed_to, None);
        store
            .store_window(
                &r,
                "all",
                &window("2026-06-15T00:00:00Z", "2026-06-15T06:00:00Z"),
            )
            .unwrap();
        store
            .store_window(
                &r,
                "workflow=7 branch=main",
                &window("2026-06-15T12:00:00Z", "2026-06-16T00:00:00Z"),
            )
            .unwrap();
        // The history's and the fork PRs' listings list no runs: they cover nothing.
        for scope in [crate::mainline_scope("main"), "pull heads".to_string()] {
            store
                .store_window(
                    &r,
                    &scope,
                    &window("2026-06-01T00:00:00Z", "2026-06-30T00:00:00Z"),
                )
                .unwrap();
        }
        let snap = store.load_snapshot(&r, since, until, "fp").unwrap();
        let pending: Vec<u64> = snap.runs_without_jobs.iter().map(|r| r.0).collect();
        assert_eq!(pending, vec![2, 3]);
        // The gap between the windows, and what lies after the last one (never asked).
        assert_eq!(
            snap.unlisted,
            vec![
                (t("2026-06-15T06:00:00Z"), t("2026-06-15T12:00:00Z")),
                (t("2026-06-16T00:00:00Z"), until),
            ]
        );
        assert_eq!(snap.surveyed_to, Some(t("2026-06-16T00:00:00Z")));
        assert_eq!(
            store.surveyed_to(&r).unwrap(),
            Some(t("2026-06-16T00:00:00Z"))
        );
        // Before the first listing: not covered either.
        let early = store
            .load_snapshot(
                &r,
                t("2026-06-14T00:00:00Z"),
                t("2026-06-15T03:00:00Z"),
                "fp",
            )
            .unwrap();
        assert_eq!(
            early.unlisted,
            vec![(t("2026-06-14T00:00:00Z"), t("2026-06-15T00:00:00Z"))]
        );
    }
}

#[test]
fn gaps_are_what_the_windows_leave_uncovered() {
    assert_eq!(gaps(0, 10, &[]), vec![(0, 10)]);
    assert_eq!(gaps(0, 10, &[(0, 10)]), vec![]);
    assert_eq!(gaps(0, 10, &[(-5, 3), (2, 4), (6, 20)]), vec![(4, 6)]);
    assert_eq!(gaps(0, 10, &[(3, 4)]), vec![(0, 3), (4, 10)]);
    assert_eq!(gaps(5, 5, &[]), vec![]);
}

#[test]
fn what_a_stopped_survey_left_out_is_left_out_of_the_analysis() {
    for (engine, _dir, mut store) in engines() {
        eprintln!("engine: {engine}");
        let r = repo();
        store.store_repo(&r, "main").unwrap();
        let runs = [
            run(1, "2026-06-15T01:00:00Z", 1, "completed"), // complete
            run(2, "2026-06-15T02:00:00Z", 1, "completed"), // no jobs yet
            run(3, "2026-06-15T03:00:00Z", 1, "completed"), // a failed job's log not fetched
            run(4, "2026-06-15T08:00:00Z", 1, "completed"), // in a window not listed
            run(5, "2026-06-15T13:00:00Z", 1, "completed"), // complete
        ];
        store.store_runs(&r, &runs).unwrap();
        for (id, conclusion) in [
            (1, "failure"),
            (3, "failure"),
            (4, "success"),
            (5, "success"),
        ] {
            store
                .store_jobs(RunId(id), 1, true, &[job(id * 10, id, 1, conclusion)])
                .unwrap();
        }
        store
            .store_log(JobId(10), &LogEntry::Expired, None)
            .unwrap();
        let listed = |since: &str, until: &str| ListedWindow {
            since: t(since),
            until: t(until),
            runs: 1,
        };
        store
            .store_window(
                &r,
                "all",
                &listed("2026-06-15T00:00:00Z", "2026-06-15T06:00:00Z"),
            )
            .unwrap();
        store
            .store_window(
                &r,
                "all",
                &listed("2026-06-15T12:00:00Z", "2026-06-16T00:00:00Z"),
            )
            .unwrap();
        let (since, until) = (t("2026-06-15T00:00:00Z"), t("2026-06-16T00:00:00Z"));
        let snap = store.load_snapshot(&r, since, until, "fp").unwrap();
        let (part, c) = flakestat_core::analysis::complete_part(&snap);
        assert_eq!(
            (
                c.runs_listed,
                c.runs_pending,
                c.logs_pending,
                c.runs_left_out
            ),
            (5, 1, 1, 3)
        );
        assert!(!c.is_complete());
        let kept: Vec<u64> = part.runs.iter().map(|r| r.id.0).collect();
        assert_eq!(kept, vec![1, 5]);
        assert!(part.jobs.iter().all(|j| [1, 5].contains(&j.run_id.0)));
        // What is left is complete: analysing it leaves nothing more out.
        let (again, c) = flakestat_core::analysis::complete_part(&part);
        assert!(c.is_complete());
        assert_eq!(again.runs.len(), 2);
        let data = flakestat_core::analysis::analyze(&snap, &[], &Default::default());
        assert_eq!(data.runs_total, 2);
        assert_eq!(data.jobs_failed, 1);
    }
}

/// The PostgreSQL store keeps its version like SQLite's `user_version`: a store made by a newer
/// flakestat is refused, a schema holding other tables is not written into, two processes
/// creating one store at once make it once, and the password is in no message.
#[test]
fn a_postgres_store_is_versioned_and_refuses_what_it_did_not_make() {
    let Some(url) = postgres_url() else {
        eprintln!("FLAKESTAT_TEST_POSTGRES is not set: skipped");
        return;
    };
    let parsed = PostgresUrl::parse(&url).unwrap();
    // Two at once: one migrates, the other waits and finds it done.
    let opened: Vec<Store> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|_| s.spawn(|| Store::open_postgres(&parsed).unwrap()))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let pg = opened[0].postgres().unwrap();
    let version: i32 = pg
        .with_client(|c| {
            Ok(c.query_one("SELECT version FROM flakestat_schema", &[])?
                .get(0))
        })
        .unwrap();
    assert_eq!(version as u32, SCHEMA_VERSION);
    let rows: i64 = pg
        .with_client(|c| {
            Ok(c.query_one("SELECT count(*) FROM flakestat_schema", &[])?
                .get(0))
        })
        .unwrap();
    assert_eq!(rows, 1);
    pg.with_client(|c| Ok(c.execute("UPDATE flakestat_schema SET version = version + 1", &[])?))
        .unwrap();
    drop(opened);
    let err = Store::open_postgres(&parsed).unwrap_err();
    assert!(
        matches!(err, StoreError::PostgresTooNew { found, .. } if found == SCHEMA_VERSION + 1),
        "{err}"
    );

    // Another program's tables: never written into.
    let other = postgres_url().unwrap();
    let other = PostgresUrl::parse(&other).unwrap();
    let conn = postgres::Conn::open(&other, "test").unwrap();
    conn.call(|c| Ok(c.batch_execute("CREATE TABLE invoices (id INTEGER)")?))
        .unwrap();
    let err = Store::open_postgres(&other).unwrap_err();
    assert!(matches!(err, StoreError::PostgresNotAStore { .. }), "{err}");
    let tables: i64 = conn
        .call(|c| {
            Ok(c.query_one(
                "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()",
                &[],
            )?
            .get(0))
        })
        .unwrap();
    assert_eq!(tables, 1, "nothing created next to another program's table");

    // A wrong password: refused, and the message shows neither password.
    let password = parsed_password(&url);
    let wrong = url.replacen(&format!(":{password}@"), ":not-the-password@", 1);
    let err = Store::open_postgres(&PostgresUrl::parse(&wrong).unwrap()).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, StoreError::PostgresConnect { .. }), "{text}");
    assert!(!text.contains("not-the-password"), "{text}");
    assert!(!text.contains(&password), "{text}");
    assert!(text.contains(":***@"), "{text}");
}

fn parsed_password(url: &str) -> String {
    let after = &url[url.find("://").unwrap() + 3..];
    let userinfo = &after[..after
        .find('@')
        .expect("the test server's URL has a password")];
    userinfo[userinfo.find(':').unwrap() + 1..].to_string()
}

/// The one migration list makes the same tables on both engines: every table and column in
/// the same order, their types the same modulo the substitutions (`BIGINT`, `BOOLEAN` →
/// `INTEGER`, `BYTEA` → `BLOB`). PostgreSQL's own are left out: its version table, and `seq`,
/// which stands for SQLite's `rowid`.
#[test]
fn both_engines_migrate_to_the_same_tables_and_columns() {
    let described: Vec<_> = engines()
        .into_iter()
        .map(|(engine, _dir, store)| {
            let sql = match engine {
                "sqlite" => {
                    "SELECT m.name, p.name, p.type FROM sqlite_master m, pragma_table_info(m.name) p
                     WHERE m.type = 'table' ORDER BY m.name, p.cid"
                }
                _ => {
                    "SELECT table_name::text, column_name::text, upper(data_type::text)
                     FROM information_schema.columns WHERE table_schema = current_schema()
                       AND table_name <> 'flakestat_schema' AND column_name <> 'seq'
                     ORDER BY table_name, ordinal_position"
                }
            };
            let mut columns: Vec<(String, String, String)> = store
                .db()
                .query_map(sql, params![], |r| {
                    let ty: String = r.get(2)?;
                    let ty = match ty.as_str() {
                        "BIGINT" | "BOOLEAN" => "INTEGER".to_string(),
                        "BYTEA" => "BLOB".to_string(),
                        _ => ty,
                    };
                    Ok((r.get(0)?, r.get(1)?, ty))
                })
                .unwrap();
            // By table without the server's collation; each table's columns stay in order.
            columns.sort_by(|a, b| a.0.cmp(&b.0));
            (engine, columns)
        })
        .collect();
    let (_, sqlite) = &described[0];
    assert!(
        sqlite.contains(&("runs".into(), "jobs_completed".into(), "INTEGER".into())),
        "{sqlite:?}"
    );
    assert_eq!(
        sqlite.iter().filter(|(t, ..)| t == "webhook_queue").count(),
        12
    );
    for (engine, columns) in &described[1..] {
        assert_eq!(columns, sqlite, "{engine}");
    }
}

mod contention;
mod statements;

/// Where jobs ran: the listing's runner is stored with the jobs (a later listing naming none
/// keeps it), a stored log's preamble is read by the re-reading pass once, with no request,
/// and both reach the snapshot's placements on every engine.
#[test]
fn runners_and_preambles_reach_the_snapshot() {
    for (engine, _dir, store) in engines() {
        eprintln!("engine: {engine}");
        let r = repo();
        let mut s = store;
        s.store_runs(&r, &[run(1, "2026-06-15T10:00:00Z", 1, "completed")])
            .unwrap();
        let jobs = [job(10, 1, 1, "failure"), job(11, 1, 1, "success")];
        let runners = BTreeMap::from([
            (
                JobId(10),
                Runner {
                    name: Some("gpu-l4-03".into()),
                    group: Some("nv-gpu".into()),
                },
            ),
            (
                JobId(11),
                Runner {
                    name: Some("gpu-l4-01".into()),
                    group: Some("nv-gpu".into()),
                },
            ),
        ]);
        s.store_jobs_with_runners(RunId(1), 1, true, &jobs, &runners)
            .unwrap();
        // An older listing without runners (or a store_jobs caller) forgets nothing.
        s.store_jobs(RunId(1), 1, true, &jobs).unwrap();
        let raw = "2026-06-15T10:00:00.0000000Z Current runner version: '2.330.0'
2026-06-15T10:00:00.0000000Z Runner name: 'gpu-l4-03'
2026-06-15T10:00:00.0000000Z Machine name: 'node-17'
2026-06-15T10:00:01.0000000Z boom
";
        s.store_log(
            JobId(10),
            &LogEntry::Stored(compress_log(raw.as_bytes())),
            None,
        )
        .unwrap();
        let store = crate::StoreHandle::new(s);
        assert_eq!(
            reread_preambles(&store, &r).unwrap(),
            1,
            "{engine}: one log"
        );
        assert_eq!(
            reread_preambles(&store, &r).unwrap(),
            0,
            "{engine}: read once"
        );
        let (since, until) = (t("2026-06-15T00:00:00Z"), t("2026-06-16T00:00:00Z"));
        let snap = store
            .blocking(|s| s.load_snapshot(&r, since, until, "fp"))
            .unwrap();
        let failed = &snap.placements[&JobId(10)];
        assert_eq!(failed.runner, runners[&JobId(10)], "{engine}");
        let preamble = failed.preamble.as_ref().unwrap();
        assert_eq!(preamble.machine.as_deref(), Some("node-17"));
        assert_eq!(preamble.runner_version.as_deref(), Some("2.330.0"));
        let passed = &snap.placements[&JobId(11)];
        assert_eq!(passed.runner, runners[&JobId(11)]);
        assert_eq!(passed.preamble, None, "{engine}: no log, no preamble");
    }
}

/// Several processes opening a new store at once (two nightlies on one fresh cache) all get
/// it: the loser of the race to switch the file to WAL, which SQLite answers `SQLITE_BUSY`
/// without its busy handler, asks again.
#[test]
fn many_openers_of_a_new_store_at_once_all_open_it() {
    for round in 0..20 {
        let dir = tempfile::tempdir().unwrap();
        let barrier = std::sync::Barrier::new(8);
        let failures: Vec<String> = std::thread::scope(|scope| {
            let opened: Vec<_> = (0..8)
                .map(|_| {
                    let (dir, barrier) = (dir.path(), &barrier);
                    scope.spawn(move || {
                        barrier.wait();
                        crate::Store::open(dir).err().map(|e| e.to_string())
                    })
                })
                .collect();
            opened
                .into_iter()
                .filter_map(|h| h.join().unwrap())
                .collect()
        });
        assert!(failures.is_empty(), "round {round}: {failures:?}");
    }
}
