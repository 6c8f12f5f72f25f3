//! The session's tools while its MCP servers start in the background and
//! change their tool lists: the agent's [`ToolSource`].
//!
//! Guarantees:
//! - The registry is rebuilt only when the MCP manager changed since the
//!   last build, in the same order as at start (built-in tools, MCP tools,
//!   then subagents, which may name either); a rebuild that offers exactly
//!   what was offered keeps the same registry, so the preamble (and the
//!   provider's prompt cache) stay.
//! - A change the model will see is told once, as an `info` event naming
//!   the tools that came and went; a registration problem is warned once.
//! - Before a prompt, the session waits for a starting server only when the
//!   prompt names it (bounded by that server's start), or otherwise for at
//!   most the start-up grace counted from when the session opened; a
//!   cancellation ends either wait.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axon_core::{CancellationToken, ToolSource};
use axon_mcp::McpManager;
use axon_protocol::AgentEvent;
use axon_tools::ToolRegistry;

use crate::events::Emitter;

/// How long the first prompt waits for servers still starting, by default.
pub const DEFAULT_STARTUP_GRACE: Duration = Duration::from_millis(1000);

/// Builds the session's whole registry from the manager as it is now;
/// returns the registry and its registration problems.
pub(crate) type BuildTools = Box<dyn Fn(&McpManager) -> (ToolRegistry, Vec<String>) + Send + Sync>;

pub(crate) struct LiveTools {
    mcp: Arc<McpManager>,
    build: BuildTools,
    /// The registry offered now, and the manager's generation it was
    /// built at.
    current: Mutex<(u64, Arc<ToolRegistry>)>,
    warned: Mutex<HashSet<String>>,
    events: Emitter,
    /// Until when a prompt waits for servers it does not name.
    grace_until: Instant,
    /// A prompt has been worked on: from now on a change is news (before,
    /// each server's `ready` says it).
    announce: AtomicBool,
}

impl LiveTools {
    /// Builds the registry once from the manager as it is now.
    pub(crate) fn new(
        mcp: Arc<McpManager>,
        build: BuildTools,
        events: Emitter,
        grace: Duration,
    ) -> LiveTools {
        let generation = mcp.generation();
        let (registry, warnings) = build(&mcp);
        let tools = LiveTools {
            current: Mutex::new((generation, Arc::new(registry))),
            mcp,
            build,
            warned: Mutex::default(),
            events,
            grace_until: Instant::now() + grace,
            announce: AtomicBool::new(false),
        };
        tools.warn(warnings);
        tools
    }

    pub(crate) fn mcp(&self) -> &McpManager {
        &self.mcp
    }

    fn warn(&self, warnings: Vec<String>) {
        let mut warned = self.warned.lock().unwrap_or_else(PoisonError::into_inner);
        for message in warnings {
            if warned.insert(message.clone()) {
                self.events.emit(AgentEvent::Warning { message });
            }
        }
    }

    /// Waits, before `prompt` is worked on, for the servers still starting
    /// that it names, then for the rest until the start-up grace is over.
    pub(crate) async fn before_prompt(&self, prompt: &str, cancel: &CancellationToken) {
        self.wait_before(prompt, cancel).await;
        // What joined while the prompt waited is in its first request; the
        // status of each server told the user already.
        let _ = self.current();
        self.announce.store(true, Ordering::Relaxed);
    }

    async fn wait_before(&self, prompt: &str, cancel: &CancellationToken) {
        let starting = self.mcp.starting();
        if starting.is_empty() {
            return;
        }
        let named: Vec<String> =
            starting.into_iter().filter(|name| names_server(prompt, name)).collect();
        if !named.is_empty() {
            self.events.emit(AgentEvent::Info {
                message: format!(
                    "waiting for MCP server {} to start: the prompt names it",
                    named.join(", ")
                ),
            });
            tokio::select! {
                () = cancel.cancelled() => return,
                () = self.mcp.wait_for(&named) => {}
            }
        }
        let grace = tokio::time::Instant::from_std(self.grace_until);
        tokio::select! {
            () = cancel.cancelled() => {}
            () = tokio::time::sleep_until(grace) => {}
            () = self.mcp.wait_for_all() => {}
        }
    }
}

impl ToolSource for LiveTools {
    fn current(&self) -> Arc<ToolRegistry> {
        let generation = self.mcp.generation();
        let mut current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        if current.0 == generation {
            return Arc::clone(&current.1);
        }
        let (registry, warnings) = (self.build)(&self.mcp);
        self.warn(warnings);
        current.0 = generation;
        // The same specs in the same order: nothing the model sees changed.
        if current.1.specs().eq(registry.specs()) {
            return Arc::clone(&current.1);
        }
        let (came, went) = difference(&current.1, &registry);
        let mut said = Vec::new();
        if !came.is_empty() {
            said.push(format!("now offered: {}", some(&came)));
        }
        if !went.is_empty() {
            said.push(format!("no longer offered: {}", some(&went)));
        }
        if !said.is_empty() && self.announce.load(Ordering::Relaxed) {
            self.events.emit(AgentEvent::Info { message: format!("tools {}", said.join("; ")) });
        }
        current.1 = Arc::new(registry);
        Arc::clone(&current.1)
    }
}

/// The tool names `after` has that `before` has not, and the other way.
fn difference(before: &ToolRegistry, after: &ToolRegistry) -> (Vec<String>, Vec<String>) {
    let came = after.names().filter(|n| !before.contains(n)).map(String::from).collect();
    let went = before.names().filter(|n| !after.contains(n)).map(String::from).collect();
    (came, went)
}

/// The first few of `names`, and how many more.
fn some(names: &[String]) -> String {
    const SHOWN: usize = 8;
    if names.len() <= SHOWN {
        return names.join(", ");
    }
    format!("{} and {} more", names[..SHOWN].join(", "), names.len() - SHOWN)
}

/// Whether `prompt` names the server `name`: as a word of its own (any
/// case), or as `@name`.
pub(crate) fn names_server(prompt: &str, name: &str) -> bool {
    if name.is_empty() {
        return false;
    }
    let prompt = prompt.to_lowercase();
    let name = name.to_lowercase();
    let part_of_name = |c: char| c.is_alphanumeric() || c == '_' || c == '-';
    prompt.match_indices(&name).any(|(at, _)| {
        let before = prompt[..at].chars().next_back();
        let after = prompt[at + name.len()..].chars().next();
        !before.is_some_and(part_of_name) && !after.is_some_and(part_of_name)
    })
}

#[cfg(test)]
mod tests {
    use super::names_server;

    #[test]
    fn a_server_is_named_as_a_word_of_its_own() {
        assert!(names_server("list my open GitHub issues", "github"));
        assert!(names_server("ask @linear for the sprint", "linear"));
        assert!(names_server("check github.", "github"));
        assert!(names_server("use my-server now", "my-server"));
        assert!(!names_server("list my githubusercontent links", "github"));
        assert!(!names_server("the non-linear solver", "linear"));
        assert!(!names_server("my_server2 only", "my_server"));
        assert!(!names_server("anything", ""));
    }
}
