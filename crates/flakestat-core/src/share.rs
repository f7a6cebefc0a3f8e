//! Shares, one rule for all: a figure is a percentage rounded to one decimal (`percent`, what
//! the JSON carries), and a report writes it without a space before `%` (`percent_text`):
//! "21%" where whole percents say it, "12.5%" where a tenth matters (a host's rate beside its
//! pool's).

/// `n` of `d` in percent, rounded to one decimal; `None` when `d` is 0.
pub fn percent(n: u64, d: u64) -> Option<f64> {
    (d > 0).then(|| rounded(n as f64 / d as f64))
}

/// A rate (0 to 1) in percent, rounded to one decimal.
pub fn rounded(rate: f64) -> f64 {
    (rate * 1000.0).round() / 10.0
}

/// A percentage as a report writes it, with `decimals` decimals: `21%`, `12.5%`.
pub fn percent_text(percent: f64, decimals: usize) -> String {
    format!("{percent:.decimals$}%")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_share_is_rounded_once_and_written_without_a_space() {
        assert_eq!(percent(16, 77), Some(20.8));
        assert_eq!(percent(1, 0), None);
        assert_eq!(percent_text(20.8, 0), "21%");
        assert_eq!(percent_text(rounded(0.125), 1), "12.5%");
        assert_eq!(percent_text(rounded(1.0 / 3.0), 1), "33.3%");
    }
}
