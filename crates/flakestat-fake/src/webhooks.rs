//! The fake GitHub as a webhook sender: a dataset's `workflow_run` (`requested`, `in_progress`,
//! `completed`) and `workflow_job` (`queued`, `in_progress`, `completed`) deliveries, in the
//! order they happened, posted to a receiver (`flakestat serve`) the way GitHub posts them:
//! `Content-Type: application/json`, `X-GitHub-Event`, `X-GitHub-Delivery` (a GUID),
//! `X-Hub-Signature-256` (HMAC-SHA256 of the body under the webhook's secret), GitHub's
//! `User-Agent` and hook headers.
//!
//! The payloads are built from the same JSON the REST routes serve for the same run and job
//! (`routes::run_json`, `routes::job_json`), with the status, conclusion and times the event
//! had when it was sent: a `requested` run is `queued` with no conclusion, a `queued` job has
//! no runner yet. A completed run's payload is what `GET /actions/runs/{id}/attempts/{n}`
//! answers.
//!
//! GitHub's delivery is not perfect, and a receiver must cope: [`Mischief`] makes the same
//! mess on purpose, seeded and deterministic: a fraction redelivered (same delivery id, a
//! little later), adjacent pairs swapped, a fraction dropped (GitHub never retries one), and
//! forged deliveries (a real-looking `workflow_run completed` of a run the receiver has not
//! seen, signed with another key).

use crate::rng::Rng;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use hmac::{Hmac, Mac};
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::{Request, Uri};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use sha2::Sha256;

use super::dataset::{Dataset, FakeAttempt, FakeRun};
use super::routes::{
    commit_author, job_json, repo_full_json, run_json, ts, user_json, workflow_json,
};
use flakestat_core::model::{Job, JobId, RunId, Status, Timestamp};

/// One event GitHub would send, at the time it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookEvent {
    pub at: Timestamp,
    /// `workflow_run` or `workflow_job`.
    pub event: &'static str,
    pub action: &'static str,
    pub run: RunId,
    pub run_attempt: u32,
    pub job: Option<JobId>,
    pub body: Arc<Vec<u8>>,
}

/// Which runs' events: those created in `[since, until)` (as a survey's listing chooses them),
/// every run when both are `None`. Events after the dataset's `now` have not happened.
#[derive(Debug, Clone, Copy, Default)]
pub struct EventWindow {
    pub since: Option<Timestamp>,
    pub until: Option<Timestamp>,
}

impl EventWindow {
    fn contains(&self, t: Timestamp) -> bool {
        self.since.is_none_or(|s| t >= s) && self.until.is_none_or(|u| t < u)
    }
}

/// Every event of the window's runs, in the order GitHub sends them: by time, and at one
/// instant a run's request before its jobs' queueing, a job's completion before its run's.
/// `api` is the API root the payloads' URLs name (`https://api.github.com`).
pub fn webhook_events(ds: &Dataset, window: EventWindow, api: &str) -> Vec<WebhookEvent> {
    let mut events: Vec<(Timestamp, u8, u64, WebhookEvent)> = Vec::new();
    let mut runs: Vec<&FakeRun> = ds
        .runs
        .iter()
        .filter(|r| window.contains(r.run.created_at))
        .collect();
    runs.sort_by_key(|r| r.run.id);
    for fake in runs {
        for attempt in &fake.attempts {
            for (rank, e) in attempt_events(ds, fake, attempt, api) {
                events.push((e.at, rank, e.job.map_or(0, |j| j.0), e));
            }
        }
    }
    events.retain(|(at, ..)| *at <= ds.now);
    events.sort_by(|a, b| {
        (a.0, a.1, a.3.run, a.2, a.3.run_attempt).cmp(&(b.0, b.1, b.3.run, b.2, b.3.run_attempt))
    });
    events.into_iter().map(|(.., e)| e).collect()
}

/// One attempt's events with their rank among events of the same instant.
fn attempt_events(
    ds: &Dataset,
    fake: &FakeRun,
    attempt: &FakeAttempt,
    api: &str,
) -> Vec<(u8, WebhookEvent)> {
    let run = &fake.run;
    let requested = if attempt.attempt == 1 {
        run.created_at
    } else {
        attempt.created_at
    };
    let started = attempt.jobs.iter().filter_map(|j| j.started_at).min();
    let completed = attempt.conclusion.as_ref().map(|_| {
        attempt
            .jobs
            .iter()
            .filter_map(|j| j.completed_at)
            .max()
            .unwrap_or(attempt.created_at)
            .max(requested)
    });
    let mut out = Vec::new();
    let run_event = |action: &'static str, at: Timestamp| {
        let mut body = run_json(ds, fake, Some(attempt), api);
        if action != "completed" {
            body["status"] = json!(if action == "requested" {
                "queued"
            } else {
                "in_progress"
            });
            body["conclusion"] = Value::Null;
            body["updated_at"] = json!(ts(at));
        }
        WebhookEvent {
            at,
            event: "workflow_run",
            action,
            run: run.id,
            run_attempt: attempt.attempt,
            job: None,
            body: Arc::new(envelope(
                ds,
                action,
                "workflow_run",
                body,
                Some(workflow_json(ds, run, api)),
                &sender(ds, fake),
                api,
            )),
        }
    };
    out.push((0, run_event("requested", requested)));
    if let Some(at) = started {
        out.push((2, run_event("in_progress", at.max(requested))));
    }
    if let Some(at) = completed {
        out.push((5, run_event("completed", at)));
    }
    for job in &attempt.jobs {
        let job_event = |action: &'static str, at: Timestamp| WebhookEvent {
            at,
            event: "workflow_job",
            action,
            run: run.id,
            run_attempt: attempt.attempt,
            job: Some(job.id),
            body: Arc::new(envelope(
                ds,
                action,
                "workflow_job",
                job_as_sent(ds, fake, job, action, api),
                None,
                &sender(ds, fake),
                api,
            )),
        };
        out.push((1, job_event("queued", job.created_at)));
        if let Some(at) = job.started_at.filter(|_| job.status != Status::Queued) {
            out.push((3, job_event("in_progress", at)));
        }
        if let Some(at) = job.completed_at.filter(|_| job.status == Status::Completed) {
            out.push((4, job_event("completed", at)));
        }
    }
    out
}

/// The job's REST JSON as it stood when `action` was sent.
fn job_as_sent(ds: &Dataset, fake: &FakeRun, job: &Job, action: &str, api: &str) -> Value {
    let mut body = job_json(ds, fake, job, api);
    match action {
        "queued" => {
            body["status"] = json!("queued");
            body["started_at"] = json!(ts(job.created_at));
            for field in [
                "conclusion",
                "completed_at",
                "runner_id",
                "runner_name",
                "runner_group_id",
                "runner_group_name",
            ] {
                body[field] = Value::Null;
            }
            body["steps"] = json!([]);
        }
        "in_progress" => {
            body["status"] = json!("in_progress");
            body["conclusion"] = Value::Null;
            body["completed_at"] = Value::Null;
            body["steps"] = json!([]);
        }
        _ => {}
    }
    body
}

fn sender(ds: &Dataset, fake: &FakeRun) -> String {
    commit_author(ds, &fake.run.head_sha).0
}

/// The delivery's body: the action, the object, the repository and the sender, as GitHub's
/// examples (octokit/webhooks) show them.
fn envelope(
    ds: &Dataset,
    action: &str,
    key: &str,
    object: Value,
    workflow: Option<Value>,
    sender: &str,
    api: &str,
) -> Vec<u8> {
    let mut body = serde_json::Map::new();
    body.insert("action".to_string(), json!(action));
    body.insert(key.to_string(), object);
    if let Some(workflow) = workflow {
        body.insert("workflow".to_string(), workflow);
    }
    body.insert("repository".to_string(), repo_full_json(ds, api));
    body.insert("sender".to_string(), user_json(sender, api));
    serde_json::to_vec(&Value::Object(body)).expect("JSON values serialize")
}

/// GitHub's imperfections, on purpose. Fractions are of the events (0.1: one in ten).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Mischief {
    /// Delivered a second time with the same delivery id, a few deliveries later.
    pub duplicates: f64,
    /// Of the adjacent pairs, swapped.
    pub reordered: f64,
    /// Never delivered.
    pub dropped: f64,
    /// Extra deliveries signed with another key.
    pub forged: u32,
    pub seed: u64,
}

/// How a delivery came to be in the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Original,
    /// Its delivery id was sent before.
    Redelivery,
    /// Signed with another key; the receiver must refuse it.
    Forged,
}

/// One POST to the receiver.
#[derive(Debug, Clone)]
pub struct WebhookDelivery {
    /// `X-GitHub-Delivery`.
    pub id: String,
    pub kind: Kind,
    pub event: &'static str,
    pub action: &'static str,
    pub run: RunId,
    pub body: Arc<Vec<u8>>,
}

/// The deliveries to send, in order, and what the mischief did.
#[derive(Debug, Clone)]
pub struct DeliveryPlan {
    pub deliveries: Vec<WebhookDelivery>,
    /// The events before the mischief.
    pub events: usize,
    /// The delivery ids dropped (never sent).
    pub dropped: Vec<String>,
    pub reordered_pairs: usize,
}

/// The events as deliveries with the mischief applied (drops, then redeliveries, then swapped
/// pairs, then the forged ones at random places). Same events and mischief, same plan.
pub fn plan_deliveries(
    ds: &Dataset,
    events: Vec<WebhookEvent>,
    mischief: &Mischief,
    api: &str,
) -> DeliveryPlan {
    let mut rng = Rng(mischief.seed);
    let total = events.len();
    let delivered_runs: std::collections::BTreeSet<RunId> = events.iter().map(|e| e.run).collect();
    let mut originals: Vec<WebhookDelivery> = events
        .into_iter()
        .map(|e| WebhookDelivery {
            id: rng.guid(),
            kind: Kind::Original,
            event: e.event,
            action: e.action,
            run: e.run,
            body: e.body,
        })
        .collect();
    let mut dropped = Vec::new();
    originals.retain(|d| {
        let keep = !rng.chance(mischief.dropped);
        if !keep {
            dropped.push(d.id.clone());
        }
        keep
    });
    // Each delivery at an even slot; a redelivery lands at an odd slot 1 to 16 deliveries on.
    let mut slotted: Vec<(usize, WebhookDelivery)> = Vec::with_capacity(originals.len());
    for (i, d) in originals.into_iter().enumerate() {
        if rng.chance(mischief.duplicates) {
            let later = i + 1 + rng.below(16) as usize;
            slotted.push((
                later * 2 + 1,
                WebhookDelivery {
                    kind: Kind::Redelivery,
                    ..d.clone()
                },
            ));
        }
        slotted.push((i * 2, d));
    }
    slotted.sort_by_key(|(slot, _)| *slot);
    let mut deliveries: Vec<WebhookDelivery> = slotted.into_iter().map(|(_, d)| d).collect();
    let mut reordered_pairs = 0;
    let mut i = 0;
    while i + 1 < deliveries.len() {
        if rng.chance(mischief.reordered) {
            deliveries.swap(i, i + 1);
            reordered_pairs += 1;
            i += 2;
        } else {
            i += 1;
        }
    }
    for n in 0..mischief.forged {
        let forged = forged_delivery(ds, &delivered_runs, n, &mut rng, api);
        let at = rng.below(deliveries.len() as u64 + 1) as usize;
        deliveries.insert(at, forged);
    }
    DeliveryPlan {
        deliveries,
        events: total,
        dropped,
        reordered_pairs,
    }
}

/// A `workflow_run completed` the receiver must refuse: of a completed run of the dataset
/// outside the delivered runs (so an accepted forgery would show as a stored run), else of a
/// made-up run id past the dataset's.
fn forged_delivery(
    ds: &Dataset,
    delivered: &std::collections::BTreeSet<RunId>,
    n: u32,
    rng: &mut Rng,
    api: &str,
) -> WebhookDelivery {
    let outside: Vec<&FakeRun> = ds
        .runs
        .iter()
        .filter(|r| !delivered.contains(&r.run.id) && r.run.status == Status::Completed)
        .collect();
    let (run, body) = match outside.get(rng.below(outside.len() as u64) as usize) {
        Some(fake) => {
            let last = fake.attempts.last().expect("a run has an attempt");
            let completed = attempt_events(ds, fake, last, api)
                .into_iter()
                .find(|(_, e)| e.event == "workflow_run" && e.action == "completed")
                .expect("a completed run has its completion");
            (fake.run.id, completed.1.body)
        }
        _ => {
            let template = ds
                .runs
                .iter()
                .find(|r| r.run.status == Status::Completed)
                .or(ds.runs.first())
                .expect("a dataset with runs");
            let id =
                RunId(ds.runs.iter().map(|r| r.run.id.0).max().unwrap_or(0) + 1 + u64::from(n));
            let mut object = run_json(ds, template, None, api);
            object["id"] = json!(id.0);
            let body = envelope(
                ds,
                "completed",
                "workflow_run",
                object,
                Some(workflow_json(ds, &template.run, api)),
                &sender(ds, template),
                api,
            );
            (id, Arc::new(body))
        }
    };
    WebhookDelivery {
        id: rng.guid(),
        kind: Kind::Forged,
        event: "workflow_run",
        action: "completed",
        run,
        body,
    }
}

/// `sha256=<hex>`: HMAC-SHA256 of `body` under `secret`, as GitHub signs.
pub fn sign(secret: &[u8], body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes a key of any length");
    mac.update(body);
    let digest = mac.finalize().into_bytes();
    let mut out = String::with_capacity(71);
    out.push_str("sha256=");
    for b in digest {
        use std::fmt::Write as _;
        let _ = write!(out, "{b:02x}");
    }
    out
}

/// Why a plan could not be sent.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    #[error("{0} is not an http:// URL with a host and port")]
    Url(String),
    #[error("cannot reach {to}: {source}")]
    Connect { to: String, source: std::io::Error },
    #[error("delivery {id} to {to}: {message}")]
    Request {
        id: String,
        to: String,
        message: String,
    },
}

/// Posts each delivery of `plan` to `to` (`http://HOST:PORT/PATH`), signed with `secret` (the
/// forged ones with another key), over `connections` keep-alive connections (1: strictly in
/// order, each answered before the next is sent). Returns each delivery's status, in the
/// plan's order.
pub async fn send(
    to: &str,
    secret: &[u8],
    plan: &DeliveryPlan,
    connections: usize,
) -> Result<Vec<u16>, SendError> {
    let uri: Uri = to.parse().map_err(|_| SendError::Url(to.to_string()))?;
    if uri.scheme_str() != Some("http") {
        return Err(SendError::Url(to.to_string()));
    }
    let authority = uri
        .authority()
        .filter(|a| a.port_u16().is_some())
        .ok_or_else(|| SendError::Url(to.to_string()))?
        .to_string();
    let path = uri
        .path_and_query()
        .map_or("/".to_string(), |p| p.as_str().to_string());
    let target = Arc::new(Target {
        to: to.to_string(),
        authority,
        path,
        secret: secret.to_vec(),
        forged_secret: [secret, b" (forged)"].concat(),
    });
    let next = Arc::new(AtomicUsize::new(0));
    let statuses = Arc::new(std::sync::Mutex::new(vec![0u16; plan.deliveries.len()]));
    let deliveries = Arc::new(plan.deliveries.clone());
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..connections.max(1) {
        let (target, next, statuses, deliveries) = (
            target.clone(),
            next.clone(),
            statuses.clone(),
            deliveries.clone(),
        );
        tasks.spawn(async move {
            let mut connection = None;
            loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(delivery) = deliveries.get(i) else {
                    return Ok(());
                };
                let status = target.post(&mut connection, delivery).await?;
                statuses.lock().expect("statuses")[i] = status;
            }
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.expect("a sender task does not panic")?;
    }
    let statuses = statuses.lock().expect("statuses").clone();
    Ok(statuses)
}

type Connection = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

struct Target {
    to: String,
    authority: String,
    path: String,
    secret: Vec<u8>,
    forged_secret: Vec<u8>,
}

impl Target {
    async fn connect(&self) -> Result<Connection, SendError> {
        let connect_error = |source| SendError::Connect {
            to: self.to.clone(),
            source,
        };
        let stream = tokio::net::TcpStream::connect(&self.authority)
            .await
            .map_err(connect_error)?;
        let _ = stream.set_nodelay(true);
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| connect_error(std::io::Error::other(e)))?;
        tokio::spawn(async move {
            let _ = connection.await;
        });
        Ok(sender)
    }

    /// One POST; a connection the receiver closed is opened again once.
    async fn post(
        &self,
        connection: &mut Option<Connection>,
        delivery: &WebhookDelivery,
    ) -> Result<u16, SendError> {
        let mut tries = 0;
        loop {
            tries += 1;
            let mut sender = match connection.take() {
                Some(sender) if sender.is_ready() => sender,
                _ => self.connect().await?,
            };
            if sender.ready().await.is_err() {
                if tries < 2 {
                    continue;
                }
                sender = self.connect().await?;
            }
            let answer = sender.send_request(self.request(delivery)).await;
            match answer {
                Ok(response) => {
                    let status = response.status().as_u16();
                    let _ = response.into_body().collect().await;
                    *connection = Some(sender);
                    return Ok(status);
                }
                Err(e) if tries < 2 && (e.is_closed() || e.is_incomplete_message()) => {}
                Err(e) => {
                    return Err(SendError::Request {
                        id: delivery.id.clone(),
                        to: self.to.clone(),
                        message: e.to_string(),
                    });
                }
            }
        }
    }

    fn request(&self, delivery: &WebhookDelivery) -> Request<Full<Bytes>> {
        let key = match delivery.kind {
            Kind::Forged => &self.forged_secret,
            Kind::Original | Kind::Redelivery => &self.secret,
        };
        Request::post(self.path.as_str())
            .header("Host", self.authority.as_str())
            .header("Accept", "*/*")
            .header("Content-Type", "application/json")
            .header("User-Agent", "GitHub-Hookshot/flakestat-fake")
            .header("X-GitHub-Event", delivery.event)
            .header("X-GitHub-Delivery", delivery.id.as_str())
            .header("X-GitHub-Hook-ID", "471111111")
            .header("X-GitHub-Hook-Installation-Target-Type", "repository")
            .header("X-Hub-Signature-256", sign(key, &delivery.body))
            .body(Full::new(Bytes::from(delivery.body.as_ref().clone())))
            .expect("a valid request")
    }
}

/// The draws this module adds to the fake's generator (`crate::rng`).
impl Rng {
    /// True with probability `p`.
    fn chance(&mut self, p: f64) -> bool {
        let draw = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        draw < p
    }

    /// A delivery id in GitHub's form (a GUID).
    fn guid(&mut self) -> String {
        let (a, b) = (self.next(), self.next());
        format!(
            "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0xffff,
            b >> 48,
            b & 0xffff_ffff_ffff
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{SyntheticSpec, synthetic};

    const API: &str = "https://api.github.com";

    fn parse(body: &[u8]) -> Value {
        serde_json::from_slice(body).unwrap()
    }

    /// Each attempt's three run events and each job's three, in time order, a job's completion
    /// before its run's; the completed run's payload is the REST route's attempt JSON.
    #[test]
    fn events_come_in_time_order_with_the_rest_routes_json() {
        let ds = synthetic(&SyntheticSpec::default());
        let events = webhook_events(&ds, EventWindow::default(), API);
        let attempts: usize = ds.runs.iter().map(|r| r.attempts.len()).sum();
        let jobs: usize = ds.jobs().count();
        assert_eq!(events.len(), 3 * attempts + 3 * jobs);
        assert!(events.windows(2).all(|w| w[0].at <= w[1].at));

        let fake = ds.runs.iter().find(|r| r.attempts.len() == 2).unwrap();
        let of_run: Vec<&WebhookEvent> = events.iter().filter(|e| e.run == fake.run.id).collect();
        let position = |event: &str, action: &str, attempt: u32| {
            of_run
                .iter()
                .position(|e| e.event == event && e.action == action && e.run_attempt == attempt)
                .unwrap_or_else(|| panic!("no {event} {action} of attempt {attempt}"))
        };
        assert!(position("workflow_run", "requested", 1) < position("workflow_job", "queued", 1));
        assert!(
            position("workflow_job", "completed", 1) < position("workflow_run", "completed", 1)
        );
        assert!(
            position("workflow_run", "completed", 1) < position("workflow_run", "requested", 2)
        );

        let completed = &of_run[position("workflow_run", "completed", 1)];
        let body = parse(&completed.body);
        assert_eq!(body["action"], "completed");
        assert_eq!(
            body["workflow_run"],
            run_json(&ds, fake, fake.attempt(1), API),
            "what GET /actions/runs/{{id}}/attempts/1 serves"
        );
        assert_eq!(body["repository"]["full_name"], "octo/demo");
        let requested = parse(&of_run[position("workflow_run", "requested", 2)].body);
        assert_eq!(requested["workflow_run"]["status"], "queued");
        assert_eq!(requested["workflow_run"]["conclusion"], Value::Null);
        assert_eq!(requested["workflow_run"]["run_attempt"], 2);
        let queued = parse(&of_run[position("workflow_job", "queued", 1)].body);
        assert_eq!(queued["workflow_job"]["status"], "queued");
        assert_eq!(queued["workflow_job"]["runner_name"], Value::Null);
        assert_eq!(queued["workflow_job"]["run_id"], fake.run.id.0);
    }

    /// A window keeps the runs created in it, as a listing would.
    #[test]
    fn a_window_keeps_the_runs_created_in_it() {
        let ds = synthetic(&SyntheticSpec::default());
        let since = ds.runs[10].run.created_at;
        let until = ds.runs[20].run.created_at;
        let events = webhook_events(
            &ds,
            EventWindow {
                since: Some(since),
                until: Some(until),
            },
            API,
        );
        let runs: std::collections::BTreeSet<RunId> = events.iter().map(|e| e.run).collect();
        let expected: std::collections::BTreeSet<RunId> =
            ds.runs[10..20].iter().map(|r| r.run.id).collect();
        assert_eq!(runs, expected);
    }

    /// The mischief is what it says: about the fractions asked, redeliveries keep their id,
    /// forged deliveries name runs that were not delivered, and one seed gives one plan.
    #[test]
    fn the_mischief_is_seeded_and_does_what_it_says() {
        let ds = synthetic(&SyntheticSpec {
            runs: 200,
            ..SyntheticSpec::default()
        });
        let window = EventWindow {
            since: Some(ds.runs[20].run.created_at),
            until: None,
        };
        let events = webhook_events(&ds, window, API);
        let mischief = Mischief {
            duplicates: 0.1,
            reordered: 0.1,
            dropped: 0.05,
            forged: 2,
            seed: 7,
        };
        let plan = plan_deliveries(&ds, events.clone(), &mischief, API);
        let n = events.len() as f64;
        let count = |kind: Kind| plan.deliveries.iter().filter(|d| d.kind == kind).count();
        let originals = count(Kind::Original);
        assert_eq!(originals + plan.dropped.len(), events.len());
        assert!(
            (0.03..0.07).contains(&(plan.dropped.len() as f64 / n)),
            "{}",
            plan.dropped.len()
        );
        let redelivered = count(Kind::Redelivery) as f64 / originals as f64;
        assert!((0.07..0.13).contains(&redelivered), "{redelivered}");
        assert!(plan.reordered_pairs > 0);
        assert_eq!(count(Kind::Forged), 2);

        let ids: std::collections::BTreeSet<&str> = plan
            .deliveries
            .iter()
            .filter(|d| d.kind == Kind::Original)
            .map(|d| d.id.as_str())
            .collect();
        assert_eq!(ids.len(), originals, "each original has its own id");
        for d in plan
            .deliveries
            .iter()
            .filter(|d| d.kind == Kind::Redelivery)
        {
            assert!(ids.contains(d.id.as_str()), "a redelivery repeats an id");
        }
        for d in plan.deliveries.iter().filter(|d| d.kind == Kind::Forged) {
            assert!(!ids.contains(d.id.as_str()));
            assert!(
                ds.runs[..20].iter().any(|r| r.run.id == d.run),
                "a run not delivered"
            );
            assert_eq!(parse(&d.body)["workflow_run"]["id"], d.run.0);
        }
        let again = plan_deliveries(&ds, events, &mischief, API);
        let order = |p: &DeliveryPlan| {
            p.deliveries
                .iter()
                .map(|d| d.id.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(order(&plan), order(&again));
    }

    /// GitHub's documented example ("Validating webhook deliveries").
    #[test]
    fn signs_as_github_does() {
        assert_eq!(
            sign(b"It's a Secret to Everybody", b"Hello, World!"),
            "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
        );
    }
}
