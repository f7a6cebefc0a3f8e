//! `flakestat suggest`: draft signature files for the groups of failed jobs no signature
//! explains, from the store alone (like `report`). Every draft written has passed
//! `signatures check` together with the signatures in use; a draft that would not is left out
//! and said why.

use std::path::{Path, PathBuf};

use clap::Args;

use super::GlobalArgs;
use super::error::CliError;
use super::output::write_output;
use super::pipeline::load_from_store;
use super::source::WindowArgs;
use crate::analysis::ReportData;
use crate::analysis::suggest::{ClaimedLine, Draft, Rejected, Skipped, checked, suggest};
use crate::exit;
use crate::model::Snapshot;
use crate::report::sanitize::terminal_line;

const EXAMPLES: &str = "\
Examples:
  flakestat suggest --repo NVIDIA/cuda-python --since 30d
  flakestat suggest --repo NVIDIA/cuda-python --since 2026-06-15 \\
      -o drafts/ --min-jobs 3
  flakestat suggest --replay fixtures/cuda-python-flake --since 2026-06-15

Reads only the store that `flakestat survey` filled. Each draft claims one group of unclassified
jobs (see the report's unclassified groups); review it, rename it, add `paths` and `issue`, and
move it into your signatures folder.";

#[derive(Debug, Args)]
#[command(after_help = EXAMPLES)]
pub struct SuggestArgs {
    #[command(flatten)]
    pub window: WindowArgs,
    /// Write each draft to DIR/<id>.toml (created if missing) instead of printing them.
    // `--write` was its name before every command wrote with `-o/--output`: kept, hidden.
    #[arg(short, long, value_name = "DIR", alias = "write")]
    pub output: Option<PathBuf>,
    /// Only groups of at least N jobs get a draft.
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..))]
    pub min_jobs: u64,
}

pub fn run(global: &GlobalArgs, args: SuggestArgs) -> Result<u8, CliError> {
    let loaded = load_from_store(&args.window, None)?;
    let data = loaded.analyze();
    let claimed = claimed_lines(&loaded.snapshot);
    let (drafts, skipped) = suggest(&data.unclassified, &claimed, args.min_jobs);
    // Keep only drafts that pass `signatures check` with the signatures in use.
    let (passed, rejected) = checked(drafts, &loaded.signatures.specs);
    write_drafts(args.output.as_deref(), &passed)?;
    if !global.quiet {
        say_summary(&args, &data, &passed, &skipped, &rejected);
    }
    Ok(exit::SUCCESS)
}

/// Lines of jobs existing signatures claim: a draft must not claim them too, or say so.
fn claimed_lines(snapshot: &Snapshot) -> Vec<ClaimedLine> {
    let mut claimed = Vec::new();
    for job in &snapshot.jobs {
        let Some(c) = snapshot.classifications.get(&job.id) else {
            continue;
        };
        if c.matches.is_empty() {
            continue;
        }
        let label = format!(
            "run {} attempt {} job {} ({})",
            job.run_id.0, job.run_attempt, job.id.0, job.name
        );
        let sigs: Vec<String> = c.matches.iter().map(|m| m.signature.0.clone()).collect();
        for text in c
            .error_lines
            .iter()
            .map(|l| &l.text)
            .chain(c.matches.iter().map(|m| &m.text))
        {
            claimed.push(ClaimedLine {
                text: text.clone(),
                job: label.clone(),
                signatures: sigs.clone(),
            });
        }
    }
    claimed
}

/// Each draft to `DIR/<id>.toml` with `--output DIR`, else all of them on stdout.
fn write_drafts(dir: Option<&Path>, passed: &[(Draft, String)]) -> Result<(), CliError> {
    let Some(dir) = dir else {
        let mut out = String::new();
        for (draft, toml) in passed {
            out.push_str(&format!("# ---- {}.toml ----\n{toml}\n", draft.id));
        }
        return write_output(None, |w| w.write_all(out.as_bytes()));
    };
    std::fs::create_dir_all(dir)
        .map_err(|e| CliError::file(format!("cannot create {}: {e}", dir.display()), e))?;
    for (draft, toml) in passed {
        let path = dir.join(format!("{}.toml", draft.id));
        std::fs::write(&path, toml)
            .map_err(|e| CliError::file(format!("cannot write {}: {e}", path.display()), e))?;
    }
    Ok(())
}

/// How many drafts for how many jobs, and a note for each overlap, skipped group and draft
/// left out.
fn say_summary(
    args: &SuggestArgs,
    data: &ReportData,
    passed: &[(Draft, String)],
    skipped: &[Skipped],
    rejected: &[Rejected],
) {
    for line in below_min_jobs_notes(&data.unclassified, data.jobs_unclassified, args.min_jobs) {
        say!("flakestat: {line}");
    }
    let jobs: u64 = passed.iter().map(|(d, _)| d.jobs).sum();
    say!(
        "flakestat: {} draft signature(s) for {jobs} of {} unclassified job(s){}",
        passed.len(),
        data.jobs_unclassified,
        args.output
            .as_ref()
            .map(|d| format!(", written to {}", d.display()))
            .unwrap_or_default()
    );
    for (draft, _) in passed {
        if !draft.overlaps.is_empty() {
            say!(
                "flakestat: note: {} also matches {} job(s) existing signatures claim",
                draft.id,
                draft.overlaps.len()
            );
        }
    }
    for s in skipped {
        say!(
            "flakestat: note: no draft for group {} ({} jobs): {}",
            s.group,
            s.jobs,
            s.reason
        );
    }
    for (id, why) in rejected {
        say!(
            "flakestat: note: left out {id}: `signatures check` would fail: {}",
            terminal_line(why)
        );
    }
}

/// Why groups got no draft for being small: how many groups are below `--min-jobs`, the largest
/// of them, and the flag that would draft them. Said for every run that leaves some out, and
/// when there is nothing to draft at all.
fn below_min_jobs_notes(
    groups: &[crate::analysis::UnclassifiedGroup],
    unclassified_jobs: u64,
    min_jobs: u64,
) -> Vec<String> {
    if groups.is_empty() {
        return vec!["no draft: no unclassified job in the window".to_string()];
    }
    let small: Vec<u64> = groups
        .iter()
        .map(|g| g.jobs)
        .filter(|&j| j < min_jobs)
        .collect();
    let Some(&largest) = small.iter().max() else {
        return Vec::new();
    };
    let jobs: u64 = small.iter().sum();
    let subject = if small.len() == groups.len() {
        format!(
            "no group is big enough: the {unclassified_jobs} unclassified job(s) fall into {} group(s), each below --min-jobs {min_jobs}",
            groups.len()
        )
    } else {
        format!(
            "{} of {} group(s) ({jobs} job(s)) are below --min-jobs {min_jobs} and get no draft",
            small.len(),
            groups.len()
        )
    };
    vec![format!(
        "note: {subject} (the largest has {largest} job(s)); pass --min-jobs {largest} to draft {}",
        if small.len() == 1 {
            "it"
        } else if small.iter().all(|&j| j == largest) {
            "them"
        } else {
            "the largest of them"
        }
    )]
}

#[cfg(test)]
mod tests {
    use super::below_min_jobs_notes;
    use crate::analysis::UnclassifiedGroup;

    fn group(jobs: u64) -> UnclassifiedGroup {
        UnclassifiedGroup {
            key: format!("k{jobs}"),
            id: format!("g{jobs}"),
            lines: Vec::new(),
            jobs,
            runs: jobs,
            job_names: Vec::new(),
            cells: Vec::new(),
            first_seen: Default::default(),
            last_seen: Default::default(),
            examples: Vec::new(),
            samples: Vec::new(),
            tests: Default::default(),
        }
    }

    #[test]
    fn small_groups_are_counted_and_the_flag_named() {
        let all_small = below_min_jobs_notes(&[group(1), group(1), group(1)], 3, 2);
        assert_eq!(all_small.len(), 1);
        assert!(
            all_small[0]
                .contains("3 unclassified job(s) fall into 3 group(s), each below --min-jobs 2"),
            "{all_small:?}"
        );
        assert!(
            all_small[0].contains("pass --min-jobs 1 to draft them"),
            "{all_small:?}"
        );
        let some = below_min_jobs_notes(&[group(5), group(2), group(1)], 8, 3);
        assert!(
            some[0].contains("2 of 3 group(s) (3 job(s)) are below --min-jobs 3"),
            "{some:?}"
        );
        assert!(
            some[0].contains("pass --min-jobs 2 to draft the largest of them"),
            "{some:?}"
        );
        assert!(below_min_jobs_notes(&[group(5)], 5, 2).is_empty());
        assert!(below_min_jobs_notes(&[], 0, 2)[0].contains("no unclassified job"));
    }
}
