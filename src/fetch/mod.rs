//! The only place octocrab and tokio appear: the GitHub client and the survey that fills the store.
