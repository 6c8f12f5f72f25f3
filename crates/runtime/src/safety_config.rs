//! The `[sandbox]` and `[permissions]` tables of a config file: how layers
//! combine, and what a workspace's own file may not loosen.
//!
//! A repository must not be able to grant itself permissions: its
//! `.axon/config.toml` may make the sandbox stricter (`mode = "read-only"`,
//! `network = false`) and add `ask` and `deny` rules, but an `allow` rule,
//! `mode = "off"`, the network, extra writable folders or commands run
//! without approval come only from the user's own config or a flag.

use axon_protocol::SandboxMode;
use serde::Deserialize;

/// `[sandbox]`: the OS sandbox `shell` commands run in.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxFile {
    /// `read-only`, `workspace-write` (the default) or `off`.
    pub mode: Option<SandboxMode>,
    /// Whether sandboxed commands may use the network (default false).
    pub network: Option<bool>,
    /// More folders sandboxed commands may write (`~/` is the home folder).
    #[serde(default)]
    pub writable_roots: Vec<String>,
    /// Whether a command that runs sandboxed runs without asking (default
    /// true: the sandbox is the boundary).
    pub auto_approve: Option<bool>,
    /// What a call asking to run `unsandboxed` gets under `--yes` (which
    /// allows commands, not leaving the sandbox): `refuse` (the default),
    /// `ask` (as without `--yes`) or `allow`.
    pub unsandboxed_under_yes: Option<UnsandboxedUnderYes>,
    /// Whether commands get a mount namespace where the kernel allows one
    /// (default true); false keeps the Landlock-only mode and its price.
    pub mount_namespace: Option<bool>,
}

/// `[sandbox] unsandboxed_under_yes`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum UnsandboxedUnderYes {
    #[default]
    Refuse,
    Ask,
    Allow,
}

impl UnsandboxedUnderYes {
    pub fn name(self) -> &'static str {
        match self {
            UnsandboxedUnderYes::Refuse => "refuse",
            UnsandboxedUnderYes::Ask => "ask",
            UnsandboxedUnderYes::Allow => "allow",
        }
    }
}

impl SandboxFile {
    pub(crate) fn merge(&mut self, other: SandboxFile) {
        self.mode = other.mode.or(self.mode);
        self.network = other.network.or(self.network);
        self.auto_approve = other.auto_approve.or(self.auto_approve);
        self.unsandboxed_under_yes = other.unsandboxed_under_yes.or(self.unsandboxed_under_yes);
        self.mount_namespace = other.mount_namespace.or(self.mount_namespace);
        self.writable_roots.extend(other.writable_roots);
    }

    /// Drops what a workspace may not set, saying what through `refuse`.
    pub(crate) fn restrict_to_workspace(&mut self, refuse: &mut dyn FnMut(String)) {
        if let Some(mode) = self.mode
            && mode != SandboxMode::ReadOnly
        {
            refuse(format!("sandbox.mode = \"{}\"", mode_name(mode)));
            self.mode = None;
        }
        if self.network == Some(true) {
            refuse("sandbox.network = true".to_string());
            self.network = None;
        }
        if !std::mem::take(&mut self.writable_roots).is_empty() {
            refuse("sandbox.writable_roots".to_string());
        }
        if self.auto_approve == Some(true) {
            refuse("sandbox.auto_approve = true".to_string());
            self.auto_approve = None;
        }
        if let Some(under_yes) = self.unsandboxed_under_yes
            && under_yes != UnsandboxedUnderYes::Refuse
        {
            refuse(format!("sandbox.unsandboxed_under_yes = \"{}\"", under_yes.name()));
            self.unsandboxed_under_yes = None;
        }
        // Off is stricter (a whole .git read-only); on would undo the
        // user's choice of Landlock-only.
        if self.mount_namespace == Some(true) {
            refuse("sandbox.mount_namespace = true".to_string());
            self.mount_namespace = None;
        }
    }
}

/// `[permissions]`: standing rules over tool calls (`shell(cargo test:*)`,
/// `edit_file(src/**)`, `mcp_github_*`); deny wins over ask over allow.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PermissionsFile {
    #[serde(default)]
    pub allow: Vec<String>,
    #[serde(default)]
    pub ask: Vec<String>,
    #[serde(default)]
    pub deny: Vec<String>,
    /// `false` removes the built-in ask rules for secret files
    /// (`axon_permissions::SECRET_FILES`: `.env*`, `*.pem`, `id_rsa*`…).
    pub ask_secret_files: Option<bool>,
}

impl PermissionsFile {
    pub(crate) fn restrict_to_workspace(&mut self, refuse: &mut dyn FnMut(String)) {
        for rule in std::mem::take(&mut self.allow) {
            refuse(format!("permissions.allow \"{rule}\""));
        }
        if self.ask_secret_files == Some(false) {
            refuse("permissions.ask_secret_files = false".to_string());
            self.ask_secret_files = None;
        }
    }

    pub fn is_empty(&self) -> bool {
        self.allow.is_empty()
            && self.ask.is_empty()
            && self.deny.is_empty()
            && self.ask_secret_files.is_none()
    }
}

/// The mode as config files and flags spell it (the sandbox crate's names).
pub fn mode_name(mode: SandboxMode) -> &'static str {
    sandbox_mode(mode).name()
}

/// The protocol's mode as the sandbox crate names it.
pub(crate) fn sandbox_mode(mode: SandboxMode) -> axon_sandbox::Mode {
    match mode {
        SandboxMode::ReadOnly => axon_sandbox::Mode::ReadOnly,
        SandboxMode::WorkspaceWrite => axon_sandbox::Mode::WorkspaceWrite,
        SandboxMode::Off => axon_sandbox::Mode::Off,
    }
}

/// A mode from a flag's text.
pub fn parse_mode(text: &str) -> Result<SandboxMode, String> {
    match text.parse::<axon_sandbox::Mode>() {
        Ok(axon_sandbox::Mode::ReadOnly) => Ok(SandboxMode::ReadOnly),
        Ok(axon_sandbox::Mode::WorkspaceWrite) => Ok(SandboxMode::WorkspaceWrite),
        Ok(axon_sandbox::Mode::Off) => Ok(SandboxMode::Off),
        Err(e) => Err(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workspace_can_tighten_the_sandbox_but_not_loosen_it() {
        let mut refused = Vec::new();
        let mut loose: SandboxFile = toml::from_str(
            "mode = \"off\"\nnetwork = true\nwritable_roots = [\"/\"]\nauto_approve = true\n\
             unsandboxed_under_yes = \"allow\"\nmount_namespace = true\n",
        )
        .unwrap();
        loose.restrict_to_workspace(&mut |what| refused.push(what));
        assert_eq!(refused.len(), 6, "{refused:?}");
        assert!(loose.mode.is_none() && loose.network.is_none() && loose.writable_roots.is_empty());
        assert!(loose.unsandboxed_under_yes.is_none());
        assert!(refused.contains(&"sandbox.unsandboxed_under_yes = \"allow\"".to_string()));

        let mut strict: SandboxFile = toml::from_str(
            "mode = \"read-only\"\nnetwork = false\nauto_approve = false\n\
             unsandboxed_under_yes = \"refuse\"\nmount_namespace = false\n",
        )
        .unwrap();
        strict.restrict_to_workspace(&mut |what| panic!("refused {what}"));
        assert_eq!(strict.mode, Some(SandboxMode::ReadOnly));
    }

    #[test]
    fn a_workspace_cannot_allow_but_can_ask_and_deny() {
        let mut refused = Vec::new();
        let mut rules: PermissionsFile = toml::from_str(
            "allow = [\"shell\"]\nask = [\"shell(git push:*)\"]\ndeny = [\"shell(rm:*)\"]\n",
        )
        .unwrap();
        rules.restrict_to_workspace(&mut |what| refused.push(what));
        assert_eq!(refused, ["permissions.allow \"shell\""]);
        assert!(rules.allow.is_empty());
        assert_eq!(rules.ask.len() + rules.deny.len(), 2);
    }

    #[test]
    fn modes_read_as_written() {
        for mode in [SandboxMode::ReadOnly, SandboxMode::WorkspaceWrite, SandboxMode::Off] {
            assert_eq!(parse_mode(mode_name(mode)), Ok(mode));
        }
        assert!(parse_mode("strict").unwrap_err().contains("read-only"));
    }
}
