//! Re-classification from the store alone: stored logs that have no classification for the
//! current signatures (they changed, or a survey stopped between download and classification)
//! are read back, classified and stored. No network: `report`, `suggest` and `survey --offline`
//! need nothing else, and the survey calls it for what it stored earlier. The same pass reads
//! each stored log's preamble (where the job ran) once per parser version, so a store written
//! before flakestat kept it gains it with no request.

use flakestat_core::model::Repo;
use flakestat_core::signatures::Classifier;
use flakestat_core::signatures::preamble::{PREAMBLE_VERSION, parse_preamble};

use super::{StoreError, StoreHandle};

/// Classifies every stored log of `repo` that has no classification for the classifier's
/// fingerprint, then reads the preambles not read yet ([`reread_preambles`]). Returns how many
/// were classified. The store is taken per step, so a survey sharing it goes on meanwhile; call it from
/// synchronous code or a blocking task.
pub fn reclassify_stored(
    store: &StoreHandle,
    repo: &Repo,
    classifier: &dyn Classifier,
) -> Result<u64, StoreError> {
    let fingerprint = classifier.fingerprint();
    let todo = store.blocking(|s| s.logs_to_classify(repo, &fingerprint))?;
    for job in &todo {
        let Some(raw) = store.blocking(|s| s.load_log(*job))? else {
            continue;
        };
        let classification = classifier.classify(&raw);
        store.blocking(|s| s.store_classification(*job, &fingerprint, &classification))?;
    }
    reread_preambles(store, repo)?;
    Ok(todo.len() as u64)
}

/// Reads the preamble of every stored log of `repo` that the current parser has not read.
/// Returns how many were read.
pub fn reread_preambles(store: &StoreHandle, repo: &Repo) -> Result<u64, StoreError> {
    let todo = store.blocking(|s| s.preambles_to_read(repo, PREAMBLE_VERSION))?;
    for job in &todo {
        let Some(raw) = store.blocking(|s| s.load_log(*job))? else {
            continue;
        };
        let preamble = parse_preamble(&raw);
        store.blocking(|s| s.store_preamble(*job, PREAMBLE_VERSION, &preamble))?;
    }
    Ok(todo.len() as u64)
}
