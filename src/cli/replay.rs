//! `flakestat replay deliver` (hidden; only in builds with the fake GitHub, the cargo feature
//! `replay`): the fake GitHub as a webhook sender. It posts a recorded scenario's
//! `workflow_run` and `workflow_job` deliveries to a receiver (`flakestat serve`) in the order
//! they happened, signed as GitHub signs them, with GitHub's imperfections on request
//! (redeliveries, swapped pairs, drops, forged signatures: seeded, deterministic). For tests,
//! benchmarks and trying `serve` out against `serve --replay` of the same folder; docs/serve.md.

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::GlobalArgs;
use super::error::CliError;
use super::settings;
use super::source::parse_fraction;
use super::when::{Bound, parse_when};
use crate::exit;
use crate::fake::Dataset;
use crate::fake::webhooks::{self, EventWindow, Kind, Mischief};

const DELIVER_EXAMPLES: &str = "\
Examples:
  flakestat serve --replay fixtures/cuda-python-flake --listen 127.0.0.1:8080 \\
      --webhook-secret-file secret.txt &
  flakestat replay deliver --replay fixtures/cuda-python-flake \\
      --since 2026-07-20 --to http://127.0.0.1:8080/webhook \\
      --webhook-secret-file secret.txt \\
      --duplicates 10% --reorder 10% --drop 5% --forge 1

stdout: one JSON object, what was sent and answered. Exit 2 when a genuine delivery was not
answered 2xx or a forged one was.";

/// `flakestat replay --help`: its one command, as `replay deliver --help` shows it.
pub const EXAMPLES: &str = "\
Examples:
  flakestat replay deliver --replay fixtures/cuda-python-flake \\
      --since 2026-07-20 --to http://127.0.0.1:8080/webhook \\
      --webhook-secret-file secret.txt

Sends a recorded scenario's webhooks to a `flakestat serve` (docs/serve.md); the scenario's
other tools are the flags --replay gives survey, report and serve.";

/// The fake GitHub's tools (tests, benchmarks, trying `serve` out).
#[derive(Debug, Subcommand)]
pub enum ReplayCommand {
    /// Post a recorded scenario's webhook deliveries to a receiver, in the order they happened.
    #[command(after_help = DELIVER_EXAMPLES)]
    Deliver(DeliverArgs),
}

#[derive(Debug, Args)]
pub struct DeliverArgs {
    /// The recorded dataset (a scenario folder, as `survey --replay DIR`).
    #[arg(long, value_name = "DIR")]
    pub replay: PathBuf,
    /// The receiver's URL (http://HOST:PORT/webhook).
    #[arg(long, value_name = "URL")]
    pub to: String,
    /// The webhook's secret, read from FILE. Default: FLAKESTAT_WEBHOOK_SECRET.
    #[arg(long, value_name = "FILE")]
    pub webhook_secret_file: Option<PathBuf>,
    /// The events of runs created from WHEN (the recording's end is "now"). Default: every run.
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// The events of runs created before WHEN. Default: up to the recording's end.
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,
    /// Redeliver this fraction of the deliveries (same X-GitHub-Delivery, a few later): 0.1 or 10%.
    #[arg(long, value_name = "FRACTION", default_value = "0", value_parser = parse_fraction)]
    pub duplicates: f64,
    /// Swap this fraction of adjacent pairs.
    #[arg(long, value_name = "FRACTION", default_value = "0", value_parser = parse_fraction)]
    pub reorder: f64,
    /// Never send this fraction of the deliveries (GitHub does not retry a failed one).
    #[arg(long, value_name = "FRACTION", default_value = "0", value_parser = parse_fraction)]
    pub drop: f64,
    /// Add N deliveries signed with another key (a completed run the others do not deliver).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub forge: u32,
    /// The seed of the mischief: one seed, one sequence of deliveries.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,
    /// Connections posting at once (1: each delivery answered before the next is sent).
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u16).range(1..=64))]
    pub connections: u16,
}

pub fn run(global: &GlobalArgs, command: ReplayCommand) -> Result<u8, CliError> {
    match command {
        ReplayCommand::Deliver(args) => deliver(global, args),
    }
}

fn deliver(global: &GlobalArgs, args: DeliverArgs) -> Result<u8, CliError> {
    let dataset = Dataset::load(&args.replay)
        .map_err(|e| CliError::Invalid(format!("--replay {}: {e}", args.replay.display())))?;
    let secret = settings::resolve_webhook_secret(
        args.webhook_secret_file.as_deref(),
        "replay deliver signs with the webhook's secret",
        "the one serve checks",
    )?;
    let window = EventWindow {
        since: args
            .since
            .as_deref()
            .map(|s| parse_when(s, Bound::Since, dataset.now))
            .transpose()?,
        until: args
            .until
            .as_deref()
            .map(|u| parse_when(u, Bound::Until, dataset.now))
            .transpose()?,
    };
    let api = "https://api.github.com";
    let events = webhooks::webhook_events(&dataset, window, api);
    let mischief = Mischief {
        duplicates: args.duplicates,
        reordered: args.reorder,
        dropped: args.drop,
        forged: args.forge,
        seed: args.seed,
    };
    let plan = webhooks::plan_deliveries(&dataset, events, &mischief, api);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Failed(format!("cannot start the async runtime: {e}")))?;
    let started = std::time::Instant::now();
    let statuses = runtime
        .block_on(webhooks::send(
            &args.to,
            &secret,
            &plan,
            usize::from(args.connections),
        ))
        .map_err(|e| CliError::Invalid(format!("--to {e}")))?;
    let elapsed = started.elapsed();

    let mut answers = std::collections::BTreeMap::<String, u64>::new();
    let mut unexpected = 0u64;
    let mut forged = Vec::new();
    for (delivery, status) in plan.deliveries.iter().zip(&statuses) {
        *answers.entry(status.to_string()).or_default() += 1;
        let accepted = (200..300).contains(status);
        match delivery.kind {
            Kind::Forged => {
                unexpected += u64::from(accepted);
                forged.push(serde_json::json!({
                    "delivery": delivery.id, "run": delivery.run.0, "status": status,
                }));
            }
            Kind::Original | Kind::Redelivery => unexpected += u64::from(!accepted),
        }
    }
    let count = |kind: Kind| plan.deliveries.iter().filter(|d| d.kind == kind).count();
    let summary = serde_json::json!({
        "events": plan.events,
        "sent": plan.deliveries.len(),
        "dropped": plan.dropped.len(),
        "redelivered": count(Kind::Redelivery),
        "reordered_pairs": plan.reordered_pairs,
        "forged": forged,
        "answers": answers,
        "seconds": (elapsed.as_secs_f64() * 1000.0).round() / 1000.0,
    });
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{summary}")
        .and_then(|()| stdout.flush())
        .map_err(|e| CliError::Failed(format!("cannot write to stdout: {e}")))?;
    if !global.quiet {
        say!(
            "flakestat replay deliver: {} deliveries of {} events sent in {:.1} s ({} dropped, {} redelivered, {} pairs swapped, {} forged)",
            plan.deliveries.len(),
            plan.events,
            elapsed.as_secs_f64(),
            plan.dropped.len(),
            count(Kind::Redelivery),
            plan.reordered_pairs,
            count(Kind::Forged)
        );
    }
    if unexpected > 0 {
        return Err(CliError::Failed(format!(
            "{unexpected} deliveries were answered unexpectedly (a genuine one refused, or a forged one taken): see \"answers\" on stdout"
        )));
    }
    Ok(exit::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::parse_fraction;

    #[test]
    fn fractions_parse_as_decimals_or_percentages() {
        assert_eq!(parse_fraction("0.1"), Ok(0.1));
        assert_eq!(parse_fraction("5%"), Ok(0.05));
        assert_eq!(parse_fraction("0"), Ok(0.0));
        assert!(parse_fraction("110%").is_err());
        assert!(parse_fraction("-0.1").is_err());
        assert!(parse_fraction("a lot").is_err());
    }
}
