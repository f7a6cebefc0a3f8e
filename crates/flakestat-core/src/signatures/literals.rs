//! Required literals: for a regex, a small set of strings one of which occurs in every match.
//!
//! The matcher searches every log once for all signatures' required literals (Aho-Corasick) and
//! only runs a signature's regex on lines holding one of its literals. regex-syntax's own
//! extractor finds prefixes and suffixes only; log patterns usually start with `^.*` or `\s*`, so
//! this walks the HIR for literals anywhere in the pattern.

use regex_syntax::hir::literal::{ExtractKind, Extractor};
use regex_syntax::hir::{Class, Hir, HirKind, Look};

/// Most strings a set may hold: more makes the prefilter slower than it is worth.
const MAX_SET: usize = 64;
/// Shortest literal worth searching for: shorter ones hit on most lines.
const MIN_LEN: usize = 3;
/// Most members of a character class expanded into literals (`[Rr]`, `(?i)x`).
const MAX_CLASS: usize = 4;

type Set = Vec<Vec<u8>>;

/// Literals one of which occurs in every match of `hir`, or `None` when there is no usable set
/// (the regex must then run on every line). A literal never holds `\n` or `\r`: the matcher
/// searches raw lines, and those bytes never occur inside a normalized line.
pub fn required_literals(hir: &Hir) -> Option<Vec<Vec<u8>>> {
    let set = required(hir)?;
    usable(&set).then_some(set)
}

/// Most prefixes kept by [`line_start_prefixes`].
const MAX_PREFIXES: usize = 32;

/// When every match of `hir` begins at the start of the text (`^` or `\A` before each of its
/// alternatives) with one of a few non-empty strings: those strings (regex-syntax's prefix
/// extraction, sound for every match when finite). `None` otherwise. A text without `\n` (a
/// log line) can then match only when it begins with one of them.
pub fn line_start_prefixes(hir: &Hir) -> Option<Vec<Vec<u8>>> {
    let looks = hir.properties().look_set_prefix();
    if !looks.contains(Look::Start) && !looks.contains(Look::StartLF) {
        return None;
    }
    let seq = Extractor::new().kind(ExtractKind::Prefix).extract(hir);
    let mut prefixes: Vec<Vec<u8>> = seq
        .literals()?
        .iter()
        .map(|p| p.as_bytes().to_vec())
        .collect();
    prefixes.sort_unstable();
    prefixes.dedup();
    let usable = !prefixes.is_empty()
        && prefixes.len() <= MAX_PREFIXES
        && prefixes.iter().all(|p| !p.is_empty());
    usable.then_some(prefixes)
}

fn usable(set: &Set) -> bool {
    !set.is_empty()
        && set.len() <= MAX_SET
        && set
            .iter()
            .all(|s| s.len() >= MIN_LEN && !s.contains(&b'\n') && !s.contains(&b'\r'))
}

/// How selective a set is likely to be in a log: longer is better, and uppercase letters and
/// rarer punctuation count extra (log lines are mostly lowercase words, paths and `::`/`_`
/// test ids; `FAILED ` is far rarer than `::test_` of the same length).
fn score(set: &Set) -> (usize, std::cmp::Reverse<usize>) {
    let weakest = set.iter().map(|s| weight(s)).min().unwrap_or(0);
    (weakest, std::cmp::Reverse(set.len()))
}

/// Rough selectivity of a literal in a log: its length, plus 2 per uppercase letter or rarer
/// punctuation byte.
fn weight(s: &[u8]) -> usize {
    s.len()
        + 2 * s
            .iter()
            .filter(|b| b.is_ascii_uppercase() || b"!#$%&'()*+<=>?@[]^`{|}~".contains(b))
            .count()
}

/// Shortest and longest anchor tried by [`anchors`].
const ANCHOR_LEN: std::ops::RangeInclusive<usize> = 4..=8;
/// Least [`weight`] of an anchor shared by several literals.
const ANCHOR_WEIGHT: usize = 7;

/// A small set of anchors such that every literal contains at least one: the literals' common
/// factors (`Error`, `##[error]`, `FAIL`…), chosen greedily, plus the literals no selective
/// enough factor covers. Searching the log for the anchors finds every line holding a literal,
/// with far fewer patterns (a faster SIMD search) than the literals themselves.
pub fn anchors(literals: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let candidates = candidates(literals);
    let mut uncovered = vec![0u64; literals.len().div_ceil(64)];
    for i in 0..literals.len() {
        uncovered[i / 64] |= 1 << (i % 64);
    }
    let mut out = cover(&candidates, &mut uncovered);
    // The rest: each literal's own best window (or the whole literal when short).
    for (i, lit) in literals.iter().enumerate() {
        if uncovered[i / 64] & (1 << (i % 64)) != 0 {
            let best = ANCHOR_LEN
                .filter(|&len| len < lit.len())
                .flat_map(|len| lit.windows(len))
                .chain(std::iter::once(lit.as_slice()))
                .max_by_key(|w| (lead(w), weight(w), std::cmp::Reverse(*w)))
                .unwrap_or(lit);
            out.push(best.to_vec());
        }
    }
    out.sort();
    out.dedup();
    // An anchor holding another one is not needed: every literal it covers holds the other.
    let all = out.clone();
    out.retain(|a| {
        !all.iter()
            .any(|b| b.len() < a.len() && memchr::memmem::find(a, b).is_some())
    });
    out
}

/// Every substring of a literal that may be an anchor (its length in [`ANCHOR_LEN`], selective
/// enough), with the set of literals holding it (bit `i`: `literals[i]`), in byte order. A
/// substring of `l` is found in exactly the literals that themselves yield it.
fn candidates(literals: &[Vec<u8>]) -> Vec<(&[u8], Vec<u64>)> {
    let words = literals.len().div_ceil(64);
    let mut covers: std::collections::HashMap<&[u8], Vec<u64>> = Default::default();
    for (i, lit) in literals.iter().enumerate() {
        for len in ANCHOR_LEN {
            for sub in lit.windows(len) {
                if weight(sub) < ANCHOR_WEIGHT || lead(sub) == 0 {
                    continue;
                }
                let bits = covers.entry(sub).or_insert_with(|| vec![0; words]);
                bits[i / 64] |= 1 << (i % 64);
            }
        }
    }
    let mut candidates: Vec<(&[u8], Vec<u64>)> = covers.into_iter().collect();
    candidates.sort_by(|a, b| a.0.cmp(b.0));
    candidates
}

/// How many of the literals in `mask` a candidate's `bits` hold.
fn count(bits: &[u64], mask: &[u64]) -> u32 {
    bits.iter()
        .zip(mask)
        .map(|(b, m)| (b & m).count_ones())
        .sum()
}

/// The greedy cover: again and again, the candidate holding the most literals not yet covered
/// (at least two), the more selective one on a tie, then the smaller in byte order; `uncovered`
/// keeps what is left. Lazily evaluated (a candidate's count only falls as literals get
/// covered, so the heap's stale counts are upper bounds: a candidate whose fresh key is still
/// the largest is the one a full pass would choose). The same choices as
/// [`cover_reference`], which looks at every candidate each round, in a fraction of the time
/// (PyTorch's 208 literals: about 30,000 candidates, 94 rounds).
fn cover(candidates: &[(&[u8], Vec<u64>)], uncovered: &mut [u64]) -> Vec<Vec<u8>> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let key = |i: usize, n: u32| {
        let sub = candidates[i].0;
        (n, lead(sub) + weight(sub), Reverse(sub), i)
    };
    let mut heap: BinaryHeap<_> = (0..candidates.len())
        .map(|i| key(i, count(&candidates[i].1, uncovered)))
        .filter(|k| k.0 >= 2)
        .collect();
    let mut out = Vec::new();
    while let Some(top) = heap.pop() {
        let i = top.3;
        let fresh = key(i, count(&candidates[i].1, uncovered));
        if fresh.0 < 2 {
            continue;
        }
        if heap.peek().is_some_and(|next| *next > fresh) {
            heap.push(fresh);
            continue;
        }
        out.push(candidates[i].0.to_vec());
        for (u, b) in uncovered.iter_mut().zip(&candidates[i].1) {
            *u &= !b;
        }
    }
    out
}

/// [`cover`] the slow way, every candidate looked at in every round (tests compare the two).
#[cfg(test)]
fn cover_reference(candidates: &[(&[u8], Vec<u64>)], uncovered: &mut [u64]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let best = candidates
            .iter()
            .map(|(sub, bits)| (count(bits, uncovered), lead(sub) + weight(sub), *sub, bits))
            .filter(|c| c.0 >= 2)
            .max_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)).then(b.2.cmp(a.2)));
        let Some((_, _, sub, bits)) = best else { break };
        out.push(sub.to_vec());
        for (u, b) in uncovered.iter_mut().zip(bits) {
            *u &= !b;
        }
    }
    out
}

/// How many of the first three bytes of `s` are uncommon in logs. The SIMD search (Teddy)
/// looks for a literal's first three bytes: common ones (lowercase letters, digits, spaces and
/// the timestamp's punctuation) make it stop and verify all the time.
fn lead(s: &[u8]) -> usize {
    s.iter()
        .take(3)
        .filter(|&&b| {
            !(b.is_ascii_lowercase() || b.is_ascii_digit() || b" :-./_,='\"()[]\t".contains(&b))
        })
        .count()
}

fn better(a: Option<Set>, b: Option<Set>) -> Option<Set> {
    match (a, b) {
        (None, x) | (x, None) => x.filter(usable),
        (Some(a), Some(b)) => match (usable(&a), usable(&b)) {
            (true, true) => Some(if score(&b) > score(&a) { b } else { a }),
            (true, false) => Some(a),
            (false, true) => Some(b),
            (false, false) => None,
        },
    }
}

/// The strings `hir` matches exactly, when it is a literal or a small class (or a concatenation
/// or fixed repetition of those).
fn exact(hir: &Hir) -> Option<Set> {
    match hir.kind() {
        HirKind::Literal(lit) => Some(vec![lit.0.to_vec()]),
        HirKind::Class(class) => class_members(class),
        HirKind::Capture(cap) => exact(&cap.sub),
        HirKind::Repetition(rep) if Some(rep.min) == rep.max && rep.min <= 16 => {
            let inner = exact(&rep.sub)?;
            let mut acc = vec![Vec::new()];
            for _ in 0..rep.min {
                acc = cross(&acc, &inner)?;
            }
            Some(acc)
        }
        HirKind::Concat(subs) => {
            let mut acc = vec![Vec::new()];
            for sub in subs {
                acc = cross(&acc, &exact(sub)?)?;
            }
            Some(acc)
        }
        HirKind::Alternation(subs) => {
            let mut acc = Vec::new();
            for sub in subs {
                acc.extend(exact(sub)?);
                if acc.len() > MAX_SET {
                    return None;
                }
            }
            Some(acc)
        }
        _ => None,
    }
}

fn class_members(class: &Class) -> Option<Set> {
    let mut out = Vec::new();
    match class {
        Class::Unicode(c) => {
            for range in c.ranges() {
                for ch in range.start()..=range.end() {
                    out.push(ch.to_string().into_bytes());
                    if out.len() > MAX_CLASS {
                        return None;
                    }
                }
            }
        }
        Class::Bytes(c) => {
            for range in c.ranges() {
                for b in range.start()..=range.end() {
                    out.push(vec![b]);
                    if out.len() > MAX_CLASS {
                        return None;
                    }
                }
            }
        }
    }
    Some(out)
}

fn cross(a: &Set, b: &Set) -> Option<Set> {
    if a.len() * b.len() > MAX_SET {
        return None;
    }
    let mut out = Vec::with_capacity(a.len() * b.len());
    for x in a {
        for y in b {
            let mut s = x.clone();
            s.extend_from_slice(y);
            out.push(s);
        }
    }
    Some(out)
}

fn required(hir: &Hir) -> Option<Set> {
    if let Some(set) = exact(hir) {
        return Some(set);
    }
    match hir.kind() {
        HirKind::Capture(cap) => required(&cap.sub),
        HirKind::Repetition(rep) if rep.min >= 1 => {
            // `_{4,}` requires `____`.
            if let Some(inner) = exact(&rep.sub) {
                let mut acc = vec![Vec::new()];
                for _ in 0..rep.min.min(16) {
                    match cross(&acc, &inner) {
                        Some(next) => acc = next,
                        None => break,
                    }
                }
                return Some(acc);
            }
            required(&rep.sub)
        }
        HirKind::Concat(subs) => {
            let mut best: Option<Set> = None;
            // Runs of consecutive exact pieces form longer literals than any piece alone.
            let mut run: Option<Set> = None;
            for sub in subs {
                match (exact(sub), run.take()) {
                    (Some(piece), Some(prev)) => match cross(&prev, &piece) {
                        Some(joined) => run = Some(joined),
                        None => {
                            best = better(best, Some(prev));
                            run = Some(piece);
                        }
                    },
                    (Some(piece), None) => run = Some(piece),
                    (None, prev) => {
                        best = better(best, prev);
                        best = better(best, required(sub));
                    }
                }
            }
            better(best, run)
        }
        HirKind::Alternation(subs) => {
            let mut acc = Vec::new();
            for sub in subs {
                let set = required(sub).filter(usable)?;
                acc.extend(set);
                if acc.len() > MAX_SET {
                    return None;
                }
            }
            acc.sort();
            acc.dedup();
            Some(acc)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `extract` makes of `pattern`, as sorted strings.
    fn strings(pattern: &str, extract: fn(&Hir) -> Option<Vec<Vec<u8>>>) -> Option<Vec<String>> {
        let hir = regex_syntax::parse(pattern).unwrap();
        extract(&hir).map(|set| {
            let mut v: Vec<String> = set
                .into_iter()
                .map(|s| String::from_utf8(s).unwrap())
                .collect();
            v.sort();
            v
        })
    }

    fn lits(pattern: &str) -> Option<Vec<String>> {
        strings(pattern, required_literals)
    }

    fn starts(pattern: &str) -> Option<Vec<String>> {
        strings(pattern, line_start_prefixes)
    }

    /// Only a pattern whose every match begins at the text's start, with one of a few
    /// non-empty strings, has line-start prefixes.
    #[test]
    fn line_start_prefixes_begin_every_match() {
        let some = |v: &[&str]| Some(v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(
            starts(r"^##\[error\]Error: (.+) failed"),
            some(&["##[error]Error: "])
        );
        assert_eq!(starts(r"^(?:foo|bar)\d"), some(&["bar", "foo"]));
        assert_eq!(starts(r"^foo|^bar"), some(&["bar", "foo"]));
        assert_eq!(starts(r"(?m)^Killed$"), some(&["Killed"]));
        assert_eq!(starts(r"\Aab"), some(&["ab"]));
        assert_eq!(starts(r"(?i)^no"), some(&["NO", "No", "nO", "no"]));
        // A match may begin elsewhere.
        assert_eq!(starts(r"foo"), None);
        assert_eq!(starts(r"^foo|bar"), None);
        assert_eq!(starts(r"(?:^|\s)TEST-UNEXPECTED"), None);
        // No finite set of non-empty prefixes.
        assert_eq!(starts(r"^\s*Error"), None);
        assert_eq!(starts(r"^.*failed"), None);
        assert_eq!(starts(r"^(?:x|)y"), some(&["xy", "y"]));
        assert_eq!(starts(r"^\w+: error"), None);
        assert_eq!(starts(r"^[a-z]{3}"), None, "too many prefixes");
    }

    #[test]
    fn literal_inside_pattern() {
        assert_eq!(
            lits(r"^.*\d+:\d+: error: .*"),
            Some(vec![": error: ".into()])
        );
        assert_eq!(
            lits(r"^\s*SyntaxError: .*"),
            Some(vec!["SyntaxError: ".into()])
        );
    }

    #[test]
    fn alternation_and_small_classes() {
        assert_eq!(
            lits(r"^(?:FC|BC) check failed: .*"),
            Some(vec!["BC check failed: ".into(), "FC check failed: ".into()])
        );
        assert_eq!(
            lits(r"failed! [Rr]eceived"),
            Some(vec!["failed! Received".into(), "failed! received".into()])
        );
    }

    #[test]
    fn prefers_rare_looking_literals() {
        assert_eq!(
            lits(r"^(?:FAILED|SUBFAIL) (\S*.py::\S*::test_\S*)"),
            Some(vec!["FAILED ".into(), "SUBFAIL ".into()])
        );
    }

    #[test]
    fn anchors_cover_every_literal_with_fewer_patterns() {
        let lits: Vec<Vec<u8>> = [
            "RuntimeError: ",
            "ValueError: ",
            "TypeError: ",
            "##[error]The action ",
            "##[error]",
            ": B",
            "no space left on device",
        ]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect();
        let anchors = anchors(&lits);
        assert!(anchors.len() < lits.len(), "{anchors:?}");
        for lit in &lits {
            assert!(
                anchors.iter().any(|a| lit.windows(a.len()).any(|w| w == a)),
                "{lit:?} has no anchor in {anchors:?}"
            );
        }
    }

    /// The lazy greedy cover makes the choices of the full one, in the same order, on the
    /// literals of every bundled signature and of PyTorch's rules, and on made-up sets whose
    /// literals share many factors (ties broken by selectivity, then byte order).
    #[test]
    fn the_lazy_cover_chooses_what_the_full_one_does() {
        let mut sets: Vec<Vec<Vec<u8>>> = Vec::new();
        let of_patterns = |patterns: &mut dyn Iterator<Item = String>| -> Vec<Vec<u8>> {
            let mut out: Vec<Vec<u8>> = patterns
                .filter_map(|p| {
                    regex_syntax::parse(&p)
                        .ok()
                        .and_then(|h| required_literals(&h))
                })
                .flatten()
                .collect();
            out.sort();
            out.dedup();
            out
        };
        let bundled = crate::signatures::load_bundled();
        sets.push(of_patterns(&mut bundled.into_iter().map(|s| s.pattern)));
        let ruleset = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../fixtures/pytorch/ruleset.toml"),
        )
        .expect("fixtures/pytorch/ruleset.toml");
        let imported = crate::signatures::import::import_pytorch(&ruleset).expect("imports");
        let pytorch = of_patterns(&mut imported.into_iter().map(|s| {
            let spec = crate::signatures::load::parse_spec(&s.id, &s.toml, "x.toml".as_ref())
                .expect("an imported file parses");
            spec.pattern
        }));
        assert!(pytorch.len() > 100, "{}", pytorch.len());
        sets.push(pytorch);
        // Made-up literals: words of log lines glued together, so that many share factors.
        let words = [
            "Error",
            "error: ",
            "FAILED ",
            "##[error]",
            "Timeout",
            "ERROR",
            "Traceback",
            "exit code",
            "Failed to ",
            "fatal: ",
            "CUDA ",
            "AssertionError",
            "no space",
        ];
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for size in [5, 40, 70, 130, 200] {
            let mut set: Vec<Vec<u8>> = (0..size)
                .map(|_| {
                    let parts = 1 + next(3);
                    (0..parts)
                        .flat_map(|_| words[next(words.len())].bytes())
                        .collect()
                })
                .collect();
            set.sort();
            set.dedup();
            sets.push(set);
        }
        for (n, literals) in sets.iter().enumerate() {
            let candidates = candidates(literals);
            let all = || {
                let mut u = vec![0u64; literals.len().div_ceil(64)];
                for i in 0..literals.len() {
                    u[i / 64] |= 1 << (i % 64);
                }
                u
            };
            let (mut lazy, mut full) = (all(), all());
            let chosen = cover(&candidates, &mut lazy);
            assert_eq!(chosen, cover_reference(&candidates, &mut full));
            assert_eq!(lazy, full);
            if n < 2 {
                // The real rule sets share many factors: the cover is not trivial.
                assert!(chosen.len() >= 3, "{n}: {chosen:?}");
            }
        }
    }

    #[test]
    fn repetition() {
        assert_eq!(lits(r"^_{4,} (\S+\.\S+) _{4,}$"), Some(vec!["____".into()]));
        assert_eq!(lits(r"(?:ab)?xyz"), Some(vec!["xyz".into()]));
    }

    #[test]
    fn nothing_usable() {
        assert_eq!(lits(r"^\w+$"), None);
        assert_eq!(lits(r"a|\d+"), None);
        assert_eq!(lits(r"ab"), None);
    }
}
