//! The ReAct loop: ask the model, run the tools it asks for, feed the
//! results back, until it answers. [`Agent`] owns the two parts and goes
//! between them: the model turn (`model_turn.rs`: provider, history,
//! preamble, context fitting, retries) and the call runner
//! (`call_runner.rs`: registry, approvals, hooks, timeouts). What the loop
//! itself decides: hooks on the prompt and on stopping, refusals, repeated
//! calls, stop tools and the iteration limit.
//!
//! The history handed to the provider is valid at every step: every tool
//! call gets exactly one result (refused, failed and cancelled calls get an
//! error result), and a cancelled turn leaves at most the partial text. A
//! turn whose stream broke off is asked again with the same request. Before
//! every model call the history is fitted to 80 % of the model's window
//! (trimmed, or summarised with `ContextStrategy::Summarize`); a
//! context-length error trims the oldest half and retries once.

use std::any::Any;
use std::sync::Arc;

use axon_llm::{AssembledTurn, FinishReason, Provider};
use axon_protocol::{AgentEvent, Message, Role, ToolCall};
use axon_tools::{ToolContext, ToolRegistry};
use tokio_util::sync::CancellationToken;

use crate::approval::{ApprovalPolicy, Approver, Permissions, SharedApproval};
use crate::call_runner::{CallResults, CallRunner};
use crate::config::AgentConfig;
use crate::history::Journal;
use crate::lifecycle::{Lifecycle, Verdict, add_context, keep_going};
use crate::model_turn::{ModelTurn, PlannedCall, TurnEnd};
use crate::sink::EventSink;
use crate::tool_source::ToolSource;

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

/// Runs a conversation: the model turn asks the model, the call runner
/// runs the calls it asked for, and the loop (`run_message`) goes between
/// them until the model answers.
pub struct Agent {
    /// What asks the model and reads its reply; holds the history.
    pub(crate) model: ModelTurn,
    /// What runs the calls the model asked for.
    pub(crate) calls: CallRunner,
    /// Model calls per run before it stops with a warning.
    max_iterations: u32,
    /// Tools after whose successful call the run ends.
    stop_tools: Vec<String>,
}

impl Agent {
    pub fn new(
        provider: Arc<dyn Provider>,
        registry: Arc<ToolRegistry>,
        tools: ToolContext,
        config: AgentConfig,
    ) -> Self {
        Agent {
            model: ModelTurn::new(provider, &registry, &config),
            calls: CallRunner::new(registry, tools, &config),
            max_iterations: config.max_iterations,
            stop_tools: config.stop_tools,
        }
    }

    /// Who is told of each step of a run (hooks, checkpoints).
    pub fn with_lifecycle(mut self, lifecycle: Arc<dyn Lifecycle>) -> Self {
        self.set_lifecycle(lifecycle);
        self
    }

    pub fn set_lifecycle(&mut self, lifecycle: Arc<dyn Lifecycle>) {
        self.calls.lifecycle = Some(lifecycle);
    }

    /// Who answers `ApprovalPolicy::Ask`. Without one, asking means no.
    pub fn with_approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.calls.approver = Some(approver);
        self
    }

    /// Standing permissions consulted before the approval policy. Without,
    /// the policy alone decides.
    pub fn with_permissions(mut self, permissions: Arc<dyn Permissions>) -> Self {
        self.calls.permissions = Some(permissions);
        self
    }

    /// Continues an earlier conversation.
    pub fn with_history(mut self, history: Vec<Message>) -> Self {
        self.model.history.replace(history, Vec::new());
        self
    }

    /// Continues an earlier conversation whose messages' token counts were
    /// recorded (`None` where one must be counted again).
    pub fn with_counted_history(mut self, history: Vec<Message>, tokens: Vec<Option<u64>>) -> Self {
        self.model.history.replace(history, tokens);
        self
    }

    /// Goes on from another conversation (a resumed session) in place of
    /// this one; `tokens` as in [`Agent::with_counted_history`].
    pub fn replace_history(&mut self, history: Vec<Message>, tokens: Vec<Option<u64>>) {
        self.model.history.replace(history, tokens);
        self.model.prompt_index = 0;
    }

    /// Talks to another model from the next turn on; the conversation and
    /// tools stay.
    pub fn set_provider(&mut self, provider: Arc<dyn Provider>) {
        // The user's choice: no fallback is answering any more.
        self.model.fallback.forget_primary();
        let info = provider.info().clone();
        self.model.set_provider(provider);
        // The session says which model answers from here on (a resume tells
        // the user when it goes on with another), and the history is
        // counted with that model's tokenizer.
        self.model.history.model_changed(&info.name, &info.model);
    }

    /// The providers a request continues on when the one in use fails for
    /// good (`fallback = [...]` in the config).
    pub fn with_fallbacks(mut self, list: Arc<dyn crate::Fallbacks>) -> Self {
        self.model.fallback.list = (!list.is_empty()).then_some(list);
        self
    }

    /// Takes the approval policy from `shared`, which a front end may
    /// change while a turn runs: it applies from the next call checked.
    pub fn with_shared_approval(mut self, shared: Arc<SharedApproval>) -> Self {
        shared.set(self.calls.policy);
        self.calls.shared_approval = Some(shared);
        self
    }

    pub fn approval(&self) -> ApprovalPolicy {
        self.calls.approval()
    }

    /// Brings the policy the calls are checked against up to the shared
    /// one; the tools offered depend on it, so the preamble is built again
    /// on a change.
    pub fn sync_approval(&mut self) {
        self.calls.sync_approval();
        self.offer_tools();
    }

    /// Where every message, usage report and compaction is recorded.
    pub fn with_journal(mut self, journal: Arc<dyn Journal>) -> Self {
        self.set_journal(journal);
        self
    }

    pub fn set_journal(&mut self, journal: Arc<dyn Journal>) {
        self.model.history.set_journal(Some(journal));
    }

    /// Records nothing from now on (a new conversation not saved yet).
    pub fn detach_journal(&mut self) {
        self.model.history.set_journal(None);
    }

    pub fn history(&self) -> &[Message] {
        self.model.history.messages()
    }

    /// Starts a new conversation: nothing said before is sent again.
    pub fn clear(&mut self) {
        self.model.history.clear();
        self.model.prompt_index = 0;
    }

    /// Estimated tokens the next request would send, corrected by what the
    /// provider has reported.
    pub fn context_tokens(&self) -> u64 {
        self.model.context_tokens()
    }

    pub fn provider(&self) -> &Arc<dyn Provider> {
        &self.model.provider
    }

    pub fn registry(&self) -> &Arc<ToolRegistry> {
        &self.calls.registry
    }

    /// Summarises everything before the last user request (`axon run
    /// --compact`). Returns how many messages the summary replaced.
    pub async fn compact_all(
        &mut self,
        emit: EventSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<usize, String> {
        self.model.compact_all(self.calls.lifecycle(), emit, cancel).await
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
        self.model.history.close_open_calls();
        // A fallback answered only the request it took over.
        self.model.back_to_primary(emit);
        let asked = prompt.text();
        let mut verdict = self.calls.consult(emit, cancel, |l| l.prompt_submitted(&asked)).await;
        if let Some(reason) = verdict.block.take().or(verdict.halt.take()) {
            emit(AgentEvent::Warning {
                message: format!("a hook refused the request (the model did not see it): {reason}"),
            });
            return RunOutcome::Blocked(reason);
        }
        let mut prompt = prompt;
        // A request that failed or was cancelled before any reply is still
        // the last message: asked again, it is answered, not repeated.
        let unanswered = self.model.history.messages().last().is_some_and(|m| {
            m.role == Role::User && m.tool_call_id.is_none() && m.content == prompt.content
        });
        if !unanswered {
            // What a UserPromptSubmit hook adds is a command's output, as
            // a tool's is: masked before the model sees it.
            if self.calls.mask_secrets {
                for text in &mut verdict.context {
                    let (masked, notice) = axon_tools::secret_mask::mask_hook_context(text);
                    *text = masked;
                    if let Some(message) = notice {
                        emit(AgentEvent::Warning { message });
                    }
                }
            }
            add_context(&mut prompt.content, &verdict);
            self.model.history.push(prompt);
        }
        self.model.prompt_index = self.model.history.len() - 1;
        let mut last_text = String::new();
        let mut repeats = crate::repeats::Repeats::default();
        let mut answer_only = false;
        let mut stop_blocked = false;
        for _ in 0..self.max_iterations {
            let turn = match self.ask_model(answer_only, emit, cancel).await {
                Ok(turn) => turn,
                Err(TurnEnd::Cancelled(partial)) => {
                    if !partial.is_empty() {
                        self.model.history.push(Message::assistant(partial.clone()));
                    }
                    return RunOutcome::Cancelled(partial);
                }
                Err(TurnEnd::Failed(message)) => {
                    self.model.history.record_failure(&message);
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
            let (assistant, text, calls) = self.model.interpret(turn, answer_only);
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
            self.model.history.push(assistant);
            if calls.is_empty() {
                emit(AgentEvent::Answer { text: text.clone() });
                let again = stop_blocked;
                let verdict = if turn_refused {
                    Verdict::default()
                } else {
                    self.calls.consult(emit, cancel, |l| l.stopping(&text, again)).await
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
                    self.model.history.push(keep_going(&reason));
                    last_text = text;
                    continue;
                }
                if turn_refused {
                    // The request and the refusal are taken back: neither is
                    // sent again (what ACP's `refusal` tells editors).
                    self.model.history.withdraw_from(self.model.prompt_index);
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
            let mut results = self.run_calls(&calls, emit, cancel).await;
            let stop = calls.iter().zip(&results.outputs).any(|(planned, output)| {
                !output.is_error && self.stop_tools.contains(&planned.call.name)
            });
            let called: Vec<&ToolCall> = calls.iter().map(|planned| &planned.call).collect();
            if let Some(looping) = repeats.observe(&called, &mut results.outputs) {
                answer_only = true;
                emit(AgentEvent::Warning {
                    message: format!(
                        "the model called {} {} times with the same arguments and got the same \
                         result; its next reply is asked without tools, so that it answers",
                        looping.tool, looping.times
                    ),
                });
            }
            self.model.push_results(&calls, results.outputs, &results.refused);
            if cancel.is_cancelled() {
                return RunOutcome::Cancelled(last_text);
            }
            if let Some(reason) = results.halted {
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
                self.max_iterations
            ),
        });
        RunOutcome::IterationLimit(last_text)
    }

    /// The model's next turn, with the policy and tools brought up to date
    /// first (a front end or the tool source may have changed them).
    async fn ask_model(
        &mut self,
        answer_only: bool,
        emit: EventSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<AssembledTurn, TurnEnd> {
        self.sync_approval();
        self.sync_tools();
        self.model.next_turn(answer_only, self.calls.lifecycle(), emit, cancel).await
    }

    /// Hands a turn's calls to the call runner, lending each the agent's
    /// powers (for a subagent it starts). The runner may have read a new
    /// approval policy while checking them: the model is offered tools by
    /// it from now on.
    async fn run_calls(
        &mut self,
        calls: &[PlannedCall],
        emit: EventSink<'_>,
        cancel: &CancellationToken,
    ) -> CallResults {
        let parent: Arc<dyn Any + Send + Sync> = Arc::new(self.as_parent(cancel));
        let results = self.calls.run(calls, parent, emit, cancel).await;
        self.offer_tools();
        results
    }

    /// Offers the model the call runner's tools under its policy.
    fn offer_tools(&mut self) {
        self.model.offer(&self.calls.registry, self.calls.policy);
    }
}

/// Tools that change during a session (`tool_source.rs`).
impl Agent {
    /// Takes its tools from `source` from now on, and before each model
    /// call.
    pub fn with_tool_source(mut self, source: Arc<dyn ToolSource>) -> Self {
        self.calls.set_tool_source(source);
        self.sync_tools();
        self
    }

    /// Brings the registry up to the source's; the offered tools depend on
    /// it, so the preamble is built again on a change.
    pub(crate) fn sync_tools(&mut self) {
        self.calls.sync_tools();
        self.offer_tools();
    }
}
