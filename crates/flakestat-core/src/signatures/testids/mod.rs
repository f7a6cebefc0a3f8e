//! Failing tests out of raw job logs: which tests a log's test runners name as failed, and which
//! failed and then passed on a retry in the same job (flaky in the job, not a failure of it).
//!
//! The runners' line forms are a table ([`runners::FORMS`]), like the telling-line forms. The
//! extractor rides the matcher's one pass over the log: every form's literals ([`ANCHORS`]) join
//! the matcher's prefilter, which hands [`TestLines::consider`] exactly the lines holding one;
//! no line is scanned twice. Some summaries name their tests on lines with no literal of their
//! own (mocha's `N failing`, Ginkgo's `Summarizing N Failures:`, surefire 2.x's `Failed tests:`
//! and `Tests in error:` blocks), so after such a header the extractor asks for the lines that
//! follow ([`TestLines::wants_lines`]), a bounded number of them, until the block ends.
//!
//! An id keeps its parameters (`tests/x.py::test_y[3.14t]`) and has a family without them. A
//! test whose failure the runner retried and which then passed (pytest-rerunfailures' `RERUN`
//! with no final `FAILED`, nextest's `FLAKY`, surefire's `Flakes:` and `Flaked tests:`,
//! gotestsum's `--rerun-fails` when the last re-run did not fail it) is flaky in the job. What
//! no form reads yields nothing: a wrong id is worse than none.
//!
//! [`VERSION`] joins the classification fingerprint: when a form changes, stored logs are
//! re-extracted.

pub mod green;
pub mod junit;
pub mod runners;

use std::collections::BTreeMap;
use std::sync::{LazyLock, OnceLock};

use regex::{Regex, RegexSet};

use crate::model::{TestOutcomes, TestRecord};
use runners::{
    FORMS, Family, Form, GOTESTSUM_SUMMARY, IdStyle, MOCHA_ANCHOR, MOCHA_HEADER,
    MOCHA_SECTION_LINES, Outcome,
};

/// Bumped whenever a form or the outcome rules change: stored classifications are redone.
pub const VERSION: u32 = 2;

/// Most tests recorded per log (a log of ten thousand failures names the first ones).
pub const MAX_TESTS: usize = 1_000;

/// Every literal a test line holds (the forms' anchors and mocha's header), each once.
pub(crate) static ANCHORS: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    let mut all: Vec<&'static str> = FORMS
        .iter()
        .flat_map(|f| f.anchors.iter().copied())
        .chain([MOCHA_ANCHOR, SUREFIRE_FLAKES, GINKGO_ANCHOR])
        .chain(SUREFIRE2_HEADERS.iter().map(|(h, _)| *h))
        .collect();
    all.sort_unstable();
    all.dedup();
    all
});

/// Surefire's `[WARNING] Flakes:` section: the tests after it passed on a rerun.
const SUREFIRE_FLAKES: &str = "Flakes:";

/// Ginkgo's failure summary (`Summarizing 2 Failures:`), v1 and v2: the `[FAIL] …` lines after
/// it name the failed specs. Documented: <https://onsi.github.io/ginkgo/#spec-reports>.
const GINKGO_ANCHOR: &str = "Summarizing ";

/// Surefire 2.x's plain summary blocks (before 2.20 no `[ERROR]` prefix; from 2.13 the one-line
/// `Class.method:line message` entries, before it `method(pkg.Class): message`), and whether
/// the tests under each passed on a rerun. Documented:
/// <https://maven.apache.org/surefire/maven-surefire-plugin/newerrorsummary.html>. Each header
/// holds a literal the matcher searches for anyway (`Failed`, `error`, `Flake`): no new anchor.
const SUREFIRE2_HEADERS: &[(&str, bool)] = &[
    ("Failed tests:", false),
    ("Tests in error:", false),
    ("Flaked tests:", true),
];

/// Most lines of one summary block read after its header (mocha's, Ginkgo's, surefire's,
/// gotestsum's).
const SECTION_LINES: u64 = MOCHA_SECTION_LINES;

struct Compiled {
    set: RegexSet,
    /// Each form's regex (for its captures), compiled when a line first matches the form.
    each: Vec<OnceLock<Regex>>,
    mocha_header: Regex,
    mocha_entry: Regex,
    ginkgo_header: Regex,
    ginkgo_entry: Regex,
    gotestsum_done: Regex,
}

static COMPILED: LazyLock<Compiled> = LazyLock::new(|| Compiled {
    set: RegexSet::new(FORMS.iter().map(|f| f.pattern)).expect("the test forms compile (tested)"),
    each: FORMS.iter().map(|_| OnceLock::new()).collect(),
    mocha_header: Regex::new(MOCHA_HEADER).expect("compiles"),
    mocha_entry: Regex::new(r"^(\s*)\d+\) (.+)$").expect("compiles"),
    ginkgo_header: Regex::new(r"^\s*Summarizing \d+ Failures?:\s*$").expect("compiles"),
    ginkgo_entry: Regex::new(
        r"^\[(?:FAIL|Fail|PANICKED!|Panic!|TIMEDOUT|Timeout\.\.\.|INTERRUPTED|ABORTED)\] (\S.*)$",
    )
    .expect("compiles"),
    gotestsum_done: Regex::new(r"^DONE (\d+) runs?, ").expect("compiles"),
});

/// Builds the forms now (see [`super::warm_up`]).
pub(super) fn warm_up() {
    LazyLock::force(&COMPILED);
    LazyLock::force(&ANCHORS);
}

/// One line read by a form: the test, what it says, and which form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reading {
    pub id: String,
    pub outcome: Outcome,
    pub form: usize,
    /// gotestsum's run of a failure: 0 for the first, N for `(re-run N)`.
    pub run: Option<u32>,
}

/// Reads one normalized line with the table: the first form that yields a test.
pub fn read_line(text: &str) -> Option<Reading> {
    let c = &*COMPILED;
    for i in c.set.matches(text).iter() {
        let form = &FORMS[i];
        let each = c.each[i]
            .get_or_init(|| Regex::new(form.pattern).expect("the test forms compile (tested)"));
        let Some(caps) = each.captures(text) else {
            continue;
        };
        let Some(id) = id_of(form, &caps) else {
            continue;
        };
        if form.reject.contains(&id.as_str()) {
            continue;
        }
        let kind = caps.name("kind").map_or("", |m| m.as_str());
        let outcome = match kind {
            "RERUN" => Outcome::Rerun,
            // nextest prints PASS for every passing test; only a retry's pass says anything.
            "PASS" if caps.name("try").is_none() => continue,
            "PASS" => Outcome::Passed,
            k if k.starts_with("FLAKY") => Outcome::Passed,
            _ => form.outcome,
        };
        let run = (form.id == IdStyle::GoTestSum).then(|| {
            caps.name("run")
                .and_then(|r| r.as_str().parse().ok())
                .unwrap_or(0)
        });
        return Some(Reading {
            id,
            outcome,
            form: i,
            run,
        });
    }
    None
}

fn id_of(form: &Form, caps: &regex::Captures<'_>) -> Option<String> {
    let id = match form.id {
        IdStyle::Plain => caps
            .name("id")
            .or_else(|| caps.name("quoted"))?
            .as_str()
            .trim()
            .to_string(),
        IdStyle::XcTest => {
            let id = caps.name("id")?.as_str().trim();
            let id = match id.strip_prefix("-[").and_then(|i| i.strip_suffix(']')) {
                Some(inner) => {
                    let (class, name) = inner.split_once(' ')?;
                    format!("{class}.{}", name.trim())
                }
                None => id.to_string(),
            };
            id.strip_suffix("()").map(str::to_string).unwrap_or(id)
        }
        IdStyle::GoTestSum => {
            let name = caps.name("name")?.as_str();
            match caps.name("pkg").map(|p| p.as_str()) {
                Some(".") | None => name.to_string(),
                Some(pkg) => format!("{pkg}.{name}"),
            }
        }
        IdStyle::Pytest => {
            let id = cut_at_blank(caps.name("id")?.as_str());
            let base = id.split('[').next().unwrap_or(id);
            if !(base.contains("::") || base.ends_with(".py")) {
                return None;
            }
            id.to_string()
        }
        IdStyle::NameInClass => {
            if let Some(id) = caps.name("id") {
                id.as_str().to_string()
            } else {
                let name = caps.name("name")?.as_str();
                let class = caps.name("class")?.as_str();
                if class.ends_with(&format!(".{name}")) {
                    class.to_string()
                } else {
                    format!("{class}.{name}")
                }
            }
        }
        IdStyle::Tap => {
            if let Some(d) = caps.name("directive")
                && matches!(d.as_str().to_ascii_uppercase().as_str(), "TODO" | "SKIP")
            {
                return None;
            }
            match caps.name("desc").map(|d| d.as_str().trim()) {
                Some(d) if !d.is_empty() => d.to_string(),
                _ => format!("#{}", caps.name("num")?.as_str()),
            }
        }
    };
    (!id.is_empty()).then(|| super::bounded_text(&id))
}

/// The text up to the first blank outside `[...]`.
fn cut_at_blank(s: &str) -> &str {
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            c if c.is_whitespace() && depth == 0 => return &s[..i],
            _ => {}
        }
    }
    s
}

/// The family of an id: the id without its parameters.
pub fn family(form: Family, id: &str) -> String {
    let cut = match form {
        Family::Same => id,
        Family::Brackets => match id.find('[') {
            Some(i) if id.ends_with(']') => &id[..i],
            _ => id,
        },
        Family::BeforeSlash => id.split('/').next().unwrap_or(id),
        Family::Parens => match id.find('(') {
            Some(i) => id[..i].trim_end(),
            None => id,
        },
        Family::DataSet => id.split(" with data set ").next().unwrap_or(id),
        Family::GoogleTest => {
            if let Some((suite, test)) = id.split_once('.') {
                let suite = suite.rsplit('/').next().unwrap_or(suite);
                let test = test.split('/').next().unwrap_or(test);
                return format!("{suite}.{test}");
            }
            id
        }
    };
    cut.to_string()
}

/// What one test's lines said so far.
#[derive(Debug)]
struct Seen {
    runner: &'static str,
    family: Family,
    line: u64,
    failed: bool,
    rerun: bool,
    passed: bool,
    secondary: bool,
    /// gotestsum: the last run (0 the first, N the N-th re-run) in which it failed.
    run: Option<u32>,
}

#[derive(Debug)]
enum Section {
    None,
    /// After mocha's `N failing`: until this line; the entry being read (its first line, its
    /// title parts).
    Mocha {
        until: u64,
        entry: Option<(u64, Vec<String>)>,
    },
    /// After surefire's `[WARNING] Flakes:`.
    SurefireFlakes {
        until: u64,
    },
    /// After Ginkgo's `Summarizing N Failures:`.
    Ginkgo {
        until: u64,
    },
    /// After a surefire 2.x header (`Failed tests:`, `Tests in error:`, `Flaked tests:`);
    /// `flaky`: the tests under it passed on a rerun.
    Surefire2 {
        until: u64,
        flaky: bool,
    },
    /// After gotestsum's first `=== FAIL:` summary line, until its `DONE N runs` line.
    GoTestSum {
        until: u64,
    },
}

/// Collects the tests of one log as it streams by.
#[derive(Debug)]
pub(crate) struct TestLines {
    seen: BTreeMap<String, Seen>,
    section: Section,
    /// gotestsum's `DONE N runs`: how many runs `--rerun-fails` made (the first and the
    /// re-runs), the largest said.
    gotestsum_runs: u32,
}

impl Default for TestLines {
    fn default() -> Self {
        TestLines {
            seen: BTreeMap::new(),
            section: Section::None,
            gotestsum_runs: 0,
        }
    }
}

impl TestLines {
    /// Whether the lines after this one must be passed to [`consider`](Self::consider)
    /// whatever they hold (inside mocha's or surefire's summary).
    pub fn wants_lines(&self) -> bool {
        !matches!(self.section, Section::None)
    }

    /// Like [`consider`](Self::consider), for a caller that shows every line (the reference
    /// path): lines holding no anchor are skipped as the fast path skips them.
    pub fn consider_any(&mut self, line: u64, text: &str) {
        if self.wants_lines() || ANCHORS.iter().any(|a| text.contains(a)) {
            self.consider(line, text);
        }
    }

    /// One normalized line that holds an anchor, or any line while [`wants_lines`](Self::wants_lines).
    pub fn consider(&mut self, line: u64, text: &str) {
        if self.in_section(line, text) {
            return;
        }
        if let Some(r) = read_line(text) {
            let form = &FORMS[r.form];
            if form.name == GOTESTSUM_SUMMARY
                && matches!(self.section, Section::None | Section::GoTestSum { .. })
            {
                // gotestsum's summary: its `DONE N runs` line says how many runs there were.
                self.section = Section::GoTestSum {
                    until: line + SECTION_LINES,
                };
            }
            let seen = self.note(
                r.id,
                form.runner,
                form.family,
                form.secondary,
                line,
                r.outcome,
            );
            if let (Some(run), Some(seen)) = (r.run, seen) {
                seen.run = Some(seen.run.map_or(run, |k| k.max(run)));
            }
            return;
        }
        if text.contains(MOCHA_ANCHOR) && COMPILED.mocha_header.is_match(text) {
            self.section = Section::Mocha {
                until: line + SECTION_LINES,
                entry: None,
            };
        } else if text.starts_with("[WARNING] Flakes:") {
            self.section = Section::SurefireFlakes {
                until: line + SECTION_LINES,
            };
        } else if text.contains(GINKGO_ANCHOR) && COMPILED.ginkgo_header.is_match(text) {
            self.section = Section::Ginkgo {
                until: line + SECTION_LINES,
            };
        } else if let Some(flaky) = surefire2_header(text) {
            self.section = Section::Surefire2 {
                until: line + SECTION_LINES,
                flaky,
            };
        }
    }

    /// Reads a line inside a section; `true` when it was consumed.
    fn in_section(&mut self, line: u64, text: &str) -> bool {
        match &mut self.section {
            Section::None => false,
            Section::Mocha { until, entry } => {
                if line > *until || text.starts_with("##[") {
                    self.section = Section::None;
                    return false;
                }
                let t = text.trim();
                if let Some((first, parts)) = entry {
                    if t.is_empty() {
                        *entry = None;
                        return true;
                    }
                    if let Some(last) = t.strip_suffix(':') {
                        parts.push(last.to_string());
                        let id = parts.join(" ");
                        let first = *first;
                        *entry = None;
                        self.note(id, "mocha", Family::Same, false, first, Outcome::Failed);
                    } else {
                        parts.push(t.to_string());
                        if parts.len() > 20 {
                            *entry = None;
                        }
                    }
                    return true;
                }
                if let Some(c) = COMPILED.mocha_entry.captures(text) {
                    let title = c[2].trim();
                    if let Some(whole) = title.strip_suffix(':') {
                        self.note(
                            whole.to_string(),
                            "mocha",
                            Family::Same,
                            false,
                            line,
                            Outcome::Failed,
                        );
                    } else {
                        *entry = Some((line, vec![title.to_string()]));
                    }
                    return true;
                }
                // Error messages and stack lines between entries: read as any line.
                false
            }
            Section::Ginkgo { until } => {
                let t = text.trim();
                if line > *until || text.starts_with("##[") {
                    self.section = Section::None;
                    return false;
                }
                if t.is_empty() || is_code_location(t) {
                    return true;
                }
                if let Some(c) = COMPILED.ginkgo_entry.captures(t) {
                    let id = c[1].trim().to_string();
                    self.note(id, "ginkgo", Family::Same, false, line, Outcome::Failed);
                    return true;
                }
                self.section = Section::None;
                false
            }
            Section::Surefire2 { until, flaky } => {
                let flaky = *flaky;
                if line > *until {
                    self.section = Section::None;
                    return false;
                }
                if let Some(flaky) = surefire2_header(text) {
                    self.section = Section::Surefire2 {
                        until: line + SECTION_LINES,
                        flaky,
                    };
                    return true;
                }
                let rest = without_maven_level(text);
                if rest.starts_with("    ") {
                    // `    Run 1: …` under a rerun test.
                    return true;
                }
                let Some(entry) = rest.strip_prefix("  ").filter(|e| !e.starts_with(' ')) else {
                    self.section = Section::None;
                    return rest.trim().is_empty();
                };
                if let Some((id, primary)) = surefire2_entry(entry) {
                    let outcome = if flaky {
                        Outcome::Passed
                    } else {
                        Outcome::Failed
                    };
                    self.note(id, "surefire", Family::Same, !primary, line, outcome);
                }
                true
            }
            Section::GoTestSum { until } => {
                if line > *until {
                    self.section = Section::None;
                    return false;
                }
                if let Some(c) = COMPILED.gotestsum_done.captures(text) {
                    let runs: u32 = c[1].parse().unwrap_or(0);
                    self.gotestsum_runs = self.gotestsum_runs.max(runs);
                    self.section = Section::None;
                    return true;
                }
                false
            }
            Section::SurefireFlakes { until } => {
                let Some(rest) = text.strip_prefix("[WARNING] ") else {
                    if text.starts_with("[ERROR]   Run ") || text.starts_with("[INFO]   Run ") {
                        return true;
                    }
                    self.section = Section::None;
                    return false;
                };
                if line > *until || rest.trim().is_empty() || rest.starts_with("Tests run:") {
                    self.section = Section::None;
                    return false;
                }
                let id = rest.trim().split(':').next().unwrap_or_default();
                if !id.is_empty() && id.chars().all(|c| c.is_alphanumeric() || "._$".contains(c)) {
                    self.note(
                        id.to_string(),
                        "surefire",
                        Family::Same,
                        true,
                        line,
                        Outcome::Passed,
                    );
                }
                true
            }
        }
    }

    fn note(
        &mut self,
        id: String,
        runner: &'static str,
        family: Family,
        secondary: bool,
        line: u64,
        outcome: Outcome,
    ) -> Option<&mut Seen> {
        if !self.seen.contains_key(&id) && self.seen.len() >= MAX_TESTS {
            return None;
        }
        let seen = self.seen.entry(id).or_insert(Seen {
            runner,
            family,
            line,
            failed: false,
            rerun: false,
            passed: false,
            secondary,
            run: None,
        });
        // A primary form's reading of an id wins over a secondary one's.
        if seen.secondary && !secondary {
            seen.runner = runner;
            seen.family = family;
            seen.secondary = false;
        }
        match outcome {
            Outcome::Failed => seen.failed = true,
            Outcome::Rerun => seen.rerun = true,
            Outcome::Passed => seen.passed = true,
        }
        Some(seen)
    }

    /// The failed and the flaky tests: a test that passed on a retry, or was retried and never
    /// reported failed, is flaky; one reported failed and never passed is failed. A secondary
    /// reading (a summary's short restatement) folds into the primary id that ends with it.
    pub fn finish(self) -> TestOutcomes {
        let mut seen = self.seen;
        let secondary: Vec<String> = seen
            .iter()
            .filter(|(_, s)| s.secondary)
            .map(|(id, _)| id.clone())
            .collect();
        for short in secondary {
            let full = seen
                .iter()
                .filter(|(id, s)| !s.secondary && ends_with_id(id, &short))
                .map(|(id, _)| id.clone())
                .next();
            if let Some(full) = full {
                let s = seen.remove(&short).expect("listed");
                let f = seen.get_mut(&full).expect("listed");
                f.failed |= s.failed;
                f.rerun |= s.rerun;
                f.passed |= s.passed;
            }
        }
        // gotestsum re-runs the tests that failed, each re-run those the one before failed,
        // up to its `DONE N runs`: a test whose last failure came before the last run passed
        // in the run after it.
        if self.gotestsum_runs >= 2 {
            for s in seen.values_mut() {
                if s.run.is_some_and(|k| k + 1 < self.gotestsum_runs) {
                    s.passed = true;
                }
            }
        }
        let mut out = TestOutcomes::default();
        for (id, s) in seen {
            let record = TestRecord {
                family: family(s.family, &id),
                id,
                runner: s.runner.to_string(),
                line: s.line,
            };
            if s.passed || (s.rerun && !s.failed) {
                out.flaky.push(record);
            } else if s.failed {
                out.failed.push(record);
            }
        }
        out
    }
}

/// Whether `full` is `short` or ends with it after a separator (`.`, ` > `, `::`, ` › `).
fn ends_with_id(full: &str, short: &str) -> bool {
    full == short
        || full.strip_suffix(short).is_some_and(|head| {
            head.ends_with('.')
                || head.ends_with(" > ")
                || head.ends_with("::")
                || head.ends_with(" › ")
        })
}

/// Whether a trimmed line is a source location alone (`/src/books_test.go:29`), as Ginkgo prints
/// under each failure of its summary.
fn is_code_location(t: &str) -> bool {
    !t.contains(char::is_whitespace)
        && t.rsplit_once(':').is_some_and(|(path, n)| {
            !path.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
        })
}

/// A line without Maven's `[ERROR] `/`[WARNING] `/`[INFO] ` level (Maven 3.5+ prefixes every
/// line of surefire's summary).
fn without_maven_level(text: &str) -> &str {
    for level in ["[ERROR]", "[WARNING]", "[INFO]"] {
        if let Some(rest) = text.strip_prefix(level) {
            return rest.strip_prefix(' ').unwrap_or(rest);
        }
    }
    text
}

/// Whether a line is a surefire 2.x summary header, and whether the tests under it are flaky.
fn surefire2_header(text: &str) -> Option<bool> {
    let t = without_maven_level(text).trim_end();
    SUREFIRE2_HEADERS
        .iter()
        .find(|(h, _)| t == *h)
        .map(|(_, flaky)| *flaky)
}

/// One entry of a surefire 2.x block (after its two blanks): the test's id, and whether it is
/// whole (`testX(pkg.Class)`, `Class.testX(pkg.Class)`: `pkg.Class.testX`) or the one-line
/// summary's short form (`Class.testX:42 message`, `Class>Base.testX:12 » NullPointer`:
/// `Class.testX`, folded into a whole id that ends with it).
fn surefire2_entry(entry: &str) -> Option<(String, bool)> {
    let token = entry.split(char::is_whitespace).next()?;
    let token = token.strip_suffix(':').unwrap_or(token);
    let ok = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_alphanumeric() || "._$[]-".contains(c))
    };
    if let Some((name, rest)) = token.split_once('(') {
        let class = rest.split(')').next()?;
        if !ok(name) || !ok(class) || !class.contains('.') {
            return None;
        }
        // `ATest.b(com.x.ATest)` and `com.x.ATest.b(com.x.ATest)` are `com.x.ATest.b` too.
        let method = match name.rsplit_once('.') {
            Some((c, m)) if class == c || class.ends_with(&format!(".{c}")) => m,
            Some(_) => return Some((name.to_string(), true)),
            None => name,
        };
        let id = format!("{class}.{method}");
        return Some((id, true));
    }
    // `Class.method:42->helper:68`: the part before the first line number.
    let head = token.split(':').next()?;
    let head = head.split("->").next()?;
    let id = match head.split_once('>') {
        Some((class, inherited)) => format!("{class}.{}", inherited.rsplit('.').next()?),
        None => head.to_string(),
    };
    (ok(&id) && id.contains('.') && !id.starts_with('.') && !id.ends_with('.'))
        .then_some((id, false))
}

/// The tests of a whole log, read line by line (for callers without a matcher: JUnit-less
/// tools, tests). The matcher's pass gives the same.
pub fn extract(log: &str) -> TestOutcomes {
    let mut t = TestLines::default();
    for (i, raw) in log.lines().enumerate() {
        let text = super::normalize::normalize_line(raw.as_bytes());
        t.consider_any(i as u64 + 1, &text);
    }
    t.finish()
}

#[cfg(test)]
mod tests;
