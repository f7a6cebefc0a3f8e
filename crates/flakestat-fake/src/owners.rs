//! An owner's repository listing: `GET /orgs/{org}/repos` and `GET /users/{username}/repos`, as
//! GitHub's OpenAPI description has them (`repos/list-for-org`, `repos/list-for-user`): a bare
//! array of minimal repositories, paginated with `per_page` (≤ 100) and `page` and a `Link`
//! header; `type`, `sort` (`created`, `updated`, `pushed`, `full_name`) and `direction`
//! (default `asc` for `full_name`, `desc` otherwise). An organisation's listing defaults to
//! `sort=created`, a user's to `sort=full_name`. `/orgs/{user}/repos` is a 404, as on GitHub;
//! a user's listing shows public repositories only.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::dataset::Dataset;
use super::routes::{self, Ctx, Query, Reply};

/// Which owner listing a path asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum OwnerRoute {
    Org(String),
    User(String),
}

/// `/orgs/{org}/repos` or `/users/{username}/repos` (GET only).
pub(crate) fn parse_owner_route(method: &str, path: &str) -> Option<OwnerRoute> {
    if method != "GET" {
        return None;
    }
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    match segs.as_slice() {
        ["orgs", org, "repos"] if !org.is_empty() => Some(OwnerRoute::Org(org.to_string())),
        ["users", user, "repos"] if !user.is_empty() => Some(OwnerRoute::User(user.to_string())),
        _ => None,
    }
}

/// What answering a listing reads besides the datasets: which owners are users, the API
/// root, and the request's path and query (for the `Link` header).
pub(crate) struct OwnerListing<'a> {
    pub users: &'a BTreeSet<String>,
    pub api: &'a str,
    pub path: &'a str,
    pub query: &'a Query,
}

/// The listing, or 404 when the owner is unknown (or a user asked as an organisation).
pub(crate) fn list_owner_repos(
    datasets: &[Dataset],
    route: &OwnerRoute,
    access: bool,
    listing: &OwnerListing<'_>,
) -> Reply {
    let OwnerListing {
        users,
        api,
        path,
        query,
    } = *listing;
    let (owner, org) = match route {
        OwnerRoute::Org(o) => (o.as_str(), true),
        OwnerRoute::User(u) => (u.as_str(), false),
    };
    let is_user = users.contains(&owner.to_ascii_lowercase());
    let mut owned: Vec<&Dataset> = datasets
        .iter()
        .filter(|d| d.repo.owner.eq_ignore_ascii_case(owner))
        .collect();
    if (org && is_user) || (owned.is_empty() && !is_user) {
        return Reply::error(
            404,
            "Not Found",
            "/repos/repos#list-organization-repositories",
        );
    }
    // Private repositories: to members (a token with access) through the organisation only.
    owned.retain(|d| !d.private || (org && access));
    let kind = query
        .get("type")
        .unwrap_or(if org { "all" } else { "owner" });
    owned.retain(|d| match kind {
        "public" => !d.private,
        "private" => d.private,
        "forks" => d.fork,
        "sources" => !d.fork,
        _ => true,
    });
    let sort = query
        .get("sort")
        .unwrap_or(if org { "created" } else { "full_name" });
    let descending = match query.get("direction") {
        Some("asc") => false,
        Some("desc") => true,
        _ => sort != "full_name",
    };
    owned.sort_by(|a, b| {
        let by = match sort {
            "pushed" => a.last_push().cmp(&b.last_push()),
            "updated" => a.now.cmp(&b.now),
            "created" => created(a).cmp(&created(b)),
            _ => std::cmp::Ordering::Equal,
        };
        by.then_with(|| {
            a.repo
                .to_string()
                .to_ascii_lowercase()
                .cmp(&b.repo.to_string().to_ascii_lowercase())
        })
    });
    if descending {
        owned.reverse();
    }
    let items: Vec<Value> = owned.iter().map(|d| minimal_repo(d, api)).collect();
    let no_log = |_: flakestat_core::model::JobId| String::new();
    let no_archive = |_: flakestat_core::model::RunId, _: u32| String::new();
    let ctx = Ctx {
        api,
        path,
        query,
        log_url: &no_log,
        archive_url: &no_archive,
        artifact_url: &|_| String::new(),
        stale_attempt_logs: false,
        body: &[],
        login: "anonymous",
        app: false,
    };
    routes::paginated(items, &ctx)
}

fn created(ds: &Dataset) -> flakestat_core::model::Timestamp {
    ds.commits.iter().map(|c| c.date).min().unwrap_or(ds.now)
}

/// A `minimal-repository` with the fields an owner's listing carries.
fn minimal_repo(ds: &Dataset, api: &str) -> Value {
    let mut v = routes::repo_min_json(ds, api);
    let extra = json!({
        "fork": ds.fork,
        "archived": ds.archived,
        "disabled": ds.disabled,
        "visibility": if ds.private { "private" } else { "public" },
        "default_branch": ds.default_branch,
        "created_at": routes::ts(created(ds)),
        "updated_at": routes::ts(ds.now),
        "pushed_at": routes::ts(ds.last_push()),
    });
    if let (Value::Object(base), Value::Object(more)) = (&mut v, extra) {
        base.extend(more);
    }
    v
}
