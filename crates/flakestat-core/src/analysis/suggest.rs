//! Draft signatures for groups of unclassified failures: what `flakestat suggest` writes.
//!
//! A draft's `pattern` is generalised from its group's template and telling lines, position by
//! position (whitespace-separated tokens): a token every line shares stays an escaped literal,
//! unless the title masks it (a pid, a duration, a version: then its masked shape, as the title
//! shows it); one that varies keeps its masked shape (`\d+` where numbers varied, a hex or duration class,
//! `\S+` for paths and for Drain's wildcards); a test id (`a.py::test_x`, go's `TestX`) becomes
//! the `test` capture. Its `[examples]` are real lines: `match` from the group, `no_match` from
//! the nearest telling lines of other groups and of jobs existing signatures claim. Each draft
//! records which of its group's lines it fails to match (none, when sound) and which already
//! claimed jobs it would also match, so the caller can say so.
//!
//! Pure: groups and lines in, drafts out; rendering a draft as TOML is [`render_toml`].

use std::collections::{BTreeMap, BTreeSet};

use regex::Regex;
use serde::Serialize;

use super::{JobRef, UnclassifiedGroup, WILDCARD, normalize_for_grouping};

/// Most `examples.match` lines per draft.
const MATCH_EXAMPLES: usize = 3;
/// Most `examples.no_match` lines per draft.
const NO_MATCH_EXAMPLES: usize = 2;
/// Most jobs named in a draft's comment.
const LISTED_JOBS: usize = 10;
/// A pattern needs a literal at least this long, or it would match too much to be a draft.
const MIN_LITERAL: usize = 4;

/// A telling line of a job that an existing signature already claims.
#[derive(Debug, Clone)]
pub struct ClaimedLine {
    pub text: String,
    /// `run R attempt A job J (name)`.
    pub job: String,
    /// The signatures that claim the job.
    pub signatures: Vec<String>,
}

/// One draft signature.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Draft {
    /// The file stem: `unknown-<group id>`.
    pub id: String,
    pub group: String,
    pub title: String,
    pub pattern: String,
    pub test: Option<String>,
    pub matches: Vec<String>,
    pub no_match: Vec<String>,
    pub jobs: u64,
    pub runs: u64,
    pub job_names: Vec<String>,
    pub cells: Vec<String>,
    pub examples: Vec<JobRef>,
    /// Lines of the group the pattern does not match (empty for a sound draft).
    pub unclaimed: Vec<String>,
    /// Jobs existing signatures claim whose lines the pattern matches too: `job: signatures`.
    pub overlaps: Vec<String>,
}

/// A group no draft could be made for, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    pub group: String,
    pub jobs: u64,
    pub reason: String,
}

/// Drafts for every group of at least `min_jobs` jobs, most jobs first.
pub fn suggest(
    groups: &[UnclassifiedGroup],
    claimed: &[ClaimedLine],
    min_jobs: u64,
) -> (Vec<Draft>, Vec<Skipped>) {
    let mut drafts = Vec::new();
    let mut skipped = Vec::new();
    for (gi, g) in groups.iter().enumerate() {
        if g.jobs < min_jobs {
            continue;
        }
        match draft(gi, groups, claimed) {
            Ok(d) => drafts.push(d),
            Err(reason) => skipped.push(Skipped {
                group: g.id.clone(),
                jobs: g.jobs,
                reason: reason.to_string(),
            }),
        }
    }
    (drafts, skipped)
}

/// The draft for `groups[gi]`, or why none could be made.
fn draft(
    gi: usize,
    groups: &[UnclassifiedGroup],
    claimed: &[ClaimedLine],
) -> Result<Draft, &'static str> {
    let g = &groups[gi];
    let mut template: Vec<&str> = g.key.split(' ').filter(|t| !t.is_empty()).collect();
    // A pattern matches one line: the draft of a multi-line `##[error]` annotation is made
    // from its first line (the template's first tokens: masks never add or remove spaces).
    let first_lines: Vec<String>;
    let mut samples = &g.samples;
    if g.samples.iter().any(|s| s.contains('\n')) {
        first_lines = g
            .samples
            .iter()
            .map(|s| s.lines().next().unwrap_or_default().to_string())
            .collect();
        let width = first_lines
            .first()
            .map_or(0, |l| super::line_template(l).len());
        template.truncate(width);
        samples = &first_lines;
    }
    let Some((pattern, test_at)) = generalise(&template, samples) else {
        return Err("its jobs have no telling line");
    };
    if longest_literal(&pattern) < MIN_LITERAL {
        return Err("its telling lines share too little literal text");
    }
    let Ok(re) = Regex::new(&pattern) else {
        return Err("the generalised pattern does not compile");
    };
    let test = test_at.map(|at| test_pattern(&template, samples, at));
    let unclaimed: Vec<String> = samples
        .iter()
        .filter(|s| !re.is_match(s))
        .cloned()
        .collect();
    let matches: Vec<String> = samples
        .iter()
        .filter(|s| re.is_match(s))
        .take(MATCH_EXAMPLES)
        .cloned()
        .collect();
    if matches.is_empty() {
        return Err("the generalised pattern matches none of its lines");
    }
    let no_match = no_match_examples(&re, &matches[0], gi, groups, claimed);
    let overlaps: BTreeSet<String> = claimed
        .iter()
        .filter(|c| re.is_match(&c.text))
        .map(|c| format!("{}: {}", c.job, c.signatures.join(", ")))
        .collect();
    Ok(Draft {
        id: format!("unknown-{}", g.id),
        group: g.id.clone(),
        title: title(&template.join(" ")),
        pattern,
        test,
        matches,
        no_match,
        jobs: g.jobs,
        runs: g.runs,
        job_names: g.job_names.clone(),
        cells: g.cells.clone(),
        examples: g.examples.clone(),
        unclaimed,
        overlaps: overlaps.into_iter().collect(),
    })
}

/// The lines elsewhere (other groups' samples, claimed lines) nearest to `first_match` that
/// `re` does not match, at most `NO_MATCH_EXAMPLES`, each once.
fn no_match_examples(
    re: &Regex,
    first_match: &str,
    gi: usize,
    groups: &[UnclassifiedGroup],
    claimed: &[ClaimedLine],
) -> Vec<String> {
    let reference = tokens(first_match);
    let mut near: Vec<(usize, &str)> = groups
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != gi)
        .flat_map(|(_, other)| other.samples.iter().map(String::as_str))
        .chain(claimed.iter().map(|c| c.text.as_str()))
        .filter(|l| {
            !re.is_match(l)
                && !l.contains('\n')
                && !crate::signatures::normalize::is_exit_code_boilerplate(l)
        })
        .map(|l| (shared_tokens(&reference, &tokens(l)), l))
        .collect();
    near.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    let mut no_match: Vec<String> = Vec::new();
    for (_, l) in near {
        if no_match.len() == NO_MATCH_EXAMPLES {
            break;
        }
        if !no_match.iter().any(|n| n == l) {
            no_match.push(l.to_string());
        }
    }
    no_match
}

fn tokens(line: &str) -> BTreeSet<String> {
    normalize_for_grouping(line)
        .split(' ')
        .map(str::to_string)
        .collect()
}

fn shared_tokens(a: &BTreeSet<String>, b: &BTreeSet<String>) -> usize {
    a.intersection(b).count()
}

/// The title: the template, wildcards shown as `…`, at most 100 characters.
fn title(template: &str) -> String {
    let text = template.replace(WILDCARD, "…");
    let mut t: String = text.chars().take(100).collect();
    if text.chars().count() > 100 {
        t.push('…');
    }
    format!("Unknown failure (draft): {t}")
}

/// Whether a token names a test: a pytest node id, a go or XCTest-style test name.
fn is_test_id(token: &str) -> bool {
    token.contains("::") || (token.starts_with("Test") && token.len() > 4)
}

/// The pattern for a template and its lines, and the position of a test id if any.
fn generalise(template: &[&str], samples: &[String]) -> Option<(String, Option<usize>)> {
    if template.is_empty() {
        return None;
    }
    let rows: Vec<Vec<&str>> = samples
        .iter()
        .map(|s| s.split_whitespace().collect::<Vec<_>>())
        .filter(|r| r.len() == template.len())
        .collect();
    if rows.is_empty() {
        return None;
    }
    let mut parts = Vec::with_capacity(template.len());
    let mut test_at = None;
    for i in 0..template.len() {
        let column: BTreeSet<&str> = rows.iter().map(|r| r[i]).collect();
        if test_at.is_none() && column.iter().all(|t| is_test_id(t)) && template[i] == WILDCARD {
            test_at = Some(i);
            parts.push(r"\S+".to_string());
        } else if column.len() == 1 {
            // A number, duration, version or path the title masks is masked in the pattern too,
            // even when every line had the same one (one pid, one timeout): the draft must
            // match the next occurrence, whose number differs.
            let token = column.iter().next().expect("one");
            let shape = normalize_for_grouping(token);
            parts.push(if shape == *token {
                regex::escape(token)
            } else {
                shape_regex(&shape)
            });
        } else {
            let shapes: BTreeSet<String> =
                column.iter().map(|t| normalize_for_grouping(t)).collect();
            if shapes.len() == 1 {
                parts.push(shape_regex(shapes.iter().next().expect("one")));
            } else {
                parts.push(r"\S+".to_string());
            }
        }
    }
    // Trailing wildcards add nothing to a search; leading ones neither.
    while parts.last().is_some_and(|p| p == r"\S+") && parts.len() > 1 {
        parts.pop();
        if test_at == Some(parts.len()) {
            test_at = None;
        }
    }
    Some((parts.join(r"\s+"), test_at))
}

/// The `test` regex: the pattern with the test id position captured.
fn test_pattern(template: &[&str], samples: &[String], at: usize) -> String {
    let (pattern, _) = generalise(template, samples).expect("generalised before");
    let parts: Vec<&str> = pattern.split(r"\s+").collect();
    // Escaped literals never hold `\s+`, so the split gives back the positions.
    let mut out: Vec<String> = parts.iter().map(|p| p.to_string()).collect();
    if at < out.len() {
        out[at] = r"(?P<test>\S+)".to_string();
    } else {
        out.push(r"(?P<test>\S+)".to_string());
    }
    out.join(r"\s+")
}

/// A masked token (`<n>s`, `'<path>'`) as a regex.
fn shape_regex(shape: &str) -> String {
    const CLASSES: &[(&str, &str)] = &[
        ("<uuid>", r"[0-9a-fA-F-]{36}"),
        ("<path>", r"\S+"),
        ("<addr>", r"[0-9.:]+"),
        (
            "<duration>",
            r"\d+(?:\.\d+)?(?:ms|us|µs|ns|s|h|min|sec|seconds)",
        ),
        ("<hex>", r"(?:0x)?[0-9a-fA-F]+"),
        ("<n>", r"\d+(?:\.\d+)*"),
    ];
    let mut out = String::new();
    let mut rest = shape;
    'outer: while !rest.is_empty() {
        for (mask, class) in CLASSES {
            if let Some(tail) = rest.strip_prefix(mask) {
                out.push_str(class);
                rest = tail;
                continue 'outer;
            }
        }
        let next = rest[1..]
            .find('<')
            .map_or(rest.len(), |i| i + 1)
            .min(rest.len());
        out.push_str(&regex::escape(&rest[..next]));
        rest = &rest[next..];
    }
    out
}

/// Length of the longest literal run in a pattern (characters outside classes and escapes).
fn longest_literal(pattern: &str) -> usize {
    regex_syntax::parse(pattern)
        .ok()
        .map(|hir| {
            let mut best = 0;
            longest_in(&hir, &mut best);
            best
        })
        .unwrap_or(0)
}

fn longest_in(hir: &regex_syntax::hir::Hir, best: &mut usize) {
    use regex_syntax::hir::HirKind;
    match hir.kind() {
        HirKind::Literal(l) => *best = (*best).max(l.0.len()),
        HirKind::Concat(items) | HirKind::Alternation(items) => {
            for h in items {
                longest_in(h, best);
            }
        }
        HirKind::Capture(c) => longest_in(&c.sub, best),
        HirKind::Repetition(r) => longest_in(&r.sub, best),
        _ => {}
    }
}

/// A draft left out: its id, and why.
pub type Rejected = (String, String);

/// Keeps the drafts that pass `signatures check` together with `specs` (the signatures in use)
/// and with each other: one compile and one check for all, then again without the rejected
/// ones until none is. Returns the kept drafts with their TOML, and `(id, why)` for the others.
pub fn checked(
    drafts: Vec<Draft>,
    specs: &[crate::signatures::SignatureSpec],
) -> (Vec<(Draft, String)>, Vec<Rejected>) {
    use crate::signatures::{SignatureSet, check::check, load::parse_spec};
    let mut rejected: Vec<(String, String)> = Vec::new();
    let mut kept: Vec<(Draft, String, crate::signatures::SignatureSpec)> = Vec::new();
    for draft in drafts {
        let toml = render_toml(&draft);
        let path = std::path::PathBuf::from(format!("{}.toml", draft.id));
        match parse_spec(&draft.id, &toml, &path) {
            Ok(spec) => kept.push((draft, toml, spec)),
            Err(problems) => {
                let why: Vec<String> = problems.iter().map(|p| p.message.clone()).collect();
                rejected.push((draft.id.clone(), why.join("; ")));
            }
        }
    }
    loop {
        let mut all = specs.to_vec();
        all.extend(kept.iter().map(|(_, _, s)| s.clone()));
        let report = match SignatureSet::compile(all) {
            Ok(set) => check(&set),
            Err(e) => {
                // A draft that does not compile: find it alone.
                let bad: Vec<usize> = (0..kept.len())
                    .filter(|&i| {
                        let mut one = specs.to_vec();
                        one.push(kept[i].2.clone());
                        SignatureSet::compile(one).is_err()
                    })
                    .collect();
                if bad.is_empty() {
                    for (d, _, _) in kept.drain(..) {
                        rejected.push((d.id, e.to_string()));
                    }
                }
                for i in bad.into_iter().rev() {
                    let (d, _, _) = kept.remove(i);
                    rejected.push((d.id, "its pattern does not compile".into()));
                }
                continue;
            }
        };
        let mut why: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for f in &report.failures {
            why.entry(f.signature.0.clone())
                .or_default()
                .push(format!("{} {}: {}", f.key, f.index, f.reason));
        }
        for o in &report.overlaps {
            for id in [&o.first, &o.second] {
                why.entry(id.0.clone()).or_default().push(format!(
                    "overlaps {} and {} on {:?}",
                    o.first, o.second, o.example
                ));
            }
        }
        let before = kept.len();
        kept.retain(|(d, _, _)| match why.get(&d.id) {
            Some(reasons) => {
                rejected.push((d.id.clone(), reasons.join("; ")));
                false
            }
            None => true,
        });
        if kept.len() == before {
            break;
        }
    }
    rejected.sort();
    (kept.into_iter().map(|(d, t, _)| (d, t)).collect(), rejected)
}

/// The draft as a signature file: a comment naming the jobs it would claim (and any overlap),
/// then the TOML.
pub fn render_toml(d: &Draft) -> String {
    #[derive(Serialize)]
    struct Examples<'a> {
        #[serde(rename = "match")]
        matches: &'a [String],
        no_match: &'a [String],
    }
    #[derive(Serialize)]
    struct File<'a> {
        title: &'a str,
        pattern: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        test: Option<&'a str>,
        examples: Examples<'a>,
    }
    let body = toml::to_string(&File {
        title: &d.title,
        pattern: &d.pattern,
        test: d.test.as_deref(),
        examples: Examples {
            matches: &d.matches,
            no_match: &d.no_match,
        },
    })
    .expect("strings always serialize");
    // Log text and job names are hostile: no control character may end a comment early.
    let one_line = crate::report::sanitize::one_line;
    let mut out = format!(
        "# Draft by `flakestat suggest` for unclassified group {}: review, rename, add `paths`\n\
         # and `issue`, then move it into your signatures folder.\n\
         # It would claim {} job(s) in {} run(s)",
        d.group, d.jobs, d.runs
    );
    if !d.cells.is_empty() {
        out.push_str(&format!(
            "; matrix cells: {}",
            one_line(&d.cells.join("; "))
        ));
    }
    out.push_str(":\n");
    for j in d.examples.iter().take(LISTED_JOBS) {
        out.push_str(&format!(
            "#   run {} attempt {} job {} ({}){}\n",
            j.run_id.0,
            j.attempt,
            j.job_id.0,
            one_line(&j.job),
            j.html_url
                .as_deref()
                .map(|u| format!(" {}", one_line(u)))
                .unwrap_or_default()
        ));
    }
    if d.jobs as usize > d.examples.len().min(LISTED_JOBS) {
        out.push_str(&format!(
            "#   … and {} more\n",
            d.jobs as usize - d.examples.len().min(LISTED_JOBS)
        ));
    }
    if !d.unclaimed.is_empty() {
        out.push_str(&format!(
            "# Does not match {} of the group's lines, e.g.: {}\n",
            d.unclaimed.len(),
            one_line(&d.unclaimed[0])
        ));
    }
    if d.overlaps.is_empty() {
        out.push_str("# Claims no job an existing signature already matches.\n");
    } else {
        out.push_str(&format!(
            "# Also matches {} job(s) existing signatures claim:\n",
            d.overlaps.len()
        ));
        for o in d.overlaps.iter().take(LISTED_JOBS) {
            out.push_str(&format!("#   {}\n", one_line(o)));
        }
    }
    out.push_str(&body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{JobId, RunId, Timestamp};

    fn group(id: &str, key: &str, samples: &[&str]) -> UnclassifiedGroup {
        UnclassifiedGroup {
            key: key.into(),
            id: id.into(),
            lines: vec![samples[0].into()],
            jobs: samples.len() as u64,
            runs: samples.len() as u64,
            job_names: vec!["test (3.12)".into()],
            cells: vec!["python=3.12".into()],
            first_seen: Timestamp::default(),
            last_seen: Timestamp::default(),
            examples: vec![JobRef {
                run_id: RunId(1),
                attempt: 1,
                job_id: JobId(2),
                job: "test (3.12)".into(),
                created_at: Timestamp::default(),
                html_url: None,
            }],
            samples: samples.iter().map(|s| s.to_string()).collect(),
            tests: Default::default(),
        }
    }

    #[test]
    fn numbers_that_vary_become_digits_and_test_ids_a_capture() {
        let g = group(
            "u1",
            "FAILED <*> - RuntimeError: child <n> did not report after <duration>",
            &[
                "FAILED tests/a.py::test_x - RuntimeError: child 5170 did not report after 30.0s",
                "FAILED tests/b.py::test_y - RuntimeError: child 812 did not report after 30.0s",
            ],
        );
        let other = group("u2", "ValueError: bad shape", &["ValueError: bad shape"]);
        let (drafts, skipped) = suggest(&[g, other], &[], 2);
        assert!(skipped.is_empty());
        assert_eq!(drafts.len(), 1);
        let d = &drafts[0];
        assert_eq!(
            d.pattern,
            r"FAILED\s+\S+\s+\-\s+RuntimeError:\s+child\s+\d+(?:\.\d+)*\s+did\s+not\s+report\s+after\s+\d+(?:\.\d+)?(?:ms|us|µs|ns|s|h|min|sec|seconds)"
        );
        assert!(d.unclaimed.is_empty());
        let test = Regex::new(d.test.as_deref().unwrap()).unwrap();
        assert_eq!(
            &test.captures(&d.matches[1]).unwrap()["test"],
            "tests/b.py::test_y"
        );
        assert_eq!(d.no_match, vec!["ValueError: bad shape".to_string()]);
        let toml = render_toml(d);
        let spec = crate::signatures::load::parse_spec(&d.id, &toml, "x.toml".as_ref()).unwrap();
        assert_eq!(spec.pattern, d.pattern);
        assert!(toml.contains("#   run 1 attempt 1 job 2 (test (3.12))"));
    }

    /// A multi-line `##[error]` annotation is one telling line, but a pattern matches one
    /// line: the draft is made from the first lines, and matches them.
    #[test]
    fn a_multi_line_annotation_group_gets_a_draft_of_its_first_line() {
        let samples = [
            "##[error]Error: connect ECONNREFUSED 127.0.0.1:5432\n    at TCPConnectWrap.afterConnect (node:net:1607:16)",
            "##[error]Error: connect ECONNREFUSED 127.0.0.1:5433\n    at TCPConnectWrap.afterConnect (node:net:1611:16)",
        ];
        let key = crate::analysis::line_template(samples[0]).join(" ");
        let g = group("u1", &key, &samples);
        let (drafts, skipped) = suggest(&[g], &[], 2);
        assert!(skipped.is_empty(), "{skipped:?}");
        let d = &drafts[0];
        assert!(d.unclaimed.is_empty());
        assert!(d.matches.iter().all(|m| !m.contains('\n')), "{d:?}");
        let re = Regex::new(&d.pattern).unwrap();
        for s in samples {
            let first = s.lines().next().unwrap();
            assert!(re.is_match(first), "{} on {first}", d.pattern);
        }
        assert!(!re.is_match("    at TCPConnectWrap.afterConnect (node:net:1607:16)"));
        assert!(!d.title.contains("TCPConnectWrap"), "{}", d.title);
    }

    #[test]
    fn overlaps_with_claimed_jobs_are_named() {
        let g = group("u1", "boom went the disk", &["boom went the disk"]);
        let claimed = [ClaimedLine {
            text: "boom went the disk".into(),
            job: "run 9 attempt 1 job 10 (x)".into(),
            signatures: vec!["disk-full".into()],
        }];
        let (drafts, _) = suggest(&[g], &claimed, 1);
        assert_eq!(
            drafts[0].overlaps,
            vec!["run 9 attempt 1 job 10 (x): disk-full"]
        );
        assert!(render_toml(&drafts[0]).contains("# Also matches 1 job(s)"));
    }

    #[test]
    fn too_generic_or_small_groups_are_skipped() {
        let g = group("u1", "<n> <n>", &["1 2", "3 4"]);
        let (drafts, skipped) = suggest(std::slice::from_ref(&g), &[], 2);
        assert!(drafts.is_empty());
        assert_eq!(skipped.len(), 1);
        let (drafts, skipped) = suggest(&[g], &[], 3);
        assert!(drafts.is_empty() && skipped.is_empty());
    }
}
