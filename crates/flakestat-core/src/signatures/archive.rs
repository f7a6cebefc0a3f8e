//! Raw job logs as GitHub packs and stamps them: the time span a log's timestamps cover (to tell
//! whether a log belongs to the job execution it was fetched for), and log archives (`.zip`):
//! a run attempt's archive holds one `<i>_<job name>.txt` per job at the top level (the name
//! lossy: `/` dropped, a repeated name suffixed ` (1)`, ` (2)`…) and a folder per job with one
//! file per step.
//!
//! Pure functions over bytes; the archives themselves are read by the crate `flakestat-zip`
//! (`visit_files`, for `cli classify` and the survey's attempt archives alike), so this crate
//! builds without zip.

use chrono::{DateTime, TimeDelta, Utc};

use super::normalize::timestamp_len;
use crate::model::Timestamp;

/// How far a log's timestamps may stray outside its job's `started_at..completed_at` (the
/// runner's clock and GitHub's are not the same clock).
pub const CLOCK_SKEW: TimeDelta = TimeDelta::minutes(1);

/// The first and last timestamps of a raw log; `None` when no line carries one.
pub fn log_span(log: &[u8]) -> Option<(Timestamp, Timestamp)> {
    let stamp = |line: &[u8]| -> Option<Timestamp> {
        let mut line = line;
        while let Some(rest) = line.strip_prefix("\u{feff}".as_bytes()) {
            line = rest;
        }
        let len = timestamp_len(line);
        if len == 0 {
            return None;
        }
        let text = std::str::from_utf8(&line[..len]).ok()?.trim_end();
        DateTime::parse_from_rfc3339(text)
            .ok()
            .map(|t| t.with_timezone(&Utc))
    };
    let first = log.split(|&b| b == b'\n').find_map(stamp)?;
    let last = log.rsplit(|&b| b == b'\n').find_map(stamp)?;
    Some((first, last))
}

/// Whether a log spanning `span` can be the log of a job execution that ran from `started` to
/// `completed` (give or take [`CLOCK_SKEW`]). Unknown bounds do not exclude.
pub fn span_fits(
    span: (Timestamp, Timestamp),
    started: Option<Timestamp>,
    completed: Option<Timestamp>,
) -> bool {
    let (first, last) = span;
    started.is_none_or(|s| first >= s - CLOCK_SKEW)
        && completed.is_none_or(|c| last <= c + CLOCK_SKEW)
}

/// A job's name as an attempt archive spells it in its entry names: without `/`.
pub fn archive_job_name(job_name: &str) -> String {
    job_name.replace('/', "")
}

/// The job name of a top-level archive entry `<i>_<name>.txt` (without a ` (k)` suffix that
/// tells repeated names apart); `None` for folders, per-step files and anything else.
pub fn entry_job_name(entry: &str) -> Option<&str> {
    if entry.contains('/') || entry.contains('\\') {
        return None;
    }
    let stem = entry.strip_suffix(".txt")?;
    let (index, name) = stem.split_once('_')?;
    if index.is_empty() || !index.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let name = match name.rsplit_once(" (") {
        Some((base, k))
            if k.strip_suffix(')')
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())) =>
        {
            base
        }
        _ => name,
    };
    Some(name)
}

/// Whether an archive entry's job name stands for the job named `job_name`: equal once `/` is
/// dropped, or a prefix of it when the archive cut a long name (GitHub cuts at 90 UTF-16 units).
pub fn entry_names_job(entry_name: &str, job_name: &str) -> bool {
    let want = archive_job_name(job_name);
    entry_name == want
        || (entry_name.encode_utf16().count() >= 80 && want.starts_with(entry_name))
        || entry_name.trim() == want.trim()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn the_span_skips_boms_and_unstamped_lines() {
        let log = "\u{feff}2026-07-15T16:00:00.1234567Z ##[group]Run x\n\
                   continuation without a stamp\n\
                   \u{feff}2026-07-15T16:10:00.0000000Z done\n\
                   trailing\n";
        assert_eq!(
            log_span(log.as_bytes()),
            Some((t("2026-07-15T16:00:00.1234567Z"), t("2026-07-15T16:10:00Z")))
        );
        assert_eq!(log_span(b"plain text\nno stamps\n"), None);
    }

    #[test]
    fn a_span_fits_its_execution_within_a_minute_of_skew() {
        let span = (t("2026-07-15T16:00:00Z"), t("2026-07-15T16:10:00Z"));
        let fits = |s: &str, c: &str| span_fits(span, Some(t(s)), Some(t(c)));
        assert!(fits("2026-07-15T16:00:30Z", "2026-07-15T16:09:30Z"));
        assert!(!fits("2026-07-15T16:01:30Z", "2026-07-15T16:20:00Z"));
        assert!(!fits("2026-07-15T15:00:00Z", "2026-07-15T15:20:00Z"));
        assert!(span_fits(span, None, None));
    }

    #[test]
    fn entry_names_give_the_job_name() {
        assert_eq!(
            entry_job_name("3_Test linux-64  py3.13.txt"),
            Some("Test linux-64  py3.13")
        );
        assert_eq!(entry_job_name("12_build (1).txt"), Some("build"));
        assert_eq!(entry_job_name("4_odd (name).txt"), Some("odd (name)"));
        assert_eq!(entry_job_name("build/1_Set up job.txt"), None);
        assert_eq!(entry_job_name("x_build.txt"), None);
        assert_eq!(entry_job_name("1_build.log"), None);
        assert!(entry_names_job(
            "Test linux-64  py3.13",
            "Test linux-64 / py3.13"
        ));
        assert!(!entry_names_job(
            "Test linux-64  py3.12",
            "Test linux-64 / py3.13"
        ));
        let long = "x".repeat(120);
        assert!(entry_names_job(&long[..90], &long));
        assert!(!entry_names_job("x", &long));
    }
}
