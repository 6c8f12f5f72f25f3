//! One workspace as every command sees it: its folder, axon's own folders,
//! the config files' layers, the sandbox its commands run in, the trust
//! file that remembers consent, and its MCP servers with their tokens.
//!
//! A session is built on a project ([`crate::open`]), and so is every
//! command that needs a workspace without a session (`axon mcp list`,
//! `axon sandbox`, `axon config show`, `axon mcp serve`): they set up the
//! sandbox, resolve the servers and find their tokens here, the same way,
//! rather than each its own.

use std::path::Path;
use std::sync::Arc;

use anyhow::Result;
use axon_mcp::McpManager;
use axon_mcp::config::ServerConfig;
use axon_process::EnvPolicy;
use axon_protocol::SandboxMode;
use axon_tools::{CommandSandbox, Workspace};

use crate::config::{Dirs, Effective};
use crate::sandbox::{self, Choice, Setup};
use crate::servers::{TrustStore, describe};

/// A workspace with the config files in effect there.
#[derive(Clone)]
pub struct Project {
    pub workspace: Workspace,
    pub dirs: Dirs,
    /// The config files, layered (user, then workspace).
    pub config: Effective,
}

impl Project {
    /// The workspace at `dir`, with axon's folders from the environment
    /// and the config files in effect there.
    pub fn load(dir: &Path) -> Result<Project> {
        Project::of(Workspace::new(dir)?)
    }

    /// `workspace` (already opened), with axon's folders from the
    /// environment and the config files in effect there.
    pub fn of(workspace: Workspace) -> Result<Project> {
        let dirs = Dirs::from_env()?;
        let config = Effective::load(&dirs, workspace.root())?;
        Ok(Project { workspace, dirs, config })
    }

    /// The workspace's canonical root folder.
    pub fn root(&self) -> &Path {
        self.workspace.root()
    }

    /// Where consent to this workspace's servers and hooks is remembered.
    pub fn trust_store(&self) -> TrustStore<'_> {
        TrustStore { data: &self.dirs.data, workspace: self.workspace.root() }
    }

    /// The sandbox chosen for this workspace (the config's `[sandbox]`,
    /// unless `flag` overrides its mode), set up on this machine.
    pub fn sandbox(&self, flag: Option<SandboxMode>) -> Result<Setup> {
        let choice = Choice::new(&self.config, flag)?;
        sandbox::setup(&choice, self.root(), &axon_sandbox::probe(), &self.dirs)
    }

    /// The sandbox of commands nobody can approve case by case (a tool
    /// called directly, or served over MCP): `None` only when the mode is
    /// `off`; an error when the mode cannot be enforced here.
    pub fn sandbox_for_direct_calls(
        &self,
        flag: Option<SandboxMode>,
        via: &str,
    ) -> Result<Option<Arc<CommandSandbox>>> {
        sandbox::for_direct_calls(&self.config, &self.dirs, self.root(), flag, via)
    }

    /// Readies `servers` to start: each that asks for the sandbox gets
    /// `sandbox` (or does not start, saying why), and each HTTP server
    /// finds its saved OAuth tokens.
    pub fn ready_servers(&self, servers: &mut [ServerConfig], sandbox: &Setup) {
        sandbox::resolve_servers(servers, sandbox);
        axon_mcp::auth::locate_tokens(servers, &self.dirs.data);
    }

    /// Starts `servers` (already consented to) in this workspace and waits
    /// for each to be ready or to fail. Servers that ask for the sandbox
    /// get the one a session here would give its commands.
    pub async fn start_servers(&self, servers: Vec<ServerConfig>) -> Result<McpManager> {
        let sandbox = self.sandbox(None)?;
        let mut servers = servers;
        self.ready_servers(&mut servers, &sandbox);
        Ok(McpManager::start(servers, self.root()).await)
    }

    /// The configured server `name` (the user's or the workspace's), with
    /// its token file located.
    pub fn server(&self, name: &str) -> Option<ServerConfig> {
        let mut found: Vec<ServerConfig> = self
            .config
            .user_servers
            .iter()
            .chain(&self.config.workspace_servers)
            .filter(|s| s.name == name)
            .take(1)
            .cloned()
            .collect();
        axon_mcp::auth::locate_tokens(&mut found, &self.dirs.data);
        found.pop()
    }

    /// The servers a command started by hand (`axon mcp list`, `call`, …)
    /// starts. Naming a server is consent to start it; otherwise the
    /// user's own servers start, and each of the workspace's (commands a
    /// repository asks to run) once trusted, or when `ask` gets a yes (the
    /// yes is remembered). `note` is told of every server left out, and
    /// how to allow it. The error says what to do.
    pub fn servers_to_run(
        &self,
        named: Option<&str>,
        ask: &mut dyn FnMut(&ServerConfig, &str) -> bool,
        note: &mut dyn FnMut(String),
    ) -> Result<Vec<ServerConfig>, String> {
        let user = &self.config.user_servers;
        let workspace = &self.config.workspace_servers;
        if user.is_empty() && workspace.is_empty() {
            return Err(format!(
                "no MCP servers are configured. Add one to .mcp.json, e.g.\n  axon mcp add files -- npx -y @modelcontextprotocol/server-filesystem .\nor under [mcp_servers.NAME] in {}",
                self.config.config_file.display()
            ));
        }
        if let Some(name) = named {
            let chosen: Vec<ServerConfig> =
                user.iter().chain(workspace).filter(|s| s.name == name).cloned().collect();
            if chosen.is_empty() {
                return Err(format!("no MCP server named '{name}' is configured"));
            }
            return Ok(chosen);
        }
        let store = self.trust_store();
        let mut servers = user.clone();
        for server in workspace {
            if store.trusts(server) {
                servers.push(server.clone());
                continue;
            }
            let question = format!(
                "Start MCP server {:?} from {} ({})?",
                server.name,
                server.source,
                describe(server)
            );
            if ask(server, &question) {
                if let Err(e) = store.trust(server) {
                    note(format!("your consent could not be remembered: {e}"));
                }
                servers.push(server.clone());
            } else {
                note(format!(
                    "MCP server {:?} from {} was not started (a workspace's servers start after a yes at the terminal, by naming them: axon mcp tools {}, or once trusted: axon mcp trust {})",
                    server.name, server.source, server.name, server.name
                ));
            }
        }
        Ok(servers)
    }

    /// Trusts the workspace's server `name` (every one without a name) for
    /// exactly what it runs now; a line for each.
    pub fn trust_servers(&self, name: Option<&str>) -> Result<Vec<String>> {
        let store = self.trust_store();
        let chosen: Vec<&ServerConfig> = self
            .config
            .workspace_servers
            .iter()
            .filter(|server| name.is_none_or(|name| server.name == name))
            .collect();
        if let (Some(name), true) = (name, chosen.is_empty()) {
            let user = self.config.user_servers.iter().any(|server| server.name == name);
            anyhow::bail!(if user {
                format!("'{name}' is one of your own servers: it needs no trust")
            } else {
                format!("this workspace has no MCP server named '{name}'")
            });
        }
        let mut lines = Vec::new();
        for server in chosen {
            store.trust(server).map_err(anyhow::Error::msg)?;
            lines.push(format!(
                "trusted {} from {} ({})",
                server.name,
                server.source,
                describe(server)
            ));
        }
        Ok(lines)
    }

    /// `sh -c line` in the workspace's root, as the project runs a command
    /// the user typed (`axon sandbox run`): seeing what `env` lets it see,
    /// inside `sandbox` when one is set up, killed when axon dies. It stays
    /// in axon's process group, the terminal's foreground one: a command
    /// that reads the terminal would be stopped by SIGTTIN in a group of
    /// its own.
    pub fn command(
        &self,
        line: &str,
        env: &EnvPolicy,
        sandbox: &Setup,
    ) -> Result<tokio::process::Command> {
        let mut command = tokio::process::Command::new("sh");
        env.configure(&mut command);
        command.arg("-c").arg(line).current_dir(self.root()).env("PWD", self.root());
        command.kill_on_drop(true);
        axon_process::die_with_parent(&mut command);
        if let Some(tool) = &sandbox.tool {
            let prepared = axon_sandbox::prepare(tool.policy())
                .map_err(|e| anyhow::anyhow!("the sandbox could not be set up: {e}"))?;
            prepared.apply_tokio(&mut command);
        }
        Ok(command)
    }
}
