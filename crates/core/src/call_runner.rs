//! The call runner: what runs the calls the model asked for and produces
//! their results. [`CallRunner`] holds the registry (and where it comes
//! from when it changes mid-session), the approval side (policy, approver,
//! permissions, what the user allowed or refused for the session), the
//! lifecycle hooks and the timeout. It decides which calls may run, runs
//! them in batches (read-only calls together, a call that changes anything
//! alone), and returns one result per call.
//!
//! Guarantees: every call gets exactly one output, in call order (refused,
//! failed, timed-out and cancelled calls an error output); a call that got
//! an `action` event gets exactly one `observation`; a subagent's events
//! reach the stream before its call's observation; every output has its
//! secrets masked (`axon_tools::secret_mask`) before it is observed or
//! returned.

use std::any::Any;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use axon_protocol::{AgentEvent, ContentPart, ToolCall, ToolOutput};
use axon_tools::secret_mask::mask_output;
use axon_tools::{CallEvents, Progress, ProgressSink, ToolContext, ToolRegistry};
use futures_util::future::join_all;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::approval::{
    Approval, ApprovalPolicy, Approver, Gate, Permissions, SharedApproval, UnderAuto,
};
use crate::batch::batches;
use crate::config::AgentConfig;
use crate::lifecycle::{HookPermission, Lifecycle, LifecycleFuture, Verdict, add_context};
use crate::model_turn::PlannedCall;
use crate::sink::EventSink;
use crate::tool_source::ToolSource;

/// Runs a turn's calls: the tools, who may say no to them, and the hooks
/// told of them.
pub(crate) struct CallRunner {
    pub(crate) registry: Arc<ToolRegistry>,
    /// Where the tools come from when they can change mid-session.
    tool_source: Option<Arc<dyn ToolSource>>,
    /// What every call is given (the workspace, the session's powers).
    pub(crate) tools: ToolContext,
    /// The approval policy as last read (from `shared_approval` when set).
    pub(crate) policy: ApprovalPolicy,
    /// Where the approval policy is read from when a front end may change
    /// it mid-turn.
    pub(crate) shared_approval: Option<Arc<SharedApproval>>,
    /// A subagent's parent's policy, as the user may change it mid-turn:
    /// the subagent is never looser.
    pub(crate) bound: Option<Arc<SharedApproval>>,
    pub(crate) approver: Option<Arc<dyn Approver>>,
    /// Rules and the sandbox, consulted before the approval policy.
    pub(crate) permissions: Option<Arc<dyn Permissions>>,
    /// Tools the user allowed for the rest of the session.
    allowed: HashSet<String>,
    /// Tools the user refused for the rest of the session.
    denied: HashSet<String>,
    /// Hooks and checkpoints, told of each step.
    pub(crate) lifecycle: Option<Arc<dyn Lifecycle>>,
    /// Longest one tool call may run.
    pub(crate) tool_timeout: Duration,
    /// Whether a call that changes something shows a preview in its
    /// `action` event.
    pub(crate) preview_actions: bool,
    /// Whether secrets in results are masked before the model sees them.
    pub(crate) mask_secrets: bool,
}

/// What a turn's calls gave.
pub(crate) struct CallResults {
    /// One per call, in call order.
    pub(crate) outputs: Vec<ToolOutput>,
    /// Ids of the calls refused before they ran.
    pub(crate) refused: HashSet<String>,
    /// Why a hook stopped the run, if one did.
    pub(crate) halted: Option<String>,
}

impl CallRunner {
    pub(crate) fn new(
        registry: Arc<ToolRegistry>,
        tools: ToolContext,
        config: &AgentConfig,
    ) -> Self {
        CallRunner {
            registry,
            tool_source: None,
            tools,
            policy: config.approval,
            shared_approval: None,
            bound: None,
            approver: None,
            permissions: None,
            allowed: HashSet::new(),
            denied: HashSet::new(),
            lifecycle: None,
            tool_timeout: config.tool_timeout,
            preview_actions: config.preview_actions,
            mask_secrets: config.mask_secrets,
        }
    }

    /// The policy in force: the shared one when set, never looser than a
    /// bounding parent's.
    pub(crate) fn approval(&self) -> ApprovalPolicy {
        let own = self.shared_approval.as_ref().map_or(self.policy, |s| s.get());
        match &self.bound {
            Some(parent) => own.stricter(parent.get()),
            None => own,
        }
    }

    /// Brings `policy` up to the policy in force.
    pub(crate) fn sync_approval(&mut self) {
        self.policy = self.approval();
    }

    /// Takes the tools from `source` from now on.
    pub(crate) fn set_tool_source(&mut self, source: Arc<dyn ToolSource>) {
        self.tool_source = Some(source);
    }

    /// Brings the registry up to the tool source's.
    pub(crate) fn sync_tools(&mut self) {
        let Some(source) = &self.tool_source else { return };
        let current = source.current();
        if !Arc::ptr_eq(&current, &self.registry) {
            self.registry = current;
        }
    }

    pub(crate) fn lifecycle(&self) -> Option<&dyn Lifecycle> {
        self.lifecycle.as_deref()
    }

    /// [`crate::lifecycle::consult`] on this runner's lifecycle (the
    /// agent's too: prompts and stops go through the same hooks).
    pub(crate) async fn consult<'a>(
        &'a self,
        emit: EventSink<'_>,
        cancel: &CancellationToken,
        ask: impl FnOnce(&'a dyn Lifecycle) -> LifecycleFuture<'a>,
    ) -> Verdict {
        crate::lifecycle::consult(self.lifecycle.as_deref(), emit, cancel, ask).await
    }

    /// Runs a turn's calls (see `batch` for what runs concurrently) and
    /// returns one output per call, in call order. `parent` is what each
    /// call is lent: the agent's powers, for a subagent it starts.
    pub(crate) async fn run(
        &mut self,
        calls: &[PlannedCall],
        parent: Arc<dyn Any + Send + Sync>,
        emit: EventSink<'_>,
        cancel: &CancellationToken,
    ) -> CallResults {
        let read_only: Vec<bool> = calls
            .iter()
            .map(|p| {
                p.problem.is_none() && self.registry.reads_only(&p.call.name, &p.call.arguments)
            })
            .collect();
        // Where a subagent's events go: into this stream, in order, before
        // the call's observation.
        let (nested, mut nested_events) = mpsc::unbounded_channel::<AgentEvent>();
        let sink: CallEvents = Arc::new(move |event| {
            // Closed only once this turn's calls are done with.
            let _ = nested.send(event);
        });
        let mut outputs: Vec<Option<ToolOutput>> = vec![None; calls.len()];
        let mut refused = HashSet::new();
        let mut halted = None;
        // What PreToolUse hooks added for the model, per call.
        let mut context: Vec<Vec<String>> = vec![Vec::new(); calls.len()];
        // Calls that got an Action event; only they get an Observation.
        let mut announced = vec![false; calls.len()];
        for batch in batches(&read_only) {
            if cancel.is_cancelled() {
                break;
            }
            let mut runnable = Vec::new();
            for &i in &batch {
                // The calls not checked yet get a cancellation result.
                if cancel.is_cancelled() {
                    break;
                }
                let planned = &calls[i];
                let verdict = match self.registry.spec(&planned.call.name) {
                    Some(spec) if planned.problem.is_none() => {
                        self.consult(emit, cancel, |l| l.before_tool(&planned.call, spec)).await
                    }
                    _ => Verdict::default(),
                };
                context[i] = verdict.context;
                if let Some(reason) = &verdict.halt {
                    halted = Some(reason.clone());
                }
                let checked = match (verdict.block.or(verdict.halt), verdict.permission) {
                    (Some(reason), _) | (None, Some(HookPermission::Deny(reason))) => {
                        Err(ToolOutput::error(format!("A hook refused this call: {reason}")))
                    }
                    (None, permission) => self.check(planned, permission, emit, cancel).await,
                };
                match checked {
                    Ok(asked) => {
                        // A call just asked about was shown with its preview.
                        let preview = if read_only[i] || asked || !self.preview_actions {
                            None
                        } else {
                            tokio::select! {
                                preview = self.registry.preview_async(
                                    &self.tools,
                                    &planned.call.name,
                                    &planned.call.arguments,
                                ) => Some(preview),
                                () = cancel.cancelled() => None,
                            }
                        };
                        emit(AgentEvent::Action {
                            refused: false,
                            preview,
                            call: planned.call.clone(),
                        });
                        announced[i] = true;
                        runnable.push(i);
                    }
                    Err(output) => {
                        if self.registry.contains(&planned.call.name) {
                            // Shown as refused, live and when replayed.
                            refused.insert(planned.call.id.clone());
                            emit(AgentEvent::Action {
                                refused: true,
                                preview: None,
                                call: planned.call.clone(),
                            });
                            announced[i] = true;
                        }
                        outputs[i] = Some(output);
                    }
                }
            }
            let registry = &self.registry;
            let timeout = self.tool_timeout;
            let running = join_all(runnable.iter().map(|&i| {
                let call = &calls[i].call;
                let tools = self
                    .tools
                    .for_call(&call.id, Arc::clone(&sink), Some(Arc::clone(&parent)))
                    .with_progress(progress_sink(&call.id, &sink));
                async move {
                    let run = registry.call(&tools, &call.name, call.arguments.clone());
                    match tokio::time::timeout(timeout, run).await {
                        Ok(output) => output,
                        Err(_) => ToolOutput::error(format!(
                            "{} did not finish within {}s and was stopped",
                            call.name,
                            timeout.as_secs()
                        )),
                    }
                }
            }));
            // Dropping the running calls cancels them (shell process groups
            // are killed); they get a cancellation result below.
            tokio::pin!(running);
            let finished = loop {
                tokio::select! {
                    biased;
                    () = cancel.cancelled() => break None,
                    Some(event) = nested_events.recv() => emit(event),
                    done = &mut running => break Some(done),
                }
            };
            while let Ok(event) = nested_events.try_recv() {
                emit(event);
            }
            if let Some(done) = finished {
                for (&i, output) in runnable.iter().zip(done) {
                    let (output, halt) =
                        self.after_hooks(&calls[i].call, output, emit, cancel).await;
                    if halt.is_some() {
                        halted = halt;
                    }
                    outputs[i] = Some(output);
                }
            }
            for &i in &batch {
                if let Some(output) = outputs[i].as_mut() {
                    for text in context[i].drain(..) {
                        output.content.push(ContentPart::text(format!("\n{text}")));
                    }
                }
            }
            // The one door to the model: whatever a result now holds
            // (the tool's output, a hook's context) is masked here.
            for &i in &batch {
                if let Some(output) = outputs[i].as_mut()
                    && self.mask_secrets
                    && let Some(notice) =
                        mask_output(&calls[i].call.name, &calls[i].call.arguments, output)
                {
                    emit(AgentEvent::Warning { message: notice });
                }
            }
            for &i in &batch {
                if let Some(output) = &outputs[i]
                    && announced[i]
                {
                    emit(observation(&calls[i].call, output));
                }
            }
        }
        let outputs = calls
            .iter()
            .zip(outputs)
            .zip(announced)
            .map(|((planned, output), announced)| {
                output.unwrap_or_else(|| {
                    let output = ToolOutput::error("Cancelled by the user before it finished.");
                    if announced {
                        emit(observation(&planned.call, &output));
                    }
                    output
                })
            })
            .collect();
        CallResults { outputs, refused, halted }
    }

    /// Whether a call may run: readable, known, and allowed by the policy
    /// (`Ok(true)` when the user was asked, with a preview). Otherwise the
    /// error output the model gets instead.
    async fn check(
        &mut self,
        planned: &PlannedCall,
        hook: Option<HookPermission>,
        emit: EventSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<bool, ToolOutput> {
        if let Some(problem) = &planned.problem {
            return Err(ToolOutput::error(problem.clone()));
        }
        let name = &planned.call.name;
        let Some(spec) = self.registry.spec(name).cloned() else {
            emit(AgentEvent::Warning {
                message: format!("the model asked for '{name}', which is not an available tool"),
            });
            let available: Vec<&str> = self.registry.names().collect();
            return Err(ToolOutput::error(format!(
                "Tool '{name}' is not available. Available tools: {}",
                available.join(", ")
            )));
        };
        let gate = match &self.permissions {
            Some(permissions) => permissions.gate(&planned.call, &spec),
            None => Gate::Policy,
        };
        // A hook's word comes after the deny rules, before the policy.
        let gate = match (gate, hook) {
            (Gate::Deny(reason), _) => Gate::Deny(reason),
            (_, Some(HookPermission::Allow)) => Gate::Allow,
            (_, Some(HookPermission::Ask(reason) | HookPermission::Deny(reason))) => {
                Gate::Confirm(format!("A hook asks the user first: {reason}"))
            }
            (gate, None) => gate,
        };
        // A deny rule holds for tools that only read too (`read_file(.env)`).
        if let Gate::Deny(reason) = gate {
            return Err(ToolOutput::error(reason));
        }
        // A call that only reads runs unasked, unless a rule or hook asks
        // (`read_file(**/.env*)`, the built-in rule for secret files).
        let reads_only = self.registry.reads_only(name, &planned.call.arguments);
        if reads_only && !matches!(gate, Gate::Confirm(_)) {
            return Ok(false);
        }
        if self.denied.contains(name) {
            return Err(ToolOutput::error(format!(
                "The user refused {name} for the rest of this session; do not call it again."
            )));
        }
        self.sync_approval();
        let confirm = match gate {
            _ if self.policy == ApprovalPolicy::ReadOnly && !reads_only => {
                return Err(ToolOutput::error(format!(
                    "Refused: this session is read-only, and {name} changes files or runs \
                     commands. Use read-only tools, or tell the user what you would change."
                )));
            }
            Gate::Allow => return Ok(false),
            Gate::Confirm(reason) => Some(reason),
            Gate::LeaveSandbox { ask, under_auto } => {
                match (self.policy == ApprovalPolicy::Auto, under_auto) {
                    (true, UnderAuto::Allow) => return Ok(false),
                    (true, UnderAuto::Refuse(reason)) => return Err(ToolOutput::error(reason)),
                    _ => Some(ask),
                }
            }
            // A deny returned above.
            Gate::Policy | Gate::Deny(_) => None,
        };
        if confirm.is_none() && (self.allowed.contains(name) || self.policy == ApprovalPolicy::Auto)
        {
            return Ok(false);
        }
        let Some(approver) = self.approver.clone() else {
            return Err(ToolOutput::error(confirm.unwrap_or_else(|| {
                format!("Refused: {name} needs the user's approval and no one can give it here.")
            })));
        };
        let answer = tokio::select! {
            answer = approver.approve(&planned.call, &spec) => answer,
            () = cancel.cancelled() => Approval::Deny("the run was cancelled".to_string()),
        };
        match answer {
            Approval::Allow => Ok(true),
            Approval::AllowTool => {
                self.allowed.insert(name.clone());
                Ok(true)
            }
            Approval::Deny(reason) => {
                Err(ToolOutput::error(format!("The user did not allow {name}: {reason}")))
            }
            Approval::DenyTool(reason) => {
                self.denied.insert(name.clone());
                Err(ToolOutput::error(format!(
                    "The user did not allow {name} and refused it for the rest of this \
                     session ({reason}); do not call it again."
                )))
            }
        }
    }

    /// PostToolUse: what the hooks say of a result is added to it; and
    /// why a hook stopped the run, if one did.
    async fn after_hooks(
        &self,
        call: &ToolCall,
        mut output: ToolOutput,
        emit: EventSink<'_>,
        cancel: &CancellationToken,
    ) -> (ToolOutput, Option<String>) {
        let verdict = self.consult(emit, cancel, |l| l.after_tool(call, &output)).await;
        if let Some(reason) = &verdict.block {
            output.content.push(ContentPart::text(format!("\nA hook objected: {reason}")));
        }
        add_context(&mut output.content, &verdict);
        (output, verdict.halt)
    }
}

fn observation(call: &ToolCall, output: &ToolOutput) -> AgentEvent {
    AgentEvent::Observation {
        call_id: call.id.clone(),
        name: call.name.clone(),
        output: output.clone(),
    }
}

/// Where a call's progress goes: a `tool_progress` event for it, in the
/// agent's stream (wrapped like any event of a subagent's calls).
fn progress_sink(call_id: &str, events: &CallEvents) -> ProgressSink {
    let call_id = call_id.to_string();
    let events = Arc::clone(events);
    Arc::new(move |progress: Progress| {
        events(AgentEvent::ToolProgress {
            call_id: call_id.clone(),
            message: progress.message,
            progress: progress.progress,
            total: progress.total,
        });
    })
}
