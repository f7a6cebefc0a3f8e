//! The steps every command is made of, written once: load the signatures, open (and lock) the
//! store, re-classify what it holds, load a window's snapshot, write the report and say whether
//! it was whole. `fetch.rs` adds the networked steps (connect, survey, ancestry). A command
//! resolves its settings, then calls these in order; no command imports another.

pub mod fetch;
pub mod many;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::GlobalArgs;
use super::error::{CliError, SIGNATURES_FLAG_HINT};
use super::settings;
use super::source::{StoredArgs, WindowArgs};
use super::when::{now_to_the_second, parse_window};
use crate::analysis::{AnalysisConfig, Completeness};
use crate::exit;
use crate::model::{Repo, SignatureInfo, Snapshot, Timestamp};
use crate::signatures::{Classifier, SignatureSet, SignatureSource, SignatureSpec, resolve_dir};
use crate::store::lock::LockError;
use crate::store::{Store, StoreGuard, StoreLocation, reclassify_stored};

/// The signatures in use: where they come from, as written, compiled, and what the analysis
/// must know of each.
pub struct Signatures {
    pub source: SignatureSource,
    pub specs: Vec<SignatureSpec>,
    pub set: Arc<SignatureSet>,
    pub infos: Vec<SignatureInfo>,
}

impl Signatures {
    /// `--signatures DIR`, else `./signatures`, else the bundled set. A broken file is invalid
    /// input (exit 3), every problem named.
    pub fn load(dir: Option<&Path>) -> Result<Signatures, CliError> {
        Signatures::load_from(resolve_dir(dir), SIGNATURES_FLAG_HINT)
    }

    /// From `source`; `hint` says how this command is pointed at other signatures when the
    /// folder holds none.
    pub fn load_from(source: SignatureSource, hint: &'static str) -> Result<Signatures, CliError> {
        let invalid = |e| CliError::signatures(&source, e, hint);
        let specs = source.load().map_err(invalid)?;
        let set = SignatureSet::compile(specs.clone()).map_err(invalid)?;
        let infos = set.info();
        Ok(Signatures {
            source,
            specs,
            set: Arc::new(set),
            infos,
        })
    }

    /// What the survey classifies with.
    pub fn classifier(&self) -> Arc<dyn Classifier> {
        self.set.clone()
    }

    /// Stored classifications are keyed by it.
    pub fn fingerprint(&self) -> String {
        self.set.fingerprint()
    }
}

/// A store shared by the survey's tasks and the analysis.
pub type SharedStore = Arc<Mutex<Store>>;

/// Opens the store at `location` (an SQLite store is created if missing).
pub fn open_store(location: &StoreLocation) -> Result<SharedStore, CliError> {
    Ok(Arc::new(Mutex::new(Store::open_at(location)?)))
}

/// Takes the store's lock for writing `repo` (the whole SQLite store; the repository in a
/// PostgreSQL store) for `holder` (`flakestat survey`, named in the next one's message),
/// waiting up to `wait`: one writer per store.
pub fn lock_store(
    location: &StoreLocation,
    repo: &Repo,
    wait: Duration,
    holder: &str,
) -> Result<StoreGuard, CliError> {
    Ok(StoreGuard::acquire(location, repo, wait, holder)?)
}

/// The lock if free at once, `None` if another run holds it.
pub fn try_lock_store(
    location: &StoreLocation,
    repo: &Repo,
    holder: &str,
) -> Result<Option<StoreGuard>, CliError> {
    match StoreGuard::acquire(location, repo, Duration::ZERO, holder) {
        Ok(lock) => Ok(Some(lock)),
        Err(LockError::Busy { .. } | LockError::PostgresBusy { .. }) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Classifies the stored logs of `repo` the signatures have not seen yet; how many.
pub fn reclassify(
    store: &SharedStore,
    repo: &Repo,
    signatures: &Signatures,
) -> Result<u64, CliError> {
    Ok(reclassify_stored(store, repo, signatures.set.as_ref())?)
}

/// What the store holds of `[since, until)`, classified with `signatures`.
pub fn load_snapshot(
    store: &SharedStore,
    repo: &Repo,
    since: Timestamp,
    until: Timestamp,
    signatures: &Signatures,
) -> Result<Snapshot, CliError> {
    let store = store.lock().expect("store lock");
    Ok(store.load_snapshot(repo, since, until, &signatures.fingerprint())?)
}

/// What a command that reads only the store (`report`, `suggest`, `signatures audit`) works
/// on: the signatures in use, the window's snapshot classified with them, the analysis
/// settings.
pub struct FromStore {
    pub signatures: Signatures,
    /// Where the store is (the green sample of `signatures audit` writes to it too).
    pub location: StoreLocation,
    pub snapshot: Snapshot,
    pub config: AnalysisConfig,
    /// Stored logs classified now (the signatures changed since they were stored).
    pub classified: u64,
}

/// Loads the window `window` names, for `holder` (`flakestat report`, named in the lock file
/// while it re-classifies): resolves the flags, opens the store, re-classifies under the lock
/// when it is free (when a survey holds it, what is classified is reported and the rest shows
/// as "not classified yet"), and loads the window. `focus` picks one signature by id
/// (`report --signature`).
pub fn load_from_store(
    window: &WindowArgs,
    focus: Option<&str>,
    holder: &str,
) -> Result<FromStore, CliError> {
    let repo = settings::parse_repo(&window.repo)?;
    load_repo_from_store(&repo, &window.stored, focus, holder)
}

/// [`load_from_store`] for a repository already parsed (`report` takes several).
pub fn load_repo_from_store(
    repo: &Repo,
    window: &StoredArgs,
    focus: Option<&str>,
    holder: &str,
) -> Result<FromStore, CliError> {
    let repo = repo.clone();
    let stored = StoredWindow::resolve(window, focus)?;
    let StoredWindow {
        since,
        until,
        config,
        signatures,
        location,
    } = stored;
    let store = open_store(&location)?;
    check_stored(&store, &repo, &location, &window.since)?;
    let classified = match try_lock_store(&location, &repo, holder)? {
        Some(_lock) => reclassify(&store, &repo, &signatures)?,
        None => 0,
    };
    let snapshot = load_snapshot(&store, &repo, since, until, &signatures)?;
    Ok(FromStore {
        signatures,
        location,
        snapshot,
        config,
        classified,
    })
}

/// What [`StoredArgs`] resolve to: the window, the analysis settings (with `focus`, one known
/// signature), the signatures and where the store is.
pub struct StoredWindow {
    pub since: Timestamp,
    pub until: Timestamp,
    pub config: AnalysisConfig,
    pub signatures: Signatures,
    pub location: StoreLocation,
}

impl StoredWindow {
    pub fn resolve(stored: &StoredArgs, focus: Option<&str>) -> Result<StoredWindow, CliError> {
        let (since, until) =
            parse_window(&stored.since, stored.until.as_deref(), now_to_the_second())?;
        let mut config = settings::analysis_config(stored.config.as_deref(), None)?;
        let signatures = Signatures::load(stored.signatures.as_deref())?;
        config.focus = focus
            .map(|id| known_signature(id, &signatures))
            .transpose()?;
        let location =
            settings::resolve_store(stored.store.as_deref(), stored.cache_dir.as_deref())?;
        Ok(StoredWindow {
            since,
            until,
            config,
            signatures,
            location,
        })
    }
}

/// A repository never surveyed into this store is an error that says which survey to run
/// (`--since` as given).
fn check_stored(
    store: &SharedStore,
    repo: &Repo,
    location: &StoreLocation,
    since: &str,
) -> Result<(), CliError> {
    if store
        .lock()
        .expect("store lock")
        .default_branch(repo)?
        .is_some()
    {
        return Ok(());
    }
    Err(CliError::NothingStored(format!(
        "the store in {} holds nothing for {repo}: run `flakestat survey --repo {repo} --since {since}` first",
        location.describe(),
    )))
}

/// `--signature ID`, which must be one of the signatures in use.
fn known_signature(
    id: &str,
    signatures: &Signatures,
) -> Result<crate::model::SignatureId, CliError> {
    if signatures.infos.iter().any(|i| i.id.0 == id) {
        return Ok(crate::model::SignatureId(id.to_string()));
    }
    let known: Vec<&str> = signatures.infos.iter().map(|i| i.id.0.as_str()).collect();
    Err(CliError::Invalid(format!(
        "--signature {id:?}: no such signature in {}; known: {}",
        signatures.source,
        known.join(", ")
    )))
}

/// `exit::INCOMPLETE` (said on stderr) when the store lacks part of the window and
/// `--allow-incomplete` was not given; `exit::SUCCESS` otherwise.
pub fn incomplete_exit(global: &GlobalArgs, completeness: &Completeness, allow: bool) -> u8 {
    if completeness.is_complete() || allow {
        return exit::SUCCESS;
    }
    if !global.quiet {
        eprintln!(
            "flakestat: the store does not hold the whole window yet (runs without jobs: {}, logs not fetched: {}, windows not listed: {}); the figures leave out {} of its runs; exiting {} (--allow-incomplete accepts it)",
            completeness.runs_pending,
            completeness.logs_pending,
            completeness.unlisted.len(),
            completeness.runs_left_out,
            exit::INCOMPLETE
        );
    }
    exit::INCOMPLETE
}
