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

impl Preview {
    /// What the call would do, in one line for an approval question
    /// ("edit src/x.rs", "run `cargo test` in crates/cli (sandboxed: …)"):
    /// the raw arguments only when nothing better is known (`tool`'s name
    /// then says whose they are).
    pub fn summary(&self, tool: &str) -> String {
        match self {
            Preview::Diff { path, created: true, .. } => format!("create {path}"),
            Preview::Diff { path, .. } => format!("edit {path}"),
            Preview::Command { command, workdir, sandbox } => {
                let place = if workdir.is_empty() || workdir == "." {
                    "the workspace"
                } else {
                    workdir.as_str()
                };
                let rights = match sandbox {
                    Some(sandbox) => format!("sandboxed: {sandbox}"),
                    None => "outside the sandbox, with your full rights".to_string(),
                };
                format!("run `{command}` in {place} ({rights})")
            }
            Preview::Mcp { server, tool, arguments } => {
                format!("call {tool} of MCP server {server} with {arguments}")
            }
            Preview::Sampling { .. } => self.sampling_text().unwrap_or_default(),
            Preview::Arguments { arguments } => format!("{tool} {arguments}"),
            Preview::Invalid { message } => format!("{tool}, which would fail: {message}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_previews_summary_says_what_the_call_would_do_not_its_arguments() {
        let diff = Preview::Diff { path: "src/x.rs".into(), diff: "--- a".into(), created: false };
        assert_eq!(diff.summary("edit_file"), "edit src/x.rs");
        let new = Preview::Diff { path: "notes.md".into(), diff: String::new(), created: true };
        assert_eq!(new.summary("write_file"), "create notes.md");
        let command = Preview::Command {
            command: "cargo test".into(),
            workdir: "crates/cli".into(),
            sandbox: Some("workspace-write, network off".into()),
        };
        assert_eq!(
            command.summary("shell"),
            "run `cargo test` in crates/cli (sandboxed: workspace-write, network off)"
        );
        let outside = Preview::Command { command: "ls".into(), workdir: ".".into(), sandbox: None };
        assert_eq!(
            outside.summary("shell"),
            "run `ls` in the workspace (outside the sandbox, with your full rights)"
        );
        let mcp = Preview::Mcp {
            server: "git_hub".into(),
            tool: "create_issue".into(),
            arguments: json!({"title": "x"}),
        };
        assert_eq!(
            mcp.summary("mcp_git_hub_create_issue"),
            r#"call create_issue of MCP server git_hub with {"title":"x"}"#
        );
        let plain = Preview::Arguments { arguments: json!({"a": 1}) };
        assert_eq!(plain.summary("todo"), r#"todo {"a":1}"#);
    }
}
