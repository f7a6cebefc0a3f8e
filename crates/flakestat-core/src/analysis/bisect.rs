//! First occurrence relative to merges: which merge introduced a flake, with the evidence.
//!
//! A flake that hits one run in five can first show up several merges after the one that caused
//! it, so the merge just before the first hit is not the answer. Each merge before the first hit
//! is weighed instead:
//!
//! - **Likelihood.** If merge M had introduced the flake, every run that included M could have hit.
//!   With the hit rate `p` observed from the first hit on, seeing `k` clean runs that included M has
//!   probability `(1 − p)^k` (each run a Bernoulli trial). A merge with many clean runs after it is
//!   unlikely to be the culprit; one merged just before the first hit is likely.
//! - **Contradiction.** A hit run that did not include M rules M out, as long as some merge is
//!   in every hit run. When none is (hit runs on long-lived branches forked before the merges
//!   that fit), the merges are kept and ranked the same way, each with the hit runs that contain
//!   and lack it, and none is blamed: the verdict says so, and which hit runs lack the best fit
//!   and what they test (their merge base with the default branch).
//! - **Relevance.** A merge that changed files matching the signature's `paths`, or the failing
//!   tests themselves, is a priori more likely: its weight is multiplied by [`PATHS_WEIGHT`] and
//!   [`TESTS_WEIGHT`]. Both kinds of evidence are reported, not only the ranking.
//!
//! Which merges a run includes: a `pull_request` run tests the PR merged into the base as it was
//! when the run started, so it includes every merge before its creation; a push to the default
//! branch includes every merge up to its `head_sha` in the default branch's history; a run on any
//! other branch includes what its fork point (merge base with the default branch, from
//! `compare`) includes, and is left out of the counts when that is unknown.
//!
//! Merges are the merged pull requests and, for repositories that push to the default branch
//! without pull requests, the default branch's commits that are no known PR's merge commit
//! (direct pushes): `pr` is `None`, the title is the commit message's first line, `merged_at`
//! the commit date, and the changed files come from `GET /commits/{sha}` once it is a suspect.
//!
//! Honest when there is no changepoint: too few hits to estimate a rate, or too few clean runs
//! before the first hit to rule out that the flake predates the data, give a verdict that says so
//! and pin nothing on a merge. So does each way of finding no merge: none known, none before the
//! first hit, every one with too many clean runs after it, none in every hit run.

use std::collections::{BTreeMap, BTreeSet};

use globset::GlobSet;
use serde::Serialize;

use super::prs::{self, PrConventions, RelevanceUnknown, RunOrigin};
use crate::model::{MainlineCommit, PrNumber, Run, RunId, Sha, SignatureInfo, Snapshot, Timestamp};

/// A merge with likelihood below this is ruled out and not listed as a suspect.
pub const RULED_OUT: f64 = 0.01;
/// If the data before the first hit could have hidden the flake with at least this probability,
/// the flake cannot be placed inside the data.
pub const PLACEABLE: f64 = 0.05;
/// Fewer hits than this give no usable hit rate.
pub const MIN_HITS: u64 = 3;
/// Prior weight of a merge that changed files matching the signature's `paths`.
pub const PATHS_WEIGHT: f64 = 5.0;
/// Prior weight of a merge that changed a file holding one of the failing tests.
pub const TESTS_WEIGHT: f64 = 10.0;

/// How a run's contents are placed relative to the default branch's merges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunPlacement {
    /// `pull_request` events: every merge before the run's creation.
    ByCreationTime,
    /// A push (or a scheduled or manual run) on the default branch: every merge up to
    /// `head_sha` in the mainline, else every merge before the run's creation.
    DefaultBranchHead,
    /// Any other branch: the fork point from ancestry, unknown without it.
    ForkPoint,
}

/// One run of the workflows where the signature occurs, as bisection sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct BisectRun {
    pub id: RunId,
    pub created_at: Timestamp,
    pub head_sha: Sha,
    pub placement: RunPlacement,
    /// The PR the run tests, if any: such a run includes that PR's own change whatever its
    /// fork point.
    pub pr: Option<PrNumber>,
    /// The run's branch, for saying which hit runs lack a merge.
    pub branch: Option<String>,
    /// Some attempt of the run had a job matching the signature.
    pub hit: bool,
}

/// Where a run stands relative to the default branch's merges, from its event and branch (the
/// same `run_origin` the impact analysis uses): a `pull_request` run tests the PR merged into
/// the base as it was at creation; a run on the default branch tests its `head_sha`; anything
/// else (mirror branches such as `pull-request/<N>`, release branches, tags) needs its fork point.
pub fn placement(run: &Run, default_branch: &str, conventions: &PrConventions) -> RunPlacement {
    if run.event.is_pull_request() {
        return RunPlacement::ByCreationTime;
    }
    match prs::run_origin(run, default_branch, conventions) {
        RunOrigin::DefaultBranch => RunPlacement::DefaultBranchHead,
        _ => RunPlacement::ForkPoint,
    }
}

/// A pull request merged into the default branch, or a commit pushed to it directly.
#[derive(Debug, Clone, PartialEq)]
pub struct Merge {
    /// `None` for a direct push.
    pub pr: Option<PrNumber>,
    pub title: String,
    pub merged_at: Timestamp,
    pub sha: Sha,
    /// Changed files; `None` when unknown.
    pub files: Option<Vec<String>>,
    /// The PR's page, or the commit's for a direct push.
    pub url: Option<String>,
}

/// What is known of commit ancestry: the default branch's history and the fork points of runs
/// on other branches.
///
/// `GET /commits?sha=<default>` is not first-parent: in a repository that merges with merge
/// commits, the PRs' branch commits (dated before their merge) are listed among the merges.
/// With parents known, each commit is placed on the first-parent chain from the tip: a chain
/// commit at its place, any other commit after the newest chain commit among its ancestors
/// (what it contains), so "does this head contain merge M" is read from the graph, not from
/// dates. Commits whose parents are unknown are placed by date.
#[derive(Debug, Clone, Default)]
pub struct Ancestry {
    /// Sha → (place on the first-parent chain, committed_at). Places are ordered like the
    /// chain: a merge at place `p` is contained by every commit placed at `p` or later.
    index: BTreeMap<Sha, (usize, Timestamp)>,
    /// The commit at each even place (`chain[p]` at place `2p`).
    chain: Vec<Sha>,
    fork_points: BTreeMap<Sha, Sha>,
}

impl Ancestry {
    pub fn new(mainline: &[MainlineCommit], fork_points: &BTreeMap<Sha, Sha>) -> Ancestry {
        Ancestry::with_parents(mainline, fork_points, &BTreeMap::new())
    }

    /// Places `mainline` on its first-parent chain when `parents` names it, by date otherwise.
    pub fn with_parents(
        mainline: &[MainlineCommit],
        fork_points: &BTreeMap<Sha, Sha>,
        parents: &BTreeMap<Sha, Vec<Sha>>,
    ) -> Ancestry {
        let dates: BTreeMap<&Sha, Timestamp> =
            mainline.iter().map(|c| (&c.sha, c.committed_at)).collect();
        let chain = first_parent_chain(mainline, parents);
        if chain.len() < 2 {
            // No graph: every commit by date, as listed (oldest first).
            return Ancestry {
                index: mainline
                    .iter()
                    .enumerate()
                    .map(|(i, c)| (c.sha.clone(), (i * 2, c.committed_at)))
                    .collect(),
                chain: mainline.iter().map(|c| c.sha.clone()).collect(),
                fork_points: fork_points.clone(),
            };
        }
        // Chain commits at even places; a commit between two chain commits at the odd place
        // after the newest one it contains.
        let mut index: BTreeMap<Sha, (usize, Timestamp)> = BTreeMap::new();
        let place: BTreeMap<&Sha, usize> = chain.iter().enumerate().map(|(i, s)| (*s, i)).collect();
        for (i, sha) in chain.iter().enumerate() {
            index.insert((*sha).clone(), (i * 2, dates[*sha]));
        }
        let chain_dates: Vec<Timestamp> = chain.iter().map(|s| dates[*s]).collect();
        for c in mainline.iter().filter(|c| !place.contains_key(&c.sha)) {
            let at = match newest_chain_ancestor(&c.sha, parents, &place) {
                Some(p) => p * 2 + 1,
                None => by_date(&chain_dates, c.committed_at),
            };
            index.insert(c.sha.clone(), (at, c.committed_at));
        }
        Ancestry {
            index,
            chain: chain.into_iter().cloned().collect(),
            fork_points: fork_points.clone(),
        }
    }

    /// What a run on `head` tests of the default branch, read as [`Ancestry::includes`] reads
    /// it: for a head the default branch's graph holds, the newest first-parent commit it
    /// contains (itself when on the chain); else the fork point (`compare`'s merge base); with
    /// that commit's date when it is listed.
    pub fn merge_base(&self, head: &Sha) -> Option<(Sha, Option<Timestamp>)> {
        let tip = self.tip(head)?;
        let base = match self.index.get(head) {
            Some(&(place, _)) => self.chain.get(place / 2)?,
            None => tip,
        };
        let at = self.index.get(base).map(|&(_, at)| at);
        Some((base.clone(), at))
    }

    /// What a run on `head` placed by its fork point is read against, the same for whether it
    /// includes a merge and for what it tests: the head itself when the default branch's graph
    /// holds it (its PR merged since; `compare` would name the head as its own merge base),
    /// else its fork point; `None` when neither is known.
    fn tip<'a>(&'a self, head: &'a Sha) -> Option<&'a Sha> {
        if self.index.contains_key(head) {
            Some(head)
        } else {
            self.fork_points.get(head)
        }
    }

    /// Whether the fork point of a run with this head sha is known, or the head itself is
    /// placed by the default branch's graph (a PR-branch commit merged since).
    pub fn knows_fork_point(&self, head: &Sha) -> bool {
        self.fork_points.contains_key(head) || self.index.contains_key(head)
    }

    /// Whether `run` included `merge`; `None` when that cannot be known.
    pub fn includes(&self, run: &BisectRun, merge: &Merge) -> Option<bool> {
        if run.head_sha == merge.sha || (merge.pr.is_some() && run.pr == merge.pr) {
            return Some(true);
        }
        // Nothing merged after a run was created can be in it, whatever its branch.
        if run.created_at < merge.merged_at {
            return Some(false);
        }
        match run.placement {
            RunPlacement::ByCreationTime => Some(merge.merged_at < run.created_at),
            RunPlacement::DefaultBranchHead => self
                .mainline_includes(&run.head_sha, merge)
                // A push run is created right after its commit lands.
                .or(Some(merge.merged_at < run.created_at)),
            // A head the default branch's graph holds (its PR merged since) is placed by what
            // it contains; any other by its fork point.
            RunPlacement::ForkPoint => self.mainline_includes(self.tip(&run.head_sha)?, merge),
        }
    }

    fn mainline_includes(&self, tip: &Sha, merge: &Merge) -> Option<bool> {
        let &(tip_pos, tip_date) = self.index.get(tip)?;
        Some(match self.index.get(&merge.sha) {
            Some(&(merge_pos, _)) => merge_pos <= tip_pos,
            None => merge.merged_at <= tip_date,
        })
    }
}

/// The first-parent chain from the tip (the newest listed commit no other listed commit has
/// as a parent), oldest first; empty without parents.
fn first_parent_chain<'a>(
    mainline: &'a [MainlineCommit],
    parents: &'a BTreeMap<Sha, Vec<Sha>>,
) -> Vec<&'a Sha> {
    let listed: BTreeMap<&Sha, &MainlineCommit> = mainline.iter().map(|c| (&c.sha, c)).collect();
    let is_parent: BTreeSet<&Sha> = parents.values().flatten().collect();
    let Some(tip) = mainline
        .iter()
        .filter(|c| parents.contains_key(&c.sha) && !is_parent.contains(&c.sha))
        .max_by(|a, b| a.committed_at.cmp(&b.committed_at).then(a.sha.cmp(&b.sha)))
    else {
        return Vec::new();
    };
    let mut chain = vec![&tip.sha];
    let mut seen: BTreeSet<&Sha> = BTreeSet::from([&tip.sha]);
    let mut at = &tip.sha;
    while let Some(first) = parents.get(at).and_then(|ps| ps.first()) {
        let Some(commit) = listed.get(first) else {
            break;
        };
        if !seen.insert(&commit.sha) {
            break;
        }
        chain.push(&commit.sha);
        at = &commit.sha;
    }
    chain.reverse();
    chain
}

/// The place of the newest chain commit among `sha`'s ancestors, walking known parents.
fn newest_chain_ancestor(
    sha: &Sha,
    parents: &BTreeMap<Sha, Vec<Sha>>,
    place: &BTreeMap<&Sha, usize>,
) -> Option<usize> {
    let mut best: Option<usize> = None;
    let mut stack = vec![sha];
    let mut seen: BTreeSet<&Sha> = BTreeSet::new();
    while let Some(s) = stack.pop() {
        if !seen.insert(s) {
            continue;
        }
        if let Some(&p) = place.get(s) {
            best = Some(best.map_or(p, |b| b.max(p)));
            continue;
        }
        stack.extend(parents.get(s).into_iter().flatten());
    }
    best
}

/// A commit the graph cannot place: right after the last chain commit dated before it.
fn by_date(chain_dates: &[Timestamp], at: Timestamp) -> usize {
    match chain_dates.iter().rposition(|d| *d <= at) {
        Some(i) => i * 2 + 1,
        None => 0,
    }
}

/// How far before a signature's first hit the runs that need a fork point reach.
pub const LOOKBACK_DAYS: i64 = 14;

/// What the bisection would like fetched, so that the fetch layer asks only for that.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AncestryNeeds {
    /// Head shas of runs placed by their fork point that matter: runs of a signature's (or a
    /// failing test's) workflows from `LOOKBACK_DAYS` before its first hit up to it, and its
    /// hit runs, for the signatures and tests whose verdict depends on ancestry (placed, or no
    /// merge fits).
    pub heads: BTreeSet<Sha>,
    /// PRs whose changed files are unknown: suspects (a signature's or a test's) and merges a
    /// hit run lacks.
    pub merge_files: BTreeSet<PrNumber>,
    /// PRs whose changed files are unknown and decide what is counted at all: hit runs' PRs,
    /// and the PRs of runs with a failed test (whether they are related leaves their runs out,
    /// which can move a first hit, so these come before the suspects').
    pub counting_files: BTreeSet<PrNumber>,
    /// Suspect direct pushes whose changed files are unknown.
    pub commit_files: BTreeSet<Sha>,
}

/// Reads, from the analysis of `snapshot`, which fork points and which merges' files the
/// bisection lacks. Pure: the caller fetches them and analyzes again.
pub fn needs(
    snapshot: &Snapshot,
    signatures: &[SignatureInfo],
    config: &super::AnalysisConfig,
) -> AncestryNeeds {
    let data = super::analyze(snapshot, signatures, config);
    let mut needs = AncestryNeeds::default();
    // The tests' onsets are the same analysis over each test's failures (`analysis::tests`):
    // a test no signature matches needs the same evidence to be placed. Their heads mostly
    // repeat the signatures' (the same runs around the same first failures), asked once.
    let (complete, _) = super::complete_part(snapshot);
    let tests = super::tests::onset_reports(&complete, config, &data.incidents);
    for report in data.signatures.iter().chain(&tests) {
        // Hit runs' PRs whose changed files are unknown (a fork PR found by the PR listing):
        // whether they are related decides what is counted at all.
        needs.counting_files.extend(
            report
                .pr_relevance_unknown
                .iter()
                .filter(|g| g.reason == RelevanceUnknown::FilesNotFetched.reason())
                .filter_map(|g| g.pr),
        );
        let Some(b) = &report.bisection else {
            continue;
        };
        // A merge a hit run lacks is weighed too: whether it is related decides whether its
        // PR's own runs count, in mirror style (where a `pull-request/<N>` run tests the PR's
        // head as pushed) as in GitHub's, where the same merge is a suspect.
        for s in b
            .suspects
            .iter()
            .chain(&b.ruled_out_by_hit_runs)
            .filter(|s| s.touches_paths.is_none())
        {
            match s.pr {
                Some(pr) => {
                    needs.merge_files.insert(pr);
                }
                None => {
                    needs.commit_files.insert(s.sha.clone());
                }
            }
        }
        let Some(first_at) = b.first_hit_at else {
            continue;
        };
        let from = first_at - chrono::TimeDelta::days(LOOKBACK_DAYS);
        // Verdicts reached before ancestry is consulted (too few hits, too little before the
        // first hit) would not change with fork points: none are asked for them.
        if !b.verdict.depends_on_ancestry() {
            continue;
        }
        let excluded: BTreeSet<RunId> = report
            .excluded_runs
            .iter()
            .map(|r| r.run_id)
            .chain(report.own_breakage_runs.iter().map(|r| r.run_id))
            .collect();
        let hits: BTreeSet<RunId> = report.hits.iter().map(|h| h.run_id).collect();
        needs.heads.extend(
            snapshot
                .runs
                .iter()
                .filter(|r| report.workflows.contains(&r.workflow_name))
                .filter(|r| !excluded.contains(&r.id))
                .filter(|r| {
                    hits.contains(&r.id) || (r.created_at >= from && r.created_at <= first_at)
                })
                .filter(|r| {
                    placement(r, &snapshot.default_branch, &config.pr_conventions)
                        == RunPlacement::ForkPoint
                })
                // A head the default branch's graph holds is placed without `compare`.
                .filter(|r| !snapshot.parents.contains_key(&r.head_sha))
                .map(|r| r.head_sha.clone()),
        );
    }
    needs
        .counting_files
        .extend(test_run_prs_without_files(snapshot, config));
    needs
}

/// The PRs of the window's runs with a failed test whose changed files are unknown: whether
/// they touch a file beside the test decides whether the test's failures there count
/// ([`analysis::tests`](super::tests)), with or without signatures.
fn test_run_prs_without_files(
    snapshot: &Snapshot,
    config: &super::AnalysisConfig,
) -> BTreeSet<PrNumber> {
    let with_tests: BTreeSet<RunId> = snapshot
        .jobs
        .iter()
        .filter(|j| {
            snapshot
                .classifications
                .get(&j.id)
                .is_some_and(|c| !c.tests.failed.is_empty())
        })
        .map(|j| j.run_id)
        .collect();
    let forks = prs::ForkHeads::new(&snapshot.pulls);
    snapshot
        .runs
        .iter()
        .filter(|r| with_tests.contains(&r.id) && super::in_survey_window(snapshot, r.created_at))
        .filter_map(|r| {
            prs::resolve_origin(r, &snapshot.default_branch, &config.pr_conventions, &forks).pr()
        })
        .filter(|n| snapshot.pulls.get(n).is_none_or(|p| p.files.is_none()))
        .collect()
}

/// The evidence for one merge.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Suspect {
    /// `None` for a direct push to the default branch.
    pub pr: Option<PrNumber>,
    pub title: String,
    /// The PR's page, or the commit's for a direct push.
    pub url: Option<String>,
    pub merged_at: Timestamp,
    pub sha: Sha,
    /// Changed files matching the signature's `paths`; `None` when the files are unknown.
    pub touches_paths: Option<bool>,
    /// Changed a file holding a failing test; `None` when the files are unknown.
    pub touches_tests: Option<bool>,
    /// Clean runs before the first hit that included this merge.
    pub clean_runs_after: u64,
    /// Clean runs before the first hit whose inclusion of this merge is unknown (not counted).
    pub unknown_runs_after: u64,
    /// `(1 − p)^clean_runs_after`.
    pub likelihood: f64,
    /// Share of the evidence (likelihood × prior weight, normalised over the suspects).
    pub posterior: f64,
    /// Clean runs before the first hit that did not include this merge.
    pub clean_runs_before: u64,
    /// Hit runs (the first hit and every one after it, oldest first) that included it.
    pub hit_runs_containing: Vec<RunId>,
    /// Hit runs that did not include it: when some merge is in every hit run, a merge with any
    /// is ruled out; when none is, the merges are listed with these.
    pub hit_runs_lacking: Vec<RunId>,
    /// Hit runs whose inclusion of it is unknown (fork point not known).
    pub hit_runs_unknown: Vec<RunId>,
}

/// A merge's weight before the evidence: [`PATHS_WEIGHT`] if it changed the signature's paths,
/// times [`TESTS_WEIGHT`] if it changed a failing test's file, else 1 (unknown counts as no).
pub fn prior_weight(touches_paths: Option<bool>, touches_tests: Option<bool>) -> f64 {
    let paths = if touches_paths == Some(true) {
        PATHS_WEIGHT
    } else {
        1.0
    };
    let tests = if touches_tests == Some(true) {
        TESTS_WEIGHT
    } else {
        1.0
    };
    paths * tests
}

impl Suspect {
    /// The weight its share multiplies its likelihood by ([`prior_weight`]).
    pub fn weight(&self) -> f64 {
        prior_weight(self.touches_paths, self.touches_tests)
    }

    /// `#2371` for a pull request, the short sha (`abc1234`) for a direct push.
    pub fn label(&self) -> String {
        match self.pr {
            Some(n) => format!("#{n}"),
            None => self.sha.0.chars().take(7).collect(),
        }
    }

    /// What the merge did: a pull request "merged", a direct push "landed".
    pub fn verb(&self) -> &'static str {
        if self.pr.is_some() {
            "merged"
        } else {
            "landed"
        }
    }
}

/// How strong the conclusion is.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Verdict {
    /// The signature never hit.
    NoHits,
    /// Too few hits to estimate a hit rate.
    NotEnoughHits { hits: u64 },
    /// The clean runs before the first hit are too few to say the flake was absent before it,
    /// and the first hit came as early as the hit rate predicts: it was there from the start.
    PresentBeforeWindow {
        clean_runs_before: u64,
        probability: f64,
    },
    /// Too rare for the data to place: the clean runs before the first hit prove little.
    TooRareToPlace {
        clean_runs_before: u64,
        probability: f64,
    },
    /// No merge is known at all: no merged PR, no default-branch history.
    NoMergedPrsKnown,
    /// Merges are known, but none landed before the first hit.
    NoMergeBeforeFirstHit,
    /// Every merge before the first hit had too many clean runs after it to have brought the
    /// flake (likelihood below [`RULED_OUT`]).
    EveryMergeRuledOut,
    /// Merges fit the clean runs, but none is in every hit run: the suspects are listed with
    /// the hit runs that lack each, the best fit is not blamed (a trigger outside the code, or
    /// a second cause on the branches that lack it), and the impact counts from the first hit.
    NoMergeInEveryHitRun,
    /// Placed: the top suspect, "zero hits in `clean_runs_before` runs before it; had the flake
    /// been there, seeing none would have had probability `probability`".
    Placed {
        /// `None` when the top suspect is a direct push.
        pr: Option<PrNumber>,
        clean_runs_before: u64,
        probability: f64,
    },
    /// Machine-wide (`analysis::hosts::machine_wide`): every hit is a job of one run on one
    /// runner pool (or host), every job of that run there failed, and the same commit passed
    /// elsewhere: the machine's failure, no merge's.
    MachineWide {
        run: RunId,
        pool: String,
        /// When every hit ran on this one host.
        host: Option<String>,
        jobs: u64,
    },
    /// Host-bound (`analysis::hosts::host_bound`): across runs, the hits are confined to one
    /// host by the matrix's rule, and the same job at the same commit passed on another host:
    /// the machine's failure, no merge's.
    HostBound {
        host: String,
        jobs_hit: u64,
        jobs_total: u64,
        /// Jobs of the same names on the other hosts, none hit.
        elsewhere_jobs: u64,
        chance: f64,
        works_elsewhere: u64,
    },
}

impl Verdict {
    /// Its name in JSON (`placed`, `no_merge_in_every_hit_run` …).
    pub fn name(&self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.get("kind").and_then(|k| k.as_str()).map(str::to_string))
            .unwrap_or_default()
    }

    /// The reason, in words.
    pub fn reason(&self) -> &'static str {
        match self {
            Verdict::NoHits => "the signature never hit",
            Verdict::NotEnoughHits { .. } => "too few hits from the first hit on for a hit rate",
            Verdict::PresentBeforeWindow { .. } => {
                "too few clean runs before the first hit to say the flake was absent then, and \
                 the first hit came as early as the hit rate predicts"
            }
            Verdict::TooRareToPlace { .. } => {
                "too few clean runs before the first hit to say the flake was absent then"
            }
            Verdict::NoMergedPrsKnown => {
                "no merged PR and no default-branch history are known to place it on"
            }
            Verdict::NoMergeBeforeFirstHit => "no known merge landed before the first hit",
            Verdict::EveryMergeRuledOut => {
                "every merge before the first hit had too many clean runs after it"
            }
            Verdict::NoMergeInEveryHitRun => "no merge is in every hit run",
            Verdict::Placed { .. } => {
                "the top suspect is in every hit run, and the clean runs before it make an \
                 earlier start unlikely"
            }
            Verdict::MachineWide { .. } => {
                "every hit is a job of one run on one runner pool or host, which failed there \
                 while the same commit passed elsewhere"
            }
            Verdict::HostBound { .. } => {
                "every hit ran on one host, by the matrix's rule, while the same jobs at the same \
                 commits passed on other hosts"
            }
        }
    }

    /// Whether fork points can change it: not when it was reached before merges are weighed.
    pub fn depends_on_ancestry(&self) -> bool {
        !matches!(
            self,
            Verdict::NoHits
                | Verdict::NotEnoughHits { .. }
                | Verdict::PresentBeforeWindow { .. }
                | Verdict::TooRareToPlace { .. }
                | Verdict::MachineWide { .. }
                | Verdict::HostBound { .. }
        )
    }
}

/// A hit run that lacks the best-fitting merge, and what it tests.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LackingRun {
    pub run_id: RunId,
    pub created_at: Timestamp,
    pub pr: Option<PrNumber>,
    pub branch: Option<String>,
    pub head_sha: Sha,
    /// Its merge base with the default branch, and that commit's date when listed; `None`
    /// when unknown.
    pub merge_base: Option<Sha>,
    pub merge_base_at: Option<Timestamp>,
}

/// The whole result for one signature.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bisection {
    pub first_hit: Option<RunId>,
    pub first_hit_at: Option<Timestamp>,
    /// Hits and runs from the first hit on: the rate `p`.
    pub hits_after: u64,
    pub runs_after: u64,
    /// Runs before the first hit (all clean).
    pub clean_runs_before_first_hit: u64,
    /// Best first; only merges not ruled out.
    pub suspects: Vec<Suspect>,
    pub verdict: Verdict,
    /// Minutes from the top suspect's merge to the first hit's run, when placed.
    pub minutes_after_top_suspect: Option<i64>,
    /// When no merge is in every hit run: the hit runs that lack the top suspect (the best
    /// fit, not blamed), oldest first.
    pub lacking_top_suspect: Vec<LackingRun>,
    /// When placed: the merges the clean runs leave in the running but a hit run lacks, ruled
    /// out (not listed as suspects; their files are asked for all the same).
    pub ruled_out_by_hit_runs: Vec<Suspect>,
    /// When placed: a runner image version every hit ran on that arrived with the merge
    /// (`analysis::hosts::image_coinciding`); the runs cannot tell which of the two brought
    /// the failure. Set by the signature's analysis, which knows the jobs.
    pub image_onset: Option<super::hosts::ImageOnset>,
}

impl Bisection {
    /// `p`, the hit rate observed from the first hit on.
    pub fn hit_rate(&self) -> Option<f64> {
        (self.runs_after > 0).then(|| self.hits_after as f64 / self.runs_after as f64)
    }
}

/// Weighs every merge before the first hit. `runs` are the runs of the workflows where the
/// signature occurs (related PRs' runs already left out), in any order.
pub fn bisect(
    runs: &[BisectRun],
    merges: &[Merge],
    ancestry: &Ancestry,
    paths: &GlobSet,
    failing_tests: &[String],
) -> Bisection {
    let mut runs: Vec<&BisectRun> = runs.iter().collect();
    runs.sort_by_key(|r| (r.created_at, r.id));
    let Some(first) = runs.iter().copied().find(|r| r.hit) else {
        return Bisection {
            first_hit: None,
            first_hit_at: None,
            hits_after: 0,
            runs_after: 0,
            clean_runs_before_first_hit: runs.len() as u64,
            suspects: Vec::new(),
            verdict: Verdict::NoHits,
            minutes_after_top_suspect: None,
            lacking_top_suspect: Vec::new(),
            ruled_out_by_hit_runs: Vec::new(),
            image_onset: None,
        };
    };
    let (before, after): (Vec<&BisectRun>, Vec<&BisectRun>) = runs
        .iter()
        .partition(|r| (r.created_at, r.id) < (first.created_at, first.id));
    let hits: Vec<&BisectRun> = after.iter().copied().filter(|r| r.hit).collect();
    let hits_after = hits.len() as u64;
    let runs_after = after.len() as u64;
    let p = hits_after as f64 / runs_after as f64;
    let clean_before = before.len() as u64;
    let base = Bisection {
        first_hit: Some(first.id),
        first_hit_at: Some(first.created_at),
        hits_after,
        runs_after,
        clean_runs_before_first_hit: clean_before,
        suspects: Vec::new(),
        verdict: Verdict::NoHits,
        minutes_after_top_suspect: None,
        lacking_top_suspect: Vec::new(),
        ruled_out_by_hit_runs: Vec::new(),
        image_onset: None,
    };
    if let Some(verdict) = unplaceable(hits_after, clean_before, p) {
        return Bisection { verdict, ..base };
    }
    let evidence = Evidence {
        hits: &hits,
        before: &before,
        p,
        ancestry,
        paths,
        failing_tests,
    };
    // Merges before the first hit, and the first hit's own PR when it hit before merging.
    let candidates: Vec<&Merge> = merges
        .iter()
        .filter(|m| m.merged_at < first.created_at || (m.pr.is_some() && first.pr == m.pr))
        .collect();
    if candidates.is_empty() {
        let verdict = if merges.is_empty() {
            Verdict::NoMergedPrsKnown
        } else {
            Verdict::NoMergeBeforeFirstHit
        };
        return Bisection { verdict, ..base };
    }
    let weighed: Vec<(f64, Suspect)> = candidates
        .into_iter()
        .filter_map(|merge| evidence.weigh(merge))
        .collect();
    if weighed.is_empty() {
        return Bisection {
            verdict: Verdict::EveryMergeRuledOut,
            ..base
        };
    }
    // A hit run that lacks a merge rules it out, as long as some merge is in every hit run.
    let (fitting, lacked): (Vec<_>, Vec<_>) = weighed
        .into_iter()
        .partition(|(_, s)| s.hit_runs_lacking.is_empty());
    if fitting.is_empty() {
        let suspects = rank(lacked);
        let lacking_top_suspect = suspects
            .first()
            .map(|top| {
                hits.iter()
                    .filter(|h| top.hit_runs_lacking.contains(&h.id))
                    .map(|h| {
                        let base = ancestry.merge_base(&h.head_sha);
                        LackingRun {
                            run_id: h.id,
                            created_at: h.created_at,
                            pr: h.pr,
                            branch: h.branch.clone(),
                            head_sha: h.head_sha.clone(),
                            merge_base: base.as_ref().map(|(sha, _)| sha.clone()),
                            merge_base_at: base.and_then(|(_, at)| at),
                        }
                    })
                    .collect()
            })
            .unwrap_or_default();
        return Bisection {
            suspects,
            verdict: Verdict::NoMergeInEveryHitRun,
            lacking_top_suspect,
            ..base
        };
    }
    let suspects = rank(fitting);
    let top = &suspects[0];
    let verdict = Verdict::Placed {
        pr: top.pr,
        clean_runs_before: top.clean_runs_before,
        probability: (1.0 - p).powi(top.clean_runs_before as i32),
    };
    let minutes_after_top_suspect = Some((first.created_at - top.merged_at).num_minutes());
    Bisection {
        suspects,
        verdict,
        minutes_after_top_suspect,
        ruled_out_by_hit_runs: rank(lacked),
        ..base
    }
}

/// The verdict when no merge can be placed whatever the merges: too few hits, or too few clean
/// runs before the first hit at hit rate `p` to say the flake was absent then.
fn unplaceable(hits_after: u64, clean_before: u64, p: f64) -> Option<Verdict> {
    if hits_after < MIN_HITS {
        return Some(Verdict::NotEnoughHits { hits: hits_after });
    }
    let whole = (1.0 - p).powi(clean_before as i32);
    if whole < PLACEABLE {
        return None;
    }
    Some(if (clean_before as f64) * p <= 1.0 {
        Verdict::PresentBeforeWindow {
            clean_runs_before: clean_before,
            probability: whole,
        }
    } else {
        Verdict::TooRareToPlace {
            clean_runs_before: clean_before,
            probability: whole,
        }
    })
}

/// What a merge is weighed against: the hits (the first one included), the clean runs before the
/// first hit, the hit rate `p`, and what the merge's files are compared with.
struct Evidence<'a> {
    hits: &'a [&'a BisectRun],
    before: &'a [&'a BisectRun],
    p: f64,
    ancestry: &'a Ancestry,
    paths: &'a GlobSet,
    failing_tests: &'a [String],
}

impl Evidence<'_> {
    /// The merge as a suspect with its unnormalized weight and the hit runs that contain and
    /// lack it, or `None` when too many clean runs had it.
    fn weigh(&self, merge: &Merge) -> Option<(f64, Suspect)> {
        let ancestry = self.ancestry;
        let (mut containing, mut lacking, mut unknown) = (Vec::new(), Vec::new(), Vec::new());
        // `hits` holds the first hit, oldest first.
        for h in self.hits {
            match ancestry.includes(h, merge) {
                Some(true) => containing.push(h.id),
                Some(false) => lacking.push(h.id),
                None => unknown.push(h.id),
            }
        }
        let (mut after_k, mut unknown_k, mut before_k) = (0u64, 0u64, 0u64);
        for run in self.before {
            match ancestry.includes(run, merge) {
                Some(true) => after_k += 1,
                Some(false) => before_k += 1,
                None => unknown_k += 1,
            }
        }
        let likelihood = (1.0 - self.p).powi(after_k as i32);
        if likelihood < RULED_OUT {
            return None;
        }
        let touches_paths = merge
            .files
            .as_ref()
            .map(|files| files.iter().any(|f| self.paths.is_match(f)));
        let touches_tests = merge
            .files
            .as_ref()
            .map(|files| files.iter().any(|f| holds_test(f, self.failing_tests)));
        let weight = likelihood * prior_weight(touches_paths, touches_tests);
        Some((
            weight,
            Suspect {
                pr: merge.pr,
                title: merge.title.clone(),
                url: merge.url.clone(),
                merged_at: merge.merged_at,
                sha: merge.sha.clone(),
                touches_paths,
                touches_tests,
                clean_runs_after: after_k,
                unknown_runs_after: unknown_k,
                likelihood,
                posterior: 0.0,
                clean_runs_before: before_k,
                hit_runs_containing: containing,
                hit_runs_lacking: lacking,
                hit_runs_unknown: unknown,
            },
        ))
    }
}

/// The suspects with their posteriors (weights normalized), best first.
fn rank(mut suspects: Vec<(f64, Suspect)>) -> Vec<Suspect> {
    let total: f64 = suspects.iter().map(|(w, _)| w).sum();
    for (w, s) in &mut suspects {
        s.posterior = *w / total;
    }
    suspects.sort_by(|(wa, a), (wb, b)| {
        wb.total_cmp(wa)
            .then(b.merged_at.cmp(&a.merged_at))
            .then(a.pr.cmp(&b.pr))
            .then(a.sha.cmp(&b.sha))
    });
    suspects.into_iter().map(|(_, s)| s).collect()
}

/// Test ids look like `tests/graph/test_x.py::test_y`; a changed file holds the test when it is
/// that file, or that file under a package folder (`cuda_core/tests/graph/test_x.py`).
fn holds_test(file: &str, tests: &[String]) -> bool {
    tests.iter().any(|t| {
        let test_file = t.split("::").next().unwrap_or(t);
        !test_file.is_empty()
            && (file == test_file
                || file
                    .strip_suffix(test_file)
                    .is_some_and(|prefix| prefix.ends_with('/')))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{Duration, TimeZone, Utc};
    use globset::{Glob, GlobSetBuilder};

    fn t(hours: i64) -> Timestamp {
        Utc.with_ymd_and_hms(2026, 6, 1, 0, 0, 0).unwrap() + Duration::hours(hours)
    }

    fn sha(n: u64) -> Sha {
        Sha(format!("{n:040x}"))
    }

    fn merge(pr: u64, hours: i64, files: &[&str]) -> Merge {
        Merge {
            pr: Some(PrNumber(pr)),
            title: format!("PR {pr}"),
            merged_at: t(hours),
            sha: sha(pr),
            files: Some(files.iter().map(|f| f.to_string()).collect()),
            url: None,
        }
    }

    fn pr_run(id: u64, hours: i64, hit: bool) -> BisectRun {
        BisectRun {
            id: RunId(id),
            created_at: t(hours),
            head_sha: sha(1_000_000 + id),
            placement: RunPlacement::ByCreationTime,
            pr: None,
            branch: None,
            hit,
        }
    }

    fn globs(patterns: &[&str]) -> GlobSet {
        let mut b = GlobSetBuilder::new();
        for p in patterns {
            b.add(Glob::new(p).unwrap());
        }
        b.build().unwrap()
    }

    /// Runs every hour from `from` to `to`; from `onset` on, every fifth run hits.
    fn hourly(from: i64, to: i64, onset: i64) -> Vec<BisectRun> {
        (from..to)
            .map(|h| pr_run(h as u64 + 1, h, h >= onset && (h - onset) % 5 == 0))
            .collect()
    }

    #[test]
    fn a_direct_push_is_weighed_like_a_merge_and_not_mistaken_for_a_prs_run() {
        // Pushes (no PR) at hours 10, 100 and 103; runs that test no PR either (`pr: None`) must
        // not count as including every push: the push at 100 is placed, with the runs before it
        // as the evidence.
        let runs = hourly(0, 300, 105);
        let push = |n: u64, hours: i64, files: Option<&[&str]>| Merge {
            pr: None,
            title: format!("push {n}"),
            merged_at: t(hours),
            sha: sha(n),
            files: files.map(|f| f.iter().map(|x| x.to_string()).collect()),
            url: Some(format!("https://github.com/o/r/commit/{}", sha(n).0)),
        };
        let merges = vec![
            push(1, 10, Some(&["README.md"])),
            push(2, 100, Some(&["src/graph/a.py"])),
            push(3, 103, None),
        ];
        let b = bisect(
            &runs,
            &merges,
            &Ancestry::default(),
            &globs(&["src/graph/**"]),
            &[],
        );
        let shas: Vec<&Sha> = b.suspects.iter().map(|s| &s.sha).collect();
        assert_eq!(shas, [&sha(2), &sha(3)], "push 1 is ruled out");
        let top = &b.suspects[0];
        assert_eq!(
            (top.pr, top.label(), top.verb()),
            (None, "0000000".into(), "landed")
        );
        assert_eq!(top.clean_runs_after, 4, "hours 101..=104");
        assert_eq!(top.clean_runs_before, 101, "hours 0..=100");
        // Unknown files are not guessed.
        assert_eq!(b.suspects[1].touches_paths, None);
        assert!(matches!(b.verdict, Verdict::Placed { pr: None, .. }));
    }

    #[test]
    fn culprit_is_not_the_last_merge_before_the_first_hit() {
        // #10 merges at hour 100; the flake's first hit is at hour 105; #11 (unrelated) merged at
        // hour 103 in between. Old merges have ~100 clean runs after them and are ruled out.
        let mut runs = hourly(0, 300, 105);
        runs.retain(|r| r.created_at != t(101)); // a gap changes nothing
        let merges = vec![
            merge(5, 10, &["README.md"]),
            merge(10, 100, &["cuda_core/cuda/core/_graph.py"]),
            merge(11, 103, &["docs/index.md"]),
        ];
        let b = bisect(
            &runs,
            &merges,
            &Ancestry::default(),
            &globs(&["cuda_core/cuda/core/_graph*.py"]),
            &[],
        );
        assert_eq!(b.first_hit, Some(RunId(106)));
        let prs: Vec<u64> = b.suspects.iter().map(|s| s.pr.unwrap().0).collect();
        assert_eq!(
            prs,
            vec![10, 11],
            "#5 has ~95 clean runs after it: ruled out"
        );
        assert_eq!(b.suspects[0].touches_paths, Some(true));
        assert_eq!(b.suspects[1].clean_runs_after, 1, "hour 104 only");
        assert!(matches!(
            b.verdict,
            Verdict::Placed {
                pr: Some(PrNumber(10)),
                ..
            }
        ));
        if let Verdict::Placed {
            clean_runs_before,
            probability,
            ..
        } = b.verdict
        {
            assert_eq!(
                clean_runs_before, 101,
                "hours 0..=100 started before #10 merged"
            );
            assert!(probability < 1e-6);
        }
    }

    #[test]
    fn a_merge_adding_the_failing_test_outranks_a_neutral_one_in_the_same_gap() {
        let runs = hourly(0, 200, 60);
        let merges = vec![
            merge(20, 58, &["tests/graph/test_graph_definition_lifetime.py"]),
            merge(21, 59, &["setup.py"]),
        ];
        let tests = vec!["tests/graph/test_graph_definition_lifetime.py::test_x".to_string()];
        let b = bisect(&runs, &merges, &Ancestry::default(), &globs(&[]), &tests);
        assert_eq!(b.suspects[0].pr, Some(PrNumber(20)));
        assert_eq!(b.suspects[0].touches_tests, Some(true));
        assert_eq!(b.suspects[1].touches_tests, Some(false));
        // Likelihood alone would prefer #21 (fewer clean runs after it); both are shown.
        assert!(b.suspects[1].likelihood > b.suspects[0].likelihood);
    }

    #[test]
    fn a_flake_present_from_the_start_is_not_pinned_on_a_merge() {
        let runs = hourly(0, 100, 1);
        let merges = vec![merge(3, 0, &["a.py"])];
        let b = bisect(&runs, &merges, &Ancestry::default(), &globs(&[]), &[]);
        assert!(
            matches!(
                b.verdict,
                Verdict::PresentBeforeWindow {
                    clean_runs_before: 1,
                    ..
                }
            ),
            "{:?}",
            b.verdict
        );
        assert!(b.suspects.is_empty());
    }

    #[test]
    fn a_rare_flake_gives_weak_evidence_and_no_suspect() {
        // Two hits in 200 runs: no usable rate.
        let mut runs = hourly(0, 200, 10_000);
        runs[150].hit = true;
        runs[190].hit = true;
        let b = bisect(
            &runs,
            &[merge(1, 140, &[])],
            &Ancestry::default(),
            &globs(&[]),
            &[],
        );
        assert_eq!(b.verdict, Verdict::NotEnoughHits { hits: 2 });
        assert!(b.suspects.is_empty());
        // Hits every 25 runs from hour 150 on, 150 clean runs before: (1-0.04)^150 ≈ 0.002 is
        // placeable, but 30 clean runs before are not.
        let runs: Vec<BisectRun> = (0..180)
            .map(|h| pr_run(h + 1, h as i64, h >= 30 && (h - 30) % 25 == 0))
            .collect();
        let b = bisect(
            &runs,
            &[merge(1, 29, &[])],
            &Ancestry::default(),
            &globs(&[]),
            &[],
        );
        assert!(
            matches!(
                b.verdict,
                Verdict::TooRareToPlace {
                    clean_runs_before: 30,
                    ..
                }
            ),
            "{:?}",
            b.verdict
        );
    }

    #[test]
    fn a_side_branch_that_lacks_the_culprit_does_not_count_as_a_clean_run_after_it() {
        // Mainline: c1 (#1) → c2 (#2, the culprit) → c3 (#3). Runs on a side branch forked from
        // c1 keep running clean after #2 merges; they must not count against #2.
        let mainline = vec![
            MainlineCommit {
                sha: sha(1),
                committed_at: t(0),
                title: String::new(),
                files: None,
            },
            MainlineCommit {
                sha: sha(2),
                committed_at: t(50),
                title: String::new(),
                files: None,
            },
            MainlineCommit {
                sha: sha(3),
                committed_at: t(60),
                title: String::new(),
                files: None,
            },
        ];
        let side_head = sha(999);
        let forks = BTreeMap::from([(side_head.clone(), sha(1))]);
        let ancestry = Ancestry::new(&mainline, &forks);
        let mut runs = Vec::new();
        // Before #2: PR runs, clean.
        for h in 0..50 {
            runs.push(pr_run(h + 1, h as i64, false));
        }
        // After #2: side-branch runs, clean (they lack #2); PR runs hit every third.
        for h in 50..120u64 {
            if h % 2 == 0 {
                runs.push(BisectRun {
                    id: RunId(h + 1),
                    created_at: t(h as i64),
                    head_sha: side_head.clone(),
                    placement: RunPlacement::ForkPoint,
                    pr: None,
                    branch: None,
                    hit: false,
                });
            } else {
                runs.push(pr_run(h + 1, h as i64, h >= 61 && h % 3 == 0));
            }
        }
        let merges = vec![merge(1, 0, &[]), merge(2, 50, &[]), merge(3, 60, &[])];
        let b = bisect(&runs, &merges, &ancestry, &globs(&[]), &[]);
        let two = b
            .suspects
            .iter()
            .find(|s| s.pr == Some(PrNumber(2)))
            .expect("#2 is a suspect");
        // Clean runs after #2 before the first hit (hour 63): PR runs at 51..=61 odd = 6.
        assert_eq!(two.clean_runs_after, 6);
        assert!(
            b.suspects.iter().all(|s| s.pr != Some(PrNumber(1))),
            "#1 ruled out"
        );
        // An unknown fork point is not counted either way.
        let b = bisect(&runs, &merges, &Ancestry::default(), &globs(&[]), &[]);
        let two = b
            .suspects
            .iter()
            .find(|s| s.pr == Some(PrNumber(2)))
            .expect("#2 is a suspect");
        assert_eq!(two.unknown_runs_after, 7);
    }

    /// Main: c1 (hour 0) → #38 (hour 38) → #39 (hour 39); PR runs every hour, every fifth hits
    /// from hour 40 on; one more hit at hour 45 on a branch forked from `fork`.
    fn one_old_branch_hit(fork: Sha) -> (Vec<BisectRun>, Vec<Merge>, Ancestry) {
        let commit = |n: u64, h: i64| MainlineCommit {
            sha: sha(n),
            committed_at: t(h),
            title: String::new(),
            files: None,
        };
        let mainline = vec![commit(1, 0), commit(38, 38), commit(39, 39)];
        let old = sha(500);
        let ancestry = Ancestry::new(&mainline, &BTreeMap::from([(old.clone(), fork)]));
        let mut runs = hourly(0, 100, 40);
        runs.push(BisectRun {
            id: RunId(5000),
            created_at: t(45),
            head_sha: old,
            placement: RunPlacement::ForkPoint,
            pr: Some(PrNumber(77)),
            branch: Some("pull-request/77".into()),
            hit: true,
        });
        let merges = vec![merge(38, 38, &["src/graph/a.py"]), merge(39, 39, &[])];
        (runs, merges, ancestry)
    }

    #[test]
    fn a_hit_run_without_the_merge_rules_it_out_when_another_is_in_every_hit_run() {
        // The old branch holds #38, not #39: #39 is ruled out, #38 placed.
        let (runs, merges, ancestry) = one_old_branch_hit(sha(38));
        let b = bisect(&runs, &merges, &ancestry, &globs(&["src/graph/**"]), &[]);
        let prs: Vec<Option<PrNumber>> = b.suspects.iter().map(|s| s.pr).collect();
        assert_eq!(prs, [Some(PrNumber(38))]);
        assert!(
            matches!(b.verdict, Verdict::Placed { .. }),
            "{:?}",
            b.verdict
        );
        assert!(b.suspects[0].hit_runs_lacking.is_empty());
        assert_eq!(b.suspects[0].hit_runs_containing.len() as u64, b.hits_after);
        assert!(b.lacking_top_suspect.is_empty());
        // Kept apart, so that its files are asked for like a suspect's.
        let out: Vec<Option<PrNumber>> = b.ruled_out_by_hit_runs.iter().map(|s| s.pr).collect();
        assert_eq!(out, [Some(PrNumber(39))]);
        assert_eq!(b.ruled_out_by_hit_runs[0].hit_runs_lacking, [RunId(5000)]);
    }

    #[test]
    fn when_no_merge_is_in_every_hit_run_the_merges_are_kept_with_the_runs_lacking_them() {
        // The old branch forks from c1: it lacks both merges. Both are kept, ranked as when
        // one fits (#38 touches the paths), and none is blamed.
        let (runs, merges, ancestry) = one_old_branch_hit(sha(1));
        let b = bisect(&runs, &merges, &ancestry, &globs(&["src/graph/**"]), &[]);
        assert_eq!(b.verdict, Verdict::NoMergeInEveryHitRun);
        assert_eq!(b.verdict.name(), "no_merge_in_every_hit_run");
        let prs: Vec<Option<PrNumber>> = b.suspects.iter().map(|s| s.pr).collect();
        assert_eq!(prs, [Some(PrNumber(38)), Some(PrNumber(39))]);
        for s in &b.suspects {
            assert_eq!(s.hit_runs_lacking, [RunId(5000)]);
            assert_eq!(s.hit_runs_containing.len() as u64, b.hits_after - 1);
            assert!(!s.hit_runs_containing.contains(&RunId(5000)));
            assert!(s.hit_runs_unknown.is_empty());
        }
        assert_eq!(
            b.first_hit,
            Some(RunId(41)),
            "the window keeps the first hit"
        );
        assert_eq!(b.minutes_after_top_suspect, None);
        let lacking = &b.lacking_top_suspect;
        assert_eq!(lacking.len(), 1);
        assert_eq!(
            (
                lacking[0].run_id,
                lacking[0].pr,
                lacking[0].branch.as_deref(),
                lacking[0].merge_base.clone(),
                lacking[0].merge_base_at
            ),
            (
                RunId(5000),
                Some(PrNumber(77)),
                Some("pull-request/77"),
                Some(sha(1)),
                Some(t(0))
            )
        );
    }

    #[test]
    fn each_way_of_finding_no_merge_has_its_own_verdict() {
        let runs = hourly(0, 200, 100);
        let none = bisect(&runs, &[], &Ancestry::default(), &globs(&[]), &[]);
        assert_eq!(none.verdict, Verdict::NoMergedPrsKnown);
        let later = [merge(5, 150, &[])];
        let b = bisect(&runs, &later, &Ancestry::default(), &globs(&[]), &[]);
        assert_eq!(b.verdict, Verdict::NoMergeBeforeFirstHit);
        let old = [merge(5, 10, &[])];
        let b = bisect(&runs, &old, &Ancestry::default(), &globs(&[]), &[]);
        assert_eq!(b.verdict, Verdict::EveryMergeRuledOut);
        for b in [&none, &b] {
            assert!(b.suspects.is_empty());
            assert!(b.verdict.depends_on_ancestry());
        }
        let names: BTreeSet<String> = [
            Verdict::NoMergedPrsKnown,
            Verdict::NoMergeBeforeFirstHit,
            Verdict::EveryMergeRuledOut,
            Verdict::NoMergeInEveryHitRun,
        ]
        .iter()
        .map(|v| v.name())
        .collect();
        assert_eq!(
            names.into_iter().collect::<Vec<_>>(),
            [
                "every_merge_ruled_out",
                "no_merge_before_first_hit",
                "no_merge_in_every_hit_run",
                "no_merged_prs_known"
            ]
        );
    }

    #[test]
    fn a_run_created_before_a_merge_never_includes_it_even_with_an_unknown_fork_point() {
        let merges = [merge(7, 50, &[])];
        let side = |hours: i64| BisectRun {
            id: RunId(hours as u64),
            created_at: t(hours),
            head_sha: sha(9_000 + hours as u64),
            placement: RunPlacement::ForkPoint,
            pr: None,
            branch: None,
            hit: false,
        };
        let ancestry = Ancestry::default();
        assert_eq!(ancestry.includes(&side(49), &merges[0]), Some(false));
        assert_eq!(ancestry.includes(&side(51), &merges[0]), None);
    }

    #[test]
    fn a_pr_s_own_runs_include_its_change_before_it_merges() {
        // Mainline c1 → c2 (#2, the culprit). #2's own mirror-branch run forked from c1 hits
        // before the merge: it tested #2's change, so it does not rule #2 out.
        let mainline = vec![
            MainlineCommit {
                sha: sha(1),
                committed_at: t(0),
                title: String::new(),
                files: None,
            },
            MainlineCommit {
                sha: sha(2),
                committed_at: t(60),
                title: String::new(),
                files: None,
            },
        ];
        let own_head = sha(777);
        let ancestry = Ancestry::new(&mainline, &BTreeMap::from([(own_head.clone(), sha(1))]));
        let mut runs = hourly(0, 200, 62);
        runs.retain(|r| r.created_at != t(55));
        runs.push(BisectRun {
            id: RunId(56),
            created_at: t(55),
            head_sha: own_head,
            placement: RunPlacement::ForkPoint,
            pr: Some(PrNumber(2)),
            branch: None,
            hit: false,
        });
        let b = bisect(&runs, &[merge(2, 60, &[])], &ancestry, &globs(&[]), &[]);
        assert_eq!(b.suspects.len(), 1);
        assert_eq!(
            b.suspects[0].clean_runs_after, 2,
            "its own run at hour 55, and hour 61 (the run of hour 60 started as it merged)"
        );
        let mut hit_first = runs.clone();
        hit_first
            .iter_mut()
            .find(|r| r.id == RunId(56))
            .unwrap()
            .hit = true;
        let b = bisect(
            &hit_first,
            &[merge(2, 60, &[])],
            &ancestry,
            &globs(&[]),
            &[],
        );
        assert_eq!(b.first_hit, Some(RunId(56)));
        assert!(
            matches!(
                b.verdict,
                Verdict::Placed {
                    pr: Some(PrNumber(2)),
                    ..
                }
            ),
            "{:?}",
            b.verdict
        );
    }

    #[test]
    fn merge_commit_history_is_placed_on_the_first_parent_chain_not_by_date() {
        // main: c1 → M2 (merges #2, the culprit) → M3 (merges #3). #3's branch commit b3 was
        // written before #2 merged (dated earlier) but merged main after #2 into itself (b3m,
        // dated after M2), and the listing interleaves b3 between c1 and M2. A run on b3m
        // (its PR merged since: the graph holds it) includes #2 though nothing tells by date
        // which place b3m has; a run on b3 does not include #2.
        let c = |n: u64, h: i64| MainlineCommit {
            sha: sha(n),
            committed_at: t(h),
            title: String::new(),
            files: None,
        };
        // Dates: b3m is dated (author's clock) before M2, though it contains M2.
        let (c1, b3, m2, b3m, m3) = (c(1, 0), c(30, 5), c(2, 10), c(31, 8), c(3, 20));
        let mainline = vec![c1.clone(), b3.clone(), b3m.clone(), m2.clone(), m3.clone()];
        let parents = BTreeMap::from([
            (sha(1), vec![]),
            (sha(30), vec![sha(1)]),
            (sha(2), vec![sha(1), sha(99)]),
            (sha(31), vec![sha(30), sha(2)]),
            (sha(3), vec![sha(2), sha(31)]),
        ]);
        let graph = Ancestry::with_parents(&mainline, &BTreeMap::new(), &parents);
        let by_date = Ancestry::new(&mainline, &BTreeMap::new());
        let culprit = merge(2, 10, &[]);
        let run = |head: Sha| BisectRun {
            id: RunId(1),
            created_at: t(30),
            head_sha: head,
            placement: RunPlacement::ForkPoint,
            pr: None,
            branch: None,
            hit: true,
        };
        assert_eq!(graph.includes(&run(sha(31)), &culprit), Some(true));
        assert_eq!(graph.includes(&run(sha(30)), &culprit), Some(false));
        // By date alone, the hit run on b3m would rule the culprit out.
        assert_eq!(by_date.includes(&run(sha(31)), &culprit), Some(false));
        // A fork point on the chain is placed there.
        let forks = BTreeMap::from([(sha(500), sha(3))]);
        let graph = Ancestry::with_parents(&mainline, &forks, &parents);
        assert_eq!(graph.includes(&run(sha(500)), &culprit), Some(true));
    }

    #[test]
    fn test_files_match_under_package_folders_only_at_a_path_boundary() {
        let tests = vec!["tests/graph/test_a.py::test_x".to_string()];
        assert!(holds_test("tests/graph/test_a.py", &tests));
        assert!(holds_test("cuda_core/tests/graph/test_a.py", &tests));
        assert!(!holds_test("cuda_core/xtests/graph/test_a.py", &tests));
        assert!(!holds_test("tests/graph/test_b.py", &tests));
    }
}
