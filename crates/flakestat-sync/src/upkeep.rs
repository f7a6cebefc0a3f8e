//! What `serve` runs between deliveries: one delivered run brought into the store through the
//! survey's own per-run path (`Session::ingest_one`, `Ingest`), and the resync (the survey of
//! the recent window, then its ancestry rounds), each followed by the sampled green logs
//! (`--green-logs`). No lock is taken: a survey or nightly writes the same store meanwhile,
//! each write a short transaction of its own. The webhook receiver (flakestat-serve), which
//! repositories and which clock, and anything said or posted after a run (serve's PR hook)
//! stay with the caller.

use std::sync::Arc;

use chrono::TimeDelta;

use super::{
    AncestryPlan, Classifier, FetchError, GreenLogs, GreenLogsFetch, Session, SurveyPlan,
    fetch_ancestry, prs_of_runs,
};
use flakestat_core::analysis::AnalysisConfig;
use flakestat_core::model::{Repo, Run, RunId, SignatureInfo, Timestamp};
use flakestat_store::StoreHandle;

/// A store kept up to date run by run, with what each step needs.
pub struct Upkeep {
    pub session: Session,
    pub store: StoreHandle,
    /// Classifies each log as it arrives; stored classifications are keyed by its fingerprint.
    pub classifier: Arc<dyn Classifier>,
    /// The signatures' descriptions, for the bisection's needs.
    pub signatures: Vec<SignatureInfo>,
    pub analysis: AnalysisConfig,
    /// `--green-logs`: green logs read after each ingest and resync.
    pub green: GreenLogs,
}

/// What one step fetched, from the session's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Fetched {
    pub logs_fetched: u64,
    /// GitHub's rate limit left after it, when known.
    pub rate_limit_remaining: Option<u64>,
}

impl Upkeep {
    /// One run of `repo` (every attempt's jobs, failed jobs' logs) through the survey's per-run
    /// path; with its creation time, its own green jobs' sampled logs too. No window is recorded
    /// as listed: the run counts as outside what a listing covered until a resync lists its
    /// window.
    pub fn ingest(
        &self,
        repo: &Repo,
        run: RunId,
        run_created_at: Option<Timestamp>,
    ) -> Result<Fetched, FetchError> {
        let before = self.session.stats();
        self.session
            .ingest_one(self.store.clone(), self.classifier.clone(), repo, run)?;
        if let Some(created) = run_created_at {
            // The run's own green jobs: its creation second is its window.
            let window_end = created + TimeDelta::seconds(1);
            self.read_green_logs(repo, created, window_end, false)?;
        }
        Ok(self.fetched_since(before))
    }

    /// The survey of the `window` up to `until` for each of `repos`, each followed by what the
    /// bisection needs and the sampled green logs. A window longer than the calendar reaches
    /// back to its start.
    pub fn resync(
        &self,
        repos: &[Repo],
        until: Timestamp,
        window: TimeDelta,
    ) -> Result<Fetched, FetchError> {
        let since = until
            .checked_sub_signed(window)
            .unwrap_or(chrono::DateTime::<chrono::Utc>::MIN_UTC);
        let mut total = Fetched::default();
        for repo in repos {
            let done = self.survey(repo, since, until)?;
            total.logs_fetched += done.logs_fetched;
            total.rate_limit_remaining = done.rate_limit_remaining;
        }
        Ok(total)
    }

    /// The survey of `[since, until)` for `repo`, then what the bisection needs after it.
    fn survey(
        &self,
        repo: &Repo,
        since: Timestamp,
        until: Timestamp,
    ) -> Result<Fetched, FetchError> {
        let before = self.session.stats();
        let plan = SurveyPlan {
            repo: repo.clone(),
            since,
            until,
            workflows: Vec::new(),
            branch: None,
            event: None,
            interruptible: false,
        };
        let config = &self.analysis;
        let wanted = |runs: &[Run], default_branch: &str| prs_of_runs(runs, default_branch, config);
        let summary =
            self.session
                .survey(self.store.clone(), self.classifier.clone(), &plan, &wanted)?;
        let repo = summary.repo.clone().unwrap_or_else(|| repo.clone());
        let fingerprint = self.classifier.fingerprint();
        let plan = AncestryPlan {
            repo: &repo,
            since,
            until,
            fingerprint: &fingerprint,
            signatures: &self.signatures,
            config: &self.analysis,
        };
        fetch_ancestry(&self.session, &self.store, &plan)?;
        self.read_green_logs(&repo, since, until, true)?;
        Ok(self.fetched_since(before))
    }

    /// `--green-logs`: the sampled green logs of the runs created in `[since, until)` not read
    /// yet (nothing at rate 0); with `list_quiet` (a resync, which is a survey) the jobs of the
    /// sampled runs of never-failing workflows are listed first, as a survey's are (a delivered
    /// run's jobs are stored already).
    fn read_green_logs(
        &self,
        repo: &Repo,
        since: Timestamp,
        until: Timestamp,
        list_quiet: bool,
    ) -> Result<(), FetchError> {
        if self.green.rate <= 0.0 {
            return Ok(());
        }
        let mut read = GreenLogsFetch::default();
        let window = (since, until);
        let (store, green) = (&self.store, self.green);
        if list_quiet {
            let classifier = self.classifier.clone();
            self.session.fetch_green_outcomes_listing_quiet(
                store, classifier, repo, window, green, &mut read,
            )
        } else {
            self.session
                .fetch_green_outcomes(store, repo, window, green, &mut read)
        }
    }

    fn fetched_since(&self, before: crate::StatsSnapshot) -> Fetched {
        let after = self.session.stats();
        Fetched {
            logs_fetched: after.logs_downloaded - before.logs_downloaded,
            rate_limit_remaining: after.rate_limit_remaining,
        }
    }
}

/// Whether a failed step may pass if tried again later (a queue's worker retries it): a limit,
/// the network or the store may; a refusal or a missing repository will not.
pub fn may_pass(e: &FetchError) -> bool {
    matches!(
        e,
        FetchError::RateLimited { .. }
            | FetchError::SecondaryLimit(_)
            | FetchError::Network(_)
            | FetchError::Store(_)
            | FetchError::Spool(_)
            | FetchError::Interrupted
            | FetchError::Unexpected { .. }
    )
}
