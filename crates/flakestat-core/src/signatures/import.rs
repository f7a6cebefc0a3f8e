//! Other tools' rule files → signature files (as text; the `cli` writes them).
//!
//! PyTorch's log classifier (pytorch/test-infra, `aws/lambda/log-classifier`) keeps an ordered
//! `ruleset.toml` of `[[rule]] name = … pattern = …`, first rule highest priority. Each rule
//! becomes `NNN-<slug>.toml` with its pattern unchanged; the number keeps the ruleset's order in
//! the ids, so sorting matches by id sorts them by PyTorch priority. PyTorch drops a few wrapper
//! boilerplate lines before matching; each imported signature lists them under `exclude`
//! (the `Process completed with exit code N.` line is excluded by flakestat itself).

use serde::{Deserialize, Serialize};

/// Lines PyTorch's classifier drops before matching: runner-wrapper boilerplate that is printed
/// after every failure and never describes it.
pub const PYTORCH_BOILERPLATE: &[&str] = &[
    r"\[OSDC\] Step script exited",
    r"^##\[error\]Executing the custom container implementation failed",
    r"^##\[error\]TypeError: Cannot read properties of null \(reading 'jobPod'\)",
    r"\[OSDC\] Step cancelled by GitHub Actions",
];

/// One signature file to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportedSignature {
    /// The signature id; the file is `<id>.toml`.
    pub id: String,
    /// The file's TOML text.
    pub toml: String,
}

/// Why a rule file could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error(
        "line {line}, column {column}: {message}; is this PyTorch's log-classifier ruleset.toml?"
    )]
    Parse {
        line: usize,
        column: usize,
        message: String,
    },
    #[error("rule {index} (`{name}`): the pattern does not compile as a Rust regex: {message}")]
    Pattern {
        index: usize,
        name: String,
        message: String,
    },
    #[error("the file has no [[rule]] entries; is this PyTorch's log-classifier ruleset.toml?")]
    NoRules,
}

#[derive(Deserialize)]
struct RuleSet {
    #[serde(default)]
    rule: Vec<Rule>,
}

#[derive(Deserialize)]
struct Rule {
    name: String,
    pattern: String,
}

#[derive(Serialize)]
struct Out<'a> {
    title: &'a str,
    pattern: &'a str,
    exclude: &'a [&'a str],
}

/// Converts PyTorch's `ruleset.toml` into signature files, in ruleset order.
pub fn import_pytorch(text: &str) -> Result<Vec<ImportedSignature>, ImportError> {
    let set: RuleSet = toml::from_str(text).map_err(|e| {
        let (line, column) = e
            .span()
            .map_or((1, 1), |s| super::load::line_column(text, s.start));
        ImportError::Parse {
            line,
            column,
            message: e.message().trim().to_string(),
        }
    })?;
    if set.rule.is_empty() {
        return Err(ImportError::NoRules);
    }
    let width = set.rule.len().to_string().len().max(3);
    let total = set.rule.len();
    set.rule
        .iter()
        .enumerate()
        .map(|(i, rule)| {
            if let Err(e) = regex::bytes::Regex::new(&rule.pattern) {
                return Err(ImportError::Pattern {
                    index: i + 1,
                    name: rule.name.clone(),
                    message: e.to_string(),
                });
            }
            let id = format!("{:0width$}-{}", i + 1, slug(&rule.name));
            let body = toml::to_string(&Out {
                title: rule.name.trim(),
                pattern: &rule.pattern,
                exclude: PYTORCH_BOILERPLATE,
            })
            .expect("strings always serialize");
            let toml = format!(
                "# Imported from PyTorch's log-classifier ruleset.toml: rule {} of {total} (a lower \
                 number wins).\n# The pattern is unchanged; `exclude` lists the boilerplate lines \
                 PyTorch drops before matching.\n{body}",
                i + 1
            );
            Ok(ImportedSignature { id, toml })
        })
        .collect()
}

/// `GHA timeout` → `gha-timeout`.
fn slug(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let out = out.trim_matches('-');
    if out.is_empty() {
        "rule".to_string()
    } else {
        out.chars()
            .take(60)
            .collect::<String>()
            .trim_end_matches('-')
            .to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn patterns_survive_unchanged() {
        let ruleset = r#"
[[rule]]
name = "Quote ' test"
pattern = '''it's a "quote" \d+ \\ $'''

[[rule]]
name = "GHA timeout"
pattern = '^##\[error\]The action (.*)has timed out'
"#;
        let out = import_pytorch(ruleset).unwrap();
        assert_eq!(out.len(), 2);
        assert_eq!(out[1].id, "002-gha-timeout");
        let spec =
            super::super::load::parse_spec(&out[0].id, &out[0].toml, Path::new("x.toml")).unwrap();
        assert_eq!(spec.pattern, r#"it's a "quote" \d+ \\ $"#);
        assert_eq!(spec.exclude.len(), PYTORCH_BOILERPLATE.len());
    }

    #[test]
    fn bad_input() {
        assert!(matches!(import_pytorch("x = 1"), Err(ImportError::NoRules)));
        assert!(matches!(
            import_pytorch("[[rule]]\nname = 'a'\npattern = '('\n"),
            Err(ImportError::Pattern { index: 1, .. })
        ));
        assert!(matches!(
            import_pytorch("[[rule]\n"),
            Err(ImportError::Parse { line: 1, .. })
        ));
    }
}
