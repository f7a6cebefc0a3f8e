//! insta snapshots of every user-facing error: at least one per documented exit code (README,
//! `src/exit.rs`) and each distinct message of invalid input, each with its command line, exit
//! code, stdout and stderr (`common::transcript`). The real binary, in the repository's root,
//! against a small synthetic dataset (replayed, or served by the fake GitHub on 127.0.0.1 where a
//! status code is the point). Masked: temporary folders (`[TMP]`), the fake's port (`[PORT]`), a
//! pid, and the wall-clock time the rate limit's message quotes (`[TIME]`).
//!
//! Review a change with `cargo insta review` (README, "Developing").

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use flakestat::fake::scenario::{SyntheticSpec, synthetic};
use flakestat::fake::{Dataset, FakeGitHub, Faults, RouteKind};

use crate::common::{copy_dir, signatures, snapshot_flakestat, snapshot_settings, transcript};

const REPO: &str = "octo/demo";
const SINCE: &str = "2026-06-01";
const UNTIL: &str = "2026-06-03";
const TOKEN: &str = "snap-token";

/// The small dataset the fake serves: 20 runs of `octo/demo`, a token required.
fn dataset() -> Dataset {
    let mut ds = synthetic(&SyntheticSpec {
        runs: 20,
        ..SyntheticSpec::default()
    });
    ds.auth.tokens = vec![TOKEN.into()];
    ds
}

/// The dataset saved for `--replay`.
fn replay_dir() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        dataset().save_json(dir.path()).unwrap();
        dir
    })
    .path()
}

/// A store with the dataset surveyed, as a template: cases that need a store copy it.
fn surveyed() -> &'static Path {
    static STORE: OnceLock<tempfile::TempDir> = OnceLock::new();
    STORE
        .get_or_init(|| {
            let store = tempfile::tempdir().unwrap();
            let args = [
                "survey",
                "--replay",
                replay_dir().to_str().unwrap(),
                "--since",
                SINCE,
                "--until",
                UNTIL,
                "--cache-dir",
                store.path().to_str().unwrap(),
                "--format",
                "json",
                "-q",
            ];
            let out = flakestat(&args).output().unwrap();
            assert!(out.status.success(), "{}", transcript(&args, &out));
            store
        })
        .path()
}

/// A copy of the surveyed store in `tmp/cache`.
fn store_copy(tmp: &Path) -> PathBuf {
    let cache = tmp.join("cache");
    copy_dir(surveyed(), &cache);
    cache
}

fn flakestat(args: &[&str]) -> Command {
    snapshot_flakestat(args)
}

/// A fake GitHub serving `ds` on 127.0.0.1 from its own thread.
fn fake(ds: Dataset, faults: Faults) -> FakeGitHub {
    FakeGitHub::start_blocking(ds, faults).expect("the fake GitHub starts")
}

/// Runs `args` (with `token` as `GH_TOKEN`, if any), checks the exit code and that stderr says
/// something, and snapshots the transcript as `name`.
fn check(name: &str, code: i32, args: &[&str], token: Option<&str>, tmp: &Path) -> Output {
    let mut cmd = flakestat(args);
    if let Some(token) = token {
        cmd.env("GH_TOKEN", token);
    }
    let out = cmd.output().expect("the binary runs");
    snap(name, code, args, &out, tmp);
    out
}

fn snap(name: &str, code: i32, args: &[&str], out: &Output, tmp: &Path) {
    let text = transcript(args, out);
    assert_eq!(out.status.code(), Some(code), "{name}: {text}");
    // Most say why on stderr; `signatures check` and `audit --strict` list their findings on
    // stdout.
    assert!(
        !(out.stderr.is_empty() && out.stdout.is_empty()),
        "{name}: a failure says why: {text}"
    );
    assert!(
        !text.contains(TOKEN),
        "{name}: the token is never printed: {text}"
    );
    let mut settings = snapshot_settings(&[(tmp, "[TMP]"), (replay_dir(), "[DATASET]")]);
    settings.add_filter(r"127\.0\.0\.1:\d+", "127.0.0.1:[PORT]");
    settings.add_filter(r"\bpid \d+", "pid [PID]");
    // The message that quotes the wall clock: the rate limit's reset.
    if name == "github_rate_limit_spent" {
        settings.add_filter(
            r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2})?(Z| UTC)",
            "[TIME]",
        );
    }
    settings.bind(|| insta::assert_snapshot!(name, text));
}

/// Exit 2: command-line usage (clap's own messages).
#[test]
fn usage_errors_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    check("usage_missing_arguments", 2, &["report"], None, t);
    check("usage_unknown_command", 2, &["frobnicate"], None, t);
    check(
        "usage_bad_format",
        2,
        &["report", "--repo", REPO, "--since", "7d", "--format", "pdf"],
        None,
        t,
    );
    check(
        "usage_min_jobs_zero",
        2,
        &[
            "suggest",
            "--repo",
            REPO,
            "--since",
            "7d",
            "--min-jobs",
            "0",
        ],
        None,
        t,
    );
}

/// Exit 3: malformed times and windows, a repository that is not OWNER/NAME, bad durations.
#[test]
fn malformed_times_and_names_exit_3() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let cache = t.join("cache");
    let cache = cache.to_str().unwrap();
    let offline = |extra: &[&'static str]| -> Vec<&str> {
        let mut args = vec!["survey", "--offline", "--cache-dir", cache];
        args.extend_from_slice(extra);
        args
    };
    check(
        "bad_since",
        3,
        &offline(&["--repo", REPO, "--since", "yesterday"]),
        None,
        t,
    );
    check(
        "bad_until",
        3,
        &offline(&["--repo", REPO, "--since", "7d", "--until", "soon"]),
        None,
        t,
    );
    check(
        "empty_window",
        3,
        &offline(&[
            "--repo",
            REPO,
            "--since",
            "2026-06-16",
            "--until",
            "2026-06-14",
        ]),
        None,
        t,
    );
    check(
        "bad_repo",
        3,
        &offline(&["--repo", "not-a-repo", "--since", "1d"]),
        None,
        t,
    );
    check(
        "bad_wait",
        3,
        &offline(&["--repo", REPO, "--since", "1d", "--wait", "a while"]),
        None,
        t,
    );
    check(
        "report_bad_repo",
        3,
        &[
            "report",
            "--repo",
            "octo",
            "--since",
            "7d",
            "--cache-dir",
            cache,
        ],
        None,
        t,
    );
    check(
        "nightly_bad_until",
        3,
        &[
            "nightly",
            "--repo",
            REPO,
            "--offline",
            "--until",
            "tomorrow",
            "--cache-dir",
            cache,
        ],
        None,
        t,
    );
    check(
        "nightly_empty_period",
        3,
        &[
            "nightly",
            "--repo",
            REPO,
            "--offline",
            "--until",
            "2026-06-02T00:00:00Z",
            "--since",
            "2026-06-03",
            "--cache-dir",
            cache,
        ],
        None,
        t,
    );
    check(
        "nightly_bad_baseline",
        3,
        &[
            "nightly",
            "--repo",
            REPO,
            "--offline",
            "--baseline",
            "forever",
            "--cache-dir",
            cache,
        ],
        None,
        t,
    );
    check(
        "nightly_bad_comment_target",
        3,
        &[
            "nightly",
            "--repo",
            REPO,
            "--since",
            "24h",
            "--post-comment",
            "octo/demo",
            "--cache-dir",
            cache,
        ],
        Some(TOKEN),
        t,
    );
}

/// Exit 3: a broken signature file (every problem, with file, line and key), a folder without
/// one, failing examples, a broken `flakestat.toml`, an unknown `--signature`, a file that is
/// not a PyTorch ruleset.
#[test]
fn broken_signatures_and_config_exit_3() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let broken = t.join("broken");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(
        broken.join("good.toml"),
        "title = 'Good'\npattern = 'good'\n",
    )
    .unwrap();
    std::fs::write(
        broken.join("unknown-key.toml"),
        "title = 'x'\npattern = 'x'\nissues = 'https://x'\n",
    )
    .unwrap();
    std::fs::write(broken.join("missing.toml"), "pattern = 'x'\n").unwrap();
    std::fs::write(
        broken.join("bad-regex.toml"),
        "title = 'x'\npattern = 'a(b'\n",
    )
    .unwrap();
    let broken_s = broken.to_str().unwrap();
    check(
        "signatures_check_broken",
        3,
        &["signatures", "check", "--signatures", broken_s],
        None,
        t,
    );
    check(
        "classify_with_broken_signatures",
        3,
        &[
            "classify",
            "--signatures",
            broken_s,
            "fixtures/logs/network-error.log",
        ],
        None,
        t,
    );

    let failing = t.join("failing");
    std::fs::create_dir_all(&failing).unwrap();
    std::fs::write(
        failing.join("timeout.toml"),
        "title = 'Timeout'\npattern = 'timed out'\n[examples]\nmatch = ['deadline exceeded']\nno_match = ['the test timed out politely']\n",
    )
    .unwrap();
    check(
        "signatures_check_failing_examples",
        3,
        &[
            "signatures",
            "check",
            "--signatures",
            failing.to_str().unwrap(),
        ],
        None,
        t,
    );

    let empty = t.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    check(
        "no_signature_files",
        3,
        &[
            "classify",
            "--signatures",
            empty.to_str().unwrap(),
            "fixtures/logs/network-error.log",
        ],
        None,
        t,
    );

    let cache = store_copy(t);
    let cache = cache.to_str().unwrap();
    let report = |extra: &[&str]| -> Vec<String> {
        let mut args: Vec<String> = [
            "report",
            "--repo",
            REPO,
            "--since",
            SINCE,
            "--until",
            UNTIL,
            "--cache-dir",
            cache,
            "--format",
            "markdown",
        ]
        .map(String::from)
        .to_vec();
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    };
    let config = t.join("flakestat.toml");
    std::fs::write(
        &config,
        "[matrix]\npatterns = ['(?P<python>3\\.\\d+']\n[cost]\ngpu_per_hour = 'cheap'\n",
    )
    .unwrap();
    let args = report(&["--config", config.to_str().unwrap()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    check("broken_config", 3, &args, None, t);

    let args = report(&["--signature", "no-such-signature"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    check("unknown_signature", 3, &args, None, t);

    let args = report(&["--signatures", broken_s]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    check("report_with_broken_signatures", 3, &args, None, t);

    let not_rules = t.join("rules.toml");
    std::fs::write(&not_rules, "title = 'a signature, not a ruleset'\n").unwrap();
    let into = t.join("imported");
    check(
        "import_not_a_ruleset",
        3,
        &[
            "signatures",
            "import",
            "--format",
            "pytorch",
            "--output",
            into.to_str().unwrap(),
            not_rules.to_str().unwrap(),
        ],
        None,
        t,
    );
}

/// Exit 3: inputs `classify` cannot read (missing, binary), given alongside a good log; stdin
/// twice.
#[test]
fn unreadable_logs_exit_3() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let gz = t.join("job.log.gz");
    let mut bytes = vec![0x1f, 0x8b, 0x08, 0x00];
    bytes.extend((0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8));
    std::fs::write(&gz, bytes).unwrap();
    let missing = t.join("no-such.log");
    check(
        "classify_unreadable_and_binary",
        3,
        &[
            "classify",
            "--signatures",
            "signatures",
            "fixtures/logs/network-error.log",
            missing.to_str().unwrap(),
            gz.to_str().unwrap(),
        ],
        None,
        t,
    );
    check(
        "classify_stdin_twice",
        3,
        &["classify", "--signatures", "signatures", "-", "-"],
        None,
        t,
    );
}

/// Exit 3: `--api-url` malformed, not http(s), or plain http to another machine with a token.
#[test]
fn api_urls_refused_exit_3() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let cache = t.join("cache");
    let survey = |url: &'static str| -> Vec<String> {
        [
            "survey",
            "--repo",
            REPO,
            "--since",
            SINCE,
            "--until",
            UNTIL,
            "--api-url",
            url,
            "--cache-dir",
            cache.to_str().unwrap(),
        ]
        .map(String::from)
        .to_vec()
    };
    for (name, url) in [
        ("api_url_malformed", "http://exa mple.com"),
        ("api_url_no_scheme", "api.github.com"),
        ("api_url_not_http", "ftp://example.com/api"),
        (
            "api_url_plain_http_with_token",
            "http://192.0.2.1:8080/api/v3",
        ),
    ] {
        let args = survey(url);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        check(name, 3, &args, Some(TOKEN), t);
    }
}

/// Exits 4, 5, 6, 7: what GitHub (the fake) answers, and a host that does not.
#[test]
fn github_failures_exit_4_5_6_7() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let gh = fake(dataset(), Faults::default());
    let api = gh.api_url();
    let survey = |repo: &str, api: &str, cache: &str| -> Vec<String> {
        [
            "survey",
            "--repo",
            repo,
            "--since",
            SINCE,
            "--until",
            UNTIL,
            "--api-url",
            api,
            "--cache-dir",
            cache,
            "--max-retries",
            "0",
            "-q",
        ]
        .map(String::from)
        .to_vec()
    };
    let cache = t.join("cache");
    let cache = cache.to_str().unwrap();
    let args = survey(REPO, &api, cache);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    check("github_bad_token", 4, &args, Some("wrong-token"), t);

    let args = survey("octo/nope", &api, cache);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    check("github_unknown_repository", 5, &args, Some(TOKEN), t);

    let limited = fake(
        dataset(),
        Faults {
            rate_limit: Some(3),
            ..Faults::default()
        },
    );
    let limited_cache = t.join("limited");
    let args = survey(REPO, &limited.api_url(), limited_cache.to_str().unwrap());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    check("github_rate_limit_spent", 6, &args, Some(TOKEN), t);

    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let args = survey(REPO, &format!("http://{closed}"), cache);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    check("github_unreachable", 7, &args, Some(TOKEN), t);
}

/// Exit 8: the store cannot be created, is not a flakestat store, is damaged, was made by a
/// newer flakestat, or is busy (another writer's transaction outlasted the 30 s a write waits).
#[test]
fn store_failures_exit_8() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let report = |cache: &Path| -> Vec<String> {
        [
            "report",
            "--repo",
            REPO,
            "--since",
            SINCE,
            "--until",
            UNTIL,
            "--cache-dir",
            cache.to_str().unwrap(),
            "--format",
            "json",
        ]
        .map(String::from)
        .to_vec()
    };
    let db = |cache: &Path| cache.join("store-v1/flakestat.sqlite3");

    let file = t.join("a-file");
    std::fs::write(&file, "").unwrap();
    // `report` never makes a store ("no store at", report_missing_store); a survey does.
    let mut args = report(&file.join("cache"));
    args[0] = "survey".into();
    args.push("--offline".into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    check("store_cannot_be_created", 8, &args, None, t);

    let garbage = t.join("garbage");
    std::fs::create_dir_all(garbage.join("store-v1")).unwrap();
    std::fs::write(db(&garbage), "not the bytes of a database\n".repeat(200)).unwrap();
    let args = report(&garbage);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    check("store_not_a_store", 8, &args, None, t);

    let newer = t.join("newer");
    copy_dir(surveyed(), &newer);
    rusqlite::Connection::open(db(&newer))
        .unwrap()
        .pragma_update(None, "user_version", 99)
        .unwrap();
    let args = report(&newer);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    check("store_newer_schema", 8, &args, None, t);

    let damaged = t.join("damaged");
    copy_dir(surveyed(), &damaged);
    let mut bytes = std::fs::read(db(&damaged)).unwrap();
    bytes[100..4096].fill(0x41);
    std::fs::write(db(&damaged), &bytes).unwrap();
    let args = report(&damaged);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    check("store_damaged", 8, &args, None, t);

    // Another writer holds a write transaction longer than a write waits (30 s): the store is
    // busy. (No lock is held for a whole survey any more: only this makes exit 8 for a store
    // that works.)
    let busy = t.join("busy");
    copy_dir(surveyed(), &busy);
    let other = rusqlite::Connection::open(db(&busy)).unwrap();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    let args = [
        "survey",
        "--replay",
        replay_dir().to_str().unwrap(),
        "--since",
        SINCE,
        "--until",
        UNTIL,
        "--cache-dir",
        busy.to_str().unwrap(),
    ];
    check("store_busy", 8, &args, None, t);
    other.execute_batch("ROLLBACK").unwrap();
}

/// Exit 2: a store that holds nothing for the repository (`report`, `suggest`), and an
/// `--output` that cannot be written.
#[test]
fn missing_store_and_unwritable_output_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let empty = t.join("empty-cache");
    for command in ["report", "suggest"] {
        let args = [
            command,
            "--repo",
            REPO,
            "--since",
            SINCE,
            "--until",
            UNTIL,
            "--cache-dir",
            empty.to_str().unwrap(),
        ];
        check(&format!("{command}_missing_store"), 2, &args, None, t);
    }
    let cache = store_copy(t);
    let output = t.join("no-such-folder/report.md");
    let args = [
        "report",
        "--repo",
        REPO,
        "--since",
        SINCE,
        "--until",
        UNTIL,
        "--cache-dir",
        cache.to_str().unwrap(),
        "--output",
        output.to_str().unwrap(),
    ];
    check("report_unwritable_output", 2, &args, None, t);
}

/// Exit 9: a report over a window no survey listed says what is missing, first.
#[test]
fn incomplete_store_exit_9() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let gh = fake(dataset(), Faults::default());
    let api = gh.api_url();
    let cache = t.join("cache");
    let cache = cache.to_str().unwrap();
    // Lists [2026-06-02, 2026-06-17): the window and the 14 days of history before it; the
    // report's window starts a day earlier.
    let args = [
        "survey",
        "--repo",
        REPO,
        "--since",
        "2026-06-16",
        "--until",
        "2026-06-17",
        "--api-url",
        &api,
        "--cache-dir",
        cache,
        "--format",
        "json",
        "-q",
    ];
    let out = flakestat(&args).env("GH_TOKEN", TOKEN).output().unwrap();
    assert!(out.status.success(), "{}", transcript(&args, &out));
    let args = [
        "report",
        "--repo",
        REPO,
        "--since",
        SINCE,
        "--until",
        UNTIL,
        "--cache-dir",
        cache,
        "--format",
        "markdown",
    ];
    check("report_incomplete", 9, &args, None, t);
}

/// Exit 10: `signatures audit --strict` with a signature that claims every error line.
#[test]
fn audit_strict_alarm_exit_10() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let planted = t.join("planted");
    copy_dir(&signatures(), &planted);
    std::fs::write(
        planted.join("any-error.toml"),
        "title = \"Anything that says error\"\npattern = '(?i)error'\n",
    )
    .unwrap();
    let cache = store_copy(t);
    let args = [
        "signatures",
        "audit",
        "--repo",
        REPO,
        "--since",
        SINCE,
        "--until",
        UNTIL,
        "--signatures",
        planted.to_str().unwrap(),
        "--cache-dir",
        cache.to_str().unwrap(),
        "--strict",
    ];
    check("audit_strict_alarm", 10, &args, None, t);
}

/// Exit 130: Ctrl-C during a survey (the fake answers slowly so the signal lands mid-way).
#[cfg(unix)]
#[test]
fn interrupted_survey_exit_130() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let mut ds = synthetic(&SyntheticSpec {
        runs: 150,
        ..SyntheticSpec::default()
    });
    ds.auth.tokens = vec![TOKEN.into()];
    let gh = fake(
        ds,
        Faults {
            latency: Duration::from_millis(30),
            ..Faults::default()
        },
    );
    let api = gh.api_url();
    let cache = t.join("cache");
    let args = [
        "survey",
        "--repo",
        REPO,
        "--since",
        SINCE,
        "--until",
        UNTIL,
        "--api-url",
        &api,
        "--cache-dir",
        cache.to_str().unwrap(),
        "-q",
    ];
    let child = flakestat(&args)
        .env("GH_TOKEN", TOKEN)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    while gh.request_count(RouteKind::LogBlob) < 2 {
        std::thread::sleep(Duration::from_millis(5));
    }
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    snap("survey_interrupted", 130, &args, &out, t);
}

/// Exits 3 and 8 of the PostgreSQL store: a `--store` that is not a PostgreSQL URL, and a server
/// that does not answer (a closed port on 127.0.0.1). The password never appears.
#[test]
fn store_urls_exit_3_and_8() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let report = |store: &str| -> Vec<String> {
        [
            "report", "--repo", REPO, "--since", SINCE, "--until", UNTIL, "--store", store,
        ]
        .map(String::from)
        .to_vec()
    };
    let args = report("mysql://flakestat:hunter2@127.0.0.1/flakes");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = check("store_url_not_postgres", 3, &args, None, t);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("hunter2"));

    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let args = report(&format!("postgres://flakestat:hunter2@{closed}/flakes"));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = check("store_postgres_unreachable", 8, &args, None, t);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("hunter2"));
}

/// Exits 2 and 3 of `export`: an `--output` that is a file, and one that cannot be created.
#[test]
fn export_outputs_refused_exit_2_and_3() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let cache = store_copy(t);
    let export = |output: &Path| -> Vec<String> {
        [
            "export",
            "--repo",
            REPO,
            "--since",
            SINCE,
            "--until",
            UNTIL,
            "--cache-dir",
            cache.to_str().unwrap(),
            "--output",
            output.to_str().unwrap(),
        ]
        .map(String::from)
        .to_vec()
    };
    let file = t.join("a-file");
    std::fs::write(&file, "").unwrap();
    let args = export(&file);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    check("export_output_not_a_folder", 3, &args, None, t);

    let args = export(&file.join("warehouse"));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    check("export_output_cannot_be_created", 2, &args, None, t);
}

/// Exit 4: `nightly --post-comment` without a token to post with.
#[test]
fn nightly_post_comment_without_a_token() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let cache = t.join("cache");
    check(
        "nightly_post_comment_without_token",
        4,
        &[
            "nightly",
            "--repo",
            REPO,
            "--post-comment",
            "octo/demo#1",
            "--cache-dir",
            cache.to_str().unwrap(),
        ],
        None,
        t,
    );
}

/// `signatures import` onto signature files that exist, without `--force`.
#[test]
fn import_onto_existing_files() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let into = t.join("imported");
    let args = [
        "signatures",
        "import",
        "--format",
        "pytorch",
        "--output",
        into.to_str().unwrap(),
        "fixtures/pytorch/ruleset.toml",
    ];
    let out = flakestat(&args).output().unwrap();
    assert!(out.status.success(), "{}", transcript(&args, &out));
    check("import_onto_existing_files", 3, &args, None, t);
}
