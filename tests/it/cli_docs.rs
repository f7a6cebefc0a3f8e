//! The documentation the binary carries: `flakestat man` (one page on stdout, or a page per
//! command into a folder) and `flakestat completions`, both generated from the clap definition,
//! so every command and flag `--help` shows is in them.

use std::process::Output;

fn flakestat(args: &[&str]) -> Output {
    crate::common::flakestat()
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("the binary runs")
}

/// The commands a `--help` lists under `Commands:`, `help` left out.
fn listed(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter(|l| !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

/// The commands `flakestat --help` lists, read from the help itself.
fn commands() -> Vec<String> {
    let help = String::from_utf8(flakestat(&["--help"]).stdout).unwrap();
    let listed = listed(&help);
    assert!(listed.len() >= 8, "{help}");
    listed
}

#[test]
fn the_man_page_names_every_command_and_each_command_has_a_page_with_its_flags() {
    let out = flakestat(&["man"]);
    assert!(out.status.success());
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(page.contains(".TH flakestat 1 "), "{page}");
    assert!(
        !page.contains("flakestat\\-help(1)"),
        "help is no page: {page}"
    );
    for command in commands() {
        assert!(page.contains(&command), "{command} missing from the page");
    }

    let dir = tempfile::tempdir().unwrap();
    let into = dir.path().join("man1");
    let out = flakestat(&["man", "-o", into.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty());
    assert_eq!(
        std::fs::read_to_string(into.join("flakestat.1")).unwrap(),
        page
    );
    for command in commands() {
        let sub = std::fs::read_to_string(into.join(format!("flakestat-{command}.1")))
            .unwrap_or_else(|e| panic!("flakestat-{command}.1: {e}"));
        assert!(sub.contains(&format!(".TH flakestat-{command} 1")), "{sub}");
    }
    // Flags as roff writes them (`\-\-repo`), where `--help` has them.
    let survey = std::fs::read_to_string(into.join("flakestat-survey.1")).unwrap();
    for flag in ["repo", "since", "until", "format", "store"] {
        assert!(survey.contains(&format!("\\-\\-{flag}")), "--{flag}");
    }
    // `--wait` is kept for old scripts but hidden: the store has no lock to wait for.
    assert!(!survey.contains("\\-\\-wait"), "--wait is hidden");
}

#[test]
fn man_into_a_file_that_is_not_a_folder_says_which_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-a-folder");
    std::fs::write(&file, "keep").unwrap();
    let out = flakestat(&["man", "--dir", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(file.to_str().unwrap()), "{err}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep");
}

#[test]
fn completions_know_every_command() {
    for shell in ["bash", "zsh", "fish"] {
        let out = flakestat(&["completions", shell]);
        assert!(out.status.success(), "{shell}");
        let script = String::from_utf8(out.stdout).unwrap();
        for command in commands() {
            assert!(script.contains(&command), "{shell}: {command}");
        }
        assert!(script.contains("since"), "{shell}: a flag of survey");
    }
}

/// Every command and subcommand, as `flakestat --help` and `flakestat signatures --help` list them.
fn every_command() -> Vec<Vec<String>> {
    let mut all: Vec<Vec<String>> = commands().into_iter().map(|c| vec![c]).collect();
    let help = String::from_utf8(flakestat(&["signatures", "--help"]).stdout).unwrap();
    for sub in listed(&help) {
        all.push(vec!["signatures".into(), sub]);
    }
    assert!(all.len() >= 11, "{all:?}");
    all
}

/// The rendered help of every command: examples, the global flags under a heading of their own, and
/// each shared flag shown in one spelling. Which commands must take `-o/--output` and
/// `--signatures` is the clap definition's unit test
/// (`cli::tests::every_command_speaks_the_same_flags`); here, wherever a help shows one, it reads
/// the same.
#[test]
fn every_help_has_examples_global_options_apart_and_one_spelling_of_each_flag() {
    let mut shown = (0, 0);
    for command in every_command() {
        let name = command.join(" ");
        let mut args: Vec<&str> = command.iter().map(String::as_str).collect();
        args.push("--help");
        let out = flakestat(&args);
        assert!(out.status.success(), "{name}");
        let help = String::from_utf8(out.stdout).unwrap();
        assert!(
            help.contains("\nExamples:\n  flakestat "),
            "{name}:\n{help}"
        );
        let global = help
            .split("\nGlobal options:\n")
            .nth(1)
            .unwrap_or_else(|| panic!("{name}: no Global options heading:\n{help}"));
        assert!(
            global.contains("--quiet") && global.contains("--color"),
            "{name}"
        );
        let options = help.lines().filter(|l| l.trim_start().starts_with('-'));
        for line in options {
            if line.contains("--output <") {
                assert!(line.starts_with("  -o, --output <"), "{name}: {line:?}");
                shown.0 += 1;
            }
            if line.contains("--signatures <") {
                assert!(
                    line.starts_with("      --signatures <DIR>"),
                    "{name}: {line:?}"
                );
                shown.1 += 1;
            }
        }
        for old in ["--out ", "--write ", "--dir ", "--now "] {
            assert!(!help.contains(old), "{name} shows {old}:\n{help}");
        }
    }
    assert!(
        shown.0 > 0 && shown.1 > 0,
        "no help showed --output or --signatures"
    );
    let nightly = String::from_utf8(flakestat(&["nightly", "--help"]).stdout).unwrap();
    assert!(nightly.contains("      --until <WHEN>"), "{nightly}");
}
