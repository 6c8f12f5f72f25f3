//! What `axon run` and `axon chat` set up alike: the workspace, the
//! config in effect, the model, the tools, the rules and skills, and the
//! agent's settings.

use std::path::Path;
use std::sync::Arc;

use anyhow::{Result, bail};
use axon_core::{AgentConfig, ApprovalPolicy, ContextStrategy};
use axon_llm::{Provider, ProviderConfig, connect};
use axon_tools::{Profile, ToolRegistry, Workspace};
use clap::Args;

use crate::config::{Dirs, Effective, Overrides};
use crate::guidance::Guidance;
use crate::run_cmd::choose_profile;
use crate::tool_cmd::ProfileArg;

/// An MCP server's state as the event front ends render.
pub fn mcp_status_event(server: &str, state: &axon_mcp::ServerState) -> axon_protocol::AgentEvent {
    use axon_mcp::ServerState;
    let (state, message) = match state {
        ServerState::Connecting => ("connecting", None),
        ServerState::Ready => ("ready", None),
        ServerState::Error(message) => ("error", Some(message.clone())),
        ServerState::Closed => ("closed", None),
    };
    axon_protocol::AgentEvent::McpStatus {
        server: server.to_string(),
        state: state.to_string(),
        message,
    }
}

/// The agent's options, alike for `axon run` and `axon chat`.
#[derive(Debug, Default, Args)]
pub struct AgentOptions {
    /// Provider: a preset (openai, deepseek, anthropic, ollama, openrouter) or one from the config.
    #[arg(long)]
    pub provider: Option<String>,
    /// The model (default: the provider's, or the config's `model`).
    #[arg(long)]
    pub model: Option<String>,
    /// Model calls per request before giving up (default 25).
    #[arg(long)]
    pub max_iterations: Option<u32>,
    /// Let tools change files and run commands without asking.
    #[arg(long, short = 'y', conflicts_with = "read_only")]
    pub yes: bool,
    /// Refuse every tool that changes files or runs commands.
    #[arg(long)]
    pub read_only: bool,
    /// Which tool set: a code workspace (default) or a notes vault.
    #[arg(long, value_enum)]
    pub profile: Option<ProfileArg>,
}

pub struct Setting {
    pub workspace: Workspace,
    pub dirs: Dirs,
    pub config: Effective,
    pub provider_config: ProviderConfig,
    pub provider: Arc<dyn Provider>,
    pub profile: Profile,
    pub approval: ApprovalPolicy,
    pub guidance: Guidance,
    /// The profile's tools, `todo`, and `load_skill` when skills are listed.
    pub registry: ToolRegistry,
    pub agent_config: AgentConfig,
}

impl Setting {
    /// Reads everything; config warnings and guidance problems go to
    /// stderr (before any full-screen UI starts). A model the built-in
    /// table does not know has its window asked of its server.
    pub async fn load(dir: &Path, choices: &AgentOptions) -> Result<Setting> {
        let workspace = Workspace::new(dir)?;
        let dirs = Dirs::from_env()?;
        let config = Effective::load(&dirs, workspace.root())?;
        for warning in &config.refused {
            eprintln!("axon: warning: {warning}");
        }
        let provider_config = config.provider(&Overrides {
            provider: choices.provider.clone(),
            model: choices.model.clone(),
        })?;
        let provider = connect(&provider_config).await?;
        let context_strategy = match config.file.context.strategy.as_deref() {
            None | Some("trim") => ContextStrategy::Trim,
            Some("summarize" | "summarise") => ContextStrategy::Summarize,
            Some(other) => {
                bail!("unknown context.strategy '{other}' in the config; use trim or summarize")
            }
        };
        let profile = choose_profile(choices.profile, &config)?;
        let approval = if choices.yes {
            ApprovalPolicy::Auto
        } else if choices.read_only {
            ApprovalPolicy::ReadOnly
        } else {
            match config.file.approval.as_deref() {
                None | Some("ask") => ApprovalPolicy::Ask,
                Some("auto") => ApprovalPolicy::Auto,
                Some("read-only") => ApprovalPolicy::ReadOnly,
                Some(other) => {
                    bail!("unknown approval '{other}' in the config; use ask, auto or read-only")
                }
            }
        };
        let guidance = crate::guidance::load(&config, &dirs, workspace.root());
        guidance.report_problems();
        let mut registry = profile.registry_with_env(config.env_policy(&[])?);
        registry.register(axon_core::Todo);
        let system_prompt = guidance.system_prompt(workspace.root(), &mut registry);
        let agent_config = AgentConfig {
            system_prompt,
            rule_count: guidance.rules.len(),
            max_iterations: choices
                .max_iterations
                .or(config.file.max_iterations)
                .unwrap_or(25)
                .max(1),
            approval,
            context_strategy,
            ..AgentConfig::default()
        };
        Ok(Setting {
            workspace,
            dirs,
            config,
            provider_config,
            provider,
            profile,
            approval,
            guidance,
            registry,
            agent_config,
        })
    }

    /// Another model of the configured provider (`/model NAME`).
    pub async fn other_model(&self, model: &str) -> Result<(ProviderConfig, Arc<dyn Provider>)> {
        let overrides = Overrides {
            provider: Some(self.provider_config.name.clone()),
            model: Some(model.to_string()),
        };
        let config = self.config.provider(&overrides)?;
        let provider = connect(&config).await?;
        Ok((config, provider))
    }
}
