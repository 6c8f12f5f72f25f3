//! [`CheckpointError`]: every way a checkpoint can fail, each with a
//! message that says what to do about it.

use std::path::PathBuf;

/// Why a snapshot, restore, diff or prune did not happen.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error("checkpoints need git, and `git` was not found on PATH: install git to use rewind")]
    GitMissing,
    #[error("checkpoints need git 2.25 or newer, found {found}: upgrade git to use rewind")]
    GitTooOld { found: String },
    #[error("could not run git: {source}")]
    Spawn {
        #[source]
        source: std::io::Error,
    },
    #[error("`{command}` failed (exit {}): {stderr}", code.map_or("by signal".to_string(), |c| c.to_string()))]
    GitFailed { command: String, code: Option<i32>, stderr: String },
    #[error("cannot read the workspace {}: {source}", path.display())]
    WorkspaceUnreadable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot {action} {}: {source} (check the permissions of axon's data folder)", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("no checkpoint `{id}` for this workspace: pick one from the list of checkpoints")]
    UnknownId { id: String },
    #[error(
        "`{session}` cannot name a session's checkpoints: use letters, digits, `-`, `_` and `.`"
    )]
    BadSession { session: String },
}

impl CheckpointError {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        CheckpointError::Io { action, path: path.into(), source }
    }
}
