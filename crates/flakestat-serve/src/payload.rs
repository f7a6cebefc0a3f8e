//! What a verified delivery says, read from GitHub's `workflow_run` and `workflow_job` payloads:
//! the repository, the run and attempt, the action, and whether it names a completed run
//! attempt (the worker's work). Only these few fields are read; GitHub adds fields freely, and
//! every one read here is documented for both events.

use serde::Deserialize;

use flakestat_core::model::{Repo, RunId, Timestamp};

/// The events the receiver reads; anything else is acknowledged and ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    WorkflowRun,
    WorkflowJob,
    Ping,
    /// Any other `X-GitHub-Event` (never echoed: it is the sender's text).
    Other,
}

impl Event {
    pub fn parse(header: Option<&[u8]>) -> Event {
        match header {
            Some(b"workflow_run") => Event::WorkflowRun,
            Some(b"workflow_job") => Event::WorkflowJob,
            Some(b"ping") => Event::Ping,
            _ => Event::Other,
        }
    }

    /// The label in `/metrics` and the word in the queue table.
    pub fn as_str(self) -> &'static str {
        match self {
            Event::WorkflowRun => "workflow_run",
            Event::WorkflowJob => "workflow_job",
            Event::Ping => "ping",
            Event::Other => "other",
        }
    }
}

/// The fields of one delivery the queue keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    pub action: String,
    pub repo: Repo,
    pub run: RunId,
    pub run_attempt: u32,
    pub run_created_at: Option<Timestamp>,
    /// A `workflow_run` whose action is `completed`: its attempt is ingested.
    pub completed_run: bool,
}

#[derive(Deserialize)]
struct Payload {
    action: String,
    repository: Repository,
    workflow_run: Option<WorkflowRun>,
    workflow_job: Option<WorkflowJob>,
}

#[derive(Deserialize)]
struct Repository {
    full_name: String,
}

#[derive(Deserialize)]
struct WorkflowRun {
    id: u64,
    run_attempt: u32,
    created_at: Timestamp,
}

#[derive(Deserialize)]
struct WorkflowJob {
    run_id: u64,
    run_attempt: u32,
}

/// GitHub's ids are positive and below 2^53 (JavaScript's safe integers, which GitHub's own
/// clients use): anything else in a payload is not GitHub's, and is refused before it is stored
/// (a larger number would not even fit the store's 64-bit signed columns).
pub const MAX_GITHUB_ID: u64 = (1 << 53) - 1;

/// `value` as a GitHub id named `what`, or why it is not one.
fn github_id(what: &str, value: u64) -> Result<u64, String> {
    if (1..=MAX_GITHUB_ID).contains(&value) {
        Ok(value)
    } else {
        Err(format!(
            "{what} {value} is not a GitHub id (1 to {MAX_GITHUB_ID})"
        ))
    }
}

/// A run attempt's number: 1 and up (GitHub counts re-runs from the first).
fn attempt(what: &str, value: u32) -> Result<u32, String> {
    if value >= 1 {
        Ok(value)
    } else {
        Err(format!(
            "{what} {value} is not an attempt number (1 and up)"
        ))
    }
}

/// A verified body of `event` (`WorkflowRun` or `WorkflowJob`), or what is wrong with it. Every
/// number read is checked here, before anything is stored.
pub fn parse(event: Event, body: &[u8]) -> Result<Parsed, String> {
    let payload: Payload = serde_json::from_slice(body)
        .map_err(|e| format!("the payload is not a {} event: {e}", event.as_str()))?;
    let repo = Repo::parse(&payload.repository.full_name).ok_or_else(|| {
        format!(
            "repository.full_name {:?} is not OWNER/NAME",
            payload.repository.full_name
        )
    })?;
    let (run, run_attempt, run_created_at) =
        match (event, payload.workflow_run, payload.workflow_job) {
            (Event::WorkflowRun, Some(r), _) => (
                github_id("workflow_run.id", r.id)?,
                attempt("workflow_run.run_attempt", r.run_attempt)?,
                Some(r.created_at),
            ),
            (Event::WorkflowJob, _, Some(j)) => (
                github_id("workflow_job.run_id", j.run_id)?,
                attempt("workflow_job.run_attempt", j.run_attempt)?,
                None,
            ),
            _ => return Err(format!("the payload has no {} object", event.as_str())),
        };
    Ok(Parsed {
        completed_run: event == Event::WorkflowRun && payload.action == "completed",
        action: payload.action,
        repo,
        run: RunId(run),
        run_attempt,
        run_created_at,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example(name: &str) -> Vec<u8> {
        let path = format!(
            "{}/../../fixtures/webhooks/{name}.payload.json",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// GitHub's examples (fixtures/webhooks, from octokit/webhooks): only a completed
    /// `workflow_run` is work; the job events name their run and attempt.
    #[test]
    fn githubs_example_payloads_parse() {
        let completed = parse(Event::WorkflowRun, &example("workflow_run.completed")).unwrap();
        assert_eq!(completed.repo, Repo::parse("octo-org/octo-repo").unwrap());
        assert_eq!(
            (completed.run, completed.run_attempt),
            (RunId(289782451), 1)
        );
        assert_eq!(
            completed.run_created_at.map(|t| t.to_rfc3339()),
            Some("2020-10-05T16:33:24+00:00".to_string())
        );
        assert!(completed.completed_run);

        let requested = parse(Event::WorkflowRun, &example("workflow_run.requested")).unwrap();
        assert_eq!(requested.action, "requested");
        assert!(!requested.completed_run);

        let job = parse(
            Event::WorkflowJob,
            &example("workflow_job.completed.failure.with-organization"),
        )
        .unwrap();
        assert_eq!((job.run, job.run_attempt), (RunId(2202229078), 1));
        assert_eq!(job.repo, Repo::parse("Codertocat/Hello-World").unwrap());
        assert!(!job.completed_run, "a job's completion is not its run's");
        assert_eq!(job.run_created_at, None);
        let queued = parse(Event::WorkflowJob, &example("workflow_job.queued")).unwrap();
        assert_eq!(queued.action, "queued");
    }

    #[test]
    fn a_payload_of_the_other_event_or_no_json_is_refused() {
        let job = example("workflow_job.queued");
        assert!(
            parse(Event::WorkflowRun, &job)
                .unwrap_err()
                .contains("no workflow_run")
        );
        assert!(parse(Event::WorkflowJob, b"{").is_err());
        assert!(
            parse(
                Event::WorkflowRun,
                br#"{"action":"completed","repository":{"full_name":"nope"}}"#
            )
            .unwrap_err()
            .contains("not OWNER/NAME")
        );
    }

    /// The poison delivery of issue 41: a run id past 2^63 was stored wrapped to a negative
    /// number no reader could take back. Ids outside GitHub's 1..2^53 and attempt 0 are
    /// refused by name; 2^53-1 is still an id.
    #[test]
    fn ids_outside_githubs_range_are_refused_before_anything_is_stored() {
        let run = |id: &str, attempt: &str| {
            format!(
                r#"{{"action":"completed","repository":{{"full_name":"octo/demo"}},
                   "workflow_run":{{"id":{id},"run_attempt":{attempt},
                   "created_at":"2026-07-01T00:00:00Z"}}}}"#
            )
        };
        for (id, attempt, why) in [
            (
                "9223372036854775813",
                "1",
                "workflow_run.id 9223372036854775813 is not a GitHub id",
            ),
            (
                "9007199254740992",
                "1",
                "workflow_run.id 9007199254740992 is not a GitHub id",
            ),
            ("0", "1", "workflow_run.id 0 is not a GitHub id"),
            (
                "5",
                "0",
                "workflow_run.run_attempt 0 is not an attempt number",
            ),
        ] {
            let err = parse(Event::WorkflowRun, run(id, attempt).as_bytes()).unwrap_err();
            assert!(err.contains(why), "{id}/{attempt}: {err}");
        }
        assert!(parse(Event::WorkflowRun, run("-5", "1").as_bytes()).is_err());
        let largest = parse(Event::WorkflowRun, run("9007199254740991", "2").as_bytes()).unwrap();
        assert_eq!(
            (largest.run, largest.run_attempt),
            (RunId(MAX_GITHUB_ID), 2)
        );
        let job = br#"{"action":"queued","repository":{"full_name":"octo/demo"},
                       "workflow_job":{"run_id":18446744073709551615,"run_attempt":1}}"#;
        assert!(
            parse(Event::WorkflowJob, job)
                .unwrap_err()
                .contains("workflow_job.run_id 18446744073709551615")
        );
    }
}
