//! Fitting the history to the window before each model call, and
//! summarising compaction: the model writes a handoff summary of the oldest
//! turns, which then stands in for them in what is sent. The journal (the
//! session file) records the compaction and keeps every original message.
//! Rules and skills live in the system prompt, so compaction never loses
//! them.

use axon_llm::{ProviderEvent, ProviderRequest};
use axon_protocol::{AgentEvent, Message, Role};
use futures_util::StreamExt;
use tokio_util::sync::CancellationToken;

use crate::agent::{Agent, ContextStrategy, EventSink};
use crate::context;

/// Characters of one tool result shown to the summariser.
const RESULT_EXCERPT: usize = 2000;

const SUMMARY_SYSTEM: &str = "You write handoff summaries of an AI coding agent's work, for the \
    agent itself to continue from. Keep every fact it still needs: the user's requests and \
    constraints, decisions made and why, files read or changed (with paths), commands run and \
    their outcomes, errors met, and what remains to do. Omit pleasantries. Write plain text, \
    at most about 400 words.";

impl Agent {
    /// Makes the next request fit 80 % of the model's window.
    pub(crate) async fn fit_window(&mut self, emit: EventSink<'_>, cancel: &CancellationToken) {
        let window = self.provider.info().context_window;
        if window == 0 {
            return;
        }
        let budget = context::budget(window);
        if self.context_tokens() <= budget {
            return;
        }
        if self.config.context_strategy == ContextStrategy::Summarize {
            let replaced = self.oldest_half();
            if replaced > 0 {
                match self.compact(replaced, cancel).await {
                    Ok(()) => {
                        emit(AgentEvent::Warning {
                            message: format!(
                                "the conversation outgrew 80 % of the model's window; its oldest \
                                 {replaced} messages were summarised (the session keeps them)"
                            ),
                        });
                        if self.context_tokens() <= budget {
                            return;
                        }
                    }
                    Err(e) => emit(AgentEvent::Warning {
                        message: format!("could not summarise the conversation ({e}); trimming it"),
                    }),
                }
            }
        }
        let (system, tools) = self.preamble();
        let fixed = self.history.counter.preamble(&system, &tools);
        let (dropped, keep) = self.history.fit(fixed, budget, self.prompt_index);
        self.prompt_index = keep;
        if dropped > 0 {
            emit(AgentEvent::Warning {
                message: format!(
                    "the conversation outgrew 80 % of the model's window; its oldest {dropped} \
                     messages are no longer sent (the session keeps them)"
                ),
            });
        }
    }

    /// Summarises everything before the last user request (`axon run
    /// --compact`). Returns how many messages the summary replaced.
    pub async fn compact_all(&mut self, cancel: &CancellationToken) -> Result<usize, String> {
        let last_user =
            self.history.messages().iter().rposition(|m| m.role == Role::User).unwrap_or(0);
        if last_user == 0 {
            return Ok(0);
        }
        self.compact(last_user, cancel).await?;
        Ok(last_user)
    }

    /// Where the oldest half of the finished turns ends: a user message
    /// before the current request, so what is kept starts with one.
    fn oldest_half(&self) -> usize {
        let messages = self.history.messages();
        let half = self.prompt_index / 2;
        messages[..self.prompt_index.min(messages.len())]
            .iter()
            .enumerate()
            .filter(|(i, m)| *i > 0 && m.role == Role::User)
            .map(|(i, _)| i)
            .min_by_key(|i| i.abs_diff(half))
            .unwrap_or(0)
    }

    async fn compact(&mut self, replaced: usize, cancel: &CancellationToken) -> Result<(), String> {
        let transcript = transcript(&self.history.messages()[..replaced]);
        let summary = self.summarise(transcript, cancel).await?;
        self.history.compact(&summary, replaced);
        self.prompt_index = self.prompt_index.saturating_sub(replaced);
        Ok(())
    }

    async fn summarise(
        &self,
        transcript: String,
        cancel: &CancellationToken,
    ) -> Result<String, String> {
        let messages = [Message::user(format!(
            "Here is the earlier part of the conversation:\n\n{transcript}\n\nWrite the handoff summary."
        ))];
        let request = ProviderRequest {
            system: SUMMARY_SYSTEM.to_string(),
            messages: &messages,
            tools: Vec::new(),
            max_output_tokens: Some(2048),
            temperature: None,
        };
        let mut stream = self.provider.stream(&request);
        let mut text = String::new();
        loop {
            let item = tokio::select! {
                () = cancel.cancelled() => return Err("cancelled".to_string()),
                item = stream.next() => item,
            };
            match item {
                Some(Ok(ProviderEvent::TextDelta(delta))) => text.push_str(&delta),
                Some(Ok(ProviderEvent::Usage(usage))) => self.history.record_usage(&usage),
                Some(Ok(ProviderEvent::Finish(_))) | None => break,
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e.to_string()),
            }
        }
        let text = text.trim().to_string();
        if text.is_empty() { Err("the model wrote an empty summary".to_string()) } else { Ok(text) }
    }
}

/// The messages as a plain transcript for the summariser.
fn transcript(messages: &[Message]) -> String {
    let mut out = String::new();
    for message in messages {
        let text = message.text();
        match message.role {
            Role::System => {}
            Role::User => out.push_str(&format!("User: {text}\n\n")),
            Role::Assistant => {
                if !text.trim().is_empty() {
                    out.push_str(&format!("Assistant: {text}\n\n"));
                }
                for call in &message.tool_calls {
                    out.push_str(&format!(
                        "Assistant called {} with {}\n\n",
                        call.name, call.arguments
                    ));
                }
            }
            Role::Tool => {
                let status = if message.is_error { "error" } else { "result" };
                let excerpt: String = text.chars().take(RESULT_EXCERPT).collect();
                let more = if text.chars().count() > RESULT_EXCERPT { " […]" } else { "" };
                out.push_str(&format!("Tool {status}: {excerpt}{more}\n\n"));
            }
        }
    }
    out
}
