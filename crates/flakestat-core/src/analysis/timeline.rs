//! A signature's timeline: per day of the survey window, the runs of its workflows (related PRs
//! left out) and how many of them it hit, with the merges the bisection suspects, the impact
//! window and the first hit as markers. Days are UTC calendar days.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{NaiveDate, TimeDelta};
use serde::Serialize;

use super::bisect::{Bisection, Verdict};
use crate::model::{Run, RunId, Timestamp};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Timeline {
    /// Every day of the window, oldest first, days without runs included.
    pub days: Vec<TimelineDay>,
    /// Oldest first.
    pub markers: Vec<Marker>,
    /// The impact window, when something was hit.
    pub impact_start: Option<Timestamp>,
    pub impact_end: Option<Timestamp>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TimelineDay {
    pub day: NaiveDate,
    pub runs: u64,
    pub runs_hit: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MarkerKind {
    /// The merge the bisection placed the flake on.
    Merge,
    /// Another suspect merge.
    Suspect,
    /// The first counted hit's run.
    FirstHit,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Marker {
    pub kind: MarkerKind,
    pub at: Timestamp,
    /// `#2371`, a short sha, or the run id of the first hit.
    pub label: String,
}

/// Suspects shown beyond the placed merge.
const MAX_SUSPECTS: usize = 3;

/// `runs`: the runs the impact analysis counts, any time; only those created in
/// `[since, until)` are drawn.
pub fn timeline(
    runs: &[&Run],
    hit_runs: &BTreeSet<RunId>,
    since: Option<Timestamp>,
    until: Option<Timestamp>,
    bisection: Option<&Bisection>,
    first_hit: Option<(RunId, Timestamp)>,
    impact: Option<(Timestamp, Timestamp)>,
) -> Timeline {
    let inside = |t: Timestamp| since.is_none_or(|s| t >= s) && until.is_none_or(|u| t < u);
    let mut per_day: BTreeMap<NaiveDate, (u64, u64)> = BTreeMap::new();
    for run in runs.iter().filter(|r| inside(r.created_at)) {
        let day = per_day.entry(run.created_at.date_naive()).or_default();
        day.0 += 1;
        day.1 += u64::from(hit_runs.contains(&run.id));
    }
    let first = since
        .map(|s| s.date_naive())
        .or_else(|| per_day.keys().next().copied());
    let last = until
        .map(|u| (u - TimeDelta::seconds(1)).date_naive())
        .or_else(|| per_day.keys().next_back().copied());
    let mut days = Vec::new();
    if let (Some(first), Some(last)) = (first, last) {
        let mut d = first;
        while d <= last {
            let (runs, runs_hit) = per_day.get(&d).copied().unwrap_or_default();
            days.push(TimelineDay {
                day: d,
                runs,
                runs_hit,
            });
            d = d.succ_opt().unwrap_or(d + TimeDelta::days(1));
        }
    }

    let mut markers = Vec::new();
    if let Some(b) = bisection {
        let placed = matches!(b.verdict, Verdict::Placed { .. });
        for (i, s) in b.suspects.iter().take(MAX_SUSPECTS + 1).enumerate() {
            if !inside(s.merged_at) {
                continue;
            }
            markers.push(Marker {
                kind: if i == 0 && placed {
                    MarkerKind::Merge
                } else {
                    MarkerKind::Suspect
                },
                at: s.merged_at,
                label: s.label(),
            });
        }
    }
    if let Some((run, at)) = first_hit {
        markers.push(Marker {
            kind: MarkerKind::FirstHit,
            at,
            label: format!("run {run}"),
        });
    }
    markers.sort_by_key(|m| (m.at, m.kind));
    Timeline {
        days,
        markers,
        impact_start: impact.map(|i| i.0),
        impact_end: impact.map(|i| i.1),
    }
}
