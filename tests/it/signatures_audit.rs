//! `flakestat signatures audit` on the bundled story, the real binary: no alarm on the shipped
//! set, and a planted too-broad signature named (with `--strict` failing on it).

use std::path::Path;
use std::process::Output;

fn flakestat(args: &[&str]) -> Output {
    crate::common::flakestat()
        .args(args)
        .output()
        .expect("the binary runs")
}

#[test]
fn audit_names_a_planted_broad_signature_and_spares_the_shipped_set() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let cache = cache.to_str().unwrap();
    let bundled = root.join("signatures");
    let survey = flakestat(&[
        "survey",
        "--repo",
        "NVIDIA/cuda-python",
        "--since",
        "2026-06-15",
        "--until",
        "2026-08-01",
        "--replay",
        root.join("fixtures/cuda-python-flake").to_str().unwrap(),
        "--cache-dir",
        cache,
        "--format",
        "json",
        "-q",
    ]);
    assert!(
        survey.status.success(),
        "{}",
        String::from_utf8_lossy(&survey.stderr)
    );
    let audit = |signatures: &Path| {
        flakestat(&[
            "signatures",
            "audit",
            "--repo",
            "NVIDIA/cuda-python",
            "--since",
            "2026-06-15",
            "--until",
            "2026-08-01",
            "--cache-dir",
            cache,
            "--signatures",
            signatures.to_str().unwrap(),
            "--strict",
        ])
    };
    let shipped = audit(&bundled);
    let text = String::from_utf8_lossy(&shipped.stdout);
    assert_eq!(shipped.status.code(), Some(0), "{text}");
    assert!(!text.contains("ALARM"), "{text}");
    // Every failed job whose log holds the assertion, related PRs' included, counted from the
    // fake's data of the audited window (not through the store).
    let ds = flakestat::fake::Dataset::load(&root.join("fixtures/cuda-python-flake")).unwrap();
    let t = |s: &str| s.parse::<flakestat::model::Timestamp>().unwrap();
    let (since, until) = (t("2026-06-15T00:00:00Z"), t("2026-08-01T00:00:00Z"));
    let flaky = ds
        .runs
        .iter()
        .filter(|r| r.run.created_at >= since && r.run.created_at < until)
        .flat_map(|r| r.all_jobs())
        .filter(|j| {
            j.is_failed()
                && matches!(ds.logs.get(&j.id), Some(flakestat::fake::FakeLog::Text(l))
                    if l.contains(flakestat::fake::scenario::cuda_python::FLAKE_MESSAGE))
        })
        .count();
    assert!(flaky > 0);
    assert!(
        text.contains(&format!("wait-until-timeout: {flaky} jobs")),
        "{flaky} jobs expected: {text}"
    );
    // Those include runs of related PRs, which reports leave out: the audit says so, and only
    // for a signature that has such runs (network-error lists no paths: no PR is related).
    let line = |id: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{id}: ")))
            .unwrap_or_else(|| panic!("{id}: {text}"))
            .to_string()
    };
    assert!(
        line("wait-until-timeout").contains(" runs of related PRs, which reports exclude)"),
        "{text}"
    );
    assert!(!line("network-error").contains("related"), "{text}");

    let planted = tmp.path().join("planted");
    std::fs::create_dir_all(&planted).unwrap();
    for entry in std::fs::read_dir(&bundled).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), planted.join(entry.file_name())).unwrap();
    }
    std::fs::write(
        planted.join("any-error.toml"),
        "title = \"Anything that says error\"\npattern = '(?i)error'\n",
    )
    .unwrap();
    let out = audit(&planted);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(10), "{text}");
    let block: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("any-error:"))
        .take_while(|l| l.starts_with("any-error:") || l.starts_with("  "))
        .collect();
    assert!(
        block
            .iter()
            .any(|l| l.contains("ALARM") && l.contains("boilerplate")),
        "{text}"
    );
    assert!(
        block
            .iter()
            .any(|l| l.contains("ALARM") && l.contains("unrelated line shapes")),
        "{text}"
    );
    // The shipped signatures raise no alarm of their own beside it.
    let others: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("ALARM") && !block.contains(l))
        .collect();
    assert!(others.iter().all(|l| l.contains("any-error")), "{others:?}");
}
