//! The matching benchmark's helper (`harness = false`): generates a corpus of realistic raw
//! GitHub Actions job logs, writes ripgrep's pattern file for the same signatures, and times the
//! matcher in-process. `benches/classify.sh` drives it and compares `flakestat classify` with `rg`
//! under hyperfine.
//!
//! ```text
//! cargo bench --bench matching -- generate DIR SIZE_MB [SEED]   # the corpus (not committed)
//! cargo bench --bench matching -- rg-patterns RULESET.toml OUT  # one rg pattern per line
//! cargo bench --bench matching -- time DIR SIGNATURE_DIR        # in-process MB/s, one thread
//! cargo bench --bench matching                                  # a 64 MB corpus in a temp dir
//! ```
//!
//! The corpus mixes what real failing jobs print: the "Set up job" preamble, `##[group]Run …`
//! steps with ANSI-coloured script echoes, pip and compiler output, pytest progress lines (mostly
//! PASSED), and blocks of real PyTorch CI log lines (`fixtures/pytorch/*.log`, their timestamps
//! replaced), so that signatures really match, near the end like real failures.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use flakestat::signatures::{SignatureSet, load_dir};

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let result = match args.first().map(String::as_str) {
        Some("generate") if args.len() >= 3 => {
            let seed = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(42);
            generate(Path::new(&args[1]), args[2].parse().expect("SIZE_MB"), seed)
        }
        Some("rg-patterns") if args.len() == 3 => {
            rg_patterns(Path::new(&args[1]), Path::new(&args[2]))
        }
        Some("time") if args.len() == 3 => time(Path::new(&args[1]), Path::new(&args[2])),
        None => quick(),
        _ => {
            eprintln!("usage: see the top of benches/matching.rs");
            std::process::exit(2);
        }
    };
    if let Err(e) = result {
        eprintln!("matching bench: {e}");
        std::process::exit(1);
    }
}

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// Lines of the real PyTorch logs, timestamps removed, grouped per log.
fn real_blocks() -> Result<Vec<Vec<Vec<u8>>>> {
    let mut blocks = Vec::new();
    let mut paths: Vec<PathBuf> = std::fs::read_dir(fixtures().join("pytorch"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    paths.sort();
    for path in paths {
        let bytes = std::fs::read(&path)?;
        let lines: Vec<Vec<u8>> = bytes
            .split(|&b| b == b'\n')
            .map(|l| {
                let ts = flakestat::signatures::normalize::timestamp_len(l);
                l[ts..].to_vec()
            })
            .collect();
        blocks.push(lines);
    }
    Ok(blocks)
}

struct Writer<W: Write> {
    out: W,
    t: u64,
    written: u64,
}

impl<W: Write> Writer<W> {
    fn line(&mut self, text: &[u8]) -> std::io::Result<()> {
        self.t += 1 + self.t % 7;
        let secs = self.t / 10_000_000;
        let frac = self.t % 10_000_000;
        let (h, m, s) = ((secs / 3600) % 24, (secs / 60) % 60, secs % 60);
        let stamp = format!("2026-07-15T{h:02}:{m:02}:{s:02}.{frac:07}Z ");
        self.out.write_all(stamp.as_bytes())?;
        self.out.write_all(text)?;
        self.out.write_all(b"\n")?;
        self.written += stamp.len() as u64 + text.len() as u64 + 1;
        Ok(())
    }
}

const MODULES: &[&str] = &[
    "test_launcher",
    "test_memory",
    "test_module",
    "test_program",
    "test_stream",
    "test_event",
    "test_linker",
    "test_device",
    "graph/test_graph_definition_lifetime",
    "memory/test_vmm",
];

/// One job log of about `size` bytes.
fn write_log(
    path: &Path,
    size: u64,
    rng: &mut fastrand::Rng,
    blocks: &[Vec<Vec<u8>>],
) -> Result<u64> {
    let file = std::fs::File::create(path)?;
    let mut w = Writer {
        out: BufWriter::with_capacity(1 << 20, file),
        t: rng.u64(0..600_000_000_000),
        written: 3,
    };
    w.out.write_all("\u{feff}".as_bytes())?;
    for line in [
        "Current runner version: '2.327.1'",
        "##[group]Operating System",
        "Ubuntu",
        "24.04.2",
        "LTS",
        "##[endgroup]",
        "##[group]Runner Image",
        "Image: ubuntu-24.04",
        "##[endgroup]",
        "Secret source: Actions",
        "Prepare workflow directory",
        "Complete job name: Test linux-64 / py3.14t, 12.9.1, local (t4)",
    ] {
        w.line(line.as_bytes())?;
    }
    let mut step = 0;
    while w.written < size {
        step += 1;
        w.line(format!("##[group]Run step-{step} --verbose").as_bytes())?;
        w.line(format!("\x1b[36;1mstep-{step} --verbose\x1b[0m").as_bytes())?;
        w.line(b"shell: /usr/bin/bash -e {0}")?;
        w.line(b"##[endgroup]")?;
        let budget = w.written
            + rng
                .u64(200_000..4_000_000)
                .min(size.saturating_sub(w.written) + 1);
        while w.written < budget {
            match rng.u32(0..100) {
                0..=54 => {
                    let m = MODULES[rng.usize(0..MODULES.len())];
                    let outcome = match rng.u32(0..200) {
                        0 => "FAILED",
                        1..=8 => "SKIPPED (requires 2 GPUs)",
                        _ => "PASSED",
                    };
                    w.line(
                        format!(
                            "tests/{m}.py::test_case_{}[param{}] {outcome} [{:3}%]",
                            rng.u32(0..5000),
                            rng.u32(0..9),
                            rng.u32(0..100)
                        )
                        .as_bytes(),
                    )?;
                }
                55..=69 => w.line(
                    format!(
                        "[{}/{}] Building CXX object caffe2/CMakeFiles/torch_cpu.dir/__/aten/src/ATen/native/cpu/kernel_{}.cpp.o",
                        rng.u32(0..9000),
                        9000,
                        rng.u32(0..800)
                    )
                    .as_bytes(),
                )?,
                70..=79 => w.line(
                    format!(
                        "  Downloading numpy-2.3.{}-cp314-cp314t-manylinux_2_28_x86_64.whl ({}.{} MB)",
                        rng.u32(0..5),
                        rng.u32(1..40),
                        rng.u32(0..9)
                    )
                    .as_bytes(),
                )?,
                80..=86 => w.line(
                    format!(
                        "\x1b[32m[ OK ]\x1b[0m kernel {} finished in {} ms on device 0",
                        rng.u32(0..100_000),
                        rng.u32(1..999)
                    )
                    .as_bytes(),
                )?,
                87..=92 => w.line(b"    assert result.shape == expected.shape, \"shape mismatch\"")?,
                93..=98 => w.line(
                    format!(
                        "INFO:root:collected {} items / {} deselected / {} selected",
                        rng.u32(0..5000),
                        rng.u32(0..50),
                        rng.u32(0..5000)
                    )
                    .as_bytes(),
                )?,
                _ => {
                    // A stretch of a real log: its errors, warnings, tracebacks.
                    let block = &blocks[rng.usize(0..blocks.len())];
                    let start = rng.usize(0..block.len());
                    let len = rng.usize(5..60).min(block.len() - start);
                    for line in &block[start..start + len] {
                        w.line(line)?;
                    }
                }
            }
        }
        if w.written >= size {
            break;
        }
        // Steps of a failed job end with the boilerplate line.
        if rng.u32(0..10) == 0 {
            w.line(b"##[error]Process completed with exit code 1.")?;
        }
    }
    // The failure, near the end as in real logs: a whole real excerpt.
    for line in &blocks[rng.usize(0..blocks.len())] {
        w.line(line)?;
    }
    w.line(b"##[error]Process completed with exit code 1.")?;
    w.line(b"Post job cleanup.")?;
    w.out.flush()?;
    Ok(w.written)
}

fn generate(dir: &Path, size_mb: u64, seed: u64) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    let blocks = real_blocks()?;
    let mut rng = fastrand::Rng::with_seed(seed);
    let target = size_mb << 20;
    let mut total = 0;
    let mut n = 0;
    while total < target {
        // Job logs from 256 KB to 24 MB, most of a few MB.
        let size = match rng.u32(0..10) {
            0..=3 => rng.u64(256 << 10..2 << 20),
            4..=8 => rng.u64(2 << 20..8 << 20),
            _ => rng.u64(8 << 20..24 << 20),
        }
        .min(target - total + (64 << 10));
        n += 1;
        total += write_log(
            &dir.join(format!("job-{n:04}.txt")),
            size,
            &mut rng,
            &blocks,
        )?;
    }
    println!(
        "generated {n} logs, {:.1} MB in {}",
        total as f64 / 1048576.0,
        dir.display()
    );
    Ok(())
}

/// ripgrep patterns for a PyTorch ruleset: each pattern as is, a leading `^` widened to allow
/// the BOM and timestamp prefix of raw lines.
fn rg_patterns(ruleset: &Path, out: &Path) -> Result<()> {
    let table: toml::Table = toml::from_str(&std::fs::read_to_string(ruleset)?)?;
    let rules = table["rule"].as_array().ok_or("no [[rule]] array")?;
    let prefix = r"^\x{feff}?(?:\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{7}Z )?";
    let mut text = String::new();
    for rule in rules {
        let pattern = rule["pattern"].as_str().ok_or("pattern is not a string")?;
        let widened = match pattern.strip_prefix('^') {
            Some(rest) => format!("{prefix}{rest}"),
            None => pattern.replace("(^", &format!("({prefix}")),
        };
        text.push_str(&widened);
        text.push('\n');
    }
    std::fs::write(out, text)?;
    println!("wrote {} patterns to {}", rules.len(), out.display());
    Ok(())
}

fn time(dir: &Path, signatures: &Path) -> Result<()> {
    let set = SignatureSet::compile(load_dir(signatures)?)?;
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    paths.sort();
    let (mut bytes, mut matches) = (0u64, 0usize);
    let start = Instant::now();
    for p in &paths {
        let f = std::fs::File::open(p)?;
        bytes += f.metadata()?.len();
        matches += set.classify_reader(f)?.matches.len();
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{} logs, {:.1} MB, {matches} signature matches in {secs:.2}s: {:.0} MB/s on one thread",
        paths.len(),
        bytes as f64 / 1048576.0,
        bytes as f64 / 1048576.0 / secs
    );
    Ok(())
}

fn quick() -> Result<()> {
    let tmp = tempfile::tempdir()?;
    let corpus = tmp.path().join("corpus");
    let sigs = tmp.path().join("signatures");
    generate(&corpus, 64, 7)?;
    std::fs::create_dir_all(&sigs)?;
    let ruleset = std::fs::read_to_string(fixtures().join("pytorch/ruleset.toml"))?;
    for s in flakestat::signatures::import::import_pytorch(&ruleset)? {
        std::fs::write(sigs.join(format!("{}.toml", s.id)), s.toml)?;
    }
    time(&corpus, &sigs)
}
