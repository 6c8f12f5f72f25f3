//! axon's shared vocabulary.
//!
//! Every crate in the workspace speaks these types: providers turn wire
//! formats into [`Message`]s, tools return [`ToolOutput`]s, the agent emits
//! [`AgentEvent`]s that front ends render, and the store persists
//! [`Conversation`]s. This crate does no I/O and depends on serde only, so a
//! front end or a test can use it without pulling in anything else.

pub mod compaction;
mod conversation;
mod event;
mod message;
mod plan;
mod tool;

pub use conversation::{CONVERSATION_VERSION, Conversation, ConversationMetadata};
pub use event::{AgentEvent, Usage};
pub use message::{ContentPart, Message, Role};
pub use plan::{Plan, PlanStatus, PlanStep, StepStatus};
pub use tool::{ToolAnnotations, ToolCall, ToolOutput, ToolSpec};
