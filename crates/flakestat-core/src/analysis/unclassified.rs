//! Failed jobs no signature explains, grouped so that the same unknown failure shows once with a
//! count. A job's *telling line* (its most telling error line) is masked — numbers, durations,
//! hex, UUIDs, addresses, paths — and tokens that name a test (`a.py::test_x`) become `<*>`: the
//! line's template, a function of the line alone. Templates are then mined Drain-style: those
//! of the same length and first token that agree on most positions merge, the positions where
//! they differ becoming `<*>`. A group's `id` is a hash of its template, so the same failure
//! gets the same id from one survey to the next (nightly's "new group"); it changes only when
//! a new variant joins and widens the template.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

use crate::matrix::{self, MatrixParser};
use crate::model::{Classification, Job, JobId, RunId, Snapshot, Timestamp};

/// How many of a log's error lines make up its shown excerpt.
const KEY_LINES: usize = 3;
/// How many example jobs a group keeps.
const EXAMPLES: usize = 5;
/// How many distinct telling lines a group keeps (for `suggest`).
const SAMPLES: usize = 200;
/// Share of positions two templates must agree on to merge.
const SIMILARITY: f64 = 0.7;
/// The wildcard of a template.
pub const WILDCARD: &str = "<*>";

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnclassifiedGroup {
    /// The group's template (masked telling line, `<*>` where its lines differ); what nightly
    /// compares between periods.
    pub key: String,
    /// `u` and 12 hex digits: a hash of `key`, stable across surveys.
    pub id: String,
    /// The first job's lines, as the log has them.
    pub lines: Vec<String>,
    pub jobs: u64,
    pub runs: u64,
    /// Distinct job names, sorted.
    pub job_names: Vec<String>,
    /// Distinct matrix cells of those jobs (`python=3.14t, platform=linux-64`), sorted.
    pub cells: Vec<String>,
    pub first_seen: Timestamp,
    pub last_seen: Timestamp,
    /// The first few jobs, oldest first.
    pub examples: Vec<JobRef>,
    /// The distinct telling lines of the group's jobs (at most 200), in the order first seen.
    pub samples: Vec<String>,
    /// The tests the group's jobs' logs name as failed: test id → jobs naming it.
    pub tests: BTreeMap<String, u64>,
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
    static MASKS: LazyLock<Vec<(Regex, &'static str)>> =
        LazyLock::new(|| {
            [
            (
                r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b",
                "<uuid>",
            ),
            (r"(?:[A-Za-z]:)?(?:[\\/][\w.@+-]+){2,}[\\/]?", "<path>"),
            (r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b", "<addr>"),
            (r"\b\d+(?:\.\d+)?(?:ms|us|µs|ns|s|h|min|sec|seconds)\b", "<duration>"),
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

/// The template of one telling line: masked, tokens that name a test as [`WILDCARD`].
pub fn line_template(line: &str) -> Vec<String> {
    normalize_for_grouping(line)
        .split(' ')
        .filter(|t| !t.is_empty())
        .map(|t| {
            if t.contains("::") {
                WILDCARD.to_string()
            } else {
                t.to_string()
            }
        })
        .collect()
}

/// Drain's similarity: the share of positions where two templates of one length agree (a
/// wildcard agrees with anything).
fn similarity(a: &[String], b: &[String]) -> f64 {
    if a.len() != b.len() || a.is_empty() {
        return if a == b { 1.0 } else { 0.0 };
    }
    let same = a
        .iter()
        .zip(b)
        .filter(|(x, y)| x == y || *x == WILDCARD || *y == WILDCARD)
        .count();
    same as f64 / a.len() as f64
}

/// A stable id for a template: FNV-1a, 48 bits.
pub fn template_id(template: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in template.as_bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("u{:012x}", h & 0xffff_ffff_ffff)
}

/// Mines templates: returns, for each input template, the index of its cluster, and the
/// clusters' templates. Deterministic: the inputs are visited by descending weight, then
/// template text, whatever their order.
pub fn mine(templates: &[(Vec<String>, u64)]) -> (Vec<usize>, Vec<Vec<String>>) {
    let mut order: Vec<usize> = (0..templates.len()).collect();
    order.sort_by(|&a, &b| {
        templates[b]
            .1
            .cmp(&templates[a].1)
            .then_with(|| templates[a].0.cmp(&templates[b].0))
    });
    let mut clusters: Vec<Vec<String>> = Vec::new();
    // (length, first token) → clusters in that bucket, as Drain's fixed-depth tree.
    let mut buckets: BTreeMap<(usize, String), Vec<usize>> = BTreeMap::new();
    let mut of = vec![0; templates.len()];
    for i in order {
        let t = &templates[i].0;
        let bucket = buckets
            .entry((t.len(), t.first().cloned().unwrap_or_default()))
            .or_default();
        let best = bucket
            .iter()
            .map(|&c| (similarity(&clusters[c], t), c))
            .filter(|(s, _)| *s >= SIMILARITY)
            .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)));
        match best {
            Some((_, c)) => {
                for (x, y) in clusters[c].iter_mut().zip(t) {
                    if x != y {
                        *x = WILDCARD.to_string();
                    }
                }
                of[i] = c;
            }
            None => {
                clusters.push(t.clone());
                bucket.push(clusters.len() - 1);
                of[i] = clusters.len() - 1;
            }
        }
    }
    (of, clusters)
}

/// The matrix cell of a job name: its dimensions but the job itself, `k=v, k=v`.
fn cell(matrix: &MatrixParser, name: &str) -> String {
    matrix
        .parse(name)
        .into_iter()
        .filter(|(k, _)| k != matrix::JOB)
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn group(
    snapshot: &Snapshot,
    jobs: &[(&Job, &Classification)],
    matrix: &MatrixParser,
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
    let (templates, job_template) = weighted_templates(&jobs);
    let (cluster_of, clusters) = mine(&templates);
    let mut groups: BTreeMap<usize, GroupAcc> = BTreeMap::new();
    for ((job, c), t) in jobs.iter().zip(job_template) {
        let cluster = cluster_of[t];
        groups
            .entry(cluster)
            .or_insert_with(|| GroupAcc::new(clusters[cluster].join(" "), job, c))
            .add(job, c, matrix);
    }
    let mut out: Vec<UnclassifiedGroup> = groups.into_values().map(GroupAcc::finish).collect();
    out.sort_by(|a, b| b.jobs.cmp(&a.jobs).then_with(|| a.key.cmp(&b.key)));
    out
}

/// A job's telling line: its first error line.
fn telling(c: &Classification) -> Option<String> {
    c.error_lines.first().map(|l| l.text.clone())
}

/// The distinct templates of the jobs' telling lines, each weighted by its jobs, and each
/// job's template (an index into the first).
fn weighted_templates(jobs: &[&(&Job, &Classification)]) -> (Vec<(Vec<String>, u64)>, Vec<usize>) {
    let mut index: BTreeMap<Vec<String>, usize> = BTreeMap::new();
    let mut templates: Vec<(Vec<String>, u64)> = Vec::new();
    let mut job_template = Vec::with_capacity(jobs.len());
    for (_, c) in jobs {
        let t = telling(c).map(|l| line_template(&l)).unwrap_or_default();
        let next = templates.len();
        let i = *index.entry(t.clone()).or_insert(next);
        if i == next {
            templates.push((t, 0));
        }
        templates[i].1 += 1;
        job_template.push(i);
    }
    (templates, job_template)
}

/// One group as its jobs are added.
struct GroupAcc {
    group: UnclassifiedGroup,
    runs: BTreeSet<RunId>,
    names: BTreeSet<String>,
    cells: BTreeSet<String>,
}

impl GroupAcc {
    /// An empty group of cluster `key`, its lines those of its first job.
    fn new(key: String, job: &Job, c: &Classification) -> GroupAcc {
        GroupAcc {
            group: UnclassifiedGroup {
                id: template_id(&key),
                key,
                lines: c
                    .error_lines
                    .iter()
                    .take(KEY_LINES)
                    .map(|l| l.text.clone())
                    .collect(),
                jobs: 0,
                runs: 0,
                job_names: Vec::new(),
                cells: Vec::new(),
                first_seen: job.created_at,
                last_seen: job.created_at,
                examples: Vec::new(),
                samples: Vec::new(),
                tests: BTreeMap::new(),
            },
            runs: BTreeSet::new(),
            names: BTreeSet::new(),
            cells: BTreeSet::new(),
        }
    }

    fn add(&mut self, job: &Job, c: &Classification, matrix: &MatrixParser) {
        let g = &mut self.group;
        g.jobs += 1;
        self.runs.insert(job.run_id);
        self.names.insert(job.name.clone());
        self.cells.insert(cell(matrix, &job.name));
        g.first_seen = g.first_seen.min(job.created_at);
        g.last_seen = g.last_seen.max(job.created_at);
        let failed: BTreeSet<&str> = c.tests.failed.iter().map(|t| t.id.as_str()).collect();
        for id in failed {
            *g.tests.entry(id.to_string()).or_default() += 1;
        }
        if let Some(line) = telling(c)
            && g.samples.len() < SAMPLES
            && !g.samples.contains(&line)
        {
            g.samples.push(line);
        }
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

    fn finish(self) -> UnclassifiedGroup {
        let mut g = self.group;
        g.runs = self.runs.len() as u64;
        g.job_names = self.names.into_iter().collect();
        g.cells = self.cells.into_iter().filter(|c| !c.is_empty()).collect();
        g
    }
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
        assert_eq!(a, "E TimeoutError: waited <duration> at <hex> in <path>");
        assert_ne!(
            normalize_for_grouping("ImportError: no module named foo"),
            normalize_for_grouping("ImportError: no module named bar")
        );
        assert_eq!(
            normalize_for_grouping("commit deadbeefcafe1234 failed"),
            "commit <hex> failed"
        );
    }

    #[test]
    fn masks_addresses_and_durations() {
        assert_eq!(
            normalize_for_grouping("connect 10.0.3.7:5432 refused after 2.5s"),
            "connect <addr> refused after <duration>"
        );
    }

    fn t(line: &str) -> (Vec<String>, u64) {
        (line_template(line), 1)
    }

    #[test]
    fn drain_merges_variants_and_ids_are_stable() {
        let lines = [
            t("FAILED tests/a.py::test_x - KeyError: 'alpha'"),
            t("FAILED tests/b.py::test_y - KeyError: 'beta'"),
            t("--- FAIL: TestServe (2.93s)"),
            t("ModuleNotFoundError: No module named 'numpy'"),
        ];
        let (of, clusters) = mine(&lines);
        assert_eq!(of[0], of[1]);
        assert_ne!(of[0], of[2]);
        assert_eq!(clusters[of[0]].join(" "), "FAILED <*> - KeyError: <*>");
        // Order does not matter; the ids follow the templates.
        let mut reversed = lines.to_vec();
        reversed.reverse();
        let (of2, clusters2) = mine(&reversed);
        assert_eq!(
            template_id(&clusters[of[0]].join(" ")),
            template_id(&clusters2[of2[3]].join(" "))
        );
        assert_eq!(template_id("x"), template_id("x"));
        assert_ne!(template_id("x"), template_id("y"));
        // Different exceptions never merge: too little in common.
        let (of3, _) = mine(&[t("ValueError: bad shape"), t("KeyError: bad shape")]);
        assert_ne!(of3[0], of3[1]);
    }
}
