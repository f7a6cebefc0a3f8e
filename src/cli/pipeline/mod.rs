//! The steps every command is made of, written once: load the signatures, open the store,
//! re-classify what it holds, load a window's snapshot, write the report and say whether it was
//! whole. `fetch.rs` adds the networked steps (connect, survey, ancestry). A command
//! resolves its settings, then calls these in order; no command imports another.

pub mod fetch;
pub mod pr;
pub mod scope;

use std::path::Path;
use std::sync::Arc;

use super::GlobalArgs;
use super::error::{CliError, SIGNATURES_FLAG_HINT};
use super::repos::Target;
use super::settings;
use super::source::{StoredArgs, WindowArgs};
use super::when::{Bound, WhenError, parse_when};
use crate::analysis::{AnalysisConfig, Completeness};
use crate::exit;
use crate::model::{Repo, SignatureInfo, Snapshot, Timestamp};
use crate::signatures::{
    Classifier, SignatureError, SignatureSet, SignatureSource, SignatureSpec, resolve_dir,
};
use crate::store::{Access, Store, StoreHandle, StoreLocation, enclosing_store, reclassify_stored};

/// The signatures in use: where they come from, as written, compiled, and what the analysis
/// must know of each.
pub struct Signatures {
    pub source: SignatureSource,
    pub specs: Vec<SignatureSpec>,
    pub set: Arc<SignatureSet>,
    pub infos: Vec<SignatureInfo>,
}

/// `-q`: the notices that loading prints (a folder without signature files) are left out. Set
/// once by the command line before any command runs; loading is reached from every command's
/// own path (and the stored window's), which do not all carry the global flags.
static QUIET_NOTICES: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

pub fn quiet_notices(quiet: bool) {
    QUIET_NOTICES.store(quiet, std::sync::atomic::Ordering::Relaxed);
}

impl Signatures {
    /// `--signatures DIR`, else `./signatures`, else the bundled set. A broken file is invalid
    /// input (exit 3), every problem named. A folder without signature files is no error here:
    /// a repository with no signatures yet still has its failing tests named and analysed
    /// (`report --tests`), so nothing is classified by signature, and one stderr line says so
    /// (a mistyped folder shows at once).
    pub fn load(dir: Option<&Path>) -> Result<Signatures, CliError> {
        let source = resolve_dir(dir);
        match source.load() {
            Ok(specs) => Signatures::compiled(source, specs, SIGNATURES_FLAG_HINT),
            Err(SignatureError::Empty { dir }) => {
                if !QUIET_NOTICES.load(std::sync::atomic::Ordering::Relaxed) {
                    say!(
                        "flakestat: no signature files (*.toml) in {}: no failure is classified by \
                     signature; failing tests are still named (report --tests)",
                        dir.display()
                    );
                }
                Signatures::compiled(source, Vec::new(), SIGNATURES_FLAG_HINT)
            }
            Err(e) => Err(CliError::signatures(&source, e, SIGNATURES_FLAG_HINT)),
        }
    }

    /// As [`Signatures::load`], but a folder without signature files is invalid input (exit 3):
    /// for `classify` without `--tests`, which has nothing else to do.
    pub fn load_strict(dir: Option<&Path>) -> Result<Signatures, CliError> {
        Signatures::load_from(resolve_dir(dir), SIGNATURES_FLAG_HINT)
    }

    /// From `source`; `hint` says how this command is pointed at other signatures when the
    /// folder holds none.
    pub fn load_from(source: SignatureSource, hint: &'static str) -> Result<Signatures, CliError> {
        let specs = source
            .load()
            .map_err(|e| CliError::signatures(&source, e, hint))?;
        Signatures::compiled(source, specs, hint)
    }

    fn compiled(
        source: SignatureSource,
        specs: Vec<SignatureSpec>,
        hint: &'static str,
    ) -> Result<Signatures, CliError> {
        let invalid = |e| CliError::signatures(&source, e, hint);
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

/// A store shared by the survey's tasks and the analysis: the survey's async tasks reach it on
/// its own thread (`StoreHandle::run`), the commands' synchronous steps with
/// `StoreHandle::blocking`.
pub type SharedStore = StoreHandle;

/// Opens the store at `location` (an SQLite store is created if missing). No lock is taken:
/// several runs may write one store at once, each write a short transaction of its own.
pub fn open_store(location: &StoreLocation) -> Result<SharedStore, CliError> {
    Ok(StoreHandle::new(Store::open_at(location)?))
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
    let fingerprint = signatures.fingerprint();
    Ok(store.blocking(|s| s.load_snapshot(repo, since, until, &fingerprint))?)
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
    /// Stored logs classified now (the signatures changed since they were stored); `export`
    /// says it with `--verbose` (`report` reads its scope through `scope::load_stored`).
    #[cfg_attr(not(feature = "parquet"), allow(dead_code))]
    pub classified: u64,
    /// What a fix-it survey command repeats of the flags given (`StoredArgs::survey_flags`).
    pub survey_flags: Vec<String>,
}

impl FromStore {
    /// The snapshot analysed; an incomplete report's fix-it command repeats the flags given.
    pub fn analyze(&self) -> crate::analysis::ReportData {
        let mut data =
            crate::analysis::analyze(&self.snapshot, &self.signatures.infos, &self.config);
        data.fill_gap = Some(super::source::fill_gap_command(
            &data.survey_gap(),
            &self.survey_flags,
        ));
        data
    }
}

/// Loads the window `window` names: resolves the flags, opens the store, re-classifies what
/// the signatures have not seen (beside any survey writing meanwhile), and loads the window.
/// `focus` picks one signature by id (`report --signature`).
pub fn load_from_store(window: &WindowArgs, focus: Option<&str>) -> Result<FromStore, CliError> {
    let repo = window
        .repo
        .as_deref()
        .map(settings::parse_repo)
        .transpose()?;
    load_repo_from_store(repo.as_ref(), &window.stored, focus)
}

/// [`load_from_store`] for a repository already parsed; `None`: the replay's. A scope of one
/// ([`scope::load_stored`]), loaded the way `report` loads any scope.
pub fn load_repo_from_store(
    repo: Option<&Repo>,
    window: &StoredArgs,
    focus: Option<&str>,
) -> Result<FromStore, CliError> {
    let target = repo.cloned().map(Target::One);
    let scope::StoredScope {
        window,
        mut snapshots,
        classified,
        survey_flags,
    } = scope::load_stored(target.as_ref(), window, focus)?;
    let StoredWindow {
        config,
        signatures,
        location,
        ..
    } = window;
    Ok(FromStore {
        signatures,
        location,
        snapshot: snapshots.pop().expect("a scope of one, one snapshot"),
        config,
        classified,
        survey_flags,
    })
}

/// Opens the store a store-only command reads, never making one: a cache folder without a
/// store is "no store at …" with the survey that makes it (`target`: its `--repo`/`--org`), a
/// folder inside a store is refused, and a store that cannot be written is opened for reading.
pub fn open_stored(
    args: &StoredArgs,
    window: &StoredWindow,
    target: &str,
) -> Result<(SharedStore, Access), CliError> {
    match Store::open_existing(&window.location)? {
        Some((store, access)) => Ok((StoreHandle::new(store), access)),
        None => {
            let StoreLocation::Sqlite { cache_dir } = &window.location else {
                unreachable!("a PostgreSQL store always opens or fails")
            };
            if let Some(enclosing) = enclosing_store(cache_dir) {
                return Err(crate::store::StoreError::Nested {
                    path: cache_dir.clone(),
                    cache_dir: enclosing,
                }
                .into());
            }
            Err(CliError::NothingStored(format!(
                "no store at {}: run `{}` first (it makes the store there), or pass the --cache-dir a survey wrote to{}",
                cache_dir.display(),
                args.survey_command(target),
                replays_kept_apart(args, window),
            )))
        }
    }
}

/// Classifies in memory the stored logs of `snapshot` the signatures have not seen (a
/// read-only store keeps none of it); how many.
pub fn classify_in_memory(
    store: &SharedStore,
    snapshot: &mut Snapshot,
    signatures: &Signatures,
) -> Result<u64, CliError> {
    let todo: Vec<crate::model::JobId> = snapshot
        .logs
        .iter()
        .filter(|(job, status)| {
            **status == crate::model::LogStatus::Stored
                && !snapshot.classifications.contains_key(job)
        })
        .map(|(job, _)| *job)
        .collect();
    let mut classified = 0;
    for job in todo {
        let Some(raw) = store.blocking(|s| s.load_log(job))? else {
            continue;
        };
        snapshot
            .classifications
            .insert(job, signatures.set.classify(&raw));
        classified += 1;
    }
    Ok(classified)
}

/// One line on stderr: the store is read as it is, and what was classified for this report only.
pub fn say_read_only(store: &SharedStore, classified: u64) {
    say!(
        "flakestat: the store {} is read-only: read as it is, {classified} stored logs classified in memory for this report (not stored)",
        store.blocking(|s| s.describe())
    );
}

/// What [`StoredArgs`] resolve to: the window, the analysis settings (with `focus`, one known
/// signature), the signatures and where the store is.
pub struct StoredWindow {
    pub since: Timestamp,
    /// `--until`; without it the window ends where the store's survey ends ([`Self::until_for`]).
    pub until: Option<Timestamp>,
    /// What spans back (`--since 7d`) are measured from.
    pub now: Timestamp,
    /// `--until` as given, for messages.
    until_text: Option<String>,
    pub config: AnalysisConfig,
    pub signatures: Signatures,
    pub location: StoreLocation,
    /// The replay's repository, with `--replay`.
    pub replay_repo: Option<Repo>,
}

impl StoredWindow {
    pub fn resolve(stored: &StoredArgs, focus: Option<&str>) -> Result<StoredWindow, CliError> {
        // A replay has its own clock: "now" is the end of its recording.
        let replay = super::source::Replay::load(stored.replay.as_deref())?;
        let now = settings::resolve_now(None, replay.as_ref())?;
        let replay_repo = replay.as_ref().map(|r| r.repo());
        drop(replay);
        let since = parse_when(&stored.since, Bound::Since, now)?;
        let until = stored
            .until
            .as_deref()
            .map(|u| parse_when(u, Bound::Until, now))
            .transpose()?
            .map(|u| settings::end_by_now(u, now, replay_repo.is_some()));
        if let Some(until) = until
            && until <= since
        {
            return Err(WhenError::Empty {
                since: stored.since.clone(),
                until: stored.until.clone().unwrap_or_default(),
            }
            .into());
        }
        let mut config = settings::analysis_config(stored.config.as_deref(), None)?;
        let signatures = Signatures::load(stored.signatures.as_deref())?;
        config.focus = focus
            .map(|id| known_signature(id, &signatures))
            .transpose()?;
        let resolved = settings::resolve_store_or_replay(
            stored.store.as_deref(),
            stored.cache_dir.as_deref(),
            stored.replay.as_deref(),
        )?;
        Ok(StoredWindow {
            since,
            until,
            now,
            until_text: stored.until.clone(),
            config,
            signatures,
            location: resolved.location,
            replay_repo,
        })
    }

    /// The window's end for `repos`: `--until`, else where the store's survey of them ends (the
    /// latest end among them: a repository surveyed less far shows the rest as not listed),
    /// else, when nothing was surveyed past `--since`, now (and the report names the whole
    /// window as not listed). Reports without `--until` on the same store are then
    /// byte-identical whatever the clock says.
    pub fn until_for(&self, store: &SharedStore, repos: &[Repo]) -> Result<Timestamp, CliError> {
        if let Some(until) = self.until {
            return Ok(until);
        }
        let surveyed = store.blocking(|store| {
            let mut surveyed = None;
            for repo in repos {
                surveyed = surveyed.max(store.surveyed_to(repo)?);
            }
            Ok::<_, CliError>(surveyed)
        })?;
        match surveyed.filter(|&t| t > self.since) {
            Some(end) => Ok(end),
            None if self.now > self.since => Ok(self.now),
            None => Err(WhenError::Empty {
                since: rfc3339(self.since),
                until: self.until_text.clone().unwrap_or_else(|| "now".to_string()),
            }
            .into()),
        }
    }
}

fn rfc3339(t: Timestamp) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// When a report without `--replay` finds nothing in the default store and the cache folder
/// keeps replays' stores: that they are kept apart, and how to read one (a survey without
/// `--replay` would go to GitHub).
pub fn replays_kept_apart(args: &StoredArgs, window: &StoredWindow) -> String {
    let StoreLocation::Sqlite { cache_dir } = &window.location else {
        return String::new();
    };
    if args.replay.is_some() {
        return String::new();
    }
    let kept = std::fs::read_dir(cache_dir.join(settings::REPLAY_STORES))
        .map(|mut d| d.next().is_some())
        .unwrap_or(false);
    if kept {
        "; a replay's store is kept apart from real data: to read what `survey --replay DIR` stored, add --replay DIR".to_string()
    } else {
        String::new()
    }
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
        say!(
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
