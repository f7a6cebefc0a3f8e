//! The most telling error lines of a log: what a person reads first when no signature matched.
//!
//! Candidate lines hold one of [`MARKERS`] (so the matcher finds them with the same literal
//! search it uses for signatures); each is ranked by the first failure [`Form`] of the table in
//! [`forms`](super::forms) that recognises it: failures (a failed test, a panic, a compiler
//! error, the final exception) before summaries (`BUILD FAILED`, `Traceback …`), before generic
//! error words, before exit codes. Per form only a few lines are kept — a compiler's first
//! errors, a test run's last failures — so memory stays bounded whatever the log size, and one
//! form repeated a thousand times cannot crowd out the summary that names it.
//!
//! What is not output is ignored: the script a `##[group]Run …` header echoes (with its
//! `shell:`, `env:` and `with:` blocks, up to `##[endgroup]`), `set -x` echo (`+ cmd`),
//! `##[command]` echo, warnings and notices. The `Process completed with exit code N.`
//! boilerplate (and its kin in [`FORMS`]) only shows when nothing else does.

use std::collections::VecDeque;
use std::sync::LazyLock;

use regex::RegexSet;

use crate::model::LogLine;

pub(crate) use super::forms::MARKERS;
use super::forms::{FORMS, Form, Keep, Tier};

/// Most error lines reported per log.
pub const MAX_ERROR_LINES: usize = 10;

/// A `##[group]Run` header longer than this many lines is taken to have lost its
/// `##[endgroup]`: what follows is output again.
const MAX_HEADER_LINES: u64 = 2000;

static SET: LazyLock<RegexSet> = LazyLock::new(|| {
    RegexSet::new(FORMS.iter().map(|f| f.pattern)).expect("the forms table compiles (tested)")
});

/// The form that recognises a normalized line: its index in [`FORMS`].
pub fn form_of(text: &str) -> Option<usize> {
    SET.matches(text).iter().next()
}

/// Whether a line is never output worth reporting (echo of a command, a warning).
fn is_echo(text: &str) -> bool {
    let plus = text.bytes().take_while(|&b| b == b'+').count();
    (plus > 0 && text.as_bytes().get(plus) == Some(&b' '))
        || text.starts_with("##[command]")
        || text.starts_with("##[warning]")
        || text.starts_with("##[notice]")
        || text.starts_with("##[debug]")
}

/// The rank of a normalized line (0 is most telling: a [`Tier`]), or `None` for an ordinary
/// line. Context (a step header) is not considered here; see [`TellingLines`].
pub fn rank(text: &str) -> Option<usize> {
    if is_echo(text) {
        return None;
    }
    form_of(text).map(|i| FORMS[i].tier as usize)
}

/// Collects the telling lines of one log as it streams by.
#[derive(Debug, Default)]
pub(crate) struct TellingLines {
    /// Per form (index in FORMS), its kept lines in log order; allocated on first use.
    kept: Vec<VecDeque<LogLine>>,
    /// Inside a `##[group]Run` header since this line.
    header: Option<u64>,
}

impl TellingLines {
    /// Considers one line; `line` is its 1-based number. Lines without a marker need not be
    /// passed (they are never telling).
    pub fn consider(&mut self, line: u64, text: &str) {
        if let Some(title) = text.strip_prefix("##[group]") {
            self.header = title.starts_with("Run ").then_some(line);
            return;
        }
        if text.starts_with("##[endgroup]") {
            self.header = None;
            return;
        }
        if let Some(start) = self.header {
            if line.saturating_sub(start) <= MAX_HEADER_LINES {
                return;
            }
            self.header = None;
        }
        if is_echo(text) {
            return;
        }
        let Some(i) = form_of(text) else { return };
        // The fast path only shows lines holding a marker; the reference shows every line.
        if !MARKERS.iter().any(|m| text.contains(m)) {
            return;
        }
        if self.kept.is_empty() {
            self.kept = (0..FORMS.len()).map(|_| VecDeque::new()).collect();
        }
        let keep = &mut self.kept[i];
        if keep.iter().any(|l| l.text == text) {
            return;
        }
        match FORMS[i].keep {
            Keep::First(n) => {
                if keep.len() >= n {
                    return;
                }
            }
            Keep::Last(n) => {
                if keep.len() >= n {
                    keep.pop_front();
                }
            }
        }
        keep.push_back(LogLine {
            line,
            text: super::bounded_text(text),
        });
    }

    /// The most telling lines first: by tier, then by the form's place in the table, then in
    /// log order; at most [`MAX_ERROR_LINES`]. Boilerplate only when there is nothing else.
    pub fn finish(self) -> Vec<LogLine> {
        let mut lines: Vec<(Tier, usize, LogLine)> = self
            .kept
            .into_iter()
            .enumerate()
            .flat_map(|(i, kept)| kept.into_iter().map(move |l| (FORMS[i].tier, i, l)))
            .collect();
        let anything_else = lines.iter().any(|(_, i, _)| !FORMS[*i].boilerplate);
        if anything_else {
            lines.retain(|(_, i, _)| !FORMS[*i].boilerplate);
        }
        lines.sort_by_key(|(tier, form, l)| (*tier, *form, l.line));
        lines
            .into_iter()
            .map(|(_, _, l)| l)
            .take(MAX_ERROR_LINES)
            .collect()
    }
}

/// The form a line was recognised as, for tests and `signatures` tooling.
pub fn form(text: &str) -> Option<&'static Form> {
    form_of(text).map(|i| &FORMS[i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks() {
        assert_eq!(rank("##[error]boom"), Some(0));
        assert_eq!(rank("FAILED tests/x.py::test_y - AssertionError"), Some(0));
        assert_eq!(rank("RuntimeError: CUDA error"), Some(0));
        assert_eq!(rank("Traceback (most recent call last):"), Some(1));
        assert_eq!(rank("BUILD FAILED in 33s"), Some(1));
        assert_eq!(rank("something ERROR here"), Some(2));
        assert_eq!(
            rank("##[error]Process completed with exit code 1."),
            Some(3)
        );
        assert_eq!(rank("all good"), None);
        assert_eq!(rank("+ echo ERROR: not output"), None);
        assert_eq!(rank("##[warning]Failed to save cache: Error: x"), None);
    }

    /// Every form's example (a real line) is recognised as that very form: the table is the
    /// specification, tested line by line.
    #[test]
    fn every_form_recognises_its_real_line() {
        for (i, f) in FORMS.iter().enumerate() {
            let got = form_of(f.example);
            assert_eq!(
                got,
                Some(i),
                "{} {:?}: {:?} was taken for {:?}",
                f.ecosystem,
                f.name,
                f.example,
                got.map(|g| (FORMS[g].ecosystem, FORMS[g].name))
            );
        }
    }

    #[test]
    fn run_header_and_set_x_echo_are_not_output() {
        let mut t = TellingLines::default();
        t.consider(1, "##[group]Run echo \"ERROR: deploy failed\"");
        t.consider(2, "echo \"ERROR: deploy failed\"");
        t.consider(3, "  continue-on-error: false");
        t.consider(4, "  CONTINUE_THROUGH_ERROR: False");
        t.consider(5, "##[endgroup]");
        t.consider(6, "+ python -c 'raise SystemExit(\"Error: no\")'");
        t.consider(7, "ModuleNotFoundError: No module named 'numpy'");
        t.consider(8, "##[error]Process completed with exit code 1.");
        let lines: Vec<u64> = t.finish().iter().map(|l| l.line).collect();
        assert_eq!(lines, vec![7]);
        // Other groups hold output.
        let mut g = TellingLines::default();
        g.consider(1, "##[group]Test results");
        g.consider(2, "--- FAIL: TestX (2.93s)");
        assert_eq!(g.finish().len(), 1);
    }

    #[test]
    fn final_exception_over_traceback_first_compiler_error_over_summary() {
        let mut t = TellingLines::default();
        t.consider(1, "Traceback (most recent call last):");
        t.consider(9, "ValueError: bad shape");
        let lines: Vec<u64> = t.finish().iter().map(|l| l.line).collect();
        assert_eq!(lines, vec![9, 1]);
        let mut c = TellingLines::default();
        for i in 0..50 {
            c.consider(
                10 + i,
                &format!("error[E0425]: cannot find value `x{i}` in this scope"),
            );
        }
        c.consider(
            99,
            "error: could not compile `app` (lib) due to 50 previous errors",
        );
        let lines: Vec<u64> = c.finish().iter().map(|l| l.line).collect();
        assert_eq!(lines, vec![10, 11, 12, 99]);
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
