//! Tools that change during a session: MCP servers that join after the
//! session opened, a server whose tool list changed.
//!
//! The agent asks its [`ToolSource`] before each model call, never during
//! one: the calls of one reply are always run against the tools the model
//! was offered for that reply. A new set rebuilds the preamble, so the model
//! sees exactly the tools that can run.

use std::sync::{Arc, OnceLock};

use axon_tools::ToolRegistry;

use crate::agent::Agent;

/// Where an agent's tools come from when they can change.
pub trait ToolSource: Send + Sync {
    /// The tools to offer now: the same `Arc` for as long as nothing
    /// changed (the agent compares pointers, not contents).
    fn current(&self) -> Arc<ToolRegistry>;
}

impl Agent {
    /// Takes its tools from `source` from now on, and before each model
    /// call.
    pub fn with_tool_source(mut self, source: Arc<dyn ToolSource>) -> Self {
        self.tool_source = Some(source);
        self.sync_tools();
        self
    }

    /// Brings the registry up to the source's; the offered tools depend on
    /// it, so the preamble is built again on a change.
    pub(crate) fn sync_tools(&mut self) {
        let Some(source) = &self.tool_source else { return };
        let current = source.current();
        if !Arc::ptr_eq(&current, &self.registry) {
            self.registry = current;
            self.preamble = OnceLock::new();
        }
    }
}
