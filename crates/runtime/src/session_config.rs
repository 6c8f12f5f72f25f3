//! What a session is built from: the project (the workspace, axon's
//! folders, the config files' layers) and every choice a front end's flags
//! make, each with its default. Reading it decides nothing yet; `open`
//! does.

use std::path::Path;
use std::sync::Arc;

use anyhow::{Result, bail};
use axon_core::ApprovalPolicy;
use axon_llm::Provider;
use axon_mcp::config::ServerConfig;
use axon_protocol::{Mode, SandboxMode};
use axon_tools::{Profile, Workspace};

use crate::config::{Dirs, Effective, Overrides};
use crate::guidance::Guidance;
use crate::journal::SessionChoice;
use crate::project::Project;
use crate::servers::ServerConsent;

/// The models a session may switch to ([`SessionConfig::offered_models`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OfferedModels {
    /// The provider's name (`deepseek`, a `[providers.NAME]`).
    pub provider: String,
    /// The model sessions start with.
    pub current: String,
    /// What the provider lists (sorted); `None` when it lists nothing, so
    /// any name may be tried (the switch checks it).
    pub listed: Option<Vec<String>>,
}

/// Everything a session is built from: the config files' layers and what
/// the front end's flags chose.
#[derive(Clone)]
pub struct SessionConfig {
    pub workspace: Workspace,
    pub dirs: Dirs,
    /// The config files, layered (user, then workspace).
    pub config: Effective,
    /// A provider by name (preset or `[providers.NAME]`); else the config's
    /// or the one whose key is set.
    pub provider: Option<String>,
    pub model: Option<String>,
    /// Overrides the config's `fallback` list (`Some(vec![])`: none).
    pub fallback: Option<Vec<String>>,
    pub max_iterations: Option<u32>,
    /// Overrides the config's `max_budget_usd` (`--max-budget-usd`).
    pub max_budget_usd: Option<f64>,
    /// Overrides the config's `approval`.
    pub approval: Option<ApprovalPolicy>,
    /// Overrides the config's `profile`.
    pub profile: Option<Profile>,
    pub session: SessionChoice,
    pub mode: Mode,
    /// Someone answers approval requests. Without, `ask` refuses calls that
    /// need one and says why.
    pub interactive: bool,
    /// How long an interactive session waits for the next prompt after a
    /// turn before its Notification hooks hear `idle_prompt` (a minute, as
    /// in Claude Code).
    pub idle_notice: std::time::Duration,
    /// The `reason` SessionEnd hooks hear when the session is shut down:
    /// `prompt_input_exit` from the terminal UI, `other` elsewhere.
    pub end_reason: axon_hooks::EndReason,
    /// Whether the workspace's own MCP servers (commands a repository asks
    /// to run) may start.
    pub workspace_servers: ServerConsent,
    /// MCP servers the front end brings (an editor's own list): started
    /// with the user's, since the user configured them there.
    pub client_servers: Vec<ServerConfig>,
    /// Start MCP servers at all (a compaction needs none).
    pub start_servers: bool,
    /// Send the resumed conversation as a `history` event.
    pub replay_history: bool,
    /// A plan revised after a failed step runs without asking again.
    pub auto_approve_plans: bool,
    /// Save the conversation as a session (resumable, listed).
    pub record: bool,
    /// More variables commands must never see (keys only the front end
    /// knows of, such as `axon mcp serve --token-env`).
    pub secret_vars: Vec<String>,
    /// This provider instead of connecting to the configured one (a front
    /// end that serves many short sessions connects once).
    pub connected: Option<Arc<dyn Provider>>,
    /// Each `action` of a call that changes something carries its preview
    /// (a front end that shows every edit's diff).
    pub preview_actions: bool,
    /// Rules and skills already loaded (and their problems reported), for
    /// a front end that opens many sessions; else they are loaded here.
    pub guidance: Option<Arc<Guidance>>,
    /// Overrides the config's `[sandbox] mode` (`--sandbox`).
    pub sandbox: Option<SandboxMode>,
    /// The front end shows MCP servers' forms (`elicitation` events) and
    /// answers them (`elicit`); without, a form gets its defaults or is
    /// declined.
    pub elicitation: bool,
    /// What goes out as OpenTelemetry metrics and traces: the OTEL_*
    /// variables as `new` read them (under the config's `[telemetry]`); a
    /// test sets its own.
    pub telemetry: crate::telemetry::TelemetryConfig,
}

impl SessionConfig {
    /// The workspace at `dir` with the config files in effect there, and
    /// every choice at its default.
    pub fn load(dir: &Path) -> Result<SessionConfig> {
        Ok(SessionConfig::of(Project::load(dir)?))
    }

    /// A session of `project`, every choice at its default.
    pub fn of(project: Project) -> SessionConfig {
        SessionConfig::new(project.workspace, project.dirs, project.config)
    }

    /// The project this session is of: its workspace, folders and config.
    pub fn project(&self) -> Project {
        Project {
            workspace: self.workspace.clone(),
            dirs: self.dirs.clone(),
            config: self.config.clone(),
        }
    }

    /// `workspace` with the config files already read, every choice at its
    /// default.
    pub fn new(workspace: Workspace, dirs: Dirs, config: Effective) -> SessionConfig {
        SessionConfig {
            workspace,
            dirs,
            provider: None,
            model: None,
            max_iterations: None,
            max_budget_usd: None,
            approval: None,
            profile: None,
            session: SessionChoice::New,
            mode: Mode::React,
            interactive: false,
            idle_notice: std::time::Duration::from_secs(60),
            end_reason: axon_hooks::EndReason::Other,
            workspace_servers: ServerConsent::Refuse,
            client_servers: Vec::new(),
            start_servers: true,
            replay_history: false,
            auto_approve_plans: false,
            record: true,
            secret_vars: Vec::new(),
            connected: None,
            guidance: None,
            preview_actions: false,
            sandbox: None,
            elicitation: false,
            fallback: None,
            telemetry: crate::telemetry::TelemetryConfig::from_env(&config.file.telemetry),
            config,
        }
    }

    /// The approval policy in effect.
    pub fn approval(&self) -> Result<ApprovalPolicy> {
        if let Some(approval) = self.approval {
            return Ok(approval);
        }
        Ok(match self.config.file.approval.as_deref() {
            None | Some("ask") => ApprovalPolicy::Ask,
            Some("auto") => ApprovalPolicy::Auto,
            Some("read-only") => ApprovalPolicy::ReadOnly,
            Some(other) => {
                bail!("unknown approval '{other}' in the config; use ask, auto or read-only")
            }
        })
    }

    /// The model sessions would talk to (the provider's and model's names),
    /// without connecting; `None` when no provider is configured.
    pub fn model(&self) -> Option<(String, String)> {
        let overrides = Overrides { provider: self.provider.clone(), model: self.model.clone() };
        let config = self.config.provider(&overrides).ok()?;
        Some((config.name, config.model))
    }

    /// The models a client may pick from for sessions of this config (a
    /// harness's `-m`, an editor's picker): the current one and what the
    /// provider lists. The list is asked of the provider, bounded by a few
    /// seconds; a provider that lists none (or did not answer) offers only
    /// the current model, and `None` means no provider is configured.
    pub async fn offered_models(&self) -> Option<OfferedModels> {
        let overrides = Overrides { provider: self.provider.clone(), model: self.model.clone() };
        let config = self.config.provider(&overrides).ok()?;
        let listed =
            tokio::time::timeout(std::time::Duration::from_secs(5), axon_llm::list_models(&config))
                .await
                .ok()
                .flatten();
        Some(OfferedModels { provider: config.name, current: config.model, listed })
    }

    /// The tool set: the front end's choice, else the config's, else code.
    pub fn profile(&self) -> Result<Profile> {
        choose_profile(self.profile, &self.config)
    }
}

/// The tool set: `chosen`, else the config's `profile`, else code.
pub fn choose_profile(chosen: Option<Profile>, config: &Effective) -> Result<Profile> {
    Ok(match (chosen, config.file.profile.as_deref()) {
        (Some(p), _) => p,
        (None, None | Some("code")) => Profile::Code,
        (None, Some("vault")) => Profile::Vault,
        (None, Some(other)) => bail!("unknown profile '{other}' in the config; use code or vault"),
    })
}
