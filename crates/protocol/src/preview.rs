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
    /// An MCP server asks the session's model to answer its own messages
    /// (`sampling/createMessage`; the conversation is never sent): how many
    /// messages and characters, the most tokens it may write, and the start
    /// of the server's system prompt.
    Sampling {
        server: String,
        messages: usize,
        characters: usize,
        max_tokens: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        system_prompt: Option<String>,
    },
    /// Nothing more specific is known than the call's arguments.
    Arguments { arguments: Value },
    /// The call would fail as it stands (the tool says why when it runs).
    Invalid { message: String },
}

impl Preview {
    /// A sampling request as people read it; `None` for other previews.
    pub fn sampling_text(&self) -> Option<String> {
        let Preview::Sampling { server, messages, characters, max_tokens, system_prompt } = self
        else {
            return None;
        };
        let plural = if *messages == 1 { "" } else { "s" };
        let mut text = format!(
            "MCP server {server} asks the model to answer its {messages} message{plural} \
             ({characters} characters), in at most {max_tokens} tokens; nothing of this \
             conversation is sent"
        );
        if let Some(prompt) = system_prompt {
            text.push_str(&format!("\nits system prompt begins: {prompt}"));
        }
        Some(text)
    }
}
