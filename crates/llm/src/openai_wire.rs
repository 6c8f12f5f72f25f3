//! The chat-completions request body, serialised straight from the
//! history it borrows: no intermediate `serde_json::Value` tree, whose
//! maps and strings cost an allocation each on every turn of a long
//! conversation. `request_body` in `openai.rs` gives the same JSON as a
//! `Value` for tests and callers that want one.

use std::borrow::Cow;

use axon_protocol::{ContentPart, Message, Role, ToolCall, ToolSpec};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::{Value, json};

use crate::ProviderRequest;

/// A streaming chat-completions request.
#[derive(Serialize)]
pub(crate) struct Body<'a> {
    model: &'a str,
    messages: Messages<'a>,
    stream: bool,
    stream_options: StreamOptions,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
}

impl<'a> Body<'a> {
    /// `request` for `model`; `default_max_tokens` when the request sets none.
    pub(crate) fn new(
        model: &'a str,
        request: &'a ProviderRequest<'a>,
        default_max_tokens: Option<u32>,
    ) -> Self {
        Body {
            model,
            messages: Messages { system: &request.system, history: request.messages },
            stream: true,
            stream_options: StreamOptions { include_usage: true },
            tools: request.tools.iter().map(WireTool::new).collect(),
            tool_choice: (request.answer_only && !request.tools.is_empty()).then_some("none"),
            max_tokens: request.max_output_tokens.or(default_max_tokens),
            temperature: request.temperature,
        }
    }
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

/// The system prompt (when there is one), then the history.
struct Messages<'a> {
    system: &'a str,
    history: &'a [Message],
}

impl Serialize for Messages<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let system = usize::from(!self.system.is_empty());
        let mut seq = serializer.serialize_seq(Some(system + self.history.len()))?;
        if system == 1 {
            seq.serialize_element(&Plain { role: "system", content: self.system })?;
        }
        for message in self.history {
            seq.serialize_element(&WireMessage(message))?;
        }
        seq.end()
    }
}

#[derive(Serialize)]
struct Plain<'a> {
    role: &'a str,
    content: &'a str,
}

/// One message of the history in the wire format.
struct WireMessage<'a>(&'a Message);

impl Serialize for WireMessage<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let message = self.0;
        let mut map = serializer.serialize_map(None)?;
        match message.role {
            Role::System => {
                map.serialize_entry("role", "system")?;
                map.serialize_entry("content", &message.text())?;
            }
            Role::User => {
                map.serialize_entry("role", "user")?;
                map.serialize_entry("content", &UserContent(&message.content))?;
            }
            Role::Tool => {
                map.serialize_entry("role", "tool")?;
                map.serialize_entry("tool_call_id", message.tool_call_id.as_deref().unwrap_or(""))?;
                map.serialize_entry("content", &message.text())?;
            }
            Role::Assistant => {
                map.serialize_entry("role", "assistant")?;
                // Reasoning is never sent back: DeepSeek rejects it in input.
                let text = message.text();
                // `null` content is allowed only beside tool calls; an empty
                // answer must still be a string or later requests are refused.
                if text.is_empty() && !message.tool_calls.is_empty() {
                    map.serialize_entry("content", &())?;
                } else {
                    map.serialize_entry("content", &text)?;
                }
                if !message.tool_calls.is_empty() {
                    let calls: Vec<WireCall<'_>> =
                        message.tool_calls.iter().map(WireCall::new).collect();
                    map.serialize_entry("tool_calls", &calls)?;
                }
            }
        }
        map.end()
    }
}

/// Plain text stays a string (every server accepts that); images make it a
/// list of parts.
struct UserContent<'a>(&'a [ContentPart]);

impl Serialize for UserContent<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let parts = self.0;
        if !parts.iter().any(|p| matches!(p, ContentPart::Image { .. })) {
            let text: String = parts.iter().filter_map(ContentPart::as_text).collect();
            return serializer.serialize_str(&text);
        }
        let wire: Vec<Value> = parts
            .iter()
            .filter_map(|part| match part {
                ContentPart::Text { text } => Some(json!({"type": "text", "text": text})),
                ContentPart::Image { media_type, data } => Some(json!({
                    "type": "image_url",
                    "image_url": {"url": format!("data:{media_type};base64,{data}")},
                })),
                _ => None,
            })
            .collect();
        wire.serialize(serializer)
    }
}

#[derive(Serialize)]
struct WireCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunction<'a>,
}

#[derive(Serialize)]
struct WireFunction<'a> {
    name: &'a str,
    arguments: Cow<'a, str>,
}

impl<'a> WireCall<'a> {
    fn new(call: &'a ToolCall) -> Self {
        let arguments = match &call.arguments {
            // Malformed arguments go back exactly as the model wrote them.
            Value::String(raw) => Cow::Borrowed(raw.as_str()),
            other => Cow::Owned(other.to_string()),
        };
        WireCall {
            id: &call.id,
            kind: "function",
            function: WireFunction { name: &call.name, arguments },
        }
    }
}

#[derive(Serialize)]
struct WireTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: ToolFunction<'a>,
}

#[derive(Serialize)]
struct ToolFunction<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

impl<'a> WireTool<'a> {
    fn new(spec: &'a ToolSpec) -> Self {
        WireTool {
            kind: "function",
            function: ToolFunction {
                name: &spec.name,
                description: &spec.description,
                parameters: &spec.input_schema,
            },
        }
    }
}
