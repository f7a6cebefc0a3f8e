//! `flakestat suggest` on the bundled story, the real binary against the replayed fake GitHub:
//! the drafts pass `signatures check`, and surveying again offline with them leaves at least
//! half fewer unclassified jobs while every existing signature's figures stay the same.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

fn flakestat(args: &[&str]) -> Output {
    crate::common::flakestat()
        .args(args)
        .output()
        .expect("the binary runs")
}

fn ok(out: &Output) -> &Output {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

#[test]
fn drafts_pass_check_claim_the_unclassified_and_change_no_figure() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let fixture = root.join("fixtures/cuda-python-flake");
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let cache = cache.to_str().unwrap();
    let bundled = root.join("signatures");
    // The window ends where the recording does (2026-08-01 06:30): the offline survey's clock
    // is the real one, and a later end would be a part of the window no listing covered.
    let survey = |signatures: &Path, offline: bool| -> Value {
        let mut args = vec![
            "survey",
            "--repo",
            "NVIDIA/cuda-python",
            "--since",
            "2026-06-15",
            "--until",
            "2026-08-01T06:30:00Z",
            "--cache-dir",
            cache,
            "--signatures",
            signatures.to_str().unwrap(),
            "--format",
            "json",
            "-q",
        ];
        if offline {
            args.push("--offline");
        } else {
            args.extend(["--replay", fixture.to_str().unwrap()]);
        }
        serde_json::from_slice(&ok(&flakestat(&args)).stdout).unwrap()
    };
    let before = survey(&bundled, false);
    let unclassified_before = before["jobs_unclassified"].as_u64().unwrap();
    assert!(unclassified_before > 0, "the story has unknown failures");

    // The story's window holds few unknown failures, each group a single job: the default
    // `--min-jobs 2` drafts nothing, and says why (how many groups, each below it, and the flag
    // that drafts them). The done-when is therefore shown with `--min-jobs 1`.
    let groups = before["unclassified"].as_array().unwrap();
    let largest = groups
        .iter()
        .map(|g| g["jobs"].as_u64().unwrap())
        .max()
        .unwrap();
    assert!(
        largest < 2,
        "a group of {largest} jobs: the default would draft it"
    );
    let default_drafts = tmp.path().join("default-drafts");
    let out = ok(&flakestat(&[
        "suggest",
        "--repo",
        "NVIDIA/cuda-python",
        "--since",
        "2026-06-15",
        "--until",
        "2026-08-01T06:30:00Z",
        "--cache-dir",
        cache,
        "--signatures",
        bundled.to_str().unwrap(),
        "--write",
        default_drafts.to_str().unwrap(),
    ]))
    .clone();
    let written_by_default = std::fs::read_dir(&default_drafts)
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(written_by_default, 0);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "the {unclassified_before} unclassified job(s) fall into {} group(s), each below --min-jobs 2",
            groups.len()
        )),
        "{err}"
    );
    assert!(err.contains(&format!("pass --min-jobs {largest}")), "{err}");

    let drafts = tmp.path().join("drafts");
    let out = flakestat(&[
        "suggest",
        "--repo",
        "NVIDIA/cuda-python",
        "--since",
        "2026-06-15",
        "--until",
        "2026-08-01T06:30:00Z",
        "--cache-dir",
        cache,
        "--signatures",
        bundled.to_str().unwrap(),
        "--min-jobs",
        "1",
        "--output",
        drafts.to_str().unwrap(),
    ]);
    ok(&out);
    let written: Vec<_> = std::fs::read_dir(&drafts).unwrap().collect();
    assert!(
        !written.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // What a draft's title masks (a pid, a timeout), its pattern masks too: the next
    // occurrence, with another pid, is matched.
    for entry in &written {
        let text = std::fs::read_to_string(entry.as_ref().unwrap().path()).unwrap();
        if text.contains("child <n> did not report") {
            let pattern = text.lines().find(|l| l.starts_with("pattern = ")).unwrap();
            assert!(
                !pattern.contains("5170") && !pattern.contains(r"30\.0s"),
                "{pattern}"
            );
        }
    }
    // The drafts alone, and with the shipped set, pass `signatures check`.
    ok(&flakestat(&[
        "signatures",
        "check",
        drafts.to_str().unwrap(),
    ]));
    let combined = tmp.path().join("combined");
    copy_dir(&bundled, &combined);
    copy_dir(&drafts, &combined);
    ok(&flakestat(&[
        "signatures",
        "check",
        combined.to_str().unwrap(),
    ]));

    let after = survey(&combined, true);
    let unclassified_after = after["jobs_unclassified"].as_u64().unwrap();
    assert!(
        unclassified_after * 2 <= unclassified_before,
        "{unclassified_before} unclassified jobs before, {unclassified_after} after"
    );
    // Every existing signature's figures are unchanged.
    for sig in before["signatures"].as_array().unwrap() {
        let again = after["signatures"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == sig["id"])
            .unwrap_or_else(|| panic!("{} is still reported", sig["id"]));
        assert_eq!(sig, again, "{} changed", sig["id"]);
    }
    // And the drafts claim what they say: each matches at least one job.
    let drafted: Vec<&Value> = after["signatures"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["id"].as_str().unwrap().starts_with("unknown-"))
        .collect();
    assert_eq!(drafted.len(), written.len());
    for sig in drafted {
        assert!(sig["jobs_hit"].as_u64().unwrap() > 0, "{sig}");
    }
}

#[test]
fn suggest_without_a_store_says_what_to_run() {
    let tmp = tempfile::tempdir().unwrap();
    let out = flakestat(&[
        "suggest",
        "--repo",
        "NVIDIA/cuda-python",
        "--since",
        "30d",
        "--cache-dir",
        tmp.path().to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("flakestat survey --repo NVIDIA/cuda-python"),
        "{err}"
    );
}
