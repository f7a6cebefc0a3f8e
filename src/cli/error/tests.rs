//! Each kind of error a user can meet, with the exit code README's table promises for it and the
//! flag the message names (the layers below name none).

use std::path::{Path, PathBuf};

use crate::model::Timestamp;

use super::*;
use crate::fetch::comments::CommentTarget;

fn io(kind: io::ErrorKind) -> io::Error {
    io::Error::new(kind, "denied")
}

fn sqlite(code: std::ffi::c_int) -> rusqlite::Error {
    rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(code), None)
}

type Case = (&'static str, CliError, u8, &'static str);

/// (what, error, exit code, a fragment its message must hold).
fn cases() -> Vec<Case> {
    let t = chrono::Utc::now();
    let target = CommentTarget::parse("o/r#1").unwrap();
    let path = PathBuf::from("/cache/store-v1/flakestat.sqlite3");
    let mut all = Vec::new();
    all.extend(cases_0(t, &target, &path));
    all.extend(cases_1(t, &target, &path));
    all.extend(cases_2(t, &target, &path));
    all.extend(cases_3(t, &target, &path));
    all.extend(cases_4(t, &target, &path));
    all.extend(cases_5());
    all
}

fn cases_0(t: Timestamp, _target: &CommentTarget, path: &Path) -> Vec<Case> {
    let store = |e: StoreError| CliError::from(e);
    vec![
        (
            "bad flag value",
            CliError::Invalid("--repo \"x\" is not OWNER/NAME".into()),
            exit::INVALID_INPUT,
            "--repo",
        ),
        (
            "malformed --since",
            super::super::when::parse_window("soon", None, t)
                .unwrap_err()
                .into(),
            exit::INVALID_INPUT,
            "--since",
        ),
        (
            "broken flakestat.toml",
            super::super::config::parse_config(
                "[matrix]\npattern = '('\n",
                std::path::Path::new("flakestat.toml"),
            )
            .unwrap_err()
            .into(),
            exit::INVALID_INPUT,
            "flakestat.toml:2",
        ),
        (
            "empty signatures folder",
            CliError::signatures(
                "sigs",
                SignatureError::Empty { dir: "sigs".into() },
                SIGNATURES_FLAG_HINT,
            ),
            exit::INVALID_INPUT,
            "point --signatures at the right folder",
        ),
        (
            "unreadable signatures folder",
            CliError::signatures(
                "sigs",
                SignatureError::Io {
                    path: "sigs".into(),
                    source: io(io::ErrorKind::PermissionDenied),
                },
                SIGNATURES_FLAG_HINT,
            ),
            exit::INVALID_INPUT,
            "signatures from sigs: cannot read",
        ),
        (
            "cache folder not creatable",
            store(StoreError::CreateDir {
                path: path.to_path_buf(),
                source: io(io::ErrorKind::PermissionDenied),
            }),
            exit::STORE,
            "pass a writable --cache-dir or set FLAKESTAT_CACHE_DIR",
        ),
        (
            "store not openable",
            store(StoreError::Open {
                path: path.to_path_buf(),
                source: sqlite(14),
            }),
            exit::STORE,
            "pass another --cache-dir or set FLAKESTAT_CACHE_DIR",
        ),
        (
            "not a store",
            store(StoreError::NotAStore {
                path: path.to_path_buf(),
            }),
            exit::STORE,
            "or pass another --cache-dir or FLAKESTAT_CACHE_DIR",
        ),
    ]
}

fn cases_1(_t: Timestamp, _target: &CommentTarget, path: &Path) -> Vec<Case> {
    let fetch = |e: FetchError| CliError::from(e);
    let store = |e: StoreError| CliError::from(e);
    vec![
        (
            "damaged store",
            store(StoreError::Damaged {
                path: path.to_path_buf(),
                detail: "x".into(),
            }),
            exit::STORE,
            "--cache-dir",
        ),
        (
            "read-only store",
            store(StoreError::ReadOnly {
                path: path.to_path_buf(),
            }),
            exit::STORE,
            "--cache-dir",
        ),
        (
            "read-only store of an older schema",
            store(StoreError::ReadOnlyOld {
                path: path.to_path_buf(),
                found: 3,
                known: 4,
            }),
            exit::STORE,
            "make it and its folder writable once, or pass another --cache-dir",
        ),
        (
            "cache folder inside a store",
            store(StoreError::Nested {
                path: path.join("store-v1"),
                cache_dir: path.to_path_buf(),
            }),
            exit::STORE,
            "as the cache folder, or pass another --cache-dir",
        ),
        (
            "newer store",
            store(StoreError::TooNew {
                path: path.to_path_buf(),
                found: 9,
                known: 1,
            }),
            exit::STORE,
            "--cache-dir",
        ),
        (
            "damaged store met later",
            store(StoreError::Sql(sqlite(11))),
            exit::STORE,
            "or pass another --cache-dir",
        ),
        (
            "corrupt record",
            store(StoreError::Corrupt("x".into())),
            exit::STORE,
            "delete the cache folder",
        ),
        (
            "store busy: other writers held a write past the busy timeout",
            store(StoreError::Busy {
                store: path
                    .join("store-v1/flakestat.sqlite3")
                    .display()
                    .to_string(),
                waited: 30,
            }),
            exit::STORE,
            "is busy: a write waited 30s for other flakestat runs' writes; run again",
        ),
        (
            "no home folder",
            CliError::CacheDir("no home folder".into()),
            exit::STORE,
            "no home folder",
        ),
        (
            "bad credentials",
            fetch(FetchError::Unauthorized {
                status: 401,
                message: "Bad credentials".into(),
            }),
            exit::GITHUB_AUTH,
            "GITHUB_TOKEN",
        ),
        (
            "the App's JWT refused",
            fetch(FetchError::AppRefused {
                status: 401,
                message: "A JSON web token could not be decoded".into(),
            }),
            exit::GITHUB_AUTH,
            "--app-key",
        ),
    ]
}

fn cases_2(t: Timestamp, _target: &CommentTarget, path: &Path) -> Vec<Case> {
    let fetch = |e: FetchError| CliError::from(e);
    vec![
        (
            "access denied",
            fetch(FetchError::Forbidden {
                status: 403,
                message: "no".into(),
            }),
            exit::GITHUB_AUTH,
            "403",
        ),
        (
            "unknown repository",
            fetch(FetchError::NotFound("no such repository".into())),
            exit::GITHUB_NOT_FOUND,
            "no such",
        ),
        (
            "no such owner",
            fetch(FetchError::NoSuchOwner {
                owner: "octo-nobody".into(),
            }),
            exit::GITHUB_NOT_FOUND,
            "\"octo-nobody\" (or the token cannot see it); check --org",
        ),
        (
            "rate limit",
            fetch(FetchError::RateLimited { reset: t }),
            exit::RATE_LIMITED,
            "rate limit",
        ),
        (
            "secondary limit",
            fetch(FetchError::SecondaryLimit("x".into())),
            exit::RATE_LIMITED,
            "secondary",
        ),
        (
            "no answer",
            fetch(FetchError::Network("refused".into())),
            exit::NETWORK,
            "--api-url",
        ),
        (
            "malformed API root",
            fetch(FetchError::ApiRoot(
                "the API root \"x\" is not a URL".into(),
            )),
            exit::INVALID_INPUT,
            "--api-url, else GITHUB_API_URL",
        ),
        (
            "token over plain http",
            fetch(FetchError::InsecureHttp {
                api_url: "http://ghe.example".into(),
            }),
            exit::INVALID_INPUT,
            "use https, or pass --allow-insecure-http",
        ),
        (
            "client settings",
            fetch(FetchError::Config("cannot build".into())),
            exit::INVALID_INPUT,
            "cannot build",
        ),
        (
            "internal failure",
            fetch(FetchError::Internal(
                "cannot start the async runtime: out of threads".into(),
            )),
            exit::INTERNAL,
            "cannot start the async runtime",
        ),
        (
            "store under the survey",
            fetch(FetchError::Store(Box::new(StoreError::ReadOnly {
                path: path.to_path_buf(),
            }))),
            exit::STORE,
            "--cache-dir",
        ),
        (
            "spool file",
            fetch(FetchError::Spool("no temp".into())),
            exit::STORE,
            "no temp",
        ),
        (
            "interrupted",
            fetch(FetchError::Interrupted),
            exit::INTERRUPTED,
            "resume",
        ),
    ]
}

fn cases_3(_t: Timestamp, target: &CommentTarget, _path: &Path) -> Vec<Case> {
    let fetch = |e: FetchError| CliError::from(e);
    vec![
        (
            "oversized answer",
            fetch(FetchError::TooLarge {
                url: "u".into(),
                size: 9,
                limit: 8,
            }),
            exit::ERROR,
            "--api-url",
        ),
        (
            "unexpected status",
            fetch(FetchError::Unexpected {
                url: "u".into(),
                status: 500,
                message: "x".into(),
            }),
            exit::ERROR,
            "500",
        ),
        (
            "unparsable answer",
            fetch(FetchError::Parse {
                url: "u".into(),
                error: "x".into(),
            }),
            exit::ERROR,
            "parse",
        ),
        (
            "unavailable download",
            fetch(FetchError::Unavailable("gone".into())),
            exit::ERROR,
            "gone",
        ),
        (
            "locked issue",
            CommentError::Locked {
                target: target.clone(),
                message: "locked".into(),
            }
            .into(),
            exit::GITHUB_AUTH,
            "nothing was posted",
        ),
        (
            "no permission to comment",
            CommentError::Forbidden {
                target: target.clone(),
                status: 403,
                message: "x".into(),
            }
            .into(),
            exit::GITHUB_AUTH,
            "nothing was posted",
        ),
        (
            "credentials refused while commenting",
            CommentError::Unauthorized {
                target: target.clone(),
                message: "x".into(),
            }
            .into(),
            exit::GITHUB_AUTH,
            "nothing was posted",
        ),
        (
            "unknown issue",
            CommentError::NotFound {
                target: target.clone(),
            }
            .into(),
            exit::GITHUB_NOT_FOUND,
            "check --post-comment; nothing was posted",
        ),
    ]
}

fn cases_4(t: Timestamp, _target: &CommentTarget, _path: &Path) -> Vec<Case> {
    vec![
        (
            "rate limit while commenting",
            CommentError::Fetch(FetchError::RateLimited { reset: t }).into(),
            exit::RATE_LIMITED,
            "nothing was posted",
        ),
        (
            "check run with a token, not as an App",
            crate::fetch::checks::CheckRunError::NotAnApp {
                status: 403,
                message: "You must authenticate via a GitHub App.".into(),
            }
            .into(),
            exit::GITHUB_AUTH,
            "--app-id and --app-key",
        ),
        (
            "check run on an unknown commit",
            crate::fetch::checks::CheckRunError::NotFound {
                repo: crate::model::Repo::parse("o/r").unwrap(),
                sha: crate::model::Sha("abc".into()),
            }
            .into(),
            exit::GITHUB_NOT_FOUND,
            "no check run was written",
        ),
        (
            "odd answer while commenting",
            CommentError::Parse {
                url: "u".into(),
                error: "x".into(),
            }
            .into(),
            exit::ERROR,
            "nothing was posted",
        ),
        (
            "survey failed before posting",
            CliError::NotPosted(Box::new(FetchError::Network("x".into()).into())),
            exit::NETWORK,
            "--api-url, else GITHUB_API_URL; nothing was posted",
        ),
        (
            "no token to comment with",
            CliError::NoToken("--post-comment needs a token".into()),
            exit::GITHUB_AUTH,
            "--post-comment",
        ),
        (
            "nothing surveyed yet",
            CliError::NothingStored("holds nothing".into()),
            exit::ERROR,
            "holds nothing",
        ),
        (
            "output not writable",
            CliError::file(
                "cannot write out.md: denied",
                io(io::ErrorKind::PermissionDenied),
            ),
            exit::ERROR,
            "out.md",
        ),
        (
            "write failed",
            io(io::ErrorKind::Other).into(),
            exit::ERROR,
            "denied",
        ),
        (
            "anything else",
            CliError::Failed("cannot start the replay server".into()),
            exit::ERROR,
            "replay",
        ),
    ]
}

/// The PostgreSQL store and `export --output`.
fn cases_5() -> Vec<Case> {
    let file = tempfile::NamedTempFile::new().expect("a temporary file");
    let not_a_folder = super::super::export::check_output(file.path()).unwrap_err();
    // Under a file: its metadata fails with "not a directory", which no one can write into.
    let unwritable = super::super::export::check_output(&file.path().join("out")).unwrap_err();
    vec![
        (
            "malformed --store URL",
            super::super::settings::resolve_store(Some("mysql://db/x"), None).unwrap_err(),
            exit::INVALID_INPUT,
            "--store",
        ),
        (
            "PostgreSQL server unreachable",
            StoreError::PostgresConnect {
                store: "postgres://flakestat@127.0.0.1:1/db".into(),
                detail: "connection refused".into(),
            }
            .into(),
            exit::STORE,
            "check the server and --store or FLAKESTAT_STORE",
        ),
        (
            "PostgreSQL store made by a newer flakestat",
            StoreError::PostgresTooNew {
                store: "postgres://db".into(),
                found: 99,
                known: 1,
            }
            .into(),
            exit::STORE,
            "or pass another --store",
        ),
        (
            "PostgreSQL store busy",
            StoreError::Busy {
                store: "postgres://db".into(),
                waited: 30,
            }
            .into(),
            exit::STORE,
            "the store postgres://db is busy",
        ),
        (
            "PostgreSQL writers' transactions kept crossing",
            StoreError::Crossed {
                store: "postgres://db".into(),
                detail: "deadlock detected (SQLSTATE 40P01)".into(),
            }
            .into(),
            exit::STORE,
            "deadlock detected (SQLSTATE 40P01); run again",
        ),
        (
            "export --output not a folder",
            not_a_folder,
            exit::INVALID_INPUT,
            "--output",
        ),
        (
            "export --output not writable",
            unwritable,
            exit::ERROR,
            "nothing was written",
        ),
    ]
}

#[test]
fn each_error_kind_has_its_documented_exit_code_and_names_what_to_change() {
    for (what, err, code, says) in cases() {
        assert_eq!(err.exit_code(), code, "{what}: {err}");
        let text = crate::cli::render_chain(&err);
        assert!(text.contains(says), "{what}: {text:?} lacks {says:?}");
    }
}

#[test]
fn the_source_chain_is_kept_and_said_once() {
    let err = CliError::from(StoreError::CreateDir {
        path: "/cache".into(),
        source: io(io::ErrorKind::PermissionDenied),
    });
    // The typed error and its io cause are still there for whoever walks the chain …
    let store = std::error::Error::source(&err).expect("the store error is the source");
    assert!(store.downcast_ref::<StoreError>().is_some());
    assert!(
        std::error::Error::source(store)
            .unwrap()
            .downcast_ref::<io::Error>()
            .is_some()
    );
    // … and the message says each part once.
    assert_eq!(
        crate::cli::render_chain(&err),
        "cannot create the cache folder /cache: denied; pass a writable --cache-dir or set FLAKESTAT_CACHE_DIR"
    );
}

#[test]
fn signatures_check_names_its_argument_not_a_flag_it_lacks() {
    let empty = || SignatureError::Empty { dir: "sigs".into() };
    let check = CliError::signatures("sigs", empty(), ", or name the right folder").to_string();
    assert!(!check.contains("--signatures"), "{check}");
    // A hint is for the empty folder only: a broken file says what is broken, nothing else.
    let broken = CliError::signatures(
        "sigs",
        SignatureError::Invalid {
            problems: Vec::new(),
        },
        SIGNATURES_FLAG_HINT,
    )
    .to_string();
    assert!(!broken.contains("--signatures"), "{broken}");
}

#[test]
fn a_broken_pipe_anywhere_in_the_chain_is_found() {
    let err = CliError::file("cannot write x", io(io::ErrorKind::BrokenPipe));
    assert!(crate::cli::is_broken_pipe(&err));
    // Writing the report to stdout: the transparent `Io` variant.
    assert!(crate::cli::is_broken_pipe(&CliError::Io(io(
        io::ErrorKind::BrokenPipe
    ))));
    assert!(!crate::cli::is_broken_pipe(&CliError::Io(io(
        io::ErrorKind::Other
    ))));
}
