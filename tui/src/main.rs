//! `ktui`: the kernaut terminal UI and its scripting subcommands.
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cmd;

#[derive(Debug, Parser)]
#[command(
    name = "ktui",
    version,
    about = "kernaut: the CUDA kernel-optimization wiki and GPU models in your terminal"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Ranked search over the wiki: symptoms in your own words, symbols, topics.
    Search(cmd::search::Args),
    /// Show a page or one section (`ID#ANCHOR`) for the terminal.
    Show(cmd::show::Args),
    /// Look a name up in the symbol table, as written in code or PTX.
    Symbol(cmd::symbol::Args),
    /// Work on the wiki itself (`ktui wiki check`).
    Wiki(cmd::wiki::Args),
    /// Occupancy of a kernel configuration on an architecture.
    Occupancy(cmd::occupancy::Args),
    /// Shared-memory bank conflicts of one warp-wide access.
    Banks(cmd::banks::Args),
    /// What the hover shows at FILE:LINE[:COL]: the symbol, its wiki entry, occupancy or banks.
    Explain(cmd::explain::Args),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    let result = match &cli.command {
        Some(Command::Search(a)) => cmd::search::run(a),
        Some(Command::Show(a)) => cmd::show::run(a),
        Some(Command::Symbol(a)) => cmd::symbol::run(a),
        Some(Command::Wiki(a)) => cmd::wiki::run(a),
        Some(Command::Occupancy(a)) => cmd::occupancy::run(a),
        Some(Command::Banks(a)) => cmd::banks::run(a),
        Some(Command::Explain(a)) => cmd::explain::run(a),
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
