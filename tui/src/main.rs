//! `ktui`: the kernaut terminal UI and its scripting subcommands.
use std::io::{self, IsTerminal};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};
use kernaut_tui::app::model::{closest, ArchChoice, Library, WikiSource};
use kernaut_tui::app::{self, Start, State};

mod cmd;

#[derive(Debug, Parser)]
#[command(
    name = "ktui",
    version,
    about = "kernaut: the CUDA kernel-optimization wiki and GPU models in your terminal",
    long_about = "kernaut: the CUDA kernel-optimization wiki and GPU models in your terminal.\n\n\
        With no arguments, `ktui` opens the interactive UI (browse the wiki, `/` to search, \
        `?` for the keys). `ktui FILE.cu[:LINE[:COL]]` opens a CUDA file with its diagnostics, \
        the wiki entry of the symbol under the cursor, the occupancy calculator and bank maps.",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// A CUDA file to analyse interactively: FILE, FILE:LINE or FILE:LINE:COL.
    #[arg(value_name = "FILE[:LINE[:COL]]")]
    file: Option<String>,
    /// The target architecture for FILE: sm_90, 9.0, or a GPU (H200, A100, 4090)
    /// [default: the project's, from .kernaut.toml or the build, as in the editor; else
    /// sm_90, assumed].
    #[arg(long)]
    arch: Option<String>,
    #[command(flatten)]
    wiki: cmd::wiki_args::WikiArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Ranked search over the wiki: symptoms in your own words, symbols, topics.
    Search(cmd::search::Args),
    /// Show a page or one section (`ID#ANCHOR`), or a symbol's page, for the terminal.
    Show(cmd::show::Args),
    /// Look a name up in the symbol table, as written in code or PTX.
    Symbol(cmd::symbol::Args),
    /// Work on the wiki itself (`ktui wiki check`).
    Wiki(cmd::wiki::Args),
    /// Occupancy of a kernel configuration on an architecture.
    Occupancy(cmd::occupancy::Args),
    /// Shared-memory bank conflicts of one warp-wide access.
    Banks(cmd::banks::Args),
    /// Global-memory sectors of one warp-wide load or store (coalescing).
    Coalescing(cmd::coalescing::Args),
    /// What the hover shows at FILE:LINE[:COL]: the symbol, its wiki entry, occupancy or banks.
    Explain(cmd::explain::Args),
}

const SUBCOMMANDS: &[&str] = &[
    "search",
    "show",
    "symbol",
    "wiki",
    "occupancy",
    "banks",
    "coalescing",
    "explain",
    "help",
];

/// What bare `ktui` prints where standard output is not a terminal.
const GUIDE: &str = "\
ktui: the kernaut wiki and GPU models. Run `ktui` in a terminal for the interactive UI
(browse the wiki, `/` to search, `?` for the keys), or `ktui FILE.cu[:LINE]` to analyse a
kernel. From scripts and pipes, use the subcommands:

  ktui search \"my async copy is slower than the plain loop\"   ranked wiki hits
  ktui show pitfall-bank-conflict#P1                          a page or one section
  ktui symbol __hfma2                                         the symbol table's answer
  ktui occupancy --arch H200 --threads 256 --regs 64          occupancy and its limiter
  ktui banks --elem-bytes 4 --index 'lane*33'                 shared-memory bank map
  ktui coalescing --elem-bytes 4 --index 'lane*2'             global-memory sectors
  ktui explain kernel.cu:42:7                                 what the editor's hover shows
  ktui wiki check                                             validate the wiki

`ktui SUBCOMMAND --help` tells more.
";

fn main() -> ExitCode {
    // `KERNAUT_THREADS=N` caps the threads one file's analysis uses (the library reads
    // no environment; the front end does, once).
    if let Some(n) = std::env::var("KERNAUT_THREADS")
        .ok()
        .and_then(|t| t.trim().parse().ok())
    {
        kernaut_ide::syntax::cancel::set_max_threads(n);
    }
    if let Some(code) = misspelled_subcommand() {
        return code;
    }
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
        Some(Command::Coalescing(a)) => cmd::coalescing::run(a),
        Some(Command::Explain(a)) => cmd::explain::run(a),
        None => interactive(&cli),
    };
    match result {
        Ok(code) => code,
        Err(e) if cmd::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ktui: error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// `ktui serch …`: a first word that is no subcommand and no file, but close to a
/// subcommand, gets a "did you mean" (clap would take it for the FILE argument).
fn misspelled_subcommand() -> Option<ExitCode> {
    let first = std::env::args().nth(1)?;
    if first.starts_with('-') || SUBCOMMANDS.contains(&first.as_str()) {
        return None;
    }
    if std::path::Path::new(&cmd::split_position(&first).0).exists() {
        return None;
    }
    let s = closest(&first, SUBCOMMANDS.iter().copied())?;
    eprintln!("ktui: no subcommand or file `{first}`; did you mean `ktui {s}`?");
    Some(ExitCode::from(2))
}

/// Bare `ktui` and `ktui FILE[:LINE[:COL]]`.
fn interactive(cli: &Cli) -> anyhow::Result<ExitCode> {
    let start = match &cli.file {
        None => None,
        Some(target) => Some(file_start(cli, target)?),
    };
    if !io::stdout().is_terminal() || !io::stdin().is_terminal() {
        if start.is_some() {
            eprintln!("ktui: the interactive UI needs a terminal; from a script, use `ktui explain FILE:LINE[:COL]`");
            return Ok(ExitCode::from(2));
        }
        cmd::write_out(GUIDE)?;
        return Ok(ExitCode::SUCCESS);
    }
    let source = WikiSource {
        dirs: cli.wiki.wiki.clone(),
        no_builtin: cli.wiki.no_builtin,
    };
    let lib = Library::load(&source).context("loading the wiki")?;
    app::term::run(|size| {
        Ok(State::new(
            lib,
            start.unwrap_or(Start::Browse),
            size,
            app::theme::Theme::from_env(),
        ))
    })?;
    Ok(ExitCode::SUCCESS)
}

fn file_start(cli: &Cli, target: &str) -> anyhow::Result<Start> {
    let (path, line, col) = cmd::split_position(target);
    let bytes = match std::fs::read(&path) {
        Ok(t) => t,
        Err(e) => {
            if let Some(s) = closest(target, SUBCOMMANDS.iter().copied()) {
                anyhow::bail!("no subcommand or file `{target}`; did you mean `ktui {s}`?");
            }
            return Err(e).with_context(|| format!("reading {path}"));
        }
    };
    // Read as every front end reads a file: UTF-8, or lossily with a note; never binary.
    if kernaut_ide::source_text::is_binary(&bytes) {
        anyhow::bail!("{path} is a binary file (it holds NUL bytes); open a CUDA source file");
    }
    let decoded = kernaut_ide::source_text::decode(bytes);
    if let Some(note) = decoded.note(&path) {
        eprintln!("ktui: note: {note}");
    }
    let text = decoded.text;
    let arch = match &cli.arch {
        Some(a) => Some(
            ArchChoice::parse(a)
                .map_err(anyhow::Error::msg)
                .context("reading --arch")?,
        ),
        None => None,
    };
    Ok(Start::File {
        path,
        text,
        line: line.unwrap_or(1),
        col,
        arch,
        background: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_cli_is_well_formed() {
        Cli::command().debug_assert();
    }
}
