//! Where a job ran: what the jobs API says of its runner (`runner_name`, `runner_group_name`)
//! and what its log's preamble says of the machine (image, runner version, machine name,
//! `nvidia-smi`'s driver and GPU). Plain data; `analysis::hosts` decides what a pool and a host
//! are from it.

use serde::{Deserialize, Serialize};

/// The runner the jobs listing (or a `workflow_job` webhook) names for a job. Both `None` for
/// jobs that never got a runner (skipped, cancelled while queued) and for jobs stored before
/// flakestat kept them.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Runner {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
}

impl Runner {
    pub fn is_unknown(&self) -> bool {
        self.name.is_none() && self.group.is_none()
    }
}

/// What a job log's preamble (`Set up job`, and an `nvidia-smi` table anywhere in it) says of
/// the machine. Every field `None` when the log does not say it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Preamble {
    /// `Current runner version: '2.330.0'`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner_version: Option<String>,
    /// `Runner name: '…'` (self-hosted runners print it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner_name: Option<String>,
    /// `Machine name: '…'` (self-hosted runners; one machine may carry several runners).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<String>,
    /// `Image: ubuntu-24.04` in the `Runner Image` group (GitHub-hosted runners).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// `Version: 20251215.174.1` in the `Runner Image` group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_version: Option<String>,
    /// `nvidia-smi`'s `Driver Version: 595.58.03`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    /// `nvidia-smi`'s first GPU's name (`Tesla T4`, `NVIDIA A10G`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<String>,
}

impl Preamble {
    pub fn is_empty(&self) -> bool {
        *self == Preamble::default()
    }

    /// `ubuntu-24.04 20251215.174.1`, or the image alone, or `None`.
    pub fn image_with_version(&self) -> Option<String> {
        let image = self.image.as_deref()?;
        Some(match &self.image_version {
            Some(v) => format!("{image} {v}"),
            None => image.to_string(),
        })
    }
}

/// Everything known of where one job ran.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Placement {
    #[serde(default)]
    pub runner: Runner,
    /// `None` when no log of the job was read (only failed jobs' logs are downloaded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preamble: Option<Preamble>,
}
