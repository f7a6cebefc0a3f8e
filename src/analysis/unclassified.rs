//! Failed jobs no signature explains, grouped so that the same unknown failure shows once with a
//! count: the grouping key is the job's most telling lines with numbers, hex, paths and quoted
//! values masked, so `timeout after 31s at 0x7f3a` and `timeout after 29s at 0x7f3b` are one.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

use crate::model::{Classification, Job, JobId, RunId, Snapshot, Timestamp};

/// How many of a log's error lines make up its grouping key and its shown excerpt.
const KEY_LINES: usize = 3;
/// How many example jobs a group keeps.
const EXAMPLES: usize = 5;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnclassifiedGroup {
    /// The normalized lines the group shares.
    pub key: String,
    /// The first job's lines, as the log has them.
    pub lines: Vec<String>,
    pub jobs: u64,
    pub runs: u64,
    /// Distinct job names, sorted.
    pub job_names: Vec<String>,
    pub first_seen: Timestamp,
    pub last_seen: Timestamp,
    /// The first few jobs, oldest first.
    pub examples: Vec<JobRef>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JobRef {
    pub run_id: RunId,
    pub attempt: u32,
    pub job_id: JobId,
    pub job: String,
    pub created_at: Timestamp,
    pub html_url: Option<String>,
}

/// Masks what differs between two occurrences of the same failure.
pub fn normalize_for_grouping(line: &str) -> String {
    static MASKS: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
        [
            (
                r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b",
                "<uuid>",
            ),
            (r"(?:[A-Za-z]:)?(?:[\\/][\w.@+-]+){2,}[\\/]?", "<path>"),
            (r"\b0x[0-9a-fA-F]+\b", "<hex>"),
            (r"\b[0-9a-f]{7,}\b", "<hex>"),
            (r"\d+(?:\.\d+)*", "<n>"),
            (r"\s+", " "),
        ]
        .into_iter()
        .map(|(re, with)| (Regex::new(re).expect("built-in mask compiles"), with))
        .collect()
    });
    let mut text = line.trim().to_string();
    for (re, with) in MASKS.iter() {
        text = re.replace_all(&text, *with).into_owned();
    }
    text
}

pub(super) fn group(
    snapshot: &Snapshot,
    jobs: &[(&Job, &Classification)],
) -> Vec<UnclassifiedGroup> {
    let created: BTreeMap<RunId, Timestamp> =
        snapshot.runs.iter().map(|r| (r.id, r.created_at)).collect();
    let mut jobs: Vec<&(&Job, &Classification)> = jobs.iter().collect();
    jobs.sort_by_key(|(j, _)| {
        (
            created.get(&j.run_id).copied(),
            j.run_id,
            j.run_attempt,
            j.id,
        )
    });

    let mut groups: BTreeMap<String, (UnclassifiedGroup, BTreeSet<RunId>, BTreeSet<String>)> =
        BTreeMap::new();
    for (job, c) in jobs {
        let lines: Vec<String> = c
            .error_lines
            .iter()
            .take(KEY_LINES)
            .map(|l| l.text.clone())
            .collect();
        let key = lines
            .iter()
            .map(|l| normalize_for_grouping(l))
            .collect::<Vec<_>>()
            .join("\n");
        let entry = groups.entry(key.clone()).or_insert_with(|| {
            (
                UnclassifiedGroup {
                    key,
                    lines,
                    jobs: 0,
                    runs: 0,
                    job_names: Vec::new(),
                    first_seen: job.created_at,
                    last_seen: job.created_at,
                    examples: Vec::new(),
                },
                BTreeSet::new(),
                BTreeSet::new(),
            )
        });
        let (g, runs, names) = entry;
        g.jobs += 1;
        runs.insert(job.run_id);
        names.insert(job.name.clone());
        g.first_seen = g.first_seen.min(job.created_at);
        g.last_seen = g.last_seen.max(job.created_at);
        if g.examples.len() < EXAMPLES {
            g.examples.push(JobRef {
                run_id: job.run_id,
                attempt: job.run_attempt,
                job_id: job.id,
                job: job.name.clone(),
                created_at: job.created_at,
                html_url: job.html_url.clone(),
            });
        }
    }
    let mut out: Vec<UnclassifiedGroup> = groups
        .into_values()
        .map(|(mut g, runs, names)| {
            g.runs = runs.len() as u64;
            g.job_names = names.into_iter().collect();
            g
        })
        .collect();
    out.sort_by(|a, b| b.jobs.cmp(&a.jobs).then_with(|| a.key.cmp(&b.key)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouping_masks_what_varies() {
        let a = normalize_for_grouping(
            "E   TimeoutError: waited 31.5s at 0x7f3a12 in /home/runner/work/x/y.py",
        );
        let b =
            normalize_for_grouping("E   TimeoutError: waited 29s at 0x7f3b99 in /tmp/other/z.py");
        assert_eq!(a, b);
        assert_eq!(a, "E TimeoutError: waited <n>s at <hex> in <path>");
        assert_ne!(
            normalize_for_grouping("ImportError: no module named foo"),
            normalize_for_grouping("ImportError: no module named bar")
        );
        assert_eq!(
            normalize_for_grouping("commit deadbeefcafe1234 failed"),
            "commit <hex> failed"
        );
    }
}
