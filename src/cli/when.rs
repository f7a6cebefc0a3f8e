//! `WHEN` values of `--since` / `--until`: a UTC date (`2026-06-15`), an RFC 3339 datetime
//! (`2026-06-15T08:00:00Z`, `2026-06-15T10:00:00+02:00`), or a span back from now (`24h`, `7d`,
//! `2w`, also `30m`). Shared by every command that takes a window.
//!
//! A span is written one way for every flag ([`parse_span`]): `--since 30d` and
//! `serve --resync-window 30d` read the same words.
//!
//! `--since` is inclusive. A date given to `--until` means through the end of that day, so the
//! exclusive bound kept internally is the next midnight; a datetime or span is taken as is.

use chrono::{NaiveDate, TimeDelta};

use crate::model::Timestamp;

/// A span's forms, for error messages: every flag that takes a duration reads them.
pub const SPAN_FORMS: &str = "0, 30s, 5m, 1h, 7d, 2w";

/// A span of time, one syntax for every flag: a whole number and its unit, `s`, `m` (or `min`),
/// `h`, `d` or `w`; a bare number is seconds (`0`: none). `None` when `text` is none of these.
pub fn parse_span(text: &str) -> Option<TimeDelta> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let n: i64 = number.parse().ok()?;
    match unit {
        "" | "s" => TimeDelta::try_seconds(n),
        "m" | "min" => TimeDelta::try_minutes(n),
        "h" => TimeDelta::try_hours(n),
        "d" => TimeDelta::try_days(n),
        "w" => TimeDelta::try_weeks(n),
        _ => None,
    }
}

/// The forms accepted, for error messages and `--help`.
pub const WHEN_FORMS: &str = "a date (2026-06-15, UTC), an RFC 3339 datetime (2026-06-15T08:00:00Z) or a span back from now (30m, 24h, 7d, 2w)";

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WhenError {
    #[error("{flag} {value:?} is not a time: use {WHEN_FORMS}")]
    Malformed { flag: &'static str, value: String },
    #[error("--until ({until}) is not after --since ({since}): the window would be empty")]
    Empty { since: String, until: String },
}

/// Which end of the window a value is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// Inclusive start: a date means its midnight.
    Since,
    /// Exclusive end: a date means the next midnight (through the end of that day).
    Until,
}

impl Bound {
    fn flag(self) -> &'static str {
        match self {
            Bound::Since => "--since",
            Bound::Until => "--until",
        }
    }
}

/// Parses one `WHEN` relative to `now`.
pub fn parse_when(text: &str, bound: Bound, now: Timestamp) -> Result<Timestamp, WhenError> {
    let malformed = || WhenError::Malformed {
        flag: bound.flag(),
        value: text.to_string(),
    };
    let text = text.trim();
    if let Ok(date) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        let day = match bound {
            Bound::Since => date,
            Bound::Until => date.succ_opt().ok_or_else(malformed)?,
        };
        return Ok(day.and_hms_opt(0, 0, 0).ok_or_else(malformed)?.and_utc());
    }
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(text) {
        return Ok(t.to_utc());
    }
    // A time back from now names its unit: a bare number (`2026`, `7`) is more likely a
    // mistyped date than seconds.
    if text.chars().all(|c| c.is_ascii_digit()) {
        return Err(malformed());
    }
    let span = parse_span(text).ok_or_else(malformed)?;
    now.checked_sub_signed(span).ok_or_else(malformed)
}

/// Parses `--since` and an optional `--until` (default: now) into `[since, until)`.
pub fn parse_window(
    since: &str,
    until: Option<&str>,
    now: Timestamp,
) -> Result<(Timestamp, Timestamp), WhenError> {
    let start = parse_when(since, Bound::Since, now)?;
    let end = match until {
        Some(u) => parse_when(u, Bound::Until, now)?,
        None => now,
    };
    if end <= start {
        return Err(WhenError::Empty {
            since: since.to_string(),
            until: until.unwrap_or("now").to_string(),
        });
    }
    Ok((start, end))
}

/// The clock, to the second: a window that ends "now" is written the same in every format
/// (JSON would otherwise carry nanoseconds), and two reports in the same second are
/// byte-identical.
pub fn now_to_the_second() -> chrono::DateTime<chrono::Utc> {
    use chrono::SubsecRound;
    chrono::Utc::now().trunc_subsecs(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn valid_and_invalid_whens() {
        let now = t("2026-06-20T12:30:00Z");
        let valid = [
            ("2026-06-15", Bound::Since, "2026-06-15T00:00:00Z"),
            ("2026-06-15", Bound::Until, "2026-06-16T00:00:00Z"),
            ("2026-12-31", Bound::Until, "2027-01-01T00:00:00Z"),
            ("2026-06-15T08:00:00Z", Bound::Since, "2026-06-15T08:00:00Z"),
            ("2026-06-15T08:00:00Z", Bound::Until, "2026-06-15T08:00:00Z"),
            (
                "2026-06-15T10:00:00+02:00",
                Bound::Since,
                "2026-06-15T08:00:00Z",
            ),
            (" 24h ", Bound::Since, "2026-06-19T12:30:00Z"),
            ("7d", Bound::Since, "2026-06-13T12:30:00Z"),
            ("2w", Bound::Until, "2026-06-06T12:30:00Z"),
            ("30m", Bound::Since, "2026-06-20T12:00:00Z"),
            ("0h", Bound::Until, "2026-06-20T12:30:00Z"),
        ];
        for (text, bound, want) in valid {
            assert_eq!(parse_when(text, bound, now), Ok(t(want)), "{text:?}");
        }
        let invalid = [
            "",
            "yesterday",
            "7",
            "d",
            "-7d",
            "7 d",
            "7y",
            "2026-13-01",
            "2026-06-15T08:00",
            "15/06/2026",
            "99999999999999999999d",
            "9999999999w",
        ];
        for text in invalid {
            let err = parse_when(text, Bound::Since, now).unwrap_err();
            let msg = err.to_string();
            assert!(
                msg.contains("--since") && msg.contains("2026-06-15"),
                "{msg}"
            );
        }
    }

    #[test]
    fn window_must_not_be_empty() {
        let now = t("2026-06-20T12:30:00Z");
        assert_eq!(
            parse_window("2026-06-15", Some("2026-06-15"), now),
            Ok((t("2026-06-15T00:00:00Z"), t("2026-06-16T00:00:00Z")))
        );
        assert_eq!(
            parse_window("1d", None, now),
            Ok((t("2026-06-19T12:30:00Z"), now))
        );
        let err = parse_window("2026-06-16", Some("2026-06-14"), now).unwrap_err();
        assert!(matches!(err, WhenError::Empty { .. }));
        assert!(err.to_string().contains("--until"));
        assert!(parse_window("2026-06-15", Some("soon"), now).is_err());
    }
}
