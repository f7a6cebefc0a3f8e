//! Failing tests out of raw job logs: which tests a log's test runners name as failed, and which
//! failed and then passed on a retry in the same job (flaky in the job, not a failure of it).
//!
//! The runners' line forms are a table ([`runners::FORMS`]), like the telling-line forms. The
//! extractor rides the matcher's one pass over the log: every form's literals ([`ANCHORS`]) join
//! the matcher's prefilter, which hands [`TestLines::consider`] exactly the lines holding one;
//! no line is scanned twice. Mocha's failure summary names its tests on lines with no literal of
//! their own, so after its `N failing` header the extractor asks for the lines that follow
//! ([`TestLines::wants_lines`]), a bounded number of them.
//!
//! An id keeps its parameters (`tests/x.py::test_y[3.14t]`) and has a family without them. A
//! test whose failure the runner retried and which then passed (pytest-rerunfailures' `RERUN`
//! with no final `FAILED`, nextest's `FLAKY`, surefire's `Flakes:`) is flaky in the job. What no
//! form reads yields nothing: a wrong id is worse than none.
//!
//! [`VERSION`] joins the classification fingerprint: when a form changes, stored logs are
//! re-extracted.

pub mod junit;
pub mod runners;

use std::collections::BTreeMap;
use std::sync::{LazyLock, OnceLock};

use regex::{Regex, RegexSet};

use crate::model::{TestOutcomes, TestRecord};
use runners::{
    FORMS, Family, Form, IdStyle, MOCHA_ANCHOR, MOCHA_HEADER, MOCHA_SECTION_LINES, Outcome,
};

/// Bumped whenever a form or the outcome rules change: stored classifications are redone.
pub const VERSION: u32 = 1;

/// Most tests recorded per log (a log of ten thousand failures names the first ones).
pub const MAX_TESTS: usize = 1_000;

/// Every literal a test line holds (the forms' anchors and mocha's header), each once.
pub(crate) static ANCHORS: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    let mut all: Vec<&'static str> = FORMS
        .iter()
        .flat_map(|f| f.anchors.iter().copied())
        .chain([MOCHA_ANCHOR, SUREFIRE_FLAKES])
        .collect();
    all.sort_unstable();
    all.dedup();
    all
});

/// Surefire's `[WARNING] Flakes:` section: the tests after it passed on a rerun.
const SUREFIRE_FLAKES: &str = "Flakes:";

struct Compiled {
    set: RegexSet,
    /// Each form's regex (for its captures), compiled when a line first matches the form.
    each: Vec<OnceLock<Regex>>,
    mocha_header: Regex,
    mocha_entry: Regex,
}

static COMPILED: LazyLock<Compiled> = LazyLock::new(|| Compiled {
    set: RegexSet::new(FORMS.iter().map(|f| f.pattern)).expect("the test forms compile (tested)"),
    each: FORMS.iter().map(|_| OnceLock::new()).collect(),
    mocha_header: Regex::new(MOCHA_HEADER).expect("compiles"),
    mocha_entry: Regex::new(r"^(\s*)\d+\) (.+)$").expect("compiles"),
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
        return Some(Reading {
            id,
            outcome,
            form: i,
        });
    }
    None
}

fn id_of(form: &Form, caps: &regex::Captures<'_>) -> Option<String> {
    let id = match form.id {
        IdStyle::Plain => caps.name("id")?.as_str().trim().to_string(),
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
}

/// Collects the tests of one log as it streams by.
#[derive(Debug)]
pub(crate) struct TestLines {
    seen: BTreeMap<String, Seen>,
    section: Section,
}

impl Default for TestLines {
    fn default() -> Self {
        TestLines {
            seen: BTreeMap::new(),
            section: Section::None,
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
            self.note(
                r.id,
                form.runner,
                form.family,
                form.secondary,
                line,
                r.outcome,
            );
            return;
        }
        if text.contains(MOCHA_ANCHOR) && COMPILED.mocha_header.is_match(text) {
            self.section = Section::Mocha {
                until: line + MOCHA_SECTION_LINES,
                entry: None,
            };
        } else if text.starts_with("[WARNING] Flakes:") {
            self.section = Section::SurefireFlakes {
                until: line + MOCHA_SECTION_LINES,
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
    ) {
        if !self.seen.contains_key(&id) && self.seen.len() >= MAX_TESTS {
            return;
        }
        let seen = self.seen.entry(id).or_insert(Seen {
            runner,
            family,
            line,
            failed: false,
            rerun: false,
            passed: false,
            secondary,
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
