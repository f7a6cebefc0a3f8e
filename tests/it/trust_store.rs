//! The store and the report file as a user meets them when something is off (issue #10, should
//! fix): errors that say what happened and what to do ("not a flakestat store", "damaged store at",
//! "made by a newer flakestat", "read-only store at", never SQL), an old script's `--wait` accepted
//! and waiting for nothing (the store has no lock), reports byte-identical run to run (`until` to
//! the second), and `--output` keeping an existing file's mode, creating new files 0600 and writing
//! through a symlink. The real binary, over a store a replay through the fake GitHub filled.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use flakestat::fake::scenario::{SyntheticSpec, synthetic};

fn command(args: &[&str]) -> Command {
    let mut cmd = crate::common::flakestat();
    cmd.args(args).env("NO_COLOR", "1");
    cmd
}

fn flakestat(args: &[&str]) -> Output {
    command(args).output().expect("the binary runs")
}

/// `report` started in the background, stdout and stderr piped.
fn report_child(cache: &Path, extra: &[&str]) -> std::process::Child {
    command(&report_args(cache, extra))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A store filled by replaying a small synthetic dataset through the fake GitHub.
fn surveyed_store(cache: &Path) {
    let data = tempfile::tempdir().unwrap();
    synthetic(&SyntheticSpec {
        runs: 20,
        ..SyntheticSpec::default()
    })
    .save_json(data.path())
    .unwrap();
    let out = flakestat(&[
        "survey",
        "--replay",
        data.path().to_str().unwrap(),
        "--since",
        "2026-06-01",
        "--until",
        "2026-06-03",
        "--cache-dir",
        cache.to_str().unwrap(),
        "--format",
        "json",
        "-q",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
}

fn db(cache: &Path) -> PathBuf {
    cache.join("store-v1/flakestat.sqlite3")
}

fn report(cache: &Path, extra: &[&str]) -> Output {
    flakestat(&report_args(cache, extra))
}

fn report_args<'a>(cache: &'a Path, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "report",
        "--repo",
        "octo/demo",
        "--since",
        "2026-06-01",
        "--cache-dir",
        cache.to_str().unwrap(),
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    args
}

/// `survey --offline` of the store's repository in `cache`: it reclassifies, so it must write.
fn offline_survey(cache: &Path) -> Output {
    flakestat(&[
        "survey",
        "--repo",
        "octo/demo",
        "--since",
        "2026-06-01",
        "--offline",
        "--cache-dir",
        cache.to_str().unwrap(),
    ])
}

fn assert_store_error(what: &str, out: &Output, says: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(8), "{what}: {err}");
    assert!(err.contains(says), "{what}: {err}");
    assert!(
        err.contains("--cache-dir"),
        "{what}: says what to do: {err}"
    );
    for sql in ["CREATE TABLE", "SELECT", "INSERT", "PRAGMA"] {
        assert!(!err.contains(sql), "{what}: no SQL in the message: {err}");
    }
}

#[test]
fn store_errors_say_what_happened_and_what_to_do() {
    // A file that is not SQLite at all.
    let cache = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(cache.path().join("store-v1")).unwrap();
    std::fs::write(
        db(cache.path()),
        "these are not the bytes of a database\n".repeat(200),
    )
    .unwrap();
    assert_store_error(
        "garbage",
        &report(cache.path(), &[]),
        "not a flakestat store",
    );

    // Another program's SQLite database.
    let cache = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(cache.path().join("store-v1")).unwrap();
    rusqlite::Connection::open(db(cache.path()))
        .unwrap()
        .execute_batch("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine');")
        .unwrap();
    assert_store_error(
        "foreign",
        &report(cache.path(), &[]),
        "not a flakestat store",
    );

    // A newer flakestat's store.
    let cache = tempfile::tempdir().unwrap();
    surveyed_store(cache.path());
    rusqlite::Connection::open(db(cache.path()))
        .unwrap()
        .pragma_update(None, "user_version", 99)
        .unwrap();
    assert_store_error(
        "newer",
        &report(cache.path(), &[]),
        "made by a newer flakestat (schema 99",
    );

    // A damaged store: its first page (the root of the schema) overwritten.
    let cache = tempfile::tempdir().unwrap();
    surveyed_store(cache.path());
    let mut bytes = std::fs::read(db(cache.path())).unwrap();
    // The whole page after the 100-byte header: where its cells sit depends on the schema.
    bytes[100..4096].fill(0x41);
    std::fs::write(db(cache.path()), &bytes).unwrap();
    let out = report(cache.path(), &[]);
    assert_store_error("damaged", &out, "damaged store at");
    assert!(
        stderr(&out).contains("flakestat.sqlite3"),
        "{}",
        stderr(&out)
    );
    // One wording for a damaged store, whether met on opening or by a later statement.
    assert!(
        stderr(&out).contains("; delete the store file (the next survey fetches everything again)"),
        "{}",
        stderr(&out)
    );
}

/// A 0-byte store file (a truncated copy, a `touch`) is no store: `report`, asked only to read,
/// refuses it as other damaged stores (exit 8) and leaves the file as it was, 0 bytes, with no
/// journal beside it.
#[test]
fn report_refuses_an_empty_store_file_and_leaves_it_untouched() {
    let cache = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(cache.path().join("store-v1")).unwrap();
    std::fs::write(db(cache.path()), b"").unwrap();
    let out = report(cache.path(), &[]);
    assert_store_error("empty", &out, "not a flakestat store");
    assert!(
        stderr(&out).contains("flakestat.sqlite3"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::metadata(db(cache.path())).unwrap().len(), 0);
    let beside: Vec<_> = std::fs::read_dir(cache.path().join("store-v1"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(beside, ["flakestat.sqlite3"], "nothing written beside it");
}

/// Makes `file` unwritable (root ignores permission bits; the immutable attribute stops it
/// too); `Some(root)` when it could, then [`unlock`] undoes it.
fn lock_file(file: &Path) -> Option<bool> {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0\n"));
    let locked = if root {
        Command::new("chattr")
            .arg("+i")
            .arg(file)
            .status()
            .is_ok_and(|s| s.success())
    } else {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o400)).is_ok()
    };
    locked.then_some(root)
}

fn unlock(file: &Path, root: bool) {
    if root {
        Command::new("chattr").arg("-i").arg(file).status().unwrap();
    } else {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
}

/// Issue #27.3: `report` never writes. A read-only store still reports, the same report as
/// writable, classifying in memory what the signatures have not seen and saying so in one line;
/// a survey, which must write, says the store is read-only (exit 8).
#[test]
fn a_read_only_store_still_reports_and_a_survey_says_it_is_read_only() {
    let cache = tempfile::tempdir().unwrap();
    surveyed_store(cache.path());
    let writable = report(cache.path(), &[]);
    assert_eq!(writable.status.code(), Some(0), "{}", stderr(&writable));
    // Other signatures: a copy of the bundled set with one more file, so every stored log is
    // new to them and must be classified for the report.
    let sigs = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(crate::common::signatures()).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), sigs.path().join(entry.file_name())).unwrap();
    }
    std::fs::write(
        sigs.path().join("zz-never.toml"),
        "title = \"never\"\npattern = 'no log says this 7f3a'\n",
    )
    .unwrap();
    let sigs_arg = sigs.path().to_str().unwrap();
    let file = db(cache.path());
    let before = std::fs::read(&file).unwrap();
    let Some(root) = lock_file(&file) else {
        crate::common::skips::skipped(
            crate::common::skips::Need::ReadOnlyFile,
            &format!("skipped: cannot make {} read-only here", file.display()),
        );
        return;
    };
    let out = report(cache.path(), &[]);
    let other = report(cache.path(), &["--signatures", sigs_arg]);
    let survey = offline_survey(cache.path());
    unlock(&file, root);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(out.stdout, writable.stdout, "the same report as writable");
    let said = stderr(&out);
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(
        said.contains("is read-only: read as it is, 0 stored logs"),
        "{said}"
    );
    assert_eq!(other.status.code(), Some(0), "{}", stderr(&other));
    let said = stderr(&other);
    assert!(
        said.contains("is read-only") && said.contains("classified in memory"),
        "{said}"
    );
    assert!(
        !said.contains("read as it is, 0 stored"),
        "the new set classified logs: {said}"
    );
    let json: serde_json::Value = serde_json::from_slice(&other.stdout).unwrap();
    assert!(json["jobs_failed"].as_u64().unwrap() > 0);
    assert_eq!(
        json["jobs_failed"].as_u64().unwrap(),
        json["jobs_classified"].as_u64().unwrap() + json["jobs_unclassified"].as_u64().unwrap()
    );
    assert_store_error("read-only survey", &survey, "read-only store at");
    assert_eq!(std::fs::read(&file).unwrap(), before, "nothing was written");
}

/// Issue #27.3: a mistyped --cache-dir makes no store ("no store at …", exit 2), and a folder
/// inside a store never gets a store of its own (exit 8), for `report` as for `survey`.
#[test]
fn report_makes_no_store_and_no_store_nests_in_another() {
    let cache = tempfile::tempdir().unwrap();
    surveyed_store(cache.path());
    let typo = cache.path().join("typo");
    let out = report(&typo, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(
        said.contains(&format!("no store at {}", typo.display())),
        "{said}"
    );
    assert!(
        said.contains("flakestat survey --repo octo/demo --since 2026-06-01 --cache-dir"),
        "{said}"
    );
    assert!(!typo.exists(), "a report creates nothing");

    let inside = cache.path().join("store-v1");
    let deeper = inside.join("sub");
    for dir in [&inside, &deeper] {
        let out = report(dir, &[]);
        assert_store_error("inside", &out, "is inside the store in");
        assert!(
            stderr(&out).contains(&cache.path().display().to_string()),
            "{}",
            stderr(&out)
        );
        let survey = offline_survey(dir);
        assert_store_error("survey inside", &survey, "is inside the store in");
    }
    assert!(
        !inside.join("store-v1").exists() && !deeper.exists(),
        "nothing nested"
    );
}

/// An old cron line's `--wait` is accepted and waits for nothing while another writer has the
/// store open (the store has no lock; before, a held lock made this exit 8 naming `--wait`):
/// the survey goes on to GitHub (here an address nothing answers, exit 7). The flag is no
/// longer shown in `--help`.
#[test]
fn an_old_scripts_wait_is_accepted_hidden_and_waits_for_nothing() {
    let cache = tempfile::tempdir().unwrap();
    let mut other = flakestat::store::Store::open(cache.path()).unwrap();
    other
        .store_repo(&flakestat::model::Repo::parse("octo/demo").unwrap(), "main")
        .unwrap();
    let started = std::time::Instant::now();
    let out = flakestat(&[
        "survey",
        "--repo",
        "octo/demo",
        "--since",
        "7d",
        "--api-url",
        "http://127.0.0.1:9",
        "--max-retries",
        "0",
        "--cache-dir",
        cache.path().to_str().unwrap(),
        "--wait",
        "10m",
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(7), "{err}");
    assert!(!err.contains("in use") && !err.contains("busy"), "{err}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(120),
        "nothing waited"
    );
    // The other writer writes on.
    other
        .store_repo(
            &flakestat::model::Repo::parse("octo/demo").unwrap(),
            "trunk",
        )
        .unwrap();
    let help = flakestat(&["survey", "--help"]);
    assert!(help.status.success());
    assert!(!String::from_utf8_lossy(&help.stdout).contains("--wait"));
}

#[test]
fn reports_without_until_are_byte_identical_and_end_on_a_whole_second() {
    let cache = tempfile::tempdir().unwrap();
    surveyed_store(cache.path());
    let first = report(cache.path(), &["--allow-incomplete"]);
    assert!(first.status.success(), "{}", stderr(&first));
    let json: serde_json::Value = serde_json::from_slice(&first.stdout).unwrap();
    let until = json["until"].as_str().unwrap();
    // `2026-12-01T21:30:05Z`: no fraction of a second.
    assert_eq!(until.len(), 20, "{until}");
    assert!(!until.contains('.'), "{until}");
    // Two reports started together: whenever they end their window on the same second they
    // are the same bytes. Started at once, so a slow machine still lands pairs in one second;
    // a pair straddling a second boundary is tried again.
    let mut same_second = 0;
    for _ in 0..10 {
        let [a, b] = [(); 2].map(|()| report_child(cache.path(), &["--allow-incomplete"]));
        let [a, b] = [a, b].map(|child| child.wait_with_output().expect("the report ends"));
        assert!(a.status.success() && b.status.success(), "{}", stderr(&a));
        let until_of = |out: &Output| {
            serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()["until"].clone()
        };
        if until_of(&a) == until_of(&b) {
            same_second += 1;
            assert!(a.stdout == b.stdout, "reports of the same second differ");
        }
    }
    assert!(same_second > 0, "no two reports ended on the same second");
}

#[cfg(unix)]
#[test]
fn output_keeps_the_mode_creates_0600_and_writes_through_symlinks() {
    use std::os::unix::fs::PermissionsExt;
    let cache = tempfile::tempdir().unwrap();
    surveyed_store(cache.path());
    let dir = tempfile::tempdir().unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let write = |target: &Path| {
        // No --until: the window ends where the replay's recording (and so the survey) ended.
        let out = report(cache.path(), &["--output", target.to_str().unwrap()]);
        assert!(out.status.success(), "{}", stderr(&out));
    };

    let new = dir.path().join("new.json");
    write(&new);
    assert_eq!(mode(&new), 0o600);

    let shared = dir.path().join("shared.json");
    std::fs::write(&shared, "old").unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o644)).unwrap();
    write(&shared);
    assert_eq!(mode(&shared), 0o644, "an existing file keeps its mode");
    assert!(
        std::fs::read_to_string(&shared)
            .unwrap()
            .contains("\"schema\"")
    );

    let real = dir.path().join("real.json");
    std::fs::write(&real, "old").unwrap();
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink("real.json", &link).unwrap();
    write(&link);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link stays a link"
    );
    assert!(
        std::fs::read_to_string(&real)
            .unwrap()
            .contains("\"schema\"")
    );
}
