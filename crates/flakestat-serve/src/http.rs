//! The HTTP side: `POST /webhook` (GitHub's deliveries), `GET /healthz`, `GET /metrics`.
//!
//! A delivery is answered only after its row is committed to the queue, and before any work:
//! GitHub gives up after 10 seconds and never retries. The order of the checks is the order of
//! what can be known: the path and method, the content type (GitHub's "application/json"
//! setting; the form-encoded one is refused with 415), the size (413 from `Content-Length`
//! alone, or as soon as the body passes the cap: the rest is never read), then the signature
//! over the whole body (401), then the event and the payload. The signature is computed as the
//! body arrives; of a `workflow_run` or `workflow_job` body at most [`KEPT_BODY`] is kept to be
//! read once it checks, of any other nothing, so a connection holds little memory whatever it
//! sends.
//!
//! What one sender can hold is bounded: at most `max_connections` open at once (one more
//! closes the oldest connection with no request in progress, or is answered 503 when every one
//! has one), `header_timeout` to send a request's header (an idle keep-alive connection is
//! closed after it), `body_timeout` for its body (408). A delivery waits at most `queue_wait`
//! for the store's lock and as long again for its write, then is answered 503; `/metrics` and
//! `/healthz` read the queue's figures afresh when the store answers within [`FRESH_WAIT`], and
//! else answer with the last ones read (every second, [`read_queue_figures`]): they never wait
//! on a busy or lost store.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use chrono::Utc;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::{CONNECTION, CONTENT_LENGTH, CONTENT_TYPE, HeaderValue};
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tokio::time::{Instant, timeout_at};

use super::payload::{self, Event};
use super::{KEPT_BODY, Shared};
use flakestat_store::{Delivery, Queued};

/// How long a stop waits for answers in progress before it drops their connections.
const DRAIN: Duration = Duration::from_secs(5);
/// The pause after a failed `accept` (out of file descriptors): a retry at once would spin.
const ACCEPT_PAUSE: Duration = Duration::from_millis(100);
/// How often the queue's figures are read for `/metrics` and `/healthz`.
const FIGURES_EVERY: Duration = Duration::from_secs(1);
/// How long `/metrics` and `/healthz` wait for a fresh read of the queue's figures before they
/// answer with the last ones read.
const FRESH_WAIT: Duration = Duration::from_millis(500);
/// The answer to a connection past the cap when every open one is in a request: written
/// without waiting (a fresh socket's buffer takes it), then the connection is closed.
const FULL: &[u8] =
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n\
content-length: 35\r\nconnection: close\r\n\r\ntoo many connections; try again later\n";

/// The open connections, oldest first, and whether each is in a request.
#[derive(Default)]
struct Open {
    next: u64,
    by_age: BTreeMap<u64, (tokio::task::AbortHandle, Arc<AtomicBool>)>,
    by_task: HashMap<tokio::task::Id, u64>,
}

impl Open {
    fn add(&mut self, handle: tokio::task::AbortHandle, busy: Arc<AtomicBool>) {
        self.next += 1;
        self.by_task.insert(handle.id(), self.next);
        self.by_age.insert(self.next, (handle, busy));
    }

    fn remove(&mut self, task: tokio::task::Id) {
        if let Some(seq) = self.by_task.remove(&task) {
            self.by_age.remove(&seq);
        }
    }

    /// Closes the oldest connection with no request in progress; `false` when there is none.
    fn close_oldest_idle(&mut self) -> bool {
        let oldest = self
            .by_age
            .iter()
            .find(|(_, (_, busy))| !busy.load(Ordering::Relaxed))
            .map(|(seq, _)| *seq);
        let Some(seq) = oldest else {
            return false;
        };
        if let Some((handle, _)) = self.by_age.remove(&seq) {
            self.by_task.remove(&handle.id());
            handle.abort();
        }
        true
    }
}

/// Marks a connection in a request while it lives.
struct InRequest(Arc<AtomicBool>);

impl InRequest {
    fn new(busy: &Arc<AtomicBool>) -> InRequest {
        busy.store(true, Ordering::Relaxed);
        InRequest(busy.clone())
    }
}

impl Drop for InRequest {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Relaxed);
    }
}

/// Accepts connections until `stop` resolves or the worker dies (`died`: its panics in a row,
/// returned), then lets each connection finish the request it is answering (up to [`DRAIN`]).
pub(crate) async fn accept_until(
    listener: TcpListener,
    shared: Arc<Shared>,
    stop: impl std::future::Future<Output = ()> + Send,
    mut died: tokio::sync::oneshot::Receiver<u32>,
) -> Option<u32> {
    let (stopping, stopped) = tokio::sync::watch::channel(false);
    let mut connections = JoinSet::new();
    let mut open = Open::default();
    let mut dead = None;
    // The worker ended without dying (a stop): serve on until `stop`.
    let mut worker_ended = false;
    tokio::pin!(stop);
    loop {
        let stream = tokio::select! {
            _ = &mut stop => break,
            panics = &mut died, if !worker_ended => {
                dead = panics.ok();
                if dead.is_some() {
                    break;
                }
                worker_ended = true;
                continue;
            }
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    shared.say.say_now_and_then("accept", || {
                        format!("cannot accept a connection: {e} (pausing {ACCEPT_PAUSE:?})")
                    });
                    tokio::time::sleep(ACCEPT_PAUSE).await;
                    continue;
                }
            },
            Some(ended) = connections.join_next_with_id(), if !connections.is_empty() => {
                match ended {
                    Ok((task, ())) => open.remove(task),
                    Err(e) => open.remove(e.id()),
                }
                continue;
            }
        };
        if open.by_age.len() >= shared.config.max_connections {
            if open.close_oldest_idle() {
                shared.metrics.connection("closed_idle");
            } else {
                shared.metrics.connection("refused_full");
                let _ = stream.try_write(FULL);
                drop(stream);
                continue;
            }
        }
        shared.metrics.connection("accepted");
        let busy = Arc::new(AtomicBool::new(false));
        let handle = connections.spawn(connection(
            stream,
            shared.clone(),
            busy.clone(),
            stopped.clone(),
        ));
        open.add(handle, busy);
    }
    drop(listener);
    let _ = stopping.send(true);
    let _ = tokio::time::timeout(DRAIN, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    dead
}

/// One connection: its requests until it closes, times out, is closed for a newer one, or the
/// server stops (then the request in progress is finished).
async fn connection(
    stream: tokio::net::TcpStream,
    shared: Arc<Shared>,
    busy: Arc<AtomicBool>,
    mut stopped: tokio::sync::watch::Receiver<bool>,
) {
    let header_timeout = shared.config.header_timeout;
    let service = service_fn(move |req| {
        let shared = shared.clone();
        let in_request = InRequest::new(&busy);
        async move {
            let response = answer(&shared, req).await;
            drop(in_request);
            Ok::<_, std::convert::Infallible>(response)
        }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout);
    let connection = builder.serve_connection(TokioIo::new(stream), service);
    tokio::pin!(connection);
    tokio::select! {
        _ = connection.as_mut() => {}
        _ = stopped.changed() => {
            connection.as_mut().graceful_shutdown();
            let _ = connection.await;
        }
    }
}

/// One request's answer.
async fn answer(shared: &Arc<Shared>, req: Request<Incoming>) -> Response<Full<Bytes>> {
    match (req.method(), req.uri().path()) {
        (&Method::GET, "/healthz") => {
            read_figures(shared, Some(FRESH_WAIT)).await;
            healthz(shared)
        }
        (&Method::GET, "/metrics") => {
            read_figures(shared, Some(FRESH_WAIT)).await;
            metrics(shared)
        }
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

fn healthz(shared: &Arc<Shared>) -> Response<Full<Bytes>> {
    let (healthy, body) = shared
        .health
        .report(Utc::now(), shared.config.max_queue_age);
    let status = if healthy {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    text(status, &body)
}

fn metrics(shared: &Arc<Shared>) -> Response<Full<Bytes>> {
    let body = shared.metrics.render(shared.health.figures(), Utc::now());
    let mut response = Response::new(Full::new(Bytes::from(body)));
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    response
}

/// Reads the queue's figures every [`FIGURES_EVERY`] through the front's connection, for
/// `/metrics` and `/healthz`.
pub(crate) async fn read_queue_figures(shared: Arc<Shared>) {
    let mut every = tokio::time::interval(FIGURES_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        read_figures(&shared, None).await;
    }
}

/// One read of the queue's figures, waiting at most `limit` (`None`: as long as it takes): a
/// read that fails marks the store unhealthy; one that does not come in time leaves the last
/// figures to age (which `/healthz` says after a while).
async fn read_figures(shared: &Arc<Shared>, limit: Option<Duration>) {
    let read = shared.front.run(|front| front.queue_stats());
    let read = match limit {
        Some(limit) => match tokio::time::timeout(limit, read).await {
            Ok(read) => read,
            Err(_) => return,
        },
        None => read.await,
    };
    match read {
        Ok(stats) => shared.health.queue_read(stats, Utc::now()),
        Err(e) => {
            shared.health.store_failed(Utc::now(), e.to_string());
            shared.say.say_now_and_then("figures", || {
                format!("cannot read the webhook queue's figures: {e}")
            });
        }
    }
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
            closing(text(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "the webhook's content type must be application/json\n",
            )),
        );
    }
    let cap = shared.config.max_body;
    let too_large = || {
        (
            unverified,
            "too_large",
            closing(text(
                StatusCode::PAYLOAD_TOO_LARGE,
                &format!("the body is over the {cap}-byte cap\n"),
            )),
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
    let (parts, mut body) = req.into_parts();
    let header = |name: &str| parts.headers.get(name).map(HeaderValue::as_bytes);
    let event = Event::parse(header("x-github-event"));
    // Only the two events' bodies are read after the check; of the others nothing is kept.
    let keep = matches!(event, Event::WorkflowRun | Event::WorkflowJob);
    let mut verifier = shared.config.secret.verifier(header("x-hub-signature-256"));
    let mut kept: Vec<u8> = Vec::new();
    let mut over_kept = false;
    let mut received: u64 = 0;
    let deadline = Instant::now() + shared.config.body_timeout;
    loop {
        let frame = match timeout_at(deadline, body.frame()).await {
            Err(_) => {
                return (
                    unverified,
                    "timeout",
                    closing(text(
                        StatusCode::REQUEST_TIMEOUT,
                        &format!(
                            "the body did not arrive within {} s\n",
                            shared.config.body_timeout.as_secs_f64()
                        ),
                    )),
                );
            }
            Ok(None) => break,
            Ok(Some(Ok(frame))) => frame,
            Ok(Some(Err(_))) => {
                return (
                    unverified,
                    "bad_request",
                    closing(text(
                        StatusCode::BAD_REQUEST,
                        "the body could not be read\n",
                    )),
                );
            }
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        received += data.len() as u64;
        if received > cap {
            return too_large();
        }
        verifier.update(&data);
        if keep && !over_kept {
            if kept.len() + data.len() <= KEPT_BODY {
                kept.extend_from_slice(&data);
            } else {
                over_kept = true;
                kept = Vec::new();
            }
        }
    }
    if !verifier.verifies() {
        return (
            unverified,
            "unauthorized",
            text(
                StatusCode::UNAUTHORIZED,
                "X-Hub-Signature-256 is missing or does not match the webhook's secret\n",
            ),
        );
    }
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
    if over_kept {
        return (
            event,
            "too_large",
            text(
                StatusCode::PAYLOAD_TOO_LARGE,
                &format!(
                    "a {} payload over {KEPT_BODY} bytes is not read\n",
                    event.as_str()
                ),
            ),
        );
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
    let parsed = match payload::parse(event, &kept) {
        Ok(parsed) => parsed,
        Err(why) => {
            return (
                event,
                "bad_request",
                text(StatusCode::BAD_REQUEST, &format!("{why}\n")),
            );
        }
    };
    drop(kept);
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
    let (outcome, response) = queue(shared, delivery).await;
    (event, outcome, response)
}

/// Stores the delivery's queue row through the front's connection, waiting at most
/// `queue_wait` for the connection's turn and as long again for the write (whose busy timeout
/// is `queue_wait`): a store another writer holds, or a server that does not answer, is a 503
/// within GitHub's 10 seconds, never a late answer. A row whose turn had not come when the
/// answer went is not written (`StoreHandle::run`: the caller stopped waiting).
async fn queue(shared: &Arc<Shared>, delivery: Delivery) -> (&'static str, Response<Full<Bytes>>) {
    let unavailable = |detail: &str| {
        text(
            StatusCode::SERVICE_UNAVAILABLE,
            &format!(
                "the store cannot take the delivery now ({detail}); GitHub's \"Redeliver\" sends it again\n"
            ),
        )
    };
    let wait = shared.config.queue_wait;
    // The connection's turn within `wait`, the write within as long again.
    let deadline = Instant::now() + 2 * wait;
    let work = delivery.work;
    let write = shared.front.run(move |front| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            front.queue_delivery(&delivery)
        }))
    });
    let stored = match timeout_at(deadline, write).await {
        Ok(Ok(stored)) => stored,
        Ok(Err(_)) => {
            return ("store_error", unavailable("its write failed"));
        }
        Err(_) => {
            shared.say.say_now_and_then("queue_timeout", || {
                format!(
                    "a delivery was refused (503): the store's connection was busy, its queue row not written within {} s",
                    2.0 * wait.as_secs_f64()
                )
            });
            return ("store_timeout", unavailable("busy"));
        }
    };
    match stored {
        Ok(queued) => {
            shared.health.store_ok();
            match queued {
                Queued::New => {
                    if work {
                        shared.wake.wake();
                    }
                    ("queued", text(StatusCode::ACCEPTED, "queued\n"))
                }
                Queued::Duplicate => ("duplicate", text(StatusCode::OK, "already received\n")),
                Queued::AlreadyIngested => (
                    "already_ingested",
                    text(
                        StatusCode::OK,
                        "already ingested: this run attempt is stored\n",
                    ),
                ),
            }
        }
        Err(e) => {
            let busy = matches!(e, flakestat_store::StoreError::Busy { .. });
            if busy {
                shared.say.say_now_and_then("queue_timeout", || {
                    format!(
                        "a delivery was refused (503): other writers held the store longer than {} s",
                        wait.as_secs_f64()
                    )
                });
            } else {
                shared.health.store_failed(Utc::now(), e.to_string());
                shared
                    .say
                    .say_now_and_then("queue_error", || format!("cannot queue a delivery: {e}"));
            }
            (
                if busy { "store_timeout" } else { "store_error" },
                unavailable(if busy { "busy" } else { "failing" }),
            )
        }
    }
}

/// `response`, closing the connection after it (the rest of a refused body is never read).
fn closing(mut response: Response<Full<Bytes>>) -> Response<Full<Bytes>> {
    response
        .headers_mut()
        .insert(CONNECTION, HeaderValue::from_static("close"));
    response
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
