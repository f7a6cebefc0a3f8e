//! The flags commands share, declared once and flattened into each. [`SourceArgs`]: what
//! `survey` and `nightly` share: where the data comes from (GitHub, a replay, or the store
//! alone), where the store lives, and where the report goes, resolved by the helpers below so
//! both commands decide the same way. [`WindowArgs`]: what the commands that read only the store
//! (`report`, `export`, `suggest`, `signatures audit`) share, read by `pipeline::load_from_store`
//! ([`StoredArgs`] without the repository, for `report` over several).

use std::path::{Path, PathBuf};

use clap::Args;

use super::GlobalArgs;
use super::error::CliError;
use super::output::FormatArg;
use super::settings;
use crate::fetch::{ClientConfig, DEFAULT_CONCURRENCY};
use crate::store::StoreLocation;

/// The flags every store-only command shares (`report`, `export`, `suggest`, `signatures
/// audit`): which repository and window, where the store is, which signatures and settings.
#[derive(Debug, Args)]
pub struct WindowArgs {
    /// The repository, OWNER/NAME (with --replay: the dataset's by default).
    #[arg(long, value_name = "OWNER/NAME", required_unless_present = "replay")]
    pub repo: Option<String>,
    #[command(flatten)]
    pub stored: StoredArgs,
}

/// The window, the store and the settings a store-reading command reads: [`WindowArgs`] without
/// the repository, for `report`, which takes several (`repos::RepoArgs`).
#[derive(Debug, Args)]
pub struct StoredArgs {
    /// Start of the window, inclusive (a date, an RFC 3339 datetime, or 24h / 7d / 2w ago).
    #[arg(long, value_name = "WHEN")]
    pub since: String,
    /// End of the window (a date means through the end of that day). Default: where the
    /// store's survey of the repository ends.
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,
    /// Where the store lives. Default: FLAKESTAT_CACHE_DIR, else the platform cache folder
    /// (with --replay: the replay's own store in it).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Read the store `survey --replay DIR` filled (kept apart from real data in the cache
    /// folder); its repository by default, and "now" is the end of its recording.
    #[arg(long, value_name = "DIR")]
    pub replay: Option<PathBuf>,
    /// A team store on PostgreSQL (postgres://USER:PASSWORD@HOST:PORT/DATABASE) instead of the
    /// SQLite store in --cache-dir. Default: FLAKESTAT_STORE.
    #[arg(long, value_name = "URL", conflicts_with = "cache_dir")]
    pub store: Option<String>,
    /// Signature files. Default: ./signatures if present, else the bundled set.
    #[arg(long, value_name = "DIR")]
    pub signatures: Option<PathBuf>,
    /// Settings file. Default: ./flakestat.toml if present.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

impl StoredArgs {
    /// The flags given that a fix-it command repeats.
    pub fn fix_it(&self) -> FixIt<'_> {
        FixIt {
            since: &self.since,
            until: self.until.as_deref(),
            replay: self.replay.as_deref(),
            cache_dir: self.cache_dir.as_deref(),
            signatures: self.signatures.as_deref(),
        }
    }

    /// The flags a fix-it `flakestat survey` repeats after its window ([`FixIt::flags`]).
    pub fn survey_flags(&self) -> Vec<String> {
        self.fix_it().flags()
    }

    /// The survey that fills the store for `target` (`--repo OWNER/NAME`, `--org OWNER`) over
    /// the window as given ([`FixIt::command`]).
    pub fn survey_command(&self, target: &str) -> String {
        self.fix_it().command("survey", target)
    }
}

/// The flags given that a fix-it command (printed for the user to paste) repeats, typed, so
/// every hint (the `survey` a store lacks, the `report` that reads a replay's store) is built
/// by one function the same way. The `--store` URL is never repeated: it may hold a password.
pub struct FixIt<'a> {
    pub since: &'a str,
    pub until: Option<&'a str>,
    pub replay: Option<&'a Path>,
    pub cache_dir: Option<&'a Path>,
    pub signatures: Option<&'a Path>,
}

impl FixIt<'_> {
    /// `--replay`, `--cache-dir`, `--signatures` as given, each value a shell word.
    pub fn flags(&self) -> Vec<String> {
        repeated_flags(self.replay, self.cache_dir, self.signatures)
    }

    /// `flakestat COMMAND TARGET --since … [--until …]`, then [`Self::flags`].
    pub fn command(&self, command: &str, target: &str) -> String {
        let mut line = format!(
            "flakestat {command} {target} --since {}",
            settings::shell_word(self.since)
        );
        if let Some(until) = self.until {
            line.push_str(&format!(" --until {}", settings::shell_word(until)));
        }
        for flag in self.flags() {
            line.push(' ');
            line.push_str(&flag);
        }
        line
    }
}

/// The command that fills a report's gap (`survey_gap` of a report): `flakestat survey --repo
/// OWNER/NAME --since … --until …` (the window's ends as RFC 3339 instants), then `flags`, the
/// flags given that a fix-it command repeats ([`FixIt::flags`]). The wording every incomplete
/// report's first line shows.
pub fn fill_gap_command(gap: &crate::analysis::gap::SurveyGap, flags: &[String]) -> String {
    let mut command = "flakestat survey".to_string();
    if let Some(repo) = &gap.repo {
        command.push_str(&format!(" --repo {repo}"));
    }
    let rfc = |t: crate::model::Timestamp| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    if let Some(s) = gap.since {
        command.push_str(&format!(" --since {}", rfc(s)));
    }
    if let Some(u) = gap.until {
        command.push_str(&format!(" --until {}", rfc(u)));
    }
    for flag in flags {
        command.push(' ');
        command.push_str(flag);
    }
    command
}

/// What a fix-it command repeats after its window, in this order: `--replay`, `--cache-dir`,
/// `--signatures` as given, each value a shell word.
fn repeated_flags(
    replay: Option<&Path>,
    cache_dir: Option<&Path>,
    signatures: Option<&Path>,
) -> Vec<String> {
    [
        ("--replay", replay),
        ("--cache-dir", cache_dir),
        ("--signatures", signatures),
    ]
    .into_iter()
    .filter_map(|(flag, value)| {
        let value = value?;
        Some(format!(
            "{flag} {}",
            settings::shell_word(&value.display().to_string())
        ))
    })
    .collect()
}

#[derive(Debug, Args)]
pub struct SourceArgs {
    /// Requests in flight at once (GitHub asks for few; see docs/survey.md).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_CONCURRENCY as u16,
          value_parser = clap::value_parser!(u16).range(1..=32))]
    pub concurrency: u16,
    /// Where the store lives. Default: FLAKESTAT_CACHE_DIR, else the platform cache folder
    /// (with --replay: the replay's own store in it, which `report --replay` reads).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// A team store on PostgreSQL (postgres://USER:PASSWORD@HOST:PORT/DATABASE) instead of the
    /// SQLite store in --cache-dir. Default: FLAKESTAT_STORE (not with --replay).
    #[arg(long, value_name = "URL", conflicts_with = "cache_dir")]
    pub store: Option<String>,
    /// Use only what the store holds: no network (re-classifies stored logs if the signatures
    /// changed).
    #[arg(long, conflicts_with_all = ["api_url", "replay"])]
    pub offline: bool,
    /// The API root. Default: GITHUB_API_URL, else https://api.github.com.
    #[arg(long, value_name = "URL")]
    pub api_url: Option<String>,
    #[command(flatten)]
    pub app: AppArgs,
    /// Run against a recorded dataset served by the built-in fake GitHub on 127.0.0.1: no token,
    /// no network.
    #[arg(long, value_name = "DIR", conflicts_with = "api_url")]
    pub replay: Option<PathBuf>,
    /// Analysis settings (matrix pattern, PR branch conventions). Default: ./flakestat.toml if
    /// present.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Signature files. Default: ./signatures if present, else the bundled set.
    #[arg(long, value_name = "DIR")]
    pub signatures: Option<PathBuf>,
    /// Report format. Default: what --output's extension names, else table on a terminal and
    /// markdown otherwise.
    #[arg(long, value_enum)]
    pub format: Option<FormatArg>,
    /// Write the report to FILE (atomically) instead of stdout; its extension (.md, .json,
    /// .html, .txt) picks the format when --format is not given.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Retries of a request after a 5xx, a timeout or a dropped connection (tests lower it).
    #[arg(long, value_name = "N", default_value_t = 5, hide = true)]
    pub max_retries: u32,
    /// Send the token over plain http:// to a host that is not loopback (a GitHub Enterprise
    /// test setup you trust). Without it such an --api-url is refused.
    #[arg(long)]
    pub allow_insecure_http: bool,
    /// The largest job log downloaded (bytes, or with K, M, G, KiB, MiB, GiB); the rest of a
    /// larger log is not downloaded, and the survey says which log was cut.
    #[arg(long, value_name = "SIZE", default_value = "1GiB", value_parser = parse_size)]
    pub max_log_size: u64,
    /// The largest API answer read; a larger one is refused (tests lower it).
    #[arg(long, value_name = "SIZE", default_value = "50MiB", value_parser = parse_size, hide = true)]
    pub max_response_size: u64,
    /// Also read JUnit XML reports from the artifacts, named like GLOB (`junit-*`), of each run
    /// with a failed job; their tests win over the tests read from the same job's log. Each
    /// artifact is downloaded once (the store keeps its tests); one over --max-artifact-size,
    /// with too many entries or inflating too much is refused with a line naming it.
    #[arg(long, value_name = "GLOB")]
    pub junit_artifacts: Option<String>,
    /// The largest artifact zip downloaded (bytes, or with K, M, G, KiB, MiB, GiB).
    #[arg(long, value_name = "SIZE", default_value = "100MiB", value_parser = parse_size)]
    pub max_artifact_size: u64,
    /// Read the logs of this share of the window's green job executions (0 to 1, or 10%; 1 reads
    /// all) for the tests their runner retried to a pass (hidden flakes) and how many tests
    /// passed. Only that outcome is stored, and each job is asked once; the sample is a hash of
    /// the job id, so a repeat asks for the same jobs. 0 reads none.
    #[arg(long, value_name = "RATE", default_value = "0", value_parser = parse_fraction)]
    pub green_logs: f64,
    /// With --green-logs: keep each green log read (compressed, in the store), not only its
    /// outcome.
    #[arg(long)]
    pub keep_green_logs: bool,
}

impl SourceArgs {
    /// What `--green-logs` and `--keep-green-logs` ask.
    pub fn green_logs(&self) -> crate::fetch::GreenLogs {
        crate::fetch::GreenLogs {
            rate: self.green_logs,
            keep_logs: self.keep_green_logs,
        }
    }
}

/// A share: `0.1` or `10%`, between 0 and 1.
pub fn parse_fraction(text: &str) -> Result<f64, String> {
    let text = text.trim();
    let value = match text.strip_suffix('%') {
        Some(percent) => percent.trim().parse::<f64>().map(|p| p / 100.0),
        None => text.parse::<f64>(),
    }
    .map_err(|_| format!("{text:?} is not a fraction (0.1 or 10%)"))?;
    if (0.0..=1.0).contains(&value) {
        Ok(value)
    } else {
        Err(format!("{text:?} is not between 0 and 1 (0% and 100%)"))
    }
}

/// GitHub App authentication, the alternative to a token (`settings::resolve_credentials`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct AppArgs {
    /// Authenticate as this GitHub App (its numeric App ID) instead of with a token; needs
    /// --app-key. Default: APP_ID, when PRIVATE_KEY_PATH is set too.
    #[arg(long, value_name = "ID", help_heading = "GitHub App")]
    pub app_id: Option<u64>,
    /// The App's private key: the .pem file GitHub generated (PKCS#1, or PKCS#8). Default:
    /// PRIVATE_KEY_PATH.
    #[arg(long, value_name = "FILE", help_heading = "GitHub App")]
    pub app_key: Option<PathBuf>,
    /// The App's installation to act as. Default: the installation on each repository's owner,
    /// looked up.
    #[arg(long, value_name = "ID", help_heading = "GitHub App")]
    pub installation_id: Option<u64>,
}

/// Where requests go and how they authenticate (GitHub itself, not a replay).
pub struct GitHubApi {
    pub url: String,
    pub token: Option<String>,
    pub app: Option<crate::fetch::AppAuth>,
}

/// The API root and credentials for GitHub itself (not a replay): `api_url` (the flag), then
/// the environment; says once on stderr when there are none, and with `-v` where they came
/// from.
pub fn github_api(
    api_url: Option<&str>,
    app: &AppArgs,
    global: &GlobalArgs,
) -> Result<GitHubApi, CliError> {
    let url = settings::resolve_api_url(api_url);
    let mut api = GitHubApi {
        url,
        token: None,
        app: None,
    };
    match settings::resolve_credentials(&api.url, app)? {
        settings::Credentials::App(app) => {
            if global.verbose > 0 {
                let installation = app.auth.installation.map_or_else(
                    || "the installation on each repository's owner".to_string(),
                    |id| format!("installation {id}"),
                );
                say!(
                    "flakestat: as GitHub App {} ({installation}), key from {}",
                    app.auth.app_id,
                    app.key_from
                );
            }
            api.app = Some(app.auth);
        }
        settings::Credentials::Token(token, source) => {
            if global.verbose > 0 {
                say!("flakestat: token from {source}");
            }
            api.token = Some(token.expose().to_string());
        }
        settings::Credentials::Anonymous => {
            if !global.quiet {
                say!(
                    "flakestat: no token (GITHUB_TOKEN, GH_TOKEN or `gh auth login`): anonymous requests, 60 an hour, public repositories only"
                );
            }
        }
    }
    Ok(api)
}

/// `1048576`, `512K`, `100MB`, `1GiB`: decimal for K/M/G(B), binary for KiB/MiB/GiB.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let number: u64 = digits
        .parse()
        .map_err(|_| format!("{text:?} is not a size (e.g. 1048576, 512MiB, 1GiB)"))?;
    let factor: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" => 1_000,
        "m" | "mb" => 1_000_000,
        "g" | "gb" => 1_000_000_000,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        other => {
            return Err(format!(
                "unknown size unit {other:?} (use K, M, G, KiB, MiB or GiB)"
            ));
        }
    };
    match number.checked_mul(factor) {
        Some(0) => Err("a size must be at least 1 byte".to_string()),
        Some(n) => Ok(n),
        None => Err(format!("{text:?} is too large")),
    }
}

/// Where the store is, and whether it is a replay's own store (chosen for `--replay` without
/// `--store` or `--cache-dir`: the survey says where it went).
pub struct ResolvedStore {
    pub location: StoreLocation,
    pub replay_store: bool,
}

impl SourceArgs {
    /// The flags a fix-it `flakestat survey` repeats after its window (`--replay`,
    /// `--cache-dir`, `--signatures` as given), as [`FixIt::flags`] gives them.
    pub fn survey_flags(&self) -> Vec<String> {
        repeated_flags(
            self.replay.as_deref(),
            self.cache_dir.as_deref(),
            self.signatures.as_deref(),
        )
    }

    /// `--store`, else `--cache-dir`, else (with `--replay`) the replay's own store in the
    /// cache folder, so a replay never mixes with real data and `report --replay` finds it,
    /// else `FLAKESTAT_STORE`, `FLAKESTAT_CACHE_DIR` or the platform cache folder
    /// (`settings::resolve_store_or_replay`).
    pub fn store_location(&self) -> Result<ResolvedStore, CliError> {
        settings::resolve_store_or_replay(
            self.store.as_deref(),
            self.cache_dir.as_deref(),
            self.replay.as_deref(),
        )
    }

    /// The client settings these flags ask for.
    pub fn client_config(&self, api_url: String, token: Option<String>) -> ClientConfig {
        let mut config = ClientConfig::new(api_url, token);
        config.concurrency = usize::from(self.concurrency);
        config.max_retries = self.max_retries;
        config.allow_insecure_http = self.allow_insecure_http;
        config.max_log_size = self.max_log_size;
        config.max_response_size = self.max_response_size;
        config
    }
}

/// A recorded dataset for `--replay DIR`, served by the built-in fake GitHub on 127.0.0.1.
///
/// The fake is compiled in only with the default feature `replay`; without it `--replay` is
/// refused with a message saying so, and nothing else changes.
pub struct Replay {
    #[cfg(feature = "replay")]
    dataset: crate::fake::Dataset,
    #[cfg(not(feature = "replay"))]
    never: std::convert::Infallible,
}

/// The replay server, serving for as long as it lives.
pub struct ReplayServer {
    #[cfg(feature = "replay")]
    server: crate::fake::FakeGitHub,
    #[cfg(not(feature = "replay"))]
    never: std::convert::Infallible,
}

impl Replay {
    /// `--replay DIR`, if given: the dataset, or an error naming the folder (exit 3).
    pub fn load(dir: Option<&std::path::Path>) -> Result<Option<Replay>, CliError> {
        let Some(dir) = dir else { return Ok(None) };
        #[cfg(feature = "replay")]
        {
            let dataset = crate::fake::Dataset::load(dir)
                .map_err(|e| CliError::Invalid(format!("--replay {}: {e}", dir.display())))?;
            Ok(Some(Replay { dataset }))
        }
        #[cfg(not(feature = "replay"))]
        Err(CliError::Failed(format!(
            "--replay {}: this flakestat was built without the fake GitHub (cargo feature `replay`)",
            dir.display()
        )))
    }

    /// The repository the dataset records.
    pub fn repo(&self) -> crate::model::Repo {
        #[cfg(feature = "replay")]
        return self.dataset.repo.clone();
        #[cfg(not(feature = "replay"))]
        match self.never {}
    }

    /// The dataset's present: replays are reproducible whatever the clock says.
    pub fn now(&self) -> crate::model::Timestamp {
        #[cfg(feature = "replay")]
        return self.dataset.now;
        #[cfg(not(feature = "replay"))]
        match self.never {}
    }

    /// Serves the dataset on 127.0.0.1 for as long as the returned server lives.
    pub fn start(self) -> Result<ReplayServer, CliError> {
        #[cfg(feature = "replay")]
        {
            use crate::fake::{FakeGitHub, Faults};
            let server = FakeGitHub::start_blocking(self.dataset, Faults::default())
                .map_err(|e| CliError::Failed(format!("cannot start the replay server: {e}")))?;
            Ok(ReplayServer { server })
        }
        #[cfg(not(feature = "replay"))]
        match self.never {}
    }
}

impl ReplayServer {
    /// The API root to point the client at.
    pub fn api_url(&self) -> String {
        #[cfg(feature = "replay")]
        return self.server.api_url();
        #[cfg(not(feature = "replay"))]
        match self.never {}
    }
}

#[cfg(test)]
mod tests {
    use super::{fill_gap_command, parse_size};
    use crate::analysis::gap::SurveyGap;
    use crate::model::Repo;

    /// Issue 42 §5: the core hands the gap as data; the CLI words the survey as every
    /// incomplete report's first line has shown it (the window's ends as RFC 3339 instants, the
    /// flags given after them).
    #[test]
    fn the_survey_that_fills_a_gap_is_worded_as_a_command() {
        let at = |s: &str| chrono::DateTime::parse_from_rfc3339(s).unwrap().to_utc();
        let gap = SurveyGap {
            repo: Some(Repo::parse("octo/demo").unwrap()),
            since: Some(at("2026-06-01T00:00:00Z")),
            until: Some(at("2026-06-04T00:00:00Z")),
        };
        assert_eq!(
            fill_gap_command(&gap, &["--cache-dir /tmp/c".to_string()]),
            "flakestat survey --repo octo/demo --since 2026-06-01T00:00:00Z \
             --until 2026-06-04T00:00:00Z --cache-dir /tmp/c"
        );
        let open = SurveyGap {
            repo: None,
            since: None,
            until: None,
        };
        assert_eq!(fill_gap_command(&open, &[]), "flakestat survey");
    }

    #[test]
    fn sizes_parse_with_decimal_and_binary_units() {
        assert_eq!(parse_size("1048576"), Ok(1 << 20));
        assert_eq!(parse_size("512K"), Ok(512_000));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("50 MiB"), Ok(50 << 20));
        assert!(parse_size("0").is_err());
        assert!(parse_size("1 parsec").is_err());
        assert!(parse_size("GiB").is_err());
        assert!(parse_size("99999999999999999999G").is_err());
    }
}
