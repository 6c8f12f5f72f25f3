//! axon's shared vocabulary.
//!
//! Every crate in the workspace speaks these types: providers turn wire
//! formats into [`Message`]s, tools return [`ToolOutput`]s, the agent emits
//! [`AgentEvent`]s that front ends render, and the store persists
//! [`Conversation`]s; front ends drive a session with [`Op`]s. This crate
//! does no I/O and depends on serde (and schemars, which derives the event
//! stream's published JSON Schema), so a front end or a test can use it
//! without pulling in anything else.

pub mod attachment;
pub mod compaction;
mod conversation;
mod event;
mod message;
mod op;
mod plan;
mod preview;
mod time;
mod tool;

pub use conversation::{CONVERSATION_VERSION, Conversation, ConversationMetadata};
pub use event::{
    ALWAYS_SAVES, AgentEvent, BackgroundCommand, Level, McpServerInfo, McpState, RuleSuggestion,
    SCHEMA_VERSION, SandboxInfo, SandboxMode, SessionInfo, SkillInfo, SkillState, StopReason,
    Usage, background_text, progress_text,
};
pub use message::{ContentPart, Message, Role, TEXT_RESULTS_HEADER};
pub use op::{ApprovalDecision, ApprovalMode, Attachment, ElicitAction, Mode, Op, RewindScope};
pub use plan::{Plan, PlanStatus, PlanStep, StepStatus};
pub use preview::Preview;
pub use time::{Utc, civil_from_days};
pub use tool::{ToolAnnotations, ToolCall, ToolOutput, ToolSpec};
