//! @mentions from outside stay inert in markdown (issue #10, must fix 3): job names, PR titles,
//! branch names and log lines holding `@user`, `@org/team`, `(@x)` … are rendered so that GitHub
//! links (and pings) no one, while the page still reads `@user`; an address such as `x@y.com`
//! is left as it is. The real binary replays the bundled scenario with hostile names through the
//! fake GitHub on 127.0.0.1; its markdown and its `nightly --post-comment` body are parsed with a
//! GFM parser and every text node is checked the way GitHub finds mentions.

use std::path::Path;
use std::process::Output;

use flakestat::fake::{Dataset, FakeLog};
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// Mention forms, each in a different position: start, after punctuation, a team, in brackets.
const MENTIONS: &str = "@alice (@bob) @org/team-x,@carol [@dave] *@erin*";
/// Looks like a mention but is an address: GitHub does not link it, neither do we change it.
const ADDRESS: &str = "ops@example.com";

fn flakestat(args: &[&str]) -> Output {
    crate::common::flakestat()
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("the binary runs")
}

/// The bundled scenario with mention forms in every job name, PR title, branch and log.
fn hostile_scenario(dir: &Path) -> Dataset {
    let mut ds =
        Dataset::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/cuda-python-flake"))
            .expect("the bundled scenario loads");
    for run in &mut ds.runs {
        run.run.display_title = format!("{} {MENTIONS}", run.run.display_title);
        for attempt in &mut run.attempts {
            for job in &mut attempt.jobs {
                job.name = format!("{} {ADDRESS} {MENTIONS}", job.name);
            }
        }
    }
    for pull in &mut ds.pulls {
        pull.title = format!("{} {ADDRESS} {MENTIONS}", pull.title);
    }
    for log in ds.logs.values_mut() {
        if let FakeLog::Text(text) = log {
            text.push_str(&format!(
                "2026-07-16T00:00:00.0000000Z ##[error]cc {MENTIONS} {ADDRESS}\n"
            ));
        }
    }
    ds.save_json(dir).unwrap();
    ds
}

/// GitHub's rule: `@` then a name character, with no word character just before.
fn mentions_in(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut found = Vec::new();
    for i in 0..chars.len() {
        let before_ok = i == 0 || !(chars[i - 1].is_ascii_alphanumeric() || chars[i - 1] == '_');
        let after_ok = chars.get(i + 1).is_some_and(|c| c.is_ascii_alphanumeric());
        if chars[i] == '@' && before_ok && after_ok {
            found.push(chars[i..].iter().take(20).collect());
        }
    }
    found
}

/// Every run of text GitHub would scan for mentions (outside code and links), as a GFM parser
/// reads the document; HTML blocks (`<summary>`) with their entities decoded.
fn scanned_text(markdown: &str) -> Vec<String> {
    let mut runs = Vec::new();
    let mut current = String::new();
    let mut in_link = 0usize;
    let flush = |current: &mut String, runs: &mut Vec<String>| {
        if !current.is_empty() {
            runs.push(std::mem::take(current));
        }
    };
    for event in Parser::new_ext(
        markdown,
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH,
    ) {
        match event {
            Event::Text(t) if in_link == 0 => current.push_str(&t),
            Event::Html(h) | Event::InlineHtml(h) => {
                flush(&mut current, &mut runs);
                let decoded = h.replace("&#8203;", "\u{200b}").replace("&amp;", "&");
                let mut outside_tags = String::new();
                let mut in_tag = false;
                for c in decoded.chars() {
                    match c {
                        '<' => in_tag = true,
                        '>' => in_tag = false,
                        c if !in_tag => outside_tags.push(c),
                        _ => {}
                    }
                }
                runs.push(outside_tags);
            }
            Event::Start(Tag::Link { .. }) => {
                flush(&mut current, &mut runs);
                in_link += 1;
            }
            Event::End(TagEnd::Link) => in_link -= 1,
            // Emphasis does not split a text node for the mention filter.
            Event::Start(Tag::Emphasis | Tag::Strong)
            | Event::End(TagEnd::Emphasis | TagEnd::Strong) => {}
            _ => flush(&mut current, &mut runs),
        }
    }
    flush(&mut current, &mut runs);
    runs
}

fn assert_inert(what: &str, markdown: &str) {
    let texts = scanned_text(markdown);
    let live: Vec<String> = texts.iter().flat_map(|t| mentions_in(t)).collect();
    assert!(live.is_empty(), "{what}: live mentions {live:?}");
    // Still reads as written: the hostile names are on the page, the address unchanged.
    let page: String = texts.join("\n").replace('\u{200b}', "");
    assert!(
        page.contains("@alice"),
        "{what}: the names should still show"
    );
    assert!(page.contains("@org/team-x"), "{what}");
    assert!(page.contains(ADDRESS), "{what}: an address is left alone");
}

#[test]
fn mentions_in_names_titles_and_logs_ping_no_one() {
    let data = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let ds = hostile_scenario(data.path());
    let data_dir = data.path().to_str().unwrap();
    let cache_dir = cache.path().to_str().unwrap();

    let out = flakestat(&[
        "survey",
        "--replay",
        data_dir,
        "--since",
        "2026-06-15",
        "--cache-dir",
        cache_dir,
        "--format",
        "markdown",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_inert("survey overview", &String::from_utf8(out.stdout).unwrap());

    let account = crate::common::flake_account(
        &ds.repo.to_string(),
        "2026-06-15",
        cache.path(),
        &["--until", &ds.now.to_rfc3339()],
        "markdown",
    );
    assert_inert("signature account", &account);

    // The comment nightly would post: --dry-run prints its body.
    let out = flakestat(&[
        "nightly",
        "--replay",
        data_dir,
        "--since",
        "3d",
        "--baseline",
        "14d",
        "--post-comment",
        "NVIDIA/cuda-python#2396",
        "--dry-run",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_inert("nightly comment", &String::from_utf8(out.stdout).unwrap());
}
