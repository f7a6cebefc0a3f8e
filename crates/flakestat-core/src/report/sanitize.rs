//! Text from outside on its way to a terminal or a markdown file: escape sequences, control
//! characters and bidi overrides removed. `terminal` is the one sanitizer for every string that
//! reaches a terminal (reports, `classify`, `signatures check`, error messages); `one_line`
//! also folds it onto one line for cells and sentences.

/// One line of plain text: control characters dropped, whitespace runs (newlines included)
/// collapsed into one space.
pub fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    for c in strip_ansi(s).chars() {
        if c.is_whitespace() {
            space = true;
            continue;
        }
        if c.is_control() || is_invisible(c) {
            continue;
        }
        if space {
            out.push(' ');
        }
        space = false;
        out.push(c);
    }
    if space {
        out.push(' ');
    }
    out
}

/// Text as a terminal may show it: ANSI escape sequences (CSI, OSC, DCS, …) removed, every
/// other control character removed but the newline (a tab becomes a space), and bidi
/// overrides, isolates and zero-width characters removed, so that nothing from outside can move
/// the cursor, retitle the window, hide text or make it read in another order.
pub fn terminal(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in strip_ansi(s).chars() {
        match c {
            '\n' => out.push('\n'),
            '\t' => out.push(' '),
            c if c.is_control() || is_invisible(c) => {}
            c => out.push(c),
        }
    }
    out
}

/// `terminal`, on one line: newlines become spaces too (other spacing is kept, unlike
/// `one_line`), for a table cell or a line that names a file.
pub fn terminal_line(s: &str) -> String {
    terminal(s).replace('\n', " ")
}

/// Writes `value` as pretty JSON with the characters a terminal would act on escaped: serde
/// escapes control characters already; bidi overrides, isolates and zero-width characters are
/// written as `\uXXXX` too. The document parses to the same value, and shown on a terminal it
/// reads as it is.
pub fn write_json<T: serde::Serialize>(
    out: &mut dyn std::io::Write,
    value: &T,
) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(value)?;
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        if is_invisible(c) {
            escaped.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            escaped.push(c);
        }
    }
    escaped.push('\n');
    out.write_all(escaped.as_bytes())
}

/// Bidirectional overrides and similar characters that make text read differently than it is.
pub(crate) fn is_invisible(c: char) -> bool {
    matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
}

/// Removes ANSI escape sequences (CSI, OSC and two-byte escapes).
pub fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' && c != '\u{9b}' {
            out.push(c);
            continue;
        }
        match if c == '\u{9b}' {
            Some('[')
        } else {
            chars.next()
        } {
            Some('[') => {
                // CSI: parameters and intermediates, then one final byte in @..~.
                for d in chars.by_ref() {
                    if ('@'..='~').contains(&d) {
                        break;
                    }
                }
            }
            Some(']' | 'P' | 'X' | '^' | '_') => {
                // OSC/DCS/…: until BEL or ST (ESC \).
                while let Some(d) = chars.next() {
                    if d == '\u{7}' {
                        break;
                    }
                    if d == '\u{1b}' {
                        if chars.peek() == Some(&'\\') {
                            chars.next();
                        }
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_sequences_are_removed() {
        assert_eq!(strip_ansi("\u{1b}[31mred\u{1b}[0m"), "red");
        assert_eq!(
            strip_ansi("\u{1b}]8;;http://x\u{7}link\u{1b}]8;;\u{7}"),
            "link"
        );
        assert_eq!(strip_ansi("a\u{1b}]0;title\u{1b}\\b"), "ab");
    }

    #[test]
    fn terminal_text_keeps_newlines_and_drops_the_rest() {
        assert_eq!(
            terminal("a\u{1b}[2Jb\tc\r\n\u{7}d\u{202e}e\u{2066}f\u{9b}31mg\u{7f}"),
            "ab c\ndefg"
        );
        assert_eq!(terminal("fine"), "fine");
    }

    #[test]
    fn json_escapes_bidi_and_parses_to_the_same_value() {
        let value = serde_json::json!({"name": "a\u{202e}b\u{2066}c\u{1b}"});
        let mut out = Vec::new();
        write_json(&mut out, &value).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("a\\u202eb\\u2066c\\u001b"), "{text}");
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&text).unwrap(),
            value
        );
    }

    #[test]
    fn one_line_drops_controls_and_collapses_space() {
        assert_eq!(one_line("  a\r\n\tb\u{7}c\u{202e}d  "), " a bcd ");
    }
}
