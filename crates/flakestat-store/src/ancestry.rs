//! Commit ancestry for the bisection: the default branch's history (`mainline`) and, per head
//! sha of a run on another branch, the default-branch commit it forked from (`fork_points`).
//!
//! Both are facts about immutable commits: a fork point once asked is kept forever and never
//! asked again (an unanswerable one, such as a head GitHub no longer knows, is kept as unknown
//! for the same reason). Which stretches of the mainline were listed is kept in `windows` under
//! the scope `mainline <branch>`, so a repeat survey lists only what it has not seen.

use std::collections::{BTreeMap, BTreeSet};

use super::{StoreError, from_json, from_secs, secs, to_json};
use crate::Store;
use crate::db::{Tx, params};
use flakestat_core::model::{MainlineCommit, Repo, Sha, Timestamp};

/// The `windows` scope under which listed stretches of `branch`'s history are recorded.
pub fn mainline_scope(branch: &str) -> String {
    format!("mainline {branch}")
}

/// A mainline commit, added once; a title missing from one stored as a bare fork point is
/// filled in.
const INSERT_MAINLINE: &str = "
    INSERT INTO mainline (repo_id, sha, committed_at, title) VALUES (?1, ?2, ?3, ?4)
    ON CONFLICT (repo_id, sha) DO UPDATE SET title = excluded.title
    WHERE mainline.title = '' AND excluded.title != ''";

impl Store {
    /// Adds commits of the default branch's history (already known ones are kept; a title
    /// missing from one stored as a bare fork point is filled in).
    pub fn store_mainline(
        &mut self,
        repo: &Repo,
        commits: &[MainlineCommit],
    ) -> Result<(), StoreError> {
        self.transaction(Tx::Write, |db| {
            let repo_id = db.ensure_repo(repo)?;
            for c in commits {
                db.execute(
                    INSERT_MAINLINE,
                    params![repo_id, &c.sha.0, secs(c.committed_at), &c.title],
                )?;
            }
            Ok(())
        })
    }

    /// The default branch's history the store knows, committed before `until`, oldest first
    /// (ties in the order first stored).
    pub fn load_mainline(
        &self,
        repo: &Repo,
        until: Timestamp,
    ) -> Result<Vec<MainlineCommit>, StoreError> {
        let repo_id = self.repo_key(repo)?;
        let sql = format!(
            "SELECT sha, committed_at, title, files FROM mainline
             WHERE repo_id = ?1 AND committed_at <= ?2 ORDER BY committed_at, {}",
            self.dialect().stored_order()
        );
        self.query_map(&sql, params![repo_id, secs(until)], |r| {
            Ok(MainlineCommit {
                sha: Sha(r.get(0)?),
                committed_at: from_secs(r.get(1)?),
                title: r.get(2)?,
                files: r
                    .get::<Option<String>>(3)?
                    .as_deref()
                    .map(from_json)
                    .transpose()?,
            })
        })
    }

    /// Stores the parents of listed default-branch commits (first parent first).
    pub fn store_parents(
        &mut self,
        repo: &Repo,
        parents: &[(Sha, Vec<Sha>)],
    ) -> Result<(), StoreError> {
        self.transaction(Tx::Write, |db| {
            let repo_id = db.ensure_repo(repo)?;
            for (sha, ps) in parents {
                db.execute(
                    "UPDATE mainline SET parents = ?1 WHERE repo_id = ?2 AND sha = ?3",
                    params![to_json(ps), repo_id, &sha.0],
                )?;
            }
            Ok(())
        })
    }

    /// Sha → parents, for the mainline commits whose parents are known.
    pub fn load_parents(&self, repo: &Repo) -> Result<BTreeMap<Sha, Vec<Sha>>, StoreError> {
        let repo_id = self.repo_key(repo)?;
        self.query_map(
            "SELECT sha, parents FROM mainline WHERE repo_id = ?1 AND parents IS NOT NULL",
            params![repo_id],
            |r| Ok((Sha(r.get(0)?), from_json(&r.get::<String>(1)?)?)),
        )
    }

    /// Stores the files a default-branch commit changed.
    pub fn store_commit_files(
        &mut self,
        repo: &Repo,
        sha: &Sha,
        files: &[String],
    ) -> Result<(), StoreError> {
        self.transaction(Tx::Write, |db| {
            let repo_id = db.ensure_repo(repo)?;
            db.execute(
                "UPDATE mainline SET files = ?1 WHERE repo_id = ?2 AND sha = ?3",
                params![to_json(&files), repo_id, &sha.0],
            )?;
            Ok(())
        })
    }

    /// Records the fork point of `head` (the merge base with the default branch, itself a
    /// mainline commit), or that it cannot be known (`None`).
    pub fn store_fork_point(
        &mut self,
        repo: &Repo,
        head: &Sha,
        fork: Option<&MainlineCommit>,
    ) -> Result<(), StoreError> {
        self.transaction(Tx::Write, |db| {
            let repo_id = db.ensure_repo(repo)?;
            if let Some(f) = fork {
                db.execute(
                    INSERT_MAINLINE,
                    params![repo_id, &f.sha.0, secs(f.committed_at), &f.title],
                )?;
            }
            db.execute(
                "INSERT INTO fork_points (repo_id, head_sha, fork_sha) VALUES (?1, ?2, ?3)
                 ON CONFLICT (repo_id, head_sha) DO UPDATE SET fork_sha = excluded.fork_sha",
                params![repo_id, &head.0, fork.map(|f| &f.sha.0)],
            )?;
            Ok(())
        })
    }

    /// Head sha → fork point, for every head whose fork point is known.
    pub fn load_fork_points(&self, repo: &Repo) -> Result<BTreeMap<Sha, Sha>, StoreError> {
        let repo_id = self.repo_key(repo)?;
        self.query_map(
            "SELECT head_sha, fork_sha FROM fork_points WHERE repo_id = ?1 AND fork_sha IS NOT NULL",
            params![repo_id],
            |r| Ok((Sha(r.get(0)?), Sha(r.get(1)?))),
        )
    }

    /// Every head sha already asked about, answered or not: never asked again.
    pub fn asked_fork_points(&self, repo: &Repo) -> Result<BTreeSet<Sha>, StoreError> {
        let repo_id = self.repo_key(repo)?;
        self.query_map(
            "SELECT head_sha FROM fork_points WHERE repo_id = ?1",
            params![repo_id],
            |r| Ok(Sha(r.get(0)?)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn commit(n: u8, at: &str) -> MainlineCommit {
        MainlineCommit {
            sha: Sha(format!("{n:02x}").repeat(20)),
            committed_at: t(at),
            title: format!("commit {n}"),
            files: None,
        }
    }

    #[test]
    fn ancestry_is_kept_and_reaches_the_snapshot() {
        for (engine, _dir, mut store) in crate::tests::engines() {
            eprintln!("engine: {engine}");
            ancestry_is_kept_on(&mut store);
        }
    }

    fn ancestry_is_kept_on(store: &mut crate::Store) {
        let repo = Repo::parse("NVIDIA/cuda-python").unwrap();
        store.store_repo(&repo, "main").unwrap();
        let (a, b, c) = (
            commit(1, "2026-06-01T00:00:00Z"),
            commit(2, "2026-06-02T00:00:00Z"),
            commit(3, "2026-06-03T00:00:00Z"),
        );
        // Newest first, as GitHub lists them, and one twice: stored once, oldest first.
        store
            .store_mainline(&repo, &[c.clone(), b.clone(), b.clone()])
            .unwrap();
        // A fork point older than the listed history joins the mainline, in date order.
        let (side, lost) = (Sha("e".repeat(40)), Sha("f".repeat(40)));
        store.store_fork_point(&repo, &side, Some(&a)).unwrap();
        store.store_fork_point(&repo, &lost, None).unwrap();
        assert_eq!(
            store
                .load_mainline(&repo, t("2026-06-02T12:00:00Z"))
                .unwrap(),
            [a.clone(), b.clone()]
        );
        assert_eq!(
            store.load_fork_points(&repo).unwrap(),
            BTreeMap::from([(side.clone(), a.sha.clone())])
        );
        // An unanswerable head is never asked again either.
        assert_eq!(
            store.asked_fork_points(&repo).unwrap(),
            BTreeSet::from([side.clone(), lost])
        );
        let snapshot = store
            .load_snapshot(
                &repo,
                t("2026-06-15T00:00:00Z"),
                t("2026-07-01T00:00:00Z"),
                "fp",
            )
            .unwrap();
        assert_eq!(snapshot.mainline, [a.clone(), b.clone(), c.clone()]);
        assert_eq!(snapshot.fork_points.len(), 1);
        assert!(snapshot.parents.is_empty(), "parents unknown until listed");
        // Parents, once listed, reach the snapshot (first parent first).
        store
            .store_parents(
                &repo,
                &[
                    (c.sha.clone(), vec![b.sha.clone(), side.clone()]),
                    (b.sha.clone(), vec![a.sha.clone()]),
                ],
            )
            .unwrap();
        let parents = store.load_parents(&repo).unwrap();
        assert_eq!(parents[&c.sha], [b.sha.clone(), side.clone()]);
        assert_eq!(parents.len(), 2);
        // A direct push's changed files, once fetched, are kept.
        let files = vec!["cuda/core.py".to_string()];
        store.store_commit_files(&repo, &c.sha, &files).unwrap();
        let got = store
            .load_mainline(&repo, t("2026-06-04T00:00:00Z"))
            .unwrap();
        assert_eq!(got[2].files.as_ref(), Some(&files));
        assert_eq!(got[1].files, None);
    }
}
