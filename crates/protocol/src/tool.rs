//! Tools as the model sees them: specs, calls and outputs.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::message::ContentPart;

/// What a model is told about a tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// A JSON Schema object describing the arguments.
    pub input_schema: Value,
    #[serde(default)]
    pub annotations: ToolAnnotations,
}

/// Hints about a tool's effects (the MCP tool annotations), used by approval
/// policies and shown to MCP clients.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ToolAnnotations {
    /// The tool never changes its environment.
    #[serde(default)]
    pub read_only: bool,
    /// The tool may destroy or overwrite data.
    #[serde(default)]
    pub destructive: bool,
    /// Calling it twice with the same arguments has no further effect.
    #[serde(default)]
    pub idempotent: bool,
}

impl ToolAnnotations {
    /// Reads only; calling it again changes nothing.
    pub const READ_ONLY: ToolAnnotations =
        ToolAnnotations { read_only: true, destructive: false, idempotent: true };
    /// May overwrite or destroy data, or run arbitrary commands.
    pub const DESTRUCTIVE: ToolAnnotations =
        ToolAnnotations { read_only: false, destructive: true, idempotent: false };
}

/// A model's request to run a tool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// The arguments as parsed JSON (an object for every well-formed call).
    pub arguments: Value,
}

/// What a tool returned. A failure is data for the model, not an exception.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolOutput {
    pub content: Vec<ContentPart>,
    #[serde(default)]
    pub is_error: bool,
}

impl ToolOutput {
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput { content: vec![ContentPart::text(text)], is_error: false }
    }

    pub fn error(message: impl Into<String>) -> Self {
        ToolOutput { content: vec![ContentPart::text(message)], is_error: true }
    }

    /// The text parts joined with newlines.
    pub fn text_content(&self) -> String {
        let texts: Vec<&str> = self.content.iter().filter_map(ContentPart::as_text).collect();
        texts.join("\n")
    }
}
