//! The most telling error lines of a log: what a person reads first when no signature matched.
//!
//! Every normalized line is ranked by substrings (so the matcher can find candidates with the same
//! literal search it uses for signatures): GitHub `##[error]` annotations first, then failures
//! and crashes (`FAILED`, `Traceback`, `Fatal`, segfaults, panics), then error messages
//! (`Error:`, `Error `, `error:`, `ERROR`), last exit codes; the `Process completed with exit
//! code N.` boilerplate only shows when nothing else does. Per rank the last
//! [`MAX_ERROR_LINES`] distinct lines are kept (failures are reported near the end of a log), so
//! memory stays bounded whatever the log size.

use std::collections::VecDeque;

use crate::model::LogLine;

use super::normalize::is_exit_code_boilerplate;

/// Most error lines reported per log.
pub const MAX_ERROR_LINES: usize = 10;

/// Substrings that make a line a candidate; the union of all ranks' markers.
pub(crate) const MARKERS: &[&str] = &[
    "##[error]",
    "FAILED",
    "Traceback",
    "Fatal",
    "fatal:",
    "FATAL",
    "Segmentation fault",
    "panicked at",
    "core dumped",
    "Error:",
    "Error ",
    "error:",
    "ERROR",
    "error[",
    "Exception:",
    "exit code",
    "exit status",
    "exited with",
];

const FAILURE: &[&str] = &[
    "FAILED",
    "Traceback",
    "Fatal",
    "fatal:",
    "FATAL",
    "Segmentation fault",
    "panicked at",
    "core dumped",
];
const ERROR: &[&str] = &[
    "Error:",
    "Error ",
    "error:",
    "ERROR",
    "error[",
    "Exception:",
];
const EXIT: &[&str] = &["exit code", "exit status", "exited with"];

const RANKS: usize = 4;

/// The rank of a normalized line (0 is most telling), or `None` for an ordinary line.
pub fn rank(text: &str) -> Option<usize> {
    let has = |set: &[&str]| set.iter().any(|m| text.contains(m));
    if is_exit_code_boilerplate(text) {
        Some(3)
    } else if text.starts_with("##[error]") {
        Some(0)
    } else if has(FAILURE) {
        Some(1)
    } else if has(ERROR) {
        Some(2)
    } else if has(EXIT) {
        Some(3)
    } else {
        None
    }
}

/// Collects the telling lines of one log as it streams by.
#[derive(Debug, Default)]
pub(crate) struct TellingLines {
    ranks: [VecDeque<LogLine>; RANKS],
}

impl TellingLines {
    /// Considers one line; `line` is its 1-based number.
    pub fn consider(&mut self, line: u64, text: &str) {
        let Some(rank) = rank(text) else { return };
        let keep = &mut self.ranks[rank];
        if keep.iter().any(|l| l.text == text) {
            return;
        }
        if keep.len() == MAX_ERROR_LINES {
            keep.pop_front();
        }
        keep.push_back(LogLine {
            line,
            text: super::bounded_text(text),
        });
    }

    /// The most telling lines first: by rank, then in log order; at most [`MAX_ERROR_LINES`].
    /// The exit-code boilerplate only when there is nothing else.
    pub fn finish(self) -> Vec<LogLine> {
        let lines: Vec<LogLine> = self.ranks.into_iter().flatten().collect();
        let anything_else = lines.iter().any(|l| !is_exit_code_boilerplate(&l.text));
        lines
            .into_iter()
            .filter(|l| !anything_else || !is_exit_code_boilerplate(&l.text))
            .take(MAX_ERROR_LINES)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks() {
        assert_eq!(rank("##[error]boom"), Some(0));
        assert_eq!(rank("FAILED tests/x.py::test_y - AssertionError"), Some(1));
        assert_eq!(rank("RuntimeError: CUDA error"), Some(2));
        assert_eq!(
            rank("##[error]Process completed with exit code 1."),
            Some(3)
        );
        assert_eq!(rank("all good"), None);
    }

    #[test]
    fn every_rank_marker_is_a_candidate_marker() {
        for m in FAILURE.iter().chain(ERROR).chain(EXIT) {
            assert!(MARKERS.contains(m), "{m} missing from MARKERS");
        }
    }

    #[test]
    fn boilerplate_only_when_nothing_better() {
        let mut t = TellingLines::default();
        t.consider(9, "##[error]Process completed with exit code 1.");
        t.consider(3, "E   AssertionError: nope");
        t.consider(5, "##[error]real annotation");
        let lines: Vec<u64> = t.finish().iter().map(|l| l.line).collect();
        assert_eq!(lines, vec![5, 3]);
        let mut only = TellingLines::default();
        only.consider(9, "##[error]Process completed with exit code 1.");
        only.consider(10, "##[error]Process completed with exit code 2.");
        let lines: Vec<u64> = only.finish().iter().map(|l| l.line).collect();
        assert_eq!(lines, vec![9, 10]);
    }

    #[test]
    fn bounded_and_deduplicated() {
        let mut t = TellingLines::default();
        for i in 0..100 {
            t.consider(i, &format!("ERROR number {}", i % 30));
        }
        let out = t.finish();
        assert_eq!(out.len(), MAX_ERROR_LINES);
        let mut texts: Vec<&str> = out.iter().map(|l| l.text.as_str()).collect();
        texts.dedup();
        assert_eq!(texts.len(), MAX_ERROR_LINES);
    }
}
