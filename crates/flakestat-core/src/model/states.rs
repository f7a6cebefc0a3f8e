//! The words GitHub uses for a run's or job's state and a run's trigger, as enums. GitHub adds
//! words over time (`startup_failure`, `stale`, `merge_group` came late), so each enum keeps an
//! unknown word as it was said (`Other`) rather than refusing the run: stored, reported and
//! compared like the rest, never mistaken for a known one. Each converts from and to GitHub's
//! word, serialises as it, and is stored as it.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An enum over GitHub's words with a catch-all for words it does not know yet.
macro_rules! github_words {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $word:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
            /// A word this version does not know, as GitHub said it.
            Other(String),
        }

        impl $name {
            /// GitHub's word.
            pub fn as_str(&self) -> &str {
                match self {
                    $($name::$variant => $word,)+
                    $name::Other(word) => word,
                }
            }
        }

        impl From<&str> for $name {
            fn from(word: &str) -> Self {
                match word {
                    $($word => $name::$variant,)+
                    other => $name::Other(other.to_string()),
                }
            }
        }

        impl From<String> for $name {
            fn from(word: String) -> Self {
                match $name::from(word.as_str()) {
                    $name::Other(_) => $name::Other(word),
                    known => known,
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                String::deserialize(deserializer).map($name::from)
            }
        }
    };
}

github_words! {
    /// Where a run or job is (`status`).
    Status {
        Queued = "queued",
        InProgress = "in_progress",
        Completed = "completed",
        Waiting = "waiting",
        Requested = "requested",
        Pending = "pending",
    }
}

github_words! {
    /// How a completed run or job ended (`conclusion`).
    Conclusion {
        Success = "success",
        Failure = "failure",
        Cancelled = "cancelled",
        Skipped = "skipped",
        Neutral = "neutral",
        TimedOut = "timed_out",
        ActionRequired = "action_required",
        Stale = "stale",
        StartupFailure = "startup_failure",
    }
}

github_words! {
    /// What started a run (`event`); only the ones flakestat reads are named.
    Event {
        Push = "push",
        PullRequest = "pull_request",
        PullRequestTarget = "pull_request_target",
        PullRequestReview = "pull_request_review",
        Schedule = "schedule",
        WorkflowDispatch = "workflow_dispatch",
        MergeGroup = "merge_group",
    }
}

impl Event {
    /// `pull_request`, `pull_request_target` and `pull_request_review`: a PR's own runs, whose
    /// `pull_requests[]` names the PR (empty for a fork's).
    pub fn is_pull_request(&self) -> bool {
        matches!(
            self,
            Event::PullRequest | Event::PullRequestTarget | Event::PullRequestReview
        )
    }
}

impl Conclusion {
    /// `failure` and `timed_out`: the job failed; `cancelled` and `skipped` did not.
    pub fn is_failure(&self) -> bool {
        matches!(self, Conclusion::Failure | Conclusion::TimedOut)
    }

    /// `success`, `skipped` and `neutral`: nothing went wrong.
    pub fn is_green(&self) -> bool {
        matches!(
            self,
            Conclusion::Success | Conclusion::Skipped | Conclusion::Neutral
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_words_round_trip_and_unknown_ones_are_kept_as_said() {
        for word in ["completed", "in_progress", "queued"] {
            assert_eq!(Status::from(word).as_str(), word);
            assert!(!matches!(Status::from(word), Status::Other(_)));
        }
        assert_eq!(Conclusion::from("timed_out"), Conclusion::TimedOut);
        assert_eq!(
            Conclusion::from("brand_new".to_string()),
            Conclusion::Other("brand_new".into())
        );
        assert_eq!(
            Conclusion::Other("brand_new".into()).to_string(),
            "brand_new"
        );
        let json = serde_json::to_string(&Event::PullRequestTarget).unwrap();
        assert_eq!(json, "\"pull_request_target\"");
        let back: Event = serde_json::from_str("\"merge_queue_x\"").unwrap();
        assert_eq!(back, Event::Other("merge_queue_x".into()));
    }

    #[test]
    fn failures_greens_and_pr_events() {
        assert!(Conclusion::TimedOut.is_failure());
        assert!(!Conclusion::Cancelled.is_failure());
        assert!(!Conclusion::Cancelled.is_green());
        assert!(Conclusion::Neutral.is_green());
        assert!(!Conclusion::Other("success ".into()).is_green());
        assert!(Event::from("pull_request_review").is_pull_request());
        assert!(!Event::from("pull_request_review_comment").is_pull_request());
        assert!(!Event::Push.is_pull_request());
    }
}
