//! A job log's preamble: what the runner prints about itself in `Set up job` (runner version,
//! runner and machine name on self-hosted runners, the image and its version on GitHub-hosted
//! ones) and what `nvidia-smi`'s table says (driver version, first GPU's name), wherever in the
//! log a step printed it. Pure: bytes in, [`Preamble`] out; raw GitHub logs, `gh run view --log`
//! exports (`job TAB step TAB line`) and copies without timestamps all read alike.

use crate::model::Preamble;

use super::normalize::{gh_log_prefix, normalize_line};

/// Bumped whenever [`parse_preamble`] reads something new, so stores re-read their logs.
pub const PREAMBLE_VERSION: u32 = 1;

/// The `Set up job` lines sit at the top; past this many lines without a runner line the
/// preamble is over and only the `nvidia-smi` table is still looked for.
const SETUP_LINES: usize = 200;

/// Reads the preamble of one raw job log.
pub fn parse_preamble(raw: &[u8]) -> Preamble {
    let mut found = Preamble::default();
    // Which `##[group]` the line is in: the image's `Version:` is only the one under
    // `Runner Image` (the provisioner's group has a `Version:` of its own).
    let mut group = String::new();
    // `nvidia-smi`: after the header line, the first row below the `|===` rule holds GPU 0.
    let mut smi_rule_next = false;
    for (n, line) in raw.split(|&b| b == b'\n').enumerate() {
        let line = match gh_log_prefix(line) {
            Some((_, at)) => &line[at..],
            None => line,
        };
        let text = normalize_line(line);
        let text = text.trim();
        if n < SETUP_LINES {
            if let Some(title) = text.strip_prefix("##[group]") {
                group = title.trim().to_string();
                continue;
            }
            if text.starts_with("##[endgroup]") {
                group.clear();
                continue;
            }
            let set = |slot: &mut Option<String>, value: Option<&str>| {
                if slot.is_none()
                    && let Some(v) = value.filter(|v| !v.is_empty())
                {
                    *slot = Some(v.to_string());
                }
            };
            set(
                &mut found.runner_version,
                quoted(text, "Current runner version:"),
            );
            set(&mut found.runner_name, quoted(text, "Runner name:"));
            set(&mut found.machine, quoted(text, "Machine name:"));
            if group == "Runner Image" {
                set(&mut found.image, text.strip_prefix("Image:").map(str::trim));
                set(
                    &mut found.image_version,
                    text.strip_prefix("Version:").map(str::trim),
                );
            }
        }
        if found.driver.is_none() && text.starts_with('|') && text.contains("NVIDIA-SMI") {
            found.driver = text
                .split_once("Driver Version:")
                .and_then(|(_, rest)| rest.split_whitespace().next())
                .map(str::to_string);
            continue;
        }
        if found.driver.is_some() && found.gpu.is_none() {
            if text.starts_with("|====") {
                smi_rule_next = true;
                continue;
            }
            if smi_rule_next {
                smi_rule_next = false;
                found.gpu = gpu_name(text);
            }
        }
    }
    found
}

/// `Runner name: 'x'` → `x` (quotes optional).
fn quoted<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let value = text.strip_prefix(key)?.trim();
    Some(
        value
            .strip_prefix('\'')
            .and_then(|v| v.strip_suffix('\''))
            .unwrap_or(value),
    )
}

/// `|   0  Tesla T4                       On  |   00000000:…` → `Tesla T4`.
fn gpu_name(row: &str) -> Option<String> {
    let cell = row.strip_prefix('|')?.split('|').next()?.trim();
    let (index, rest) = cell.split_once(char::is_whitespace)?;
    index.parse::<u32>().ok()?;
    let rest = rest.trim();
    let name = ["On", "Off"]
        .iter()
        .find_map(|p| rest.strip_suffix(p))
        .unwrap_or(rest)
        .trim();
    (!name.is_empty()).then(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A GitHub-hosted runner's `Set up job`, as a real log (and `gh run view --log`) shows it.
    const HOSTED: &str = "\u{feff}2026-01-02T03:33:54.0212672Z Current runner version: '2.330.0'
2026-01-02T03:33:54.0238706Z ##[group]Runner Image Provisioner
2026-01-02T03:33:54.0239503Z Hosted Compute Agent
2026-01-02T03:33:54.0240030Z Version: 20251211.462
2026-01-02T03:33:54.0242795Z ##[endgroup]
2026-01-02T03:33:54.0243285Z ##[group]Operating System
2026-01-02T03:33:54.0243846Z Ubuntu
2026-01-02T03:33:54.0244388Z 24.04.3
2026-01-02T03:33:54.0245300Z ##[endgroup]
2026-01-02T03:33:54.0245798Z ##[group]Runner Image
2026-01-02T03:33:54.0246707Z Image: ubuntu-24.04
2026-01-02T03:33:54.0247185Z Version: 20251215.174.1
2026-01-02T03:33:54.0250846Z ##[endgroup]
2026-01-02T03:33:54.0258736Z Prepare workflow directory
";

    #[test]
    fn a_hosted_runner_names_its_image_and_version_not_the_provisioners() {
        let p = parse_preamble(HOSTED.as_bytes());
        assert_eq!(p.runner_version.as_deref(), Some("2.330.0"));
        assert_eq!(p.image.as_deref(), Some("ubuntu-24.04"));
        assert_eq!(p.image_version.as_deref(), Some("20251215.174.1"));
        assert_eq!(p.runner_name, None);
        assert_eq!(p.machine, None);
        assert_eq!(
            p.image_with_version().as_deref(),
            Some("ubuntu-24.04 20251215.174.1")
        );
    }

    #[test]
    fn a_gh_run_view_export_reads_like_the_raw_log() {
        let exported: String = HOSTED
            .trim_start_matches('\u{feff}')
            .lines()
            .enumerate()
            .map(|(i, l)| {
                let bom = if i == 0 { "\u{feff}" } else { "" };
                format!("Android Unit Tests\tSet up job\t{bom}{l}\n")
            })
            .collect();
        assert_eq!(
            parse_preamble(exported.as_bytes()),
            parse_preamble(HOSTED.as_bytes())
        );
    }

    /// NVIDIA's ARC runner (the machine is the pod), then `nvidia-smi` in a later step; the
    /// same table echoed in a script (`# | NVIDIA-SMI …`) earlier is not output.
    #[test]
    fn a_self_hosted_gpu_runner_names_machine_driver_and_gpu() {
        let log = "2026-07-15T21:26:47.1521417Z Current runner version: '2.327.1'
2026-07-15T21:26:47.1592787Z Runner name: 'linux-amd64-gpu-t4-latest-1-8kq2v'
2026-07-15T21:26:47.1664157Z Runner group name: 'nv-gpu-amd64-t4-1gpu'
2026-07-15T21:26:47.1735527Z Machine name: 'linux-amd64-gpu-t4-latest-1-8kq2v'
2024-07-08T16:59:30.3523925Z \u{1b}[36;1m# | NVIDIA-SMI 525.89.02    Driver Version: 525.89.02    CUDA Version: 12.0     |\u{1b}[0m
2026-07-15T21:27:08.2492387Z | NVIDIA-SMI 595.58.03              Driver Version: 595.58.03      CUDA Version: 13.2     |
2026-07-15T21:27:08.2563757Z +-----------------------------------------+------------------------+----------------------+
2026-07-15T21:27:08.2635127Z | GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
2026-07-15T21:27:08.2706497Z | Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
2026-07-15T21:27:08.2777867Z |=========================================+========================+======================|
2026-07-15T21:27:08.2849237Z |   0  Tesla T4                       On  |   00000000:00:1E.0 Off |                    0 |
2026-07-15T21:27:08.2920607Z | N/A   31C    P8             10W /   70W |       1MiB /  15360MiB |      0%      Default |
";
        let p = parse_preamble(log.as_bytes());
        assert_eq!(p.runner_version.as_deref(), Some("2.327.1"));
        assert_eq!(
            p.runner_name.as_deref(),
            Some("linux-amd64-gpu-t4-latest-1-8kq2v")
        );
        assert_eq!(
            p.machine.as_deref(),
            Some("linux-amd64-gpu-t4-latest-1-8kq2v")
        );
        assert_eq!(p.driver.as_deref(), Some("595.58.03"));
        assert_eq!(p.gpu.as_deref(), Some("Tesla T4"));
        assert_eq!(p.image, None);
    }

    #[test]
    fn a_log_without_a_preamble_says_nothing() {
        let p = parse_preamble(b"hello\nerror: nothing here\nVersion: 1.2\n");
        assert!(p.is_empty(), "{p:?}");
    }
}
