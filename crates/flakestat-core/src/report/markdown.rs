//! GitHub-flavoured markdown that pastes straight into an issue. Everything that came from
//! outside (log lines, job names, PR titles, URLs) is escaped so that it can neither break a table
//! nor inject HTML: text gets backslash escapes and entity-free output for `<`, `>`, `&`; log
//! lines become code spans with a fence longer than any backtick run inside; pipes are escaped
//! in tables; newlines and control characters never reach the output.

use std::io::{self, Write};

use super::layout::{Block, Chart, Line, MAX_LOG_CHARS, Span, Table};
use super::pictures;
use super::sanitize::{is_invisible, one_line};

pub fn render(blocks: &[Block], out: &mut dyn Write) -> io::Result<()> {
    let mut first = true;
    // Markdown draws no heat map: the matrix tables say the same, strongest values in bold.
    for block in blocks
        .iter()
        .filter(|b| !matches!(b, Block::Chart(Chart::HeatMap(_))))
    {
        if !first {
            writeln!(out)?;
        }
        first = false;
        write_block(block, out)?;
    }
    Ok(())
}

fn write_block(block: &Block, out: &mut dyn Write) -> io::Result<()> {
    match block {
        Block::Heading(level, line) => {
            writeln!(
                out,
                "{} {}",
                "#".repeat(usize::from(*level)),
                inline(line, false)
            )
        }
        Block::Paragraph(line) => writeln!(out, "{}", inline(line, false)),
        Block::Bullets(items) => {
            for item in items {
                writeln!(out, "- {}", inline(item, false))?;
            }
            Ok(())
        }
        Block::Table(table) => write_table(table, out),
        Block::Details { summary, blocks } => {
            writeln!(out, "<details><summary>{}</summary>", html_text(summary))?;
            writeln!(out)?;
            render(blocks, out)?;
            writeln!(out)?;
            writeln!(out, "</details>")
        }
        Block::Chart(Chart::Timeline(t)) => {
            // Mermaid for GitHub, then the same figures as a table for readers without it.
            writeln!(
                out,
                "<details><summary>Timeline: runs and runs hit per day</summary>"
            )?;
            writeln!(out)?;
            writeln!(out, "```mermaid\n{}```", pictures::mermaid(t))?;
            writeln!(out)?;
            write_table(&timeline_table(t), out)?;
            writeln!(out)?;
            writeln!(out, "</details>")
        }
        // Markdown keeps the matrix tables (strongest values in bold) instead.
        Block::Chart(Chart::HeatMap(_)) => Ok(()),
    }
}

/// The timeline's days with runs or a marker.
fn timeline_table(t: &crate::analysis::timeline::Timeline) -> Table {
    use crate::analysis::timeline::MarkerKind;
    let rows = t
        .days
        .iter()
        .filter_map(|d| {
            let marks: Vec<String> = t
                .markers
                .iter()
                .filter(|m| m.at.date_naive() == d.day)
                .map(|m| match m.kind {
                    MarkerKind::Merge => format!("{} merged (placed)", m.label),
                    MarkerKind::Suspect => format!("{} merged (suspect)", m.label),
                    MarkerKind::FirstHit => format!("first hit ({})", m.label),
                })
                .collect();
            let impact = t.impact_start.is_some_and(|s| d.day >= s.date_naive());
            (d.runs > 0 || !marks.is_empty()).then(|| {
                vec![
                    vec![Span::Text(d.day.format("%Y-%m-%d").to_string())],
                    vec![Span::Text(d.runs.to_string())],
                    vec![Span::Text(d.runs_hit.to_string())],
                    vec![Span::Text(if impact { "yes" } else { "" }.to_string())],
                    vec![Span::Text(marks.join("; "))],
                ]
            })
        })
        .collect();
    Table {
        headers: vec!["Day", "Runs", "Runs hit", "Impact window", "Marks"],
        numeric: vec![false, true, true, false, false],
        rows,
    }
}

fn write_table(table: &Table, out: &mut dyn Write) -> io::Result<()> {
    let header: Vec<String> = table.headers.iter().map(|h| text(h)).collect();
    writeln!(out, "| {} |", header.join(" | "))?;
    let rule: Vec<&str> = table
        .numeric
        .iter()
        .map(|&n| if n { "---:" } else { "---" })
        .collect();
    writeln!(out, "| {} |", rule.join(" | "))?;
    for row in &table.rows {
        let cells: Vec<String> = row
            .iter()
            .map(|cell| {
                let s = inline(cell, true);
                if s.is_empty() {
                    "\u{a0}".to_string()
                } else {
                    s
                }
            })
            .collect();
        writeln!(out, "| {} |", cells.join(" | "))?;
    }
    Ok(())
}

fn inline(line: &Line, in_table: bool) -> String {
    let mut s = String::new();
    for span in line {
        match span {
            Span::Text(t) => s.push_str(&text(t)),
            Span::Strong(t) => {
                let t = text(t);
                if !t.is_empty() {
                    s.push_str(&format!("**{t}**"));
                }
            }
            Span::Code(t) => {
                let c = code(t, in_table);
                // Two backtick runs side by side would make one longer run, and neither code
                // span would close.
                if s.ends_with('`') && c.starts_with('`') {
                    s.push(' ');
                }
                s.push_str(&c);
            }
            Span::Command(t) => {
                let c = command(t, in_table);
                if s.ends_with('`') && c.starts_with('`') {
                    s.push(' ');
                }
                s.push_str(&c);
            }
            Span::Spark(levels) => s.push_str(&pictures::sparkline(levels, true)),
            Span::Link { text: label, url } | Span::Url { text: label, url } => {
                let label_md = text(label);
                match url.as_deref().and_then(safe_url) {
                    Some(u) if !label_md.is_empty() => s.push_str(&format!("[{label_md}]({u})")),
                    _ => s.push_str(&label_md),
                }
            }
        }
    }
    s
}

/// Plain text, escaped for markdown: every character with a markdown or HTML meaning is
/// backslash-escaped, a leading list or heading marker and every mention are neutralised.
pub(super) fn text(s: &str) -> String {
    let chars: Vec<char> = one_line(s).chars().collect();
    let mut out = String::with_capacity(chars.len() + 8);
    let start = chars.iter().take_while(|c| **c == ' ').count();
    let digits = start
        + chars[start..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
    for (i, &c) in chars.iter().enumerate() {
        let escape = match c {
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '&' | '~' | '!' | '$' | '{' | '}'
            | '|' | '^' => true,
            // Only at the start of a line do these open a heading, a list or a rule.
            '#' | '-' | '+' | '=' => i == start,
            // `1.` or `1)` then a space starts an ordered list.
            '.' | ')' => i == digits && i > start && chars.get(i + 1).is_none_or(|n| *n == ' '),
            _ => false,
        };
        if escape {
            out.push('\\');
        }
        out.push(c);
        if is_mention_at(&chars, i) {
            out.push_str(MENTION_BREAK);
        }
    }
    out
}

/// Put right after an `@` that GitHub would read as a mention: a zero-width space, written as
/// an entity so the file shows it. The page still reads `@name`, and GitHub links (and pings)
/// no one: a mention needs a name character right after the `@`. Dependabot writes the same.
const MENTION_BREAK: &str = "&#8203;";

/// Whether `chars[i]` is an `@` GitHub would turn into a mention (`@user`, `@org/team`): a
/// letter or digit follows, and no word character precedes (`x@y` is an address, not a
/// mention). Errs on the side of breaking: any such `@` outside a code span is neutralised, and
/// so is one that ends the text, since the next span (`**@**` then `**a**`) may begin the name.
fn is_mention_at(chars: &[char], i: usize) -> bool {
    chars[i] == '@'
        && chars.get(i + 1).is_none_or(|c| c.is_ascii_alphanumeric())
        && (i == 0 || !is_word_char(chars[i - 1]))
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Neutralises the mentions of text going into our own HTML, the way `text` does.
fn break_mentions(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    for (i, &c) in chars.iter().enumerate() {
        out.push(c);
        if is_mention_at(&chars, i) {
            out.push_str(MENTION_BREAK);
        }
    }
    out
}

/// A code span holding `s` verbatim (cut to `MAX_LOG_CHARS`).
fn code(s: &str, in_table: bool) -> String {
    let mut s = one_line(s).trim().to_string();
    if s.chars().count() > MAX_LOG_CHARS {
        s = s.chars().take(MAX_LOG_CHARS).collect::<String>() + "…";
    }
    code_span(s, in_table)
}

/// A command to paste as a code span: whole, however long.
fn command(s: &str, in_table: bool) -> String {
    code_span(one_line(s).trim().to_string(), in_table)
}

/// `s` in a code span whose fence is longer than any backtick run inside.
fn code_span(mut s: String, in_table: bool) -> String {
    if s.is_empty() {
        return String::new();
    }
    if in_table {
        // A table row is split on pipes before code spans are parsed; `\|` is a pipe inside a
        // cell (GFM strips exactly that backslash, even after another backslash).
        s = s.replace('|', "\\|");
    }
    let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    if s.starts_with('`') || s.ends_with('`') || s.starts_with(' ') || s.ends_with(' ') {
        format!("{fence} {s} {fence}")
    } else {
        format!("{fence}{s}{fence}")
    }
}

/// An http(s) URL with the characters that could end a markdown link destination encoded.
fn safe_url(url: &str) -> Option<String> {
    let url = url.trim();
    if !(url.starts_with("https://") || url.starts_with("http://")) {
        return None;
    }
    let mut out = String::with_capacity(url.len());
    for c in url.chars() {
        match c {
            ' ' => out.push_str("%20"),
            '(' => out.push_str("%28"),
            ')' => out.push_str("%29"),
            '<' => out.push_str("%3C"),
            '>' => out.push_str("%3E"),
            '|' => out.push_str("%7C"),
            '"' => out.push_str("%22"),
            '`' => out.push_str("%60"),
            '\\' => out.push_str("%5C"),
            c if c.is_control() || c.is_whitespace() || is_invisible(c) => {}
            c => out.push(c),
        }
    }
    Some(out)
}

/// Text inside our own HTML (`<summary>`): entities for the HTML specials.
fn html_text(s: &str) -> String {
    break_mentions(
        &one_line(s)
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_spans_outlast_backticks() {
        assert_eq!(code("a ``b`` c", false), "```a ``b`` c```");
        assert_eq!(code("`x`", false), "`` `x` ``");
        assert_eq!(code("a|b", true), "`a\\|b`");
        assert_eq!(code("a|b", false), "`a|b`");
    }

    #[test]
    fn text_escapes_markup() {
        assert_eq!(text("- item"), "\\- item");
        assert_eq!(text("1. x"), "1\\. x");
        assert_eq!(text("<b>&"), "\\<b\\>\\&");
        assert_eq!(text("a\nb\r\tc"), "a b c");
        assert_eq!(text("3.14t"), "3.14t");
    }
}
