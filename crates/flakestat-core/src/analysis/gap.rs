//! What an incomplete report is missing, as data: the survey that would fill the gap (the
//! repository and the window the store must hold whole). The analysis and the reports know no
//! command line: whoever shows a report words the survey as a command (the CLI: `flakestat
//! survey --repo … --since … --until …` with the flags it was given) and hands the words back in
//! the report's `fill_gap`, which the incomplete line shows as they are.

use serde::Serialize;

use crate::model::{Repo, Timestamp};

/// The survey that would fill a report's gap: one repository (`None`: the store's only one)
/// over one window (either end `None`: open).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SurveyGap {
    pub repo: Option<Repo>,
    pub since: Option<Timestamp>,
    pub until: Option<Timestamp>,
}
