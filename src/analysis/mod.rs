//! Pure functions over a `Snapshot`: impact, re-runs, PR relevance, first occurrence.
