//! Failure signatures: load TOML files (collecting every error), compile them into one matcher,
//! normalize GitHub Actions raw job logs, and classify a log into a [`model::Classification`].
//! Also checks signatures against their examples and imports other tools' rule files.
//!
//! Boundaries: the only I/O here is reading signature files ([`load_dir`]) and the `Read` a
//! caller hands to [`SignatureSet::classify_reader`]; no terminal, no environment, no clap.
//!
//! - [`load`]: files → [`SignatureSpec`]s, every problem with file, line, column and key.
//! - [`normalize`]: one raw log line → the text patterns see.
//! - [`matcher`]: [`SignatureSet`], the compiled matcher (literal prefilter + per-line regexes),
//!   and the [`Classifier`] trait it implements (the survey and the store classify through it).
//! - [`check`]: examples and overlaps, for `flakestat signatures check`.
//! - [`import`]: PyTorch's `ruleset.toml` → signature files.
//! - [`testids`]: the failing and flaky tests test runners name in a log, read in the matcher's pass.
//! - [`archive`]: a log's time span (does it belong to its job execution?) and log `.zip`s.

pub mod archive;
pub mod check;
mod classifier;
pub mod forms;
pub mod import;
mod literals;
pub mod load;
mod long_lines;
pub mod matcher;
pub mod normalize;
pub mod preamble;
pub mod telling;
pub mod testids;

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::model::SignatureId;

pub use classifier::Classifier;
pub use load::{load_bundled, load_dir};
pub use matcher::SignatureSet;

/// Maps `f` over `items` on up to as many threads as there are CPUs (at most 8), in order.
///
/// Compiling the regexes of a signature set is the serial start of every `classify`: with
/// PyTorch's 102 rules it was a seventh of the CPU time of classifying 100 MB of logs, and all
/// of it before the first log is read. Each item's work is independent; results keep the order
/// of `items`, so what is reported does not depend on the threads.
pub(crate) fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8)
        .min(items.len() / 8)
        .max(1);
    if threads == 1 {
        return items.iter().map(f).collect();
    }
    let f = &f;
    std::thread::scope(|scope| {
        let chunks: Vec<_> = items
            .chunks(items.len().div_ceil(threads))
            .map(|chunk| scope.spawn(move || chunk.iter().map(f).collect::<Vec<R>>()))
            .collect();
        chunks
            .into_iter()
            .flat_map(|c| c.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
}

/// Compiled signature regexes by pattern, shared by loading (which compiles each to check it)
/// and [`SignatureSet::compile`] (which needs it compiled): each distinct pattern compiles once
/// per process instead of twice per file. PyTorch's imported rules each list the same four
/// `exclude` regexes, so 102 files hold 106 distinct regexes, not 510; compiling them was a
/// tenth of `classify`'s CPU time on the benchmark corpus, all before the first log is read.
/// Bounded: past [`REGEX_CACHE_MAX`] patterns (a long-running process reloading changed
/// signatures) it starts over.
static REGEX_CACHE: std::sync::LazyLock<
    std::sync::Mutex<std::collections::HashMap<String, regex::bytes::Regex>>,
> = std::sync::LazyLock::new(Default::default);

/// Most patterns [`REGEX_CACHE`] holds before it is emptied.
const REGEX_CACHE_MAX: usize = 4096;

/// `regex::bytes::Regex::new(pattern)`, compiled at most once per process while the cache holds
/// it (a clone shares the compiled program; each clone has its own scratch space).
pub(crate) fn compile_regex(pattern: &str) -> Result<regex::bytes::Regex, regex::Error> {
    let cache = || REGEX_CACHE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(re) = cache().get(pattern) {
        return Ok(re.clone());
    }
    // Compiled outside the lock: other threads compile other patterns meanwhile.
    let re = regex::bytes::Regex::new(pattern)?;
    let mut cache = cache();
    if cache.len() >= REGEX_CACHE_MAX {
        cache.clear();
    }
    cache.insert(pattern.to_string(), re.clone());
    Ok(re)
}

/// Builds the telling-line and test-runner forms (compiled once per process, on first use)
/// now. A caller about to load and compile signatures can run this on another thread, so that
/// the forms are ready when the first log is read instead of being built then.
pub fn warm_up() {
    telling::warm_up();
    testids::warm_up();
}

/// One signature, as loaded from `<id>.toml`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureSpec {
    /// The file stem.
    pub id: SignatureId,
    /// One line saying what failed.
    pub title: String,
    /// Rust regex matched against each normalized log line.
    pub pattern: String,
    /// Regex with a named group `test` extracting the failing test id from a matching line.
    pub test: Option<String>,
    /// Globs of repository files; a PR changing one is *related* to the signature.
    pub paths: Vec<String>,
    /// URL of the tracking issue.
    pub issue: Option<String>,
    /// Lines that must and must not match, checked by `flakestat signatures check`.
    pub examples: Examples,
    /// Regexes for lines that never count for this signature even when `pattern` matches them
    /// (wrapper boilerplate, known noise).
    pub exclude: Vec<String>,
    /// The file it was loaded from (`bundled:signatures/<id>.toml` for bundled ones).
    pub source: PathBuf,
}

/// `[examples]` of a signature file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Examples {
    /// Lines the pattern must match (raw log lines or already normalized text).
    #[serde(default, rename = "match")]
    pub matches: Vec<String>,
    /// Lines the pattern must not match.
    #[serde(default)]
    pub no_match: Vec<String>,
}

/// Where signatures come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignatureSource {
    /// A directory of `*.toml` files.
    Dir(PathBuf),
    /// The set compiled into the binary.
    Bundled,
}

impl SignatureSource {
    /// Loads the specs of this source.
    pub fn load(&self) -> Result<Vec<SignatureSpec>, SignatureError> {
        match self {
            SignatureSource::Dir(dir) => load_dir(dir),
            SignatureSource::Bundled => Ok(load_bundled()),
        }
    }
}

impl fmt::Display for SignatureSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SignatureSource::Dir(dir) => write!(f, "{}", dir.display()),
            SignatureSource::Bundled => f.write_str("the bundled signatures"),
        }
    }
}

/// `--signatures DIR` when given, else `./signatures` when it is a directory, else the bundled
/// set. Relative to the current directory; this is the only place that looks at it.
pub fn resolve_dir(given: Option<&Path>) -> SignatureSource {
    match given {
        Some(dir) => SignatureSource::Dir(dir.to_path_buf()),
        None if Path::new("signatures").is_dir() => {
            SignatureSource::Dir(PathBuf::from("signatures"))
        }
        None => SignatureSource::Bundled,
    }
}

/// One thing wrong with one signature file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub file: PathBuf,
    /// 1-based line and column in the file, when known.
    pub position: Option<(usize, usize)>,
    /// The key at fault (`pattern`, `examples.match`, …), when known.
    pub key: Option<String>,
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some((line, column)) = self.position {
            write!(f, ":{line}:{column}")?;
        }
        if let Some(key) = &self.key {
            write!(f, ": key `{key}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// Why signatures could not be loaded or compiled.
#[derive(Debug, thiserror::Error)]
pub enum SignatureError {
    #[error("cannot read signatures from {}: {source}; check the path exists and is readable", path.display())]
    Io { path: PathBuf, source: io::Error },
    #[error("no signature files (*.toml) in {}; add one", dir.display())]
    Empty { dir: PathBuf },
    #[error("{}", render_problems(problems))]
    Invalid { problems: Vec<Problem> },
}

impl SignatureError {
    /// The problems, for an `Invalid` error.
    pub fn problems(&self) -> &[Problem] {
        match self {
            SignatureError::Invalid { problems } => problems,
            _ => &[],
        }
    }
}

fn render_problems(problems: &[Problem]) -> String {
    let mut files: Vec<&Path> = problems.iter().map(|p| p.file.as_path()).collect();
    files.sort();
    files.dedup();
    let mut out = format!(
        "{} invalid signature file{} (fix {}, then run `flakestat signatures check`):",
        files.len(),
        if files.len() == 1 { "" } else { "s" },
        if files.len() == 1 { "it" } else { "them" },
    );
    for p in problems {
        out.push_str("\n  ");
        out.push_str(&p.to_string());
    }
    out
}

/// Longest text kept for a line in a classification; longer lines are cut (on a character
/// boundary) and end with `…`, so a pathological multi-megabyte line cannot blow up memory.
pub const MAX_TEXT: usize = 4096;

/// The part of `text` a classification keeps: all of it, or its first [`MAX_TEXT`] bytes cut on
/// a character boundary.
pub(crate) fn kept_head(text: &str) -> &str {
    if text.len() <= MAX_TEXT {
        return text;
    }
    let mut end = MAX_TEXT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// `text` as a classification keeps it: [`kept_head`], ending with `…` when cut.
pub(crate) fn bounded_text(text: &str) -> String {
    let head = kept_head(text);
    if head.len() == text.len() {
        text.to_string()
    } else {
        format!("{head}…")
    }
}

#[cfg(test)]
mod tests {
    use super::{REGEX_CACHE, REGEX_CACHE_MAX, compile_regex, par_map};

    /// The cache hands back a regex that behaves as a fresh one, refuses what `Regex::new`
    /// refuses (and keeps nothing for it), and never holds more than its bound.
    #[test]
    fn compile_regex_is_regex_new_once_and_bounded() {
        let cached = || {
            REGEX_CACHE
                .lock()
                .unwrap()
                .contains_key("cache (?P<n>\\d+) test")
        };
        let a = compile_regex("cache (?P<n>\\d+) test").unwrap();
        assert!(cached());
        let b = compile_regex("cache (?P<n>\\d+) test").unwrap();
        for re in [&a, &b] {
            let caps = re.captures(b"a cache 42 test").unwrap();
            assert_eq!(&caps["n"], b"42");
            assert!(!re.is_match(b"cache x test"));
        }
        assert!(compile_regex("unclosed (").is_err());
        assert!(!REGEX_CACHE.lock().unwrap().contains_key("unclosed ("));
        for i in 0..=REGEX_CACHE_MAX {
            compile_regex(&format!("bound{i}")).unwrap();
        }
        assert!(REGEX_CACHE.lock().unwrap().len() <= REGEX_CACHE_MAX);
        let last = format!("bound{REGEX_CACHE_MAX}");
        assert!(compile_regex(&last).unwrap().is_match(last.as_bytes()));
    }

    /// Results come back in the items' order whatever the threads (large enough to use them).
    #[test]
    fn par_map_keeps_the_order_of_the_items() {
        for n in [0, 1, 7, 8, 17, 1000] {
            let items: Vec<u64> = (0..n).collect();
            let got = par_map(&items, |&i| i * 3 + 1);
            let want: Vec<u64> = items.iter().map(|&i| i * 3 + 1).collect();
            assert_eq!(got, want, "{n} items");
        }
    }
}
