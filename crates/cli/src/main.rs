//! The `axon` command line. This crate is the only one that writes to the
//! terminal; everything it does is a thin layer over the library crates.

#![allow(clippy::print_stdout, clippy::print_stderr)]

mod acp_cmd;
mod chat;
mod config_cmd;
mod doctor_cmd;
mod first_run;
mod guidance_cmd;
mod hooks_cmd;
mod markdown_out;
mod mcp_cmd;
mod mcp_login;
mod models_cmd;
mod options;
mod permissions_cmd;
mod plan_edit;
mod render;
mod rewind_cmd;
mod run_cmd;
mod sandbox_cmd;
mod serve_cmd;
mod sessions_cmd;
mod signals;
mod tool_cmd;
mod web_cmd;

/// Config layering lives in the runtime, below every front end.
pub(crate) use axon_runtime::config;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// An AI agent runtime for code workspaces and notes vaults.
#[derive(Debug, Parser)]
#[command(name = "axon", version, about, propagate_version = true)]
#[command(args_conflicts_with_subcommands = true)]
struct Cli {
    /// Without a subcommand, the interactive terminal UI (as `axon chat`).
    #[command(flatten)]
    chat: chat::ChatArgs,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Work with the agent in the terminal UI (the default).
    Chat(chat::ChatArgs),
    /// Do a task in a workspace and print the answer.
    Run(run_cmd::RunArgs),
    /// The saved sessions: list, show, export, remove.
    #[command(subcommand)]
    Sessions(sessions_cmd::SessionsCommand),
    /// The numbered rules the model will see.
    Rules {
        #[arg(short = 'C', long = "dir", value_name = "DIR", default_value = ".")]
        dir: std::path::PathBuf,
    },
    /// The skills the model gets, and updating their git clones.
    #[command(subcommand)]
    Skills(guidance_cmd::SkillsCommand),
    /// Show the configuration in effect.
    #[command(subcommand)]
    Config(config_cmd::ConfigCommand),
    /// Start, inspect and call the workspace's MCP servers.
    #[command(subcommand)]
    Mcp(mcp_cmd::McpCommand),
    /// List and call the built-in tools directly, without a model.
    #[command(subcommand)]
    Tool(tool_cmd::ToolCommand),
    /// Serve the Agent Client Protocol on stdio, for editors (Zed,
    /// JetBrains, Neovim, Emacs) and note apps (Obsidian).
    Acp(acp_cmd::AcpArgs),
    /// Serve the chat panel to a browser on this machine (prints the
    /// address to open, with its token).
    Web(web_cmd::WebArgs),
    /// The OS sandbox commands run in: check this machine, or run a command
    /// in it.
    #[command(subcommand)]
    Sandbox(sandbox_cmd::SandboxCommand),
    /// Local GGUF models: pull (download), list, remove.
    #[command(subcommand)]
    Models(models_cmd::ModelsCommand),
    /// The hooks in effect (from axon's config and Claude Code's settings),
    /// and consent for the workspace's own.
    #[command(subcommand)]
    Hooks(hooks_cmd::HooksCommand),
    /// The permission rules in effect: see and remove the ones "always"
    /// saved for this workspace.
    #[command(subcommand)]
    Permissions(permissions_cmd::PermissionsCommand),
    /// Undo turns of a saved session: its files from the checkpoints taken
    /// before each turn changed them, its conversation, or both.
    Rewind(rewind_cmd::RewindArgs),
    /// Check this machine and workspace: the local model's CPU level, the
    /// provider and key, pulled models, the sandbox, MCP servers, folders.
    Doctor(doctor_cmd::DoctorArgs),
}

/// Exit codes shared by every subcommand.
pub(crate) mod exit {
    pub const OK: u8 = 0;
    /// The tool (or later, the run) reported a failure.
    pub const FAILED: u8 = 1;
    /// The command line was wrong.
    pub const USAGE: u8 = 2;
}

/// Writes `text` and a newline to stdout. A reader that went away
/// (`axon … | head -1`) has what it wanted, so a closed pipe ends the
/// process quietly with success, as ripgrep does; any other write failure
/// is reported.
pub(crate) fn say(text: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    let result = stdout.write_all(text.as_bytes()).and_then(|()| stdout.write_all(b"\n"));
    let result = result.and_then(|()| stdout.flush());
    match result {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => leave(exit::OK),
        Err(e) => {
            eprintln!("axon: cannot write to stdout: {e}");
            leave(exit::FAILED);
        }
    }
}

/// Ends the process now. `process::exit` runs no destructors, so the MCP
/// servers' process groups, and whatever commands and servers left behind,
/// are killed first.
pub(crate) fn leave(code: u8) -> ! {
    axon_runtime::process::kill_all();
    std::process::exit(code.into())
}

/// SIGTERM, SIGHUP (the terminal closed) and SIGQUIT end axon as an
/// orderly exit does: the terminal given back, MCP servers and what
/// commands detached killed. Without this their default action would end
/// axon with a `setsid` daemon still running. Ctrl-C (SIGINT) is each
/// front end's own: it cancels the turn first. `endings` were registered
/// before the command started (see `signals`).
async fn leave_on_termination(mut endings: signals::Endings) {
    // The shell's convention: 128 + the signal's number.
    let code = 128 + endings.next().await;
    chat::terminal::leave_if_entered();
    leave(u8::try_from(code).unwrap_or(exit::FAILED));
}

/// The arguments, with `--version` saying which CPU level the local model
/// was built for (a bug report's first question about a crash).
fn parse_cli() -> Cli {
    use clap::{CommandFactory, FromArgMatches};
    let long = format!(
        "{}\nlocal model CPU level: {}",
        env!("CARGO_PKG_VERSION"),
        axon_runtime::local_model::cpu_summary()
    );
    let matches = Cli::command().long_version(long).get_matches();
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}

fn main() -> ExitCode {
    // What a command or server detaches (`setsid`, a daemon) is re-parented
    // to axon instead of init, so it can be killed when axon leaves.
    let _ = axon_runtime::process::become_subreaper();
    // Before any command can start: see start_guardian_early.
    axon_runtime::process::start_guardian_early();
    // Commands run as the user; they must not read the keys out of
    // /proc/<axon>/environ.
    let _ = axon_runtime::process::hide_environment();
    let cli = parse_cli();
    // Serving one host over stdio is one conversation: a single thread
    // answers it with the least latency (no cross-thread wake-ups), and
    // blocking tool work still runs on the blocking pool.
    let command = cli.command.unwrap_or(Command::Chat(cli.chat));
    let one_thread =
        matches!(&command, Command::Mcp(mcp_cmd::McpCommand::Serve(args)) if args.over_stdio());
    let mut builder = if one_thread {
        tokio::runtime::Builder::new_current_thread()
    } else {
        tokio::runtime::Builder::new_multi_thread()
    };
    let runtime = match builder.enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("axon: cannot start the async runtime: {e}");
            return ExitCode::from(exit::FAILED);
        }
    };
    // `axon mcp serve` stops gracefully on its own signals.
    let serving = matches!(&command, Command::Mcp(mcp_cmd::McpCommand::Serve(_)) | Command::Web(_));
    let code = runtime.block_on(async {
        if !serving && let Some(endings) = signals::Endings::listen(false) {
            tokio::spawn(leave_on_termination(endings));
        }
        match command {
            Command::Chat(args) => chat::run(args).await,
            Command::Run(args) => run_cmd::run(args).await,
            Command::Sessions(command) => sessions_cmd::run(command),
            Command::Rules { dir } => guidance_cmd::rules_command(&dir),
            Command::Skills(command) => guidance_cmd::skills_command(command),
            Command::Config(command) => config_cmd::run(command),
            Command::Mcp(command) => mcp_cmd::run(command).await,
            Command::Tool(command) => tool_cmd::run(command).await,
            Command::Acp(args) => acp_cmd::run(args).await,
            Command::Web(args) => web_cmd::run(args).await,
            Command::Sandbox(command) => sandbox_cmd::run(command).await,
            Command::Doctor(args) => doctor_cmd::run(args).await,
            Command::Models(command) => models_cmd::run(command).await,
            Command::Hooks(command) => hooks_cmd::run(command),
            Command::Permissions(command) => permissions_cmd::run(command),
            Command::Rewind(args) => rewind_cmd::run(args),
        }
    });
    // A cancelled tool may still be walking a tree on a blocking thread;
    // it must not keep the process alive after the answer.
    runtime.shutdown_timeout(std::time::Duration::from_millis(250));
    axon_runtime::process::kill_all();
    ExitCode::from(code)
}
