//! The `created` filter of the run listing, in GitHub's search-qualifier syntax: `A..B`, `>=A`,
//! `<=B`, `>A`, `<B`, `A..*`, `*..B` or a bare `A`, where each end is a date (`2026-06-15`, the
//! whole UTC day) or a datetime (`2026-06-15T08:00:00Z`, an instant).

use std::ops::Bound;

use chrono::{DateTime, NaiveDate, NaiveDateTime, TimeDelta, Utc};

use flakestat_core::model::Timestamp;

/// A time range with explicit bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CreatedRange {
    pub start: Bound<Timestamp>,
    pub end: Bound<Timestamp>,
}

impl CreatedRange {
    pub fn contains(&self, t: Timestamp) -> bool {
        let after_start = match self.start {
            Bound::Included(s) => t >= s,
            Bound::Excluded(s) => t > s,
            Bound::Unbounded => true,
        };
        let before_end = match self.end {
            Bound::Included(e) => t <= e,
            Bound::Excluded(e) => t < e,
            Bound::Unbounded => true,
        };
        after_start && before_end
    }
}

/// One end of a range: a date spans `[first, next)`, a datetime is one instant.
#[derive(Debug, Clone, Copy)]
enum Point {
    Day { first: Timestamp, next: Timestamp },
    Instant(Timestamp),
}

impl Point {
    fn start(self) -> Bound<Timestamp> {
        match self {
            Point::Day { first, .. } => Bound::Included(first),
            Point::Instant(t) => Bound::Included(t),
        }
    }

    fn end(self) -> Bound<Timestamp> {
        match self {
            Point::Day { next, .. } => Bound::Excluded(next),
            Point::Instant(t) => Bound::Included(t),
        }
    }
}

fn parse_point(text: &str) -> Option<Point> {
    let text = text.trim();
    if let Ok(date) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        let first = date.and_hms_opt(0, 0, 0)?.and_utc();
        return Some(Point::Day {
            first,
            next: first + TimeDelta::days(1),
        });
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Some(Point::Instant(t.with_timezone(&Utc)));
    }
    for format in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%dT%H:%M"] {
        if let Ok(t) = NaiveDateTime::parse_from_str(text, format) {
            return Some(Point::Instant(t.and_utc()));
        }
    }
    None
}

/// Parses a `created` qualifier; `None` when it is not one of the documented forms.
pub fn parse_created(text: &str) -> Option<CreatedRange> {
    let text = text.trim();
    if let Some(rest) = text.strip_prefix(">=") {
        let p = parse_point(rest)?;
        return Some(CreatedRange {
            start: p.start(),
            end: Bound::Unbounded,
        });
    }
    if let Some(rest) = text.strip_prefix("<=") {
        let p = parse_point(rest)?;
        return Some(CreatedRange {
            start: Bound::Unbounded,
            end: p.end(),
        });
    }
    if let Some(rest) = text.strip_prefix('>') {
        let start = match parse_point(rest)? {
            Point::Day { next, .. } => Bound::Included(next),
            Point::Instant(t) => Bound::Excluded(t),
        };
        return Some(CreatedRange {
            start,
            end: Bound::Unbounded,
        });
    }
    if let Some(rest) = text.strip_prefix('<') {
        let end = match parse_point(rest)? {
            Point::Day { first, .. } => Bound::Excluded(first),
            Point::Instant(t) => Bound::Excluded(t),
        };
        return Some(CreatedRange {
            start: Bound::Unbounded,
            end,
        });
    }
    if let Some((a, b)) = text.split_once("..") {
        let start = if a.trim() == "*" {
            Bound::Unbounded
        } else {
            parse_point(a)?.start()
        };
        let end = if b.trim() == "*" {
            Bound::Unbounded
        } else {
            parse_point(b)?.end()
        };
        return Some(CreatedRange { start, end });
    }
    let p = parse_point(text)?;
    Some(CreatedRange {
        start: p.start(),
        end: p.end(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Timestamp {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn date_range_includes_the_whole_last_day() {
        let r = parse_created("2026-06-15..2026-06-16").unwrap();
        assert!(r.contains(t("2026-06-15T00:00:00Z")));
        assert!(r.contains(t("2026-06-16T23:59:59Z")));
        assert!(!r.contains(t("2026-06-17T00:00:00Z")));
        assert!(!r.contains(t("2026-06-14T23:59:59Z")));
    }

    #[test]
    fn datetime_range_is_inclusive_at_both_instants() {
        let r = parse_created("2026-06-15T08:00:00Z..2026-06-15T09:00:00Z").unwrap();
        assert!(r.contains(t("2026-06-15T08:00:00Z")));
        assert!(r.contains(t("2026-06-15T09:00:00Z")));
        assert!(!r.contains(t("2026-06-15T09:00:01Z")));
    }

    #[test]
    fn comparison_forms() {
        let gt = parse_created(">2026-06-15").unwrap();
        assert!(!gt.contains(t("2026-06-15T12:00:00Z")));
        assert!(gt.contains(t("2026-06-16T00:00:00Z")));
        let ge = parse_created(">=2026-06-15").unwrap();
        assert!(ge.contains(t("2026-06-15T00:00:00Z")));
        let lt = parse_created("<2026-06-15T10:00:00Z").unwrap();
        assert!(!lt.contains(t("2026-06-15T10:00:00Z")));
        assert!(lt.contains(t("2026-06-15T09:59:59Z")));
        let le = parse_created("<=2026-06-15").unwrap();
        assert!(le.contains(t("2026-06-15T23:00:00Z")));
        assert!(!le.contains(t("2026-06-16T00:00:00Z")));
        let gt_instant = parse_created(">2026-06-15T10:00:00Z").unwrap();
        assert!(!gt_instant.contains(t("2026-06-15T10:00:00Z")));
    }

    #[test]
    fn open_ended_ranges() {
        let open_end = parse_created("2026-06-15..*").unwrap();
        assert!(open_end.contains(t("2030-01-01T00:00:00Z")));
        assert!(!open_end.contains(t("2026-06-14T00:00:00Z")));
        let open_start = parse_created("*..2026-06-15T00:00:00Z").unwrap();
        assert!(open_start.contains(t("2000-01-01T00:00:00Z")));
        assert!(!open_start.contains(t("2026-06-15T00:00:01Z")));
    }

    #[test]
    fn bare_date_is_that_day() {
        let r = parse_created("2026-06-15").unwrap();
        assert!(r.contains(t("2026-06-15T23:59:59Z")));
        assert!(!r.contains(t("2026-06-16T00:00:00Z")));
    }

    #[test]
    fn garbage_is_rejected() {
        assert!(parse_created("yesterday").is_none());
        assert!(parse_created("2026-13-01..2026-12-01").is_none());
        assert!(parse_created(">=").is_none());
    }
}
