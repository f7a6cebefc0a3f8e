//! `flakestat export --format parquet` on the bundled story (`survey --replay
//! fixtures/cuda-python-flake` into a temporary store), read back with the `parquet` crate and,
//! where Python has `duckdb`, with DuckDB: one row per run of the window and per failed job
//! execution, and each signature's hits as the report's JSON counts them. Bad `--output`s get one
//! message, their exit code, and leave nothing half-written. Built with the cargo feature
//! `parquet` (`cargo test --features parquet`; `.ci/run` runs it), whose crates it reads with.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use crate::common::{self, STORY_WINDOW, ok, surveyed_story};
use flakestat::fake::scenario::cuda_python::{
    BETWEEN_PR, CULPRIT_PR, FORK_PR, FORK_REPO, RELATED_PR,
};
use flakestat::parquet_export::arrow_array::{
    Array, BooleanArray, Int32Array, Int64Array, ListArray, RecordBatch, StringArray,
};
use flakestat::parquet_export::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use flakestat::parquet_export::parquet::basic::{LogicalType, TimeUnit};
use flakestat::parquet_export::parquet::file::reader::{FileReader, SerializedFileReader};
use flakestat::report::wire;

fn flakestat(cache: &Path, args: &[&str]) -> Output {
    common::flakestat()
        .args(args)
        .arg("--cache-dir")
        .arg(cache)
        .arg("--signatures")
        .arg(common::signatures())
        .current_dir(cache)
        .env("NO_COLOR", "1")
        .output()
        .expect("the binary runs")
}

fn export(output: &Path) -> Output {
    let mut args = vec!["export", "--format", "parquet", "--output"];
    args.push(output.to_str().unwrap());
    args.extend(STORY_WINDOW);
    flakestat(surveyed_story(), &args)
}

fn report() -> wire::Report {
    let mut args = vec!["report", "--format", "json"];
    args.extend(STORY_WINDOW);
    let out = ok(flakestat(surveyed_story(), &args));
    serde_json::from_slice(&out.stdout).expect("the report's JSON")
}

/// Every batch of one file.
fn read(path: &Path) -> Vec<RecordBatch> {
    let file = File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    ParquetRecordBatchReaderBuilder::try_new(file)
        .unwrap()
        .build()
        .unwrap()
        .map(|b| b.unwrap())
        .collect()
}

fn column<'a, T: Array + 'static>(batch: &'a RecordBatch, name: &str) -> &'a T {
    batch
        .column_by_name(name)
        .unwrap_or_else(|| panic!("no column {name}"))
        .as_any()
        .downcast_ref::<T>()
        .unwrap_or_else(|| panic!("column {name} has another type"))
}

fn ints(batches: &[RecordBatch], name: &str) -> Vec<Option<i64>> {
    batches
        .iter()
        .flat_map(|b| {
            let a = column::<Int64Array>(b, name);
            (0..a.len()).map(|i| a.is_valid(i).then(|| a.value(i)))
        })
        .collect()
}

fn ints32(batches: &[RecordBatch], name: &str) -> Vec<i32> {
    batches
        .iter()
        .flat_map(|b| column::<Int32Array>(b, name).values().to_vec())
        .collect()
}

fn strings(batches: &[RecordBatch], name: &str) -> Vec<Option<String>> {
    batches
        .iter()
        .flat_map(|b| {
            let a = column::<StringArray>(b, name);
            (0..a.len())
                .map(|i| a.is_valid(i).then(|| a.value(i).to_string()))
                .collect::<Vec<_>>()
        })
        .collect()
}

fn flags(batches: &[RecordBatch], name: &str) -> Vec<bool> {
    batches
        .iter()
        .flat_map(|b| {
            let a = column::<BooleanArray>(b, name);
            (0..a.len()).map(|i| a.value(i)).collect::<Vec<_>>()
        })
        .collect()
}

fn lists(batches: &[RecordBatch], name: &str) -> Vec<Option<Vec<String>>> {
    batches
        .iter()
        .flat_map(|b| {
            let a = column::<ListArray>(b, name);
            (0..a.len())
                .map(|i| {
                    a.is_valid(i).then(|| {
                        let v = a.value(i);
                        let s = v.as_any().downcast_ref::<StringArray>().unwrap();
                        (0..s.len()).map(|j| s.value(j).to_string()).collect()
                    })
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The files of an export.
const FILES: [&str; 5] = [
    "runs.parquet",
    "jobs.parquet",
    "hits.parquet",
    "pulls.parquet",
    "suspects.parquet",
];

/// The story's export, written once.
fn exported() -> &'static Path {
    static OUT: OnceLock<PathBuf> = OnceLock::new();
    OUT.get_or_init(|| {
        let out = surveyed_story().join("export");
        let done = ok(export(&out));
        let said = String::from_utf8_lossy(&done.stderr);
        assert!(
            said.contains(&format!("wrote {} files", FILES.len())),
            "{said}"
        );
        out
    })
}

#[test]
fn one_row_per_run_of_the_window_and_times_are_utc_micros() {
    let report = report();
    let runs = read(&exported().join("runs.parquet"));
    let ids: Vec<i64> = ints(&runs, "id").into_iter().map(Option::unwrap).collect();
    assert_eq!(ids.len() as u64, report.runs_total, "one row per run");
    assert!(
        ids.windows(2).all(|w| w[0] < w[1]),
        "sorted by id, no duplicates"
    );
    // The runs the report counts as hit by some signature are flagged.
    let hit_ids: BTreeSet<i64> = ids
        .iter()
        .zip(flags(&runs, "hit"))
        .filter(|(_, h)| *h)
        .map(|(id, _)| *id)
        .collect();
    for s in &report.signatures {
        for h in &s.hits {
            assert!(hit_ids.contains(&(h.run_id as i64)), "run {}", h.run_id);
        }
    }
    // The fork PR's runs name no PR; the export resolves them like the analysis does.
    let prs = ints(&runs, "pr");
    let repos = strings(&runs, "head_repository");
    let fork_prs: BTreeSet<i64> = prs
        .iter()
        .zip(&repos)
        .filter(|(_, r)| r.as_deref() == Some(FORK_REPO))
        .map(|(pr, _)| pr.expect("a fork run's PR is resolved"))
        .collect();
    assert_eq!(fork_prs, BTreeSet::from([FORK_PR as i64]));

    for (file, column) in [
        ("runs.parquet", "created_at"),
        ("jobs.parquet", "started_at"),
        ("pulls.parquet", "merged_at"),
        ("suspects.parquet", "merged_at"),
    ] {
        let reader = SerializedFileReader::new(File::open(exported().join(file)).unwrap()).unwrap();
        let schema = reader.metadata().file_metadata().schema_descr();
        let col = (0..schema.num_columns())
            .map(|i| schema.column(i))
            .find(|c| c.name() == column)
            .unwrap_or_else(|| panic!("{file} has {column}"));
        assert_eq!(
            col.logical_type_ref(),
            Some(&LogicalType::timestamp(true, TimeUnit::MICROS)),
            "{file}.{column}"
        );
    }
}

#[test]
fn every_failed_job_execution_is_a_hit_or_unclassified_or_unknown_exactly_once() {
    let report = report();
    let jobs = read(&exported().join("jobs.parquet"));
    let hits = read(&exported().join("hits.parquet"));
    let ids: Vec<i64> = ints(&jobs, "id").into_iter().map(Option::unwrap).collect();
    assert_eq!(
        ids.iter().collect::<BTreeSet<_>>().len(),
        ids.len(),
        "one row per job execution"
    );
    let conclusions = strings(&jobs, "conclusion");
    let outcomes = strings(&jobs, "outcome");
    let failed: BTreeSet<i64> = ids
        .iter()
        .zip(&conclusions)
        .filter(|(_, c)| matches!(c.as_deref(), Some("failure" | "timed_out")))
        .map(|(id, _)| *id)
        .collect();
    assert_eq!(failed.len() as u64, report.jobs_failed);

    let hit_jobs: BTreeSet<i64> = ints(&hits, "job_id").into_iter().flatten().collect();
    let by_outcome = |o: &str| -> BTreeSet<i64> {
        ids.iter()
            .zip(&outcomes)
            .filter(|(_, x)| x.as_deref() == Some(o))
            .map(|(id, _)| *id)
            .collect()
    };
    let (hit, unclassified, unknown) = (
        by_outcome("hit"),
        by_outcome("unclassified"),
        by_outcome("unknown"),
    );
    assert_eq!(hit, hit_jobs, "outcome `hit` is exactly the jobs in hits");
    assert!(hit.is_disjoint(&unclassified) && hit.is_disjoint(&unknown));
    assert!(unclassified.is_disjoint(&unknown));
    let union: BTreeSet<i64> = hit
        .iter()
        .chain(&unclassified)
        .chain(&unknown)
        .copied()
        .collect();
    assert_eq!(union, failed, "hits + unclassified + unknown = failed jobs");
    assert_eq!(
        (unclassified.len() + unknown.len()) as u64,
        report.jobs_unclassified,
        "the report's unclassified count"
    );
    assert_eq!(
        unknown.len() as u64,
        report.logs_unknown.iter().map(|g| g.jobs).sum::<u64>(),
        "outcome `unknown` is the report's jobs without a readable log"
    );
    assert!(!unclassified.is_empty(), "the story has unknown failures");

    // Matrix dimensions as columns: the flake's python value is there.
    let pythons = strings(&jobs, "dim_python");
    assert!(pythons.iter().any(|p| p.as_deref() == Some("3.14t")));
    assert!(
        pythons.iter().any(Option::is_none),
        "build jobs have no python"
    );
    // Runner labels survive as a list.
    assert!(
        lists(&jobs, "labels")
            .iter()
            .any(|l| l.as_ref().is_some_and(|l| !l.is_empty()))
    );
    // Where each job ran: the listing's runner, and its pool, the scale set its name (the
    // story's runners are NVIDIA-style `<label>-<5 random>`) is the label of.
    let runners = strings(&jobs, "runner_name");
    let pools = strings(&jobs, "pool");
    let labels = lists(&jobs, "labels");
    let mut placed = 0;
    for i in 0..runners.len() {
        let (Some(runner), Some(pool)) = (&runners[i], &pools[i]) else {
            continue;
        };
        placed += 1;
        assert!(
            runner.starts_with(&format!("{pool}-")),
            "{runner} in {pool}"
        );
        assert_eq!(labels[i].as_ref().unwrap().first(), Some(pool));
    }
    assert!(placed > 100, "{placed} jobs placed");
    for column in [
        "runner_group",
        "host",
        "image",
        "runner_version",
        "driver",
        "gpu_model",
    ] {
        assert_eq!(strings(&jobs, column).len(), runners.len(), "{column}");
    }
}

#[test]
fn counted_hits_per_signature_equal_the_reports_and_suspects_its_ranking() {
    let report = report();
    let hits = read(&exported().join("hits.parquet"));
    let signatures = strings(&hits, "signature");
    let counted = flags(&hits, "counted");
    let runs = ints(&hits, "run_id");
    let left_out = strings(&hits, "left_out");
    let mut jobs_hit: BTreeMap<String, u64> = BTreeMap::new();
    let mut runs_hit: BTreeMap<String, BTreeSet<i64>> = BTreeMap::new();
    for i in 0..signatures.len() {
        let s = signatures[i].clone().unwrap();
        assert_eq!(counted[i], left_out[i].is_none(), "left_out says why not");
        if counted[i] {
            *jobs_hit.entry(s.clone()).or_default() += 1;
            runs_hit.entry(s).or_default().insert(runs[i].unwrap());
        }
    }
    let mut checked = 0;
    for s in &report.signatures {
        assert_eq!(
            jobs_hit.get(&s.id).copied().unwrap_or(0),
            s.jobs_hit,
            "{}: jobs hit",
            s.id
        );
        assert_eq!(
            runs_hit.get(&s.id).map_or(0, |r| r.len() as u64),
            s.runs_hit,
            "{}: runs hit",
            s.id
        );
        checked += u64::from(s.jobs_hit > 0);
    }
    assert!(checked >= 2, "several signatures hit in the story");
    // Related PRs' hits are exported, not counted, and say which PR.
    let wait = "wait-until-timeout";
    let related: Vec<&String> = (0..signatures.len())
        .filter(|&i| signatures[i].as_deref() == Some(wait) && !counted[i])
        .filter_map(|i| left_out[i].as_ref())
        .collect();
    for pr in [RELATED_PR, FORK_PR] {
        assert!(
            related.iter().any(|r| r.contains(&format!("#{pr} "))),
            "#{pr}: {related:?}"
        );
    }

    let suspects = read(&exported().join("suspects.parquet"));
    let sig = strings(&suspects, "signature");
    let ranks = ints32(&suspects, "rank");
    let prs = ints(&suspects, "pr");
    for s in &report.signatures {
        let mine: Vec<(i32, Option<i64>)> = (0..sig.len())
            .filter(|&i| sig[i].as_deref() == Some(s.id.as_str()))
            .map(|i| (ranks[i], prs[i]))
            .collect();
        let expected: Vec<(i32, Option<i64>)> = s
            .suspects
            .iter()
            .enumerate()
            .map(|(i, x)| (i as i32 + 1, x.pr.map(|p| p.0 as i64)))
            .collect();
        assert_eq!(mine, expected, "{}: suspects in the report's order", s.id);
    }
    let top = (0..sig.len())
        .find(|&i| sig[i].as_deref() == Some(wait) && ranks[i] == 1)
        .expect("wait-until-timeout has suspects");
    assert_eq!(
        prs[top],
        Some(CULPRIT_PR as i64),
        "the story's culprit ranks first"
    );

    let pulls = read(&exported().join("pulls.parquet"));
    let numbers = ints(&pulls, "number");
    let related = lists(&pulls, "related_signatures");
    let of = |n: i64| related[numbers.iter().position(|x| *x == Some(n)).unwrap()].clone();
    for n in [RELATED_PR, FORK_PR, CULPRIT_PR].map(|n| n as i64) {
        assert!(
            of(n).is_some_and(|r| r.iter().any(|s| s == wait)),
            "#{n} touches {wait}'s paths"
        );
    }
    assert!(
        of(BETWEEN_PR as i64).is_none_or(|r| !r.iter().any(|s| s == wait)),
        "the pathfinder bump is unrelated"
    );
}

#[test]
fn the_same_store_gives_byte_identical_files() {
    let again = surveyed_story().join("export-again");
    ok(export(&again));
    ok(export(&again)); // replacing its own files
    for name in FILES {
        let a = std::fs::read(exported().join(name)).unwrap();
        let b = std::fs::read(again.join(name)).unwrap();
        assert!(a == b, "{name} differs between two exports");
    }
    let leftovers: Vec<_> = std::fs::read_dir(&again)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| !n.to_string_lossy().ends_with(".parquet"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&again).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "a new output folder is private");
        let mode = std::fs::metadata(again.join("hits.parquet"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o600, "new files are private");
    }
}

#[test]
fn duckdb_counts_the_reports_hits() {
    let has_duckdb = Command::new("python3")
        .args(["-c", "import duckdb"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !has_duckdb {
        common::skips::skipped(
            common::skips::Need::DuckDb,
            "skipped: python3 with duckdb not found (pip install duckdb)",
        );
        return;
    }
    let report = report();
    let script = r#"
import duckdb, json, sys
d = sys.argv[1]
con = duckdb.connect()
hits = con.execute(f"""
    SELECT signature, count(*), count(DISTINCT run_id)
    FROM read_parquet('{d}/hits.parquet') WHERE counted GROUP BY signature ORDER BY signature
""").fetchall()
runs = con.execute(f"SELECT count(*) FROM read_parquet('{d}/runs.parquet')").fetchone()[0]
failed = con.execute(f"""
    SELECT count(*) FROM read_parquet('{d}/jobs.parquet')
    WHERE conclusion IN ('failure', 'timed_out')
""").fetchone()[0]
print(json.dumps({"runs": runs, "failed": failed,
                  "hits": {s: [j, r] for s, j, r in hits}}))
"#;
    let out = Command::new("python3")
        .args(["-c", script, exported().to_str().unwrap()])
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(got["runs"].as_u64(), Some(report.runs_total));
    assert_eq!(got["failed"].as_u64(), Some(report.jobs_failed));
    for s in report.signatures.iter().filter(|s| s.jobs_hit > 0) {
        assert_eq!(
            got["hits"][&s.id],
            serde_json::json!([s.jobs_hit, s.runs_hit]),
            "{}: DuckDB's jobs and runs hit",
            s.id
        );
    }
}

#[test]
fn a_file_as_output_is_refused_with_exit_3_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("warehouse");
    std::fs::write(&file, "not a folder").unwrap();
    let out = export(&file);
    assert_eq!(out.status.code(), Some(3));
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(said.lines().count(), 1, "one message: {said}");
    assert!(
        said.contains(file.to_str().unwrap()) && said.contains("not a folder"),
        "{said}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "not a folder");
}

#[test]
fn a_folder_in_the_way_of_one_file_replaces_none_and_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("warehouse");
    std::fs::create_dir(&out_dir).unwrap();
    std::fs::write(out_dir.join("runs.parquet"), "old runs").unwrap();
    std::fs::create_dir(out_dir.join("hits.parquet")).unwrap();
    let out = export(&out_dir);
    assert_eq!(out.status.code(), Some(2));
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(said.lines().count(), 1, "one message: {said}");
    assert!(
        said.contains("hits.parquet") && said.contains("not a file"),
        "{said}"
    );
    assert_eq!(
        std::fs::read_to_string(out_dir.join("runs.parquet")).unwrap(),
        "old runs",
        "the old file is not replaced"
    );
    let names: BTreeSet<String> = std::fs::read_dir(&out_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        BTreeSet::from(["runs.parquet".to_string(), "hits.parquet".to_string()])
    );
}

#[test]
fn an_unwritable_folder_is_refused_with_exit_2_before_the_store_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let locked = dir.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o500)).unwrap();
    }
    // As root, permission bits do not stop writes: /sys refuses new files to anyone.
    let probe = locked.join("probe");
    let target = if std::fs::write(&probe, "").is_ok() {
        let _ = std::fs::remove_file(&probe);
        PathBuf::from("/sys")
    } else {
        locked.clone()
    };
    if !target.is_dir() {
        common::skips::skipped(
            common::skips::Need::UnwritableFolder,
            "skipped: no unwritable folder to try (running as root without /sys)",
        );
        return;
    }
    // No store at all: the --output error comes first.
    let empty = tempfile::tempdir().unwrap();
    let mut args = vec!["export", "--output", target.to_str().unwrap()];
    args.extend(STORY_WINDOW);
    let out = flakestat(empty.path(), &args);
    assert_eq!(out.status.code(), Some(2));
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(said.lines().count(), 1, "one message: {said}");
    assert!(
        said.contains(&format!("cannot write into --output {}", target.display())),
        "{said}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    assert_eq!(std::fs::read_dir(&locked).unwrap().count(), 0);
}
