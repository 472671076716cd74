//! `kernaut-lsp`: the kernaut language server (not built yet) and `kernaut-lsp check`, the
//! pitfall rules for CI.
use std::io::{self, Write};
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

mod check;
mod config_file;
mod output;

#[derive(Debug, Parser)]
#[command(
    name = "kernaut-lsp",
    version,
    about = "kernaut: the CUDA kernel-optimization wiki in your editor, and its pitfall rules in CI"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check .cu/.cuh files against the pitfall rules, like a compiler: exit 1 on errors.
    Check(check::Args),
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
    match run(&cli) {
        Ok(code) => code,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            let mut message = format!("kernaut-lsp: error: {e}");
            for cause in e.chain().skip(1) {
                message.push_str(&format!("\n  caused by: {cause}"));
            }
            eprintln!("{message}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: &Cli) -> anyhow::Result<ExitCode> {
    match &cli.command {
        Some(Command::Check(args)) => check::run(args),
        None => {
            let mut err = io::stderr().lock();
            write!(err, "{}", Cli::command().render_help())?;
            writeln!(
                err,
                "\nThe language server (stdio) is not built yet; `kernaut-lsp check` runs the rules."
            )?;
            Ok(ExitCode::from(2))
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}
