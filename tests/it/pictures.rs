//! Pictures and cost on the bundled story, through the real binary against the fake GitHub:
//! the cost equals the job durations summed here from the fake's dataset (by reading logs, not
//! through flakestat's store or matcher), the timeline starts its hits after #2371's marker, the
//! heat map lights the 3.14t row alone, markdown with the Mermaid block is still GFM with every
//! table, the terminal report fits its width, and the HTML page renders in headless Chromium
//! with no console error (skipped with a message when Chromium is not installed).

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::common::{self, STORY_WINDOW, pr_of, story_dir, surveyed_story};
use crate::report_fixture;
use flakestat::fake::scenario::cuda_python::{CULPRIT_PR, FLAKE_MESSAGE, FORK_PR, RELATED_PR};
use flakestat::fake::{Dataset, FakeLog, FakeRun};
use flakestat::model::{Job, RunId, Timestamp};
use flakestat::report::wire;

const SIG: &str = "wait-until-timeout";

fn flakestat(cache: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = common::flakestat();
    cmd.args(args)
        .arg("--cache-dir")
        .arg(cache)
        .arg("--signatures")
        .arg(common::signatures());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("the binary runs");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn report(format: &str, signature: bool) -> Vec<u8> {
    let mut args = vec!["report", "--format", format];
    if signature {
        args.extend(["--signature", SIG]);
    }
    args.extend(STORY_WINDOW);
    flakestat(surveyed_story(), &args, &[]).stdout
}

/// The story's account of the flake, as JSON.
fn story() -> wire::Report {
    serde_json::from_slice(&report("json", true)).unwrap()
}

/// As the API serves the job: its times in whole seconds (a failed job's `completed_at` is
/// its log's last line, with a fraction of a second).
fn seconds(job: &Job) -> u64 {
    (job.completed_at.unwrap().timestamp() - job.started_at.unwrap().timestamp()) as u64
}

fn minutes(seconds: u64) -> f64 {
    (seconds as f64 / 60.0 * 100.0).round() / 100.0
}

#[test]
fn cost_equals_the_job_durations_of_the_fake() {
    let data = story();
    let ds = Dataset::load(&story_dir()).unwrap();
    let t = |s: &str| s.parse::<Timestamp>().unwrap();
    let (since, until) = (t("2026-06-15T00:00:00Z"), t("2026-08-01T00:00:00Z"));
    let flake = |j: &Job| {
        j.is_failed()
            && matches!(ds.logs.get(&j.id), Some(FakeLog::Text(l)) if l.contains(FLAKE_MESSAGE))
    };
    // The runs that count: in the window, not of the PRs that touch the signature's paths (the
    // fork PR's runs name no PR: they are known by their head repository and branch).
    let counted: Vec<&FakeRun> = ds
        .runs
        .iter()
        .filter(|r| r.run.created_at >= since && r.run.created_at < until)
        .filter(|r| !matches!(pr_of(r), Some(RELATED_PR | CULPRIT_PR | FORK_PR)))
        .collect();
    let (mut failed, mut rerun) = (0u64, 0u64);
    let mut hit_runs: BTreeSet<RunId> = BTreeSet::new();
    for run in &counted {
        let jobs = run.all_jobs();
        let Some(first) = jobs
            .iter()
            .filter(|j| flake(j))
            .map(|j| j.run_attempt)
            .min()
        else {
            continue;
        };
        hit_runs.insert(run.run.id);
        failed += jobs
            .iter()
            .filter(|j| flake(j))
            .map(|j| seconds(j))
            .sum::<u64>();
        // A later attempt's job that hit again is a failed job of the flake, not a re-run's
        // cost.
        rerun += jobs
            .iter()
            .filter(|j| j.run_attempt > first && !flake(j))
            .map(|j| seconds(j))
            .sum::<u64>();
    }
    let s = &data.signatures[0];
    assert_eq!(s.runs_hit, hit_runs.len() as u64);
    assert!(failed > 0 && rerun > 0, "the story has hits and re-runs");
    assert_eq!(s.cost.job_minutes, minutes(failed));
    assert_eq!(s.cost.rerun_minutes, minutes(rerun));
    assert_eq!(s.cost.jobs_unknown, 0);
    // Every flaky job runs on a GPU runner in the story; the label groups add up.
    assert_eq!(s.cost.gpu_job_minutes, s.cost.job_minutes);
    let by_label: f64 = s.cost.by_label.values().map(|l| l.job_minutes).sum();
    assert!((by_label - s.cost.job_minutes).abs() < 0.01 * s.cost.by_label.len() as f64);
    assert!(
        s.cost.by_label.keys().all(|l| l.contains("-gpu-")),
        "{:?}",
        s.cost.by_label
    );

    // The overview's whole-window cost: every failed job, every job of a later attempt.
    let overview: wire::Report = serde_json::from_slice(&report("json", false)).unwrap();
    let window: Vec<&FakeRun> = ds
        .runs
        .iter()
        .filter(|r| r.run.created_at >= since && r.run.created_at < until)
        .collect();
    let all_failed: u64 = window
        .iter()
        .flat_map(|r| r.all_jobs())
        .filter(|j| j.is_failed())
        .map(seconds)
        .sum();
    assert_eq!(overview.cost.job_minutes, minutes(all_failed));
    let rerun_jobs: Vec<&Job> = window
        .iter()
        .flat_map(|r| {
            let jobs = r.all_jobs();
            let first = jobs
                .iter()
                .filter(|j| j.is_failed())
                .map(|j| j.run_attempt)
                .min();
            // A later attempt's failed job is a failed job, not a re-run's cost.
            jobs.into_iter()
                .filter(move |j| first.is_some_and(|a| j.run_attempt > a) && !j.is_failed())
        })
        .collect();
    let timed: u64 = rerun_jobs
        .iter()
        .filter(|j| j.started_at.is_some() && j.completed_at.is_some())
        .map(|j| seconds(j))
        .sum();
    assert_eq!(overview.cost.rerun_minutes, minutes(timed));
}

#[test]
fn the_timeline_starts_after_the_merge_and_the_heat_map_lights_3_14t_alone() {
    let data = story();
    let s = &data.signatures[0];
    let t = s.timeline.as_ref().expect("a timeline");
    let merge = t
        .markers
        .iter()
        .find(|m| m.kind == "merge")
        .expect("the placed merge is marked");
    assert_eq!(merge.label, format!("#{CULPRIT_PR}"));
    let first = t.markers.iter().find(|m| m.kind == "first_hit").unwrap();
    assert!(first.at > merge.at);
    let merge_day = merge.at.format("%Y-%m-%d").to_string();
    let hit_days: Vec<&str> = t
        .days
        .iter()
        .filter(|d| d.runs_hit > 0)
        .map(|d| d.day.as_str())
        .collect();
    assert!(!hit_days.is_empty());
    assert!(
        hit_days.iter().all(|d| *d >= merge_day.as_str()),
        "{hit_days:?}"
    );
    assert_eq!(t.impact_start, Some(merge.at));
    let hits_per_day: u64 = t.days.iter().map(|d| d.runs_hit).sum();
    assert_eq!(hits_per_day, s.runs_hit);

    assert!(!s.heatmaps.is_empty());
    for h in &s.heatmaps {
        assert_eq!(h.rows, "python");
        let lit: Vec<&str> = h
            .row_values
            .iter()
            .zip(&h.cells)
            .filter(|(_, cells)| cells.iter().any(|c| c.jobs_hit > 0))
            .map(|(v, _)| v.as_str())
            .collect();
        assert_eq!(lit, ["3.14t"], "{} by {}", h.rows, h.columns);
        // Never-hit cells are there, with the jobs that ran.
        assert!(
            h.cells
                .iter()
                .flatten()
                .any(|c| c.jobs_hit == 0 && c.jobs_total > 0)
        );
    }
    assert!(s.heatmaps.iter().any(|h| h.columns == "platform"));
    assert!(s.heatmaps.iter().any(|h| h.columns == "gpu"));
}

#[test]
fn markdown_with_the_mermaid_block_is_still_gfm_with_every_table() {
    use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};
    let md = String::from_utf8(report("markdown", true)).unwrap();
    let mut tables = 0;
    let mut rows_per_table = Vec::new();
    let mut mermaid = Vec::new();
    let mut in_mermaid = false;
    let mut cells = 0;
    let mut row_cells = Vec::new();
    for event in Parser::new_ext(&md, Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::Table(align)) => {
                tables += 1;
                rows_per_table.push((align.len(), 0));
            }
            Event::Start(Tag::TableRow) | Event::Start(Tag::TableHead) => cells = 0,
            Event::Start(Tag::TableCell) => cells += 1,
            Event::End(TagEnd::TableRow) | Event::End(TagEnd::TableHead) => {
                row_cells.push((rows_per_table.len(), cells));
                rows_per_table.last_mut().unwrap().1 += 1;
            }
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(lang))) if &*lang == "mermaid" => {
                in_mermaid = true
            }
            Event::Text(t) if in_mermaid => mermaid.push(t.to_string()),
            Event::End(TagEnd::CodeBlock) => in_mermaid = false,
            _ => {}
        }
    }
    // Every table the text has (a header rule line each: `| --- | ---: |`, `|:---|`) is a table
    // to the parser, with as many cells in each row as it has columns.
    let is_rule = |l: &str| {
        let cells: Vec<&str> = l.trim().strip_prefix('|').map_or(vec![], |l| {
            l.trim_end_matches('|').split('|').map(str::trim).collect()
        });
        !cells.is_empty()
            && cells.iter().all(|c| {
                let dashes = c.trim_start_matches(':').trim_end_matches(':');
                !dashes.is_empty() && dashes.chars().all(|ch| ch == '-')
            })
    };
    let rules = md.lines().filter(|l| is_rule(l)).count();
    assert!(rules > 0, "{md}");
    assert_eq!(tables, rules, "{md}");
    for (table, n) in &row_cells {
        assert_eq!(*n, rows_per_table[table - 1].0, "table {table}");
    }
    // The Mermaid block is whole: its chart, one label per bar (all different: Mermaid merges
    // equal ones), two series as long, the hits adding up to the runs hit.
    let mermaid = mermaid.concat();
    assert!(mermaid.starts_with("xychart-beta\n"), "{mermaid}");
    let series: Vec<Vec<u64>> = mermaid
        .lines()
        .filter_map(|l| l.trim().strip_prefix("bar ["))
        .map(|l| {
            l.trim_end_matches(']')
                .split(", ")
                .map(|n| n.parse().unwrap())
                .collect()
        })
        .collect();
    assert_eq!(series.len(), 2, "{mermaid}");
    let labels: Vec<&str> = mermaid
        .lines()
        .find_map(|l| l.trim().strip_prefix("x-axis ["))
        .unwrap()
        .trim_end_matches(']')
        .split(", ")
        .collect();
    assert_eq!(labels.len(), series[0].len());
    assert_eq!(labels.len(), series[1].len());
    assert_eq!(labels.iter().collect::<BTreeSet<_>>().len(), labels.len());
    assert!(labels.len() <= 16);
    let data = story();
    assert_eq!(series[1].iter().sum::<u64>(), data.signatures[0].runs_hit);
    assert!(labels.iter().any(|l| l.contains("merge")), "{labels:?}");
    if let Some(mmdc) = mmdc() {
        check_with_mermaid_cli(&mmdc, &mermaid);
    }
    assert!(md.contains("<details><summary>Timeline"));
}

/// mermaid-cli, when installed (`.ci/run` installs it into `target/mmdc` where npm exists), or
/// `FLAKESTAT_MMDC`.
fn mmdc() -> Option<PathBuf> {
    let path = std::env::var_os("FLAKESTAT_MMDC")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("target/mmdc/node_modules/.bin/mmdc")
        });
    if path.is_file() && Path::new(CHROMIUM).is_file() {
        Some(path)
    } else {
        common::skips::skipped(
            common::skips::Need::MermaidCli,
            &format!(
                "mermaid-cli check skipped: no {} (or no {CHROMIUM}); the structural checks ran",
                path.display()
            ),
        );
        None
    }
}

/// Mermaid's own parser and renderer (mermaid-cli in Debian's Chromium, offline) accept the
/// chart, and refuse a broken one (so a pass means something).
fn check_with_mermaid_cli(mmdc: &Path, chart: &str) {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("puppeteer.json");
    std::fs::write(
        &config,
        format!(
            r#"{{"executablePath":"{CHROMIUM}","args":["--no-sandbox","--disable-gpu","--disable-background-networking","--disable-component-update","--disable-sync","--no-first-run"]}}"#
        ),
    )
    .unwrap();
    let run = |text: &str| {
        let input = dir.path().join("chart.mmd");
        let output = dir.path().join("chart.svg");
        std::fs::write(&input, text).unwrap();
        let _ = std::fs::remove_file(&output);
        let out = Command::new(mmdc)
            .arg("-p")
            .arg(&config)
            .arg("-i")
            .arg(&input)
            .arg("-o")
            .arg(&output)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (out, std::fs::read_to_string(&output).unwrap_or_default())
    };
    let (out, svg) = run(chart);
    assert!(
        out.status.success() && svg.contains("<svg"),
        "mermaid-cli refused the chart: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (out, _) = run(&chart.replacen("x-axis [", "x-axis [[", 1));
    assert!(!out.status.success(), "mermaid-cli accepts a broken chart");
}

/// The report on a terminal (a pseudo-terminal from `script`, which Debian always has) of
/// `width` columns: what `flakestat report` prints there.
fn on_terminal(width: usize, signature: bool) -> Option<String> {
    if !Path::new("/usr/bin/script").is_file() {
        common::skips::skipped(
            common::skips::Need::Script,
            "skipped: no /usr/bin/script to give the report a terminal",
        );
        return None;
    }
    let quote = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
    let mut cmd = vec![
        quote(env!("CARGO_BIN_EXE_flakestat")),
        "report".into(),
        "--format".into(),
        "table".into(),
        "--cache-dir".into(),
        quote(surveyed_story().to_str().unwrap()),
        "--signatures".into(),
        quote(concat!(env!("CARGO_MANIFEST_DIR"), "/signatures")),
    ];
    if signature {
        cmd.extend(["--signature".into(), SIG.into()]);
    }
    cmd.extend(STORY_WINDOW.iter().map(|s| s.to_string()));
    let out = Command::new("/usr/bin/script")
        .args(["-qec", &cmd.join(" "), "/dev/null"])
        .env("COLUMNS", width.to_string())
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_TOKEN")
        .env_remove("GH_TOKEN")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8(out.stdout).unwrap().replace('\r', ""))
}

#[test]
fn the_terminal_report_fits_its_width() {
    for width in [80usize, 120] {
        for signature in [true, false] {
            let Some(text) = on_terminal(width, signature) else {
                return;
            };
            assert!(text.contains(if signature { "Timeline" } else { "Hits over" }));
            for line in text.lines() {
                assert!(line.chars().count() <= width, "{width}: {line}");
            }
            // NO_COLOR: plain characters, no escape sequences.
            assert!(!text.contains('\u{1b}'));
            assert!(!text.contains('█') && !text.contains('▁'), "{text}");
        }
    }
}

const CHROMIUM: &str = "/usr/bin/chromium";

/// Whether Chromium is here; when not, the check is recorded as skipped, saying how to get it.
fn chromium_installed() -> bool {
    let here = Path::new(CHROMIUM).is_file();
    if !here {
        common::skips::skipped(
            common::skips::Need::Chromium,
            &format!(
                "skipped: {CHROMIUM} is not installed (apt-get install -y chromium; .ci/run does)"
            ),
        );
    }
    here
}

/// Headless Chromium on a page, with a fresh profile and nothing that talks to the network:
/// `extra` adds `--screenshot=…` or `--dump-dom`. Returns stdout and stderr.
fn chromium(page: &Path, profile: &Path, extra: &[String]) -> (String, String) {
    let out = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1200,2000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .output()
        .expect("chromium runs");
    assert!(
        out.status.success(),
        "chromium: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The decompressed image data of a PNG (filtered scanlines): enough to tell a blank page.
fn png_pixels(png: &[u8]) -> Vec<u8> {
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "a PNG");
    let mut idat = Vec::new();
    let mut at = 8;
    while at + 8 <= png.len() {
        let len = u32::from_be_bytes(png[at..at + 4].try_into().unwrap()) as usize;
        if &png[at + 4..at + 8] == b"IDAT" {
            idat.extend_from_slice(&png[at + 8..at + 8 + len]);
        }
        at += 12 + len;
    }
    let mut pixels = Vec::new();
    flate2::read::ZlibDecoder::new(&idat[..])
        .read_to_end(&mut pixels)
        .unwrap();
    pixels
}

/// Bytes of the filtered image data that are neither 0 nor 255: a one-colour page has almost
/// none (every filter turns a uniform row into zeros or a run of one value).
fn ink(png: &[u8]) -> usize {
    png_pixels(png)
        .iter()
        .filter(|b| **b != 0 && **b != 255)
        .count()
}

#[test]
fn the_html_report_renders_in_chromium_with_no_console_error() {
    if !chromium_installed() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("story.html");
    std::fs::write(&page, report("html", true)).unwrap();
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("http-equiv=\"Content-Security-Policy\""));
    assert!(
        !html.contains(" src=") && !html.contains("<link"),
        "nothing external"
    );

    // The DOM after the script ran: the sortable tables got their titles (the CSP let the
    // script run), the timeline, the heat maps and the failing jobs are there.
    let (dom, log) = chromium(&page, &dir.path().join("p1"), &["--dump-dom".into()]);
    assert!(dom.contains("<th title=\"Sort\""), "the sort script ran");
    assert!(dom.contains("<svg class=\"chart\""), "the timeline");
    assert!(
        dom.contains(&format!("#{CULPRIT_PR} merged")),
        "the merge marker"
    );
    let heatmaps = story().signatures[0].heatmaps.len();
    assert!(heatmaps > 0);
    assert_eq!(
        dom.matches("<table class=\"heat\">").count(),
        heatmaps,
        "one table per heat map of the report's JSON"
    );
    assert!(dom.contains("<summary>Failing jobs"), "the failing jobs");
    // Console messages (CSP violations among them) reach stderr as `:CONSOLE(` lines.
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "console messages: {console:#?}");

    // The screenshot shows something: far more ink than a blank page shot the same way.
    let shot = dir.path().join("story.png");
    let (_, log) = chromium(
        &page,
        &dir.path().join("p2"),
        &[format!("--screenshot={}", shot.display())],
    );
    assert!(!log.lines().any(|l| l.contains(":CONSOLE")), "{log}");
    let blank_page = dir.path().join("blank.html");
    std::fs::write(&blank_page, "<!DOCTYPE html><title>blank</title>").unwrap();
    let blank_shot = dir.path().join("blank.png");
    chromium(
        &blank_page,
        &dir.path().join("p3"),
        &[format!("--screenshot={}", blank_shot.display())],
    );
    let (page_ink, blank_ink) = (
        ink(&std::fs::read(&shot).unwrap()),
        ink(&std::fs::read(&blank_shot).unwrap()),
    );
    assert!(
        page_ink > 100_000 && page_ink > 100 * (blank_ink + 1),
        "page {page_ink}, blank {blank_ink}"
    );
    if let Some(keep) = std::env::var_os("FLAKESTAT_KEEP_SCREENSHOT") {
        std::fs::copy(&shot, keep).unwrap();
    }
}

/// A PNG's pixels as rows of RGBA (8-bit RGB or RGBA, as Chromium writes them), its filters
/// undone (PNG's None, Sub, Up, Average and Paeth).
fn png_rgba(png: &[u8]) -> (usize, usize, Vec<[u8; 4]>) {
    let width = u32::from_be_bytes(png[16..20].try_into().unwrap()) as usize;
    let height = u32::from_be_bytes(png[20..24].try_into().unwrap()) as usize;
    assert_eq!(png[24], 8, "8 bits a sample");
    let bpp = match png[25] {
        2 => 3,
        6 => 4,
        other => panic!("PNG colour type {other}"),
    };
    let data = png_pixels(png);
    let stride = width * bpp;
    assert_eq!(data.len(), height * (stride + 1), "no interlacing");
    let mut prev = vec![0u8; stride];
    let mut out = Vec::with_capacity(width * height);
    for row in data.chunks(stride + 1) {
        let (filter, raw) = (row[0], &row[1..]);
        let mut cur = vec![0u8; stride];
        for i in 0..stride {
            let a = if i >= bpp { cur[i - bpp] } else { 0 };
            let b = prev[i];
            let c = if i >= bpp { prev[i - bpp] } else { 0 };
            let predicted = match filter {
                0 => 0,
                1 => a,
                2 => b,
                3 => ((u16::from(a) + u16::from(b)) / 2) as u8,
                4 => {
                    let p = i16::from(a) + i16::from(b) - i16::from(c);
                    let (pa, pb, pc) = (
                        (p - i16::from(a)).abs(),
                        (p - i16::from(b)).abs(),
                        (p - i16::from(c)).abs(),
                    );
                    if pa <= pb && pa <= pc {
                        a
                    } else if pb <= pc {
                        b
                    } else {
                        c
                    }
                }
                other => panic!("PNG filter {other}"),
            };
            cur[i] = raw[i].wrapping_add(predicted);
        }
        out.extend(
            cur.chunks(bpp)
                .map(|p| [p[0], p[1], p[2], if bpp == 4 { p[3] } else { 255 }]),
        );
        prev = cur;
    }
    (width, height, out)
}

/// `report --tests`'s page fits a 1280-pixel window: its widest table, with the Since and
/// Verdict columns, leaves the page's right margin blank in a screenshot (a table wider than
/// the window runs its row borders and cells into the last pixel columns).
#[test]
fn the_tests_page_fits_a_1280_pixel_window() {
    if !chromium_installed() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("tests.html");
    let mut args = vec!["report", "--tests", "--format", "html"];
    args.extend(STORY_WINDOW);
    let html = flakestat(surveyed_story(), &args, &[]).stdout;
    assert!(String::from_utf8_lossy(&html).contains(">Verdict<"));
    std::fs::write(&page, html).unwrap();
    let shot = dir.path().join("tests.png");
    chromium(
        &page,
        &dir.path().join("p"),
        &[
            "--window-size=1280,1600".into(),
            "--hide-scrollbars".into(),
            format!("--screenshot={}", shot.display()),
        ],
    );
    let png = std::fs::read(&shot).unwrap();
    if let Some(keep) = std::env::var_os("FLAKESTAT_KEEP_TESTS_SCREENSHOT") {
        std::fs::write(keep, &png).unwrap();
    }
    let (width, height, pixels) = png_rgba(&png);
    assert_eq!(width, 1280, "the window's width");
    let background = pixels[0];
    let ink_at_right: usize = (0..height)
        .map(|y| {
            (width - 8..width)
                .filter(|x| pixels[y * width + x] != background)
                .count()
        })
        .sum();
    let ink: usize = (0..height)
        .map(|y| {
            (0..width)
                .filter(|x| pixels[y * width + x] != background)
                .count()
        })
        .sum();
    assert!(ink > 10_000, "the page shows something: {ink}");
    assert_eq!(
        ink_at_right, 0,
        "the page runs past the window's right edge"
    );
}

/// `report --hosts`' page in a 1280-pixel window keeps every pool and host name on one line
/// (a browser breaks `windows-amd64-gpu-rtxpro6000-latest-1` after its last hyphen when the
/// column is narrow) and is no wider than the window. A copy of the page, its policy removed,
/// runs a probe script that writes what the layout says into the DOM Chromium dumps.
#[test]
fn the_hosts_page_keeps_pool_names_whole_in_a_1280_pixel_window() {
    if !chromium_installed() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec!["report", "--hosts", "--format", "html"];
    args.extend(STORY_WINDOW);
    let html = String::from_utf8(flakestat(surveyed_story(), &args, &[]).stdout).unwrap();
    let policy_start = html
        .find("<meta http-equiv=\"Content-Security-Policy\"")
        .expect("the page has a policy");
    let policy_end = policy_start + html[policy_start..].find('>').unwrap() + 1;
    let probe = r#"<script>
var names=[],broken=[];document.querySelectorAll("td code").forEach(function(c){var t=c.textContent;if(/^[A-Za-z0-9._-]+-[A-Za-z0-9._-]+$/.test(t)){names.push(t);if(c.getClientRects().length>1)broken.push(t)}});
document.body.setAttribute("data-names",String(names.length));document.body.setAttribute("data-broken",broken.join(" "));document.body.setAttribute("data-width",String(document.documentElement.scrollWidth));
</script></body>"#;
    let page = dir.path().join("hosts.html");
    let probed =
        format!("{}{}", &html[..policy_start], &html[policy_end..]).replace("</body>", probe);
    std::fs::write(&page, probed).unwrap();
    let (dom, _) = chromium(
        &page,
        &dir.path().join("p"),
        &["--window-size=1280,1600".into(), "--dump-dom".into()],
    );
    let attr = |name: &str| {
        let at = dom
            .find(&format!("{name}=\""))
            .unwrap_or_else(|| panic!("the probe ran: {dom}"))
            + name.len()
            + 2;
        dom[at..at + dom[at..].find('"').unwrap()].to_string()
    };
    let names: usize = attr("data-names").parse().unwrap();
    assert!(names >= 7, "the page names the story's pools: {names}");
    assert_eq!(attr("data-broken"), "", "names broken over two lines");
    let width: usize = attr("data-width").parse().unwrap();
    assert!(width <= 1280, "the page is {width} px wide");
}

/// The page's own `<style>` and `<script>` are its only ones, and the policy names them.
fn assert_self_contained(html: &str) {
    assert!(
        html.starts_with("<!DOCTYPE html>"),
        "{}",
        &html[..80.min(html.len())]
    );
    assert_eq!(html.matches("<script").count(), 1, "one script, ours");
    assert_eq!(html.matches("<style").count(), 1, "one stylesheet, ours");
    assert!(html.contains("content=\"default-src 'none'; style-src 'sha256-"));
    for external in [" src=", "<link", "@import", "url(", "href=\"javascript:"] {
        assert!(!html.contains(external), "{external}");
    }
}

#[test]
fn nightly_and_survey_write_self_contained_pages_too() {
    let replay = story_dir();
    let cache = tempfile::tempdir().unwrap();
    let out = flakestat(
        cache.path(),
        &[
            "-q",
            "nightly",
            "--replay",
            replay.to_str().unwrap(),
            "--repo",
            "NVIDIA/cuda-python",
            "--now",
            "2026-07-16T12:00:00Z",
            "--format",
            "html",
        ],
        &[("NO_COLOR", "1")],
    );
    let html = String::from_utf8(out.stdout).unwrap();
    assert_self_contained(&html);
    assert!(html.contains("wait-until-timeout"), "the new signature");

    let survey = {
        let mut args = vec!["-q", "survey", "--offline", "--format", "html"];
        args.extend(STORY_WINDOW);
        String::from_utf8(flakestat(surveyed_story(), &args, &[]).stdout).unwrap()
    };
    assert_self_contained(&survey);
    assert!(
        survey.contains("<svg class=\"spark\""),
        "the overview's sparklines"
    );
    assert_self_contained(&String::from_utf8(report("html", true)).unwrap());
}

#[test]
fn hostile_log_text_is_only_text_in_the_page() {
    use flakestat::analysis::{AnalysisConfig, analyze};
    use flakestat::report::{Format, RenderOptions, render};
    let (snapshot, sigs, _) = report_fixture::cuda_story();
    let data = analyze(&snapshot, &sigs, &AnalysisConfig::default());
    let mut out = Vec::new();
    render(&data, Format::Html, &RenderOptions::default(), &mut out).unwrap();
    let html = String::from_utf8(out).unwrap();
    assert_self_contained(&html);
    assert!(
        html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "escaped, shown"
    );
    assert!(!html.contains('\u{1b}'), "no escape sequences");
    assert!(!html.contains("<script>alert"));
}

#[test]
fn the_cost_table_of_flakestat_toml_names_gpu_runners_and_prices() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("flakestat.toml");
    // Only the a100 runners count as GPU runners here; a minute there costs 0.5, elsewhere 0.01.
    std::fs::write(
        &config,
        "[cost]\ngpu_labels = ['*-a100-*']\ngpu_price_per_minute = 0.5\nprice_per_minute = 0.01\n",
    )
    .unwrap();
    let mut args = vec![
        "report",
        "--format",
        "json",
        "--signature",
        SIG,
        "--config",
        config.to_str().unwrap(),
    ];
    args.extend(STORY_WINDOW);
    let data: wire::Report =
        serde_json::from_slice(&flakestat(surveyed_story(), &args, &[]).stdout).unwrap();
    let c = &data.signatures[0].cost;
    let a100: f64 = c
        .by_label
        .iter()
        .filter(|(l, _)| l.contains("-a100-"))
        .map(|(_, l)| l.job_minutes + l.rerun_minutes)
        .sum();
    assert!(a100 > 0.0);
    assert!(
        c.by_label
            .iter()
            .all(|(l, v)| v.gpu == l.contains("-a100-"))
    );
    let gpu = c.gpu_job_minutes + c.gpu_rerun_minutes;
    assert!((gpu - a100).abs() < 0.05, "{gpu} vs {a100}");
    let other = c.job_minutes + c.rerun_minutes - gpu;
    let expected = ((gpu * 0.5 + other * 0.01) * 100.0).round() / 100.0;
    assert!(
        (c.price.unwrap() - expected).abs() < 0.05,
        "{:?} vs {expected}",
        c.price
    );
}
