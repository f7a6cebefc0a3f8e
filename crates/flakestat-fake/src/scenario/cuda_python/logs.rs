//! Raw job logs from the templates in `logs/` and `tails/`: BOM, 28-character timestamps with
//! 7 fractional digits, `##[group]` steps, ANSI colours, continuation lines.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use chrono::{DateTime, TimeDelta, Utc};

use super::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Prefix {
    Setup,
    Tests,
    CoreHead,
}

struct Tail {
    prefix: Prefix,
    exit: Option<u32>,
    lines: Vec<String>,
}

pub(super) struct Templates {
    setup: String,
    tests: String,
    core: String,
    foot: String,
    tails: BTreeMap<String, Tail>,
}

fn read(path: &Path) -> Result<String, DatasetError> {
    std::fs::read_to_string(path).map_err(|source| DatasetError::Read {
        path: path.to_path_buf(),
        source,
    })
}

pub(super) fn load_templates(dir: &Path) -> Result<Templates, DatasetError> {
    let logs = dir.join("logs");
    let mut tails = BTreeMap::new();
    let mut names: BTreeSet<&str> = NOISE.iter().map(|n| n.tail).collect();
    names.insert("runner-lost");
    names.extend([super::POOL_NIGHT_TAIL, super::PR_BREAK_TAIL]);
    for name in names {
        let path = dir.join("tails").join(format!("{name}.log"));
        let text = read(&path)?;
        let invalid = |message: String| DatasetError::Invalid {
            path: path.clone(),
            message,
        };
        let mut prefix = None;
        let mut exit = Some(1);
        let mut lines = Vec::new();
        for line in text.lines() {
            if let Some(p) = line.strip_prefix("#prefix: ") {
                prefix = Some(match p.trim() {
                    "setup" => Prefix::Setup,
                    "tests" => Prefix::Tests,
                    "core-head" => Prefix::CoreHead,
                    other => return Err(invalid(format!("unknown prefix `{other}`"))),
                });
            } else if let Some(e) = line.strip_prefix("#exit: ") {
                exit = match e.trim() {
                    "none" => None,
                    n => Some(
                        n.parse()
                            .map_err(|_| invalid(format!("bad exit code `{n}`")))?,
                    ),
                };
            } else {
                lines.push(line.to_string());
            }
        }
        let prefix = prefix.ok_or_else(|| invalid("missing `#prefix:` line".into()))?;
        tails.insert(
            name.to_string(),
            Tail {
                prefix,
                exit,
                lines,
            },
        );
    }
    Ok(Templates {
        setup: read(&logs.join("setup.log"))?,
        tests: read(&logs.join("tests-before-core.log"))?,
        core: read(&logs.join("core.log"))?,
        foot: read(&logs.join("foot.log"))?,
        tails,
    })
}

/// One log line before rendering: a time offset (`None`: a continuation line, no timestamp).
struct Line {
    offset: Option<TimeDelta>,
    text: String,
}

/// Appends a template section, keeping its relative timing, starting `gap` after the last line.
fn push_section(out: &mut Vec<Line>, section: &str, gap: TimeDelta) {
    let base = out.iter().rev().find_map(|l| l.offset).unwrap_or_default() + gap;
    let mut first: Option<Timestamp> = None;
    for raw in section.lines() {
        let stamp = raw.get(..28).and_then(|s| {
            DateTime::parse_from_rfc3339(s)
                .ok()
                .map(|t| t.with_timezone(&Utc))
        });
        match stamp {
            Some(t) => {
                let first = *first.get_or_insert(t);
                out.push(Line {
                    offset: Some(base + (t - first)),
                    text: raw[29.min(raw.len())..].to_string(),
                });
            }
            // A line the template leaves unstamped (an expanded marker) runs for a few seconds,
            // like the test it reports.
            None => out.push(Line {
                offset: out
                    .last()
                    .and_then(|l| l.offset)
                    .map(|o| o + TimeDelta::milliseconds(5_370)),
                text: raw.to_string(),
            }),
        }
    }
}

/// Appends generated lines, 7.1 ms apart like the runner's buffered output; lines starting with
/// `~ ` are continuations of the previous message.
fn push_lines(out: &mut Vec<Line>, lines: &[String], gap: TimeDelta) {
    let mut t = out.iter().rev().find_map(|l| l.offset).unwrap_or_default() + gap;
    for line in lines {
        if let Some(rest) = line.strip_prefix("~ ") {
            out.push(Line {
                offset: None,
                text: rest.to_string(),
            });
        } else if line == "~" {
            out.push(Line {
                offset: None,
                text: String::new(),
            });
        } else {
            out.push(Line {
                offset: Some(t),
                text: line.clone(),
            });
            t += TimeDelta::microseconds(7137);
        }
    }
}

fn flake_progress(tests: &[usize]) -> Vec<String> {
    tests
        .iter()
        .map(|&i| {
            format!(
                "tests/graph/test_graph_definition_lifetime.py::{} \\e[31mFAILED\\e[0m [ 38%]",
                FLAKE_TESTS[i].0
            )
        })
        .collect()
}

fn flake_failures(tests: &[usize], salt: u64) -> Vec<String> {
    let mut out = vec![
        String::new(),
        "=================================== FAILURES ===================================".into(),
    ];
    for (k, &i) in tests.iter().enumerate() {
        let (name, line, cond) = FLAKE_TESTS[i];
        let addr = &fake_sha(&format!("lambda {salt} {k}"))[..8];
        out.extend([
            format!("{:_^80}", format!(" {name} ")),
            String::new(),
            "init_cuda = None".into(),
            String::new(),
            format!("    def {name}(init_cuda):"),
            "        [... test body elided in this composed sample ...]".into(),
            format!(">       _wait_until(lambda: {cond})"),
            String::new(),
            format!("tests/graph/test_graph_definition_lifetime.py:{line}: "),
            "_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ "
                .into(),
            String::new(),
            format!("predicate = <function {name}.<locals>.<lambda> at 0x7f3a{addr}>"),
            "timeout = 5.0, interval = 0.02".into(),
            String::new(),
            "    def _wait_until(predicate, timeout=None, interval=0.02):".into(),
            "        [... helper body elided in this composed sample ...]".into(),
            ">       raise AssertionError(f\"condition not satisfied within {timeout}s\")".into(),
            format!("\\e[1m\\e[31mE       {FLAKE_MESSAGE}\\e[0m"),
            String::new(),
            "tests/graph/test_graph_definition_lifetime.py:75: AssertionError".into(),
        ]);
    }
    out.push(
        "============================== slowest durations ===============================".into(),
    );
    for (k, &i) in tests.iter().enumerate() {
        out.push(format!(
            "5.{}s call     tests/graph/test_graph_definition_lifetime.py::{}",
            41 - 11 * k,
            FLAKE_TESTS[i].0
        ));
    }
    out.push("4.87s call     tests/test_program.py::test_program_compile_nvvm_large".into());
    out.push("(9841 durations < 0.005s hidden.  Use -vv to show these durations.)".into());
    out.push(
        "=========================== short test summary info ============================".into(),
    );
    out.push("SKIPPED [6] tests/test_device.py:214: Test requires at least 2 GPUs".into());
    out.push(
        "XFAIL tests/test_linker.py::test_linker_link_ptx_nvjitlink_debug - known nvJitLink issue"
            .into(),
    );
    for &i in tests {
        out.push(format!(
            "FAILED tests/graph/test_graph_definition_lifetime.py::{} - {FLAKE_MESSAGE}",
            FLAKE_TESTS[i].0
        ));
    }
    out.push(format!(
        "\\e[31m====== {} failed, {} passed, 214 skipped, 1 xfailed in 431.27s (0:07:11) ======\\e[0m",
        tests.len(),
        3197 - tests.len()
    ));
    out
}

/// Everything a log template can mention about its job.
pub(super) struct LogContext {
    vars: Vec<(&'static str, String)>,
}

impl LogContext {
    pub(super) fn new(
        m: &MatrixJob,
        name: &str,
        job: JobId,
        run: &RunPlan,
        run_id: RunId,
    ) -> LogContext {
        let label = job_labels(name).remove(0);
        let arch = if m.platform == "linux-aarch64" {
            "arm64"
        } else {
            "amd64"
        };
        let group = if m.gpu.is_empty() {
            format!("nv-cpu-{arch}")
        } else {
            format!("nv-gpu-{arch}-{}-1gpu", m.gpu)
        };
        let workflow_file = match (m.kind, m.platform) {
            (JobKind::Build | JobKind::Docs, _) => "build-wheel.yml",
            (_, "win-64") => "test-wheel-windows.yml",
            _ => "test-wheel-linux.yml",
        };
        let free_threaded = m.py.ends_with('t');
        let pyfull = match m.py.trim_end_matches('t') {
            "3.10" => "3.10.18",
            "3.11" => "3.11.13",
            "3.12" => "3.12.11",
            "3.13" => "3.13.7",
            _ => "3.14.5",
        };
        let cpu = if m.platform == "linux-aarch64" {
            "arm64"
        } else {
            "x64"
        };
        let pyarch = if free_threaded {
            format!("{cpu}-freethreaded")
        } else {
            cpu.to_string()
        };
        let gpu_smi = match m.gpu {
            "t4" => "Tesla T4",
            "l4" => "NVIDIA L4",
            "a100" => "NVIDIA A100-SXM4-80GB",
            "h100" => "NVIDIA H100 80GB HBM3",
            "rtxpro6000" => "NVIDIA RTX PRO 6000 Blac",
            "rtx4090" => "NVIDIA GeForce RTX 4090",
            "rtx2080" => "NVIDIA GeForce RTX 2080",
            _ => "",
        };
        let runner = format!("{label}-{}", &fake_sha(&format!("runner {job}"))[..5]);
        LogContext {
            vars: vec![
                ("JOB_NAME", name.to_string()),
                ("RUNNER", runner),
                ("LABEL", label),
                ("GROUP", group),
                ("WORKFLOW_FILE", workflow_file.to_string()),
                ("REF", format!("refs/heads/{}", run.branch)),
                ("SHA", run.sha.0.clone()),
                ("SHORT", run.sha.0[..9].to_string()),
                ("RUN_ID", run_id.to_string()),
                (
                    "LOCAL",
                    if m.mode == "local" { "1" } else { "0" }.to_string(),
                ),
                ("CUDA", m.cuda.to_string()),
                ("PYNODOT", m.py.replace('.', "")),
                ("PYARCH", pyarch),
                ("PYFULL", pyfull.to_string()),
                ("PY", m.py.to_string()),
                ("PLATFORM", m.platform.to_string()),
                ("GPU_SMI", format!("{gpu_smi:<31}")),
            ],
        }
    }

    fn apply(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (k, v) in &self.vars {
            out = out.replace(&format!("{{{{{k}}}}}"), v);
        }
        out.replace("\\e[", "\u{1b}[")
    }
}

/// Appends the test steps of a job in which `tests` failed, and pytest's report of them.
fn push_flake(lines: &mut Vec<Line>, t: &Templates, tests: &[usize], salt: u64) -> Option<u32> {
    push_section(lines, &t.tests, TimeDelta::milliseconds(40));
    let progress = flake_progress(tests).join("\n");
    let core = t.core.replace("{{FAILED_PROGRESS}}", &progress);
    push_section(lines, &core, TimeDelta::milliseconds(60));
    push_lines(
        lines,
        &flake_failures(tests, salt),
        TimeDelta::milliseconds(300),
    );
    Some(1)
}

/// The test file of the flake, as pytest names it (from `cuda_core/`).
const TEST_FILE: &str = "tests/graph/test_graph_definition_lifetime.py";

/// From the hung test's id line to pytest's interruption: `run-tests` bounds the core session
/// with `timeout --signal=INT 25m`, and the session started 2 min 50 s before the test.
const HUNG_FOR: TimeDelta = TimeDelta::milliseconds(1_329_780);

/// What pytest 9 prints when SIGINT interrupts a session whose test waits for a worker thread
/// that died: the interruption, the summary of what finished (no test failed), and the
/// thread's exception as a warning when pytest unconfigures. Shape checked against pytest 9.2
/// on CPython 3.13 (`timeout -s INT` around a test whose thread raised); the stdlib line numbers
/// are 3.13's.
fn hung_interrupt(salt: u64) -> Vec<String> {
    let lib = "/opt/hostedtoolcache/Python/{{PYFULL}}/{{PYARCH}}/lib/python{{PY}}";
    let repo = "/__w/cuda-python/cuda-python/cuda_core";
    let call = "_wait_until(lambda: buf_weak() is None)";
    vec![
        String::new(),
        format!("{:!^80}", " KeyboardInterrupt "),
        format!("\\e[1m\\e[31m{lib}/threading.py\\e[0m:359: KeyboardInterrupt"),
        "\\e[33m(to show a full traceback on KeyboardInterrupt use --full-trace)\\e[0m".into(),
        format!(
            "\\e[32m{:=^80}\\e[0m",
            " 1215 passed, 81 skipped in 1500.03s (0:25:00) "
        ),
        format!(
            "{lib}/site-packages/_pytest/threadexception.py:54: \
             PytestUnhandledThreadExceptionWarning: Exception in thread Thread-{} \
             (destroy_on_worker)",
            30 + salt % 90
        ),
        String::new(),
        "Traceback (most recent call last):".into(),
        format!("  File \"{lib}/threading.py\", line 1041, in _bootstrap_inner"),
        "    self.run()".into(),
        "    ~~~~~~~~^^".into(),
        format!("  File \"{lib}/threading.py\", line 992, in run"),
        "    self._target(*self._args, **self._kwargs)".into(),
        "    ~~~~~~~~~~~~^^^^^^^^^^^^^^^^^^^^^^^^^^^^^".into(),
        format!("  File \"{repo}/{TEST_FILE}\", line 1347, in destroy_on_worker"),
        format!("    {call}"),
        format!(
            "    {}{}",
            "~".repeat("_wait_until".len()),
            "^".repeat(call.len() - "_wait_until".len())
        ),
        format!("  File \"{repo}/{TEST_FILE}\", line 75, in _wait_until"),
        "    raise AssertionError(f\"condition not satisfied within {timeout}s\")".into(),
        FLAKE_MESSAGE.into(),
        String::new(),
        "Enable tracemalloc to get traceback where the object was allocated.".into(),
        "See https://docs.pytest.org/en/stable/how-to/capture-warnings.html#resource-warnings \
         for more info."
            .into(),
        "  warnings.warn(pytest.PytestUnhandledThreadExceptionWarning(msg))".into(),
    ]
}

/// Renders a failed job's log from `start` (when the job was queued). Returns the text and the
/// time of its last line.
pub(super) fn render_log(
    t: &Templates,
    ctx: &LogContext,
    cause: &Cause,
    start: Timestamp,
    salt: u64,
) -> (String, Timestamp) {
    let mut lines = Vec::new();
    push_section(&mut lines, &t.setup, TimeDelta::zero());
    let core_head: String = t
        .core
        .lines()
        .take_while(|l| !l.contains("{{FAILED_PROGRESS}}"))
        .map(|l| format!("{l}\n"))
        .collect();
    let exit = match cause {
        Cause::FlakeHung => {
            push_section(&mut lines, &t.tests, TimeDelta::milliseconds(40));
            push_section(&mut lines, &core_head, TimeDelta::milliseconds(60));
            // pytest -v prints a test's id when the test starts and its outcome when it ends:
            // the hung test's line never gets one.
            push_lines(
                &mut lines,
                &[format!("{TEST_FILE}::{HUNG_TEST} ")],
                TimeDelta::milliseconds(5_370),
            );
            push_lines(&mut lines, &hung_interrupt(salt), HUNG_FOR);
            Some(124)
        }
        Cause::Flake(test) => push_flake(&mut lines, t, &[*test], salt),
        Cause::Related(tests) => push_flake(&mut lines, t, tests, salt),
        Cause::Noise(name, _) => {
            let tail = &t.tails[*name];
            match tail.prefix {
                Prefix::Setup => {}
                Prefix::Tests => {
                    push_section(&mut lines, &t.tests, TimeDelta::milliseconds(40));
                }
                Prefix::CoreHead => {
                    push_section(&mut lines, &t.tests, TimeDelta::milliseconds(40));
                    push_section(&mut lines, &core_head, TimeDelta::milliseconds(60));
                }
            }
            push_lines(&mut lines, &tail.lines, TimeDelta::seconds(2));
            tail.exit
        }
    };
    if let Some(code) = exit {
        let foot = t.foot.replacen(
            "Process completed with exit code 1.",
            &format!("Process completed with exit code {code}."),
            1,
        );
        push_section(&mut lines, &foot, TimeDelta::milliseconds(180));
    }
    render_lines(&lines, ctx, start, salt)
}

/// Renders the log of a test job that passed: the same setup and test steps as a failed one,
/// every test of the core run passing (the flaky ones included), the summary line, and the job's
/// cleanup without an error annotation. The fake serves it for every successful job
/// (`Dataset::passing_log`), so a signature too broad to tell a failure from a green run shows.
pub(super) fn render_passing_log(t: &Templates, ctx: &LogContext, start: Timestamp) -> String {
    let mut lines = Vec::new();
    push_section(&mut lines, &t.setup, TimeDelta::zero());
    push_section(&mut lines, &t.tests, TimeDelta::milliseconds(40));
    let passed: Vec<String> = FLAKE_TESTS
        .iter()
        .map(|(name, _, _)| {
            format!(
                "tests/graph/test_graph_definition_lifetime.py::{name} \\e[32mPASSED\\e[0m [ 38%]"
            )
        })
        .collect();
    let core = t.core.replace("{{FAILED_PROGRESS}}", &passed.join("\n"));
    push_section(&mut lines, &core, TimeDelta::milliseconds(60));
    push_lines(
        &mut lines,
        &[
            "============================== slowest durations ==============================="
                .into(),
            "4.87s call     tests/test_program.py::test_program_compile_nvvm_large".into(),
            "(9841 durations < 0.005s hidden.  Use -vv to show these durations.)".into(),
            "\\e[32m====== 3197 passed, 214 skipped, 1 xfailed in 431.27s (0:07:11) ======\\e[0m"
                .into(),
        ],
        TimeDelta::milliseconds(300),
    );
    let foot: String = t
        .foot
        .lines()
        .filter(|l| !l.contains("##[error]"))
        .map(|l| format!("{l}\n"))
        .collect();
    push_section(&mut lines, &foot, TimeDelta::milliseconds(180));
    render_lines(&lines, ctx, start, 0).0
}

/// Renders lines: BOM, timestamps with 7 fractional digits from `start`, the context's
/// variables, script lines in cyan after `Run`. Returns the text and the time of its last line.
fn render_lines(
    lines: &[Line],
    ctx: &LogContext,
    start: Timestamp,
    salt: u64,
) -> (String, Timestamp) {
    // Render: BOM, timestamps with 7 fractional digits, script lines in cyan after `Run`.
    let jitter = TimeDelta::nanoseconds((salt % 9_999_999) as i64 * 100 % 1_000_000_000);
    let mut text = String::from("\u{feff}");
    let mut last = start;
    let mut previous = "";
    for line in lines {
        let mut body = ctx.apply(&line.text);
        if body.contains("{{SMI_DATE}}") {
            let when = start + line.offset.unwrap_or_default();
            body = body.replace(
                "{{SMI_DATE}}",
                &when.format("%a %b %e %H:%M:%S %Y").to_string(),
            );
        }
        let script_echo = previous.starts_with("##[group]Run ")
            && !body.starts_with("with:")
            && !body.starts_with("##[");
        let body = if script_echo && !body.is_empty() {
            format!("\u{1b}[36;1m{body}\u{1b}[0m")
        } else {
            body
        };
        match line.offset {
            Some(offset) if !line.text.is_empty() || line.offset.is_some() => {
                let when = start + offset + jitter;
                last = when;
                let stamp = crate::stamp::log_line(when);
                text.push_str(&stamp);
                text.push(' ');
                text.push_str(&body);
            }
            _ => text.push_str(&body),
        }
        text.push('\n');
        previous = &line.text;
    }
    (text, last)
}

/// Re-stamps a raw log so that its first line is at `start`, and renames its job.
pub(super) fn restamp_log(text: &str, start: Timestamp, from_name: &str, to_name: &str) -> String {
    let body = text.trim_start_matches('\u{feff}');
    let stamp = |line: &str| -> Option<Timestamp> {
        DateTime::parse_from_rfc3339(line.get(..28)?)
            .ok()
            .map(|t| t.with_timezone(&Utc))
    };
    let first = body.lines().find_map(stamp).unwrap_or(start);
    let delta = start - first;
    let mut out = String::from("\u{feff}");
    for line in body.lines() {
        match stamp(line) {
            Some(t) => {
                let when = t + delta;
                out.push_str(&crate::stamp::log_line(when));
                let rest = &line[28..];
                if rest.starts_with(" Complete job name: ") {
                    out.push_str(&rest.replace(from_name, to_name));
                } else {
                    out.push_str(rest);
                }
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

pub(super) fn last_stamp(text: &str) -> Option<Timestamp> {
    text.trim_start_matches('\u{feff}')
        .lines()
        .rev()
        .find_map(|l| {
            DateTime::parse_from_rfc3339(l.get(..28)?)
                .ok()
                .map(|t| t.with_timezone(&Utc))
        })
}
