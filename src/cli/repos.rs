//! Which repositories a command covers: `--repo` (repeatable), `--org OWNER` (every repository
//! of an organisation or user with Actions runs in the window), `--repo-pattern GLOB`. Parsed
//! here, resolved against GitHub's listing (`fetch::Session::list_owner_repos`) for a survey and
//! against the store for a report (`pipeline::scope`); one `--repo` alone is a scope of one,
//! whose report keeps the single-repository shape. Shared by the commands that take these
//! flags; no command itself.

use clap::Args;
use globset::{Glob, GlobMatcher};

use super::error::CliError;
use crate::fetch::OwnerRepo;
use crate::model::{Repo, Timestamp};

#[derive(Debug, Clone, Args)]
pub struct RepoArgs {
    /// The repository, OWNER/NAME; repeat it for a report over several repositories.
    #[arg(long = "repo", value_name = "OWNER/NAME")]
    pub repos: Vec<String>,
    /// Every repository of this organisation (or user) with Actions runs in the window:
    /// archived and disabled ones, and those last pushed before the window, are skipped.
    #[arg(long, value_name = "OWNER")]
    pub org: Option<String>,
    /// With --org: only the repositories whose name (NAME or OWNER/NAME) matches this glob
    /// (`cuda-*`, `*-python`).
    #[arg(long, value_name = "GLOB", requires = "org")]
    pub repo_pattern: Option<String>,
    /// With --org: also the repositories last pushed before the window (a repository whose
    /// only runs are scheduled ones or from forks' PRs has not been pushed to).
    #[arg(long, requires = "org")]
    pub include_inactive: bool,
}

/// What the flags ask for.
#[derive(Debug, Clone)]
pub enum Target {
    /// One `--repo`: surveyed as a scope of one, reported in the single-repository shape.
    One(Repo),
    Many(Many),
}

#[derive(Debug, Clone)]
pub struct Many {
    /// `--repo` values, in the order given.
    pub named: Vec<Repo>,
    pub org: Option<String>,
    pattern: Option<(String, GlobMatcher)>,
    pub include_inactive: bool,
}

fn invalid(message: String) -> CliError {
    CliError::Invalid(message)
}

impl RepoArgs {
    /// `None` when neither `--repo` nor `--org` was given (the caller decides: `--replay`
    /// names its own repository).
    pub fn target(&self) -> Result<Option<Target>, CliError> {
        let mut named: Vec<Repo> = Vec::new();
        for text in &self.repos {
            let repo = Repo::parse(text).ok_or_else(|| {
                invalid(format!(
                    "--repo {text:?} is not OWNER/NAME (for example NVIDIA/cuda-python)"
                ))
            })?;
            if !named.iter().any(|r| same(r, &repo)) {
                named.push(repo);
            }
        }
        let org = match &self.org {
            Some(o) if o.is_empty() || o.contains('/') || o.chars().any(char::is_whitespace) => {
                return Err(invalid(format!(
                    "--org {o:?} is not an organisation or user name (for example NVIDIA)"
                )));
            }
            o => o.clone(),
        };
        let pattern = match &self.repo_pattern {
            Some(p) => Some((
                p.clone(),
                Glob::new(p)
                    .map_err(|e| invalid(format!("--repo-pattern {p:?}: {e}")))?
                    .compile_matcher(),
            )),
            None => None,
        };
        Ok(match (named.len(), org) {
            (0, None) => None,
            (1, None) => Some(Target::One(named.remove(0))),
            (_, org) => Some(Target::Many(Many {
                named,
                org,
                pattern,
                include_inactive: self.include_inactive,
            })),
        })
    }
}

/// GitHub compares names without case.
pub fn same(a: &Repo, b: &Repo) -> bool {
    a.owner.eq_ignore_ascii_case(&b.owner) && a.name.eq_ignore_ascii_case(&b.name)
}

impl Many {
    /// Whether `--repo-pattern` lets `repo` in (always without one).
    pub fn matches(&self, repo: &Repo) -> bool {
        self.pattern
            .as_ref()
            .is_none_or(|(_, glob)| glob.is_match(&repo.name) || glob.is_match(repo.to_string()))
    }

    /// The repositories a survey covers: the named ones in the order given, then the owner's
    /// listed ones (newest push first, as listed) that match the pattern, are neither archived
    /// nor disabled, and (unless `--include-inactive`) were pushed to since `since`. Returns
    /// them with what was skipped and why, one line each.
    pub fn choose(
        &self,
        listed: &[OwnerRepo],
        since: Timestamp,
    ) -> (Vec<Repo>, Vec<(Repo, &'static str)>) {
        let mut chosen: Vec<Repo> = self.named.clone();
        let mut skipped = Vec::new();
        let mut listed: Vec<&OwnerRepo> = listed.iter().collect();
        // Most recent work first: the budget goes to the repositories pushed to last.
        listed.sort_by(|a, b| {
            b.pushed_at
                .cmp(&a.pushed_at)
                .then_with(|| a.repo.to_string().cmp(&b.repo.to_string()))
        });
        for r in listed {
            if chosen.iter().any(|c| same(c, &r.repo)) || !self.matches(&r.repo) {
                continue;
            }
            let why = if r.archived {
                Some("archived")
            } else if r.disabled {
                Some("disabled")
            } else if !self.include_inactive && r.pushed_at.is_none_or(|p| p < since) {
                Some("no push since the window began")
            } else {
                None
            };
            match why {
                Some(why) => skipped.push((r.repo.clone(), why)),
                None => chosen.push(r.repo.clone()),
            }
        }
        (chosen, skipped)
    }

    /// The repositories a report covers, from what the store holds for the owner.
    pub fn choose_stored(&self, stored: &[Repo]) -> Vec<Repo> {
        let mut chosen: Vec<Repo> = self.named.clone();
        for r in stored {
            if !chosen.iter().any(|c| same(c, r)) && self.matches(r) {
                chosen.push(r.clone());
            }
        }
        chosen
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn args(repos: &[&str], org: Option<&str>, pattern: Option<&str>) -> RepoArgs {
        RepoArgs {
            repos: repos.iter().map(|s| s.to_string()).collect(),
            org: org.map(str::to_string),
            repo_pattern: pattern.map(str::to_string),
            include_inactive: false,
        }
    }

    #[test]
    fn one_repo_keeps_the_single_path_and_bad_names_are_refused() {
        assert!(matches!(
            args(&["o/a"], None, None).target(),
            Ok(Some(Target::One(_)))
        ));
        assert!(matches!(
            args(&["o/a", "O/A"], None, None).target(),
            Ok(Some(Target::One(_)))
        ));
        assert!(matches!(
            args(&["o/a", "o/b"], None, None).target(),
            Ok(Some(Target::Many(_)))
        ));
        assert!(args(&[], None, None).target().unwrap().is_none());
        let e = args(&["nope"], None, None).target().unwrap_err();
        assert!(matches!(e, CliError::Invalid(_)), "{e}");
        assert!(e.to_string().contains("--repo \"nope\""));
        let e = args(&[], Some("a/b"), None).target().unwrap_err();
        assert!(e.to_string().contains("--org"));
        let e = args(&[], Some("o"), Some("[")).target().unwrap_err();
        assert!(e.to_string().contains("--repo-pattern"));
    }

    #[test]
    fn the_listing_is_filtered_and_ordered_newest_push_first() {
        let at = |d: u32| chrono::Utc.with_ymd_and_hms(2026, 6, d, 0, 0, 0).unwrap();
        let listed = |name: &str, pushed: u32, archived: bool| OwnerRepo {
            repo: Repo::parse(&format!("o/{name}")).unwrap(),
            id: 1,
            archived,
            disabled: false,
            fork: false,
            pushed_at: Some(at(pushed)),
        };
        let listing = [
            listed("cuda-old", 2, false),
            listed("cuda-new", 20, false),
            listed("cuda-gone", 25, true),
            listed("web", 22, false),
        ];
        let Some(Target::Many(many)) = args(&["x/named"], Some("o"), Some("cuda-*"))
            .target()
            .unwrap()
        else {
            panic!("several repositories");
        };
        let (chosen, skipped) = many.choose(&listing, at(10));
        let names: Vec<String> = chosen.iter().map(|r| r.to_string()).collect();
        assert_eq!(names, ["x/named", "o/cuda-new"]);
        let skipped: Vec<String> = skipped
            .iter()
            .map(|(r, why)| format!("{r}: {why}"))
            .collect();
        assert_eq!(
            skipped,
            [
                "o/cuda-gone: archived",
                "o/cuda-old: no push since the window began"
            ]
        );
    }
}
