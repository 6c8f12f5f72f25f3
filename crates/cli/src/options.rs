//! The agent's flags, alike for `axon run` and `axon chat`, and the
//! session config they make.

use std::path::Path;

use anyhow::Result;
use axon_runtime::ApprovalPolicy;
use axon_runtime::SessionConfig;
use clap::Args;

use crate::tool_cmd::ProfileArg;

/// The `--provider` help: the providers known by name.
pub(crate) fn provider_help() -> String {
    format!(
        "Provider: one of {}, local (a GGUF model run by axon, see `axon models`) or one \
         defined under [providers.NAME] in the config",
        axon_runtime::provider_names()
    )
}

#[derive(Debug, Default, Args)]
pub struct AgentOptions {
    #[arg(long, help = provider_help())]
    pub provider: Option<String>,
    /// The model (default: the provider's, or the config's `model`).
    #[arg(long)]
    pub model: Option<String>,
    /// Providers a request continues on, in order, when the one in use is
    /// down (rate limited, overloaded, 5xx, unreachable) after its retries;
    /// overrides the config's `fallback`. `--fallback ''` for none.
    #[arg(long, value_name = "NAME,...", value_delimiter = ',')]
    pub fallback: Option<Vec<String>>,
    /// Model calls per request before giving up (default 25).
    #[arg(long)]
    pub max_iterations: Option<u32>,
    /// Stop asking the model once the session has spent this many US
    /// dollars (priced by `[prices]` and the built-in prices); overrides
    /// the config's `max_budget_usd`.
    #[arg(long, value_name = "USD", value_parser = parse_budget)]
    pub max_budget_usd: Option<f64>,
    /// Let tools change files and run commands without asking; the
    /// workspace's own MCP servers and hooks run too.
    #[arg(long, short = 'y', conflicts_with = "read_only")]
    pub yes: bool,
    /// Refuse every tool that changes files or runs commands.
    #[arg(long)]
    pub read_only: bool,
    /// Which tool set: a code workspace (default) or a notes vault.
    #[arg(long, value_enum)]
    pub profile: Option<ProfileArg>,
    /// The OS sandbox commands run in: read-only, workspace-write (default)
    /// or off.
    #[arg(long, value_name = "MODE", value_parser = axon_runtime::safety_config::parse_mode)]
    pub sandbox: Option<axon_protocol::SandboxMode>,
}

impl AgentOptions {
    /// The session config for workspace `dir` with these flags.
    pub fn session_config(&self, dir: &Path) -> Result<SessionConfig> {
        let mut config = SessionConfig::load(dir)?;
        config.provider = self.provider.clone();
        config.model = self.model.clone();
        config.fallback = self
            .fallback
            .clone()
            .map(|names| names.into_iter().filter(|n| !n.trim().is_empty()).collect());
        config.max_iterations = self.max_iterations;
        config.max_budget_usd = self.max_budget_usd;
        config.profile = self.profile.map(Into::into);
        config.sandbox = self.sandbox;
        if self.yes {
            config.approval = Some(ApprovalPolicy::Auto);
            config.workspace_servers = axon_runtime::ServerConsent::Allow;
        } else if self.read_only {
            config.approval = Some(ApprovalPolicy::ReadOnly);
        }
        Ok(config)
    }
}

/// A budget: a finite amount of dollars, not negative.
fn parse_budget(text: &str) -> Result<f64, String> {
    match text.trim().trim_start_matches('$').parse::<f64>() {
        Ok(usd) if usd.is_finite() && usd >= 0.0 => Ok(usd),
        _ => Err(format!("'{text}' is not an amount of US dollars (e.g. 0.50)")),
    }
}
