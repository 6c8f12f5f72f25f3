//! The sandbox a session's `shell` commands run in: the mode chosen (the
//! front end's flag, else the config, else `workspace-write`), whether this
//! machine enforces it, and the private temp folder commands get.
//!
//! Guarantees: a mode that cannot be enforced is never silently dropped:
//! the session starts with a warning saying so, and every command is asked
//! about (`Commands::Unenforced`). `off` is only ever the user's choice
//! (their config or a flag; a workspace file cannot set it).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use axon_protocol::{SandboxInfo, SandboxMode};
use axon_sandbox::{Policy, Support};
use axon_tools::CommandSandbox;

use crate::config::{Dirs, Effective};

// For `axon sandbox check` and `axon sandbox run`, which set a sandbox up
// by hand to show or use it.
use crate::approvals::Commands;
use crate::safety_config::{UnsandboxedUnderYes, mode_name, sandbox_mode as mode};
pub use axon_sandbox::{probe, self_test};

/// What the config and the front end chose, before the kernel has a say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub mode: SandboxMode,
    pub network: bool,
    pub writable_roots: Vec<PathBuf>,
    pub auto_approve: bool,
    pub unsandboxed_under_yes: UnsandboxedUnderYes,
    /// `[sandbox] mount_namespace` (a workspace may turn it off: the
    /// Landlock-only mode writes less).
    pub mount_namespace: bool,
}

impl Choice {
    /// The flag's mode if given, else the config's; `~/` in writable roots
    /// is the home folder.
    pub fn new(config: &Effective, flag: Option<SandboxMode>) -> Result<Choice> {
        let file = &config.file.sandbox;
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let writable_roots = file
            .writable_roots
            .iter()
            .map(|root| {
                let path = match (root.strip_prefix("~/"), &home) {
                    (Some(rest), Some(home)) => home.join(rest),
                    _ => PathBuf::from(root),
                };
                if !path.is_absolute() {
                    anyhow::bail!(
                        "sandbox.writable_roots: \"{root}\" is not an absolute path (use /… or ~/…)"
                    );
                }
                Ok(path)
            })
            .collect::<Result<_>>()?;
        Ok(Choice {
            mode: flag.or(file.mode).unwrap_or(SandboxMode::WorkspaceWrite),
            network: file.network.unwrap_or(false),
            writable_roots,
            auto_approve: file.auto_approve.unwrap_or(true),
            unsandboxed_under_yes: file.unsandboxed_under_yes.unwrap_or_default(),
            mount_namespace: file.mount_namespace.unwrap_or(true),
        })
    }

    /// The policy for `workspace` (its canonical root); its temp folder is
    /// set by [`CommandSandbox::new`].
    pub fn policy(&self, workspace: &Path) -> Policy {
        let mut policy = Policy::new(mode(self.mode), workspace, std::env::temp_dir());
        policy.network = self.network;
        policy.writable_roots = self.writable_roots.clone();
        policy.mount_namespace = self.mount_namespace;
        policy
    }

    /// `workspace-write, network off`.
    pub fn summary(&self) -> String {
        match self.mode {
            SandboxMode::Off => "off".to_string(),
            mode => {
                format!("{}, network {}", mode_name(mode), if self.network { "on" } else { "off" })
            }
        }
    }
}

/// A session's sandbox, set up.
pub struct Setup {
    /// For the `shell` tool; `None` when commands run unconfined.
    pub tool: Option<Arc<CommandSandbox>>,
    /// For the gate in front of each call.
    pub commands: Commands,
    pub info: SandboxInfo,
    /// Said once at start when the chosen mode cannot be enforced.
    pub warning: Option<String>,
}

/// Why `workspace-write` would hand commands more than a project: the
/// workspace is the filesystem's root or the home folder, or holds axon's
/// own config or data (a command could rewrite the config or the trust
/// file and grant itself anything).
fn too_wide(workspace: &Path, dirs: &Dirs) -> Option<String> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let canonical =
        |path: &Path| std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    if workspace.parent().is_none() {
        return Some("the workspace is the filesystem's root".to_string());
    }
    if home.as_deref().map(canonical).as_deref() == Some(workspace) {
        return Some("the workspace is your home folder".to_string());
    }
    let config = dirs.config_file.parent().map(canonical);
    for (what, path) in [("config", config), ("data", Some(canonical(&dirs.data)))] {
        if let Some(path) = path
            && path.starts_with(workspace)
        {
            return Some(format!("the workspace holds axon's {what} folder ({})", path.display()));
        }
    }
    None
}

/// Sets up `choice` for `workspace` on this machine (`support`).
/// `workspace-write` in a folder [`too_wide`] for it becomes `read-only`,
/// with a warning saying why and how to choose otherwise.
pub fn setup(choice: &Choice, workspace: &Path, support: &Support, dirs: &Dirs) -> Result<Setup> {
    let narrowed;
    let (choice, narrowing) = match too_wide(workspace, dirs) {
        Some(why) if choice.mode == SandboxMode::WorkspaceWrite => {
            narrowed = Choice { mode: SandboxMode::ReadOnly, ..choice.clone() };
            (&narrowed, Some(why))
        }
        _ => (choice, None),
    };
    let mut setup = setup_choice(choice, workspace, support)?;
    if let Some(why) = narrowing {
        setup.warning = Some(format!(
            "commands are sandboxed read-only, not workspace-write: {why}. Open axon in a project \
             folder, or pass --sandbox off to run them unsandboxed."
        ));
    }
    Ok(setup)
}

fn setup_choice(choice: &Choice, workspace: &Path, support: &Support) -> Result<Setup> {
    let info = |enforced: bool, detail: String| SandboxInfo {
        mode: choice.mode,
        network: choice.network,
        enforced,
        detail,
    };
    if choice.mode == SandboxMode::Off {
        return Ok(Setup {
            tool: None,
            commands: Commands::Unsandboxed,
            info: info(false, "off: commands run with your full rights".to_string()),
            warning: None,
        });
    }
    let policy = choice.policy(workspace);
    if let Err(why) = support.can_enforce(&policy) {
        let warning = format!(
            "the {} sandbox cannot be enforced on this machine: {why}. Every command will be \
             asked about; pass --sandbox off to run them unsandboxed without asking.",
            mode_name(choice.mode)
        );
        return Ok(Setup {
            tool: None,
            commands: Commands::Unenforced(why.clone()),
            info: info(false, why),
            warning: Some(warning),
        });
    }
    let temp = axon_process::private_temp("axon-sandbox-")
        .context("cannot create the sandbox's private temp folder")?;
    let sandbox = CommandSandbox::new(policy, temp);
    sandbox
        .policy()
        .validate()
        .map_err(|e| anyhow::anyhow!("the sandbox setting is wrong: {e}"))?;
    Ok(Setup {
        tool: Some(Arc::new(sandbox)),
        commands: Commands::Sandboxed {
            auto_approve: choice.auto_approve,
            under_yes: choice.unsandboxed_under_yes,
        },
        info: info(true, enforced_by(support)),
        warning: None,
    })
}

/// The sandbox of commands no session's gate stands in front of (a
/// user's `axon tool call shell`, an MCP client's `shell` through `axon
/// mcp serve`): the mode the flag or the config chose, set up here, where
/// `unsandboxed: true` is refused since nobody can approve it (`via` names
/// the command, for that message). `Ok(None)`: the mode is off, commands
/// run unconfined as the user chose. An error when the mode cannot be
/// enforced on this machine: nobody could be asked, so commands must not
/// run; it says to pass `--sandbox off`.
pub fn for_direct_calls(
    config: &Effective,
    dirs: &Dirs,
    workspace: &Path,
    flag: Option<SandboxMode>,
    via: &str,
) -> Result<Option<Arc<CommandSandbox>>> {
    let choice = Choice::new(config, flag)?;
    let setup = setup(&choice, workspace, &axon_sandbox::probe(), dirs)?;
    match (setup.tool, setup.commands) {
        (Some(tool), _) => {
            let tool = Arc::try_unwrap(tool).map_err(|_| {
                anyhow::anyhow!("the sandbox of {via} is shared before it is set up")
            })?;
            Ok(Some(Arc::new(tool.without_leaving(format!(
                "Refused: `unsandboxed: true` cannot be approved through {via}, so commands run \
                 in the sandbox ({}). To run commands unsandboxed, the user can start {via} \
                 with --sandbox off.",
                choice.summary()
            )))))
        }
        (None, Commands::Unsandboxed) => Ok(None),
        (None, _) => anyhow::bail!(
            "{}; commands cannot run sandboxed here and nobody can be asked through {via}: \
             pass --sandbox off to run them unsandboxed",
            setup.warning.unwrap_or(setup.info.detail)
        ),
    }
}

/// Gives each server that asks for the sandbox (`sandbox = true`) this
/// session's, or the reason it cannot have one (it then does not start).
pub fn resolve_servers(servers: &mut [axon_mcp::config::ServerConfig], setup: &Setup) {
    use axon_mcp::config::ServerSandbox;
    for server in servers.iter_mut().filter(|s| s.sandbox == ServerSandbox::Wanted) {
        server.sandbox = match (&setup.tool, &setup.commands) {
            (Some(sandbox), _) => ServerSandbox::In(Arc::clone(sandbox)),
            (None, Commands::Unenforced(why)) => {
                ServerSandbox::Unavailable(format!("this machine cannot enforce it: {why}"))
            }
            (None, _) => ServerSandbox::Unavailable(
                "the sandbox is off (--sandbox off, or [sandbox] mode = \"off\")".to_string(),
            ),
        };
    }
}

/// What enforces the sandbox (`axon sandbox check` says in detail).
fn enforced_by(support: &Support) -> String {
    match support.landlock_abi {
        Some(_) => "Landlock and seccomp".to_string(),
        None => "seccomp".to_string(),
    }
}
