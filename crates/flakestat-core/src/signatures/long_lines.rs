//! Lines longer than [`LONG_LINE`] bytes: a shard's list of thousands of test ids, a compiler's
//! command line. They are few but can be most of a log's bytes (in PyTorch's excerpts, 8 lines
//! hold 72 % of them), so the matcher finds them before its anchor finders reach them
//! ([`find`]) and searches them apart, for less:
//!
//! - the anchor finders, which decide which of the other lines are looked at, never pass over
//!   a long line: it is always looked at;
//! - its head, the text a telling line is judged on ([`telling::judged`]), is searched whole
//!   for every literal (the markers, `##[group]`, the forms' literals);
//! - the rest only around the hits of the [`LongLineSearch`]'s anchors: those of the literals
//!   that can matter beyond the head, the literals of the test runners and of the rules whose
//!   matches may begin anywhere in a line. A rule whose every match begins at the line's start
//!   with one of a few strings (`^##\[error\]…`: 66 of PyTorch's 102) is tried on a long line
//!   when the line begins with one of them, and its literals are not looked for there.
//!
//! [`telling::judged`]: super::telling::judged

use aho_corasick::AhoCorasick;

/// Lines longer than this (in raw bytes, without the LF) are found by [`find`] and searched
/// apart; a normalized line longer than this is searched so too, and judged as a telling line
/// on its head alone.
pub(super) const LONG_LINE: usize = 4096;

/// The stretch [`find`] checks for a line end at a time: a line longer than [`LONG_LINE`]
/// holds a whole one that starts at a multiple of it (any run of `2 * BLOCK - 1` bytes does).
const BLOCK: usize = LONG_LINE / 2;

/// Appends to `out` every line of `chunk` longer than [`LONG_LINE`] bytes, as its start and end
/// (the end is its LF, or the chunk's end), in order. One `memchr` per [`BLOCK`] of other lines,
/// stopping at the first line end in it, and one pass over each long line.
pub(super) fn find(chunk: &[u8], out: &mut Vec<(usize, usize)>) {
    let mut block = 0;
    while block + BLOCK <= chunk.len() {
        if memchr::memchr(b'\n', &chunk[block..block + BLOCK]).is_some() {
            block += BLOCK;
            continue;
        }
        let start = memchr::memrchr(b'\n', &chunk[..block]).map_or(0, |i| i + 1);
        let after = block + BLOCK;
        let end = memchr::memchr(b'\n', &chunk[after..]).map_or(chunk.len(), |i| after + i);
        if end - start > LONG_LINE {
            out.push((start, end));
        }
        // The next long line starts after this line's end, and holds a whole block from there.
        block = (end + 1).next_multiple_of(BLOCK);
    }
}

/// What a long line is searched for beyond its head.
pub(super) struct LongLineSearch {
    /// Finders of the anchors of the literals that matter beyond a long line's head.
    pub(super) finders: Vec<AhoCorasick>,
    /// How far a literal holding one of those anchors reaches from its hit: the longest of them.
    pub(super) reach: usize,
    /// The rules whose every match begins at the line's start: each of their prefixes, with
    /// the rule's index.
    heads: Vec<(Vec<u8>, u32)>,
}

impl LongLineSearch {
    /// `literals`: the literals that matter beyond a long line's head; `prefixes[i]`: the
    /// prefixes of rule `i` when its every match begins at the line's start with one.
    pub(super) fn new(
        finders: Vec<AhoCorasick>,
        literals: &[Vec<u8>],
        prefixes: &[Option<Vec<Vec<u8>>>],
    ) -> LongLineSearch {
        let heads = prefixes
            .iter()
            .enumerate()
            .filter_map(|(rule, p)| Some((p.as_ref()?, rule as u32)))
            .flat_map(|(p, rule)| p.iter().map(move |p| (p.clone(), rule)))
            .collect();
        LongLineSearch {
            finders,
            reach: literals.iter().map(Vec::len).max().unwrap_or(0),
            heads,
        }
    }

    /// Adds to `rules` every rule whose matches begin at the line's start with a prefix `text`
    /// begins with.
    pub(super) fn rules_at_start(&self, text: &[u8], rules: &mut Vec<u32>) {
        for (prefix, rule) in &self.heads {
            if text.starts_with(prefix) {
                rules.push(*rule);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference: every line, one at a time.
    fn long_lines_of(chunk: &[u8]) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut start = 0;
        for line in chunk.split_inclusive(|&b| b == b'\n') {
            let len = line.len() - usize::from(line.ends_with(b"\n"));
            if len > LONG_LINE {
                out.push((start, start + len));
            }
            start += line.len();
        }
        out
    }

    #[test]
    fn every_long_line_is_found_wherever_it_lies() {
        // Lines of every length around the limit and the block, at every offset of a block.
        let lengths = [
            0,
            1,
            BLOCK - 1,
            BLOCK,
            BLOCK + 1,
            2 * BLOCK - 2,
            LONG_LINE - 1,
            LONG_LINE,
            LONG_LINE + 1,
            LONG_LINE + 2,
            3 * BLOCK,
            5 * LONG_LINE + 7,
        ];
        for lead in [0, 1, 7, BLOCK - 1, BLOCK, BLOCK + 1, LONG_LINE - 3] {
            for &a in &lengths {
                for &b in &lengths {
                    for last_lf in [true, false] {
                        let mut chunk = vec![b'x'; lead];
                        chunk.push(b'\n');
                        chunk.extend(std::iter::repeat_n(b'a', a));
                        chunk.push(b'\n');
                        chunk.extend(std::iter::repeat_n(b'b', b));
                        if last_lf {
                            chunk.push(b'\n');
                        }
                        let mut found = Vec::new();
                        find(&chunk, &mut found);
                        assert_eq!(
                            found,
                            long_lines_of(&chunk),
                            "lead {lead}, lines of {a} and {b}, final LF {last_lf}"
                        );
                    }
                }
            }
        }
        // A chunk that is one long line, and one without any line end.
        for chunk in [vec![b'z'; LONG_LINE + 1], vec![b'z'; 3 * LONG_LINE]] {
            let mut found = Vec::new();
            find(&chunk, &mut found);
            assert_eq!(found, vec![(0, chunk.len())]);
        }
    }

    #[test]
    fn a_rule_is_named_by_each_prefix_a_line_begins_with() {
        let search = LongLineSearch::new(
            Vec::new(),
            &[b"abc".to_vec(), b"abcdef".to_vec()],
            &[
                Some(vec![b"##[error]".to_vec(), b"Error: ".to_vec()]),
                None,
                Some(vec![b"##[err".to_vec()]),
            ],
        );
        assert_eq!(search.reach, 6);
        let mut rules = Vec::new();
        search.rules_at_start(b"##[error]boom", &mut rules);
        rules.sort_unstable();
        assert_eq!(rules, [0, 2]);
        rules.clear();
        search.rules_at_start(b"Error: x", &mut rules);
        assert_eq!(rules, [0]);
        rules.clear();
        search.rules_at_start(b"  ##[error]", &mut rules);
        assert!(rules.is_empty());
    }
}
