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
    /// Parse and validate every page (ids, links, required pitfall parts, api fields) and
    /// print every problem. Exit status: 0 when there is no error and no warning, 1 when
    /// there is any (with or without `--strict`), 2 on a usage error.
    Check(CheckArgs),
}

/// Arguments of `ktui wiki check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// Hold pages from `--wiki` folders to the built-in pages' authoring standard too:
    /// without it, an external page that lacks a pitfall part, a `When NOT to use`
    /// section or `source_refs` is not reported; with it, each such gap is a warning, so
    /// the exit status is 1.
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
        "{} loaded ({}, {}, {}): {}, {}",
        count(k.wiki.pages().len(), "page"),
        count(apis, "api page"),
        count(k.index.symbols().len(), "symbol"),
        count(k.index.num_docs(), "search document"),
        count(errors, "error"),
        count(warnings, "warning")
    );
    Ok(if errors + warnings > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `1 warning`, `0 warnings`, `3 pages`.
fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}
