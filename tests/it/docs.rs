//! The documentation's command examples are tests (STYLE.md, habit 14): every fenced command of
//! README.md and docs/*.md that runs on the bundled story (`--replay fixtures/cuda-python-flake`,
//! or the bundled fleet, `--replay fixtures/fleet`,
//! `classify fixtures/…`, `signatures check`, `--help`) is run here, through `sh` as a user
//! pastes it, from a folder that holds the clone's `fixtures/` and `signatures/`, with a cache
//! folder of this test run's own (never the user's: the replay's store is made there once, by
//! the first survey the docs show, and read by the examples after it).
//!
//! Two kinds of blocks, as trycmd reads them:
//! - ```` ```console ````: `$ COMMAND` lines, each followed by the output it prints (stdout,
//!   then stderr). A line `...` stands for any number of lines, `[..]` within a line for any
//!   text (a figure another change may move); the other lines must match, in order. A last line
//!   `? N` is the exit code it expects (else 0).
//! - ```` ```sh ```` (and unlabelled blocks): each runnable line must exit 0, print something on
//!   stdout and no `error:` on stderr. `cargo run -- ` is run as `flakestat `.
//!
//! Examples that cannot run here are named in [`NOT_RUN`] with the reason.

use std::path::{Path, PathBuf};
use std::process::Output;

use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};

/// Commands on the bundled story the docs show that this test does not run, and why.
const NOT_RUN: [(&str, &str); 2] = [
    (
        "flakestat serve ",
        "serves until stopped; tests/it/serve_story.rs runs it with the replay",
    ),
    (
        "flakestat replay deliver ",
        "needs the serve above; tests/it/serve_story.rs delivers the replay",
    ),
];

/// A fenced block of a doc: its info string, its text and where it starts.
struct Block {
    info: String,
    text: String,
    line: usize,
}

fn blocks(markdown: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut current: Option<Block> = None;
    for (event, range) in Parser::new(markdown).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(kind)) => {
                let info = match kind {
                    CodeBlockKind::Fenced(info) => info.to_string(),
                    CodeBlockKind::Indented => "indented".to_string(),
                };
                let line = markdown[..range.start].lines().count() + 1;
                current = Some(Block {
                    info,
                    text: String::new(),
                    line,
                });
            }
            Event::Text(text) => {
                if let Some(b) = current.as_mut() {
                    b.text.push_str(&text);
                }
            }
            Event::End(TagEnd::CodeBlock) => out.extend(current.take()),
            _ => {}
        }
    }
    out
}

/// Whether `command` runs on what a clone holds, with no network and no token.
fn runnable(command: &str) -> bool {
    command.starts_with("flakestat ")
        && (command.contains("--replay fixtures/cuda-python-flake")
            || command.contains("--replay fixtures/fleet")
            || command.contains("classify ") && command.contains("fixtures/")
            || command.contains("signatures check")
            || command.ends_with("--help"))
}

/// One example: the command as pasted, and what the doc says it prints (console blocks).
struct Example {
    at: String,
    command: String,
    expected: Option<(String, i32)>,
}

/// The examples of one doc, in order.
fn examples(name: &str, markdown: &str) -> Vec<Example> {
    let mut out = Vec::new();
    for block in blocks(markdown) {
        let at = format!("{name}:{}", block.line);
        match block.info.as_str() {
            "console" => {
                let mut current: Option<(String, Vec<String>)> = None;
                let finish = |current: Option<(String, Vec<String>)>, out: &mut Vec<Example>| {
                    let Some((command, mut lines)) = current else {
                        return;
                    };
                    let mut code = 0;
                    if let Some(last) = lines.last()
                        && let Some(n) = last.strip_prefix("? ")
                    {
                        code = n.trim().parse().expect("`? N`: an exit code");
                        lines.pop();
                    }
                    if runnable(&command) {
                        out.push(Example {
                            at: at.clone(),
                            command,
                            expected: Some((lines.join("\n"), code)),
                        });
                    }
                };
                for line in block.text.lines() {
                    if let Some(command) = line.strip_prefix("$ ") {
                        finish(current.take(), &mut out);
                        current = Some((command.to_string(), Vec::new()));
                    } else if let Some((_, lines)) = current.as_mut() {
                        lines.push(line.to_string());
                    }
                }
                finish(current.take(), &mut out);
            }
            "sh" | "shell" | "bash" | "" => {
                let mut joined = String::new();
                for line in block.text.lines() {
                    let line = line.trim();
                    if let Some(head) = line.strip_suffix('\\') {
                        joined.push_str(head);
                        continue;
                    }
                    joined.push_str(line);
                    let command = std::mem::take(&mut joined);
                    let command = match command.strip_prefix("cargo run -- ") {
                        Some(rest) => format!("flakestat {rest}"),
                        None => command,
                    };
                    if NOT_RUN
                        .iter()
                        .any(|(prefix, _)| command.starts_with(prefix))
                    {
                        continue;
                    }
                    if runnable(&command) {
                        out.push(Example {
                            at: at.clone(),
                            command,
                            expected: None,
                        });
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// Whether `actual` is what `expected` shows: its lines in order, `...` for any lines, `[..]`
/// for any text within a line; trailing spaces ignored. `Err` says the first line not found.
fn matches(expected: &str, actual: &str) -> Result<(), String> {
    let actual: Vec<&str> = actual.lines().map(str::trim_end).collect();
    let mut at = 0;
    let mut skipping = false;
    for want in expected.lines().map(str::trim_end) {
        if want == "..." {
            skipping = true;
            continue;
        }
        let found = if skipping {
            (at..actual.len()).find(|&i| line_matches(want, actual[i]))
        } else {
            (at < actual.len() && line_matches(want, actual[at])).then_some(at)
        };
        match found {
            Some(i) => at = i + 1,
            None => {
                return Err(format!(
                    "expected line {want:?}, found {:?}",
                    actual.get(at).copied().unwrap_or("<end of output>")
                ));
            }
        }
        skipping = false;
    }
    if !skipping && at < actual.len() {
        return Err(format!("more output than shown: {:?}", actual[at]));
    }
    Ok(())
}

fn line_matches(want: &str, line: &str) -> bool {
    let parts: Vec<&str> = want.split("[..]").collect();
    if parts.len() == 1 {
        return want == line;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !line.starts_with(first) || !line.ends_with(last) || line.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &line[first.len()..line.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    true
}

/// A folder laid out as a clone (its `fixtures/` and `signatures/`), `flakestat` on `PATH`.
struct Clone {
    _dir: tempfile::TempDir,
    cwd: PathBuf,
    bin: PathBuf,
    cache_home: PathBuf,
}

impl Clone {
    fn new() -> Clone {
        let dir = tempfile::TempDir::new_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let cwd = dir.path().join("clone");
        std::fs::create_dir_all(&cwd).unwrap();
        for name in ["fixtures", "signatures"] {
            std::os::unix::fs::symlink(crate::common::root().join(name), cwd.join(name)).unwrap();
        }
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_flakestat"), bin.join("flakestat")).unwrap();
        let cache_home = dir.path().join("cache-home");
        Clone {
            _dir: dir,
            cwd,
            bin,
            cache_home,
        }
    }

    fn run(&self, command: &str) -> Output {
        let base = crate::common::flakestat();
        let mut sh = std::process::Command::new("sh");
        for (k, v) in base.get_envs() {
            match v {
                Some(v) => sh.env(k, v),
                None => sh.env_remove(k),
            };
        }
        let path = format!(
            "{}:{}",
            self.bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        sh.arg("-c")
            .arg(command)
            .current_dir(&self.cwd)
            .env("PATH", path)
            .env("XDG_CACHE_HOME", &self.cache_home)
            .env("NO_COLOR", "1");
        sh.output().expect("sh runs")
    }
}

fn docs() -> Vec<(String, String)> {
    let root = crate::common::root();
    let mut names = vec![PathBuf::from("README.md")];
    let mut more: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .map(|p| Path::new("docs").join(p.file_name().unwrap()))
        .collect();
    more.sort();
    names.extend(more);
    names
        .into_iter()
        .map(|name| {
            let text = std::fs::read_to_string(root.join(&name)).unwrap();
            (name.display().to_string(), text)
        })
        .collect()
}

#[test]
fn the_docs_command_examples_run_and_print_what_they_show() {
    let clone = Clone::new();
    let mut ran = Vec::new();
    let mut failures = Vec::new();
    for (name, text) in docs() {
        for example in examples(&name, &text) {
            let out = clone.run(&example.command);
            let stdout = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            let code = out.status.code().unwrap_or(-1);
            let problem = match &example.expected {
                Some((expected, want)) => {
                    let both = format!("{stdout}{stderr}");
                    if code != *want {
                        Some(format!("exit {code}, the doc says {want}"))
                    } else {
                        matches(expected, &both).err()
                    }
                }
                None if code != 0 => Some(format!("exit {code}")),
                None if stdout.trim().is_empty() => Some("printed nothing".to_string()),
                None if stderr.contains("error:") => Some("an error on stderr".to_string()),
                None => None,
            };
            if let Some(problem) = problem {
                failures.push(format!(
                    "{}: `{}`: {problem}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
                    example.at, example.command
                ));
            }
            ran.push(format!("{}: {}", example.at, example.command));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // The parser found the examples: the quick start's survey and report, `signatures check`,
    // `classify` and the nightly at least.
    assert!(ran.len() >= 6, "{ran:#?}");
    for must in [
        "survey",
        "report",
        "signatures check",
        "classify",
        "nightly",
    ] {
        assert!(
            ran.iter().any(|r| r.contains(must)),
            "no {must} example ran: {ran:#?}"
        );
    }
}

#[test]
fn the_output_matcher_elides_only_what_it_is_told_to() {
    assert!(matches("a\n...\nd", "a\nb\nc\nd").is_ok());
    assert!(matches("a\nd", "a\nb\nc\nd").is_err());
    assert!(matches("a [..] c", "a b b c").is_ok());
    assert!(matches("a [..] c", "a b b d").is_err());
    assert!(matches("a\n...", "a\nanything").is_ok());
    assert!(matches("a", "a\nmore").is_err());
    assert!(matches("x[..]", "x").is_ok());
    assert!(matches("[..]y[..]", "xyz").is_ok());
    assert!(matches("[..]y[..]", "xz").is_err());
}
