//! Pure renderers of `analysis::ReportData`: table, markdown, json. No clock, environment or
//! terminal reads: every decision arrives in `RenderOptions`.

use std::io::{self, Write};

use crate::analysis::ReportData;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    Markdown,
    Json,
}

/// Decisions made at the edge (the `cli` layer) and passed down.
#[derive(Debug, Clone, Default)]
pub struct RenderOptions {
    pub color: bool,
}

/// Renders `data` in `format` to `out`. (First version: JSON only; the reports work adds the rest.)
pub fn render(
    data: &ReportData,
    _format: Format,
    _options: &RenderOptions,
    out: &mut dyn Write,
) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, data)?;
    writeln!(out)
}
