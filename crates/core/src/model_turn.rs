//! The model turn: what asks the model and reads its reply. [`ModelTurn`]
//! holds the provider, the history, the preamble (system prompt and tools
//! offered) and the settings of one model call; it builds the request,
//! streams it with retries of broken streams and one trim on a
//! context-length error, reads the reply's calls in either tool protocol,
//! and takes the calls' results back into the history. Fitting the history
//! to the window is its too (`compact.rs`).
//!
//! Guarantees: a stream that ends before the model finished is an error,
//! never a turn; a cancellation returns the text received so far; with the
//! tools withheld no call is read from the reply; every call read from a
//! reply gets exactly one result in the history (`push_results`).

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use axon_llm::retry::{RetryClass, RetryPolicy};
use axon_llm::{
    AssembledTurn, LlmError, Provider, ProviderEvent, ProviderRequest, ToolProtocol, TurnAssembler,
    text_protocol,
};
use axon_protocol::{
    AgentEvent, ContentPart, Message, TEXT_RESULTS_HEADER, ToolCall, ToolOutput, ToolSpec,
};
use axon_tools::ToolRegistry;
use futures_util::StreamExt;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::approval::ApprovalPolicy;
use crate::config::{AgentConfig, ContextStrategy};
use crate::fallback_list::FallbackState;
use crate::history::History;
use crate::lifecycle::Lifecycle;
use crate::sink::EventSink;
use crate::tokens::TokenCounter;

/// Asks the model for the next turn and keeps the conversation it is
/// asked with.
pub(crate) struct ModelTurn {
    pub(crate) provider: Arc<dyn Provider>,
    pub(crate) history: History,
    /// Where the request being worked on sits in the history.
    pub(crate) prompt_index: usize,
    /// The system prompt and tools every request carries.
    pub(crate) offered: Offered,
    pub(crate) max_output_tokens: Option<u32>,
    /// Fresh attempts at a turn whose stream broke off or stalled.
    pub(crate) turn_retries: u32,
    /// Backoff between those attempts.
    pub(crate) retry: RetryPolicy,
    pub(crate) context_strategy: ContextStrategy,
    /// How many rules the system prompt carries (each batch of results
    /// ends with a reminder of them when any).
    rule_count: usize,
    /// Checked before each request (`cost.rs`).
    pub(crate) budget: Option<crate::cost::Budget>,
    /// The providers a failing request may continue on (`fallback.rs`).
    pub(crate) fallback: FallbackState,
}

/// What the model is offered before the history: the system prompt and
/// the tools (the call runner's registry as the approval policy filters
/// it), and the preamble built from them once per provider.
pub(crate) struct Offered {
    system_prompt: String,
    tools: Arc<ToolRegistry>,
    policy: ApprovalPolicy,
    preamble: OnceLock<Preamble>,
}

impl Offered {
    /// The preamble for `provider`, built on first use.
    pub(crate) fn preamble(&self, provider: &dyn Provider) -> &Preamble {
        self.preamble
            .get_or_init(|| Preamble::new(&self.system_prompt, &self.tools, self.policy, provider))
    }

    /// Offers `tools` under `policy` from now on; the preamble is built
    /// again when either changed.
    fn offer(&mut self, tools: &Arc<ToolRegistry>, policy: ApprovalPolicy) {
        if !Arc::ptr_eq(tools, &self.tools) || policy != self.policy {
            self.tools = Arc::clone(tools);
            self.policy = policy;
            self.preamble = OnceLock::new();
        }
    }
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
    fn new(
        system_prompt: &str,
        registry: &ToolRegistry,
        policy: ApprovalPolicy,
        provider: &dyn Provider,
    ) -> Self {
        // A read-only session refuses every other tool: the model is not
        // offered them (the policy can change mid-session, so this is
        // decided here rather than by removing them from the registry).
        let specs: Vec<ToolSpec> = registry.specs().filter(|s| policy.offers(s)).cloned().collect();
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

/// How one streamed model call ended.
enum Streamed {
    /// The model finished its turn.
    Done(AssembledTurn),
    /// The provider failed (it may be retried).
    Failed(LlmError),
    /// The user cancelled; the text received so far is kept.
    Cancelled(String),
}

impl ModelTurn {
    /// Offers the tools of `tools` under `policy` (the call runner's) to
    /// `provider`'s model, which starts with an empty history.
    pub(crate) fn new(
        provider: Arc<dyn Provider>,
        tools: &Arc<ToolRegistry>,
        config: &AgentConfig,
    ) -> Self {
        let history = History::new(&provider.info().model);
        ModelTurn {
            provider,
            history,
            prompt_index: 0,
            offered: Offered {
                system_prompt: config.system_prompt.clone(),
                tools: Arc::clone(tools),
                policy: config.approval,
                preamble: OnceLock::new(),
            },
            max_output_tokens: config.max_output_tokens,
            turn_retries: config.turn_retries,
            retry: config.retry.clone(),
            context_strategy: config.context_strategy,
            rule_count: config.rule_count,
            budget: config.budget.clone(),
            fallback: FallbackState::default(),
        }
    }

    /// Talks to another model from the next turn on.
    pub(crate) fn set_provider(&mut self, provider: Arc<dyn Provider>) {
        self.provider = provider;
        // Its tool protocol may differ: the preamble is built again.
        self.offered.preamble = OnceLock::new();
    }

    /// Offers `tools` under `policy` from the next request on.
    pub(crate) fn offer(&mut self, tools: &Arc<ToolRegistry>, policy: ApprovalPolicy) {
        self.offered.offer(tools, policy);
    }

    /// The system prompt and tool list every request carries.
    pub(crate) fn preamble(&self) -> &Preamble {
        self.offered.preamble(&*self.provider)
    }

    /// Estimated tokens the next request would send, corrected by what the
    /// provider has reported.
    pub(crate) fn context_tokens(&self) -> u64 {
        let fixed = self.preamble().tokens(&self.history.counter);
        self.history.counter.corrected(fixed + self.history.raw_tokens())
    }

    /// The next model call; `answer_only` when the tools are withheld.
    pub(crate) fn request(&self, answer_only: bool) -> ProviderRequest<'_> {
        let preamble = self.preamble();
        ProviderRequest {
            system: Cow::Borrowed(&preamble.system),
            messages: self.history.messages(),
            tools: Cow::Borrowed(&preamble.tools),
            text_tools: if answer_only {
                Cow::Borrowed(&[])
            } else {
                Cow::Borrowed(&preamble.text_tools)
            },
            max_output_tokens: self.max_output_tokens,
            temperature: None,
            answer_only,
        }
    }

    /// Gets the model's next turn, retrying broken streams and trimming
    /// once on a context-length error. The history is fitted to the window
    /// first (`lifecycle` is told before a summary).
    pub(crate) async fn next_turn(
        &mut self,
        answer_only: bool,
        lifecycle: Option<&dyn Lifecycle>,
        emit: EventSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<AssembledTurn, TurnEnd> {
        self.fit_window(lifecycle, emit, cancel).await;
        let mut trimmed = false;
        let mut attempts = 0;
        loop {
            if let Some(refusal) = self.budget.as_ref().and_then(crate::cost::Budget::refusal) {
                return Err(TurnEnd::Failed(refusal));
            }
            let request = self.request(answer_only);
            let estimate =
                self.preamble().tokens(&self.history.counter) + self.history.raw_tokens();
            let error = match self.stream_turn(&request, estimate, emit, cancel).await {
                Streamed::Done(turn) => return Ok(turn),
                Streamed::Cancelled(partial) => return Err(TurnEnd::Cancelled(partial)),
                Streamed::Failed(error) => error,
            };
            match error {
                LlmError::ContextLength { .. } if !trimmed => {
                    trimmed = true;
                    let (dropped, prompt_index) = self.history.trim_half(self.prompt_index);
                    self.prompt_index = prompt_index;
                    if dropped == 0 {
                        return Err(TurnEnd::Failed(error.to_string()));
                    }
                    emit(AgentEvent::Warning {
                        message: format!(
                            "the conversation no longer fits the model's context window; \
                             dropped the oldest {dropped} messages and trying again"
                        ),
                    });
                }
                e if e.is_transient() && attempts < self.turn_retries => {
                    attempts += 1;
                    let delay = self
                        .retry
                        .delay(RetryClass::Connection, attempts, None)
                        .unwrap_or(Duration::from_secs(1));
                    emit(AgentEvent::TurnRestarted {
                        reason: format!(
                            "{}; asking again in {:.1}s ({attempts}/{})",
                            clause(&e.to_string()),
                            delay.as_secs_f64(),
                            self.turn_retries
                        ),
                    });
                    tokio::select! {
                        () = cancel.cancelled() => return Err(TurnEnd::Cancelled(String::new())),
                        () = tokio::time::sleep(delay) => {}
                    }
                }
                e if self.fall_back(&e, emit).await => {
                    // A new provider: fresh attempts, and a history fitted
                    // to its window.
                    attempts = 0;
                    trimmed = false;
                    self.fit_window(lifecycle, emit, cancel).await;
                }
                e => return Err(TurnEnd::Failed(e.to_string())),
            }
        }
    }

    /// Streams one model call.
    async fn stream_turn(
        &self,
        request: &ProviderRequest<'_>,
        estimate: u64,
        emit: EventSink<'_>,
        cancel: &CancellationToken,
    ) -> Streamed {
        let mut stream = self.provider.stream(request);
        let mut turn = TurnAssembler::new();
        // With the text protocol, tool blocks are shown as calls once parsed,
        // not streamed as answer text.
        let mut visible = (self.provider.info().tool_protocol == ToolProtocol::Text)
            .then(text_protocol::VisibleText::new);
        loop {
            let item = tokio::select! {
                biased;
                () = cancel.cancelled() => return Streamed::Cancelled(turn.received_text()),
                item = stream.next() => item,
            };
            let event = match item {
                Some(Ok(event)) => event,
                Some(Err(e)) => return Streamed::Failed(e),
                None => {
                    return Streamed::Failed(LlmError::Stream {
                        provider: self.provider.info().name.clone(),
                        message: "the stream closed before the model finished".to_string(),
                    });
                }
            };
            match &event {
                ProviderEvent::TextDelta(text) => {
                    let shown = match &mut visible {
                        Some(visible) => visible.push(text),
                        None => text.clone(),
                    };
                    if !shown.is_empty() {
                        emit(AgentEvent::Token { text: shown });
                    }
                }
                ProviderEvent::Finish(_) => {
                    if let Some(rest) = visible.as_mut().map(text_protocol::VisibleText::finish)
                        && !rest.is_empty()
                    {
                        emit(AgentEvent::Token { text: rest });
                    }
                }
                ProviderEvent::ReasoningDelta(text) => {
                    emit(AgentEvent::Thought { text: text.clone() });
                }
                ProviderEvent::Usage(usage) => {
                    self.history.counter.observe(estimate, usage.input_tokens);
                    self.history.record_usage(usage);
                    emit(AgentEvent::Usage {
                        usage: *usage,
                        model: Some(self.provider.info().model.clone()),
                    });
                }
                ProviderEvent::Retrying { attempt, delay, reason } => emit(AgentEvent::Warning {
                    message: format!(
                        "{}; retrying in {:.1}s (retry {attempt})",
                        clause(reason),
                        delay.as_secs_f64()
                    ),
                }),
                _ => {}
            }
            let finished = matches!(event, ProviderEvent::Finish(_));
            turn.push(&event);
            if finished {
                return Streamed::Done(turn.finish());
            }
        }
    }

    /// The assistant message to keep, the answer text, and the calls to
    /// run, for either tool protocol. With the tools withheld, blocks the
    /// text protocol's model writes anyway are not run.
    pub(crate) fn interpret(
        &self,
        turn: AssembledTurn,
        answer_only: bool,
    ) -> (Message, String, Vec<PlannedCall>) {
        match self.provider.info().tool_protocol {
            ToolProtocol::Native => {
                let text = turn.message.text();
                let calls = turn
                    .message
                    .tool_calls
                    .iter()
                    .map(|call| PlannedCall {
                        call: call.clone(),
                        problem: turn.malformed.iter().find(|(id, _)| *id == call.id).map(
                            |(_, error)| {
                                format!(
                                    "Invalid parameters for {}: {error}. Send the arguments as \
                                     one JSON object.",
                                    call.name
                                )
                            },
                        ),
                    })
                    .collect();
                (turn.message, text, calls)
            }
            ToolProtocol::Text => {
                let raw = turn.message.text();
                let parsed = text_protocol::parse(&raw);
                if answer_only {
                    let mut message = turn.message;
                    message.tool_calls.clear();
                    let text = if parsed.text.trim().is_empty() { raw } else { parsed.text };
                    return (message, text, Vec::new());
                }
                let calls = parsed
                    .calls
                    .into_iter()
                    .enumerate()
                    .map(|(n, block)| {
                        let id = format!("block_{}", n + 1);
                        match block {
                            Ok(found) => PlannedCall {
                                call: ToolCall { id, name: found.tool, arguments: found.params },
                                problem: None,
                            },
                            Err(error) => PlannedCall {
                                call: ToolCall { id, name: String::new(), arguments: Value::Null },
                                problem: Some(error),
                            },
                        }
                    })
                    .collect();
                // The reply is kept as written: the model sees its own blocks.
                let mut message = turn.message;
                message.tool_calls.clear();
                (message, parsed.text, calls)
            }
        }
    }

    /// Takes a turn's results back into the history, one per call in call
    /// order (`refused`: the ids of calls refused before they ran), the
    /// last ending with the rules' reminder.
    pub(crate) fn push_results(
        &mut self,
        calls: &[PlannedCall],
        mut outputs: Vec<ToolOutput>,
        refused: &HashSet<String>,
    ) {
        let reminder = crate::rules::reminder(self.rule_count);
        if let Some(last) = outputs.last_mut()
            && !reminder.is_empty()
        {
            last.content.push(ContentPart::text(format!("\n{reminder}")));
        }
        match self.provider.info().tool_protocol {
            ToolProtocol::Native => {
                for (planned, output) in calls.iter().zip(outputs) {
                    let mut message = Message::tool_result(planned.call.id.clone(), output);
                    message.refused = refused.contains(&planned.call.id);
                    self.history.push(message);
                }
            }
            ToolProtocol::Text => {
                let mut text = format!("{TEXT_RESULTS_HEADER}\n");
                // The results are a user message here, which takes images
                // when the model does; otherwise the model is told.
                let sees_images = axon_llm::takes_images(&self.provider.info().model);
                let mut images = Vec::new();
                for (n, (planned, output)) in calls.iter().zip(outputs).enumerate() {
                    let name = if planned.call.name.is_empty() {
                        "(unreadable block)"
                    } else {
                        &planned.call.name
                    };
                    let status = if output.is_error { "error" } else { "ok" };
                    text.push_str(&format!(
                        "\n[{}] {name}: {status}\n{}\n",
                        n + 1,
                        output.text_content()
                    ));
                    let before = images.len();
                    images.extend(
                        output
                            .content
                            .into_iter()
                            .filter(|p| matches!(p, ContentPart::Image { .. })),
                    );
                    if !sees_images && images.len() > before {
                        images.truncate(before);
                        text.push_str("[image not shown: the current model cannot see images]\n");
                    }
                }
                let mut message = Message::user(text);
                message.content.extend(images);
                self.history.push(message);
            }
        }
    }
}

/// A message as the first part of a longer sentence: without the full stop
/// it may end with ("…`base_url`." then "; retrying" reads ".;").
fn clause(message: &str) -> &str {
    message.trim_end().trim_end_matches('.')
}
