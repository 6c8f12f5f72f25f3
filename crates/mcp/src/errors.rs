//! The kinds of MCP failure (seed 003's McpErrorType), named in every MCP
//! error output so the model and the user can tell them apart.

/// What kind of MCP failure an error is, as seed 003's error types name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpErrorKind {
    ToolNotFound,
    ExecutionFailed,
    ResourceNotFound,
    PromptNotFound,
    Network,
    PermissionDenied,
    Unknown,
}

impl McpErrorKind {
    /// Classifies a JSON-RPC error from a server, given what was asked.
    pub fn of(code: i32, message: &str, what: &str) -> McpErrorKind {
        let message = message.to_lowercase();
        let not_found = message.contains("not found") || message.contains("unknown");
        match code {
            -32002 => McpErrorKind::ResourceNotFound,
            _ if message.contains("permission")
                || message.contains("unauthorized")
                || message.contains("forbidden") =>
            {
                McpErrorKind::PermissionDenied
            }
            -32602 | -32601 if not_found && what.starts_with("prompt") => {
                McpErrorKind::PromptNotFound
            }
            -32602 | -32601 if not_found && what.starts_with("reading") => {
                McpErrorKind::ResourceNotFound
            }
            -32602 | -32601 if not_found => McpErrorKind::ToolNotFound,
            -32603 => McpErrorKind::ExecutionFailed,
            _ => McpErrorKind::Unknown,
        }
    }
}

impl std::fmt::Display for McpErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            McpErrorKind::ToolNotFound => "tool not found",
            McpErrorKind::ExecutionFailed => "execution failed",
            McpErrorKind::ResourceNotFound => "resource not found",
            McpErrorKind::PromptNotFound => "prompt not found",
            McpErrorKind::Network => "network",
            McpErrorKind::PermissionDenied => "permission denied",
            McpErrorKind::Unknown => "unknown",
        })
    }
}
