//! The errors a user sees, each knowing its exit code (the idea of nextest's `ExpectedError`).
//!
//! Every layer keeps its own error type (`FetchError`, `StoreError`, `CommentError`,
//! `SignatureError`, `ConfigError`, `WhenError`) up to here: [`CliError`] wraps it unchanged,
//! so the source chain stays whole, and adds only what the command line knows and the layer
//! below must not: which flag or variable to change (`--api-url`, `--cache-dir`,
//! `--post-comment`, `--allow-insecure-http`, `--signatures`). [`ExitCode`] gives each type its
//! code from `crate::exit`; `cli::main` asks once, at the end.

use std::io;

use crate::exit;
use crate::fetch::FetchError;
use crate::fetch::checks::CheckRunError;
use crate::fetch::comments::CommentError;
use crate::signatures::SignatureError;
use crate::store::StoreError;

use super::config::ConfigError;
use super::when::WhenError;

/// The exit code an error means (README, "Exit codes").
pub trait ExitCode {
    fn exit_code(&self) -> u8;
}

/// An error on its way to `cli::main`.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A flag's value, or an input, that cannot be used (exit 3). The message names the flag.
    #[error("{0}")]
    Invalid(String),
    /// A malformed `--since`/`--until`, or an empty window.
    #[error(transparent)]
    When(#[from] WhenError),
    /// `flakestat.toml` (or `--config FILE`) is broken.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The signatures in use cannot be loaded or compiled.
    #[error("signatures from {from}: {source}{hint}")]
    Signatures {
        /// Where they come from (a folder, or "the bundled signatures").
        from: String,
        source: SignatureError,
        /// How to point the command at other signatures, for an empty folder.
        hint: &'static str,
    },
    /// The store cannot be opened, read or written.
    #[error("{source}{}", store_hint(.source))]
    Store {
        #[from]
        source: StoreError,
    },
    /// No cache folder could be chosen (no home folder, no temporary folder).
    #[error("{0}")]
    CacheDir(String),
    /// GitHub, or the way to it.
    #[error("{source}{}", fetch_hint(.source))]
    Fetch {
        #[from]
        source: FetchError,
    },
    /// `nightly --post-comment`: keeping the comment up to date failed.
    #[error("{source}{}; nothing was posted", comment_hint(.source))]
    Comment {
        #[from]
        source: CommentError,
    },
    /// `pr --check-run`: writing the check run failed.
    #[error("{source}{}; no check run was written", check_run_hint(.source))]
    CheckRun {
        #[from]
        source: CheckRunError,
    },
    /// A failure before posting (`nightly --post-comment`): nothing was posted.
    #[error("{0}; nothing was posted")]
    NotPosted(Box<CliError>),
    /// The token is missing where one is required (exit 4).
    #[error("{0}")]
    NoToken(String),
    /// The store holds nothing for the repository (exit 2).
    #[error("{0}")]
    NothingStored(String),
    /// A file or folder cannot be read or written; the message names it.
    #[error("{message}")]
    File { message: String, source: io::Error },
    /// Writing the report or a line of output failed (a broken pipe is success, see `main`).
    #[error(transparent)]
    Io(#[from] io::Error),
    /// Anything else, said in one sentence (exit 2).
    #[error("{0}")]
    Failed(String),
}

impl CliError {
    /// Signatures that cannot be used. `hint` completes an "empty folder" message with how this
    /// command is pointed at other signatures.
    pub fn signatures(from: impl ToString, source: SignatureError, hint: &'static str) -> CliError {
        let hint = match source {
            SignatureError::Empty { .. } => hint,
            _ => "",
        };
        CliError::Signatures {
            from: from.to_string(),
            source,
            hint,
        }
    }

    /// A file or folder that cannot be read or written; `message` names it and says what to do.
    pub fn file(message: impl Into<String>, source: io::Error) -> CliError {
        CliError::File {
            message: message.into(),
            source,
        }
    }
}

/// `--signatures DIR` completes an empty folder's message for the commands that take it.
pub const SIGNATURES_FLAG_HINT: &str = ", or point --signatures at the right folder";

fn store_hint(err: &StoreError) -> &'static str {
    match err {
        StoreError::CreateDir { .. } | StoreError::CreateFile { .. } => {
            "; pass a writable --cache-dir or set FLAKESTAT_CACHE_DIR"
        }
        StoreError::Open { .. } => "; pass another --cache-dir or set FLAKESTAT_CACHE_DIR",
        StoreError::Sql(_) if err.another_cache_dir_helps() => ", or pass another --cache-dir",
        StoreError::PostgresConnect { .. } => " and --store or FLAKESTAT_STORE",
        StoreError::PostgresTooNew { .. } => ", or pass another --store",
        _ if err.another_cache_dir_helps() => {
            ", or pass another --cache-dir or FLAKESTAT_CACHE_DIR"
        }
        _ => "",
    }
}

fn fetch_hint(err: &FetchError) -> &'static str {
    match err {
        FetchError::ApiRoot(_) | FetchError::Network(_) | FetchError::TooLarge { .. } => {
            "; the API root comes from --api-url, else GITHUB_API_URL"
        }
        FetchError::InsecureHttp { .. } => {
            ", or pass --allow-insecure-http if this is a test setup you trust"
        }
        FetchError::AppRefused { .. } => {
            "; the App comes from --app-id and --app-key, else APP_ID and PRIVATE_KEY_PATH"
        }
        FetchError::NoSuchOwner { .. } => "; check --org",
        // The client carries the store's error boxed (it does not know the store).
        FetchError::Store(e) => e.downcast_ref::<StoreError>().map_or("", store_hint),
        _ => "",
    }
}

fn comment_hint(err: &CommentError) -> &'static str {
    match err {
        CommentError::NotFound { .. } => "; check --post-comment",
        CommentError::Fetch(e) => fetch_hint(e),
        _ => "",
    }
}

fn check_run_hint(err: &CheckRunError) -> &'static str {
    match err {
        CheckRunError::NotAnApp { .. } => {
            " (--app-id and --app-key, else APP_ID and PRIVATE_KEY_PATH)"
        }
        CheckRunError::Fetch(e) => fetch_hint(e),
        _ => "",
    }
}

impl ExitCode for CliError {
    fn exit_code(&self) -> u8 {
        match self {
            CliError::Invalid(_) => exit::INVALID_INPUT,
            CliError::When(e) => e.exit_code(),
            CliError::Config(e) => e.exit_code(),
            CliError::Signatures { source, .. } => source.exit_code(),
            CliError::Store { source } => source.exit_code(),
            CliError::CacheDir(_) => exit::STORE,
            CliError::Fetch { source } => source.exit_code(),
            CliError::Comment { source } => source.exit_code(),
            CliError::CheckRun { source } => source.exit_code(),
            CliError::NotPosted(inner) => inner.exit_code(),
            CliError::NoToken(_) => exit::GITHUB_AUTH,
            CliError::NothingStored(_)
            | CliError::File { .. }
            | CliError::Io(_)
            | CliError::Failed(_) => exit::ERROR,
        }
    }
}

impl ExitCode for FetchError {
    fn exit_code(&self) -> u8 {
        match self {
            FetchError::Unauthorized { .. }
            | FetchError::Forbidden { .. }
            | FetchError::AppRefused { .. } => exit::GITHUB_AUTH,
            FetchError::NotFound(_) | FetchError::NoSuchOwner { .. } => exit::GITHUB_NOT_FOUND,
            FetchError::RateLimited { .. } | FetchError::SecondaryLimit(_) => exit::RATE_LIMITED,
            FetchError::Network(_) => exit::NETWORK,
            FetchError::Store(_) | FetchError::Spool(_) => exit::STORE,
            FetchError::Interrupted => exit::INTERRUPTED,
            FetchError::Internal(_) => exit::INTERNAL,
            FetchError::Config(_) | FetchError::ApiRoot(_) | FetchError::InsecureHttp { .. } => {
                exit::INVALID_INPUT
            }
            FetchError::Unexpected { .. }
            | FetchError::Parse { .. }
            | FetchError::TooLarge { .. }
            | FetchError::Unavailable(_) => exit::ERROR,
        }
    }
}

impl ExitCode for CommentError {
    fn exit_code(&self) -> u8 {
        match self {
            CommentError::Locked { .. }
            | CommentError::Forbidden { .. }
            | CommentError::Unauthorized { .. } => exit::GITHUB_AUTH,
            CommentError::NotFound { .. } => exit::GITHUB_NOT_FOUND,
            CommentError::Unexpected { .. } | CommentError::Parse { .. } => exit::ERROR,
            CommentError::Fetch(e) => e.exit_code(),
        }
    }
}

impl ExitCode for CheckRunError {
    fn exit_code(&self) -> u8 {
        match self {
            CheckRunError::NotAnApp { .. } | CheckRunError::Unauthorized { .. } => {
                exit::GITHUB_AUTH
            }
            CheckRunError::NotFound { .. } => exit::GITHUB_NOT_FOUND,
            CheckRunError::Unexpected { .. } | CheckRunError::Parse { .. } => exit::ERROR,
            CheckRunError::Fetch(e) => e.exit_code(),
        }
    }
}

impl ExitCode for StoreError {
    fn exit_code(&self) -> u8 {
        match self {
            // `--store` / `FLAKESTAT_STORE` that is not a PostgreSQL URL: the user's input.
            StoreError::PostgresUrl { .. } => exit::INVALID_INPUT,
            _ => exit::STORE,
        }
    }
}

impl ExitCode for SignatureError {
    fn exit_code(&self) -> u8 {
        exit::INVALID_INPUT
    }
}

impl ExitCode for ConfigError {
    fn exit_code(&self) -> u8 {
        exit::INVALID_INPUT
    }
}

impl ExitCode for WhenError {
    fn exit_code(&self) -> u8 {
        exit::INVALID_INPUT
    }
}

#[cfg(test)]
mod tests;
