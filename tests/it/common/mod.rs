//! Set-up shared by the binary tests of the bundled story: the `flakestat` binary with nothing
//! from the environment that could reach a real GitHub or another store, the story's folder
//! (and copies of it with other settings), one surveyed store of it per test binary, and which
//! PR a run of the story belongs to, known from its construction (not from the analysis).
#![allow(dead_code)]

pub mod lock;
pub mod skips;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use flakestat::fake::scenario::cuda_python::{FORK_BRANCH, FORK_PR, FORK_REPO};
use flakestat::fake::{FakeGitHub, FakeRun};

/// The story's window, as the tests that survey it once pass it to every command.
pub const STORY_WINDOW: [&str; 6] = [
    "--repo",
    "NVIDIA/cuda-python",
    "--since",
    "2026-06-15",
    "--until",
    "2026-07-31",
];

pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `fixtures/cuda-python-flake`: the bundled story. It is part of the repository, so its
/// absence fails a test instead of skipping it.
pub fn story_dir() -> PathBuf {
    let dir = root().join("fixtures/cuda-python-flake");
    assert!(
        dir.join("scenario.toml").is_file(),
        "no {}/scenario.toml",
        dir.display()
    );
    dir
}

/// The bundled signatures (`signatures/`).
pub fn signatures() -> PathBuf {
    root().join("signatures")
}

/// The binary, with GitHub's and flakestat's variables removed (a token, a GitHub App, an API root,
/// a cache folder or a store of the machine running the tests) and no stdin. The platform cache
/// folder is one of its own under the target folder (`XDG_CACHE_HOME`), never the machine's: a
/// replay surveyed without `--cache-dir` keeps its store there.
pub fn flakestat() -> Command {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let home = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "cache-home-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_flakestat"));
    cmd.env_remove("GITHUB_TOKEN")
        .env_remove("GH_TOKEN")
        .env_remove("APP_ID")
        .env_remove("PRIVATE_KEY_PATH")
        .env_remove("GITHUB_API_URL")
        .env_remove("FLAKESTAT_CACHE_DIR")
        .env_remove("FLAKESTAT_STORE")
        // Tables fit `COLUMNS` wherever they go: a test that wants a width says it.
        .env_remove("COLUMNS")
        .env("XDG_CACHE_HOME", home)
        .stdin(Stdio::null());
    cmd
}

/// `out`, after asserting it exited 0 (stderr in the message).
pub fn ok(out: Output) -> Output {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The story's flake alone (`report --signature wait-until-timeout`) from the store in
/// `cache`, from `since`, in `format`, checked to exit 0: its stdout. `extra` (`--until`,
/// `--signatures`) goes after the window.
pub fn flake_account(
    repo: &str,
    since: &str,
    cache: &Path,
    extra: &[&str],
    format: &str,
) -> String {
    let mut args = vec![
        "report",
        "--repo",
        repo,
        "--since",
        since,
        "--cache-dir",
        cache.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--signature", "wait-until-timeout", "--format", format]);
    let out = ok(flakestat()
        .args(&args)
        .env("NO_COLOR", "1")
        .output()
        .expect("the binary runs"));
    String::from_utf8(out.stdout).expect("the report is UTF-8")
}

/// A copy of the story's folder in `dir` whose `scenario.toml` also says `extra` (TOML lines),
/// the same seed and templates otherwise.
pub fn story_with(dir: &Path, extra: &str) -> PathBuf {
    let copy = dir.join("story");
    copy_dir(&story_dir(), &copy);
    let toml = copy.join("scenario.toml");
    let mut text = std::fs::read_to_string(&toml).unwrap();
    text.push_str(extra);
    std::fs::write(&toml, text).unwrap();
    copy
}

/// Copies the folder `from` to `to`, sub-folders too.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Surveys the story (`survey --replay`, [`STORY_WINDOW`]) into the store `store` with the
/// signatures of `sigs`.
pub fn survey_story(store: &Path, sigs: &Path) {
    ok(flakestat()
        .args(["-q", "survey", "--replay"])
        .arg(story_dir())
        .args(["--format", "json"])
        .args(STORY_WINDOW)
        .arg("--cache-dir")
        .arg(store)
        .arg("--signatures")
        .arg(sigs)
        .output()
        .expect("the binary runs"));
}

/// A store of the story surveyed (`survey --replay`, bundled signatures, [`STORY_WINDOW`]) once
/// for every test of the binary; the tests only read it (or write beside it).
pub fn surveyed_story() -> &'static Path {
    static STORE: OnceLock<tempfile::TempDir> = OnceLock::new();
    STORE
        .get_or_init(|| {
            let dir = tempfile::TempDir::new_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
            survey_story(dir.path(), &signatures());
            dir
        })
        .path()
}

/// A run of the fork PR: it names no PR, its head is the fork's branch.
pub fn is_fork_run(run: &FakeRun) -> bool {
    run.run.head_repository.as_deref() == Some(FORK_REPO)
        && run.run.head_branch.as_deref() == Some(FORK_BRANCH)
}

/// The PR a run of the story belongs to, from the construction: named in `pull_requests`, its
/// `pull-request/<N>` mirror branch, or the fork's branch.
pub fn pr_of(run: &FakeRun) -> Option<u64> {
    if is_fork_run(run) {
        return Some(FORK_PR);
    }
    if let Some(n) = run.run.pull_requests.first() {
        return Some(n.0);
    }
    run.run
        .head_branch
        .as_deref()?
        .strip_prefix("pull-request/")?
        .parse()
        .ok()
}

/// The `GET …/pulls?state=all` pages the fake answered: the PR listing that maps fork runs.
pub fn fork_listings(gh: &FakeGitHub) -> usize {
    gh.requests()
        .iter()
        .filter(|r| r.path.contains("/pulls?") && r.path.contains("state=all"))
        .count()
}

/// A command and what it did, as the snapshots hold it: the command line, the exit code, stdout
/// and stderr (as uv's and ruff's CLI snapshots do).
pub fn transcript(args: &[&str], out: &Output) -> String {
    format!(
        "$ flakestat {}\nexit code: {}\n----- stdout -----\n{}\n----- stderr -----\n{}",
        args.join(" "),
        out.status.code().map_or_else(
            || "none (killed by a signal)".to_string(),
            |c| c.to_string()
        ),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    )
}

/// The binary as the snapshots run it: [`flakestat`] in the repository's root (so fixtures are
/// named relatively, as a user in a clone types them), tables 100 columns wide whatever the
/// terminal, no colour, and no `gh` login to fall back on (a token only where a test gives one).
pub fn snapshot_flakestat(args: &[&str]) -> Command {
    let mut cmd = flakestat();
    cmd.args(args)
        .current_dir(root())
        .env("COLUMNS", "100")
        .env("NO_COLOR", "1")
        .env("GH_CONFIG_DIR", root().join("target/no-gh-config"))
        .env_remove("GH_ENTERPRISE_TOKEN")
        .env_remove("GITHUB_ENTERPRISE_TOKEN");
    cmd
}

/// insta's settings for the snapshots of the real binary: snapshots in `tests/it/snapshots/`
/// without the source's expression in their header, and filters that mask what differs from
/// one run or machine to the next: each of `temps` (a temporary folder, longest first) becomes
/// its label, the repository's root `[ROOT]`, flakestat's version `[VERSION]`. Callers add
/// filters for what only their output has (a wall-clock time, a port).
pub fn snapshot_settings(temps: &[(&Path, &str)]) -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(root().join("tests/it/snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    let mut temps: Vec<(String, &str)> = temps
        .iter()
        .map(|(path, label)| (path.display().to_string(), *label))
        .collect();
    // A temporary folder may be reached through a symlink (macOS's /var → /private/var).
    for (path, label) in temps.clone() {
        if let Ok(real) = std::fs::canonicalize(&path) {
            temps.push((real.display().to_string(), label));
        }
    }
    temps.sort_by_key(|(path, _)| std::cmp::Reverse(path.len()));
    for (path, label) in temps {
        settings.add_filter(&regex::escape(&path), label);
    }
    settings.add_filter(&regex::escape(&root().display().to_string()), "[ROOT]");
    settings.add_filter(
        &format!(r"\b{}\b", regex::escape(env!("CARGO_PKG_VERSION"))),
        "[VERSION]",
    );
    settings
}

/// The variables [`flakestat`] keeps from the binary: a token, an API root, a cache folder or a
/// store of the machine running the tests would send a test to a real GitHub or another store.
const NOT_INHERITED: [&str; 5] = [
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "GITHUB_API_URL",
    "FLAKESTAT_CACHE_DIR",
    "FLAKESTAT_STORE",
];

#[test]
fn the_binary_inherits_no_token_api_root_cache_or_store() {
    let cmd = flakestat();
    let removed: Vec<&std::ffi::OsStr> = cmd
        .get_envs()
        .filter(|(_, value)| value.is_none())
        .map(|(key, _)| key)
        .collect();
    for var in NOT_INHERITED {
        assert!(removed.contains(&var.as_ref()), "{var} is inherited");
    }
}

#[test]
fn every_test_module_starts_the_binary_through_common() {
    let dir = root().join("tests/it");
    let direct = ["Command::new(env!(\"CARGO_BIN_EXE_", "flakestat\"))"].concat();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(
                !text.contains(&direct),
                "{} starts the binary itself instead of through common::flakestat()",
                path.display()
            );
        }
    }
}

/// The store's tables two stores filled with the same data must hold alike, row for row: all but
/// `etags` (each replay serves on its own port, so each survey keeps its list pages under other
/// URLs).
pub const COMPARED_TABLES: [&str; 9] = [
    "repos",
    "runs",
    "jobs",
    "logs",
    "classifications",
    "pulls",
    "windows",
    "mainline",
    "fork_points",
];

/// Rows per table of [`COMPARED_TABLES`] in the PostgreSQL store at `url`.
pub fn postgres_row_counts(url: &str) -> Vec<(&'static str, i64)> {
    let mut client = postgres::Client::connect(url, postgres::NoTls).unwrap();
    COMPARED_TABLES
        .into_iter()
        .map(|table| {
            let n: i64 = client
                .query_one(&format!("SELECT count(*) FROM {table}"), &[])
                .unwrap()
                .get(0);
            (table, n)
        })
        .collect()
}

/// `path` as a fix-it command prints it, so a test can find the command in the output from any
/// checkout path: as is when it holds only characters no shell reads specially, else in
/// single quotes (the `sh -c` run of `cli_hints` checks that such a command runs as printed).
pub fn shell_word(path: &Path) -> String {
    let text = path.display().to_string();
    if !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-:=+@,%".contains(c))
    {
        text
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}
