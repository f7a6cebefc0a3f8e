//! Which machine: every job of the window placed on its runner pool and, where it can be told,
//! its host; per pool and host the jobs run and failed, by signature, and a drain list of hosts
//! significantly worse than their pool.
//!
//! **Pool and host.** What a job's placement (`Snapshot::placements`) says is read once, by
//! [`place_job`]:
//! - a GitHub-hosted runner (`GitHub Actions N`, group `GitHub Actions`): the pool is the
//!   `runs-on` labels; no host (the name says nothing of the machine; the image version in the
//!   log does, as a dimension of its own);
//! - an ephemeral self-hosted runner (actions-runner-controller scale sets, one pod per job:
//!   `<scale set>-<5>-runner-<5>`, or `<label>-<5>` where the label is one the job asked for,
//!   as NVIDIA's fleet names them): the pool is the name without its random parts; the host is
//!   known only where the log names a machine other than the pod, so only for failed jobs
//!   (flakestat downloads no passing job's log): those hosts get counts, never a rate;
//! - any other self-hosted runner: the runner is the host (a persistent runner is one slot of
//!   one machine; the log's `Machine name` is shown beside it), the pool the `runs-on` labels
//!   (the runner group when the job has none).
//!
//! Every figure says what it is about ([`Scope`]): a pool, or a host.
//!
//! **The drain list.** A host whose every job's placement is known (a persistent runner) is
//! compared with the rest of its pool by a one-sided Fisher's exact test ([`fisher_greater`]:
//! is the host's failure rate higher than the other hosts' of the pool?). It is on the drain
//! list when its p-value, Bonferroni-corrected for the number of hosts tested in the window, is
//! below [`DRAIN_ALPHA`] and it failed at least [`DRAIN_MIN_FAILURES`] jobs. The correction
//! keeps the chance that any host of a healthy fleet is listed at 5 %, however many hosts
//! there are.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::in_survey_window;
use crate::model::{Job, JobId, Placement, RunId, SignatureId, Snapshot, Timestamp};

/// The family-wise error rate of the drain list (Bonferroni over the hosts tested).
pub const DRAIN_ALPHA: f64 = 0.05;
/// Failed jobs a host needs before it can be drained: two failures are never a finding.
pub const DRAIN_MIN_FAILURES: u64 = 3;
/// Signatures whose failures are the machine's, not the code's: counted as infrastructure.
pub const INFRASTRUCTURE: &[&str] = &["cuda-error", "disk-full", "network-error", "runner-lost"];

/// What a figure is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    Pool,
    Host,
    /// A GitHub-hosted runner image's version (`ubuntu-24.04 20260607.3.0`): a confinement's
    /// dimension only.
    Image,
    /// `nvidia-smi`'s driver version: a confinement's dimension only.
    Driver,
}

impl Scope {
    /// Every dimension, in the order the reports list them.
    pub const ALL: [Scope; 4] = [Scope::Pool, Scope::Host, Scope::Image, Scope::Driver];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Pool => "pool",
            Scope::Host => "host",
            Scope::Image => "image",
            Scope::Driver => "driver",
        }
    }
}

/// How a pool's runners are named, which decides what its hosts can say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PoolKind {
    /// GitHub's runners: no host, the image version is the dimension.
    GithubHosted,
    /// Persistent self-hosted runners: each is a host, known for every job.
    SelfHosted,
    /// One runner per job (scale sets): a host only where a failed job's log names it.
    Ephemeral,
}

impl PoolKind {
    pub fn as_str(self) -> &'static str {
        match self {
            PoolKind::GithubHosted => "github-hosted",
            PoolKind::SelfHosted => "self-hosted",
            PoolKind::Ephemeral => "ephemeral",
        }
    }
}

/// Where one job ran, as far as it can be told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobPlace {
    pub pool: String,
    pub kind: PoolKind,
    /// The host, when known (always for a persistent runner; from the log for an ephemeral one).
    pub host: Option<String>,
    /// The machine the log names, when it names one other than the runner.
    pub machine: Option<String>,
    /// `ubuntu-24.04 20251215.174.1`, from the log.
    pub image: Option<String>,
    /// `nvidia-smi`'s driver version, from the log.
    pub driver: Option<String>,
    /// `nvidia-smi`'s first GPU.
    pub gpu: Option<String>,
}

/// Where `job` ran; `None` when nothing is known of its runner (no runner name, group or
/// preamble: a job that never got a runner, or one stored before flakestat kept runners).
pub fn place_job(job: &Job, placement: Option<&Placement>) -> Option<JobPlace> {
    let placement = placement?;
    let preamble = placement.preamble.clone().unwrap_or_default();
    let name = placement
        .runner
        .name
        .clone()
        .or_else(|| preamble.runner_name.clone());
    let group = placement.runner.group.clone();
    if name.is_none() && group.is_none() && preamble.is_empty() {
        return None;
    }
    let labels_pool = (!job.labels.is_empty()).then(|| job.labels.join(","));
    let hosted = name
        .as_deref()
        .is_some_and(|n| n.starts_with("GitHub Actions"))
        || group.as_deref() == Some("GitHub Actions")
        || preamble.image.is_some();
    let machine_other = |runner: Option<&str>| {
        preamble
            .machine
            .clone()
            .filter(|m| Some(m.as_str()) != runner)
    };
    let (pool, kind, host) = if hosted {
        let pool = labels_pool
            .or_else(|| preamble.image.clone())
            .unwrap_or_else(|| "github-hosted".into());
        (pool, PoolKind::GithubHosted, None)
    } else if let Some(set) = name.as_deref().and_then(|n| scale_set(n, &job.labels)) {
        (set, PoolKind::Ephemeral, machine_other(name.as_deref()))
    } else {
        let pool = labels_pool
            .or_else(|| group.clone())
            .unwrap_or_else(|| "self-hosted".into());
        (pool, PoolKind::SelfHosted, name.clone())
    };
    let machine = match kind {
        PoolKind::SelfHosted => machine_other(name.as_deref()),
        _ => None,
    };
    Some(JobPlace {
        pool,
        kind,
        host,
        machine,
        image: preamble.image_with_version(),
        driver: preamble.driver.clone(),
        gpu: preamble.gpu.clone(),
    })
}

/// The scale set of an ephemeral runner's name: `<set>-<5>-runner-<5>` (actions-runner-
/// controller), or `<label>-<5>` where `<label>` is one of the job's `runs-on` labels.
pub fn scale_set(name: &str, labels: &[String]) -> Option<String> {
    let random = |s: &str| s.len() == 5 && s.bytes().all(|b| b.is_ascii_alphanumeric());
    if let Some((head, tail)) = name.rsplit_once("-runner-")
        && random(tail)
        && let Some((set, mid)) = head.rsplit_once('-')
        && random(mid)
        && !set.is_empty()
    {
        return Some(set.to_string());
    }
    let (set, tail) = name.rsplit_once('-')?;
    (random(tail) && labels.iter().any(|l| l == set)).then(|| set.to_string())
}

/// A p-value as people read it: `3.2e-9`, `0.041` (every output that words one).
pub fn p_words(p: f64) -> String {
    if p >= 0.001 {
        format!("{p:.3}")
    } else {
        format!("{p:.1e}")
    }
}

/// `P(X >= a)` for the 2×2 table `[[a, b], [c, d]]` with its margins fixed (one-sided Fisher's
/// exact test, alternative "greater": the first row fails more often than the second), summed
/// over the hypergeometric distribution in log space so that large fleets do not overflow.
pub fn fisher_greater(a: u64, b: u64, c: u64, d: u64) -> f64 {
    let n = a + b + c + d;
    let row = a + b;
    let col = a + c;
    let ln_fact = LnFactorial::up_to(n);
    let ln_total = ln_fact.choose(n, row);
    let top = row.min(col);
    // Each term's log; summed relative to the largest so none underflows on its own.
    let terms: Vec<f64> = (a..=top)
        .map(|x| ln_fact.choose(col, x) + ln_fact.choose(n - col, row - x) - ln_total)
        .collect();
    let Some(max) = terms.iter().copied().reduce(f64::max) else {
        return 1.0;
    };
    let sum: f64 = terms.iter().map(|t| (t - max).exp()).sum();
    (max + sum.ln()).exp().min(1.0)
}

/// `ln k!` for `k` up to a bound, summed once.
struct LnFactorial(Vec<f64>);

impl LnFactorial {
    fn up_to(n: u64) -> LnFactorial {
        let mut v = Vec::with_capacity(n as usize + 1);
        v.push(0.0);
        let mut acc = 0.0;
        for k in 1..=n {
            acc += (k as f64).ln();
            v.push(acc);
        }
        LnFactorial(v)
    }

    fn choose(&self, n: u64, k: u64) -> f64 {
        self.0[n as usize] - self.0[k as usize] - self.0[(n - k) as usize]
    }
}

/// Failed jobs of a pool or host by signature (a job matching several counts under each;
/// `None`: no signature explains it).
pub type BySignature = Vec<(Option<SignatureId>, u64)>;

/// One host of a pool.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostFigures {
    pub host: String,
    /// The machine the log names, when other than the runner.
    pub machine: Option<String>,
    /// Jobs run; `None` for an ephemeral pool's host, whose passing jobs are not known.
    pub jobs: Option<u64>,
    pub failed: u64,
    pub infrastructure: u64,
    pub by_signature: BySignature,
    /// `failed / jobs`, when `jobs` is known.
    pub rate: Option<f64>,
    /// The failure rate of the pool's other hosts, when tested.
    pub rest_rate: Option<f64>,
    /// One-sided Fisher's exact p-value against the pool's other hosts, when tested.
    pub p_value: Option<f64>,
    /// `p_value` times the number of hosts tested, at most 1.
    pub p_adjusted: Option<f64>,
    pub drain: bool,
}

/// One pool.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PoolFigures {
    pub pool: String,
    pub kind: PoolKind,
    pub jobs: u64,
    pub failed: u64,
    pub infrastructure: u64,
    pub rate: f64,
    pub by_signature: BySignature,
    /// Worst rate first, then by name.
    pub hosts: Vec<HostFigures>,
    /// Image versions (GitHub-hosted) or drivers seen in its failed jobs' logs, with how many.
    pub images: Vec<(String, u64)>,
    pub drivers: Vec<(String, u64)>,
}

/// A host to drain.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Drain {
    pub pool: String,
    pub host: String,
    pub jobs: u64,
    pub failed: u64,
    pub rate: f64,
    pub pool_rate: f64,
    pub p_value: f64,
    pub p_adjusted: f64,
}

/// `report --hosts`' figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostsAnalysis {
    /// Jobs of the window run (completed, not cancelled or skipped).
    pub jobs: u64,
    /// Of those, jobs with no runner known (stored before flakestat kept runners).
    pub jobs_unplaced: u64,
    /// Largest pool first.
    pub pools: Vec<PoolFigures>,
    /// Hosts the test was run on (the Bonferroni factor).
    pub hosts_tested: u64,
    pub alpha: f64,
    pub min_failures: u64,
    /// Most significant first.
    pub drain: Vec<Drain>,
    /// Signatures whose every hit ran on one version of an image that earlier failures on the
    /// same image did not run: the failure began with that version.
    pub image_onsets: Vec<ImageOnset>,
    /// Signatures significantly confined to some pools or hosts (the matrix's rule).
    pub confined: Vec<Confinement>,
}

/// A signature confined to some values of `pool` or `host`, read as the matrix reads a job-name
/// dimension (`signature::finding`: at least `MIN_HITS` hits, and the chance that hits falling
/// regardless of the dimension all miss the never-hit values below `MAX_CHANCE`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Confinement {
    pub signature: SignatureId,
    /// `pool` or `host`.
    pub dimension: Scope,
    pub finding: super::DimensionFinding,
    /// Hit jobs whose same job (name) at the same commit passed on another host (another pool
    /// for `pool`): it works elsewhere.
    pub works_elsewhere: u64,
}

/// A failure that began with an image version.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ImageOnset {
    pub signature: SignatureId,
    /// `ubuntu-24.04`.
    pub image: String,
    /// The version every hit ran on.
    pub version: String,
    pub hits: u64,
    /// The image's versions seen before it (in failed jobs' logs), oldest first.
    pub before: Vec<String>,
    /// The first hit's run and when it was created.
    pub first_run: RunId,
    pub first_at: Timestamp,
}

/// Hits a signature needs before an image version is said to have brought it.
pub const ONSET_MIN_HITS: u64 = 2;

/// Each runner image's versions and when each was first seen, read once per snapshot (by
/// [`image_onsets`] and, through the bisection's shared reading, by [`image_coinciding`] for
/// every placed signature). Only failed jobs' logs are downloaded, and GitHub-hosted runners
/// print their image there: a version is seen from its first failed job on, and an earlier
/// version is known to have run because other failures ran on it.
#[derive(Debug)]
pub struct ImageSightings {
    /// When each run was created: a job is placed in time by its run.
    created: BTreeMap<RunId, Timestamp>,
    /// image → version → first seen.
    first_seen: BTreeMap<String, BTreeMap<String, Timestamp>>,
}

impl ImageSightings {
    pub fn of(snapshot: &Snapshot) -> ImageSightings {
        let mut sightings = ImageSightings {
            created: snapshot.runs.iter().map(|r| (r.id, r.created_at)).collect(),
            first_seen: BTreeMap::new(),
        };
        for job in jobs_run(snapshot).filter(|j| j.is_failed()) {
            if let Some((image, version)) = image_of(snapshot, job) {
                let at = sightings.at(job);
                let first = sightings
                    .first_seen
                    .entry(image.to_owned())
                    .or_default()
                    .entry(version.to_owned())
                    .or_insert(at);
                *first = (*first).min(at);
            }
        }
        sightings
    }

    /// When `job` ran: its run's creation (the job's own time for a run not in the snapshot).
    fn at(&self, job: &Job) -> Timestamp {
        self.created
            .get(&job.run_id)
            .copied()
            .unwrap_or(job.created_at)
    }

    /// When `version` of `image` was first seen.
    fn first_seen(&self, image: &str, version: &str) -> Option<Timestamp> {
        self.first_seen.get(image)?.get(version).copied()
    }

    /// The versions of `image` other than `version` first seen before `t`, oldest first.
    fn before(&self, image: &str, version: &str, t: Timestamp) -> Vec<String> {
        let mut before: Vec<(Timestamp, &String)> = self
            .first_seen
            .get(image)
            .into_iter()
            .flatten()
            .filter(|(v, seen)| *v != version && **seen < t)
            .map(|(v, seen)| (*seen, v))
            .collect();
        before.sort();
        before.into_iter().map(|(_, v)| v.clone()).collect()
    }
}

/// The runner image and its version a job's log printed (GitHub-hosted runners do).
fn image_of<'s>(snapshot: &'s Snapshot, job: &Job) -> Option<(&'s str, &'s str)> {
    let pre = snapshot.placements.get(&job.id)?.preamble.as_ref()?;
    Some((pre.image.as_deref()?, pre.image_version.as_deref()?))
}

/// [`ImageOnset`]s of the window: a signature's hits on an image that all ran one version,
/// when the image's other versions ran earlier failures.
fn image_onsets(snapshot: &Snapshot) -> Vec<ImageOnset> {
    let sightings = ImageSightings::of(snapshot);
    // signature → image → (versions, hits, first hit).
    type Hits<'s> = (BTreeSet<&'s str>, u64, Option<(Timestamp, RunId)>);
    let mut by_signature: BTreeMap<SignatureId, BTreeMap<&str, Hits>> = BTreeMap::new();
    for job in jobs_run(snapshot).filter(|j| j.is_failed()) {
        let Some((image, version)) = image_of(snapshot, job) else {
            continue;
        };
        let at = sightings.at(job);
        for s in signatures_of(snapshot, job.id) {
            let h = by_signature.entry(s).or_default().entry(image).or_default();
            h.0.insert(version);
            h.1 += 1;
            if h.2.is_none_or(|f| (at, job.run_id) < f) {
                h.2 = Some((at, job.run_id));
            }
        }
    }
    let mut out = Vec::new();
    for (signature, images) in by_signature {
        for (image, (versions, hits, first)) in images {
            let (Some(version), Some((first_at, first_run))) = (versions.first(), first) else {
                continue;
            };
            if versions.len() != 1 || hits < ONSET_MIN_HITS {
                continue;
            }
            let before = sightings.before(image, version, first_at);
            if before.is_empty() {
                continue;
            }
            out.push(ImageOnset {
                signature: signature.clone(),
                image: image.to_owned(),
                version: (*version).to_owned(),
                hits,
                before,
                first_run,
                first_at,
            });
        }
    }
    out
}

/// The runner image version every one of `hits` (a signature's hit jobs, at least
/// [`ONSET_MIN_HITS`]) ran on, when it replaced an earlier version of that image (seen in
/// failed jobs before the first hit) and was itself first seen no earlier than `since` (the
/// merge the failure was placed on): the merge and the image version arrived together, and the
/// runs cannot tell which of the two brought the failure.
pub fn image_coinciding(
    snapshot: &Snapshot,
    sightings: &ImageSightings,
    signature: &SignatureId,
    hits: &[&Job],
    since: Timestamp,
) -> Option<ImageOnset> {
    if (hits.len() as u64) < ONSET_MIN_HITS {
        return None;
    }
    let mut ran: Option<(&str, &str)> = None;
    let mut first: Option<(Timestamp, RunId)> = None;
    for job in hits {
        let here = image_of(snapshot, job)?;
        if ran.is_some_and(|r| r != here) {
            return None;
        }
        ran = Some(here);
        let hit = (sightings.at(job), job.run_id);
        first = Some(first.map_or(hit, |f| f.min(hit)));
    }
    let ((image, version), (first_at, first_run)) = (ran?, first?);
    if sightings
        .first_seen(image, version)
        .is_some_and(|t| t < since)
    {
        return None;
    }
    let before = sightings.before(image, version, first_at);
    if before.is_empty() {
        return None;
    }
    Some(ImageOnset {
        signature: signature.clone(),
        image: image.to_owned(),
        version: version.to_owned(),
        hits: hits.len() as u64,
        before,
        first_run,
        first_at,
    })
}

impl HostsAnalysis {
    /// The drain list's host names, most significant first.
    pub fn drain_hosts(&self) -> impl Iterator<Item = &str> {
        self.drain.iter().map(|d| d.host.as_str())
    }
}

/// Jobs of the window that ran to an end that says something of their machine: succeeded,
/// failed or timed out (cancelled and skipped jobs say nothing).
pub(crate) fn jobs_run(snapshot: &Snapshot) -> impl Iterator<Item = &Job> {
    let window: BTreeSet<RunId> = snapshot
        .runs
        .iter()
        .filter(|r| in_survey_window(snapshot, r.created_at))
        .map(|r| r.id)
        .collect();
    snapshot.jobs.iter().filter(move |j| {
        window.contains(&j.run_id)
            && (j.is_failed()
                || j.conclusion
                    .as_ref()
                    .is_some_and(|c| c.as_str() == "success"))
    })
}

/// The signatures a failed job's classification names (empty: none, or no log read).
fn signatures_of(snapshot: &Snapshot, job: JobId) -> Vec<SignatureId> {
    snapshot
        .classifications
        .get(&job)
        .map(|c| c.matches.iter().map(|m| m.signature.clone()).collect())
        .unwrap_or_default()
}

#[derive(Default)]
struct Tally {
    jobs: u64,
    failed: u64,
    infrastructure: u64,
    by_signature: BTreeMap<Option<SignatureId>, u64>,
    machine: Option<String>,
}

impl Tally {
    fn add(&mut self, failed: bool, signatures: &[SignatureId]) {
        self.jobs += 1;
        if !failed {
            return;
        }
        self.failed += 1;
        if signatures
            .iter()
            .any(|s| INFRASTRUCTURE.contains(&s.0.as_str()))
        {
            self.infrastructure += 1;
        }
        if signatures.is_empty() {
            *self.by_signature.entry(None).or_default() += 1;
        }
        for s in signatures {
            *self.by_signature.entry(Some(s.clone())).or_default() += 1;
        }
    }

    fn by_signature(&self) -> BySignature {
        let mut v: BySignature = self
            .by_signature
            .iter()
            .map(|(s, n)| (s.clone(), *n))
            .collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        v
    }
}

fn rate(failed: u64, jobs: u64) -> f64 {
    if jobs == 0 {
        0.0
    } else {
        failed as f64 / jobs as f64
    }
}

fn counted(map: BTreeMap<String, u64>) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = map.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v
}

/// The whole `report --hosts` analysis of a (complete) snapshot.
pub fn analyze_hosts(snapshot: &Snapshot) -> HostsAnalysis {
    let t = tally_pools(snapshot);
    HostsAnalysis {
        jobs: t.jobs,
        jobs_unplaced: t.unplaced,
        pools: t.pools,
        hosts_tested: t.hosts_tested,
        alpha: DRAIN_ALPHA,
        min_failures: DRAIN_MIN_FAILURES,
        drain: t.drain,
        image_onsets: image_onsets(snapshot),
        confined: confinements(snapshot, None, &Scope::ALL),
    }
}

/// What the overview says of the machines: the drain list and the failures that began with an
/// image version (`report --hosts` has the rest).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Machines {
    /// Hosts the drain list's test was run on (0: no pool here has hosts to compare).
    pub hosts_tested: u64,
    /// Most significant first.
    pub drain: Vec<Drain>,
    pub image_onsets: Vec<ImageOnset>,
}

impl Machines {
    pub fn is_empty(&self) -> bool {
        self.drain.is_empty() && self.image_onsets.is_empty()
    }
}

/// The overview's [`Machines`] of a snapshot.
pub fn machines(snapshot: &Snapshot) -> Machines {
    let t = tally_pools(snapshot);
    Machines {
        hosts_tested: t.hosts_tested,
        drain: t.drain,
        image_onsets: image_onsets(snapshot),
    }
}

/// The window's drain list alone (most significant first): what `flakestat pr` reads to call
/// a job on a bad host infrastructure, without the rest of [`analyze_hosts`].
pub fn drain_list(snapshot: &Snapshot) -> Vec<Drain> {
    tally_pools(snapshot).drain
}

/// Per pool and host figures and the drain list.
struct PoolsTallied {
    jobs: u64,
    unplaced: u64,
    pools: Vec<PoolFigures>,
    hosts_tested: u64,
    drain: Vec<Drain>,
}

fn tally_pools(snapshot: &Snapshot) -> PoolsTallied {
    let mut jobs = 0;
    let mut unplaced = 0;
    struct PoolTally {
        kind: PoolKind,
        all: Tally,
        hosts: BTreeMap<String, Tally>,
        images: BTreeMap<String, u64>,
        drivers: BTreeMap<String, u64>,
    }
    let mut pools: BTreeMap<String, PoolTally> = BTreeMap::new();
    for job in jobs_run(snapshot) {
        jobs += 1;
        let Some(place) = place_job(job, snapshot.placements.get(&job.id)) else {
            unplaced += 1;
            continue;
        };
        let failed = job.is_failed();
        let signatures = if failed {
            signatures_of(snapshot, job.id)
        } else {
            Vec::new()
        };
        let pool = pools
            .entry(place.pool.clone())
            .or_insert_with(|| PoolTally {
                kind: place.kind,
                all: Tally::default(),
                hosts: BTreeMap::new(),
                images: BTreeMap::new(),
                drivers: BTreeMap::new(),
            });
        pool.all.add(failed, &signatures);
        if let Some(host) = &place.host {
            let t = pool.hosts.entry(host.clone()).or_default();
            t.add(failed, &signatures);
            if t.machine.is_none() {
                t.machine = place.machine.clone();
            }
        }
        if let Some(image) = place.image {
            *pool.images.entry(image).or_default() += 1;
        }
        if let Some(driver) = place.driver {
            *pool.drivers.entry(driver).or_default() += 1;
        }
    }

    // Tested: hosts of persistent pools with at least one other host to compare with.
    let hosts_tested: u64 = pools
        .values()
        .filter(|p| p.kind == PoolKind::SelfHosted && p.hosts.len() >= 2)
        .map(|p| p.hosts.len() as u64)
        .sum();
    let mut drain = Vec::new();
    let mut out = Vec::new();
    for (name, p) in pools {
        let pool_rate = rate(p.all.failed, p.all.jobs);
        let tested = p.kind == PoolKind::SelfHosted && p.hosts.len() >= 2;
        let mut hosts: Vec<HostFigures> = p
            .hosts
            .iter()
            .map(|(host, t)| {
                let known = p.kind == PoolKind::SelfHosted;
                let (rest_rate, p_value) = if tested {
                    let (rest_failed, rest_jobs) = (p.all.failed - t.failed, p.all.jobs - t.jobs);
                    let pv = fisher_greater(
                        t.failed,
                        t.jobs - t.failed,
                        rest_failed,
                        rest_jobs - rest_failed,
                    );
                    (Some(rate(rest_failed, rest_jobs)), Some(pv))
                } else {
                    (None, None)
                };
                let p_adjusted = p_value.map(|pv| (pv * hosts_tested as f64).min(1.0));
                let rate_here = rate(t.failed, t.jobs);
                let is_drain = p_adjusted.is_some_and(|pa| pa < DRAIN_ALPHA)
                    && t.failed >= DRAIN_MIN_FAILURES
                    && rest_rate.is_some_and(|r| rate_here > r);
                if is_drain {
                    drain.push(Drain {
                        pool: name.clone(),
                        host: host.clone(),
                        jobs: t.jobs,
                        failed: t.failed,
                        rate: rate_here,
                        pool_rate,
                        p_value: p_value.unwrap_or(1.0),
                        p_adjusted: p_adjusted.unwrap_or(1.0),
                    });
                }
                HostFigures {
                    host: host.clone(),
                    machine: t.machine.clone(),
                    jobs: known.then_some(t.jobs),
                    failed: t.failed,
                    infrastructure: t.infrastructure,
                    by_signature: t.by_signature(),
                    rate: known.then_some(rate_here),
                    rest_rate,
                    p_value,
                    p_adjusted,
                    drain: is_drain,
                }
            })
            .collect();
        hosts.sort_by(|a, b| {
            b.rate
                .unwrap_or(0.0)
                .total_cmp(&a.rate.unwrap_or(0.0))
                .then(b.failed.cmp(&a.failed))
                .then_with(|| a.host.cmp(&b.host))
        });
        out.push(PoolFigures {
            pool: name,
            kind: p.kind,
            jobs: p.all.jobs,
            failed: p.all.failed,
            infrastructure: p.all.infrastructure,
            rate: pool_rate,
            by_signature: p.all.by_signature(),
            hosts,
            images: counted(p.images),
            drivers: counted(p.drivers),
        });
    }
    out.sort_by(|a, b| b.jobs.cmp(&a.jobs).then_with(|| a.pool.cmp(&b.pool)));
    drain.sort_by(|a, b| {
        a.p_value
            .total_cmp(&b.p_value)
            .then_with(|| a.host.cmp(&b.host))
    });
    PoolsTallied {
        jobs,
        unplaced,
        pools: out,
        hosts_tested,
        drain,
    }
}

/// [`Confinement`]s of the window: pool over every placed job, host over the jobs of pools
/// whose every job's host is known (persistent runners), image and driver over the jobs whose
/// own log or neighbours tell them ([`known_versions`]); each over the jobs whose name ran on
/// two values of it or more in the window, so that the matrix's own dimensions (a job name
/// bound to one pool) are never read as the machine's. A signature whose hits all lie in one
/// run attempt (a machine-wide night) is confined to nothing: its hits are one event.
///
/// `only`: that signature's alone; `scopes`: the dimensions read.
fn confinements(
    snapshot: &Snapshot,
    only: Option<&SignatureId>,
    scopes: &[Scope],
) -> Vec<Confinement> {
    use super::signature::{DimensionReport, DimensionValue, finding};
    let placed: Vec<(&Job, JobPlace, Vec<SignatureId>)> = jobs_run(snapshot)
        .filter_map(|j| {
            let place = place_job(j, snapshot.placements.get(&j.id))?;
            let sigs = if j.is_failed() {
                signatures_of(snapshot, j.id)
            } else {
                Vec::new()
            };
            Some((j, place, sigs))
        })
        .collect();
    let dimensions: Vec<(Scope, Vec<Option<String>>)> = [Scope::Pool, Scope::Host]
        .into_iter()
        .filter(|scope| scopes.contains(scope))
        .map(|scope| {
            let values = placed
                .iter()
                .map(|(_, p, _)| match scope {
                    Scope::Pool => Some(p.pool.clone()),
                    _ => p.host.clone().filter(|_| p.kind == PoolKind::SelfHosted),
                })
                .collect();
            (scope, values)
        })
        .chain(
            [Scope::Image, Scope::Driver]
                .into_iter()
                .filter(|scope| scopes.contains(scope))
                .map(|scope| (scope, known_versions(&placed, scope))),
        )
        .collect();
    let signatures: BTreeSet<&SignatureId> = placed
        .iter()
        .flat_map(|(_, _, s)| s)
        .filter(|s| only.is_none_or(|o| o == *s))
        .collect();
    let mut out = Vec::new();
    for signature in signatures {
        let attempts: BTreeSet<(RunId, u32)> = placed
            .iter()
            .filter(|(_, _, sigs)| sigs.contains(signature))
            .map(|(j, _, _)| (j.run_id, j.run_attempt))
            .collect();
        if attempts.len() < 2 {
            continue;
        }
        for (scope, values) in &dimensions {
            // Only job names that ran on two values or more can tell the machine from the job:
            // a job name that always runs on one pool (the matrix picks the pool) would make a
            // failure confined to its matrix cell look confined to that pool.
            let mut values_of: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
            for ((job, _, _), v) in placed.iter().zip(values) {
                if let Some(v) = v {
                    values_of.entry(job.name.as_str()).or_default().insert(v);
                }
            }
            let comparable = |job: &Job| {
                values_of
                    .get(job.name.as_str())
                    .is_some_and(|v| v.len() > 1)
            };
            let mut cells: BTreeMap<String, (u64, u64)> = BTreeMap::new();
            for ((job, _, sigs), v) in placed.iter().zip(values) {
                if let Some(v) = v.as_ref().filter(|_| comparable(job)) {
                    let cell = cells.entry(v.clone()).or_default();
                    cell.0 += u64::from(sigs.contains(signature));
                    cell.1 += 1;
                }
            }
            let dim = DimensionReport {
                name: scope.as_str().into(),
                values: cells
                    .into_iter()
                    .map(|(value, (jobs_hit, jobs_total))| DimensionValue {
                        value,
                        jobs_hit,
                        jobs_total,
                    })
                    .collect(),
            };
            let Some(f) = finding(&dim, None).filter(|f| f.significant) else {
                continue;
            };
            let works_elsewhere = placed
                .iter()
                .zip(values)
                .filter(|((_, _, sigs), _)| sigs.contains(signature))
                .filter(|((hit, _, _), here)| {
                    placed.iter().zip(values).any(|((other, _, _), there)| {
                        other.name == hit.name
                            && other.head_sha == hit.head_sha
                            && other
                                .conclusion
                                .as_ref()
                                .is_some_and(|c| c.as_str() == "success")
                            && there.is_some()
                            && there != *here
                    })
                })
                .count() as u64;
            out.push(Confinement {
                signature: signature.clone(),
                dimension: *scope,
                finding: f,
                works_elsewhere,
            });
        }
    }
    out
}

/// The image version (`Scope::Image`) or driver (`Scope::Driver`) each of `placed` ran, where
/// it can be told. Only failed jobs' logs are downloaded, so a job's own log names it for
/// failed jobs alone; a passing job ran what the logs on both sides of it in time name, when
/// they agree, among the jobs that share the machine's state: a GitHub-hosted pool's for an
/// image (its runners roll from one version to the next), one persistent host's for a driver
/// (a machine's driver changes when someone upgrades it). Before a group's first log, after
/// its last, between two logs that differ, and on an ephemeral pod (no two jobs share it):
/// unknown, and left out of the dimension.
fn known_versions(
    placed: &[(&Job, JobPlace, Vec<SignatureId>)],
    scope: Scope,
) -> Vec<Option<String>> {
    let own = |p: &JobPlace| match scope {
        Scope::Image => p.image.clone(),
        _ => p.driver.clone(),
    };
    let group = |p: &JobPlace| match scope {
        Scope::Image => (p.kind == PoolKind::GithubHosted).then(|| p.pool.clone()),
        _ => p
            .host
            .clone()
            .filter(|_| p.kind == PoolKind::SelfHosted)
            .map(|h| format!("{}\u{0}{h}", p.pool)),
    };
    let mut out: Vec<Option<String>> = placed.iter().map(|(_, p, _)| own(p)).collect();
    let mut groups: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, (_, p, _)) in placed.iter().enumerate() {
        if let Some(g) = group(p) {
            groups.entry(g).or_default().push(i);
        }
    }
    for members in groups.values_mut() {
        members.sort_by_key(|&i| {
            let j = placed[i].0;
            (j.started_at.unwrap_or(j.created_at), j.id)
        });
        let own: Vec<Option<String>> = members.iter().map(|&i| own(&placed[i].1)).collect();
        let mut before: Vec<Option<&String>> = Vec::with_capacity(own.len());
        let mut last = None;
        for v in &own {
            last = v.as_ref().or(last);
            before.push(last);
        }
        let mut next = None;
        for (k, v) in own.iter().enumerate().rev() {
            next = v.as_ref().or(next);
            if v.is_none()
                && let (Some(a), Some(b)) = (before[k], next)
                && a == b
            {
                out[members[k]] = Some(a.clone());
            }
        }
    }
    out
}

/// Hosts on the drain list of `[baseline_since, until)` (the snapshot's `until`) that the
/// drain list of `[baseline_since, period_since)` lacks: the nightly's newly bad hosts.
pub fn newly_drained(
    snapshot: &Snapshot,
    baseline_since: crate::model::Timestamp,
    period_since: crate::model::Timestamp,
) -> Vec<Drain> {
    let mut view = snapshot.clone();
    view.since = Some(baseline_since);
    let now = analyze_hosts(&view);
    view.until = Some(period_since);
    let before: BTreeSet<(String, String)> = analyze_hosts(&view)
        .drain
        .into_iter()
        .map(|d| (d.pool, d.host))
        .collect();
    now.drain
        .into_iter()
        .filter(|d| !before.contains(&(d.pool.clone(), d.host.clone())))
        .collect()
}

/// A failure one host makes across runs: the signature is confined to that one self-hosted host
/// by the matrix's rule ([`Confinement`]), and some of its hit jobs passed at the same commit on
/// another host. The bisection names no merge for it: the machine is the finding.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostBound {
    pub host: String,
    /// Hits on it, of its jobs.
    pub jobs_hit: u64,
    pub jobs_total: u64,
    /// Jobs on the other hosts the same job names ran on, none hit.
    pub elsewhere_jobs: u64,
    /// The chance the hits would all miss the other hosts if the host did not matter.
    pub chance: f64,
    /// Hit jobs whose same job at the same commit passed on another host.
    pub works_elsewhere: u64,
}

/// The signature's [`HostBound`] verdict, when its hits are confined to one host and it works
/// elsewhere; `None` otherwise (and wherever hosts cannot be told, as on ephemeral pods).
pub fn host_bound(snapshot: &Snapshot, signature: &SignatureId) -> Option<HostBound> {
    confinements(snapshot, Some(signature), &[Scope::Host])
        .into_iter()
        .find(|c| c.finding.hit_values.len() == 1 && c.works_elsewhere > 0)
        .map(|c| HostBound {
            host: c.finding.hit_values[0].clone(),
            jobs_hit: c.finding.jobs_hit,
            jobs_total: c.finding.jobs_total,
            elsewhere_jobs: c.finding.never_jobs_total,
            chance: c.finding.chance,
            works_elsewhere: c.works_elsewhere,
        })
}

/// A failure the machine made: every hit a job of one run on one pool (or host).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MachineWide {
    pub run: RunId,
    pub pool: String,
    /// When every hit ran on this one host (`Scope::Host`); else the pool is the finding.
    pub host: Option<String>,
    pub jobs: u64,
}

impl MachineWide {
    pub fn scope(&self) -> Scope {
        if self.host.is_some() {
            Scope::Host
        } else {
            Scope::Pool
        }
    }
}

/// Hits a machine-wide verdict needs: one failed job is no pattern.
pub const MACHINE_WIDE_MIN_JOBS: usize = 2;

/// The signature account's machine-wide verdict: `hits` (failed jobs of one failure class)
/// are machine-wide when there are at least [`MACHINE_WIDE_MIN_JOBS`], all in one run attempt,
/// all placed on one pool; that pool of that attempt is one whose every job failed, as an
/// incident judges it ([`incidents::failed_pools`](super::incidents::failed_pools)); and a job
/// of the same commit passed elsewhere (on another pool of the run, or in another run). `None`
/// otherwise, and when a hit's placement is unknown.
pub fn machine_wide(snapshot: &Snapshot, hits: &[&Job]) -> Option<MachineWide> {
    let first = hits.first()?;
    if hits.len() < MACHINE_WIDE_MIN_JOBS
        || hits
            .iter()
            .any(|j| (j.run_id, j.run_attempt) != (first.run_id, first.run_attempt))
    {
        return None;
    }
    let place = |j: &Job| place_job(j, snapshot.placements.get(&j.id));
    let places: Vec<JobPlace> = hits.iter().map(|j| place(j)).collect::<Option<_>>()?;
    let pool = &places[0].pool;
    if places.iter().any(|p| &p.pool != pool) {
        return None;
    }
    let host = places[0]
        .host
        .clone()
        .filter(|h| places.iter().all(|p| p.host.as_ref() == Some(h)));
    let run = snapshot.jobs.iter().filter(|j| j.run_id == first.run_id);
    let failed = super::incidents::failed_pools(&super::incidents::pool_executions(snapshot, run));
    if !failed
        .iter()
        .any(|p| p.attempt == first.run_attempt && &p.pool == pool)
    {
        return None;
    }
    let green_elsewhere = snapshot.jobs.iter().any(|job| {
        let passed = job
            .conclusion
            .as_ref()
            .is_some_and(|c| c.as_str() == "success");
        passed && job.head_sha == first.head_sha && place(job).is_none_or(|p| &p.pool != pool)
    });
    green_elsewhere.then(|| MachineWide {
        run: first.run_id,
        pool: pool.clone(),
        host,
        jobs: hits.len() as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Preamble, Runner};

    /// Exact values (the sums of the hypergeometric probabilities in rational arithmetic; the
    /// first is Fisher's own tea-tasting table, 0.2429 in every textbook).
    #[test]
    fn fisher_matches_exact_values() {
        let cases = [
            ((3, 1, 1, 3), 0.242_857_142_857_142_85),
            ((10, 20, 5, 95), 0.000_147_328_764_181_908_06),
            ((12, 24, 30, 400), 1.563_292_090_657_081e-5),
            ((0, 5, 3, 10), 1.0),
            ((40, 80, 60, 1200), 1.459_430_316_359_728_2e-19),
        ];
        for ((a, b, c, d), want) in cases {
            let got = fisher_greater(a, b, c, d);
            assert!(
                ((got - want) / want).abs() < 1e-9,
                "({a},{b},{c},{d}): {got} vs {want}"
            );
        }
    }

    /// A fleet of tens of thousands of jobs: no overflow, a probability.
    #[test]
    fn fisher_holds_on_large_tables() {
        let p = fisher_greater(300, 700, 3000, 46000);
        assert!(p > 0.0 && p < 1e-50, "{p}");
        let even = fisher_greater(100, 900, 1000, 9000);
        assert!(even > 0.4 && even < 0.6, "{even}");
    }

    fn job(labels: &[&str]) -> Job {
        Job {
            id: JobId(1),
            run_id: RunId(1),
            run_attempt: 1,
            name: "t".into(),
            status: "completed".into(),
            conclusion: Some("success".into()),
            created_at: "2026-06-15T00:00:00Z".parse().unwrap(),
            started_at: None,
            completed_at: None,
            html_url: None,
            head_sha: crate::model::Sha("a".into()),
            labels: labels.iter().map(|l| l.to_string()).collect(),
        }
    }

    fn runner(name: &str, group: &str) -> Placement {
        Placement {
            runner: Runner {
                name: Some(name.into()),
                group: Some(group.into()),
            },
            preamble: None,
        }
    }

    #[test]
    fn each_kind_of_runner_is_placed_on_its_pool() {
        let arc = place_job(
            &job(&["gpu-l4"]),
            Some(&runner("gpu-l4-x7k2p-runner-9qz4m", "nv")),
        )
        .unwrap();
        assert_eq!(
            (arc.pool.as_str(), arc.kind, arc.host),
            ("gpu-l4", PoolKind::Ephemeral, None)
        );
        let nvidia = place_job(
            &job(&["linux-amd64-gpu-t4-latest-1"]),
            Some(&runner("linux-amd64-gpu-t4-latest-1-8kq2v", "nv-gpu")),
        )
        .unwrap();
        assert_eq!(nvidia.pool, "linux-amd64-gpu-t4-latest-1");
        assert_eq!(nvidia.kind, PoolKind::Ephemeral);
        let own = place_job(&job(&["gpu-h100"]), Some(&runner("h100-07", "lab"))).unwrap();
        assert_eq!(
            (own.pool.as_str(), own.kind, own.host.as_deref()),
            ("gpu-h100", PoolKind::SelfHosted, Some("h100-07"))
        );
        let mut hosted = runner("GitHub Actions 12", "GitHub Actions");
        hosted.preamble = Some(Preamble {
            image: Some("ubuntu-24.04".into()),
            image_version: Some("20250105.1.0".into()),
            ..Preamble::default()
        });
        let hosted = place_job(&job(&["ubuntu-latest"]), Some(&hosted)).unwrap();
        assert_eq!(hosted.kind, PoolKind::GithubHosted);
        assert_eq!(hosted.host, None);
        assert_eq!(hosted.image.as_deref(), Some("ubuntu-24.04 20250105.1.0"));
        assert_eq!(place_job(&job(&[]), None), None);
        assert_eq!(place_job(&job(&[]), Some(&Placement::default())), None);
    }

    /// An ephemeral runner's log naming a node other than its pod gives the host; one naming
    /// the pod itself (NVIDIA's) gives none.
    #[test]
    fn an_ephemeral_host_is_known_only_from_its_log() {
        let mut p = runner("gpu-l4-x7k2p-runner-9qz4m", "nv");
        p.preamble = Some(Preamble {
            machine: Some("node-4".into()),
            ..Preamble::default()
        });
        let placed = place_job(&job(&["gpu-l4"]), Some(&p)).unwrap();
        assert_eq!(placed.host.as_deref(), Some("node-4"));
        p.preamble = Some(Preamble {
            machine: Some("gpu-l4-x7k2p-runner-9qz4m".into()),
            ..Preamble::default()
        });
        assert_eq!(place_job(&job(&["gpu-l4"]), Some(&p)).unwrap().host, None);
    }

    /// A passing job's image is its neighbours' when they agree; between two versions, before
    /// the first log and on an ephemeral pod nothing is made up.
    #[test]
    fn a_passing_job_runs_what_the_logs_around_it_name() {
        let at = |h: u32| {
            let mut j = job(&["ubuntu-latest"]);
            j.id = JobId(u64::from(h));
            j.started_at = Some(
                "2026-06-15T00:00:00Z"
                    .parse::<crate::model::Timestamp>()
                    .unwrap()
                    + chrono::TimeDelta::hours(i64::from(h)),
            );
            j
        };
        let jobs: Vec<Job> = (0..7).map(at).collect();
        let place = |image: Option<&str>, kind: PoolKind| JobPlace {
            pool: "ubuntu-latest".into(),
            kind,
            host: None,
            machine: None,
            image: image.map(str::to_string),
            driver: None,
            gpu: None,
        };
        let hosted = PoolKind::GithubHosted;
        let logs = [
            None,
            Some("u 1"),
            None,
            Some("u 1"),
            None,
            Some("u 2"),
            None,
        ];
        let placed: Vec<(&Job, JobPlace, Vec<SignatureId>)> = jobs
            .iter()
            .zip(logs)
            .map(|(j, image)| (j, place(image, hosted), Vec::new()))
            .collect();
        let known = known_versions(&placed, Scope::Image);
        let want = [
            None,
            Some("u 1"),
            Some("u 1"),
            Some("u 1"),
            None,
            Some("u 2"),
            None,
        ];
        assert_eq!(known, want.map(|v| v.map(str::to_string)).to_vec());
        // Pods share nothing: only their own log tells.
        let pods: Vec<(&Job, JobPlace, Vec<SignatureId>)> = placed
            .iter()
            .map(|(j, p, s)| {
                (
                    *j,
                    JobPlace {
                        kind: PoolKind::Ephemeral,
                        ..p.clone()
                    },
                    s.clone(),
                )
            })
            .collect();
        assert_eq!(known_versions(&pods, Scope::Image)[2], None);
    }

    #[test]
    fn scale_set_names_need_their_random_parts() {
        assert_eq!(
            scale_set("arc-gpu-ab12c-runner-zz9x1", &[]).as_deref(),
            Some("arc-gpu")
        );
        assert_eq!(scale_set("arc-gpu-runner-zz9x1", &[]), None);
        assert_eq!(scale_set("gpu-03", &["gpu".into()]), None);
        assert_eq!(scale_set("build-box-7", &[]), None);
    }
}
