//! The bundled fleet (`fixtures/fleet`, issue 43's "Done when" on data a user replays without
//! network): `survey --replay` and `report --hosts --replay` through the real binary show the bad
//! host on the drain list with its p-value and no good host, the pool-wide night as one
//! machine-wide incident, and the failure that began with an image version naming the version,
//! in every format of `report --hosts`.

use std::path::PathBuf;
use std::process::Output;
use std::sync::OnceLock;

use serde_json::Value;

use crate::common::{flakestat, ok, root};
use flakestat::fake::Dataset;
use flakestat::fake::scenario::fleet::{
    self, BAD_HOST, DRIVER, GPU_POOL, IMAGE, NEW_IMAGE_VERSION, OLD_DRIVER, OLD_IMAGE_VERSION,
    REPO, SINCE,
};

fn fleet_dir() -> PathBuf {
    root().join("fixtures/fleet")
}

struct Surveyed {
    cache: tempfile::TempDir,
    /// The survey's own report, `--format markdown`.
    markdown: String,
}

/// The bundled fleet surveyed once (`survey --replay fixtures/fleet --format markdown`).
fn surveyed() -> &'static Surveyed {
    static ONCE: OnceLock<Surveyed> = OnceLock::new();
    ONCE.get_or_init(|| {
        let cache = tempfile::TempDir::new_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let out = ok(flakestat()
            .args(["-q", "survey", "--repo", REPO, "--since", SINCE, "--replay"])
            .arg(fleet_dir())
            .args(["--format", "markdown", "--cache-dir"])
            .arg(cache.path())
            .output()
            .unwrap());
        Surveyed {
            cache,
            markdown: String::from_utf8(out.stdout).unwrap(),
        }
    })
}

/// `report --hosts --replay fixtures/fleet --since SINCE` in `format` (the replay's own
/// repository and clock: no `--repo`, no `--until`).
fn hosts(format: &str) -> Output {
    report(&["--hosts", "--format", format])
}

fn report(extra: &[&str]) -> Output {
    flakestat()
        .args(["-q", "report", "--since", SINCE, "--replay"])
        .arg(fleet_dir())
        .arg("--cache-dir")
        .arg(surveyed().cache.path())
        .args(extra)
        .env("COLUMNS", "220")
        .output()
        .unwrap()
}

/// The signature `id` of a JSON report (its account under `signatures`); panics, showing the
/// report, when it has none.
fn signature<'a>(doc: &'a Value, id: &str) -> &'a Value {
    doc["signatures"]
        .as_array()
        .and_then(|all| all.iter().find(|s| s["id"] == id))
        .unwrap_or_else(|| panic!("no signature {id} in {doc}"))
}

fn stdout(out: Output) -> String {
    String::from_utf8(ok(out).stdout).unwrap()
}

fn hosts_json() -> Value {
    serde_json::from_slice(&ok(hosts("json")).stdout).unwrap()
}

/// The folder's `scenario.toml` builds the fleet the other tests use, byte for byte.
#[test]
fn the_bundled_fleet_is_the_fleet_generator() {
    let loaded = Dataset::load(&fleet_dir()).unwrap();
    assert!(
        loaded == fleet::fleet(),
        "fixtures/fleet is not fleet::fleet()"
    );
}

/// The folder's README names every file in it, and says under which licence the data is.
#[test]
fn the_bundled_fleet_has_a_readme_with_its_licence() {
    let readme = std::fs::read_to_string(fleet_dir().join("README.md")).unwrap();
    assert!(readme.contains("generator = \"fleet\""), "{readme}");
    assert!(readme.to_lowercase().contains("licence"), "{readme}");
    for name in [BAD_HOST, GPU_POOL, NEW_IMAGE_VERSION, OLD_IMAGE_VERSION] {
        assert!(readme.contains(name), "the README tells of {name}");
    }
}

#[test]
fn json_drains_the_bad_host_alone_with_its_p_value() {
    let doc = hosts_json();
    assert_eq!(doc["repo"], REPO);
    let drain = doc["drain"].as_array().unwrap();
    assert_eq!(drain.len(), 1, "no good host is on it: {drain:?}");
    assert_eq!(drain[0]["host"], BAD_HOST);
    assert_eq!(drain[0]["pool"], GPU_POOL);
    let p = drain[0]["p_adjusted"].as_f64().unwrap();
    assert!(p < doc["alpha"].as_f64().unwrap() && p < 1e-4, "{p}");
    let hosts = doc["pools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["pool"] == GPU_POOL)
        .unwrap()["hosts"]
        .as_array()
        .unwrap();
    assert_eq!(hosts.len(), fleet::HOSTS);
    for h in hosts {
        assert_eq!(h["drain"], h["host"] == BAD_HOST, "{h}");
    }
    let onset = doc["image_onsets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["signature"] == "package-resolution")
        .unwrap_or_else(|| panic!("{doc}"));
    assert_eq!(onset["image"], IMAGE);
    assert_eq!(onset["version"], NEW_IMAGE_VERSION);
    assert_eq!(onset["before"], serde_json::json!([OLD_IMAGE_VERSION]));
}

#[test]
fn ids_is_the_bad_host_alone() {
    assert_eq!(stdout(hosts("ids")), format!("{BAD_HOST}\n"));
}

/// The drain list's one row and its p-value as the table and markdown print it.
#[test]
fn table_and_markdown_name_the_bad_host_its_p_value_and_the_image_version() {
    let doc = hosts_json();
    let p = flakestat::report::hosts::p_value(doc["drain"][0]["p_value"].as_f64().unwrap());
    let onset = format!("began with {IMAGE} {NEW_IMAGE_VERSION}");

    let table = stdout(hosts("table"));
    let drain_rows: Vec<&str> = table
        .lines()
        .skip_while(|l| !l.contains("Drain list"))
        .take_while(|l| !l.contains("Pools"))
        .filter(|l| l.contains("gpu-l4-"))
        .collect();
    assert_eq!(drain_rows.len(), 1, "{table}");
    assert!(
        drain_rows[0].contains(BAD_HOST) && drain_rows[0].contains(&p),
        "{table}"
    );
    assert!(table.contains(&onset), "{table}");

    let md = stdout(hosts("markdown"));
    assert!(
        md.starts_with(&format!("# Where jobs ran in {REPO}")),
        "{md}"
    );
    let drain_rows: Vec<&str> = md
        .lines()
        .skip_while(|l| *l != "## Drain list")
        .take_while(|l| *l != "## Pools")
        .filter(|l| l.starts_with("| `gpu-l4-"))
        .collect();
    assert_eq!(drain_rows.len(), 1, "{md}");
    assert!(
        drain_rows[0].starts_with(&format!("| `{BAD_HOST}` | `{GPU_POOL}` |"))
            && drain_rows[0].contains(&format!("| {p} |")),
        "{md}"
    );
    assert!(md.contains(&format!("`{BAD_HOST}` **drain**")), "{md}");
    assert_eq!(md.matches("**drain**").count(), 1, "{md}");
    assert!(md.contains(&onset), "{md}");
}

#[test]
fn html_names_the_bad_host_on_the_drain_list_and_the_image_version() {
    let html = stdout(hosts("html"));
    assert!(html.contains(&format!(
        "<title>Where jobs ran in {REPO} (flakestat)</title>"
    )));
    let drain = html
        .split("Drain list")
        .nth(1)
        .and_then(|rest| rest.split("Pools").next())
        .unwrap_or_else(|| panic!("{html}"));
    assert!(drain.contains(BAD_HOST), "{drain}");
    assert_eq!(drain.matches("gpu-l4-").count(), 1, "{drain}");
    assert!(html.contains(&format!("began with {IMAGE} {NEW_IMAGE_VERSION}")));
}

/// The pool-wide night is one machine-wide incident (not eight failures), in the survey's own
/// markdown and in the report's JSON; the disk-full signature blames no merge for it.
#[test]
fn the_pool_wide_night_is_one_machine_wide_incident() {
    let run = fleet::run_id(fleet::POOL_WIDE_RUN).to_string();
    let md = &surveyed().markdown;
    let rows: Vec<&str> = md
        .lines()
        .filter(|l| l.starts_with('|') && l.contains(&format!("[run {run}]")))
        .collect();
    assert_eq!(rows.len(), 1, "{md}");
    assert!(
        rows[0].contains("**machine-wide**") && rows[0].contains(&format!("`{GPU_POOL}`")),
        "{md}"
    );
    assert!(
        md.contains(&format!(
            "machine-wide: all 8 hits in run {run} on pool {GPU_POOL}"
        )),
        "{md}"
    );

    let doc: Value = serde_json::from_slice(&ok(report(&["--format", "json"])).stdout).unwrap();
    let night: Vec<&Value> = doc["incidents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["run_id"].as_u64() == Some(fleet::run_id(fleet::POOL_WIDE_RUN).0))
        .collect();
    assert_eq!(night.len(), 1, "{doc}");
    assert_eq!(night[0]["kind"], "machine_wide");
    assert_eq!(night[0]["pool"], GPU_POOL);
    assert_eq!(night[0]["jobs"].as_array().unwrap().len(), 8);
    let disk = signature(&doc, "disk-full");
    assert_eq!(disk["bisection"]["verdict"], "machine_wide");
    assert_eq!(disk["bisection"]["pr"], Value::Null);
}

/// `--replay` alone names the repository and the window's end: the same figures as with them.
#[test]
fn the_replay_needs_no_repo_or_until() {
    let with: Value = serde_json::from_slice(
        &ok(report(&[
            "--hosts",
            "--format",
            "json",
            "--repo",
            REPO,
            "--until",
            fleet::UNTIL,
        ]))
        .stdout,
    )
    .unwrap();
    assert_eq!(with["drain"], hosts_json()["drain"]);
}

/// `flakestat pr` on the fleet's PR, whose one failed job ran on the bad host: the job is
/// `infrastructure`, naming the host and that it is on the drain list, and since every failure
/// is explained `pr` exits 0 (issue 44's rule), in JSON and in the comment's markdown.
#[test]
fn a_pr_job_on_the_drained_host_is_infrastructure() {
    let cache = tempfile::TempDir::new_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    crate::common::copy_dir(surveyed().cache.path(), cache.path());
    let pr = |format: &str| {
        flakestat()
            .args(["-q", "pr", "--pr", &fleet::PR.to_string(), "--since", SINCE])
            .args(["--format", format, "--replay"])
            .arg(fleet_dir())
            .arg("--cache-dir")
            .arg(cache.path())
            .output()
            .unwrap()
    };
    let out = pr("json");
    assert_eq!(
        out.status.code(),
        Some(0),
        "every failure is explained: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let jobs = doc["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 1, "{doc}");
    let job = &jobs[0];
    assert_eq!(job["run_id"].as_u64(), Some(fleet::pr_run_id().0));
    assert_eq!(
        job["job"],
        format!("Test gpu-l4 (shard {})", fleet::PR_BAD_SHARD)
    );
    assert_eq!(job["label"], "infrastructure", "{job}");
    assert_eq!(job["drained_host"]["host"], BAD_HOST);
    assert_eq!(job["drained_host"]["pool"], GPU_POOL);
    let reason = job["reason"].as_str().unwrap();
    assert!(
        reason.contains(BAD_HOST) && reason.contains("drain list"),
        "{reason}"
    );
    assert_eq!(doc["all_explained"], true);

    let out = pr("markdown");
    assert_eq!(out.status.code(), Some(0));
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(md.contains("infrastructure"), "{md}");
    assert!(md.contains(&format!("ran on host {BAD_HOST}")), "{md}");
}

/// Image and driver read as the matrix reads a job-name dimension (issue 43 §2): the wheel
/// build's failure lives on the new image version and the crash on the old driver, each by the
/// significance rule, with "works elsewhere" (the crashed jobs' re-runs passed on a host with
/// the current driver); the pool-wide night, one event, is confined to no host.
#[test]
fn failures_confined_to_an_image_version_or_a_driver_say_so() {
    let doc = hosts_json();
    let confined = doc["confined"].as_array().unwrap();
    let find = |signature: &str, scope: &str| {
        confined
            .iter()
            .find(|c| c["signature"] == signature && c["scope"] == scope)
            .unwrap_or_else(|| panic!("{signature} by {scope}: {confined:?}"))
    };
    let driver = find("fatal-signal", "driver");
    assert_eq!(driver["values"], serde_json::json!([OLD_DRIVER]));
    assert_eq!(driver["never_values"], serde_json::json!([DRIVER]));
    assert!(driver["jobs_hit"].as_u64().unwrap() >= 3, "{driver}");
    assert!(driver["chance"].as_f64().unwrap() < 0.01, "{driver}");
    assert!(driver["works_elsewhere"].as_u64().unwrap() >= 1, "{driver}");
    let image = find("package-resolution", "image");
    assert_eq!(
        image["values"],
        serde_json::json!([format!("{IMAGE} {NEW_IMAGE_VERSION}")])
    );
    assert_eq!(
        image["never_values"],
        serde_json::json!([format!("{IMAGE} {OLD_IMAGE_VERSION}")])
    );
    assert!(image["chance"].as_f64().unwrap() < 0.01, "{image}");
    assert!(
        confined.iter().all(|c| c["signature"] != "disk-full"),
        "the pool-wide night is one event, confined to no host: {confined:?}"
    );
    for c in confined
        .iter()
        .filter(|c| c["scope"] == "image" || c["scope"] == "driver")
    {
        assert!(
            ["fatal-signal", "package-resolution"].contains(&c["signature"].as_str().unwrap()),
            "{c}"
        );
    }

    let md = stdout(hosts("markdown"));
    assert!(
        md.contains(&format!("`fatal-signal`: only on driver {OLD_DRIVER} (")),
        "{md}"
    );
    assert!(
        md.contains(&format!(
            "`package-resolution`: only on image {IMAGE} {NEW_IMAGE_VERSION} ("
        )),
        "{md}"
    );
    let table = stdout(hosts("table"));
    assert!(
        table.contains(&format!("only on driver {OLD_DRIVER}")),
        "{table}"
    );
}

/// The overview's short section on machines (issue 43 §3): the survey's own markdown names the
/// bad host alone on the drain list with its p-value, and the failure the new image brought
/// with its version; the report's JSON carries both.
#[test]
fn the_survey_overview_names_the_drained_host_and_the_image_version() {
    let md = &surveyed().markdown;
    let section: Vec<&str> = md
        .lines()
        .skip_while(|l| *l != "## Machines")
        .take_while(|l| !l.starts_with("## ") || *l == "## Machines")
        .collect();
    assert!(!section.is_empty(), "{md}");
    let drained: Vec<&&str> = section
        .iter()
        .filter(|l| l.contains("is on the drain list"))
        .collect();
    assert_eq!(drained.len(), 1, "{md}");
    let doc = hosts_json();
    let p = flakestat::report::hosts::p_value(doc["drain"][0]["p_value"].as_f64().unwrap());
    assert!(
        drained[0].starts_with(&format!("- `{BAD_HOST}` of pool `{GPU_POOL}`"))
            && drained[0].contains(&format!("p = {p}")),
        "{md}"
    );
    assert!(
        section.iter().any(|l| l.contains(&format!(
            "`package-resolution` began with {IMAGE} {NEW_IMAGE_VERSION}"
        ))),
        "{md}"
    );

    let json: Value = serde_json::from_slice(&ok(report(&["--format", "json"])).stdout).unwrap();
    let drain = json["drain"].as_array().unwrap();
    assert_eq!(drain.len(), 1, "{json}");
    assert_eq!(drain[0]["host"], BAD_HOST);
    assert_eq!(json["image_onsets"][0]["version"], NEW_IMAGE_VERSION);
}

/// The bad host's driver errors, spread over many runs, are the host's, not a merge's: the
/// account's first-occurrence verdict is `host_bound`, naming the host and no merge, in JSON and
/// markdown (before, the bisection blamed the commit that happened to land before the host went
/// bad).
#[test]
fn the_bad_host_s_failures_are_host_bound_and_blame_no_merge() {
    let doc: Value = serde_json::from_slice(&ok(report(&["--format", "json"])).stdout).unwrap();
    let cuda = signature(&doc, "cuda-error");
    assert_eq!(cuda["bisection"]["verdict"], "host_bound", "{cuda}");
    assert_eq!(cuda["bisection"]["host"], fleet::BAD_HOST);
    assert_eq!(cuda["bisection"]["pr"], Value::Null);
    assert_eq!(cuda["suspects"], serde_json::json!([]));
    // The machine-wide night's verdict carries no host field.
    let disk = signature(&doc, "disk-full");
    assert!(disk["bisection"].get("host").is_none(), "{disk}");

    let md = &surveyed().markdown;
    let line = md
        .lines()
        .find(|l| l.starts_with("- `cuda-error`"))
        .unwrap_or_else(|| panic!("{md}"));
    assert!(
        line.contains(&format!(
            "host-bound: every hit ran on host {}",
            fleet::BAD_HOST
        )) && line.ends_with("no merge named."),
        "{line}"
    );
}

/// The failure that came with a new runner image, on the day a commit landed: the headline
/// names the commit and the image together and says the runs cannot tell them apart (every hit
/// ran on the new version, earlier failures on the old one); JSON's bisection carries the
/// image. No other signature of the fleet is said to have come with an image.
#[test]
fn a_failure_that_came_with_an_image_and_a_commit_names_both() {
    let md = stdout(report(&[
        "--signature",
        "package-resolution",
        "--format",
        "markdown",
    ]));
    let headline = md
        .lines()
        .find(|l| l.starts_with("**"))
        .unwrap_or_else(|| panic!("{md}"));
    assert!(
        headline.contains(&format!(
            " landed on 2026-06-08 00:04 UTC, as did runner image {IMAGE} {NEW_IMAGE_VERSION} \
             (every hit ran on it; earlier failures ran {OLD_IMAGE_VERSION}): the runs cannot \
             tell which of the two brought it;"
        )),
        "{headline}"
    );
    let json: Value = serde_json::from_slice(&ok(report(&["--format", "json"])).stdout).unwrap();
    let signatures = json["signatures"].as_array().unwrap();
    for s in signatures {
        let onset = &s["bisection"]["image_onset"];
        if s["id"] == "package-resolution" {
            assert_eq!(s["bisection"]["verdict"], "placed", "{s}");
            assert_eq!(onset["image"], IMAGE, "{s}");
            assert_eq!(onset["version"], NEW_IMAGE_VERSION, "{s}");
            assert_eq!(
                onset["before"],
                serde_json::json!([OLD_IMAGE_VERSION]),
                "{s}"
            );
        } else {
            assert!(onset.is_null(), "{}: {onset}", s["id"]);
        }
    }
    signature(&json, "package-resolution");
}
