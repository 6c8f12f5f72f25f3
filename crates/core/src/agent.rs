//! The ReAct loop: ask the model, run the tools it asks for, feed the
//! results back, until it answers.
//!
//! The history handed to the provider is valid at every step: every tool
//! call gets exactly one result (refused, failed and cancelled calls get an
//! error result), and a cancelled turn leaves at most the partial text. A
//! turn whose stream broke off is asked again with the same request. Before
//! every model call the history is fitted to 80 % of the model's window
//! (trimmed, or summarised with `ContextStrategy::Summarize`); a
//! context-length error trims the oldest half and retries once.

use std::collections::HashSet;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use axon_llm::retry::RetryPolicy;
use axon_llm::{FinishReason, Provider, ToolProtocol, text_protocol};
use axon_protocol::{AgentEvent, Message, Role, ToolCall, ToolSpec};
use axon_tools::{ToolContext, ToolRegistry};
use tokio_util::sync::CancellationToken;

use crate::approval::{ApprovalPolicy, Approver, SharedApproval};
use crate::history::{History, Journal};
use crate::lifecycle::{Lifecycle, LifecycleFuture, Verdict, add_context, keep_going};
use crate::tokens::TokenCounter;
use crate::tool_source::ToolSource;

#[derive(Debug, Clone)]
pub struct AgentConfig {
    pub system_prompt: String,
    /// Model calls per run before it stops with a warning.
    pub max_iterations: u32,
    pub approval: ApprovalPolicy,
    /// Longest one tool call may run.
    pub tool_timeout: Duration,
    /// Fresh attempts at a turn whose stream broke off or stalled.
    pub turn_retries: u32,
    /// Backoff between those attempts.
    pub retry: RetryPolicy,
    pub max_output_tokens: Option<u32>,
    /// What happens when the history outgrows 80 % of the window.
    pub context_strategy: ContextStrategy,
    /// How many rules the system prompt carries; when any, tool results
    /// end with a short reminder of them.
    pub rule_count: usize,
    /// Tools after whose successful call the run ends (plan mode's
    /// `submit_plan`).
    pub stop_tools: Vec<String>,
    /// Each call that changes something carries a preview of what it is
    /// about to do in its `action` event (for front ends that show the
    /// diff of every edit, asked about or not).
    pub preview_actions: bool,
}

/// How a history that no longer fits is made to fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ContextStrategy {
    /// Drop the oldest turns from what is sent.
    #[default]
    Trim,
    /// Have the model summarise the oldest turns, and send the summary
    /// instead; trim if that fails.
    Summarize,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            system_prompt: String::new(),
            max_iterations: 25,
            approval: ApprovalPolicy::Auto,
            tool_timeout: Duration::from_secs(15 * 60),
            turn_retries: 3,
            retry: RetryPolicy::default(),
            max_output_tokens: None,
            context_strategy: ContextStrategy::Trim,
            rule_count: 0,
            stop_tools: Vec::new(),
            preview_actions: false,
        }
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunOutcome {
    /// The model answered; the answer's text.
    Answered(String),
    /// `max_iterations` model calls without an answer; the last text.
    IterationLimit(String),
    /// Cancelled; the text received so far.
    Cancelled(String),
    /// A provider error that retrying could not fix.
    Failed(String),
    /// The model declined (a refusal, or its provider's content filter
    /// stopped the reply); the text it gave.
    Refused(String),
    /// A hook refused the request (`UserPromptSubmit`: the model never saw
    /// it) or stopped the run (`"continue": false`), for this reason.
    Blocked(String),
}

/// Receives every event of a run, in order.
pub type EventSink<'a> = &'a (dyn Fn(AgentEvent) + Send + Sync);

pub struct Agent {
    pub(crate) provider: Arc<dyn Provider>,
    pub(crate) registry: Arc<ToolRegistry>,
    pub(crate) tools: ToolContext,
    pub(crate) config: AgentConfig,
    pub(crate) approver: Option<Arc<dyn Approver>>,
    /// Rules and the sandbox, consulted before the approval policy.
    pub(crate) permissions: Option<Arc<dyn crate::approval::Permissions>>,
    pub(crate) history: History,
    /// Tools the user allowed for the rest of the session.
    pub(crate) allowed: HashSet<String>,
    /// Tools the user refused for the rest of the session.
    pub(crate) denied: HashSet<String>,
    /// Ids of the calls of the turn's current batch that were refused.
    pub(crate) refused: HashSet<String>,
    /// Where the request being worked on sits in the history.
    pub(crate) prompt_index: usize,
    /// The system prompt and tools every request carries, built once per
    /// provider (they are the same on every turn).
    pub(crate) preamble: OnceLock<Preamble>,
    /// Where the approval policy is read from when a front end may change
    /// it mid-turn.
    pub(crate) shared_approval: Option<Arc<SharedApproval>>,
    /// Hooks and checkpoints, told of each step.
    pub(crate) lifecycle: Option<Arc<dyn Lifecycle>>,
    /// A subagent's parent's policy, as the user may change it mid-turn:
    /// the subagent is never looser.
    pub(crate) bound: Option<Arc<SharedApproval>>,
    /// Why a hook stopped the run being worked on, once one did.
    pub(crate) halted: Option<String>,
    /// Where the tools come from when they can change mid-session.
    pub(crate) tool_source: Option<Arc<dyn ToolSource>>,
}

/// What every request sends before the history, and its token counts.
pub(crate) struct Preamble {
    pub(crate) system: String,
    pub(crate) tools: Vec<ToolSpec>,
    /// The tools the text protocol describes in `system`.
    pub(crate) text_tools: Vec<ToolSpec>,
    estimated: OnceLock<u64>,
    exact: OnceLock<u64>,
}

impl Preamble {
    fn new(registry: &ToolRegistry, provider: &dyn Provider, config: &AgentConfig) -> Self {
        let system_prompt = &config.system_prompt;
        // A read-only session refuses every other tool: the model is not
        // offered them (the policy can change mid-session, so this is
        // decided here rather than by removing them from the registry).
        let specs: Vec<ToolSpec> =
            registry.specs().filter(|s| config.approval.offers(s)).cloned().collect();
        // A small window cannot afford every tool at full length.
        let specs = crate::brief::tools_for_window(specs, provider.info().context_window);
        let (system, tools, text_tools) = match provider.info().tool_protocol {
            ToolProtocol::Native => (system_prompt.to_string(), specs, Vec::new()),
            ToolProtocol::Text => (
                format!("{system_prompt}\n\n{}", text_protocol::instructions(&specs)),
                Vec::new(),
                specs,
            ),
        };
        Preamble { system, tools, text_tools, estimated: OnceLock::new(), exact: OnceLock::new() }
    }

    /// Its tokens as `counter` counts now (estimated, or exactly once loaded).
    pub(crate) fn tokens(&self, counter: &TokenCounter) -> u64 {
        let slot = if counter.is_loaded() { &self.exact } else { &self.estimated };
        *slot.get_or_init(|| counter.preamble(&self.system, &self.tools))
    }
}

/// The agent's preamble, built on first use; a free function so that the
/// borrow is of the `preamble` field alone and the history stays mutable.
pub(crate) fn preamble_of<'a>(
    cell: &'a OnceLock<Preamble>,
    registry: &ToolRegistry,
    provider: &dyn Provider,
    config: &AgentConfig,
) -> &'a Preamble {
    cell.get_or_init(|| Preamble::new(registry, provider, config))
}

/// One tool call as the loop will handle it.
pub(crate) struct PlannedCall {
    pub(crate) call: ToolCall,
    /// Why it cannot run at all (unreadable arguments or block).
    pub(crate) problem: Option<String>,
}

/// Why a model call gave no turn: cancelled (with the partial text), or
/// failed for good.
pub(crate) enum TurnEnd {
    Cancelled(String),
    Failed(String),
}

impl Agent {
    pub fn new(
        provider: Arc<dyn Provider>,
        registry: Arc<ToolRegistry>,
        tools: ToolContext,
        config: AgentConfig,
    ) -> Self {
        let history = History::new(&provider.info().model);
        Agent {
            provider,
            registry,
            tools,
            config,
            approver: None,
            permissions: None,
            history,
            allowed: HashSet::new(),
            denied: HashSet::new(),
            refused: HashSet::new(),
            prompt_index: 0,
            preamble: OnceLock::new(),
            shared_approval: None,
            lifecycle: None,
            bound: None,
            halted: None,
            tool_source: None,
        }
    }

    /// Who is told of each step of a run (hooks, checkpoints).
    pub fn with_lifecycle(mut self, lifecycle: Arc<dyn Lifecycle>) -> Self {
        self.set_lifecycle(lifecycle);
        self
    }

    pub fn set_lifecycle(&mut self, lifecycle: Arc<dyn Lifecycle>) {
        self.lifecycle = Some(lifecycle);
    }

    /// Who answers `ApprovalPolicy::Ask`. Without one, asking means no.
    pub fn with_approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = Some(approver);
        self
    }

    /// Standing permissions consulted before the approval policy. Without,
    /// the policy alone decides.
    pub fn with_permissions(mut self, permissions: Arc<dyn crate::approval::Permissions>) -> Self {
        self.permissions = Some(permissions);
        self
    }

    /// Continues an earlier conversation.
    pub fn with_history(mut self, history: Vec<Message>) -> Self {
        self.history.replace(history, Vec::new());
        self
    }

    /// Continues an earlier conversation whose messages' token counts were
    /// recorded (`None` where one must be counted again).
    pub fn with_counted_history(mut self, history: Vec<Message>, tokens: Vec<Option<u64>>) -> Self {
        self.history.replace(history, tokens);
        self
    }

    /// Goes on from another conversation (a resumed session) in place of
    /// this one; `tokens` as in [`Agent::with_counted_history`].
    pub fn replace_history(&mut self, history: Vec<Message>, tokens: Vec<Option<u64>>) {
        self.history.replace(history, tokens);
        self.prompt_index = 0;
    }

    /// Talks to another model from the next turn on; the conversation and
    /// tools stay.
    pub fn set_provider(&mut self, provider: Arc<dyn Provider>) {
        self.provider = provider;
        // Its tool protocol may differ: the preamble is built again.
        self.preamble = OnceLock::new();
    }

    /// Takes the approval policy from `shared`, which a front end may
    /// change while a turn runs: it applies from the next call checked.
    pub fn with_shared_approval(mut self, shared: Arc<SharedApproval>) -> Self {
        shared.set(self.config.approval);
        self.shared_approval = Some(shared);
        self
    }

    pub fn approval(&self) -> ApprovalPolicy {
        let own = self.shared_approval.as_ref().map_or(self.config.approval, |s| s.get());
        match &self.bound {
            Some(parent) => own.stricter(parent.get()),
            None => own,
        }
    }

    /// Brings the policy in the config up to the shared one; the tools
    /// offered depend on it, so the preamble is built again on a change.
    pub fn sync_approval(&mut self) {
        let approval = self.approval();
        if self.config.approval != approval {
            self.config.approval = approval;
            self.preamble = OnceLock::new();
        }
    }

    /// Where every message, usage report and compaction is recorded.
    pub fn with_journal(mut self, journal: Arc<dyn Journal>) -> Self {
        self.set_journal(journal);
        self
    }

    pub fn set_journal(&mut self, journal: Arc<dyn Journal>) {
        self.history.set_journal(Some(journal));
    }

    /// Records nothing from now on (a new conversation not saved yet).
    pub fn detach_journal(&mut self) {
        self.history.set_journal(None);
    }

    pub fn history(&self) -> &[Message] {
        self.history.messages()
    }

    /// Starts a new conversation: nothing said before is sent again.
    pub fn clear(&mut self) {
        self.history.clear();
        self.prompt_index = 0;
    }

    /// Estimated tokens the next request would send, corrected by what the
    /// provider has reported.
    pub fn context_tokens(&self) -> u64 {
        let fixed = self.preamble().tokens(&self.history.counter);
        self.history.counter.corrected(fixed + self.history.raw_tokens())
    }

    pub fn provider(&self) -> &Arc<dyn Provider> {
        &self.provider
    }

    pub fn registry(&self) -> &Arc<ToolRegistry> {
        &self.registry
    }

    /// Runs one user request to its end, reporting every step to `emit`.
    pub async fn run(
        &mut self,
        prompt: &str,
        emit: EventSink<'_>,
        cancel: &CancellationToken,
    ) -> RunOutcome {
        self.run_message(Message::user(prompt), emit, cancel).await
    }

    /// [`Agent::run`] with a user message of any content (attached files,
    /// images).
    pub async fn run_message(
        &mut self,
        prompt: Message,
        emit: EventSink<'_>,
        cancel: &CancellationToken,
    ) -> RunOutcome {
        // A run dropped mid-tool (its future discarded) leaves calls
        // without results; close them before the history is sent again.
        self.history.close_open_calls();
        let asked = prompt.text();
        self.halted = None;
        let mut verdict = self.consult(emit, cancel, |l| l.prompt_submitted(&asked)).await;
        if let Some(reason) = verdict.block.take().or(verdict.halt.take()) {
            emit(AgentEvent::Warning {
                message: format!("a hook refused the request (the model did not see it): {reason}"),
            });
            return RunOutcome::Blocked(reason);
        }
        let mut prompt = prompt;
        // A request that failed or was cancelled before any reply is still
        // the last message: asked again, it is answered, not repeated.
        let unanswered = self.history.messages().last().is_some_and(|m| {
            m.role == Role::User && m.tool_call_id.is_none() && m.content == prompt.content
        });
        if !unanswered {
            add_context(&mut prompt.content, &verdict);
            self.history.push(prompt);
        }
        self.prompt_index = self.history.len() - 1;
        let mut last_text = String::new();
        let mut repeats = crate::repeats::Repeats::default();
        let mut answer_only = false;
        let mut stop_blocked = false;
        for _ in 0..self.config.max_iterations {
            let turn = match self.next_turn(answer_only, emit, cancel).await {
                Ok(turn) => turn,
                Err(TurnEnd::Cancelled(partial)) => {
                    if !partial.is_empty() {
                        self.history.push(Message::assistant(partial.clone()));
                    }
                    return RunOutcome::Cancelled(partial);
                }
                Err(TurnEnd::Failed(message)) => {
                    self.history.record_failure(&message);
                    emit(AgentEvent::Error { message: message.clone() });
                    return RunOutcome::Failed(message);
                }
            };
            let turn_refused = turn.finish == Some(FinishReason::ContentFilter);
            if turn.finish == Some(FinishReason::Length) {
                emit(AgentEvent::Warning {
                    message: "the model reached its output limit; its reply may be cut short"
                        .to_string(),
                });
            }
            let (assistant, text, calls) = self.interpret(turn, answer_only);
            for (n, planned) in calls.iter().enumerate() {
                // An unreadable ```json:tool block names no tool, so no tool
                // call event shows it: say it here.
                if let (true, Some(problem)) = (planned.call.name.is_empty(), &planned.problem) {
                    emit(AgentEvent::Warning {
                        message: format!(
                            "the model's tool block {} could not be read ({problem}); it was \
                             told so and may try again",
                            n + 1
                        ),
                    });
                }
            }
            self.history.push(assistant);
            if calls.is_empty() {
                emit(AgentEvent::Answer { text: text.clone() });
                let again = stop_blocked;
                let verdict = if turn_refused {
                    Verdict::default()
                } else {
                    self.consult(emit, cancel, |l| l.stopping(&text, again)).await
                };
                if let Some(reason) = &verdict.halt {
                    emit(AgentEvent::Warning {
                        message: format!("a hook ended the run: {reason}"),
                    });
                } else if let Some(reason) = verdict.block {
                    stop_blocked = true;
                    emit(AgentEvent::Warning {
                        message: format!("a stop hook kept the model going: {reason}"),
                    });
                    self.history.push(keep_going(&reason));
                    last_text = text;
                    continue;
                }
                if turn_refused {
                    // The request and the refusal are taken back: neither is
                    // sent again (what ACP's `refusal` tells editors).
                    self.history.withdraw_from(self.prompt_index);
                    emit(AgentEvent::Warning {
                        message: "the model declined to answer (a refusal, or its provider's \
                                  content filter stopped the reply); the request was taken \
                                  back and will not be sent again"
                            .to_string(),
                    });
                    return RunOutcome::Refused(text);
                }
                return RunOutcome::Answered(text);
            }
            last_text = text;
            let mut outputs = self.run_calls(&calls, emit, cancel).await;
            let stop = calls.iter().zip(&outputs).any(|(planned, output)| {
                !output.is_error && self.config.stop_tools.contains(&planned.call.name)
            });
            let called: Vec<&ToolCall> = calls.iter().map(|planned| &planned.call).collect();
            if let Some(looping) = repeats.observe(&called, &mut outputs) {
                answer_only = true;
                emit(AgentEvent::Warning {
                    message: format!(
                        "the model called {} {} times with the same arguments and got the same                          result; its next reply is asked without tools, so that it answers",
                        looping.tool, looping.times
                    ),
                });
            }
            self.push_results(&calls, outputs);
            if cancel.is_cancelled() {
                return RunOutcome::Cancelled(last_text);
            }
            if let Some(reason) = self.halted.take() {
                emit(AgentEvent::Warning { message: format!("a hook stopped the run: {reason}") });
                return RunOutcome::Blocked(reason);
            }
            if stop {
                return RunOutcome::Answered(last_text);
            }
        }
        emit(AgentEvent::Warning {
            message: format!(
                "stopped after {} model calls without a final answer; the work so far is kept \
                 (raise the limit with --max-iterations or `max_iterations` in the config to let \
                 it go further)",
                self.config.max_iterations
            ),
        });
        RunOutcome::IterationLimit(last_text)
    }

    /// The system prompt and tool list every request carries.
    pub(crate) fn preamble(&self) -> &Preamble {
        preamble_of(&self.preamble, &self.registry, &*self.provider, &self.config)
    }
}

/// The lifecycle, consulted at each point of a run (`lifecycle.rs`).
impl Agent {
    /// Runs `ask` on the lifecycle (or says go on without one) and shows
    /// its warnings.
    /// A cancellation stops waiting for it (dropping a hook's future kills
    /// its process group) and says go on: the cancelled run ends anyway.
    pub(crate) async fn consult<'a>(
        &'a self,
        emit: EventSink<'_>,
        cancel: &CancellationToken,
        ask: impl FnOnce(&'a dyn Lifecycle) -> LifecycleFuture<'a>,
    ) -> Verdict {
        let Some(lifecycle) = self.lifecycle.as_deref() else {
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
}

/// Tools that change during a session (`tool_source.rs`).
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
