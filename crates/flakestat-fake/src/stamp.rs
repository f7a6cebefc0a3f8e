//! Timestamps as GitHub writes them, written field by field: chrono's `format` parses its
//! pattern again on every call, and the fake stamps every line of every log it serves.

use std::fmt::Write as _;

use chrono::{Datelike as _, Timelike as _};
use flakestat_core::model::Timestamp;

/// `2026-07-15T16:52:00Z`: the REST API's form, whole seconds.
pub(crate) fn api(t: Timestamp) -> String {
    let mut out = String::with_capacity(20);
    push_seconds(&mut out, t);
    out.push('Z');
    out
}

/// `2026-07-15T16:52:00.1234567Z`: a runner's log line prefix, in tenths of a microsecond.
pub(crate) fn log_line(t: Timestamp) -> String {
    let mut out = String::with_capacity(28);
    push_seconds(&mut out, t);
    let _ = write!(out, ".{:07}Z", t.nanosecond() / 100);
    out
}

fn push_seconds(out: &mut String, t: Timestamp) {
    let _ = write!(
        out,
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        t.year(),
        t.month(),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    );
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone as _, Utc};

    use super::*;

    #[test]
    fn both_forms_say_what_chrono_s_patterns_say() {
        let times = [
            Utc.with_ymd_and_hms(2026, 7, 15, 16, 52, 0).unwrap(),
            Utc.with_ymd_and_hms(2026, 1, 2, 3, 4, 5).unwrap()
                + chrono::TimeDelta::nanoseconds(123_456_789),
            Utc.with_ymd_and_hms(999, 12, 31, 23, 59, 59).unwrap()
                + chrono::TimeDelta::nanoseconds(99),
        ];
        for t in times {
            assert_eq!(api(t), t.format("%Y-%m-%dT%H:%M:%SZ").to_string());
            assert_eq!(
                log_line(t),
                format!(
                    "{}.{:07}Z",
                    t.format("%Y-%m-%dT%H:%M:%S"),
                    t.nanosecond() / 100
                )
            );
        }
        assert_eq!(log_line(times[1]), "2026-01-02T03:04:05.1234567Z");
    }
}
