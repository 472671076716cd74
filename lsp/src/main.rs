//! `kernaut-lsp`: the kernaut language server (LSP over stdio) and `kernaut-lsp check`,
//! the pitfall rules for CI.
use std::io::{self, Write};
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

mod check;
mod compile;
mod convert;
mod fix;
mod output;
mod report;
mod server;
mod settings;
mod setup_clangd;
mod transport;
mod wiki_files;

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
    /// Run the language server over stdio (what editors start; the default).
    Serve(ServeArgs),
    /// Check .cu/.cuh files against the pitfall rules, like a compiler: exit 1 on errors.
    Check(check::Args),
    /// The kernel report of FILE[:KERNEL]: every modelled cost, ranked, with what-ifs.
    Report(report::Args),
    /// What kernaut would use for a folder, and why: targets and their source,
    /// .kernaut.toml files, compile_commands.json, the CUDA toolkit, the wiki, clangd.
    Doctor(DoctorArgs),
    /// Write a .clangd that lets clangd parse CUDA with NVIDIA's headers (shows the diff,
    /// writes only with --yes or after you agree).
    SetupClangd(setup_clangd::Args),
}

/// The arguments of `doctor`.
#[derive(Debug, clap::Args)]
struct DoctorArgs {
    /// The folder [default: the current one].
    #[arg(default_value = ".")]
    folder: std::path::PathBuf,
    /// Print Markdown (as the editors' `kernaut.doctor` command shows it).
    #[arg(long)]
    markdown: bool,
    /// How many CUDA files to show the targets of.
    #[arg(long, default_value_t = 8)]
    files: usize,
    /// The nvcc to look at [default: $CUDA_HOME, PATH, or a Python environment with
    /// NVIDIA's nvidia-cuda-nvcc wheel].
    #[arg(long, value_name = "PATH")]
    nvcc: Option<std::path::PathBuf>,
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

/// The arguments of `serve`.
#[derive(Debug, clap::Args)]
struct ServeArgs {
    /// Speak LSP over stdin/stdout (the only transport; accepted for editors that pass it).
    #[arg(long)]
    stdio: bool,
}

fn run(cli: &Cli) -> anyhow::Result<ExitCode> {
    match &cli.command {
        Some(Command::Check(args)) => check::run(args),
        Some(Command::SetupClangd(args)) => setup_clangd::run(args),
        Some(Command::Report(args)) => report::run(args),
        Some(Command::Doctor(args)) => {
            if !args.folder.is_dir() {
                anyhow::bail!("{}: not a folder", args.folder.display());
            }
            let wiki = kernaut_ide::wiki::WikiConfig::builtin()
                .with_env_paths(std::env::var_os("KERNAUT_WIKI").as_deref());
            let report = kernaut_project::doctor::examine(
                &args.folder,
                &kernaut_project::doctor::Options {
                    nvcc: args.nvcc.clone(),
                    wiki: Some(wiki),
                    encoding: None,
                    files: args.files,
                    arch_setting: None,
                },
            );
            print!(
                "{}",
                if args.markdown {
                    report.markdown()
                } else {
                    report.text()
                }
            );
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Serve(_)) | None => serve(),
    }
}

/// Runs the language server until the client sends `exit` or closes stdin.
fn serve() -> anyhow::Result<ExitCode> {
    use std::io::IsTerminal;
    if io::stdin().is_terminal() {
        let mut err = io::stderr().lock();
        write!(err, "{}", Cli::command().render_help())?;
        writeln!(
            err,
            "\nkernaut-lsp is a language server: an editor starts it and talks to it over stdin/stdout\n(see the README's editor section). Waiting for LSP messages on stdin; Ctrl-D ends."
        )?;
    }
    // glibc gives each thread that allocates its own arena; the parse, the rules and the
    // runtime's threads would each keep one (about 30 MB more at the peak on a
    // 10,000-line file). Two arenas keep memory near what the data needs.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an allocator parameter; it is called before any other
    // thread of this process exists.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        // Requests compute on blocking threads beside the diagnostics and parses.
        .max_blocking_threads(16)
        // An idle blocking thread ends after a second, and its stack (the rules recurse
        // deeply) goes back to the system with it.
        .thread_keep_alive(std::time::Duration::from_secs(1))
        .enable_all()
        .build()?;
    runtime.block_on(async {
        // Messages are numbered as they are read and take turns per document; their work
        // runs side by side (`server::order`).
        let order = server::order::Order::new();
        let (service, socket) =
            tower_lsp_server::LspService::new(|client| server::Server::new(client, order.clone()));
        let service = server::order::Ordered::new(service, order);
        // Messages pass through a guard that keeps one malformed message from ending the
        // library's reader (and with it the server), and answers it.
        let (input, output, writer) = transport::guard(tokio::io::stdin(), tokio::io::stdout());
        tower_lsp_server::Server::new(input, output, socket)
            .concurrency_level(server::order::MAX_IN_FLIGHT)
            .serve(service)
            .await;
        // The library's last messages are still on their way to stdout.
        let _ = tokio::time::timeout(std::time::Duration::from_secs(2), writer).await;
    });
    // The reader of stdin sits in a blocking read that nothing can cancel: leave it.
    runtime.shutdown_background();
    Ok(ExitCode::SUCCESS)
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}
