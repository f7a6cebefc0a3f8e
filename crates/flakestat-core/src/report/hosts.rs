//! `report --hosts`: per runner pool and host, jobs run and failed, failures by signature,
//! infrastructure failures, the failure rate against the pool's and Fisher's p-value; the drain
//! list; the failures that began with an image version. Table, markdown and HTML through the
//! shared [`layout`](super::layout) blocks; JSON with wire types of its own; and the drain list
//! alone, one host a line ([`render_ids`]).

use std::io::{self, Write};

use serde::{Deserialize, Serialize};

use super::layout::{self, Block, Line, Span, Table, text};
use super::{Format, RenderOptions};
use crate::analysis::Completeness;
use crate::analysis::hosts::{BySignature, HostsAnalysis, PoolKind};
use crate::model::{Repo, Timestamp};
use crate::share::percent_text;

/// What `report --hosts` renders: one repository's window.
#[derive(Debug, Clone)]
pub struct HostsReport {
    pub repo: Option<Repo>,
    pub since: Option<Timestamp>,
    pub until: Option<Timestamp>,
    pub hosts: HostsAnalysis,
    pub completeness: Completeness,
    /// The command that fills the gap ([`HostsReport::survey_gap`]), worded by the caller.
    pub fill_gap: Option<String>,
}

impl HostsReport {
    /// The survey that would fill this report's gap: its repository over its window.
    pub fn survey_gap(&self) -> crate::analysis::gap::SurveyGap {
        crate::analysis::gap::SurveyGap {
            repo: self.repo.clone(),
            since: self.since,
            until: self.until,
        }
    }
}

/// The JSON document (`schema` as every document's).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostsWire {
    pub schema: u32,
    pub repo: Option<String>,
    pub since: Option<String>,
    pub until: Option<String>,
    pub complete: bool,
    pub jobs: u64,
    /// Jobs whose runner is not known (stored before flakestat kept runners).
    pub jobs_unplaced: u64,
    /// The drain rule: Bonferroni-corrected p below `alpha` over `hosts_tested` hosts, and at
    /// least `min_failures` failed jobs.
    pub alpha: f64,
    pub hosts_tested: u64,
    pub min_failures: u64,
    pub pools: Vec<PoolWire>,
    pub drain: Vec<DrainWire>,
    pub image_onsets: Vec<ImageOnsetWire>,
    /// Signatures significantly confined to some pools, hosts, image versions or drivers (the
    /// matrix's rule).
    #[serde(default)]
    pub confined: Vec<ConfinementWire>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConfinementWire {
    pub signature: String,
    /// `pool`, `host`, `image` or `driver`.
    pub scope: String,
    pub values: Vec<String>,
    pub jobs_hit: u64,
    pub jobs_total: u64,
    /// Values that ran the same window and were never hit, and their jobs.
    pub never_values: Vec<String>,
    pub never_jobs_total: u64,
    pub chance: f64,
    /// Hit jobs whose same job at the same commit passed on another pool or host.
    pub works_elsewhere: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PoolWire {
    /// Always `pool`: what these figures are about.
    pub scope: String,
    pub pool: String,
    /// `github-hosted`, `self-hosted` or `ephemeral`.
    pub kind: String,
    pub jobs: u64,
    pub failed: u64,
    pub infrastructure: u64,
    pub rate: f64,
    pub by_signature: Vec<SignatureCountWire>,
    pub images: Vec<CountWire>,
    pub drivers: Vec<CountWire>,
    pub hosts: Vec<HostWire>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostWire {
    /// Always `host`.
    pub scope: String,
    pub host: String,
    pub machine: Option<String>,
    /// `null` where the host's passing jobs are unknown (an ephemeral pool's host, named only
    /// by failed jobs' logs).
    pub jobs: Option<u64>,
    pub failed: u64,
    pub infrastructure: u64,
    pub rate: Option<f64>,
    /// The failure rate of the pool's other hosts.
    pub rest_rate: Option<f64>,
    pub p_value: Option<f64>,
    pub p_adjusted: Option<f64>,
    pub drain: bool,
    pub by_signature: Vec<SignatureCountWire>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SignatureCountWire {
    /// `null`: no signature explains these failures.
    pub signature: Option<String>,
    pub jobs: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CountWire {
    pub value: String,
    pub failed_jobs: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DrainWire {
    pub pool: String,
    pub host: String,
    pub jobs: u64,
    pub failed: u64,
    pub rate: f64,
    pub pool_rate: f64,
    pub p_value: f64,
    pub p_adjusted: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImageOnsetWire {
    pub signature: String,
    pub image: String,
    pub version: String,
    pub hits: u64,
    pub before: Vec<String>,
    pub first_run: u64,
    pub first_at: String,
}

fn rfc(t: Timestamp) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

fn by_signature_wire(v: &BySignature) -> Vec<SignatureCountWire> {
    v.iter()
        .map(|(s, n)| SignatureCountWire {
            signature: s.as_ref().map(|s| s.0.clone()),
            jobs: *n,
        })
        .collect()
}

pub fn to_wire(r: &HostsReport) -> HostsWire {
    let h = &r.hosts;
    HostsWire {
        schema: super::SCHEMA_VERSION,
        repo: r.repo.as_ref().map(ToString::to_string),
        since: r.since.map(rfc),
        until: r.until.map(rfc),
        complete: r.completeness.is_complete(),
        jobs: h.jobs,
        jobs_unplaced: h.jobs_unplaced,
        alpha: h.alpha,
        hosts_tested: h.hosts_tested,
        min_failures: h.min_failures,
        pools: h
            .pools
            .iter()
            .map(|p| PoolWire {
                scope: "pool".into(),
                pool: p.pool.clone(),
                kind: p.kind.as_str().into(),
                jobs: p.jobs,
                failed: p.failed,
                infrastructure: p.infrastructure,
                rate: p.rate,
                by_signature: by_signature_wire(&p.by_signature),
                images: counts(&p.images),
                drivers: counts(&p.drivers),
                hosts: p
                    .hosts
                    .iter()
                    .map(|x| HostWire {
                        scope: "host".into(),
                        host: x.host.clone(),
                        machine: x.machine.clone(),
                        jobs: x.jobs,
                        failed: x.failed,
                        infrastructure: x.infrastructure,
                        rate: x.rate,
                        rest_rate: x.rest_rate,
                        p_value: x.p_value,
                        p_adjusted: x.p_adjusted,
                        drain: x.drain,
                        by_signature: by_signature_wire(&x.by_signature),
                    })
                    .collect(),
            })
            .collect(),
        drain: h.drain.iter().map(drain_wire).collect(),
        image_onsets: h.image_onsets.iter().map(onset_wire).collect(),
        confined: h
            .confined
            .iter()
            .map(|c| ConfinementWire {
                signature: c.signature.0.clone(),
                scope: scope_word(c.dimension).into(),
                values: c.finding.hit_values.clone(),
                jobs_hit: c.finding.jobs_hit,
                jobs_total: c.finding.jobs_total,
                never_values: c.finding.never_values.clone(),
                never_jobs_total: c.finding.never_jobs_total,
                chance: c.finding.chance,
                works_elsewhere: c.works_elsewhere,
            })
            .collect(),
    }
}

fn scope_word(s: crate::analysis::hosts::Scope) -> &'static str {
    s.as_str()
}

/// One image onset as JSON (the overview's too).
pub fn onset_wire(o: &crate::analysis::hosts::ImageOnset) -> ImageOnsetWire {
    ImageOnsetWire {
        signature: o.signature.0.clone(),
        image: o.image.clone(),
        version: o.version.clone(),
        hits: o.hits,
        before: o.before.clone(),
        first_run: o.first_run.0,
        first_at: rfc(o.first_at),
    }
}

/// The overview's short section on machines (one repository; nothing when the drain list is
/// empty and no failure began with an image version): the drain list's hosts with their
/// corrected p-values, and each failure that began with an image version.
pub fn overview_section(m: &crate::analysis::hosts::Machines) -> Vec<Block> {
    if m.is_empty() {
        return Vec::new();
    }
    let mut blocks = vec![Block::Heading(2, vec![text("Machines")])];
    let mut bullets: Vec<Line> = Vec::new();
    for d in &m.drain {
        bullets.push(vec![
            Span::Code(d.host.clone()),
            text(" of pool "),
            Span::Code(d.pool.clone()),
            text(" is on the drain list: "),
            text(format!(
                "{} of {} jobs failed ({}) against the pool's {}; p = {}, {} corrected over {} hosts",
                d.failed,
                d.jobs,
                percent(d.rate),
                percent(d.pool_rate),
                p_value(d.p_value),
                p_value(d.p_adjusted),
                m.hosts_tested
            )),
        ]);
    }
    for o in &m.image_onsets {
        bullets.push(vec![
            Span::Code(o.signature.0.clone()),
            text(format!(
                " began with {} {} ({} hits, all on it; earlier failures ran {})",
                o.image,
                o.version,
                o.hits,
                o.before.join(", ")
            )),
        ]);
    }
    blocks.push(Block::Paragraph(vec![text(
        "Where failures belong to a machine rather than the code (flakestat report --hosts has \
         every pool and host):",
    )]));
    blocks.push(Block::Bullets(bullets));
    blocks
}

/// One drain-list entry as JSON (the nightly's newly bad hosts too).
pub fn drain_wire(d: &crate::analysis::hosts::Drain) -> DrainWire {
    DrainWire {
        pool: d.pool.clone(),
        host: d.host.clone(),
        jobs: d.jobs,
        failed: d.failed,
        rate: d.rate,
        pool_rate: d.pool_rate,
        p_value: d.p_value,
        p_adjusted: d.p_adjusted,
    }
}

fn counts(v: &[(String, u64)]) -> Vec<CountWire> {
    v.iter()
        .map(|(value, n)| CountWire {
            value: value.clone(),
            failed_jobs: *n,
        })
        .collect()
}

/// `12.5%`: a host's rate and its pool's differ by tenths.
pub(crate) fn percent(rate: f64) -> String {
    percent_text(crate::share::rounded(rate), 1)
}

/// A p-value as people read it: `3.2e-9`, `0.041`.
pub fn p_value(p: f64) -> String {
    crate::analysis::hosts::p_words(p)
}

fn signatures_cell(v: &BySignature) -> Line {
    let parts: Vec<String> = v
        .iter()
        .map(|(s, n)| match s {
            Some(s) => format!("{s} ({n})"),
            None => format!("unclassified ({n})"),
        })
        .collect();
    vec![text(parts.join(", "))]
}

fn document(r: &HostsReport) -> Vec<Block> {
    let h = &r.hosts;
    let repo = r
        .repo
        .as_ref()
        .map_or_else(|| "the store".to_string(), ToString::to_string);
    let mut blocks: Vec<Block> = layout::incomplete_line(&r.completeness, r.fill_gap.as_deref())
        .into_iter()
        .collect();
    let unplaced = if h.jobs_unplaced > 0 {
        format!(
            "; {} ran on a runner flakestat does not know (stored before it kept runners)",
            h.jobs_unplaced
        )
    } else {
        String::new()
    };
    blocks.push(Block::Heading(
        1,
        vec![text(format!("Where jobs ran in {repo}"))],
    ));
    blocks.push(Block::Paragraph(vec![text(format!(
        "{} jobs ran in the window{}{}{unplaced}.",
        h.jobs,
        r.since
            .map_or_else(String::new, |s| format!(" from {}", layout::date(s))),
        r.until
            .map_or_else(String::new, |u| format!(" to {}", layout::date(u))),
    ))]));

    blocks.push(Block::Heading(2, vec![text("Drain list")]));
    blocks.push(Block::Paragraph(vec![text(if h.hosts_tested == 0 {
        "No host could be tested: no pool here has hosts whose every job is known (an \
         ephemeral pool's machine is known only where a log names it)."
            .to_string()
    } else {
        format!(
            "A host is listed when it failed at least {} jobs and a one-sided Fisher's exact \
             test against the rest of its pool gives p × {} (the hosts tested: Bonferroni) \
             below {}.",
            h.min_failures, h.hosts_tested, h.alpha
        )
    })]));
    if h.drain.is_empty() {
        if h.hosts_tested > 0 {
            blocks.push(Block::Paragraph(vec![text(
                "No host is significantly worse than its pool.",
            )]));
        }
    } else {
        blocks.push(Block::Table(Table {
            headers: vec![
                "Host",
                "Pool",
                "Jobs",
                "Failed",
                "Rate",
                "Pool rate",
                "p",
                "p adjusted",
            ],
            numeric: vec![false, false, true, true, true, true, true, true],
            rows: h
                .drain
                .iter()
                .map(|d| {
                    vec![
                        vec![Span::Code(d.host.clone())],
                        vec![Span::Code(d.pool.clone())],
                        vec![text(d.jobs.to_string())],
                        vec![text(d.failed.to_string())],
                        vec![text(percent(d.rate))],
                        vec![text(percent(d.pool_rate))],
                        vec![text(p_value(d.p_value))],
                        vec![text(p_value(d.p_adjusted))],
                    ]
                })
                .collect(),
        }));
    }

    blocks.push(Block::Heading(2, vec![text("Pools")]));
    blocks.push(Block::Table(Table {
        headers: vec![
            "Pool",
            "Kind",
            "Jobs",
            "Failed",
            "Infrastructure",
            "Rate",
            "Hosts",
            "Signatures",
        ],
        numeric: vec![false, false, true, true, true, true, true, false],
        rows: h
            .pools
            .iter()
            .map(|p| {
                vec![
                    vec![Span::Code(p.pool.clone())],
                    vec![text(p.kind.as_str())],
                    vec![text(p.jobs.to_string())],
                    vec![text(p.failed.to_string())],
                    vec![text(p.infrastructure.to_string())],
                    vec![text(percent(p.rate))],
                    vec![text(p.hosts.len().to_string())],
                    signatures_cell(&p.by_signature),
                ]
            })
            .collect(),
    }));

    for p in h.pools.iter().filter(|p| !p.hosts.is_empty()) {
        blocks.push(Block::Heading(
            3,
            vec![text("Hosts of pool "), Span::Code(p.pool.clone())],
        ));
        if p.kind == PoolKind::Ephemeral {
            blocks.push(Block::Paragraph(vec![text(
                "One runner per job: a host is known only where a failed job's log names it, so \
                 these are failure counts, not rates.",
            )]));
        }
        blocks.push(Block::Table(Table {
            headers: vec![
                "Host",
                "Machine",
                "Jobs",
                "Failed",
                "Infrastructure",
                "Rate",
                "Rest of pool",
                "p",
                "Signatures",
            ],
            numeric: vec![false, false, true, true, true, true, true, true, false],
            rows: p
                .hosts
                .iter()
                .map(|x| {
                    let mut host = vec![Span::Code(x.host.clone())];
                    if x.drain {
                        host.push(text(" "));
                        host.push(Span::Strong("drain".into()));
                    }
                    vec![
                        host,
                        vec![text(x.machine.clone().unwrap_or_default())],
                        vec![text(x.jobs.map_or_else(String::new, |n| n.to_string()))],
                        vec![text(x.failed.to_string())],
                        vec![text(x.infrastructure.to_string())],
                        vec![text(x.rate.map_or_else(String::new, percent))],
                        vec![text(x.rest_rate.map_or_else(String::new, percent))],
                        vec![text(x.p_value.map_or_else(String::new, p_value))],
                        signatures_cell(&x.by_signature),
                    ]
                })
                .collect(),
        }));
    }

    let versions: Vec<Line> = h
        .pools
        .iter()
        .flat_map(|p| {
            let what = |kind: &str, v: &[(String, u64)]| {
                (!v.is_empty()).then(|| {
                    let parts: Vec<String> = v.iter().map(|(x, n)| format!("{x} ({n})")).collect();
                    vec![
                        Span::Code(p.pool.clone()),
                        text(format!(": {kind} {}", parts.join(", "))),
                    ]
                })
            };
            [
                what("images in failed jobs' logs", &p.images),
                what("drivers in failed jobs' logs", &p.drivers),
            ]
        })
        .flatten()
        .collect();
    if !versions.is_empty() {
        blocks.push(Block::Heading(2, vec![text("Images and drivers")]));
        blocks.push(Block::Bullets(versions));
    }
    if !h.confined.is_empty() {
        blocks.push(Block::Heading(
            2,
            vec![text("Signatures confined to a pool, host, image or driver")],
        ));
        blocks.push(Block::Bullets(
            h.confined
                .iter()
                .map(|c| {
                    let f = &c.finding;
                    vec![
                        Span::Code(c.signature.0.clone()),
                        text(format!(
                            ": only on {} {} ({} of {} jobs), never on the other {} ({} jobs; by \
                             chance: {}); works elsewhere (same job, same commit, passed on \
                             another {}): {}",
                            scope_word(c.dimension),
                            f.hit_values.join(", "),
                            f.jobs_hit,
                            f.jobs_total,
                            f.never_values.len(),
                            f.never_jobs_total,
                            p_value(f.chance),
                            scope_word(c.dimension),
                            c.works_elsewhere
                        )),
                    ]
                })
                .collect(),
        ));
    }
    if !h.image_onsets.is_empty() {
        blocks.push(Block::Heading(
            2,
            vec![text("Failures that began with an image version")],
        ));
        blocks.push(Block::Bullets(
            h.image_onsets
                .iter()
                .map(|o| {
                    vec![
                        Span::Code(o.signature.0.clone()),
                        text(format!(
                            ": began with {} {} ({} hits, all on it; first in run {} on {}; \
                             earlier failures ran {})",
                            o.image,
                            o.version,
                            o.hits,
                            o.first_run,
                            layout::date(o.first_at),
                            o.before.join(", ")
                        )),
                    ]
                })
                .collect(),
        ));
    }
    blocks
}

/// Renders `r` in `format`.
pub fn render(
    r: &HostsReport,
    format: Format,
    options: &RenderOptions,
    out: &mut dyn Write,
) -> io::Result<()> {
    match format {
        Format::Json => super::sanitize::write_json(out, &to_wire(r)),
        Format::Markdown => super::markdown::render(&document(r), out),
        Format::Table => super::table::render(&document(r), options, out),
        Format::Html => {
            let repo = r
                .repo
                .as_ref()
                .map_or_else(|| "the store".to_string(), ToString::to_string);
            super::html::render(
                &format!("Where jobs ran in {repo} (flakestat)"),
                &document(r),
                out,
            )
        }
    }
}

/// The drain list alone: one host a line, most significant first.
pub fn render_ids(r: &HostsReport, out: &mut dyn Write) -> io::Result<()> {
    for host in r.hosts.drain_hosts() {
        writeln!(out, "{}", super::sanitize::terminal_line(host))?;
    }
    Ok(())
}
