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
//! rarely changes (an owner's repositories, flakestat-sync's `owners.rs`) walks conditionally
//! ([`Listing::conditional`]): each page is kept with its ETag and the `next` link it came with
//! (a 304 carries no body to read, and GitHub does not promise it a `Link`) where the caller
//! keeps pages ([`KeptPages`]: the store, through flakestat-sync), so an unchanged page costs no
//! budget and the walk goes on from what was kept. The run listing is not a `Link` walk: it
//! reads its pages by number, concurrently, from `total_count`, with ETags (flakestat-sync's
//! `survey.rs`, `list_window`).
//!
//! The small helpers every request's caller shares live here too: [`encode`] for a URL's parts,
//! [`github_time`], [`parse_json`] and [`unexpected`] (the statuses no caller handles itself).

use std::future::Future;
use std::pin::Pin;

use http::StatusCode;
use serde::de::DeserializeOwned;

use super::FetchError;
use super::client::{GitHubClient, Response};
use flakestat_core::model::Timestamp;

/// Where a conditional walk keeps its pages ([`Listing::conditional`]): each page read with an
/// ETag, under its URL. The client keeps nothing itself; flakestat-sync keeps them in the store.
pub trait KeptPages: Send + Sync {
    /// The copy kept for `url`: its ETag and body, as [`KeptPages::keep`] was given them.
    fn kept(&self, url: String) -> Keeping<'_, Option<(String, Vec<u8>)>>;
    /// Keeps `body` as the copy of `url`, with its `etag`.
    fn keep(&self, url: String, etag: String, body: Vec<u8>) -> Keeping<'_, ()>;
    /// The copy of `url` was answered 304: it is still GitHub's.
    fn touch(&self, url: String) -> Keeping<'_, ()>;
}

/// What a [`KeptPages`] answers, once it has.
pub type Keeping<'a, T> = Pin<Box<dyn Future<Output = Result<T, FetchError>> + Send + 'a>>;

/// A page of a listing as GitHub sends it, and the items it carries.
pub trait Page: DeserializeOwned {
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
pub trait ListingError: From<FetchError> {
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
pub enum Flow {
    /// Follow the `next` link, if any.
    More,
    /// Enough was read: no further request.
    Stop,
}

/// How a walk ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The last page was read, or the caller stopped.
    Listed,
    /// A page answered one of the [`Listing::absent_on`] statuses.
    Absent,
}

/// What a walk did: the requests it made (of those, answered 304 from the kept page) and how
/// it ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Walked {
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
pub struct Listing<'a> {
    client: &'a GitHubClient,
    first: String,
    absent: &'a [StatusCode],
    /// Where a conditional walk keeps its pages.
    kept: Option<&'a dyn KeptPages>,
}

impl<'a> Listing<'a> {
    pub fn new(client: &'a GitHubClient, first: String) -> Listing<'a> {
        Listing {
            client,
            first,
            absent: &[],
            kept: None,
        }
    }

    /// Asks for each page with the ETag of its copy in `kept`, and keeps each page read there:
    /// a 304 reads the kept copy (and its `next` link) instead.
    pub fn conditional(self, kept: &'a dyn KeptPages) -> Listing<'a> {
        Listing {
            kept: Some(kept),
            ..self
        }
    }

    /// Statuses meaning GitHub does not know what is listed (a deleted PR): the walk ends
    /// there with [`End::Absent`] instead of an error.
    pub fn absent_on(self, statuses: &'a [StatusCode]) -> Listing<'a> {
        Listing {
            absent: statuses,
            ..self
        }
    }

    /// Walks the pages, handing each page's items to `each`. A status other than 200 (or an
    /// absent one) becomes `refused(url, response)`.
    pub async fn walk<P: Page, E: ListingError>(
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
    pub fn pages<P: Page, E: ListingError, R: Fn(&str, &Response) -> E>(
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
        let Some(kept) = self.kept else {
            return Ok(None);
        };
        let Some((etag, cached)) = kept.kept(url.to_string()).await? else {
            return Ok(None);
        };
        // Kept as the `next` link, a newline, then the page (see `keep_page`).
        let Some(split) = cached.iter().position(|&b| b == b'\n') else {
            return Ok(None);
        };
        let next = String::from_utf8_lossy(&cached[..split]).into_owned();
        let body = cached[split + 1..].to_vec();
        Ok(Some(KeptPage {
            etag,
            body,
            next: Some(next).filter(|n| !n.is_empty()),
        }))
    }

    /// A conditional walk keeps a page read with an ETag, after its `next` link (URLs hold no
    /// newline).
    async fn keep_page<E: ListingError>(&self, url: &str, response: &Response) -> Result<(), E> {
        let (Some(keeper), Some(etag)) = (self.kept, response.etag()) else {
            return Ok(());
        };
        let mut kept = response.next_link().unwrap_or_default().into_bytes();
        kept.push(b'\n');
        kept.extend_from_slice(&response.body);
        keeper.keep(url.to_string(), etag.to_string(), kept).await?;
        Ok(())
    }
}

/// A walk read one page at a time ([`Listing::pages`]).
pub struct Pages<'a, P, R> {
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
    pub async fn next<E: ListingError>(&mut self) -> Result<Option<Vec<P::Item>>, E>
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
                if let Some(kept) = listing.kept {
                    kept.touch(page_url.clone()).await?;
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
    pub fn walked(&self) -> Walked {
        self.walked
    }
}

/// Percent-encodes a query value (RFC 3986 unreserved characters pass).
pub fn encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

pub fn github_time(t: Timestamp) -> String {
    t.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

pub fn parse_json<T: DeserializeOwned>(url: &str, body: &[u8]) -> Result<T, FetchError> {
    serde_json::from_slice(body).map_err(|e| FetchError::Parse {
        url: url.to_string(),
        error: e.to_string(),
    })
}

/// Maps the statuses no caller handles itself.
pub fn unexpected(url: &str, response: &Response) -> FetchError {
    let status = response.status.as_u16();
    let message = response.message();
    match response.status {
        StatusCode::UNAUTHORIZED => FetchError::Unauthorized { status, message },
        StatusCode::FORBIDDEN => FetchError::Forbidden { status, message },
        _ => FetchError::Unexpected {
            url: url.to_string(),
            status,
            message,
        },
    }
}

#[cfg(test)]
mod tests {
    use flakestat_fake::RouteKind;

    use super::*;
    use crate::testing::{JOBS, PagedJobs, paged_jobs};
    use crate::wire::JobList;

    #[test]
    fn a_walk_reads_every_page_once_and_counts_its_requests() {
        let PagedJobs {
            fake,
            runtime,
            client,
            first: url,
        } = paged_jobs();
        let mut ids = Vec::new();
        let walked = runtime
            .block_on(
                Listing::new(&client, url).walk::<JobList, FetchError>(unexpected, |page| {
                    ids.extend(page.into_iter().map(|j| j.id));
                    Ok(Flow::More)
                }),
            )
            .unwrap();
        let distinct: std::collections::BTreeSet<_> = ids.iter().collect();
        assert_eq!((ids.len(), distinct.len()), (JOBS, JOBS));
        assert_eq!(walked.end, End::Listed);
        assert_eq!(walked.pages, JOBS.div_ceil(100) as u64);
        assert_eq!(fake.request_count(RouteKind::ListJobs) as u64, walked.pages);
    }

    #[test]
    fn refusals_map_to_auth_errors_with_github_s_message() {
        let response = |status: u16| Response {
            status: StatusCode::from_u16(status).unwrap(),
            headers: http::HeaderMap::new(),
            body: br#"{"message": "Resource not accessible by integration"}"#.to_vec(),
        };
        let err = unexpected("u", &response(403));
        assert!(matches!(err, FetchError::Forbidden { status: 403, .. }));
        assert!(err.to_string().contains("Resource not accessible"), "{err}");
        assert!(matches!(
            unexpected("u", &response(401)),
            FetchError::Unauthorized { .. }
        ));
        assert!(matches!(
            unexpected("u", &response(422)),
            FetchError::Unexpected { status: 422, .. }
        ));
    }

    #[test]
    fn a_walk_stops_when_the_caller_has_read_enough() {
        let PagedJobs {
            fake,
            runtime,
            client,
            first: url,
        } = paged_jobs();
        let mut read = 0;
        let walked = runtime
            .block_on(
                Listing::new(&client, url).walk::<JobList, FetchError>(unexpected, |page| {
                    read += page.len();
                    Ok(Flow::Stop)
                }),
            )
            .unwrap();
        assert_eq!((read, walked.pages, walked.end), (100, 1, End::Listed));
        assert_eq!(fake.request_count(RouteKind::ListJobs), 1);
    }

    #[test]
    fn an_absent_status_ends_the_walk_and_any_other_is_refused() {
        let PagedJobs {
            fake: _fake,
            runtime,
            client,
            first: _,
        } = paged_jobs();
        let missing = client.url("/repos/octo/demo/actions/runs/1/jobs?filter=all&per_page=100");
        let walked = runtime
            .block_on(
                Listing::new(&client, missing.clone())
                    .absent_on(&[StatusCode::NOT_FOUND])
                    .walk::<JobList, FetchError>(unexpected, |_| panic!("no page to read")),
            )
            .unwrap();
        assert_eq!((walked.pages, walked.end), (1, End::Absent));
        let refused = runtime.block_on(
            Listing::new(&client, missing)
                .walk::<JobList, FetchError>(unexpected, |_| panic!("no page to read")),
        );
        assert!(
            matches!(refused, Err(FetchError::Unexpected { status: 404, .. })),
            "{refused:?}"
        );
    }
}
