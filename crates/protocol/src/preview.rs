//! What a tool call would do, shown before the user approves it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A tool call's effect, computed without running it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Preview {
    /// A file would be created or changed: the unified diff (`--- a/PATH`,
    /// `+++ b/PATH`, hunks). `created` is true for a new file.
    Diff { path: String, diff: String, created: bool },
    /// A command would run in `workdir` (relative to the workspace), in
    /// the sandbox `sandbox` describes (`workspace-write, network off`), or
    /// with the user's full rights when it is absent.
    Command {
        command: String,
        workdir: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sandbox: Option<String>,
    },
    /// An MCP server's tool would be called.
    Mcp { server: String, tool: String, arguments: Value },
    /// Nothing more specific is known than the call's arguments.
    Arguments { arguments: Value },
    /// The call would fail as it stands (the tool says why when it runs).
    Invalid { message: String },
}
