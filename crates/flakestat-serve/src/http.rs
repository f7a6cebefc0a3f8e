//! The HTTP side: `POST /webhook` (GitHub's deliveries), `GET /healthz`, `GET /metrics`.
//!
//! A delivery is answered only after its row is committed to the queue, and before any work:
//! GitHub gives up after 10 seconds and never retries. The order of the checks is the order of
//! what can be known: the path and method, the content type (GitHub's "application/json"
//! setting; the form-encoded one is refused with 415), the size (413 from `Content-Length`
//! alone, or once the body passes the cap), then the signature over the whole body (401:
//! nothing of an unsigned body is read), then the event and the payload.

use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{CONTENT_LENGTH, CONTENT_TYPE, HeaderValue};
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::task::JoinSet;

use super::Shared;
use super::payload::{self, Event};
use flakestat_store::Delivery;

/// How long a stop waits for answers in progress before it drops their connections.
const DRAIN: Duration = Duration::from_secs(5);

/// Accepts connections until `stop` resolves, then lets each connection finish the request it
/// is answering (up to [`DRAIN`]).
pub(crate) async fn accept_until(
    listener: TcpListener,
    shared: Arc<Shared>,
    stop: impl std::future::Future<Output = ()> + Send,
) {
    let (stopping, stopped) = tokio::sync::watch::channel(false);
    let mut connections = JoinSet::new();
    tokio::pin!(stop);
    loop {
        let stream = tokio::select! {
            _ = &mut stop => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => continue,
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
        };
        let shared = shared.clone();
        let mut stopped = stopped.clone();
        connections.spawn(async move {
            let service = service_fn(move |req| {
                let shared = shared.clone();
                async move { Ok::<_, std::convert::Infallible>(answer(&shared, req).await) }
            });
            let connection = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service);
            tokio::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => {}
                _ = stopped.changed() => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            }
        });
    }
    drop(listener);
    let _ = stopping.send(true);
    let _ = tokio::time::timeout(DRAIN, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
}

/// One request's answer.
async fn answer(shared: &Arc<Shared>, req: Request<Incoming>) -> Response<Full<Bytes>> {
    match (req.method(), req.uri().path()) {
        (&Method::GET, "/healthz") => text(StatusCode::OK, "ok\n"),
        (&Method::GET, "/metrics") => metrics(shared).await,
        (&Method::POST, "/webhook") => {
            let (event, outcome, response) = delivery(shared, req).await;
            shared.metrics.delivery(event, outcome);
            response
        }
        (_, "/webhook" | "/healthz" | "/metrics") => {
            text(StatusCode::METHOD_NOT_ALLOWED, "method not allowed\n")
        }
        _ => text(
            StatusCode::NOT_FOUND,
            "not found: the webhook URL is /webhook\n",
        ),
    }
}

async fn metrics(shared: &Arc<Shared>) -> Response<Full<Bytes>> {
    let store = shared.store.clone();
    let stats =
        tokio::task::spawn_blocking(move || store.lock().expect("store lock").queue_stats())
            .await
            .ok()
            .and_then(Result::ok);
    let body = shared.metrics.render(stats, Utc::now());
    let mut response = Response::new(Full::new(Bytes::from(body)));
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    response
}

/// A delivery's event label, outcome label and answer.
async fn delivery(
    shared: &Arc<Shared>,
    req: Request<Incoming>,
) -> (Event, &'static str, Response<Full<Bytes>>) {
    // Until the signature checks, the sender is anyone: no label of theirs is kept.
    let unverified = Event::Other;
    let is_json = req
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    if !is_json {
        return (
            unverified,
            "unsupported_media_type",
            text(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "the webhook's content type must be application/json\n",
            ),
        );
    }
    let cap = shared.config.max_body;
    let too_large = || {
        (
            unverified,
            "too_large",
            text(
                StatusCode::PAYLOAD_TOO_LARGE,
                &format!("the body is over the {cap}-byte cap\n"),
            ),
        )
    };
    let declared = req
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > cap) {
        return too_large();
    }
    let (parts, body) = req.into_parts();
    let body = match Limited::new(body, usize::try_from(cap).unwrap_or(usize::MAX))
        .collect()
        .await
    {
        Ok(collected) => collected.to_bytes(),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => return too_large(),
        Err(_) => {
            return (
                unverified,
                "bad_request",
                text(StatusCode::BAD_REQUEST, "the body could not be read\n"),
            );
        }
    };
    let header = |name: &str| parts.headers.get(name).map(HeaderValue::as_bytes);
    if !shared
        .config
        .secret
        .verifies(header("x-hub-signature-256"), &body)
    {
        return (
            unverified,
            "unauthorized",
            text(
                StatusCode::UNAUTHORIZED,
                "X-Hub-Signature-256 is missing or does not match the webhook's secret\n",
            ),
        );
    }
    let event = Event::parse(header("x-github-event"));
    match event {
        Event::Ping => return (event, "ping", text(StatusCode::OK, "pong\n")),
        Event::Other => {
            return (
                event,
                "ignored",
                text(
                    StatusCode::ACCEPTED,
                    "ignored: not a workflow_run or workflow_job event\n",
                ),
            );
        }
        Event::WorkflowRun | Event::WorkflowJob => {}
    }
    let Some(id) = header("x-github-delivery")
        .and_then(|v| std::str::from_utf8(v).ok())
        .filter(|v| !v.is_empty() && v.len() <= 100 && v.bytes().all(|b| b.is_ascii_graphic()))
        .map(str::to_string)
    else {
        return (
            event,
            "bad_request",
            text(
                StatusCode::BAD_REQUEST,
                "X-GitHub-Delivery is missing or malformed\n",
            ),
        );
    };
    let parsed = match payload::parse(event, &body) {
        Ok(parsed) => parsed,
        Err(why) => {
            return (
                event,
                "bad_request",
                text(StatusCode::BAD_REQUEST, &format!("{why}\n")),
            );
        }
    };
    if !shared.config.repos.contains(&parsed.repo) {
        return (
            event,
            "other_repository",
            text(
                StatusCode::ACCEPTED,
                "ignored: not a repository this server follows\n",
            ),
        );
    }
    let delivery = Delivery {
        id,
        event: event.as_str().to_string(),
        action: parsed.action,
        repo: parsed.repo,
        run: parsed.run,
        run_attempt: parsed.run_attempt,
        run_created_at: parsed.run_created_at,
        received_at: Utc::now(),
        work: parsed.completed_run,
    };
    let work = delivery.work;
    let store = shared.store.clone();
    let stored = tokio::task::spawn_blocking(move || {
        store.lock().expect("store lock").queue_delivery(&delivery)
    })
    .await;
    match stored {
        Ok(Ok(true)) => {
            if work {
                shared.wake.wake();
            }
            (event, "queued", text(StatusCode::ACCEPTED, "queued\n"))
        }
        Ok(Ok(false)) => (
            event,
            "duplicate",
            text(StatusCode::OK, "already received\n"),
        ),
        Ok(Err(e)) => {
            shared.say.say(format!("cannot queue a delivery: {e}"));
            (
                event,
                "store_error",
                text(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the store cannot take the delivery now\n",
                ),
            )
        }
        Err(_) => (
            event,
            "store_error",
            text(
                StatusCode::SERVICE_UNAVAILABLE,
                "the store cannot take the delivery now\n",
            ),
        ),
    }
}

fn text(status: StatusCode, body: &str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())));
    *response.status_mut() = status;
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}
