//! Pure renderers of `analysis::ReportData`: table, markdown, json. No clock, environment or
//! terminal reads: every decision arrives in `RenderOptions`.
//!
//! The two text formats share one layout (`layout.rs`: headings, sentences, tables of cells), so
//! the terminal and the GitHub issue say the same thing; each file only decides how a cell is
//! written and escaped. JSON has its own versioned wire types (`json.rs`).

mod html;
mod json;
mod layout;
mod markdown;
pub mod nightly;
mod pictures;
#[cfg(test)]
mod proptests;
pub mod sanitize;
mod table;
pub mod tests;

use std::io::{self, Write};

use crate::analysis::ReportData;

pub use json::wire;
pub use json::{SCHEMA_VERSION, org_to_wire, to_wire};
pub use table::grid;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    Markdown,
    Json,
    /// One self-contained page (inline CSS and SVG, strict CSP).
    Html,
}

/// Decisions made at the edge (the `cli` layer) and passed down.
#[derive(Debug, Clone, Default)]
pub struct RenderOptions {
    /// ANSI colour in `table` output.
    pub color: bool,
    /// The terminal's width in columns, for `table`; `None` leaves tables at their natural
    /// width.
    pub width: Option<u16>,
}

/// Renders `data` in `format` to `out`.
pub fn render(
    data: &ReportData,
    format: Format,
    options: &RenderOptions,
    out: &mut dyn Write,
) -> io::Result<()> {
    match format {
        Format::Json => json::render(data, out),
        Format::Markdown => markdown::render(&layout::document(data), out),
        Format::Table => table::render(&layout::document(data), options, out),
        Format::Html => html::render(&html_title(data), &layout::document(data), out),
    }
}

/// Renders a report over several repositories (`analysis::org::combine`) in `format`.
pub fn render_org(
    org: &crate::analysis::org::OrgReport,
    format: Format,
    options: &RenderOptions,
    out: &mut dyn Write,
) -> io::Result<()> {
    match format {
        Format::Json => json::render_org(org, out),
        Format::Markdown => markdown::render(&layout::org::document(org), out),
        Format::Table => table::render(&layout::org::document(org), options, out),
        Format::Html => {
            let what = match &org.owner {
                Some(owner) => format!("{} repositories of {owner}", org.repos.len()),
                None => format!("{} repositories", org.repos.len()),
            };
            let title = match &org.combined.focus {
                Some(id) => format!("{id} in {what} (flakestat)"),
                None => format!("CI failures in {what} (flakestat)"),
            };
            html::render(&title, &layout::org::document(org), out)
        }
    }
}

/// Text from outside (log lines, job names, test ids) as one line of markdown, escaped the way
/// every report's markdown escapes it (mentions neutralised too): for markdown that is not a
/// report layout, `classify --format markdown`'s table cells.
pub fn markdown_text(s: &str) -> String {
    markdown::text(s)
}

fn html_title(data: &ReportData) -> String {
    let repo = data
        .repo
        .as_ref()
        .map_or_else(|| "CI failures".to_string(), |r| r.to_string());
    match &data.focus {
        Some(id) => format!("{id} in {repo} (flakestat)"),
        None => format!("CI failures in {repo} (flakestat)"),
    }
}
