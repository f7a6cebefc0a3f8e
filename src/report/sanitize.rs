//! Log text on its way to a terminal or a markdown file: escape sequences and control characters
//! removed, one line.

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
    fn one_line_drops_controls_and_collapses_space() {
        assert_eq!(one_line("  a\r\n\tb\u{7}c\u{202e}d  "), " a bcd ");
    }
}
