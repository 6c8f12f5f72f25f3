//! Chat messages: what is sent to and received from a model.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::tool::ToolCall;

/// How the user message carrying a text-protocol turn's tool results
/// begins (models without native tool calling get their results so).
pub const TEXT_RESULTS_HEADER: &str = "Results of your tool calls, in order:";

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    System,
    User,
    Assistant,
    /// The result of one tool call, linked to it by `tool_call_id`.
    Tool,
}

/// One piece of a message's content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentPart {
    Text {
        text: String,
    },
    /// Base64-encoded image data.
    Image {
        media_type: String,
        data: String,
    },
    /// Base64-encoded audio data.
    Audio {
        media_type: String,
        data: String,
    },
    /// Model reasoning. Anthropic requires the `signature` to be sent back
    /// unchanged with the thinking block it belongs to.
    Thinking {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
}

impl ContentPart {
    pub fn text(text: impl Into<String>) -> Self {
        ContentPart::Text { text: text.into() }
    }

    /// The text of a `Text` part; `None` for every other kind.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentPart::Text { text } => Some(text),
            _ => None,
        }
    }
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Message {
    pub role: Role,
    #[serde(default)]
    pub content: Vec<ContentPart>,
    /// Tool calls the assistant asked for in this message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For `Role::Tool`: the id of the call this message answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// For `Role::Tool`: whether the tool reported a failure.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// For `Role::Tool`: the call never ran, because it was refused (by the
    /// user, a rule, a hook or the approval policy); `is_error` is then
    /// set too. A replay shows it as refused, not failed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub refused: bool,
    /// Milliseconds since the Unix epoch, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp_ms: Option<i64>,
}

impl Message {
    fn with_text(role: Role, text: impl Into<String>) -> Self {
        Message {
            role,
            content: vec![ContentPart::text(text)],
            tool_calls: Vec::new(),
            tool_call_id: None,
            is_error: false,
            refused: false,
            timestamp_ms: None,
        }
    }

    pub fn system(text: impl Into<String>) -> Self {
        Self::with_text(Role::System, text)
    }

    pub fn user(text: impl Into<String>) -> Self {
        Self::with_text(Role::User, text)
    }

    pub fn assistant(text: impl Into<String>) -> Self {
        Self::with_text(Role::Assistant, text)
    }

    /// The message carrying one tool call's result back to the model.
    pub fn tool_result(call_id: impl Into<String>, output: crate::ToolOutput) -> Self {
        Message {
            role: Role::Tool,
            content: output.content,
            tool_calls: Vec::new(),
            tool_call_id: Some(call_id.into()),
            is_error: output.is_error,
            refused: false,
            timestamp_ms: None,
        }
    }

    /// All text parts joined, without thinking or media.
    pub fn text(&self) -> String {
        self.content.iter().filter_map(ContentPart::as_text).collect()
    }
}
