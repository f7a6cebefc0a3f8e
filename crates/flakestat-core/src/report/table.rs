//! The terminal rendering: headings, sentences and comfy-table tables (this is the only file that
//! names comfy-table). Log text is stripped of escape sequences and control characters before it
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
        Block::Paragraph(line) => {
            for l in wrap(&plain(line, options.color), options.width, "", "") {
                writeln!(out, "{l}")?;
            }
            Ok(())
        }
        Block::Bullets(items) => {
            for item in items {
                for l in wrap(&plain(item, options.color), options.width, "  • ", "    ") {
                    writeln!(out, "{l}")?;
                }
            }
            Ok(())
        }
        Block::Table(table) => writeln!(out, "{}", comfy(table, options)),
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

/// Prose broken at spaces to fit `width` (a word longer than the width is cut), `first` before
/// the first line and `rest` before the others; one line when the width is not known.
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
    lines.push(line);
    lines
}

fn unicode_width(s: &str) -> usize {
    s.chars().count()
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

/// The Signature columns and the width that holds their longest id whole, counting the cell's
/// padding (one space each side).
fn id_columns(table: &Table) -> Vec<(usize, u16)> {
    let mut bounds = Vec::new();
    for i in 0..table.headers.len() {
        let longest_id = table
            .rows
            .iter()
            .filter_map(|r| r.get(i)?.first())
            .filter_map(|span| match span {
                Span::Code(id) if table.headers[i] == "Signature" => {
                    Some(one_line(id).chars().count())
                }
                _ => None,
            })
            .max();
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

/// The table laid out by comfy-table, each `(column, width)` of `id_bounds` at least that wide.
fn arranged(table: &Table, options: &RenderOptions, id_bounds: &[(usize, u16)]) -> String {
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
    t.set_header(table.headers.iter().map(|h| {
        let c = Cell::new(*h);
        if options.color {
            c.add_attribute(Attribute::Bold)
        } else {
            c
        }
    }));
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
            let text = comfy(&table, &options);
            // The table fits its width whatever it holds (tests/pictures.rs holds the report
            // to it on a terminal).
            assert!(
                widest_line(&text) <= usize::from(width),
                "width {width}:\n{text}"
            );
            // 50 columns cannot hold the 42-character id beside three other columns (58 at
            // the least): there fitting comes first. Wherever it fits, the id is whole.
            if width >= 58 {
                assert_eq!(text.matches(id).count(), 2, "width {width}:\n{text}");
            }
        }
    }

    #[test]
    fn colour_takes_no_room_when_a_line_is_measured() {
        assert_eq!(widest_line("\u{1b}[1mab\u{1b}[0m\ncde"), 3);
        assert_eq!(widest_line("┌──┐"), 4);
    }
}
