//! `flakestat signatures audit --green-sample N` on the bundled story, the real binary against
//! the fake GitHub on 127.0.0.1 (elastic-recheck's rule: a fingerprint that matches passing jobs
//! is too broad): a planted too-broad signature matches green logs and is named, the shipped set
//! raises no green alarm, at most N green logs are asked for (and none again on a repeat), and
//! without a sample the share is unknown, never zero.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Output;

use crate::common;
use flakestat::fake::{Dataset, FakeGitHub, Faults, RouteKind};
use flakestat::model::JobId;

const N: usize = 15;

fn flakestat(args: &[&str]) -> Output {
    common::flakestat()
        .args(args)
        .output()
        .expect("the binary runs")
}

/// The job ids of the `GET …/actions/jobs/{id}/logs` requests the fake answered.
fn job_log_requests(gh: &FakeGitHub) -> Vec<JobId> {
    gh.requests()
        .iter()
        .filter(|r| r.kind == RouteKind::JobLog)
        .map(|r| {
            let id = r.path.trim_end_matches("/logs").rsplit('/').next().unwrap();
            JobId(id.parse().unwrap())
        })
        .collect()
}

/// The lines of one signature's block in the audit's output.
fn block<'a>(text: &'a str, id: &str) -> Vec<&'a str> {
    let head = format!("{id}:");
    text.lines()
        .skip_while(|l| !l.starts_with(&head))
        .enumerate()
        .take_while(|(i, l)| *i == 0 || l.starts_with("  "))
        .map(|(_, l)| l)
        .collect()
}

#[test]
fn a_green_sample_names_a_too_broad_signature_spares_the_shipped_set_and_stays_within_n() {
    let ds = Dataset::load(&common::story_dir()).unwrap();
    let green_jobs: BTreeSet<JobId> = ds
        .runs
        .iter()
        .flat_map(|r| r.all_jobs())
        .filter(|j| j.conclusion == Some("success".into()))
        .map(|j| j.id)
        .collect();
    let gh = FakeGitHub::start_blocking(ds, Faults::default()).unwrap();
    let api = gh.api_url();
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let cache = cache.to_str().unwrap();
    let survey = flakestat(&[
        "survey",
        "--repo",
        "NVIDIA/cuda-python",
        "--since",
        "2026-06-15",
        "--until",
        "2026-08-01",
        "--api-url",
        &api,
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
    let n = N.to_string();
    // The audit; `api_url` in GITHUB_API_URL (which `--offline` does not refuse, unlike
    // `--api-url`), where a request it should not make would reach the fake.
    let audit_at = |signatures: &Path, extra: &[&str], api_url: Option<&str>| {
        let mut args = vec![
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
        ];
        args.extend_from_slice(extra);
        let mut cmd = common::flakestat();
        cmd.args(&args);
        if let Some(url) = api_url {
            cmd.env("GITHUB_API_URL", url);
        }
        cmd.output().expect("the binary runs")
    };
    let audit = |signatures: &Path, extra: &[&str]| audit_at(signatures, extra, None);
    let bundled = common::signatures();

    // Without a sample, and offline before anything was sampled: unknown, never zero; no
    // request, though the fake's URL is the API root both times.
    gh.clear_requests();
    for (extra, summary) in [
        (&[][..], "matches in successful jobs unknown"),
        (
            &["--offline", "--green-sample", n.as_str()][..],
            "green sample: 0 logs of successful jobs",
        ),
    ] {
        let out = audit_at(&bundled, extra, Some(&api));
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{text}");
        let wait = block(&text, "wait-until-timeout");
        assert!(
            wait[0].contains("matches in green jobs unknown"),
            "{extra:?}: {text}"
        );
        assert!(!text.contains("matches in green jobs 0/"), "{text}");
        assert!(
            text.lines()
                .last()
                .unwrap()
                .contains("matches in successful jobs unknown")
                || text.contains("without a log in the store (--offline)"),
            "{text}"
        );
        let last = text.lines().last().unwrap();
        assert!(last.contains(summary), "{extra:?}: {last}");
        if extra.contains(&"--offline") {
            assert!(
                last.contains("without a log in the store (--offline)"),
                "{last}"
            );
        }
    }
    assert!(gh.requests().is_empty(), "{:?}", gh.requests());
    // No network (nothing listens there): said once, and every share stays unknown.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let out = audit(
        &bundled,
        &[
            "--api-url",
            &closed,
            "--green-sample",
            &n,
            "--max-retries",
            "0",
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{text}{stderr}");
    assert!(stderr.contains("the green sample stopped"), "{stderr}");
    assert!(!text.contains("matches in green jobs 0/"), "{text}");
    assert!(
        block(&text, "wait-until-timeout")[0].contains("matches in green jobs unknown"),
        "{text}"
    );

    // The shipped set: a sample of at most N successful jobs, no green alarm.
    let out = audit(&bundled, &["--api-url", &api, "--green-sample", &n]);
    let text = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{text}{stderr}");
    assert!(!text.contains("ALARM"), "{text}");
    let asked = job_log_requests(&gh);
    assert!(!asked.is_empty() && asked.len() <= N, "{asked:?}");
    assert!(asked.iter().all(|j| green_jobs.contains(j)), "{asked:?}");
    assert_eq!(
        asked.iter().collect::<BTreeSet<_>>().len(),
        asked.len(),
        "each job asked once"
    );
    // The request count is said, like the survey's.
    assert!(
        stderr.contains(&format!("{} log requests", asked.len())),
        "{stderr}"
    );
    // Every signature with a hit has a measured share: 0 of some sampled green jobs.
    let wait = block(&text, "wait-until-timeout");
    let share = wait[0]
        .split("matches in green jobs ")
        .nth(1)
        .unwrap()
        .split([',', ' '])
        .next()
        .unwrap();
    let (matched, sampled) = share.split_once('/').expect("a measured share");
    assert_eq!(matched, "0", "{text}");
    assert!(sampled.parse::<usize>().unwrap() > 0, "{text}");
    assert!(
        text.contains(&format!(
            "green sample: {} logs of successful jobs",
            asked.len()
        )),
        "{text}"
    );

    // A repeat asks for nothing: the sample is deterministic and kept in the store.
    gh.clear_requests();
    let again = audit(&bundled, &["--api-url", &api, "--green-sample", &n]);
    assert_eq!(again.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&again.stdout), text);
    assert!(job_log_requests(&gh).is_empty(), "{:?}", gh.requests());
    // Offline, the stored sample gives the same shares.
    let offline = audit(&bundled, &["--offline", "--green-sample", &n]);
    assert_eq!(String::from_utf8_lossy(&offline.stdout), text);

    // A planted too-broad signature matches the green logs and is named; --strict fails.
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
    gh.clear_requests();
    let out = audit(&planted, &["--api-url", &api, "--green-sample", &n]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(10), "{text}");
    let broad = block(&text, "any-error");
    let alarm = broad
        .iter()
        .find(|l| l.contains("ALARM") && l.contains("sampled successful jobs"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(alarm.contains("too broad"), "{alarm}");
    assert!(
        !broad[0].contains("matches in green jobs 0/")
            && !broad[0].contains("matches in green jobs unknown"),
        "{text}"
    );
    // The shipped ones raise no green alarm beside it.
    assert!(
        text.lines()
            .filter(|l| l.contains("sampled successful jobs"))
            .all(|l| broad.contains(&l)),
        "{text}"
    );
    let asked = job_log_requests(&gh);
    assert!(asked.len() <= N, "{asked:?}");
    assert!(asked.iter().all(|j| green_jobs.contains(j)), "{asked:?}");
}
