//! One subagent run: a fresh [`Agent`] with its own history and a subset of
//! its parent's tools, answering one task.
//!
//! Guarantees: the child is never let do more than its parent: its tools
//! are taken from the session's registry, its approval policy is the
//! stricter of the parent's and its definition's (so a read-only parent's
//! subagents only read, however deep), and it asks the parent's approver
//! and permissions. Its events reach the parent's stream wrapped in
//! `subagent` events with the parent's call id, except `usage`, passed on
//! as it is so that the session counts it once. It stops after its
//! iteration limit or when its output tokens pass its budget, and says so
//! in its result; only its final answer goes back to the parent's model.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axon_llm::Provider;
use axon_llm::retry::RetryPolicy;
use axon_protocol::{AgentEvent, ToolCall, ToolOutput, ToolSpec};
use axon_tools::{ToolContext, ToolError, ToolRegistry};
use tokio_util::sync::CancellationToken;

use crate::agent::{Agent, RunOutcome};
use crate::approval::{ApprovalPolicy, Approver, Permissions, SharedApproval};
use crate::config::{AgentConfig, ContextStrategy};
use crate::lifecycle::{Lifecycle, LifecycleFuture};

/// How deep subagents may nest: the main agent's subagents are at depth 1,
/// theirs (when a definition allows it) at 2, and those start none.
pub const MAX_DEPTH: u32 = 2;

/// What an agent lends each call it makes (through
/// [`ToolContext::caller`]), so that a subagent started by the call runs
/// with its parent's powers and no more.
pub(crate) struct Parent {
    pub(crate) provider: Arc<dyn Provider>,
    /// The session's tools (the main agent's registry).
    pub(crate) registry: Arc<ToolRegistry>,
    /// The parent's policy when the call was made.
    pub(crate) approval: ApprovalPolicy,
    /// The policy the user may change mid-turn (the session's), which a
    /// subagent follows whenever it is stricter than its own.
    pub(crate) shared_approval: Option<Arc<SharedApproval>>,
    pub(crate) approver: Option<Arc<dyn Approver>>,
    pub(crate) permissions: Option<Arc<dyn Permissions>>,
    pub(crate) lifecycle: Option<Arc<dyn Lifecycle>>,
    pub(crate) tool_timeout: Duration,
    pub(crate) turn_retries: u32,
    pub(crate) retry: RetryPolicy,
    pub(crate) max_output_tokens: Option<u32>,
    pub(crate) context_strategy: ContextStrategy,
    pub(crate) preview_actions: bool,
    pub(crate) mask_secrets: bool,
    /// The session's budget: a subagent's requests count and stop too.
    pub(crate) budget: Option<crate::cost::Budget>,
    /// The depth a subagent started by this call runs at.
    pub(crate) depth: u32,
    pub(crate) cancel: CancellationToken,
}

impl Agent {
    /// What this agent lends the calls of one turn.
    pub(crate) fn as_parent(&self, cancel: &CancellationToken) -> Parent {
        Parent {
            provider: Arc::clone(&self.model.provider),
            // A subagent's tools are chosen from the session's (its
            // approval policy, not its parent's tool set, bounds it).
            registry: self
                .calls
                .tools
                .caller::<Parent>()
                .map_or_else(|| Arc::clone(&self.calls.registry), |p| Arc::clone(&p.registry)),
            approval: self.approval(),
            shared_approval: self
                .calls
                .shared_approval
                .clone()
                .or_else(|| self.calls.bound.clone()),
            approver: self.calls.approver.clone(),
            permissions: self.calls.permissions.clone(),
            lifecycle: self.calls.lifecycle.clone(),
            tool_timeout: self.calls.tool_timeout,
            turn_retries: self.model.turn_retries,
            retry: self.model.retry.clone(),
            max_output_tokens: self.model.max_output_tokens,
            context_strategy: self.model.context_strategy,
            preview_actions: self.calls.preview_actions,
            mask_secrets: self.calls.mask_secrets,
            budget: self.model.budget.clone(),
            depth: self.calls.tools.caller::<Parent>().map_or(1, |p| p.depth + 1),
            cancel: cancel.clone(),
        }
    }
}

/// One run to make.
pub(crate) struct Child {
    /// Its name in events and hooks.
    pub(crate) agent: String,
    pub(crate) system_prompt: String,
    pub(crate) registry: ToolRegistry,
    pub(crate) approval: ApprovalPolicy,
    pub(crate) provider: Arc<dyn Provider>,
    pub(crate) max_iterations: u32,
    pub(crate) token_budget: u64,
    pub(crate) task: String,
    /// Said to the user (in the subagent's events) before it starts.
    pub(crate) notes: Vec<String>,
}

/// Runs `child` for the call `ctx` belongs to; the tool result is its
/// answer alone.
pub(crate) async fn run_child(ctx: &ToolContext, parent: &Parent, child: Child) -> ToolOutput {
    let call_id = ctx.call_id().unwrap_or_default().to_string();
    let agent_name = child.agent.clone();
    let tools: Vec<String> = child.registry.names().map(String::from).collect();
    let config = AgentConfig {
        system_prompt: child.system_prompt,
        max_iterations: child.max_iterations,
        approval: child.approval,
        tool_timeout: parent.tool_timeout,
        turn_retries: parent.turn_retries,
        retry: parent.retry.clone(),
        max_output_tokens: parent.max_output_tokens,
        context_strategy: parent.context_strategy,
        rule_count: 0,
        stop_tools: Vec::new(),
        preview_actions: parent.preview_actions,
        mask_secrets: parent.mask_secrets,
        budget: parent.budget.clone(),
    };
    let model = child.provider.info().model.clone();
    let mut agent = Agent::new(child.provider, Arc::new(child.registry), ctx.clone(), config);
    if let Some(approver) = &parent.approver {
        agent = agent.with_approver(Arc::clone(approver));
    }
    if let Some(permissions) = &parent.permissions {
        agent = agent.with_permissions(Arc::clone(permissions));
    }
    agent.calls.bound = parent.shared_approval.clone();
    if let Some(lifecycle) = &parent.lifecycle {
        agent = agent.with_lifecycle(Arc::new(ChildLifecycle {
            parent: Arc::clone(lifecycle),
            agent: agent_name.clone(),
        }));
    }
    let cancel = parent.cancel.child_token();
    let spent = AtomicU64::new(0);
    let budget = child.token_budget;
    let wrap = |event: AgentEvent| AgentEvent::Subagent {
        call_id: call_id.clone(),
        agent: agent_name.clone(),
        event: Box::new(event),
    };
    let emit = |event: AgentEvent| match event {
        AgentEvent::Usage { usage, model } => {
            let total =
                spent.fetch_add(usage.output_tokens, Ordering::Relaxed) + usage.output_tokens;
            if total > budget {
                cancel.cancel();
            }
            ctx.emit(AgentEvent::Usage { usage, model });
        }
        event => ctx.emit(wrap(event)),
    };
    let listed = if tools.is_empty() { "no tools".to_string() } else { tools.join(", ") };
    emit(AgentEvent::Info {
        message: format!(
            "{agent_name} started ({model}; tools: {listed}; approval {})",
            policy_name(child.approval)
        ),
    });
    for message in child.notes {
        emit(AgentEvent::Warning { message });
    }
    let outcome = agent.run(&child.task, &emit, &cancel).await;
    let spent = spent.load(Ordering::Relaxed);
    let over_budget = spent > budget;
    match outcome {
        RunOutcome::Answered(text) if text.trim().is_empty() => {
            ToolOutput::text(format!("{agent_name} finished without saying anything."))
        }
        RunOutcome::Answered(text) => ToolOutput::text(text),
        RunOutcome::IterationLimit(last) => ToolOutput::text(format!(
            "{agent_name} stopped after {} model calls without finishing its task. \
             Its last words:\n{}",
            child.max_iterations,
            or_nothing(&last)
        )),
        RunOutcome::Cancelled(last) if over_budget && !parent.cancel.is_cancelled() => {
            ToolOutput::text(format!(
                "{agent_name} was stopped: it spent {spent} output tokens, over its budget \
                 of {budget}. Its last words:\n{}",
                or_nothing(&last)
            ))
        }
        RunOutcome::Cancelled(_) => {
            ToolOutput::error(format!("{agent_name} was cancelled before it finished."))
        }
        RunOutcome::Failed(message) => ToolOutput::error(format!("{agent_name} failed: {message}")),
        RunOutcome::Refused(text) => {
            ToolOutput::error(format!("{agent_name} declined the task: {}", or_nothing(&text)))
        }
        RunOutcome::Blocked(reason) => {
            ToolOutput::error(format!("a hook refused {agent_name}'s task: {reason}"))
        }
    }
}

/// A policy as the config names it.
pub(crate) fn policy_name(policy: ApprovalPolicy) -> &'static str {
    match policy {
        ApprovalPolicy::Auto => "auto",
        ApprovalPolicy::Ask => "ask",
        ApprovalPolicy::ReadOnly => "read-only",
    }
}

fn or_nothing(text: &str) -> &str {
    if text.trim().is_empty() { "(nothing)" } else { text }
}

/// The parent's lifecycle as a subagent sees it: its tool calls are the
/// parent's hooks' business as any other, and its stop is a subagent's
/// stop (`SubagentStop`), not the session's.
struct ChildLifecycle {
    parent: Arc<dyn Lifecycle>,
    agent: String,
}

impl Lifecycle for ChildLifecycle {
    fn before_tool<'a>(&'a self, call: &'a ToolCall, spec: &'a ToolSpec) -> LifecycleFuture<'a> {
        self.parent.before_tool(call, spec)
    }

    fn after_tool<'a>(&'a self, call: &'a ToolCall, output: &'a ToolOutput) -> LifecycleFuture<'a> {
        self.parent.after_tool(call, output)
    }

    fn stopping<'a>(&'a self, answer: &'a str, again: bool) -> LifecycleFuture<'a> {
        self.parent.subagent_stopping(&self.agent, answer, again)
    }
}

/// A tool error for a call made where no agent can lend its powers.
pub(crate) fn no_parent(tool: &str) -> ToolError {
    ToolError::failed(format!("{tool} starts a subagent, which only an agent's own calls can do"))
}
