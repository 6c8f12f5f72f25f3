//! The Anthropic Messages wire format, streamed.
//!
//! Content blocks are indexed; text, `tool_use` (with `input_json_delta`
//! pieces) and thinking (with its signature) map onto provider events by
//! block index. Tool results go back as `tool_result` blocks in one user
//! message per turn, as the API requires; thinking blocks are sent back with
//! their signatures so extended thinking survives tool use.

use std::collections::HashMap;
use std::sync::Arc;

use axon_protocol::{ContentPart, Message, Role, Usage};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::http::{self, Auth, Connection, Emitter, Settings};
use crate::{
    EventStream, FinishReason, LlmError, Provider, ProviderEvent, ProviderInfo, ProviderRequest,
};

/// The API version this code speaks.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";
/// `max_tokens` is required by the API; this is used when neither the
/// request nor the provider sets one.
const DEFAULT_MAX_TOKENS: u32 = crate::presets::MAX_TOKENS_CAP;

/// A provider speaking Anthropic Messages at `base_url` + `/v1/messages`
/// (a `base_url` ending in `/v1` is accepted too).
pub struct AnthropicProvider {
    connection: Arc<Connection>,
}

impl AnthropicProvider {
    pub fn new(mut settings: Settings) -> Result<Self, LlmError> {
        settings.headers.push(("anthropic-version".into(), ANTHROPIC_VERSION.into()));
        let connection = Connection::new(settings, "/v1/messages", Auth::ApiKeyHeader)?;
        Ok(AnthropicProvider { connection: Arc::new(connection) })
    }
}

impl Provider for AnthropicProvider {
    fn info(&self) -> &ProviderInfo {
        &self.connection.info
    }

    fn stream(&self, request: &ProviderRequest<'_>) -> EventStream {
        let connection = Arc::clone(&self.connection);
        let max_tokens = request.max_output_tokens.or(connection.max_output_tokens);
        let request = ProviderRequest { max_output_tokens: max_tokens, ..request.clone() };
        let body = request_body(&connection.info.model, &request, connection.thinking_budget);
        let body = http::encode(&body);
        http::spawn_call(move |emit| async move {
            let result = match body {
                Ok(body) => read_answer(&connection, &emit, &body).await,
                Err(e) => Err(e),
            };
            if let Err(e) = result {
                emit.send(Err(e)).await;
            }
        })
    }
}

async fn read_answer(connection: &Connection, emit: &Emitter, body: &[u8]) -> Result<(), LlmError> {
    let mut sse = connection.post(emit, body).await?;
    let mut blocks = BlockTracker::default();
    loop {
        let Some(event) = sse.next().await? else {
            return Err(sse.stream_error("the stream ended before `message_stop`"));
        };
        if event.data.trim().is_empty() {
            continue;
        }
        let parsed: StreamEvent = serde_json::from_str(&event.data)
            .map_err(|e| sse.stream_error(format!("the provider sent a malformed event ({e})")))?;
        if let StreamEvent::Error { error } = &parsed {
            return Err(http::in_stream_error(&connection.endpoint, error));
        }
        let (events, done) = blocks.events(parsed).map_err(|message| sse.stream_error(message))?;
        for event in events {
            if !emit.send(Ok(event)).await {
                return Ok(());
            }
        }
        if done {
            return Ok(());
        }
    }
}

#[derive(Default)]
struct BlockTracker {
    /// Tool-use blocks by content-block index; other blocks need no state.
    tools: HashMap<usize, usize>,
    usage: Usage,
    finish: Option<FinishReason>,
}

impl BlockTracker {
    /// The provider events one stream event stands for, and whether the
    /// message is complete.
    fn events(&mut self, event: StreamEvent) -> Result<(Vec<ProviderEvent>, bool), String> {
        let mut out = Vec::new();
        match event {
            StreamEvent::MessageStart { message } => {
                if let Some(usage) = message.usage {
                    self.usage.input_tokens = usage.input_tokens
                        + usage.cache_read_input_tokens
                        + usage.cache_creation_input_tokens;
                    self.usage.cached_input_tokens = usage.cache_read_input_tokens;
                    self.usage.output_tokens = usage.output_tokens;
                }
            }
            StreamEvent::ContentBlockStart { index, content_block } => match content_block {
                Block::ToolUse { id, name } => {
                    let call_index = self.tools.len();
                    self.tools.insert(index, call_index);
                    out.push(ProviderEvent::ToolCallStart { index: call_index, id, name });
                }
                Block::Text { text } if !text.is_empty() => {
                    out.push(ProviderEvent::TextDelta(text))
                }
                Block::Thinking { thinking } if !thinking.is_empty() => {
                    out.push(ProviderEvent::ReasoningDelta(thinking));
                }
                _ => {}
            },
            StreamEvent::ContentBlockDelta { index, delta } => match delta {
                Delta::Text { text } => out.push(ProviderEvent::TextDelta(text)),
                Delta::Thinking { thinking } => out.push(ProviderEvent::ReasoningDelta(thinking)),
                Delta::Signature { signature } => {
                    out.push(ProviderEvent::ReasoningSignature(signature));
                }
                Delta::InputJson { partial_json } => {
                    let Some(&call_index) = self.tools.get(&index) else {
                        return Err(format!(
                            "tool input for block {index}, which is not a tool call"
                        ));
                    };
                    if !partial_json.is_empty() {
                        out.push(ProviderEvent::ToolCallDelta {
                            index: call_index,
                            arguments: partial_json,
                        });
                    }
                }
                Delta::Other => {}
            },
            StreamEvent::MessageDelta { delta, usage } => {
                if let Some(reason) = delta.stop_reason {
                    self.finish = Some(stop_reason(&reason));
                }
                if let Some(usage) = usage {
                    self.usage.output_tokens = usage.output_tokens;
                }
            }
            StreamEvent::MessageStop => {
                out.push(ProviderEvent::Usage(self.usage));
                out.push(ProviderEvent::Finish(self.finish.take().unwrap_or(FinishReason::Stop)));
                return Ok((out, true));
            }
            StreamEvent::ContentBlockStop { index } => {
                if let Some(&call_index) = self.tools.get(&index) {
                    out.push(ProviderEvent::ToolCallEnd { index: call_index });
                }
            }
            // Errors are mapped by the caller, which knows the endpoint.
            StreamEvent::Error { .. } | StreamEvent::Ping | StreamEvent::Other => {}
        }
        Ok((out, false))
    }
}

fn stop_reason(reason: &str) -> FinishReason {
    match reason {
        "end_turn" | "stop_sequence" => FinishReason::Stop,
        "tool_use" => FinishReason::ToolCalls,
        "max_tokens" => FinishReason::Length,
        "refusal" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_string()),
    }
}

/// The JSON body of a streaming Messages request; `thinking_budget` turns
/// extended thinking on.
pub fn request_body(
    model: &str,
    request: &ProviderRequest<'_>,
    thinking_budget: Option<u32>,
) -> Value {
    let mut max_tokens = request.max_output_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
    let mut body = json!({
        "model": model,
        "messages": wire_messages(request.messages, crate::takes_images(model)),
        "stream": true,
    });
    if !request.system.is_empty() {
        body["system"] = json!(request.system);
    }
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
            .collect();
        if request.answer_only {
            body["tool_choice"] = json!({"type": "none"});
        }
    }
    if let Some(budget) = thinking_budget {
        // The API requires the answer's budget to exceed the thinking one,
        // and allows no temperature with thinking.
        max_tokens = max_tokens.max(budget.saturating_add(1024));
        body["thinking"] = json!({"type": "enabled", "budget_tokens": budget});
    } else if let Some(temperature) = request.temperature {
        body["temperature"] = json!(temperature);
    }
    body["max_tokens"] = json!(max_tokens);
    body
}

/// Messages in Anthropic's shape: system messages are folded into the
/// `system` parameter by the caller, and consecutive tool results become
/// one user message, as the API requires. A tool result's images go in its
/// `content` as image blocks (which `tool_result` takes), or, to a model
/// without images (`images` false), as a line saying so.
fn wire_messages(messages: &[Message], images: bool) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for message in messages {
        let (role, blocks) = match message.role {
            Role::System => continue,
            Role::User if images => ("user", content_blocks(&message.content)),
            Role::User => {
                let text = crate::openai_wire::text_without_images(&message.content);
                ("user", content_blocks(&[ContentPart::text(text)]))
            }
            Role::Tool => {
                let has_images =
                    message.content.iter().any(|p| matches!(p, ContentPart::Image { .. }));
                let content = if has_images && images {
                    json!(content_blocks(&message.content))
                } else if has_images {
                    json!(message.text() + crate::openai_wire::NO_IMAGES)
                } else {
                    json!(message.text())
                };
                let block = json!({
                    "type": "tool_result",
                    "tool_use_id": message.tool_call_id.clone().unwrap_or_default(),
                    "content": content,
                    "is_error": message.is_error,
                });
                ("user", vec![block])
            }
            Role::Assistant => {
                let mut blocks = content_blocks(&message.content);
                blocks.extend(message.tool_calls.iter().map(|call| {
                    let input = match &call.arguments {
                        Value::Object(_) => call.arguments.clone(),
                        // Malformed arguments cannot be sent as input; the
                        // tool result already told the model what went wrong.
                        _ => json!({}),
                    };
                    json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input})
                }));
                ("assistant", blocks)
            }
        };
        if blocks.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some(last) if last["role"] == role && role == "user" => {
                if let Some(existing) = last["content"].as_array_mut() {
                    existing.extend(blocks);
                }
            }
            _ => out.push(json!({"role": role, "content": blocks})),
        }
    }
    out
}

fn content_blocks(parts: &[ContentPart]) -> Vec<Value> {
    parts
        .iter()
        .filter_map(|part| match part {
            ContentPart::Text { text } if !text.is_empty() => {
                Some(json!({"type": "text", "text": text}))
            }
            ContentPart::Text { .. } => None,
            ContentPart::Image { media_type, data } => Some(json!({
                "type": "image",
                "source": {"type": "base64", "media_type": media_type, "data": data},
            })),
            // Thinking without a signature cannot be verified by the API.
            ContentPart::Thinking { text, signature: Some(signature) } => {
                Some(json!({"type": "thinking", "thinking": text, "signature": signature}))
            }
            ContentPart::Thinking { .. } | ContentPart::Audio { .. } => None,
        })
        .collect()
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum StreamEvent {
    MessageStart {
        message: StartMessage,
    },
    ContentBlockStart {
        index: usize,
        content_block: Block,
    },
    ContentBlockDelta {
        index: usize,
        delta: Delta,
    },
    ContentBlockStop {
        index: usize,
    },
    MessageDelta {
        delta: MessageDeltaBody,
        #[serde(default)]
        usage: Option<WireUsage>,
    },
    MessageStop,
    Ping,
    Error {
        error: Value,
    },
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize)]
struct StartMessage {
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Debug, Default, Deserialize)]
struct WireUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    cache_read_input_tokens: u64,
    #[serde(default)]
    cache_creation_input_tokens: u64,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block {
    Text {
        #[serde(default)]
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
    },
    Thinking {
        #[serde(default)]
        thinking: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type")]
enum Delta {
    #[serde(rename = "text_delta")]
    Text { text: String },
    #[serde(rename = "thinking_delta")]
    Thinking { thinking: String },
    #[serde(rename = "signature_delta")]
    Signature { signature: String },
    #[serde(rename = "input_json_delta")]
    InputJson { partial_json: String },
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize)]
struct MessageDeltaBody {
    #[serde(default)]
    stop_reason: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use axon_protocol::{ToolCall, ToolOutput};

    #[test]
    fn parallel_tool_results_share_one_user_message() {
        let mut assistant = Message::assistant("checking");
        assistant.content.insert(
            0,
            ContentPart::Thinking { text: "plan".into(), signature: Some("sig".into()) },
        );
        assistant.tool_calls = vec![
            ToolCall { id: "a".into(), name: "read_file".into(), arguments: json!({"path": "x"}) },
            ToolCall { id: "b".into(), name: "glob".into(), arguments: json!({"pattern": "*"}) },
        ];
        let messages = vec![
            Message::user("hi"),
            assistant,
            Message::tool_result("a", ToolOutput::text("1 | x")),
            Message::tool_result("b", ToolOutput::error("no")),
        ];
        let wire = wire_messages(&messages, true);
        assert_eq!(wire.len(), 3);
        assert_eq!(
            wire[1]["content"][0],
            json!({"type": "thinking", "thinking": "plan", "signature": "sig"})
        );
        assert_eq!(wire[1]["content"][2]["type"], "tool_use");
        assert_eq!(wire[2]["content"].as_array().unwrap().len(), 2);
        assert_eq!(wire[2]["content"][1]["is_error"], true);
    }

    #[test]
    fn a_user_image_to_a_model_without_images_is_a_line_saying_so() {
        let mut user = Message::user("what is this?");
        user.content
            .push(ContentPart::Image { media_type: "image/png".into(), data: "QQ==".into() });
        let seen = wire_messages(std::slice::from_ref(&user), true);
        assert_eq!(seen[0]["content"][1]["type"], "image");
        let unseen = wire_messages(&[user], false);
        assert_eq!(
            unseen[0]["content"],
            json!([{"type": "text", "text": format!("what is this?{}", crate::openai_wire::NO_IMAGES)}])
        );
    }

    #[test]
    fn an_answer_only_call_sends_tool_choice_none() {
        let tools = [axon_protocol::ToolSpec {
            name: "read_file".into(),
            description: "read".into(),
            input_schema: json!({"type": "object"}),
            annotations: Default::default(),
        }];
        let request = ProviderRequest { tools: tools[..].into(), ..Default::default() };
        assert!(request_body("claude", &request, None).get("tool_choice").is_none());
        let only = ProviderRequest { answer_only: true, ..request };
        let body = request_body("claude", &only, None);
        assert_eq!(body["tool_choice"], json!({"type": "none"}));
        assert_eq!(body["tools"][0]["name"], "read_file");
    }

    #[test]
    fn thinking_budget_enables_thinking_within_max_tokens() {
        let request = ProviderRequest {
            max_output_tokens: Some(1000),
            temperature: Some(0.2),
            ..Default::default()
        };
        let body = request_body("claude", &request, Some(4096));
        assert_eq!(body["thinking"], json!({"type": "enabled", "budget_tokens": 4096}));
        assert!(body["max_tokens"].as_u64().unwrap() > 4096);
        assert!(body.get("temperature").is_none());
        let plain = request_body("claude", &request, None);
        assert!(plain.get("thinking").is_none());
        assert_eq!(plain["max_tokens"], 1000);
    }

    #[test]
    fn events_map_by_block_index() {
        let mut tracker = BlockTracker::default();
        let lines = [
            r#"{"type":"message_start","message":{"usage":{"input_tokens":7,"output_tokens":1}}}"#,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hm"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"s1"}}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t1","name":"glob","input":{}}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"pattern\":"}}"#,
            r#"{"type":"ping"}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"*\"}"}}"#,
            r#"{"type":"content_block_stop","index":1}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":12}}"#,
            r#"{"type":"message_stop"}"#,
        ];
        let mut all = Vec::new();
        for line in lines {
            let (events, _) = tracker.events(serde_json::from_str(line).unwrap()).unwrap();
            all.extend(events);
        }
        assert_eq!(
            all,
            [
                ProviderEvent::ReasoningDelta("hm".into()),
                ProviderEvent::ReasoningSignature("s1".into()),
                ProviderEvent::ToolCallStart { index: 0, id: "t1".into(), name: "glob".into() },
                ProviderEvent::ToolCallDelta { index: 0, arguments: "{\"pattern\":".into() },
                ProviderEvent::ToolCallDelta { index: 0, arguments: "\"*\"}".into() },
                ProviderEvent::ToolCallEnd { index: 0 },
                ProviderEvent::Usage(Usage {
                    input_tokens: 7,
                    output_tokens: 12,
                    ..Usage::default()
                }),
                ProviderEvent::Finish(FinishReason::ToolCalls),
            ]
        );
    }
}
