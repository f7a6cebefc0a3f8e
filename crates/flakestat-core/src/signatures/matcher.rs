//! [`SignatureSet`]: every signature compiled into one matcher, and the scan of a log.
//!
//! How a log is scanned (the inner loop of every survey):
//! 1. The log is cut into chunks of whole lines ([`CHUNK`] bytes), so memory does not depend on
//!    the log's size.
//! 2. Every signature's required literals (see `literals`), the `##[group]` marker and the
//!    telling-line markers are reduced to a few dozen *anchors* (common factors, and windows that
//!    start with uncommon bytes) such that each literal holds one. Leftmost-first searches for
//!    the anchors over the raw chunk (aho-corasick's SIMD Teddy) find the next line holding any
//!    literal (literals never span lines, so no such line is skipped); an overlapping search of
//!    that line alone for the literals themselves yields the signatures that could match there.
//! 3. Lines that hold an escape sequence, a BOM, a C1 control or invalid UTF-8 cannot be trusted
//!    to show a literal in raw form; they are found with `memchr` and always normalized and
//!    searched again. Every other line's normalized text is a sub-slice of the raw chunk.
//! 4. Only on those candidate lines do the signatures' regexes run. Signatures without a usable
//!    literal run on every line.
//! 5. Lines longer than `LONG_LINE` are found first (`long_lines`), kept out of the finders'
//!    passes, and searched with fewer anchors: their head for everything, the rest for what can
//!    matter there.
//!
//! [`SignatureSet::classify_reference`] is the naive line-by-line reference the tests compare
//! this against.

use std::collections::BTreeSet;
use std::io::{self, Read};

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};
use regex::bytes::Regex;

use super::literals::{anchors, line_start_prefixes, required_literals};
use super::long_lines::{self, LONG_LINE, LongLineSearch};
use super::normalize::{
    LEADS, group_title, is_exit_code_boilerplate, normalize_into, plain_text, strip_prefix,
};
use super::telling::{self, MARKERS, TellingLines};
use super::testids::{self, TestLines};
use super::{Problem, SignatureError, SignatureSpec, bounded_text};
use crate::model::{Classification, SignatureInfo, SignatureMatch};

/// Bytes of log handled at a time by [`SignatureSet::classify_reader`].
pub const CHUNK: usize = 8 << 20;
/// Longest line kept whole when streaming; the rest of a longer line is dropped.
pub const MAX_LINE: usize = 64 << 20;
/// Most line numbers recorded per match (`count` stays exact beyond it).
pub const MAX_LINES_PER_MATCH: usize = 100_000;
/// Most distinct test ids recorded per match.
pub const MAX_TESTS_PER_MATCH: usize = 1_000;

const _: () = assert!(LONG_LINE <= super::MAX_TEXT, "a short line is judged whole");
/// Most anchors in one candidate-line finder. Measured on the benchmark corpus with PyTorch's
/// rules (91 anchors of four bytes or more): two finders of 46 beat one of 91 (Teddy takes at
/// most 64; past that no SIMD search) and three of 31 (one more pass over the text).
const FINDER_LITERALS: usize = 48;
/// Most rules waiting to be tried ([`Scan::run_rules`]) before they are run mid-chunk: memory
/// stays bounded whatever the signatures (a rule without literals is tried on every line).
const MAX_PENDING: usize = 4096;
/// A finder not yet run since the chunk's start or its last long line.
const UNSEARCHED: usize = usize::MAX;

thread_local! {
    static READ_BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Bumped whenever normalization or matching semantics change, so stored classifications made
/// by an older flakestat are redone.
const MATCHER_VERSION: u32 = 3;

struct Rule {
    pattern: Regex,
    test: Option<Regex>,
    exclude: Vec<Regex>,
}

/// What one literal of the automaton stands for.
#[derive(Default, Clone)]
struct Target {
    rules: Vec<u32>,
    group: bool,
    telling: bool,
    /// A test runner's literal (see `testids`).
    tests: bool,
    /// The telling-line forms holding this literal (bit `i`: form `i`; see
    /// `telling::form_literals`).
    forms: u128,
}

/// Every signature compiled into one matcher. `Send + Sync`: classify on any number of threads.
pub struct SignatureSet {
    specs: Vec<SignatureSpec>,
    rules: Vec<Rule>,
    /// Every literal, for an overlapping search of one candidate line.
    automaton: LiteralSearch,
    /// The anchors in groups, to find the next candidate line fast.
    finders: Vec<AhoCorasick>,
    /// How a line longer than [`LONG_LINE`] is searched beyond its head.
    long: LongLineSearch,
    targets: Vec<Target>,
    /// Whether a literal holds U+FFFD, which lossy decoding of invalid UTF-8 produces.
    literal_has_replacement: bool,
    /// Rules with no usable literal: run on every line.
    always: Vec<u32>,
    fingerprint: String,
}

impl std::fmt::Debug for SignatureSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignatureSet")
            .field("signatures", &self.specs.len())
            .field("literals", &self.targets.len())
            .field("always", &self.always.len())
            .finish()
    }
}

/// The automaton of every literal, for the overlapping search of a candidate line. A DFA is the
/// fastest to search but the slowest part of the matcher to build (4-5 ms for PyTorch's 195
/// literals, against 0.6 ms for a contiguous NFA, on the 2-CPU bench machine): the NFA is built
/// at once and searches the first lines, while the DFA is built on a thread of its own and
/// takes over when it is ready. Both find the same matches, so what is found does not depend
/// on which one searched.
struct LiteralSearch {
    nfa: AhoCorasick,
    dfa: std::sync::Arc<std::sync::OnceLock<AhoCorasick>>,
}

impl LiteralSearch {
    fn new(literals: &[Vec<u8>]) -> Result<LiteralSearch, SignatureError> {
        let builder = |kind| {
            let mut b = AhoCorasickBuilder::new();
            // No prefilter: a candidate line is short or a window around an anchor's hit, where
            // the prefilter's calls cost more than they skip (25 alternating runs of
            // `classify`: 2 % less wall time on the dense corpus, 5 % on the routine one).
            b.match_kind(MatchKind::Standard)
                .kind(Some(kind))
                .prefilter(false);
            b
        };
        let nfa = builder(AhoCorasickKind::ContiguousNFA)
            .build(literals)
            .map_err(search_error)?;
        let dfa = std::sync::Arc::new(std::sync::OnceLock::new());
        let (cell, literals) = (dfa.clone(), literals.to_vec());
        // Not waited for: a set dropped first leaves it to finish alone. (A DFA that cannot be
        // built, past aho-corasick's limits, leaves the NFA searching.)
        std::thread::spawn(move || {
            if let Ok(dfa) = builder(AhoCorasickKind::DFA).build(&literals) {
                let _ = cell.set(dfa);
            }
        });
        Ok(LiteralSearch { nfa, dfa })
    }

    /// The DFA when it is ready, else the NFA.
    fn get(&self) -> &AhoCorasick {
        self.dfa.get().unwrap_or(&self.nfa)
    }
}

/// A problem for every id defined twice (`specs` sorted by id).
fn duplicate_ids(specs: &[SignatureSpec]) -> Vec<Problem> {
    let mut problems = Vec::new();
    for pair in specs.windows(2) {
        if pair[0].id == pair[1].id {
            problems.push(Problem {
                file: pair[1].source.clone(),
                position: None,
                key: None,
                message: format!(
                    "signature id `{}` is also defined by {}; ids must be unique",
                    pair[1].id,
                    pair[0].source.display()
                ),
            });
        }
    }
    problems
}

/// The literals every match of a rule's pattern contains; `None`: no usable ones.
type RequiredLiterals = Option<Vec<Vec<u8>>>;
/// The prefixes one of which begins every match of a rule's pattern, all at the line's start;
/// `None`: its matches may begin elsewhere, or with too many prefixes.
type LinePrefixes = Option<Vec<Vec<u8>>>;

/// Each spec's regexes, the literals every match of its pattern must contain (`None`: it
/// must be tried on every line) and its line-start prefixes. A regex that does not compile
/// adds a problem; a spec whose pattern does not compile has no rule.
fn compile_rules(
    specs: &[SignatureSpec],
    problems: &mut Vec<Problem>,
) -> (Vec<Rule>, Vec<RequiredLiterals>, Vec<LinePrefixes>) {
    // Each spec compiles on its own: on several threads, results in the specs' order.
    let compiled = super::par_map(specs, |spec| {
        let mut problems = Vec::new();
        let mut compile = |key: &str, pattern: &str| {
            super::compile_regex(pattern)
                .map_err(|e| {
                    problems.push(Problem {
                        file: spec.source.clone(),
                        position: None,
                        key: Some(key.to_string()),
                        message: format!("regex does not compile: {e}"),
                    })
                })
                .ok()
        };
        let pattern = compile("pattern", &spec.pattern);
        let test = spec.test.as_deref().and_then(|t| compile("test", t));
        let exclude: Vec<Regex> = spec
            .exclude
            .iter()
            .filter_map(|x| compile("exclude", x))
            .collect();
        let rule = pattern.map(|pattern| {
            let hir = regex_syntax::parse(&spec.pattern).ok();
            let literals = hir.as_ref().and_then(required_literals);
            let prefixes = hir.as_ref().and_then(line_start_prefixes);
            let rule = Rule {
                pattern,
                test,
                exclude,
            };
            (rule, literals, prefixes)
        });
        (rule, problems)
    });
    let mut rules = Vec::with_capacity(specs.len());
    let mut literal_sets = Vec::with_capacity(specs.len());
    let mut prefixes = Vec::with_capacity(specs.len());
    for (rule, mut found) in compiled {
        problems.append(&mut found);
        // A spec whose pattern does not compile has no rule.
        if let Some((rule, literals, starts)) = rule {
            rules.push(rule);
            literal_sets.push(literals);
            prefixes.push(starts);
        }
    }
    (rules, literal_sets, prefixes)
}

/// The literals searched for, what each one's match means, and the rules without literals.
struct Targets {
    literals: Vec<Vec<u8>>,
    targets: Vec<Target>,
    always: Vec<u32>,
    /// `literals[..searched]` decide which lines are looked at (the anchors hold them); the
    /// rest are the telling-line forms' own literals, only ever searched for on such a line.
    searched: usize,
}

impl Targets {
    /// One target per distinct literal of `literal_sets` (rule `i`'s literals point at rule
    /// `i`), then the `##[group]` marker and the telling-line markers.
    fn of(literal_sets: &[RequiredLiterals]) -> Targets {
        let mut t = Targets {
            literals: Vec::new(),
            targets: Vec::new(),
            always: Vec::new(),
            searched: 0,
        };
        let mut index = std::collections::HashMap::<Vec<u8>, usize>::new();
        let mut slot = |lit: &[u8], t: &mut Targets| {
            *index.entry(lit.to_vec()).or_insert_with(|| {
                t.literals.push(lit.to_vec());
                t.targets.push(Target::default());
                t.literals.len() - 1
            })
        };
        for (i, set) in literal_sets.iter().enumerate() {
            match set {
                Some(set) => {
                    for lit in set {
                        let at = slot(lit, &mut t);
                        if !t.targets[at].rules.contains(&(i as u32)) {
                            t.targets[at].rules.push(i as u32);
                        }
                    }
                }
                None => t.always.push(i as u32),
            }
        }
        let at = slot(b"##[group]", &mut t);
        t.targets[at].group = true;
        for marker in MARKERS {
            let at = slot(marker.as_bytes(), &mut t);
            t.targets[at].telling = true;
        }
        for anchor in testids::ANCHORS.iter() {
            let at = slot(anchor.as_bytes(), &mut t);
            t.targets[at].tests = true;
        }
        t.searched = t.literals.len();
        // The forms' literals ride the same overlapping search of a candidate line (it runs
        // anyway), instead of a second search of the line by the forms' own automaton.
        for (lit, forms) in telling::form_literals() {
            let at = slot(lit, &mut t);
            t.targets[at].forms |= forms;
        }
        t
    }
}

fn search_error(e: aho_corasick::BuildError) -> SignatureError {
    SignatureError::Invalid {
        problems: vec![Problem {
            file: "signatures".into(),
            position: None,
            key: None,
            message: format!("cannot build the literal search: {e}"),
        }],
    }
}

/// The finders of the anchors of `literals[..searched]`, the literals that decide which lines
/// are looked at. (The telling-line forms' own literals, `literals[searched..]`, are looked for
/// only in a line found so: a whole short line, the head of a long one.)
fn line_finders(literals: &[Vec<u8>], searched: usize) -> Result<Vec<AhoCorasick>, SignatureError> {
    anchor_finders(anchors(&literals[..searched]))
}

/// How a long line is searched beyond its head (see `long_lines`): for the literals of
/// `literals` (those that decide which lines are looked at, with their `targets`) that matter
/// there, those of the test runners and of the rules whose matches may begin anywhere in a line
/// (`prefixes[rule]` is `None`). The markers, `##[group]` and the forms' literals matter only in
/// the head, and the other rules are tried when the line begins with one of their prefixes.
fn long_line_search(
    literals: &[Vec<u8>],
    targets: &[Target],
    prefixes: &[LinePrefixes],
) -> Result<LongLineSearch, SignatureError> {
    let beyond_head: Vec<Vec<u8>> = literals
        .iter()
        .zip(targets)
        .filter(|(_, t)| t.tests || t.rules.iter().any(|&r| prefixes[r as usize].is_none()))
        .map(|(l, _)| l.clone())
        .collect();
    let finders = anchor_finders(anchors(&beyond_head))?;
    Ok(LongLineSearch::new(finders, &beyond_head, prefixes))
}

/// Leftmost-first automata over `anchors`, in groups: aho-corasick's SIMD (Teddy) prefilter
/// takes a limited number of patterns, so the anchors go in groups searched one after the
/// other. Teddy compares the first bytes of every anchor of a group, as many as its shortest
/// anchor has (at most 4): one anchor of three bytes (`e: `) makes a whole group stop on every
/// `e: ` and on every other three-byte fingerprint to verify. So the anchors shorter than four
/// bytes (usually a handful: `e: `, `●`, `×`) get a group of their own (few patterns: a fast
/// search of eight buckets), and the longer ones go in groups of at most [`FINDER_LITERALS`],
/// in sorted order (anchors sharing a prefix share a bucket). Measured on the benchmark
/// corpus with PyTorch's rules (8 short anchors, 91 long): 66 ms for one pass of each group
/// against 86 ms when the short ones were spread over three groups of 33.
fn anchor_finders(mut anchors: Vec<Vec<u8>>) -> Result<Vec<AhoCorasick>, SignatureError> {
    if anchors.is_empty() {
        return Ok(Vec::new());
    }
    anchors.sort_unstable();
    let (short, long): (Vec<Vec<u8>>, Vec<Vec<u8>>) =
        anchors.into_iter().partition(|a| a.len() < 4);
    // Groups of equal size, as few as FINDER_LITERALS allows.
    let size = |list: &[Vec<u8>]| {
        let groups = list.len().div_ceil(FINDER_LITERALS).max(1);
        list.len().div_ceil(groups).max(1)
    };
    short
        .chunks(size(&short))
        .chain(long.chunks(size(&long)))
        .map(|group| {
            // Teddy (the automaton's prefilter) reports the matches itself, so the automaton
            // under it is barely used: the NFA that is quickest to build, not the DFA that
            // aho-corasick picks for so few patterns (1.1 ms of every start for PyTorch's
            // three groups, against 0.2 ms; the same search time).
            AhoCorasickBuilder::new()
                .match_kind(MatchKind::LeftmostFirst)
                .kind(Some(AhoCorasickKind::NoncontiguousNFA))
                .build(group)
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(search_error)
}

impl SignatureSet {
    /// Compiles specs (from any source) into a matcher; specs are sorted by id. Fails on a
    /// duplicate id or a regex that does not compile, naming every one.
    pub fn compile(mut specs: Vec<SignatureSpec>) -> Result<SignatureSet, SignatureError> {
        specs.sort_by(|a, b| a.id.cmp(&b.id));
        let mut problems = duplicate_ids(&specs);
        let (rules, literal_sets, prefixes) = compile_rules(&specs, &mut problems);
        if !problems.is_empty() {
            return Err(SignatureError::Invalid { problems });
        }
        let Targets {
            literals,
            targets,
            always,
            searched,
        } = Targets::of(&literal_sets);
        let automaton = LiteralSearch::new(&literals)?;
        let finders = line_finders(&literals, searched)?;
        let long = long_line_search(&literals[..searched], &targets, &prefixes)?;
        let fingerprint = fingerprint(&specs);
        Ok(SignatureSet {
            specs,
            rules,
            automaton,
            finders,
            long,
            targets,
            literal_has_replacement: literals[..searched]
                .iter()
                .any(|l| l.windows(3).any(|w| w == "\u{fffd}".as_bytes())),
            always,
            fingerprint,
        })
    }

    /// The specs, sorted by id.
    pub fn specs(&self) -> &[SignatureSpec] {
        &self.specs
    }

    /// What the analysis needs of each signature, sorted by id.
    pub fn info(&self) -> Vec<SignatureInfo> {
        self.specs
            .iter()
            .map(|s| SignatureInfo {
                id: s.id.clone(),
                title: s.title.clone(),
                paths: s.paths.clone(),
                issue: s.issue.clone(),
            })
            .collect()
    }

    /// A stable hash of everything that decides a classification (ids, patterns, test regexes,
    /// excludes, and the matcher's own version); titles, paths and examples do not count. The
    /// store re-classifies its logs when it changes.
    pub fn fingerprint(&self) -> String {
        self.fingerprint.clone()
    }

    /// Ids of signatures that have no usable literal and so run on every line (slower).
    pub fn unfiltered(&self) -> Vec<&str> {
        self.always
            .iter()
            .map(|&i| self.specs[i as usize].id.0.as_str())
            .collect()
    }

    /// Classifies a whole log held in memory.
    pub fn classify(&self, log: &[u8]) -> Classification {
        let mut scan = Scan::new(self);
        let mut rest = log;
        while !rest.is_empty() {
            let cut = if rest.len() <= CHUNK {
                rest.len()
            } else {
                memchr::memchr(b'\n', &rest[CHUNK..]).map_or(rest.len(), |i| CHUNK + i + 1)
            };
            scan.feed(&rest[..cut]);
            rest = &rest[cut..];
        }
        scan.finish()
    }

    /// Classifies a log read from `r` in chunks: memory stays bounded (about [`CHUNK`] bytes
    /// plus the longest line, at most [`MAX_LINE`]) whatever the log's size.
    pub fn classify_reader(&self, r: impl Read) -> io::Result<Classification> {
        self.classify_chunked(r, CHUNK, MAX_LINE)
    }

    /// [`classify_reader`](Self::classify_reader) with `chunk` for [`CHUNK`] and `max_line` for
    /// [`MAX_LINE`] (small ones in tests).
    fn classify_chunked(
        &self,
        mut r: impl Read,
        chunk: usize,
        max_line: usize,
    ) -> io::Result<Classification> {
        let mut scan = Scan::new(self);
        // Reuse this thread's buffer. Its bytes are `buf[..]` (its length is what was read);
        // reads go into its spare capacity, a little more at a time (`read_to_end`), so a
        // small log touches only the pages it fills (zeroing a whole chunk for every log cost
        // more than a small log's whole scan).
        let mut buf = READ_BUFFER.with(|b| std::mem::take(&mut *b.borrow_mut()));
        buf.clear();
        let mut capacity = chunk;
        buf.reserve_exact(capacity);
        // After cutting an over-long line: drop bytes up to its end.
        let mut skipping = false;
        loop {
            if buf.len() == capacity {
                // No newline in a full buffer: one line is longer than the buffer.
                if capacity < max_line {
                    capacity = (capacity * 2).min(max_line);
                    buf.reserve_exact(capacity - buf.len());
                } else {
                    scan.feed(&buf);
                    buf.clear();
                    skipping = true;
                }
            }
            let before = buf.len();
            // Fills the buffer up to its capacity or the end of the log (pipes and zip entries
            // deliver small reads); `Interrupted` is retried.
            let n = r
                .by_ref()
                .take((capacity - before) as u64)
                .read_to_end(&mut buf)?;
            if n == 0 {
                if !buf.is_empty() && !skipping {
                    scan.feed(&buf);
                }
                break;
            }
            if skipping {
                // Drop the rest of the over-long line, up to and including its newline.
                match memchr::memchr(b'\n', &buf[before..]) {
                    Some(i) => {
                        buf.drain(before..=before + i);
                        skipping = false;
                    }
                    None => {
                        buf.truncate(before);
                        continue;
                    }
                }
            }
            if let Some(nl) = memchr::memrchr(b'\n', &buf) {
                scan.feed(&buf[..=nl]);
                buf.drain(..=nl);
                if capacity > chunk && buf.len() < chunk {
                    capacity = chunk;
                    buf.shrink_to(chunk);
                }
            }
        }
        READ_BUFFER.with(|b| *b.borrow_mut() = buf);
        Ok(scan.finish())
    }

    /// The naive reference: every line normalized, every signature's regex run on every line.
    /// Slow; for tests that check the fast path finds exactly the same.
    #[doc(hidden)]
    pub fn classify_reference(&self, log: &[u8]) -> Classification {
        let mut scan = Scan::new(self);
        let all: Vec<u32> = (0..self.rules.len() as u32).collect();
        let mut text = String::new();
        let mut lines = log.split(|&b| b == b'\n').peekable();
        let mut number = 0;
        while let Some(raw) = lines.next() {
            if lines.peek().is_none() && raw.is_empty() {
                break;
            }
            number += 1;
            normalize_into(raw, &mut text);
            scan.step_line(&text);
            let stamped = is_stamped(raw);
            if scan.telling.annotation_open() && !stamped {
                scan.telling.attach(&text);
            } else {
                scan.telling.consider(number, &text, stamped);
            }
            scan.tests.consider_any(number, &text);
            if !is_exit_code_boilerplate(&text) {
                let step = scan.steps.last().expect("the current step is always kept");
                for &r in &all {
                    try_rule(
                        &mut scan.found[r as usize],
                        &self.rules[r as usize],
                        number,
                        text.as_bytes(),
                        step,
                    );
                }
            }
        }
        scan.finish()
    }
}

/// Tries `rule` on one line (number `number`, text `text`, in step `step`), recording a match
/// in `found`.
fn try_rule(
    found: &mut Option<Found>,
    rule: &Rule,
    number: u64,
    text: &[u8],
    step: &Option<String>,
) {
    if !rule.pattern.is_match(text) || rule.exclude.iter().any(|x| x.is_match(text)) {
        return;
    }
    let as_str = String::from_utf8_lossy(text);
    let found = found.get_or_insert_with(|| Found {
        first: number,
        text: bounded_text(&as_str),
        step: step.clone(),
        count: 0,
        lines: Vec::new(),
        tests: BTreeSet::new(),
    });
    found.count += 1;
    if found.lines.len() < MAX_LINES_PER_MATCH {
        found.lines.push(number);
    }
    if let Some(test) = &rule.test
        && found.tests.len() < MAX_TESTS_PER_MATCH
        && let Some(m) = test.captures(text).and_then(|c| c.name("test"))
    {
        found
            .tests
            .insert(bounded_text(&String::from_utf8_lossy(m.as_bytes())));
    }
}

/// Adds to `windows` the stretch of `text` around every hit of `finder`, wide enough to hold
/// every literal (at most `reach` bytes long) holding an anchor found there.
/// Non-overlapping hits suffice: an anchor hidden under another hit starts within that hit.
/// So `reach` on either side of the hit is enough: a literal holding an anchor that starts at
/// `a` (the hit's start, or within it) starts after `a - reach` and ends before `a + reach`.
fn anchor_windows(
    finder: &AhoCorasick,
    text: &[u8],
    reach: usize,
    windows: &mut Vec<(usize, usize)>,
) {
    for m in finder.find_iter(text) {
        windows.push((
            m.start().saturating_sub(reach),
            (m.end() + reach).min(text.len()),
        ));
    }
}

/// Whether a raw line (without its LF) begins with a GitHub timestamp, after any BOMs.
fn is_stamped(raw: &[u8]) -> bool {
    let mut raw = raw;
    while let Some(rest) = raw.strip_prefix("\u{feff}".as_bytes()) {
        raw = rest;
    }
    super::normalize::timestamp_len(raw) > 0
}

fn fingerprint(specs: &[SignatureSpec]) -> String {
    // FNV-1a, 64 bits: stable across Rust versions and platforms, unlike std's hasher.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes.iter().chain(&[0xff]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    eat(&MATCHER_VERSION.to_le_bytes());
    eat(&testids::VERSION.to_le_bytes());
    for spec in specs {
        eat(spec.id.0.as_bytes());
        eat(spec.pattern.as_bytes());
        eat(spec.test.as_deref().unwrap_or("\u{0}none").as_bytes());
        for x in &spec.exclude {
            eat(x.as_bytes());
        }
        eat(b"\x00end");
    }
    format!("v{MATCHER_VERSION}-{h:016x}")
}

/// What one signature found so far in one log.
struct Found {
    first: u64,
    text: String,
    step: Option<String>,
    count: u64,
    lines: Vec<u64>,
    tests: BTreeSet<String>,
}

/// The state of one log's scan.
struct Scan<'s> {
    set: &'s SignatureSet,
    /// Lines consumed so far.
    lines: u64,
    step_is_run: bool,
    found: Vec<Option<Found>>,
    telling: TellingLines,
    tests: TestLines,
    finder_hits: Vec<usize>,
    dirty: Vec<usize>,
    /// This chunk's lines longer than [`LONG_LINE`] (`long_lines::find`).
    long_lines: Vec<(usize, usize)>,
    candidates: Vec<u32>,
    /// Scratch: the stretches of a long line to search.
    windows: Vec<(usize, usize)>,
    /// Scratch: the rules to try on the current line.
    rules: Vec<u32>,
    text: String,
    /// The rules to try on this chunk's lines, run when the chunk is done
    /// ([`run_rules`](Self::run_rules)) one rule after the other: a rule's regex then runs on
    /// all its lines of the chunk in a row, while its lazy DFA's states are still in the CPU's
    /// caches, instead of once between two other lines' work.
    pending: Vec<Pending>,
    /// The normalized text of this chunk's pending lines that are not the chunk's bytes.
    arena: String,
    /// The steps this chunk's lines belong to, the current one last ([`Pending::step`]); never
    /// empty.
    steps: Vec<Option<String>>,
    /// The most rules that ever waited at once (tests check the [`MAX_PENDING`] bound).
    #[cfg(test)]
    most_pending: usize,
}

/// One rule to try on one line of the chunk being scanned.
struct Pending {
    rule: u32,
    number: u64,
    text: PendingText,
    /// Index in [`Scan::steps`].
    step: u32,
}

/// Where a pending line's text is: the chunk's bytes, or the scan's arena.
#[derive(Clone, Copy)]
enum PendingText {
    Chunk(usize, usize),
    Arena(usize, usize),
}

impl<'s> Scan<'s> {
    fn new(set: &'s SignatureSet) -> Scan<'s> {
        Scan {
            set,
            lines: 0,
            step_is_run: false,
            found: (0..set.rules.len()).map(|_| None).collect(),
            telling: TellingLines::default(),
            tests: TestLines::default(),
            finder_hits: Vec::new(),
            dirty: Vec::new(),
            long_lines: Vec::new(),
            candidates: Vec::new(),
            windows: Vec::new(),
            rules: Vec::new(),
            text: String::new(),
            pending: Vec::new(),
            arena: String::new(),
            steps: vec![None],
            #[cfg(test)]
            most_pending: 0,
        }
    }

    /// Scans whole lines: `chunk` ends with `\n`, or is the end of the log.
    fn feed(&mut self, chunk: &[u8]) {
        if chunk.is_empty() {
            return;
        }
        self.dirty.clear();
        let [a, b, c] = LEADS;
        self.dirty.extend(memchr::memchr3_iter(a, b, c, chunk));
        // Lossy decoding only adds U+FFFD: a line with invalid UTF-8 but no literal in raw form
        // can only gain one if a literal holds U+FFFD. Otherwise such lines are checked when a
        // literal is found on them.
        if self.set.literal_has_replacement && std::str::from_utf8(chunk).is_err() {
            let mut at = 0;
            while let Err(e) = std::str::from_utf8(&chunk[at..]) {
                let bad = at + e.valid_up_to();
                self.dirty.push(bad);
                at = bad + e.error_len().unwrap_or(1);
                if at >= chunk.len() {
                    break;
                }
            }
            self.dirty.sort_unstable();
        }

        // The long lines are looked at one by one, whatever they hold: the finders stop at
        // the next one (`limit`) and never pass over it.
        let mut long_lines = std::mem::take(&mut self.long_lines);
        long_lines.clear();
        long_lines::find(chunk, &mut long_lines);
        let mut next_long = long_lines.iter().copied().peekable();

        let every_line = !self.set.always.is_empty();
        let mut d = 0;
        // Start of the first line not yet consumed, and the number of the line before it.
        let mut pos = 0;
        let mut number = self.lines;
        // Per finder, its first hit at or after `pos` and before `limit`, or `limit` (searched
        // lazily: one search per candidate line). Each search starts at a line start, so it
        // finds the first line holding any of its anchors: anchors never span lines.
        self.finder_hits.clear();
        self.finder_hits.resize(self.set.finders.len(), UNSEARCHED);
        while pos < chunk.len() {
            let limit = next_long.peek().map_or(chunk.len(), |&(start, _)| start);
            if pos == limit {
                let (start, end) = next_long.next().expect("a long line starts here");
                number += 1;
                self.take_line(chunk, start..end, number, true, every_line, &mut d);
                pos = end + 1;
                self.finder_hits.fill(UNSEARCHED);
                continue;
            }
            let mut next_hit = limit;
            for (k, finder) in self.set.finders.iter().enumerate() {
                let f = self.finder_hits[k];
                if f == UNSEARCHED || f < pos {
                    self.finder_hits[k] = finder
                        .find(aho_corasick::Input::new(chunk).range(pos..limit))
                        .map_or(limit, |m| m.start());
                }
                next_hit = next_hit.min(self.finder_hits[k]);
            }
            let next_hit = (next_hit < limit).then_some(next_hit);
            // An open `##[error]` annotation: the next line may be one of its continuation
            // lines, whatever it holds.
            let start = if every_line || self.telling.annotation_open() || self.tests.wants_lines()
            {
                pos
            } else {
                let dirty = self.dirty.get(d).copied().filter(|&dp| dp < limit);
                let next = match (next_hit, dirty) {
                    (Some(hp), Some(dp)) => hp.min(dp),
                    (Some(hp), None) => hp,
                    (None, Some(dp)) => dp,
                    (None, None) if limit < chunk.len() => {
                        // Nothing to look at before the next long line.
                        number += memchr::memchr_iter(b'\n', &chunk[pos..limit]).count() as u64;
                        pos = limit;
                        continue;
                    }
                    (None, None) => break,
                };
                memchr::memrchr(b'\n', &chunk[pos..next]).map_or(pos, |i| pos + i + 1)
            };
            number += memchr::memchr_iter(b'\n', &chunk[pos..start]).count() as u64 + 1;
            let end = memchr::memchr(b'\n', &chunk[start..]).map_or(chunk.len(), |i| start + i);
            let hit = next_hit.is_some_and(|h| h >= start && h < end);
            self.take_line(chunk, start..end, number, hit, every_line, &mut d);
            pos = end + 1;
        }
        self.long_lines = long_lines;
        if pos < chunk.len() {
            number += memchr::memchr_iter(b'\n', &chunk[pos..]).count() as u64;
            if !chunk.ends_with(b"\n") {
                // The log's last line has no newline.
                number += 1;
            }
        }
        self.lines = number;
        self.run_rules(chunk);
    }

    /// Looks at the line `chunk[line]` (number `number`; `hit`: it is to be searched): it may
    /// need cleaning when one of the chunk's [`LEADS`] or bad bytes, from `dirty[*d]` on, lies
    /// in it (`*d` moves past them). Runs the waiting rules when they are too many.
    fn take_line(
        &mut self,
        chunk: &[u8],
        line: std::ops::Range<usize>,
        number: u64,
        hit: bool,
        every_line: bool,
        d: &mut usize,
    ) {
        let mut maybe_dirty = false;
        while self.dirty.get(*d).is_some_and(|&dp| dp < line.end) {
            maybe_dirty = true;
            *d += 1;
        }
        self.line(
            &chunk[line.clone()],
            line.start,
            number,
            hit,
            maybe_dirty || every_line,
            maybe_dirty,
        );
        if self.pending.len() >= MAX_PENDING {
            self.run_rules(chunk);
        }
    }

    /// Tries the rules gathered in `pending` on their lines of `chunk`, rule by rule, each
    /// rule's lines in log order (so its first match is the same as line by line).
    fn run_rules(&mut self, chunk: &[u8]) {
        #[cfg(test)]
        {
            self.most_pending = self.most_pending.max(self.pending.len());
        }
        // Stable: each rule's lines stay in log order.
        self.pending.sort_by_key(|p| p.rule);
        for p in &self.pending {
            let text = match p.text {
                PendingText::Chunk(s, e) => &chunk[s..e],
                PendingText::Arena(s, e) => &self.arena.as_bytes()[s..e],
            };
            try_rule(
                &mut self.found[p.rule as usize],
                &self.set.rules[p.rule as usize],
                p.number,
                text,
                &self.steps[p.step as usize],
            );
        }
        self.pending.clear();
        self.arena.clear();
        let current = self.steps.pop().flatten();
        self.steps.clear();
        self.steps.push(current);
    }

    /// One line that may matter: it holds an anchor, or is long (`hit`: it is searched), or
    /// holds bytes that may need cleaning, or every line must be seen (`check`). `at`: where
    /// the line starts in the chunk. `leads`: whether the chunk's scan for [`LEADS`] found one
    /// in the line (without one, only its UTF-8 is checked before it is searched as it stands).
    fn line(&mut self, raw: &[u8], at: usize, number: u64, hit: bool, check: bool, leads: bool) {
        // A line without a timestamp after an `##[error]` annotation is part of it.
        let mut continuation = false;
        if self.telling.annotation_open() {
            if is_stamped(raw) {
                self.telling.close_annotation();
            } else {
                continuation = true;
                if self.telling.wants_continuation() {
                    let text = super::normalize::normalize_line(raw);
                    self.telling.attach(&text);
                }
                if !hit && !check {
                    return;
                }
            }
        }
        let mut text = std::mem::take(&mut self.text);
        // The line's text, its UTF-8 checked once: as it stands (the timestamp and a trailing
        // CR cut off) when nothing else needs cleaning, else normalized into `text`.
        let plain = if hit || check {
            plain_text(raw, leads)
        } else {
            Some(std::str::from_utf8(strip_prefix(raw)).unwrap_or_default())
        };
        let normalized = plain.is_none();
        let as_str: &str = match plain {
            Some(plain) => plain,
            None => {
                normalize_into(raw, &mut text);
                &text
            }
        };
        let clean = as_str.as_bytes();
        self.candidates.clear();
        // A raw line with escape codes or BOMs may hide a literal it holds once normalized; the
        // fast finders tell whether it holds any before the slower overlapping search.
        let worth_searching =
            hit || (normalized && self.set.finders.iter().any(|f| f.find(clean).is_some()));
        let mut rules = std::mem::take(&mut self.rules);
        rules.clear();
        // A long line's head: whether it holds a marker, and the forms whose literals it holds.
        let mut head = None;
        if worth_searching {
            if clean.len() > LONG_LINE {
                head = Some(self.search_long(as_str, &mut rules));
            } else {
                for m in self.set.automaton.get().find_overlapping_iter(clean) {
                    self.candidates.push(m.pattern().as_u32());
                }
            }
        }

        let mut group = false;
        let mut telling = false;
        let mut tests = self.tests.wants_lines();
        let mut forms = 0u128;
        for &lit in &self.candidates {
            let target = &self.set.targets[lit as usize];
            group |= target.group;
            telling |= target.telling;
            tests |= target.tests;
            forms |= target.forms;
            rules.extend_from_slice(&target.rules);
        }
        rules.extend_from_slice(&self.set.always);
        if group {
            self.step_line(as_str);
        }
        if telling && !continuation {
            // A short line was searched whole, so `forms` holds every form whose literals it
            // holds. A long one is judged on its head alone (`telling::judged`: the text a
            // report shows of it), searched whole for markers and forms' literals.
            let (telling, forms) = head.unwrap_or((true, forms));
            if telling {
                self.telling
                    .consider_among(number, as_str, is_stamped(raw), Some(forms));
            }
        }
        if tests {
            self.tests.consider(number, as_str);
        }
        if !rules.is_empty() && !is_exit_code_boilerplate(as_str) {
            rules.sort_unstable();
            rules.dedup();
            // Where the line's text is, for `run_rules` at the chunk's end.
            let in_raw = (clean.as_ptr() as usize)
                .checked_sub(raw.as_ptr() as usize)
                .filter(|o| o + clean.len() <= raw.len());
            let text = match in_raw {
                Some(o) if !normalized => PendingText::Chunk(at + o, at + o + clean.len()),
                _ => {
                    let start = self.arena.len();
                    self.arena.push_str(as_str);
                    PendingText::Arena(start, self.arena.len())
                }
            };
            let step = (self.steps.len() - 1) as u32;
            self.pending.extend(rules.iter().map(|&rule| Pending {
                rule,
                number,
                text,
                step,
            }));
        }
        self.rules = rules;
        self.text = text;
    }

    /// Searches a line longer than [`LONG_LINE`] (see `long_lines`): its head, the text a telling
    /// line is judged on ([`telling::judged`]), whole for every literal; the rest only around the
    /// hits of the long-line anchors, which every literal that matters beyond the head holds (a
    /// literal holding one lies within the longest such literal's length of its hit). Puts the
    /// literals found into `self.candidates`, and into `rules` each rule whose matches all begin
    /// with a prefix the line begins with. Returns whether the head holds a marker, and the
    /// forms whose literals it holds.
    fn search_long(&mut self, text: &str, rules: &mut Vec<u32>) -> (bool, u128) {
        let set = self.set;
        let mut marker = false;
        let mut forms = 0;
        let head = telling::judged(text);
        // The head matters for its markers and `##[group]`, which hold anchors, and for the
        // forms' literals, which matter only beside a marker: without an anchor it holds
        // nothing to look for (its other literals are found with the rest of the line).
        if set.finders.iter().any(|f| f.find(head).is_some()) {
            for m in set.automaton.get().find_overlapping_iter(head) {
                let target = &set.targets[m.pattern().as_usize()];
                marker |= target.telling;
                forms |= target.forms;
                self.candidates.push(m.pattern().as_u32());
            }
        }
        let text = text.as_bytes();
        let mut windows = std::mem::take(&mut self.windows);
        windows.clear();
        for finder in &set.long.finders {
            anchor_windows(finder, text, set.long.reach, &mut windows);
        }
        self.search_windows(text, &mut windows);
        self.windows = windows;
        set.long.rules_at_start(text, rules);
        (marker, forms)
    }

    /// The overlapping search of `text` within `windows` (merged first), into
    /// `self.candidates`.
    fn search_windows(&mut self, text: &[u8], windows: &mut Vec<(usize, usize)>) {
        windows.sort_unstable();
        let mut merged_end = 0;
        let mut i = 0;
        // Merged in place: `windows[..i]` are disjoint and ordered.
        for j in 0..windows.len() {
            let (s, e) = windows[j];
            if i > 0 && s <= merged_end {
                merged_end = merged_end.max(e);
                windows[i - 1].1 = merged_end;
            } else {
                windows[i] = (s, e);
                merged_end = e;
                i += 1;
            }
        }
        windows.truncate(i);
        for &(s, e) in windows.iter() {
            for m in self.set.automaton.get().find_overlapping_iter(&text[s..e]) {
                self.candidates.push(m.pattern().as_u32());
            }
        }
    }

    /// Follows the step a line belongs to: `##[group]Run …` opens a step; other groups name
    /// the step only until the first `Run` step (the "Set up job" groups).
    fn step_line(&mut self, text: &str) {
        if let Some(title) = group_title(text) {
            let is_run = title.starts_with("Run ");
            if is_run || !self.step_is_run {
                self.step_is_run = is_run;
                self.steps.push(Some(bounded_text(title)));
            }
        }
    }

    fn finish(self) -> Classification {
        let matches = self
            .found
            .into_iter()
            .zip(&self.set.specs)
            .filter_map(|(found, spec)| {
                let f = found?;
                Some(SignatureMatch {
                    signature: spec.id.clone(),
                    line: f.first,
                    lines: f.lines,
                    text: f.text,
                    step: f.step,
                    count: f.count,
                    tests: f.tests,
                })
            })
            .collect();
        Classification {
            matches,
            error_lines: self.telling.finish(),
            tests: self.tests.finish(),
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::model::SignatureId;

    /// A signature of `pattern` alone (the extractors' tests use it too).
    pub(in crate::signatures) fn spec(id: &str, pattern: &str) -> SignatureSpec {
        SignatureSpec {
            id: SignatureId(id.into()),
            title: id.into(),
            pattern: pattern.into(),
            test: None,
            paths: vec![],
            issue: None,
            examples: Default::default(),
            exclude: vec![],
            source: format!("{id}.toml").into(),
        }
    }

    #[test]
    fn fingerprint_follows_what_decides_matches() {
        let base = || vec![spec("a", "boom"), spec("b", "bang")];
        let fp = |specs| SignatureSet::compile(specs).unwrap().fingerprint();
        let reference = fp(base());
        assert_eq!(reference, fp(base().into_iter().rev().collect()));
        let mut retitled = base();
        retitled[0].title = "Another title".into();
        retitled[0].paths = vec!["src/**".into()];
        assert_eq!(reference, fp(retitled));
        let mut repatterned = base();
        repatterned[0].pattern = "boom!".into();
        assert_ne!(reference, fp(repatterned));
        let mut excluded = base();
        excluded[1].exclude = vec!["noise".into()];
        assert_ne!(reference, fp(excluded));
        assert_ne!(reference, fp(vec![spec("a", "boom")]));
    }

    /// The NFA that searches first and the DFA that takes over find the same literals at the
    /// same places, overlapping ones included.
    #[test]
    fn both_literal_automata_find_the_same() {
        let literals: Vec<Vec<u8>> = ["error", "rror: ", "Error", "FAILED", "FAIL", "e: ", "×"]
            .iter()
            .map(|l| l.as_bytes().to_vec())
            .collect();
        let search = LiteralSearch::new(&literals).unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        let dfa = loop {
            if let Some(dfa) = search.dfa.get() {
                break dfa;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the DFA was never built"
            );
            std::thread::sleep(std::time::Duration::from_millis(1));
        };
        assert_ne!(dfa.kind(), search.nfa.kind());
        let found = |ac: &AhoCorasick, text: &str| -> Vec<(usize, usize)> {
            ac.find_overlapping_iter(text)
                .map(|m| (m.pattern().as_usize(), m.start()))
                .collect()
        };
        for text in [
            "FAILED tests/x.py::test_y - RuntimeError: boom",
            "error: error: Error × FAIL",
            "nothing here",
            "",
        ] {
            assert_eq!(found(&search.nfa, text), found(dfa, text), "{text}");
        }
        assert_eq!(found(dfa, "an error: x"), [(0, 3), (1, 4)], "overlapping");
    }

    #[test]
    fn send_and_sync() {
        fn assert<T: Send + Sync>() {}
        assert::<SignatureSet>();
    }

    #[test]
    fn matches_record_lines_step_and_count() {
        let set = SignatureSet::compile(vec![spec("boom", "^boom \\d+$")]).unwrap();
        let log = b"\xef\xbb\xbf2026-07-15T21:26:03.1234567Z ##[group]Run make\n\
2026-07-15T21:26:03.1234567Z boom 1\n\
2026-07-15T21:26:03.1234567Z \x1b[31mboom\x1b[0m 2\r\n\
2026-07-15T21:26:03.1234567Z ##[error]Process completed with exit code 1.\n";
        let c = set.classify(log);
        assert_eq!(c.matches.len(), 1);
        let m = &c.matches[0];
        assert_eq!((m.line, m.count, m.lines.clone()), (2, 2, vec![2, 3]));
        assert_eq!(m.text, "boom 1");
        assert_eq!(m.step.as_deref(), Some("Run make"));
        assert_eq!(c, set.classify_reference(log));
    }

    /// The rules run when a chunk is done, rule by rule (`run_rules`): each match still gets its
    /// first line, its text and the step its first line was in, whatever the other rules
    /// matched between, on a normalized line as on a plain one, and when the steps change in
    /// another chunk than the first match's.
    #[test]
    fn deferred_rules_keep_each_match_s_first_line_and_step() {
        let set = SignatureSet::compile(vec![
            spec("early", "^early (\\d+)"),
            spec("late", "late (\\d+)"),
        ])
        .unwrap();
        let stamp = "2026-07-15T21:26:03.1234567Z ";
        let mut log = String::new();
        let mut line = |text: &str| log.push_str(&format!("{stamp}{text}\n"));
        line("##[group]Set up job");
        line("nothing yet");
        line("##[endgroup]");
        line("##[group]Run build");
        line("early 1");
        line("\x1b[33mlate 1\x1b[0m");
        line("early 2");
        line("##[endgroup]");
        line("##[group]Run test");
        line("late 2");
        line("early 3");
        let log = log.into_bytes();
        let whole = set.classify(&log);
        let by_id = |c: &Classification, id: &str| {
            let m = c.matches.iter().find(|m| m.signature.0 == id).unwrap();
            (m.line, m.text.clone(), m.step.clone(), m.lines.clone())
        };
        assert_eq!(
            by_id(&whole, "early"),
            (
                5,
                "early 1".into(),
                Some("Run build".into()),
                vec![5, 7, 11]
            )
        );
        assert_eq!(
            by_id(&whole, "late"),
            (6, "late 1".into(), Some("Run build".into()), vec![6, 10])
        );
        assert_eq!(whole, set.classify_reference(&log));
        // Chunks of a line or two: the steps change in other chunks than the first matches.
        assert_eq!(set.classify_chunked(&log[..], 64, 1 << 20).unwrap(), whole);
    }

    /// More rules waiting than [`MAX_PENDING`] in one chunk are run mid-chunk: never more wait
    /// than the limit and one line's rules, and the matches, lines and steps are the reference's.
    #[test]
    fn many_waiting_rules_are_run_mid_chunk_with_the_same_result() {
        let set = SignatureSet::compile(vec![
            spec("boom", "boom (\\d+)"),
            spec("even", "boom \\d*[02468]$"),
        ])
        .unwrap();
        let mut log = String::new();
        for i in 0..3 * MAX_PENDING {
            if i % 1000 == 0 {
                log.push_str(&format!("##[group]Run part {}\n", i / 1000));
            }
            log.push_str(&format!("boom {i}\n"));
        }
        // One chunk, as `classify` feeds a log in memory.
        let mut scan = Scan::new(&set);
        scan.feed(log.as_bytes());
        assert!(
            (MAX_PENDING..MAX_PENDING + set.rules.len()).contains(&scan.most_pending),
            "{} rules waited at most",
            scan.most_pending
        );
        let c = scan.finish();
        assert_eq!(c, set.classify_reference(log.as_bytes()));
        let boom = c.matches.iter().find(|m| m.signature.0 == "boom").unwrap();
        assert_eq!(boom.count, 3 * MAX_PENDING as u64);
        assert_eq!(boom.step.as_deref(), Some("Run part 0"));
    }

    /// The continuation lines of an `##[error]` annotation are attached to it, in the fast path
    /// as in the reference, even when nothing on them is a literal the finders look for; a
    /// signature still matches a continuation line on its own.
    #[test]
    fn annotation_continuation_lines_are_attached_in_both_paths() {
        let set = SignatureSet::compile(vec![spec("refused", "ECONNREFUSED")]).unwrap();
        let log = "\u{feff}2026-07-15T21:26:03.1234567Z ##[group]Run npm test\n\
2026-07-15T21:26:03.1234567Z ##[endgroup]\n\
2026-07-15T21:26:09.0000001Z ##[error]Error: connect ECONNREFUSED 127.0.0.1:5432\n\
\x20   at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1607:16)\n\
\x1b[31mError: nested cause\x1b[0m\n\
\n\
2026-07-15T21:26:09.0000002Z npm ERR! Test failed.  See above for more details.\n\
2026-07-15T21:26:09.1000000Z ##[error]Process completed with exit code 1.\n";
        let c = set.classify(log.as_bytes());
        assert_eq!(c, set.classify_reference(log.as_bytes()));
        let streamed = set.classify_reader(std::io::Cursor::new(log)).unwrap();
        assert_eq!(c, streamed);
        assert_eq!(c.matches[0].line, 3);
        let annotation = c.error_lines.iter().find(|l| l.line == 3).unwrap();
        assert_eq!(
            annotation.text,
            "##[error]Error: connect ECONNREFUSED 127.0.0.1:5432\n    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1607:16)\nError: nested cause"
        );
        // Its continuation lines are not telling lines of their own; the stamped line after is.
        assert!(c.error_lines.iter().all(|l| !(4..=6).contains(&l.line)));
        assert!(c.error_lines.iter().any(|l| l.line == 7));
    }

    #[test]
    fn exit_code_line_never_matches() {
        let set = SignatureSet::compile(vec![spec("any-error", "^##\\[error\\]")]).unwrap();
        let c = set.classify(b"##[error]Process completed with exit code 2.\n");
        assert!(c.is_unclassified());
        assert_eq!(c.error_lines.len(), 1);
    }

    #[test]
    fn rule_without_literal_runs_on_every_line() {
        let set = SignatureSet::compile(vec![spec("digits", "^\\d+$")]).unwrap();
        assert_eq!(set.unfiltered(), vec!["digits"]);
        let c = set.classify(b"a\n12\nb\n34");
        assert_eq!(c.matches[0].lines, vec![2, 4]);
    }

    /// A reader that hands out a few bytes at a time, like a pipe.
    struct Trickle<'a>(&'a [u8], usize);

    impl std::io::Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.1 = (self.1 * 7 + 3) % 97 + 1;
            let n = self.1.min(buf.len()).min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn small_reads_give_the_same_result() {
        let set = SignatureSet::compile(vec![spec("boom", "boom (\\d+)"), spec("bang", "^bang")])
            .unwrap();
        let mut log = Vec::new();
        for i in 0..2000 {
            log.extend_from_slice(
                format!("2026-07-15T21:26:03.1234567Z line {i} boom {i}\r\n").as_bytes(),
            );
            log.extend_from_slice(b"bang\n\x1b[1mbang\x1b[0m");
        }
        let streamed = set.classify_reader(Trickle(&log, 0)).unwrap();
        assert_eq!(streamed, set.classify(&log));
        assert_eq!(streamed.matches[1].count, 2000);
        assert_eq!(streamed.matches[0].count, 4000);
    }

    /// A long line is searched for literals only around anchor hits: the telling-line forms'
    /// own literals far from any signature's anchor are still found, so the line gets the form
    /// the reference gives it (Java's `Caused by:`, ranked before a traceback's header; not
    /// the generic word `failed`, ranked after it); a signature's literal far into the line is
    /// found as well. A long line is judged as a telling line on its head alone (the text a
    /// report keeps of it): one whose only marker lies past it is not telling, in the reference
    /// too, while a signature still matches anywhere in it.
    #[test]
    fn a_long_lines_form_is_found_far_from_the_signatures_anchors() {
        let set = SignatureSet::compile(vec![spec("boom", "boom (\\d+)")]).unwrap();
        let near = "a".repeat(3000);
        let far = "a".repeat(6000);
        let log = format!(
            "2026-07-15T21:26:03.1234567Z Caused by: {near} failed {far} boom 7\n\
             2026-07-15T21:26:03.1234567Z Traceback (most recent call last):\n\
             2026-07-15T21:26:03.1234567Z boom 1\n\
             2026-07-15T21:26:03.1234567Z Caused by: {far} failed {far} boom 9\n"
        );
        let c = set.classify(log.as_bytes());
        assert_eq!(c, set.classify_reference(log.as_bytes()));
        assert_eq!(c.matches[0].lines, [1, 3, 4]);
        let first: Vec<u64> = c.error_lines.iter().map(|l| l.line).collect();
        assert_eq!(first, [1, 2], "{:?}", c.error_lines);
        assert!(c.error_lines[0].text.starts_with("Caused by: aaa"));
        assert!(c.error_lines[0].text.ends_with('…'), "kept cut, as before");
    }

    /// A long line is searched only in windows around its anchors' hits, each as wide as the
    /// longest literal on either side: a literal is found wherever its anchor lies in it (at
    /// its start, its end, in between), next to other hits of the same anchor, hidden under
    /// another hit, and at the line's ends, as the reference finds it. The literals here are
    /// long (the window's width) and hold a common anchor (`Error`) at either end.
    #[test]
    fn a_long_lines_literals_are_found_wherever_their_anchor_lies_in_them() {
        let tail = "x".repeat(90);
        let set = SignatureSet::compile(vec![
            spec("head", &format!("Error in module {tail}")),
            spec("end", &format!("{tail} raised Error")),
            spec("short", "Error 42"),
        ])
        .unwrap();
        let literals = [
            format!("Error in module {tail}"),
            format!("{tail} raised Error"),
            "Error 42".to_string(),
        ];
        let filler = |n: usize| "ab ".repeat(n / 3 + 1)[..n].to_string();
        for literal in &literals {
            for (before, noise) in [
                (0, ""),
                (5000, ""),
                (5000, "Error "),
                (5000, "ErrorError"),
                (4999, "Err"),
                (6000, "raised Error"),
            ] {
                for shift in [0, 1, 37, 103, 104, 105, 250] {
                    let line = format!(
                        "{}{noise}{}{literal}{}",
                        filler(before),
                        filler(shift),
                        filler(5000 - shift)
                    );
                    let log = format!("2026-07-15T21:26:03.1234567Z {line}\nok\n");
                    let c = set.classify(log.as_bytes());
                    assert_eq!(
                        c,
                        set.classify_reference(log.as_bytes()),
                        "{literal:.20} after {before}+{shift} bytes, {noise:?} before it"
                    );
                    assert!(
                        !c.matches.is_empty(),
                        "{literal:.20} after {before}+{shift}"
                    );
                }
            }
        }
    }

    /// A long line is found before the anchor finders reach it and searched apart: its head
    /// for markers and `##[group]`, the rest for the literals of the rules whose matches may
    /// begin anywhere and of the test runners, and a rule whose matches all begin at the
    /// line's start is tried when the line begins with one of its prefixes, wherever its
    /// literals lie. Every case here is read as the reference reads it: literals far beyond the
    /// head, markers only beyond it, escape codes, a long last line without its LF, short lines
    /// with anchors between long ones (their numbers too), in one chunk and in small ones.
    #[test]
    fn a_long_line_is_searched_apart_as_the_reference_reads_it() {
        let set = SignatureSet::compile(vec![
            spec("shard", r"^Running \d+ items .*BOOM_IN_SHARD"),
            spec("segv", r"Segfault in (\w+)"),
            spec("short", r"^Killed$"),
        ])
        .unwrap();
        let ids = |n: usize| {
            (0..n)
                .map(|i| format!("test/test_x.py::TestX::test_{i}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let stamp = "2026-07-15T21:26:03.1234567Z ";
        let lines = [
            // The prefixed rule's literal 60 KB in.
            format!(
                "Running 3000 items in this shard: {}, BOOM_IN_SHARD",
                ids(2000)
            ),
            "Killed".to_string(),
            // The same literal, no prefix: not a match.
            format!("Ran 3000 items in this shard: {}, BOOM_IN_SHARD", ids(2000)),
            // A rule whose match may begin anywhere, far in; a marker only beyond the head.
            format!("{} error {} Segfault in main", ids(300), ids(300)),
            // A marker in the head: a telling line, judged on its head.
            format!("FAILED to run {}", ids(500)),
            // A test runner's line whose anchor lies beyond the head.
            format!("tests/test_a.py::test_big[{}] FAILED", "p".repeat(6000)),
            // A long `##[group]` title, then escape codes in a long line.
            format!("##[group]Run {}", "x".repeat(5000)),
            format!(
                "\u{1b}[31m{}\u{1b}[0m Segfault in \u{1b}[1mloop\u{1b}[0m",
                ids(400)
            ),
            "Killed".to_string(),
            // Last, without its LF.
            format!(
                "Running 9 items in this shard: {}BOOM_IN_SHARD",
                "y".repeat(5000)
            ),
        ];
        let log: String = lines
            .iter()
            .map(|l| format!("{stamp}{l}"))
            .collect::<Vec<_>>()
            .join("\n");
        let log = log.as_bytes();
        let whole = set.classify(log);
        assert_eq!(whole, set.classify_reference(log));
        let lines_of = |id: &str| {
            whole
                .matches
                .iter()
                .find(|m| m.signature.0 == id)
                .map(|m| m.lines.clone())
        };
        assert_eq!(lines_of("shard"), Some(vec![1, 10]));
        assert_eq!(lines_of("segv"), Some(vec![4, 8]));
        assert_eq!(lines_of("short"), Some(vec![2, 9]));
        let telling: Vec<u64> = whole.error_lines.iter().map(|l| l.line).collect();
        assert!(telling.contains(&5) && !telling.contains(&4), "{telling:?}");
        let failed: Vec<&str> = whole.tests.failed.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(failed.len(), 1, "{failed:?}");
        assert!(failed[0].starts_with("tests/test_a.py::test_big[ppp"));
        for chunk in [4096, 10_000] {
            let small = set
                .classify_chunked(std::io::Cursor::new(log), chunk, 1 << 20)
                .unwrap();
            assert_eq!(small, whole, "chunks of {chunk} bytes");
        }
    }

    /// A line longer than the chunk grows the buffer (and the next chunk shrinks it back); a
    /// line longer than the longest kept is cut there: its first bytes are a line, the rest is
    /// dropped, and the lines after it keep their numbers.
    #[test]
    fn long_lines_grow_the_buffer_and_over_long_ones_are_cut() {
        let set = SignatureSet::compile(vec![spec("boom", "boom (\\d+)")]).unwrap();
        let mut log = b"boom 1\n".to_vec();
        log.extend_from_slice(&[b'x'; 150]);
        log.extend_from_slice(b" boom 2\nboom 3\n");
        log.extend_from_slice(&[b'y'; 400]);
        log.extend_from_slice(b" boom 4\n");
        for _ in 0..20 {
            log.extend_from_slice(b"hay hay hay\n");
        }
        log.extend_from_slice(b"boom 5");
        for reader in [
            Box::new(std::io::Cursor::new(log.clone())) as Box<dyn std::io::Read>,
            Box::new(Trickle(&log, 0)),
        ] {
            let c = set.classify_chunked(reader, 64, 256).unwrap();
            assert_eq!(c.matches[0].lines, [1, 2, 3, 25], "{c:?}");
            assert_eq!(c.matches[0].count, 4);
        }
        // Within bounds, the same as in memory.
        let whole = set.classify(&log);
        assert_eq!(whole.matches[0].lines, [1, 2, 3, 4, 25]);
        assert_eq!(
            set.classify_chunked(std::io::Cursor::new(&log), 64, 1024)
                .unwrap(),
            whole
        );
    }

    #[test]
    fn reader_and_memory_agree_across_chunks() {
        let set = SignatureSet::compile(vec![spec("needle", "needle (\\d+)")]).unwrap();
        let mut log = Vec::new();
        for i in 0..300_000 {
            if i % 1000 == 7 {
                log.extend_from_slice(
                    format!("2026-07-15T21:26:03.1234567Z needle {i}\n").as_bytes(),
                );
            } else {
                log.extend_from_slice(b"2026-07-15T21:26:03.1234567Z hay hay hay hay hay\n");
            }
        }
        let a = set.classify(&log);
        let b = set.classify_reader(std::io::Cursor::new(&log)).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.matches[0].count, 300);
        assert_eq!(a.matches[0].line, 8);
    }
}
