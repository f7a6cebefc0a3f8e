//! An owner's repositories, for `--org`: `GET /orgs/{org}/repos`, or for a user account (the
//! organisation route answers 404) `GET /users/{user}/repos`, newest push first
//! (`sort=pushed&direction=desc`), 100 a page, along the `Link` header (`pages.rs`). Pages are
//! kept with their ETags in the store (a conditional walk), so listing again (a resumed or
//! repeated survey) costs nothing while the owner's repositories have not changed (a 304 costs
//! no budget). Listing stops at the first page whose last repository was last pushed before
//! `pushed_since`: every later one was pushed earlier still.

use http::StatusCode;
use serde::Deserialize;

use super::pages::{End, Flow, Listing};
use super::survey::{encode, unexpected};
use super::{FetchError, Session};
use flakestat_core::model::{Repo, Timestamp};
use flakestat_github::{GitHubClient, Response};
use flakestat_store::StoreHandle;

const PER_PAGE: usize = 100;

/// One repository of an owner's listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnerRepo {
    /// GitHub's spelling.
    pub repo: Repo,
    pub id: u64,
    pub archived: bool,
    pub disabled: bool,
    pub fork: bool,
    /// The last push to any branch (`null` for an empty repository).
    pub pushed_at: Option<Timestamp>,
}

/// What listing an owner's repositories found and cost.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OwnerListing {
    /// Newest push first, as GitHub sorted them.
    pub repos: Vec<OwnerRepo>,
    /// The owner is a user account, not an organisation.
    pub user: bool,
    /// Requests made (a 404 from the organisation route included), and of those, answered 304.
    pub requests: u64,
    pub not_modified: u64,
}

#[derive(Debug, Deserialize)]
struct WireOwnerRepo {
    id: u64,
    full_name: String,
    #[serde(default)]
    archived: bool,
    #[serde(default)]
    disabled: bool,
    #[serde(default)]
    fork: bool,
    #[serde(default)]
    pushed_at: Option<Timestamp>,
}

impl Session {
    /// Lists `owner`'s repositories (organisation, else user), newest push first, down to the
    /// first page that ends before `pushed_since` (`None`: every page).
    pub fn list_owner_repos(
        &self,
        store: &StoreHandle,
        owner: &str,
        pushed_since: Option<Timestamp>,
    ) -> Result<OwnerListing, FetchError> {
        self.runtime
            .block_on(list(&self.client, store, owner, pushed_since))
    }
}

/// The organisation's route first; its 404 means a user account (or no owner at all, which
/// the user route's 404 then says).
async fn list(
    client: &GitHubClient,
    store: &StoreHandle,
    owner: &str,
    pushed_since: Option<Timestamp>,
) -> Result<OwnerListing, FetchError> {
    let mut listing = OwnerListing::default();
    let routes = [
        (false, format!("/orgs/{}/repos?type=all", encode(owner))),
        (true, format!("/users/{}/repos?type=owner", encode(owner))),
    ];
    for (user, route) in routes {
        let first = client.url(&format!(
            "{route}&sort=pushed&direction=desc&per_page={PER_PAGE}"
        ));
        let absent: &[StatusCode] = if user { &[] } else { &[StatusCode::NOT_FOUND] };
        let refused = |url: &str, response: &Response| {
            if response.status == StatusCode::NOT_FOUND {
                FetchError::NoSuchOwner {
                    owner: owner.to_string(),
                }
            } else {
                unexpected(url, response)
            }
        };
        let mut parsed: Result<(), FetchError> = Ok(());
        let walked = Listing::new(client, first)
            .conditional(&super::kept::StorePages(store))
            .absent_on(absent)
            .walk::<Vec<WireOwnerRepo>, FetchError>(refused, |page| {
                let oldest = page.last().and_then(|r| r.pushed_at);
                for item in page {
                    match owner_repo(item) {
                        Ok(repo) => listing.repos.push(repo),
                        Err(e) => {
                            parsed = Err(e);
                            return Ok(Flow::Stop);
                        }
                    }
                }
                // Newest push first: a page ending before the window ends the listing.
                let older = matches!((pushed_since, oldest), (Some(s), Some(o)) if o < s);
                Ok(if older { Flow::Stop } else { Flow::More })
            })
            .await?;
        parsed?;
        listing.requests += walked.pages;
        listing.not_modified += walked.not_modified;
        if walked.end == End::Listed {
            listing.user = user;
            return Ok(listing);
        }
    }
    unreachable!("the user route has no absent status")
}

fn owner_repo(item: WireOwnerRepo) -> Result<OwnerRepo, FetchError> {
    let repo = Repo::parse(&item.full_name).ok_or_else(|| FetchError::Parse {
        url: "owner repository listing".to_string(),
        error: format!("full_name {:?} is not OWNER/NAME", item.full_name),
    })?;
    Ok(OwnerRepo {
        repo,
        id: item.id,
        archived: item.archived,
        disabled: item.disabled,
        fork: item.fork,
        pushed_at: item.pushed_at,
    })
}
