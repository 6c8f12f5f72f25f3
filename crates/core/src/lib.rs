//! The axon agent.
//!
//! An [`Agent`] owns a conversation and runs it: it asks its
//! [`Provider`](axon_llm::Provider) for the next turn, runs the tool calls in
//! that turn through its [`ToolRegistry`](axon_tools::ToolRegistry), feeds
//! the results back, and repeats until the model answers without calling a
//! tool. Everything that happens is reported as
//! [`AgentEvent`](axon_protocol::AgentEvent)s through an [`EventSink`];
//! front ends only render those.
//!
//! The agent is two parts and the loop between them (`agent.rs`): the
//! model turn (`model_turn.rs`, with context fitting in `compact.rs`,
//! `context.rs`, `tokens.rs`, `history.rs`) asks the model and reads its
//! reply; the call runner (`call_runner.rs`, `batch.rs`, `approval.rs`,
//! `lifecycle.rs`) runs the calls it asked for and produces their results.
//! `config.rs` is what both are told. The call runner masks the secrets in
//! every result on its way to the model (`axon_tools::secret_mask`).
//!
//! Core reads no file and starts no process of its own: rules, skills and
//! subagent definitions arrive as data ([`rules::Rule`], [`skills::Skill`],
//! [`subagents::AgentDefinition`]), read by the runtime.

mod agent;
mod approval;
mod batch;
pub mod brief;
mod call_runner;
mod carry;
mod compact;
mod config;
pub mod context;
mod cost;
mod fallback;
mod fallback_list;
mod history;
mod lifecycle;
mod model_turn;
pub mod plan;
pub mod prompt;
mod repeats;
pub mod rules;
mod sink;
mod skill_tool;
pub mod skills;
pub mod subagents;
mod todo;
pub mod tokens;
mod tool_source;
mod vocab;

pub use agent::{Agent, RunOutcome};
pub use approval::{
    Approval, ApprovalPolicy, Approver, Gate, Permissions, SharedApproval, UnderAuto,
};
pub use config::{AgentConfig, ContextStrategy};
pub use cost::{Budget, Cost, Spend};
pub use fallback_list::{Connecting, Fallbacks};
pub use history::Journal;
pub use lifecycle::{HookPermission, Lifecycle, LifecycleFuture, Verdict};
pub use sink::EventSink;
pub use skill_tool::{LoadSkill, LoadSkillArgs};
pub use todo::{Todo, TodoArgs, TodoItem, TodoStatus};
pub use tokio_util::sync::CancellationToken;
pub use tool_source::ToolSource;
