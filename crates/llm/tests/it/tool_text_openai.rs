//! The OpenAI-format provider against a scripted loopback server whose
//! model leaks its call syntax into the streamed content, as Ollama,
//! llama.cpp's server and vLLM do: with tools offered the calls come out as
//! tool-call events and no marker text is shown; without tools the same
//! content is text, unchanged.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::borrow::Cow;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axon_llm::{
    FinishReason, ProviderEvent, ProviderRequest, ToolProtocol, TurnAssembler, build_provider,
    preset,
};
use axon_protocol::{Message, ToolSpec};
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::response::Response;
use futures_util::{StreamExt, stream};
use serde_json::{Value, json};

/// A chat-completions server streaming `content` in 3-character chunks,
/// as a local model server does; it keeps the request bodies.
struct Server {
    url: String,
    requests: Arc<Mutex<Vec<Value>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[derive(Clone)]
struct Script {
    content: String,
    requests: Arc<Mutex<Vec<Value>>>,
}

async fn answer(State(script): State<Script>, body: Bytes) -> Response {
    script.requests.lock().unwrap().push(serde_json::from_slice(&body).unwrap_or(Value::Null));
    let chunk = |delta: Value, finish: Value| {
        let chunk = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "local",
                           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        format!("data: {chunk}\n\n")
    };
    let mut events = vec![chunk(json!({"role": "assistant", "content": ""}), Value::Null)];
    let chars: Vec<char> = script.content.chars().collect();
    for piece in chars.chunks(3) {
        events.push(chunk(json!({"content": piece.iter().collect::<String>()}), Value::Null));
    }
    // What such servers say when the calls stayed in the text.
    events.push(chunk(json!({}), json!("stop")));
    events.push("data: [DONE]\n\n".to_string());
    let body = Body::from_stream(stream::iter(
        events.into_iter().map(|e| Ok::<_, Infallible>(Bytes::from(e))),
    ));
    Response::builder().header("content-type", "text/event-stream").body(body).unwrap()
}

async fn serve(content: &str) -> Server {
    let requests = Arc::new(Mutex::new(Vec::new()));
    let script = Script { content: content.to_string(), requests: Arc::clone(&requests) };
    let app =
        Router::new().route("/v1/chat/completions", axum::routing::post(answer)).with_state(script);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Server { url, requests, task }
}

fn tools() -> Vec<ToolSpec> {
    ["read_file", "list_dir"]
        .map(|name| ToolSpec {
            name: name.to_string(),
            description: format!("{name} does its job"),
            input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
            annotations: Default::default(),
        })
        .to_vec()
}

/// The provider's events for one turn offering `tools`.
async fn turn(server: &Server, tools: Vec<ToolSpec>) -> Vec<ProviderEvent> {
    turn_as("ollama", server, tools).await
}

/// [`turn`] with the provider configured as the preset `name` pointed at
/// the loopback server (`provider = "openai"` with a llama-server's URL).
async fn turn_as(name: &str, server: &Server, tools: Vec<ToolSpec>) -> Vec<ProviderEvent> {
    let mut config = preset(name).unwrap();
    config.api_key = Some("sk-local".into());
    config.base_url = format!("{}/v1", server.url);
    config.model = "qwen2.5-coder".into();
    config.tool_protocol = ToolProtocol::Native;
    config.stream_idle_timeout = Duration::from_secs(10);
    let provider = build_provider(&config).unwrap();
    let messages = [Message::user("read src/lib.rs")];
    let request = ProviderRequest {
        system: "be brief".into(),
        messages: &messages,
        tools: Cow::Owned(tools),
        ..Default::default()
    };
    let stream = provider.stream(&request);
    let items = tokio::time::timeout(Duration::from_secs(30), stream.collect::<Vec<_>>())
        .await
        .expect("the turn ends");
    items.into_iter().map(|item| item.expect("no error")).collect()
}

fn shown_text(events: &[ProviderEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            ProviderEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

/// Checks the turn held exactly one call, `read_file` of `src/lib.rs`,
/// given as start, arguments and end, and finished for tool calls.
fn assert_one_read_call(events: &[ProviderEvent]) {
    let starts: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            ProviderEvent::ToolCallStart { index, id, name } => Some((*index, id.clone(), name)),
            _ => None,
        })
        .collect();
    assert_eq!(starts, [(0, "call_text_0".to_string(), &"read_file".to_string())], "{events:?}");
    let at = |wanted: &ProviderEvent| events.iter().position(|e| e == wanted);
    let start = events.iter().position(|e| matches!(e, ProviderEvent::ToolCallStart { .. }));
    let delta = events.iter().position(
        |e| matches!(e, ProviderEvent::ToolCallDelta { index: 0, arguments } if serde_json::from_str::<Value>(arguments).unwrap() == json!({"path": "src/lib.rs"})),
    );
    let end = at(&ProviderEvent::ToolCallEnd { index: 0 });
    assert!(start < delta && delta < end && start.is_some(), "{events:?}");
    assert_eq!(events.last(), Some(&ProviderEvent::Finish(FinishReason::ToolCalls)));
    let mut assembler = TurnAssembler::new();
    for event in events {
        assembler.push(event);
    }
    let turn = assembler.finish();
    assert!(turn.malformed.is_empty());
    assert_eq!(turn.message.tool_calls.len(), 1);
    assert_eq!(turn.message.tool_calls[0].name, "read_file");
    assert_eq!(turn.message.tool_calls[0].arguments, json!({"path": "src/lib.rs"}));
}

const HERMES: &str = "I'll read the file.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"src/lib.rs\"}}\n</tool_call>";
const MISTRAL: &str = "I'll read the file.[TOOL_CALLS][{\"name\": \"read_file\", \"arguments\": {\"path\": \"src/lib.rs\"}}]";

#[tokio::test]
async fn a_hermes_block_in_streamed_content_becomes_a_tool_call() {
    let server = serve(HERMES).await;
    let events = turn(&server, tools()).await;
    assert_eq!(shown_text(&events), "I'll read the file.\n");
    assert_one_read_call(&events);
    // The tools were offered natively, as the API's `tools`.
    let sent = server.requests.lock().unwrap()[0].clone();
    assert_eq!(sent["tools"][0]["function"]["name"], "read_file");
}

#[tokio::test]
async fn a_mistral_call_in_streamed_content_becomes_a_tool_call() {
    let server = serve(MISTRAL).await;
    let events = turn(&server, tools()).await;
    assert_eq!(shown_text(&events), "I'll read the file.");
    assert_one_read_call(&events);
}

#[tokio::test]
async fn without_tools_the_same_content_is_text_unchanged() {
    for content in [HERMES, MISTRAL] {
        let server = serve(content).await;
        let events = turn(&server, Vec::new()).await;
        assert_eq!(shown_text(&events), content);
        assert!(
            !events.iter().any(|e| matches!(e, ProviderEvent::ToolCallStart { .. })),
            "{events:?}"
        );
        assert_eq!(events.last(), Some(&ProviderEvent::Finish(FinishReason::Stop)));
        assert!(server.requests.lock().unwrap()[0].get("tools").is_none());
    }
}

#[tokio::test]
async fn a_hosted_presets_name_on_a_local_server_still_reads_leaked_calls() {
    // `provider = "openai"` with `base_url` at a llama-server or vLLM: the
    // server, not the preset's name, decides whether calls leak into text.
    for name in ["openai", "deepseek", "openrouter"] {
        let server = serve(HERMES).await;
        let events = turn_as(name, &server, tools()).await;
        assert_eq!(shown_text(&events), "I'll read the file.\n", "{name}");
        assert_one_read_call(&events);
    }
}
