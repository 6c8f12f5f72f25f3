//! Who decides whether a tool that changes things may run.

use std::future::Future;
use std::pin::Pin;

use axon_protocol::{ToolCall, ToolSpec};

/// The standing rule for tools that are not read-only (writes, edits,
/// commands, MCP tools).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ApprovalPolicy {
    /// Run them.
    #[default]
    Auto,
    /// Refuse them; the model is told why.
    ReadOnly,
    /// Ask the front end's [`Approver`] each time.
    Ask,
}

/// A front end's answer to one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    Allow,
    /// Allow this tool for the rest of the session.
    AllowTool,
    /// Refuse, with a reason the model sees.
    Deny(String),
}

/// Asks the user. Implemented by front ends (a terminal prompt, a TUI card,
/// an editor dialog).
pub trait Approver: Send + Sync {
    fn approve<'a>(
        &'a self,
        call: &'a ToolCall,
        spec: &'a ToolSpec,
    ) -> Pin<Box<dyn Future<Output = Approval> + Send + 'a>>;
}
