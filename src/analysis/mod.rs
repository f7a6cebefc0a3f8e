//! Pure functions over a `Snapshot`: impact, re-runs, PR relevance, first occurrence. No I/O, no
//! clock: everything comes in as arguments, one `ReportData` goes out.

pub mod bisect;
pub mod nightly;
pub mod prs;

use serde::Serialize;

use crate::model::{Repo, SignatureId, SignatureInfo, Snapshot, Timestamp};

/// Settings the analysis needs (from `flakestat.toml` and flags, resolved by `cli`).
#[derive(Debug, Clone, Default)]
pub struct AnalysisConfig {}

/// Everything a reporter renders. Reporters compute nothing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReportData {
    pub repo: Option<Repo>,
    pub since: Option<Timestamp>,
    pub until: Option<Timestamp>,
    pub runs_total: u64,
    pub runs_failed: u64,
    pub jobs_failed: u64,
    pub jobs_unclassified: u64,
    pub signatures: Vec<SignatureReport>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SignatureReport {
    pub id: SignatureId,
    pub title: String,
    pub runs_hit: u64,
    pub jobs_hit: u64,
}

/// The whole analysis. (First version: totals and hits per signature; the reports work deepens it.)
pub fn analyze(
    snapshot: &Snapshot,
    signatures: &[SignatureInfo],
    _config: &AnalysisConfig,
) -> ReportData {
    use std::collections::BTreeSet;
    let in_window = |t: &Timestamp| {
        snapshot.since.is_none_or(|s| *t >= s) && snapshot.until.is_none_or(|u| *t < u)
    };
    let runs: BTreeSet<_> = snapshot
        .runs
        .iter()
        .filter(|r| in_window(&r.created_at))
        .map(|r| r.id)
        .collect();
    let failed_jobs: Vec<_> = snapshot
        .jobs
        .iter()
        .filter(|j| runs.contains(&j.run_id) && j.is_failed())
        .collect();
    let runs_failed = failed_jobs
        .iter()
        .map(|j| j.run_id)
        .collect::<BTreeSet<_>>();
    let jobs_unclassified = failed_jobs
        .iter()
        .filter(|j| {
            snapshot
                .classifications
                .get(&j.id)
                .is_some_and(|c| c.is_unclassified())
        })
        .count();
    let signatures = signatures
        .iter()
        .map(|info| {
            let hits: Vec<_> = failed_jobs
                .iter()
                .filter(|j| {
                    snapshot
                        .classifications
                        .get(&j.id)
                        .is_some_and(|c| c.matches.iter().any(|m| m.signature == info.id))
                })
                .collect();
            SignatureReport {
                id: info.id.clone(),
                title: info.title.clone(),
                runs_hit: hits.iter().map(|j| j.run_id).collect::<BTreeSet<_>>().len() as u64,
                jobs_hit: hits.len() as u64,
            }
        })
        .collect();
    ReportData {
        repo: snapshot.repo.clone(),
        since: snapshot.since,
        until: snapshot.until,
        runs_total: runs.len() as u64,
        runs_failed: runs_failed.len() as u64,
        jobs_failed: failed_jobs.len() as u64,
        jobs_unclassified: jobs_unclassified as u64,
        signatures,
    }
}
