//! Check runs, as GitHub's REST description has them: `POST /repos/{o}/{r}/check-runs` (201),
//! `PATCH /repos/{o}/{r}/check-runs/{id}` (200), `GET /repos/{o}/{r}/check-runs/{id}` and
//! `GET /repos/{o}/{r}/commits/{ref}/check-runs` (`{total_count, check_runs}`, filtered by
//! `check_name`, `status` and `filter=latest|all`, paginated). Only a GitHub App
//! writes check runs: any other caller (a personal or Actions token) is answered 403 `You must
//! authenticate via a GitHub App.`, as GitHub answers. A check run is created on a commit the
//! repository has (422 otherwise), `completed` needs a `conclusion`, and an `output` needs its
//! `title` and `summary` (422).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::dataset::Dataset;
use super::routes::{Ctx, Reply, fake_sha, paginated_page, ts};
use flakestat_core::model::Timestamp;

/// The App id the fake's check runs name (one App per server).
const FAKE_APP_ID: u64 = 0;

/// A check run an App created.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FakeCheckRun {
    pub id: u64,
    pub name: String,
    pub head_sha: String,
    /// `queued`, `in_progress` or `completed`.
    pub status: String,
    pub conclusion: Option<String>,
    pub title: Option<String>,
    pub summary: Option<String>,
    pub text: Option<String>,
    pub external_id: Option<String>,
    pub details_url: Option<String>,
    pub started_at: Timestamp,
    pub completed_at: Option<Timestamp>,
}

const STATUSES: [&str; 3] = ["queued", "in_progress", "completed"];
const CONCLUSIONS: [&str; 8] = [
    "action_required",
    "cancelled",
    "failure",
    "neutral",
    "success",
    "skipped",
    "stale",
    "timed_out",
];

fn not_an_app() -> Reply {
    Reply::error(
        403,
        "You must authenticate via a GitHub App.",
        "/rest/checks/runs#create-a-check-run",
    )
}

fn invalid(field: &str, code: &str) -> Reply {
    Reply::json(
        422,
        &json!({
            "message": "Invalid request.",
            "errors": [{"resource": "CheckRun", "code": code, "field": field}],
            "documentation_url": "https://docs.github.com/rest/checks/runs",
            "status": "422",
        }),
    )
}

/// Applies the fields a POST or PATCH body names to `run`; a 422 when one is not valid.
fn apply(run: &mut FakeCheckRun, body: &Value, now: Timestamp) -> Result<(), Reply> {
    if let Some(name) = body.get("name") {
        run.name = name
            .as_str()
            .filter(|s| !s.is_empty())
            .ok_or_else(|| invalid("name", "invalid"))?
            .to_string();
    }
    for (field, slot) in [
        ("external_id", &mut run.external_id),
        ("details_url", &mut run.details_url),
    ] {
        if let Some(v) = body.get(field) {
            *slot = v.as_str().map(str::to_string);
        }
    }
    if let Some(status) = body.get("status") {
        let status = status
            .as_str()
            .filter(|s| STATUSES.contains(s))
            .ok_or_else(|| invalid("status", "invalid"))?;
        run.status = status.to_string();
    }
    if let Some(conclusion) = body.get("conclusion").filter(|c| !c.is_null()) {
        let conclusion = conclusion
            .as_str()
            .filter(|c| CONCLUSIONS.contains(c))
            .ok_or_else(|| invalid("conclusion", "invalid"))?;
        run.conclusion = Some(conclusion.to_string());
        // A conclusion completes the run, as GitHub does.
        run.status = "completed".to_string();
    }
    if run.status == "completed" {
        if run.conclusion.is_none() {
            return Err(invalid("conclusion", "missing_field"));
        }
        run.completed_at.get_or_insert(now);
    }
    if let Some(output) = body.get("output") {
        let text = |k: &str| output.get(k).and_then(Value::as_str).map(str::to_string);
        let (Some(title), Some(summary)) = (text("title"), text("summary")) else {
            return Err(invalid("output", "missing_field"));
        };
        if summary.chars().count() > 65_535 {
            return Err(invalid("output.summary", "too_long"));
        }
        run.title = Some(title);
        run.summary = Some(summary);
        run.text = text("text");
    }
    Ok(())
}

fn body_json(ctx: &Ctx<'_>) -> Option<Value> {
    serde_json::from_slice::<Value>(ctx.body)
        .ok()
        .filter(Value::is_object)
}

/// Whether the repository has the commit: a run's head or a listed commit.
fn commit_known(ds: &Dataset, sha: &str) -> bool {
    ds.runs.iter().any(|r| r.run.head_sha.0 == sha) || ds.commits.iter().any(|c| c.sha.0 == sha)
}

pub(crate) fn create(ds: &mut Dataset, ctx: &Ctx<'_>) -> Reply {
    if !ctx.app {
        return not_an_app();
    }
    let Some(body) = body_json(ctx) else {
        return invalid("body", "invalid");
    };
    let (Some(name), Some(head_sha)) = (
        body.get("name").and_then(Value::as_str),
        body.get("head_sha").and_then(Value::as_str),
    ) else {
        return invalid("name", "missing_field");
    };
    if !commit_known(ds, head_sha) {
        return Reply::error(
            422,
            &format!("No commit found for SHA: {head_sha}"),
            "/rest/checks/runs",
        );
    }
    let id = ds
        .check_runs
        .iter()
        .map(|c| c.id)
        .max()
        .unwrap_or(4_000_000_000)
        + 1;
    let mut run = FakeCheckRun {
        id,
        name: name.to_string(),
        head_sha: head_sha.to_string(),
        status: "queued".to_string(),
        conclusion: None,
        title: None,
        summary: None,
        text: None,
        external_id: None,
        details_url: None,
        started_at: ds.now,
        completed_at: None,
    };
    if let Err(refused) = apply(&mut run, &body, ds.now) {
        return refused;
    }
    let reply = Reply::json(201, &check_run_json(ds, &run, ctx.api));
    ds.check_runs.push(run);
    reply
}

pub(crate) fn update(ds: &mut Dataset, id: u64, ctx: &Ctx<'_>) -> Reply {
    if !ctx.app {
        return not_an_app();
    }
    let Some(body) = body_json(ctx) else {
        return invalid("body", "invalid");
    };
    let now = ds.now;
    let Some(run) = ds.check_runs.iter_mut().find(|c| c.id == id) else {
        return Reply::not_found();
    };
    let mut changed = run.clone();
    if let Err(refused) = apply(&mut changed, &body, now) {
        return refused;
    }
    *run = changed.clone();
    Reply::json(200, &check_run_json(ds, &changed, ctx.api))
}

pub(crate) fn get(ds: &Dataset, id: u64, ctx: &Ctx<'_>) -> Reply {
    match ds.check_runs.iter().find(|c| c.id == id) {
        Some(run) => Reply::json(200, &check_run_json(ds, run, ctx.api)),
        None => Reply::not_found(),
    }
}

/// `GET /commits/{ref}/check-runs`: `ref` a sha, a branch or a tag.
pub(crate) fn list_for_ref(ds: &Dataset, reference: &str, ctx: &Ctx<'_>) -> Reply {
    let sha = ds
        .branches
        .get(reference)
        .map(|s| s.0.clone())
        .unwrap_or_else(|| reference.to_string());
    let q = ctx.query;
    let mut runs: Vec<&FakeCheckRun> = ds
        .check_runs
        .iter()
        .filter(|c| c.head_sha == sha)
        .filter(|c| q.get("check_name").is_none_or(|n| c.name == n))
        .filter(|c| q.get("status").is_none_or(|s| c.status == s))
        .collect();
    // Newest first; `filter=latest` (the default) keeps the newest of each name.
    runs.sort_by_key(|c| std::cmp::Reverse(c.id));
    if q.get("filter") != Some("all") {
        let mut seen = std::collections::BTreeSet::new();
        runs.retain(|c| seen.insert(c.name.clone()));
    }
    let items: Vec<Value> = runs
        .iter()
        .map(|c| check_run_json(ds, c, ctx.api))
        .collect();
    let total = items.len();
    paginated_page(
        items,
        ctx,
        |page| json!({"total_count": total, "check_runs": page}),
    )
}

fn check_run_json(ds: &Dataset, c: &FakeCheckRun, api: &str) -> Value {
    let repo = &ds.repo;
    json!({
        "id": c.id,
        "node_id": format!("CR_kwDO{}", &fake_sha(&format!("check run {}", c.id))[..10]),
        "head_sha": c.head_sha,
        "external_id": c.external_id,
        "url": format!("{api}/repos/{repo}/check-runs/{}", c.id),
        "html_url": format!("https://github.com/{repo}/runs/{}", c.id),
        "details_url": c.details_url,
        "status": c.status,
        "conclusion": c.conclusion,
        "started_at": ts(c.started_at),
        "completed_at": c.completed_at.map(ts),
        "output": {
            "title": c.title,
            "summary": c.summary,
            "text": c.text,
            "annotations_count": 0,
            "annotations_url": format!("{api}/repos/{repo}/check-runs/{}/annotations", c.id),
        },
        "name": c.name,
        "check_suite": {"id": 5_000_000_000u64 + c.id % 1_000_000},
        "app": {"id": FAKE_APP_ID, "slug": "flakestat", "name": "flakestat"},
        "pull_requests": [],
    })
}
