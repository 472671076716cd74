//! `ktui`: the kernaut terminal UI and its scripting subcommands.
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cmd;

#[derive(Debug, Parser)]
#[command(name = "ktui", version, about = "kernaut: the CUDA kernel-optimization wiki and GPU models in your terminal")]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Occupancy of a kernel configuration on an architecture.
    Occupancy(cmd::occupancy::Args),
    /// Shared-memory bank conflicts of one warp-wide access.
    Banks(cmd::banks::Args),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { ExitCode::from(2) } else { ExitCode::SUCCESS };
        }
    };
    let result = match &cli.command {
        Some(Command::Occupancy(a)) => cmd::occupancy::run(a),
        Some(Command::Banks(a)) => cmd::banks::run(a),
        None => {
            use clap::CommandFactory;
            let _ = Cli::command().print_help();
            Ok(ExitCode::SUCCESS)
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("ktui: error: {e:#}");
            ExitCode::from(2)
        }
    }
}
