//! Errors tools return. Each message says what failed, on which path, and
//! what to do next, because the reader is a model deciding its next step.

use std::io;

/// A path a tool was given cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("Invalid path '{path}': {reason}")]
    Invalid { path: String, reason: String },
    #[error(
        "Path '{path}' is outside the workspace {root}; only paths inside the workspace can be used"
    )]
    OutsideWorkspace { path: String, root: String },
    #[error("Path '{path}' goes through a symlink loop")]
    SymlinkLoop { path: String },
    #[error("Path '{path}' is a symlink whose target does not exist")]
    DanglingSymlink { path: String },
    #[error("Cannot check path '{path}': {reason}")]
    Io { path: String, reason: String },
}

/// Why a tool call failed. The `Display` text is what the model sees.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error("Tool '{0}' is not available")]
    NotAvailable(String),
    #[error("Invalid parameters for {tool}: {details}")]
    InvalidParams { tool: String, details: String },
    #[error(transparent)]
    Path(#[from] PathError),
    #[error("File not found: {0}")]
    FileNotFound(String),
    #[error("Folder not found: {0}")]
    FolderNotFound(String),
    #[error("Permission denied: {0}")]
    PermissionDenied(String),
    /// Any other failure, already phrased for the reader.
    #[error("{0}")]
    Failed(String),
}

impl ToolError {
    pub fn failed(message: impl Into<String>) -> Self {
        ToolError::Failed(message.into())
    }

    /// An I/O failure while doing `action` ("read", "write", …) on `path`
    /// (workspace-relative, for the message).
    pub fn io(action: &str, path: &str, err: &io::Error) -> Self {
        if crate::resolved::is_escape(err) {
            return ToolError::Failed(format!(
                "Cannot {action} '{path}': it leads outside the workspace (through a symlink, \
                 perhaps one swapped in while the call ran); only paths inside the workspace can \
                 be used"
            ));
        }
        if err.raw_os_error() == Some(libc::ELOOP) {
            return ToolError::Failed(format!(
                "Cannot {action} '{path}': a symlink is in its place (it changed while the call \
                 ran, or loops); symlinks are not followed there"
            ));
        }
        match err.kind() {
            io::ErrorKind::NotFound => ToolError::FileNotFound(path.to_string()),
            io::ErrorKind::PermissionDenied => {
                ToolError::PermissionDenied(format!("cannot {action} '{path}'"))
            }
            _ => ToolError::Failed(format!("Failed to {action} '{path}': {err}")),
        }
    }
}
