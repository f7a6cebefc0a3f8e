//! Pure renderers of `analysis::nightly::NightlyData`: the terminal table, markdown (short enough
//! for one GitHub comment) and JSON (`"kind": "nightly"`, schema 1). The text formats share one
//! layout (`layout.rs`) built from the report's own blocks, so the escaping of `markdown.rs` and
//! `table.rs` applies unchanged; nothing here reads a clock, the environment or the terminal.

mod json;
mod layout;

use std::io::{self, Write};

use super::{Format, RenderOptions};
use crate::analysis::nightly::{NightlyData, NightlyMany};
use crate::model::Repo;

pub use json::{KIND, wire};

/// GitHub refuses a comment body longer than 65,536 characters. Bytes are never fewer than
/// characters, so a body within this many bytes fits, with room to spare.
pub const MAX_COMMENT_BYTES: usize = 60_000;

/// The hidden first line of the nightly comment: how the next run finds it to update it.
pub fn marker(repo: &Repo) -> String {
    format!("<!-- flakestat:nightly {repo} -->")
}

/// The hidden first line of the nightly comment over several repositories: the owner for
/// `--org` (whichever of its repositories were active), else the repositories by name.
pub fn marker_many(many: &NightlyMany) -> String {
    match &many.owner {
        Some(owner) => format!("<!-- flakestat:nightly org {owner} -->"),
        None => {
            let names: Vec<String> = many
                .repos
                .iter()
                .filter_map(|d| d.repo.as_ref().map(|r| r.to_string()))
                .collect();
            format!("<!-- flakestat:nightly {} -->", names.join(" "))
        }
    }
}

/// [`render`] for several repositories: JSON holds each repository's own document.
pub fn render_many(
    many: &NightlyMany,
    format: Format,
    options: &RenderOptions,
    out: &mut dyn Write,
) -> io::Result<()> {
    match format {
        Format::Json => json::render_many(many, out),
        Format::Markdown => {
            let text = fitted(MAX_COMMENT_BYTES, longest_many(many), |limit| {
                markdown_of(&layout::document_many(many, limit))
            });
            out.write_all(text.as_bytes())
        }
        Format::Table => super::table::render(&layout::document_many(many, None), options, out),
        Format::Html => super::html::render(
            "Nightly CI failures (flakestat)",
            &layout::document_many(many, None),
            out,
        ),
    }
}

/// [`render_comment`] for several repositories.
pub fn render_many_comment(many: &NightlyMany, marker: &str, max_bytes: usize) -> String {
    let head = format!("{marker}\n");
    let body = fitted(
        max_bytes.saturating_sub(head.len()),
        longest_many(many),
        |limit| markdown_of(&layout::document_many(many, limit)),
    );
    head + &body
}

fn longest_many(many: &NightlyMany) -> usize {
    many.repos
        .iter()
        .map(layout::longest_section)
        .max()
        .unwrap_or(0)
}

/// Renders `data` in `format`. Markdown is trimmed to fit one comment ([`render_comment`]'s
/// rule, without the marker); table and JSON are whole.
pub fn render(
    data: &NightlyData,
    format: Format,
    options: &RenderOptions,
    out: &mut dyn Write,
) -> io::Result<()> {
    match format {
        Format::Json => json::render(data, out),
        Format::Markdown => out.write_all(fitted_markdown(data, MAX_COMMENT_BYTES).as_bytes()),
        Format::Table => super::table::render(&layout::document(data, None), options, out),
        Format::Html => super::html::render(
            "Nightly CI failures (flakestat)",
            &layout::document(data, None),
            out,
        ),
    }
}

/// The comment body: the marker line, then the markdown report, trimmed to `max_bytes` by
/// showing fewer rows per section (each trimmed section ends with an "… and N more" line);
/// tables are never cut.
pub fn render_comment(data: &NightlyData, marker: &str, max_bytes: usize) -> String {
    let head = format!("{marker}\n");
    let body = fitted_markdown(data, max_bytes.saturating_sub(head.len()));
    head + &body
}

fn markdown_of(blocks: &[super::layout::Block]) -> String {
    let mut out = Vec::new();
    super::markdown::render(blocks, &mut out).expect("writing to memory cannot fail");
    String::from_utf8(out).expect("the markdown renderer writes UTF-8")
}

/// The whole report when it fits; else the most rows per section that fit.
fn fitted_markdown(data: &NightlyData, max_bytes: usize) -> String {
    fitted(max_bytes, layout::longest_section(data), |limit| {
        markdown_of(&layout::document(data, limit))
    })
}

/// `markdown(None)` when it fits in `max_bytes`; else the largest row limit (up to `longest`)
/// whose text fits.
fn fitted(max_bytes: usize, longest: usize, markdown: impl Fn(Option<usize>) -> String) -> String {
    let whole = markdown(None);
    if whole.len() <= max_bytes {
        return whole;
    }
    // Lengths grow with the limit: binary search the largest that fits.
    let (mut lo, mut hi) = (0usize, longest);
    let mut best = markdown(Some(0));
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        let text = markdown(Some(mid));
        if text.len() <= max_bytes {
            lo = mid;
            best = text;
        } else {
            hi = mid - 1;
        }
    }
    best
}
