//! What this run of the tests could not check, said once at the end. A test that needs something
//! the machine may not have (Chromium, mermaid-cli, a PostgreSQL server, `../shared` …) skips
//! with a message, but libtest shows a passing test's stderr to no one: a newcomer's `cargo test`
//! would pass without saying that parts of it did not run. Each skip is recorded here, and when
//! the test process exits (after libtest's own summary) one line names what was skipped and how
//! to enable it.

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::{Mutex, Once};

/// What a skipped check needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Need {
    Chromium,
    MermaidCli,
    Postgres,
    Shared,
    DuckDb,
    Script,
    ReadOnlyFile,
    UnwritableFolder,
    ParquetFeature,
    Node,
}

impl Need {
    /// What was missing and how to enable the checks that need it.
    fn how(self) -> &'static str {
        match self {
            Need::Chromium => "Chromium (apt-get install -y chromium)",
            Need::MermaidCli => {
                "mermaid-cli (with Chromium: PUPPETEER_SKIP_DOWNLOAD=1 npm install --prefix \
                 target/mmdc @mermaid-js/mermaid-cli@11.17.0)"
            }
            Need::Postgres => {
                "PostgreSQL (source .ci/postgres.sh start, which names it in FLAKESTAT_TEST_POSTGRES)"
            }
            Need::Shared => "../shared (the development environment's logs; not public)",
            Need::DuckDb => "DuckDB (pip install duckdb)",
            Need::Script => "/usr/bin/script (util-linux)",
            Need::ReadOnlyFile => {
                "a file chmod can make read-only (not as root on this filesystem)"
            }
            Need::UnwritableFolder => "an unwritable folder (as root without /sys)",
            Need::Node => "Node.js (apt-get install -y nodejs), to run the HTML page's script",
            Need::ParquetFeature => {
                "the cargo feature parquet (cargo test --features parquet; .ci/run runs its checks)"
            }
        }
    }
}

static SKIPPED: Mutex<BTreeMap<Need, usize>> = Mutex::new(BTreeMap::new());
static AT_EXIT: Once = Once::new();

/// Records that a check was skipped for want of `need`, and says why on stderr (shown by libtest
/// for a failing test, or with `--nocapture`).
pub fn skipped(need: Need, message: &str) {
    eprintln!("{message}");
    *SKIPPED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(need)
        .or_default() += 1;
    AT_EXIT.call_once(|| {
        // SAFETY: `atexit` is the C runtime's (which std links on every platform); it is given
        // a function of the C ABI that takes nothing, never unwinds, and only reads a static.
        unsafe {
            atexit(summary);
        }
    });
}

unsafe extern "C" {
    fn atexit(callback: extern "C" fn()) -> std::ffi::c_int;
}

/// The one line, on stderr, after libtest's summary.
extern "C" fn summary() {
    let skipped = SKIPPED.lock().unwrap_or_else(|e| e.into_inner());
    let total: usize = skipped.values().sum();
    if total == 0 {
        return;
    }
    let needs: Vec<String> = skipped
        .iter()
        .map(|(need, n)| format!("{n} × {}", need.how()))
        .collect();
    // No panic may leave an `extern "C"` function: a closed stderr is ignored.
    let _ = writeln!(
        std::io::stderr(),
        "\nflakestat tests: {total} check{} skipped for want of {}; .ci/run installs and starts \
         all but ../shared",
        if total == 1 { " was" } else { "s were" },
        needs.join(", ")
    );
}
