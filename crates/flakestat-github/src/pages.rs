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
//! No listing walked here is conditional (each is read once per survey and its answer stored
//! as data, not as a cached body), so every GET goes without an ETag. The run listing is not a
//! `Link` walk: it reads its pages by number, concurrently, from `total_count`, with ETags
//! (`survey.rs`, `list_window`).

use http::StatusCode;
use serde::de::DeserializeOwned;

use super::FetchError;
use super::client::{GitHubClient, Response};

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

/// An error a walk can end with: a request that failed (`From<FetchError>`) or a page that
/// does not parse.
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

/// What a walk did: the requests it made and how it ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Walked {
    pub pages: u64,
    pub end: End,
}

/// One listing to walk, from its first page's URL.
pub(crate) struct Listing<'a> {
    client: &'a GitHubClient,
    first: String,
    absent: &'a [StatusCode],
}

impl<'a> Listing<'a> {
    pub(crate) fn new(client: &'a GitHubClient, first: String) -> Listing<'a> {
        Listing {
            client,
            first,
            absent: &[],
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
        let mut url = Some(self.first);
        let mut pages = 0u64;
        while let Some(page_url) = url.take() {
            let response = self.client.get(&page_url, None).await?;
            pages += 1;
            if self.absent.contains(&response.status) {
                return Ok(Walked {
                    pages,
                    end: End::Absent,
                });
            }
            if response.status != StatusCode::OK {
                return Err(refused(&page_url, &response));
            }
            let page: P = serde_json::from_slice(&response.body)
                .map_err(|e| E::unparsable(&page_url, e.to_string()))?;
            if each(page.into_items())? == Flow::More {
                url = response.next_link();
            }
        }
        Ok(Walked {
            pages,
            end: End::Listed,
        })
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
