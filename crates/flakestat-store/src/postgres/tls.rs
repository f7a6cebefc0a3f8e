//! PostgreSQL over TLS: what the store URL's `sslmode` and `sslrootcert` ask for, and the
//! rustls connector that does it (ring, as the GitHub client's transport; the system's roots
//! through `rustls-native-certs`, as hyper-rustls loads them there; `tokio-postgres-rustls`
//! between rustls and the driver, which also binds SCRAM to the TLS channel).
//!
//! flakestat reads these two parameters itself and hands the driver the rest of the URL: the
//! driver knows `disable`, `prefer` and `require` only, and checks no certificate. Here every
//! TLS connection checks the server's certificate (its chain to a trusted root, and the host
//! name the URL names), so a password or a team's logs never go to a server that is not the
//! one named:
//!
//! | `sslmode` | connection |
//! | --- | --- |
//! | absent, `disable` | plain TCP (as before TLS was known: an existing store URL changes nothing) |
//! | `prefer` | TLS when the server offers it, checked; plain when it has none |
//! | `require`, `verify-full` | TLS, checked; a server without TLS is refused |
//!
//! libpq's `prefer` (its default) and `require` encrypt without checking the certificate, and
//! `allow` and `verify-ca` check less than the table: flakestat refuses those two rather than
//! guess, and says what it accepts. `sslrootcert=FILE` (PEM) trusts that file's certificates
//! instead of the system's, for a managed server signed by its provider's own authority (for
//! example Amazon RDS's bundle); `sslrootcert=system` is the default.

use std::path::PathBuf;
use std::sync::Arc;

use percent_encoding::percent_decode_str;
use postgres::config::SslMode;
use rustls::RootCertStore;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use tokio_postgres_rustls::MakeRustlsConnect;

/// How a store URL asks to connect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TlsMode {
    /// Plain TCP.
    Disable,
    /// TLS when the server offers it (checked), else plain.
    Prefer,
    /// TLS, checked, or no connection.
    Require,
}

/// Whose certificates a TLS connection trusts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Roots {
    System,
    File(PathBuf),
}

/// The TLS part of a store URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TlsSettings {
    pub(crate) mode: TlsMode,
    pub(crate) roots: Roots,
}

impl TlsSettings {
    /// The driver's own setting for this mode.
    pub(crate) fn ssl_mode(&self) -> SslMode {
        match self.mode {
            TlsMode::Disable => SslMode::Disable,
            TlsMode::Prefer => SslMode::Prefer,
            TlsMode::Require => SslMode::Require,
        }
    }

    /// The connector, its roots loaded; `None` for plain TCP. Called once per store opened,
    /// the connector kept for the connections made again after a loss.
    pub(crate) fn connector(&self) -> Result<Option<MakeRustlsConnect>, String> {
        if self.mode == TlsMode::Disable {
            return Ok(None);
        }
        let roots = match &self.roots {
            Roots::System => system_roots()?,
            Roots::File(path) => file_roots(path)?,
        };
        let provider = rustls::crypto::CryptoProvider::get_default()
            .cloned()
            .unwrap_or_else(|| Arc::new(rustls::crypto::ring::default_provider()));
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("cannot set up TLS: {e}"))?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(Some(MakeRustlsConnect::new(config)))
    }
}

/// Splits the TLS parameters off a `postgres://` URL's query: the URL the driver reads (the
/// rest, as written) and the settings; or what is wrong with them.
pub(crate) fn split_tls(url: &str) -> Result<(String, TlsSettings), String> {
    let mut settings = TlsSettings {
        mode: TlsMode::Disable,
        roots: Roots::System,
    };
    let Some((base, query)) = url.split_once('?') else {
        return Ok((url.to_string(), settings));
    };
    let mut rest = Vec::new();
    for pair in query.split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let value = percent_decode_str(value)
            .decode_utf8()
            .map_err(|_| format!("{key}: not UTF-8"))?;
        match key {
            "sslmode" => {
                settings.mode = match value.as_ref() {
                    "disable" => TlsMode::Disable,
                    "prefer" => TlsMode::Prefer,
                    "require" | "verify-full" => TlsMode::Require,
                    other => {
                        return Err(format!(
                            "sslmode={other} is not one flakestat takes: disable, prefer, require \
                             or verify-full (every TLS connection checks the server's certificate \
                             and host name)"
                        ));
                    }
                }
            }
            "sslrootcert" => {
                settings.roots = match value.as_ref() {
                    "" => return Err("sslrootcert is empty: name a PEM file".to_string()),
                    "system" => Roots::System,
                    path => Roots::File(PathBuf::from(path)),
                }
            }
            _ => rest.push(pair),
        }
    }
    let driver = if rest.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", rest.join("&"))
    };
    Ok((driver, settings))
}

/// A failed TLS handshake in words, with its cause (the driver's own words name none) and,
/// for a certificate that did not check, what to do; `None` for any other error.
pub(crate) fn handshake_detail(err: &postgres::Error) -> Option<String> {
    let text = err.to_string();
    if text != "error performing TLS handshake" {
        return None;
    }
    let cause = std::error::Error::source(err)?.to_string();
    let hint = if cause.contains("certificate") {
        " (a server signed by an authority the system does not trust: name the authority's \
         certificate with sslrootcert=FILE in the URL)"
    } else {
        ""
    };
    Some(format!("{text}: {cause}{hint}"))
}

/// The system's roots, as the GitHub client's transport loads them.
fn system_roots() -> Result<RootCertStore, String> {
    let found = rustls_native_certs::load_native_certs();
    let mut roots = RootCertStore::empty();
    roots.add_parsable_certificates(found.certs);
    if roots.is_empty() {
        let why = found
            .errors
            .first()
            .map(|e| format!(" ({e})"))
            .unwrap_or_default();
        return Err(format!(
            "no trusted root certificates on this system{why}: install them (Debian: \
             ca-certificates), or name the server's authority with sslrootcert=FILE"
        ));
    }
    Ok(roots)
}

/// The certificates of a PEM file, every one of them trusted.
fn file_roots(path: &std::path::Path) -> Result<RootCertStore, String> {
    let shown = path.display();
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(path)
        .map_err(|e| format!("cannot read sslrootcert {shown}: {e}"))?
        .collect::<Result<_, _>>()
        .map_err(|e| format!("sslrootcert {shown} is not PEM certificates: {e}"))?;
    let mut roots = RootCertStore::empty();
    let (_, refused) = roots.add_parsable_certificates(certs);
    if roots.is_empty() {
        return Err(format!(
            "sslrootcert {shown} holds no certificate flakestat can use{}",
            if refused > 0 {
                format!(" ({refused} refused)")
            } else {
                String::new()
            }
        ));
    }
    Ok(roots)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(mode: TlsMode, roots: Roots) -> TlsSettings {
        TlsSettings { mode, roots }
    }

    /// Each `sslmode` flakestat takes, the parameters it reads taken out of what the driver
    /// reads, the rest kept as written (in order, encoded as it was).
    #[test]
    fn sslmode_and_sslrootcert_are_read_and_the_rest_goes_to_the_driver() {
        use Roots::{File, System};
        use TlsMode::{Disable, Prefer, Require};
        for (url, driver, want) in [
            (
                "postgres://db/x",
                "postgres://db/x",
                settings(Disable, System),
            ),
            (
                "postgres://db/x?sslmode=disable",
                "postgres://db/x",
                settings(Disable, System),
            ),
            (
                "postgres://u:p@db/x?sslmode=prefer&application_name=a",
                "postgres://u:p@db/x?application_name=a",
                settings(Prefer, System),
            ),
            (
                "postgres://db/x?connect_timeout=5&sslmode=require&options=-c%20a%3Db",
                "postgres://db/x?connect_timeout=5&options=-c%20a%3Db",
                settings(Require, System),
            ),
            (
                "postgres://db/x?sslmode=verify-full&sslrootcert=%2Fetc%2Frds.pem",
                "postgres://db/x",
                settings(Require, File("/etc/rds.pem".into())),
            ),
            (
                "postgres://db/x?sslrootcert=system&sslmode=require",
                "postgres://db/x",
                settings(Require, System),
            ),
        ] {
            assert_eq!(split_tls(url), Ok((driver.to_string(), want)), "{url}");
        }
    }

    /// What flakestat does not do is refused, naming what it takes, not guessed at.
    #[test]
    fn an_sslmode_that_checks_less_is_refused_naming_the_modes_taken() {
        for url in [
            "postgres://db/x?sslmode=allow",
            "postgres://db/x?sslmode=verify-ca",
            "postgres://db/x?sslmode=Require",
        ] {
            let err = split_tls(url).unwrap_err();
            assert!(
                err.contains("disable, prefer, require or verify-full"),
                "{err}"
            );
        }
        assert!(
            split_tls("postgres://db/x?sslrootcert=")
                .unwrap_err()
                .contains("PEM file")
        );
    }

    /// The driver's mode for each, and a connector only where TLS may be used, with roots
    /// loaded from the file named (a file with no certificate refused, saying so).
    #[test]
    fn each_mode_picks_the_driver_setting_and_a_connector() {
        let plain = settings(TlsMode::Disable, Roots::System);
        assert_eq!(plain.ssl_mode(), SslMode::Disable);
        assert!(plain.connector().unwrap().is_none());
        assert_eq!(
            settings(TlsMode::Prefer, Roots::System).ssl_mode(),
            SslMode::Prefer
        );

        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let err = settings(TlsMode::Require, Roots::File(empty))
            .connector()
            .err()
            .unwrap();
        assert!(err.contains("holds no certificate"), "{err}");
        let missing = dir.path().join("missing.pem");
        let err = settings(TlsMode::Require, Roots::File(missing))
            .connector()
            .err()
            .unwrap();
        assert!(err.contains("cannot read sslrootcert"), "{err}");
        let required = settings(TlsMode::Require, Roots::File(test_ca(dir.path())));
        assert_eq!(required.ssl_mode(), SslMode::Require);
        assert!(required.connector().unwrap().is_some());
    }

    /// A CA certificate in PEM, written into `dir` (`test-ca.pem`: a self-signed one made
    /// with `openssl req -x509` for this test, its key thrown away).
    fn test_ca(dir: &std::path::Path) -> PathBuf {
        let path = dir.join("ca.pem");
        std::fs::write(&path, TEST_CA).unwrap();
        path
    }

    const TEST_CA: &str = include_str!("test-ca.pem");

    /// Against the test server with TLS (`.ci/postgres.sh start` makes one when openssl is at
    /// hand, its authority in `FLAKESTAT_TEST_POSTGRES_CA`): `require` with that authority
    /// connects over TLS (the server says so), `prefer` too; `require` with the system's roots
    /// is refused (the authority is nobody's), naming the certificate and not the password;
    /// no `sslmode` stays plain.
    #[test]
    fn a_server_with_tls_is_reached_over_tls_only_when_its_certificate_checks() {
        use crate::postgres::{PgStore, PostgresUrl, fresh_schema_url};
        let (Ok(base), Ok(ca)) = (
            std::env::var("FLAKESTAT_TEST_POSTGRES"),
            std::env::var("FLAKESTAT_TEST_POSTGRES_CA"),
        ) else {
            eprintln!(
                "FLAKESTAT_TEST_POSTGRES or FLAKESTAT_TEST_POSTGRES_CA is not set: skipped \
                 (.ci/postgres.sh start, with openssl)"
            );
            return;
        };
        let store = fresh_schema_url(&base).unwrap();
        let ca: String =
            percent_encoding::utf8_percent_encode(&ca, percent_encoding::NON_ALPHANUMERIC)
                .collect();
        let over_tls = |params: &str| -> Result<bool, crate::StoreError> {
            let url = PostgresUrl::parse(&format!("{store}&{params}"))?;
            let opened = PgStore::open(&url)?;
            opened.with_client(|c| {
                Ok(c.query_one(
                    "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
                    &[],
                )?
                .get::<_, bool>(0))
            })
        };
        assert!(over_tls(&format!("sslmode=require&sslrootcert={ca}")).unwrap());
        assert!(over_tls(&format!("sslmode=verify-full&sslrootcert={ca}")).unwrap());
        assert!(over_tls(&format!("sslmode=prefer&sslrootcert={ca}")).unwrap());
        assert!(!over_tls("application_name=plain").unwrap());
        assert!(!over_tls("sslmode=disable").unwrap());

        let err = over_tls("sslmode=require").unwrap_err();
        let text = err.to_string();
        assert!(
            matches!(err, crate::StoreError::PostgresConnect { .. }),
            "{text}"
        );
        assert!(text.contains("certificate"), "{text}");
        let password = PostgresUrl::parse(&base).unwrap().password.unwrap();
        assert!(!text.contains(&password), "{text}");
    }
}
