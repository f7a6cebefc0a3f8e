//! The networked set-up `survey`, `nightly` and `serve` share: connect to GitHub (or start the
//! replay server) and start a session with the flags' settings. What is fetched after the
//! survey (the ancestry rounds: `AncestryPlan`, `fetch_ancestry`, `fetch_for_nightly`) is
//! flakestat-sync's (`rounds.rs`); the commands fill its plan from their flags.

use std::sync::Arc;

use crate::cli::GlobalArgs;
use crate::cli::error::CliError;
use crate::cli::progress::Bars;
use crate::cli::source::{AppArgs, Replay, ReplayServer, SourceArgs};
use crate::fetch::{JunitArtifacts, Session};

/// Where requests go, with what token (or GitHub App); keeps the replay server (if any)
/// serving while it lives.
pub struct Connection {
    pub api_url: String,
    pub token: Option<String>,
    pub app: Option<crate::fetch::AppAuth>,
    _server: Option<ReplayServer>,
}

impl Connection {
    /// Whether this run talks to the replay's fake GitHub on 127.0.0.1, not to GitHub.
    pub fn is_replay(&self) -> bool {
        self._server.is_some()
    }
}

/// The API for this run: the replay server started on 127.0.0.1 (with `replay_token`, which
/// the fake accepts, when the command must send one), or GitHub itself from `--api-url` and
/// the environment.
pub fn connect(
    source: &SourceArgs,
    replay: Option<Replay>,
    global: &GlobalArgs,
    replay_token: Option<&str>,
) -> Result<Connection, CliError> {
    connect_to(
        source.api_url.as_deref(),
        &source.app,
        replay,
        global,
        replay_token,
    )
}

/// As [`connect`], for a command without the survey's flags (`serve`): `api_url` is its
/// `--api-url`, `app` its GitHub App flags. A replay takes no credentials: App flags with it
/// are refused.
pub fn connect_to(
    api_url: Option<&str>,
    app: &AppArgs,
    replay: Option<Replay>,
    global: &GlobalArgs,
    replay_token: Option<&str>,
) -> Result<Connection, CliError> {
    match replay {
        Some(_) if app.app_id.is_some() || app.app_key.is_some() => Err(CliError::Invalid(
            "--replay serves a recording without credentials: leave out --app-id and --app-key"
                .into(),
        )),
        Some(dataset) => {
            let server = dataset.start()?;
            Ok(Connection {
                api_url: server.api_url(),
                token: replay_token.map(str::to_string),
                app: None,
                _server: Some(server),
            })
        }
        None => {
            let api = crate::cli::source::github_api(api_url, app, global)?;
            Ok(Connection {
                api_url: api.url,
                token: api.token,
                app: api.app,
                _server: None,
            })
        }
    }
}

impl Connection {
    /// No network at all (`--offline`).
    pub fn offline() -> Connection {
        Connection {
            api_url: String::new(),
            token: None,
            app: None,
            _server: None,
        }
    }

    /// A session for this connection with the flags' client settings, drawing `bars`.
    pub fn session(&self, source: &SourceArgs, bars: &Arc<Bars>) -> Result<Session, CliError> {
        let mut config = source.client_config(self.api_url.clone(), self.token.clone());
        config.app = self.app.clone();
        let mut session = Session::new(config, bars.clone())?;
        let junit = match &source.junit_artifacts {
            Some(glob) => {
                let mut junit = JunitArtifacts::new(glob)
                    .map_err(|e| CliError::Invalid(format!("--junit-artifacts: {e}")))?;
                junit.max_size = source.max_artifact_size;
                Some(junit)
            }
            None => None,
        };
        session.read_junit_artifacts(junit);
        Ok(session)
    }
}
