//! Signature files: load, compile into one matcher, normalize GitHub Actions raw logs.
