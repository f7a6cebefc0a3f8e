//! The one walk along `Link: rel="next"`, shared by every paginated listing (jobs, merged PRs,
//! PR files, the default branch's commits, a commit's files, the PR-head listing, an issue's
//! comments): GET the first page, hand its items to the caller, follow the `next` link until
//! there is none or the caller has read enough.
//!
//! What differs between listings stays with the caller: the page's shape ([`Page`]: a JSON
//! array, or an object holding the array), the statuses that mean "GitHub does not know what is
//! listed" ([`Listing::absent_on`]), the error a refusal becomes, and what is done with each
//! page (store it, look for something, stop early). The walk counts the requests it made
//! ([`Walked::pages`]) so each caller books them where its cost is kept.
//!
//! Most listings walked here are read once per survey and their answer stored as data, not as
//! a cached body, so their GETs go without an ETag. A listing read again and again while it
//! rarely changes (an owner's repositories, `owners.rs`) walks conditionally
//! ([`Listing::conditional`]): each page is kept in the store with its ETag and the `next` link
//! it came with (a 304 carries no body to read, and GitHub does not promise it a `Link`), so an
//! unchanged page costs no budget and the walk goes on from what was kept. The run listing is
//! not a `Link` walk: it reads its pages by number, concurrently, from `total_count`, with ETags
//! (`survey.rs`, `list_window`).

use chrono::Utc;
use http::StatusCode;
use serde::de::DeserializeOwned;

use super::FetchError;
use super::client::{GitHubClient, Response};
use flakestat_store::StoreHandle;

/// A page of a listing as GitHub sends it, and the items it carries.
pub(crate) trait Page: DeserializeOwned {
    type Item;
    fn into_items(self) -> Vec<Self::Item>;
}

/// Most listings send a bare JSON array.
impl<T: DeserializeOwned> Page for Vec<T> {
    type Item = T;
    fn into_items(self) -> Vec<T> {
        self
    }
}

/// An error a walk (or a write, `GitHubClient::write_json`) can end with: a request that failed
/// (`From<FetchError>`) or an answer that does not parse.
pub(crate) trait ListingError: From<FetchError> {
    fn unparsable(url: &str, error: String) -> Self;
}

impl ListingError for FetchError {
    fn unparsable(url: &str, error: String) -> FetchError {
        FetchError::Parse {
            url: url.to_string(),
            error,
        }
    }
}

/// What the caller wants after a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    /// Follow the `next` link, if any.
    More,
    /// Enough was read: no further request.
    Stop,
}

/// How a walk ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum End {
    /// The last page was read, or the caller stopped.
    Listed,
    /// A page answered one of the [`Listing::absent_on`] statuses.
    Absent,
}

/// What a walk did: the requests it made (of those, answered 304 from the kept page) and how
/// it ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Walked {
    pub pages: u64,
    pub not_modified: u64,
    pub end: End,
}

/// A page a conditional walk kept: its ETag, its body and the `next` link it came with.
struct KeptPage {
    etag: String,
    body: Vec<u8>,
    next: Option<String>,
}

/// One listing to walk, from its first page's URL.
pub(crate) struct Listing<'a> {
    client: &'a GitHubClient,
    first: String,
    absent: &'a [StatusCode],
    /// Where a conditional walk keeps its pages.
    kept: Option<&'a StoreHandle>,
}

impl<'a> Listing<'a> {
    pub(crate) fn new(client: &'a GitHubClient, first: String) -> Listing<'a> {
        Listing {
            client,
            first,
            absent: &[],
            kept: None,
        }
    }

    /// Asks for each page with the ETag of its copy in `store`, and keeps each page read there:
    /// a 304 reads the kept copy (and its `next` link) instead.
    pub(crate) fn conditional(self, store: &'a StoreHandle) -> Listing<'a> {
        Listing {
            kept: Some(store),
            ..self
        }
    }

    /// Statuses meaning GitHub does not know what is listed (a deleted PR): the walk ends
    /// there with [`End::Absent`] instead of an error.
    pub(crate) fn absent_on(self, statuses: &'a [StatusCode]) -> Listing<'a> {
        Listing {
            absent: statuses,
            ..self
        }
    }

    /// Walks the pages, handing each page's items to `each`. A status other than 200 (or an
    /// absent one) becomes `refused(url, response)`.
    pub(crate) async fn walk<P: Page, E: ListingError>(
        self,
        refused: impl Fn(&str, &Response) -> E,
        mut each: impl FnMut(Vec<P::Item>) -> Result<Flow, E>,
    ) -> Result<Walked, E> {
        let mut pages = self.pages::<P, E, _>(refused);
        while let Some(items) = pages.next().await? {
            if each(items)? == Flow::Stop {
                break;
            }
        }
        Ok(pages.walked())
    }

    /// The same walk, one page at a time, for a caller that awaits something between pages
    /// (storing each through the store's handle): `next` until `None`, or stop asking.
    pub(crate) fn pages<P: Page, E: ListingError, R: Fn(&str, &Response) -> E>(
        self,
        refused: R,
    ) -> Pages<'a, P, R> {
        Pages {
            url: Some(self.first.clone()),
            listing: self,
            refused,
            walked: Walked {
                pages: 0,
                not_modified: 0,
                end: End::Listed,
            },
            page: std::marker::PhantomData,
        }
    }

    /// A conditional walk's copy of the page at `url`.
    async fn kept_page<E: ListingError>(&self, url: &str) -> Result<Option<KeptPage>, E> {
        let Some(store) = self.kept else {
            return Ok(None);
        };
        let url = url.to_string();
        let cached = store
            .run(move |s| s.cached_response(&url))
            .await
            .map_err(FetchError::from)?;
        let Some(cached) = cached else {
            return Ok(None);
        };
        // Kept as the `next` link, a newline, then the page (see `keep_page`).
        let Some(split) = cached.body.iter().position(|&b| b == b'\n') else {
            return Ok(None);
        };
        let next = String::from_utf8_lossy(&cached.body[..split]).into_owned();
        let body = cached.body[split + 1..].to_vec();
        Ok(Some(KeptPage {
            etag: cached.etag,
            body,
            next: Some(next).filter(|n| !n.is_empty()),
        }))
    }

    /// A conditional walk keeps a page read with an ETag, after its `next` link (URLs hold no
    /// newline).
    async fn keep_page<E: ListingError>(&self, url: &str, response: &Response) -> Result<(), E> {
        let (Some(store), Some(etag)) = (self.kept, response.etag()) else {
            return Ok(());
        };
        let mut kept = response.next_link().unwrap_or_default().into_bytes();
        kept.push(b'\n');
        kept.extend_from_slice(&response.body);
        let (url, etag) = (url.to_string(), etag.to_string());
        store
            .run(move |s| s.store_response(&url, &etag, &kept, Utc::now()))
            .await
            .map_err(FetchError::from)?;
        Ok(())
    }
}

/// A walk read one page at a time ([`Listing::pages`]).
pub(crate) struct Pages<'a, P, R> {
    listing: Listing<'a>,
    refused: R,
    /// The next page to ask for.
    url: Option<String>,
    walked: Walked,
    page: std::marker::PhantomData<fn() -> P>,
}

impl<P: Page, R> Pages<'_, P, R> {
    /// The next page's items; `None` once the last page was read or a page answered one of
    /// the absent statuses.
    pub(crate) async fn next<E: ListingError>(&mut self) -> Result<Option<Vec<P::Item>>, E>
    where
        R: Fn(&str, &Response) -> E,
    {
        let Some(page_url) = self.url.take() else {
            return Ok(None);
        };
        let listing = &self.listing;
        let kept = listing.kept_page(&page_url).await?;
        let etag = kept.as_ref().map(|k| k.etag.as_str());
        let response = listing.client.get(&page_url, etag).await?;
        self.walked.pages += 1;
        if listing.absent.contains(&response.status) {
            self.walked.end = End::Absent;
            return Ok(None);
        }
        let (body, next) = match (response.status, kept) {
            (StatusCode::OK, _) => {
                listing.keep_page(&page_url, &response).await?;
                let next = response.next_link();
                (response.body, next)
            }
            (StatusCode::NOT_MODIFIED, Some(KeptPage { body, next, .. })) => {
                self.walked.not_modified += 1;
                if let Some(store) = listing.kept {
                    let url = page_url.clone();
                    store
                        .run(move |s| s.touch_response(&url, Utc::now()))
                        .await
                        .map_err(FetchError::from)?;
                }
                (body, next)
            }
            _ => return Err((self.refused)(&page_url, &response)),
        };
        let page: P =
            serde_json::from_slice(&body).map_err(|e| E::unparsable(&page_url, e.to_string()))?;
        self.url = next;
        Ok(Some(page.into_items()))
    }

    /// What the walk did so far.
    pub(crate) fn walked(&self) -> Walked {
        self.walked
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use flakestat_fake::scenario::{SyntheticSpec, synthetic, synthetic_run_id};
    use flakestat_fake::{FakeGitHub, Faults, RouteKind};

    use super::*;
    use crate::Progress;
    use crate::client::ClientConfig;
    use crate::wire::JobList;

    const JOBS: usize = 250;

    /// A fake whose runs have `JOBS` jobs each (three pages of 100), and a client for it.
    fn setup() -> (FakeGitHub, tokio::runtime::Runtime, GitHubClient, String) {
        let spec = SyntheticSpec {
            runs: 1,
            jobs_per_run: JOBS,
            ..SyntheticSpec::default()
        };
        let fake = FakeGitHub::start_blocking(synthetic(&spec), Faults::default()).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let client = {
            let _guard = runtime.enter();
            let config = ClientConfig::new(fake.api_url(), None);
            GitHubClient::new(config, Arc::new(()) as Arc<dyn Progress>).unwrap()
        };
        let url = |run: u64| {
            client.url(&format!(
                "/repos/octo/demo/actions/runs/{run}/jobs?filter=all&per_page=100"
            ))
        };
        let first = url(synthetic_run_id(0).0);
        (fake, runtime, client, first)
    }

    #[test]
    fn a_walk_reads_every_page_once_and_counts_its_requests() {
        let (fake, runtime, client, url) = setup();
        let mut ids = Vec::new();
        let walked = runtime
            .block_on(Listing::new(&client, url).walk::<JobList, FetchError>(
                crate::survey::unexpected,
                |page| {
                    ids.extend(page.into_iter().map(|j| j.id));
                    Ok(Flow::More)
                },
            ))
            .unwrap();
        let distinct: std::collections::BTreeSet<_> = ids.iter().collect();
        assert_eq!((ids.len(), distinct.len()), (JOBS, JOBS));
        assert_eq!(walked.end, End::Listed);
        assert_eq!(walked.pages, JOBS.div_ceil(100) as u64);
        assert_eq!(fake.request_count(RouteKind::ListJobs) as u64, walked.pages);
    }

    #[test]
    fn a_conditional_walk_reads_unchanged_pages_from_the_store_for_no_budget() {
        let (fake, runtime, client, url) = setup();
        let dir = tempfile::tempdir().unwrap();
        let store = StoreHandle::new(flakestat_store::Store::open(dir.path()).unwrap());
        let walk = |url: String| {
            let mut ids = Vec::new();
            let walked = runtime
                .block_on(
                    Listing::new(&client, url)
                        .conditional(&store)
                        .walk::<JobList, FetchError>(crate::survey::unexpected, |page| {
                            ids.extend(page.into_iter().map(|j| j.id));
                            Ok(Flow::More)
                        }),
                )
                .unwrap();
            (ids, walked)
        };
        let (first, walked) = walk(url.clone());
        assert_eq!((first.len(), walked.not_modified), (JOBS, 0));
        // Again: every page 304 (no Link header to follow), the same items from the store.
        let (again, walked) = walk(url);
        assert_eq!(again, first);
        let pages = JOBS.div_ceil(100) as u64;
        assert_eq!((walked.pages, walked.not_modified), (pages, pages));
        let statuses: Vec<u16> = fake.requests().iter().map(|r| r.status).collect();
        assert_eq!(statuses[statuses.len() - pages as usize..], [304, 304, 304]);
    }

    #[test]
    fn a_walk_stops_when_the_caller_has_read_enough() {
        let (fake, runtime, client, url) = setup();
        let mut read = 0;
        let walked = runtime
            .block_on(Listing::new(&client, url).walk::<JobList, FetchError>(
                crate::survey::unexpected,
                |page| {
                    read += page.len();
                    Ok(Flow::Stop)
                },
            ))
            .unwrap();
        assert_eq!((read, walked.pages, walked.end), (100, 1, End::Listed));
        assert_eq!(fake.request_count(RouteKind::ListJobs), 1);
    }

    #[test]
    fn an_absent_status_ends_the_walk_and_any_other_is_refused() {
        let (_fake, runtime, client, _) = setup();
        let missing = client.url("/repos/octo/demo/actions/runs/1/jobs?filter=all&per_page=100");
        let walked = runtime
            .block_on(
                Listing::new(&client, missing.clone())
                    .absent_on(&[StatusCode::NOT_FOUND])
                    .walk::<JobList, FetchError>(crate::survey::unexpected, |_| {
                        panic!("no page to read")
                    }),
            )
            .unwrap();
        assert_eq!((walked.pages, walked.end), (1, End::Absent));
        let refused = runtime.block_on(
            Listing::new(&client, missing)
                .walk::<JobList, FetchError>(crate::survey::unexpected, |_| {
                    panic!("no page to read")
                }),
        );
        assert!(
            matches!(refused, Err(FetchError::Unexpected { status: 404, .. })),
            "{refused:?}"
        );
    }
}
