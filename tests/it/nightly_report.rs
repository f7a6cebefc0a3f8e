//! The nightly renderers on generated data: a huge night still makes one GitHub comment
//! (≤ 65,536 characters), trimmed by rows with "… and N more" lines and never inside a table;
//! hostile text never breaks a table or makes HTML; the JSON reads back into its wire types.

use chrono::{TimeDelta, TimeZone, Utc};
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

use flakestat::analysis::nightly::{
    ChangeKind, Count, JobLink, NewFlakyTest, NightlyData, NightlyMany, SignatureChange,
    SignatureSeen, WindowSummary,
};
use flakestat::analysis::tests::Verdict;
use flakestat::analysis::{JobRef, UnclassifiedGroup};
use flakestat::model::{JobId, Repo, RunId, SignatureId};
use flakestat::report::nightly::{MAX_COMMENT_BYTES, marker, render, render_comment, wire};
use flakestat::report::{Format, RenderOptions};

/// GitHub's limit on a comment body, in characters.
const GITHUB_COMMENT_LIMIT: usize = 65_536;

fn repo() -> Repo {
    Repo::parse("octo/demo").unwrap()
}

fn job(i: usize) -> JobLink {
    let t = Utc.with_ymd_and_hms(2026, 8, 1, 0, 0, 0).unwrap() + TimeDelta::minutes(i as i64);
    JobLink {
        run_id: RunId(30_000_000_000 + i as u64),
        attempt: 1,
        job_id: JobId(40_000_000_000 + i as u64),
        job: format!("Test linux-64 / Python 3.14t | <b>{i}</b> `x`"),
        created_at: t,
        url: format!(
            "https://github.com/octo/demo/actions/runs/{}/job/{}",
            30_000_000_000 + i as u64,
            40_000_000_000 + i as u64
        ),
        branch: Some("main".into()),
        pr: None,
    }
}

/// `n` items of each kind, with long hostile titles and lines.
fn data(n: usize) -> NightlyData {
    let since = Utc.with_ymd_and_hms(2026, 8, 1, 0, 0, 0).unwrap();
    let window = |since, until| WindowSummary {
        since,
        until,
        runs_total: 1000,
        runs_in_progress: 3,
        runs_failed: 400,
        jobs_failed: 900,
        jobs_unclassified: 200,
        logs_unknown: Vec::new(),
    };
    let title = "a | pipe, <script>alert(1)</script>, **bold**, `tick` and a long tail ".repeat(4);
    let mut changes = Vec::new();
    for kind in [ChangeKind::New, ChangeKind::Rising, ChangeKind::Fading] {
        for i in 0..n {
            changes.push(SignatureChange {
                id: SignatureId(format!("{kind:?}-signature-{i:05}").to_lowercase()),
                title: title.clone(),
                issue: None,
                kind,
                period: Count { hits: 7, runs: 40 },
                baseline: Count { hits: 2, runs: 560 },
                probability: 1e-5,
                jobs: (0..20).map(|j| job(i * 20 + j)).collect(),
                jobs_total: 37,
            });
        }
    }
    let seen = (0..n)
        .map(|i| SignatureSeen {
            id: SignatureId(format!("seen-{i:05}")),
            title: title.clone(),
            period: Count { hits: 1, runs: 40 },
            baseline: Count {
                hits: 12,
                runs: 560,
            },
            probability: 0.6,
            jobs: vec![job(i)],
            jobs_total: 1,
        })
        .collect();
    let new_unclassified = (0..n)
        .map(|i| UnclassifiedGroup {
            key: format!("key {i}"),
            id: format!("u{i:012x}"),
            cells: vec![],
            samples: vec![],
            // A test id is hostile text like the lines: it stays in its cell and makes no HTML.
            tests: [(format!("tests/x.py::test_{i}[`|</details>@user]"), 3)].into(),
            lines: vec![
                format!(
                    "E   RuntimeError: thing {i} | failed ``` with </details> {}",
                    "x".repeat(300)
                ),
                "##[error]Process completed with exit code 1.".into(),
            ],
            jobs: 3,
            runs: 2,
            job_names: vec!["a".into(), "b".into(), "c".into(), "d".into()],
            first_seen: since,
            last_seen: since,
            examples: (0..3)
                .map(|j| {
                    let l = job(i * 3 + j);
                    JobRef {
                        run_id: l.run_id,
                        attempt: 1,
                        job_id: l.job_id,
                        job: l.job,
                        created_at: l.created_at,
                        html_url: Some(l.url),
                    }
                })
                .collect(),
        })
        .collect();
    NightlyData {
        repo: Some(repo()),
        period: window(since, since + TimeDelta::days(1)),
        baseline: window(since - TimeDelta::days(14), since),
        changes,
        seen,
        new_unclassified,
        new_flaky_tests: (0..n)
            .map(|i| NewFlakyTest {
                id: format!("tests/x.py::test_flaky_{i}[|</details>`@user`]"),
                runner: "pytest".into(),
                jobs_failed: 4,
                runs_failed: 3,
                rerun_to_green: 2,
                same_commit_green: 1,
                flaky_in_job: 0,
                first_failure: Some((job(i).run_id, since)),
                baseline: (i % 2 == 0).then_some(Verdict::Unknown),
                onset: None,
            })
            .collect(),
        new_hidden_flaky: Vec::new(),
        incidents: Vec::new(),
        new_bad_hosts: Vec::new(),
        completeness: Default::default(),
        fill_gap: None,
    }
}

struct Table {
    header: usize,
    rows: Vec<usize>,
}

/// Tables (columns per row) and raw HTML found by a GFM parser.
fn parse(md: &str) -> (Vec<Table>, Vec<String>) {
    let mut tables: Vec<Table> = Vec::new();
    let mut html = Vec::new();
    let mut cells = 0;
    for event in Parser::new_ext(md, Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::Table(_)) => tables.push(Table {
                header: 0,
                rows: Vec::new(),
            }),
            Event::End(TagEnd::TableCell) => cells += 1,
            Event::End(TagEnd::TableHead) => {
                tables.last_mut().unwrap().header = std::mem::take(&mut cells);
            }
            Event::End(TagEnd::TableRow) => {
                tables
                    .last_mut()
                    .unwrap()
                    .rows
                    .push(std::mem::take(&mut cells));
            }
            Event::Html(h) | Event::InlineHtml(h) => html.push(h.to_string()),
            _ => {}
        }
    }
    (tables, html)
}

#[test]
fn a_huge_night_still_fits_one_comment_trimmed_by_whole_rows() {
    let data = data(3000);
    let marker = marker(&data);
    let body = render_comment(&data, &marker, MAX_COMMENT_BYTES);
    assert!(body.starts_with(&format!("{marker}\n")));
    assert!(body.len() <= MAX_COMMENT_BYTES, "{} bytes", body.len());
    assert!(body.chars().count() <= GITHUB_COMMENT_LIMIT);

    let (tables, html) = parse(&body);
    // Every kind still has its table, every row whole.
    assert_eq!(
        tables.len(),
        6,
        "new, rising, fading, unclassified, newly flaky tests, seen"
    );
    for t in &tables {
        assert!(!t.rows.is_empty());
        assert!(t.rows.iter().all(|r| *r == t.header), "a row lost cells");
    }
    // Each section says how many rows it left out, and shown + left out is everything.
    let shown = tables[0].rows.len();
    assert!(
        body.contains(&format!("… and {} more (New signatures", 3000 - shown)),
        "{}",
        &body[body.len() - 2000..]
    );
    assert!(body.contains(&format!(
        "… and {} more (New unclassified failures",
        3000 - shown
    )));
    assert!(body.contains(&format!("… and {} more (Newly flaky tests", 3000 - shown)));
    // Only our own marker is HTML: nothing from the data made any.
    assert_eq!(html, vec![format!("{marker}\n")]);
    assert!(!body.contains("<script>"));

    // As many rows as fit: one more per section would not.
    let bigger = render_comment(&data, &marker, body.len() + 1);
    assert_eq!(bigger, body, "the fit is stable");
}

#[test]
fn a_small_night_is_not_trimmed_and_the_markdown_format_matches_the_comment() {
    let data = data(3);
    let marker = marker(&data);
    let body = render_comment(&data, &marker, MAX_COMMENT_BYTES);
    assert!(!body.contains("… and"), "{body}");
    let mut md = Vec::new();
    render(&data, Format::Markdown, &RenderOptions::default(), &mut md).unwrap();
    assert_eq!(
        format!("{marker}\n{}", String::from_utf8(md).unwrap()),
        body
    );
    let (tables, _) = parse(&body);
    assert_eq!(
        tables.iter().map(|t| t.rows.len()).collect::<Vec<_>>(),
        [3, 3, 3, 3, 3, 3]
    );
    // The newly flaky tests have their section, with what the baseline said.
    assert!(body.contains("## Newly flaky tests"), "{body}");
    assert!(body.contains("| failed (unknown) |") && body.contains("| did not fail |"));
    // Five job links shown of 37, the rest counted.
    assert!(body.contains(" and 32 more"), "{body}");
}

#[test]
fn the_json_reads_back_with_every_row() {
    let data = data(40);
    let mut out = Vec::new();
    render(&data, Format::Json, &RenderOptions::default(), &mut out).unwrap();
    let report: wire::Nightly = serde_json::from_slice(&out).unwrap();
    assert_eq!((report.schema, report.kind.as_str()), (1, "nightly"));
    assert_eq!(report.repo.as_deref(), Some("octo/demo"));
    assert_eq!(report.counts.new, 40);
    assert_eq!(report.counts.rising, 40);
    assert_eq!(report.counts.fading, 40);
    assert_eq!(report.counts.new_unclassified, 40);
    assert_eq!(report.counts.new_flaky_tests, 40);
    assert_eq!(report.new_flaky_tests.len(), 40);
    let t = &report.new_flaky_tests[0];
    assert_eq!(t.file.as_deref(), Some("tests/x.py"));
    assert_eq!((t.jobs_failed, t.rerun_to_green), (4, 2));
    assert_eq!(t.baseline_verdict.as_deref(), Some("unknown"));
    assert_eq!(report.new_flaky_tests[1].baseline_verdict, None);
    assert_eq!(report.changes.len(), 120);
    assert_eq!(report.changes[0].kind, "new");
    assert_eq!(report.changes[0].jobs.len(), 20);
    assert_eq!(report.changes[0].jobs_total, 37);
    assert_eq!(report.rules.rising_p, 0.01);
}

#[test]
fn the_terminal_table_shows_everything_untrimmed() {
    let data = data(30);
    let mut out = Vec::new();
    render(&data, Format::Table, &RenderOptions::default(), &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(!text.contains("… and"));
    assert!(text.contains("new-signature-00029"));
    assert!(!text.contains('\u{1b}'), "no colour when not asked");
}

/// The summary of several repositories counts each one's newly flaky tests beside its changed
/// signatures, as each repository's own section lists them.
#[test]
fn the_summary_of_several_repositories_counts_their_newly_flaky_tests() {
    let mut busy = data(3);
    busy.new_flaky_tests.truncate(2);
    let mut quiet = data(0);
    quiet.repo = Some(Repo::parse("octo/quiet").unwrap());
    let many = NightlyMany::new(vec![busy, quiet], Some("octo".into()));
    let mut out = Vec::new();
    render(&many, Format::Markdown, &RenderOptions::default(), &mut out).unwrap();
    let md = String::from_utf8(out).unwrap();
    let header = "| Repository | New | Rising | Fading | New unclassified | Newly flaky tests | Period runs |";
    assert!(md.contains(header), "{md}");
    assert!(
        md.contains("| octo/demo | 3 | 3 | 3 | 3 | 2 | 1000 |"),
        "{md}"
    );
    assert!(
        md.contains("| octo/quiet | 0 | 0 | 0 | 0 | 0 | 1000 |"),
        "{md}"
    );
    // Each repository's own section still lists them.
    assert!(md.contains("\n### Newly flaky tests\n"), "{md}");

    let mut out = Vec::new();
    render(&many, Format::Table, &RenderOptions::default(), &mut out).unwrap();
    let table = String::from_utf8(out).unwrap();
    assert!(table.contains("Newly flaky tests"), "{table}");
}
