//! The fake's GitHub App: the endpoints an App authenticates through, and installation tokens
//! as the only credentials its API accepts while an App is set ([`FakeGitHub::set_app`]).
//!
//! As GitHub's OpenAPI description says: `POST /app/installations/{id}/access_tokens` answers
//! 201 with `token` and `expires_at` (404 for an installation the App does not have);
//! `GET /repos/{o}/{r}/installation`, `/orgs/{org}/installation` and
//! `/users/{user}/installation` answer the installation (404 where the App is not installed).
//! Those routes take only the App's JWT: RS256, verified against the App's public key, `iss`
//! the App's id, `exp` in the future and at most 10 minutes ahead, `iat` not in the future;
//! anything else is 401. Every other route then takes only an installation token that has not
//! expired (401 `Bad credentials` otherwise), for the repositories of its own account.
//!
//! Simplifications: one App per server; an installation covers every repository of its
//! account; a token's permissions are not checked.
//!
//! [`FakeGitHub::set_app`]: crate::FakeGitHub::set_app

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ring::signature::{RSA_PKCS1_2048_8192_SHA256, UnparsedPublicKey};
use serde_json::{Value, json};

use super::routes::{Reply, RouteKind};

/// A GitHub App the fake knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeApp {
    pub app_id: u64,
    /// The App's public key: PEM, PKCS#1 (`-----BEGIN RSA PUBLIC KEY-----`).
    pub public_key_pem: String,
    /// The accounts (owners) the App is installed on, with each installation's id.
    pub installations: BTreeMap<String, u64>,
    /// How long an installation token is accepted (GitHub: an hour); whole seconds.
    pub token_lifetime: Duration,
    /// What a token's `expires_at` says, when not the truth: a longer one makes the client
    /// learn of the expiry from a 401, as with a revoked token or clocks that disagree.
    pub claimed_lifetime: Option<Duration>,
}

impl FakeApp {
    /// An App installed on `owner` as installation `installation`, its tokens an hour long.
    pub fn new(app_id: u64, public_key_pem: &str, owner: &str, installation: u64) -> FakeApp {
        FakeApp {
            app_id,
            public_key_pem: public_key_pem.to_string(),
            installations: BTreeMap::from([(owner.to_ascii_lowercase(), installation)]),
            token_lifetime: Duration::from_secs(3600),
            claimed_lifetime: None,
        }
    }
}

/// An installation token handed out.
struct Issued {
    token: String,
    account: String,
    /// Epoch milliseconds.
    expires: u128,
}

/// The App and what it handed out.
pub(crate) struct AppState {
    app: FakeApp,
    public_key: Vec<u8>,
    issued: Vec<Issued>,
}

/// What the App side makes of an API request.
pub(crate) enum Decision {
    /// An App route (its kind), or a refusal of the route asked for (`None`): answered here.
    Reply(Reply, Option<RouteKind>),
    /// A current installation token for the request's account: a caller with access.
    Admit,
    /// No credentials: as for any anonymous caller.
    Anonymous,
}

fn epoch_millis() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis())
}

/// The body of a PEM block, decoded.
fn pem_body(pem: &str) -> Option<Vec<u8>> {
    let text: String = pem
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("-----"))
        .collect();
    STANDARD.decode(text).ok().filter(|der| !der.is_empty())
}

impl AppState {
    pub(crate) fn new(app: FakeApp) -> Result<AppState, String> {
        let public_key = pem_body(&app.public_key_pem)
            .ok_or_else(|| "the App's public key is not PEM".to_string())?;
        Ok(AppState {
            app: FakeApp {
                installations: app
                    .installations
                    .iter()
                    .map(|(owner, id)| (owner.to_ascii_lowercase(), *id))
                    .collect(),
                ..app
            },
            public_key,
            issued: Vec::new(),
        })
    }

    /// The App's answer to `method path` (without `/api/v3`) with this `Authorization`;
    /// `users` are the owners that are users (`/orgs/{user}/installation` is 404 for them).
    pub(crate) fn decide(
        &mut self,
        method: &str,
        path: &str,
        authorization: Option<&str>,
        users: &BTreeSet<String>,
    ) -> Decision {
        let bearer = authorization.map(|value| {
            value
                .strip_prefix("Bearer ")
                .or_else(|| value.strip_prefix("bearer "))
                .or_else(|| value.strip_prefix("token "))
                .unwrap_or("")
                .trim()
        });
        let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
        match (method, segments.as_slice()) {
            ("POST", ["app", "installations", id, "access_tokens"]) => {
                let reply = match self.check_jwt(bearer) {
                    Err(refused) => refused,
                    Ok(()) => self.issue(id),
                };
                Decision::Reply(reply, Some(RouteKind::AppToken))
            }
            ("GET", ["repos", owner, _, "installation"])
            | ("GET", ["orgs", owner, "installation"])
            | ("GET", ["users", owner, "installation"]) => {
                let user_as_org =
                    segments[0] == "orgs" && users.contains(&owner.to_ascii_lowercase());
                let reply = match self.check_jwt(bearer) {
                    Err(refused) => refused,
                    Ok(()) if user_as_org => Reply::not_found(),
                    Ok(()) => self.installation(owner),
                };
                Decision::Reply(reply, Some(RouteKind::AppInstallation))
            }
            _ => match bearer {
                None => Decision::Anonymous,
                Some(token) => self.admit(token, &segments),
            },
        }
    }

    /// A request with a token: a current installation token of the account it is about.
    fn admit(&self, token: &str, segments: &[&str]) -> Decision {
        let now = epoch_millis();
        let Some(issued) = self
            .issued
            .iter()
            .find(|i| i.token == token && now < i.expires)
        else {
            return Decision::Reply(Reply::error(401, "Bad credentials", ""), None);
        };
        let owner = match segments {
            ["repos" | "orgs" | "users", owner, ..] => Some(owner.to_ascii_lowercase()),
            _ => None,
        };
        if owner.is_some_and(|o| o != issued.account) {
            // An installation token sees its own account's repositories only.
            return Decision::Reply(Reply::not_found(), None);
        }
        Decision::Admit
    }

    /// The App's JWT checked as GitHub checks it.
    fn check_jwt(&self, bearer: Option<&str>) -> Result<(), Reply> {
        let refuse = |message: &str| {
            Reply::error(
                401,
                message,
                "/apps/apps#create-an-installation-access-token-for-an-app",
            )
        };
        let undecodable = "A JSON web token could not be decoded";
        let Some(jwt) = bearer.filter(|b| !b.is_empty()) else {
            return Err(refuse(
                "You must authenticate with a JSON web token to access this endpoint",
            ));
        };
        let parts: Vec<&str> = jwt.split('.').collect();
        let [header, claims, signature] = parts.as_slice() else {
            return Err(refuse(undecodable));
        };
        let decode = |part: &str| URL_SAFE_NO_PAD.decode(part).ok();
        let json = |part: &str| decode(part).and_then(|b| serde_json::from_slice::<Value>(&b).ok());
        let (Some(header), Some(claims), Some(signature)) =
            (json(header), json(claims), decode(signature))
        else {
            return Err(refuse(undecodable));
        };
        if header["alg"] != "RS256" {
            return Err(refuse(undecodable));
        }
        let signed = &jwt[..jwt.rfind('.').unwrap_or(0)];
        UnparsedPublicKey::new(&RSA_PKCS1_2048_8192_SHA256, &self.public_key)
            .verify(signed.as_bytes(), &signature)
            .map_err(|_| refuse(undecodable))?;
        let iss = match &claims["iss"] {
            Value::Number(n) => n.as_u64(),
            Value::String(s) => s.parse().ok(),
            _ => None,
        };
        if iss != Some(self.app.app_id) {
            return Err(refuse("'Issuer' claim ('iss') must be this App's id"));
        }
        let now = (epoch_millis() / 1000) as i64;
        let (Some(iat), Some(exp)) = (claims["iat"].as_i64(), claims["exp"].as_i64()) else {
            return Err(refuse(undecodable));
        };
        if exp <= now {
            return Err(refuse(
                "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires",
            ));
        }
        // GitHub allows 10 minutes; a little clock drift is forgiven.
        if exp > now + 600 + 30 {
            return Err(refuse(
                "'Expiration time' claim ('exp') is too far in the future",
            ));
        }
        if iat > now + 30 {
            return Err(refuse(
                "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued",
            ));
        }
        Ok(())
    }

    /// `POST /app/installations/{id}/access_tokens`.
    fn issue(&mut self, id: &str) -> Reply {
        let account = self
            .app
            .installations
            .iter()
            .find(|(_, i)| i.to_string() == id)
            .map(|(owner, _)| owner.clone());
        let Some(account) = account else {
            return Reply::error(
                404,
                "Not Found",
                "/apps/apps#create-an-installation-access-token-for-an-app",
            );
        };
        let now = epoch_millis();
        let life = self.app.token_lifetime.as_secs().max(1);
        let claimed = self
            .app
            .claimed_lifetime
            .map_or(life, |c| c.as_secs().max(1));
        let now_secs = (now / 1000) as i64;
        let token = format!(
            "ghs_{}",
            &super::routes::fake_sha(&format!("{now}:{}:{account}", self.issued.len()))[..36]
        );
        // Accepted for exactly its lifetime; `expires_at` (whole seconds) says no later.
        self.issued.push(Issued {
            token: token.clone(),
            account,
            expires: now + u128::from(life) * 1000,
        });
        let expires_at = chrono::DateTime::from_timestamp(now_secs + claimed as i64, 0)
            .unwrap_or_default()
            .format("%Y-%m-%dT%H:%M:%SZ")
            .to_string();
        Reply::json(
            201,
            &json!({
                "token": token,
                "expires_at": expires_at,
                "permissions": {"actions": "read", "contents": "read", "metadata": "read"},
                "repository_selection": "all",
            }),
        )
    }

    /// `GET /repos/{o}/{r}/installation` and the account's own.
    fn installation(&self, owner: &str) -> Reply {
        let owner = owner.to_ascii_lowercase();
        match self.app.installations.get(&owner) {
            Some(id) => Reply::json(
                200,
                &json!({
                    "id": id,
                    "app_id": self.app.app_id,
                    "account": {"login": owner, "type": "Organization"},
                    "repository_selection": "all",
                    "access_tokens_url": format!("/app/installations/{id}/access_tokens"),
                    "target_type": "Organization",
                    "permissions": {"actions": "read", "contents": "read", "metadata": "read"},
                    "events": ["workflow_run", "workflow_job"],
                }),
            ),
            None => Reply::error(
                404,
                "Not Found",
                "/apps/apps#get-a-repository-installation-for-the-authenticated-app",
            ),
        }
    }
}
