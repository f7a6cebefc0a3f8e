//! Pure renderers of a [`View`]: one repository's `analysis::ReportData`, or several
//! repositories' `analysis::org::OrgReport`, as table, markdown, JSON or HTML. No clock,
//! environment or terminal reads: every decision arrives in `RenderOptions`.
//!
//! One entry point, [`render`], takes the view and the format. The text formats share one
//! layout for every view (`layout/`: `layout::document(view)` returns headings, sentences and
//! tables of cells, its sections written once over the view's repositories, one or several),
//! so the terminal, the GitHub issue and the page say the same thing; each format's file only
//! decides how a cell is written and escaped. JSON has its own versioned wire types (`json.rs`,
//! `json::to_wire(view)`).

pub mod hidden;
pub mod hosts;
mod html;
pub mod incidents;
mod json;
mod layout;
mod markdown;
pub mod nightly;
mod pictures;
pub mod pr;
#[cfg(test)]
mod proptests;
pub mod sanitize;
mod table;
pub mod tests;

use std::io::{self, Write};

use crate::analysis::ReportData;
use crate::analysis::org::OrgReport;

pub use json::wire;
pub use json::{SCHEMA_VERSION, to_wire};
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

/// What a report shows: one repository's figures, or several repositories' combined (a
/// command over one repository is a scope of one, and keeps this single-repository shape).
#[derive(Debug, Clone, Copy)]
pub enum View<'a> {
    Repo(&'a ReportData),
    Org(&'a OrgReport),
}

impl<'a> From<&'a ReportData> for View<'a> {
    fn from(data: &'a ReportData) -> View<'a> {
        View::Repo(data)
    }
}

impl<'a> From<&'a OrgReport> for View<'a> {
    fn from(org: &'a OrgReport) -> View<'a> {
        View::Org(org)
    }
}

/// Renders `view` (a `&ReportData`, a `&OrgReport`, or a [`View`]) in `format` to `out`.
pub fn render<'a>(
    view: impl Into<View<'a>>,
    format: Format,
    options: &RenderOptions,
    out: &mut dyn Write,
) -> io::Result<()> {
    let view = view.into();
    match format {
        Format::Json => json::render(view, out),
        Format::Markdown => markdown::render(&layout::document(view), out),
        Format::Table => table::render(&layout::document(view), options, out),
        Format::Html => html::render(&layout::title(view), &layout::document(view), out),
    }
}

/// Text from outside (log lines, job names, test ids) as one line of markdown, escaped the way
/// every report's markdown escapes it (mentions neutralised too): for markdown that is not a
/// report layout, `classify --format markdown`'s table cells.
pub fn markdown_text(s: &str) -> String {
    markdown::text(s)
}
