//! The bundled cuda-python-flake scenario end to end: `flakestat survey --replay` fills a store,
//! `flakestat report --signature` reads it, and the figures agree with the ones the scenario's
//! README states (which `tests/it/fake_scenario.rs` keeps in sync with the generated data).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Output;

use flakestat::fake::scenario::cuda_python::{CULPRIT_PR, FORK_PR, RELATED_PR};
use flakestat::model::PrNumber;
use flakestat::report::wire;

fn scenario() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/cuda-python-flake")
}

fn flakestat(cache: &Path, args: &[&str]) -> Output {
    crate::common::flakestat()
        .args(args)
        .arg("--cache-dir")
        .arg(cache)
        .arg("--signatures")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("signatures"))
        .output()
        .expect("the binary runs")
}

/// The `| figure | value |` table between the README's figure markers.
fn readme_figures() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(scenario().join("README.md")).unwrap();
    let start = text.find("<!-- figures:start -->").unwrap();
    let end = text.find("<!-- figures:end -->").unwrap();
    text[start..end]
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l
                .trim()
                .trim_matches('|')
                .split('|')
                .map(str::trim)
                .collect();
            (cells.len() == 2 && cells[1].starts_with('`'))
                .then(|| (cells[0].to_string(), cells[1].trim_matches('`').to_string()))
        })
        .collect()
}

fn figure(figures: &BTreeMap<String, String>, name: &str) -> u64 {
    figures[name]
        .parse()
        .unwrap_or_else(|_| panic!("{name}: {}", figures[name]))
}

#[test]
fn the_story_as_the_scenario_tells_it() {
    let figures = readme_figures();
    let dir = scenario();
    let cache = tempfile::tempdir().unwrap();
    let window = [
        "--repo",
        "NVIDIA/cuda-python",
        "--since",
        "2026-06-15",
        "--until",
        "2026-07-31",
    ];
    let mut survey = vec![
        "-q",
        "survey",
        "--replay",
        dir.to_str().unwrap(),
        "--format",
        "json",
    ];
    survey.extend(window);
    let out = flakestat(cache.path(), &survey);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let mut report = vec![
        "report",
        "--signature",
        "wait-until-timeout",
        "--format",
        "json",
    ];
    report.extend(window);
    let out = flakestat(cache.path(), &report);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let data: wire::Report = serde_json::from_slice(&out.stdout).unwrap();
    let s = &data.signatures[0];
    assert_eq!(s.runs_hit, figure(&figures, "runs with a flake hit"));
    assert_eq!(
        s.runs_hit_default_branch,
        figure(&figures, "hit runs on main")
    );
    assert_eq!(s.runs_hit_pr, figure(&figures, "hit runs on pull requests"));
    assert_eq!(s.runs_hit_pr_unrelated, s.runs_hit_pr);
    assert_eq!(
        s.runs_rerun_to_green,
        figure(&figures, "hit runs re-run to green")
    );
    assert_eq!(
        u64::from(s.max_attempts),
        figure(&figures, "most attempts of a hit run")
    );
    assert_eq!(
        s.jobs_hit,
        figure(&figures, "flaky job executions (related PR excluded)")
    );
    assert_eq!(s.runs_hit_before, 0);
    let first: chrono::DateTime<chrono::Utc> = figures["first hit"].parse().unwrap();
    assert_eq!(s.first_hit.as_ref().unwrap().run_created_at, first);
    // The related PR (#2362) and the fork's graph PR (#2370, whose runs name no PR) failed
    // with the same assertion: excluded, each with its reason.
    let related = figure(&figures, "related PR runs failing with the assertion");
    let fork = figure(&figures, "fork PR runs failing with the assertion");
    let excluded_hits = |pr: u64| {
        s.excluded_runs
            .iter()
            .filter(|r| r.hit && r.pr == PrNumber(pr))
            .count() as u64
    };
    assert_eq!(excluded_hits(RELATED_PR), related);
    assert_eq!(excluded_hits(FORK_PR), fork);
    assert_eq!(
        s.excluded_runs.iter().filter(|r| r.hit).count() as u64,
        related + fork
    );
    // #2371 touches the paths too: once the bisection has its changed files (it is a
    // suspect), its own pre-merge runs are left out like any related PR's.
    assert!(
        s.excluded_runs
            .iter()
            .all(|r| [RELATED_PR, FORK_PR, CULPRIT_PR].contains(&r.pr.0))
    );
    // Only 3.14t, and among 3.14t jobs every platform, CUDA version and GPU.
    let py = &s.findings[0];
    assert_eq!((py.dimension.as_str(), py.significant), ("python", true));
    assert_eq!(py.hit_values, ["3.14t"]);
    for dim in ["platform", "cuda"] {
        let f = s.findings.iter().find(|f| f.dimension == dim).unwrap();
        assert_eq!(f.kind, "everywhere", "{dim}");
        assert_eq!(f.within.as_deref(), Some("python=3.14t"));
    }
    for (value, cell) in &s.dimensions["python"] {
        assert_eq!(cell.jobs_hit > 0, value == "3.14t", "{value}");
    }
}
