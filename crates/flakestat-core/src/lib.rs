//! flakestat's core: plain data, the signature matcher, the job matrix, the analysis and the
//! report renderers. Everything here is pure or reads only files it is handed: no async runtime,
//! no SQL, no network, no command line (the compiler guards this: the crate does not depend on
//! tokio, rusqlite, hyper, clap or anyhow). See ARCHITECTURE.md.

pub mod analysis;
pub mod matrix;
pub mod model;
pub mod report;
pub mod share;
pub mod signatures;
