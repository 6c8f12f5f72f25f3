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
            messages: Messages {
                system: &request.system,
                history: request.messages,
                images: crate::takes_images(model),
            },
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
    /// Whether the model takes images (`takes_images`).
    images: bool,
}

impl Serialize for Messages<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(None)?;
        if !self.system.is_empty() {
            seq.serialize_element(&Plain { role: "system", content: self.system })?;
        }
        // A `tool` message takes text only, so the images of a run of tool
        // results follow it in one user message (the API requires the tool
        // messages to follow their calls unbroken; other agents do the same).
        let mut pending: Vec<&ContentPart> = Vec::new();
        for (i, message) in self.history.iter().enumerate() {
            seq.serialize_element(&WireMessage { message, images: self.images })?;
            if message.role != Role::Tool {
                continue;
            }
            if self.images {
                pending.extend(
                    message.content.iter().filter(|p| matches!(p, ContentPart::Image { .. })),
                );
            }
            let run_ends = self.history.get(i + 1).is_none_or(|next| next.role != Role::Tool);
            if run_ends && !pending.is_empty() {
                let mut parts = vec![ContentPart::text("The images from the tool results above:")];
                parts.extend(pending.drain(..).cloned());
                seq.serialize_element(&Parts { role: "user", content: UserContent(&parts) })?;
            }
        }
        seq.end()
    }
}

#[derive(Serialize)]
struct Parts<'a> {
    role: &'a str,
    content: UserContent<'a>,
}

#[derive(Serialize)]
struct Plain<'a> {
    role: &'a str,
    content: &'a str,
}

/// One message of the history in the wire format; `images` is whether the
/// model takes them.
struct WireMessage<'a> {
    message: &'a Message,
    images: bool,
}

impl Serialize for WireMessage<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let message = self.message;
        let mut map = serializer.serialize_map(None)?;
        match message.role {
            Role::System => {
                map.serialize_entry("role", "system")?;
                map.serialize_entry("content", &message.text())?;
            }
            Role::User => {
                map.serialize_entry("role", "user")?;
                if self.images {
                    map.serialize_entry("content", &UserContent(&message.content))?;
                } else {
                    map.serialize_entry("content", &text_without_images(&message.content))?;
                }
            }
            Role::Tool => {
                map.serialize_entry("role", "tool")?;
                map.serialize_entry("tool_call_id", message.tool_call_id.as_deref().unwrap_or(""))?;
                let mut text = message.text();
                if !self.images
                    && message.content.iter().any(|p| matches!(p, ContentPart::Image { .. }))
                {
                    text.push_str(NO_IMAGES);
                }
                map.serialize_entry("content", &text)?;
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

/// Said in place of a tool result's image to a model without images.
pub(crate) const NO_IMAGES: &str = "\n[image not shown: the current model cannot see images]";

/// A user message's parts as text for a model without images: each image
/// becomes a line saying it was not shown (a resumed session whose model
/// changed, an attachment sent anyway), so the request is still valid and
/// the model knows there was one.
pub(crate) fn text_without_images(parts: &[ContentPart]) -> String {
    let mut text = String::new();
    for part in parts {
        match part {
            ContentPart::Text { text: t } => text.push_str(t),
            ContentPart::Image { .. } => text.push_str(NO_IMAGES),
            _ => {}
        }
    }
    text
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
