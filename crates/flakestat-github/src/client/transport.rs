//! The HTTP under the GitHub client: one hyper-util connection pool over rustls, sending one
//! request as `client.rs` decided it and answering its head with the body still unread.
//!
//! It does little on purpose; every rule about what to send, when to retry, how long to wait
//! and how much to read is `client.rs`'s. What it adds to each request: one
//! `User-Agent: flakestat/<version>` (GitHub asks for one naming the application), GitHub's
//! `X-GitHub-Api-Version` on the API origin, a JSON body's `Content-Type`, and a credential as
//! `Authorization: Bearer …` **only when the request goes to the API origin** (scheme, host and
//! port of the API root). A caller that hands a credential along with a URL elsewhere (a log
//! host, a `Link` that points away) gets a request without it: the redirect rules of
//! `client.rs` decide per hop, and this check is the floor under them.
//!
//! The connector is rustls with the ring provider (no aws-lc) and the system's roots, http1,
//! 15 s to connect and 60 s per read of the connection (a body that stalls fails, one that keeps
//! coming does not; `client.rs` bounds the whole request). URLs are absolute: the API root's own
//! path (`https://HOST/api/v3`) is already in every URL the client builds, so nothing is added
//! to a path here, not even on a hop to another host. Building it needs no runtime; sending does.

use std::time::Duration;

use http::{HeaderMap, HeaderValue, Method, Request};
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;

use super::{USER_AGENT, origin_of};
use crate::FetchError;

/// The REST API version flakestat's wire types follow (GitHub's current one).
const API_VERSION: &str = "2022-11-28";

/// How long a connection (TCP and TLS) may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// How long one read of an open connection may wait (an answer's head, each part of its body).
const READ_TIMEOUT: Duration = Duration::from_secs(60);

type Connector = hyper_timeout::TimeoutConnector<hyper_rustls::HttpsConnector<HttpConnector>>;

/// A credential sent as `Authorization: Bearer …`: a token, an App installation's token, the
/// App's JWT. Marked sensitive for hyper; its `Debug` never shows it.
#[derive(Clone)]
pub(crate) struct Bearer(HeaderValue);

impl Bearer {
    pub(crate) fn new(token: &str) -> Result<Bearer, FetchError> {
        let mut value = HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| {
            FetchError::Config("the token holds characters an HTTP header cannot carry".to_string())
        })?;
        value.set_sensitive(true);
        Ok(Bearer(value))
    }

    /// The credential itself (to scrub it from an answer that echoes it).
    pub(crate) fn secret(&self) -> &[u8] {
        self.0
            .as_bytes()
            .strip_prefix(b"Bearer ")
            .unwrap_or_default()
    }
}

impl std::fmt::Debug for Bearer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Bearer(***)")
    }
}

/// Why a request got no answer, or its body stopped: the cause chain on one line.
#[derive(Debug)]
pub(crate) enum TransportError {
    /// The URL cannot go on a request line.
    Url(String),
    /// No answer: connecting, TLS, sending, or reading the head failed.
    Send(hyper_util::client::legacy::Error),
    /// The body broke off.
    Body(hyper::Error),
}

impl std::fmt::Display for TransportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let top: &dyn std::error::Error = match self {
            TransportError::Url(message) => return f.write_str(message),
            TransportError::Send(e) => e,
            TransportError::Body(e) => e,
        };
        f.write_str(&chain(top))
    }
}

/// An error and its causes, `: `-joined; a cause whose text its parent already shows is not
/// repeated ("client error (Connect): tcp connect error: Connection refused (os error 111)").
fn chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let shown = cause.to_string();
        if !text.contains(&shown) {
            text = format!("{text}: {shown}");
        }
        source = cause.source();
    }
    text
}

/// One connection pool for every host the client talks to, and the API origin: the only place
/// a credential goes.
pub(crate) struct Transport {
    client: Client<Connector, Full<Bytes>>,
    /// `scheme://host[:port]` of the API root (`origin_of`).
    api_origin: String,
}

impl Transport {
    /// The pool for an API root (already checked: `check_api_url`).
    pub(crate) fn new(api_url: &str) -> Result<Transport, FetchError> {
        let provider = rustls::crypto::CryptoProvider::get_default()
            .cloned()
            .unwrap_or_else(|| std::sync::Arc::new(rustls::crypto::ring::default_provider()));
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_provider_and_native_roots(provider)
            .map_err(|e| {
                FetchError::Internal(format!(
                    "cannot set up TLS for the HTTP client: {e} (the system's root certificates: \
                     install them, Debian: ca-certificates)"
                ))
            })?
            .https_or_http()
            .enable_http1()
            .build();
        let mut connector = hyper_timeout::TimeoutConnector::new(https);
        connector.set_connect_timeout(Some(CONNECT_TIMEOUT));
        connector.set_read_timeout(Some(READ_TIMEOUT));
        let client = Client::builder(hyper_util::rt::TokioExecutor::new()).build(connector);
        Ok(Transport {
            client,
            api_origin: origin_of(api_url),
        })
    }

    /// `scheme://host[:port]` of the API root: the only origin a credential goes to.
    pub(crate) fn api_origin(&self) -> &str {
        &self.api_origin
    }

    /// Sends one request to an absolute http(s) `url` and answers its head; the body is read
    /// by the caller, frame by frame. `json` is the body (`Content-Type: application/json`);
    /// `bearer` goes along only if `url` is on the API origin.
    pub(crate) async fn send(
        &self,
        method: Method,
        url: &str,
        headers: HeaderMap,
        json: Option<&serde_json::Value>,
        bearer: Option<&Bearer>,
    ) -> Result<http::Response<Incoming>, TransportError> {
        let uri: http::Uri = url
            .parse()
            .map_err(|e| TransportError::Url(format!("{url:?} is not a request URL ({e})")))?;
        if uri.scheme().is_none() || uri.authority().is_none() {
            return Err(TransportError::Url(format!(
                "{url:?} is not an absolute URL"
            )));
        }
        let at_api = origin_of(url) == self.api_origin;
        // hyper sends no length with an empty body, and a server may refuse a POST without one
        // (411 Length Required): say 0, as octocrab did.
        let says_empty = !matches!(method, Method::GET | Method::HEAD);
        let mut request = Request::builder().method(method).uri(uri);
        let head = request
            .headers_mut()
            .expect("a request built from a parsed URI");
        head.extend(headers);
        // A credential travels only as `bearer`, under the origin check below: one slipped in
        // among the caller's headers is dropped.
        head.remove(http::header::AUTHORIZATION);
        head.insert(
            http::header::USER_AGENT,
            HeaderValue::from_static(USER_AGENT),
        );
        if at_api {
            head.insert(
                "x-github-api-version",
                HeaderValue::from_static(API_VERSION),
            );
            if let Some(Bearer(value)) = bearer {
                head.insert(http::header::AUTHORIZATION, value.clone());
            }
        }
        let body = match json {
            Some(json) => {
                head.insert(
                    http::header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                );
                Full::new(Bytes::from(json.to_string()))
            }
            None => {
                if says_empty {
                    head.insert(http::header::CONTENT_LENGTH, HeaderValue::from_static("0"));
                }
                Full::new(Bytes::new())
            }
        };
        let request = request
            .body(body)
            .map_err(|e| TransportError::Url(format!("cannot make a request of {url:?} ({e})")))?;
        self.client
            .request(request)
            .await
            .map_err(TransportError::Send)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bearer_never_shows_in_debug_output() {
        let bearer = Bearer::new("ghp_secret").unwrap();
        assert_eq!(format!("{bearer:?}"), "Bearer(***)");
        assert!(bearer.0.is_sensitive());
        assert!(Bearer::new("line\nbreak").is_err());
    }

    #[test]
    fn a_cause_the_message_already_shows_is_not_repeated() {
        #[derive(Debug)]
        struct E(&'static str, Option<Box<E>>);
        impl std::fmt::Display for E {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.0)
            }
        }
        impl std::error::Error for E {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                self.1.as_deref().map(|e| e as _)
            }
        }
        let io = E("Connection refused (os error 111)", None);
        let tcp = E("tcp connect error", Some(Box::new(io)));
        let top = E("client error (Connect)", Some(Box::new(tcp)));
        assert_eq!(
            chain(&top),
            "client error (Connect): tcp connect error: Connection refused (os error 111)"
        );
        let wrapped = E(
            "client error (Connect)",
            Some(Box::new(E("client error (Connect)", None))),
        );
        assert_eq!(chain(&wrapped), "client error (Connect)");
    }

    /// Serves one request on a loopback port and answers the head it read, lower-cased.
    async fn one_request_head() -> (String, tokio::task::JoinHandle<String>) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/repos/o/r", listener.local_addr().unwrap());
        let served = tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut head = Vec::new();
            let mut buf = [0u8; 1024];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = socket.read(&mut buf).await.unwrap();
                assert!(n > 0, "the request ended early");
                head.extend_from_slice(&buf[..n]);
            }
            socket
                .write_all(b"HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n")
                .await
                .unwrap();
            String::from_utf8_lossy(&head).to_ascii_lowercase()
        });
        (url, served)
    }

    #[tokio::test]
    async fn the_bearer_goes_to_the_api_origin_and_nowhere_else() {
        let bearer = Bearer::new("tok-123").unwrap();
        let (url, served) = one_request_head().await;
        let api = Transport::new(&url).unwrap();
        let answer = api
            .send(Method::GET, &url, HeaderMap::new(), None, Some(&bearer))
            .await
            .unwrap();
        assert_eq!(answer.status(), 204);
        let head = served.await.unwrap();
        assert!(head.starts_with("get /repos/o/r http/1.1\r\n"), "{head}");
        assert!(head.contains("authorization: bearer tok-123\r\n"), "{head}");
        assert!(
            head.contains("x-github-api-version: 2022-11-28\r\n"),
            "{head}"
        );
        assert_eq!(head.matches("user-agent: flakestat/").count(), 1, "{head}");

        // The same pool, a URL on another port: another origin, so no credential.
        let (elsewhere, served) = one_request_head().await;
        api.send(
            Method::GET,
            &elsewhere,
            HeaderMap::new(),
            None,
            Some(&bearer),
        )
        .await
        .unwrap();
        let head = served.await.unwrap();
        assert!(!head.contains("authorization"), "{head}");
        assert!(!head.contains("tok-123"), "{head}");
        assert!(!head.contains("x-github-api-version"), "{head}");
        assert!(head.contains("user-agent: flakestat/"), "{head}");
    }

    #[tokio::test]
    async fn a_body_says_its_type_and_length_and_a_relative_url_is_refused() {
        let (url, served) = one_request_head().await;
        let api = Transport::new(&url).unwrap();
        let body = serde_json::json!({"body": "hi"});
        api.send(Method::PATCH, &url, HeaderMap::new(), Some(&body), None)
            .await
            .unwrap();
        let head = served.await.unwrap();
        assert!(head.starts_with("patch /repos/o/r "), "{head}");
        assert!(
            head.contains("content-type: application/json\r\n"),
            "{head}"
        );
        assert!(head.contains("content-length: 13\r\n"), "{head}");
        let (url, served) = one_request_head().await;
        api.send(Method::POST, &url, HeaderMap::new(), None, None)
            .await
            .unwrap();
        let head = served.await.unwrap();
        assert!(head.starts_with("post /repos/o/r "), "{head}");
        assert!(head.contains("content-length: 0\r\n"), "{head}");
        assert!(!head.contains("content-type"), "{head}");
        let relative = api
            .send(Method::GET, "/repos/o/r", HeaderMap::new(), None, None)
            .await
            .unwrap_err();
        assert!(
            relative.to_string().contains("not an absolute URL"),
            "{relative}"
        );
    }
}
