//! `ktui wiki check`: parse and validate every page.
use super::outln;
use std::process::ExitCode;

use kernaut_ide::wiki::{CheckConfig, Severity};
use kernaut_ide::Knowledge;

use super::wiki_args::WikiArgs;

/// Arguments of `ktui wiki`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: WikiCommand,
}

/// `ktui wiki` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum WikiCommand {
    /// Parse and validate every page (ids, links, required pitfall parts, api fields);
    /// print every problem; exit 1 if there is any.
    Check(CheckArgs),
}

/// Arguments of `ktui wiki check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// Hold external pages to kernaut's authoring standard too (every pitfall part,
    /// `When NOT to use`, `source_refs`).
    #[arg(long)]
    pub strict: bool,
    #[command(flatten)]
    pub wiki: WikiArgs,
}

/// Runs `ktui wiki …`.
pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    match &args.command {
        WikiCommand::Check(c) => check(c),
    }
}

fn check(args: &CheckArgs) -> anyhow::Result<ExitCode> {
    let k = Knowledge::load(&args.wiki.config())?;
    for d in k.wiki.problems(Severity::Note) {
        if d.severity == Severity::Note {
            outln!("{d}");
        }
    }
    let problems = k.check(CheckConfig {
        strict: args.strict,
    });
    let mut errors = 0;
    let mut warnings = 0;
    for d in &problems {
        match d.severity {
            Severity::Error => errors += 1,
            Severity::Warning => warnings += 1,
            Severity::Note => {}
        }
        outln!("{d}");
    }
    let apis = k
        .wiki
        .pages()
        .iter()
        .filter(|p| p.kind == kernaut_ide::wiki::PageKind::Api)
        .count();
    outln!(
        "{} pages loaded ({} api pages, {} symbols, {} search documents): {errors} errors, {warnings} warnings",
        k.wiki.pages().len(),
        apis,
        k.index.symbols().len(),
        k.index.num_docs()
    );
    Ok(if errors + warnings > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
