//! Required literals: for a regex, a small set of strings one of which occurs in every match.
//!
//! The matcher searches every log once for all signatures' required literals (Aho-Corasick) and
//! only runs a signature's regex on lines holding one of its literals. regex-syntax's own
//! extractor finds prefixes and suffixes only; log patterns usually start with `^.*` or `\s*`, so
//! this walks the HIR for literals anywhere in the pattern.

use regex_syntax::hir::{Class, Hir, HirKind};

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

fn usable(set: &Set) -> bool {
    !set.is_empty()
        && set.len() <= MAX_SET
        && set
            .iter()
            .all(|s| s.len() >= MIN_LEN && !s.contains(&b'\n') && !s.contains(&b'\r'))
}

fn score(set: &Set) -> (usize, std::cmp::Reverse<usize>) {
    let shortest = set.iter().map(Vec::len).min().unwrap_or(0);
    (shortest, std::cmp::Reverse(set.len()))
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

    fn lits(pattern: &str) -> Option<Vec<String>> {
        let hir = regex_syntax::parse(pattern).unwrap();
        required_literals(&hir).map(|set| {
            let mut v: Vec<String> = set
                .into_iter()
                .map(|s| String::from_utf8(s).unwrap())
                .collect();
            v.sort();
            v
        })
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
