//! The binary: parse, run, print the error chain on one line, map the outcome to an exit code.

use std::process::ExitCode;

fn main() -> ExitCode {
    ExitCode::from(flakestat::cli::main())
}
