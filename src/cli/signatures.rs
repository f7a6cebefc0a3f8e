//! `flakestat signatures check|import`: validate signature files and run their examples; convert
//! another tool's rule file into signature files.

use std::io::Write;
use std::path::PathBuf;

use clap::Subcommand;

use super::GlobalArgs;
use super::error::CliError;
use super::pipeline::{Signatures, load_from_store};
use super::source::WindowArgs;
use crate::exit;
use crate::report::sanitize::terminal_line;
use crate::signatures::check::check;
use crate::signatures::import::import_pytorch;
use crate::signatures::resolve_dir;

pub(super) const SIGNATURES_EXAMPLES: &str = "\
Examples:
  flakestat signatures check --signatures signatures/
  flakestat signatures audit --repo NVIDIA/cuda-python --since 30d
  flakestat signatures import --format pytorch -o signatures/ ruleset.toml";

const CHECK_EXAMPLES: &str = "\
Examples:
  flakestat signatures check
  flakestat signatures check --signatures signatures/ --allow-overlaps";

const AUDIT_EXAMPLES: &str = "\
Examples:
  flakestat signatures audit --repo NVIDIA/cuda-python --since 30d
  flakestat signatures audit --repo NVIDIA/cuda-python --since 90d \\
      --stale-days 60 --strict";

const IMPORT_EXAMPLES: &str = "\
Examples:
  flakestat signatures import --format pytorch -o signatures/ ruleset.toml
  flakestat signatures import --format pytorch -o signatures/ --force \\
      ruleset.toml";

#[derive(Debug, Subcommand)]
pub enum SignaturesCommand {
    /// Validate every signature file, run its examples, and report signatures that match the
    /// same example line (overlaps).
    #[command(after_help = CHECK_EXAMPLES)]
    Check {
        /// Folder of signature files [default: ./signatures if it exists, else the bundled set].
        #[arg(long, value_name = "DIR")]
        signatures: Option<PathBuf>,
        /// The folder as an argument, as before `--signatures` was spelled the same in every
        /// command: kept, hidden, so scripts keep working.
        #[arg(value_name = "DIR", hide = true, conflicts_with = "signatures")]
        dir: Option<PathBuf>,
        /// Report overlapping signatures without failing.
        #[arg(long)]
        allow_overlaps: bool,
    },
    /// Audit signatures on the store's real logs: matched jobs, overlaps, boilerplate and
    /// too-broad patterns, many distinct tests, and (as notes) no hit in N days.
    #[command(after_help = AUDIT_EXAMPLES)]
    Audit(Box<AuditArgs>),
    /// Convert another tool's rule file into signature files, patterns unchanged.
    #[command(after_help = IMPORT_EXAMPLES)]
    Import {
        /// The rule file's format.
        #[arg(long, value_enum)]
        format: ImportFormat,
        /// Folder to write the signature files into (created if missing).
        // `--out` was its name before every command wrote with `-o/--output`: kept, hidden.
        #[arg(short, long, value_name = "DIR", alias = "out")]
        output: PathBuf,
        /// Overwrite signature files that already exist.
        #[arg(long)]
        force: bool,
        /// The rule file, e.g. PyTorch's `aws/lambda/log-classifier/ruleset.toml`.
        #[arg(value_name = "FILE")]
        file: PathBuf,
    },
}

#[derive(Debug, clap::Args)]
pub struct AuditArgs {
    #[command(flatten)]
    pub window: WindowArgs,
    /// A signature without a hit in this many days is a removal candidate (a note).
    #[arg(long, value_name = "N", default_value_t = 30)]
    pub stale_days: i64,
    /// Exit 10 when any signature has a finding other than a note (for CI on a signatures
    /// repository).
    #[arg(long)]
    pub strict: bool,
    #[command(flatten)]
    pub green: super::green::GreenArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ImportFormat {
    /// PyTorch's log classifier `ruleset.toml` (ordered `[[rule]]` name/pattern entries).
    Pytorch,
}

pub fn run(global: &GlobalArgs, cmd: SignaturesCommand) -> Result<u8, CliError> {
    match cmd {
        SignaturesCommand::Check {
            signatures,
            dir,
            allow_overlaps,
        } => run_check(global, signatures.or(dir), allow_overlaps),
        SignaturesCommand::Audit(args) => run_audit(global, *args),
        SignaturesCommand::Import {
            format: ImportFormat::Pytorch,
            output,
            force,
            file,
        } => run_import(global, file, output, force),
    }
}

fn run_check(
    global: &GlobalArgs,
    dir: Option<PathBuf>,
    allow_overlaps: bool,
) -> Result<u8, CliError> {
    let signatures = Signatures::load_from(
        resolve_dir(dir.as_deref()),
        super::error::SIGNATURES_FLAG_HINT,
    )?;
    let source = &signatures.source;
    let report = check(&signatures.set);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let show = |s: &str| terminal_line(s);
    for f in &report.failures {
        writeln!(
            out,
            "FAIL {}: {}[{}] {:?}: {}",
            show(&f.file.display().to_string()),
            show(f.key),
            f.index,
            show(&f.example),
            show(&f.reason.to_string())
        )?;
    }
    for o in &report.overlaps {
        writeln!(
            out,
            "{} {} and {} both match {:?} (an example of {}); make one of the patterns narrower",
            if allow_overlaps {
                "overlap:"
            } else {
                "OVERLAP"
            },
            show(&o.first.to_string()),
            show(&o.second.to_string()),
            show(&o.example),
            show(&o.owner.to_string())
        )?;
    }
    if !global.quiet {
        for id in &report.without_examples {
            writeln!(
                out,
                "note: {} has no examples.match lines; add a real log line it must match",
                show(&id.to_string())
            )?;
        }
    }
    let failed = !report.failures.is_empty() || (!allow_overlaps && !report.overlaps.is_empty());
    writeln!(
        out,
        "{}: {} signatures, {} examples, {} failing, {} overlaps in {source}",
        if failed { "FAILED" } else { "ok" },
        report.signatures,
        report.examples,
        report.failures.len(),
        report.overlaps.len(),
        source = show(&source.to_string()),
    )?;
    Ok(if failed {
        exit::INVALID_INPUT
    } else {
        exit::SUCCESS
    })
}

fn run_audit(global: &GlobalArgs, args: AuditArgs) -> Result<u8, CliError> {
    use crate::analysis::audit::{AuditConfig, audit};
    let loaded = load_from_store(&args.window, None)?;
    let config = AuditConfig {
        stale_days: args.stale_days,
        ..AuditConfig::default()
    };
    let mut audits = audit(&loaded.snapshot, &loaded.signatures.specs, &config);
    let green = super::green::sample_green(
        global,
        &args.green,
        &loaded.location,
        args.window.stored.replay.as_deref(),
        &loaded.snapshot,
        &loaded.signatures.specs,
    )?;
    crate::analysis::green::apply_green(&mut audits, &green.shares);
    // The audit counts every failed job its pattern matches, runs of related PRs too (a
    // pattern's reach is the question); reports leave those runs out, so the audit says how
    // many of its runs they are.
    let data = loaded.analyze();
    let related: std::collections::BTreeMap<String, u64> = data
        .signatures
        .iter()
        .map(|s| {
            let hit = s.excluded_runs.iter().filter(|r| r.hit).map(|r| r.run_id);
            let runs: std::collections::BTreeSet<_> = hit.collect();
            (s.id.0.clone(), runs.len() as u64)
        })
        .collect();
    let alarms = write_audits(&audits, &related, &green.summary)?;
    Ok(if args.strict && alarms > 0 {
        exit::ALERT
    } else {
        exit::SUCCESS
    })
}

/// Each signature's audit on stdout, then the verdict; how many alarms.
fn write_audits(
    audits: &[crate::analysis::audit::SignatureAudit],
    related: &std::collections::BTreeMap<String, u64>,
    green_summary: &str,
) -> Result<usize, CliError> {
    use crate::analysis::green::GreenShare;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut alarms = 0;
    for a in audits {
        let overlaps: Vec<String> = a
            .overlaps
            .iter()
            .map(|(id, n)| format!("{id} ({n})"))
            .collect();
        let in_green = match &a.green {
            GreenShare::Sampled {
                sampled, matched, ..
            } => format!("{matched}/{sampled}"),
            GreenShare::Unknown { .. } => "unknown".to_string(),
        };
        let counted_related = match related.get(&a.id).copied().unwrap_or(0) {
            0 => String::new(),
            1 => " (counting 1 run of a related PR, which reports exclude)".to_string(),
            n => format!(" (counting {n} runs of related PRs, which reports exclude)"),
        };
        writeln!(
            out,
            "{}: {} jobs in {} runs{counted_related}, {} line shapes, {} tests, last hit {}, matches in green jobs {in_green}{}",
            a.id,
            a.jobs,
            a.runs,
            a.shapes,
            a.tests,
            a.last_hit
                .map(|t| t.format("%Y-%m-%d").to_string())
                .unwrap_or_else(|| "never".into()),
            if overlaps.is_empty() {
                String::new()
            } else {
                format!(", shares jobs with {}", overlaps.join(", "))
            }
        )?;
        for f in &a.findings {
            if f.kind.is_alarm() {
                alarms += 1;
            }
            writeln!(
                out,
                "  {} {}",
                if f.kind.is_alarm() { "ALARM" } else { "note:" },
                terminal_line(&f.message)
            )?;
        }
    }
    writeln!(
        out,
        "{}: {} signatures, {alarms} alarms; {}",
        if alarms > 0 { "FINDINGS" } else { "ok" },
        audits.len(),
        green_summary
    )?;
    Ok(alarms)
}

fn run_import(
    global: &GlobalArgs,
    file: PathBuf,
    out: PathBuf,
    force: bool,
) -> Result<u8, CliError> {
    let text = std::fs::read_to_string(&file).map_err(|e| {
        CliError::Invalid(format!(
            "cannot read {}: {e}; check the path",
            file.display()
        ))
    })?;
    let imported =
        import_pytorch(&text).map_err(|e| CliError::Invalid(format!("{}: {e}", file.display())))?;
    std::fs::create_dir_all(&out).map_err(|e| {
        CliError::file(
            format!(
                "cannot create {}; check it is a writable folder: {e}",
                out.display()
            ),
            e,
        )
    })?;
    if !force {
        let existing: Vec<String> = imported
            .iter()
            .map(|s| out.join(format!("{}.toml", s.id)))
            .filter(|p| p.exists())
            .map(|p| p.display().to_string())
            .collect();
        if !existing.is_empty() {
            return Err(CliError::Invalid(format!(
                "{} signature files already exist (first: {}); pass --force to overwrite them, or choose another --output",
                existing.len(),
                existing[0]
            )));
        }
    }
    for sig in &imported {
        let path = out.join(format!("{}.toml", sig.id));
        std::fs::write(&path, &sig.toml)
            .map_err(|e| CliError::file(format!("cannot write {}: {e}", path.display()), e))?;
    }
    if !global.quiet {
        say!(
            "imported {} signatures into {}; check them with `flakestat signatures check --signatures {}`",
            imported.len(),
            out.display(),
            out.display()
        );
    }
    Ok(exit::SUCCESS)
}
