//! Where each job ran (schema version 10): the runner the jobs listing names (columns of
//! `jobs`, written by `store_jobs_with_runners`) and what a stored log's preamble says of the
//! machine (`log_preambles`, one row per job and parser version). Both are read into
//! `Snapshot::placements`.

use std::collections::BTreeMap;

use super::StoreError;
use crate::Store;
use crate::db::{Row, Tx, params};
use flakestat_core::model::{JobId, Placement, Preamble, Repo, Runner};

impl Store {
    /// Stored logs of `repo` whose preamble has not been read by parser `version` (or a later
    /// one): new logs, and every log of a store older than the parser.
    pub fn preambles_to_read(&self, repo: &Repo, version: u32) -> Result<Vec<JobId>, StoreError> {
        let repo_id = self.repo_key(repo)?;
        self.query_map(
            "SELECT logs.job_id FROM logs JOIN jobs ON jobs.id = logs.job_id
             JOIN runs ON runs.id = jobs.run_id
             LEFT JOIN log_preambles p ON p.job_id = logs.job_id AND p.version >= ?2
             WHERE runs.repo_id = ?1 AND logs.status = 'stored' AND p.job_id IS NULL
             ORDER BY logs.job_id",
            params![repo_id, version],
            |r| Ok(JobId(r.get(0)?)),
        )
    }

    /// Stores what parser `version` read of one job's log, replacing an older reading.
    pub fn store_preamble(
        &mut self,
        job: JobId,
        version: u32,
        preamble: &Preamble,
    ) -> Result<(), StoreError> {
        let p = preamble.clone();
        self.transaction(Tx::Write, |db| {
            db.execute(
                "INSERT INTO log_preambles (job_id, version, runner_version, runner_name,
                    machine, image, image_version, driver, gpu)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
                 ON CONFLICT (job_id) DO UPDATE SET version = excluded.version,
                    runner_version = excluded.runner_version,
                    runner_name = excluded.runner_name, machine = excluded.machine,
                    image = excluded.image, image_version = excluded.image_version,
                    driver = excluded.driver, gpu = excluded.gpu",
                params![
                    job.0,
                    version,
                    p.runner_version.clone(),
                    p.runner_name.clone(),
                    p.machine.clone(),
                    p.image.clone(),
                    p.image_version.clone(),
                    p.driver.clone(),
                    p.gpu.clone()
                ],
            )?;
            Ok(())
        })
    }

    /// The placement of every job of the repository's runs created in `[from, to)` (seconds)
    /// that has a runner or a read preamble.
    pub(crate) fn load_placements(
        &self,
        repo_id: i64,
        from: i64,
        to: i64,
    ) -> Result<BTreeMap<JobId, Placement>, StoreError> {
        let mut out = BTreeMap::new();
        for r in self.query(
            "SELECT jobs.id, jobs.runner_name, jobs.runner_group_name, p.job_id,
                p.runner_version, p.runner_name, p.machine, p.image, p.image_version,
                p.driver, p.gpu
             FROM jobs JOIN runs ON runs.id = jobs.run_id
             LEFT JOIN log_preambles p ON p.job_id = jobs.id
             WHERE runs.repo_id = ?1 AND runs.created_at >= ?2 AND runs.created_at < ?3
               AND (jobs.runner_name IS NOT NULL OR jobs.runner_group_name IS NOT NULL
                    OR p.job_id IS NOT NULL)
             ORDER BY jobs.id",
            params![repo_id, from, to],
        )? {
            let text = |i: usize| -> Result<Option<String>, StoreError> { r.get(i) };
            let preamble = match r.get::<Option<i64>>(3)? {
                Some(_) => Some(Preamble {
                    runner_version: text(4)?,
                    runner_name: text(5)?,
                    machine: text(6)?,
                    image: text(7)?,
                    image_version: text(8)?,
                    driver: text(9)?,
                    gpu: text(10)?,
                }),
                None => None,
            };
            let placement = Placement {
                runner: Runner {
                    name: text(1)?,
                    group: text(2)?,
                },
                preamble,
            };
            out.insert(JobId(Row::get(&r, 0)?), placement);
        }
        Ok(out)
    }
}
