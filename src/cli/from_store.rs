//! Reading one repository's window from the store, the way every store-only command does
//! (`report`, `export`, `suggest`, `signatures audit`): parse `--repo` and the window, read
//! `flakestat.toml`, load and compile the signatures, check `--signature`, open the store,
//! classify stored logs the current signatures have not seen yet (only under the store's lock:
//! when a survey or nightly holds it, what is classified is what there is), and load the
//! snapshot. One place, so that the commands cannot drift apart on what "the store's figures"
//! mean.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::CodedError;
use super::config::load_config;
use super::settings;
use super::when::{now_to_the_second, parse_window};
use crate::analysis::AnalysisConfig;
use crate::exit;
use crate::fetch;
use crate::model::{Repo, SignatureId, SignatureInfo, Snapshot};
use crate::signatures::{self, SignatureSet, SignatureSpec};
use crate::store::{Store, StoreError, StoreLocation};

/// The flags every store-only command shares (`report`, `export`, `suggest`, `signatures
/// audit`): which repository and window, where the store is, which signatures and settings.
#[derive(Debug, clap::Args)]
pub struct WindowArgs {
    /// The repository, OWNER/NAME.
    #[arg(long, value_name = "OWNER/NAME")]
    pub repo: String,
    /// Start of the window, inclusive (a date, an RFC 3339 datetime, or 24h / 7d / 2w ago).
    #[arg(long, value_name = "WHEN")]
    pub since: String,
    /// End of the window (a date means through the end of that day). Default: now.
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,
    /// Where the store lives. Default: FLAKESTAT_CACHE_DIR, else the platform cache folder.
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// A team store on PostgreSQL (postgres://USER:PASSWORD@HOST:PORT/DATABASE) instead of the
    /// SQLite store in --cache-dir. Default: FLAKESTAT_STORE.
    #[arg(long, value_name = "URL", conflicts_with = "cache_dir")]
    pub store: Option<String>,
    /// Signature files. Default: ./signatures if present, else the bundled set.
    #[arg(long, value_name = "DIR")]
    pub signatures: Option<PathBuf>,
    /// Settings file. Default: ./flakestat.toml if present.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// The signatures in use and the window's snapshot, classified with them.
pub(super) struct Loaded {
    pub specs: Vec<SignatureSpec>,
    /// Where the store is (the green sample of `signatures audit` writes to it too).
    pub location: StoreLocation,
    pub infos: Vec<SignatureInfo>,
    pub snapshot: Snapshot,
    pub config: AnalysisConfig,
    /// Stored logs classified anew with the current signatures by this call.
    pub classified: u64,
}

fn invalid(message: impl Into<String>) -> CodedError {
    CodedError::new(exit::INVALID_INPUT, message)
}

fn store_error(err: StoreError) -> CodedError {
    CodedError::new(exit::STORE, err.to_string())
}

/// Loads the window `query` names, for `command` (named in the lock for whoever waits on it);
/// `focus` is `--signature ID`, which must name a loaded signature (else exit 3) and becomes the
/// analysis' focus. Errors carry their exit code: bad flags, signatures or settings 3, an
/// unopenable store 8, a store that holds nothing for the repository 2.
pub(super) fn load_from_store(
    query: &WindowArgs,
    focus: Option<&str>,
    command: &str,
) -> anyhow::Result<Loaded> {
    let repo = Repo::parse(&query.repo).ok_or_else(|| {
        invalid(format!(
            "--repo {:?} is not OWNER/NAME (for example NVIDIA/cuda-python)",
            query.repo
        ))
    })?;
    // A window ending now ends on a whole second: the same store gives the same output.
    let (since, until) = parse_window(&query.since, query.until.as_deref(), now_to_the_second())
        .map_err(|e| invalid(e.to_string()))?;

    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let file = load_config(query.config.as_deref(), &cwd).map_err(|e| invalid(e.to_string()))?;

    let source = signatures::resolve_dir(query.signatures.as_deref());
    let specs = source
        .load()
        .map_err(|e| invalid(format!("signatures from {source}: {e}")))?;
    let set = SignatureSet::compile(specs.clone())
        .map_err(|e| invalid(format!("signatures from {source}: {e}")))?;
    let infos = set.info();
    let focus = match focus {
        Some(id) => {
            if !infos.iter().any(|i| i.id.0 == id) {
                let known: Vec<&str> = infos.iter().map(|i| i.id.0.as_str()).collect();
                return Err(invalid(format!(
                    "--signature {id:?}: no such signature in {source}; known: {}",
                    known.join(", ")
                ))
                .into());
            }
            Some(SignatureId(id.to_string()))
        }
        None => None,
    };

    let location = settings::resolve_store(query.store.as_deref(), query.cache_dir.as_deref())?;
    let store = Store::open_at(&location).map_err(store_error)?;
    if store.default_branch(&repo).map_err(store_error)?.is_none() {
        return Err(CodedError::new(
            exit::ERROR,
            format!(
                "the store in {} holds nothing for {repo}: run `flakestat survey --repo {repo} --since {}` first",
                location.describe(),
                query.since
            ),
        )
        .into());
    }
    let store = Arc::new(Mutex::new(store));
    // `SignatureSet` is the store's re-classifier as it is (`fetch` implements `Classifier`).
    let classifier = set;
    // Re-classifying writes: only under the store's lock. When a survey or nightly holds it,
    // load what is classified (the rest shows as "not classified yet").
    let classified = match super::nightly::try_lock_store(&location, &repo, command)? {
        Some(_lock) => fetch::reclassify_stored(&store, &repo, &classifier).map_err(store_error)?,
        None => 0,
    };
    let snapshot = store
        .lock()
        .expect("store lock")
        .load_snapshot(&repo, since, until, &classifier.fingerprint())
        .map_err(store_error)?;
    Ok(Loaded {
        specs,
        location,
        infos,
        snapshot,
        config: AnalysisConfig {
            pr_conventions: file.pr_conventions,
            matrix: file.matrix,
            focus,
            cost: file.cost,
        },
        classified,
    })
}
