//! The PR listing that maps a fork's runs to their PR. GitHub leaves `pull_requests[]` empty
//! on the runs of a PR from a fork; its head repository and branch are the fork's. The listing
//! (`GET /pulls?state=all&sort=updated&direction=desc`) names each PR's head (`head.repo.
//! full_name`, `head.ref`, `head.sha`), and also its base, merge time and merge commit, so every
//! PR it lists is stored and needs no `GET /pulls/{n}` later.
//!
//! A PR with a run at time `t` was updated at `t` or later, so listing newest-updated first
//! down to the oldest run that needs a PR covers every such run; listing stops sooner once
//! every head asked for has been seen. The stretch of run times covered is kept in `windows`
//! under [`PULL_HEADS_SCOPE`]: a repeat asks nothing for runs inside it.

use std::collections::BTreeSet;

use super::FetchError;
use super::ancestry::AncestrySummary;
use super::pages::Listing;
use super::store_error;
use super::survey::{PER_PAGE, Session, encode, unexpected};
use super::wire::WirePull;
use flakestat_core::model::{Repo, Timestamp};
use flakestat_store::{ListedWindow, StoreHandle};

/// The `windows` scope recording which run times the PR listing has covered.
pub const PULL_HEADS_SCOPE: &str = "pull heads";

/// Fork runs whose PR the store cannot name yet.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PullHeadNeeds {
    /// (head repository full name, lower case; head branch).
    pub heads: BTreeSet<(String, String)>,
    /// When the runs were created, oldest and newest.
    pub runs_from: Option<Timestamp>,
    pub runs_to: Option<Timestamp>,
}

impl PullHeadNeeds {
    pub fn add(&mut self, repo: &str, branch: &str, created_at: Timestamp) {
        self.heads
            .insert((repo.to_ascii_lowercase(), branch.to_string()));
        self.runs_from = Some(self.runs_from.map_or(created_at, |t| t.min(created_at)));
        self.runs_to = Some(self.runs_to.map_or(created_at, |t| t.max(created_at)));
    }
}

impl Session {
    /// Whether a run created at `created_at` lies in a stretch the listing already covered.
    pub fn pull_heads_covered(
        &self,
        store: &StoreHandle,
        repo: &Repo,
        created_at: Timestamp,
    ) -> Result<bool, FetchError> {
        let windows = covered(store, repo)?;
        Ok(windows
            .iter()
            .any(|w| w.since <= created_at && created_at < w.until))
    }

    /// Lists PRs, newest updated first, storing each, until every head in `needs` was seen or
    /// the PRs are older than its oldest run; records the run times covered.
    pub fn fetch_pull_heads(
        &self,
        store: &StoreHandle,
        repo: &Repo,
        needs: &PullHeadNeeds,
        summary: &mut AncestrySummary,
    ) -> Result<(), FetchError> {
        let (Some(from), Some(to)) = (needs.runs_from, needs.runs_to) else {
            return Ok(());
        };
        let mut missing = needs.heads.clone();
        let mut listed = 0u64;
        let url = self.client.url(&format!(
            "/repos/{}/{}/pulls?state=all&sort=updated&direction=desc&per_page={PER_PAGE}",
            encode(&repo.owner),
            encode(&repo.name)
        ));
        let walked = self.runtime.block_on(async {
            let mut pages =
                Listing::new(&self.client, url).pages::<Vec<WirePull>, FetchError, _>(unexpected);
            while let Some(page) = pages.next().await? {
                let reached_older = page
                    .last()
                    .is_none_or(|p| p.updated_at.is_some_and(|u| u < from));
                let pulls: Vec<_> = page.into_iter().map(WirePull::into_model).collect();
                for pull in &pulls {
                    if let Some(head_repo) = pull.head.as_ref().and_then(|h| h.repo.as_deref()) {
                        missing.remove(&(head_repo.to_ascii_lowercase(), pull.head_ref.clone()));
                    }
                }
                listed += pulls.len() as u64;
                let stored = repo.clone();
                store
                    .run(move |s| s.store_pulls(&stored, &pulls))
                    .await
                    .map_err(store_error)?;
                if reached_older || missing.is_empty() {
                    break;
                }
            }
            Ok::<_, FetchError>(pages.walked())
        })?;
        summary.pull_list_requests += walked.pages;
        // Every run in [from, to] whose PR exists has been listed: merge with what was covered.
        let mut since = from;
        let mut until = to + chrono::TimeDelta::seconds(1);
        for w in covered(store, repo)? {
            if w.since <= until && since <= w.until {
                since = since.min(w.since);
                until = until.max(w.until);
            }
        }
        store
            .blocking(|s| {
                s.store_window(
                    repo,
                    PULL_HEADS_SCOPE,
                    &ListedWindow {
                        since,
                        until,
                        runs: listed,
                    },
                )
            })
            .map_err(store_error)?;
        Ok(())
    }
}

fn covered(store: &StoreHandle, repo: &Repo) -> Result<Vec<ListedWindow>, FetchError> {
    let min = Timestamp::MIN_UTC;
    let max = Timestamp::MAX_UTC;
    store
        .blocking(|s| s.load_windows(repo, PULL_HEADS_SCOPE, min, max))
        .map_err(store_error)
}
