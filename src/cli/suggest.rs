//! `flakestat suggest`: draft signature files for the groups of failed jobs no signature
//! explains, from the store alone (like `report`). Every draft written has passed
//! `signatures check` together with the signatures in use; a draft that would not is left out
//! and said why.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use clap::Args;

use super::config::load_config;
use super::settings;
use super::when::parse_window;
use super::{CodedError, GlobalArgs};
use crate::analysis::suggest::{ClaimedLine, checked, suggest};
use crate::analysis::{self, AnalysisConfig};
use crate::exit;
use crate::model::Repo;
use crate::report::sanitize::terminal_line;
use crate::signatures::{self, SignatureSet};
use crate::store::{Store, StoreError};

const EXAMPLES: &str = "\
Examples:
  flakestat suggest --repo NVIDIA/cuda-python --since 30d
  flakestat suggest --repo NVIDIA/cuda-python --since 2026-06-15 --write drafts/ --min-jobs 3

Reads only the store that `flakestat survey` filled. Each draft claims one group of unclassified
jobs (see the report's unclassified groups); review it, rename it, add `paths` and `issue`, and
move it into your signatures folder.";

#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct SuggestArgs {
    #[arg(long, value_name = "OWNER/NAME")]
    pub repo: String,
    #[arg(long, value_name = "WHEN")]
    pub since: String,
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,
    /// Folder of signature files in use [default: ./signatures if it exists, else the bundled set].
    #[arg(long, value_name = "DIR")]
    pub signatures: Option<PathBuf>,
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Write each draft to DIR/<id>.toml (created if missing) instead of printing them.
    #[arg(long, value_name = "DIR")]
    pub write: Option<PathBuf>,
    /// Only groups of at least N jobs get a draft.
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..))]
    pub min_jobs: u64,
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

fn invalid(message: impl Into<String>) -> CodedError {
    CodedError::new(exit::INVALID_INPUT, message)
}

fn store_error(err: StoreError) -> CodedError {
    CodedError::new(exit::STORE, err.to_string())
}

/// What a command reading the store needs: the signatures in use and the window's snapshot,
/// classified with them (stored logs are re-classified first when the signatures changed).
pub(super) struct Loaded {
    pub specs: Vec<crate::signatures::SignatureSpec>,
    pub infos: Vec<crate::model::SignatureInfo>,
    pub snapshot: crate::model::Snapshot,
    pub config: AnalysisConfig,
}

/// Loads like `report` does, for `command` (named in the lock message).
pub(super) fn load_from_store(
    repo: &str,
    since: &str,
    until: Option<&str>,
    signatures: Option<&std::path::Path>,
    cache_dir: Option<&std::path::Path>,
    config: Option<&std::path::Path>,
    command: &str,
) -> anyhow::Result<Loaded> {
    let repo = Repo::parse(repo).ok_or_else(|| {
        invalid(format!(
            "--repo {repo:?} is not OWNER/NAME (for example NVIDIA/cuda-python)"
        ))
    })?;
    let (since_t, until_t) =
        parse_window(since, until, chrono::Utc::now()).map_err(|e| invalid(e.to_string()))?;
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let file = load_config(config, &cwd).map_err(|e| invalid(e.to_string()))?;

    let source = signatures::resolve_dir(signatures);
    let specs = source
        .load()
        .map_err(|e| invalid(format!("signatures from {source}: {e}")))?;
    let set = SignatureSet::compile(specs.clone())
        .map_err(|e| invalid(format!("signatures from {source}: {e}")))?;
    let infos = set.info();

    let cache_dir = settings::resolve_cache_dir(cache_dir)
        .map_err(|e| CodedError::new(exit::STORE, e.to_string()))?;
    let store = Store::open(&cache_dir).map_err(store_error)?;
    if store.default_branch(&repo).map_err(store_error)?.is_none() {
        return Err(CodedError::new(
            exit::ERROR,
            format!(
                "the store in {} holds nothing for {repo}: run `flakestat survey --repo {repo} --since {since}` first",
                cache_dir.display(),
            ),
        )
        .into());
    }
    let store = Arc::new(Mutex::new(store));
    // `SignatureSet` is the store's re-classifier as it is (it implements `signatures::Classifier`).
    let classifier = set;
    if let Some(_lock) = super::nightly::try_lock_store(&cache_dir, command)? {
        crate::store::reclassify_stored(&store, &repo, &classifier).map_err(store_error)?;
    }
    let snapshot = store
        .lock()
        .expect("store lock")
        .load_snapshot(&repo, since_t, until_t, &classifier.fingerprint())
        .map_err(store_error)?;
    Ok(Loaded {
        specs,
        infos,
        snapshot,
        config: AnalysisConfig {
            pr_conventions: file.pr_conventions,
            matrix: file.matrix,
            focus: None,
            cost: file.cost,
        },
    })
}

pub fn run(global: &GlobalArgs, args: SuggestArgs) -> anyhow::Result<u8> {
    let Loaded {
        specs,
        infos,
        snapshot,
        config,
    } = load_from_store(
        &args.repo,
        &args.since,
        args.until.as_deref(),
        args.signatures.as_deref(),
        args.cache_dir.as_deref(),
        args.config.as_deref(),
        "flakestat suggest",
    )?;
    let data = analysis::analyze(&snapshot, &infos, &config);

    // Lines of jobs existing signatures claim: a draft must not claim them too, or say so.
    let mut claimed = Vec::new();
    for job in &snapshot.jobs {
        let Some(c) = snapshot.classifications.get(&job.id) else {
            continue;
        };
        if c.matches.is_empty() {
            continue;
        }
        let label = format!(
            "run {} attempt {} job {} ({})",
            job.run_id.0, job.run_attempt, job.id.0, job.name
        );
        let sigs: Vec<String> = c.matches.iter().map(|m| m.signature.0.clone()).collect();
        for text in c
            .error_lines
            .iter()
            .map(|l| &l.text)
            .chain(c.matches.iter().map(|m| &m.text))
        {
            claimed.push(ClaimedLine {
                text: text.clone(),
                job: label.clone(),
                signatures: sigs.clone(),
            });
        }
    }
    let (drafts, skipped) = suggest(&data.unclassified, &claimed, args.min_jobs);

    // Keep only drafts that pass `signatures check` with the signatures in use.
    let (passed, rejected) = checked(drafts, &specs);

    match &args.write {
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(|e| {
                CodedError::new(exit::ERROR, format!("cannot create {}: {e}", dir.display()))
            })?;
            for (draft, toml) in &passed {
                let path = dir.join(format!("{}.toml", draft.id));
                std::fs::write(&path, toml).map_err(|e| {
                    CodedError::new(exit::ERROR, format!("cannot write {}: {e}", path.display()))
                })?;
            }
        }
        None => {
            let mut out = String::new();
            for (draft, toml) in &passed {
                out.push_str(&format!("# ---- {}.toml ----\n{toml}\n", draft.id));
            }
            super::output::write_output(None, |w| w.write_all(out.as_bytes()))?;
        }
    }
    if !global.quiet {
        let jobs: u64 = passed.iter().map(|(d, _)| d.jobs).sum();
        eprintln!(
            "flakestat: {} draft signature(s) for {jobs} of {} unclassified job(s){}",
            passed.len(),
            data.jobs_unclassified,
            args.write
                .as_ref()
                .map(|d| format!(", written to {}", d.display()))
                .unwrap_or_default()
        );
        for (draft, _) in &passed {
            if !draft.overlaps.is_empty() {
                eprintln!(
                    "flakestat: note: {} also matches {} job(s) existing signatures claim",
                    draft.id,
                    draft.overlaps.len()
                );
            }
        }
        for s in &skipped {
            eprintln!(
                "flakestat: note: no draft for group {} ({} jobs): {}",
                s.group, s.jobs, s.reason
            );
        }
        for (id, why) in &rejected {
            eprintln!(
                "flakestat: note: left out {id}: `signatures check` would fail: {}",
                terminal_line(why)
            );
        }
    }
    Ok(exit::SUCCESS)
}
