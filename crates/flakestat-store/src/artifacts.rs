//! JUnit reports read from a run's artifacts (`survey --junit-artifacts GLOB`, schema version 8):
//! what became of each matching artifact, the job it was matched to, and the tests its reports
//! name; and which runs were listed for which pattern, so a repeat survey asks GitHub nothing.
//!
//! Only the tests are kept (the zip is not: a report is re-read by downloading it again, and
//! what the report said does not depend on the signatures). The snapshot puts an artifact's
//! tests in place of the tests parsed from the same job's log (`Store::load_snapshot`): a
//! runner's own report beats reading its console output.

use std::collections::{BTreeMap, BTreeSet};

use super::StoreError;
use crate::Store;
use crate::db::{Tx, id_list, params};
use flakestat_core::model::{JobId, RunId, TestOutcomes};

/// What became of one matching artifact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ArtifactStatus {
    /// Downloaded and read: its tests are kept.
    Stored,
    /// Past retention (`expired` in the listing, or 410 on download).
    Expired,
    /// Refused: over a cap (size, entries, ratio) or not a readable zip; the note says which.
    Refused,
    /// The download could not be had (a redirect not followed, 404).
    Unavailable,
}

impl ArtifactStatus {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ArtifactStatus::Stored => "stored",
            ArtifactStatus::Expired => "expired",
            ArtifactStatus::Refused => "refused",
            ArtifactStatus::Unavailable => "unavailable",
        }
    }

    pub(crate) fn parse(word: &str) -> Result<ArtifactStatus, StoreError> {
        Ok(match word {
            "stored" => ArtifactStatus::Stored,
            "expired" => ArtifactStatus::Expired,
            "refused" => ArtifactStatus::Refused,
            "unavailable" => ArtifactStatus::Unavailable,
            other => {
                return Err(StoreError::Corrupt(format!("artifact status {other:?}")));
            }
        })
    }
}

/// One matching artifact of a run, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactRecord {
    /// GitHub's artifact id.
    pub id: u64,
    pub run: RunId,
    pub name: String,
    pub status: ArtifactStatus,
    /// The job that uploaded it, when that could be told; `None`: unknown (its tests are kept
    /// but given to no job).
    pub job: Option<JobId>,
    /// The tests its JUnit reports name (empty unless `Stored`).
    pub tests: TestOutcomes,
    /// Why it was refused or is unavailable; empty otherwise.
    pub note: String,
}

/// The `json` column: the tests and the note.
#[derive(serde::Serialize, serde::Deserialize, Default)]
pub(crate) struct ArtifactJson {
    #[serde(default)]
    pub tests: TestOutcomes,
    #[serde(default)]
    pub note: String,
}

pub(crate) fn artifact_json(record: &ArtifactRecord) -> String {
    serde_json::to_string(&ArtifactJson {
        tests: record.tests.clone(),
        note: record.note.clone(),
    })
    .expect("model types serialize")
}

pub(crate) fn parse_artifact_json(text: &str) -> Result<ArtifactJson, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt(e.to_string()))
}

impl Store {
    /// Stores a run's matching artifacts and records that the run was listed for `pattern`, in
    /// one transaction: a survey stopped half-way lists the run again.
    pub fn store_artifacts(
        &mut self,
        run: RunId,
        pattern: &str,
        artifacts: &[ArtifactRecord],
    ) -> Result<(), StoreError> {
        self.transaction(Tx::Write, |db| {
            for a in artifacts {
                db.execute(
                    "INSERT INTO artifacts (id, run_id, name, status, job_id, json)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                     ON CONFLICT (id) DO UPDATE SET run_id = excluded.run_id,
                        name = excluded.name, status = excluded.status,
                        job_id = excluded.job_id, json = excluded.json",
                    params![
                        a.id,
                        a.run.0,
                        &a.name,
                        a.status.as_str(),
                        a.job.map(|j| j.0),
                        artifact_json(a)
                    ],
                )?;
            }
            db.execute(
                "INSERT INTO artifact_listings (run_id, pattern) VALUES (?1, ?2)
                 ON CONFLICT DO NOTHING",
                params![run.0, pattern],
            )?;
            Ok(())
        })
    }

    /// Whether the run's artifacts were listed for `pattern` before.
    pub fn artifacts_listed(&self, run: RunId, pattern: &str) -> Result<bool, StoreError> {
        Ok(self
            .query_row(
                "SELECT 1 FROM artifact_listings WHERE run_id = ?1 AND pattern = ?2",
                params![run.0, pattern],
                |_| Ok(()),
            )?
            .is_some())
    }

    /// The ids of the run's artifacts whose outcome is stored, whatever it was.
    pub fn artifact_ids(&self, run: RunId) -> Result<BTreeSet<u64>, StoreError> {
        self.query_map(
            "SELECT id FROM artifacts WHERE run_id = ?1",
            params![run.0],
            |r| r.get(0),
        )
    }

    /// A run's stored artifacts, by id.
    pub fn load_artifacts(&self, run: RunId) -> Result<Vec<ArtifactRecord>, StoreError> {
        self.query_map(
            "SELECT id, name, status, job_id, json FROM artifacts WHERE run_id = ?1 ORDER BY id",
            params![run.0],
            |r| {
                let extra = parse_artifact_json(&r.get::<String>(4)?)?;
                Ok(ArtifactRecord {
                    id: r.get(0)?,
                    run,
                    name: r.get(1)?,
                    status: ArtifactStatus::parse(&r.get::<String>(2)?)?,
                    job: r.get::<Option<u64>>(3)?.map(JobId),
                    tests: extra.tests,
                    note: extra.note,
                })
            },
        )
    }

    /// The tests the stored JUnit artifacts give these jobs (several artifacts of one job
    /// merged, by id); a job absent from the map has none.
    pub fn junit_tests(&self, jobs: &[JobId]) -> Result<BTreeMap<JobId, TestOutcomes>, StoreError> {
        let ids: Vec<u64> = jobs.iter().map(|j| j.0).collect();
        let mut out: BTreeMap<JobId, TestOutcomes> = BTreeMap::new();
        for ids in id_list(&ids) {
            let sql = format!(
                "SELECT job_id, json FROM artifacts
                 WHERE job_id IN ({ids}) AND status = 'stored' ORDER BY job_id, id"
            );
            for r in self.query(&sql, params![])? {
                let extra = parse_artifact_json(&r.get::<String>(1)?)?;
                out.entry(JobId(r.get(0)?)).or_default().merge(extra.tests);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::engines;
    use flakestat_core::model::TestRecord;

    fn record(id: &str) -> TestRecord {
        TestRecord {
            id: id.into(),
            family: id.into(),
            runner: "junit".into(),
            line: 0,
        }
    }

    /// A run's artifacts and its listing are kept on every engine; a job's tests are the merge of
    /// its stored artifacts; a refused or expired artifact gives no tests.
    #[test]
    fn artifacts_are_kept_per_run_and_merged_per_job() {
        for (engine, _dir, mut store) in engines() {
            let run = RunId(9);
            let job = JobId(90);
            let a = ArtifactRecord {
                id: 1,
                run,
                name: "junit-go".into(),
                status: ArtifactStatus::Stored,
                job: Some(job),
                tests: TestOutcomes {
                    failed: vec![record("pkg.TestA")],
                    flaky: vec![record("pkg.TestB")],
                },
                note: String::new(),
            };
            let b = ArtifactRecord {
                id: 2,
                name: "junit-go-2".into(),
                tests: TestOutcomes {
                    failed: vec![record("pkg.TestB")],
                    flaky: vec![record("pkg.TestC")],
                },
                ..a.clone()
            };
            let bomb = ArtifactRecord {
                id: 3,
                name: "junit-bomb".into(),
                status: ArtifactStatus::Refused,
                tests: TestOutcomes {
                    failed: vec![record("never.Counted")],
                    flaky: vec![],
                },
                note: "too large".into(),
                ..a.clone()
            };
            assert!(!store.artifacts_listed(run, "junit-*").unwrap(), "{engine}");
            store
                .store_artifacts(run, "junit-*", &[a.clone(), b, bomb.clone()])
                .unwrap();
            assert!(store.artifacts_listed(run, "junit-*").unwrap(), "{engine}");
            assert!(!store.artifacts_listed(run, "other").unwrap(), "{engine}");
            assert_eq!(
                store.artifact_ids(run).unwrap(),
                BTreeSet::from([1, 2, 3]),
                "{engine}"
            );
            let loaded = store.load_artifacts(run).unwrap();
            assert_eq!(loaded[0], a, "{engine}");
            assert_eq!(loaded[2], bomb, "{engine}");
            let tests = store.junit_tests(&[job, JobId(91)]).unwrap();
            assert_eq!(tests.len(), 1, "{engine}");
            let ids = |r: &[TestRecord]| r.iter().map(|t| t.id.clone()).collect::<Vec<_>>();
            assert_eq!(
                ids(&tests[&job].failed),
                ["pkg.TestA", "pkg.TestB"],
                "{engine}"
            );
            assert_eq!(ids(&tests[&job].flaky), ["pkg.TestC"], "{engine}");
        }
    }
}
