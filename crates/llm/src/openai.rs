//! The OpenAI chat-completions wire format, streamed: OpenAI, DeepSeek,
//! Ollama, OpenRouter, vLLM, llama.cpp and anything else that speaks it.
//!
//! Tool calls arrive as deltas keyed by index and are re-emitted as
//! start/argument events; DeepSeek's `reasoning_content` (and OpenRouter's
//! `reasoning`) become reasoning deltas. A stream that closes before the
//! model said why it stopped is an error, not a short answer. When the
//! request offers tools, calls the model wrote as text (Hermes, Llama 3,
//! Mistral syntax) become tool calls too ([`with_text_calls`]).

use std::collections::HashMap;
use std::sync::Arc;

use axon_protocol::Usage;
use serde::Deserialize;
use serde_json::Value;

use crate::http::{self, Auth, Connection, Emitter, Settings};
use crate::openai_wire::Body;
use crate::tool_text::with_text_calls;
use crate::{
    EventStream, FinishReason, LlmError, Provider, ProviderEvent, ProviderInfo, ProviderRequest,
};

/// A provider speaking chat completions at `base_url` + `/chat/completions`.
pub struct OpenAiProvider {
    connection: Arc<Connection>,
}

impl OpenAiProvider {
    pub fn new(settings: Settings) -> Result<Self, LlmError> {
        let connection = Connection::new(settings, "/chat/completions", Auth::Bearer)?;
        Ok(OpenAiProvider { connection: Arc::new(connection) })
    }
}

impl Provider for OpenAiProvider {
    fn info(&self) -> &ProviderInfo {
        &self.connection.info
    }

    fn stream(&self, request: &ProviderRequest<'_>) -> EventStream {
        let connection = Arc::clone(&self.connection);
        // Encoded here, from the borrowed history: the call's task owns
        // only the bytes.
        let body = Body::new(&connection.info.model, request, connection.max_output_tokens);
        let body = http::encode(&body);
        let stream = http::spawn_call(move |emit| async move {
            let result = match body {
                Ok(body) => read_answer(&connection, &emit, &body).await,
                Err(e) => Err(e),
            };
            if let Err(e) = result {
                emit.send(Err(e)).await;
            }
        });
        // Local servers often leave the model's own call syntax in the
        // text instead of `tool_calls`; with native tools offered, such
        // text is read as the calls it is. Not for the hosted APIs
        // (OpenAI, DeepSeek, OpenRouter), whose `tool_calls` are reliable:
        // there the reading would only hold back text that merely looks
        // like a marker (delaying it on screen) and could take a model
        // explaining the syntax for a call. Told by the URL, not
        // the preset's name: `provider = "openai"` with a local `base_url`
        // is a local server.
        let hosted = crate::presets::is_hosted_api(&self.connection.endpoint.url);
        if request.tools.is_empty() || hosted || request.answer_only {
            stream
        } else {
            let names = request.tools.iter().map(|tool| tool.name.clone()).collect();
            with_text_calls(stream, names)
        }
    }
}

async fn read_answer(connection: &Connection, emit: &Emitter, body: &[u8]) -> Result<(), LlmError> {
    let mut sse = connection.post(emit, body).await?;
    let mut calls = CallTracker::default();
    let mut finish: Option<FinishReason> = None;
    loop {
        let Some(event) = sse.next().await? else {
            // Some servers close without `[DONE]` once they said why they
            // stopped; without that, the answer was cut off.
            return match finish {
                Some(reason) => {
                    for index in calls.started_in_order() {
                        emit.send(Ok(ProviderEvent::ToolCallEnd { index })).await;
                    }
                    emit.send(Ok(ProviderEvent::Finish(reason))).await;
                    Ok(())
                }
                None => Err(sse.stream_error("the stream ended before the model finished")),
            };
        };
        let data = event.data.trim();
        if data == "[DONE]" {
            for index in calls.started_in_order() {
                emit.send(Ok(ProviderEvent::ToolCallEnd { index })).await;
            }
            emit.send(Ok(ProviderEvent::Finish(finish.unwrap_or(FinishReason::Stop)))).await;
            return Ok(());
        }
        if data.is_empty() {
            continue;
        }
        let chunk: Chunk = serde_json::from_str(data)
            .map_err(|e| sse.stream_error(format!("the provider sent a malformed chunk ({e})")))?;
        if let Some(error) = chunk.error {
            return Err(http::in_stream_error(&connection.endpoint, &error));
        }
        for event in chunk_events(&chunk, &mut calls, &mut finish) {
            if !emit.send(Ok(event)).await {
                return Ok(());
            }
        }
    }
}

/// Tool calls seen so far in this stream, by the provider's index.
#[derive(Default)]
struct CallTracker {
    started: HashMap<usize, bool>,
    /// Argument pieces that came before the call's name.
    pending: HashMap<usize, String>,
    pending_id: HashMap<usize, String>,
}

impl CallTracker {
    /// The calls started in this stream, by index.
    fn started_in_order(&self) -> Vec<usize> {
        let mut started: Vec<usize> = self.started.keys().copied().collect();
        started.sort_unstable();
        started
    }
}

fn chunk_events(
    chunk: &Chunk,
    calls: &mut CallTracker,
    finish: &mut Option<FinishReason>,
) -> Vec<ProviderEvent> {
    let mut events = Vec::new();
    for choice in &chunk.choices {
        let delta = &choice.delta;
        for reasoning in [&delta.reasoning_content, &delta.reasoning].into_iter().flatten() {
            if !reasoning.is_empty() {
                events.push(ProviderEvent::ReasoningDelta(reasoning.clone()));
            }
        }
        if let Some(text) = delta.content.as_ref().filter(|t| !t.is_empty()) {
            events.push(ProviderEvent::TextDelta(text.clone()));
        }
        for (position, call) in delta.tool_calls.iter().flatten().enumerate() {
            let index = call.index.unwrap_or(position);
            let function = call.function.as_ref();
            let name = function.and_then(|f| f.name.clone()).filter(|n| !n.is_empty());
            let arguments = function.and_then(|f| f.arguments.clone()).unwrap_or_default();
            if let Some(id) = call.id.clone().filter(|id| !id.is_empty()) {
                calls.pending_id.insert(index, id);
            }
            let started = calls.started.get(&index).copied().unwrap_or(false);
            match (started, name) {
                (false, Some(name)) => {
                    calls.started.insert(index, true);
                    // Some local servers send no id; the history still needs one.
                    let id =
                        calls.pending_id.remove(&index).unwrap_or_else(|| format!("call_{index}"));
                    events.push(ProviderEvent::ToolCallStart { index, id, name });
                    let earlier = calls.pending.remove(&index).unwrap_or_default();
                    let all = earlier + &arguments;
                    if !all.is_empty() {
                        events.push(ProviderEvent::ToolCallDelta { index, arguments: all });
                    }
                }
                (false, None) => calls.pending.entry(index).or_default().push_str(&arguments),
                (true, _) if !arguments.is_empty() => {
                    events.push(ProviderEvent::ToolCallDelta { index, arguments });
                }
                (true, _) => {}
            }
        }
        if let Some(reason) = &choice.finish_reason {
            *finish = Some(finish_reason(reason));
        }
    }
    if let Some(usage) = &chunk.usage {
        events.push(ProviderEvent::Usage(Usage {
            input_tokens: usage.prompt_tokens,
            output_tokens: usage.completion_tokens,
            cached_input_tokens: usage
                .prompt_tokens_details
                .as_ref()
                .map_or(0, |d| d.cached_tokens),
            reasoning_tokens: usage
                .completion_tokens_details
                .as_ref()
                .map_or(0, |d| d.reasoning_tokens),
        }));
    }
    events
}

fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "stop" => FinishReason::Stop,
        "tool_calls" | "function_call" => FinishReason::ToolCalls,
        "length" => FinishReason::Length,
        "content_filter" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_string()),
    }
}

/// The JSON body of a streaming chat-completions request (what
/// [`OpenAiProvider`] sends, as a `Value`).
pub fn request_body(model: &str, request: &ProviderRequest<'_>) -> Value {
    serde_json::to_value(Body::new(model, request, None)).unwrap_or(Value::Null)
}

#[derive(Debug, Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct Choice {
    #[serde(default)]
    delta: Delta,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    reasoning_content: Option<String>,
    #[serde(default)]
    reasoning: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<ToolCallDelta>>,
}

#[derive(Debug, Deserialize)]
struct ToolCallDelta {
    #[serde(default)]
    index: Option<usize>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionDelta>,
}

#[derive(Debug, Deserialize)]
struct FunctionDelta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

#[derive(Debug, Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
    #[serde(default)]
    completion_tokens_details: Option<CompletionDetails>,
}

#[derive(Debug, Deserialize)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: u64,
}

#[derive(Debug, Deserialize)]
struct CompletionDetails {
    #[serde(default)]
    reasoning_tokens: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use axon_protocol::{ContentPart, Message, ToolSpec};
    use serde_json::json;

    fn events_of(chunks: &[&str]) -> Vec<ProviderEvent> {
        let mut calls = CallTracker::default();
        let mut finish = None;
        chunks
            .iter()
            .flat_map(|c| chunk_events(&serde_json::from_str(c).unwrap(), &mut calls, &mut finish))
            .collect()
    }

    #[test]
    fn split_tool_call_deltas_are_reassembled_by_index() {
        let events = events_of(&[
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":"hmm"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c0","type":"function","function":{"name":"read_file","arguments":""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"c1","function":{"name":"glob","arguments":"{\"pat"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":\"a\"}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"tern\":\"*\"}"}}]},"finish_reason":"tool_calls"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5,"completion_tokens_details":{"reasoning_tokens":2}}}"#,
        ]);
        assert_eq!(
            events,
            [
                ProviderEvent::ReasoningDelta("hmm".into()),
                ProviderEvent::ToolCallStart {
                    index: 0,
                    id: "c0".into(),
                    name: "read_file".into()
                },
                ProviderEvent::ToolCallStart { index: 1, id: "c1".into(), name: "glob".into() },
                ProviderEvent::ToolCallDelta { index: 1, arguments: "{\"pat".into() },
                ProviderEvent::ToolCallDelta { index: 0, arguments: "{\"path\":\"a\"}".into() },
                ProviderEvent::ToolCallDelta { index: 1, arguments: "tern\":\"*\"}".into() },
                ProviderEvent::Usage(Usage {
                    input_tokens: 10,
                    output_tokens: 5,
                    cached_input_tokens: 0,
                    reasoning_tokens: 2
                }),
            ]
        );
    }

    #[test]
    fn history_is_sent_in_the_wire_format() {
        let call = axon_protocol::ToolCall {
            id: "c1".into(),
            name: "read_file".into(),
            arguments: json!({"path": "a"}),
        };
        let mut assistant = Message::assistant("");
        assistant.content = vec![ContentPart::Thinking { text: "secret".into(), signature: None }];
        assistant.tool_calls = vec![call];
        let request = ProviderRequest {
            system: "be brief".into(),
            messages: &[
                Message::user("hi"),
                assistant,
                Message::tool_result("c1", axon_protocol::ToolOutput::text("1 | x")),
            ],
            ..Default::default()
        };
        let body = request_body("deepseek-chat", &request);
        assert_eq!(
            body["messages"],
            json!([
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"a\"}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "1 | x"},
            ])
        );
        assert_eq!(body["stream_options"]["include_usage"], true);
    }

    #[test]
    fn the_body_takes_the_default_output_limit_and_images_as_parts() {
        let mut user = Message::user("see");
        user.content
            .push(ContentPart::Image { media_type: "image/png".into(), data: "AAA".into() });
        let messages = [user];
        let request = ProviderRequest { messages: &messages, ..Default::default() };
        let body = |request: &ProviderRequest<'_>, default| {
            serde_json::to_value(Body::new("m", request, default)).unwrap()
        };
        let sent = body(&request, Some(100));
        assert_eq!(sent["max_tokens"], 100);
        assert!(sent.get("tools").is_none() && sent.get("temperature").is_none(), "{sent}");
        assert_eq!(
            sent["messages"][0]["content"],
            json!([{"type": "text", "text": "see"},
                   {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAA"}}])
        );
        let own = ProviderRequest { max_output_tokens: Some(5), ..request.clone() };
        assert_eq!(body(&own, Some(100))["max_tokens"], 5);
        assert!(body(&request, None).get("max_tokens").is_none());
    }

    #[test]
    fn an_answer_only_call_keeps_the_tools_and_forbids_calling_them() {
        let tools = [ToolSpec {
            name: "read_file".into(),
            description: "read".into(),
            input_schema: json!({"type": "object"}),
            annotations: Default::default(),
        }];
        let request = ProviderRequest { tools: tools[..].into(), ..Default::default() };
        let sent = |request: &ProviderRequest<'_>| {
            serde_json::to_value(Body::new("m", request, None)).unwrap()
        };
        assert!(sent(&request).get("tool_choice").is_none());
        let only = ProviderRequest { answer_only: true, ..request.clone() };
        assert_eq!(sent(&only)["tool_choice"], "none");
        assert_eq!(sent(&only)["tools"][0]["function"]["name"], "read_file");
        let bare = ProviderRequest { answer_only: true, ..Default::default() };
        assert!(sent(&bare).get("tool_choice").is_none(), "no tools, no choice");
    }
}
