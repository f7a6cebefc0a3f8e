//! `flakestat.toml`: the settings the analysis reads from a file. Found in the current directory,
//! or named with `--config FILE`. Forgiving (tables other commands own are left alone, every key
//! is optional) but loud: every error names the file, the line and the key, and all errors are
//! collected before failing.
//!
//! ```toml
//! [matrix]
//! # Named groups are dimensions; tried before the built-in reading of job names.
//! pattern = '^(?P<job>\w+) \((?P<platform>[^,]+), (?P<python>[^)]+)\)$'
//!
//! [pull_requests]
//! # Branch names that name a PR (a named group `pr`), added to the built-in
//! # `pull-request/<N>` and merge-queue conventions.
//! branch_patterns = ['^ci/pr-(?P<pr>\d+)$']
//! # Set to false to use only the patterns above.
//! builtin_branch_patterns = true
//!
//! [cost]
//! # Runner label globs that name GPU runners (default `*gpu*`), and prices per minute
//! # (optional; a report shows a price only when one is set).
//! gpu_labels = ['*-gpu-*']
//! gpu_price_per_minute = 0.10
//! price_per_minute = 0.008
//! ```

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

use regex::Regex;
use serde::Deserialize;
use toml::Spanned;

use crate::analysis::cost::CostConfig;
use crate::analysis::prs::{DEFAULT_BRANCH_PATTERNS, PrConventions};
use crate::matrix::MatrixParser;

/// The file looked for in the current directory.
pub const FILE_NAME: &str = "flakestat.toml";

/// What `flakestat.toml` says for the analysis.
#[derive(Debug, Clone, Default)]
pub struct FileConfig {
    /// The file read, if any.
    pub path: Option<PathBuf>,
    pub matrix: MatrixParser,
    pub pr_conventions: PrConventions,
    pub cost: CostConfig,
}

/// One problem in a config file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigProblem {
    pub line: Option<usize>,
    pub key: Option<String>,
    pub message: String,
}

/// Everything wrong with a config file, or why it could not be read.
#[derive(Debug, thiserror::Error)]
pub struct ConfigError {
    pub path: PathBuf,
    pub problems: Vec<ConfigProblem>,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.problems.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{}", self.path.display())?;
            if let Some(line) = p.line {
                write!(f, ":{line}")?;
            }
            if let Some(key) = &p.key {
                write!(f, ": {key}")?;
            }
            write!(f, ": {}", p.message)?;
        }
        Ok(())
    }
}

#[derive(Debug, Deserialize)]
struct RawFile {
    matrix: Option<RawMatrix>,
    pull_requests: Option<RawPullRequests>,
    cost: Option<RawCost>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCost {
    gpu_labels: Option<Spanned<Vec<String>>>,
    gpu_price_per_minute: Option<Spanned<f64>>,
    price_per_minute: Option<Spanned<f64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMatrix {
    pattern: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPullRequests {
    branch_patterns: Option<Vec<Spanned<String>>>,
    builtin_branch_patterns: Option<bool>,
}

/// Reads `explicit` (which must exist), or `dir/flakestat.toml` when present; defaults otherwise.
pub fn load_config(explicit: Option<&Path>, dir: &Path) -> Result<FileConfig, ConfigError> {
    let path = match explicit {
        Some(p) => p.to_path_buf(),
        None => {
            let p = dir.join(FILE_NAME);
            if !p.is_file() {
                return Ok(FileConfig::default());
            }
            p
        }
    };
    let text = std::fs::read_to_string(&path).map_err(|e| ConfigError {
        path: path.clone(),
        problems: vec![ConfigProblem {
            line: None,
            key: None,
            message: format!("cannot read it ({e}); check the path given to --config"),
        }],
    })?;
    parse_config(&text, &path)
}

/// Parses the text of a config file; `path` names it in errors.
pub fn parse_config(text: &str, path: &Path) -> Result<FileConfig, ConfigError> {
    let fail = |problems| ConfigError {
        path: path.to_path_buf(),
        problems,
    };
    let lines = Lines(text);
    let raw: RawFile = toml::from_str(text).map_err(|e| {
        let message = e.message().trim().to_string();
        let key = message
            .split('`')
            .nth(1)
            .filter(|_| message.starts_with("unknown field"))
            .map(String::from);
        fail(vec![ConfigProblem {
            line: e.span().map(|s| lines.of(s)),
            key,
            message: format!("{message}; see docs/reports.md for the keys flakestat.toml takes"),
        }])
    })?;

    let mut problems = Vec::new();
    let mut config = FileConfig {
        path: Some(path.to_path_buf()),
        ..FileConfig::default()
    };
    if let Some(pattern) = raw.matrix.and_then(|m| m.pattern)
        && let Some(matrix) = parse_matrix(&pattern, lines, &mut problems)
    {
        config.matrix = matrix;
    }
    if let Some(prs) = raw.pull_requests {
        config.pr_conventions = parse_pull_requests(prs, lines, &mut problems);
    }
    if let Some(cost) = raw.cost
        && let Some(c) = parse_cost(cost, lines, &mut problems)
    {
        config.cost = c;
    }
    if problems.is_empty() {
        Ok(config)
    } else {
        Err(fail(problems))
    }
}

/// Line numbers of byte offsets in the file's text.
#[derive(Clone, Copy)]
struct Lines<'a>(&'a str);

impl Lines<'_> {
    fn of(self, span: Range<usize>) -> usize {
        self.0[..span.start.min(self.0.len())].matches('\n').count() + 1
    }
}

/// `[matrix] pattern`: a regex whose named groups are the dimensions.
fn parse_matrix(
    pattern: &Spanned<String>,
    lines: Lines<'_>,
    problems: &mut Vec<ConfigProblem>,
) -> Option<MatrixParser> {
    let line = Some(lines.of(pattern.span()));
    let key = Some("matrix.pattern".to_string());
    match Regex::new(pattern.get_ref()) {
        Ok(re) if re.capture_names().flatten().next().is_none() => {
            problems.push(ConfigProblem {
                line,
                key,
                message: "the regex has no named group; name each dimension, e.g. (?P<python>\\d\\.\\d+t?)"
                    .into(),
            });
            None
        }
        Ok(re) => Some(MatrixParser::with_pattern(re)),
        Err(e) => {
            problems.push(ConfigProblem {
                line,
                key,
                message: format!("not a valid regex: {}", one_line(&e.to_string())),
            });
            None
        }
    }
}

/// `[pull_requests]`: branch patterns naming a PR, with or without the built-in ones.
fn parse_pull_requests(
    prs: RawPullRequests,
    lines: Lines<'_>,
    problems: &mut Vec<ConfigProblem>,
) -> PrConventions {
    let mut patterns = Vec::new();
    if prs.builtin_branch_patterns.unwrap_or(true) {
        patterns.extend(
            DEFAULT_BRANCH_PATTERNS
                .iter()
                .map(|p| Regex::new(p).expect("built-in PR branch pattern compiles")),
        );
    }
    for (i, p) in prs.branch_patterns.unwrap_or_default().iter().enumerate() {
        let line = Some(lines.of(p.span()));
        let key = Some(format!("pull_requests.branch_patterns[{i}]"));
        match Regex::new(p.get_ref()) {
            Ok(re) if re.capture_names().flatten().any(|n| n == "pr") => patterns.push(re),
            Ok(_) => problems.push(ConfigProblem {
                line,
                key,
                message:
                    "the regex has no group named `pr`; capture the PR number with (?P<pr>\\d+)"
                        .into(),
            }),
            Err(e) => problems.push(ConfigProblem {
                line,
                key,
                message: format!("not a valid regex: {}", one_line(&e.to_string())),
            }),
        }
    }
    PrConventions {
        branch_patterns: patterns,
    }
}

/// `[cost]`: GPU runner label globs and prices per minute.
fn parse_cost(
    cost: RawCost,
    lines: Lines<'_>,
    problems: &mut Vec<ConfigProblem>,
) -> Option<CostConfig> {
    let mut price = |p: Option<Spanned<f64>>, key: &str| {
        let p = p?;
        if p.get_ref().is_finite() && *p.get_ref() >= 0.0 {
            Some(*p.get_ref())
        } else {
            problems.push(ConfigProblem {
                line: Some(lines.of(p.span())),
                key: Some(format!("cost.{key}")),
                message: "a price per minute is a number, zero or more".into(),
            });
            None
        }
    };
    let gpu_price = price(cost.gpu_price_per_minute, "gpu_price_per_minute");
    let other_price = price(cost.price_per_minute, "price_per_minute");
    let (globs, line) = match cost.gpu_labels {
        Some(g) => (g.get_ref().clone(), Some(lines.of(g.span()))),
        None => (CostConfig::default().gpu_labels, None),
    };
    match CostConfig::new(globs, gpu_price, other_price) {
        Ok(c) => Some(c),
        Err(e) => {
            problems.push(ConfigProblem {
                line,
                key: Some("cost.gpu_labels".into()),
                message: format!("not a valid glob: {}", one_line(&e)),
            });
            None
        }
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<FileConfig, ConfigError> {
        parse_config(text, Path::new("flakestat.toml"))
    }

    #[test]
    fn a_pattern_and_branch_conventions_are_read() {
        let config = parse(
            "[survey]\nanything = 1\n\n[matrix]\npattern = '^(?P<job>\\w+)-(?P<python>\\d\\.\\d+t?)$'\n\n[pull_requests]\nbranch_patterns = ['^ci/pr-(?P<pr>\\d+)$']\nbuiltin_branch_patterns = false\n",
        )
        .unwrap();
        let dims = config.matrix.parse("unit-3.14t");
        assert_eq!(dims.get("python").map(String::as_str), Some("3.14t"));
        assert_eq!(config.pr_conventions.branch_patterns.len(), 1);
        assert!(config.pr_conventions.branch_patterns[0].is_match("ci/pr-12"));
    }

    #[test]
    fn every_error_names_file_line_and_key() {
        let err = parse(
            "[matrix]\npattern = '(?P<x'\n\n[pull_requests]\nbranch_patterns = ['ok-(?P<pr>\\d+)', 'no-group-(\\d+)']\n",
        )
        .unwrap_err();
        let text = err.to_string();
        assert_eq!(err.problems.len(), 2, "{text}");
        assert!(
            text.contains("flakestat.toml:2: matrix.pattern: not a valid regex"),
            "{text}"
        );
        assert!(
            text.contains("flakestat.toml:5: pull_requests.branch_patterns[1]: the regex has no group named `pr`"),
            "{text}"
        );
    }

    #[test]
    fn unknown_keys_and_bad_syntax_are_reported_with_their_line() {
        let err = parse("[matrix]\n\npatern = 'x'\n").unwrap_err();
        assert_eq!(err.problems[0].line, Some(3));
        assert_eq!(err.problems[0].key.as_deref(), Some("patern"));
        let err = parse("[matrix\npattern = 'x'\n").unwrap_err();
        assert_eq!(err.problems[0].line, Some(1));
        let err = parse("[matrix]\npattern = '(x)'\n").unwrap_err();
        assert!(err.to_string().contains("no named group"));
    }

    #[test]
    fn the_cost_table_is_read_and_checked() {
        let config = parse(
            "[cost]\ngpu_labels = ['*-a100-*']\ngpu_price_per_minute = 0.5\nprice_per_minute = 0.01\n",
        )
        .unwrap();
        assert_eq!(config.cost.gpu_labels, ["*-a100-*"]);
        assert_eq!(config.cost.gpu_price_per_minute, Some(0.5));
        assert_eq!(config.cost.price_per_minute, Some(0.01));
        assert_eq!(parse("").unwrap().cost.gpu_labels, ["*gpu*"]);
        let err = parse("[cost]\ngpu_labels = ['a[']\nprice_per_minute = -1.0\n").unwrap_err();
        let text = err.to_string();
        assert_eq!(err.problems.len(), 2, "{text}");
        assert!(
            text.contains("flakestat.toml:3: cost.price_per_minute"),
            "{text}"
        );
        assert!(
            text.contains("flakestat.toml:2: cost.gpu_labels: not a valid glob"),
            "{text}"
        );
    }

    #[test]
    fn a_missing_file_is_defaults_unless_named() {
        let dir = tempfile::tempdir().unwrap();
        assert!(load_config(None, dir.path()).unwrap().path.is_none());
        let named = dir.path().join("other.toml");
        let err = load_config(Some(&named), dir.path()).unwrap_err();
        assert!(err.to_string().contains("other.toml"));
        std::fs::write(
            dir.path().join(FILE_NAME),
            "[matrix]\npattern = '(?P<gpu>t4)'\n",
        )
        .unwrap();
        assert!(load_config(None, dir.path()).unwrap().path.is_some());
    }
}
