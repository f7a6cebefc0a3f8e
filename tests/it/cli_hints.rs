//! What flakestat tells a user to type, and how its output meets a terminal or a pipe (issue
//! 40): durations written one way for every flag, fix-it commands that run when pasted (from a
//! clone under a long path), tables that never break a word, `COLUMNS` for files, a closed pipe
//! on stderr as quiet as one on stdout.

use std::path::Path;
use std::process::Output;

use crate::common::{flakestat, signatures};

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `serve`'s settings up to the store: a secret file, `args`, and signatures that are not
/// there, so a run that gets past its durations stops at the signatures (exit 3) instead of
/// serving.
fn serve_settings(dir: &Path, args: &[&str]) -> Output {
    let secret = dir.join("secret");
    std::fs::write(&secret, "s3cret\n").unwrap();
    flakestat()
        .args(["serve", "--repo", "octo/demo", "--listen", "127.0.0.1:0"])
        .arg("--webhook-secret-file")
        .arg(&secret)
        .arg("--cache-dir")
        .arg(dir.join("cache"))
        .arg("--signatures")
        .arg(dir.join("no-such-signatures"))
        .args(args)
        .output()
        .expect("the binary runs")
}

/// `--since 30d` and `serve --resync-window 200d` read the same span: days and weeks are taken
/// by every duration flag, and a bad one names the forms, days among them.
#[test]
fn every_duration_flag_reads_days_and_weeks_as_since_does() {
    let dir = tempfile::tempdir().unwrap();
    for window in ["200d", "2w", "36h", "90m", "45s"] {
        let out = serve_settings(dir.path(), &["--resync-window", window, "--resync", "1d"]);
        let err = stderr(&out);
        assert!(!err.contains("not a duration"), "{window}: {err}");
        assert!(err.contains("no-such-signatures"), "{window}: {err}");
        assert_eq!(out.status.code(), Some(3), "{window}: {err}");
    }
    for bad in ["200y", "1.5h", "2 d", "a day"] {
        let out = serve_settings(dir.path(), &["--resync-window", bad]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(3), "{bad}: {err}");
        assert!(
            err.contains(&format!("--resync-window {bad:?} is not a duration")),
            "{bad}: {err}"
        );
        assert!(err.contains("7d"), "the forms name days: {err}");
    }
    // The same words in a window: `--since 200d` is a span back from now.
    let out = flakestat()
        .args([
            "report",
            "--repo",
            "octo/demo",
            "--since",
            "200d",
            "--format",
            "json",
        ])
        .arg("--cache-dir")
        .arg(dir.path().join("empty"))
        .arg("--signatures")
        .arg(signatures())
        .output()
        .unwrap();
    assert!(!stderr(&out).contains("is not a time"), "{}", stderr(&out));
}

/// `args` with stdout and stderr on one pipe (`2>&1 | …`) whose reader keeps `keep` lines and
/// then goes away (`head -n keep`): the exit code and whether anything was read.
fn into_closed_pipe(args: &[&std::ffi::OsStr], keep: usize) -> (Option<i32>, String) {
    use std::io::{BufRead, BufReader};
    let (reader, writer) = std::io::pipe().unwrap();
    let mut child = flakestat()
        .args(args)
        .env("NO_COLOR", "1")
        .stdout(writer.try_clone().unwrap())
        .stderr(writer)
        .spawn()
        .unwrap();
    let mut read = String::new();
    let mut lines = BufReader::new(reader);
    for _ in 0..keep {
        if lines.read_line(&mut read).unwrap_or(0) == 0 {
            break;
        }
    }
    drop(lines);
    let status = child.wait().unwrap();
    (status.code(), read)
}

/// `flakestat … 2>&1 | head`: the reader of both stdout and stderr gone, before anything was
/// written or after a line, is no panic (exit 101) but the command's own outcome: a report
/// cut short by its reader is a success, as with a closed stdout alone; an error still exits
/// with its code.
#[test]
fn a_closed_stderr_is_as_quiet_as_a_closed_stdout() {
    let cache = tempfile::tempdir().unwrap();
    let story = crate::common::story_dir();
    let sigs = signatures();
    let os = |s: &'static str| std::ffi::OsStr::new(s);
    // The survey prints its report on stdout, then its closing lines on stderr.
    let survey: Vec<&std::ffi::OsStr> = vec![
        os("survey"),
        os("--replay"),
        story.as_os_str(),
        os("--cache-dir"),
        cache.path().as_os_str(),
        os("--signatures"),
        sigs.as_os_str(),
        os("--since"),
        os("2026-06-15"),
        os("--until"),
        os("2026-06-20"),
    ];
    for keep in [0, 1, 3] {
        let (code, read) = into_closed_pipe(&survey, keep);
        assert_eq!(
            code,
            Some(0),
            "survey, reader gone after {keep} lines: {read}"
        );
        assert!(!read.contains("panicked"), "{read}");
    }
    // An incomplete store: `report` says so on stderr and exits 9; an error exits with its code.
    let report: Vec<&std::ffi::OsStr> = vec![
        os("report"),
        os("--repo"),
        os("NVIDIA/cuda-python"),
        os("--since"),
        os("2026-06-01"),
        os("--until"),
        os("2026-06-10"),
        os("--cache-dir"),
        cache.path().as_os_str(),
        os("--signatures"),
        sigs.as_os_str(),
    ];
    for keep in [0, 1] {
        let (code, read) = into_closed_pipe(&report, keep);
        assert!(
            matches!(code, Some(0 | 9)),
            "report after {keep} lines: {code:?} {read}"
        );
        assert!(!read.contains("panicked"), "{read}");
    }
    let bad = [
        os("report"),
        os("--repo"),
        os("octo/demo"),
        os("--since"),
        os("someday"),
    ];
    let (code, read) = into_closed_pipe(&bad, 0);
    assert_eq!(code, Some(3), "an error keeps its code: {read}");
}

/// A clone of the story's data under a path of more than 150 characters, with a space and a
/// quote in it (`it's a clone xxx…`): the story, the signatures, and the cache folder.
struct LongClone {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
    /// A folder on `PATH` holding `flakestat`, so a printed line runs as the user would.
    bin: std::path::PathBuf,
}

impl LongClone {
    fn new() -> LongClone {
        let dir = tempfile::TempDir::new_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let root = dir
            .path()
            .join(format!("it's a clone {}", "x".repeat(80)))
            .join("of flakestat, in a deeper folder than usual");
        assert!(root.to_str().unwrap().len() >= 150, "{}", root.display());
        crate::common::copy_dir(&crate::common::story_dir(), &root.join("story"));
        crate::common::copy_dir(&signatures(), &root.join("signatures"));
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_flakestat"), bin.join("flakestat")).unwrap();
        LongClone {
            _dir: dir,
            root,
            bin,
        }
    }

    fn path(&self, name: &str) -> std::path::PathBuf {
        self.root.join(name)
    }

    /// `line` as a user pastes it into a shell, with this clone's `flakestat` first on `PATH`.
    fn paste(&self, line: &str) -> Output {
        let path = format!(
            "{}:{}",
            self.bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        flakestat_shell(line, &path)
    }
}

/// `sh -c line` with the test binary's environment (no token, no cache folder of the machine).
fn flakestat_shell(line: &str, path: &str) -> Output {
    let cmd = flakestat();
    let envs: Vec<_> = cmd
        .get_envs()
        .map(|(k, v)| (k.to_owned(), v.map(|v| v.to_owned())))
        .collect();
    let mut sh = std::process::Command::new("sh");
    sh.arg("-c")
        .arg(line)
        .env("PATH", path)
        .env("NO_COLOR", "1");
    for (k, v) in envs {
        match v {
            Some(v) => sh.env(k, v),
            None => sh.env_remove(k),
        };
    }
    sh.output().expect("sh runs")
}

/// The report's fix-it command, as each format prints it: markdown's code span, the terminal's
/// line of its own.
fn printed_command(format: &str, report: &str) -> String {
    match format {
        "markdown" => {
            let first = report.lines().next().unwrap_or_default();
            let start = first.find("`flakestat survey").expect(first) + 1;
            let len = first[start..].find('`').expect(first);
            first[start..start + len].to_string()
        }
        _ => report
            .lines()
            .find(|l| l.trim_start().starts_with("flakestat survey"))
            .unwrap_or_else(|| panic!("no command line in:\n{report}"))
            .trim()
            .to_string(),
    }
}

/// The "run this to finish" line, printed from a clone under a long path (a space and a quote
/// in it), is whole (no "…"), on one line in the terminal however narrow, and runs when pasted:
/// the survey it names fills the gap, and the same report is then complete (exit 0).
#[test]
fn the_finishing_command_runs_as_printed_from_a_long_path() {
    let clone = LongClone::new();
    let (story, cache, sigs) = (
        clone.path("story"),
        clone.path("cache"),
        clone.path("signatures"),
    );
    let with_store = |cmd: &mut std::process::Command| {
        cmd.arg("--replay")
            .arg(&story)
            .arg("--cache-dir")
            .arg(&cache)
            .arg("--signatures")
            .arg(&sigs);
    };
    let mut survey = flakestat();
    survey.args([
        "-q",
        "survey",
        "--since",
        "2026-06-15",
        "--until",
        "2026-06-20",
    ]);
    with_store(&mut survey);
    crate::common::ok(survey.args(["--format", "json"]).output().unwrap());

    for (format, columns) in [("table", "60"), ("markdown", "80")] {
        let report = |cmd: &mut std::process::Command| {
            cmd.args(["report", "--since", "2026-06-10", "--until", "2026-06-20"]);
            with_store(cmd);
            cmd.args(["--format", format])
                .env("COLUMNS", columns)
                .env("NO_COLOR", "1");
        };
        let mut before = flakestat();
        report(&mut before);
        let out = before.output().unwrap();
        assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
        let text = String::from_utf8(out.stdout).unwrap();
        let line = printed_command(format, &text);
        assert!(!line.contains('…'), "cut: {line}");
        for path in [&story, &cache, &sigs] {
            assert!(
                line.contains(&path.display().to_string().replace('\'', "'\\''")),
                "{format}: {} not whole in {line}",
                path.display()
            );
        }
        let pasted = clone.paste(&line);
        assert!(
            pasted.status.success(),
            "{format}: `{line}` exited {:?}: {}",
            pasted.status.code(),
            stderr(&pasted)
        );
        let mut after = flakestat();
        report(&mut after);
        let out = after.output().unwrap();
        assert_eq!(out.status.code(), Some(0), "finished: {}", stderr(&out));
        assert!(!String::from_utf8_lossy(&out.stdout).contains("incomplete:"));
        // Undo the survey for the next format: the store without the gap's runs again.
        std::fs::remove_dir_all(&cache).unwrap();
        let mut survey = flakestat();
        survey.args([
            "-q",
            "survey",
            "--since",
            "2026-06-15",
            "--until",
            "2026-06-20",
        ]);
        with_store(&mut survey);
        crate::common::ok(survey.args(["--format", "json"]).output().unwrap());
    }
}

/// `survey --offline` over a store that lacks part of its window says so, exits 9 as `report`
/// does (`--allow-incomplete`: 0), and its fix-it command keeps `--cache-dir` and
/// `--signatures`.
#[test]
fn an_offline_survey_of_an_incomplete_store_says_it_and_exits_9() {
    let clone = LongClone::new();
    let (cache, sigs) = (clone.path("cache"), clone.path("signatures"));
    let mut survey = flakestat();
    survey
        .args([
            "-q",
            "survey",
            "--since",
            "2026-06-15",
            "--until",
            "2026-06-20",
        ])
        .arg("--replay")
        .arg(clone.path("story"))
        .arg("--cache-dir")
        .arg(&cache)
        .arg("--signatures")
        .arg(&sigs)
        .args(["--format", "json"]);
    crate::common::ok(survey.output().unwrap());
    let offline = |extra: &[&str]| {
        flakestat()
            .args(["survey", "--offline", "--repo", "NVIDIA/cuda-python"])
            .args(["--since", "2026-06-10", "--until", "2026-06-20"])
            .arg("--cache-dir")
            .arg(&cache)
            .arg("--signatures")
            .arg(&sigs)
            .args(["--format", "markdown"])
            .args(extra)
            .output()
            .unwrap()
    };
    let out = offline(&[]);
    assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("does not hold the whole window"),
        "{}",
        stderr(&out)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let line = printed_command("markdown", &text);
    let quoted = |p: &Path| format!("'{}'", p.display().to_string().replace('\'', "'\\''"));
    assert!(
        line.ends_with(&format!(
            " --cache-dir {} --signatures {}",
            quoted(&cache),
            quoted(&sigs)
        )),
        "{line}"
    );
    let out = offline(&["--allow-incomplete"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// `report` of the story's surveyed store, `args` after the window, as a table fitted to
/// `columns` (`None`: no `COLUMNS`), to a pipe: its stdout.
fn story_table(columns: Option<u16>, args: &[&str]) -> String {
    let (command, args) = args.split_first().expect("a command");
    let mut cmd = flakestat();
    cmd.arg(command)
        .args(crate::common::STORY_WINDOW)
        .arg("--cache-dir")
        .arg(crate::common::surveyed_story())
        .arg("--signatures")
        .arg(signatures())
        .args(args)
        .env("NO_COLOR", "1");
    if let Some(c) = columns {
        cmd.env("COLUMNS", c.to_string());
    }
    let out = crate::common::ok(cmd.output().unwrap());
    String::from_utf8(out.stdout).unwrap()
}

/// The failing tests' ids the story's `report --tests` names (from its JSON).
fn story_test_ids() -> Vec<String> {
    let json = story_table(None, &["report", "--tests", "--format", "json"]);
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    let mut ids = Vec::new();
    fn walk(v: &serde_json::Value, ids: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(map) => {
                for (k, v) in map {
                    if let (true, Some(s)) = (k == "id", v.as_str())
                        && s.contains("::")
                    {
                        ids.push(s.to_string());
                    }
                    walk(v, ids);
                }
            }
            serde_json::Value::Array(items) => items.iter().for_each(|v| walk(v, ids)),
            _ => {}
        }
    }
    walk(&json, &mut ids);
    ids.sort();
    ids.dedup();
    assert!(ids.len() >= 4, "{json}");
    ids
}

/// At 180 to 320 columns (a wide terminal: a grid almost fits) no test id is broken mid-word:
/// each test a table names, it names whole on one line (in a grid whose column holds it, or
/// as one record per row).
#[test]
fn tables_never_break_a_test_id_at_any_wide_width() {
    let ids = story_test_ids();
    for columns in [180, 240, 320] {
        for args in [
            &["report", "--tests"][..],
            &["report"][..],
            &["report", "--signature", "wait-until-timeout"][..],
        ] {
            let mut args = args.to_vec();
            args.extend(["--format", "table"]);
            let text = story_table(Some(columns), &args);
            let widest = text.lines().map(|l| l.chars().count()).max().unwrap_or(0);
            assert!(widest <= usize::from(columns), "{columns}: {widest}");
            for id in &ids {
                let name = id.rsplit("::").next().unwrap();
                let head: String = name.chars().take(20).collect();
                if text.contains(&head) {
                    assert!(
                        text.contains(name),
                        "{args:?} at {columns} columns breaks {name}:\n{text}"
                    );
                }
            }
        }
    }
}

/// `COLUMNS` is the width wherever a table goes: into a pipe and into a `.txt` file alike (no
/// 600-character lines); without it, away from a terminal, a table keeps its natural width.
#[test]
fn columns_fits_a_table_written_to_a_pipe_or_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("report.txt");
    let file_arg = file.to_str().unwrap();
    for columns in [80, 120] {
        let piped = story_table(Some(columns), &["report", "--format", "table"]);
        let widest = piped.lines().map(|l| l.chars().count()).max().unwrap();
        assert!(
            widest <= usize::from(columns),
            "pipe at {columns}: {widest}"
        );
        assert!(story_table(Some(columns), &["report", "-o", file_arg]).is_empty());
        let written = std::fs::read_to_string(&file).unwrap();
        assert_eq!(written, piped, "the file is what the pipe got");
    }
    let natural = story_table(None, &["report", "--format", "table"]);
    let widest = natural.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(widest > 200, "natural width without COLUMNS: {widest}");
}

/// The HTML page's sortable tables sort their Date columns in time order: the page's own
/// ordering function (run by Node.js), given the story's dates newest first, puts them oldest
/// first. (`parseFloat` read every `2026-…` as 2026, and a click did nothing.)
#[test]
fn the_html_pages_date_columns_sort_in_time_order() {
    let page = story_table(
        None,
        &[
            "report",
            "--signature",
            "wait-until-timeout",
            "--format",
            "html",
        ],
    );
    let start = page
        .find("function order(")
        .expect("the page's ordering function");
    let function = page[start..].lines().next().unwrap();
    // Every date cell that opens a row of a sortable table.
    let mut dates: Vec<String> = page
        .split("<tr><td>")
        .skip(1)
        .filter_map(|row| {
            let cell = &row[..row.find("</td>")?];
            let iso = cell.len() >= 10
                && cell.as_bytes()[4] == b'-'
                && cell.as_bytes()[7] == b'-'
                && cell[..4].bytes().all(|b| b.is_ascii_digit());
            iso.then(|| cell.to_string())
        })
        .collect();
    dates.sort();
    dates.dedup();
    assert!(dates.len() >= 3, "dates in the page: {dates:?}");
    let mut newest_first = dates.clone();
    newest_first.reverse();
    let script = format!(
        "{function}\nconst v = JSON.parse(process.argv[1]);\nprocess.stdout.write(JSON.stringify(v.sort(order)));"
    );
    let out = match std::process::Command::new("node")
        .arg("-e")
        .arg(&script)
        .arg(serde_json::to_string(&newest_first).unwrap())
        .output()
    {
        Ok(out) => out,
        Err(_) => {
            return crate::common::skips::skipped(
                crate::common::skips::Need::Node,
                "no node: the HTML page's ordering is not run",
            );
        }
    };
    assert!(out.status.success(), "{}", stderr(&out));
    let sorted: Vec<String> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(sorted, dates, "oldest first");
}
