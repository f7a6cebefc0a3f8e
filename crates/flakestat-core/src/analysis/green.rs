//! Elastic-recheck's rule for `signatures audit --green-sample N`: a fingerprint that matches
//! the logs of *successful* jobs is too broad. Which successful jobs to sample, and what the
//! sample says per signature.
//!
//! The sample: successful jobs of the window whose names are among the job names of some
//! signature's hits, at most N in all, spread across those names (one job per name per round)
//! and newest first within a name. Names are taken first so that every signature with a hit has
//! one of its names early (a signature hitting a single rare job name is not crowded out by one
//! hitting forty), then the rest by name. Deterministic: the same store and N give the same
//! sample, so a repeated audit downloads nothing new.
//!
//! Per signature, the share is over the sampled green jobs *of its own job names*: matches in
//! green jobs / green jobs sampled. No such green log: the share is unknown, never zero.
//!
//! Pure: a snapshot, the classifications of the green logs and N in; the sample and the shares
//! out. Downloading (`fetch::Session::fetch_green_logs`) and keeping them (`store/green.rs`) are
//! elsewhere.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::audit::{Finding, FindingKind, SignatureAudit};
use super::in_survey_window;
use crate::model::{Classification, Conclusion, Job, JobId, Snapshot};

/// Per signature id, the names of the failed jobs of the window it matched.
pub fn hit_names(snapshot: &Snapshot) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for job in &snapshot.jobs {
        if !job.is_failed() || !in_survey_window(snapshot, job.created_at) {
            continue;
        }
        let Some(c) = snapshot.classifications.get(&job.id) else {
            continue;
        };
        for m in &c.matches {
            out.entry(m.signature.0.clone())
                .or_default()
                .insert(job.name.clone());
        }
    }
    out
}

fn is_green(job: &Job) -> bool {
    job.conclusion == Some(Conclusion::Success)
}

/// The successful jobs to sample, in the order they are taken (see the module docs), at most
/// `n`.
pub fn green_sample(
    snapshot: &Snapshot,
    hits: &BTreeMap<String, BTreeSet<String>>,
    n: usize,
) -> Vec<JobId> {
    // Job names: one of each signature's first, then the others, each by name.
    let mut order: Vec<&str> = Vec::new();
    for names in hits.values() {
        if names.iter().any(|n| order.contains(&n.as_str())) {
            continue;
        }
        if let Some(first) = names.iter().next() {
            order.push(first);
        }
    }
    let all: BTreeSet<&str> = hits.values().flatten().map(String::as_str).collect();
    for name in all {
        if !order.contains(&name) {
            order.push(name);
        }
    }
    // Per name, its successful jobs of the window, newest first.
    let mut by_name: BTreeMap<&str, Vec<&Job>> = BTreeMap::new();
    for job in &snapshot.jobs {
        if is_green(job) && in_survey_window(snapshot, job.created_at) {
            by_name.entry(job.name.as_str()).or_default().push(job);
        }
    }
    for jobs in by_name.values_mut() {
        jobs.sort_by(|a, b| {
            (b.created_at, b.run_id, b.run_attempt, b.id).cmp(&(
                a.created_at,
                a.run_id,
                a.run_attempt,
                a.id,
            ))
        });
    }
    let mut out = Vec::new();
    let mut round = 0;
    loop {
        let mut took = false;
        for name in &order {
            if out.len() >= n {
                return out;
            }
            if let Some(job) = by_name.get(name).and_then(|jobs| jobs.get(round)) {
                out.push(job.id);
                took = true;
            }
        }
        if !took {
            return out;
        }
        round += 1;
    }
}

/// A sampled green job whose log a signature matched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GreenHit {
    pub job: JobId,
    pub name: String,
    /// The first matching line (1-based) and its text.
    pub line: u64,
    pub text: String,
}

/// What the green sample says of one signature.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum GreenShare {
    /// No green log of its job names in the sample: why (never reported as zero).
    Unknown { reason: String },
    /// Of `sampled` green jobs of its job names, `matched` hold a line it matches.
    Sampled {
        sampled: u64,
        matched: u64,
        first: Option<GreenHit>,
    },
}

/// Per signature, its share of matches in the sampled green jobs of its own job names.
/// `green`: each sampled green job with its log's classification (jobs whose log could not be
/// had are left out); `None` when nothing was sampled at all, with `why`.
pub fn green_shares(
    snapshot: &Snapshot,
    signatures: &[String],
    green: Option<&[(JobId, Classification)]>,
    why: &str,
) -> BTreeMap<String, GreenShare> {
    let hits = hit_names(snapshot);
    let names: BTreeMap<JobId, &str> = snapshot
        .jobs
        .iter()
        .map(|j| (j.id, j.name.as_str()))
        .collect();
    signatures
        .iter()
        .map(|id| {
            let share = match (green, hits.get(id)) {
                (None, _) => GreenShare::Unknown {
                    reason: why.to_string(),
                },
                (Some(_), None) => GreenShare::Unknown {
                    reason: "no hit in the window: no job names to sample".into(),
                },
                (Some(green), Some(own)) => {
                    let mine: Vec<&(JobId, Classification)> = green
                        .iter()
                        .filter(|(job, _)| names.get(job).is_some_and(|n| own.contains(*n)))
                        .collect();
                    if mine.is_empty() {
                        GreenShare::Unknown {
                            reason: "no green log of its job names in the sample".into(),
                        }
                    } else {
                        let mut matched = 0;
                        let mut first = None;
                        for (job, c) in &mine {
                            let Some(m) = c.matches.iter().find(|m| m.signature.0 == *id) else {
                                continue;
                            };
                            matched += 1;
                            first.get_or_insert_with(|| GreenHit {
                                job: *job,
                                name: names.get(job).copied().unwrap_or_default().to_string(),
                                line: m.line,
                                text: m.text.clone(),
                            });
                        }
                        GreenShare::Sampled {
                            sampled: mine.len() as u64,
                            matched,
                            first,
                        }
                    }
                }
            };
            (id.clone(), share)
        })
        .collect()
}

/// Adds each signature's green share to its audit, and an alarm (`GreenMatch`) for any match in
/// a green job.
pub fn apply_green(audits: &mut [SignatureAudit], shares: &BTreeMap<String, GreenShare>) {
    for a in audits {
        let Some(share) = shares.get(&a.id) else {
            continue;
        };
        if let GreenShare::Sampled {
            sampled,
            matched,
            first: Some(hit),
        } = share
            && *matched > 0
        {
            a.findings.push(Finding {
                kind: FindingKind::GreenMatch,
                message: format!(
                    "matches {matched} of {sampled} sampled successful jobs of its job names (first: job {} {:?}, line {}: {:?}); a pattern that matches passing jobs is too broad",
                    hit.job, hit.name, hit.line, hit.text
                ),
            });
        }
        a.green = share.clone();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{RunId, Sha, SignatureId, SignatureMatch};

    fn t(s: &str) -> crate::model::Timestamp {
        s.parse().unwrap()
    }

    fn job(id: u64, name: &str, conclusion: &str, day: u32) -> Job {
        Job {
            id: JobId(id),
            run_id: RunId(id),
            run_attempt: 1,
            name: name.into(),
            status: "completed".into(),
            conclusion: Some(conclusion.into()),
            created_at: t(&format!("2026-06-{day:02}T10:00:00Z")),
            started_at: None,
            completed_at: None,
            html_url: None,
            head_sha: Sha("a".repeat(40)),
            labels: Vec::new(),
        }
    }

    fn hit(sig: &str) -> Classification {
        Classification {
            matches: vec![SignatureMatch {
                signature: SignatureId(sig.into()),
                line: 7,
                lines: vec![7],
                text: "E   boom".into(),
                step: None,
                count: 1,
                tests: Default::default(),
            }],
            error_lines: vec![],
            ..Default::default()
        }
    }

    /// Failed jobs: `wide` hits names a, b, c; `rare` hits only z. Green jobs: many of a, b, c,
    /// two of z, one of an unrelated name.
    fn snapshot() -> Snapshot {
        let mut s = Snapshot {
            since: Some(t("2026-06-01T00:00:00Z")),
            until: Some(t("2026-07-01T00:00:00Z")),
            ..Snapshot::default()
        };
        let mut id = 1;
        for (name, sig) in [("a", "wide"), ("b", "wide"), ("c", "wide"), ("z", "rare")] {
            s.jobs.push(job(id, name, "failure", 2));
            s.classifications.insert(JobId(id), hit(sig));
            id += 1;
        }
        for day in 3..=9 {
            for name in ["a", "b", "c"] {
                s.jobs.push(job(100 + id, name, "success", day));
                id += 1;
            }
        }
        s.jobs.push(job(500, "z", "success", 4));
        s.jobs.push(job(501, "z", "success", 8));
        s.jobs.push(job(600, "unrelated", "success", 9));
        // Outside the window: never sampled.
        s.jobs.push(job(700, "z", "success", 1).clone());
        s.jobs.last_mut().unwrap().created_at = t("2026-05-20T10:00:00Z");
        s
    }

    fn name_of(s: &Snapshot, id: JobId) -> &str {
        &s.jobs.iter().find(|j| j.id == id).unwrap().name
    }

    #[test]
    fn the_sample_is_bounded_spread_newest_first_and_covers_every_signature_early() {
        let s = snapshot();
        let hits = hit_names(&s);
        let sample = green_sample(&s, &hits, 5);
        assert_eq!(sample.len(), 5);
        let names: Vec<&str> = sample.iter().map(|j| name_of(&s, *j)).collect();
        // `rare`'s only name comes in the first round, though it sorts last.
        assert_eq!(names, vec!["z", "a", "b", "c", "z"]);
        // Newest first within a name.
        assert_eq!(sample[0], JobId(501));
        assert_eq!(sample[4], JobId(500));
        let newest_a = s
            .jobs
            .iter()
            .filter(|j| j.name == "a" && j.conclusion == Some(Conclusion::Success))
            .max_by_key(|j| j.created_at)
            .unwrap();
        assert_eq!(sample[1], newest_a.id);
        // Everything there is, and never a failed, unrelated or out-of-window job.
        let all = green_sample(&s, &hits, 1000);
        assert_eq!(all.len(), 7 * 3 + 2);
        assert!(!all.contains(&JobId(600)) && !all.contains(&JobId(700)));
        assert!(all.iter().all(|j| *j > JobId(4)));
        // Deterministic.
        assert_eq!(green_sample(&s, &hits, 5), sample);
        assert!(green_sample(&s, &hits, 0).is_empty());
    }

    #[test]
    fn shares_count_only_own_names_and_unknown_is_never_zero() {
        let s = snapshot();
        let sample = green_sample(&s, &hit_names(&s), 8);
        // `wide` matches every green log; `rare` none.
        let green: Vec<(JobId, Classification)> =
            sample.iter().map(|j| (*j, hit("wide"))).collect();
        let ids = vec!["wide".to_string(), "rare".to_string(), "never".to_string()];
        let shares = green_shares(&s, &ids, Some(&green), "unused");
        let wide_sampled = sample.iter().filter(|j| name_of(&s, **j) != "z").count() as u64;
        match &shares["wide"] {
            GreenShare::Sampled {
                sampled,
                matched,
                first: Some(first),
            } => {
                assert_eq!((*sampled, *matched), (wide_sampled, wide_sampled));
                assert_ne!(first.name, "z");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            shares["rare"],
            GreenShare::Sampled {
                sampled: 2,
                matched: 0,
                first: None
            }
        );
        assert!(matches!(shares["never"], GreenShare::Unknown { .. }));
        let none = green_shares(&s, &ids, None, "no --green-sample");
        assert!(none.values().all(|v| *v
            == GreenShare::Unknown {
                reason: "no --green-sample".into()
            }));
    }
}
