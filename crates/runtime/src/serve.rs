//! What `axon mcp serve` offers an MCP host, decided once, here: the
//! profile's built-in tools (only those that change nothing when
//! read-only), their `shell` inside the project's sandbox like every
//! other command of the project, and the agent itself as `axon_run` when
//! a provider is configured. The front end only carries it over stdio or
//! HTTP; nothing here prints, what should be said is returned.

use std::sync::Arc;

use anyhow::{Context, Result};
use axon_core::ApprovalPolicy;
use axon_mcp::server::ToolServer;
use axon_process::EnvPolicy;
use axon_protocol::SandboxMode;
use axon_tools::{CommandSandbox, Profile, ToolContext, ToolRegistry};

use crate::project::Project;
use crate::{RunTool, SessionConfig};

/// How the user asked the server to be (the command's flags).
#[derive(Clone, Debug, Default)]
pub struct ServeOptions {
    /// The tool set; else the config's, else code.
    pub profile: Option<Profile>,
    /// Only the tools that change nothing (no writes, no shell).
    pub read_only: bool,
    /// Overrides the config's `[sandbox] mode` for `shell` and `axon_run`.
    pub sandbox: Option<SandboxMode>,
    /// Offer `axon_run` when a provider is configured.
    pub agent: bool,
    /// `axon_run`'s provider and model (else the configured ones); naming
    /// either makes not having `axon_run` an error.
    pub provider: Option<String>,
    pub model: Option<String>,
    /// Variables no command may see (the HTTP token's, `--token-env`).
    pub secret_vars: Vec<String>,
}

/// The server to run, what it serves in one line, and warnings to show
/// (the config's own, `project.config.refused`, are the caller's to show).
pub struct Served {
    pub server: ToolServer,
    pub summary: String,
    pub warnings: Vec<String>,
}

/// Builds the server for `project` as `options` ask.
pub async fn serve(project: Project, options: &ServeOptions) -> Result<Served> {
    let mut warnings = Vec::new();
    let mut session = SessionConfig::of(project.clone());
    session.profile = options.profile;
    let profile = session.profile()?;
    let root = project.root().display().to_string();
    let context = ToolContext::new(project.workspace.clone());
    session.secret_vars = options.secret_vars.clone();
    let secret_vars: Vec<&str> = options.secret_vars.iter().map(String::as_str).collect();
    let env = project.config.env_policy(&secret_vars)?;
    // A client's commands run in the project's sandbox; a mode this
    // machine cannot enforce stops the server (nobody could be asked).
    let sandbox = if options.read_only {
        None
    } else {
        project.sandbox_for_direct_calls(options.sandbox, "axon mcp serve")?
    };
    let sandbox_summary = match &sandbox {
        Some(sandbox) => format!(", commands sandboxed ({})", sandbox.describe()),
        None if options.read_only => String::new(),
        None => ", commands UNSANDBOXED (--sandbox off)".to_string(),
    };
    session.sandbox = options.sandbox;
    let mut registry = served_tools(profile, options.read_only, &env, sandbox);
    if options.agent {
        session.provider = options.provider.clone();
        session.model = options.model.clone();
        // The host approved the call; the agent gets what the server serves.
        session.approval =
            Some(if options.read_only { ApprovalPolicy::ReadOnly } else { ApprovalPolicy::Auto });
        match RunTool::new(session).await {
            Ok(tool) => {
                // The agent follows the same rules and skills as `axon run`;
                // their problems are said once, here.
                warnings.extend(tool.problems().into_iter().map(|p| format!("warning: {p}")));
                registry.try_register(Arc::new(tool)).context("cannot offer axon_run")?;
            }
            // Asked for by name: not having it is an error, not a note.
            Err(e) if options.provider.is_some() || options.model.is_some() => return Err(e),
            Err(e) => warnings.push(format!("axon_run is not offered: {e:#}")),
        }
    }
    let mode = if options.read_only { ", read-only" } else { "" };
    let summary = format!("{} tools for {root}{mode}{sandbox_summary}", registry.len());
    let instructions = format!(
        "axon's tools for the workspace at {root}. Paths are relative to that folder, and nothing \
         outside it can be read or written through them.{}",
        if options.read_only { " This server is read-only." } else { "" }
    );
    let mask_secrets = project.config.file.secrets != Some(crate::config::SecretsMode::Off);
    let server = ToolServer::new(Arc::new(registry), context, instructions, mask_secrets);
    Ok(Served { server, summary, warnings })
}

/// The profile's tools, only those that change nothing when `read_only`.
pub fn served_tools(
    profile: Profile,
    read_only: bool,
    env: &EnvPolicy,
    sandbox: Option<Arc<CommandSandbox>>,
) -> ToolRegistry {
    let mut registry = profile.registry_with(env.clone(), sandbox);
    if read_only {
        // shell_output reads commands shell started: without shell, none.
        registry.retain(|spec| spec.annotations.read_only && spec.name != "shell_output");
    }
    registry
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_only_serves_only_tools_that_change_nothing() {
        let registry = served_tools(Profile::Code, true, &EnvPolicy::default(), None);
        assert!(registry.specs().all(|spec| spec.annotations.read_only));
        assert!(!registry.contains("shell") && !registry.contains("write_file"));
        assert!(registry.contains("read_file"));
    }
}
