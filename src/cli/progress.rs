//! What a fetching command says on stderr while and after it works: progress bars (runs listed,
//! jobs fetched, logs downloaded) fed by the survey's `Progress` events, and the closing lines
//! (requests, logs, rate limit; the survey's cost against its minimum; the bisection's
//! requests). Hidden with `-q`; plain lines instead of bars when stderr is not a terminal.

use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::fetch::{
    AncestrySummary, GreenLogsFetch, OwnerListing, Progress, ProgressEvent, StatsSnapshot,
    SurveySummary,
};
use crate::model::Repo;

/// `-v`: the bisection's requests by kind.
pub(super) fn ancestry_line(a: &AncestrySummary) -> String {
    format!(
        "bisection: {} requests ({} for the default branch's history, {} compare for fork points, {} fork points already known, {} for suspects' changed files, {} listing PRs for fork runs)",
        a.requests(),
        a.mainline_requests,
        a.compare_requests,
        a.fork_points_known,
        a.files_requests,
        a.pull_list_requests
    )
}

/// `-v`: the survey's requests per kind against the minimum (docs/survey.md, "The minimum").
/// What `--green-logs` read, in one line (said only when it was asked).
pub(super) fn green_line(read: &[GreenLogsFetch]) -> String {
    let mut all = GreenLogsFetch::default();
    for g in read {
        all.unread += g.unread;
        all.sampled += g.sampled;
        all.requests += g.requests;
        all.bytes += g.bytes;
        all.read += g.read;
        all.unavailable += g.unavailable;
        all.with_retries += g.with_retries;
        all.quiet_runs_listed += g.quiet_runs_listed;
        all.jobs_requests += g.jobs_requests;
    }
    let mut line = format!(
        "green logs: {} read ({} with a test retried to a pass), {} unavailable, of {} sampled among {} green jobs not read before; {} requests, {}",
        all.read,
        all.with_retries,
        all.unavailable,
        all.sampled,
        all.unread,
        all.requests,
        human_bytes(all.bytes)
    );
    if all.quiet_runs_listed > 0 {
        line.push_str(&format!(
            "; the jobs of {} sampled runs of workflows that never failed listed ({} requests)",
            all.quiet_runs_listed, all.jobs_requests
        ));
    }
    line
}

pub(super) fn cost_line(summary: &SurveySummary) -> String {
    let cost = &summary.cost;
    let kinds: Vec<String> = cost
        .kinds()
        .iter()
        .map(|(name, k)| format!("{name} {}/{}", k.made, k.minimum))
        .collect();
    let mut line = format!(
        "survey requests against the minimum: {}; {}/{}",
        kinds.join(", "),
        cost.made(),
        cost.minimum()
    );
    if cost.minimum() > 0 {
        line.push_str(&format!(
            " ({:.3}×)",
            cost.made() as f64 / cost.minimum() as f64
        ));
    }
    if summary.runs_jobs_skipped > 0 {
        line.push_str(&format!(
            "; jobs of {} runs not needed (their workflow had nothing failed or re-run)",
            summary.runs_jobs_skipped
        ));
    }
    line
}

/// A survey over an owner's repositories: what the listing found and cost, and how many were
/// surveyed and skipped.
pub(super) fn listing_line(
    owner: &str,
    listing: &OwnerListing,
    surveyed: usize,
    skipped: usize,
) -> String {
    let listed = match listing.repos.len() {
        1 => "1 repository".to_string(),
        n => format!("{n} repositories"),
    };
    let mut line = format!(
        "{owner}: {listed} listed ({} requests, {} not modified), {surveyed} surveyed",
        listing.requests, listing.not_modified
    );
    if skipped > 0 {
        line.push_str(&format!(", {skipped} skipped"));
    }
    line
}

pub(super) fn closing_line(stats: &StatsSnapshot) -> String {
    let mut line = format!(
        "{} requests ({} not modified, {} retried), {} logs downloaded ({})",
        stats.requests,
        stats.not_modified,
        stats.retries,
        stats.logs_downloaded,
        human_bytes(stats.log_bytes)
    );
    match (stats.rate_limit_remaining, stats.rate_limit_limit) {
        (Some(left), Some(limit)) => line.push_str(&format!(", rate limit {left}/{limit} left")),
        (Some(left), None) => line.push_str(&format!(", rate limit {left} left")),
        _ => {}
    }
    if let Some(finished) = stats.finished_after_stop {
        line.push_str(&format!(
            ", stopped by GitHub's limit: {finished} downloads under way were finished and stored first"
        ));
    }
    line
}

/// What the closing line says of attempt archives and logs that were not their job's own;
/// `None` when no log needed an archive.
pub(super) fn archive_note(summary: &SurveySummary) -> Option<String> {
    if summary.logs_from_archive == 0 && summary.logs_not_own == 0 && summary.logs_unknown == 0 {
        return None;
    }
    let mut note = format!(
        "{} logs from {} attempt archives",
        summary.logs_from_archive, summary.archives_fetched
    );
    if summary.logs_not_own > 0 {
        note.push_str(&format!(
            " ({} served by GitHub for another attempt)",
            summary.logs_not_own
        ));
    }
    if summary.logs_unknown > 0 {
        note.push_str(&format!(", {} logs unknown", summary.logs_unknown));
    }
    Some(note)
}

/// The process's peak resident memory (Linux `VmHWM`), for `-v` and the benchmark.
pub(super) fn peak_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

pub(super) fn human_bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 30 => format!("{:.1} GiB", n as f64 / (1u64 << 30) as f64),
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / (1u64 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{n} B"),
    }
}

/// Progress bars on stderr: runs listed, jobs fetched, logs downloaded. Hidden when stderr is
/// not a terminal or with `-q`.
pub(super) struct Bars {
    visible: bool,
    quiet: bool,
    verbose: u8,
    multi: MultiProgress,
    runs: ProgressBar,
    jobs: ProgressBar,
    logs: ProgressBar,
    /// The repository being surveyed, when a survey covers several (`pipeline::scope`).
    repo: Mutex<Option<String>>,
}

impl Bars {
    /// The bars a fetching command draws: on stderr when it is a terminal, never with `-q`.
    pub(super) fn for_command(global: &super::GlobalArgs) -> Arc<Bars> {
        let visible = !global.quiet && std::io::stderr().is_terminal();
        Arc::new(Bars::new(visible, global.quiet, global.verbose))
    }

    pub(super) fn new(visible: bool, quiet: bool, verbose: u8) -> Bars {
        let target = if visible {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        let multi = MultiProgress::with_draw_target(target);
        let spinner = ProgressStyle::with_template("{spinner} {prefix:>5} {pos} listed {msg}")
            .expect("valid template");
        let bar = ProgressStyle::with_template(
            "{spinner} {prefix:>5} [{bar:30}] {pos}/{len} eta {eta} {msg}",
        )
        .expect("valid template")
        .progress_chars("=> ");
        let runs = multi.add(
            ProgressBar::new_spinner()
                .with_style(spinner)
                .with_prefix("runs"),
        );
        let jobs = multi.add(
            ProgressBar::new(0)
                .with_style(bar.clone())
                .with_prefix("jobs"),
        );
        let logs = multi.add(ProgressBar::new(0).with_style(bar).with_prefix("logs"));
        if visible {
            runs.enable_steady_tick(Duration::from_millis(120));
        }
        Bars {
            visible,
            quiet,
            verbose,
            multi,
            runs,
            jobs,
            logs,
            repo: Mutex::new(None),
        }
    }

    /// A survey over several repositories moves on to `repo` (`i` of `n`): said above the bars
    /// (or with -v), and phases name it from here on.
    pub(super) fn start_repo(&self, repo: &Repo, i: usize, n: usize) {
        *self.repo.lock().expect("bars lock") = Some(repo.to_string());
        self.runs.set_message(format!("({repo}, {i} of {n})"));
        if self.visible || self.verbose >= 1 {
            self.say(format!("flakestat: surveying {repo} ({i} of {n})"));
        }
    }

    /// A phase's label, with the repository when several are surveyed.
    fn phase(&self, phase: &str) -> String {
        match self.repo.lock().expect("bars lock").as_deref() {
            Some(repo) => format!("{repo}: {phase}"),
            None => phase.to_string(),
        }
    }

    /// A line above the bars, or on plain stderr when they are hidden.
    pub(super) fn say(&self, line: String) {
        // Notes quote names, URLs and answers from outside.
        let line = crate::report::sanitize::terminal(&line);
        if self.visible {
            let _ = self.multi.println(line);
        } else if !self.quiet {
            say!("{line}");
        }
    }

    pub(super) fn finish(&self) {
        for bar in [&self.runs, &self.jobs, &self.logs] {
            bar.finish_and_clear();
        }
        let _ = self.multi.clear();
    }
}

impl Progress for Bars {
    fn event(&self, event: ProgressEvent) {
        match event {
            ProgressEvent::RunsListed(n) => self.runs.set_position(n),
            ProgressEvent::JobsQueued(n) => self.jobs.inc_length(n),
            ProgressEvent::JobsDone => self.jobs.inc(1),
            ProgressEvent::LogsQueued(n) => self.logs.inc_length(n),
            ProgressEvent::LogDone { bytes } => {
                self.logs.inc(1);
                if bytes > 0 {
                    self.logs.set_message(format!("+{}", human_bytes(bytes)));
                }
            }
            ProgressEvent::Waiting { until, why } => {
                let text = format!("{why}: waiting until {} UTC", until.format("%H:%M:%S"));
                if self.visible {
                    self.runs.set_message(format!("({text})"));
                } else {
                    self.say(format!("flakestat: {text}"));
                }
            }
            ProgressEvent::Phase(phase) => {
                let phase = self.phase(phase);
                self.runs.set_message(format!("({phase})"));
                if !self.visible && self.verbose >= 1 {
                    self.say(format!("flakestat: {phase}"));
                }
            }
            ProgressEvent::Note(note) => self.say(format!("flakestat: {note}")),
            ProgressEvent::LogTooLarge { what, limit, kept } => self.say(match kept {
                Some(kept) => format!(
                    "flakestat: {what} is larger than --max-log-size ({limit} bytes): only its first {kept} bytes were downloaded, stored and classified"
                ),
                None => format!(
                    "flakestat: {what} is larger than --max-log-size ({limit} bytes): not read"
                ),
            }),
            ProgressEvent::Detail(note) => {
                if self.verbose >= 1 {
                    self.say(format!("flakestat: {note}"));
                }
            }
            ProgressEvent::Request { status, url } => {
                if self.verbose >= 2 {
                    self.say(format!("flakestat: {status} GET {url}"));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_closing_line_says_requests_logs_bytes_and_budget() {
        let stats = StatsSnapshot {
            requests: 120,
            not_modified: 10,
            retries: 2,
            logs_downloaded: 7,
            log_bytes: 3 << 20,
            rate_limit_remaining: Some(4880),
            rate_limit_limit: Some(5000),
            finished_after_stop: None,
        };
        assert_eq!(
            closing_line(&stats),
            "120 requests (10 not modified, 2 retried), 7 logs downloaded (3.0 MiB), rate limit 4880/5000 left"
        );
        let stopped = StatsSnapshot {
            rate_limit_remaining: Some(0),
            finished_after_stop: Some(3),
            ..stats
        };
        assert_eq!(
            closing_line(&stopped),
            "120 requests (10 not modified, 2 retried), 7 logs downloaded (3.0 MiB), rate limit 0/5000 left, stopped by GitHub's limit: 3 downloads under way were finished and stored first"
        );
    }
}
