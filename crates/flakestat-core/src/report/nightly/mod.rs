//! Pure renderers of `analysis::nightly::NightlyData`: the terminal table, markdown (short enough
//! for one GitHub comment) and JSON (`"kind": "nightly"`, schema 1). The text formats share one
//! layout (`layout.rs`) built from the report's own blocks, so the escaping of `markdown.rs` and
//! `table.rs` applies unchanged; nothing here reads a clock, the environment or the terminal.

mod json;
mod layout;

use std::io::{self, Write};

use super::{Format, RenderOptions};
use crate::analysis::nightly::NightlyData;
use crate::model::Repo;

pub use json::{KIND, wire};

/// GitHub refuses a comment body longer than 65,536 characters. Bytes are never fewer than
/// characters, so a body within this many bytes fits, with room to spare.
pub const MAX_COMMENT_BYTES: usize = 60_000;

/// The hidden first line of the nightly comment: how the next run finds it to update it.
pub fn marker(repo: &Repo) -> String {
    format!("<!-- flakestat:nightly {repo} -->")
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

fn markdown(data: &NightlyData, limit: Option<usize>) -> String {
    let mut out = Vec::new();
    super::markdown::render(&layout::document(data, limit), &mut out)
        .expect("writing to memory cannot fail");
    String::from_utf8(out).expect("the markdown renderer writes UTF-8")
}

/// The whole report when it fits; else the most rows per section that fit.
fn fitted_markdown(data: &NightlyData, max_bytes: usize) -> String {
    let whole = markdown(data, None);
    if whole.len() <= max_bytes {
        return whole;
    }
    // Lengths grow with the limit: binary search the largest that fits.
    let (mut lo, mut hi) = (0usize, layout::longest_section(data));
    let mut best = markdown(data, Some(0));
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        let text = markdown(data, Some(mid));
        if text.len() <= max_bytes {
            lo = mid;
            best = text;
        } else {
            hi = mid - 1;
        }
    }
    best
}
