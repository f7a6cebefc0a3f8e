//! The pages of conditional listings (`pages::Listing::conditional`), kept in the store: each
//! URL's ETag and body, and when it was last found unchanged.

use chrono::Utc;

use super::FetchError;
use super::pages::{Keeping, KeptPages};
use super::store_error;
use flakestat_store::StoreHandle;

/// The store as the client's [`KeptPages`].
pub(crate) struct StorePages<'a>(pub(crate) &'a StoreHandle);

impl KeptPages for StorePages<'_> {
    fn kept(&self, url: String) -> Keeping<'_, Option<(String, Vec<u8>)>> {
        Box::pin(async move {
            let cached = self
                .0
                .run(move |s| s.cached_response(&url))
                .await
                .map_err(store_error)?;
            Ok::<_, FetchError>(cached.map(|c| (c.etag, c.body)))
        })
    }

    fn keep(&self, url: String, etag: String, body: Vec<u8>) -> Keeping<'_, ()> {
        Box::pin(async move {
            self.0
                .run(move |s| s.store_response(&url, &etag, &body, Utc::now()))
                .await
                .map_err(store_error)
        })
    }

    fn touch(&self, url: String) -> Keeping<'_, ()> {
        Box::pin(async move {
            self.0
                .run(move |s| s.touch_response(&url, Utc::now()))
                .await
                .map_err(store_error)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pages::{Flow, Listing, unexpected};
    use crate::wire::JobList;
    use flakestat_github::testing::{JOBS, PagedJobs, paged_jobs};

    #[test]
    fn a_conditional_walk_reads_unchanged_pages_from_the_store_for_no_budget() {
        let PagedJobs {
            fake,
            runtime,
            client,
            first: url,
        } = paged_jobs();
        let dir = tempfile::tempdir().unwrap();
        let store = StoreHandle::new(flakestat_store::Store::open(dir.path()).unwrap());
        let walk = |url: String| {
            let mut ids = Vec::new();
            let walked = runtime
                .block_on(
                    Listing::new(&client, url)
                        .conditional(&StorePages(&store))
                        .walk::<JobList, FetchError>(unexpected, |page| {
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
}
