//! Pure renderers of a [`NightlyView`]: one repository's `analysis::nightly::NightlyData`, or
//! several repositories' `NightlyMany`, as the terminal table, markdown (short enough for one
//! GitHub comment), HTML and JSON (`"kind": "nightly"`, schema 1). The same shape as the report:
//! one entry point per output ([`render`], [`render_comment`], [`marker`], `layout::document`,
//! `json::to_wire`), each taking the view. The text formats share one layout (`layout.rs`) built
//! from the report's own blocks, so the escaping of `markdown.rs` and `table.rs` applies
//! unchanged; nothing here reads a clock, the environment or the terminal.

mod json;
mod layout;

use std::io::{self, Write};

use super::{Format, RenderOptions};
use crate::analysis::Completeness;
use crate::analysis::nightly::{AlertOn, NightlyData, NightlyMany};

pub use json::{KIND, wire};

/// GitHub refuses a comment body longer than 65,536 characters. Bytes are never fewer than
/// characters, so a body within this many bytes fits, with room to spare.
pub const MAX_COMMENT_BYTES: usize = 60_000;

/// What a nightly report shows: one repository's night, or several repositories' (a night
/// over one repository is a scope of one, and keeps this single-repository shape). The same
/// shape as the report's [`View`](super::View).
#[derive(Debug, Clone, Copy)]
pub enum NightlyView<'a> {
    Repo(&'a NightlyData),
    Org(&'a NightlyMany),
}

impl<'a> From<&'a NightlyData> for NightlyView<'a> {
    fn from(data: &'a NightlyData) -> NightlyView<'a> {
        NightlyView::Repo(data)
    }
}

impl<'a> From<&'a NightlyMany> for NightlyView<'a> {
    fn from(many: &'a NightlyMany) -> NightlyView<'a> {
        NightlyView::Org(many)
    }
}

impl<'a> NightlyView<'a> {
    /// The view's repositories, each with its own night: a list of one for `Repo`.
    pub fn repos(self) -> &'a [NightlyData] {
        match self {
            NightlyView::Repo(data) => std::slice::from_ref(data),
            NightlyView::Org(many) => &many.repos,
        }
    }

    /// What the store does not hold yet, over the view's repositories.
    pub fn completeness(self) -> Completeness {
        match self {
            NightlyView::Repo(data) => data.completeness.clone(),
            NightlyView::Org(many) => many.completeness(),
        }
    }

    /// Whether any of the view's repositories holds a change of the kind asked about.
    pub fn alerts(self, on: AlertOn) -> bool {
        match self {
            NightlyView::Repo(data) => data.alerts(on),
            NightlyView::Org(many) => many.alerts(on),
        }
    }
}

/// The hidden first line of the nightly comment: how the next run finds it to update it. One
/// repository's names it; several name the owner for `--org` (whichever of its repositories
/// were active), else the repositories by name.
pub fn marker<'a>(view: impl Into<NightlyView<'a>>) -> String {
    let view = view.into();
    if let NightlyView::Org(NightlyMany {
        owner: Some(owner), ..
    }) = view
    {
        return format!("<!-- flakestat:nightly org {owner} -->");
    }
    let names: Vec<String> = view
        .repos()
        .iter()
        .filter_map(|d| d.repo.as_ref().map(|r| r.to_string()))
        .collect();
    format!("<!-- flakestat:nightly {} -->", names.join(" "))
}

/// Renders `view` (a `&NightlyData`, a `&NightlyMany`, or a [`NightlyView`]) in `format`.
/// Markdown is trimmed to fit one comment ([`render_comment`]'s rule, without the marker);
/// table, HTML and JSON are whole. JSON over several repositories holds each one's own
/// document.
pub fn render<'a>(
    view: impl Into<NightlyView<'a>>,
    format: Format,
    options: &RenderOptions,
    out: &mut dyn Write,
) -> io::Result<()> {
    let view = view.into();
    match format {
        Format::Json => json::render(view, out),
        Format::Markdown => out.write_all(fitted_markdown(view, MAX_COMMENT_BYTES).as_bytes()),
        Format::Table => super::table::render(&layout::document(view, None), options, out),
        Format::Html => super::html::render(
            "Nightly CI failures (flakestat)",
            &layout::document(view, None),
            out,
        ),
    }
}

/// The comment body: the marker line, then the markdown report, trimmed to `max_bytes` by
/// showing fewer rows per section (each trimmed section ends with an "… and N more" line);
/// tables are never cut.
pub fn render_comment<'a>(
    view: impl Into<NightlyView<'a>>,
    marker: &str,
    max_bytes: usize,
) -> String {
    let head = format!("{marker}\n");
    let body = fitted_markdown(view.into(), max_bytes.saturating_sub(head.len()));
    head + &body
}

fn markdown_of(blocks: &[super::layout::Block]) -> String {
    let mut out = Vec::new();
    super::markdown::render(blocks, &mut out).expect("writing to memory cannot fail");
    String::from_utf8(out).expect("the markdown renderer writes UTF-8")
}

/// The whole report when it fits; else the most rows per section that fit.
fn fitted_markdown(view: NightlyView<'_>, max_bytes: usize) -> String {
    fitted(max_bytes, layout::longest_section(view), |limit| {
        markdown_of(&layout::document(view, limit))
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
