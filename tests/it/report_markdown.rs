//! The markdown report, read back with a GFM parser (pulldown-cmark with tables): every table has
//! the rows and columns it should, links go where they should, and hostile log text stays inside
//! its cell and produces no HTML.

use crate::report_fixture::*;
use flakestat::analysis::{AnalysisConfig, ReportData, analyze};
use flakestat::model::{PrNumber, SignatureId};
use flakestat::report::{Format, RenderOptions, render};
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// A parsed table: header cells and body rows, each cell's text (text and code concatenated).
#[derive(Debug)]
struct ParsedTable {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    /// Link destinations per row.
    links: Vec<Vec<String>>,
}

struct Parsed {
    tables: Vec<ParsedTable>,
    html: Vec<String>,
    headings: Vec<String>,
    codes: Vec<String>,
}

fn parse(md: &str) -> Parsed {
    let mut out = Parsed {
        tables: Vec::new(),
        html: Vec::new(),
        headings: Vec::new(),
        codes: Vec::new(),
    };
    let mut cell: Option<String> = None;
    let mut row: Vec<String> = Vec::new();
    let mut row_links: Vec<String> = Vec::new();
    let mut heading: Option<String> = None;
    for event in Parser::new_ext(md, Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::Table(_)) => out.tables.push(ParsedTable {
                header: Vec::new(),
                rows: Vec::new(),
                links: Vec::new(),
            }),
            Event::Start(Tag::TableCell) => cell = Some(String::new()),
            Event::End(TagEnd::TableCell) => row.push(cell.take().unwrap()),
            Event::End(TagEnd::TableHead) => {
                out.tables.last_mut().unwrap().header = std::mem::take(&mut row);
                row_links.clear();
            }
            Event::End(TagEnd::TableRow) => {
                let t = out.tables.last_mut().unwrap();
                t.rows.push(std::mem::take(&mut row));
                t.links.push(std::mem::take(&mut row_links));
            }
            Event::Start(Tag::Link { dest_url, .. }) => row_links.push(dest_url.to_string()),
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::End(TagEnd::Heading(_)) => out.headings.push(heading.take().unwrap()),
            Event::Text(t) => {
                if let Some(c) = cell.as_mut() {
                    c.push_str(&t);
                }
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::Code(t) => {
                out.codes.push(t.to_string());
                if let Some(c) = cell.as_mut() {
                    c.push_str(&t);
                }
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::Html(h) | Event::InlineHtml(h) => out.html.push(h.to_string()),
            _ => {}
        }
    }
    out
}

fn markdown(data: &ReportData) -> String {
    let mut out = Vec::new();
    render(data, Format::Markdown, &RenderOptions::default(), &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

fn focused(sig: &str) -> AnalysisConfig {
    AnalysisConfig {
        focus: Some(SignatureId(sig.into())),
        ..AnalysisConfig::default()
    }
}

/// Only our own collapsible blocks are HTML.
fn assert_only_our_html(p: &Parsed) {
    for h in &p.html {
        let h = h.trim();
        assert!(
            h == "</details>" || (h.starts_with("<details><summary>") && h.ends_with("</summary>")),
            "unexpected HTML: {h:?}"
        );
        if let Some(inner) = h
            .strip_prefix("<details><summary>")
            .and_then(|i| i.strip_suffix("</summary>"))
        {
            assert!(!inner.contains('<'), "HTML inside summary: {h:?}");
        }
    }
}

fn table_with<'a>(p: &'a Parsed, first_header: &str, second: &str) -> &'a ParsedTable {
    p.tables
        .iter()
        .find(|t| {
            t.header.first().map(String::as_str) == Some(first_header)
                && t.header.get(1).map(String::as_str) == Some(second)
        })
        .unwrap_or_else(|| panic!("no table {first_header} | {second}"))
}

#[test]
fn signature_account_tables_have_every_hit_and_value() {
    let (snapshot, sigs, story) = cuda_story();
    let data = analyze(&snapshot, &sigs, &focused(SIG));
    let s = &data.signatures[0];
    let p = parse(&markdown(&data));
    assert_only_our_html(&p);

    let jobs = table_with(&p, "Date", "Job");
    assert_eq!(jobs.header.len(), 6);
    assert_eq!(jobs.rows.len() as u64, story.jobs_hit);
    for ((row, links), hit) in jobs.rows.iter().zip(&jobs.links).zip(&s.hits) {
        assert_eq!(row.len(), 6);
        assert_eq!(row[1], hit.job);
        assert_eq!(row[2], format!("{} of {}", hit.attempt, hit.run_attempts));
        match hit.pr {
            Some(n) => assert_eq!(row[3], format!("PR #{n}")),
            None => assert_eq!(row[3], "main"),
        }
        assert!(links.contains(&hit.run_url));
        assert!(links.contains(hit.html_url.as_ref().unwrap()));
    }

    let matrix = table_with(&p, "Dimension", "Value");
    let values: usize = s.dimensions.iter().map(|d| d.values.len()).sum();
    assert_eq!(matrix.rows.len(), values);
    let free_threaded = matrix
        .rows
        .iter()
        .find(|r| r[0] == "python" && r[1] == "3.14t")
        .unwrap();
    assert_eq!(free_threaded[2], story.jobs_hit.to_string());
    for r in matrix
        .rows
        .iter()
        .filter(|r| r[0] == "python" && r[1] != "3.14t")
    {
        assert_eq!(r[2], "0");
        assert_eq!(r[4], "never");
    }

    let excluded = table_with(&p, "Date", "PR");
    assert_eq!(excluded.rows.len(), story.excluded.len());
    assert!(
        excluded
            .rows
            .iter()
            .all(|r| r[1] == "PR #2371" && r[3].contains("_buffer.pyx"))
    );

    let tests = table_with(&p, "Test", "Hits");
    assert_eq!(tests.rows.len(), story.tests.len());
    for r in &tests.rows {
        assert_eq!(r[1], story.tests[&r[0]].to_string());
    }
}

#[test]
fn the_summary_sentence_says_what_a_careful_human_would() {
    let (snapshot, sigs, story) = cuda_story();
    let data = analyze(&snapshot, &sigs, &focused(SIG));
    let md = markdown(&data);
    let w = data.signatures[0].impact_window.as_ref().unwrap();
    let sentence = md.lines().find(|l| l.starts_with("**")).unwrap();
    assert!(sentence.starts_with(&format!("**{} of {} runs (", story.hit_runs.len(), w.runs)));
    for part in [
        format!("{} on main", story.hit_main),
        format!("{} on PRs touching none of its paths", story.hit_pr),
        format!(
            "{} re-run to green (max {} attempts)",
            story.rerun_to_green, story.max_attempts
        ),
        // Placed on #2371: since its merge, how long until the first hit, and the evidence.
        format!(
            "since #2371 merged on {}",
            story.merged_at.unwrap().format("%Y-%m-%d %H:%M UTC")
        ),
        "first hit 3.0 h after #2371 merged".to_string(),
        format!("zero hits in {} runs before #2371", story.runs_before),
        "had the flake been there, seeing none: probability".to_string(),
        "only on python=3.14t".to_string(),
        "never on 3.12, 3.13, 3.14".to_string(),
    ] {
        assert!(sentence.contains(&part), "{part:?} not in {sentence}");
    }
}

#[test]
fn hostile_log_text_stays_in_its_cell_and_makes_no_html() {
    let (snapshot, sigs, _) = cuda_story();
    let data = analyze(&snapshot, &sigs, &AnalysisConfig::default());
    let md = markdown(&data);
    let p = parse(&md);
    assert_only_our_html(&p);
    let groups = table_with(&p, "Jobs", "Runs");
    assert_eq!(groups.rows.len(), data.unclassified.len());
    let expected = HOSTILE
        .replace("\u{1b}[31m", "")
        .replace("\u{1b}[0m", "")
        .replace('\n', " ");
    let row = groups
        .rows
        .iter()
        .find(|r| r[2].starts_with("E |"))
        .expect("the hostile group");
    // Jobs, runs, error lines, failing tests, job names, last seen, example.
    assert_eq!(row.len(), 7);
    assert_eq!(row[2], expected);
    assert_eq!(row[4], test_job("linux-64", "3.12"));
    assert!(!md.contains('\u{1b}'));
    // `<script>` appears only as code.
    assert!(p.codes.iter().any(|c| c.contains("<script>")));
    // Nothing of the log became a heading or a list item of its own.
    assert!(p.headings.iter().all(|h| !h.contains("not a heading")));
}

#[test]
fn hostile_job_names_and_titles_cannot_break_tables() {
    let mut b = Builder::new();
    let name =
        "Test | x <img src=x onerror=alert(1)> `a` ``b``\n# h\r\n- li \\| [l](javascript:x) &lt;";
    b.run(
        t0() + chrono::Duration::days(1),
        From::Main,
        &[vec![(
            name.to_string(),
            Outcome::Hit(vec!["t|<b>`".into()]),
        )]],
    );
    let snapshot = b.finish();
    let mut sig = signature();
    sig.title = "<b>bold</b> | `x` # not".into();
    let data = analyze(&snapshot, &[sig.clone()], &focused(SIG));
    let md = markdown(&data);
    let p = parse(&md);
    assert_only_our_html(&p);
    let flat = name.replace("\r\n", " ").replace('\n', " ");
    let jobs = table_with(&p, "Date", "Job");
    assert_eq!(jobs.rows.len(), 1);
    assert_eq!(jobs.rows[0].len(), 6);
    assert_eq!(jobs.rows[0][1], flat);
    let tests = table_with(&p, "Test", "Hits");
    assert_eq!(tests.rows[0], ["t|<b>`", "1"]);
    assert!(p.headings.iter().any(|h| h.ends_with(&sig.title)));
    // No javascript: link survived.
    assert!(jobs.links[0].iter().all(|l| l.starts_with("https://")));
}

#[test]
fn the_same_snapshot_gives_byte_identical_output() {
    let (snapshot, sigs, _) = cuda_story();
    for config in [AnalysisConfig::default(), focused(SIG)] {
        for format in [Format::Markdown, Format::Table, Format::Json] {
            let once = {
                let mut out = Vec::new();
                render(
                    &analyze(&snapshot, &sigs, &config),
                    format,
                    &RenderOptions::default(),
                    &mut out,
                )
                .unwrap();
                out
            };
            let again = {
                let (snapshot, sigs, _) = cuda_story();
                let mut out = Vec::new();
                render(
                    &analyze(&snapshot, &sigs, &config),
                    format,
                    &RenderOptions::default(),
                    &mut out,
                )
                .unwrap();
                out
            };
            assert!(!once.is_empty());
            assert_eq!(once, again, "{format:?}");
        }
    }
}

#[test]
fn long_lists_are_collapsed() {
    let (snapshot, sigs, story) = cuda_story();
    assert!(story.jobs_hit > 10, "the story needs a long list of hits");
    let md = markdown(&analyze(&snapshot, &sigs, &focused(SIG)));
    assert!(md.contains(&format!(
        "<details><summary>Failing jobs ({})</summary>",
        story.jobs_hit
    )));
}

/// What a GFM reader should see of a text we were given: one line, no control characters or
/// escape sequences, runs of whitespace as one space, trimmed.
fn as_read(s: &str) -> String {
    s.replace("\u{1b}[1m", "")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn random_hostile_names_and_lines_never_break_a_table() {
    const TOKENS: &[&str] = &[
        "|",
        "`",
        "``",
        "<",
        ">",
        "&",
        "\\",
        "#",
        "-",
        "*",
        "_",
        "[",
        "]",
        "(",
        ")",
        "!",
        "\n",
        "\r\n",
        "\t",
        " ",
        "  ",
        "a",
        "Z",
        "7",
        "1.",
        "~",
        "$",
        ":",
        "\"",
        "'",
        "=",
        "+",
        "<br>",
        "<script>",
        "&amp;",
        "&#124;",
        "\\|",
        "](x)",
        "\u{1b}[1m",
        "é",
        "—",
    ];
    let mut rng = fastrand::Rng::with_seed(2371);
    let word = |rng: &mut fastrand::Rng| -> String {
        loop {
            let n = rng.usize(1..12);
            let s: String = (0..n).map(|_| TOKENS[rng.usize(..TOKENS.len())]).collect();
            // A name of spaces only is no name.
            if !as_read(&s).is_empty() {
                return format!("x{s}y");
            }
        }
    };
    for round in 0..150 {
        let name = word(&mut rng);
        let line = word(&mut rng);
        let test = word(&mut rng).replace(char::is_whitespace, "");
        let mut b = Builder::new();
        let t = t0() + chrono::Duration::days(1);
        b.run(
            t,
            From::Main,
            &[vec![(name.clone(), Outcome::Hit(vec![test.clone()]))]],
        );
        b.run(
            t + chrono::Duration::hours(1),
            From::Main,
            &[vec![(name.clone(), Outcome::Unmatched(vec![line.clone()]))]],
        );
        let snapshot = b.finish();
        for config in [AnalysisConfig::default(), focused(SIG)] {
            let data = analyze(&snapshot, &[signature()], &config);
            let md = markdown(&data);
            let p = parse(&md);
            assert_only_our_html(&p);
            for t in &p.tables {
                for row in &t.rows {
                    assert_eq!(row.len(), t.header.len(), "round {round}: {md}");
                }
            }
            if config.focus.is_some() {
                let jobs = table_with(&p, "Date", "Job");
                assert_eq!(
                    jobs.rows[0][1],
                    as_read(&name),
                    "round {round}: {name:?}\n{md}"
                );
                let tests = table_with(&p, "Test", "Hits");
                assert_eq!(
                    tests.rows[0][0],
                    as_read(&test),
                    "round {round}: {test:?}\n{md}"
                );
            } else {
                let groups = table_with(&p, "Jobs", "Runs");
                assert_eq!(
                    groups.rows[0][2],
                    as_read(&line),
                    "round {round}: {line:?}\n{md}"
                );
                assert_eq!(
                    groups.rows[0][4],
                    as_read(&name),
                    "round {round}: {name:?}\n{md}"
                );
            }
        }
    }
}

#[test]
fn the_suspects_table_links_each_pr_and_escapes_its_title() {
    let (mut snapshot, sigs, _) = cuda_story();
    snapshot.pulls.get_mut(&PrNumber(2380)).unwrap().title = HOSTILE.to_string();
    let data = analyze(&snapshot, &sigs, &focused(SIG));
    let md = markdown(&data);
    let p = parse(&md);
    assert_only_our_html(&p);
    let suspects = table_with(&p, "PR", "Title");
    let b = data.signatures[0].bisection.as_ref().unwrap();
    assert_eq!(suspects.rows.len(), b.suspects.len());
    assert_eq!(suspects.rows[0][0], "#2371");
    assert_eq!(
        suspects.links[0],
        ["https://github.com/NVIDIA/cuda-python/pull/2371"]
    );
    // The hostile title stays inside its cell, whole: every row has as many cells as the header.
    assert!(
        suspects
            .rows
            .iter()
            .all(|r| r.len() == suspects.header.len())
    );
    let hostile = suspects.rows.iter().find(|r| r[0] == "#2380").unwrap();
    assert!(hostile[1].contains("a|b"), "{:?}", hostile[1]);
    assert!(hostile[1].contains("<script>"), "{:?}", hostile[1]);
}
