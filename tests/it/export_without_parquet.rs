//! `flakestat export` in a build without the cargo feature `parquet` (the default build, which
//! the quick start and `cargo test` compile): one message that says how to get Parquet, exit 2,
//! and nothing read or written. The Parquet checks themselves (`export_parquet`) need the feature:
//! `cargo test --features parquet`, which `.ci/run` runs.

use crate::common::{self, STORY_WINDOW, surveyed_story};

#[test]
fn export_without_the_parquet_feature_says_how_to_get_it_and_writes_nothing() {
    let out = tempfile::tempdir().unwrap();
    let warehouse = out.path().join("warehouse");
    let mut args = vec!["export", "--format", "parquet", "--output"];
    args.push(warehouse.to_str().unwrap());
    args.extend(STORY_WINDOW);
    let done = common::flakestat()
        .args(&args)
        .arg("--cache-dir")
        .arg(surveyed_story())
        .arg("--signatures")
        .arg(common::signatures())
        .env("NO_COLOR", "1")
        .output()
        .expect("the binary runs");
    let said = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(2), "{said}");
    assert!(
        said.contains("built without Parquet (cargo feature `parquet`")
            && said.contains("--features parquet"),
        "{said}"
    );
    assert_eq!(said.lines().count(), 1, "one line: {said}");
    assert!(done.stdout.is_empty());
    assert!(
        !warehouse.exists(),
        "--output is not made by a build that cannot fill it"
    );
    common::skips::skipped(
        common::skips::Need::ParquetFeature,
        "skipped: export_parquet's checks need the cargo feature parquet",
    );
}
