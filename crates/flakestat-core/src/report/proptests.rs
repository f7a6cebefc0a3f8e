//! Property tests of the two text renderers (issue #10): whatever text arrives from outside —
//! random bytes, escape sequences, bidi overrides, mention forms, table and markdown syntax — the
//! markdown has no live @mention and no raw control character, every table parses as a table
//! with its rows and columns, and the terminal output carries no escape sequence or control
//! character of the input.

use proptest::prelude::*;
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

use super::RenderOptions;
use super::layout::{Block, Span, Table};

/// Pieces hostile text is made of.
fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("@user".to_string()),
        Just("@org/team".to_string()),
        Just("(@x)".to_string()),
        Just("x@y".to_string()),
        Just("_@z".to_string()),
        Just("@@a".to_string()),
        Just("\\@b".to_string()),
        Just("`@c`".to_string()),
        Just("|".to_string()),
        Just("\\|".to_string()),
        Just("| --- |".to_string()),
        Just("`".to_string()),
        Just("```".to_string()),
        Just("<b>".to_string()),
        Just("</details>".to_string()),
        Just("&#64;".to_string()),
        Just("[a](b)".to_string()),
        Just("\n".to_string()),
        Just("\r\n".to_string()),
        Just("\u{1b}[31m".to_string()),
        Just("\u{1b}]8;;http://x\u{7}".to_string()),
        Just("\u{1b}]0;title\u{1b}\\".to_string()),
        Just("\u{9b}2J".to_string()),
        Just("\u{202e}".to_string()),
        Just("\u{2066}".to_string()),
        Just("\u{200b}".to_string()),
        Just("- ".to_string()),
        Just("1. ".to_string()),
        Just("# ".to_string()),
        "[a-z0-9 ]{0,6}",
        proptest::collection::vec(any::<u8>(), 0..12)
            .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
        any::<char>().prop_map(String::from),
    ]
}

fn hostile() -> impl Strategy<Value = String> {
    proptest::collection::vec(piece(), 0..8).prop_map(|p| p.concat())
}

fn span() -> impl Strategy<Value = Span> {
    prop_oneof![
        hostile().prop_map(Span::Text),
        hostile().prop_map(Span::Strong),
        hostile().prop_map(Span::Code),
        (hostile(), hostile()).prop_map(|(text, url)| Span::Link {
            text,
            url: Some(format!("https://example.com/{url}")),
        }),
    ]
}

fn line() -> impl Strategy<Value = Vec<Span>> {
    proptest::collection::vec(span(), 0..4)
}

fn document() -> impl Strategy<Value = (Vec<Block>, Vec<(usize, usize)>)> {
    let table = (1usize..4, 0usize..4).prop_flat_map(|(cols, rows)| {
        proptest::collection::vec(proptest::collection::vec(line(), cols), rows).prop_map(
            move |rows| Table {
                headers: ["a", "b", "c"][..cols].to_vec(),
                numeric: vec![false; cols],
                rows,
            },
        )
    });
    (line(), line(), table, hostile()).prop_map(|(para, item, table, summary)| {
        let shape = vec![(table.rows.len(), table.headers.len())];
        let blocks = vec![
            Block::Paragraph(para),
            Block::Bullets(vec![item]),
            Block::Details {
                summary,
                blocks: vec![Block::Table(table)],
            },
        ];
        (blocks, shape)
    })
}

/// GitHub's rule: `@`, then a name character, with no word character before it.
fn live_mention(text: &str) -> Option<String> {
    let chars: Vec<char> = text.chars().collect();
    (0..chars.len()).find_map(|i| {
        let before = i == 0 || !(chars[i - 1].is_ascii_alphanumeric() || chars[i - 1] == '_');
        let after = chars.get(i + 1).is_some_and(|c| c.is_ascii_alphanumeric());
        (chars[i] == '@' && before && after).then(|| chars[i..].iter().take(12).collect())
    })
}

fn markdown(blocks: &[Block]) -> String {
    let mut out = Vec::new();
    super::markdown::render(blocks, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// Control characters other than the newline, bidi overrides and isolates.
fn is_forbidden(c: char) -> bool {
    (c.is_control() && c != '\n') || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn markdown_has_no_live_mention_no_control_and_whole_tables((blocks, shapes) in document()) {
        let md = markdown(&blocks);
        prop_assert!(!md.chars().any(is_forbidden), "control in {md:?}");
        let mut text = String::new();
        let mut in_link = 0usize;
        let mut tables = Vec::new();
        let (mut rows, mut cells, mut widths) = (0usize, 0usize, Vec::new());
        let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
        for event in Parser::new_ext(&md, options) {
            match event {
                Event::Text(t) if in_link == 0 => text.push_str(&t),
                Event::Html(h) | Event::InlineHtml(h) => {
                    let h = h.replace("&#8203;", "\u{200b}").replace("&amp;", "&");
                    prop_assert!(live_mention(&h).is_none(), "mention in HTML {h:?} of {md:?}");
                }
                Event::Start(Tag::Link { .. }) => in_link += 1,
                Event::End(TagEnd::Link) => in_link -= 1,
                Event::Start(Tag::Table(_)) => { rows = 0; widths.clear(); }
                Event::End(TagEnd::Table) => tables.push((rows, widths.clone())),
                Event::Start(Tag::TableRow) => { rows += 1; cells = 0; }
                Event::End(TagEnd::TableRow) | Event::End(TagEnd::TableHead) => widths.push(cells),
                Event::Start(Tag::TableCell) => cells += 1,
                Event::Start(Tag::Emphasis | Tag::Strong)
                | Event::End(TagEnd::Emphasis | TagEnd::Strong) => {}
                _ => {
                    prop_assert!(live_mention(&text).is_none(), "mention {text:?} in {md:?}");
                    text.clear();
                }
            }
        }
        prop_assert!(live_mention(&text).is_none(), "mention {text:?} in {md:?}");
        prop_assert_eq!(tables.len(), shapes.len(), "tables in {}", md);
        for ((rows, widths), (want_rows, want_cols)) in tables.iter().zip(&shapes) {
            prop_assert_eq!(*rows, *want_rows, "rows of {}", md);
            prop_assert!(widths.iter().all(|w| w == want_cols), "cells {:?} in {}", widths, md);
        }
    }

    #[test]
    fn terminal_output_has_no_escape_or_control((blocks, _) in document()) {
        for color in [false, true] {
            let mut out = Vec::new();
            let options = RenderOptions { color, width: Some(80) };
            super::table::render(&blocks, &options, &mut out).unwrap();
            let text = String::from_utf8(out).unwrap();
            // Our own bold and reset only, and only with colour.
            let ours = text.replace("\u{1b}[1m", "").replace("\u{1b}[0m", "")
                .replace("\u{1b}[22m", "");
            prop_assert!(color || !text.contains('\u{1b}'), "escape in {text:?}");
            prop_assert!(!ours.chars().any(is_forbidden), "control in {ours:?}");
        }
    }
}
