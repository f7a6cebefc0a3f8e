//! What failures cost in runner time: the durations (`completed_at − started_at`) of the failed
//! job executions, and of every job execution of the attempts that re-ran them, summed per runner
//! label group. A job without both timestamps (queued, cancelled before it started, stored
//! without them) has no duration: it is counted as unknown, never guessed.
//!
//! A label group is a job's `labels` joined with `, ` (`linux-amd64-gpu-a100-latest-1`); it is a
//! GPU runner when one of its labels matches a `[cost] gpu_labels` glob (default `*gpu*`).

use std::collections::{BTreeMap, BTreeSet};

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::Serialize;

use crate::model::{Job, JobId, RunId};

/// The label group of jobs whose labels are unknown.
pub const NO_LABELS: &str = "(no labels)";

/// `[cost]` in `flakestat.toml`.
#[derive(Debug, Clone)]
pub struct CostConfig {
    /// Globs over runner labels naming GPU runners.
    pub gpu_labels: Vec<String>,
    gpu: GlobSet,
    /// Price of a minute on a GPU runner.
    pub gpu_price_per_minute: Option<f64>,
    /// Price of a minute on any other runner.
    pub price_per_minute: Option<f64>,
}

impl Default for CostConfig {
    fn default() -> Self {
        CostConfig::new(vec!["*gpu*".to_string()], None, None)
            .expect("the default GPU label glob is valid")
    }
}

impl CostConfig {
    /// `Err` names the first glob that does not parse.
    pub fn new(
        gpu_labels: Vec<String>,
        gpu_price_per_minute: Option<f64>,
        price_per_minute: Option<f64>,
    ) -> Result<CostConfig, String> {
        let mut builder = GlobSetBuilder::new();
        for g in &gpu_labels {
            builder.add(Glob::new(g).map_err(|e| format!("{g:?}: {e}"))?);
        }
        Ok(CostConfig {
            gpu: builder.build().map_err(|e| e.to_string())?,
            gpu_labels,
            gpu_price_per_minute,
            price_per_minute,
        })
    }

    /// Whether a job asking for `labels` runs on a GPU runner.
    pub fn is_gpu(&self, labels: &[String]) -> bool {
        labels.iter().any(|l| self.gpu.is_match(l))
    }
}

/// Runner time of one label group, in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct LabelCost {
    pub job_seconds: u64,
    pub rerun_seconds: u64,
    pub gpu: bool,
}

/// Runner time lost to failures, in seconds.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Cost {
    /// Failed job executions.
    pub job_seconds: u64,
    /// Every job execution of the later attempts that re-ran them.
    pub rerun_seconds: u64,
    /// Of those, on GPU runners.
    pub gpu_job_seconds: u64,
    pub gpu_rerun_seconds: u64,
    /// Job executions that would count but have no duration (a timestamp is missing).
    pub jobs_unknown: u64,
    /// Label group → seconds.
    pub by_label: BTreeMap<String, LabelCost>,
    /// At the `[cost]` prices, when any is set (a runner without a price costs nothing).
    pub price: Option<f64>,
}

impl Cost {
    pub fn total_seconds(&self) -> u64 {
        self.job_seconds + self.rerun_seconds
    }

    pub fn gpu_seconds(&self) -> u64 {
        self.gpu_job_seconds + self.gpu_rerun_seconds
    }

    fn add(&mut self, job: &Job, rerun: bool, config: &CostConfig) {
        let Some(seconds) = duration_seconds(job) else {
            self.jobs_unknown += 1;
            return;
        };
        let gpu = config.is_gpu(&job.labels);
        let group = if job.labels.is_empty() {
            NO_LABELS.to_string()
        } else {
            job.labels.join(", ")
        };
        let label = self.by_label.entry(group).or_default();
        label.gpu = gpu;
        if rerun {
            self.rerun_seconds += seconds;
            label.rerun_seconds += seconds;
            if gpu {
                self.gpu_rerun_seconds += seconds;
            }
        } else {
            self.job_seconds += seconds;
            label.job_seconds += seconds;
            if gpu {
                self.gpu_job_seconds += seconds;
            }
        }
    }

    fn priced(mut self, config: &CostConfig) -> Cost {
        if config.gpu_price_per_minute.is_some() || config.price_per_minute.is_some() {
            let gpu = self.gpu_seconds() as f64 / 60.0 * config.gpu_price_per_minute.unwrap_or(0.0);
            let other = (self.total_seconds() - self.gpu_seconds()) as f64 / 60.0
                * config.price_per_minute.unwrap_or(0.0);
            self.price = Some(((gpu + other) * 100.0).round() / 100.0);
        }
        self
    }
}

/// `completed_at − started_at` in whole seconds; `None` without both (or if they disagree).
pub fn duration_seconds(job: &Job) -> Option<u64> {
    let (start, end) = (job.started_at?, job.completed_at?);
    u64::try_from((end - start).num_seconds()).ok()
}

/// The cost of `failed` job executions (by id) and of the re-runs of their runs: every job
/// execution of `jobs` in an attempt after the first one in which its run had a failed job.
pub fn cost_of(jobs: &[Job], failed: &BTreeSet<JobId>, config: &CostConfig) -> Cost {
    let mut first_failed: BTreeMap<RunId, u32> = BTreeMap::new();
    for job in jobs.iter().filter(|j| failed.contains(&j.id)) {
        let a = first_failed.entry(job.run_id).or_insert(job.run_attempt);
        *a = (*a).min(job.run_attempt);
    }
    let mut cost = Cost::default();
    for job in jobs {
        if failed.contains(&job.id) {
            cost.add(job, false, config);
        } else if first_failed
            .get(&job.run_id)
            .is_some_and(|a| job.run_attempt > *a)
        {
            cost.add(job, true, config);
        }
    }
    cost.priced(config)
}

#[cfg(test)]
mod tests {
    use chrono::{TimeDelta, TimeZone, Utc};

    use super::*;
    use crate::model::Sha;

    fn job(id: u64, run: u64, attempt: u32, minutes: Option<i64>, labels: &[&str]) -> Job {
        let t = Utc.with_ymd_and_hms(2026, 7, 1, 0, 0, 0).unwrap();
        Job {
            id: JobId(id),
            run_id: RunId(run),
            run_attempt: attempt,
            name: format!("job {id}"),
            status: "completed".into(),
            conclusion: Some("failure".into()),
            created_at: t,
            started_at: minutes.map(|_| t),
            completed_at: minutes.map(|m| t + TimeDelta::minutes(m)),
            html_url: None,
            head_sha: Sha::default(),
            labels: labels.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn failed_jobs_and_later_attempts_per_label() {
        let jobs = vec![
            job(1, 10, 1, Some(10), &["linux-gpu-t4"]),
            job(2, 10, 1, Some(3), &["linux-cpu16"]), // attempt 1, not failed: not counted
            job(3, 10, 2, Some(12), &["linux-gpu-t4"]),
            job(4, 10, 2, None, &["linux-gpu-t4"]),
            job(5, 20, 1, Some(7), &[]),
        ];
        let failed = BTreeSet::from([JobId(1), JobId(5)]);
        let config = CostConfig::new(vec!["*gpu*".into()], Some(1.0), Some(0.5)).unwrap();
        let cost = cost_of(&jobs, &failed, &config);
        assert_eq!(cost.job_seconds, 17 * 60);
        assert_eq!(cost.rerun_seconds, 12 * 60);
        assert_eq!(cost.gpu_job_seconds, 10 * 60);
        assert_eq!(cost.gpu_rerun_seconds, 12 * 60);
        assert_eq!(cost.jobs_unknown, 1);
        assert_eq!(cost.by_label["linux-gpu-t4"].rerun_seconds, 12 * 60);
        assert_eq!(cost.by_label[NO_LABELS].job_seconds, 7 * 60);
        assert!(!cost.by_label.contains_key("linux-cpu16"));
        assert_eq!(cost.price, Some(22.0 + 3.5));
    }

    #[test]
    fn no_price_without_a_configured_one() {
        let jobs = vec![job(1, 10, 1, Some(10), &["x"])];
        let cost = cost_of(&jobs, &BTreeSet::from([JobId(1)]), &CostConfig::default());
        assert_eq!(cost.price, None);
        assert_eq!(cost.gpu_seconds(), 0);
    }
}
