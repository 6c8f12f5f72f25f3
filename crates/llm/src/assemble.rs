//! Folding a turn's events into the assistant message they spell out.

use std::collections::BTreeMap;

use axon_protocol::{ContentPart, Message, Role, ToolCall, Usage};
use serde_json::Value;

use crate::{FinishReason, ProviderEvent};

/// Collects one turn's events. Tool calls are assembled by index, whatever
/// order their argument pieces arrive in.
#[derive(Debug, Default)]
pub struct TurnAssembler {
    text: String,
    /// Received text the stream holds back (`TextHeld`), not yet settled.
    held: String,
    /// Thinking blocks in order, each with its own signature: Anthropic
    /// checks every block's signature when they are sent back.
    thinking: Vec<(String, Option<String>)>,
    calls: BTreeMap<usize, PartialCall>,
    usage: Option<Usage>,
    finish: Option<FinishReason>,
}

#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// A finished turn.
#[derive(Debug, Clone, PartialEq)]
pub struct AssembledTurn {
    /// The assistant message: reasoning, text and tool calls.
    pub message: Message,
    /// Calls whose arguments were not a JSON object, with the parse error.
    /// Their `arguments` hold the raw text as a JSON string.
    pub malformed: Vec<(String, String)>,
    pub usage: Option<Usage>,
    pub finish: Option<FinishReason>,
}

impl TurnAssembler {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, event: &ProviderEvent) {
        match event {
            ProviderEvent::TextDelta(text) => self.text.push_str(text),
            ProviderEvent::TextHeld(text) => self.held.push_str(text),
            ProviderEvent::HeldTextSettled => self.held.clear(),
            ProviderEvent::ReasoningDelta(text) => match self.thinking.last_mut() {
                // A signature closes a block; reasoning after it is a new one.
                Some((block, None)) => block.push_str(text),
                _ => self.thinking.push((text.clone(), None)),
            },
            ProviderEvent::ReasoningSignature(sig) => match self.thinking.last_mut() {
                Some((_, signature)) => signature.get_or_insert_with(String::new).push_str(sig),
                None => self.thinking.push((String::new(), Some(sig.clone()))),
            },
            ProviderEvent::ToolCallStart { index, id, name } => {
                let call = self.calls.entry(*index).or_default();
                call.id.clone_from(id);
                call.name.clone_from(name);
            }
            ProviderEvent::ToolCallDelta { index, arguments } => {
                self.calls.entry(*index).or_default().arguments.push_str(arguments);
            }
            ProviderEvent::Usage(usage) => self.usage = Some(*usage),
            ProviderEvent::Finish(reason) => self.finish = Some(reason.clone()),
            ProviderEvent::Retrying { .. } | ProviderEvent::ToolCallEnd { .. } => {}
        }
    }

    /// The text received so far (kept when a turn is cancelled).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// All the text received so far: what was given out, then what the
    /// stream still holds back. What a cancelled turn keeps.
    pub fn received_text(&self) -> String {
        format!("{}{}", self.text, self.held)
    }

    pub fn finish(self) -> AssembledTurn {
        let mut content = Vec::new();
        for (text, signature) in self.thinking {
            content.push(ContentPart::Thinking { text, signature });
        }
        if !self.text.is_empty() {
            content.push(ContentPart::Text { text: self.text });
        }
        let mut malformed = Vec::new();
        let tool_calls = self
            .calls
            .into_values()
            .map(|call| {
                let arguments = match parse_arguments(&call.arguments) {
                    Ok(value) => value,
                    Err(error) => {
                        malformed.push((call.id.clone(), error));
                        Value::String(call.arguments)
                    }
                };
                ToolCall { id: call.id, name: call.name, arguments }
            })
            .collect();
        AssembledTurn {
            message: Message {
                role: Role::Assistant,
                content,
                tool_calls,
                tool_call_id: None,
                is_error: false,
                refused: false,
                timestamp_ms: None,
            },
            malformed,
            usage: self.usage,
            finish: self.finish,
        }
    }
}

/// Tool arguments must be a JSON object; no arguments at all mean `{}`.
fn parse_arguments(raw: &str) -> Result<Value, String> {
    if raw.trim().is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(other) => Err(format!("the arguments must be a JSON object, not {other}")),
        Err(e) => Err(format!("the arguments are not valid JSON ({e})")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_thinking_block_keeps_its_own_signature() {
        let mut turn = TurnAssembler::new();
        for event in [
            ProviderEvent::ReasoningDelta("first ".into()),
            ProviderEvent::ReasoningDelta("block".into()),
            ProviderEvent::ReasoningSignature("s1".into()),
            ProviderEvent::ReasoningDelta("second".into()),
            ProviderEvent::ReasoningSignature("s2".into()),
        ] {
            turn.push(&event);
        }
        let content = turn.finish().message.content;
        assert_eq!(
            content,
            [
                ContentPart::Thinking { text: "first block".into(), signature: Some("s1".into()) },
                ContentPart::Thinking { text: "second".into(), signature: Some("s2".into()) },
            ]
        );
    }

    #[test]
    fn calls_assemble_by_index_and_bad_arguments_are_reported() {
        let mut turn = TurnAssembler::new();
        for event in [
            ProviderEvent::ToolCallStart { index: 1, id: "b".into(), name: "glob".into() },
            ProviderEvent::ToolCallStart { index: 0, id: "a".into(), name: "read_file".into() },
            ProviderEvent::ToolCallDelta { index: 0, arguments: "{\"pa".into() },
            ProviderEvent::ToolCallDelta { index: 1, arguments: "{oops".into() },
            ProviderEvent::ToolCallDelta { index: 0, arguments: "th\":\"x\"}".into() },
            ProviderEvent::TextDelta("hi".into()),
        ] {
            turn.push(&event);
        }
        let done = turn.finish();
        let calls = &done.message.tool_calls;
        assert_eq!(calls[0].arguments, serde_json::json!({"path": "x"}));
        assert_eq!(calls[1].arguments, Value::String("{oops".into()));
        assert_eq!(done.malformed.len(), 1);
        assert_eq!(done.message.text(), "hi");
    }
}
