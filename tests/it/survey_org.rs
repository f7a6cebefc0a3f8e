//! `survey --org` and `report --org` / several `--repo` through the binary, against a fake
//! organisation (`fake::scenario::org::three_repos`): three active repositories, two of them
//! sharing a flake, one clean, and an archived and a dormant one the survey skips. The
//! PostgreSQL store (`FLAKESTAT_TEST_POSTGRES`, `.ci/postgres.sh start`) gives the same reports.

use std::path::Path;
use std::process::Output;

use crate::common;
use flakestat::fake::scenario::org::{SHARED_FLAKE_LINE, three_repos};
use flakestat::fake::{Dataset, FakeGitHub, FakeLog, Faults, Listener, RouteKind};
use serde_json::Value;

const SINCE: &str = "2026-06-01";
const UNTIL: &str = "2026-06-30";

fn flakestat(args: &[&str], cache: &Path) -> Output {
    flakestat_at(args, &["--cache-dir", cache.to_str().unwrap()])
}

/// The binary with `args` on the store `at` names (`--cache-dir DIR` or `--store URL`).
fn flakestat_at(args: &[&str], at: &[&str]) -> Output {
    common::flakestat()
        .args(args)
        .args(at)
        .arg("--signatures")
        .arg(common::signatures())
        .env("NO_COLOR", "1")
        .output()
        .expect("the binary runs")
}

fn survey(gh: &FakeGitHub, target: &[&str], cache: &Path, format: &str) -> Output {
    survey_at(
        gh,
        target,
        &["--cache-dir", cache.to_str().unwrap()],
        format,
    )
}

fn survey_at(gh: &FakeGitHub, target: &[&str], at: &[&str], format: &str) -> Output {
    let api = gh.api_url();
    let mut args = vec!["survey", "-v", "--since", SINCE, "--until", UNTIL];
    args.extend_from_slice(target);
    args.extend_from_slice(&["--api-url", &api, "--format", format, "--max-retries", "1"]);
    flakestat_at(&args, at)
}

fn ok(output: &Output) -> String {
    assert!(
        output.status.success(),
        "exit {:?}: {}",
        output.status.code(),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn json(output: &Output) -> Value {
    serde_json::from_str(&ok(output)).unwrap()
}

/// Runs of `ds` in June whose logs carry `line`, counted from the dataset.
fn runs_with(ds: &Dataset, line: &str) -> u64 {
    ds.runs
        .iter()
        .filter(|r| {
            r.run.created_at < chrono::DateTime::parse_from_rfc3339("2026-07-01T00:00:00Z").unwrap()
        })
        .filter(|r| {
            r.run.created_at
                >= chrono::DateTime::parse_from_rfc3339("2026-06-01T00:00:00Z").unwrap()
        })
        .filter(|r| {
            r.all_jobs()
                .iter()
                .any(|j| matches!(ds.logs.get(&j.id), Some(FakeLog::Text(t)) if t.contains(line)))
        })
        .count() as u64
}

fn by_name<'a>(datasets: &'a [Dataset], name: &str) -> &'a Dataset {
    datasets.iter().find(|d| d.repo.name == name).unwrap()
}

/// `(made, minimum)` of the whole survey from the `-v` line.
fn survey_cost(stderr: &str) -> (u64, u64) {
    let line = stderr
        .lines()
        .find(|l| l.contains("requests against the minimum"))
        .unwrap_or_else(|| panic!("no cost line in {stderr}"));
    let total = line.split("; ").nth(1).unwrap();
    let figure: String = total
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '/')
        .collect();
    let (made, min) = figure.split_once('/').unwrap();
    (made.parse().unwrap(), min.parse().unwrap())
}

fn api_requests(gh: &FakeGitHub) -> usize {
    gh.requests()
        .iter()
        .filter(|r| r.listener == Listener::Api)
        .count()
}

#[test]
fn an_org_survey_reports_the_shared_flake_with_both_repositories_and_their_counts() {
    let datasets = three_repos();
    let gh = FakeGitHub::start_many_blocking(datasets.clone(), Faults::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let doc = json(&survey(&gh, &["--org", "octo-org"], dir.path(), "json"));

    // The three active repositories, by name; archived and dormant ones skipped.
    let repos: Vec<&str> = doc["repos"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["repo"].as_str().unwrap())
        .collect();
    assert_eq!(repos, ["octo-org/alpha", "octo-org/beta", "octo-org/gamma"]);
    assert_eq!(doc["repo"], Value::Null);
    assert_eq!(doc["owner"], "octo-org");
    let runs = |name: &str| by_name(&datasets, name).runs.len() as u64;
    assert_eq!(
        doc["runs_total"].as_u64().unwrap(),
        runs("alpha") + runs("beta") + runs("gamma")
    );

    // The shared flake: both repositories, each with its own counts from the dataset.
    let sigs = doc["signatures"].as_array().unwrap();
    let disk = sigs.iter().find(|s| s["id"] == "disk-full").unwrap();
    let (alpha, beta) = (
        runs_with(by_name(&datasets, "alpha"), SHARED_FLAKE_LINE),
        runs_with(by_name(&datasets, "beta"), SHARED_FLAKE_LINE),
    );
    assert!(alpha > 0 && beta > 0);
    assert_eq!(disk["runs_hit"].as_u64().unwrap(), alpha + beta);
    let per_repo: Vec<(String, u64, u64)> = disk["repos"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["repo"].as_str().unwrap().to_string(),
                r["runs_hit"].as_u64().unwrap(),
                r["runs_total"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        per_repo,
        [
            ("octo-org/beta".to_string(), beta, runs("beta")),
            ("octo-org/alpha".to_string(), alpha, runs("alpha")),
        ],
        "most runs hit first"
    );
    // Ranked first across repositories, and the matrix per repository: alpha's hits all on
    // py3.13 linux, beta's on py3.13 windows.
    assert_eq!(sigs[0]["id"], "disk-full");
    let beta_dims = &disk["repos"][0]["dimensions"];
    assert_eq!(
        beta_dims["platform"]["win-64"]["jobs_hit"].as_u64(),
        Some(beta)
    );
    assert_eq!(
        beta_dims["platform"]["linux-64"]["jobs_hit"].as_u64(),
        Some(0)
    );

    // The clean repository contributes runs but no hits.
    let gamma = &doc["repos"][2];
    assert_eq!(gamma["runs_total"].as_u64(), Some(runs("gamma")));
    assert!(
        gamma["signatures"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["runs_hit"] == 0)
    );
    assert!(
        sigs.iter()
            .flat_map(|s| s["repos"].as_array().cloned().unwrap_or_default())
            .all(|r| r["repo"] != "octo-org/gamma")
    );

    // Each repository's part is its own single-repository report, byte for byte.
    let single = dir.path().join("single");
    let one = json(&survey(&gh, &["--repo", "octo-org/beta"], &single, "json"));
    assert_eq!(doc["repos"][1], one);

    // The same, as markdown: the shared signature's row names both repositories.
    let cache = dir.path();
    let md = ok(&flakestat(
        &[
            "report", "--org", "octo-org", "--since", SINCE, "--until", UNTIL, "--format",
            "markdown",
        ],
        cache,
    ));
    let row = md
        .lines()
        .find(|l| l.starts_with("| 1 |") && l.contains("`disk-full`"))
        .unwrap_or_else(|| panic!("no ranking row for disk-full in\n{md}"));
    assert!(row.contains(&format!("octo-org/beta ({beta})")), "{row}");
    assert!(row.contains(&format!("octo-org/alpha ({alpha})")), "{row}");
    assert!(md.contains("## Matrix across repositories"), "{md}");
    assert!(!md.contains("octo-org/archived"), "{md}");
}

#[test]
fn several_repos_and_org_reports_agree_and_the_account_lists_the_repositories_hit() {
    let datasets = three_repos();
    let gh = FakeGitHub::start_many_blocking(datasets.clone(), Faults::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let surveyed = ok(&survey(&gh, &["--org", "octo-org"], dir.path(), "json"));
    let report = |args: &[&str]| {
        let mut all = vec!["report", "--since", SINCE, "--until", UNTIL];
        all.extend_from_slice(args);
        flakestat(&all, dir.path())
    };
    // From the store alone, the same document.
    assert_eq!(
        ok(&report(&["--org", "octo-org", "--format", "json"])),
        surveyed
    );
    // Named repositories and a pattern choose the same way.
    let two = json(&report(&[
        "--repo",
        "octo-org/alpha",
        "--repo",
        "octo-org/beta",
        "--format",
        "json",
    ]));
    let pattern = json(&report(&[
        "--org",
        "octo-org",
        "--repo-pattern",
        "[ab]*",
        "--format",
        "json",
    ]));
    assert_eq!(two["repos"], pattern["repos"]);
    assert_eq!(two["repos"].as_array().unwrap().len(), 2);

    // The account of the shared signature lists the repositories it hits and not the clean one.
    let account = ok(&report(&[
        "--org",
        "octo-org",
        "--signature",
        "disk-full",
        "--format",
        "markdown",
    ]));
    assert!(
        account.starts_with("# `disk-full` across 3 repositories of octo-org"),
        "{account}"
    );
    assert!(account.contains("in 2 of 3 repositories"), "{account}");
    assert!(account.contains("## In octo-org/beta"), "{account}");
    assert!(account.contains("## In octo-org/alpha"), "{account}");
    assert!(
        account.contains("Not hit in: octo-org/gamma (20 runs)."),
        "{account}"
    );
    // HTML and the terminal table render the same report.
    let html = ok(&report(&["--org", "octo-org", "--format", "html"]));
    assert!(html.contains("<title>CI failures in 3 repositories of octo-org (flakestat)</title>"));
    assert!(html.contains("octo-org/gamma"));
    let table = ok(&report(&["--org", "octo-org", "--format", "table"]));
    assert!(table.contains("octo-org/beta"), "{table}");

    // Single-repository reports keep their shape: no `repos` field.
    let one = json(&report(&["--repo", "octo-org/alpha", "--format", "json"]));
    assert!(one.get("repos").is_none());
    assert_eq!(one["repo"], "octo-org/alpha");

    // An owner the store knows nothing of is said so.
    let none = report(&["--org", "nobody", "--format", "json"]);
    assert_eq!(none.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&none.stderr).contains("holds nothing for nobody"));
}

/// `report --tests` over several repositories: each one's tests analysed on its own, its JSON
/// document the one `--repo` alone gives (by name, whatever order they were named in), and the
/// text formats one section per repository; `--format ids` stays a list for one repository.
#[test]
fn report_tests_over_several_repositories_holds_each_ones_own_document() {
    let datasets = three_repos();
    let gh = FakeGitHub::start_many_blocking(datasets, Faults::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    ok(&survey(&gh, &["--org", "octo-org"], dir.path(), "json"));
    let report = |args: &[&str]| {
        let mut all = vec!["report", "--tests", "--since", SINCE, "--until", UNTIL];
        all.extend_from_slice(args);
        flakestat(&all, dir.path())
    };
    let two = json(&report(&[
        "--repo",
        "octo-org/beta",
        "--repo",
        "octo-org/alpha",
        "--format",
        "json",
    ]));
    let docs = two["repos"]
        .as_array()
        .expect("one document per repository");
    assert_eq!(docs.len(), 2);
    for (doc, name) in docs.iter().zip(["octo-org/alpha", "octo-org/beta"]) {
        let alone = json(&report(&["--repo", name, "--format", "json"]));
        assert_eq!(doc, &alone, "{name}");
    }
    assert_eq!(two["schema"], 1);
    assert_eq!(two["complete"], true);

    let markdown = ok(&report(&["--org", "octo-org", "--format", "markdown"]));
    assert!(
        markdown.starts_with("# Failing tests in 3 repositories of octo-org\n"),
        "{markdown}"
    );
    for name in ["octo-org/alpha", "octo-org/beta", "octo-org/gamma"] {
        assert!(
            markdown.contains(&format!("## Failing tests in {name}\n")),
            "{markdown}"
        );
    }
    let html = ok(&report(&["--org", "octo-org", "--format", "html"]));
    assert!(
        html.contains("<title>Failing tests in 3 repositories of octo-org (flakestat)</title>")
    );

    let ids = report(&["--org", "octo-org", "--format", "ids"]);
    assert_eq!(ids.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&ids.stderr).contains("give one --repo"));
}

#[test]
fn an_org_survey_costs_its_listing_and_no_more_than_the_single_surveys() {
    let datasets = three_repos();
    let dir = tempfile::tempdir().unwrap();
    // Each active repository alone: its requests and its minimum.
    let mut single_requests = 0;
    let mut minimums = 0;
    for name in ["alpha", "beta", "gamma"] {
        let gh = FakeGitHub::start_many_blocking(
            vec![by_name(&datasets, name).clone()],
            Faults::default(),
        )
        .unwrap();
        let repo = format!("octo-org/{name}");
        let out = survey(&gh, &["--repo", &repo], &dir.path().join(name), "json");
        ok(&out);
        let (_, minimum) = survey_cost(&String::from_utf8_lossy(&out.stderr));
        minimums += minimum;
        single_requests += api_requests(&gh);
    }
    let gh = FakeGitHub::start_many_blocking(datasets, Faults::default()).unwrap();
    let out = survey(&gh, &["--org", "octo-org"], &dir.path().join("org"), "json");
    ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let listing = gh.request_count(RouteKind::OwnerRepos);
    assert_eq!(listing, 1, "one page lists the organisation");
    // Together: exactly the single surveys' requests plus the listing; nothing for the
    // archived and dormant repositories.
    assert_eq!(api_requests(&gh), single_requests + listing);
    let (made, _) = survey_cost(&stderr);
    let total = made + listing as u64;
    assert!(
        total as f64 <= 1.05 * minimums as f64,
        "{total} requests against a minimum of {minimums}"
    );
    assert!(
        gh.requests()
            .iter()
            .all(|r| !r.path.contains("/archived") && !r.path.contains("/dormant")),
        "skipped repositories are never asked about"
    );
}

#[test]
fn a_stopped_org_survey_resumes_across_repositories() {
    let datasets = three_repos();
    let dir = tempfile::tempdir().unwrap();
    // The whole survey, once, for reference.
    let fresh = FakeGitHub::start_many_blocking(datasets.clone(), Faults::default()).unwrap();
    let reference = ok(&survey(
        &fresh,
        &["--org", "octo-org"],
        &dir.path().join("fresh"),
        "json",
    ));
    let needed = api_requests(&fresh);

    // A budget spent partway through the second repository: exit 6, what was fetched is kept.
    let limited = Faults {
        rate_limit: Some(needed as u32 / 2),
        ..Faults::default()
    };
    let gh = FakeGitHub::start_many_blocking(datasets, limited).unwrap();
    let cache = dir.path().join("stopped");
    let stopped = survey(&gh, &["--org", "octo-org"], &cache, "json");
    assert_eq!(
        stopped.status.code(),
        Some(6),
        "{}",
        String::from_utf8_lossy(&stopped.stderr)
    );
    let first: Vec<_> = gh.requests();
    gh.clear_requests();
    gh.set_faults(Faults::default());
    let resumed = ok(&survey(&gh, &["--org", "octo-org"], &cache, "json"));
    assert_eq!(
        resumed, reference,
        "the resumed survey reports what a whole one does"
    );
    let second = gh.requests();
    // No log fetched twice, and the organisation's listing was not paid for again.
    let logs_ok = |reqs: &[flakestat::fake::RecordedRequest]| -> Vec<String> {
        reqs.iter()
            .filter(|r| r.kind == RouteKind::JobLog && r.status == 302)
            .map(|r| r.path.clone())
            .collect()
    };
    let (a, b) = (logs_ok(&first), logs_ok(&second));
    assert!(!a.is_empty() && !b.is_empty(), "logs in both surveys");
    assert!(b.iter().all(|p| !a.contains(p)), "a log fetched twice");
    let listing: Vec<u16> = second
        .iter()
        .filter(|r| r.kind == RouteKind::OwnerRepos)
        .map(|r| r.status)
        .collect();
    assert_eq!(listing, [304]);
}

#[test]
fn an_org_survey_into_postgres_reports_byte_identical_to_sqlite() {
    let Some(base) = std::env::var("FLAKESTAT_TEST_POSTGRES")
        .ok()
        .filter(|v| !v.is_empty())
    else {
        common::skips::skipped(
            common::skips::Need::Postgres,
            "FLAKESTAT_TEST_POSTGRES is not set: skipped (.ci/postgres.sh start)",
        );
        return;
    };
    let url = flakestat::store::postgres::fresh_schema_url(&base).unwrap();
    let gh = FakeGitHub::start_many_blocking(three_repos(), Faults::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let sqlite = ["--cache-dir", dir.path().to_str().unwrap()];
    let postgres = ["--store", url.as_str()];
    let org = ["--org", "octo-org"];
    let surveyed = |at: &[&str]| ok(&survey_at(&gh, &org, at, "json"));
    assert_eq!(surveyed(&postgres), surveyed(&sqlite));
    // Listed again: from the kept pages, the same choice on both engines.
    assert_eq!(surveyed(&postgres), surveyed(&sqlite));
    for format in ["json", "markdown", "html", "table"] {
        let report = |at: &[&str]| {
            let args = [
                "report", "--since", SINCE, "--until", UNTIL, "--org", "octo-org", "--format",
                format,
            ];
            ok(&flakestat_at(&args, at))
        };
        assert_eq!(report(&postgres), report(&sqlite), "{format}");
    }
    let offline = |at: &[&str]| {
        let args = [
            "survey",
            "--offline",
            "--since",
            SINCE,
            "--until",
            UNTIL,
            "--org",
            "octo-org",
            "--format",
            "json",
        ];
        ok(&flakestat_at(&args, at))
    };
    assert_eq!(offline(&postgres), offline(&sqlite));
}

#[test]
fn an_org_nightly_compares_each_repository_with_its_own_baseline() {
    // June 1 to 8: every active repository has runs in the baseline and in the period.
    let gh = FakeGitHub::start_many_blocking(three_repos(), Faults::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let api = gh.api_url();
    let nightly = |target: &[&str], cache: &Path, format: &str| {
        let mut args = vec![
            "nightly",
            "--now",
            "2026-06-08T00:00:00Z",
            "--since",
            "3d",
            "--baseline",
            "4d",
        ];
        args.extend_from_slice(target);
        args.extend_from_slice(&["--api-url", &api, "--format", format, "--max-retries", "1"]);
        flakestat(&args, cache)
    };
    let org_cache = dir.path().join("org");
    let doc = json(&nightly(&["--org", "octo-org"], &org_cache, "json"));
    assert_eq!(doc["kind"], "nightly");
    assert_eq!(doc["owner"], "octo-org");
    let repos = doc["repos"].as_array().unwrap();
    let names: Vec<&str> = repos.iter().map(|r| r["repo"].as_str().unwrap()).collect();
    assert_eq!(names, ["octo-org/alpha", "octo-org/beta", "octo-org/gamma"]);
    for part in repos {
        assert!(part["period"]["runs_total"].as_u64() > Some(0), "{part}");
        assert!(part["baseline"]["runs_total"].as_u64() > Some(0), "{part}");
    }
    // Each repository's part is its own nightly report, byte for byte.
    let single = dir.path().join("single");
    for (part, name) in repos.iter().zip(&names) {
        let alone = json(&nightly(&["--repo", name], &single, "json"));
        assert_eq!(part, &alone, "{name}");
    }
    for kind in ["new", "rising", "fading", "new_unclassified"] {
        let sum: u64 = repos
            .iter()
            .map(|r| r["counts"][kind].as_u64().unwrap())
            .sum();
        assert_eq!(doc["counts"][kind].as_u64(), Some(sum), "{kind}");
    }
    // The text formats: one heading over all, each repository's report a level down.
    let md = ok(&nightly(&["--org", "octo-org"], &org_cache, "markdown"));
    assert!(
        md.starts_with("# Nightly CI report for 3 repositories of octo-org"),
        "{md}"
    );
    for name in &names {
        assert!(
            md.contains(&format!("## Nightly CI report for {name}")),
            "{md}"
        );
    }
    // --fail-on alerts when any repository's report holds the change.
    let alerting = repos.iter().any(|r| {
        r["counts"]["new"].as_u64() > Some(0) || r["counts"]["new_unclassified"].as_u64() > Some(0)
    });
    let out = flakestat(
        &[
            "nightly",
            "--now",
            "2026-06-08T00:00:00Z",
            "--since",
            "3d",
            "--baseline",
            "4d",
            "--org",
            "octo-org",
            "--offline",
            "--fail-on",
            "new",
            "--format",
            "json",
        ],
        &org_cache,
    );
    assert_eq!(out.status.code(), Some(if alerting { 10 } else { 0 }));
}

#[test]
fn an_org_nightly_keeps_one_comment_for_all_its_repositories() {
    let gh = FakeGitHub::start_many_blocking(three_repos(), Faults::default()).unwrap();
    let alpha = flakestat::model::Repo::parse("octo-org/alpha").unwrap();
    gh.mutate_repo(&alpha, |ds| {
        ds.issues.push(flakestat::fake::FakeIssue {
            number: 7,
            title: "CI health".into(),
            state: "open".into(),
            locked: false,
        })
    })
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let api = gh.api_url();
    let args = [
        "nightly",
        "--now",
        "2026-06-08T00:00:00Z",
        "--since",
        "3d",
        "--baseline",
        "4d",
        "--org",
        "octo-org",
        "--post-comment",
        "octo-org/alpha#7",
        "--api-url",
        &api,
        "--max-retries",
        "1",
        "--output",
        "/dev/null",
    ];
    let post = || {
        let out = common::flakestat()
            .args(args)
            .arg("--cache-dir")
            .arg(dir.path())
            .arg("--signatures")
            .arg(common::signatures())
            .env("GITHUB_TOKEN", "org-nightly")
            .output()
            .unwrap();
        ok(&out);
        let ds = gh.datasets().into_iter().find(|d| d.repo == alpha).unwrap();
        ds.comments
            .iter()
            .filter(|c| c.issue_number == 7)
            .map(|c| c.body.clone())
            .collect::<Vec<String>>()
    };
    let first = post();
    assert_eq!(first.len(), 1);
    assert!(
        first[0].starts_with("<!-- flakestat:nightly org octo-org -->\n# Nightly CI report for 3 repositories of octo-org"),
        "{}",
        first[0]
    );
    // The next night finds it by its marker: still one comment.
    assert_eq!(post(), first);
}

/// The report over the organisation as people read it, in every format: an insta snapshot
/// each (cache folder masked), like one repository's in `snapshot_output`.
#[test]
fn snapshot_org_report_in_every_format() {
    let gh = FakeGitHub::start_many_blocking(three_repos(), Faults::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    ok(&survey(&gh, &["--org", "octo-org"], dir.path(), "json"));
    let cache = dir.path().to_str().unwrap();
    common::snapshot_settings(&[(dir.path(), "[CACHE]")]).bind(|| {
        for format in ["table", "markdown", "json", "html"] {
            let args = [
                "report",
                "--org",
                "octo-org",
                "--since",
                SINCE,
                "--until",
                UNTIL,
                "--format",
                format,
                "--cache-dir",
                cache,
                "--signatures",
                "signatures",
            ];
            let out = common::snapshot_flakestat(&args).output().unwrap();
            assert_eq!(out.status.code(), Some(0), "{format}");
            insta::assert_snapshot!(
                format!("org_report_{format}"),
                common::transcript(&args, &out)
            );
        }
    });
}
