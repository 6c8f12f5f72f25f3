//! A whole conversation, as persisted and exported.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::message::Message;

/// The schema version written by this build. Readers migrate older ones.
pub const CONVERSATION_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ConversationMetadata {
    pub model: String,
    pub total_tokens: u64,
    pub tools_used: Vec<String>,
    /// Anything else a front end wants to keep with the conversation.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub extra: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Conversation {
    pub version: u32,
    pub id: String,
    pub title: String,
    pub messages: Vec<Message>,
    pub metadata: ConversationMetadata,
    /// Milliseconds since the Unix epoch.
    pub created_at: i64,
    pub updated_at: i64,
}
