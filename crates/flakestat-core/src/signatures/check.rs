//! `flakestat signatures check`: run every signature's examples through the real matcher
//! (normalization included) and find pairs of signatures that match the same example line.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::SignatureSet;
use crate::model::SignatureId;

/// An example that did not behave as its file says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExampleFailure {
    pub signature: SignatureId,
    pub file: PathBuf,
    /// `examples.match` or `examples.no_match`.
    pub key: &'static str,
    /// 0-based index in that list.
    pub index: usize,
    pub example: String,
    pub reason: String,
}

/// Two signatures that both match one example line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overlap {
    pub first: SignatureId,
    pub second: SignatureId,
    /// The example (of `owner`) both match.
    pub example: String,
    pub owner: SignatureId,
}

/// What `check` found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckReport {
    pub signatures: usize,
    pub examples: usize,
    pub failures: Vec<ExampleFailure>,
    pub overlaps: Vec<Overlap>,
    /// Signatures with no `examples.match` line: nothing shows they match what they should.
    pub without_examples: Vec<SignatureId>,
}

impl CheckReport {
    pub fn is_ok(&self) -> bool {
        self.failures.is_empty() && self.overlaps.is_empty()
    }
}

/// Runs every example of every signature of `set`.
pub fn check(set: &SignatureSet) -> CheckReport {
    let mut report = CheckReport {
        signatures: set.specs().len(),
        ..CheckReport::default()
    };
    let mut overlaps: BTreeMap<(SignatureId, SignatureId), Overlap> = BTreeMap::new();
    for spec in set.specs() {
        if spec.examples.matches.is_empty() {
            report.without_examples.push(spec.id.clone());
        }
        let lists = [
            ("examples.match", &spec.examples.matches, true),
            ("examples.no_match", &spec.examples.no_match, false),
        ];
        for (key, list, want) in lists {
            for (index, example) in list.iter().enumerate() {
                report.examples += 1;
                let fail = |reason: &str| ExampleFailure {
                    signature: spec.id.clone(),
                    file: spec.source.clone(),
                    key,
                    index,
                    example: example.clone(),
                    reason: reason.to_string(),
                };
                if example.contains('\n') {
                    report
                        .failures
                        .push(fail("an example is one log line; split it into several"));
                    continue;
                }
                let matched: Vec<SignatureId> = set
                    .classify(example.as_bytes())
                    .matches
                    .into_iter()
                    .map(|m| m.signature)
                    .collect();
                let hit = matched.contains(&spec.id);
                if hit != want {
                    report.failures.push(fail(if want {
                        "the pattern does not match it"
                    } else {
                        "the pattern matches it"
                    }));
                }
                if want {
                    for (i, a) in matched.iter().enumerate() {
                        for b in &matched[i + 1..] {
                            overlaps.entry((a.clone(), b.clone())).or_insert(Overlap {
                                first: a.clone(),
                                second: b.clone(),
                                example: example.clone(),
                                owner: spec.id.clone(),
                            });
                        }
                    }
                }
            }
        }
    }
    report.overlaps = overlaps.into_values().collect();
    report
}
