//! flakestat: which of our red CI runs are flakes, how often each hits, where in the job matrix,
//! and since which merge.
//!
//! This package is the command line (`cli`, exit codes); the layers below it are crates of their
//! own, so the compiler keeps the arrows pointing down (see ARCHITECTURE.md):
//! `flakestat-core` (model, signatures, matrix, analysis, report: pure), `flakestat-store`
//! (SQL), `flakestat-github` (the GitHub client: HTTP only, hyper), `flakestat-sync` (what
//! brings the store up to date from GitHub: listing, cover, ingest, ancestry, resync; tokio)
//! and, behind the default feature `replay`, `flakestat-fake` (the fake GitHub API). They are
//! re-exported here under their layer names, so `flakestat::model`, `flakestat::fetch` … name
//! the same items; `fetch` is flakestat-sync, which re-exports the client's types with its own.

pub mod cli;
pub mod exit;

pub use flakestat_core::{analysis, matrix, model, report, signatures};
#[cfg(feature = "replay")]
pub use flakestat_fake as fake;
#[cfg(feature = "parquet")]
pub use flakestat_parquet as parquet_export;
pub use flakestat_serve as serve;
pub use flakestat_store as store;
pub use flakestat_sync as fetch;
