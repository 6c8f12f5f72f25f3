//! The points of a run where the user's own code may step in: a prompt
//! submitted, a tool about to run and just run, the model about to stop,
//! the history about to be compacted. The runtime implements
//! [`Lifecycle`] (hooks, checkpoints); the agent calls it at each point and
//! obeys its [`Verdict`].
//!
//! Guarantees: a blocked tool call still gets exactly one (error) result,
//! so the history stays valid; a blocked prompt is never sent to the model;
//! a blocked stop gives the model the reason and goes on, at most
//! `max_iterations` in all, and the next stop says it was blocked once
//! (`stop_hook_active`), so a hook can let it end.

use std::future::Future;
use std::pin::Pin;

use axon_protocol::{AgentEvent, ContentPart, Message, ToolCall, ToolOutput, ToolSpec};
use tokio_util::sync::CancellationToken;

use crate::sink::EventSink;

/// A future a [`Lifecycle`] returns.
pub type LifecycleFuture<'a> = Pin<Box<dyn Future<Output = Verdict> + Send + 'a>>;

/// What the user's code says at one point of a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verdict {
    /// The step does not happen, for this reason: a tool call's result, a
    /// prompt's refusal shown to the user, a stop turned into a request to
    /// go on.
    pub block: Option<String>,
    /// Before a tool call: overrides the approval policy.
    pub permission: Option<HookPermission>,
    /// Text for the model (`additionalContext`), added where the step's
    /// text goes (the prompt, the tool's result).
    pub context: Vec<String>,
    /// Said to the user, not the model.
    pub warnings: Vec<String>,
    /// The whole run ends after this step, for this reason (a hook's
    /// `"continue": false`): a tool call is refused and the run stops
    /// after its turn; a stop is let through; a prompt is refused.
    pub halt: Option<String>,
}

/// A hook's say on whether a tool call may run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookPermission {
    /// Runs without asking (a read-only session still refuses changes).
    Allow,
    /// Refused with this reason.
    Deny(String),
    /// The user is asked even when the policy would run it.
    Ask(String),
}

impl Verdict {
    pub fn blocked(reason: impl Into<String>) -> Self {
        Verdict { block: Some(reason.into()), ..Verdict::default() }
    }
}

/// Called by the agent at each point of a run; every method defaults to
/// "go on".
pub trait Lifecycle: Send + Sync {
    /// A user request, before the model sees it.
    fn prompt_submitted<'a>(&'a self, _prompt: &'a str) -> LifecycleFuture<'a> {
        Box::pin(async { Verdict::default() })
    }

    /// A call of an available tool, before approval is sought.
    fn before_tool<'a>(&'a self, _call: &'a ToolCall, _spec: &'a ToolSpec) -> LifecycleFuture<'a> {
        Box::pin(async { Verdict::default() })
    }

    /// A call that ran, with its result.
    fn after_tool<'a>(
        &'a self,
        _call: &'a ToolCall,
        _output: &'a ToolOutput,
    ) -> LifecycleFuture<'a> {
        Box::pin(async { Verdict::default() })
    }

    /// The model answered without calling a tool; `again` when a stop was
    /// already blocked in this request.
    fn stopping<'a>(&'a self, _answer: &'a str, _again: bool) -> LifecycleFuture<'a> {
        Box::pin(async { Verdict::default() })
    }

    /// A subagent (`agent` names it) answered its task; `again` as for
    /// [`Lifecycle::stopping`]. A block sends it back to work.
    fn subagent_stopping<'a>(
        &'a self,
        _agent: &'a str,
        _answer: &'a str,
        _again: bool,
    ) -> LifecycleFuture<'a> {
        Box::pin(async { Verdict::default() })
    }

    /// The history is about to be summarised; `auto` unless the user
    /// asked for it.
    fn compacting(&self, _auto: bool) -> LifecycleFuture<'_> {
        Box::pin(async { Verdict::default() })
    }
}

/// Runs `ask` on `lifecycle` (or says go on without one) and shows its
/// warnings.
/// A cancellation stops waiting for it (dropping a hook's future kills its
/// process group) and says go on: the cancelled run ends anyway.
pub(crate) async fn consult<'a>(
    lifecycle: Option<&'a dyn Lifecycle>,
    emit: EventSink<'_>,
    cancel: &CancellationToken,
    ask: impl FnOnce(&'a dyn Lifecycle) -> LifecycleFuture<'a>,
) -> Verdict {
    let Some(lifecycle) = lifecycle else {
        return Verdict::default();
    };
    let verdict = tokio::select! {
        verdict = ask(lifecycle) => verdict,
        () = cancel.cancelled() => return Verdict::default(),
    };
    for message in &verdict.warnings {
        emit(AgentEvent::Warning { message: message.clone() });
    }
    verdict
}

/// Adds a verdict's context to a message's text.
pub(crate) fn add_context(content: &mut Vec<ContentPart>, verdict: &Verdict) {
    for text in &verdict.context {
        content.push(ContentPart::text(format!("\n{text}")));
    }
}

/// How the request a blocked stop becomes begins: axon's words, not the
/// user's.
pub(crate) const KEEP_GOING: &str = "A stop hook asked you to go on: ";

/// The request a blocked stop becomes.
pub(crate) fn keep_going(reason: &str) -> Message {
    Message::user(format!("{KEEP_GOING}{reason}"))
}
