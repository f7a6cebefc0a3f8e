//! What changed in CI: a period (say the last 24 hours) against a baseline before it (say the 14
//! days before), per signature, from counts.
//!
//! - **new**: hits in the period, none in the baseline.
//! - **rising**: the period's hits are improbable under the baseline rate: with the baseline rate
//!   `p0 = (h0 + ½) / (n0 + 1)` (smoothed so that a baseline of zero hits is not a rate of zero),
//!   `P(X ≥ h1)` for `X ~ Binomial(n1, p0)` is below [`RISING_P`], and at least [`MIN_RISING_HITS`]
//!   runs hit. Reported with both counts and that probability, never a percentage alone.
//! - **fading**: no hit in the period although the baseline rate predicted at least
//!   [`MIN_EXPECTED_FADING`] hits (so `P(0 hits)` is small).
//! - **new unclassified**: unclassified failure groups seen in the period and not in the baseline.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::{RunId, SignatureId};

/// A period hit count is "rising" when its probability under the baseline rate is below this.
pub const RISING_P: f64 = 0.01;
/// Fewer period hits than this are never "rising".
pub const MIN_RISING_HITS: u64 = 2;
/// A signature is "fading" when the baseline rate predicted at least this many period hits.
pub const MIN_EXPECTED_FADING: f64 = 3.0;

/// Runs hit out of runs, for one signature in one period.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Count {
    pub hits: u64,
    pub runs: u64,
}

impl Count {
    pub fn rate(self) -> f64 {
        if self.runs == 0 {
            0.0
        } else {
            self.hits as f64 / self.runs as f64
        }
    }
}

/// The kind of change found for a signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ChangeKind {
    New,
    Rising,
    Fading,
}

/// One signature's change.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub signature: SignatureId,
    pub kind: ChangeKind,
    pub period: Count,
    pub baseline: Count,
    /// For rising: `P(X ≥ period.hits)` under the baseline rate; for fading: `P(0 hits)`.
    pub probability: f64,
}

/// Compares each signature's period count with its baseline count. Signatures in neither are
/// skipped. Sorted by kind (new, rising, fading), then by period hits descending, then id.
pub fn compare(
    period: &BTreeMap<SignatureId, Count>,
    baseline: &BTreeMap<SignatureId, Count>,
    period_runs: u64,
    baseline_runs: u64,
) -> Vec<Change> {
    let ids: BTreeSet<&SignatureId> = period.keys().chain(baseline.keys()).collect();
    let mut changes = Vec::new();
    for id in ids {
        let p = period.get(id).copied().unwrap_or(Count {
            hits: 0,
            runs: period_runs,
        });
        let b = baseline.get(id).copied().unwrap_or(Count {
            hits: 0,
            runs: baseline_runs,
        });
        let p0 = (b.hits as f64 + 0.5) / (b.runs as f64 + 1.0);
        let change = |kind, probability| Change {
            signature: id.clone(),
            kind,
            period: p,
            baseline: b,
            probability,
        };
        if p.hits > 0 && b.hits == 0 {
            changes.push(change(ChangeKind::New, binomial_tail(p.runs, p.hits, p0)));
        } else if p.hits >= MIN_RISING_HITS {
            let tail = binomial_tail(p.runs, p.hits, p0);
            if tail < RISING_P && p.rate() > b.rate() {
                changes.push(change(ChangeKind::Rising, tail));
            }
        } else if p.hits == 0 && b.hits > 0 && p.runs as f64 * b.rate() >= MIN_EXPECTED_FADING {
            changes.push(change(
                ChangeKind::Fading,
                (1.0 - b.rate()).powi(p.runs as i32),
            ));
        }
    }
    changes.sort_by(|a, b| {
        a.kind
            .cmp(&b.kind)
            .then(b.period.hits.cmp(&a.period.hits))
            .then(a.signature.cmp(&b.signature))
    });
    changes
}

/// `P(X ≥ k)` for `X ~ Binomial(n, p)`, summed in log space so large `n` does not overflow.
pub fn binomial_tail(n: u64, k: u64, p: f64) -> f64 {
    if k == 0 {
        return 1.0;
    }
    if k > n || p <= 0.0 {
        return 0.0;
    }
    if p >= 1.0 {
        return 1.0;
    }
    let (lp, lq) = (p.ln(), (1.0 - p).ln());
    let mut log_choose = (0..k)
        .map(|i| ((n - i) as f64 / (i + 1) as f64).ln())
        .sum::<f64>();
    let mut total = 0.0;
    for i in k..=n {
        total += (log_choose + i as f64 * lp + (n - i) as f64 * lq).exp();
        if i < n {
            log_choose += ((n - i) as f64 / (i + 1) as f64).ln();
        }
    }
    total.min(1.0)
}

/// Runs in which each signature hit, for the runs in `runs` (used by callers that count periods).
pub fn count_hits(
    runs: &BTreeSet<RunId>,
    hits: &BTreeMap<SignatureId, BTreeSet<RunId>>,
) -> BTreeMap<SignatureId, Count> {
    hits.iter()
        .map(|(id, hit_runs)| {
            (
                id.clone(),
                Count {
                    hits: hit_runs.intersection(runs).count() as u64,
                    runs: runs.len() as u64,
                },
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(s: &str) -> SignatureId {
        SignatureId(s.to_string())
    }

    fn counts(items: &[(&str, u64, u64)]) -> BTreeMap<SignatureId, Count> {
        items
            .iter()
            .map(|&(s, hits, runs)| (id(s), Count { hits, runs }))
            .collect()
    }

    #[test]
    fn binomial_tail_matches_closed_forms() {
        assert!((binomial_tail(10, 1, 0.1) - (1.0 - 0.9f64.powi(10))).abs() < 1e-12);
        assert!((binomial_tail(3, 3, 0.5) - 0.125).abs() < 1e-12);
        assert_eq!(binomial_tail(5, 0, 0.3), 1.0);
        assert_eq!(binomial_tail(5, 6, 0.3), 0.0);
        // Large n stays finite and in range.
        let t = binomial_tail(5000, 40, 0.005);
        assert!((t - 0.003_365_174_504_166).abs() < 1e-12, "{t}"); // reference: exact sum in Python
    }

    #[test]
    fn new_rising_fading_and_steady_are_told_apart() {
        let period = counts(&[
            ("brand-new", 2, 20),
            ("rising", 6, 20),
            ("steady", 1, 20),
            ("fading", 0, 20),
        ]);
        let baseline = counts(&[
            ("rising", 3, 280),
            ("steady", 14, 280),
            ("fading", 60, 280),
            ("gone-quiet-rare", 1, 280),
        ]);
        let changes = compare(&period, &baseline, 20, 280);
        let got: Vec<(&str, ChangeKind)> = changes
            .iter()
            .map(|c| (c.signature.0.as_str(), c.kind))
            .collect();
        assert_eq!(
            got,
            vec![
                ("brand-new", ChangeKind::New),
                ("rising", ChangeKind::Rising),
                ("fading", ChangeKind::Fading),
            ]
        );
        let rising = &changes[1];
        assert_eq!(rising.period, Count { hits: 6, runs: 20 });
        assert_eq!(rising.baseline, Count { hits: 3, runs: 280 });
        assert!(rising.probability < RISING_P);
    }

    #[test]
    fn one_unlucky_night_is_not_rising() {
        // 2 of 20 against a baseline of 5%: P(X ≥ 2) ≈ 0.26.
        let changes = compare(
            &counts(&[("x", 2, 20)]),
            &counts(&[("x", 14, 280)]),
            20,
            280,
        );
        assert!(changes.is_empty(), "{changes:?}");
    }

    #[test]
    fn count_hits_intersects_with_the_period() {
        let runs: BTreeSet<RunId> = [1, 2, 3].map(RunId).into();
        let hits = BTreeMap::from([(id("a"), [2, 3, 9].map(RunId).into())]);
        assert_eq!(
            count_hits(&runs, &hits)[&id("a")],
            Count { hits: 2, runs: 3 }
        );
    }
}
