//! One model call of the loop: the request (the preamble, the history,
//! tools offered or withheld), streaming it with retries of broken streams
//! and one trim on a context-length error, and reading the reply's calls in
//! either tool protocol.
//!
//! Guarantees: a stream that ends before the model finished is an error,
//! never a turn; a cancellation returns the text received so far; with the
//! tools withheld no call is read from the reply.

use std::borrow::Cow;
use std::time::Duration;

use axon_llm::retry::RetryClass;
use axon_llm::{
    AssembledTurn, LlmError, ProviderEvent, ProviderRequest, ToolProtocol, TurnAssembler,
    text_protocol,
};
use axon_protocol::{AgentEvent, Message, ToolCall};
use futures_util::StreamExt;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::agent::{Agent, EventSink, PlannedCall, TurnEnd};

/// How one streamed model call ended.
enum Streamed {
    /// The model finished its turn.
    Done(AssembledTurn),
    /// The provider failed (it may be retried).
    Failed(LlmError),
    /// The user cancelled; the text received so far is kept.
    Cancelled(String),
}

impl Agent {
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
            max_output_tokens: self.config.max_output_tokens,
            temperature: None,
            answer_only,
        }
    }

    /// Gets the model's next turn, retrying broken streams and trimming
    /// once on a context-length error.
    pub(crate) async fn next_turn(
        &mut self,
        answer_only: bool,
        emit: EventSink<'_>,
        cancel: &CancellationToken,
    ) -> Result<AssembledTurn, TurnEnd> {
        self.sync_approval();
        self.sync_tools();
        self.fit_window(emit, cancel).await;
        let mut trimmed = false;
        let mut attempts = 0;
        loop {
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
                e if e.is_transient() && attempts < self.config.turn_retries => {
                    attempts += 1;
                    let delay = self
                        .config
                        .retry
                        .delay(RetryClass::Connection, attempts, None)
                        .unwrap_or(Duration::from_secs(1));
                    emit(AgentEvent::TurnRestarted {
                        reason: format!(
                            "{}; asking again in {:.1}s ({attempts}/{})",
                            clause(&e.to_string()),
                            delay.as_secs_f64(),
                            self.config.turn_retries
                        ),
                    });
                    tokio::select! {
                        () = cancel.cancelled() => return Err(TurnEnd::Cancelled(String::new())),
                        () = tokio::time::sleep(delay) => {}
                    }
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
                    emit(AgentEvent::Usage { usage: *usage });
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
}

/// A message as the first part of a longer sentence: without the full stop
/// it may end with ("…`base_url`." then "; retrying" reads ".;").
fn clause(message: &str) -> &str {
    message.trim_end().trim_end_matches('.')
}
