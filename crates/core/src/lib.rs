//! The axon agent.
//!
//! An [`Agent`] owns a conversation and runs it: it asks its
//! [`Provider`](axon_llm::Provider) for the next turn, runs the tool calls in
//! that turn through its [`ToolRegistry`](axon_tools::ToolRegistry), feeds
//! the results back, and repeats until the model answers without calling a
//! tool. Everything that happens is reported as
//! [`AgentEvent`](axon_protocol::AgentEvent)s; front ends only render those.
//!
//! Core reads no file and starts no process of its own: rules, skills and
//! subagent definitions arrive as data ([`rules::Rule`], [`skills::Skill`],
//! [`subagents::AgentDefinition`]), read by the runtime.

mod agent;
mod approval;
mod batch;
pub mod brief;
mod calls;
mod compact;
pub mod context;
mod history;
mod lifecycle;
pub mod plan;
pub mod prompt;
mod repeats;
pub mod rules;
mod skill_tool;
pub mod skills;
pub mod subagents;
mod todo;
pub mod tokens;
mod tool_source;
mod turn;

pub use agent::{Agent, AgentConfig, ContextStrategy, EventSink, RunOutcome};
pub use approval::{
    Approval, ApprovalPolicy, Approver, Gate, Permissions, SharedApproval, UnderAuto,
};
pub use history::Journal;
pub use lifecycle::{HookPermission, Lifecycle, LifecycleFuture, Verdict};
pub use skill_tool::{LoadSkill, LoadSkillArgs};
pub use todo::{Todo, TodoArgs, TodoItem, TodoStatus};
pub use tokio_util::sync::CancellationToken;
pub use tool_source::ToolSource;
