//! What a sandboxed command may do: the [`Mode`] and the [`Policy`] built
//! from it.
//!
//! Guarantees: a [`Mode`] round-trips through its kebab-case name (`FromStr`,
//! `Display`, serde) and an unknown name is an error listing the valid ones;
//! [`Policy::validate`] refuses a policy `prepare` could only honour by
//! writing somewhere the mode forbids (a relative path, a protected entry
//! that is not a plain path inside the workspace, a writable folder that is
//! or contains the workspace while the workspace must keep read-only parts).
//! [`Policy::DEFAULT_PROTECTED`] is the one list of what a command may not
//! change in a workspace.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// How much a sandboxed command may write.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Deserialize, serde::Serialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Read anything; write only `/dev/null`-like devices and the private
    /// temp folder.
    ReadOnly,
    /// Also write inside the workspace (its protected entries, see
    /// [`Policy::DEFAULT_PROTECTED`], stay read-only) and the extra
    /// writable roots.
    #[default]
    WorkspaceWrite,
    /// No OS sandbox: commands run as they would without axon.
    Off,
}

impl Mode {
    /// Every mode's name, in the order help texts list them.
    pub const NAMES: [&'static str; 3] = ["read-only", "workspace-write", "off"];

    /// The name used in config files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Mode::ReadOnly => "read-only",
            Mode::WorkspaceWrite => "workspace-write",
            Mode::Off => "off",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A sandbox mode name that is not one of [`Mode::NAMES`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown sandbox mode `{0}`: use read-only, workspace-write or off")]
pub struct ParseModeError(pub String);

impl FromStr for Mode {
    type Err = ParseModeError;

    fn from_str(text: &str) -> Result<Mode, ParseModeError> {
        match text.trim() {
            "read-only" => Ok(Mode::ReadOnly),
            "workspace-write" => Ok(Mode::WorkspaceWrite),
            "off" => Ok(Mode::Off),
            other => Err(ParseModeError(other.to_owned())),
        }
    }
}

/// Everything `prepare` needs to build the sandbox of one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    pub mode: Mode,
    /// `false`: no socket but `AF_UNIX` (no TCP, UDP, raw or netlink).
    pub network: bool,
    /// The workspace root (absolute; canonical is best, as rules follow the
    /// folder the path names when the command starts).
    pub workspace: PathBuf,
    /// Extra writable folders or files (absolute), in `workspace-write`
    /// only.
    pub writable_roots: Vec<PathBuf>,
    /// The command's private temp folder, created by the caller; writable in
    /// both modes and exported as `TMPDIR`, `TMP` and `TEMP`.
    pub temp: PathBuf,
    /// Paths relative to the workspace kept read-only in `workspace-write`
    /// (`.git` means every repository's, at any depth).
    pub protected: Vec<String>,
    /// Use a mount namespace where the kernel allows one (the default);
    /// `false` keeps the Landlock-only mode, whose price is that a folder
    /// holding a protected entry cannot gain or lose entries.
    pub mount_namespace: bool,
}

impl Policy {
    /// What a command may not change by default: every repository's git
    /// folder or `.git` file (in a mount namespace only the parts git runs
    /// code from: `config`, `hooks`, `info`, ...; see `protect.rs`), and the
    /// files axon and Claude Code execute from or that start servers:
    /// axon's workspace folder (its config, hooks and skills), the MCP
    /// server list, Claude Code's settings (hooks), subagents and skills.
    pub const DEFAULT_PROTECTED: [&'static str; 9] = [
        ".git",
        ".axon",
        ".mcp.json",
        ".claude/settings.json",
        ".claude/settings.local.json",
        ".claude/agents",
        ".claude/skills",
        // Read for skills and subagents as well (runtime's guidance.rs and
        // agent_files.rs): a planted one would be followed like axon's own.
        ".agents/skills",
        ".gemini/agents",
    ];

    /// A policy with the network off, no extra writable roots and the
    /// default protected entries.
    pub fn new(mode: Mode, workspace: impl Into<PathBuf>, temp: impl Into<PathBuf>) -> Policy {
        Policy {
            mode,
            network: false,
            workspace: workspace.into(),
            writable_roots: Vec::new(),
            temp: temp.into(),
            protected: Policy::DEFAULT_PROTECTED.iter().map(|name| (*name).to_owned()).collect(),
            mount_namespace: true,
        }
    }

    /// Checks what can be checked without the kernel: absolute paths, plain
    /// protected names, and that no writable folder swallows a part of the
    /// workspace the mode keeps read-only. The message names the setting to
    /// change.
    pub fn validate(&self) -> Result<(), String> {
        if self.mode == Mode::Off {
            return Ok(());
        }
        require_absolute("workspace", &self.workspace)?;
        require_absolute("temp folder", &self.temp)?;
        for root in &self.writable_roots {
            require_absolute("writable root", root)?;
        }
        for name in &self.protected {
            let plain = !name.is_empty()
                && !name.starts_with('/')
                && name.split('/').all(|part| !part.is_empty() && part != "." && part != "..");
            if !plain {
                return Err(format!(
                    "protected entry `{name}` is not a plain path inside the workspace \
                     (use a relative path such as `.git` or `.claude/settings.json`)"
                ));
            }
        }
        let workspace = canonical("workspace", &self.workspace)?;
        let temp = canonical("temp folder", &self.temp)?;
        // A writable folder holding the workspace makes all of it writable:
        // Landlock rights are inherited downwards and nothing can take them
        // back, so the read-only parts would silently be writable.
        if workspace.starts_with(&temp) {
            return Err(format!(
                "the temp folder {} contains the workspace {}, which would make the whole \
                 workspace writable: give the sandbox a private temp folder outside the workspace",
                temp.display(),
                workspace.display()
            ));
        }
        if self.mode == Mode::WorkspaceWrite {
            for root in &self.writable_roots {
                let Ok(root) = std::fs::canonicalize(root) else {
                    // Reported with its cause when prepare opens it.
                    continue;
                };
                // The workspace itself counts: granting it every right
                // is granting its protected entries too.
                if workspace.starts_with(&root) {
                    let relation = if workspace == root { "is" } else { "contains" };
                    return Err(format!(
                        "the writable root {} {relation} the workspace {}, which would make its \
                         protected entries ({}) writable: remove it from the `writable_roots` \
                         setting under [sandbox] (the workspace is writable without it)",
                        root.display(),
                        workspace.display(),
                        self.protected.join(", ")
                    ));
                }
            }
        }
        Ok(())
    }
}

fn require_absolute(what: &str, path: &Path) -> Result<(), String> {
    if path.is_absolute() {
        Ok(())
    } else {
        Err(format!("the sandbox's {what} {} is not an absolute path", path.display()))
    }
}

fn canonical(what: &str, path: &Path) -> Result<PathBuf, String> {
    std::fs::canonicalize(path).map_err(|error| {
        format!("the sandbox's {what} {} cannot be resolved: {error}", path.display())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_round_trip_through_their_names() {
        use serde::Deserialize;
        use serde::de::IntoDeserializer;
        for name in Mode::NAMES {
            let mode: Mode = name.parse().unwrap();
            assert_eq!(mode.to_string(), name);
            // The config file's spelling is serde's: the same kebab-case name.
            let deserializer: serde::de::value::StrDeserializer<'_, serde::de::value::Error> =
                name.into_deserializer();
            assert_eq!(Mode::deserialize(deserializer).unwrap(), mode);
        }
        assert_eq!(Mode::default(), Mode::WorkspaceWrite);
    }

    #[test]
    fn an_unknown_mode_names_the_valid_ones() {
        let error = "workspace".parse::<Mode>().unwrap_err();
        assert_eq!(
            error.to_string(),
            "unknown sandbox mode `workspace`: use read-only, workspace-write or off"
        );
    }

    #[test]
    fn a_protected_path_leaving_the_workspace_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let temp = tempfile::tempdir().unwrap();
        let mut policy = Policy::new(Mode::WorkspaceWrite, dir.path(), temp.path());
        assert_eq!(policy.validate(), Ok(()));
        for bad in ["../x", "/etc", "a//b", "a/./b", ""] {
            policy.protected = vec![bad.to_owned()];
            let error = policy.validate().unwrap_err();
            assert!(error.contains(&format!("`{bad}`")), "{error}");
        }
    }

    #[test]
    fn a_temp_folder_holding_the_workspace_is_refused() {
        let temp = tempfile::tempdir().unwrap();
        let workspace = temp.path().join("ws");
        std::fs::create_dir(&workspace).unwrap();
        let policy = Policy::new(Mode::ReadOnly, &workspace, temp.path());
        let error = policy.validate().unwrap_err();
        assert!(error.contains("contains the workspace"), "{error}");
    }

    #[test]
    fn a_writable_root_holding_the_workspace_is_refused() {
        let outer = tempfile::tempdir().unwrap();
        let workspace = outer.path().join("ws");
        std::fs::create_dir(&workspace).unwrap();
        let temp = tempfile::tempdir().unwrap();
        let mut policy = Policy::new(Mode::WorkspaceWrite, &workspace, temp.path());
        policy.writable_roots.push(outer.path().to_path_buf());
        let error = policy.validate().unwrap_err();
        assert!(error.contains("contains the workspace"), "{error}");
        assert!(error.contains("remove it from the `writable_roots` setting"), "{error}");
    }

    #[test]
    fn a_writable_root_equal_to_the_workspace_is_refused() {
        let workspace = tempfile::tempdir().unwrap();
        let temp = tempfile::tempdir().unwrap();
        let mut policy = Policy::new(Mode::WorkspaceWrite, workspace.path(), temp.path());
        // Spelled differently (a trailing `.`): compared after resolving.
        policy.writable_roots.push(workspace.path().join("."));
        let error = policy.validate().unwrap_err();
        assert!(error.contains("is the workspace"), "{error}");
        assert!(error.contains("`writable_roots`"), "{error}");
        assert!(error.contains(".git, .axon, .mcp.json"), "{error}");
    }

    #[test]
    fn a_writable_root_inside_the_workspace_is_accepted() {
        let workspace = tempfile::tempdir().unwrap();
        std::fs::create_dir(workspace.path().join("out")).unwrap();
        let temp = tempfile::tempdir().unwrap();
        let mut policy = Policy::new(Mode::WorkspaceWrite, workspace.path(), temp.path());
        policy.writable_roots.push(workspace.path().join("out"));
        assert_eq!(policy.validate(), Ok(()));
    }

    #[test]
    fn relative_paths_are_refused() {
        let policy = Policy::new(Mode::ReadOnly, "ws", "/tmp");
        assert_eq!(
            policy.validate().unwrap_err(),
            "the sandbox's workspace ws is not an absolute path"
        );
    }
}
