//! GitHub App authentication: the client's token is an installation token it gets for itself
//! and renews before it expires, instead of one fixed token.
//!
//! An App proves who it is with a JSON Web Token (RS256, `iss` = the App id, issued 60 s in the
//! past against clock drift, expiring 9 minutes later: GitHub refuses more than 10), signed with
//! the App's private key by `ring`, which the TLS stack already builds (jsonwebtoken 10 would add
//! `aws-lc-rs` or the `rsa` crate). The JWT buys an installation token
//! (`POST /app/installations/{id}/access_tokens`); the installation is the one given, or the one
//! of the account a request is about (`GET /repos/{o}/{r}/installation`, `/orgs/{org}/installation`,
//! `/users/{user}/installation`), looked up once per account.
//!
//! An installation token is sent like a fixed token (`transport.rs`): only on the API origin,
//! and only on hops that stayed there (`follow`), so the redirect rules hold unchanged; the
//! JWT itself goes only with the App's own requests (`as_app`). A token is renewed a
//! few minutes before `expires_at` (GitHub's last an hour; a quarter of its life for short-lived
//! ones) and once more when the API answers 401 (revoked, or the clocks disagree).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{TimeDelta, Utc};
use http::{HeaderMap, StatusCode};
use ring::rand::SystemRandom;
use ring::signature::{RSA_PKCS1_SHA256, RsaKeyPair};
use rustls::pki_types::PrivateKeyDer;
use rustls::pki_types::pem::PemObject;
use serde::Deserialize;

use super::transport::Bearer;
use super::{GitHubClient, Response};
use crate::FetchError;
use flakestat_core::model::Timestamp;

/// A GitHub App's private key. Its `Debug` never shows it; nothing prints it.
pub struct AppKey(RsaKeyPair);

impl std::fmt::Debug for AppKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AppKey(***)")
    }
}

/// Why a key file is not a GitHub App's key. The messages quote nothing of the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AppKeyError {
    #[error(
        "holds no PEM private key (a GitHub App's key file begins with -----BEGIN RSA PRIVATE KEY-----)"
    )]
    NotPem,
    #[error("holds an elliptic-curve key; a GitHub App's key is an RSA key")]
    NotRsa,
    #[error("is not a usable RSA private key ({0})")]
    Rejected(String),
}

impl AppKey {
    /// The key of a PEM file as GitHub hands it out (PKCS#1, `BEGIN RSA PRIVATE KEY`), or as
    /// PKCS#8 (`BEGIN PRIVATE KEY`, after `openssl pkcs8 -topk8 -nocrypt`).
    pub fn parse_pem(pem: &[u8]) -> Result<AppKey, AppKeyError> {
        let der = PrivateKeyDer::from_pem_slice(pem).map_err(|_| AppKeyError::NotPem)?;
        let pair = match &der {
            PrivateKeyDer::Pkcs1(key) => RsaKeyPair::from_der(key.secret_pkcs1_der()),
            PrivateKeyDer::Pkcs8(key) => RsaKeyPair::from_pkcs8(key.secret_pkcs8_der()),
            PrivateKeyDer::Sec1(_) => return Err(AppKeyError::NotRsa),
            _ => return Err(AppKeyError::NotPem),
        };
        pair.map(AppKey)
            .map_err(|e| AppKeyError::Rejected(e.to_string()))
    }

    /// The App's JWT at `now` (epoch seconds): RS256 over `{"iat", "exp", "iss"}`.
    pub fn jwt(&self, app_id: u64, now: i64) -> Result<String, FetchError> {
        let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"RS256","typ":"JWT"}"#);
        let claims = serde_json::json!({
            "iat": now - JWT_BACKDATE.as_secs() as i64,
            "exp": now + JWT_LIFETIME.as_secs() as i64,
            "iss": app_id,
        });
        let claims = URL_SAFE_NO_PAD.encode(claims.to_string());
        let signed = format!("{header}.{claims}");
        let mut signature = vec![0; self.0.public().modulus_len()];
        self.0
            .sign(
                &RSA_PKCS1_SHA256,
                &SystemRandom::new(),
                signed.as_bytes(),
                &mut signature,
            )
            .map_err(|_| FetchError::Internal("cannot sign the GitHub App's JWT".to_string()))?;
        Ok(format!("{signed}.{}", URL_SAFE_NO_PAD.encode(signature)))
    }
}

/// A JWT's `iat` lies this far in the past: GitHub's advice against clocks that drift.
pub const JWT_BACKDATE: Duration = Duration::from_secs(60);
/// A JWT's `exp` lies this far ahead; GitHub refuses more than 10 minutes.
pub const JWT_LIFETIME: Duration = Duration::from_secs(9 * 60);
/// An installation token is renewed this long before it expires (a quarter of its life when
/// that is shorter).
pub const REFRESH_EARLY: Duration = Duration::from_secs(5 * 60);

/// Authenticate as a GitHub App's installation. Its `Debug` never shows the key.
#[derive(Clone)]
pub struct AppAuth {
    pub app_id: u64,
    pub key: Arc<AppKey>,
    /// The installation; `None`: the installation of the account each request is about.
    pub installation: Option<u64>,
}

impl std::fmt::Debug for AppAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppAuth")
            .field("app_id", &self.app_id)
            .field("key", &"***")
            .field("installation", &self.installation)
            .finish()
    }
}

/// The account a request is about, whose installation it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Account {
    Repo { owner: String, name: String },
    Org(String),
    User(String),
}

impl Account {
    /// The account of an API path (`/repos/o/r/...`, `/orgs/o/...`, `/users/u/...`).
    pub(super) fn of_path(path: &str) -> Option<Account> {
        let mut parts = path.trim_start_matches('/').split(['/', '?']);
        let kind = parts.next()?;
        let first = parts.next().filter(|s| !s.is_empty())?.to_string();
        match kind {
            "repos" => {
                let name = parts.next().filter(|s| !s.is_empty())?.to_string();
                Some(Account::Repo { owner: first, name })
            }
            "orgs" => Some(Account::Org(first)),
            "users" => Some(Account::User(first)),
            _ => None,
        }
    }

    /// Installations are per account: the owner, in lower case.
    fn key(&self) -> String {
        match self {
            Account::Repo { owner, .. } => owner,
            Account::Org(owner) | Account::User(owner) => owner,
        }
        .to_ascii_lowercase()
    }

    fn discovery_path(&self) -> String {
        match self {
            Account::Repo { owner, name } => format!("/repos/{owner}/{name}/installation"),
            Account::Org(org) => format!("/orgs/{org}/installation"),
            Account::User(user) => format!("/users/{user}/installation"),
        }
    }
}

impl std::fmt::Display for Account {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Account::Repo { owner, name } => write!(f, "{owner}/{name}"),
            Account::Org(owner) | Account::User(owner) => f.write_str(owner),
        }
    }
}

/// The installation tokens of one client, per account (or the one installation given).
#[derive(Default)]
pub(super) struct AppTokens {
    /// Held while a token is fetched, so concurrent requests wait for one exchange.
    slots: tokio::sync::Mutex<HashMap<String, Slot>>,
    generation: std::sync::atomic::AtomicU64,
}

struct Slot {
    installation: u64,
    current: Option<Current>,
}

/// An installation token in use, and when to renew it.
struct Current {
    bearer: Bearer,
    generation: u64,
    renew_at: Timestamp,
}

/// `GET /repos/{o}/{r}/installation` and its neighbours: only the id matters.
#[derive(Deserialize)]
struct WireInstallation {
    id: u64,
}

/// `POST /app/installations/{id}/access_tokens`, 201.
#[derive(Deserialize)]
struct WireAccessToken {
    token: String,
    expires_at: String,
}

/// When to renew a token that expires at `expires`, received at `now`.
pub(super) fn renew_at(now: Timestamp, expires: Timestamp) -> Timestamp {
    let life = (expires - now).max(TimeDelta::zero());
    let early = TimeDelta::from_std(REFRESH_EARLY)
        .unwrap_or(TimeDelta::MAX)
        .min(life / 4);
    expires - early
}

impl GitHubClient {
    /// The credential for a request about `account` on the API origin (`None`: anonymous),
    /// and the generation of its token (0: a fixed token, never renewed).
    pub(super) async fn api_credential(
        &self,
        account: Option<&Account>,
    ) -> Result<(Option<Bearer>, u64), FetchError> {
        let Some(app) = &self.config.app else {
            return Ok((self.token.clone(), 0));
        };
        let mut slots = self.app_tokens.slots.lock().await;
        let key = match (app.installation, account) {
            (Some(_), _) => String::new(),
            (None, Some(account)) => account.key(),
            // A request about no account (`/rate_limit`): any installation will do.
            (None, None) => match slots.keys().next() {
                Some(key) => key.clone(),
                None => return Ok((None, 0)),
            },
        };
        if let Some(Slot {
            current: Some(current),
            ..
        }) = slots.get(&key)
            && Utc::now() < current.renew_at
        {
            return Ok((Some(current.bearer.clone()), current.generation));
        }
        let jwt = app.key.jwt(app.app_id, Utc::now().timestamp())?;
        let installation = match (slots.get(&key), app.installation, account) {
            (Some(slot), _, _) => slot.installation,
            (None, Some(id), _) => id,
            (None, None, Some(account)) => self.fetch_installation(app, &jwt, account).await?,
            (None, None, None) => unreachable!("a key without an account is an existing slot"),
        };
        let (token, expires) = self
            .fetch_installation_token(app, &jwt, installation)
            .await?;
        let bearer = Bearer::new(&token)?;
        let generation = 1 + self
            .app_tokens
            .generation
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        slots.insert(
            key,
            Slot {
                installation,
                current: Some(Current {
                    bearer: bearer.clone(),
                    generation,
                    renew_at: renew_at(Utc::now(), expires),
                }),
            },
        );
        Ok((Some(bearer), generation))
    }

    /// The API refused the token of `generation` (401): the next request gets a new one.
    pub(super) async fn forget_app_token(&self, generation: u64) {
        let mut slots = self.app_tokens.slots.lock().await;
        for slot in slots.values_mut() {
            if slot
                .current
                .as_ref()
                .is_some_and(|c| c.generation == generation)
            {
                slot.current = None;
            }
        }
    }

    /// The id of the App's installation on `account`.
    async fn fetch_installation(
        &self,
        app: &AppAuth,
        jwt: &str,
        account: &Account,
    ) -> Result<u64, FetchError> {
        let mut path = account.discovery_path();
        let mut response = self.as_app(http::Method::GET, &path, jwt).await?;
        if let (StatusCode::NOT_FOUND, Account::Org(owner)) = (response.status, account) {
            // `--org` names users too (their listing is `/users/{u}/repos`), whose installation
            // `/orgs/{org}/installation` does not know.
            path = Account::User(owner.clone()).discovery_path();
            response = self.as_app(http::Method::GET, &path, jwt).await?;
        }
        match response.status {
            StatusCode::OK => serde_json::from_slice::<WireInstallation>(&response.body)
                .map(|i| i.id)
                .map_err(|e| FetchError::Parse {
                    url: self.url(&path),
                    error: e.to_string(),
                }),
            StatusCode::NOT_FOUND => Err(FetchError::NotFound(format!(
                "the GitHub App {} is not installed on {account} (GitHub answered 404 to {path}): install it there, or name an installation that covers it",
                app.app_id
            ))),
            status => Err(app_refusal(&response, status, &path)),
        }
    }

    /// A new installation token and when it expires.
    async fn fetch_installation_token(
        &self,
        app: &AppAuth,
        jwt: &str,
        installation: u64,
    ) -> Result<(String, Timestamp), FetchError> {
        let path = format!("/app/installations/{installation}/access_tokens");
        let response = self.as_app(http::Method::POST, &path, jwt).await?;
        match response.status {
            StatusCode::CREATED | StatusCode::OK => {
                let wire: WireAccessToken =
                    serde_json::from_slice(&response.body).map_err(|e| FetchError::Parse {
                        url: self.url(&path),
                        error: e.to_string(),
                    })?;
                let expires = chrono::DateTime::parse_from_rfc3339(&wire.expires_at)
                    .map_err(|e| FetchError::Parse {
                        url: self.url(&path),
                        error: format!("expires_at {:?}: {e}", wire.expires_at),
                    })?
                    .with_timezone(&Utc);
                Ok((wire.token, expires))
            }
            StatusCode::NOT_FOUND => Err(FetchError::NotFound(format!(
                "GitHub knows no installation {installation} of the GitHub App {} (404 to {path}): check the installation id",
                app.app_id
            ))),
            status => Err(app_refusal(&response, status, &path)),
        }
    }

    /// One request as the App (its JWT as the bearer), tried once, to the API origin only.
    async fn as_app(
        &self,
        method: http::Method,
        path: &str,
        jwt: &str,
    ) -> Result<Response, FetchError> {
        let url = self.url(path);
        let bearer = Bearer::new(jwt)?;
        let policy = self.answer_policy();
        let (parts, body, _, _) = self
            .exchange(
                method.clone(),
                &url,
                HeaderMap::new(),
                None,
                Some(&bearer),
                policy,
            )
            .await
            .map_err(|failure| failure.into_error(&method, &url, policy.limit))?;
        Ok(self.received(parts, body, false, &url))
    }
}

/// A refusal of the App's own requests: 401 and 403 are the App's credentials, the rest
/// unexpected.
fn app_refusal(response: &Response, status: StatusCode, path: &str) -> FetchError {
    match status {
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => FetchError::AppRefused {
            status: status.as_u16(),
            message: response.message(),
        },
        _ => FetchError::Unexpected {
            url: path.to_string(),
            status: status.as_u16(),
            message: response.message(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &[u8] = include_bytes!("../../../../fixtures/github-app/app-key.pem");
    const KEY_PKCS8: &[u8] = include_bytes!("../../../../fixtures/github-app/app-key.pkcs8.pem");

    fn part(jwt: &str, n: usize) -> serde_json::Value {
        let text = URL_SAFE_NO_PAD
            .decode(jwt.split('.').nth(n).unwrap())
            .unwrap();
        serde_json::from_slice(&text).unwrap()
    }

    #[test]
    fn the_jwt_is_rs256_issued_by_the_app_a_minute_back_for_nine_minutes() {
        let key = AppKey::parse_pem(KEY).unwrap();
        let jwt = key.jwt(4242, 1_000_000).unwrap();
        assert_eq!(jwt.split('.').count(), 3);
        assert_eq!(part(&jwt, 0)["alg"], "RS256");
        let claims = part(&jwt, 1);
        assert_eq!(claims["iss"], 4242);
        assert_eq!(claims["iat"], 1_000_000 - 60);
        assert_eq!(claims["exp"], 1_000_000 + 540);
    }

    #[test]
    fn pkcs1_and_pkcs8_files_of_one_key_sign_alike() {
        // PKCS#1 v1.5 signatures are deterministic: the same key signs the same bytes alike.
        let one = AppKey::parse_pem(KEY).unwrap().jwt(1, 5).unwrap();
        let eight = AppKey::parse_pem(KEY_PKCS8).unwrap().jwt(1, 5).unwrap();
        assert_eq!(one, eight);
    }

    #[test]
    fn what_is_not_a_key_says_so_without_quoting_it() {
        assert_eq!(
            AppKey::parse_pem(b"ghp_notakey\n").unwrap_err(),
            AppKeyError::NotPem
        );
        let public = include_bytes!("../../../../fixtures/github-app/app-key.pub.pem");
        assert_eq!(AppKey::parse_pem(public).unwrap_err(), AppKeyError::NotPem);
        let key = AppKey::parse_pem(KEY).unwrap();
        assert_eq!(format!("{key:?}"), "AppKey(***)");
        let auth = AppAuth {
            app_id: 7,
            key: Arc::new(key),
            installation: None,
        };
        assert!(!format!("{auth:?}").contains("BEGIN"));
    }

    #[test]
    fn accounts_come_from_the_path() {
        assert_eq!(
            Account::of_path("/repos/Octo/demo/actions/runs?page=2"),
            Some(Account::Repo {
                owner: "Octo".into(),
                name: "demo".into()
            })
        );
        assert_eq!(
            Account::of_path("/orgs/octo/repos"),
            Some(Account::Org("octo".into()))
        );
        assert_eq!(Account::of_path("/rate_limit"), None);
        assert_eq!(
            Account::of_path("/repos/Octo/demo/x").unwrap().key(),
            "octo"
        );
    }

    #[test]
    fn tokens_are_renewed_minutes_early_or_a_quarter_of_their_life_early() {
        let now = Utc::now();
        let hour = now + TimeDelta::hours(1);
        assert_eq!(renew_at(now, hour), hour - TimeDelta::minutes(5));
        let short = now + TimeDelta::seconds(8);
        assert_eq!(renew_at(now, short), short - TimeDelta::seconds(2));
        let past = now - TimeDelta::seconds(1);
        assert_eq!(renew_at(now, past), past);
    }
}
