//! Signature files → [`SignatureSpec`]s. Every problem in every file is collected (file, line,
//! column, key, and for a regex the position in the pattern) before failing: a broken signature is
//! never skipped silently.
//!
//! Structural problems (TOML syntax, unknown or missing keys, wrong types) stop the reading of
//! that one file; the checks of the values (regexes, globs, URLs, title) are all reported.

use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use super::{Examples, Problem, SignatureError, SignatureSpec};
use crate::model::SignatureId;

/// The signatures shipped in `signatures/`, embedded in the binary.
const BUNDLED: &[(&str, &str)] = &[
    (
        "cuda-error",
        include_str!("../../../../signatures/cuda-error.toml"),
    ),
    (
        "disk-full",
        include_str!("../../../../signatures/disk-full.toml"),
    ),
    (
        "fatal-signal",
        include_str!("../../../../signatures/fatal-signal.toml"),
    ),
    (
        "network-error",
        include_str!("../../../../signatures/network-error.toml"),
    ),
    (
        "package-resolution",
        include_str!("../../../../signatures/package-resolution.toml"),
    ),
    (
        "runner-lost",
        include_str!("../../../../signatures/runner-lost.toml"),
    ),
    (
        "step-timeout",
        include_str!("../../../../signatures/step-timeout.toml"),
    ),
    (
        "wait-until-timeout",
        include_str!("../../../../signatures/wait-until-timeout.toml"),
    ),
];

/// The ids of the bundled signatures (file stems of `signatures/*.toml` in the source tree).
pub fn bundled_ids() -> Vec<&'static str> {
    BUNDLED.iter().map(|(id, _)| *id).collect()
}

/// The signatures bundled in the binary. They are checked by the test suite, so this cannot fail.
pub fn load_bundled() -> Vec<SignatureSpec> {
    BUNDLED
        .iter()
        .map(|(id, text)| {
            let source = PathBuf::from(format!("bundled:signatures/{id}.toml"));
            parse_spec(id, text, &source).unwrap_or_else(|problems| {
                panic!("bundled signature {id} is invalid: {problems:?}")
            })
        })
        .collect()
}

/// Loads every `*.toml` file of `dir` (not recursive; other files are ignored), sorted by id.
/// All problems of all files come back in one [`SignatureError::Invalid`].
pub fn load_dir(dir: &Path) -> Result<Vec<SignatureSpec>, SignatureError> {
    let io_err = |source| SignatureError::Io {
        path: dir.to_path_buf(),
        source,
    };
    let mut files: Vec<PathBuf> = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io_err)? {
        let path = entry.map_err(io_err)?.path();
        if path.extension().is_some_and(|e| e == "toml") && !path.is_dir() {
            files.push(path);
        }
    }
    files.sort();
    if files.is_empty() {
        return Err(SignatureError::Empty {
            dir: dir.to_path_buf(),
        });
    }
    // Each file is read and checked on its own (its regexes compiled): on several threads.
    let parsed = super::par_map(&files, |path| {
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text = match std::fs::read(path) {
            Ok(bytes) => match String::from_utf8(bytes) {
                Ok(text) => text,
                Err(_) => {
                    return Err(vec![problem(
                        path,
                        None,
                        None,
                        "the file is not UTF-8 text",
                    )]);
                }
            },
            Err(e) => {
                return Err(vec![problem(
                    path,
                    None,
                    None,
                    &format!("cannot read it: {e}"),
                )]);
            }
        };
        parse_spec(&stem, &text, path)
    });
    let mut specs = Vec::new();
    let mut problems = Vec::new();
    for result in parsed {
        match result {
            Ok(spec) => specs.push(spec),
            Err(mut found) => problems.append(&mut found),
        }
    }
    if problems.is_empty() {
        Ok(specs)
    } else {
        Err(SignatureError::Invalid { problems })
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSpec {
    title: Spanned<String>,
    pattern: Spanned<String>,
    test: Option<Spanned<String>>,
    #[serde(default)]
    paths: Vec<Spanned<String>>,
    issue: Option<Spanned<String>>,
    #[serde(default)]
    examples: Option<Spanned<Examples>>,
    #[serde(default)]
    exclude: Vec<Spanned<String>>,
}

fn problem(file: &Path, position: Option<(usize, usize)>, key: Option<&str>, msg: &str) -> Problem {
    Problem {
        file: file.to_path_buf(),
        position,
        key: key.map(str::to_string),
        message: msg.to_string(),
    }
}

/// 1-based line and column (in characters) of byte `offset` of `text`.
pub(crate) fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

/// Parses one signature file's text. `id` is the file stem.
pub fn parse_spec(id: &str, text: &str, source: &Path) -> Result<SignatureSpec, Vec<Problem>> {
    let mut problems: Vec<Problem> = id_problem(id, source).into_iter().collect();
    let raw: RawSpec = match toml::from_str(text) {
        Ok(raw) => raw,
        Err(e) => {
            problems.push(toml_problem(&e, text, source));
            return Err(problems);
        }
    };
    problems.extend(value_problems(&raw, text, source));
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(SignatureSpec {
        id: SignatureId(id.to_string()),
        title: raw.title.get_ref().trim().to_string(),
        pattern: raw.pattern.into_inner(),
        test: raw.test.map(Spanned::into_inner),
        paths: raw.paths.into_iter().map(Spanned::into_inner).collect(),
        issue: raw.issue.map(Spanned::into_inner),
        examples: raw.examples.map(Spanned::into_inner).unwrap_or_default(),
        exclude: raw.exclude.into_iter().map(Spanned::into_inner).collect(),
        source: source.to_path_buf(),
    })
}

/// The file stem is the id: letters, digits, `-`, `_` and `.` only.
fn id_problem(id: &str, source: &Path) -> Option<Problem> {
    let valid = !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    (!valid).then(|| {
        problem(
            source,
            None,
            None,
            &format!(
                "the file name is the signature id and may only hold letters, digits, `-`, `_` and `.`; rename `{id}.toml`"
            ),
        )
    })
}

/// A TOML error as a problem naming the key (with its table) and its position.
fn toml_problem(e: &toml::de::Error, text: &str, source: &Path) -> Problem {
    let position = e.span().map(|s| line_column(text, s.start));
    let message = e.message().trim().to_string();
    let at_span = e.span().and_then(|s| key_at(text, s.start));
    let key = match (&at_span, key_in_message(&message)) {
        // The text tells the table the key is in; the message only its last part.
        (Some(k), Some(m)) if k.ends_with(&m) => Some(k.clone()),
        (_, Some(m)) => Some(m),
        (k, None) => k.clone(),
    };
    let top_level = !key.as_deref().unwrap_or("").contains('.');
    let hint = if message.starts_with("unknown field") && top_level {
        "; the keys are title, pattern, test, paths, issue, examples, exclude"
    } else {
        ""
    };
    problem(
        source,
        position,
        key.as_deref(),
        &format!("{message}{hint}"),
    )
}

/// Every value that parses but is wrong: an empty title, a regex that does not compile or
/// matches every line, a test regex without its group, a bad glob, an issue that is no URL.
fn value_problems(raw: &RawSpec, text: &str, source: &Path) -> Vec<Problem> {
    let mut problems = Vec::new();
    let at = |span: Range<usize>| Some(line_column(text, span.start));

    let title = raw.title.get_ref().trim();
    if title.is_empty() || title.contains('\n') {
        problems.push(problem(
            source,
            at(raw.title.span()),
            Some("title"),
            "must be one non-empty line",
        ));
    }

    // The regex check compiles the pattern: the empty-line test reuses it.
    match check_regex(source, text, &raw.pattern, "pattern") {
        Err(p) => problems.push(p),
        Ok(re) if re.is_match(b"") => problems.push(problem(
            source,
            at(raw.pattern.span()),
            Some("pattern"),
            "matches an empty line, so it would match every line; make it require some text",
        )),
        Ok(_) => {}
    }

    if let Some(test) = &raw.test {
        match check_regex(source, text, test, "test") {
            Err(p) => problems.push(p),
            Ok(re) => {
                if !re.capture_names().any(|n| n == Some("test")) {
                    problems.push(problem(
                        source,
                        at(test.span()),
                        Some("test"),
                        "has no named group `test`; write it like `FAILED (?P<test>\\S+::\\S+)`",
                    ));
                }
            }
        }
    }

    for glob in &raw.paths {
        if let Err(e) = globset::Glob::new(glob.get_ref()) {
            problems.push(problem(
                source,
                at(glob.span()),
                Some("paths"),
                &format!("`{}` is not a valid glob: {}", glob.get_ref(), e.kind()),
            ));
        }
    }

    if let Some(issue) = &raw.issue {
        let url = issue.get_ref();
        if !(url.starts_with("https://") || url.starts_with("http://"))
            || url.contains(char::is_whitespace)
        {
            problems.push(problem(
                source,
                at(issue.span()),
                Some("issue"),
                "must be an http(s) URL of the tracking issue",
            ));
        }
    }

    for ex in &raw.exclude {
        if let Err(p) = check_regex(source, text, ex, "exclude") {
            problems.push(p);
        }
    }

    problems
}

/// The dotted key whose line holds byte `offset` of `text` (`examples.match` under an
/// `[examples]` header), when that line is a `key = value` line.
fn key_at(text: &str, offset: usize) -> Option<String> {
    let offset = offset.min(text.len());
    let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line = text[start..].lines().next().unwrap_or("");
    let (key, _) = line.split_once('=')?;
    let key = key.trim().trim_matches('"').trim_matches('\'');
    if key.is_empty() || key.contains(char::is_whitespace) {
        return None;
    }
    let table = text[..start]
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('['))
        .map(|l| l.trim_matches(|c| c == '[' || c == ']').trim().to_string());
    Some(match table {
        Some(t) if !t.is_empty() => format!("{t}.{key}"),
        _ => key.to_string(),
    })
}

/// The key named in a serde message such as "unknown field `foo`, expected …" or "missing field
/// `title`".
fn key_in_message(message: &str) -> Option<String> {
    let rest = message
        .strip_prefix("unknown field `")
        .or_else(|| message.strip_prefix("missing field `"))?;
    rest.split('`').next().map(str::to_string)
}

/// Compiles `value` (the regex of `key`), or a problem pointing at the error's position both in
/// the TOML file and in the pattern.
fn check_regex(
    source: &Path,
    text: &str,
    value: &Spanned<String>,
    key: &str,
) -> Result<regex::bytes::Regex, Problem> {
    let pattern = value.get_ref();
    let span = value.span();
    match regex_syntax::Parser::new().parse(pattern) {
        Err(err) => {
            let (kind, pat_span) = match &err {
                regex_syntax::Error::Parse(e) => (e.kind().to_string(), Some(*e.span())),
                regex_syntax::Error::Translate(e) => (e.kind().to_string(), Some(*e.span())),
                _ => (err.to_string(), None),
            };
            let pat_offset = pat_span.map_or(0, |s| s.start.offset);
            let toml_offset = toml_offset_of(text, span.clone(), pattern, pat_offset);
            let column = pattern[..pat_offset.min(pattern.len())].chars().count() + 1;
            Err(problem(
                source,
                Some(line_column(text, toml_offset)),
                Some(key),
                &format!("regex does not compile at pattern column {column}: {kind}"),
            ))
        }
        Ok(_) => super::compile_regex(pattern).map_err(|e| {
            problem(
                source,
                Some(line_column(text, span.start)),
                Some(key),
                &format!("regex does not compile: {e}"),
            )
        }),
    }
}

/// Byte offset in the TOML text of byte `pat_offset` of a string value spanning `span`, exact
/// for literal strings (`'…'`, `'''…'''`) and escape-free basic strings, else the value's start.
fn toml_offset_of(text: &str, span: Range<usize>, pattern: &str, pat_offset: usize) -> usize {
    let Some(raw) = text.get(span.clone()) else {
        return span.start;
    };
    let open = if raw.starts_with("'''") || raw.starts_with("\"\"\"") {
        let after = &raw[3..];
        3 + if after.starts_with("\r\n") {
            2
        } else if after.starts_with('\n') {
            1
        } else {
            0
        }
    } else if raw.starts_with('\'') || raw.starts_with('"') {
        1
    } else {
        return span.start;
    };
    let body = &raw[open..];
    if body.starts_with(pattern) {
        span.start + open + pat_offset
    } else {
        span.start
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<SignatureSpec, Vec<Problem>> {
        parse_spec("demo", text, Path::new("sigs/demo.toml"))
    }

    #[test]
    fn minimal_file() {
        let spec = parse("title = 'Demo'\npattern = 'boom'\n").unwrap();
        assert_eq!(spec.id.0, "demo");
        assert_eq!(spec.pattern, "boom");
        assert!(spec.examples.matches.is_empty());
    }

    #[test]
    fn unknown_key_names_key_and_line() {
        let err = parse("title = 'Demo'\npattern = 'boom'\npatern = 'x'\n").unwrap_err();
        assert_eq!(err.len(), 1);
        assert_eq!(err[0].key.as_deref(), Some("patern"));
        assert_eq!(err[0].position.map(|p| p.0), Some(3));
    }

    #[test]
    fn wrong_type_and_nested_unknown_key_are_named() {
        let err = parse("title = 3\npattern = 'x'\n").unwrap_err();
        assert_eq!(err[0].key.as_deref(), Some("title"));
        let err = parse("title = 'x'\npattern = 'x'\n[examples]\nmatches = ['x']\n").unwrap_err();
        assert_eq!(err[0].key.as_deref(), Some("examples.matches"));
        assert_eq!(err[0].position.map(|p| p.0), Some(4));
    }

    #[test]
    fn missing_key() {
        let err = parse("title = 'Demo'\n").unwrap_err();
        assert_eq!(err[0].key.as_deref(), Some("pattern"));
    }

    #[test]
    fn bad_regex_position_in_toml_and_pattern() {
        let err = parse("title = 'Demo'\npattern = 'ab(c'\n").unwrap_err();
        assert_eq!(err[0].key.as_deref(), Some("pattern"));
        // `(` is the third character of the pattern, which starts at column 12 of line 2.
        assert_eq!(err[0].position, Some((2, 14)));
        assert!(
            err[0].message.contains("pattern column 3"),
            "{}",
            err[0].message
        );
    }

    #[test]
    fn every_value_problem_reported() {
        let err = parse(
            "title = ''\npattern = 'ok'\ntest = 'FAILED (\\S+)'\npaths = ['a/{b']\nissue = 'nope'\n",
        )
        .unwrap_err();
        let keys: Vec<_> = err.iter().filter_map(|p| p.key.as_deref()).collect();
        assert_eq!(keys, vec!["title", "test", "paths", "issue"]);
    }

    #[test]
    fn pattern_matching_everything_is_refused() {
        let err = parse("title = 'x'\npattern = '.*'\n").unwrap_err();
        assert!(err[0].message.contains("empty line"));
    }

    #[test]
    fn bundled_signatures_are_the_source_folder() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../signatures");
        let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| {
                let p = e.unwrap().path();
                (p.extension()? == "toml")
                    .then(|| p.file_stem().unwrap().to_string_lossy().into_owned())
            })
            .collect();
        on_disk.sort();
        assert_eq!(on_disk, bundled_ids());
        assert_eq!(load_bundled().len(), on_disk.len());
    }
}
