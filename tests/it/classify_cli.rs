//! `flakestat classify`, the real binary: inputs (files, stdin, zip), formats, exit codes, and
//! user-facing errors. JSON output is deserialized, never compared as a string.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use serde_json::Value;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

fn log(name: &str) -> PathBuf {
    fixtures().join("logs").join(name)
}

/// Runs flakestat in an empty directory (so `./signatures` is absent and the bundled set is
/// used unless `--signatures` says otherwise).
fn flakestat(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let cwd = tempfile::tempdir().unwrap();
    let mut cmd = crate::common::flakestat();
    cmd.args(args)
        .current_dir(cwd.path())
        .env("NO_COLOR", "1")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    if let Some(input) = stdin {
        // A binary input is refused on its first bytes: the rest is never read.
        match child.stdin.take().unwrap().write_all(input) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
            written => written.unwrap(),
        }
    }
    child.wait_with_output().unwrap()
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn json_schema_and_exit_code_zero_when_a_log_matches() {
    let a = log("multiple-matches.log");
    let b = log("no-match.log");
    let out = flakestat(
        &[
            "classify",
            "--format",
            "json",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = json(&out);
    assert_eq!(doc["schema"], 1);
    let files = doc["files"].as_array().unwrap();
    assert_eq!(files.len(), 2);
    assert_eq!(files[0]["file"], a.to_str().unwrap());
    assert_eq!(files[0]["unclassified"], false);
    let sigs: Vec<&str> = files[0]["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["signature"].as_str().unwrap())
        .collect();
    assert_eq!(
        sigs,
        ["network-error", "step-timeout", "wait-until-timeout"]
    );
    let m = &files[0]["matches"][2];
    for key in [
        "signature",
        "line",
        "lines",
        "text",
        "step",
        "count",
        "tests",
    ] {
        assert!(m.get(key).is_some(), "match has {key}");
    }
    assert_eq!(m["step"], "Run pytest -v tests/");
    assert_eq!(files[1]["unclassified"], true);
    let first_error = &files[1]["error_lines"][0];
    assert!(first_error["line"].as_u64().unwrap() > 0);
    assert!(first_error["text"].is_string());
}

#[test]
fn exit_code_one_when_nothing_matches() {
    let out = flakestat(&["classify", log("no-match.log").to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(1));
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("unclassified"), "{table}");
    assert!(table.contains("0 of 1 logs matched"), "{table}");
}

#[test]
fn stdin_is_a_log_named_dash() {
    let input = std::fs::read(log("crlf.log")).unwrap();
    let out = flakestat(&["classify", "--format", "json", "-"], Some(&input));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = json(&out);
    assert_eq!(doc["files"][0]["file"], "-");
    assert_eq!(doc["files"][0]["matches"][0]["signature"], "cuda-error");
}

fn write_zip(path: &Path, entries: &[(&str, Vec<u8>)]) {
    let file = std::fs::File::create(path).unwrap();
    let mut zip = zip::ZipWriter::new(file);
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    zip.add_directory("build/", options).unwrap();
    for (name, bytes) in entries {
        zip.start_file(*name, options).unwrap();
        zip.write_all(bytes).unwrap();
    }
    zip.finish().unwrap();
}

#[test]
fn zip_archive_entries_are_reported_as_archive_colon_entry() {
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("logs_123.zip");
    write_zip(
        &archive,
        &[
            ("0_build.txt", std::fs::read(log("disk-full.log")).unwrap()),
            (
                "build/1_Set up job.txt",
                std::fs::read(log("no-match.log")).unwrap(),
            ),
        ],
    );
    let out = flakestat(
        &["classify", "--format", "json", archive.to_str().unwrap()],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = json(&out);
    let names: Vec<String> = doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["file"].as_str().unwrap().to_string())
        .collect();
    let a = archive.to_str().unwrap();
    assert_eq!(
        names,
        [
            format!("{a}:0_build.txt"),
            format!("{a}:build/1_Set up job.txt")
        ]
    );
    assert_eq!(doc["files"][0]["matches"][0]["signature"], "disk-full");
    assert_eq!(doc["files"][1]["unclassified"], true);
}

#[test]
fn empty_file_is_unclassified_and_noted() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.log");
    std::fs::write(&empty, b"").unwrap();
    let out = flakestat(
        &["classify", "--format", "json", empty.to_str().unwrap()],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let doc = json(&out);
    assert_eq!(doc["files"][0]["unclassified"], true);
    assert_eq!(doc["files"][0]["note"], "empty file");
    assert!(stderr(&out).contains("empty file"));
}

#[test]
fn binary_and_missing_inputs_are_invalid_input_but_the_rest_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let binary = dir.path().join("core.bin");
    let mut bytes = vec![0u8; 4096];
    bytes.extend_from_slice(b"Segmentation fault\n");
    std::fs::write(&binary, &bytes).unwrap();
    let missing = dir.path().join("nope.log");
    let good = log("disk-full.log");
    let out = flakestat(
        &[
            "classify",
            "--format",
            "json",
            binary.to_str().unwrap(),
            missing.to_str().unwrap(),
            good.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(3));
    let err = stderr(&out);
    assert!(err.contains("core.bin: binary, not a log"), "{err}");
    assert!(
        err.contains("cannot read") && err.contains("nope.log"),
        "{err}"
    );
    // Refused inputs are in the document too, in the order given, with their error (#10).
    let doc = json(&out);
    assert_eq!(doc["files"].as_array().unwrap().len(), 3);
    assert!(
        doc["files"][0]["error"]
            .as_str()
            .unwrap()
            .contains("binary, not a log")
    );
    assert!(
        doc["files"][1]["error"]
            .as_str()
            .unwrap()
            .contains("cannot read")
    );
    assert_eq!(doc["files"][2]["error"], serde_json::Value::Null);
    assert_eq!(doc["files"][2]["matches"][0]["signature"], "disk-full");
}

#[test]
fn an_unreadable_only_input_prints_its_error_and_no_empty_table() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.log");
    let out = flakestat(&["classify", missing.to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(3));
    assert!(stderr(&out).contains("nope.log"), "{}", stderr(&out));
    assert!(
        out.stdout.is_empty(),
        "stdout: {}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn table_never_passes_control_characters_to_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let sigs = dir.path().join("sigs");
    std::fs::create_dir(&sigs).unwrap();
    std::fs::write(sigs.join("boom.toml"), "title = 'Boom'\npattern = 'boom'\n").unwrap();
    let evil = dir.path().join("evil.log");
    std::fs::write(&evil, b"boom \x08\x07 \x1b]0;owned\x07 \x1bc done\n").unwrap();
    let out = flakestat(
        &[
            "classify",
            "--signatures",
            sigs.to_str().unwrap(),
            evil.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let bad: Vec<u8> = out
        .stdout
        .iter()
        .copied()
        .filter(|&b| b < 0x20 && b != b'\n')
        .collect();
    assert!(bad.is_empty(), "control bytes in the table: {bad:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("boom"));
}

#[test]
fn output_file_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("out.json");
    let out = flakestat(
        &[
            "classify",
            "--format",
            "json",
            "--output",
            target.to_str().unwrap(),
            log("step-timeout.log").to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    let doc: Value = serde_json::from_slice(&std::fs::read(&target).unwrap()).unwrap();
    assert_eq!(doc["files"][0]["matches"][0]["signature"], "step-timeout");
}

#[test]
fn a_signatures_folder_in_the_current_directory_is_used_by_default() {
    let cwd = tempfile::tempdir().unwrap();
    std::fs::create_dir(cwd.path().join("signatures")).unwrap();
    std::fs::write(
        cwd.path().join("signatures/local.toml"),
        "title = 'Local'\npattern = 'Post job cleanup'\n",
    )
    .unwrap();
    let out = crate::common::flakestat()
        .args(["classify", "--format", "json"])
        .arg(log("step-timeout.log"))
        .current_dir(cwd.path())
        .output()
        .unwrap();
    let doc = json(&out);
    let sigs: Vec<&str> = doc["files"][0]["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["signature"].as_str().unwrap())
        .collect();
    assert_eq!(sigs, ["local"]);
}

#[test]
fn command_lines_that_are_refused() {
    let log = log("crlf.log");
    let log = log.to_str().unwrap();
    for args in [
        vec!["classify"],
        vec!["classify", "--format", "xml", log],
        vec!["classify", "-j", "0", log],
        vec!["signatures", "import", "--out", "x", log],
        vec![
            "signatures",
            "import",
            "--format",
            "jenkins",
            "--out",
            "x",
            log,
        ],
    ] {
        let out = flakestat(&args, None);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
    }
    let out = flakestat(&["classify", "-", "-"], Some(b""));
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
}

/// `classify` speaks as the reports do (#27.4): `--format markdown`, the format from
/// `--output`'s extension or a mismatch refused, and to a pipe plain text at its natural width
/// (COLUMNS is for a terminal), a signature id never broken inside its cell.
#[test]
fn classify_writes_markdown_picks_the_format_from_the_name_and_fits_only_a_terminal() {
    let a = log("bom-mid-file.log");
    let b = log("continuation-lines.log");
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let out = flakestat(&["classify", "--format", "markdown", a, b], None);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(
        md.starts_with("| log | signature | line | count | step | text |\n"),
        "{md}"
    );
    assert!(md.contains("| wait-until-timeout | 19 | 2 |"), "{md}");
    // Markdown's own characters in log text are escaped.
    assert!(md.contains(r"test\_graph\_definition\_lifetime.py"), "{md}");
    assert!(md.ends_with("\n2 of 2 logs matched a signature\n"), "{md}");

    let dir = tempfile::tempdir().unwrap();
    let to = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let json_file = to("found.json");
    assert_eq!(
        flakestat(&["classify", a, "-o", &json_file], None)
            .status
            .code(),
        Some(0)
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json_file).unwrap()).unwrap();
    assert_eq!(doc["schema"], 1);
    for (args, says) in [
        (vec!["-o", "found.html"], "names an HTML file"),
        (
            vec!["--format", "json", "-o", "found.md"],
            "--format json does not match",
        ),
    ] {
        let mut line = vec!["classify", a];
        let named: Vec<String> = args
            .iter()
            .map(|x| {
                if x.contains('.') {
                    to(x)
                } else {
                    x.to_string()
                }
            })
            .collect();
        line.extend(named.iter().map(String::as_str));
        let out = flakestat(&line, None);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(says),
            "{out:?}"
        );
    }
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "only found.json"
    );

    // A pipe: plain text, no escape sequence, the natural width whatever COLUMNS says.
    let out = crate::common::flakestat()
        .args(["classify", a])
        .env("COLUMNS", "40")
        .env_remove("NO_COLOR")
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains('\u{1b}'), "{text}");
    assert!(text.lines().any(|l| l.chars().count() > 40), "{text}");
    assert_eq!(text.matches("wait-until-timeout").count(), 1, "{text}");
}

/// A log of 1 to 16 MiB is mapped into memory, not read (`classify`'s `map_log`): each
/// kind of input gives the same document through the mapping as through a stream (stdin):
/// a plain log (its matches, lines, error lines and tests), a `gh run view --log` file (one
/// result per job), a UTF-16 log, and a binary file (refused alike). The logs are made large
/// by repeating real fixtures, with matches near both ends.
#[test]
fn a_large_log_file_gives_what_the_same_bytes_give_on_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let repeat = |bytes: &[u8]| -> Vec<u8> {
        let mut out = Vec::new();
        while out.len() < 1_200_000 {
            out.extend_from_slice(bytes);
        }
        out
    };
    let plain = repeat(
        &[
            std::fs::read(log("cuda-error.log")).unwrap(),
            std::fs::read(log("continuation-lines.log")).unwrap(),
            std::fs::read(log("bom-mid-file.log")).unwrap(),
        ]
        .concat(),
    );
    let gh_log = repeat(
        b"build (linux)\tRun tests\t2026-01-02T03:04:05.1000000Z ##[group]Run pytest\n\
          build (linux)\tRun tests\t2026-01-02T03:04:07.1000000Z RuntimeError: CUDA error: an illegal memory access was encountered\n\
          lint\tUNKNOWN STEP\t2026-01-02T03:04:06.1000000Z No space left on device\n",
    );
    let mut utf16 = vec![0xff, 0xfe];
    for u in String::from_utf8(repeat(&std::fs::read(log("disk-full.log")).unwrap()))
        .unwrap()
        .encode_utf16()
    {
        utf16.extend(u.to_le_bytes());
    }
    let mut binary = vec![0u8; 4096];
    binary.extend(repeat(b"Segmentation fault\n"));
    for (name, bytes) in [
        ("plain.log", plain),
        ("gh.txt", gh_log),
        ("utf16.log", utf16),
        ("core.bin", binary),
    ] {
        assert!(
            bytes.len() >= 1 << 20,
            "{name} is large enough to be mapped"
        );
        let path = dir.path().join(name);
        std::fs::write(&path, &bytes).unwrap();
        let mapped = flakestat(
            &[
                "classify",
                "--tests",
                "--format",
                "json",
                path.to_str().unwrap(),
            ],
            None,
        );
        let streamed = flakestat(
            &["classify", "--tests", "--format", "json", "-"],
            Some(&bytes),
        );
        assert_eq!(mapped.status.code(), streamed.status.code(), "{name}");
        let mut files = [json(&mapped), json(&streamed)].map(|d| d["files"].clone());
        for f in files.iter_mut().flat_map(|f| f.as_array_mut().unwrap()) {
            f.as_object_mut().unwrap().remove("file");
            if let Some(Value::String(e)) = f.get_mut("error") {
                *e = e.replace(path.to_str().unwrap(), "-");
            }
        }
        assert_eq!(files[0], files[1], "{name}");
        let first = &files[0][0];
        match name {
            "core.bin" => assert!(first["error"].as_str().unwrap().contains("binary")),
            "gh.txt" => assert_eq!(files[0].as_array().unwrap().len(), 2, "{name}: two jobs"),
            _ => assert!(!first["matches"].as_array().unwrap().is_empty(), "{name}"),
        }
    }
}
