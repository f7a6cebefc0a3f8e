//! Pure renderers of `analysis::ReportData`: table, markdown, json.
