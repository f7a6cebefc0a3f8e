//! A fake GitHub REST API on 127.0.0.1, for tests, benchmarks and `survey --replay`.
//!
//! [`FakeGitHub`] serves a [`Dataset`] over real HTTP/1.1 the way GitHub's OpenAPI description
//! and `shared/GITHUB.md` say: run listings with the `created` filter and the 1,000-result cap,
//! attempts, jobs (`filter=latest|all`), job logs behind a 302 to a second listener, pull
//! requests and their files, commits and compare, issue comments; `Link` pagination, rate-limit
//! headers, ETags and 304s, auth, and deterministic fault injection ([`Faults`]).
//! [`scenario`] builds the bundled datasets (`fixtures/<scenario>/`). Nothing here is used by the
//! product's own code paths except `--replay`, which starts this server.

mod created;
mod dataset;
mod routes;
pub mod scenario;
mod server;

pub use created::{CreatedRange, parse_created};
pub use dataset::{
    Auth, Dataset, DatasetError, FakeAttempt, FakeComment, FakeCommit, FakeFile, FakeIssue,
    FakeLog, FakePull, FakeRun,
};
pub use routes::RouteKind;
pub use server::{FakeGitHub, Faults, Listener, RecordedRequest};
