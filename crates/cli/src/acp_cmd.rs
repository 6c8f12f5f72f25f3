//! `axon acp`: axon as an Agent Client Protocol agent over stdio, for
//! editors and note apps (Zed, JetBrains IDEs, Neovim, Emacs, Obsidian).
//!
//! Stdout belongs to the protocol: everything else goes to stderr, which
//! editors keep as the agent's log.

use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;

use crate::exit;
use crate::options::provider_help;
use crate::tool_cmd::ProfileArg;

#[derive(Debug, Args)]
pub struct AcpArgs {
    /// Where a relative `cwd` from the editor is taken from.
    #[arg(short = 'C', long = "dir", value_name = "DIR", default_value = ".")]
    dir: PathBuf,
    /// Which tool set: a code workspace (default) or a notes vault.
    #[arg(long, value_enum)]
    profile: Option<ProfileArg>,
    #[arg(long, help = provider_help())]
    provider: Option<String>,
    /// The model (default: the provider's, or the config's `model`).
    #[arg(long)]
    model: Option<String>,
    /// Model calls per prompt before it stops (default 25).
    #[arg(long)]
    max_iterations: Option<u32>,
    /// The OS sandbox commands run in: read-only, workspace-write (default)
    /// or off.
    #[arg(long, value_name = "MODE", value_parser = axon_runtime::safety_config::parse_mode)]
    sandbox: Option<axon_protocol::SandboxMode>,
}

pub async fn run(args: AcpArgs) -> u8 {
    let dir = match std::path::absolute(&args.dir) {
        Ok(dir) => dir,
        Err(e) => {
            eprintln!("axon acp: {}: {e}", args.dir.display());
            return exit::USAGE;
        }
    };
    let options = axon_acp::Options {
        dir,
        profile: args.profile.map(Into::into),
        provider: args.provider,
        model: args.model,
        max_iterations: args.max_iterations,
        sandbox: args.sandbox,
    };
    let log: axon_acp::Log = Arc::new(|line: &str| eprintln!("axon acp: {line}"));
    match axon_acp::serve(options, tokio::io::stdin(), tokio::io::stdout(), log).await {
        Ok(()) => exit::OK,
        Err(e) => {
            eprintln!("axon acp: {e:#}");
            exit::FAILED
        }
    }
}
