//! flakestat: which of our red CI runs are flakes, how often each hits, where in the job matrix,
//! and since which merge.
//!
//! Layers, top to bottom (arrows point down only; see ARCHITECTURE.md):
//! `cli` → `fetch` → `store`; `cli` → `analysis` → `signatures`, `matrix`; `report` renders
//! `analysis::ReportData`; `model` is plain data every layer shares.

pub mod analysis;
pub mod cli;
pub mod exit;
pub mod fake;
pub mod fetch;
pub mod matrix;
pub mod model;
pub mod report;
pub mod signatures;
pub mod store;
