//! Tools that change during a session: MCP servers that join after the
//! session opened, a server whose tool list changed.
//!
//! The agent asks its [`ToolSource`] before each model call, never during
//! one: the calls of one reply are always run against the tools the model
//! was offered for that reply. A new set rebuilds the preamble, so the model
//! sees exactly the tools that can run.

use std::sync::Arc;

use axon_tools::ToolRegistry;

/// Where an agent's tools come from when they can change.
pub trait ToolSource: Send + Sync {
    /// The tools to offer now: the same `Arc` for as long as nothing
    /// changed (the agent compares pointers, not contents).
    fn current(&self) -> Arc<ToolRegistry>;
}
