//! A fake GitHub REST API on 127.0.0.1, for tests, benchmarks and `survey --replay`.
