//! Several repositories in one report: a combination of the per-repository `ReportData` that
//! `analyze` gives for each, never a re-analysis. Every figure of a repository stays its own
//! (impact windows, bisection and matrix findings are per repository: a merge in one repository
//! does not introduce a flake in another); across repositories the combination adds them up,
//! ranks signatures by runs hit in all of them, says which repositories each one hits with their
//! hits and runs, and lays the matrix dimensions of those repositories side by side.
//!
//! The combined `ReportData` (`OrgReport::combined`) carries the sums in the single-repository
//! shape, so the JSON document keeps schema 1: its `repo` is `null`, its `signatures` are the
//! combined signatures, and the per-repository documents and breakdowns are added fields.

use std::collections::{BTreeMap, BTreeSet};

use crate::share::percent;

use serde::Serialize;

use super::cost::{Cost, LabelCost};
use super::{
    Completeness, DimensionReport, DimensionValue, ImpactStart, ImpactWindow, LogGap, ReportData,
    SignatureReport, UnclassifiedGroup,
};
use crate::matrix;
use crate::model::{Repo, SignatureId, Timestamp};

/// The report over several repositories.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OrgReport {
    /// The owner named with `--org`, when one was.
    pub owner: Option<String>,
    /// One report per repository with runs in the window, by name.
    pub repos: Vec<ReportData>,
    /// The sums over `repos`, in the single-repository shape (`repo` is `None`); its
    /// `signatures` are the combined signatures, ranked by runs hit across repositories.
    pub combined: ReportData,
    /// Per combined signature, in the same order: where it hits.
    pub signatures: Vec<SignatureAcross>,
    /// Repositories asked for that have no run in the window (left out of everything).
    pub without_runs: Vec<Repo>,
}

/// One signature across the repositories.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SignatureAcross {
    pub id: SignatureId,
    /// The repositories it hits, most runs hit first (ties by name).
    pub repos: Vec<RepoHits>,
    /// The matrix dimensions of the repositories it hits, side by side.
    pub dimensions: Vec<DimensionAcross>,
}

/// A signature's hits in one repository.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RepoHits {
    pub repo: Repo,
    pub runs_hit: u64,
    pub jobs_hit: u64,
    /// Runs of its impact window in this repository (the denominator of `percent`).
    pub runs: u64,
    pub percent: Option<f64>,
    /// Runs of the survey window in this repository.
    pub runs_total: u64,
    pub runs_rerun_to_green: u64,
    /// The first counted hit's run creation time.
    pub first_hit: Option<Timestamp>,
}

/// One matrix dimension of a signature, per repository it hits.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DimensionAcross {
    pub name: String,
    /// Per repository (in `SignatureAcross::repos` order): every value its jobs had, with hits.
    pub repos: Vec<(Repo, Vec<DimensionValue>)>,
    /// Values hit in every repository that has this dimension (when it hits two or more).
    pub shared: Vec<String>,
}

/// Combines per-repository reports (each from `analyze` with the same window, signatures and
/// focus). Repositories with no run in the window and nothing pending are set aside in
/// `without_runs`.
pub fn combine(reports: Vec<ReportData>, owner: Option<String>) -> OrgReport {
    let (mut repos, empty): (Vec<ReportData>, Vec<ReportData>) = reports
        .into_iter()
        .partition(|r| r.runs_total > 0 || !r.completeness.is_complete());
    repos.sort_by_key(|r| r.repo.as_ref().map(Repo::sort_key));
    let mut without_runs: Vec<Repo> = empty.into_iter().filter_map(|r| r.repo).collect();
    without_runs.sort_by_key(Repo::sort_key);

    let first = repos.first();
    let sum = |f: fn(&ReportData) -> u64| repos.iter().map(f).sum::<u64>();
    let mut gaps: BTreeMap<super::LogGapReason, u64> = BTreeMap::new();
    for r in &repos {
        for g in &r.logs_unknown {
            *gaps.entry(g.reason).or_default() += g.jobs;
        }
    }

    // Every report lists the same signatures (those loaded, or the focus).
    let mut ids: Vec<SignatureId> = Vec::new();
    for r in &repos {
        for s in &r.signatures {
            if !ids.contains(&s.id) {
                ids.push(s.id.clone());
            }
        }
    }
    let mut pairs: Vec<(SignatureReport, SignatureAcross)> = ids
        .iter()
        .map(|id| {
            let parts: Vec<(&Repo, &ReportData, &SignatureReport)> = repos
                .iter()
                .filter_map(|r| {
                    let s = r.signatures.iter().find(|s| s.id == *id)?;
                    Some((r.repo.as_ref()?, r, s))
                })
                .collect();
            (combine_signature(&parts), across(id, &parts))
        })
        .collect();
    pairs.sort_by(|(a, aa), (b, ba)| {
        b.runs_hit
            .cmp(&a.runs_hit)
            .then_with(|| ba.repos.len().cmp(&aa.repos.len()))
            .then_with(|| a.id.cmp(&b.id))
    });
    let (signatures, across): (Vec<_>, Vec<_>) = pairs.into_iter().unzip();

    let combined = ReportData {
        repo: None,
        default_branch: String::new(),
        since: first.and_then(|r| r.since),
        until: first.and_then(|r| r.until),
        // "Surveyed to" only when every repository's survey ends at the same time.
        surveyed_to: first
            .and_then(|r| r.surveyed_to)
            .filter(|&t| repos.iter().all(|r| r.surveyed_to == Some(t))),
        fill_gap: first.and_then(|r| r.fill_gap.clone()),
        focus: first.and_then(|r| r.focus.clone()),
        runs_total: sum(|r| r.runs_total),
        runs_failed: sum(|r| r.runs_failed),
        runs_rerun: sum(|r| r.runs_rerun),
        runs_failed_classified: sum(|r| r.runs_failed_classified),
        jobs_failed: sum(|r| r.jobs_failed),
        jobs_classified: sum(|r| r.jobs_classified),
        jobs_unclassified: sum(|r| r.jobs_unclassified),
        logs_unknown: gaps
            .into_iter()
            .map(|(reason, jobs)| LogGap { reason, jobs })
            .collect(),
        signatures,
        unclassified: merge_unclassified(repos.iter().flat_map(|r| r.unclassified.iter())),
        cost: sum_costs(repos.iter().map(|r| &r.cost)),
        completeness: merge_completeness(repos.iter().map(|r| &r.completeness)),
        incidents: repos.iter().flat_map(|r| r.incidents.clone()).collect(),
        machines: Default::default(),
    };
    OrgReport {
        owner,
        repos,
        combined,
        signatures: across,
        without_runs,
    }
}

/// Where one signature hits, and its dimensions side by side.
fn across(id: &SignatureId, parts: &[(&Repo, &ReportData, &SignatureReport)]) -> SignatureAcross {
    let mut repos: Vec<RepoHits> = parts
        .iter()
        .filter(|(_, _, s)| s.runs_hit > 0)
        .map(|(repo, data, s)| {
            let runs = s.impact_window.as_ref().map_or(0, |w| w.runs);
            RepoHits {
                repo: (*repo).clone(),
                runs_hit: s.runs_hit,
                jobs_hit: s.jobs_hit,
                runs,
                percent: s
                    .impact_window
                    .as_ref()
                    .map_or_else(|| percent(s.runs_hit, runs), |w| w.percent),
                runs_total: data.runs_total,
                runs_rerun_to_green: s.runs_rerun_to_green,
                first_hit: s.first_hit.as_ref().map(|h| h.run_created_at),
            }
        })
        .collect();
    repos.sort_by(|a, b| {
        b.runs_hit
            .cmp(&a.runs_hit)
            .then_with(|| a.repo.sort_key().cmp(&b.repo.sort_key()))
    });
    let by_repo: BTreeMap<String, &SignatureReport> = parts
        .iter()
        .map(|(repo, _, s)| (repo.to_string(), *s))
        .collect();
    let mut names: Vec<String> = Vec::new();
    for hit in &repos {
        for d in &by_repo[&hit.repo.to_string()].dimensions {
            if !names.contains(&d.name) {
                names.push(d.name.clone());
            }
        }
    }
    let dimensions = names
        .into_iter()
        .map(|name| {
            let per_repo: Vec<(Repo, Vec<DimensionValue>)> = repos
                .iter()
                .filter_map(|hit| {
                    let d = by_repo[&hit.repo.to_string()]
                        .dimensions
                        .iter()
                        .find(|d| d.name == name)?;
                    Some((hit.repo.clone(), d.values.clone()))
                })
                .collect();
            let hit_sets: Vec<BTreeSet<&str>> = per_repo
                .iter()
                .map(|(_, values)| {
                    values
                        .iter()
                        .filter(|v| v.jobs_hit > 0)
                        .map(|v| v.value.as_str())
                        .collect()
                })
                .collect();
            let mut shared: Vec<String> = if hit_sets.len() >= 2 {
                hit_sets[0]
                    .iter()
                    .filter(|v| hit_sets[1..].iter().all(|s| s.contains(*v)))
                    .map(|v| v.to_string())
                    .collect()
            } else {
                Vec::new()
            };
            shared.sort_by(|a, b| matrix::natural_cmp(a, b));
            DimensionAcross {
                name,
                repos: per_repo,
                shared,
            }
        })
        .collect();
    SignatureAcross {
        id: id.clone(),
        repos,
        dimensions,
    }
}

/// One signature's figures added up over the repositories. What belongs to one repository
/// alone (the bisection, matrix findings, the timeline and heat maps) is left out; the impact
/// window spans the repositories' own windows, with their runs added up.
fn combine_signature(parts: &[(&Repo, &ReportData, &SignatureReport)]) -> SignatureReport {
    let first = parts[0].2;
    let sigs: Vec<&SignatureReport> = parts.iter().map(|(_, _, s)| *s).collect();
    let sum = |f: fn(&SignatureReport) -> u64| sigs.iter().map(|s| f(s)).sum::<u64>();
    let runs_hit = sum(|s| s.runs_hit);
    let windows: Vec<&ImpactWindow> = sigs
        .iter()
        .filter_map(|s| s.impact_window.as_ref())
        .collect();
    let impact_window = (!windows.is_empty()).then(|| {
        let runs = windows.iter().map(|w| w.runs).sum();
        ImpactWindow {
            starts_at: if windows.iter().all(|w| w.starts_at == ImpactStart::Merge) {
                ImpactStart::Merge
            } else {
                ImpactStart::FirstHit
            },
            start: windows.iter().map(|w| w.start).min().expect("not empty"),
            end: windows.iter().map(|w| w.end).max().expect("not empty"),
            runs,
            percent: percent(runs_hit, runs),
            runs_in_progress: windows.iter().map(|w| w.runs_in_progress).sum(),
        }
    });
    let mut workflows: BTreeSet<String> = BTreeSet::new();
    let mut tests: BTreeMap<String, u64> = BTreeMap::new();
    for s in &sigs {
        workflows.extend(s.workflows.iter().cloned());
        for (t, n) in &s.tests {
            *tests.entry(t.clone()).or_default() += n;
        }
    }
    let mut hits: Vec<_> = sigs.iter().flat_map(|s| s.hits.iter().cloned()).collect();
    hits.sort_by_key(|h| (h.run_created_at, h.run_id, h.attempt, h.job_id));
    let mut excluded_runs: Vec<_> = sigs
        .iter()
        .flat_map(|s| s.excluded_runs.iter().cloned())
        .collect();
    excluded_runs.sort_by_key(|r| (r.created_at, r.run_id));
    let mut unknown_runs: Vec<_> = sigs
        .iter()
        .flat_map(|s| s.unknown_runs.iter().cloned())
        .collect();
    unknown_runs.sort_by_key(|r| (r.created_at, r.run_id));
    let mut own_breakage_runs: Vec<_> = sigs
        .iter()
        .flat_map(|s| s.own_breakage_runs.iter().cloned())
        .collect();
    own_breakage_runs.sort_by_key(|r| (r.created_at, r.run_id));
    SignatureReport {
        id: first.id.clone(),
        title: first.title.clone(),
        issue: first.issue.clone(),
        paths: first.paths.clone(),
        invalid_paths: first.invalid_paths.clone(),
        workflows: workflows.into_iter().collect(),
        runs_hit,
        jobs_hit: sum(|s| s.jobs_hit),
        jobs_unknown: sum(|s| s.jobs_unknown),
        impact_window,
        bisection: None,
        runs_hit_default_branch: sum(|s| s.runs_hit_default_branch),
        runs_hit_pr: sum(|s| s.runs_hit_pr),
        runs_hit_pr_unrelated: sum(|s| s.runs_hit_pr_unrelated),
        pr_relevance_unknown: sigs
            .iter()
            .flat_map(|s| s.pr_relevance_unknown.iter().cloned())
            .collect(),
        runs_hit_other: sum(|s| s.runs_hit_other),
        runs_rerun_to_green: sum(|s| s.runs_rerun_to_green),
        max_attempts: sigs.iter().map(|s| s.max_attempts).max().unwrap_or(0),
        runs_hit_still_failing: sum(|s| s.runs_hit_still_failing),
        clean_runs_before: sum(|s| s.clean_runs_before),
        runs_before_unknown: sum(|s| s.runs_before_unknown),
        runs_hit_before: sum(|s| s.runs_hit_before),
        before_from: sigs.iter().filter_map(|s| s.before_from).min(),
        first_hit: sigs
            .iter()
            .filter_map(|s| s.first_hit.as_ref())
            .min_by_key(|h| (h.run_created_at, h.run_id))
            .cloned(),
        excluded_runs,
        unknown_runs,
        own_breakage_runs,
        dimensions: sum_dimensions(sigs.iter().map(|s| s.dimensions.as_slice())),
        findings: Vec::new(),
        within: None,
        tests,
        hits,
        cost: sum_costs(sigs.iter().map(|s| &s.cost)),
        timeline: None,
        heatmaps: Vec::new(),
    }
}

/// Dimension by dimension, value by value, jobs hit and jobs run added up.
fn sum_dimensions<'a>(parts: impl Iterator<Item = &'a [DimensionReport]>) -> Vec<DimensionReport> {
    let mut order: Vec<String> = Vec::new();
    let mut table: BTreeMap<String, BTreeMap<String, (u64, u64)>> = BTreeMap::new();
    for dims in parts {
        for d in dims {
            if !order.contains(&d.name) {
                order.push(d.name.clone());
            }
            let values = table.entry(d.name.clone()).or_default();
            for v in &d.values {
                let cell = values.entry(v.value.clone()).or_default();
                cell.0 += v.jobs_hit;
                cell.1 += v.jobs_total;
            }
        }
    }
    order
        .into_iter()
        .map(|name| {
            let mut values: Vec<DimensionValue> = table
                .remove(&name)
                .unwrap_or_default()
                .into_iter()
                .map(|(value, (jobs_hit, jobs_total))| DimensionValue {
                    value,
                    jobs_hit,
                    jobs_total,
                })
                .collect();
            values.sort_by(|a, b| matrix::natural_cmp(&a.value, &b.value));
            DimensionReport { name, values }
        })
        .collect()
}

fn sum_costs<'a>(costs: impl Iterator<Item = &'a Cost>) -> Cost {
    let mut total = Cost::default();
    for c in costs {
        total.job_seconds += c.job_seconds;
        total.rerun_seconds += c.rerun_seconds;
        total.gpu_job_seconds += c.gpu_job_seconds;
        total.gpu_rerun_seconds += c.gpu_rerun_seconds;
        total.jobs_unknown += c.jobs_unknown;
        for (label, l) in &c.by_label {
            let t: &mut LabelCost = total.by_label.entry(label.clone()).or_default();
            t.job_seconds += l.job_seconds;
            t.rerun_seconds += l.rerun_seconds;
            t.gpu |= l.gpu;
        }
        if let Some(p) = c.price {
            total.price = Some(((total.price.unwrap_or(0.0) + p) * 100.0).round() / 100.0);
        }
    }
    total
}

/// Groups with the same template in several repositories are one group (a failure they share).
fn merge_unclassified<'a>(
    groups: impl Iterator<Item = &'a UnclassifiedGroup>,
) -> Vec<UnclassifiedGroup> {
    let mut merged: Vec<UnclassifiedGroup> = Vec::new();
    for g in groups {
        match merged.iter_mut().find(|m| m.key == g.key) {
            Some(m) => {
                m.jobs += g.jobs;
                m.runs += g.runs;
                let names: BTreeSet<String> =
                    m.job_names.iter().chain(&g.job_names).cloned().collect();
                m.job_names = names.into_iter().collect();
                let cells: BTreeSet<String> = m.cells.iter().chain(&g.cells).cloned().collect();
                m.cells = cells.into_iter().collect();
                for (id, jobs) in &g.tests {
                    *m.tests.entry(id.clone()).or_default() += jobs;
                }
                m.first_seen = m.first_seen.min(g.first_seen);
                m.last_seen = m.last_seen.max(g.last_seen);
                let keep = m.examples.len().max(g.examples.len());
                m.examples.extend(g.examples.iter().cloned());
                m.examples.sort_by_key(|e| (e.created_at, e.job_id));
                m.examples.truncate(keep);
            }
            None => merged.push(g.clone()),
        }
    }
    merged.sort_by(|a, b| {
        b.jobs
            .cmp(&a.jobs)
            .then_with(|| b.runs.cmp(&a.runs))
            .then_with(|| a.id.cmp(&b.id))
    });
    merged
}

pub(crate) fn merge_completeness<'a>(
    parts: impl Iterator<Item = &'a Completeness>,
) -> Completeness {
    let mut total = Completeness::default();
    for c in parts {
        total.runs_listed += c.runs_listed;
        total.runs_pending += c.runs_pending;
        total.logs_pending += c.logs_pending;
        total.runs_left_out += c.runs_left_out;
        total.unlisted.extend(c.unlisted.iter().copied());
    }
    total.unlisted.sort();
    total.unlisted.dedup();
    total
}
