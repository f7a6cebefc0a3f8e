//! `flakestat export --format parquet`: the five tables of an `ExportData` as Parquet files that
//! DuckDB, BigQuery, ClickHouse and Spark read directly. The only file naming arrow or parquet,
//! in a crate of its own at the command line's edge: parquet and arrow are a large part of a cold
//! build, and only `export` needs them, so flakestat-core (and the store, GitHub and fake crates
//! above it) build without them, side by side with this one.
//! Pure: each file is rendered into memory (the caller writes them atomically).
//!
//! Portable types only: signed integers (BigQuery has no unsigned ones), UTF-8 strings,
//! booleans, doubles, lists of strings, and `TIMESTAMP(MICROS, UTC)` for every time. Nothing
//! that changes from run to run goes into a file (no creation time; `created_by` names the
//! parquet-rs version), so the same store gives byte-identical files.

use std::sync::Arc;

/// The two crates the files are written with, for a reader in the same build (the root
/// package's tests read the export back through these, so they need no second copy of
/// parquet as a dev-dependency, which `cargo test` would build even without the feature).
pub use arrow_array;
pub use parquet;

use arrow_array::builder::{ListBuilder, StringBuilder};
use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray,
    TimestampMicrosecondArray,
};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::errors::ParquetError;
use parquet::file::properties::WriterProperties;

use flakestat_core::analysis::export::ExportData;
use flakestat_core::model::Timestamp;

/// The files `render` produces, in order.
pub const FILES: [&str; 5] = [
    "runs.parquet",
    "jobs.parquet",
    "hits.parquet",
    "pulls.parquet",
    "suspects.parquet",
];

/// The sixth file, written only when `--green-logs` read some green job's log: one row per
/// green job execution read (`ExportData::green`). An export without green logs is the five
/// files as before.
pub const GREEN_FILE: &str = "green_jobs.parquet";

/// The prefix of a matrix dimension's column in `jobs.parquet` (`dim_python`): no dimension
/// name, which `flakestat.toml`'s `[matrix]` pattern may choose freely, can clash with a fixed
/// column.
pub const DIMENSION_PREFIX: &str = "dim_";

/// The five files, named as in [`FILES`], each a whole Parquet file.
pub fn render(data: &ExportData) -> Result<Vec<(&'static str, Vec<u8>)>, ParquetError> {
    let batches = [
        runs(data)?,
        jobs(data)?,
        hits(data)?,
        pulls(data)?,
        suspects(data)?,
    ];
    let mut files: Vec<(&'static str, Vec<u8>)> = FILES
        .iter()
        .zip(batches)
        .map(|(name, batch)| Ok((*name, write(&batch)?)))
        .collect::<Result<_, ParquetError>>()?;
    if !data.green.is_empty() {
        files.push((GREEN_FILE, write(&green_jobs(data)?)?));
    }
    Ok(files)
}

fn green_jobs(data: &ExportData) -> Result<RecordBatch, ParquetError> {
    let g = &data.green;
    batch(named(vec![
        ("job_id", int(g.iter().map(|x| x.job_id.0)), false),
        ("run_id", int(g.iter().map(|x| x.run_id.0)), false),
        ("attempt", small(g.iter().map(|x| x.attempt)), false),
        (
            "workflow",
            text(g.iter().map(|x| x.workflow.as_str())),
            false,
        ),
        ("job", text(g.iter().map(|x| x.job.as_str())), false),
        ("passed", int_opt(g.iter().map(|x| x.passed)), true),
        ("retries", int(g.iter().map(|x| x.retries)), false),
        ("minutes", float_opt(g.iter().map(|x| x.minutes)), true),
        (
            "retry_minutes",
            float_opt(g.iter().map(|x| x.retry_minutes)),
            true,
        ),
        (
            "retried",
            list(g.iter().map(|x| Some(x.retried.as_slice()))),
            false,
        ),
    ]))
}

fn write(batch: &RecordBatch) -> Result<Vec<u8>, ParquetError> {
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .build();
    let mut writer = ArrowWriter::try_new(Vec::new(), batch.schema(), Some(props))?;
    writer.write(batch)?;
    writer.into_inner()
}

type Column = (&'static str, ArrayRef, bool);

fn batch(columns: Vec<(String, ArrayRef, bool)>) -> Result<RecordBatch, ParquetError> {
    RecordBatch::try_from_iter_with_nullable(columns)
        .map_err(|e| ParquetError::General(format!("building a Parquet table: {e}")))
}

fn named(columns: Vec<Column>) -> Vec<(String, ArrayRef, bool)> {
    columns
        .into_iter()
        .map(|(n, a, nullable)| (n.to_string(), a, nullable))
        .collect()
}

fn micros(t: Timestamp) -> i64 {
    t.timestamp_micros()
}

fn time<I: IntoIterator<Item = Timestamp>>(values: I) -> ArrayRef {
    Arc::new(
        TimestampMicrosecondArray::from_iter_values(values.into_iter().map(micros))
            .with_timezone("UTC"),
    )
}

fn time_opt<I: IntoIterator<Item = Option<Timestamp>>>(values: I) -> ArrayRef {
    Arc::new(
        TimestampMicrosecondArray::from_iter(values.into_iter().map(|t| t.map(micros)))
            .with_timezone("UTC"),
    )
}

fn text<'a, I: IntoIterator<Item = &'a str>>(values: I) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(values))
}

fn text_opt<'a, I: IntoIterator<Item = Option<&'a str>>>(values: I) -> ArrayRef {
    Arc::new(StringArray::from_iter(values))
}

fn int<I: IntoIterator<Item = u64>>(values: I) -> ArrayRef {
    // Ids and counts fit in 63 bits (GitHub's ids are far from it); saturate rather than wrap.
    Arc::new(Int64Array::from_iter_values(
        values
            .into_iter()
            .map(|v| i64::try_from(v).unwrap_or(i64::MAX)),
    ))
}

fn int_opt<I: IntoIterator<Item = Option<u64>>>(values: I) -> ArrayRef {
    Arc::new(Int64Array::from_iter(
        values
            .into_iter()
            .map(|v| v.map(|v| i64::try_from(v).unwrap_or(i64::MAX))),
    ))
}

fn small<I: IntoIterator<Item = u32>>(values: I) -> ArrayRef {
    Arc::new(Int32Array::from_iter_values(
        values
            .into_iter()
            .map(|v| i32::try_from(v).unwrap_or(i32::MAX)),
    ))
}

fn flag<I: IntoIterator<Item = bool>>(values: I) -> ArrayRef {
    Arc::new(BooleanArray::from_iter(values.into_iter().map(Some)))
}

fn flag_opt<I: IntoIterator<Item = Option<bool>>>(values: I) -> ArrayRef {
    Arc::new(BooleanArray::from_iter(values))
}

fn float<I: IntoIterator<Item = f64>>(values: I) -> ArrayRef {
    Arc::new(Float64Array::from_iter_values(values))
}

fn float_opt<I: IntoIterator<Item = Option<f64>>>(values: I) -> ArrayRef {
    Arc::new(Float64Array::from_iter(values))
}

/// A list of strings per row; `None` is a null list (unknown), `Some(&[])` an empty one.
fn list<'a, I: IntoIterator<Item = Option<&'a [String]>>>(rows: I) -> ArrayRef {
    let mut builder = ListBuilder::new(StringBuilder::new());
    for row in rows {
        match row {
            Some(items) => {
                for item in items {
                    builder.values().append_value(item);
                }
                builder.append(true);
            }
            None => builder.append(false),
        }
    }
    Arc::new(builder.finish())
}

fn runs(data: &ExportData) -> Result<RecordBatch, ParquetError> {
    let r = &data.runs;
    batch(named(vec![
        ("id", int(r.iter().map(|x| x.id.0)), false),
        ("attempts", small(r.iter().map(|x| x.attempts)), false),
        (
            "workflow",
            text(r.iter().map(|x| x.workflow.as_str())),
            false,
        ),
        ("event", text(r.iter().map(|x| x.event.as_str())), false),
        (
            "branch",
            text_opt(r.iter().map(|x| x.branch.as_deref())),
            true,
        ),
        (
            "head_sha",
            text(r.iter().map(|x| x.head_sha.0.as_str())),
            false,
        ),
        (
            "head_repository",
            text_opt(r.iter().map(|x| x.head_repository.as_deref())),
            true,
        ),
        ("pr", int_opt(r.iter().map(|x| x.pr.map(|p| p.0))), true),
        ("created_at", time(r.iter().map(|x| x.created_at)), false),
        ("updated_at", time(r.iter().map(|x| x.updated_at)), false),
        (
            "conclusion",
            text_opt(r.iter().map(|x| x.conclusion.as_deref())),
            true,
        ),
        ("url", text(r.iter().map(|x| x.url.as_str())), false),
        ("failed", flag(r.iter().map(|x| x.failed)), false),
        ("hit", flag(r.iter().map(|x| x.hit)), false),
    ]))
}

fn jobs(data: &ExportData) -> Result<RecordBatch, ParquetError> {
    let j = &data.jobs;
    let mut columns = named(vec![
        ("id", int(j.iter().map(|x| x.id.0)), false),
        ("run_id", int(j.iter().map(|x| x.run_id.0)), false),
        ("attempt", small(j.iter().map(|x| x.attempt)), false),
        ("name", text(j.iter().map(|x| x.name.as_str())), false),
        ("status", text(j.iter().map(|x| x.status.as_str())), false),
        (
            "conclusion",
            text_opt(j.iter().map(|x| x.conclusion.as_deref())),
            true,
        ),
        ("created_at", time(j.iter().map(|x| x.created_at)), false),
        ("started_at", time_opt(j.iter().map(|x| x.started_at)), true),
        (
            "completed_at",
            time_opt(j.iter().map(|x| x.completed_at)),
            true,
        ),
        (
            "duration_seconds",
            int_opt(j.iter().map(|x| x.duration_seconds)),
            true,
        ),
        (
            "labels",
            list(j.iter().map(|x| Some(x.labels.as_slice()))),
            false,
        ),
        ("gpu", flag(j.iter().map(|x| x.gpu)), false),
    ]);
    for (i, name) in data.dimensions.iter().enumerate() {
        columns.push((
            format!("{DIMENSION_PREFIX}{name}"),
            text_opt(j.iter().map(|x| x.dimensions[i].as_deref())),
            true,
        ));
    }
    columns.extend(named(vec![
        (
            "outcome",
            text_opt(j.iter().map(|x| x.outcome.map(|o| o.as_str()))),
            true,
        ),
        ("log", text_opt(j.iter().map(|x| x.log)), true),
        (
            "signature",
            text_opt(j.iter().map(|x| x.signatures.first().map(String::as_str))),
            true,
        ),
        (
            "signatures",
            list(j.iter().map(|x| Some(x.signatures.as_slice()))),
            false,
        ),
    ]));
    // Where each job ran (`analysis::hosts`).
    let place = |f: fn(&flakestat_core::analysis::export::PlaceRow) -> Option<&str>| {
        text_opt(j.iter().map(move |x| f(&x.place)))
    };
    columns.extend(named(vec![
        ("runner_name", place(|p| p.runner_name.as_deref()), true),
        ("runner_group", place(|p| p.runner_group.as_deref()), true),
        ("pool", place(|p| p.pool.as_deref()), true),
        ("host", place(|p| p.host.as_deref()), true),
        ("image", place(|p| p.image.as_deref()), true),
        (
            "runner_version",
            place(|p| p.runner_version.as_deref()),
            true,
        ),
        ("driver", place(|p| p.driver.as_deref()), true),
        ("gpu_model", place(|p| p.gpu_model.as_deref()), true),
    ]));
    batch(columns)
}

fn hits(data: &ExportData) -> Result<RecordBatch, ParquetError> {
    let h = &data.hits;
    batch(named(vec![
        (
            "signature",
            text(h.iter().map(|x| x.signature.as_str())),
            false,
        ),
        ("job_id", int(h.iter().map(|x| x.job_id.0)), false),
        ("run_id", int(h.iter().map(|x| x.run_id.0)), false),
        ("attempt", small(h.iter().map(|x| x.attempt)), false),
        ("line", int(h.iter().map(|x| x.line)), false),
        ("lines", int(h.iter().map(|x| x.lines)), false),
        ("text", text(h.iter().map(|x| x.text.as_str())), false),
        ("step", text_opt(h.iter().map(|x| x.step.as_deref())), true),
        ("test", text_opt(h.iter().map(|x| x.test.as_deref())), true),
        (
            "tests",
            list(h.iter().map(|x| Some(x.tests.as_slice()))),
            false,
        ),
        ("counted", flag(h.iter().map(|x| x.counted)), false),
        (
            "left_out",
            text_opt(h.iter().map(|x| x.left_out.as_deref())),
            true,
        ),
    ]))
}

fn pulls(data: &ExportData) -> Result<RecordBatch, ParquetError> {
    let p = &data.pulls;
    batch(named(vec![
        ("number", int(p.iter().map(|x| x.number.0)), false),
        ("title", text(p.iter().map(|x| x.title.as_str())), false),
        ("state", text(p.iter().map(|x| x.state.as_str())), false),
        (
            "head_repository",
            text_opt(p.iter().map(|x| x.head_repository.as_deref())),
            true,
        ),
        (
            "head_branch",
            text(p.iter().map(|x| x.head_branch.as_str())),
            false,
        ),
        (
            "head_sha",
            text_opt(p.iter().map(|x| x.head_sha.as_ref().map(|s| s.0.as_str()))),
            true,
        ),
        ("base", text(p.iter().map(|x| x.base.as_str())), false),
        ("created_at", time_opt(p.iter().map(|x| x.created_at)), true),
        ("merged_at", time_opt(p.iter().map(|x| x.merged_at)), true),
        (
            "merge_commit",
            text_opt(
                p.iter()
                    .map(|x| x.merge_commit.as_ref().map(|s| s.0.as_str())),
            ),
            true,
        ),
        ("url", text(p.iter().map(|x| x.url.as_str())), false),
        ("files", int_opt(p.iter().map(|x| x.files)), true),
        (
            "related_signatures",
            list(p.iter().map(|x| x.related_signatures.as_deref())),
            true,
        ),
    ]))
}

fn suspects(data: &ExportData) -> Result<RecordBatch, ParquetError> {
    let s = &data.suspects;
    batch(named(vec![
        (
            "signature",
            text(s.iter().map(|x| x.signature.as_str())),
            false,
        ),
        ("rank", small(s.iter().map(|x| x.rank)), false),
        ("pr", int_opt(s.iter().map(|x| x.pr.map(|p| p.0))), true),
        ("title", text(s.iter().map(|x| x.title.as_str())), false),
        ("url", text_opt(s.iter().map(|x| x.url.as_deref())), true),
        ("merged_at", time(s.iter().map(|x| x.merged_at)), false),
        ("sha", text(s.iter().map(|x| x.sha.0.as_str())), false),
        (
            "touches_paths",
            flag_opt(s.iter().map(|x| x.touches_paths)),
            true,
        ),
        (
            "touches_tests",
            flag_opt(s.iter().map(|x| x.touches_tests)),
            true,
        ),
        (
            "clean_runs_after",
            int(s.iter().map(|x| x.clean_runs_after)),
            false,
        ),
        (
            "unknown_runs_after",
            int(s.iter().map(|x| x.unknown_runs_after)),
            false,
        ),
        (
            "clean_runs_before",
            int(s.iter().map(|x| x.clean_runs_before)),
            false,
        ),
        ("likelihood", float(s.iter().map(|x| x.likelihood)), false),
        ("posterior", float(s.iter().map(|x| x.posterior)), false),
    ]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use parquet::file::reader::{FileReader, SerializedFileReader};

    #[test]
    fn an_empty_window_gives_five_valid_files_with_their_columns_and_no_rows() {
        let files = render(&ExportData::default()).unwrap();
        let names: Vec<&str> = files.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, FILES);
        for (name, bytes) in files {
            let mut file = tempfile::tempfile().unwrap();
            std::io::Write::write_all(&mut file, &bytes).unwrap();
            let reader = SerializedFileReader::new(file).unwrap();
            let meta = reader.metadata().file_metadata();
            assert_eq!(meta.num_rows(), 0, "{name}");
            assert!(meta.schema_descr().num_columns() >= 6, "{name}");
        }
    }

    /// Green logs read add a sixth file, one row per green job execution read, its tests as a
    /// list; the five others keep their columns.
    #[test]
    fn green_jobs_read_add_a_sixth_file() {
        use flakestat_core::analysis::export::GreenJobRow;
        use flakestat_core::model::{JobId, RunId};
        let empty = render(&ExportData::default()).unwrap();
        let data = ExportData {
            green: vec![GreenJobRow {
                job_id: JobId(7),
                run_id: RunId(3),
                attempt: 1,
                workflow: "CI".into(),
                job: "test".into(),
                passed: Some(41),
                retries: 2,
                minutes: Some(10.0),
                retry_minutes: None,
                retried: vec!["tests/a.py::test_b".into()],
            }],
            ..ExportData::default()
        };
        let files = render(&data).unwrap();
        let names: Vec<&str> = files.iter().map(|(n, _)| *n).collect();
        assert_eq!(names[..5], FILES);
        assert_eq!(names[5], GREEN_FILE);
        assert_eq!(files[..5], empty[..]);
        let mut file = tempfile::tempfile().unwrap();
        std::io::Write::write_all(&mut file, &files[5].1).unwrap();
        let reader = SerializedFileReader::new(file).unwrap();
        let meta = reader.metadata().file_metadata();
        assert_eq!(meta.num_rows(), 1);
        let columns: Vec<&str> = meta
            .schema_descr()
            .columns()
            .iter()
            .map(|c| c.path().parts()[0].as_str())
            .collect();
        assert!(
            columns.contains(&"retried") && columns.contains(&"retry_minutes"),
            "{columns:?}"
        );
    }
}
