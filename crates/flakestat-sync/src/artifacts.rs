//! JUnit XML from a run's artifacts (`--junit-artifacts GLOB`): list the run's artifacts
//! (`GET /actions/runs/{id}/artifacts`, paginated), download those whose name matches
//! (`GET /actions/artifacts/{id}/zip`, a 302 to the blob host followed by the same redirect and
//! token rule as logs: `GitHubClient::fetch_whole_blob`), read every `.xml` entry with the core's
//! quick-xml JUnit reader, and store each artifact's outcome with the tests it names.
//!
//! Artifacts come from anyone who can push a workflow: an artifact over the size cap, with too
//! many entries or inflating past the ratio cap (a zip bomb) is refused with one line naming it,
//! and the survey goes on. An expired artifact (`expired: true`, or 410) is named as such: its
//! tests are unknown. A run listed for a pattern is never listed again for it, and an artifact
//! whose outcome is stored is never downloaded again (`store/artifacts.rs`).
//!
//! GitHub does not say which job uploaded an artifact. [`uploader`] tells it from when the
//! artifact was created (inside one job's execution) and, when several jobs ran then, from the
//! job's matrix values in the artifact's name; when neither tells, the job is unknown and the
//! artifact's tests go to no job (never to a guessed one).

use std::collections::BTreeSet;
use std::io::{BufReader, Cursor, Read, Seek};

use http::StatusCode;
use serde::Deserialize;

use super::pages::{Flow, Listing};
use super::store_error;
use super::{FetchError, Progress, ProgressEvent};
use flakestat_core::model::{Job, JobId, RunId, TestOutcomes, Timestamp};
use flakestat_core::signatures::testids::junit;
use flakestat_github::{Blob, GitHubClient};
use flakestat_store::{ArtifactRecord, ArtifactStatus, StoreHandle};

/// The largest artifact zip downloaded (bytes): GitHub's own listing says its size first.
pub const DEFAULT_MAX_ARTIFACT_SIZE: u64 = 100 << 20;

/// What an artifact may hold; past it, it is refused.
pub const DEFAULT_ARTIFACT_CAPS: flakestat_zip::Caps = flakestat_zip::Caps {
    max_entries: 10_000,
    max_total: 1 << 30,
    max_ratio: 200,
};

/// Which artifacts to read, and their caps.
#[derive(Debug, Clone)]
pub struct JunitArtifacts {
    /// The glob as given: also the key under which a run's listing is remembered.
    pattern: String,
    matcher: globset::GlobMatcher,
    /// Largest zip downloaded.
    pub max_size: u64,
    pub caps: flakestat_zip::Caps,
}

impl JunitArtifacts {
    /// Artifacts whose whole name matches `pattern` (`*`, `?`, `[…]`, `{a,b}`).
    pub fn new(pattern: &str) -> Result<JunitArtifacts, FetchError> {
        let glob = globset::GlobBuilder::new(pattern)
            .literal_separator(false)
            .build()
            .map_err(|e| {
                FetchError::Config(format!(
                    "the artifact pattern {pattern:?} is not a glob: {e}"
                ))
            })?;
        Ok(JunitArtifacts {
            pattern: pattern.to_string(),
            matcher: glob.compile_matcher(),
            max_size: DEFAULT_MAX_ARTIFACT_SIZE,
            caps: DEFAULT_ARTIFACT_CAPS,
        })
    }

    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    pub fn matches(&self, name: &str) -> bool {
        self.matcher.is_match(name)
    }
}

/// `GET /actions/runs/{id}/artifacts`: `{total_count, artifacts: [...]}`.
#[derive(Debug, Deserialize)]
struct ArtifactList {
    artifacts: Vec<WireArtifact>,
}

impl flakestat_github::pages::Page for ArtifactList {
    type Item = WireArtifact;
    fn into_items(self) -> Vec<WireArtifact> {
        self.artifacts
    }
}

/// An artifact as GitHub lists it (the fields read; nullable ones optional).
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct WireArtifact {
    pub id: u64,
    pub name: String,
    #[serde(default)]
    pub size_in_bytes: Option<u64>,
    #[serde(default)]
    pub expired: bool,
    #[serde(default)]
    pub created_at: Option<Timestamp>,
}

/// What one run's artifacts came to, for the survey's summary.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ArtifactCounts {
    pub listed_runs: u64,
    pub read: u64,
    pub refused: u64,
    pub expired: u64,
}

/// Lists one run's artifacts (unless listed for this pattern before), reads the matching ones
/// not stored yet, and stores them with the listing in one transaction.
pub(crate) async fn fetch_run_artifacts(
    client: &GitHubClient,
    store: &StoreHandle,
    progress: &dyn Progress,
    repo_path: &str,
    run: RunId,
    junit: &JunitArtifacts,
) -> Result<ArtifactCounts, FetchError> {
    let pattern = junit.pattern().to_string();
    let asked = pattern.clone();
    if store
        .run(move |s| s.artifacts_listed(run, &asked))
        .await
        .map_err(store_error)?
    {
        return Ok(ArtifactCounts::default());
    }
    let url = client.url(&format!(
        "{repo_path}/actions/runs/{run}/artifacts?per_page=100"
    ));
    let mut listed = Vec::new();
    Listing::new(client, url)
        .walk::<ArtifactList, FetchError>(super::survey::unexpected, |page| {
            let more = !page.is_empty();
            listed.extend(page);
            Ok(if more { Flow::More } else { Flow::Stop })
        })
        .await?;
    let (known, jobs): (BTreeSet<u64>, Vec<Job>) = store
        .run(move |s| {
            Ok::<_, FetchError>((
                s.artifact_ids(run).map_err(store_error)?,
                s.load_run_jobs(run).map_err(store_error)?,
            ))
        })
        .await?;
    let mut counts = ArtifactCounts {
        listed_runs: 1,
        ..ArtifactCounts::default()
    };
    let mut records = Vec::new();
    let mut seen = BTreeSet::new();
    for artifact in listed {
        if !junit.matches(&artifact.name)
            || known.contains(&artifact.id)
            || !seen.insert(artifact.id)
        {
            continue;
        }
        let what = format!("artifact {:?} of run {run}", artifact.name);
        let (status, tests, note) =
            read_artifact(client, repo_path, &artifact, junit, &what).await?;
        match status {
            ArtifactStatus::Stored => counts.read += 1,
            ArtifactStatus::Expired => counts.expired += 1,
            ArtifactStatus::Refused | ArtifactStatus::Unavailable => counts.refused += 1,
        }
        if !note.is_empty() {
            progress.event(ProgressEvent::Note(note.clone()));
        }
        let job = uploader(&artifact, &jobs);
        if job.is_none() && status == ArtifactStatus::Stored {
            progress.event(ProgressEvent::Detail(format!(
                "{what}: which job uploaded it is unknown; its tests go to no job"
            )));
        }
        records.push(ArtifactRecord {
            id: artifact.id,
            run,
            name: artifact.name.clone(),
            status,
            job,
            tests,
            note,
        });
    }
    store
        .run(move |s| s.store_artifacts(run, &pattern, &records))
        .await
        .map_err(store_error)?;
    Ok(counts)
}

/// One artifact's outcome: downloaded and read, expired, or refused with why.
async fn read_artifact(
    client: &GitHubClient,
    repo_path: &str,
    artifact: &WireArtifact,
    junit: &JunitArtifacts,
    what: &str,
) -> Result<(ArtifactStatus, TestOutcomes, String), FetchError> {
    let none = TestOutcomes::default;
    let expired = || {
        (
            ArtifactStatus::Expired,
            none(),
            format!("{what} is expired: its tests are unknown"),
        )
    };
    if artifact.expired {
        return Ok(expired());
    }
    if let Some(size) = artifact.size_in_bytes.filter(|&s| s > junit.max_size) {
        return Ok(refused(
            what,
            format!("{size} bytes, over the {}-byte cap", junit.max_size),
        ));
    }
    let url = client.url(&format!(
        "{repo_path}/actions/artifacts/{}/zip",
        artifact.id
    ));
    let blob = match client.fetch_whole_blob(&url, what, junit.max_size).await {
        Ok(blob) => blob,
        Err(FetchError::TooLarge { limit, .. }) => {
            return Ok(refused(what, format!("over the {limit}-byte cap")));
        }
        Err(FetchError::Unavailable(why)) => {
            return Ok((ArtifactStatus::Unavailable, none(), why));
        }
        Err(e) => return Err(e),
    };
    match blob.response.status {
        StatusCode::OK => {}
        StatusCode::GONE => return Ok(expired()),
        StatusCode::NOT_FOUND => {
            return Ok((
                ArtifactStatus::Unavailable,
                none(),
                format!("{what}: GitHub has no such artifact (404): its tests are unknown"),
            ));
        }
        _ => return Err(super::survey::unexpected(&url, &blob.response)),
    }
    let caps = junit.caps;
    let read = super::blocking(move || Ok::<_, FetchError>(read_junit_zip(blob, caps))).await?;
    Ok(match read {
        Ok((tests, 0)) => (
            ArtifactStatus::Stored,
            tests,
            format!("{what} holds no JUnit XML report"),
        ),
        Ok((tests, _)) => (ArtifactStatus::Stored, tests, String::new()),
        Err(why) => refused(what, why),
    })
}

fn refused(what: &str, why: String) -> (ArtifactStatus, TestOutcomes, String) {
    (
        ArtifactStatus::Refused,
        TestOutcomes::default(),
        format!("{what} refused: {why}; its tests are unknown"),
    )
}

/// Reads every `.xml` entry of an artifact's zip as a JUnit report, within the caps: the
/// tests of all its reports merged and how many reports there were, or why it was refused. An
/// entry that is not a JUnit report (or not well-formed) is skipped.
fn read_junit_zip(blob: Blob, caps: flakestat_zip::Caps) -> Result<(TestOutcomes, usize), String> {
    match blob.spooled {
        Some((file, _)) => read_junit_entries(file, caps),
        None => read_junit_entries(Cursor::new(blob.response.body), caps),
    }
}

fn read_junit_entries(
    reader: impl Read + Seek,
    caps: flakestat_zip::Caps,
) -> Result<(TestOutcomes, usize), String> {
    let mut tests = TestOutcomes::default();
    let mut reports = 0;
    flakestat_zip::visit_files_within(
        reader,
        caps,
        |name| name.to_ascii_lowercase().ends_with(".xml"),
        |_, entry| {
            if let Ok(found) = junit::parse(BufReader::new(entry)) {
                reports += 1;
                tests.merge(found);
            }
        },
    )
    .map_err(|e| e.to_string())?;
    Ok((tests, reports))
}

/// The job that uploaded an artifact, when that can be told: the one job of the run whose
/// execution holds the artifact's creation time; among several such jobs (a matrix running at
/// once), the one whose matrix values (the words in its name's parentheses, or its whole name)
/// all appear among the artifact name's words. `None` when no job or more than one fits.
pub(crate) fn uploader(artifact: &WireArtifact, jobs: &[Job]) -> Option<JobId> {
    let during: Vec<&Job> = match artifact.created_at {
        Some(at) => jobs
            .iter()
            .filter(|j| {
                matches!((j.started_at, j.completed_at), (Some(s), Some(e)) if s <= at && at <= e)
            })
            .collect(),
        None => Vec::new(),
    };
    // Times unknown: every job of the run is a candidate, and the name must tell.
    let candidates: Vec<&Job> = if artifact.created_at.is_none() {
        jobs.iter().collect()
    } else {
        during
    };
    if let [only] = candidates[..]
        && artifact.created_at.is_some()
    {
        return Some(only.id);
    }
    let named = words(&artifact.name);
    let fitting: Vec<&Job> = candidates
        .into_iter()
        .filter(|j| {
            let values = matrix_words(&j.name);
            !values.is_empty() && values.iter().all(|w| named.contains(w))
        })
        .collect();
    // A re-run executes the same job again: the same name is one job only when once.
    match fitting[..] {
        [only] => Some(only.id),
        _ => None,
    }
}

/// A name's words: lower-case runs of letters and digits.
fn words(name: &str) -> BTreeSet<String> {
    name.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The words of a job's matrix values (`test (ubuntu-latest, 3.12)` → ubuntu, latest, 3, 12);
/// the whole name's words when it has no parentheses.
fn matrix_words(job: &str) -> BTreeSet<String> {
    match (job.find('('), job.rfind(')')) {
        (Some(open), Some(close)) if open < close => words(&job[open + 1..close]),
        _ => words(job),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flakestat_core::model::Sha;

    fn t(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn job(id: u64, name: &str, from: &str, to: &str) -> Job {
        Job {
            id: JobId(id),
            run_id: RunId(1),
            run_attempt: 1,
            name: name.into(),
            status: "completed".into(),
            conclusion: Some("failure".into()),
            created_at: t(from),
            started_at: Some(t(from)),
            completed_at: Some(t(to)),
            html_url: None,
            labels: Vec::new(),
            head_sha: Sha("a".repeat(40)),
        }
    }

    fn artifact(name: &str, at: Option<&str>) -> WireArtifact {
        WireArtifact {
            id: 5,
            name: name.into(),
            size_in_bytes: Some(10),
            expired: false,
            created_at: at.map(t),
        }
    }

    /// One job running when the artifact was made: that job; several: the one whose matrix
    /// values the name holds; none or a tie: unknown, never a guess.
    #[test]
    fn the_uploader_is_told_by_time_then_by_matrix_values() {
        let jobs = [
            job(
                1,
                "test (ubuntu-latest, 3.12)",
                "2026-06-01T10:00:00Z",
                "2026-06-01T10:10:00Z",
            ),
            job(
                2,
                "test (ubuntu-latest, 3.13)",
                "2026-06-01T10:00:00Z",
                "2026-06-01T10:12:00Z",
            ),
            job(3, "lint", "2026-06-01T10:20:00Z", "2026-06-01T10:25:00Z"),
        ];
        let at = |name, when| uploader(&artifact(name, Some(when)), &jobs);
        assert_eq!(at("reports", "2026-06-01T10:21:00Z"), Some(JobId(3)));
        assert_eq!(
            at("junit-ubuntu-latest-3.13", "2026-06-01T10:05:00Z"),
            Some(JobId(2))
        );
        assert_eq!(at("junit", "2026-06-01T10:05:00Z"), None, "two ran then");
        assert_eq!(
            at("junit-3.12", "2026-06-01T11:00:00Z"),
            None,
            "none ran then"
        );
        assert_eq!(
            uploader(&artifact("junit-ubuntu-latest-3.12", None), &jobs),
            Some(JobId(1)),
            "no time: the name alone"
        );
        assert_eq!(uploader(&artifact("junit-3.1", None), &jobs), None);
    }

    #[test]
    fn the_pattern_is_a_glob_over_the_whole_name() {
        let j = JunitArtifacts::new("junit-*").unwrap();
        assert!(j.matches("junit-linux-3.12"));
        assert!(!j.matches("coverage-junit-x"));
        assert!(JunitArtifacts::new("junit-[").is_err());
    }
}
