//! The repositories the store holds for an owner, for `report --org` and `survey --org
//! --offline` (no network): those a survey recorded under that owner, compared without case as
//! GitHub does. A row renamed away (`name#id`, see `store_repo_identity`) is no repository any
//! `--repo` can name: left out.
//!
//! Both engines return them in the same order, sorted here rather than by SQL (collations
//! differ between SQLite and a PostgreSQL server): by name without ASCII case, then as spelled.

use super::StoreError;
use crate::Store;
use crate::db::params;
use flakestat_core::model::Repo;

impl Store {
    /// The repositories stored under `owner` (in any case), by name without case, then as
    /// spelled (sorted here: collations differ between SQLite and a PostgreSQL server).
    pub fn repos_of_owner(&self, owner: &str) -> Result<Vec<Repo>, StoreError> {
        let mut repos: Vec<Repo> = self.query_map(
            "SELECT owner, name FROM repos WHERE lower(owner) = lower(?1) AND name NOT LIKE '%#%'",
            params![owner],
            |r| {
                Ok(Repo {
                    owner: r.get(0)?,
                    name: r.get(1)?,
                })
            },
        )?;
        repos.sort_by(|a, b| {
            (a.name.to_ascii_lowercase(), &a.name).cmp(&(b.name.to_ascii_lowercase(), &b.name))
        });
        Ok(repos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_owners_repositories_are_found_in_any_spelling_and_renamed_rows_are_left_out() {
        for (engine, _dir, mut store) in crate::tests::engines() {
            eprintln!("engine: {engine}");
            let repo = |o: &str, n: &str| Repo {
                owner: o.into(),
                name: n.into(),
            };
            store.store_repo(&repo("Octo-Org", "beta"), "main").unwrap();
            store
                .store_repo(&repo("octo-org", "Alpha"), "main")
                .unwrap();
            store.store_repo(&repo("other", "x"), "main").unwrap();
            store
                .store_repo_identity(&repo("octo-org", "gone"), 7, "main")
                .unwrap();
            // Another repository takes the name: the old row becomes `gone#7`.
            store
                .store_repo_identity(&repo("octo-org", "gone"), 8, "main")
                .unwrap();
            let names: Vec<String> = store
                .repos_of_owner("OCTO-ORG")
                .unwrap()
                .iter()
                .map(|r| r.to_string())
                .collect();
            assert_eq!(
                names,
                ["octo-org/Alpha", "Octo-Org/beta", "octo-org/gone"],
                "{engine}"
            );
        }
    }
}
