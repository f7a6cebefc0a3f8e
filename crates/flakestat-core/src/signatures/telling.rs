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
//!
//! A multi-line `##[error]` annotation is written once by the runner: its first line carries the
//! timestamp, the lines after it none. Those continuation lines belong to the annotation (often
//! they say what failed: `##[error]Error: Command failed` then the command's own message), so
//! they are attached to it, one telling line whose text holds them after newlines, and never
//! ranked on their own. What they name counts: an annotation naming a test, a file:line or a
//! timeout, on any of its lines, ranks with the test runner's own FAIL lines (the form
//! [`NAMED_ANNOTATION`] in the table's test failures), above crashes and above an annotation that
//! names nothing; the annotation's text is matched once, when it closes, so the log is still read
//! in one pass. A log without timestamps cannot show where an annotation ends: there,
//! an annotation is its first line, as before.

use std::collections::VecDeque;
use std::sync::{LazyLock, OnceLock};

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};
use regex::Regex;

use crate::model::LogLine;

pub(crate) use super::forms::MARKERS;
use super::forms::{ANNOTATION, FORMS, Form, Keep, NAMED_ANNOTATION, Tier};
use super::literals::required_literals;

/// Most error lines reported per log.
pub const MAX_ERROR_LINES: usize = 10;

/// A `##[group]Run` header longer than this many lines is taken to have lost its
/// `##[endgroup]`: what follows is output again.
const MAX_HEADER_LINES: u64 = 2000;

/// Most continuation lines attached to one `##[error]` annotation (the text is bounded too).
pub const MAX_CONTINUATION_LINES: usize = 20;

/// The forms compiled for [`form_of`]: each form's regex, and a literal prefilter saying which
/// forms a line could match at all.
///
/// One `RegexSet` over the whole table was the obvious way, and the slowest: it runs every
/// form on every candidate line and, with this many Unicode patterns, mostly in its slowest
/// engine (a fifth of `classify`'s time on the benchmark corpus). Every form's regex instead
/// yields the literals each of its matches holds (the same extraction the signatures use); one
/// overlapping Aho-Corasick search of the line gives the forms whose literals it holds, and
/// only their regexes run, in table order, until the first matches: the same answer as the set.
struct Forms {
    /// Each form's regex, compiled when a line first needs it: a log meets a handful of the
    /// forms, and compiling all of them up front was a third of a small `classify`'s time.
    regexes: Vec<OnceLock<Regex>>,
    /// Every form's literals, for an overlapping search of one line (built on first use:
    /// the matcher searches for them with its own automaton).
    literals: OnceLock<AhoCorasick>,
    /// The same literals, for the matcher (see [`form_literals`]).
    literal_list: Vec<Vec<u8>>,
    /// Per literal of `literals`, the forms holding it (bit `i`: form `i`).
    holders: Vec<u128>,
    /// Forms without usable literals: tried on every line.
    always: u128,
}

static COMPILED: LazyLock<Forms> = LazyLock::new(|| {
    assert!(
        FORMS.len() <= 128,
        "the forms' candidate sets are u128 bit sets"
    );
    let mut literals: Vec<Vec<u8>> = Vec::new();
    let mut holders: Vec<u128> = Vec::new();
    let mut always = 0u128;
    for (i, f) in FORMS.iter().enumerate() {
        let hir = regex_syntax::parse(f.pattern).expect("the forms table compiles (tested)");
        match required_literals(&hir) {
            Some(set) => {
                for lit in set {
                    let at = match literals.iter().position(|l| *l == lit) {
                        Some(at) => at,
                        None => {
                            literals.push(lit);
                            holders.push(0);
                            literals.len() - 1
                        }
                    };
                    holders[at] |= 1 << i;
                }
            }
            None => always |= 1 << i,
        }
    }
    Forms {
        regexes: FORMS.iter().map(|_| OnceLock::new()).collect(),
        literals: OnceLock::new(),
        literal_list: literals,
        holders,
        always,
    }
});

/// The automaton of every form's literals. A DFA: the overlapping search runs over whole
/// lines, some of them 50 KB long (a shard's list of test ids), where the default NFA is
/// several times slower.
fn literal_search() -> &'static AhoCorasick {
    let forms = &*COMPILED;
    forms.literals.get_or_init(|| {
        AhoCorasickBuilder::new()
            .match_kind(MatchKind::Standard)
            .kind(Some(AhoCorasickKind::DFA))
            .build(&forms.literal_list)
            .expect("the forms' literals build an automaton")
    })
}

/// Form `i`'s regex.
fn regex(i: usize) -> &'static Regex {
    COMPILED.regexes[i]
        .get_or_init(|| Regex::new(FORMS[i].pattern).expect("the forms table compiles (tested)"))
}

/// Builds the forms now (see [`super::warm_up`]).
pub(super) fn warm_up() {
    LazyLock::force(&COMPILED);
    LazyLock::force(&NAMED);
}

/// The generic annotation form, the form of an annotation naming a test, a file:line or a
/// timeout (both indices in [`FORMS`]), and the latter's pattern.
static NAMED: LazyLock<(usize, usize, Regex)> = LazyLock::new(|| {
    let at = |name| {
        FORMS
            .iter()
            .position(|f| f.ecosystem == "github" && f.name == name)
            .expect("the annotation forms are in the table (tested)")
    };
    let named = at(NAMED_ANNOTATION);
    let pattern = Regex::new(FORMS[named].pattern).expect("the forms table compiles (tested)");
    (at(ANNOTATION), named, pattern)
});

/// Every form's literals, each with the forms holding it (bit `i`: form `i` of [`FORMS`]).
///
/// The matcher puts them into its own automaton, so that its one overlapping search of a
/// candidate line also says which forms the line could match; [`TellingLines::consider_among`]
/// then runs only those, without a second search of the line.
pub(super) fn form_literals() -> impl Iterator<Item = (&'static [u8], u128)> {
    let forms = &*COMPILED;
    forms
        .literal_list
        .iter()
        .map(Vec::as_slice)
        .zip(forms.holders.iter().copied())
}

/// The part of a line its form is judged on: its first [`MAX_TEXT`](super::MAX_TEXT) bytes (cut
/// on a character boundary), the text a report keeps and shows of it. A line of hundreds of
/// kilobytes (a shard's list of test ids, a compiler's command line) is not telling for a
/// `FAILED` somewhere far beyond what anyone is shown of it; and judging only the head keeps
/// the forms' regexes from running over such lines whole.
pub(super) fn judged(text: &str) -> &str {
    super::kept_head(text)
}

/// The form that recognises a normalized line (judged on its first
/// [`MAX_TEXT`](super::MAX_TEXT) bytes, the text a report keeps of it): its index in [`FORMS`].
pub fn form_of(text: &str) -> Option<usize> {
    let text = judged(text);
    let forms = &*COMPILED;
    let mut candidates = 0;
    for m in literal_search().find_overlapping_iter(text) {
        candidates |= forms.holders[m.pattern().as_usize()];
    }
    form_among(text, candidates)
}

/// The first form of `candidates` (plus those without literals) that matches `text`. Exact
/// whenever `candidates` holds every form whose literals `text` holds: a form whose literal is
/// missing cannot match, so more candidates never change the answer.
fn form_among(text: &str, candidates: u128) -> Option<usize> {
    let text = judged(text);
    let forms = &*COMPILED;
    let mut candidates = candidates | forms.always;
    while candidates != 0 {
        let i = candidates.trailing_zeros() as usize;
        if regex(i).is_match(text) {
            return Some(i);
        }
        candidates &= candidates - 1;
    }
    None
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
    /// An `##[error]` annotation whose continuation lines may follow: its form and its line so
    /// far, and how many continuation lines it took. Kept when the next stamped line comes.
    annotation: Option<(usize, LogLine, usize)>,
}

impl TellingLines {
    /// Considers one line; `line` is its 1-based number, `stamped` whether the raw line began
    /// with a timestamp. Lines without a marker need not be passed (they are never telling),
    /// nor the continuation lines of an open annotation ([`attach`](Self::attach) takes those).
    pub fn consider(&mut self, line: u64, text: &str, stamped: bool) {
        self.consider_among(line, text, stamped, None);
    }

    /// [`consider`](Self::consider), for a line the matcher has searched: `forms` holds every
    /// form whose literals the line's [`judged`] head holds (from [`form_literals`]), and that
    /// head holds a marker. `None`: nothing is known, the line is searched here.
    pub fn consider_among(&mut self, line: u64, text: &str, stamped: bool, forms: Option<u128>) {
        self.close_annotation();
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
        let found = match forms {
            Some(candidates) => form_among(text, candidates),
            None => form_of(text),
        };
        let Some(i) = found else { return };
        // The fast path only shows lines holding a marker; the reference shows every line.
        let head = judged(text);
        if forms.is_none() && !MARKERS.iter().any(|m| head.contains(m)) {
            return;
        }
        let annotation = stamped && !FORMS[i].boilerplate && text.starts_with("##[error]");
        // A form that keeps its first lines and has them all takes no more (`keep` would drop
        // this one): no copy of the line is made. (An annotation still opens: its
        // continuation lines are its own, whatever is kept of it.)
        if !annotation && self.has_all_it_keeps(i) {
            return;
        }
        let kept = LogLine {
            line,
            text: super::bounded_text(text),
        };
        if annotation {
            self.annotation = Some((i, kept, 0));
            return;
        }
        self.keep(i, kept);
    }

    /// Whether an `##[error]` annotation is open: the next line without a timestamp is one of
    /// its continuation lines.
    pub fn annotation_open(&self) -> bool {
        self.annotation.is_some()
    }

    /// Whether an open annotation still takes continuation text (past
    /// [`MAX_CONTINUATION_LINES`] its further lines are skipped, still as part of it).
    pub fn wants_continuation(&self) -> bool {
        self.annotation
            .as_ref()
            .is_some_and(|(_, _, n)| *n < MAX_CONTINUATION_LINES)
    }

    /// Attaches a continuation line (normalized, without a timestamp) to the open annotation.
    pub fn attach(&mut self, text: &str) {
        let Some((_, kept, n)) = &mut self.annotation else {
            return;
        };
        if *n >= MAX_CONTINUATION_LINES {
            return;
        }
        *n += 1;
        let text = text.trim_end();
        if text.is_empty() || kept.text.len() >= super::MAX_TEXT {
            return;
        }
        let joined = format!("{}\n{text}", kept.text);
        kept.text = super::bounded_text(&joined);
    }

    /// Ends the open annotation (a stamped line came, or the log ended) and keeps it like any
    /// other telling line.
    pub fn close_annotation(&mut self) {
        if let Some((i, kept, n)) = self.annotation.take() {
            // The first line was ranked alone; what its continuation lines name may rank the
            // whole annotation higher (one regex over this one annotation's text).
            let (generic, named, pattern) = &*NAMED;
            let i = if i == *generic && n > 0 && pattern.is_match(&kept.text) {
                *named
            } else {
                i
            };
            self.keep(i, kept);
        }
    }

    /// Whether form `i` keeps its first lines and has as many as it keeps.
    fn has_all_it_keeps(&self, i: usize) -> bool {
        match FORMS[i].keep {
            Keep::First(n) => self.kept.get(i).is_some_and(|k| k.len() >= n),
            Keep::Last(_) => false,
        }
    }

    /// Keeps a telling line of form `i`, as the form's [`Keep`] says, once per text.
    fn keep(&mut self, i: usize, line: LogLine) {
        if self.has_all_it_keeps(i) {
            return;
        }
        if self.kept.is_empty() {
            self.kept = (0..FORMS.len()).map(|_| VecDeque::new()).collect();
        }
        let keep = &mut self.kept[i];
        if keep.iter().any(|l| l.text == line.text) {
            return;
        }
        if let Keep::Last(n) = FORMS[i].keep
            && keep.len() >= n
        {
            keep.pop_front();
        }
        keep.push_back(line);
    }

    /// The most telling lines first: by tier, then by the form's place in the table, then in
    /// log order; at most [`MAX_ERROR_LINES`]. Boilerplate only when there is nothing else.
    pub fn finish(mut self) -> Vec<LogLine> {
        self.close_annotation();
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

    /// The prefiltered lookup gives what one `RegexSet` over the table gives (the first form in
    /// table order whose pattern matches), on every form's example, on each example cut short
    /// and lengthened, and on lines of every real log at hand.
    #[test]
    fn form_of_agrees_with_a_regex_set_over_the_table() {
        let set = regex::RegexSet::new(FORMS.iter().map(|f| f.pattern)).unwrap();
        let mut lines: Vec<String> = Vec::new();
        for f in FORMS {
            lines.push(f.example.to_string());
            for cut in [1, 5, 12] {
                if let Some((at, _)) = f.example.char_indices().nth(cut) {
                    lines.push(f.example[at..].to_string());
                    lines.push(f.example[..at].to_string());
                }
            }
            lines.push(format!("  {} Error: x", f.example));
            lines.push(format!("##[error]{}", f.example));
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
        for dir in ["real", "pytorch"] {
            let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
                continue;
            };
            for e in entries.flatten() {
                let bytes = std::fs::read(e.path()).unwrap();
                let text = String::from_utf8_lossy(&bytes);
                lines.extend(
                    text.lines().map(|l| {
                        super::super::normalize::normalize_line(l.as_bytes()).into_owned()
                    }),
                );
            }
        }
        assert!(lines.len() > 1000, "{} lines", lines.len());
        for line in &lines {
            assert_eq!(form_of(line), set.matches(line).iter().next(), "{line:?}");
        }
    }

    #[test]
    fn run_header_and_set_x_echo_are_not_output() {
        let mut t = TellingLines::default();
        t.consider(1, "##[group]Run echo \"ERROR: deploy failed\"", true);
        t.consider(2, "echo \"ERROR: deploy failed\"", true);
        t.consider(3, "  continue-on-error: false", true);
        t.consider(4, "  CONTINUE_THROUGH_ERROR: False", true);
        t.consider(5, "##[endgroup]", true);
        t.consider(6, "+ python -c 'raise SystemExit(\"Error: no\")'", true);
        t.consider(7, "ModuleNotFoundError: No module named 'numpy'", true);
        t.consider(8, "##[error]Process completed with exit code 1.", true);
        let lines: Vec<u64> = t.finish().iter().map(|l| l.line).collect();
        assert_eq!(lines, vec![7]);
        // Other groups hold output.
        let mut g = TellingLines::default();
        g.consider(1, "##[group]Test results", true);
        g.consider(2, "--- FAIL: TestX (2.93s)", true);
        assert_eq!(g.finish().len(), 1);
    }

    /// The go command's module errors are telling lines (issue 40: a `go mod tidy` failure
    /// showed none), written from its messages (cmd/go/internal/modload, modfetch); its
    /// informational `go: ` lines are not, and they never outrank a module error.
    #[test]
    fn go_module_errors_are_telling_and_go_chatter_is_not() {
        let module = [
            "go: github.com/example/missing@latest: no matching versions for query \"latest\"",
            "\tgithub.com/example/missing: no matching versions for query \"latest\"",
            "go: errors parsing go.mod:",
            "go: updates to go.mod needed; to update it:",
            "go: github.com/example/lib@v1.2.3: missing go.sum entry for go.mod file; to add it:",
            "go: inconsistent vendoring in /home/runner/work/app/app:",
            "go: go.mod requires go >= 1.23.0 (running go 1.22.5; GOTOOLCHAIN=local)",
            "go: github.com/example/lib@v9.9.9: invalid version: unknown revision v9.9.9",
            "go: github.com/example/lib@v1.0.0: verifying go.mod: checksum mismatch",
            "go: github.com/example/lib@v1.0.0: reading https://proxy.golang.org/github.com/example/lib/@v/v1.0.0.mod: 404 Not Found",
            "go: updates to go.sum needed, disabled by -mod=readonly",
        ];
        for line in module {
            let f = form(line).unwrap_or_else(|| panic!("{line:?} is not telling"));
            assert_eq!(
                (f.ecosystem, f.name, f.tier),
                ("go", "module error", Tier::Failure),
                "{line:?}"
            );
        }
        for chatter in [
            "go: downloading github.com/example/lib v1.2.3",
            "go: finding module for package github.com/example/lib",
            "go: found github.com/example/lib in github.com/example/lib v1.2.3",
            "go: added github.com/example/lib v1.2.3",
            "go: upgraded golang.org/x/net v0.1.0 => v0.2.0",
        ] {
            assert_eq!(rank(chatter), None, "{chatter:?}");
        }
        // A `go mod tidy` step's log: the module error is the first telling line.
        let mut t = TellingLines::default();
        for (i, line) in [
            "go: finding module for package github.com/example/missing",
            "go: downloading github.com/example/lib v1.2.3",
            "go: example.com/app imports",
            "\tgithub.com/example/missing: no matching versions for query \"latest\"",
            "##[error]Process completed with exit code 1.",
        ]
        .iter()
        .enumerate()
        {
            t.consider(i as u64 + 1, line, true);
        }
        let lines: Vec<u64> = t.finish().iter().map(|l| l.line).collect();
        assert_eq!(lines, vec![4]);
    }

    #[test]
    fn final_exception_over_traceback_first_compiler_error_over_summary() {
        let mut t = TellingLines::default();
        t.consider(1, "Traceback (most recent call last):", true);
        t.consider(9, "ValueError: bad shape", true);
        let lines: Vec<u64> = t.finish().iter().map(|l| l.line).collect();
        assert_eq!(lines, vec![9, 1]);
        let mut c = TellingLines::default();
        for i in 0..50 {
            c.consider(
                10 + i,
                &format!("error[E0425]: cannot find value `x{i}` in this scope"),
                true,
            );
        }
        c.consider(
            99,
            "error: could not compile `app` (lib) due to 50 previous errors",
            true,
        );
        let lines: Vec<u64> = c.finish().iter().map(|l| l.line).collect();
        assert_eq!(lines, vec![10, 11, 12, 99]);
    }

    #[test]
    fn boilerplate_only_when_nothing_better() {
        let mut t = TellingLines::default();
        t.consider(9, "##[error]Process completed with exit code 1.", true);
        t.consider(3, "E   AssertionError: nope", true);
        t.consider(5, "##[error]real annotation", true);
        let lines: Vec<u64> = t.finish().iter().map(|l| l.line).collect();
        assert_eq!(lines, vec![5, 3]);
        let mut only = TellingLines::default();
        only.consider(9, "##[error]Process completed with exit code 1.", true);
        only.consider(10, "##[error]Process completed with exit code 2.", true);
        let lines: Vec<u64> = only.finish().iter().map(|l| l.line).collect();
        assert_eq!(lines, vec![9, 10]);
    }

    #[test]
    fn annotation_continuations_are_attached_bounded_and_end_at_a_stamped_line() {
        let mut t = TellingLines::default();
        t.consider(10, "##[error]Error: Command failed: git push", true);
        assert!(t.annotation_open());
        t.attach("remote: Permission to octo/demo.git denied to bot.");
        t.attach("");
        t.attach("fatal: unable to access 'https://github.com/octo/demo/'");
        // A stamped line ends it; the same annotation again is kept once.
        t.consider(14, "##[error]Error: Command failed: git push", true);
        t.attach("remote: Permission to octo/demo.git denied to bot.");
        t.attach("");
        t.attach("fatal: unable to access 'https://github.com/octo/demo/'");
        // Unstamped (a log without timestamps): nothing to attach to.
        t.consider(20, "##[error]Unstamped annotation", false);
        assert!(!t.annotation_open());
        // Bounded: past the limit, further lines are swallowed, not attached.
        t.consider(30, "##[error]long", true);
        for i in 0..MAX_CONTINUATION_LINES + 5 {
            assert_eq!(t.wants_continuation(), i < MAX_CONTINUATION_LINES);
            t.attach(&format!("line {i}"));
        }
        let lines = t.finish();
        let got: Vec<(u64, &str)> = lines.iter().map(|l| (l.line, l.text.as_str())).collect();
        assert_eq!(got.len(), 3, "{got:?}");
        assert_eq!(
            got[0],
            (
                10,
                "##[error]Error: Command failed: git push\nremote: Permission to octo/demo.git denied to bot.\nfatal: unable to access 'https://github.com/octo/demo/'"
            )
        );
        assert_eq!(got[1], (20, "##[error]Unstamped annotation"));
        assert_eq!(got[2].0, 30);
        assert_eq!(got[2].1.lines().count(), 1 + MAX_CONTINUATION_LINES);
        assert!(
            got[2]
                .1
                .ends_with(&format!("line {}", MAX_CONTINUATION_LINES - 1))
        );
    }

    /// A form that keeps its first lines takes no more once it has them (the early-out in
    /// `consider_among` and `keep` agree), and an `##[error]` annotation still opens when its
    /// form is full: its continuation lines are its own, and may make it a named annotation.
    #[test]
    fn a_full_form_takes_no_more_lines_but_a_full_annotation_form_still_opens() {
        let mut t = TellingLines::default();
        // "test failed" keeps its first 3; "error annotation" its first 3.
        for n in 1..=5u64 {
            t.consider(n, &format!("--- FAIL: TestNumber{n} (0.01s)"), true);
        }
        for n in 11..=15u64 {
            t.consider(n, &format!("##[error]Process exited with code {n}"), true);
            assert!(t.annotation_open());
        }
        t.consider(20, "##[error]Error: boom", true);
        assert!(t.annotation_open(), "a full form's annotation still opens");
        assert!(t.wants_continuation());
        t.attach(" ❯ src/index.ts:253:5");
        let lines = t.finish();
        let got: Vec<u64> = lines.iter().map(|l| l.line).collect();
        let mut sorted = got.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, vec![1, 2, 3, 11, 12, 13, 20], "{got:?}");
        let named = lines.iter().find(|l| l.line == 20).unwrap();
        assert_eq!(named.text, "##[error]Error: boom\n ❯ src/index.ts:253:5");
        // Named, it ranks with the test runner's own FAIL lines, above the plain annotations.
        assert_eq!(got, vec![1, 2, 3, 20, 11, 12, 13]);
    }

    /// gmoon/s3proxy's vitest job (../shared/logs/real, line 784): the annotation's first line
    /// names only the exception; the file:line under it makes it rank with the test runner's own
    /// FAIL lines, above a crash and above an annotation that names nothing.
    #[test]
    fn an_annotation_whose_continuation_names_a_file_line_ranks_with_fail_lines() {
        let mut t = TellingLines::default();
        t.consider(3, "--- FAIL: TestServe (2.93s)", true);
        t.consider(5, "Segmentation fault (core dumped)", true);
        t.consider(
            7,
            "##[error]CredentialsProviderError: Could not load credentials from any providers",
            true,
        );
        t.attach(" ❯ node_modules/@aws-sdk/credential-provider-node/dist-cjs/index.js:129:13");
        t.attach(" ❯ S3Proxy.healthCheck src/index.ts:253:5");
        t.consider(20, "##[error]Error: Could not load credentials", true);
        t.attach("Serialized Error: { tryNextLink: false }");
        t.consider(30, "##[error]Process completed with exit code 1.", true);
        let lines: Vec<u64> = t.finish().iter().map(|l| l.line).collect();
        assert_eq!(lines, vec![3, 7, 5, 20]);
        // The same first line without its continuation lines names nothing: after the crash.
        let mut alone = TellingLines::default();
        alone.consider(5, "Segmentation fault (core dumped)", true);
        alone.consider(
            7,
            "##[error]CredentialsProviderError: Could not load credentials from any providers",
            true,
        );
        let lines: Vec<u64> = alone.finish().iter().map(|l| l.line).collect();
        assert_eq!(lines, vec![5, 7]);
    }

    /// vitest's GitHub Actions reporter writes a timed-out test as one `::error` command whose
    /// message is vitest's own two lines and the test's location (`%0A` becomes a newline, which
    /// the runner writes without a timestamp); a test id or a timeout on the first line counts
    /// as much. A URL's host and port is not a file:line.
    #[test]
    fn annotations_naming_a_timeout_a_test_or_a_file_line_are_named() {
        let named = |first: &str, rest: &[&str]| {
            let mut t = TellingLines::default();
            t.consider(1, "Segmentation fault", true);
            t.consider(2, first, true);
            for r in rest {
                t.attach(r);
            }
            let out = t.finish();
            (
                out[0].line == 2,
                out.iter().find(|l| l.line == 2).unwrap().text.clone(),
            )
        };
        let (first, text) = named(
            "##[error]Error: Test timed out in 5000ms.",
            &[
                "If this is a long-running test, pass a timeout value as the last argument or configure it globally with \"testTimeout\".",
                " ❯ test/slow.test.ts:3:1",
            ],
        );
        assert!(first);
        assert!(text.ends_with("\n ❯ test/slow.test.ts:3:1"), "{text}");
        assert!(named("##[error]tests/test_io.py::test_read - OSError: boom", &[]).0);
        assert!(named("##[error]The operation timed out after 60s", &[]).0);
        assert!(
            named(
                "##[error]boom",
                &["    at Object.<anonymous> (src/app.js:12:5)"]
            )
            .0
        );
        assert!(!named("##[error]boom", &["see https://registry.npmjs.org:443/x"]).0);
        assert!(!named("##[error]boom", &["std::runtime_error: bad"]).0);
    }

    #[test]
    fn bounded_and_deduplicated() {
        let mut t = TellingLines::default();
        for i in 0..100 {
            t.consider(i, &format!("ERROR number {}", i % 30), true);
        }
        let out = t.finish();
        assert_eq!(out.len(), MAX_ERROR_LINES);
        let mut texts: Vec<&str> = out.iter().map(|l| l.text.as_str()).collect();
        texts.dedup();
        assert_eq!(texts.len(), MAX_ERROR_LINES);
    }
}
