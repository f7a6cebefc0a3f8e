//! The terminal rendering: headings, sentences and comfy-table tables (this is the only file that
//! names comfy-table; `classify`'s table goes through [`grid`] too). Log text is stripped of escape sequences and control characters before it
//! reaches the terminal; colour only when `RenderOptions.color` says so.

use std::io::{self, Write};

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{
    Attribute, Cell, CellAlignment, ColumnConstraint, ContentArrangement, Table as Comfy, Width,
};

use super::RenderOptions;
use super::layout::{Block, Chart, Line, MAX_LOG_CHARS, Span, Table};
use super::pictures;
use super::sanitize::one_line;

const BOLD: &str = "\u{1b}[1m";
const RESET: &str = "\u{1b}[0m";

pub fn render(blocks: &[Block], options: &RenderOptions, out: &mut dyn Write) -> io::Result<()> {
    for (i, block) in blocks.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        write_block(block, options, out)?;
    }
    Ok(())
}

fn write_block(block: &Block, options: &RenderOptions, out: &mut dyn Write) -> io::Result<()> {
    match block {
        Block::Heading(level, line) => {
            let lines = wrap(&plain(line, options.color), options.width, "", "");
            let longest = lines.iter().map(|l| unicode_width(l)).max().unwrap_or(0);
            for t in lines {
                if options.color {
                    writeln!(out, "{BOLD}{t}{RESET}")?;
                } else {
                    writeln!(out, "{t}")?;
                }
            }
            if *level <= 2 {
                let rule = if *level == 1 { "=" } else { "-" };
                writeln!(out, "{}", rule.repeat(longest))?;
            }
            Ok(())
        }
        Block::Paragraph(line) => write_prose(line, options, "", "", out),
        Block::Bullets(items) => {
            for item in items {
                write_prose(item, options, "  • ", "    ", out)?;
            }
            Ok(())
        }
        Block::Table(table) => match options.width {
            Some(width) if !fits(table, options.color, width) => {
                write_records(table, options.color, width, out)
            }
            _ => writeln!(out, "{}", comfy(table, options)),
        },
        Block::Details { summary, blocks } => {
            writeln!(out, "{}:", one_line(summary))?;
            render(blocks, options, out)
        }
        Block::Chart(Chart::Timeline(t)) => {
            for line in pictures::timeline_chart(t, options.color, options.color, options.width) {
                writeln!(out, "{line}")?;
            }
            Ok(())
        }
        Block::Chart(Chart::HeatMap(h)) => {
            writeln!(
                out,
                "Jobs hit / jobs run, {} by {}:",
                one_line(&h.rows),
                one_line(&h.columns)
            )?;
            for line in pictures::heatmap_grid(
                h,
                options.color,
                one_line,
                options.width.map(|w| usize::from(w).saturating_sub(2)),
            ) {
                writeln!(out, "  {line}")?;
            }
            Ok(())
        }
    }
}

/// A line of prose wrapped to the width (`first` before its first line, `rest` before the
/// others). A command in it goes on a line of its own, whole and unwrapped, two spaces in: a
/// terminal that is too narrow folds it, but a paste still runs it as printed.
fn write_prose(
    line: &Line,
    options: &RenderOptions,
    first: &str,
    rest: &str,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut started = false;
    let mut prose: Line = Vec::new();
    let flush = |prose: &mut Line, started: &mut bool, out: &mut dyn Write| -> io::Result<()> {
        let text = plain(prose, options.color);
        prose.clear();
        let text = text.trim();
        if text.is_empty() {
            return Ok(());
        }
        let lead = if *started { rest } else { first };
        for l in wrap(text, options.width, lead, rest) {
            writeln!(out, "{l}")?;
        }
        *started = true;
        Ok(())
    };
    for span in line {
        match span {
            Span::Command(command) => {
                flush(&mut prose, &mut started, out)?;
                writeln!(out, "{rest}  {}", one_line(command).trim())?;
                started = true;
            }
            other => prose.push(other.clone()),
        }
    }
    flush(&mut prose, &mut started, out)
}

/// Prose broken at spaces to fit `width`, `first` before the first line and `rest` before the
/// others; one line when the width is not known. A word longer than the line is cut, but a URL
/// that fits the width goes whole on a line of its own, unindented, so it can still be followed.
fn wrap(text: &str, width: Option<u16>, first: &str, rest: &str) -> Vec<String> {
    let Some(width) = width.map(usize::from).filter(|w| *w > rest.len() + 10) else {
        return vec![format!("{first}{text}")];
    };
    let mut lines = Vec::new();
    let mut line = first.to_string();
    let mut empty = true;
    for word in text.split(' ') {
        let mut word = word.to_string();
        if !empty && unicode_width(&line) + 1 + unicode_width(&word) > width {
            lines.push(std::mem::replace(&mut line, rest.to_string()));
            empty = true;
        }
        let url = (word.starts_with("https://") || word.starts_with("http://"))
            && unicode_width(&word) <= width;
        if url && unicode_width(&line) + unicode_width(&word) + usize::from(!empty) > width {
            if line.trim().is_empty() {
                line.clear();
            } else {
                lines.push(std::mem::take(&mut line));
            }
            lines.push(std::mem::take(&mut word));
            line = rest.to_string();
            empty = true;
            continue;
        }
        while unicode_width(&line) + unicode_width(&word) + usize::from(!empty) > width {
            let room = width - unicode_width(&line) - usize::from(!empty);
            let head: String = word.chars().take(room).collect();
            word = word.chars().skip(room).collect();
            if !empty {
                line.push(' ');
            }
            line.push_str(&head);
            lines.push(std::mem::replace(&mut line, rest.to_string()));
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(&word);
        empty = false;
    }
    // Nothing after a URL on its own line: no line of indentation only.
    if !(empty && line.trim().is_empty() && !lines.is_empty()) {
        lines.push(line);
    }
    lines
}

fn is_url(word: &str) -> bool {
    word.starts_with("https://") || word.starts_with("http://")
}

fn unicode_width(s: &str) -> usize {
    s.chars().count()
}

/// The widest a column's words may need before a grid would break them: longer ones (log
/// lines, URLs) wrap in any layout.
const WORD_CAP: usize = 24;

/// Whether the grid fits `width` without breaking a word (up to `WORD_CAP` characters) of any
/// header or cell: each column needs its longest word, one space either side and a border.
fn fits(table: &Table, fancy: bool, width: u16) -> bool {
    // A URL is never cut: it counts whole (a grid that cannot hold it becomes records, where
    // it goes on a line of its own).
    let longest_word = |text: &str| {
        text.split(' ')
            .map(|w| {
                if is_url(w) {
                    unicode_width(w)
                } else {
                    unicode_width(w).min(WORD_CAP)
                }
            })
            .max()
            .unwrap_or(0)
    };
    let needed: usize = (0..table.headers.len())
        .map(|i| {
            let cells = table
                .rows
                .iter()
                .filter_map(|row| row.get(i))
                .map(|cell| longest_word(&plain(cell, fancy)).max(longest_identifier(cell)));
            cells
                .chain([longest_word(table.headers[i])])
                .max()
                .unwrap_or(0)
                + 3
        })
        .sum();
    needed < usize::from(width)
}

/// The longest identifier of a cell (a test id, a file, a signature id: a code span of one
/// word), which no layout may break: counted whole, however long.
fn longest_identifier(cell: &Line) -> usize {
    cell.iter()
        .filter_map(|span| match span {
            Span::Code(t) | Span::Command(t) => {
                let t = one_line(t);
                let t = t.trim();
                (!t.contains(' ')).then(|| unicode_width(t))
            }
            _ => None,
        })
        .max()
        .unwrap_or(0)
}

/// A table too wide for the terminal, as one record per row: each column's header and value on
/// a line of their own, values wrapped under themselves, records apart by a blank line. When a
/// value's longest word would not fit beside the headers, each header gets a line of its own and
/// its value goes below it. Nothing is dropped and no word is broken (but one longer than the
/// line).
fn write_records(table: &Table, fancy: bool, width: u16, out: &mut dyn Write) -> io::Result<()> {
    let label = table
        .headers
        .iter()
        .map(|h| unicode_width(h))
        .max()
        .unwrap_or(0);
    let cells: Vec<Vec<String>> = table
        .rows
        .iter()
        .map(|row| row.iter().map(|cell| plain(cell, fancy)).collect())
        .collect();
    // URLs go on lines of their own anyway (`wrap`); words of prose past `2 * WORD_CAP` (a
    // Windows path in a log line) are cut in any layout. Identifiers (a test id, a file) count
    // whole: beside their header only when they fit there, and cut only when longer than a line.
    let longest_word = cells
        .iter()
        .flatten()
        .flat_map(|text| text.split(' '))
        .filter(|word| !word.starts_with("https://") && !word.starts_with("http://"))
        .map(|word| unicode_width(word).min(2 * WORD_CAP))
        .chain(table.rows.iter().flatten().map(longest_identifier))
        .max()
        .unwrap_or(0);
    let beside = label + 4 + longest_word <= usize::from(width);
    let indent = if beside {
        " ".repeat(label + 4)
    } else {
        "    ".to_string()
    };
    for (n, row) in cells.iter().enumerate() {
        if n > 0 {
            writeln!(out)?;
        }
        for (header, text) in table.headers.iter().zip(row) {
            let first = if beside {
                format!("  {header:<label$}  ")
            } else {
                writeln!(out, "  {header}")?;
                indent.clone()
            };
            for line in wrap(text, Some(width), &first, &indent) {
                writeln!(out, "{}", line.trim_end())?;
            }
        }
    }
    Ok(())
}

fn comfy(table: &Table, options: &RenderOptions) -> String {
    let Some(width) = options.width else {
        return arranged(table, options, &[]);
    };
    // A signature id is not broken mid-word: its column is at least as wide as the longest id
    // (the title after it wraps at spaces). Fitting the width comes first: when that would make
    // the table wider than the terminal (every line of it wrapped by the terminal), the column
    // gives up what the table overflows by, down to no bound at all.
    let mut bounds = id_columns(table);
    loop {
        let text = arranged(table, options, &bounds);
        let overflow = widest_line(&text).saturating_sub(usize::from(width));
        if overflow == 0 || bounds.is_empty() {
            return text;
        }
        let overflow = u16::try_from(overflow).unwrap_or(u16::MAX);
        bounds = bounds
            .into_iter()
            .map(|(i, w)| (i, w.saturating_sub(overflow)))
            // Below one character and its padding a bound says nothing.
            .filter(|(_, w)| *w > 2)
            .collect();
    }
}

/// The Signature columns and the link columns, and the width that holds their longest id or
/// URL whole, counting the cell's padding (one space each side).
fn id_columns(table: &Table) -> Vec<(usize, u16)> {
    let mut bounds = Vec::new();
    for i in 0..table.headers.len() {
        let first = table
            .rows
            .iter()
            .filter_map(|r| r.get(i)?.first())
            .filter_map(|span| match span {
                Span::Code(id) if table.headers[i] == "Signature" => {
                    Some(one_line(id).chars().count())
                }
                // A link column shows its URL: held whole too.
                Span::Url { url: Some(u), .. } => Some(one_line(u).chars().count()),
                _ => None,
            });
        // Any other identifier (a test id, a file) is held whole as well.
        // A short tail after it (a count, ` (1)`) stays on its line.
        let identifiers = table
            .rows
            .iter()
            .filter_map(|r| r.get(i))
            .map(|cell| {
                let id = longest_identifier(cell);
                let whole = unicode_width(&plain(cell, false));
                if id > 0 && whole <= id + 8 { whole } else { id }
            })
            .filter(|w| *w > 0);
        let longest_id = first.chain(identifiers).max();
        if let Some(w) = longest_id {
            bounds.push((i, u16::try_from(w + 2).unwrap_or(u16::MAX)));
        }
    }
    bounds
}

/// The widest line of `text` as the terminal shows it (colour sequences take no room).
fn widest_line(text: &str) -> usize {
    text.lines()
        .map(|line| {
            let mut n = 0;
            let mut chars = line.chars();
            while let Some(c) = chars.next() {
                if c == '\u{1b}' {
                    // CSI: ESC [ parameters… final byte in @..=~
                    if chars.next() == Some('[') {
                        for c in chars.by_ref() {
                            if ('@'..='~').contains(&c) {
                                break;
                            }
                        }
                    }
                } else {
                    n += 1;
                }
            }
            n
        })
        .max()
        .unwrap_or(0)
}

/// A grid of cells that are already fit for a terminal (each line sanitized; a cell may hold
/// several lines, a long one wraps within its column when the width is known), in the same
/// borders, header style and width rules as every report table. For outputs that are not a
/// report layout: `classify`'s table of logs and their matches.
pub fn grid(headers: &[&str], rows: &[Vec<String>], options: &RenderOptions) -> String {
    let mut t = empty(headers.iter().copied(), options);
    for row in rows {
        t.add_row(row.iter().map(Cell::new));
    }
    t.to_string()
}

/// A comfy-table with the reports' borders, `headers` (bold with colour) and the width decided at
/// the edge, and no rows yet.
fn empty<'a>(headers: impl Iterator<Item = &'a str>, options: &RenderOptions) -> Comfy {
    let mut t = Comfy::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    if options.color {
        t.enforce_styling();
    } else {
        t.force_no_tty();
    }
    // The width was decided at the edge; no terminal reads here.
    match options.width {
        Some(w) => {
            t.set_content_arrangement(ContentArrangement::Dynamic);
            t.set_width(w);
        }
        None => {
            t.set_content_arrangement(ContentArrangement::Disabled);
        }
    }
    t.set_header(headers.map(|h| {
        let c = Cell::new(h);
        if options.color {
            c.add_attribute(Attribute::Bold)
        } else {
            c
        }
    }));
    t
}

/// The table laid out by comfy-table, each `(column, width)` of `id_bounds` at least that wide.
fn arranged(table: &Table, options: &RenderOptions, id_bounds: &[(usize, u16)]) -> String {
    let mut t = empty(table.headers.iter().copied(), options);
    for row in &table.rows {
        t.add_row(row.iter().map(|cell| Cell::new(plain(cell, options.color))));
    }
    // A sparkline is one line or nothing: its column is never wrapped.
    for i in 0..table.headers.len() {
        let spark = table.rows.iter().any(|r| {
            r.get(i)
                .is_some_and(|c| c.iter().any(|s| matches!(s, Span::Spark(_))))
        });
        if spark && let Some(col) = t.column_mut(i) {
            col.set_constraint(ColumnConstraint::ContentWidth);
        }
    }
    for &(i, w) in id_bounds {
        if let Some(col) = t.column_mut(i) {
            col.set_constraint(ColumnConstraint::LowerBoundary(Width::Fixed(w)));
        }
    }
    for (i, numeric) in table.numeric.iter().enumerate() {
        if *numeric && let Some(col) = t.column_mut(i) {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    t.to_string()
}

/// A line as the terminal shows it: links as their text, or as their URL for link columns.
fn plain(line: &Line, fancy: bool) -> String {
    let mut s = String::new();
    for span in line {
        match span {
            Span::Text(t) | Span::Strong(t) => s.push_str(&one_line(t)),
            Span::Code(t) => {
                let t = one_line(t);
                if t.chars().count() > MAX_LOG_CHARS {
                    s.extend(t.chars().take(MAX_LOG_CHARS));
                    s.push('…');
                } else {
                    s.push_str(&t);
                }
            }
            Span::Command(t) => s.push_str(&one_line(t)),
            Span::Link { text, .. } => s.push_str(&one_line(text)),
            // Unicode blocks where colour is allowed, plain characters elsewhere.
            Span::Spark(levels) => s.push_str(&pictures::sparkline(levels, fancy)),
            Span::Url { text, url } => match url {
                Some(u) => s.push_str(&one_line(u)),
                None => s.push_str(&one_line(text)),
            },
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The story's ranking, shaped as `layout` builds it: twelve columns.
    fn ranking() -> Table {
        let headers = vec![
            "#",
            "Signature",
            "Runs hit",
            "Jobs hit",
            "Share of runs",
            "Main",
            "PRs (unrelated)",
            "Re-run to green",
            "First hit",
            "Introduced by",
            "Cost (h)",
            "Hits over time",
        ];
        let text = |t: &str| vec![Span::Text(t.into())];
        let row = |n: &str, id: &str| {
            vec![
                text(n),
                vec![
                    Span::Code(id.into()),
                    Span::Text(" _wait_until timed out: condition not satisfied".into()),
                ],
                text("16"),
                text("24"),
                text("16 of 77 (21%)"),
                text("5"),
                text("11 (11)"),
                text("7"),
                text("2026-07-15 21:18 UTC"),
                vec![Span::Link {
                    text: "#2371".into(),
                    url: Some("https://github.com/o/r/pull/2371".into()),
                }],
                text("6.7 (6.7 GPU)"),
                vec![Span::Spark(vec![0, 0, 3, 1, 5, 5, 7, 5])],
            ]
        };
        Table {
            numeric: headers.iter().map(|h| *h == "Runs hit").collect(),
            headers,
            rows: vec![
                row("1", "wait-until-timeout"),
                row("2", "network-error-in-a-package-index"),
            ],
        }
    }

    fn render_at(table: &Table, width: Option<u16>) -> String {
        let mut out = Vec::new();
        let options = RenderOptions {
            color: false,
            width,
        };
        write_block(&Block::Table(table.clone()), &options, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_table_too_wide_for_the_terminal_becomes_records_breaking_no_word() {
        let table = ranking();
        for width in [60, 80, 100] {
            let text = render_at(&table, Some(width));
            assert!(
                !text.contains('┆'),
                "width {width}: records, not a grid:\n{text}"
            );
            for line in text.lines() {
                assert!(
                    line.chars().count() <= usize::from(width),
                    "width {width}: {line:?}"
                );
            }
            for id in ["wait-until-timeout", "network-error-in-a-package-index"] {
                assert_eq!(text.matches(id).count(), 1, "{id:?} at {width}:\n{text}");
            }
            for whole in [
                "16 of 77 (21%)",
                "2026-07-15 21:18 UTC",
                "#2371",
                "  Introduced by    #2371",
            ] {
                assert_eq!(
                    text.matches(whole).count(),
                    2,
                    "{whole:?} at {width}:\n{text}"
                );
            }
            // Every column of every row is there, under its header.
            for header in &table.headers {
                assert_eq!(text.matches(&format!("  {header} ")).count(), 2, "{header}");
            }
        }
    }

    #[test]
    fn a_signature_id_is_never_broken_mid_word_in_a_narrow_table() {
        let id = "wait-until-timeout-in-graph-lifetime-tests";
        let row = |n: &str| {
            vec![
                vec![Span::Text(n.into())],
                vec![
                    Span::Code(id.into()),
                    Span::Text(
                        " _wait_until timed out: condition not satisfied within the timeout".into(),
                    ),
                ],
                vec![Span::Text("16 of 77 runs (21%) since #2371 merged".into())],
                vec![Span::Text("python=3.14t only, on every platform".into())],
            ]
        };
        let table = Table {
            headers: vec!["#", "Signature", "Runs hit", "Where"],
            numeric: vec![true, false, false, false],
            rows: vec![row("1"), row("2")],
        };
        for width in [50, 60, 80] {
            let options = RenderOptions {
                color: false,
                width: Some(width),
            };
            let mut out = Vec::new();
            write_block(&Block::Table(table.clone()), &options, &mut out).unwrap();
            let text = String::from_utf8(out).unwrap();
            // The table fits its width whatever it holds (tests/it/pictures.rs holds the report
            // to it on a terminal).
            assert!(
                widest_line(&text) <= usize::from(width),
                "width {width}:\n{text}"
            );
            // Where the grid cannot hold the 42-character id beside three other columns, the
            // rows become records: the id is whole at every width.
            {
                assert_eq!(text.matches(id).count(), 2, "width {width}:\n{text}");
            }
        }
    }

    #[test]
    fn a_url_that_fits_the_width_goes_whole_on_a_line_of_its_own() {
        let url = "https://github.com/o/r/job/1";
        let lines = wrap(
            &format!("job {url}"),
            Some(30),
            "  Example  ",
            "           ",
        );
        assert_eq!(lines, vec!["  Example  job".to_string(), url.to_string()]);
        // First after a label: the label keeps its line.
        let lines = wrap(url, Some(30), "  Example  ", "           ");
        assert_eq!(lines, vec!["  Example  ".to_string(), url.to_string()]);
    }

    #[test]
    fn a_table_that_fits_stays_a_grid() {
        let table = ranking();
        for width in [None, Some(250)] {
            let text = render_at(&table, width);
            assert!(text.contains('┆'), "{width:?}:\n{text}");
            assert_eq!(text.matches("wait-until-timeout").count(), 1);
        }
        // A narrow table in a narrow terminal is a grid too.
        let narrow = Table {
            headers: vec!["Jobs", "Job name"],
            numeric: vec![true, false],
            rows: vec![vec![
                vec![Span::Text("3".into())],
                vec![Span::Text("Test linux-64 / py3.14t".into())],
            ]],
        };
        assert!(render_at(&narrow, Some(40)).contains('┆'));
    }

    #[test]
    fn colour_takes_no_room_when_a_line_is_measured() {
        assert_eq!(widest_line("\u{1b}[1mab\u{1b}[0m\ncde"), 3);
        assert_eq!(widest_line("┌──┐"), 4);
    }

    #[test]
    fn a_url_is_never_split_inside_a_cell() {
        let url = "https://github.com/NVIDIA/cuda-python/actions/runs/29647957539/job/40314611534";
        let row = |n: &str| {
            vec![
                vec![Span::Text(format!("2026-07-15 21:3{n} UTC"))],
                vec![Span::Text(
                    "Test linux-64 / Python 3.14t, CUDA 12.9.1 (local)".into(),
                )],
                vec![Span::Url {
                    text: "job".into(),
                    url: Some(url.into()),
                }],
            ]
        };
        let table = Table {
            headers: vec!["Date", "Job", "Job log"],
            numeric: vec![false, false, false],
            rows: vec![row("0"), row("1")],
        };
        // Every width the 79-character URL fits on a line (a narrower terminal must cut it).
        for width in [90, 100, 120, 140, 200] {
            let text = render_at(&table, Some(width));
            assert_eq!(text.matches(url).count(), 2, "width {width}:\n{text}");
            assert!(
                widest_line(&text) <= usize::from(width),
                "width {width}:\n{text}"
            );
        }
    }
}
