//! Which log is which job's: an attempt archive's entries matched to the failed jobs they hold
//! (by name, then by timestamps), whether a per-job download is its job's own execution (GitHub
//! answers an earlier attempt's job id with the latest attempt's log), and when one archive is
//! cheaper than a request per job. Pure but for `read_archive`, which reads the zip (on a
//! blocking thread: `ingest` calls it through `blocking`).

use std::collections::BTreeMap;
use std::io::{Read, Seek};

use super::FetchError;
use super::spool::LogBody;
use flakestat_core::model::{Job, JobId, Timestamp};
use flakestat_core::signatures::archive::{entry_job_name, entry_names_job, span_fits};

/// Whether one attempt's failed-job logs are cheaper fetched as the attempt's log archive (one
/// request, every job's log in one zip) than one by one (one request per failed job): when at
/// least two are needed, and either the attempt is an earlier one of its run (whose per-job
/// logs GitHub may answer with the latest attempt's, costing the archive anyway) or at least a
/// quarter of the attempt's jobs failed (the zip is then not much bigger than the logs it
/// replaces: it also holds the jobs that passed). `needed`: failed jobs whose log is not stored;
/// `executed`: jobs that ran in the attempt; `latest`: it is the run's latest attempt.
pub(super) fn archive_is_cheaper(needed: usize, executed: usize, latest: bool) -> bool {
    needed >= 2 && (!latest || needed * 4 >= executed)
}

/// Whether a log whose timestamps span `span` is the log of `job` (one execution of a job): it
/// fits the job's `started_at..completed_at`, and no other execution of the same job in the run
/// (another attempt's) fits it better. A log without timestamps cannot be told apart: it is
/// taken as the job's.
pub(super) fn is_own_log(
    span: Option<(Timestamp, Timestamp)>,
    job: &Job,
    run_jobs: &[Job],
) -> bool {
    let Some(span) = span else {
        return true;
    };
    span_fits(span, job.started_at, job.completed_at) && !fits_another_better(span, job, run_jobs)
}

/// Whether another execution of `job` (same run and name, another id) fits `span`, and starts
/// closer to its first timestamp than `job` does.
fn fits_another_better(span: (Timestamp, Timestamp), job: &Job, run_jobs: &[Job]) -> bool {
    let distance = |j: &Job| j.started_at.map(|s| (span.0 - s).abs());
    let own = distance(job);
    run_jobs.iter().any(|other| {
        other.id != job.id
            && other.name == job.name
            && span_fits(span, other.started_at, other.completed_at)
            && match (distance(other), own) {
                (Some(d), Some(o)) => d < o,
                (Some(_), None) => true,
                _ => false,
            }
    })
}

/// Picks, among an attempt archive's top-level entries (`(entry job name, log_span)`; a spooled
/// entry's span is read at its head and tail, `LogBody::span`), the log of
/// each job in `jobs`: by name, then by timestamps (the entry that fits the execution and
/// starts nearest to it). A job whose only entry by name fits none of the run's executions is
/// given that entry (its runner's clock may be off); one that fits another execution is not.
/// Each entry serves at most one job. Returns the entry index per job that has one.
pub(super) fn match_archive_spans(
    entries: &[(String, Option<(Timestamp, Timestamp)>)],
    jobs: &[Job],
    run_jobs: &[Job],
) -> BTreeMap<JobId, usize> {
    let spans: Vec<_> = entries.iter().map(|(_, span)| *span).collect();
    let mut used = vec![false; entries.len()];
    let mut out = BTreeMap::new();
    for job in jobs {
        let by_name: Vec<usize> = (0..entries.len())
            .filter(|&i| !used[i] && entry_names_job(&entries[i].0, &job.name))
            .collect();
        let start = job.started_at;
        let nearest = by_name
            .iter()
            .copied()
            .filter(|&i| spans[i].is_some() && is_own_log(spans[i], job, run_jobs))
            .min_by_key(|&i| {
                let first = spans[i].map(|s| s.0);
                match (first, start) {
                    (Some(f), Some(s)) => (f - s).abs(),
                    _ => chrono::TimeDelta::zero(),
                }
            });
        let chosen = nearest.or_else(|| match by_name.as_slice() {
            [only] => {
                let fits_other = spans[*only].is_some_and(|span| {
                    run_jobs.iter().any(|o| {
                        o.id != job.id
                            && o.name == job.name
                            && span_fits(span, o.started_at, o.completed_at)
                    })
                });
                (!fits_other).then_some(*only)
            }
            _ => None,
        });
        if let Some(i) = chosen {
            used[i] = true;
            out.insert(job.id, i);
        }
    }
    out
}

/// An archive's entries read (entry name, log) and the entry matched to each job.
pub(super) type ArchiveEntries = (Vec<(String, LogBody)>, BTreeMap<JobId, usize>);

/// Reads the entries of an attempt's log archive named like one of `wanted`'s jobs (each up to
/// `max_entry` bytes: a zip bomb stays bounded; into memory up to `SPOOL_AT`, past it into a
/// temporary file), and matches them to the jobs by their times ([`match_archive_spans`]).
/// Blocking.
pub(super) fn read_archive(
    body: LogBody,
    wanted: &[Job],
    run_jobs: &[Job],
    max_entry: u64,
    url: String,
) -> Result<ArchiveEntries, FetchError> {
    let mut entries: Vec<(String, LogBody)> = Vec::new();
    let each = |entry: Result<(&str, &mut dyn Read), String>| {
        let Ok((path, reader)) = entry else {
            return;
        };
        let Some(name) = entry_job_name(path) else {
            return;
        };
        if !wanted.iter().any(|j| entry_names_job(name, &j.name)) {
            return;
        }
        if let Ok(body) = LogBody::read(&mut reader.take(max_entry)) {
            entries.push((name.to_string(), body));
        }
    };
    match body {
        LogBody::Memory(bytes) => flakestat_zip::visit_files(std::io::Cursor::new(bytes), each),
        LogBody::Spooled(mut file, _) => {
            if let Err(e) = file.rewind() {
                return Err(FetchError::Spool(format!(
                    "cannot read {url} back from its temporary file: {e}"
                )));
            }
            flakestat_zip::visit_files(file, each)
        }
    }
    .map_err(|e| FetchError::Parse {
        url,
        error: format!("the attempt's log archive is not a readable zip: {e}"),
    })?;
    let spans: Vec<_> = entries
        .iter_mut()
        .map(|(name, body)| (name.clone(), body.span().ok().flatten()))
        .collect();
    let matched = match_archive_spans(&spans, wanted, run_jobs);
    Ok((entries, matched))
}

#[cfg(test)]
mod tests {
    use super::*;
    use flakestat_core::model::RunId;
    use flakestat_core::signatures::archive::log_span;

    #[test]
    fn the_archive_replaces_per_job_downloads_only_when_cheaper() {
        // One failed job: one request either way; the per-job log is the dependable path.
        assert!(!archive_is_cheaper(1, 70, false));
        assert!(!archive_is_cheaper(1, 2, true));
        // An earlier attempt with several failed jobs: one request instead of several.
        assert!(archive_is_cheaper(2, 70, false));
        // The latest attempt: only when the zip is mostly failed jobs' logs.
        assert!(!archive_is_cheaper(3, 70, true));
        assert!(archive_is_cheaper(18, 70, true));
        assert!(archive_is_cheaper(2, 8, true));
    }

    fn job(id: u64, attempt: u32, name: &str, start: &str, end: &str) -> Job {
        Job {
            id: JobId(id),
            run_id: RunId(1),
            run_attempt: attempt,
            name: name.into(),
            status: "completed".into(),
            conclusion: Some("failure".into()),
            created_at: start.parse().unwrap(),
            started_at: Some(start.parse().unwrap()),
            completed_at: Some(end.parse().unwrap()),
            html_url: None,
            head_sha: flakestat_core::model::Sha("a".repeat(40)),
            labels: Vec::new(),
        }
    }

    fn log(from: &str, to: &str) -> Vec<u8> {
        format!("\u{feff}{from} start\n{to} end\n").into_bytes()
    }

    #[test]
    fn a_log_is_its_job_s_only_when_its_times_fit_that_execution() {
        let first = job(
            1,
            1,
            "Test / py3.14t",
            "2026-07-15T10:00:00Z",
            "2026-07-15T10:20:00Z",
        );
        let second = job(
            2,
            2,
            "Test / py3.14t",
            "2026-07-15T11:00:00Z",
            "2026-07-15T11:20:00Z",
        );
        let run = [first.clone(), second.clone()];
        let own = log_span(&log(
            "2026-07-15T09:59:30.0000000Z",
            "2026-07-15T10:19:00.0000000Z",
        ));
        let later = log_span(&log(
            "2026-07-15T11:00:05.0000000Z",
            "2026-07-15T11:19:00.0000000Z",
        ));
        assert!(is_own_log(own, &first, &run));
        assert!(!is_own_log(later, &first, &run), "the latest attempt's log");
        assert!(is_own_log(later, &second, &run));
        assert!(is_own_log(None, &first, &run), "no timestamps: cannot tell");

        // The archive: the entry by name (`/` dropped), then by time; never another's.
        let entries = vec![
            (
                "Test  py3.14".to_string(),
                log(
                    "2026-07-15T10:00:00.0000000Z",
                    "2026-07-15T10:01:00.0000000Z",
                ),
            ),
            (
                "Test  py3.14t".to_string(),
                log(
                    "2026-07-15T10:00:10.0000000Z",
                    "2026-07-15T10:19:00.0000000Z",
                ),
            ),
        ];
        let spans =
            |entries: &[(String, Vec<u8>)]| -> Vec<(String, Option<(Timestamp, Timestamp)>)> {
                entries
                    .iter()
                    .map(|(name, log)| {
                        (
                            name.clone(),
                            flakestat_core::signatures::archive::log_span(log),
                        )
                    })
                    .collect()
            };
        let matched = match_archive_spans(&spans(&entries), std::slice::from_ref(&first), &run);
        assert_eq!(matched.get(&JobId(1)), Some(&1));
        let stale = vec![(
            "Test  py3.14t".to_string(),
            log(
                "2026-07-15T11:00:10.0000000Z",
                "2026-07-15T11:19:00.0000000Z",
            ),
        )];
        assert!(match_archive_spans(&spans(&stale), &[first], &run).is_empty());
    }
}
